/*
** ljlog e2e: a C Lua module (luaopen_sample_cmod) for the sampling tests.
** spin(n)       busy lua_CFunction, called through the Lua C API
** alloc(n)      n small blocks allocated and freed (calls the sanitizers
**               intercept, where ThreadSanitizer delivers its signals)
** sigprof([usec]) install the module's own SIGPROF handler (a program
**               that handles SIGPROF itself) and, with usec, arm a
**               process CPU-time timer (ITIMER_PROF) every usec; true
**               when done; sigprof(0) disarms the timer, the handler stays
** sigprof_count()  SIGPROF signals that handler took
*/
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <lauxlib.h>
#include <lua.h>

static volatile sig_atomic_t nprof; /* SIGPROF taken by our handler */

/* Any thread. spin(n): n rounds of integer arithmetic, returns a number.
** Exported: its name must show in sampled stacks. */
int sample_cmod_spin(lua_State *L)
{
	int64_t n = (int64_t)luaL_checknumber(L, 1);
	volatile uint64_t x = 1;
	for (int64_t i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	lua_pushnumber(L, (lua_Number)(x >> 33));
	return 1;
}

/* Any thread. alloc(n): allocate and free n small blocks; a number. */
int sample_cmod_alloc(lua_State *L)
{
	int64_t n = (int64_t)luaL_checknumber(L, 1);
	uint64_t s = 0;
	for (int64_t i = 0; i < n; i++) {
		volatile char *p = malloc(64 + (size_t)(i & 63));
		if (!p)
			break;
		p[0] = (char)i;
		s += (unsigned char)p[0];
		free((void *)p);
	}
	lua_pushnumber(L, (lua_Number)s);
	return 1;
}

/* Async-signal-safe. The program's own SIGPROF handler. */
static void on_prof(int sig)
{
	(void)sig;
	nprof++;
}

/* Any thread. sigprof([usec]): install on_prof for SIGPROF, arm the
** timer; sigprof(0) disarms it. */
static int l_sigprof(lua_State *L)
{
	struct sigaction sa;
	struct itimerval it;
	long usec = (long)luaL_optnumber(L, 1, -1);
	int ok = 1;
	if (usec != 0) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		ok = sigaction(SIGPROF, &sa, NULL) == 0;
	}
	if (ok && usec >= 0) {
		memset(&it, 0, sizeof it);
		it.it_interval.tv_sec = usec / 1000000;
		it.it_interval.tv_usec = usec % 1000000;
		it.it_value = it.it_interval;
		ok = setitimer(ITIMER_PROF, &it, NULL) == 0;
	}
	lua_pushboolean(L, ok);
	return 1;
}

/* Any thread. sigprof_count(): signals on_prof took. */
static int l_sigprof_count(lua_State *L)
{
	lua_pushnumber(L, (lua_Number)nprof);
	return 1;
}

/* VM thread. The module table. */
int luaopen_sample_cmod(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"spin", sample_cmod_spin},
	    {"alloc", sample_cmod_alloc},
	    {"sigprof", l_sigprof},
	    {"sigprof_count", l_sigprof_count},
	    {NULL, NULL},
	};
	luaL_register(L, "sample_cmod", fns);
	return 1;
}
