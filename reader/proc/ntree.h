/*
** ljlog reader processors: a tree of names aggregated by path.
** Each node is a name (an index the caller interns) under its parent, with
** a few 64-bit weights; a child is found by (parent, name), and nodes are
** numbered in the order they were made, node 0 the root. The flame graph's
** views and 'report --callers/--callees' build on it.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_NTREE_H
#define LJLOG_READER_PROC_NTREE_H

#include <stddef.h>
#include <stdint.h>

#include "util/hmap.h"

/* Weights a node may carry. */
#define NTREE_MAXW 3

/* The tree. */
struct ntree {
	uint32_t *parent, *name;
	uint64_t *w[NTREE_MAXW]; /* w[i][node]: weight i of a node (nw) */
	unsigned nw;
	size_t n, cap;
	struct hmap kids; /* parent << 32 | name + 1 -> node */
};

/* A tree of nodes with nw weights (at most NTREE_MAXW), with its root
** (name 0, weights 0); 0 or -ENOMEM. */
int ntree_init(struct ntree *t, unsigned nw);

/* The child of node parent named name, made when new (weights 0); -1 when
** out of memory. */
int64_t ntree_child(struct ntree *t, uint32_t parent, uint32_t name);

/* Free a tree (zeroed: ntree_free again is harmless). */
void ntree_free(struct ntree *t);

#endif
