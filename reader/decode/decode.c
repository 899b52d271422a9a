/*
** ljlog reader library, layer 2: the decoder.
** Checks every field against the payload end and every ID against its table.
** This file: the arena and ID table, errors, cold field readers, INTRO and
** END, and the kind table that routes every block; the hot kinds live in
** decode_map.c, decode_events.c and decode_samples.c.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chunk name as Lua shows it (see decode.h). */
void decode_chunk_name(const struct decode_str *chunk, char *out, size_t len)
{
	const char *s = chunk->s ? chunk->s : "";
	size_t n = chunk->len;
	if (!len)
		return;
	if (n && (s[0] == '@' || s[0] == '=')) {
		snprintf(out, len, "%.*s", (int)(n - 1), s + 1);
		return;
	}
	/* Source text, as LuaJIT's lj_debug_shortname shows it: up to the
	** first control character, at most 48 bytes whole, else 45 and "...". */
	size_t l = 0;
	while (l < n && l < 48 && (unsigned char)s[l] >= ' ')
		l++;
	int cut = l < n;
	if (cut && l > 45)
		l = 45;
	snprintf(out, len, "[string \"%.*s%s\"]", (int)l, s, cut ? "..." : "");
}

/* A PROTO as a Lua programmer reads it (see decode.h). */
void decode_proto_name(const struct decode_obj *o, uint64_t line, char *out,
		       size_t len)
{
	const struct decode_str *c = &o->u.proto.chunk, *nm = &o->u.proto.name;
	size_t bl = strlen(DECODE_BUILTIN_CHUNK);
	if (!len)
		return;
	if (nm->len && c->len == bl &&
	    memcmp(c->s, DECODE_BUILTIN_CHUNK, bl) == 0) {
		snprintf(out, len, "%s", nm->s);
		return;
	}
	size_t n = nm->len;
	if (n + 4 >= len) /* keep room for the chunk */
		n = len / 2;
	if (n) {
		int k = snprintf(out, len, "%.*s (", (int)n, nm->s);
		decode_chunk_name(c, out + k, len - (size_t)k);
		size_t l = strlen(out);
		snprintf(out + l, len - l, ":%llu)", (unsigned long long)line);
		return;
	}
	decode_chunk_name(c, out, len);
	size_t l = strlen(out);
	snprintf(out + l, len - l, ":%llu", (unsigned long long)line);
}

/* -- Arena and ID table ----------------------------------------------------- */

/* n bytes, 8-aligned, zeroed; NULL when out of memory. */
void *dec_alloc(struct decode *d, size_t n)
{
	struct chunk *c = d->arena;
	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->next = d->arena;
		c->used = 0;
		c->size = size;
		d->arena = c;
	}
	void *p = c->mem + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

/* Copy a string into the arena, NUL-terminated. */
int dec_str(struct decode *d, const char *s, size_t len, struct decode_str *out)
{
	char *p = dec_alloc(d, len + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, s, len);
	p[len] = '\0';
	out->s = p;
	out->len = len;
	return 0;
}

/* The object with this ID, NULL if undefined. */
struct decode_obj *decode_lookup(const struct decode *d, uint64_t id)
{
	return id < DECODE_MAX_ID ? dec_lookup(d, id) : NULL;
}

/* The object with this ID in the sparse map, NULL if none. */
struct decode_obj *dec_lookup_sparse(const struct decode *d, uint64_t id)
{
	uint64_t *v = id ? hmap_get(&d->sparse, id) : NULL;
	return v ? (struct decode_obj *)(uintptr_t)*v : NULL;
}

/* Enter obj in the ID table (id already range-checked): in its
** page, or in the sparse map when a new page would be over budget. */
int dec_insert(struct decode *d, struct decode_obj *obj)
{
	size_t pg = obj->id >> PAGE_BITS;
	d->nobjs++;
	if ((pg >= d->npages || !d->pages[pg]) &&
	    d->pages_used >= PAGES_FREE + d->nobjs / PAGE_OBJS)
		return hmap_put(&d->sparse, obj->id, (uintptr_t)obj);
	if (pg >= d->npages) {
		size_t n = d->npages ? d->npages : 16;
		while (n <= pg)
			n *= 2;
		struct decode_obj ***np = realloc(d->pages, n * sizeof *np);
		if (!np)
			return -ENOMEM;
		memset(np + d->npages, 0, (n - d->npages) * sizeof *np);
		d->pages = np;
		d->npages = n;
	}
	if (!d->pages[pg]) {
		d->pages[pg] = calloc(PAGE_SIZE, sizeof **d->pages);
		if (!d->pages[pg])
			return -ENOMEM;
		d->pages_used++;
	}
	d->pages[pg][obj->id & (PAGE_SIZE - 1)] = obj;
	return 0;
}
/* -- Errors ------------------------------------------------------------------ */

/* Record "block N (KIND) at offset X: reason"; returns code. */
int dec_corrupt(struct decode *d, const struct reader_block *b, int code,
		const char *fmt, ...)
{
	char msg[ERR_MAX - 80];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(d->err, sizeof d->err, "block %llu (%s) at offset %llu: %s",
		 (unsigned long long)b->index, format_kind_name(b->h.kind),
		 (unsigned long long)b->offset, msg);
	return code;
}

/* Pass a warning to the sink. */
void dec_warn(struct decode *d, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;
	if (!d->sink.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	d->sink.warn(d->sink.ud, msg);
}
/* -- Field readers (cold blocks) --------------------------------------------- */

/* Read a uleb field named name. */
int dec_get_u(struct decode_cur *c, const char *name, uint64_t *v)
{
	if (blocks_uleb_get(&c->p, c->end, v) < 0) {
		c->field = name;
		return -EBADMSG;
	}
	return 0;
}

/* Read a str field into the arena. */
int dec_get_s(struct decode *d, struct decode_cur *c, const char *name,
	      struct decode_str *out)
{
	const char *s;
	size_t len;
	if (blocks_str_get(&c->p, c->end, &s, &len) < 0) {
		c->field = name;
		return -EBADMSG;
	}
	return dec_str(d, s, len, out) < 0 ? -ENOMEM : 0;
}

/* Read a CLOCK triple. */
int dec_get_clock(struct decode_cur *c, struct decode_clock *k)
{
	int rc;
	if ((rc = dec_get_u(c, "clock counter", &k->counter)) < 0 ||
	    (rc = dec_get_u(c, "clock monotonic_ns", &k->mono_ns)) < 0 ||
	    (rc = dec_get_u(c, "clock realtime_ns", &k->real_ns)) < 0)
		return rc;
	return 0;
}

/* Error for a field that runs past the payload end. */
int dec_bad_field(struct decode *d, const struct reader_block *b,
		  struct decode_cur *c, int rc)
{
	if (rc == -ENOMEM)
		return dec_corrupt(d, b, rc, "out of memory");
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "field '%s' at payload offset %zu runs past the payload "
	    "end or is not a valid integer",
	    c->field ? c->field : "?", (size_t)(c->p - c->start));
}

/* The payload must end where the fields do. */
int dec_check_tail(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, const char *what)
{
	if (c->p != c->end)
		return dec_corrupt(d, b, -EBADMSG,
				   "%zu unexpected bytes after the %s fields",
				   (size_t)(c->end - c->p), what);
	return 0;
}
/* -- INTRO and END ----------------------------------------------------------- */

/* Decode an INTRO payload. */
int dec_intro(struct decode *d, const struct reader_block *b,
	      struct decode_cur *c)
{
	struct decode_intro *in = &d->intro;
	int rc;
	memset(in, 0, sizeof *in);
	if ((rc = dec_get_u(c, "version", &in->version)) < 0)
		return dec_bad_field(d, b, c, rc);
	/* Each version only adds to the one before: older logs read as written
	** (version 3 fields are read where intro.version says so). */
	if (in->version < 1 || in->version > FORMAT_VERSION)
		return dec_corrupt(d, b, -ENOTSUP,
				   "format version %llu is not supported (this "
				   "reader reads versions 1 to %d)",
				   (unsigned long long)in->version,
				   FORMAT_VERSION);
	if ((rc = dec_get_u(c, "pointer_size", &in->pointer_size)) < 0 ||
	    (rc = dec_get_u(c, "pid", &in->pid)) < 0 ||
	    (rc = dec_get_s(d, c, "executable", &in->exe)) < 0 ||
	    (rc = dec_get_s(d, c, "luajit_version", &in->luajit_version)) < 0 ||
	    (rc = dec_get_s(d, c, "options", &in->options)) < 0 ||
	    (rc = dec_get_u(c, "counter_kind", &in->counter_kind)) < 0 ||
	    (rc = dec_get_u(c, "ts_shift", &in->ts_shift)) < 0 ||
	    (rc = dec_get_u(c, "counter_hz", &in->counter_hz)) < 0 ||
	    (rc = dec_get_clock(c, &in->clock)) < 0)
		return dec_bad_field(d, b, c, rc);
	if ((rc = dec_check_tail(d, b, c, "INTRO")) < 0)
		return rc;
	if (in->pointer_size == 0 || in->pointer_size > 8)
		return dec_corrupt(d, b, -EBADMSG, "pointer_size %llu",
				   (unsigned long long)in->pointer_size);
	if (in->counter_kind != FORMAT_COUNTER_TSC &&
	    in->counter_kind != FORMAT_COUNTER_MONO_NS)
		return dec_corrupt(d, b, -EBADMSG, "unknown counter_kind %llu",
				   (unsigned long long)in->counter_kind);
	if (in->ts_shift > 63)
		return dec_corrupt(d, b, -EBADMSG, "ts_shift %llu over 63",
				   (unsigned long long)in->ts_shift);
	d->have_intro = 1;
	return d->sink.intro ? d->sink.intro(d->sink.ud, in) : 0;
}

/* Decode an END payload and check its totals. */
int dec_end(struct decode *d, const struct reader_block *b,
	    struct decode_cur *c)
{
	struct decode_end *e = &d->end;
	int rc;
	if ((rc = dec_get_u(c, "events", &e->events)) < 0 ||
	    (rc = dec_get_u(c, "blocks", &e->blocks)) < 0 ||
	    (rc = dec_get_u(c, "bytes", &e->bytes)) < 0 ||
	    (rc = dec_get_u(c, "samples_dropped", &e->samples_dropped)) < 0 ||
	    (rc = dec_get_u(c, "vms", &e->vms)) < 0 ||
	    (rc = dec_get_clock(c, &e->clock)) < 0)
		return dec_bad_field(d, b, c, rc);
	e->stop_error = 0;
	e->stop_reason[0] = '\0';
	if (d->intro.version >= 5) {
		const char *s;
		size_t len;
		if ((rc = dec_get_u(c, "stop_error", &e->stop_error)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (blocks_str_get(&c->p, c->end, &s, &len) < 0) {
			c->field = "stop_reason";
			return dec_bad_field(d, b, c, -EBADMSG);
		}
		if (len >= sizeof e->stop_reason)
			len = sizeof e->stop_reason - 1;
		memcpy(e->stop_reason, s, len);
		e->stop_reason[len] = '\0';
		if (e->stop_error && !len)
			snprintf(e->stop_reason, sizeof e->stop_reason,
				 "error %llu",
				 (unsigned long long)e->stop_error);
	}
	e->flush_waits = e->flush_wait_ns = 0;
	if (d->intro.version >= 15 &&
	    ((rc = dec_get_u(c, "flush_waits", &e->flush_waits)) < 0 ||
	     (rc = dec_get_u(c, "flush_wait_ns", &e->flush_wait_ns)) < 0))
		return dec_bad_field(d, b, c, rc);
	if ((rc = dec_check_tail(d, b, c, "END")) < 0)
		return rc;
	if (e->events != d->events)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "END counts %llu events, the EVENTS blocks hold "
		    "%llu",
		    (unsigned long long)e->events,
		    (unsigned long long)d->events);
	if (e->blocks != b->index)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "END counts %llu blocks, %llu come before it",
		    (unsigned long long)e->blocks,
		    (unsigned long long)b->index);
	if (e->bytes != b->offset)
		return dec_corrupt(d, b, -EBADMSG,
				   "END says it is at offset %llu",
				   (unsigned long long)e->bytes);
	/* Samples dropped after the last SAMPLES block reach only END: more
	** is possible, fewer is not. */
	if (e->samples_dropped < d->dropped)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "END counts %llu samples dropped, the SAMPLES "
		    "blocks count %llu",
		    (unsigned long long)e->samples_dropped,
		    (unsigned long long)d->dropped);
	if (e->samples_dropped > d->dropped)
		dec_warn(d,
			 "block %llu (END) at offset %llu: END counts %llu "
			 "samples dropped, the SAMPLES blocks %llu",
			 (unsigned long long)b->index,
			 (unsigned long long)b->offset,
			 (unsigned long long)e->samples_dropped,
			 (unsigned long long)d->dropped);
	if (e->vms != d->vms)
		dec_warn(
		    d,
		    "block %llu (END) at offset %llu: END counts %llu VMs, "
		    "the log defines %llu",
		    (unsigned long long)b->index, (unsigned long long)b->offset,
		    (unsigned long long)e->vms, (unsigned long long)d->vms);
	d->have_end = 1;
	return d->sink.end ? d->sink.end(d->sink.ud, e) : 0;
}

/* -- Public ------------------------------------------------------------------ */

/* New decoder feeding sink (copied); 0 or -ENOMEM. */
int decode_new(struct decode **out, const struct decode_sink *sink)
{
	struct decode *d = calloc(1, sizeof *d);
	*out = d;
	if (!d)
		return -ENOMEM;
	if (sink)
		d->sink = *sink;
	return 0;
}

/* Free the decoder and every object. */
void decode_free(struct decode *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->npages; i++)
		free(d->pages[i]);
	free(d->pages);
	hmap_free(&d->sparse);
	free(d->lua);
	free(d->host);
	free(d->msg);
	free(d->hrefs);
	while (d->arena) {
		struct chunk *n = d->arena->next;
		free(d->arena);
		d->arena = n;
	}
	free(d);
}

/* -- The kind table ---------------------------------------------------------- */

/* Every block kind this reader knows, in FORMAT_KIND_* order. A kind with no
** row is unknown: decode_block skips it with a warning, dump says so, check
** counts it; nothing treats it as another kind. */
static const struct decode_kind kinds[] = {
    {FORMAT_KIND_INTRO,
     DECODE_KIND_ONCE | DECODE_KIND_FIRST | DECODE_KIND_HEADER, dec_intro},
    {FORMAT_KIND_END, DECODE_KIND_ONCE, dec_end},
    {FORMAT_KIND_MAPPING, 0, dec_mapping},
    {FORMAT_KIND_EVENTS, 0, dec_events},
    {FORMAT_KIND_SAMPLES, 0, dec_samples},
    {FORMAT_KIND_HEAP, 0, dec_heap},
};

/* The row of a block kind, NULL when this reader lacks it. */
const struct decode_kind *decode_kind(unsigned kind)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

/* The i-th row of the kind table, NULL past the last. */
const struct decode_kind *decode_kind_at(size_t i)
{
	return i < sizeof kinds / sizeof kinds[0] ? &kinds[i] : NULL;
}

/* Decode one block through its row of the kind table. */
int decode_block(struct decode *d, const struct reader_block *b)
{
	struct decode_cur c;
	const struct decode_kind *k = decode_kind(b->h.kind);
	d->err[0] = '\0';
	if (!k) {
		dec_warn(d,
			 "block %llu at offset %llu: unknown kind %u (%u "
			 "bytes) skipped",
			 (unsigned long long)b->index,
			 (unsigned long long)b->offset, b->h.kind, b->h.length);
		return d->sink.unknown ? d->sink.unknown(d->sink.ud, b) : 0;
	}
	if (!b->payload)
		return -EINVAL;
	c.p = c.start = b->payload;
	c.end = b->payload + b->h.length;
	c.field = NULL;
	if (!(k->flags & DECODE_KIND_FIRST) && !d->have_intro)
		return dec_corrupt(d, b, -EBADMSG, "no INTRO block before it");
	if ((k->flags & DECODE_KIND_ONCE) && (d->seen_once & (1u << k->kind)))
		return dec_corrupt(d, b, -EBADMSG, "a second %s block",
				   format_kind_name(k->kind));
	d->seen_once |= 1u << k->kind;
	return k->decode(d, b, &c);
}

/* Message of the last error. */
const char *decode_error(const struct decode *d)
{
	return d->err;
}

/* IDs the sink sees are the log's plus base (see decode.h). */
void decode_set_idbase(struct decode *d, uint32_t base)
{
	d->idbase = base;
}

/* The largest ID defined so far. */
uint32_t decode_max_id(const struct decode *d)
{
	return d->maxid;
}

/* The INTRO block, NULL before it. */
const struct decode_intro *decode_intro(const struct decode *d)
{
	return d->have_intro ? &d->intro : NULL;
}

/* The END block, NULL before it. */
const struct decode_end *decode_end(const struct decode *d)
{
	return d->have_end ? &d->end : NULL;
}

/* Events decoded so far. */
uint64_t decode_events_total(const struct decode *d)
{
	return d->events;
}

/* VM records so far. */
uint64_t decode_vms_total(const struct decode *d)
{
	return d->vms;
}

/* Samples decoded so far. */
uint64_t decode_samples_total(const struct decode *d)
{
	return d->samples;
}

/* Samples dropped, from the SAMPLES blocks so far. */
uint64_t decode_dropped_total(const struct decode *d)
{
	return d->dropped;
}

/* SAMPLES blocks decoded so far. */
uint64_t decode_samples_blocks(const struct decode *d)
{
	return d->sblocks;
}

/* -- Driver ------------------------------------------------------------------ */

/* Read every block of r into d (see decode.h). */
int decode_run(struct reader *r, struct decode *d, char *err, size_t errlen)
{
	struct reader_block b;
	int rc;
	for (;;) {
		rc = reader_next(r, &b);
		if (rc == 0)
			return 0;
		if (rc < 0) {
			snprintf(err, errlen, "%s", reader_error(r));
			return rc;
		}
		if (decode_kind(b.h.kind) && (rc = reader_payload(r, &b)) < 0) {
			snprintf(err, errlen, "%s", reader_error(r));
			return rc;
		}
		if ((rc = decode_block(d, &b)) != 0) {
			snprintf(err, errlen, "%s",
				 d->err[0] ? d->err : "stopped by the sink");
			return rc;
		}
	}
}
