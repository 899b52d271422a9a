/*
** ljlog heap snapshots: every live GC object of a VM, its references and
** the VM's other allocations, written as HEAP blocks (doc/format.txt).
*/
#ifndef LJLOG_HEAP_SNAP_H
#define LJLOG_HEAP_SNAP_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/writer.h"
#include "maps/ljwin.h"

/* An address -> u64 map: open addressing, linear probing, each key next to
** its value (one cache line per lookup), Fibonacci hashing of the address.
** Key 0 is free. */
struct snap_map {
	uint64_t *kv;	/* key, value pairs */
	size_t mask;	/* capacity - 1 (power of two), 0 before first use */
	size_t count;	/* entries */
	unsigned shift; /* 64 - log2(capacity) */
};

/* Any thread (owner). Home slot of key. */
static inline size_t snap_map_home(const struct snap_map *m, uint64_t key)
{
	return (size_t)(((key >> 3) * 0x9E3779B97F4A7C15ull) >> m->shift);
}

/* Owner only. Pointer to key's value, or NULL. */
static inline uint64_t *snap_map_get(const struct snap_map *m, uint64_t key)
{
	if (!m->count)
		return NULL;
	for (size_t i = snap_map_home(m, key);; i = (i + 1) & m->mask) {
		uint64_t k = m->kv[2 * i];
		if (k == key)
			return &m->kv[2 * i + 1];
		if (!k)
			return NULL;
	}
}

/* Owner only. Pointer to key's value, inserted as 0 when absent (*added
** = 1 then); NULL when out of memory. Valid until the next insert. */
uint64_t *snap_map_ref(struct snap_map *m, uint64_t key, int *added);

/* Owner only. Remove key if present. */
void snap_map_del(struct snap_map *m, uint64_t key);

/* Per-VM snapshot state: the IDs objects keep from one snapshot to the
** next. An address keeps its ID until the allocator frees it
** (snap_forget); an object born there later gets a new one. */
struct snap_vm {
	struct snap_map ids; /* object address -> heap ID (snap.c) */
	uint64_t next_id;    /* last heap ID given */
	uint64_t seq;	     /* snapshots taken */
	int on;		     /* a snapshot was taken: frees must be seen */
};

/* VM thread only (allocator). ptr is freed: forget its ID. */
static inline void snap_forget(struct snap_vm *s, void *ptr)
{
	if (s->ids.count)
		snap_map_del(&s->ids, (uint64_t)(uintptr_t)ptr);
}

/* VM thread only. Walk L's VM (no allocation through it, no Lua code)
** and append its HEAP blocks (for VM vm_id) to out; the number of blocks,
** or -errno (-ENOMEM: out of memory) with a message in err. */
int snap_take(struct snap_vm *s, lua_State *L, uint64_t vm_id, struct wbuf *out,
	      char *err, size_t errlen);

/* VM thread only. Free s's memory. */
void snap_free(struct snap_vm *s);

#endif
