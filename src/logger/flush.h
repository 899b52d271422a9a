/*
** ljlog flush: map the buffer's pointers to IDs, encode, write.
*/
#ifndef LJLOG_LOGGER_FLUSH_H
#define LJLOG_LOGGER_FLUSH_H

#include "logger/logger.h"

/* VM thread only. Map every pointer in vm's buffer that has no ID yet
** (copying names out of the VM), then write a MAPPING block (when new IDs
** were made) and the EVENTS block with one write; empty the buffer.
** Must run before the GC frees anything the buffer points to. */
void flush_vm(struct logger_vm *vm);

/* Caller maps (VM thread, or the sample drainer holding maplock). ID of a
** buffer key (BUF_KEY_*), making it and its MAPPING record in vm->out on
** first use; 0 when out of memory. Call flush_map_begin() first. */
uint64_t flush_ref(struct logger_vm *vm, unsigned kind, uintptr_t key);

/* Caller maps. ID of trace T (a GCtrace*), numbered traceno when it was
** seen (jit.flush() zeroes the number in the object). */
uint64_t flush_trace_ref(struct logger_vm *vm, uintptr_t T, unsigned traceno);

/* Caller maps. Start a mapping pass (the ID cache may be stale). */
void flush_map_begin(void);

/* VM thread only. Write a MAPPING block holding only vm's VM record. */
int flush_vm_record(struct logger_vm *vm, uint64_t heap, unsigned flags);

#endif
