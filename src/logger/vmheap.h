/*
** ljlog and the VM's own allocator (LuaJIT's lj_alloc.c, a dlmalloc).
**
** Why: LuaJIT's allocator gives the top of its newest heap segment back to
** the system (mremap) whenever more than 2 MB of it are free, unless a
** segment record pins it. An unprofiled luajit grows its heap in adjacent
** mappings that merge into the one segment holding the allocator's own
** state, which is pinned: it never trims. Loading ljlog (its libraries,
** buffers and threads are mapped below the heap) splits the heap, and the
** newest segment, unpinned, is then trimmed and faulted back in again and
** again; whole segments that became free were unmapped and mapped anew
** (LuaJIT releases them every 255 frees of large chunks): binary-trees
** ran 20% slower merely attached. So ljlog keeps the allocator's trim
** threshold at "never", as LuaJIT itself sets it after a trim finds its
** segment pinned, and its release count from reaching 0: the heap behaves
** as the one segment of an unprofiled run, which never shrinks. After
** detach, LuaJIT resets the threshold at its heap's next growth.
**
** Only LuaJIT's own allocator is touched, recognised field by field; a host
** allocator is left alone. The layout mirrored here is lj_alloc.c's struct
** malloc_state (LuaJIT 2.1); tests/unit/test_vmheap.c compiles lj_alloc.c
** itself and checks every offset against it.
*/
#ifndef LJLOG_LOGGER_VMHEAP_H
#define LJLOG_LOGGER_VMHEAP_H

#include <stddef.h>
#include <stdint.h>

#include "lua.h"

/* The head of lj_alloc.c's struct malloc_state, up to its PRNG pointer. */
struct vmheap_mstate {
	uint32_t smallmap, treemap;
	size_t dvsize, topsize;
	void *dv, *top;
	size_t trim_check;
	size_t release_checks;
	void *smallbins[(32 + 1) * 2];
	void *treebins[32];
	struct {
		char *base;
		size_t size;
		void *next;
	} seg;
	void *prng;
};

/* A release count LuaJIT's frees never count down to 0. */
#define VMHEAP_RELEASE_NEVER SIZE_MAX

/* lj_alloc.c's DEFAULT_TRIM_THRESHOLD. */
#define VMHEAP_TRIM_DEFAULT ((size_t)2 << 20)

/* VM thread only. L's allocator state when the allocator f/ud is LuaJIT's
** own (same shared object as lua_newstate, state laid out as mirrored, its
** PRNG the VM's), else NULL. */
struct vmheap_mstate *vmheap_find(lua_State *L, lua_Alloc f, void *ud);

/* VM thread only (inside the allocator wrapper, before a call that may
** free). Keep ms from trimming: LuaJIT resets the threshold each time its
** heap grows. The release count, once set, only counts down by one per
** large free and is reset only by a trim or by reaching 0: it need not be
** checked on every call. */
static inline void vmheap_keep(struct vmheap_mstate *ms)
{
	if (ms && ms->trim_check != SIZE_MAX) {
		ms->trim_check = SIZE_MAX;
		ms->release_checks = VMHEAP_RELEASE_NEVER;
	}
}

/* VM thread only (attach). Hold ms from trimming and releasing from now
** on (vmheap_keep then keeps it so). */
static inline void vmheap_hold(struct vmheap_mstate *ms)
{
	if (ms) {
		ms->trim_check = SIZE_MAX;
		ms->release_checks = VMHEAP_RELEASE_NEVER;
	}
}

#endif
