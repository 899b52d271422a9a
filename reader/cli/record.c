/*
** ljlog CLI: 'ljlog record', run a LuaJIT program under the profiler.
** Validates the options first, then sets LUAJIT_PROFILE, LUA_CPATH and
** LUA_INIT for the program and passes its exit status through.
*/
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "logger/opts.h"

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
    "                      calls,flush=100ms\n"
    "  -h, --help          this help\n"
    "\n"
    "Options valid in EVENTS: %s.\n"
    "The module is looked for in $LJLOG_MODULE_DIR, else next to this\n"
    "program (DIR/lua/ljlog.so), else in " LJLOG_LUAMODDIR ".\n"
    "\n"
    "Exit status: the program's (128+N when killed by signal N); 127 when it\n"
    "cannot be run; 2 for a usage error or a bad option (nothing is run).\n";

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
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_err("record", "no PROGRAM given");
		usage(stderr);
		return CLI_USAGE;
	}
	if (out && (!*out || strchr(out, ','))) {
		cli_err("record",
			"-o '%s': the file name must be non-empty and "
			"hold no ','",
			out);
		return CLI_USAGE;
	}

	/* Build and validate the option string before running anything. */
	size_t pl =
	    16 + (out ? strlen(out) : 0) + (events ? strlen(events) : 0);
	char *profile = malloc(pl);
	if (!profile) {
		cli_err("record", "out of memory");
		return CLI_USAGE;
	}
	snprintf(profile, pl, "log%s%s%s%s%s", out || events ? ":" : "",
		 out ? "file=" : "", out ? out : "", out && events ? "," : "",
		 events ? events : "");
	struct opts opts;
	char err[512];
	if (opts_parse(profile, &opts, err, sizeof err) < 0) {
		cli_err("record", "%s", err);
		free(profile);
		return CLI_USAGE;
	}
	if (set_env(profile) < 0) {
		free(profile);
		return CLI_USAGE;
	}
	free(profile);

	fflush(NULL);
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

	char path[OPTS_FILE_MAX + 32];
	struct stat st;
	if (opts_expand_file(opts.file, pid, path, sizeof path) == 0 &&
	    stat(path, &st) == 0)
		cli_err("record", "log written to %s", path);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 127;
}
