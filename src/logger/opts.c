/*
** ljlog options: the LUAJIT_PROFILE grammar, log[:opt[,opt]...].
** Pure parsing: no LuaJIT, no allocation, usable from the CLI.
*/
#include "config.h"
#include "logger/opts.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* The default set. A machine without the sampler (configure: x86_64 and
** aarch64 only) records the rest of it. */
#if LJLOG_SAMPLER
#define DEFAULTS OPTS_DEFAULTS
#else
#define DEFAULTS (OPTS_DEFAULTS & ~OPTS_SAMPLE)
#endif

static const char valid_list[] =
    "calls, alloc[=RATE], gc, sample[=INTERVAL], host, nohost, wall, jit, "
    "nodefaults, keepjit, lines, nolines, vmtrim, nowriter, file=PATH, file=|COMMAND, fd=N, "
    "buffer=SIZE, flush=INTERVAL, snapshot=exit+INTERVAL+SIGUSR1|SIGUSR2";

/* Any context. The valid option names, for messages and --help. */
const char *opts_valid_list(void)
{
	return valid_list;
}

/* Any thread. 1 when s[0..len) is the word w. */
static int word_is(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && memcmp(s, w, len) == 0;
}

/* Any thread. Parse the leading decimal digits of s[0..len); returns digits used. */
static size_t digits(const char *s, size_t len, uint64_t *v)
{
	size_t i = 0;
	uint64_t r = 0;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (r > (UINT64_MAX - 9) / 10)
			return 0;
		r = r * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	*v = r;
	return i;
}

/* Any context. Parse "100ms", "1s", "500us", "250ns", "0"; 0 or -EINVAL. */
int opts_parse_duration(const char *s, size_t len, uint64_t *ns)
{
	uint64_t v, mul;
	size_t n = digits(s, len, &v);
	if (n == 0)
		return -EINVAL;
	const char *u = s + n;
	size_t ul = len - n;
	if (ul == 0 && v == 0)
		mul = 1;
	else if (word_is(u, ul, "ns"))
		mul = 1;
	else if (word_is(u, ul, "us"))
		mul = 1000;
	else if (word_is(u, ul, "ms"))
		mul = 1000000;
	else if (word_is(u, ul, "s"))
		mul = 1000000000;
	else
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*ns = v * mul;
	return 0;
}

/* Any context. Parse "4096", "64k", "1m", "1g"; 0 or -EINVAL. */
int opts_parse_size(const char *s, size_t len, uint64_t *bytes)
{
	uint64_t v, mul = 1;
	size_t n = digits(s, len, &v);
	if (n == 0)
		return -EINVAL;
	const char *u = s + n;
	size_t ul = len - n;
	if (ul == 1 || (ul == 2 && (u[1] == 'b' || u[1] == 'B'))) {
		switch (u[0]) {
		case 'k':
		case 'K': mul = 1ull << 10; break;
		case 'm':
		case 'M': mul = 1ull << 20; break;
		case 'g':
		case 'G': mul = 1ull << 30; break;
		default: return -EINVAL;
		}
	} else if (ul != 0) {
		return -EINVAL;
	}
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*bytes = v * mul;
	return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *s,
		size_t len)
{
	if (err && errlen) {
		char buf[256];
		snprintf(buf, sizeof buf, "%.*s", (int)(len > 200 ? 200 : len),
			 s);
		snprintf(err, errlen, fmt, buf, valid_list);
	}
	return -EINVAL;
}

/* Any context. snapshot=WHEN[+WHEN]...: exit, an interval, SIGUSR1 or
** SIGUSR2. */
static int snapshot_opt(const char *s, size_t len, const char *val, size_t vl,
			struct opts *o, char *err, size_t errlen)
{
	const char *end = val + vl;
	if (vl == 0)
		return fail(err, errlen,
			    "option '%s' needs a value: exit, an interval "
			    "(30s), SIGUSR1 or SIGUSR2, joined by '+' (valid: "
			    "%s)",
			    s, len);
	while (val < end) {
		const char *p = memchr(val, '+', (size_t)(end - val));
		size_t n = p ? (size_t)(p - val) : (size_t)(end - val);
		uint64_t ns;
		if (n == 0 || (p && p + 1 == end)) /* "a++b", "exit+" */
			return fail(
			    err, errlen,
			    "empty snapshot trigger in '%s': join exit, "
			    "an interval, SIGUSR1 or SIGUSR2 with one '+' "
			    "(valid: %s)",
			    s, len);
		if (word_is(val, n, "exit"))
			o->snap_exit = 1;
		else if (word_is(val, n, "SIGUSR1") || word_is(val, n, "USR1"))
			o->snap_signal = SIGUSR1;
		else if (word_is(val, n, "SIGUSR2") || word_is(val, n, "USR2"))
			o->snap_signal = SIGUSR2;
		else if (opts_parse_duration(val, n, &ns) == 0 &&
			 ns >= OPTS_MIN_SNAP_NS)
			o->snap_ns = ns;
		else
			return fail(
			    err, errlen,
			    "bad snapshot trigger in '%s': use exit, an "
			    "interval of 1ms or more (500ms, 30s), "
			    "SIGUSR1 or SIGUSR2, joined by '+' (valid: "
			    "%s)",
			    s, len);
		val += n + (p != NULL);
	}
	return 0;
}

/* Any context. The first comma of s that separates options: "\," is a
** comma in a value, "\\" a backslash; NULL when none. */
static const char *next_comma(const char *s)
{
	for (; *s && *s != ','; s++)
		if (*s == '\\' && (s[1] == ',' || s[1] == '\\'))
			s++;
	return *s ? s : NULL;
}

/* Any context. val[0..vl) into out (size cap) with "\," and "\\"
** undone; its length, or cap when it does not fit. */
static size_t unescape(const char *val, size_t vl, char *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < vl; i++) {
		if (val[i] == '\\' && i + 1 < vl &&
		    (val[i + 1] == ',' || val[i + 1] == '\\'))
			i++;
		if (n + 1 >= cap)
			return cap;
		out[n++] = val[i];
	}
	out[n] = '\0';
	return n;
}

/* Apply one option s[0..len) to o. */
static int one(const char *s, size_t len, struct opts *o, unsigned *named,
	       int *nodefaults, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', len);
	size_t kl = eq ? (size_t)(eq - s) : len;
	const char *val = eq ? eq + 1 : NULL;
	size_t vl = eq ? len - kl - 1 : 0;

	if (len == 0)
		return 0; /* "calls,,alloc" and a trailing comma are fine */
	if (!eq) {
		if (word_is(s, len, "calls"))
			*named |= OPTS_CALLS;
		else if (word_is(s, len, "alloc"))
			*named |= OPTS_ALLOC;
		else if (word_is(s, len, "gc"))
			*named |= OPTS_GC;
		else if (word_is(s, len, "nodefaults"))
			*nodefaults = 1;
		else if (word_is(s, len, "keepjit"))
			o->keepjit = 1;
		else if (word_is(s, len, "nolines"))
			o->nolines = 1, o->lines = 0;
		else if (word_is(s, len, "lines"))
			o->lines = 1, o->nolines = 0;
		else if (word_is(s, len, "vmtrim"))
			o->vmtrim = 1;
		else if (word_is(s, len, "nowriter"))
			o->nowriter = 1;
		else if (word_is(s, len, "sample"))
			*named |= OPTS_SAMPLE;
		else if (word_is(s, len, "jit"))
			*named |= OPTS_JIT;
		else if (word_is(s, len, "host"))
			o->nohost = 0;
		else if (word_is(s, len, "nohost"))
			o->nohost = 1;
		else if (word_is(s, len, "wall"))
			o->wall = 1;
		else if (word_is(s, len, "file") || word_is(s, len, "buffer") ||
			 word_is(s, len, "flush") || word_is(s, len, "fd") ||
			 word_is(s, len, "snapshot"))
			return fail(
			    err, errlen,
			    "option '%s' needs a value, like file=PATH, "
			    "buffer=SIZE, flush=INTERVAL (valid: %s)",
			    s, len);
		else
			return fail(err, errlen,
				    "unknown option '%s' (valid: %s)", s, len);
		return 0;
	}
	if (word_is(s, kl, "file")) {
		if (vl == 0)
			return fail(err, errlen,
				    "option '%s' needs a path (valid: %s)", s,
				    len);
		if (unescape(val, vl, o->file, sizeof o->file) ==
		    sizeof o->file)
			return fail(err, errlen, "option '%s' is too long%.0s",
				    s, kl);
	} else if (word_is(s, kl, "fd")) {
		uint64_t fd;
		if (vl == 0 || digits(val, vl, &fd) != vl || fd > 1u << 20)
			return fail(
			    err, errlen,
			    "bad descriptor in '%s': use a number, like "
			    "fd=3 (valid: %s)",
			    s, len);
		o->fd = (int)fd;
	} else if (word_is(s, kl, "buffer")) {
		uint64_t b;
		if (opts_parse_size(val, vl, &b) < 0 || b < OPTS_MIN_BUFFER ||
		    b > OPTS_MAX_BUFFER)
			return fail(err, errlen,
				    "bad size in '%s': use 4k to 1g, like "
				    "buffer=512k (valid: %s)",
				    s, len);
		o->buffer = (size_t)b;
	} else if (word_is(s, kl, "sample")) {
		uint64_t ns;
		if (opts_parse_duration(val, vl, &ns) < 0 ||
		    ns < OPTS_MIN_SAMPLE_NS || ns > OPTS_MAX_SAMPLE_NS)
			return fail(err, errlen,
				    "bad interval in '%s': use 100us to 1s, "
				    "like sample=1ms (valid: %s)",
				    s, len);
		*named |= OPTS_SAMPLE;
		o->sample_ns = ns;
	} else if (word_is(s, kl, "alloc")) {
		uint64_t b;
		if (opts_parse_size(val, vl, &b) < 0 || b < 1 ||
		    b > OPTS_MAX_ALLOC_RATE)
			return fail(err, errlen,
				    "bad rate in '%s': bytes from 1 to 1g, "
				    "like alloc=512k (valid: %s)",
				    s, len);
		*named |= OPTS_ALLOC;
		o->alloc_rate = b;
	} else if (word_is(s, kl, "snapshot")) {
		return snapshot_opt(s, len, val, vl, o, err, errlen);
	} else if (word_is(s, kl, "flush")) {
		uint64_t ns;
		if (opts_parse_duration(val, vl, &ns) < 0)
			return fail(err, errlen,
				    "bad interval in '%s': use a unit, like "
				    "flush=100ms, 1s, 500us, or 0 (valid: %s)",
				    s, len);
		o->flush_ns = ns;
	} else {
		return fail(err, errlen, "unknown option '%s' (valid: %s)", s,
			    len);
	}
	return 0;
}

/* Any context. Parse s into o; 0 or -EINVAL with a message in err. */
int opts_parse(const char *s, struct opts *o, char *err, size_t errlen)
{
	unsigned named = 0;
	int nodefaults = 0;
	memset(o, 0, sizeof *o);
	o->buffer = OPTS_DEFAULT_BUFFER;
	o->flush_ns = OPTS_DEFAULT_FLUSH_NS;
	o->sample_ns = OPTS_DEFAULT_SAMPLE_NS;
	o->fd = -1;
	snprintf(o->file, sizeof o->file, "%s", OPTS_DEFAULT_FILE);
	if (err && errlen)
		err[0] = '\0';
	if (!s)
		s = "";
	if (strncmp(s, "log", 3) == 0 && (s[3] == '\0' || s[3] == ':'))
		s += s[3] ? 4 : 3;
	else if (strchr(s, ':') &&
		 !memchr(s, ',', (size_t)(strchr(s, ':') - s)) &&
		 !memchr(s, '=', (size_t)(strchr(s, ':') - s)))
		return fail(err, errlen,
			    "unknown profiler '%s': ljlog takes 'log:OPTIONS' "
			    "(valid options: %s)",
			    s, (size_t)(strchr(s, ':') - s));
	while (*s) {
		const char *c = next_comma(s);
		size_t len = c ? (size_t)(c - s) : strlen(s);
		int r = one(s, len, o, &named, &nodefaults, err, errlen);
		if (r < 0)
			return r;
		s += len + (c != NULL);
	}
	/* Named families replace the default set; nodefaults alone records
	** none. */
	o->events = named ? named : nodefaults ? 0 : DEFAULTS;
	/* The default set samples allocation; 'alloc' named records each. */
	if (!named && !nodefaults && !o->alloc_rate)
		o->alloc_rate = OPTS_DEFAULT_ALLOC_RATE;
	return 0;
}

/* Any context. Expand %p (pid) and %% in pattern; 0 or -ENAMETOOLONG. */
int opts_expand_file(const char *pattern, pid_t pid, char *out, size_t outlen)
{
	size_t n = 0;
	for (const char *p = pattern; *p; p++) {
		char tmp[24];
		const char *add = tmp;
		size_t al;
		if (p[0] == '%' && p[1] == 'p') {
			snprintf(tmp, sizeof tmp, "%ld", (long)pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			tmp[0] = '%', tmp[1] = '\0';
			p++;
		} else {
			tmp[0] = *p, tmp[1] = '\0';
		}
		al = strlen(add);
		if (n + al + 1 > outlen)
			return -ENAMETOOLONG;
		memcpy(out + n, add, al);
		n += al;
	}
	if (n + 1 > outlen)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}
