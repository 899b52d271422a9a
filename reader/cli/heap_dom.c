/*
** ljlog CLI: 'ljlog heap --top', '--by metatable|site' and the holders and
** sites of '--diff', on the dominator tree of a snapshot (proc/hdom.c) and
** the allocation sites its objects were joined with (proc/hsnap.c).
*/
#include "cli/heap_dom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "proc/hdom.h"
#include "proc/hpath.h"
#include "util/hmap.h"
#include "util/intern.h"

#define PATH_MAX_STEPS 256  /* references of a path shown, at most */
#define PATH_CAP       1024 /* bytes of a path's text, at most */

/* Main thread. See heap_dom.h. */
void heap_path_text(const struct hsnap_keep *k,
		    const struct hsnap_edge *const *e, size_t n, char *buf,
		    size_t cap)
{
	int cut = n > PATH_MAX_STEPS;
	if (cut) {
		e += n - PATH_MAX_STEPS;
		n = PATH_MAX_STEPS;
	}
	hpath_render(k, e, n, cut, buf, cap);
}

/* Main thread. The readable path of object index i by d's shortest strong
** paths ("" when unreached). */
static void path_of(const struct hdom *d, const struct hsnap_keep *k, size_t i,
		    char *buf, size_t cap)
{
	const struct hsnap_edge *e[PATH_MAX_STEPS];
	int cut;
	size_t n = hdom_path(d, k, i, e, PATH_MAX_STEPS, &cut);
	if (!n) {
		snprintf(buf, cap, "%s", "");
		return;
	}
	hpath_render(k, e, n, cut, buf, cap);
}

/* Main thread. See heap_dom.h. */
void heap_more(size_t shown, size_t n)
{
	if (shown < n)
		printf("  … and %zu more (-n 0 for all)\n", n - shown);
}

/* Main thread. Build d on keep kp; 0 or an exit status after a message. */
static int build(struct hdom *d, const struct hsnap_keep *kp)
{
	if (hdom_build(d, kp) < 0) {
		cli_err("heap",
			"out of memory (dominator tree of %zu objects, "
			"%zu references)",
			kp->n, kp->ne);
		return CLI_USAGE;
	}
	return 0;
}

struct rank {
	uint64_t retained, id;
	size_t i;
};

/* Main thread. Larger retained first, then smaller ID. */
static int by_retained(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Main thread. See heap_dom.h. */
int heap_top(const struct hsnap *h, size_t k, size_t n, int json)
{
	const struct hsnap_keep *kp = &h->keep[0];
	const struct hsnap_one *s = &h->s[k - 1];
	struct hdom d;
	int rc = build(&d, kp);
	if (rc)
		return rc;
	struct rank *r = malloc((d.reached + 1) * sizeof *r);
	if (!r) {
		hdom_free(&d);
		cli_err("heap", "out of memory");
		return CLI_USAGE;
	}
	size_t nr = 0;
	uint64_t ub = 0, un = 0;
	for (size_t i = 0; i < kp->n; i++) {
		if (d.idom[i] == HDOM_NONE) {
			un++;
			ub += kp->v[i].size;
			continue;
		}
		r[nr++] = (struct rank){d.retained[i], kp->v[i].id, i};
	}
	qsort(r, nr, sizeof *r, by_retained);
	if (n > nr)
		n = nr;
	struct json j;
	char path[PATH_CAP];
	if (json) {
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_u64(&j, "snapshot", k);
		json_u64(&j, "reachable_objects", nr);
		json_u64(&j, "reachable_bytes", d.retained[kp->n]);
		json_u64(&j, "unreachable_objects", un);
		json_u64(&j, "unreachable_bytes", ub);
		json_arr(&j, "top");
	} else {
		char b1[32], b2[32];
		printf("snapshot %zu (vm %u): %zu objects, %s reached from the "
		       "roots by strong references; left out: %llu objects, %s "
		       "no root reaches that way\n",
		       k, s->vm, nr,
		       cli_fmt_bytes_as(b1, sizeof b1,
					(int64_t)d.retained[kp->n],
					CLI_BYTES_TIB),
		       (unsigned long long)un,
		       cli_fmt_bytes_as(b2, sizeof b2, (int64_t)ub,
					CLI_BYTES_TIB));
		printf("%10s %-9s %10s %10s  %s\n", "ID", "type", "self",
		       "retained", "path  \"text\"");
	}
	for (size_t x = 0; x < n; x++) {
		const struct hsnap_obj *o = &kp->v[r[x].i];
		path_of(&d, kp, r[x].i, path, sizeof path);
		if (json) {
			json_obj(&j, NULL);
			json_u64(&j, "id", o->id);
			json_cstr(&j, "type", format_htype_name(o->type));
			json_str(&j, "text", o->text, o->textlen);
			json_u64(&j, "self_bytes", o->size);
			json_u64(&j, "retained_bytes", r[x].retained);
			json_cstr(&j, "path", path);
			json_close(&j, '}');
		} else {
			char b1[32], b2[32];
			printf("%10llu %-9s %10s %10s  %s  ",
			       (unsigned long long)o->id,
			       format_htype_name(o->type),
			       cli_fmt_bytes_as(b1, sizeof b1, (int64_t)o->size,
						CLI_BYTES_TIB),
			       cli_fmt_bytes_as(b2, sizeof b2,
						(int64_t)r[x].retained,
						CLI_BYTES_TIB),
			       path);
			cli_quote(stdout, o->text,
				  o->textlen > 40 ? 40 : o->textlen);
			printf("\n");
		}
	}
	if (json) {
		json_close(&j, ']');
		json_close(&j, '}');
		putchar('\n');
	} else {
		heap_more(n, nr);
	}
	free(r);
	hdom_free(&d);
	return CLI_OK;
}

/* A group of objects: count and bytes under a name. */
struct group {
	uint64_t key;
	char *name, *holder;
	uint64_t n, bytes;
	uint32_t site; /* an allocation site's index + 1, 0 none */
	uint64_t held; /* by holder: the new objects it holds directly */
};

struct groups {
	struct group *v;
	size_t n, cap;
	struct hmap at; /* key -> index + 1 */
};

/* Main thread. The group of key (new: name NULL), or NULL (no memory). */
static struct group *group_of(struct groups *g, uint64_t key)
{
	int added;
	uint64_t *x = hmap_ref(&g->at, key, &added);
	if (!x)
		return NULL;
	if (!added)
		return &g->v[*x - 1];
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 64;
		struct group *nv = realloc(g->v, nc * sizeof *nv);
		if (!nv)
			return NULL;
		g->v = nv;
		g->cap = nc;
	}
	*x = g->n + 1;
	g->v[g->n] = (struct group){key, NULL, NULL, 0, 0, 0, 0};
	return &g->v[g->n++];
}

/* Main thread. Free g. */
static void groups_free(struct groups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].name);
		free(g->v[i].holder);
	}
	free(g->v);
	hmap_free(&g->at);
}

/* Main thread. More bytes first, then more objects, then by name. */
static int by_bytes(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* Main thread. The groups of g as JSON array key of j or as text lines; a
** site group's function, kind, file and line from hp in JSON. */
static void groups_print(struct groups *g, struct json *j, const char *key,
			 const char *field, const char *title,
			 const struct heap *hp, size_t limit)
{
	char bt[32];
	size_t shown = limit && limit < g->n ? limit : g->n;
	if (g->n) /* no groups: v is NULL, which qsort may not take */
		qsort(g->v, g->n, sizeof *g->v, by_bytes);
	if (j)
		json_arr(j, key);
	else
		printf("%s\n%10s %10s  %s\n", title, "objects", "bytes", field);
	for (size_t i = 0; i < (j ? g->n : shown); i++) {
		const struct group *x = &g->v[i];
		if (j) {
			json_obj(j, NULL);
			json_cstr(j, field, x->name ? x->name : "");
			if (x->holder)
				json_cstr(j, "holder", x->holder);
			if (x->site && hp) {
				const struct heap_site *st =
				    &hp->sites[x->site - 1];
				const struct fnid_fn *f =
				    &hp->fnid->fns[st->fn];
				json_cstr(j, "function", f->name);
				json_cstr(j, "kind", fnid_kind_name(f->kind));
				json_cstr(j, "file", f->file);
				json_u64(j, "line", st->line);
			}
			if (x->held)
				json_u64(j, "top_objects", x->held);
			json_u64(j, "objects", x->n);
			json_u64(j, "bytes", x->bytes);
			json_close(j, '}');
		} else {
			printf(
			    "%10llu %10s  %s%s%s\n", (unsigned long long)x->n,
			    cli_fmt_bytes_as(bt, sizeof bt, (int64_t)x->bytes,
					     CLI_BYTES_TIB),
			    x->name ? x->name : "",
			    x->holder ? "  held by " : "",
			    x->holder ? x->holder : "");
		}
	}
	if (j)
		json_close(j, ']');
	else
		heap_more(shown, g->n);
}

/* Main thread. A copy of s, NULL when out of memory. */
static char *sdup(const char *s)
{
	size_t l = strlen(s) + 1;
	char *p = malloc(l);
	if (p)
		memcpy(p, s, l);
	return p;
}

/* Main thread. The name of metatable mt (index in kp): its __name string,
** else its path, else "<table #ID>". */
static void mt_name(const struct hdom *d, const struct hsnap_keep *kp,
		    size_t mt, const uint64_t *name_of, char *buf, size_t cap)
{
	if (name_of[mt]) {
		const struct hsnap_obj *s = hsnap_find(kp, name_of[mt]);
		if (s) {
			snprintf(buf, cap, "__name \"%.*s\"",
				 (int)(s->textlen > 64 ? 64 : s->textlen),
				 s->text);
			return;
		}
	}
	path_of(d, kp, mt, buf, cap);
	if (!buf[0])
		snprintf(buf, cap, "<table #%llu>",
			 (unsigned long long)kp->v[mt].id);
}

/* Main thread. See heap_dom.h. */
int heap_by_metatable(const struct hsnap *h, size_t k, size_t limit, int json)
{
	const struct hsnap_keep *kp = &h->keep[0];
	struct hdom d;
	int rc = build(&d, kp);
	if (rc)
		return rc;
	/* Per object: its metatable's index + 1; per table: its __name. */
	uint64_t *mt = calloc(kp->n + 1, sizeof *mt);
	uint64_t *nm = calloc(kp->n + 1, sizeof *nm);
	struct groups g = {NULL, 0, 0, HMAP_INIT};
	char name[PATH_CAP];
	if (!mt || !nm)
		goto oom;
	for (size_t i = 0; i < kp->ne; i++) {
		const struct hsnap_edge *e = &kp->e[i];
		uint64_t *s = e->kind ? hmap_get(&kp->byid, e->src) : NULL;
		uint64_t *t = hmap_get(&kp->byid, e->dst);
		if (!s || !t)
			continue;
		if (e->kind == FORMAT_HREF_METATABLE)
			mt[*s - 1] = *t;
		else if (e->kind == FORMAT_HREF_FIELD_STR && e->namelen == 6 &&
			 !memcmp(e->name, "__name", 6) &&
			 kp->v[*t - 1].type == FORMAT_HTYPE_STRING)
			nm[*s - 1] = e->dst;
	}
	for (size_t i = 0; i < kp->n; i++) {
		const struct hsnap_obj *o = &kp->v[i];
		if ((o->type != FORMAT_HTYPE_TABLE &&
		     o->type != FORMAT_HTYPE_USERDATA) ||
		    (o->flags & FORMAT_HOBJ_UNREACHABLE))
			continue;
		struct group *x = group_of(&g, mt[i] ? mt[i] : kp->n + 1);
		if (!x)
			goto oom;
		if (!x->name) {
			if (mt[i])
				mt_name(&d, kp, mt[i] - 1, nm, name,
					sizeof name);
			else
				snprintf(name, sizeof name, "(none)");
			if (!(x->name = sdup(name)))
				goto oom;
		}
		x->n++;
		x->bytes += o->size;
	}
	struct json j;
	if (json) {
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_u64(&j, "snapshot", k);
	}
	snprintf(name, sizeof name,
		 "snapshot %zu: tables and userdata by metatable (its __name, "
		 "else its path; \"(none)\" without one; garbage left out)",
		 k);
	groups_print(&g, json ? &j : NULL, "metatables", "metatable", name,
		     NULL, limit);
	if (json) {
		json_close(&j, '}');
		putchar('\n');
	}
	free(mt);
	free(nm);
	groups_free(&g);
	hdom_free(&d);
	return CLI_OK;
oom:
	free(mt);
	free(nm);
	groups_free(&g);
	hdom_free(&d);
	cli_err("heap", "out of memory");
	return CLI_USAGE;
}

/* Main thread. Group the objects of kp (those not in old, when old is not
** NULL) by allocation site into g; *nn, *nb: those without one. 0 or
** -ENOMEM. */
static int group_sites(const struct hsnap *h, const struct hsnap_keep *kp,
		       const struct hsnap_keep *old, struct groups *g,
		       uint64_t *nn, uint64_t *nb)
{
	char name[PATH_CAP];
	*nn = *nb = 0;
	for (size_t i = 0; i < kp->n; i++) {
		const struct hsnap_obj *o = &kp->v[i];
		if (old && hsnap_find(old, o->id))
			continue;
		if (!o->site || !h->heap) {
			(*nn)++;
			*nb += o->size;
			continue;
		}
		struct group *x = group_of(g, o->site);
		if (!x)
			return -ENOMEM;
		if (!x->name) {
			heap_site_text(h->heap, o->site - 1, name, sizeof name);
			if (!(x->name = sdup(name)))
				return -ENOMEM;
			x->site = o->site;
		}
		x->n++;
		x->bytes += o->size;
	}
	return 0;
}

/* Main thread. The objects without a site after groups by site: a text row
** or JSON members prefix_objects, prefix_bytes and no_site_why. */
static void nosite_print(const struct hsnap *h, const struct hsnap_one *s,
			 struct json *j, const char *prefix, uint64_t nn,
			 uint64_t nb)
{
	char key[64];
	const char *why = hsnap_nosite_why(h, s);
	if (j) {
		snprintf(key, sizeof key, "%s_objects", prefix);
		json_u64(j, key, nn);
		snprintf(key, sizeof key, "%s_bytes", prefix);
		json_u64(j, key, nb);
		json_cstr(j, "no_site_why", why);
	} else if (nn) {
		char bt[32];
		printf(
		    "%10llu %10s  (no site: %s)\n", (unsigned long long)nn,
		    cli_fmt_bytes_as(bt, sizeof bt, (int64_t)nb, CLI_BYTES_TIB),
		    why);
	}
}

/* Main thread. The sampling note of snapshot s: JSON "alloc_sampled" (null
** when exact) or a text line. */
static void sampled_print(const struct hsnap_one *s, struct json *j)
{
	if (j && !s->alloc_rate) {
		json_null(j, "alloc_sampled");
	} else if (j) {
		json_obj(j, "alloc_sampled");
		json_u64(j, "rate", s->alloc_rate);
		json_bool(j, "estimate", 0);
		json_close(j, '}');
	} else if (s->alloc_rate) {
		printf("allocations SAMPLED (alloc=%llu): only the objects "
		       "whose allocation was sampled have a site; counts and "
		       "bytes are of those objects, not estimates\n",
		       (unsigned long long)s->alloc_rate);
	}
}

/* Main thread. Snapshot s can carry sites: its objects have addresses
** and its VM recorded allocations. */
static int can_site(const struct hsnap *h, const struct hsnap_one *s)
{
	return s->addrs && h->heap && s->allocs;
}

/* Main thread. See heap_dom.h. */
int heap_by_site(const struct hsnap *h, size_t k, size_t limit, int json)
{
	const struct hsnap_keep *kp = &h->keep[0];
	const struct hsnap_one *s = &h->s[k - 1];
	struct groups g = {NULL, 0, 0, HMAP_INIT};
	uint64_t nn, nb;
	int has = can_site(h, s), any = 0;
	for (size_t i = 0; h->heap && i < h->heap->nvm; i++)
		any |=
		    h->heap->vms[i]->alloc_count || h->heap->vms[i]->free_count;
	if (s->addrs && !any) {
		cli_err("heap",
			"--by site: this log has no allocation events; record "
			"with -e alloc (the alloc option)");
		return CLI_USAGE;
	}
	if (group_sites(h, kp, NULL, &g, &nn, &nb) < 0) {
		groups_free(&g);
		cli_err("heap", "out of memory");
		return CLI_USAGE;
	}
	struct json j;
	char title[256];
	if (json) {
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_u64(&j, "snapshot", k);
		json_u64(&j, "vm", s->vm);
		json_bool(&j, "has_sites", has);
		sampled_print(s, &j);
	} else if (!has) {
		printf("snapshot %zu: no sites: %s\n", k,
		       hsnap_nosite_why(h, s));
	} else {
		sampled_print(s, NULL);
	}
	snprintf(title, sizeof title,
		 "snapshot %zu (vm %u): objects by allocation site (where "
		 "the block each one lives in was allocated)",
		 k, s->vm);
	if (json || has) {
		groups_print(&g, json ? &j : NULL, "sites", "site", title,
			     h->heap, limit);
		nosite_print(h, s, json ? &j : NULL, "no_site", nn, nb);
	}
	if (json) {
		json_close(&j, '}');
		putchar('\n');
	}
	groups_free(&g);
	return has ? CLI_OK : CLI_TRUNCATED; /* 1: nothing to show */
}

/* Rows of --diff's largest new objects that differ only in their paths'
** table indexes ([1], [2], ...) and have one type: shown as one row. */
struct like_rows {
	size_t first;		 /* by's index of the largest row */
	uint64_t rows, n, bytes; /* rows, objects and bytes in all */
};

/* Main thread. name with each "[digits]" as "[*]", after a type byte t,
** into out (cap bytes, NUL-terminated); its length. */
static size_t like_key(const char *name, unsigned t, char *out, size_t cap)
{
	size_t k = 0;
	out[k++] = (char)(t + 1);
	for (const char *c = name; *c && k + 4 < cap; c++) {
		size_t d = 0;
		while (c[0] == '[' && c[1 + d] >= '0' && c[1 + d] <= '9')
			d++;
		if (d && c[1 + d] == ']') {
			memcpy(out + k, "[*]", 3);
			k += 3;
			c += d + 1;
		} else {
			out[k++] = *c;
		}
	}
	out[k] = '\0';
	return k;
}

/* Main thread. More bytes first, then more rows, then by's order. */
static int like_by_bytes(const void *a, const void *b)
{
	const struct like_rows *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->rows != y->rows)
		return x->rows > y->rows ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Main thread. by (sorted by bytes) in groups of like rows, biggest
** first; *m of them. NULL when out of memory. */
static struct like_rows *like_group(const struct groups *by,
				    const struct hsnap_keep *kb, size_t *m)
{
	struct intern in = INTERN_INIT;
	struct like_rows *r = calloc(by->n, sizeof *r);
	char key[PATH_CAP + 8];
	for (size_t i = 0; r && i < by->n; i++) {
		const struct hsnap_obj *o = &kb->v[by->v[i].key - 1];
		size_t kl = like_key(by->v[i].name, o->type, key, sizeof key);
		int64_t x = intern_put(&in, key, kl);
		if (x < 0) {
			free(r);
			r = NULL;
			break;
		}
		if (!r[x].rows)
			r[x].first = i;
		r[x].rows++;
		r[x].n += by->v[i].n;
		r[x].bytes += by->v[i].bytes;
	}
	*m = r ? in.n : 0; /* the interner's indexes are 0, 1, 2, ... */
	intern_free(&in);
	if (r && *m)
		qsort(r, *m, sizeof *r, like_by_bytes);
	return r;
}

/* Main thread. The text of --diff's largest new objects with what they
** hold (by, sorted; of kb), like rows as one (issue 38: 20 coroutines in
** one list were 20 rows); at most limit rows (0: all). */
static void largest_text(const struct groups *by, const struct hsnap_keep *kb,
			 size_t limit)
{
	char b1[32], key[PATH_CAP + 8];
	size_t m;
	struct like_rows *r = like_group(by, kb, &m);
	if (!r) {
		cli_err("heap", "out of memory");
		return;
	}
	size_t n = limit && limit < m ? limit : m;
	printf("largest new objects (with the new objects they hold; like "
	       "ones, [*] for their indexes, as one row):\n"
	       "%10s %10s  %s\n",
	       "objects", "bytes", "path  #ID type \"text\"");
	for (size_t i = 0; i < n; i++) {
		const struct group *x = &by->v[r[i].first];
		const struct hsnap_obj *o = &kb->v[x->key - 1];
		printf("%10llu %10s  ", (unsigned long long)r[i].n,
		       cli_fmt_bytes_as(b1, sizeof b1, (int64_t)r[i].bytes,
					CLI_BYTES_TIB));
		if (r[i].rows > 1) {
			like_key(x->name, o->type, key, sizeof key);
			printf("%s  %llu x %s, the largest #%llu ", key + 1,
			       (unsigned long long)r[i].rows,
			       format_htype_name(o->type),
			       (unsigned long long)o->id);
		} else {
			printf("%s  #%llu %s ", x->name,
			       (unsigned long long)o->id,
			       format_htype_name(o->type));
		}
		cli_quote(stdout, o->text, o->textlen > 40 ? 40 : o->textlen);
		printf("\n");
	}
	heap_more(n, m);
	free(r);
}

/* Main thread. The text of --diff's groups: growth by holder (hold), then
** the unreached new objects (un, ub), then the largest new objects with
** what they hold (by, of kb); at most limit rows each (0: all). */
static void holders_text(struct groups *hold, struct groups *by,
			 const struct hsnap_keep *kb, size_t limit, uint64_t un,
			 uint64_t ub)
{
	char b1[32];
	if (hold->n)
		qsort(hold->v, hold->n, sizeof *hold->v, by_bytes);
	if (by->n)
		qsort(by->v, by->n, sizeof *by->v, by_bytes);
	size_t n = limit && limit < hold->n ? limit : hold->n;
	printf("growth by holding path (new objects under their nearest old "
	       "holder, biggest first):\n");
	for (size_t i = 0; i < n; i++) {
		const struct group *x = &hold->v[i];
		printf("  %s: +%llu objects, %s", x->name,
		       (unsigned long long)x->held,
		       cli_fmt_bytes_as(b1, sizeof b1, (int64_t)x->bytes,
					CLI_BYTES_TIB | CLI_BYTES_PLUS));
		if (x->n > x->held)
			printf(" (and %llu objects they hold)",
			       (unsigned long long)(x->n - x->held));
		printf("\n");
	}
	heap_more(n, hold->n);
	if (un)
		printf("  no root reaches: +%llu objects, %s (garbage the GC "
		       "has not freed yet)\n",
		       (unsigned long long)un,
		       cli_fmt_bytes_as(b1, sizeof b1, (int64_t)ub,
					CLI_BYTES_TIB | CLI_BYTES_PLUS));
	if (by->n)
		largest_text(by, kb, limit);
}

/* Main thread. See heap_dom.h: on keep[1]'s dominator tree, a new object
** v's group is its highest new dominator u (v itself, or the new object
** whose immediate dominator is old or the super-root); its holder u's
** immediate dominator. */
int heap_diff_holders(const struct hsnap *h, struct json *j, size_t limit)
{
	const struct hsnap_keep *ka = &h->keep[0], *kb = &h->keep[1];
	struct hdom d;
	int rc = build(&d, kb);
	if (rc)
		return rc;
	size_t n = kb->n;
	size_t *top = malloc((n + 1) * sizeof *top);
	char *isnew = calloc(n + 1, 1);
	struct groups by = {NULL, 0, 0, HMAP_INIT}, hold = by, site = by;
	char name[PATH_CAP];
	if (!top || !isnew)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		isnew[i] = !hsnap_find(ka, kb->v[i].id);
		top[i] = HDOM_NONE;
	}
	uint64_t un = 0, ub = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isnew[i])
			continue;
		if (d.idom[i] == HDOM_NONE) {
			un++;
			ub += kb->v[i].size;
			continue;
		}
		/* Up the new dominators to a known top or the highest. */
		size_t u = i;
		while (top[u] == HDOM_NONE && d.idom[u] < n && isnew[d.idom[u]])
			u = d.idom[u];
		size_t t = top[u] != HDOM_NONE ? top[u] : u;
		for (size_t v = i; v != u; v = d.idom[v])
			top[v] = t;
		top[u] = t;
		struct group *x = group_of(&by, t + 1);
		struct group *y = x ? group_of(&hold, d.idom[t] + 1) : NULL;
		if (!y)
			goto oom;
		if (!x->name) {
			y->held++;
			path_of(&d, kb, t, name, sizeof name);
			if (!(x->name = sdup(name)))
				goto oom;
			size_t hd = d.idom[t];
			if (hd < n)
				path_of(&d, kb, hd, name, sizeof name);
			else
				snprintf(name, sizeof name, "(the roots)");
			if (!(x->holder = sdup(name)))
				goto oom;
		}
		x->n++;
		x->bytes += kb->v[i].size;
		if (!y->name && !(y->name = sdup(x->holder)))
			goto oom;
		y->n++;
		y->bytes += kb->v[i].size;
	}
	/* By site: what allocated the new objects. */
	const struct hsnap_one *sb = &h->s[kb->index - 1];
	uint64_t nn, nb;
	if (group_sites(h, kb, ka, &site, &nn, &nb) < 0)
		goto oom;
	if (j) {
		json_bool(j, "has_sites", can_site(h, sb));
		sampled_print(sb, j);
		groups_print(&site, j, "new_by_site", "site", NULL, h->heap, 0);
		nosite_print(h, sb, j, "new_no_site", nn, nb);
		groups_print(&by, j, "new_by_path", "path", NULL, NULL, 0);
		groups_print(&hold, j, "new_by_holder", "holder", NULL, NULL,
			     0);
		json_u64(j, "new_unreached_objects", un);
		json_u64(j, "new_unreached_bytes", ub);
	} else {
		holders_text(&hold, &by, kb, limit, un, ub);
		if (!can_site(h, sb)) {
			printf("new objects by site: none, %s\n",
			       hsnap_nosite_why(h, sb));
		} else {
			sampled_print(sb, NULL);
			groups_print(&site, NULL, "new_by_site", "site",
				     "new objects by allocation site:", h->heap,
				     limit);
			nosite_print(h, sb, NULL, "new_no_site", nn, nb);
		}
	}
	free(top);
	free(isnew);
	groups_free(&by);
	groups_free(&hold);
	groups_free(&site);
	hdom_free(&d);
	return 0;
oom:
	free(top);
	free(isnew);
	groups_free(&by);
	groups_free(&hold);
	groups_free(&site);
	hdom_free(&d);
	cli_err("heap", "out of memory");
	return CLI_USAGE;
}
