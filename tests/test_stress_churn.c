/* SPDX-License-Identifier: MIT */
/*
 * Captures under churn (ctest label `stress`): while a load creates and
 * joins threads as fast as it can in several processes and forks
 * processes that exit at once or after a few ms with three threads, the
 * real binary captures this host again
 * and again with every default plugin, alternating `workers: 1` and
 * `workers: 2` (with small split_threads, so large processes are shared
 * out while their threads come and go). Every capture must exit 0 (under
 * ASan: no report), decode, and account for every task it met:
 * tids_walked = tids_recorded + tids_vanished, the thread rows are the
 * recorded tids, and tgids_walked = process rows + tgids_vanished.
 *
 * Bounded in time: 20 s in the gate (CI, `tools/dev.sh test`), 60 s at
 * full size (CTP_FULL_SIZE=1, `tools/dev.sh soak`); CTP_STRESS_SECONDS
 * sets any other.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define N_CHURNERS	    3 /* processes creating and joining threads */
#define THREADS_PER_CHURNER 4 /* concurrent creators in each */
#define GATE_SECONDS	    20
#define FULL_SECONDS	    60

/* Shared with the load processes. */
struct counts {
	_Atomic uint64_t threads, forks;
};

static struct counts *counts;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *nothing(void *arg)
{
	return arg;
}

static void *creator(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) == 0) {
			pthread_join(t, NULL);
			atomic_fetch_add_explicit(&counts->threads, 1,
						  memory_order_relaxed);
		}
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* A child of the forker: three threads, gone after 0 to 3 ms. */
static void __attribute__((noreturn)) exit_soon(unsigned i)
{
	for (int k = 0; k < 3; k++) {
		pthread_t t;
		pthread_create(&t, NULL, sleeper, NULL);
	}
	usleep(i % 4 * 1000);
	_exit(0);
}

/* A load process: dies with the test (PR_SET_PDEATHSIG). */
static pid_t start_load(bool forker)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (forker) {
		prctl(PR_SET_NAME, "stress-forker");
		for (unsigned i = 0;; i++) {
			pid_t c = fork();
			/* Every other child lives a few ms with a few threads,
			 * so walks meet processes whose threads all go while
			 * they are being read. */
			if (c == 0 && i % 2)
				exit_soon(i);
			if (c == 0)
				_exit(0);
			if (c > 0) {
				waitpid(c, NULL, 0);
				atomic_fetch_add_explicit(&counts->forks, 1,
							  memory_order_relaxed);
			}
		}
	}
	prctl(PR_SET_NAME, "stress-churner");
	for (int i = 0; i < THREADS_PER_CHURNER; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, creator, NULL))
			_exit(1);
	}
	for (;;)
		pause();
}

static void write_config(const char *path, const char *out, unsigned workers)
{
	char text[2048];
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\"]\n"
			 "output: \"%s\"\n"
			 "workers: %u\n"
			 "split_threads: 4\n"
			 "plugins:\n"
			 "  procfs-stat: {required: true}\n"
			 "  schedstat: {}\n"
			 "  io: {}\n"
			 "  smaps: {}\n"
			 "  taskstats: {}\n"
			 "  host-context: {}\n"
			 "  cgroup: {}\n"
			 "  psi: {}\n"
			 "  sched_ext: {}\n"
			 "  jemalloc-probe: {}\n",
			 CTP_TEST_PLUGIN_DIR, out, workers);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(e2e_write_file(path, text, (size_t)n), 0);
}

/* One capture: it ran clean, decodes and accounts for every task. */
static void check_capture(const char *dir, unsigned workers, uint64_t *walked,
			  uint64_t *vanished)
{
	char cfg[4096], out[4096], log[4096];
	const char *args[] = {"--config", cfg, "-q", NULL};
	struct ctp_snap *snap;
	char err[512];
	int rc;

	E2E_PATHF(cfg, "%s/stress.yaml", dir);
	E2E_PATHF(out, "%s/stress.ctprof.zst", dir);
	E2E_PATHF(log, "%s/stress.log", dir);
	unlink(out);
	write_config(cfg, out, workers);
	rc = e2e_run(args, NULL, log);
	if (rc != 0) {
		e2e_show_file("capture log", log);
		fail_msg("capture with %u workers exited %d", workers, rc);
	}
	if (ctp_snap_open(out, 1ull << 31, &snap, err, sizeof(err)) < 0)
		fail_msg("snapshot does not decode: %s", err);
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	const struct ctp_snap_table *th =
		ctp_snap_table(snap, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *pr =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	if (rf->tids_walked != rf->tids_recorded + rf->tids_vanished ||
	    th->rows != rf->tids_recorded ||
	    rf->tgids_walked != pr->rows + rf->tgids_vanished)
		fail_msg(
			"workers %u: tids walked %llu, recorded %llu, vanished "
			"%llu, thread rows %zu; tgids walked %llu, vanished "
			"%llu, process rows %zu",
			workers, (unsigned long long)rf->tids_walked,
			(unsigned long long)rf->tids_recorded,
			(unsigned long long)rf->tids_vanished, th->rows,
			(unsigned long long)rf->tgids_walked,
			(unsigned long long)rf->tgids_vanished, pr->rows);
	*walked += rf->tids_walked;
	*vanished += rf->tids_vanished + rf->tgids_vanished;
	ctp_snap_free(snap);
}

static void captures_under_churn(void **state)
{
	double secs = (double)e2e_size("CTP_STRESS_SECONDS", GATE_SECONDS,
				       FULL_SECONDS),
	       t0, t;
	pid_t load[N_CHURNERS + 1];
	uint64_t walked = 0, vanished = 0;
	unsigned captures[3] = {0};
	char dir[4096];

	(void)state;
	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(counts != MAP_FAILED);
	assert_int_equal(e2e_tmpdir("stress", dir, sizeof(dir)), 0);
	for (int i = 0; i < N_CHURNERS; i++)
		load[i] = start_load(false);
	load[N_CHURNERS] = start_load(true);
	usleep(200 * 1000); /* the load gets going */
	t0 = now_s();
	do {
		unsigned w = 1 + (captures[1] + captures[2]) % 2;
		check_capture(dir, w, &walked, &vanished);
		captures[w]++;
		t = now_s();
	} while (t - t0 < secs);
	for (int i = 0; i <= N_CHURNERS; i++) {
		kill(load[i], SIGKILL);
		waitpid(load[i], NULL, 0);
	}
	printf("%u captures with 1 worker, %u with 2 in %.0f s; load: %.0f "
	       "threads/s created and joined, %.0f processes/s forked; %llu "
	       "tasks walked, %llu vanished under the walk\n",
	       captures[1], captures[2], t - t0,
	       (double)atomic_load(&counts->threads) / (t - t0 + 0.2),
	       (double)atomic_load(&counts->forks) / (t - t0 + 0.2),
	       (unsigned long long)walked, (unsigned long long)vanished);
	assert_true(captures[1] > 0 && captures[2] > 0);
	/* The churn was real: tasks disappeared under the walks. */
	assert_true(vanished > 0);
	e2e_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(captures_under_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
