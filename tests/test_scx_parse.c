/* SPDX-License-Identifier: MIT */
/*
 * The sched_ext parsers (plugins/sched_ext/scx_parse.c) on literal text:
 * the sysfs attributes as kernel/sched/ext.c prints them, and the
 * ext.enabled line of sched files from kernels with and without
 * CONFIG_SCHED_CLASS_EXT, including hostile thread names and cut files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scx_parse.h"

static void counts(void **state)
{
	static const struct {
		const char *text;
		int ret;
		uint64_t v;
	} cases[] = {
		{"0\n", 0, 0},
		{"0", 0, 0},
		{"17\n", 0, 17},
		{"9223372036854775807\n", 0, 9223372036854775807ull},
		{"18446744073709551615\n", 0, UINT64_MAX},
		{"18446744073709551616\n", -ERANGE, 0},
		{"", -EINVAL, 0},
		{"\n", -EINVAL, 0},
		{"-1\n", -EINVAL, 0},
		{"+1\n", -EINVAL, 0},
		{" 1\n", -EINVAL, 0},
		{"1 \n", -EINVAL, 0},
		{"1\n\n", -EINVAL, 0},
		{"1\n2\n", -EINVAL, 0},
		{"12x\n", -EINVAL, 0},
		{"0x10\n", -EINVAL, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 4242;
		int r = ctp_scx_parse_count(cases[i].text,
					    strlen(cases[i].text), &v);

		if (r != cases[i].ret)
			fail_msg("'%s': %d, expected %d", cases[i].text, r,
				 cases[i].ret);
		assert_true(v == (r == 0 ? cases[i].v : 4242));
	}
	/* Only len bytes count. */
	{
		uint64_t v;

		assert_int_equal(ctp_scx_parse_count("123\n456", 4, &v), 0);
		assert_int_equal(v, 123);
	}
}

static void flags(void **state)
{
	static const struct {
		const char *text;
		int ret;
		bool v;
	} cases[] = {
		{"0\n", 0, false},     {"1\n", 0, true},
		{"1", 0, true},	       {"2\n", -EINVAL, 0},
		{"01\n", -EINVAL, 0},  {"", -EINVAL, 0},
		{"\n", -EINVAL, 0},    {"y\n", -EINVAL, 0},
		{"1\n\n", -EINVAL, 0}, {"-1\n", -EINVAL, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool v = true;
		int r = ctp_scx_parse_flag(cases[i].text, strlen(cases[i].text),
					   &v);

		if (r != cases[i].ret)
			fail_msg("'%s': %d, expected %d", cases[i].text, r,
				 cases[i].ret);
		if (r == 0)
			assert_int_equal(v, cases[i].v);
	}
}

static void lines(void **state)
{
	static const struct {
		const char *text;
		int ret;
		const char *v;
	} cases[] = {
		{"enabled\n", 0, "enabled"},
		{"disabled\n", 0, "disabled"},
		{"enabling\n", 0, "enabling"},
		{"disabling", 0, "disabling"},
		/* Kept verbatim, whatever a future kernel prints. */
		{"bypassing\n", 0, "bypassing"},
		{"scx_lavd_1.0.12 x86\n", 0, "scx_lavd_1.0.12 x86"},
		{" rusty \n", 0, " rusty "},
		{"", -EINVAL, NULL},
		{"\n", -EINVAL, NULL},
		{"a\nb\n", -EINVAL, NULL},
		{"a\n\n", -EINVAL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s = NULL;
		size_t n = 0;
		int r = ctp_scx_parse_line(cases[i].text, strlen(cases[i].text),
					   &s, &n);

		if (r != cases[i].ret)
			fail_msg("'%s': %d, expected %d", cases[i].text, r,
				 cases[i].ret);
		if (r == 0) {
			assert_int_equal(n, strlen(cases[i].v));
			assert_memory_equal(s, cases[i].v, n);
			assert_ptr_equal(s, cases[i].text);
		} else {
			assert_null(s);
		}
	}
	/* A NUL byte cannot be stored in a string field. */
	{
		const char *s;
		size_t n;

		assert_int_equal(ctp_scx_parse_line("ab\0c\n", 5, &s, &n),
				 -EINVAL);
	}
}

#define DASHES                                                                 \
	"-------------------------------------------------------------------"  \
	"\n"
#define HDR "cat (4242, #threads: 1)\n" DASHES

/* Tail of a 6.12+ sched file with CONFIG_SCHED_CLASS_EXT, as
 * proc_sched_show_task() prints it: "%-45s:%21Ld\n". */
static const char ext_on[] = HDR
	"se.exec_start                                :         77001.234567\n"
	"nr_switches                                  :                   52\n"
	"policy                                       :                    7\n"
	"prio                                         :                  120\n"
	"ext.enabled                                  :                    1\n"
	"clock-delta                                  :                   30\n";

/* This host (Linux 6.18 without CONFIG_SCHED_CLASS_EXT): no such line. */
static const char ext_none[] = HDR
	"se.exec_start                                :       2253457.912410\n"
	"se.nr_migrations                             :                   54\n"
	"nr_switches                                  :                  418\n"
	"policy                                       :                    0\n"
	"prio                                         :                  120\n"
	"clock-delta                                  :                   40\n"
	"mm->numa_scan_seq                            :                    0\n";

static int task(const char *text, bool *on)
{
	return ctp_scx_parse_task(text, strlen(text), on);
}

static void task_lines(void **state)
{
	bool on = false;

	(void)state;
	assert_int_equal(task(ext_on, &on), 0);
	assert_true(on);
	assert_int_equal(task(HDR "ext.enabled                                 "
				  " :                    0\n",
			      &on),
			 0);
	assert_false(on);
	/* Minimal spacing, tab. */
	assert_int_equal(task(HDR "ext.enabled:1\n", &on), 0);
	assert_true(on);
	assert_int_equal(task(HDR "ext.enabled\t: 0\n", &on), 0);
	assert_false(on);

	on = true;
	assert_int_equal(task(ext_none, &on), -ENODATA);
	assert_true(on); /* untouched */
	assert_int_equal(task(HDR, &on), -ENODATA);
	/* The first line counts. */
	assert_int_equal(task(HDR "ext.enabled : 0\next.enabled : 1\n", &on),
			 0);
	assert_false(on);
}

static void task_bad_values(void **state)
{
	static const char *const values[] = {
		" 2", " -1", " 10", " 01", " true", "", " ", " 1 x", " 1x",
	};
	char text[256];
	bool on = true;

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		snprintf(text, sizeof(text), HDR "ext.enabled :%s\n",
			 values[i]);
		if (task(text, &on) != -EINVAL)
			fail_msg("value '%s' accepted", values[i]);
	}
	assert_int_equal(task(HDR "ext.enabled 1\n", &on), -EINVAL);
	assert_int_equal(task(HDR "ext.enabled\n", &on), -EINVAL);
	assert_true(on);
}

/* Only the exact key: not a longer one, not a prefixed one. */
static void task_key_exact(void **state)
{
	bool on = true;

	(void)state;
	assert_int_equal(task(HDR "ext.enabledx : 1\n"
				  "xext.enabled : 1\n"
				  " ext.enabled : 1\n"
				  "se.ext.enabled : 1\n",
			      &on),
			 -ENODATA);
	assert_int_equal(task(HDR "ext.enabledx : 1\next.enabled : 0\n", &on),
			 0);
	assert_false(on);
}

/*
 * The header ends at the first line of 16 or more '-': a thread may call
 * itself "\next.enabled:1\n" (15 bytes), which puts a whole fake line in
 * the header; it is never read. Without the dashes there is no header end
 * and nothing is read.
 */
static void task_header(void **state)
{
	bool on = true;

	(void)state;
	assert_int_equal(task("\next.enabled:1\n (7, #threads: 1)\n" DASHES
			      "ext.enabled : 0\n",
			      &on),
			 0);
	assert_false(on);
	assert_int_equal(task("\next.enabled:1\n (7, #threads: 1)\n" DASHES
			      "policy : 0\n",
			      &on),
			 -ENODATA);
	assert_int_equal(task("x (7, #threads: 1)\next.enabled : 1\n", &on),
			 -EINVAL);
	/* 15 dashes do not end a header; 16 do. */
	assert_int_equal(task("x (7, #threads: 1)\n---------------\n"
			      "ext.enabled : 1\n",
			      &on),
			 -EINVAL);
	assert_int_equal(task("x (7, #threads: 1)\n----------------\n"
			      "ext.enabled : 1\n",
			      &on),
			 0);
	assert_true(on);
	assert_int_equal(task("", &on), -EINVAL);
}

/* Every prefix of EXT_ON: found once the line is whole, never guessed. */
static void task_cut(void **state)
{
	const char *text = ext_on;
	const char *line = strstr(text, "ext.enabled");
	size_t line_end = (size_t)(strchr(line, '\n') - text) + 1;

	(void)state;
	for (size_t n = 0; n < sizeof(ext_on) - 1; n++) {
		bool on = false;
		int r = ctp_scx_parse_task(text, n, &on);
		int want;

		if (n >= line_end)
			want = 0;
		else if (n == 0 || text[n - 1] == '\n')
			want = n < (size_t)(strstr(text, "se.exec") - text)
				       ? -EINVAL
				       : -ENODATA;
		else
			want = -EMSGSIZE;
		if (r != want)
			fail_msg("cut at %zu: %d, expected %d", n, r, want);
		if (r == 0)
			assert_true(on);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts),
		cmocka_unit_test(flags),
		cmocka_unit_test(lines),
		cmocka_unit_test(task_lines),
		cmocka_unit_test(task_bad_values),
		cmocka_unit_test(task_key_exact),
		cmocka_unit_test(task_header),
		cmocka_unit_test(task_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
