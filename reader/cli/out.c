/*
** ljlog CLI: the files the exports write. OUT is written as OUT.tmp.PID
** next to it and renamed at the end, so that an export that fails or is
** stopped leaves no OUT (SIGINT, SIGTERM, SIGHUP remove the temporary
** file too; after SIGKILL it remains).
*/
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file being written, for the signal handler ("" none). */
static char tmp_path[4096];

/* Async-signal-safe. Remove the temporary file, then die of sig. */
static void on_signal(int sig)
{
	int saved = errno;
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

/* Main thread. Catch the signals that stop an export. */
static void catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		/* Leave an ignored signal ignored (nohup). */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

/* Main thread. See cli.h. */
int cli_out_open(const char *cmd, const char *outp, struct cli_out *o)
{
	struct stat st;
	memset(o, 0, sizeof o[0]);
	o->path = outp;
	if (!strcmp(outp, "-")) {
		o->f = stdout;
		return -1;
	}
	/* Not a regular file (/dev/null, a pipe): written in place. */
	if (stat(outp, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(o->f = fopen(outp, "wb"))) {
			cli_err(cmd, "cannot write %s: %s", outp,
				strerror(errno));
			return CLI_USAGE;
		}
		return -1;
	}
	if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", outp,
			     (long)getpid()) >= sizeof o->tmp) {
		cli_err(cmd, "cannot write %s: %s", outp,
			strerror(ENAMETOOLONG));
		return CLI_USAGE;
	}
	/* The handlers first: a signal that lands once the file exists
	** finds them in place (an unlink before it exists does nothing). */
	memcpy(tmp_path, o->tmp, sizeof tmp_path);
	catch_signals();
	int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		tmp_path[0] = 0;
		cli_err(cmd, "cannot write %s: %s", outp, strerror(e));
		o->tmp[0] = 0;
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. See cli.h. */
int cli_out_close(struct cli_out *o, int keep)
{
	int e = 0;
	if (o->f == stdout) {
		if (fflush(stdout) != 0 || ferror(stdout))
			e = -(errno ? errno : EIO);
	} else if (o->f) {
		if (ferror(o->f))
			e = -EIO;
		if (fclose(o->f) != 0 && !e)
			e = -(errno ? errno : EIO);
	}
	o->f = NULL;
	if (!o->tmp[0])
		return e;
	if (keep && !e && rename(o->tmp, o->path) != 0)
		e = -errno;
	if (!keep || e)
		unlink(o->tmp);
	tmp_path[0] = 0;
	o->tmp[0] = 0;
	return e;
}
