/*
** ljlog per-VM event buffer: record sizes.
*/
#include "logger/buf.h"

const uint8_t buf_words[] = {
    [BUF_ENTER_LUA] = 3,  [BUF_ENTER_C] = 3,	 [BUF_ENTER_FF] = 3,
    [BUF_EXIT] = 2,	  [BUF_ALLOC] = 5,	 [BUF_FREE] = 3,
    [BUF_REALLOC] = 7,	  [BUF_GC] = 3,		 [BUF_SWITCH] = 3,
    [BUF_ATTACH] = 3,	  [BUF_DETACH] = 3,	 [BUF_TRACE_START] = 4,
    [BUF_TRACE_STOP] = 3, [BUF_TRACE_ABORT] = 5, [BUF_TRACE_FLUSH] = 2,
    [BUF_ZONE_PUSH] = 2,  [BUF_ZONE_POP] = 2,	 [BUF_MARK] = 2,
};
