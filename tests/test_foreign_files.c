/* SPDX-License-Identifier: MIT */
/*
 * Files a plugin opens on behalf of another process (issue 28 point 1),
 * with the real binary on the live host: a process run as nobody keeps
 * exchanging the files it maps with FIFOs of the same names
 * (tests/foreign_swap.c), and ctprof-core runs with tests/swap_shim.c
 * preloaded, which exchanges the files of a second set with their FIFOs
 * after every lookup ctprof-core makes of them: the timing a swap loop
 * hits only by chance, every time. With appstats and jemalloc-probe,
 *
 * - 20 captures each finish, and each snapshot holds the value that
 *   process publishes (appstats looked past its swapped files to the
 *   registry in its executable) and jemalloc-probe's walk of it;
 * - a recording of 20 files finishes with all 20 written, each the same.
 *
 * A run still going after 120 s is killed and the test fails: before the
 * fix, a plugin that found the file by stat() and then opened the path
 * again opened a FIFO and blocked forever. The times are printed.
 * Exits 77 when not root or without the user nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define RUNS	  20
#define LIMIT_MS  120000
#define PUBLISHED 4242

static char tmp[PATH_MAX], cfg[PATH_MAX];
static pid_t swapper = -1;

/* foreign_swap as nobody in tmp/u (a directory nobody owns): its pid once
 * set up. Its copy in tmp runs, whatever the build directory's modes. */
static pid_t start_swapper(void)
{
	struct passwd *pw = getpwnam("nobody");
	char exe[PATH_MAX], dir[PATH_MAX], line[64] = "", *img;
	size_t len, got = 0;
	int p[2];
	pid_t pid;

	assert_non_null(pw);
	assert_int_equal(E2E_PATHF(exe, "%s/foreign_swap", tmp), 0);
	assert_int_equal(E2E_PATHF(dir, "%s/u", tmp), 0);
	assert_int_equal(e2e_read_file(FOREIGN_SWAP, &img, &len), 0);
	assert_int_equal(e2e_write_file(exe, img, len), 0);
	free(img);
	assert_int_equal(chmod(exe, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, pw->pw_uid, pw->pw_gid), 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char fd[16];

		close(p[0]);
		if (setgroups(0, NULL) || setgid(pw->pw_gid) ||
		    setuid(pw->pw_uid))
			_exit(126);
		/* After the change of user, which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(fd, sizeof(fd), "%d", p[1]);
		execl(exe, exe, dir, fd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
		struct pollfd pf = {p[0], POLLIN, 0};
		ssize_t n;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		n = read(p[0], line + got, sizeof(line) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		line[got] = '\0';
	}
	close(p[0]);
	int v = 0;
	if (sscanf(line, "R %d", &v) != 1 || v != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("foreign_swap did not start: '%s'", line);
	}
	return pid;
}

/* The swapper's published value and jemalloc-probe's walk of it. */
static void check_snapshot(const struct ctp_snap *s, const char *path,
			   void *arg)
{
	long row = e2e_row(s, CTP_SCOPE_THREAD, (long)swapper);

	(void)arg;
	if (row < 0)
		fail_msg("%s: no row of the swapper (tid %d)", path,
			 (int)swapper);
	assert_int_equal(e2e_u64(s, "app.swap_seen", (size_t)row), PUBLISHED);
	assert_true(e2e_summary(s, "jemalloc-probe", "processes_walked") > 0);
}

/* One command with the watchdog: its time in ms. */
static uint64_t run_bounded(const char *const *args, const char *log,
			    const char *what)
{
	uint64_t t0 = e2e_now_ms();
	pid_t pid;
	int rc;

	assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
	rc = e2e_wait_bounded(pid, LIMIT_MS, what);
	if (rc != 0) {
		e2e_show_file("stderr", log);
		fail_msg("%s: exit %d", what, rc);
	}
	return e2e_now_ms() - t0;
}

static void test_captures(void **state)
{
	uint64_t total = 0, longest = 0;

	(void)state;
	for (int i = 0; i < RUNS; i++) {
		char out[PATH_MAX], log[PATH_MAX], what[64], err[512];
		const char *args[] = {"--config", cfg, "-o", out, NULL};
		struct ctp_snap *s;
		uint64_t ms;

		assert_int_equal(E2E_PATHF(out, "%s/c%d.ctprof.zst", tmp, i),
				 0);
		assert_int_equal(E2E_PATHF(log, "%s/c%d.log", tmp, i), 0);
		snprintf(what, sizeof(what), "capture %d of %d", i + 1, RUNS);
		ms = run_bounded(args, log, what);
		total += ms;
		longest = ms > longest ? ms : longest;
		if (ctp_snap_open(out, 1ull << 31, &s, err, sizeof(err)) < 0)
			fail_msg("%s: %s", out, err);
		check_snapshot(s, out, NULL);
		ctp_snap_free(s);
	}
	fprintf(stderr, "%d captures in %.1f s (longest %.2f s)\n", RUNS,
		(double)total / 1000, (double)longest / 1000);
}

static void test_record(void **state)
{
	char out[PATH_MAX], log[PATH_MAX], err[512], n[16];
	const char *args[] = {"record",	    "--config", cfg,	   "-o", out,
			      "--interval", "100ms",	"--count", n,	 NULL};
	size_t files = 0;

	(void)state;
	snprintf(n, sizeof(n), "%d", RUNS);
	assert_int_equal(E2E_PATHF(out, "%s/rec", tmp), 0);
	assert_int_equal(E2E_PATHF(log, "%s/rec.log", tmp), 0);
	uint64_t ms = run_bounded(args, log, "record");
	fprintf(stderr, "a recording of %d files in %.1f s\n", RUNS,
		(double)ms / 1000);
	assert_int_equal(e2e_count_entries(out, &files), 0);
	assert_int_equal(files, RUNS);
	int r = e2e_each_snapshot(out, check_snapshot, NULL, err, sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
	assert_int_equal(r, RUNS);
}

static int setup(void **state)
{
	FILE *f;

	(void)state;
	if (geteuid() != 0 || !getpwnam("nobody")) {
		fprintf(stderr, "skip: needs root and the user nobody\n");
		exit(77);
	}
	if (e2e_tmpdir("foreign", tmp, sizeof(tmp)) < 0 || chmod(tmp, 0711))
		return -1;
	if (E2E_PATHF(cfg, "%s/c.yaml", tmp) < 0 || !(f = fopen(cfg, "we")))
		return -1;
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nworkers: 2\nplugins:\n"
		"  appstats: {required: true}\n"
		"  jemalloc-probe: {required: true}\n",
		CTP_TEST_PLUGIN_DIR);
	if (fclose(f))
		return -1;
	swapper = start_swapper();
	/* For ctprof-core, not this process (loaded already). A sanitized
	 * ctprof-core accepts a library preloaded before its runtime. */
	const char *asan = getenv("ASAN_OPTIONS");
	char opts[1024];
	snprintf(opts, sizeof(opts), "%s%sverify_asan_link_order=0",
		 asan ? asan : "", asan && *asan ? ":" : "");
	if (setenv("LD_PRELOAD", SWAP_SHIM, 1) ||
	    setenv("CTP_SWAP_MARK", "/ctp-swap/", 1) ||
	    setenv("ASAN_OPTIONS", opts, 1))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (swapper > 0) {
		kill(swapper, SIGKILL);
		waitpid(swapper, NULL, 0);
	}
	e2e_rm_rf(tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captures),
		cmocka_unit_test(test_record),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
