/*
** ljlog CLI: 'ljlog annotate', the source of the hot Lua functions with
** each line's samples, the function's calls and time on the line that
** defines it, and the allocations made at each line, as perf annotate and
** pprof's list show them. The source comes from the chunk's file (or
** --source-dir), or, for a chunk load()ed from a string without a name,
** from the log itself: LuaJIT keeps such a chunk's source as its name.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "logger/opts.h"
#include "profile/profile.h"
#include "block/reader.h"
#include "util/intern.h"

static const char annotate_usage[] =
    "usage: ljlog annotate [--function F] [-n N] [--source-dir DIR]\n"
    "                      [--focus RE] [--ignore RE] [--from T] [--to T]\n"
    "                      [--from-mark NAME] LOG...\n"
    "\n"
    "Print the source of the hot Lua functions of the LOGs (merged as\n"
    "'ljlog report' merges them): each line with the samples taken there\n"
    "(the function running that line), the allocations made there and\n"
    "their bytes; the line that defines the function also has its calls,\n"
    "self time and total time. The functions are the N with the most\n"
    "samples (then self time, then allocated bytes), or those whose names\n"
    "match F.\n"
    "\n"
    "The source is read from the chunk's file (\"@app.lua\": app.lua as\n"
    "the program named it, or DIR/app.lua and DIR/its base name with\n"
    "--source-dir); a chunk load()ed from a string without a name carries\n"
    "its source in the log. Where there is none (a file not found, a\n"
    "chunk named \"=stdin\"), the lines are printed without text, with a\n"
    "note.\n"
    "\n"
    "  -f, --function F     the functions whose names match F (a regular\n"
    "                       expression), hot or not\n"
    "  -n N                 the N hottest functions (default 5, 0 all)\n"
    "  -s, --source-dir DIR look for source files in DIR too\n" CLI_NARROW_HELP
    "  -h, --help           this help\n"
    "\n"
    "Exit status as for 'ljlog report'; 1 also when no function matches\n"
    "F.\n";

/* One PROTO of the logs: where its source is. */
struct aproto {
	uint64_t numline;
	char *chunk; /* as LuaJIT keeps it (owned) */
	size_t len;
};

/* The PROTOs of the logs, by "file as shown\0firstline". */
struct aprotos {
	struct intern keys;
	struct aproto *v;
	size_t cap;
};

/* Main thread. A PROTO's key into buf. */
static size_t proto_key(const char *file, uint64_t line, char *buf, size_t len)
{
	int n =
	    snprintf(buf, len, "%s%c%llu", file, 0, (unsigned long long)line);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* Main thread (decode sink). Keep a PROTO record's chunk and lines. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct aprotos *a = ud;
	if (o->kind != FORMAT_REC_PROTO)
		return 0;
	char file[4096], key[4200];
	decode_chunk_name(&o->u.proto.chunk, file, sizeof file);
	size_t had = intern_count(&a->keys);
	int64_t k =
	    intern_put(&a->keys, key,
		       proto_key(file, o->u.proto.firstline, key, sizeof key));
	if (k < 0)
		return -ENOMEM;
	if ((size_t)k < had)
		return 0;
	if ((size_t)k >= a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct aproto *v = realloc(a->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	struct aproto *p = &a->v[k];
	p->numline = o->u.proto.numline;
	p->len = o->u.proto.chunk.len;
	if (!(p->chunk = malloc(p->len + 1)))
		return -ENOMEM;
	memcpy(p->chunk, o->u.proto.chunk.s, p->len);
	p->chunk[p->len] = 0;
	return 0;
}

/* Main thread. Collect the PROTOs of the logs (a pass over their MAPPING
** records); 0, or -1 after a message. */
static int load_protos(const char *const *paths, size_t n, struct aprotos *a)
{
	for (size_t i = 0; i < n; i++) {
		struct reader *r;
		struct decode *d;
		struct decode_sink s;
		char err[512];
		memset(&s, 0, sizeof s);
		s.ud = a;
		s.record = on_record;
		if (reader_open(&r, paths[i], 0, err, sizeof err) < 0) {
			cli_err("annotate", "%s", err);
			return -1;
		}
		if (decode_new(&d, &s) < 0) {
			reader_close(r);
			cli_err("annotate", "out of memory");
			return -1;
		}
		int rc = decode_run(r, d, err, sizeof err);
		decode_free(d);
		reader_close(r);
		if (rc == -ENOMEM) {
			cli_err("annotate", "out of memory");
			return -1;
		}
	}
	return 0;
}

/* Main thread. Free the PROTOs. */
static void protos_free(struct aprotos *a)
{
	for (size_t i = 0; i < intern_count(&a->keys); i++)
		free(a->v[i].chunk);
	free(a->v);
	intern_free(&a->keys);
}

/* A source: its lines (pointers into text). */
struct asrc {
	char *text;
	const char **line; /* line[i]: line i + 1 */
	size_t *len;
	size_t n;
};

/* Main thread. Split text (owned by s now) into lines; -1 out of memory. */
static int split(struct asrc *s, char *text, size_t n)
{
	size_t cap = 64;
	s->text = text;
	s->n = 0;
	s->line = malloc(cap * sizeof *s->line);
	s->len = malloc(cap * sizeof *s->len);
	for (size_t i = 0; s->line && s->len && i <= n;) {
		size_t e = i;
		while (e < n && text[e] != '\n')
			e++;
		if (s->n == cap) {
			cap *= 2;
			const char **l = realloc(s->line, cap * sizeof *l);
			size_t *ln = realloc(s->len, cap * sizeof *ln);
			if (l)
				s->line = l;
			if (ln)
				s->len = ln;
			if (!l || !ln)
				return -1;
		}
		size_t len = e - i;
		if (len && text[e - 1] == '\r')
			len--;
		s->line[s->n] = text + i;
		s->len[s->n++] = len;
		if (e == n)
			break;
		i = e + 1;
	}
	return s->line && s->len ? 0 : -1;
}

/* Main thread. Read a whole file; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t cap = 0;
	*n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(b, cap);
			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		size_t r = fread(b + *n, 1, 4096, f);
		*n += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	b[*n] = 0;
	return b;
}

/* Main thread. The source of chunk into s: from the log (a string chunk),
** or from its file (as named, or in dir); where, or why not, into note. */
static void find_source(const struct aproto *pr, const char *dir,
			struct asrc *s, char *note, size_t notelen)
{
	memset(s, 0, sizeof *s);
	note[0] = 0;
	if (!pr) {
		snprintf(note, notelen, "no PROTO record found for it");
		return;
	}
	if (pr->chunk[0] == '=') {
		snprintf(note, notelen,
			 "chunk \"%s\" has no source file, and the log keeps "
			 "none",
			 pr->chunk + 1);
		return;
	}
	if (pr->chunk[0] != '@') { /* load()ed from a string: the source */
		char *t = malloc(pr->len + 1);
		if (t) {
			memcpy(t, pr->chunk, pr->len + 1);
			if (split(s, t, pr->len) == 0)
				snprintf(note, notelen,
					 "source: the chunk's string, kept in "
					 "the log");
		}
		return;
	}
	const char *path = pr->chunk + 1;
	char buf[8192];
	const char *tries[3];
	size_t nt = 0;
	if (dir) {
		const char *base = strrchr(path, '/');
		if (path[0] != '/') {
			snprintf(buf, sizeof buf, "%s/%s", dir, path);
			tries[nt++] = strdup(buf);
		}
		snprintf(buf, sizeof buf, "%s/%s", dir, base ? base + 1 : path);
		tries[nt++] = strdup(buf);
	}
	tries[nt++] = strdup(path);
	for (size_t i = 0; i < nt; i++) {
		size_t n;
		char *t = tries[i] ? slurp(tries[i], &n) : NULL;
		if (t && !s->text) {
			if (split(s, t, n) == 0)
				snprintf(note, notelen, "source: %s", tries[i]);
		} else
			free(t);
	}
	if (!s->text)
		snprintf(note, notelen,
			 "source not found: %s%s (try --source-dir DIR)", path,
			 dir ? " (nor in the source dir)" : "");
	for (size_t i = 0; i < nt; i++)
		free((char *)tries[i]);
}

/* Per line of one function: samples, allocations and bytes. */
struct aline {
	uint64_t samples, allocs, bytes;
};

/* Main thread. ROUTINE's figures line: of the families fams
** (report_recorded) says were recorded, "not recorded" for the others. */
static void print_totals(const struct profile *p, const struct profile_fn *f,
			 unsigned fams)
{
	char t1[32], t2[32];
	printf("  samples: ");
	if (fams & OPTS_SAMPLE && f->samples_lua > f->samples)
		printf("%" PRIu64 " (%" PRIu64 " in builtins it called; with "
		       "callees %" PRIu64 ")",
		       f->samples_lua, f->samples_lua - f->samples,
		       f->samples_total);
	else if (fams & OPTS_SAMPLE)
		printf("%" PRIu64 " (with callees %" PRIu64 ")", f->samples_lua,
		       f->samples_total);
	else
		printf("not recorded");
	printf(", calls: ");
	if (fams & OPTS_CALLS)
		printf("%" PRIu64 ", self %s, total %s", f->calls,
		       cli_fmt_time(t1, sizeof t1, profile_ns(p, f->self)),
		       cli_fmt_time(t2, sizeof t2, profile_ns(p, f->total)));
	else
		printf("not recorded");
	printf(", allocated: ");
	if (fams & OPTS_ALLOC)
		printf("%" PRIu64 " (%" PRIu64 " bytes)\n", f->alloc_count,
		       f->alloc_bytes);
	else
		printf("not recorded\n");
}

/* Main thread. Print function fn of p with its source; fams: the
** families recorded (report_recorded). */
static void print_fn(const struct profile *p, uint32_t fn,
		     const struct aprotos *a, const char *dir, unsigned fams)
{
	const struct profile_fn *f = &p->fns[fn];
	char key[4200], note[8400];
	int64_t k = intern_find(&a->keys, key,
				proto_key(f->file, f->line, key, sizeof key));
	const struct aproto *pr = k >= 0 ? &a->v[k] : NULL;
	uint64_t first = f->line ? f->line : 1;
	uint64_t last = pr ? f->line + pr->numline : first;
	uint64_t noline = 0; /* samples at no line known (line 0) */
	uint64_t nlallocs = 0, nlbytes = 0; /* allocations likewise */
	struct asrc s;
	find_source(pr, dir, &s, note, sizeof note);
	if (!pr && s.n)
		last = s.n;
	size_t nl = (size_t)(last >= first ? last - first + 1 : 1);
	struct aline *ln = calloc(nl, sizeof *ln);
	if (!ln) {
		cli_err("annotate", "out of memory");
		return;
	}
	for (size_t i = 0; i < p->smp.nline; i++) {
		const struct samples_line *l = &p->smp.lines[i];
		if (l->fn == fn && l->line == 0)
			noline += l->samples;
		else if (l->fn == fn && l->line >= first && l->line <= last)
			ln[l->line - first].samples += l->samples;
	}
	for (size_t i = 0; i < p->heap.nsite; i++) {
		const struct heap_site *st = &p->heap.sites[i];
		if (st->fn == fn && st->line == 0) {
			nlallocs += st->alloc_count;
			nlbytes += st->alloc_bytes;
		} else if (st->fn == fn && st->line >= first &&
			   st->line <= last) {
			ln[st->line - first].allocs += st->alloc_count;
			ln[st->line - first].bytes += st->alloc_bytes;
		}
	}
	printf("\nROUTINE %s\n  %s\n", f->name, note);
	print_totals(p, f, fams);
	printf("%9s %9s %11s %8s %10s %6s  %s\n", "samples", "calls", "self",
	       "allocs", "bytes", "line", "source");
	for (uint64_t l = first; l <= last; l++) {
		const struct aline *x = &ln[l - first];
		char c[24] = "", tm[32] = "", al[24] = "", by[24] = "",
		     sm[24] = "";
		if (x->samples)
			snprintf(sm, sizeof sm, "%" PRIu64, x->samples);
		if (l == f->line && (f->calls || f->self)) {
			snprintf(c, sizeof c, "%" PRIu64, f->calls);
			cli_fmt_time(tm, sizeof tm, profile_ns(p, f->self));
		}
		if (x->allocs) {
			snprintf(al, sizeof al, "%" PRIu64, x->allocs);
			cli_fmt_bytes(by, sizeof by, (int64_t)x->bytes);
		}
		printf("%9s %9s %11s %8s %10s %6" PRIu64 "  ", sm, c, tm, al,
		       by, l);
		if (l >= 1 && l <= s.n)
			fwrite(s.line[l - 1], 1, s.len[l - 1], stdout);
		putchar('\n');
	}
	if (noline || nlallocs) {
		char sm[24] = "", al[24] = "", by[24] = "";
		if (noline)
			snprintf(sm, sizeof sm, "%" PRIu64, noline);
		if (nlallocs) {
			snprintf(al, sizeof al, "%" PRIu64, nlallocs);
			cli_fmt_bytes(by, sizeof by, (int64_t)nlbytes);
		}
		printf("%9s %9s %11s %8s %10s %6s  (%s at no line known)\n", sm,
		       "", "", al, by, "?",
		       noline && nlallocs ? "samples and allocations"
		       : noline		  ? "samples"
					  : "allocations");
	}
	free(ln);
	free(s.text);
	free(s.line);
	free(s.len);
}

/* Main thread. qsort order: samples (with the builtins each calls, as
** its rows count them), then self time, then bytes. */
static const struct profile *sort_p;
static int cmp_hot(const void *x, const void *y)
{
	const struct profile_fn *a = &sort_p->fns[*(const uint32_t *)x];
	const struct profile_fn *b = &sort_p->fns[*(const uint32_t *)y];
	if (a->samples_lua != b->samples_lua)
		return a->samples_lua > b->samples_lua ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->alloc_bytes != b->alloc_bytes)
		return a->alloc_bytes > b->alloc_bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Main thread. The functions to print (*n of them), or NULL; st set to an
** exit status on failure. */
static uint32_t *pick(const struct profile *p, const char *fre, size_t limit,
		      size_t *n, int *st)
{
	regex_t re;
	uint32_t *ix = malloc((p->nfn ? p->nfn : 1) * sizeof *ix);
	*n = 0;
	if (!ix) {
		*st = CLI_USAGE;
		return NULL;
	}
	if (fre && regcomp(&re, fre, REG_EXTENDED | REG_NOSUB) != 0) {
		cli_err("annotate", "--function '%s': not a regular expression",
			fre);
		free(ix);
		*st = CLI_USAGE;
		return NULL;
	}
	for (uint32_t i = 0; i < p->nfn; i++) {
		const struct profile_fn *f = &p->fns[i];
		if (f->kind != FNID_LUA)
			continue;
		if (fre ? regexec(&re, f->name, 0, NULL, 0) == 0
			: (f->samples_lua || f->self || f->alloc_bytes))
			ix[(*n)++] = i;
	}
	if (fre)
		regfree(&re);
	sort_p = p;
	if (*n)
		qsort(ix, *n, sizeof *ix, cmp_hot);
	if (!fre && limit && *n > limit)
		*n = limit;
	if (!*n) {
		cli_err("annotate",
			fre ? "no Lua function matches '%s'"
			    : "no Lua function has samples, time or "
			      "allocations%s",
			fre ? fre : "");
		free(ix);
		*st = CLI_TRUNCATED;
		return NULL;
	}
	return ix;
}

/* Main thread. 'ljlog annotate'. */
int cli_annotate(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"function", required_argument, NULL, 'f'},
	    {"source-dir", required_argument, NULL, 's'},
	    CLI_NARROW_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *fre = NULL, *dir = NULL;
	size_t limit = 5;
	struct cli_narrow nw = {0};
	char *e;
	int o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+f:s:n:h", lo, NULL)) != -1) {
		int t = cli_narrow_opt("annotate", &nw, o, optarg);
		if (t == 1)
			continue;
		if (t)
			return t;
		switch (o) {
		case 'f': fre = optarg; break;
		case 's': dir = optarg; break;
		case 'n':
			limit = strtoul(optarg, &e, 10);
			if (!*optarg || *e || *optarg == '-') {
				cli_err("annotate",
					"-n wants a number, not '%s'", optarg);
				return CLI_USAGE;
			}
			break;
		case 'h': fputs(annotate_usage, stdout); return CLI_OK;
		default:
			if (optopt)
				cli_err("annotate", "option '%s' needs a value",
					argv[optind - 1]);
			else
				cli_err("annotate", "unknown option '%s'",
					argv[optind - 1]);
			cli_see_help("annotate");
			return CLI_USAGE;
		}
	}
	int st = cli_narrow_check("annotate", &nw);
	if (st >= 0)
		return st;
	size_t npath;
	const char *const *paths =
	    cli_files_arg("annotate", argc, argv, &npath);
	if (!paths)
		return cli_file_rc;
	struct profile *p;
	char err[512];
	int rc;
	if ((st = cli_load_narrow("annotate", paths, npath, 0, &nw, &p, &rc,
				  err, sizeof err, 1)) >= 0)
		return st;
	size_t n;
	uint32_t *ix = pick(p, fre, limit, &n, &st);
	struct aprotos a;
	memset(&a, 0, sizeof a);
	if (ix && load_protos(paths, npath, &a) < 0)
		st = CLI_USAGE;
	else if (ix) {
		unsigned fams = report_recorded_all(p);
		for (size_t i = 0; i < n; i++)
			print_fn(p, ix[i], &a, dir, fams);
		st = rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
	}
	protos_free(&a);
	free(ix);
	profile_free(p);
	return st;
}
