/*
** ljlog CLI: 'ljlog report' inside: the column model that the text report
** (report_text.c) and the JSON one (report_json.c) share (report_cols.c).
*/
#ifndef LJLOG_READER_CLI_REPORT_INT_H
#define LJLOG_READER_CLI_REPORT_INT_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* A column family that is not an option: sample columns shown where calls
** were not recorded. */
#define FAM_SAMPLES_ONLY 0x10000u
/* Columns shown when the log has several VMs; when there are several logs. */
#define FAM_MULTI_VM  0x20000u
#define FAM_MULTI_LOG 0x40000u

/* Column types: how a value prints. */
enum col_type {
	COL_U64,    /* a count */
	COL_I64,    /* a signed count */
	COL_TIME,   /* ts units: text "12.345 ms" or "1.234 s", JSON ns */
	COL_BYTES,  /* bytes: text with a unit (KiB, MiB), JSON as is */
	COL_IBYTES, /* signed bytes: text with a unit, JSON as is */
	COL_PCT,    /* a share: text only, "12.5%" */
	COL_STR,    /* a string */
	COL_QSTR,   /* a string: text quoted (cli_quote), JSON as a string */
	COL_OPT,    /* bytes or nothing: text "-", JSON null */
	COL_BOOL,   /* JSON only: true or false */
};

/* One value. Strings are valid until the next accessor call on the cell. */
struct cell {
	uint64_t u;
	int64_t i;
	double pct;
	const char *s;
	int none;  /* COL_OPT: no value */
	char *buf; /* room for made strings (cell_printf) */
	size_t cap;
};

/* One column of a section. */
struct column {
	const char *head; /* text heading, NULL: not in text */
	int width;	  /* text: right-aligned in width; 0: last, as is */
	int tpos;	  /* text: position, 1 first (0: not in text) */
	const char *key;  /* JSON key, NULL: not in JSON */
	unsigned type;	  /* COL_* */
	void (*get)(const struct profile *p, uint32_t row, struct cell *c);
	size_t off;   /* get NULL: the uint64_t field (COL_I64: int64_t) at off
		       in the row */
	unsigned fam; /* text: shown only when these OPTS_* families were
			 recorded (0: always); JSON keeps every key */
};

/* One table: a row set and its columns. */
struct section {
	const char *key;   /* JSON array, NULL: text only */
	const char *title; /* text: printf format of the row count (%zu) and
			      the order (%s) */
	int limited;	   /* text: at most -n rows, rows with nothing in
			      every number left out */
	uint32_t *(*rows)(const struct profile *p, size_t *n);	 /* sorted */
	const void *(*row)(const struct profile *p, uint32_t i); /* row i */
	const struct column *cols;
	size_t ncol;
};

/* Main thread. Totals over VMs. */
struct totals {
	uint64_t attach, alloc_count, alloc_bytes, free_count, free_bytes;
	uint64_t calls;
	int64_t live, peak;
};

/* What the text report's shares are of (report_text sets it): the
** functions' self time and alloc bytes, the sites' alloc bytes. */
struct report_share {
	uint64_t fn_self, fn_alloc, site_alloc;
};
extern struct report_share report_share;

/* The report's tables. */
extern const struct section report_sec_fns, report_sec_fns_alloc,
    report_sec_fns_samples, report_sec_fn_samples, report_sec_lines,
    report_sec_traces, report_sec_aborts, report_sec_sites, report_sec_vms;

/* Main thread. The functions' row set (the table that --sort reorders). */
uint32_t *report_rows_fns(const struct profile *p, size_t *n);

/* Main thread. The value of col in row r of sec. */
void report_cell_get(const struct profile *p, const struct section *sec,
		     const struct column *col, uint32_t r, struct cell *c);

/* Main thread. n as a percentage of total. */
double report_pct(uint64_t n, uint64_t total);

/* Main thread. Sum the VMs and functions. */
void report_sum(const struct profile *p, struct totals *t);

/* Main thread. Description of the time base. */
const char *report_timebase_name(unsigned tb);

/* Main thread. The sampling interval the log's options asked for (ns; 0
** when unknown); *wall: of wall-clock time, not CPU time. */
uint64_t report_sample_interval(const struct profile *p, int *wall);

/* Main thread. Time inside GC cycles in ns (LuaJIT's "pause" state, the
** idle time between cycles, left out). */
uint64_t report_gc_busy_ns(const struct profile *p);

#endif
