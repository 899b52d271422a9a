/*
** ljlog CLI: the heap views of 'ljlog report': what is live at the end by
** site (--leaks), live bytes by site at each interval (--heap-interval),
** and the note that allocation figures are estimates (alloc=RATE).
*/
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/heap_dom.h"
#include "decode/decode.h"
#include "logger/opts.h"
#include "proc/fanout.h"
#include "proc/fnid.h"
#include "proc/heap.h"
#include "proc/hsnap.h"
#include "profile/profile.h"

/* -- Sites ---------------------------------------------------------------------- */

/* Main thread. A site's members: function, kind, file, line. */
static void site_json(struct json *j, const struct profile *p, uint32_t s)
{
	const struct heap_site *st = &p->heap.sites[s];
	const struct profile_fn *f = &p->fns[st->fn];
	json_cstr(j, "function", f->name);
	json_cstr(j, "kind", fnid_kind_name(f->kind));
	json_cstr(j, "file", f->file);
	json_u64(j, "line", st->line);
}

/* -- Sampled allocation ------------------------------------------------------- */

/* Main thread. The estimate note of a sampled log (nothing when exact). */
void leaks_text_sampled(const struct profile *p)
{
	if (p->heap.sampled)
		printf("  allocations SAMPLED, one per %" PRIu64
		       " bytes on average: allocation counts, bytes and live "
		       "figures are estimates\n",
		       p->heap.sampled);
}

/* Main thread. "alloc_sampled": {"rate": N}, or null when exact. */
void leaks_json_sampled(struct json *j, const struct profile *p)
{
	if (!p->heap.sampled) {
		json_null(j, "alloc_sampled");
		return;
	}
	json_obj(j, "alloc_sampled");
	json_u64(j, "rate", p->heap.sampled);
	json_bool(j, "estimate", 1);
	json_close(j, '}');
}

/* -- Held or garbage: a snapshot's view of the live sites ------------------------- */

/* What one snapshot found of a site's objects (by the site's text). */
struct split_site {
	char *label;
	uint64_t held, held_bytes;	 /* a root reaches them */
	uint64_t garbage, garbage_bytes; /* UNREACHABLE: not freed yet */
};

/* A snapshot's objects by allocation site, sorted by label. */
struct split {
	size_t k, nsnap; /* the snapshot (from 1) and how many the log has */
	uint64_t live;	 /* its live bytes (a root reaches them) */
	struct split_site *v;
	size_t n;
};

/* Main thread. Free sp. */
static void split_free(struct split *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		free(sp->v[i].label);
	free(sp->v);
}

/* Sort context: none. By label. */
static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct split_site *)a)->label,
		      ((const struct split_site *)b)->label);
}

/* Main thread. Decode path into h, its objects joined with the sites of
** the allocation events when hp is not NULL (hp's fnid first); 0 or
** -1 (nothing to show). */
static int split_decode(const char *path, struct hsnap *h, struct heap *hp)
{
	char err[512];
	struct reader *r;
	struct decode *d;
	struct decode_sink sink;
	struct fanout fan;
	hsnap_sink_sites(h, hp, &fan, &sink);
	if (reader_open(&r, path, 0, err, sizeof err) < 0)
		return -1;
	if (decode_new(&d, &sink) < 0) {
		reader_close(r);
		return -1;
	}
	decode_run(r, d, err, sizeof err); /* the first pass said it all */
	decode_free(d);
	reader_close(r);
	return h->err ? -1 : 0;
}

/* Main thread. The snapshot of path with the most live bytes (as ljlog
** heap picks by default), its objects by site into sp; 0, or -1 when the
** log has none that can carry sites (or out of memory). */
static int split_load(const char *path, struct split *sp)
{
	struct hsnap h;
	memset(sp, 0, sizeof *sp);
	hsnap_init(&h, 0, 0, 0);
	int rc = split_decode(path, &h, NULL);
	for (size_t i = 0; rc == 0 && i < h.n; i++) {
		const struct hsnap_one *s = &h.s[i];
		if (!sp->k || s->bytes - s->unreachable_bytes > sp->live) {
			sp->k = i + 1;
			sp->live = s->bytes - s->unreachable_bytes;
		}
	}
	sp->nsnap = h.n;
	hsnap_free(&h);
	if (rc < 0 || !sp->k)
		return -1;
	struct fnid fnid;
	struct heap hp;
	fnid_init(&fnid);
	heap_init(&hp, &fnid);
	hsnap_init(&h, sp->k, 0, 0);
	rc = split_decode(path, &h, &hp);
	const struct hsnap_keep *kp = &h.keep[0];
	const struct hsnap_one *s = sp->k <= h.n ? &h.s[sp->k - 1] : NULL;
	if (rc == 0 && (!s || !s->addrs || !s->allocs))
		rc = -1;
	/* By site index first, then by label. */
	struct split_site *by = rc ? NULL : calloc(hp.nsite + 1, sizeof *by);
	if (!by)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < kp->n; i++) {
		const struct hsnap_obj *o = &kp->v[i];
		if (!o->site)
			continue;
		struct split_site *x = &by[o->site - 1];
		if (o->flags & FORMAT_HOBJ_UNREACHABLE) {
			x->garbage++;
			x->garbage_bytes += o->size;
		} else {
			x->held++;
			x->held_bytes += o->size;
		}
	}
	char label[640];
	for (size_t i = 0; rc == 0 && i < hp.nsite; i++) {
		if (!by[i].held && !by[i].garbage)
			continue;
		heap_site_text(&hp, (uint32_t)i, label, sizeof label);
		size_t l = strlen(label) + 1;
		if (!(by[i].label = malloc(l))) {
			rc = -1;
			break;
		}
		memcpy(by[i].label, label, l);
		by[sp->n++] = by[i];
		if (sp->n - 1 != i)
			by[i].label = NULL;
	}
	sp->v = by;
	if (rc == 0 && sp->n)
		qsort(sp->v, sp->n, sizeof *sp->v, cmp_label);
	hsnap_free(&h);
	heap_free(&hp);
	fnid_free(&fnid);
	if (rc < 0) {
		split_free(sp);
		memset(sp, 0, sizeof *sp);
	}
	return rc;
}

/* Main thread. What sp found of the site with this label, or NULL. */
static const struct split_site *split_find(const struct split *sp,
					   const char *label)
{
	struct split_site key = {(char *)label, 0, 0, 0, 0};
	return sp->n ? bsearch(&key, sp->v, sp->n, sizeof *sp->v, cmp_label)
		     : NULL;
}

/* -- Live at the end (--leaks) ---------------------------------------------------- */

/* Main thread. Sum of the sites' live bytes (allocated - freed in the log). */
static int64_t live_sum(const struct profile *p, int64_t *count)
{
	int64_t b = 0;
	*count = 0;
	for (size_t i = 0; i < p->heap.nsite; i++) {
		b += p->heap.sites[i].live_bytes;
		*count += p->heap.sites[i].live_count;
	}
	return b;
}

/* Main thread. The --leaks view as text, at most limit rows (0: all): the
** live sites; with a snapshot, split into what a root reaches there and
** garbage not collected yet, the sites of garbage only listed apart. */
void leaks_text(const struct profile *p, const char *path, size_t limit)
{
	size_t n, nleak = 0, ngarb = 0;
	int64_t count, bytes = live_sum(p, &count);
	uint64_t attach = 0;
	uint32_t *ix = heap_sorted_live(&p->heap, &n);
	char label[640], b1[32], b2[32];
	struct split sp;
	int has = split_load(path, &sp) == 0;
	for (size_t i = 0; i < p->nvm; i++)
		attach += p->vms[i].heap_attach;
	/* Per row: garbage only (the snapshot found none held). */
	char *garb = calloc(n + 1, 1);
	for (size_t i = 0; ix && garb && i < n; i++) {
		heap_site_text(&p->heap, ix[i], label, sizeof label);
		const struct split_site *x =
		    has ? split_find(&sp, label) : NULL;
		garb[i] = x && !x->held;
		ngarb += garb[i];
	}
	nleak = n - ngarb;
	printf("ljlog report --leaks: %s\n", path);
	leaks_text_sampled(p);
	if (has)
		printf("snapshot %zu of %zu (the largest: %s live) splits "
		       "what is live: held (a root reaches it there) or "
		       "garbage (no root does; the GC frees it later)\n",
		       sp.k, sp.nsnap,
		       cli_fmt_bytes_as(b1, sizeof b1, (int64_t)sp.live,
					CLI_BYTES_TIB));
	else
		printf(
		    "no heap snapshot: live figures may include garbage "
		    "the GC has not freed yet; take one while the program "
		    "runs,\n  with the option snapshot=INTERVAL or SIGNAL, "
		    "or ljlog.snapshot() (snapshot=exit comes\n  after "
		    "the main chunk returned, when its locals hold nothing)\n");
	printf("\nLive at the end of the log by allocation site: %zu sites "
	       "(sorted by live bytes)\n",
	       nleak);
	printf("  (a block is live when no FREE or REALLOC of it follows; "
	       "\"(before attach)\"\n  counts the frees of blocks allocated "
	       "before the profiler attached)\n");
	if (has)
		printf("%10s %10s %10s %10s  %s\n", "live objs", "live",
		       "held objs", "held", "site");
	else
		printf("%10s %10s  %s\n", "live objs", "live", "site");
	size_t shown = 0;
	for (size_t i = 0; ix && i < n; i++) {
		if (garb && garb[i])
			continue;
		if (limit && shown == limit)
			break;
		shown++;
		const struct heap_site *st = &p->heap.sites[ix[i]];
		heap_site_text(&p->heap, ix[i], label, sizeof label);
		printf("%10" PRId64 " %10s ", st->live_count,
		       cli_fmt_bytes_as(b1, sizeof b1, st->live_bytes,
					CLI_BYTES_TIB));
		if (has) {
			const struct split_site *x = split_find(&sp, label);
			if (x)
				printf("%10" PRIu64 " %10s ", x->held,
				       cli_fmt_bytes_as(b2, sizeof b2,
							(int64_t)x->held_bytes,
							CLI_BYTES_TIB));
			else
				printf("%10s %10s ", "-", "-");
		}
		printf(" %s\n", label);
	}
	heap_more(shown, nleak);
	if (has) {
		printf("\nGarbage in snapshot %zu, no leak: %zu sites whose "
		       "objects there no root reaches\n",
		       sp.k, ngarb);
		if (ngarb)
			printf("%10s %10s  %s\n", "objects", "bytes", "site");
		shown = 0;
		for (size_t i = 0; ix && garb && i < n; i++) {
			if (!garb[i])
				continue;
			if (limit && shown == limit)
				break;
			shown++;
			heap_site_text(&p->heap, ix[i], label, sizeof label);
			const struct split_site *x = split_find(&sp, label);
			printf("%10" PRIu64 " %10s  %s\n", x->garbage,
			       cli_fmt_bytes_as(b1, sizeof b1,
						(int64_t)x->garbage_bytes,
						CLI_BYTES_TIB),
			       label);
		}
		heap_more(shown, ngarb);
	}
	printf("\nTotal: %" PRId64 " objects, %s live by site (allocated - "
	       "freed in the log); with %s at attach: %s\n",
	       count, cli_fmt_bytes_as(b1, sizeof b1, bytes, CLI_BYTES_TIB),
	       cli_fmt_bytes_as(b2, sizeof b2, (int64_t)attach, CLI_BYTES_TIB),
	       cli_fmt_bytes_as(label, sizeof label, bytes + (int64_t)attach,
				CLI_BYTES_TIB));
	free(garb);
	free(ix);
	if (has)
		split_free(&sp);
}

/* Main thread. See cli.h. */
int leaks_need_alloc(const struct profile *p, const char *view)
{
	for (size_t i = 0; i < p->heap.nvm; i++)
		if (p->heap.vms[i]->alloc_count || p->heap.vms[i]->free_count)
			return 0;
	cli_err("report",
		"%s: this log has no allocation events; record with -e alloc "
		"(the alloc option)",
		view);
	return CLI_USAGE;
}

/* Main thread. "live_sites": every site with something live, by live
** bytes. */
void leaks_json(struct json *j, const struct profile *p)
{
	size_t n;
	uint32_t *ix = heap_sorted_live(&p->heap, &n);
	json_arr(j, "live_sites");
	for (size_t i = 0; ix && i < n; i++) {
		const struct heap_site *st = &p->heap.sites[ix[i]];
		json_obj(j, NULL);
		site_json(j, p, ix[i]);
		json_i64(j, "live_count", st->live_count);
		json_i64(j, "live_bytes", st->live_bytes);
		json_close(j, '}');
	}
	json_close(j, ']');
	free(ix);
}

/* -- Live by interval (--heap-interval) -------------------------------------------- */

/* Main thread. Parse INTERVAL ("100ms", "1s"): ns, or 0 after a message. */
uint64_t leaks_parse_interval(const char *s)
{
	uint64_t ns;
	if (opts_parse_duration(s, strlen(s), &ns) < 0 || ns == 0) {
		cli_err("report",
			"--heap-interval wants a duration with a unit, like "
			"100ms, 1s or 500us, not '%s'",
			s);
		return 0;
	}
	return ns;
}

/* Main thread. Decode the logs again into a new profile that snapshots
** the heap every ns (the time base of first, the profile of a first
** pass). Returns the exit status to return, or -1 with *out filled. */
int leaks_load_intervals(const struct profile *first, const char *const *paths,
			 size_t n, uint64_t ns, struct profile **out)
{
	struct profile *p;
	char err[512];
	*out = NULL;
	if (profile_new(&p, 0) < 0) {
		cli_err("report", "out of memory");
		return CLI_USAGE;
	}
	double ticks = (double)ns / first->ns_per_tick;
	uint64_t origin =
	    first->nclk ? first->clk_first.counter >> first->ts_shift : 0;
	heap_interval(&p->heap, origin,
		      ticks < 1 ? 1 : (uint64_t)(ticks + 0.5));
	int rc = profile_decode_logs(p, paths, n, NULL, err, sizeof err);
	if (!p->opened || rc == -ENOMEM) {
		cli_err("report", "%s", err);
		profile_free(p);
		return CLI_USAGE;
	}
	if (p->heap.iv_error) {
		cli_err("report",
			p->heap.iv_error == -E2BIG
			    ? "--heap-interval: more than %d intervals; "
			      "take a longer one"
			    : "--heap-interval: out of memory (%d intervals)",
			HEAP_IV_MAX);
		profile_free(p);
		return CLI_USAGE;
	}
	*out = p;
	return -1;
}

/* Main thread. The live bytes of site s in interval iv (0 when absent). */
static int64_t iv_live(const struct heap_iv *iv, uint32_t s)
{
	size_t lo = 0, hi = iv->nsite;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (iv->sites[m].site < s)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < iv->nsite && iv->sites[lo].site == s
		   ? iv->sites[lo].live_bytes
		   : 0;
}

/* Sort context: one interval. */
static int cmp_iv_site(const void *a, const void *b)
{
	const struct heap_iv_site *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* Main thread. iv's sites sorted by live bytes (caller frees; NULL when
** out of memory or none). */
static struct heap_iv_site *iv_sorted(const struct heap_iv *iv)
{
	if (!iv->nsite)
		return NULL;
	struct heap_iv_site *s = malloc(iv->nsite * sizeof *s);
	if (!s)
		return NULL;
	memcpy(s, iv->sites, iv->nsite * sizeof *s);
	qsort(s, iv->nsite, sizeof *s, cmp_iv_site);
	return s;
}

/* Main thread. Time of interval i's end, ns from the start of the log:
** (i + 1) intervals of ns, but the last one, which ends with the log. */
static uint64_t iv_ns(const struct profile *p, size_t i, uint64_t ns)
{
	const struct heap_iv *iv = &p->heap.ivs[i];
	uint64_t origin = p->nclk ? p->clk_first.counter >> p->ts_shift : 0;
	if (i + 1 < p->heap.niv)
		return (uint64_t)(i + 1) * ns;
	return iv->ts > origin ? profile_ns(p, iv->ts - origin) : 0;
}

/* Main thread. The --heap-interval view as text: per interval, the live
** heap and its top sites (limit, 0: 5) with the change since the last. */
void leaks_text_intervals(const struct profile *p, uint64_t ns, size_t limit)
{
	const struct heap *h = &p->heap;
	char label[640], b1[32], b2[32];
	size_t top = limit ? limit : 5;
	printf("\nLive heap by interval of %.3f ms: %zu intervals (the last "
	       "ends with the log)\n",
	       (double)ns / 1e6, h->niv);
	leaks_text_sampled(p);
	for (size_t i = 0; i < h->niv; i++) {
		const struct heap_iv *iv = &h->ivs[i],
				     *prev = i ? iv - 1 : NULL;
		int64_t d = iv->live_bytes - (prev ? prev->live_bytes : 0);
		printf("\nat %.3f ms: %s live (%s), %zu sites\n",
		       (double)iv_ns(p, i, ns) / 1e6,
		       cli_fmt_bytes_as(b1, sizeof b1, iv->live_bytes,
					CLI_BYTES_TIB),
		       cli_fmt_bytes_as(b2, sizeof b2, d,
					CLI_BYTES_TIB | CLI_BYTES_PLUS),
		       iv->nsite);
		struct heap_iv_site *s = iv_sorted(iv);
		size_t n = iv->nsite < top ? iv->nsite : top;
		if (n)
			printf("%10s %10s  %s\n", "live", "change", "site");
		for (size_t k = 0; s && k < n; k++) {
			int64_t was = prev ? iv_live(prev, s[k].site) : 0;
			heap_site_text(&p->heap, s[k].site, label,
				       sizeof label);
			printf("%10s %10s  %s\n",
			       cli_fmt_bytes_as(b1, sizeof b1, s[k].live_bytes,
						CLI_BYTES_TIB),
			       cli_fmt_bytes_as(b2, sizeof b2,
						s[k].live_bytes - was,
						CLI_BYTES_TIB | CLI_BYTES_PLUS),
			       label);
		}
		if (n < iv->nsite)
			printf("  ... %zu more sites\n", iv->nsite - n);
		free(s);
	}
}

/* Main thread. "heap_intervals": [{time_ns, live_bytes, sites: [{function,
** kind, file, line, live_bytes, change}]}], sites by live bytes. */
void leaks_json_intervals(struct json *j, const struct profile *p, uint64_t ns)
{
	const struct heap *h = &p->heap;
	json_u64(j, "heap_interval_ns", ns);
	json_arr(j, "heap_intervals");
	for (size_t i = 0; i < h->niv; i++) {
		const struct heap_iv *iv = &h->ivs[i],
				     *prev = i ? iv - 1 : NULL;
		json_obj(j, NULL);
		json_u64(j, "time_ns", iv_ns(p, i, ns));
		json_i64(j, "live_bytes", iv->live_bytes);
		json_arr(j, "sites");
		struct heap_iv_site *s = iv_sorted(iv);
		for (size_t k = 0; s && k < iv->nsite; k++) {
			int64_t was = prev ? iv_live(prev, s[k].site) : 0;
			json_obj(j, NULL);
			site_json(j, p, s[k].site);
			json_i64(j, "live_bytes", s[k].live_bytes);
			json_i64(j, "change", s[k].live_bytes - was);
			json_close(j, '}');
		}
		free(s);
		json_close(j, ']');
		json_close(j, '}');
	}
	json_close(j, ']');
}
