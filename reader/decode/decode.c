/*
** ljlog reader library, layer 2: the decoder.
** Checks every field against the payload end and every ID against its table.
** This file: the public API, names, and the kind table that routes every
** block to its decoder (decode_kinds.h; the layering is drawn in
** decode_base.h), and the driver over a block reader.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
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
	/* A chunk's own function is defined on line 0, which no editor
	** shows: it is named as Lua's tracebacks name it. */
	int chunk = line == 0 && o->u.proto.firstline == 0;
	if (n + 4 >= len) /* keep room for the chunk */
		n = len / 2;
	int k = 0;
	if (n)
		k = snprintf(out, len, "%.*s (%s", (int)n, nm->s,
			     chunk ? DECODE_MAIN_CHUNK " of " : "");
	else if (chunk)
		k = snprintf(out, len, "%s (", DECODE_MAIN_CHUNK);
	if (k < 0 || (size_t)k >= len)
		return;
	decode_chunk_name(c, out + k, len - (size_t)k);
	size_t l = strlen(out);
	if (chunk)
		snprintf(out + l, len - l, ")");
	else
		snprintf(out + l, len - l, n ? ":%llu)" : ":%llu",
			 (unsigned long long)line);
}

/* -- Objects ---------------------------------------------------------------- */

/* The object with this ID, NULL if undefined. */
struct decode_obj *decode_lookup(const struct decode *d, uint64_t id)
{
	return id < DECODE_MAX_ID ? dec_lookup(d, id) : NULL;
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
