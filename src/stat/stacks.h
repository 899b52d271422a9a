/*
** ljlog stacks: the drainer's table of a VM's sample stacks (version 6),
** frames -> STACK ID, so that each distinct stack is written once.
*/
#ifndef LJLOG_STAT_STACKS_H
#define LJLOG_STAT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/writer.h"

/* Stacks remembered per VM: past this the table is forgotten and what
** comes next is defined anew, under new IDs (doc/format.txt, STACK). */
#define STACKS_MAX 4096u
/* Frame words remembered per VM (8 bytes each), same rule. */
#define STACKS_WORDS (128u << 10)
/* Frames of a stack, at most: Lua frames, host frames. */
#define STACKS_LUA_MAX	96u
#define STACKS_HOST_MAX 96u
/* A new stack's parent is sought among those with up to this many of its
** innermost frames (Lua and host together) fewer. */
#define STACKS_PARENT_DEPTH 6u

/* One remembered stack: its frame words are pool[off, off + len). */
struct stacks_slot {
	uint64_t hash; /* XXH3 of the words */
	uint64_t id;   /* STACK ID, 0: empty slot */
	uint32_t off;
	uint32_t len;
};

/* A table; zeroed is empty (no memory until the first stack). */
struct stacks {
	struct stacks_slot *slots; /* 2 * STACKS_MAX, open addressing */
	size_t count;		   /* stacks remembered */
	uint64_t *pool;		   /* their frame words */
	size_t plen, pcap;
	uint64_t defined; /* STACK records made (for tests and benches) */
};

/* Caller owns t (the VM's drainer: holds its hostlock). The STACK ID of
** nlua Lua frames (lua: (func ID, line) pairs) and nhost host frames
** (HOSTSYM IDs), both innermost first, at most STACKS_LUA_MAX and
** STACKS_HOST_MAX; its STACK record appended to b when the table lacks it,
** on a parent when the table holds the same frames but a few innermost
** ones. 0 when b is out of memory. A table out of memory still gives an
** ID: a new one, not remembered. */
uint64_t stacks_ref(struct stacks *t, struct wbuf *b, const uint64_t *lua,
		    unsigned nlua, const uint64_t *host, unsigned nhost);

/* Caller owns t. Forget every stack (their records were not written, or
** the table is full): the next use of each defines it again. */
void stacks_reset(struct stacks *t);

/* Caller owns t. Free the table's memory; it is empty and usable again. */
void stacks_free(struct stacks *t);

#endif
