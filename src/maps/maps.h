/*
** ljlog pointer -> ID maps, one per VM.
** Keys are GCproto*, lua_State*, C function addresses or fast function ids.
*/
#ifndef LJLOG_MAPS_MAPS_H
#define LJLOG_MAPS_MAPS_H

#include <stddef.h>
#include <stdint.h>

/* Open-addressing hash map, linear probing, backward-shift deletion. */
struct maps {
	uintptr_t *keys; /* 0 = empty slot */
	uint64_t *ids;	 /* ID of each key */
	size_t mask;	 /* capacity - 1 (power of two) */
	size_t count;	 /* live entries */
};

/* VM thread only. Empty map; 0 or -ENOMEM. */
int maps_init(struct maps *m);

/* VM thread only. Free the map's memory. */
void maps_free(struct maps *m);

/* VM thread only. ID of key, or 0 when absent. */
uint64_t maps_lookup(const struct maps *m, uintptr_t key);

/* VM thread only. Insert key -> id (key must be absent); 0 or -ENOMEM. */
int maps_insert(struct maps *m, uintptr_t key, uint64_t id);

/* VM thread only. Remove key if present (its object is being freed: a new
** object at the same address must get a new ID); 1 if it was there. */
int maps_remove(struct maps *m, uintptr_t key);

/* Any thread. A fresh process-wide ID (>= 1), never reused. */
uint64_t maps_new_id(void);

#endif
