/*
** ljlog logger: attach and detach, the registry of attached VMs, exit.
** A profiled program never crashes because of ljlog: every failure here is
** a message and an unprofiled VM.
*/
#define _GNU_SOURCE
#include "config.h"

#include "logger/logger.h"
#include "logger/snaptrig.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "logger/hooks.h"
#include "logger/jitev.h"
#include "logger/vmcheck.h"

#define SENTINEL_KEY "ljlog.sentinel"

static struct logger_vm *vms;		/* attached VMs; global lock */
static int jit_note_said;		/* the JIT-off note is said once */
static int keep_open;			/* logger_keep_open: END only at exit */
static char log_pattern[OPTS_FILE_MAX]; /* file= before %p, "" for fd= */
static pid_t fork_tid;			/* the thread calling fork() */

/* -- Keeping the code loaded ------------------------------------------------------- */

/* Any thread. See logger.h. */
void logger_keep_open(void)
{
	__atomic_store_n(&keep_open, 1, __ATOMIC_RELAXED);
}

/* Any thread. See logger.h. */
const char *logger_env_options(void)
{
	static int said;
	const char *env = getenv("LUAJIT_PROFILE");
	if (!env || !*env)
		return NULL;
	if (!getauxval(AT_SECURE))
		return env;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr,
			"ljlog: LUAJIT_PROFILE ignored: this process runs in "
			"secure-execution mode (set-user-ID, set-group-ID or "
			"file capabilities); running unprofiled\n");
	return NULL;
}

/* Any context. Keep this shared object loaded for the life of the process. */
void logger_pin(void)
{
	static int pinned;
	Dl_info info;
	if (__atomic_exchange_n(&pinned, 1, __ATOMIC_ACQ_REL))
		return;
	if (dladdr((void *)logger_pin, &info) && info.dli_fname)
		(void)dlopen(info.dli_fname,
			     RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* -- The lifecycle (logger.h, enum logger_state) ----------------------------------- */

/* VM thread only (or a forked child's handler). The one place vm's state
** changes (the transitions are listed at enum logger_state); returns the
** state it leaves. */
static enum logger_state vm_become(struct logger_vm *vm, enum logger_state to)
{
	enum logger_state was = (enum logger_state)vm->state;
	vm->state = (uint8_t)to;
	return was;
}

/* -- Flushing: map, write the MAPPING, hand the EVENTS to flushq.c --------- */

static void premap_stack(struct logger_vm *vm, lua_State *L);

/* VM thread only. Map the buffer, write the MAPPING, hand the buffer to
** the writer thread; go on with another. The mapper's lock is held across
** the MAPPING's write: a drainer that finds an ID this flush made must not
** write a block using it before its MAPPING is out. */
void logger_flush(struct logger_vm *vm)
{
	struct writer_clock c;
	if (vm->state == LOGGER_FLUSHING || vm->bp == vm->buf)
		return;
	if (UTIL_UNLIKELY(vm->state == LOGGER_FORKED)) {
		/* A forked child's first flush: the stack's functions,
		** outermost first, as at attach. */
		vm_become(vm, LOGGER_RUNNING);
		premap_stack(vm, vm->fork_L);
	}
	enum logger_state was = vm_become(vm, LOGGER_FLUSHING);
	sample_busy(&vm->s, 1);
	clock_pair_now(&c);
	vm->out.len = 0;
	mapper_lock(&vm->map);
	int nmap = flush_map(&vm->map, vm->buf, vm->bp, &vm->out), ok = 0;
	if (nmap >= 0) {
		/* The MAPPING first (the ID rule): a failed write is sticky,
		** so no EVENTS goes out without its MAPPING. */
		writer_lock();
		ok = writer_is_open() &&
		     (!nmap || writer_write(&vm->out, (unsigned)nmap, 0) == 0);
		writer_unlock();
	}
	mapper_unlock(&vm->map);
	if (ok) { /* the EVENTS: the writer thread's now */
		vm->buf = flushq_submit(&vm->q, vm->bp, &c);
		vm->bend = vm->buf + vm->buf_words - BUF_SLACK;
	}
	vm->bp = vm->buf;
	sample_busy(&vm->s, -1);
	vm_become(vm, was);
}

/* VM thread only. Flush, and wait until every event vm buffered is
** written: what the VM writes next comes after them. The last buffer is
** written by this thread, after those queued: a VM that stops, or ends,
** has no use for the writer thread (a short run never starts it). */
static void flush_sync(struct logger_vm *vm)
{
	int sync = vm->q.sync;
	flushq_drain(&vm->q);
	vm->q.sync = 1;
	logger_flush(vm);
	vm->q.sync = sync;
}

/* VM thread only. See logger.h. The lock is held across the write, as in
** logger_flush: the IDs the NAMEs name are out before them. */
void logger_write_names(struct logger_vm *vm)
{
	struct wbuf b = {0};
	mapper_lock(&vm->map);
	mapper_begin(&vm->map, &b);
	if (mapper_end(&vm->map) > 0) {
		writer_lock();
		if (writer_is_open())
			writer_write(&b, 1, 0);
		writer_unlock();
	}
	mapper_unlock(&vm->map);
	free(b.p);
}

/* VM thread only, the VM stopped (the armed hook). See logger.h. */
void logger_look_names(struct logger_vm *vm, lua_State *L)
{
	sample_busy(&vm->s, 1);
	if (mapper_look(&vm->map, L))
		logger_write_names(vm);
	sample_busy(&vm->s, -1);
}

/* VM thread only. Buffer full or flush interval passed (cold path). */
void logger_flush_full(struct logger_vm *vm)
{
	logger_flush(vm);
	vm->flush_at =
	    vm->flush_ticks ? clock_now() + vm->flush_ticks : UINT64_MAX;
}

/* VM thread only. The GC is about to sweep: map what both buffers hold. */
void logger_before_sweep(struct logger_vm *vm)
{
	sample_map_pending(&vm->s);
	logger_flush_full(vm);
}

/* VM thread only (or a forked child's handler). Append to b a MAPPING block
** holding only vm's VM record; 0 or -ENOMEM. */
static int put_vm_record(struct logger_vm *vm, struct wbuf *b, uint64_t heap,
			 unsigned flags)
{
	size_t off = writer_block_begin(b);
	uint8_t *p = off == (size_t)-1 ? NULL : wbuf_room(b, BLOCKS_ULEB_MAX);
	if (!p)
		return -ENOMEM;
	b->len = (size_t)(blocks_uleb_put(p, vm->id) - b->p);
	if (names_put_vm(b, vm->id, vm->tid, heap, flags, vm->alloc_rate) < 0)
		return -ENOMEM;
	writer_block_end(b, off, FORMAT_KIND_MAPPING);
	return 0;
}

/* VM thread only. See logger.h. */
int logger_snapshot(struct logger_vm *vm, lua_State *L, char *err,
		    size_t errlen)
{
	if (vm->state == LOGGER_FLUSHING) {
		snprintf(err, errlen,
			 "heap snapshot: the log is being written");
		return -EBUSY;
	}
	flush_sync(vm); /* the events before it come first in the log */
	vm->out.len = 0;
	sample_busy(&vm->s, 1);
	int n = snap_take(&vm->snap, L, vm->id, &vm->out, err, errlen), r = n;
	if (n >= 0) {
		writer_lock();
		r = writer_is_open() ? writer_write(&vm->out, (unsigned)n, 0)
				     : -EBADF;
		writer_unlock();
	}
	sample_busy(&vm->s, -1);
	if (n < 0)
		return n;
	if (vm->out.cap > (4u << 20))
		wbuf_free(&vm->out); /* a large heap's blocks: give it back */
	vm->out.len = 0;
	if (r < 0)
		snprintf(err, errlen,
			 "heap snapshot: the log is not written: %s",
			 strerror(-r));
	return r < 0 ? r : 0;
}

/* VM thread only. Write a MAPPING block holding only vm's VM record. */
static int write_vm_record(struct logger_vm *vm, uint64_t heap, unsigned flags)
{
	int r;
	vm->out.len = 0;
	if ((r = put_vm_record(vm, &vm->out, heap, flags)) < 0)
		return r;
	writer_lock();
	r = writer_is_open() ? writer_write(&vm->out, 1, 0) : -EBADF;
	writer_unlock();
	return r;
}

/* VM thread only, at attach. Map the Lua functions on L's stack, outermost
** first: a function started before the attach (ljlog.start inside it)
** names the functions it makes, which its mapping maps with it. */
static void premap_stack(struct logger_vm *vm, lua_State *L)
{
	GCproto *pts[64];
	int n = 0;
	TValue *bot = tvref(L->stack) + LJ_FR2;
	for (TValue *f = L->base - 1; f > bot && n < 64; f = frame_prev(f)) {
		GCfunc *fn = frame_func(f);
		if (fn && isluafunc(fn))
			pts[n++] = funcproto(fn);
	}
	if (!n)
		return;
	mapper_lock(&vm->map);
	vm->out.len = 0;
	mapper_begin(&vm->map, &vm->out);
	while (n-- > 0)
		mapper_ref(&vm->map, MAPPER_PROTO, (uintptr_t)pts[n], 0);
	int nmap = mapper_end(&vm->map);
	mapper_unlock(&vm->map);
	if (nmap > 0) {
		writer_lock();
		if (writer_is_open())
			writer_write(&vm->out, 1, 0);
		writer_unlock();
	}
}

/* -- Closing the log at lua_close and at exit ---------------------------------------- */

/* VM thread only (lua_close's finalizers). Detach before the VM is freed. */
static int sentinel_gc(lua_State *L)
{
	char err[256];
	if (logger_vm_of(G(L)) && logger_detach(L, err, sizeof err) < 0)
		fprintf(stderr, "ljlog: %s\n", err);
	return 0;
}

/* VM thread only. A userdata in the registry whose __gc detaches. */
static void sentinel_set(lua_State *L)
{
	lua_getfield(L, LUA_REGISTRYINDEX, SENTINEL_KEY);
	int have = !lua_isnil(L, -1);
	lua_pop(L, 1);
	if (have)
		return;
	lua_newuserdata(L, 1);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, sentinel_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	lua_setfield(L, LUA_REGISTRYINDEX, SENTINEL_KEY);
}

/* VM thread only. Buffer an ATTACH or DETACH event with the heap size. */
static void record_vm_event(struct logger_vm *vm, unsigned kind)
{
	uint64_t ts = clock_now();
	uint64_t *p = logger_reserve(vm, NULL, ts);
	logger_commit(vm, buf_put_vm(p, kind, ts, vm->g->gc.total));
}

/* Caller holds the global lock. Write END and close; 0 or -errno. */
static int close_log_locked(void)
{
	struct writer_clock c;
	clock_pair_now(&c);
	return writer_close(&c);
}

/* Any thread. Write END and close, if the log is open. */
static void close_log(void)
{
	writer_lock();
	if (writer_is_open())
		close_log_locked();
	writer_unlock();
}

/* Process exit without lua_close: flush this thread's VMs, write END. */
static void at_exit(void)
{
	struct logger_vm *mine[64];
	int n = 0;
	pid_t me = util_tid();
	writer_lock();
	for (struct logger_vm *vm = vms; vm && n < 64; vm = vm->next)
		if (vm->tid == me && vm->state != LOGGER_FLUSHING)
			mine[n++] = vm;
	writer_unlock();
	for (int i = 0; i < n; i++) {
		sample_busy(&mine[i]->s, 1); /* for good: the program ends */
		if (mine[i]->trig.at_detach) {
			char serr[256];
			if (logger_snapshot(mine[i], mainthread(mine[i]->g),
					    serr, sizeof serr) < 0)
				fprintf(stderr, "ljlog: snapshot=exit: %s\n",
					serr);
		}
		sample_flush_now(&mine[i]->s);
		record_vm_event(mine[i], BUF_DETACH);
		flush_sync(mine[i]);
		/* Names still unknown: a last look (compiled code may never
		** have stopped at the armed hook). */
		logger_look_names(mine[i], mainthread(mine[i]->g));
	}
	flushq_drain_all(); /* every VM's events before the END */
	close_log();
}

/* -- Forked children ---------------------------------------------------------------- */

/* The thread calling fork(): its VMs live on in the child. The sampler's
** helper is held out of its work (sample_fork_prepare) until fork returns. */
static void at_fork_prepare(void)
{
	fork_tid = util_tid();
	flushq_fork_prepare();
	sample_fork_prepare();
	snaptrig_fork_prepare();
	util_thread_fork_prepare(); /* after the locks that start threads */
}

/* Parent side of fork(): the helper goes on. */
static void at_fork_parent(void)
{
	util_thread_fork_done();
	snaptrig_fork_parent();
	sample_fork_parent();
	flushq_fork_parent();
}

/* Child side of fork(), single-threaded. Take the VMs of the threads that
** did not fork out of the registry; the count of VMs left. Their threads
** are not in the child: nothing can detach them, and their lua_States are
** never run or read again. Their states are leaked, not freed:
** snaptrig.c's slots may still point at them, and a thread stopped midway
** by the fork may have left their buffers and maps half-changed. */
static unsigned drop_others(void)
{
	unsigned kept = 0;
	for (struct logger_vm **pp = &vms; *pp;) {
		struct logger_vm *vm = *pp;
		if (vm->tid != fork_tid) {
			*pp = vm->next;
			vm->next = NULL;
			continue;
		}
		kept++;
		pp = &vm->next;
	}
	return kept;
}

/* Child side of fork(), single-threaded: the child profiles on into a log
** of its own (file=PATH with %p: the child's pid; without: PATH.PID;
** |COMMAND with %p: a command of its own; without, or fd=N: no log). The
** VMs of the thread that forked go on: their buffers hold the parent's
** events (the parent writes them), every ID is made again, the VM record
** and then the events go to the child's log at its first flush, and
** sampling starts again. The other threads' VMs are gone with them:
** they leave the registry and the writer queue's count (drop_others), so
** the child's log closes at its last detach and its writer thread ends. */
static void at_fork_child(void)
{
	static struct wbuf pre; /* the child's VM records */
	char path[OPTS_FILE_MAX + 32], *pp = path;
	pid_t me = util_tid(), pid = getpid();
	unsigned nvms = 0, kept = drop_others();
	if (!log_pattern[0])
		pp = NULL;
	else if (strstr(log_pattern, "%p"))
		opts_expand_file(log_pattern, pid, path, sizeof path);
	else if (log_pattern[0] == '|')
		pp = NULL;
	else if (opts_expand_file(log_pattern, pid, path, sizeof path - 24) ==
		 0)
		snprintf(path + strlen(path), 24, ".%ld", (long)pid);
	util_thread_fork_done();
	flushq_fork_child(kept);
	sample_fork_child();
	if (snaptrig_fork_child(fork_tid) < 0)
		fprintf(stderr,
			"ljlog: forked child %ld: snapshot: cannot start the "
			"timer thread: no more interval snapshots\n",
			(long)pid);
	pre.len = 0;
	for (struct logger_vm *vm = vms; vm; vm = vm->next) {
		mapper_fork_child(&vm->map);
		vm->tid = me;
		vm->bp = vm->buf;
		vm_become(vm, LOGGER_FORKED);
		vm->fork_L = vm->last_L ? vm->last_L : mainthread(vm->g);
		if (put_vm_record(vm, &pre, vm->g->gc.total, vm->vm_flags) == 0)
			nvms++;
		record_vm_event(vm, BUF_ATTACH);
	}
	writer_fork_child(pp, &pre, nvms);
	for (struct logger_vm *vm = vms; vm; vm = vm->next) {
		if (vm->tid != me || !vm->sample_ns)
			continue;
		char err[256];
		if (sample_start(&vm->s, vm->g, &vm->map, vm->sample_ns,
				 vm->sample_flags, err, sizeof err) < 0)
			fprintf(stderr, "ljlog: forked child %ld: %s\n",
				(long)pid, err);
	}
}

/* -- Attach and detach ------------------------------------------------------------- */

/* VM thread only. Free vm (no other thread can reach it any more). */
static void vm_free(struct logger_vm *vm)
{
	mapper_free(&vm->map);
	addrset_free(&vm->sampled);
	snap_free(&vm->snap);
	flushq_free(&vm->q);
	wbuf_free(&vm->out);
	free(vm);
}

/* VM thread only. Attach's checks: the options into o, LuaJIT's API found,
** L's VM not attached yet and the one ljlog was built for, the log's name
** into path. 0 or -errno with a message in err; nothing to undo. */
static int attach_check(lua_State *L, const char *options, struct opts *o,
			char *path, size_t pathlen, char *err, size_t errlen)
{
	int r;
	if ((r = opts_parse(options, o, err, errlen)) < 0)
		return r;
	if ((r = luaweak_resolve(NULL)) < 0) {
		snprintf(
		    err, errlen,
		    "LuaJIT's API (lua_gettop...) not found in this process");
		return r;
	}
	if (logger_vm_of(G(L))) {
		snprintf(err, errlen, "already profiling this Lua VM");
		return -EALREADY;
	}
	if ((r = vmcheck(L, err, errlen)) < 0)
		return r;
	if (o->fd >= 0)
		snprintf(path, pathlen, "fd=%d", o->fd);
	else if (opts_expand_file(o->file, getpid(), path, pathlen) < 0) {
		snprintf(err, errlen, "file name too long: '%.200s'", o->file);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* VM thread only. A new state for L's VM, ATTACHING: its buffers, mapper
** and recorders as o says, the names L's VM holds. No other thread sees it
** yet. NULL when out of memory, with a message in err. */
static struct logger_vm *vm_new(lua_State *L, const struct opts *o, char *err,
				size_t errlen)
{
	struct logger_vm *vm = calloc(1, sizeof *vm);
	if (!vm ||
	    !(vm->buf =
		  flushq_init(&vm->q, &vm->map, o->buffer, o->nowriter)) ||
	    mapper_init(&vm->map, G(L), 0) < 0) {
		if (vm) {
			flushq_free(&vm->q);
			free(vm);
		}
		snprintf(err, errlen, "out of memory for a %zu byte buffer",
			 o->buffer);
		return NULL;
	}
	vm_become(vm, LOGGER_ATTACHING);
	vm->ffi_call_ffid = names_ffid("ffi.meta.__call");
	vm->g = G(L);
	vm->events = o->events;
	if (o->events & OPTS_ALLOC) {
		vm->alloc_rate = o->alloc_rate;
		rng_seed(&vm->rng, clock_now() ^ (uint64_t)(uintptr_t)vm);
		if (vm->alloc_rate)
			vm->alloc_left =
			    (int64_t)rng_exp(&vm->rng, vm->alloc_rate);
	}
	vm->trace_scan = alloc_trace_scan_words();
	vm->buf_words = o->buffer / sizeof(uint64_t);
	vm->bp = vm->buf;
	vm->bend = vm->buf + vm->buf_words - BUF_SLACK;
	vm->flush_ticks = o->flush_ns ? clock_ticks(o->flush_ns) : 0;
	vm->flush_at = o->flush_ns ? clock_now() + vm->flush_ticks : UINT64_MAX;
	vm->tid = util_tid();
	names_scan(&vm->map.names, L);
	names_add_c(&vm->map.names, sentinel_gc, "ljlog.(lua_close)");
	return vm;
}

/* Caller holds the global lock; VM thread only. Open the process's log at
** path with its INTRO, and set what the process's end and its forked
** children need. 0 or -errno with a message in err. */
static int open_log_locked(lua_State *L, const char *options,
			   const struct opts *o, const char *path, char *err,
			   size_t errlen)
{
	static int atexit_set, atfork_set;
	char vbuf[128];
	int openresty, r;
	const char *v = vmcheck_version(L, vbuf, sizeof vbuf, &openresty);
	struct writer_intro in = {v ? v : LUAJIT_VERSION,
				  options ? options : "",
				  CLOCK_KIND,
				  CLOCK_TS_SHIFT,
				  clock_hz(),
				  {0, 0, 0},
				  clock_pair_now};
	clock_pair_now(&in.clock);
	if ((r = writer_open(path, o->fd, &in, err, errlen)) < 0)
		return r;
	snprintf(log_pattern, sizeof log_pattern, "%s",
		 o->fd >= 0 ? "" : o->file);
	if (!atfork_set)
		atfork_set = pthread_atfork(at_fork_prepare, at_fork_parent,
					    at_fork_child) == 0;
	if (!atexit_set)
		atexit_set = atexit(at_exit) == 0;
	return 0;
}

/* VM thread only. vm's log: open it (the process's first VM) or check it
** is the one open; then vm gets its ID and joins the registry. 0 or -errno
** with a message in err, vm still unseen (the caller frees it). */
static int attach_log(struct logger_vm *vm, lua_State *L, const char *options,
		      const struct opts *o, const char *path, char *err,
		      size_t errlen)
{
	int r;
	writer_lock();
	if (!writer_is_open()) {
		if ((r = open_log_locked(L, options, o, path, err, errlen)) <
		    0) {
			writer_unlock();
			return r;
		}
	} else if (strcmp(writer_path(), path) != 0) {
		snprintf(err, errlen,
			 "this process already writes '%s': all Lua VMs of a "
			 "process share one log, not '%s'",
			 writer_path(), path);
		writer_unlock();
		return -EBUSY;
	}
	vm->id = vm->map.vm_id = mapper_new_id();
	writer_count_vm();
	vm->next = vms;
	vms = vm;
	writer_unlock();
	return 0;
}

/* VM thread only. The JIT policy: calls turns the JIT compiler off (no
** hooks fire in compiled code) unless keepjit. The VM record's flags. */
static unsigned attach_jit_policy(struct logger_vm *vm, lua_State *L,
				  const struct opts *o)
{
	global_State *g = G(L);
	if (!(o->events & OPTS_CALLS) || o->keepjit ||
	    !(G2J(g)->flags & JIT_F_ON) || (g->hookmask & HOOK_GC))
		return 0;
	luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
	vm->jit.off = 1;
	if (!__atomic_exchange_n(&jit_note_said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "ljlog: calls: turned the JIT compiler off "
				"(LuaJIT fires no call hooks in compiled "
				"code); add 'keepjit' to keep it on\n");
	return FORMAT_VM_JIT_OFF;
}

/* VM thread only. sample: start the sampler. The exit mode its checks want
** in compiled code (jitev.h), 0 when not sampling. */
static int attach_sampler(struct logger_vm *vm, lua_State *L,
			  const struct opts *o)
{
	char serr[512];
	if (!(o->events & OPTS_SAMPLE))
		return 0;
	/* A sample in compiled code is charged as jit.p charges it, to the
	** exit of the profile check the code stops at next (none with
	** nolines: the exit before it). */
	unsigned sf = (o->nohost ? 0 : SAMPLE_HOST) |
		      (o->wall ? SAMPLE_WALL : 0) |
		      (o->nolines ? 0 : SAMPLE_CHECKS);
	if (sample_start(&vm->s, G(L), &vm->map, o->sample_ns, sf, serr,
			 sizeof serr) < 0) {
		fprintf(stderr, "ljlog: %s\n", serr);
		return 0;
	}
	vm->sample_ns = o->sample_ns;
	vm->sample_flags = sf;
	/* The checks: one where the function changes names the inlined
	** functions, as jit.p does by default; one per line (lines) also the
	** line, at more checks in the loops. */
	return o->lines ? JITEV_LINES : JITEV_FUNCS;
}

/* VM thread only. alloc: the exit mode of compiled code, given base (the
** sampler's). An allocation in compiled code is charged to the exit
** before its call: with an exit per line, that is its own line. Only the
** traces that may allocate get them (the rest keep base): then 0, the
** record handler decides. Sampled allocation (alloc=RATE, in the default
** set) does without: they cost a compile-heavy program a fifth of its
** time (luacheck over Penlight: 1.20x, 0.97x without), and its sites in
** traces are then the line of the exit before (its function stays
** right). */
static int alloc_exits(struct logger_vm *vm, lua_State *L, const struct opts *o,
		       int base)
{
	char jerr[256];
	int per_line = (o->events & OPTS_ALLOC) && (!o->alloc_rate || o->lines);
	/* With an exit per line, a snapshot's frame line is the allocating
	** one: TRACE records say so (no bytecode read per snapshot). */
	vm->map.line_exits = per_line && !o->nolines;
	if (!per_line)
		return base;
	if (o->lines || o->nolines)
		return JITEV_LINES;
	if (jitev_alloc_lines_on(L, &vm->jit.rec, base, jerr, sizeof jerr) <
	    0) {
		fprintf(stderr, "ljlog: %s\n", jerr);
		return JITEV_LINES; /* everywhere, then */
	}
	return 0;
}

/* VM thread only. The sampler, and the exits compiled code gets for it
** and for alloc (jitev.h). */
static void attach_exits(struct logger_vm *vm, lua_State *L,
			 const struct opts *o)
{
	int mode = alloc_exits(vm, L, o, attach_sampler(vm, L, o));
	if ((o->events & OPTS_ALLOC) && o->alloc_rate)
		jitev_callees(L, &vm->jit.callees);
	if (mode && !o->nolines)
		vm->jit.exits = jitev_lines_on(L, mode);
}

/* VM thread only. Our allocator wrapper in place of the VM's: from here
** on, vm is live (RUNNING). */
static void attach_alloc(struct logger_vm *vm, lua_State *L,
			 const struct opts *o)
{
	vm->orig_alloc = lua_getallocf(L, &vm->orig_ud);
	util_own_init(); /* alloc.c: the sites in ljlog's own C functions */
	if (!o->vmtrim) {
		vm->heap = vmheap_find(L, vm->orig_alloc, vm->orig_ud);
		vmheap_hold(vm->heap);
	}
	vm->gcstate = G(L)->gc.state;
	record_vm_event(vm, BUF_ATTACH);
	vm_become(vm, LOGGER_RUNNING);
	lua_setallocf(L, alloc_wrapper(o->events, vm->alloc_rate), vm);
}

/* VM thread only. calls: our call hook and C function wrapper. */
static void attach_hooks(struct logger_vm *vm, lua_State *L,
			 const struct opts *o)
{
	global_State *g = G(L);
	if (!(o->events & OPTS_CALLS))
		return;
	if (g->hookf && g->hookf != hooks_call)
		fprintf(stderr, "ljlog: calls: replacing the program's "
				"debug hook\n");
	vm->orig_bc_ext = g->bc_cfunc_ext;
	vm->orig_bc_int = g->bc_cfunc_int;
	vm->orig_wrapf = bc_op(g->bc_cfunc_ext) == BC_FUNCCW ? g->wrapf : NULL;
	g->wrapf = (lua_CFunction)(void (*)(void))hooks_wrap;
	g->bc_cfunc_ext = g->bc_cfunc_int =
	    BCINS_AD(BC_FUNCCW, LUA_MINSTACK, 0);
	lua_sethook(L, hooks_call, LUA_MASKCALL | LUA_MASKRET, 0);
}

/* VM thread only. jit: the trace events. */
static void attach_jitev(struct logger_vm *vm, lua_State *L,
			 const struct opts *o)
{
	char jerr[256];
	if (!(o->events & OPTS_JIT))
		return;
	if (jitev_start(L, jerr, sizeof jerr) < 0)
		fprintf(stderr, "ljlog: %s\n", jerr);
	else
		vm->jit.events = 1;
}

/* VM thread only. The detach at lua_close, the snapshot triggers, and the
** look for names a mapping pass asks for. */
static void attach_triggers(struct logger_vm *vm, lua_State *L,
			    const struct opts *o)
{
	char terr[256];
	sentinel_set(L);
	if (snaptrig_start(vm, o, terr, sizeof terr) < 0)
		fprintf(stderr, "ljlog: %s\n", terr);
	/* From here on, a mapping pass that wrote a function without its
	** name has the hook look for it (the hooks above are in place). */
	mapper_lock(&vm->map);
	vm->map.want = snaptrig_names;
	vm->map.want_ud = vm;
	mapper_unlock(&vm->map);
}

/* VM thread only. Attach to L's VM; 0 or -errno with a message in err.
** Only the steps up to the log's may fail: each undoes what it did, and a
** later failure is a message and a VM profiled without that part. */
int logger_attach(lua_State *L, const char *options, char *err, size_t errlen)
{
	struct opts o;
	char path[OPTS_FILE_MAX];
	int r;
	if ((r = attach_check(L, options, &o, path, sizeof path, err, errlen)) <
	    0)
		return r;
	logger_pin();
	struct logger_vm *vm = vm_new(L, &o, err, errlen);
	if (!vm)
		return -ENOMEM;
	if ((r = attach_log(vm, L, options, &o, path, err, errlen)) < 0) {
		vm_free(vm);
		return r;
	}
	vm->vm_flags = attach_jit_policy(vm, L, &o);
	write_vm_record(vm, G(L)->gc.total, vm->vm_flags);
	premap_stack(vm, L);
	attach_exits(vm, L, &o);
	attach_alloc(vm, L, &o);
	attach_hooks(vm, L, &o);
	attach_jitev(vm, L, &o);
	attach_triggers(vm, L, &o);
	return 0;
}

/* -- Detach ------------------------------------------------------------------------ */

/* VM thread only. calls: the VM's hook and C function wrapper back. */
static void detach_hooks(struct logger_vm *vm, global_State *g, lua_State *L)
{
	if (g->hookf == hooks_call)
		lua_sethook(L, NULL, 0, 0);
	if (g->wrapf == (lua_CFunction)(void (*)(void))hooks_wrap) {
		g->wrapf = vm->orig_wrapf;
		g->bc_cfunc_ext = vm->orig_bc_ext;
		g->bc_cfunc_int = vm->orig_bc_int;
	}
}

/* VM thread only. Flush, DETACH, restore the VM; END after the last VM. */
int logger_detach(lua_State *L, char *err, size_t errlen)
{
	global_State *g = G(L);
	struct logger_vm *vm = logger_vm_of(g), **pp;
	int r = 0;
	if (!vm) {
		snprintf(err, errlen, "not profiling this Lua VM");
		return -ENOENT;
	}
	sample_busy(&vm->s, 1); /* the rest is ljlog's (sampling ends) */
	mapper_lock(&vm->map);
	vm->map.want = NULL; /* no hook is armed for names from now on */
	mapper_unlock(&vm->map);
	/* A snapshot asked for and not yet taken is taken here: no trigger's
	** work is lost (snapshot=exit takes one here anyway). */
	unsigned pending = snaptrig_stop(vm);
	if (vm->trig.at_detach || (pending & SNAPTRIG_SNAPSHOT)) {
		char serr[256];
		if (logger_snapshot(vm, L, serr, sizeof serr) < 0)
			fprintf(stderr, "ljlog: snapshot%s: %s\n",
				vm->trig.at_detach ? "=exit" : "", serr);
	}
	detach_hooks(vm, g, L);
	if (vm->jit.events)
		jitev_stop(L);
	sample_stop(&vm->s);
	if (vm->jit.exits)
		jitev_lines_off(L, vm->jit.exits);
	jitev_alloc_lines_off(L, &vm->jit.rec);
	record_vm_event(vm, BUF_DETACH);
	flush_sync(vm); /* its events before the END, its buffers back */
	/* Names still unknown (the flush just mapped the last functions): a
	** last look, as compiled code may never have stopped at the hook. */
	logger_look_names(vm, L);
	lua_setallocf(L, vm->orig_alloc, vm->orig_ud); /* vm is dead now */
	/* luaJIT_setmode raises an error inside __gc (lua_close's finalizers),
	** where the JIT is being turned off for good anyway. */
	if (vm->jit.off && !(g->hookmask & HOOK_GC))
		luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_ON);
	writer_lock();
	for (pp = &vms; *pp; pp = &(*pp)->next) {
		if (*pp == vm) {
			*pp = vm->next;
			break;
		}
	}
	if (!vms && !__atomic_load_n(&keep_open, __ATOMIC_RELAXED) &&
	    writer_is_open() && (r = close_log_locked()) < 0)
		snprintf(err, errlen, "the log is incomplete: %s",
			 strerror(-r));
	writer_unlock();
	vm_free(vm);
	return r;
}
