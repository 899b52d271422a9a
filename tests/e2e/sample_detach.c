/*
** ljlog e2e: a host that stops sampling a VM from another thread while the
** sampled thread still takes timer signals (sample.h, "The ring's
** lifetime").
** sample_detach --log FILE [--rounds R]
** The main thread keeps an unsampled VM attached (the log stays open).
** Per round, thread A makes a VM, attaches it with sample=100us,wall and
** host stacks, runs Lua for 1 ms, hands the VM to thread B and spins in
** C (signals keep coming to A); B detaches the VM and closes it while A
** spins; then A stops spinning. Prints "rounds R samples-attached R".
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ljlog.h"

static const char *logpath;
static int rounds = 200;
static char opts[4200];

/* The handoff between A and B, one round at a time. */
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static lua_State *handed; /* A -> B: the VM to detach */
static int detached;	  /* B -> A: done with this round */
static int quit;
static int failures;
static volatile uint64_t sink;

static const char work[] =
    "local n = ...\n"
    "local t = {}\n"
    "for i = 1, n do t[i % 64 + 1] = (t[i % 64 + 1] or 0) + i end\n"
    "return t[1]\n";

/* Any thread. Monotonic nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Thread A. Busy C work until B says the round is done (and at least
** 300 us, so signals come while B detaches). */
__attribute__((noinline)) static void spin_until_detached(void)
{
	uint64_t x = sink, end = now_ns() + 300000;
	for (;;) {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		sched_yield(); /* lets TSan run pending handlers */
		pthread_mutex_lock(&mtx);
		int done = detached;
		pthread_mutex_unlock(&mtx);
		if (done && now_ns() > end)
			break;
	}
	sink = x;
}

/* Thread A: the sampled thread. */
static void *thread_a(void *arg)
{
	(void)arg;
	for (int r = 0; r < rounds; r++) {
		lua_State *L = luaL_newstate();
		if (!L) {
			failures++;
			break;
		}
		luaL_openlibs(L);
		if (ljlog_attach(L, opts) < 0) {
			fprintf(stderr, "attach: %s\n", ljlog_errmsg());
			failures++;
			lua_close(L);
			break;
		}
		/* Lua work for 1 ms at least: ten intervals, so that every
		** round's VM is sampled even on a loaded machine (20000
		** iterations alone take about 100 us, one interval). */
		uint64_t t0 = now_ns();
		do {
			if (luaL_loadstring(L, work) != 0) {
				failures++;
				break;
			}
			lua_pushinteger(L, 20000);
			if (lua_pcall(L, 1, 1, 0) != 0) {
				fprintf(stderr, "lua: %s\n",
					lua_tostring(L, -1));
				failures++;
			}
			lua_pop(L, 1);
		} while (now_ns() - t0 < 1000000);
		pthread_mutex_lock(&mtx);
		detached = 0;
		handed = L;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mtx);
		spin_until_detached();
	}
	pthread_mutex_lock(&mtx);
	quit = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mtx);
	return NULL;
}

/* Thread B: detaches and closes each VM A hands over. */
static void *thread_b(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mtx);
		while (!handed && !quit)
			pthread_cond_wait(&cv, &mtx);
		lua_State *L = handed;
		handed = NULL;
		pthread_mutex_unlock(&mtx);
		if (!L)
			return NULL;
		if (ljlog_detach(L) < 0) {
			fprintf(stderr, "detach: %s\n", ljlog_errmsg());
			failures++;
		}
		lua_close(L);
		pthread_mutex_lock(&mtx);
		detached = 1;
		pthread_mutex_unlock(&mtx);
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--log") && i + 1 < argc)
			logpath = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: sample_detach --log FILE "
					"[--rounds R]\n");
			return 2;
		}
	}
	if (!logpath)
		return 2;
	snprintf(opts, sizeof opts, "log:file=%s,sample=100us,wall", logpath);
	char anchor[4200];
	snprintf(anchor, sizeof anchor, "log:file=%s,nodefaults", logpath);
	lua_State *L0 = luaL_newstate();
	luaL_openlibs(L0);
	if (ljlog_attach(L0, anchor) < 0) {
		fprintf(stderr, "attach anchor: %s\n", ljlog_errmsg());
		return 1;
	}
	pthread_t a, b;
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (ljlog_detach(L0) < 0) {
		fprintf(stderr, "detach anchor: %s\n", ljlog_errmsg());
		failures++;
	}
	lua_close(L0);
	printf("rounds %d failures %d\n", rounds, failures);
	return failures ? 1 : 0;
}
