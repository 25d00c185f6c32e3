/* SPDX-License-Identifier: MIT */
/* Unit tests for the io parser (plugins/io/io_parse.c) on literal kernel
 * text: complete, cut at every byte, garbage, overflow, missing lines and
 * keys a future kernel might add. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io_parse.h"
#include "test_io_text.h"

/* The values of IO_BASH, read off the text by eye. */
static const uint64_t bash_v[CTP_IO_N] = {273215, 12132,  67210, 490,
					  0,	  286720, 0};

static int parse(const char *s, struct ctp_io *io)
{
	return ctp_parse_io(s, strlen(s), io);
}

/* IO_BASH with the line of `key` replaced by `line` ("" drops it). */
static const char *with_line(char *out, size_t cap, const char *key,
			     const char *line)
{
	const char *p = strstr(IO_BASH, key), *nl;

	assert_non_null(p);
	assert_true(p == IO_BASH || p[-1] == '\n');
	nl = strchr(p, '\n');
	assert_non_null(nl);
	assert_true(snprintf(out, cap, "%.*s%s%s", (int)(p - IO_BASH), IO_BASH,
			     line, nl + 1) < (int)cap);
	return out;
}

static void key_names(void **state)
{
	static const char *const want[CTP_IO_N] = {"rchar",
						   "wchar",
						   "syscr",
						   "syscw",
						   "read_bytes",
						   "write_bytes",
						   "cancelled_write_bytes"};
	unsigned i;

	(void)state;
	for (i = 0; i < CTP_IO_N; i++)
		assert_string_equal(ctp_io_key_name(i), want[i]);
	assert_null(ctp_io_key_name(CTP_IO_N));
}

static void complete(void **state)
{
	struct ctp_io io;
	unsigned i;

	(void)state;
	assert_int_equal(parse(IO_BASH, &io), 0);
	assert_int_equal(io.present, CTP_IO_ALL);
	for (i = 0; i < CTP_IO_N; i++)
		assert_true(io.v[i] == bash_v[i]);

	/* Zeros are values, present like any other. */
	assert_int_equal(parse(IO_CAT, &io), 0);
	assert_int_equal(io.present, CTP_IO_ALL);
	assert_int_equal(io.v[CTP_IO_RCHAR], 6976);
	assert_int_equal(io.v[CTP_IO_SYSCR], 10);
	for (i = 0; i < CTP_IO_N; i++)
		if (i != CTP_IO_RCHAR && i != CTP_IO_SYSCR)
			assert_int_equal(io.v[i], 0);
}

/*
 * Cut after every byte: a value is present exactly when its whole line,
 * '\n' included, is in the buffer, and then it has its full value.
 */
static void truncated_everywhere(void **state)
{
	size_t len = strlen(IO_BASH), cut;
	struct ctp_io io;

	(void)state;
	for (cut = 0; cut <= len; cut++) {
		unsigned i, complete_lines = 0;
		int r = ctp_parse_io(IO_BASH, cut, &io);
		size_t k;

		for (k = 0; k < cut; k++)
			complete_lines += IO_BASH[k] == '\n';
		for (i = 0; i < CTP_IO_N; i++) {
			int want = i < complete_lines;

			assert_int_equal(!!(io.present & (1u << i)), want);
			if (want)
				assert_true(io.v[i] == bash_v[i]);
		}
		if (cut == len)
			assert_int_equal(r, 0);
		else
			assert_true(r == -ENODATA || r == -EMSGSIZE);
	}
	/* Cut inside the last number: that value is suspect, not wrong. */
	assert_int_equal(ctp_parse_io(IO_BASH, len - 1, &io), -EMSGSIZE);
	assert_int_equal(io.present, CTP_IO_ALL & ~(1u << (CTP_IO_N - 1)));
}

static void garbage(void **state)
{
	static const char *const bad[] = {
		"syscr: 67x10\n", "syscr: -5\n",       "syscr:\n",
		"syscr: 1 2\n",	  "syscr: 0x10\n",     "syscr: +5\n",
		"syscr: 5 \n",	  "syscr: \xff\xfe\n",
	};
	char buf[512];
	struct ctp_io io;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(
			parse(with_line(buf, sizeof(buf), "syscr:", bad[i]),
			      &io),
			-EINVAL);
		/* Only the bad value is lost. */
		assert_int_equal(io.present,
				 CTP_IO_ALL & ~(1u << CTP_IO_SYSCR));
		assert_true(io.v[CTP_IO_SYSCW] == 490);
	}
	/* Blanks between the colon and the number are the kernel's to pick. */
	assert_int_equal(
		parse(with_line(buf, sizeof(buf), "syscr:", "syscr:\t \t9\n"),
		      &io),
		0);
	assert_int_equal(io.v[CTP_IO_SYSCR], 9);
	/* Not io at all. */
	assert_int_equal(parse("garbage\n\x01\x02\n", &io), -ENODATA);
	assert_int_equal(io.present, 0);
	assert_int_equal(ctp_parse_io("", 0, &io), -ENODATA);
	assert_int_equal(io.present, 0);
}

static void overflow(void **state)
{
	char buf[512];
	struct ctp_io io;

	(void)state;
	assert_int_equal(parse(with_line(buf, sizeof(buf), "rchar:",
					 "rchar: 18446744073709551615\n"),
			       &io),
			 0);
	assert_true(io.v[CTP_IO_RCHAR] == UINT64_MAX);
	assert_int_equal(parse(with_line(buf, sizeof(buf), "rchar:",
					 "rchar: 18446744073709551616\n"),
			       &io),
			 -ERANGE);
	assert_int_equal(io.present, CTP_IO_ALL & ~(1u << CTP_IO_RCHAR));
	assert_int_equal(
		parse(with_line(buf, sizeof(buf), "write_bytes:",
				"write_bytes: 99999999999999999999999\n"),
		      &io),
		-ERANGE);
	assert_int_equal(io.present, CTP_IO_ALL & ~(1u << CTP_IO_WRITE_BYTES));
	assert_true(io.v[CTP_IO_CANCELLED_WRITE_BYTES] == 0);
}

static void missing_lines(void **state)
{
	char buf[512];
	struct ctp_io io;
	unsigned i;

	(void)state;
	for (i = 0; i < CTP_IO_N; i++) {
		char key[64];

		snprintf(key, sizeof(key), "%s:", ctp_io_key_name(i));
		assert_int_equal(
			parse(with_line(buf, sizeof(buf), key, ""), &io),
			-ENODATA);
		assert_int_equal(io.present, CTP_IO_ALL & ~(1u << i));
	}
	/* Missing and broken at once: the first problem in key order is
	 * reported, every good value kept. */
	static const char both[] = "rchar: 1\n"
				   "syscr: 3x\n"
				   "syscw: 4\n"
				   "read_bytes: 5\n"
				   "write_bytes: 6\n"
				   "cancelled_write_bytes: 7\n";
	assert_int_equal(parse(both, &io), -ENODATA);
	assert_int_equal(io.present, CTP_IO_ALL & ~(1u << CTP_IO_WCHAR) &
					     ~(1u << CTP_IO_SYSCR));
	assert_int_equal(io.v[CTP_IO_RCHAR], 1);
	assert_int_equal(io.v[CTP_IO_CANCELLED_WRITE_BYTES], 7);
}

/* A newer kernel's extra line changes nothing; the order does not matter
 * and a key that merely starts like a known one is not it. */
static void future_keys_and_order(void **state)
{
	static const char text[] = "cancelled_write_bytes: 7\n"
				   "rchar_total: 1\n"
				   "write_bytes_future: 99\n"
				   "write_bytes: 6\n"
				   "read_bytes: 5\n"
				   "syscw: 4\n"
				   "syscr: 3\n"
				   "wchar: 2\n"
				   "future_counter: 12345\n"
				   "rchar: 1\n";
	struct ctp_io io;
	unsigned i;

	(void)state;
	assert_int_equal(parse(text, &io), 0);
	assert_int_equal(io.present, CTP_IO_ALL);
	for (i = 0; i < CTP_IO_N; i++)
		assert_int_equal(io.v[i], i + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_names),
		cmocka_unit_test(complete),
		cmocka_unit_test(truncated_everywhere),
		cmocka_unit_test(garbage),
		cmocka_unit_test(overflow),
		cmocka_unit_test(missing_lines),
		cmocka_unit_test(future_keys_and_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
