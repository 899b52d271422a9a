/*
** ljlog namewalk: names of functions found by looking through a stopped
** VM (see namewalk.h). VM thread only; reads, never writes, the VM.
*/
#include "maps/namewalk.h"
#include "maps/protoname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"

/* Longest path kept ("vim.api.nvim_buf_set_lines"); longer ones are not
** names a reader wants. */
#define PATH_MAX_LEN 160

struct walk {
	const struct namewalk_fns *fns;
	struct hmap seen; /* tables and closures looked into */
	unsigned tables;  /* tables looked into */
};

/* VM thread only. 1 the first time o is met (and room is left). */
static int first_time(struct walk *w, const void *o)
{
	int added = 0;
	if (w->tables >= NAMEWALK_MAX_TABLES ||
	    !hmap_ref(&w->seen, (uint64_t)(uintptr_t)o, &added))
		return 0;
	return added;
}

/* -- The prototypes' bytecode -------------------------------------------------- */

/* VM thread only. protoname_fn: a child pt's parent names it. */
static int child_named(void *ud, GCproto *child, const char *name)
{
	const struct namewalk_fns *fns = ud;
	if (name[0] && fns->wanted(fns->ud, (uintptr_t)child))
		fns->found(fns->ud, (uintptr_t)child, name, 1);
	return 0;
}

/* VM thread only. Every prototype on g's object list that makes closures
** names its children: dead ones not swept yet too (their memory, and
** their children's, is whole until the sweep reaches them, children
** after their parent: a parent is made after its children). */
static void walk_protos(global_State *g, const struct namewalk_fns *fns)
{
	for (GCobj *o = gcref(g->gc.root); o; o = gcref(o->gch.nextgc)) {
		if (o->gch.gct != (uint8_t)~LJ_TPROTO)
			continue;
		GCproto *pt = gco2pt(o);
		if (pt->flags & PROTO_CHILD)
			protoname_children(pt, child_named, (void *)fns);
	}
}

/* -- Tables and upvalues --------------------------------------------------------- */

/* A table to look into: where it is held, breadth first (the shortest
** path wins: "worker.stats", not "package.loaded.worker.stats"). */
struct qent {
	GCtab *t;
	char *path;
	int depth;
};

struct queue {
	struct qent *q;
	size_t head, n, cap;
	int full; /* out of memory: stop adding */
};

/* VM thread only. path + sep + key into buf; 0, or -1 when too long. */
static int join(char *buf, const char *path, char sep, const char *key)
{
	int n = path[0] ? snprintf(buf, PATH_MAX_LEN, "%s%c%s", path, sep, key)
			: snprintf(buf, PATH_MAX_LEN, "%s", key);
	return n > 0 && n < PATH_MAX_LEN ? 0 : -1;
}

/* VM thread only. Queue table t, held at path, unless met before. */
static void enqueue(struct walk *w, struct queue *q, GCtab *t, const char *path,
		    int depth)
{
	if (q->full || depth > NAMEWALK_MAX_DEPTH || !first_time(w, t))
		return;
	w->tables++;
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct qent *nq = realloc(q->q, cap * sizeof *nq);
		if (!nq) {
			q->full = 1;
			return;
		}
		q->q = nq;
		q->cap = cap;
	}
	char *s = strdup(path);
	if (!s) {
		q->full = 1;
		return;
	}
	q->q[q->n++] = (struct qent){t, s, depth};
}

static void walk_value(struct walk *w, struct queue *q, cTValue *v,
		       const char *path, int depth);

/* VM thread only. The upvalues of Lua function fn, by their names: a
** local function a global one calls ("fib"), a module table it keeps
** ("M", then "M.step"). */
static void walk_upvalues(struct walk *w, struct queue *q, GCfunc *fn,
			  int depth)
{
	GCproto *pt = funcproto(fn);
	for (uint32_t i = 0; i < fn->l.nupvalues && i < pt->sizeuv; i++) {
		GCupval *uv = &gcref(fn->l.uvptr[i])->uv;
		const char *name = protoname_upvalue(pt, i);
		if (uv && name && name[0])
			walk_value(w, q, uvval(uv), name, depth + 1);
	}
}

/* VM thread only. A value held at path: a function is named (and its
** upvalues looked at), a table queued. */
static void walk_value(struct walk *w, struct queue *q, cTValue *v,
		       const char *path, int depth)
{
	const struct namewalk_fns *fns = w->fns;
	if (tvisfunc(v)) {
		GCfunc *fn = funcV(v);
		if (isluafunc(fn)) {
			uintptr_t pt = (uintptr_t)funcproto(fn);
			if (fns->lua && fns->wanted(fns->ud, pt))
				fns->found(fns->ud, pt, path, 0);
			if (depth < NAMEWALK_MAX_DEPTH && first_time(w, fn))
				walk_upvalues(w, q, fn, depth);
		} else if (fn->c.ffid == FF_C &&
			   fns->wanted(fns->ud, (uintptr_t)fn->c.f)) {
			fns->found(fns->ud, (uintptr_t)fn->c.f, path, 0);
		}
	} else if (tvistab(v)) {
		enqueue(w, q, tabV(v), path, depth);
	}
}

/* VM thread only. Table t, held at path: its string keys' values, and its
** array part's functions ("package.loaders[2]"). */
static void walk_table(struct walk *w, struct queue *q, GCtab *t,
		       const char *path, int depth)
{
	char buf[PATH_MAX_LEN];
	cTValue *arr = tvref(t->array);
	for (uint32_t i = 1; i < t->asize; i++) {
		if (!tvisfunc(&arr[i]))
			continue;
		int n = snprintf(buf, sizeof buf, "%s[%u]", path, i);
		if (n > 0 && n < (int)sizeof buf)
			walk_value(w, q, &arr[i], buf, depth + 1);
	}
	Node *node = noderef(t->node);
	for (uint32_t i = 0; i <= t->hmask; i++) {
		Node *n = &node[i];
		if (tvisnil(&n->val) || !tvisstr(&n->key))
			continue;
		cTValue *v = &n->val;
		char sep = '.';
		if (tvisfunc(v) && isluafunc(funcV(v)) &&
		    protoname_is_method(funcproto(funcV(v))))
			sep = ':';
		if (join(buf, path, sep, strdata(strV(&n->key))) == 0)
			walk_value(w, q, v, buf, depth + 1);
	}
}

/* VM thread only. t's value under string key k, or NULL. */
static cTValue *field(GCtab *t, const char *k)
{
	Node *node = noderef(t->node);
	for (uint32_t i = 0; i <= t->hmask; i++)
		if (tvisstr(&node[i].key) &&
		    strcmp(strdata(strV(&node[i].key)), k) == 0)
			return &node[i].val;
	return NULL;
}

/* VM thread only. From package.loaded's modules, by their names, and the
** globals, breadth first; modules first at each depth ("string.len"
** before a global alias). */
static void walk_roots(struct walk *w, lua_State *L)
{
	global_State *g = G(L);
	struct queue q;
	memset(&q, 0, sizeof q);
	cTValue *reg = &g->registrytv, *lv;
	GCtab *env = tabref(mainthread(g)->env);
	if (tvistab(reg) && (lv = field(tabV(reg), "_LOADED")) && tvistab(lv)) {
		GCtab *loaded = tabV(lv);
		Node *node = noderef(loaded->node);
		first_time(w, loaded); /* not as a module's field */
		if (env)
			first_time(w, env); /* _G: the globals, below */
		for (uint32_t j = 0; j <= loaded->hmask; j++) {
			Node *m = &node[j];
			if (tvisstr(&m->key) && tvistab(&m->val))
				enqueue(w, &q, tabV(&m->val),
					strdata(strV(&m->key)), 1);
		}
	}
	if (env) {
		/* The globals' own fields are names without a prefix. */
		hmap_del(&w->seen, (uint64_t)(uintptr_t)env);
		enqueue(w, &q, env, "", 1);
	}
	for (; q.head < q.n; q.head++) {
		struct qent e = q.q[q.head]; /* walking may grow q.q */
		walk_table(w, &q, e.t, e.path, e.depth);
		free(e.path);
	}
	free(q.q);
}

/* VM thread only, the VM stopped. See namewalk.h. */
void namewalk_run(lua_State *L, const struct namewalk_fns *fns)
{
	struct walk w;
	memset(&w, 0, sizeof w);
	w.fns = fns;
	if (fns->lua)
		walk_protos(G(L), fns);
	walk_roots(&w, L);
	hmap_free(&w.seen);
}
