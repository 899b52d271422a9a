/*
** ljlog block framing and integer codecs, shared by the writer and the reader.
** See doc/format.txt for the byte layout.
*/
#ifndef LJLOG_BLOCKS_BLOCKS_H
#define LJLOG_BLOCKS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/format.h"

/* Parsed block header. */
struct blocks_header {
	unsigned kind;	   /* FORMAT_KIND_* or unknown */
	unsigned flags;	   /* FORMAT_FLAG_*; unknown bits ignored */
	uint32_t length;   /* payload bytes */
	uint32_t checksum; /* of the payload: XXH3 or XXH32 (flags) */
};

/* -- Integers (hot: inline) ------------------------------------------------ */

/* Worst-case bytes of one uleb. */
#define BLOCKS_ULEB_MAX 10

/* Any context. Zigzag-encode a signed value. */
static inline uint64_t blocks_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Any context. Undo blocks_zigzag. */
static inline int64_t blocks_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Any context. Write v as uleb at p (room for BLOCKS_ULEB_MAX); returns the end. */
static inline uint8_t *blocks_uleb_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Any context. Write v as sleb (zigzag uleb) at p. */
static inline uint8_t *blocks_sleb_put(uint8_t *p, int64_t v)
{
	return blocks_uleb_put(p, blocks_zigzag(v));
}

/* Any context. Read a uleb from *pp, not past end; 0 or -EBADMSG. */
int blocks_uleb_get(const uint8_t **pp, const uint8_t *end, uint64_t *v);

/* Any context. Read an sleb from *pp, not past end; 0 or -EBADMSG. */
int blocks_sleb_get(const uint8_t **pp, const uint8_t *end, int64_t *v);

/* Any context. Read a str; *s points into the buffer, not NUL-terminated. */
int blocks_str_get(const uint8_t **pp, const uint8_t *end, const char **s,
		   size_t *len);

/* Any context. Write a str (len bytes) at p; returns the end. */
uint8_t *blocks_str_put(uint8_t *p, const char *s, size_t len);

/* -- Block headers ------------------------------------------------------------ */

/* Any context. Fill hdr[FORMAT_HEADER_LEN] for a payload of len bytes, as
** this version writes it (FORMAT_FLAG_XXH3). */
void blocks_header_pack(uint8_t *hdr, unsigned kind, const void *payload,
			uint32_t len);

/* Any context. The same with the given flags (0: as versions 1 to 12,
** XXH32). */
void blocks_header_pack_flags(uint8_t *hdr, unsigned kind, unsigned flags,
			      const void *payload, uint32_t len);

/* Any context. Parse and verify sync and header checksum; 0 or -EBADMSG
** (bad sync or checksum) or -EFBIG (length over FORMAT_MAX_PAYLOAD). */
int blocks_header_parse(const uint8_t *hdr, struct blocks_header *out);

/* Any context. 1 when the payload matches the header's checksum. */
int blocks_payload_ok(const struct blocks_header *h, const void *payload);

#endif
