/*
** ljlog reader library: SAMPLES blocks (hot), one sink call per sample.
** A sample is its time and state (sm_state), then its frames as its
** block's version lays them out, picked once per block: a STACK and the
** trace (sm_v6, version 6 on) or the trace and the frames themselves
** (sm_v1); each part reads into the sample, checks and returns the
** cursor, or NULL with the reason, which sm_error turns into the message.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -- SAMPLES (hot) -------------------------------------------------------------- */

/* Snapshot sn's outermost function is the sample's innermost frame in
** memory or one of its callers (a trace that returned below its start). */
static int fits(const struct decode_texit *sn,
		const struct decode_lua_frame *lua, uint32_t nlua)
{
	if (!sn->nframes)
		return 0;
	for (uint32_t k = 0; k < nlua; k++)
		if (lua[k].func == sn->f[0].func)
			return 1;
	return 0;
}

/* A sample in a trace (state 7): compiled code keeps the Lua
** functions it inlined, and the line it runs, only in the trace's
** snapshots; take them from the snapshot LuaJIT's profiler would charge:
** the one holding the next profile check (version 14, chkofs), else the
** one at or before the sampled offset (the rightmost one starting there,
** as LuaJIT's unwinder does). They
** replace the innermost frame read from memory, the function the trace
** started in, whose line is unknown there (0), and the frames down to the
** snapshot's outermost function where the trace returned below its start.
** Callers below stay; at DECODE_MAX_FRAMES the outermost go. Where the
** snapshot and memory disagree, the rules are doc/format.txt's ("Frames
** of a sample in a trace"). */
static void inline_frames(struct decode_sample *sm,
			  struct decode_lua_frame *lua)
{
	const struct decode_obj *t = sm->trace;
	const struct decode_texit *sn =
	    decode_trace_exit(t, (sm->chkofs ? sm->chkofs : sm->pcofs) - 1);
	if (!sn)
		return;
	/* The check's snapshot may lie past a return below the trace's start
	** whose guard this call does not pass (the trace returns to the
	** caller it was recorded with; this call's caller, in memory, is
	** another): its outermost function is then neither the frame in
	** memory nor a caller of it, and the code runs on only to the guard's
	** exit, in the snapshot at the sampled offset. */
	int fit = fits(sn, lua, sm->nlua);
	const struct decode_texit *at = NULL;
	if (!fit && sm->chkofs && sm->pcofs)
		at = decode_trace_exit(t, sm->pcofs - 1);
	if (at && fits(at, lua, sm->nlua)) {
		sn = at;
		fit = 1;
	}
	/* Neither fits. The collector called from compiled code: the trace
	** was found from a return address on the C stack, which may be an
	** older call's; the frames in memory stand. */
	if (!fit && sm->state != FORMAT_STATE_TRACE)
		return;
	/* A check reached round the loop (chkofs before pcofs) is
	** in the next pass from the trace's start, whose function the
	** frame in memory calls again (a trace that returned below its start
	** and links to itself): that frame stays, below the snapshot's. Else
	** the code runs where pcofs is, and the check may lie past guards this
	** call fails: the snapshot at pcofs, whose frames replace the frame in
	** memory (a call at the trace's base replaced it: a tail call). */
	int again = !fit && sm->chkofs && sm->chkofs < sm->pcofs;
	if (!fit && !again && at && at->nframes)
		sn = at;
	uint32_t m = sn->nframes, from = 0;
	if (!m)
		return;
	if (sm->nlua && lua[0].func->kind == FORMAT_REC_PROTO &&
	    (lua[0].func == sn->f[0].func || lua[0].line == 0) && !again)
		from = 1;
	/* A trace that returned below the function it started in (a side
	** trace of energy() going on in the main chunk that called it): its
	** snapshot's outermost frame is a caller of the frame in memory,
	** which the trace has left, with the frames between. Those go too;
	** the first caller that is the snapshot's outermost function is
	** where the trace runs. (Without: main;main;advance.) */
	if (from == 1 && lua[0].func != sn->f[0].func)
		for (uint32_t k = 1; k < sm->nlua; k++)
			if (lua[k].func == sn->f[0].func) {
				from = k + 1;
				break;
			}
	uint32_t rest = sm->nlua - from;
	if (m + rest > DECODE_MAX_FRAMES)
		rest = DECODE_MAX_FRAMES - m;
	memmove(lua + m, lua + from, rest * sizeof *lua);
	for (uint32_t j = 0; j < m; j++)
		lua[j] = sn->f[m - 1 - j];
	sm->nlua = m + rest;
	sm->inlined = m;
}

/* A frame whose line is not known (0: a sample in a trace without an
** offset into it, in the VM's code it called) is on the function's only
** line when the function has one (numline 0: a comparator written on
** one line), and stays unknown otherwise. */
static void one_line_frames(struct decode_sample *sm,
			    struct decode_lua_frame *lua)
{
	for (uint32_t j = 0; j < sm->nlua; j++) {
		const struct decode_obj *o = lua[j].func;
		if (!lua[j].line && o->kind == FORMAT_REC_PROTO &&
		    o->u.proto.firstline && !o->u.proto.numline)
			lua[j].line = o->u.proto.firstline;
	}
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

/* -- The state of one block's samples ---------------------------------------- */

/* Why a sample is corrupt. */
enum { SM_OK, SM_BAD, SM_BAD_ID, SM_BAD_COUNT, SM_BAD_INT };

struct sms {
	struct decode *d;
	const uint8_t *end;	      /* the payload's */
	struct decode_sample sm;      /* the sample, for the sink */
	struct decode_lua_frame *lua; /* the decoder's frame arrays */
	struct decode_obj **host;
	uint64_t t;	   /* its time */
	int traced;	   /* it is in a trace */
	int v3, v11, v14;  /* the block's version is at least */
	uint64_t i;	   /* the sample's number */
	const uint8_t *sp; /* where it starts */
	const uint8_t *p;  /* after the last sample */
	int fail;	   /* SM_* */
	const char *why;   /* the reason, or the field */
	uint64_t bad_v;	   /* the ID or count (SM_BAD_ID, _COUNT) */
};

/* A part of a sample at p: the cursor after it, or NULL (sm_bad*). */
typedef const uint8_t *sm_fn(struct sms *s, const uint8_t *p);

/* A sample's field that is not a valid integer or runs past the end. */
static const uint8_t *sm_bad_int(struct sms *s, const char *field)
{
	s->fail = SM_BAD_INT;
	s->why = field;
	return NULL;
}

/* A sample that is wrong for why. */
static const uint8_t *sm_bad(struct sms *s, const char *why)
{
	s->fail = SM_BAD;
	s->why = why;
	return NULL;
}

/* A sample naming ID v (SM_BAD_ID) or counting v (SM_BAD_COUNT), wrong
** for why. */
static const uint8_t *sm_bad_v(struct sms *s, int fail, const char *why,
			       uint64_t v)
{
	s->fail = fail;
	s->why = why;
	s->bad_v = v;
	return NULL;
}

/* Field readers over locals s, p and end (see DEC_ULEB). */
#define ULEB(v, what) DEC_ULEB(v, return sm_bad_int(s, what))

/* -- A sample's parts ---------------------------------------------------------- */

/* dt and the state (version 11: missed intervals; 14: a trace in another
** state than 7, and state 9). */
static const uint8_t *sm_state(struct sms *s, const uint8_t *p)
{
	const uint8_t *const end = s->end;
	struct decode_sample *sm = &s->sm;
	uint64_t dt;
	ULEB(dt, "dt");
	if (UTIL_UNLIKELY(s->t + dt < s->t))
		return sm_bad(s, "time overflows 64 bits");
	s->t += dt;
	sm->ts = s->t;
	if (UTIL_UNLIKELY(p >= end))
		return sm_bad_int(s, "state");
	sm->state = *p++;
	sm->missed = 0;
	if ((sm->state & FORMAT_STATE_MISSED) && s->v11) {
		sm->state &= ~(unsigned)FORMAT_STATE_MISSED;
		ULEB(sm->missed, "missed");
		if (UTIL_UNLIKELY(sm->missed > DECODE_MAX_MISSED))
			return sm_bad(s, "missed intervals out of range");
	}
	s->traced = sm->state == FORMAT_STATE_TRACE;
	if ((sm->state & FORMAT_STATE_TRACED) && s->v14) {
		sm->state &= ~(unsigned)FORMAT_STATE_TRACED;
		s->traced = 1;
	}
	if (UTIL_UNLIKELY(sm->state >= FORMAT_STATE__MAX ||
			  (sm->state == FORMAT_STATE_LJLOG && !s->v14)))
		return sm_bad(s, "unknown state");
	return p;
}

/* The trace ID v read (0: none), checked; then, in a trace, the offset
** into its code (version 3) and of its next profile check (version 14). */
static const uint8_t *sm_trace(struct sms *s, const uint8_t *p, uint64_t v)
{
	const uint8_t *const end = s->end;
	struct decode_sample *sm = &s->sm;
	sm->trace = NULL;
	if (v) {
		struct decode_obj *o = dec_find(s->d, v);
		if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_TRACE))
			return sm_bad_v(s, SM_BAD_ID,
					o ? "trace is not a TRACE"
					  : "trace ID used before definition",
					v);
		if (UTIL_UNLIKELY(!s->traced))
			return sm_bad_v(s, SM_BAD_ID,
					"a trace ID outside state 7 (trace)",
					v);
		sm->trace = o;
	}
	sm->pcofs = 0;
	sm->inlined = 0;
	sm->chkofs = 0;
	if (s->traced && s->v3)
		ULEB(sm->pcofs, "pcofs");
	if (s->traced && s->v14)
		ULEB(sm->chkofs, "chkofs");
	return p;
}

/* Version 6 on: the STACK (0: none) and its frames, then the trace when
** the sample is in one. */
static const uint8_t *sm_v6(struct sms *s, const uint8_t *p)
{
	const uint8_t *const end = s->end;
	struct decode_sample *sm = &s->sm;
	uint64_t v;
	ULEB(v, "stack");
	sm->stack = NULL;
	sm->lua = s->lua;
	sm->host = s->host;
	if (v) {
		struct decode_obj *o = dec_find(s->d, v);
		if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_STACK))
			return sm_bad_v(s, SM_BAD_ID,
					o ? "stack is not a STACK"
					  : "stack ID used before definition",
					v);
		sm->stack = o;
		stack_frames(o, s->lua, s->host);
		sm->nlua = o->u.stack.nlua;
		sm->nhost = o->u.stack.nhost;
	}
	v = 0;
	if (s->traced)
		ULEB(v, "trace");
	return sm_trace(s, p, v);
}

/* Before version 6, after the trace: the Lua frames, each a function and
** its line. */
static const uint8_t *sm_lua(struct sms *s, const uint8_t *p)
{
	const uint8_t *const end = s->end;
	struct decode_lua_frame *const lua = s->lua;
	uint64_t v;
	ULEB(v, "nlua");
	if (UTIL_UNLIKELY(v > DECODE_MAX_FRAMES))
		return sm_bad_v(s, SM_BAD_COUNT,
				"more Lua frames than the reader accepts", v);
	s->sm.nlua = (uint32_t)v;
	for (uint32_t j = 0; j < s->sm.nlua; j++) {
		ULEB(v, "Lua frame func");
		struct decode_obj *o = dec_find(s->d, v);
		if (UTIL_UNLIKELY(!o || !dec_is_func(o)))
			return sm_bad_v(s, SM_BAD_ID,
					o ? "Lua frame func is not a function"
					  : "Lua frame func ID used before "
					    "definition",
					v);
		lua[j].func = o;
		ULEB(lua[j].line, "Lua frame line");
	}
	return p;
}

/* Before version 6, after the Lua frames: the host frames, HOSTSYMs. */
static const uint8_t *sm_host(struct sms *s, const uint8_t *p)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	ULEB(v, "nhost");
	if (UTIL_UNLIKELY(v > DECODE_MAX_FRAMES))
		return sm_bad_v(s, SM_BAD_COUNT,
				"more host frames than the reader accepts", v);
	s->sm.nhost = (uint32_t)v;
	for (uint32_t j = 0; j < s->sm.nhost; j++) {
		ULEB(v, "host frame sym");
		struct decode_obj *o = dec_find(s->d, v);
		if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_HOSTSYM))
			return sm_bad_v(s, SM_BAD_ID,
					o ? "host frame sym is not a HOSTSYM"
					  : "host frame sym ID used before "
					    "definition",
					v);
		s->host[j] = o;
	}
	return p;
}

/* Before version 6: the trace, then the Lua and host frames. */
static const uint8_t *sm_v1(struct sms *s, const uint8_t *p)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	ULEB(v, "trace");
	if (!(p = sm_trace(s, p, v)) || !(p = sm_lua(s, p)))
		return NULL;
	return sm_host(s, p);
}

/* -- The loop ------------------------------------------------------------------ */

/* The n samples from p, each to the sink, their frames laid out by
** frames: 0 (s->p after the last), a sink's return, or non-zero with
** s->fail set (s->i, s->sp the sample). */
static int sm_loop(struct sms *s, const uint8_t *p, uint64_t n, sm_fn *frames)
{
	int (*const fn)(void *, const struct decode_sample *) =
	    s->d->sink.sample;
	void *const ud = s->d->sink.ud;
	struct decode_sample *sm = &s->sm;
	int rc;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *q;
		sm->index = i;
		sm->nlua = sm->nhost = 0;
		if (UTIL_UNLIKELY(!(q = sm_state(s, p)) ||
				  !(q = frames(s, q)))) {
			s->i = i;
			s->sp = p;
			return 1;
		}
		p = q;
		if (sm->trace && (sm->pcofs || sm->chkofs))
			inline_frames(sm, s->lua);
		one_line_frames(sm, s->lua);
		if (fn && (rc = fn(ud, sm)) != 0)
			return rc;
	}
	s->p = p;
	return 0;
}

/* The message for sample s->i of n, corrupt for s->fail. */
static int sm_error(struct decode *d, const struct reader_block *b,
		    const struct decode_cur *c, const struct sms *s, uint64_t n)
{
	unsigned long long i = s->i, nn = n, v = s->bad_v;
	size_t at = (size_t)(s->sp - c->start);
	if (s->fail == SM_BAD_INT)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "sample %llu of %llu at payload offset %zu: field '%s' "
		    "runs past the payload end or is not a valid integer",
		    i, nn, at, s->why);
	if (s->fail == SM_BAD_ID)
		return dec_corrupt(d, b, -EBADMSG,
				   "sample %llu of %llu at payload offset %zu: "
				   "%s (ID %llu)",
				   i, nn, at, s->why, v);
	if (s->fail == SM_BAD_COUNT)
		return dec_corrupt(d, b, -EBADMSG,
				   "sample %llu of %llu at payload offset %zu: "
				   "%s (%llu, at most %u)",
				   i, nn, at, s->why, v, DECODE_MAX_FRAMES);
	return dec_corrupt(d, b, -EBADMSG,
			   "sample %llu of %llu (state %u) at payload offset "
			   "%zu: %s",
			   i, nn, s->sm.state, at, s->why);
}

/* -- SAMPLES blocks ------------------------------------------------------------ */

/* The decoder's frame arrays (DECODE_MAX_FRAMES each), made once. */
static int frame_arrays(struct decode *d, const struct reader_block *b)
{
	if (d->lua)
		return 0;
	d->lua = malloc(DECODE_MAX_FRAMES * sizeof *d->lua);
	d->host = malloc(DECODE_MAX_FRAMES * sizeof *d->host);
	if (!d->lua || !d->host) {
		free(d->lua);
		free(d->host);
		d->lua = NULL;
		d->host = NULL;
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	}
	return 0;
}

/* A SAMPLES header into h, checked: its VM defined, its signals the sum
** of count and dropped, its count within what remains (at least min bytes
** each); a base_ts before the VM's last sample is a warning. Then the
** sink's samples. */
static int sm_head(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, struct decode_samples *h, unsigned min)
{
	uint64_t vm;
	int rc;
	memset(h, 0, sizeof *h);
	h->block = b;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0 ||
	    (rc = dec_get_u(c, "count", &h->count)) < 0 ||
	    (rc = dec_get_u(c, "base_ts", &h->base_ts)) < 0 ||
	    (rc = dec_get_clock(c, &h->clock)) < 0 ||
	    (rc = dec_get_u(c, "thread", &h->thread)) < 0 ||
	    (rc = dec_get_u(c, "signals", &h->signals)) < 0 ||
	    (rc = dec_get_u(c, "dropped", &h->dropped)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *vo = dec_find(d, vm);
	if (!vo || vo->kind != FORMAT_REC_VM)
		return dec_corrupt(d, b, -EBADMSG,
				   "samples of VM ID %llu, which is %s",
				   (unsigned long long)vm,
				   vo ? "not a VM" : "not defined before use");
	if (h->count + h->dropped < h->count ||
	    h->signals != h->count + h->dropped)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "signals %llu is not count %llu + dropped %llu",
		    (unsigned long long)h->signals,
		    (unsigned long long)h->count,
		    (unsigned long long)h->dropped);
	if (h->count > (uint64_t)(c->end - c->p) / min)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "count %llu samples cannot fit in the %zu bytes "
		    "left (%u bytes at least each)",
		    (unsigned long long)h->count, (size_t)(c->end - c->p), min);
	if (h->base_ts < vo->last_sample_ts)
		dec_warn(d,
			 "block %llu (SAMPLES) at offset %llu: base_ts %llu is "
			 "before the last sample time %llu of VM %llu",
			 (unsigned long long)b->index,
			 (unsigned long long)b->offset,
			 (unsigned long long)h->base_ts,
			 (unsigned long long)vo->last_sample_ts,
			 (unsigned long long)vm);
	if ((rc = frame_arrays(d, b)) != 0)
		return rc;
	h->vm = (uint32_t)vm + d->idbase;
	h->vmobj = vo;
	if (d->sink.samples && (rc = d->sink.samples(d->sink.ud, h)))
		return rc;
	return 0;
}

/* Decode a SAMPLES payload, one sink call per sample. */
int dec_samples(struct decode *d, const struct reader_block *b,
		struct decode_cur *c)
{
	struct decode_samples h;
	struct sms s;
	int rc;
	/* Version 6: dt, state, stack; before: dt, state, trace, nlua, nhost. */
	const int v6 = d->intro.version >= 6;
	if ((rc = sm_head(d, b, c, &h, v6 ? 3 : 5)) != 0)
		return rc;
	memset(&s, 0, sizeof s);
	s.d = d;
	s.end = c->end;
	s.t = h.base_ts;
	s.v3 = d->intro.version >= 3;
	s.v11 = d->intro.version >= 11;
	s.v14 = d->intro.version >= 14;
	s.lua = d->lua;
	s.host = d->host;
	s.sm.vm = h.vm;
	s.sm.vmobj = h.vmobj;
	s.sm.lua = d->lua;
	s.sm.host = d->host;
	rc = sm_loop(&s, c->p, h.count, v6 ? sm_v6 : sm_v1);
	if (s.fail)
		return sm_error(d, b, c, &s, h.count);
	if (rc)
		return rc;
	if (s.p != c->end)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "%zu bytes left after the %llu samples the count "
		    "announces",
		    (size_t)(c->end - s.p), (unsigned long long)h.count);
	h.vmobj->last_sample_ts = s.t;
	h.vmobj->samples += h.count;
	d->samples += h.count;
	d->dropped += h.dropped;
	d->sblocks++;
	if (d->sink.samples_done && (rc = d->sink.samples_done(d->sink.ud, &h)))
		return rc;
	return 0;
}
