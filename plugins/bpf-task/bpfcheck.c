/* The check on this kernel's helper, pass and files (bpfcheck.h). */
#include "bpfcheck.h"

#include "io_parse.h"
#include "procfs_parse.h"
#include "schedstat_parse.h"

#include <ctprof/plugin-util.h>

#include <ctprof/source-process.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct helper {
	int ready[2]; /* it sends its tid once it did its work */
	int block[2]; /* it waits for EOF here */
};

/* Leave the lowest CPU of the calling thread's mask out where another
 * stays, so its mask is not every CPU and the check sees the and with
 * cpu_active_mask work on a mask of its own. */
static void narrow_affinity(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2)
		return;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			CPU_CLR(i, &set);
			break;
		}
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* Some CPU, a write, a few pages touched; with sleep, a 1 ms sleep
 * (voluntary switches: thread values only). */
static void do_work(bool sleep)
{
	volatile unsigned long x = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct timespec ms = {0, 1000000};
	char buf[512] = {0};
	int fd;

	for (unsigned long i = 0; i < 200000; i++)
		x += i * i;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, buf, sizeof(buf)) < 0)
			x++;
		close(fd);
	}
	void *p = mmap(NULL, 4 * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		memset(p, 1, 4 * (size_t)page);
		munmap(p, 4 * (size_t)page);
	}
	if (sleep)
		nanosleep(&ms, NULL);
}

/* A narrower CPU mask and some work (do_work); then block. */
static void *helper_main(void *arg)
{
	struct helper *h = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char c;

	narrow_affinity();
	do_work(true);
	if (write(h->ready[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (read(h->block[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void closep(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* Read <path>/<name> under proc_fd whole into buf. */
static int read_whole(int proc_fd, const char *dir, const char *name, char *buf,
		      size_t cap, size_t *len, char *why, size_t whylen)
{
	char path[96];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	r = ctp_read_small(proc_fd, path, buf, cap, len);
	if (r == 0 && *len + 1 >= cap)
		r = -EFBIG;
	if (r < 0)
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(-r));
	return r;
}

/* Read self/task/<tid>/<name> whole into buf. */
static int task_file(int proc_fd, pid_t tid, const char *name, char *buf,
		     size_t cap, size_t *len, char *why, size_t whylen)
{
	char dir[48];

	snprintf(dir, sizeof(dir), "self/task/%d", (int)tid);
	return read_whole(proc_fd, dir, name, buf, cap, len, why, whylen);
}

/* The helper's state letter from its stat, or 0. */
static char state_of(int proc_fd, pid_t tid)
{
	char buf[1024];
	size_t len;
	struct ctp_stat st;
	char path[64];

	snprintf(path, sizeof(path), "self/task/%d/stat", (int)tid);
	if (ctp_read_small(proc_fd, path, buf, sizeof(buf), &len) < 0 ||
	    ctp_parse_stat(buf, len, &st) < 0 || !ctp_stat_has(&st, 3))
		return 0;
	return st.w[3].c;
}

/* The four files' values, as the source lays them out. */
static int read_files(int proc_fd, pid_t tid, struct ctp_src_task *out,
		      char *why, size_t whylen)
{
	static const struct {
		unsigned field, value;
		bool is_signed;
	} stat_map[] = {
		{10, CTP_SRC_TASK_MINFLT, false},
		{12, CTP_SRC_TASK_MAJFLT, false},
		{14, CTP_SRC_TASK_UTIME, false},
		{15, CTP_SRC_TASK_STIME, false},
		{18, CTP_SRC_TASK_PRIORITY, true},
		{19, CTP_SRC_TASK_NICE, true},
		{22, CTP_SRC_TASK_START_TIME, false},
		{39, CTP_SRC_TASK_PROCESSOR, true},
		{40, CTP_SRC_TASK_RT_PRIORITY, false},
		{41, CTP_SRC_TASK_POLICY, false},
	};
	static const unsigned io_map[CTP_IO_N] = {
		[CTP_IO_RCHAR] = CTP_SRC_TASK_RCHAR,
		[CTP_IO_WCHAR] = CTP_SRC_TASK_WCHAR,
		[CTP_IO_SYSCR] = CTP_SRC_TASK_SYSCR,
		[CTP_IO_SYSCW] = CTP_SRC_TASK_SYSCW,
		[CTP_IO_READ_BYTES] = CTP_SRC_TASK_READ_BYTES,
		[CTP_IO_WRITE_BYTES] = CTP_SRC_TASK_WRITE_BYTES,
		[CTP_IO_CANCELLED_WRITE_BYTES] =
			CTP_SRC_TASK_CANCELLED_WRITE_BYTES,
	};
	char buf[4096];
	size_t len;
	struct ctp_stat st;
	struct ctp_status su;
	struct ctp_io io;
	struct ctp_schedstat ss;
	int r;

	memset(out, 0, sizeof(*out));
	out->abi = 1;
	out->size = sizeof(*out);
	if ((r = task_file(proc_fd, tid, "stat", buf, sizeof(buf), &len, why,
			   whylen)) < 0)
		return r;
	if ((r = ctp_parse_stat(buf, len, &st)) < 0)
		goto bad_stat;
	for (size_t i = 0; i < sizeof(stat_map) / sizeof(*stat_map); i++)
		if (ctp_stat_has(&st, stat_map[i].field))
			ctp_bpftask_src_put(
				out, stat_map[i].value,
				stat_map[i].is_signed
					? (__u64)st.w[stat_map[i].field].i
					: st.w[stat_map[i].field].u);
	if (ctp_stat_has(&st, 3))
		ctp_bpftask_src_put(out, CTP_SRC_TASK_STATE,
				    (unsigned char)st.w[3].c);

	if ((r = task_file(proc_fd, tid, "status", buf, sizeof(buf), &len, why,
			   whylen)) < 0)
		return r;
	if ((r = ctp_parse_status(buf, len, &su)) < 0) {
		snprintf(why, whylen, "status unparsed: %s", strerror(-r));
		return r;
	}
	if (su.present & CTP_STATUS_VOLUNTARY_CSW)
		ctp_bpftask_src_put(out, CTP_SRC_TASK_NVCSW, su.voluntary_csw);
	if (su.present & CTP_STATUS_NONVOLUNTARY_CSW)
		ctp_bpftask_src_put(out, CTP_SRC_TASK_NIVCSW,
				    su.nonvoluntary_csw);

	if ((r = task_file(proc_fd, tid, "io", buf, sizeof(buf), &len, why,
			   whylen)) < 0)
		return r;
	if ((r = ctp_parse_io(buf, len, &io)) < 0) {
		snprintf(why, whylen, "io unparsed: %s", strerror(-r));
		return r;
	}
	for (unsigned i = 0; i < CTP_IO_N; i++)
		if ((io.present >> i) & 1)
			ctp_bpftask_src_put(out, io_map[i], io.v[i]);

	if ((r = task_file(proc_fd, tid, "schedstat", buf, sizeof(buf), &len,
			   why, whylen)) < 0)
		return r;
	if ((r = ctp_parse_schedstat(buf, len, &ss)) < 0) {
		snprintf(why, whylen, "schedstat unparsed: %s", strerror(-r));
		return r;
	}
	ctp_bpftask_src_put(out, CTP_SRC_TASK_RUN_NS, ss.run_ns);
	ctp_bpftask_src_put(out, CTP_SRC_TASK_RUN_DELAY_NS, ss.wait_ns);
	ctp_bpftask_src_put(out, CTP_SRC_TASK_TIMESLICES, ss.timeslices);

	/* procfs-stat's affinity: sched_getaffinity(), CPUs 0-255. */
	__u64 cpus[CTP_BPFTASK_CPU_WORDS];
	if (ctp_bpftask_getaffinity(tid, cpus) == 0)
		for (unsigned w = 0; w < CTP_BPFTASK_CPU_WORDS; w++)
			ctp_bpftask_src_put(out, CTP_SRC_TASK_CPUS(w), cpus[w]);
	return 0;
bad_stat:
	snprintf(why, whylen, "stat unparsed: %s", strerror(-r));
	return r;
}

/* The helper's record in the pass, converted as the fill converts. */
static int pass_of(struct ctp_bpftask *b, size_t max_bytes,
		   const struct ctp_bpftask_conv *conv, pid_t tid,
		   struct ctp_src_task *out, char *why, size_t whylen)
{
	const struct ctp_bpftask_rec *recs;
	/* One task where the kernel can (6.1+), else a whole pass. */
	int n = ctp_bpftask_pass_tid(b, (int)tid, &recs);

	if (n < 0)
		n = ctp_bpftask_pass(b, max_bytes, &recs);

	if (n < 0) {
		snprintf(why, whylen, "the pass failed: %s", strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		const struct ctp_bpftask_rec *t = &recs[i];
		__u64 pu = t->prev_utime, ps = t->prev_stime;

		if (t->pid != tid)
			continue;
		ctp_cputime_adjust(t->utime, t->stime, t->sum_exec_runtime, &pu,
				   &ps);
		ctp_bpftask_to_src(t, conv,
				   ctp_nsec_to_clock_t(pu, conv->user_hz),
				   ctp_nsec_to_clock_t(ps, conv->user_hz), out);
		return 0;
	}
	snprintf(why, whylen, "the helper thread %d is not in the pass",
		 (int)tid);
	return -ESRCH;
}

/* One pass over the calling thread alone (a whole pass before 6.1): its
 * record's cpus_mask into cpus. */
static int self_cpus(struct ctp_bpftask *b, size_t max_bytes,
		     __u64 cpus[CTP_BPFTASK_CPU_WORDS])
{
	const struct ctp_bpftask_rec *recs;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int n = ctp_bpftask_pass_tid(b, (int)tid, &recs);

	if (n < 0)
		n = ctp_bpftask_pass(b, max_bytes, &recs);
	for (int i = 0; i < n; i++)
		if (recs[i].pid == tid &&
		    (recs[i].present & CTP_BPFTASK_HAS_CPUS)) {
			memcpy(cpus, recs[i].cpus, sizeof(recs[i].cpus));
			return 0;
		}
	return n < 0 ? n : -ESRCH;
}

/* cpu_active_mask into conv as the plugin works it out for a pass
 * (bpf_task.c active_cpus()); conv->cpus_on stays 0 where it cannot. */
static void active_of(struct ctp_bpftask *b, size_t max_bytes,
		      const __u64 *possible, struct ctp_bpftask_conv *conv)
{
	__u64 before[CTP_BPFTASK_CPU_WORDS], after[CTP_BPFTASK_CPU_WORDS];
	__u64 cpus[CTP_BPFTASK_CPU_WORDS];

	conv->cpus_on = 0;
	if (possible && ctp_bpftask_getaffinity(0, before) == 0 &&
	    self_cpus(b, max_bytes, cpus) == 0 &&
	    ctp_bpftask_getaffinity(0, after) == 0 &&
	    !memcmp(before, after, sizeof(after)) &&
	    ctp_bpftask_active_cpus(after, cpus, possible, conv->active) == 0)
		conv->cpus_on = 1;
}

int ctp_bpfcheck_run(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_conv *conv_in,
		     const __u64 *possible, int proc_fd,
		     struct ctp_src_task *pass, struct ctp_src_task *files,
		     char *why, size_t whylen)
{
	struct ctp_bpftask_conv conv_v = *conv_in, *conv = &conv_v;
	struct helper h = {{-1, -1}, {-1, -1}};
	struct pollfd pfd;
	pthread_t th;
	pid_t tid = 0;
	int r;

	if (pipe2(h.ready, O_CLOEXEC) < 0 || pipe2(h.block, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(why, whylen, "no pipe: %s", strerror(-r));
		closep(h.ready);
		return r;
	}
	r = -pthread_create(&th, NULL, helper_main, &h);
	if (r < 0) {
		snprintf(why, whylen, "the helper thread cannot start: %s",
			 strerror(-r));
		closep(h.ready);
		closep(h.block);
		return r;
	}
	/* Its tid within a second, then 'S' (blocked in read) within about
	 * a second (looked at every 0.1 ms for 0.2 s, then every ms: a busy
	 * host can keep it from the CPU that long): it did its work, nothing
	 * of it moves any more. */
	pfd = (struct pollfd){.fd = h.ready[0], .events = POLLIN};
	if (poll(&pfd, 1, 1000) != 1 ||
	    read(h.ready[0], &tid, sizeof(tid)) != sizeof(tid)) {
		r = -ETIMEDOUT;
		snprintf(why, whylen, "the helper thread did not report");
		goto out;
	}
	r = -ETIMEDOUT;
	for (int i = 0; i < 2800; i++) {
		struct timespec t = {0, i < 2000 ? 100000 : 1000000};
		if (state_of(proc_fd, tid) == 'S') {
			r = 0;
			break;
		}
		nanosleep(&t, NULL);
	}
	if (r < 0) {
		snprintf(why, whylen, "the helper thread did not block");
		goto out;
	}
	active_of(b, max_bytes, possible, conv);
	r = pass_of(b, max_bytes, conv, tid, pass, why, whylen);
	if (r == 0)
		r = read_files(proc_fd, tid, files, why, whylen);
out:
	close(h.block[1]); /* EOF: it returns */
	h.block[1] = -1;
	pthread_join(th, NULL);
	closep(h.ready);
	closep(h.block);
	return r;
}

/* ---- The process check --------------------------------------------------- */

/*
 * The child of the process check: its own waited-for child (a grandchild
 * that works and exits, so cminflt and cutime count something), a thread
 * that works and exits (its counters in the signal block), a second
 * thread, some work in both (do_work), then its main thread's tid and the
 * other's on ready, and both block on hold until EOF. Exits the process.
 */
static void *child_thread(void *arg)
{
	const int *fds = arg; /* ready, hold */
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char c;

	do_work(false);
	if (write(fds[0], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (read(fds[1], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *gone_thread(void *arg)
{
	(void)arg;
	do_work(false);
	return NULL;
}

static _Noreturn void child_main(int ready, int hold)
{
	int fds[2] = {ready, hold};
	pthread_t th;
	pid_t g, tid = (pid_t)syscall(SYS_gettid);
	char c;

	signal(SIGCHLD, SIG_DFL); /* reaped by wait, counted in cutime */
	g = fork();
	if (g == 0) {
		do_work(false);
		_exit(0);
	}
	if (g < 0 || waitpid(g, NULL, 0) != g)
		_exit(1);
	/* A thread that works and exits: its counters in the signal block. */
	if (pthread_create(&th, NULL, gone_thread, NULL) != 0 ||
	    pthread_join(th, NULL) != 0)
		_exit(1);
	if (pthread_create(&th, NULL, child_thread, fds) != 0)
		_exit(1);
	do_work(false);
	if (write(ready, &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	while (read(hold, &c, 1) < 0 && errno == EINTR)
		;
	pthread_join(th, NULL);
	_exit(0);
}

/* <pid>/stat and <pid>/io as the "process" values. */
static int read_proc_files(int proc_fd, pid_t pid, struct ctp_src_process *out,
			   char *why, size_t whylen)
{
	static const struct {
		unsigned field, value;
	} stat_map[] = {
		{20, CTP_SRC_PROC_NUM_THREADS}, {10, CTP_SRC_PROC_MINFLT},
		{12, CTP_SRC_PROC_MAJFLT},	{14, CTP_SRC_PROC_UTIME},
		{15, CTP_SRC_PROC_STIME},	{11, CTP_SRC_PROC_CMINFLT},
		{13, CTP_SRC_PROC_CMAJFLT},	{16, CTP_SRC_PROC_CUTIME},
		{17, CTP_SRC_PROC_CSTIME},
	};
	char buf[4096], dir[32];
	size_t len;
	struct ctp_stat st;
	struct ctp_io io;
	int r;

	memset(out, 0, sizeof(*out));
	out->abi = 1;
	out->size = sizeof(*out);
	snprintf(dir, sizeof(dir), "%d", (int)pid);
	if ((r = read_whole(proc_fd, dir, "stat", buf, sizeof(buf), &len, why,
			    whylen)) < 0)
		return r;
	if ((r = ctp_parse_stat(buf, len, &st)) < 0) {
		snprintf(why, whylen, "stat unparsed: %s", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < sizeof(stat_map) / sizeof(*stat_map); i++)
		if (ctp_stat_has(&st, stat_map[i].field)) {
			out->v[stat_map[i].value] = st.w[stat_map[i].field].u;
			out->valid[0] |= UINT64_C(1) << stat_map[i].value;
		}
	if ((r = read_whole(proc_fd, dir, "io", buf, sizeof(buf), &len, why,
			    whylen)) < 0)
		return r;
	if ((r = ctp_parse_io(buf, len, &io)) < 0) {
		snprintf(why, whylen, "io unparsed: %s", strerror(-r));
		return r;
	}
	/* io's order is the values' from RCHAR on. */
	_Static_assert(CTP_IO_RCHAR == 0 && CTP_IO_CANCELLED_WRITE_BYTES == 6,
		       "io_parse.h's order");
	for (unsigned i = 0; i < CTP_IO_N; i++)
		if ((io.present >> i) & 1) {
			out->v[CTP_SRC_PROC_RCHAR + i] = io.v[i];
			out->valid[0] |= UINT64_C(1)
					 << (CTP_SRC_PROC_RCHAR + i);
		}
	return 0;
}

/* The child's records in a pass (its threads alone on 6.1+), made into
 * "process" values as a first pass makes them. */
static int proc_pass_of(struct ctp_bpftask *b, size_t max_bytes,
			const struct ctp_bpftask_conv *conv, pid_t pid,
			struct ctp_src_process *out, char *why, size_t whylen)
{
	const struct ctp_bpftask_rec *recs;
	__u32 idx[8];
	size_t k = 0;
	int n = ctp_bpftask_pass_pid(b, (int)pid,
				     8 * sizeof(struct ctp_bpftask_rec), &recs);

	if (n < 0)
		n = ctp_bpftask_pass(b, max_bytes, &recs);
	if (n < 0) {
		snprintf(why, whylen, "the pass failed: %s", strerror(-n));
		return n;
	}
	for (int i = 0; i < n && k < 8; i++)
		if (recs[i].tgid == pid)
			idx[k++] = (__u32)i;
	if (ctp_bpftask_process(recs, idx, k, conv, out) < 0) {
		snprintf(why, whylen, "the child %d has no leader record",
			 (int)pid);
		return -ESRCH;
	}
	return 0;
}

/* Whether every thread of pid named in tids blocks ('S'), within about
 * a second. */
static bool all_blocked(int proc_fd, pid_t pid, const pid_t *tids, int n)
{
	char path[64], buf[1024];
	struct ctp_stat st;
	size_t len;

	/* About a second, as for the helper thread. */
	for (int i = 0; i < 2800; i++) {
		int k = 0;
		for (; k < n; k++) {
			snprintf(path, sizeof(path), "%d/task/%d/stat",
				 (int)pid, (int)tids[k]);
			if (ctp_read_small(proc_fd, path, buf, sizeof(buf),
					   &len) < 0 ||
			    ctp_parse_stat(buf, len, &st) < 0 ||
			    !ctp_stat_has(&st, 3) || st.w[3].c != 'S')
				break;
		}
		if (k == n)
			return true;
		nanosleep(&(struct timespec){0, i < 2000 ? 100000 : 1000000},
			  NULL);
	}
	return false;
}

int ctp_bpfcheck_process(struct ctp_bpftask *b, size_t max_bytes,
			 const struct ctp_bpftask_conv *conv, int proc_fd,
			 struct ctp_src_process *pass,
			 struct ctp_src_process *files, char *why,
			 size_t whylen)
{
	int ready[2] = {-1, -1}, hold[2] = {-1, -1};
	struct pollfd pfd;
	pid_t pid, tids[2];
	int r = 0;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(why, whylen, "no pipe: %s", strerror(-r));
		closep(ready);
		return r;
	}
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(hold[1]);
		child_main(ready[1], hold[0]);
	}
	close(ready[1]);
	close(hold[0]);
	ready[1] = hold[0] = -1;
	if (pid < 0) {
		r = -errno;
		snprintf(why, whylen, "no child process: %s", strerror(-r));
		goto out;
	}
	/* Both tids within a second, then both blocked. A child that ends
	 * first (its pipe's end closed: read gives 0) could not do its work:
	 * its own child or thread refused, a pid limit mostly. */
	for (int i = 0; i < 2 && r == 0; i++) {
		pfd = (struct pollfd){.fd = ready[0], .events = POLLIN};
		ssize_t got =
			poll(&pfd, 1, 1000) == 1
				? read(ready[0], &tids[i], sizeof(tids[i]))
				: -1;
		if (got == 0) {
			r = -ECHILD;
			snprintf(why, whylen,
				 "the child process ended before it was ready "
				 "(a pid limit?)");
			goto out;
		}
		if (got != (ssize_t)sizeof(tids[i]))
			r = -ETIMEDOUT;
	}
	if (r < 0 || !all_blocked(proc_fd, pid, tids, 2)) {
		r = -ETIMEDOUT;
		snprintf(why, whylen, "the child process did not block");
		goto out;
	}
	r = proc_pass_of(b, max_bytes, conv, pid, pass, why, whylen);
	if (r == 0)
		r = read_proc_files(proc_fd, pid, files, why, whylen);
out:
	closep(hold); /* EOF: its threads return, it exits */
	if (pid > 0) {
		if (r < 0)
			kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	closep(ready);
	return r;
}
