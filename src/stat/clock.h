/*
** ljlog clock: the raw timestamp counter and CLOCK pairs.
** The hot path reads the counter only; readers convert with CLOCK pairs.
*/
#ifndef LJLOG_STAT_CLOCK_H
#define LJLOG_STAT_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "blocks/format.h"
#include "blocks/writer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CLOCK_KIND     FORMAT_COUNTER_TSC
#define CLOCK_TS_SHIFT 4
/* Any context, async-signal-safe. The raw counter. */
static inline uint64_t clock_now(void)
{
	return __rdtsc();
}
#else
#define CLOCK_KIND     FORMAT_COUNTER_MONO_NS
#define CLOCK_TS_SHIFT 0
/* Any context, async-signal-safe. The raw counter. */
static inline uint64_t clock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* Any context, async-signal-safe. CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_mono_ns(void);

/* Any context. Read a CLOCK triple now. */
void clock_pair_now(struct writer_clock *p);

/* Any thread. Counter ticks per second, measured once (250 us of busy
** reads, clock.c) and cached. */
uint64_t clock_hz(void);

/* Any thread. Counter ticks in ns nanoseconds (saturating). */
uint64_t clock_ticks(uint64_t ns);

#endif
