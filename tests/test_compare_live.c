/* SPDX-License-Identifier: MIT */
/*
 * `compare` end to end on this host: a baseline snapshot (procfs-stat
 * only), a child with 8 threads burn-0..burn-7 that each spin ~150 ms of
 * CPU and then park, a candidate snapshot while they are parked, and
 * `compare --group-by comm --format json`: one new group burn-{N} of 8
 * threads whose procfs.utime + procfs.stime agrees with the child's own
 * getrusage(RUSAGE_SELF) over the spinning within 15%.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define NTHREADS 8
#define SPIN_NS	 150000000ull

static char tmp[PATH_MAX];

static uint64_t cpu_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rusage_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
		       1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) *
		       1000ull;
}

static pthread_barrier_t done;

static void *burn(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "burn-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	volatile uint64_t sink = 0;
	(void)sink;
	while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < SPIN_NS)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i;
	pthread_barrier_wait(&done);
	for (;;)
		pause(); /* parked: alive for the candidate snapshot */
	return NULL;
}

/* The child: spin, report the spinning's CPU time on fd, stay alive. */
static void child(int fd)
{
	pthread_t t[NTHREADS];
	pthread_barrier_init(&done, NULL, NTHREADS + 1);
	uint64_t before = rusage_ns();
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, burn, (void *)(intptr_t)i))
			_exit(1);
	pthread_barrier_wait(&done);
	uint64_t spent = rusage_ns() - before;
	if (write(fd, &spent, sizeof(spent)) != sizeof(spent))
		_exit(1);
	for (;;)
		pause();
}

static int capture(const char *cfg, const char *out)
{
	const char *args[] = {"--config", cfg, "-o", out, "-q", NULL};
	return e2e_run(args, NULL, NULL);
}

static void test_live_burn(void **state)
{
	char cfg[PATH_MAX], base[PATH_MAX], cand[PATH_MAX], js[PATH_MAX];
	char cmd[4 * PATH_MAX], line[256];
	int fds[2];
	uint64_t spent = 0;
	(void)state;

	assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(base, "%s/base.ctprof", tmp), 0);
	assert_int_equal(E2E_PATHF(cand, "%s/cand.ctprof", tmp), 0);
	assert_int_equal(E2E_PATHF(js, "%s/out.json", tmp), 0);
	struct e2e_cfg c = {.required = true};
	assert_int_equal(e2e_write_config(cfg, &c), 0);
	assert_int_equal(capture(cfg, base), 0);

	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		child(fds[1]);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], &spent, sizeof(spent));
	close(fds[0]);
	int rc = n == sizeof(spent) ? capture(cfg, cand) : -1;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(n, sizeof(spent));
	assert_int_equal(rc, 0);

	const char *args[] = {"compare",
			      base,
			      cand,
			      "--group-by",
			      "comm",
			      "--format",
			      "json",
			      "--limit",
			      "0",
			      "--fields",
			      "procfs.utime,procfs.stime",
			      "--sections",
			      "threads",
			      NULL};
	assert_int_equal(e2e_run(args, js, NULL), 0);

	/* Pull the burn group out of the JSON with Python's parser. */
	snprintf(
		cmd, sizeof(cmd),
		"/usr/bin/python3 -c 'import json,sys\n"
		"d=json.load(open(sys.argv[1]))\n"
		"g=[x for x in d[\"threads\"][\"groups\"] if "
		"x[\"key\"]==[\"burn-{N}\"]]\n"
		"print(len(g))\n"
		"for x in g:\n"
		" f=x[\"fields\"]\n"
		" print(x[\"status\"],x[\"threads\"][\"cand\"],"
		"f[\"procfs.utime\"][\"cand\"]+f[\"procfs.stime\"][\"cand\"])' "
		"'%s'",
		js);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char status[16] = "";
	unsigned ngroups = 0, nthreads = 0;
	unsigned long long ticks = 0;
	if (fgets(line, sizeof(line), p))
		sscanf(line, "%u", &ngroups);
	if (fgets(line, sizeof(line), p))
		sscanf(line, "%15s %u %llu", status, &nthreads, &ticks);
	assert_int_equal(pclose(p), 0);
	assert_int_equal(ngroups, 1);
	assert_string_equal(status, "new");
	assert_int_equal(nthreads, NTHREADS);
	/* USER_HZ ticks (100 per second) to ns. */
	double got = (double)ticks * 1e7, want = (double)spent;
	print_message("burn-{N}: %llu ticks = %.3f s, getrusage %.3f s\n",
		      ticks, got / 1e9, want / 1e9);
	assert_true(want >= NTHREADS * (double)SPIN_NS * 0.99);
	assert_true(got >= want * 0.85 && got <= want * 1.15);
}

static int setup(void **state)
{
	(void)state;
	if (access("/proc/self/task", R_OK) != 0)
		return -1;
	return e2e_tmpdir("compare-live", tmp, sizeof(tmp)) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_burn),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
