/*
** ljlog reader library, layer 3: two profiles side by side (a run and its
** base). Functions match by identity (kind, name, chunk or object,
** line), allocation sites by their function's match and their line; each
** side knows the other's index of the same function or site. The state is
** the struct profile_diff its caller owns.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "profile/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

/* A function's identity as one byte string: kind, name, file, line. */
static size_t fn_key(const struct profile_fn *f, char *buf, size_t len)
{
	int n =
	    snprintf(buf, len, "%u%c%s%c%s%c%llu", f->kind, 0, f->name, 0,
		     f->file ? f->file : "", 0, (unsigned long long)f->line);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* For each function of a, the index of the same function in b (or
** UINT32_MAX); NULL when out of memory. */
static uint32_t *match_fns(const struct profile *a, const struct profile *b)
{
	struct intern keys = INTERN_INIT;
	uint32_t *m = malloc((a->nfn ? a->nfn : 1) * sizeof *m);
	uint32_t *of = malloc((b->nfn ? b->nfn : 1) * sizeof *of);
	char buf[2048];
	int ok = m && of;
	/* b's functions by key (two functions of one identity: the first). */
	for (size_t i = 0; ok && i < b->nfn; i++) {
		int64_t k =
		    intern_put(&keys, buf, fn_key(&b->fns[i], buf, sizeof buf));
		if (k < 0)
			ok = 0;
		else if ((size_t)k == intern_count(&keys) - 1)
			of[k] = (uint32_t)i;
	}
	for (size_t i = 0; ok && i < a->nfn; i++) {
		int64_t k = intern_find(&keys, buf,
					fn_key(&a->fns[i], buf, sizeof buf));
		m[i] = k < 0 ? UINT32_MAX : of[k];
	}
	intern_free(&keys);
	free(of);
	if (!ok) {
		free(m);
		return NULL;
	}
	return m;
}

/* For each site of a, the index of the same site in b (its function's
** match in b, its line) or UINT32_MAX, by fm (a's functions in b). */
static uint32_t *match_sites(const struct profile *a, const struct profile *b,
			     const uint32_t *fm)
{
	struct hmap bysite = {0};
	size_t na = a->heap.nsite, nb = b->heap.nsite;
	uint32_t *m = malloc((na ? na : 1) * sizeof *m);
	int ok = m != NULL;
	for (size_t i = 0; ok && i < nb; i++) {
		const struct heap_site *s = &b->heap.sites[i];
		uint64_t key = (uint64_t)s->fn << 32 ^ s->line ^ 1ull << 63;
		int added;
		uint64_t *v = hmap_ref(&bysite, key, &added);
		if (!v)
			ok = 0;
		else if (added)
			*v = i + 1;
	}
	for (size_t i = 0; ok && i < na; i++) {
		const struct heap_site *s = &a->heap.sites[i];
		uint32_t f = fm[s->fn];
		const uint64_t *v =
		    f == UINT32_MAX
			? NULL
			: hmap_get(&bysite,
				   (uint64_t)f << 32 ^ s->line ^ 1ull << 63);
		m[i] = v ? (uint32_t)(*v - 1) : UINT32_MAX;
	}
	hmap_free(&bysite);
	if (!ok) {
		free(m);
		return NULL;
	}
	return m;
}

/* See profile.h. */
int profile_diff_new(struct profile_diff *d, const struct profile *a,
		     const struct profile *b)
{
	memset(d, 0, sizeof *d);
	d->a = a;
	d->b = b;
	if (!(d->fn_b = match_fns(a, b)) || !(d->fn_a = match_fns(b, a)) ||
	    !(d->site_b = match_sites(a, b, d->fn_b)) ||
	    !(d->site_a = match_sites(b, a, d->fn_a))) {
		profile_diff_free(d);
		return -ENOMEM;
	}
	return 0;
}

/* See profile.h. */
void profile_diff_free(struct profile_diff *d)
{
	free(d->fn_b);
	free(d->fn_a);
	free(d->site_b);
	free(d->site_a);
	memset(d, 0, sizeof *d);
}
