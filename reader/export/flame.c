/*
** ljlog exports: the HTML flame graph.
** Trees of frame names aggregated by path (one per view), written as JSON
** into the page made from reader/export/flame.html at build time.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "export/flame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame_html.h"
#include "profile/profile.h"
#include "proc/ntree.h"
#include "util/intern.h"

/* Where the data goes in the page. */
#define FLAME_MARK "@LJLOG_DATA@"

/* One view: a tree of frames, node 0 the root; weight 0 the self weight,
** weight 1 the base's (a differential page). */
struct ftree {
	struct ntree nt;
	int base; /* the builders add to weight 1, the base's, not 0 */
};

/* The page being made. */
struct fx {
	const struct profile *p;
	unsigned view;	     /* of the samples: SAMPLES_VIEW_* */
	struct intern names; /* frame names; 0 is the root's */
	int err;
};

/* -- Trees ---------------------------------------------------------------------- */

/* Add weight w to node's self weight (the base's when the
** tree is being built from the base). */
static void tree_add(struct ftree *t, int64_t node, uint64_t w)
{
	t->nt.w[t->base ? 1 : 0][node] += w;
}

/* Index of a name (0 on failure, with err set). */
static uint32_t name_idx(struct fx *x, const char *s, size_t len)
{
	int64_t i = intern_put(&x->names, s, len);
	if (i < 0) {
		x->err = -ENOMEM;
		return 0;
	}
	return (uint32_t)i;
}

/* Sampled stacks (x->view), weighed by samples. */
static int tree_samples(struct fx *x, struct ftree *t)
{
	const struct samples *s = &x->p->smp;
	struct samples_frame *fr = malloc(SAMPLES_STACK_MAX * sizeof *fr);
	if (!fr)
		return -ENOMEM;
	for (uint32_t n = 1; n < s->nnode && !x->err; n++) {
		uint64_t c = s->nodes[n].samples;
		if (!c)
			continue;
		size_t nf = samples_stack(s, n, x->view, 0, fr);
		int64_t node = 0;
		for (size_t i = 0; i < nf && node >= 0; i++) {
			char buf[64];
			const char *nm = buf;
			if (fr[i].kind == SAMPLES_FR_FN)
				nm = s->fnid->fns[fr[i].fn].name;
			else
				samples_frame_name(s, &fr[i], buf, sizeof buf);
			node = ntree_child(&t->nt, (uint32_t)node,
					   name_idx(x, nm, strlen(nm)));
		}
		if (node < 0)
			x->err = -ENOMEM;
		else
			tree_add(t, node, c);
	}
	free(fr);
	return x->err;
}

/* Call paths, weighed by self time in ns; paths with neither
** calls nor time (left out by a window or a filter) are not drawn. */
static int tree_calls(struct fx *x, struct ftree *t)
{
	const struct calls *c = &x->p->calls;
	/* Call-tree nodes come after their parents: map them in order. */
	uint32_t *map = malloc(c->nnode * sizeof *map);
	unsigned char *keep = calloc(c->nnode, 1);
	if (!map || !keep) {
		free(map);
		free(keep);
		return -ENOMEM;
	}
	for (uint32_t n = c->nnode; n-- > 1;)
		if (keep[n] || c->nodes[n].calls || c->nodes[n].self)
			keep[n] = keep[c->nodes[n].parent] = 1;
	map[0] = 0;
	for (uint32_t n = 1; n < c->nnode && !x->err; n++) {
		const struct calls_node *cn = &c->nodes[n];
		const char *nm = x->p->fns[cn->fn].name;
		if (!keep[n])
			continue;
		int64_t node = ntree_child(&t->nt, map[cn->parent],
					   name_idx(x, nm, strlen(nm)));
		if (node < 0) {
			x->err = -ENOMEM;
			break;
		}
		map[n] = (uint32_t)node;
		tree_add(t, node, profile_ns(x->p, cn->self));
	}
	free(map);
	free(keep);
	return x->err;
}

/* Allocation sites, function then line, weighed by bytes. */
static int tree_alloc(struct fx *x, struct ftree *t)
{
	const struct heap *h = &x->p->heap;
	for (size_t i = 0; i < h->nsite && !x->err; i++) {
		const struct heap_site *st = &h->sites[i];
		const struct profile_fn *f = &x->p->fns[st->fn];
		if (!st->alloc_bytes)
			continue;
		int64_t node = ntree_child(
		    &t->nt, 0, name_idx(x, f->name, strlen(f->name)));
		if (node >= 0 && st->line) {
			char buf[64];
			int n = snprintf(buf, sizeof buf, "line %" PRIu64,
					 st->line);
			node = ntree_child(&t->nt, (uint32_t)node,
					   name_idx(x, buf, (size_t)n));
		}
		if (node < 0)
			x->err = -ENOMEM;
		else
			tree_add(t, node, st->alloc_bytes);
	}
	return x->err;
}

/* -- JSON ------------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0
** when not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k;
	uint32_t c;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((k == 3 && c < 0x800) || (k == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return k;
}

/* A JSON string literal safe inside <script>. */
void flame_json_str(FILE *out, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	putc('"', out);
	for (size_t i = 0; i < len;) {
		unsigned char c = u[i];
		size_t k = utf8_len(u + i, len - i);
		if (k > 1) {
			/* U+2028 and U+2029 end lines in older JavaScript. */
			if (k == 3 && c == 0xe2 && u[i + 1] == 0x80 &&
			    (u[i + 2] == 0xa8 || u[i + 2] == 0xa9))
				fprintf(out, "\\u%04x",
					0x2000 |
					    (u[i + 2] == 0xa8 ? 0x28 : 0x29));
			else
				fwrite(u + i, 1, k, out);
			i += k;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f || c == '<' || c == '>' ||
			 c == '&')
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
		i++;
	}
	putc('"', out);
}

/* One view as JSON: its nodes as (parent, name, self) triples,
** parents first. */
static void view_json(FILE *out, const char *id, const char *label,
		      const char *unit, const struct ftree *t, int first,
		      int diff)
{
	fprintf(out,
		"%s{\"id\":\"%s\",\"label\":\"%s\",\"unit\":\"%s\","
		"\"nodes\":[",
		first ? "" : ",\n", id, label, unit);
	for (size_t i = 0; i < t->nt.n; i++)
		fprintf(out, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu64,
			i ? (i % 8 ? "," : ",\n") : "", t->nt.parent[i],
			t->nt.name[i], t->nt.w[0][i]);
	if (diff) { /* the base's self weight of each node, in order */
		fputs("],\n\"base\":[", out);
		for (size_t i = 0; i < t->nt.n; i++)
			fprintf(out, "%s%" PRIu64,
				i ? (i % 16 ? "," : ",\n") : "", t->nt.w[1][i]);
	}
	fputs("]}", out);
}

/* Build view tree t of x->p with fn, then (base not NULL) add
** the base's weights to it by the same paths. */
static int tree_both(struct fx *x, struct ftree *t, const struct profile *base,
		     int (*fn)(struct fx *, struct ftree *))
{
	const struct profile *p = x->p;
	t->base = 0;
	if (ntree_init(&t->nt, 2) || fn(x, t))
		return -ENOMEM;
	if (!base)
		return 0;
	x->p = base;
	t->base = 1;
	int rc = fn(x, t);
	x->p = p;
	t->base = 0;
	return rc;
}

/* -- The page -------------------------------------------------------------------- */

/* The flame page. */
int export_flame(const struct profile *p, const struct profile *base,
		 const char *title, int host, FILE *out)
{
	struct fx x = {.p = p,
		       .view =
			   host ? SAMPLES_VIEW_MERGED : SAMPLES_VIEW_LUA_FIRST,
		       .names = INTERN_INIT};
	struct ftree ts, tc, ta;
	int has_smp = p->smp.samples > 0;
	int has_calls = p->calls.nnode > 1;
	int has_alloc = p->heap.nsite > 0;
	if (!has_smp && !has_calls && !has_alloc)
		return -ENODATA;
	int rc = -ENOMEM;
	memset(&ts, 0, sizeof ts);
	memset(&tc, 0, sizeof tc);
	memset(&ta, 0, sizeof ta);
	if (name_idx(&x, "all", 3) != 0 || x.err)
		goto out;
	if (has_smp && tree_both(&x, &ts, base, tree_samples))
		goto out;
	if (has_calls && tree_both(&x, &tc, base, tree_calls))
		goto out;
	if (has_alloc && tree_both(&x, &ta, base, tree_alloc))
		goto out;
	const char *mark = strstr(flame_html, FLAME_MARK);
	if (!mark) {
		rc = -EINVAL; /* the page lost its marker: a build error */
		goto out;
	}
	fwrite(flame_html, 1, (size_t)(mark - flame_html), out);
	fputs("{\"title\":", out);
	flame_json_str(out, title, strlen(title));
	fprintf(out, ",\"diff\":%s", base ? "true" : "false");
	fputs(",\n\"names\":[", out);
	for (size_t i = 0; i < intern_count(&x.names); i++) {
		size_t len;
		const char *s = intern_str(&x.names, (uint32_t)i, &len);
		if (i)
			fputs(i % 8 ? "," : ",\n", out);
		flame_json_str(out, s, len);
	}
	fputs("],\n\"views\":[", out);
	int first = 1;
	if (has_smp) {
		view_json(out, "samples", "Samples", "samples", &ts, first,
			  base != NULL);
		first = 0;
	}
	if (has_calls) {
		view_json(out, "calls", "Call time", "ns", &tc, first,
			  base != NULL);
		first = 0;
	}
	if (has_alloc)
		view_json(out, "alloc", "Allocated bytes", "bytes", &ta, first,
			  base != NULL);
	fputs("]}", out);
	fputs(mark + strlen(FLAME_MARK), out);
	rc = ferror(out) ? -EIO : 0;
out:
	ntree_free(&ts.nt);
	ntree_free(&tc.nt);
	ntree_free(&ta.nt);
	intern_free(&x.names);
	return rc;
}
