/*
** ljlog addrset: growth and deletion.
** The table is kept at most half full, so a probe ends soon.
*/
#include "util/addrset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Owner only. Free the memory. */
void addrset_free(struct addrset *s)
{
	free(s->slot);
	s->slot = NULL;
	s->mask = 0;
	s->count = 0;
	s->stale = 0;
	memset(s->filter, 0, sizeof s->filter);
}

/* Owner only. Set a's bit in the filter. */
static void filter_set(struct addrset *s, uintptr_t a)
{
	unsigned b = addrset_bit(a);
	s->filter[b >> 6] |= (uint64_t)1 << (b & 63);
}

/* Owner only. Make the filter anew from the members, once the bits of
** deleted addresses could outnumber theirs. */
static void filter_renew(struct addrset *s)
{
	memset(s->filter, 0, sizeof s->filter);
	s->stale = 0;
	for (size_t i = 0; s->slot && i <= s->mask; i++)
		if (s->slot[i])
			filter_set(s, s->slot[i]);
}

/* Owner only. Put a in a table that has room and lacks it. */
static void place(struct addrset *s, uintptr_t a)
{
	size_t i = addrset_home(s, a);
	while (s->slot[i])
		i = (i + 1) & s->mask;
	s->slot[i] = a;
}

/* Owner only. Twice the capacity (at least 64); 0 or -ENOMEM. */
static int grow(struct addrset *s)
{
	size_t ncap = s->slot ? (s->mask + 1) * 2 : 64;
	uintptr_t *old = s->slot;
	size_t ocap = old ? s->mask + 1 : 0;
	uintptr_t *n = calloc(ncap, sizeof *n);
	if (!n)
		return -ENOMEM;
	s->slot = n;
	s->mask = ncap - 1;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			place(s, old[i]);
	free(old);
	return 0;
}

/* Owner only. Add a. */
int addrset_add(struct addrset *s, uintptr_t a)
{
	if (addrset_has(s, a))
		return 0;
	if ((!s->slot || (s->count + 1) * 2 > s->mask + 1) && grow(s) < 0)
		return -ENOMEM;
	place(s, a);
	filter_set(s, a);
	s->count++;
	return 0;
}

/* Owner only. Remove a: the entries after it in its run move back so that
** no probe stops early. */
int addrset_del(struct addrset *s, uintptr_t a)
{
	if (!s->count)
		return 0;
	size_t i = addrset_home(s, a);
	for (;; i = (i + 1) & s->mask) {
		if (s->slot[i] == a)
			break;
		if (!s->slot[i])
			return 0;
	}
	size_t j = i;
	for (;;) {
		j = (j + 1) & s->mask;
		uintptr_t v = s->slot[j];
		if (!v)
			break;
		size_t h = addrset_home(s, v);
		/* v may move to i when its home is not in (i, j]. */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			s->slot[i] = v;
			i = j;
		}
	}
	s->slot[i] = 0;
	s->count--;
	if (++s->stale > s->count + 64)
		filter_renew(s);
	return 1;
}
