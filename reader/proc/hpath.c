/*
** ljlog reader processors: readable heap paths.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/hpath.h"

#include <stdio.h>
#include <string.h>

#include "blocks/format.h"

/* Whether s[0..len) is a Lua name and no keyword. */
static int is_name(const char *s, size_t len)
{
	static const char *const kw[] = {
	    "and",   "break", "do",	  "else", "elseif", "end",
	    "false", "for",   "function", "goto", "if",	    "in",
	    "local", "nil",   "not",	  "or",	  "repeat", "return",
	    "then",  "true",  "until",	  "while"};
	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
		if (strlen(kw[i]) == len && !memcmp(kw[i], s, len))
			return 0;
	return 1;
}

/* See hpath.h. */
void hpath_key(const char *s, size_t len, char *buf, size_t cap)
{
	if (is_name(s, len)) {
		snprintf(buf, cap, ".%.*s", (int)len, s);
		return;
	}
	size_t o = 0;
	if (cap < 8) {
		if (cap)
			buf[0] = '\0';
		return;
	}
	buf[o++] = '[';
	buf[o++] = '"';
	for (size_t i = 0; i < len && o + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 32 || c == 127) {
			o += (size_t)snprintf(buf + o, cap - o, "\\%u", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '"';
	buf[o++] = ']';
	buf[o] = '\0';
}

/* The text of object id in k ("" unknown). */
static const char *text_of(const struct hsnap_keep *k, uint64_t id)
{
	const struct hsnap_obj *o = hsnap_find(k, id);
	return o ? o->text : "";
}

/* Object id's text as a frame's function: a chunk's own function,
** "app.lua:0", as "main chunk of app.lua"; into buf (cap bytes). */
static const char *fn_text(const struct hsnap_keep *k, uint64_t id, char *buf,
			   size_t cap)
{
	const struct hsnap_obj *o = hsnap_find(k, id);
	const char *t = o ? o->text : "";
	size_t n = strlen(t);
	if (o && o->type == FORMAT_HTYPE_FUNCTION && n > 2 &&
	    !strcmp(t + n - 2, ":0")) {
		snprintf(buf, cap, "%s of %.*s", DECODE_MAIN_CHUNK,
			 (int)(n - 2), t);
		return buf;
	}
	return t;
}

/* The name of a root as the start of a path. */
static const char *root_name(const char *name)
{
	if (!strcmp(name, "main thread env"))
		return "_G";
	return name;
}

/* Append (fmt with a = the path so far) to the path p. */
static void wrap(char *p, size_t cap, const char *pre, const char *post)
{
	char tmp[1024];
	snprintf(tmp, sizeof tmp, "%s%s%s", pre, p, post);
	snprintf(p, cap, "%s", tmp);
}

/* Append the step s to p, in parentheses first when p is a
** phrase ("metatable of x"). */
static void append(char *p, size_t cap, int *phrase, const char *s)
{
	if (*phrase) {
		wrap(p, cap, "(", ")");
		*phrase = 0;
	}
	size_t l = strlen(p);
	if (l < cap)
		snprintf(p + l, cap - l, "%s", s);
}

/* The registry's _LOADED at the start of path p is package.loaded, as a
** program names it. */
static void loaded_name(char *p, size_t cap)
{
	static const char loaded[] = "registry._LOADED";
	size_t ll = sizeof loaded - 1;
	char tmp[1024];
	if (strncmp(p, loaded, ll) ||
	    (p[ll] != '.' && p[ll] != '[' && p[ll] != '\0'))
		return;
	snprintf(tmp, sizeof tmp, "package.loaded%s", p + ll);
	snprintf(p, cap, "%s", tmp);
}

/* A path reached only through code (hsnap_code_ref: paths take that
** last): it starts at its last constant, "constant of trace 3" into p
** (a phrase), with what holds it in *held ("[compiled code] ", "[code] ")
** and the index of the reference after it returned; else 0, p as is. */
static size_t code_start(const struct hsnap_keep *k,
			 const struct hsnap_edge *const *e, size_t n, char *p,
			 size_t cap, int *phrase, const char **held)
{
	for (size_t i = n; i-- > 0;) {
		unsigned kind = e[i]->kind;
		if (kind != FORMAT_HREF_CONST &&
		    kind != FORMAT_HREF_TRACE_CONST)
			continue;
		int pt = kind == FORMAT_HREF_CONST;
		*held = pt ? "[code] " : "[compiled code] ";
		snprintf(p, cap, "constant of %s%.200s", pt ? "function " : "",
			 text_of(k, e[i]->src));
		*phrase = 1;
		return i + 1;
	}
	return 0;
}

/* See hpath.h. */
void hpath_render(const struct hsnap_keep *k, const struct hsnap_edge *const *e,
		  size_t n, int cut, char *buf, size_t cap)
{
	char p[1024], step[512], tmp[512], fn[256];
	int phrase = 0; /* p ends with a phrase: "upvalue x of f (a:1)" */
	const char *held = "";
	p[0] = '\0';
	if (cut)
		snprintf(p, sizeof p, "...");
	size_t from = code_start(k, e, n, p, sizeof p, &phrase, &held);
	for (size_t i = from; i < n; i++) {
		const struct hsnap_edge *r = e[i];
		const struct hsnap_obj *src = hsnap_find(k, r->src);
		int nl = (int)(r->namelen > 200 ? 200 : r->namelen);
		switch (r->kind) {
		case 0: snprintf(p, sizeof p, "%s", root_name(r->name)); break;
		case FORMAT_HREF_ARRAY:
		case FORMAT_HREF_FIELD_NUM:
		case FORMAT_HREF_FIELD_OTHER:
			if (r->kind == FORMAT_HREF_ARRAY)
				snprintf(step, sizeof step, "[%llu]",
					 (unsigned long long)r->n);
			else
				snprintf(step, sizeof step, "[%.*s]", nl,
					 r->name);
			append(p, sizeof p, &phrase, step);
			break;
		case FORMAT_HREF_FIELD_STR:
			hpath_key(r->name, r->namelen, step, sizeof step);
			append(p, sizeof p, &phrase, step);
			break;
		case FORMAT_HREF_FIELD_OBJ: {
			const struct hsnap_obj *ko = hsnap_find(k, r->key);
			snprintf(step, sizeof step, "[<%s #%llu>]",
				 ko ? format_htype_name(ko->type) : "object",
				 (unsigned long long)r->key);
			append(p, sizeof p, &phrase, step);
			break;
		}
		case FORMAT_HREF_KEY:
			snprintf(step, sizeof step, "key #%llu of ",
				 (unsigned long long)r->dst);
			wrap(p, sizeof p, step, "");
			break;
		case FORMAT_HREF_METATABLE:
			wrap(p, sizeof p, "metatable of ", "");
			break;
		case FORMAT_HREF_ENV:
			wrap(p, sizeof p, "environment of ", "");
			break;
		case FORMAT_HREF_UPVALUE:
			if (nl)
				snprintf(step, sizeof step, "upvalue %.*s of ",
					 nl, r->name);
			else
				snprintf(step, sizeof step, "upvalue %llu of ",
					 (unsigned long long)r->n);
			snprintf(tmp, sizeof tmp, " (%.200s)",
				 src ? src->text : "?");
			wrap(p, sizeof p, step, tmp);
			break;
		case FORMAT_HREF_VALUE: break; /* upvalue -> its value */
		case FORMAT_HREF_STACK: {
			int main = src && !strcmp(src->text, "main thread");
			snprintf(step, sizeof step, "stack of %s",
				 main ? "" : "coroutine ");
			if (r->key)
				snprintf(tmp, sizeof tmp, " (%.200s) ",
					 fn_text(k, r->key, fn, sizeof fn));
			else
				snprintf(tmp, sizeof tmp, " ");
			if (nl)
				snprintf(tmp + strlen(tmp),
					 sizeof tmp - strlen(tmp), "local %.*s",
					 nl, r->name);
			else
				snprintf(tmp + strlen(tmp),
					 sizeof tmp - strlen(tmp), "slot %llu",
					 (unsigned long long)r->n);
			wrap(p, sizeof p, step, tmp);
			break;
		}
		case FORMAT_HREF_PROTO:
			wrap(p, sizeof p, "prototype of ", "");
			break;
		case FORMAT_HREF_CONST:
		case FORMAT_HREF_TRACE_CONST:
			snprintf(step, sizeof step, "constant %llu of ",
				 (unsigned long long)r->n);
			wrap(p, sizeof p, step, "");
			break;
		case FORMAT_HREF_CHUNKNAME:
			wrap(p, sizeof p, "chunk name of ", "");
			break;
		case FORMAT_HREF_TRACE:
			snprintf(step, sizeof step, "%.*s trace of ", nl,
				 r->name);
			wrap(p, sizeof p, step, "");
			break;
		case FORMAT_HREF_OPENUPVAL:
			wrap(p, sizeof p, "open upvalue of ", "");
			break;
		default:
			snprintf(step, sizeof step, "%s of ",
				 format_href_name(r->kind));
			wrap(p, sizeof p, step, "");
			break;
		}
		if (r->kind != FORMAT_HREF_VALUE) /* a phrase now? */
			phrase = r->kind > FORMAT_HREF_FIELD_OTHER;
	}
	loaded_name(p, sizeof p);
	if (*held)
		wrap(p, sizeof p, held, "");
	size_t l = strlen(p);
	if (l >= cap && cap > 4) {
		memcpy(buf, p, cap - 4);
		memcpy(buf + cap - 4, "...", 4);
	} else if (cap) {
		snprintf(buf, cap, "%s", p);
	}
}
