/* SPDX-License-Identifier: MIT */
/*
 * Permission denials end to end: the real binary, run as `nobody` on a copy
 * of the fixture tree where one thread's stat and status are mode 0000,
 * must tally both reads as failed *and denied* (read_failures.denied), keep
 * the thread's row, and `show` must say that denials dominate and what to
 * do. Needs root to drop to nobody (skipped otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define FIX_PROC   CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	   CTP_TEST_FIXTURES "/sys"
#define FIX_CGROUP CTP_TEST_FIXTURES "/cgroup"
#define NOBODY	   65534

/* Run CTP_TEST_BINARY with args as uid/gid `nobody`, stdout and stderr to
 * files; the exit code, or -1 when it did not exit. */
static int run_as_nobody(const char *const *args, const char *out,
			 const char *err)
{
	const char *argv[16];
	size_t n = 0;
	argv[n++] = CTP_TEST_BINARY;
	for (size_t i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
		    setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 ||
		    setuid(NOBODY) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_denied_as_nobody(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], proc[PATH_MAX], cfg[PATH_MAX], snap[PATH_MAX],
		out[PATH_MAX], err[PATH_MAX], path[PATH_MAX];
	assert_int_equal(e2e_tmpdir("denied", dir, sizeof(dir)), 0);
	/* nobody walks the tree and writes the snapshot here. */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(E2E_PATHF(proc, "%s/proc", dir), 0);
	assert_int_equal(e2e_copy_tree(FIX_PROC, proc), 0);
	static const char *const shut[] = {"stat", "status"};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(
			E2E_PATHF(path, "%s/1204/task/1205/%s", proc, shut[i]),
			0);
		assert_int_equal(chmod(path, 0), 0);
	}
	assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", dir), 0);
	assert_int_equal(E2E_PATHF(snap, "%s/s.ctprof.zst", dir), 0);
	assert_int_equal(E2E_PATHF(out, "%s/out.txt", dir), 0);
	assert_int_equal(E2E_PATHF(err, "%s/err.txt", dir), 0);
	struct e2e_cfg c = {.proc = proc,
			    .sys = FIX_SYS,
			    .cgroup = FIX_CGROUP,
			    .workers = 1};
	assert_int_equal(e2e_write_config(cfg, &c), 0);
	assert_int_equal(chmod(cfg, 0644), 0);

	const char *capture[] = {"--config", cfg, "-o", snap, NULL};
	int rc = run_as_nobody(capture, out, err);
	if (rc != 0) {
		e2e_show_file("stderr", err);
		fail_msg("capture as nobody exited %d", rc);
	}
	struct ctp_snap *s = NULL;
	char why[512];
	if (ctp_snap_open(snap, 1ull << 30, &s, why, sizeof(why)) < 0)
		fail_msg("%s", why);
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	size_t st = e2e_tally_slot(rf, "stat"),
	       ss = e2e_tally_slot(rf, "status");
	assert_int_equal(rf->failures[st], 1);
	assert_int_equal(rf->denied[st], 1);
	assert_int_equal(rf->missing[st], 0);
	/* The fixture also lacks one thread's status on purpose. */
	assert_int_equal(rf->failures[ss], 2);
	assert_int_equal(rf->missing[ss], 1);
	assert_int_equal(rf->denied[ss], 1);
	/* The thread is still recorded: a denial is not a vanished task. */
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	bool found = false;
	for (size_t r = 0; r < t->rows; r++)
		found |= t->tid[r] == 1205;
	assert_true(found);
	ctp_snap_free(s);

	const char *show[] = {"show", "--summary", snap, NULL};
	assert_int_equal(e2e_run(show, out, err), 0);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(e2e_read_file(out, &text, &len), 0);
	if (!strstr(text, "2 of 3 read failures were permission denied")) {
		e2e_show_file("show --summary", out);
		fail_msg("show gives no permission hint");
	}
	free(text);
	e2e_rm_rf(dir);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr,
			"SKIP: needs root to run a capture as nobody\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denied_as_nobody),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
