/* SPDX-License-Identifier: MIT */
/*
 * `compare` end to end on this host (procfs-stat only):
 *
 * - burn: a baseline snapshot; a child process "ctp-burn-XXXX" whose 8
 *   threads burn-0..burn-7 each spin ~300 ms of CPU while 2 other threads
 *   sleep; a candidate snapshot while they are parked. `compare --format
 *   json` with the default sort (delta:procfs.cpu_time) lists the groups
 *   by that delta, largest first, the ctp-burn-XXXX group among them (a
 *   busy host's compilers may well burn more than it: the test judges
 *   the order, not the host's quiet), as new, with CPU as percent of one
 *   CPU within 10% of the child's own getrusage(RUSAGE_SELF) over its own
 *   interval (from BASE's start to CAND's read of it), and every rate
 *   between delta / (interval + CAND's capture time) and delta /
 *   (interval - BASE's): each task's change is over its own interval,
 *   which the captures' durations bound.
 * - restart: a process named "ctp-rst-XXXX" (prctl PR_SET_NAME) that has
 *   burned CPU is alive at the baseline and exits; another of the same
 *   name starts and burns less; at the candidate the group is restarted,
 *   and no counter delta is negative (CAND - BASE of the aggregates would
 *   be).
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define NTHREADS  8
#define SPIN_NS	  300000000ull
#define NSLEEPERS 2

/*
 * Names of this run's processes: the test's pid in letters, so that two
 * runs on one host (a developer's and CI's) never see each other's
 * processes in their groups; letters, not digits, so that normalization
 * keeps them apart.
 */
static char burner_name[16], restart_name[16];

static void name_processes(void)
{
	char tag[5];
	unsigned v = (unsigned)getpid();
	for (int i = 0; i < 4; i++, v /= 20)
		tag[i] = (char)('g' + v % 20); /* g..z: never a hex digit */
	tag[4] = '\0';
	snprintf(burner_name, sizeof(burner_name), "ctp-burn-%s", tag);
	snprintf(restart_name, sizeof(restart_name), "ctp-rst-%s", tag);
}

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

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The child: spin, report its whole CPU time so far on fd (it started
 * after the baseline, so that is its CPU over the interval), stay alive. */
static void child(int fd)
{
	pthread_t t[NTHREADS + NSLEEPERS];
	prctl(PR_SET_NAME, burner_name);
	pthread_barrier_init(&done, NULL, NTHREADS + 1);
	for (int i = 0; i < NSLEEPERS; i++)
		if (pthread_create(&t[NTHREADS + i], NULL, sleeper, NULL))
			_exit(1);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, burn, (void *)(intptr_t)i))
			_exit(1);
	pthread_barrier_wait(&done);
	uint64_t spent = rusage_ns();
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

	const char *args[] = {"compare", base,	       cand,	  "--format",
			      "json",	 "--sections", "threads", NULL};
	assert_int_equal(e2e_run(args, js, NULL), 0);

	/* How long each capture took, and when CAND read the burner, on the
	 * boot clock, less BASE's start: its own interval. */
	struct ctp_snap *sn[2];
	char err_s[512];
	double dur[2];
	for (int k = 0; k < 2; k++) {
		if (ctp_snap_open(k ? cand : base, 1ull << 31, &sn[k], err_s,
				  sizeof(err_s)) < 0)
			fail_msg("%s", err_s);
		dur[k] = (double)ctp_snap_header(sn[k])->duration_ns / 1e9;
	}
	const struct ctp_snap_table *pt =
		ctp_snap_table(sn[1], CTP_SCOPE_PROCESS);
	long prow = ctp_snap_row(pt, (uint64_t)pid, 0);
	assert_true(prow >= 0 && pt->read_ns);
	double own = (double)(pt->read_ns[prow] -
			      ctp_snap_header(sn[0])->start_boottime_ns) /
		     1e9;
	ctp_snap_free(sn[0]);
	ctp_snap_free(sn[1]);

	/* The burner's group, its CPU as percent of one CPU (utime +
	 * stime), the interval, the largest excess of any counter's rate of
	 * any group over its bounds, and whether the groups come by the
	 * default sort (1) or not (0), with Python's parser. */
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys\n"
		 "d=json.load(open(sys.argv[1]))\n"
		 "iv=d[\"interval_s\"]\n"
		 "lo,hi=iv+float(sys.argv[3]),iv-float(sys.argv[2])\n"
		 "gs=d[\"threads\"][\"groups\"]\n"
		 "ds=[x[\"fields\"].get(\"procfs.cpu_time\",{}).get("
		 "\"delta\") for x in gs]\n"
		 "srt=int(d[\"sort\"]==\"delta:procfs.cpu_time\" and "
		 "d[\"order\"]==\"desc\" and all(b is None or (a is not None "
		 "and a>=b) for a,b in zip(ds,ds[1:])))\n"
		 "g=[x for x in gs if x[\"key\"][0]==sys.argv[4]][0]\n"
		 "f=g[\"fields\"]\n"
		 "cpu=f[\"procfs.utime\"][\"cpu_percent\"]+"
		 "f[\"procfs.stime\"][\"cpu_percent\"]\n"
		 "err=0\n"
		 "for x in d[\"threads\"][\"groups\"]:\n"
		 " for v in x[\"fields\"].values():\n"
		 "  if v[\"rate\"] is not None and v[\"delta\"]>=0:\n"
		 "   r,a,b=v[\"rate\"],v[\"delta\"]/lo,v[\"delta\"]/hi\n"
		 "   err=max(err,(a-r)/max(1e-9,a),(r-b)/max(1e-9,b))\n"
		 "print(g[\"key\"][0],g[\"status\"],g[\"threads\"][\"cand\"],"
		 "cpu,iv,err,srt)' '%s' %.9f %.9f '%s'",
		 js, dur[0], dur[1], burner_name);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char key[64] = "", status[16] = "";
	unsigned nthreads = 0;
	int sorted = 0;
	double cpu = 0, iv = 0, err = 1;
	if (fgets(line, sizeof(line), p))
		sscanf(line, "%63s %15s %u %lf %lf %lf %d", key, status,
		       &nthreads, &cpu, &iv, &err, &sorted);
	assert_int_equal(pclose(p), 0);
	assert_string_equal(key, burner_name);
	assert_int_equal(sorted, 1);
	assert_string_equal(status, "new");
	assert_int_equal(nthreads, NTHREADS + NSLEEPERS + 1);
	double want = (double)spent / 1e9 / own * 100;
	print_message("%s: %.1f%% of one CPU over its own %.3f s (captures "
		      "%.3f s apart, taking %.3f and %.3f s), getrusage "
		      "%.1f%%; rates past their bounds by %.2g\n",
		      burner_name, cpu, own, iv, dur[0], dur[1], want, err);
	assert_true((double)spent >= NTHREADS * (double)SPIN_NS * 0.99);
	assert_true(cpu >= want * 0.9 && cpu <= want * 1.1);
	assert_true(err < 1e-6);
}

/* Spin `ns` of this process's CPU time. The sum goes through a volatile
 * global so that no compiler drops the loop (clang warns about a local
 * that is only ever written). */
static volatile uint64_t spin_sink;

static void spin(uint64_t ns)
{
	while (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) < ns)
		for (int i = 0; i < 10000; i++)
			spin_sink += (uint64_t)i;
}

/* A process named restart_name that spins `ns`, says so on fd, then waits
 * to be killed. */
static pid_t restart_child(uint64_t ns)
{
	int fds[2];
	char c = 0;
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		prctl(PR_SET_NAME, restart_name);
		spin(ns);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

static void test_live_restart(void **state)
{
	char cfg[PATH_MAX], base[PATH_MAX], cand[PATH_MAX], js[PATH_MAX];
	char cmd[4 * PATH_MAX], line[256];
	(void)state;

	assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(base, "%s/rbase.ctprof", tmp), 0);
	assert_int_equal(E2E_PATHF(cand, "%s/rcand.ctprof", tmp), 0);
	assert_int_equal(E2E_PATHF(js, "%s/rout.json", tmp), 0);
	struct e2e_cfg c = {.required = true};
	assert_int_equal(e2e_write_config(cfg, &c), 0);

	pid_t first = restart_child(200000000ull);
	assert_true(first > 0);
	int rc = capture(cfg, base);
	kill(first, SIGKILL);
	waitpid(first, NULL, 0);
	pid_t second = restart_child(30000000ull);
	assert_true(second > 0);
	int rc2 = capture(cfg, cand);
	kill(second, SIGKILL);
	waitpid(second, NULL, 0);
	assert_int_equal(rc, 0);
	assert_int_equal(rc2, 0);

	const char *args[] = {"compare",  base,		cand,	   "--format",
			      "json",	  "--sections", "threads", "--fields",
			      "procfs.*", NULL};
	assert_int_equal(e2e_run(args, js, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys\n"
		 "d=json.load(open(sys.argv[1]))\n"
		 "g=[x for x in d[\"threads\"][\"groups\"] if "
		 "x[\"key\"]==[sys.argv[2]]][0]\n"
		 "f=g[\"fields\"]\n"
		 "neg=[k for k,v in f.items() if v[\"rate\"] is not None and "
		 "v[\"delta\"]<0]\n"
		 "m=g[\"members\"]\n"
		 "print(g[\"status\"],m[\"continuing\"],m[\"new\"],"
		 "m[\"gone\"],len(neg),f[\"procfs.utime\"][\"delta\"],"
		 "f[\"procfs.utime\"][\"base\"])' '%s' '%s'",
		 js, restart_name);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char status[16] = "";
	unsigned cont = 9, nnew = 9, gone = 9, neg = 9;
	long long delta = -1, ubase = -1;
	if (fgets(line, sizeof(line), p))
		sscanf(line, "%15s %u %u %u %u %lld %lld", status, &cont, &nnew,
		       &gone, &neg, &delta, &ubase);
	assert_int_equal(pclose(p), 0);
	print_message("%s: %s, members %u/%u/%u, utime delta %lld "
		      "(BASE had %lld)\n",
		      restart_name, status, cont, nnew, gone, delta, ubase);
	assert_string_equal(status, "restarted");
	assert_int_equal(cont, 0);
	assert_int_equal(nnew, 1);
	assert_int_equal(gone, 1);
	assert_int_equal(neg, 0);
	/* The second one's own CPU, not CAND - BASE (negative). */
	assert_true(delta >= 0 && delta < ubase);
}

static int setup(void **state)
{
	(void)state;
	name_processes();
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
		cmocka_unit_test(test_live_restart),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
