/*
** Unit tests: the snapshot triggers (src/logger/snaptrig.c) on a real VM.
** A request changes nothing of LuaJIT's; the VM's next allocation arms the
** hook where LuaJIT allows it (not inside a hook); the hook does the work
** asked for, with requests made at every point of its run, and puts the
** program's hook back with its countdown; a debug.sethook of the program's
** over the armed hook is kept; a detach takes a snapshot still asked for.
** Each run's hook count is compared with the same code run unprofiled.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "logger/logger.h"
#include "lualib.h"
#include "reallog.h"

/* The program's own hook: counts call events (and count events). */
static long calls, counts;
/* Requests the program's hook makes, on every Nth call (0: none). */
static long request_every;
static struct logger_vm *req_vm;
/* Inside the program's hook: 1 once an allocation there armed ours. */
static int armed_inside;

/* Test thread (a hook). The program's hook. */
static void prog_hook(lua_State *L, lua_Debug *ar)
{
	if (ar->event == LUA_HOOKCOUNT) {
		counts++;
		return;
	}
	calls++;
	if (request_every && calls % request_every == 0) {
		snaptrig_request(req_vm, SNAPTRIG_SNAPSHOT);
		/* An allocation inside a hook: LuaJIT's hook is not to be
		** changed here. */
		lua_newtable(L);
		lua_pop(L, 1);
		armed_inside |= G(L)->hookf == logger_snap_hook;
	}
}

/* Code that calls and allocates, and its calls. */
static const char *code =
    "local function leaf(x) return {x} end\n"
    "local n = 0\n"
    "for i = 1, 2000 do local t = leaf(i) n = n + #t end\n"
    "assert(n == 2000)\n";

/* Test thread. A new VM with the libraries and the program's hook
** (events: LUA_MASK*, count: its count). */
static lua_State *vm_new(int events, int count)
{
	lua_State *L = luaL_newstate();
	cr_assert_not_null(L);
	luaL_openlibs(L);
	luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
	lua_sethook(L, prog_hook, events, count);
	return L;
}

/* Test thread. Run code in L; the program's hook's calls and counts. */
static void run(lua_State *L, long *c, long *k)
{
	calls = counts = 0;
	cr_assert_eq(luaL_dostring(L, code), 0, "%s", lua_tostring(L, -1));
	*c = calls;
	*k = counts;
}

/* Test thread. The program's hook's calls and counts over code, run
** unprofiled with the hook's events and count. */
static void unprofiled(int events, int count, long *c, long *k)
{
	lua_State *P = vm_new(events, count);
	run(P, c, k);
	lua_close(P);
}

/* Test thread. The log path of this test process. */
static const char *log_path(void)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/snaptrig-%d.ljlog", BUILDDIR,
		 (int)getpid());
	return path;
}

/* Test thread. Attach to L without families; its state. */
static struct logger_vm *attach(lua_State *L)
{
	char err[512], opts[600];
	snprintf(opts, sizeof opts, "log:nodefaults,file=%s", log_path());
	cr_assert_eq(logger_attach(L, opts, err, sizeof err), 0, "%s", err);
	struct logger_vm *vm = logger_vm_of(G(L));
	cr_assert_not_null(vm);
	return vm;
}

/* Test thread. Detach from L and close it. */
static void detach(lua_State *L)
{
	char err[512];
	cr_assert_eq(logger_detach(L, err, sizeof err), 0, "%s", err);
	lua_close(L);
	unlink(log_path());
}

/* A request alone changes no hook field; the next allocation arms ours
** with the program's events added; the hook takes the snapshot and puts
** the program's hook back; its count is the unprofiled one. */
Test(snaptrig, request_arms_at_the_next_allocation)
{
	long c0, k0, c, k;
	unprofiled(LUA_MASKCALL, 0, &c0, &k0);

	lua_State *L = vm_new(LUA_MASKCALL, 0);
	struct logger_vm *vm = attach(L);
	global_State *g = G(L);
	snaptrig_request(vm, SNAPTRIG_SNAPSHOT);
	cr_expect_eq(g->hookf, prog_hook, "a request changed the hook");
	cr_expect_eq(g->hookmask & HOOK_EVENTMASK, LUA_MASKCALL);
	lua_newtable(L); /* an allocation: armed */
	lua_pop(L, 1);
	cr_expect_eq(g->hookf, logger_snap_hook);
	cr_expect_eq(g->hookmask & HOOK_EVENTMASK,
		     LUA_MASKCALL | LUA_MASKCOUNT);
	cr_expect_eq(vm->snap.seq, 0);
	run(L, &c, &k);
	cr_expect_eq(vm->snap.seq, 1, "snapshots taken: %llu",
		     (unsigned long long)vm->snap.seq);
	cr_expect_eq(g->hookf, prog_hook);
	cr_expect_eq(g->hookmask & HOOK_EVENTMASK, LUA_MASKCALL);
	cr_expect_eq(__atomic_load_n(&vm->trig.work, __ATOMIC_RELAXED), 0);
	cr_expect_eq(c, c0, "the program's hook: %ld calls, unprofiled %ld", c,
		     c0);
	detach(L);
}

/* Requests from the program's hook on every 7th call (while ours is
** armed, from inside its run, after it): none is left asked for, none is
** armed from inside a hook, and the count is the unprofiled one. */
Test(snaptrig, requests_at_every_point_are_taken)
{
	long c0, k0, c, k;
	unprofiled(LUA_MASKCALL, 0, &c0, &k0);

	lua_State *L = vm_new(LUA_MASKCALL, 0);
	struct logger_vm *vm = attach(L);
	req_vm = vm;
	request_every = 7;
	armed_inside = 0;
	run(L, &c, &k);
	request_every = 0;
	cr_expect_eq(c, c0, "the program's hook: %ld calls, unprofiled %ld", c,
		     c0);
	cr_expect_not(armed_inside, "armed from inside the program's hook");
	cr_expect_gt(vm->snap.seq, 0);
	/* The last request (at most 6 calls before the end) was taken by
	** the code after it, or is armed, or asked for: a few more
	** allocations and instructions take it. */
	cr_assert_eq(luaL_dostring(L, "local t = {} for i = 1, 10 do t[i] = "
				      "{} end"),
		     0);
	cr_expect_eq(__atomic_load_n(&vm->trig.work, __ATOMIC_RELAXED), 0,
		     "a request was left");
	cr_expect_eq(G(L)->hookf, prog_hook);
	detach(L);
}

/* The program's count hook keeps its countdown across ours: it fires
** exactly as often as unprofiled. */
Test(snaptrig, program_count_hook_keeps_its_countdown)
{
	long c0, k0, c, k;
	unprofiled(LUA_MASKCALL | LUA_MASKCOUNT, 97, &c0, &k0);
	cr_assert_gt(k0, 10);

	lua_State *L = vm_new(LUA_MASKCALL | LUA_MASKCOUNT, 97);
	struct logger_vm *vm = attach(L);
	req_vm = vm;
	request_every = 5;
	run(L, &c, &k);
	request_every = 0;
	cr_expect_gt(vm->snap.seq, 0);
	cr_expect_eq(c, c0, "calls %ld, unprofiled %ld", c, c0);
	cr_expect_eq(k, k0, "count events %ld, unprofiled %ld", k, k0);
	cr_expect_eq(G(L)->hookcstart, 97);
	detach(L);
}

/* Test thread (a hook). The hook the program sets over ours. */
static long other_calls;
static void other_hook(lua_State *L, lua_Debug *ar)
{
	(void)L;
	if (ar->event == LUA_HOOKCALL)
		other_calls++;
}

/* The program's debug.sethook replaces the armed hook: its hook stays;
** the next allocation arms ours over it, and the hook puts it back. */
Test(snaptrig, program_sethook_over_the_armed_hook)
{
	lua_State *L = vm_new(LUA_MASKCALL, 0);
	struct logger_vm *vm = attach(L);
	global_State *g = G(L);
	snaptrig_request(vm, SNAPTRIG_SNAPSHOT);
	lua_newtable(L);
	lua_pop(L, 1);
	cr_assert_eq(g->hookf, logger_snap_hook);
	lua_sethook(L, other_hook, LUA_MASKCALL, 0); /* the program's */
	other_calls = 0;
	cr_assert_eq(luaL_dostring(L, code), 0);
	cr_expect_eq(vm->snap.seq, 1);
	cr_expect_eq(g->hookf, other_hook);
	cr_expect_eq(g->hookmask & HOOK_EVENTMASK, LUA_MASKCALL);
	cr_expect_gt(other_calls, 2000);
	cr_expect_eq(__atomic_load_n(&vm->trig.work, __ATOMIC_RELAXED), 0);
	detach(L);
}

/* Decoder sink: one more snapshot summary. */
static int count_summary(void *ud, const struct decode_hsummary *hs)
{
	(void)hs;
	++*(int *)ud;
	return 0;
}

/* A snapshot asked for and not taken when the VM detaches is taken then;
** the program's hook is back. */
Test(snaptrig, detach_takes_a_pending_snapshot)
{
	lua_State *L = vm_new(LUA_MASKCALL, 0);
	struct logger_vm *vm = attach(L);
	global_State *g = G(L);
	snaptrig_request(vm, SNAPTRIG_SNAPSHOT);
	lua_newtable(L); /* armed, not fired: no instruction ran */
	lua_pop(L, 1);
	cr_assert_eq(g->hookf, logger_snap_hook);
	uint64_t before = vm->snap.seq;
	char err[512];
	cr_assert_eq(logger_detach(L, err, sizeof err), 0, "%s", err);
	cr_expect_eq(g->hookf, prog_hook);
	cr_expect_eq(g->hookmask & HOOK_EVENTMASK, LUA_MASKCALL);
	lua_close(L);
	/* The log holds it: one snapshot summary, as the reader decodes. */
	int n = 0;
	struct decode_sink sink = {.ud = &n, .heap_summary = count_summary};
	cr_expect_eq(before, 0);
	cr_assert_eq(rl_decode_file(log_path(), &sink, err, sizeof err), 0,
		     "%s", err);
	cr_expect_eq(n, 1, "snapshots in the log: %d", n);
	unlink(log_path());
}
