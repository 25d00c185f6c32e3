/* SPDX-License-Identifier: MIT */
/*
 * Crash containment (issue 13): a plugin that really crashes
 * (tests/plugins/abi_crash.c) in any of its entry points, in any way, with
 * one or two workers, costs the user that plugin and nothing else: exit 0,
 * one warning naming plugin, callback, signal and task, and a snapshot
 * with the plugin failed ("crashed: ...") and every other plugin's values
 * equal to a capture without it. A required plugin, --strict, a crash of
 * the core, and a child killed from outside all fail with nothing written;
 * --no-supervise keeps the old behaviour (the process dies of the signal).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "reader.h"
#include "sanitizer.h"

#define FIX_PROC CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	 CTP_TEST_FIXTURES "/sys"
/* A thread of the fixture's process 1204 (threads 1204..1207). */
#define CRASH_TID "1206"

static char tmpdir[PATH_MAX];

struct run {
	int rc; /* exit code, or -1000 - signal */
	char dir[PATH_MAX], cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	char *err; /* stderr */
};

/* Write a config with procfs-stat and `plugins` (YAML lines under
 * plugins:, or ""), under a new directory named tag. */
static void setup(struct run *r, const char *tag, unsigned workers,
		  const char *plugins)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(E2E_PATHF(r->dir, "%s/%s", tmpdir, tag), 0);
	assert_int_equal(mkdir(r->dir, 0700), 0);
	assert_int_equal(E2E_PATHF(r->cfg, "%s/c.yaml", r->dir), 0);
	assert_int_equal(E2E_PATHF(r->out, "%s/s.ctprof.zst", r->dir), 0);
	assert_int_equal(E2E_PATHF(r->log, "%s/log", r->dir), 0);
	char yaml[4 * PATH_MAX];
	int n = snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\", \"%s\"]\n"
			 "workers: %u\n"
			 "roots: {proc: \"%s\", sys: \"%s\"}\n"
			 "plugins:\n"
			 "  procfs-stat: {options: {affinity: status}}\n%s",
			 CTP_ABI_PLUGIN_DIR, CTP_TEST_PLUGIN_DIR, workers,
			 FIX_PROC, FIX_SYS, plugins);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	assert_int_equal(e2e_write_file(r->cfg, yaml, (size_t)n), 0);
}

/* Run the capture with the config, and an extra flag (or NULL). */
static void run(struct run *r, const char *flag)
{
	const char *args[] = {"--config", r->cfg, "-o", r->out, flag, NULL};
	r->rc = e2e_run(args, NULL, r->log);
	size_t len;
	assert_int_equal(e2e_read_file(r->log, &r->err, &len), 0);
}

static void run_done(struct run *r)
{
	free(r->err);
	r->err = NULL;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static size_t count_substr(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *s,
					    const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);
	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	fail_msg("plugin %s not in the snapshot", name);
	return NULL;
}

static struct ctp_snap *open_out(const struct run *r)
{
	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(r->out, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s: %s\nstderr:\n%s", r->out, err, r->err);
	return s;
}

/* The sum of procfs.utime over the thread table, and the row count: what
 * the crash must not change. */
static void thread_summary(const struct ctp_snap *s, uint64_t *rows,
			   uint64_t *utime)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	*rows = t->rows;
	*utime = 0;
	for (size_t i = 0; i < t->rows; i++)
		*utime += e2e_u64(s, "procfs.utime", i);
}

/* The capture of the same tree without the crashing plugin. */
static void baseline(uint64_t *rows, uint64_t *utime)
{
	static uint64_t b_rows, b_utime;
	static bool done;
	if (!done) {
		struct run r;
		setup(&r, "baseline", 1, "");
		run(&r, NULL);
		if (r.rc != 0)
			fail_msg("baseline: exit %d\n%s", r.rc, r.err);
		struct ctp_snap *s = open_out(&r);
		thread_summary(s, &b_rows, &b_utime);
		ctp_snap_free(s);
		run_done(&r);
		done = true;
	}
	*rows = b_rows;
	*utime = b_utime;
}

/* One crash that is contained: exit 0, one warning, the plugin failed
 * with `reason`, everything else as in the baseline. */
static void expect_contained(const char *tag, unsigned workers,
			     const char *opts, const char *reason)
{
	struct run r;
	char plugins[512];
	snprintf(plugins, sizeof(plugins), "  abi-crash: {options: {%s}}\n",
		 opts);
	setup(&r, tag, workers, plugins);
	run(&r, NULL);
	if (r.rc != 0)
		fail_msg("%s: exit %d\n%s", tag, r.rc, r.err);
	char line[512];
	snprintf(line, sizeof(line),
		 "ctprof-core: warning: plugin abi-crash %s; capturing again "
		 "without it\n",
		 reason);
	if (count_substr(r.err, line) != 1 ||
	    count_substr(r.err, "capturing again") != 1)
		fail_msg("%s: wanted once:\n%s\nstderr:\n%s", tag, line, r.err);

	struct ctp_snap *s = open_out(&r);
	const struct ctp_snap_plugin *p = plugin(s, "abi-crash");
	assert_int_equal(p->status, CTP_PST_FAILED);
	assert_non_null(p->reason);
	assert_string_equal(p->reason, reason);
	/* Nothing of it: its field was never registered in the re-run. */
	assert_null(ctp_snap_field_find(s, "abi-crash.calls"));
	assert_int_equal(p->calls, 0);
	assert_int_equal(plugin(s, "procfs-stat")->status, CTP_PST_LOADED);
	uint64_t rows, utime, b_rows, b_utime;
	thread_summary(s, &rows, &utime);
	baseline(&b_rows, &b_utime);
	assert_int_equal(rows, b_rows);
	assert_int_equal(utime, b_utime);
	ctp_snap_free(s);
	run_done(&r);
}

/* Every entry point of a plugin, with one and two workers. */
static void test_crash_everywhere(void **unused)
{
	(void)unused;
	static const struct {
		const char *opts, *reason;
	} cases[] = {
		{"where: thread, tid: " CRASH_TID,
		 "crashed: SIGSEGV in thread callback (tid " CRASH_TID ")"},
		{"where: process, tid: 1204",
		 "crashed: SIGSEGV in process callback (pid 1204)"},
		{"where: init", "crashed: SIGSEGV in init"},
		{"where: host", "crashed: SIGSEGV in host callback"},
		{"where: finish", "crashed: SIGSEGV in finish callback"},
		{"where: fini", "crashed: SIGSEGV in fini"},
	};
	for (unsigned w = 1; w <= 2; w++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
			char tag[32];
			snprintf(tag, sizeof(tag), "every-%u-%zu", w, i);
			expect_contained(tag, w, cases[i].opts,
					 cases[i].reason);
		}
	}
}

/* abort() and a stack overflow (the handler runs on its own stack). */
static void test_crash_kinds(void **unused)
{
	(void)unused;
	expect_contained(
		"abort", 2, "where: thread, how: abort, tid: " CRASH_TID,
		"crashed: SIGABRT in thread callback (tid " CRASH_TID ")");
	expect_contained(
		"stack", 2, "where: thread, how: stack, tid: " CRASH_TID,
		"crashed: SIGSEGV in thread callback (tid " CRASH_TID ")");
}

/* The cgroup callback: the crash names the cgroup. */
static void test_crash_cgroup(void **unused)
{
	(void)unused;
	struct run r;
	setup(&r, "cgroup", 1, "  abi-crash: {options: {where: cgroup}}\n");
	run(&r, NULL);
	struct ctp_snap *s = open_out(&r);
	const struct ctp_snap_table *cg = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	if (!cg || cg->rows == 0) {
		/* The fixture gives no cgroup rows: nothing to crash in. */
		ctp_snap_free(s);
		run_done(&r);
		skip();
	}
	if (r.rc != 0 || count_substr(r.err, "SIGSEGV in cgroup callback "
					     "(cgroup /") != 1)
		fail_msg("exit %d\n%s", r.rc, r.err);
	assert_int_equal(plugin(s, "abi-crash")->status, CTP_PST_FAILED);
	ctp_snap_free(s);
	run_done(&r);
}

/* Two plugins crash: two re-runs, both marked, still exit 0. */
static void test_two_plugins(void **unused)
{
	(void)unused;
	struct run r;
	setup(&r, "two", 2,
	      "  abi-crash: {options: {where: thread, how: abort}}\n"
	      "  abi-crash2: {options: {where: host}}\n");
	run(&r, NULL);
	if (r.rc != 0 || count_substr(r.err, "capturing again") != 2)
		fail_msg("exit %d\n%s", r.rc, r.err);
	struct ctp_snap *s = open_out(&r);
	assert_int_equal(plugin(s, "abi-crash")->status, CTP_PST_FAILED);
	assert_string_equal(plugin(s, "abi-crash2")->reason,
			    "crashed: SIGSEGV in host callback");
	ctp_snap_free(s);
	run_done(&r);
}

/* A required plugin, or --strict: no second attempt, exit 3, no file. */
static void test_required_and_strict(void **unused)
{
	(void)unused;
	struct run r;
	setup(&r, "required", 1,
	      "  abi-crash: {required: true, options: {where: host}}\n");
	run(&r, NULL);
	assert_int_equal(r.rc, 3);
	assert_non_null(strstr(r.err, "ctprof-core: error: required plugin "
				      "abi-crash crashed: SIGSEGV in host "
				      "callback: no snapshot written\n"));
	assert_null(strstr(r.err, "capturing again"));
	assert_false(exists(r.out));
	run_done(&r);

	setup(&r, "strict", 2, "  abi-crash: {options: {where: thread}}\n");
	run(&r, "--strict");
	assert_int_equal(r.rc, 3);
	assert_non_null(strstr(r.err, "--strict: plugin abi-crash crashed"));
	assert_false(exists(r.out));
	run_done(&r);
}

/* --no-supervise: the capture is this process, and dies of the crash. */
static void test_no_supervise(void **unused)
{
	(void)unused;
	struct run r;
	setup(&r, "nosup", 1, "  abi-crash: {options: {where: thread}}\n");
	run(&r, "--no-supervise");
	/* Under ASan its own SEGV handler reports, then exits 1, or aborts
	 * with ASAN_OPTIONS=abort_on_error=1 (tools/dev.sh sets it). */
	int rc = r.rc;
	run_done(&r);
	if (CTP_TEST_ASAN)
		assert_true(rc == 1 || rc == -1000 - SIGABRT);
	else
		assert_int_equal(rc, -1000 - SIGSEGV);
	assert_false(exists(r.out));
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The supervised child of pid (the one capture process it runs). */
static pid_t child_of(pid_t pid)
{
	char path[64], *text = NULL;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
		 (int)pid);
	if (e2e_read_file(path, &text, &len) < 0)
		return -1;
	long c = strtol(text, NULL, 10);
	free(text);
	return c > 0 ? (pid_t)c : -1;
}

/*
 * A capture stuck in abi-hang's thread callbacks on two workers, while
 * the main thread waits for them in the core: signal the child's main
 * thread (a crash of the core) or kill the child (from outside). Both
 * fail with exit 1, a message, and no file; neither re-runs.
 */
static void stuck_then(int sig, bool main_thread, const char *want)
{
	struct run r;
	char tag[32], marker[PATH_MAX], plugins[2 * PATH_MAX];
	snprintf(tag, sizeof(tag), "stuck-%d", sig);
	assert_int_equal(E2E_PATHF(marker, "%s/%s-in", tmpdir, tag), 0);
	snprintf(plugins, sizeof(plugins),
		 "  abi-hang: {options: {marker: \"%s\"}}\n", marker);
	setup(&r, tag, 2, plugins);
	const char *args[] = {"--config", r.cfg, "-o", r.out, NULL};
	pid_t pid;
	assert_int_equal(e2e_spawn(args, NULL, r.log, &pid), 0);
	uint64_t t0 = now_ms();
	while (!exists(marker) && now_ms() - t0 < 30000) {
		struct timespec ts = {.tv_nsec = 5000000};
		nanosleep(&ts, NULL);
	}
	pid_t child = child_of(pid);
	if (!exists(marker) || child <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("never entered the callback (child %d)", (int)child);
	}
	if (main_thread)
		assert_int_equal(syscall(SYS_tgkill, child, child, sig), 0);
	else
		assert_int_equal(kill(child, sig), 0);
	int st;
	assert_int_equal(e2e_wait(pid, &st), 0);
	size_t len;
	assert_int_equal(e2e_read_file(r.log, &r.err, &len), 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1 || !strstr(r.err, want))
		fail_msg("status %#x, wanted exit 1 and '%s'; stderr:\n%s", st,
			 want, r.err);
	assert_null(strstr(r.err, "capturing again"));
	assert_false(exists(r.out));
	run_done(&r);
}

static void test_core_crash_fails(void **unused)
{
	(void)unused;
	stuck_then(SIGSEGV, true,
		   "ctprof-core: error: the capture crashed with SIGSEGV "
		   "outside any plugin (collector thread ");
}

static void test_killed_child_fails(void **unused)
{
	(void)unused;
	stuck_then(SIGKILL, false,
		   "ctprof-core: error: the capture was killed by SIGKILL: "
		   "no snapshot written\n");
}

static int group_setup(void **unused)
{
	(void)unused;
	return e2e_tmpdir("crash", tmpdir, sizeof(tmpdir)) < 0 ? -1 : 0;
}

static int group_teardown(void **unused)
{
	(void)unused;
	if (!getenv("CTP_KEEP_TMP"))
		e2e_rm_rf(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_everywhere),
		cmocka_unit_test(test_crash_kinds),
		cmocka_unit_test(test_crash_cgroup),
		cmocka_unit_test(test_two_plugins),
		cmocka_unit_test(test_required_and_strict),
		cmocka_unit_test(test_no_supervise),
		cmocka_unit_test(test_core_crash_fails),
		cmocka_unit_test(test_killed_child_fails),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
