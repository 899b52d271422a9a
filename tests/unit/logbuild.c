/*
** Test-only ljlog log builder (see logbuild.h).
*/
#include "logbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -- Bytes --------------------------------------------------------------------- */

/* Test thread. Append n bytes. */
void lb_bytes(struct lb *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		b->buf = realloc(b->buf, cap);
		if (!b->buf)
			abort();
		b->cap = cap;
	}
	if (n)
		memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* Test thread. Append a u8. */
void lb_u8(struct lb *b, unsigned v)
{
	uint8_t c = (uint8_t)v;
	lb_bytes(b, &c, 1);
}

/* Test thread. Append a uleb. */
void lb_uleb(struct lb *b, uint64_t v)
{
	uint8_t tmp[BLOCKS_ULEB_MAX];
	lb_bytes(b, tmp, (size_t)(blocks_uleb_put(tmp, v) - tmp));
}

/* Test thread. Append an sleb. */
void lb_sleb(struct lb *b, int64_t v)
{
	uint8_t tmp[BLOCKS_ULEB_MAX];
	lb_bytes(b, tmp, (size_t)(blocks_sleb_put(tmp, v) - tmp));
}

/* Test thread. Append a str. */
void lb_str(struct lb *b, const char *s)
{
	size_t n = strlen(s);
	lb_uleb(b, n);
	lb_bytes(b, s, n);
}

/* Test thread. Free the buffer. */
void lb_free(struct lb *b)
{
	free(b->buf);
	memset(b, 0, sizeof *b);
}

/* -- Log ------------------------------------------------------------------------ */

/* Test thread. Start a log: magic only. */
void lblog_init(struct lblog *l)
{
	memset(l, 0, sizeof *l);
	l->clock = 1000;
	l->clock_scale = 1;
	l->counter_kind = FORMAT_COUNTER_MONO_NS;
	l->counter_hz = 1000000000;
	lb_bytes(&l->file, FORMAT_MAGIC, FORMAT_MAGIC_LEN);
}

/* Test thread. Free the log. */
void lblog_free(struct lblog *l)
{
	lb_free(&l->file);
}

/* Test thread. Append a block with a correct header. */
void lblog_block(struct lblog *l, unsigned kind, const void *payload,
		 size_t len)
{
	uint8_t hdr[FORMAT_HEADER_LEN];
	/* Versions before 13 check payloads with XXH32 (no flag). */
	unsigned flags = l->version && l->version < 13 ? 0 : FORMAT_FLAG_XXH3;
	blocks_header_pack_flags(hdr, kind, flags, payload, (uint32_t)len);
	lb_bytes(&l->file, hdr, sizeof hdr);
	lb_bytes(&l->file, payload, len);
	l->blocks++;
}

/* Test thread. A CLOCK triple: monotonic = counter * clock_scale. */
static void clock3(struct lblog *l, struct lb *p, uint64_t counter)
{
	lb_uleb(p, counter);
	lb_uleb(p, counter * l->clock_scale);
	lb_uleb(p, counter + 1700000000000000000ull);
}

/* Version of the last INTRO written (VM records depend on it). */
static uint64_t lb_intro_version = FORMAT_VERSION;

/* Test thread. Append a standard INTRO. */
void lblog_intro(struct lblog *l, uint64_t pid)
{
	lblog_intro_version(l, pid, l->version ? l->version : FORMAT_VERSION);
}

/* Test thread. Append a standard INTRO saying format version. */
void lblog_intro_version(struct lblog *l, uint64_t pid, uint64_t version)
{
	lb_intro_version = version;
	struct lb p = {0};
	l->version = version; /* the records that follow are of this version */
	lb_uleb(&p, version);
	lb_uleb(&p, 8);
	lb_uleb(&p, pid);
	lb_str(&p, "/usr/bin/luajit");
	lb_str(&p, "LuaJIT 2.1.0-test");
	lb_str(&p, "log:calls,alloc");
	lb_uleb(&p, l->counter_kind);
	lb_uleb(&p, l->ts_shift);
	lb_uleb(&p, l->counter_hz);
	clock3(l, &p, 0);
	lblog_block(l, FORMAT_KIND_INTRO, p.buf, p.len);
	lb_free(&p);
}

/* Test thread. Append an END with correct totals. */
void lblog_end(struct lblog *l)
{
	struct lb p = {0};
	lb_uleb(&p, l->events);
	lb_uleb(&p, l->blocks);
	lb_uleb(&p, l->file.len);
	lb_uleb(&p, l->samples_dropped);
	lb_uleb(&p, l->vms);
	clock3(l, &p, l->clock);
	if ((l->version ? l->version : FORMAT_VERSION) >= 5) {
		lb_uleb(&p, l->stop_error);
		lb_str(&p, l->stop_reason ? l->stop_reason : "");
	}
	if ((l->version ? l->version : FORMAT_VERSION) >= 15) {
		lb_uleb(&p, l->flush_waits);
		lb_uleb(&p, l->flush_wait_ns);
	}
	if ((l->version ? l->version : FORMAT_VERSION) >= 17) {
		uint64_t sum = 0, nfam = 0;
		for (unsigned f = 1; f < FORMAT_FAM__MAX; f++) {
			sum += l->fam_dropped[f];
			nfam += l->fam_dropped[f] != 0;
		}
		lb_uleb(&p, sum + (uint64_t)l->events_dropped_adj);
		lb_uleb(&p, l->buffers_dropped);
		lb_uleb(&p, nfam);
		for (unsigned f = 1; f < FORMAT_FAM__MAX; f++)
			if (l->fam_dropped[f]) {
				lb_uleb(&p, f);
				lb_uleb(&p, l->fam_dropped[f]);
			}
	}
	lblog_block(l, FORMAT_KIND_END, p.buf, p.len);
	lb_free(&p);
}

/* Test thread. Write to a fresh temporary file; path in a static buffer. */
const char *lblog_write(const struct lblog *l)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/ljlog-test-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	if (write(fd, l->file.buf, l->file.len) != (ssize_t)l->file.len)
		abort();
	close(fd);
	return path;
}

/* -- MAPPING --------------------------------------------------------------------- */

/* Test thread. Start a MAPPING payload for vm. */
void map_begin(struct lbmap *m, uint64_t vm)
{
	memset(m, 0, sizeof *m);
	lb_uleb(&m->p, vm);
}

/* Test thread. VM record (exact allocation). */
void map_vm(struct lbmap *m, uint64_t id, uint64_t thread, uint64_t heap,
	    uint64_t flags)
{
	map_vm_rate(m, id, thread, heap, flags, 0);
}

/* Test thread. VM record; alloc_rate (version 7) only when the last INTRO
** written said version 7 or later. */
void map_vm_rate(struct lbmap *m, uint64_t id, uint64_t thread, uint64_t heap,
		 uint64_t flags, uint64_t alloc_rate)
{
	lb_u8(&m->p, FORMAT_REC_VM);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, thread);
	lb_uleb(&m->p, heap);
	lb_uleb(&m->p, flags);
	if (lb_intro_version >= 7)
		lb_uleb(&m->p, alloc_rate);
	m->vms++;
}

/* Test thread. PROTO record without a name. */
void map_proto(struct lbmap *m, uint64_t id, const char *chunk,
	       uint64_t firstline, uint64_t numline)
{
	map_proto_named(m, id, chunk, firstline, numline, "");
}

/* Test thread. PROTO record of versions 1 to 3 (no name). */
void map_proto_v3(struct lbmap *m, uint64_t id, const char *chunk,
		  uint64_t firstline, uint64_t numline)
{
	lb_u8(&m->p, FORMAT_REC_PROTO);
	lb_uleb(&m->p, id);
	lb_str(&m->p, chunk);
	lb_uleb(&m->p, firstline);
	lb_uleb(&m->p, numline);
}

/* Test thread. PROTO record (version 4: with its name). */
void map_proto_named(struct lbmap *m, uint64_t id, const char *chunk,
		     uint64_t firstline, uint64_t numline, const char *name)
{
	lb_u8(&m->p, FORMAT_REC_PROTO);
	lb_uleb(&m->p, id);
	lb_str(&m->p, chunk);
	lb_uleb(&m->p, firstline);
	lb_uleb(&m->p, numline);
	lb_str(&m->p, name);
}

/* Test thread. CFUNC record. */
void map_cfunc(struct lbmap *m, uint64_t id, uint64_t addr, const char *name,
	       const char *object)
{
	lb_u8(&m->p, FORMAT_REC_CFUNC);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, addr);
	lb_str(&m->p, name);
	lb_str(&m->p, object);
}

/* Test thread. FFUNC record. */
void map_ffunc(struct lbmap *m, uint64_t id, uint64_t ffid, const char *name)
{
	lb_u8(&m->p, FORMAT_REC_FFUNC);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, ffid);
	lb_str(&m->p, name);
	lb_uleb(&m->p, 0); /* flags: gets an EXIT */
}

/* Test thread. FFUNC record of an assembler fast function (no EXIT). */
void map_ffunc_asm(struct lbmap *m, uint64_t id, uint64_t ffid,
		   const char *name)
{
	map_ffunc_flags(m, id, ffid, name, FORMAT_FF_NOEXIT);
}

/* Test thread. FFUNC record with flags (FORMAT_FF_*). */
void map_ffunc_flags(struct lbmap *m, uint64_t id, uint64_t ffid,
		     const char *name, uint64_t flags)
{
	lb_u8(&m->p, FORMAT_REC_FFUNC);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, ffid);
	lb_str(&m->p, name);
	lb_uleb(&m->p, flags);
}

/* Test thread. COROUTINE record. */
void map_co(struct lbmap *m, uint64_t id, uint64_t flags)
{
	lb_u8(&m->p, FORMAT_REC_COROUTINE);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, flags);
}

/* Test thread. TRACE record without snapshots. */
void map_trace(struct lbmap *m, uint64_t id, uint64_t traceno, uint64_t proto,
	       uint64_t line, uint64_t root)
{
	map_trace_snaps(m, id, traceno, proto, line, root, 0, NULL);
}

/* Test thread. TRACE record with snapshots: snaps holds, per snapshot,
** mcofs, nframes, then nframes (proto, line) pairs, outermost first; each
** snapshot's aline (version 19) is its innermost frame's line. */
void map_trace_snaps(struct lbmap *m, uint64_t id, uint64_t traceno,
		     uint64_t proto, uint64_t line, uint64_t root,
		     uint64_t nsnap, const uint64_t *snaps)
{
	map_trace_snaps_al(m, id, traceno, proto, line, root, nsnap, snaps,
			   NULL);
}

/* Test thread. The same, with each snapshot's aline, tline and kline
** fields (version 19) from alines, three per snapshot (NULL: 2 x its
** innermost frame's line, 0 without frames; then 0, 0). */
void map_trace_snaps_al(struct lbmap *m, uint64_t id, uint64_t traceno,
			uint64_t proto, uint64_t line, uint64_t root,
			uint64_t nsnap, const uint64_t *snaps,
			const uint64_t *alines)
{
	lb_u8(&m->p, FORMAT_REC_TRACE);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, traceno);
	lb_uleb(&m->p, proto);
	lb_uleb(&m->p, line);
	lb_uleb(&m->p, root);
	lb_uleb(&m->p, nsnap);
	for (uint64_t k = 0; k < nsnap; k++) {
		uint64_t nf = snaps[1];
		lb_uleb(&m->p, snaps[0]);
		lb_uleb(&m->p, nf);
		for (uint64_t j = 0; j < 2 * nf; j++)
			lb_uleb(&m->p, snaps[2 + j]);
		if (!m->version || m->version >= 19) {
			lb_uleb(&m->p, alines ? alines[3 * k]
				       : nf   ? 2 * snaps[2 * nf + 1]
					      : 0);
			lb_uleb(&m->p, alines ? alines[3 * k + 1] : 0);
			lb_uleb(&m->p, alines ? alines[3 * k + 2] : 0);
		}
		snaps += 2 + 2 * nf;
	}
}

/* Test thread. HOSTSYM record. */
void map_hostsym(struct lbmap *m, uint64_t id, uint64_t addr, const char *name,
		 const char *object, uint64_t flags)
{
	lb_u8(&m->p, FORMAT_REC_HOSTSYM);
	lb_uleb(&m->p, id);
	lb_uleb(&m->p, addr);
	lb_str(&m->p, name);
	lb_str(&m->p, object);
	lb_uleb(&m->p, flags);
}

/* Test thread. NAME record (version 14): the PROTO or CFUNC id is named
** name from here on. */
void map_name(struct lbmap *m, uint64_t id, const char *name)
{
	lb_u8(&m->p, FORMAT_REC_NAME);
	lb_uleb(&m->p, id);
	lb_str(&m->p, name);
}

/* Test thread. Append the MAPPING block. */
void lblog_mapping(struct lblog *l, struct lbmap *m)
{
	lblog_block(l, FORMAT_KIND_MAPPING, m->p.buf, m->p.len);
	l->vms += m->vms;
	lb_free(&m->p);
}

/* -- EVENTS ------------------------------------------------------------------------ */

/* Test thread. Start an events payload. */
void ev_begin(struct lbev *e)
{
	memset(e, 0, sizeof *e);
}

/* Test thread. First byte and slot delta of ENTER/EXIT. */
static void slot_op(struct lbev *e, unsigned op, int64_t slot)
{
	int64_t d = slot - e->slot;
	uint64_t z = blocks_zigzag(d);
	e->slot = slot;
	if (z < FORMAT_SLOT_ESCAPE) {
		lb_u8(&e->p, op << FORMAT_OP_SHIFT | (unsigned)z);
	} else {
		lb_u8(&e->p, op << FORMAT_OP_SHIFT | FORMAT_SLOT_ESCAPE);
		lb_sleb(&e->p, d);
	}
}

/* Test thread. ENTER. */
void ev_enter(struct lbev *e, int64_t slot, uint64_t func, uint64_t dt)
{
	slot_op(e, FORMAT_OP_ENTER, slot);
	lb_uleb(&e->p, func);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. EXIT. */
void ev_exit(struct lbev *e, int64_t slot, uint64_t dt)
{
	slot_op(e, FORMAT_OP_EXIT, slot);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. Version 12 ALLOC and FREE (the default). */
static int ev_v12(const struct lbev *e)
{
	return !e->version || e->version >= 12;
}

/* Test thread. The line field of a site: a trace site's (version 19) is 4
** x (1 + offset) + what the code called (e->call). */
static uint64_t ev_line(const struct lbev *e, unsigned site_kind, uint64_t line)
{
	if (site_kind == FORMAT_SITE_TRACE && (!e->version || e->version >= 19))
		return line << 2 | e->call;
	return line;
}

/* Test thread. ALLOC (version 12: no dt when it is 0). */
void ev_alloc(struct lbev *e, unsigned site_kind, uint64_t site, uint64_t line,
	      uint64_t size, uint64_t addr, uint64_t dt)
{
	int v12 = ev_v12(e);
	lb_u8(&e->p, FORMAT_OP_ALLOC << FORMAT_OP_SHIFT | site_kind |
			 (v12 && !dt ? FORMAT_ALLOC_NODT : 0));
	lb_uleb(&e->p, site);
	lb_uleb(&e->p, ev_line(e, site_kind, line));
	lb_uleb(&e->p, size);
	lb_sleb(&e->p, (int64_t)(addr - (v12 ? e->anext : e->addr)));
	e->addr = addr;
	e->anext = addr + format_chunk(size);
	if (!v12 || dt)
		lb_uleb(&e->p, dt);
	e->count++;
	e->allocs = 1;
}

/* Test thread. FREE (version 12: size first, no dt when it is 0). */
void ev_free(struct lbev *e, uint64_t addr, uint64_t size, uint64_t dt)
{
	e->allocs = 1;
	if (ev_v12(e)) {
		lb_u8(&e->p, FORMAT_OP_FREE << FORMAT_OP_SHIFT |
				 (dt ? 0 : FORMAT_FREE_NODT));
		lb_uleb(&e->p, size);
		lb_sleb(&e->p,
			(int64_t)(addr - (e->fprev - format_chunk(size))));
		e->addr = e->fprev = addr;
		if (dt)
			lb_uleb(&e->p, dt);
		e->count++;
		return;
	}
	lb_u8(&e->p, FORMAT_OP_FREE << FORMAT_OP_SHIFT);
	lb_sleb(&e->p, (int64_t)(addr - e->addr));
	e->addr = addr;
	lb_uleb(&e->p, size);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. REALLOC. */
void ev_realloc(struct lbev *e, unsigned site_kind, uint64_t site,
		uint64_t line, uint64_t old_addr, uint64_t old_size,
		uint64_t new_addr, uint64_t new_size, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_REALLOC << FORMAT_OP_SHIFT | site_kind);
	lb_uleb(&e->p, site);
	lb_uleb(&e->p, ev_line(e, site_kind, line));
	lb_sleb(&e->p, (int64_t)(old_addr - e->addr));
	lb_uleb(&e->p, old_size);
	lb_sleb(&e->p, (int64_t)(new_addr - old_addr));
	lb_uleb(&e->p, new_size);
	e->addr = new_addr;
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. GC. */
void ev_gc(struct lbev *e, unsigned phase, uint64_t heap, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_GC << FORMAT_OP_SHIFT | phase);
	lb_uleb(&e->p, heap);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. SWITCH. */
void ev_switch(struct lbev *e, uint64_t co, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_SWITCH << FORMAT_OP_SHIFT);
	lb_uleb(&e->p, co);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. VM (ATTACH/DETACH). */
void ev_vm(struct lbev *e, unsigned sub, uint64_t heap, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_VM << FORMAT_OP_SHIFT | sub);
	lb_uleb(&e->p, heap);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. VM TRACE_START. */
void ev_trace_start(struct lbev *e, uint64_t traceno, uint64_t proto,
		    uint64_t line, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_VM << FORMAT_OP_SHIFT | FORMAT_VM_TRACE_START);
	lb_uleb(&e->p, traceno);
	lb_uleb(&e->p, proto);
	lb_uleb(&e->p, line);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. VM TRACE_STOP. */
void ev_trace_stop(struct lbev *e, uint64_t trace, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_VM << FORMAT_OP_SHIFT | FORMAT_VM_TRACE_STOP);
	lb_uleb(&e->p, trace);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. VM TRACE_ABORT. */
void ev_trace_abort(struct lbev *e, uint64_t traceno, uint64_t proto,
		    uint64_t line, uint64_t reason, const char *msg,
		    uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_VM << FORMAT_OP_SHIFT | FORMAT_VM_TRACE_ABORT);
	lb_uleb(&e->p, traceno);
	lb_uleb(&e->p, proto);
	lb_uleb(&e->p, line);
	lb_uleb(&e->p, reason);
	lb_str(&e->p, msg);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. VM TRACE_FLUSH. */
void ev_trace_flush(struct lbev *e, uint64_t dt)
{
	lb_u8(&e->p, FORMAT_OP_VM << FORMAT_OP_SHIFT | FORMAT_VM_TRACE_FLUSH);
	lb_uleb(&e->p, dt);
	e->count++;
}

/* Test thread. Append an EVENTS block. */
void lblog_events(struct lblog *l, uint64_t vm, uint64_t base_ts,
		  struct lbev *e)
{
	struct lb p = {0};
	if (e->allocs && ev_v12(e) != (!l->version || l->version >= 12)) {
		fprintf(stderr,
			"logbuild: ALLOC/FREE events written as version %d "
			"in a log of version %d: set the lbev's version\n",
			ev_v12(e) ? 12 : 11, (int)l->version);
		abort();
	}
	lb_uleb(&p, vm);
	lb_uleb(&p, e->count);
	lb_uleb(&p, base_ts);
	l->clock += 1000;
	clock3(l, &p, l->clock);
	lb_bytes(&p, e->p.buf, e->p.len);
	lblog_block(l, FORMAT_KIND_EVENTS, p.buf, p.len);
	l->events += e->count;
	lb_free(&p);
	lb_free(&e->p);
	e->count = 0;
	e->slot = 0;
	e->addr = 0;
	e->anext = 0;
	e->fprev = 0;
	e->allocs = 0;
}

/* -- SAMPLES ------------------------------------------------------------------------ */

/* Test thread. Start a samples payload. */
void sam_begin(struct lbsam *s)
{
	memset(s, 0, sizeof *s);
}

/* Test thread. One sample (pcofs 0 in state 7). */
void sam_add(struct lbsam *s, uint64_t dt, unsigned state, uint64_t trace,
	     uint64_t nlua, const uint64_t *lua, uint64_t nhost,
	     const uint64_t *host)
{
	sam_add_pc(s, dt, state, trace, 0, nlua, lua, nhost, host);
}

/* Test thread. One sample with pcofs (written in state 7 only). */
void sam_add_pc(struct lbsam *s, uint64_t dt, unsigned state, uint64_t trace,
		uint64_t pcofs, uint64_t nlua, const uint64_t *lua,
		uint64_t nhost, const uint64_t *host)
{
	/* Version 14: state | FORMAT_STATE_TRACED carries a trace outside
	** state 7 (versions 2 to 5 write the state alone), and a sample with
	** a trace its chkofs (of the log's version, from its INTRO). */
	unsigned st = state & ~(unsigned)FORMAT_STATE_TRACED;
	int traced = st == FORMAT_STATE_TRACE || st != state;
	uint64_t chkofs = s->chkofs;
	s->chkofs = 0;
	lb_uleb(&s->p, dt);
	lb_u8(&s->p, st);
	lb_uleb(&s->p, trace);
	if (st == FORMAT_STATE_TRACE)
		lb_uleb(&s->p, pcofs);
	lb_uleb(&s->p, nlua);
	for (uint64_t i = 0; i < nlua; i++) {
		lb_uleb(&s->p, lua[2 * i]);
		lb_uleb(&s->p, lua[2 * i + 1]);
	}
	lb_uleb(&s->p, nhost);
	for (uint64_t i = 0; i < nhost; i++)
		lb_uleb(&s->p, host[i]);
	s->count++;
	/* Version 6: a STACK per sample with frames (no parent). */
	static uint64_t next_stack = LB_STACK_ID0;
	uint64_t sid = 0;
	if (nlua || nhost) {
		sid = next_stack++;
		lb_u8(&s->stacks, FORMAT_REC_STACK);
		lb_uleb(&s->stacks, sid);
		lb_uleb(&s->stacks, 0);
		lb_uleb(&s->stacks, nlua);
		for (uint64_t i = 0; i < 2 * nlua; i++)
			lb_uleb(&s->stacks, lua[i]);
		lb_uleb(&s->stacks, nhost);
		for (uint64_t i = 0; i < nhost; i++)
			lb_uleb(&s->stacks, host[i]);
	}
	lb_uleb(&s->p6, dt);
	if (s->missed) { /* version 11: the flag, then the count */
		lb_u8(&s->p6, state | FORMAT_STATE_MISSED);
		lb_uleb(&s->p6, s->missed);
		s->missed = 0;
	} else {
		lb_u8(&s->p6, state);
	}
	lb_uleb(&s->p6, sid);
	if (traced) {
		lb_uleb(&s->p6, trace);
		lb_uleb(&s->p6, pcofs);
		if (lb_intro_version >= 14)
			lb_uleb(&s->p6, chkofs);
	}
	s->v6 = 1;
}

/* Test thread. Append a SAMPLES block with every header field given. */
void lblog_samples_raw(struct lblog *l, uint64_t vm, uint64_t count,
		       uint64_t base_ts, uint64_t thread, uint64_t signals,
		       uint64_t dropped, struct lbsam *s)
{
	struct lb p = {0};
	const struct lb *sp = &s->p;
	if (s->v6 && (l->version ? l->version : FORMAT_VERSION) >= 6) {
		sp = &s->p6;
		if (s->stacks.len) {
			lb_uleb(&p, vm);
			lb_bytes(&p, s->stacks.buf, s->stacks.len);
			lblog_block(l, FORMAT_KIND_MAPPING, p.buf, p.len);
			p.len = 0;
		}
	}
	lb_uleb(&p, vm);
	lb_uleb(&p, count);
	lb_uleb(&p, base_ts);
	l->clock += 1000;
	clock3(l, &p, l->clock);
	lb_uleb(&p, thread);
	lb_uleb(&p, signals);
	lb_uleb(&p, dropped);
	lb_bytes(&p, sp->buf, sp->len);
	lblog_block(l, FORMAT_KIND_SAMPLES, p.buf, p.len);
	l->samples_dropped += dropped;
	lb_free(&p);
	lb_free(&s->p);
	lb_free(&s->p6);
	lb_free(&s->stacks);
	s->count = 0;
	s->v6 = 0;
}

/* Test thread. Append a SAMPLES block. */
void lblog_samples(struct lblog *l, uint64_t vm, uint64_t base_ts,
		   uint64_t thread, uint64_t dropped, struct lbsam *s)
{
	lblog_samples_raw(l, vm, s->count, base_ts, thread, s->count + dropped,
			  dropped, s);
}

#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__)
/* The sanitizer runtime's count (sanitizer/allocator_interface.h, which
** GCC does not ship; libasan exports the function). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

/* Test thread. See logbuild.h. */
size_t lb_heap_in_use(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
#endif
}

/* -- HEAP records ---------------------------------------------------------------- */

/* Test thread. See logbuild.h. */
void lbh_begin(struct lbheap *h, uint64_t version)
{
	h->version = version ? version : FORMAT_VERSION;
	h->addr = h->pid = h->cur = h->aprev = 0;
}

/* Test thread. See logbuild.h. */
void lbh_obj(struct lb *p, struct lbheap *h, uint64_t id, uint64_t addr,
	     unsigned type, uint64_t size, unsigned flags, const char *text)
{
	lb_u8(p, FORMAT_HEAP_OBJECT);
	if (h->version >= 16)
		lb_sleb(p, (int64_t)(id - h->pid));
	else
		lb_uleb(p, id);
	h->pid = h->cur = id;
	h->aprev = 0;
	if (h->version >= 10) {
		lb_sleb(p, (int64_t)(addr - h->addr));
		h->addr = addr;
	}
	if (h->version >= 16) {
		lb_u8(p, type | (flags & FORMAT_HOBJ_UNREACHABLE
				     ? FORMAT_HTYPE_UNREACHABLE
				     : 0));
		lb_uleb(p, size);
	} else {
		lb_u8(p, type);
		lb_uleb(p, size);
		lb_u8(p, flags);
	}
	unsigned as, hs;
	int n = 0;
	if (h->version >= 16 && type == FORMAT_HTYPE_TABLE) {
		if (sscanf(text, "array %u hash %u%n", &as, &hs, &n) != 2)
			as = hs = 0, n = 0;
		lb_uleb(p, as);
		lb_uleb(p, hs);
	}
	lb_str(p, text + n);
}

/* Test thread. See logbuild.h. */
void lbh_index(struct lb *p, struct lbheap *h, uint64_t index)
{
	if (h->version >= 16)
		lb_sleb(p, (int64_t)(index - h->aprev));
	else
		lb_uleb(p, index);
	h->aprev = index;
}

/* Test thread. See logbuild.h. */
void lbh_target(struct lb *p, struct lbheap *h, uint64_t target)
{
	if (h->version >= 16)
		lb_sleb(p, (int64_t)(target - h->cur));
	else
		lb_uleb(p, target);
	h->cur = target;
}
