/*
** ljlog exports: pprof (profile.proto, gzipped), for `go tool pprof`.
** What the log has, in one profile: timer samples, allocation sites and
** the call tree, each with sample types of its own.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_EXPORT_PPROF_H
#define LJLOG_READER_EXPORT_PPROF_H

#include <stdint.h>
#include <stdio.h>

struct profile;

/* How the log sampled (from its INTRO options; zero when not sampled). */
struct pprof_opts {
	uint64_t period_ns; /* sampling interval */
	int wall;	    /* wall-clock time, not the thread's CPU time */
	int host; /* samples: merged host and Lua stacks (SAMPLES_VIEW_MERGED,
		  ** with 'trace N' frames), not Lua-first ones */
	/* A base to subtract (NULL: none): its samples follow the run's with
	** every value negated and the label pprof::base=true, as `go tool
	** pprof -diff_base` merges them. */
	const struct profile *base;
};

/* Write profile p (loaded with PROFILE_CALLTREE) to out as a
** gzipped profile.proto. 0, -ENODATA (nothing to export: no samples, no
** allocations, no calls), -ENOMEM, or -EIO (out failed; errno says). */
int export_pprof(const struct profile *p, const struct pprof_opts *o,
		 FILE *out);

/* What the pprof export leaves out, one line per item, for
** stderr and the man page. */
extern const char export_pprof_omits[];

#endif
