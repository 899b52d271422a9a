/*
** ljlog reader exports: writing one heap snapshot as Chrome DevTools'
** .heapsnapshot JSON: the synthetic nodes (the root, a node per root kind,
** "(unreachable)", "(VM allocations)" and the parts), the meta object,
** the nodes, the edges and the strings.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/heapsnapshot_int.h"
#include "export/json.h"
#include "util/hmap.h"

#define NODE_FIELDS 7 /* a node's numbers: type, name, id, ... */

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Synthetic node names with fixed (even) IDs, so that they match across
** snapshots; others get one from a hash of the name. */
static const char *const fixed_names[] = {
    "", /* the root */
    "(main thread)",
    "(main thread env)",
    "(registry)",
    "(metamethod name)",
    "(base metatable)",
    "(io input)",
    "(io output)",
    "(finalizer pending)",
    "(trace being recorded)",
    "(unreachable)",
    "(VM allocations)",
    "(global state)",
    "(string table)",
    "(temporary buffer)",
    "(stacks)",
    "(string buffers)",
    "(jit)",
    "(ffi)",
    "(lightuserdata segments)",
    "(rest)",
};
#define NFIXED (sizeof fixed_names / sizeof fixed_names[0])

/* -- Writing ------------------------------------------------------------------ */

/* A synthetic node's ID: fixed for the known names. */
static uint64_t syn_id(const char *name)
{
	for (size_t i = 0; i < NFIXED; i++)
		if (!strcmp(name, fixed_names[i]))
			return 2 * (i + 1);
	return 2 *
	       (NFIXED + 1 + (XXH3_64bits(name, strlen(name)) & 0x3fffffff));
}

/* A new synthetic node named name (interned). */
static struct syn *add_syn(struct hs *x, int64_t name, uint64_t size)
{
	if (name < 0 || heapsnapshot_grow((void **)&x->sn, x->nsn, &x->sncap,
					  sizeof *x->sn) < 0)
		return NULL;
	struct syn *s = &x->sn[x->nsn++];
	*s = (struct syn){(uint32_t)name, size,
			  syn_id(intern_str(&x->st, (uint32_t)name, NULL)),
			  x->nse, 0};
	return s;
}

/* Order roots by kind, keeping the log's order within one. */
static int by_kind(const void *a, const void *b)
{
	const struct root *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->target < y->target ? -1 : x->target > y->target;
}

/* The synthetic nodes: root kinds, unreachable, parts. The
** root node is sn[0]; its edges are built last (to every other synthetic
** node but the parts). Edge targets: node ordinals + 1 for synthetic
** nodes' edges to synthetic nodes, heap IDs for the rest (told apart by
** ET_* of the root, which is ET_ELEMENT to synthetics only). */
static int build_syn(struct hs *x, size_t *nkinds)
{
	if (!add_syn(x, intern_put(&x->st, "", 0), 0))
		return -ENOMEM;
	qsort(x->r, x->nr, sizeof *x->r, by_kind);
	for (size_t i = 0; i < x->nr;) {
		struct syn *s = add_syn(x, x->r[i].kind, 0);
		if (!s)
			return -ENOMEM;
		size_t j = i;
		for (; j < x->nr && x->r[j].kind == x->r[i].kind; j++)
			if (heapsnapshot_push_edge(&x->se, &x->nse, &x->secap,
						   ET_INTERNAL, x->r[j].name,
						   x->r[j].target) < 0)
				return -ENOMEM;
		x->sn[x->nsn - 1].ne = x->nse - x->sn[x->nsn - 1].e0;
		i = j;
	}
	struct syn *u = add_syn(x, intern_put(&x->st, "(unreachable)", 13), 0);
	if (!u)
		return -ENOMEM;
	uint64_t k = 0;
	for (size_t i = 0; i < x->no; i++)
		if (x->o[i].unreachable &&
		    heapsnapshot_push_edge(&x->se, &x->nse, &x->secap,
					   ET_ELEMENT, k++, x->o[i].id) < 0)
			return -ENOMEM;
	x->sn[x->nsn - 1].ne = x->nse - x->sn[x->nsn - 1].e0;
	if (!add_syn(x, intern_put(&x->st, "(VM allocations)", 16), 0))
		return -ENOMEM;
	*nkinds = x->nsn; /* root, kinds, unreachable, VM allocations */
	/* The parts and what LuaJIT counts that ljlog does not know. */
	uint64_t other = 0;
	for (uint32_t i = 0; i < x->nparts; i++) {
		if (!add_syn(x, x->part_name[i], x->part_bytes[i]))
			return -ENOMEM;
		other += x->part_bytes[i];
	}
	if (x->gc_total > x->bytes + other &&
	    !add_syn(x, intern_put(&x->st, "(rest)", 6),
		     x->gc_total - x->bytes - other))
		return -ENOMEM;
	return 0;
}

/* Write the meta object. */
static void put_meta(FILE *f)
{
	fputs("{\"snapshot\":{\"meta\":{"
	      "\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\","
	      "\"edge_count\",\"trace_node_id\",\"detachedness\"],\n"
	      "\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\","
	      "\"code\",\"closure\",\"regexp\",\"number\",\"native\","
	      "\"synthetic\",\"concatenated string\",\"sliced string\","
	      "\"symbol\",\"bigint\",\"object shape\"],\"string\",\"number\","
	      "\"number\",\"number\",\"number\",\"number\"],\n"
	      "\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],\n"
	      "\"edge_types\":[[\"context\",\"element\",\"property\","
	      "\"internal\",\"hidden\",\"shortcut\",\"weak\"],"
	      "\"string_or_number\",\"node\"],\n"
	      "\"trace_function_info_fields\":[\"function_id\",\"name\","
	      "\"script_name\",\"script_id\",\"line\",\"column\"],\n"
	      "\"trace_node_fields\":[\"id\",\"function_info_index\","
	      "\"count\",\"size\",\"children\"],\n"
	      "\"sample_fields\":[\"timestamp_us\",\"last_assigned_id\"],\n"
	      "\"location_fields\":[\"object_index\",\"script_id\",\"line\","
	      "\"column\"]},\n",
	      f);
}

/* Node ordinals in ord (heap ID -> ordinal + 1): synthetic nodes but the
** parts, objects, parts. 0, -EOVERFLOW or -ENOMEM with a message. */
static int ordinals(const struct hs *x, size_t nkinds, struct hmap *ord,
		    char *err, size_t errlen)
{
	for (size_t i = 0; i < x->no; i++) {
		if (heapsnapshot_node_id(x->o[i].id) > UINT32_MAX ||
		    x->o[i].size > UINT32_MAX) {
			snprintf(err, errlen,
				 "object %llu: its ID or size (%llu) is beyond "
				 "the format's 32 bits",
				 (unsigned long long)x->o[i].id,
				 (unsigned long long)x->o[i].size);
			return -EOVERFLOW;
		}
		if (hmap_put(ord, x->o[i].id, nkinds + i + 1) < 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

/* Edges of n starting at e whose target is in the snapshot. */
static size_t edges_in(const struct hmap *ord, const struct edge *e, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += hmap_get(ord, e[i].dst) != NULL;
	return k;
}

/* The nodes: the root with an element edge to each synthetic node up to
** the parts', those nodes, the objects, the parts. Returns the objects'
** references left out (to objects not in the snapshot). */
static size_t put_nodes(const struct hs *x, size_t nkinds,
			const struct hmap *ord, FILE *f)
{
	size_t dropped = 0;
	fprintf(f, "%d,%u,%llu,0,%zu,0,0", NT_SYNTHETIC, x->sn[0].name,
		(unsigned long long)x->sn[0].nid, nkinds - 1);
	for (size_t i = 1; i < nkinds; i++) {
		const struct syn *s = &x->sn[i];
		size_t ne = edges_in(ord, x->se + s->e0, s->ne);
		if (i == nkinds - 1) /* VM allocations: the parts */
			ne = x->nsn - nkinds;
		fprintf(f, ",\n%d,%u,%llu,0,%zu,0,0", NT_SYNTHETIC, s->name,
			(unsigned long long)s->nid, ne);
	}
	for (size_t i = 0; i < x->no; i++) {
		const struct obj *o = &x->o[i];
		size_t ne = edges_in(ord, x->e + o->e0, o->ne);
		dropped += o->ne - ne;
		fprintf(f, ",\n%d,%u,%llu,%llu,%zu,0,0", o->type, o->name,
			heapsnapshot_node_id(o->id),
			(unsigned long long)o->size, ne);
	}
	for (size_t i = nkinds; i < x->nsn; i++)
		fprintf(f, ",\n%d,%u,%llu,%llu,0,0,0", NT_NATIVE, x->sn[i].name,
			(unsigned long long)x->sn[i].nid,
			(unsigned long long)x->sn[i].size);
	return dropped;
}

/* The edges, in the nodes' order: the root's, the synthetic nodes' (the
** parts under "(VM allocations)"), the objects'. A weak edge to a string
** is written with its strong type and name. */
static void put_edges(const struct hs *x, size_t nkinds, const struct hmap *ord,
		      FILE *f)
{
	const char *sep = "";
	for (size_t i = 1; i < nkinds; i++, sep = ",\n")
		fprintf(f, "%s%d,%zu,%zu", sep, ET_ELEMENT, i - 1,
			i * NODE_FIELDS);
	for (size_t i = 1; i < nkinds; i++) {
		const struct syn *s = &x->sn[i];
		for (size_t k = 0; k < s->ne; k++) {
			const struct edge *e = &x->se[s->e0 + k];
			uint64_t *t = hmap_get(ord, e->dst);
			if (t)
				fprintf(f, ",\n%d,%u,%llu", e->type, e->name,
					(unsigned long long)(*t - 1) *
					    NODE_FIELDS);
		}
		if (i == nkinds - 1)
			for (size_t p = nkinds; p < x->nsn; p++)
				fprintf(f, ",\n%d,%u,%llu", ET_INTERNAL,
					x->sn[p].name,
					(unsigned long long)(x->no + p) *
					    NODE_FIELDS);
	}
	for (size_t i = 0; i < x->no; i++) {
		const struct obj *o = &x->o[i];
		for (size_t k = 0; k < o->ne; k++) {
			const struct edge *e = &x->e[o->e0 + k];
			uint64_t *t = hmap_get(ord, e->dst);
			if (!t)
				continue;
			unsigned ty = e->type, nm = e->name;
			if (ty == ET_WEAK &&
			    x->o[*t - 1 - nkinds].type == NT_STRING) {
				ty = e->stype;
				nm = e->sname;
			}
			fprintf(f, ",\n%u,%u,%llu", ty, nm,
				(unsigned long long)(*t - 1) * NODE_FIELDS);
		}
	}
}

/* The empty sections and the strings, to the end of the file. */
static void put_strings(const struct hs *x, FILE *f)
{
	fputs("],\n\"trace_function_infos\":[],\"trace_tree\":[],"
	      "\"samples\":[],\"locations\":[],\n\"strings\":[",
	      f);
	for (size_t i = 0; i < intern_count(&x->st); i++) {
		size_t len;
		const char *str = intern_str(&x->st, (uint32_t)i, &len);
		if (i)
			fputs(",\n", f);
		json_quote(f, str, len);
	}
	fputs("]}\n", f);
}

/* See heapsnapshot_int.h. */
int heapsnapshot_write(struct hs *x, FILE *f, char *err, size_t errlen)
{
	size_t nkinds;
	if (build_syn(x, &nkinds) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct hmap ord = HMAP_INIT; /* heap ID -> ordinal + 1 */
	int rc = ordinals(x, nkinds, &ord, err, errlen);
	if (rc < 0) {
		hmap_free(&ord);
		return rc;
	}
	/* Edges to objects not in the snapshot are left out (counted). */
	uint64_t nedges = (nkinds - 1) + (x->nsn - nkinds);
	nedges += edges_in(&ord, x->se, x->nse);
	nedges += edges_in(&ord, x->e, x->ne);
	put_meta(f);
	fprintf(f,
		"\"node_count\":%zu,\"edge_count\":%llu,"
		"\"trace_function_count\":0},\n\"nodes\":[",
		x->nsn + x->no, (unsigned long long)nedges);
	size_t dropped = put_nodes(x, nkinds, &ord, f);
	fputs("],\n\"edges\":[", f);
	put_edges(x, nkinds, &ord, f);
	hmap_free(&ord);
	put_strings(x, f);
	if (dropped)
		fprintf(stderr,
			"ljlog export: warning: %zu references to objects "
			"not in the snapshot left out\n",
			dropped);
	return 0;
}
