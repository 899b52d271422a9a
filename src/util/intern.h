/*
** ljlog intern: the one string interner, on xxHash. Byte strings (any
** bytes, any length) get dense indexes 0, 1, 2, ... in order of first use;
** each is stored once, NUL-terminated, and never moves until intern_free.
*/
#ifndef LJLOG_UTIL_INTERN_H
#define LJLOG_UTIL_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern {
	uint32_t *slots; /* index + 1 of each slot's string, 0 = empty */
	size_t mask;	 /* slots - 1 (power of two), 0 before first use */
	uint64_t *hash;	 /* per index: its hash */
	char **str;	 /* per index: the string */
	uint32_t *len;	 /* per index: length */
	size_t n, cap;	 /* strings, room in hash/str/len */
	char **chunks;	 /* the blocks strings live in (never moved) */
	size_t nchunks;
	size_t used, room; /* in the last chunk */
};

/* Owner only. A zeroed struct intern is empty and ready. */
#define INTERN_INIT                                                            \
	{                                                                      \
		0                                                              \
	}

/* Owner only. Free the interner's memory; it is empty and usable again. */
void intern_free(struct intern *t);

/* Owner only. Index of the len bytes at s, adding them when new; -ENOMEM. */
int64_t intern_put(struct intern *t, const void *s, size_t len);

/* Owner only. Index of the len bytes at s, or -1 when absent. */
int64_t intern_find(const struct intern *t, const void *s, size_t len);

/* Owner only. The string of index i (NUL-terminated; *len its length when
** len is not NULL). Valid until intern_free. */
static inline const char *intern_str(const struct intern *t, uint32_t i,
				     size_t *len)
{
	if (len)
		*len = t->len[i];
	return t->str[i];
}

/* Owner only. Number of strings held. */
static inline size_t intern_count(const struct intern *t)
{
	return t->n;
}

#endif
