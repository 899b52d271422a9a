/*
** ljlog trace exits: the Lua frames a trace's machine code stands for
** (see texit.h). x64 GC64 only (two-slot frames), like the sampler.
*/
#include "maps/texit.h"

#include "lj_target.h"

#include <string.h>

#if !LJ_FR2
#error "ljlog reads LuaJIT's GC64 snapshot layout (LJ_FR2): x64 GC64 only"
#endif

/* Caller keeps pt alive. 1 when pc lies in pt's bytecode. */
static int in_proto(GCproto *pt, const BCIns *pc)
{
	const BCIns *bc = proto_bc(pt);
	return pc >= bc && pc < bc + pt->sizebc;
}

/* Caller keeps the prototype holding pc alive, if pc is in one. That
** prototype, found from pc alone: a prototype's bytecode follows its
** GCproto header (lj_obj.h, proto_bc) and opens with its function header
** (FUNCF to JFUNCV), an opcode that no other instruction has, so it is the
** first one found walking back from pc. A frame of a C or fast function (a
** trace that stitches around one resumes there) is at a pseudo-instruction
** in LuaJIT's global state instead, with an opcode above those (FUNCC,
** FUNCCW, the fast functions': lj_dispatch.c): walking back from it would
** leave the mapping, so it is refused first. NULL when pc is not in a
** prototype. */
static GCproto *proto_by_header(const BCIns *pc)
{
	if (bc_op(*pc) > BC_JFUNCV)
		return NULL;
	const BCIns *p = pc;
	for (uint32_t n = 0; n < LJ_MAX_BCINS; n++, p--) {
		BCOp op = bc_op(*p);
		if (op < BC_FUNCF || op > BC_JFUNCV)
			continue;
		uintptr_t at = (uintptr_t)p - sizeof(GCproto);
		if (at % _Alignof(GCproto))
			return NULL; /* a header follows a GCproto, aligned */
		GCproto *pt = (GCproto *)at;
		return pt->gct == ~LJ_TPROTO && proto_bc(pt) == p &&
			       in_proto(pt, pc)
			   ? pt
			   : NULL;
	}
	return NULL;
}

/* Caller keeps T alive. The prototype whose bytecode holds pc: the one the
** trace starts in, or a function or prototype it holds as a constant (every
** Lua function a trace inlines is one: lj_record.c, rec_call_specialize);
** else found from pc (proto_by_header). A side trace's outer frames are
** functions that its root or another trace of the root inlined, not it:
** without the last, such a frame was dropped and the stack lost it.
** Those traces keep them alive while the side trace lives. */
static GCproto *proto_of_pc(GCtrace *T, const BCIns *pc)
{
	GCobj *s = gcref(T->startpt);
	if (s && in_proto(gco2pt(s), pc))
		return gco2pt(s);
	for (IRRef ref = T->nk; ref < REF_TRUE; ref++) {
		IRIns *ir = &T->ir[ref];
		if (ir->o == IR_KGC) {
			GCobj *o = ir_kgc(ir);
			GCproto *pt = NULL;
			if (o->gch.gct == ~LJ_TFUNC && isluafunc(&o->fn))
				pt = funcproto(&o->fn);
			else if (o->gch.gct == ~LJ_TPROTO)
				pt = gco2pt(o);
			if (pt && in_proto(pt, pc))
				return pt;
		}
		if (irt_is64(ir->t) && ir->o != IR_KNULL)
			ref++; /* a 64-bit constant takes two slots */
	}
	return proto_by_header(pc);
}

/* Caller keeps T alive. The PCs of snapshot i into pcs (room for
** TEXIT_MAX_FRAMES + 1), outermost first; their count. In GC64 mode a
** snapshot's entries run in slot order; an inlined frame's link slot is a
** SNAP_FRAME entry whose 64-bit constant is the frame link LuaJIT would
** restore: for a Lua frame, the return PC into its caller (lj_snap.c,
** snapshot_slots). The PC to resume at follows the entries. So the PCs in
** slot order, then the resume PC, are one PC per frame, outermost first: a
** return PC stands one past the call being executed. */
static int snap_pcs(const GCtrace *T, SnapNo i, const BCIns **pcs)
{
	int npc = 0;
	const SnapShot *snap = &T->snap[i];
	const SnapEntry *map = &T->snapmap[snap->mapofs];
	for (MSize k = 0; k < snap->nent; k++) {
		SnapEntry sn = map[k];
		IRRef ref = snap_ref(sn);
		if (!(sn & SNAP_FRAME) || snap_slot(sn) < 2 || ref < T->nk ||
		    ref >= REF_TRUE)
			continue;
		const IRIns *ir = &T->ir[ref];
		if (ir->o != IR_KNUM)
			continue;
		uint64_t link = ir_knum(ir)->u64;
		if ((link & FRAME_TYPE) != FRAME_LUA || !link)
			continue; /* a continuation or vararg frame */
		if (npc == TEXIT_MAX_FRAMES) /* keep the innermost */
			memmove(pcs, pcs + 1, --npc * sizeof pcs[0]);
		pcs[npc++] = (const BCIns *)(uintptr_t)link;
	}
	pcs[npc++] = snap_pc((SnapEntry *)&map[snap->nent]);
	return npc;
}

/* Caller keeps T alive. Frames of snapshot i (see texit.h). */
int texit_frames(GCtrace *T, SnapNo i, struct texit_frame *out, int max)
{
	const BCIns *pcs[TEXIT_MAX_FRAMES + 1];
	int n = 0;
	if (i >= T->nsnap || max <= 0)
		return 0;
	int npc = snap_pcs(T, i, pcs);
	for (int k = npc > max ? npc - max : 0; k < npc; k++) {
		GCproto *pt = proto_of_pc(T, pcs[k]);
		if (!pt)
			continue;
		BCPos pos = (BCPos)(pcs[k] - proto_bc(pt));
		if (k < npc - 1 && pos > 0)
			pos--; /* the call, not the return PC */
		else if (k == npc - 1 && pos == 0 && pt->sizebc > 1)
			pos = 1; /* the body: the header compiles to nothing */
		out[n].pt = pt;
		out[n].line = ljwin_proto_line(pt, pos);
		n++;
	}
	return n;
}

/* Bytecodes read for one snapshot's code, at most (a longer stretch: the
** line is not told). */
#define SPAN_MAX 4096

/* Any context. The classes of what bytecode op may allocate as compiled
** code runs it, as bits (1 << TEXIT_*), 0 for none: a new table
** (TEXIT_TABLE), a store that may add a key (TEXIT_NEWKEY), a call of a
** builtin, which may do either (table.new, table.insert), and anything
** that may allocate (TEXIT_ANY: those, a string, a closure). Arithmetic on
** a cdata boxes its result too, which only the operands' types tell: not
** here. */
static unsigned op_allocates(BCOp op)
{
	switch (op) {
	case BC_TNEW:
	case BC_TDUP: return 1u << TEXIT_ANY | 1u << TEXIT_TABLE;
	case BC_TSETV:
	case BC_TSETS:
	case BC_TSETB:
	case BC_TSETM:
	case BC_TSETR:
	case BC_GSET: return 1u << TEXIT_ANY | 1u << TEXIT_NEWKEY;
	case BC_CALL:
	case BC_CALLM:
	case BC_CALLT:
	case BC_CALLMT:
	case BC_ITERC:
		return 1u << TEXIT_ANY | 1u << TEXIT_TABLE | 1u << TEXIT_NEWKEY;
	case BC_CAT:
	case BC_FNEW: return 1u << TEXIT_ANY;
	default: return 0;
	}
}

/* Any context. Whether bytecode ins ends a straight stretch in its
** function: a loop's back edge, a jump back. A while or repeat loop's
** LOOP (and ILOOP, JLOOP) is at its head: the body follows it. */
static int ins_ends(BCIns ins)
{
	switch (bc_op(ins)) {
	case BC_FORL:
	case BC_IFORL:
	case BC_JFORL:
	case BC_ITERL:
	case BC_IITERL:
	case BC_JITERL: return 1;
	case BC_JMP: return bc_j(ins) < 0;
	default: return 0;
	}
}

/* Caller keeps T alive. Where snapshot i's code ends in function pt, the
** one of its frames number d (from 1, outermost first), from pc on: the
** PC of the next snapshot when it is further on in that frame (or, with
** empty, there: the code returned to pc and went on to the next
** snapshot), or of the call into the next snapshot's function (a Lua
** call: it allocates nothing itself); NULL when that can't be told. */
static const BCIns *span_end(const GCtrace *T, SnapNo i, GCproto *pt,
			     const BCIns *pc, int d, int empty)
{
	const BCIns *next[TEXIT_MAX_FRAMES + 1];
	if (i + 1u >= T->nsnap || d > TEXIT_MAX_FRAMES - 1)
		return NULL;
	int nn = snap_pcs(T, (SnapNo)(i + 1), next);
	if (nn == d && in_proto(pt, next[d - 1]) &&
	    (next[d - 1] > pc || (empty && next[d - 1] == pc)))
		return next[d - 1];
	if (nn == d + 1 && in_proto(pt, next[d - 1]) && next[d - 1] - 1 >= pc)
		return next[d - 1] - 1;
	return NULL;
}

/* Any context. Whether op returns from its function. */
static int op_returns(BCOp op)
{
	return op == BC_RET || op == BC_RET0 || op == BC_RET1 || op == BC_RETM;
}

/* Lines seen in a stretch of bytecode: of those that may allocate, by
** class (TEXIT_*), and of all. */
struct lines_seen {
	uint32_t aline[TEXIT_CLASSES], anyline;
	int amany[TEXIT_CLASSES], anymany;
};

/* Caller keeps pt alive. Note in ls the lines of pt's bytecode from pc on,
** up to end (excluded) or, when end is NULL, to the first jump back
** (included). 0 at end; 1 at a return or a tail call (when end is NULL:
** it is in *at, not noted); -1 when the stretch is too long. */
static int scan_span(GCproto *pt, const BCIns *pc, const BCIns *end,
		     struct lines_seen *ls, const BCIns **at)
{
	const BCIns *last = proto_bc(pt) + pt->sizebc;
	BCPos pos = (BCPos)(pc - proto_bc(pt));
	if (pos == 0)
		pos = 1, pc++; /* the header compiles to nothing */
	for (unsigned n = 0; pc < (end ? end : last); pc++, pos++, n++) {
		if (n == SPAN_MAX)
			return -1;
		BCOp op = bc_op(*pc);
		uint32_t line = ljwin_proto_line(pt, pos);
		if (!end &&
		    (op_returns(op) || op == BC_CALLT || op == BC_CALLMT)) {
			*at = pc;
			return 1;
		}
		unsigned cl = op_allocates(op);
		for (int c = 0; c < TEXIT_CLASSES; c++) {
			if (!(cl >> c & 1))
				continue;
			ls->amany[c] |= ls->aline[c] && ls->aline[c] != line;
			ls->aline[c] = line;
		}
		ls->anymany |= ls->anyline && ls->anyline != line;
		ls->anyline = line;
		if (!end && ins_ends(*pc))
			break;
	}
	return 0;
}

/* Caller keeps T alive. See texit.h. The stretch of bytecode a
** snapshot's code compiles is the PCs from its own on, in its innermost
** function: LuaJIT adds a snapshot before an instruction that follows a
** store or a call with side effects (lj_record.c, lj_record_ins), and
** merges a snapshot no guard used with the next one (lj_snap.c,
** lj_snap_add), so the IR up to the next snapshot is of the instructions
** up to the next one's PC. A forward jump in the stretch may skip some of
** it: the stretch is the PCs between, a superset of the path. With the
** checks where the function changes (mode f, as with sample), LuaJIT adds
** the snapshot of a return at the return itself (rec_profile_ret) and
** none after it: the stretch is then the caller's, from its return PC on
** (unless the next snapshot is right there: then the return's line).
** Without them, a stretch that returns runs on in the caller up to the
** next snapshot: the callee's lines stand when the caller allocates
** nothing there. A side trace's first snapshot has none: its code
** remakes what the parent sank first (alloc.c charges those to the
** parent's constructor where it can tell). */
int texit_alloc_lines(GCtrace *T, SnapNo i, uint32_t *lines)
{
	const BCIns *pcs[TEXIT_MAX_FRAMES + 1], *at;
	struct lines_seen ls;
	int up = 0;
	memset(&ls, 0, sizeof ls);
	memset(lines, 0, TEXIT_CLASSES * sizeof *lines);
	/* A side trace's code opens with its parent's sunk allocations,
	** remade (lj_snap_replay): not its own lines. */
	if (i >= T->nsnap || (T->root && i == 0))
		return 0;
	int npc = snap_pcs(T, i, pcs);
	if (op_returns(bc_op(*pcs[npc - 1]))) {
		if (npc < 2)
			return 0; /* the trace returns below its frames */
		npc--;
		up = 1;
	}
	GCproto *pt = proto_of_pc(T, pcs[npc - 1]);
	if (!pt)
		return up;
	const BCIns *end = span_end(T, i, pt, pcs[npc - 1], npc, up);
	if (up && end == pcs[npc - 1]) {
		/* The next snapshot is where the return goes: what this code
		** makes is the returning function's, on the return's line. */
		GCproto *rpt = proto_of_pc(T, pcs[npc]);
		if (rpt)
			lines[TEXIT_ANY] = ljwin_proto_line(
			    rpt, (BCPos)(pcs[npc] - proto_bc(rpt)));
		return 0;
	}
	int r = scan_span(pt, pcs[npc - 1], end, &ls, &at);
	if (r == 1) {
		/* Returned (or tail called) without a snapshot: the caller's
		** stretch up to the next snapshot must allocate nothing. */
		struct lines_seen cs;
		memset(&cs, 0, sizeof cs);
		GCproto *cpt = npc >= 2 && op_returns(bc_op(*at))
				   ? proto_of_pc(T, pcs[npc - 2])
				   : NULL;
		const BCIns *cend =
		    cpt ? span_end(T, i, cpt, pcs[npc - 2], npc - 1, 1) : NULL;
		if (!cend || scan_span(cpt, pcs[npc - 2], cend, &cs, &at) ||
		    cs.aline[TEXIT_ANY])
			return up;
	} else if (r < 0) {
		return up;
	}
	for (int c = 0; c < TEXIT_CLASSES; c++)
		lines[c] = ls.amany[c] ? 0 : ls.aline[c];
	if (!ls.aline[TEXIT_ANY] && !ls.anymany)
		lines[TEXIT_ANY] = ls.anyline;
	return up;
}

/* Any context (async-signal-safe: reads T's code only). See texit.h. */
unsigned texit_call_class(const GCtrace *T, uint32_t ofs,
			  const struct texit_callees *c)
{
	const uint8_t *m = (const uint8_t *)T->mcode;
	uintptr_t t = 0;
	if (!c->newkey || ofs > T->szmcode)
		return TEXIT_ANY;
#if LJ_TARGET_X64
	int32_t rel;
	uint64_t imm;
	if (ofs >= 5 && m[ofs - 5] == 0xe8) { /* call rel32 */
		memcpy(&rel, m + ofs - 4, 4);
		t = (uintptr_t)(m + ofs) + (uintptr_t)(intptr_t)rel;
	} else if (ofs >= 12 && m[ofs - 2] == 0xff && m[ofs - 1] == 0xd0 &&
		   m[ofs - 12] == 0x48 && m[ofs - 11] == 0xb8) {
		memcpy(&imm, m + ofs - 10, 8); /* mov rax, imm64; call rax */
		t = (uintptr_t)imm;
	}
#elif LJ_TARGET_ARM64
	uint32_t w;
	if (ofs >= 4) {
		memcpy(&w, m + ofs - 4, 4);
		if ((w & 0xfc000000u) == 0x94000000u) { /* bl imm26 */
			int32_t imm = (int32_t)(w << 6) >> 6;
			t = (uintptr_t)(m + ofs - 4) +
			    (uintptr_t)((intptr_t)imm * 4);
		}
	}
#endif
	if (t && t == c->newkey)
		return TEXIT_NEWKEY;
	for (int k = 0; k < 3; k++)
		if (t && t == c->table[k])
			return TEXIT_TABLE;
	return TEXIT_ANY;
}

/* Caller keeps T alive. Snapshot at byte offset ofs (see texit.h); the
** rightmost search of lj_trace_unwind. */
SnapNo texit_at(const GCtrace *T, uint32_t ofs)
{
	SnapNo lo = 0, hi = T->nsnap;
	if (hi == 0)
		return 0;
	while (lo < hi) {
		SnapNo mid = (SnapNo)((lo + hi) >> 1);
		if (ofs < texit_ofs(T, mid))
			hi = mid;
		else
			lo = (SnapNo)(mid + 1);
	}
	return lo ? (SnapNo)(lo - 1) : 0;
}

/* Caller keeps T alive. See texit.h. */
GCtrace *texit_parent(jit_State *J, const GCtrace *T, SnapNo *exitno)
{
	if (!T->root || T->nins <= REF_BASE || T->ir[REF_BASE].o != IR_BASE)
		return NULL;
	TraceNo p = (TraceNo)T->ir[REF_BASE].op1;
	if (!p || p >= J->sizetrace)
		return NULL;
	*exitno = (SnapNo)T->ir[REF_BASE].op2;
	return traceref(J, p);
}

/* Caller keeps T alive. See texit.h. The sunk instruction keeps its place
** in T's IR (RID_SUNK: LuaJIT's lj_snap.c replays it from there); the
** snapshot before it is the last with a ref at or below it. */
int texit_sunk(const GCtrace *T, SnapNo e, uint32_t *mcofs, unsigned *cls)
{
	if (e >= T->nsnap)
		return 0;
	const SnapShot *snap = &T->snap[e];
	const SnapEntry *map = &T->snapmap[snap->mapofs];
	for (MSize k = 0; k < snap->nent; k++) {
		IRRef ref = snap_ref(map[k]);
		if (ref < REF_FIRST || ref >= T->nins)
			continue;
		const IRIns *ir = &T->ir[ref];
		if (regsp_reg(ir->r) != RID_SUNK ||
		    (ir->o != IR_TNEW && ir->o != IR_TDUP && ir->o != IR_CNEW &&
		     ir->o != IR_CNEWI))
			continue;
		SnapNo s = 0;
		for (SnapNo i = 0; i < T->nsnap && T->snap[i].ref <= ref; i++)
			s = i;
		*mcofs = texit_ofs(T, s);
		*cls = ir->o == IR_TNEW || ir->o == IR_TDUP ? TEXIT_TABLE
							    : TEXIT_ANY;
		return 1;
	}
	return 0;
}

#if LJ_TARGET_ARM64
/* Instructions of a callee's prologue read for its link register's save. */
#define PROLOGUE_MAX 12

/* arm64 instruction classes (Arm ARM, A64 base instructions), with sp
** (register 31) as the base or destination where it says so. */
#define A64_SUB_SP	 0xd10003ffu /* sub sp, sp, #imm12 {, lsl 12} */
#define A64_SUB_SP_M	 0xff8003ffu
#define A64_STP_SP_PRE	 0xa98003e0u /* stp xa, xb, [sp, #imm7*8]! */
#define A64_STP_SP	 0xa90003e0u /* stp xa, xb, [sp, #imm7*8] */
#define A64_STP_M	 0xffc003e0u
#define A64_STR_SP_PRE	 0xf8000fe0u /* str xt, [sp, #simm9]! */
#define A64_STR_SP_PRE_M 0xffe00fe0u
#define A64_STR_SP	 0xf90003e0u /* str xt, [sp, #imm12*8] */
#define A64_STR_SP_M	 0xffc003e0u
#define A64_B		 0x14000000u /* b label; bl: 0x94000000 */
#define A64_BL		 0x94000000u
#define A64_B_M		 0xfc000000u
#define A64_HINT	 0xd503201fu /* nop, bti, paciasp, ... */
#define A64_HINT_M	 0xfffff01fu

/* Any context. 1 when instruction w may branch or set sp (other than as
** lr_slot follows it): a prologue read stops there. */
static int a64_stops(uint32_t w)
{
	return (w & 0x7c000000u) == 0x14000000u ||  /* b, bl */
	       (w & 0xfe000000u) == 0x54000000u ||  /* b.cond */
	       (w & 0x7c000000u) == 0x34000000u ||  /* cbz, cbnz, tbz, tbnz */
	       (w & 0xfe000000u) == 0xd6000000u ||  /* br, blr, ret */
	       ((w & 0x3f000000u) == 0x11000000u && /* add/sub #imm to sp */
		(w & 31) == 31);
}

/* Any context. The signed field of w's bits [lo, lo + n). */
static int32_t a64_sfield(uint32_t w, int lo, int n)
{
	return (int32_t)(w << (32 - lo - n)) >> (32 - n);
}

/* Any context. Where the function at code address f saves its link
** register, from the stack pointer it is entered with, into *slot (a
** negative offset): its prologue read as GCC writes them (sub sp; stp or
** str of x30, pre-indexed or not; a tail branch followed), ignoring hints
** (bti, paciasp). 1 when found; 0 when the prologue branches, moves sp
** another way or stores no link register within PROLOGUE_MAX. */
static int lr_slot(uintptr_t f, int32_t *slot)
{
	int32_t off = 0;
	for (int i = 0, jumps = 0; i < PROLOGUE_MAX; i++, f += 4) {
		uint32_t w = *(const uint32_t *)f;
		uint32_t rt = w & 31, rt2 = (w >> 10) & 31;
		if ((w & A64_SUB_SP_M) == A64_SUB_SP) {
			off -= (int32_t)(((w >> 10) & 0xfff)
					 << ((w >> 22) & 1 ? 12 : 0));
		} else if ((w & A64_STP_M) == A64_STP_SP_PRE ||
			   (w & A64_STP_M) == A64_STP_SP) {
			int32_t at = off + a64_sfield(w, 15, 7) * 8;
			if ((w & A64_STP_M) == A64_STP_SP_PRE)
				off = at;
			if (rt == 30 || rt2 == 30) {
				*slot = at + (rt == 30 ? 0 : 8);
				return 1;
			}
		} else if ((w & A64_STR_SP_PRE_M) == A64_STR_SP_PRE) {
			off += a64_sfield(w, 12, 9);
			if (rt == 30) {
				*slot = off;
				return 1;
			}
		} else if ((w & A64_STR_SP_M) == A64_STR_SP) {
			if (rt == 30) {
				*slot = off + (int32_t)((w >> 10) & 0xfff) * 8;
				return 1;
			}
		} else if ((w & A64_B_M) == A64_B) { /* a tail call */
			if (++jumps > 2)
				return 0;
			f = f + (intptr_t)a64_sfield(w, 0, 26) * 4 - 4;
		} else if ((w & A64_HINT_M) != A64_HINT && a64_stops(w)) {
			return 0;
		}
	}
	return 0;
}

/* Any context. See texit.h. */
int texit_ret_slot(const GCtrace *T, uintptr_t cf, uintptr_t p, uintptr_t v)
{
	uintptr_t tsp = cf - 16 - T->spadjust;
	if (!(p < tsp && tsp - p <= TEXIT_CALLEE_BYTES))
		return 0;
	if (v & 3)
		return 0; /* no return address: instructions are aligned */
	uint32_t call = *(const uint32_t *)(v - 4);
	int32_t slot;
	if ((call & A64_B_M) != A64_BL) /* a blr: its callee is unknown */
		return 1;
	if (!lr_slot(v - 4 + (intptr_t)a64_sfield(call, 0, 26) * 4, &slot))
		return 1;
	return p == tsp + (intptr_t)slot;
}
#endif
