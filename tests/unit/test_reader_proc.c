/*
** Unit tests: reader/proc/sort.c (the sorting helper),
** reader/proc/fanout.c (the fan-out sink), reader/proc/folded.c (folded
** lines).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/fanout.h"
#include "proc/sort.h"
#include "proc/folded.h"

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

/* -- stacks ----------------------------------------------------------------- */

/* What stacks emits, as "line weight\n" lines. */
struct out {
	char buf[512];
	size_t n;
};

/* Test thread. Collect one line. */
static int collect(void *ud, const char *line, size_t len, uint64_t w)
{
	struct out *o = ud;
	o->n +=
	    (size_t)snprintf(o->buf + o->n, sizeof o->buf - o->n, "%.*s %llu\n",
			     (int)len, line, (unsigned long long)w);
	return 0;
}

/* Test thread. Stop at the first line. */
static int stop(void *ud, const char *line, size_t len, uint64_t w)
{
	return 42;
}

#define LUA(fn, line)                                                          \
	(SAMPLES_SF_LUA << SAMPLES_SF_SHIFT | (uint64_t)(fn) << 32 | (line))
#define STATE(st) (SAMPLES_SF_STATE << SAMPLES_SF_SHIFT | (st))

Test(stacks, samples_one_line_per_distinct_stack)
{
	struct fnid f;
	fnid_init(&f);
	cr_assert_eq(fnid_host(&f, "a b;c", "/lib/x.so"), 0);
	cr_assert_eq(fnid_host(&f, "x", "/lib/x.so"), 1);
	/* Two stacks that differ only in their state print the same line:
	** one line, their samples added, where the first one was. */
	struct samples_node nodes[] = {
	    {0, 0, 0},
	    {0, LUA(0, 3), 0},
	    {1, STATE(FORMAT_STATE_INTERP), 2},
	    {0, LUA(1, 7), 0},
	    {3, STATE(FORMAT_STATE_INTERP), 1},
	    {1, STATE(FORMAT_STATE_C), 3},
	    {0, STATE(FORMAT_STATE_IDLE), 4},
	};
	struct samples s;
	memset(&s, 0, sizeof s);
	s.fnid = &f;
	s.nodes = nodes;
	s.nnode = sizeof nodes / sizeof nodes[0];
	struct out o = {"", 0};
	cr_assert_eq(folded_samples(&s, SAMPLES_VIEW_MERGED, 0, collect, &o),
		     0);
	cr_assert_str_eq(o.buf, "a_b_c 5\nx 1\n(idle) 4\n");
	cr_assert_eq(folded_samples(&s, SAMPLES_VIEW_LUA, 0, stop, NULL), 42);
	fnid_free(&f);
}

Test(stacks, calls_one_line_per_node_with_self_time)
{
	struct fnid f;
	fnid_init(&f);
	fnid_host(&f, "a b;c", "");
	fnid_host(&f, "x", "");
	struct calls_node nodes[] = {
	    {0, UINT32_MAX, 0, 0},
	    {0, 0, 1, 10},
	    {1, 1, 1, 0}, /* no self time: no line */
	    {2, 0, 2, 7},
	};
	struct calls c;
	memset(&c, 0, sizeof c);
	c.nodes = nodes;
	c.nnode = sizeof nodes / sizeof nodes[0];
	struct out o = {"", 0};
	cr_assert_eq(folded_calls(&c, &f, FOLDED_SELF, collect, &o), 0);
	cr_assert_str_eq(o.buf, "a_b_c 10\na_b_c;x;a_b_c 7\n");
	struct out oc = {"", 0};
	cr_assert_eq(folded_calls(&c, &f, FOLDED_CALLS, collect, &oc), 0);
	cr_assert_str_eq(oc.buf, "a_b_c 1\na_b_c;x 1\na_b_c;x;a_b_c 2\n");
	fnid_free(&f);
}
