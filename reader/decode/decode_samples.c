/*
** ljlog reader library: SAMPLES blocks (hot), one sink call per sample.
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

/* -- SAMPLES (hot) -------------------------------------------------------------- */

/* A sample in a trace (state 7): compiled code keeps the Lua
** functions it inlined, and the line it runs, only in the trace's
** snapshots; take them from the snapshot LuaJIT's profiler would charge:
** the one holding the next profile check (version 14, chkofs), else the
** one at or before the sampled offset (the rightmost one starting there,
** as LuaJIT's unwinder does). They
** replace the innermost frame read from memory, the function the trace
** started in, whose line is unknown there (0). Callers below stay; at
** DECODE_MAX_FRAMES the outermost go. */
static void inline_frames(struct decode_sample *sm,
			  struct decode_lua_frame *lua)
{
	const struct decode_obj *t = sm->trace;
	const struct decode_texit *sn =
	    decode_trace_exit(t, (sm->chkofs ? sm->chkofs : sm->pcofs) - 1);
	if (!sn)
		return;
	uint32_t m = sn->nframes, from = 0;
	if (!m)
		return;
	if (sm->nlua && lua[0].func->kind == FORMAT_REC_PROTO &&
	    (lua[0].func == sn->f[0].func || lua[0].line == 0))
		from = 1;
	uint32_t rest = sm->nlua - from;
	if (m + rest > DECODE_MAX_FRAMES)
		rest = DECODE_MAX_FRAMES - m;
	memmove(lua + m, lua + from, rest * sizeof *lua);
	for (uint32_t j = 0; j < m; j++)
		lua[j] = sn->f[m - 1 - j];
	sm->nlua = m + rest;
	sm->inlined = m;
}

/* A version 6 sample's frames: st's own, then its parent's and
** so on up, into the decoder's frame arrays (st's totals were checked
** against DECODE_MAX_FRAMES when it was defined). */
static void stack_frames(const struct decode_obj *st,
			 struct decode_lua_frame *lua, struct decode_obj **host)
{
	uint32_t nl = 0, nh = 0;
	for (; st; st = st->u.stack.parent) {
		memcpy(lua + nl, st->u.stack.lua,
		       st->u.stack.own_lua * sizeof *lua);
		memcpy(host + nh, st->u.stack.host,
		       st->u.stack.own_host * sizeof *host);
		nl += st->u.stack.own_lua;
		nh += st->u.stack.own_host;
	}
}

/* Decode a SAMPLES payload, one sink call per sample. */
int dec_samples(struct decode *d, const struct reader_block *b,
		struct decode_cur *c)
{
	struct decode_samples h;
	uint64_t vm;
	int rc;
	memset(&h, 0, sizeof h);
	h.block = b;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0 ||
	    (rc = dec_get_u(c, "count", &h.count)) < 0 ||
	    (rc = dec_get_u(c, "base_ts", &h.base_ts)) < 0 ||
	    (rc = dec_get_clock(c, &h.clock)) < 0 ||
	    (rc = dec_get_u(c, "thread", &h.thread)) < 0 ||
	    (rc = dec_get_u(c, "signals", &h.signals)) < 0 ||
	    (rc = dec_get_u(c, "dropped", &h.dropped)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *vo = vm < DECODE_MAX_ID ? dec_lookup(d, vm) : NULL;
	if (!vo || vo->kind != FORMAT_REC_VM)
		return dec_corrupt(d, b, -EBADMSG,
				   "samples of VM ID %llu, which is %s",
				   (unsigned long long)vm,
				   vo ? "not a VM" : "not defined before use");
	if (h.count + h.dropped < h.count || h.signals != h.count + h.dropped)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "signals %llu is not count %llu + dropped %llu",
		    (unsigned long long)h.signals, (unsigned long long)h.count,
		    (unsigned long long)h.dropped);
	/* Version 6: dt, state, stack; before: dt, state, trace, nlua, nhost. */
	const int v6 = d->intro.version >= 6;
	const int v11 = d->intro.version >= 11;
	const int v14 = d->intro.version >= 14;
	const unsigned min = v6 ? 3 : 5;
	if (h.count > (uint64_t)(c->end - c->p) / min)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "count %llu samples cannot fit in the %zu bytes "
		    "left (%u bytes at least each)",
		    (unsigned long long)h.count, (size_t)(c->end - c->p), min);
	if (h.base_ts < vo->last_sample_ts)
		dec_warn(d,
			 "block %llu (SAMPLES) at offset %llu: base_ts %llu is "
			 "before the last sample time %llu of VM %llu",
			 (unsigned long long)b->index,
			 (unsigned long long)b->offset,
			 (unsigned long long)h.base_ts,
			 (unsigned long long)vo->last_sample_ts,
			 (unsigned long long)vm);
	if (!d->lua) {
		d->lua = malloc(DECODE_MAX_FRAMES * sizeof *d->lua);
		d->host = malloc(DECODE_MAX_FRAMES * sizeof *d->host);
		if (!d->lua || !d->host) {
			free(d->lua);
			free(d->host);
			d->lua = NULL;
			d->host = NULL;
			return dec_corrupt(d, b, -ENOMEM, "out of memory");
		}
	}
	h.vm = (uint32_t)vm + d->idbase;
	h.vmobj = vo;
	if (d->sink.samples && (rc = d->sink.samples(d->sink.ud, &h)))
		return rc;

	int (*const fn)(void *, const struct decode_sample *) = d->sink.sample;
	void *const ud = d->sink.ud;
	struct decode_lua_frame *const lua = d->lua;
	struct decode_obj **const host = d->host;
	const uint8_t *p = c->p, *const end = c->end, *sp = p;
	const char *field = NULL, *why = NULL;
	uint64_t t = h.base_ts, i, n = h.count, v, dt, bad_v = 0;
	uint32_t j = 0;
	struct decode_sample sm;
	memset(&sm, 0, sizeof sm);
	sm.vm = h.vm;
	sm.vmobj = vo;
	sm.lua = lua;
	sm.host = host;

	for (i = 0; i < n; i++) {
		sp = p;
		sm.index = i;
		sm.nlua = sm.nhost = 0;
		ULEB(dt, "dt");
		if (UTIL_UNLIKELY(t + dt < t)) {
			why = "time overflows 64 bits";
			goto bad;
		}
		t += dt;
		sm.ts = t;
		if (UTIL_UNLIKELY(p >= end)) {
			field = "state";
			goto bad_int;
		}
		sm.state = *p++;
		sm.missed = 0;
		if ((sm.state & FORMAT_STATE_MISSED) && v11) {
			sm.state &= ~(unsigned)FORMAT_STATE_MISSED;
			ULEB(sm.missed, "missed");
			if (UTIL_UNLIKELY(sm.missed > DECODE_MAX_MISSED)) {
				why = "missed intervals out of range";
				goto bad;
			}
		}
		/* Version 14: another state than 7 in a trace. */
		int traced = sm.state == FORMAT_STATE_TRACE;
		if ((sm.state & FORMAT_STATE_TRACED) && v14) {
			sm.state &= ~(unsigned)FORMAT_STATE_TRACED;
			traced = 1;
		}
		if (UTIL_UNLIKELY(sm.state >= FORMAT_STATE__MAX ||
				  (sm.state == FORMAT_STATE_LJLOG && !v14))) {
			why = "unknown state";
			goto bad;
		}
		if (v6) {
			/* Version 6: the STACK, then the trace in state 7. */
			ULEB(v, "stack");
			sm.stack = NULL;
			sm.lua = lua;
			sm.host = host;
			if (v) {
				struct decode_obj *o =
				    v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
				bad_v = v;
				if (UTIL_UNLIKELY(!o || o->kind !=
							    FORMAT_REC_STACK)) {
					why = o ? "stack is not a STACK"
						: "stack ID used before "
						  "definition";
					goto bad_id;
				}
				sm.stack = o;
				stack_frames(o, lua, host);
				sm.nlua = o->u.stack.nlua;
				sm.nhost = o->u.stack.nhost;
			}
			v = 0;
			if (traced)
				ULEB(v, "trace");
		} else {
			ULEB(v, "trace");
		}
		sm.trace = NULL;
		if (v) {
			struct decode_obj *o =
			    v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
			bad_v = v;
			if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_TRACE)) {
				why = o ? "trace is not a TRACE"
					: "trace ID used before definition";
				goto bad_id;
			}
			if (UTIL_UNLIKELY(!traced)) {
				why = "a trace ID outside state 7 (trace)";
				goto bad_id;
			}
			sm.trace = o;
		}
		sm.pcofs = 0;
		sm.inlined = 0;
		sm.chkofs = 0;
		if (traced && d->intro.version >= 3)
			ULEB(sm.pcofs, "pcofs");
		if (traced && v14)
			ULEB(sm.chkofs, "chkofs");
		if (v6)
			goto frames_done;
		ULEB(v, "nlua");
		if (UTIL_UNLIKELY(v > DECODE_MAX_FRAMES)) {
			bad_v = v;
			why = "more Lua frames than the reader accepts";
			goto bad_count;
		}
		sm.nlua = (uint32_t)v;
		for (j = 0; j < sm.nlua; j++) {
			ULEB(v, "Lua frame func");
			struct decode_obj *o =
			    v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
			if (UTIL_UNLIKELY(!o ||
					  (o->kind != FORMAT_REC_PROTO &&
					   o->kind != FORMAT_REC_CFUNC &&
					   o->kind != FORMAT_REC_FFUNC))) {
				bad_v = v;
				why = o ? "Lua frame func is not a function"
					: "Lua frame func ID used before "
					  "definition";
				goto bad_id;
			}
			lua[j].func = o;
			ULEB(lua[j].line, "Lua frame line");
		}
		ULEB(v, "nhost");
		if (UTIL_UNLIKELY(v > DECODE_MAX_FRAMES)) {
			bad_v = v;
			why = "more host frames than the reader accepts";
			goto bad_count;
		}
		sm.nhost = (uint32_t)v;
		for (j = 0; j < sm.nhost; j++) {
			ULEB(v, "host frame sym");
			struct decode_obj *o =
			    v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
			if (UTIL_UNLIKELY(!o ||
					  o->kind != FORMAT_REC_HOSTSYM)) {
				bad_v = v;
				why = o ? "host frame sym is not a HOSTSYM"
					: "host frame sym ID used before "
					  "definition";
				goto bad_id;
			}
			host[j] = o;
		}
	frames_done:
		if (sm.trace && (sm.pcofs || sm.chkofs))
			inline_frames(&sm, lua);
		if (fn && (rc = fn(ud, &sm)) != 0)
			return rc;
	}
	if (p != end)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "%zu bytes left after the %llu samples the count "
		    "announces",
		    (size_t)(end - p), (unsigned long long)n);
	vo->last_sample_ts = t;
	vo->samples += n;
	d->samples += n;
	d->dropped += h.dropped;
	d->sblocks++;
	if (d->sink.samples_done && (rc = d->sink.samples_done(d->sink.ud, &h)))
		return rc;
	return 0;

bad_int:
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "sample %llu of %llu at payload offset %zu: field '%s' "
	    "runs past the payload end or is not a valid integer",
	    (unsigned long long)i, (unsigned long long)n,
	    (size_t)(sp - c->start), field);
bad_id:
	return dec_corrupt(d, b, -EBADMSG,
			   "sample %llu of %llu at payload offset %zu: %s (ID "
			   "%llu)",
			   (unsigned long long)i, (unsigned long long)n,
			   (size_t)(sp - c->start), why,
			   (unsigned long long)bad_v);
bad_count:
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "sample %llu of %llu at payload offset %zu: %s (%llu, "
	    "at most %u)",
	    (unsigned long long)i, (unsigned long long)n,
	    (size_t)(sp - c->start), why, (unsigned long long)bad_v,
	    DECODE_MAX_FRAMES);
bad:
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "sample %llu of %llu (state %u) at payload offset %zu: "
	    "%s",
	    (unsigned long long)i, (unsigned long long)n, sm.state,
	    (size_t)(sp - c->start), why);
}
