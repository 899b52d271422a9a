/*
** ljlog reader library: the decoder's base (see decode_base.h): the arena
** and the ID table, errors, the field readers of a cursor, trace exits.
** It calls no decoder of a block kind.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
/* -- Trace exits ------------------------------------------------------------ */

/* Snapshot of t at ofs (see decode.h): a rightmost search. */
const struct decode_texit *decode_trace_exit(const struct decode_obj *t,
					     uint64_t ofs)
{
	uint32_t lo = 0, hi = t->u.trace.nexit;
	if (!hi)
		return NULL;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ofs < t->u.trace.exits[mid].mcofs)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &t->u.trace.exits[lo ? lo - 1 : 0];
}
