/*
** ljlog reader library, layer 2: the decoder.
** Checks every field against the payload end and every ID against its table.
*/
#include "decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_BITS   12
#define PAGE_SIZE   (1u << PAGE_BITS)
#define ARENA_CHUNK (64u << 10)
#define ERR_MAX	    400

#define LIKELY(x)   __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Arena chunk: objects and strings live until decode_free. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	uint8_t mem[];
};

struct decode {
	struct decode_sink sink;    /* where data goes */
	struct decode_obj ***pages; /* ID table: pages of PAGE_SIZE entries */
	size_t npages;		    /* entries at pages */
	struct chunk *arena;	    /* newest chunk first */
	struct decode_intro intro;  /* copy of the INTRO block */
	struct decode_end end;	    /* copy of the END block */
	int have_intro, have_end;
	uint64_t events;	      /* events in EVENTS blocks so far */
	uint64_t vms;		      /* VM records so far */
	uint64_t samples;	      /* samples in SAMPLES blocks so far */
	uint64_t dropped;	      /* their dropped fields, summed */
	uint64_t sblocks;	      /* SAMPLES blocks so far */
	struct decode_lua_frame *lua; /* a sample's frames, reused */
	struct decode_obj **host;     /* (DECODE_MAX_FRAMES each) */
	char *msg;		      /* TRACE_ABORT message, NUL-terminated */
	size_t msgcap;
	char err[ERR_MAX]; /* last error */
};

/* -- Names ------------------------------------------------------------------- */

static const char *const site_names[] = {
    "unknown", "lua", "c", "trace", "gc", "jit", "internal",
};
static const char *const phase_names[] = {
    "pause", "propagate", "atomic", "sweepstring", "sweep", "finalize",
};
static const char *const op_names[] = {
    "ENTER", "EXIT", "ALLOC", "FREE", "REALLOC", "GC", "SWITCH", "VM",
};
static const char *const rec_names[] = {
    "?", "VM", "PROTO", "CFUNC", "FFUNC", "COROUTINE", "TRACE", "HOSTSYM",
};
static const char *const state_names[] = {
    "interp", "c", "gc", "exit", "record", "opt", "asm", "trace", "idle",
};
static const char *const vm_sub_names[] = {
    "ATTACH",	  "DETACH",	 "TRACE_START",
    "TRACE_STOP", "TRACE_ABORT", "TRACE_FLUSH",
};

/* Any thread. Site kind name. */
const char *decode_site_name(unsigned site)
{
	return site < FORMAT_SITE__MAX ? site_names[site] : "?";
}

/* Any thread. GC phase name. */
const char *decode_gc_phase_name(unsigned phase)
{
	return phase < FORMAT_GC__MAX ? phase_names[phase] : "?";
}

/* Any thread. Event op name. */
const char *decode_op_name(unsigned op)
{
	return op < 8 ? op_names[op] : "?";
}

/* Any thread. MAPPING record kind name. */
const char *decode_rec_name(unsigned kind)
{
	return kind <= FORMAT_REC_HOSTSYM ? rec_names[kind] : "?";
}

/* Any thread. Sample state name. */
const char *decode_state_name(unsigned state)
{
	return state < FORMAT_STATE__MAX ? state_names[state] : "?";
}

/* Any thread. VM event sub-kind name. */
const char *decode_vm_sub_name(unsigned sub)
{
	return sub <= FORMAT_VM_TRACE_FLUSH ? vm_sub_names[sub] : "?";
}

/* Any thread. Chunk name as Lua shows it (see decode.h). */
void decode_chunk_name(const struct decode_str *chunk, char *out, size_t len)
{
	const char *s = chunk->s ? chunk->s : "";
	size_t n = chunk->len;
	if (!len)
		return;
	if (n && (s[0] == '@' || s[0] == '=')) {
		snprintf(out, len, "%.*s", (int)(n - 1), s + 1);
		return;
	}
	/* Source text, as LuaJIT's lj_debug_shortname shows it: up to the
	** first control character, at most 48 bytes whole, else 45 and "...". */
	size_t l = 0;
	while (l < n && l < 48 && (unsigned char)s[l] >= ' ')
		l++;
	int cut = l < n;
	if (cut && l > 45)
		l = 45;
	snprintf(out, len, "[string \"%.*s%s\"]", (int)l, s, cut ? "..." : "");
}

/* -- Arena and ID table ----------------------------------------------------- */

/* Any thread. n bytes, 8-aligned, zeroed; NULL when out of memory. */
static void *arena_alloc(struct decode *d, size_t n)
{
	struct chunk *c = d->arena;
	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->next = d->arena;
		c->used = 0;
		c->size = size;
		d->arena = c;
	}
	void *p = c->mem + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

/* Any thread. Copy a string into the arena, NUL-terminated. */
static int arena_str(struct decode *d, const char *s, size_t len,
		     struct decode_str *out)
{
	char *p = arena_alloc(d, len + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, s, len);
	p[len] = '\0';
	out->s = p;
	out->len = len;
	return 0;
}

/* Any thread. The object with this ID, NULL if undefined (hot path). */
static inline struct decode_obj *lookup(const struct decode *d, uint64_t id)
{
	uint64_t pg = id >> PAGE_BITS;
	if (UNLIKELY(pg >= d->npages) || !d->pages[pg])
		return NULL;
	return d->pages[pg][id & (PAGE_SIZE - 1)];
}

/* Any thread. The object with this ID, NULL if undefined. */
struct decode_obj *decode_lookup(const struct decode *d, uint64_t id)
{
	return id < DECODE_MAX_ID ? lookup(d, id) : NULL;
}

/* Any thread. Enter obj in the ID table (id already range-checked). */
static int insert(struct decode *d, struct decode_obj *obj)
{
	size_t pg = obj->id >> PAGE_BITS;
	if (pg >= d->npages) {
		size_t n = d->npages ? d->npages : 16;
		while (n <= pg)
			n *= 2;
		struct decode_obj ***np = realloc(d->pages, n * sizeof *np);
		if (!np)
			return -ENOMEM;
		memset(np + d->npages, 0, (n - d->npages) * sizeof *np);
		d->pages = np;
		d->npages = n;
	}
	if (!d->pages[pg]) {
		d->pages[pg] = calloc(PAGE_SIZE, sizeof **d->pages);
		if (!d->pages[pg])
			return -ENOMEM;
	}
	d->pages[pg][obj->id & (PAGE_SIZE - 1)] = obj;
	return 0;
}

/* -- Errors ------------------------------------------------------------------ */

/* Any thread. Record "block N (KIND) at offset X: reason"; returns code. */
static int corrupt(struct decode *d, const struct reader_block *b, int code,
		   const char *fmt, ...)
{
	char msg[ERR_MAX - 80];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(d->err, sizeof d->err, "block %llu (%s) at offset %llu: %s",
		 (unsigned long long)b->index, blocks_kind_name(b->h.kind),
		 (unsigned long long)b->offset, msg);
	return code;
}

/* Any thread. Pass a warning to the sink. */
static void warn(struct decode *d, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;
	if (!d->sink.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	d->sink.warn(d->sink.ud, msg);
}

/* -- Field readers (cold blocks) --------------------------------------------- */

/* Cursor over one payload, for the cold block kinds. */
struct cur {
	const uint8_t *p, *start, *end;
	const char *field; /* the field that failed */
};

/* Any thread. Read a uleb field named name. */
static int get_u(struct cur *c, const char *name, uint64_t *v)
{
	if (blocks_uleb_get(&c->p, c->end, v) < 0) {
		c->field = name;
		return -EBADMSG;
	}
	return 0;
}

/* Any thread. Read a str field into the arena. */
static int get_s(struct decode *d, struct cur *c, const char *name,
		 struct decode_str *out)
{
	const char *s;
	size_t len;
	if (blocks_str_get(&c->p, c->end, &s, &len) < 0) {
		c->field = name;
		return -EBADMSG;
	}
	return arena_str(d, s, len, out) < 0 ? -ENOMEM : 0;
}

/* Any thread. Read a CLOCK triple. */
static int get_clock(struct cur *c, struct decode_clock *k)
{
	int rc;
	if ((rc = get_u(c, "clock counter", &k->counter)) < 0 ||
	    (rc = get_u(c, "clock monotonic_ns", &k->mono_ns)) < 0 ||
	    (rc = get_u(c, "clock realtime_ns", &k->real_ns)) < 0)
		return rc;
	return 0;
}

/* Any thread. Error for a field that runs past the payload end. */
static int bad_field(struct decode *d, const struct reader_block *b,
		     struct cur *c, int rc)
{
	if (rc == -ENOMEM)
		return corrupt(d, b, rc, "out of memory");
	return corrupt(d, b, -EBADMSG,
		       "field '%s' at payload offset %zu runs past the payload "
		       "end or is not a valid integer",
		       c->field ? c->field : "?", (size_t)(c->p - c->start));
}

/* Any thread. The payload must end where the fields do. */
static int check_tail(struct decode *d, const struct reader_block *b,
		      struct cur *c, const char *what)
{
	if (c->p != c->end)
		return corrupt(d, b, -EBADMSG,
			       "%zu unexpected bytes after the %s fields",
			       (size_t)(c->end - c->p), what);
	return 0;
}

/* -- INTRO and END ----------------------------------------------------------- */

/* Any thread. Decode an INTRO payload. */
static int do_intro(struct decode *d, const struct reader_block *b,
		    struct cur *c)
{
	struct decode_intro *in = &d->intro;
	int rc;
	memset(in, 0, sizeof *in);
	if ((rc = get_u(c, "version", &in->version)) < 0)
		return bad_field(d, b, c, rc);
	/* Version 2 only adds to version 1: both read the same way. */
	if (in->version < 1 || in->version > FORMAT_VERSION)
		return corrupt(d, b, -ENOTSUP,
			       "format version %llu is not supported (this "
			       "reader reads versions 1 to %d)",
			       (unsigned long long)in->version, FORMAT_VERSION);
	if ((rc = get_u(c, "pointer_size", &in->pointer_size)) < 0 ||
	    (rc = get_u(c, "pid", &in->pid)) < 0 ||
	    (rc = get_s(d, c, "executable", &in->exe)) < 0 ||
	    (rc = get_s(d, c, "luajit_version", &in->luajit_version)) < 0 ||
	    (rc = get_s(d, c, "options", &in->options)) < 0 ||
	    (rc = get_u(c, "counter_kind", &in->counter_kind)) < 0 ||
	    (rc = get_u(c, "ts_shift", &in->ts_shift)) < 0 ||
	    (rc = get_u(c, "counter_hz", &in->counter_hz)) < 0 ||
	    (rc = get_clock(c, &in->clock)) < 0)
		return bad_field(d, b, c, rc);
	if ((rc = check_tail(d, b, c, "INTRO")) < 0)
		return rc;
	if (in->pointer_size == 0 || in->pointer_size > 8)
		return corrupt(d, b, -EBADMSG, "pointer_size %llu",
			       (unsigned long long)in->pointer_size);
	if (in->counter_kind != FORMAT_COUNTER_TSC &&
	    in->counter_kind != FORMAT_COUNTER_MONO_NS)
		return corrupt(d, b, -EBADMSG, "unknown counter_kind %llu",
			       (unsigned long long)in->counter_kind);
	if (in->ts_shift > 63)
		return corrupt(d, b, -EBADMSG, "ts_shift %llu over 63",
			       (unsigned long long)in->ts_shift);
	d->have_intro = 1;
	return d->sink.intro ? d->sink.intro(d->sink.ud, in) : 0;
}

/* Any thread. Decode an END payload and check its totals. */
static int do_end(struct decode *d, const struct reader_block *b, struct cur *c)
{
	struct decode_end *e = &d->end;
	int rc;
	if ((rc = get_u(c, "events", &e->events)) < 0 ||
	    (rc = get_u(c, "blocks", &e->blocks)) < 0 ||
	    (rc = get_u(c, "bytes", &e->bytes)) < 0 ||
	    (rc = get_u(c, "samples_dropped", &e->samples_dropped)) < 0 ||
	    (rc = get_u(c, "vms", &e->vms)) < 0 ||
	    (rc = get_clock(c, &e->clock)) < 0)
		return bad_field(d, b, c, rc);
	if ((rc = check_tail(d, b, c, "END")) < 0)
		return rc;
	if (e->events != d->events)
		return corrupt(d, b, -EBADMSG,
			       "END counts %llu events, the EVENTS blocks hold "
			       "%llu",
			       (unsigned long long)e->events,
			       (unsigned long long)d->events);
	if (e->blocks != b->index)
		return corrupt(d, b, -EBADMSG,
			       "END counts %llu blocks, %llu come before it",
			       (unsigned long long)e->blocks,
			       (unsigned long long)b->index);
	if (e->bytes != b->offset)
		return corrupt(d, b, -EBADMSG, "END says it is at offset %llu",
			       (unsigned long long)e->bytes);
	/* Samples dropped after the last SAMPLES block reach only END: more
	** is possible, fewer is not. */
	if (e->samples_dropped < d->dropped)
		return corrupt(d, b, -EBADMSG,
			       "END counts %llu samples dropped, the SAMPLES "
			       "blocks count %llu",
			       (unsigned long long)e->samples_dropped,
			       (unsigned long long)d->dropped);
	if (e->samples_dropped > d->dropped)
		warn(d,
		     "block %llu (END) at offset %llu: END counts %llu "
		     "samples dropped, the SAMPLES blocks %llu",
		     (unsigned long long)b->index,
		     (unsigned long long)b->offset,
		     (unsigned long long)e->samples_dropped,
		     (unsigned long long)d->dropped);
	if (e->vms != d->vms)
		warn(d,
		     "block %llu (END) at offset %llu: END counts %llu VMs, "
		     "the log defines %llu",
		     (unsigned long long)b->index,
		     (unsigned long long)b->offset, (unsigned long long)e->vms,
		     (unsigned long long)d->vms);
	d->have_end = 1;
	return d->sink.end ? d->sink.end(d->sink.ud, e) : 0;
}

/* -- MAPPING ----------------------------------------------------------------- */

/* Any thread. Decode a MAPPING payload: records up to the end. */
static int do_mapping(struct decode *d, const struct reader_block *b,
		      struct cur *c)
{
	uint64_t vm, id, kind;
	int rc;
	if ((rc = get_u(c, "vm", &vm)) < 0)
		return bad_field(d, b, c, rc);
	if (vm == 0 || vm >= DECODE_MAX_ID)
		return corrupt(d, b, -EBADMSG, "MAPPING for VM ID %llu",
			       (unsigned long long)vm);
	if (d->sink.mapping &&
	    (rc = d->sink.mapping(d->sink.ud, (uint32_t)vm, b)))
		return rc;
	while (c->p < c->end) {
		size_t at = (size_t)(c->p - c->start);
		kind = *c->p++;
		if (kind < FORMAT_REC_VM || kind > FORMAT_REC_HOSTSYM)
			return corrupt(d, b, -EBADMSG,
				       "unknown record kind %llu at payload "
				       "offset %zu",
				       (unsigned long long)kind, at);
		if ((rc = get_u(c, "record id", &id)) < 0)
			return bad_field(d, b, c, rc);
		if (id == 0 || id >= DECODE_MAX_ID)
			return corrupt(d, b, -EBADMSG,
				       "%s record at payload offset %zu: ID "
				       "%llu out of range (1 to %u)",
				       decode_rec_name((unsigned)kind), at,
				       (unsigned long long)id,
				       DECODE_MAX_ID - 1);
		struct decode_obj *old = lookup(d, id);
		if (old)
			return corrupt(d, b, -EBADMSG,
				       "%s record at payload offset %zu "
				       "redefines ID %llu (a %s defined in "
				       "block %llu)",
				       decode_rec_name((unsigned)kind), at,
				       (unsigned long long)id,
				       decode_rec_name(old->kind),
				       (unsigned long long)old->block);
		struct decode_obj *o = arena_alloc(d, sizeof *o);
		if (!o)
			return corrupt(d, b, -ENOMEM, "out of memory");
		o->id = (uint32_t)id;
		o->vm = (uint32_t)vm;
		o->kind = (unsigned)kind;
		o->block = b->index;
		switch (kind) {
		case FORMAT_REC_VM:
			if ((rc = get_u(c, "VM thread", &o->u.vm.thread)) < 0 ||
			    (rc = get_u(c, "VM heap", &o->u.vm.heap)) < 0 ||
			    (rc = get_u(c, "VM flags", &o->u.vm.flags)) < 0)
				return bad_field(d, b, c, rc);
			d->vms++;
			break;
		case FORMAT_REC_PROTO:
			if ((rc = get_s(d, c, "PROTO chunk",
					&o->u.proto.chunk)) < 0 ||
			    (rc = get_u(c, "PROTO firstline",
					&o->u.proto.firstline)) < 0 ||
			    (rc = get_u(c, "PROTO numline",
					&o->u.proto.numline)) < 0)
				return bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_CFUNC:
			if ((rc = get_u(c, "CFUNC address",
					&o->u.cfunc.address)) < 0 ||
			    (rc = get_s(d, c, "CFUNC name", &o->u.cfunc.name)) <
				0 ||
			    (rc = get_s(d, c, "CFUNC object",
					&o->u.cfunc.object)) < 0)
				return bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_FFUNC:
			if ((rc = get_u(c, "FFUNC ffid", &o->u.ffunc.ffid)) <
				0 ||
			    (rc = get_s(d, c, "FFUNC name", &o->u.ffunc.name)) <
				0 ||
			    (rc = get_u(c, "FFUNC flags", &o->u.ffunc.flags)) <
				0)
				return bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_COROUTINE:
			if ((rc = get_u(c, "COROUTINE flags", &o->u.co.flags)) <
			    0)
				return bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_TRACE: {
			uint64_t pid;
			if ((rc = get_u(c, "TRACE traceno",
					&o->u.trace.traceno)) < 0 ||
			    (rc = get_u(c, "TRACE proto", &pid)) < 0 ||
			    (rc = get_u(c, "TRACE line", &o->u.trace.line)) <
				0 ||
			    (rc = get_u(c, "TRACE root", &o->u.trace.root)) < 0)
				return bad_field(d, b, c, rc);
			struct decode_obj *po =
			    pid < DECODE_MAX_ID ? lookup(d, pid) : NULL;
			if (!po || po->kind != FORMAT_REC_PROTO)
				return corrupt(
				    d, b, -EBADMSG,
				    "TRACE record %llu at payload offset %zu: "
				    "proto ID %llu is %s",
				    (unsigned long long)id, at,
				    (unsigned long long)pid,
				    po ? "not a PROTO"
				       : "not defined before use");
			o->u.trace.proto = po;
			break;
		}
		case FORMAT_REC_HOSTSYM:
			if ((rc = get_u(c, "HOSTSYM address",
					&o->u.host.address)) < 0 ||
			    (rc = get_s(d, c, "HOSTSYM name",
					&o->u.host.name)) < 0 ||
			    (rc = get_s(d, c, "HOSTSYM object",
					&o->u.host.object)) < 0 ||
			    (rc = get_u(c, "HOSTSYM flags", &o->u.host.flags)) <
				0)
				return bad_field(d, b, c, rc);
			break;
		}
		if (insert(d, o) < 0)
			return corrupt(d, b, -ENOMEM, "out of memory");
		if (d->sink.record && (rc = d->sink.record(d->sink.ud, o)))
			return rc;
	}
	struct decode_obj *v = lookup(d, vm);
	if (!v || v->kind != FORMAT_REC_VM)
		return corrupt(
		    d, b, -EBADMSG, "MAPPING for VM ID %llu, which is %s",
		    (unsigned long long)vm, v ? "not a VM" : "not defined");
	return 0;
}

/* -- EVENTS (hot) ------------------------------------------------------------- */

/* Any thread. An event's name in messages: "ENTER", "VM TRACE_STOP". */
static const char *ev_label(unsigned op, unsigned lo)
{
	static const char *const vm[] = {
	    "VM ATTACH",     "VM DETACH",      "VM TRACE_START",
	    "VM TRACE_STOP", "VM TRACE_ABORT", "VM TRACE_FLUSH",
	};
	if (op == FORMAT_OP_VM && lo <= FORMAT_VM_TRACE_FLUSH)
		return vm[lo];
	return decode_op_name(op);
}

/* Any thread. Copy a TRACE_ABORT message into d->msg, NUL-terminated. */
static int msg_copy(struct decode *d, const uint8_t *s, size_t len)
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

/* Read a uleb into v: one-byte fast path, else the shared codec. */
#define ULEB(v, what)                                                          \
	do {                                                                   \
		if (LIKELY(p < end && *p < 0x80)) {                            \
			(v) = *p++;                                            \
		} else {                                                       \
			const uint8_t *q_ = p;                                 \
			if (blocks_uleb_get(&q_, end, &(v)) < 0) {             \
				field = (what);                                \
				goto bad_int;                                  \
			}                                                      \
			p = q_;                                                \
		}                                                              \
	} while (0)

#define SLEB(v, what)                                                          \
	do {                                                                   \
		uint64_t u_;                                                   \
		ULEB(u_, what);                                                \
		(v) = blocks_unzigzag(u_);                                     \
	} while (0)

/* Any thread. Decode an EVENTS payload, one sink call per event. */
static int do_events(struct decode *d, const struct reader_block *b,
		     struct cur *c)
{
	struct decode_events h;
	uint64_t vm;
	int rc;
	memset(&h, 0, sizeof h);
	h.block = b;
	if ((rc = get_u(c, "vm", &vm)) < 0 ||
	    (rc = get_u(c, "count", &h.count)) < 0 ||
	    (rc = get_u(c, "base_ts", &h.base_ts)) < 0 ||
	    (rc = get_clock(c, &h.clock)) < 0)
		return bad_field(d, b, c, rc);
	struct decode_obj *vo = vm < DECODE_MAX_ID ? lookup(d, vm) : NULL;
	if (!vo || vo->kind != FORMAT_REC_VM)
		return corrupt(d, b, -EBADMSG,
			       "events of VM ID %llu, which is %s",
			       (unsigned long long)vm,
			       vo ? "not a VM" : "not defined before use");
	if (h.count > (uint64_t)(c->end - c->p) / 2)
		return corrupt(d, b, -EBADMSG,
			       "count %llu events cannot fit in the %zu bytes "
			       "left (2 bytes at least each)",
			       (unsigned long long)h.count,
			       (size_t)(c->end - c->p));
	if (h.base_ts < vo->last_ts)
		return corrupt(
		    d, b, -EBADMSG,
		    "base_ts %llu is before the last event time %llu "
		    "of VM %llu",
		    (unsigned long long)h.base_ts,
		    (unsigned long long)vo->last_ts, (unsigned long long)vm);
	h.vm = (uint32_t)vm;
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
	struct decode_event ev;
	memset(&ev, 0, sizeof ev);
	ev.vm = h.vm;
	ev.vmobj = vo;
	ev.co = vo->co;

	for (i = 0; i < n; i++) {
		evp = p;
		if (UNLIKELY(p >= end)) {
			why = "the payload ends here";
			goto bad;
		}
		unsigned cb = *p++;
		unsigned op = cb >> FORMAT_OP_SHIFT, lo = cb & FORMAT_LO_MASK;
		struct decode_obj *o;
		ev.op = op;
		ev.lo = lo;
		ev.index = i;
		switch (op) {
		case FORMAT_OP_ENTER:
		case FORMAT_OP_EXIT:
			if (LIKELY(lo != FORMAT_SLOT_ESCAPE))
				delta = blocks_unzigzag(lo);
			else
				SLEB(delta, "slot delta");
			slot += delta;
			if (UNLIKELY(slot < 0)) {
				why = "slot below 0";
				goto bad;
			}
			ev.slot = slot;
			if (op == FORMAT_OP_ENTER) {
				ULEB(v, "func");
				o = v < DECODE_MAX_ID ? lookup(d, v) : NULL;
				if (UNLIKELY(!o ||
					     (o->kind != FORMAT_REC_PROTO &&
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
			ULEB(v, "site");
			o = v && v < DECODE_MAX_ID ? lookup(d, v) : NULL;
			ev.id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			if (UNLIKELY(v && !o)) {
				why = "site ID used before definition";
				goto bad_id;
			}
			switch (lo) {
			case FORMAT_SITE_LUA:
				if (UNLIKELY(!o ||
					     o->kind != FORMAT_REC_PROTO)) {
					why = "lua site is not a PROTO";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_C:
				if (UNLIKELY(!o ||
					     (o->kind != FORMAT_REC_CFUNC &&
					      o->kind != FORMAT_REC_FFUNC))) {
					why = "c site is not a CFUNC or FFUNC";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_TRACE:
				if (UNLIKELY(o &&
					     o->kind != FORMAT_REC_PROTO)) {
					why = "trace site is not a PROTO";
					goto bad_id;
				}
				break;
			case FORMAT_SITE_UNKNOWN:
			case FORMAT_SITE_GC:
				if (UNLIKELY(o)) {
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
			if (op == FORMAT_OP_ALLOC) {
				ULEB(ev.size, "size");
				SLEB(delta, "addr delta");
				addr += (uint64_t)delta;
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
			if (UNLIKELY(lo)) {
				why = "FREE with lo not 0";
				goto bad;
			}
			SLEB(delta, "addr delta");
			addr += (uint64_t)delta;
			ev.addr = addr;
			ULEB(ev.size, "size");
			break;
		case FORMAT_OP_GC:
			if (UNLIKELY(lo >= FORMAT_GC__MAX)) {
				why = "unknown GC phase";
				goto bad;
			}
			ULEB(ev.heap, "heap");
			break;
		case FORMAT_OP_SWITCH:
			if (UNLIKELY(lo)) {
				why = "SWITCH with lo not 0";
				goto bad;
			}
			ULEB(v, "coroutine");
			o = v < DECODE_MAX_ID ? lookup(d, v) : NULL;
			if (UNLIKELY(!o || o->kind != FORMAT_REC_COROUTINE)) {
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
				o = v < DECODE_MAX_ID ? lookup(d, v) : NULL;
				ev.id =
				    v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
				if (UNLIKELY(!o ||
					     o->kind != FORMAT_REC_PROTO)) {
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
					if (UNLIKELY(v > (uint64_t)(end - p))) {
						field = "message";
						goto bad_int;
					}
					if (msg_copy(d, p, (size_t)v) < 0)
						return corrupt(d, b, -ENOMEM,
							       "out of memory");
					ev.msg.s = d->msg;
					ev.msg.len = (size_t)v;
					p += v;
				}
				break;
			case FORMAT_VM_TRACE_STOP:
				ULEB(v, "trace");
				o = v < DECODE_MAX_ID ? lookup(d, v) : NULL;
				ev.id =
				    v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
				if (UNLIKELY(!o ||
					     o->kind != FORMAT_REC_TRACE)) {
					why = o ? "trace is not a TRACE"
						: "trace ID used before "
						  "definition";
					goto bad_id;
				}
				ev.obj = o;
				break;
			case FORMAT_VM_TRACE_FLUSH: break;
			default: why = "unknown VM event"; goto bad;
			}
			break;
		}
		ULEB(dt, "dt");
		if (UNLIKELY(t + dt < t)) {
			why = "time overflows 64 bits";
			goto bad;
		}
		t += dt;
		ev.ts = t;
		if (fn && (rc = fn(ud, &ev)) != 0)
			return rc;
	}
	if (p != end)
		return corrupt(d, b, -EBADMSG,
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
	return corrupt(
	    d, b, -EBADMSG,
	    "event %llu of %llu (%s) at payload offset %zu: field "
	    "'%s' runs past the payload end or is not a valid integer",
	    (unsigned long long)i, (unsigned long long)n,
	    ev_label(ev.op, ev.lo), (size_t)(evp - c->start), field);
bad_id:
	return corrupt(d, b, -EBADMSG,
		       "event %llu of %llu (%s) at payload offset %zu: %s "
		       "(ID %llu)",
		       (unsigned long long)i, (unsigned long long)n,
		       ev_label(ev.op, ev.lo), (size_t)(evp - c->start), why,
		       (unsigned long long)ev.id);
bad:
	if (p > end || evp >= end)
		return corrupt(d, b, -EBADMSG,
			       "payload ends after %llu of %llu events",
			       (unsigned long long)i, (unsigned long long)n);
	return corrupt(
	    d, b, -EBADMSG,
	    "event %llu of %llu (%s, lo %u) at payload offset %zu: %s",
	    (unsigned long long)i, (unsigned long long)n,
	    ev_label(ev.op, ev.lo), ev.lo, (size_t)(evp - c->start), why);
}

/* -- SAMPLES (hot) -------------------------------------------------------------- */

/* Any thread. Decode a SAMPLES payload, one sink call per sample. */
static int do_samples(struct decode *d, const struct reader_block *b,
		      struct cur *c)
{
	struct decode_samples h;
	uint64_t vm;
	int rc;
	memset(&h, 0, sizeof h);
	h.block = b;
	if ((rc = get_u(c, "vm", &vm)) < 0 ||
	    (rc = get_u(c, "count", &h.count)) < 0 ||
	    (rc = get_u(c, "base_ts", &h.base_ts)) < 0 ||
	    (rc = get_clock(c, &h.clock)) < 0 ||
	    (rc = get_u(c, "thread", &h.thread)) < 0 ||
	    (rc = get_u(c, "signals", &h.signals)) < 0 ||
	    (rc = get_u(c, "dropped", &h.dropped)) < 0)
		return bad_field(d, b, c, rc);
	struct decode_obj *vo = vm < DECODE_MAX_ID ? lookup(d, vm) : NULL;
	if (!vo || vo->kind != FORMAT_REC_VM)
		return corrupt(d, b, -EBADMSG,
			       "samples of VM ID %llu, which is %s",
			       (unsigned long long)vm,
			       vo ? "not a VM" : "not defined before use");
	if (h.count + h.dropped < h.count || h.signals != h.count + h.dropped)
		return corrupt(d, b, -EBADMSG,
			       "signals %llu is not count %llu + dropped %llu",
			       (unsigned long long)h.signals,
			       (unsigned long long)h.count,
			       (unsigned long long)h.dropped);
	if (h.count > (uint64_t)(c->end - c->p) / 5)
		return corrupt(d, b, -EBADMSG,
			       "count %llu samples cannot fit in the %zu bytes "
			       "left (5 bytes at least each)",
			       (unsigned long long)h.count,
			       (size_t)(c->end - c->p));
	if (h.base_ts < vo->last_sample_ts)
		warn(d,
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
			return corrupt(d, b, -ENOMEM, "out of memory");
		}
	}
	h.vm = (uint32_t)vm;
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
		if (UNLIKELY(t + dt < t)) {
			why = "time overflows 64 bits";
			goto bad;
		}
		t += dt;
		sm.ts = t;
		if (UNLIKELY(p >= end)) {
			field = "state";
			goto bad_int;
		}
		sm.state = *p++;
		if (UNLIKELY(sm.state >= FORMAT_STATE__MAX)) {
			why = "unknown state";
			goto bad;
		}
		ULEB(v, "trace");
		sm.trace = NULL;
		if (v) {
			struct decode_obj *o =
			    v < DECODE_MAX_ID ? lookup(d, v) : NULL;
			bad_v = v;
			if (UNLIKELY(!o || o->kind != FORMAT_REC_TRACE)) {
				why = o ? "trace is not a TRACE"
					: "trace ID used before definition";
				goto bad_id;
			}
			if (UNLIKELY(sm.state != FORMAT_STATE_TRACE)) {
				why = "a trace ID outside state 7 (trace)";
				goto bad_id;
			}
			sm.trace = o;
		}
		ULEB(v, "nlua");
		if (UNLIKELY(v > DECODE_MAX_FRAMES)) {
			bad_v = v;
			why = "more Lua frames than the reader accepts";
			goto bad_count;
		}
		sm.nlua = (uint32_t)v;
		for (j = 0; j < sm.nlua; j++) {
			ULEB(v, "Lua frame func");
			struct decode_obj *o =
			    v < DECODE_MAX_ID ? lookup(d, v) : NULL;
			if (UNLIKELY(!o || (o->kind != FORMAT_REC_PROTO &&
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
		if (UNLIKELY(v > DECODE_MAX_FRAMES)) {
			bad_v = v;
			why = "more host frames than the reader accepts";
			goto bad_count;
		}
		sm.nhost = (uint32_t)v;
		for (j = 0; j < sm.nhost; j++) {
			ULEB(v, "host frame sym");
			struct decode_obj *o =
			    v < DECODE_MAX_ID ? lookup(d, v) : NULL;
			if (UNLIKELY(!o || o->kind != FORMAT_REC_HOSTSYM)) {
				bad_v = v;
				why = o ? "host frame sym is not a HOSTSYM"
					: "host frame sym ID used before "
					  "definition";
				goto bad_id;
			}
			host[j] = o;
		}
		if (fn && (rc = fn(ud, &sm)) != 0)
			return rc;
	}
	if (p != end)
		return corrupt(
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
	return corrupt(d, b, -EBADMSG,
		       "sample %llu of %llu at payload offset %zu: field '%s' "
		       "runs past the payload end or is not a valid integer",
		       (unsigned long long)i, (unsigned long long)n,
		       (size_t)(sp - c->start), field);
bad_id:
	return corrupt(d, b, -EBADMSG,
		       "sample %llu of %llu at payload offset %zu: %s (ID "
		       "%llu)",
		       (unsigned long long)i, (unsigned long long)n,
		       (size_t)(sp - c->start), why, (unsigned long long)bad_v);
bad_count:
	return corrupt(d, b, -EBADMSG,
		       "sample %llu of %llu at payload offset %zu: %s (%llu, "
		       "at most %u)",
		       (unsigned long long)i, (unsigned long long)n,
		       (size_t)(sp - c->start), why, (unsigned long long)bad_v,
		       DECODE_MAX_FRAMES);
bad:
	return corrupt(d, b, -EBADMSG,
		       "sample %llu of %llu (state %u) at payload offset %zu: "
		       "%s",
		       (unsigned long long)i, (unsigned long long)n, sm.state,
		       (size_t)(sp - c->start), why);
}

/* -- Public ------------------------------------------------------------------ */

/* Any thread. New decoder feeding sink (copied); 0 or -ENOMEM. */
int decode_new(struct decode **out, const struct decode_sink *sink)
{
	struct decode *d = calloc(1, sizeof *d);
	*out = d;
	if (!d)
		return -ENOMEM;
	if (sink)
		d->sink = *sink;
	return 0;
}

/* Any thread. Free the decoder and every object. */
void decode_free(struct decode *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->npages; i++)
		free(d->pages[i]);
	free(d->pages);
	free(d->lua);
	free(d->host);
	free(d->msg);
	while (d->arena) {
		struct chunk *n = d->arena->next;
		free(d->arena);
		d->arena = n;
	}
	free(d);
}

/* Any thread. 1 when decode_block needs this kind's payload. */
int decode_wants_payload(unsigned kind)
{
	return kind >= FORMAT_KIND_INTRO && kind <= FORMAT_KIND_SAMPLES;
}

/* Any thread. Decode one block. */
int decode_block(struct decode *d, const struct reader_block *b)
{
	struct cur c;
	d->err[0] = '\0';
	if (!decode_wants_payload(b->h.kind)) {
		warn(d,
		     "block %llu at offset %llu: unknown kind %u (%u bytes) "
		     "skipped",
		     (unsigned long long)b->index,
		     (unsigned long long)b->offset, b->h.kind, b->h.length);
		return d->sink.unknown ? d->sink.unknown(d->sink.ud, b) : 0;
	}
	if (!b->payload)
		return -EINVAL;
	c.p = c.start = b->payload;
	c.end = b->payload + b->h.length;
	c.field = NULL;
	if (b->h.kind != FORMAT_KIND_INTRO && !d->have_intro)
		return corrupt(d, b, -EBADMSG, "no INTRO block before it");
	switch (b->h.kind) {
	case FORMAT_KIND_INTRO:
		if (d->have_intro)
			return corrupt(d, b, -EBADMSG, "a second INTRO block");
		return do_intro(d, b, &c);
	case FORMAT_KIND_END:
		if (d->have_end)
			return corrupt(d, b, -EBADMSG, "a second END block");
		return do_end(d, b, &c);
	case FORMAT_KIND_MAPPING: return do_mapping(d, b, &c);
	case FORMAT_KIND_SAMPLES: return do_samples(d, b, &c);
	default: return do_events(d, b, &c);
	}
}

/* Any thread. Message of the last error. */
const char *decode_error(const struct decode *d)
{
	return d->err;
}

/* Any thread. The INTRO block, NULL before it. */
const struct decode_intro *decode_intro(const struct decode *d)
{
	return d->have_intro ? &d->intro : NULL;
}

/* Any thread. The END block, NULL before it. */
const struct decode_end *decode_end(const struct decode *d)
{
	return d->have_end ? &d->end : NULL;
}

/* Any thread. Events decoded so far. */
uint64_t decode_events_total(const struct decode *d)
{
	return d->events;
}

/* Any thread. VM records so far. */
uint64_t decode_vms_total(const struct decode *d)
{
	return d->vms;
}

/* Any thread. Samples decoded so far. */
uint64_t decode_samples_total(const struct decode *d)
{
	return d->samples;
}

/* Any thread. Samples dropped, from the SAMPLES blocks so far. */
uint64_t decode_dropped_total(const struct decode *d)
{
	return d->dropped;
}

/* Any thread. SAMPLES blocks decoded so far. */
uint64_t decode_samples_blocks(const struct decode *d)
{
	return d->sblocks;
}

/* -- Driver ------------------------------------------------------------------ */

/* Any thread. Read every block of r into d (see decode.h). */
int decode_run(struct reader *r, struct decode *d, char *err, size_t errlen)
{
	struct reader_block b;
	int rc;
	for (;;) {
		rc = reader_next(r, &b);
		if (rc == 0)
			return 0;
		if (rc < 0) {
			snprintf(err, errlen, "%s", reader_error(r));
			return rc;
		}
		if (decode_wants_payload(b.h.kind) &&
		    (rc = reader_payload(r, &b)) < 0) {
			snprintf(err, errlen, "%s", reader_error(r));
			return rc;
		}
		if ((rc = decode_block(d, &b)) != 0) {
			snprintf(err, errlen, "%s",
				 d->err[0] ? d->err : "stopped by the sink");
			return rc;
		}
	}
}
