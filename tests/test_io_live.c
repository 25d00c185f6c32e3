/* SPDX-License-Identifier: MIT */
/*
 * io on the live /proc: a child process starts a thread that writes a
 * known number of bytes with a known number of write(2) calls and fsyncs,
 * then parks. A capture of the host with the io plugin must show, on that
 * thread's row, at least those bytes in io.wchar and those calls in
 * io.syscw -- exactly what the kernel's task/<tid>/io says around the
 * capture -- and the child's other thread must not have them.
 *
 * Exits 77 (skipped) when this kernel has no per-thread io file
 * (CONFIG_TASK_IO_ACCOUNTING).
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define SKIP	 77
#define MAX_SNAP (1ull << 31)
/* 1000 writes of 4099 bytes: an odd size, so no page-sized luck. */
#define N_WRITES 1000
#define CHUNK	 4099

static char tmp[PATH_MAX];

/* ---- The child ---------------------------------------------------------- */

struct writer {
	const char *path;
	int report; /* pipe to the parent */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	static char buf[CHUNK];
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok = fd >= 0;

	memset(buf, 'x', sizeof(buf));
	for (int i = 0; ok && i < N_WRITES; i++)
		ok = write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf);
	ok = ok && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	if (!ok)
		tid = -errno;
	/* The report is this thread's one extra write. */
	if (write(w->report, &tid, sizeof(tid)) != sizeof(tid))
		_exit(3);
	for (;;)
		pause();
	return NULL;
}

/* Runs in the child: the main thread waits, the writer writes. */
static void child_main(const char *path, int report)
{
	struct writer w = {.path = path, .report = report};
	pthread_t t;

	if (pthread_setname_np(pthread_self(), "io-idle") ||
	    pthread_create(&t, NULL, writer_main, &w))
		_exit(2);
	pthread_setname_np(t, "io-writer");
	for (;;)
		pause();
}

/* ---- The kernel's view -------------------------------------------------- */

/* The line after l's, or NULL after the last. */
static const char *next_line(const char *l)
{
	l = strchr(l, '\n');
	return l ? l + 1 : NULL;
}

/* A value of /proc/<pid>/task/<tid>/io, or -1. */
static int64_t kernel_io(pid_t pid, pid_t tid, const char *key)
{
	char path[64], *text;
	const char *p;
	int64_t v = -1;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/task/%d/io", (int)pid, (int)tid);
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

/* ---- The test ------------------------------------------------------------ */

static uint64_t u64_at(const struct ctp_snap *s, const char *name, size_t row)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	struct ctp_value v;

	if (!f)
		fail_msg("no field %s", name);
	v = ctp_snap_get(s, f, row);
	if (v.type != CTP_TYPE_U64)
		fail_msg("%s row %zu: absent or not u64 (%u)", name, row,
			 v.type);
	return v.u64;
}

static void writer_thread_counted(void **state)
{
	char file[PATH_MAX], cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	int fds[2];
	pid_t child, tid = 0, idle;
	(void)state;

	assert_int_equal(E2E_PATHF(file, "%s/written", tmp), 0);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		child_main(file, fds[1]);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], &tid, sizeof(tid));
	close(fds[0]);
	if (n != sizeof(tid) || tid <= 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		fail_msg("the writer failed: %s",
			 n == sizeof(tid) ? strerror(-tid) : "no report");
	}
	idle = child; /* the main thread's tid is the pid */

	int64_t before_w = kernel_io(child, tid, "wchar");
	int64_t before_c = kernel_io(child, tid, "syscw");

	assert_int_equal(E2E_PATHF(cfg, "%s/io.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(out, "%s/live.ctprof.zst", tmp), 0);
	assert_int_equal(E2E_PATHF(log, "%s/live.log", tmp), 0);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nworkers: 2\n"
		"plugins:\n  io: {required: true}\n",
		CTP_TEST_PLUGIN_DIR);
	assert_int_equal(fclose(f), 0);
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	int rc = e2e_run(args, NULL, log);

	int64_t after_w = kernel_io(child, tid, "wchar");
	int64_t after_c = kernel_io(child, tid, "syscw");
	int64_t idle_w = kernel_io(child, idle, "wchar");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (rc != 0) {
		e2e_show_file("ctprof-core stderr", log);
		fail_msg("capture exited with %d", rc);
	}

	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(out, MAX_SNAP, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t row = SIZE_MAX, idle_row = SIZE_MAX;
	for (size_t i = 0; i < tt->rows; i++) {
		if (tt->tid[i] == (uint64_t)tid)
			row = i;
		if (tt->tid[i] == (uint64_t)idle)
			idle_row = i;
	}
	if (row == SIZE_MAX || idle_row == SIZE_MAX)
		fail_msg("the child's threads are not in the snapshot");
	assert_true(tt->tgid[row] == (uint64_t)child);
	assert_true(e2e_bytes_eq(tt->comm[row], "io-writer"));

	uint64_t wchar = u64_at(s, "io.wchar", row);
	uint64_t syscw = u64_at(s, "io.syscw", row);
	print_message("[ INFO     ] writer %d: io.wchar %" PRIu64
		      ", io.syscw %" PRIu64 " (wrote %d x %d bytes)\n",
		      (int)tid, wchar, syscw, N_WRITES, CHUNK);
	assert_true(wchar >= (uint64_t)N_WRITES * CHUNK);
	assert_true(syscw >= N_WRITES);
	/* What the kernel said just before and after the capture. */
	assert_true(before_w >= 0 && after_w >= 0);
	assert_true(wchar >= (uint64_t)before_w && wchar <= (uint64_t)after_w);
	assert_true(syscw >= (uint64_t)before_c && syscw <= (uint64_t)after_c);
	/* Every field present on the writer; the bytes are on its row only. */
	static const char *const all[] = {"io.rchar",
					  "io.wchar",
					  "io.syscr",
					  "io.syscw",
					  "io.read_bytes",
					  "io.write_bytes",
					  "io.cancelled_write_bytes"};
	for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		(void)u64_at(s, all[k], row);
	assert_true(idle_w >= 0 && idle_w < (int64_t)N_WRITES * CHUNK);
	assert_true(u64_at(s, "io.wchar", idle_row) <
		    (uint64_t)N_WRITES * CHUNK);
	ctp_snap_free(s);
}

int main(void)
{
	char probe[64];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer_thread_counted),
	};
	int rc;

	snprintf(probe, sizeof(probe), "/proc/self/task/%d/io",
		 (int)syscall(SYS_gettid));
	if (access(probe, R_OK) != 0) {
		printf("skip: %s: %s (kernel without "
		       "CONFIG_TASK_IO_ACCOUNTING?)\n",
		       probe, strerror(errno));
		return SKIP;
	}
	if (e2e_tmpdir("io-live", tmp, sizeof(tmp)) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	e2e_rm_rf(tmp);
	return rc;
}
