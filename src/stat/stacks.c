/*
** ljlog stacks: frames -> STACK ID for a VM's samples (see stacks.h).
** Open addressing on the frames' hash, the frames compared in full.
*/
#include "stat/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "maps/mapper.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define SLOTS (2 * STACKS_MAX) /* a power of two: half full at most */

/* Caller owns t. Forget every stack, keeping the memory. */
void stacks_reset(struct stacks *t)
{
	if (t->slots)
		memset(t->slots, 0, SLOTS * sizeof *t->slots);
	t->count = 0;
	t->plen = 0;
}

/* Caller owns t. Free the table's memory. */
void stacks_free(struct stacks *t)
{
	free(t->slots);
	free(t->pool);
	t->slots = NULL;
	t->pool = NULL;
	t->count = t->plen = t->pcap = 0;
}

/* Caller owns t. Append the STACK record of id with words w[0..n) to b;
** 0 or -1 when out of memory. */
static int put_record(struct wbuf *b, uint64_t id, const uint64_t *w,
		      size_t n)
{
	uint8_t *p = wbuf_room(b, 1 + (n + 1) * BLOCKS_ULEB_MAX);
	if (!p)
		return -1;
	*p++ = FORMAT_REC_STACK;
	p = blocks_uleb_put(p, id);
	for (size_t i = 0; i < n; i++)
		p = blocks_uleb_put(p, w[i]);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* Caller owns t. Remember w[0..n) as id in slot sl; 0 or -1 (out of
** memory: not remembered). */
static int remember(struct stacks *t, struct stacks_slot *sl, uint64_t hash,
		    uint64_t id, const uint64_t *w, size_t n)
{
	if (t->plen + n > t->pcap) {
		size_t cap = t->pcap ? t->pcap : 4096;
		while (cap < t->plen + n)
			cap *= 2;
		uint64_t *np = realloc(t->pool, cap * sizeof *np);
		if (!np)
			return -1;
		t->pool = np;
		t->pcap = cap;
	}
	memcpy(t->pool + t->plen, w, n * sizeof *w);
	sl->hash = hash;
	sl->id = id;
	sl->off = (uint32_t)t->plen;
	sl->len = (uint32_t)n;
	t->plen += n;
	t->count++;
	return 0;
}

/* Caller owns t. STACK ID of w[0..n), its record into b when new. */
uint64_t stacks_ref(struct stacks *t, struct wbuf *b, const uint64_t *w,
		    size_t n)
{
	uint64_t hash = XXH3_64bits(w, n * sizeof *w);
	struct stacks_slot *sl = NULL;
	if (!t->slots && !(t->slots = calloc(SLOTS, sizeof *t->slots)))
		goto fresh;
	if (t->count >= STACKS_MAX || t->plen + n > STACKS_WORDS)
		stacks_reset(t);
	for (size_t i = (size_t)hash & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
		sl = &t->slots[i];
		if (!sl->id)
			break;
		if (sl->hash == hash && sl->len == n &&
		    !memcmp(t->pool + sl->off, w, n * sizeof *w))
			return sl->id;
	}
fresh:;
	uint64_t id = mapper_new_id();
	if (put_record(b, id, w, n) < 0)
		return 0;
	t->defined++;
	if (sl)
		(void)remember(t, sl, hash, id, w, n);
	return id;
}
