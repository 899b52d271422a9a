/*
** ljlog exports: pprof (profile.proto, gzipped).
** A protobuf encoder of its own (varints, length-delimited fields), the
** string, function and location tables, then zlib's gzip stream.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "export/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "blocks/format.h"
#include "profile/profile.h"
#include "util/hmap.h"
#include "util/intern.h"

const char export_pprof_omits[] =
    "the coroutine of a sample (the log does not say it) and of a call\n"
    "the call tree's VMs and coroutines (its paths merge them)\n"
    "allocation stacks (an allocation is its site: a function and a line)\n"
    "GC phases and cycles, traces and trace aborts, per-VM heap figures\n"
    "host (C) frames' addresses and objects other than by name\n"
    "outer zones (the zone label is the innermost open zone), marks\n"
    "live (inuse) figures by zone (they are on the site's unlabelled "
    "sample)\n";

/* -- Protobuf encoding -------------------------------------------------------- */

/* Wire types. */
enum { PB_VARINT = 0, PB_LEN = 2 };

/* A growing byte buffer; err is sticky (out of memory). */
struct pb {
	uint8_t *b;
	size_t len, cap;
	int err;
};

/* Room for n more bytes; 0 or -ENOMEM (sticky). */
static int pb_room(struct pb *p, size_t n)
{
	if (p->err)
		return p->err;
	if (p->len + n <= p->cap)
		return 0;
	size_t cap = p->cap ? p->cap * 2 : 256;
	while (cap < p->len + n)
		cap *= 2;
	uint8_t *b = realloc(p->b, cap);
	if (!b)
		return p->err = -ENOMEM;
	p->b = b;
	p->cap = cap;
	return 0;
}

/* A base-128 varint. */
static void pb_varint(struct pb *p, uint64_t v)
{
	if (pb_room(p, 10))
		return;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		p->b[p->len++] = c | (v ? 0x80 : 0);
	} while (v);
}

/* A field's key. */
static void pb_key(struct pb *p, unsigned field, unsigned wire)
{
	pb_varint(p, (uint64_t)field << 3 | wire);
}

/* A varint field (int64 values are never negative here);
** left out when 0, protobuf's default. */
static void pb_u64(struct pb *p, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(p, field, PB_VARINT);
	pb_varint(p, v);
}

/* A length-delimited field: bytes, a string or a message. */
static void pb_bytes(struct pb *p, unsigned field, const void *s, size_t n)
{
	pb_key(p, field, PB_LEN);
	pb_varint(p, n);
	if (pb_room(p, n) == 0 && n) {
		memcpy(p->b + p->len, s, n);
		p->len += n;
	}
}

/* Sub-message sub as field of p; sub is emptied. */
static void pb_msg(struct pb *p, unsigned field, struct pb *sub)
{
	if (sub->err)
		p->err = sub->err;
	pb_bytes(p, field, sub->b, sub->len);
	sub->len = 0;
}

/* The bytes of v as a varint. */
static size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >>= 7)
		n++;
	return n;
}

/* A packed repeated varint field of v[0..n): its length, then the varints
** (written even when n is 0). */
static void pb_packed(struct pb *p, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += pb_varint_len(v[i]);
	pb_key(p, field, PB_LEN);
	pb_varint(p, len);
	for (size_t i = 0; i < n; i++)
		pb_varint(p, v[i]);
}

/* -- profile.proto's messages -------------------------------------------------- */

/* The field numbers of each message of profile.proto (github.com/google/
** pprof, proto/profile.proto); a string is an index in Profile.string_table.
** The export writes no Mapping (every frame is a function, not an address);
** its numbers are here for completeness. */
enum {
	PROFILE_SAMPLE_TYPE = 1, /* ValueType, one per value of a Sample */
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_DROP_FRAMES = 7,
	PROFILE_KEEP_FRAMES = 8,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6
};
enum {
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LOCATION_IS_FOLDED = 5
};
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2, LINE_COLUMN = 3 };
enum {
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5
};

/* A Label: key=str, or key=num when str < 0 (num written even when 0). */
struct label {
	int64_t key, str;
	uint64_t num;
};

/* A ValueType message into p. */
static void value_type_encode(struct pb *p, int64_t type, int64_t unit)
{
	pb_u64(p, VALUE_TYPE_TYPE, (uint64_t)type);
	pb_u64(p, VALUE_TYPE_UNIT, (uint64_t)unit);
}

/* A Label message into p. */
static void label_encode(struct pb *p, const struct label *l)
{
	pb_u64(p, LABEL_KEY, (uint64_t)l->key);
	if (l->str >= 0) {
		pb_u64(p, LABEL_STR, (uint64_t)l->str);
	} else {
		pb_key(p, LABEL_NUM, PB_VARINT);
		pb_varint(p, l->num);
	}
}

/* A Sample message into p: its Location ids loc[0..nloc) (leaf first),
** values val[0..nval) and labels lb[0..nlb) (sub: scratch for them). */
static void sample_encode(struct pb *p, struct pb *sub, const uint64_t *loc,
			  size_t nloc, const int64_t *val, size_t nval,
			  const struct label *lb, size_t nlb)
{
	pb_packed(p, SAMPLE_LOCATION_ID, loc, nloc);
	/* int64 values as varints: a negative one as its two's complement. */
	pb_packed(p, SAMPLE_VALUE, (const uint64_t *)val, nval);
	for (size_t i = 0; i < nlb; i++) {
		label_encode(sub, &lb[i]);
		pb_msg(p, SAMPLE_LABEL, sub);
	}
}

/* A Line message into p. */
static void line_encode(struct pb *p, uint64_t function_id, uint64_t line)
{
	pb_u64(p, LINE_FUNCTION_ID, function_id);
	pb_u64(p, LINE_LINE, line);
}

/* A Location message into p with one Line (sub: scratch for it). */
static void location_encode(struct pb *p, struct pb *sub, uint64_t id,
			    uint64_t function_id, uint64_t line)
{
	pb_u64(p, LOCATION_ID, id);
	line_encode(sub, function_id, line);
	pb_msg(p, LOCATION_LINE, sub);
}

/* A Function message into p (the names are string indices). */
static void function_encode(struct pb *p, uint64_t id, int64_t name,
			    int64_t system_name, int64_t filename,
			    uint64_t start_line)
{
	pb_u64(p, FUNCTION_ID, id);
	pb_u64(p, FUNCTION_NAME, (uint64_t)name);
	pb_u64(p, FUNCTION_SYSTEM_NAME, (uint64_t)system_name);
	pb_u64(p, FUNCTION_FILENAME, (uint64_t)filename);
	pb_u64(p, FUNCTION_START_LINE, start_line);
}

/* -- Tables ------------------------------------------------------------------ */

/* Sample types, in the order of each sample's values. */
enum {
	V_SAMPLES,
	V_CPU,
	V_ALLOC_OBJ,
	V_ALLOC_SPACE,
	V_INUSE_OBJ,
	V_INUSE_SPACE,
	V_CALLS,
	V_TIME,
	V__MAX
};

/* The export in progress. */
struct px {
	const struct profile *p;
	struct intern strs;   /* string table; index 0 is "" */
	struct intern pseudo; /* pseudo-function name -> index */
	uint32_t *fnfunc;     /* fnid index -> Function id (0: none yet) */
	struct intern fkeys;  /* a function's name, file and line -> index */
	uint32_t *fkeyfunc;   /* by that index: its Function id */
	size_t nfkey;	      /* room in fkeyfunc */
	int negate;	      /* the base's samples: values negated */
	uint32_t *psfunc;     /* pseudo index -> Function id */
	size_t npsfunc;	      /* room in psfunc */
	struct hmap locs;     /* Function id << 32 | line -> Location id */
	uint32_t nfunc, nloc; /* ids given so far */
	struct pb out;	      /* the Profile message */
	struct pb tmp, tmp2;  /* scratch for sub-messages */
	int idx[V__MAX];      /* value index of each type, -1 when absent */
	int nval;
	int64_t vals[V__MAX];		    /* one sample's values */
	uint64_t period;		    /* ns per sample */
	uint64_t *ids;			    /* one sample's Location ids */
	size_t nids;			    /* room in ids */
	int64_t lk_vm, lk_thread, lk_state; /* label keys */
	int64_t lk_zone, lk_trace, lk_pid;
	int64_t lk_base; /* "pprof::base": go tool pprof's mark of a base */
	uint64_t trace;	 /* the Sample's trace label (traceno), 0 none */
	unsigned view;	 /* of the samples: SAMPLES_VIEW_* */
	struct samples_frame *fr;
	int err;
};

/* Index of s in the string table (-1: out of memory). */
static int64_t str_idx(struct px *x, const char *s)
{
	int64_t i = intern_put(&x->strs, s, strlen(s));
	if (i < 0)
		x->err = -ENOMEM;
	return i < 0 ? 0 : i;
}

/* A Function message; its id. */
static uint32_t func_add(struct px *x, const char *name, const char *file,
			 uint64_t line)
{
	uint32_t id = ++x->nfunc;
	struct pb *f = &x->tmp;
	int64_t n = str_idx(x, name);
	function_encode(f, id, n, n, str_idx(x, file), line);
	pb_msg(&x->out, PROFILE_FUNCTION, f);
	return id;
}

/* The Function of fnid function fn: one per name, file and
** line, so that a base's functions are the run's. */
static uint32_t func_of(struct px *x, uint32_t fn)
{
	if (x->fnfunc[fn])
		return x->fnfunc[fn];
	const struct profile_fn *f = &x->p->fns[fn];
	char key[2048];
	int n =
	    snprintf(key, sizeof key, "%s%c%s%c%llu", f->name, 0,
		     f->file ? f->file : "", 0, (unsigned long long)f->line);
	size_t len = n < 0		      ? 0
		     : (size_t)n < sizeof key ? (size_t)n
					      : sizeof key - 1;
	size_t had = intern_count(&x->fkeys);
	int64_t i = intern_put(&x->fkeys, key, len);
	if (i < 0) {
		x->err = -ENOMEM;
		return 0;
	}
	if ((size_t)i >= x->nfkey) {
		size_t m = x->nfkey ? x->nfkey * 2 : 256;
		uint32_t *q = realloc(x->fkeyfunc, m * sizeof *q);
		if (!q) {
			x->err = -ENOMEM;
			return 0;
		}
		x->fkeyfunc = q;
		x->nfkey = m;
	}
	if ((size_t)i >= had)
		x->fkeyfunc[i] = func_add(x, f->name, f->file, f->line);
	return x->fnfunc[fn] = x->fkeyfunc[i];
}

/* The Function of a pseudo-frame named name ("trace 3",
** "(idle)"). */
static uint32_t func_pseudo(struct px *x, const char *name)
{
	size_t had = intern_count(&x->pseudo);
	int64_t i = intern_put(&x->pseudo, name, strlen(name));
	if (i < 0) {
		x->err = -ENOMEM;
		return 0;
	}
	if ((size_t)i >= x->npsfunc) {
		size_t n = x->npsfunc ? x->npsfunc * 2 : 64;
		uint32_t *q = realloc(x->psfunc, n * sizeof *q);
		if (!q) {
			x->err = -ENOMEM;
			return 0;
		}
		x->psfunc = q;
		x->npsfunc = n;
	}
	if ((size_t)i >= had)
		x->psfunc[i] = func_add(x, name, "", 0);
	return x->psfunc[i];
}

/* The Location of Function func at line (one Line each). */
static uint64_t loc_of(struct px *x, uint32_t func, uint64_t line)
{
	if (line > UINT32_MAX)
		line = UINT32_MAX;
	int added;
	uint64_t *v = hmap_ref(&x->locs, (uint64_t)func << 32 | line, &added);
	if (!v) {
		x->err = -ENOMEM;
		return 0;
	}
	if (added) {
		*v = ++x->nloc;
		location_encode(&x->tmp, &x->tmp2, *v, func, line);
		pb_msg(&x->out, PROFILE_LOCATION, &x->tmp);
	}
	return *v;
}

/* A Sample of the Location ids x->ids[0..n) (leaf first) and the values
** x->vals (negated for a base), labelled with its VM (and the VM's process),
** thread, state and zone (those not 0 or NULL), pprof::base when a base's,
** and x->trace when not 0. */
static void sample_add(struct px *x, size_t n, uint32_t vm, uint64_t thread,
		       const char *state, const char *zone)
{
	struct label lb[7];
	size_t nlb = 0;
	if (x->negate)
		for (int i = 0; i < x->nval; i++)
			x->vals[i] = -x->vals[i];
	if (vm) {
		/* The VM as its own log numbers it, and the process. */
		uint32_t local;
		size_t li = profile_id_log(x->p, vm, &local);
		uint64_t pid = li < x->p->nlog ? x->p->logs[li].pid : x->p->pid;
		lb[nlb++] = (struct label){x->lk_vm, -1, local};
		if (pid)
			lb[nlb++] = (struct label){x->lk_pid, -1, pid};
	}
	if (thread)
		lb[nlb++] = (struct label){x->lk_thread, -1, thread};
	if (state)
		lb[nlb++] = (struct label){x->lk_state, str_idx(x, state), 0};
	if (zone)
		lb[nlb++] = (struct label){x->lk_zone, str_idx(x, zone), 0};
	if (x->negate) /* as -diff_base marks the base's samples */
		lb[nlb++] = (struct label){x->lk_base, str_idx(x, "true"), 0};
	if (x->trace)
		lb[nlb++] = (struct label){x->lk_trace, -1, x->trace};
	sample_encode(&x->tmp, &x->tmp2, x->ids, n, x->vals, (size_t)x->nval,
		      lb, nlb);
	pb_msg(&x->out, PROFILE_SAMPLE, &x->tmp);
}

/* -- Samples ------------------------------------------------------------------ */

/* n samples ending at leaf node of the sample tree in VM vm,
** in zone (the innermost open one; NULL none): a Sample. */
static int leaf_emit(struct px *x, uint32_t node, uint32_t vm, uint64_t n,
		     const char *zone)
{
	const struct samples *s = &x->p->smp;
	size_t nf = samples_stack(s, node, x->view, SAMPLES_ST_LINES, x->fr);
	for (size_t i = 0; i < nf; i++) {
		const struct samples_frame *f = &x->fr[i];
		uint32_t func;
		uint64_t line = 0;
		if (f->kind == SAMPLES_FR_FN || f->kind == SAMPLES_FR_LINE) {
			func = func_of(x, f->fn);
			line = f->kind == SAMPLES_FR_LINE
				   ? f->line
				   : x->p->fns[f->fn].line;
		} else {
			char name[64];
			samples_frame_name(s, f, name, sizeof name);
			func = func_pseudo(x, name);
		}
		x->ids[nf - 1 - i] = loc_of(x, func, line);
	}
	memset(x->vals, 0, sizeof x->vals);
	x->vals[x->idx[V_SAMPLES]] = (int64_t)n;
	/* A signal stands for 1 + the timer intervals merged into it: the
	** VM's intervals per sample, times the period. */
	uint64_t ns = samples_vm_count(s, vm);
	double per = ns ? (double)samples_vm_intervals(s, vm) / (double)ns : 1;
	x->vals[x->idx[V_CPU]] =
	    (int64_t)((double)n * per * (double)x->period + 0.5);
	uint64_t frame = s->nodes[node].frame;
	const char *state = NULL;
	if (frame >> SAMPLES_SF_SHIFT == SAMPLES_SF_STATE)
		state = format_state_name(
		    (unsigned)(frame & ((1ull << SAMPLES_SF_SHIFT) - 1)));
	uint64_t thread = 0;
	const uint64_t *vi = hmap_get(&x->p->vmmap, (uint64_t)vm + 1);
	if (vi)
		thread = x->p->vms[*vi - 1].thread;
	/* The trace is a label, not a frame (but in the merged view). */
	int64_t t = samples_node_trace(s, node);
	x->trace =
	    t >= 0 && x->view != SAMPLES_VIEW_MERGED ? s->traces[t].traceno : 0;
	sample_add(x, nf, vm, thread, state, zone);
	x->trace = 0;
	return x->err;
}

/* One leaf of the sample tree in one VM: a Sample. */
static int leaf_vm(void *ud, uint32_t node, uint32_t vm, uint64_t n)
{
	return leaf_emit(ud, node, vm, n, NULL);
}

/* Samples by leaf node, VM, then innermost zone. */
static int by_leaf(const void *a, const void *b)
{
	const struct zones_smp *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	return x->zone < y->zone ? -1 : x->zone > y->zone;
}

/* The samples of a log with zones: one Sample per leaf node,
** VM and innermost zone (from the zones processor's own list of samples,
** which holds each one's leaf node). 0, or 1 when that list does not
** match the sample tree (then the caller goes by the tree, unlabelled). */
static int leaves_zoned(struct px *x)
{
	const struct zones *z = &x->p->zones;
	if (!z->nspan || !z->leaf_src || z->nsmp != x->p->smp.samples)
		return 1;
	struct zones_smp *v = malloc(z->nsmp * sizeof *v);
	if (!v) {
		x->err = -ENOMEM;
		return 0;
	}
	memcpy(v, z->smp, z->nsmp * sizeof *v);
	qsort(v, z->nsmp, sizeof *v, by_leaf);
	for (size_t i = 0, j; i < z->nsmp && !x->err; i = j) {
		for (j = i + 1; j < z->nsmp && by_leaf(&v[i], &v[j]) == 0; j++)
			;
		leaf_emit(x, v[i].node, v[i].vm, j - i,
			  v[i].zone == UINT32_MAX ? NULL
						  : zones_str(z, v[i].zone));
	}
	free(v);
	return 0;
}

/* -- Allocations and calls ---------------------------------------------------- */

/* The allocations of a log with zones: one Sample per site and
** innermost zone (allocations only; a site's live figures stay on its
** unlabelled Sample). in[2 * site] and in[2 * site + 1] get the count and
** bytes so labelled. */
static void sites_zoned(struct px *x, uint64_t *in)
{
	const struct zones *z = &x->p->zones;
	const struct heap *h = &x->p->heap;
	for (size_t i = 0; i < z->nsite && !x->err; i++) {
		const struct zones_site *zs = &z->sites[i];
		if (zs->site >= h->nsite)
			continue;
		const struct heap_site *st = &h->sites[zs->site];
		in[2 * zs->site] += zs->alloc_count;
		in[2 * zs->site + 1] += zs->alloc_bytes;
		memset(x->vals, 0, sizeof x->vals);
		x->vals[x->idx[V_ALLOC_OBJ]] = (int64_t)zs->alloc_count;
		x->vals[x->idx[V_ALLOC_SPACE]] = (int64_t)zs->alloc_bytes;
		x->ids[0] = loc_of(x, func_of(x, st->fn), st->line);
		sample_add(x, 1, 0, 0, NULL, zones_str(z, zs->zone));
	}
}

/* One Sample per allocation site: its function at its line
** (with zones: what it allocated outside them, and what is live). */
static void sites(struct px *x)
{
	const struct heap *h = &x->p->heap;
	uint64_t *in = NULL;
	if (x->p->zones.nsite) {
		if (!(in = calloc(2 * h->nsite, sizeof *in))) {
			x->err = -ENOMEM;
			return;
		}
		sites_zoned(x, in);
	}
	for (size_t i = 0; i < h->nsite && !x->err; i++) {
		const struct heap_site *st = &h->sites[i];
		uint64_t zc = in ? in[2 * i] : 0, zb = in ? in[2 * i + 1] : 0;
		memset(x->vals, 0, sizeof x->vals);
		x->vals[x->idx[V_ALLOC_OBJ]] =
		    (int64_t)(st->alloc_count > zc ? st->alloc_count - zc : 0);
		x->vals[x->idx[V_ALLOC_SPACE]] =
		    (int64_t)(st->alloc_bytes > zb ? st->alloc_bytes - zb : 0);
		/* Each free is charged to the site that allocated the block:
		** what a site allocated less what it freed is live at the end
		** (blocks from before the profiler attached are freed, never
		** allocated, and count for nothing). */
		if (st->alloc_count > st->free_count)
			x->vals[x->idx[V_INUSE_OBJ]] =
			    (int64_t)(st->alloc_count - st->free_count);
		if (st->alloc_bytes > st->free_bytes)
			x->vals[x->idx[V_INUSE_SPACE]] =
			    (int64_t)(st->alloc_bytes - st->free_bytes);
		int any = 0;
		for (int v = V_ALLOC_OBJ; v <= V_INUSE_SPACE; v++)
			any |= x->vals[x->idx[v]] != 0;
		if (!any)
			continue;
		x->ids[0] = loc_of(x, func_of(x, st->fn), st->line);
		sample_add(x, 1, 0, 0, NULL, NULL);
	}
	free(in);
}

/* One Sample per call path: calls of its innermost function
** and its self time. */
static void callpaths(struct px *x)
{
	const struct calls *c = &x->p->calls;
	for (uint32_t n = 1; n < c->nnode && !x->err; n++) {
		const struct calls_node *cn = &c->nodes[n];
		uint64_t ns = profile_ns(x->p, cn->self);
		if (!cn->calls && !ns)
			continue;
		size_t d = 0;
		for (uint32_t m = n; m != 0 && d < x->nids;
		     m = c->nodes[m].parent) {
			uint32_t fn = c->nodes[m].fn;
			x->ids[d++] =
			    loc_of(x, func_of(x, fn), x->p->fns[fn].line);
		}
		memset(x->vals, 0, sizeof x->vals);
		x->vals[x->idx[V_CALLS]] = (int64_t)cn->calls;
		x->vals[x->idx[V_TIME]] = (int64_t)ns;
		sample_add(x, d, 0, 0, NULL, NULL);
	}
}

/* -- The profile --------------------------------------------------------------- */

/* A ValueType (type, unit) as field of the Profile. */
static void value_type(struct px *x, unsigned field, const char *type,
		       const char *unit)
{
	int64_t t = str_idx(x, type);
	value_type_encode(&x->tmp, t, str_idx(x, unit));
	pb_msg(&x->out, field, &x->tmp);
}

/* The Profile's fields before its samples: the sample types, the period,
** times, the default sample type and the comment. The samples, locations
** and functions follow as they come, the string table last (protobuf
** takes a message's fields in any order). */
static void profile_head(struct px *x, int has_smp, int has_alloc,
			 int has_calls, int wall)
{
	const char *tkind = wall ? "wall" : "cpu";
	if (has_smp) {
		value_type(x, PROFILE_SAMPLE_TYPE, "samples", "count");
		value_type(x, PROFILE_SAMPLE_TYPE, tkind, "nanoseconds");
	}
	if (has_alloc) {
		value_type(x, PROFILE_SAMPLE_TYPE, "alloc_objects", "count");
		value_type(x, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes");
		value_type(x, PROFILE_SAMPLE_TYPE, "inuse_objects", "count");
		value_type(x, PROFILE_SAMPLE_TYPE, "inuse_space", "bytes");
	}
	if (has_calls) {
		value_type(x, PROFILE_SAMPLE_TYPE, "calls", "count");
		value_type(x, PROFILE_SAMPLE_TYPE, "time", "nanoseconds");
	}
	if (has_smp) {
		value_type(x, PROFILE_PERIOD_TYPE, tkind, "nanoseconds");
		pb_u64(&x->out, PROFILE_PERIOD, x->period);
	}
	const struct profile *p = x->p;
	pb_u64(&x->out, PROFILE_TIME_NANOS, p->nclk ? p->clk_first.real_ns : 0);
	pb_u64(&x->out, PROFILE_DURATION_NANOS, p->duration_ns);
	pb_u64(&x->out, PROFILE_DEFAULT_SAMPLE_TYPE,
	       (uint64_t)str_idx(x, has_smp	? tkind
				    : has_calls ? "time"
						: "alloc_space"));
	/* A repeated int64 of one (unpacked): written even when 0. */
	pb_key(&x->out, PROFILE_COMMENT, PB_VARINT);
	pb_varint(&x->out, (uint64_t)str_idx(x, "made by ljlog export"));
}

/* The Profile's string table, last. */
static void profile_strings(struct px *x)
{
	for (size_t i = 0; i < intern_count(&x->strs); i++) {
		size_t len;
		const char *s = intern_str(&x->strs, (uint32_t)i, &len);
		pb_bytes(&x->out, PROFILE_STRING_TABLE, s, len);
	}
}

/* The longest call path (a node comes after its parent); 0
** when out of memory. */
static size_t call_depth_max(const struct calls *c)
{
	uint32_t *d = malloc(c->nnode * sizeof *d);
	size_t max = 0;
	if (!d)
		return 0;
	d[0] = 0;
	for (uint32_t n = 1; n < c->nnode; n++) {
		d[n] = d[c->nodes[n].parent] + 1;
		if (d[n] > max)
			max = d[n];
	}
	free(d);
	return max;
}

/* gzip buf[0..len) to out; 0, -ENOMEM or -EIO. */
static int gzip_write(const uint8_t *buf, size_t len, FILE *out)
{
	z_stream z;
	uint8_t chunk[65536];
	memset(&z, 0, sizeof z);
	/* windowBits 15 + 16: a gzip header and trailer. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len; /* profiles stay far below 4 GiB */
	int zr, rc = 0;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof chunk;
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = -ENOMEM;
			break;
		}
		size_t n = sizeof chunk - z.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n) {
			rc = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return rc;
}

/* The run's samples, sites and call paths of x->p (those
** there are), then the base's, negated. */
static void all_samples(struct px *x, const struct profile *base, int has_smp,
			int has_alloc, int has_calls)
{
	for (int side = 0; side < 2 && !x->err; side++) {
		const struct profile *p = x->p;
		if (side) {
			if (!base)
				break;
			free(x->fnfunc);
			x->p = p = base;
			x->negate = 1;
			if (!(x->fnfunc = calloc(p->nfn ? p->nfn : 1,
						 sizeof *x->fnfunc))) {
				x->err = -ENOMEM;
				break;
			}
		}
		if (has_smp && p->smp.samples && leaves_zoned(x) &&
		    samples_each_leaf_vm(&p->smp, leaf_vm, x) < 0 && !x->err)
			x->err = -ENOMEM;
		if (has_alloc)
			sites(x);
		if (has_calls && p->calls.nnode > 1)
			callpaths(x);
	}
}

/* See pprof.h. */
int export_pprof(const struct profile *p, const struct pprof_opts *o, FILE *out)
{
	struct px x;
	const struct profile *b = o->base;
	int has_smp = p->smp.samples > 0 || (b && b->smp.samples > 0);
	int has_alloc = p->heap.nsite > 0 || (b && b->heap.nsite > 0);
	int has_calls = p->calls.nnode > 1 || (b && b->calls.nnode > 1);
	if (!has_smp && !has_alloc && !has_calls)
		return -ENODATA;
	memset(&x, 0, sizeof x);
	x.p = p;
	x.period = o->period_ns ? o->period_ns : 1000000;
	for (int i = 0; i < V__MAX; i++)
		x.idx[i] = -1;
	if (has_smp) {
		x.idx[V_SAMPLES] = x.nval++;
		x.idx[V_CPU] = x.nval++;
	}
	if (has_alloc)
		for (int i = V_ALLOC_OBJ; i <= V_INUSE_SPACE; i++)
			x.idx[i] = x.nval++;
	if (has_calls) {
		x.idx[V_CALLS] = x.nval++;
		x.idx[V_TIME] = x.nval++;
	}
	size_t depth = has_calls ? call_depth_max(&p->calls) : 0;
	if (b && has_calls && call_depth_max(&b->calls) > depth)
		depth = call_depth_max(&b->calls);
	if (depth < SAMPLES_STACK_MAX)
		depth = SAMPLES_STACK_MAX;
	x.fnfunc = calloc(p->nfn ? p->nfn : 1, sizeof *x.fnfunc);
	x.ids = malloc(depth * sizeof *x.ids);
	x.nids = depth;
	x.fr = malloc(SAMPLES_STACK_MAX * sizeof *x.fr);
	int rc = -ENOMEM;
	if (!x.fnfunc || !x.ids || !x.fr || intern_put(&x.strs, "", 0) != 0)
		goto out;
	x.lk_vm = str_idx(&x, "vm");
	x.lk_pid = str_idx(&x, "pid");
	x.lk_base = b ? str_idx(&x, "pprof::base") : 0;
	x.lk_thread = str_idx(&x, "thread");
	x.lk_state = str_idx(&x, "state");
	x.lk_zone = str_idx(&x, "zone");
	x.lk_trace = str_idx(&x, "trace");
	x.view = o->host ? SAMPLES_VIEW_MERGED : SAMPLES_VIEW_LUA_FIRST;
	profile_head(&x, has_smp, has_alloc, has_calls, o->wall);
	all_samples(&x, b, has_smp, has_alloc, has_calls);
	profile_strings(&x);
	rc = x.err	 ? x.err
	     : x.out.err ? x.out.err
	     : x.tmp.err ? x.tmp.err
			 : x.tmp2.err;
	if (!rc)
		rc = gzip_write(x.out.b, x.out.len, out);
out:
	intern_free(&x.strs);
	intern_free(&x.pseudo);
	intern_free(&x.fkeys);
	free(x.fkeyfunc);
	hmap_free(&x.locs);
	free(x.fnfunc);
	free(x.psfunc);
	free(x.ids);
	free(x.fr);
	free(x.out.b);
	free(x.tmp.b);
	free(x.tmp2.b);
	return rc;
}
