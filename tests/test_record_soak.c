/* SPDX-License-Identifier: MIT */
/*
 * A recorder left running (issue 13's soak, issue 15's recorder): 1,000
 * captures of the live host with the shipped default config, one engine,
 * --no-supervise so the recorder is the process measured. Between the
 * 100th capture (caches warm) and the 990th, its open descriptors must not
 * change and its anonymous resident memory (the heap; RssAnon) must not
 * grow by more than 4 MiB (a leak of 4.5 KiB per capture would). File-
 * backed memory is reported, not judged: jemalloc-probe loads
 * libdebuginfod (and curl, gnutls...) the first time a target lacks debug
 * information, a one-time 6 MiB of mapped libraries. Skipped (77) in sanitizer
 * builds, whose allocators keep freed memory on purpose. CTP_SOAK_CAPTURES
 * overrides the count (at least 200).
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

/* Captures the recorder has reported on stderr so far. */
static size_t captures(const char *log)
{
	char *text;
	size_t len, n = 0;
	if (e2e_read_file(log, &text, &len) < 0)
		return 0;
	for (const char *p = text; (p = strstr(p, " threads, ")); p++)
		n++;
	free(text);
	return n;
}

struct sample {
	uint64_t anon_kib, file_kib;
	size_t fds;
};

static uint64_t kib(const char *text, const char *key)
{
	const char *r = strstr(text, key);
	assert_non_null(r);
	return strtoull(r + strlen(key), NULL, 10);
}

static struct sample measure(pid_t pid)
{
	char path[64], *text;
	size_t len;
	struct sample s = {0, 0, 0};
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	assert_int_equal(e2e_read_file(path, &text, &len), 0);
	s.anon_kib = kib(text, "\nRssAnon:");
	s.file_kib = kib(text, "\nRssFile:");
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	assert_int_equal(e2e_count_entries(path, &s.fds), 0);
	return s;
}

/* Wait until the log reports `n` captures (or the recorder ended). */
static void wait_for(pid_t pid, const char *log, size_t n)
{
	struct timespec ts = {0, 20000000};
	while (captures(log) < n) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			fail_msg("the recorder ended after %zu captures",
				 captures(log));
		nanosleep(&ts, NULL);
	}
}

static void test_soak(void **state)
{
	(void)state;
	if (CTP_TEST_ASAN) {
		fprintf(stderr, "skip: a sanitizer's allocator keeps freed "
				"memory; RSS says nothing here\n");
		exit(77);
	}
	const char *env = getenv("CTP_SOAK_CAPTURES");
	size_t total = env ? strtoul(env, NULL, 10) : 1000;
	if (total < 200)
		total = 200;
	char out[PATH_MAX], log[PATH_MAX], count[32];
	assert_int_equal(E2E_PATHF(out, "%s/out", tmpdir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/log", tmpdir), 0);
	snprintf(count, sizeof(count), "%zu", total);
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
	wait_for(pid, log, 100);
	struct sample a = measure(pid);
	wait_for(pid, log, total - 10);
	struct sample b = measure(pid);
	int st;
	assert_int_equal(e2e_wait(pid, &st), 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		e2e_show_file("recorder stderr", log);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	size_t files = 0;
	assert_int_equal(e2e_count_entries(out, &files), 0);
	assert_int_equal(files, 3);
	printf("soak: %zu captures; after 100: RssAnon %" PRIu64
	       " KiB, RssFile %" PRIu64 " KiB, %zu fds; after %zu: RssAnon "
	       "%" PRIu64 " KiB, RssFile %" PRIu64 " KiB, %zu fds\n",
	       total, a.anon_kib, a.file_kib, a.fds, total - 10, b.anon_kib,
	       b.file_kib, b.fds);
	assert_int_equal(b.fds, a.fds);
	if (b.anon_kib > a.anon_kib + 4096)
		fail_msg("RssAnon grew from %" PRIu64 " to %" PRIu64 " KiB",
			 a.anon_kib, b.anon_kib);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("soak", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("CTP_KEEP_TMP"))
		e2e_rm_rf(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_soak)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
