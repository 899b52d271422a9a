/*
** ljlog reader library: HEAP blocks (heap snapshots, version 8; object
** addresses, version 10; IDs, targets and indexes as differences and a
** table's sizes as numbers, version 16).
** Each record goes to the sink as it is read; strings point into the
** payload.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a str field pointing into the payload. */
static int get_raw(struct decode_cur *c, const char *name, const char **s,
		   size_t *len)
{
	if (blocks_str_get(&c->p, c->end, s, len) < 0) {
		c->field = name;
		return -EBADMSG;
	}
	return 0;
}

/* Read a u8 field. */
static int get_u8(struct decode_cur *c, const char *name, unsigned *v)
{
	if (c->p >= c->end) {
		c->field = name;
		return -EBADMSG;
	}
	*v = *c->p++;
	return 0;
}

/* A sleb field as a difference from base (modulo 2^64). */
static int get_rel(struct decode_cur *c, const char *name, uint64_t base,
		   uint64_t *v)
{
	int64_t d;
	if (blocks_sleb_get(&c->p, c->end, &d) < 0) {
		c->field = name;
		return -EBADMSG;
	}
	*v = base + (uint64_t)d;
	return 0;
}

/* One reference's fields after its kind byte into r (version
** 16: target and array index as differences from *tprev and *aprev, the
** OBJECT's last ones). */
static int get_ref(struct decode_cur *c, struct decode_href *r, uint64_t *tprev,
		   uint64_t *aprev, int rel)
{
	int rc = 0;
	r->n = r->key = 0;
	r->name = "";
	r->namelen = 0;
	switch (r->kind) {
	case FORMAT_HREF_ARRAY:
		if (!rel) {
			rc = dec_get_u(c, "ref index", &r->n);
		} else if ((rc = get_rel(c, "ref index", *aprev, &r->n)) == 0)
			*aprev = r->n;
		break;
	case FORMAT_HREF_CONST:
	case FORMAT_HREF_TRACE_CONST:
		rc = dec_get_u(c, "ref index", &r->n);
		break;
	case FORMAT_HREF_FIELD_STR:
	case FORMAT_HREF_FIELD_NUM:
	case FORMAT_HREF_FIELD_OTHER:
	case FORMAT_HREF_TRACE:
		rc = get_raw(c, "ref name", &r->name, &r->namelen);
		break;
	case FORMAT_HREF_FIELD_OBJ:
		rc = dec_get_u(c, "ref key", &r->key);
		break;
	case FORMAT_HREF_UPVALUE:
		if ((rc = dec_get_u(c, "ref index", &r->n)) == 0)
			rc = get_raw(c, "ref name", &r->name, &r->namelen);
		break;
	case FORMAT_HREF_STACK:
		if ((rc = dec_get_u(c, "ref slot", &r->n)) == 0 &&
		    (rc = dec_get_u(c, "ref function", &r->key)) == 0)
			rc = get_raw(c, "ref name", &r->name, &r->namelen);
		break;
	default: break;
	}
	if (rc == 0 && !rel)
		rc = dec_get_u(c, "ref target", &r->target);
	else if (rc == 0 &&
		 (rc = get_rel(c, "ref target", *tprev, &r->target)) == 0)
		*tprev = r->target;
	return rc;
}

/* Version 16: a table's text, "array N hash M" and then what
** the record's text holds (" mt NAME"), into d->htext. */
static int table_text(struct decode *d, struct decode_cur *c,
		      struct decode_hobj *o)
{
	uint64_t as, hs;
	const char *t;
	size_t tl;
	int rc;
	if ((rc = dec_get_u(c, "asize", &as)) < 0 ||
	    (rc = dec_get_u(c, "hsize", &hs)) < 0 ||
	    (rc = get_raw(c, "text", &t, &tl)) < 0)
		return rc;
	int n = snprintf(d->htext, sizeof d->htext, "array %llu hash %llu%.*s",
			 (unsigned long long)as, (unsigned long long)hs,
			 (int)(tl < 256 ? tl : 256), t);
	o->text = d->htext;
	o->textlen = n < 0			   ? 0
		     : (size_t)n < sizeof d->htext ? (size_t)n
						   : sizeof d->htext - 1;
	return 0;
}

/* The references of OBJECT o up to the 0 kind byte, into d->hrefs
** (grown as needed); tprev the object's ID (version 16: the first target
** is a difference from it). */
static int obj_refs(struct decode *d, const struct reader_block *b,
		    struct decode_cur *c, struct decode_hobj *o, uint64_t tprev)
{
	uint64_t aprev = 0;
	unsigned k;
	int rc, rel = d->intro.version >= 16;
	o->nref = 0;
	for (;;) {
		if ((rc = get_u8(c, "ref kind", &k)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (k == 0)
			break;
		if (o->nref == d->hrefcap) {
			size_t nc = d->hrefcap ? d->hrefcap * 2 : 256;
			struct decode_href *nr =
			    realloc(d->hrefs, nc * sizeof *nr);
			if (!nr)
				return dec_corrupt(d, b, -ENOMEM,
						   "out of memory");
			d->hrefs = nr;
			d->hrefcap = nc;
		}
		struct decode_href *r = &d->hrefs[o->nref];
		r->kind = k & ~FORMAT_HREF_WEAK;
		r->weak = (k & FORMAT_HREF_WEAK) != 0;
		if (r->kind >= FORMAT_HREF__MAX)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "heap object %llu: unknown reference kind %u at "
			    "payload offset %zu",
			    (unsigned long long)o->id, r->kind,
			    (size_t)(c->p - c->start - 1));
		if ((rc = get_ref(c, r, &tprev, &aprev, rel)) < 0)
			return dec_bad_field(d, b, c, rc);
		o->nref++;
	}
	return 0;
}

/* An OBJECT record; *addr and *pid the block's last OBJECT's
** address (version 10) and ID (version 16): each is a difference from it. */
static int dec_obj(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, struct decode_hobj *o, uint64_t *addr,
		   uint64_t *pid)
{
	int64_t da = 0;
	uint64_t tprev;
	int rc, rel = d->intro.version >= 16;
	if ((rc = rel ? get_rel(c, "id", *pid, &o->id)
		      : dec_get_u(c, "id", &o->id)) < 0)
		return dec_bad_field(d, b, c, rc);
	*pid = tprev = o->id;
	if (d->intro.version >= 10) {
		if (blocks_sleb_get(&c->p, c->end, &da) < 0) {
			c->field = "addr";
			return dec_bad_field(d, b, c, -EBADMSG);
		}
		*addr += (uint64_t)da;
		o->addr = *addr;
		o->has_addr = 1;
	}
	if ((rc = get_u8(c, "type", &o->type)) < 0 ||
	    (rc = dec_get_u(c, "size", &o->size)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (rel) { /* the flag in the type byte */
		o->flags = o->type & FORMAT_HTYPE_UNREACHABLE
			       ? FORMAT_HOBJ_UNREACHABLE
			       : 0;
		o->type &= ~FORMAT_HTYPE_UNREACHABLE;
	} else if ((rc = get_u8(c, "flags", &o->flags)) < 0) {
		return dec_bad_field(d, b, c, rc);
	}
	if ((rc = rel && o->type == FORMAT_HTYPE_TABLE
		      ? table_text(d, c, o)
		      : get_raw(c, "text", &o->text, &o->textlen)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (o->id == 0 || o->type == 0 || o->type >= FORMAT_HTYPE__MAX)
		return dec_corrupt(
		    d, b, -EBADMSG, "heap object at payload offset %zu: %s",
		    (size_t)(c->p - c->start), o->id ? "unknown type" : "ID 0");
	if ((rc = obj_refs(d, b, c, o, tprev)) != 0)
		return rc;
	o->refs = d->hrefs;
	o->block = b;
	if (d->sink.heap_obj && (rc = d->sink.heap_obj(d->sink.ud, o)))
		return rc;
	return 0;
}

/* A SUMMARY record. */
static int dec_summary(struct decode *d, const struct reader_block *b,
		       struct decode_cur *c, struct decode_hsummary *s)
{
	uint64_t np;
	int rc;
	if ((rc = dec_get_clock(c, &s->clock)) < 0 ||
	    (rc = get_u8(c, "gc state", &s->gcstate)) < 0 ||
	    (rc = dec_get_u(c, "objects", &s->objects)) < 0 ||
	    (rc = dec_get_u(c, "bytes", &s->bytes)) < 0 ||
	    (rc = dec_get_u(c, "unreachable", &s->unreachable)) < 0 ||
	    (rc = dec_get_u(c, "gc_total", &s->gc_total)) < 0 ||
	    (rc = dec_get_u(c, "nparts", &np)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (np > DECODE_HEAP_PARTS)
		return dec_corrupt(d, b, -EBADMSG,
				   "heap summary with %llu parts (at most %u)",
				   (unsigned long long)np, DECODE_HEAP_PARTS);
	s->nparts = (uint32_t)np;
	s->other = 0;
	for (uint32_t i = 0; i < s->nparts; i++) {
		if ((rc = get_raw(c, "part name", &s->part[i].name,
				  &s->part[i].namelen)) < 0 ||
		    (rc = dec_get_u(c, "part bytes", &s->part[i].bytes)) < 0)
			return dec_bad_field(d, b, c, rc);
		s->other += s->part[i].bytes;
	}
	if ((rc = dec_get_u(c, "pause_ns", &s->pause_ns)) < 0)
		return dec_bad_field(d, b, c, rc);
	s->block = b;
	if (d->sink.heap_summary && (rc = d->sink.heap_summary(d->sink.ud, s)))
		return rc;
	return 0;
}

/* Decode a HEAP payload. */
int dec_heap(struct decode *d, const struct reader_block *b,
	     struct decode_cur *c)
{
	uint64_t vm, seq, addr = 0, pid = 0;
	unsigned k;
	int rc;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0 ||
	    (rc = dec_get_u(c, "snapshot", &seq)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *vo = vm < DECODE_MAX_ID ? dec_lookup(d, vm) : NULL;
	if (!vo || vo->kind != FORMAT_REC_VM)
		return dec_corrupt(d, b, -EBADMSG,
				   "heap snapshot of VM ID %llu, which is %s",
				   (unsigned long long)vm,
				   vo ? "not a VM" : "not defined before use");
	if (seq == 0)
		return dec_corrupt(d, b, -EBADMSG, "heap snapshot number 0");
	while (c->p < c->end) {
		if ((rc = get_u8(c, "record kind", &k)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (k == FORMAT_HEAP_OBJECT) {
			struct decode_hobj o = {.vm = (uint32_t)vm + d->idbase,
						.snapshot = seq};
			if ((rc = dec_obj(d, b, c, &o, &addr, &pid)) != 0)
				return rc;
		} else if (k == FORMAT_HEAP_ROOT) {
			struct decode_hroot r = {.vm = (uint32_t)vm + d->idbase,
						 .snapshot = seq};
			if ((rc = get_raw(c, "root name", &r.name,
					  &r.namelen)) < 0 ||
			    (rc = dec_get_u(c, "root target", &r.target)) < 0)
				return dec_bad_field(d, b, c, rc);
			if (d->sink.heap_root &&
			    (rc = d->sink.heap_root(d->sink.ud, &r)))
				return rc;
		} else if (k == FORMAT_HEAP_SUMMARY) {
			struct decode_hsummary s = {
			    .vm = (uint32_t)vm + d->idbase, .snapshot = seq};
			if ((rc = dec_summary(d, b, c, &s)) != 0)
				return rc;
		} else {
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "unknown heap record kind %u at payload offset %zu",
			    k, (size_t)(c->p - c->start - 1));
		}
	}
	return 0;
}
