/*
** ljlog reader processors: timer samples and traces.
** One pass; no allocation per sample except when a table grows.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#define _GNU_SOURCE
#include "proc/samples.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/sort.h"
#include "util/hmap.h"
#include "util/util.h"

/* Frame of the sample tree. */
#define SF(tag, v) ((tag) << SAMPLES_SF_SHIFT | (uint64_t)(v))

/* The function index of a SAMPLES_SF_LUA frame value. */
#define SF_FN(v) ((uint32_t)((v) >> 32) & ((1u << (SAMPLES_SF_SHIFT - 32)) - 1))

/* Pass a warning on. */
static void warn(struct samples *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (!s->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	s->warn(s->warn_ud, buf);
}

/* Make room for need elements of size elem in *arr (capacity
** *cap, doubled); 0 or -ENOMEM. */
static int grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **a = arr;
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*a, n * elem);
	if (!q)
		return -ENOMEM;
	*a = q;
	*cap = n;
	return 0;
}

/* Start s. */
void samples_init(struct samples *s, struct fnid *fnid,
		  void (*warnf)(void *ud, const char *msg), void *ud)
{
	memset(s, 0, sizeof *s);
	s->fnid = fnid;
	s->warn = warnf;
	s->warn_ud = ud;
}

/* Free everything. */
void samples_free(struct samples *s)
{
	for (size_t i = 0; i < s->nhost; i++) {
		free(s->hosts[i].name);
		free(s->hosts[i].object);
	}
	for (size_t i = 0; i < s->nabort; i++)
		free(s->aborts[i].message);
	free(s->hosts);
	free(s->aborts);
	free(s->traces);
	free(s->nodes);
	free(s->lines);
	free(s->fns);
	free(s->rawf);
	free(s->lastf);
	free(s->lastn);
	intern_free(&s->nodekeys);
	intern_free(&s->linekeys);
	intern_free(&s->abortkeys);
	hmap_free(&s->objs);
	hmap_free(&s->vmsamples);
	hmap_free(&s->vmintervals);
	hmap_free(&s->leafvm);
	memset(s, 0, sizeof *s);
}

/* Samples of function fn. */
const struct samples_fn *samples_fn_get(const struct samples *s, uint32_t fn)
{
	static const struct samples_fn zero;
	return fn < s->nfn ? &s->fns[fn] : &zero;
}

/* Samples of VM id. */
uint64_t samples_vm_count(const struct samples *s, uint32_t id)
{
	const uint64_t *v = hmap_get(&s->vmsamples, (uint64_t)id + 1);
	return v ? *v : 0;
}

/* Timer intervals the samples of VM id stand for. */
uint64_t samples_vm_intervals(const struct samples *s, uint32_t id)
{
	const uint64_t *v = hmap_get(&s->vmintervals, (uint64_t)id + 1);
	return v ? *v : 0;
}

/* Samples of each leaf node by VM. */
int samples_each_leaf_vm(const struct samples *s,
			 int (*fn)(void *ud, uint32_t node, uint32_t vm,
				   uint64_t samples),
			 void *ud)
{
	for (size_t i = 0; i < hmap_capacity(&s->leafvm); i++) {
		uint64_t k = s->leafvm.keys[i];
		int rc;
		if (k && (rc = fn(ud, (uint32_t)(k >> 32), (uint32_t)k,
				  s->leafvm.vals[i])))
			return rc;
	}
	return 0;
}

/* Index of the TRACE or HOSTSYM object o in traces or hosts. */
static inline uint32_t obj_idx(const struct samples *s,
			       const struct decode_obj *o)
{
	return (uint32_t)*hmap_get(&s->objs, o->id) - 1;
}

/* -- Records and events ------------------------------------------------------- */

/* A TRACE record: a new entry in traces. */
static int trace_add(struct samples *s, const struct decode_obj *o)
{
	if (grow(&s->traces, &s->tracecap, s->ntrace + 1, sizeof *s->traces) ||
	    hmap_put(&s->objs, o->id, s->ntrace + 1) < 0)
		return -ENOMEM;
	struct samples_trace *t = &s->traces[s->ntrace++];
	memset(t, 0, sizeof *t);
	t->id = o->id;
	t->vm = o->vm;
	t->traceno = o->u.trace.traceno;
	t->fn = fnid_of(o->u.trace.proto);
	t->line = o->u.trace.line;
	t->root = o->u.trace.root;
	return 0;
}

/* A HOSTSYM record: a new entry in hosts (its function is
** chosen by samples_finish, once every CFUNC is known). */
static int host_add(struct samples *s, const struct decode_obj *o)
{
	if (grow(&s->hosts, &s->hostcap, s->nhost + 1, sizeof *s->hosts))
		return -ENOMEM;
	struct samples_host *h = &s->hosts[s->nhost];
	h->address = o->u.host.address;
	h->flags = o->u.host.flags;
	h->fn = UINT32_MAX;
	h->name = strdup(o->u.host.name.s);
	h->object = strdup(o->u.host.object.s);
	if (!h->name || !h->object ||
	    hmap_put(&s->objs, o->id, s->nhost + 1) < 0) {
		free(h->name);
		free(h->object);
		return -ENOMEM;
	}
	s->nhost++;
	return 0;
}

/* A MAPPING record: traces and host symbols. */
static int on_record(void *ud, struct decode_obj *o)
{
	switch (o->kind) {
	case FORMAT_REC_TRACE: return trace_add(ud, o);
	case FORMAT_REC_HOSTSYM: return host_add(ud, o);
	}
	return 0;
}

/* Count one TRACE_ABORT with this reason and message. */
static int abort_count(struct samples *s, uint64_t reason,
		       const struct decode_str *msg)
{
	size_t len = 8 + msg->len;
	uint8_t buf[256], *key = len <= sizeof buf ? buf : malloc(len);
	int rc = -ENOMEM;
	if (!key)
		return -ENOMEM;
	memcpy(key, &reason, 8);
	memcpy(key + 8, msg->s, msg->len);
	int64_t i = intern_find(&s->abortkeys, key, len);
	if (i >= 0) {
		s->aborts[i].count++;
		rc = 0;
	} else if (!grow(&s->aborts, &s->abortcap, s->nabort + 1,
			 sizeof *s->aborts)) {
		struct samples_abort *a = &s->aborts[s->nabort];
		/* A message with a NUL in it is shown up to the NUL. */
		if ((a->message = strndup(msg->s, msg->len)) &&
		    intern_put(&s->abortkeys, key, len) == (int64_t)s->nabort) {
			a->reason = reason;
			a->count = 1;
			s->nabort++;
			rc = 0;
		} else {
			free(a->message);
		}
	}
	if (key != buf)
		free(key);
	return rc;
}

/* A VM event: trace events. */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct samples *s = ud;
	if (UTIL_LIKELY(ev->op != FORMAT_OP_VM))
		return 0;
	switch (ev->lo) {
	case FORMAT_VM_ATTACH:
	case FORMAT_VM_DETACH: break;
	case FORMAT_VM_TRACE_START: s->trace_starts++; break;
	case FORMAT_VM_TRACE_STOP:
		s->trace_stops++;
		s->traces[obj_idx(s, ev->obj)].stopped = 1;
		break;
	case FORMAT_VM_TRACE_ABORT:
		s->trace_aborts++;
		return abort_count(s, ev->reason, &ev->msg);
	default: s->trace_flushes++; break;
	}
	return 0;
}

/* -- Samples ------------------------------------------------------------------ */

/* The child of parent for frame, created when new; -1 when out
** of memory. */
static int64_t node_get(struct samples *s, uint32_t parent, uint64_t frame)
{
	uint8_t key[12];
	memcpy(key, &parent, 4);
	memcpy(key + 4, &frame, 8);
	int64_t i = intern_find(&s->nodekeys, key, sizeof key);
	if (i >= 0)
		return i + 1;
	if (s->nnode >= SAMPLES_MAX_NODES) {
		if (!s->nodes_capped++)
			warn(s,
			     "sample tree cut at %u nodes: deeper frames "
			     "are charged to their caller's stack",
			     SAMPLES_MAX_NODES);
		return parent;
	}
	if (grow(&s->nodes, &s->nodecap, s->nnode + 1, sizeof *s->nodes) ||
	    intern_put(&s->nodekeys, key, sizeof key) != (int64_t)s->nnode - 1)
		return -1;
	uint32_t n = (uint32_t)s->nnode++;
	s->nodes[n].parent = parent;
	s->nodes[n].frame = frame;
	s->nodes[n].samples = 0;
	return n;
}

static int state_in_vm(unsigned state);

/* The pseudo-function of what LuaJIT was doing in state, as
** samples_vm_label names it. */
static enum fnid_pseudo vm_pseudo(unsigned state)
{
	switch (state) {
	case FORMAT_STATE_GC: return FNID_PS_GC;
	case FORMAT_STATE_RECORD:
	case FORMAT_STATE_OPT:
	case FORMAT_STATE_ASM: return FNID_PS_COMPILER;
	case FORMAT_STATE_INTERP: return FNID_PS_INTERP;
	default: return FNID_PS_LUAJIT;
	}
}

/* One sample: counts, and its stack into the sample tree. */
static int on_sample(void *ud, const struct decode_sample *sm)
{
	struct samples *s = ud;
	uint64_t *f = s->rawf;
	uint32_t n = 0, k = 0, i;
	int added;
	uint64_t *vmc = hmap_ref(&s->vmsamples, (uint64_t)sm->vm + 1, &added);
	if (!vmc)
		return -ENOMEM;
	(*vmc)++;
	uint64_t *vmi = hmap_ref(&s->vmintervals, (uint64_t)sm->vm + 1, &added);
	if (!vmi)
		return -ENOMEM;
	*vmi += 1 + sm->missed;
	s->intervals += 1 + sm->missed;
	s->samples++;
	s->state[sm->state]++;
	s->state_intervals[sm->state] += 1 + sm->missed;
	/* The outermost interpreter frame (host frames are innermost first):
	** the host frames outside it go before the Lua frames, the rest after,
	** so that samples share their outer frames whatever runs inside. */
	uint32_t vm = sm->nhost;
	for (i = sm->nhost; i-- > 0;)
		if (sm->host[i]->u.host.flags & FORMAT_HOST_VM) {
			vm = i + 1;
			break;
		}
	for (i = sm->nhost; i-- > vm;)
		f[n++] = SF(SAMPLES_SF_HOST, obj_idx(s, sm->host[i]));
	for (i = sm->nlua; i-- > 0;) {
		uint64_t line = sm->lua[i].line;
		f[n++] = SF(SAMPLES_SF_LUA,
			    (uint64_t)fnid_of(sm->lua[i].func) << 32 |
				(line > UINT32_MAX ? UINT32_MAX : line));
	}
	for (i = vm; i-- > 0;)
		f[n++] = SF(SAMPLES_SF_HOST, obj_idx(s, sm->host[i]));
	/* Without a Lua frame, in LuaJIT's own code (not the host's: an
	** interpreter frame, or the collector or compiler), the sample is
	** charged to what LuaJIT was doing (count): its pseudo-function is
	** made now, while the functions may still grow. */
	if (!sm->nlua && (vm < sm->nhost || state_in_vm(sm->state)) &&
	    sm->state != FORMAT_STATE_IDLE && sm->state != FORMAT_STATE_LJLOG &&
	    fnid_pseudo(s->fnid, vm_pseudo(sm->state)) < 0)
		return -ENOMEM;
	if (sm->trace) {
		uint32_t t = obj_idx(s, sm->trace);
		s->traces[t].samples++;
		f[n++] = SF(SAMPLES_SF_TRACE, t);
	}
	f[n++] = SF(SAMPLES_SF_STATE, sm->state);
	/* Samples in a loop share most of their stack with the one before:
	** start below the common part. */
	while (k < n && k < s->nlast && s->lastf[k] == f[k])
		k++;
	int64_t node = k ? s->lastn[k - 1] : 0;
	for (i = k; i < n; i++) {
		if ((node = node_get(s, (uint32_t)node, f[i])) < 0) {
			s->nlast = 0;
			return -ENOMEM;
		}
		s->lastf[i] = f[i];
		s->lastn[i] = (uint32_t)node;
	}
	s->nlast = n;
	s->nodes[node].samples++;
	uint64_t key = (uint64_t)node << 32 | sm->vm;
	uint64_t *lv = key ? hmap_ref(&s->leafvm, key, NULL) : NULL;
	if (key && !lv)
		return -ENOMEM;
	if (lv)
		(*lv)++;
	return 0;
}

/* A SAMPLES block begins. */
static int on_samples(void *ud, const struct decode_samples *h)
{
	struct samples *s = ud;
	if (!s->rawf) {
		s->rawf = malloc(SAMPLES_STACK_MAX * sizeof *s->rawf);
		s->lastf = malloc(SAMPLES_STACK_MAX * sizeof *s->lastf);
		s->lastn = malloc(SAMPLES_STACK_MAX * sizeof *s->lastn);
		if (!s->rawf || !s->lastf || !s->lastn)
			return -ENOMEM;
	}
	if (!s->nnode) {
		/* Node 0, the root. */
		if (grow(&s->nodes, &s->nodecap, 1, sizeof *s->nodes))
			return -ENOMEM;
		memset(&s->nodes[0], 0, sizeof s->nodes[0]);
		s->nnode = 1;
	}
	return 0;
}

/* A SAMPLES block ends. */
static int on_samples_done(void *ud, const struct decode_samples *h)
{
	struct samples *s = ud;
	s->samples_dropped += h->dropped;
	s->signals += h->signals;
	return 0;
}

/* END block: its drop total. */
static int on_end(void *ud, const struct decode_end *e)
{
	struct samples *s = ud;
	s->end_dropped += e->samples_dropped; /* several logs: summed */
	return 0;
}

/* Fill sink: records, VM events, samples, END. */
void samples_sink(struct samples *s, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = s;
	sink->end = on_end;
	sink->record = on_record;
	sink->event = on_event;
	sink->samples = on_samples;
	sink->sample = on_sample;
	sink->samples_done = on_samples_done;
}

/* -- Finish ------------------------------------------------------------------- */

/* Give each HOSTSYM its function: the C function at its
** address, else a host function named after it. */
static int hosts_resolve(struct samples *s)
{
	for (size_t i = 0; i < s->nhost; i++) {
		struct samples_host *h = &s->hosts[i];
		int64_t fn = fnid_at(s->fnid, h->address);
		if (fn < 0 && (fn = fnid_host(s->fnid, h->name, h->object)) < 0)
			return -ENOMEM;
		h->fn = (uint32_t)fn;
		const char *b = strrchr(h->object, '/');
		b = b ? b + 1 : h->object;
		h->vm_object = (h->flags & FORMAT_HOST_VM) ||
			       !strncmp(b, "luajit", 6) ||
			       !strncmp(b, "libluajit", 9);
		h->vm_inner =
		    h->vm_object && !h->name[0] && !(h->flags & FORMAT_HOST_VM);
	}
	return 0;
}

/* Samples at (fn, line): one more line when new; NULL when out
** of memory. */
static struct samples_line *line_get(struct samples *s, uint32_t fn,
				     uint64_t line)
{
	uint8_t key[12];
	memcpy(key, &fn, 4);
	memcpy(key + 4, &line, 8);
	int64_t i = intern_find(&s->linekeys, key, sizeof key);
	if (i >= 0)
		return &s->lines[i];
	if (grow(&s->lines, &s->linecap, s->nline + 1, sizeof *s->lines) ||
	    intern_put(&s->linekeys, key, sizeof key) != (int64_t)s->nline)
		return NULL;
	struct samples_line *l = &s->lines[s->nline++];
	l->fn = fn;
	l->line = line;
	l->samples = 0;
	return l;
}

/* c samples of builtin b under Lua function lfn, in v: (lfn << 32 | b)
** -> samples (not 0: b is not lfn); -ENOMEM. */
static int via_add(struct hmap *v, uint32_t lfn, uint32_t b, uint64_t c)
{
	uint64_t *n = hmap_ref(v, (uint64_t)lfn << 32 | b, NULL);
	if (!n)
		return -ENOMEM;
	*n += c;
	return 0;
}

/* Each Lua function's builtin with the most samples into s->fns. */
static void via_pick(struct samples *s, const struct hmap *v)
{
	for (size_t i = 0; i < hmap_capacity(v); i++) {
		struct samples_fn *f = &s->fns[v->keys[i] >> 32];
		if (v->keys[i] && v->vals[i] > f->via_samples) {
			f->via = (uint32_t)v->keys[i];
			f->via_samples = v->vals[i];
		}
	}
}

/* Count the sample tree per function and line (see samples.h). */
static int count(struct samples *s)
{
	const struct fnid_fn *fns = s->fnid->fns;
	size_t nfn = s->fnid->n;
	struct samples_frame *fr = malloc(SAMPLES_STACK_MAX * sizeof *fr);
	uint32_t *stamp = calloc(nfn ? nfn : 1, sizeof *stamp);
	struct samples_fn *sf = calloc(nfn ? nfn : 1, sizeof *sf);
	struct hmap vias = HMAP_INIT;
	int rc = -ENOMEM;
	if (!fr || !stamp || !sf)
		goto out;
	free(s->fns);
	s->fns = sf;
	s->nfn = nfn;
	sf = NULL;
	for (uint32_t n = 1; n < s->nnode; n++) {
		uint64_t c = s->nodes[n].samples;
		if (!c)
			continue;
		/* Total: anywhere in the stack a profile of Lua code shows
		** (the Lua-first view: not the host's way into the VM). */
		size_t nf = samples_stack(s, n, SAMPLES_VIEW_LUA_FIRST,
					  SAMPLES_ST_NOTRACE, fr);
		for (size_t i = 0; i < nf; i++)
			if (fr[i].kind == SAMPLES_FR_FN &&
			    stamp[fr[i].fn] != n) {
				stamp[fr[i].fn] = n;
				s->fns[fr[i].fn].samples_total += c;
			}
		/* Self: the innermost Lua frame, else the view's leaf: a host
		** function, or what LuaJIT was doing (its pseudo-function,
		** made by on_sample). Line: the innermost PROTO frame. */
		int64_t self = -1, lfn = -1;
		uint64_t line = 0;
		for (uint32_t m = n; m; m = s->nodes[m].parent) {
			uint64_t f = s->nodes[m].frame;
			if (f >> SAMPLES_SF_SHIFT != SAMPLES_SF_LUA)
				continue;
			uint32_t fn = SF_FN(f);
			if (self < 0)
				self = fn;
			if (fns[fn].kind == FNID_LUA) {
				lfn = fn;
				line = (uint32_t)f;
				break;
			}
		}
		if (self < 0 && nf && fr[nf - 1].kind == SAMPLES_FR_FN)
			self = fr[nf - 1].fn;
		else if (self < 0 && nf && fr[nf - 1].kind == SAMPLES_FR_VM)
			self = s->fnid->pseudo[vm_pseudo(fr[nf - 1].idx)];
		if (self >= 0) {
			s->fns[self].samples += c;
			if (stamp[self] != n) { /* a leaf the view folds */
				stamp[self] = n;
				s->fns[self].samples_total += c;
			}
			s->fns[lfn >= 0 ? lfn : self].samples_lua += c;
			if (lfn >= 0 && self != lfn &&
			    via_add(&vias, (uint32_t)lfn, (uint32_t)self, c))
				goto out;
		}
		if (lfn >= 0) {
			struct samples_line *l =
			    line_get(s, (uint32_t)lfn, line);
			if (!l)
				goto out;
			l->samples += c;
		}
	}
	via_pick(s, &vias);
	rc = 0;
out:
	hmap_free(&vias);
	free(fr);
	free(stamp);
	free(sf);
	return rc;
}

/* End of input. */
int samples_finish(struct samples *s)
{
	/* Samples dropped after the last SAMPLES block reach only END. */
	if (s->end_dropped > s->samples_dropped) {
		s->signals += s->end_dropped - s->samples_dropped;
		s->samples_dropped = s->end_dropped;
	}
	return hosts_resolve(s) < 0 || count(s) < 0 ? -ENOMEM : 0;
}

/* -- Sorting ------------------------------------------------------------------ */

/* Sort order of lines: samples desc, function name, line. */
static int cmp_line(uint32_t a, uint32_t b, const void *ctx)
{
	const struct samples *s = ctx;
	const struct samples_line *x = &s->lines[a], *y = &s->lines[b];
	int c;
	if ((c = sort_desc_u64(x->samples, y->samples)))
		return c;
	c = strcmp(s->fnid->fns[x->fn].name, s->fnid->fns[y->fn].name);
	return c ? c : sort_asc_u64(x->line, y->line);
}

/* Line indices sorted by samples; caller frees. */
uint32_t *samples_sorted_lines(const struct samples *s)
{
	return sort_index(s->nline, cmp_line, s);
}

/* Sort order of traces: samples desc (then definition). */
static int cmp_trace(uint32_t a, uint32_t b, const void *ctx)
{
	const struct samples *s = ctx;
	return sort_desc_u64(s->traces[a].samples, s->traces[b].samples);
}

/* Trace indices sorted by samples; caller frees. */
uint32_t *samples_sorted_traces(const struct samples *s)
{
	return sort_index(s->ntrace, cmp_trace, s);
}

/* Sort order of aborts: count desc, reason, message. */
static int cmp_abort(uint32_t a, uint32_t b, const void *ctx)
{
	const struct samples *s = ctx;
	const struct samples_abort *x = &s->aborts[a], *y = &s->aborts[b];
	int c;
	if ((c = sort_desc_u64(x->count, y->count)) ||
	    (c = sort_asc_u64(x->reason, y->reason)))
		return c;
	return strcmp(x->message, y->message);
}

/* Abort indices sorted by count; caller frees. */
uint32_t *samples_sorted_aborts(const struct samples *s)
{
	return sort_index(s->nabort, cmp_abort, s);
}

/* -- Stack views -------------------------------------------------------------- */

/* A view under construction. */
struct view {
	const struct samples *s;
	struct samples_frame *out;
	size_t n;
	unsigned flags;
	int last_host; /* the last frame came from a host frame */
};

/* Append host frame h. A C function seen as a Lua frame and,
** next to it, as a host frame is one frame. */
static void view_host(struct view *w, uint32_t h, int dedup)
{
	uint32_t fn = w->s->hosts[h].fn;
	if (dedup && w->n && !w->last_host &&
	    w->out[w->n - 1].kind == SAMPLES_FR_FN && w->out[w->n - 1].fn == fn)
		return;
	struct samples_frame *f = &w->out[w->n++];
	f->kind = SAMPLES_FR_FN;
	f->fn = fn;
	f->line = 0;
	f->idx = 0;
	w->last_host = 1;
}

/* Append Lua frame f (fn << 32 | line). */
static void view_lua(struct view *w, uint64_t v, int dedup)
{
	uint32_t fn = SF_FN(v);
	const struct fnid_fn *pf = &w->s->fnid->fns[fn];
	int line = (w->flags & SAMPLES_ST_LINES) && pf->kind == FNID_LUA;
	if (dedup && !line && w->n && w->last_host &&
	    w->out[w->n - 1].kind == SAMPLES_FR_FN &&
	    w->out[w->n - 1].fn == fn) {
		w->last_host = 0; /* the same frame: keep one */
		return;
	}
	struct samples_frame *f = &w->out[w->n++];
	f->kind = line ? SAMPLES_FR_LINE : SAMPLES_FR_FN;
	f->fn = fn;
	f->line = line ? (uint32_t)v : 0;
	f->idx = 0;
	w->last_host = 0;
}

/* Append a SAMPLES_FR_VM or SAMPLES_FR_STATE frame for
** state. */
static void view_state(struct view *w, unsigned kind, unsigned state)
{
	struct samples_frame *f = &w->out[w->n++];
	f->kind = kind;
	f->fn = 0;
	f->line = 0;
	f->idx = state;
	w->last_host = 0;
}

/* Whether a sample in state runs LuaJIT's own code whatever
** its frames say: the collector, the JIT compiler. */
static int state_in_vm(unsigned state)
{
	return state == FORMAT_STATE_GC || state == FORMAT_STATE_RECORD ||
	       state == FORMAT_STATE_OPT || state == FORMAT_STATE_ASM;
}

/* The Lua-first view of a split stack (see samples.h): host
** frames hv[0..nh) with interpreter frames from iv0 to iv1 (-1: none),
** Lua frames lv[0..nl), all outermost first. */
static void view_lua_first(struct view *w, const uint64_t *hv, size_t nh,
			   int64_t iv0, int64_t iv1, const uint64_t *lv,
			   size_t nl, unsigned state)
{
	const struct samples *s = w->s;
	size_t i, l0 = 0;
	if (!nl && iv0 < 0 && !state_in_vm(state)) {
		/* The host's own code, no Lua in sight. */
		for (i = 0; i < nh; i++)
			view_host(w, (uint32_t)hv[i], 0);
		return;
	}
	/* The root: the first Lua function (C functions below it, such as
	** luajit's pmain, are the host's way in; with no Lua function, all
	** of them). */
	while (l0 < nl && s->fnid->fns[SF_FN(lv[l0])].kind != FNID_LUA)
		l0++;
	for (i = l0; i < nl; i++)
		view_lua(w, lv[i], 0);
	if (state_in_vm(state) || l0 == nl) {
		unsigned k =
		    state == FORMAT_STATE_IDLE || state == FORMAT_STATE_LJLOG
			? SAMPLES_FR_STATE
			: SAMPLES_FR_VM;
		view_state(w, k, state);
		return;
	}
	uint32_t leaf = SF_FN(lv[nl - 1]);
	int cleaf = s->fnid->fns[leaf].kind != FNID_LUA;
	for (i = iv0 < 0 ? 0 : (size_t)iv1 + 1; i < nh; i++) {
		const struct samples_host *h = &s->hosts[hv[i]];
		if (cleaf && (h->vm_object || h->fn == leaf))
			continue; /* the C function stands for them */
		if (!h->vm_inner && !(h->flags & FORMAT_HOST_VM)) {
			view_host(w, (uint32_t)hv[i], 0);
			continue;
		}
		if (w->out[w->n - 1].kind != SAMPLES_FR_VM)
			view_state(w, SAMPLES_FR_VM, state);
	}
}

/* Index in traces of the trace node ran, -1 for none. */
int64_t samples_node_trace(const struct samples *s, uint32_t node)
{
	for (uint32_t m = node; m; m = s->nodes[m].parent)
		if (s->nodes[m].frame >> SAMPLES_SF_SHIFT == SAMPLES_SF_TRACE)
			return (int64_t)(s->nodes[m].frame &
					 ((1ull << SAMPLES_SF_SHIFT) - 1));
	return -1;
}

/* The frames of node in view (see samples.h). */
size_t samples_stack(const struct samples *s, uint32_t node, unsigned view,
		     unsigned flags, struct samples_frame *out)
{
	/* The node's frames, outermost first (on the stack when short), then
	** split: host frames in hv, Lua frames in lv, both outermost first. */
	uint64_t buf[3 * 64], *raw = buf;
	size_t depth = 0, i, nh = 0, nl = 0;
	for (uint32_t m = node; m; m = s->nodes[m].parent)
		depth++;
	if (depth > 64 && !(raw = malloc(3 * depth * sizeof *raw)))
		depth = 0; /* out of memory: an empty stack */
	uint64_t *hv = raw + depth, *lv = hv + depth;
	i = depth;
	for (uint32_t m = node; m && i; m = s->nodes[m].parent)
		raw[--i] = s->nodes[m].frame;
	unsigned state = 0;
	int64_t trace = -1, iv0 = -1, iv1 = -1;
	for (i = 0; i < depth; i++) {
		uint64_t tag = raw[i] >> SAMPLES_SF_SHIFT;
		uint64_t v = raw[i] & ((1ull << SAMPLES_SF_SHIFT) - 1);
		switch (tag) {
		case SAMPLES_SF_STATE: state = (unsigned)v; break;
		case SAMPLES_SF_HOST:
			if (s->hosts[v].flags & FORMAT_HOST_VM) {
				if (iv0 < 0)
					iv0 = (int64_t)nh;
				iv1 = (int64_t)nh;
			}
			hv[nh++] = v;
			break;
		case SAMPLES_SF_LUA: lv[nl++] = v; break;
		default: trace = (int64_t)v; break;
		}
	}
	struct view w = {s, out, 0, flags, 0};
	int want_trace = trace >= 0 && !(flags & SAMPLES_ST_NOTRACE);
	switch (view) {
	case SAMPLES_VIEW_HOST:
		for (i = 0; i < nh; i++)
			view_host(&w, (uint32_t)hv[i], 0);
		want_trace = 0;
		break;
	case SAMPLES_VIEW_LUA:
		for (i = 0; i < nl; i++)
			view_lua(&w, lv[i], 0);
		break;
	case SAMPLES_VIEW_LUA_FIRST:
		view_lua_first(&w, hv, nh, iv0, iv1, lv, nl, state);
		want_trace = 0;
		break;
	default:
		if (iv0 < 0) {
			/* No interpreter frame: with Lua frames, the host
			** frames are C code they called, unwound up to
			** compiled code (which has no unwind information):
			** Lua frames, trace, host frames. */
			for (i = 0; i < nl; i++)
				view_lua(&w, lv[i], 1);
			if (want_trace) {
				out[w.n].kind = SAMPLES_FR_TRACE;
				out[w.n].fn = 0;
				out[w.n].line = 0;
				out[w.n++].idx = (uint32_t)trace;
				w.last_host = 0;
				want_trace = 0;
			}
			for (i = 0; i < nh; i++)
				view_host(&w, (uint32_t)hv[i], 1);
			break;
		}
		for (i = 0; i < (size_t)iv0; i++)
			view_host(&w, (uint32_t)hv[i], 1);
		if (!nl) /* no Lua frames: the interpreter stands */
			view_host(&w, (uint32_t)hv[iv1], 1);
		for (i = 0; i < nl; i++)
			view_lua(&w, lv[i], 1);
		if (want_trace) {
			out[w.n].kind = SAMPLES_FR_TRACE;
			out[w.n].fn = 0;
			out[w.n].line = 0;
			out[w.n++].idx = (uint32_t)trace;
			w.last_host = 0;
			want_trace = 0;
		}
		for (i = (size_t)iv1 + 1; i < nh; i++)
			view_host(&w, (uint32_t)hv[i], 1);
		break;
	}
	if (want_trace) {
		out[w.n].kind = SAMPLES_FR_TRACE;
		out[w.n].fn = 0;
		out[w.n].line = 0;
		out[w.n++].idx = (uint32_t)trace;
	}
	if (!w.n) {
		out[0].kind = SAMPLES_FR_STATE;
		out[0].fn = 0;
		out[0].line = 0;
		out[0].idx = state;
		w.n = 1;
	}
	if (raw != buf)
		free(raw);
	return w.n;
}

/* What LuaJIT's own code does in state. */
const char *samples_vm_label(unsigned state)
{
	switch (state) {
	case FORMAT_STATE_GC: return "(gc)";
	case FORMAT_STATE_RECORD:
	case FORMAT_STATE_OPT:
	case FORMAT_STATE_ASM: return "(jit compiler)";
	case FORMAT_STATE_INTERP: return "(interpreter)";
	default: return "(luajit)";
	}
}

/* A frame's name. */
void samples_frame_name(const struct samples *s, const struct samples_frame *f,
			char *buf, size_t len)
{
	switch (f->kind) {
	case SAMPLES_FR_FN:
		snprintf(buf, len, "%s", s->fnid->fns[f->fn].name);
		break;
	case SAMPLES_FR_LINE:
		snprintf(buf, len, "%s:%llu", s->fnid->fns[f->fn].file,
			 (unsigned long long)f->line);
		break;
	case SAMPLES_FR_TRACE:
		snprintf(buf, len, "trace %llu",
			 (unsigned long long)s->traces[f->idx].traceno);
		break;
	case SAMPLES_FR_VM:
		snprintf(buf, len, "%s", samples_vm_label(f->idx));
		break;
	default: snprintf(buf, len, "(%s)", format_state_name(f->idx)); break;
	}
}
