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

#include "logger/opts.h"
#include "profile.h"

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

/* Main thread. The --leaks view as text, at most limit rows (0: all). */
void leaks_text(const struct profile *p, const char *path, size_t limit)
{
	size_t n;
	int64_t count, bytes = live_sum(p, &count);
	uint64_t attach = 0;
	uint32_t *ix = heap_sorted_live(&p->heap, &n);
	char label[640];
	for (size_t i = 0; i < p->nvm; i++)
		attach += p->vms[i].heap_attach;
	printf("ljlog report --leaks: %s\n", path);
	leaks_text_sampled(p);
	printf("\nLive at the end of the log by allocation site: %zu sites "
	       "(sorted by live bytes)\n",
	       n);
	printf("  (a block is live when no FREE or REALLOC of it follows; "
	       "\"(before attach)\"\n  counts the frees of blocks allocated "
	       "before the profiler attached)\n");
	printf("%12s %14s  %s\n", "live objs", "live bytes", "site");
	size_t shown = limit && limit < n ? limit : n;
	for (size_t i = 0; ix && i < shown; i++) {
		const struct heap_site *st = &p->heap.sites[ix[i]];
		heap_site_text(&p->heap, ix[i], label, sizeof label);
		printf("%12" PRId64 " %14" PRId64 "  %s\n", st->live_count,
		       st->live_bytes, label);
	}
	if (shown < n)
		printf("  ... %zu more (use -n 0)\n", n - shown);
	printf("\nTotal: %" PRId64 " objects, %" PRId64
	       " bytes live by site (allocated - freed in the log); with "
	       "%" PRIu64 " at attach: %" PRId64 " bytes\n",
	       count, bytes, attach, bytes + (int64_t)attach);
	free(ix);
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

/* Main thread. Decode path again into a new profile that snapshots the
** heap every ns (the time base of first, the profile of a first pass).
** Returns the exit status to return, or -1 with *out filled. */
int leaks_load_intervals(const struct profile *first, const char *path,
			 uint64_t ns, struct profile **out)
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
	int rc = profile_decode(p, path, err, sizeof err);
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
	char label[640];
	size_t top = limit ? limit : 5;
	printf("\nLive heap by interval of %.3f ms: %zu intervals (the last "
	       "ends with the log)\n",
	       (double)ns / 1e6, h->niv);
	leaks_text_sampled(p);
	for (size_t i = 0; i < h->niv; i++) {
		const struct heap_iv *iv = &h->ivs[i],
				     *prev = i ? iv - 1 : NULL;
		int64_t d = iv->live_bytes - (prev ? prev->live_bytes : 0);
		printf("\nat %.3f ms: %" PRId64 " bytes live (%+" PRId64
		       "), %zu sites\n",
		       (double)iv_ns(p, i, ns) / 1e6, iv->live_bytes, d,
		       iv->nsite);
		struct heap_iv_site *s = iv_sorted(iv);
		size_t n = iv->nsite < top ? iv->nsite : top;
		if (n)
			printf("%14s %14s  %s\n", "live bytes", "change",
			       "site");
		for (size_t k = 0; s && k < n; k++) {
			int64_t was = prev ? iv_live(prev, s[k].site) : 0;
			heap_site_text(&p->heap, s[k].site, label,
				       sizeof label);
			printf("%14" PRId64 " %+14" PRId64 "  %s\n",
			       s[k].live_bytes, s[k].live_bytes - was, label);
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
