/*
** ljlog reader exports: one heap snapshot as Chrome DevTools' .heapsnapshot
** JSON (the Memory tab, memlab, heap-snapshot-toolkit).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_EXPORT_HEAPSNAPSHOT_H
#define LJLOG_READER_EXPORT_HEAPSNAPSHOT_H

#include <stddef.h>
#include <stdio.h>

#include "export/export.h"

/* Write snapshot o->snapshot of path's log (its index from 1,
** as `ljlog heap` lists them; 0: the last complete one) to out. Returns 0,
** -ENODATA (the log is truncated; a complete snapshot was written),
** -EBADMSG (corrupt after the snapshot), EXPORT_EMPTY (no such complete
** snapshot: nothing written), -ENOMEM, -EOVERFLOW (an ID or size beyond
** the format's 32 bits) or -EIO; message in err. */
int export_heapsnapshot(const char *path, FILE *out,
			const struct export_opts *o, char *err, size_t errlen);

/* Node ID of a heap ID: odd, as V8 gives JS objects (the
** comparison view matches objects of two snapshots by it). Synthetic nodes
** have even IDs. */
static inline unsigned long long heapsnapshot_node_id(unsigned long long id)
{
	return 2 * id + 1;
}

#endif
