/* SPDX-License-Identifier: MIT */
/*
 * A property of `compare` on a loaded host (docs/COMPARE.md "The interval
 * and rates"): no thread's on-CPU share plus run-queue share exceeds 100%
 * of its interval, plus the counters' granularity.
 *
 * The load is the test's own: NCPU processes of one spinning thread
 * and one of two, so every spinner waits for a CPU; run time plus
 * run-queue wait is then all of a spinner's time. It all runs in a pid
 * namespace of its own with its own /proc, so the captures walk only what
 * the test made, whatever else the host runs. The captures are made slow
 * where it matters: a process created before the spinners (so the walk of
 * one worker, in tgid order, reaches it first) has one thread at BASE and
 * up to NBULK sleeping ones at CAND (fewer when the host is short of
 * pids), so CAND reads the spinners a while after its start and BASE at
 * once. Divided by the interval between the captures' starts, a
 * spinner's run + wait came to 100% plus that skew over the interval;
 * divided by its own (from BASE's read of its process to CAND's), 100%.
 * The test checks the property on every thread it made, in the full
 * comparison (CSV, per thread) and in the `sched` view (RUNQ% + ONCPU%),
 * and that the skew was more than the allowance (so that the captures'
 * interval would have failed it); when the host's own load makes that
 * impossible, it exits 77 and says so.
 *
 * The allowance: a wait is counted when it ends (sched_info.run_delay),
 * so one in progress at BASE's read lands in the interval; run time is
 * brought up to date at the scheduler's ticks. Per thread: twice its
 * longest wait (taskstats cpu_delay_max at CAND) plus 20 ms, over the
 * interval, and 0.1 for the view's rounding.
 *
 * Needs root (a pid namespace, and CAP_NET_ADMIN for taskstats, whose
 * CPU delay is the run-queue wait; schedstats' wait_sum, which the view
 * prefers when the kernel keeps it, is not needed) and the TASKSTATS
 * family; exits 77 otherwise, saying what was missing. The cpu delay is
 * sched_info's run_delay, kept with CONFIG_SCHED_INFO whatever
 * kernel.task_delayacct says, so the test leaves that sysctl alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define SKIP	  77
#define NBULK	  8000
#define MAX_KIDS  64
#define MAX_TIDS  256
#define RUN_FIELD "schedstat.run_time"
#define WAIT_F	  "taskstats.cpu_delay_total"
#define WMAX_F	  "taskstats.cpu_delay_max"

static char tmp[PATH_MAX];
static pid_t kids[MAX_KIDS];
static size_t n_kids;
static int skip_reason_set;
static char skip_reason[256];

static volatile uint64_t sink;

static void spin_forever(void)
{
	for (;;)
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	spin_forever();
	return NULL;
}

static void *sleep_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A child dies with the test. */
static pid_t kid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pid > 0 && n_kids < MAX_KIDS)
		kids[n_kids++] = pid;
	return pid;
}

/* Threads the host can spare: up to NBULK, leaving half of the pids
 * still free (/proc/loadavg counts the host's threads) to the rest of it. */
static long bulk_threads(void)
{
	long max = 0, used = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	if (f && fscanf(f, "%ld", &max) != 1)
		max = 0;
	if (f)
		fclose(f);
	f = fopen("/proc/loadavg", "re");
	if (f && fscanf(f, "%*s %*s %*s %*d/%ld", &used) != 1)
		used = max;
	if (f)
		fclose(f);
	long n = (max - used) / 2;
	return n < NBULK ? n : NBULK;
}

/* The bulk process: one thread until a byte arrives on `in`, then n
 * sleeping ones more (small stacks), then a byte back on `out`. */
static void bulk(int in, int out, long n)
{
	char c;
	pthread_attr_t a;
	prctl(PR_SET_NAME, "ivl-bulk");
	if (read(in, &c, 1) != 1)
		_exit(1);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &a, sleep_thread, NULL) != 0)
			break;
	}
	if (write(out, "k", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static void spinner(int threads)
{
	prctl(PR_SET_NAME, "ivl-spin");
	for (int i = 1; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin_thread, NULL) != 0)
			_exit(1);
	}
	spin_forever();
}

static void stop_kids(void)
{
	for (size_t i = 0; i < n_kids; i++)
		kill(kids[i], SIGKILL);
	for (size_t i = 0; i < n_kids; i++)
		waitpid(kids[i], NULL, 0);
	n_kids = 0;
}

struct spinner {
	uint64_t tgid, tid;
	double run, wait, allow; /* percent, from the CSV; allowance */
	int seen;		 /* fields found in the CSV */
};

/* The threads of process pid from /proc into sp[n...] (up to max). */
static size_t threads_of(pid_t pid, struct spinner *sp, size_t n, size_t max)
{
	char cmd[128], line[64];
	snprintf(cmd, sizeof(cmd), "ls /proc/%d/task", (int)pid);
	FILE *p = popen(cmd, "r");
	if (!p)
		return n;
	while (n < max && fgets(line, sizeof(line), p))
		sp[n++] = (struct spinner){.tgid = (uint64_t)pid,
					   .tid = strtoull(line, NULL, 10)};
	pclose(p);
	return n;
}

/* Thread tid's u64 value of field `name` in snapshot s; -1 when absent. */
static double thread_u64(const struct ctp_snap *s, const char *name,
			 uint64_t tgid, uint64_t tid)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	long r = ctp_snap_row(ctp_snap_table(s, CTP_SCOPE_THREAD), tgid, tid);
	if (!f || r < 0)
		return -1;
	struct ctp_value v = ctp_snap_get(s, f, (size_t)r);
	return v.type == CTP_TYPE_U64 ? (double)v.u64 : -1;
}

/* When snapshot s read process tgid, s; -1 when it did not record it. */
static double read_s(const struct ctp_snap *s, uint64_t tgid)
{
	const struct ctp_snap_table *p = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	long r = ctp_snap_row(p, tgid, 0);
	return r >= 0 && p->read_ns ? (double)p->read_ns[r] / 1e9 : -1;
}

/* The CSV lines of the full comparison into the spinners' entries. */
static void parse_csv(const char *csv, struct spinner *sp, size_t n)
{
	for (const char *l = csv; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : l) {
		char buf[512], *f[24] = {0};
		size_t len = strcspn(l, "\n"), k = 0;
		if (len >= sizeof(buf))
			continue;
		memcpy(buf, l, len);
		buf[len] = '\0';
		/* Empty cells matter: split by hand. */
		for (char *p = buf; p && k < 24; k++) {
			f[k] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = '\0';
		}
		if (k < 15 || strcmp(f[0], "threads") != 0)
			continue;
		uint64_t tid = strtoull(f[1], NULL, 10);
		for (size_t i = 0; i < n; i++) {
			if (sp[i].tid != tid || !*f[14])
				continue;
			if (!strcmp(f[7], RUN_FIELD))
				sp[i].run = strtod(f[14], NULL), sp[i].seen++;
			else if (!strcmp(f[7], WAIT_F))
				sp[i].wait = strtod(f[14], NULL), sp[i].seen++;
		}
	}
}

/* The view's number in column `label` of thread tid's row of the
 * Threads section: the header line (after the title) gives where each
 * right-aligned column ends. NAN when absent. */
static double view_cell(const char *out, const char *label, uint64_t tid)
{
	const char *h = strstr(out, "Threads over ");
	h = h ? strchr(h, '\n') : NULL;
	if (!h)
		return NAN;
	h++;
	const char *he = strchr(h, '\n'), *lp = strstr(h, label),
		   *tp = strstr(h, "TID");
	if (!he || !lp || lp > he || !tp || tp > he)
		return NAN;
	size_t end = (size_t)(lp - h) + strlen(label),
	       tid_end = (size_t)(tp - h) + 3;
	for (const char *l = he + 1; *l && *l != '\n';) {
		size_t len = strcspn(l, "\n");
		char id[32] = "", num[32] = "";
		if (len >= end && tid_end < sizeof(id)) {
			memcpy(id, l, tid_end);
			if (strtoull(id, NULL, 10) == tid) {
				size_t b = end;
				while (b > 0 && l[b - 1] != ' ')
					b--;
				if (end - b >= sizeof(num))
					return NAN;
				memcpy(num, l + b, end - b);
				char *e;
				double v = strtod(num, &e);
				return e == num ? NAN : v;
			}
		}
		l += len + (l[len] == '\n');
	}
	return NAN;
}

static void test_loaded(void **state)
{
	(void)state;
	char base[PATH_MAX], cand[PATH_MAX], out[PATH_MAX];
	const char *plugins = "  procfs-stat: {required: true}\n"
			      "  schedstat: {required: true}\n"
			      "  taskstats: {required: true}\n";
	int go[2], ack[2];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct spinner sp[MAX_TIDS];
	size_t n = 0;
	char c;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ack), 0);
	/* First, for a lower tgid than the spinners': one worker walks in
	 * tgid order. */
	long nbulk = bulk_threads();
	pid_t b = kid();
	assert_true(b >= 0);
	if (b == 0)
		bulk(go[0], ack[1], nbulk);
	pid_t first_spinner = 0;
	for (long i = 0; i < (ncpu > 0 ? ncpu : 1) + 1; i++) {
		pid_t p = kid();
		assert_true(p >= 0);
		if (p == 0)
			spinner(i == 0 ? 2 : 1);
		if (!first_spinner)
			first_spinner = p;
	}
	usleep(300000);
	for (size_t i = 1; i < n_kids; i++)
		n = threads_of(kids[i], sp, n, MAX_TIDS);

	struct ctp_snap *s[2];
	s[0] = e2e_capture_plugins(tmp, "base", 1, plugins);
	if (thread_u64(s[0], WAIT_F, (uint64_t)first_spinner,
		       (uint64_t)first_spinner) < 0 ||
	    thread_u64(s[0], RUN_FIELD, (uint64_t)first_spinner,
		       (uint64_t)first_spinner) < 0) {
		snprintf(skip_reason, sizeof(skip_reason),
			 "no %s or %s for the spinners: the TASKSTATS family, "
			 "CAP_NET_ADMIN and CONFIG_SCHED_INFO are needed",
			 WAIT_F, RUN_FIELD);
		skip_reason_set = 1;
		ctp_snap_free(s[0]);
		return;
	}
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(ack[0], &c, 1), 1);
	s[1] = e2e_capture_plugins(tmp, "cand", 1, plugins);

	/* The skew the captures' interval missed. */
	double iv = (double)(ctp_snap_header(s[1])->start_boottime_ns -
			     ctp_snap_header(s[0])->start_boottime_ns) /
		    1e9,
	       skew = 0;
	for (size_t i = 1; i < n_kids; i++) {
		double a = read_s(s[0], (uint64_t)kids[i]),
		       z = read_s(s[1], (uint64_t)kids[i]);
		assert_true(a > 0 && z > 0);
		if (z - a - iv > skew)
			skew = z - a - iv;
	}

	for (size_t i = 0; i < n; i++) {
		double wmax = thread_u64(s[1], WMAX_F, sp[i].tgid, sp[i].tid);
		sp[i].allow =
			(2 * (wmax > 0 ? wmax : 0) / 1e9 + 0.02) / iv * 100;
	}
	ctp_snap_free(s[0]);
	ctp_snap_free(s[1]);

	assert_int_equal(E2E_PATHF(base, "%s/base.ctprof.zst", tmp), 0);
	assert_int_equal(E2E_PATHF(cand, "%s/cand.ctprof.zst", tmp), 0);
	assert_int_equal(E2E_PATHF(out, "%s/out.txt", tmp), 0);
	const char *csv[] = {"compare", base,	      cand,	 "--group-by",
			     "tid",	"--fields",   RUN_FIELD, "--fields",
			     WAIT_F,	"--sections", "threads", "--format",
			     "csv",	NULL};
	char *text;
	size_t len;
	assert_int_equal(e2e_run(csv, out, NULL), 0);
	assert_int_equal(e2e_read_file(out, &text, &len), 0);
	parse_csv(text, sp, n);
	free(text);

	const char *view[] = {"compare", base, cand,	 "--view", "sched",
			      "--top",	 "0",  "--wide", NULL};
	assert_int_equal(e2e_run(view, out, NULL), 0);
	assert_int_equal(e2e_read_file(out, &text, &len), 0);

	double worst = 0, worst_view = 0, worst_allow = 0;
	for (size_t i = 0; i < n; i++) {
		double sum = sp[i].run + sp[i].wait;
		double vr = view_cell(text, "RUNQ%", sp[i].tid),
		       vo = view_cell(text, "ONCPU%", sp[i].tid);
		print_message("thread %" PRIu64 " of %" PRIu64
			      ": on CPU %.1f%% + run queue %.1f%% = %.1f%% "
			      "(view %.1f + %.1f), allowance %.1f%%\n",
			      sp[i].tid, sp[i].tgid, sp[i].run, sp[i].wait, sum,
			      vo, vr, sp[i].allow);
		if (sp[i].seen != 2 || isnan(vr) || isnan(vo)) {
			fprintf(stderr, "%s", text);
			fail_msg("thread %" PRIu64 ": not in the comparison",
				 sp[i].tid);
		}
		if (sum - 100 > worst)
			worst = sum - 100;
		if (vr + vo - 100 > worst_view)
			worst_view = vr + vo - 100;
		if (sp[i].allow > worst_allow)
			worst_allow = sp[i].allow;
		if (sum > 100 + sp[i].allow ||
		    vr + vo > 100 + sp[i].allow + 0.1) {
			fprintf(stderr, "%s", text);
			fail_msg("thread %" PRIu64 ": %.1f%% + %.1f%% of its "
				 "interval (view %.1f%% + %.1f%%), over 100%% "
				 "+ %.1f%%",
				 sp[i].tid, sp[i].run, sp[i].wait, vo, vr,
				 sp[i].allow);
		}
	}
	free(text);
	print_message("%zu threads, captures %.2f s apart, CAND read them up "
		      "to %.2f s late (%.1f%% of the interval, behind %ld "
		      "threads); worst excess %.2f%% (view %.2f%%), allowance "
		      "up to %.1f%%\n",
		      n, iv, skew, skew / iv * 100, nbulk, worst, worst_view,
		      worst_allow);
	/* Else dividing by the captures' interval would have held too: on
	 * a host whose own load makes the captures long (the interval) and
	 * the waits long (the allowance), the check could not tell. */
	if (skew / iv * 100 <= worst_allow) {
		snprintf(
			skip_reason, sizeof(skip_reason),
			"the property held, but CAND read the spinners only "
			"%.2f s late in %.2f s (%.1f%%), within the allowance "
			"(%.1f%%): this host's load leaves the check unable to "
			"tell a wrong interval",
			skew, iv, skew / iv * 100, worst_allow);
		skip_reason_set = 1;
	}
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("interval", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	stop_kids();
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

/* The tests, as pid 1 of a pid namespace of their own with a /proc of
 * their own (e2e_in_own_proc). */
static int run_group(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_loaded)};
	int r = cmocka_run_group_tests(tests, setup, teardown);
	if (r == 0 && skip_reason_set) {
		fprintf(stderr, "skipped: %s\n", skip_reason);
		return SKIP;
	}
	return r ? 1 : 0;
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root: a pid namespace, and "
				"taskstats (CAP_NET_ADMIN) for the run-queue "
				"wait\n");
		return SKIP;
	}
	return e2e_in_own_proc(run_group);
}
