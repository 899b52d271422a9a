/*
** ljlog allocator wrapper: alloc events with their sites, GC phases, and the
** guard that flushes before the GC sweeps (so buffered pointers still name
** live objects when they are mapped).
*/
#ifndef LJLOG_LOGGER_ALLOC_H
#define LJLOG_LOGGER_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "lua.h"

/* Any thread (attach). The lua_Alloc to install on a VM recording events
** (OPTS_* families) with alloc=rate (0: exact): each does only what they
** need; ud is the VM's struct logger_vm. Always passes through to the
** VM's own allocator. */
lua_Alloc alloc_wrapper(unsigned events, uint64_t rate);

/* VM thread only. The wrappers alloc_wrapper returns (named here for
** alloc_is_wrapper only). */
void *alloc_lua_bare(void *ud, void *ptr, size_t osize, size_t nsize);
void *alloc_lua_plain(void *ud, void *ptr, size_t osize, size_t nsize);
void *alloc_lua_rate(void *ud, void *ptr, size_t osize, size_t nsize);
void *alloc_lua_exact(void *ud, void *ptr, size_t osize, size_t nsize);

/* Any thread. Whether f is one of the wrappers alloc_wrapper returns (on
** every hook and C call: inline). */
static inline int alloc_is_wrapper(lua_Alloc f)
{
	return f == alloc_lua_exact || f == alloc_lua_rate ||
	       f == alloc_lua_plain || f == alloc_lua_bare;
}

/* Any thread (attach). Words of C stack searched for the return address
** into a trace: ALLOC_TRACE_SCAN, or fewer when LJLOG_TEST_TRACE_SCAN in
** the environment says so (0 turns the search off: the tests need
** allocation sites in traces whose place is unknown). Never more: the
** words searched must lie in the stack. */
unsigned alloc_trace_scan_words(void);

/* The C code between a trace and the allocator wrapper (lj_tab_new1,
** lj_mem_newgco, the wrapper) takes about 25 words; sanitizer builds more. */
#define ALLOC_TRACE_SCAN 128

/* arm64: the return addresses into traces the allocator was called from,
** each with the C stack the call took below the trace's frame (the
** callee's frames down to the wrapper's: one or two such paths per call
** site). They tell the running trace's return address from stale copies
** of other traces' (alloc.c, trace_by_ret). VM thread only. */
#define ALLOC_DEPTHS 256
struct alloc_depth {
	uintptr_t ret;
	uint32_t depth[2];
};

#endif
