/* SPDX-License-Identifier: MIT */
/*
 * A recorder left running (issue 13's soak, issue 15's recorder): 1,000
 * captures of the live host with the shipped default config, one engine,
 * --no-supervise so the recorder is the process measured. Over 890
 * captures after the caches are warm (from the 100th) its open
 * descriptors must not change (the fewest of five samples at each end:
 * one may fall while a capture holds a file open) and its anonymous
 * resident memory (the heap; RssAnon) must not grow by more than 2 MiB in
 * both halves of the window (4 MiB in all: a leak of 4.5 KiB per capture
 * would). A leak grows every part of the window; a one-time growth (the
 * allocator settling after the host shrank or grew beside the test) grows
 * one half, and is not a leak. The window starts where the host stopped
 * growing (the recorder's snapshots at half their largest or more): a host that
 * grows beside the test grows the buffers once, which is not a leak; the
 * recorder runs up to 3,000 captures to find such a window, and the test
 * is skipped (77) saying so when the host kept growing. File-backed
 * memory is reported, not judged: jemalloc-probe with debuginfod: true
 * loads libdebuginfod (and curl, gnutls...) the first time a target lacks
 * debug information, a one-time 6 MiB of mapped libraries. Skipped (77) in
 * sanitizer builds, whose allocators keep freed memory on purpose.
 * That is the full size (CTP_FULL_SIZE=1, `tools/dev.sh soak`); the gate
 * (CI, `tools/dev.sh test`) takes 300 captures, 190 judged, where the same
 * bound catches a leak of 22 KiB per capture (a descriptor, at any size).
 * CTP_SOAK_CAPTURES sets any other count (at least 200).
 *
 * `test_record_soak workers` (ctest test_record_workers, not a soak: about
 * 15 seconds) is `record -j 2` with taskstats and procfs-stat, every 100
 * ms (the shortest interval), in a pid namespace of the test's own
 * (e2e_in_own_proc), where this process, the recorder and a crowd of 32
 * sleeping threads split among the workers are all there is (a capture's
 * time is the test's, not the host's: 10,000 threads beside it made 150
 * captures take 200 s): the engine's two worker threads and the
 * plugins' state of each (a taskstats netlink socket per worker) are the
 * same from capture to capture, so its descriptors after capture 150 are
 * those after capture 10 (issue 29: two sockets more per capture while
 * each capture had threads of its own). Skipped (77) without a TASKSTATS
 * genetlink family.
 */
#include <dirent.h>
#include <errno.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "sanitizer.h"

static char tmpdir[PATH_MAX];
static pid_t crowd; /* test_workers' second process */

/* The size in bytes of each capture the recorder reported on stderr so
 * far (its lines "...: N threads, ... in Ts, B bytes; ..."), in order, into
 * *v (grown); returns how many. */
static size_t captures(const char *log, uint64_t **v, size_t *cap)
{
	char *text;
	size_t len, n = 0;
	if (e2e_read_file(log, &text, &len) < 0)
		return 0;
	for (const char *p = text; (p = strstr(p, " threads, ")); p++) {
		const char *b = strstr(p, " bytes;");
		const char *nl = strchr(p, '\n');
		if (!b || (nl && b > nl))
			continue;
		while (b > p && b[-1] != ' ')
			b--;
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			*v = realloc(*v, *cap * sizeof(**v));
			assert_non_null(*v);
		}
		(*v)[n++] = strtoull(b, NULL, 10);
	}
	free(text);
	return n;
}

struct sample {
	size_t at; /* captures reported when it was taken */
	uint64_t anon_kib, file_kib;
	size_t fds;
};

static uint64_t kib(const char *text, const char *key)
{
	const char *r = strstr(text, key);
	assert_non_null(r);
	return strtoull(r + strlen(key), NULL, 10);
}

static struct sample measure(pid_t pid, size_t at)
{
	char path[64], *text;
	size_t len;
	struct sample s = {at, 0, 0, 0};
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	assert_int_equal(e2e_read_file(path, &text, &len), 0);
	s.anon_kib = kib(text, "\nRssAnon:");
	s.file_kib = kib(text, "\nRssFile:");
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	assert_int_equal(e2e_count_entries(path, &s.fds), 0);
	return s;
}

/*
 * The first capture from which the host is about its largest: the first
 * of bytes[from, n) at half their maximum or more (a host's size moves by
 * some percent between captures; what matters here is a host ten times
 * larger). The recorder's
 * buffers follow the largest host it has walked, and the allocator keeps
 * what was freed: a host that grows (another suite, 30,000 threads
 * started beside the test) grows RssAnon once, which is not a leak. A
 * leak grows it with every capture, so it shows in any window of
 * captures, and the window judged starts where the host stopped growing.
 */
static size_t settled_from(const uint64_t *bytes, size_t from, size_t n)
{
	uint64_t peak = 0;
	for (size_t i = from; i < n; i++)
		if (bytes[i] > peak)
			peak = bytes[i];
	for (size_t i = from; i < n; i++)
		if (bytes[i] * 2 >= peak)
			return i + 1; /* captures reported after it */
	return n;
}

static void test_soak(void **state)
{
	(void)state;
	if (CTP_TEST_ASAN) {
		fprintf(stderr, "skip: a sanitizer's allocator keeps freed "
				"memory; RSS says nothing here\n");
		exit(77);
	}
	size_t total = e2e_size("CTP_SOAK_CAPTURES", 300, 1000);
	if (total < 200)
		total = 200;
	/* The window judged: as many captures as from the 100th to the
	 * (total - 10)th on a host that does not grow; up to three times the
	 * captures to find it on one that does. */
	size_t want = total - 110, limit = 3 * total;
	char out[PATH_MAX], log[PATH_MAX], count[32];
	assert_int_equal(E2E_PATHF(out, "%s/out", tmpdir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/log", tmpdir), 0);
	snprintf(count, sizeof(count), "%zu", limit);
	const char *args[] = {"record",
			      "--config",
			      CTP_TEST_SOURCE_DIR "/config/collectors.yaml",
			      "-o",
			      out,
			      "--interval",
			      "100ms",
			      "--count",
			      count,
			      "--keep",
			      "3",
			      "--no-supervise",
			      NULL};
	pid_t pid;
	assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
	struct sample *smp = NULL;
	size_t n_smp = 0, cap_smp = 0, n = 0, cap = 0, from = 0;
	uint64_t *bytes = NULL;
	struct timespec ts = {0, 20000000};
	bool ended = false;
	for (;;) {
		size_t got = captures(log, &bytes, &cap);
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			ended = true;
			break;
		}
		if (got >= 100 && (got - 100) / 10 >= n_smp) {
			if (n_smp == cap_smp) {
				cap_smp = cap_smp ? 2 * cap_smp : 256;
				smp = realloc(smp, cap_smp * sizeof(*smp));
				assert_non_null(smp);
			}
			smp[n_smp++] = measure(pid, got);
		}
		n = got;
		from = settled_from(bytes, 99, n);
		if (n >= total - 10 && n_smp && smp[n_smp - 1].at >= n - 1 &&
		    n - (from > 100 ? from : 100) >= want)
			break;
		nanosleep(&ts, NULL);
	}
	if (ended)
		fail_msg("the recorder ended after %zu of %zu captures", n,
			 limit);
	assert_int_equal(kill(pid, SIGTERM), 0);
	int st;
	assert_int_equal(e2e_wait(pid, &st), 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 130)
		e2e_show_file("recorder stderr", log);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	size_t files = 0;
	assert_int_equal(e2e_count_entries(out, &files), 0);
	assert_int_equal(files, 3);
	/* The first sample at or after the host settled, and the last. */
	size_t k = 0;
	while (k + 1 < n_smp && smp[k].at < from)
		k++;
	struct sample a = smp[k], b = smp[n_smp - 1];
	/* Descriptors by their fewest over five samples at each end: a
	 * sample may fall while a capture holds its output file or a
	 * directory open for a moment; a leak raises the fewest. */
	for (size_t i = 1; i < 5 && k + i < n_smp && n_smp >= 10; i++) {
		if (smp[k + i].fds < a.fds)
			a.fds = smp[k + i].fds;
		if (smp[n_smp - 1 - i].fds < b.fds)
			b.fds = smp[n_smp - 1 - i].fds;
	}
	printf("soak: %zu captures, snapshots of %" PRIu64 " to %" PRIu64
	       " bytes; judged from capture %zu: RssAnon %" PRIu64
	       " KiB, RssFile %" PRIu64 " KiB, %zu fds; at %zu: RssAnon "
	       "%" PRIu64 " KiB, RssFile %" PRIu64 " KiB, %zu fds\n",
	       n, bytes[99], bytes[n - 1], a.at, a.anon_kib, a.file_kib, a.fds,
	       b.at, b.anon_kib, b.file_kib, b.fds);
	if (b.at - a.at < want) {
		fprintf(stderr,
			"skip: the host kept growing until capture %zu of %zu: "
			"%zu captures left to judge, %zu wanted\n",
			from, n, b.at - a.at, want);
		exit(77);
	}
	assert_int_equal(b.fds, a.fds);
	/* RssAnon by halves of the window: a leak grows both, by half the
	 * bound each at the rate the bound catches; a one-time growth (the
	 * allocator settling on a host that shrank or grew beside the test)
	 * lands in one of them. */
	struct sample mid = smp[k + (n_smp - 1 - k) / 2];
	printf("soak: RssAnon %+" PRId64
	       " KiB over captures %zu to %zu, %+" PRId64
	       " KiB over %zu to %zu\n",
	       (int64_t)(mid.anon_kib - a.anon_kib), a.at, mid.at,
	       (int64_t)(b.anon_kib - mid.anon_kib), mid.at, b.at);
	if (mid.anon_kib > a.anon_kib + 2048 &&
	    b.anon_kib > mid.anon_kib + 2048)
		fail_msg("RssAnon grew from %" PRIu64 " to %" PRIu64
			 " KiB over captures %zu to %zu, and again to %" PRIu64
			 " KiB by capture %zu",
			 a.anon_kib, mid.anon_kib, a.at, mid.at, b.anon_kib,
			 b.at);
	free(smp);
	free(bytes);
}

/* The fewest descriptors of pid over five samples 20 ms apart. */
static size_t fewest_fds(pid_t pid, size_t at)
{
	struct timespec ts = {0, 20000000};
	size_t fds = SIZE_MAX;
	for (int i = 0; i < 5; i++) {
		struct sample s = measure(pid, at);
		if (s.fds < fds)
			fds = s.fds;
		nanosleep(&ts, NULL);
	}
	return fds;
}

static void test_workers(void **state)
{
	(void)state;
	char out[PATH_MAX], log[PATH_MAX], cfg[PATH_MAX];
	assert_int_equal(E2E_PATHF(out, "%s/out", tmpdir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/log", tmpdir), 0);
	assert_int_equal(E2E_PATHF(cfg, "%s/workers.yaml", tmpdir), 0);
	crowd = e2e_crowd(32, "ctp-crowd");
	assert_true(crowd > 0);
	static const char yaml[] = "workers: 2\n"
				   "split_threads: 4\n"
				   "plugins:\n"
				   "  taskstats:\n"
				   "    enabled: true\n"
				   "  procfs-stat:\n"
				   "    enabled: true\n";
	assert_int_equal(e2e_write_file(cfg, yaml, sizeof(yaml) - 1), 0);
	const char *args[] = {"record", "--config",	  cfg,	   "-o",
			      out,	"--interval",	  "100ms", "--keep",
			      "2",	"--no-supervise", NULL};
	pid_t pid;
	assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
	uint64_t *bytes = NULL;
	size_t cap = 0, got = 0, fds_from = 0, fds_to = 0, at_from = 0;
	struct timespec ts = {0, 10000000};
	while (got < 150) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			e2e_show_file("recorder stderr", log);
			fail_msg("the recorder ended after %zu captures", got);
		}
		got = captures(log, &bytes, &cap);
		if (got >= 10 && !fds_from) {
			at_from = got;
			fds_from = fewest_fds(pid, got);
		}
		nanosleep(&ts, NULL);
	}
	fds_to = fewest_fds(pid, got);
	assert_int_equal(kill(pid, SIGTERM), 0);
	int st;
	assert_int_equal(e2e_wait(pid, &st), 0);
	char *text;
	size_t len;
	assert_int_equal(e2e_read_file(log, &text, &len), 0);
	bool family = !strstr(text, "no TASKSTATS genetlink family");
	free(text);
	free(bytes);
	printf("record -j 2: %zu fds after capture %zu, %zu after %zu\n",
	       fds_from, at_from, fds_to, got);
	if (!family) {
		fprintf(stderr, "skip: no TASKSTATS genetlink family: "
				"taskstats keeps no socket\n");
		exit(77);
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	assert_int_equal(fds_to, fds_from);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("soak", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	if (crowd > 0) {
		kill(crowd, SIGKILL);
		waitpid(crowd, NULL, 0);
		crowd = 0;
	}
	if (!getenv("CTP_KEEP_TMP"))
		e2e_rm_rf(tmpdir);
	return 0;
}

static int run_workers(void)
{
	const struct CMUnitTest workers[] = {cmocka_unit_test(test_workers)};
	return cmocka_run_group_tests(workers, setup, teardown) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest soak[] = {cmocka_unit_test(test_soak)};
	if (argc > 1 && strcmp(argv[1], "workers") == 0)
		return e2e_in_own_proc(run_workers);
	return cmocka_run_group_tests(soak, setup, teardown);
}
