/*
** Unit tests: reader/export/ (the frame observer the exports ride on, the
** speedscope and Chrome writers on made-up logs, the number writer).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/export.h"
#include "export/heapsnapshot.h"
#include "logbuild.h"
#include "profile/profile.h"
#include "block/reader.h"

/* IDs of the mapping. */
enum { VM = 1, A = 2, B = 3, MAIN = 7, CO = 8 };

/* Test thread. A log with Lua functions A and B, coroutines MAIN and CO. */
static void begin_version(struct lblog *l, uint64_t version)
{
	struct lbmap m;
	lblog_init(l);
	lblog_intro_version(l, 99, version);
	map_begin(&m, VM);
	map_vm(&m, VM, 555, 900, 0);
	map_proto(&m, A, "@t.lua", 1, 5);
	map_proto(&m, B, "@t.lua", 10, 5);
	map_co(&m, MAIN, FORMAT_CO_MAIN);
	map_co(&m, CO, 0);
	lblog_mapping(l, &m);
}

/* Test thread. begin_version for this format version. */
static void begin(struct lblog *l)
{
	begin_version(l, FORMAT_VERSION);
}

/* Test thread. A runs on the first coroutine and resumes CO, where B runs,
** yields (t 30), is resumed (t 40) and returns (t 50); A returns at t 60. */
static const char *coroutine_log(void)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);	 /* t 0 */
	ev_switch(&e, CO, 10);	 /* t 10: resume CO */
	ev_enter(&e, 1, B, 10);	 /* t 20 */
	ev_switch(&e, MAIN, 10); /* t 30: CO yields to the main coroutine */
	ev_switch(&e, CO, 10);	 /* t 40: resumed */
	ev_exit(&e, 1, 10);	 /* t 50: B returns */
	ev_switch(&e, MAIN, 5);	 /* t 55 */
	ev_exit(&e, 1, 5);	 /* t 60: A returns */
	lblog_events(&l, VM, 0, &e);
	lblog_end(&l);
	const char *path = lblog_write(&l);
	lblog_free(&l);
	return path;
}

/* What the observer saw, as text. */
struct seen {
	struct profile *p;
	char buf[1024];
	size_t len;
};

/* Test thread. calls_obs: one "O<track>:<fn>@<t>[r]" per open. */
static void seen_open(void *ud, uint32_t vm, uint32_t track, uint32_t fn,
		      uint64_t t, int resumed)
{
	struct seen *s = ud;
	(void)vm;
	s->len += snprintf(s->buf + s->len, sizeof s->buf - s->len,
			   "O%u:%s@%llu%s ", track, s->p->fnid.fns[fn].name,
			   (unsigned long long)t, resumed ? "r" : "");
}

/* Test thread. calls_obs: one "C<track>:<fn>@<t>[s]" per close. */
static void seen_close(void *ud, uint32_t vm, uint32_t track, uint32_t fn,
		       uint64_t t, int suspended)
{
	struct seen *s = ud;
	(void)vm;
	s->len += snprintf(s->buf + s->len, sizeof s->buf - s->len,
			   "C%u:%s@%llu%s ", track, s->p->fnid.fns[fn].name,
			   (unsigned long long)t, suspended ? "s" : "");
}

Test(export, observer_closes_on_yield_and_reopens_on_resume)
{
	const char *path = coroutine_log();
	struct seen s;
	struct reader *r;
	struct decode *d;
	struct decode_sink sink;
	char err[256];
	memset(&s, 0, sizeof s);
	cr_assert_eq(profile_new(&s.p, 0), 0);
	s.p->calls.obs.ud = &s;
	s.p->calls.obs.open = seen_open;
	s.p->calls.obs.close = seen_close;
	profile_sink(s.p, &sink);
	cr_assert_eq(decode_new(&d, &sink), 0);
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0, "%s", err);
	cr_assert_eq(decode_run(r, d, err, sizeof err), 0, "%s", err);
	cr_assert_eq(profile_finish(s.p), 0);
	/* Track 0: the coroutine before the first SWITCH, named main when
	** the log switched back to MAIN; B's frame closes while CO is
	** suspended and opens again when it is resumed. */
	cr_assert_str_eq(s.buf,
			 "O0:t.lua:1@0 O8:t.lua:10@20 C8:t.lua:10@30s "
			 "O8:t.lua:10@40r C8:t.lua:10@50 C0:t.lua:1@60 ");
	cr_assert(calls_vm_co0_main(&s.p->calls, VM));
	reader_close(r);
	decode_free(d);
	profile_free(s.p);
	unlink(path);
}

/* Test thread. Export path in a format into a string (caller frees). */
static char *export_str(int (*fn)(const char *, FILE *,
				  const struct export_opts *, char *, size_t),
			const char *path, int want_rc)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	struct export_opts o = {0};
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	int rc = fn(path, f, &o, err, sizeof err);
	fclose(f);
	cr_assert_eq(rc, want_rc, "rc %d: %s", rc, err);
	return buf;
}

/* Any thread. Occurrences of needle in s. */
static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(export, speedscope_profiles_per_coroutine)
{
	const char *path = coroutine_log();
	char *s = export_str(export_speedscope, path, 0);
	cr_assert(strstr(s, "\"name\":\"VM 1 main coroutine\""), "%s", s);
	cr_assert(strstr(s, "\"name\":\"VM 1 coroutine 8\""), "%s", s);
	/* A: open, close; B: open, close at the yield, open, close. */
	cr_assert_eq(count(s, "\"type\":\"O\""), 3, "%s", s);
	cr_assert_eq(count(s, "\"type\":\"C\""), 3, "%s", s);
	/* Times in ns from the INTRO's clock; frames with file and line. */
	cr_assert(strstr(s, "{\"name\":\"t.lua:10\",\"file\":\"t.lua\","
			    "\"line\":10}"),
		  "%s", s);
	cr_assert(strstr(s, "\"$schema\":\"https://www.speedscope.app/"
			    "file-format-schema.json\""));
	free(s);
	unlink(path);
}

Test(export, chrome_tracks_named_and_balanced)
{
	const char *path = coroutine_log();
	char *s = export_str(export_chrome, path, 0);
	cr_assert_eq(count(s, "\"ph\":\"B\""), 3, "%s", s);
	cr_assert_eq(count(s, "\"ph\":\"E\""), 3, "%s", s);
	cr_assert(strstr(s, "\"args\":{\"name\":\"main coroutine\"}"), "%s", s);
	cr_assert(strstr(s, "\"args\":{\"name\":\"coroutine 8\"}"), "%s", s);
	cr_assert(strstr(s, "\"name\":\"process_name\""), "%s", s);
	free(s);
	unlink(path);
}

Test(export, nothing_to_export)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_LUA, A, 2, 64, 0x1000, 5);
	lblog_events(&l, VM, 0, &e);
	lblog_end(&l);
	const char *path = lblog_write(&l);
	lblog_free(&l);
	/* Chrome shows no allocation; speedscope shows its site. */
	free(export_str(export_chrome, path, EXPORT_EMPTY));
	char *s = export_str(export_speedscope, path, 0);
	cr_assert(strstr(s, "\"unit\":\"bytes\""), "%s", s);
	cr_assert(strstr(s, "\"weights\":[64]"), "%s", s);
	free(s);
	unlink(path);
}

/* Test thread. One OBJECT record's head (its references follow); its
** address (version 10) 0x100 past the one before. */
static void hobj(struct lb *p, struct lbheap *h, uint64_t id, unsigned type,
		 uint64_t size, unsigned flags, const char *text)
{
	lbh_obj(p, h, id, h->addr + 0x100, type, size, flags, text);
}

/* Test thread. A log with one heap snapshot: table 1 (metatable named
** Foo) holds string 2 (by key, weakly by key, by a key 1.5) and table 3
** (weakly at [1], at key 7); table 4 is unreachable; a part of 100 bytes. */
static const char *heap_log(uint64_t version)
{
	struct lblog l;
	struct lb p = {0};
	struct lbheap h;
	begin_version(&l, version);
	lbh_begin(&h, version);
	lb_uleb(&p, VM);
	lb_uleb(&p, 1);
	hobj(&p, &h, 1, FORMAT_HTYPE_TABLE, 64, 0, "array 1 hash 4 mt Foo");
	lb_u8(&p, FORMAT_HREF_FIELD_STR);
	lb_str(&p, "s");
	lbh_target(&p, &h, 2);
	lb_u8(&p, FORMAT_HREF_FIELD_STR | FORMAT_HREF_WEAK);
	lb_str(&p, "w");
	lbh_target(&p, &h, 2);
	lb_u8(&p, FORMAT_HREF_ARRAY | FORMAT_HREF_WEAK);
	lbh_index(&p, &h, 1);
	lbh_target(&p, &h, 3);
	lb_u8(&p, FORMAT_HREF_FIELD_NUM);
	lb_str(&p, "7");
	lbh_target(&p, &h, 3);
	lb_u8(&p, FORMAT_HREF_FIELD_NUM);
	lb_str(&p, "1.5");
	lbh_target(&p, &h, 2);
	lb_u8(&p, 0);
	hobj(&p, &h, 2, FORMAT_HTYPE_STRING, 26, 0, "a\"b\x01\xff");
	lb_u8(&p, 0);
	hobj(&p, &h, 3, FORMAT_HTYPE_TABLE, 40, 0, "array 0 hash 0");
	lb_u8(&p, 0);
	hobj(&p, &h, 4, FORMAT_HTYPE_TABLE, 40, FORMAT_HOBJ_UNREACHABLE,
	     "array 0 hash 0");
	lb_u8(&p, 0);
	lb_u8(&p, FORMAT_HEAP_ROOT);
	lb_str(&p, "registry");
	lb_uleb(&p, 1);
	lb_u8(&p, FORMAT_HEAP_SUMMARY);
	lb_uleb(&p, 100); /* CLOCK */
	lb_uleb(&p, 100);
	lb_uleb(&p, 100);
	lb_u8(&p, 0);
	lb_uleb(&p, 4);	  /* objects */
	lb_uleb(&p, 170); /* bytes */
	lb_uleb(&p, 1);	  /* unreachable */
	lb_uleb(&p, 270); /* gc_total */
	lb_uleb(&p, 1);
	lb_str(&p, "string table");
	lb_uleb(&p, 100);
	lb_uleb(&p, 5); /* pause_ns */
	lblog_block(&l, FORMAT_KIND_HEAP, p.buf, p.len);
	lb_free(&p);
	lblog_end(&l);
	const char *path = lblog_write(&l);
	lblog_free(&l);
	return path;
}

Test(export, heapsnapshot_same_from_every_heap_encoding)
{
	/* Version 16 writes IDs, targets and array indexes as differences
	** and a table's sizes as numbers: the same snapshot written by
	** version 15 and 10 exports the same. */
	const char *path = heap_log(FORMAT_VERSION);
	char *now = export_str(export_heapsnapshot, path, 0);
	unlink(path);
	for (uint64_t v = 10; v <= 15; v += 5) {
		path = heap_log(v);
		char *old = export_str(export_heapsnapshot, path, 0);
		cr_assert_str_eq(old, now, "version %llu",
				 (unsigned long long)v);
		free(old);
		unlink(path);
	}
	free(now);
}

Test(export, heapsnapshot_nodes_edges_strings)
{
	const char *path = heap_log(FORMAT_VERSION);
	char *s = export_str(export_heapsnapshot, path, 0);
	/* Nodes: root, (registry), (unreachable), (VM allocations), objects
	** 1-4 (ID 2 x id + 1), the part. Strings interned in the order met. */
	cr_assert(strstr(s, "\"node_count\":9,\"edge_count\":11,"), "%s", s);
	cr_assert(strstr(s, "\"nodes\":[9,10,2,0,3,0,0,\n9,7,8,0,1,0,0,\n"
			    "9,11,22,0,1,0,0,\n9,12,24,0,1,0,0,\n"
			    "3,0,3,64,5,0,0,\n2,5,5,26,0,0,0,\n"
			    "3,6,7,40,0,0,0,\n3,6,9,40,0,0,0,\n"
			    "8,9,28,100,0,0,0]"),
		  "%s", s);
	/* Root -> synthetic nodes; registry -> 1; unreachable -> 4; parts;
	** then 1's: s, w (weak to a string: strong), [1] weak, [7], [1.5]. */
	cr_assert(strstr(s, "\"edges\":[1,0,7,\n1,1,14,\n1,2,21,\n"
			    "3,8,28,\n1,0,49,\n3,9,56,\n"
			    "2,1,35,\n2,2,35,\n6,3,42,\n1,7,42,\n2,4,35]"),
		  "%s", s);
	cr_assert(strstr(s, "\"strings\":[\"Foo\",\n\"s\",\n\"w\",\n"
			    "\"[1]\",\n\"[1.5]\",\n\"a\\\"b\\u0001\\u00ff\",\n"
			    "\"table\",\n\"(registry)\",\n\"registry\",\n"
			    "\"(string table)\",\n\"\",\n\"(unreachable)\",\n"
			    "\"(VM allocations)\"]"),
		  "%s", s);
	free(s);
	/* No snapshot there: nothing written. */
	char *e = NULL, err[256];
	size_t len = 0;
	struct export_opts o = {0};
	o.snapshot = 2;
	FILE *f = open_memstream(&e, &len);
	int rc = export_heapsnapshot(path, f, &o, err, sizeof err);
	fclose(f);
	cr_assert_eq(rc, EXPORT_EMPTY, "rc %d", rc);
	cr_assert_eq(len, 0);
	cr_assert(strstr(err, "no snapshot 2"), "%s", err);
	free(e);
	unlink(path);
}

Test(export, heapsnapshot_names_functions_by_their_last_name)
{
	struct lblog l;
	struct lbmap m;
	struct lb p = {0};
	struct lbheap h;
	begin(&l);
	lbh_begin(&h, 0);
	map_begin(&m, VM);
	map_cfunc(&m, 9, 0x401234, "host+0x1234", "/usr/bin/host");
	lblog_mapping(&l, &m);
	lb_uleb(&p, VM);
	lb_uleb(&p, 1);
	hobj(&p, &h, 1, FORMAT_HTYPE_FUNCTION, 40, 0, "t.lua:1");
	lb_u8(&p, 0);
	hobj(&p, &h, 2, FORMAT_HTYPE_FUNCTION, 40, 0, "C 0x401234");
	lb_u8(&p, 0);
	lb_u8(&p, FORMAT_HEAP_ROOT);
	lb_str(&p, "registry");
	lb_uleb(&p, 1);
	lb_u8(&p, FORMAT_HEAP_ROOT);
	lb_str(&p, "registry");
	lb_uleb(&p, 2);
	lb_u8(&p, FORMAT_HEAP_SUMMARY);
	lb_uleb(&p, 100); /* CLOCK */
	lb_uleb(&p, 100);
	lb_uleb(&p, 100);
	lb_u8(&p, 0);
	lb_uleb(&p, 2);	 /* objects */
	lb_uleb(&p, 80); /* bytes */
	lb_uleb(&p, 0);	 /* unreachable */
	lb_uleb(&p, 80); /* gc_total */
	lb_uleb(&p, 0);	 /* parts */
	lb_uleb(&p, 5);	 /* pause_ns */
	lblog_block(&l, FORMAT_KIND_HEAP, p.buf, p.len);
	lb_free(&p);
	/* Their names, found after the snapshot. */
	map_begin(&m, VM);
	map_name(&m, A, "fib");
	map_name(&m, 9, "worker.stats");
	lblog_mapping(&l, &m);
	lblog_end(&l);
	const char *path = lblog_write(&l);
	lblog_free(&l);
	char *s = export_str(export_heapsnapshot, path, 0);
	cr_assert(strstr(s, "\"fib (t.lua:1)\""), "%s", s);
	cr_assert(strstr(s, "\"worker.stats (C 0x401234)\""), "%s", s);
	cr_assert_null(strstr(s, "host+0x1234"), "%s", s);
	free(s);
	unlink(path);
}

Test(export, missing_file)
{
	char err[256];
	struct export_opts o = {0};
	int rc = export_speedscope("/nonexistent/x.ljlog", stdout, &o, err,
				   sizeof err);
	cr_assert_eq(rc, -ENOENT, "rc %d", rc);
	cr_assert(strstr(err, "/nonexistent/x.ljlog"), "%s", err);
}

/* Test thread. json_put_num into a string. */
static void num_is(double v, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_put_num(f, v);
	fclose(f);
	cr_assert_str_eq(buf, want, "%g: %s, want %s", v, buf, want);
	free(buf);
}

Test(export, numbers)
{
	num_is(2, "2");
	num_is(1.5, "1.5");
	num_is(1234.5678, "1234.568");
	num_is(-0.0001, "0");
	num_is(0.25, "0.25");
	num_is(1.0 / 0.0, "0");
}
