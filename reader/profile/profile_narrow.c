/*
** ljlog reader library, layer 3: narrowing a profile, as pprof's --focus,
** --ignore and time windows narrow a profile (see profile_narrow in
** profile.h). Samples, allocations and frees are filtered as they are
** decoded; call paths after, on the call tree. The state is the profile's
** narrow fields.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "profile/profile_int.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"

/* Compile one expression into *out (NULL when re is NULL). */
static int compile(void **out, const char *re, const char *what, char *err,
		   size_t errlen)
{
	regex_t *r;
	int rc;
	*out = NULL;
	if (!re)
		return 0;
	if (!(r = malloc(sizeof *r))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((rc = regcomp(r, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		char m[256];
		regerror(rc, r, m, sizeof m);
		snprintf(err, errlen, "%s '%s': %s", what, re, m);
		free(r);
		return -EINVAL;
	}
	*out = r;
	return 0;
}

/* See profile.h. */
int profile_narrow(struct profile *p, const char *focus, const char *ignore,
		   int win, uint64_t from_ns, uint64_t to_ns, char *err,
		   size_t errlen)
{
	int rc;
	narrow_free(p);
	if ((rc = compile(&p->focus, focus, "--focus", err, errlen)) < 0 ||
	    (rc = compile(&p->ignore, ignore, "--ignore", err, errlen)) < 0) {
		narrow_free(p);
		return rc;
	}
	if ((focus && !(p->focus_re = strdup(focus))) ||
	    (ignore && !(p->ignore_re = strdup(ignore)))) {
		narrow_free(p);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->win = win;
	p->win_from_ns = from_ns;
	p->win_to_ns = to_ns;
	p->win_lo = 0;
	p->win_hi = UINT64_MAX;
	p->narrow = win || p->focus || p->ignore;
	return 0;
}

/* See profile_int.h. */
void narrow_free(struct profile *p)
{
	if (p->focus)
		regfree(p->focus);
	if (p->ignore)
		regfree(p->ignore);
	free(p->focus);
	free(p->ignore);
	free(p->focus_re);
	free(p->ignore_re);
	p->focus = p->ignore = NULL;
	p->focus_re = p->ignore_re = NULL;
}

/* See profile_int.h. */
void narrow_intro(struct profile *p, const struct decode_intro *in)
{
	if (!p->win)
		return;
	double tick = in->counter_kind == FORMAT_COUNTER_MONO_NS ? 1.0
		      : in->counter_hz ? 1e9 / (double)in->counter_hz
				       : 1.0;
	tick *= (double)(1ull << in->ts_shift);
	uint64_t t0 = in->clock.counter >> in->ts_shift;
	p->win_lo = t0 + (uint64_t)((double)p->win_from_ns / tick);
	p->win_hi = p->win_to_ns == UINT64_MAX
			? UINT64_MAX
			: t0 + (uint64_t)((double)p->win_to_ns / tick);
	p->calls.win_lo = p->win_lo;
	p->calls.win_hi = p->win_hi;
}

/* See profile_int.h. */
int narrow_event(const struct profile *p, const struct decode_event *ev)
{
	if (!p->win ||
	    (ev->op != FORMAT_OP_ALLOC && ev->op != FORMAT_OP_REALLOC &&
	     ev->op != FORMAT_OP_FREE))
		return 1;
	return ev->ts >= p->win_lo && ev->ts < p->win_hi;
}

/* Whether name passes the filters so far: *f set when it
** matches focus, *i when it matches ignore. */
static void match(const struct profile *p, const char *name, int *f, int *i)
{
	if (!name || !name[0])
		return;
	if (p->focus && !*f && regexec(p->focus, name, 0, NULL, 0) == 0)
		*f = 1;
	if (p->ignore && !*i && regexec(p->ignore, name, 0, NULL, 0) == 0)
		*i = 1;
}

/* A Lua frame's function name, as the report shows it. */
static const char *lua_name(const struct profile *p, const struct decode_obj *o)
{
	return o && o->user_idx && o->user_idx <= p->fnid.n
		   ? p->fnid.fns[o->user_idx - 1].name
		   : NULL;
}

/* See profile_int.h. */
int narrow_sample(struct profile *p, const struct decode_sample *s)
{
	if (p->win && (s->ts < p->win_lo || s->ts >= p->win_hi)) {
		p->narrowed++;
		return 0;
	}
	if (!p->focus && !p->ignore)
		return 1;
	int f = 0, ig = 0;
	char st[40];
	snprintf(st, sizeof st, "(%s)", format_state_name(s->state));
	match(p, st, &f, &ig);
	for (uint32_t k = 0; k < s->nlua; k++)
		match(p, lua_name(p, s->lua[k].func), &f, &ig);
	for (uint32_t k = 0; k < s->nhost; k++)
		if (s->host[k])
			match(p, s->host[k]->u.host.name.s, &f, &ig);
	if ((p->focus && !f) || ig) {
		p->narrowed++;
		return 0;
	}
	return 1;
}

/* Whether name passes focus and ignore alone (a site). */
static int passes(const struct profile *p, const char *name)
{
	int f = 0, i = 0;
	match(p, name, &f, &i);
	return (!p->focus || f) && !i;
}

/* Sites whose function does not pass: left out, and the
** functions' allocation figures with them. */
static void narrow_sites(struct profile *p)
{
	for (size_t i = 0; i < p->heap.nsite; i++) {
		struct heap_site *s = &p->heap.sites[i];
		if (passes(p, p->fns[s->fn].name))
			continue;
		s->alloc_count = s->alloc_bytes = 0;
		s->free_count = s->free_bytes = 0;
		s->live_count = s->live_bytes = 0;
	}
	for (size_t i = 0; i < p->nfn; i++)
		if (!passes(p, p->fns[i].name)) {
			p->fns[i].alloc_count = p->fns[i].alloc_bytes = 0;
			p->fns[i].free_count = p->fns[i].free_bytes = 0;
		}
}

/* See profile_int.h. */
int narrow_finish(struct profile *p)
{
	if (!p->focus && !p->ignore)
		return 0;
	narrow_sites(p);
	struct calls *c = &p->calls;
	if (!c->tree || c->nnode < 2)
		return 0;
	/* Per node: its path has a focus match (bit 0), an ignore match (bit
	** 1); nodes come after their parents. */
	unsigned char *m = calloc(c->nnode, 1);
	uint64_t *seen = calloc(p->nfn ? p->nfn : 1, sizeof *seen);
	if (!m || !seen) {
		free(m);
		free(seen);
		return -ENOMEM;
	}
	for (uint32_t n = 1; n < c->nnode; n++) {
		int f = m[c->nodes[n].parent] & 1,
		    i = m[c->nodes[n].parent] >> 1;
		match(p, p->fns[c->nodes[n].fn].name, &f, &i);
		m[n] = (unsigned char)(f | i << 1);
	}
	for (size_t i = 0; i < p->nfn; i++)
		p->fns[i].calls = p->fns[i].self = p->fns[i].total = 0;
	for (uint32_t n = 1; n < c->nnode; n++) {
		struct calls_node *cn = &c->nodes[n];
		if ((p->focus && !(m[n] & 1)) || (m[n] & 2)) {
			cn->calls = cn->self = 0;
			continue;
		}
		p->fns[cn->fn].calls += cn->calls;
		p->fns[cn->fn].self += cn->self;
		/* Its time is in the total of each function on its path, once
		** (the walk's stamp marks those counted). */
		for (uint32_t a = n; a != 0; a = c->nodes[a].parent) {
			uint32_t fn = c->nodes[a].fn;
			if (seen[fn] == n)
				continue;
			seen[fn] = n;
			p->fns[fn].total += cn->self;
		}
	}
	free(m);
	free(seen);
	return 0;
}
