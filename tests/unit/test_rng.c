/*
** Unit tests: src/util/rng.c (the PRNG, its logarithm and the exponential
** countdowns of sampled allocation).
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "util/rng.h"

Test(rng, log_matches_libm)
{
	static const double xs[] = {
	    1e-300,	1e-16,	   1.1102230246251565e-16,
	    0.001,	0.25,	   0.5,
	    0.70710678, 0.9999999, 1.0,
	    1.0000001,	1.5,	   2.0,
	    10.0,	1e10};
	for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
		double want = log(xs[i]), got = rng_log(xs[i]);
		cr_assert_leq(fabs(got - want), 1e-9 * (fabs(want) + 1e-9),
			      "ln(%g): %.17g, libm %.17g", xs[i], got, want);
	}
}

Test(rng, seeds_differ_and_zero_is_fine)
{
	struct rng a, b, z;
	rng_seed(&a, 1);
	rng_seed(&b, 2);
	rng_seed(&z, 0);
	cr_assert_neq(a.s, 0);
	cr_assert_neq(z.s, 0);
	cr_assert_neq(rng_next(&a), rng_next(&b));
	/* Same seed, same sequence. */
	rng_seed(&a, 42);
	rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(rng_next(&a), rng_next(&b));
}

/* The countdowns: exponential of mean RATE. n draws have a mean within 5
** standard errors (RATE / sqrt(n)) of RATE, a standard deviation close to
** RATE, and the share above RATE * k close to exp(-k). */
Test(rng, exponential_mean_and_shape)
{
	static const uint64_t rates[] = {512 << 10, 4096, 100};
	const int n = 200000;
	for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
		uint64_t rate = rates[r];
		struct rng g;
		rng_seed(&g, 12345 + r);
		double sum = 0, sum2 = 0;
		int above1 = 0, above3 = 0;
		for (int i = 0; i < n; i++) {
			uint64_t v = rng_exp(&g, rate);
			cr_assert_geq(v, 1);
			sum += (double)v;
			sum2 += (double)v * (double)v;
			above1 += v > rate;
			above3 += v > 3 * rate;
		}
		double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
		double se = (double)rate / sqrt(n);
		cr_assert_leq(fabs(mean - (double)rate), 5 * se + 0.5,
			      "rate %llu: mean %.1f (5 se = %.1f)",
			      (unsigned long long)rate, mean, 5 * se);
		cr_assert_leq(fabs(sd - (double)rate), 0.02 * (double)rate,
			      "rate %llu: sd %.1f", (unsigned long long)rate,
			      sd);
		/* Shares: binomial, 5 standard errors. */
		double p1 = exp(-1.0), p3 = exp(-3.0);
		if (rate >= 4096) { /* rounding to whole bytes is negligible */
			cr_assert_leq(fabs((double)above1 / n - p1),
				      5 * sqrt(p1 * (1 - p1) / n));
			cr_assert_leq(fabs((double)above3 / n - p3),
				      5 * sqrt(p3 * (1 - p3) / n));
		}
	}
}

/* What sampled allocation relies on: a block of s bytes taken off a
** countdown that is redrawn after each sample is sampled with probability
** 1 - exp(-s / RATE), the same for every block. */
Test(rng, countdown_samples_with_the_right_probability)
{
	const uint64_t rate = 4096, s = 64;
	const int n = 2000000;
	struct rng g;
	rng_seed(&g, 7);
	int64_t left = (int64_t)rng_exp(&g, rate);
	int taken = 0;
	for (int i = 0; i < n; i++) {
		if ((left -= (int64_t)s) <= 0) {
			taken++;
			left = (int64_t)rng_exp(&g, rate);
		}
	}
	double p = 1 - exp(-(double)s / (double)rate);
	double se = sqrt(p * (1 - p) / n);
	cr_assert_leq(fabs((double)taken / n - p), 5 * se,
		      "sampled %d of %d: %.6f, expected %.6f (5 se %.6f)",
		      taken, n, (double)taken / n, p, 5 * se);
}
