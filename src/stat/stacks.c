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

/* Any thread. The words of a stack into w (nlua, the pairs, nhost, the
** host IDs: what the table compares); their count. */
static size_t words(uint64_t *w, const uint64_t *lua, unsigned nlua,
		    const uint64_t *host, unsigned nhost)
{
	w[0] = nlua;
	if (nlua)
		memcpy(w + 1, lua, 2 * (size_t)nlua * sizeof *w);
	w[1 + 2 * (size_t)nlua] = nhost;
	if (nhost)
		memcpy(w + 2 + 2 * (size_t)nlua, host, nhost * sizeof *w);
	return 2 + 2 * (size_t)nlua + nhost;
}

/* Caller owns t, t->slots allocated. The slot holding w[0..n) (hash h),
** or the empty slot where it would go. */
static struct stacks_slot *find(const struct stacks *t, const uint64_t *w,
				size_t n, uint64_t h)
{
	for (size_t i = (size_t)h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
		struct stacks_slot *sl = &t->slots[i];
		if (!sl->id || (sl->hash == h && sl->len == n &&
				!memcmp(t->pool + sl->off, w, n * sizeof *w)))
			return sl;
	}
}

/* Caller owns t, t->slots allocated. A remembered stack that is the given
** one without its i innermost Lua and j innermost host frames, i + j as
** small as can be (at most STACKS_PARENT_DEPTH); its ID, 0 when none. */
static uint64_t parent_of(const struct stacks *t, const uint64_t *lua,
			  unsigned nlua, const uint64_t *host, unsigned nhost,
			  unsigned *pi, unsigned *pj)
{
	uint64_t w[2 + 2 * STACKS_LUA_MAX + STACKS_HOST_MAX];
	for (unsigned d = 1; d <= STACKS_PARENT_DEPTH; d++) {
		for (unsigned i = 0; i <= d && i <= nlua; i++) {
			unsigned j = d - i;
			if (j > nhost || (i == nlua && j == nhost))
				continue;
			size_t n = words(w, lua + 2 * i, nlua - i, host + j,
					 nhost - j);
			const struct stacks_slot *sl =
			    find(t, w, n, XXH3_64bits(w, n * sizeof *w));
			if (sl->id) {
				*pi = i;
				*pj = j;
				return sl->id;
			}
		}
	}
	return 0;
}

/* Any thread. Append to b the STACK record of id: parent, then nlua Lua
** and nhost host frames of its own (inside the parent's); 0 or -1 when
** out of memory. */
static int put_record(struct wbuf *b, uint64_t id, uint64_t parent,
		      const uint64_t *lua, unsigned nlua, const uint64_t *host,
		      unsigned nhost)
{
	uint8_t *p =
	    wbuf_room(b, 1 + (5 + 2 * (size_t)nlua + nhost) * BLOCKS_ULEB_MAX);
	if (!p)
		return -1;
	*p++ = FORMAT_REC_STACK;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, parent);
	p = blocks_uleb_put(p, nlua);
	for (size_t k = 0; k < 2 * (size_t)nlua; k++)
		p = blocks_uleb_put(p, lua[k]);
	p = blocks_uleb_put(p, nhost);
	for (unsigned k = 0; k < nhost; k++)
		p = blocks_uleb_put(p, host[k]);
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
	memcpy(t->pool + t->plen, w, n * sizeof *w); /* n >= 2 */
	sl->hash = hash;
	sl->id = id;
	sl->off = (uint32_t)t->plen;
	sl->len = (uint32_t)n;
	t->plen += n;
	t->count++;
	return 0;
}

/* Caller owns t, t->slots allocated. Define (w[0..n), hash) in slot sl:
** its record into b on parent with its own frames; the new ID, 0 when b
** is out of memory. */
static uint64_t define(struct stacks *t, struct wbuf *b, struct stacks_slot *sl,
		       const uint64_t *w, size_t n, uint64_t hash,
		       uint64_t parent, const uint64_t *lua, unsigned nlua,
		       const uint64_t *host, unsigned nhost)
{
	uint64_t id = mapper_new_id();
	if (put_record(b, id, parent, lua, nlua, host, nhost) < 0)
		return 0;
	t->defined++;
	if (sl)
		(void)remember(t, sl, hash, id, w, n);
	return id;
}

/* Caller owns t, t->slots allocated. The ID of the Lua frames lua[0..nlua)
** without host frames, defined when new, on the same frames without the
** innermost, and so on out (a chain: each link costs one frame). 0 for no
** frames; (uint64_t)-1 when b is out of memory. */
static uint64_t lua_chain(struct stacks *t, struct wbuf *b, const uint64_t *lua,
			  unsigned nlua)
{
	uint64_t w[2 + 2 * STACKS_LUA_MAX];
	uint64_t parent = 0;
	unsigned i;
	/* The innermost frames the table lacks: lua[0..i). */
	for (i = 0; i < nlua; i++) {
		size_t n = words(w, lua + 2 * i, nlua - i, NULL, 0);
		const struct stacks_slot *sl =
		    find(t, w, n, XXH3_64bits(w, n * sizeof *w));
		if (sl->id) {
			parent = sl->id;
			break;
		}
	}
	while (i-- > 0) {
		size_t n = words(w, lua + 2 * i, nlua - i, NULL, 0);
		uint64_t h = XXH3_64bits(w, n * sizeof *w);
		parent = define(t, b, find(t, w, n, h), w, n, h, parent,
				lua + 2 * i, 1, NULL, 0);
		if (!parent)
			return (uint64_t)-1;
	}
	return parent;
}

/* Caller owns t. STACK ID of the frames, its record into b when new. */
uint64_t stacks_ref(struct stacks *t, struct wbuf *b, const uint64_t *lua,
		    unsigned nlua, const uint64_t *host, unsigned nhost)
{
	uint64_t w[2 + 2 * STACKS_LUA_MAX + STACKS_HOST_MAX];
	size_t n = words(w, lua, nlua, host, nhost);
	uint64_t hash = XXH3_64bits(w, n * sizeof *w), parent = 0;
	unsigned pi = nlua, pj = nhost;
	if (!t->slots && !(t->slots = calloc(SLOTS, sizeof *t->slots)))
		return define(t, b, NULL, w, n, hash, 0, lua, nlua, host,
			      nhost);
	/* A chain defines up to nlua stacks more: room for them all. */
	if (t->count + nlua >= STACKS_MAX ||
	    t->plen + n * (nlua + 1) > STACKS_WORDS)
		stacks_reset(t);
	struct stacks_slot *sl = find(t, w, n, hash);
	if (sl->id)
		return sl->id;
	/* A parent: the same stack but a few innermost frames (host frames
	** often differ by one or two), else the chain of its Lua frames. */
	parent = parent_of(t, lua, nlua, host, nhost, &pi, &pj);
	if (!parent && nlua) {
		parent = lua_chain(t, b, lua + 2, nlua - 1);
		if (parent == (uint64_t)-1)
			return 0;
		pi = parent ? 1 : nlua;
		pj = nhost;
		sl = find(t, w, n, hash); /* the chain may have taken sl */
	}
	return define(t, b, sl, w, n, hash, parent, lua, pi, host, pj);
}
