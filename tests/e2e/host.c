/*
** ljlog e2e: a C host that embeds LuaJIT and profiles its VMs with the C API.
** host [--threads N] --script FILE [--options STR] [--malloc] [--detach] [--zones]
**      [-- ARGS...]
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ljlog.h"

/* -- Options ------------------------------------------------------------------ */

static int nthreads = 1;    /* one VM per thread */
static const char *script;  /* run by every thread */
static const char *options; /* ljlog_attach options, NULL: not profiled */
static int use_malloc;	    /* lua_newstate with the system allocator */
static int do_detach;	    /* ljlog_detach before lua_close */
static int do_zones; /* --zones: ljlog_zone and ljlog_mark around the script */
static char **script_args; /* passed to the script after the index */
static int nscript_args;

static pthread_barrier_t attached; /* every VM attached before any runs */

static void usage(void)
{
	fprintf(stderr, "usage: host [--threads N] --script FILE "
			"[--options STR] [--malloc] [--detach] [-- ARGS...]\n");
	exit(2);
}

/* -- The system allocator ------------------------------------------------------ */

/* Any thread. lua_Alloc on malloc: freed blocks really go back to malloc
** (and to AddressSanitizer, which then catches any read of them). */
static void *sys_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}

/* -- One thread, one VM ---------------------------------------------------------- */

struct job {
	pthread_t th;
	int index; /* 1..nthreads */
	int failed;
};

static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
	return 1;
}

static void *run(void *arg)
{
	struct job *j = arg;
	lua_State *L =
	    use_malloc ? lua_newstate(sys_alloc, NULL) : luaL_newstate();
	int attached_ok = 0;

	if (!L) {
		fprintf(stderr, "host: thread %d: cannot create a Lua state\n",
			j->index);
		j->failed = 1;
		pthread_barrier_wait(&attached);
		return NULL;
	}
	luaL_openlibs(L);
	if (do_zones && ljlog_zone(L, "early") != -ENOENT) {
		fprintf(stderr,
			"host: ljlog_zone before attach: not -ENOENT\n");
		j->failed = 1;
	}
	if (options) {
		if (ljlog_attach(L, options) < 0) {
			fprintf(stderr, "host: thread %d: ljlog_attach: %s\n",
				j->index, ljlog_errmsg());
			j->failed = 1;
		} else {
			attached_ok = 1;
		}
	}
	printf("host: thread %d tid %ld attached %d\n", j->index,
	       (long)syscall(SYS_gettid), attached_ok);
	fflush(stdout);
	pthread_barrier_wait(&attached);

	if (do_zones && attached_ok &&
	    (ljlog_zone(L, "host") < 0 || ljlog_mark(L, "host mark") < 0)) {
		fprintf(stderr, "host: ljlog_zone: %s\n", ljlog_errmsg());
		j->failed = 1;
	}
	lua_pushcfunction(L, traceback);
	if (luaL_loadfile(L, script) != 0) {
		fprintf(stderr, "host: thread %d: %s\n", j->index,
			lua_tostring(L, -1));
		j->failed = 1;
	} else {
		lua_pushinteger(L, j->index);
		for (int i = 0; i < nscript_args; i++)
			lua_pushstring(L, script_args[i]);
		if (lua_pcall(L, 1 + nscript_args, 0, 1) != 0) {
			fprintf(stderr, "host: thread %d: %s\n", j->index,
				lua_tostring(L, -1));
			j->failed = 1;
		}
	}
	lua_settop(L, 0);
	if (do_zones && attached_ok &&
	    (ljlog_zone(L, NULL) < 0 || ljlog_zone(L, NULL) != -EINVAL)) {
		fprintf(stderr, "host: ljlog_zone pop: not 0 then -EINVAL\n");
		j->failed = 1;
	}
	if (attached_ok && do_detach && ljlog_detach(L) < 0) {
		fprintf(stderr, "host: thread %d: ljlog_detach: %s\n", j->index,
			ljlog_errmsg());
		j->failed = 1;
	}
	if (attached_ok && do_detach && ljlog_running(L)) {
		fprintf(stderr,
			"host: thread %d: still profiled after detach\n",
			j->index);
		j->failed = 1;
	}
	lua_close(L); /* without --detach, this detaches */
	return NULL;
}

int main(int argc, char **argv)
{
	int i, failed = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--threads") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (strcmp(a, "--script") == 0 && i + 1 < argc)
			script = argv[++i];
		else if (strcmp(a, "--options") == 0 && i + 1 < argc)
			options = argv[++i];
		else if (strcmp(a, "--malloc") == 0)
			use_malloc = 1;
		else if (strcmp(a, "--zones") == 0)
			do_zones = 1;
		else if (strcmp(a, "--detach") == 0)
			do_detach = 1;
		else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else
			usage();
	}
	if (!script || nthreads < 1 || nthreads > 64)
		usage();
	script_args = argv + i;
	nscript_args = argc - i;

	struct job *jobs = calloc((size_t)nthreads, sizeof *jobs);
	if (!jobs)
		return 1;
	pthread_barrier_init(&attached, NULL, (unsigned)nthreads);
	for (i = 0; i < nthreads; i++) {
		jobs[i].index = i + 1;
		int r = pthread_create(&jobs[i].th, NULL, run, &jobs[i]);
		if (r != 0) {
			fprintf(stderr, "host: pthread_create: %s\n",
				strerror(r));
			return 1; /* the barrier would never open */
		}
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(jobs[i].th, NULL);
		failed |= jobs[i].failed;
	}
	pthread_barrier_destroy(&attached);
	free(jobs);
	return failed ? 1 : 0;
}
