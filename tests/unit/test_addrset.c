/*
** Unit tests: src/util/addrset.c (the set of sampled block addresses).
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/addrset.h"

Test(addrset, empty_add_has_del)
{
	struct addrset s = {0};
	cr_assert_eq(addrset_has(&s, 0x1000), 0);
	cr_assert_eq(addrset_del(&s, 0x1000), 0);
	cr_assert_eq(addrset_add(&s, 0x1000), 0);
	cr_assert_eq(addrset_has(&s, 0x1000), 1);
	cr_assert_eq(addrset_has(&s, 0x1010), 0);
	cr_assert_eq(addrset_add(&s, 0x1000), 0); /* twice: once in it */
	cr_assert_eq(s.count, 1);
	cr_assert_eq(addrset_del(&s, 0x1000), 1);
	cr_assert_eq(addrset_del(&s, 0x1000), 0);
	cr_assert_eq(addrset_has(&s, 0x1000), 0);
	cr_assert_eq(s.count, 0);
	addrset_free(&s);
	cr_assert_eq(addrset_has(&s, 0x1000), 0);
}

/* Against a plain array: random adds and deletes of addresses from a small
** pool (aligned like heap blocks, so that runs and wrap-around happen),
** through growth; every member is found and nothing else. */
Test(addrset, matches_a_reference_through_growth_and_deletes)
{
	enum { POOL = 3000 };
	static unsigned char in[POOL];
	struct addrset s = {0};
	size_t count = 0;
	srand(99);
	for (int step = 0; step < 200000; step++) {
		int k = rand() % POOL;
		uintptr_t a = 0x7f0000001000u + (uintptr_t)k * 16;
		if (rand() % 3) {
			cr_assert_eq(addrset_add(&s, a), 0);
			count += !in[k];
			in[k] = 1;
		} else {
			cr_assert_eq(addrset_del(&s, a), in[k], "step %d",
				     step);
			count -= in[k];
			in[k] = 0;
		}
		cr_assert_eq(s.count, count);
		if (step % 997 == 0)
			for (int j = 0; j < POOL; j++)
				cr_assert_eq(
				    addrset_has(&s, 0x7f0000001000u +
							(uintptr_t)j * 16),
				    in[j], "step %d address %d", step, j);
	}
	/* At most half full. */
	cr_assert_leq(s.count * 2, s.mask + 1);
	addrset_free(&s);
}
