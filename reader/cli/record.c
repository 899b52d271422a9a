/*
** ljlog CLI: 'ljlog record', run a LuaJIT program under the profiler.
** Validates the options first, then sets LUAJIT_PROFILE, LUA_CPATH and
** LUA_INIT for the program and passes its exit status through.
*/
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blocks/format.h"
#include "logger/opts.h"
#include "block/reader.h"

#ifndef LJLOG_LUAMODDIR
#define LJLOG_LUAMODDIR "/usr/local/lib/lua/5.1"
#endif

static const char record_usage[] =
    "usage: ljlog record [-o FILE] [-e EVENTS] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Run a LuaJIT program (the standalone 'luajit' interpreter, or a script\n"
    "that runs it) under the profiler: sets LUAJIT_PROFILE to\n"
    "'log:file=FILE,EVENTS', puts the ljlog module on LUA_CPATH and loads it\n"
    "through LUA_INIT (keeping any LUA_INIT of yours after it).\n"
    "\n"
    "  -o, --output FILE   the log (default ljlog-%%p.ljlog; %%p: the pid)\n"
    "  -e, --events LIST   comma list of options, like calls,alloc or\n"
    "                      calls,flush=100ms; without one: sample,gc and\n"
    "                      alloc=512k (the JIT stays on)\n"
    "  -h, --help          this help\n"
    "\n"
    "Options valid in EVENTS: %s.\n"
    "The module is looked for in $LJLOG_MODULE_DIR, else next to this\n"
    "program (DIR/lua/ljlog.so), else in " LJLOG_LUAMODDIR ".\n"
    "\n"
    "Exit status: the program's (128+N when killed by signal N); 127 when it\n"
    "cannot be run; 2 for a usage error, a bad option or a log that cannot\n"
    "be written (nothing is run); 125 when no LuaJIT VM was profiled (no log\n"
    "with an INTRO block was written: PROGRAM is not a LuaJIT program) and\n"
    "the program exited 0 (one that failed keeps its status).\n";

/* Exit status when the program ran but no LuaJIT VM was profiled. */
#define NO_VM 125

/* Main thread. Print the usage to f. */
static void usage(FILE *f)
{
	fprintf(f, record_usage, opts_valid_list());
}

/* Main thread. 1 when dir/ljlog.so exists. */
static int has_module(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	if (snprintf(path, sizeof path, "%s/ljlog.so", dir) >= (int)sizeof path)
		return 0;
	return stat(path, &st) == 0;
}

/* Main thread. The directory holding ljlog.so, into out. */
static void module_dir(char *out, size_t len)
{
	const char *env = getenv("LJLOG_MODULE_DIR");
	char exe[PATH_MAX];
	ssize_t n;
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, len, "%s/lua", exe) < len &&
			    has_module(out))
				return;
		}
	}
	snprintf(out, len, "%s", LJLOG_LUAMODDIR);
}

/* Main thread. Append s to a Lua string literal in out (quotes included). */
static void lua_quote(char *out, size_t len, const char *s)
{
	size_t n = strlen(out);
	if (n + 2 >= len)
		return;
	out[n++] = '"';
	for (; *s && n + 6 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			out[n++] = '\\', out[n++] = (char)c;
		else if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(out + n, len - n, "\\%03u", c);
		else
			out[n++] = (char)c;
	}
	out[n++] = '"';
	out[n] = '\0';
}

/* Main thread. Set up the environment of the program; 0 or -1 (message
** printed). */
static int set_env(const char *profile)
{
	char dir[PATH_MAX];
	module_dir(dir, sizeof dir);
	if (strchr(dir, ';') || strchr(dir, '?')) {
		cli_err("record",
			"module directory '%s' holds ';' or '?', which "
			"LUA_CPATH cannot express",
			dir);
		return -1;
	}
	if (!has_module(dir))
		cli_err("record",
			"warning: no ljlog.so in %s (set "
			"LJLOG_MODULE_DIR)",
			dir);

	const char *old = getenv("LUA_CPATH");
	size_t cl = strlen(dir) + (old ? strlen(old) : 0) + 16;
	char *cpath = malloc(cl);
	const char *init_old = getenv("LUA_INIT");
	size_t il = 64 + (init_old ? 4 * strlen(init_old) : 0);
	char *init = malloc(il);
	if (!cpath || !init) {
		free(cpath);
		free(init);
		cli_err("record", "out of memory");
		return -1;
	}
	snprintf(cpath, cl, "%s/?.so;%s", dir, old ? old : ";");
	snprintf(init, il, "require(\"ljlog\")");
	if (init_old && init_old[0] == '@') {
		strcat(init, " dofile(");
		lua_quote(init, il - 2, init_old + 1);
		strcat(init, ")");
	} else if (init_old && *init_old) {
		strcat(init, "\n");
		strcat(init, init_old);
	}
	int rc = setenv("LUAJIT_PROFILE", profile, 1) < 0 ||
		 setenv("LUA_CPATH", cpath, 1) < 0 ||
		 setenv("LUA_INIT", init, 1) < 0;
	free(cpath);
	free(init);
	if (rc) {
		cli_err("record", "cannot set the environment: %s",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Main thread. 0 when the log file's directory (of pattern, %p left in)
** can be written, else -errno with dir filled. A command (|CMD) is not
** checked. */
static int dir_writable(const char *pattern, char *dir, size_t len)
{
	struct stat st;
	if (pattern[0] == '|' ||
	    opts_expand_file(pattern, getpid(), dir, len) < 0)
		return 0;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	if (stat(dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

/* Main thread. 1 when path is a log whose first block is an INTRO (a VM
** was profiled). */
static int has_intro(const char *path)
{
	struct reader *r;
	struct reader_block b;
	char err[READER_ERR_MAX];
	if (reader_open(&r, path, 0, err, sizeof err) < 0)
		return 0;
	int ok = reader_next(r, &b) > 0 && b.h.kind == FORMAT_KIND_INTRO;
	reader_close(r);
	return ok;
}

/* Main thread. 1 when the file st describes is the one before describes
** (before->st_nlink 0: there was none), as it was: the run did not touch
** it. */
static int untouched(const struct stat *st, const struct stat *before)
{
	return before->st_nlink && st->st_dev == before->st_dev &&
	       st->st_ino == before->st_ino && st->st_size == before->st_size &&
	       st->st_mtim.tv_sec == before->st_mtim.tv_sec &&
	       st->st_mtim.tv_nsec == before->st_mtim.tv_nsec;
}

/* Main thread. The log named by pattern as it is before the run into
** *before (st_nlink 0: none, or a pattern with %p or a command, whose
** names the run makes). */
static void log_before(const char *pattern, struct stat *before)
{
	char path[OPTS_FILE_MAX + 32];
	memset(before, 0, sizeof *before);
	if (pattern[0] == '|' || strstr(pattern, "%p") ||
	    opts_expand_file(pattern, 0, path, sizeof path) != 0 ||
	    stat(path, before) != 0)
		before->st_nlink = 0;
}

/* Main thread. Say where the logs of a run that started at t0 are; the
** number with an INTRO block. pattern's %p is pid, or (a wrapper script
** that runs luajit as its child) any pid whose log is newer than t0.
** before: the log's file before the run, for a pattern without %p (a log
** of an earlier run that this one left as it was is not this run's). */
static int logs_written(const char *pattern, pid_t pid, time_t t0,
			const struct stat *before)
{
	char path[OPTS_FILE_MAX + 32], gl[2 * OPTS_FILE_MAX + 8];
	struct stat st;
	int n = 0;
	if (pattern[0] == '|')
		return 1; /* a command: cannot tell */
	if (opts_expand_file(pattern, pid, path, sizeof path) == 0 &&
	    stat(path, &st) == 0) {
		if (untouched(&st, before) || !has_intro(path))
			return 0;
		cli_err("record", "log written to %s", path);
		return 1;
	}
	if (!strstr(pattern, "%p"))
		return 0;
	size_t k = 0;
	for (const char *p = pattern; *p && k + 3 < sizeof gl; p++) {
		if (p[0] == '%' && (p[1] == 'p' || p[1] == '%')) {
			gl[k++] = p[1] == 'p' ? '*' : '%';
			p++;
			continue;
		}
		if (strchr("*?[\\", *p))
			gl[k++] = '\\';
		gl[k++] = *p;
	}
	gl[k] = 0;
	glob_t g;
	if (glob(gl, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++)
		if (stat(g.gl_pathv[i], &st) == 0 && st.st_mtime >= t0 &&
		    has_intro(g.gl_pathv[i])) {
			cli_err("record", "log written to %s", g.gl_pathv[i]);
			n++;
		}
	globfree(&g);
	return n;
}

/* Main thread. LUAJIT_PROFILE's value for -o out and -e events (either
** NULL), a ',' or '\\' in out escaped ("\,", "\\"); malloc'd, NULL when
** out of memory. */
static char *record_profile(const char *out, const char *events)
{
	size_t pl =
	    16 + (out ? 2 * strlen(out) : 0) + (events ? strlen(events) : 0);
	char *profile = malloc(pl), *q = profile;
	if (!profile)
		return NULL;
	q +=
	    sprintf(q, "log%s%s", out || events ? ":" : "", out ? "file=" : "");
	for (const char *c = out; c && *c; c++) {
		if (*c == ',' || *c == '\\')
			*q++ = '\\';
		*q++ = *c;
	}
	sprintf(q, "%s%s", out && events ? "," : "", events ? events : "");
	return profile;
}

/* Main thread. 'ljlog record'. */
int cli_record(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"events", required_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL, *events = NULL;
	int o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+o:e:h", lo, NULL)) != -1) {
		switch (o) {
		case 'o': out = optarg; break;
		case 'e': events = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default:
			if (optopt == 'o' || optopt == 'e')
				cli_err("record", "-%c needs a value", optopt);
			else
				cli_err("record", "unknown option '%s'",
					argv[optind - 1]);
			cli_see_help("record");
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_err("record", "no PROGRAM given");
		cli_see_help("record");
		return CLI_USAGE;
	}
	if (out && !*out) {
		cli_err("record", "-o '': the file name must be non-empty");
		return CLI_USAGE;
	}

	/* Build and validate the option string before running anything. */
	char *profile = record_profile(out, events);
	if (!profile) {
		cli_err("record", "out of memory");
		return CLI_USAGE;
	}
	struct opts opts;
	char err[512];
	if (opts_parse(profile, &opts, err, sizeof err) < 0) {
		cli_err("record", "%s", err);
		free(profile);
		return CLI_USAGE;
	}
	char dir[OPTS_FILE_MAX + 32];
	int de = dir_writable(opts.file, dir, sizeof dir);
	if (de < 0) {
		cli_err("record", "cannot write the log %s: %s%s%s", opts.file,
			de == -EISDIR ? "" : dir, de == -EISDIR ? "" : ": ",
			strerror(-de));
		free(profile);
		return CLI_USAGE;
	}
	if (set_env(profile) < 0) {
		free(profile);
		return CLI_USAGE;
	}
	free(profile);

	struct stat before;
	log_before(opts.file, &before);
	fflush(NULL);
	time_t t0 = time(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cli_err("record", "fork: %s", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[optind], argv + optind);
		int e = errno;
		fprintf(stderr, "ljlog record: cannot run '%s': %s\n",
			argv[optind], strerror(e));
		_exit(127);
	}
	/* Like system(3): ^C and ^\ are for the program. */
	struct sigaction ign, old_int, old_quit;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	int status;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (w < 0) {
		cli_err("record", "waitpid: %s", strerror(errno));
		return 127;
	}

	/* No VM: 125, unless the program failed (its status says more). */
	if (logs_written(opts.file, pid, t0, &before) == 0) {
		cli_err("record",
			"no LuaJIT VM was profiled (is PROGRAM a LuaJIT "
			"program?)");
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			return NO_VM;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 127;
}
