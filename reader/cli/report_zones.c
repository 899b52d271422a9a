/*
** ljlog CLI: the zones and marks of 'ljlog report' (format version 9).
** What proc/zones.c counted, per zone name, in text and JSON.
*/
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

static const struct zones *sort_z;

/* Main thread. Zone names by time, then entries, then name. */
static int by_time(const void *a, const void *b)
{
	const struct zones_name *x = &sort_z->names[*(const uint32_t *)a];
	const struct zones_name *y = &sort_z->names[*(const uint32_t *)b];
	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	if (x->entries != y->entries)
		return x->entries < y->entries ? 1 : -1;
	return strcmp(zones_str(sort_z, *(const uint32_t *)a),
		      zones_str(sort_z, *(const uint32_t *)b));
}

/* Main thread. The string indexes of zone names, sorted; *n of them
** (NULL when none or out of memory). */
static uint32_t *zone_rows(const struct zones *z, size_t *n)
{
	size_t all = intern_count(&z->strs), k = 0;
	uint32_t *r = malloc((all ? all : 1) * sizeof *r);
	*n = 0;
	if (!r)
		return NULL;
	for (uint32_t i = 0; i < all; i++)
		if (zones_is_zone(z, i))
			r[k++] = i;
	sort_z = z;
	qsort(r, k, sizeof *r, by_time);
	*n = k;
	return r;
}

/* Main thread. The "more" line after a table cut at limit rows of n. */
static void more_line(size_t n, size_t limit)
{
	if (limit && n > limit)
		printf("  … and %zu more (-n 0 for all)\n", n - limit);
}

/* Main thread. The text report's zones and marks (nothing when none). */
void report_zones_text(const struct profile *p, size_t limit)
{
	const struct zones *z = &p->zones;
	char t[32], b[32];
	size_t n;
	uint32_t *r = zone_rows(z, &n);
	if (n) {
		printf("\nZones: %zu (inclusive: a zone's figures hold its "
		       "nested zones')\n",
		       n);
		printf("  %10s  %11s  %8s  %11s  %10s  %s\n", "entries", "time",
		       "samples", "alloc bytes", "allocs", "zone");
		for (size_t i = 0; i < n && (!limit || i < limit); i++) {
			const struct zones_name *zn = &z->names[r[i]];
			printf(
			    "  %10" PRIu64 "  %11s  %8" PRIu64
			    "  %11s  %10" PRIu64 "  ",
			    zn->entries,
			    cli_fmt_time(t, sizeof t, profile_ns(p, zn->time)),
			    zn->samples,
			    cli_fmt_bytes(b, sizeof b,
					  (int64_t)zn->alloc_bytes),
			    zn->alloc_count);
			cli_quote(stdout, zones_str(z, r[i]),
				  strlen(zones_str(z, r[i])));
			putchar('\n');
		}
		more_line(n, limit);
	}
	free(r);
	if (z->nmark) {
		printf("\nMarks: %zu\n", z->nmark);
		for (size_t i = 0; i < z->nmark && (!limit || i < limit); i++) {
			const struct zones_mark *m = &z->marks[i];
			printf("  %12s  vm %u  ",
			       cli_fmt_time(t, sizeof t,
					    profile_ns(p, m->ts - p->ts_first)),
			       m->vm);
			const char *s = zones_str(z, m->text);
			cli_quote(stdout, s, strlen(s));
			putchar('\n');
		}
		more_line(z->nmark, limit);
	}
}

/* Main thread. "zones" and "marks" arrays of the JSON report (always). */
void report_zones_json(struct json *j, const struct profile *p)
{
	const struct zones *z = &p->zones;
	size_t n;
	uint32_t *r = zone_rows(z, &n);
	json_arr(j, "zones");
	for (size_t i = 0; i < n; i++) {
		const struct zones_name *zn = &z->names[r[i]];
		json_obj(j, NULL);
		json_cstr(j, "name", zones_str(z, r[i]));
		json_u64(j, "entries", zn->entries);
		json_u64(j, "time_ns", profile_ns(p, zn->time));
		json_u64(j, "samples", zn->samples);
		json_u64(j, "alloc_bytes", zn->alloc_bytes);
		json_u64(j, "alloc_count", zn->alloc_count);
		json_close(j, '}');
	}
	json_close(j, ']');
	free(r);
	json_arr(j, "marks");
	for (size_t i = 0; i < z->nmark; i++) {
		const struct zones_mark *m = &z->marks[i];
		json_obj(j, NULL);
		json_u64(j, "time_ns", profile_ns(p, m->ts - p->ts_first));
		json_u64(j, "vm", m->vm);
		json_cstr(j, "text", zones_str(z, m->text));
		json_close(j, '}');
	}
	json_close(j, ']');
}

/* Main thread. A second pass over the logs keeping only what happened in
** zone name (profile_only), the zones of first (loaded from them) saying
** when; *out the new profile. -1 done, else an exit status (message
** printed: an unknown zone lists the known ones). */
int cli_zone_load(const char *cmd, const char *const *paths, size_t n,
		  const struct profile *first, const char *name,
		  struct profile **out)
{
	char label[600];
	const char *path = cli_logs_label(paths, n, label, sizeof label);
	const struct zones *z = &first->zones;
	int64_t zi = zones_find(z, name);
	*out = NULL;
	if (zi < 0) {
		size_t n;
		uint32_t *r = zone_rows(z, &n);
		fprintf(stderr, "ljlog %s: --zone: no zone named '%s' in %s; ",
			cmd, name, path);
		if (!n)
			fputs("the log has no zones\n", stderr);
		else {
			fputs("its zones:", stderr);
			for (size_t i = 0; i < n; i++) {
				fputc(' ', stderr);
				const char *s = zones_str(z, r[i]);
				cli_quote(stderr, s, strlen(s));
			}
			fputc('\n', stderr);
		}
		free(r);
		return CLI_TRUNCATED; /* 1: nothing to report */
	}
	struct profile *q;
	char err[512];
	if (profile_new(&q, first->flags) < 0) {
		cli_err(cmd, "out of memory");
		return CLI_USAGE;
	}
	int rc = profile_only(q, first, (uint32_t)zi);
	if (!rc)
		rc = profile_decode_logs(q, paths, n, NULL, err, sizeof err);
	else
		snprintf(err, sizeof err, "out of memory");
	q->only_z = NULL; /* first may go now */
	if (!q->opened || rc == -ENOMEM) {
		cli_err(cmd, "%s", err);
		profile_free(q);
		return CLI_USAGE;
	}
	*out = q;
	return -1;
}
