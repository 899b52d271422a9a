/*
** Unit tests: reader/proc/hdom.c (dominator tree, retained sizes) and
** reader/proc/hpath.c (readable paths) on small hand-made graphs.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "proc/hdom.h"
#include "proc/hpath.h"

struct tedge {
	uint64_t src, dst; /* src 0: a root */
	int weak;
	unsigned kind; /* 0: FIELD_STR "f" (a root: "main thread env") */
	const char *name;
	uint64_t n;
};

/* Test thread. A kept snapshot of objects 1..n (sizes size[i-1], tables)
** and the edges e[0..ne). */
static void mk(struct hsnap_keep *k, size_t n, const uint64_t *size,
	       const struct tedge *e, size_t ne)
{
	memset(k, 0, sizeof *k);
	k->v = calloc(n, sizeof *k->v);
	k->e = calloc(ne + 1, sizeof *k->e);
	cr_assert(k->v && k->e);
	for (size_t i = 0; i < n; i++) {
		k->v[i] = (struct hsnap_obj){.id = i + 1,
					     .type = FORMAT_HTYPE_TABLE,
					     .size = size[i],
					     .text = strdup("t"),
					     .textlen = 1};
		cr_assert_eq(hmap_put(&k->byid, i + 1, i + 1), 0);
	}
	k->n = n;
	for (size_t i = 0; i < ne; i++) {
		const char *nm = e[i].name  ? e[i].name
				 : e[i].src ? "f"
					    : "main thread env";
		unsigned kind =
		    e[i].src ? (e[i].kind ? e[i].kind : FORMAT_HREF_FIELD_STR)
			     : 0;
		k->e[i] = (struct hsnap_edge){e[i].src,	  e[i].dst, strdup(nm),
					      strlen(nm), kind,	    e[i].weak,
					      e[i].n,	  0};
	}
	k->ne = ne;
}

/* Test thread. Free k. */
static void unmk(struct hsnap_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].text);
	for (size_t i = 0; i < k->ne; i++)
		free(k->e[i].name);
	free(k->v);
	free(k->e);
	hmap_free(&k->byid);
}

#define E(s, d)                                                                \
	{                                                                      \
		s, d, 0, 0, NULL, 0                                            \
	} /* a strong field "f" */
#define W(s, d)                                                                \
	{                                                                      \
		s, d, 1, 0, NULL, 0                                            \
	}		  /* a weak one */
#define ROOT SIZE_MAX - 1 /* stands for the super-root in want[] */

/* Test thread. Check idom (object IDs, 0 unreached, ROOT) and retained. */
static void check(const struct hdom *d, size_t n, const size_t *idom,
		  const uint64_t *ret)
{
	for (size_t i = 0; i < n; i++) {
		size_t w = idom[i] == 0	     ? HDOM_NONE
			   : idom[i] == ROOT ? n
					     : idom[i] - 1;
		cr_assert_eq(d->idom[i], w, "idom of #%zu: %zu, want %zu",
			     i + 1, d->idom[i], w);
		cr_assert_eq(d->retained[i], ret[i],
			     "retained of #%zu: %llu, want %llu", i + 1,
			     (unsigned long long)d->retained[i],
			     (unsigned long long)ret[i]);
	}
}

Test(hdom, diamond)
{
	static const uint64_t size[] = {1, 10, 100, 1000};
	static const struct tedge e[] = {E(0, 1), E(1, 2), E(1, 3), E(2, 4),
					 E(3, 4)};
	struct hsnap_keep k;
	struct hdom d;
	mk(&k, 4, size, e, 5);
	cr_assert_eq(hdom_build(&d, &k), 0);
	static const size_t idom[] = {ROOT, 1, 1, 1};
	static const uint64_t ret[] = {1111, 10, 100, 1000};
	check(&d, 4, idom, ret);
	cr_assert_eq(d.retained[4], 1111);
	hdom_free(&d);
	unmk(&k);
}

Test(hdom, chain_and_path)
{
	static const uint64_t size[] = {1, 2, 4, 8};
	static const struct tedge e[] = {E(0, 1),
					 {1, 2, 0, 0, "a b", 0},
					 {2, 3, 0, FORMAT_HREF_ARRAY, NULL, 17},
					 {3, 4, 0, 0, "name", 0}};
	struct hsnap_keep k;
	struct hdom d;
	mk(&k, 4, size, e, 4);
	cr_assert_eq(hdom_build(&d, &k), 0);
	static const size_t idom[] = {ROOT, 1, 2, 3};
	static const uint64_t ret[] = {15, 14, 12, 8};
	check(&d, 4, idom, ret);
	const struct hsnap_edge *p[8];
	int cut;
	size_t n = hdom_path(&d, &k, 3, p, 8, &cut);
	cr_assert_eq(n, 4);
	cr_assert_eq(cut, 0);
	char buf[256];
	hpath_render(&k, p, n, cut, buf, sizeof buf);
	cr_assert_str_eq(buf, "_G[\"a b\"][17].name");
	n = hdom_path(&d, &k, 3, p, 2, &cut);
	cr_assert_eq(n, 2);
	cr_assert_eq(cut, 1);
	hpath_render(&k, p, n, cut, buf, sizeof buf);
	cr_assert_str_eq(buf, "...[17].name");
	hdom_free(&d);
	unmk(&k);
}

Test(hdom, cycle)
{
	/* root -> 1 -> 2 -> 3 -> 2, root -> 3, 3 -> 4, 4 -> 1 */
	static const uint64_t size[] = {1, 2, 4, 8};
	static const struct tedge e[] = {E(0, 1), E(1, 2), E(2, 3), E(3, 2),
					 E(0, 3), E(3, 4), E(4, 1)};
	struct hsnap_keep k;
	struct hdom d;
	mk(&k, 4, size, e, 7);
	cr_assert_eq(hdom_build(&d, &k), 0);
	static const size_t idom[] = {ROOT, ROOT, ROOT, 3};
	static const uint64_t ret[] = {1, 2, 12, 8};
	check(&d, 4, idom, ret);
	hdom_free(&d);
	unmk(&k);
}

Test(hdom, weak_edge_does_not_retain)
{
	/* root -> 1 -w-> 2; root -> 3 -> 4, 1 -w-> 4; 5 unreached */
	static const uint64_t size[] = {1, 2, 4, 8, 16};
	static const struct tedge e[] = {E(0, 1), W(1, 2), E(0, 3),
					 E(3, 4), W(1, 4), E(5, 1)};
	struct hsnap_keep k;
	struct hdom d;
	mk(&k, 5, size, e, 6);
	cr_assert_eq(hdom_build(&d, &k), 0);
	static const size_t idom[] = {ROOT, 0, ROOT, 3, 0};
	static const uint64_t ret[] = {1, 0, 12, 8, 0};
	check(&d, 5, idom, ret);
	cr_assert_eq(d.reached, 3);
	cr_assert_null(d.via[1]);
	hdom_free(&d);
	unmk(&k);
}

/* Test thread. Object id's text in k is now t. */
static void set_text(struct hsnap_keep *k, uint64_t id, const char *t)
{
	free(k->v[id - 1].text);
	k->v[id - 1].text = strdup(t);
	k->v[id - 1].textlen = strlen(t);
}

/* Test thread. The path of object id in k (built in d) into buf. */
static void path_text(const struct hdom *d, const struct hsnap_keep *k,
		      uint64_t id, char *buf, size_t cap)
{
	const struct hsnap_edge *p[16];
	int cut;
	size_t n = hdom_path(d, k, (size_t)id - 1, p, 16, &cut);
	cr_assert_gt(n, 0);
	hpath_render(k, p, n, cut, buf, cap);
}

/* A cache held by an upvalue of a function that only a trace's constant
** holds (the main chunk's locals are gone at exit): its path says compiled
** code holds it. Held also by the program's own longer path: that one,
** never the shorter one through code. */
Test(hdom, code_refs_last)
{
	static const uint64_t size[] = {1, 1, 1, 1, 64, 1, 1, 1, 1};
	static const struct tedge e[] = {
	    E(0, 1),
	    {1, 2, 0, FORMAT_HREF_TRACE, "root", 0},
	    {2, 3, 0, FORMAT_HREF_TRACE_CONST, NULL, 18},
	    {3, 4, 0, FORMAT_HREF_UPVALUE, "cache", 0},
	    {4, 5, 0, FORMAT_HREF_VALUE, NULL, 0},
	    {1, 6, 0, 0, "a", 0},
	    {6, 7, 0, 0, "b", 0},
	    {7, 8, 0, 0, "c", 0},
	    {8, 9, 0, 0, "d", 0},
	    {9, 5, 0, 0, "e", 0}};
	struct hsnap_keep k;
	struct hdom d;
	char buf[256];
	mk(&k, 9, size, e, 5);
	set_text(&k, 2, "trace 7");
	set_text(&k, 3, "app.lua:2");
	cr_assert_eq(hdom_build(&d, &k), 0);
	path_text(&d, &k, 5, buf, sizeof buf);
	cr_assert_str_eq(
	    buf,
	    "[compiled code] upvalue cache of constant of trace 7 (app.lua:2)");
	hdom_free(&d);
	unmk(&k);
	mk(&k, 9, size, e, 10);
	cr_assert_eq(hdom_build(&d, &k), 0);
	path_text(&d, &k, 5, buf, sizeof buf);
	cr_assert_str_eq(buf, "_G.a.b.c.d.e");
	hdom_free(&d);
	unmk(&k);
}

Test(hpath, keys)
{
	char b[64];
	hpath_key("name", 4, b, sizeof b);
	cr_assert_str_eq(b, ".name");
	hpath_key("end", 3, b, sizeof b);
	cr_assert_str_eq(b, "[\"end\"]");
	hpath_key("1x", 2, b, sizeof b);
	cr_assert_str_eq(b, "[\"1x\"]");
	hpath_key("a\"b", 3, b, sizeof b);
	cr_assert_str_eq(b, "[\"a\\\"b\"]");
}
