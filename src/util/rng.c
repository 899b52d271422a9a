/*
** ljlog rng: xorshift64* and exponential draws.
** A draw is -mean * ln(u) with u uniform in (0, 1]: the inverse of the
** exponential distribution's CDF.
*/
#include "util/rng.h"

#include <string.h>

/* Owner only. Seed r. */
void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 once: nearby seeds give unrelated states. */
	uint64_t z = seed + 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	r->s = z ? z : 0x9E3779B97F4A7C15ull;
}

/* Any context. ln(x) for x > 0: x = m * 2^e with m in [sqrt(1/2),
** sqrt(2)), ln(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.172, by
** its series (the terms left out are below 1e-10 of the result). */
double rng_log(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	int e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & ((1ull << 52) - 1)) | (1023ull << 52);
	double m;
	memcpy(&m, &b, sizeof m);
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	double z = (m - 1.0) / (m + 1.0), z2 = z * z;
	double s = 1.0 / 17;
	for (int k = 15; k >= 1; k -= 2)
		s = 1.0 / k + z2 * s;
	return 2.0 * z * s + (double)e * 0.6931471805599453;
}

/* Owner only. An exponential draw of mean `mean`. */
uint64_t rng_exp(struct rng *r, uint64_t mean)
{
	/* 53 random bits: u in (0, 1]. */
	double u =
	    (double)((rng_next(r) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double v = -rng_log(u) * (double)mean + 0.5;
	return v < 1.0 ? 1 : v > 1e18 ? (uint64_t)1e18 : (uint64_t)v;
}
