/*
** ljlog sampling internals shared by its three files (see sample.h): the
** ring entry, the handler table, the drainer's entry points.
*/
#ifndef LJLOG_STAT_SAMPLE_INT_H
#define LJLOG_STAT_SAMPLE_INT_H

#include "stat/sample.h"

#define SAMPLE_SLOTS	256 /* VMs sampled at once */
#define SAMPLE_LUA_MAX	96  /* Lua frames kept per sample */
#define SAMPLE_HOST_MAX 96  /* host frames kept per sample */
#define SAMPLE_RING	128 /* entries per VM, at least */
/* A wall-clock timer faster than SAMPLE_RING_NS / SAMPLE_RING gets a ring
** of SAMPLE_RING_NS of its samples (up to SAMPLE_RING_MAX entries): the
** helper that drains it may wait that long for a core on a busy machine
** (CPU-time timers fire at most once a kernel tick: 128 hold 0.5 s). */
#define SAMPLE_RING_NS	100000000u
#define SAMPLE_RING_MAX 1024
#define SAMPLE_STACK	(8u << 10) /* bytes of host stack copied per sample */
/* The helper wakes when a VM's ring may hold SAMPLE_BATCH entries at the
** signal rate seen since its last look, but after SAMPLE_WAKE_FEW to
** SAMPLE_WAKE_MANY intervals of the fastest VM (a timer fires at most once
** an interval, so the ring is then at most half full), and within these
** bounds. Each wake-up costs a context switch, about 60 us of the helper's
** CPU on this project's VMs: a CPU-time timer at 1 ms fires at the kernel's
** tick (every 4 ms at 250 Hz), and waking every 16 intervals for its few
** samples cost 1.2% of spectral-norm. */
#define SAMPLE_WAKE_FEW	   (SAMPLE_RING / 8)
#define SAMPLE_WAKE_MANY   (SAMPLE_RING / 2)
#define SAMPLE_WAKE_MIN_NS 1000000
#define SAMPLE_WAKE_MAX_NS 50000000
#define SAMPLE_BATCH	   (SAMPLE_RING / 4) /* entries worth a drain */
#define SAMPLE_BATCH_NS	   100000000 /* else drain at least this often */

/* One Lua frame as read in the handler: a raw key, mapped later. Before
** its entry is mapped (sample_map_locked) key holds it, after, id: its
** ID. The two share their room (a ring holds SAMPLE_RING * SAMPLE_LUA_MAX
** frames); each is read only on its side of s->mapped. */
struct sample_frame {
	union {
		uintptr_t key; /* GCproto*, lua_CFunction or ffid
				** (| MAPPER_FF_ASM); entry not mapped */
		uint64_t id;   /* its ID (0: none); entry mapped */
	};
	uint32_t line; /* line being executed (PROTO), else 0 */
	uint8_t kind;  /* mapper_key */
};

/* One ring entry; the host stack copy follows when host stacks are on. */
struct sample_entry {
	uint64_t ts;	   /* counter */
	uintptr_t trace;   /* GCtrace* (in a trace), else 0 */
	uint64_t trace_id; /* once mapped: trace's ID, else 0 */
	uint16_t nlua;
	uint8_t state;	  /* FORMAT_STATE_* */
	uint32_t missed;  /* timer intervals merged into this signal */
	uint32_t traceno; /* number of the trace when sampled */
	uint32_t mc_len;  /* state TRACE, once mapped: its machine code's */
	uintptr_t mc_lo;  /* start and length (0: unknown) */
	uintptr_t pc;	  /* state TRACE: the interrupted instruction */
	uintptr_t at;	  /* in a trace: where its code is (pc, or the return
			  ** address into it of the C code it called, minus
			  ** 1); 0 unknown */
	uintptr_t chk;	  /* in a trace: the profile check its code stops at
			  ** next, its code's end when it leaves first, 0
			  ** unknown (sample_next_check) */
	struct sample_frame lua[SAMPLE_LUA_MAX];
	struct unwind_ctx host[]; /* 0 or 1 */
};

/* The handler's table: slot -> VM (atomic), and the handlers inside each
** slot right now (atomic; sample.h, "The ring's lifetime"). */
extern struct sample_vm *sample_slots[SAMPLE_SLOTS];
extern uint32_t sample_inflight[SAMPLE_SLOTS];

/* Async-signal-safe. The ring entry at index i. */
static inline struct sample_entry *sample_entry_at(struct sample_vm *s,
						   uint32_t i)
{
	return (struct sample_entry *)(s->ring + (size_t)(i & (s->cap - 1)) *
						     s->entry_size);
}

/* Async-signal-safe (sample_signal.c). Fill entry e for s's VM from the
** VM and the interrupted context ucontext (a ucontext_t *): what the
** handler does with one sample; any register value is tolerated. */
void sample_capture(struct sample_vm *s, struct sample_entry *e,
		    const void *ucontext);

/* VM thread (start; sample_signal.c). Where a profile check finds g's hook
** mask, into *disp: its distance from g's dispatch table (x64) or from g
** (arm64); -ENOTSUP where ljlog cannot tell checks. */
int sample_hook_disp(global_State *g, int32_t *disp);

/* Async-signal-safe (sample_signal.c); the trace T's code is valid (its
** VM is interrupted in it, or in code it called). The profile check (IR
** PROF: the test of the hook mask disp away from the dispatch table that
** LuaJIT compiles where its profiler stops compiled code) that T's code,
** at address x, meets next: on from x, then from its loop's start when it
** goes round; T's code end when it leaves T first (it then checks at once
** in the interpreter or the next trace); 0 when T has no check. */
uintptr_t sample_next_check(const GCtrace *T, int32_t disp, uintptr_t x);

/* Async-signal-safe (sample_signal.c). The SIGPROF handler. */
void sample_on_signal(int sig, siginfo_t *si, void *ucv);

/* Caller holds s->map's lock (sample_helper.c). Map the Lua keys of the
** entries not mapped yet and write their MAPPING block. */
void sample_map_locked(struct sample_vm *s);

/* Caller holds s->hostlock (sample_helper.c). Drain s's ring into blocks. */
void sample_drain(struct sample_vm *s);

/* Helper thread, caller holds smtx (sample.c). In how many ns to look at
** s again, now being monotonic ns: see SAMPLE_WAKE_FEW. */
uint64_t sample_wake_after(struct sample_vm *s, uint64_t now);

/* Helper thread (sample.c). Pin up to max sampled VMs into vms (stop waits
** for their pins); their count, or -1 when the helper should leave (nothing
** sampled for a while; it is marked gone then). *wake_ns: when to look
** again (see SAMPLE_WAKE_MIN_NS). */
int sample_pin_all(struct sample_vm **vms, int max, uint64_t *wake_ns);

/* Helper thread (sample.c). Unpin what sample_pin_all pinned; say once when
** another SIGPROF handler replaced ljlog's. */
void sample_unpin_all(struct sample_vm **vms, int n);

/* Helper thread (sample_helper.c). Drain every sampled VM now and then;
** leaves when nothing is sampled for a while. */
void *sample_helper_main(void *arg);

/* Any thread. Entries of the ring of a VM sampled every interval_ns, on
** the wall clock (wall 1) or its thread's CPU time: a power of two. */
static inline uint32_t sample_ring_cap(uint64_t interval_ns, int wall)
{
	uint32_t cap = SAMPLE_RING;
	while (wall && cap < SAMPLE_RING_MAX &&
	       (uint64_t)cap * interval_ns < SAMPLE_RING_NS)
		cap *= 2;
	return cap;
}

#endif
