/*
** ljlog reader processors: stacks as folded lines.
** The lines of 'ljlog folded' ("outer;inner;leaf"), from the sample tree
** (each distinct line once, with the samples of every node that prints
** it) or from the call tree (one line per node, with its self time).
** Characters ';', ' ' and newline in names become '_'.
*/
#ifndef LJLOG_READER_PROC_STACKS_H
#define LJLOG_READER_PROC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "proc/calls.h"
#include "proc/fnid.h"
#include "proc/samples.h"

/* Receives one line (not NUL-terminated) and its weight; a non-zero return
** stops and is returned. */
typedef int (*stacks_emit)(void *ud, const char *line, size_t len,
			   uint64_t weight);

/* Any thread, after samples_finish. The sampled stacks in view
** (SAMPLES_VIEW_*, SAMPLES_ST_* flags), each distinct line once in order
** of first appearance, weighed by samples. 0, -ENOMEM or emit's return. */
int stacks_samples(const struct samples *s, unsigned view, unsigned flags,
		   stacks_emit emit, void *ud);

/* stacks_calls weights. */
enum stacks_weight {
	STACKS_SELF,  /* self time (ts units) */
	STACKS_CALLS, /* calls of the path's innermost function */
};

/* Any thread, after calls_finish. The call paths of c's call tree whose
** weight (STACKS_*) is not 0, in node order. 0, -ENOMEM or emit's
** return. */
int stacks_calls(const struct calls *c, const struct fnid *fnid,
		 unsigned weight, stacks_emit emit, void *ud);

#endif
