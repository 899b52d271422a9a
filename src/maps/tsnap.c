/*
** ljlog trace snapshots: the Lua frames a trace's machine code stands for
** (see tsnap.h). x64 GC64 only (two-slot frames), like the sampler.
*/
#include "maps/tsnap.h"

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

/* Caller keeps T alive. The prototype whose bytecode holds pc, among the
** one the trace starts in and the functions and prototypes it holds as
** constants (every Lua function a trace inlines is one: lj_record.c,
** rec_call_specialize); NULL when none does. */
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
	return NULL;
}

/* Caller keeps T alive. Frames of snapshot i (see tsnap.h). In GC64 mode a
** snapshot's entries run in slot order; an inlined frame's link slot is a
** SNAP_FRAME entry whose 64-bit constant is the frame link LuaJIT would
** restore: for a Lua frame, the return PC into its caller (lj_snap.c,
** snapshot_slots). The PC to resume at follows the entries. So the PCs in
** slot order, then the resume PC, are one PC per frame, outermost first: a
** return PC stands one past the call being executed. */
int tsnap_frames(GCtrace *T, SnapNo i, struct tsnap_frame *out, int max)
{
	const BCIns *pcs[TSNAP_MAX_FRAMES + 1];
	int npc = 0, n = 0;
	if (i >= T->nsnap || max <= 0)
		return 0;
	SnapShot *snap = &T->snap[i];
	SnapEntry *map = &T->snapmap[snap->mapofs];
	for (MSize k = 0; k < snap->nent; k++) {
		SnapEntry sn = map[k];
		IRRef ref = snap_ref(sn);
		if (!(sn & SNAP_FRAME) || snap_slot(sn) < 2 || ref < T->nk ||
		    ref >= REF_TRUE)
			continue;
		IRIns *ir = &T->ir[ref];
		if (ir->o != IR_KNUM)
			continue;
		uint64_t link = ir_knum(ir)->u64;
		if ((link & FRAME_TYPE) != FRAME_LUA || !link)
			continue; /* a continuation or vararg frame */
		if (npc == TSNAP_MAX_FRAMES) /* keep the innermost */
			memmove(pcs, pcs + 1, --npc * sizeof pcs[0]);
		pcs[npc++] = (const BCIns *)(uintptr_t)link;
	}
	pcs[npc++] = snap_pc(&map[snap->nent]);
	for (int k = npc > max ? npc - max : 0; k < npc; k++) {
		GCproto *pt = proto_of_pc(T, pcs[k]);
		if (!pt)
			continue;
		BCPos pos = (BCPos)(pcs[k] - proto_bc(pt));
		if (k < npc - 1 && pos > 0)
			pos--; /* the call, not the return PC */
		out[n].pt = pt;
		out[n].line = ljwin_proto_line(pt, pos);
		n++;
	}
	return n;
}

/* Caller keeps T alive. Snapshot at byte offset ofs (see tsnap.h); the
** rightmost search of lj_trace_unwind. */
SnapNo tsnap_at(const GCtrace *T, uint32_t ofs)
{
	SnapNo lo = 0, hi = T->nsnap;
	if (hi == 0)
		return 0;
	while (lo < hi) {
		SnapNo mid = (SnapNo)((lo + hi) >> 1);
		if (ofs < tsnap_ofs(T, mid))
			hi = mid;
		else
			lo = (SnapNo)(mid + 1);
	}
	return lo ? (SnapNo)(lo - 1) : 0;
}

/* Caller keeps T alive. See tsnap.h. The sunk instruction keeps its place
** in T's IR (RID_SUNK: LuaJIT's lj_snap.c replays it from there); the
** snapshot before it is the last with a ref at or below it. */
int tsnap_sunk(const GCtrace *T, SnapNo e, uint32_t *mcofs)
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
		*mcofs = tsnap_ofs(T, s);
		return 1;
	}
	return 0;
}
