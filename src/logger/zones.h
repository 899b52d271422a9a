/*
** ljlog zones and marks: ljlog.zone(), ljlog.mark() into the VM's buffer.
*/
#ifndef LJLOG_LOGGER_ZONES_H
#define LJLOG_LOGGER_ZONES_H

#include <stddef.h>

struct logger_vm;

/* VM thread only. Push zone name (len bytes, cut to FORMAT_STRING_MAX), or
** pop the innermost zone when name is NULL: 0, or -EINVAL when popping
** an empty stack (nothing is recorded then). */
int logger_zone(struct logger_vm *vm, const char *name, size_t len);

/* VM thread only. Record a mark with text (len bytes, cut likewise). */
void logger_mark(struct logger_vm *vm, const char *text, size_t len);

#endif
