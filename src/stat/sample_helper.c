/*
** ljlog sampling, the drainer: the helper thread (or the VM thread before
** a sweep and at stop) empties each VM's signal buffer: Lua keys to IDs
** through the VM's mapper, host stacks unwound and symbolized, each
** distinct stack written once (a STACK record, stacks.h), SAMPLES blocks
** written. Lock order: sample.h, "Locking".
*/
#define _GNU_SOURCE
#include "stat/sample_int.h"

#include <stdio.h>
#include <string.h>

#include "stat/clock.h"
#include "util/util.h"

_Static_assert(SAMPLE_LUA_MAX <= STACKS_LUA_MAX &&
		   SAMPLE_HOST_MAX <= STACKS_HOST_MAX,
	       "a sample's frames fit a STACK");

/* Caller holds s->hostlock. HOSTSYM ID of the function containing ip, its
** record appended to b when new; ip is the interrupted address or, for
** outer frames, a return address minus 1 (a call at a function's very end
** returns into the next function). 0 when unknown or out of memory. */
static uint64_t host_id(struct sample_vm *s, struct wbuf *b, uintptr_t ip)
{
	struct unwind_sym sym;
	if (ip >= s->vm_lo && ip < s->vm_hi) {
		if (!s->vm_sym) {
			s->vm_sym = mapper_new_id();
			if (names_put_hostsym(b, s->vm_sym, s->vm_lo,
					      "(luajit interpreter)", "",
					      FORMAT_HOST_VM) < 0)
				return s->vm_sym = 0;
		}
		return s->vm_sym;
	}
	if (unwind_symbolize(s->syms, ip, &sym) < 0)
		return 0; /* in no object: JIT-compiled code */
	/* Functions without a symbol: one entry per object. */
	uintptr_t key = sym.start ? sym.start : sym.base;
	uint64_t *v = hmap_get(&s->hostmap, key), id;
	if (v)
		return *v;
	id = mapper_new_id();
	if (names_put_hostsym(b, id, key, sym.name, sym.object, 0) < 0 ||
	    hmap_put(&s->hostmap, key, id) < 0)
		return 0;
	return id;
}

/* Caller holds s->map's lock. Map the Lua keys of the entries not mapped
** yet, while their objects are surely alive, and write the new IDs at once
** (MAPPING before any block using them). A key that cannot be mapped (out
** of memory) drops that sample's Lua frames. */
void sample_map_locked(struct sample_vm *s)
{
	struct mapper *m = s->map;
	uint32_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	struct wbuf *b = &s->mapout;
	if (head == s->mapped)
		return;
	b->len = 0;
	mapper_begin(m, b);
	for (uint32_t i = s->mapped; i != head; i++) {
		struct sample_entry *e = sample_entry_at(s, i);
		int bad = 0;
		/* Outermost first: a parent maps its children with the
		** names it gives them. */
		for (unsigned k = e->nlua; k-- > 0 && !bad;) {
			uint64_t id =
			    mapper_ref(m, e->lua[k].kind, e->lua[k].key, 0);
			bad |= !id;
			e->lua[k].id = id;
		}
		e->mc_lo = 0;
		e->mc_len = 0;
		e->trace_id = 0;
		if (e->trace && !bad) {
			GCtrace *T = (GCtrace *)e->trace;
			e->mc_lo = (uintptr_t)T->mcode;
			e->mc_len = (uint32_t)T->szmcode;
			e->trace_id =
			    mapper_ref(m, MAPPER_TRACE, e->trace, e->traceno);
			bad |= !e->trace_id;
		}
		if (bad)
			e->nlua = 0, e->trace_id = 0, e->mc_len = 0;
	}
	int rc = mapper_end(m);
	/* A failed pass forgets the IDs it made, given to entries too. */
	for (uint32_t i = s->mapped; rc < 0 && i != head; i++) {
		struct sample_entry *e = sample_entry_at(s, i);
		e->nlua = 0, e->trace_id = 0, e->mc_len = 0;
	}
	s->mapped = head;
	if (rc > 0) {
		writer_lock();
		if (writer_is_open())
			writer_write(b, 1, 0);
		writer_unlock();
	}
}

/* Any thread. 1 when ip lies in e's trace's machine code. */
static int in_trace(const struct sample_entry *e, uintptr_t ip)
{
	return e->mc_len && ip >= e->mc_lo && ip - e->mc_lo < e->mc_len;
}

/* Caller holds s->hostlock. One sample's host frames as HOSTSYM IDs,
** their new records appended to b; the count. In state TRACE, *pcofs is
** one more than the offset into the trace's code of the interrupted
** instruction, or of the call into the C code that was interrupted (the
** first return address into the trace, where the host frames stop: the
** trace's code has no unwind information); 0 when unknown. */
static int host_frames(struct sample_vm *s, struct sample_entry *e,
		       struct wbuf *b, uint64_t *hid, uint64_t *pcofs)
{
	uintptr_t ips[SAMPLE_HOST_MAX];
	int nh = 0, k = 0;
	*pcofs = 0;
	if (in_trace(e, e->pc)) {
		*pcofs = e->pc - e->mc_lo + 1;
		return 0;
	}
	if (s->host && e->state != FORMAT_STATE_LJLOG)
		k = unwind_ips(e->host, ips, SAMPLE_HOST_MAX);
	for (int j = 0; j < k; j++) {
		uintptr_t ip = j ? ips[j] - 1 : ips[j];
		if (in_trace(e, ip)) {
			*pcofs = ip - e->mc_lo + 1;
			break;
		}
		/* ljlog's own frames between the program's (the allocator
		** wrapper between LuaJIT and its allocator) are left out. */
		if (util_in_own(ip))
			continue;
		uint64_t id = host_id(s, b, ip);
		if (!id)
			break;
		/* consecutive interpreter frames are one */
		if (nh && id == hid[nh - 1] && id == s->vm_sym)
			continue;
		hid[nh++] = id;
	}
	/* Without host stacks: the call the handler found. */
	if (!*pcofs && in_trace(e, e->at))
		*pcofs = e->at - e->mc_lo + 1;
	return nh;
}

/* Caller holds s->hostlock. 1 + the offset into e's trace's code of the
** check its code stops at next (its code's end: it leaves first), or 0
** (version 14, chkofs). */
static uint64_t chk_ofs(const struct sample_entry *e)
{
	if (!e->chk || !e->mc_len || e->chk < e->mc_lo ||
	    e->chk - e->mc_lo > e->mc_len)
		return 0;
	return e->chk - e->mc_lo + 1;
}

/* Caller holds s->hostlock. The STACK ID of e's frames (its Lua frames,
** mapped, and the nh host frames hid), its record appended to b when new;
** 0 for a sample without frames, -1 when out of memory. */
static uint64_t stack_id(struct sample_vm *s, struct wbuf *b,
			 const struct sample_entry *e, const uint64_t *hid,
			 int nh)
{
	uint64_t lua[2 * SAMPLE_LUA_MAX];
	if (!e->nlua && !nh)
		return 0;
	for (unsigned k = 0; k < e->nlua; k++) {
		lua[2 * k] = e->lua[k].id;
		lua[2 * k + 1] = e->lua[k].line;
	}
	uint64_t id =
	    stacks_ref(&s->stacks, b, lua, e->nlua, hid, (unsigned)nh);
	return id ? id : (uint64_t)-1;
}

/* Worst-case bytes of one sample (dt, state, missed, stack, trace, pcofs,
** chkofs: a byte and six ulebs) and of a SAMPLES payload's head (the
** block head, thread, signals, dropped). */
#define SAMPLE_MAX   (1 + 6 * BLOCKS_ULEB_MAX)
#define SAMPLES_HEAD (WRITER_HEAD_MAX + 3 * BLOCKS_ULEB_MAX)

/* Not the global lock's holder. A drain's n samples are lost with its
** block: counted in END (events_dropped, family sample), not as dropped
** samples (those the signal buffer had no room for, which the next
** drain's block counts). */
static void count_lost(uint32_t n)
{
	uint64_t fam[FORMAT_FAM__MAX] = {0};
	fam[FORMAT_FAM_SAMPLE] = n;
	writer_lock();
	writer_count_lost(fam, 1);
	writer_unlock();
}

/* Caller holds s->hostlock. Drain s's signal buffer into blocks. */
void sample_drain(struct sample_vm *s)
{
	uint32_t tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	uint64_t drop = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);

	/* 1. Lua keys to IDs (the VM thread may have done some already). */
	mapper_lock(s->map);
	sample_map_locked(s);
	uint32_t head = s->mapped, n = head - tail;
	mapper_unlock(s->map);
	if (n == 0 && drop == s->dropped_done)
		return;

	/* 2. Host stacks, symbols and the SAMPLES block: no VM object read.
	** HOSTSYM records go first (a MAPPING block), samples are encoded
	** into s->enc meanwhile. */
	struct wbuf *b = &s->out;
	b->len = 0;
	uint8_t *q;
	int written = 0;
	size_t hoff = writer_block_begin(b);
	if (hoff == (size_t)-1 || !(q = wbuf_room(b, BLOCKS_ULEB_MAX)))
		goto done;
	b->len = (size_t)(blocks_uleb_put(q, s->map->vm_id) - b->p);
	size_t hstart = b->len;
	struct wbuf *sb = &s->enc;
	sb->len = 0;
	uint64_t base = s->t_prev, t = s->t_prev;
	for (uint32_t i = 0; i < n; i++) {
		struct sample_entry *e = sample_entry_at(s, tail + i);
		uint64_t hid[SAMPLE_HOST_MAX];
		uint64_t pcofs;
		int nh = host_frames(s, e, b, hid, &pcofs);
		uint64_t ts = e->ts >> CLOCK_TS_SHIFT;
		if (i == 0) {
			base = ts < s->t_prev ? s->t_prev : ts;
			t = base;
		}
		uint64_t dt = ts > t ? ts - t : 0;
		t += dt;
		uint64_t sid = stack_id(s, b, e, hid, nh);
		if (sid == (uint64_t)-1 || !(q = wbuf_room(sb, SAMPLE_MAX)))
			goto done;
		uint8_t *qend = q + SAMPLE_MAX;
		q = blocks_uleb_put(q, dt);
		/* State 7, or another state in a trace (version 14). */
		int traced = e->state == FORMAT_STATE_TRACE || e->trace_id;
		uint8_t st = (uint8_t)(e->state |
				       (e->state != FORMAT_STATE_TRACE && traced
					    ? FORMAT_STATE_TRACED
					    : 0));
		if (e->missed) {
			*q++ = (uint8_t)(st | FORMAT_STATE_MISSED);
			q = blocks_uleb_put(q, e->missed);
		} else {
			*q++ = st;
		}
		q = blocks_uleb_put(q, sid);
		if (traced) {
			q = blocks_uleb_put(q, e->trace_id);
			q = blocks_uleb_put(q, pcofs);
			q = blocks_uleb_put(q, chk_ofs(e));
		}
		UTIL_DEBUG_ASSERT(q <= qend);
		sb->len = (size_t)(q - sb->p);
	}
	s->t_prev = t;
	/* HOSTSYM MAPPING block, if any, then the SAMPLES block. */
	unsigned nblocks = 1;
	if (b->len > hstart) {
		writer_block_end(b, hoff, FORMAT_KIND_MAPPING);
		nblocks++;
	} else {
		b->len = hoff;
	}
	size_t soff = writer_block_begin(b);
	size_t room = SAMPLES_HEAD + sb->len;
	q = soff == (size_t)-1 ? NULL : wbuf_room(b, room);
	if (!q)
		goto done;
	struct writer_clock c;
	clock_pair_now(&c);
	/* Signals taken = samples + drops, each counted by exactly one drain:
	** entries and drops after this drain started go to the next one. */
	uint64_t ddrop = drop - s->dropped_done, dsig = (uint64_t)n + ddrop;
	uint8_t *qend = q + room;
	q = writer_head_put(q, s->map->vm_id, n, base, &c);
	q = blocks_uleb_put(q, (uint64_t)s->tid);
	q = blocks_uleb_put(q, dsig);
	q = blocks_uleb_put(q, ddrop);
	UTIL_DEBUG_ASSERT(q + sb->len <= qend);
	memcpy(q, sb->p, sb->len);
	b->len = (size_t)(q - b->p) + sb->len;
	writer_block_end(b, soff, FORMAT_KIND_SAMPLES);
	writer_lock();
	if (writer_is_open()) {
		writer_write(b, nblocks, 0);
		writer_count_dropped(ddrop);
	}
	writer_unlock();
	s->signals_done += dsig;
	s->dropped_done = drop;
	written = 1;
done:
	if (!written) {
		/* Out of memory: the records made are lost with the blocks;
		** forget them, so that the next drain defines them anew. */
		stacks_reset(&s->stacks);
		hmap_free(&s->hostmap);
		s->vm_sym = 0;
		if (n)
			count_lost(n);
	}
	__atomic_store_n(&s->tail, head, __ATOMIC_RELEASE);
}

/* -- The helper thread ---------------------------------------------------------- */

/* Helper thread, s pinned, caller holds s->hostlock (a drain from another
** thread writes dropped_done). 1 when s is worth a drain now: SAMPLE_BATCH
** entries pending, drops to report, or SAMPLE_BATCH_NS since its last
** drain. Fewer, longer SAMPLES blocks: a block's header costs as much as
** several samples (doc/format.txt, SAMPLES payload). */
static int drain_due(struct sample_vm *s, uint64_t now, uint64_t batch)
{
	uint32_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	uint32_t tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	uint64_t drop = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
	if (head - tail >= SAMPLE_BATCH || drop != s->dropped_done ||
	    now - s->drained >= batch) {
		s->drained = now;
		return 1;
	}
	return 0;
}

/* Helper thread. Every few intervals (SAMPLE_WAKE_MIN_NS): pin the sampled
** VMs (under smtx), drain each that is due outside smtx, unpin; leave when
** nothing was sampled for a while (a later start makes a new thread). */
void *sample_helper_main(void *arg)
{
	struct sample_vm *vms[SAMPLE_SLOTS];
	(void)arg;
	util_thread_begin(); /* every signal blocked: never the timer's */
	uint64_t wake = SAMPLE_WAKE_MIN_NS;
	for (;;) {
		struct timespec ts = {(time_t)(wake / 1000000000u),
				      (long)(wake % 1000000000u)};
		nanosleep(&ts, NULL);
		int n = sample_pin_all(vms, SAMPLE_SLOTS, &wake);
		if (n < 0)
			return NULL;
		uint64_t now = clock_now(),
			 batch = clock_ticks(SAMPLE_BATCH_NS);
		for (int i = 0; i < n; i++) {
			pthread_mutex_lock(&vms[i]->hostlock);
			if (drain_due(vms[i], now, batch))
				sample_drain(vms[i]);
			pthread_mutex_unlock(&vms[i]->hostlock);
		}
		sample_unpin_all(vms, n);
	}
	return NULL;
}
