/*
** ljlog pointer -> ID maps.
** A free of a mapped address removes it, so reuse of the address is a new ID.
*/
#include "maps/maps.h"

#include <errno.h>
#include <stdlib.h>

#define MAPS_MIN 256

static size_t slot_of(uintptr_t key, size_t mask)
{
	uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & mask;
}

/* VM thread only. Empty map; 0 or -ENOMEM. */
int maps_init(struct maps *m)
{
	m->keys = calloc(MAPS_MIN, sizeof *m->keys);
	m->ids = calloc(MAPS_MIN, sizeof *m->ids);
	m->mask = MAPS_MIN - 1;
	m->count = 0;
	if (!m->keys || !m->ids) {
		maps_free(m);
		return -ENOMEM;
	}
	return 0;
}

/* VM thread only. Free the map's memory. */
void maps_free(struct maps *m)
{
	free(m->keys);
	free(m->ids);
	m->keys = NULL;
	m->ids = NULL;
	m->count = 0;
}

/* VM thread only. ID of key, or 0 when absent. */
uint64_t maps_lookup(const struct maps *m, uintptr_t key)
{
	if (!m->count)
		return 0;
	for (size_t i = slot_of(key, m->mask);; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return m->ids[i];
		if (m->keys[i] == 0)
			return 0;
	}
}

static int grow(struct maps *m)
{
	struct maps n;
	size_t cap = (m->mask + 1) * 2;
	n.keys = calloc(cap, sizeof *n.keys);
	n.ids = calloc(cap, sizeof *n.ids);
	n.mask = cap - 1;
	n.count = 0;
	if (!n.keys || !n.ids) {
		maps_free(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i <= m->mask; i++) {
		if (m->keys[i]) {
			size_t j = slot_of(m->keys[i], n.mask);
			while (n.keys[j])
				j = (j + 1) & n.mask;
			n.keys[j] = m->keys[i];
			n.ids[j] = m->ids[i];
			n.count++;
		}
	}
	maps_free(m);
	*m = n;
	return 0;
}

/* VM thread only. Insert key -> id (key must be absent); 0 or -ENOMEM. */
int maps_insert(struct maps *m, uintptr_t key, uint64_t id)
{
	if ((m->count + 1) * 2 > m->mask + 1 && grow(m) < 0)
		return -ENOMEM;
	size_t i = slot_of(key, m->mask);
	while (m->keys[i])
		i = (i + 1) & m->mask;
	m->keys[i] = key;
	m->ids[i] = id;
	m->count++;
	return 0;
}

/* VM thread only. Remove key if present; 1 if it was there. */
int maps_remove(struct maps *m, uintptr_t key)
{
	if (!m->count)
		return 0;
	size_t i = slot_of(key, m->mask);
	while (m->keys[i] != key) {
		if (m->keys[i] == 0)
			return 0;
		i = (i + 1) & m->mask;
	}
	/* Backward-shift: pull later entries of the run into the hole. */
	for (size_t j = (i + 1) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
		size_t home = slot_of(m->keys[j], m->mask);
		/* Move j to i when home is not cyclically in (i, j]. */
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->keys[i] = m->keys[j];
			m->ids[i] = m->ids[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->count--;
	return 1;
}

static uint64_t next_id = 1;

/* Any thread. A fresh process-wide ID (>= 1), never reused. */
uint64_t maps_new_id(void)
{
	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}
