/*
** ljlog protoname: the name a Lua programmer gives a function, read from
** the bytecode of the function that makes its closure (after its FNEW).
*/
#include "maps/protoname.h"

#include <stdio.h>
#include <string.h>

/* -- Debug info ------------------------------------------------------------- */

/* Any thread. Read an unsigned LEB128 from *pp (LuaJIT's debug info). */
static uint32_t ruleb(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint32_t v = *p++;
	if (v >= 0x80) {
		int sh = 0;
		v &= 0x7f;
		do {
			v |= (uint32_t)(*p & 0x7f) << (sh += 7);
		} while (*p++ >= 0x80 && sh < 28);
	}
	*pp = p;
	return v;
}

/* Any thread, pt alive. The name of local slot at pc (as LuaJIT's
** debug_varname), or NULL for internal and unknown ones. */
const char *protoname_local(const GCproto *pt, BCPos pc, BCReg slot)
{
	const uint8_t *p = proto_varinfo(pt);
	BCPos lastpc = 0;
	if (!p)
		return NULL;
	for (;;) {
		const uint8_t *name = p;
		uint32_t vn = *p;
		if (vn < VARNAME__MAX) {
			if (vn == VARNAME_END)
				return NULL;
		} else {
			while (*++p)
				;
		}
		p++;
		BCPos startpc = lastpc + ruleb(&p);
		lastpc = startpc;
		if (startpc > pc)
			return NULL;
		BCPos endpc = startpc + ruleb(&p);
		if (pc < endpc && slot-- == 0)
			return vn < VARNAME__MAX ? NULL : (const char *)name;
	}
}

/* Any thread, pt alive. The name of upvalue idx, or NULL. */
const char *protoname_upvalue(const GCproto *pt, uint32_t idx)
{
	const uint8_t *p = proto_uvinfo(pt);
	if (!p || idx >= pt->sizeuv)
		return NULL;
	while (idx--)
		while (*p++)
			;
	return *p ? (const char *)p : NULL;
}

/* Any thread, pt alive. String constant idx (a D or C operand). */
static const char *kstr(const GCproto *pt, uint32_t idx)
{
	GCobj *o = proto_kgc(pt, ~(ptrdiff_t)idx);
	return o->gch.gct == ~LJ_TSTR ? strdata(&o->str) : NULL;
}

/* -- Naming a closure ---------------------------------------------------------- */

/* Any thread, pt alive. The name of table slot t at pc into buf: a local,
** or what a nearby earlier instruction loaded into it (a global, an
** upvalue, a field of a named table: "M.sub"); 0, else -1. */
static int table_name(const GCproto *pt, BCPos pc, BCReg t, char *buf,
		      size_t cap, int depth)
{
	const BCIns *bc = proto_bc(pt);
	const char *s = protoname_local(pt, pc, t), *k;
	char inner[128];
	if (s)
		return snprintf(buf, cap, "%s", s) < 0 ? -1 : 0;
	for (BCPos q = pc; q > 1 && pc - q < 8; q--) {
		BCIns ins = bc[q - 1];
		if (bc_a(ins) != t)
			continue;
		switch (bc_op(ins)) {
		case BC_GGET: s = kstr(pt, bc_d(ins)); break;
		case BC_UGET: s = protoname_upvalue(pt, bc_d(ins)); break;
		case BC_MOV: s = protoname_local(pt, q - 1, bc_d(ins)); break;
		case BC_TGETS:
			if (depth < 4 && (k = kstr(pt, bc_c(ins))) != NULL &&
			    table_name(pt, q - 1, bc_b(ins), inner,
				       sizeof inner, depth + 1) == 0) {
				snprintf(buf, cap, "%s.%s", inner, k);
				return 0;
			}
			return -1;
		default: return -1;
		}
		return s ? (snprintf(buf, cap, "%s", s) < 0 ? -1 : 0) : -1;
	}
	return -1;
}

/* Any thread, child alive. Its first parameter is `self`. */
int protoname_is_method(const GCproto *child)
{
	const char *s;
	return child->numparams >= 1 &&
	       (s = protoname_local(child, 0, 0)) != NULL &&
	       strcmp(s, "self") == 0;
}

/* Any thread, pt alive. Name the closure FNEW at pc makes of child into
** buf ("" when unknown). */
static void name_at(const GCproto *pt, BCPos pc, const GCproto *child,
		    char *buf, size_t cap)
{
	const BCIns *bc = proto_bc(pt);
	BCReg a = bc_a(bc[pc]);
	const char *s = NULL;
	char tn[160];
	buf[0] = '\0';
	if (pc + 1 < pt->sizebc) {
		BCIns ins = bc[pc + 1];
		switch (bc_op(ins)) {
		case BC_GSET:
			if (bc_a(ins) == a)
				s = kstr(pt, bc_d(ins));
			break;
		case BC_TSETS:
			if (bc_a(ins) != a || !(s = kstr(pt, bc_c(ins))))
				break;
			if (table_name(pt, pc, bc_b(ins), tn, sizeof tn, 0) ==
			    0) {
				snprintf(buf, cap, "%s%c%s", tn,
					 protoname_is_method(child) ? ':' : '.',
					 s);
				return;
			}
			break;
		case BC_USETV:
			if (bc_d(ins) == a)
				s = protoname_upvalue(pt, bc_a(ins));
			break;
		case BC_MOV:
			if (bc_d(ins) == a)
				s = protoname_local(pt, pc + 2, bc_a(ins));
			break;
		default: break;
		}
	}
	if (!s)
		s = protoname_local(pt, pc + 1, a);
	if (s)
		snprintf(buf, cap, "%s", s);
}

/* Any thread, pt alive. Name every child prototype pt makes. */
int protoname_children(GCproto *pt, protoname_fn fn, void *ud)
{
	const BCIns *bc = proto_bc(pt);
	char name[256];
	int rc;
	if (!(pt->flags & PROTO_CHILD))
		return 0;
	for (BCPos pc = 1; pc < pt->sizebc; pc++) {
		if (bc_op(bc[pc]) != BC_FNEW)
			continue;
		GCobj *o = proto_kgc(pt, ~(ptrdiff_t)bc_d(bc[pc]));
		if (o->gch.gct != ~LJ_TPROTO)
			continue;
		name_at(pt, pc, &o->pt, name, sizeof name);
		if ((rc = fn(ud, &o->pt, name)) != 0)
			return rc;
	}
	return 0;
}

/* -- Library functions written in Lua ----------------------------------------- */

/* LuaJIT's LJLIB_LUA functions: their chunk name is the function's. */
static const char *const builtins[][2] = {
    {"deg", "math.deg"},	  {"rad", "math.rad"},
    {"len", "string.len"},	  {"foreachi", "table.foreachi"},
    {"foreach", "table.foreach"}, {"getn", "table.getn"},
    {"remove", "table.remove"},	  {"move", "table.move"},
};

/* Any thread, pt alive. Library name of a builtin written in Lua. */
const char *protoname_builtin(const GCproto *pt)
{
	GCstr *s = proto_chunkname(pt);
	if (pt->firstline != ~(BCLine)0 || !s)
		return NULL;
	for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
		if (strcmp(strdata(s), builtins[i][0]) == 0)
			return builtins[i][1];
	return strdata(s);
}
