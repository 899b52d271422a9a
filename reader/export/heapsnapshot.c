/*
** ljlog reader exports: a heap snapshot as Chrome DevTools' .heapsnapshot.
**
** Two passes over the log: the first lists the snapshots (to find the last
** complete one), the second keeps the chosen one's objects, references,
** roots and parts. Nodes, in order: a synthetic root; a synthetic node per
** root kind ("(registry)", "(main thread)", ...) with an edge to each root
** of that kind; "(unreachable)" with an edge to each object no root
** reaches; "(VM allocations)" with the parts that are no objects (string
** table, stacks, ...); then every object, then the parts. The root's edges
** go to synthetic nodes only, so DevTools sees no "user roots" and keeps
** every self size as written: the objects' sizes add up to the snapshot's
** bytes, all nodes to LuaJIT's heap total (gc_total).
** This file makes the passes and keeps what they find;
** heapsnapshot_write.c builds the synthetic nodes and writes the JSON.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "config.h"
#include "export/heapsnapshot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "block/reader.h"
#include "export/heapsnapshot_int.h"

/* -- Strings ----------------------------------------------------------------- */

/* intern_put of a printf-formatted string (at most 255 bytes). */
static int64_t st_printf(struct intern *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int64_t st_printf(struct intern *t, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return intern_put(t, buf,
			  (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* -- Collecting the snapshot ------------------------------------------------ */

/* See heapsnapshot_int.h. */
int heapsnapshot_grow(void **v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 256;
	void *nv = realloc(*v, nc * sz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

/* See heapsnapshot_int.h. */
int heapsnapshot_push_edge(struct edge **v, size_t *n, size_t *cap,
			   unsigned type, int64_t name, uint64_t dst)
{
	if (name < 0 || heapsnapshot_grow((void **)v, *n, cap, sizeof **v) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = (struct edge){(uint8_t)type, (uint32_t)name, dst, 0, 0};
	return 0;
}

/* The name of an object's node. */
static int64_t obj_name(struct hs *x, const struct decode_hobj *o)
{
	struct intern *t = &x->st;
	const char *tx = o->text;
	int tl = (int)o->textlen;
	if (o->type == FORMAT_HTYPE_FUNCTION || o->type == FORMAT_HTYPE_PROTO) {
		int64_t k = intern_find(&x->keys, tx, o->textlen);
		if (k >= 0 && o->type == FORMAT_HTYPE_FUNCTION)
			return st_printf(t, "%.*s (%.*s)", (int)x->fname[k].len,
					 x->fname[k].s, tl, tx);
		if (k >= 0)
			return st_printf(t, "(prototype %.*s %.*s)",
					 (int)x->fname[k].len, x->fname[k].s,
					 tl, tx);
	}
	const char *mt = NULL;
	if (o->type == FORMAT_HTYPE_TABLE || o->type == FORMAT_HTYPE_USERDATA) {
		for (int i = 0; i + 4 <= tl; i++)
			if (!memcmp(tx + i, " mt ", 4)) {
				mt = tx + i + 4;
				break;
			}
		if (mt)
			return intern_put(t, mt, (size_t)(tx + tl - mt));
	}
	switch (o->type) {
	case FORMAT_HTYPE_STRING: return intern_put(t, tx, o->textlen);
	case FORMAT_HTYPE_TABLE: return intern_put(t, "table", 5);
	case FORMAT_HTYPE_USERDATA: return intern_put(t, "userdata", 8);
	case FORMAT_HTYPE_FUNCTION: return intern_put(t, tx, o->textlen);
	case FORMAT_HTYPE_PROTO:
		return st_printf(t, "(prototype %.*s)", tl, tx);
	case FORMAT_HTYPE_TRACE: return st_printf(t, "(%.*s)", tl, tx);
	case FORMAT_HTYPE_UPVALUE:
		return st_printf(t, "(upvalue %.*s)", tl, tx);
	case FORMAT_HTYPE_THREAD: return st_printf(t, "thread (%.*s)", tl, tx);
	case FORMAT_HTYPE_CDATA: return st_printf(t, "cdata (%.*s)", tl, tx);
	default: return st_printf(t, "(%s)", format_htype_name(o->type));
	}
}

/* The node type of an object type. */
static uint8_t obj_type(unsigned type)
{
	switch (type) {
	case FORMAT_HTYPE_STRING: return NT_STRING;
	case FORMAT_HTYPE_UPVALUE: return NT_HIDDEN;
	case FORMAT_HTYPE_PROTO:
	case FORMAT_HTYPE_TRACE: return NT_CODE;
	case FORMAT_HTYPE_FUNCTION: return NT_CLOSURE;
	case FORMAT_HTYPE_CDATA:
	case FORMAT_HTYPE_USERDATA: return NT_NATIVE;
	default: return NT_OBJECT; /* table, thread */
	}
}

/* A number key ("%.17g") as an array index, or -1. */
static int64_t num_index(const char *s, size_t len)
{
	if (!len || len > 10)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= UINT32_MAX ? (int64_t)v : -1;
}

/* One reference as an edge of the current object. */
static int add_ref(struct hs *x, const struct decode_href *r)
{
	struct intern *t = &x->st;
	int nl = (int)r->namelen;
	const char *nm = r->name;
	unsigned type = ET_INTERNAL;
	int64_t name;
	switch (r->kind) {
	case FORMAT_HREF_ARRAY:
		type = ET_ELEMENT;
		name = (int64_t)(r->n <= UINT32_MAX ? r->n : UINT32_MAX);
		break;
	case FORMAT_HREF_FIELD_STR:
		type = ET_PROPERTY;
		name = intern_put(t, nm, r->namelen);
		break;
	case FORMAT_HREF_FIELD_NUM:
		name = num_index(nm, r->namelen);
		if (name >= 0)
			type = ET_ELEMENT;
		else {
			type = ET_PROPERTY;
			name = st_printf(t, "[%.*s]", nl, nm);
		}
		break;
	case FORMAT_HREF_FIELD_OTHER:
		type = ET_PROPERTY;
		name = st_printf(t, "[%.*s]", nl, nm);
		break;
	case FORMAT_HREF_FIELD_OBJ:
		type = ET_PROPERTY;
		name = st_printf(t, "[@%llu]", heapsnapshot_node_id(r->key));
		break;
	case FORMAT_HREF_KEY: name = intern_put(t, "(hash key)", 10); break;
	case FORMAT_HREF_UPVALUE:
		type = ET_CONTEXT;
		name = nl ? intern_put(t, nm, r->namelen)
			  : st_printf(t, "(upvalue %llu)",
				      (unsigned long long)r->n);
		break;
	case FORMAT_HREF_STACK:
		type = ET_CONTEXT;
		name = nl ? intern_put(t, nm, r->namelen)
			  : st_printf(t, "(stack slot %llu)",
				      (unsigned long long)r->n);
		break;
	case FORMAT_HREF_CONST:
	case FORMAT_HREF_TRACE_CONST:
		name = st_printf(t, "(%s %llu)", format_href_name(r->kind),
				 (unsigned long long)r->n);
		break;
	case FORMAT_HREF_TRACE:
		name = st_printf(t, "(trace %.*s)", nl, nm);
		break;
	default: name = st_printf(t, "(%s)", format_href_name(r->kind)); break;
	}
	if (name < 0)
		return -ENOMEM;
	if (!r->weak)
		return heapsnapshot_push_edge(&x->e, &x->ne, &x->ecap, type,
					      name, r->target);
	int64_t wname = type == ET_ELEMENT /* weak edges are named */
			    ? st_printf(t, "[%lld]", (long long)name)
			    : name;
	if (heapsnapshot_push_edge(&x->e, &x->ne, &x->ecap, ET_WEAK, wname,
				   r->target) < 0)
		return -ENOMEM;
	x->e[x->ne - 1].stype = (uint8_t)type;
	x->e[x->ne - 1].sname = (uint32_t)name;
	return 0;
}

/* Is the snapshot being decoded the one kept? */
static int is_kept(struct hs *x)
{
	return x->h.n == x->want && !x->done;
}

/* The INTRO: to the snapshot index. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct hs *x = ud;
	struct decode_sink s = {0};
	hsnap_sink(&x->h, &s);
	return s.intro(s.ud, in);
}

/* A MAPPING or NAME record: keep the name of a function (the
** last one given, but never "" for a name). */
static int on_record(void *ud, struct decode_obj *r)
{
	struct hs *x = ud;
	char key[256];
	const struct decode_str *nm;
	int n;
	/* The first pass: a NAME may come after the snapshot kept. */
	if (x->want)
		return 0;
	if (r->kind == FORMAT_REC_PROTO) {
		const char *c = r->u.proto.chunk.s;
		int cl = (int)r->u.proto.chunk.len;
		if (cl && (*c == '@' || *c == '=')) {
			c++;
			cl--;
		}
		nm = &r->u.proto.name;
		n = snprintf(key, sizeof key, "%.*s:%llu", cl > 200 ? 200 : cl,
			     c, (unsigned long long)r->u.proto.firstline);
	} else if (r->kind == FORMAT_REC_CFUNC) {
		nm = &r->u.cfunc.name;
		n = snprintf(key, sizeof key, "C 0x%llx",
			     (unsigned long long)r->u.cfunc.address);
	} else if (r->kind == FORMAT_REC_FFUNC) {
		nm = &r->u.ffunc.name;
		n = snprintf(key, sizeof key, "builtin #%llu",
			     (unsigned long long)r->u.ffunc.ffid);
	} else
		return 0;
	if (!nm->len || n <= 0 || (size_t)n >= sizeof key)
		return 0;
	int64_t k = intern_put(&x->keys, key, (size_t)n);
	int64_t v = intern_put(&x->fnames, nm->s, nm->len);
	if (k < 0 || v < 0 ||
	    heapsnapshot_grow((void **)&x->fname, (size_t)k, &x->fncap,
			      sizeof *x->fname) < 0)
		return x->err = -ENOMEM;
	x->fname[k].s = intern_str(&x->fnames, (uint32_t)v, &x->fname[k].len);
	return 0;
}

/* An OBJECT: to the snapshot index; kept (with its name and type) when
** of the snapshot kept. */
static int on_obj(void *ud, const struct decode_hobj *o)
{
	struct hs *x = ud;
	struct decode_sink s = {0};
	hsnap_sink(&x->h, &s);
	int rc = s.heap_obj(s.ud, o);
	if (rc || !is_kept(x))
		return rc;
	if (heapsnapshot_grow((void **)&x->o, x->no, &x->ocap, sizeof *x->o))
		return x->err = -ENOMEM;
	int64_t name = obj_name(x, o);
	if (name < 0)
		return x->err = -ENOMEM;
	struct obj *b = &x->o[x->no++];
	*b = (struct obj){o->id,
			  o->size,
			  (uint32_t)name,
			  obj_type(o->type),
			  (o->flags & FORMAT_HOBJ_UNREACHABLE) != 0,
			  x->ne,
			  0};
	for (uint32_t i = 0; i < o->nref; i++)
		if (add_ref(x, &o->refs[i]) < 0)
			return x->err = -ENOMEM;
	b->ne = x->ne - b->e0;
	return 0;
}

/* A root's kind: its name without a trailing " N". */
static size_t root_kind_len(const char *s, size_t len)
{
	size_t n = len;
	while (n && s[n - 1] >= '0' && s[n - 1] <= '9')
		n--;
	if (n < len && n && s[n - 1] == ' ')
		return n - 1;
	return len;
}

/* A ROOT: to the snapshot index; kept, with its kind, when of the
** snapshot kept. */
static int on_root(void *ud, const struct decode_hroot *r)
{
	struct hs *x = ud;
	struct decode_sink s = {0};
	hsnap_sink(&x->h, &s);
	int rc = s.heap_root(s.ud, r);
	if (rc || !is_kept(x))
		return rc;
	int kl = (int)root_kind_len(r->name, r->namelen);
	int64_t kind = st_printf(&x->st, "(%.*s)", kl, r->name);
	int64_t name = intern_put(&x->st, r->name, r->namelen);
	if (kind < 0 || name < 0 ||
	    heapsnapshot_grow((void **)&x->r, x->nr, &x->rcap, sizeof *x->r))
		return x->err = -ENOMEM;
	x->r[x->nr++] =
	    (struct root){(uint32_t)kind, (uint32_t)name, r->target};
	return 0;
}

/* A SUMMARY: to the snapshot index; the kept snapshot's totals and
** parts. */
static int on_summary(void *ud, const struct decode_hsummary *sm)
{
	struct hs *x = ud;
	struct decode_sink s = {0};
	hsnap_sink(&x->h, &s);
	int kept = is_kept(x);
	int rc = s.heap_summary(s.ud, sm);
	if (rc || !kept)
		return rc;
	x->done = 1;
	x->bytes = sm->bytes;
	x->gc_total = sm->gc_total;
	x->nparts = sm->nparts;
	for (uint32_t i = 0; i < sm->nparts; i++) {
		int64_t n =
		    st_printf(&x->st, "(%.*s)", (int)sm->part[i].namelen,
			      sm->part[i].name);
		if (n < 0)
			return x->err = -ENOMEM;
		x->part_name[i] = (uint32_t)n;
		x->part_bytes[i] = sm->part[i].bytes;
	}
	return 0;
}

/* Decode path with x's sink; decode_run's result. */
static int pass(struct hs *x, const char *path, char *err, size_t errlen)
{
	struct reader *r;
	struct decode *d;
	struct decode_sink sink = {0};
	sink.ud = x;
	sink.intro = on_intro;
	sink.heap_obj = on_obj;
	sink.record = on_record;
	sink.rename = on_record;
	sink.heap_root = on_root;
	sink.heap_summary = on_summary;
	int rc = reader_open(&r, path, 0, err, errlen);
	if (rc < 0)
		return rc;
	if (decode_new(&d, &sink) < 0) {
		reader_close(r);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = decode_run(r, d, err, errlen);
	decode_free(d);
	reader_close(r);
	if (x->err || x->h.err) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return rc;
}

/* Free x. */
static void hs_free(struct hs *x)
{
	hsnap_free(&x->h);
	intern_free(&x->st);
	intern_free(&x->keys);
	intern_free(&x->fnames);
	free(x->fname);
	free(x->o);
	free(x->e);
	free(x->r);
	free(x->sn);
	free(x->se);
}

/* See heapsnapshot.h. */
int export_heapsnapshot(const char *path, FILE *out,
			const struct export_opts *o, char *err, size_t errlen)
{
	struct hs x;
	memset(&x, 0, sizeof x);
	hsnap_init(&x.h, 0, 0, 0);
	int rc = pass(&x, path, err, errlen);
	if (rc < 0 && rc != -ENODATA && rc != -EBADMSG && rc != -ENOTSUP) {
		hs_free(&x);
		return rc;
	}
	size_t n = x.h.n, want = o ? o->snapshot : 0;
	if (!want)
		for (size_t i = n; i > 0 && !want; i--)
			if (x.h.s[i - 1].complete)
				want = i;
	if (!want || want > n || !x.h.s[want - 1].complete) {
		if (!n && rc == -ENODATA)
			snprintf(err, errlen,
				 "%s holds no heap snapshot before it is cut "
				 "short",
				 path);
		else if (!n)
			snprintf(err, errlen,
				 "%s holds no heap snapshot "
				 "(take one with ljlog.snapshot() "
				 "or the snapshot= option)",
				 path);
		else if (!want)
			snprintf(err, errlen,
				 "%s holds no complete heap "
				 "snapshot (the log is cut short)",
				 path);
		else if (want > n)
			snprintf(
			    err, errlen,
			    "no snapshot %zu: %s holds %zu (see ljlog heap)",
			    want, path, n);
		else
			snprintf(err, errlen,
				 "snapshot %zu of %s is incomplete (the log is "
				 "cut short)",
				 want, path);
		hs_free(&x);
		return EXPORT_EMPTY;
	}
	int first_rc = rc;
	char first_err[512];
	snprintf(first_err, sizeof first_err, "%s", err);
	hsnap_free(&x.h);
	hsnap_init(&x.h, 0, 0, 0);
	x.want = want;
	rc = pass(&x, path, err, errlen);
	if (rc == -ENOMEM || !x.done) {
		if (rc != -ENOMEM)
			snprintf(err, errlen,
				 "snapshot %zu vanished on the "
				 "second read of %s",
				 want, path);
		hs_free(&x);
		return rc == -ENOMEM ? rc : -EIO;
	}
	int wrc = heapsnapshot_write(&x, out, err, errlen);
	hs_free(&x);
	if (wrc < 0)
		return wrc;
	if (ferror(out)) {
		snprintf(err, errlen, "write error");
		return -EIO;
	}
	if (first_rc < 0)
		snprintf(err, errlen, "%s", first_err);
	return first_rc;
}
