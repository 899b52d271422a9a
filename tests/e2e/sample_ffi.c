/*
** ljlog e2e: a shared library with busy C functions, called through the
** FFI (ffi.load) by sample_cfunc.lua and the trap programs.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Any thread. Spin n rounds of integer arithmetic; the result defeats the
** optimiser. Exported: its name must show in sampled stacks. */
uint64_t ljlog_test_ffi_spin(int64_t n)
{
	volatile uint64_t x = 1;
	for (int64_t i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return x >> 33;
}

/* Any thread. A cheap leaf: the FFI called at a high rate from traces. */
double ljlog_test_ffi_leaf(double a)
{
	return sqrt(a * a + 1.0);
}

/* Any thread. Allocate and free n small blocks: calls the sanitizers
** intercept, where ThreadSanitizer delivers its late signals, so samples
** land in here under it too. */
uint64_t ljlog_test_ffi_alloc(int64_t n)
{
	uint64_t s = 0;
	for (int64_t i = 0; i < n; i++) {
		volatile char *p = malloc(64 + (size_t)(i & 63));
		if (!p)
			return 0;
		p[0] = (char)i;
		s += (unsigned char)p[0];
		free((void *)p);
	}
	return s;
}
