/*
** Unit tests: src/blocks (varints, strings, block headers, checksums).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "blocks/blocks.h"
#define XXH_INLINE_ALL
#include <xxhash.h>

/* -- Varints ------------------------------------------------------------------- */

/* Test thread. Round-trip v as uleb; returns its encoded length. */
static size_t uleb_rt(uint64_t v)
{
	uint8_t buf[BLOCKS_ULEB_MAX + 4];
	uint8_t *e = blocks_uleb_put(buf, v);
	const uint8_t *p = buf;
	uint64_t got = ~v;
	cr_assert_eq(blocks_uleb_get(&p, e, &got), 0, "uleb %llu",
		     (unsigned long long)v);
	cr_assert_eq(got, v);
	cr_assert_eq(p, e, "reader consumed every byte written");
	return (size_t)(e - buf);
}

/* Test thread. Round-trip v as sleb. */
static void sleb_rt(int64_t v)
{
	uint8_t buf[BLOCKS_ULEB_MAX + 4];
	uint8_t *e = blocks_sleb_put(buf, v);
	const uint8_t *p = buf;
	int64_t got = ~v;
	cr_assert_eq(blocks_sleb_get(&p, e, &got), 0);
	cr_assert_eq(got, v, "sleb %lld", (long long)v);
	cr_assert_eq(p, e);
}

Test(blocks, uleb_round_trips)
{
	cr_assert_eq(uleb_rt(0), 1);
	cr_assert_eq(uleb_rt(1), 1);
	cr_assert_eq(uleb_rt(127), 1);
	cr_assert_eq(uleb_rt(128), 2);
	cr_assert_eq(uleb_rt(16383), 2);
	cr_assert_eq(uleb_rt(16384), 3);
	cr_assert_eq(uleb_rt(UINT32_MAX), 5);
	cr_assert_eq(uleb_rt(UINT64_MAX), 10);
	cr_assert_eq(uleb_rt(1ull << 63), 10);
	for (uint64_t v = 1; v; v <<= 1)
		uleb_rt(v - 1), uleb_rt(v);
}

Test(blocks, uleb_bytes_are_little_endian_groups)
{
	uint8_t buf[BLOCKS_ULEB_MAX];
	cr_assert_eq(blocks_uleb_put(buf, 128) - buf, 2);
	cr_assert_eq(buf[0], 0x80);
	cr_assert_eq(buf[1], 0x01);
	cr_assert_eq(blocks_uleb_put(buf, 300) - buf, 2);
	cr_assert_eq(buf[0], 0xac);
	cr_assert_eq(buf[1], 0x02);
}

Test(blocks, sleb_round_trips)
{
	int64_t vals[] = {
	    0,	1,   -1,	2,	   -2,	      63,	 -64,
	    64, -65, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, INT64_MIN + 1};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		sleb_rt(vals[i]);
}

Test(blocks, zigzag_order)
{
	cr_assert_eq(blocks_zigzag(0), 0);
	cr_assert_eq(blocks_zigzag(-1), 1);
	cr_assert_eq(blocks_zigzag(1), 2);
	cr_assert_eq(blocks_zigzag(-2), 3);
	cr_assert_eq(blocks_zigzag(INT64_MIN), UINT64_MAX);
	cr_assert_eq(blocks_unzigzag(UINT64_MAX), INT64_MIN);
	cr_assert_eq(blocks_unzigzag(30), 15);
	cr_assert_eq(blocks_unzigzag(29), -15);
}

Test(blocks, uleb_truncated_rejected)
{
	uint8_t buf[BLOCKS_ULEB_MAX];
	uint8_t *e = blocks_uleb_put(buf, 1ull << 40);
	for (uint8_t *end = buf; end < e; end++) {
		const uint8_t *p = buf;
		uint64_t v;
		cr_assert_eq(blocks_uleb_get(&p, end, &v), -EBADMSG,
			     "cut after %td bytes", end - buf);
		cr_assert_eq(p, buf, "cursor unchanged on error");
	}
}

Test(blocks, uleb_overlong_rejected)
{
	/* 11 bytes: more than 64 bits of groups. */
	uint8_t eleven[11];
	memset(eleven, 0x80, sizeof eleven);
	eleven[10] = 0x00;
	const uint8_t *p = eleven;
	uint64_t v;
	cr_assert_eq(blocks_uleb_get(&p, eleven + 11, &v), -EBADMSG);
	/* 10 bytes whose last group sets bits above bit 63. */
	uint8_t ten[10];
	memset(ten, 0xff, sizeof ten);
	ten[9] = 0x02;
	p = ten;
	cr_assert_eq(blocks_uleb_get(&p, ten + 10, &v), -EBADMSG);
	ten[9] = 0x01; /* exactly UINT64_MAX */
	p = ten;
	cr_assert_eq(blocks_uleb_get(&p, ten + 10, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
}

Test(blocks, str_round_trip_and_bounds)
{
	uint8_t buf[64];
	uint8_t *e = blocks_str_put(buf, "a\0b", 3);
	const uint8_t *p = buf;
	const char *s;
	size_t len;
	cr_assert_eq(blocks_str_get(&p, e, &s, &len), 0);
	cr_assert_eq(len, 3);
	cr_assert_eq(memcmp(s, "a\0b", 3), 0);
	cr_assert_eq(p, e);
	/* A length past the end is corrupt. */
	p = buf;
	cr_assert_eq(blocks_str_get(&p, e - 1, &s, &len), -EBADMSG);
	/* An empty string. */
	e = blocks_str_put(buf, "", 0);
	p = buf;
	cr_assert_eq(blocks_str_get(&p, e, &s, &len), 0);
	cr_assert_eq(len, 0);
}

/* -- Block headers ------------------------------------------------------------ */

Test(blocks, header_pack_parse)
{
	const char payload[] = "hello, block";
	uint8_t hdr[FORMAT_HEADER_LEN];
	struct blocks_header h;
	blocks_header_pack(hdr, FORMAT_KIND_EVENTS, payload, sizeof payload);
	cr_assert_eq(hdr[0], 0x0C);
	cr_assert_eq(hdr[1], 0xB1);
	cr_assert_eq(hdr[2], FORMAT_KIND_EVENTS);
	cr_assert_eq(hdr[3], FORMAT_FLAG_XXH3);
	cr_assert_eq(blocks_header_parse(hdr, &h), 0);
	cr_assert_eq(h.kind, FORMAT_KIND_EVENTS);
	cr_assert_eq(h.flags, FORMAT_FLAG_XXH3);
	cr_assert_eq(h.length, sizeof payload);
	cr_assert(blocks_payload_ok(&h, payload));
	cr_assert_str_eq(format_kind_name(FORMAT_KIND_MAPPING), "MAPPING");
	cr_assert_str_eq(format_kind_name(99), "?");
}

Test(blocks, header_any_flipped_bit_rejected)
{
	const char payload[] = "x";
	uint8_t hdr[FORMAT_HEADER_LEN];
	struct blocks_header h;
	blocks_header_pack(hdr, FORMAT_KIND_MAPPING, payload, 1);
	for (int bit = 0; bit < FORMAT_HEADER_LEN * 8; bit++) {
		uint8_t bad[FORMAT_HEADER_LEN];
		memcpy(bad, hdr, sizeof bad);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		cr_assert_neq(blocks_header_parse(bad, &h), 0, "bit %d", bit);
	}
}

Test(blocks, header_length_limit)
{
	uint8_t hdr[FORMAT_HEADER_LEN];
	struct blocks_header h;
	blocks_header_pack(hdr, FORMAT_KIND_EVENTS, "", 0);
	/* Rewrite the length to just over the limit and re-checksum. */
	uint32_t len = FORMAT_MAX_PAYLOAD + 1;
	hdr[4] = (uint8_t)len, hdr[5] = (uint8_t)(len >> 8);
	hdr[6] = (uint8_t)(len >> 16), hdr[7] = (uint8_t)(len >> 24);
	uint8_t good[FORMAT_HEADER_LEN];
	blocks_header_pack(good, FORMAT_KIND_EVENTS, "", 0);
	cr_assert_neq(blocks_header_parse(hdr, &h), 0);
	cr_assert_eq(blocks_header_parse(good, &h), 0);
	cr_assert_eq(FORMAT_MAX_PAYLOAD, 67108864u);
}

Test(blocks, payload_checksum)
{
	uint8_t payload[100];
	uint8_t hdr[FORMAT_HEADER_LEN];
	struct blocks_header h;
	for (int i = 0; i < 100; i++)
		payload[i] = (uint8_t)(i * 7);
	blocks_header_pack(hdr, FORMAT_KIND_EVENTS, payload, sizeof payload);
	cr_assert_eq(blocks_header_parse(hdr, &h), 0);
	cr_assert(blocks_payload_ok(&h, payload));
	payload[57] ^= 0x10;
	cr_assert_not(blocks_payload_ok(&h, payload));
	payload[57] ^= 0x10;
	cr_assert(blocks_payload_ok(&h, payload));
}

/* Version 13 checks a payload with XXH3 (flag bit 0), versions 1 to 12
** with XXH32: each header's checksum is the one its flag names, computed
** here with libxxhash directly, and the other one is refused. */
Test(blocks, payload_checksum_by_flag)
{
	uint8_t payload[1000];
	uint8_t hdr[FORMAT_HEADER_LEN];
	struct blocks_header h;
	for (int i = 0; i < (int)sizeof payload; i++)
		payload[i] = (uint8_t)(i * 31 + 5);
	uint32_t x3 = (uint32_t)XXH3_64bits(payload, sizeof payload);
	uint32_t x32 = XXH32(payload, sizeof payload, 0);
	cr_assert_neq(x3, x32);

	blocks_header_pack(hdr, FORMAT_KIND_EVENTS, payload, sizeof payload);
	cr_assert_eq(blocks_header_parse(hdr, &h), 0);
	cr_assert_eq(h.checksum, x3);
	cr_assert(blocks_payload_ok(&h, payload));

	blocks_header_pack_flags(hdr, FORMAT_KIND_EVENTS, 0, payload,
				 sizeof payload);
	cr_assert_eq(hdr[3], 0);
	cr_assert_eq(blocks_header_parse(hdr, &h), 0);
	cr_assert_eq(h.checksum, x32);
	cr_assert(blocks_payload_ok(&h, payload));
	/* The XXH32 sum under the XXH3 flag (and the reverse) is refused. */
	h.flags = FORMAT_FLAG_XXH3;
	cr_assert_not(blocks_payload_ok(&h, payload));
	h.flags = 0;
	h.checksum = x3;
	cr_assert_not(blocks_payload_ok(&h, payload));

	/* Reserved bits are ignored. */
	blocks_header_pack_flags(hdr, FORMAT_KIND_EVENTS,
				 0x80u | FORMAT_FLAG_XXH3, payload,
				 sizeof payload);
	cr_assert_eq(blocks_header_parse(hdr, &h), 0);
	cr_assert_eq(h.checksum, x3);
	cr_assert(blocks_payload_ok(&h, payload));
}
