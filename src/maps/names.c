/*
** ljlog names: function names from package.loaded, the loader (dlfind) and prototypes,
** and the MAPPING records that carry them (doc/format.txt).
*/
#define _GNU_SOURCE
#include "maps/names.h"
#include "maps/protoname.h"
#include "util/dlfind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ff_raw(unsigned ffid);

/* -- Scanning package.loaded ------------------------------------------------- */

/* LuaJIT's assembler fast functions that run Lua code inside their own
** frame (lib_base.c): pcall and xpcall call their argument, the coroutine
** ones switch coroutines. Every other one calls nothing back, or only as a
** tail call that replaces its frame (tostring's __tostring, pairs' and
** ipairs' metamethods: FFH_TAILCALL). The ffids are made by LuaJIT's build
** (lj_ffdef.h, not installed): they are known by LuaJIT's own list of names
** (ljlog_ffnames.h, from jit.vmdef at build time) and by the names they are
** found under in package.loaded: any of them marks the ffid. */
static const char *const callback_ff[] = {
    "pcall",
    "xpcall",
    "coroutine.resume",
    "coroutine.yield",
    "coroutine.wrap (function)",
};

/* Any context. 1 when name is one of callback_ff. */
static int is_callback(const char *name)
{
	for (size_t i = 0; i < sizeof callback_ff / sizeof *callback_ff; i++)
		if (strcmp(name, callback_ff[i]) == 0)
			return 1;
	return 0;
}

/* Owner only. Free the names' memory. */
void names_free(struct names *n)
{
	for (int i = 0; i < 256; i++)
		free(n->ff[i]);
	for (size_t i = 0; i < n->nc; i++)
		free(n->cname[i]);
	free(n->cname);
	hmap_free(&n->c);
	memset(n, 0, sizeof *n);
}

/* Caller reads n under its owner's rule. The name of C function f, or
** NULL. */
static const char *c_lookup(const struct names *n, uintptr_t f)
{
	uint64_t *k = f ? hmap_get(&n->c, f) : NULL;
	return k ? n->cname[*k - 1] : NULL;
}

/* Caller writes n under its owner's rule. Name f (first name wins). */
static void c_add(struct names *n, uintptr_t f, const char *name)
{
	if (!f || c_lookup(n, f))
		return;
	if (n->nc == n->capc) {
		size_t cap = n->capc ? n->capc * 2 : 64;
		char **c = realloc(n->cname, cap * sizeof *c);
		if (!c)
			return;
		n->cname = c;
		n->capc = cap;
	}
	char *s = strdup(name);
	if (!s)
		return;
	if (hmap_put(&n->c, f, n->nc + 1) < 0) {
		free(s);
		return;
	}
	n->cname[n->nc++] = s;
}

/* Caller holds dst's mapper lock. Move into dst the names of src it lacks. */
void names_merge(struct names *dst, struct names *src)
{
	for (int i = 0; i < 256; i++) {
		dst->cb[i] |= src->cb[i];
		if (!dst->ff[i] && src->ff[i]) {
			dst->ff[i] = src->ff[i];
			src->ff[i] = NULL;
		}
	}
	for (size_t i = 0; i < hmap_capacity(&src->c); i++)
		if (src->c.keys[i])
			c_add(dst, (uintptr_t)src->c.keys[i],
			      src->cname[src->c.vals[i] - 1]);
	dst->ff_agree += src->ff_agree;
	dst->ff_disagree += src->ff_disagree;
	if (!dst->require_f)
		dst->require_f = src->require_f;
}

/* VM thread only, before attach. Name C function f (if it has no name yet). */
void names_add_c(struct names *n, lua_CFunction f, const char *name)
{
	c_add(n, (uintptr_t)f, name);
}

/* VM thread only. Does LuaJIT's list (built from the installed luajit's
** jit.vmdef) agree with the running VM? A library function found under its
** own name ("string.rep") must have the listed ffid; aliases may not. */
static void ff_check(struct names *n, unsigned ffid, const char *name)
{
	const char *raw = ff_raw(ffid);
	if (raw && strcmp(raw, name) == 0)
		n->ff_agree++;
	else if (names_ffid(name) >= 0)
		n->ff_disagree++; /* listed, under another ffid */
}

/* VM thread only, Lua API context. The table at the top of L's stack is
** field key of module mod: name the C functions of its array part
** ("package.loaders[2]"). */
static void scan_array(struct names *n, lua_State *L, const char *mod,
		       const char *key)
{
	char name[256];
	int len = (int)lua_objlen(L, -1);
	for (int i = 1; i <= len && i <= 64; i++) {
		lua_rawgeti(L, -1, i);
		if (lua_iscfunction(L, -1)) {
			GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
			snprintf(name, sizeof name, "%s.%s[%d]", mod, key, i);
			if (fn->c.ffid == FF_C)
				c_add(n, (uintptr_t)fn->c.f, name);
		}
		lua_pop(L, 1);
	}
}

/* VM thread only, Lua API context. The table at the top of L's stack is
** module mod (NULL for _G). */
static void scan_table(struct names *n, lua_State *L, const char *mod)
{
	char name[256];
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (mod && lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1))
			scan_array(n, L, mod, lua_tostring(L, -2));
		if (lua_type(L, -2) == LUA_TSTRING && lua_iscfunction(L, -1)) {
			const char *key = lua_tostring(L, -2);
			GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
			if (mod)
				snprintf(name, sizeof name, "%s.%s", mod, key);
			else
				snprintf(name, sizeof name, "%s", key);
			if (fn->c.ffid > FF_C) {
				if (!n->ff[fn->c.ffid])
					n->ff[fn->c.ffid] = strdup(name);
				if (is_callback(name))
					n->cb[fn->c.ffid] = 1;
				ff_check(n, fn->c.ffid, name);
			} else {
				c_add(n, (uintptr_t)fn->c.f, name);
				if (!mod && strcmp(key, "require") == 0)
					n->require_f = fn->c.f;
			}
		}
		lua_pop(L, 1);
	}
}

/* VM thread only, Lua API context. Walk package.loaded one level deep. */
void names_scan(struct names *n, lua_State *L)
{
	int top = lua_gettop(L);
	if (!lua_checkstack(L, 8))
		return;
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	if (lua_istable(L, -1)) {
		/* Modules first, so "string.len" wins over a global alias. */
		for (int pass = 0; pass < 2; pass++) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (lua_type(L, -2) == LUA_TSTRING &&
				    lua_istable(L, -1)) {
					const char *mod = lua_tostring(L, -2);
					int isg = strcmp(mod, "_G") == 0;
					if (isg == pass)
						scan_table(n, L,
							   isg ? NULL : mod);
				}
				lua_pop(L, 1);
			}
		}
	}
	lua_settop(L, top);
}

/* -- MAPPING records ------------------------------------------------------------ */

/* Caller owns b. A VM record. */
int names_put_vm(struct wbuf *b, uint64_t id, pid_t tid, uint64_t heap,
		 unsigned flags, uint64_t alloc_rate)
{
	uint8_t *p = wbuf_room(b, 1 + 5 * BLOCKS_ULEB_MAX);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_VM;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, (uint64_t)tid);
	p = blocks_uleb_put(p, heap);
	p = blocks_uleb_put(p, flags);
	p = blocks_uleb_put(p, alloc_rate);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* Caller holds the mapper lock; pt is alive. A PROTO record: chunk name,
** lines and name, copied now. A library function written in Lua (firstline
** -1, chunk "remove") is named after its library, with no chunk or line. */
int names_put_proto(struct wbuf *b, uint64_t id, GCproto *pt, const char *name)
{
	GCstr *s = proto_chunkname(pt);
	const char *chunk = s ? strdata(s) : "";
	size_t len = s ? s->len : 0;
	uint64_t first = (uint64_t)pt->firstline, num = pt->numline;
	const char *lib = protoname_builtin(pt);
	if (lib) {
		name = lib;
		chunk = NAMES_BUILTIN_CHUNK;
		len = strlen(chunk);
		first = num = 0;
	}
	size_t nl = strlen(name);
	uint8_t *p = wbuf_room(b, 1 + 5 * BLOCKS_ULEB_MAX + len + nl);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_PROTO;
	p = blocks_uleb_put(p, id);
	p = blocks_str_put(p, chunk, len);
	p = blocks_uleb_put(p, first);
	p = blocks_uleb_put(p, num);
	p = blocks_str_put(p, name, nl);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* What names_put_cfunc keeps of dlfind's hit: copies, made while the
** object cannot go. */
struct cfunc_hit {
	uintptr_t f;
	char *obj;  /* the object's path (argv[0] for the main program, as
		       dladdr gives it), malloc'd */
	char *name; /* the symbol starting at f, else "object+0xoffset"
		       (a stripped executable), malloc'd */
};

/* Caller holds the mapper lock (dlfind's callback, the loader's list
** locked). Copy the object's path and the function's name: 1, or
** -ENOMEM. */
static int cfunc_found(void *arg, const struct dlfind_hit *h)
{
	struct cfunc_hit *c = arg;
	const char *obj = h->object[0] ? h->object : program_invocation_name;
	c->obj = strdup(obj ? obj : "");
	if (h->sym && h->start == c->f) {
		c->name = strdup(h->sym);
	} else if (obj && h->base) {
		const char *base = strrchr(obj, '/');
		char where[256];
		snprintf(where, sizeof where, "%s+0x%lx", base ? base + 1 : obj,
			 (unsigned long)(c->f - h->base));
		c->name = strdup(where);
	} else {
		c->name = strdup("");
	}
	return c->obj && c->name ? 1 : -ENOMEM;
}

/* Caller holds the mapper lock. A CFUNC record: package.loaded name, else
** the symbol's (dlfind: read while its object cannot be closed, which a
** C module can be by lua_close in the VM's thread while the sampler's
** helper names its function); 1 when package.loaded named it. */
int names_put_cfunc(struct wbuf *b, uint64_t id, const struct names *n,
		    uintptr_t f)
{
	const char *known = c_lookup(n, f), *name, *obj;
	struct cfunc_hit c = {f, NULL, NULL};
	int rc = dlfind(f, cfunc_found, &c);
	if (rc < 0) {
		free(c.obj);
		free(c.name);
		return rc;
	}
	obj = c.obj ? c.obj : "";
	name = known ? known : c.name ? c.name : "";
	size_t nl = strlen(name), ol = strlen(obj);
	uint8_t *p = wbuf_room(b, 1 + 4 * BLOCKS_ULEB_MAX + nl + ol);
	if (p) {
		*p++ = FORMAT_REC_CFUNC;
		p = blocks_uleb_put(p, id);
		p = blocks_uleb_put(p, f);
		p = blocks_str_put(p, name, nl);
		p = blocks_str_put(p, obj, ol);
		b->len = (size_t)(p - b->p);
	}
	free(c.obj);
	free(c.name);
	return !p ? -ENOMEM : known != NULL;
}

/* Caller owns b. A NAME record (version 14). */
int names_put_name(struct wbuf *b, uint64_t id, const char *name)
{
	size_t nl = strlen(name);
	uint8_t *p = wbuf_room(b, 1 + 2 * BLOCKS_ULEB_MAX + nl);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_NAME;
	p = blocks_uleb_put(p, id);
	p = blocks_str_put(p, name, nl);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* -- Fast function names ---------------------------------------------------- */

#include "ljlog_ffnames.h"

/* Any thread. LuaJIT's own name of ffid ("ipairs_aux", "io.method.read"),
** or NULL. */
static const char *ff_raw(unsigned ffid)
{
	for (unsigned i = 0; ljlog_ffnames[i]; i++)
		if (i == ffid)
			return ljlog_ffnames[i];
	return NULL;
}

/* Any thread. The ffid LuaJIT calls raw ("ffi.meta.__call"), or -1. */
int names_ffid(const char *raw)
{
	for (int i = 0; ljlog_ffnames[i]; i++)
		if (strcmp(ljlog_ffnames[i], raw) == 0)
			return i;
	return -1;
}

/* Any thread. The name a Lua programmer reads for LuaJIT's raw fast
** function name: the functions no table holds after what hands them out
** ("ipairs (iterator)"), methods by their object ("file:read"). */
static void ff_display(const char *raw, char *buf, size_t cap)
{
	static const char *const pre[][2] = {
	    {"io.method.", "file:"},	    {"buffer.method.", "buffer:"},
	    {"ffi.callback.", "callback:"}, {"ffi.meta.", "cdata "},
	    {"ffi.clib.", "clib "},
	};
	size_t n = strlen(raw);
	if (strcmp(raw, "ffi.meta.__call") == 0) {
		snprintf(buf, cap, "ffi call");
		return;
	}
	if (n > 4 && strcmp(raw + n - 4, "_aux") == 0) {
		int wrap = strcmp(raw, "coroutine.wrap_aux") == 0;
		snprintf(buf, cap, "%.*s (%s)", (int)(n - 4), raw,
			 wrap ? "function" : "iterator");
		return;
	}
	for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
		size_t pl = strlen(pre[i][0]);
		if (strncmp(raw, pre[i][0], pl) == 0) {
			snprintf(buf, cap, "%s%s", pre[i][1], raw + pl);
			return;
		}
	}
	snprintf(buf, cap, "%s", raw);
}

/* Any thread (reads n under its owner's rule). The name of fast function
** ffid into buf: LuaJIT's list, else package.loaded's, else "builtin #N". */
const char *names_ffname(const struct names *n, unsigned ffid, char *buf,
			 size_t cap)
{
	/* The list is trusted unless the VM's own tables disagree with it
	** (ljlog built for another LuaJIT than the one running). */
	const char *raw =
	    n && n->ff_disagree > n->ff_agree / 8 ? NULL : ff_raw(ffid);
	if (raw && ffid > FF_C)
		ff_display(raw, buf, cap);
	else if (n && ffid < 256 && n->ff[ffid])
		snprintf(buf, cap, "%s", n->ff[ffid]);
	else
		snprintf(buf, cap, "builtin #%u", ffid);
	return buf;
}

/* Caller holds the mapper lock. An FFUNC record; flags NOEXIT gets
** CALLBACK added when the function may call Lua back. */
int names_put_ffunc(struct wbuf *b, uint64_t id, const struct names *n,
		    unsigned ffid, unsigned flags)
{
	char tmp[256];
	const char *name = names_ffname(n, ffid, tmp, sizeof tmp);
	const char *raw = ff_raw(ffid);
	/* Unknown: keep its frame open for callees (the version 3 rule). */
	if ((flags & FORMAT_FF_NOEXIT) &&
	    ((!raw && !(ffid < 256 && n->ff[ffid])) ||
	     (ffid < 256 && n->cb[ffid]) || (raw && is_callback(raw)) ||
	     is_callback(name)))
		flags |= FORMAT_FF_CALLBACK;
	size_t nl = strlen(name);
	uint8_t *p = wbuf_room(b, 1 + 4 * BLOCKS_ULEB_MAX + nl);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_FFUNC;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, ffid);
	p = blocks_str_put(p, name, nl);
	p = blocks_uleb_put(p, flags);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* Caller owns b. A COROUTINE record. */
int names_put_coroutine(struct wbuf *b, uint64_t id, unsigned flags)
{
	uint8_t *p = wbuf_room(b, 1 + 2 * BLOCKS_ULEB_MAX);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_COROUTINE;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, flags);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* Caller owns b. A TRACE record with its snapshots' frames. */
int names_put_trace(struct wbuf *b, uint64_t id, unsigned traceno,
		    uint64_t proto, uint32_t line, unsigned root,
		    const struct names_exits *sn)
{
	size_t nf = 0;
	for (unsigned k = 0; k < sn->nsnap; k++)
		nf += sn->nfr[k];
	uint8_t *p = wbuf_room(b, 1 + 6 * BLOCKS_ULEB_MAX +
				      (size_t)sn->nsnap * 5 * BLOCKS_ULEB_MAX +
				      nf * 2 * BLOCKS_ULEB_MAX);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_TRACE;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, traceno);
	p = blocks_uleb_put(p, proto);
	p = blocks_uleb_put(p, line);
	p = blocks_uleb_put(p, root);
	p = blocks_uleb_put(p, sn->nsnap);
	for (unsigned k = 0, f = 0; k < sn->nsnap; k++) {
		p = blocks_uleb_put(p, sn->mcofs[k]);
		p = blocks_uleb_put(p, sn->nfr[k]);
		for (unsigned j = 0; j < sn->nfr[k]; j++, f++) {
			p = blocks_uleb_put(p, sn->ids[f]);
			p = blocks_uleb_put(p, sn->lines[f]);
		}
		for (unsigned c = 0; c < 3; c++)
			p = blocks_uleb_put(p, sn->alines[3 * k + c]);
	}
	b->len = (size_t)(p - b->p);
	return 0;
}

/* Caller owns b. A HOSTSYM record. */
int names_put_hostsym(struct wbuf *b, uint64_t id, uintptr_t address,
		      const char *name, const char *object, unsigned flags)
{
	size_t nl = strlen(name), ol = strlen(object);
	uint8_t *p = wbuf_room(b, 1 + 5 * BLOCKS_ULEB_MAX + nl + ol);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_HOSTSYM;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, address);
	p = blocks_str_put(p, name, nl);
	p = blocks_str_put(p, object, ol);
	p = blocks_uleb_put(p, flags);
	b->len = (size_t)(p - b->p);
	return 0;
}
