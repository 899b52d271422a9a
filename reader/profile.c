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

/* Sample-tree hash slot: (parent, frame) -> node; node 0 marks it empty. */
struct sent {
	uint64_t frame;
	uint32_t parent, node;
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
	/* Samples and traces. */
	struct imap addrmap; /* CFUNC address -> fn */
	struct sent *smap;   /* the sample tree's hash */
	size_t smapcap, snodecap;
	uint64_t snodes_capped; /* frames past PROFILE_MAX_NODES */
	uint64_t *rawf;		/* one sample's frames */
	uint64_t *lastf;	/* the previous sample's frames */
	uint32_t *lastn;	/* and their nodes */
	uint32_t nlast;
	struct imap linemap; /* (fn + 1) << 40 | line -> line index */
	size_t linecap, tracecap, hostcap;
	struct imap abmap; /* hash of reason and message -> first abort */
	uint32_t *abnext;  /* per abort: next with the same hash */
	size_t abcap;
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

/* -- Samples and traces -------------------------------------------------------- */

/* Any thread. Keep a CLOCK pair. */
static void clock_seen(struct profile *p, const struct decode_clock *c)
{
	if (!p->nclk++)
		p->clk_first = *c;
	p->clk_last = *c;
}

/* Any thread. Make room for need elements of size elem in *arr (capacity
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

/* Any thread. A TRACE record: a new entry in traces. */
static int trace_add(struct profile *p, struct decode_obj *o)
{
	struct priv *pr = p->priv;
	if (grow(&p->traces, &pr->tracecap, p->ntrace + 1, sizeof *p->traces))
		return -ENOMEM;
	struct profile_trace *t = &p->traces[p->ntrace];
	memset(t, 0, sizeof *t);
	t->id = o->id;
	t->vm = o->vm;
	t->traceno = o->u.trace.traceno;
	t->fn = o->u.trace.proto->user_idx - 1;
	t->line = o->u.trace.line;
	t->root = o->u.trace.root;
	o->user_idx = (uint32_t)++p->ntrace;
	return 0;
}

/* Any thread. A HOSTSYM record: a new entry in hosts (its function is
** chosen by profile_finish, once every CFUNC is known). */
static int host_add(struct profile *p, struct decode_obj *o)
{
	struct priv *pr = p->priv;
	if (grow(&p->hosts, &pr->hostcap, p->nhost + 1, sizeof *p->hosts))
		return -ENOMEM;
	struct profile_host *h = &p->hosts[p->nhost];
	h->address = o->u.host.address;
	h->flags = o->u.host.flags;
	h->fn = UINT32_MAX;
	h->name = strdup(o->u.host.name.s);
	h->object = strdup(o->u.host.object.s);
	if (!h->name || !h->object) {
		free(h->name);
		free(h->object);
		return -ENOMEM;
	}
	o->user_idx = (uint32_t)++p->nhost;
	return 0;
}

/* Any thread. Count one TRACE_ABORT with this reason and message. */
static int abort_count(struct profile *p, uint64_t reason,
		       const struct decode_str *msg)
{
	struct priv *pr = p->priv;
	uint64_t h = hash_bytes(msg->s, msg->len) ^ mix(reason + 1);
	h |= 1;
	int64_t i = imap_get(&pr->abmap, h);
	for (int64_t j = i; j >= 0;
	     j = pr->abnext[j] == UINT32_MAX ? -1 : (int64_t)pr->abnext[j]) {
		struct profile_abort *a = &p->aborts[j];
		if (a->reason == reason && strlen(a->message) == msg->len &&
		    memcmp(a->message, msg->s, msg->len) == 0) {
			a->count++;
			return 0;
		}
	}
	size_t cap = pr->abcap;
	if (grow(&p->aborts, &pr->abcap, p->nabort + 1, sizeof *p->aborts) ||
	    grow(&pr->abnext, &cap, p->nabort + 1, sizeof *pr->abnext))
		return -ENOMEM;
	struct profile_abort *a = &p->aborts[p->nabort];
	/* A message with a NUL in it is kept up to the NUL. */
	if (!(a->message = strndup(msg->s, msg->len)))
		return -ENOMEM;
	a->reason = reason;
	a->count = 1;
	if (i >= 0) {
		pr->abnext[p->nabort] = pr->abnext[i];
		pr->abnext[i] = (uint32_t)p->nabort;
	} else {
		pr->abnext[p->nabort] = UINT32_MAX;
		if (imap_put(&pr->abmap, h, (uint32_t)p->nabort) < 0) {
			free(a->message);
			return -ENOMEM;
		}
	}
	p->nabort++;
	return 0;
}

/* Any thread. Sample-tree slot hash of (parent, frame). */
static inline size_t snode_hash(uint32_t parent, uint64_t frame)
{
	return (size_t)mix(frame ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull));
}

/* Any thread. The child of parent for frame, created when new; -1 when out
** of memory. */
static int64_t snode_get(struct profile *p, uint32_t parent, uint64_t frame)
{
	struct priv *pr = p->priv;
	size_t mask = pr->smapcap - 1, i;
	if (LIKELY(pr->smapcap)) {
		for (i = snode_hash(parent, frame) & mask; pr->smap[i].node;
		     i = (i + 1) & mask)
			if (pr->smap[i].frame == frame &&
			    pr->smap[i].parent == parent)
				return pr->smap[i].node;
	}
	if (p->nsnode >= PROFILE_MAX_NODES) {
		if (!pr->snodes_capped++)
			add_warn(p,
				 "sample tree cut at %u nodes: deeper frames "
				 "are charged to their caller's stack",
				 PROFILE_MAX_NODES);
		return parent;
	}
	if (grow(&p->snodes, &pr->snodecap, p->nsnode + 1, sizeof *p->snodes))
		return -1;
	if ((p->nsnode + 1) * 2 > pr->smapcap) {
		size_t cap = pr->smapcap ? pr->smapcap * 2 : 1024;
		struct sent *e = calloc(cap, sizeof *e);
		if (!e)
			return -1;
		for (size_t j = 0; j < pr->smapcap; j++) {
			if (!pr->smap[j].node)
				continue;
			size_t k =
			    snode_hash(pr->smap[j].parent, pr->smap[j].frame) &
			    (cap - 1);
			while (e[k].node)
				k = (k + 1) & (cap - 1);
			e[k] = pr->smap[j];
		}
		free(pr->smap);
		pr->smap = e;
		pr->smapcap = cap;
		mask = cap - 1;
	}
	for (i = snode_hash(parent, frame) & mask; pr->smap[i].node;
	     i = (i + 1) & mask)
		;
	uint32_t n = (uint32_t)p->nsnode++;
	pr->smap[i].frame = frame;
	pr->smap[i].parent = parent;
	pr->smap[i].node = n;
	p->snodes[n].parent = parent;
	p->snodes[n].frame = frame;
	p->snodes[n].samples = 0;
	return n;
}

/* Frame of the sample tree. */
#define SF(tag, v) ((tag) << PROFILE_SF_SHIFT | (uint64_t)(v))

/* Any thread. One sample: counts, and its stack into the sample tree. */
static int on_sample(void *ud, const struct decode_sample *sm)
{
	struct profile *p = ud;
	struct priv *pr = p->priv;
	struct vmst *v = sm->vmobj->user;
	uint64_t *f = pr->rawf;
	uint32_t n = 0, k = 0, i;
	p->samples++;
	p->state[sm->state]++;
	v->pv->samples++;
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
		f[n++] = SF(PROFILE_SF_HOST, sm->host[i]->user_idx - 1);
	for (i = sm->nlua; i-- > 0;) {
		uint64_t line = sm->lua[i].line;
		f[n++] = SF(PROFILE_SF_LUA,
			    (uint64_t)(sm->lua[i].func->user_idx - 1) << 32 |
				(line > UINT32_MAX ? UINT32_MAX : line));
	}
	for (i = vm; i-- > 0;)
		f[n++] = SF(PROFILE_SF_HOST, sm->host[i]->user_idx - 1);
	if (sm->trace) {
		uint32_t t = sm->trace->user_idx - 1;
		p->traces[t].samples++;
		f[n++] = SF(PROFILE_SF_TRACE, t);
	}
	f[n++] = SF(PROFILE_SF_STATE, sm->state);
	/* Samples in a loop share most of their stack with the one before:
	** start below the common part. */
	while (k < n && k < pr->nlast && pr->lastf[k] == f[k])
		k++;
	int64_t node = k ? pr->lastn[k - 1] : 0;
	for (i = k; i < n; i++) {
		if ((node = snode_get(p, (uint32_t)node, f[i])) < 0) {
			pr->nlast = 0;
			return -ENOMEM;
		}
		pr->lastf[i] = f[i];
		pr->lastn[i] = (uint32_t)node;
	}
	pr->nlast = n;
	p->snodes[node].samples++;
	return 0;
}

/* Any thread. A SAMPLES block begins. */
static int on_samples(void *ud, const struct decode_samples *h)
{
	struct profile *p = ud;
	struct priv *pr = p->priv;
	clock_seen(p, &h->clock);
	if (!pr->rawf) {
		pr->rawf = malloc(PROFILE_STACK_MAX * sizeof *pr->rawf);
		pr->lastf = malloc(PROFILE_STACK_MAX * sizeof *pr->lastf);
		pr->lastn = malloc(PROFILE_STACK_MAX * sizeof *pr->lastn);
		if (!pr->rawf || !pr->lastf || !pr->lastn)
			return -ENOMEM;
	}
	if (!p->nsnode) {
		/* Node 0, the root. */
		if (grow(&p->snodes, &pr->snodecap, 1, sizeof *p->snodes))
			return -ENOMEM;
		memset(&p->snodes[0], 0, sizeof p->snodes[0]);
		p->nsnode = 1;
	}
	return 0;
}

/* Any thread. A SAMPLES block ends. */
static int on_samples_done(void *ud, const struct decode_samples *h)
{
	struct profile *p = ud;
	p->samples_dropped += h->dropped;
	p->signals += h->signals;
	return 0;
}

/* Any thread. A trace event. */
static int trace_event(struct profile *p, const struct decode_event *ev)
{
	switch (ev->lo) {
	case FORMAT_VM_TRACE_START: p->trace_starts++; break;
	case FORMAT_VM_TRACE_STOP:
		p->trace_stops++;
		p->traces[ev->obj->user_idx - 1].stopped = 1;
		break;
	case FORMAT_VM_TRACE_ABORT:
		p->trace_aborts++;
		return abort_count(p, ev->reason, &ev->msg);
	default: p->trace_flushes++; break;
	}
	return 0;
}

/* Any thread. Give each HOSTSYM its function: the C function at its
** address, else a host function named after it. */
static int hosts_resolve(struct profile *p)
{
	struct priv *pr = p->priv;
	for (size_t i = 0; i < p->nhost; i++) {
		struct profile_host *h = &p->hosts[i];
		int64_t fn =
		    h->address ? imap_get(&pr->addrmap, h->address) : -1;
		if (fn < 0) {
			const char *obj = h->object, *base = strrchr(obj, '/');
			size_t nl = strlen(h->name), ol = strlen(obj);
			size_t cap = nl + ol + 64;
			char *key = malloc(cap), *name = malloc(cap);
			if (!key || !name) {
				free(key);
				free(name);
				return -ENOMEM;
			}
			if (nl)
				snprintf(name, cap, "%s", h->name);
			else
				snprintf(name, cap, "[%s]",
					 base ? base + 1 : obj);
			size_t kl =
			    key_join(key, cap, 'H', h->name, nl, obj, ol, 0);
			fn = fn_get(p, key, kl, name, obj, 0, PROFILE_FN_HOST);
			free(key);
			free(name);
			if (fn < 0)
				return -ENOMEM;
		}
		h->fn = (uint32_t)fn;
	}
	return 0;
}

/* Any thread. Count the sample tree per function and line (see profile.h). */
static int samples_count(struct profile *p)
{
	struct priv *pr = p->priv;
	struct profile_frame *fr = malloc(PROFILE_STACK_MAX * sizeof *fr);
	uint32_t *stamp = calloc(p->nfn ? p->nfn : 1, sizeof *stamp);
	int rc = -ENOMEM;
	if (!fr || !stamp)
		goto out;
	for (uint32_t n = 1; n < p->nsnode; n++) {
		uint64_t c = p->snodes[n].samples;
		if (!c)
			continue;
		size_t nf = profile_stack(p, n, PROFILE_VIEW_MERGED,
					  PROFILE_ST_NOTRACE, fr);
		for (size_t i = 0; i < nf; i++)
			if (fr[i].kind == PROFILE_FR_FN &&
			    stamp[fr[i].fn] != n) {
				stamp[fr[i].fn] = n;
				p->fns[fr[i].fn].samples_total += c;
			}
		/* Self: the innermost Lua frame, else the leaf. Line: the
		** innermost PROTO frame. */
		int64_t self = -1, lfn = -1;
		uint64_t line = 0;
		for (uint32_t m = n; m; m = p->snodes[m].parent) {
			uint64_t f = p->snodes[m].frame;
			if (f >> PROFILE_SF_SHIFT != PROFILE_SF_LUA)
				continue;
			uint32_t fn = (uint32_t)(f >> 32) &
				      ((1u << (PROFILE_SF_SHIFT - 32)) - 1);
			if (self < 0)
				self = fn;
			if (p->fns[fn].kind == PROFILE_FN_LUA) {
				lfn = fn;
				line = (uint32_t)f;
				break;
			}
		}
		if (self < 0 && nf && fr[nf - 1].kind == PROFILE_FR_FN)
			self = fr[nf - 1].fn;
		if (self >= 0)
			p->fns[self].samples += c;
		if (lfn >= 0) {
			uint64_t key =
			    ((uint64_t)lfn + 1) << 40 |
			    (line > LINE_MAX_KEY ? LINE_MAX_KEY : line);
			int64_t li = imap_get(&pr->linemap, key);
			if (li < 0) {
				if (grow(&p->lines, &pr->linecap, p->nline + 1,
					 sizeof *p->lines) ||
				    imap_put(&pr->linemap, key,
					     (uint32_t)p->nline) < 0)
					goto out;
				li = (int64_t)p->nline++;
				p->lines[li].fn = (uint32_t)lfn;
				p->lines[li].line = line;
				p->lines[li].samples = 0;
			}
			p->lines[li].samples += c;
		}
	}
	rc = 0;
out:
	free(fr);
	free(stamp);
	return rc;
}

/* -- Sink callbacks ------------------------------------------------------------ */

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
	case FORMAT_REC_TRACE: return trace_add(p, o);
	case FORMAT_REC_HOSTSYM: return host_add(p, o);
	default:
		if ((fn = fn_for_obj(p, o)) < 0)
			return -ENOMEM;
		o->user_idx = (uint32_t)fn + 1;
		/* Host frames at this address are this function. */
		if (o->kind == FORMAT_REC_CFUNC && o->u.cfunc.address &&
		    imap_get(&((struct priv *)p->priv)->addrmap,
			     o->u.cfunc.address) < 0 &&
		    imap_put(&((struct priv *)p->priv)->addrmap,
			     o->u.cfunc.address, (uint32_t)fn) < 0)
			return -ENOMEM;
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
		} else if (ev->lo == FORMAT_VM_DETACH) {
			pv->heap_detach = ev->heap;
			pv->has_detach = 1;
			vm_close(p, v, t);
		} else {
			return trace_event(p, ev);
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
	for (size_t i = 0; i < p->nhost; i++) {
		free(p->hosts[i].name);
		free(p->hosts[i].object);
	}
	for (size_t i = 0; i < p->nabort; i++)
		free(p->aborts[i].message);
	free(p->hosts);
	free(p->aborts);
	free(p->traces);
	free(p->snodes);
	free(p->lines);
	if (pr) {
		imap_free(&pr->addrmap);
		imap_free(&pr->linemap);
		imap_free(&pr->abmap);
		free(pr->abnext);
		free(pr->smap);
		free(pr->rawf);
		free(pr->lastf);
		free(pr->lastn);
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
	sink->samples = on_samples;
	sink->sample = on_sample;
	sink->samples_done = on_samples_done;
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
	/* Samples dropped after the last SAMPLES block reach only END. */
	if (p->have_end && p->end.samples_dropped > p->samples_dropped) {
		p->signals += p->end.samples_dropped - p->samples_dropped;
		p->samples_dropped = p->end.samples_dropped;
	}
	int rc = 0;
	if (hosts_resolve(p) < 0 || samples_count(p) < 0) {
		add_warn(p, "out of memory counting the samples");
		rc = -ENOMEM;
	}
	if (pr->nwarn_dropped)
		add_warn(p, "%zu more warnings not shown", pr->nwarn_dropped);
	return rc;
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
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
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
	case PROFILE_FN_HOST: return "host";
	}
	return "internal";
}

/* Any thread. qsort_r comparison: samples desc, total desc, name. */
static int cmp_fn_samples(const void *a, const void *b, void *ud)
{
	const struct profile *p = ud;
	const struct profile_fn *x = &p->fns[*(const uint32_t *)a];
	const struct profile_fn *y = &p->fns[*(const uint32_t *)b];
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->samples_total != y->samples_total)
		return x->samples_total > y->samples_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Any thread. Functions with samples, sorted by samples; caller frees. */
uint32_t *profile_sorted_fns_samples(const struct profile *p, size_t *n)
{
	uint32_t *ix = malloc((p->nfn ? p->nfn : 1) * sizeof *ix);
	*n = 0;
	if (!ix)
		return NULL;
	for (size_t i = 0; i < p->nfn; i++)
		if (p->fns[i].samples_total || p->fns[i].samples)
			ix[(*n)++] = (uint32_t)i;
	qsort_r(ix, *n, sizeof *ix, cmp_fn_samples, (void *)p);
	return ix;
}

/* Any thread. qsort_r comparison: samples desc, then function, then line. */
static int cmp_line(const void *a, const void *b, void *ud)
{
	const struct profile *p = ud;
	const struct profile_line *x = &p->lines[*(const uint32_t *)a];
	const struct profile_line *y = &p->lines[*(const uint32_t *)b];
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	int c = strcmp(p->fns[x->fn].name, p->fns[y->fn].name);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Any thread. qsort_r comparison: samples desc, then definition order. */
static int cmp_trace(const void *a, const void *b, void *ud)
{
	const struct profile *p = ud;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (p->traces[i].samples != p->traces[j].samples)
		return p->traces[i].samples > p->traces[j].samples ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Any thread. qsort_r comparison: count desc, reason, message. */
static int cmp_abort(const void *a, const void *b, void *ud)
{
	const struct profile *p = ud;
	const struct profile_abort *x = &p->aborts[*(const uint32_t *)a];
	const struct profile_abort *y = &p->aborts[*(const uint32_t *)b];
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return strcmp(x->message, y->message);
}

/* Any thread. Indices 0..n-1 sorted with cmp; caller frees. */
static uint32_t *sorted(const struct profile *p, size_t n,
			int (*cmp)(const void *, const void *, void *))
{
	uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, n, sizeof *ix, cmp, (void *)p);
	return ix;
}

/* Any thread. Line indices sorted by samples; caller frees. */
uint32_t *profile_sorted_lines(const struct profile *p)
{
	return sorted(p, p->nline, cmp_line);
}

/* Any thread. Trace indices sorted by samples; caller frees. */
uint32_t *profile_sorted_traces(const struct profile *p)
{
	return sorted(p, p->ntrace, cmp_trace);
}

/* Any thread. Abort indices sorted by count; caller frees. */
uint32_t *profile_sorted_aborts(const struct profile *p)
{
	return sorted(p, p->nabort, cmp_abort);
}

/* -- Sample stacks -------------------------------------------------------------- */

/* A view under construction. */
struct view {
	const struct profile *p;
	struct profile_frame *out;
	size_t n;
	unsigned flags;
	int last_host; /* the last frame came from a host frame */
};

/* Any thread. Append host frame h. A C function seen as a Lua frame and,
** next to it, as a host frame is one frame. */
static void view_host(struct view *w, uint32_t h, int dedup)
{
	uint32_t fn = w->p->hosts[h].fn;
	if (dedup && w->n && !w->last_host &&
	    w->out[w->n - 1].kind == PROFILE_FR_FN && w->out[w->n - 1].fn == fn)
		return;
	struct profile_frame *f = &w->out[w->n++];
	f->kind = PROFILE_FR_FN;
	f->fn = fn;
	f->line = 0;
	f->idx = 0;
	w->last_host = 1;
}

/* Any thread. Append Lua frame f (fn << 32 | line). */
static void view_lua(struct view *w, uint64_t v, int dedup)
{
	uint32_t fn =
	    (uint32_t)(v >> 32) & ((1u << (PROFILE_SF_SHIFT - 32)) - 1);
	const struct profile_fn *pf = &w->p->fns[fn];
	int line = (w->flags & PROFILE_ST_LINES) && pf->kind == PROFILE_FN_LUA;
	if (dedup && !line && w->n && w->last_host &&
	    w->out[w->n - 1].kind == PROFILE_FR_FN &&
	    w->out[w->n - 1].fn == fn) {
		w->last_host = 0; /* the same frame: keep one */
		return;
	}
	struct profile_frame *f = &w->out[w->n++];
	f->kind = line ? PROFILE_FR_LINE : PROFILE_FR_FN;
	f->fn = fn;
	f->line = line ? (uint32_t)v : 0;
	f->idx = 0;
	w->last_host = 0;
}

/* Any thread. The frames of node in view (see profile.h). */
size_t profile_stack(const struct profile *p, uint32_t node, unsigned view,
		     unsigned flags, struct profile_frame *out)
{
	/* The node's frames, outermost first (on the stack when short), then
	** split: host frames in hv, Lua frames in lv, both outermost first. */
	uint64_t buf[3 * 64], *raw = buf;
	size_t depth = 0, i, nh = 0, nl = 0;
	for (uint32_t m = node; m; m = p->snodes[m].parent)
		depth++;
	if (depth > 64 && !(raw = malloc(3 * depth * sizeof *raw)))
		depth = 0; /* out of memory: an empty stack */
	uint64_t *hv = raw + depth, *lv = hv + depth;
	i = depth;
	for (uint32_t m = node; m && i; m = p->snodes[m].parent)
		raw[--i] = p->snodes[m].frame;
	unsigned state = 0;
	int64_t trace = -1, iv0 = -1, iv1 = -1;
	for (i = 0; i < depth; i++) {
		uint64_t tag = raw[i] >> PROFILE_SF_SHIFT;
		uint64_t v = raw[i] & ((1ull << PROFILE_SF_SHIFT) - 1);
		switch (tag) {
		case PROFILE_SF_STATE: state = (unsigned)v; break;
		case PROFILE_SF_HOST:
			if (p->hosts[v].flags & FORMAT_HOST_VM) {
				if (iv0 < 0)
					iv0 = (int64_t)nh;
				iv1 = (int64_t)nh;
			}
			hv[nh++] = v;
			break;
		case PROFILE_SF_LUA: lv[nl++] = v; break;
		default: trace = (int64_t)v; break;
		}
	}
	struct view w = {p, out, 0, flags, 0};
	int want_trace = trace >= 0 && !(flags & PROFILE_ST_NOTRACE);
	switch (view) {
	case PROFILE_VIEW_HOST:
		for (i = 0; i < nh; i++)
			view_host(&w, (uint32_t)hv[i], 0);
		want_trace = 0;
		break;
	case PROFILE_VIEW_LUA:
		for (i = 0; i < nl; i++)
			view_lua(&w, lv[i], 0);
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
				out[w.n].kind = PROFILE_FR_TRACE;
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
			out[w.n].kind = PROFILE_FR_TRACE;
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
		out[w.n].kind = PROFILE_FR_TRACE;
		out[w.n].fn = 0;
		out[w.n].line = 0;
		out[w.n++].idx = (uint32_t)trace;
	}
	if (!w.n) {
		out[0].kind = PROFILE_FR_STATE;
		out[0].fn = 0;
		out[0].line = 0;
		out[0].idx = state;
		w.n = 1;
	}
	if (raw != buf)
		free(raw);
	return w.n;
}

/* Any thread. A frame's name. */
void profile_frame_name(const struct profile *p, const struct profile_frame *f,
			char *buf, size_t len)
{
	switch (f->kind) {
	case PROFILE_FR_FN: snprintf(buf, len, "%s", p->fns[f->fn].name); break;
	case PROFILE_FR_LINE:
		snprintf(buf, len, "%s:%llu", p->fns[f->fn].file,
			 (unsigned long long)f->line);
		break;
	case PROFILE_FR_TRACE:
		snprintf(buf, len, "trace %llu",
			 (unsigned long long)p->traces[f->idx].traceno);
		break;
	default: snprintf(buf, len, "(%s)", decode_state_name(f->idx)); break;
	}
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
	if (profile_finish(p) < 0 && rc == 0) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	*out = p;
	return rc;
}
