/*
** ljlog reader processors: zones and marks (format version 9).
** A VM's ZONE_PUSH and ZONE_POP events make a stack of zones; the events
** in between happen inside them. Per zone name: entries, inclusive time
** on the VM's clock, allocations (ALLOC and REALLOC's new block, charged
** as they are decoded, in order with the zone events of their VM), and
** samples (matched by time at zones_finish: SAMPLES blocks come apart
** from EVENTS blocks). A name nested in itself counts once.
** For the exports it also keeps every sample (VM, time, leaf node, then
** its innermost zone) and the allocations by heap site and innermost zone;
** zones_open_now answers during decoding (profile_only, --zone).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_ZONES_H
#define LJLOG_READER_PROC_ZONES_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "proc/heap.h"
#include "proc/samples.h"
#include "util/hmap.h"
#include "util/intern.h"

/* One zone name's totals (inclusive: nested zones count in their outer
** zones too). */
struct zones_name {
	uint64_t entries;
	uint64_t time; /* ts units */
	uint64_t samples;
	uint64_t alloc_count, alloc_bytes; /* estimates under alloc=RATE */
};

/* One entry into a zone: [t0, t1) on its VM's clock, ts units. */
struct zones_span {
	uint32_t vm;
	uint32_t name;	 /* index in names */
	uint32_t depth;	 /* 0: outermost */
	uint32_t parent; /* the span it is nested in, UINT32_MAX none */
	int open;	 /* not popped: t1 is the VM's last event */
	uint64_t t0, t1;
};

/* A mark. */
struct zones_mark {
	uint32_t vm;
	uint32_t text; /* index in names' interner */
	uint64_t ts;
};

/* One sample: its VM, time, leaf node in the sample tree (when leaf_src
** was set) and, after zones_finish, the name (string index) of the
** innermost zone open at its time, UINT32_MAX outside zones. */
struct zones_smp {
	uint32_t vm;
	uint32_t node;
	uint32_t zone;
	uint64_t ts;
};

/* Allocations of one site (heap site index) made with zone (string index)
** the innermost open one (when site_src was set). */
struct zones_site {
	uint32_t site, zone;
	uint64_t alloc_count, alloc_bytes; /* weighed as heap's */
};

struct zones_vm; /* per-VM stack and spans (zones.c) */

struct zones {
	struct intern strs;	  /* zone names and mark texts */
	struct zones_name *names; /* by string index (marks' rows stay 0) */
	size_t cap_names;
	struct hmap byid;	  /* STRING ID -> string index + 1 */
	struct zones_span *spans; /* in order of their PUSH, per VM */
	size_t nspan, cap_span;
	struct zones_mark *marks; /* in log order */
	size_t nmark, cap_mark;
	struct zones_vm *vms;
	size_t nvm, cap_vm;
	struct zones_smp *smp; /* every sample, in log order */
	size_t nsmp, cap_smp;
	struct zones_site *sites; /* allocations by site and innermost zone */
	size_t nsite, cap_site;
	struct hmap sitemap; /* (site + 1) << 32 | zone -> index in sites + 1 */
	/* Set by the owner before decoding (NULL: not recorded): the samples
	** processor fed before this one (each sample's leaf node), the heap
	** processor fed before this one (each allocation's site). */
	const struct samples *leaf_src;
	const struct heap *site_src;
	uint64_t samples_in; /* samples in some zone */
	int finished;
};

/* An empty processor. */
void zones_init(struct zones *z);

/* Free its memory. */
void zones_free(struct zones *z);

/* Fill sink so that a decoder feeds z. */
void zones_sink(struct zones *z, struct decode_sink *sink);

/* End of input: close the zones still open at their VM's last
** event, count the samples in zones. 0 or -ENOMEM. */
int zones_finish(struct zones *z);

/* The name of string index i. */
const char *zones_str(const struct zones *z, uint32_t i);

/* Whether string index i names a zone (was pushed). */
int zones_is_zone(const struct zones *z, uint32_t i);

/* After zones_finish. The innermost span of VM vm open at ts
** (t0 <= ts < t1), or NULL when none; its parent chain holds the outer
** ones. */
const struct zones_span *zones_at(const struct zones *z, uint32_t vm,
				  uint64_t ts);

/* After zones_finish. Whether VM vm is inside a zone named
** name (string index) at ts. */
int zones_in(const struct zones *z, uint32_t vm, uint64_t ts, uint32_t name);

/* While decoding. Whether VM vm is inside a zone with this
** name now, after the events decoded so far. */
int zones_open_now(const struct zones *z, uint32_t vm, const char *name);

/* The string index of name, or -1 when no zone has it. */
int64_t zones_find(const struct zones *z, const char *name);

#endif
