/*
** ljlog reader processors: the fan-out sink.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "fanout.h"

#include <errno.h>
#include <string.h>

/* An empty fan-out. */
void fanout_init(struct fanout *f)
{
	memset(f, 0, sizeof *f);
}

/* Add a sink. */
int fanout_add(struct fanout *f, const struct decode_sink *s)
{
	if (f->n == FANOUT_MAX)
		return -ENOSPC;
	f->sinks[f->n++] = *s;
	return 0;
}

/* Forward callback cb with arguments to every sink that has it; stop at
** the first non-zero return. */
#define FORWARD(cb, ...)                                                       \
	do {                                                                   \
		const struct fanout *fo_ = ud;                                 \
		for (unsigned fo_i = 0; fo_i < fo_->n; fo_i++) {               \
			const struct decode_sink *fo_s = &fo_->sinks[fo_i];    \
			int fo_rc;                                             \
			if (fo_s->cb &&                                        \
			    (fo_rc = fo_s->cb(fo_s->ud, __VA_ARGS__)))         \
				return fo_rc;                                  \
		}                                                              \
		return 0;                                                      \
	} while (0)

/* Decoder callbacks, forwarded. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	FORWARD(intro, in);
}

/* END block, forwarded. */
static int on_end(void *ud, const struct decode_end *e)
{
	FORWARD(end, e);
}

/* MAPPING block, forwarded. */
static int on_mapping(void *ud, uint32_t vm, const struct reader_block *b)
{
	FORWARD(mapping, vm, b);
}

/* MAPPING record, forwarded. */
static int on_record(void *ud, struct decode_obj *o)
{
	FORWARD(record, o);
}

/* NAME record, forwarded. */
static int on_rename(void *ud, struct decode_obj *o)
{
	FORWARD(rename, o);
}

/* EVENTS block header, forwarded. */
static int on_events(void *ud, const struct decode_events *h)
{
	FORWARD(events, h);
}

/* One event, forwarded (hot path). */
static int on_event(void *ud, const struct decode_event *ev)
{
	FORWARD(event, ev);
}

/* EVENTS block end, forwarded. */
static int on_events_done(void *ud, const struct decode_events *h)
{
	FORWARD(events_done, h);
}

/* SAMPLES block header, forwarded. */
static int on_samples(void *ud, const struct decode_samples *h)
{
	FORWARD(samples, h);
}

/* One sample, forwarded. */
static int on_sample(void *ud, const struct decode_sample *s)
{
	FORWARD(sample, s);
}

/* SAMPLES block end, forwarded. */
static int on_samples_done(void *ud, const struct decode_samples *h)
{
	FORWARD(samples_done, h);
}

/* A heap snapshot's object, forwarded. */
static int on_heap_obj(void *ud, const struct decode_hobj *o)
{
	FORWARD(heap_obj, o);
}

/* A heap snapshot's root, forwarded. */
static int on_heap_root(void *ud, const struct decode_hroot *r)
{
	FORWARD(heap_root, r);
}

/* A heap snapshot's summary, forwarded. */
static int on_heap_summary(void *ud, const struct decode_hsummary *s)
{
	FORWARD(heap_summary, s);
}

/* A block the decoder does not know, forwarded. */
static int on_unknown(void *ud, const struct reader_block *b)
{
	FORWARD(unknown, b);
}

/* A decoder warning, to every sink. */
static void on_warn(void *ud, const char *msg)
{
	const struct fanout *f = ud;
	for (unsigned i = 0; i < f->n; i++)
		if (f->sinks[i].warn)
			f->sinks[i].warn(f->sinks[i].ud, msg);
}

/* Install forwarder fn as member cb of sink when some sink of f has cb
** (the decoder skips what no sink wants). */
#define INSTALL(cb, fn)                                                        \
	do {                                                                   \
		for (unsigned i = 0; i < f->n; i++)                            \
			if (f->sinks[i].cb) {                                  \
				sink->cb = fn;                                 \
				break;                                         \
			}                                                      \
	} while (0)

/* Fill sink so that a decoder feeds every sink of f. */
void fanout_sink(struct fanout *f, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = f;
	INSTALL(intro, on_intro);
	INSTALL(end, on_end);
	INSTALL(mapping, on_mapping);
	INSTALL(record, on_record);
	INSTALL(rename, on_rename);
	INSTALL(events, on_events);
	INSTALL(event, on_event);
	INSTALL(events_done, on_events_done);
	INSTALL(samples, on_samples);
	INSTALL(sample, on_sample);
	INSTALL(samples_done, on_samples_done);
	INSTALL(heap_obj, on_heap_obj);
	INSTALL(heap_root, on_heap_root);
	INSTALL(heap_summary, on_heap_summary);
	INSTALL(unknown, on_unknown);
	INSTALL(warn, on_warn);
}
