/* SPDX-License-Identifier: MIT */
/* Unit tests for toolkit/scan.c, the bounded number and key scanners. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctprof/plugin-util.h"

static int u64_of(const char *s, uint64_t *v, size_t *used)
{
	const char *p = s;
	int r = ctp_scan_u64(&p, s + strlen(s), v);

	*used = (size_t)(p - s);
	return r;
}

static int i64_of(const char *s, int64_t *v, size_t *used)
{
	const char *p = s;
	int r = ctp_scan_i64(&p, s + strlen(s), v);

	*used = (size_t)(p - s);
	return r;
}

static void u64_digits(void **state)
{
	uint64_t v = 7;
	size_t used;

	(void)state;
	assert_int_equal(u64_of("0", &v, &used), 0);
	assert_int_equal(v, 0);
	assert_int_equal(used, 1);
	assert_int_equal(u64_of("12345 678", &v, &used), 0);
	assert_int_equal(v, 12345);
	assert_int_equal(used, 5);
	assert_int_equal(u64_of("007x", &v, &used), 0);
	assert_int_equal(v, 7);
	assert_int_equal(used, 3);
	assert_int_equal(u64_of("18446744073709551615", &v, &used), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(used, 20);
}

static void u64_no_digits(void **state)
{
	uint64_t v = 42;
	size_t used;

	(void)state;
	assert_int_equal(u64_of("", &v, &used), -EINVAL);
	assert_int_equal(used, 0);
	assert_int_equal(u64_of("x1", &v, &used), -EINVAL);
	assert_int_equal(used, 0);
	assert_int_equal(u64_of(" 1", &v, &used), -EINVAL);
	assert_int_equal(u64_of("-1", &v, &used), -EINVAL);
	assert_int_equal(used, 0);
	assert_int_equal(u64_of("+1", &v, &used), -EINVAL);
	assert_int_equal(v, 42); /* untouched on failure */
}

static void u64_overflow(void **state)
{
	uint64_t v = 42;
	size_t used;

	(void)state;
	/* UINT64_MAX + 1 */
	assert_int_equal(u64_of("18446744073709551616 9", &v, &used), -ERANGE);
	assert_int_equal(used, 20); /* past the digits, to resynchronize */
	assert_int_equal(v, 42);
	assert_int_equal(u64_of("99999999999999999999999999", &v, &used),
			 -ERANGE);
	assert_int_equal(used, 26);
	/* 10 * 1844674407370955161 + 6 overflows by the last digit only. */
	assert_int_equal(u64_of("18446744073709551620", &v, &used), -ERANGE);
	/* Leading zeros count as digits but not toward overflow; the
	 * unchecked first 18 digits must not hide one. */
	assert_int_equal(
		u64_of("00000000000000000018446744073709551615", &v, &used), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(used, 38);
	assert_int_equal(u64_of("0000000000000000001844674407370955161"
				"6",
				&v, &used),
			 -ERANGE);
	assert_int_equal(u64_of("999999999999999999", &v, &used), 0);
	assert_true(v == 999999999999999999ull);
	assert_int_equal(u64_of("9999999999999999999", &v, &used), 0);
	assert_true(v == 9999999999999999999ull);
}

static void u64_respects_end(void **state)
{
	const char buf[] = "123456";
	const char *p = buf;
	uint64_t v;

	(void)state;
	/* Bounded by end, not by a NUL. */
	assert_int_equal(ctp_scan_u64(&p, buf + 3, &v), 0);
	assert_int_equal(v, 123);
	assert_ptr_equal(p, buf + 3);
	p = buf;
	assert_int_equal(ctp_scan_u64(&p, buf, &v), -EINVAL);
	assert_ptr_equal(p, buf);
}

static void i64_signs(void **state)
{
	int64_t v = 0;
	size_t used;

	(void)state;
	assert_int_equal(i64_of("-51 ", &v, &used), 0);
	assert_true(v == -51);
	assert_int_equal(used, 3);
	assert_int_equal(i64_of("+19", &v, &used), 0);
	assert_true(v == 19);
	assert_int_equal(used, 3);
	assert_int_equal(i64_of("20", &v, &used), 0);
	assert_true(v == 20);
	assert_int_equal(i64_of("-0", &v, &used), 0);
	assert_true(v == 0);
	assert_int_equal(i64_of("9223372036854775807", &v, &used), 0);
	assert_true(v == INT64_MAX);
}

static void i64_no_digits(void **state)
{
	int64_t v = 5;
	size_t used;

	(void)state;
	assert_int_equal(i64_of("", &v, &used), -EINVAL);
	assert_int_equal(i64_of("-", &v, &used), -EINVAL);
	assert_int_equal(used, 0); /* a lone sign is not consumed */
	assert_int_equal(i64_of("+ 1", &v, &used), -EINVAL);
	assert_int_equal(used, 0);
	assert_int_equal(i64_of("--1", &v, &used), -EINVAL);
	assert_int_equal(i64_of("abc", &v, &used), -EINVAL);
	assert_true(v == 5);
}

static void i64_limits(void **state)
{
	int64_t v = 5;
	size_t used;

	(void)state;
	/* Exactly INT64_MIN has no positive counterpart but is valid. */
	assert_int_equal(i64_of("-9223372036854775808", &v, &used), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(used, 20);
	v = 5;
	/* INT64_MIN - 1 */
	assert_int_equal(i64_of("-9223372036854775809", &v, &used), -ERANGE);
	assert_int_equal(used, 20);
	assert_true(v == 5);
	/* INT64_MAX + 1 */
	assert_int_equal(i64_of("9223372036854775808", &v, &used), -ERANGE);
	assert_int_equal(used, 19);
	assert_int_equal(i64_of("18446744073709551616", &v, &used), -ERANGE);
	assert_true(v == 5);
}

static void blanks_and_lines(void **state)
{
	const char buf[] = " \t x\ny\n\nz";
	const char *end = buf + sizeof(buf) - 1;

	(void)state;
	assert_ptr_equal(ctp_skip_blanks(buf, end), buf + 3);
	assert_ptr_equal(ctp_skip_blanks(buf, buf + 2), buf + 2);
	assert_ptr_equal(ctp_skip_blanks(buf + 3, end), buf + 3);
	/* "\n" is not a blank. */
	assert_ptr_equal(ctp_skip_blanks(buf + 4, end), buf + 4);
	assert_ptr_equal(ctp_next_line(buf, end), buf + 5);
	assert_ptr_equal(ctp_next_line(buf + 5, end), buf + 7);
	assert_ptr_equal(ctp_next_line(buf + 7, end), buf + 8);
	/* Last line without '\n': end. */
	assert_ptr_equal(ctp_next_line(buf + 8, end), end);
	assert_ptr_equal(ctp_next_line(end, end), end);
}

static const char status_text[] = "Name:\tbash\n"
				  "VmRSSx:\t  999 kB\n"
				  "VmRSS:\t    1728 kB\n"
				  "xVmRSS:\t7 kB\n"
				  "Threads:\t1\n"
				  "Cpus_allowed_list:\t0-1\n"
				  "Empty:\n"
				  "voluntary_ctxt_switches:\t150";

static void kv_similar_keys(void **state)
{
	const char *v, *ve;

	(void)state;
	v = ctp_kv_find(status_text, sizeof(status_text) - 1, "VmRSS", &ve);
	assert_non_null(v);
	assert_int_equal(ve - v, 7);
	assert_memory_equal(v, "1728 kB", 7);
	assert_int_equal(*ve, '\n');

	v = ctp_kv_find(status_text, sizeof(status_text) - 1, "VmRSSx", &ve);
	assert_non_null(v);
	assert_memory_equal(v, "999 kB", 6);
	assert_int_equal(ve - v, 6);

	v = ctp_kv_find(status_text, sizeof(status_text) - 1, "VmRS", &ve);
	assert_null(v);
	v = ctp_kv_find(status_text, sizeof(status_text) - 1, "RSS", &ve);
	assert_null(v);
}

static void kv_missing_and_edges(void **state)
{
	const char *v, *ve = NULL;
	size_t len = sizeof(status_text) - 1;

	(void)state;
	assert_null(ctp_kv_find(status_text, len, "VmHWM", &ve));
	assert_null(ctp_kv_find(status_text, 0, "Name", &ve));
	assert_null(ve); /* untouched when not found */

	/* First line. */
	v = ctp_kv_find(status_text, len, "Name", &ve);
	assert_non_null(v);
	assert_memory_equal(v, "bash", 4);
	assert_int_equal(ve - v, 4);

	/* Empty value: value == value_end. */
	v = ctp_kv_find(status_text, len, "Empty", &ve);
	assert_non_null(v);
	assert_ptr_equal(v, ve);

	/* Last line without a newline. */
	v = ctp_kv_find(status_text, len, "voluntary_ctxt_switches", &ve);
	assert_non_null(v);
	assert_ptr_equal(ve, status_text + len);
	assert_memory_equal(v, "150", 3);

	/* The buffer bound hides keys beyond it. */
	assert_null(ctp_kv_find(status_text, 20, "VmRSS", &ve));
	/* A key cut before its ':' is no match. */
	assert_null(ctp_kv_find("Threads", 7, "Threads", &ve));
	/* The ':' must follow the key directly. */
	assert_null(ctp_kv_find("Threads :1\n", 11, "Threads", &ve));
}

/* Whole-string parse for command-line arguments. */
static void parse_u64_str(void **state)
{
	uint64_t v = 7;
	(void)state;
	assert_int_equal(ctp_parse_u64_str("0", &v), 0);
	assert_true(v == 0);
	assert_int_equal(ctp_parse_u64_str("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(ctp_parse_u64_str("18446744073709551616", &v),
			 -ERANGE);
	assert_int_equal(ctp_parse_u64_str("", &v), -EINVAL);
	assert_int_equal(ctp_parse_u64_str("-1", &v), -EINVAL);
	assert_int_equal(ctp_parse_u64_str("12x", &v), -EINVAL);
	assert_int_equal(ctp_parse_u64_str(" 1", &v), -EINVAL);
	assert_true(v == UINT64_MAX); /* untouched on failure */
}

/* A cgroup's own listing (v1 tasks, v2 cgroup.threads), as the kernel
 * prints it and broken. */
static void tid_listings(void **unused)
{
	uint32_t t[4];
	size_t n;

	(void)unused;
	assert_int_equal(ctp_parse_id_list("", 0, t, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ctp_count_lines("", 0), 0);
	/* cat /sys/fs/cgroup/pids/tasks (any order the kernel keeps). */
	assert_int_equal(ctp_parse_id_list("1\n734\n2\n", 8, t, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0], 1);
	assert_int_equal(t[1], 734);
	assert_int_equal(t[2], 2);
	assert_int_equal(ctp_count_lines("1\n734\n2\n", 8), 3);
	assert_int_equal(ctp_parse_id_list("2147483647\n", 11, t, 4, &n), 0);
	assert_int_equal(t[0], 2147483647u);
	/* More than room: the first cap kept. */
	assert_int_equal(ctp_parse_id_list("1\n2\n3\n", 6, t, 2, &n), -E2BIG);
	assert_int_equal(n, 2);
	/* Hostile: no final newline, 0, past INT32_MAX, sign, blank line,
	 * spaces, garbage after a number. What parsed before is counted. */
	static const char *const bad[] = {"5",
					  "0\n",
					  "2147483648\n",
					  "-1\n",
					  "\n",
					  "1\n\n",
					  " 1\n",
					  "1 \n",
					  "12x\n",
					  "7\n8",
					  "99999999999999999999\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(
			ctp_parse_id_list(bad[i], strlen(bad[i]), t, 4, &n),
			-EINVAL);
	assert_int_equal(ctp_parse_id_list("7\n8", 3, t, 4, &n), -EINVAL);
	assert_int_equal(n, 1);
	assert_int_equal(t[0], 7);
	/* The length is obeyed. */
	assert_int_equal(ctp_parse_id_list("7\n8\n", 2, t, 4, &n), 0);
	assert_int_equal(n, 1);
}

/* Ids two listings named: sorted, one per id, ambiguous when moved. */
static void id_pairs(void **unused)
{
	struct ctp_id_pair p[] = {{7, 1}, {3, 0}, {7, 2}, {5, 4},
				  {3, 0}, {9, 5}, {7, 1}};
	size_t n = sizeof(p) / sizeof(p[0]);

	(void)unused;
	ctp_id_pairs_sort(p, &n);
	assert_int_equal(n, 4);
	assert_int_equal(p[0].id, 3);
	assert_int_equal(p[0].val, 0); /* the same cgroup twice: kept */
	assert_int_equal(p[1].id, 5);
	assert_int_equal(p[2].id, 7);
	assert_int_equal(p[2].val, CTP_ID_AMBIGUOUS);
	assert_int_equal(ctp_id_pairs_find(p, n, 9)->val, 5);
	assert_ptr_equal(ctp_id_pairs_find(p, n, 5), &p[1]);
	assert_null(ctp_id_pairs_find(p, n, 4));
	assert_null(ctp_id_pairs_find(p, n, 10));
	assert_null(ctp_id_pairs_find(p, 0, 3));
	n = 0;
	ctp_id_pairs_sort(NULL, &n);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(u64_digits),
		cmocka_unit_test(u64_no_digits),
		cmocka_unit_test(u64_overflow),
		cmocka_unit_test(u64_respects_end),
		cmocka_unit_test(i64_signs),
		cmocka_unit_test(i64_no_digits),
		cmocka_unit_test(i64_limits),
		cmocka_unit_test(blanks_and_lines),
		cmocka_unit_test(kv_similar_keys),
		cmocka_unit_test(kv_missing_and_edges),
		cmocka_unit_test(parse_u64_str),
		cmocka_unit_test(tid_listings),
		cmocka_unit_test(id_pairs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
