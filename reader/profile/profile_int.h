/*
** ljlog reader library, layer 3: what the profile's own files share
** (profile.c, profile_narrow.c), not for its users.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROFILE_INT_H
#define LJLOG_READER_PROFILE_INT_H

#include "profile/profile.h"

/* The first INTRO: the window in ts units (p->win). */
void narrow_intro(struct profile *p, const struct decode_intro *in);

/* Whether an event passes the window (allocations and frees
** outside it do not). */
int narrow_event(const struct profile *p, const struct decode_event *ev);

/* Whether a sample passes the window and the stack filters;
** one that does not is counted in p->narrowed. */
int narrow_sample(struct profile *p, const struct decode_sample *s);

/* After join: the call paths and sites that do not pass the
** stack filters left out, the functions' call figures recounted. 0 or
** -ENOMEM. */
int narrow_finish(struct profile *p);

/* Free the compiled expressions. */
void narrow_free(struct profile *p);

#endif
