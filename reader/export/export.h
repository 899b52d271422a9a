/*
** ljlog reader exports: views in the tools users open (speedscope, Chrome
** trace events). Each format is one writer over one decoding pass; this
** header is what they share: the pass (the profile's processors plus the
** writer's own sink and frame observer), the progress line, time in ns.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_EXPORT_EXPORT_H
#define LJLOG_READER_EXPORT_EXPORT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decode/decode.h"
#include "export/json.h"
#include "proc/calls.h"
#include "profile/profile.h"

/* A writer's result when the log holds nothing its format shows (message
** in err). */
#define EXPORT_EMPTY (-ENOMSG)

/* A writer keeps what it writes from a log under this many times the
** log's size (with EXPORT_MIN_BUDGET at least): the events of a calls log
** are aggregated or left out past it, and it says so in the note. */
#define EXPORT_SIZE_RATIO 8u
#define EXPORT_MIN_BUDGET (256u << 10)

/* Options of a run. */
struct export_opts {
	int progress;	 /* a progress line on stderr (the CLI decides when) */
	size_t snapshot; /* heapsnapshot: the snapshot's index, 0 the last */
	int host; /* samples: merged host and Lua stacks (SAMPLES_VIEW_MERGED),
		  ** not Lua-first ones */
	/* The sampling interval (ns, 0 unknown) that a log's INTRO options
	** name, *wall set for wall-clock time; NULL: unknown. */
	uint64_t (*sample_interval)(const char *options, int *wall);
	/* Several logs to export as one (profile_decode_logs), npath of
	** them; 0: the one path the writer is given. */
	const char *const *paths;
	size_t npath;
	/* Narrowing (profile_narrow): a window, stack filters; none when
	** narrow is 0. */
	int narrow, win;
	const char *focus, *ignore;
	uint64_t from_ns, to_ns;
	/* Set by the writer: what it left out to keep within its budget
	** (empty: nothing), for stderr. NULL: not wanted. */
	char *note;
	size_t notelen;
};

/* One decoding pass. */
struct export_pass {
	struct profile *p;	 /* processors, finished after the pass */
	struct decode_sink sink; /* the writer's own (after the profile's) */
	struct calls_obs obs;	 /* the writer's frame observer, or zero */
	unsigned flags;		 /* PROFILE_* for the profile */
	/* From the INTRO block, during the pass. */
	int have_intro;
	uint64_t t0;	    /* INTRO clock counter >> ts_shift: time 0 */
	double ns_per_tick; /* from counter_hz or the counter kind */
	/* Progress. */
	const struct export_opts *opts;
	uint64_t size; /* of the files */
	uint64_t done; /* of the files before the one being read */
	uint64_t *sizes;
	size_t nintro; /* INTRO blocks seen: the log being read + 1 */
	int shown;     /* last percentage shown, -1 none */
};

/* Decode path (or o->paths) into pass->p (created here)
** feeding pass->sink and pass->obs too, then finish the profile. Returns what decode_run
** does (0, -ENODATA truncated, -EBADMSG corrupt, ...), message in err;
** pass->p is set whenever the file could be opened. */
int export_pass_run(struct export_pass *pass, const char *path,
		    const struct export_opts *o, char *err, size_t errlen);

/* Free the pass's profile. */
void export_pass_free(struct export_pass *pass);

/* The bytes a writer may write for the log of pass (set once
** the pass has started): EXPORT_SIZE_RATIO times its size. */
uint64_t export_budget(const struct export_pass *pass);

/* ts units to ns since time 0, by the INTRO's rate (usable
** during the pass; the profile's final rate may differ a little). */
static inline double export_ns_intro(const struct export_pass *x, uint64_t t)
{
	return ((double)t - (double)x->t0) * x->ns_per_tick;
}

/* After the pass. ts units to ns since time 0, by the
** profile's time base (what `ljlog report` uses). */
static inline double export_ns(const struct export_pass *x, uint64_t t)
{
	return ((double)t - (double)x->t0) * x->p->ns_per_tick;
}

/* -- Formats ------------------------------------------------------------------ */

/* Write path's log to out in a format. Returns what
** export_pass_run does (the file is written for a truncated or corrupt
** log too, from its valid part), EXPORT_EMPTY, -ENOMEM or -EIO (writing
** out failed); message in err. */
int export_speedscope(const char *path, FILE *out, const struct export_opts *o,
		      char *err, size_t errlen);
int export_chrome(const char *path, FILE *out, const struct export_opts *o,
		  char *err, size_t errlen);

#endif
