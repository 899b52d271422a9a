/*
** Unit tests: doc/format.txt (the source of truth) against src/blocks/format.h.
** Both files are parsed as text, and the compiled constants are checked too,
** so a change to either side alone fails.
*/
#include <criterion/criterion.h>
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blocks/blocks.h"
#include "decode/decode.h"
#include "stat/stacks.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

/* One name = value pair from either file. */
struct pair {
	char name[32];
	long value;
};

struct table {
	struct pair p[64];
	int n;
};

/* -- Files ------------------------------------------------------------------------ */

/* Test thread. Read srcdir/rel into a malloc'd NUL-terminated string. */
static char *slurp(const char *rel)
{
	const char *dir = getenv("srcdir");
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : SRCDIR, rel);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(path, sizeof path, "%s/%s", SRCDIR, rel);
		f = fopen(path, "rb");
	}
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* Test thread. The text of the section of doc that starts at the line
** `title`, up to the next line of `stop` (NULL: a blank line after rows). */
static char *section(const char *doc, const char *title, const char *stop)
{
	const char *s = strstr(doc, title);
	cr_assert_not_null(s, "format.txt has no '%s'", title);
	s = strchr(s, '\n');
	cr_assert_not_null(s);
	const char *e = stop ? strstr(s, stop) : NULL;
	if (!e)
		e = s + strlen(s);
	char *out = strndup(s, (size_t)(e - s));
	return out;
}

/* Test thread. Collect regex matches (group name, group value) over text;
** upper-cases names when up. */
static void collect(const char *text, const char *re, int name_grp, int val_grp,
		    int up, struct table *t)
{
	regex_t rx;
	regmatch_t m[4];
	cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE), 0, "%s", re);
	t->n = 0;
	for (const char *p = text;
	     regexec(&rx, p, 4, m,
		     p > text && p[-1] != '\n' ? REG_NOTBOL : 0) == 0;
	     p += m[0].rm_eo) {
		struct pair *q = &t->p[t->n++];
		int len = (int)(m[name_grp].rm_eo - m[name_grp].rm_so);
		snprintf(q->name, sizeof q->name, "%.*s", len,
			 p + m[name_grp].rm_so);
		if (up)
			for (char *c = q->name; *c; c++)
				*c = (char)toupper((unsigned char)*c);
		q->value = strtol(p + m[val_grp].rm_so, NULL, 0);
		if (m[0].rm_eo == 0)
			break;
	}
	regfree(&rx);
}

/* Test thread. The pairs of format.h whose names start with prefix
** ("FORMAT_KIND_"), without the prefix; __MAX entries left out. */
static void header_enum(const char *h, const char *prefix, struct table *t)
{
	char re[128];
	struct table all;
	snprintf(re, sizeof re, "^[ \t]*%s([A-Z0-9_]+)[ \t]*=[ \t]*([0-9]+)",
		 prefix);
	collect(h, re, 1, 2, 0, &all);
	t->n = 0;
	for (int i = 0; i < all.n; i++)
		if (strncmp(all.p[i].name, "_", 1) != 0)
			t->p[t->n++] = all.p[i];
}

/* Test thread. Both tables hold the same name = value pairs. */
static void same(const char *what, const struct table *doc,
		 const struct table *hdr)
{
	cr_assert_gt(doc->n, 0, "%s: nothing parsed from format.txt", what);
	for (int i = 0; i < doc->n; i++) {
		int found = 0;
		for (int j = 0; j < hdr->n; j++)
			if (!strcmp(doc->p[i].name, hdr->p[j].name)) {
				cr_assert_eq(doc->p[i].value, hdr->p[j].value,
					     "%s %s: format.txt says %ld, "
					     "format.h %ld",
					     what, doc->p[i].name,
					     doc->p[i].value, hdr->p[j].value);
				found = 1;
			}
		cr_assert(found,
			  "%s %s = %ld is in format.txt, not in format.h", what,
			  doc->p[i].name, doc->p[i].value);
	}
	for (int j = 0; j < hdr->n; j++) {
		int found = 0;
		for (int i = 0; i < doc->n; i++)
			found |= !strcmp(doc->p[i].name, hdr->p[j].name);
		cr_assert(found,
			  "%s %s = %ld is in format.h, not in format.txt", what,
			  hdr->p[j].name, hdr->p[j].value);
	}
}

/* Test thread. Value of name in t (fails when missing). */
static long value_of(const struct table *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->p[i].name, name))
			return t->p[i].value;
	cr_assert_fail("%s missing", name);
	return -1;
}

/* Test thread. The name table behind fn holds exactly the doc's pairs:
** every value 0..255 the doc lists has its name (compared without case),
** every other value is "?". */
static void walk(const char *what, const struct table *doc,
		 const char *(*fn)(unsigned))
{
	cr_assert_gt(doc->n, 0, "%s: nothing parsed from format.txt", what);
	for (unsigned v = 0; v < 256; v++) {
		const char *n = fn(v);
		int listed = 0;
		for (int i = 0; i < doc->n; i++)
			if (doc->p[i].value == (long)v) {
				cr_assert(!strcasecmp(n, doc->p[i].name),
					  "%s %u: format.txt says %s, the name "
					  "table %s",
					  what, v, doc->p[i].name, n);
				listed = 1;
			}
		if (!listed)
			cr_assert_str_eq(n, "?", "%s %u is not in format.txt",
					 what, v);
	}
}

/* -- Tests -------------------------------------------------------------------------- */

Test(format, magic_bytes)
{
	char *doc = slurp("doc/format.txt");
	const char *s = strstr(doc, "file magic:");
	cr_assert_not_null(s);
	s += strlen("file magic:");
	uint8_t bytes[16];
	int n = 0;
	char *e;
	for (;;) {
		while (*s == ' ')
			s++;
		long v = strtol(s, &e, 16);
		if (e == s || e - s != 2)
			break;
		bytes[n++] = (uint8_t)v;
		s = e;
	}
	cr_assert_eq(n, FORMAT_MAGIC_LEN, "format.txt lists %d magic bytes", n);
	cr_assert_eq(sizeof FORMAT_MAGIC - 1, FORMAT_MAGIC_LEN);
	cr_assert_eq(memcmp(bytes, FORMAT_MAGIC, FORMAT_MAGIC_LEN), 0);
	cr_assert_not_null(strstr(doc, "offset 0   8 bytes  file magic"));
	free(doc);
}

Test(format, header_layout)
{
	char *doc = slurp("doc/format.txt");
	char buf[64];
	snprintf(buf, sizeof buf, "Block header (%d bytes)", FORMAT_HEADER_LEN);
	cr_assert_not_null(strstr(doc, buf), "header length %d",
			   FORMAT_HEADER_LEN);
	snprintf(buf, sizeof buf, "sync, 0x%04X", FORMAT_SYNC);
	cr_assert_not_null(strstr(doc, buf), "sync 0x%04X", FORMAT_SYNC);
	snprintf(buf, sizeof buf, "bytes %02X %02X", FORMAT_SYNC & 0xff,
		 FORMAT_SYNC >> 8);
	cr_assert_not_null(strstr(doc, buf), "sync bytes");
	snprintf(buf, sizeof buf, "at most 64 MiB (%u)", FORMAT_MAX_PAYLOAD);
	cr_assert_not_null(strstr(doc, buf), "max payload %u",
			   FORMAT_MAX_PAYLOAD);
	cr_assert_eq(FORMAT_MAX_PAYLOAD, 64u << 20);
	cr_assert_not_null(strstr(doc, "16      payload"));
	free(doc);
}

Test(format, version_is_last_history_entry)
{
	char *doc = slurp("doc/format.txt");
	char *hist = section(doc, "Version history", "\nConventions");
	struct table t;
	collect(hist, "^  ([0-9]+)  +", 1, 1, 0, &t);
	cr_assert_gt(t.n, 0);
	cr_assert_eq(t.p[t.n - 1].value, FORMAT_VERSION,
		     "last history entry %ld, FORMAT_VERSION %d",
		     t.p[t.n - 1].value, FORMAT_VERSION);
	char buf[64];
	snprintf(buf, sizeof buf, "(this document: %d)", FORMAT_VERSION);
	cr_assert_not_null(strstr(doc, buf));
	/* The version changelog in format.h names the same version. */
	char *h = slurp("src/blocks/format.h");
	snprintf(buf, sizeof buf, "#define FORMAT_VERSION %d", FORMAT_VERSION);
	cr_assert_not_null(strstr(h, buf));
	free(h);
	free(hist);
	free(doc);
}

Test(format, block_kinds)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "\nBlock kinds\n", "\n  A reader skips");
	struct table d, hd;
	collect(sec, "^  ([0-9]+)[ ]+([A-Z]+)[ ]", 2, 1, 0, &d);
	header_enum(h, "FORMAT_KIND_", &hd);
	same("block kind", &d, &hd);
	cr_assert_eq(value_of(&hd, "INTRO"), FORMAT_KIND_INTRO);
	cr_assert_eq(value_of(&hd, "END"), FORMAT_KIND_END);
	cr_assert_eq(value_of(&hd, "MAPPING"), FORMAT_KIND_MAPPING);
	cr_assert_eq(value_of(&hd, "EVENTS"), FORMAT_KIND_EVENTS);
	cr_assert_eq(value_of(&hd, "SAMPLES"), FORMAT_KIND_SAMPLES);
	/* The name table knows exactly these kinds, and so does the
	** reader's kind table: a row for each, none for anything else. */
	walk("block kind", &d, format_kind_name);
	size_t rows = 0;
	for (const struct decode_kind *k; (k = decode_kind_at(rows)); rows++) {
		cr_assert_neq(strcmp(format_kind_name(k->kind), "?"), 0,
			      "kind table row %u is not in format.txt",
			      k->kind);
		cr_assert_eq(decode_kind(k->kind), k);
		cr_assert_not_null(k->decode);
	}
	cr_assert_eq(rows, (size_t)d.n, "%zu rows for %d kinds", rows, d.n);
	for (unsigned k = 0; k < 256; k++)
		if (!strcmp(format_kind_name(k), "?"))
			cr_assert_null(decode_kind(k), "kind %u", k);
	free(sec);
	free(h);
	free(doc);
}

Test(format, event_ops)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "  op  name", "\n\n");
	struct table d, hd;
	collect(sec, "^  ([0-9]+)[ ]+([A-Z]+)[ ]", 2, 1, 0, &d);
	header_enum(h, "FORMAT_OP_", &hd);
	same("event op", &d, &hd);
	cr_assert_eq(d.n, 8, "3 bits of op, 8 ops");
	cr_assert_eq(value_of(&hd, "ENTER"), FORMAT_OP_ENTER);
	cr_assert_eq(value_of(&hd, "EXIT"), FORMAT_OP_EXIT);
	cr_assert_eq(value_of(&hd, "ALLOC"), FORMAT_OP_ALLOC);
	cr_assert_eq(value_of(&hd, "FREE"), FORMAT_OP_FREE);
	cr_assert_eq(value_of(&hd, "REALLOC"), FORMAT_OP_REALLOC);
	cr_assert_eq(value_of(&hd, "GC"), FORMAT_OP_GC);
	cr_assert_eq(value_of(&hd, "SWITCH"), FORMAT_OP_SWITCH);
	cr_assert_eq(value_of(&hd, "VM"), FORMAT_OP_VM);
	char buf[64];
	snprintf(buf, sizeof buf, "op = c >> %d, lo = c & %u", FORMAT_OP_SHIFT,
		 FORMAT_LO_MASK);
	cr_assert_not_null(strstr(doc, buf), "%s", buf);
	snprintf(buf, sizeof buf, "lo == %u means", FORMAT_SLOT_ESCAPE);
	cr_assert_not_null(strstr(doc, buf), "%s", buf);
	walk("event op", &d, format_op_name);
	free(sec);
	free(h);
	free(doc);
}

Test(format, record_kinds)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "MAPPING payload", "EVENTS payload");
	struct table d, hd;
	collect(sec, "^  kind ([0-9]+)[ ]+([A-Z]+)", 2, 1, 0, &d);
	header_enum(h, "FORMAT_REC_", &hd);
	same("record kind", &d, &hd);
	cr_assert_eq(value_of(&hd, "VM"), FORMAT_REC_VM);
	cr_assert_eq(value_of(&hd, "PROTO"), FORMAT_REC_PROTO);
	cr_assert_eq(value_of(&hd, "CFUNC"), FORMAT_REC_CFUNC);
	cr_assert_eq(value_of(&hd, "FFUNC"), FORMAT_REC_FFUNC);
	cr_assert_eq(value_of(&hd, "COROUTINE"), FORMAT_REC_COROUTINE);
	cr_assert_eq(value_of(&hd, "TRACE"), FORMAT_REC_TRACE);
	cr_assert_eq(value_of(&hd, "HOSTSYM"), FORMAT_REC_HOSTSYM);
	cr_assert_eq(value_of(&hd, "STACK"), FORMAT_REC_STACK);
	cr_assert_eq(value_of(&hd, "STRING"), FORMAT_REC_STRING);
	cr_assert_eq(value_of(&hd, "NAME"), FORMAT_REC_NAME);
	cr_assert_eq(d.n, 10, "10 record kinds in format.txt");
	cr_assert_not_null(strstr(sec, "bit 0: ljlog turned the JIT off"));
	cr_assert_eq(FORMAT_VM_JIT_OFF, 1u);
	cr_assert_not_null(strstr(sec, "bit 0: the VM's main thread"));
	cr_assert_eq(FORMAT_CO_MAIN, 1u);
	cr_assert_not_null(strstr(sec, "bit 0 NOEXIT: written in assembler"));
	cr_assert_eq(FORMAT_FF_NOEXIT, 1u);
	cr_assert_not_null(strstr(sec, "bit 1 CALLBACK (version 4"));
	cr_assert_eq(FORMAT_FF_CALLBACK, 2u);
	cr_assert_not_null(strstr(sec, "bit 0 VM: LuaJIT's interpreter"));
	cr_assert_eq(FORMAT_HOST_VM, 1u);
	walk("record kind", &d, format_rec_name);
	free(sec);

	/* TRACE and HOSTSYM fields, in order. */
	sec = section(doc, "kind 6  TRACE", "kind 7  HOSTSYM");
	const char *tf[] = {"ID     id", "uleb   traceno", "ID     proto",
			    "uleb   line", "uleb   root"};
	const char *at = sec;
	for (size_t i = 0; i < sizeof tf / sizeof tf[0]; i++) {
		const char *x = strstr(at, tf[i]);
		cr_assert_not_null(x, "TRACE field '%s' (in order)", tf[i]);
		at = x;
	}
	free(sec);
	sec = section(doc, "kind 7  HOSTSYM", "kind 8  STACK");
	const char *hf[] = {"ID     id", "uleb   address", "str    name",
			    "str    object", "uleb   flags"};
	at = sec;
	for (size_t i = 0; i < sizeof hf / sizeof hf[0]; i++) {
		const char *x = strstr(at, hf[i]);
		cr_assert_not_null(x, "HOSTSYM field '%s' (in order)", hf[i]);
		at = x;
	}
	free(sec);
	/* STACK (version 6): its fields in order, and the ID rule. */
	sec = section(doc, "kind 8  STACK", "Merging a sample's stacks");
	const char *sf[] = {"ID     id",   "ID     parent", "uleb   nlua",
			    "ID     func", "uleb   line",   "uleb   nhost",
			    "ID     sym",  "more than 4096"};
	at = sec;
	for (size_t i = 0; i < sizeof sf / sizeof sf[0]; i++) {
		const char *x = strstr(at, sf[i]);
		cr_assert_not_null(x, "STACK field '%s' (in order)", sf[i]);
		at = x;
	}
	cr_assert_eq(STACKS_MAX, 4096u, "the doc says 4096 stacks per VM");
	free(sec);
	free(h);
	free(doc);
}

Test(format, site_kinds)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "Site kinds (ALLOC, REALLOC):", "\n\n");
	struct table d, hd;
	collect(sec, "^  ([0-9]+)  ([a-z]+)", 2, 1, 1, &d);
	header_enum(h, "FORMAT_SITE_", &hd);
	same("site kind", &d, &hd);
	cr_assert_eq(d.n, FORMAT_SITE__MAX);
	cr_assert_eq(value_of(&hd, "UNKNOWN"), FORMAT_SITE_UNKNOWN);
	cr_assert_eq(value_of(&hd, "LUA"), FORMAT_SITE_LUA);
	cr_assert_eq(value_of(&hd, "C"), FORMAT_SITE_C);
	cr_assert_eq(value_of(&hd, "TRACE"), FORMAT_SITE_TRACE);
	cr_assert_eq(value_of(&hd, "GC"), FORMAT_SITE_GC);
	cr_assert_eq(value_of(&hd, "JIT"), FORMAT_SITE_JIT);
	cr_assert_eq(value_of(&hd, "INTERNAL"), FORMAT_SITE_INTERNAL);
	walk("site kind", &d, format_site_name);
	free(sec);
	free(h);
	free(doc);
}

Test(format, gc_phases)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "GC phases (GC event lo", "\nA cycle");
	struct table d, hd;
	collect(sec, "([0-9]+) ([a-z]+)", 2, 1, 1, &d);
	header_enum(h, "FORMAT_GC_", &hd);
	same("GC phase", &d, &hd);
	cr_assert_eq(d.n, FORMAT_GC__MAX);
	cr_assert_eq(value_of(&hd, "PAUSE"), FORMAT_GC_PAUSE);
	cr_assert_eq(value_of(&hd, "PROPAGATE"), FORMAT_GC_PROPAGATE);
	cr_assert_eq(value_of(&hd, "ATOMIC"), FORMAT_GC_ATOMIC);
	cr_assert_eq(value_of(&hd, "SWEEPSTRING"), FORMAT_GC_SWEEPSTRING);
	cr_assert_eq(value_of(&hd, "SWEEP"), FORMAT_GC_SWEEP);
	cr_assert_eq(value_of(&hd, "FINALIZE"), FORMAT_GC_FINALIZE);
	walk("GC phase", &d, format_gc_phase_name);
	free(sec);
	free(h);
	free(doc);
}

Test(format, sample_states)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "Sample states (what", "\n\n");
	struct table d, hd;
	collect(sec, "^  ([0-9]+) ([a-z]+) ", 2, 1, 1, &d);
	header_enum(h, "FORMAT_STATE_", &hd);
	same("sample state", &d, &hd);
	cr_assert_eq(d.n, FORMAT_STATE__MAX);
	cr_assert_eq(value_of(&hd, "INTERP"), FORMAT_STATE_INTERP);
	cr_assert_eq(value_of(&hd, "C"), FORMAT_STATE_C);
	cr_assert_eq(value_of(&hd, "GC"), FORMAT_STATE_GC);
	cr_assert_eq(value_of(&hd, "EXIT"), FORMAT_STATE_EXIT);
	cr_assert_eq(value_of(&hd, "RECORD"), FORMAT_STATE_RECORD);
	cr_assert_eq(value_of(&hd, "OPT"), FORMAT_STATE_OPT);
	cr_assert_eq(value_of(&hd, "ASM"), FORMAT_STATE_ASM);
	cr_assert_eq(value_of(&hd, "TRACE"), FORMAT_STATE_TRACE);
	cr_assert_eq(value_of(&hd, "IDLE"), FORMAT_STATE_IDLE);
	walk("sample state", &d, format_state_name);
	free(sec);
	/* The payload names state 7 as the one with a trace. */
	sec = section(doc, "SAMPLES payload (version 2)", "Sample states");
	char buf[64];
	snprintf(buf, sizeof buf, "TRACE being executed (state %d)",
		 FORMAT_STATE_TRACE);
	cr_assert_not_null(strstr(sec, buf), "%s", buf);
	cr_assert_not_null(strstr(sec, "signals = count + dropped"));
	/* Version 11: the flag of the state byte, above every state. */
	snprintf(buf, sizeof buf, "| 0x%x when missed follows",
		 FORMAT_STATE_MISSED);
	cr_assert_not_null(strstr(sec, buf), "%s", buf);
	cr_assert_gt(FORMAT_STATE_MISSED, FORMAT_STATE__MAX - 1);
	cr_assert_eq(FORMAT_STATE_MISSED & (FORMAT_STATE_MISSED - 1), 0);
	free(sec);
	free(h);
	free(doc);
}

Test(format, vm_subs_and_counters)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	struct table d, hd;
	/* "7   VM       sub          by sub-kind:" then "  0 ATTACH  ..." */
	const char *s = strstr(doc, "by sub-kind:");
	cr_assert_not_null(s);
	const char *e = strstr(s, "\n\n");
	cr_assert_not_null(e);
	char *line = strndup(s, (size_t)(e - s));
	collect(line, "^ +([0-9]+) ([A-Z_]+) ", 2, 1, 0, &d);
	header_enum(h, "FORMAT_VM_", &hd);
	same("VM event", &d, &hd);
	walk("VM event", &d, format_vm_name);
	cr_assert_eq(value_of(&hd, "ATTACH"), FORMAT_VM_ATTACH);
	cr_assert_eq(value_of(&hd, "DETACH"), FORMAT_VM_DETACH);
	cr_assert_eq(value_of(&hd, "TRACE_START"), FORMAT_VM_TRACE_START);
	cr_assert_eq(value_of(&hd, "TRACE_STOP"), FORMAT_VM_TRACE_STOP);
	cr_assert_eq(value_of(&hd, "TRACE_ABORT"), FORMAT_VM_TRACE_ABORT);
	cr_assert_eq(value_of(&hd, "TRACE_FLUSH"), FORMAT_VM_TRACE_FLUSH);
	cr_assert_eq(value_of(&hd, "ZONE_PUSH"), FORMAT_VM_ZONE_PUSH);
	cr_assert_eq(value_of(&hd, "ZONE_POP"), FORMAT_VM_ZONE_POP);
	cr_assert_eq(value_of(&hd, "MARK"), FORMAT_VM_MARK);
	cr_assert_eq(d.n, 9, "9 VM sub-kinds in format.txt");
	free(line);

	/* counter_kind: "1 = x86 TSC (rdtsc), 2 = CLOCK_MONOTONIC in ns" */
	s = strstr(doc, "counter_kind ");
	cr_assert_not_null(s);
	line = strndup(s, (size_t)(strchr(s, '\n') - s));
	collect(line, "([0-9]+) = [^,]*(TSC|CLOCK_MONOTONIC)", 2, 1, 0, &d);
	cr_assert_eq(d.n, 2);
	header_enum(h, "FORMAT_COUNTER_", &hd);
	cr_assert_eq(hd.n, 2, "format.h and format.txt list 2 counter kinds");
	cr_assert_eq(value_of(&d, "TSC"), value_of(&hd, "TSC"));
	cr_assert_eq(value_of(&d, "CLOCK_MONOTONIC"), value_of(&hd, "MONO_NS"));
	cr_assert_eq(value_of(&hd, "TSC"), FORMAT_COUNTER_TSC);
	cr_assert_eq(value_of(&hd, "MONO_NS"), FORMAT_COUNTER_MONO_NS);
	cr_assert_str_eq(format_counter_name(FORMAT_COUNTER_TSC), "tsc");
	cr_assert_str_eq(format_counter_name(FORMAT_COUNTER_MONO_NS),
			 "monotonic ns");
	cr_assert_str_eq(format_counter_name(0), "?");
	cr_assert_str_eq(format_counter_name(3), "?");
	free(line);
	free(h);
	free(doc);
}

Test(format, heap_records)
{
	char *doc = slurp("doc/format.txt");
	char *sec = section(doc, "HEAP payload (version 8)", "Sizes are");
	char buf[96];
	for (unsigned k = 1; k < FORMAT_HREF__MAX; k++) {
		snprintf(buf, sizeof buf, "\n    %-2u %s ", k,
			 format_href_name(k));
		cr_assert_not_null(strstr(sec, buf), "reference kind '%s'",
				   buf + 1);
	}
	cr_assert_str_eq(format_href_name(FORMAT_HREF__MAX), "?");
	for (unsigned t = 1; t < FORMAT_HTYPE__MAX; t++) {
		snprintf(buf, sizeof buf, "%u %s", t, format_htype_name(t));
		cr_assert_not_null(strstr(sec, buf), "object type '%s'", buf);
	}
	cr_assert_str_eq(format_htype_name(FORMAT_HTYPE__MAX), "?");
	snprintf(buf, sizeof buf, "kind %d  OBJECT", FORMAT_HEAP_OBJECT);
	cr_assert_not_null(strstr(sec, buf));
	snprintf(buf, sizeof buf, "kind %d  ROOT", FORMAT_HEAP_ROOT);
	cr_assert_not_null(strstr(sec, buf));
	snprintf(buf, sizeof buf, "kind %d  SUMMARY", FORMAT_HEAP_SUMMARY);
	cr_assert_not_null(strstr(sec, buf));
	cr_assert_not_null(strstr(sec, "bit 7 WEAK"));
	cr_assert_eq(FORMAT_HREF_WEAK, 0x80u);
	cr_assert_not_null(strstr(sec, "bit 0 UNREACHABLE"));
	cr_assert_eq(FORMAT_HOBJ_UNREACHABLE, 1u);
	cr_assert_not_null(strstr(sec, "bit 7 UNREACHABLE"));
	cr_assert_eq(FORMAT_HTYPE_UNREACHABLE, 0x80u);
	/* Version 10: the block's address right after the ID. */
	const char *id = strstr(sec, "    uleb   id  ");
	const char *ad =
	    strstr(sec, "    sleb   addr             (version 10)");
	const char *ty = strstr(sec, "    u8     type  ");
	cr_assert(id && ad && ty && id < ad && ad < ty);
	cr_assert_not_null(strstr(doc, "Sites of heap objects (version 10)"));
	free(sec);
	free(doc);
}

Test(format, chunk_guess_follows_the_document)
{
	/* Version 12's address guesses: LuaJIT's allocator's chunk for a
	** block of s bytes, as the EVENTS section says. */
	char *doc = slurp("doc/format.txt");
	cr_assert_not_null(strstr(doc, "32 when s < 23, else\n  s + 15 rounded "
				       "down to a multiple of 8"));
	for (uint64_t s = 0; s < 23; s++)
		cr_assert_eq(format_chunk(s), 32, "size %llu",
			     (unsigned long long)s);
	cr_assert_eq(format_chunk(25), 40);
	cr_assert_eq(format_chunk(64), 72); /* what binary-trees shows */
	cr_assert_eq(format_chunk(88), 96);
	for (uint64_t s = 23; s < 4096; s++) {
		cr_assert_eq(format_chunk(s) % 8, 0);
		cr_assert(format_chunk(s) >= s + 8 && format_chunk(s) < s + 16);
	}
	free(doc);
}

/* Version 17: the families of END's dropped events, and END's fields in
** the order the writer puts them and the reader takes them. */
Test(format, end_fields_and_families)
{
	char *doc = slurp("doc/format.txt");
	char *h = slurp("src/blocks/format.h");
	char *sec = section(doc, "\nEvent families (END", "\nA log whose END");
	struct table d, hd;
	collect(sec, "^  ([0-9]+) +([a-z]+) ", 2, 1, 1, &d);
	header_enum(h, "FORMAT_FAM_", &hd);
	same("event family", &d, &hd);
	cr_assert_eq(d.n, FORMAT_FAM__MAX - 1);
	cr_assert_eq(value_of(&hd, "CALLS"), FORMAT_FAM_CALLS);
	cr_assert_eq(value_of(&hd, "SAMPLE"), FORMAT_FAM_SAMPLE);
	walk("event family", &d, format_fam_name);
	free(sec);
	sec = section(doc, "\nEND payload\n", "\nWrite errors");
	static const char *const fields[] = {
	    "uleb   events ",
	    "uleb   blocks ",
	    "uleb   bytes ",
	    "uleb   samples_dropped ",
	    "uleb   vms ",
	    "CLOCK  clock",
	    "uleb   stop_error ",
	    "str    stop_reason ",
	    "uleb   flush_waits ",
	    "uleb   flush_wait_ns ",
	    "uleb   events_dropped ",
	    "uleb   buffers_dropped ",
	    "uleb   families ",
	    "uleb   family ",
	    "uleb   dropped ",
	};
	const char *at = sec;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const char *f = strstr(at, fields[i]);
		cr_assert_not_null(f, "END field '%s' missing or out of order",
				   fields[i]);
		at = f + strlen(fields[i]);
	}
	cr_assert_not_null(strstr(sec, "(version 17) events that ljlog"));
	free(sec);
	free(h);
	free(doc);
}
