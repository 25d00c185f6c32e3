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
 * With a process source loaded (the test plugin abi-procsrc) and the
 * processes' stat declared lazy (abi-walk-lazy), the child's process is
 * named from the list: neither its comm nor its stat is opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
/* The child's tids, from the snapshot's thread rows of tgid kid. */
struct tids {
	uint64_t v[THREADS + 8];
	size_t n;
};

static void kid_tids(const struct ctp_snap *s, pid_t kid, struct tids *out)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	out->n = 0;
	for (size_t r = 0; r < t->rows; r++)
		if (t->tgid[r] == (uint64_t)kid &&
		    out->n < sizeof(out->v) / sizeof(out->v[0]))
			out->v[out->n++] = t->tid[r];
}

/* Whether a line of strace's opens a path under task/<tid> of one of the
 * child's threads (relative to its process's directory, or through it).
 * The host's other processes are not in the list and are walked from
 * their files (walk_unlisted). */
static bool thread_path(const char *line, const struct tids *tids)
{
	for (size_t i = 0; i < tids->n; i++) {
		char pat[40];
		snprintf(pat, sizeof(pat), "task/%" PRIu64 "/", tids->v[i]);
		if (strstr(line, pat))
			return true;
		snprintf(pat, sizeof(pat), "task/%" PRIu64 "\"", tids->v[i]);
		if (strstr(line, pat))
			return true;
	}
	return false;
}

/* The child's THREADS + 1 threads are in snapshot s, and the trace (text,
 * freed) opened no path under any of theirs. */
static void expect_no_thread_path(const struct ctp_snap *s, pid_t kid,
				  char *text)
{
	struct tids tids;
	kid_tids(s, kid, &tids);
	assert_int_equal(tids.n, THREADS + 1);
	size_t bad = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (thread_path(line, &tids) && bad++ < 10)
			fprintf(stderr, "opened: %s\n", line);
	}
	free(text);
	if (bad)
		fail_msg("%zu opens of a path under the child's task/<tid>",
			 bad);
}

/* A child of THREADS threads named walk-crowd (*kid), captured under
 * strace (opens; with fds, each descriptor's path) with walk source `walk`
 * (abi-walk or a variant) listing only it, and `more` (config lines of
 * other plugins, "" for none); the snapshot into *s, the trace into
 * *text. */
static void crowd_capture(const char *tag, const char *walk, const char *more,
			  bool fds, pid_t *kid, struct ctp_snap **s,
			  char **text)
{
	char cfg[PATH_MAX];
	assert_true(E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag) >= 0);
	*kid = e2e_crowd(THREADS, "walk-crowd");
	assert_true(*kid > 0);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\n"
		"workers: 1\n"
		"plugins:\n"
		"  %s: {options: {comm: live, fetch: false, tgid: %d}}\n"
		"%s",
		CTP_ABI_PLUGIN_DIR, walk, (int)*kid, more);
	assert_int_equal(fclose(f), 0);
	int rc = fds ? e2e_strace_capture_fds(cfg, tmp, tag,
					      "openat,open,openat2", s, text)
		     : e2e_strace_capture(cfg, tmp, tag, "openat,open,openat2",
					  s, text);
	kill(*kid, SIGKILL);
	waitpid(*kid, NULL, 0);
	if (rc < 0)
		fail_msg("strace ctprof-core failed");
}

static void test_no_thread_path(void **state)
{
	(void)state;
	pid_t kid;
	struct ctp_snap *s = NULL;
	char *text = NULL;
	crowd_capture("live", "abi-walk", "", false, &kid, &s, &text);

	/* The trace saw the capture (the list's <tgid>/task of the child,
	 * opened by abi-walk) and no thread's path. */
	char listing[32];
	snprintf(listing, sizeof(listing), "\"%d/task\"", (int)kid);
	if (!strstr(text, listing))
		fail_msg("the trace has no open of %s:\n%.4000s", listing,
			 text);
	expect_no_thread_path(s, kid, text);

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

/*
 * The shipped configuration (issue 33: "a capture with the default set
 * opens no per-thread file or directory"): with bpf-task as the walk
 * source and every other plugin taking what it offers, no path under
 * the child's task/<tid> is opened (the cgroup plugin once read every
 * thread's stat for its start time; the kernel's workqueue workers, named
 * from their comm files, are not the child). Skipped where bpf-task
 * cannot load (not root, no BTF, bpf() refused).
 */
static void test_shipped_no_thread_path(void **state)
{
	(void)state;
	char cfg[PATH_MAX], src[PATH_MAX];
	assert_true(E2E_PATHF(cfg, "%s/shipped.yaml", tmp) >= 0);
	assert_true(E2E_PATHF(src, "%s/config/collectors.yaml",
			      CTP_SOURCE_DIR) >= 0);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(e2e_read_file(src, &text, &len), 0);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f, "%s\nplugin_dirs: [\"%s\"]\n", text, CTP_PLUGIN_DIR);
	assert_int_equal(fclose(f), 0);
	free(text);
	text = NULL;
	pid_t kid = e2e_crowd(THREADS, "walk-crowd");
	assert_true(kid > 0);
	struct ctp_snap *s = NULL;
	int rc = e2e_strace_capture(cfg, tmp, "shipped", "openat,open,openat2",
				    &s, &text);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	if (rc < 0)
		fail_msg("strace ctprof-core failed");
	const struct ctp_snap_header *h = ctp_snap_header(s);
	if (!h->walk_source) {
		free(text);
		ctp_snap_free(s);
		skip(); /* bpf-task did not load: its hint says why */
	}
	assert_string_equal(h->walk_source, "task");
	expect_no_thread_path(s, kid, text);
	ctp_snap_free(s);
}

/* The child's process named from the list (its leader's entry): with a
 * process source loaded, the core reads neither <tgid>/stat (declared
 * lazy, fetched by nobody) nor <tgid>/comm for it. */
static void test_process_name_listed(void **state)
{
	(void)state;
	pid_t kid;
	struct ctp_snap *s = NULL;
	char *text = NULL;
	crowd_capture("listed", "abi-walk-lazy", "  abi-procsrc: {}\n", true,
		      &kid, &s, &text);
	char pdir[48];
	snprintf(pdir, sizeof(pdir), "</proc/%d>, \"", (int)kid);
	size_t bad = 0;
	for (char *l = strstr(text, pdir); l; l = strstr(l + 1, pdir)) {
		const char *name = l + strlen(pdir);
		if (!strncmp(name, "comm\"", 5) || !strncmp(name, "stat\"", 5))
			bad++;
	}
	free(text);
	assert_string_equal(ctp_snap_header(s)->walk_source, "abi-walk-lazy");
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	long r = e2e_row(s, CTP_SCOPE_PROCESS, kid);
	assert_true(r >= 0);
	assert_int_equal(t->comm[r].len, strlen("walk-crowd"));
	assert_memory_equal(t->comm[r].ptr, "walk-crowd", t->comm[r].len);
	ctp_snap_free(s);
	if (bad)
		fail_msg("%zu opens of the child's comm or stat", bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_thread_path),
		cmocka_unit_test(test_process_name_listed),
		cmocka_unit_test(test_shipped_no_thread_path),
	};
	if (system("strace -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skipped: no strace (tools/dev.sh deps "
				"installs it)\n");
		return SKIP;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
