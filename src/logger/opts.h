/*
** ljlog options: the LUAJIT_PROFILE grammar, log[:opt[,opt]...].
** Shared by the profiler and the ljlog CLI (record validates before running).
*/
#ifndef LJLOG_LOGGER_OPTS_H
#define LJLOG_LOGGER_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Event families. */
#define OPTS_CALLS  0x1u
#define OPTS_ALLOC  0x2u
#define OPTS_GC	    0x4u
#define OPTS_SAMPLE 0x8u
#define OPTS_JIT    0x10u
/* With no family named: timer samples, GC phases and sampled allocation,
** which leave the JIT on and cost a few percent (README, "Costs"). */
#define OPTS_DEFAULTS		(OPTS_SAMPLE | OPTS_GC | OPTS_ALLOC)
#define OPTS_DEFAULT_ALLOC_RATE (512u << 10)

#define OPTS_FILE_MAX		4096
#define OPTS_DEFAULT_FILE	"ljlog-%p.ljlog"
#define OPTS_DEFAULT_BUFFER	(512u << 10)
#define OPTS_MIN_BUFFER		(4u << 10)
#define OPTS_MAX_BUFFER		(1u << 30)
#define OPTS_DEFAULT_SAMPLE_NS	1000000ull
#define OPTS_MIN_SAMPLE_NS	100000ull
#define OPTS_MAX_SAMPLE_NS	1000000000ull
#define OPTS_DEFAULT_FLUSH_NS	1000000000ull
#define OPTS_MAX_ALLOC_RATE	(1ull << 30)
#define OPTS_MIN_SNAP_NS	1000000ull /* snapshot=INTERVAL, at least */

/* Parsed options. */
struct opts {
	unsigned events;     /* OPTS_* families */
	int keepjit;	     /* calls: leave the JIT on */
	int lines;	     /* sample: a snapshot per line, not per function */
	int nolines;	     /* sample, alloc: no snapshots of ours */
	int vmtrim;	     /* let LuaJIT's allocator trim its heap */
	int nowriter;	     /* encode and write on the VM's thread */
	int nohost;	     /* sample: no host (C) stacks */
	int wall;	     /* sample: wall-clock time, not CPU time */
	uint64_t sample_ns;  /* sample: interval of thread CPU time */
	uint64_t alloc_rate; /* alloc=RATE: sampled, one per RATE bytes
				     on average; 0: every allocation */
	size_t buffer;	     /* per-VM event buffer bytes */
	uint64_t flush_ns;   /* flush interval, 0: only when full */
	int snap_exit;	     /* snapshot=exit: a heap snapshot at detach */
	uint64_t snap_ns;    /* snapshot=INTERVAL: every so often, 0 none */
	int snap_signal;     /* snapshot=SIGUSR1|SIGUSR2: on it, 0 none */
	char file[OPTS_FILE_MAX]; /* output path or |COMMAND, %p not yet
				  ** expanded */
	int fd;			  /* fd=N: an inherited descriptor, else -1 */
};

/* Any context. Parse s ("log:calls,file=x" or "calls,file=x"); 0 or -EINVAL
** with a one-line message in err naming the bad option and the valid ones. */
int opts_parse(const char *s, struct opts *o, char *err, size_t errlen);

/* Any context. Parse "100ms", "1s", "500us", "250ns", "0"; 0 or -EINVAL. */
int opts_parse_duration(const char *s, size_t len, uint64_t *ns);

/* Any context. Parse "4096", "64k", "1m", "1g"; 0 or -EINVAL. */
int opts_parse_size(const char *s, size_t len, uint64_t *bytes);

/* Any context. Expand %p (pid) and %% in pattern; 0 or -ENAMETOOLONG. */
int opts_expand_file(const char *pattern, pid_t pid, char *out, size_t outlen);

/* Any context. The valid option names, for messages and --help. */
const char *opts_valid_list(void);

#endif
