/*
** ljlog CLI: 'ljlog heap', the heap snapshots of a log.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/heap_dom.h"
#include "decode/decode.h"
#include "proc/fanout.h"
#include "proc/fnid.h"
#include "proc/heap.h"
#include "proc/hsnap.h"

static const char heap_usage[] =
    "usage: ljlog heap [--json] FILE\n"
    "       ljlog heap --top N [--snapshot K] [--json] FILE\n"
    "       ljlog heap --by type|site|metatable [--snapshot K] [-n N] [--json]\n"
    "                  FILE\n"
    "       ljlog heap --path-to ID [--snapshot K] [--json] FILE\n"
    "       ljlog heap --diff K1 K2 [-n N] [--json] FILE\n"
    "\n"
    "The heap snapshots of a log (ljlog.snapshot(), the snapshot= option).\n"
    "Without a mode, one line per snapshot: its index K (from 1, in log\n"
    "order), VM, time since the log started, objects and their bytes, the\n"
    "VM's allocations that are no objects (stacks, string table, JIT\n"
    "buffers...), LuaJIT's own heap total, what neither accounts for\n"
    "(rest; 0 when the sizes add up) and the time the VM was stopped.\n"
    "\n"
    "  --top N            the N objects of snapshot K that retain the most\n"
    "                     bytes (their own and all the objects only they\n"
    "                     keep alive: the dominator tree from the roots,\n"
    "                     weak references do not retain), each with its ID,\n"
    "                     type, own and retained bytes and a shortest path\n"
    "                     from a root (_G.HOLD[17].name, upvalue x of\n"
    "                     _G.f (app.lua:3), stack of coroutine _G.co\n"
    "                     (co.lua:5) local buf...). Objects no root reaches\n"
    "                     by strong references are counted apart\n"
    "  --by type          objects and bytes by type in snapshot K\n"
    "  --by metatable     tables and userdata by metatable (its __name,\n"
    "                     else its path; \"(none)\")\n"
    "  --by site          objects and bytes by allocation site: the ALLOC\n"
    "                     or REALLOC event that made each object's block\n"
    "                     (needs the alloc option; with alloc=RATE only\n"
    "                     sampled objects have one, not scaled). Objects\n"
    "                     without one are counted apart, with the reason.\n"
    "                     Exit status 1 when the snapshot can have none\n"
    "                     (a log before format version 10), 2 when the\n"
    "                     log has no allocation events\n"
    "  --snapshot K       the snapshot for --top, --by and --path-to\n"
    "                     (default: the largest, by the bytes of the\n"
    "                     objects a root reaches; text says which)\n"
    "  --path-to ID       a shortest chain of references from a root to the\n"
    "                     object with heap ID ID in snapshot K, as a path\n"
    "                     (the first line) and step by step\n"
    "  --diff K1 K2       K1 and K2 compared (of the same VM): totals and\n"
    "                     by type, then K2's objects that K1 has not (new\n"
    "                     IDs) grouped by the path of their nearest old\n"
    "                     holder (dominator), biggest first, those no root\n"
    "                     reaches, the largest new objects with what they\n"
    "                     hold (like ones, [*] for their indexes, as one\n"
    "                     row), and by allocation site (as --by site)\n"
    "  -n, --limit N      text: at most N rows a list (default 20, 0: all);\n"
    "                     JSON lists everything\n"
    "  --json             JSON instead of text\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 success, 1 truncated or empty log, no such snapshot\n"
    "or object, 2 usage error or the file cannot be opened, 3 corrupt\n"
    "log or not a log.\n";

enum { BY_TYPE = 1, BY_SITE, BY_MT }; /* --by */

/* The allocation events a load joins snapshots with (sites). */
struct alloc_src {
	struct fnid fnid;
	struct heap heap;
};

/* Main thread. Decode path into h, its objects given sites from a's
** events when a is not NULL; the exit status, or -1 to go on. */
static int load(const char *path, struct hsnap *h, struct alloc_src *a)
{
	char err[512];
	struct reader *r;
	struct decode *d;
	struct decode_sink sink;
	struct fanout fan;
	hsnap_sink_sites(h, a ? &a->heap : NULL, &fan, &sink);
	int rc = reader_open(&r, path, 0, err, sizeof err);
	if (rc < 0) {
		cli_err("heap", "%s", err);
		return CLI_USAGE;
	}
	if (decode_new(&d, &sink) < 0) {
		reader_close(r);
		cli_err("heap", "out of memory");
		return CLI_USAGE;
	}
	rc = decode_run(r, d, err, sizeof err);
	decode_free(d);
	reader_close(r);
	hsnap_finish(h);
	if (h->err) {
		cli_err("heap", "out of memory");
		return CLI_USAGE;
	}
	if (rc == -ENODATA)
		cli_err("heap",
			"warning: log truncated, listing what is there: %s",
			err);
	else if (rc < 0 && cli_status(rc) == CLI_USAGE) {
		cli_err("heap", "%s", err);
		return CLI_USAGE;
	} else if (rc < 0)
		cli_err("heap", "corrupt log, listing the part before: %s",
			err);
	return rc < 0 ? -1 - cli_status(rc) : -1;
}

/* Main thread. Free a (may be NULL). */
static void src_free(struct alloc_src *a)
{
	if (a) {
		heap_free(&a->heap);
		fnid_free(&a->fnid);
	}
}

/* Main thread. Exit status from load's "go on" code (-1 - status). */
static int status_of(int go)
{
	return go < -1 ? -1 - go : CLI_OK;
}

/* Main thread. Parse a snapshot index K ("1".."n"); 0 when bad. */
static size_t parse_k(const char *s)
{
	char *e;
	unsigned long long v = strtoull(s, &e, 10);
	return (*s && !*e && s[0] != '-') ? (size_t)v : 0;
}

/* Main thread. The rest: gc_total minus objects and other parts. */
static long long rest_of(const struct hsnap_one *s)
{
	return (long long)s->gc_total - (long long)s->bytes -
	       (long long)s->other;
}

/* Main thread. The live bytes of snapshot s: its objects' but those no
** root reaches. */
static uint64_t live_of(const struct hsnap_one *s)
{
	return s->bytes - s->unreachable_bytes;
}

/* Main thread. The snapshot with the most live bytes (the first of
** equals), 0 when h has none. */
static size_t largest(const struct hsnap *h)
{
	size_t k = 0;
	for (size_t i = 0; i < h->n; i++)
		if (!k || live_of(&h->s[i]) > live_of(&h->s[k - 1]))
			k = i + 1;
	return k;
}

/* Main thread. The list of snapshots. */
static void print_list(const struct hsnap *h, int json)
{
	if (json) {
		struct json j;
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_arr(&j, "snapshots");
		for (size_t i = 0; i < h->n; i++) {
			const struct hsnap_one *s = &h->s[i];
			json_obj(&j, NULL);
			json_u64(&j, "index", i + 1);
			json_u64(&j, "vm", s->vm);
			json_u64(&j, "snapshot", s->seq);
			json_u64(&j, "time_ns", s->time_ns);
			json_u64(&j, "objects", s->objects);
			json_u64(&j, "bytes", s->bytes);
			json_u64(&j, "other", s->other);
			json_u64(&j, "gc_total", s->gc_total);
			json_i64(&j, "rest", rest_of(s));
			json_u64(&j, "unreachable", s->unreachable);
			json_cstr(&j, "gc_state",
				  format_gc_phase_name(s->gcstate));
			json_u64(&j, "pause_ns", s->pause_ns);
			json_bool(&j, "complete", s->complete);
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_close(&j, '}');
		putchar('\n');
		return;
	}
	if (!h->n) {
		printf("no heap snapshots in this log; take one with the "
		       "option snapshot=exit (or a signal) or "
		       "ljlog.snapshot()\n");
		return;
	}
	printf("%4s %4s %10s %10s %10s %10s %10s %10s %6s %10s\n", "K", "vm",
	       "time(s)", "objects", "bytes", "live", "other", "gc total",
	       "rest", "pause(ms)");
	for (size_t i = 0; i < h->n; i++) {
		const struct hsnap_one *s = &h->s[i];
		char b[4][32];
		printf("%4zu %4u %10.3f %10llu %10s %10s %10s %10s %6lld "
		       "%10.3f%s\n",
		       i + 1, s->vm, s->time_ns / 1e9,
		       (unsigned long long)s->objects,
		       cli_fmt_bytes_as(b[0], sizeof b[0], (int64_t)s->bytes,
					CLI_BYTES_TIB),
		       cli_fmt_bytes_as(b[1], sizeof b[1], (int64_t)live_of(s),
					CLI_BYTES_TIB),
		       cli_fmt_bytes_as(b[2], sizeof b[2], (int64_t)s->other,
					CLI_BYTES_TIB),
		       cli_fmt_bytes_as(b[3], sizeof b[3], (int64_t)s->gc_total,
					CLI_BYTES_TIB),
		       rest_of(s), s->pause_ns / 1e6,
		       s->complete ? "" : "  (incomplete)");
	}
}

/* Main thread. Objects and bytes by type of snapshot k. */
static void print_by_type(const struct hsnap *h, size_t k, int json)
{
	const struct hsnap_one *s = &h->s[k - 1];
	struct json j;
	if (json) {
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_u64(&j, "snapshot", k);
		json_arr(&j, "types");
	} else {
		char bt[32];
		printf("snapshot %zu (vm %u): %llu objects, %s\n", k, s->vm,
		       (unsigned long long)s->objects,
		       cli_fmt_bytes_as(bt, sizeof bt, (int64_t)s->bytes,
					CLI_BYTES_TIB));
		printf("%-10s %10s %10s\n", "type", "objects", "bytes");
	}
	for (unsigned t = 1; t < FORMAT_HTYPE__MAX; t++) {
		if (json) {
			json_obj(&j, NULL);
			json_cstr(&j, "type", format_htype_name(t));
			json_u64(&j, "objects", s->n[t]);
			json_u64(&j, "bytes", s->b[t]);
			json_close(&j, '}');
		} else if (s->n[t]) {
			char bt[32];
			printf("%-10s %10llu %10s\n", format_htype_name(t),
			       (unsigned long long)s->n[t],
			       cli_fmt_bytes_as(bt, sizeof bt, (int64_t)s->b[t],
						CLI_BYTES_TIB));
		}
	}
	if (json) {
		json_close(&j, ']');
		json_close(&j, '}');
		putchar('\n');
	}
}

/* Main thread. The object o as text: "#ID type size "text"". */
static void print_obj(const struct hsnap_obj *o)
{
	printf("#%llu %s %llu ", (unsigned long long)o->id,
	       format_htype_name(o->type), (unsigned long long)o->size);
	cli_quote(stdout, o->text, o->textlen);
}

/* Main thread. The path to id in snapshot k. */
static int print_path(const struct hsnap *h, size_t k, uint64_t id, int json)
{
	const struct hsnap_keep *kp = &h->keep[0];
	if (!hsnap_find(kp, id)) {
		cli_err("heap", "snapshot %zu has no object with ID %llu", k,
			(unsigned long long)id);
		return CLI_TRUNCATED; /* 1: no such object, as no snapshot */
	}
	const struct hsnap_edge **e;
	long n = hsnap_path(kp, id, &e);
	if (n < 0) {
		cli_err("heap", "out of memory");
		return CLI_USAGE;
	}
	struct json j;
	if (json) {
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_u64(&j, "snapshot", k);
		json_u64(&j, "id", id);
		json_bool(&j, "reachable", n > 0);
		char pt[1024];
		heap_path_text(kp, e, (size_t)n, pt, sizeof pt);
		json_cstr(&j, "readable", pt);
		json_arr(&j, "path");
	} else if (n == 0) {
		printf("no root reaches #%llu in snapshot %zu: ",
		       (unsigned long long)id, k);
		print_obj(hsnap_find(kp, id));
		printf("\n");
	} else {
		char pt[1024];
		heap_path_text(kp, e, (size_t)n, pt, sizeof pt);
		printf("%s\n", pt);
	}
	for (long i = 0; i < n; i++) {
		const struct hsnap_obj *o = hsnap_find(kp, e[i]->dst);
		char lb[256];
		hsnap_edge_label(e[i], lb, sizeof lb);
		if (json) {
			json_obj(&j, NULL);
			json_cstr(&j, i == 0 ? "root" : "ref", lb);
			json_bool(&j, "weak", e[i]->weak);
			json_u64(&j, "id", e[i]->dst);
			json_cstr(&j, "type",
				  o ? format_htype_name(o->type) : "?");
			json_u64(&j, "size", o ? o->size : 0);
			json_str(&j, "text", o ? o->text : "",
				 o ? o->textlen : 0);
			json_close(&j, '}');
			continue;
		}
		printf(i == 0 ? "root %s" : "  %s%s", lb,
		       e[i]->weak ? " (weak)" : "");
		printf(" -> ");
		if (o)
			print_obj(o);
		else
			printf("#%llu", (unsigned long long)e[i]->dst);
		printf("\n");
	}
	if (json) {
		json_close(&j, ']');
		json_close(&j, '}');
		putchar('\n');
	}
	free(e);
	return CLI_OK;
}

/* Main thread. Snapshots k1 and k2 compared: totals, by type, then the
** groups of heap_diff_holders; text: at most limit rows a list (0 all). */
static int print_diff(const struct hsnap *h, size_t k1, size_t k2, size_t limit,
		      int json)
{
	const struct hsnap_one *a = &h->s[k1 - 1], *b = &h->s[k2 - 1];
	if (a->vm != b->vm) {
		cli_err("heap",
			"snapshots %zu and %zu are of different VMs "
			"(%u and %u): their IDs do not compare",
			k1, k2, a->vm, b->vm);
		return CLI_USAGE;
	}
	const struct hsnap_keep *ka = &h->keep[0], *kb = &h->keep[1];
	uint64_t gone = 0, nnew = 0;
	for (size_t i = 0; i < ka->n; i++)
		gone += !hsnap_find(kb, ka->v[i].id);
	for (size_t i = 0; i < kb->n; i++)
		nnew += !hsnap_find(ka, kb->v[i].id);
	struct json j;
	char b1[32], b2[32], b3[32];
	if (json) {
		json_init(&j, stdout, 1);
		json_obj(&j, NULL);
		json_u64(&j, "from", k1);
		json_u64(&j, "to", k2);
		json_u64(&j, "objects_from", a->objects);
		json_u64(&j, "objects_to", b->objects);
		json_u64(&j, "bytes_from", a->bytes);
		json_u64(&j, "bytes_to", b->bytes);
		json_arr(&j, "types");
	} else {
		printf("snapshot %zu -> %zu (vm %u): %llu -> %llu objects "
		       "(%+lld), %s -> %s (%s); %llu new, %llu gone\n",
		       k1, k2, a->vm, (unsigned long long)a->objects,
		       (unsigned long long)b->objects,
		       (long long)(b->objects - a->objects),
		       cli_fmt_bytes_as(b1, sizeof b1, (int64_t)a->bytes,
					CLI_BYTES_TIB),
		       cli_fmt_bytes_as(b2, sizeof b2, (int64_t)b->bytes,
					CLI_BYTES_TIB),
		       cli_fmt_bytes_as(b3, sizeof b3,
					(int64_t)(b->bytes - a->bytes),
					CLI_BYTES_TIB | CLI_BYTES_PLUS),
		       (unsigned long long)nnew, (unsigned long long)gone);
		printf("by type:");
	}
	int sep = 0;
	for (unsigned t = 1; t < FORMAT_HTYPE__MAX; t++) {
		if (json) {
			json_obj(&j, NULL);
			json_cstr(&j, "type", format_htype_name(t));
			json_u64(&j, "objects_from", a->n[t]);
			json_u64(&j, "objects_to", b->n[t]);
			json_u64(&j, "bytes_from", a->b[t]);
			json_u64(&j, "bytes_to", b->b[t]);
			json_close(&j, '}');
		} else if (a->n[t] != b->n[t] || a->b[t] != b->b[t]) {
			printf("%s %s %+lld (%s)", sep++ ? "," : "",
			       format_htype_name(t),
			       (long long)(b->n[t] - a->n[t]),
			       cli_fmt_bytes_as(
				   b1, sizeof b1, (int64_t)(b->b[t] - a->b[t]),
				   CLI_BYTES_TIB | CLI_BYTES_PLUS));
		}
	}
	if (json)
		json_close(&j, ']');
	else
		printf("%s\n", sep ? "" : " no change");
	int rc = heap_diff_holders(h, json ? &j : NULL, limit);
	if (rc)
		return rc;
	if (!json)
		return CLI_OK;
	json_u64(&j, "gone", gone);
	json_arr(&j, "new");
	for (size_t i = 0; i < kb->n; i++) {
		const struct hsnap_obj *o = &kb->v[i];
		if (hsnap_find(ka, o->id))
			continue;
		json_obj(&j, NULL);
		json_u64(&j, "id", o->id);
		json_cstr(&j, "type", format_htype_name(o->type));
		json_u64(&j, "size", o->size);
		json_str(&j, "text", o->text, o->textlen);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_close(&j, '}');
	putchar('\n');
	return CLI_OK;
}

/* What the command line asks for. */
struct heap_args {
	int json, by, path, top; /* by: BY_*; path: --path-to; top: --top */
	size_t k, d1, d2, ntop, limit; /* k: --snapshot (0 the largest) */
	uint64_t id;		       /* --path-to's heap ID */
};

/* Main thread. A count or ID (in *v) from s: 0, or -1 when it is none
** (not a number, negative). */
static int parse_num(const char *s, uint64_t *v)
{
	char *e;
	*v = strtoull(s, &e, 10);
	return !*s || *e || s[0] == '-' ? -1 : 0;
}

/* Main thread. --by's argument into a->by: -1, or CLI_USAGE after a
** message. */
static int parse_by(struct heap_args *a, const char *s)
{
	static const struct {
		const char *name;
		int by;
	} bys[] = {{"type", BY_TYPE}, {"site", BY_SITE}, {"metatable", BY_MT}};
	for (size_t i = 0; i < sizeof bys / sizeof bys[0]; i++)
		if (!strcmp(s, bys[i].name)) {
			a->by = bys[i].by;
			return -1;
		}
	cli_err("heap", "--by '%s': 'type', 'site' or 'metatable'", s);
	return CLI_USAGE;
}

/* Main thread. Take option o (getopt's, with optarg; --diff takes the
** next argument too) into a: -1, or the exit status (--help, a usage
** error after a message). */
static int take_opt(struct heap_args *a, int o, int argc, char **argv)
{
	uint64_t v;
	switch (o) {
	case 'j': a->json = 1; break;
	case 'b': return parse_by(a, optarg);
	case 'n':
		if (parse_num(optarg, &v) < 0) {
			cli_err("heap", "-n '%s': not a count (0: all)",
				optarg);
			return CLI_USAGE;
		}
		a->limit = (size_t)v;
		break;
	case 't':
		if (!(a->ntop = parse_k(optarg))) {
			cli_err("heap", "--top '%s': not a count (1, 2, ...)",
				optarg);
			return CLI_USAGE;
		}
		a->top = 1;
		break;
	case 's':
		if (!(a->k = parse_k(optarg))) {
			cli_err("heap",
				"--snapshot '%s': not a snapshot "
				"index (1, 2, ...)",
				optarg);
			return CLI_USAGE;
		}
		break;
	case 'p':
		if (parse_num(optarg, &a->id) < 0 || !a->id) {
			cli_err("heap", "--path-to '%s': not a heap ID",
				optarg);
			return CLI_USAGE;
		}
		a->path = 1;
		break;
	case 'd':
		if (optind >= argc || !(a->d1 = parse_k(optarg)) ||
		    !(a->d2 = parse_k(argv[optind]))) {
			cli_err("heap", "--diff needs two snapshot "
					"indexes: --diff K1 K2");
			return CLI_USAGE;
		}
		optind++;
		break;
	case 'h': fputs(heap_usage, stdout); return CLI_OK;
	default:
		cli_err("heap", "unknown option or missing value '%s'",
			argv[optind - 1]);
		cli_see_help("heap");
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. Read the options into a: -1, or the exit status. */
static int parse_opts(int argc, char **argv, struct heap_args *a)
{
	static const struct option lo[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"by", required_argument, NULL, 'b'},
	    {"snapshot", required_argument, NULL, 's'},
	    {"path-to", required_argument, NULL, 'p'},
	    {"diff", required_argument, NULL, 'd'},
	    {"top", required_argument, NULL, 't'},
	    {"limit", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o, t;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+hn:", lo, NULL)) != -1)
		if ((t = take_opt(a, o, argc, argv)) >= 0)
			return t;
	if ((a->by != 0) + a->path + a->top + (a->d1 != 0) > 1) {
		cli_err("heap",
			"--by, --top, --path-to and --diff go one at a time");
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. The default snapshot, the largest, into a->k (read from
** the totals of a first pass over file), and how many there are into
** *nsnap: -1, or the exit status after a message. */
static int pick_largest(const char *file, struct heap_args *a, size_t *nsnap)
{
	struct hsnap h;
	hsnap_init(&h, 0, 0, 0);
	int go = load(file, &h, NULL);
	a->k = largest(&h);
	*nsnap = h.n;
	hsnap_free(&h);
	if (go >= 0)
		return go;
	if (!a->k) {
		cli_err("heap",
			"no heap snapshots in %s; take one with the "
			"option snapshot=exit (or a signal) or "
			"ljlog.snapshot()",
			file);
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. The view a asks for of the snapshots h; its exit status. */
static int heap_view(const struct heap_args *a, struct hsnap *h)
{
	size_t k = a->k;
	if (a->by == BY_TYPE)
		print_by_type(h, k, a->json);
	else if (a->by == BY_SITE)
		return heap_by_site(h, k, a->limit, a->json);
	else if (a->by == BY_MT)
		return heap_by_metatable(h, k, a->limit, a->json);
	else if (a->top)
		return heap_top(h, k, a->ntop, a->json);
	else if (a->path)
		return print_path(h, k, a->id, a->json);
	else if (a->d1)
		return print_diff(h, a->d1, a->d2, a->limit, a->json);
	else
		print_list(h, a->json);
	return CLI_OK;
}

/* Main thread. 'ljlog heap'. */
int cli_heap(int argc, char **argv)
{
	struct heap_args a = {0};
	int go, rc;
	char b1[32];
	size_t nsnap = 0;
	a.limit = 20;
	if ((rc = parse_opts(argc, argv, &a)) >= 0)
		return rc;
	const char *file = cli_file_arg("heap", heap_usage, argc, argv);
	if (!file)
		return cli_file_rc;
	int edges = a.path || a.top || a.by == BY_MT; /* of snapshot k */
	int keep = edges || a.by == BY_SITE;	      /* snapshot k's objects */
	int picked = !a.k; /* the default snapshot: the largest */
	if ((keep || a.by) && !a.k &&
	    (rc = pick_largest(file, &a, &nsnap)) >= 0)
		return rc;
	/* --by site and --diff: objects get the sites of their blocks. */
	struct alloc_src src, *as = a.by == BY_SITE || a.d1 ? &src : NULL;
	if (as) {
		fnid_init(&as->fnid);
		heap_init(&as->heap, &as->fnid);
	}
	struct hsnap h;
	hsnap_init(&h, keep ? a.k : a.d1, a.d2, edges ? 1 : a.d1 ? 2 : 0);
	go = load(file, &h, as);
	if (go >= 0) {
		hsnap_free(&h);
		src_free(as);
		return go;
	}
	size_t need = a.d2 > a.d1 ? a.d2 : a.d1 > a.k ? a.d1 : a.k;
	if ((a.by || a.path || a.top || a.d1) && (need == 0 || need > h.n)) {
		cli_err("heap", "no snapshot %zu: %s has %zu", need, file, h.n);
		hsnap_free(&h);
		src_free(as);
		return CLI_TRUNCATED; /* 1, as export --format heapsnapshot */
	}
	if (!a.json && picked && a.k && (a.by || a.top)) /* which and why */
		printf("snapshot %zu of %zu (the largest: %s live; --snapshot "
		       "K for another)\n",
		       a.k, nsnap,
		       cli_fmt_bytes_as(b1, sizeof b1,
					(int64_t)live_of(&h.s[a.k - 1]),
					CLI_BYTES_TIB));
	rc = heap_view(&a, &h);
	hsnap_free(&h);
	src_free(as);
	return rc != CLI_OK ? rc : status_of(go);
}
