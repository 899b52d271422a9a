/*
** ljlog heap snapshots: what snap.c (the snapshot: take, lifecycle, the
** address map, the VM's other allocations), snap_walk.c (the walk of the
** VM's objects and references, in two passes) and snap_rec.c (the HEAP
** records) share. VM thread only, as the snapshot runs there.
*/
#ifndef LJLOG_HEAP_SNAP_INT_H
#define LJLOG_HEAP_SNAP_INT_H

#include "heap/snap.h"

#include "lj_str.h"
#include "lj_buf.h"
#include "lj_ir.h"
#include "lj_tab.h"

/* A HEAP block is closed once its payload passes this many bytes. */
#define BLOCK_SOFT (1u << 20)

/* No bytecode position (lj_debug.c). */
#define NO_BCPOS (~(BCPos)0)

/* Bytes of a string's text in its OBJECT record. */
#define TEXT_STR 32

/* One object of the snapshot. */
struct obj {
	GCobj *o;
	uint64_t id;   /* heap ID */
	uint64_t size; /* bytes, as LuaJIT frees it */
	uint8_t reached;
	uint32_t rstart; /* its reference targets in walk.ri from here + 1 */
};

/* The name of a reference, by kind (FORMAT_HREF_*). */
struct rname {
	unsigned kind;
	int weak;
	uint64_t n;    /* index, slot, IR ref */
	const char *s; /* name text (NULL: "") */
	size_t len;    /* its length */
	GCobj *keyobj; /* FIELD_OBJ: the key; STACK: the frame's function */
};

struct walk {
	global_State *g;
	lua_State *L; /* the thread taking the snapshot */
	struct snap_vm *s;
	struct obj *v; /* objects */
	size_t n, cap;
	uint32_t *stk; /* work stack of indexes */
	size_t sp, scap;
	int sweeping; /* the GC is sweeping: dead objects are not read */
	int emit;     /* 0: mark pass, 1: write pass */
	int err;      /* first error */
	struct wbuf *out;
	size_t blk;	/* offset of the open block, (size_t)-1 none */
	uintptr_t addr; /* the block's last OBJECT's addr (0 at its start) */
	uint64_t pid;	/* and its heap ID (version 16: IDs as differences) */
	uint64_t cur;	/* its last reference's target (its own ID at first) */
	uint64_t aprev; /* its last array reference's index */
	unsigned nblocks;
	uint64_t vm_id;
	TValue **fr; /* frames of one thread, innermost first */
	size_t nfr, frcap;
	/* The mark pass keeps each walked object's reference targets (index +
	** 1, in the order refs() meets them) so that the write pass, which
	** meets the same ones in the same order, needs no address lookup. */
	uint32_t *ri;
	size_t rn, rcap;
	int rec;     /* mark pass: keeping them (0: stopped, out of memory) */
	size_t rcur; /* write pass: the next to replay + 1, 0 none */
};

/* A named allocation that is no object. */
struct part {
	const char *name;
	uint64_t bytes;
};

/* VM thread only. The address LuaJIT allocated o at (a VLA cdata starts
** before its header): what the allocator sees freed. */
static inline uintptr_t obj_base(GCobj *o)
{
#if LJ_HASFFI
	if (o->gch.gct == (uint8_t)~LJ_TCDATA && cdataisv(&o->cd))
		return (uintptr_t)memcdatav(&o->cd);
#endif
	return (uintptr_t)o;
}

/* VM thread only. 1 when o must not be read: the GC is sweeping and o is
** dead (what it points to may be freed already). */
static inline int is_dead(struct walk *w, GCobj *o)
{
	return w->sweeping && isdead(w->g, o);
}

/* Any context. The table r holds, or NULL (no member access through a
** null pointer, as tabref() would make). */
static inline GCtab *tab_of(GCRef r)
{
	GCobj *o = gcref(r);
	return o ? &o->tab : NULL;
}

/* -- The walk (snap_walk.c) ----------------------------------------------- */

/* VM thread only. Every object the VM holds: the GC's list (the main
** thread and userdata included), the finalizer list, the strings and the
** open upvalues. */
void snap_enumerate(struct walk *w);

/* VM thread only. Every root the GC marks from: reach it (mark pass) or
** write its ROOT record (write pass). */
void snap_roots(struct walk *w);

/* VM thread only. Every reference of o: reach it (mark pass) or write it
** (write pass). */
void snap_refs(struct walk *w, GCobj *o);

/* VM thread only. t's string-keyed field `name`, or NULL (a raw lookup:
** no metamethod, no cache written). */
cTValue *snap_field(GCtab *t, const char *name, size_t len);

/* -- The records (snap_rec.c) --------------------------------------------- */

/* VM thread only. A reference named by r to the object of heap ID id (key:
** the heap ID of a FIELD_OBJ's key or of a STACK slot's function). */
void snap_rec_ref(struct walk *w, const struct rname *r, uint64_t key,
		  uint64_t id);

/* VM thread only. The ROOT record of root name, the object of heap ID id. */
void snap_rec_root(struct walk *w, const char *name, uint64_t id);

/* VM thread only. Object i's OBJECT record with its references. */
void snap_rec_object(struct walk *w, size_t i);

/* VM thread only. The SUMMARY record (at clock pair c; bytes and unreached
** of the objects; the parts p[0..np); t0 when the snapshot began), and
** the last block closed. */
void snap_rec_summary(struct walk *w, const struct writer_clock *c,
		      uint64_t bytes, uint64_t unreached, const struct part *p,
		      size_t np, uint64_t t0);

#endif
