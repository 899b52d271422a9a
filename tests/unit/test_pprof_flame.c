/*
** Unit tests: reader/export/ (pprof's protobuf and gzip, the flame page's
** JSON). go tool pprof and Chromium read the real exports in
** tests/e2e/pprof.sh and flame.sh; these check the bytes.
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "export/flame.h"
#include "export/pprof.h"
#include "logbuild.h"
#include "profile/profile.h"

enum { VM = 1, A = 2, B = 3 };

/* Test thread. A log where A (t.lua:1) runs 10 ns, calls B (t.lua:10) for
** 20 ns, runs 10 ns more; loaded with the call tree. With events = 0, a
** log with nothing to export. */
static struct profile *load(int events)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	struct profile *p;
	char err[512];
	lblog_init(&l);
	lblog_intro(&l, 99);
	map_begin(&m, VM);
	map_vm(&m, VM, 555, 900, 0);
	map_proto(&m, A, "@t.lua", 1, 5);
	map_proto(&m, B, "@t.lua", 10, 5);
	lblog_mapping(&l, &m);
	if (events) {
		ev_begin(&e);
		ev_enter(&e, 1, A, 0);
		ev_enter(&e, 2, B, 10);
		ev_exit(&e, 2, 20);
		ev_exit(&e, 1, 10);
		lblog_events(&l, VM, 0, &e);
	}
	lblog_end(&l);
	const char *path = lblog_write(&l);
	cr_assert_eq(profile_load(path, PROFILE_CALLTREE, &p, err, sizeof err),
		     0, "%s", err);
	unlink(path);
	lblog_free(&l);
	return p;
}

/* Test thread. What fn wrote to a memory stream, NUL-terminated. */
static char *capture(int (*fn)(const struct profile *, FILE *),
		     const struct profile *p, size_t *len, int want)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	cr_assert_not_null(f);
	cr_assert_eq(fn(p, f), want);
	fclose(f);
	return buf;
}

static int pprof_fn(const struct profile *p, FILE *f)
{
	struct pprof_opts o = {0};
	return export_pprof(p, &o, f);
}

static int flame_fn(const struct profile *p, FILE *f)
{
	return export_flame(p, NULL, "t", 0, f);
}

/* -- A protobuf reader of the test's own --------------------------------------- */

/* Test thread. A varint at *p (before e); fails on a bad one. */
static uint64_t varint(const uint8_t **p, const uint8_t *e)
{
	uint64_t v = 0;
	for (int s = 0; s < 64; s += 7) {
		cr_assert(*p < e, "varint runs past its message");
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return v;
	}
	cr_assert_fail("varint longer than 10 bytes");
	return 0;
}

/* A field: its number, wire type, value or bytes. */
struct field {
	unsigned num, wire;
	uint64_t v;
	const uint8_t *b;
	size_t n;
};

/* Test thread. The next field of [*p, e); 0 at the end. */
static int next(const uint8_t **p, const uint8_t *e, struct field *f)
{
	if (*p == e)
		return 0;
	uint64_t k = varint(p, e);
	f->num = (unsigned)(k >> 3);
	f->wire = k & 7;
	if (f->wire == 0)
		f->v = varint(p, e);
	else {
		cr_assert_eq(f->wire, 2, "field %u: wire type %u", f->num,
			     f->wire);
		f->n = varint(p, e);
		cr_assert(f->n <= (size_t)(e - *p),
			  "field %u: length %zu "
			  "past its message",
			  f->num, f->n);
		f->b = *p;
		*p += f->n;
	}
	return 1;
}

/* Test thread. Inflate a gzip stream. */
static uint8_t *gunzip(const char *in, size_t n, size_t *outn)
{
	z_stream z;
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	memset(&z, 0, sizeof z);
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END, "not a whole gzip");
	*outn = z.total_out;
	inflateEnd(&z);
	return out;
}

/* -- pprof ---------------------------------------------------------------------- */

Test(export, pprof_call_paths)
{
	struct profile *p = load(1);
	size_t zn, n;
	char *z = capture(pprof_fn, p, &zn, 0);
	cr_assert(zn > 18 && (uint8_t)z[0] == 0x1f && (uint8_t)z[1] == 0x8b);
	uint8_t *pb = gunzip(z, zn, &n);
	const uint8_t *q = pb, *e = pb + n;
	struct field f, g;
	const char *strs[64];
	size_t nstr = 0, nsample = 0, ntype = 0, nfunc = 0, nloc = 0;
	uint64_t types[8][2], vals[2][8], nval[2] = {0, 0}, dflt = 0;
	size_t depth[2] = {0, 0};
	while (next(&q, e, &f)) {
		const uint8_t *r = f.b, *re = f.b + f.n;
		switch (f.num) {
		case 1: /* sample_type */
			cr_assert(ntype < 8);
			while (next(&r, re, &g))
				types[ntype][g.num - 1] = g.v;
			ntype++;
			break;
		case 2: /* sample */
			cr_assert(nsample < 2, "more than 2 samples");
			while (next(&r, re, &g)) {
				const uint8_t *s = g.b, *se = g.b + g.n;
				if (g.num == 1)
					while (s < se)
						varint(&s, se),
						    depth[nsample]++;
				if (g.num == 2)
					while (s < se)
						vals[nsample][nval[nsample]++] =
						    varint(&s, se);
			}
			nsample++;
			break;
		case 4: nloc++; break;
		case 5: nfunc++; break;
		case 6:
			cr_assert(nstr < 64);
			strs[nstr] = strndup((const char *)f.b, f.n);
			nstr++;
			break;
		case 14: dflt = f.v; break;
		}
	}
	/* Calls only: two types, one sample per call path. */
	cr_assert_eq(ntype, 2);
	cr_assert_str_eq(strs[0], "");
	cr_assert_str_eq(strs[types[0][0]], "calls");
	cr_assert_str_eq(strs[types[0][1]], "count");
	cr_assert_str_eq(strs[types[1][0]], "time");
	cr_assert_str_eq(strs[types[1][1]], "nanoseconds");
	cr_assert_str_eq(strs[dflt], "time");
	cr_assert_eq(nsample, 2);
	cr_assert_eq(nfunc, 2);
	cr_assert_eq(nloc, 2);
	/* A: 1 call, 20 ns self, a path of one; A;B: 1 call, 20 ns, two. */
	cr_assert_eq(depth[0], 1);
	cr_assert_eq(depth[1], 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(nval[i], 2);
		cr_assert_eq(vals[i][0], 1);
		cr_assert_eq(vals[i][1], 20);
	}
	for (size_t i = 0; i < nstr; i++)
		free((void *)strs[i]);
	free(pb);
	free(z);
	profile_free(p);
}

Test(export, nothing_to_export)
{
	struct profile *p = load(0);
	size_t n;
	free(capture(pprof_fn, p, &n, -ENODATA));
	cr_assert_eq(n, 0);
	free(capture(flame_fn, p, &n, -ENODATA));
	cr_assert_eq(n, 0);
	profile_free(p);
}

/* -- flame ---------------------------------------------------------------------- */

/* Test thread. flame_json_str of s[0..n) as a string. */
static char *js(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	flame_json_str(f, s, n);
	fclose(f);
	return buf;
}

Test(export, json_safe_in_script)
{
	char *s = js("</script><!--&", 14);
	cr_assert_str_eq(s, "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
	free(s);
	s = js("a\"b\\c\n\x01", 7);
	cr_assert_str_eq(s, "\"a\\\"b\\\\c\\u000a\\u0001\"");
	free(s);
	/* Valid UTF-8 as is; U+2028 escaped; a stray byte, an overlong
	** form and a surrogate as \u00XX per byte. */
	s = js("\xc3\xa9\xe2\x80\xa8\xff\xc0\xaf\xed\xa0\x80", 11);
	cr_assert_str_eq(s, "\"\xc3\xa9\\u2028\\u00ff\\u00c0\\u00af\\u00ed"
			    "\\u00a0\\u0080\"");
	free(s);
	s = js("a\0b", 3);
	cr_assert_str_eq(s, "\"a\\u0000b\"");
	free(s);
}

Test(export, flame_page_tree)
{
	struct profile *p = load(1);
	size_t n;
	char *s = capture(flame_fn, p, &n, 0);
	cr_assert_eq(strlen(s), n);
	cr_assert_null(strstr(s, "@LJLOG_DATA@"), "the marker is left");
	/* Names once, the call-time view as (parent, name, self) triples:
	** the root, A (20 ns), B under A (20 ns). */
	cr_assert_not_null(strstr(s, "\"names\":[\"all\",\"t.lua:1\","
				     "\"t.lua:10\"]"),
			   "%s", s);
	cr_assert_not_null(strstr(s, "\"id\":\"calls\",\"label\":\"Call "
				     "time\",\"unit\":\"ns\",\"nodes\":["
				     "0,0,0,0,1,20,1,2,20]"));
	cr_assert_not_null(strstr(s, "</html>"));
	free(s);
	profile_free(p);
}
