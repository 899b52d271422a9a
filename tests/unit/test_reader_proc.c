/*
** Unit tests: reader/proc/sort.c (the sorting helper) and
** reader/proc/fanout.c (the fan-out sink).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/fanout.h"
#include "proc/sort.h"

/* -- sort ------------------------------------------------------------------- */

/* Test thread. Order by the key only (ties for equal keys). */
static int by_key(uint32_t a, uint32_t b, const void *ctx)
{
	const int *k = ctx;
	return k[a] - k[b];
}

/* Test thread. Keep odd rows. */
static int odd(uint32_t i, const void *ctx)
{
	return i & 1;
}

Test(sort, orders_by_comparator_ties_by_index)
{
	static const int key[] = {3, 1, 2, 1, 3, 0, 1};
	uint32_t *ix = sort_index(7, by_key, key);
	static const uint32_t want[] = {5, 1, 3, 6, 2, 0, 4};
	cr_assert_not_null(ix);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(ix[i], want[i], "position %d: %u, want %u", i,
			     ix[i], want[i]);
	free(ix);
}

Test(sort, ties_by_index_at_any_size)
{
	/* Everything ties: the result is the identity, whatever qsort. */
	enum { N = 5000 };
	int *key = calloc(N, sizeof *key);
	uint32_t *ix = sort_index(N, by_key, key);
	cr_assert_not_null(ix);
	for (uint32_t i = 0; i < N; i++)
		cr_assert_eq(ix[i], i);
	free(ix);
	free(key);
}

Test(sort, where_keeps_rows_and_counts_them)
{
	static const int key[] = {9, 8, 7, 6, 5, 4};
	size_t n = 99;
	uint32_t *ix = sort_index_where(6, odd, by_key, key, &n);
	cr_assert_not_null(ix);
	cr_assert_eq(n, 3);
	cr_assert_eq(ix[0], 5);
	cr_assert_eq(ix[1], 3);
	cr_assert_eq(ix[2], 1);
	free(ix);
	ix = sort_index_where(0, odd, by_key, key, &n);
	cr_assert_not_null(ix, "an empty set is an array, not NULL");
	cr_assert_eq(n, 0);
	free(ix);
}

Test(sort, helpers)
{
	cr_assert_lt(sort_desc_u64(5, 3), 0);
	cr_assert_gt(sort_desc_u64(3, 5), 0);
	cr_assert_eq(sort_desc_u64(UINT64_MAX, UINT64_MAX), 0);
	cr_assert_lt(sort_asc_u64(0, UINT64_MAX), 0);
	cr_assert_gt(sort_asc_u64(UINT64_MAX, 0), 0);
}

/* -- fanout ----------------------------------------------------------------- */

/* A sink that logs what it sees into a shared string. */
struct rec {
	char name;
	char *log; /* shared: appended to */
	int fail;  /* return this from event */
};

/* Test thread. Append c and the sink's name to the log. */
static void note(struct rec *r, char c)
{
	size_t n = strlen(r->log);
	r->log[n] = r->name;
	r->log[n + 1] = c;
	r->log[n + 2] = 0;
}

/* Test thread. Callbacks that log. */
static int rec_intro(void *ud, const struct decode_intro *in)
{
	note(ud, 'i');
	return 0;
}

/* Test thread. Log an event; return the sink's fail value. */
static int rec_event(void *ud, const struct decode_event *ev)
{
	struct rec *r = ud;
	note(r, 'e');
	return r->fail;
}

/* Test thread. Log a sample. */
static int rec_sample(void *ud, const struct decode_sample *s)
{
	note(ud, 's');
	return 0;
}

/* Test thread. Log a warning. */
static void rec_warn(void *ud, const char *msg)
{
	note(ud, msg[0]);
}

Test(fanout, forwards_in_order_and_only_what_someone_wants)
{
	char log[64] = "";
	struct rec a = {'a', log, 0}, b = {'b', log, 0};
	struct decode_sink sa = {0}, sb = {0}, out;
	struct fanout f;
	sa.ud = &a;
	sa.intro = rec_intro;
	sa.event = rec_event;
	sa.warn = rec_warn;
	sb.ud = &b;
	sb.event = rec_event;
	sb.sample = rec_sample;
	sb.warn = rec_warn;
	fanout_init(&f);
	cr_assert_eq(fanout_add(&f, &sa), 0);
	cr_assert_eq(fanout_add(&f, &sb), 0);
	fanout_sink(&f, &out);
	/* No sink wants these: the decoder sees none, and skips the work. */
	cr_assert_null(out.end);
	cr_assert_null(out.record);
	cr_assert_null(out.samples);
	cr_assert_null(out.unknown);
	cr_assert_not_null(out.intro);
	cr_assert_not_null(out.sample);
	cr_assert_eq(out.intro(out.ud, NULL), 0);
	cr_assert_eq(out.event(out.ud, NULL), 0);
	cr_assert_eq(out.sample(out.ud, NULL), 0);
	out.warn(out.ud, "w");
	cr_assert_str_eq(log, "aiaebebsawbw");
}

Test(fanout, first_error_stops_the_callback)
{
	char log[64] = "";
	struct rec a = {'a', log, -ENOMEM}, b = {'b', log, 0};
	struct decode_sink sa = {0}, sb = {0}, out;
	struct fanout f;
	sa.ud = &a;
	sa.event = rec_event;
	sb.ud = &b;
	sb.event = rec_event;
	fanout_init(&f);
	fanout_add(&f, &sa);
	fanout_add(&f, &sb);
	fanout_sink(&f, &out);
	cr_assert_eq(out.event(out.ud, NULL), -ENOMEM);
	cr_assert_str_eq(log, "ae", "b never sees the event");
}

Test(fanout, holds_at_most_fanout_max)
{
	struct fanout f;
	struct decode_sink s = {0};
	fanout_init(&f);
	for (int i = 0; i < FANOUT_MAX; i++)
		cr_assert_eq(fanout_add(&f, &s), 0);
	cr_assert_eq(fanout_add(&f, &s), -ENOSPC);
}
