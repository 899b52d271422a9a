/*
** ljlog reader processors: a tree of names aggregated by path.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/ntree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Room for cap nodes; -1 when out of memory (the arrays that
** grew keep their new room). */
static int grow(struct ntree *t, size_t cap)
{
	int bad = 0;
	uint32_t *pa = realloc(t->parent, cap * sizeof *pa);
	if (pa)
		t->parent = pa;
	uint32_t *na = realloc(t->name, cap * sizeof *na);
	if (na)
		t->name = na;
	for (unsigned i = 0; i < t->nw; i++) {
		uint64_t *w = realloc(t->w[i], cap * sizeof *w);
		if (w)
			t->w[i] = w;
		bad |= !w;
	}
	if (!pa || !na || bad)
		return -1;
	t->cap = cap;
	return 0;
}

/* See ntree.h. */
void ntree_free(struct ntree *t)
{
	free(t->parent);
	free(t->name);
	for (unsigned i = 0; i < NTREE_MAXW; i++)
		free(t->w[i]);
	hmap_free(&t->kids);
	memset(t, 0, sizeof *t);
}

/* Node n: under parent, named name, weights 0. */
static void set_node(struct ntree *t, size_t n, uint32_t parent, uint32_t name)
{
	t->parent[n] = parent;
	t->name[n] = name;
	for (unsigned i = 0; i < t->nw; i++)
		t->w[i][n] = 0;
}

/* See ntree.h. */
int ntree_init(struct ntree *t, unsigned nw)
{
	memset(t, 0, sizeof *t);
	t->nw = nw < NTREE_MAXW ? nw : NTREE_MAXW;
	if (grow(t, 1024) < 0) {
		ntree_free(t);
		return -ENOMEM;
	}
	set_node(t, 0, 0, 0);
	t->n = 1;
	return 0;
}

/* See ntree.h. */
int64_t ntree_child(struct ntree *t, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | (name + 1u);
	int added;
	uint64_t *v = hmap_ref(&t->kids, key, &added);
	if (!v)
		return -1;
	if (!added)
		return (int64_t)*v;
	if (t->n == t->cap && grow(t, t->cap * 2) < 0) {
		hmap_del(&t->kids, key);
		return -1;
	}
	*v = t->n;
	set_node(t, t->n, parent, name);
	return (int64_t)t->n++;
}
