/*
** ljlog reader exports: speedscope's file format, what its two files share
** (speedscope.c: the pass over the log, the evented and sampled profiles
** per coroutine and VM, the file; speedscope_prof.c: the profiles of the
** call tree, the allocation sites and the zones, and the shared frames).
** Any thread: every function works on the structs its caller passes.
*/
#ifndef LJLOG_READER_EXPORT_SPEEDSCOPE_INT_H
#define LJLOG_READER_EXPORT_SPEEDSCOPE_INT_H

#include <stdint.h>
#include <stdio.h>

#include "export/export.h"
#include "proc/samples.h"
#include "util/hmap.h"
#include "util/intern.h"

/* Records a profile keeps in memory before spilling them. */
#define CHUNK 1024u

/* One event or sample, as spilled. */
struct rec {
	uint64_t t; /* ts units */
	uint32_t a; /* evented: function index; sampled: sample-tree node */
	uint32_t b; /* evented: 0 open, 1 close; sampled: missed intervals */
};

/* One profile being collected. */
struct track {
	uint32_t vm;
	uint32_t co; /* calls_obs track; sampled: 0 */
	int sampled;
	struct rec *buf; /* up to CHUNK, then spilled */
	uint32_t n;
	uint64_t *chunks; /* offsets of its full chunks in the spill file */
	size_t nchunk, chunkcap;
	uint64_t count; /* records */
};

/* Frame kinds (the key of a shared frame: kind, a, line). */
enum { FR_FN, FR_TRACE, FR_STATE, FR_SITE, FR_ZONE, FR_MARK, FR_VM, FR_DEEP };

/* Bytes an evented O or C event takes at most, about; bytes a weight
** does. */
#define EV_BYTES     48u
#define WEIGHT_BYTES 24u

struct ss {
	struct export_pass x;
	FILE *spill;
	struct track **tracks;
	size_t ntrack;
	struct hmap trackmap;	  /* key(vm, co, sampled) -> index + 1 */
	struct track *last;	  /* the track of the last record */
	struct intern frames;	  /* (kind, a, line) -> frame index */
	int err;		  /* first error (sticky) */
	struct samples_frame *st; /* one sample's frames */
	uint64_t nev;		  /* evented records so far */
	int no_evented;		  /* past the budget: evented left out */
	uint32_t cut_depth;	  /* call paths cut at this depth, 0 none */
};

/* Index of the shared frame (kind, a, line); -ENOMEM. */
int64_t speedscope_frame(struct ss *s, unsigned kind, uint32_t a,
			 uint64_t line);

/* Whether the call tree has self time to show. */
int speedscope_has_calltree(const struct calls *c);

/* The profiles "call time" (calls 0) or "calls" (calls 1) by call path;
** 0 or -ENOMEM. */
int speedscope_calltree(struct ss *s, struct json *j, int calls);

/* The evented profile "zones (VM n)" of each VM with zones or marks. */
int speedscope_zones(struct ss *s, struct json *j);

/* The sampled profile of allocated bytes per site. */
int speedscope_alloc(struct ss *s, struct json *j);

/* The shared frames. */
void speedscope_frames(struct ss *s, struct json *j);

#endif
