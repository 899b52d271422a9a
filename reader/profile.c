/*
** ljlog reader library, layer 3: processors fed by the decoder.
** One pass; no allocation per event except when a table grows.
*/
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIKELY(x)    __builtin_expect(!!(x), 1)
#define UNLIKELY(x)  __builtin_expect(!!(x), 0)

#define MAX_WARNINGS 64
#define LINE_MAX_KEY ((1ull << 40) - 1)

/* Pseudo-functions (allocation sites without a function). */
enum pseudo {
	PS_UNKNOWN,
	PS_GC,
	PS_JIT,
	PS_INTERNAL,
	PS_TRACE,
	PS_BEFORE,
	PS__MAX
};
static const char *const pseudo_names[PS__MAX] = {
    "(unknown)", "(gc)", "(jit)", "(internal)", "(trace)", "(before attach)",
};

/* -- Hash tables -------------------------------------------------------------- */

/* Any thread. Mix a 64-bit key (murmur3 finaliser). */
static inline uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* Non-zero u64 key -> u32 value, open addressing, no deletion. */
struct imap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

/* Any thread. Value for key, or -1. */
static inline int64_t imap_get(const struct imap *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	size_t mask = m->cap - 1, i = mix(key) & mask;
	for (;; i = (i + 1) & mask) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == 0)
			return -1;
	}
}

/* Any thread. Set key (not present yet) to val; 0 or -ENOMEM. */
static int imap_put(struct imap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint64_t *keys = calloc(cap, sizeof *keys);
		uint32_t *vals = malloc(cap * sizeof *vals);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			size_t i = mix(m->keys[j]) & (cap - 1);
			while (keys[i])
				i = (i + 1) & (cap - 1);
			keys[i] = m->keys[j];
			vals[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	size_t mask = m->cap - 1, i = mix(key) & mask;
	while (m->keys[i])
		i = (i + 1) & mask;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

/* Any thread. Free the table. */
static void imap_free(struct imap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* Live allocation: address -> site and size. */
struct aent {
	uint64_t addr; /* 0: empty slot */
	uint64_t size;
	uint32_t site;
};

struct amap {
	struct aent *e;
	size_t cap, n;
};

/* Any thread. Record addr (non-zero) as allocated at site; 0 or -ENOMEM. */
static int amap_put(struct amap *m, uint64_t addr, uint32_t site, uint64_t size)
{
	if (UNLIKELY((m->n + 1) * 2 > m->cap)) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct aent *e = calloc(cap, sizeof *e);
		if (!e)
			return -ENOMEM;
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->e[j].addr)
				continue;
			size_t i = mix(m->e[j].addr) & (cap - 1);
			while (e[i].addr)
				i = (i + 1) & (cap - 1);
			e[i] = m->e[j];
		}
		free(m->e);
		m->e = e;
		m->cap = cap;
	}
	size_t mask = m->cap - 1, i = mix(addr) & mask;
	while (m->e[i].addr && m->e[i].addr != addr)
		i = (i + 1) & mask;
	if (!m->e[i].addr)
		m->n++;
	m->e[i].addr = addr;
	m->e[i].site = site;
	m->e[i].size = size;
	return 0;
}

/* Any thread. Remove addr; its site, or -1 when it was never allocated. */
static int64_t amap_take(struct amap *m, uint64_t addr)
{
	if (!m->cap || !addr)
		return -1;
	size_t mask = m->cap - 1, i = mix(addr) & mask;
	while (m->e[i].addr != addr) {
		if (!m->e[i].addr)
			return -1;
		i = (i + 1) & mask;
	}
	int64_t site = m->e[i].site;
	/* Backward-shift deletion keeps probe chains whole. */
	for (size_t j = i;;) {
		j = (j + 1) & mask;
		if (!m->e[j].addr)
			break;
		size_t k = mix(m->e[j].addr) & mask;
		if ((j > i && (k <= i || k > j)) ||
		    (j < i && k <= i && k > j)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].addr = 0;
	m->n--;
	return site;
}

/* -- State -------------------------------------------------------------------- */

/* An open frame. */
struct frame {
	uint32_t fn;	     /* index in fns */
	uint32_t node;	     /* call-tree node */
	int64_t slot;	     /* Lua stack slot */
	uint32_t cfn, cnode; /* last callee of this frame, to skip the hash */
};

/* One coroutine's frame stack. */
struct costack {
	struct frame *f;
	uint32_t n, cap;
	int in_chain; /* running, or waiting on a coroutine it resumed */
	int touched;  /* has been in the chain */
	struct costack *next; /* the VM's list of stacks */
};

/* Processor state of one VM. */
struct vmst {
	struct profile_vm *pv;
	struct costack co0;	/* the coroutine before the first SWITCH */
	int co0_named;		/* co0 turned out to be the main coroutine */
	struct costack **chain; /* resume chain, bottom first; top is running */
	uint32_t nchain, capchain;
	struct costack *stacks; /* stacks of COROUTINE IDs */
	uint32_t *active;	/* per fn: open active frames */
	uint64_t *since;	/* per fn: when active went 0 -> 1 */
	size_t nact;
	uint32_t rcfn, rcnode; /* last root callee */
	int gc_phase;	       /* -1: none seen */
	uint64_t gc_since;
	int64_t net, peak_net; /* alloc - free so far, and its peak */
	int has_attach_event;
	struct amap amap;
};

/* Private state of a profile. */
struct priv {
	struct imap fnmap; /* identity hash -> first fn with that hash */
	uint32_t *fnnext;  /* per fn: next fn with the same identity hash */
	size_t fncap;
	char **fnkeys; /* per fn: identity key */
	size_t *fnkeylen;
	struct imap sitemap; /* (fn + 1) << 40 | line -> site */
	size_t sitecap;
	struct imap nodemap; /* (parent + 1) << 32 | fn -> node */
	size_t nodecap;
	struct imap vmmap;	 /* VM ID -> index in vms */
	int64_t pseudo[PS__MAX]; /* fn index of each pseudo-function, or -1 */
	uint64_t site_key;	 /* last site looked up */
	uint32_t site_val;
	size_t nwarn_dropped;
	uint64_t nodes_capped; /* calls past PROFILE_MAX_NODES */
};

/* -- Warnings ------------------------------------------------------------------ */

/* Any thread. Keep a warning for the front end. */
static void add_warn(struct profile *p, const char *fmt, ...)
{
	struct priv *pr = p->priv;
	char buf[512];
	va_list ap;
	if (p->nwarn >= MAX_WARNINGS) {
		pr->nwarn_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char **w = realloc(p->warnings, (p->nwarn + 1) * sizeof *w);
	if (!w)
		return;
	p->warnings = w;
	if ((w[p->nwarn] = strdup(buf)))
		p->nwarn++;
}

/* -- Functions, sites, nodes --------------------------------------------------- */

/* Any thread. FNV-1a of a key. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h | 1; /* never 0 */
}

/* Any thread. Index of the function with this identity key, created with
** name/file/line/kind when new; -1 when out of memory. */
static int64_t fn_get(struct profile *p, const char *key, size_t keylen,
		      const char *name, const char *file, uint64_t line,
		      unsigned kind)
{
	struct priv *pr = p->priv;
	uint64_t h = hash_bytes(key, keylen);
	int64_t i = imap_get(&pr->fnmap, h);
	for (int64_t j = i; j >= 0;
	     j = pr->fnnext[j] == UINT32_MAX ? -1 : (int64_t)pr->fnnext[j])
		if (pr->fnkeylen[j] == keylen &&
		    memcmp(pr->fnkeys[j], key, keylen) == 0)
			return j;
	if (p->nfn == pr->fncap) {
		size_t cap = pr->fncap ? pr->fncap * 2 : 256;
		struct profile_fn *f = realloc(p->fns, cap * sizeof *f);
		if (f)
			p->fns = f;
		uint32_t *nx = realloc(pr->fnnext, cap * sizeof *nx);
		if (nx)
			pr->fnnext = nx;
		char **k = realloc(pr->fnkeys, cap * sizeof *k);
		if (k)
			pr->fnkeys = k;
		size_t *kl = realloc(pr->fnkeylen, cap * sizeof *kl);
		if (kl)
			pr->fnkeylen = kl;
		if (!f || !nx || !k || !kl)
			return -1;
		pr->fncap = cap;
	}
	size_t n = p->nfn;
	struct profile_fn *f = &p->fns[n];
	memset(f, 0, sizeof *f);
	f->name = strdup(name);
	f->file = strdup(file);
	pr->fnkeys[n] = malloc(keylen ? keylen : 1);
	if (!f->name || !f->file || !pr->fnkeys[n]) {
		free(f->name);
		free(f->file);
		free(pr->fnkeys[n]);
		return -1;
	}
	memcpy(pr->fnkeys[n], key, keylen);
	pr->fnkeylen[n] = keylen;
	f->line = line;
	f->kind = kind;
	if (i >= 0) {
		/* Same hash: chain behind the first one. */
		pr->fnnext[n] = pr->fnnext[i];
		pr->fnnext[i] = (uint32_t)n;
	} else {
		pr->fnnext[n] = UINT32_MAX;
		if (imap_put(&pr->fnmap, h, (uint32_t)n) < 0) {
			free(f->name);
			free(f->file);
			free(pr->fnkeys[n]);
			return -1;
		}
	}
	p->nfn++;
	return (int64_t)n;
}

/* Any thread. Function index of a pseudo-function; -1 when out of memory. */
static int64_t fn_pseudo(struct profile *p, enum pseudo ps)
{
	struct priv *pr = p->priv;
	if (pr->pseudo[ps] < 0) {
		char key[32];
		int kl = snprintf(key, sizeof key, "I\x1f%s", pseudo_names[ps]);
		pr->pseudo[ps] = fn_get(p, key, (size_t)kl, pseudo_names[ps],
					"", 0, PROFILE_FN_INTERNAL);
	}
	return pr->pseudo[ps];
}

/* Any thread. Build a key from parts separated by 0x1f. */
static size_t key_join(char *out, size_t cap, char tag, const char *a,
		       size_t alen, const char *b, size_t blen, uint64_t num)
{
	size_t n = 0;
	int k;
	if (cap < 40)
		return 0;
	out[n++] = tag;
	out[n++] = 0x1f;
	if (alen > cap - 40)
		alen = cap - 40;
	memcpy(out + n, a, alen);
	n += alen;
	out[n++] = 0x1f;
	if (blen > cap - 40 - alen)
		blen = cap - 40 - alen;
	memcpy(out + n, b, blen);
	n += blen;
	k = snprintf(out + n, cap - n, "\x1f%llu", (unsigned long long)num);
	return n + (size_t)k;
}

/* Any thread. Function index for a PROTO, CFUNC or FFUNC object. */
static int64_t fn_for_obj(struct profile *p, const struct decode_obj *o)
{
	char addr[32];
	size_t cap = o->kind == FORMAT_REC_PROTO ? o->u.proto.chunk.len
		     : o->kind == FORMAT_REC_CFUNC
			 ? o->u.cfunc.name.len + o->u.cfunc.object.len
			 : o->u.ffunc.name.len;
	cap += 64;
	/* Names as long as the chunk: two long chunk names that differ only
	** at the end must stay two names. */
	size_t namesz = cap + 32, filesz = cap;
	char *key = malloc(cap), *name = malloc(namesz), *file = malloc(filesz);
	int64_t r = -1;
	size_t kl;
	if (!key || !name || !file) {
		free(key);
		free(name);
		free(file);
		return -1;
	}
	switch (o->kind) {
	case FORMAT_REC_PROTO:
		decode_chunk_name(&o->u.proto.chunk, file, filesz);
		snprintf(name, namesz, "%s:%llu", file,
			 (unsigned long long)o->u.proto.firstline);
		kl =
		    key_join(key, cap, 'L', o->u.proto.chunk.s,
			     o->u.proto.chunk.len, "", 0, o->u.proto.firstline);
		r = fn_get(p, key, kl, name, file, o->u.proto.firstline,
			   PROFILE_FN_LUA);
		break;
	case FORMAT_REC_CFUNC:
		snprintf(addr, sizeof addr, "0x%llx",
			 (unsigned long long)o->u.cfunc.address);
		snprintf(file, filesz, "%s", o->u.cfunc.object.s);
		if (o->u.cfunc.name.len) {
			snprintf(name, namesz, "%s", o->u.cfunc.name.s);
			kl = key_join(key, cap, 'C', o->u.cfunc.name.s,
				      o->u.cfunc.name.len, o->u.cfunc.object.s,
				      o->u.cfunc.object.len, 0);
		} else {
			snprintf(name, namesz, "%s", addr);
			kl =
			    key_join(key, cap, 'C', "", 0, o->u.cfunc.object.s,
				     o->u.cfunc.object.len, o->u.cfunc.address);
		}
		r = fn_get(p, key, kl, name, file, 0, PROFILE_FN_C);
		break;
	case FORMAT_REC_FFUNC:
		if (o->u.ffunc.name.len)
			snprintf(name, namesz, "%s", o->u.ffunc.name.s);
		else
			snprintf(name, namesz, "ffid:%llu",
				 (unsigned long long)o->u.ffunc.ffid);
		kl = key_join(key, cap, 'F', name, strlen(name), "", 0, 0);
		r = fn_get(p, key, kl, name, "", 0, PROFILE_FN_FAST);
		if (r >= 0 && (o->u.ffunc.flags & FORMAT_FF_NOEXIT))
			p->fns[r].noexit = 1;
		break;
	}
	free(key);
	free(name);
	free(file);
	return r;
}

/* Any thread. Site index for (fn, line); -1 when out of memory. */
static int64_t site_get(struct profile *p, uint32_t fn, uint64_t line)
{
	struct priv *pr = p->priv;
	if (line > LINE_MAX_KEY)
		line = LINE_MAX_KEY;
	uint64_t key = ((uint64_t)fn + 1) << 40 | line;
	if (LIKELY(key == pr->site_key))
		return pr->site_val;
	int64_t s = imap_get(&pr->sitemap, key);
	if (s < 0) {
		if (p->nsite == pr->sitecap) {
			size_t cap = pr->sitecap ? pr->sitecap * 2 : 256;
			struct profile_site *ns =
			    realloc(p->sites, cap * sizeof *ns);
			if (!ns)
				return -1;
			p->sites = ns;
			pr->sitecap = cap;
		}
		s = (int64_t)p->nsite;
		if (imap_put(&pr->sitemap, key, (uint32_t)s) < 0)
			return -1;
		memset(&p->sites[s], 0, sizeof p->sites[s]);
		p->sites[s].fn = fn;
		p->sites[s].line = line;
		p->nsite++;
	}
	pr->site_key = key;
	pr->site_val = (uint32_t)s;
	return s;
}

/* Any thread. Call-tree node for fn called from parent; -1 when out of memory. */
static int64_t node_get(struct profile *p, uint32_t parent, uint32_t fn)
{
	struct priv *pr = p->priv;
	uint64_t key = ((uint64_t)parent + 1) << 32 | fn;
	int64_t n = imap_get(&pr->nodemap, key);
	if (n >= 0)
		return n;
	if (p->nnode >= PROFILE_MAX_NODES) {
		if (!pr->nodes_capped++)
			add_warn(p,
				 "call tree cut at %u nodes: deeper calls are "
				 "charged to their caller's path",
				 PROFILE_MAX_NODES);
		return parent;
	}
	if (p->nnode == pr->nodecap) {
		size_t cap = pr->nodecap * 2;
		struct profile_node *nn = realloc(p->nodes, cap * sizeof *nn);
		if (!nn)
			return -1;
		p->nodes = nn;
		pr->nodecap = cap;
	}
	n = (int64_t)p->nnode;
	if (imap_put(&pr->nodemap, key, (uint32_t)n) < 0)
		return -1;
	p->nodes[n].parent = parent;
	p->nodes[n].fn = fn;
	p->nodes[n].calls = 0;
	p->nodes[n].self = 0;
	p->nnode++;
	return n;
}

/* -- VMs and stacks ------------------------------------------------------------ */

/* Any thread. The VM with this ID, created when new; NULL when out of memory. */
static struct vmst *vm_get(struct profile *p, uint32_t id)
{
	struct priv *pr = p->priv;
	int64_t i = imap_get(&pr->vmmap, id);
	if (i >= 0)
		return p->vms[i]->st;
	struct profile_vm **nv = realloc(p->vms, (p->nvm + 1) * sizeof *nv);
	if (!nv)
		return NULL;
	p->vms = nv;
	struct profile_vm *pv = calloc(1, sizeof *pv);
	struct vmst *v = calloc(1, sizeof *v);
	struct costack **chain = malloc(8 * sizeof *chain);
	if (!pv || !v || !chain ||
	    imap_put(&pr->vmmap, id, (uint32_t)p->nvm) < 0) {
		free(pv);
		free(v);
		free(chain);
		return NULL;
	}
	pv->id = id;
	pv->st = v;
	v->pv = pv;
	v->gc_phase = -1;
	v->chain = chain;
	v->capchain = 8;
	v->chain[0] = &v->co0;
	v->nchain = 1;
	v->co0.in_chain = v->co0.touched = 1;
	v->rcnode = UINT32_MAX;
	p->vms[p->nvm++] = pv;
	return v;
}

/* Any thread. Make the per-fn arrays of v cover fn. */
static int act_grow(struct profile *p, struct vmst *v, uint32_t fn)
{
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
	return 0;
}

/* Any thread. One more active frame of fn at t. */
static inline void activate(struct vmst *v, uint32_t fn, uint64_t t)
{
	if (v->active[fn]++ == 0)
		v->since[fn] = t;
}

/* Any thread. One active frame of fn fewer at t: total time when none left. */
static inline void deactivate(struct profile *p, struct vmst *v, uint32_t fn,
			      uint64_t t)
{
	if (--v->active[fn] == 0)
		p->fns[fn].total += t - v->since[fn];
}

/* Any thread. Close the top frame of s at t. */
static inline void pop(struct profile *p, struct vmst *v, struct costack *s,
		       uint64_t t)
{
	uint32_t fn = s->f[--s->n].fn;
	if (s->in_chain)
		deactivate(p, v, fn, t);
}

/* Any thread. s leaves the chain (it yielded, returned or died): its frames
** stop counting. */
static void stack_leave(struct profile *p, struct vmst *v, struct costack *s,
			uint64_t t)
{
	for (uint32_t i = 0; i < s->n; i++)
		deactivate(p, v, s->f[i].fn, t);
	s->in_chain = 0;
}

/* Any thread. s joins the chain (resumed): its frames count again. */
static void stack_enter(struct vmst *v, struct costack *s, uint64_t t)
{
	for (uint32_t i = 0; i < s->n; i++)
		activate(v, s->f[i].fn, t);
	s->in_chain = s->touched = 1;
}

/* Any thread. Close every frame of v at t (DETACH or end of input). */
static void vm_close(struct profile *p, struct vmst *v, uint64_t t)
{
	while (v->nchain > 0) {
		struct costack *s = v->chain[--v->nchain];
		while (s->n)
			pop(p, v, s, t);
		s->in_chain = 0;
	}
	v->co0.n = 0;
	for (struct costack *s = v->stacks; s; s = s->next)
		s->n = 0;
	v->chain[0] = &v->co0;
	v->nchain = 1;
	v->co0.in_chain = 1;
	if (v->gc_phase >= 0) {
		p->gc.phase[v->gc_phase] += t - v->gc_since;
		v->gc_phase = -1;
	}
	/* No frame is open: the per-fn counters are all 0, give them back
	** (a host may run many VMs one after the other). */
	free(v->active);
	free(v->since);
	v->active = NULL;
	v->since = NULL;
	v->nact = 0;
}

/* Any thread. End the assembler fast functions on top of running stack s:
** they return as soon as what they called returns, or their coroutine
** runs again (doc/format.txt, "Frames"). */
static void pop_noexit(struct profile *p, struct vmst *v, struct costack *s,
		       uint64_t t)
{
	while (s->n && p->fns[s->f[s->n - 1].fn].noexit)
		pop(p, v, s, t);
}

/* Any thread. Switch v to coroutine o at t (see the note in profile.h). */
static int do_switch(struct profile *p, struct vmst *v, struct decode_obj *o,
		     uint64_t t)
{
	struct costack *x = o->user;
	if (!x) {
		x = calloc(1, sizeof *x);
		if (!x)
			return -ENOMEM;
		x->next = v->stacks;
		v->stacks = x;
		o->user = x;
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
		v->co0.f = tmp.f;
		v->co0.n = 0;
		v->co0.cap = tmp.cap;
		v->co0.in_chain = 0;
		v->chain[0] = x;
		v->co0_named = 1;
	}
	if (x->in_chain) {
		/* Back to a resumer: everything above it yielded or ended. */
		while (v->chain[v->nchain - 1] != x)
			stack_leave(p, v, v->chain[--v->nchain], t);
		pop_noexit(p, v, x, t); /* its coroutine.resume returns */
		return 0;
	}
	if (v->nchain == v->capchain) {
		struct costack **c =
		    realloc(v->chain, 2 * v->capchain * sizeof *c);
		if (!c)
			return -ENOMEM;
		v->chain = c;
		v->capchain *= 2;
	}
	v->chain[v->nchain++] = x;
	stack_enter(v, x, t);
	pop_noexit(p, v, x, t); /* its coroutine.yield returns */
	return 0;
}

/* -- Sink callbacks ------------------------------------------------------------ */

/* Any thread. Keep a CLOCK pair. */
static void clock_seen(struct profile *p, const struct decode_clock *c)
{
	if (!p->nclk++)
		p->clk_first = *c;
	p->clk_last = *c;
}

/* Any thread. INTRO block. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct profile *p = ud;
	p->have_intro = 1;
	p->version = in->version;
	p->pid = in->pid;
	p->pointer_size = in->pointer_size;
	p->counter_kind = in->counter_kind;
	p->ts_shift = in->ts_shift;
	p->counter_hz = in->counter_hz;
	p->exe = strdup(in->exe.s);
	p->luajit_version = strdup(in->luajit_version.s);
	p->options = strdup(in->options.s);
	clock_seen(p, &in->clock);
	return p->exe && p->luajit_version && p->options ? 0 : -ENOMEM;
}

/* Any thread. END block. */
static int on_end(void *ud, const struct decode_end *e)
{
	struct profile *p = ud;
	p->have_end = 1;
	p->end = *e;
	clock_seen(p, &e->clock);
	return 0;
}

/* Any thread. A MAPPING record. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct profile *p = ud;
	struct vmst *v;
	int64_t fn;
	switch (o->kind) {
	case FORMAT_REC_VM:
		if (!(v = vm_get(p, o->id)))
			return -ENOMEM;
		v->pv->thread = o->u.vm.thread;
		v->pv->flags = o->u.vm.flags;
		if (!v->has_attach_event)
			v->pv->heap_attach = o->u.vm.heap;
		o->user = v;
		break;
	case FORMAT_REC_COROUTINE:
		if (!(v = vm_get(p, o->vm)))
			return -ENOMEM;
		v->pv->coroutines++;
		p->coroutines++;
		break;
	default:
		if ((fn = fn_for_obj(p, o)) < 0)
			return -ENOMEM;
		o->user_idx = (uint32_t)fn + 1;
		break;
	}
	return 0;
}

/* Any thread. An EVENTS block begins. */
static int on_events(void *ud, const struct decode_events *h)
{
	struct profile *p = ud;
	clock_seen(p, &h->clock);
	return 0;
}

/* Any thread. An EVENTS block ends. */
static int on_events_done(void *ud, const struct decode_events *h)
{
	struct profile *p = ud;
	struct vmst *v = h->vmobj->user;
	v->pv->events += h->count;
	p->events += h->count;
	return 0;
}

/* Any thread. Give time since the VM's last event to the running function. */
static inline void accrue(struct profile *p, struct vmst *v, uint64_t dt)
{
	for (uint32_t i = v->nchain; i-- > 0;) {
		struct costack *s = v->chain[i];
		if (LIKELY(s->n)) {
			const struct frame *f = &s->f[s->n - 1];
			p->fns[f->fn].self += dt;
			if (p->flags & PROFILE_CALLTREE)
				p->nodes[f->node].self += dt;
			return;
		}
	}
}

/* Any thread. An allocation of size at addr by the event's site. */
static int alloc_at(struct profile *p, struct vmst *v,
		    const struct decode_event *ev, uint64_t addr, uint64_t size)
{
	struct decode_obj *o = ev->obj;
	int64_t fn, s;
	switch (ev->lo) {
	case FORMAT_SITE_LUA:
	case FORMAT_SITE_C:
		fn = o ? (int64_t)o->user_idx - 1 : fn_pseudo(p, PS_UNKNOWN);
		break;
	case FORMAT_SITE_TRACE:
		fn = o ? (int64_t)o->user_idx - 1 : fn_pseudo(p, PS_TRACE);
		break;
	case FORMAT_SITE_GC: fn = fn_pseudo(p, PS_GC); break;
	case FORMAT_SITE_JIT: fn = fn_pseudo(p, PS_JIT); break;
	case FORMAT_SITE_INTERNAL: fn = fn_pseudo(p, PS_INTERNAL); break;
	default: fn = fn_pseudo(p, PS_UNKNOWN); break;
	}
	if (fn < 0)
		return -ENOMEM;
	uint64_t line = ev->lo == FORMAT_SITE_C ? 0 : ev->line;
	if ((s = site_get(p, (uint32_t)fn, o ? line : 0)) < 0)
		return -ENOMEM;
	struct profile_site *st = &p->sites[s];
	struct profile_fn *f = &p->fns[fn];
	st->alloc_count++;
	st->alloc_bytes += size;
	f->alloc_count++;
	f->alloc_bytes += size;
	v->pv->alloc_count++;
	v->pv->alloc_bytes += size;
	v->net += (int64_t)size;
	if (v->net > v->peak_net)
		v->peak_net = v->net;
	if (addr && amap_put(&v->amap, addr, (uint32_t)s, size) < 0)
		return -ENOMEM;
	return 0;
}

/* Any thread. A free of size at addr, charged to the site that allocated it. */
static int free_at(struct profile *p, struct vmst *v, uint64_t addr,
		   uint64_t size)
{
	int64_t s = amap_take(&v->amap, addr);
	if (s < 0) {
		int64_t fn = fn_pseudo(p, PS_BEFORE);
		if (fn < 0 || (s = site_get(p, (uint32_t)fn, 0)) < 0)
			return -ENOMEM;
	}
	struct profile_site *st = &p->sites[s];
	struct profile_fn *f = &p->fns[st->fn];
	st->free_count++;
	st->free_bytes += size;
	f->free_count++;
	f->free_bytes += size;
	v->pv->free_count++;
	v->pv->free_bytes += size;
	v->net -= (int64_t)size;
	return 0;
}

/* Any thread. One event (hot path). */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct profile *p = ud;
	struct vmst *v = ev->vmobj->user;
	struct profile_vm *pv = v->pv;
	const uint64_t t = ev->ts;
	struct costack *s;

	if (LIKELY(pv->has_ts)) {
		uint64_t dt = t - pv->last_ts;
		if (dt)
			accrue(p, v, dt);
	} else {
		pv->has_ts = 1;
		pv->first_ts = t;
	}
	pv->last_ts = t;

	switch (ev->op) {
	case FORMAT_OP_ENTER: {
		s = v->chain[v->nchain - 1];
		while (s->n && s->f[s->n - 1].slot >= ev->slot)
			pop(p, v, s, t);
		uint32_t fn = ev->obj->user_idx - 1, node = 0;
		if (p->flags & PROFILE_CALLTREE) {
			uint32_t *cfn, *cnode;
			if (s->n) {
				cfn = &s->f[s->n - 1].cfn;
				cnode = &s->f[s->n - 1].cnode;
			} else {
				cfn = &v->rcfn;
				cnode = &v->rcnode;
			}
			if (*cnode == UINT32_MAX || *cfn != fn) {
				int64_t nd = node_get(
				    p, s->n ? s->f[s->n - 1].node : 0, fn);
				if (nd < 0)
					return -ENOMEM;
				*cfn = fn;
				*cnode = (uint32_t)nd;
			}
			node = *cnode; /* the stack may move below */
			p->nodes[node].calls++;
		}
		if (UNLIKELY(s->n == s->cap)) {
			uint32_t cap = s->cap ? s->cap * 2 : 32;
			struct frame *f = realloc(s->f, cap * sizeof *f);
			if (!f)
				return -ENOMEM;
			s->f = f;
			s->cap = cap;
		}
		if (UNLIKELY(fn >= v->nact) && act_grow(p, v, fn) < 0)
			return -ENOMEM;
		struct frame *f = &s->f[s->n++];
		f->fn = fn;
		f->node = node;
		f->slot = ev->slot;
		f->cfn = 0;
		f->cnode = UINT32_MAX;
		p->fns[fn].calls++;
		activate(v, fn, t);
		break;
	}
	case FORMAT_OP_EXIT:
		s = v->chain[v->nchain - 1];
		while (s->n && s->f[s->n - 1].slot > ev->slot)
			pop(p, v, s, t);
		if (s->n && s->f[s->n - 1].slot == ev->slot) {
			pop(p, v, s, t);
			pop_noexit(p, v, s,
				   t); /* pcall returns with its callee */
		} else {
			p->unmatched_exits++;
		}
		break;
	case FORMAT_OP_ALLOC: return alloc_at(p, v, ev, ev->addr, ev->size);
	case FORMAT_OP_FREE: return free_at(p, v, ev->addr, ev->size);
	case FORMAT_OP_REALLOC:
		if ((ev->old_addr || ev->old_size) &&
		    free_at(p, v, ev->old_addr, ev->old_size) < 0)
			return -ENOMEM;
		return alloc_at(p, v, ev, ev->addr, ev->size);
	case FORMAT_OP_GC:
		if (v->gc_phase >= 0)
			p->gc.phase[v->gc_phase] += t - v->gc_since;
		if (v->gc_phase != (int)ev->lo && ev->lo != FORMAT_GC_PAUSE &&
		    (v->gc_phase == FORMAT_GC_PAUSE ||
		     (v->gc_phase > 0 && (int)ev->lo < v->gc_phase)))
			p->gc.cycles++; /* after pause, or wrapped past it */
		v->gc_phase = (int)ev->lo;
		v->gc_since = t;
		p->gc.events++;
		if (ev->heap > p->gc.peak_heap)
			p->gc.peak_heap = ev->heap;
		if (ev->heap > pv->gc_peak)
			pv->gc_peak = ev->heap;
		break;
	case FORMAT_OP_SWITCH: return do_switch(p, v, ev->obj, t);
	default: /* FORMAT_OP_VM */
		if (ev->lo == FORMAT_VM_ATTACH) {
			if (!v->has_attach_event) {
				pv->heap_attach = ev->heap;
				v->has_attach_event = 1;
			}
		} else {
			pv->heap_detach = ev->heap;
			pv->has_detach = 1;
			vm_close(p, v, t);
		}
		break;
	}
	return 0;
}

/* Any thread. A decoder warning. */
static void on_warn(void *ud, const char *msg)
{
	add_warn(ud, "%s", msg);
}

/* -- Public -------------------------------------------------------------------- */

/* Any thread. New, empty profile (flags: PROFILE_*); 0 or -ENOMEM. */
int profile_new(struct profile **out, unsigned flags)
{
	struct profile *p = calloc(1, sizeof *p);
	struct priv *pr = calloc(1, sizeof *pr);
	*out = NULL;
	if (!p || !pr) {
		free(p);
		free(pr);
		return -ENOMEM;
	}
	p->priv = pr;
	p->flags = flags;
	for (int i = 0; i < PS__MAX; i++)
		pr->pseudo[i] = -1;
	pr->nodecap = 1024;
	p->nodes = malloc(pr->nodecap * sizeof *p->nodes);
	if (!p->nodes) {
		profile_free(p);
		return -ENOMEM;
	}
	p->nodes[0].parent = 0;
	p->nodes[0].fn = UINT32_MAX;
	p->nodes[0].calls = p->nodes[0].self = 0;
	p->nnode = 1;
	p->ns_per_tick = 1.0;
	*out = p;
	return 0;
}

/* Any thread. Free everything. */
void profile_free(struct profile *p)
{
	if (!p)
		return;
	struct priv *pr = p->priv;
	for (size_t i = 0; i < p->nfn; i++) {
		free(p->fns[i].name);
		free(p->fns[i].file);
		free(pr->fnkeys[i]);
	}
	for (size_t i = 0; i < p->nvm; i++) {
		struct vmst *v = p->vms[i]->st;
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
		free(v->amap.e);
		free(v);
		free(p->vms[i]);
	}
	for (size_t i = 0; i < p->nwarn; i++)
		free(p->warnings[i]);
	if (pr) {
		imap_free(&pr->fnmap);
		imap_free(&pr->sitemap);
		imap_free(&pr->nodemap);
		imap_free(&pr->vmmap);
		free(pr->fnnext);
		free(pr->fnkeys);
		free(pr->fnkeylen);
		free(pr);
	}
	free(p->warnings);
	free(p->vms);
	free(p->fns);
	free(p->sites);
	free(p->nodes);
	free(p->exe);
	free(p->luajit_version);
	free(p->options);
	free(p);
}

/* Any thread. Fill sink so that a decoder feeds p. */
void profile_sink(struct profile *p, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = p;
	sink->intro = on_intro;
	sink->end = on_end;
	sink->record = on_record;
	sink->events = on_events;
	sink->event = on_event;
	sink->events_done = on_events_done;
	sink->warn = on_warn;
}

/* Any thread. End of input: close what is open, choose the time base. */
int profile_finish(struct profile *p)
{
	struct priv *pr = p->priv;
	uint64_t first = UINT64_MAX, last = 0;
	for (size_t i = 0; i < p->nvm; i++) {
		struct profile_vm *pv = p->vms[i];
		struct vmst *v = pv->st;
		if (pv->has_ts) {
			vm_close(p, v, pv->last_ts);
			if (pv->first_ts < first)
				first = pv->first_ts;
			if (pv->last_ts > last)
				last = pv->last_ts;
		}
		pv->live = (int64_t)pv->heap_attach + v->net;
		pv->peak = (int64_t)pv->heap_attach + v->peak_net;
	}
	double per_counter = 1.0;
	if (p->nclk >= 2 && p->clk_last.counter > p->clk_first.counter &&
	    p->clk_last.mono_ns > p->clk_first.mono_ns) {
		per_counter =
		    (double)(p->clk_last.mono_ns - p->clk_first.mono_ns) /
		    (double)(p->clk_last.counter - p->clk_first.counter);
		p->timebase = PROFILE_TB_CLOCKS;
	} else if (p->counter_hz) {
		per_counter = 1e9 / (double)p->counter_hz;
		p->timebase = PROFILE_TB_HZ;
	} else if (p->counter_kind == FORMAT_COUNTER_MONO_NS) {
		p->timebase = PROFILE_TB_NS;
	} else {
		p->timebase = PROFILE_TB_ASSUMED;
		add_warn(p, "no CLOCK pairs and no counter_hz to convert time: "
			    "assuming 1 tick = 1 ns");
	}
	p->ns_per_tick = per_counter * (double)(1ull << p->ts_shift);
	if (p->timebase == PROFILE_TB_CLOCKS)
		p->duration_ns = p->clk_last.mono_ns - p->clk_first.mono_ns;
	else if (last >= first && first != UINT64_MAX)
		p->duration_ns = profile_ns(p, last - first);
	if (pr->nwarn_dropped)
		add_warn(p, "%zu more warnings not shown", pr->nwarn_dropped);
	return 0;
}

/* Any thread. ts units to ns. */
uint64_t profile_ns(const struct profile *p, uint64_t ticks)
{
	double ns = (double)ticks * p->ns_per_tick + 0.5;
	return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ns;
}

/* Any thread. qsort_r comparison: self desc, alloc bytes desc, name. */
static int cmp_fn(const void *a, const void *b, void *ud)
{
	const struct profile *p = ud;
	const struct profile_fn *x = &p->fns[*(const uint32_t *)a];
	const struct profile_fn *y = &p->fns[*(const uint32_t *)b];
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->alloc_bytes != y->alloc_bytes)
		return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Any thread. Function indices sorted for reports; caller frees. */
uint32_t *profile_sorted_fns(const struct profile *p)
{
	uint32_t *ix = malloc((p->nfn ? p->nfn : 1) * sizeof *ix);
	if (!ix)
		return NULL;
	for (size_t i = 0; i < p->nfn; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, p->nfn, sizeof *ix, cmp_fn, (void *)p);
	return ix;
}

/* Any thread. qsort_r comparison: alloc bytes desc, then count, then fn. */
static int cmp_site(const void *a, const void *b, void *ud)
{
	const struct profile *p = ud;
	const struct profile_site *x = &p->sites[*(const uint32_t *)a];
	const struct profile_site *y = &p->sites[*(const uint32_t *)b];
	if (x->alloc_bytes != y->alloc_bytes)
		return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
	if (x->alloc_count != y->alloc_count)
		return x->alloc_count > y->alloc_count ? -1 : 1;
	int c = strcmp(p->fns[x->fn].name, p->fns[y->fn].name);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Any thread. Site indices sorted by alloc bytes; caller frees. */
uint32_t *profile_sorted_sites(const struct profile *p)
{
	uint32_t *ix = malloc((p->nsite ? p->nsite : 1) * sizeof *ix);
	if (!ix)
		return NULL;
	for (size_t i = 0; i < p->nsite; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, p->nsite, sizeof *ix, cmp_site, (void *)p);
	return ix;
}

/* Any thread. Name of a function kind. */
const char *profile_kind_name(unsigned kind)
{
	switch (kind) {
	case PROFILE_FN_LUA: return "lua";
	case PROFILE_FN_C: return "c";
	case PROFILE_FN_FAST: return "fast";
	}
	return "internal";
}

/* -- One-call driver ------------------------------------------------------------ */

/* Any thread. Open, decode and finish a profile of path. */
int profile_load(const char *path, unsigned flags, struct profile **out,
		 char *err, size_t errlen)
{
	struct reader *r;
	struct decode *d;
	struct decode_sink sink;
	struct profile *p;
	int rc;
	*out = NULL;
	if ((rc = reader_open(&r, path, 0, err, errlen)) < 0)
		return rc;
	if ((rc = profile_new(&p, flags)) < 0) {
		reader_close(r);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	profile_sink(p, &sink);
	if ((rc = decode_new(&d, &sink)) < 0) {
		reader_close(r);
		profile_free(p);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	rc = decode_run(r, d, err, errlen);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	decode_free(d);
	reader_close(r);
	profile_finish(p);
	*out = p;
	return rc;
}
