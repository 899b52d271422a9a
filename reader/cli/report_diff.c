/*
** ljlog CLI: 'ljlog report --base': a run against its base, per function
** and per allocation site (the matches are reader/profile_diff.c's):
** text tables sorted by the largest change, JSON "delta" objects, and
** what only the base has.
*/
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proc/fnid.h"
#include "proc/sort.h"
#include "profile/profile.h"

/* The measures a change is shown in. */
enum {
	M_SELF,
	M_TOTAL,
	M_CALLS,
	M_SAMPLES,
	M_ALLOC_BYTES,
	M_ALLOC_COUNT,
	M__N
};

/* A change within this many standard errors of the two runs' sampling is
** within sampling error ("~"): one a measure that sampled both ways would
** show as often as not. */
#define NOISE_SE 3.0

/* One row: a function (or site) of the run, of the base, or of both. */
struct drow {
	uint32_t a, b;	 /* index in the run, in the base (UINT32_MAX: none) */
	int64_t v[M__N]; /* the run's figures less the base's */
	uint64_t na, nb; /* the ordering measure in the run, in the base */
	double sa, sb;	 /* samples: the shares of all samples, in % */
	int noise;	 /* the change is within sampling error */
};

/* Main thread. Whether a change of x with standard error se is within
** sampling error (no error: only no change is). */
static int within(double x, double se)
{
	return se > 0 ? fabs(x) <= NOISE_SE * se : x == 0;
}

/* Main thread. r's sampling error. Samples: the change of the share of
** all samples, against the binomial error of both shares. A site's
** sampled bytes (alloc=RATE): the estimate's error goes with
** 1/sqrt(records), in each run that sampled. Exact figures: none. */
static void row_noise(struct drow *r, const struct profile_diff *d, int site,
		      int m)
{
	if (m == M_SAMPLES) {
		double na = (double)d->a->smp.samples,
		       nb = (double)d->b->smp.samples;
		double pa = na > 0 ? (double)r->na / na : 0,
		       pb = nb > 0 ? (double)r->nb / nb : 0;
		double var = (na > 0 ? pa * (1 - pa) / na : 0) +
			     (nb > 0 ? pb * (1 - pb) / nb : 0);
		r->sa = 100 * pa;
		r->sb = 100 * pb;
		r->noise = within(pa - pb, sqrt(var));
		return;
	}
	if (!site || m != M_ALLOC_BYTES) {
		r->noise = 0;
		return;
	}
	double var = 0;
	const struct profile *p[2] = {d->a, d->b};
	uint32_t i[2] = {r->a, r->b};
	for (int k = 0; k < 2; k++) {
		if (i[k] == UINT32_MAX || !p[k]->heap.sampled)
			continue;
		const struct heap_site *s = &p[k]->heap.sites[i[k]];
		if (s->records)
			var += (double)s->alloc_bytes * (double)s->alloc_bytes /
			       (double)s->records;
	}
	r->noise = within((double)r->v[M_ALLOC_BYTES], sqrt(var));
}

/* Main thread. Whether function i of p counted anything (a function a log
** defines but never ran has no figures). */
static int fn_ran(const struct profile *p, uint32_t i)
{
	const struct profile_fn *f;
	if (i == UINT32_MAX)
		return 0;
	f = &p->fns[i];
	return f->calls || f->total || f->samples || f->samples_total ||
	       f->alloc_count || f->free_count;
}

/* Main thread. A function's figures in p (times in ns); zero for none. */
static void fn_figs(const struct profile *p, uint32_t i, uint64_t *f)
{
	memset(f, 0, M__N * sizeof *f);
	if (i == UINT32_MAX)
		return;
	const struct profile_fn *x = &p->fns[i];
	f[M_SELF] = profile_ns(p, x->self);
	f[M_TOTAL] = profile_ns(p, x->total);
	f[M_CALLS] = x->calls;
	f[M_SAMPLES] = x->samples_self; /* as the report counts them */
	f[M_ALLOC_BYTES] = x->alloc_bytes;
	f[M_ALLOC_COUNT] = x->alloc_count;
}

/* Main thread. A site's figures in p. */
static void site_figs(const struct profile *p, uint32_t i, uint64_t *f)
{
	memset(f, 0, M__N * sizeof *f);
	if (i == UINT32_MAX)
		return;
	f[M_ALLOC_BYTES] = p->heap.sites[i].alloc_bytes;
	f[M_ALLOC_COUNT] = p->heap.sites[i].alloc_count;
}

/* Main thread. The row of a and b (either UINT32_MAX), ordered by m. */
static void row_fill(struct drow *r, const struct profile_diff *d, uint32_t a,
		     uint32_t b, int site, int m)
{
	uint64_t fa[M__N], fb[M__N];
	(site ? site_figs : fn_figs)(d->a, a, fa);
	(site ? site_figs : fn_figs)(d->b, b, fb);
	r->a = a;
	r->b = b;
	for (int k = 0; k < M__N; k++)
		r->v[k] = (int64_t)(fa[k] - fb[k]);
	r->na = fa[m];
	r->nb = fb[m];
	row_noise(r, d, site, m);
}

/* Main thread. The measure the function table orders by: self time with
** calls in both, else samples, else allocated bytes. */
static int fn_measure(const struct profile_diff *d)
{
	uint64_t calls = 0, samples = 0;
	for (size_t i = 0; i < d->a->nfn; i++) {
		calls += d->a->fns[i].calls;
		samples += d->a->fns[i].samples;
	}
	for (size_t i = 0; i < d->b->nfn; i++) {
		calls += d->b->fns[i].calls;
		samples += d->b->fns[i].samples;
	}
	return calls ? M_SELF : samples ? M_SAMPLES : M_ALLOC_BYTES;
}

/* Main thread. Rows of every function (site) of the run, then those only
** the base has; *n of them. NULL when out of memory. */
static struct drow *rows(const struct profile_diff *d, int site, int m,
			 size_t *n)
{
	size_t na = site ? d->a->heap.nsite : d->a->nfn;
	size_t nb = site ? d->b->heap.nsite : d->b->nfn;
	const uint32_t *ab = site ? d->site_b : d->fn_b;
	const uint32_t *ba = site ? d->site_a : d->fn_a;
	struct drow *r = calloc(na + nb + 1, sizeof *r);
	*n = 0;
	if (!r)
		return NULL;
	for (uint32_t i = 0; i < na; i++)
		row_fill(&r[(*n)++], d, i, ab[i], site, m);
	for (uint32_t i = 0; i < nb; i++)
		if (ba[i] == UINT32_MAX)
			row_fill(&r[(*n)++], d, UINT32_MAX, i, site, m);
	return r;
}

/* Main thread. qsort order: the largest change of the sort measure first
** (sort_key is set before sorting), then the name. */
static int sort_key;
static const struct profile_diff *sort_diff;
static int sort_site;

/* Main thread. A row's name: the function's (of the run, else of the
** base). */
static const char *row_fn_name(const struct drow *r, int site)
{
	const struct profile_diff *d = sort_diff;
	if (site) {
		const struct profile *p = r->a != UINT32_MAX ? d->a : d->b;
		uint32_t s = r->a != UINT32_MAX ? r->a : r->b;
		return p->fns[p->heap.sites[s].fn].name;
	}
	return r->a != UINT32_MAX ? d->a->fns[r->a].name : d->b->fns[r->b].name;
}

/* Changes beyond sampling error first; samples by the change of their
** share. */
static int cmp_rows(const void *x, const void *y)
{
	const struct drow *a = x, *b = y;
	if (a->noise != b->noise)
		return a->noise - b->noise;
	int c;
	if (sort_key == M_SAMPLES) {
		double da = fabs(a->sa - a->sb), db = fabs(b->sa - b->sb);
		c = da > db ? -1 : da < db;
	} else {
		uint64_t ma = a->v[sort_key] < 0 ? -(uint64_t)a->v[sort_key]
						 : (uint64_t)a->v[sort_key];
		uint64_t mb = b->v[sort_key] < 0 ? -(uint64_t)b->v[sort_key]
						 : (uint64_t)b->v[sort_key];
		c = sort_desc_u64(ma, mb);
	}
	return c ? c
		 : strcmp(row_fn_name(a, sort_site), row_fn_name(b, sort_site));
}

/* Main thread. A signed figure as text: "+1.234 ms", "-3", "+1.5 MiB". */
static const char *signed_fmt(char *buf, size_t len, int64_t v, int m)
{
	char num[32];
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	if (m == M_SELF || m == M_TOTAL)
		cli_fmt_time(num, sizeof num, u);
	else if (m == M_ALLOC_BYTES)
		cli_fmt_bytes(num, sizeof num, (int64_t)u);
	else
		snprintf(num, sizeof num, "%" PRIu64, u);
	snprintf(buf, len, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", num);
	return buf;
}

/* Main thread. An unsigned figure of measure m as text. */
static const char *plain_fmt(char *buf, size_t len, uint64_t v, int m)
{
	if (m == M_SELF || m == M_TOTAL)
		return cli_fmt_time(buf, len, v);
	if (m == M_ALLOC_BYTES)
		return cli_fmt_bytes(buf, len, (int64_t)v);
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static const char *const measure_name[M__N] = {
    "self time", "total time",	    "calls",
    "samples",	 "allocated bytes", "allocations"};

/* Main thread. One table of changes (functions, or sites), at most limit
** rows (0: all), rows that did not change left out. */
static void text_table(const struct profile_diff *d, int site, size_t limit)
{
	int m = site ? M_ALLOC_BYTES : fn_measure(d);
	size_t n, shown = 0, same = 0;
	struct drow *r = rows(d, site, m, &n);
	if (!r) {
		cli_err("report", "out of memory");
		return;
	}
	sort_key = m;
	sort_diff = d;
	sort_site = site;
	qsort(r, n, sizeof *r, cmp_rows);
	int sampled = m == M_SAMPLES ||
		      (site && (d->a->heap.sampled || d->b->heap.sampled));
	printf("\n%s: %zu, by change in %s (run less base)\n",
	       site ? "Allocation sites" : "Functions", n,
	       m == M_SAMPLES ? "their share of the samples" : measure_name[m]);
	if (sampled)
		printf(
		    "  (~: within sampling error, under %.0f standard errors "
		    "of the two runs' sampling; those last)\n",
		    NOISE_SE);
	printf("%12s %12s %12s %8s", "run", "base", "change", "change%");
	if (m == M_SAMPLES)
		printf(" %6s %6s %7s", "run%", "base%", "points");
	if (!site && m == M_SELF)
		printf(" %11s", "calls");
	if (!site && m != M_SAMPLES)
		printf(" %9s", "samples");
	printf(" %11s  %s\n", site ? "allocs" : "alloc bytes",
	       site ? "site" : "function");
	for (size_t i = 0; i < n; i++) {
		int changed = 0;
		for (int k = 0; k < M__N; k++)
			changed |= r[i].v[k] != 0;
		if (!changed) {
			same++;
			continue;
		}
		if (limit && shown == limit)
			continue;
		char a[40], b[40], c[40], e[40];
		printf("%12s %12s %12s ", plain_fmt(a, sizeof a, r[i].na, m),
		       plain_fmt(b, sizeof b, r[i].nb, m),
		       signed_fmt(c, sizeof c, r[i].v[m], m));
		if (r[i].nb)
			printf("%+7.1f%%",
			       100.0 * (double)r[i].v[m] / (double)r[i].nb);
		else
			printf("%8s", r[i].na ? "new" : "");
		if (m == M_SAMPLES)
			printf(" %5.1f%% %5.1f%% %+7.1f", r[i].sa, r[i].sb,
			       r[i].sa - r[i].sb);
		if (!site && m == M_SELF)
			printf(" %11s", signed_fmt(e, sizeof e, r[i].v[M_CALLS],
						   M_CALLS));
		if (!site && m != M_SAMPLES)
			printf(" %9s",
			       signed_fmt(e, sizeof e, r[i].v[M_SAMPLES],
					  M_SAMPLES));
		int k2 = site ? M_ALLOC_COUNT : M_ALLOC_BYTES;
		printf(" %11s %s", signed_fmt(e, sizeof e, r[i].v[k2], k2),
		       r[i].noise ? "~" : " ");
		if (site) {
			const struct profile *p =
			    r[i].a != UINT32_MAX ? d->a : d->b;
			const struct heap_site *s =
			    &p->heap
				 .sites[r[i].a != UINT32_MAX ? r[i].a : r[i].b];
			printf("%s", p->fns[s->fn].name);
			if (p->fns[s->fn].kind == FNID_LUA && s->line)
				printf(" line %" PRIu64, s->line);
			else if (p->fns[s->fn].kind == FNID_LUA)
				printf(" line ?");
		} else
			printf("%s", row_fn_name(&r[i], 0));
		int base_only =
		    site ? r[i].a == UINT32_MAX : !fn_ran(d->a, r[i].a);
		printf("%s\n", base_only ? " (only in the base)" : "");
		shown++;
	}
	if (n - same > shown)
		printf("  … and %zu more changed (-n 0 for all)\n",
		       n - same - shown);
	if (same)
		printf("  %zu without change left out\n", same);
	free(r);
}

/* Main thread. The text of 'report --base': the run's header line, the
** base's, and the tables of changes. */
void report_diff_text(const struct profile_diff *d, const char *label,
		      const char *blabel, size_t limit)
{
	char t[32], u[32];
	printf("ljlog report: %s against the base %s\n", label, blabel);
	printf("  run: ran %s; base: ran %s\n",
	       cli_fmt_time(t, sizeof t, d->a->duration_ns),
	       cli_fmt_time(u, sizeof u, d->b->duration_ns));
	text_table(d, 0, limit);
	if (d->a->heap.nsite || d->b->heap.nsite)
		text_table(d, 1, limit);
}

/* Main thread. The "delta" of a's function (site) i: the run's figures
** less the base's. */
static void delta_json(struct json *j, const struct profile_diff *d, uint32_t i,
		       int site)
{
	struct drow r;
	uint32_t b = site ? d->site_b[i] : d->fn_b[i];
	row_fill(&r, d, i, b, site, site ? M_ALLOC_BYTES : M_SAMPLES);
	json_obj(j, "delta");
	if (!site) {
		json_i64(j, "calls", r.v[M_CALLS]);
		json_i64(j, "self_ns", r.v[M_SELF]);
		json_i64(j, "total_ns", r.v[M_TOTAL]);
		json_i64(j, "samples", r.v[M_SAMPLES]);
		json_num(j, "samples_share_points", r.sa - r.sb);
		json_bool(j, "samples_within_noise", r.noise);
	}
	json_i64(j, "alloc_count", r.v[M_ALLOC_COUNT]);
	json_i64(j, "alloc_bytes", r.v[M_ALLOC_BYTES]);
	if (site)
		json_bool(j, "alloc_within_noise", r.noise);
	json_bool(j, "in_base",
		  site ? d->site_b[i] != UINT32_MAX : fn_ran(d->b, d->fn_b[i]));
	json_close(j, '}');
}

/* Main thread. See cli.h. */
void report_diff_fn_json(struct json *j, const struct profile_diff *d,
			 uint32_t fn)
{
	delta_json(j, d, fn, 0);
}

/* Main thread. See cli.h. */
void report_diff_site_json(struct json *j, const struct profile_diff *d,
			   uint32_t site)
{
	delta_json(j, d, site, 1);
}

/* Main thread. See cli.h. */
void report_diff_json(struct json *j, const struct profile_diff *d)
{
	const struct profile *b = d->b;
	json_obj(j, "base");
	report_logs_json(j, b);
	json_u64(j, "duration_ns", b->duration_ns);
	json_close(j, '}');
	json_arr(j, "base_only_functions");
	for (uint32_t i = 0; i < b->nfn; i++) {
		if (!fn_ran(b, i) || fn_ran(d->a, d->fn_a[i]))
			continue;
		const struct profile_fn *f = &b->fns[i];
		json_obj(j, NULL);
		json_cstr(j, "name", f->name);
		json_cstr(j, "kind", fnid_kind_name(f->kind));
		json_cstr(j, "file", f->file);
		json_u64(j, "line", f->line);
		json_u64(j, "calls", f->calls);
		json_u64(j, "self_ns", profile_ns(b, f->self));
		json_u64(j, "samples", f->samples);
		json_u64(j, "alloc_bytes", f->alloc_bytes);
		json_close(j, '}');
	}
	json_close(j, ']');
	json_arr(j, "base_only_sites");
	for (uint32_t i = 0; i < b->heap.nsite; i++) {
		if (d->site_a[i] != UINT32_MAX)
			continue;
		const struct heap_site *s = &b->heap.sites[i];
		json_obj(j, NULL);
		json_cstr(j, "function", b->fns[s->fn].name);
		json_u64(j, "line", s->line);
		json_u64(j, "alloc_count", s->alloc_count);
		json_u64(j, "alloc_bytes", s->alloc_bytes);
		json_close(j, '}');
	}
	json_close(j, ']');
}
