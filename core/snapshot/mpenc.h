/* SPDX-License-Identifier: MIT */
/*
 * MessagePack scalars encoded into a caller's buffer, for the writer's
 * cell loops: one bounds check per run of cells instead of a packer
 * callback per byte run. Each produces exactly the bytes msgpack-c's packer
 * does (the smallest form; a non-negative signed value in the unsigned forms),
 * which tests/test_mpenc.c checks against msgpack-c itself.
 */
#ifndef CTP_MPENC_H
#define CTP_MPENC_H

#include <stddef.h>
#include <stdint.h>

/* The longest scalar: a tag and eight bytes. */
#define CTP_MP_MAX 9
/* nil, one byte. */
#define CTP_MP_NIL 0xc0

static inline size_t ctp_mp_tagged(unsigned char *b, unsigned char tag,
				   uint64_t v, unsigned n)
{
	b[0] = tag;
	for (unsigned k = 0; k < n; k++)
		b[1 + k] = (unsigned char)(v >> (8 * (n - 1 - k)));
	return n + 1;
}

static inline size_t ctp_mp_u64(unsigned char *b, uint64_t v)
{
	if (v < 0x80) {
		b[0] = (unsigned char)v;
		return 1;
	}
	if (v <= UINT8_MAX)
		return ctp_mp_tagged(b, 0xcc, v, 1);
	if (v <= UINT16_MAX)
		return ctp_mp_tagged(b, 0xcd, v, 2);
	if (v <= UINT32_MAX)
		return ctp_mp_tagged(b, 0xce, v, 4);
	return ctp_mp_tagged(b, 0xcf, v, 8);
}

static inline size_t ctp_mp_i64(unsigned char *b, int64_t v)
{
	if (v >= 0)
		return ctp_mp_u64(b, (uint64_t)v);
	if (v >= -32) {
		b[0] = (unsigned char)(int8_t)v; /* negative fixint */
		return 1;
	}
	if (v >= INT8_MIN)
		return ctp_mp_tagged(b, 0xd0, (uint64_t)v, 1);
	if (v >= INT16_MIN)
		return ctp_mp_tagged(b, 0xd1, (uint64_t)v, 2);
	if (v >= INT32_MIN)
		return ctp_mp_tagged(b, 0xd2, (uint64_t)v, 4);
	return ctp_mp_tagged(b, 0xd3, (uint64_t)v, 8);
}

static inline size_t ctp_mp_nil(unsigned char *b)
{
	b[0] = CTP_MP_NIL;
	return 1;
}

static inline size_t ctp_mp_bool(unsigned char *b, int v)
{
	b[0] = v ? 0xc3 : 0xc2;
	return 1;
}

/* A one-byte string (the char type). */
static inline size_t ctp_mp_char(unsigned char *b, char c)
{
	b[0] = 0xa1;
	b[1] = (unsigned char)c;
	return 2;
}

/* A string header of n bytes (the bytes follow). */
static inline size_t ctp_mp_str(unsigned char *b, uint32_t n)
{
	if (n < 32) {
		b[0] = (unsigned char)(0xa0 | n);
		return 1;
	}
	if (n <= UINT8_MAX)
		return ctp_mp_tagged(b, 0xd9, n, 1);
	if (n <= UINT16_MAX)
		return ctp_mp_tagged(b, 0xda, n, 2);
	return ctp_mp_tagged(b, 0xdb, n, 4);
}

/* An array header of n elements. */
static inline size_t ctp_mp_array(unsigned char *b, uint32_t n)
{
	if (n < 16) {
		b[0] = (unsigned char)(0x90 | n);
		return 1;
	}
	if (n <= UINT16_MAX)
		return ctp_mp_tagged(b, 0xdc, n, 2);
	return ctp_mp_tagged(b, 0xdd, n, 4);
}

#endif
