/* SPDX-License-Identifier: MIT */
/*
 * compare --vs on this host (docs/COMPARE.md "Interval against interval"):
 * a child `ctp-vsload` runs as many busy threads as there are CPUs, once
 * free (side A) and once all pinned to one CPU (sched_setaffinity, side
 * B), each run between two captures of the built binary. The threads are
 * real-time round-robin (SCHED_RR 1; the test and its captures at 2), so
 * that the host's own load, whatever it is, never runs before them: free,
 * each has a CPU of its own and hardly waits (the kernel's real-time
 * throttling leaves 5% to the rest); pinned, while one runs the others
 * wait, k - 1 CPUs' worth of waiting. On a CFS-only load the two came out
 * 160.1% and 161.6% on this 2-CPU host under a load average of 8: the
 * host's tasks made the free threads wait as long. The test checks the
 * direction only: B's RUNQ% above A's, a ratio above 1 (sched view,
 * taskstats' CPU delay: this kernel keeps no schedstats); and a run
 * against itself: ratio 1, no change.
 * Delay accounting is turned on (kernel.task_delayacct) for the test and
 * restored after; without it, or without root, the test skips (77).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define DELAYACCT "/proc/sys/kernel/task_delayacct"

static char tmp[PATH_MAX];
static char delayacct_was = 0; /* '0' or '1' when the test changed it */

static void *spin(void *arg)
{
	(void)arg;
	for (volatile unsigned long x = 0;; x++)
		;
	return NULL;
}

/* The load: k busy threads (the main one and k - 1 more), all on one CPU
 * when pinned. Returns its pid; it runs until killed. */
static pid_t load(int k, bool pinned)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_NAME, "ctp-vsload");
	/* Real-time round-robin, below the test (and so the captures): no
	 * task of the host's own load runs before these threads, and the
	 * captures run before them. */
	struct sched_param sp = {.sched_priority = 1};
	if (sched_setscheduler(0, SCHED_RR, &sp) < 0)
		_exit(1);
	if (pinned) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			_exit(1);
	}
	for (int i = 1; i < k; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, NULL) != 0)
			_exit(1);
	}
	spin(NULL);
	_exit(0);
}

/* One run: the load started, a capture, 1.5 s, a capture, the load
 * ended; the files are dir/tag-{0,1}.ctprof.zst. */
static void run(const char *tag, int k, bool pinned, char path[2][PATH_MAX])
{
	const char *plugins = "  procfs-stat: {required: true}\n"
			      "  taskstats: {required: true}\n";
	pid_t pid = load(k, pinned);
	assert_true(pid > 0);
	struct timespec settle = {0, 200 * 1000 * 1000},
			gap = {1, 500 * 1000 * 1000};
	nanosleep(&settle, NULL);
	for (int i = 0; i < 2; i++) {
		char t[64];
		snprintf(t, sizeof(t), "%s-%d", tag, i);
		ctp_snap_free(e2e_capture_plugins(tmp, t, 1, plugins));
		assert_int_equal(e2e_pathf(path[i], PATH_MAX,
					   "%s/%s.ctprof.zst", tmp, t),
				 0);
		if (i == 0)
			nanosleep(&gap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The CSV line's fields after "Processes,ctp-vsload,RUNQ%,": medians and
 * the ratio. False when there is no such line. */
static bool runq(const char *csv, double *a, double *b, double *ratio)
{
	const char *p = strstr(csv, "\nProcesses,ctp-vsload,RUNQ%,");
	if (!p)
		return false;
	/* show,unit,a_median,a_spread_pct,a_n,b_median,b_spread_pct,b_n,
	 * ratio */
	p = strchr(p + 1, ',');
	for (int i = 0; p && i < 4; i++)
		p = strchr(p + 1, ',');
	if (!p)
		return false;
	char *end;
	*a = strtod(p + 1, &end);
	p = strchr(end + 1, ','); /* a_n */
	p = p ? strchr(p + 1, ',') : NULL;
	if (!p)
		return false;
	*b = strtod(p + 1, &end);
	p = strchr(end + 1, ',');
	p = p ? strchr(p + 1, ',') : NULL;
	if (!p)
		return false;
	*ratio = strtod(p + 1, NULL);
	return true;
}

static char *compare(char a[2][PATH_MAX], char b[2][PATH_MAX], const char *name)
{
	char out[PATH_MAX], *buf = NULL;
	size_t len;
	assert_int_equal(E2E_PATHF(out, "%s/%s.csv", tmp, name), 0);
	const char *args[] = {"compare",  a[0],	 a[1],	   "--vs",
			      b[0],	  b[1],	 "--view", "sched",
			      "--format", "csv", NULL};
	assert_int_equal(e2e_run(args, out, NULL), 0);
	assert_int_equal(e2e_read_file(out, &buf, &len), 0);
	return buf;
}

static void test_pinned_waits_more(void **state)
{
	(void)state;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int k = ncpu < 2 ? 2 : ncpu > 8 ? 8 : (int)ncpu;
	char a[2][PATH_MAX], b[2][PATH_MAX];
	double ma, mb, ratio;
	run("free", k, false, a);
	run("pinned", k, true, b);
	char *csv = compare(a, b, "vs");
	if (!runq(csv, &ma, &mb, &ratio))
		fail_msg("no RUNQ%% line for ctp-vsload:\n%s", csv);
	print_message("%d threads: RUNQ%% free %.1f, pinned %.1f, ratio %.2f\n",
		      k, ma, mb, ratio);
	if (!(mb > ma) || !(ratio > 1))
		fail_msg("the pinned run waits no more:\n%s", csv);
	free(csv);
	/* The free run against itself: the same numbers, ratio 1. */
	csv = compare(a, a, "self");
	if (!runq(csv, &ma, &mb, &ratio))
		fail_msg("no RUNQ%% line for ctp-vsload:\n%s", csv);
	assert_true(ma > 0);
	assert_true(ma == mb);
	assert_true(ratio == 1);
	free(csv);
}

/* Delay accounting on for the test (kernel.task_delayacct=1), restored
 * after; 77 without it. */
static int setup(void **state)
{
	(void)state;
	char c = 0;
	int fd = open(DELAYACCT, O_RDWR | O_CLOEXEC);
	if (fd < 0 || read(fd, &c, 1) != 1) {
		fprintf(stderr, "skip: no %s (no delay accounting)\n",
			DELAYACCT);
		exit(77);
	}
	if (c == '0') {
		if (pwrite(fd, "1\n", 2, 0) != 2) {
			fprintf(stderr,
				"skip: cannot turn delay accounting on "
				"(%s): %s\n",
				DELAYACCT, strerror(errno));
			exit(77);
		}
		delayacct_was = '0';
	}
	close(fd);
	if (geteuid() != 0) {
		fprintf(stderr, "skip: taskstats needs root\n");
		exit(77);
	}
	/* The captures inherit it: they run before the load. */
	struct sched_param sp = {.sched_priority = 2};
	if (sched_setscheduler(0, SCHED_RR, &sp) < 0) {
		fprintf(stderr, "skip: no real-time scheduling (%s)\n",
			strerror(errno));
		exit(77);
	}
	return e2e_tmpdir("vslive", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	struct sched_param sp = {.sched_priority = 0};
	sched_setscheduler(0, SCHED_OTHER, &sp);
	if (delayacct_was) {
		int fd = open(DELAYACCT, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0\n", 2) != 2)
			fprintf(stderr, "could not restore %s\n", DELAYACCT);
		if (fd >= 0)
			close(fd);
	}
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pinned_waits_more),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
