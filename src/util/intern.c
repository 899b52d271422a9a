/*
** ljlog intern: the one string interner, on xxHash.
*/
#include "util/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Owner only. Free the interner's memory. */
void intern_free(struct intern *t)
{
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->slots);
	free(t->hash);
	free(t->str);
	free(t->len);
	memset(t, 0, sizeof *t);
}

/* Owner only. Slot of the string (s, len, h): its own, or the empty slot
** where it would go. */
static size_t probe(const struct intern *t, const void *s, size_t len,
		    uint64_t h)
{
	size_t i = (size_t)h & t->mask;
	for (;; i = (i + 1) & t->mask) {
		uint32_t k = t->slots[i];
		if (!k)
			return i;
		k--;
		if (t->hash[k] == h && t->len[k] == len &&
		    memcmp(t->str[k], s, len) == 0)
			return i;
	}
}

/* Owner only. Index of (s, len), or -1. */
int64_t intern_find(const struct intern *t, const void *s, size_t len)
{
	if (!t->n)
		return -1;
	uint32_t k = t->slots[probe(t, s, len, XXH3_64bits(s, len))];
	return k ? (int64_t)k - 1 : -1;
}

/* Owner only. Twice the slots (64 at first), rehashed from the stored
** hashes. */
static int grow_slots(struct intern *t)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 64;
	uint32_t *s = calloc(cap, sizeof *s);
	if (!s)
		return -ENOMEM;
	for (size_t k = 0; k < t->n; k++) {
		size_t i = (size_t)t->hash[k] & (cap - 1);
		while (s[i])
			i = (i + 1) & (cap - 1);
		s[i] = (uint32_t)k + 1;
	}
	free(t->slots);
	t->slots = s;
	t->mask = cap - 1;
	return 0;
}

/* Owner only. Room for one more index and len + 1 more bytes. */
static int reserve(struct intern *t, size_t len)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		uint64_t *h = realloc(t->hash, cap * sizeof *h);
		if (h)
			t->hash = h;
		char **o = realloc(t->str, cap * sizeof *o);
		if (o)
			t->str = o;
		uint32_t *l = realloc(t->len, cap * sizeof *l);
		if (l)
			t->len = l;
		if (!h || !o || !l)
			return -ENOMEM;
		t->cap = cap;
	}
	if (!t->nchunks || t->used + len + 1 > t->room) {
		/* A new chunk; the old ones stay where they are. */
		size_t room = len + 1 > 4096 ? len + 1 : 4096;
		char **c = realloc(t->chunks, (t->nchunks + 1) * sizeof *c);
		if (!c)
			return -ENOMEM;
		t->chunks = c;
		if (!(c[t->nchunks] = malloc(room)))
			return -ENOMEM;
		t->nchunks++;
		t->used = 0;
		t->room = room;
	}
	return 0;
}

/* Owner only. Index of (s, len), added when new. */
int64_t intern_put(struct intern *t, const void *s, size_t len)
{
	if (len > UINT32_MAX || t->n >= UINT32_MAX - 1)
		return -ENOMEM;
	if (!t->slots || (t->n + 1) * 2 > t->mask + 1)
		if (grow_slots(t) < 0)
			return -ENOMEM;
	uint64_t h = XXH3_64bits(s, len);
	size_t i = probe(t, s, len, h);
	if (t->slots[i])
		return (int64_t)t->slots[i] - 1;
	if (reserve(t, len) < 0)
		return -ENOMEM;
	size_t k = t->n++;
	char *dst = t->chunks[t->nchunks - 1] + t->used;
	t->hash[k] = h;
	t->str[k] = dst;
	t->len[k] = (uint32_t)len;
	if (len)
		memcpy(dst, s, len);
	dst[len] = '\0';
	t->used += len + 1;
	t->slots[i] = (uint32_t)k + 1;
	return (int64_t)k;
}
