/*
** ljlog clock: CLOCK pairs and a one-time counter calibration.
*/
#include "stat/clock.h"

#include <pthread.h>

/* Any context, async-signal-safe. Nanoseconds of clock id. */
static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_mono_ns(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

/* Any context. Read a CLOCK triple now. */
void clock_pair_now(struct writer_clock *p)
{
	p->counter = clock_now();
	p->mono_ns = ns_of(CLOCK_MONOTONIC);
	p->real_ns = ns_of(CLOCK_REALTIME);
}

static uint64_t hz;
static pthread_once_t hz_once = PTHREAD_ONCE_INIT;

/* How long the calibration watches the counter: 250 us. Every process
** that attaches spends it, busy (2 ms was 0.7% of a 0.3 s program); the
** monotonic clock's reads cost tens of ns, so the rate is within about
** 0.02%, and readers convert with the log's CLOCK pairs first, with this
** rate only as their fallback (doc/format.txt, INTRO). */
#define CALIBRATE_NS 250000

/* Any thread, once (pthread_once). Measure the counter's rate. */
static void calibrate(void)
{
	if (CLOCK_KIND == FORMAT_COUNTER_MONO_NS) {
		hz = 1000000000u;
		return;
	}
	uint64_t m0 = ns_of(CLOCK_MONOTONIC), c0 = clock_now(), m1, c1;
	do {
		m1 = ns_of(CLOCK_MONOTONIC);
		c1 = clock_now();
	} while (m1 - m0 < CALIBRATE_NS);
	hz = (uint64_t)((double)(c1 - c0) * 1e9 / (double)(m1 - m0));
	if (hz == 0)
		hz = 1000000000u;
}

/* Any thread. Counter ticks per second, measured once and cached. */
uint64_t clock_hz(void)
{
	pthread_once(&hz_once, calibrate);
	return hz;
}

/* Any thread. Counter ticks in ns nanoseconds (saturating). */
uint64_t clock_ticks(uint64_t ns)
{
	double t = (double)ns * (double)clock_hz() / 1e9;
	return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}
