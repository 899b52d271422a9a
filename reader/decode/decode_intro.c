/*
** ljlog reader library: INTRO and END blocks, the first and the last of a
** log; END's totals are checked against what the blocks before held.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Decode an INTRO payload. */
int dec_intro(struct decode *d, const struct reader_block *b,
	      struct decode_cur *c)
{
	struct decode_intro *in = &d->intro;
	int rc;
	memset(in, 0, sizeof *in);
	if ((rc = dec_get_u(c, "version", &in->version)) < 0)
		return dec_bad_field(d, b, c, rc);
	/* Each version only adds to the one before: older logs read as written
	** (version 3 fields are read where intro.version says so). */
	if (in->version < 1 || in->version > FORMAT_VERSION)
		return dec_corrupt(d, b, -ENOTSUP,
				   "format version %llu is not supported (this "
				   "reader reads versions 1 to %d)",
				   (unsigned long long)in->version,
				   FORMAT_VERSION);
	if ((rc = dec_get_u(c, "pointer_size", &in->pointer_size)) < 0 ||
	    (rc = dec_get_u(c, "pid", &in->pid)) < 0 ||
	    (rc = dec_get_s(d, c, "executable", &in->exe)) < 0 ||
	    (rc = dec_get_s(d, c, "luajit_version", &in->luajit_version)) < 0 ||
	    (rc = dec_get_s(d, c, "options", &in->options)) < 0 ||
	    (rc = dec_get_u(c, "counter_kind", &in->counter_kind)) < 0 ||
	    (rc = dec_get_u(c, "ts_shift", &in->ts_shift)) < 0 ||
	    (rc = dec_get_u(c, "counter_hz", &in->counter_hz)) < 0 ||
	    (rc = dec_get_clock(c, &in->clock)) < 0)
		return dec_bad_field(d, b, c, rc);
	if ((rc = dec_check_tail(d, b, c, "INTRO")) < 0)
		return rc;
	if (in->pointer_size == 0 || in->pointer_size > 8)
		return dec_corrupt(d, b, -EBADMSG, "pointer_size %llu",
				   (unsigned long long)in->pointer_size);
	if (in->counter_kind != FORMAT_COUNTER_TSC &&
	    in->counter_kind != FORMAT_COUNTER_MONO_NS)
		return dec_corrupt(d, b, -EBADMSG, "unknown counter_kind %llu",
				   (unsigned long long)in->counter_kind);
	if (in->ts_shift > 63)
		return dec_corrupt(d, b, -EBADMSG, "ts_shift %llu over 63",
				   (unsigned long long)in->ts_shift);
	d->have_intro = 1;
	return d->sink.intro ? d->sink.intro(d->sink.ud, in) : 0;
}

/* END's dropped events (version 17) into d->end: the families known,
** each once, their events adding up to events_dropped. */
static int end_dropped(struct decode *d, const struct reader_block *b,
		       struct decode_cur *c)
{
	struct decode_end *e = &d->end;
	uint64_t nfam, fam, n, sum = 0;
	int rc;
	if ((rc = dec_get_u(c, "events_dropped", &e->events_dropped)) < 0 ||
	    (rc = dec_get_u(c, "buffers_dropped", &e->buffers_dropped)) < 0 ||
	    (rc = dec_get_u(c, "families", &nfam)) < 0)
		return dec_bad_field(d, b, c, rc);
	for (uint64_t i = 0; i < nfam; i++) {
		if ((rc = dec_get_u(c, "family", &fam)) < 0 ||
		    (rc = dec_get_u(c, "dropped", &n)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (fam == 0 || fam >= FORMAT_FAM__MAX || e->fam_dropped[fam])
			return dec_corrupt(d, b, -EBADMSG,
					   "END: family %llu unknown or "
					   "listed twice",
					   (unsigned long long)fam);
		if (n == 0 || n > e->events_dropped - sum)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "END: %llu dropped events of family "
			    "%s, %llu dropped in all",
			    (unsigned long long)n,
			    format_fam_name((unsigned)fam),
			    (unsigned long long)e->events_dropped);
		e->fam_dropped[fam] = n;
		sum += n;
	}
	if (sum != e->events_dropped)
		return dec_corrupt(d, b, -EBADMSG,
				   "END counts %llu dropped events, its "
				   "families %llu",
				   (unsigned long long)e->events_dropped,
				   (unsigned long long)sum);
	if (e->events_dropped && !e->buffers_dropped)
		return dec_corrupt(d, b, -EBADMSG,
				   "END counts %llu dropped events in no "
				   "dropped buffer",
				   (unsigned long long)e->events_dropped);
	return 0;
}

/* END's fields into d->end (stop_error and stop_reason from version 5,
** the flush waits from version 15, the dropped events from version 17). */
static int end_fields(struct decode *d, const struct reader_block *b,
		      struct decode_cur *c)
{
	struct decode_end *e = &d->end;
	int rc;
	if ((rc = dec_get_u(c, "events", &e->events)) < 0 ||
	    (rc = dec_get_u(c, "blocks", &e->blocks)) < 0 ||
	    (rc = dec_get_u(c, "bytes", &e->bytes)) < 0 ||
	    (rc = dec_get_u(c, "samples_dropped", &e->samples_dropped)) < 0 ||
	    (rc = dec_get_u(c, "vms", &e->vms)) < 0 ||
	    (rc = dec_get_clock(c, &e->clock)) < 0)
		return dec_bad_field(d, b, c, rc);
	e->stop_error = 0;
	e->stop_reason[0] = '\0';
	e->events_dropped = e->buffers_dropped = 0;
	memset(e->fam_dropped, 0, sizeof e->fam_dropped);
	if (d->intro.version >= 5) {
		const char *s;
		size_t len;
		if ((rc = dec_get_u(c, "stop_error", &e->stop_error)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (blocks_str_get(&c->p, c->end, &s, &len) < 0) {
			c->field = "stop_reason";
			return dec_bad_field(d, b, c, -EBADMSG);
		}
		if (len >= sizeof e->stop_reason)
			len = sizeof e->stop_reason - 1;
		memcpy(e->stop_reason, s, len);
		e->stop_reason[len] = '\0';
		if (e->stop_error && !len)
			snprintf(e->stop_reason, sizeof e->stop_reason,
				 "error %llu",
				 (unsigned long long)e->stop_error);
	}
	e->flush_waits = e->flush_wait_ns = 0;
	if (d->intro.version >= 15 &&
	    ((rc = dec_get_u(c, "flush_waits", &e->flush_waits)) < 0 ||
	     (rc = dec_get_u(c, "flush_wait_ns", &e->flush_wait_ns)) < 0))
		return dec_bad_field(d, b, c, rc);
	return d->intro.version >= 17 ? end_dropped(d, b, c) : 0;
}

/* See decode.h. The pair follows five fields in END (every version),
** three in EVENTS and SAMPLES (vm, count, base_ts). */
int decode_block_clock(const struct reader_block *b, struct decode_clock *out)
{
	struct decode_cur c = {.p = b->payload, .start = b->payload};
	uint64_t skip;
	int before = b->h.kind == FORMAT_KIND_END	? 5
		     : b->h.kind == FORMAT_KIND_EVENTS	? 3
		     : b->h.kind == FORMAT_KIND_SAMPLES ? 3
							: 0;
	if (!before)
		return -ENOENT;
	if (!b->payload)
		return -EINVAL;
	c.end = b->payload + b->h.length;
	while (before--)
		if (dec_get_u(&c, "", &skip) < 0)
			return -EBADMSG;
	return dec_get_clock(&c, out) < 0 ? -EBADMSG : 0;
}

/* END's totals against what the blocks before it held: events, blocks
** and bytes exactly, dropped samples at least (else a warning), VMs (a
** warning). */
static int end_totals(struct decode *d, const struct reader_block *b)
{
	const struct decode_end *e = &d->end;
	if (e->events != d->events)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "END counts %llu events, the EVENTS blocks hold "
		    "%llu",
		    (unsigned long long)e->events,
		    (unsigned long long)d->events);
	if (e->blocks != b->index)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "END counts %llu blocks, %llu come before it",
		    (unsigned long long)e->blocks,
		    (unsigned long long)b->index);
	if (e->bytes != b->offset)
		return dec_corrupt(d, b, -EBADMSG,
				   "END says it is at offset %llu",
				   (unsigned long long)e->bytes);
	/* Samples dropped after the last SAMPLES block reach only END: more
	** is possible, fewer is not. */
	if (e->samples_dropped < d->dropped)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "END counts %llu samples dropped, the SAMPLES "
		    "blocks count %llu",
		    (unsigned long long)e->samples_dropped,
		    (unsigned long long)d->dropped);
	if (e->samples_dropped > d->dropped)
		dec_warn(d,
			 "block %llu (END) at offset %llu: END counts %llu "
			 "samples dropped, the SAMPLES blocks %llu",
			 (unsigned long long)b->index,
			 (unsigned long long)b->offset,
			 (unsigned long long)e->samples_dropped,
			 (unsigned long long)d->dropped);
	if (e->vms != d->vms)
		dec_warn(
		    d,
		    "block %llu (END) at offset %llu: END counts %llu VMs, "
		    "the log defines %llu",
		    (unsigned long long)b->index, (unsigned long long)b->offset,
		    (unsigned long long)e->vms, (unsigned long long)d->vms);
	return 0;
}

/* Decode an END payload and check its totals. */
int dec_end(struct decode *d, const struct reader_block *b,
	    struct decode_cur *c)
{
	int rc;
	if ((rc = end_fields(d, b, c)) != 0 ||
	    (rc = dec_check_tail(d, b, c, "END")) < 0 ||
	    (rc = end_totals(d, b)) != 0)
		return rc;
	d->have_end = 1;
	return d->sink.end ? d->sink.end(d->sink.ud, &d->end) : 0;
}
