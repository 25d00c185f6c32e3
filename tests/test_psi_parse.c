/* SPDX-License-Identifier: MIT */
/*
 * The PSI parser (plugins/psi/psi_parse.c) on literal text: this host's
 * files, the shapes other kernels print (irq full-only, pre-5.13 cpu
 * some-only), and hostile input (missing halves, garbage, overflow, out of
 * range averages, cut files).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "psi_parse.h"

static int parse(const char *text, struct ctp_psi *out)
{
	return ctp_parse_psi(text, strlen(text), out);
}

static void half_eq(const struct ctp_psi_half *h, uint32_t a10, uint32_t a60,
		    uint32_t a300, uint64_t total)
{
	assert_int_equal(h->avg10, a10);
	assert_int_equal(h->avg60, a60);
	assert_int_equal(h->avg300, a300);
	assert_true(h->total_us == total);
}

/* Verbatim from this host (Linux 6.18): /proc/pressure/cpu and io. */
static void host_files(void **state)
{
	struct ctp_psi p;

	(void)state;
	assert_int_equal(
		parse("some avg10=2.66 avg60=2.01 avg300=3.50 total=335709848\n"
		      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		      &p),
		0);
	assert_int_equal(p.present, CTP_PSI_SOME | CTP_PSI_FULL);
	half_eq(&p.some, 266, 201, 350, 335709848);
	half_eq(&p.full, 0, 0, 0, 0);

	assert_int_equal(
		parse("some avg10=0.00 avg60=0.19 avg300=0.38 total=29162536\n"
		      "full avg10=0.00 avg60=0.17 avg300=0.31 total=21343507\n",
		      &p),
		0);
	assert_int_equal(p.present, CTP_PSI_SOME | CTP_PSI_FULL);
	half_eq(&p.some, 0, 19, 38, 29162536);
	half_eq(&p.full, 0, 17, 31, 21343507);
}

/* Averages are exact: no float ever rounds 0.29 to 28. */
static void averages_exact(void **state)
{
	static const struct {
		const char *text;
		int ret;
		uint32_t v;
	} cases[] = {
		{"0.00", 0, 0},		{"0.01", 0, 1},
		{"0.29", 0, 29},	{"0.57", 0, 57},
		{"1.15", 0, 115},	{"12.34", 0, 1234},
		{"99.99", 0, 9999},	{"100.00", 0, 10000},
		{"100.99", 0, 10099},	{"101.00", -ERANGE, 0},
		{"999.99", -ERANGE, 0}, {"18446744073709551616.00", -ERANGE, 0},
		{"1.5", -EINVAL, 0},	{"1.234", -EINVAL, 0},
		{"1", -EINVAL, 0},	{"1.", -EINVAL, 0},
		{".50", -EINVAL, 0},	{"-1.00", -EINVAL, 0},
		{"+1.00", -EINVAL, 0},	{"1,00", -EINVAL, 0},
		{"1.0x", -EINVAL, 0},	{"1.00x", -EINVAL, 0},
		{"", -EINVAL, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].text;
		const char *end = p + strlen(p);
		uint32_t v = 7777;
		int r = ctp_psi_parse_avg(&p, end, &v);

		if (r != cases[i].ret)
			fail_msg("'%s': %d, expected %d", cases[i].text, r,
				 cases[i].ret);
		if (r == 0) {
			assert_int_equal(v, cases[i].v);
			assert_ptr_equal(p, end);
		} else {
			assert_int_equal(v, 7777);
		}
	}
	/* A token ends at a blank or newline, and *p moves past it. */
	{
		const char *t = "12.34 total=1";
		const char *p = t;
		uint32_t v;

		assert_int_equal(ctp_psi_parse_avg(&p, t + strlen(t), &v), 0);
		assert_int_equal(v, 1234);
		assert_ptr_equal(p, t + 5);
	}
}

/* Every average of a line, in range and just beyond. */
static void averages_in_lines(void **state)
{
	struct ctp_psi p;

	(void)state;
	assert_int_equal(
		parse("some avg10=100.00 avg60=100.99 avg300=0.01 total=1\n",
		      &p),
		0);
	half_eq(&p.some, 10000, 10099, 1, 1);
	assert_int_equal(
		parse("some avg10=101.00 avg60=1.00 avg300=1.00 total=1\n"
		      "full avg10=5.00 avg60=6.00 avg300=7.00 total=8\n",
		      &p),
		-ERANGE);
	assert_int_equal(p.present, CTP_PSI_FULL);
	half_eq(&p.full, 500, 600, 700, 8);
}

static void total_bounds(void **state)
{
	struct ctp_psi p;

	(void)state;
	assert_int_equal(parse("full avg10=0.00 avg60=0.00 avg300=0.00 "
			       "total=18446744073709551615\n",
			       &p),
			 0);
	half_eq(&p.full, 0, 0, 0, UINT64_MAX);
	assert_int_equal(parse("full avg10=0.00 avg60=0.00 avg300=0.00 "
			       "total=18446744073709551616\n",
			       &p),
			 -ERANGE);
	assert_int_equal(p.present, 0);
	assert_int_equal(
		parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", &p),
		-EINVAL);
	assert_int_equal(
		parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=12a\n", &p),
		-EINVAL);
	assert_int_equal(
		parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=\n", &p),
		-EINVAL);
	assert_int_equal(p.present, 0);
}

/* irq prints "full" only; cpu printed "some" only before Linux 5.13. */
static void one_half(void **state)
{
	struct ctp_psi p;

	(void)state;
	assert_int_equal(
		parse("full avg10=0.12 avg60=0.05 avg300=0.01 total=81274\n",
		      &p),
		0);
	assert_int_equal(p.present, CTP_PSI_FULL);
	half_eq(&p.full, 12, 5, 1, 81274);
	half_eq(&p.some, 0, 0, 0, 0);

	assert_int_equal(
		parse("some avg10=3.00 avg60=2.00 avg300=1.00 total=42\n", &p),
		0);
	assert_int_equal(p.present, CTP_PSI_SOME);
	half_eq(&p.some, 300, 200, 100, 42);

	/* full before some is fine. */
	assert_int_equal(
		parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n"
		      "some avg10=0.00 avg60=0.00 avg300=0.00 total=4\n",
		      &p),
		0);
	assert_int_equal(p.present, CTP_PSI_SOME | CTP_PSI_FULL);
	assert_true(p.some.total_us == 4 && p.full.total_us == 3);
}

static void missing_and_repeated_keys(void **state)
{
	static const char *const bad[] = {
		"some avg10=1.00 avg60=1.00 total=1\n",
		"some avg10=1.00 avg60=1.00 avg300=1.00\n",
		"some\n",
		"some \n",
		"some avg10=1.00 avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
		"some avg10=1.00 avg60=1.00 avg300=1.00 total=1 total=2\n",
		"some avg10 avg60=1.00 avg300=1.00 total=1\n",
		"some =1.00 avg60=1.00 avg300=1.00 total=1\n",
		"some avg10=1.00avg60=1.00 avg300=1.00 total=1\n",
		"some avg10:1.00 avg60=1.00 avg300=1.00 total=1\n",
	};
	struct ctp_psi p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i], &p);

		if (r != -EINVAL || p.present != 0)
			fail_msg("'%s': %d, present %u", bad[i], r, p.present);
	}
}

/* Unknown keys are skipped (a later kernel may add one); blanks are any
 * run of spaces or tabs. */
static void unknown_keys_and_blanks(void **state)
{
	struct ctp_psi p;

	(void)state;
	assert_int_equal(parse("some avg10=1.00 avg30=9.99 avg60=2.00 "
			       "avg300=3.00 total=4 peak=77\n",
			       &p),
			 0);
	half_eq(&p.some, 100, 200, 300, 4);
	assert_int_equal(parse("some  avg10=1.00\tavg60=2.00 avg300=3.00   "
			       "total=4 \n",
			       &p),
			 0);
	half_eq(&p.some, 100, 200, 300, 4);
}

static void garbage(void **state)
{
	static const char *const lines[] = {
		"",
		"\n",
		"nonsense\n",
		"somex avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
		"Some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
		"half avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
		"some avg10=1.00 avg60=1.00 avg300=1.00 total=1 x\n",
		"some avg10=abc avg60=1.00 avg300=1.00 total=1\n",
	};
	static const char nul[] =
		"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\0\n";
	struct ctp_psi p;

	(void)state;
	/* Empty: nothing, -ENODATA. */
	assert_int_equal(ctp_parse_psi("", 0, &p), -ENODATA);
	assert_int_equal(p.present, 0);
	for (size_t i = 1; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int r = parse(lines[i], &p);

		if (r != -EINVAL || p.present != 0)
			fail_msg("case %zu: %d, present %u", i, r, p.present);
	}
	/* A NUL byte is garbage too, not the end of the text. */
	assert_int_equal(ctp_parse_psi(nul, sizeof(nul) - 1, &p), -EINVAL);
	assert_int_equal(p.present, 0);
	/* A bad line does not spoil the other half. */
	assert_int_equal(
		parse("some avg10=x avg60=1.00 avg300=1.00 total=1\n"
		      "full avg10=0.50 avg60=0.25 avg300=0.12 total=99\n",
		      &p),
		-EINVAL);
	assert_int_equal(p.present, CTP_PSI_FULL);
	half_eq(&p.full, 50, 25, 12, 99);
	/* Nor does an unknown line. */
	assert_int_equal(
		parse("bogus line\n"
		      "some avg10=0.50 avg60=0.25 avg300=0.12 total=99\n",
		      &p),
		-EINVAL);
	assert_int_equal(p.present, CTP_PSI_SOME);
}

/* A half twice: the first line decides, even when it is malformed. */
static void repeated_half(void **state)
{
	struct ctp_psi p;

	(void)state;
	assert_int_equal(
		parse("some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n"
		      "some avg10=2.00 avg60=2.00 avg300=2.00 total=2\n",
		      &p),
		-EINVAL);
	assert_int_equal(p.present, CTP_PSI_SOME);
	half_eq(&p.some, 100, 100, 100, 1);
	assert_int_equal(
		parse("some avg10=1.00 avg60=1.00 total=1\n"
		      "some avg10=2.00 avg60=2.00 avg300=2.00 total=2\n",
		      &p),
		-EINVAL);
	assert_int_equal(p.present, 0);
}

/* Every prefix of a two-line file: the cut line is absent, a whole line
 * before it is kept. A cut right after a newline looks like a file with
 * fewer lines (a pre-5.13 cpu file has only "some"), so it parses
 * cleanly. */
static void cut_files(void **state)
{
	static const char text[] =
		"some avg10=2.66 avg60=2.01 avg300=3.50 total=335709848\n"
		"full avg10=0.10 avg60=0.20 avg300=0.30 total=1234\n";
	size_t first = strchr(text, '\n') - text + 1;
	struct ctp_psi p;

	(void)state;
	for (size_t n = 1; n <= sizeof(text) - 1; n++) {
		int r = ctp_parse_psi(text, n, &p);
		uint32_t want = n >= first ? CTP_PSI_SOME : 0;

		if (n == sizeof(text) - 1) {
			assert_int_equal(r, 0);
			want |= CTP_PSI_FULL;
		} else if (n == first) {
			assert_int_equal(r, 0);
		} else if (r != -EMSGSIZE) {
			fail_msg("cut at %zu: %d", n, r);
		}
		if (p.present != want)
			fail_msg("cut at %zu: present %u, expected %u", n,
				 p.present, want);
	}
	half_eq(&p.full, 10, 20, 30, 1234);
}

/* The parser reads only len bytes: no NUL terminator needed. */
static void not_nul_terminated(void **state)
{
	char buf[64];
	const char *line = "full avg10=1.00 avg60=2.00 avg300=3.00 total=5\n";
	size_t n = strlen(line);
	struct ctp_psi p;

	(void)state;
	memcpy(buf, line, n);
	memset(buf + n, '7', sizeof(buf) - n);
	assert_int_equal(ctp_parse_psi(buf, n, &p), 0);
	half_eq(&p.full, 100, 200, 300, 5);
	/* Cut inside the total's digits. */
	assert_int_equal(ctp_parse_psi(buf, n - 2, &p), -EMSGSIZE);
	assert_int_equal(p.present, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_files),
		cmocka_unit_test(averages_exact),
		cmocka_unit_test(averages_in_lines),
		cmocka_unit_test(total_bounds),
		cmocka_unit_test(one_half),
		cmocka_unit_test(missing_and_repeated_keys),
		cmocka_unit_test(unknown_keys_and_blanks),
		cmocka_unit_test(garbage),
		cmocka_unit_test(repeated_half),
		cmocka_unit_test(cut_files),
		cmocka_unit_test(not_nul_terminated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
