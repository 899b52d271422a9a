/*
** Unit tests: src/logger/jitpatch.c. Machine code is built here byte by
** byte in the forms LuaJIT's asm_prof and emit_rma write, next to near
** misses that must stay; the NOPs are checked against the multi-byte NOP
** forms Intel recommends (SDM vol. 2B, NOP, "Recommended Multi-Byte
** Sequence of NOP Instruction"), which LuaJIT's length decoder reads.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "logger/jitpatch.h"

#define SPACING	  4
#define PER_GROUP 32

static uint8_t code[512];
static uint8_t stubs_mem[2][SPACING * PER_GROUP];
static uintptr_t stubs[3];
static struct jitpatch_where w;
static size_t at; /* next free byte of code */

/* A GC64 VM: hookmask 0xeef below DISPATCH, as in Debian's LuaJIT. */
static void setup(void)
{
	memset(code, 0xcc, sizeof code); /* int3: never part of a check */
	at = 0;
	stubs[0] = (uintptr_t)stubs_mem[0];
	stubs[1] = 0; /* a group not made yet */
	stubs[2] = (uintptr_t)stubs_mem[1];
	w.dispatch = 0x7f0000100000u;
	w.hookmask = w.dispatch - 0xeef;
	w.stubs = stubs;
	w.nstubs = 3;
	w.spacing = SPACING;
	w.per_group = PER_GROUP;
}

static void put(const void *b, size_t n)
{
	memcpy(code + at, b, n);
	at += n;
}

static void put32(int32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			(uint8_t)(v >> 24)};
	put(b, 4);
}

/* jnz rel32 to address to, written at code[at]. */
static void jnz_to(uintptr_t to)
{
	static const uint8_t op[2] = {0x0f, 0x85};
	uintptr_t end = (uintptr_t)code + at + 6;
	put(op, 2);
	put32((int32_t)(intptr_t)(to - end));
}

/* test byte [r14 + disp32], imm8 (GC64 asm_prof). */
static void test_disp32(int32_t disp, uint8_t imm)
{
	static const uint8_t op[3] = {0x41, 0xf6, 0x86};
	put(op, 3);
	put32(disp);
	put(&imm, 1);
}

/* Exit stub n of group (an index of stubs). */
static uintptr_t stub(int group, int n)
{
	return stubs[group] + (uintptr_t)(SPACING * n);
}

static size_t find(uint32_t *f, size_t max)
{
	return jitpatch_find(code, at, (uintptr_t)code, &w, f, max);
}

TestSuite(jitpatch, .init = setup);

Test(jitpatch, finds_each_form_of_the_check)
{
	uint32_t f[8];
	int32_t d = (int32_t)(w.hookmask - w.dispatch);
	size_t a = at; /* GC64, disp32: 14 bytes */
	test_disp32(d, HOOK_PROFILE);
	jnz_to(stub(0, 3));
	at += 5;       /* other code */
	size_t b = at; /* GC64, disp8: 11 bytes, a VM whose hookmask is near */
	w.dispatch = w.hookmask + 0x40;
	uint8_t t8[5] = {0x41, 0xf6, 0x46, (uint8_t)-0x40, HOOK_PROFILE};
	put(t8, 5);
	jnz_to(stub(2, 31));
	cr_assert_eq(find(f, 8), 1, "disp8 form alone (the other VM's)");
	cr_expect_eq(f[0], (uint32_t)b << 4 | 11);
	w.dispatch = w.hookmask + 0xeef;
	cr_assert_eq(find(f, 8), 1, "disp32 form alone");
	cr_expect_eq(f[0], (uint32_t)a << 4 | 14);

	/* Non-GC64: [abs32] (14 bytes), with hookmask in the low 2 GB. */
	setup();
	w.hookmask = 0x41a2b3c;
	size_t c = at;
	uint8_t abs[3] = {0xf6, 0x04, 0x25};
	put(abs, 3);
	put32((int32_t)w.hookmask);
	uint8_t imm = HOOK_PROFILE;
	put(&imm, 1);
	jnz_to(stub(0, 0));
	size_t r = at;
	uint8_t rip[2] = {0xf6, 0x05};
	put(rip, 2);
	put32(400 - (int32_t)(at + 5));
	put(&imm, 1);
	jnz_to(stub(0, 1));
	cr_assert_eq(find(f, 8), 1, "abs32 form alone");
	cr_expect_eq(f[0], (uint32_t)c << 4 | 14);
	/* ... or [rip + rel32] (13 bytes), hookmask near the code. */
	w.hookmask = (uintptr_t)code + 400;
	cr_assert_eq(find(f, 8), 1, "rip form alone");
	cr_expect_eq(f[0], (uint32_t)r << 4 | 13);
}

Test(jitpatch, leaves_near_misses_alone)
{
	uint32_t f[8];
	int32_t d = (int32_t)(w.hookmask - w.dispatch);
	test_disp32(d, 0x40); /* another hook bit */
	jnz_to(stub(0, 1));
	test_disp32(d + 8, HOOK_PROFILE); /* another field */
	jnz_to(stub(0, 1));
	test_disp32(d, HOOK_PROFILE); /* jumps into code, not to a stub */
	jnz_to((uintptr_t)code);
	test_disp32(d, HOOK_PROFILE); /* between two stubs */
	jnz_to(stub(0, 1) + 2);
	test_disp32(d, HOOK_PROFILE); /* past the last group */
	jnz_to(stub(2, PER_GROUP));
	test_disp32(d, HOOK_PROFILE); /* jz, not jnz */
	uint8_t jz[6] = {0x0f, 0x84, 0, 0, 0, 0};
	put(jz, 6);
	test_disp32(d, HOOK_PROFILE); /* short jnz (a loop inversion) */
	uint8_t js[2] = {0x75, 0x10};
	put(js, 2);
	test_disp32(d, HOOK_PROFILE); /* cut by the end of the trace */
	uint8_t cut[2] = {0x0f, 0x85};
	put(cut, 2);
	cr_expect_eq(find(f, 8), 0);
}

Test(jitpatch, counts_past_max_and_keeps_order)
{
	uint32_t f[2];
	int32_t d = (int32_t)(w.hookmask - w.dispatch);
	for (int i = 0; i < 5; i++) {
		test_disp32(d, HOOK_PROFILE);
		jnz_to(stub(2, i));
		at += (size_t)i; /* other code */
	}
	cr_assert_eq(find(f, 2), 5);
	cr_expect_eq(f[0], 0u << 4 | 14);
	cr_expect_eq(f[1], 14u << 4 | 14);
}

/* Intel's recommended NOPs, by length. */
static const uint8_t *sdm_nop(size_t n)
{
	static const uint8_t n5[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
	static const uint8_t n6[] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00};
	static const uint8_t n7[] = {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00};
	static const uint8_t n8[] = {0x0f, 0x1f, 0x84, 0x00,
				     0x00, 0x00, 0x00, 0x00};
	static const uint8_t n9[] = {0x66, 0x0f, 0x1f, 0x84, 0x00,
				     0x00, 0x00, 0x00, 0x00};
	switch (n) {
	case 5: return n5;
	case 6: return n6;
	case 7: return n7;
	case 8: return n8;
	case 9: return n9;
	default: return NULL;
	}
}

Test(jitpatch, nops_are_two_of_intels_recommended_forms)
{
	for (size_t n = JITPATCH_MIN; n <= JITPATCH_MAX; n++) {
		uint8_t buf[JITPATCH_MAX + 2];
		memset(buf, 0xcc, sizeof buf);
		jitpatch_nop(buf + 1, n);
		cr_expect_eq(buf[0], 0xcc, "n=%zu wrote before", n);
		cr_expect_eq(buf[n + 1], 0xcc, "n=%zu wrote past", n);
		/* The first NOP is n - 5 bytes, the second 5. */
		const uint8_t *a = sdm_nop(n - 5), *b = sdm_nop(5);
		cr_assert(a);
		cr_expect(memcmp(buf + 1, a, n - 5) == 0, "n=%zu: first NOP",
			  n);
		cr_expect(memcmp(buf + 1 + n - 5, b, 5) == 0,
			  "n=%zu: second NOP", n);
	}
}

Test(jitpatch, patching_changes_the_checks_only)
{
	uint32_t f[8];
	int32_t d = (int32_t)(w.hookmask - w.dispatch);
	uint8_t before[sizeof code];
	at = 3;
	test_disp32(d, HOOK_PROFILE);
	jnz_to(stub(0, 7));
	at += 9;
	test_disp32(d, HOOK_PROFILE);
	jnz_to(stub(2, 2));
	at += 1;
	memcpy(before, code, sizeof code);
	size_t n = find(f, 8);
	cr_assert_eq(n, 2);
	for (size_t k = 0; k < n; k++)
		jitpatch_nop(code + (f[k] >> 4), f[k] & 15);
	cr_expect_eq(find(f, 8), 0, "no check left");
	for (size_t i = 0; i < sizeof code; i++) {
		int in_check = (i >= 3 && i < 17) || (i >= 26 && i < 40);
		if (!in_check)
			cr_expect_eq(code[i], before[i], "byte %zu changed", i);
	}
}
