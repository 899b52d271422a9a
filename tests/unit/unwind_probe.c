/*
** Unit tests: a shared library test_unwind opens and closes, for symbols
** of an object that goes while the symbolizer runs.
*/

/* Any thread. Exported: test_unwind looks its name up. */
int unwind_probe_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return 7 * x + 3;
}
