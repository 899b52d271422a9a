/*
** ljlog flush: map the buffer's pointers to IDs, encode, write.
** Encoding reserves the worst case once, then emits without checks.
*/
#include "logger/flush.h"

#include "logger/jitev.h"

#include <errno.h>
#include <string.h>

/* Worst-case encoded bytes per raw buffer word (a word becomes at most one
** 10-byte uleb; the op byte and escapes fit in the slack). */
#define ENC_PER_WORD 11

/* -- Mapping ------------------------------------------------------------------ */

/* Trace number of the next BUF_KEY_TRACE mapped (flush_trace_ref). */
static __thread unsigned trace_no;

/* Caller maps. ID of trace T, whose number was traceno when it was seen. */
uint64_t flush_trace_ref(struct logger_vm *vm, uintptr_t T, unsigned traceno)
{
	trace_no = traceno;
	uint64_t id = flush_ref(vm, BUF_KEY_TRACE, T);
	trace_no = 0;
	return id;
}

/* A flush's cache in front of the map: nothing is freed during a flush,
** so an entry stays right until the flush ends. */
#define CACHE_SIZE 256
struct cache {
	uintptr_t key[CACHE_SIZE];
	uint64_t id[CACHE_SIZE];
};
static __thread struct cache cache;

static size_t cache_slot(uintptr_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 56) & (CACHE_SIZE - 1);
}

/* Caller maps (holds maplock when sampled). ID of key, making it (and its
** MAPPING record in vm->out) on first use; 0 when out of memory. */
uint64_t flush_ref(struct logger_vm *vm, unsigned kind, uintptr_t key)
{
	size_t c = cache_slot(key);
	if (LJ_LIKELY(cache.key[c] == key))
		return cache.id[c];
	uint64_t id = maps_lookup(&vm->map, key);
	int r;
	if (id) {
		cache.key[c] = key;
		cache.id[c] = id;
		return id;
	}
	id = maps_new_id();
	switch (kind) {
	case BUF_KEY_PROTO:
		r = names_put_proto(&vm->out, id, (GCproto *)key);
		break;
	case BUF_KEY_CFUNC:
		r = names_put_cfunc(&vm->out, id, &vm->names, key);
		break;
	case BUF_KEY_FFUNC:
		r = names_put_ffunc(&vm->out, id, &vm->names,
				    (unsigned)key & 0xff,
				    key & BUF_FF_ASM ? FORMAT_FF_NOEXIT : 0);
		break;
	case BUF_KEY_TRACE: {
		/* Its PROTO first: the TRACE record names it. */
		GCtrace *T = (GCtrace *)key;
		GCproto *pt = gcref(T->startpt) ? &gcref(T->startpt)->pt : NULL;
		uint64_t pid =
		    pt ? flush_ref(vm, BUF_KEY_PROTO, (uintptr_t)pt) : 0;
		uint32_t line =
		    pt ? lj_proto_line(
			     pt, proto_bcpos(pt, mref(T->startpc, const BCIns)))
		       : 0;
		if (pt && !pid)
			return 0;
		/* The number as it was at the event: jit.flush() zeroes
		** T->traceno while T lives on until the next sweep. */
		r = names_put_trace(&vm->out, id,
				    trace_no ? trace_no : T->traceno, pid, line,
				    T->root);
		break;
	}
	default: /* BUF_KEY_COROUTINE */
		r = names_put_coroutine(
		    &vm->out, id,
		    (lua_State *)key == mainthread(vm->g) ? FORMAT_CO_MAIN : 0);
		break;
	}
	if (r < 0 || maps_insert(&vm->map, key, id) < 0)
		return 0; /* out of memory: the flush is dropped */
	cache.key[c] = key;
	cache.id[c] = id;
	return id;
}

/* -- Encoding ----------------------------------------------------------------- */

static uint8_t *put_slot(uint8_t *p, unsigned op, int64_t delta)
{
	uint64_t z = blocks_zigzag(delta);
	if (z < FORMAT_SLOT_ESCAPE) {
		*p++ = (uint8_t)(op << FORMAT_OP_SHIFT | z);
		return p;
	}
	*p++ = (uint8_t)(op << FORMAT_OP_SHIFT | FORMAT_SLOT_ESCAPE);
	return blocks_uleb_put(p, z);
}

/* Site of an ALLOC/REALLOC: kind in the op byte, then ID and line. */
static uint8_t *put_site(struct logger_vm *vm, uint8_t *p, unsigned op,
			 uint64_t x, uint64_t key, int *bad)
{
	unsigned site = (unsigned)(x & 15), keykind = (unsigned)(x >> 4) & 15;
	uint64_t id = 0;
	if (keykind != BUF_KEY_NONE &&
	    !(id = flush_ref(vm, keykind, (uintptr_t)key)))
		*bad = 1;
	*p++ = (uint8_t)(op << FORMAT_OP_SHIFT | site);
	p = blocks_uleb_put(p, id);
	return blocks_uleb_put(p, x >> 8);
}

/* VM thread only. Map, encode and write the buffer; empty it. */
void flush_vm(struct logger_vm *vm)
{
	uint64_t *w = vm->buf, *end = vm->bp;
	size_t words = (size_t)(end - w);
	uint64_t count = 0, base, prev_t, addr = 0;
	int64_t slot = 0;
	int bad = 0;

	if (vm->in_flush || words == 0)
		return;
	vm->in_flush = 1;
	sample_map_lock(vm); /* vm->map and vm->out: the sample drainer too */
	flush_map_begin();
	vm->enc.len = 0;
	vm->out.len = 0;
	uint8_t *p = wbuf_room(&vm->enc, words * ENC_PER_WORD + 64);
	size_t moff = writer_block_begin(&vm->out);
	if (!p || moff == (size_t)-1 || !wbuf_room(&vm->out, BLOCKS_ULEB_MAX))
		goto drop;
	vm->out.len =
	    (size_t)(blocks_uleb_put(vm->out.p + vm->out.len, vm->id) -
		     vm->out.p);
	size_t mstart = vm->out.len;

	base = prev_t = w[1] >> CLOCK_TS_SHIFT;
	if (base < vm->t_prev)
		base = prev_t = vm->t_prev; /* a counter that went back */
	while (w < end) {
		uint64_t w0 = w[0], x = BUF_X(w0);
		unsigned kind = BUF_KIND(w0);
		uint64_t t = w[1] >> CLOCK_TS_SHIFT, dt = 0, id;
		if (t > prev_t)
			dt = t - prev_t, prev_t = t;
		switch (kind) {
		case BUF_ENTER_LUA:
		case BUF_ENTER_C:
		case BUF_ENTER_FF:
			id = flush_ref(vm,
				       kind == BUF_ENTER_LUA ? BUF_KEY_PROTO
				       : kind == BUF_ENTER_C ? BUF_KEY_CFUNC
							     : BUF_KEY_FFUNC,
				       (uintptr_t)w[2]);
			bad |= !id;
			p = put_slot(p, FORMAT_OP_ENTER, (int64_t)x - slot);
			slot = (int64_t)x;
			p = blocks_uleb_put(p, id);
			break;
		case BUF_EXIT:
			p = put_slot(p, FORMAT_OP_EXIT, (int64_t)x - slot);
			slot = (int64_t)x;
			break;
		case BUF_ALLOC:
			p = put_site(vm, p, FORMAT_OP_ALLOC, x, w[2], &bad);
			p = blocks_uleb_put(p, w[4]);
			p = blocks_sleb_put(p, (int64_t)(w[3] - addr));
			addr = w[3];
			break;
		case BUF_FREE:
			*p++ = FORMAT_OP_FREE << FORMAT_OP_SHIFT;
			p = blocks_sleb_put(p, (int64_t)(w[2] - addr));
			p = blocks_uleb_put(p, x);
			addr = w[2];
			break;
		case BUF_REALLOC:
			p = put_site(vm, p, FORMAT_OP_REALLOC, x, w[2], &bad);
			p = blocks_sleb_put(p, (int64_t)(w[3] - addr));
			p = blocks_uleb_put(p, w[4]);
			p = blocks_sleb_put(p, (int64_t)(w[5] - w[3]));
			p = blocks_uleb_put(p, w[6]);
			addr = w[5];
			break;
		case BUF_GC:
			*p++ = (uint8_t)(FORMAT_OP_GC << FORMAT_OP_SHIFT |
					 (x & 31));
			p = blocks_uleb_put(p, w[2]);
			break;
		case BUF_SWITCH:
			id = flush_ref(vm, BUF_KEY_COROUTINE, (uintptr_t)w[2]);
			bad |= !id;
			*p++ = FORMAT_OP_SWITCH << FORMAT_OP_SHIFT;
			p = blocks_uleb_put(p, id);
			break;
		case BUF_TRACE_START:
		case BUF_TRACE_ABORT:
			id = w[2]
				 ? flush_ref(vm, BUF_KEY_PROTO, (uintptr_t)w[2])
				 : 0;
			bad |= w[2] && !id;
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 (kind == BUF_TRACE_START
					      ? FORMAT_VM_TRACE_START
					      : FORMAT_VM_TRACE_ABORT));
			p = blocks_uleb_put(p, x);
			p = blocks_uleb_put(p, id);
			p = blocks_uleb_put(p, (uint32_t)w[3]);
			if (kind == BUF_TRACE_ABORT) {
				/* The message is beyond the per-word
				** reservation: make room for it. */
				size_t off = (size_t)(p - vm->enc.p);
				vm->enc.len = off;
				if (!wbuf_room(&vm->enc,
					       words * ENC_PER_WORD + 256))
					goto drop;
				p = vm->enc.p + off;
				char msg[160];
				unsigned reason = (unsigned)(w[3] >> 32);
				int64_t info = (int64_t)w[4];
				const char *ff = info > 0 && info < 256
						     ? vm->names.ff[info]
						     : NULL;
				jitev_message(reason, info, ff, msg,
					      sizeof msg);
				p = blocks_uleb_put(p, reason);
				p = blocks_str_put(p, msg, strlen(msg));
			}
			break;
		case BUF_TRACE_STOP:
			id = flush_trace_ref(vm, (uintptr_t)w[2], (unsigned)x);
			bad |= !id;
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 FORMAT_VM_TRACE_STOP);
			p = blocks_uleb_put(p, id);
			break;
		case BUF_TRACE_FLUSH:
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 FORMAT_VM_TRACE_FLUSH);
			break;
		case BUF_ATTACH:
		case BUF_DETACH:
			*p++ =
			    (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
				      (kind == BUF_DETACH ? FORMAT_VM_DETACH
							  : FORMAT_VM_ATTACH));
			p = blocks_uleb_put(p, w[2]);
			break;
		}
		p = blocks_uleb_put(p, dt);
		w += buf_words[kind];
		count++;
	}
	if (bad)
		goto drop;
	vm->t_prev = prev_t;
	vm->enc.len = (size_t)(p - vm->enc.p);

	/* MAPPING block (only when new IDs were made), then EVENTS. */
	if (vm->out.len == mstart)
		vm->out.len = moff;
	else
		writer_block_end(&vm->out, moff, FORMAT_KIND_MAPPING);
	unsigned nblocks = 1 + (vm->out.len > 0);
	size_t eoff = writer_block_begin(&vm->out);
	uint8_t *q =
	    eoff == (size_t)-1
		? NULL
		: wbuf_room(&vm->out, 6 * BLOCKS_ULEB_MAX + vm->enc.len);
	if (!q)
		goto drop;
	struct clock_pair c;
	clock_pair_now(&c);
	q = blocks_uleb_put(q, vm->id);
	q = blocks_uleb_put(q, count);
	q = blocks_uleb_put(q, base);
	q = blocks_uleb_put(q, c.counter);
	q = blocks_uleb_put(q, c.mono_ns);
	q = blocks_uleb_put(q, c.real_ns);
	memcpy(q, vm->enc.p, vm->enc.len);
	vm->out.len = (size_t)(q - vm->out.p) + vm->enc.len;
	writer_block_end(&vm->out, eoff, FORMAT_KIND_EVENTS);

	writer_lock();
	if (writer_is_open())
		writer_write(&vm->out, nblocks, count);
	writer_unlock();
	vm->nevents += count;
drop:
	sample_map_unlock(vm);
	vm->bp = vm->buf;
	vm->in_flush = 0;
}

/* Caller maps. Start a mapping pass: the ID cache may be stale (objects
** freed since the last pass). */
void flush_map_begin(void)
{
	memset(&cache, 0, sizeof cache); /* keys 0 never occur */
}

/* VM thread only. Write a MAPPING block holding only vm's VM record. */
int flush_vm_record(struct logger_vm *vm, uint64_t heap, unsigned flags)
{
	int r = -ENOMEM;
	vm->out.len = 0;
	size_t off = writer_block_begin(&vm->out);
	uint8_t *p =
	    off == (size_t)-1 ? NULL : wbuf_room(&vm->out, BLOCKS_ULEB_MAX);
	if (!p)
		return r;
	vm->out.len = (size_t)(blocks_uleb_put(p, vm->id) - vm->out.p);
	if (names_put_vm(&vm->out, vm->id, vm->tid, heap, flags) < 0)
		return r;
	writer_block_end(&vm->out, off, FORMAT_KIND_MAPPING);
	writer_lock();
	r = writer_is_open() ? writer_write(&vm->out, 1, 0) : -EBADF;
	writer_unlock();
	return r;
}

/* VM thread only. Buffer full or flush interval passed (cold path). */
void logger_flush_full(struct logger_vm *vm)
{
	flush_vm(vm);
	vm->flush_at =
	    vm->flush_ticks ? clock_now() + vm->flush_ticks : UINT64_MAX;
}
