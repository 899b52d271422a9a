/*
** ljlog reader library: MAPPING blocks, records up to the payload end.
** A table of record kinds (FORMAT_REC_*) gives each its version and its
** decoder; what every record shares (kind, ID, redefinition, the ID
** table, the sink) is done once around it. NAME renames, defines nothing.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "decode/decode_kinds.h"

#include <errno.h>

/* -- TRACE and STACK records -------------------------------------------------- */

/* Snapshot k of TRACE record o into sn[k] (sn[k - 1] read): where its
** code starts and its frames, each a PROTO defined before. */
static int trace_exit(struct decode *d, const struct reader_block *b,
		      struct decode_cur *c, struct decode_obj *o,
		      struct decode_texit *sn, uint64_t k)
{
	uint64_t nf, pid;
	int rc;
	if ((rc = dec_get_u(c, "TRACE snapshot mcofs", &sn[k].mcofs)) < 0 ||
	    (rc = dec_get_u(c, "TRACE snapshot nframes", &nf)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (nf > DECODE_MAX_FRAMES)
		return dec_corrupt(d, b, -EBADMSG,
				   "TRACE record %u snapshot %llu: %llu "
				   "frames, more than the reader accepts",
				   o->id, (unsigned long long)k,
				   (unsigned long long)nf);
	if (nf > (uint64_t)(c->end - c->p) / 2)
		return dec_corrupt(d, b, -EBADMSG,
				   "TRACE record %u snapshot %llu: %llu "
				   "frames cannot fit in the payload",
				   o->id, (unsigned long long)k,
				   (unsigned long long)nf);
	if (k && sn[k].mcofs < sn[k - 1].mcofs)
		return dec_corrupt(d, b, -EBADMSG,
				   "TRACE record %u snapshot %llu: mcofs "
				   "goes back",
				   o->id, (unsigned long long)k);
	sn[k].nframes = (uint32_t)nf;
	sn[k].f = dec_alloc(d, (size_t)nf * sizeof *sn[k].f + 1);
	if (!sn[k].f)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	for (uint64_t j = 0; j < nf; j++) {
		if ((rc = dec_get_u(c, "TRACE frame proto", &pid)) < 0 ||
		    (rc = dec_get_u(c, "TRACE frame line", &sn[k].f[j].line)) <
			0)
			return dec_bad_field(d, b, c, rc);
		struct decode_obj *po = dec_find(d, pid);
		if (!po || po->kind != FORMAT_REC_PROTO)
			return dec_corrupt(
			    d, b, -EBADMSG,
			    "TRACE record %u snapshot %llu: frame "
			    "proto ID %llu is %s",
			    o->id, (unsigned long long)k,
			    (unsigned long long)pid,
			    po ? "not a PROTO" : "not defined before use");
		sn[k].f[j].func = po;
	}
	sn[k].afr = sn[k].nframes;
	if (d->intro.version >= 19) {
		uint64_t a;
		if ((rc = dec_get_u(c, "TRACE snapshot aline", &a)) < 0 ||
		    (rc = dec_get_u(c, "TRACE snapshot tline",
				    &sn[k].aline[FORMAT_CALL_TABLE])) < 0 ||
		    (rc = dec_get_u(c, "TRACE snapshot kline",
				    &sn[k].aline[FORMAT_CALL_NEWKEY])) < 0)
			return dec_bad_field(d, b, c, rc);
		if ((a & 1) && nf < 2)
			return dec_corrupt(d, b, -EBADMSG,
					   "TRACE record %u snapshot %llu: "
					   "aline in the caller of its only "
					   "frame",
					   o->id, (unsigned long long)k);
		sn[k].has_aline = 1;
		sn[k].aline[FORMAT_CALL_ANY] = a >> 1;
		sn[k].afr -= (uint32_t)(a & 1);
	}
	return 0;
}

/* A TRACE record's snapshots (version 3) into o: their count checked
** before anything is allocated for them. */
static int trace_exits(struct decode *d, const struct reader_block *b,
		       struct decode_cur *c, struct decode_obj *o)
{
	uint64_t ns;
	int rc;
	if ((rc = dec_get_u(c, "TRACE nsnap", &ns)) < 0)
		return dec_bad_field(d, b, c, rc);
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
	for (uint64_t k = 0; k < ns; k++)
		if ((rc = trace_exit(d, b, c, o, sn, k)) != 0)
			return rc;
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

/* STACK record o's own Lua frames, pn more in its parent's. */
static int stack_lua(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o, uint32_t pn)
{
	uint64_t v;
	uint32_t n;
	int rc;
	if ((rc = stack_count(d, b, c, o, "nlua", 2, &n)) != 0)
		return rc;
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
		struct decode_obj *f = dec_find(d, v);
		if (!f || !dec_is_func(f))
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
	return 0;
}

/* STACK record o's own host frames, pn more in its parent's. */
static int stack_host(struct decode *d, const struct reader_block *b,
		      struct decode_cur *c, struct decode_obj *o, uint32_t pn)
{
	uint64_t v;
	uint32_t n;
	int rc;
	if ((rc = stack_count(d, b, c, o, "nhost", 1, &n)) != 0)
		return rc;
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
		struct decode_obj *h = dec_find(d, v);
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
	return 0;
}

/* A STACK record's frames (version 6) into o: its parent, its own Lua
** frames, its own host frames. */
static int stack_frames(struct decode *d, const struct reader_block *b,
			struct decode_cur *c, struct decode_obj *o)
{
	uint64_t v;
	int rc;
	if ((rc = dec_get_u(c, "STACK parent", &v)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *par = NULL;
	if (v) {
		par = dec_find(d, v);
		if (!par || par->kind != FORMAT_REC_STACK)
			return dec_corrupt(d, b, -EBADMSG,
					   "STACK record %u: parent ID %llu is "
					   "%s",
					   o->id, (unsigned long long)v,
					   par ? "not a STACK"
					       : "not defined before use");
	}
	if ((rc = stack_lua(d, b, c, o, par ? par->u.stack.nlua : 0)) != 0 ||
	    (rc = stack_host(d, b, c, o, par ? par->u.stack.nhost : 0)) != 0)
		return rc;
	o->u.stack.parent = par;
	return 0;
}

/* A NAME record (version 14) at payload offset at, its ID
** read: the new name of the PROTO or CFUNC id, set on it, then the sink's
** rename. It defines no ID. */
static int rec_name(struct decode *d, const struct reader_block *b,
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

/* -- One decoder per record kind -------------------------------------------- */

/* Each reads the fields after the ID of record o (kind, id, vm and block
** set), defined at payload offset at: 0 or an error from dec_corrupt. */
typedef int rec_fn(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, struct decode_obj *o, size_t at);

/* A VM record (alloc_rate from version 7). */
static int rec_vm(struct decode *d, const struct reader_block *b,
		  struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_u(c, "VM thread", &o->u.vm.thread)) < 0 ||
	    (rc = dec_get_u(c, "VM heap", &o->u.vm.heap)) < 0 ||
	    (rc = dec_get_u(c, "VM flags", &o->u.vm.flags)) < 0)
		return dec_bad_field(d, b, c, rc);
	o->u.vm.alloc_rate = 0;
	if (d->intro.version >= 7 &&
	    (rc = dec_get_u(c, "VM alloc_rate", &o->u.vm.alloc_rate)) < 0)
		return dec_bad_field(d, b, c, rc);
	d->vms++;
	return 0;
}

/* A PROTO record (its name from version 4). */
static int rec_proto(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_s(d, c, "PROTO chunk", &o->u.proto.chunk)) < 0 ||
	    (rc = dec_get_u(c, "PROTO firstline", &o->u.proto.firstline)) < 0 ||
	    (rc = dec_get_u(c, "PROTO numline", &o->u.proto.numline)) < 0)
		return dec_bad_field(d, b, c, rc);
	o->u.proto.name.s = "";
	if (d->intro.version >= 4 &&
	    (rc = dec_get_s(d, c, "PROTO name", &o->u.proto.name)) < 0)
		return dec_bad_field(d, b, c, rc);
	return 0;
}

/* A CFUNC record. */
static int rec_cfunc(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_u(c, "CFUNC address", &o->u.cfunc.address)) < 0 ||
	    (rc = dec_get_s(d, c, "CFUNC name", &o->u.cfunc.name)) < 0 ||
	    (rc = dec_get_s(d, c, "CFUNC object", &o->u.cfunc.object)) < 0)
		return dec_bad_field(d, b, c, rc);
	return 0;
}

/* An FFUNC record. */
static int rec_ffunc(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_u(c, "FFUNC ffid", &o->u.ffunc.ffid)) < 0 ||
	    (rc = dec_get_s(d, c, "FFUNC name", &o->u.ffunc.name)) < 0 ||
	    (rc = dec_get_u(c, "FFUNC flags", &o->u.ffunc.flags)) < 0)
		return dec_bad_field(d, b, c, rc);
	return 0;
}

/* A COROUTINE record. */
static int rec_coroutine(struct decode *d, const struct reader_block *b,
			 struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_u(c, "COROUTINE flags", &o->u.co.flags)) < 0)
		return dec_bad_field(d, b, c, rc);
	return 0;
}

/* A TRACE record: where it starts, then its snapshots (version 3). */
static int rec_trace(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o, size_t at)
{
	uint64_t pid;
	int rc;
	if ((rc = dec_get_u(c, "TRACE traceno", &o->u.trace.traceno)) < 0 ||
	    (rc = dec_get_u(c, "TRACE proto", &pid)) < 0 ||
	    (rc = dec_get_u(c, "TRACE line", &o->u.trace.line)) < 0 ||
	    (rc = dec_get_u(c, "TRACE root", &o->u.trace.root)) < 0)
		return dec_bad_field(d, b, c, rc);
	struct decode_obj *po = dec_find(d, pid);
	if (!po || po->kind != FORMAT_REC_PROTO)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "TRACE record %llu at payload offset %zu: "
		    "proto ID %llu is %s",
		    (unsigned long long)o->id, at, (unsigned long long)pid,
		    po ? "not a PROTO" : "not defined before use");
	o->u.trace.proto = po;
	if (d->intro.version >= 3)
		return trace_exits(d, b, c, o);
	return 0;
}

/* A HOSTSYM record. */
static int rec_hostsym(struct decode *d, const struct reader_block *b,
		       struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_u(c, "HOSTSYM address", &o->u.host.address)) < 0 ||
	    (rc = dec_get_s(d, c, "HOSTSYM name", &o->u.host.name)) < 0 ||
	    (rc = dec_get_s(d, c, "HOSTSYM object", &o->u.host.object)) < 0 ||
	    (rc = dec_get_u(c, "HOSTSYM flags", &o->u.host.flags)) < 0)
		return dec_bad_field(d, b, c, rc);
	return 0;
}

/* A STACK record (version 6). */
static int rec_stack(struct decode *d, const struct reader_block *b,
		     struct decode_cur *c, struct decode_obj *o, size_t at)
{
	(void)at;
	return stack_frames(d, b, c, o);
}

/* A STRING record (version 9). */
static int rec_string(struct decode *d, const struct reader_block *b,
		      struct decode_cur *c, struct decode_obj *o, size_t at)
{
	int rc;
	(void)at;
	if ((rc = dec_get_s(d, c, "STRING text", &o->u.str.text)) < 0)
		return dec_bad_field(d, b, c, rc);
	return 0;
}

/* -- The record table -------------------------------------------------------- */

/* Every record kind, by FORMAT_REC_*: the format version it came in and
** its decoder. A kind without a row, or before its version, is unknown. */
static const struct rec_row {
	unsigned since; /* first format version with it; 0: none */
	rec_fn *decode; /* NULL: NAME, which defines no ID (rec_name) */
} recs[] = {
    [FORMAT_REC_VM] = {1, rec_vm},
    [FORMAT_REC_PROTO] = {1, rec_proto},
    [FORMAT_REC_CFUNC] = {1, rec_cfunc},
    [FORMAT_REC_FFUNC] = {1, rec_ffunc},
    [FORMAT_REC_COROUTINE] = {1, rec_coroutine},
    [FORMAT_REC_TRACE] = {1, rec_trace},
    [FORMAT_REC_HOSTSYM] = {1, rec_hostsym},
    [FORMAT_REC_STACK] = {6, rec_stack},
    [FORMAT_REC_STRING] = {9, rec_string},
    [FORMAT_REC_NAME] = {14, NULL},
};

/* A new object of this kind and ID (checked) in MAPPING block b of VM vm,
** at payload offset at: decoded by its row, entered in the ID table,
** passed to the sink. */
static int rec_define(struct decode *d, const struct reader_block *b,
		      struct decode_cur *c, unsigned kind, uint64_t id,
		      uint64_t vm, size_t at)
{
	int rc;
	struct decode_obj *old = dec_lookup(d, id);
	if (old)
		return dec_corrupt(
		    d, b, -EBADMSG,
		    "%s record at payload offset %zu "
		    "redefines ID %llu (a %s defined in "
		    "block %llu)",
		    format_rec_name(kind), at, (unsigned long long)id,
		    format_rec_name(old->kind), (unsigned long long)old->block);
	struct decode_obj *o = dec_alloc(d, sizeof *o);
	if (!o)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	o->id = (uint32_t)id;
	o->vm = (uint32_t)vm;
	o->kind = kind;
	o->block = b->index;
	if ((rc = recs[kind].decode(d, b, c, o, at)) != 0)
		return rc;
	if (dec_insert(d, o) < 0)
		return dec_corrupt(d, b, -ENOMEM, "out of memory");
	if (o->id > d->maxid)
		d->maxid = o->id;
	/* In the table under its own ID; the sink sees it based. */
	o->id += d->idbase;
	o->vm += d->idbase;
	if (d->sink.record && (rc = d->sink.record(d->sink.ud, o)))
		return rc;
	return 0;
}

/* One record of MAPPING block b of VM vm, at the cursor: its kind and ID
** checked, then handed to its row (or rec_name). */
static int rec_one(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, uint64_t vm)
{
	size_t at = (size_t)(c->p - c->start);
	uint64_t id, kind = *c->p++;
	int rc;
	if (kind >= sizeof recs / sizeof recs[0] || !recs[kind].since ||
	    d->intro.version < recs[kind].since)
		return dec_corrupt(d, b, -EBADMSG,
				   "unknown record kind %llu at payload "
				   "offset %zu",
				   (unsigned long long)kind, at);
	if ((rc = dec_get_u(c, "record id", &id)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (id == 0 || id >= DECODE_MAX_ID)
		return dec_corrupt(d, b, -EBADMSG,
				   "%s record at payload offset %zu: ID "
				   "%llu out of range (1 to %u)",
				   format_rec_name((unsigned)kind), at,
				   (unsigned long long)id, DECODE_MAX_ID - 1);
	if (!recs[kind].decode)
		return rec_name(d, b, c, id, at);
	return rec_define(d, b, c, (unsigned)kind, id, vm, at);
}

/* Decode a MAPPING payload: records up to the end. */
int dec_mapping(struct decode *d, const struct reader_block *b,
		struct decode_cur *c)
{
	uint64_t vm;
	int rc;
	if ((rc = dec_get_u(c, "vm", &vm)) < 0)
		return dec_bad_field(d, b, c, rc);
	if (vm == 0 || vm >= DECODE_MAX_ID)
		return dec_corrupt(d, b, -EBADMSG, "MAPPING for VM ID %llu",
				   (unsigned long long)vm);
	if (d->sink.mapping &&
	    (rc = d->sink.mapping(d->sink.ud, (uint32_t)vm + d->idbase, b)))
		return rc;
	while (c->p < c->end)
		if ((rc = rec_one(d, b, c, vm)) != 0)
			return rc;
	struct decode_obj *v = dec_lookup(d, vm);
	if (!v || v->kind != FORMAT_REC_VM)
		return dec_corrupt(
		    d, b, -EBADMSG, "MAPPING for VM ID %llu, which is %s",
		    (unsigned long long)vm, v ? "not a VM" : "not defined");
	return 0;
}
