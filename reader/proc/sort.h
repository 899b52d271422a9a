/*
** ljlog reader processors: the one sorting helper.
** Index arrays sorted by a comparator with a context; ties keep index order.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_SORT_H
#define LJLOG_READER_PROC_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Order of rows a and b: < 0 when a goes first, > 0 when b does, 0 for a
** tie (then the lower index goes first). */
typedef int (*sort_cmp)(uint32_t a, uint32_t b, const void *ctx);

/* Whether row i is kept (sort_index_where). */
typedef int (*sort_keep)(uint32_t i, const void *ctx);

/* Indices 0..n-1 sorted by cmp; caller frees. NULL when out of
** memory. */
uint32_t *sort_index(size_t n, sort_cmp cmp, const void *ctx);

/* The indices of 0..n-1 that keep accepts, sorted by cmp; *nout
** gets their number. Caller frees; NULL when out of memory. */
uint32_t *sort_index_where(size_t n, sort_keep keep, sort_cmp cmp,
			   const void *ctx, size_t *nout);

/* Three-way comparison for comparators: larger first. */
static inline int sort_desc_u64(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

/* Three-way comparison for comparators: smaller first. */
static inline int sort_asc_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

#endif
