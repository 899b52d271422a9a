/*
** ljlog exports: a self-contained HTML flame graph.
** The page (reader/export/flame.html: markup, CSS and script of our own,
** no network request) with the profile's trees embedded as JSON.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_EXPORT_FLAME_H
#define LJLOG_READER_EXPORT_FLAME_H

#include <stdio.h>

struct profile;

/* Write the flame page of profile p (loaded with
** PROFILE_CALLTREE) to out, titled title: one view per kind of weight the
** log has (samples, call time, allocated bytes), each a tree of frames
** aggregated by path. Samples are Lua-first stacks (SAMPLES_VIEW_LUA_FIRST),
** with host set their merged host and Lua stacks (SAMPLES_VIEW_MERGED).
** With base (loaded as p was), a differential page: each node also
** carries the base's weight by the same path ("base" in each view),
** frames are as wide as p says and coloured by the change of their share.
** 0, -ENODATA (nothing to show), -ENOMEM, or -EIO (out failed; errno
** says). */
int export_flame(const struct profile *p, const struct profile *base,
		 const char *title, int host, FILE *out);

/* Write s[0..len) to out as a JSON string literal that is safe
** inside an HTML <script> element: '<', '>' and '&' as \u escapes (no
** "</script>", no "<!--"), control characters escaped, bytes that are not
** valid UTF-8 as \u00XX. */
void flame_json_str(FILE *out, const char *s, size_t len);

#endif
