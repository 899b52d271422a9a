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

#endif
