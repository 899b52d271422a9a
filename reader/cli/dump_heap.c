/*
** ljlog CLI: 'ljlog dump' of HEAP blocks (heap snapshots).
*/
#include "cli.h"

#include <inttypes.h>

#include "decode/decode.h"
#include "proc/hsnap.h"

/* Main thread. One heap object and its references (-v). */
static int on_obj(void *ud, const struct decode_hobj *o)
{
	(void)ud;
	printf("    object #%" PRIu64 " %s size %" PRIu64 "%s", o->id,
	       format_htype_name(o->type), o->size,
	       (o->flags & FORMAT_HOBJ_UNREACHABLE) ? " unreachable" : "");
	if (o->has_addr)
		printf(" at 0x%" PRIx64, o->addr);
	putchar(' ');
	cli_quote(stdout, o->text, o->textlen);
	putchar('\n');
	for (uint32_t i = 0; i < o->nref; i++) {
		char lb[300];
		hsnap_label(&o->refs[i], lb, sizeof lb);
		printf("      %s%s %s -> #%" PRIu64 "\n",
		       format_href_name(o->refs[i].kind),
		       o->refs[i].weak ? " weak" : "", lb, o->refs[i].target);
	}
	return 0;
}

/* Main thread. One root (-v). */
static int on_root(void *ud, const struct decode_hroot *r)
{
	(void)ud;
	printf("    root ");
	cli_quote(stdout, r->name, r->namelen);
	printf(" -> #%" PRIu64 "\n", r->target);
	return 0;
}

/* Main thread. The summary that ends a snapshot. */
static int on_summary(void *ud, const struct decode_hsummary *s)
{
	(void)ud;
	printf("  vm %u, snapshot %" PRIu64 ": %" PRIu64 " objects, %" PRIu64
	       " bytes, %" PRIu64 " unreachable, gc_total %" PRIu64
	       ", other %" PRIu64 ", rest %" PRId64 ", pause %" PRIu64
	       " ns, gc %s\n",
	       s->vm, s->snapshot, s->objects, s->bytes, s->unreachable,
	       s->gc_total, s->other,
	       (int64_t)(s->gc_total - s->bytes - s->other), s->pause_ns,
	       format_gc_phase_name(s->gcstate));
	for (uint32_t i = 0; i < s->nparts; i++) {
		printf("    part ");
		cli_quote(stdout, s->part[i].name, s->part[i].namelen);
		printf(" %" PRIu64 "\n", s->part[i].bytes);
	}
	return 0;
}

/* Main thread. See cli.h. */
void cli_dump_heap_sink(struct decode_sink *s, int verbose)
{
	s->heap_obj = verbose ? on_obj : NULL;
	s->heap_root = verbose ? on_root : NULL;
	s->heap_summary = on_summary;
}
