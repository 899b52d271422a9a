/*
** ljlog reader exports: Chrome trace events (JSON object form), for
** Perfetto and chrome://tracing.
**
** Written as the log is decoded: a process per VM (pid: the VM ID), a
** thread per coroutine with its frames as B/E pairs (in file order, which
** nests; an E repeats its B's name and args, as tools match them), a "GC" thread with the GC phases as slices, the heap size as a
** counter, a "samples" thread with each timer sample as an instant (its
** Lua stack in args), a "JIT" thread with the trace events as instants,
** a "zones" thread with the zones (ljlog.zone) as B/E slices and the
** marks as instants.
** Names (metadata events) come last, once every track is known. Past
** 7/8 of the budget (export_budget) the frames, samples, GC, heap and JIT
** events are left out (frames open then are closed): an instant "ljlog:
** export cut here" marks where, "otherData" and the note say so. Times are
** microseconds from the log's start, with the nanoseconds as decimals.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "config.h"
#include "export/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "proc/samples.h"
#include "util/hmap.h"

/* Fixed tracks of a VM; coroutine tracks come after. */
enum { TID_GC = 1, TID_SAMPLES, TID_JIT, TID_ZONES, TID_CO0 };

/* An open frame: written as a complete slice (X) when it closes. */
struct open {
	uint64_t t;
	uint32_t fn;
	int skip; /* opened past the cut: not written */
};

/* One coroutine track. */
struct cotrack {
	uint32_t vm, co; /* co: calls_obs track */
	uint32_t tid;
	struct open *f; /* open frames, outermost first */
	uint32_t depth, cap;
	uint32_t shown; /* frames whose B is written (the outer ones) */
};

/* One VM. */
struct cvm {
	uint32_t id;
	uint32_t ntid; /* coroutine tracks so far */
	int gc_phase;  /* -1: none */
	uint64_t gc_since;
	unsigned used;	  /* 1 << TID_*: fixed tracks with events */
	uint64_t last_ts; /* last event or sample */
	const struct decode_obj **zst; /* open zones' names (STRINGs) */
	uint32_t zdepth, zcap;
};

struct chrome {
	struct export_pass x;
	FILE *out;
	uint64_t written; /* events */
	struct cotrack *tracks;
	size_t ntrack, trackcap;
	struct hmap trackmap; /* (vm << 32 | co) + 1 -> index + 1 */
	struct cvm *vms;
	size_t nvm;
	struct hmap vmmap; /* vm + 1 -> index + 1 */
	int err;	   /* first error (sticky) */
	int have_frames, have_samples, have_gc, have_zones;
	int seekable;	  /* ftello says the size (else: 100 bytes an event) */
	uint64_t cut;	  /* bytes past which events are left out */
	int is_cut;	  /* past it */
	uint64_t cut_ts;  /* the time of the first event left out */
	uint64_t dropped; /* events left out */
	uint64_t next_check; /* written count at which to look again */
};

/* -- Output ------------------------------------------------------------------- */

/* Start an event: the separator, phase, time, pid, tid. */
static void ev_begin(struct chrome *c, const char *ph, uint64_t t, uint32_t pid,
		     uint32_t tid)
{
	fputs(c->written++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", c->out);
	fputs(ph, c->out);
	fputs("\",\"ts\":", c->out);
	json_put_num(c->out, export_ns_intro(&c->x, t) / 1000.0);
	fprintf(c->out, ",\"pid\":%u,\"tid\":%u", pid, tid);
}

/* A string member of the event being written. */
static void ev_str(struct chrome *c, const char *key, const char *s)
{
	fprintf(c->out, ",\"%s\":", key);
	json_quote(c->out, s, strlen(s));
}

/* 1 when the output is past the cut (then the event at t of
** VM vm is left out, and counted); the first time, an instant marks it. */
static int cut_here(struct chrome *c, uint64_t t, uint32_t vm)
{
	if (!c->is_cut && c->written >= c->next_check) {
		off_t pos = c->seekable ? ftello(c->out) : -1;
		c->next_check = c->written + 256;
		uint64_t n = pos >= 0 ? (uint64_t)pos : c->written * 100;
		if (!c->cut)
			c->cut = export_budget(&c->x) / 8 * 7;
		if (n > c->cut) {
			c->is_cut = 1;
			c->cut_ts = t;
			ev_begin(c, "i", t, vm, 0);
			fputs(",\"name\":\"ljlog: export cut here (size "
			      "limit), later events left out\",\"s\":\"g\"}",
			      c->out);
		}
	}
	if (c->is_cut)
		c->dropped++;
	return c->is_cut;
}

/* -- State -------------------------------------------------------------------- */

/* The VM id, made when new; NULL when out of memory. */
static struct cvm *vm_get(struct chrome *c, uint32_t id)
{
	int added;
	uint64_t *slot = hmap_ref(&c->vmmap, (uint64_t)id + 1, &added);
	if (!slot)
		return NULL;
	if (!added)
		return &c->vms[*slot - 1];
	struct cvm *nv = realloc(c->vms, (c->nvm + 1) * sizeof *nv);
	if (!nv) {
		hmap_del(&c->vmmap, (uint64_t)id + 1);
		return NULL;
	}
	c->vms = nv;
	memset(&nv[c->nvm], 0, sizeof *nv);
	nv[c->nvm].id = id;
	nv[c->nvm].gc_phase = -1;
	*slot = ++c->nvm;
	return &nv[c->nvm - 1];
}

/* The track of coroutine co of VM vm; NULL when out of
** memory. */
static struct cotrack *track_get(struct chrome *c, uint32_t vm, uint32_t co)
{
	int added;
	uint64_t key = ((uint64_t)vm << 32 | co) + 1;
	uint64_t *slot = hmap_ref(&c->trackmap, key, &added);
	if (!slot)
		return NULL;
	if (!added)
		return &c->tracks[*slot - 1];
	struct cvm *v = vm_get(c, vm);
	if (v && c->ntrack == c->trackcap) {
		size_t cap = c->trackcap ? c->trackcap * 2 : 16;
		struct cotrack *nt = realloc(c->tracks, cap * sizeof *nt);
		if (nt) {
			c->tracks = nt;
			c->trackcap = cap;
		} else
			v = NULL;
	}
	if (!v) {
		hmap_del(&c->trackmap, key);
		return NULL;
	}
	struct cotrack *t = &c->tracks[c->ntrack];
	t->vm = vm;
	t->co = co;
	t->tid = TID_CO0 + v->ntid++;
	t->f = NULL;
	t->depth = t->cap = t->shown = 0;
	*slot = ++c->ntrack;
	return t;
}

/* -- Frames (calls_obs) ------------------------------------------------------- */

/* The name and category of a frame's B and E events (the
** same: tools match an E to its B by them; no args, which speedscope would
** make part of the name). */
static void frame_fields(struct chrome *c, const struct open *o)
{
	const struct fnid_fn *f = &c->x.p->fnid.fns[o->fn];
	ev_str(c, "name", f->name);
	fputs(",\"cat\":\"", c->out);
	fputs(fnid_kind_name(f->kind), c->out);
	fputs("\"}", c->out);
}

/* Write the B events of tr's frames opened before t that have
** none yet. */
static void flush_opens(struct chrome *c, struct cotrack *tr, uint64_t t)
{
	while (tr->shown < tr->depth && tr->f[tr->shown].t < t) {
		const struct open *o = &tr->f[tr->shown++];
		if (o->skip)
			continue;
		ev_begin(c, "B", o->t, tr->vm, tr->tid);
		frame_fields(c, o);
	}
}

/* A frame opens: kept, its B written once time moves on (a
** frame that closes at the time it opened is left out: tools sort its E
** before its B). */
static void on_open(void *ud, uint32_t vm, uint32_t co, uint32_t fn, uint64_t t,
		    int resumed)
{
	struct chrome *c = ud;
	struct cotrack *tr;
	if (c->err)
		return;
	if (!(tr = track_get(c, vm, co))) {
		c->err = -ENOMEM;
		return;
	}
	flush_opens(c, tr, t);
	if (tr->depth == tr->cap) {
		uint32_t cap = tr->cap ? tr->cap * 2 : 16;
		struct open *f = realloc(tr->f, cap * sizeof *f);
		if (!f) {
			c->err = -ENOMEM;
			return;
		}
		tr->f = f;
		tr->cap = cap;
	}
	struct open *o = &tr->f[tr->depth++];
	o->t = t;
	o->fn = fn;
	o->skip = cut_here(c, t, vm);
	(void)resumed; /* a resumed frame is a slice like any other */
}

/* A frame closes: E, with its B's name. */
static void on_close(void *ud, uint32_t vm, uint32_t co, uint32_t fn,
		     uint64_t t, int suspended)
{
	struct chrome *c = ud;
	struct cotrack *tr;
	(void)fn;
	(void)suspended;
	if (c->err)
		return;
	if (!(tr = track_get(c, vm, co))) {
		c->err = -ENOMEM;
		return;
	}
	if (!tr->depth)
		return; /* calls_obs nests: cannot happen */
	flush_opens(c, tr, t);
	if (tr->shown < tr->depth) { /* opened at t: no time, left out */
		tr->depth--;
		return;
	}
	tr->shown = --tr->depth;
	if (tr->f[tr->depth].skip)
		return;
	c->have_frames = 1;
	ev_begin(c, "E", t, vm, tr->tid);
	frame_fields(c, &tr->f[tr->depth]);
}

/* -- Events ------------------------------------------------------------------- */

/* The heap size counter. */
static void heap_counter(struct chrome *c, uint64_t t, uint32_t vm,
			 uint64_t bytes)
{
	ev_begin(c, "C", t, vm, 0);
	fprintf(c->out, ",\"name\":\"heap\",\"args\":{\"bytes\":%llu}}",
		(unsigned long long)bytes);
}

/* End v's GC phase at t: a B/E pair (not X: tools add ts and
** dur in floating point, and a phase would end after the next began),
** unless it was the pause or took no time. */
static void gc_close(struct chrome *c, struct cvm *v, uint64_t t)
{
	if (v->gc_phase > 0 && t > v->gc_since) {
		const char *name = format_gc_phase_name((unsigned)v->gc_phase);
		ev_begin(c, "B", v->gc_since, v->id, TID_GC);
		ev_str(c, "name", name);
		fputs(",\"cat\":\"gc\"}", c->out);
		ev_begin(c, "E", t, v->id, TID_GC);
		ev_str(c, "name", name);
		fputs(",\"cat\":\"gc\"}", c->out);
		v->used |= 1u << TID_GC;
	}
	v->gc_phase = -1;
}

/* A GC event: the phase before it ends, this one starts. */
static void gc_event(struct chrome *c, struct cvm *v,
		     const struct decode_event *ev)
{
	gc_close(c, v, ev->ts);
	v->gc_phase = (int)ev->lo;
	v->gc_since = ev->ts;
	c->have_gc = 1;
	heap_counter(c, ev->ts, v->id, ev->heap);
}

/* A trace event: an instant on the JIT track. */
static void jit_event(struct chrome *c, struct cvm *v,
		      const struct decode_event *ev)
{
	char name[64];
	const char *what = ev->lo == FORMAT_VM_TRACE_START   ? "trace start"
			   : ev->lo == FORMAT_VM_TRACE_STOP  ? "trace stop"
			   : ev->lo == FORMAT_VM_TRACE_ABORT ? "trace abort"
							     : "trace flush";
	if (ev->lo == FORMAT_VM_TRACE_FLUSH)
		snprintf(name, sizeof name, "%s", what);
	else
		snprintf(name, sizeof name, "%s %llu", what,
			 (unsigned long long)(ev->lo == FORMAT_VM_TRACE_STOP &&
						      ev->obj
						  ? ev->obj->u.trace.traceno
						  : ev->traceno));
	ev_begin(c, "i", ev->ts, v->id, TID_JIT);
	ev_str(c, "name", name);
	fputs(",\"cat\":\"jit\",\"s\":\"t\"", c->out);
	if (ev->lo == FORMAT_VM_TRACE_ABORT) {
		fprintf(c->out, ",\"args\":{\"reason\":%llu,\"message\":",
			(unsigned long long)ev->reason);
		json_quote(c->out, ev->msg.s ? ev->msg.s : "",
			   ev->msg.s ? ev->msg.len : 0);
		fputs("}", c->out);
	}
	fputs("}", c->out);
	v->used |= 1u << TID_JIT;
}

/* A zone's B or E, or a mark's instant, on the zones track. */
static void zone_ev(struct chrome *c, struct cvm *v, const char *ph, uint64_t t,
		    const struct decode_obj *name, const char *cat)
{
	ev_begin(c, ph, t, v->id, TID_ZONES);
	fputs(",\"name\":", c->out);
	json_quote(c->out, name->u.str.text.s, name->u.str.text.len);
	fprintf(c->out, ",\"cat\":\"%s\"%s}", cat,
		ph[0] == 'i' ? ",\"s\":\"t\"" : "");
	v->used |= 1u << TID_ZONES;
	c->have_zones = 1;
}

/* Close v's open zones at t (its DETACH, the log's end). */
static void zones_close(struct chrome *c, struct cvm *v, uint64_t t)
{
	while (v->zdepth)
		zone_ev(c, v, "E", t, v->zst[--v->zdepth], "zone");
}

/* ZONE_PUSH, ZONE_POP, MARK. */
static int zone_event(struct chrome *c, struct cvm *v,
		      const struct decode_event *ev)
{
	switch (ev->lo) {
	case FORMAT_VM_ZONE_PUSH:
		if (v->zdepth == v->zcap) {
			uint32_t cap = v->zcap ? v->zcap * 2 : 16;
			const struct decode_obj **n =
			    realloc(v->zst, cap * sizeof *n);
			if (!n)
				return c->err = -ENOMEM;
			v->zst = n;
			v->zcap = cap;
		}
		v->zst[v->zdepth++] = ev->obj;
		zone_ev(c, v, "B", ev->ts, ev->obj, "zone");
		break;
	case FORMAT_VM_ZONE_POP:
		if (v->zdepth)
			zone_ev(c, v, "E", ev->ts, v->zst[--v->zdepth], "zone");
		break;
	default: zone_ev(c, v, "i", ev->ts, ev->obj, "mark"); break;
	}
	return 0;
}

/* One event: GC, heap, JIT (frames come from calls_obs). */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct chrome *c = ud;
	struct cvm *v;
	if (c->err)
		return c->err;
	if (ev->op != FORMAT_OP_GC && ev->op != FORMAT_OP_VM)
		return 0;
	if (!(v = vm_get(c, ev->vm)))
		return c->err = -ENOMEM;
	v->last_ts = ev->ts;
	if ((ev->op == FORMAT_OP_GC || ev->lo < FORMAT_VM_ZONE_PUSH ||
	     ev->lo > FORMAT_VM_MARK) &&
	    cut_here(c, ev->ts, ev->vm)) {
		if (ev->op == FORMAT_OP_GC)
			c->have_gc = 1;
		v->gc_phase = -1;
		return 0;
	}
	if (ev->op == FORMAT_OP_GC)
		gc_event(c, v, ev);
	else if (ev->lo == FORMAT_VM_ATTACH || ev->lo == FORMAT_VM_DETACH) {
		if (ev->lo == FORMAT_VM_DETACH)
			zones_close(c, v, ev->ts);
		heap_counter(c, ev->ts, v->id, ev->heap);
	} else if (ev->lo >= FORMAT_VM_ZONE_PUSH && ev->lo <= FORMAT_VM_MARK)
		return zone_event(c, v, ev);
	else
		jit_event(c, v, ev);
	return 0;
}

/* A sample: an instant named after its innermost frame, with
** its Lua stack (outermost first, from its root Lua function as 'ljlog
** folded' starts it: no C function below the first Lua one; none without
** a Lua function), its state and trace. A sample in the collector or the JIT compiler ends in a
** "(gc)" or "(jit compiler)" frame. */
static int on_sample(void *ud, const struct decode_sample *sm)
{
	struct chrome *c = ud;
	struct cvm *v;
	const struct fnid *fi = &c->x.p->fnid;
	if (c->err)
		return c->err;
	if (!(v = vm_get(c, sm->vm)))
		return c->err = -ENOMEM;
	c->have_samples = 1;
	if (cut_here(c, sm->ts, sm->vm))
		return 0;
	v->used |= 1u << TID_SAMPLES;
	/* The root: the outermost Lua function (none: no stack). */
	uint32_t root = sm->nlua;
	while (root > 0 &&
	       fi->fns[fnid_of(sm->lua[root - 1].func)].kind != FNID_LUA)
		root--;
	unsigned st = sm->state;
	const char *vml = st == FORMAT_STATE_GC || st == FORMAT_STATE_RECORD ||
				  st == FORMAT_STATE_OPT ||
				  st == FORMAT_STATE_ASM
			      ? samples_vm_label(st)
			      : NULL;
	ev_begin(c, "i", sm->ts, sm->vm, TID_SAMPLES);
	if (vml)
		ev_str(c, "name", vml);
	else if (root)
		ev_str(c, "name", fi->fns[fnid_of(sm->lua[0].func)].name);
	else {
		fputs(",\"name\":\"(", c->out);
		fputs(format_state_name(sm->state), c->out);
		fputs(")\"", c->out);
	}
	fputs(",\"cat\":\"sample\",\"s\":\"t\",\"args\":{\"state\":\"", c->out);
	fputs(format_state_name(sm->state), c->out);
	fputs("\",\"stack\":[", c->out);
	for (uint32_t i = root; i-- > 0;) {
		const struct fnid_fn *f = &fi->fns[fnid_of(sm->lua[i].func)];
		char line[32];
		if (i + 1 < root)
			putc(',', c->out);
		if (f->kind == FNID_LUA && sm->lua[i].line) {
			snprintf(line, sizeof line, " line %llu",
				 (unsigned long long)sm->lua[i].line);
			size_t n = strlen(f->name), m = strlen(line);
			char *b = malloc(n + m + 1);
			if (!b)
				return c->err = -ENOMEM;
			memcpy(b, f->name, n);
			memcpy(b + n, line, m + 1);
			json_quote(c->out, b, n + m);
			free(b);
		} else
			json_quote(c->out, f->name, strlen(f->name));
	}
	if (vml) {
		if (root)
			putc(',', c->out);
		json_quote(c->out, vml, strlen(vml));
	}
	fputs("]", c->out);
	if (sm->trace)
		fprintf(c->out, ",\"trace\":%llu",
			(unsigned long long)sm->trace->u.trace.traceno);
	fputs("}}", c->out);
	return 0;
}

/* -- Names -------------------------------------------------------------------- */

/* A metadata event naming a process or thread. */
static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
		 const char *name)
{
	fputs(c->written++ ? ",\n{\"ph\":\"M\"" : "\n{\"ph\":\"M\"", c->out);
	fprintf(c->out, ",\"pid\":%u,\"tid\":%u,\"ts\":0", pid, tid);
	ev_str(c, "name", what);
	fputs(",\"args\":{", c->out);
	fputs("\"name\":", c->out);
	json_quote(c->out, name, strlen(name));
	fputs("}}", c->out);
}

/* Name every process and track seen. */
static void write_names(struct chrome *c)
{
	const struct profile *p = c->x.p;
	char name[600];
	for (size_t i = 0; i < c->nvm; i++) {
		const struct cvm *v = &c->vms[i];
		uint32_t local;
		size_t li = profile_id_log(p, v->id, &local);
		const char *exe = li < p->nlog ? p->logs[li].exe : p->exe;
		snprintf(name, sizeof name, "VM %u (%s, pid %llu)", local,
			 exe && exe[0] ? exe : "?",
			 (unsigned long long)(li < p->nlog ? p->logs[li].pid
							   : p->pid));
		meta(c, "process_name", v->id, 0, name);
		/* The heap counter sits on tid 0; name it too. */
		meta(c, "thread_name", v->id, 0, "VM");
		if (v->used & (1u << TID_GC))
			meta(c, "thread_name", v->id, TID_GC, "GC");
		if (v->used & (1u << TID_SAMPLES))
			meta(c, "thread_name", v->id, TID_SAMPLES, "samples");
		if (v->used & (1u << TID_JIT))
			meta(c, "thread_name", v->id, TID_JIT, "JIT");
		if (v->used & (1u << TID_ZONES))
			meta(c, "thread_name", v->id, TID_ZONES, "zones");
	}
	for (size_t i = 0; i < c->ntrack; i++) {
		const struct cotrack *t = &c->tracks[i];
		if (t->co == 0)
			snprintf(name, sizeof name, "%s",
				 calls_vm_co0_main(&p->calls, t->vm)
				     ? "main coroutine"
				     : "coroutine running at start");
		else
			snprintf(name, sizeof name, "coroutine %u", t->co);
		meta(c, "thread_name", t->vm, t->tid, name);
		fprintf(c->out,
			",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"ts\":0,"
			"\"name\":\"thread_sort_index\",\"args\":"
			"{\"sort_index\":%u}}",
			t->vm, t->tid, t->tid);
	}
}

/* Write path's log as Chrome trace events. */
int export_chrome(const char *path, FILE *out, const struct export_opts *o,
		  char *err, size_t errlen)
{
	struct chrome c;
	memset(&c, 0, sizeof c);
	c.out = out;
	c.x.sink.ud = &c;
	c.x.sink.event = on_event;
	c.x.sink.sample = on_sample;
	c.x.obs.ud = &c;
	c.x.obs.open = on_open;
	c.x.obs.close = on_close;
	c.seekable = ftello(out) >= 0;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	int rc = export_pass_run(&c.x, path, o, err, errlen), wrc = 0;
	if (c.x.p && !c.err && rc != -ENOMEM) {
		/* GC phases still open end with their VM's last event. */
		for (size_t i = 0; i < c.nvm; i++)
			if (c.vms[i].gc_phase > 0) {
				uint64_t f, l, t = c.vms[i].last_ts;
				if (calls_vm_span(&c.x.p->calls, c.vms[i].id,
						  &f, &l) &&
				    l > t)
					t = l;
				gc_close(&c, &c.vms[i], t);
			}
		for (size_t i = 0; i < c.nvm; i++) /* zones left open */
			zones_close(&c, &c.vms[i], c.vms[i].last_ts);
		if (!c.have_frames && !c.have_samples && !c.have_gc &&
		    !c.have_zones) {
			snprintf(err, errlen,
				 "%s has no calls, samples or GC events to "
				 "export (record with calls, sample or gc, "
				 "or use ljlog.zone)",
				 path);
			wrc = EXPORT_EMPTY;
		} else
			write_names(&c);
	}
	fputs("\n]", out);
	if (c.is_cut) {
		char msg[256];
		snprintf(msg, sizeof msg,
			 "%llu events left out from %.3f ms on: the export "
			 "stopped at %llu MB (%ux the log's size, less room "
			 "for the names)",
			 (unsigned long long)c.dropped,
			 export_ns_intro(&c.x, c.cut_ts) / 1e6,
			 (unsigned long long)(c.cut >> 20), EXPORT_SIZE_RATIO);
		fputs(",\"otherData\":{\"ljlog_cut\":", out);
		json_quote(out, msg, strlen(msg));
		fputs("}", out);
		if (o && o->note)
			snprintf(o->note, o->notelen,
				 "%s; export a shorter log, or try --format "
				 "speedscope or pprof, or 'ljlog flame', which "
				 "aggregate",
				 msg);
	}
	fputs("}\n", out);
	if (c.err && !wrc)
		wrc = c.err;
	if (!wrc && (fflush(out) != 0 || ferror(out)))
		wrc = -EIO;
	if (wrc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (wrc == -EIO)
		snprintf(err, errlen, "writing the export failed");
	for (size_t i = 0; i < c.ntrack; i++)
		free(c.tracks[i].f);
	free(c.tracks);
	for (size_t i = 0; i < c.nvm; i++)
		free(c.vms[i].zst);
	free(c.vms);
	hmap_free(&c.trackmap);
	hmap_free(&c.vmmap);
	export_pass_free(&c.x);
	return wrc ? wrc : rc;
}
