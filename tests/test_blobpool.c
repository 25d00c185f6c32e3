// SPDX-License-Identifier: MIT
/*
 * The capture's blob pool (core/capture/model.c): equal bytes get equal
 * ids, and the per-thread cache in front of it (ctp_blobpool_intern_cached)
 * gives the pool's own id for every value, whatever shares its cache set,
 * whatever its length (a prefix of another, one byte or one bit apart,
 * longer than the cache holds), and never an id of another pool, nor of a
 * freed pool whose memory a new one took, nor the last id of an address
 * whose bytes changed (a plugin's reused buffer); strings
 * (ctp_blobpool_intern_text) with a NUL are refused, cached or not. A
 * blob's handle (ctp_blobpool_handle, for ctp_api.str_intern) gives its id
 * back in its own pool only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"

#define N_VALUES 400

static unsigned char values[N_VALUES][64];
static size_t lens[N_VALUES];

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Values of 0 to 63 bytes: prefixes of one another, ones a byte or a bit
 * apart at either end or anywhere between (the cache compares a word at a
 * time), and random ones. */
static void make_values(void)
{
	for (size_t i = 0; i < N_VALUES; i++) {
		switch (i % 5) {
		case 0: /* prefixes of one run of bytes */
			lens[i] = i / 4 % 64;
			memset(values[i], 'p', lens[i]);
			break;
		case 1: /* 24 bytes, one bit apart in the last */
			lens[i] = 24;
			memset(values[i], 'b', 24);
			values[i][23] ^= (unsigned char)(1u << (i / 4 % 8));
			values[i][0] = (unsigned char)(i / 32);
			break;
		case 2: /* 40 bytes, apart in the first */
			lens[i] = 40;
			memset(values[i], 'f', 40);
			values[i][0] = (unsigned char)(i / 4);
			break;
		case 3: /* 1 to 48 bytes, one byte apart, anywhere */
			lens[i] = 1 + i / 5 % 48;
			memset(values[i], 'm', lens[i]);
			values[i][i / 5 % lens[i]] = (unsigned char)(i / 5);
			break;
		default:
			lens[i] = rnd() % 64;
			for (size_t k = 0; k < lens[i]; k++)
				values[i][k] = (unsigned char)rnd();
		}
	}
}

/* Every value through the cache, in random order and over again: each
 * gets the id the pool gives it, and the pool's bytes are its bytes. */
static void test_cached_ids(void **unused)
{
	struct ctp_blobpool *pool;
	int64_t id[N_VALUES];

	(void)unused;
	assert_int_equal(ctp_blobpool_new(&pool), 0);
	for (size_t i = 0; i < N_VALUES; i++) {
		id[i] = ctp_blobpool_intern(pool, values[i], lens[i]);
		assert_true(id[i] >= 0);
	}
	for (int round = 0; round < 20000; round++) {
		/* Runs of a few values, as a thread's plugins set them. */
		size_t i = rnd() % N_VALUES, n = 1 + rnd() % 6;
		for (size_t k = 0; k < n; k++) {
			size_t j = (i + k * 37) % N_VALUES;
			int64_t got = ctp_blobpool_intern_cached(
				pool, values[j], lens[j]);
			if (got != id[j])
				fail_msg("value %zu (%zu bytes): id %lld, the "
					 "pool's %lld",
					 j, lens[j], (long long)got,
					 (long long)id[j]);
		}
	}
	for (size_t i = 0; i < N_VALUES; i++) {
		size_t len;
		const char *s = ctp_blobpool_get(pool, (uint64_t)id[i], &len);
		assert_non_null(s);
		assert_int_equal(len, lens[i]);
		assert_memory_equal(s, values[i], len);
	}
	ctp_blobpool_free(pool);
}

/* Two pools in turn, then each freed and a new one made (likely at the
 * same address): the cache answers for the pool asked. */
static void test_cached_pools(void **unused)
{
	struct ctp_blobpool *a, *b;

	(void)unused;
	for (int round = 0; round < 50; round++) {
		assert_int_equal(ctp_blobpool_new(&a), 0);
		assert_int_equal(ctp_blobpool_new(&b), 0);
		/* b holds other values first, so ids differ between them. */
		for (size_t k = 0; k <= (size_t)round % 7; k++)
			assert_true(ctp_blobpool_intern(b, "xxxxxxx", k) >= 0);
		for (size_t i = 0; i < N_VALUES; i += 3) {
			struct ctp_blobpool *p = (i / 3) % 2 ? a : b;
			for (int twice = 0; twice < 2; twice++) {
				int64_t got = ctp_blobpool_intern_cached(
					p, values[i], lens[i]);
				size_t len;
				const char *s = ctp_blobpool_get(
					p, (uint64_t)got, &len);
				assert_non_null(s);
				assert_int_equal(len, lens[i]);
				assert_memory_equal(s, values[i], len);
			}
		}
		ctp_blobpool_free(a);
		ctp_blobpool_free(b);
	}
}

/* One buffer holding value after value (a plugin's reused buffer), short
 * and longer than the byte cache holds, each back again: the id is the
 * bytes' one, never the last id given for the address. */
static void test_cached_address(void **unused)
{
	struct ctp_blobpool *pool;
	static unsigned char long_[3][200];
	unsigned char buf[200];
	int64_t want[N_VALUES], lwant[3];

	(void)unused;
	assert_int_equal(ctp_blobpool_new(&pool), 0);
	for (size_t i = 0; i < N_VALUES; i++) {
		want[i] = ctp_blobpool_intern(pool, values[i], lens[i]);
		assert_true(want[i] >= 0);
	}
	for (size_t k = 0; k < 3; k++) {
		memset(long_[k], 'L', sizeof(long_[k]));
		long_[k][150 + k] = 'x'; /* apart past the byte cache's 48 */
		lwant[k] = ctp_blobpool_intern(pool, long_[k], 180);
		assert_true(lwant[k] >= 0);
	}
	for (int round = 0; round < 4000; round++) {
		size_t j = rnd() % (N_VALUES + 3);
		int64_t got;
		if (j < N_VALUES) {
			memcpy(buf, values[j], lens[j]);
			got = ctp_blobpool_intern_cached(pool, buf, lens[j]);
			if (got != want[j])
				fail_msg("value %zu at one address: id %lld, "
					 "the pool's %lld",
					 j, (long long)got, (long long)want[j]);
			/* Twice at the address: the same. */
			assert_true(ctp_blobpool_intern_cached(
					    pool, buf, lens[j]) == want[j]);
		} else {
			memcpy(buf, long_[j - N_VALUES], 180);
			got = ctp_blobpool_intern_cached(pool, buf, 180);
			assert_true(got == lwant[j - N_VALUES]);
			assert_true(ctp_blobpool_intern_cached(pool, buf,
							       180) == got);
		}
	}
	ctp_blobpool_free(pool);
}

/* Strings: the id intern gives for bytes without a NUL, -EINVAL for bytes
 * with one even where the same bytes were interned and cached as bytes
 * (a cpu set), at the same address or another, short or long. */
static void test_text(void **unused)
{
	struct ctp_blobpool *pool;
	static char nul_short[] = "ab\0cd", nul_long[100];
	char copy[100];
	int64_t a, b;

	(void)unused;
	assert_int_equal(ctp_blobpool_new(&pool), 0);
	memset(nul_long, 'n', sizeof(nul_long));
	nul_long[70] = '\0';
	for (int twice = 0; twice < 2; twice++) {
		a = ctp_blobpool_intern_cached(pool, nul_short, 5);
		b = ctp_blobpool_intern_cached(pool, nul_long, 100);
		assert_true(a >= 0 && b >= 0);
		assert_int_equal(ctp_blobpool_intern_text(pool, nul_short, 5),
				 -EINVAL);
		assert_int_equal(ctp_blobpool_intern_text(pool, nul_long, 100),
				 -EINVAL);
		memcpy(copy, nul_short, 5);
		assert_int_equal(ctp_blobpool_intern_text(pool, copy, 5),
				 -EINVAL);
		memcpy(copy, nul_long, 100);
		assert_int_equal(ctp_blobpool_intern_text(pool, copy, 100),
				 -EINVAL);
	}
	/* Text first, then the same address with a NUL in it. */
	memcpy(copy, "abXcd", 5);
	a = ctp_blobpool_intern_text(pool, copy, 5);
	assert_true(a >= 0);
	assert_true(ctp_blobpool_intern_text(pool, copy, 5) == a);
	assert_true(ctp_blobpool_intern(pool, "abXcd", 5) == a);
	copy[2] = '\0';
	assert_int_equal(ctp_blobpool_intern_text(pool, copy, 5), -EINVAL);
	/* The empty string. */
	a = ctp_blobpool_intern_text(pool, "", 0);
	assert_true(a >= 0 && ctp_blobpool_intern(pool, "", 0) == a);
	ctp_blobpool_free(pool);
}

/* A handle comes back as its id in its pool; another pool's (a later
 * capture's), one past the blobs and a negative one are -ESTALE. */
static void test_handles(void **unused)
{
	struct ctp_blobpool *a, *b;

	(void)unused;
	assert_int_equal(ctp_blobpool_new(&a), 0);
	assert_int_equal(ctp_blobpool_new(&b), 0);
	int64_t id = ctp_blobpool_intern_text(a, "/a.slice", 8);
	assert_true(id >= 0);
	assert_true(ctp_blobpool_intern_text(b, "/b", 2) >= 0);
	int64_t h = ctp_blobpool_handle(a, id);
	assert_true(h >= 0);
	assert_int_equal(ctp_blobpool_handle_id(a, h), id);
	assert_int_equal(ctp_blobpool_handle_id(b, h), -ESTALE);
	assert_int_equal(ctp_blobpool_handle_id(a, h + 1), -ESTALE);
	assert_int_equal(ctp_blobpool_handle_id(a, -1), -ESTALE);
	assert_int_equal(ctp_blobpool_handle_id(a, id), -ESTALE);
	ctp_blobpool_free(a);
	ctp_blobpool_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached_ids),
		cmocka_unit_test(test_cached_pools),
		cmocka_unit_test(test_cached_address),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_handles),
	};
	make_values();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
