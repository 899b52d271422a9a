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
#include "util/hmap.h"

/* Per-VM snapshot state: the IDs objects keep from one snapshot to the
** next. An address keeps its ID until the allocator frees it
** (snap_forget); an object born there later gets a new one. */
struct snap_vm {
	struct hmap ids;  /* object address -> heap ID */
	uint64_t next_id; /* last heap ID given */
	uint64_t seq;	  /* snapshots taken */
	int on;		  /* a snapshot was taken: frees must be seen */
};

/* VM thread only (allocator). ptr is freed: forget its ID. */
static inline void snap_forget(struct snap_vm *s, void *ptr)
{
	if (s->ids.count)
		hmap_del(&s->ids, (uint64_t)(uintptr_t)ptr);
}

/* VM thread only. Walk L's VM (no allocation through it, no Lua code)
** and append its HEAP blocks (for VM vm_id) to out; the number of blocks,
** or -errno (-ENOMEM: out of memory) with a message in err. */
int snap_take(struct snap_vm *s, lua_State *L, uint64_t vm_id, struct wbuf *out,
	      char *err, size_t errlen);

/* VM thread only. Free s's memory. */
void snap_free(struct snap_vm *s);

#endif
