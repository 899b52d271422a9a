/*
** bench/cputimer_skew.c: how Linux's CPU-time timers place their signals
** when a program's rounds end in a fixed action, without LuaJIT or ljlog.
** One thread runs rounds of phase A (3 units of work) then phase B (1
** unit), so A takes 75% of the time, and ends each round with ACTION. A
** CPU-time timer (1 ms) signals the thread; the handler counts the phase
** it interrupts. Printed: A's share of the signals, against 75%.
**
** Usage: cputimer_skew thread|process none|clock|yield SECONDS UNITS
**   thread: timer_create(CLOCK_THREAD_CPUTIME_ID), as ljlog's `sample`;
**   process: CLOCK_PROCESS_CPUTIME_ID (ITIMER_PROF's clock, jit.p's);
**   none: nothing between rounds; clock: clock_gettime of the process's
**   CPU clock (LuaJIT's os.clock); yield: sched_yield.
**   UNITS: loop iterations per unit of work (a round of a few ms).
** Built and run by bench/load_split.sh. Not part of the build.
*/
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t phase;
static volatile long hits[2];
static volatile unsigned long sink;

/* Async-signal-safe. */
static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	hits[phase]++;
}

static void work(long n)
{
	unsigned long s = sink;
	for (long i = 0; i < n; i++)
		s = s * 31 + (unsigned long)i;
	sink = s;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: cputimer_skew thread|process "
				"none|clock|yield SECONDS UNITS\n");
		return 2;
	}
	int process = !strcmp(argv[1], "process");
	const char *action = argv[2];
	double secs = atof(argv[3]);
	long units = atol(argv[4]);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	sev.sigev_signo = SIGPROF;
	timer_t t;
	if (timer_create(process ? CLOCK_PROCESS_CPUTIME_ID
				 : CLOCK_THREAD_CPUTIME_ID,
			 &sev, &t) < 0) {
		perror("cputimer_skew: timer_create");
		return 1;
	}
	struct itimerspec it = {{0, 1000000}, {0, 1000000}};
	timer_settime(t, 0, &it, NULL);
	long r = 0;
	for (double c = 0; c < secs; r++) {
		phase = 0;
		work(3 * units);
		phase = 1;
		work(units);
		if (!strcmp(action, "clock"))
			c = cpu_seconds();
		else if (!strcmp(action, "yield"))
			sched_yield();
		if (r % 64 == 0 && strcmp(action, "clock"))
			c = cpu_seconds();
	}
	long a = hits[0], b = hits[1];
	printf("%s timer, %s between rounds: A %ld B %ld: A %.1f%% (75%% by "
	       "construction), %ld rounds\n",
	       argv[1], action, a, b, a + b ? 100.0 * a / (a + b) : 0.0, r);
	return 0;
}
