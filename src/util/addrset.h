/*
** ljlog addrset: a small set of addresses (the blocks sampled allocation
** recorded). Open addressing, linear probing, backward-shift deletion;
** its memory comes from libc, never from the profiled VM's allocator.
*/
#ifndef LJLOG_UTIL_ADDRSET_H
#define LJLOG_UTIL_ADDRSET_H

#include <stddef.h>
#include <stdint.h>

/* Bits of the filter in front of the table: 4096 (512 bytes). */
#define ADDRSET_FILTER_BITS 12

/* The allocator asks about every free, and almost every answer is no: a
** bit per hash value, set for each address added (a deleted one's bit
** stays until the filter is made anew), answers most of them with one
** load; the table answers the rest. */
struct addrset {
	uintptr_t *slot; /* 0 = empty */
	size_t mask;	 /* capacity - 1 (power of two); 0 before first use */
	size_t count;
	size_t stale; /* deletes since the filter was last made anew */
	uint64_t filter[(1u << ADDRSET_FILTER_BITS) / 64];
};

/* Owner only. Free the set's memory; it is empty and usable again. */
void addrset_free(struct addrset *s);

/* Owner only. Add a (not 0); 0 (added or already there) or -ENOMEM. */
int addrset_add(struct addrset *s, uintptr_t a);

/* Owner only. Remove a if present; 1 if it was there, else 0. */
int addrset_del(struct addrset *s, uintptr_t a);

/* Any context. a's hash: addresses are 8- or 16-aligned, and blocks of
** one size class are regularly spaced: mix the bits. */
static inline uint64_t addrset_hash(uintptr_t a)
{
	return (uint64_t)a * 0x9E3779B97F4A7C15ull;
}

/* Owner only. Home slot of a. */
static inline size_t addrset_home(const struct addrset *s, uintptr_t a)
{
	return (size_t)(addrset_hash(a) >> 32) & s->mask;
}

/* Any context. a's bit in the filter (from other bits than the home's). */
static inline unsigned addrset_bit(uintptr_t a)
{
	return (unsigned)(addrset_hash(a) >> (64 - ADDRSET_FILTER_BITS));
}

/* Owner only. Whether a is in the set (the allocator's hot path: an empty
** set costs one test, an address whose filter bit is clear one more). */
static inline int addrset_has(const struct addrset *s, uintptr_t a)
{
	if (!s->count)
		return 0;
	unsigned b = addrset_bit(a);
	if (!(s->filter[b >> 6] >> (b & 63) & 1))
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
