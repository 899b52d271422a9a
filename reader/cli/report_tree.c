/*
** ljlog CLI: 'ljlog report --callers F' and '--callees F': the calls and
** samples around the functions whose names match F, as an indented tree
** (callees: the paths below F; callers: the paths up from F, the caller
** first), each line with its calls, time and samples. Built from the call
** tree (calls) and the sampled stacks (Lua-first, as folded prints them).
*/
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logger/opts.h"
#include "proc/ntree.h"
#include "proc/samples.h"
#include "profile/profile.h"
#include "util/intern.h"

/* The tree being printed: node 0 is F itself (all its matches merged);
** its weights calls, time (ns) and samples. */
struct rtree {
	struct ntree nt;
	struct intern names; /* frame names */
	unsigned fams;	     /* families recorded (report_recorded) */
	int err;
};
enum { W_CALLS, W_TIME, W_SAMPLES };
#define CALLS(t)   ((t)->nt.w[W_CALLS])
#define TIME(t)	   ((t)->nt.w[W_TIME])
#define SAMPLES(t) ((t)->nt.w[W_SAMPLES])

/* Main thread. The child of parent named s, made when new (-1: out of
** memory). */
static int64_t child(struct rtree *t, uint32_t parent, const char *s)
{
	int64_t nm = intern_put(&t->names, s, strlen(s));
	int64_t k = nm < 0 ? -1 : ntree_child(&t->nt, parent, (uint32_t)nm);
	if (k < 0)
		t->err = -ENOMEM;
	return k;
}

/* Main thread. Whether function fn's name matches. */
static int is_f(const struct profile *p, const regex_t *re, uint32_t fn)
{
	return fn < p->nfn && regexec(re, p->fns[fn].name, 0, NULL, 0) == 0;
}

/* Main thread. The call tree's part: for each node of F not under another
** one, its callees (the subtree) or its callers (the path up). */
static void from_calls(const struct profile *p, const regex_t *re, int callers,
		       struct rtree *t)
{
	const struct calls *c = &p->calls;
	uint32_t *map = malloc((c->nnode ? c->nnode : 1) * sizeof *map);
	uint64_t *sub = calloc(c->nnode ? c->nnode : 1, sizeof *sub);
	if (!map || !sub) {
		t->err = -ENOMEM;
		goto out;
	}
	/* Each node's time with its subtree (ticks). */
	for (uint32_t n = c->nnode; n-- > 1;) {
		sub[n] += c->nodes[n].self;
		sub[c->nodes[n].parent] += sub[n];
	}
	/* map[n]: the tree node of call-tree node n below a top F node, or
	** UINT32_MAX when n is not below one. */
	map[0] = UINT32_MAX;
	for (uint32_t n = 1; n < c->nnode && !t->err; n++) {
		const struct calls_node *cn = &c->nodes[n];
		uint32_t up = map[cn->parent];
		map[n] = UINT32_MAX;
		if (up == UINT32_MAX && !is_f(p, re, cn->fn))
			continue;
		uint64_t ns = profile_ns(p, sub[n]);
		if (up == UINT32_MAX) { /* a top F node */
			map[n] = 0;
			CALLS(t)[0] += cn->calls;
			TIME(t)[0] += ns;
			if (!callers)
				continue;
			uint32_t at = 0; /* its callers, nearest first */
			for (uint32_t a = cn->parent; a != 0 && !t->err;
			     a = c->nodes[a].parent) {
				int64_t k =
				    child(t, at, p->fns[c->nodes[a].fn].name);
				if (k < 0)
					break;
				CALLS(t)[k] += cn->calls;
				TIME(t)[k] += ns;
				at = (uint32_t)k;
			}
			continue;
		}
		if (callers)
			continue;
		int64_t k = child(t, up, p->fns[cn->fn].name);
		if (k < 0)
			break;
		map[n] = (uint32_t)k;
		CALLS(t)[k] += cn->calls;
		TIME(t)[k] += ns;
	}
out:
	free(map);
	free(sub);
}

/* Main thread. The samples' part: each sampled stack through F, from its
** outermost F frame down (callees) or up (callers). */
static void from_samples(const struct profile *p, const regex_t *re,
			 int callers, struct rtree *t)
{
	const struct samples *s = &p->smp;
	struct samples_frame *fr = malloc(SAMPLES_STACK_MAX * sizeof *fr);
	if (!fr) {
		t->err = -ENOMEM;
		return;
	}
	for (uint32_t n = 1; n < s->nnode && !t->err; n++) {
		uint64_t cnt = s->nodes[n].samples;
		if (!cnt)
			continue;
		size_t nf = samples_stack(s, n, SAMPLES_VIEW_LUA_FIRST, 0, fr);
		size_t i = 0;
		while (i < nf &&
		       !(fr[i].kind == SAMPLES_FR_FN && is_f(p, re, fr[i].fn)))
			i++;
		if (i == nf)
			continue;
		SAMPLES(t)[0] += cnt;
		uint32_t at = 0;
		for (size_t k = 0; k < (callers ? i : nf - i - 1); k++) {
			const struct samples_frame *f =
			    &fr[callers ? i - 1 - k : i + 1 + k];
			char buf[64];
			const char *nm = buf;
			if (f->kind == SAMPLES_FR_FN)
				nm = p->fns[f->fn].name;
			else
				samples_frame_name(s, f, buf, sizeof buf);
			int64_t c = child(t, at, nm);
			if (c < 0)
				break;
			SAMPLES(t)[c] += cnt;
			at = (uint32_t)c;
		}
	}
	free(fr);
}

/* Main thread. Children of node n in print order: by time, then samples,
** then calls, then name; *k of them (caller frees). */
static const struct rtree *sort_t;
static int cmp_kids(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const struct rtree *t = sort_t;
	if (TIME(t)[a] != TIME(t)[b])
		return TIME(t)[a] > TIME(t)[b] ? -1 : 1;
	if (SAMPLES(t)[a] != SAMPLES(t)[b])
		return SAMPLES(t)[a] > SAMPLES(t)[b] ? -1 : 1;
	if (CALLS(t)[a] != CALLS(t)[b])
		return CALLS(t)[a] > CALLS(t)[b] ? -1 : 1;
	return strcmp(intern_str(&t->names, t->nt.name[a], NULL),
		      intern_str(&t->names, t->nt.name[b], NULL));
}

/* Main thread. Print node n and, indented, its children (at most limit
** each, 0 all). kids: each node's children, from the node lists. */
static void print_node(const struct rtree *t, uint32_t n, const char *label,
		       int depth, size_t limit, uint32_t **kids, size_t *nkid)
{
	char tm[32] = "-", nc[24] = "-", ns[24] = "-";
	if (t->fams & OPTS_CALLS) { /* else not recorded, not 0 */
		snprintf(nc, sizeof nc, "%" PRIu64, CALLS(t)[n]);
		cli_fmt_time(tm, sizeof tm, TIME(t)[n]);
	}
	if (t->fams & OPTS_SAMPLE)
		snprintf(ns, sizeof ns, "%" PRIu64, SAMPLES(t)[n]);
	printf("%10s %12s %9s  %*s%s\n", nc, tm, ns, 2 * depth, "", label);
	sort_t = t;
	if (nkid[n])
		qsort(kids[n], nkid[n], sizeof *kids[n], cmp_kids);
	size_t shown = 0;
	for (size_t i = 0; i < nkid[n]; i++) {
		uint32_t k = kids[n][i];
		if (!CALLS(t)[k] && !TIME(t)[k] && !SAMPLES(t)[k])
			continue;
		if (limit && shown == limit) {
			printf("%34s  %*s… and %zu more (-n 0 for all)\n", "",
			       2 * depth + 2, "", nkid[n] - i);
			break;
		}
		print_node(t, k, intern_str(&t->names, t->nt.name[k], NULL),
			   depth + 1, limit, kids, nkid);
		shown++;
	}
}

/* Main thread. See cli.h. */
int report_tree_text(const struct profile *p, const char *f, int callers,
		     size_t limit)
{
	regex_t re;
	struct rtree t;
	int rc;
	if ((rc = regcomp(&re, f, REG_EXTENDED | REG_NOSUB)) != 0) {
		char m[256];
		regerror(rc, &re, m, sizeof m);
		cli_err("report", "%s '%s': %s",
			callers ? "--callers" : "--callees", f, m);
		return CLI_USAGE;
	}
	memset(&t, 0, sizeof t);
	t.fams = report_recorded_all(p);
	if (ntree_init(&t.nt, 3) < 0) {
		regfree(&re);
		return CLI_USAGE;
	}
	from_calls(p, &re, callers, &t);
	from_samples(p, &re, callers, &t);
	uint32_t **kids = calloc(t.nt.n, sizeof *kids);
	size_t *nkid = calloc(t.nt.n, sizeof *nkid);
	for (size_t i = 1; kids && nkid && i < t.nt.n && !t.err; i++) {
		uint32_t pa = t.nt.parent[i];
		uint32_t *k = realloc(kids[pa], (nkid[pa] + 1) * sizeof *k);
		if (!k)
			t.err = -ENOMEM;
		else {
			k[nkid[pa]++] = (uint32_t)i;
			kids[pa] = k;
		}
	}
	if (!kids || !nkid || t.err) {
		cli_err("report", "out of memory");
		rc = CLI_USAGE;
	} else if (!CALLS(&t)[0] && !TIME(&t)[0] && !SAMPLES(&t)[0]) {
		cli_err("report", "%s '%s': no function of that name ran",
			callers ? "--callers" : "--callees", f);
		rc = CLI_TRUNCATED;
	} else {
		const char *label = f;
		size_t nmatch = 0;
		for (uint32_t i = 0; i < p->nfn; i++)
			if ((p->fns[i].calls || p->fns[i].samples_total) &&
			    is_f(p, &re, i) && nmatch++ == 0)
				label = p->fns[i].name;
		printf("%s of %s%s:\n", callers ? "Callers" : "Callees",
		       nmatch > 1 ? "the functions matching " : "",
		       nmatch > 1 ? f : label);
		printf("%10s %12s %9s  %s\n", "calls", "time", "samples",
		       callers ? "function, then who called it"
			       : "function, then what it called");
		print_node(&t, 0, nmatch > 1 ? f : label, 0, limit, kids, nkid);
		rc = CLI_OK;
	}
	for (size_t i = 0; kids && i < t.nt.n; i++)
		free(kids[i]);
	free(kids);
	free(nkid);
	ntree_free(&t.nt);
	intern_free(&t.names);
	regfree(&re);
	return rc;
}
