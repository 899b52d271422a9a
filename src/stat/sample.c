/*
** ljlog sampling: timer, signal handler, signal buffer, helper thread.
** The handler reads what is safe to read in signal context, checking every
** frame it follows, and writes one ring entry; nothing there allocates,
** locks or writes a file. The drainer (helper thread, or the VM thread
** before a sweep) maps, unwinds host stacks and writes SAMPLES blocks.
*/
#define _GNU_SOURCE
#include "stat/sample.h"

#include <errno.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "logger/flush.h"
#include "logger/logger.h"

#define SAMPLE_SLOTS	 256	    /* VMs sampled at once */
#define SAMPLE_LUA_MAX	 96	    /* Lua frames kept per sample */
#define SAMPLE_HOST_MAX	 96	    /* host frames kept per sample */
#define SAMPLE_RING	 128	    /* entries per VM */
#define SAMPLE_STACK	 (8u << 10) /* bytes of host stack copied per sample */
#define SAMPLE_PERIOD_NS 4000000    /* helper thread wake-up */

/* One Lua frame as read in the handler: a raw key, mapped later. */
struct sample_frame {
	uintptr_t key; /* GCproto*, lua_CFunction or ffid (| BUF_FF_ASM) */
	uint32_t line; /* line being executed (PROTO), else 0 */
	uint8_t kind;  /* BUF_KEY_*; after mapping, ID is in key */
};

/* One ring entry; the host stack copy follows when host stacks are on. */
struct sample_entry {
	uint64_t ts;	 /* counter */
	uintptr_t trace; /* GCtrace* (state 7), else 0; then its ID */
	uint16_t nlua;
	uint8_t state;	  /* FORMAT_STATE_* */
	uint32_t traceno; /* number of the trace when sampled */
	struct sample_frame lua[SAMPLE_LUA_MAX];
	struct unwind_ctx host[]; /* 0 or 1 */
};

/* -- Process-wide state --------------------------------------------------------- */

static struct logger_vm *slots[SAMPLE_SLOTS]; /* the handler's table (atomic) */
static pthread_mutex_t smtx = PTHREAD_MUTEX_INITIALIZER; /* list, helper */
static struct logger_vm *sampling; /* VMs being sampled (smtx) */
static int helper_started;	   /* (smtx) */
static int handler_set;		   /* (smtx) */
static int clash_said;		   /* (atomic) */

static pid_t tid_now(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* -- Signal context --------------------------------------------------------------- */

/* Async-signal-safe. Sample state of LuaJIT's vmstate. */
static unsigned state_of(int32_t st)
{
	if (st >= 0)
		return FORMAT_STATE_TRACE;
	switch (~st) {
	case LJ_VMST_INTERP: return FORMAT_STATE_INTERP;
	case LJ_VMST_C: return FORMAT_STATE_C;
	case LJ_VMST_GC: return FORMAT_STATE_GC;
	case LJ_VMST_EXIT: return FORMAT_STATE_EXIT;
	case LJ_VMST_RECORD: return FORMAT_STATE_RECORD;
	case LJ_VMST_OPT: return FORMAT_STATE_OPT;
	default: return FORMAT_STATE_ASM;
	}
}

/* Async-signal-safe. The frame of the Lua function that called frame, its
** link being the return PC pc; NULL when that is not what the stack holds
** (a fast function may have written results over its frame). pc is not
** trusted: the caller sits 1 + LJ_FR2 + A slots below, A the register of
** its CALL, and a candidate is taken only if it holds a Lua function whose
** bytecode contains pc; only then is the CALL read, to check A. */
static TValue *lua_caller(TValue *frame, const BCIns *pc, TValue *stack)
{
	uintptr_t a = (uintptr_t)pc;
	if (a < 4096 || a >= ((uintptr_t)1 << 47) || (a & 3))
		return NULL; /* a number or a tagged value, not a PC */
	for (unsigned ra = 0; ra < 256; ra++) {
		TValue *prev = frame - (1 + LJ_FR2 + ra);
		if (prev < stack + LJ_FR2)
			break;
		GCfunc *fn = lj_frame_func_checked(prev);
		if (!fn || !isluafunc(fn))
			continue;
		GCproto *pt = funcproto(fn);
		const BCIns *bc = proto_bc(pt);
		if (pc > bc && pc <= bc + pt->sizebc && bc_a(pc[-1]) == ra)
			return prev;
	}
	return NULL;
}

/* Async-signal-safe. Read L's Lua frames into e, innermost first, from
** base (the frame base) and pc (the top Lua frame's PC, or NULL). Every
** slot followed must lie in the stack and hold a function; a top Lua frame
** whose PC is not in its prototype gives no frames at all (never guess). */
static unsigned walk(lua_State *L, TValue *base, const BCIns *pc,
		     struct sample_entry *e)
{
	TValue *stack = tvref(L->stack), *end = stack + L->stacksize;
	TValue *frame = base - 1;
	unsigned n = 0;
	if (base <= stack + LJ_FR2 || base > end)
		return 0;
	while (n < SAMPLE_LUA_MAX && frame >= stack + LJ_FR2 && frame < end) {
		GCfunc *fn = lj_frame_func_checked(frame);
		struct sample_frame *f = &e->lua[n];
		if (!fn)
			break;
		if (isluafunc(fn)) {
			GCproto *pt = funcproto(fn);
			const BCIns *bc = proto_bc(pt);
			f->kind = BUF_KEY_PROTO;
			f->key = (uintptr_t)pt;
			f->line = 0;
			if (pc && pc > bc && pc <= bc + pt->sizebc)
				f->line =
				    lj_proto_line(pt, proto_bcpos(pt, pc) - 1);
			else if (n == 0 && pc)
				return 0; /* the frame is not what it seems */
		} else if (fn->c.ffid > FF_C) {
			f->kind = BUF_KEY_FFUNC;
			f->key = fn->c.ffid |
				 (lj_is_asm_ff(G(L), fn) ? BUF_FF_ASM : 0);
			f->line = 0;
		} else {
			f->kind = BUF_KEY_CFUNC;
			f->key = (uintptr_t)fn->c.f;
			f->line = 0;
		}
		n++;
		/* To the caller. A vararg frame first leads to the same call's
		** original frame. */
		TValue *prev = frame;
		if (frame_isvarg(prev))
			prev = frame_prevd(prev);
		if (prev < stack + LJ_FR2 || prev >= end)
			break;
		if (frame_islua(prev)) {
			pc = frame_pc(prev);
			prev = lua_caller(prev, pc, stack);
			if (!prev)
				break;
		} else {
			pc = NULL;
			prev = frame_prevd(prev);
		}
		if (prev >= frame)
			break; /* no progress: not a frame chain */
		frame = prev;
	}
	return n;
}

/* Async-signal-safe. Fill entry e for vm, interrupted with context uc. */
static void capture(struct logger_vm *vm, struct sample_entry *e,
		    const ucontext_t *uc)
{
	global_State *g = vm->g;
	int32_t st = g->vmstate;
	lua_State *L = gcref(g->cur_L) ? &gcref(g->cur_L)->th : NULL;
	TValue *base = NULL;
	const BCIns *pc = NULL;

	e->ts = clock_now();
	e->state = (uint8_t)state_of(st);
	e->trace = 0;
	e->nlua = 0;
	/* The VM runs on this thread only if its C frame is on this thread's
	** stack: a VM that moved to another thread is not read from here. */
	uintptr_t cf = L ? (uintptr_t)cframe_raw(L->cframe) : 0;
	if (L && cf && (cf < vm->s.stack_lo || cf >= vm->s.stack_hi))
		L = NULL;
	uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (!L) {
		e->state = FORMAT_STATE_IDLE;
	} else if (e->state == FORMAT_STATE_TRACE) {
		jit_State *J = G2J(g);
		if ((MSize)st < J->sizetrace && gcref(J->trace[st])) {
			e->trace = (uintptr_t)gcref(J->trace[st]);
			e->traceno = (uint32_t)st;
		}
		base = mref(g->jit_base, TValue);
	} else if (e->state == FORMAT_STATE_C && !cf) {
		e->state =
		    FORMAT_STATE_IDLE; /* in the host, no Lua call active */
	} else if (e->state == FORMAT_STATE_INTERP && rip >= vm->s.vm_lo &&
		   rip < vm->s.vm_hi &&
		   (uint64_t)uc->uc_mcontext.gregs[REG_R14] ==
		       (uint64_t)(uintptr_t)G2GG(g)->dispatch) {
		/* In the interpreter's own code (not a C helper it called):
		** its BASE and PC registers are newer than L->base. */
		base = (TValue *)(uintptr_t)uc->uc_mcontext.gregs[REG_RDX];
		pc = (const BCIns *)(uintptr_t)uc->uc_mcontext.gregs[REG_RBX];
	} else if (e->state != FORMAT_STATE_EXIT) {
		/* Called out of the interpreter: base and PC were saved. */
		base = L->base;
		pc = cf ? cframe_pc((void *)cf) : NULL;
	}
	/* Not while L's stack is being reallocated: until LuaJIT has moved
	** L->stack, the old block may be freed under us. */
	uintptr_t moving =
	    __atomic_load_n(&vm->s.stack_moving, __ATOMIC_RELAXED);
	if (L && base && (!moving || moving != (uintptr_t)tvref(L->stack)))
		e->nlua = (uint16_t)walk(L, base, pc, e);
	if (vm->s.host)
		unwind_capture(e->host, uc, vm->s.stack_lo, vm->s.stack_hi,
			       SAMPLE_STACK);
}

/* Async-signal-safe. The ring entry at index i. */
static struct sample_entry *entry_at(struct sample_vm *s, uint32_t i)
{
	return (struct sample_entry *)(s->ring + (size_t)(i & (s->cap - 1)) *
						     s->entry_size);
}

/* Async-signal-safe. The timer signal: one sample into the VM's buffer. */
static void on_sigprof(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	struct logger_vm *vm = NULL;
	(void)sig;
	if (si->si_code == SI_TIMER && si->si_value.sival_int >= 0 &&
	    si->si_value.sival_int < SAMPLE_SLOTS)
		vm = __atomic_load_n(&slots[si->si_value.sival_int],
				     __ATOMIC_ACQUIRE);
	if (vm && vm->s.tid == tid_now()) {
		struct sample_vm *s = &vm->s;
		uint32_t head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
		uint32_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
		__atomic_fetch_add(&s->signals, 1, __ATOMIC_RELAXED);
		if (head - tail >= s->cap) {
			__atomic_fetch_add(&s->dropped, 1, __ATOMIC_RELAXED);
		} else {
			capture(vm, entry_at(s, head), ucv);
			__atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
		}
	}
	errno = saved;
}

/* -- Draining (the drainer holds hostlock) ---------------------------------------- */

/* HOSTSYM ID of the function containing ip (helper state only); ip is
** the interrupted address or, for outer frames, a return address minus 1
** (a call at a function's very end returns into the next function). */
static uint64_t host_id(struct logger_vm *vm, struct wbuf *b, uintptr_t ip)
{
	struct sample_vm *s = &vm->s;
	struct unwind_sym sym;
	if (ip >= s->vm_lo && ip < s->vm_hi) {
		if (!s->vm_sym) {
			s->vm_sym = maps_new_id();
			if (names_put_hostsym(b, s->vm_sym, s->vm_lo,
					      "(luajit interpreter)", "",
					      FORMAT_HOST_VM) < 0)
				return s->vm_sym = 0;
		}
		return s->vm_sym;
	}
	if (unwind_symbolize(s->syms, ip, &sym) < 0)
		return 0; /* in no object: JIT-compiled code */
	/* Functions without a symbol: one entry per object. */
	uintptr_t key = sym.start ? sym.start : sym.base;
	uint64_t id = maps_lookup(&s->hostmap, key);
	if (id)
		return id;
	id = maps_new_id();
	if (names_put_hostsym(b, id, key, sym.name, sym.object, 0) < 0 ||
	    maps_insert(&s->hostmap, key, id) < 0)
		return 0;
	return id;
}

/* Caller holds maplock. Map the Lua keys of the entries not mapped yet,
** while their objects are surely alive, and write the new IDs at once
** (MAPPING before any block using them). A key that cannot be mapped (out
** of memory) drops that sample's Lua frames. */
static void map_pending(struct logger_vm *vm)
{
	struct sample_vm *s = &vm->s;
	uint32_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	if (head == s->mapped)
		return;
	flush_map_begin();
	vm->out.len = 0;
	size_t moff = writer_block_begin(&vm->out);
	uint8_t *p =
	    moff == (size_t)-1 ? NULL : wbuf_room(&vm->out, BLOCKS_ULEB_MAX);
	if (p)
		vm->out.len = (size_t)(blocks_uleb_put(p, vm->id) - vm->out.p);
	size_t mstart = vm->out.len;
	for (uint32_t i = s->mapped; i != head; i++) {
		struct sample_entry *e = entry_at(s, i);
		int bad = !p;
		for (unsigned k = 0; k < e->nlua && !bad; k++) {
			uint64_t id =
			    flush_ref(vm, e->lua[k].kind, e->lua[k].key);
			bad |= !id;
			e->lua[k].key = (uintptr_t)id;
		}
		if (e->trace && !bad) {
			uint64_t id = flush_trace_ref(vm, e->trace, e->traceno);
			bad |= !id;
			e->trace = (uintptr_t)id;
		}
		if (bad)
			e->nlua = 0, e->trace = 0;
	}
	s->mapped = head;
	if (p && vm->out.len > mstart) {
		writer_block_end(&vm->out, moff, FORMAT_KIND_MAPPING);
		writer_lock();
		if (writer_is_open())
			writer_write(&vm->out, 1, 0);
		writer_unlock();
	}
}

/* Caller holds hostlock. Drain vm's signal buffer into blocks. */
static void drain(struct logger_vm *vm)
{
	struct sample_vm *s = &vm->s;
	uint32_t tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	uint64_t drop = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);

	/* 1. Lua keys to IDs (the VM thread may have done some already). */
	pthread_mutex_lock(&s->maplock);
	map_pending(vm);
	uint32_t head = s->mapped, n = head - tail;
	pthread_mutex_unlock(&s->maplock);
	if (n == 0 && drop == s->dropped_done)
		return;
	int bad = 0;

	/* 2. Host stacks, symbols and the SAMPLES block: no VM object read. */
	struct wbuf *b = &s->out;
	b->len = 0;
	uint8_t *q;
	size_t hoff = writer_block_begin(b);
	if (bad || hoff == (size_t)-1 || !(q = wbuf_room(b, BLOCKS_ULEB_MAX)))
		goto done;
	b->len = (size_t)(blocks_uleb_put(q, vm->id) - b->p);
	size_t hstart = b->len;
	/* HOSTSYM records go first (a MAPPING block), samples are encoded
	** into vm->enc meanwhile. */
	struct wbuf *sb = &s->enc;
	sb->len = 0;
	uint64_t base = s->t_prev, t = s->t_prev;
	for (uint32_t i = 0; i < n; i++) {
		struct sample_entry *e = entry_at(s, tail + i);
		uintptr_t ips[SAMPLE_HOST_MAX];
		uint64_t hid[SAMPLE_HOST_MAX];
		int nh = 0;
		if (s->host) {
			int k = unwind_ips(e->host, ips, SAMPLE_HOST_MAX);
			for (int j = 0; j < k; j++) {
				uint64_t id =
				    host_id(vm, b, j ? ips[j] - 1 : ips[j]);
				if (!id)
					break;
				/* consecutive interpreter frames are one */
				if (nh && id == hid[nh - 1] && id == s->vm_sym)
					continue;
				hid[nh++] = id;
			}
		}
		uint64_t ts = e->ts >> CLOCK_TS_SHIFT;
		if (i == 0) {
			base = ts < s->t_prev ? s->t_prev : ts;
			t = base;
		}
		uint64_t dt = ts > t ? ts - t : 0;
		t += dt;
		q = wbuf_room(sb, 4 * BLOCKS_ULEB_MAX +
				      (size_t)e->nlua * 2 * BLOCKS_ULEB_MAX +
				      (size_t)nh * BLOCKS_ULEB_MAX);
		if (!q)
			goto done;
		q = blocks_uleb_put(q, dt);
		*q++ = e->state;
		q = blocks_uleb_put(q, e->trace);
		q = blocks_uleb_put(q, e->nlua);
		for (unsigned k = 0; k < e->nlua; k++) {
			q = blocks_uleb_put(q, e->lua[k].key);
			q = blocks_uleb_put(q, e->lua[k].line);
		}
		q = blocks_uleb_put(q, (uint64_t)nh);
		for (int k = 0; k < nh; k++)
			q = blocks_uleb_put(q, hid[k]);
		sb->len = (size_t)(q - sb->p);
	}
	s->t_prev = t;
	/* HOSTSYM MAPPING block, if any, then the SAMPLES block. */
	unsigned nblocks = 1;
	if (b->len > hstart) {
		writer_block_end(b, hoff, FORMAT_KIND_MAPPING);
		nblocks++;
	} else {
		b->len = hoff;
	}
	size_t soff = writer_block_begin(b);
	q = soff == (size_t)-1 ? NULL
			       : wbuf_room(b, 10 * BLOCKS_ULEB_MAX + sb->len);
	if (!q)
		goto done;
	struct clock_pair c;
	clock_pair_now(&c);
	/* Signals taken = samples + drops, each counted by exactly one drain:
	** entries and drops after this drain started go to the next one. */
	uint64_t ddrop = drop - s->dropped_done, dsig = (uint64_t)n + ddrop;
	q = blocks_uleb_put(q, vm->id);
	q = blocks_uleb_put(q, n);
	q = blocks_uleb_put(q, base);
	q = blocks_uleb_put(q, c.counter);
	q = blocks_uleb_put(q, c.mono_ns);
	q = blocks_uleb_put(q, c.real_ns);
	q = blocks_uleb_put(q, (uint64_t)s->tid);
	q = blocks_uleb_put(q, dsig);
	q = blocks_uleb_put(q, ddrop);
	memcpy(q, sb->p, sb->len);
	b->len = (size_t)(q - b->p) + sb->len;
	writer_block_end(b, soff, FORMAT_KIND_SAMPLES);
	writer_lock();
	if (writer_is_open()) {
		writer_write(b, nblocks, 0);
		writer_count_dropped(ddrop);
	}
	writer_unlock();
	s->signals_done += dsig;
	s->dropped_done = drop;
done:
	__atomic_store_n(&s->tail, head, __ATOMIC_RELEASE);
}

/* -- The helper thread ----------------------------------------------------------- */

static void *helper_main(void *arg)
{
	sigset_t all;
	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all,
			NULL); /* never takes the timer signal */
	for (int idle = 0;;) {
		struct timespec ts = {0, SAMPLE_PERIOD_NS};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&smtx);
		/* Nothing sampled for a while: the thread goes (a later start
		** makes a new one). */
		if (!sampling && ++idle > 2) {
			helper_started = 0;
			pthread_mutex_unlock(&smtx);
			return NULL;
		}
		if (sampling)
			idle = 0;
		for (struct logger_vm *vm = sampling; vm; vm = vm->s.next) {
			pthread_mutex_lock(&vm->s.hostlock);
			drain(vm);
			pthread_mutex_unlock(&vm->s.hostlock);
		}
		/* Someone replaced our handler (jit.p, the program itself). */
		struct sigaction cur;
		if (sampling && sigaction(SIGPROF, NULL, &cur) == 0 &&
		    cur.sa_sigaction != on_sigprof &&
		    !__atomic_exchange_n(&clash_said, 1, __ATOMIC_RELAXED))
			fprintf(stderr,
				"ljlog: sample: another SIGPROF handler "
				"replaced ljlog's (jit.p or the "
				"program's own): samples stop\n");
		pthread_mutex_unlock(&smtx);
	}
	return NULL;
}

/* -- Start, stop ------------------------------------------------------------------ */

/* In a forked child: no helper thread, no timers, and the parent's threads
** may have held these locks. The child does not sample (nor write). */
static void at_fork_child(void)
{
	pthread_mutex_init(&smtx, NULL);
	for (struct logger_vm *vm = sampling; vm; vm = vm->s.next) {
		pthread_mutex_init(&vm->s.hostlock, NULL);
		pthread_mutex_init(&vm->s.maplock, NULL);
		__atomic_store_n(&slots[vm->s.slot], NULL, __ATOMIC_RELAXED);
		vm->s.on = 0;
	}
	sampling = NULL;
	helper_started = 0;
}

/* Caller holds smtx. Install the handler once; refuse to take SIGPROF from
** a program that handles it itself. */
static int handler_install(char *err, size_t errlen)
{
	struct sigaction sa, old;
	if (handler_set)
		return 0;
	if (sigaction(SIGPROF, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
	    old.sa_handler != SIG_IGN) {
		snprintf(err, errlen,
			 "sample: the program handles SIGPROF itself (jit.p, "
			 "a profiler, its own timer): ljlog's timer signal "
			 "would clash with it; not sampling");
		return -EBUSY;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) < 0) {
		int e = errno;
		snprintf(err, errlen, "sample: sigaction: %s", strerror(e));
		return -e;
	}
	handler_set = 1; /* kept for good: a late signal must find it */
	return 0;
}

/* LuaJIT's interpreter code: the unwind info's procedure around a
** bytecode handler (one FDE covers the whole VM), else the dispatch
** table's range. */
static void vm_range(struct logger_vm *vm)
{
	ASMFunction *d = G2GG(vm->g)->dispatch;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	unw_proc_info_t pi;
	for (unsigned i = 0; i < GG_LEN_DDISP; i++) {
		uintptr_t a = (uintptr_t)
		    d[GG_LEN_DDISP + i < GG_LEN_DISP ? GG_LEN_DDISP + i : i];
		if (a && a < lo)
			lo = a;
		if (a > hi)
			hi = a;
	}
	vm->s.vm_lo = lo;
	vm->s.vm_hi = hi + 4096;
	if (unw_get_proc_info_by_ip(unw_local_addr_space,
				    (unw_word_t)d[GG_LEN_DDISP + BC_ADDVV], &pi,
				    NULL) == 0 &&
	    pi.start_ip < pi.end_ip) {
		vm->s.vm_lo = pi.start_ip;
		vm->s.vm_hi = pi.end_ip;
	}
}

/* VM thread only. Start sampling vm. */
int sample_start(struct logger_vm *vm, uint64_t interval_ns, int host, int wall,
		 char *err, size_t errlen)
{
	struct sample_vm *s = &vm->s;
	int r, slot = -1;
	memset(s, 0, sizeof *s);
	s->slot = -1;
	s->host = host;
	s->tid = tid_now();
	s->cap = SAMPLE_RING;
	/* The host copy is cut to SAMPLE_STACK bytes of the unwind_ctx. */
	s->entry_size =
	    sizeof(struct sample_entry) +
	    (host ? sizeof(struct unwind_ctx) - UNWIND_STACK_MAX + SAMPLE_STACK
		  : 0);
	s->entry_size = (s->entry_size + 63) & ~(size_t)63;
	if (unwind_stack_bounds(&s->stack_lo, &s->stack_hi) < 0) {
		snprintf(err, errlen,
			 "sample: cannot find this thread's stack");
		return -EINVAL;
	}
	if (!(s->ring = calloc(s->cap, s->entry_size)) ||
	    maps_init(&s->hostmap) < 0 || unwind_syms_new(&s->syms) < 0) {
		snprintf(err, errlen,
			 "sample: out of memory for the signal buffer");
		r = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&s->hostlock, NULL);
	pthread_mutex_init(&s->maplock, NULL);

	pthread_mutex_lock(&smtx);
	vm_range(vm); /* libunwind's first use initialises it: one at a time */
	if ((r = handler_install(err, errlen)) < 0) {
		pthread_mutex_unlock(&smtx);
		goto fail;
	}
	for (int i = 0; i < SAMPLE_SLOTS && slot < 0; i++)
		if (!__atomic_load_n(&slots[i], __ATOMIC_RELAXED))
			slot = i;
	if (slot < 0) {
		pthread_mutex_unlock(&smtx);
		snprintf(err, errlen,
			 "sample: more than %d VMs sampled at once",
			 SAMPLE_SLOTS);
		r = -EMFILE;
		goto fail;
	}
	static int atfork_set;
	if (!atfork_set)
		atfork_set = pthread_atfork(NULL, NULL, at_fork_child) == 0;
	if (!helper_started) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if ((r = pthread_create(&t, &a, helper_main, NULL)) != 0) {
			pthread_attr_destroy(&a);
			pthread_mutex_unlock(&smtx);
			snprintf(err, errlen, "sample: helper thread: %s",
				 strerror(r));
			r = -r;
			goto fail;
		}
		pthread_attr_destroy(&a);
		helper_started = 1;
	}
	s->slot = slot;
	s->on = 1;
	__atomic_store_n(&slots[slot], vm, __ATOMIC_RELEASE);
	s->next = sampling;
	sampling = vm;
	pthread_mutex_unlock(&smtx);

	/* A timer on this thread's CPU time, signalling this thread. */
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev._sigev_un._tid = s->tid;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_int = slot;
	struct itimerspec it;
	it.it_interval.tv_sec = (time_t)(interval_ns / 1000000000u);
	it.it_interval.tv_nsec = (long)(interval_ns % 1000000000u);
	it.it_value = it.it_interval;
	if (timer_create(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &sev,
			 &s->timer) < 0 ||
	    timer_settime(s->timer, 0, &it, NULL) < 0) {
		r = -errno;
		snprintf(err, errlen, "sample: timer: %s", strerror(-r));
		sample_stop(vm);
		return r;
	}
	return 0;
fail:
	free(s->ring);
	s->ring = NULL;
	maps_free(&s->hostmap);
	if (s->syms)
		unwind_syms_free(s->syms);
	s->syms = NULL;
	s->on = 0;
	return r;
}

/* VM thread only. Stop sampling vm and drain what is left. */
void sample_stop(struct logger_vm *vm)
{
	struct sample_vm *s = &vm->s;
	if (!s->on)
		return;
	timer_delete(s->timer);
	pthread_mutex_lock(&smtx);
	__atomic_store_n(&slots[s->slot], NULL, __ATOMIC_RELEASE);
	for (struct logger_vm **pp = &sampling; *pp; pp = &(*pp)->s.next) {
		if (*pp == vm) {
			*pp = vm->s.next;
			break;
		}
	}
	pthread_mutex_unlock(&smtx);
	pthread_mutex_lock(&s->hostlock);
	drain(vm);
	pthread_mutex_unlock(&s->hostlock);
	s->on = 0;
	free(s->ring);
	s->ring = NULL;
	maps_free(&s->hostmap);
	unwind_syms_free(s->syms);
	s->syms = NULL;
	wbuf_free(&s->out);
	wbuf_free(&s->enc);
	pthread_mutex_destroy(&s->hostlock);
	pthread_mutex_destroy(&s->maplock);
}

/* VM thread only. Map the signal buffer's pending samples now (before a
** sweep): their objects may be freed next. Unwinding and writing them is
** left to the helper thread. */
void sample_drain_now(struct logger_vm *vm)
{
	if (!vm->s.on)
		return;
	pthread_mutex_lock(&vm->s.maplock);
	map_pending(vm);
	pthread_mutex_unlock(&vm->s.maplock);
}

/* VM thread only (exit). Map and write everything pending now. */
void sample_flush_now(struct logger_vm *vm)
{
	if (!vm->s.on)
		return;
	pthread_mutex_lock(&vm->s.hostlock);
	drain(vm);
	pthread_mutex_unlock(&vm->s.hostlock);
}

/* VM thread only. Lock vm->map against the drainer. */
void sample_map_lock(struct logger_vm *vm)
{
	if (vm->s.on)
		pthread_mutex_lock(&vm->s.maplock);
}

/* VM thread only. Unlock vm->map. */
void sample_map_unlock(struct logger_vm *vm)
{
	if (vm->s.on)
		pthread_mutex_unlock(&vm->s.maplock);
}
