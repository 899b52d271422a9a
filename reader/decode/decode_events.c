/*
** ljlog reader library: EVENTS blocks (hot), one sink call per event.
** A table of event ops (FORMAT_OP_*, and one of VM events) gives each op
** its decoder: it reads the fields after the op byte into the event and
** the block's running state (slot, addresses), checks them and returns
** the cursor, or NULL with the reason; the loop around it reads dt, calls
** the sink, and turns a reason into the message with its offset.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
** ev->line 1 + the offset into its code or 0 (version 19: 4 times that,
** plus what the code called, FORMAT_CALL_*). Resolve it to the snapshot
** there (see decode.h, struct decode_event). */
static void trace_site(struct decode_event *ev, int v19)
{
	struct decode_obj *t = ev->obj;
	unsigned cls = v19 ? (unsigned)(ev->line & 3) : FORMAT_CALL_ANY;
	ev->trace = t;
	ev->pcofs = v19 ? ev->line >> 2 : ev->line;
	ev->line = 0;
	if (!t || !ev->pcofs)
		return;
	const struct decode_texit *sn = decode_trace_exit(t, ev->pcofs - 1);
	if (!sn || !sn->nframes)
		return;
	ev->texit = sn;
	ev->obj = sn->f[sn->afr - 1].func;
	if (!sn->has_aline)
		ev->line = sn->f[sn->afr - 1].line;
	else if (cls < 3 && sn->aline[cls])
		ev->line = sn->aline[cls];
	else
		ev->line = sn->aline[FORMAT_CALL_ANY];
}

/* -- The state of one block's events ----------------------------------------- */

/* Why an event is corrupt. */
enum { EV_OK, EV_BAD, EV_BAD_ID, EV_BAD_INT, EV_NOMEM };

struct evs {
	struct decode *d;
	const uint8_t *end;	/* the payload's */
	struct decode_event ev; /* the event, for the sink */
	uint64_t t;		/* its time */
	int64_t slot;		/* ENTER, EXIT: the slot so far */
	uint64_t addr;		/* ALLOC, FREE, REALLOC: the last address */
	/* Version 12: ALLOC and FREE may leave dt out; their addresses are
	** from anext and fprev (doc/format.txt). */
	uint64_t anext, fprev;
	int v12;
	int v19;  /* trace sites carry what the code called */
	int nodt; /* this event has no dt (ev_time resets it) */
	/* Version 6: a trace site names the TRACE; before, its first PROTO. */
	unsigned trace_kind;
	uint64_t i;	    /* the event's number */
	const uint8_t *evp; /* where it starts */
	const uint8_t *p;   /* after the last event; where it failed */
	int fail;	    /* EV_* */
	const char *why;    /* the reason, or the field (EV_BAD_INT) */
};

/* Each reads the fields of an event of this op after its op byte (at
** p, lo its low bits) into s->ev; the cursor after them, or NULL (one of
** the ev_bad* below). */
typedef const uint8_t *ev_fn(struct evs *s, const uint8_t *p, unsigned lo);

/* An event's field that is not a valid integer or runs past the end. */
static const uint8_t *ev_bad_int(struct evs *s, const char *field)
{
	s->fail = EV_BAD_INT;
	s->why = field;
	return NULL;
}

/* An event that is wrong for why, at cursor p. */
static const uint8_t *ev_bad(struct evs *s, const uint8_t *p, const char *why)
{
	s->fail = EV_BAD;
	s->why = why;
	s->p = p;
	return NULL;
}

/* An event naming ID v, which is wrong for why. */
static const uint8_t *ev_bad_id(struct evs *s, const char *why, uint64_t v)
{
	s->ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	s->fail = EV_BAD_ID;
	s->why = why;
	return NULL;
}

/* The decoders of ENTER and EXIT, most events of a log, and of an
** event's op byte and dt are inlined into the loop (as calls, a quarter
** more instructions on a calls log); the others go through the op table. */
#define EV_HOT inline __attribute__((always_inline))

/* Field readers over locals s, p and end (see DEC_ULEB). */
#define ULEB(v, what) DEC_ULEB(v, return ev_bad_int(s, what))
#define SLEB(v, what) DEC_SLEB(v, return ev_bad_int(s, what))

/* -- One decoder per op ------------------------------------------------------ */

/* ENTER, EXIT: the slot, a delta in lo (or a sleb after it). */
static EV_HOT const uint8_t *ev_slot(struct evs *s, const uint8_t *p,
				     unsigned lo)
{
	const uint8_t *const end = s->end;
	int64_t delta;
	if (UTIL_LIKELY(lo != FORMAT_SLOT_ESCAPE))
		delta = blocks_unzigzag(lo);
	else
		SLEB(delta, "slot delta");
	s->slot += delta;
	if (UTIL_UNLIKELY(s->slot < 0))
		return ev_bad(s, p, "slot below 0");
	s->ev.slot = s->slot;
	return p;
}

/* ENTER: the slot, then the function, a PROTO, CFUNC or FFUNC. */
static EV_HOT const uint8_t *ev_enter(struct evs *s, const uint8_t *p,
				      unsigned lo)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	if (UTIL_UNLIKELY(!(p = ev_slot(s, p, lo))))
		return NULL;
	ULEB(v, "func");
	struct decode_obj *o = dec_find(s->d, v);
	if (UTIL_UNLIKELY(!o || !dec_is_func(o)))
		return ev_bad_id(s,
				 o ? "func is not a function"
				   : "func ID used before definition",
				 v);
	s->ev.id = (uint32_t)v;
	s->ev.obj = o;
	return p;
}

/* What is wrong with site o (ID v) for a site of kind lo (known), NULL
** if nothing. */
static const char *site_wrong(const struct evs *s, unsigned lo, uint64_t v,
			      const struct decode_obj *o)
{
	switch (lo) {
	case FORMAT_SITE_LUA:
		/* 0: not a Lua function (a trace aborted in a fast
		** function or C function). */
		if (v != 0 && (!o || o->kind != FORMAT_REC_PROTO))
			return "lua site is not a PROTO";
		return NULL;
	case FORMAT_SITE_C:
		if (!o || (o->kind != FORMAT_REC_CFUNC &&
			   o->kind != FORMAT_REC_FFUNC))
			return "c site is not a CFUNC or FFUNC";
		return NULL;
	case FORMAT_SITE_TRACE:
		if (o && o->kind != s->trace_kind)
			return s->trace_kind == FORMAT_REC_TRACE
				   ? "trace site is not a TRACE"
				   : "trace site is not a PROTO";
		return NULL;
	case FORMAT_SITE_LJLOG:
		if (s->d->intro.version < 18)
			return "site kind ljlog before version 18";
		/* fall through */
	case FORMAT_SITE_UNKNOWN:
	case FORMAT_SITE_GC: return o ? "this site kind takes site 0" : NULL;
	default: return NULL; /* JIT, INTERNAL */
	}
}

/* ALLOC, REALLOC: the site (of kind lo) and its line. */
static const uint8_t *ev_site(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	const char *why;
	uint64_t v;
	ULEB(v, "site");
	struct decode_obj *o = dec_find(s->d, v);
	s->ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	if (UTIL_UNLIKELY(v && !o))
		return ev_bad_id(s, "site ID used before definition", v);
	if (UTIL_UNLIKELY(lo >= FORMAT_SITE__MAX))
		return ev_bad(s, p, "unknown site kind");
	if (UTIL_UNLIKELY((why = site_wrong(s, lo, v, o)) != NULL))
		return ev_bad_id(s, why, v);
	s->ev.obj = o;
	ULEB(s->ev.line, "line");
	s->ev.trace = NULL;
	s->ev.texit = NULL;
	if (lo == FORMAT_SITE_TRACE && s->trace_kind == FORMAT_REC_TRACE)
		trace_site(&s->ev, s->v19);
	return p;
}

/* ALLOC: the site, the size, the address (from the last ALLOC's end in
** version 12, when lo may say there is no dt). */
static const uint8_t *ev_alloc(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	int64_t delta;
	if (s->v12 && (lo & FORMAT_ALLOC_NODT)) {
		s->nodt = 1;
		lo &= ~FORMAT_ALLOC_NODT;
		s->ev.lo = lo;
	}
	if (UTIL_UNLIKELY(!(p = ev_site(s, p, lo))))
		return NULL;
	ULEB(s->ev.size, "size");
	SLEB(delta, "addr delta");
	s->addr = (s->v12 ? s->anext : s->addr) + (uint64_t)delta;
	s->anext = s->addr + format_chunk(s->ev.size);
	s->ev.addr = s->addr;
	return p;
}

/* REALLOC: the site, the old block, the new one. */
static const uint8_t *ev_realloc(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	int64_t delta;
	if (UTIL_UNLIKELY(!(p = ev_site(s, p, lo))))
		return NULL;
	SLEB(delta, "old addr delta");
	s->ev.old_addr = s->addr + (uint64_t)delta;
	ULEB(s->ev.old_size, "old size");
	SLEB(delta, "new addr delta");
	s->addr = s->ev.old_addr + (uint64_t)delta;
	s->ev.addr = s->addr;
	ULEB(s->ev.size, "new size");
	return p;
}

/* FREE: the block (version 12: size first, the address from the last
** FREE's start, and lo may say there is no dt). */
static const uint8_t *ev_free(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	int64_t delta;
	if (s->v12) {
		if (UTIL_UNLIKELY(lo > FORMAT_FREE_NODT))
			return ev_bad(s, p, "FREE with lo not 0 or 1");
		s->nodt = lo == FORMAT_FREE_NODT;
		ULEB(s->ev.size, "size");
		SLEB(delta, "addr delta");
		s->addr = s->fprev - format_chunk(s->ev.size) + (uint64_t)delta;
		s->fprev = s->addr;
		s->ev.addr = s->addr;
		return p;
	}
	if (UTIL_UNLIKELY(lo))
		return ev_bad(s, p, "FREE with lo not 0");
	SLEB(delta, "addr delta");
	s->addr += (uint64_t)delta;
	s->ev.addr = s->addr;
	ULEB(s->ev.size, "size");
	return p;
}

/* GC: the phase in lo, the heap size. */
static const uint8_t *ev_gc(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	if (UTIL_UNLIKELY(lo >= FORMAT_GC__MAX))
		return ev_bad(s, p, "unknown GC phase");
	ULEB(s->ev.heap, "heap");
	return p;
}

/* SWITCH: the coroutine switched to, the VM's current one from now. */
static const uint8_t *ev_switch(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	if (UTIL_UNLIKELY(lo))
		return ev_bad(s, p, "SWITCH with lo not 0");
	ULEB(v, "coroutine");
	struct decode_obj *o = dec_find(s->d, v);
	if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_COROUTINE))
		return ev_bad_id(s,
				 o ? "coroutine is not a COROUTINE"
				   : "coroutine ID used before definition",
				 v);
	s->ev.id = (uint32_t)v;
	s->ev.obj = o;
	s->ev.co = s->ev.vmobj->co = (uint32_t)v;
	return p;
}

/* -- VM events (op VM, the sub-kind in lo) ----------------------------------- */

/* VM ATTACH, DETACH: the heap size. */
static const uint8_t *vm_heap(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	(void)lo;
	ULEB(s->ev.heap, "heap");
	return p;
}

/* VM TRACE_START: the trace number, the PROTO and line it starts at. */
static const uint8_t *vm_trace_start(struct evs *s, const uint8_t *p,
				     unsigned lo)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	(void)lo;
	ULEB(s->ev.traceno, "traceno");
	ULEB(v, "proto");
	struct decode_obj *o = dec_find(s->d, v);
	s->ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	/* 0: not a Lua function (a trace aborted in a fast function or C
	** function). */
	if (UTIL_UNLIKELY(v != 0 && (!o || o->kind != FORMAT_REC_PROTO)))
		return ev_bad_id(s,
				 o ? "proto is not a PROTO"
				   : "proto ID used before definition",
				 v);
	s->ev.obj = o;
	ULEB(s->ev.line, "line");
	return p;
}

/* VM TRACE_ABORT: as TRACE_START, then LuaJIT's reason and its message
** (copied: valid during the sink's call). */
static const uint8_t *vm_trace_abort(struct evs *s, const uint8_t *p,
				     unsigned lo)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	if (UTIL_UNLIKELY(!(p = vm_trace_start(s, p, lo))))
		return NULL;
	ULEB(s->ev.reason, "reason");
	ULEB(v, "message");
	if (UTIL_UNLIKELY(v > (uint64_t)(end - p)))
		return ev_bad_int(s, "message");
	if (dec_msg_copy(s->d, p, (size_t)v) < 0) {
		s->fail = EV_NOMEM;
		return NULL;
	}
	s->ev.msg.s = s->d->msg;
	s->ev.msg.len = (size_t)v;
	return p + v;
}

/* VM TRACE_STOP: the TRACE. */
static const uint8_t *vm_trace_stop(struct evs *s, const uint8_t *p,
				    unsigned lo)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	(void)lo;
	ULEB(v, "trace");
	struct decode_obj *o = dec_find(s->d, v);
	s->ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_TRACE))
		return ev_bad_id(s,
				 o ? "trace is not a TRACE"
				   : "trace ID used before definition",
				 v);
	s->ev.obj = o;
	return p;
}

/* VM TRACE_FLUSH: no fields. */
static const uint8_t *vm_none(struct evs *s, const uint8_t *p, unsigned lo)
{
	(void)s;
	(void)lo;
	return p;
}

/* VM ZONE_PUSH, MARK (version 9): the zone's name or the mark's text, a
** STRING. */
static const uint8_t *vm_text(struct evs *s, const uint8_t *p, unsigned lo)
{
	const uint8_t *const end = s->end;
	uint64_t v;
	(void)lo;
	if (UTIL_UNLIKELY(s->d->intro.version < 9))
		return ev_bad(s, p, "zone event before version 9");
	ULEB(v, "text");
	struct decode_obj *o = dec_find(s->d, v);
	s->ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	if (UTIL_UNLIKELY(!o || o->kind != FORMAT_REC_STRING))
		return ev_bad_id(s,
				 o ? "zone name or mark text is not a STRING"
				   : "zone name or mark text ID used before "
				     "definition",
				 v);
	s->ev.obj = o;
	return p;
}

/* VM ZONE_POP (version 9): no fields. */
static const uint8_t *vm_zone_pop(struct evs *s, const uint8_t *p, unsigned lo)
{
	(void)lo;
	if (UTIL_UNLIKELY(s->d->intro.version < 9))
		return ev_bad(s, p, "zone event before version 9");
	return p;
}

/* Every VM event, by FORMAT_VM_* (names: format_vm_name()); a sub-kind
** without a row is corrupt. */
static ev_fn *const vm_ops[] = {
    [FORMAT_VM_ATTACH] = vm_heap,
    [FORMAT_VM_DETACH] = vm_heap,
    [FORMAT_VM_TRACE_START] = vm_trace_start,
    [FORMAT_VM_TRACE_STOP] = vm_trace_stop,
    [FORMAT_VM_TRACE_ABORT] = vm_trace_abort,
    [FORMAT_VM_TRACE_FLUSH] = vm_none,
    [FORMAT_VM_ZONE_PUSH] = vm_text,
    [FORMAT_VM_ZONE_POP] = vm_zone_pop,
    [FORMAT_VM_MARK] = vm_text,
};

/* VM: the VM event of sub-kind lo, through its row. */
static const uint8_t *ev_vm(struct evs *s, const uint8_t *p, unsigned lo)
{
	if (UTIL_UNLIKELY(lo >= sizeof vm_ops / sizeof vm_ops[0] ||
			  !vm_ops[lo]))
		return ev_bad(s, p, "unknown VM event");
	return vm_ops[lo](s, p, lo);
}

/* -- The op table and the loop ----------------------------------------------- */

/* Every event op, by FORMAT_OP_* (names: format_op_name()): a row for each
** value the op bits can hold (ev_one calls ENTER's and EXIT's directly). */
static ev_fn *const ops[] = {
    [FORMAT_OP_ENTER] = ev_enter,     [FORMAT_OP_EXIT] = ev_slot,
    [FORMAT_OP_ALLOC] = ev_alloc,     [FORMAT_OP_FREE] = ev_free,
    [FORMAT_OP_REALLOC] = ev_realloc, [FORMAT_OP_GC] = ev_gc,
    [FORMAT_OP_SWITCH] = ev_switch,   [FORMAT_OP_VM] = ev_vm,
};
_Static_assert(sizeof ops / sizeof ops[0] == 256u >> FORMAT_OP_SHIFT,
	       "a row for every op");

/* An event's dt (unless its op left it out): its time. */
static EV_HOT const uint8_t *ev_time(struct evs *s, const uint8_t *p)
{
	const uint8_t *const end = s->end;
	uint64_t dt = 0;
	if (UTIL_UNLIKELY(s->nodt)) /* reset here: most ops never set it */
		s->nodt = 0;
	else
		ULEB(dt, "dt");
	if (UTIL_UNLIKELY(s->t + dt < s->t))
		return ev_bad(s, p, "time overflows 64 bits");
	s->t += dt;
	s->ev.ts = s->t;
	return p;
}

/* Event i at p (before s->end): its op byte, its op's fields through
** the table, its time; the cursor after it, or NULL. */
static EV_HOT const uint8_t *ev_one(struct evs *s, const uint8_t *p, uint64_t i)
{
	if (UTIL_UNLIKELY(p >= s->end))
		return ev_bad(s, p, "the payload ends here");
	unsigned cb = *p++;
	unsigned op = cb >> FORMAT_OP_SHIFT, lo = cb & FORMAT_LO_MASK;
	s->ev.op = op;
	s->ev.lo = lo;
	s->ev.index = i;
	if (op == FORMAT_OP_ENTER)
		p = ev_enter(s, p, lo);
	else if (op == FORMAT_OP_EXIT)
		p = ev_slot(s, p, lo);
	else
		p = ops[op](s, p, lo);
	return UTIL_LIKELY(p != NULL) ? ev_time(s, p) : NULL;
}

/* The n events from p, each to the sink: 0 (s->p after the last), a
** sink's return, or non-zero with s->fail set (s->i, s->evp the event). */
static int ev_loop(struct evs *s, const uint8_t *p, uint64_t n)
{
	int (*const fn)(void *, const struct decode_event *) = s->d->sink.event;
	void *const ud = s->d->sink.ud;
	int rc;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *q = ev_one(s, p, i);
		if (UTIL_UNLIKELY(!q)) {
			s->i = i;
			s->evp = p;
			return 1;
		}
		p = q;
		if (fn && (rc = fn(ud, &s->ev)) != 0)
			return rc;
	}
	s->p = p;
	return 0;
}

/* The message for event s->i of n, corrupt for s->fail. */
static int ev_error(struct decode *d, const struct reader_block *b,
		    const struct decode_cur *c, const struct evs *s, uint64_t n)
{
	char lb[32]; /* the event's name */
	const char *name = ev_label(s->ev.op, s->ev.lo, lb, sizeof lb);
	size_t at = (size_t)(s->evp - c->start);
	unsigned long long i = s->i;
	if (s->fail == EV_NOMEM)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	if (s->fail == EV_BAD_INT)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "event %llu of %llu (%s) at payload offset %zu: field "
		    "'%s' runs past the payload end or is not a valid integer",
		    i, (unsigned long long)n, name, at, s->why);
	if (s->fail == EV_BAD_ID)
		return dec_corrupt(d, b, -EBADMSG,
				   "event %llu of %llu (%s) at payload offset "
				   "%zu: %s (ID %llu)",
				   i, (unsigned long long)n, name, at, s->why,
				   (unsigned long long)s->ev.id);
	if (s->p > s->end || s->evp >= s->end)
		return dec_corrupt(d, b, -EBADMSG,
				   "payload ends after %llu of %llu events", i,
				   (unsigned long long)n);
	return dec_corrupt(
	    d, b, -EBADMSG,
	    "event %llu of %llu (%s, lo %u) at payload offset %zu: %s", i,
	    (unsigned long long)n, name, s->ev.lo, at, s->why);
}

/* -- EVENTS blocks ------------------------------------------------------------ */

/* An EVENTS header into h, checked: its VM defined, its count within
** what remains, its base_ts not before the VM's last event; then the
** sink's events. */
static int ev_head(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, struct decode_events *h)
{
	uint64_t vm;
	int rc;
	memset(h, 0, sizeof *h);
	h->block = b;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0 ||
	    (rc = dec_get_u(c, "count", &h->count)) < 0 ||
	    (rc = dec_get_u(c, "base_ts", &h->base_ts)) < 0 ||
	    (rc = dec_get_clock(c, &h->clock)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *vo = dec_find(d, vm);
	if (!vo || vo->kind != FORMAT_REC_VM)
		return dec_corrupt(d, b, -EBADMSG,
				   "events of VM ID %llu, which is %s",
				   (unsigned long long)vm,
				   vo ? "not a VM" : "not defined before use");
	if (h->count > (uint64_t)(c->end - c->p) / 2)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "count %llu events cannot fit in the %zu bytes "
		    "left (2 bytes at least each)",
		    (unsigned long long)h->count, (size_t)(c->end - c->p));
	if (h->base_ts < vo->last_ts)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "base_ts %llu is before the last event time %llu "
		    "of VM %llu",
		    (unsigned long long)h->base_ts,
		    (unsigned long long)vo->last_ts, (unsigned long long)vm);
	h->vm = (uint32_t)vm + d->idbase;
	h->vmobj = vo;
	if (d->sink.events && (rc = d->sink.events(d->sink.ud, h)))
		return rc;
	return 0;
}

/* Decode an EVENTS payload, one sink call per event. */
int dec_events(struct decode *d, const struct reader_block *b,
	       struct decode_cur *c)
{
	struct decode_events h;
	struct evs s;
	int rc;
	if ((rc = ev_head(d, b, c, &h)) != 0)
		return rc;
	struct decode_obj *vo = h.vmobj;
	memset(&s, 0, sizeof s);
	s.d = d;
	s.end = c->end;
	s.t = h.base_ts;
	s.v12 = d->intro.version >= 12;
	s.v19 = d->intro.version >= 19;
	s.trace_kind =
	    d->intro.version >= 6 ? FORMAT_REC_TRACE : FORMAT_REC_PROTO;
	s.ev.vm = h.vm;
	s.ev.vmobj = vo;
	s.ev.co = vo->co;
	rc = ev_loop(&s, c->p, h.count);
	if (s.fail)
		return ev_error(d, b, c, &s, h.count);
	if (rc)
		return rc;
	if (s.p != c->end)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "%zu bytes left after the %llu events the count "
		    "announces",
		    (size_t)(c->end - s.p), (unsigned long long)h.count);
	vo->last_ts = s.t;
	vo->events += h.count;
	d->events += h.count;
	if (d->sink.events_done && (rc = d->sink.events_done(d->sink.ud, &h)))
		return rc;
	return 0;
}
