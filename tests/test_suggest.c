/* SPDX-License-Identifier: MIT */
/* "Did you mean": edit distance and the closest-name choice
 * (core/cli/suggest.c).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "suggest.h"

static void test_distance(void **unused)
{
	(void)unused;
	assert_int_equal(ctp_edit_distance("", ""), 0);
	assert_int_equal(ctp_edit_distance("smaps", "smaps"), 0);
	assert_int_equal(ctp_edit_distance("smap", "smaps"), 1);
	assert_int_equal(ctp_edit_distance("shwo", "show"), 2);
	assert_int_equal(ctp_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(ctp_edit_distance("", "io"), 2);
	char long_name[70];
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(ctp_edit_distance(long_name, "a"), UINT_MAX);
}

static void test_closest(void **unused)
{
	(void)unused;
	static const char *const plugins[] = {
		"procfs-stat", "schedstat",	 "io",	"smaps", "taskstats",
		"cgroup",      "jemalloc-probe", "psi", NULL};
	char out[32];
	ctp_closest_name("smap", plugins, out, sizeof(out));
	assert_string_equal(out, "smaps");
	ctp_closest_name("taskstat", plugins, out, sizeof(out));
	assert_string_equal(out, "taskstats");
	ctp_closest_name("jemalloc-prbe", plugins, out, sizeof(out));
	assert_string_equal(out, "jemalloc-probe");
	ctp_closest_name("zzzzzzzz", plugins, out, sizeof(out));
	assert_string_equal(out, "");
	/* Two edits are always allowed; a tie goes to the first in byte
	 * order ("io" and "psi" are both 2 from "pio"... "io" is 1). */
	ctp_closest_name("pio", plugins, out, sizeof(out));
	assert_string_equal(out, "io");
	static const char *const tie[] = {"abd", "abc", NULL};
	ctp_closest_name("abx", tie, out, sizeof(out));
	assert_string_equal(out, "abc");
	assert_true(ctp_is_typo_of("cgrop", "cgroup"));
	assert_false(ctp_is_typo_of("psi", "io"));
	assert_false(ctp_is_typo_of("procfs", "procfs-stat"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_closest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
