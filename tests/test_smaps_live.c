/* SPDX-License-Identifier: MIT */
/*
 * smaps on the live /proc: a child process maps 64 MiB of anonymous
 * memory, touches every page and parks. A capture of the host with the
 * smaps plugin must show its smaps.rss and smaps.anonymous at 64 MiB or
 * more, between what the kernel's own smaps_rollup says before and after
 * the capture; a capture with max_rss_bytes below that skips it (counted
 * in skipped_rss) without reading its smaps_rollup: its smaps.rss is then
 * statm's resident size, still 64 MiB or more, smaps.not_read says
 * "max_rss_bytes" and smaps.pss is absent.
 *
 * Exits 77 (skipped) when this kernel has no smaps_rollup (before 4.14).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define SKIP	 77
#define MAX_SNAP (1ull << 31)
#define TOUCHED	 (64ull << 20)

static char tmp[PATH_MAX];
static pid_t child;

/* Runs in the child: 64 MiB, every page written, then wait. */
static void child_main(int report)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, TOUCHED, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char ok = p != MAP_FAILED;

	for (uint64_t off = 0; ok && off < TOUCHED; off += (uint64_t)page)
		p[off] = 1;
	if (write(report, &ok, 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/* The line after l's, or NULL after the last. */
static const char *next_line(const char *l)
{
	l = strchr(l, '\n');
	return l ? l + 1 : NULL;
}

/* The kB of a key of /proc/<pid>/smaps_rollup, or -1. */
static int64_t kernel_kib(pid_t pid, const char *key)
{
	char path[64], *text;
	const char *p;
	int64_t v = -1;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (e2e_read_file(path, &text, NULL) < 0)
		return -1;
	for (p = text; p && *p; p = next_line(p))
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			v = (int64_t)strtoull(p + kl + 1, NULL, 10);
			break;
		}
	free(text);
	return v;
}

/* Capture the host with smaps and `opts`; the decoded snapshot. */
static struct ctp_snap *capture(const char *tag, const char *opts)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], err[512];
	struct ctp_snap *s = NULL;
	FILE *f;
	int rc;

	assert_int_equal(E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(out, "%s/%s.ctprof.zst", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(log, "%s/%s.log", tmp, tag), 0);
	f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nworkers: 2\n"
		"plugins:\n  smaps: {required: true, options: {%s}}\n",
		CTP_TEST_PLUGIN_DIR, opts);
	assert_int_equal(fclose(f), 0);
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	rc = e2e_run(args, NULL, log);
	if (rc != 0) {
		e2e_show_file("ctprof-core stderr", log);
		fail_msg("capture exited with %d", rc);
	}
	if (ctp_snap_open(out, MAX_SNAP, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return s;
}

static size_t row_of(const struct ctp_snap *s, pid_t pid)
{
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);

	for (size_t i = 0; i < pt->rows; i++)
		if (pt->tgid[i] == (uint64_t)pid)
			return i;
	fail_msg("process %d is not in the snapshot", (int)pid);
	return 0;
}

static size_t child_row(const struct ctp_snap *s)
{
	return row_of(s, child);
}

static uint64_t summary(const struct ctp_snap *s, const char *name)
{
	const struct ctp_snap_plugin *p = &ctp_snap_plugins(s)[0];

	for (size_t i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			return p->summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

static void touched_memory_shows(void **state)
{
	(void)state;
	int64_t rss0 = kernel_kib(child, "Rss");
	int64_t anon0 = kernel_kib(child, "Anonymous");
	struct ctp_snap *s = capture("default", "");
	int64_t rss1 = kernel_kib(child, "Rss");
	int64_t anon1 = kernel_kib(child, "Anonymous");
	size_t row = child_row(s);
	const struct ctp_snap_field *rf = ctp_snap_field_find(s, "smaps.rss");
	const struct ctp_snap_field *af =
		ctp_snap_field_find(s, "smaps.anonymous");

	assert_non_null(rf);
	assert_non_null(af);
	struct ctp_value rss = ctp_snap_get(s, rf, row);
	struct ctp_value anon = ctp_snap_get(s, af, row);
	assert_int_equal(rss.type, CTP_TYPE_U64);
	assert_int_equal(anon.type, CTP_TYPE_U64);
	print_message("[ INFO     ] child %d: smaps.rss %" PRIu64
		      " bytes, smaps.anonymous %" PRIu64
		      " (kernel: Rss %" PRId64 "..%" PRId64 " kB)\n",
		      (int)child, rss.u64, anon.u64, rss0, rss1);
	assert_true(rss.u64 >= TOUCHED);
	assert_true(anon.u64 >= TOUCHED);
	/* The child is parked: the kernel's numbers bracket ours. */
	assert_true(rss0 >= 0 && rss1 >= 0 && anon0 >= 0 && anon1 >= 0);
	int64_t lo = rss0 < rss1 ? rss0 : rss1, hi = rss0 < rss1 ? rss1 : rss0;
	assert_true(rss.u64 >= (uint64_t)lo * 1024 &&
		    rss.u64 <= (uint64_t)hi * 1024);
	lo = anon0 < anon1 ? anon0 : anon1;
	hi = anon0 < anon1 ? anon1 : anon0;
	assert_true(anon.u64 >= (uint64_t)lo * 1024 &&
		    anon.u64 <= (uint64_t)hi * 1024);
	ctp_snap_free(s);
}

static void size_cap_skips(void **state)
{
	(void)state;
	struct ctp_snap *s = capture("cap", "max_rss_bytes: 32MiB");
	size_t row = child_row(s);
	const struct ctp_snap_field *rf = ctp_snap_field_find(s, "smaps.rss");

	const struct ctp_snap_field *pf = ctp_snap_field_find(s, "smaps.pss");
	const struct ctp_snap_field *wf =
		ctp_snap_field_find(s, "smaps.not_read");

	/* This test process, far below 32 MiB, is read; the child is not,
	 * and keeps what statm said. */
	assert_non_null(rf);
	assert_non_null(pf);
	assert_non_null(wf);
	struct ctp_value rss = ctp_snap_get(s, rf, row);
	struct ctp_value why = ctp_snap_get(s, wf, row);
	assert_int_equal(rss.type, CTP_TYPE_U64);
	assert_true(rss.u64 >= TOUCHED);
	assert_int_equal(why.type, CTP_TYPE_STRING);
	assert_int_equal(why.str.len, strlen("max_rss_bytes"));
	assert_memory_equal(why.str.ptr, "max_rss_bytes", why.str.len);
	assert_int_equal(ctp_snap_get(s, pf, row).type, CTP_VALUE_ABSENT);
	size_t self = row_of(s, getpid());
	assert_int_equal(ctp_snap_get(s, pf, self).type, CTP_TYPE_U64);
	assert_int_equal(ctp_snap_get(s, wf, self).type, CTP_VALUE_ABSENT);
	assert_true(summary(s, "skipped_rss") >= 1);
	ctp_snap_free(s);
}

static int start_child(void **state)
{
	int fds[2];
	char ok = 0;

	(void)state;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		close(fds[0]);
		child_main(fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &ok, 1) != 1 || !ok) {
		fprintf(stderr, "the child could not map its memory\n");
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	return 0;
}

static int stop_child(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(touched_memory_shows),
		cmocka_unit_test(size_cap_skips),
	};
	int rc;

	if (access("/proc/self/smaps_rollup", R_OK) != 0) {
		printf("skip: /proc/self/smaps_rollup: %s (kernel before "
		       "4.14?)\n",
		       strerror(errno));
		return SKIP;
	}
	if (e2e_tmpdir("smaps-live", tmp, sizeof(tmp)) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, start_child, stop_child);
	e2e_rm_rf(tmp);
	return rc;
}
