/* SPDX-License-Identifier: MIT */
/*
 * Process totals on the live /proc (issue 15): work of tasks that are gone
 * must be on the process row.
 *
 * - reaped_children: a process forks 20 children; each burns ~20 ms of CPU
 *   and writes 1 MiB to a file with fsync, and is reaped with waitpid. The
 *   parent then reports its getrusage(RUSAGE_CHILDREN) and idles. In a
 *   capture with procfs-stat and io, its procfs.children.cpu_time (ticks)
 *   is within 10% + 2 ticks of that user + system time, its
 *   io.process.write_bytes holds the children's 20 MiB, and its own thread
 *   row's io.write_bytes does not.
 * - exited_thread: a process whose thread burned ~300 ms and was joined,
 *   beside a live thread that burned a little: its procfs.process.utime is
 *   at least the sum of its live threads' procfs.utime, and its
 *   procfs.process.cpu_time exceeds theirs by most of the joined thread's
 *   burn.
 *
 * Exits 77 when this kernel has no io accounting file, or no directory at
 * hand counts written bytes in write_bytes (tmpfs counts none).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"
#include "value.h" /* ctp_snap_value: derived fields */

#define SKIP	    77
#define N_CHILDREN  20
#define CHILD_BURN  20000000ull /* ns of CPU per child */
#define CHILD_BYTES (1u << 20)
#define DEAD_BURN   300000000ull /* ns of CPU of the joined thread */
#define LIVE_BURN   30000000ull	 /* ... of the thread that stays */

static char tmp[PATH_MAX];    /* configs, snapshots, logs */
static char io_dir[PATH_MAX]; /* where written bytes reach write_bytes */
static long user_hz;

/* ---- Work --------------------------------------------------------------- */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin until this thread has used ns of CPU. */
static void burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	/* The clock read is the work: a loop without it clang may drop. */
	while (thread_cpu_ns() < end)
		;
}

/* Write CHILD_BYTES to path and fsync; 0 or -errno. */
static int write_file(const char *path)
{
	static char buf[64 << 10];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok = fd >= 0;

	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; ok && done < CHILD_BYTES; done += sizeof(buf))
		ok = write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf);
	ok = ok && fsync(fd) == 0;
	int err = ok ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* The line after l's, or NULL after the last. */
static const char *next_line(const char *l)
{
	l = strchr(l, '\n');
	return l ? l + 1 : NULL;
}

/* A value of a /proc io file, or -1. */
static int64_t io_value(const char *path, const char *key)
{
	char *text;
	int64_t v = -1;
	size_t kl = strlen(key);

	if (e2e_read_file(path, &text, NULL) < 0)
		return -1;
	for (const char *l = text; l && *l; l = next_line(l))
		if (!strncmp(l, key, kl) && l[kl] == ':') {
			v = (int64_t)strtoull(l + kl + 1, NULL, 10);
			break;
		}
	free(text);
	return v;
}

/* ---- The processes under test -------------------------------------------- */

/* What the reaping parent reports once its children are gone. */
struct reaped {
	int32_t err; /* 0, or a -errno of the parent or a child */
	uint64_t user_us, sys_us;
};

/* Child i: burn, write, exit; 0 on success. */
static void child_main(unsigned i)
{
	char path[PATH_MAX];

	burn(CHILD_BURN);
	if (E2E_PATHF(path, "%s/child-%u", io_dir, i) < 0 ||
	    write_file(path) < 0)
		_exit(1);
	_exit(0);
}

/* The parent: fork the children, reap each, report, idle until killed. */
static void reaper_main(int report)
{
	struct reaped r = {0};
	struct rusage ru;

	for (unsigned i = 0; i < N_CHILDREN && !r.err; i++) {
		pid_t c = fork();
		int status;

		if (c < 0) {
			r.err = -errno;
			break;
		}
		if (c == 0)
			child_main(i);
		if (waitpid(c, &status, 0) != c || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			r.err = -EIO;
	}
	if (!r.err && getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		r.user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
			    (uint64_t)ru.ru_utime.tv_usec;
		r.sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
			   (uint64_t)ru.ru_stime.tv_usec;
	}
	if (write(report, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	for (;;)
		pause();
}

static void *burner_main(void *arg)
{
	burn(*(const uint64_t *)arg);
	return NULL;
}

static void *idler_main(void *arg)
{
	burn(*(const uint64_t *)arg);
	for (;;)
		pause();
	return NULL;
}

/* A thread burns DEAD_BURN and is joined; another burns LIVE_BURN and
 * stays; then report and idle. */
static void joiner_main(int report)
{
	static const uint64_t dead = DEAD_BURN, live = LIVE_BURN;
	pthread_t t;
	int32_t err = 0;

	if (pthread_create(&t, NULL, burner_main, (void *)&dead) ||
	    pthread_join(t, NULL))
		err = -EAGAIN;
	if (!err && pthread_create(&t, NULL, idler_main, (void *)&live))
		err = -EAGAIN;
	/* Let the live thread finish its burn before the capture. */
	for (int i = 0; !err && i < 200; i++) {
		struct timespec ts = {0, 5000000};
		clockid_t c;
		struct timespec used;

		if (pthread_getcpuclockid(t, &c) == 0 &&
		    clock_gettime(c, &used) == 0 &&
		    (uint64_t)used.tv_sec * 1000000000ull +
				    (uint64_t)used.tv_nsec >=
			    LIVE_BURN)
			break;
		nanosleep(&ts, NULL);
	}
	if (write(report, &err, sizeof(err)) != sizeof(err))
		_exit(3);
	for (;;)
		pause();
}

/* Fork fn(report pipe) and read `len` bytes of its report into buf. */
static pid_t start(void (*fn)(int), void *buf, size_t len)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		fn(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, len);
	close(fds[0]);
	if (n != (ssize_t)len) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("process %d did not report", (int)pid);
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ---- Capturing and reading ----------------------------------------------- */

static struct ctp_snap *capture(const char *tag)
{
	return e2e_capture_plugins(tmp, tag, 2,
				   "  procfs-stat: {required: true}\n"
				   "  io: {required: true}\n");
}

/* The row of `id` in a table by tgid (process) or tid (thread). */
static size_t row_of(const struct ctp_snap *s, uint8_t scope, pid_t id)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, scope);
	const uint64_t *ids = scope == CTP_SCOPE_THREAD ? t->tid : t->tgid;

	for (size_t i = 0; i < t->rows; i++)
		if (ids[i] == (uint64_t)id)
			return i;
	fail_msg("%d is not in the %s table", (int)id,
		 scope == CTP_SCOPE_THREAD ? "thread" : "process");
	return SIZE_MAX;
}

/* A field's value in a row, derived ones computed; must be a u64. */
static uint64_t value(const struct ctp_snap *s, const char *name, size_t row)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);

	if (!f)
		fail_msg("no field %s", name);
	struct ctp_value v = ctp_snap_value(s, f, row);
	if (v.type != CTP_TYPE_U64)
		fail_msg("%s row %zu: absent or not u64 (%u)", name, row,
			 v.type);
	return v.u64;
}

/* ---- Tests ----------------------------------------------------------------
 */

static void reaped_children(void **state)
{
	struct reaped r;
	(void)state;

	pid_t parent = start(reaper_main, &r, sizeof(r));
	if (r.err) {
		stop(parent);
		fail_msg("the children failed: %s", strerror(-r.err));
	}
	struct ctp_snap *s = capture("reaped");
	stop(parent);

	size_t prow = row_of(s, CTP_SCOPE_PROCESS, parent);
	size_t trow = row_of(s, CTP_SCOPE_THREAD, parent);
	uint64_t ticks = value(s, "procfs.children.cpu_time", prow);
	uint64_t cutime = value(s, "procfs.children.utime", prow);
	uint64_t cstime = value(s, "procfs.children.stime", prow);
	double want = (double)(r.user_us + r.sys_us) * (double)user_hz / 1e6;
	uint64_t wb = value(s, "io.process.write_bytes", prow);
	uint64_t own_wb = value(s, "io.write_bytes", trow);
	uint64_t own_cpu = value(s, "procfs.process.cpu_time", prow);

	print_message("[ INFO     ] parent %d: children.cpu_time %" PRIu64
		      " ticks (%" PRIu64 " + %" PRIu64
		      "), RUSAGE_CHILDREN %.1f ticks; own cpu %" PRIu64
		      " ticks; io.process.write_bytes %" PRIu64
		      ", thread io.write_bytes %" PRIu64 "\n",
		      (int)parent, ticks, cutime, cstime, want, own_cpu, wb,
		      own_wb);
	assert_true(ticks == cutime + cstime);
	/* The same kernel sums (signal_struct cutime/cstime), each rounded
	 * down to a tick in stat. */
	assert_true((double)ticks <= want * 1.1 + 2 &&
		    (double)ticks >= want * 0.9 - 2);
	/* 20 x ~20 ms is ~40 ticks: the children did show up. */
	assert_true(ticks >= N_CHILDREN * CHILD_BURN * (uint64_t)user_hz / 2 /
				     1000000000ull);
	/* Their writes are the process's, not its thread's. */
	assert_true(wb >= (uint64_t)N_CHILDREN * CHILD_BYTES);
	assert_true(own_wb < CHILD_BYTES);
	/* The parent itself did next to nothing. */
	assert_true(own_cpu < ticks);
	ctp_snap_free(s);
}

static void exited_thread(void **state)
{
	int32_t err;
	(void)state;

	pid_t pid = start(joiner_main, &err, sizeof(err));
	if (err) {
		stop(pid);
		fail_msg("the threads failed: %s", strerror(-err));
	}
	struct ctp_snap *s = capture("joined");
	stop(pid);

	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t prow = row_of(s, CTP_SCOPE_PROCESS, pid);
	uint64_t live_utime = 0, live_cpu = 0, n = 0;
	for (size_t i = 0; i < tt->rows; i++) {
		if (tt->tgid[i] != (uint64_t)pid)
			continue;
		live_utime += value(s, "procfs.utime", i);
		live_cpu += value(s, "procfs.cpu_time", i);
		n++;
	}
	uint64_t utime = value(s, "procfs.process.utime", prow);
	uint64_t cpu = value(s, "procfs.process.cpu_time", prow);
	uint64_t dead = DEAD_BURN * (uint64_t)user_hz / 1000000000ull;

	print_message("[ INFO     ] process %d: process.utime %" PRIu64
		      ", process.cpu_time %" PRIu64 "; %" PRIu64
		      " live threads: utime %" PRIu64 ", cpu_time %" PRIu64
		      " (the joined thread burned %" PRIu64 " ticks)\n",
		      (int)pid, utime, cpu, n, live_utime, live_cpu, dead);
	assert_true(n == 2); /* main and the idler */
	assert_true(utime >= live_utime);
	/* The joined thread's work is in the process, in no thread row. */
	assert_true(cpu >= live_cpu + dead / 2);
	assert_true(value(s, "procfs.nr_threads", prow) == 2);
	ctp_snap_free(s);
}

/* ---- Host checks -----------------------------------------------------------
 */

/*
 * Whether written bytes in dir reach this process's write_bytes: not on
 * tmpfs, which has no writeback.
 */
static bool counts_write_bytes(const char *dir)
{
	char path[PATH_MAX];
	int64_t before = io_value("/proc/self/io", "write_bytes");

	if (before < 0 || E2E_PATHF(path, "%s/probe", dir) < 0 ||
	    write_file(path) < 0)
		return false;
	int64_t after = io_value("/proc/self/io", "write_bytes");
	unlink(path);
	return after - before >= (int64_t)CHILD_BYTES;
}

/* A directory for the children's files: the temporary one, else one
 * under the working directory (the build tree). */
static int pick_io_dir(void)
{
	char cwd[PATH_MAX];

	if (E2E_PATHF(io_dir, "%s/io", tmp) < 0 || mkdir(io_dir, 0700) < 0)
		return -1;
	if (counts_write_bytes(io_dir))
		return 0;
	if (!getcwd(cwd, sizeof(cwd)) ||
	    E2E_PATHF(io_dir, "%s/proc-totals-io.XXXXXX", cwd) < 0 ||
	    !mkdtemp(io_dir))
		return -1;
	if (counts_write_bytes(io_dir))
		return 0;
	e2e_rm_rf(io_dir);
	return -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reaped_children),
		cmocka_unit_test(exited_thread),
	};
	int rc;

	if (access("/proc/self/io", R_OK) != 0) {
		printf("skip: /proc/self/io: %s (kernel without "
		       "CONFIG_TASK_IO_ACCOUNTING?)\n",
		       strerror(errno));
		return SKIP;
	}
	user_hz = sysconf(_SC_CLK_TCK);
	if (user_hz <= 0 || e2e_tmpdir("proc-totals", tmp, sizeof(tmp)) < 0)
		return 1;
	if (pick_io_dir() < 0) {
		printf("skip: no directory here counts written bytes in "
		       "write_bytes (tmpfs $TMPDIR and build tree?)\n");
		e2e_rm_rf(tmp);
		return SKIP;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (strncmp(io_dir, tmp, strlen(tmp)) != 0)
		e2e_rm_rf(io_dir);
	e2e_rm_rf(tmp);
	return rc;
}
