/*
** ljlog CLI: 'ljlog heap' modes on a snapshot's dominator tree: --top,
** --by metatable, --by site, the holders of --diff, readable paths.
*/
#ifndef LJLOG_READER_CLI_HEAP_DOM_H
#define LJLOG_READER_CLI_HEAP_DOM_H

#include <stddef.h>
#include <stdint.h>

#include "export/json.h"
#include "proc/hsnap.h"

/* Main thread. The n largest retained sizes of snapshot k (keep[0], with
** its references); an exit status. */
int heap_top(const struct hsnap *h, size_t k, size_t n, int json);

/* Main thread. Objects and bytes of snapshot k (keep[0], with its
** references) by their metatable; an exit status. */
int heap_by_metatable(const struct hsnap *h, size_t k, size_t limit, int json);

/* Main thread. Objects and bytes of snapshot k (keep[0], joined with the
** allocation events: hsnap_sites) by allocation site, largest first; an
** exit status (1 when the snapshot can carry no sites). */
int heap_by_site(const struct hsnap *h, size_t k, size_t limit, int json);

/* Main thread. The objects of keep[1] (with references) not in keep[0],
** grouped by allocation site (when joined: hsnap_sites), by the new object
** that holds them (its path) and by their nearest old dominator (its
** path), into j (text when NULL: growth by holder first, then the sites
** and the largest new objects, at most limit rows each, 0 all); 0 or an
** exit status. */
int heap_diff_holders(const struct hsnap *h, struct json *j, size_t limit);

/* Main thread. The text line that says how many rows of n were left out
** (nothing when shown == n). */
void heap_more(size_t shown, size_t n);

/* Main thread. The readable path of the references e[0..n) of keep k. */
void heap_path_text(const struct hsnap_keep *k,
		    const struct hsnap_edge *const *e, size_t n, char *buf,
		    size_t cap);

#endif
