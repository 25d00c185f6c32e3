/* SPDX-License-Identifier: MIT */
/* A task's name from its stat line (core/capture/taskid.c), on literal
 * kernel text and hostile variants. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "taskid.h"

static void name_of(const char *stat, size_t outlen, const char *want,
		    int want_r)
{
	char out[64];

	memset(out, 'X', sizeof(out));
	assert_true(outlen <= sizeof(out));
	assert_int_equal(ctp_stat_comm(stat, strlen(stat), out, outlen),
			 want_r);
	assert_string_equal(out, want);
}

static void kernel_text(void **unused)
{
	(void)unused;
	/* cat /proc/self/stat (first fields) */
	name_of("4424 (cat) R 4422 4422 2610 0 -1 4194304 116 0\n", 64, "cat",
		0);
	/* A workqueue worker: '/' and '-' and ':' in the name, longer than
	 * TASK_COMM_LEN (proc_task_name() adds the workqueue's). */
	name_of("311 (kworker/u8:3-events_unbound) I 2 0 0 0 -1 69238880\n", 64,
		"kworker/u8:3-events_unbound", 0);
	/* Spaces and parentheses: the last ')' ends the name. */
	name_of("1204 (my (weird) name)) S 1 1204 1204 0 -1\n", 64,
		"my (weird) name)", 0);
	name_of("7 () S 1\n", 64, "", 0);
	/* A newline inside a name (prctl takes any byte but NUL). */
	name_of("9 (a\nb) S 1\n", 64, "a\nb", 0);
}

static void truncated_and_hostile(void **unused)
{
	(void)unused;
	/* Cut to what the buffer holds, as a read of comm would be. */
	name_of("5 (abcdefghijklmno) S\n", 8, "abcdefg", 0);
	name_of("5 (a) S\n", 1, "", 0);
	/* No name. */
	name_of("", 64, "", -EINVAL);
	name_of("12 S 1 2 3\n", 64, "", -EINVAL);
	name_of("12 (never closed S 1 2 3\n", 64, "", -EINVAL);
	name_of("12 ) before ( S\n", 64, "", -EINVAL);
	{
		char out[4];

		assert_int_equal(ctp_stat_comm(NULL, 0, out, sizeof(out)),
				 -EINVAL);
		assert_int_equal(ctp_stat_comm("1 (x) S", 7, out, 0), -EINVAL);
	}
	/* The length is obeyed: bytes past it are not the name's. */
	{
		const char text[] = "1 (abc) S";
		char out[8];

		assert_int_equal(ctp_stat_comm(text, 5, out, sizeof(out)),
				 -EINVAL);
	}
}

/* The state letter after the name: what decides whether a process's
 * leader is a zombie. */
static void state_letter(void **unused)
{
	char st = 0;

	(void)unused;
	assert_int_equal(ctp_stat_state("4424 (cat) R 4422\n", 18, &st), 0);
	assert_int_equal(st, 'R');
	assert_int_equal(ctp_stat_state("3333 (ghost) Z 1 3333\n", 22, &st), 0);
	assert_int_equal(st, 'Z');
	/* The last ')' ends the name, whatever it holds. */
	assert_int_equal(ctp_stat_state("1 (a) S) D 1\n", 13, &st), 0);
	assert_int_equal(st, 'D');
	/* Cut after the name, no blank, no name. */
	assert_int_equal(ctp_stat_state("1 (a)", 5, &st), -EINVAL);
	assert_int_equal(ctp_stat_state("1 (a) ", 6, &st), -EINVAL);
	assert_int_equal(ctp_stat_state("1 (a)S 1", 8, &st), -EINVAL);
	assert_int_equal(ctp_stat_state("1 a) S", 6, &st), -EINVAL);
	assert_int_equal(ctp_stat_state(NULL, 0, &st), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kernel_text),
		cmocka_unit_test(truncated_and_hostile),
		cmocka_unit_test(state_letter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
