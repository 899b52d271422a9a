/*
** ljlog reader processors: the dominator tree of a kept heap snapshot.
** Nodes are the snapshot's objects (their index in hsnap_keep.v) and a
** virtual super-root (index n) with an edge to every ROOT record's
** object. Weak references do not retain and are left out. Cooper, Harvey
** and Kennedy's iterative algorithm over the reverse post-order; no
** recursion, memory linear in objects + references.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_HDOM_H
#define LJLOG_READER_PROC_HDOM_H

#include <stddef.h>
#include <stdint.h>

#include "proc/hsnap.h"

#define HDOM_NONE SIZE_MAX /* no dominator: no root reaches the object */

struct hdom {
	size_t n;	    /* objects; node n is the super-root */
	size_t *idom;	    /* per node: its immediate dominator, HDOM_NONE */
	uint64_t *retained; /* per node: bytes freed with it (0 unreached) */
	const struct hsnap_edge **via; /* per object: the last reference of a
					** shortest strong path from a root,
					** NULL when unreached */
	size_t reached;		       /* objects reached */
};

/* The dominator tree, retained sizes and shortest strong
** paths of k (kept with its references); 0 or -ENOMEM. The paths take as
** few references of code (hsnap_code_ref) as can be, and are shortest
** among those. */
int hdom_build(struct hdom *d, const struct hsnap_keep *k);

/* Free d's memory. */
void hdom_free(struct hdom *d);

/* The references of a shortest strong path from a root to
** object index i, root first, into out[0..cap); their number (0 when
** unreached). A path longer than cap: its last cap references, *cut 1. */
size_t hdom_path(const struct hdom *d, const struct hsnap_keep *k, size_t i,
		 const struct hsnap_edge **out, size_t cap, int *cut);

#endif
