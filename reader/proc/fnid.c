/*
** ljlog reader processors: function identity.
** Identity keys are tagged byte strings ('L', 'C', 'F', 'H', 'I', then
** parts separated by 0x1f) in the interner; keyfn maps a key's dense index
** to its function's. A function has one key, and one more per name a NAME
** record gave it (the old keys stay: the same chunk and line, or the same
** placeholder name and object, are still that function).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "fnid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pseudo_names[FNID_PS__MAX] = {
    "(unknown)",      "(gc)",	       "(jit)",
    "(internal)",     "(trace)",       "(before attach)",
    "(jit compiler)", "(interpreter)", "(luajit)",
    "(ljlog)",
};

/* An empty table. */
void fnid_init(struct fnid *f)
{
	memset(f, 0, sizeof *f);
	for (int i = 0; i < FNID_PS__MAX; i++)
		f->pseudo[i] = -1;
}

/* Free everything. */
void fnid_free(struct fnid *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->fns[i].name);
		free(f->fns[i].file);
	}
	free(f->fns);
	free(f->keyfn);
	intern_free(&f->keys);
	hmap_free(&f->addr);
	fnid_init(f);
}

/* Add identity key (new) for function fn; 0 or -ENOMEM. */
static int key_add(struct fnid *f, const char *key, size_t keylen, uint32_t fn)
{
	size_t k = intern_count(&f->keys);
	if (k == f->keycap) {
		size_t cap = f->keycap ? f->keycap * 2 : 256;
		uint32_t *a = realloc(f->keyfn, cap * sizeof *a);
		if (!a)
			return -ENOMEM;
		f->keyfn = a;
		f->keycap = cap;
	}
	if (intern_put(&f->keys, key, keylen) != (int64_t)k)
		return -ENOMEM;
	f->keyfn[k] = fn;
	return 0;
}

/* Index of the function with this identity key, -1 when none. */
static int64_t find(const struct fnid *f, const char *key, size_t keylen)
{
	int64_t k = intern_find(&f->keys, key, keylen);
	return k < 0 ? -1 : (int64_t)f->keyfn[k];
}

/* Index of the function with this identity key, created with
** name/file/line/kind when new; -1 when out of memory. */
static int64_t get(struct fnid *f, const char *key, size_t keylen,
		   const char *name, const char *file, uint64_t line,
		   unsigned kind)
{
	int64_t i = find(f, key, keylen);
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
	    key_add(f, key, keylen, (uint32_t)f->n) < 0) {
		free(fn->name);
		free(fn->file);
		return -1;
	}
	return (int64_t)f->n++;
}

/* Index of a pseudo-function. */
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

/* Build a key from parts separated by 0x1f (each part cut to
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

/* Index of the host function named after a HOSTSYM. */
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

/* Index of the pseudo-function of TRACE t, an allocation site
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

/* The identity of a PROTO, CFUNC or FFUNC object: its key, and the name,
** file, line and kind of a function made for it. */
struct objkey {
	char *key, *name, *file; /* owned */
	size_t kl;
	uint64_t line;
	unsigned kind; /* FNID_* */
};

/* Free what obj_key made. */
static void objkey_free(struct objkey *k)
{
	free(k->key);
	free(k->name);
	free(k->file);
}

/* The identity of object o by its fields now (a NAME record
** changes them); 0 or -ENOMEM. */
static int obj_key(const struct decode_obj *o, struct objkey *k)
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
	memset(k, 0, sizeof *k);
	k->key = malloc(cap);
	k->name = malloc(namesz);
	k->file = malloc(filesz);
	if (!k->key || !k->name || !k->file) {
		objkey_free(k);
		return -ENOMEM;
	}
	switch (o->kind) {
	case FORMAT_REC_PROTO:
		decode_chunk_name(&o->u.proto.chunk, k->file, filesz);
		decode_proto_name(o, o->u.proto.firstline, k->name, namesz);
		/* Two functions at one chunk:line (on one line) differ by
		** name: the name is part of the identity. */
		k->kl = key_join(k->key, cap, 'L', o->u.proto.chunk.s,
				 o->u.proto.chunk.len, o->u.proto.name.s,
				 o->u.proto.name.len, o->u.proto.firstline);
		k->line = o->u.proto.firstline;
		k->kind = FNID_LUA;
		break;
	case FORMAT_REC_CFUNC:
		snprintf(addr, sizeof addr, "0x%llx",
			 (unsigned long long)o->u.cfunc.address);
		snprintf(k->file, filesz, "%s", o->u.cfunc.object.s);
		if (o->u.cfunc.name.len) {
			snprintf(k->name, namesz, "%s", o->u.cfunc.name.s);
			k->kl =
			    key_join(k->key, cap, 'C', o->u.cfunc.name.s,
				     o->u.cfunc.name.len, o->u.cfunc.object.s,
				     o->u.cfunc.object.len, 0);
		} else {
			/* Older logs: never a bare address, the object too. */
			const char *ob = strrchr(o->u.cfunc.object.s, '/');
			snprintf(k->name, namesz, "%s@%s",
				 ob ? ob + 1
				    : (o->u.cfunc.object.len
					   ? o->u.cfunc.object.s
					   : "?"),
				 addr);
			k->kl = key_join(
			    k->key, cap, 'C', "", 0, o->u.cfunc.object.s,
			    o->u.cfunc.object.len, o->u.cfunc.address);
		}
		k->kind = FNID_C;
		break;
	case FORMAT_REC_FFUNC:
		if (o->u.ffunc.name.len)
			snprintf(k->name, namesz, "%s", o->u.ffunc.name.s);
		else
			snprintf(k->name, namesz, "ffid:%llu",
				 (unsigned long long)o->u.ffunc.ffid);
		k->kl = key_join(k->key, cap, 'F', k->name, strlen(k->name), "",
				 0, 0);
		k->file[0] = 0;
		k->kind = FNID_FAST;
		break;
	}
	return 0;
}

/* The identity of PROTO o's place: its chunk and line, with
** the name given (NULL: none), into key (cap bytes); its length. */
static size_t place_key(const struct decode_obj *o, const char *name, char *key,
			size_t cap)
{
	if (name)
		return key_join(key, cap, 'L', o->u.proto.chunk.s,
				o->u.proto.chunk.len, name, strlen(name),
				o->u.proto.firstline);
	return key_join(key, cap, 'P', o->u.proto.chunk.s, o->u.proto.chunk.len,
			"", 0, o->u.proto.firstline);
}

/* A Lua function met without its name, or with a name at a
** place where another VM's was met without it: the function already
** there, so that a log's VMs (some of whose records came before the name
** was found, NAME records naming them later) count in one function. An
** unnamed one takes the first function at its place; a named one takes
** the unnamed function there, which it names. Within one VM, two records
** at one place with two names are two functions (two closures on one
** line). -1 when none. */
static int64_t lua_place(struct fnid *f, const struct decode_obj *o,
			 const struct objkey *k)
{
	size_t cap = o->u.proto.chunk.len + 64, kl;
	char *key = malloc(cap);
	int64_t r = -1;
	if (!key)
		return -1;
	if (!o->u.proto.name.len) {
		kl = place_key(o, NULL, key, cap);
		r = find(f, key, kl);
		if (r >= 0 && f->fns[r].vm == o->vm)
			r = -1;
	} else {
		kl = place_key(o, "", key, cap);
		r = find(f, key, kl);
		if (r >= 0 && f->fns[r].vm == o->vm)
			r = -1;
		char *name = r >= 0 ? strdup(k->name) : NULL;
		if (name && key_add(f, k->key, k->kl, (uint32_t)r) == 0) {
			free(f->fns[r].name);
			f->fns[r].name = name;
		} else {
			free(name);
			r = -1;
		}
	}
	free(key);
	return r;
}

/* Function index for a PROTO, CFUNC or FFUNC object. */
static int64_t for_obj(struct fnid *f, const struct decode_obj *o)
{
	struct objkey k;
	if (obj_key(o, &k) < 0)
		return -1;
	int64_t r = -1;
	if (o->kind == FORMAT_REC_PROTO && find(f, k.key, k.kl) < 0)
		r = lua_place(f, o, &k);
	if (r < 0) {
		size_t n0 = f->n;
		r = get(f, k.key, k.kl, k.name, k.file, k.line, k.kind);
		if (r >= 0 && f->n > n0)
			f->fns[r].vm = o->vm;
	}
	if (r >= 0 && o->kind == FORMAT_REC_PROTO) {
		/* The first function at a place is its place's. */
		size_t cap = o->u.proto.chunk.len + 64;
		char *key = malloc(cap);
		size_t kl = key ? place_key(o, NULL, key, cap) : 0;
		if (key && find(f, key, kl) < 0)
			key_add(f, key, kl, (uint32_t)r);
		free(key);
	}
	if (r >= 0 && o->kind == FORMAT_REC_FFUNC) {
		if (o->u.ffunc.flags & FORMAT_FF_NOEXIT)
			f->fns[r].noexit = 1;
		if (o->u.ffunc.flags & FORMAT_FF_CALLBACK)
			f->fns[r].callback = 1;
	}
	objkey_free(&k);
	return r;
}

/* Index of the first C function at address, or -1. */
int64_t fnid_at(const struct fnid *f, uint64_t address)
{
	const uint64_t *v = address ? hmap_get(&f->addr, address) : NULL;
	return v ? (int64_t)*v - 1 : -1;
}

/* A MAPPING record: functions get their index. */
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

/* A NAME record: PROTO or CFUNC o has its new name. An empty
** name changes nothing: the function keeps the name it has (or stays
** unnamed). When a function has the new identity already (chunk, name and
** line; name and object), o is that function from here on: another VM's
** record written once the name was known, or another ID of the function.
** What o counted before the NAME stays with its old function, under its
** old name: a processor counts by the index it found at the event (calls,
** heap, samples, a trace's function), and this one cannot move those.
** Otherwise o's function is renamed in place, its counts kept, and the
** new identity is one more key of it. */
static int on_rename(void *ud, struct decode_obj *o)
{
	struct fnid *f = ud;
	struct objkey k;
	int rc = 0;
	if (!o->user_idx ||
	    (o->kind != FORMAT_REC_PROTO && o->kind != FORMAT_REC_CFUNC))
		return 0;
	if (!(o->kind == FORMAT_REC_PROTO ? o->u.proto.name.len
					  : o->u.cfunc.name.len))
		return 0;
	if (obj_key(o, &k) < 0)
		return -ENOMEM;
	uint32_t fn = fnid_of(o);
	int64_t to = find(f, k.key, k.kl);
	if (to >= 0 && (uint32_t)to != fn) {
		o->user_idx = (uint32_t)to + 1;
		/* Host frames at its address are the function it is now. */
		uint64_t *v = o->kind == FORMAT_REC_CFUNC && o->u.cfunc.address
				  ? hmap_get(&f->addr, o->u.cfunc.address)
				  : NULL;
		if (v && *v == (uint64_t)fn + 1)
			*v = (uint64_t)to + 1;
	} else {
		char *name = strdup(k.name);
		if (!name || (to < 0 && key_add(f, k.key, k.kl, fn) < 0)) {
			free(name);
			rc = -ENOMEM;
		} else {
			free(f->fns[fn].name);
			f->fns[fn].name = name;
		}
	}
	objkey_free(&k);
	return rc;
}

/* Fill sink: records and NAME records. */
void fnid_sink(struct fnid *f, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = f;
	sink->record = on_record;
	sink->rename = on_rename;
}

/* Name of a function kind. */
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
