/*
** Unit tests: src/maps/maps.c (pointer -> ID maps).
*/
#include <criterion/criterion.h>
#include <stdlib.h>

#include "maps/maps.h"

Test(maps, lookup_insert_remove)
{
	struct maps m;
	cr_assert_eq(maps_init(&m), 0);
	cr_assert_eq(maps_lookup(&m, 0x1000), 0);
	cr_assert_eq(maps_insert(&m, 0x1000, 7), 0);
	cr_assert_eq(maps_lookup(&m, 0x1000), 7);
	cr_assert_eq(maps_remove(&m, 0x1000), 1);
	cr_assert_eq(maps_remove(&m, 0x1000), 0);
	cr_assert_eq(maps_lookup(&m, 0x1000), 0);
	maps_free(&m);
}

Test(maps, reused_address_gets_new_id)
{
	struct maps m;
	uintptr_t addr = 0x7f0000001000;
	cr_assert_eq(maps_init(&m), 0);
	uint64_t first = maps_new_id();
	cr_assert_eq(maps_insert(&m, addr, first), 0);
	/* The object is freed: the allocator wrapper forgets the address. */
	cr_assert_eq(maps_remove(&m, addr), 1);
	/* A new object at the same address is mapped afresh. */
	cr_assert_eq(maps_lookup(&m, addr), 0);
	uint64_t second = maps_new_id();
	cr_assert_eq(maps_insert(&m, addr, second), 0);
	cr_assert_neq(first, second);
	cr_assert_eq(maps_lookup(&m, addr), second);
	maps_free(&m);
}

/* Random inserts and removes (many colliding runs, growth, backward-shift
** deletion) against a plain array as the reference. */
Test(maps, matches_reference_under_churn)
{
	enum { N = 4096, STEPS = 200000 };
	static uint64_t ref[N]; /* id of key (i+1)*16, 0 = absent */
	struct maps m;
	size_t live = 0;
	srand(12345);
	cr_assert_eq(maps_init(&m), 0);
	for (int s = 0; s < STEPS; s++) {
		size_t i = (size_t)rand() % N;
		uintptr_t key = (uintptr_t)(i + 1) * 16;
		if (ref[i]) {
			cr_assert_eq(maps_lookup(&m, key), ref[i],
				     "step %d key %zu", s, i);
			cr_assert_eq(maps_remove(&m, key), 1);
			ref[i] = 0;
			live--;
		} else {
			cr_assert_eq(maps_lookup(&m, key), 0, "step %d key %zu",
				     s, i);
			ref[i] = (uint64_t)s + 1;
			cr_assert_eq(maps_insert(&m, key, ref[i]), 0);
			live++;
		}
		cr_assert_eq(m.count, live);
	}
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(maps_lookup(&m, (uintptr_t)(i + 1) * 16), ref[i]);
	maps_free(&m);
}

Test(maps, ids_are_fresh_and_increasing)
{
	uint64_t a = maps_new_id(), b = maps_new_id();
	cr_assert_geq(a, 1);
	cr_assert_gt(b, a);
}
