/* SPDX-License-Identifier: MIT */
/* Unit tests for the smaps parsers (plugins/smaps/smaps_parse.c) on literal
 * kernel text: smaps_rollup complete, cut at every byte, with garbage,
 * overflow, repeated and unknown keys; statm; the option size syntax. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "smaps_parse.h"
#include "test_smaps_text.h"

static int parse(const char *s, struct ctp_smaps_rollup *sr)
{
	return ctp_parse_smaps_rollup(s, strlen(s), sr);
}

static void expect_kv(const struct ctp_smaps_rollup *sr, size_t i,
		      const char *key, uint64_t kib)
{
	assert_true(i < sr->n);
	assert_int_equal(sr->kv[i].key_len, strlen(key));
	assert_memory_equal(sr->kv[i].key, key, sr->kv[i].key_len);
	assert_true(sr->kv[i].value == kib * 1024);
}

/* Index of `key` in sr, or -1. */
static int find(const struct ctp_smaps_rollup *sr, const char *key)
{
	size_t i;

	for (i = 0; i < sr->n; i++)
		if (sr->kv[i].key_len == strlen(key) &&
		    memcmp(sr->kv[i].key, key, sr->kv[i].key_len) == 0)
			return (int)i;
	return -1;
}

static void rollup_complete(void **state)
{
	struct ctp_smaps_rollup sr;
	size_t i;

	(void)state;
	assert_int_equal(parse(ROLLUP_PY, &sr), 0);
	assert_int_equal(sr.n, ROLLUP_PY_N);
	assert_int_equal(sr.malformed, 0);
	assert_int_equal(sr.dropped, 0);
	for (i = 0; i < ROLLUP_PY_N; i++)
		expect_kv(&sr, i, ROLLUP_PY_KV[i].key, ROLLUP_PY_KV[i].kib);
	/* Keys point into the buffer. */
	assert_true(sr.kv[0].key > ROLLUP_PY &&
		    sr.kv[0].key < ROLLUP_PY + sizeof(ROLLUP_PY));

	assert_int_equal(parse(ROLLUP_CAT, &sr), 0);
	assert_int_equal(sr.n, 22);
	expect_kv(&sr, 0, "Rss", 1708);
	expect_kv(&sr, 1, "Pss", 377);
	expect_kv(&sr, 8, "Private_Clean", 40);
	expect_kv(&sr, 21, "Locked", 0);
}

/* The header is optional, blank lines are nothing, a process without mm
 * (empty file) has no keys, and none of that is a problem. */
static void rollup_header_and_empty(void **state)
{
	const char *body = strchr(ROLLUP_PY, '\n') + 1;
	struct ctp_smaps_rollup sr;

	(void)state;
	assert_int_equal(parse(body, &sr), 0);
	assert_int_equal(sr.n, ROLLUP_PY_N);
	assert_int_equal(ctp_parse_smaps_rollup("", 0, &sr), 0);
	assert_int_equal(sr.n, 0);
	assert_int_equal(parse("\n\nRss: 4 kB\n\n", &sr), 0);
	assert_int_equal(sr.n, 1);
	expect_kv(&sr, 0, "Rss", 4);
	/* A 32-bit kernel pads less; trailing blanks after the tag too. */
	assert_int_equal(parse("00400000-bffff000 ---p 00000000 00:00 0 "
			       "[rollup]  \nPss: 1 kB\n",
			       &sr),
			 0);
	assert_int_equal(sr.n, 1);
	expect_kv(&sr, 0, "Pss", 1);
	/* "[rollup]" elsewhere than at the end is not the header. */
	assert_int_equal(parse("[rollup] 1 kB\nRss: 2 kB\n", &sr), -EINVAL);
	assert_int_equal(sr.malformed, 1);
	assert_int_equal(sr.n, 1);
}

/* Every key is kept, known or not: a future kernel's keys need no code. */
static void rollup_future_keys(void **state)
{
	static const char text[] =
		"00400000-7ffdbe6ab000 ---p 00000000 00:00 0 [rollup]\n"
		"Rss:               11400 kB\n"
		"Zswapped_Future:      12 kB\n"
		"X:                     1 kB\n"
		"Pss_2026:              0 kB\n"
		"lower_case_key:        3 kB\n";
	struct ctp_smaps_rollup sr;

	(void)state;
	assert_int_equal(parse(text, &sr), 0);
	assert_int_equal(sr.n, 5);
	expect_kv(&sr, 0, "Rss", 11400);
	expect_kv(&sr, 1, "Zswapped_Future", 12);
	expect_kv(&sr, 2, "X", 1);
	expect_kv(&sr, 3, "Pss_2026", 0);
	expect_kv(&sr, 4, "lower_case_key", 3);
}

static void rollup_malformed(void **state)
{
	static const char *const bad[] = {
		"Rss 12 kB\n",	     /* no colon */
		"Rss: 12\n",	     /* no unit */
		"Rss: 12kB\n",	     /* unit glued on */
		"Rss: 12 MB\n",	     /* another unit */
		"Rss: 12 kB x\n",    /* trailing words */
		"Rss: x kB\n",	     /* not a number */
		"Rss: -1 kB\n",	     /* negative */
		"Rss: kB\n",	     /* no number */
		": 5 kB\n",	     /* no key */
		"Pss(Anon): 3 kB\n", /* key byte outside [A-Za-z0-9_] */
		"Rs s: 3 kB\n",	     /* blank in the key */
		"VmFlags: rd wr mr mw me ac\n", /* smaps, not rollup */
		"\xff\xfe: 1 kB\n",
		"Rss:\t12\tkB\x01\n",
	};
	char text[512];
	struct ctp_smaps_rollup sr;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "Pss: 7 kB\n%sSwap: 9 kB\n",
			 bad[i]);
		assert_int_equal(parse(text, &sr), -EINVAL);
		assert_int_equal(sr.malformed, 1);
		/* The good lines around it are kept, the bad one is not. */
		assert_int_equal(sr.n, 2);
		expect_kv(&sr, 0, "Pss", 7);
		expect_kv(&sr, 1, "Swap", 9);
	}
	/* Tabs count as blanks where the kernel puts spaces. */
	assert_int_equal(parse("Rss:\t12\tkB\n", &sr), 0);
	expect_kv(&sr, 0, "Rss", 12);

	/* A key of 64 bytes is fine, 65 is not. */
	memset(text, 'K', 65);
	strcpy(text + 64, ": 1 kB\n");
	assert_int_equal(parse(text, &sr), 0);
	assert_int_equal(sr.kv[0].key_len, 64);
	memset(text, 'K', 65);
	strcpy(text + 65, ": 1 kB\n");
	assert_int_equal(parse(text, &sr), -EINVAL);
	assert_int_equal(sr.n, 0);

	/* A repeated key is suspect: the first value stays. */
	assert_int_equal(parse("Rss: 1 kB\nPss: 2 kB\nRss: 3 kB\n", &sr),
			 -EINVAL);
	assert_int_equal(sr.n, 2);
	expect_kv(&sr, 0, "Rss", 1);
	assert_int_equal(sr.malformed, 1);

	/* Nothing but garbage. */
	assert_int_equal(parse("garbage\n\x01\n", &sr), -EINVAL);
	assert_int_equal(sr.n, 0);
	assert_int_equal(sr.malformed, 2);
}

static void rollup_overflow(void **state)
{
	struct ctp_smaps_rollup sr;

	(void)state;
	/* UINT64_MAX / 1024 kB still fits in bytes; one more does not. */
	assert_int_equal(parse("Rss: 18014398509481983 kB\n", &sr), 0);
	assert_true(sr.kv[0].value == 18014398509481983ull * 1024);
	assert_int_equal(parse("Rss: 18014398509481984 kB\nPss: 1 kB\n", &sr),
			 -ERANGE);
	assert_int_equal(sr.n, 1);
	expect_kv(&sr, 0, "Pss", 1);
	assert_int_equal(sr.malformed, 1);
	assert_int_equal(
		parse("Swap: 99999999999999999999999 kB\nPss: 1 kB\n", &sr),
		-ERANGE);
	assert_int_equal(sr.n, 1);
	assert_int_equal(find(&sr, "Swap"), -1);
}

/*
 * Cut after every byte: a key is kept exactly when its whole line, '\n'
 * included, is in the buffer, and then with its full value.
 */
static void rollup_truncated_everywhere(void **state)
{
	size_t len = strlen(ROLLUP_PY), cut;
	struct ctp_smaps_rollup sr;

	(void)state;
	for (cut = 0; cut <= len; cut++) {
		size_t lines = 0, k;
		int r = ctp_parse_smaps_rollup(ROLLUP_PY, cut, &sr);

		for (k = 0; k < cut; k++)
			lines += ROLLUP_PY[k] == '\n';
		/* The first complete line is the header. */
		assert_int_equal(sr.n, lines ? lines - 1 : 0);
		for (k = 0; k < sr.n; k++)
			expect_kv(&sr, k, ROLLUP_PY_KV[k].key,
				  ROLLUP_PY_KV[k].kib);
		if (cut == 0 || ROLLUP_PY[cut - 1] == '\n') {
			assert_int_equal(r, 0);
			assert_int_equal(sr.malformed, 0);
		} else {
			assert_int_equal(r, -EMSGSIZE);
			assert_int_equal(sr.malformed, 1);
		}
	}
}

static void rollup_too_many_keys(void **state)
{
	char text[64 * 80];
	struct ctp_smaps_rollup sr;
	size_t off = 0;
	int i;

	(void)state;
	for (i = 0; i < CTP_SMAPS_MAX_KEYS + 6; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"Key_%d: %d kB\n", i, i);
	assert_true(off < sizeof(text));
	assert_int_equal(parse(text, &sr), -E2BIG);
	assert_int_equal(sr.n, CTP_SMAPS_MAX_KEYS);
	assert_int_equal(sr.dropped, 6);
	assert_int_equal(sr.malformed, 0);
	expect_kv(&sr, 63, "Key_63", 63);
}

static void statm(void **state)
{
	static const struct {
		const char *text;
		int ret;
	} bad[] = {
		{"", -EMSGSIZE},
		{"4025", -EMSGSIZE},
		{"4025 ", -EMSGSIZE},
		{"4025 2850", -EMSGSIZE},
		{"4025\n", -EINVAL},
		{"4025  2850 0\n", -EINVAL},
		{"a b\n", -EINVAL},
		{"-1 2 3\n", -EINVAL},
		{"4025 28x0 0\n", -EINVAL},
		{"18446744073709551616 1 0\n", -ERANGE},
		{"1 99999999999999999999999 0\n", -ERANGE},
	};
	struct ctp_statm sm;
	size_t i;

	(void)state;
	assert_int_equal(ctp_parse_statm(STATM_PY, strlen(STATM_PY), &sm), 0);
	assert_int_equal(sm.size, 4025);
	assert_int_equal(sm.resident, 2850);
	assert_int_equal(
		ctp_parse_statm(STATM_KTHREAD, strlen(STATM_KTHREAD), &sm), 0);
	assert_int_equal(sm.size, 0);
	assert_int_equal(sm.resident, 0);
	/* Two numbers are enough; the line may end after the second. */
	assert_int_equal(ctp_parse_statm("7 5\n", 4, &sm), 0);
	assert_int_equal(sm.resident, 5);
	assert_int_equal(ctp_parse_statm("18446744073709551615 "
					 "18446744073709551615 0\n",
					 43, &sm),
			 0);
	assert_true(sm.resident == UINT64_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sm.resident = 12345;
		assert_int_equal(
			ctp_parse_statm(bad[i].text, strlen(bad[i].text), &sm),
			bad[i].ret);
		assert_int_equal(sm.resident, 12345); /* untouched */
	}
}

static void option_sizes(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{"0", 0},
		{"1048576", 1048576},
		{"1K", 1024},
		{"1KiB", 1024},
		{"512M", 512ull << 20},
		{"16GiB", 16ull << 30},
		{"16G", 16ull << 30},
		{"2TiB", 2ull << 40},
		{"16777215T", 16777215ull << 40},
		{"18446744073709551615", UINT64_MAX},
		{"unlimited", UINT64_MAX},
	};
	static const struct {
		const char *s;
		int ret;
	} bad[] = {
		{"", -EINVAL},
		{"16 GiB", -EINVAL},
		{"16gb", -EINVAL},
		{"16GB", -EINVAL},
		{"-1", -EINVAL},
		{"16GiBx", -EINVAL},
		{"0x10", -EINVAL},
		{"G", -EINVAL},
		{"Unlimited", -EINVAL},
		{"16777216T", -ERANGE},
		{"18446744073709551616", -ERANGE},
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 1;
		assert_int_equal(ctp_parse_size(good[i].s, CTP_SIZE_BYTES, &v),
				 0);
		assert_true(v == good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 1;
		assert_int_equal(ctp_parse_size(bad[i].s, CTP_SIZE_BYTES, &v),
				 bad[i].ret);
		assert_int_equal(v, 1);
	}
	/* Plain numbers (milliseconds) take no unit. */
	assert_int_equal(ctp_parse_size("300", CTP_SIZE_PLAIN, &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(ctp_parse_size("unlimited", CTP_SIZE_PLAIN, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(ctp_parse_size("300K", CTP_SIZE_PLAIN, &v), -EINVAL);
	assert_int_equal(ctp_parse_size(NULL, CTP_SIZE_PLAIN, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rollup_complete),
		cmocka_unit_test(rollup_header_and_empty),
		cmocka_unit_test(rollup_future_keys),
		cmocka_unit_test(rollup_malformed),
		cmocka_unit_test(rollup_overflow),
		cmocka_unit_test(rollup_truncated_everywhere),
		cmocka_unit_test(rollup_too_many_keys),
		cmocka_unit_test(statm),
		cmocka_unit_test(option_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
