/*
** ljlog reader processors: calls.
** Frames per coroutine (doc/format.txt "Frames (calls)"), calls, total and
** self time per function, and the call tree.
**
** Times are in ts units (counter >> ts_shift). A coroutine that yields is
** suspended: its open frames stop counting until it is resumed, while the
** time it runs counts for the frames of the coroutines that resumed it
** (they are waiting in coroutine.resume). Total time counts each moment
** once per VM, whatever the recursion.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_CALLS_H
#define LJLOG_READER_PROC_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "proc/fnid.h"
#include "util/hmap.h"

/* Call-tree nodes past this many: deeper calls charge their parent's node. */
#define CALLS_MAX_NODES (1u << 22)

/* Per function. */
struct calls_fn {
	uint64_t calls;
	uint64_t total; /* ts units */
	uint64_t self;	/* ts units */
};

/* One call-tree node: a call path. Node 0 is the root. */
struct calls_node {
	uint32_t parent; /* node index */
	uint32_t fn;	 /* function index (root: UINT32_MAX) */
	uint64_t calls;
	uint64_t self; /* ts units */
};

struct calls_vm;

/* A frame observer (the exports): told when a frame opens or closes on a
** coroutine's track, in time order per VM, frames nesting per track. A
** coroutine that yields closes its open frames (suspended) and opens them
** again when resumed (resumed), so that a track's frames are open only
** while its coroutine runs or waits on one it resumed. Track: the
** COROUTINE ID, or 0 for the coroutine running before the VM's first
** SWITCH (and the main coroutine after, when that one was it:
** calls_vm_co0_main). Times in ts units. */
struct calls_obs {
	void *ud;
	void (*open)(void *ud, uint32_t vm, uint32_t track, uint32_t fn,
		     uint64_t t, int resumed);
	void (*close)(void *ud, uint32_t vm, uint32_t track, uint32_t fn,
		      uint64_t t, int suspended);
};

struct calls {
	struct fnid *fnid; /* the functions (noexit, callback) */
	int tree;	   /* build the call tree */
	int leaf_rule; /* version 4: NOEXIT frames without CALLBACK end at the
			  next ENTER, EXIT or SWITCH */
	struct calls_fn *fns; /* by function index; fns past nfn are zero */
	size_t nfn;
	struct calls_node *nodes; /* the call tree (node 0 only without tree) */
	size_t nnode, nodecap;
	struct hmap nodemap;   /* (parent + 1) << 32 | fn -> node */
	struct calls_vm **vms; /* per VM state, in order of first event */
	size_t nvm;
	struct hmap vmmap;	  /* VM ID -> index in vms + 1 */
	struct hmap comap;	  /* COROUTINE ID -> its frame stack */
	struct calls_vm *last_vm; /* the VM of the last event */
	uint64_t unmatched_exits; /* EXIT with no frame at its slot (entered
				     before the profiler attached) */
	uint64_t nodes_capped;	  /* calls past CALLS_MAX_NODES */
	void (*warn)(void *ud, const char *msg);
	void *warn_ud;
	struct calls_obs obs; /* zero: none */
	/* A time window (ts units; calls_init: all time): calls counted when
	** their ENTER is in [win_lo, win_hi), time only inside it. */
	uint64_t win_lo, win_hi;
};

/* Start c over the functions of fnid, with the call tree when
** tree; warnings go to warn(ud) (NULL: none). 0 or -ENOMEM. */
int calls_init(struct calls *c, struct fnid *fnid, int tree,
	       void (*warn)(void *ud, const char *msg), void *ud);

/* Free everything. */
void calls_free(struct calls *c);

/* Fill sink so that a decoder's INTRO and events feed c. */
void calls_sink(struct calls *c, struct decode_sink *sink);

/* End of input: close the frames still open at each VM's last
** event. */
void calls_finish(struct calls *c);

/* The stats of function fn (zero when it never ran). */
const struct calls_fn *calls_fn_get(const struct calls *c, uint32_t fn);

/* First and last event time of VM id; 0 when it had no event. */
int calls_vm_span(const struct calls *c, uint32_t id, uint64_t *first,
		  uint64_t *last);

/* 1 when track 0 of VM id turned out to be its main
** coroutine (a SWITCH back to it named it). */
int calls_vm_co0_main(const struct calls *c, uint32_t id);

#endif
