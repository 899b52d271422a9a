/*
** ljlog zones and marks: a record carries a copy of its text (the Lua
** string may be freed before the flush), which the flush maps to a STRING.
** No lock, no allocation: the VM's own buffer, on the VM's thread.
*/
#include "logger/zones.h"

#include <errno.h>
#include <string.h>

#include "blocks/format.h"
#include "logger/logger.h"

/* VM thread only. Record kind with its text (NULL: none) at the clock. */
static void record_text(struct logger_vm *vm, unsigned kind, const char *s,
			size_t len)
{
	if (len > FORMAT_STRING_MAX)
		len = FORMAT_STRING_MAX;
	size_t tw = s ? BUF_TEXT_WORDS(len) : 0;
	/* logger_reserve keeps room for a fixed record only: make room for
	** the text first (the buffer holds at least 512 words). */
	if (vm->bp + BUF_ZONE_PUSH_WORDS + tw > vm->bend)
		logger_flush_full(vm);
	uint64_t ts = clock_now();
	uint64_t *p = logger_reserve(vm, NULL, ts);
	logger_commit(vm, buf_put_text(p, kind, ts, s, len));
}

/* VM thread only. Push or pop a zone. */
int logger_zone(struct logger_vm *vm, const char *name, size_t len)
{
	if (!name) {
		if (vm->zone_depth == 0)
			return -EINVAL;
		vm->zone_depth--;
		record_text(vm, BUF_ZONE_POP, NULL, 0);
		return 0;
	}
	vm->zone_depth++;
	record_text(vm, BUF_ZONE_PUSH, name, len);
	return 0;
}

/* VM thread only. Record a mark. */
void logger_mark(struct logger_vm *vm, const char *text, size_t len)
{
	record_text(vm, BUF_MARK, text, len);
}
