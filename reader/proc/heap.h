/*
** ljlog reader processors: the heap.
** Allocation sites (a function and a line), allocations and frees per
** function, site and VM, the live heap (each free charged to the site that
** allocated the block), and the GC timeline (phases, cycles, peak heap).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_HEAP_H
#define LJLOG_READER_PROC_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "proc/fnid.h"
#include "util/hmap.h"
#include "util/intern.h"

/* Allocations and frees of one function. */
struct heap_fn {
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
};

/* One allocation site: a function and a line. With sampled allocation
** (heap.sampled), counts and bytes are estimates: each sampled block
** stands for size / (1 - exp(-size / rate)) bytes and that factor of
** blocks. */
struct heap_site {
	uint32_t fn; /* function index */
	uint64_t line;
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	uint64_t records; /* ALLOC records behind alloc_count (sampled: fewer;
			  ** an estimate's error goes with 1/sqrt(records)) */
	/* Blocks it allocated that no FREE or REALLOC away has followed yet
	** (kept as events come: alloc - free). The pseudo-site of blocks
	** allocated before the profiler attached goes negative. */
	int64_t live_count, live_bytes;
};

/* Live bytes of one site at an interval's end. */
struct heap_iv_site {
	uint32_t site;
	int64_t live_bytes;
};

/* The heap at the end of one interval (heap_interval). */
struct heap_iv {
	uint64_t ts;	    /* ts units: the interval's end (the last: the
			       last event's) */
	int64_t live_bytes; /* every VM: attach heap + alloc - free */
	struct heap_iv_site *sites; /* live_bytes != 0, by site index */
	size_t nsite;
};

/* GC timeline, over all VMs. */
struct heap_gc {
	uint64_t events;
	uint64_t cycles;
	uint64_t phase[FORMAT_GC__MAX]; /* ts units */
	uint64_t peak_heap;
};

/* One VM. */
struct heap_vm {
	uint32_t id;
	uint64_t heap_attach; /* ATTACH event, else VM record */
	uint64_t heap_detach; /* DETACH event (has_detach) */
	int has_detach;
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	int64_t live;	  /* heap_attach + alloc_bytes - free_bytes (finish) */
	int64_t peak;	  /* highest live seen (finish) */
	uint64_t gc_peak; /* highest heap in GC events */
	/* Processor state. */
	int has_attach_event;
	int gc_phase; /* -1: none seen */
	uint64_t gc_since;
	int64_t net, peak_net; /* alloc - free so far, and its peak */
	uint64_t last_ts;      /* last event (has_ts) */
	int has_ts;
	struct hmap blocks;  /* live block address -> site + 1 */
	uint64_t alloc_rate; /* 0: exact; else sampled, one per rate bytes */
};

struct heap {
	struct fnid *fnid;   /* the functions (pseudo-functions are added) */
	struct heap_fn *fns; /* by function index; fns past nfn are zero */
	size_t nfn;
	struct heap_site *sites;
	size_t nsite, sitecap;
	struct intern sitekeys; /* (fn, line) -> site index */
	uint32_t last_fn; /* the last site looked up: fn, line, site + 1 */
	uint64_t last_line;
	uint32_t last_site;
	struct heap_vm **vms; /* in order of first record or event */
	size_t nvm;
	struct hmap vmmap; /* VM ID -> index in vms + 1 */
	struct heap_vm *last_vm;
	struct heap_gc gc;
	uint64_t sampled; /* the highest alloc_rate of a VM (0: all exact) */
	/* Live heap by interval (heap_interval): off when iv_ticks is 0. */
	uint64_t iv_ticks, iv_next;
	struct heap_iv *ivs;
	size_t niv, ivcap;
	int iv_error; /* -ENOMEM or -E2BIG: the intervals stopped */
};

/* At most this many intervals (heap_interval). */
#define HEAP_IV_MAX 100000

/* Start h over the functions of fnid. */
void heap_init(struct heap *h, struct fnid *fnid);

/* Free everything. */
void heap_free(struct heap *h);

/* Fill sink so that a decoder's VM records and events feed h. */
void heap_sink(struct heap *h, struct decode_sink *sink);

/* End of input: close the GC phases still open at each VM's
** last event, compute live and peak. */
void heap_finish(struct heap *h);

/* The allocations of function fn (zero when none). */
const struct heap_fn *heap_fn_get(const struct heap *h, uint32_t fn);

/* VM id, or NULL when h saw nothing of it. */
const struct heap_vm *heap_vm_get(const struct heap *h, uint32_t id);

/* Snapshot the live heap by site every ticks ts units from
** origin on (before the first event): an interval ends at each multiple
** that an event's time reaches, and heap_finish adds the last (at the
** last event). Events of several VMs are taken in file order. */
void heap_interval(struct heap *h, uint64_t origin, uint64_t ticks);

/* Sampled estimate of one allocation of size bytes at rate
** (Go's runtime: size / (1 - exp(-size / rate))): *count the blocks and
** *bytes the bytes it stands for, rounded; 1 and size when rate is 0. */
void heap_weight(uint64_t size, uint64_t rate, uint64_t *count,
		 uint64_t *bytes);

/* Indices of the sites with live blocks or bytes (not 0),
** sorted by live bytes (largest first), then count, then name and line;
** *n gets their number. Caller frees; NULL when out of memory. */
uint32_t *heap_sorted_live(const struct heap *h, size_t *n);

/* Site s as reports show it: "NAME line N" for a Lua
** function ("fib (app.lua:4) line 5"), else the function's name. */
void heap_site_text(const struct heap *h, uint32_t s, char *buf, size_t len);

/* Site indices sorted by alloc bytes, then count, then function
** name, then line; caller frees. NULL when out of memory. */
uint32_t *heap_sorted_sites(const struct heap *h);

#endif
