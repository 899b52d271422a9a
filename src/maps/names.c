/*
** ljlog names: function names from package.loaded, dladdr and prototypes,
** and the MAPPING records that carry them (doc/format.txt).
*/
#define _GNU_SOURCE
#include "maps/names.h"
#include "maps/protoname.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -- Scanning package.loaded ------------------------------------------------- */

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
		if (!dst->ff[i] && src->ff[i]) {
			dst->ff[i] = src->ff[i];
			src->ff[i] = NULL;
		}
	}
	for (size_t i = 0; i < hmap_capacity(&src->c); i++)
		if (src->c.keys[i])
			c_add(dst, (uintptr_t)src->c.keys[i],
			      src->cname[src->c.vals[i] - 1]);
	if (!dst->require_f)
		dst->require_f = src->require_f;
}

/* VM thread only, before attach. Name C function f (if it has no name yet). */
void names_add_c(struct names *n, lua_CFunction f, const char *name)
{
	c_add(n, (uintptr_t)f, name);
}

/* VM thread only, Lua API context. The table at the top of L's stack is
** module mod (NULL for _G). */
static void scan_table(struct names *n, lua_State *L, const char *mod)
{
	char name[256];
	lua_pushnil(L);
	while (lua_next(L, -2)) {
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
		 unsigned flags)
{
	uint8_t *p = wbuf_room(b, 1 + 4 * BLOCKS_ULEB_MAX);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_VM;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, (uint64_t)tid);
	p = blocks_uleb_put(p, heap);
	p = blocks_uleb_put(p, flags);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* Caller holds the mapper lock; pt is alive. A PROTO record: chunk name,
** lines and name, copied now. A library function written in Lua (firstline
** -1, chunk "remove") is named after its library, with no chunk or line. */
int names_put_proto(struct wbuf *b, uint64_t id, GCproto *pt,
		    const char *name)
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

/* Caller holds the mapper lock. A CFUNC record: package.loaded name, else
** dladdr's. */
int names_put_cfunc(struct wbuf *b, uint64_t id, const struct names *n,
		    uintptr_t f)
{
	Dl_info info;
	const char *name = c_lookup(n, f), *obj = "";
	memset(&info, 0, sizeof info);
	if (dladdr((void *)f, &info)) {
		obj = info.dli_fname ? info.dli_fname : "";
		if (!name && info.dli_sname && (uintptr_t)info.dli_saddr == f)
			name = info.dli_sname;
	}
	if (!name)
		name = "";
	size_t nl = strlen(name), ol = strlen(obj);
	uint8_t *p = wbuf_room(b, 1 + 4 * BLOCKS_ULEB_MAX + nl + ol);
	if (!p)
		return -ENOMEM;
	*p++ = FORMAT_REC_CFUNC;
	p = blocks_uleb_put(p, id);
	p = blocks_uleb_put(p, f);
	p = blocks_str_put(p, name, nl);
	p = blocks_str_put(p, obj, ol);
	b->len = (size_t)(p - b->p);
	return 0;
}

/* LuaJIT's library functions that no table holds: each is defined just
** before the function that hands it out (LJLIB_NOREG in lib_base.c and
** lib_string.c), so it is named after that one. */
static const char *const unregistered[][2] = {
    {"coroutine.wrap", "coroutine.wrap (function)"},
    {"string.gmatch", "string.gmatch (iterator)"},
};

/* Caller holds the mapper lock. An FFUNC record. */
int names_put_ffunc(struct wbuf *b, uint64_t id, const struct names *n,
		    unsigned ffid, unsigned flags)
{
	char tmp[32];
	const char *name = ffid < 256 ? n->ff[ffid] : NULL;
	if (!name && ffid + 1 < 256 && n->ff[ffid + 1]) {
		for (size_t i = 0;
		     i < sizeof unregistered / sizeof *unregistered; i++)
			if (strcmp(n->ff[ffid + 1], unregistered[i][0]) == 0)
				name = unregistered[i][1];
	}
	if (!name) {
		snprintf(tmp, sizeof tmp, "ffid:%u", ffid);
		name = tmp;
	}
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
		    const struct names_snaps *sn)
{
	size_t nf = 0;
	for (unsigned k = 0; k < sn->nsnap; k++)
		nf += sn->nfr[k];
	uint8_t *p = wbuf_room(b, 1 + 6 * BLOCKS_ULEB_MAX +
				      (size_t)sn->nsnap * 2 * BLOCKS_ULEB_MAX +
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
