/*
** ljlog rng: a small PRNG of our own (xorshift64*) and the exponential
** draws of sampled allocation (alloc=RATE). No libm: the natural logarithm
** is computed here.
*/
#ifndef LJLOG_UTIL_RNG_H
#define LJLOG_UTIL_RNG_H

#include <stdint.h>

/* One generator; never 0. */
struct rng {
	uint64_t s;
};

/* Owner only. Seed r (any seed: 0 is replaced by a constant). */
void rng_seed(struct rng *r, uint64_t seed);

/* Owner only. The next 64 random bits. */
static inline uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Any context. Natural logarithm of x > 0 (relative error below 1e-9). */
double rng_log(double x);

/* Owner only. A draw from the exponential distribution of mean `mean`,
** rounded to a whole number of bytes, at least 1. */
uint64_t rng_exp(struct rng *r, uint64_t mean);

#endif
