/*
** ljlog reader processors: heap snapshots (HEAP blocks).
** Per snapshot: its totals and its objects and bytes by type; for the
** snapshots asked for, its objects (ID, type, size, text, allocation site)
** and references. An object's site is the site of the live block at its
** address in the heap processor (hsnap_sites) when its HEAP block is read:
** the VM's events before the snapshot come before it in the log.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_HSNAP_H
#define LJLOG_READER_PROC_HSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/format.h"
#include "decode/decode.h"
#include "proc/heap.h"
#include "util/hmap.h"

/* One snapshot's totals. */
struct hsnap_one {
	uint32_t vm;
	uint64_t seq;	  /* the VM's snapshot number */
	uint64_t time_ns; /* since the log's INTRO clock */
	uint64_t objects, bytes, unreachable, gc_total, other, pause_ns;
	uint64_t unreachable_bytes; /* of its UNREACHABLE objects */
	unsigned gcstate;
	int complete; /* its SUMMARY was read */
	int addrs;    /* its objects carry addresses (version 10) */
	/* Its VM in the heap processor then (hsnap_sites): allocation events
	** before the snapshot, and the sampling rate (0: exact). */
	uint64_t allocs, alloc_rate;
	uint64_t n[FORMAT_HTYPE__MAX], b[FORMAT_HTYPE__MAX]; /* by type */
};

/* A kept object. */
struct hsnap_obj {
	uint64_t id;
	unsigned type, flags;
	uint64_t size;
	char *text; /* NUL-terminated copy (may hold NULs before) */
	size_t textlen;
	uint64_t addr; /* its block's address (version 10), else 0 */
	uint32_t site; /* allocation site: heap site index + 1, 0 none */
};

/* A kept reference (or a root: src 0, kind 0, name the root's name). */
struct hsnap_edge {
	uint64_t src, dst;
	char *name; /* decode_href's name, NUL-terminated ("" none) */
	size_t namelen;
	unsigned kind; /* FORMAT_HREF_*, 0 for a root */
	int weak;
	uint64_t n, key; /* as in decode_href */
};

/* The objects of a kept snapshot. */
struct hsnap_keep {
	size_t index; /* snapshot index (from 1), 0 none */
	int edges;    /* keep its references too */
	struct hsnap_obj *v;
	size_t n, cap;
	struct hmap byid; /* ID -> index in v + 1 */
	struct hsnap_edge *e;
	size_t ne, ecap;
};

struct hsnap {
	struct hsnap_one *s; /* snapshots in log order */
	size_t n, cap;
	uint64_t intro_ns;
	uint64_t version;	 /* the log's format version */
	const struct heap *heap; /* sites of live blocks (NULL: none) */
	struct hsnap_keep keep[2];
	char **ffname; /* fast function names by ffid (FFUNC records) */
	size_t nff;
	int err; /* -ENOMEM */
};

#define HSNAP_FFID_MAX 4096 /* fast function IDs named, at most */

/* Ready h; keep the objects of snapshots k1, k2 (indexes from
** 1, 0 none), and their references: k1's when edges & 1, k2's when
** edges & 2. */
void hsnap_init(struct hsnap *h, size_t k1, size_t k2, int edges);

/* Join the kept objects with the live blocks of heap (fed by
** the same decoder, before h in its fan-out) to give them sites. */
void hsnap_sites(struct hsnap *h, const struct heap *heap);

/* Why objects of snapshot s have no site, as a phrase: the
** log's objects carry no addresses (format 8, 9), the VM recorded no
** allocations (no alloc option), not sampled (alloc=RATE), allocated
** before ljlog attached. */
const char *hsnap_nosite_why(const struct hsnap *h, const struct hsnap_one *s);

/* End of input: the kept functions whose text is "builtin #N"
** get the name the log's FFUNC record of N gives ("string.gmatch
** (iterator)"), as reports name them. */
void hsnap_finish(struct hsnap *h);

/* Free h's memory. */
void hsnap_free(struct hsnap *h);

/* Plug h into a decoder sink (intro, FFUNC records and heap
** callbacks). */
void hsnap_sink(struct hsnap *h, struct decode_sink *s);

struct fanout;

/* Plug h into s; when hp is not NULL, through fan, after
** hp's functions and hp itself (h reads their state: hsnap_sites), so
** that the kept objects get sites. fan lives as long as the decoder. */
void hsnap_sink_sites(struct hsnap *h, struct heap *hp, struct fanout *fan,
		      struct decode_sink *s);

/* A reference's label, as a path step: "[3]", ".name",
** "[table #12]", "(metatable)", "(upvalue x)", "(stack 5 x)". */
void hsnap_label(const struct decode_href *r, char *buf, size_t cap);

/* A kept reference's label, as hsnap_label (a root: its name). */
void hsnap_edge_label(const struct hsnap_edge *e, char *buf, size_t cap);

/* The kept object with this ID in k, or NULL. */
const struct hsnap_obj *hsnap_find(const struct hsnap_keep *k, uint64_t id);

/* 1 for a reference of code, not of the program's data: a trace's or a
** prototype's constant, a trace. A path a user reads takes one only where
** no path without one reaches the object. */
static inline int hsnap_code_ref(unsigned kind)
{
	return kind == FORMAT_HREF_CONST || kind == FORMAT_HREF_TRACE_CONST ||
	       kind == FORMAT_HREF_TRACE;
}

/* A shortest path from a root to id in k (kept with edges), with as few
** references of code (hsnap_code_ref) as can be: the edges, root first,
** into *out (malloc'ed, caller frees); the number of edges, 0 when no root
** reaches it, -ENOMEM. */
long hsnap_path(const struct hsnap_keep *k, uint64_t id,
		const struct hsnap_edge ***out);

#endif
