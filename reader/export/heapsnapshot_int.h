/*
** ljlog reader exports: the heap snapshot export's state, shared by
** heapsnapshot.c (the passes over the log, what they keep) and
** heapsnapshot_write.c (the synthetic nodes, the JSON).
** Any thread: every function works on the structs its caller passes.
*/
#ifndef LJLOG_READER_EXPORT_HEAPSNAPSHOT_INT_H
#define LJLOG_READER_EXPORT_HEAPSNAPSHOT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/heapsnapshot.h"
#include "proc/hsnap.h"
#include "util/intern.h"

/* DevTools' node and edge types (their index in meta). */
enum {
	NT_HIDDEN,
	NT_ARRAY,
	NT_STRING,
	NT_OBJECT,
	NT_CODE,
	NT_CLOSURE,
	NT_REGEXP,
	NT_NUMBER,
	NT_NATIVE,
	NT_SYNTHETIC
};
enum {
	ET_CONTEXT,
	ET_ELEMENT,
	ET_PROPERTY,
	ET_INTERNAL,
	ET_HIDDEN,
	ET_SHORTCUT,
	ET_WEAK
};

/* A kept object. */
struct obj {
	uint64_t id, size;
	uint32_t name; /* string index */
	uint8_t type;  /* NT_* */
	uint8_t unreachable;
	size_t e0, ne; /* its edges in hs.e */
};

/* A kept edge (dst a heap ID; for synthetic nodes' edges too). A weak
** table's reference to a string is strong (LuaJIT never clears strings
** from weak tables): weak edges keep their strong form for that. */
struct edge {
	uint8_t type;  /* ET_* */
	uint32_t name; /* string index, or the element's index */
	uint64_t dst;
	uint8_t stype;	/* ET_WEAK: the type when dst is a string */
	uint32_t sname; /* ... and the name */
};

/* A synthetic node (root kind, unreachable, parts). */
struct syn {
	uint32_t name;
	uint64_t size; /* parts: their bytes */
	uint64_t nid;  /* node ID */
	size_t e0, ne; /* edges in hs.se */
};

/* The export in progress: the snapshot kept, its strings, synthetic nodes. */
struct hs {
	struct hsnap h; /* the snapshot index (its own pass state) */
	size_t want;	/* the index kept */
	struct intern st;
	struct obj *o;
	size_t no, ocap;
	struct edge *e;
	size_t ne, ecap;
	/* Roots as (kind, name, target), grouped at the end. */
	struct root {
		uint32_t kind, name;
		uint64_t target;
	} * r;
	size_t nr, rcap;
	struct syn *sn;
	size_t nsn, sncap;
	struct edge *se;
	size_t nse, secap;
	/* Function names from MAPPING records, by the text a function
	** object has ("app.lua:12", "C 0xADDR", "builtin #N"): the last
	** name of each (NAME records), read in the first pass. */
	struct intern keys;
	struct intern fnames; /* the names (st holds those used) */
	struct {
		const char *s;
		size_t len;
	} * fname; /* by key index */
	size_t fncap;
	/* From the SUMMARY. */
	int done;
	uint64_t bytes, gc_total;
	uint32_t nparts;
	uint32_t part_name[DECODE_HEAP_PARTS];
	uint64_t part_bytes[DECODE_HEAP_PARTS];
	int err; /* -ENOMEM */
};

/* Make room for one more element of size sz in *v (n held, *cap room);
** 0 or -ENOMEM. */
int heapsnapshot_grow(void **v, size_t n, size_t *cap, size_t sz);

/* Append an edge of type and name (a string index or an element's index;
** < 0: -ENOMEM) to dst to *v; 0 or -ENOMEM. */
int heapsnapshot_push_edge(struct edge **v, size_t *n, size_t *cap,
			   unsigned type, int64_t name, uint64_t dst);

/* Write x's snapshot to f; 0, -ENOMEM or -EOVERFLOW (message in err). */
int heapsnapshot_write(struct hs *x, FILE *f, char *err, size_t errlen);

#endif
