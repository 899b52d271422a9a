/*
** ljlog reader library: MAPPING blocks, records up to the payload end.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -- MAPPING ----------------------------------------------------------------- */

/* A TRACE record's snapshots (version 3) into o. */
static int dec_trace_exits(struct decode *d, const struct reader_block *b,
			   struct decode_cur *c, struct decode_obj *o)
{
	uint64_t ns, nf, pid;
	int rc;
	if ((rc = dec_get_u(c, "TRACE nsnap", &ns)) < 0)
		return dec_bad_field(d, b, c, rc);
	/* Counts are checked before anything is allocated for them. */
	if (ns > DECODE_MAX_SNAPS)
		return dec_corrupt(d, b, -EBADMSG,
				   "TRACE record %u: %llu snapshots, more than "
				   "the reader accepts (%u)",
				   o->id, (unsigned long long)ns,
				   DECODE_MAX_SNAPS);
	if (ns > (uint64_t)(c->end - c->p) / 2)
		return dec_corrupt(d, b, -EBADMSG,
				   "TRACE record %u: %llu snapshots cannot fit "
				   "in the payload",
				   o->id, (unsigned long long)ns);
	struct decode_texit *sn = dec_alloc(d, (size_t)ns * sizeof *sn + 1);
	if (!sn)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	for (uint64_t k = 0; k < ns; k++) {
		if ((rc = dec_get_u(c, "TRACE snapshot mcofs", &sn[k].mcofs)) <
			0 ||
		    (rc = dec_get_u(c, "TRACE snapshot nframes", &nf)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (nf > DECODE_MAX_FRAMES)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "TRACE record %u snapshot %llu: %llu "
			    "frames, more than the reader accepts",
			    o->id, (unsigned long long)k,
			    (unsigned long long)nf);
		if (nf > (uint64_t)(c->end - c->p) / 2)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "TRACE record %u snapshot %llu: %llu "
			    "frames cannot fit in the payload",
			    o->id, (unsigned long long)k,
			    (unsigned long long)nf);
		if (k && sn[k].mcofs < sn[k - 1].mcofs)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "TRACE record %u snapshot %llu: mcofs "
			    "goes back",
			    o->id, (unsigned long long)k);
		sn[k].nframes = (uint32_t)nf;
		sn[k].f = dec_alloc(d, (size_t)nf * sizeof *sn[k].f + 1);
		if (!sn[k].f)
			return dec_corrupt(d, b, -ENOMEM, "out of memory");
		for (uint64_t j = 0; j < nf; j++) {
			if ((rc = dec_get_u(c, "TRACE frame proto", &pid)) <
				0 ||
			    (rc = dec_get_u(c, "TRACE frame line",
					    &sn[k].f[j].line)) < 0)
				return dec_bad_field(d, b, c, rc);
			struct decode_obj *po =
			    pid < DECODE_MAX_ID ? dec_lookup(d, pid) : NULL;
			if (!po || po->kind != FORMAT_REC_PROTO)
				return dec_corrupt(
				    d, b, -EBADMSG,
				    "TRACE record %u snapshot %llu: frame "
				    "proto ID %llu is %s",
				    o->id, (unsigned long long)k,
				    (unsigned long long)pid,
				    po ? "not a PROTO"
				       : "not defined before use");
			sn[k].f[j].func = po;
		}
	}
	o->u.trace.nexit = (uint32_t)ns;
	o->u.trace.exits = sn;
	return 0;
}

/* A count of frames of STACK record o, each at least min
** bytes; 0 or an error. */
static int stack_count(struct decode *d, const struct reader_block *b,
		       struct decode_cur *c, struct decode_obj *o,
		       const char *what, unsigned min, uint32_t *n)
{
	uint64_t v;
	int rc;
	if ((rc = dec_get_u(c, what, &v)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (v > DECODE_MAX_FRAMES)
		return dec_corrupt(d, b, -EBADMSG,
				   "STACK record %u: %s %llu, more than the "
				   "reader accepts (%u)",
				   o->id, what, (unsigned long long)v,
				   DECODE_MAX_FRAMES);
	if (v > (uint64_t)(c->end - c->p) / min)
		return dec_corrupt(d, b, -EBADMSG,
				   "STACK record %u: %s %llu cannot fit in "
				   "the payload",
				   o->id, what, (unsigned long long)v);
	*n = (uint32_t)v;
	return 0;
}

/* A STACK record's frames (version 6) into o: its own, then
** its parent's. */
static int dec_stack(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o)
{
	uint64_t v;
	uint32_t n, pn;
	int rc;
	if ((rc = dec_get_u(c, "STACK parent", &v)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *par = NULL;
	if (v) {
		par = v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
		if (!par || par->kind != FORMAT_REC_STACK)
			return dec_corrupt(d, b, -EBADMSG,
					   "STACK record %u: parent ID %llu is "
					   "%s",
					   o->id, (unsigned long long)v,
					   par ? "not a STACK"
					       : "not defined before use");
	}
	if ((rc = stack_count(d, b, c, o, "nlua", 2, &n)) != 0)
		return rc;
	pn = par ? par->u.stack.nlua : 0;
	if (n + pn > DECODE_MAX_FRAMES)
		return dec_corrupt(d, b, -EBADMSG,
				   "STACK record %u: %u Lua frames with its "
				   "parent's, more than the reader accepts",
				   o->id, n + pn);
	struct decode_lua_frame *lua = dec_alloc(d, n * sizeof *lua + 1);
	if (!lua)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	for (uint32_t j = 0; j < n; j++) {
		if ((rc = dec_get_u(c, "STACK Lua frame func", &v)) < 0 ||
		    (rc = dec_get_u(c, "STACK Lua frame line", &lua[j].line)) <
			0)
			return dec_bad_field(d, b, c, rc);
		struct decode_obj *f =
		    v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
		if (!f || (f->kind != FORMAT_REC_PROTO &&
			   f->kind != FORMAT_REC_CFUNC &&
			   f->kind != FORMAT_REC_FFUNC))
			return dec_corrupt(d, b, -EBADMSG,
					   "STACK record %u: Lua frame %u func "
					   "ID %llu is %s",
					   o->id, j, (unsigned long long)v,
					   f ? "not a function"
					     : "not defined before use");
		lua[j].func = f;
	}
	o->u.stack.own_lua = n;
	o->u.stack.nlua = n + pn;
	o->u.stack.lua = lua;
	if ((rc = stack_count(d, b, c, o, "nhost", 1, &n)) != 0)
		return rc;
	pn = par ? par->u.stack.nhost : 0;
	if (n + pn > DECODE_MAX_FRAMES)
		return dec_corrupt(d, b, -EBADMSG,
				   "STACK record %u: %u host frames with its "
				   "parent's, more than the reader accepts",
				   o->id, n + pn);
	struct decode_obj **host = dec_alloc(d, n * sizeof *host + 1);
	if (!host)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	for (uint32_t j = 0; j < n; j++) {
		if ((rc = dec_get_u(c, "STACK host frame sym", &v)) < 0)
			return dec_bad_field(d, b, c, rc);
		struct decode_obj *h =
		    v < DECODE_MAX_ID ? dec_lookup(d, v) : NULL;
		if (!h || h->kind != FORMAT_REC_HOSTSYM)
			return dec_corrupt(d, b, -EBADMSG,
					   "STACK record %u: host frame %u sym "
					   "ID %llu is %s",
					   o->id, j, (unsigned long long)v,
					   h ? "not a HOSTSYM"
					     : "not defined before use");
		host[j] = h;
	}
	o->u.stack.own_host = n;
	o->u.stack.nhost = n + pn;
	o->u.stack.host = host;
	o->u.stack.parent = par;
	return 0;
}

/* A NAME record (version 14) at payload offset at, its ID
** read: the new name of the PROTO or CFUNC id, set on it, then the sink's
** rename. It defines no ID. */
static int dec_name(struct decode *d, const struct reader_block *b,
		    struct decode_cur *c, uint64_t id, size_t at)
{
	struct decode_str name;
	int rc;
	if ((rc = dec_get_s(d, c, "NAME name", &name)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *o = dec_lookup(d, id);
	if (!o)
		return dec_corrupt(d, b, -EBADMSG,
				   "NAME record at payload offset %zu: ID %llu "
				   "is not defined before use",
				   at, (unsigned long long)id);
	if (o->kind == FORMAT_REC_PROTO)
		o->u.proto.name = name;
	else if (o->kind == FORMAT_REC_CFUNC)
		o->u.cfunc.name = name;
	else
		return dec_corrupt(d, b, -EBADMSG,
				   "NAME record at payload offset %zu: ID %llu "
				   "is a %s, not a PROTO or CFUNC",
				   at, (unsigned long long)id,
				   format_rec_name(o->kind));
	if (d->sink.rename && (rc = d->sink.rename(d->sink.ud, o)))
		return rc;
	return 0;
}

/* Decode a MAPPING payload: records up to the end. */
int dec_mapping(struct decode *d, const struct reader_block *b,
		struct decode_cur *c)
{
	uint64_t vm, id, kind;
	int rc;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (vm == 0 || vm >= DECODE_MAX_ID)
		return dec_corrupt(d, b, -EBADMSG, "MAPPING for VM ID %llu",
				   (unsigned long long)vm);
	if (d->sink.mapping &&
	    (rc = d->sink.mapping(d->sink.ud, (uint32_t)vm + d->idbase, b)))
		return rc;
	while (c->p < c->end) {
		size_t at = (size_t)(c->p - c->start);
		kind = *c->p++;
		if (kind < FORMAT_REC_VM || kind > FORMAT_REC_NAME ||
		    (kind == FORMAT_REC_STACK && d->intro.version < 6) ||
		    (kind == FORMAT_REC_STRING && d->intro.version < 9) ||
		    (kind == FORMAT_REC_NAME && d->intro.version < 14))
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "unknown record kind %llu at payload "
			    "offset %zu",
			    (unsigned long long)kind, at);
		if ((rc = dec_get_u(c, "record id", &id)) < 0)
			return dec_bad_field(d, b, c, rc);
		if (id == 0 || id >= DECODE_MAX_ID)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "%s record at payload offset %zu: ID "
			    "%llu out of range (1 to %u)",
			    format_rec_name((unsigned)kind), at,
			    (unsigned long long)id, DECODE_MAX_ID - 1);
		if (kind == FORMAT_REC_NAME) {
			if ((rc = dec_name(d, b, c, id, at)) != 0)
				return rc;
			continue;
		}
		struct decode_obj *old = dec_lookup(d, id);
		if (old)
			return dec_corrupt(d, b, -EBADMSG,
					   "%s record at payload offset %zu "
					   "redefines ID %llu (a %s defined in "
					   "block %llu)",
					   format_rec_name((unsigned)kind), at,
					   (unsigned long long)id,
					   format_rec_name(old->kind),
					   (unsigned long long)old->block);
		struct decode_obj *o = dec_alloc(d, sizeof *o);
		if (!o)
			return dec_corrupt(d, b, -ENOMEM, "out of memory");
		o->id = (uint32_t)id;
		o->vm = (uint32_t)vm;
		o->kind = (unsigned)kind;
		o->block = b->index;
		switch (kind) {
		case FORMAT_REC_VM:
			if ((rc = dec_get_u(c, "VM thread", &o->u.vm.thread)) <
				0 ||
			    (rc = dec_get_u(c, "VM heap", &o->u.vm.heap)) < 0 ||
			    (rc = dec_get_u(c, "VM flags", &o->u.vm.flags)) < 0)
				return dec_bad_field(d, b, c, rc);
			o->u.vm.alloc_rate = 0;
			if (d->intro.version >= 7 &&
			    (rc = dec_get_u(c, "VM alloc_rate",
					    &o->u.vm.alloc_rate)) < 0)
				return dec_bad_field(d, b, c, rc);
			d->vms++;
			break;
		case FORMAT_REC_PROTO:
			if ((rc = dec_get_s(d, c, "PROTO chunk",
					    &o->u.proto.chunk)) < 0 ||
			    (rc = dec_get_u(c, "PROTO firstline",
					    &o->u.proto.firstline)) < 0 ||
			    (rc = dec_get_u(c, "PROTO numline",
					    &o->u.proto.numline)) < 0)
				return dec_bad_field(d, b, c, rc);
			o->u.proto.name.s = "";
			if (d->intro.version >= 4 &&
			    (rc = dec_get_s(d, c, "PROTO name",
					    &o->u.proto.name)) < 0)
				return dec_bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_CFUNC:
			if ((rc = dec_get_u(c, "CFUNC address",
					    &o->u.cfunc.address)) < 0 ||
			    (rc = dec_get_s(d, c, "CFUNC name",
					    &o->u.cfunc.name)) < 0 ||
			    (rc = dec_get_s(d, c, "CFUNC object",
					    &o->u.cfunc.object)) < 0)
				return dec_bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_FFUNC:
			if ((rc = dec_get_u(c, "FFUNC ffid",
					    &o->u.ffunc.ffid)) < 0 ||
			    (rc = dec_get_s(d, c, "FFUNC name",
					    &o->u.ffunc.name)) < 0 ||
			    (rc = dec_get_u(c, "FFUNC flags",
					    &o->u.ffunc.flags)) < 0)
				return dec_bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_COROUTINE:
			if ((rc = dec_get_u(c, "COROUTINE flags",
					    &o->u.co.flags)) < 0)
				return dec_bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_TRACE: {
			uint64_t pid;
			if ((rc = dec_get_u(c, "TRACE traceno",
					    &o->u.trace.traceno)) < 0 ||
			    (rc = dec_get_u(c, "TRACE proto", &pid)) < 0 ||
			    (rc = dec_get_u(c, "TRACE line",
					    &o->u.trace.line)) < 0 ||
			    (rc = dec_get_u(c, "TRACE root",
					    &o->u.trace.root)) < 0)
				return dec_bad_field(d, b, c, rc);
			struct decode_obj *po =
			    pid < DECODE_MAX_ID ? dec_lookup(d, pid) : NULL;
			if (!po || po->kind != FORMAT_REC_PROTO)
				return dec_corrupt(
				    d, b, -EBADMSG,
				    "TRACE record %llu at payload offset %zu: "
				    "proto ID %llu is %s",
				    (unsigned long long)id, at,
				    (unsigned long long)pid,
				    po ? "not a PROTO"
				       : "not defined before use");
			o->u.trace.proto = po;
			if (d->intro.version >= 3 &&
			    (rc = dec_trace_exits(d, b, c, o)) != 0)
				return rc;
			break;
		}
		case FORMAT_REC_HOSTSYM:
			if ((rc = dec_get_u(c, "HOSTSYM address",
					    &o->u.host.address)) < 0 ||
			    (rc = dec_get_s(d, c, "HOSTSYM name",
					    &o->u.host.name)) < 0 ||
			    (rc = dec_get_s(d, c, "HOSTSYM object",
					    &o->u.host.object)) < 0 ||
			    (rc = dec_get_u(c, "HOSTSYM flags",
					    &o->u.host.flags)) < 0)
				return dec_bad_field(d, b, c, rc);
			break;
		case FORMAT_REC_STACK:
			if ((rc = dec_stack(d, b, c, o)) != 0)
				return rc;
			break;
		case FORMAT_REC_STRING:
			if ((rc = dec_get_s(d, c, "STRING text",
					    &o->u.str.text)) < 0)
				return dec_bad_field(d, b, c, rc);
			break;
		}
		if (dec_insert(d, o) < 0)
			return dec_corrupt(d, b, -ENOMEM, "out of memory");
		if (o->id > d->maxid)
			d->maxid = o->id;
		/* In the table under its own ID; the sink sees it based. */
		o->id += d->idbase;
		o->vm += d->idbase;
		if (d->sink.record && (rc = d->sink.record(d->sink.ud, o)))
			return rc;
	}
	struct decode_obj *v = dec_lookup(d, vm);
	if (!v || v->kind != FORMAT_REC_VM)
		return dec_corrupt(
		    d, b, -EBADMSG, "MAPPING for VM ID %llu, which is %s",
		    (unsigned long long)vm, v ? "not a VM" : "not defined");
	return 0;
}
