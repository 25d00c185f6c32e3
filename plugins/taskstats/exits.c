/* SPDX-License-Identifier: MIT */
/* The taskstats exit listener and exited table; see exits.h. */
#include "exits.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "ctprof/plugin-util.h"
#include "exits_bpf.h"
#ifdef CTP_TS_BPF_EXITS
#include "bpfexit.h"
#endif

/* ---- What a row keeps ------------------------------------------------------
 *
 * Entry i of kept[] is field i of xfields[]: the 32 delay members first, in
 * CTP_TS_DELAY order, then the rest.
 */

#define N_DELAY (CTP_TS_N_FAMILIES * CTP_TS_N_PARTS)

/* The members kept past the delays, one line each: R(member of the reply,
 * its field), the field named by X() and XIO() below. */
#define X(f) "taskstats.exited." f
/* The I/O counters: xacct_add_tsk() rounds each down to 1 KiB (KB_MASK),
 * the system call counts too; the BPF exit record has them exact. */
#define XIO(f, un, hlp)                                                        \
	CTP_FIELD_ROLE(X(f), EXITED, U64, un, COUNTER, SUM,                    \
		       CTP_FIELD_KIB_STEP,                                     \
		       hlp ", rounded down to a multiple of 1024 (KB_MASK)")
#define XIO_EXACT(f, un, hlp)                                                  \
	CTP_FIELD_COUNTER(X(f), EXITED, un, hlp " (exact: BPF exit record)")
#define XREST_FIELDS(R, XIO)                                                   \
	R(CTP_TS_UTIME,                                                        \
	  CTP_FIELD_COUNTER(X("utime"), EXITED, US,                            \
			    "User CPU time of an exited thread, us: its run "  \
			    "time split as ac_utime:ac_stime, as getrusage() " \
			    "does"))                                           \
	R(CTP_TS_STIME,                                                        \
	  CTP_FIELD_COUNTER(X("stime"), EXITED, US,                            \
			    "System CPU time of an exited thread, us: its "    \
			    "run time split as ac_utime:ac_stime, as "         \
			    "getrusage() does"))                               \
	R(CTP_TS_MINFLT, CTP_FIELD_COUNTER(X("minflt"), EXITED, COUNT,         \
					   "Minor page faults of an exited "   \
					   "thread"))                          \
	R(CTP_TS_MAJFLT, CTP_FIELD_COUNTER(X("majflt"), EXITED, COUNT,         \
					   "Major page faults of an exited "   \
					   "thread"))                          \
	R(CTP_TS_NVCSW, CTP_FIELD_COUNTER(X("nvcsw"), EXITED, COUNT,           \
					  "Voluntary context switches of an "  \
					  "exited thread"))                    \
	R(CTP_TS_NIVCSW, CTP_FIELD_COUNTER(X("nivcsw"), EXITED, COUNT,         \
					   "Involuntary context switches of "  \
					   "an exited thread"))                \
	R(CTP_TS_READ_BYTES, XIO("read_bytes", BYTES,                          \
				 "Bytes an exited thread caused to be read "   \
				 "from storage"))                              \
	R(CTP_TS_WRITE_BYTES, XIO("write_bytes", BYTES,                        \
				  "Bytes an exited thread caused to be "       \
				  "written to storage"))                       \
	R(CTP_TS_CANCELLED_WRITE_BYTES,                                        \
	  XIO("cancelled_write_bytes", BYTES,                                  \
	      "Bytes of an exited thread's writes cancelled before reaching "  \
	      "storage (truncated dirty pages)"))                              \
	R(CTP_TS_READ_CHAR, XIO("rchar", BYTES,                                \
				"Bytes an exited thread read with read-like "  \
				"system calls"))                               \
	R(CTP_TS_WRITE_CHAR, XIO("wchar", BYTES,                               \
				 "Bytes an exited thread wrote with "          \
				 "write-like system calls"))                   \
	R(CTP_TS_READ_SYSCALLS,                                                \
	  XIO("syscr", COUNT, "Read-like system calls of an exited thread"))   \
	R(CTP_TS_WRITE_SYSCALLS,                                               \
	  XIO("syscw", COUNT, "Write-like system calls of an exited thread"))  \
	R(CTP_TS_HIWATER_RSS,                                                  \
	  CTP_FIELD_PEAK(X("hiwater_rss"), EXITED, BYTES,                      \
			 "Lifetime peak resident set of the exited thread's "  \
			 "process, bytes"))                                    \
	R(CTP_TS_HIWATER_VM,                                                   \
	  CTP_FIELD_PEAK(X("hiwater_vm"), EXITED, BYTES,                       \
			 "Lifetime peak virtual memory of the exited "         \
			 "thread's process, bytes"))                           \
	R(CTP_TS_ETIME,                                                        \
	  CTP_FIELD_ROLE(X("elapsed"), EXITED, U64, US, PEAK, MAX,             \
			 CTP_FIELD_ELAPSED,                                    \
			 "Wall time from the thread's start to its exit, us "  \
			 "(taskstats ac_etime)"))                              \
	R(CTP_TS_PPID,                                                         \
	  CTP_FIELD_ROLE(X("ppid"), EXITED, U64, NONE, CATEGORICAL, MODE,      \
			 CTP_FIELD_PARENT,                                     \
			 "Process id of the exited thread's parent when it "   \
			 "exited (taskstats ac_ppid)"))                        \
	R(CTP_TS_EXITCODE,                                                     \
	  CTP_FIELD(X("exit_code"), EXITED, U64, NONE, CATEGORICAL, MODE,      \
		    "Exit status as wait() reports it (taskstats "             \
		    "ac_exitcode): code << 8, or the signal"))

#define REST_MEMBER(m, desc) m,
#define REST_DESC(m, desc)   desc,
static const uint8_t kept_rest[] = {XREST_FIELDS(REST_MEMBER, XIO)};
/* utime and stime, adjusted together: the first two of the rest. */
#define X_UTIME N_DELAY
#define X_STIME (N_DELAY + 1)

#define N_KEPT (N_DELAY + sizeof(kept_rest))
_Static_assert(N_KEPT <= 64, "presence is one 64-bit word");

static unsigned kept(size_t i)
{
	return i < N_DELAY ? (unsigned)i : kept_rest[i - N_DELAY];
}

#define XFAMILY(fam, f, what)                                                  \
	[CTP_TS_DELAY(fam,                                                     \
		      CTP_TS_COUNT)] =                                         \
		CTP_FIELD_COUNTER(X(f "_count"), EXITED, COUNT,                \
				  "Windows an exited thread spent " what),     \
		      [CTP_TS_DELAY(fam, CTP_TS_TOTAL)] = CTP_FIELD_COUNTER(   \
			      X(f "_delay_total"), EXITED, NS,                 \
			      "Time an exited thread spent " what ", ns"),     \
		      [CTP_TS_DELAY(fam, CTP_TS_MAX)] = CTP_FIELD_PEAK(        \
			      X(f "_delay_max"), EXITED, NS,                   \
			      "Longest window an exited thread spent " what    \
			      ", ns"),                                         \
		      [CTP_TS_DELAY(fam, CTP_TS_MIN)] = CTP_FIELD_PEAK(        \
			      X(f "_delay_min"), EXITED, NS,                   \
			      "Shortest window an exited thread spent " what   \
			      ", ns; absent without windows")
#define XTABLE(XIO)                                                            \
	{                                                                      \
		XFAMILY(CTP_TS_CPU, "cpu", "runnable, waiting for a CPU"),     \
			XFAMILY(CTP_TS_BLKIO, "blkio",                         \
				"waiting for synchronous block I/O"),          \
			XFAMILY(CTP_TS_SWAPIN, "swapin",                       \
				"waiting for swap-in"),                        \
			XFAMILY(CTP_TS_FREEPAGES, "freepages",                 \
				"in direct memory reclaim"),                   \
			XFAMILY(CTP_TS_THRASHING, "thrashing",                 \
				"waiting on thrashing pages"),                 \
			XFAMILY(CTP_TS_COMPACT, "compact",                     \
				"in memory compaction"),                       \
			XFAMILY(CTP_TS_WPCOPY, "wpcopy",                       \
				"copying write-protected pages"),              \
			XFAMILY(CTP_TS_IRQ, "irq",                             \
				"in IRQ/softirq work charged to it"),          \
			XREST_FIELDS(REST_DESC, XIO)                           \
	}
/* From exit notifications, and from the BPF exit program (exact I/O). */
static const struct ctp_field_desc xfields[N_KEPT] = XTABLE(XIO);
static const struct ctp_field_desc xfields_bpf[N_KEPT] = XTABLE(XIO_EXACT);

/* Only with the BPF exit program: how many threads a row stands for (1,
 * or a process's total of those the ring had no room for), and the
 * cgroup the thread was in when it exited. */
static const struct ctp_field_desc xthreads = CTP_FIELD_COUNTER(
	X("threads"), EXITED, COUNT,
	"Exited threads the row stands for: 1, or (tid 0) the number whose "
	"sums the BPF exit program kept per process when its ring was full");
static const struct ctp_field_desc xcgroup = CTP_FIELD_ROLE(
	X("cgroup"), EXITED, STRING, NONE, CATEGORICAL, MODE, CTP_FIELD_CGROUP,
	"cgroup v2 path of the exited thread when it exited (absent when the "
	"cgroup was removed before the snapshot)");

/* Readers' total of the families, as for threads (taskstats.c). */
#define XTERM(f, set)                                                          \
	{                                                                      \
		.field = X(f "_delay_total"), .coef = 1, .max_set = (set)      \
	}
static const struct ctp_derived_desc xoffcpu = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_derived_desc),
	.field = CTP_FIELD_COUNTER(X("offcpu_delay_total"), EXITED, NS,
				   "Delay of an exited thread in all "
				   "families, ns: cpu + blkio + freepages + "
				   "compact + wpcopy + irq + max(swapin, "
				   "thrashing)"),
	.n_terms = 8,
	.terms = {XTERM("cpu", 0), XTERM("blkio", 0), XTERM("freepages", 0),
		  XTERM("compact", 0), XTERM("wpcopy", 0), XTERM("irq", 0),
		  XTERM("swapin", 1), XTERM("thrashing", 1)},
};
static const struct ctp_derived_desc xoffcpu_noirq = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_derived_desc),
	.field = CTP_FIELD_COUNTER(X("offcpu_delay_total"), EXITED, NS,
				   "Delay of an exited thread in all "
				   "families, ns: cpu + blkio + freepages + "
				   "compact + wpcopy + max(swapin, thrashing) "
				   "(no irq: not measured here)"),
	.n_terms = 7,
	.terms = {XTERM("cpu", 0), XTERM("blkio", 0), XTERM("freepages", 0),
		  XTERM("compact", 0), XTERM("wpcopy", 0), XTERM("swapin", 1),
		  XTERM("thrashing", 1)},
};

/* Summary counters, registered when the listener starts. */
enum {
	C_EXITS,   /* rows added */
	C_LOST,	   /* exits missed: a full ring, a socket overrun, a row
		      refused */
	C_PROCESS, /* per-process aggregates skipped */
	C_BAD,	   /* notifications that did not parse */
	/* The BPF exit program's only: */
	C_MERGED,    /* exits whose detail the full ring lost, sums kept */
	C_NO_CGROUP, /* exits whose cgroup id had no path */
	N_XCOUNTERS
};
#define N_NL_COUNTERS C_MERGED
static const char *const xcounter_names[N_XCOUNTERS] = {
	[C_EXITS] = "exits",	       [C_LOST] = "exits_lost",
	[C_PROCESS] = "exits_process", [C_BAD] = "exits_bad",
	[C_MERGED] = "exits_merged",   [C_NO_CGROUP] = "exits_no_cgroup",
};

/* ---- The ring ---------------------------------------------------------------
 */

struct xrec {
	uint32_t tid, tgid; /* tgid 0: unknown */
	uint32_t threads;   /* BPF rows: threads it stands for */
	const char *cgroup; /* BPF rows: the path, NULL: unknown */
	uint64_t exit_ns;   /* CLOCK_BOOTTIME when received */
	uint64_t present;   /* bit i: v[i], member kept(i), was measured */
	uint64_t v[N_KEPT];
	char comm[CTP_TS_COMM_LEN + 1]; /* "" when the record had none */
};

struct ctp_ts_exits {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	struct ctp_ts_exits_cfg cfg;
	struct mnl_socket *nl;
	int fd, stop_fd;
	pthread_t thread;
	bool registered, running;
	int fh[N_KEPT];
	int ch[N_XCOUNTERS];

	pthread_mutex_t lock; /* guards head and count */
	struct xrec *ring;
	size_t head, count;

	/* Counted by the listener, reported (and reset) by the drain. */
	_Atomic uint64_t full, process, bad, overruns;
	_Atomic int thread_err; /* why the listener stopped, 0 while it runs */
	uint32_t drops;		/* SO_MEMINFO drops at the last drain */
	bool meminfo;		/* SO_MEMINFO counts the socket's drops */

	/* The BPF exit program instead of the socket (exits_bpf.h), and its
	 * counts at the last drain. */
	struct ctp_bpfexit *bpf;
	int fh_threads, fh_cgroup;
	struct ctp_ts_cgids cgids;
	bool cgids_fresh; /* walked in this drain already */
	uint64_t folded, lost_sums;
	uint64_t d_added, d_refused, d_no_cgroup; /* this drain's */
};

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One exit as a ring record: the measured members, utime and stime split
 * from the run time where the record has it. */
static void make_xrec(struct ctp_ts_exits *x, const struct ctp_ts_exit *e,
		      uint64_t now, struct xrec *out)
{
	const struct ctp_taskstats *ts = &e->ts;
	struct xrec r = {.tid = ts->pid, .exit_ns = now, .threads = 1};

	if (e->has_tgid)
		atomic_fetch_add(&x->process, 1);
	r.tgid = ctp_ts_has(ts, CTP_TS_TGID) ? (uint32_t)ts->v[CTP_TS_TGID]
		 : e->has_tgid		     ? e->tgid
					     : 0;
	for (size_t i = 0; i < N_KEPT; i++) {
		unsigned m = kept(i);

		if (!ctp_ts_measured(&x->cfg.gates, ts, m))
			continue;
		r.present |= 1ull << i;
		r.v[i] = m == CTP_TS_HIWATER_RSS || m == CTP_TS_HIWATER_VM
				 ? ctp_ts_kib_bytes(ts->v[m])
				 : ts->v[m];
	}
	/* As /proc and getrusage() give live tasks' times: the exact run
	 * time split by the samples (taskstats_reply.h). */
	if (x->cfg.gates.cpu_delay && ctp_ts_has(ts, CTP_TS_CPU_RUN_VIRTUAL) &&
	    (r.present >> X_UTIME & 1) && (r.present >> X_STIME & 1))
		ctp_ts_cputime_adjust(ts->v[CTP_TS_CPU_RUN_VIRTUAL],
				      &r.v[X_UTIME], &r.v[X_STIME]);
	if (ctp_ts_has(ts, CTP_TS_COMM))
		memcpy(r.comm, ts->comm, sizeof(r.comm));
	*out = r;
}

/* One notification into the ring, or counted. */
static void record(struct ctp_ts_exits *x, const struct ctp_ts_exit *e,
		   uint64_t now)
{
	struct xrec r;

	make_xrec(x, e, now, &r);
	pthread_mutex_lock(&x->lock);
	if (x->count == x->cfg.cap) {
		atomic_fetch_add(&x->full, 1);
	} else {
		x->ring[(x->head + x->count) % x->cfg.cap] = r;
		x->count++;
	}
	pthread_mutex_unlock(&x->lock);
}

/* ---- The socket
 * ---------------------------------------------------------------
 */

/* One datagram from the socket, without blocking: its length, or a
 * negative errno (-EAGAIN when none is queued). Anything not from the
 * kernel is skipped. */
static ssize_t recv_one(int fd, void *buf, size_t cap)
{
	for (;;) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, cap, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &flen);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (flen >= sizeof(from) && from.nl_pid == 0)
			return n;
	}
}

/* One received datagram: an exit into the ring, or counted as bad. */
static void take(struct ctp_ts_exits *x, const void *buf, ssize_t n, size_t cap)
{
	struct ctp_ts_exit e;

	if ((size_t)n > cap ||
	    ctp_ts_parse_exit(buf, (size_t)n, x->cfg.family, &e) < 0)
		atomic_fetch_add(&x->bad, 1);
	else
		record(x, &e, boottime_ns());
}

#define DGRAM 16384

static void *listen_main(void *arg)
{
	struct ctp_ts_exits *x = arg;
	char buf[DGRAM] __attribute__((aligned(8)));
	struct pollfd p[2] = {{.fd = x->fd, .events = POLLIN},
			      {.fd = x->stop_fd, .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			atomic_store(&x->thread_err, -errno);
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		for (;;) {
			ssize_t n = recv_one(x->fd, buf, sizeof(buf));

			/* The kernel dropped notifications: SO_MEMINFO
			 * says how many; go on with what is queued. */
			if (n == -ENOBUFS) {
				atomic_fetch_add(&x->overruns, 1);
				continue;
			}
			if (n == -EAGAIN)
				break;
			if (n < 0) {
				atomic_store(&x->thread_err, (int)n);
				return NULL;
			}
			take(x, buf, n, sizeof(buf));
		}
	}
}

/* The drops the kernel counted on the socket (SO_MEMINFO), true when it
 * tells. */
static bool sock_drops(int fd, uint32_t *drops)
{
	uint32_t mi[SK_MEMINFO_VARS] = {0};
	socklen_t len = sizeof(mi);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0 ||
	    len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
		return false;
	*drops = mi[SK_MEMINFO_DROPS];
	return true;
}

/* "0-N": the possible CPUs, so CPUs brought online later are covered. */
static void possible_cpus(int sys_fd, char *out, size_t cap)
{
	size_t len = 0;
	long n;

	if (sys_fd >= 0 && ctp_read_small(sys_fd, "devices/system/cpu/possible",
					  out, cap, &len) == 0) {
		while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
			len--;
		if (ctp_ts_cpulist_ok(out, len)) {
			out[len] = '\0';
			return;
		}
	}
	n = sysconf(_SC_NPROCESSORS_CONF);
	if (n > 1)
		snprintf(out, cap, "0-%ld", n - 1);
	else
		snprintf(out, cap, "0");
}

/*
 * Ask the kernel to send this socket every exit on the CPUs of `cpus`, and
 * wait for its answer (given inside sendmsg, so already queued when send
 * returns). Exits may come before the ack: they go to the ring.
 */
static int register_cpus(struct ctp_ts_exits *x, const char *cpus,
			 bool deregister)
{
	static _Atomic uint32_t seq = 1;
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	char buf[DGRAM] __attribute__((aligned(8)));
	uint32_t s = atomic_fetch_add(&seq, 1);
	size_t len = ctp_ts_put_register(buf, sizeof(buf), x->cfg.family, s,
					 cpus, deregister);

	if (!len)
		return -E2BIG;
	if (sendto(x->fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	for (int tries = 0; tries < 4096; tries++) {
		ssize_t n = recv_one(x->fd, buf, sizeof(buf));
		int r;

		if (n == -ENOBUFS)
			continue;
		if (n < 0)
			return n == -EAGAIN ? -ETIMEDOUT : (int)n;
		r = ctp_nl_parse_ack(buf, (size_t)n, s);
		if (r != -EBADMSG && r != -EXDEV)
			return r;
		if (!deregister)
			take(x, buf, n, sizeof(buf));
	}
	return -ETIMEDOUT;
}

/* The listener's socket, with room for bursts of exits. */
static int open_listener(struct ctp_ts_exits *x)
{
	int big = 32 << 20;

	x->nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!x->nl)
		return -errno;
	if (mnl_socket_bind(x->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	x->fd = mnl_socket_get_fd(x->nl);
	/* CAP_NET_ADMIN, which listening needs anyway, lifts rmem_max. */
	if (setsockopt(x->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) <
	    0)
		setsockopt(x->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	x->meminfo = sock_drops(x->fd, &x->drops);
	x->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return x->stop_fd < 0 ? -errno : 0;
}

/* ---- Start, drain, stop
 * -------------------------------------------------------
 */

/* The exited fields, their derived total and the counters. */
static int register_fields(struct ctp_ts_exits *x)
{
	const struct ctp_api *api = x->api;

	const struct ctp_field_desc *t = x->bpf ? xfields_bpf : xfields;

	for (size_t i = 0; i < N_KEPT; i++) {
		x->fh[i] = api->field_register(x->ctx, &t[i]);
		if (x->fh[i] < 0)
			return x->fh[i];
	}
	x->fh_threads = x->fh_cgroup = -1;
	if (x->bpf) {
		x->fh_threads = api->field_register(x->ctx, &xthreads);
		x->fh_cgroup = api->field_register(x->ctx, &xcgroup);
		if (x->fh_threads < 0 || x->fh_cgroup < 0)
			return x->fh_threads < 0 ? x->fh_threads : x->fh_cgroup;
	}
	if (CTP_API_HAS(api, derived_register))
		api->derived_register(
			x->ctx, x->cfg.gates.irq ? &xoffcpu : &xoffcpu_noirq);
	for (int c = 0; c < (x->bpf ? N_XCOUNTERS : N_NL_COUNTERS); c++) {
		x->ch[c] = api->summary_register(x->ctx, xcounter_names[c]);
		if (x->ch[c] < 0)
			return x->ch[c];
	}
	return 0;
}

void ctp_ts_exits_stop(struct ctp_ts_exits *x)
{
	char cpus[CTP_TS_CPULIST_MAX];

	if (!x)
		return;
	if (x->running) {
		uint64_t one = 1;

		if (write(x->stop_fd, &one, sizeof(one)) < 0)
			pthread_cancel(x->thread);
		pthread_join(x->thread, NULL);
	}
	if (x->registered) {
		/* Dropping the socket drops the listener only when an exit
		 * next finds it gone; say so now. */
		possible_cpus(x->cfg.sys_fd, cpus, sizeof(cpus));
		register_cpus(x, cpus, true);
	}
	if (x->nl)
		mnl_socket_close(x->nl);
#ifdef CTP_TS_BPF_EXITS
	ctp_bpfexit_free(x->bpf);
#endif
	ctp_ts_cgids_free(&x->cgids);
	if (x->stop_fd >= 0)
		close(x->stop_fd);
	pthread_mutex_destroy(&x->lock);
	free(x->ring);
	free(x);
}

static const char *start_why(int r)
{
	switch (r) {
	case -EPERM:
		return "registering for exit notifications failed with EPERM: "
		       "run as root or grant CAP_NET_ADMIN";
	case -EINVAL:
		return "the kernel refused the exit listener (EINVAL): "
		       "ctprof-core must run in the initial pid and user "
		       "namespace";
	default:
		return NULL;
	}
}

/* The BPF exit program, where it was built and loads: 0, or a negative
 * errno with why. */
static int start_bpf(struct ctp_ts_exits *x, char *why, size_t whylen)
{
#ifdef CTP_TS_BPF_EXITS
	struct ctp_bpfexit_opts o = {.ring_bytes = x->cfg.ring_bytes};
	char step[160];
	int r;

	/* Its ids are the initial pid namespace's, the rows' the proc
	 * root's, which is ours (a live root): the same only when ours is
	 * the initial one. */
	if (ctp_proc_ns_initial(x->cfg.proc_fd, "pid") != 1) {
		snprintf(why, whylen,
			 "the BPF exit program: not in the initial pid "
			 "namespace: its ids would not be /proc's");
		return -EXDEV;
	}
	r = ctp_bpfexit_open(&o, &x->bpf, step, sizeof(step));

	if (r < 0)
		snprintf(why, whylen, "the BPF exit program: %s", step);
	return r;
#else
	(void)x;
	snprintf(why, whylen, "the BPF exit program was not built");
	return -ENOTSUP;
#endif
}

int ctp_ts_exits_start(struct ctp_ctx *ctx, const struct ctp_api *api,
		       const struct ctp_ts_exits_cfg *cfg,
		       struct ctp_ts_exits **ret, char *why, size_t whylen)
{
	struct ctp_ts_exits *x = calloc(1, sizeof(*x));
	char cpus[CTP_TS_CPULIST_MAX], bwhy[192] = "";
	int r = -ENOTSUP;

	if (!x) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	x->ctx = ctx;
	x->api = api;
	x->cfg = *cfg;
	x->fd = x->stop_fd = -1;
	pthread_mutex_init(&x->lock, NULL);
	/* The BPF program first: it holds a thread's whole run and exact
	 * I/O, and a full ring keeps the sums. */
	if (cfg->source != CTP_TS_EXITS_NETLINK &&
	    (r = start_bpf(x, bwhy, sizeof(bwhy))) == 0) {
		r = register_fields(x);
		if (r < 0)
			snprintf(why, whylen, "its fields were refused: %s",
				 strerror(-r));
		else
			api->log(ctx, CTP_LOG_INFO,
				 "exited tasks from the BPF exit program");
		goto out;
	}
	if (cfg->source == CTP_TS_EXITS_BPF || !cfg->family) {
		snprintf(why, whylen, "%s",
			 bwhy[0] ? bwhy : "no TASKSTATS genetlink family");
		goto out;
	}
	if (bwhy[0])
		api->log(ctx, CTP_LOG_INFO,
			 "%s; exited tasks from taskstats exit notifications",
			 bwhy);
	x->ring = calloc(cfg->cap, sizeof(*x->ring));
	r = x->ring ? open_listener(x) : -ENOMEM;
	if (r == 0) {
		possible_cpus(cfg->sys_fd, cpus, sizeof(cpus));
		r = register_cpus(x, cpus, false);
		x->registered = r == 0;
	}
	if (r < 0 && start_why(r))
		snprintf(why, whylen, "%s", start_why(r));
	else if (r < 0)
		snprintf(why, whylen, "the exit listener failed: %s",
			 strerror(-r));
	if (r == 0 && (r = register_fields(x)) < 0)
		snprintf(why, whylen, "its fields were refused: %s",
			 strerror(-r));
	if (r == 0 &&
	    (r = -pthread_create(&x->thread, NULL, listen_main, x)) < 0)
		snprintf(why, whylen, "no listener thread: %s", strerror(-r));
	if (r == 0)
		x->running = true;
out:
	if (r < 0) {
		ctp_ts_exits_stop(x);
		return r;
	}
	*ret = x;
	return 0;
}

bool ctp_ts_exits_bpf(const struct ctp_ts_exits *x)
{
	return x && x->bpf;
}

/* One ring record as an exited row; false when the core refused it. */
static bool add_row(struct ctp_ts_exits *x, const struct xrec *r)
{
	const struct ctp_api *api = x->api;
	struct ctp_record *rec;

	if (api->exited_begin(x->ctx, r->tid, r->tgid, r->comm, strlen(r->comm),
			      r->exit_ns, &rec) < 0)
		return false;
	/* A refused value is a bug of the table above, not of the row. */
	struct ctp_setter set = CTP_SETTER(api, rec);
	for (size_t i = 0; i < N_KEPT; i++)
		if (r->present >> i & 1)
			ctp_set_u64(&set, x->fh[i], r->v[i]);
	if (x->fh_threads >= 0)
		ctp_set_u64(&set, x->fh_threads, r->threads);
	if (x->fh_cgroup >= 0 && r->cgroup)
		ctp_set_str(&set, x->fh_cgroup, r->cgroup, strlen(r->cgroup));
	api->exited_end(rec);
	return true;
}

/* Notifications the socket dropped since the last drain. */
static uint64_t dropped(struct ctp_ts_exits *x)
{
	uint64_t over = atomic_exchange(&x->overruns, 0);
	uint32_t now;

	/* ENOBUFS says only that some were; SO_MEMINFO how many. */
	if (!x->meminfo || !sock_drops(x->fd, &now))
		return over;
	over = (uint32_t)(now - x->drops);
	x->drops = now;
	return over;
}

#ifdef CTP_TS_BPF_EXITS
/* The path of a cgroup id: the mount walked again (once a drain) for an
 * id not known yet, a cgroup made since the last walk. */
static const char *cgroup_path(struct ctp_ts_exits *x, bool has, uint64_t id)
{
	const char *p;

	if (!has)
		return NULL;
	p = ctp_ts_cgids_find(&x->cgids, id);
	if (!p && !x->cgids_fresh && x->cfg.cgroup_fd >= 0) {
		x->cgids_fresh = true;
		ctp_ts_cgids_build(&x->cgids, x->cfg.cgroup_fd);
		p = ctp_ts_cgids_find(&x->cgids, id);
	}
	x->d_no_cgroup += !p;
	return p;
}

static void bpf_row(struct ctp_ts_exits *x, const struct ctp_ts_exit *e,
		    uint64_t exit_ns, uint32_t threads, const char *cgroup)
{
	struct xrec r;

	make_xrec(x, e, exit_ns, &r);
	r.threads = threads;
	r.cgroup = cgroup;
	if (add_row(x, &r))
		x->d_added++;
	else
		x->d_refused += threads;
}

static void on_bpf_rec(void *arg, const struct ctp_bpfexit_rec *b)
{
	struct ctp_ts_exits *x = arg;
	struct ctp_ts_exit e;

	ctp_ts_exit_from_bpf(b, &e);
	bpf_row(x, &e, b->exit_boottime, 1,
		cgroup_path(x, b->present & CTP_BPFEXIT_HAS_CGROUP,
			    b->cgroup_id));
}

static void on_bpf_sum(void *arg, uint32_t tgid,
		       const struct ctp_bpfexit_sum *s)
{
	struct ctp_ts_exits *x = arg;
	struct ctp_ts_exit e;

	ctp_ts_exit_from_bpfsum(tgid, s, &e);
	bpf_row(x, &e, s->exit_boottime, (uint32_t)s->threads,
		cgroup_path(x, s->present & CTP_BPFEXIT_HAS_CGROUP,
			    s->cgroup_id));
}

/* The ring's records, then the totals kept when it was full, as rows. */
static int drain_bpf(struct ctp_ts_exits *x)
{
	const struct ctp_api *api = x->api;
	uint64_t bad = 0, folded, lost_sums, merged, lost;
	int r;

	x->d_added = x->d_refused = x->d_no_cgroup = 0;
	x->cgids_fresh = false;
	/* The counts first: an exit folded after this read is in the next
	 * drain's totals and counts alike. */
	ctp_bpfexit_counts(x->bpf, &folded, &lost_sums);
	r = ctp_bpfexit_consume(x->bpf, on_bpf_rec, x, &bad);
	if (r >= 0)
		r = ctp_bpfexit_take_sums(x->bpf, on_bpf_sum, x);
	if (r < 0)
		api->log(x->ctx, CTP_LOG_ERR,
			 "draining the BPF exit program failed: %s",
			 strerror(-r));
	merged = folded - x->folded;
	lost = x->d_refused + bad + (lost_sums - x->lost_sums);
	x->folded = folded;
	x->lost_sums = lost_sums;
	api->exited_lost(x->ctx, lost);
	api->summary_add(x->ctx, x->ch[C_EXITS], x->d_added);
	api->summary_add(x->ctx, x->ch[C_LOST], lost);
	api->summary_add(x->ctx, x->ch[C_BAD], bad);
	api->summary_add(x->ctx, x->ch[C_MERGED], merged);
	api->summary_add(x->ctx, x->ch[C_NO_CGROUP], x->d_no_cgroup);
	return (int)x->d_added;
}
#endif

int ctp_ts_exits_drain(struct ctp_ts_exits *x)
{
	const struct ctp_api *api = x->api;
	uint64_t added = 0, lost;
	size_t n, h;
	int err;

#ifdef CTP_TS_BPF_EXITS
	if (x->bpf)
		return drain_bpf(x);
#endif
	pthread_mutex_lock(&x->lock);
	n = x->count;
	h = x->head;
	pthread_mutex_unlock(&x->lock);
	/* The listener only appends past head + count: these stay put. */
	for (size_t i = 0; i < n; i++)
		added += add_row(x, &x->ring[(h + i) % x->cfg.cap]);
	pthread_mutex_lock(&x->lock);
	x->head = (h + n) % x->cfg.cap;
	x->count -= n;
	/* Empty: start again at the first record, so that the pages ever
	 * touched are those of the most exits held between two drains, not
	 * the whole ring once enough exits went round it (29 MiB at the
	 * default size, on any host that runs builds). */
	if (!x->count)
		x->head = 0;
	pthread_mutex_unlock(&x->lock);

	lost = (n - added) + atomic_exchange(&x->full, 0) + dropped(x);
	api->exited_lost(x->ctx, lost);
	api->summary_add(x->ctx, x->ch[C_EXITS], added);
	api->summary_add(x->ctx, x->ch[C_LOST], lost);
	api->summary_add(x->ctx, x->ch[C_PROCESS],
			 atomic_exchange(&x->process, 0));
	api->summary_add(x->ctx, x->ch[C_BAD], atomic_exchange(&x->bad, 0));
	err = atomic_exchange(&x->thread_err, 0);
	if (err)
		api->log(x->ctx, CTP_LOG_ERR,
			 "the exit listener stopped: %s; exits from now on are "
			 "not recorded",
			 strerror(-err));
	return (int)added;
}
