/*
** ljlog reader processors: calls.
** One pass; no allocation per event except when a table grows.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/calls.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* An open frame. */
struct frame {
	uint32_t fn;	     /* function index */
	uint32_t node;	     /* call-tree node */
	int64_t slot;	     /* Lua stack slot */
	uint32_t cfn, cnode; /* last callee of this frame, to skip the hash */
};

/* One coroutine's frame stack. */
struct costack {
	struct frame *f;
	uint32_t n, cap;
	int in_chain;	/* running, or waiting on a coroutine it resumed */
	int touched;	/* has been in the chain */
	uint32_t track; /* calls_obs track: COROUTINE ID, 0 for co0 */
	struct costack *next; /* the VM's list of stacks */
};

/* State of one VM. */
struct calls_vm {
	uint32_t id;
	struct costack co0;	/* the coroutine before the first SWITCH */
	int co0_named;		/* co0 turned out to be the main coroutine */
	struct costack **chain; /* resume chain, bottom first; top is running */
	uint32_t nchain, capchain;
	struct costack *stacks; /* stacks of COROUTINE IDs */
	uint32_t *active;	/* per fn: open active frames */
	uint64_t *since;	/* per fn: when active went 0 -> 1 */
	size_t nact;
	uint32_t rcfn, rcnode; /* last root callee */
	uint64_t first_ts, last_ts;
	int has_ts;
};

/* Pass a warning on. */
static void warn(struct calls *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (!c->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	c->warn(c->warn_ud, buf);
}

/* Start c. */
int calls_init(struct calls *c, struct fnid *fnid, int tree,
	       void (*warnf)(void *ud, const char *msg), void *ud)
{
	memset(c, 0, sizeof *c);
	c->fnid = fnid;
	c->tree = tree;
	c->win_hi = UINT64_MAX;
	c->warn = warnf;
	c->warn_ud = ud;
	c->nodecap = 1024;
	if (!(c->nodes = malloc(c->nodecap * sizeof *c->nodes)))
		return -ENOMEM;
	c->nodes[0].parent = 0;
	c->nodes[0].fn = UINT32_MAX;
	c->nodes[0].calls = c->nodes[0].self = 0;
	c->nnode = 1;
	return 0;
}

/* Free everything. */
void calls_free(struct calls *c)
{
	for (size_t i = 0; i < c->nvm; i++) {
		struct calls_vm *v = c->vms[i];
		free(v->co0.f);
		while (v->stacks) {
			struct costack *n = v->stacks->next;
			free(v->stacks->f);
			free(v->stacks);
			v->stacks = n;
		}
		free(v->chain);
		free(v->active);
		free(v->since);
		free(v);
	}
	free(c->vms);
	free(c->fns);
	free(c->nodes);
	hmap_free(&c->nodemap);
	hmap_free(&c->vmmap);
	hmap_free(&c->comap);
	memset(c, 0, sizeof *c);
}

/* The stats of function fn. */
const struct calls_fn *calls_fn_get(const struct calls *c, uint32_t fn)
{
	static const struct calls_fn zero;
	return fn < c->nfn ? &c->fns[fn] : &zero;
}

/* The VM with this ID, or NULL. */
static struct calls_vm *vm_find(const struct calls *c, uint32_t id)
{
	const uint64_t *i = hmap_get(&c->vmmap, (uint64_t)id + 1);
	return i ? c->vms[*i - 1] : NULL;
}

/* First and last event time of VM id. */
int calls_vm_span(const struct calls *c, uint32_t id, uint64_t *first,
		  uint64_t *last)
{
	const struct calls_vm *v = vm_find(c, id);
	if (!v || !v->has_ts)
		return 0;
	*first = v->first_ts;
	*last = v->last_ts;
	return 1;
}

/* Whether track 0 of VM id is its main coroutine. */
int calls_vm_co0_main(const struct calls *c, uint32_t id)
{
	const struct calls_vm *v = vm_find(c, id);
	return v && v->co0_named;
}

/* The VM with this ID, created when new; NULL when out of
** memory. */
static struct calls_vm *vm_get(struct calls *c, uint32_t id)
{
	struct calls_vm *v = vm_find(c, id);
	if (v)
		return v;
	struct calls_vm **nv = realloc(c->vms, (c->nvm + 1) * sizeof *nv);
	if (!nv)
		return NULL;
	c->vms = nv;
	v = calloc(1, sizeof *v);
	struct costack **chain = malloc(8 * sizeof *chain);
	if (!v || !chain ||
	    hmap_put(&c->vmmap, (uint64_t)id + 1, c->nvm + 1) < 0) {
		free(v);
		free(chain);
		return NULL;
	}
	v->id = id;
	v->chain = chain;
	v->capchain = 8;
	v->chain[0] = &v->co0;
	v->nchain = 1;
	v->co0.in_chain = v->co0.touched = 1;
	v->rcnode = UINT32_MAX;
	c->vms[c->nvm++] = v;
	return v;
}

/* Call-tree node for fn called from parent; -1 when out of
** memory. */
static int64_t node_get(struct calls *c, uint32_t parent, uint32_t fn)
{
	uint64_t key = ((uint64_t)parent + 1) << 32 | fn;
	const uint64_t *v = hmap_get(&c->nodemap, key);
	if (v)
		return (int64_t)*v;
	if (c->nnode >= CALLS_MAX_NODES) {
		if (!c->nodes_capped++)
			warn(c,
			     "call tree cut at %u nodes: deeper calls are "
			     "charged to their caller's path",
			     CALLS_MAX_NODES);
		return parent;
	}
	if (c->nnode == c->nodecap) {
		size_t cap = c->nodecap * 2;
		struct calls_node *nn = realloc(c->nodes, cap * sizeof *nn);
		if (!nn)
			return -1;
		c->nodes = nn;
		c->nodecap = cap;
	}
	int64_t n = (int64_t)c->nnode;
	if (hmap_put(&c->nodemap, key, (uint64_t)n) < 0)
		return -1;
	c->nodes[n].parent = parent;
	c->nodes[n].fn = fn;
	c->nodes[n].calls = 0;
	c->nodes[n].self = 0;
	c->nnode++;
	return n;
}

/* Make the per-fn arrays (of c and of v) cover fn. */
static int fn_grow(struct calls *c, struct calls_vm *v, uint32_t fn)
{
	if (fn >= c->nfn) {
		size_t n = c->nfn ? c->nfn : 64;
		while (n <= fn)
			n *= 2;
		struct calls_fn *f = realloc(c->fns, n * sizeof *f);
		if (!f)
			return -ENOMEM;
		memset(f + c->nfn, 0, (n - c->nfn) * sizeof *f);
		c->fns = f;
		c->nfn = n;
	}
	if (fn >= v->nact) {
		size_t n = v->nact ? v->nact : 64;
		while (n <= fn)
			n *= 2;
		uint32_t *a = realloc(v->active, n * sizeof *a);
		if (a)
			v->active = a;
		uint64_t *s = realloc(v->since, n * sizeof *s);
		if (s)
			v->since = s;
		if (!a || !s)
			return -ENOMEM;
		memset(a + v->nact, 0, (n - v->nact) * sizeof *a);
		v->nact = n;
	}
	return 0;
}

/* One more active frame of fn at t. */
static inline void activate(struct calls_vm *v, uint32_t fn, uint64_t t)
{
	if (v->active[fn]++ == 0)
		v->since[fn] = t;
}

/* One active frame of fn fewer at t: total time when none left. */
static inline void deactivate(struct calls *c, struct calls_vm *v, uint32_t fn,
			      uint64_t t)
{
	if (--v->active[fn] == 0)
		c->fns[fn].total += t - v->since[fn];
}

/* Close the top frame of s at t. */
static inline void pop(struct calls *c, struct calls_vm *v, struct costack *s,
		       uint64_t t)
{
	uint32_t fn = s->f[--s->n].fn;
	if (s->in_chain) {
		deactivate(c, v, fn, t);
		if (UTIL_UNLIKELY(c->obs.close != NULL))
			c->obs.close(c->obs.ud, v->id, s->track, fn, t, 0);
	}
}

/* s leaves the chain (it yielded, returned or died): its frames
** stop counting. */
static void stack_leave(struct calls *c, struct calls_vm *v, struct costack *s,
			uint64_t t)
{
	for (uint32_t i = 0; i < s->n; i++)
		deactivate(c, v, s->f[i].fn, t);
	if (c->obs.close)
		for (uint32_t i = s->n; i-- > 0;)
			c->obs.close(c->obs.ud, v->id, s->track, s->f[i].fn, t,
				     1);
	s->in_chain = 0;
}

/* s joins the chain (resumed): its frames count again. */
static void stack_enter(struct calls *c, struct calls_vm *v, struct costack *s,
			uint64_t t)
{
	for (uint32_t i = 0; i < s->n; i++) {
		activate(v, s->f[i].fn, t);
		if (c->obs.open)
			c->obs.open(c->obs.ud, v->id, s->track, s->f[i].fn, t,
				    1);
	}
	s->in_chain = s->touched = 1;
}

/* Close every frame of v at t (DETACH or end of input). */
static void vm_close(struct calls *c, struct calls_vm *v, uint64_t t)
{
	while (v->nchain > 0) {
		struct costack *s = v->chain[--v->nchain];
		while (s->n)
			pop(c, v, s, t);
		s->in_chain = 0;
	}
	v->co0.n = 0;
	for (struct costack *s = v->stacks; s; s = s->next)
		s->n = 0;
	v->chain[0] = &v->co0;
	v->nchain = 1;
	v->co0.in_chain = 1;
	/* No frame is open: the per-fn counters are all 0, give them back
	** (a host may run many VMs one after the other). */
	free(v->active);
	free(v->since);
	v->active = NULL;
	v->since = NULL;
	v->nact = 0;
}

/* End the assembler fast functions on top of running stack s:
** they return as soon as what they called returns, or their coroutine
** runs again (doc/format.txt, "Frames"). */
static void pop_noexit(struct calls *c, struct calls_vm *v, struct costack *s,
		       uint64_t t)
{
	while (s->n && c->fnid->fns[s->f[s->n - 1].fn].noexit)
		pop(c, v, s, t);
}

/* End the leaf fast function on top of running stack s (one
** that calls no Lua back: its frame ends at its coroutine's next ENTER,
** EXIT or SWITCH; version 4, doc/format.txt "Frames"), and the pcall that
** called it, which returns with it. */
static inline void pop_leaf(struct calls *c, struct calls_vm *v,
			    struct costack *s, uint64_t t)
{
	if (s->n) {
		const struct fnid_fn *f = &c->fnid->fns[s->f[s->n - 1].fn];
		if (f->noexit && !f->callback) {
			pop(c, v, s, t);
			pop_noexit(c, v, s, t);
		}
	}
}

/* Switch v to coroutine o at t (see the note in calls.h). */
static int do_switch(struct calls *c, struct calls_vm *v,
		     const struct decode_obj *o, uint64_t t)
{
	int added;
	uint64_t *slot = hmap_ref(&c->comap, o->id, &added);
	if (!slot)
		return -ENOMEM;
	struct costack *x = (struct costack *)(uintptr_t)*slot;
	if (!x) {
		x = calloc(1, sizeof *x);
		if (!x) {
			hmap_del(&c->comap, o->id);
			return -ENOMEM;
		}
		x->next = v->stacks;
		x->track = o->id;
		v->stacks = x;
		*slot = (uint64_t)(uintptr_t)x;
	}
	if (x == v->chain[v->nchain - 1])
		return 0;
	/* The coroutine running before the first SWITCH is the main one when
	** we first reach the main coroutine without it having run. */
	if (!v->co0_named && v->chain[0] == &v->co0 && !x->touched &&
	    (o->u.co.flags & FORMAT_CO_MAIN)) {
		struct costack tmp = *x;
		x->f = v->co0.f;
		x->n = v->co0.n;
		x->cap = v->co0.cap;
		x->in_chain = x->touched = 1;
		x->track = v->co0.track; /* its frames opened on track 0 */
		v->co0.f = tmp.f;
		v->co0.n = 0;
		v->co0.cap = tmp.cap;
		v->co0.in_chain = 0;
		v->chain[0] = x;
		v->co0_named = 1;
	}
	if (x->in_chain) {
		/* Back to a resumer: everything above it yielded or ended. The
		** bottom of the chain stays: only a corrupt log (a coroutine
		** the chain does not hold, marked in it) gets there. */
		while (v->nchain > 1 && v->chain[v->nchain - 1] != x)
			stack_leave(c, v, v->chain[--v->nchain], t);
		if (v->chain[v->nchain - 1] == x)
			pop_noexit(c, v, x,
				   t); /* its coroutine.resume returns */
		else
			x->in_chain = 0;
		return 0;
	}
	if (v->nchain == v->capchain) {
		struct costack **ch =
		    realloc(v->chain, 2 * v->capchain * sizeof *ch);
		if (!ch)
			return -ENOMEM;
		v->chain = ch;
		v->capchain *= 2;
	}
	v->chain[v->nchain++] = x;
	stack_enter(c, v, x, t);
	pop_noexit(c, v, x, t); /* its coroutine.yield returns */
	return 0;
}

/* Give time since the VM's last event to the running function. */
static inline void accrue(struct calls *c, struct calls_vm *v, uint64_t dt)
{
	for (uint32_t i = v->nchain; i-- > 0;) {
		struct costack *s = v->chain[i];
		if (UTIL_LIKELY(s->n)) {
			const struct frame *f = &s->f[s->n - 1];
			c->fns[f->fn].self += dt;
			if (c->tree)
				c->nodes[f->node].self += dt;
			return;
		}
	}
}

/* ENTER: push a frame for the event's function. */
static int enter(struct calls *c, struct calls_vm *v,
		 const struct decode_event *ev, uint64_t t)
{
	struct costack *s = v->chain[v->nchain - 1];
	while (s->n && s->f[s->n - 1].slot >= ev->slot)
		pop(c, v, s, t);
	uint32_t fn = fnid_of(ev->obj), node = 0;
	if (c->tree) {
		uint32_t *cfn, *cnode;
		if (s->n) {
			cfn = &s->f[s->n - 1].cfn;
			cnode = &s->f[s->n - 1].cnode;
		} else {
			cfn = &v->rcfn;
			cnode = &v->rcnode;
		}
		if (*cnode == UINT32_MAX || *cfn != fn) {
			int64_t nd =
			    node_get(c, s->n ? s->f[s->n - 1].node : 0, fn);
			if (nd < 0)
				return -ENOMEM;
			*cfn = fn;
			*cnode = (uint32_t)nd;
		}
		node = *cnode; /* the stack may move below */
		if (ev->ts >= c->win_lo && ev->ts < c->win_hi)
			c->nodes[node].calls++;
	}
	if (UTIL_UNLIKELY(s->n == s->cap)) {
		uint32_t cap = s->cap ? s->cap * 2 : 32;
		struct frame *f = realloc(s->f, cap * sizeof *f);
		if (!f)
			return -ENOMEM;
		s->f = f;
		s->cap = cap;
	}
	if (UTIL_UNLIKELY(fn >= v->nact || fn >= c->nfn) &&
	    fn_grow(c, v, fn) < 0)
		return -ENOMEM;
	struct frame *f = &s->f[s->n++];
	f->fn = fn;
	f->node = node;
	f->slot = ev->slot;
	f->cfn = 0;
	f->cnode = UINT32_MAX;
	if (ev->ts >= c->win_lo && ev->ts < c->win_hi)
		c->fns[fn].calls++;
	activate(v, fn, t);
	if (UTIL_UNLIKELY(c->obs.open != NULL))
		c->obs.open(c->obs.ud, v->id, s->track, fn, t, 0);
	return 0;
}

/* One event (hot path): time, frames, coroutines. */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct calls *c = ud;
	struct calls_vm *v = c->last_vm;
	/* Outside the window, time stands still: none is counted there. */
	const uint64_t t = ev->ts < c->win_lo	? c->win_lo
			   : ev->ts > c->win_hi ? c->win_hi
						: ev->ts;
	struct costack *s;

	if (UTIL_UNLIKELY(!v || v->id != ev->vm)) {
		if (!(v = vm_get(c, ev->vm)))
			return -ENOMEM;
		c->last_vm = v;
	}
	if (UTIL_LIKELY(v->has_ts)) {
		uint64_t dt = t - v->last_ts;
		if (dt)
			accrue(c, v, dt);
	} else {
		v->has_ts = 1;
		v->first_ts = t;
	}
	v->last_ts = t;

	if (c->leaf_rule &&
	    (ev->op == FORMAT_OP_ENTER || ev->op == FORMAT_OP_EXIT ||
	     ev->op == FORMAT_OP_SWITCH))
		pop_leaf(c, v, v->chain[v->nchain - 1], t);

	switch (ev->op) {
	case FORMAT_OP_ENTER: return enter(c, v, ev, t);
	case FORMAT_OP_EXIT:
		s = v->chain[v->nchain - 1];
		while (s->n && s->f[s->n - 1].slot > ev->slot)
			pop(c, v, s, t);
		if (s->n && s->f[s->n - 1].slot == ev->slot) {
			pop(c, v, s, t);
			pop_noexit(c, v, s,
				   t); /* pcall returns with its callee */
		} else {
			c->unmatched_exits++;
		}
		break;
	case FORMAT_OP_SWITCH: return do_switch(c, v, ev->obj, t);
	case FORMAT_OP_VM:
		if (ev->lo == FORMAT_VM_DETACH)
			vm_close(c, v, t);
		break;
	}
	return 0;
}

/* INTRO: the frame rule of the log's version. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct calls *c = ud;
	c->leaf_rule = in->version >= 4;
	return 0;
}

/* Fill sink: INTRO and events. */
void calls_sink(struct calls *c, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = c;
	sink->intro = on_intro;
	sink->event = on_event;
}

/* End of input: close what is open. */
void calls_finish(struct calls *c)
{
	for (size_t i = 0; i < c->nvm; i++)
		if (c->vms[i]->has_ts)
			vm_close(c, c->vms[i], c->vms[i]->last_ts);
}
