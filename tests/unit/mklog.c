/*
** Synthetic ljlog log generator, to measure the reader (not a test).
** usage: mklog OUT.ljlog [EVENTS] -- a call-heavy mix with allocations,
** frees and GC events, 64k events a block, deterministic.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logbuild.h"

#define NFUNC	  200
#define PER_BLOCK 65536

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

/* Main thread. Write the log. */
int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mklog OUT.ljlog [EVENTS]\n");
		return 2;
	}
	uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
	FILE *f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	lblog_init(&l);
	lblog_intro(&l, 1);
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
	lblog_mapping(&l, &m);

	uint64_t ts = 0, done = 0, addr = 0x10000000, live[256], stack[48];
	int depth = 0, nlive = 0;
	fwrite(l.file.buf, 1, l.file.len, f);
	size_t flushed = l.file.len;
	while (done < total) {
		uint64_t base = ts;
		ev_begin(&e);
		if (done == 0) {
			ev_vm(&e, FORMAT_VM_ATTACH, 100000, 0);
			ev_switch(&e, 2, 0);
		}
		while (e.count < PER_BLOCK && done + e.count < total) {
			uint64_t r = rnd(), dt = 1 + (r >> 60);
			unsigned k = (unsigned)(r & 15);
			if (k == 0 && nlive < 256) {
				uint64_t fn = 10 + (r >> 8) % NFUNC;
				unsigned site = (fn - 10) % 10 == 9
						    ? FORMAT_SITE_C
						    : FORMAT_SITE_LUA;
				addr += 16 + ((r >> 20) & 0x3f0);
				live[nlive++] = addr;
				ev_alloc(&e, site, fn, (r >> 30) & 63, 32, addr,
					 dt);
			} else if (k == 1 && nlive > 0) {
				ev_free(&e, live[--nlive], 32, dt);
			} else if (k == 2 && (r >> 40) % 64 == 0) {
				ev_gc(&e,
				      (unsigned)((r >> 50) % FORMAT_GC__MAX),
				      100000 + (r >> 44), dt);
			} else if (depth < 2 || (k < 8 && depth < 40)) {
				/* Each function calls one of 3 callees: a call
				** tree like a program's, not a random one. */
				uint64_t caller = depth ? stack[depth - 1] : 0;
				uint64_t fn =
				    10 + (caller * 31 + (r >> 8) % 3) % NFUNC;
				stack[depth] = fn;
				ev_enter(&e, ++depth, fn, dt);
			} else {
				ev_exit(&e, depth--, dt);
			}
			ts += dt;
		}
		done += e.count;
		lblog_events(&l, 1, base, &e);
		fwrite(l.file.buf + flushed, 1, l.file.len - flushed, f);
		/* Keep only the counts END needs: drop the bytes written. */
		l.file.len = flushed = 0;
		l.clock = ts + 1000;
	}
	/* END's bytes field is the file offset, known only to f. */
	long end_off = ftell(f);
	struct lb p = {0};
	lb_uleb(&p, l.events);
	lb_uleb(&p, l.blocks);
	lb_uleb(&p, (uint64_t)end_off);
	lb_uleb(&p, 0);
	lb_uleb(&p, 1);
	lb_uleb(&p, l.clock);
	lb_uleb(&p, l.clock);
	lb_uleb(&p, l.clock);
	lblog_block(&l, FORMAT_KIND_END, p.buf, p.len);
	fwrite(l.file.buf, 1, l.file.len, f);
	lb_free(&p);
	lblog_free(&l);
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%s: %llu events, %ld bytes\n", argv[1],
	       (unsigned long long)total, end_off);
	return 0;
}
