/*
** ljlog CLI: narrowing options of the reading commands (report, folded,
** export, flame, annotate): --focus, --ignore, --from, --to, --from-mark,
** with pprof's meanings (profile_narrow in reader/profile.h does the
** work); and the base logs of --base.
*/
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "logger/opts.h"
#include "profile/profile.h"

/* Main thread. A duration option's value in ns (0 is fine); -1 after a
** message. */
static int parse_time(const char *cmd, const char *opt, const char *s,
		      uint64_t *ns)
{
	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	if (opts_parse_duration(s, strlen(s), ns) < 0) {
		cli_err(cmd,
			"%s wants a time with a unit, like 500ms, 2s or 0, "
			"not '%s'",
			opt, s);
		return -1;
	}
	return 0;
}

/* Main thread. See cli.h. */
int cli_narrow_opt(const char *cmd, struct cli_narrow *n, int o,
		   const char *arg)
{
	switch (o) {
	case CLI_O_FOCUS: n->focus = arg; return 1;
	case CLI_O_IGNORE: n->ignore = arg; return 1;
	case CLI_O_FROM_MARK: n->from_mark = arg; return 1;
	case CLI_O_FROM:
		if (parse_time(cmd, "--from", arg, &n->from_ns) < 0)
			return CLI_USAGE;
		n->from_set = 1;
		return 1;
	case CLI_O_TO:
		if (parse_time(cmd, "--to", arg, &n->to_ns) < 0)
			return CLI_USAGE;
		n->to_set = 1;
		return 1;
	}
	return 0;
}

/* Main thread. See cli.h. */
int cli_narrow_any(const struct cli_narrow *n)
{
	return n->focus || n->ignore || n->from_mark || n->from_set ||
	       n->to_set;
}

/* Main thread. See cli.h. */
int cli_narrow_check(const char *cmd, const struct cli_narrow *n)
{
	if (n->from_set && n->to_set && n->to_ns <= n->from_ns) {
		cli_err(cmd, "--to must come after --from");
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. The time of the first mark named name in p, in ns from the
** first log's start; -1 (with the marks listed) when there is none. */
static int mark_offset(const char *cmd, const struct profile *p,
		       const char *name, uint64_t *ns)
{
	const struct zones *z = &p->zones;
	for (size_t i = 0; i < z->nmark; i++) {
		if (strcmp(zones_str(z, z->marks[i].text), name) != 0)
			continue;
		uint64_t t = z->marks[i].ts;
		if (p->nlog > 1) /* times are CLOCK_MONOTONIC ns */
			*ns = t > p->logs[0].first_ns ? t - p->logs[0].first_ns
						      : 0;
		else {
			uint64_t t0 =
			    p->nclk ? p->clk_first.counter >> p->ts_shift : 0;
			*ns = t > t0 ? profile_ns(p, t - t0) : 0;
		}
		return 0;
	}
	fprintf(stderr, "ljlog %s: --from-mark: no mark '%s'; ", cmd, name);
	if (!z->nmark)
		fputs("the log has no marks (ljlog.mark)\n", stderr);
	else {
		fputs("its marks:", stderr);
		for (size_t i = 0; i < z->nmark && i < 20; i++) {
			const char *s = zones_str(z, z->marks[i].text);
			fputc(' ', stderr);
			cli_quote(stderr, s, strlen(s));
		}
		fputc('\n', stderr);
	}
	return -1;
}

/* Main thread. See cli.h. */
int cli_narrow_window(const char *cmd, const char *const *paths, size_t npath,
		      const struct cli_narrow *n, struct cli_window *w)
{
	uint64_t origin = 0;
	w->win = n->from_set || n->to_set || n->from_mark;
	if (n->from_mark) {
		struct profile *p;
		char err[512];
		int rc, st = cli_load_logs(cmd, paths, npath, 0, &p, &rc, err,
					   sizeof err, 1);
		if (st >= 0)
			return st;
		st = mark_offset(cmd, p, n->from_mark, &origin);
		profile_free(p);
		if (st < 0)
			return CLI_TRUNCATED; /* 1: nothing of what was asked */
	}
	w->from_ns = origin + (n->from_set ? n->from_ns : 0);
	w->to_ns = n->to_set ? origin + n->to_ns : UINT64_MAX;
	return -1;
}

/* Main thread. See cli.h. */
int cli_base_add(const char *cmd, struct cli_bases *b, const char *path)
{
	if (b->n == CLI_MAX_BASES) {
		cli_err(cmd, "more than %d --base logs", CLI_MAX_BASES);
		return CLI_USAGE;
	}
	b->path[b->n++] = path;
	return -1;
}

/* Main thread. See cli.h. */
int cli_load_bases(const char *cmd, const struct cli_bases *b, unsigned flags,
		   const struct cli_narrow *nw, struct profile **q, int *rc,
		   char *err, size_t errlen)
{
	int st;
	for (size_t i = 0; i < b->n; i++)
		if ((st = cli_files_check(cmd, b->path[i])) != 0)
			return st;
	return cli_load_narrow(cmd, b->path, b->n, flags, nw, q, rc, err,
			       errlen, 1);
}

/* Main thread. See cli.h. */
int cli_load_narrow(const char *cmd, const char *const *paths, size_t npath,
		    unsigned flags, const struct cli_narrow *n,
		    struct profile **p, int *rc, char *err, size_t errlen,
		    int quiet_warnings)
{
	struct cli_window w;
	int st;
	if (!cli_narrow_any(n))
		return cli_load_logs(cmd, paths, npath, flags, p, rc, err,
				     errlen, quiet_warnings);
	if ((st = cli_narrow_window(cmd, paths, npath, n, &w)) >= 0)
		return st;
	if (n->focus || n->ignore)
		flags |= PROFILE_CALLTREE; /* call paths are filtered on it */
	if (profile_new(p, flags) < 0) {
		cli_err(cmd, "out of memory");
		return CLI_USAGE;
	}
	if ((st = profile_narrow(*p, n->focus, n->ignore, w.win, w.from_ns,
				 w.to_ns, err, errlen)) < 0) {
		cli_err(cmd, "%s", err);
		profile_free(*p);
		*p = NULL;
		return CLI_USAGE;
	}
	return cli_load_into(cmd, paths, npath, p, rc, err, errlen,
			     quiet_warnings);
}
