/*
** Unit tests: src/logger/vmheap.c. The mirrored head of LuaJIT's allocator
** state is checked against lj_alloc.c itself (compiled into this test), and
** vmheap_find against the real allocator of real VMs and against pointers
** that are not LuaJIT's allocator state.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lauxlib.h"
#include "logger/logger.h"
#include "logger/vmheap.h"

/* lj_alloc.c's own definitions: struct malloc_state and its constants. Its
** functions are this test's private copies (LuaJIT's are hidden). */
#include "lj_alloc.c"

/* Linked in by that copy's mmap_probe, which this test never calls. */
uint64_t LJ_FASTCALL lj_prng_u64(PRNGState *rs)
{
	return rs->u[0]++;
}

#define SAME(f)                                                                \
	cr_expect_eq(offsetof(struct malloc_state, f),                         \
		     offsetof(struct vmheap_mstate, f), "offset of " #f)

Test(vmheap, layout_is_lj_alloc_c)
{
	SAME(smallmap);
	SAME(treemap);
	SAME(dvsize);
	SAME(topsize);
	SAME(dv);
	SAME(top);
	SAME(trim_check);
	SAME(release_checks);
	SAME(smallbins);
	SAME(treebins);
	SAME(seg);
	SAME(prng);
	cr_expect_eq(sizeof(struct malloc_state), sizeof(struct vmheap_mstate));
	cr_expect_eq(offsetof(struct malloc_segment, base),
		     offsetof(struct vmheap_mstate, seg.base) -
			 offsetof(struct vmheap_mstate, seg));
	cr_expect_eq(offsetof(struct malloc_segment, size),
		     offsetof(struct vmheap_mstate, seg.size) -
			 offsetof(struct vmheap_mstate, seg));
	cr_expect_eq(DEFAULT_TRIM_THRESHOLD, VMHEAP_TRIM_DEFAULT);
}

/* A lua_Alloc that is not LuaJIT's. */
static void *other_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud, (void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}

Test(vmheap, finds_luajits_allocator)
{
	lua_State *L = luaL_newstate(), *L2 = luaL_newstate();
	void *ud, *ud2;
	lua_Alloc f = lua_getallocf(L, &ud), f2 = lua_getallocf(L2, &ud2);
	cr_assert_not_null(L);
	cr_assert_not_null(L2);
	struct vmheap_mstate *ms = vmheap_find(L, f, ud);
	cr_assert_eq((void *)ms, ud, "LuaJIT's own allocator is recognised");
	cr_assert_eq((void *)vmheap_find(L2, f2, ud2), ud2);
	/* Another VM's state, another allocator, or no state: left alone. */
	cr_expect_null(vmheap_find(L, f2, ud2), "another VM's allocator state");
	cr_expect_null(vmheap_find(L, other_alloc, ud), "a host's allocator");
	cr_expect_null(vmheap_find(L, f, NULL));
	cr_expect_null(vmheap_find(L, f, (char *)ud + 16));
	/* Unmapped memory is checked without a fault. */
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(gone, MAP_FAILED);
	munmap(gone, 4096);
	cr_expect_null(vmheap_find(L, f, gone));
	lua_close(L2);
	lua_close(L);
}

/* Test thread. L's allocator threshold after its heap grew by 8 MB. */
static size_t threshold_after_growth(lua_State *L, struct vmheap_mstate *ms)
{
	lua_createtable(L, 1 << 20, 0);
	lua_pop(L, 1);
	lua_gc(L, LUA_GCCOLLECT, 0);
	return ms->trim_check;
}

/* Attached (the allocator wrapper of src/logger/alloc.c), the threshold
** stays "never" however the heap grows; with vmtrim it is LuaJIT's. */
Test(vmheap, attached_vm_never_trims)
{
	char err[512], opts[256];
	snprintf(opts, sizeof opts, "log:nodefaults,file=%s/vmheap-%d.ljlog",
		 BUILDDIR, (int)getpid());
	for (int vmtrim = 0; vmtrim <= 1; vmtrim++) {
		lua_State *L = luaL_newstate();
		void *ud;
		lua_Alloc f = lua_getallocf(L, &ud);
		struct vmheap_mstate *ms = vmheap_find(L, f, ud);
		cr_assert_not_null(ms);
		cr_expect_eq(threshold_after_growth(L, ms), VMHEAP_TRIM_DEFAULT,
			     "unprofiled, LuaJIT resets it at each growth");
		if (vmtrim)
			strcat(opts, ",vmtrim");
		cr_assert_eq(logger_attach(L, opts, err, sizeof err), 0, "%s",
			     err);
		for (int round = 0; round < 3; round++) {
			cr_expect_eq(threshold_after_growth(L, ms),
				     vmtrim ? VMHEAP_TRIM_DEFAULT : SIZE_MAX);
			if (!vmtrim)
				cr_expect_eq(ms->release_checks,
					     VMHEAP_RELEASE_NEVER);
		}
		cr_assert_eq(logger_detach(L, err, sizeof err), 0, "%s", err);
		lua_close(L);
	}
	char path[512];
	snprintf(path, sizeof path, "%s/vmheap-%d.ljlog", BUILDDIR,
		 (int)getpid());
	unlink(path);
}
