/*
** ljlog e2e: a C host with VMs on two threads that forks (fork_threads.sh).
** forkhost --options STR --mode detach|exit --release FILE
**          [--parent N] [--child N] [--other N]
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ljlog.h"

/* The main thread's VM: f at line 2 of chunk "parent", run N times. */
static const char parent_src[] = "local n = ...\n"
				 "local function f(x)\n"
				 "\treturn x + 1\n"
				 "end\n"
				 "for i = 1, n do\n"
				 "\tf(i)\n"
				 "end\n";

/* The child's (the main thread's VM, forked): g at line 2 of chunk
** "child", run N times; returns tick (line 5), which the child calls
** while it waits. */
static const char child_src[] = "local n = ...\n"
				"local function g(x)\n"
				"\treturn x * 2\n"
				"end\n"
				"local function tick()\n"
				"\treturn 0\n"
				"end\n"
				"for i = 1, n do\n"
				"\tg(i)\n"
				"end\n"
				"return tick\n";

/* The second thread's VM: h at line 2 of chunk "other", run N times;
** then spin (line 5) until the main thread says stop, the count
** returned. */
static const char other_src[] = "local n = ...\n"
				"local function h(x)\n"
				"\treturn x - 1\n"
				"end\n"
				"local function spin()\n"
				"\treturn 0\n"
				"end\n"
				"for i = 1, n do\n"
				"\th(i)\n"
				"end\n"
				"ready()\n"
				"local k = 0\n"
				"while not stopped() do\n"
				"\tspin()\n"
				"\tk = k + 1\n"
				"end\n"
				"return k\n";

static const char *options, *mode, *release;
static int nparent = 100, nchild = 500, nother = 300;

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int other_ready, stop;
static int other_failed;
static long other_spins = -1;

/* -- Helpers ------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: forkhost --options STR --mode detach|exit "
			"--release FILE [--parent N] [--child N] "
			"[--other N]\n");
	exit(2);
}

/* Any thread. Sleep ms milliseconds. */
static void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Any thread. Load src as chunk name, call it with the integer n; leaves
** its one result on the stack. 0, or -1 with a message. */
static int run_chunk(lua_State *L, const char *src, const char *name,
		     lua_Integer n)
{
	if (luaL_loadbuffer(L, src, strlen(src), name) != 0 ||
	    (lua_pushinteger(L, n), lua_pcall(L, 1, 1, 0)) != 0) {
		fprintf(stderr, "forkhost: %s: %s\n", name,
			lua_tostring(L, -1));
		return -1;
	}
	return 0;
}

/* VM thread. A new VM, profiled with options; NULL with a message. */
static lua_State *new_vm(const char *who)
{
	lua_State *L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "forkhost: %s: no Lua state\n", who);
		return NULL;
	}
	luaL_openlibs(L);
	if (ljlog_attach(L, options) < 0) {
		fprintf(stderr, "forkhost: %s: ljlog_attach: %s\n", who,
			ljlog_errmsg());
		lua_close(L);
		return NULL;
	}
	return L;
}

/* -- The second thread ----------------------------------------------------------- */

static int l_ready(lua_State *L)
{
	(void)L;
	pthread_mutex_lock(&mtx);
	other_ready = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mtx);
	return 0;
}

/* Whether the main thread said stop; a short nap first, so that the
** spinning VM buffers events (and flushes) across the fork without
** taking a core. */
static int l_stopped(lua_State *L)
{
	nap(1);
	pthread_mutex_lock(&mtx);
	lua_pushboolean(L, stop);
	pthread_mutex_unlock(&mtx);
	return 1;
}

static void *other_main(void *arg)
{
	(void)arg;
	lua_State *L = new_vm("other");
	if (L) {
		lua_register(L, "ready", l_ready);
		lua_register(L, "stopped", l_stopped);
		if (run_chunk(L, other_src, "=other", nother) == 0)
			other_spins = (long)lua_tointeger(L, -1);
		lua_close(L); /* detaches */
	}
	pthread_mutex_lock(&mtx);
	other_failed = other_spins < 0;
	other_ready = 1; /* a failure before ready() lets main go on */
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mtx);
	return NULL;
}

/* -- The child --------------------------------------------------------------------- */

/* The child. Wait until the release file exists (fork_threads.sh has read
** the log), at most 120 s, calling tick each ms (-1: nothing) so that
** timed flushes come due. 0, or -1 on time out. */
static int wait_release(lua_State *L, int tick)
{
	for (long ms = 0; ms < 120000; ms++) {
		if (access(release, F_OK) == 0)
			return 0;
		if (tick >= 0) {
			lua_pushvalue(L, tick);
			lua_call(L, 0, 0);
		}
		nap(1);
	}
	fprintf(stderr, "forkhost: child: no %s after 120 s\n", release);
	return -1;
}

/* The child: the forked main thread's VM. Never returns. */
static void child_main(lua_State *L)
{
	int failed = 0;
	if (run_chunk(L, child_src, "=child", nchild) < 0)
		_exit(3);
	int tick = lua_gettop(L);
	if (strcmp(mode, "detach") == 0) {
		/* The child's last VM detaches: its log is closed now, while
		** it lives on. */
		if (ljlog_detach(L) < 0) {
			fprintf(stderr, "forkhost: child: ljlog_detach: %s\n",
				ljlog_errmsg());
			failed = 1;
		}
		if (ljlog_running(L)) {
			fprintf(stderr,
				"forkhost: child: profiled after detach\n");
			failed = 1;
		}
		printf("child %ld detached %d\n", (long)getpid(), failed);
		fflush(stdout);
		failed |= wait_release(L, -1) < 0;
		lua_close(L);
		exit(failed ? 4 : 0); /* atexit handlers run: no more END */
	}
	/* exit: still profiled, flush= writes the events; _exit (no atexit
	** handlers, no END) once the test has seen them in the log. */
	printf("child %ld ran\n", (long)getpid());
	fflush(stdout);
	failed = wait_release(L, tick) < 0;
	_exit(failed ? 4 : 0);
}

/* -- Main -------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc)
			usage();
		if (strcmp(a, "--options") == 0)
			options = argv[++i];
		else if (strcmp(a, "--mode") == 0)
			mode = argv[++i];
		else if (strcmp(a, "--release") == 0)
			release = argv[++i];
		else if (strcmp(a, "--parent") == 0)
			nparent = atoi(argv[++i]);
		else if (strcmp(a, "--child") == 0)
			nchild = atoi(argv[++i]);
		else if (strcmp(a, "--other") == 0)
			nother = atoi(argv[++i]);
		else
			usage();
	}
	if (!options || !mode || !release ||
	    (strcmp(mode, "detach") != 0 && strcmp(mode, "exit") != 0))
		usage();

	lua_State *L = new_vm("main");
	if (!L)
		return 1;
	if (run_chunk(L, parent_src, "=parent", 100) < 0)
		return 1;
	lua_settop(L, 0);

	/* The second thread's VM runs (spins) while the main thread forks. */
	pthread_t th;
	if (pthread_create(&th, NULL, other_main, NULL) != 0)
		return 1;
	pthread_mutex_lock(&mtx);
	while (!other_ready)
		pthread_cond_wait(&cond, &mtx);
	pthread_mutex_unlock(&mtx);

	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("forkhost: fork");
		return 1;
	}
	if (pid == 0)
		child_main(L);

	int st = -1;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&mtx);
	stop = 1;
	pthread_mutex_unlock(&mtx);
	pthread_join(th, NULL);
	int failed = run_chunk(L, parent_src, "=parent", nparent) < 0;
	lua_close(L); /* the last VM: the END */
	printf("parent %ld child %ld status %d other %ld\n", (long)getpid(),
	       (long)pid, st, other_spins);
	return failed || other_failed || st != 0 ? 1 : 0;
}
