/*
** Synthetic ljlog log generator, to measure the reader (not a test).
** usage: mklog OUT.ljlog [EVENTS [SAMPLES]] -- a call-heavy mix with
** allocations, frees and GC events, 64k events a block; then SAMPLES timer
** samples, 4096 a block, of stacks that wander like a program's (Lua depth
** up to 16, host frames around the interpreter, a third in traces; a
** quarter of the samples in a new place, the others at another line of the
** same function).
** Deterministic.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logbuild.h"

#define NFUNC	     200
#define PER_BLOCK    65536
#define NHOST	     40	 /* HOSTSYM IDs 1000.. (1000: the interpreter) */
#define NTRACE	     100 /* TRACE IDs 2000.. */
#define SAMPLE_BLOCK 4096
#define SDEPTH	     16 /* Lua frames in a sample at most */

/* Generator state: xorshift random numbers. */
static uint64_t rng = 88172645463325252ull;

/* Any thread. Next pseudo-random number. */
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Main thread. The MAPPING of the whole log: VM, main coroutine, NFUNC
** functions (every tenth a builtin), NHOST host symbols, NTRACE traces. */
static void write_mapping(struct lblog *l)
{
	struct lbmap m;
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 100000, 0);
	map_co(&m, 2, FORMAT_CO_MAIN);
	for (int i = 0; i < NFUNC; i++) {
		char chunk[32];
		if (i % 10 == 9) {
			snprintf(chunk, sizeof chunk, "string.f%d", i);
			map_ffunc(&m, 10 + (uint64_t)i, (uint64_t)i, chunk);
		} else {
			snprintf(chunk, sizeof chunk, "@mod%d.lua", i % 7);
			map_proto(&m, 10 + (uint64_t)i, chunk, (uint64_t)i * 3,
				  2);
		}
	}
	map_hostsym(&m, 1000, 0x400000, "(luajit interpreter)",
		    "/usr/lib/libluajit-5.1.so.2", FORMAT_HOST_VM);
	for (int i = 1; i < NHOST; i++) {
		char name[32];
		snprintf(name, sizeof name, "host_fn_%d", i);
		map_hostsym(&m, 1000 + (uint64_t)i,
			    0x500000 + 0x100 * (uint64_t)i, name,
			    i < 20 ? "/usr/bin/app" : "/lib/libc.so.6", 0);
	}
	for (int i = 0; i < NTRACE; i++)
		map_trace(&m, 2000 + (uint64_t)i, 1 + (uint64_t)i,
			  10 + (uint64_t)(i * 7 % NFUNC / 10 * 10), 3, 0);
	lblog_mapping(l, &m);
}

/* Main thread. Write what l holds, then forget it (END needs only l's
** counts); the clock moves past ts. */
static void put_block(struct lblog *l, FILE *f, uint64_t ts)
{
	fwrite(l->file.buf, 1, l->file.len, f);
	l->file.len = 0;
	l->clock = ts + 1000;
}

/* The event generator's state: the call stack and the live blocks. */
struct evgen {
	uint64_t addr, live[256], stack[48];
	int depth, nlive;
};

/* Main thread. One random event for r, dt ticks after the last. */
static void add_event(struct evgen *g, struct lbev *e, uint64_t r, uint64_t dt)
{
	unsigned k = (unsigned)(r & 15);
	if (k == 0 && g->nlive < 256) {
		uint64_t fn = 10 + (r >> 8) % NFUNC;
		unsigned site =
		    (fn - 10) % 10 == 9 ? FORMAT_SITE_C : FORMAT_SITE_LUA;
		g->addr += 16 + ((r >> 20) & 0x3f0);
		g->live[g->nlive++] = g->addr;
		ev_alloc(e, site, fn, (r >> 30) & 63, 32, g->addr, dt);
	} else if (k == 1 && g->nlive > 0) {
		ev_free(e, g->live[--g->nlive], 32, dt);
	} else if (k == 2 && (r >> 40) % 64 == 0) {
		ev_gc(e, (unsigned)((r >> 50) % FORMAT_GC__MAX),
		      100000 + (r >> 44), dt);
	} else if (g->depth < 2 || (k < 8 && g->depth < 40)) {
		/* Each function calls one of 3 callees: a call tree like a
		** program's, not a random one. */
		uint64_t caller = g->depth ? g->stack[g->depth - 1] : 0;
		uint64_t fn = 10 + (caller * 31 + (r >> 8) % 3) % NFUNC;
		g->stack[g->depth] = fn;
		ev_enter(e, ++g->depth, fn, dt);
	} else {
		ev_exit(e, g->depth--, dt);
	}
}

/* Main thread. total events, PER_BLOCK a block, from clock *ts on. */
static void write_events(struct lblog *l, FILE *f, uint64_t total, uint64_t *ts)
{
	struct evgen g = {.addr = 0x10000000};
	struct lbev e;
	uint64_t done = 0;
	while (done < total) {
		uint64_t base = *ts;
		ev_begin(&e);
		if (done == 0) {
			ev_vm(&e, FORMAT_VM_ATTACH, 100000, 0);
			ev_switch(&e, 2, 0);
		}
		while (e.count < PER_BLOCK && done + e.count < total) {
			uint64_t r = rnd(), dt = 1 + (r >> 60);
			add_event(&g, &e, r, dt);
			*ts += dt;
		}
		done += e.count;
		lblog_events(l, 1, base, &e);
		put_block(l, f, *ts);
	}
}

/* The sample generator's state: a Lua stack of (function, line) pairs,
** outermost first, that wanders between samples. */
struct samgen {
	uint64_t lua[2 * SDEPTH];
	int depth;
};

/* Main thread. A quarter of the samples find the program elsewhere (up
** to 7 calls or returns); the rest stay in the same function. A frame's
** line is its call site, fixed while its callee runs. */
static void wander(struct samgen *g, uint64_t r)
{
	for (int k = (r >> 3) % 4 ? 0 : (int)(r & 7); k > 0; k--) {
		uint64_t q = rnd();
		if ((q & 1) && g->depth < SDEPTH) {
			uint64_t caller = g->lua[2 * g->depth - 2];
			/* Mostly the same callee. */
			uint64_t pick =
			    (q >> 8) % 8 < 6 ? 0 : 1 + (q >> 11) % 2;
			uint64_t callee = 10 + (caller * 31 + pick) % NFUNC;
			g->lua[2 * g->depth - 1] =
			    1 + (caller * 7 + callee) % 50;
			g->lua[2 * g->depth] = callee;
			g->depth++;
		} else if (g->depth > 1) {
			g->depth--;
		}
	}
}

/* Main thread. One sample for r: in a trace, idle in the host, or in the
** interpreter or C code called from Lua (one of 6 call chains). */
static void add_sample(struct samgen *g, struct lbsam *s, uint64_t r,
		       uint64_t dt)
{
	uint64_t rev[2 * SDEPTH], host[8], *lua = g->lua;
	int depth = g->depth;
	/* The innermost line changes from sample to sample. Innermost
	** first in the log: build it reversed. */
	lua[2 * depth - 1] = 1 + (r >> 20) % 8;
	for (int i = 0; i < depth; i++) {
		rev[2 * i] = lua[2 * (depth - 1 - i)];
		rev[2 * i + 1] = lua[2 * (depth - 1 - i) + 1];
	}
	unsigned kind = (unsigned)((r >> 8) % 100);
	if (kind < 33) {
		sam_add(s, dt, FORMAT_STATE_TRACE,
			2000 + lua[2 * depth - 2] % NTRACE, (uint64_t)depth,
			rev, 0, NULL);
		return;
	}
	if (kind < 36) {
		host[0] = 1000 + 1 + (r >> 30) % (NHOST - 1);
		host[1] = 1002;
		host[2] = 1001;
		sam_add(s, dt, FORMAT_STATE_IDLE, 0, 0, NULL, 3, host);
		return;
	}
	int inner = kind < 50 ? 1 + (int)((r >> 50) % 3) : 0;
	int nh = 0;
	for (int i = 0; i < inner; i++)
		host[nh++] =
		    1000 + 20 + lua[2 * depth - 2] % 6 * 3 + (uint64_t)i;
	host[nh++] = 1000;
	host[nh++] = 1003;
	host[nh++] = 1002;
	host[nh++] = 1001;
	sam_add(s, dt, inner ? FORMAT_STATE_C : FORMAT_STATE_INTERP, 0,
		(uint64_t)depth, rev, (uint64_t)nh, host);
}

/* Main thread. nsamples timer samples, SAMPLE_BLOCK a block. */
static void write_samples(struct lblog *l, FILE *f, uint64_t nsamples,
			  uint64_t *ts)
{
	struct samgen g = {.lua = {10, 1}, .depth = 1};
	uint64_t sdone = 0;
	while (sdone < nsamples) {
		struct lbsam s;
		uint64_t base = *ts;
		sam_begin(&s);
		while (s.count < SAMPLE_BLOCK && sdone + s.count < nsamples) {
			uint64_t r = rnd();
			uint64_t dt;
			wander(&g, r);
			dt = 1000 + (r >> 40) % 64;
			add_sample(&g, &s, r, dt);
			*ts += dt;
		}
		sdone += s.count;
		lblog_samples(l, 1, base, 1, s.count / 64, &s);
		put_block(l, f, *ts);
	}
}

/* Main thread. The END block: its bytes field is the file offset, known
** only to f. The offset, or -1. */
static long write_end(struct lblog *l, FILE *f)
{
	long end_off = ftell(f);
	struct lb p = {0};
	lb_uleb(&p, l->events);
	lb_uleb(&p, l->blocks);
	lb_uleb(&p, (uint64_t)end_off);
	lb_uleb(&p, l->samples_dropped);
	lb_uleb(&p, 1);
	lb_uleb(&p, l->clock);
	lb_uleb(&p, l->clock);
	lb_uleb(&p, l->clock);
	lb_uleb(&p, 0); /* stop_error: closed by the writer */
	lb_str(&p, ""); /* stop_reason */
	lb_uleb(&p, 0); /* flush_waits (version 15) */
	lb_uleb(&p, 0); /* flush_wait_ns */
	lb_uleb(&p, 0); /* events_dropped (version 17) */
	lb_uleb(&p, 0); /* buffers_dropped */
	lb_uleb(&p, 0); /* families */
	lblog_block(l, FORMAT_KIND_END, p.buf, p.len);
	fwrite(l->file.buf, 1, l->file.len, f);
	lb_free(&p);
	return end_off;
}

/* Main thread. Write the log. */
int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mklog OUT.ljlog [EVENTS [SAMPLES]]\n");
		return 2;
	}
	uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
	uint64_t nsamples = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
	FILE *f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	struct lblog l;
	uint64_t ts = 0;
	lblog_init(&l);
	lblog_intro(&l, 1);
	write_mapping(&l);
	fwrite(l.file.buf, 1, l.file.len, f);
	l.file.len = 0;
	write_events(&l, f, total, &ts);
	write_samples(&l, f, nsamples, &ts);
	long end_off = write_end(&l, f);
	lblog_free(&l);
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%s: %llu events, %llu samples, %ld bytes\n", argv[1],
	       (unsigned long long)total, (unsigned long long)nsamples,
	       end_off);
	return 0;
}
