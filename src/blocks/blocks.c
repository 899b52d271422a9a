/*
** ljlog block framing and integer codecs.
** Shared by the writer (src/) and the reader (reader/).
*/
#include "blocks/blocks.h"

#include <errno.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

/* -- Integers ------------------------------------------------------------------ */

/* Any context. Read a uleb from *pp, not past end; 0 or -EBADMSG. */
int blocks_uleb_get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned shift = 0;
	for (;;) {
		if (p >= end || shift > 63)
			return -EBADMSG;
		uint8_t b = *p++;
		if (shift == 63 && (b & 0x7e))
			return -EBADMSG; /* overflows 64 bits */
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*pp = p;
	*v = r;
	return 0;
}

/* Any context. Read an sleb from *pp, not past end; 0 or -EBADMSG. */
int blocks_sleb_get(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
	uint64_t u;
	int r = blocks_uleb_get(pp, end, &u);
	if (r == 0)
		*v = blocks_unzigzag(u);
	return r;
}

/* Any context. Read a str; *s points into the buffer, not NUL-terminated. */
int blocks_str_get(const uint8_t **pp, const uint8_t *end, const char **s,
		   size_t *len)
{
	const uint8_t *p = *pp;
	uint64_t n;
	if (blocks_uleb_get(&p, end, &n) < 0 || n > (uint64_t)(end - p))
		return -EBADMSG;
	*s = (const char *)p;
	*len = (size_t)n;
	*pp = p + n;
	return 0;
}

/* Any context. Write a str (len bytes) at p; returns the end. */
uint8_t *blocks_str_put(uint8_t *p, const char *s, size_t len)
{
	p = blocks_uleb_put(p, len);
	if (len)
		memcpy(p, s, len);
	return p + len;
}

/* -- Block headers ------------------------------------------------------------ */

/* Any context. Store v little-endian at p. */
static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Any context. Load a little-endian u32 from p. */
static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Any context. The payload checksum a header with these flags holds:
** XXH3 (version 13) is about twice as fast as XXH32 here, and an
** allocation-heavy program writes hundreds of MB. */
static uint32_t payload_sum(unsigned flags, const void *payload, size_t len)
{
	if (flags & FORMAT_FLAG_XXH3)
		return (uint32_t)XXH3_64bits(payload, len);
	return XXH32(payload, len, 0);
}

/* Any context. Fill hdr[FORMAT_HEADER_LEN] for a payload of len bytes. */
void blocks_header_pack(uint8_t *hdr, unsigned kind, const void *payload,
			uint32_t len)
{
	blocks_header_pack_flags(hdr, kind, FORMAT_FLAG_XXH3, payload, len);
}

/* Any context. See blocks.h. */
void blocks_header_pack_flags(uint8_t *hdr, unsigned kind, unsigned flags,
			      const void *payload, uint32_t len)
{
	hdr[0] = (uint8_t)(FORMAT_SYNC & 0xff);
	hdr[1] = (uint8_t)(FORMAT_SYNC >> 8);
	hdr[2] = (uint8_t)kind;
	hdr[3] = (uint8_t)flags;
	put_u32(hdr + 4, len);
	put_u32(hdr + 8, payload_sum(flags, payload, len));
	put_u32(hdr + 12, XXH32(hdr, 12, 0));
}

/* Any context. Parse and verify sync and header checksum. */
int blocks_header_parse(const uint8_t *hdr, struct blocks_header *out)
{
	if (hdr[0] != (FORMAT_SYNC & 0xff) || hdr[1] != (FORMAT_SYNC >> 8))
		return -EBADMSG;
	if (get_u32(hdr + 12) != XXH32(hdr, 12, 0))
		return -EBADMSG;
	out->kind = hdr[2];
	out->flags = hdr[3];
	out->length = get_u32(hdr + 4);
	out->checksum = get_u32(hdr + 8);
	if (out->length > FORMAT_MAX_PAYLOAD)
		return -EFBIG;
	return 0;
}

/* Any context. 1 when the payload matches the header's checksum. */
int blocks_payload_ok(const struct blocks_header *h, const void *payload)
{
	return payload_sum(h->flags, payload, h->length) == h->checksum;
}
