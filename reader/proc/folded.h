/*
** ljlog reader processors: stacks as folded lines.
** The lines of 'ljlog folded' ("outer;inner;leaf"), from the sample tree
** (each distinct line once, with the samples of every node that prints
** it) or from the call tree (one line per node, with its self time).
** Characters ';', ' ' and newline in names become '_'.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_FOLDED_H
#define LJLOG_READER_PROC_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "proc/calls.h"
#include "proc/fnid.h"
#include "proc/samples.h"

/* Receives one line (not NUL-terminated) and its weight; a non-zero return
** stops and is returned. */
typedef int (*folded_emit)(void *ud, const char *line, size_t len,
			   uint64_t weight);

/* After samples_finish. The sampled stacks in view
** (SAMPLES_VIEW_*, SAMPLES_ST_* flags), each distinct line once in order
** of first appearance, weighed by samples. 0, -ENOMEM or emit's return. */
int folded_samples(const struct samples *s, unsigned view, unsigned flags,
		   folded_emit emit, void *ud);

/* folded_calls weights. */
enum folded_weight {
	FOLDED_SELF,  /* self time (ts units) */
	FOLDED_CALLS, /* calls of the path's innermost function */
};

/* After calls_finish. The call paths of c's call tree whose
** weight (FOLDED_*) is not 0, in node order. 0, -ENOMEM or emit's
** return. */
int folded_calls(const struct calls *c, const struct fnid *fnid,
		 unsigned weight, folded_emit emit, void *ud);

#endif
