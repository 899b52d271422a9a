/*
** ljlog reader processors: dominator tree of a heap snapshot.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/hdom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The graph as compressed rows: successors and predecessors. */
struct graph {
	size_t nn;		     /* nodes: objects + the super-root */
	size_t *soff, *sdst, *sedge; /* successors of v: sdst[soff[v]..) */
	size_t *poff, *psrc;	     /* predecessors of v: psrc[poff[v]..) */
};

/* Free g. */
static void graph_free(struct graph *g)
{
	free(g->soff);
	free(g->sdst);
	free(g->sedge);
	free(g->poff);
	free(g->psrc);
}

/* The node of an edge's end (src 0: the super-root), or
** HDOM_NONE when the object is not in k. */
static size_t node_of(const struct hsnap_keep *k, uint64_t id, int src)
{
	if (src && id == 0)
		return k->n;
	uint64_t *x = hmap_get(&k->byid, id);
	return x ? (size_t)(*x - 1) : HDOM_NONE;
}

/* Build g from k's strong references; 0 or -ENOMEM. */
static int graph_build(struct graph *g, const struct hsnap_keep *k)
{
	size_t nn = k->n + 1, m = 0;
	memset(g, 0, sizeof *g);
	g->nn = nn;
	size_t *es = malloc((k->ne + 1) * sizeof *es);
	size_t *ed = malloc((k->ne + 1) * sizeof *ed);
	g->soff = calloc(nn + 1, sizeof *g->soff);
	g->poff = calloc(nn + 1, sizeof *g->poff);
	if (!es || !ed || !g->soff || !g->poff)
		goto oom;
	for (size_t i = 0; i < k->ne; i++) {
		const struct hsnap_edge *e = &k->e[i];
		es[i] = ed[i] = HDOM_NONE;
		if (e->weak)
			continue;
		size_t s = node_of(k, e->src, 1), t = node_of(k, e->dst, 0);
		if (s == HDOM_NONE || t == HDOM_NONE)
			continue;
		es[i] = s;
		ed[i] = t;
		g->soff[s + 1]++;
		g->poff[t + 1]++;
		m++;
	}
	for (size_t v = 0; v < nn; v++) {
		g->soff[v + 1] += g->soff[v];
		g->poff[v + 1] += g->poff[v];
	}
	g->sdst = malloc((m + 1) * sizeof *g->sdst);
	g->sedge = malloc((m + 1) * sizeof *g->sedge);
	g->psrc = malloc((m + 1) * sizeof *g->psrc);
	size_t *sf = malloc(nn * sizeof *sf), *pf = malloc(nn * sizeof *pf);
	if (!g->sdst || !g->sedge || !g->psrc || !sf || !pf) {
		free(sf);
		free(pf);
		goto oom;
	}
	memcpy(sf, g->soff, nn * sizeof *sf);
	memcpy(pf, g->poff, nn * sizeof *pf);
	for (size_t i = 0; i < k->ne; i++) {
		if (es[i] == HDOM_NONE)
			continue;
		g->sdst[sf[es[i]]] = ed[i];
		g->sedge[sf[es[i]]++] = i;
		g->psrc[pf[ed[i]]++] = es[i];
	}
	free(sf);
	free(pf);
	free(es);
	free(ed);
	return 0;
oom:
	free(es);
	free(ed);
	graph_free(g);
	return -ENOMEM;
}

/* The common dominator of a and b (post-order numbers po). */
static size_t intersect(const size_t *idom, const size_t *po, size_t a,
			size_t b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = idom[a];
		while (po[b] < po[a])
			b = idom[b];
	}
	return a;
}

/* shortest_paths' step: node v's references of code (code 1) or of the
** program's (0) to nodes not seen yet, queued after q[qt); the new qt. */
static size_t path_step(struct hdom *d, const struct hsnap_keep *k,
			const struct graph *g, size_t *q, size_t *seen,
			size_t v, size_t qt, int code)
{
	for (size_t j = g->soff[v]; j < g->soff[v + 1]; j++) {
		size_t w = g->sdst[j];
		const struct hsnap_edge *e = &k->e[g->sedge[j]];
		if (seen[w] || hsnap_code_ref(e->kind) != code)
			continue;
		seen[w] = 1;
		d->via[w] = e;
		q[qt++] = w;
	}
	return qt;
}

/* d->via: shortest paths breadth first from the super-root, the program's
** own references first. A reference of code (hsnap_code_ref) is taken only
** where no path without one reaches: in tiers, the nodes a tier reached
** seed the next one through their code references. q, seen: room for
** g->nn nodes. */
static void shortest_paths(struct hdom *d, const struct hsnap_keep *k,
			   const struct graph *g, size_t *q, size_t *seen)
{
	size_t qh = 0, qt = 0, tier = 0;
	for (size_t v = 0; v < g->nn; v++)
		seen[v] = 0;
	q[qt++] = k->n; /* the super-root */
	seen[k->n] = 1;
	for (;;) {
		while (qh < qt)
			qt = path_step(d, k, g, q, seen, q[qh++], qt, 0);
		size_t end = qt;
		for (size_t i = tier; i < end; i++)
			qt = path_step(d, k, g, q, seen, q[i], qt, 1);
		if (qt == end)
			break;
		tier = end;
	}
}

/* See hdom.h. */
int hdom_build(struct hdom *d, const struct hsnap_keep *k)
{
	struct graph g;
	memset(d, 0, sizeof *d);
	if (graph_build(&g, k) < 0)
		return -ENOMEM;
	size_t nn = g.nn, root = k->n;
	d->n = k->n;
	d->idom = malloc(nn * sizeof *d->idom);
	d->retained = calloc(nn, sizeof *d->retained);
	d->via = calloc(nn, sizeof *d->via);
	size_t *po = malloc(nn * sizeof *po);	  /* post-order number */
	size_t *rpo = malloc(nn * sizeof *rpo);	  /* nodes, reverse post */
	size_t *stk = malloc(nn * sizeof *stk);	  /* DFS: nodes */
	size_t *next = malloc(nn * sizeof *next); /* DFS: next successor */
	if (!d->idom || !d->retained || !d->via || !po || !rpo || !stk || !next)
		goto oom;
	/* Post-order by an explicit depth-first stack. */
	for (size_t v = 0; v < nn; v++) {
		po[v] = HDOM_NONE;
		d->idom[v] = HDOM_NONE;
	}
	size_t sp = 0, npo = 0;
	stk[sp++] = root;
	next[root] = g.soff[root];
	po[root] = 0; /* visited; numbered when left */
	while (sp) {
		size_t v = stk[sp - 1];
		if (next[v] < g.soff[v + 1]) {
			size_t w = g.sdst[next[v]++];
			if (po[w] == HDOM_NONE) {
				po[w] = 0;
				next[w] = g.soff[w];
				stk[sp++] = w;
			}
			continue;
		}
		po[v] = npo++;
		sp--;
	}
	for (size_t v = 0; v < nn; v++)
		if (po[v] != HDOM_NONE)
			rpo[npo - 1 - po[v]] = v;
	/* Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm". */
	d->idom[root] = root;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 1; i < npo; i++) {
			size_t b = rpo[i], nd = HDOM_NONE;
			for (size_t j = g.poff[b]; j < g.poff[b + 1]; j++) {
				size_t p = g.psrc[j];
				if (d->idom[p] == HDOM_NONE)
					continue;
				nd = nd == HDOM_NONE
					 ? p
					 : intersect(d->idom, po, p, nd);
			}
			if (d->idom[b] != nd) {
				d->idom[b] = nd;
				changed = 1;
			}
		}
	}
	/* Retained: a node's size plus its children's, children first. */
	for (size_t i = 1; i < npo; i++)
		d->retained[rpo[i]] = k->v[rpo[i]].size;
	for (size_t i = npo; i-- > 1;)
		d->retained[d->idom[rpo[i]]] += d->retained[rpo[i]];
	d->reached = npo - 1;
	shortest_paths(d, k, &g, stk, next);
	free(po);
	free(rpo);
	free(stk);
	free(next);
	graph_free(&g);
	return 0;
oom:
	free(po);
	free(rpo);
	free(stk);
	free(next);
	graph_free(&g);
	hdom_free(d);
	return -ENOMEM;
}

/* See hdom.h. */
void hdom_free(struct hdom *d)
{
	free(d->idom);
	free(d->retained);
	free(d->via);
	memset(d, 0, sizeof *d);
}

/* See hdom.h. */
size_t hdom_path(const struct hdom *d, const struct hsnap_keep *k, size_t i,
		 const struct hsnap_edge **out, size_t cap, int *cut)
{
	size_t n = 0, len = 0;
	*cut = 0;
	for (size_t v = i; v < d->n && d->via[v] && len <= d->n; len++) {
		const struct hsnap_edge *e = d->via[v];
		if (n == cap) {
			*cut = 1;
			break;
		}
		out[n++] = e;
		if (!e->src)
			break;
		v = node_of(k, e->src, 0);
	}
	for (size_t j = 0; j < n / 2; j++) {
		const struct hsnap_edge *x = out[j];
		out[j] = out[n - 1 - j];
		out[n - 1 - j] = x;
	}
	return n;
}
