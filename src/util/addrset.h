/*
** ljlog addrset: a small set of addresses (the blocks sampled allocation
** recorded). Open addressing, linear probing, backward-shift deletion;
** its memory comes from libc, never from the profiled VM's allocator.
*/
#ifndef LJLOG_UTIL_ADDRSET_H
#define LJLOG_UTIL_ADDRSET_H

#include <stddef.h>
#include <stdint.h>

struct addrset {
	uintptr_t *slot; /* 0 = empty */
	size_t mask;	 /* capacity - 1 (power of two); 0 before first use */
	size_t count;
};

/* Owner only. Free the set's memory; it is empty and usable again. */
void addrset_free(struct addrset *s);

/* Owner only. Add a (not 0); 0 (added or already there) or -ENOMEM. */
int addrset_add(struct addrset *s, uintptr_t a);

/* Owner only. Remove a if present; 1 if it was there, else 0. */
int addrset_del(struct addrset *s, uintptr_t a);

/* Owner only. Home slot of a: addresses are 8- or 16-aligned, and blocks
** of one size class are regularly spaced: mix the bits. */
static inline size_t addrset_home(const struct addrset *s, uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & s->mask;
}

/* Owner only. Whether a is in the set (the allocator's hot path: an empty
** set costs one test). */
static inline int addrset_has(const struct addrset *s, uintptr_t a)
{
	if (!s->count)
		return 0;
	for (size_t i = addrset_home(s, a);; i = (i + 1) & s->mask) {
		uintptr_t v = s->slot[i];
		if (v == a)
			return 1;
		if (!v)
			return 0;
	}
}

#endif
