// SPDX-License-Identifier: MIT
/*
 * core/snapshot/mpenc.h against msgpack-c: the writer's inline cell encoders
 * must produce the very bytes the packer would, for every size class and its
 * boundaries, and for a spread of other values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "mpenc.h"

enum kind { K_U64, K_I64, K_ARRAY, K_STR, K_BOOL, K_CHAR, K_NIL };

/* Encode v both ways and compare. */
static void same(enum kind k, uint64_t v)
{
	unsigned char mine[CTP_MP_MAX + 1];
	size_t n = 0;
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	switch (k) {
	case K_U64:
		n = ctp_mp_u64(mine, v);
		msgpack_pack_uint64(&pk, v);
		break;
	case K_I64:
		n = ctp_mp_i64(mine, (int64_t)v);
		msgpack_pack_int64(&pk, (int64_t)v);
		break;
	case K_ARRAY:
		n = ctp_mp_array(mine, (uint32_t)v);
		msgpack_pack_array(&pk, (size_t)(uint32_t)v);
		break;
	case K_STR:
		n = ctp_mp_str(mine, (uint32_t)v);
		msgpack_pack_str(&pk, (size_t)(uint32_t)v);
		break;
	case K_BOOL:
		n = ctp_mp_bool(mine, v != 0);
		if (v)
			msgpack_pack_true(&pk);
		else
			msgpack_pack_false(&pk);
		break;
	case K_CHAR: {
		char c = (char)v;
		n = ctp_mp_char(mine, c);
		msgpack_pack_str(&pk, 1);
		msgpack_pack_str_body(&pk, &c, 1);
		break;
	}
	case K_NIL:
		n = ctp_mp_nil(mine);
		msgpack_pack_nil(&pk);
		break;
	}
	if (n != sb.size || memcmp(mine, sb.data, n) != 0)
		fail_msg("kind %d value %llu (%lld): %zu bytes, msgpack-c %zu",
			 (int)k, (unsigned long long)v, (long long)v, n,
			 sb.size);
	assert_true(n <= CTP_MP_MAX);
	msgpack_sbuffer_destroy(&sb);
}

static void boundaries(void **state)
{
	static const uint64_t edges[] = {0,
					 1,
					 31,
					 32,
					 33,
					 127,
					 128,
					 255,
					 256,
					 32767,
					 32768,
					 65535,
					 65536,
					 INT32_MAX,
					 (uint64_t)INT32_MAX + 1,
					 UINT32_MAX,
					 (uint64_t)UINT32_MAX + 1,
					 INT64_MAX,
					 (uint64_t)INT64_MAX + 1,
					 UINT64_MAX};
	(void)state;
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		for (int d = -1; d <= 1; d++) {
			uint64_t v = edges[i] + (uint64_t)(int64_t)d;
			same(K_U64, v);
			same(K_I64, v);
			same(K_I64, 0 - v); /* -v, wrapping */
			same(K_ARRAY, v);
			same(K_STR, v);
		}
	}
	same(K_BOOL, 0);
	same(K_BOOL, 1);
	same(K_NIL, 0);
	for (unsigned c = 0; c < 256; c++)
		same(K_CHAR, c);
}

static void spread(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* All magnitudes: shift a random value by a random amount. */
		uint64_t v = x >> (x % 64);
		same(K_U64, v);
		same(K_I64, v);
		same(K_I64, 0 - v); /* -v, wrapping */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(boundaries),
		cmocka_unit_test(spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
