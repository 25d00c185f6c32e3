/* SPDX-License-Identifier: MIT */
/*
 * The bpf-task iterator against procfs and taskstats on this kernel: a
 * child with 8 threads that burn some CPU, then block in read()
 * (quiescent: nothing it controls runs), one pass, and every value of the
 * "task" source (include/ctprof/source-task.h, as the plugin makes it from
 * a record) compared with the file the kernel prints it in (stat, status,
 * io, schedstat) or with a TASKSTATS_CMD_GET reply (delays, hiwater).
 * The pass comes first, before anything reads the threads' stat, so
 * stat's utime and stime are worked out from a prev_cputime that no
 * /proc read has brought up to date. Prints "field: N of M equal" per
 * value; all must be equal. The "process" source of the same pass
 * (include/ctprof/source-process.h, ctp_bpftask_process) against the
 * child's <pid>/stat and <pid>/io, the child having reaped a child of its
 * own and joined a thread that worked (so the signal block counts), and a
 * pass over the child's threads alone. Skips (77) when not root, without BTF,
 * when bpf() is refused or when the program was not built.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#ifdef CTP_BPFTASK_MISSING
int main(void)
{
	printf("SKIP: the bpf-task program was not built: %s\n",
	       CTP_BPFTASK_MISSING);
	return 77;
}
#else
#include "bpftask.h"
#include "bpftask_test_open.h"
#include "cpus.h"
#include "hostprobe.h"
#include "io_parse.h"
#include "proc_tids.h"
#include "procfs_parse.h"
#include "schedstat_parse.h"
#include "taskstats_reply.h"

#include <ctprof/source-process.h>
#include <ctprof/source-task.h>

#define N_THREADS 8
#define MAX_TASKS 64

/* F_TGID, F_COMM, then value k of the source as F_SRC + k. */
enum { F_TGID, F_COMM, F_SRC, N_F = F_SRC + CTP_SRC_TASK_N_VALUES };
static char fname[N_F][64];

static const char *const src_names[CTP_SRC_TASK_DELAY0] = {
	"minflt (stat 10)",
	"majflt (stat 12)",
	"utime (stat 14)",
	"stime (stat 15)",
	"priority (stat 18)",
	"nice (stat 19)",
	"start_time (stat 22)",
	"processor (stat 39)",
	"rt_priority (stat 40)",
	"policy (stat 41)",
	"state (stat 3)",
	"nvcsw (status)",
	"nivcsw (status)",
	"rchar (io)",
	"wchar (io)",
	"syscr (io)",
	"syscw (io)",
	"read_bytes (io)",
	"write_bytes (io)",
	"cancelled_write_bytes (io)",
	"run_ns (schedstat 1)",
	"run_delay_ns (schedstat 2)",
	"timeslices (schedstat 3)",
};

static void name_fields(void)
{
	static const char *const fam[] = {"cpu",       "blkio",	    "swapin",
					  "freepages", "thrashing", "compact",
					  "wpcopy",    "irq"};
	static const char *const part[] = {"count", "delay_total", "delay_max",
					   "delay_min"};
	snprintf(fname[F_TGID], sizeof(fname[0]), "tgid (task directory)");
	snprintf(fname[F_COMM], sizeof(fname[0]), "comm");
	for (int k = 0; k < CTP_SRC_TASK_N_VALUES; k++) {
		char *n = fname[F_SRC + k];
		if (k < CTP_SRC_TASK_DELAY0)
			snprintf(n, sizeof(fname[0]), "%s", src_names[k]);
		else if (k == CTP_SRC_TASK_HIWATER_RSS)
			snprintf(n, sizeof(fname[0]),
				 "hiwater_rss (taskstats)");
		else if (k == CTP_SRC_TASK_HIWATER_VM)
			snprintf(n, sizeof(fname[0]), "hiwater_vm (taskstats)");
		else if (k >= CTP_SRC_TASK_CPUS0)
			snprintf(n, sizeof(fname[0]),
				 "cpus%d (sched_getaffinity)",
				 k - CTP_SRC_TASK_CPUS0);
		else
			snprintf(n, sizeof(fname[0]), "%s_%s (taskstats)",
				 fam[(k - CTP_SRC_TASK_DELAY0) / 4],
				 part[(k - CTP_SRC_TASK_DELAY0) % 4]);
	}
}

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

	/* A CPU mask of its own (thread 0 keeps the process's); fails the
	 * child where it cannot. */
	if (ctp_cpus_spread((unsigned)(intptr_t)arg) < 0)
		_exit(3);
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
	/* 60 ms of CPU, user and system mixed (getppid calls between
	 * sums), so utime, stime and the run time are not 0 and
	 * cputime_adjust() has a split to scale. Bounded by CPU time, not
	 * by the clock. */
	volatile uint64_t sum = 0;
	for (;;) {
		struct timespec ts;
		for (int i = 0; i < 100000; i++)
			sum += (uint64_t)i * i;
		for (int i = 0; i < 2000; i++)
			(void)syscall(SYS_getppid);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		if (ts.tv_sec > 0 || ts.tv_nsec > 60 * 1000 * 1000)
			break;
	}
	(void)sum; /* read once: clang counts only reads as a use */
	if (write(ready_fd, "r", 1) != 1)
		_exit(3);
	(void)!read(block_fd, buf, 1);
	return NULL;
}

/* Reads and writes, then exits. */
static void *gone(void *arg)
{
	char buf[300] = {0};
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	(void)arg;
	if (fd >= 0) {
		(void)!read(fd, buf, sizeof(buf));
		close(fd);
	}
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, buf, sizeof(buf));
		close(fd);
	}
	return NULL;
}

/* What the plugin's conversion is told about this host (main()). */
static struct ctp_bpftask_conv conv;

/*
 * The "process" values of pid from the pass's records (as the plugin makes
 * them for a first pass) against its <pid>/stat and <pid>/io, each
 * printed; 0 when all 16 are offered and equal.
 */
static int compare_process(const struct ctp_bpftask_rec *recs, int n, pid_t pid)
{
	static const unsigned stat_field[9] = {20, 10, 12, 14, 15,
					       11, 13, 16, 17};
	static const char *const names[CTP_SRC_PROC_RCHAR] = {
		"num_threads (stat 20)", "minflt (stat 10)",
		"majflt (stat 12)",	 "utime (stat 14)",
		"stime (stat 15)",	 "cminflt (stat 11)",
		"cmajflt (stat 13)",	 "cutime (stat 16)",
		"cstime (stat 17)",
	}; /* io's seven: the task source's names (src_names) */
	__u32 idx[MAX_TASKS];
	size_t k = 0;
	struct ctp_src_process p;
	uint64_t file[CTP_SRC_PROC_N_VALUES], v = 0;
	char buf[4096], path[64];
	struct ctp_stat st;
	struct ctp_io io;
	int fd, rc = 0;
	ssize_t len;

	for (int i = 0; i < n && k < MAX_TASKS; i++)
		if (recs[i].tgid == pid)
			idx[k++] = (__u32)i;
	if (ctp_bpftask_process(recs, idx, k, &conv, &p) < 0) {
		printf("FAIL: process %d: no leader record\n", (int)pid);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	if (len <= 0 || ctp_parse_stat(buf, (size_t)len, &st) < 0)
		return printf("FAIL: %s unread\n", path), 1;
	for (unsigned i = 0; i < 9; i++)
		file[i] = st.w[stat_field[i]].u;
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	if (len <= 0 || ctp_parse_io(buf, (size_t)len, &io) < 0)
		return printf("FAIL: %s unread\n", path), 1;
	for (unsigned i = 0; i < CTP_IO_N; i++)
		file[CTP_SRC_PROC_RCHAR + i] = io.v[i];
	/* The values of a file (MM_GEN, the last, is none). */
	for (unsigned i = 0; i < CTP_SRC_PROC_MM_GEN; i++) {
		bool has = ctp_src_process_get(&p, sizeof(p), i, &v);
		printf("process %s: %s (%llu, file %llu)\n",
		       i < CTP_SRC_PROC_RCHAR
			       ? names[i]
			       : src_names[CTP_SRC_TASK_RCHAR + i -
					   CTP_SRC_PROC_RCHAR],
		       !has	      ? "NOT OFFERED"
		       : v == file[i] ? "equal"
				      : "DIFFERS",
		       has ? (unsigned long long)v : 0ull,
		       (unsigned long long)file[i]);
		if (!has || v != file[i])
			rc = 1;
	}
	return rc;
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
		/* A child of its own that faults and is reaped (cminflt),
		 * a thread that reads and writes and is joined (its counters
		 * in the signal block). */
		signal(SIGCHLD, SIG_DFL);
		pid_t g = fork();
		if (g == 0) {
			char *p = malloc(1 << 20);
			for (size_t i = 0; p && i < (1u << 20); i += 4096)
				p[i] = 1;
			_exit(0);
		}
		if (g < 0 || waitpid(g, NULL, 0) != g ||
		    pthread_create(&t, NULL, gone, NULL) ||
		    pthread_join(t, NULL))
			_exit(3);
		for (int i = 0; i < N_THREADS; i++)
			if (pthread_create(&t, NULL, sleeper,
					   (void *)(intptr_t)(i + 1)))
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

#define S(k) (F_SRC + CTP_SRC_TASK_##k)

/* The TASKSTATS family and a socket to ask it (the taskstats plugin's
 * request and reply code). */
static int ts_fd = -1;
static uint16_t ts_family;

static int ts_open(void)
{
	char buf[8192] __attribute__((aligned(8)));
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct timeval tv = {5, 0};
	size_t len;
	ssize_t n;

	ts_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (ts_fd < 0 || bind(ts_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	setsockopt(ts_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	len = ctp_genl_put_getfamily(buf, sizeof(buf), 1, "TASKSTATS");
	if (send(ts_fd, buf, len, 0) != (ssize_t)len)
		return -errno;
	n = recv(ts_fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return ctp_genl_parse_family(buf, (size_t)n, &ts_family);
}

static int ts_query(int tid, struct ctp_taskstats *out)
{
	static uint32_t seq = 100;
	char buf[8192] __attribute__((aligned(8)));
	size_t len = ctp_ts_put_get(buf, sizeof(buf), ts_family, ++seq,
				    (uint32_t)tid);
	ssize_t n;

	if (send(ts_fd, buf, len, 0) != (ssize_t)len)
		return -errno;
	n = recv(ts_fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return ctp_ts_parse_reply(buf, (size_t)n, ts_family, (uint32_t)tid,
				  out);
}

/* A thread's files, read with the parsers of procfs-stat, schedstat and
 * io, and its taskstats reply; false when the thread or one of its files
 * is gone or garbled. */
static bool read_proc(pid_t pid, int tid, struct proc_vals *pv)
{
	char buf[4096];
	struct ctp_stat st;
	struct ctp_status su;
	struct ctp_schedstat ss;
	struct ctp_io io;
	struct ctp_taskstats ts;
	int n;
	memset(pv, 0, sizeof(*pv));

	if ((n = slurp(pid, tid, "stat", buf, sizeof(buf))) < 0 ||
	    ctp_parse_stat(buf, (size_t)n, &st) < 0)
		return false;
	set(pv, F_TGID, true, (uint64_t)pid); /* the task directory's */
	set(pv, S(MINFLT), ctp_stat_has(&st, 10), st.w[10].u);
	set(pv, S(MAJFLT), ctp_stat_has(&st, 12), st.w[12].u);
	set(pv, S(UTIME), ctp_stat_has(&st, 14), st.w[14].u);
	set(pv, S(STIME), ctp_stat_has(&st, 15), st.w[15].u);
	set(pv, S(PRIORITY), ctp_stat_has(&st, 18), (uint64_t)st.w[18].i);
	set(pv, S(NICE), ctp_stat_has(&st, 19), (uint64_t)st.w[19].i);
	set(pv, S(START_TIME), ctp_stat_has(&st, 22), st.w[22].u);
	set(pv, S(PROCESSOR), ctp_stat_has(&st, 39), (uint64_t)st.w[39].i);
	set(pv, S(RT_PRIORITY), ctp_stat_has(&st, 40), st.w[40].u);
	set(pv, S(POLICY), ctp_stat_has(&st, 41), st.w[41].u);
	set(pv, S(STATE), ctp_stat_has(&st, 3), (unsigned char)st.w[3].c);

	if ((n = slurp(pid, tid, "status", buf, sizeof(buf))) < 0 ||
	    ctp_parse_status(buf, (size_t)n, &su) < 0)
		return false;
	set(pv, S(NVCSW), su.present & CTP_STATUS_VOLUNTARY_CSW,
	    su.voluntary_csw);
	set(pv, S(NIVCSW), su.present & CTP_STATUS_NONVOLUNTARY_CSW,
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
		set(pv, S(RUN_NS), true, ss.run_ns);
		set(pv, S(RUN_DELAY_NS), true, ss.wait_ns);
		set(pv, S(TIMESLICES), true, ss.timeslices);
	}
	if ((n = slurp(pid, tid, "io", buf, sizeof(buf))) >= 0) {
		if (ctp_parse_io(buf, (size_t)n, &io) < 0)
			return false;
		for (int f = S(RCHAR); f <= S(CANCELLED_WRITE_BYTES); f++) {
			int k = io_key(f);
			set(pv, f, k >= 0 && (io.present >> k) & 1,
			    k >= 0 ? io.v[k] : 0);
		}
	}
	/* procfs-stat's affinity: sched_getaffinity(), CPUs 0-255. */
	__u64 cpus[CTP_BPFTASK_CPU_WORDS];
	bool aff = ctp_bpftask_getaffinity(tid, cpus) == 0;
	for (int w = 0; w < CTP_BPFTASK_CPU_WORDS; w++)
		set(pv, S(CPUS0) + w, aff, cpus[w]);
	/* The reply's delays, where the host measures the family (the
	 * taskstats plugin's gates, which the source follows), and the
	 * high-water marks in bytes. */
	if (ts_fd >= 0 && ts_query(tid, &ts) == 0) {
		for (int f = 0; f < CTP_TS_N_FAMILIES; f++) {
			bool on = f == CTP_TS_CPU ? conv.cpu_delay
						  : conv.delays_on;
			for (int q = 0; q < CTP_TS_N_PARTS; q++) {
				unsigned m = CTP_TS_DELAY(f, q);
				set(pv, S(DELAY0) + m, on && ctp_ts_has(&ts, m),
				    ts.v[m]);
			}
		}
		set(pv, S(HIWATER_RSS), ctp_ts_has(&ts, CTP_TS_HIWATER_RSS),
		    ts.v[CTP_TS_HIWATER_RSS] * 1024);
		set(pv, S(HIWATER_VM), ctp_ts_has(&ts, CTP_TS_HIWATER_VM),
		    ts.v[CTP_TS_HIWATER_VM] * 1024);
	}
	return true;
}

/* cpu_active_mask from this thread's mask before a pass (mask) and
 * after, and its record in the pass. */
static bool active_of(const struct ctp_bpftask_rec *recs, int n,
		      const __u64 *mask, const __u64 *possible, __u64 *active)
{
	__u64 after[CTP_BPFTASK_CPU_WORDS];
	int tid = (int)syscall(SYS_gettid);

	if (ctp_bpftask_getaffinity(0, after) < 0 ||
	    memcmp(mask, after, sizeof(after)))
		return false;
	for (int k = 0; k < n; k++)
		if (recs[k].pid == tid)
			return (recs[k].present & CTP_BPFTASK_HAS_CPUS) &&
			       ctp_bpftask_active_cpus(after, recs[k].cpus,
						       possible, active) == 0;
	return false;
}

/* The source's values for a record, made as the plugin makes them: stat's
 * times from cputime_adjust() against the kernel's prev_cputime (the
 * plugin's own clamp only raises them past a pass that gave more, and
 * this is its first). */
static void from_rec(const struct ctp_bpftask_rec *r, struct proc_vals *bv)
{
	struct ctp_src_task t;
	__u64 pu = r->prev_utime, ps = r->prev_stime;
	memset(bv, 0, sizeof(*bv));
	set(bv, F_TGID, true, (uint64_t)r->tgid);
	bv->has[F_COMM] = true;
	memcpy(bv->comm, r->comm, sizeof(bv->comm));
	ctp_cputime_adjust(r->utime, r->stime, r->sum_exec_runtime, &pu, &ps);
	ctp_bpftask_to_src(r, &conv, ctp_nsec_to_clock_t(pu, conv.user_hz),
			   ctp_nsec_to_clock_t(ps, conv.user_hz), &t);
	for (int k = 0; k < CTP_SRC_TASK_N_VALUES; k++) {
		uint64_t v = 0;
		bool ok = ctp_src_task_get(&t, sizeof(t), (unsigned)k, &v);
		set(bv, F_SRC + k, ok, v);
	}
}

/* The reply's marks (KiB) equal the source's (bytes), both present. */
static bool same_hiwater(const struct ctp_taskstats *ts,
			 const struct proc_vals *b)
{
	return ctp_ts_has(ts, CTP_TS_HIWATER_RSS) &&
	       ctp_ts_has(ts, CTP_TS_HIWATER_VM) && b->has[S(HIWATER_RSS)] &&
	       b->has[S(HIWATER_VM)] &&
	       ts->v[CTP_TS_HIWATER_RSS] * 1024 == b->v[S(HIWATER_RSS)] &&
	       ts->v[CTP_TS_HIWATER_VM] * 1024 == b->v[S(HIWATER_VM)];
}

/* A kernel thread's delays (with or without its task_delay_info) and
 * watermarks (0 and 0) from the pass, as its reply gives them; false with
 * the differences printed. */
static bool kthread_as_reply(const struct ctp_bpftask_rec *q,
			     const struct proc_vals *bq,
			     const struct ctp_taskstats *ts)
{
	bool ok = true;

	for (int f = 1; f < CTP_TS_N_FAMILIES; f++) {
		for (int p = 0; p < CTP_TS_N_PARTS; p++) {
			unsigned m = CTP_TS_DELAY(f, p);
			int x = S(DELAY0) + (int)m;
			bool has = conv.delays_on && ctp_ts_has(ts, m);

			if (has == bq->has[x] && (!has || ts->v[m] == bq->v[x]))
				continue;
			printf("  kthread %d: %s %s%llu reply %s%llu\n", q->pid,
			       fname[x], bq->has[x] ? "" : "(absent) ",
			       (unsigned long long)bq->v[x],
			       has ? "" : "(absent) ",
			       (unsigned long long)ts->v[m]);
			ok = false;
		}
	}
	if (!same_hiwater(ts, bq)) {
		printf("  kthread %d: hiwater %llu %llu, reply %llu %llu KiB\n",
		       q->pid, (unsigned long long)bq->v[S(HIWATER_RSS)],
		       (unsigned long long)bq->v[S(HIWATER_VM)],
		       (unsigned long long)ts->v[CTP_TS_HIWATER_RSS],
		       (unsigned long long)ts->v[CTP_TS_HIWATER_VM]);
		ok = false;
	}
	return ok;
}

static bool same(const struct proc_vals *a, const struct proc_vals *b, int f)
{
	if (a->has[f] != b->has[f])
		return false;
	if (f == F_COMM)
		return !strncmp(a->comm, b->comm, sizeof(a->comm));
	return a->v[f] == b->v[f];
}

/*
 * Which loader loaded b: the one CTP_BPFTASK_LOADER=libbpf or
 * =light-nocast asks for, or without it the light skeleton where it was
 * built and the kernel has what it needs (5.17+), of the program with
 * bpf_rdonly_cast where the kernel has that (6.2+): a light skeleton that
 * failed there is a failure, not a fallback to pass over.
 */
static bool loader_ok(const struct ctp_bpftask *b)
{
	static const char nocast[] =
		"the light skeleton, of the program without bpf_rdonly_cast";
	const char *force = getenv("CTP_BPFTASK_LOADER");
	const char *by = ctp_bpftask_loader(b);
	struct utsname u;
	unsigned maj = 0, min = 0;

	printf("loaded by %s\n", by);
	if (force && !strcmp(force, "libbpf"))
		return !strncmp(by, "libbpf's skeleton", 17);
	if (force && !strcmp(force, "light-nocast"))
		return !strncmp(by, nocast, sizeof(nocast) - 1);
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &maj, &min) != 2 ||
	    maj * 1000 + min < 5017 ||
	    strstr(by, "(the light one: not built: "))
		return true;
	if (maj * 1000 + min < 6002)
		return !strncmp(by, "the light skeleton", 18);
	return !strcmp(by, "the light skeleton");
}

/*
 * A pass whose buffer was first sized for one task (17 records, three
 * pages) over a host of more: the buffer grows under the stream and the
 * pass still holds every record, with this process and the child's
 * threads (the highest tids, at the end of the stream). By iter/task in
 * tid order; by the open-coded pass (walk, where it is loaded: its runs
 * copied in as they come) by process in tgid order.
 */
static bool grown_pass(const int *tids, int n_tids, bool walk)
{
	struct ctp_bpftask *b = NULL;
	const struct ctp_bpftask_rec *recs;
	char why[256];
	bool ok = true;
	int n, seen = 0;

	if (ctp_bpftask_open_flags(&b, walk ? CTP_BPFTASK_OPEN_WALK : 0, why,
				   sizeof(why)) < 0) {
		printf("FAIL: a second load: %s\n", why);
		return false;
	}
	if (walk && !ctp_bpftask_use_walk(b, true)) {
		ctp_bpftask_free(b);
		return true; /* no open-coded pass here */
	}
	ctp_bpftask_use_walk(b, walk);
	ctp_bpftask_expect(b, 1);
	n = ctp_bpftask_pass(b, 256u << 20, &recs);
	printf("a pass %sfrom a buffer for one task: %d records\n",
	       walk ? "by the open-coded iterator " : "", n);
	if (n <= 24) {
		printf("FAIL: %d records, not more than the first buffer's "
		       "24\n",
		       n);
		ok = false;
	}
	for (int k = 0; ok && k < n; k++) {
		if (walk && k > 0 && recs[k].tgid < recs[k - 1].tgid) {
			printf("FAIL: record %d: tgid %d after %d\n", k,
			       recs[k].tgid, recs[k - 1].tgid);
			ok = false;
		}
		if (!walk && k > 0 && recs[k].pid <= recs[k - 1].pid) {
			printf("FAIL: record %d: tid %d after %d\n", k,
			       recs[k].pid, recs[k - 1].pid);
			ok = false;
		}
		if (recs[k].pid == getpid() && recs[k].tgid == getpid())
			seen++;
		for (int i = 0; i < n_tids; i++)
			seen += recs[k].pid == tids[i];
	}
	if (ok && seen != n_tids + 1) {
		printf("FAIL: %d of the %d tasks of this test in the pass\n",
		       seen, n_tids + 1);
		ok = false;
	}
	ctp_bpftask_free(b);
	return ok;
}

/* The mapping of /proc/self/smaps that holds p: its size, its resident
 * bytes and whether its VmFlags has flag (two letters); false when none
 * holds p. A mapping the kernel merged with its neighbour is seen whole. */
static bool mapping_of(const void *p, size_t *size, size_t *rss,
		       const char *flag, bool *has)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false, found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			if (in) {
				*size = hi - lo;
				found = true;
			}
		} else if (in && !strncmp(line, "Rss:", 4)) {
			*rss = 1024 * strtoul(line + 4, NULL, 10);
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			char want[4] = {' ', flag[0], flag[1], '\0'};
			*has = strstr(line, want) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * A pass after ctp_bpftask_expect() for more tasks than the host has
 * (twice loadavg's count and 5,000): its buffer is of the size worked out
 * up front (whole huge pages, ctp_bpftask_buf_size), not grown as the
 * stream came, and its records sit in a mapping at least that long, not in
 * a heap block: for a buffer many passes reuse with the huge-page advice
 * (VmFlags "hg"); for a one-shot capture's without it and resident whole
 * (populated at the mmap, though the pass wrote less than half of it).
 */
static bool sized_pass(bool reused)
{
	struct ctp_bpftask *b = NULL;
	const struct ctp_bpftask_rec *recs;
	char why[256], buf[128];
	size_t tasks = 0, size = 0, rss = 0, want;
	bool hg = false, ok = true;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC), n;
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	if (len <= 0 || ctp_bpftask_loadavg_tasks(buf, (size_t)len, &tasks)) {
		printf("FAIL: /proc/loadavg unread\n");
		return false;
	}
	tasks = 2 * tasks + 5000;
	want = ctp_bpftask_buf_size(ctp_bpftask_buf_want(tasks), 256u << 20);
	if (ctp_bpftask_open(&b, why, sizeof(why)) < 0) {
		printf("FAIL: a second load: %s\n", why);
		return false;
	}
	ctp_bpftask_expect(b, tasks);
	ctp_bpftask_buf_reused(b, reused);
	n = ctp_bpftask_pass(b, 256u << 20, &recs);
	if (n <= 0 || !mapping_of(recs, &size, &rss, "hg", &hg)) {
		printf("FAIL: a pass for %zu tasks expected: %d, its mapping "
		       "not found\n",
		       tasks, n);
		ok = false;
	} else {
		size_t cap = ctp_bpftask_buf_bytes(b);
		printf("a pass (%s) for %zu tasks expected: %d records in a "
		       "buffer of %zu bytes (%zu expected), in a mapping of "
		       "%zu (%zu resident), hg %s\n",
		       reused ? "reused" : "one-shot", tasks, n, cap, want,
		       size, rss, hg ? "yes" : "no");
		/* More tasks than expected: grown, rightly. */
		if ((size_t)n <= tasks && cap != want)
			ok = false;
		if (hg != reused || size < cap || (uintptr_t)recs % 4096)
			ok = false;
		if (!reused && (size_t)n <= tasks && rss < cap)
			ok = false;
		if (!ok)
			printf("FAIL: not the buffer sized up front\n");
	}
	ctp_bpftask_free(b);
	return ok;
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
	enum ctp_delayacct_state da;
	char nohz[64] = "";
	__u64 possible[CTP_BPFTASK_CPU_WORDS] = {0};
	bool fits = false;
	int fd;

	if ((r = bpftask_test_open(&b, 0, why, sizeof(why))))
		return r;
	if (!loader_ok(b)) {
		printf("FAIL: not the loader expected\n");
		ctp_bpftask_free(b);
		return 1;
	}
	name_fields();
	/* The host as the plugin's init and host callback see it. */
	conv.user_hz = (unsigned long)sysconf(_SC_CLK_TCK);
	conv.page_size = (__u64)sysconf(_SC_PAGESIZE);
	fd = open("/sys/devices/system/cpu/nohz_full", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, nohz, sizeof(nohz) - 1);
		close(fd);
	}
	conv.times = !nohz[0] || nohz[0] == '\n' || !strncmp(nohz, "(null)", 6);
	fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ctp_probe_delayacct(fd, &da);
	close(fd);
	conv.delays_on = da == CTP_DELAYACCT_ON;
	conv.cpu_delay = da != CTP_DELAYACCT_CONFIG_OFF;
	fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char list[256];
		ssize_t len = read(fd, list, sizeof(list));
		uint64_t words[CTP_BPFTASK_CPU_WORDS];
		size_t used;
		close(fd);
		while (len > 0 && list[len - 1] == '\n')
			len--;
		fits = len > 0 &&
		       ctp_parse_cpulist(list, (size_t)len, words,
					 CTP_BPFTASK_CPU_WORDS, &used) > 0;
		for (int w = 0; fits && w < CTP_BPFTASK_CPU_WORDS; w++)
			possible[w] = words[w];
	}
	printf("possible CPUs %s 256: the affinity %s\n",
	       fits ? "below" : "not all below",
	       fits ? "compared" : "not offered");
	printf("host: USER_HZ %lu, delay accounting %s, utime/stime %s\n",
	       conv.user_hz, ctp_delayacct_state_name(da),
	       conv.times ? "offered" : "not offered (nohz_full)");
	if ((r = ts_open()) < 0)
		printf("no taskstats (%s): delays and hiwater not compared\n",
		       strerror(-r));

	pid_t child = spawn();
	if (child < 0) {
		printf("FAIL: could not start the sleeping child\n");
		goto out;
	}
	n_tids = test_list_tids(child, tids, MAX_TASKS);
	if (n_tids != N_THREADS + 1) {
		printf("FAIL: the child has %d threads, expected %d\n", n_tids,
		       N_THREADS + 1);
		goto out;
	}
	/* One pass, then the files and replies twice: the pass is compared
	 * with values that did not move after it (the run time it read is
	 * the one schedstat shows, and nothing changed between the two
	 * reads). The pass comes first so that no stat read has updated
	 * prev_cputime before it. A thread that has not yet reached its
	 * read() moves: try again (bounded). */
	for (int attempt = 0;; attempt++) {
		bool stable = true;
		__u64 mask[CTP_BPFTASK_CPU_WORDS];
		int pre = ctp_bpftask_getaffinity(0, mask);
		r = ctp_bpftask_pass(b, 256u << 20, &recs);
		if (r < 0) {
			printf("FAIL: pass: %s\n", strerror(-r));
			goto out;
		}
		/* cpu_active_mask as the plugin works it out (bpf_task.c
		 * active_cpus()). */
		conv.cpus_on = fits && pre == 0 &&
			       active_of(recs, r, mask, possible, conv.active);
		for (int i = 0; i < n_tids; i++)
			if (!read_proc(child, tids[i], &before[i]))
				stable = false;
		for (int i = 0; i < n_tids; i++) {
			if (!read_proc(child, tids[i], &after[i]) ||
			    !all_same(&before[i], &after[i]))
				stable = false;
			for (int k = 0; k < r; k++)
				if (recs[k].pid == tids[i] &&
				    recs[k].sum_exec_runtime !=
					    before[i].v[S(RUN_NS)])
					stable = false;
		}
		if (stable) {
			printf("stable at attempt %d\n", attempt);
			break;
		}
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
	if (fits && !conv.cpus_on) {
		printf("FAIL: no cpu_active_mask from this thread's mask\n");
		rc = 1;
	}
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
		if (ts_fd < 0 && f >= S(DELAY0)) {
			printf("%s: not compared (no taskstats)\n", fname[f]);
			continue;
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
	/* Kernel threads: their state letters, idle ones ('I', TASK_IDLE)
	 * among them, and no mm (hiwater 0 and 0, as taskstats' get_task_mm()
	 * gives none), delays as their reply (0 without task_delay_info). A
	 * kthread that ran since the pass (schedstat moved) or whose state
	 * changed between two reads is not compared. */
	{
		int kt = 0, keq = 0, kidle = 0, kmoved = 0, kts_n = 0;
		int kcpus = 0, kcpus_off = 0;
		struct ctp_taskstats kts;
		for (int k = 0; k < n_recs; k++) {
			const struct ctp_bpftask_rec *q = &recs[k];
			struct proc_vals p1, p2, bq;
			if (!(q->flags & CTP_PF_KTHREAD))
				continue;
			if (!read_proc(q->tgid, q->pid, &p1) ||
			    !read_proc(q->tgid, q->pid, &p2) ||
			    p1.v[S(STATE)] != p2.v[S(STATE)] ||
			    p1.v[S(RUN_NS)] != q->sum_exec_runtime) {
				kmoved++;
				continue;
			}
			from_rec(q, &bq);
			/* Woken since the pass and not yet run (a busy host):
			 * runnable in both reads, its run time unmoved. */
			if (p1.v[S(STATE)] == 'R' && bq.v[S(STATE)] != 'R') {
				kmoved++;
				continue;
			}
			kt++;
			/* Offered as 0 and 0, what the reply says. */
			if (!bq.has[S(HIWATER_RSS)] || !bq.has[S(HIWATER_VM)] ||
			    bq.v[S(HIWATER_RSS)] || bq.v[S(HIWATER_VM)]) {
				printf("  kthread %d: hiwater not 0 and 0\n",
				       q->pid);
				rc = 1;
			}
			if (ts_fd >= 0 && ts_query(q->pid, &kts) == 0) {
				kts_n++;
				if (!kthread_as_reply(q, &bq, &kts))
					rc = 1;
			}
			/* Their masks (some every CPU the kernel has room
			 * for) and'ed with cpu_active_mask as the call does. */
			for (int w = 0; w < CTP_BPFTASK_CPU_WORDS; w++) {
				int x = S(CPUS0) + w;
				kcpus += w == 0;
				if (!same(&p1, &bq, x)) {
					printf("  kthread %d: %s %llu, call "
					       "%llu\n",
					       q->pid, fname[x],
					       (unsigned long long)bq.v[x],
					       (unsigned long long)p1.v[x]);
					kcpus_off += w == 0;
				}
			}
			if (same(&p1, &bq, S(STATE))) {
				keq++;
				kidle += bq.v[S(STATE)] == 'I';
			} else {
				printf("  kthread %d (%.16s): state %c procfs "
				       "%c\n",
				       q->pid, q->comm, (char)bq.v[S(STATE)],
				       (char)p1.v[S(STATE)]);
			}
		}
		printf("kernel threads, state (stat 3): %d of %d equal (%d "
		       "'I'; %d moved, not compared)\n",
		       keq, kt, kidle, kmoved);
		printf("kernel threads, hiwater (0 and 0) and delays as the "
		       "reply says: %d queried\n",
		       kts_n);
		printf("kernel threads, affinity (sched_getaffinity): %d of %d "
		       "equal\n",
		       kcpus - kcpus_off, kcpus);
		if (keq != kt || kidle == 0 || kcpus_off)
			rc = 1;
	}
	/* The child's "process" values from the same pass: taken before any
	 * read of its <pid>/stat, so against a signal->prev_cputime that no
	 * /proc read brought up to date. */
	if (compare_process(recs, n_recs, child))
		rc = 1;
	/* A pass over the child's threads alone (6.1+: the iterator's pid
	 * parameter): its N_THREADS + 1 records, one process. */
	r = ctp_bpftask_pass_pid(b, child, 256u << 20, &recs);
	if (r != N_THREADS + 1) {
		printf("FAIL: a pass over the child returned %d\n", r);
		rc = 1;
	}
	for (int k = 0; k < r; k++)
		if (recs[k].tgid != child) {
			printf("FAIL: a pass over the child has task %d\n",
			       recs[k].pid);
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
	/* A pass over one task (6.1+: the iterator's tid parameter): that
	 * task alone. */
	r = ctp_bpftask_pass_tid(b, (int)syscall(SYS_gettid), &recs);
	if (r != 1 || recs[0].pid != (int)syscall(SYS_gettid) ||
	    recs[0].tgid != getpid()) {
		printf("FAIL: a pass over this thread returned %d\n", r);
		rc = 1;
	}
	if (!grown_pass(tids, n_tids, false) ||
	    !grown_pass(tids, n_tids, true) || !sized_pass(false) ||
	    !sized_pass(true))
		rc = 1;
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	ctp_bpftask_free(b);
	if (ts_fd >= 0)
		close(ts_fd);
	return rc;
}
#endif
