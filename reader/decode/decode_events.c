/*
** ljlog reader library: EVENTS blocks (hot), one sink call per event.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Field readers over locals p, end and field, jumping to bad_int. */
#define ULEB(v, what)                                                          \
	DEC_ULEB(v, {                                                          \
		field = (what);                                                \
		goto bad_int;                                                  \
	})
#define SLEB(v, what)                                                          \
	DEC_SLEB(v, {                                                          \
		field = (what);                                                \
		goto bad_int;                                                  \
	})

/* -- EVENTS (hot) ------------------------------------------------------------- */

/* An event's name in messages: "ENTER", "VM TRACE_STOP". */
static const char *ev_label(unsigned op, unsigned lo, char *buf, size_t len)
{
	if (op != FORMAT_OP_VM)
		return format_op_name(op);
	snprintf(buf, len, "VM %s", format_vm_name(lo));
	return buf;
}
/* Copy a TRACE_ABORT message into d->msg, NUL-terminated. */
static int dec_msg_copy(struct decode *d, const uint8_t *s, size_t len)
{
	if (len + 1 > d->msgcap) {
		size_t cap = d->msgcap ? d->msgcap : 256;
		while (cap < len + 1)
			cap *= 2;
		char *m = realloc(d->msg, cap);
		if (!m)
			return -ENOMEM;
		d->msg = m;
		d->msgcap = cap;
	}
	memcpy(d->msg, s, len);
	d->msg[len] = '\0';
	return 0;
}

/* A trace site (version 6): ev->obj is the TRACE or NULL,
** ev->line 1 + the offset into its code or 0. Resolve it to the snapshot
** there (see decode.h, struct decode_event). */
static void trace_site(struct decode_event *ev)
{
	struct decode_obj *t = ev->obj;
	ev->trace = t;
	ev->pcofs = ev->line;
	ev->line = 0;
	if (!t || !ev->pcofs)
		return;
	const struct decode_texit *sn = decode_trace_exit(t, ev->pcofs - 1);
	if (!sn || !sn->nframes)
		return;
	ev->texit = sn;
	ev->obj = sn->f[sn->nframes - 1].func;
	ev->line = sn->f[sn->nframes - 1].line;
}

/* Decode an EVENTS payload, one sink call per event. */
int dec_events(struct decode *d, const struct reader_block *b,
	       struct decode_cur *c)
{
	char lb[32]; /* an event's name in messages */
	struct decode_events h;
	uint64_t vm;
	int rc;
	memset(&h, 0, sizeof h);
	h.block = b;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0 ||
	    (rc = dec_get_u(c, "count", &h.count)) < 0 ||
	    (rc = dec_get_u(c, "base_ts", &h.base_ts)) < 0 ||
	    (rc = dec_get_clock(c, &h.clock)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *vo = vm < DECODE_MAX_ID ? dec_lookup(d, vm) : NULL;
	if (!vo || vo->kind != FORMAT_REC_VM)
		return dec_corrupt(d, b, -EBADMSG,
				   "events of VM ID %llu, which is %s",
				   (unsigned long long)vm,
				   vo ? "not a VM" : "not defined before use");
	if (h.count > (uint64_t)(c->end - c->p) / 2)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "count %llu events cannot fit in the %zu bytes "
		    "left (2 bytes at least each)",
		    (unsigned long long)h.count, (size_t)(c->end - c->p));
	if (h.base_ts < vo->last_ts)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "base_ts %llu is before the last event time %llu "
		    "of VM %llu",
		    (unsigned long long)h.base_ts,
		    (unsigned long long)vo->last_ts, (unsigned long long)vm);
	h.vm = (uint32_t)vm + d->idbase;
	h.vmobj = vo;
	if (d->sink.events && (rc = d->sink.events(d->sink.ud, &h)))
		return rc;

	int (*const fn)(void *, const struct decode_event *) = d->sink.event;
	void *const ud = d->sink.ud;
	const uint8_t *p = c->p, *const end = c->end, *evp = p;
	const char *field = NULL;
	const char *why = NULL;
	uint64_t t = h.base_ts, addr = 0, i, n = h.count, v, dt;
	int64_t slot = 0, delta;
	/* Version 12: ALLOC and FREE may leave dt out; their addresses are
	** from anext and fprev (doc/format.txt). */
	const int v12 = d->intro.version >= 12;
	uint64_t anext = 0, fprev = 0;
	int nodt;
	/* Version 6: a trace site names the TRACE; before, its first PROTO. */
	const unsigned trace_kind =
	    d->intro.version >= 6 ? FORMAT_REC_TRACE : FORMAT_REC_PROTO;
	struct decode_event ev;
	memset(&ev, 0, sizeof ev);
	ev.vm = h.vm;
	ev.vmobj = vo;
	ev.co = vo->co;

	for (i = 0; i < n; i++) {
		evp = p;
		if (UTIL_UNLIKELY(p >= end)) {
			why = "the payload ends here";
			goto bad;
		}
		unsigned cb = *p++;
		unsigned op = cb >> FORMAT_OP_SHIFT, lo = cb & FORMAT_LO_MASK;
		struct decode_obj *o;
		ev.op = op;
		ev.lo = lo;
		ev.index = i;
		nodt = 0;
		switch (op) {
		case FORMAT_OP_ENTER:
		case FORMAT_OP_EXIT:
			if (UTIL_LIKELY(lo != FORMAT_SLOT_ESCAPE))
				delta = blocks_unzigzag(lo);
			else
				SLEB(delta, "slot delta");
			slot += delta;
			if (UTIL_UNLIKELY(slot < 0)) {
				why = "slot below 0";
				goto bad;
			}
			ev.slot = slot;
			if (op == FORMAT_OP_ENTER) {
				ULEB(v, "func");
				o = v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
				if (UTIL_UNLIKELY(
					!o || (o->kind != FORMAT_REC_PROTO &&
					       o->kind != FORMAT_REC_CFUNC &&
					       o->kind != FORMAT_REC_FFUNC))) {
					ev.id = v > UINT32_MAX ? UINT32_MAX
							       : (uint32_t)v;
					why =
					    o ? "func is not a function"
					      : "func ID used before definition";
					goto bad_id;
				}
				ev.id = (uint32_t)v;
				ev.obj = o;
			}
			break;
		case FORMAT_OP_ALLOC:
		case FORMAT_OP_REALLOC:
			if (op == FORMAT_OP_ALLOC && v12 &&
			    (lo & FORMAT_ALLOC_NODT)) {
				nodt = 1;
				lo &= ~FORMAT_ALLOC_NODT;
				ev.lo = lo;
			}
			ULEB(v, "site");
			o = v && v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
			ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			if (UTIL_UNLIKELY(v && !o)) {
				why = "site ID used before definition";
				goto bad_id;
			}
			switch (lo) {
			case FORMAT_SITE_LUA:
				/* 0: not a Lua function (a trace aborted
				** in a fast function or C function). */
				if (UTIL_UNLIKELY(
					v != 0 &&
					(!o || o->kind != FORMAT_REC_PROTO))) {
					why = "lua site is not a PROTO";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_C:
				if (UTIL_UNLIKELY(
					!o || (o->kind != FORMAT_REC_CFUNC &&
					       o->kind != FORMAT_REC_FFUNC))) {
					why = "c site is not a CFUNC or FFUNC";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_TRACE:
				if (UTIL_UNLIKELY(o && o->kind != trace_kind)) {
					why = trace_kind == FORMAT_REC_TRACE
						  ? "trace site is not a TRACE"
						  : "trace site is not a PROTO";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_UNKNOWN:
			case FORMAT_SITE_GC:
				if (UTIL_UNLIKELY(o)) {
					why = "this site kind takes site 0";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_JIT:
			case FORMAT_SITE_INTERNAL: break;
			default: why = "unknown site kind"; goto bad;
			}
			ev.obj = o;
			ULEB(ev.line, "line");
			ev.trace = NULL;
			ev.texit = NULL;
			if (lo == FORMAT_SITE_TRACE &&
			    trace_kind == FORMAT_REC_TRACE)
				trace_site(&ev);
			if (op == FORMAT_OP_ALLOC) {
				ULEB(ev.size, "size");
				SLEB(delta, "addr delta");
				addr = (v12 ? anext : addr) + (uint64_t)delta;
				anext = addr + format_chunk(ev.size);
				ev.addr = addr;
			} else {
				SLEB(delta, "old addr delta");
				ev.old_addr = addr + (uint64_t)delta;
				ULEB(ev.old_size, "old size");
				SLEB(delta, "new addr delta");
				addr = ev.old_addr + (uint64_t)delta;
				ev.addr = addr;
				ULEB(ev.size, "new size");
			}
			break;
		case FORMAT_OP_FREE:
			if (v12) {
				if (UTIL_UNLIKELY(lo > FORMAT_FREE_NODT)) {
					why = "FREE with lo not 0 or 1";
					goto bad;
				}
				nodt = lo == FORMAT_FREE_NODT;
				ULEB(ev.size, "size");
				SLEB(delta, "addr delta");
				addr = fprev - format_chunk(ev.size) +
				       (uint64_t)delta;
				fprev = addr;
				ev.addr = addr;
				break;
			}
			if (UTIL_UNLIKELY(lo)) {
				why = "FREE with lo not 0";
				goto bad;
			}
			SLEB(delta, "addr delta");
			addr += (uint64_t)delta;
			ev.addr = addr;
			ULEB(ev.size, "size");
			break;
		case FORMAT_OP_GC:
			if (UTIL_UNLIKELY(lo >= FORMAT_GC__MAX)) {
				why = "unknown GC phase";
				goto bad;
			}
			ULEB(ev.heap, "heap");
			break;
		case FORMAT_OP_SWITCH:
			if (UTIL_UNLIKELY(lo)) {
				why = "SWITCH with lo not 0";
				goto bad;
			}
			ULEB(v, "coroutine");
			o = v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
			if (UTIL_UNLIKELY(!o ||
					  o->kind != FORMAT_REC_COROUTINE)) {
				ev.id =
				    v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
				why = o ? "coroutine is not a COROUTINE"
					: "coroutine ID used before definition";
				goto bad_id;
			}
			ev.id = (uint32_t)v;
			ev.obj = o;
			ev.co = vo->co = (uint32_t)v;
			break;
		default: /* FORMAT_OP_VM */
			switch (lo) {
			case FORMAT_VM_ATTACH:
			case FORMAT_VM_DETACH: ULEB(ev.heap, "heap"); break;
			case FORMAT_VM_TRACE_START:
			case FORMAT_VM_TRACE_ABORT:
				ULEB(ev.traceno, "traceno");
				ULEB(v, "proto");
				o = v && v < DECODE_MAX_ID ? dec_lookup(d, v)
							   : NULL;
				ev.id =
				    v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
				/* 0: not a Lua function (a trace aborted
				** in a fast function or C function). */
				if (UTIL_UNLIKELY(
					v != 0 &&
					(!o || o->kind != FORMAT_REC_PROTO))) {
					why = o ? "proto is not a PROTO"
						: "proto ID used before "
						  "definition";
					goto bad_id;
				}
				ev.obj = o;
				ULEB(ev.line, "line");
				if (lo == FORMAT_VM_TRACE_ABORT) {
					ULEB(ev.reason, "reason");
					ULEB(v, "message");
					if (UTIL_UNLIKELY(
						v > (uint64_t)(end - p))) {
						field = "message";
						goto bad_int;
					}
					if (dec_msg_copy(d, p, (size_t)v) < 0)
						return dec_corrupt(
						    d, b, -ENOMEM,
						    "out of memory");
					ev.msg.s = d->msg;
					ev.msg.len = (size_t)v;
					p += v;
				}
				break;
			case FORMAT_VM_TRACE_STOP:
				ULEB(v, "trace");
				o = v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
				ev.id =
				    v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
				if (UTIL_UNLIKELY(!o || o->kind !=
							    FORMAT_REC_TRACE)) {
					why = o ? "trace is not a TRACE"
						: "trace ID used before "
						  "definition";
					goto bad_id;
				}
				ev.obj = o;
				break;
			case FORMAT_VM_TRACE_FLUSH: break;
			case FORMAT_VM_ZONE_PUSH:
			case FORMAT_VM_MARK:
				if (UTIL_UNLIKELY(d->intro.version < 9)) {
					why = "zone event before version 9";
					goto bad;
				}
				ULEB(v, "text");
				o = v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
				ev.id =
				    v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
				if (UTIL_UNLIKELY(
					!o || o->kind != FORMAT_REC_STRING)) {
					why = o ? "zone name or mark text is "
						  "not a STRING"
						: "zone name or mark text ID "
						  "used before definition";
					goto bad_id;
				}
				ev.obj = o;
				break;
			case FORMAT_VM_ZONE_POP:
				if (UTIL_UNLIKELY(d->intro.version < 9)) {
					why = "zone event before version 9";
					goto bad;
				}
				break;
			default: why = "unknown VM event"; goto bad;
			}
			break;
		}
		if (nodt)
			dt = 0;
		else
			ULEB(dt, "dt");
		if (UTIL_UNLIKELY(t + dt < t)) {
			why = "time overflows 64 bits";
			goto bad;
		}
		t += dt;
		ev.ts = t;
		if (fn && (rc = fn(ud, &ev)) != 0)
			return rc;
	}
	if (p != end)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "%zu bytes left after the %llu events the count "
		    "announces",
		    (size_t)(end - p), (unsigned long long)n);
	vo->last_ts = t;
	vo->events += n;
	d->events += n;
	if (d->sink.events_done && (rc = d->sink.events_done(d->sink.ud, &h)))
		return rc;
	return 0;

bad_int:
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "event %llu of %llu (%s) at payload offset %zu: field "
	    "'%s' runs past the payload end or is not a valid integer",
	    (unsigned long long)i, (unsigned long long)n,
	    ev_label(ev.op, ev.lo, lb, sizeof lb), (size_t)(evp - c->start),
	    field);
bad_id:
	return dec_corrupt(d, b, -EBADMSG,
			   "event %llu of %llu (%s) at payload offset %zu: %s "
			   "(ID %llu)",
			   (unsigned long long)i, (unsigned long long)n,
			   ev_label(ev.op, ev.lo, lb, sizeof lb),
			   (size_t)(evp - c->start), why,
			   (unsigned long long)ev.id);
bad:
	if (p > end || evp >= end)
		return dec_corrupt(
		    d, b, -EBADMSG, "payload ends after %llu of %llu events",
		    (unsigned long long)i, (unsigned long long)n);
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "event %llu of %llu (%s, lo %u) at payload offset %zu: %s",
	    (unsigned long long)i, (unsigned long long)n,
	    ev_label(ev.op, ev.lo, lb, sizeof lb), ev.lo,
	    (size_t)(evp - c->start), why);
}
