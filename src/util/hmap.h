/*
** ljlog hmap: the one u64 -> u64 hash map, on xxHash.
** Open addressing, linear probing, backward-shift deletion; key 0 is free.
*/
#ifndef LJLOG_UTIL_HMAP_H
#define LJLOG_UTIL_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys; /* 0 = empty slot */
	uint64_t *vals; /* value of each key */
	size_t mask;	/* capacity - 1 (power of two), 0 before first use */
	size_t count;	/* live entries */
};

/* Owner only. An empty map needs no init: zero it (no memory until the
** first insert). */
#define HMAP_INIT                                                              \
	{                                                                      \
		NULL, NULL, 0, 0                                               \
	}

/* Owner only. Free the map's memory; it is empty and usable again. */
void hmap_free(struct hmap *m);

/* Owner only (or readers excluded from writers by the caller). Pointer to
** key's value, or NULL when absent. key != 0. */
uint64_t *hmap_get(const struct hmap *m, uint64_t key);

/* Owner only. Pointer to key's value, inserting it with value 0 when
** absent (*added = 1 then, if added is not NULL); NULL when out of
** memory. The pointer is valid until the next insert. key != 0. */
uint64_t *hmap_ref(struct hmap *m, uint64_t key, int *added);

/* Owner only. Set key -> val; 0 or -ENOMEM. key != 0. */
int hmap_put(struct hmap *m, uint64_t key, uint64_t val);

/* Owner only. Remove key if present; 1 if it was there. */
int hmap_del(struct hmap *m, uint64_t key);

/* Owner only. Iterate: slot index i from 0 while i <= mask; slot i holds
** an entry when keys[i] != 0. */
static inline size_t hmap_capacity(const struct hmap *m)
{
	return m->keys ? m->mask + 1 : 0;
}

#endif
