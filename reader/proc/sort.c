/*
** ljlog reader processors: the one sorting helper.
** qsort_r over an index array, ties broken by index (so the order is stable
** whatever qsort does).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#define _GNU_SOURCE
#include "sort.h"

#include <stdlib.h>

/* The comparator and its context, for qsort_r. */
struct sorter {
	sort_cmp cmp;
	const void *ctx;
};

/* qsort_r comparison: the caller's order, then index. */
static int by_cmp(const void *a, const void *b, void *ud)
{
	const struct sorter *s = ud;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = s->cmp(i, j, s->ctx);
	return c ? c : sort_asc_u64(i, j);
}

/* Indices of 0..n-1 that keep accepts, sorted by cmp. */
uint32_t *sort_index_where(size_t n, sort_keep keep, sort_cmp cmp,
			   const void *ctx, size_t *nout)
{
	uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
	size_t m = 0;
	if (nout)
		*nout = 0;
	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!keep || keep((uint32_t)i, ctx))
			ix[m++] = (uint32_t)i;
	struct sorter s = {cmp, ctx};
	qsort_r(ix, m, sizeof *ix, by_cmp, &s);
	if (nout)
		*nout = m;
	return ix;
}

/* Indices 0..n-1 sorted by cmp. */
uint32_t *sort_index(size_t n, sort_cmp cmp, const void *ctx)
{
	return sort_index_where(n, NULL, cmp, ctx, NULL);
}
