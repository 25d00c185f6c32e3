/* SPDX-License-Identifier: MIT */
/*
 * Walking from a walk source on the live kernel (issue 33): with abi-walk
 * (tests/plugins/abi_walk.c) listing the tasks, names from /proc/<tid>/comm
 * and its declared thread files (stat, status, io) never fetched, a
 * capture run under `strace -f` opens no path under any thread's
 * task/<tid> (no thread directory, no up-front thread file), and still
 * records every thread of a child of its own, named. abi-walk lists only
 * that child (option tgid): the capture walks what the test made, on the
 * host's /proc, where the cgroup listings place the child as they place
 * any process (a pid namespace's listings name outsiders 0, which the
 * core refuses, and each process would then read a thread's cgroup).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define SKIP	77
#define THREADS 6

static char tmp[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("walk-live", tmp, sizeof(tmp)) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

/* A path under a thread's directory in a line of strace's: "task/"
 * followed by a digit, inside a quoted path. */
/* A path under task/<tid> of process kid in one strace -y line: relative
 * to kid's directory (the fd shown as <.../kid>) or through it. The
 * host's other processes are not in the list and are walked from their
 * files (walk_unlisted). */
static const char *thread_path(const char *line, pid_t kid)
{
	char dir[32], via[40];
	snprintf(dir, sizeof(dir), "/%d>", (int)kid);
	snprintf(via, sizeof(via), "/%d/task/", (int)kid);
	if (!strstr(line, dir) && !strstr(line, via))
		return NULL;
	for (const char *p = line; (p = strstr(p, "task/")) != NULL; p++)
		if (p[5] >= '0' && p[5] <= '9')
			return p;
	return NULL;
}

static void test_no_thread_path(void **state)
{
	(void)state;
	char cfg[PATH_MAX];
	assert_true(E2E_PATHF(cfg, "%s/live.yaml", tmp) >= 0);
	pid_t kid = e2e_crowd(THREADS, "walk-crowd");
	assert_true(kid > 0);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\n"
		"workers: 1\n"
		"plugins:\n"
		"  abi-walk: {options: {comm: live, fetch: false, tgid: %d}}\n",
		CTP_ABI_PLUGIN_DIR, (int)kid);
	assert_int_equal(fclose(f), 0);
	struct ctp_snap *s = NULL;
	char *text = NULL;
	int rc = e2e_strace_capture(cfg, tmp, "live", "openat,open,openat2", &s,
				    &text);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	if (rc < 0)
		fail_msg("strace ctprof-core failed");

	/* The trace saw the capture (the list's <tgid>/task of the child,
	 * opened by abi-walk) and no thread's path. */
	char listing[32];
	snprintf(listing, sizeof(listing), "\"%d/task\"", (int)kid);
	if (!strstr(text, listing))
		fail_msg("the trace has no open of %s:\n%.4000s", listing,
			 text);
	size_t bad = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (thread_path(line, kid) && bad++ < 10)
			fprintf(stderr, "opened: %s\n", line);
	}
	free(text);
	if (bad)
		fail_msg("%zu opens of a path under task/<tid>", bad);

	/* Every thread of the child, named from the list. */
	const struct ctp_snap_header *h = ctp_snap_header(s);
	assert_non_null(h->walk_source);
	assert_string_equal(h->walk_source, "abi-walk");
	/* The list named only the child: every other process of the host
	 * (this test's among them) was walked from its files. */
	assert_true(h->walk_unlisted > 0);
	assert_true(ctp_snap_row(ctp_snap_table(s, CTP_SCOPE_PROCESS),
				 (uint64_t)getpid(), 0) >= 0);
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t mine = 0;
	for (size_t r = 0; r < t->rows; r++) {
		if (t->tgid[r] != (uint64_t)kid)
			continue;
		mine++;
		assert_int_equal(t->comm[r].len, strlen("walk-crowd"));
		assert_memory_equal(t->comm[r].ptr, "walk-crowd",
				    t->comm[r].len);
		assert_int_equal(e2e_u64(s, "abi-walk.walked_tid", r),
				 t->tid[r]);
	}
	assert_int_equal(mine, THREADS + 1);
	ctp_snap_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_thread_path),
	};
	if (system("strace -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skipped: no strace (tools/dev.sh deps "
				"installs it)\n");
		return SKIP;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
