/* SPDX-License-Identifier: MIT */
/*
 * Hostile roots (issue 11 items 3 and 9), with the real binary:
 * - under a fake proc root, FIFOs named comm, stat and pressure/cpu, a
 *   cgroup file linked to /dev/zero and a status file larger than the
 *   engine's read cap never hang nor balloon the capture: it finishes,
 *   and the files are tallied as read failures (1 and 2 workers);
 * - SIGTERM and SIGINT end a capture within about a second even while a
 *   plugin callback never returns (1 and 2 workers), exit 130, no file;
 * - a comm holding a newline is recorded whole, for a thread and a
 *   process of this host (live /proc).
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define FIX_PROC   CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	   CTP_TEST_FIXTURES "/sys"
#define FIX_CGROUP CTP_TEST_FIXTURES "/cgroup"

static char tmpdir[PATH_MAX];

static void write_text(const char *path, const char *text)
{
	assert_int_equal(e2e_write_file(path, text, strlen(text)), 0);
}

static void plant_fifo(const char *root, const char *rel)
{
	char path[PATH_MAX];
	assert_int_equal(E2E_PATHF(path, "%s/%s", root, rel), 0);
	unlink(path);
	assert_int_equal(mkfifo(path, 0644), 0);
}

static void test_hostile_files(void **unused)
{
	(void)unused;
	for (unsigned workers = 1; workers <= 2; workers++) {
		char dir[PATH_MAX], proc[PATH_MAX], cfg[PATH_MAX],
			out[PATH_MAX], log[PATH_MAX], path[PATH_MAX];
		assert_int_equal(E2E_PATHF(dir, "%s/files-%u", tmpdir, workers),
				 0);
		assert_int_equal(mkdir(dir, 0700), 0);
		assert_int_equal(E2E_PATHF(proc, "%s/proc", dir), 0);
		assert_int_equal(e2e_copy_tree(FIX_PROC, proc), 0);
		plant_fifo(proc, "985/task/986/comm");
		plant_fifo(proc, "985/task/987/stat");
		assert_int_equal(E2E_PATHF(path, "%s/pressure", proc), 0);
		assert_int_equal(mkdir(path, 0755), 0);
		plant_fifo(proc, "pressure/cpu");
		assert_int_equal(
			E2E_PATHF(path, "%s/985/task/988/cgroup", proc), 0);
		unlink(path);
		assert_int_equal(symlink("/dev/zero", path), 0);
		/* A status over the 4 MiB read cap. */
		assert_int_equal(E2E_PATHF(path, "%s/1/task/1/status", proc),
				 0);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		for (int i = 0; i < 5 * 1024; i++)
			fprintf(f, "%01023d\n", i);
		fclose(f);

		assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", dir), 0);
		assert_int_equal(E2E_PATHF(out, "%s/s.ctprof.zst", dir), 0);
		assert_int_equal(E2E_PATHF(log, "%s/log", dir), 0);
		char yaml[4 * PATH_MAX];
		snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\"]\n"
			 "workers: %u\n"
			 "roots: {proc: \"%s\", sys: \"%s\", cgroup: \"%s\"}\n"
			 "plugins:\n  procfs-stat: {}\n  psi: {}\n",
			 CTP_TEST_PLUGIN_DIR, workers, proc, FIX_SYS,
			 FIX_CGROUP);
		write_text(cfg, yaml);
		const char *args[] = {"--config", cfg, "-o", out, NULL};
		pid_t pid;
		assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
		int rc = e2e_wait_bounded(pid, 60000,
					  "capture on a hostile root");
		if (rc != 0) {
			e2e_show_file("stderr", log);
			fail_msg("exit %d", rc);
		}
		struct ctp_snap *s = NULL;
		char err[512];
		if (ctp_snap_open(out, 1ull << 30, &s, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
		/* 987's FIFO stat is a failure that is not "missing". */
		size_t st = e2e_tally_slot(rf, "stat"),
		       ss = e2e_tally_slot(rf, "status");
		assert_int_equal(rf->failures[st], 1);
		assert_int_equal(rf->missing[st], 0);
		/* 1001 has no status (the fixture's), 1's is too long. */
		assert_int_equal(rf->failures[ss], 2);
		assert_int_equal(rf->missing[ss], 1);
		ctp_snap_free(s);
	}
}

/* Start a capture whose abi-hang callback never returns, signal it once
 * the callback is entered, and expect exit 130 within a few seconds with
 * nothing written. */
static void test_signal_ends_stuck_capture(void **unused)
{
	(void)unused;
	static const int sigs[] = {SIGTERM, SIGINT};
	for (unsigned workers = 1; workers <= 2; workers++) {
		for (size_t k = 0; k < 2; k++) {
			char dir[PATH_MAX], cfg[PATH_MAX], out[PATH_MAX],
				log[PATH_MAX], marker[PATH_MAX];
			assert_int_equal(E2E_PATHF(dir, "%s/stuck-%u-%zu",
						   tmpdir, workers, k),
					 0);
			assert_int_equal(mkdir(dir, 0700), 0);
			assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", dir), 0);
			assert_int_equal(E2E_PATHF(out, "%s/s.ctprof.zst", dir),
					 0);
			assert_int_equal(E2E_PATHF(log, "%s/log", dir), 0);
			assert_int_equal(
				E2E_PATHF(marker, "%s/in-callback", dir), 0);
			char yaml[4 * PATH_MAX];
			snprintf(yaml, sizeof(yaml),
				 "plugin_dirs: [\"%s\"]\n"
				 "workers: %u\n"
				 "roots: {proc: \"%s\", sys: \"%s\"}\n"
				 "plugins:\n"
				 "  abi-hang: {options: {marker: \"%s\"}}\n",
				 CTP_ABI_PLUGIN_DIR, workers, FIX_PROC, FIX_SYS,
				 marker);
			write_text(cfg, yaml);
			const char *args[] = {"--config", cfg, "-o", out, NULL};
			pid_t pid;
			assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
			uint64_t t0 = e2e_now_ms();
			while (access(marker, F_OK) != 0) {
				if (e2e_now_ms() - t0 > 30000) {
					kill(pid, SIGKILL);
					waitpid(pid, NULL, 0);
					e2e_show_file("stderr", log);
					fail_msg("never entered the callback");
				}
				struct timespec ts = {.tv_nsec = 5000000};
				nanosleep(&ts, NULL);
			}
			assert_int_equal(kill(pid, sigs[k]), 0);
			/* One second by design; generous for a loaded CI. */
			int rc = e2e_wait_bounded(pid, 5000,
						  "signalled capture");
			if (rc != 130) {
				e2e_show_file("stderr", log);
				fail_msg("exit %d, expected 130", rc);
			}
			size_t n = 0;
			assert_int_equal(e2e_count_entries(dir, &n), 0);
			assert_int_equal(n, 3); /* c.yaml, log, marker */
		}
	}
}

struct named {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready;
};

static void *named_thread(void *arg)
{
	struct named *n = arg;
	prctl(PR_SET_NAME, "nl\nq", 0, 0, 0);
	pthread_mutex_lock(&n->lock);
	n->ready = 1;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
	for (;;)
		pause();
	return NULL;
}

/* A child process named "nl\np" with a thread named "nl\nq": both comms
 * are recorded whole, the newline kept, only the kernel's own dropped. */
static void test_comm_with_newline(void **unused)
{
	(void)unused;
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		static struct named n = {PTHREAD_MUTEX_INITIALIZER,
					 PTHREAD_COND_INITIALIZER, 0};
		pthread_t th;
		prctl(PR_SET_NAME, "nl\np", 0, 0, 0);
		if (pthread_create(&th, NULL, named_thread, &n) != 0)
			_exit(1);
		pthread_mutex_lock(&n.lock);
		while (!n.ready)
			pthread_cond_wait(&n.cond, &n.lock);
		pthread_mutex_unlock(&n.lock);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);

	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	assert_int_equal(E2E_PATHF(cfg, "%s/live.yaml", tmpdir), 0);
	assert_int_equal(E2E_PATHF(out, "%s/live.ctprof.zst", tmpdir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/live.log", tmpdir), 0);
	struct e2e_cfg ec = {.workers = 1};
	assert_int_equal(e2e_write_config(cfg, &ec), 0);
	struct ctp_snap *s = e2e_capture(cfg, out, log);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	int seen = 0;
	for (size_t r = 0; r < t->rows; r++) {
		if (t->tgid[r] != (uint64_t)child)
			continue;
		struct ctp_bytes comm = t->comm[r];
		const char *want =
			t->tid[r] == (uint64_t)child ? "nl\np" : "nl\nq";
		if (!e2e_bytes_eq(comm, want))
			fail_msg("tid %llu: comm '%.*s', want '%s'",
				 (unsigned long long)t->tid[r], (int)comm.len,
				 (const char *)comm.ptr, want);
		seen++;
	}
	assert_int_equal(seen, 2);
	const struct ctp_snap_table *p = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	bool found = false;
	for (size_t r = 0; r < p->rows; r++) {
		if (p->tgid[r] != (uint64_t)child)
			continue;
		assert_true(e2e_bytes_eq(p->comm[r], "nl\np"));
		found = true;
	}
	assert_true(found);
	ctp_snap_free(s);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("hostile", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test(test_signal_ends_stuck_capture),
		cmocka_unit_test(test_comm_with_newline),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
