/*
** ljlog reader processors: stacks as folded lines.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

/* Function names and files as folded prints them: ';', ' ' and newlines
** as '_' (made once, copied per frame). */
struct names {
	char **name, **file;
	size_t *nlen, *flen;
	size_t n;
};

/* A growing string. */
struct sbuf {
	char *b;
	size_t len, cap;
};

/* A copy of s with ';', ' ' and newlines as '_'. */
static char *clean(const char *s, size_t *len)
{
	char *c = strdup(s);
	if (!c)
		return NULL;
	for (char *q = c; *q; q++)
		if (*q == ';' || *q == ' ' || *q == '\n')
			*q = '_';
	*len = strlen(c);
	return c;
}

/* Free the names. */
static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++) {
		free(nm->name[i]);
		free(nm->file[i]);
	}
	free(nm->name);
	free(nm->file);
	free(nm->nlen);
	free(nm->flen);
}

/* The cleaned names of the functions of f; 0 or -ENOMEM. */
static int names_init(struct names *nm, const struct fnid *f)
{
	size_t n = f->n ? f->n : 1;
	nm->n = 0;
	nm->name = calloc(n, sizeof *nm->name);
	nm->file = calloc(n, sizeof *nm->file);
	nm->nlen = calloc(n, sizeof *nm->nlen);
	nm->flen = calloc(n, sizeof *nm->flen);
	if (!nm->name || !nm->file || !nm->nlen || !nm->flen) {
		names_free(nm);
		return -ENOMEM;
	}
	for (; nm->n < f->n; nm->n++) {
		size_t i = nm->n;
		nm->name[i] = clean(f->fns[i].name, &nm->nlen[i]);
		nm->file[i] = clean(f->fns[i].file, &nm->flen[i]);
		if (!nm->name[i] || !nm->file[i]) {
			nm->n++;
			names_free(nm);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Append s[0..n); 0 or -ENOMEM. Nothing to append leaves sb as it is (its
** buffer may not exist yet: a corrupt log's first name can be empty). */
static int sb_put(struct sbuf *sb, const char *s, size_t n)
{
	if (!n)
		return 0;
	if (sb->len + n > sb->cap) {
		size_t cap = sb->cap ? sb->cap * 2 : 4096;
		while (cap < sb->len + n)
			cap *= 2;
		char *b = realloc(sb->b, cap);
		if (!b)
			return -ENOMEM;
		sb->b = b;
		sb->cap = cap;
	}
	memcpy(sb->b + sb->len, s, n);
	sb->len += n;
	return 0;
}

/* Append the frames fr[0..nf) of a view, ';'-separated; 0 or
** -ENOMEM. */
static int put_frames(struct sbuf *sb, const struct samples *s,
		      const struct names *nm, const struct samples_frame *fr,
		      size_t nf)
{
	for (size_t i = 0; i < nf; i++) {
		const struct samples_frame *f = &fr[i];
		char name[64];
		int e = i ? sb_put(sb, ";", 1) : 0;
		switch (f->kind) {
		case SAMPLES_FR_FN:
			e |= sb_put(sb, nm->name[f->fn], nm->nlen[f->fn]);
			break;
		case SAMPLES_FR_LINE:
			e |= sb_put(sb, nm->file[f->fn], nm->flen[f->fn]);
			snprintf(name, sizeof name, ":%" PRIu64, f->line);
			e |= sb_put(sb, name, strlen(name));
			break;
		default:
			samples_frame_name(s, f, name, sizeof name);
			e |= sb_put(sb, name, strlen(name));
			break;
		}
		if (e)
			return -ENOMEM;
	}
	return 0;
}

/* Sampled stacks in view: distinct lines with their samples. */
int folded_samples(const struct samples *s, unsigned view, unsigned flags,
		   folded_emit emit, void *ud)
{
	struct samples_frame *fr = malloc(SAMPLES_STACK_MAX * sizeof *fr);
	struct intern lines = INTERN_INIT; /* line -> index in count */
	uint64_t *count = NULL;
	size_t cap = 0;
	struct sbuf sb = {0};
	struct names nm;
	int rc = -ENOMEM;
	if (names_init(&nm, s->fnid) < 0) {
		free(fr);
		return -ENOMEM;
	}
	if (!fr)
		goto out;
	for (uint32_t n = 1; n < s->nnode; n++) {
		uint64_t c = s->nodes[n].samples;
		if (!c)
			continue;
		size_t nf = samples_stack(s, n, view, flags, fr);
		sb.len = 0;
		if (put_frames(&sb, s, &nm, fr, nf) < 0)
			goto out;
		size_t had = intern_count(&lines);
		int64_t i = intern_put(&lines, sb.b ? sb.b : "", sb.len);
		if (i < 0)
			goto out;
		if ((size_t)i < had) {
			count[i] += c;
			continue;
		}
		if ((size_t)i == cap) {
			size_t nc = cap ? cap * 2 : 256;
			uint64_t *q = realloc(count, nc * sizeof *q);
			if (!q)
				goto out;
			count = q;
			cap = nc;
		}
		count[i] = c;
	}
	rc = 0;
	for (size_t i = 0; !rc && i < intern_count(&lines); i++) {
		size_t len;
		const char *l = intern_str(&lines, (uint32_t)i, &len);
		rc = emit(ud, l, len, count[i]);
	}
out:
	intern_free(&lines);
	free(count);
	free(sb.b);
	free(fr);
	names_free(&nm);
	return rc;
}

/* Call paths with their self time or calls. */
int folded_calls(const struct calls *c, const struct fnid *fnid,
		 unsigned weight, folded_emit emit, void *ud)
{
	struct names nm;
	struct sbuf sb = {0};
	int rc = -ENOMEM;
	if (names_init(&nm, fnid) < 0)
		return -ENOMEM;
	uint32_t *path = malloc(c->nnode * sizeof *path);
	if (!path)
		goto out;
	rc = 0;
	for (uint32_t n = 1; !rc && n < c->nnode; n++) {
		uint64_t w = weight == FOLDED_CALLS ? c->nodes[n].calls
						    : c->nodes[n].self;
		if (!w)
			continue;
		size_t depth = 0;
		for (uint32_t m = n; m != 0; m = c->nodes[m].parent)
			path[depth++] = m;
		sb.len = 0;
		while (depth--) {
			uint32_t fn = c->nodes[path[depth]].fn;
			if (sb_put(&sb, nm.name[fn], nm.nlen[fn]) < 0 ||
			    (depth && sb_put(&sb, ";", 1) < 0)) {
				rc = -ENOMEM;
				goto out;
			}
		}
		rc = emit(ud, sb.b ? sb.b : "", sb.len, w);
	}
out:
	free(path);
	free(sb.b);
	names_free(&nm);
	return rc;
}
