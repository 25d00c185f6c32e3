/* The check on this kernel's helper, pass and files (bpfcheck.h). */
#include "bpfcheck.h"

#include "io_parse.h"
#include "procfs_parse.h"
#include "schedstat_parse.h"

#include <ctprof/plugin-util.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

/* A narrower CPU mask, some CPU, a write, a few pages touched, a short
 * sleep; then block. */
static void *helper_main(void *arg)
{
	struct helper *h = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	volatile unsigned long x = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct timespec ms = {0, 1000000};
	char buf[512] = {0}, c;
	int fd;

	narrow_affinity();
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
	nanosleep(&ms, NULL);
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

/* Read self/task/<tid>/<name> whole into buf. */
static int task_file(int proc_fd, pid_t tid, const char *name, char *buf,
		     size_t cap, size_t *len, char *why, size_t whylen)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "self/task/%d/%s", (int)tid, name);
	r = ctp_read_small(proc_fd, path, buf, cap, len);
	if (r == 0 && *len + 1 >= cap)
		r = -EFBIG;
	if (r < 0)
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(-r));
	return r;
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
	 * 200 ms: it did its work, nothing of it moves any more. */
	pfd = (struct pollfd){.fd = h.ready[0], .events = POLLIN};
	if (poll(&pfd, 1, 1000) != 1 ||
	    read(h.ready[0], &tid, sizeof(tid)) != sizeof(tid)) {
		r = -ETIMEDOUT;
		snprintf(why, whylen, "the helper thread did not report");
		goto out;
	}
	r = -ETIMEDOUT;
	for (int i = 0; i < 2000; i++) {
		struct timespec t = {0, 100000};
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
