/*
** ljlog e2e: a host whose VM threads spend time outside Lua while sampled.
** sample_host [--threads N] --script FILE [--options STR] [--rounds R]
**             [--cwork MS] [--sleep MS]
** Each thread makes a VM, attaches ljlog, loads FILE once and then, R
** times: calls the chunk with (K, round) (Lua work), spins in C for MS
** milliseconds (no Lua running: state idle), sleeps MS milliseconds
** (resumed after every signal). Prints "thread K tid T" and "thread K
** result V" (the sum of the chunk's results) per thread.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ljlog.h"

static int nthreads = 1;
static const char *script;
static const char *options;
static int rounds = 10;
static int cwork_ms = 5;
static int sleep_ms = 5;
static __thread volatile uint64_t sink; /* defeats the optimiser */

struct job {
	pthread_t th;
	int index;
	int failed;
	double result;
};

/* Any thread. Monotonic nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Any thread. Busy C work for ms milliseconds, no Lua. Not inlined: its
** name must show in the host stacks of the samples taken meanwhile. */
__attribute__((noinline)) void sample_host_cspin(int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u, x = sink;
	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
}

/* Any thread. Sleep ms milliseconds in all, resuming after signals. */
__attribute__((noinline)) void sample_host_sleep(int ms)
{
	struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &left, &left) == EINTR)
		;
}

static void *run(void *arg)
{
	struct job *j = arg;
	lua_State *L = luaL_newstate();
	int attached = 0;
	if (!L) {
		j->failed = 1;
		return NULL;
	}
	luaL_openlibs(L);
	if (options) {
		if (ljlog_attach(L, options) < 0) {
			fprintf(stderr,
				"sample_host: thread %d: ljlog_attach: %s\n",
				j->index, ljlog_errmsg());
			j->failed = 1;
		} else {
			attached = 1;
		}
	}
	printf("thread %d tid %ld attached %d\n", j->index,
	       (long)syscall(SYS_gettid), attached);
	fflush(stdout);
	if (luaL_loadfile(L, script) != 0) {
		fprintf(stderr, "sample_host: %s\n", lua_tostring(L, -1));
		j->failed = 1;
		lua_close(L);
		return NULL;
	}
	for (int r = 1; r <= rounds && !j->failed; r++) {
		lua_pushvalue(L, 1);
		lua_pushinteger(L, j->index);
		lua_pushinteger(L, r);
		if (lua_pcall(L, 2, 1, 0) != 0) {
			fprintf(stderr, "sample_host: thread %d: %s\n",
				j->index, lua_tostring(L, -1));
			j->failed = 1;
			break;
		}
		j->result += lua_tonumber(L, -1);
		lua_pop(L, 1);
		sample_host_cspin(cwork_ms);
		uint64_t t0 = now_ns();
		sample_host_sleep(sleep_ms);
		if (now_ns() - t0 < (uint64_t)sleep_ms * 1000000u) {
			fprintf(stderr, "sample_host: thread %d: short sleep\n",
				j->index);
			j->failed = 1;
		}
	}
	lua_close(L);
	return NULL;
}

int main(int argc, char **argv)
{
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--threads") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (strcmp(a, "--script") == 0 && i + 1 < argc)
			script = argv[++i];
		else if (strcmp(a, "--options") == 0 && i + 1 < argc)
			options = argv[++i];
		else if (strcmp(a, "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(a, "--cwork") == 0 && i + 1 < argc)
			cwork_ms = atoi(argv[++i]);
		else if (strcmp(a, "--sleep") == 0 && i + 1 < argc)
			sleep_ms = atoi(argv[++i]);
		else {
			fprintf(stderr,
				"usage: sample_host [--threads N] --script "
				"FILE [--options STR] [--rounds R] "
				"[--cwork MS] [--sleep MS]\n");
			return 2;
		}
	}
	if (!script || nthreads < 1 || nthreads > 64)
		return 2;
	struct job *jobs = calloc((size_t)nthreads, sizeof *jobs);
	if (!jobs)
		return 1;
	for (int i = 0; i < nthreads; i++) {
		jobs[i].index = i + 1;
		if (pthread_create(&jobs[i].th, NULL, run, &jobs[i]) != 0)
			return 1;
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(jobs[i].th, NULL);
		failed |= jobs[i].failed;
		printf("thread %d result %.17g\n", jobs[i].index,
		       jobs[i].result);
	}
	free(jobs);
	return failed ? 1 : 0;
}
