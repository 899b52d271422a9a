/*
** ljlog heap snapshots: the HEAP records of a snapshot (doc/format.txt):
** OBJECT with its references, ROOT, SUMMARY, in blocks of about BLOCK_SOFT
** bytes, each ID and address as a difference from the one before.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/snap_int.h"
#include "stat/clock.h"

/* -- Output ------------------------------------------------------------------ */

/* VM thread only. Room for n bytes in the open block, or NULL (err set). */
static uint8_t *room(struct walk *w, size_t n)
{
	uint8_t *p = w->err ? NULL : wbuf_room(w->out, n);
	if (!p)
		w->err = -ENOMEM;
	return p;
}

/* VM thread only. One byte. */
static void put_u8(struct walk *w, unsigned v)
{
	uint8_t *p = room(w, 1);
	if (p) {
		*p = (uint8_t)v;
		w->out->len++;
	}
}

/* VM thread only. An unsigned LEB128. */
static void put_uleb(struct walk *w, uint64_t v)
{
	uint8_t *p = room(w, BLOCKS_ULEB_MAX);
	if (p)
		w->out->len = (size_t)(blocks_uleb_put(p, v) - w->out->p);
}

/* VM thread only. A signed LEB128. */
static void put_sleb(struct walk *w, int64_t v)
{
	uint8_t *p = room(w, BLOCKS_ULEB_MAX);
	if (p)
		w->out->len = (size_t)(blocks_sleb_put(p, v) - w->out->p);
}

/* VM thread only. A string: its length, then its bytes. */
static void put_str(struct walk *w, const char *s, size_t len)
{
	uint8_t *p = room(w, BLOCKS_ULEB_MAX + len);
	if (p)
		w->out->len = (size_t)(blocks_str_put(p, s, len) - w->out->p);
}

/* VM thread only. Open a HEAP block when none is open. */
static void block_open(struct walk *w)
{
	if (w->blk != (size_t)-1 || w->err)
		return;
	w->blk = writer_block_begin(w->out);
	if (w->blk == (size_t)-1) {
		w->err = -ENOMEM;
		return;
	}
	put_uleb(w, w->vm_id);
	put_uleb(w, w->s->seq);
	w->addr = 0;
	w->pid = 0;
}

/* VM thread only. Close the open block (force), or when it is large. */
static void block_close(struct walk *w, int force)
{
	if (w->blk == (size_t)-1 || w->err)
		return;
	if (!force && w->out->len - w->blk < BLOCK_SOFT)
		return;
	writer_block_end(w->out, w->blk, FORMAT_KIND_HEAP);
	w->blk = (size_t)-1;
	w->nblocks++;
}

/* -- Records ------------------------------------------------------------------ */

/* VM thread only. See snap_int.h. */
void snap_rec_ref(struct walk *w, const struct rname *r, uint64_t key,
		  uint64_t id)
{
	put_u8(w, r->kind | (r->weak ? FORMAT_HREF_WEAK : 0));
	switch (r->kind) {
	case FORMAT_HREF_ARRAY: /* from the one before (in order) */
		put_sleb(w, (int64_t)(r->n - w->aprev));
		w->aprev = r->n;
		break;
	case FORMAT_HREF_CONST:
	case FORMAT_HREF_TRACE_CONST: put_uleb(w, r->n); break;
	case FORMAT_HREF_FIELD_STR:
	case FORMAT_HREF_FIELD_NUM:
	case FORMAT_HREF_FIELD_OTHER:
	case FORMAT_HREF_TRACE: put_str(w, r->s ? r->s : "", r->len); break;
	case FORMAT_HREF_FIELD_OBJ: put_uleb(w, key); break;
	case FORMAT_HREF_UPVALUE:
		put_uleb(w, r->n);
		put_str(w, r->s ? r->s : "", r->len);
		break;
	case FORMAT_HREF_STACK:
		put_uleb(w, r->n);
		put_uleb(w, key);
		put_str(w, r->s ? r->s : "", r->len);
		break;
	default: break;
	}
	/* From the reference before (the object's own ID at first): a
	** table's array slots hold objects made one after the other. */
	put_sleb(w, (int64_t)(id - w->cur));
	w->cur = id;
}

/* VM thread only. See snap_int.h. */
void snap_rec_root(struct walk *w, const char *name, uint64_t id)
{
	block_open(w);
	put_u8(w, FORMAT_HEAP_ROOT);
	put_str(w, name, strlen(name));
	put_uleb(w, id);
}

/* -- Objects' text ---------------------------------------------------------------- */

/* VM thread only. "name" of metatable mt: its __name field, else "". */
static size_t mt_name(GCtab *mt, char *buf, size_t cap)
{
	cTValue *tv = snap_field(mt, "__name", 6);
	if (!tv || !tvisstr(tv))
		return 0;
	return (size_t)snprintf(buf, cap, " mt %.*s", (int)strV(tv)->len,
				strVdata(tv));
}

/* VM thread only. The short text of o's OBJECT record, into buf. */
static size_t obj_text(struct walk *w, GCobj *o, char *buf, size_t cap)
{
	int n = 0;
	switch (o->gch.gct) {
	case ~LJ_TSTR: {
		size_t len = o->str.len < TEXT_STR ? o->str.len : TEXT_STR;
		memcpy(buf, strdata(&o->str), len);
		return len;
	}
	case ~LJ_TUPVAL:
		n = snprintf(buf, cap, "%s", o->uv.closed ? "closed" : "open");
		break;
	case ~LJ_TTHREAD:
		n = snprintf(buf, cap, "%s",
			     &o->th == mainthread(w->g) ? "main thread"
							: "coroutine");
		break;
	case ~LJ_TPROTO: {
		const char *c = strdata(proto_chunkname(&o->pt));
		n = snprintf(buf, cap, "%.200s:%u",
			     c + (*c == '@' || *c == '='),
			     (unsigned)o->pt.firstline);
		break;
	}
	case ~LJ_TFUNC:
		if (isluafunc(&o->fn)) {
			GCproto *pt = funcproto(&o->fn);
			const char *c = strdata(proto_chunkname(pt));
			n = snprintf(buf, cap, "%.200s:%u",
				     c + (*c == '@' || *c == '='),
				     (unsigned)pt->firstline);
		} else if (o->fn.c.ffid > FF_C) {
			n = snprintf(buf, cap, "builtin #%u",
				     (unsigned)o->fn.c.ffid);
		} else {
			n = snprintf(buf, cap, "C %p",
				     (void *)(uintptr_t)o->fn.c.f);
		}
		break;
	case ~LJ_TTRACE:
		n = snprintf(buf, cap, "trace %u",
			     (unsigned)((GCtrace *)o)->traceno);
		break;
#if LJ_HASFFI
	case ~LJ_TCDATA:
		n = snprintf(buf, cap, "ctype %u", (unsigned)o->cd.ctypeid);
		break;
#endif
	case ~LJ_TTAB: /* its sizes are numbers before the text */
		if (!is_dead(w, o))
			n = (int)mt_name(tab_of(o->tab.metatable), buf, cap);
		break;
	case ~LJ_TUDATA:
		n = snprintf(buf, cap, "%u bytes", (unsigned)o->ud.len);
		if (!is_dead(w, o) && n > 0 && (size_t)n < cap)
			n += (int)mt_name(tab_of(o->ud.metatable), buf + n,
					  cap - (size_t)n);
		break;
	default: break;
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* VM thread only. See snap_int.h. */
void snap_rec_object(struct walk *w, size_t i)
{
	char text[256];
	struct obj *ob = &w->v[i];
	block_open(w);
	put_u8(w, FORMAT_HEAP_OBJECT);
	put_sleb(w, (int64_t)(ob->id - w->pid));
	w->pid = w->cur = ob->id;
	w->aprev = 0;
	uintptr_t a = obj_base(ob->o);
	put_sleb(w, (int64_t)(a - w->addr));
	w->addr = a;
	put_u8(w, ((unsigned)(ob->o->gch.gct - (uint8_t)~LJ_TSTR) + 1) |
		      (ob->reached ? 0 : FORMAT_HTYPE_UNREACHABLE));
	put_uleb(w, ob->size);
	if (ob->o->gch.gct == (uint8_t)~LJ_TTAB) {
		GCtab *t = &ob->o->tab;
		put_uleb(w, t->asize);
		put_uleb(w, t->hmask ? (uint64_t)t->hmask + 1 : 0);
	}
	size_t tl = obj_text(w, ob->o, text, sizeof text);
	put_str(w, text, tl);
	w->rcur = ob->rstart;
	snap_refs(w, ob->o);
	w->rcur = 0;
	put_u8(w, 0);
	block_close(w, 0);
}

/* VM thread only. See snap_int.h. */
void snap_rec_summary(struct walk *w, const struct writer_clock *c,
		      uint64_t bytes, uint64_t unreached, const struct part *p,
		      size_t np, uint64_t t0)
{
	block_open(w);
	put_u8(w, FORMAT_HEAP_SUMMARY);
	put_uleb(w, c->counter);
	put_uleb(w, c->mono_ns);
	put_uleb(w, c->real_ns);
	put_u8(w, w->g->gc.state);
	put_uleb(w, w->n);
	put_uleb(w, bytes);
	put_uleb(w, unreached);
	put_uleb(w, w->g->gc.total);
	put_uleb(w, np);
	for (size_t i = 0; i < np; i++) {
		put_str(w, p[i].name, strlen(p[i].name));
		put_uleb(w, p[i].bytes);
	}
	put_uleb(w, clock_mono_ns() - t0);
	block_close(w, 1);
}
