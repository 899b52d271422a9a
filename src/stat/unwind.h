/*
** ljlog unwind: host (C) stacks captured in a signal handler and unwound
** later, with libunwind, by a helper thread; symbols for their addresses.
*/
#ifndef LJLOG_STAT_UNWIND_H
#define LJLOG_STAT_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of stack a capture holds at most. */
#define UNWIND_STACK_MAX (16u << 10)

/* Captured registers, in libunwind's numbering for the machine (its
** DWARF numbering on x86-64; UNW_AARCH64_X0..X30, SP, PC on arm64);
** UNWIND_REG_SP and UNWIND_REG_IP name the stack pointer and the
** interrupted instruction's address on both. */
#if defined(__aarch64__)
enum {
	UNWIND_REG_X29 = 29, /* the frame pointer */
	UNWIND_REG_X30 = 30, /* the link register */
	UNWIND_REG_SP = 31,
	UNWIND_REG_IP = 32,
	UNWIND_NREGS
};
#else
enum {
	UNWIND_REG_RAX,
	UNWIND_REG_RDX,
	UNWIND_REG_RCX,
	UNWIND_REG_RBX,
	UNWIND_REG_RSI,
	UNWIND_REG_RDI,
	UNWIND_REG_RBP,
	UNWIND_REG_RSP,
	UNWIND_REG_R8,
	UNWIND_REG_R9,
	UNWIND_REG_R10,
	UNWIND_REG_R11,
	UNWIND_REG_R12,
	UNWIND_REG_R13,
	UNWIND_REG_R14,
	UNWIND_REG_R15,
	UNWIND_REG_RIP,
	UNWIND_NREGS,
	UNWIND_REG_SP = UNWIND_REG_RSP,
	UNWIND_REG_IP = UNWIND_REG_RIP
};
#endif

/* A thread's registers and the top of its stack, as a signal found them. */
struct unwind_ctx {
	uint64_t regs[UNWIND_NREGS]; /* general registers, UNWIND_REG_* */
	uintptr_t sp;		     /* stack pointer at the interruption */
	uint32_t len;		     /* bytes of stack copied from sp */
	_Alignas(16) uint8_t stack[UNWIND_STACK_MAX]; /* [sp, sp + len) */
};

/* A symbol for an instruction address. */
struct unwind_sym {
	uintptr_t start;    /* start of the function; 0 when unknown */
	uintptr_t base;	    /* where the object is mapped (dli_fbase) */
	const char *name;   /* the function's name; "" when unknown */
	const char *object; /* path of the object holding the address */
};

struct unwind_syms; /* symbol cache, opaque */

/* Any thread, outside signal context (once per thread). The calling thread's
** stack, [*lo, *hi), via pthread_getattr_np. 0 or -errno. */
int unwind_stack_bounds(uintptr_t *lo, uintptr_t *hi);

/* Async-signal-safe. Fill c from a signal handler's ucontext: registers, and
** min(max_bytes, UNWIND_STACK_MAX, hi - sp) bytes of stack from sp. Copies
** nothing when sp is outside the interrupted thread's stack [lo, hi) (for
** example on an alternate signal stack). No lock, no allocation, errno kept. */
void unwind_capture(struct unwind_ctx *c, const void *ucontext, uintptr_t lo,
		    uintptr_t hi, size_t max_bytes);

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). Unwind a capture: instruction addresses innermost first,
** ips[0] the interrupted one (exact), the others return addresses. At most
** max. The walk stops when unwinding fails or has no unwind information, when
** it needs stack outside the copy, or after an address in no loaded object's
** code (JIT-compiled machine code, garbage): that address is the last one
** returned, so a sample taken in JIT code yields 1. The count, >= 0. Safe on
** any content of c. */
int unwind_ips(const struct unwind_ctx *c, uintptr_t *ips, int max);

/* Sampler start (VM thread; no drainer yet). A new symbol cache. 0 or
** -ENOMEM. */
int unwind_syms_new(struct unwind_syms **s);

/* Sampler stop (any thread; no drainer any more). Free a symbol cache
** and every string it handed out. */
void unwind_syms_free(struct unwind_syms *s);

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). The function holding ip (pass a return address minus 1),
** cached. Strings stay valid until unwind_syms_free. Names come from dynamic
** symbols only, checked against their size: an address outside any of them
** (a stripped executable's internal function) gets name "" and start 0, and
** the caller shows object + (ip - base). 0 or -ENOENT (ip in no object). */
int unwind_symbolize(struct unwind_syms *s, uintptr_t ip,
		     struct unwind_sym *out);

#endif
