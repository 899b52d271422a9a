/*
** ljlog reader processors: function identity.
** Identity keys are tagged byte strings ('L', 'C', 'F', 'H', 'I', then
** parts separated by 0x1f) in the interner, whose dense index is the
** function's.
*/
#include "fnid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pseudo_names[FNID_PS__MAX] = {
    "(unknown)", "(gc)", "(jit)", "(internal)", "(trace)", "(before attach)",
};

/* Any thread. An empty table. */
void fnid_init(struct fnid *f)
{
	memset(f, 0, sizeof *f);
	for (int i = 0; i < FNID_PS__MAX; i++)
		f->pseudo[i] = -1;
}

/* Any thread. Free everything. */
void fnid_free(struct fnid *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->fns[i].name);
		free(f->fns[i].file);
	}
	free(f->fns);
	intern_free(&f->keys);
	hmap_free(&f->addr);
	fnid_init(f);
}

/* Any thread. Index of the function with this identity key, created with
** name/file/line/kind when new; -1 when out of memory. */
static int64_t get(struct fnid *f, const char *key, size_t keylen,
		   const char *name, const char *file, uint64_t line,
		   unsigned kind)
{
	int64_t i = intern_find(&f->keys, key, keylen);
	if (i >= 0)
		return i;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct fnid_fn *fns = realloc(f->fns, cap * sizeof *fns);
		if (!fns)
			return -1;
		f->fns = fns;
		f->cap = cap;
	}
	struct fnid_fn *fn = &f->fns[f->n];
	memset(fn, 0, sizeof *fn);
	fn->name = strdup(name);
	fn->file = strdup(file);
	fn->line = line;
	fn->kind = kind;
	if (!fn->name || !fn->file ||
	    intern_put(&f->keys, key, keylen) != (int64_t)f->n) {
		free(fn->name);
		free(fn->file);
		return -1;
	}
	return (int64_t)f->n++;
}

/* Any thread. Index of a pseudo-function. */
int64_t fnid_pseudo(struct fnid *f, enum fnid_pseudo ps)
{
	if (f->pseudo[ps] < 0) {
		char key[32];
		int kl = snprintf(key, sizeof key, "I\x1f%s", pseudo_names[ps]);
		f->pseudo[ps] = get(f, key, (size_t)kl, pseudo_names[ps], "", 0,
				    FNID_INTERNAL);
	}
	return f->pseudo[ps];
}

/* Any thread. Build a key from parts separated by 0x1f (each part cut to
** what fits in cap). */
static size_t key_join(char *out, size_t cap, char tag, const char *a,
		       size_t alen, const char *b, size_t blen, uint64_t num)
{
	size_t n = 0;
	int k;
	if (cap < 40)
		return 0;
	out[n++] = tag;
	out[n++] = 0x1f;
	if (alen > cap - 40)
		alen = cap - 40;
	memcpy(out + n, a, alen);
	n += alen;
	out[n++] = 0x1f;
	if (blen > cap - 40 - alen)
		blen = cap - 40 - alen;
	memcpy(out + n, b, blen);
	n += blen;
	k = snprintf(out + n, cap - n, "\x1f%llu", (unsigned long long)num);
	return n + (size_t)k;
}

/* Any thread. Index of the host function named after a HOSTSYM. */
int64_t fnid_host(struct fnid *f, const char *hname, const char *obj)
{
	const char *base = strrchr(obj, '/');
	size_t nl = strlen(hname), ol = strlen(obj);
	size_t cap = nl + ol + 64;
	char *key = malloc(cap), *name = malloc(cap);
	int64_t fn = -1;
	if (key && name) {
		if (nl)
			snprintf(name, cap, "%s", hname);
		else
			snprintf(name, cap, "[%s]", base ? base + 1 : obj);
		size_t kl = key_join(key, cap, 'H', hname, nl, obj, ol, 0);
		fn = get(f, key, kl, name, obj, 0, FNID_HOST);
	}
	free(key);
	free(name);
	return fn;
}

/* Any thread. Index of the pseudo-function of TRACE t, an allocation site
** in it whose place is unknown: "trace N (started at line L)", its file
** the chunk it starts in. */
int64_t fnid_trace(struct fnid *f, const struct decode_obj *t)
{
	const struct decode_obj *pt = t->u.trace.proto;
	char name[96], file[256], key[320];
	snprintf(name, sizeof name, "trace %llu (started at line %llu)",
		 (unsigned long long)t->u.trace.traceno,
		 (unsigned long long)t->u.trace.line);
	file[0] = 0;
	if (pt && pt->kind == FORMAT_REC_PROTO)
		decode_chunk_name(&pt->u.proto.chunk, file, sizeof file);
	size_t kl = key_join(key, sizeof key, 'T', name, strlen(name), file,
			     strlen(file), 0);
	return get(f, key, kl, name, file, 0, FNID_INTERNAL);
}

/* Any thread. Function index for a PROTO, CFUNC or FFUNC object. */
static int64_t for_obj(struct fnid *f, const struct decode_obj *o)
{
	char addr[32];
	size_t cap = o->kind == FORMAT_REC_PROTO
			 ? o->u.proto.chunk.len + o->u.proto.name.len
		     : o->kind == FORMAT_REC_CFUNC
			 ? o->u.cfunc.name.len + o->u.cfunc.object.len
			 : o->u.ffunc.name.len;
	cap += 64;
	/* Names as long as the chunk: two long chunk names that differ only
	** at the end must stay two names. */
	size_t namesz = cap + 32, filesz = cap;
	char *key = malloc(cap), *name = malloc(namesz), *file = malloc(filesz);
	int64_t r = -1;
	size_t kl;
	if (!key || !name || !file) {
		free(key);
		free(name);
		free(file);
		return -1;
	}
	switch (o->kind) {
	case FORMAT_REC_PROTO:
		decode_chunk_name(&o->u.proto.chunk, file, filesz);
		decode_proto_name(o, o->u.proto.firstline, name, namesz);
		/* Two functions at one chunk:line (on one line) differ by
		** name: the name is part of the identity. */
		kl = key_join(key, cap, 'L', o->u.proto.chunk.s,
			      o->u.proto.chunk.len, o->u.proto.name.s,
			      o->u.proto.name.len, o->u.proto.firstline);
		r = get(f, key, kl, name, file, o->u.proto.firstline, FNID_LUA);
		break;
	case FORMAT_REC_CFUNC:
		snprintf(addr, sizeof addr, "0x%llx",
			 (unsigned long long)o->u.cfunc.address);
		snprintf(file, filesz, "%s", o->u.cfunc.object.s);
		if (o->u.cfunc.name.len) {
			snprintf(name, namesz, "%s", o->u.cfunc.name.s);
			kl = key_join(key, cap, 'C', o->u.cfunc.name.s,
				      o->u.cfunc.name.len, o->u.cfunc.object.s,
				      o->u.cfunc.object.len, 0);
		} else {
			/* Older logs: never a bare address, the object too. */
			const char *ob = strrchr(o->u.cfunc.object.s, '/');
			snprintf(name, namesz, "%s@%s",
				 ob ? ob + 1
				    : (o->u.cfunc.object.len
					   ? o->u.cfunc.object.s
					   : "?"),
				 addr);
			kl =
			    key_join(key, cap, 'C', "", 0, o->u.cfunc.object.s,
				     o->u.cfunc.object.len, o->u.cfunc.address);
		}
		r = get(f, key, kl, name, file, 0, FNID_C);
		break;
	case FORMAT_REC_FFUNC:
		if (o->u.ffunc.name.len)
			snprintf(name, namesz, "%s", o->u.ffunc.name.s);
		else
			snprintf(name, namesz, "ffid:%llu",
				 (unsigned long long)o->u.ffunc.ffid);
		kl = key_join(key, cap, 'F', name, strlen(name), "", 0, 0);
		r = get(f, key, kl, name, "", 0, FNID_FAST);
		if (r >= 0 && (o->u.ffunc.flags & FORMAT_FF_NOEXIT))
			f->fns[r].noexit = 1;
		if (r >= 0 && (o->u.ffunc.flags & FORMAT_FF_CALLBACK))
			f->fns[r].callback = 1;
		break;
	}
	free(key);
	free(name);
	free(file);
	return r;
}

/* Any thread. Index of the first C function at address, or -1. */
int64_t fnid_at(const struct fnid *f, uint64_t address)
{
	const uint64_t *v = address ? hmap_get(&f->addr, address) : NULL;
	return v ? (int64_t)*v - 1 : -1;
}

/* Any thread. A MAPPING record: functions get their index. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct fnid *f = ud;
	int64_t fn;
	int added;
	switch (o->kind) {
	case FORMAT_REC_PROTO:
	case FORMAT_REC_CFUNC:
	case FORMAT_REC_FFUNC:
		if ((fn = for_obj(f, o)) < 0)
			return -ENOMEM;
		o->user_idx = (uint32_t)fn + 1;
		/* Host frames at this address are this function. */
		if (o->kind == FORMAT_REC_CFUNC && o->u.cfunc.address) {
			uint64_t *v =
			    hmap_ref(&f->addr, o->u.cfunc.address, &added);
			if (!v)
				return -ENOMEM;
			if (added)
				*v = (uint64_t)fn + 1;
		}
		break;
	}
	return 0;
}

/* Any thread. Fill sink: records only. */
void fnid_sink(struct fnid *f, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = f;
	sink->record = on_record;
}

/* Any thread. Name of a function kind. */
const char *fnid_kind_name(unsigned kind)
{
	switch (kind) {
	case FNID_LUA: return "lua";
	case FNID_C: return "c";
	case FNID_FAST: return "fast";
	case FNID_HOST: return "host";
	}
	return "internal";
}
