/*
** ljlog hmap: the one u64 -> u64 hash map, on xxHash.
*/
#include "util/hmap.h"

#include <errno.h>
#include <stdlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define HMAP_MIN 64

/* Any thread. Home slot of key. */
static inline size_t home(uint64_t key, size_t mask)
{
	return (size_t)XXH3_64bits(&key, sizeof key) & mask;
}

/* Owner only. Free the map's memory. */
void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->mask = m->count = 0;
}

/* Owner only. Value pointer of key, or NULL. */
uint64_t *hmap_get(const struct hmap *m, uint64_t key)
{
	if (!m->count)
		return NULL;
	for (size_t i = home(key, m->mask);; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == 0)
			return NULL;
	}
}

/* Owner only. Rehash into twice the room (HMAP_MIN at first). */
static int grow(struct hmap *m)
{
	size_t cap = m->keys ? (m->mask + 1) * 2 : HMAP_MIN;
	struct hmap n = {calloc(cap, sizeof(uint64_t)),
			 calloc(cap, sizeof(uint64_t)), cap - 1, 0};
	if (!n.keys || !n.vals) {
		hmap_free(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < hmap_capacity(m); i++) {
		if (!m->keys[i])
			continue;
		size_t j = home(m->keys[i], n.mask);
		while (n.keys[j])
			j = (j + 1) & n.mask;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.count++;
	}
	hmap_free(m);
	*m = n;
	return 0;
}

/* Owner only. Value pointer of key, inserted (0) when absent. */
uint64_t *hmap_ref(struct hmap *m, uint64_t key, int *added)
{
	uint64_t *v = hmap_get(m, key);
	if (added)
		*added = 0;
	if (v)
		return v;
	if (!m->keys || (m->count + 1) * 2 > m->mask + 1)
		if (grow(m) < 0)
			return NULL;
	size_t i = home(key, m->mask);
	while (m->keys[i])
		i = (i + 1) & m->mask;
	m->keys[i] = key;
	m->vals[i] = 0;
	m->count++;
	if (added)
		*added = 1;
	return &m->vals[i];
}

/* Owner only. Set key -> val. */
int hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	uint64_t *v = hmap_ref(m, key, NULL);
	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

/* Owner only. Remove key if present; 1 if it was there. */
int hmap_del(struct hmap *m, uint64_t key)
{
	if (!m->count)
		return 0;
	size_t i = home(key, m->mask);
	while (m->keys[i] != key) {
		if (m->keys[i] == 0)
			return 0;
		i = (i + 1) & m->mask;
	}
	/* Backward shift: pull later entries of the run into the hole. */
	for (size_t j = (i + 1) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
		size_t h = home(m->keys[j], m->mask);
		/* Move j to i when h is not cyclically in (i, j]. */
		if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->count--;
	return 1;
}
