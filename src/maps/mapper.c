/*
** ljlog mapper: pointer -> ID map, names and MAPPING records of one VM.
** One lock guards it all, whoever maps: the flush on the VM thread, the
** sampler's drainer on the helper thread.
*/
#include "maps/mapper.h"
#include "maps/namewalk.h"
#include "maps/protoname.h"
#include "maps/texit.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static uint64_t next_id = 1;

/* Any thread. A fresh process-wide ID (>= 1), never reused. */
uint64_t mapper_new_id(void)
{
	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

/* VM thread only (attach). An empty mapper. */
int mapper_init(struct mapper *m, global_State *g, uint64_t vm_id)
{
	memset(m, 0, sizeof *m);
	if (pthread_mutex_init(&m->lock, NULL) != 0)
		return -ENOMEM;
	m->g = g;
	m->vm_id = vm_id;
	return 0;
}

/* Owner (or lock holder). Free the names found before their functions
** were mapped. */
static void pending_free(struct mapper *m)
{
	for (size_t i = 0; i < hmap_capacity(&m->pending); i++)
		if (m->pending.keys[i])
			free((char *)(uintptr_t)m->pending.vals[i]);
	hmap_free(&m->pending);
}

/* Child side of fork(), single-threaded. See mapper.h. The names found
** early stay: they name the same objects in the child. */
void mapper_fork_child(struct mapper *m)
{
	pthread_mutex_init(&m->lock, NULL);
	hmap_free(&m->map);
	memset(&m->map, 0, sizeof m->map);
	hmap_free(&m->strs);
	hmap_free(&m->unnamed);
	hmap_free(&m->walked);
	m->late.len = 0;
	m->unnamed_new = 0;
	m->out = NULL;
	m->bad = 0;
#ifndef NDEBUG
	m->held = 0;
#endif
}

/* VM thread only (detach), once no other thread can use m. */
void mapper_free(struct mapper *m)
{
	hmap_free(&m->map);
	hmap_free(&m->strs);
	hmap_free(&m->unnamed);
	hmap_free(&m->walked);
	pending_free(m);
	free(m->late.p);
	names_free(&m->names);
	pthread_mutex_destroy(&m->lock);
}

/* Any thread. Take m's lock. */
void mapper_lock(struct mapper *m)
{
	pthread_mutex_lock(&m->lock);
#ifndef NDEBUG
	m->owner = pthread_self();
	m->held = 1;
#endif
}

/* Any thread. Release m's lock. */
void mapper_unlock(struct mapper *m)
{
	mapper_assert_held(m);
#ifndef NDEBUG
	m->held = 0;
#endif
	pthread_mutex_unlock(&m->lock);
}

/* Any thread. Abort in debug builds unless the caller holds m's lock. */
void mapper_assert_held(const struct mapper *m)
{
#ifndef NDEBUG
	assert(m->held && pthread_equal(m->owner, pthread_self()));
#else
	(void)m;
#endif
}

/* -- A pass ---------------------------------------------------------------- */

/* Caller holds m's lock. Start a pass writing into out. */
void mapper_begin(struct mapper *m, struct wbuf *out)
{
	mapper_assert_held(m);
	memset(m->ckey, 0, sizeof m->ckey); /* key 0 never occurs */
	m->out = out;
	m->bad = 0;
	m->pass_id0 = __atomic_load_n(&next_id, __ATOMIC_RELAXED);
	m->moff = writer_block_begin(out);
	uint8_t *p =
	    m->moff == (size_t)-1 ? NULL : wbuf_room(out, BLOCKS_ULEB_MAX);
	if (!p) {
		m->bad = 1;
		m->mstart = out->len;
		return;
	}
	out->len = (size_t)(blocks_uleb_put(p, m->vm_id) - out->p);
	m->mstart = out->len;
}

/* Any thread. Cache slot of key. */
static inline size_t cache_slot(uintptr_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 56) &
	       (MAPPER_CACHE - 1);
}

/* Caller holds m's lock, T alive. A TRACE record: its PROTOs first (the
** start and every snapshot's frames), then the record. */
static int put_trace(struct mapper *m, uint64_t id, GCtrace *T,
		     unsigned traceno)
{
	GCproto *pt = gcref(T->startpt) ? &gcref(T->startpt)->pt : NULL;
	uint64_t pid = pt ? mapper_ref(m, MAPPER_PROTO, (uintptr_t)pt, 0) : 0;
	uint32_t line = 0;
	if (pt && !pid)
		return -ENOMEM;
	if (pt)
		line = ljwin_proto_line(
		    pt, proto_bcpos(pt, mref(T->startpc, const BCIns)));
	unsigned nsnap = T->nsnap;
	size_t cap = (size_t)nsnap * 4 + 16, nf = 0;
	uint32_t *mcofs = malloc(nsnap * sizeof *mcofs + 1);
	uint32_t *alines = malloc(3 * nsnap * sizeof *alines + 1);
	uint8_t *nfr = malloc(nsnap + 1);
	uint64_t *ids = malloc(cap * sizeof *ids);
	uint32_t *lines = malloc(cap * sizeof *lines);
	int rc = -ENOMEM;
	if (!mcofs || !alines || !nfr || !ids || !lines)
		goto out;
	for (SnapNo k = 0; k < nsnap; k++) {
		struct texit_frame fr[TEXIT_MAX_FRAMES];
		int n = texit_frames(T, k, fr, TEXIT_MAX_FRAMES);
		if (nf + (size_t)n > cap) {
			size_t nc = (nf + (size_t)n) * 2;
			uint64_t *ni = realloc(ids, nc * sizeof *ids);
			if (ni)
				ids = ni;
			uint32_t *nl =
			    ni ? realloc(lines, nc * sizeof *lines) : NULL;
			if (!nl)
				goto out;
			lines = nl;
			cap = nc;
		}
		mcofs[k] = texit_ofs(T, k);
		uint32_t al[TEXIT_CLASSES] = {n ? fr[n - 1].line : 0, 0, 0};
		int up = m->line_exits ? 0 : texit_alloc_lines(T, k, al);
		alines[3 * k] = 2 * al[TEXIT_ANY] + (uint32_t)up;
		alines[3 * k + 1] = al[TEXIT_TABLE];
		alines[3 * k + 2] = al[TEXIT_NEWKEY];
		nfr[k] = (uint8_t)n;
		for (int j = 0; j < n; j++, nf++) {
			ids[nf] =
			    mapper_ref(m, MAPPER_PROTO, (uintptr_t)fr[j].pt, 0);
			if (!ids[nf])
				goto out;
			lines[nf] = fr[j].line;
		}
	}
	struct names_exits sn = {nsnap, mcofs, nfr, ids, lines, alines};
	rc = names_put_trace(m->out, id, traceno ? traceno : T->traceno, pid,
			     line, T->root, &sn);
out:
	free(mcofs);
	free(alines);
	free(nfr);
	free(ids);
	free(lines);
	return rc;
}

static uint64_t ref(struct mapper *m, unsigned kind, uintptr_t key,
		    unsigned traceno, const char *pname);

/* Caller holds m's lock, in a pass; child alive (its parent is). Map a
** child prototype with the name its parent gives it, unless mapped. */
static int map_child(void *ud, GCproto *child, const char *name)
{
	struct mapper *m = ud;
	if (hmap_get(&m->map, (uintptr_t)child))
		return 0;
	return ref(m, MAPPER_PROTO, (uintptr_t)child, 0, name) ? 0 : -ENOMEM;
}

/* Caller holds m's lock. key (mapped as id) was written without its name:
** look for it. */
static void note_unnamed(struct mapper *m, uintptr_t key, uint64_t id)
{
	if (hmap_put(&m->unnamed, key, id) == 0)
		m->unnamed_new++;
}

/* Caller holds m's lock, in a pass; pt alive. A PROTO record named as its
** parent's bytecode said (pname, NULL for none), or as a freed parent's
** said before (m->pending), then its children's, while pt keeps them
** alive: a prototype has no pointer to its parent. */
static int put_proto(struct mapper *m, uint64_t id, GCproto *pt,
		     const char *pname)
{
	const char *name = pname ? pname : "";
	char *found = NULL;
	uint64_t *v;
	if (!name[0] && (v = hmap_get(&m->pending, (uintptr_t)pt))) {
		name = found = (char *)(uintptr_t)*v;
		hmap_del(&m->pending, (uintptr_t)pt);
	}
	int rc = names_put_proto(m->out, id, pt, name), unnamed = !name[0];
	free(found);
	if (rc < 0)
		return rc;
	if (unnamed && !protoname_builtin(pt))
		note_unnamed(m, (uintptr_t)pt, id);
	return protoname_children(pt, map_child, m);
}

/* Caller holds m's lock. The record of a new ID for key, into m->out;
** pname: a PROTO's name from its parent, or NULL. */
static int put_record(struct mapper *m, unsigned kind, uintptr_t key,
		      uint64_t id, unsigned traceno, const char *pname)
{
	struct wbuf *b = m->out;
	switch (kind) {
	case MAPPER_PROTO: return put_proto(m, id, (GCproto *)key, pname);
	case MAPPER_CFUNC: {
		int rc = names_put_cfunc(b, id, &m->names, key);
		if (rc == 0)
			note_unnamed(m, key, id);
		return rc < 0 ? rc : 0;
	}
	case MAPPER_FFUNC:
		return names_put_ffunc(b, id, &m->names, (unsigned)key & 0xff,
				       key & MAPPER_FF_ASM ? FORMAT_FF_NOEXIT
							   : 0);
	case MAPPER_TRACE: return put_trace(m, id, (GCtrace *)key, traceno);
	case MAPPER_COROUTINE:
		return names_put_coroutine(
		    b, id,
		    (lua_State *)key == mainthread(m->g) ? FORMAT_CO_MAIN : 0);
	default: return -EINVAL;
	}
}

/* Caller holds m's lock, in a pass. ID of key, made on first use (a
** PROTO named pname when not NULL). */
static uint64_t ref(struct mapper *m, unsigned kind, uintptr_t key,
		    unsigned traceno, const char *pname)
{
	size_t c = cache_slot(key);
	if (UTIL_LIKELY(m->ckey[c] == key))
		return m->cid[c];
	uint64_t *v = hmap_get(&m->map, key), id;
	if (v) {
		id = *v;
	} else {
		id = mapper_new_id();
		if (m->bad ||
		    put_record(m, kind, key, id, traceno, pname) < 0 ||
		    hmap_put(&m->map, key, id) < 0) {
			m->bad = 1;
			return 0;
		}
	}
	m->ckey[c] = key;
	m->cid[c] = id;
	return id;
}

/* Caller holds m's lock, in a pass. See mapper.h. */
uint64_t mapper_ref(struct mapper *m, unsigned kind, uintptr_t key,
		    unsigned traceno)
{
	return ref(m, kind, key, traceno, NULL);
}

/* Caller holds m's lock, in a pass. STRING ID of text s, made on first
** use. */
uint64_t mapper_string(struct mapper *m, const char *s, size_t len)
{
	uint64_t h = XXH3_64bits(s, len), *v, id;
	h = h ? h : 1; /* 0 is hmap's free key */
	v = hmap_get(&m->strs, h);
	if (v)
		return *v;
	uint8_t *p =
	    m->bad ? NULL : wbuf_room(m->out, 1 + 2 * BLOCKS_ULEB_MAX + len);
	if (!p) {
		m->bad = 1;
		return 0;
	}
	id = mapper_new_id();
	if (hmap_put(&m->strs, h, id) < 0) {
		m->bad = 1;
		return 0;
	}
	*p++ = FORMAT_REC_STRING;
	p = blocks_uleb_put(p, id);
	p = blocks_str_put(p, s, len);
	m->out->len = (size_t)(p - m->out->p);
	return id;
}

/* Caller holds m's lock, after a failed pass. Forget from map h the IDs
** the pass made: their records are not written. IDs only grow, so those
** are the ones from pass_id0 on (a slow sweep: out of memory is rare). */
static void forget_pass_in(struct mapper *m, struct hmap *h)
{
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < hmap_capacity(h); i++) {
			if (h->keys[i] && h->vals[i] >= m->pass_id0) {
				hmap_del(h, h->keys[i]);
				again = 1; /* entries may have moved */
			}
		}
	}
}

/* Caller holds m's lock, after a failed pass. Forget its IDs, and that
** they were written unnamed: a NAME record would name an undefined ID. */
static void forget_pass(struct mapper *m)
{
	forget_pass_in(m, &m->map);
	forget_pass_in(m, &m->strs);
	forget_pass_in(m, &m->unnamed);
}

/* Caller holds m's lock. End the pass. */
int mapper_end(struct mapper *m)
{
	struct wbuf *out = m->out;
	mapper_assert_held(m);
	m->out = NULL;
	if (m->bad) {
		forget_pass(m);
		if (m->moff != (size_t)-1)
			out->len = m->moff;
		return -ENOMEM;
	}
	/* The names found since the last pass: their IDs were defined in
	** blocks written before (under this lock). */
	uint8_t *p = m->late.len ? wbuf_room(out, m->late.len) : NULL;
	if (p) {
		memcpy(p, m->late.p, m->late.len);
		out->len += m->late.len;
		m->late.len = 0;
	}
	if (m->unnamed_new && m->want)
		m->want(m->want_ud);
	if (out->len == m->mstart) {
		out->len = m->moff;
		return 0;
	}
	writer_block_end(out, m->moff, FORMAT_KIND_MAPPING);
	return 1;
}

/* -- Outside a pass ----------------------------------------------------------- */

/* Caller holds m's lock. The object at key is gone: so is what was known
** of its name. */
static void forget_names(struct mapper *m, uintptr_t key)
{
	uint64_t *v;
	if (m->unnamed.count)
		hmap_del(&m->unnamed, key);
	if (m->walked.count)
		hmap_del(&m->walked, key);
	if (m->pending.count && (v = hmap_get(&m->pending, key)) != NULL) {
		free((char *)(uintptr_t)*v);
		hmap_del(&m->pending, key);
	}
}

/* Any thread but the lock holder. The object at key was freed. */
void mapper_forget(struct mapper *m, uintptr_t key)
{
	mapper_lock(m);
	hmap_del(&m->map, key);
	forget_names(m, key);
	mapper_unlock(m);
}

/* -- Names found late ------------------------------------------------------ */

/* Names remembered for prototypes not mapped yet, at most. */
#define PENDING_MAX 65536

/* Caller holds m's lock. See mapper.h. */
void mapper_name(struct mapper *m, uintptr_t key, const char *name, int sure)
{
	uint64_t *v, id;
	if (!name[0])
		return;
	if ((v = hmap_get(&m->unnamed, key)) != NULL) {
		id = *v;
		if (names_put_name(&m->late, id, name) == 0) {
			hmap_del(&m->unnamed, key);
			if (!sure)
				hmap_put(&m->walked, key, id);
		}
		return;
	}
	if (!sure)
		return;
	if ((v = hmap_get(&m->walked, key)) != NULL) {
		if (names_put_name(&m->late, *v, name) == 0)
			hmap_del(&m->walked, key);
		return;
	}
	if (hmap_get(&m->map, key) || m->pending.count >= PENDING_MAX)
		return; /* named already (or C: named when mapped) */
	int added = 0;
	char *s;
	if (!(v = hmap_ref(&m->pending, key, &added)) || !added ||
	    !(s = strdup(name))) {
		if (v && added)
			hmap_del(&m->pending, key);
		return;
	}
	*v = (uint64_t)(uintptr_t)s;
}

/* VM thread only (allocator), in the sweep. protoname_fn: a child of the
** prototype being freed. */
static int name_child(void *ud, GCproto *child, const char *name)
{
	mapper_name(ud, (uintptr_t)child, name, 1);
	return 0;
}

/* VM thread only (allocator), the GC sweeping pt. See mapper.h. */
void mapper_proto_freed(struct mapper *m, GCproto *pt)
{
	mapper_lock(m);
	if (pt->flags & PROTO_CHILD)
		protoname_children(pt, name_child, m);
	hmap_del(&m->map, (uintptr_t)pt);
	forget_names(m, (uintptr_t)pt);
	mapper_unlock(m);
}

/* Caller holds m's lock. namewalk's wanted: written without a name. */
static int walk_wanted(void *ud, uintptr_t key)
{
	struct mapper *m = ud;
	return hmap_get(&m->unnamed, key) != NULL;
}

/* Caller holds m's lock. namewalk's found. */
static void walk_found(void *ud, uintptr_t key, const char *name, int sure)
{
	mapper_name(ud, key, name, sure);
}

/* VM thread only, the VM stopped. See mapper.h. */
int mapper_look(struct mapper *m, lua_State *L)
{
	mapper_lock(m);
	int any = m->unnamed.count > 0;
	if (any) {
		struct namewalk_fns fns = {walk_wanted, walk_found, m, 1};
		namewalk_run(L, &fns);
	}
	m->unnamed_new = 0;
	mapper_unlock(m);
	return any;
}

/* VM thread only. Merge freshly scanned names into m's. */
void mapper_names_merge(struct mapper *m, struct names *fresh)
{
	mapper_lock(m);
	names_merge(&m->names, fresh);
	mapper_unlock(m);
}

/* VM thread only. Name C function f (first name wins). */
void mapper_names_add_c(struct mapper *m, uintptr_t f, const char *name)
{
	mapper_lock(m);
	names_add_c(&m->names, (lua_CFunction)f, name);
	mapper_unlock(m);
}
