/*
** ljlog CLI: 'ljlog dump', every block decoded, optionally following a log
** that is still being written.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "decode/decode.h"

static const char dump_usage[] =
    "usage: ljlog dump [-v] [-H] [-f] FILE\n"
    "\n"
    "Print every block of an ljlog log: offset, kind, length and a decoded\n"
    "summary (INTRO fields, one line per MAPPING record, the VM and event\n"
    "count of EVENTS blocks, the VM, sample count, thread, signals and drops\n"
    "of SAMPLES blocks, END totals).\n"
    "\n"
    "  -v, --events    also print every event and every sample, decoded; a\n"
    "                  sample is its time, state, the timer intervals\n"
    "                  merged into it (missed N, format 11), STACK\n"
    "                  (format 6), trace,\n"
    "                  Lua frames innermost first ('chunk:line' for Lua\n"
    "                  functions) and host frames innermost first\n"
    "                  ('name+object', the address for a symbol without a\n"
    "                  name); --verbose is the same\n"
    "  -H, --headers   block headers only: payloads (but INTRO's) are\n"
    "                  skipped unread\n"
    "  -f, --follow    keep printing blocks as a running program writes them;\n"
    "                  exit after the END block, or with status 1 when the\n"
    "                  file stops growing and the writer (INTRO pid) is gone\n"
    "  -h, --help      this help\n"
    "\n"
    "Exit status: 0 complete, 1 truncated or empty, 2 usage error or file\n"
    "cannot be opened, 3 corrupt or not a log.\n";

/* Dump state. */
struct dump {
	int events;	 /* -v */
	uint64_t pid;	 /* writer pid from INTRO, 0 before it */
	int writer_gone; /* follow mode gave up: pid is gone */
	struct decode *d;
};

/* -- Printing ------------------------------------------------------------------ */

/* Main thread. Print a log string quoted. */
static void q(const struct decode_str *s)
{
	cli_quote(stdout, s->s, s->len);
}

/* Main thread. Print a CLOCK triple. */
static void clock_line(const char *indent, const struct decode_clock *c)
{
	printf("%sclock counter %" PRIu64 " monotonic_ns %" PRIu64
	       " realtime_ns %" PRIu64 "\n",
	       indent, c->counter, c->mono_ns, c->real_ns);
}

/* Main thread. A snapshot's allocation lines (version 19): any, and by
** what the code called, "?" when not known. */
static void alloc_lines(const struct decode_texit *sn)
{
	static const char *const what[3] = {"", "; tables", "; keys"};
	printf(" (allocates%s on",
	       sn->afr < sn->nframes ? " in the caller" : "");
	for (int c = 0; c < 3; c++) {
		if (c && !sn->aline[c])
			continue;
		printf("%s", what[c]);
		if (sn->aline[c])
			printf(" line %" PRIu64, sn->aline[c]);
		else
			printf(" line ?");
	}
	putchar(')');
}

/* Main thread. Short description of a function object. */
static void obj_name(const struct decode_obj *o)
{
	char buf[256];
	if (!o)
		return;
	switch (o->kind) {
	case FORMAT_REC_PROTO:
		decode_proto_name(o, o->u.proto.firstline, buf, sizeof buf);
		printf(" (%s)", buf);
		break;
	case FORMAT_REC_CFUNC:
		if (o->u.cfunc.name.len)
			printf(" (%s)", o->u.cfunc.name.s);
		else
			printf(" (0x%" PRIx64 ")", o->u.cfunc.address);
		break;
	case FORMAT_REC_FFUNC: printf(" (%s)", o->u.ffunc.name.s); break;
	}
}

/* Main thread. A trace site (version 6): the trace, where in its code,
** and the function it resolves to. */
static void trace_site(const struct decode_event *ev)
{
	const struct decode_obj *t = ev->trace;
	printf(" (trace %" PRIu64 " started at line %" PRIu64 ")",
	       t->u.trace.traceno, t->u.trace.line);
	if (ev->pcofs)
		printf(" at +%" PRIu64, ev->pcofs - 1);
	else
		printf(" at ?");
	if (ev->texit) {
		printf(" ->");
		obj_name(ev->obj);
		printf(" %u inlined", ev->texit->afr - 1);
	}
}

/* -- Sink --------------------------------------------------------------------- */

/* Main thread. INTRO fields. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct dump *dp = ud;
	dp->pid = in->pid;
	printf("  version %" PRIu64 ", pointer_size %" PRIu64 ", pid %" PRIu64
	       "\n",
	       in->version, in->pointer_size, in->pid);
	printf("  executable ");
	q(&in->exe);
	printf("\n  luajit_version ");
	q(&in->luajit_version);
	printf("\n  options ");
	q(&in->options);
	printf("\n  counter_kind %" PRIu64 " (%s), ts_shift %" PRIu64
	       ", counter_hz %" PRIu64 "\n",
	       in->counter_kind,
	       in->counter_kind == FORMAT_COUNTER_TSC ? "tsc" : "monotonic ns",
	       in->ts_shift, in->counter_hz);
	clock_line("  ", &in->clock);
	return 0;
}

/* Main thread. END fields. */
static int on_end(void *ud, const struct decode_end *e)
{
	printf("  events %" PRIu64 ", blocks %" PRIu64 ", bytes %" PRIu64
	       ", samples_dropped %" PRIu64 ", vms %" PRIu64 "\n",
	       e->events, e->blocks, e->bytes, e->samples_dropped, e->vms);
	clock_line("  ", &e->clock);
	if (e->stop_error)
		printf("  stopped by a write error: %s (errno %" PRIu64 ")\n",
		       e->stop_reason, e->stop_error);
	if (e->flush_waits)
		printf("  flush_waits %" PRIu64 ", flush_wait_ns %" PRIu64 "\n",
		       e->flush_waits, e->flush_wait_ns);
	if (e->events_dropped) {
		printf("  events_dropped %" PRIu64 ", buffers_dropped %" PRIu64,
		       e->events_dropped, e->buffers_dropped);
		for (unsigned f = 1; f < FORMAT_FAM__MAX; f++)
			if (e->fam_dropped[f])
				printf(", %s %" PRIu64, format_fam_name(f),
				       e->fam_dropped[f]);
		printf("\n");
	}
	return 0;
}

/* Main thread. A MAPPING block begins. */
static int on_mapping(void *ud, uint32_t vm, const struct reader_block *b)
{
	printf("  vm %u\n", vm);
	return 0;
}

/* Main thread. A Lua frame as 'chunk:line' or the function's name. */
static void lua_frame(const struct decode_lua_frame *f)
{
	const struct decode_obj *o = f->func;
	char buf[256];
	switch (o->kind) {
	case FORMAT_REC_PROTO:
		decode_proto_name(o, f->line, buf, sizeof buf);
		printf("%s", buf);
		break;
	case FORMAT_REC_CFUNC:
		if (o->u.cfunc.name.len)
			printf("%s", o->u.cfunc.name.s);
		else
			printf("0x%" PRIx64, o->u.cfunc.address);
		break;
	default: printf("%s", o->u.ffunc.name.s); break;
	}
}

/* Main thread. One MAPPING record. */
static int on_record(void *ud, struct decode_obj *o)
{
	printf("  %s %u", format_rec_name(o->kind), o->id);
	switch (o->kind) {
	case FORMAT_REC_VM:
		printf(" thread %" PRIu64 " heap %" PRIu64 " flags 0x%" PRIx64
		       "%s",
		       o->u.vm.thread, o->u.vm.heap, o->u.vm.flags,
		       o->u.vm.flags & FORMAT_VM_JIT_OFF ? " (jit off)" : "");
		break;
	case FORMAT_REC_PROTO:
		printf(" chunk ");
		q(&o->u.proto.chunk);
		printf(" firstline %" PRIu64 " numline %" PRIu64,
		       o->u.proto.firstline, o->u.proto.numline);
		printf(" name ");
		q(&o->u.proto.name);
		break;
	case FORMAT_REC_CFUNC:
		printf(" address 0x%" PRIx64 " name ", o->u.cfunc.address);
		q(&o->u.cfunc.name);
		printf(" object ");
		q(&o->u.cfunc.object);
		break;
	case FORMAT_REC_FFUNC:
		printf(" ffid %" PRIu64 " name ", o->u.ffunc.ffid);
		q(&o->u.ffunc.name);
		printf(" flags 0x%" PRIx64 "%s%s", o->u.ffunc.flags,
		       o->u.ffunc.flags & FORMAT_FF_NOEXIT ? " (noexit)" : "",
		       o->u.ffunc.flags & FORMAT_FF_CALLBACK ? " (callback)"
							     : "");
		break;
	case FORMAT_REC_COROUTINE:
		printf(" flags 0x%" PRIx64 "%s", o->u.co.flags,
		       o->u.co.flags & FORMAT_CO_MAIN ? " (main)" : "");
		break;
	case FORMAT_REC_TRACE:
		printf(" traceno %" PRIu64 " proto %u", o->u.trace.traceno,
		       o->u.trace.proto->id);
		obj_name(o->u.trace.proto);
		printf(" line %" PRIu64 " root %" PRIu64, o->u.trace.line,
		       o->u.trace.root);
		if (o->u.trace.nexit)
			printf(" snapshots %u", o->u.trace.nexit);
		for (uint32_t k = 0; k < o->u.trace.nexit; k++) {
			const struct decode_texit *sn = &o->u.trace.exits[k];
			printf("\n    snapshot %u at +%" PRIu64 ":", k,
			       sn->mcofs);
			for (uint32_t j = 0; j < sn->nframes; j++) {
				fputs(j ? " > " : " ", stdout);
				lua_frame(&sn->f[j]);
			}
			if (sn->has_aline)
				alloc_lines(sn);
		}
		break;
	case FORMAT_REC_HOSTSYM:
		printf(" address 0x%" PRIx64 " name ", o->u.host.address);
		q(&o->u.host.name);
		printf(" object ");
		q(&o->u.host.object);
		printf(" flags 0x%" PRIx64 "%s", o->u.host.flags,
		       o->u.host.flags & FORMAT_HOST_VM ? " (vm)" : "");
		break;
	case FORMAT_REC_STACK:
		if (o->u.stack.parent)
			printf(" parent %u", o->u.stack.parent->id);
		printf(" lua %u [", o->u.stack.own_lua);
		for (uint32_t i = 0; i < o->u.stack.own_lua; i++)
			printf("%s%u:%" PRIu64, i ? " " : "",
			       o->u.stack.lua[i].func->id,
			       o->u.stack.lua[i].line);
		printf("] host %u [", o->u.stack.own_host);
		for (uint32_t i = 0; i < o->u.stack.own_host; i++)
			printf("%s%u", i ? " " : "", o->u.stack.host[i]->id);
		putchar(']');
		break;
	case FORMAT_REC_STRING:
		putchar(' ');
		q(&o->u.str.text);
		break;
	}
	putchar('\n');
	return 0;
}

/* Main thread. A NAME record: the ID it names and the new name. */
static int on_rename(void *ud, struct decode_obj *o)
{
	printf("  %s %u ", format_rec_name(FORMAT_REC_NAME), o->id);
	q(o->kind == FORMAT_REC_PROTO ? &o->u.proto.name : &o->u.cfunc.name);
	putchar('\n');
	return 0;
}

/* Main thread. An EVENTS block begins. */
static int on_events(void *ud, const struct decode_events *h)
{
	printf("  vm %u, %" PRIu64 " events, base_ts %" PRIu64 "\n", h->vm,
	       h->count, h->base_ts);
	clock_line("  ", &h->clock);
	return 0;
}

/* Main thread. One event (-v). */
static int on_event(void *ud, const struct decode_event *ev)
{
	printf("    ts %" PRIu64 " co %u %s", ev->ts, ev->co,
	       format_op_name(ev->op));
	switch (ev->op) {
	case FORMAT_OP_ENTER:
		printf(" slot %" PRId64 " func %u", ev->slot, ev->id);
		obj_name(ev->obj);
		break;
	case FORMAT_OP_EXIT: printf(" slot %" PRId64, ev->slot); break;
	case FORMAT_OP_ALLOC:
	case FORMAT_OP_REALLOC:
		printf(" site %s %u", format_site_name(ev->lo), ev->id);
		if (ev->trace) /* version 6: where in the trace, resolved */
			trace_site(ev);
		else
			obj_name(ev->obj);
		printf(" line %" PRIu64, ev->line);
		if (ev->op == FORMAT_OP_ALLOC)
			printf(" addr 0x%" PRIx64 " size %" PRIu64, ev->addr,
			       ev->size);
		else
			printf(" old 0x%" PRIx64 " size %" PRIu64
			       " new 0x%" PRIx64 " size %" PRIu64,
			       ev->old_addr, ev->old_size, ev->addr, ev->size);
		break;
	case FORMAT_OP_FREE:
		printf(" addr 0x%" PRIx64 " size %" PRIu64, ev->addr, ev->size);
		break;
	case FORMAT_OP_GC:
		printf(" %s heap %" PRIu64, format_gc_phase_name(ev->lo),
		       ev->heap);
		break;
	case FORMAT_OP_SWITCH: printf(" coroutine %u", ev->id); break;
	default:
		printf(" %s", format_vm_name(ev->lo));
		switch (ev->lo) {
		case FORMAT_VM_ATTACH:
		case FORMAT_VM_DETACH:
			printf(" heap %" PRIu64, ev->heap);
			break;
		case FORMAT_VM_TRACE_START:
		case FORMAT_VM_TRACE_ABORT:
			printf(" traceno %" PRIu64 " proto %u", ev->traceno,
			       ev->id);
			obj_name(ev->obj);
			printf(" line %" PRIu64, ev->line);
			if (ev->lo == FORMAT_VM_TRACE_ABORT) {
				printf(" reason %" PRIu64 " ", ev->reason);
				q(&ev->msg);
			}
			break;
		case FORMAT_VM_TRACE_STOP:
			printf(" trace %u traceno %" PRIu64, ev->id,
			       ev->obj->u.trace.traceno);
			break;
		case FORMAT_VM_ZONE_PUSH:
		case FORMAT_VM_MARK:
			printf(" %s %u ",
			       ev->lo == FORMAT_VM_MARK ? "text" : "name",
			       ev->id);
			q(&ev->obj->u.str.text);
			break;
		}
		break;
	}
	putchar('\n');
	return 0;
}

/* Main thread. A SAMPLES block begins. */
static int on_samples(void *ud, const struct decode_samples *h)
{
	printf("  vm %u, %" PRIu64 " samples, base_ts %" PRIu64
	       ", thread %" PRIu64 ", signals %" PRIu64 ", dropped %" PRIu64
	       "\n",
	       h->vm, h->count, h->base_ts, h->thread, h->signals, h->dropped);
	clock_line("  ", &h->clock);
	return 0;
}

/* Main thread. One sample (-v). */
static int on_sample(void *ud, const struct decode_sample *s)
{
	printf("    ts %" PRIu64 " state %s", s->ts,
	       format_state_name(s->state));
	if (s->missed)
		printf(" missed %" PRIu64, s->missed);
	if (s->stack)
		printf(" stack %u", s->stack->id);
	if (s->trace)
		printf(" trace %u (traceno %" PRIu64 ")", s->trace->id,
		       s->trace->u.trace.traceno);
	if (s->pcofs)
		printf(" at +%" PRIu64 ", %u inlined", s->pcofs - 1,
		       s->inlined);
	printf(" lua %u [", s->nlua);
	for (uint32_t i = 0; i < s->nlua; i++) {
		if (i)
			fputs(", ", stdout);
		lua_frame(&s->lua[i]);
	}
	printf("] host %u [", s->nhost);
	for (uint32_t i = 0; i < s->nhost; i++) {
		const struct decode_obj *h = s->host[i];
		if (i)
			fputs(", ", stdout);
		if (h->u.host.name.len)
			printf("%s", h->u.host.name.s);
		else
			printf("0x%" PRIx64, h->u.host.address);
		if (h->u.host.object.len)
			printf("+%s", h->u.host.object.s);
	}
	fputs("]\n", stdout);
	return 0;
}

/* Main thread. A decoder warning. */
static void on_warn(void *ud, const char *msg)
{
	printf("  warning: %s\n", msg);
}

/* Main thread. Follow mode, at the tail: flush, and give up once the writer
** process is gone. */
static int on_wait(void *ud, uint64_t size)
{
	struct dump *dp = ud;
	fflush(stdout);
	if (cli_writer_gone(dp->pid)) {
		dp->writer_gone = 1;
		return -1;
	}
	return 0;
}

/* -- Command ------------------------------------------------------------------ */

/* Main thread. 'ljlog dump'. */
int cli_dump(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"events", no_argument, NULL, 'v'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"headers", no_argument, NULL, 'H'},
	    {"follow", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct dump dp;
	int headers = 0, follow = 0, o;
	memset(&dp, 0, sizeof dp);
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+vHfh", lo, NULL)) != -1) {
		switch (o) {
		case 'v': dp.events = 1; break;
		case 'H': headers = 1; break;
		case 'f': follow = 1; break;
		case 'h': fputs(dump_usage, stdout); return CLI_OK;
		default:
			cli_err("dump", "unknown option '%s'",
				argv[optind - 1]);
			cli_see_help("dump");
			return CLI_USAGE;
		}
	}
	const char *path = cli_file_arg("dump", dump_usage, argc, argv);
	if (!path)
		return cli_file_rc;
	char err[512];
	struct reader *r;
	struct decode_sink sink;
	struct reader_block b;
	int rc =
	    reader_open(&r, path, follow ? READER_FOLLOW : 0, err, sizeof err);
	if (rc < 0) {
		cli_err("dump", "%s", err);
		return CLI_USAGE;
	}
	if (follow)
		reader_set_wait(r, on_wait, &dp, 0);
	memset(&sink, 0, sizeof sink);
	sink.ud = &dp;
	sink.intro = on_intro;
	sink.end = on_end;
	sink.mapping = on_mapping;
	sink.record = on_record;
	sink.rename = on_rename;
	sink.events = on_events;
	sink.event = dp.events ? on_event : NULL;
	sink.samples = on_samples;
	sink.sample = dp.events ? on_sample : NULL;
	cli_dump_heap_sink(&sink, dp.events);
	sink.warn = on_warn;
	if (decode_new(&dp.d, &sink) < 0) {
		reader_close(r);
		cli_err("dump", "out of memory");
		return CLI_USAGE;
	}
	err[0] = '\0';
	int first = 1;
	while ((rc = reader_next(r, &b)) > 0) {
		const struct decode_kind *k = decode_kind(b.h.kind);
		if (first) {
			printf("offset 0: file magic, %d bytes\n",
			       FORMAT_MAGIC_LEN);
			first = 0;
		}
		if (k)
			printf("block %" PRIu64 " at offset %" PRIu64
			       ": %s, %u bytes\n",
			       b.index, b.offset, format_kind_name(k->kind),
			       b.h.length);
		else
			printf("block %" PRIu64 " at offset %" PRIu64
			       ": kind %u (unknown), %u bytes\n",
			       b.index, b.offset, b.h.kind, b.h.length);
		if (headers && !(k && (k->flags & DECODE_KIND_HEADER)))
			continue; /* skipped by length, payload unread */
		if (!k) {
			printf("  skipped: kind unknown to this reader\n");
			continue;
		}
		if ((rc = reader_payload(r, &b)) < 0)
			break;
		if ((rc = decode_block(dp.d, &b)) != 0) {
			snprintf(err, sizeof err, "%s", decode_error(dp.d));
			break;
		}
	}
	if (rc < 0 && !err[0])
		snprintf(err, sizeof err, "%s", reader_error(r));
	fflush(stdout);
	int status = cli_status(rc);
	if (status == CLI_TRUNCATED && dp.writer_gone)
		cli_err("dump",
			"the writer (pid %" PRIu64 ") is gone and the log "
			"stops without an END block: %s",
			dp.pid, err);
	else if (status == CLI_TRUNCATED)
		cli_err("dump", "truncated: %s", err);
	else if (status == CLI_CORRUPT)
		cli_err("dump", "corrupt: %s", err);
	else if (status != CLI_OK)
		cli_err("dump", "%s", err);
	decode_free(dp.d);
	reader_close(r);
	return status;
}
