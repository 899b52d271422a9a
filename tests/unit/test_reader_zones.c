/*
** Unit tests: the zones processor (reader/proc/zones.c), fed events and
** samples directly: nesting, a name nested in itself, allocations charged
** inclusively, samples by time (push <= t < pop), a zone left open closed
** at the VM's DETACH, marks.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "blocks/format.h"
#include "proc/zones.h"

static struct decode_obj str_a, str_b, str_c, str_m, vmobj;

/* Test only. A STRING object with id and text. */
static void mkstr(struct decode_obj *o, uint32_t id, const char *s)
{
	memset(o, 0, sizeof *o);
	o->id = id;
	o->kind = FORMAT_REC_STRING;
	o->u.str.text.s = s;
	o->u.str.text.len = strlen(s);
}

/* Test only. Feed one event of VM 1. */
static void ev(struct decode_sink *k, unsigned op, unsigned lo, uint64_t ts,
	       struct decode_obj *obj, uint64_t size)
{
	struct decode_event e;
	memset(&e, 0, sizeof e);
	e.op = op;
	e.lo = lo;
	e.ts = ts;
	e.vm = 1;
	e.vmobj = &vmobj;
	e.obj = obj;
	e.id = obj ? obj->id : 0;
	e.size = size;
	cr_assert_eq(k->event(k->ud, &e), 0);
}

/* Test only. Feed one sample of VM 1. */
static void smp(struct decode_sink *k, uint64_t ts)
{
	struct decode_sample s;
	memset(&s, 0, sizeof s);
	s.ts = ts;
	s.vm = 1;
	cr_assert_eq(k->sample(k->ud, &s), 0);
}

/* Test only. The row of zone name. */
static const struct zones_name *row(const struct zones *z, const char *name)
{
	int64_t i = zones_find(z, name);
	cr_assert_geq(i, 0, "zone %s", name);
	return &z->names[i];
}

Test(zones, nesting_allocations_samples_marks)
{
	struct zones z;
	struct decode_sink k;
	mkstr(&str_a, 10, "A");
	mkstr(&str_b, 11, "B");
	mkstr(&str_c, 12, "C");
	mkstr(&str_m, 13, "m");
	memset(&vmobj, 0, sizeof vmobj);
	zones_init(&z);
	zones_sink(&z, &k);
	enum { V = FORMAT_OP_VM };
	ev(&k, FORMAT_OP_ALLOC, 1, 5, NULL, 3); /* outside */
	ev(&k, V, FORMAT_VM_ZONE_PUSH, 10, &str_a, 0);
	ev(&k, FORMAT_OP_ALLOC, 1, 12, NULL, 100);
	ev(&k, V, FORMAT_VM_ZONE_PUSH, 20, &str_b, 0);
	ev(&k, FORMAT_OP_REALLOC, 1, 22, NULL, 50);
	ev(&k, V, FORMAT_VM_ZONE_PUSH, 25, &str_a, 0); /* A in itself */
	ev(&k, V, FORMAT_VM_ZONE_POP, 30, NULL, 0);
	ev(&k, V, FORMAT_VM_MARK, 33, &str_m, 0);
	ev(&k, V, FORMAT_VM_ZONE_POP, 40, NULL, 0); /* B */
	ev(&k, FORMAT_OP_ALLOC, 1, 45, NULL, 7);
	ev(&k, V, FORMAT_VM_ZONE_POP, 50, NULL, 0); /* A */
	ev(&k, FORMAT_OP_ALLOC, 1, 60, NULL, 1000);
	ev(&k, V, FORMAT_VM_ZONE_PUSH, 70, &str_c, 0); /* never popped */
	ev(&k, V, FORMAT_VM_DETACH, 90, NULL, 0);
	for (uint64_t t = 0; t < 100; t += 5)
		smp(&k, t);
	cr_assert_eq(zones_finish(&z), 0);

	const struct zones_name *a = row(&z, "A"), *b = row(&z, "B"),
				*c = row(&z, "C");
	cr_assert_eq(a->entries, 2);
	cr_assert_eq(a->time, 40, "A: 10 to 50 once, not its inner entry");
	cr_assert_eq(a->alloc_count, 3);
	cr_assert_eq(a->alloc_bytes, 157);
	/* Samples at 10 .. 45: t0 <= t < t1, the inner A not counted twice. */
	cr_assert_eq(a->samples, 8);
	cr_assert_eq(b->entries, 1);
	cr_assert_eq(b->time, 20);
	cr_assert_eq(b->alloc_count, 1);
	cr_assert_eq(b->alloc_bytes, 50);
	cr_assert_eq(b->samples, 4); /* 20 25 30 35 */
	cr_assert_eq(c->entries, 1);
	cr_assert_eq(c->time, 20, "C closed at the DETACH");
	cr_assert_eq(c->samples, 4); /* 70 75 80 85 */
	cr_assert_eq(z.samples_in, 12);
	cr_assert_lt(zones_find(&z, "m"), 0, "a mark's text is no zone");
	cr_assert_eq(z.nmark, 1);
	cr_assert_str_eq(zones_str(&z, z.marks[0].text), "m");
	cr_assert_eq(z.marks[0].ts, 33);

	const struct zones_span *s = zones_at(&z, 1, 27);
	cr_assert_not_null(s);
	cr_assert_str_eq(zones_str(&z, s->name), "A");
	cr_assert_eq(s->depth, 2);
	cr_assert(zones_in(&z, 1, 27, (uint32_t)zones_find(&z, "B")));
	cr_assert_null(zones_at(&z, 1, 50), "A ends at 50");
	cr_assert_null(zones_at(&z, 1, 9));
	cr_assert_null(zones_at(&z, 2, 27), "another VM");
	cr_assert_eq(z.nspan, 4);
	cr_assert(z.spans[3].open);
	cr_assert(!z.spans[0].open);
	zones_free(&z);
}

/* The zone stack as decoded (zones_open_now, for profile_only), each
** sample's innermost zone, and allocations by heap site and innermost
** zone (site_src: the site heap looked up last). */
Test(zones, open_now_sample_zone_sites)
{
	struct zones z;
	struct decode_sink k;
	struct heap h;
	mkstr(&str_a, 10, "A");
	mkstr(&str_b, 11, "B");
	memset(&vmobj, 0, sizeof vmobj);
	memset(&h, 0, sizeof h);
	zones_init(&z);
	z.site_src = &h;
	zones_sink(&z, &k);
	enum { V = FORMAT_OP_VM };
	cr_assert(!zones_open_now(&z, 1, "A"), "no zone yet");
	h.last_site = 1;			/* site 0 */
	ev(&k, FORMAT_OP_ALLOC, 1, 5, NULL, 3); /* outside: no site row */
	ev(&k, V, FORMAT_VM_ZONE_PUSH, 10, &str_a, 0);
	cr_assert(zones_open_now(&z, 1, "A"));
	cr_assert(!zones_open_now(&z, 2, "A"), "another VM");
	ev(&k, FORMAT_OP_ALLOC, 1, 12, NULL, 100); /* site 0 in A */
	ev(&k, V, FORMAT_VM_ZONE_PUSH, 20, &str_b, 0);
	cr_assert(zones_open_now(&z, 1, "A"), "A under B");
	cr_assert(zones_open_now(&z, 1, "B"));
	ev(&k, FORMAT_OP_ALLOC, 1, 22, NULL, 10); /* site 0 in B */
	h.last_site = 3;			  /* site 2 */
	ev(&k, FORMAT_OP_ALLOC, 1, 23, NULL, 20); /* site 2 in B */
	ev(&k, FORMAT_OP_ALLOC, 1, 24, NULL, 30); /* site 2 in B */
	ev(&k, V, FORMAT_VM_ZONE_POP, 30, NULL, 0);
	cr_assert(!zones_open_now(&z, 1, "B"));
	ev(&k, V, FORMAT_VM_ZONE_POP, 40, NULL, 0);
	cr_assert(!zones_open_now(&z, 1, "A"));
	cr_assert(!zones_open_now(&z, 1, "nosuch"));
	for (uint64_t t = 0; t < 50; t += 5)
		smp(&k, t);
	cr_assert_eq(zones_finish(&z), 0);

	uint32_t ia = (uint32_t)zones_find(&z, "A"),
		 ib = (uint32_t)zones_find(&z, "B");
	cr_assert_eq(z.nsmp, 10, "the samples are kept");
	for (size_t i = 0; i < z.nsmp; i++) {
		uint64_t t = z.smp[i].ts;
		uint32_t want = t >= 20 && t < 30   ? ib
				: t >= 10 && t < 40 ? ia
						    : UINT32_MAX;
		cr_assert_eq(z.smp[i].zone, want, "sample at %llu",
			     (unsigned long long)t);
	}
	cr_assert_eq(z.nsite, 3, "(site 0, A), (site 0, B), (site 2, B)");
	uint64_t n[3][2] = {{0}};
	for (size_t i = 0; i < z.nsite; i++) {
		const struct zones_site *s = &z.sites[i];
		int r = s->site == 0 && s->zone == ia	? 0
			: s->site == 0 && s->zone == ib ? 1
			: s->site == 2 && s->zone == ib ? 2
							: -1;
		cr_assert_geq(r, 0, "row site %u zone %u", s->site, s->zone);
		n[r][0] = s->alloc_count;
		n[r][1] = s->alloc_bytes;
	}
	cr_assert_eq(n[0][0], 1);
	cr_assert_eq(n[0][1], 100);
	cr_assert_eq(n[1][0], 1);
	cr_assert_eq(n[1][1], 10);
	cr_assert_eq(n[2][0], 2);
	cr_assert_eq(n[2][1], 50);
	zones_free(&z);
}
