/*
** ljlog output targets: a file, an inherited descriptor, or a command.
*/
#define _GNU_SOURCE /* pipe2 */
#include "blocks/target.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How long target_close waits for the command to finish. */
#define TARGET_WAIT_MS 5000

/* Caller holds the global lock. Create path, following a symlink at its last
** component only when it belongs to us (as fs.protected_symlinks would in a
** sticky directory); 0666 so the user's umask decides. fd or -errno. */
static int open_file(const char *path, char *err, size_t errlen)
{
	const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	int fd = open(path, flags | O_NOFOLLOW, 0666);
	if (fd < 0 && errno == ELOOP) {
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
		    st.st_uid != geteuid()) {
			snprintf(err, errlen,
				 "refusing to write '%s': it is a symbolic "
				 "link that belongs to another user (uid %lu); "
				 "remove it or choose another file=PATH",
				 path, (unsigned long)st.st_uid);
			return -EPERM;
		}
		fd = open(path, flags, 0666);
	}
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open '%s' for writing: %s", path,
			 strerror(e));
		return -e;
	}
	return fd;
}

/* Caller holds the global lock. Start /bin/sh -c cmd reading a pipe whose
** write end is returned (close-on-exec); fd or -errno. */
static int open_command(const char *cmd, pid_t *child, char *err, size_t errlen)
{
	int p[2];
	if (!*cmd) {
		snprintf(
		    err, errlen,
		    "file=| needs a command, like file=|gzip>out.ljlog.gz");
		return -EINVAL;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot make a pipe for '|%s': %s", cmd,
			 strerror(e));
		return -e;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	int r = posix_spawn(child, "/bin/sh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[0]);
	if (r != 0) {
		close(p[1]);
		*child = 0;
		snprintf(err, errlen, "cannot start '/bin/sh -c %s': %s", cmd,
			 strerror(r));
		return -r;
	}
	return p[1];
}

/* Caller holds the global lock. Take over an inherited descriptor, which
** must be open for writing; it becomes close-on-exec. fd or -errno. */
static int take_fd(int fd, char *err, size_t errlen)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0) {
		snprintf(err, errlen, "fd=%d: descriptor %d is not open", fd,
			 fd);
		return -EBADF;
	}
	if ((fl & O_ACCMODE) == O_RDONLY) {
		snprintf(err, errlen,
			 "fd=%d: descriptor %d is open for reading only", fd,
			 fd);
		return -EBADF;
	}
	int fdfl = fcntl(fd, F_GETFD);
	if (fdfl >= 0)
		(void)fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC);
	return fd;
}

/* Caller holds the global lock. See target.h. */
int target_open(struct target *t, const char *spec, int fd, char *err,
		size_t errlen)
{
	t->child = 0;
	if (fd >= 0)
		t->fd = take_fd(fd, err, errlen);
	else if (spec[0] == '|')
		t->fd = open_command(spec + 1, &t->child, err, errlen);
	else
		t->fd = open_file(spec, err, errlen);
	if (t->fd < 0) {
		int r = t->fd;
		t->fd = -1;
		return r;
	}
	return 0;
}

/* Caller holds the global lock. See target.h. */
int target_close(struct target *t, const char *spec)
{
	int r = 0;
	if (t->fd >= 0 && close(t->fd) < 0) {
		r = -errno;
		fprintf(stderr, "ljlog: closing '%s' failed: %s\n", spec,
			strerror(-r));
	}
	t->fd = -1;
	if (t->child <= 0)
		return r;
	pid_t child = t->child;
	t->child = 0;
	const struct timespec tick = {0, 10 * 1000 * 1000};
	for (int ms = 0; ms < TARGET_WAIT_MS; ms += 10) {
		int st;
		pid_t w = waitpid(child, &st, WNOHANG);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return r; /* the program reaped it: nothing to say */
		if (w == child) {
			if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
				fprintf(stderr,
					"ljlog: the log's command '%s' exited "
					"with status %d\n",
					spec, WEXITSTATUS(st));
			else if (WIFSIGNALED(st))
				fprintf(stderr,
					"ljlog: the log's command '%s' was "
					"killed by signal %d\n",
					spec, WTERMSIG(st));
			return r;
		}
		nanosleep(&tick, NULL);
	}
	fprintf(stderr,
		"ljlog: the log's command '%s' still runs %d s after the log "
		"was closed; not waiting for it\n",
		spec, TARGET_WAIT_MS / 1000);
	return r;
}

/* Child side of fork(), single-threaded. See target.h. */
void target_forget_child(struct target *t)
{
	t->child = 0;
}
