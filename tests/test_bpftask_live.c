/* SPDX-License-Identifier: MIT */
/*
 * The bpf-task iterator against procfs on this kernel: a child with 8
 * threads blocked in read() (quiescent: nothing it controls runs), one
 * pass, and every field compared with the file the kernel prints it in.
 * Prints "field: N of M equal" per field; all must be equal. Skips (77)
 * when not root, without BTF, when bpf() is refused or when the program
 * was not built.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef CTP_BPFTASK_MISSING
int main(void)
{
	printf("SKIP: the bpf-task program was not built: %s\n",
	       CTP_BPFTASK_MISSING);
	return 77;
}
#else
#include "bpftask.h"
#include "io_parse.h"
#include "procfs_parse.h"
#include "schedstat_parse.h"

#define N_THREADS 8
#define MAX_TASKS 64

enum {
	F_TGID,
	F_COMM,
	F_START,
	F_MINFLT,
	F_MAJFLT,
	F_NVCSW,
	F_NIVCSW,
	F_SUM_EXEC,
	F_RUN_DELAY,
	F_PCOUNT,
	F_RCHAR,
	F_WCHAR,
	F_SYSCR,
	F_SYSCW,
	F_READ_BYTES,
	F_WRITE_BYTES,
	F_CANCELLED,
	N_F
};
static const char *const fname[N_F] = {
	"tgid (task directory)",
	"comm",
	"start_boottime (stat 22)",
	"minflt (stat 10)",
	"majflt (stat 12)",
	"nvcsw (status)",
	"nivcsw (status)",
	"sum_exec_runtime (schedstat 1)",
	"run_delay (schedstat 2)",
	"pcount (schedstat 3)",
	"rchar (io)",
	"wchar (io)",
	"syscr (io)",
	"syscw (io)",
	"read_bytes (io)",
	"write_bytes (io)",
	"cancelled_write_bytes (io)",
};

/* One thread's values as procfs prints them; has[f]: the file had it. */
struct proc_vals {
	uint64_t v[N_F];
	bool has[N_F];
	char comm[16];
};

static int block_fd = -1; /* read end nobody writes: threads sleep on it */
static int ready_fd = -1;

static void *sleeper(void *arg)
{
	char buf[512];
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	(void)arg;
	/* Some I/O of its own, so the io counters are not all 0. */
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			_exit(3);
		close(fd);
	}
	/* Dirty a page of a disk file and truncate it: write_bytes and
	 * cancelled_write_bytes (where "." is not tmpfs). */
	fd = open(".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		memset(buf, 'x', sizeof(buf));
		for (int i = 0; i < 8; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				_exit(3);
		if (ftruncate(fd, 0) < 0)
			_exit(3);
		close(fd);
	}
	if (write(ready_fd, "r", 1) != 1)
		_exit(3);
	(void)!read(block_fd, buf, 1);
	return NULL;
}

static pid_t spawn(void)
{
	int blk[2], rdy[2];
	char c;
	if (pipe(blk) < 0 || pipe(rdy) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		pthread_t t;
		close(blk[1]);
		close(rdy[0]);
		block_fd = blk[0];
		ready_fd = rdy[1];
		for (int i = 0; i < N_THREADS; i++)
			if (pthread_create(&t, NULL, sleeper, NULL))
				_exit(3);
		sleeper(NULL);
		_exit(0);
	}
	close(blk[0]);
	close(rdy[1]);
	for (int i = 0; i <= N_THREADS; i++)
		if (read(rdy[0], &c, 1) != 1)
			return -1;
	close(rdy[0]);
	/* blk[1] stays open in this process until it exits. */
	return pid;
}

static int slurp(pid_t pid, int tid, const char *name, char *buf, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, tid,
		 name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	return (int)n;
}

static void set(struct proc_vals *pv, int f, bool ok, uint64_t v)
{
	pv->has[f] = ok;
	pv->v[f] = ok ? v : 0;
}

/* The io key of field f: the first word of its name ("rchar (io)"). */
static int io_key(int f)
{
	size_t n = strcspn(fname[f], " ");
	for (unsigned i = 0; i < CTP_IO_N; i++)
		if (strlen(ctp_io_key_name(i)) == n &&
		    !strncmp(ctp_io_key_name(i), fname[f], n))
			return (int)i;
	return -1;
}

/* A thread's files, read with the parsers of procfs-stat, schedstat and
 * io; false when the thread or one of its files is gone or garbled. */
static bool read_proc(pid_t pid, int tid, struct proc_vals *pv)
{
	char buf[4096];
	struct ctp_stat st;
	struct ctp_status su;
	struct ctp_schedstat ss;
	struct ctp_io io;
	int n;
	memset(pv, 0, sizeof(*pv));

	if ((n = slurp(pid, tid, "stat", buf, sizeof(buf))) < 0 ||
	    ctp_parse_stat(buf, (size_t)n, &st) < 0)
		return false;
	set(pv, F_TGID, true, (uint64_t)pid); /* the task directory's */
	set(pv, F_MINFLT, ctp_stat_has(&st, 10), st.w[10].u);
	set(pv, F_MAJFLT, ctp_stat_has(&st, 12), st.w[12].u);
	set(pv, F_START, ctp_stat_has(&st, 22), st.w[22].u);

	if ((n = slurp(pid, tid, "status", buf, sizeof(buf))) < 0 ||
	    ctp_parse_status(buf, (size_t)n, &su) < 0)
		return false;
	set(pv, F_NVCSW, su.present & CTP_STATUS_VOLUNTARY_CSW,
	    su.voluntary_csw);
	set(pv, F_NIVCSW, su.present & CTP_STATUS_NONVOLUNTARY_CSW,
	    su.nonvoluntary_csw);

	if ((n = slurp(pid, tid, "comm", buf, sizeof(buf))) > 0) {
		size_t len = strcspn(buf, "\n");
		memcpy(pv->comm, buf, len < 15 ? len : 15);
		pv->has[F_COMM] = true;
	}
	/* An absent file (a kernel without SCHED_INFO or
	 * TASK_IO_ACCOUNTING) leaves its fields absent; a garbled one fails
	 * the thread. */
	if ((n = slurp(pid, tid, "schedstat", buf, sizeof(buf))) >= 0) {
		if (ctp_parse_schedstat(buf, (size_t)n, &ss) < 0)
			return false;
		set(pv, F_SUM_EXEC, true, ss.run_ns);
		set(pv, F_RUN_DELAY, true, ss.wait_ns);
		set(pv, F_PCOUNT, true, ss.timeslices);
	}
	if ((n = slurp(pid, tid, "io", buf, sizeof(buf))) >= 0) {
		if (ctp_parse_io(buf, (size_t)n, &io) < 0)
			return false;
		for (int f = F_RCHAR; f <= F_CANCELLED; f++) {
			int k = io_key(f);
			set(pv, f, k >= 0 && (io.present >> k) & 1,
			    k >= 0 ? io.v[k] : 0);
		}
	}
	return true;
}

/* The thread ids of pid, sorted by readdir order; returns how many. */
static int list_tids(pid_t pid, int *tids, int max)
{
	char path[64];
	int n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *e;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

static void from_rec(const struct ctp_bpftask_rec *r, struct proc_vals *bv)
{
	long hz = sysconf(_SC_CLK_TCK);
	bool sched = r->present & CTP_BPFTASK_HAS_SCHED_INFO;
	bool xacct = r->present & CTP_BPFTASK_HAS_IO_XACCT;
	bool iob = r->present & CTP_BPFTASK_HAS_IO_BYTES;
	memset(bv, 0, sizeof(*bv));
	set(bv, F_TGID, true, (uint64_t)r->tgid);
	bv->has[F_COMM] = true;
	memcpy(bv->comm, r->comm, sizeof(bv->comm));
	/* fs/proc/array.c: nsec_to_clock_t(start_boottime) */
	set(bv, F_START, true,
	    r->start_boottime / (1000000000ull / (uint64_t)hz));
	set(bv, F_MINFLT, true, r->minflt);
	set(bv, F_MAJFLT, true, r->majflt);
	set(bv, F_NVCSW, true, r->nvcsw);
	set(bv, F_NIVCSW, true, r->nivcsw);
	set(bv, F_SUM_EXEC, true, r->sum_exec_runtime);
	set(bv, F_RUN_DELAY, sched, r->run_delay);
	set(bv, F_PCOUNT, sched, r->pcount);
	set(bv, F_RCHAR, xacct, r->rchar);
	set(bv, F_WCHAR, xacct, r->wchar);
	set(bv, F_SYSCR, xacct, r->syscr);
	set(bv, F_SYSCW, xacct, r->syscw);
	set(bv, F_READ_BYTES, iob, r->read_bytes);
	set(bv, F_WRITE_BYTES, iob, r->write_bytes);
	set(bv, F_CANCELLED, iob, r->cancelled_write_bytes);
}

static bool same(const struct proc_vals *a, const struct proc_vals *b, int f)
{
	if (a->has[f] != b->has[f])
		return false;
	if (f == F_COMM)
		return !strncmp(a->comm, b->comm, sizeof(a->comm));
	return a->v[f] == b->v[f];
}

static bool all_same(const struct proc_vals *a, const struct proc_vals *b)
{
	for (int f = 0; f < N_F; f++)
		if (!same(a, b, f))
			return false;
	return true;
}

int main(void)
{
	struct ctp_bpftask *b = NULL;
	const struct ctp_bpftask_rec *recs;
	char why[256] = "";
	int tids[MAX_TASKS], n_tids, r, rc = 1;
	static struct proc_vals before[MAX_TASKS], after[MAX_TASKS],
		bpf[MAX_TASKS];
	bool found[MAX_TASKS];

	if (geteuid() != 0) {
		printf("SKIP: not root (the program needs CAP_BPF + "
		       "CAP_PERFMON)\n");
		return 77;
	}
	r = ctp_bpftask_open(&b, why, sizeof(why));
	if (r == -ENOENT || r == -EPERM || r == -EACCES) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	if (r < 0) {
		printf("FAIL: %s\n", why);
		return 1;
	}
	pid_t child = spawn();
	if (child < 0) {
		printf("FAIL: could not start the sleeping child\n");
		goto out;
	}
	n_tids = list_tids(child, tids, MAX_TASKS);
	if (n_tids != N_THREADS + 1) {
		printf("FAIL: the child has %d threads, expected %d\n", n_tids,
		       N_THREADS + 1);
		goto out;
	}
	/* procfs, one pass, procfs again: the pass is compared with values
	 * that did not move around it. A thread that just woke or has not
	 * yet reached its read() moves: try again (bounded). */
	for (int attempt = 0;; attempt++) {
		bool stable = true;
		for (int i = 0; i < n_tids; i++)
			if (!read_proc(child, tids[i], &before[i]))
				stable = false;
		r = ctp_bpftask_pass(b, 256u << 20, &recs);
		if (r < 0) {
			printf("FAIL: pass: %s\n", strerror(-r));
			goto out;
		}
		for (int i = 0; i < n_tids; i++)
			if (!read_proc(child, tids[i], &after[i]) ||
			    !all_same(&before[i], &after[i]))
				stable = false;
		if (stable)
			break;
		if (attempt == 50) {
			printf("FAIL: the child's threads never held still\n");
			goto out;
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	int n_recs = r;
	memset(found, 0, sizeof(found));
	bool self = false;
	for (int k = 0; k < n_recs; k++) {
		if (recs[k].pid == getpid() && recs[k].tgid == getpid())
			self = true;
		for (int i = 0; i < n_tids; i++)
			if (recs[k].pid == tids[i]) {
				if (found[i]) {
					printf("FAIL: tid %d twice in a pass\n",
					       tids[i]);
					goto out;
				}
				found[i] = true;
				from_rec(&recs[k], &bpf[i]);
			}
	}
	printf("one pass: %d records\n", n_recs);
	if (!self) {
		printf("FAIL: the pass has no record of this process\n");
		goto out;
	}
	rc = 0;
	for (int i = 0; i < n_tids; i++)
		if (!found[i]) {
			printf("FAIL: tid %d not in the pass\n", tids[i]);
			rc = 1;
		}
	for (int f = 0; f < N_F; f++) {
		int eq = 0, absent = 0, nonzero = 0;
		for (int i = 0; i < n_tids; i++) {
			if (!found[i])
				continue;
			if (!before[i].has[f] && !bpf[i].has[f])
				absent++;
			else if (same(&before[i], &bpf[i], f)) {
				eq++;
				nonzero += f == F_COMM ? bpf[i].comm[0] != 0
						       : bpf[i].v[f] != 0;
			} else if (f == F_COMM)
				printf("  tid %d: %s '%.16s' procfs '%s'\n",
				       tids[i], fname[f], bpf[i].comm,
				       before[i].comm);
			else
				printf("  tid %d: %s %s%llu procfs %s%llu\n",
				       tids[i], fname[f],
				       bpf[i].has[f] ? "" : "(absent) ",
				       (unsigned long long)bpf[i].v[f],
				       before[i].has[f] ? "" : "(absent) ",
				       (unsigned long long)before[i].v[f]);
		}
		if (absent == n_tids)
			printf("%s: absent on this kernel (both sources)\n",
			       fname[f]);
		else
			printf("%s: %d of %d equal (%d not 0)\n", fname[f], eq,
			       n_tids, nonzero);
		if (eq + absent != n_tids)
			rc = 1;
	}
	/* The reader is bounded: a stream past max_bytes is refused, and the
	 * next pass is whole again. */
	r = ctp_bpftask_pass(b, 2 * sizeof(struct ctp_bpftask_rec), &recs);
	if (r != -E2BIG) {
		printf("FAIL: a pass capped at 2 records returned %d\n", r);
		rc = 1;
	}
	r = ctp_bpftask_pass(b, 256u << 20, &recs);
	if (r < n_tids) {
		printf("FAIL: the pass after the capped one returned %d\n", r);
		rc = 1;
	}
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	ctp_bpftask_free(b);
	return rc;
}
#endif
