/*
** ljlog allocator wrapper: alloc events with their sites, GC phases, and the
** guard that flushes before the GC sweeps (so buffered pointers still name
** live objects when they are mapped).
*/
#ifndef LJLOG_LOGGER_ALLOC_H
#define LJLOG_LOGGER_ALLOC_H

#include <stddef.h>

/* VM thread only. lua_Alloc installed on every attached VM; ud is the VM's
** struct logger_vm. Always passes through to the VM's own allocator. */
void *alloc_lua(void *ud, void *ptr, size_t osize, size_t nsize);

/* Any thread (attach). Words of C stack searched for the return address
** into a trace: ALLOC_TRACE_SCAN, or fewer when LJLOG_TEST_TRACE_SCAN in
** the environment says so (0 turns the search off: the tests need
** allocation sites in traces whose place is unknown). Never more: the
** words searched must lie in the stack. */
unsigned alloc_trace_scan_words(void);

/* The C code between a trace and the allocator wrapper (lj_tab_new1,
** lj_mem_newgco, alloc_lua) takes about 25 words; sanitizer builds more. */
#define ALLOC_TRACE_SCAN 128

#endif
