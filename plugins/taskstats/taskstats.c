/* SPDX-License-Identifier: MIT */
/*
 * taskstats: per-thread delay accounting (eight families: count, total,
 * max, min) and the process's memory high-water marks, from the kernel's
 * taskstats generic-netlink interface (TASKSTATS_CMD_GET per tid, libmnl).
 * plugins/taskstats/README.md has the fields, states and costs.
 *
 * Batching: a thread the worker's window cannot answer starts a batch: one
 * GET for each of the next `batch_size` tids the worker walks (the core's
 * ctp_task.walk_tids, this thread first) in a single send, the replies
 * gathered with recvmmsg into the window, which the next threads read. A
 * tid whose reply was lost gets a query of its own. The window is the
 * worker's own and needs nothing from the process callback, so a large
 * process can be split among workers (CTP_PLUGIN_SPLITTABLE). Every worker
 * thread has its own socket, opened on first use and closed by fini; a
 * thread that ended leaves it to the next new one (workers.h). Without
 * CAP_NET_ADMIN every query fails with EPERM; after the first such answer
 * no more are sent (the capability does not come back mid-capture) and
 * every thread is counted as refused.
 *
 * The per-task source "task" (include/ctprof/source-task.h) comes first,
 * per value: the delay families and the watermarks it offers are taken
 * from it, and a thread whose every recorded value it offers is not
 * queried at all (the query is the costly part); otherwise the thread is
 * queried as below and the reply gives only what the source lacked.
 *
 * The reply is also the per-task source "taskstats"
 * (include/ctprof/source-taskstats.h): procfs-stat and schedstat take
 * the values it shares with their files from it instead of opening them.
 * Whoever asks first for a thread makes the query; the thread callback
 * then reads the same reply.
 *
 * Exited tasks: while the core runs a recorder, exits.c listens for the
 * kernel's exit notifications and finish puts them in the exited table.
 *
 * Options:
 *   batch_size: 1..256 (default 64) GETs per send; 1 queries each thread
 *               on its own (for comparison; costs two more syscalls each).
 *   exited_buffer: 1..1048576 (default 65536) exits kept between
 *               snapshots while recording; more are counted as lost (the
 *               BPF exit program: its ring's room, given, else 8 MiB;
 *               more keep their sums per process).
 *   exited_source: auto (the BPF exit program where it loads, else exit
 *               notifications), bpf, netlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "ctprof/plugin.h"
#include "ctprof/source-task.h"
#include "ctprof/source-taskstats.h"
#include "exits.h"
#include "hostprobe.h"
#include "taskstats_reply.h"
#include "workers.h"
#include "ctprof/plugin-util.h"

#ifndef TASKSTATS_PLUGIN_VERSION
#define TASKSTATS_PLUGIN_VERSION "0"
#endif

/* ---- Fields -------------------------------------------------------------- */

/*
 * The delay families, one line each: X(family, name, what its time is
 * spent on). Each makes four fields, in the reply's member order, so field
 * i of the table is member i of struct ctp_taskstats for i < 32; the
 * watermarks follow.
 */
#define TS_FAMILIES(X)                                                         \
	X(CTP_TS_CPU, "cpu", "runnable on a runqueue, waiting for a CPU")      \
	X(CTP_TS_BLKIO, "blkio", "waiting for synchronous block I/O")          \
	X(CTP_TS_SWAPIN, "swapin", "waiting for swap-in (includes thrashing)") \
	X(CTP_TS_FREEPAGES, "freepages", "in direct memory reclaim")           \
	X(CTP_TS_THRASHING, "thrashing",                                       \
	  "waiting on refaulting (thrashing) pages")                           \
	X(CTP_TS_COMPACT, "compact", "in memory compaction")                   \
	X(CTP_TS_WPCOPY, "wpcopy", "copying write-protected pages")            \
	X(CTP_TS_IRQ, "irq", "in IRQ/softirq work charged to the thread")
#define F_HIWATER_RSS CTP_TS_HIWATER_RSS
#define F_HIWATER_VM  CTP_TS_HIWATER_VM
#define N_FIELDS      (CTP_TS_HIWATER_VM + 1)

/* count and total sum; max and min are peaks kept with MAX (so over a
 * group the min column reads "the largest minimum"). */
#define FAMILY(fam, f, what)                                                   \
	[CTP_TS_DELAY(fam,                                                     \
		      CTP_TS_COUNT)] =                                         \
		CTP_FIELD_COUNTER("taskstats." f "_count", THREAD, COUNT,      \
				  "Windows spent " what " (taskstats " f       \
				  "_count)"),                                  \
		      [CTP_TS_DELAY(fam, CTP_TS_TOTAL)] = CTP_FIELD_COUNTER(   \
			      "taskstats." f "_delay_total", THREAD, NS,       \
			      "Time spent " what ", ns (taskstats " f          \
			      "_delay_total)"),                                \
		      [CTP_TS_DELAY(fam, CTP_TS_MAX)] = CTP_FIELD_PEAK(        \
			      "taskstats." f "_delay_max", THREAD, NS,         \
			      "Longest window spent " what                     \
			      ", ns (taskstats " f "_delay_max)"),             \
		      [CTP_TS_DELAY(fam, CTP_TS_MIN)] = CTP_FIELD_PEAK(        \
			      "taskstats." f "_delay_min", THREAD, NS,         \
			      "Shortest window spent " what                    \
			      ", ns; absent without windows; groups keep the " \
			      "largest minimum (taskstats " f "_delay_min)"),

/* By member id: the families' fields, then the process's memory
 * high-water marks. */
static const struct ctp_field_desc fields[] = {
	[F_HIWATER_RSS] = CTP_FIELD_PEAK(
		"taskstats.hiwater_rss", THREAD, BYTES,
		"Lifetime peak resident set of the process, bytes (taskstats "
		"hiwater_rss; same for every thread of a process)"),
	[F_HIWATER_VM] = CTP_FIELD_PEAK(
		"taskstats.hiwater_vm", THREAD, BYTES,
		"Lifetime peak virtual memory of the process, bytes (taskstats "
		"hiwater_vm; same for every thread of a process)"),
	TS_FAMILIES(FAMILY)};

_Static_assert(sizeof(fields) / sizeof(fields[0]) == N_FIELDS,
	       "field table and member ids disagree");

/* Where each comes from: a member of the reply. */
#define MEMBER(m) [m] = CTP_SRC_SLOT(struct ctp_taskstats, v[m], m)
#define FAMILY_SRC(fam, f, what)                                               \
	MEMBER(CTP_TS_DELAY(fam, CTP_TS_COUNT)),                               \
		MEMBER(CTP_TS_DELAY(fam, CTP_TS_TOTAL)),                       \
		MEMBER(CTP_TS_DELAY(fam, CTP_TS_MAX)),                         \
		MEMBER(CTP_TS_DELAY(fam, CTP_TS_MIN)),
/* The watermarks are converted from kB by apply(). */
static const struct ctp_field_src srcs[N_FIELDS] = {
	[F_HIWATER_RSS] = CTP_SRC_NONE,
	[F_HIWATER_VM] = CTP_SRC_NONE,
	TS_FAMILIES(FAMILY_SRC)};

/*
 * Derived (computed by readers from the group's summed inputs): every
 * family's delay once. A thrashing wait is also accounted as a swapin wait
 * (both wrap the same refault sleep), so those two count as the larger.
 */
#define OFFCPU_TERM(f, set)                                                    \
	{                                                                      \
		.field = "taskstats." f "_delay_total", .coef = 1,             \
		.max_set = (set)                                               \
	}
static const struct ctp_derived_desc offcpu_desc = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_derived_desc),
	.field = CTP_FIELD_COUNTER("taskstats.offcpu_delay_total", THREAD, NS,
				   "Delay in all families, ns: cpu + blkio + "
				   "freepages + compact + wpcopy + irq + "
				   "max(swapin, thrashing)"),
	.n_terms = 8,
	.terms = {OFFCPU_TERM("cpu", 0), OFFCPU_TERM("blkio", 0),
		  OFFCPU_TERM("freepages", 0), OFFCPU_TERM("compact", 0),
		  OFFCPU_TERM("wpcopy", 0), OFFCPU_TERM("irq", 0),
		  OFFCPU_TERM("swapin", 1), OFFCPU_TERM("thrashing", 1)},
};

/* The same total on a kernel that never charges irq delay (no
 * CONFIG_IRQ_TIME_ACCOUNTING): the irq family is absent there, and an
 * absent input would leave the total absent on every thread. */
static const struct ctp_derived_desc offcpu_noirq_desc = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_derived_desc),
	.field = CTP_FIELD_COUNTER("taskstats.offcpu_delay_total", THREAD, NS,
				   "Delay in all families, ns: cpu + blkio + "
				   "freepages + compact + wpcopy + max(swapin, "
				   "thrashing) (no irq: the kernel lacks "
				   "CONFIG_IRQ_TIME_ACCOUNTING)"),
	.n_terms = 7,
	.terms = {OFFCPU_TERM("cpu", 0), OFFCPU_TERM("blkio", 0),
		  OFFCPU_TERM("freepages", 0), OFFCPU_TERM("compact", 0),
		  OFFCPU_TERM("wpcopy", 0), OFFCPU_TERM("swapin", 1),
		  OFFCPU_TERM("thrashing", 1)},
};

/* ---- State --------------------------------------------------------------- */

enum counter {
	C_OK,		  /* a reply applied */
	C_EPERM,	  /* no CAP_NET_ADMIN */
	C_ESRCH,	  /* the thread was gone */
	C_OTHER,	  /* any other failure, a bad or foreign reply */
	C_SKIPPED,	  /* not queried: no family, or not the live /proc */
	C_BATCHED,	  /* answered from a batch */
	C_SINGLE,	  /* answered by a query of its own */
	C_NO_MM,	  /* watermarks absent: no address space (kthread) */
	C_FROM_TASK,	  /* every value from the task source: no query */
	C_FROM_TASK_PART, /* some from the task source, the rest queried */
	N_COUNTERS
};

static const char *const counter_names[N_COUNTERS] = {
	[C_OK] = "ok",
	[C_EPERM] = "eperm",
	[C_ESRCH] = "esrch",
	[C_OTHER] = "other",
	[C_SKIPPED] = "skipped",
	[C_BATCHED] = "batched",
	[C_SINGLE] = "single",
	[C_NO_MM] = "no_mm",
	[C_FROM_TASK] = "from_task",
	[C_FROM_TASK_PART] = "from_task_partial",
};

/* The task source's values: member m of struct ctp_taskstats from the
 * source's delay (family, part) for the 32 delay members (the same
 * order), then the watermarks (kept in bytes there, where the reply has
 * KiB: taken as such, see merge_reply). */
#define TAKE(m, val)                                                           \
	{                                                                      \
		.value = (val), .type = CTP_TYPE_U64, .bit = (m),              \
		.off = offsetof(struct ctp_taskstats, v) +                     \
		       (m) * sizeof(uint64_t)                                  \
	}
#define TAKE_FAMILY(fam, f, what)                                              \
	TAKE(CTP_TS_DELAY(fam, CTP_TS_COUNT),                                  \
	     CTP_SRC_TASK_DELAY(fam, CTP_TS_COUNT)),                           \
		TAKE(CTP_TS_DELAY(fam, CTP_TS_TOTAL),                          \
		     CTP_SRC_TASK_DELAY(fam, CTP_TS_TOTAL)),                   \
		TAKE(CTP_TS_DELAY(fam, CTP_TS_MAX),                            \
		     CTP_SRC_TASK_DELAY(fam, CTP_TS_MAX)),                     \
		TAKE(CTP_TS_DELAY(fam, CTP_TS_MIN),                            \
		     CTP_SRC_TASK_DELAY(fam, CTP_TS_MIN)),
static const struct ctp_src_take task_take[] = {
	TS_FAMILIES(TAKE_FAMILY) TAKE(F_HIWATER_RSS, CTP_SRC_TASK_HIWATER_RSS),
	TAKE(F_HIWATER_VM, CTP_SRC_TASK_HIWATER_VM)};
_Static_assert(N_FIELDS <= 64, "presence bits are one word");

/*
 * CONFIG_IRQ_TIME_ACCOUNTING, read like CONFIG_TASK_XACCT: the kernel
 * charges irq delay (delayacct_irq(), called from irqtime_account_irq())
 * only when built with it, so without it the irq family is 0 on every
 * thread and is left absent. Unknown (no readable config) counts as on.
 */
enum irqtime {
	IRQT_UNKNOWN = 0,
	IRQT_ON,
	IRQT_OFF,
};

static const char *const irqtime_names[] = {
	[IRQT_UNKNOWN] = "unknown", [IRQT_ON] = "on", [IRQT_OFF] = "off"};

/* Why threads are not queried at all. */
enum skip {
	RUN = 0,
	SKIP_NOT_LIVE,	/* the proc root is not this kernel's live procfs */
	SKIP_NO_FAMILY, /* CTRL_CMD_GETFAMILY said no TASKSTATS family */
	SKIP_NO_NETLINK /* the socket or the family query failed otherwise */
};

#define DEFAULT_BATCH 64
#define MAX_BATCH     256
/* Receive room per reply: 596 bytes for v16, 724 for v17. */
#define SLOT_BYTES 2048
/* Not answered (yet): the thread callback asks again on its own. */
#define PENDING 1

struct slot {
	int err;    /* 0, a negative errno, or PENDING */
	bool taken; /* handed to the thread it answers */
	struct ctp_taskstats ts;
};

/*
 * The taskstats source's bytes for one thread: the part other plugins read
 * (include/ctprof/source-taskstats.h, `size` bytes), then this plugin's
 * own, past `size`: the reply as the fill got it. The thread callback
 * decodes its reply from there, so whichever plugin asked first, the
 * thread is answered once and nothing is kept on the side.
 */
struct ts_src {
	struct ctp_src_taskstats pub;
	int32_t err; /* the reply's: 0 or a negative errno */
	uint32_t pad;
	struct ctp_taskstats ts;
};
_Static_assert(sizeof(struct ts_src) <= CTP_SOURCE_MAX_BYTES,
	       "the taskstats source's bytes exceed the core's room");

/* One worker thread's socket and window (a block of st->workers, made
 * ready on its first use). */
struct worker {
	bool ready; /* buffers allocated, socket tried */
	struct mnl_socket *nl;
	int fd; /* -1 when the socket could not be opened */
	uint32_t seq;
	/* The window: replies for tids[0 .. win_n), asked for the walk list
	 * `list` (list_n tids) of capture `gen`. */
	uint32_t *tids;
	size_t win_n;
	const uint32_t *list;
	size_t list_n;
	uint64_t gen;
	struct slot *win;
	char *req;
	char *rbuf;
	struct mmsghdr *mm;
	struct iovec *iov;
	struct sockaddr_nl *from;
	struct slot single;
};

struct ts_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS]; /* < 0: not recorded */
	/* Bit m: member m is recorded and this host measures it (the
	 * values a thread needs; the task source covering them all spares
	 * the query). */
	uint64_t need;
	int ch[N_COUNTERS];
	_Atomic uint64_t n[N_COUNTERS]; /* mirrors for finish */
	enum skip skip;
	int skip_err;
	uint16_t family;
	size_t batch;
	enum ctp_delayacct_state delayacct;
	enum ctp_xacct_state xacct;
	enum irqtime irqtime;
	bool io_acct; /* CONFIG_TASK_IO_ACCOUNTING, or unknown */
	struct ctp_taskstats_active active;
	bool irq_on; /* the irq family is measured */
	struct ctp_ts_gates gates;
	struct ctp_workers workers; /* struct worker */
	/* A query was refused for want of CAP_NET_ADMIN: send no more. */
	_Atomic bool eperm;
	/* The per-task source is registered: the thread callback reads its
	 * reply through it. */
	bool source;
	struct slot refused;	  /* err -EPERM */
	_Atomic uint64_t cap_gen; /* captures finished */
	char hint[256];
	/* Exited tasks, while a recorder runs (exits.h): the listener, its
	 * ring's size, and why there is none when one was wanted. */
	struct ctp_ts_exits *exits;
	size_t exits_cap;
	bool exits_cap_set;
	enum ctp_ts_exits_source exits_source;
	char exits_why[192];
	char hint_all[512];
};

static void count(struct ts_state *st, enum counter c)
{
	atomic_fetch_add_explicit(&st->n[c], 1, memory_order_relaxed);
	if (st->ch[c] >= 0)
		st->api->summary_add(st->ctx, st->ch[c], 1);
}

/* ---- Netlink ------------------------------------------------------------- */

static int open_socket(struct mnl_socket **ret)
{
	struct mnl_socket *nl;
	int rcvbuf = 1 << 20, err;

	nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		mnl_socket_close(nl);
		return err;
	}
	/* A batch's replies queue up before the first recv; the default
	 * buffer holds ~100 of them, so ask for more (capped by rmem_max). */
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
		   sizeof(rcvbuf));
	*ret = nl;
	return 0;
}

static int send_all(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	ssize_t n;

	do {
		n = sendto(fd, buf, len, 0, (const struct sockaddr *)&to,
			   sizeof(to));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * The kernel handles a netlink request inside sendmsg() and queues the
 * reply before it returns, so after a send every answer is already
 * waiting: receive without blocking, and whatever is missing was lost.
 */
static int resolve_family(uint16_t *id)
{
	struct mnl_socket *nl;
	char buf[8192] __attribute__((aligned(8)));
	size_t len;
	ssize_t n;
	int r;

	r = open_socket(&nl);
	if (r < 0)
		return r;
	len = ctp_genl_put_getfamily(buf, sizeof(buf), 1, TASKSTATS_GENL_NAME);
	r = send_all(mnl_socket_get_fd(nl), buf, len);
	while (r == 0) {
		n = recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		r = ctp_genl_parse_family(buf, (size_t)n, id);
		break;
	}
	mnl_socket_close(nl);
	return r;
}

/* ---- Workers ------------------------------------------------------------- */

/* What a worker holds (ctp_workers_fini's `done`); the block stays. */
static void worker_done(void *block)
{
	struct worker *w = block;

	if (w->nl)
		mnl_socket_close(w->nl);
	free(w->tids);
	free(w->win);
	free(w->req);
	free(w->rbuf);
	free(w->mm);
	free(w->iov);
	free(w->from);
	memset(w, 0, sizeof(*w));
}

/* A new block's buffers and socket. false without memory (tried again
 * by the next call). */
static bool worker_setup(struct ts_state *st, struct worker *w)
{
	size_t i, b = st->batch;
	int r;

	w->fd = -1;
	w->win = calloc(b, sizeof(*w->win));
	w->tids = calloc(b, sizeof(*w->tids));
	w->req = malloc(b * CTP_TS_GET_LEN);
	w->rbuf = malloc(b * SLOT_BYTES);
	w->mm = calloc(b, sizeof(*w->mm));
	w->iov = calloc(b, sizeof(*w->iov));
	w->from = calloc(b, sizeof(*w->from));
	if (!w->win || !w->tids || !w->req || !w->rbuf || !w->mm || !w->iov ||
	    !w->from) {
		worker_done(w);
		return false;
	}
	for (i = 0; i < b; i++) {
		w->iov[i].iov_base = w->rbuf + i * SLOT_BYTES;
		w->iov[i].iov_len = SLOT_BYTES;
		w->mm[i].msg_hdr.msg_iov = &w->iov[i];
		w->mm[i].msg_hdr.msg_iovlen = 1;
		w->mm[i].msg_hdr.msg_name = &w->from[i];
		w->mm[i].msg_hdr.msg_namelen = sizeof(w->from[i]);
	}
	r = open_socket(&w->nl);
	if (r < 0) {
		w->nl = NULL;
		st->api->log(st->ctx, CTP_LOG_WARNING,
			     "cannot open a generic netlink socket: %s",
			     strerror(-r));
	} else {
		w->fd = mnl_socket_get_fd(w->nl);
	}
	w->ready = true;
	return true;
}

/* The calling thread's worker: the one it holds, else a block a thread
 * that ended left (its socket and buffers reused), else a new one. */
static struct worker *worker_get(struct ts_state *st)
{
	struct worker *w = ctp_workers_get(&st->workers);

	if (!w || (!w->ready && !worker_setup(st, w)))
		return NULL;
	return w;
}

/* ---- Queries ------------------------------------------------------------- */

/* Parse one received datagram into the window slot its seq names. */
static void take_reply(struct ts_state *st, struct worker *w, uint32_t seq0,
		       const struct mmsghdr *m, size_t *got)
{
	const struct nlmsghdr *nlh = m->msg_hdr.msg_iov->iov_base;
	const struct sockaddr_nl *from = m->msg_hdr.msg_name;
	uint32_t idx;
	struct slot *s;

	/* Only the kernel (port 0) answers; anything else is ignored. */
	if (m->msg_len < sizeof(*nlh) ||
	    m->msg_hdr.msg_namelen < sizeof(*from) || from->nl_pid != 0)
		return;
	idx = nlh->nlmsg_seq - seq0;
	if (idx >= w->win_n || w->win[idx].err != PENDING)
		return;
	s = &w->win[idx];
	s->err = m->msg_hdr.msg_flags & MSG_TRUNC
			 ? -EMSGSIZE
			 : ctp_ts_parse_reply(nlh, m->msg_len, st->family,
					      w->tids[idx], &s->ts);
	(*got)++;
}

/* One send for tids[0 .. n) (at most the batch), replies gathered into
 * the window. */
static void run_batch(struct ts_state *st, struct worker *w,
		      const uint32_t *tids, size_t n)
{
	size_t i, off = 0, got = 0;
	uint32_t seq0 = w->seq;
	int loops;

	w->list = tids;
	w->list_n = n;
	w->gen = atomic_load_explicit(&st->cap_gen, memory_order_relaxed);
	if (n > st->batch)
		n = st->batch;
	w->win_n = n;
	w->seq += (uint32_t)n;
	for (i = 0; i < n; i++) {
		w->tids[i] = tids[i];
		off += ctp_ts_put_get(w->req + off, n * CTP_TS_GET_LEN - off,
				      st->family, seq0 + (uint32_t)i, tids[i]);
		w->win[i].err = PENDING;
		w->win[i].taken = false;
	}
	if (send_all(w->fd, w->req, off) < 0)
		return;
	/* Bounded: an overrun (ENOBUFS) or EINTR costs a round each. */
	for (loops = 0; got < n && loops < 8; loops++) {
		int k, j;

		for (i = 0; i < n; i++) {
			w->mm[i].msg_hdr.msg_namelen = sizeof(w->from[i]);
			w->mm[i].msg_hdr.msg_flags = 0;
		}
		k = recvmmsg(w->fd, w->mm, (unsigned)(n - got), MSG_DONTWAIT,
			     NULL);
		if (k < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (k <= 0)
			break;
		for (j = 0; j < k; j++)
			take_reply(st, w, seq0, &w->mm[j], &got);
	}
}

/* A query of its own, for a tid the window cannot answer. */
static const struct slot *query_single(struct ts_state *st, struct worker *w,
				       uint32_t tid)
{
	struct slot *s = &w->single;
	uint32_t seq = w->seq++;
	size_t len;
	int tries;

	s->err = -ETIMEDOUT;
	len = ctp_ts_put_get(w->req, CTP_TS_GET_LEN, st->family, seq, tid);
	if (send_all(w->fd, w->req, len) < 0) {
		s->err = -EIO;
		return s;
	}
	/* Stale replies of an earlier batch may be queued ahead of ours. */
	for (tries = 0; tries < 16; tries++) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		const struct nlmsghdr *nlh = (const void *)w->rbuf;
		ssize_t n = recvfrom(w->fd, w->rbuf, SLOT_BYTES,
				     MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &flen);

		if (n < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (n < 0)
			break;
		if ((size_t)n < sizeof(*nlh) || from.nl_pid != 0 ||
		    nlh->nlmsg_seq != seq)
			continue;
		s->err = n > SLOT_BYTES
				 ? -EMSGSIZE
				 : ctp_ts_parse_reply(w->rbuf, (size_t)n,
						      st->family, tid, &s->ts);
		break;
	}
	return s;
}

/*
 * The window slot for this visit, or NULL. A visit belongs to the window
 * when its walk list is the tail of the one the batch was asked for, in
 * this capture, and the slot was not handed out yet: a reply is never
 * given to a later thread that reuses the tid, nor to the next capture.
 */
static struct slot *in_window(struct ts_state *st, struct worker *w,
			      const struct ctp_task *task)
{
	size_t i;

	if (!w->win_n || task->walk_tids < w->list ||
	    w->gen != atomic_load_explicit(&st->cap_gen, memory_order_relaxed))
		return NULL;
	i = (size_t)(task->walk_tids - w->list);
	if (i >= w->win_n || w->list_n - i != task->n_walk_tids ||
	    w->tids[i] != (uint32_t)task->tid || w->win[i].taken)
		return NULL;
	return &w->win[i];
}

/* The window's answer for this thread, starting a batch at it when the
 * window has none; NULL when it cannot tell (ask on its own). */
static const struct slot *lookup(struct ts_state *st, struct worker *w,
				 const struct ctp_task *task)
{
	uint32_t tid = (uint32_t)task->tid;
	struct slot *s;

	if (st->batch <= 1 || !CTP_HAS(task, struct ctp_task, n_walk_tids) ||
	    !task->n_walk_tids || !task->walk_tids || task->walk_tids[0] != tid)
		return NULL;
	s = in_window(st, w, task);
	if (!s) {
		run_batch(st, w, task->walk_tids, task->n_walk_tids);
		s = in_window(st, w, task);
	}
	if (!s || s->err == PENDING)
		return NULL;
	s->taken = true;
	return s;
}

/* ---- Values -------------------------------------------------------------- */

/* How a reply was answered, counted. Returns whether it holds values. */
static bool reply_ok(struct ts_state *st, const struct slot *s)
{
	switch (s->err) {
	case 0:
		count(st, C_OK);
		return true;
	case -EPERM:
		count(st, C_EPERM);
		return false;
	case -ESRCH:
		count(st, C_ESRCH);
		return false;
	default:
		count(st, C_OTHER);
		return false;
	}
}

/* The reply's members that v lacks, into v; its watermarks converted to
 * bytes, as the task source keeps them. */
static void merge_reply(struct ctp_taskstats *v, const struct ctp_taskstats *ts)
{
	for (unsigned m = 0; m < N_FIELDS; m++) {
		if (ctp_ts_has(v, m) || !ctp_ts_has(ts, m))
			continue;
		v->v[m] = m == F_HIWATER_RSS || m == F_HIWATER_VM
				  ? ctp_ts_kib_bytes(ts->v[m])
				  : ts->v[m];
		v->present[0] |= 1ull << m;
	}
}

/* The fields from v (watermarks in bytes), where this host measures
 * them. */
static int apply(struct ts_state *st, struct ctp_record *rec,
		 const struct ctp_taskstats *v)
{
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	uint64_t measured = 0;

	for (unsigned m = 0; m < CTP_TS_N_FAMILIES * CTP_TS_N_PARTS; m++)
		if (ctp_ts_measured(&st->gates, v, m))
			measured |= 1ull << m;
	ctp_fields_set(&set, fields, srcs, st->fh, N_FIELDS, 0, v, measured);
	if (st->active.xacct && ctp_ts_has(v, CTP_TS_HIWATER_RSS) &&
	    ctp_ts_has(v, CTP_TS_HIWATER_VM)) {
		/* xacct_add_tsk() fills both only for a task with an mm: two
		 * zeros mean no address space, not an empty one. */
		if (!v->v[CTP_TS_HIWATER_RSS] && !v->v[CTP_TS_HIWATER_VM]) {
			count(st, C_NO_MM);
		} else {
			ctp_set_u64(&set, st->fh[F_HIWATER_RSS],
				    v->v[CTP_TS_HIWATER_RSS]);
			ctp_set_u64(&set, st->fh[F_HIWATER_VM],
				    v->v[CTP_TS_HIWATER_VM]);
		}
	}
	return set.err;
}

/* The members this host measures and the config records (st->need). */
static uint64_t needed(const struct ts_state *st)
{
	uint64_t need = 0;

	for (unsigned m = 0; m < N_FIELDS; m++) {
		bool on;

		if (st->fh[m] < 0)
			continue;
		if (m >= CTP_TS_N_FAMILIES * CTP_TS_N_PARTS)
			on = st->active.xacct;
		else if (m / CTP_TS_N_PARTS == CTP_TS_CPU)
			on = st->gates.cpu_delay;
		else if (m / CTP_TS_N_PARTS == CTP_TS_IRQ)
			on = st->gates.irq;
		else
			on = st->gates.delay_block;
		if (on)
			need |= 1ull << m;
	}
	return need;
}

/*
 * The task source's values the core copies itself (ctp_api.field_bind):
 * every member recorded, with apply()'s rules for "none" as guards (a
 * delay's minimum is absent before the family's first delay; the marks of
 * a task without an mm, both 0, are absent: hiwater_vm is 0 only then,
 * since rss never exceeds total_vm, and then so is hiwater_rss). A
 * minimum whose count is not recorded, or one mark without the other, is
 * never set by apply(), so it is not bound. A thread the source covers
 * whole then needs no call (counted as from_task).
 */
static int bind_values(struct ts_state *st, struct ctp_ctx *ctx,
		       const struct ctp_api *api)
{
	const uint64_t marks = 1ull << F_HIWATER_RSS | 1ull << F_HIWATER_VM;
	int r;

	if (!st->need || !CTP_API_HAS(api, field_bind) ||
	    !CTP_API_HAS(api, thread_skip_bound))
		return 0;
	for (unsigned m = 0; m < N_FIELDS; m++) {
		uint32_t v;

		if (!(st->need >> m & 1))
			continue;
		if (m < CTP_TS_N_FAMILIES * CTP_TS_N_PARTS) {
			unsigned fam = m / CTP_TS_N_PARTS;
			unsigned part = m % CTP_TS_N_PARTS;
			unsigned cnt = CTP_TS_DELAY(fam, CTP_TS_COUNT);

			v = CTP_SRC_TASK_DELAY(fam, part);
			if (part == CTP_TS_MIN) {
				if (!(st->need >> cnt & 1))
					continue;
				v |= CTP_BIND_GUARD(
					CTP_SRC_TASK_DELAY(fam, CTP_TS_COUNT));
			}
		} else {
			if ((st->need & marks) != marks)
				continue;
			v = (m == F_HIWATER_RSS ? CTP_SRC_TASK_HIWATER_RSS
						: CTP_SRC_TASK_HIWATER_VM) |
			    CTP_BIND_GUARD(CTP_SRC_TASK_HIWATER_VM);
		}
		r = api->field_bind(ctx, st->fh[m], CTP_SOURCE_TASK, v);
		if (r < 0)
			return r;
	}
	return api->thread_skip_bound(ctx, 1, st->ch[C_FROM_TASK]);
}

/* ---- Callbacks ----------------------------------------------------------- */

/*
 * This visit's reply: from the window, else a query of its own; none is
 * sent once a query was refused for want of CAP_NET_ADMIN. Counts how it
 * was answered. NULL only when the worker has no socket.
 */
static const struct slot *answer(struct ts_state *st,
				 const struct ctp_task *task)
{
	struct worker *w = worker_get(st);
	const struct slot *s;

	if (!w || w->fd < 0)
		return NULL;
	if (atomic_load_explicit(&st->eperm, memory_order_relaxed))
		return &st->refused;
	s = lookup(st, w, task);
	if (s) {
		count(st, C_BATCHED);
	} else {
		s = query_single(st, w, (uint32_t)task->tid);
		count(st, C_SINGLE);
	}
	if (s->err == -EPERM)
		atomic_store_explicit(&st->eperm, true, memory_order_relaxed);
	return s;
}

/* The per-task source "taskstats": the values shared with the files,
 * where this host measures them, and the whole reply after them for the
 * thread callback (struct ts_src). A reply that is an error is still the
 * thread's answer: its bytes offer no value, and the callback counts the
 * error. */
static int ts_fill(void *state, const struct ctp_task *task, void *buf,
		   size_t cap, size_t *len)
{
	struct ts_state *st = state;
	struct ts_src out = {.pub = {.abi = 1, .size = sizeof(out.pub)}};
	const struct ctp_taskstats *ts;
	const struct slot *s;

	if (st->skip != RUN || cap < sizeof(out))
		return -ENODATA;
	s = answer(st, task);
	if (!s)
		return -ENODATA;
	out.err = s->err;
	out.ts = s->ts;
	ts = &s->ts;
	if (!s->err && ctp_ts_has(ts, CTP_TS_NVCSW) &&
	    ctp_ts_has(ts, CTP_TS_NIVCSW)) {
		out.pub.v[CTP_SRC_TS_NVCSW] = ts->v[CTP_TS_NVCSW];
		out.pub.v[CTP_SRC_TS_NIVCSW] = ts->v[CTP_TS_NIVCSW];
		out.pub.valid |=
			1u << CTP_SRC_TS_NVCSW | 1u << CTP_SRC_TS_NIVCSW;
	}
	/* delayacct_add_tsk() copies these three before it looks at the
	 * runtime switch; without CONFIG_TASK_DELAY_ACCT they are zeros. */
	if (!s->err && st->active.cpu_delay &&
	    ctp_ts_has(ts, CTP_TS_CPU_RUN_VIRTUAL) &&
	    ctp_ts_has(ts, CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_TOTAL)) &&
	    ctp_ts_has(ts, CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_COUNT))) {
		out.pub.v[CTP_SRC_TS_RUN_NS] = ts->v[CTP_TS_CPU_RUN_VIRTUAL];
		out.pub.v[CTP_SRC_TS_RUN_DELAY_NS] =
			ts->v[CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_TOTAL)];
		out.pub.v[CTP_SRC_TS_TIMESLICES] =
			ts->v[CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_COUNT)];
		out.pub.valid |= 1u << CTP_SRC_TS_RUN_NS |
				 1u << CTP_SRC_TS_RUN_DELAY_NS |
				 1u << CTP_SRC_TS_TIMESLICES;
	}
	memcpy(buf, &out, sizeof(out));
	*len = sizeof(out);
	return 0;
}

/* The reply the source's fill got for this thread, from the source's
 * bytes (whoever asked first), into *out. False when there are none: no
 * source (an older core, or sources hidden), or the fill could not ask. */
static bool source_reply(struct ts_state *st, const struct ctp_task *task,
			 struct slot *out)
{
	struct ts_src src;
	const void *data;
	size_t len;

	if (!st->source ||
	    st->api->source_get(task, CTP_SOURCE_TASKSTATS, &data, &len) < 0 ||
	    len != sizeof(src))
		return false;
	memcpy(&src, data, sizeof(src));
	out->err = src.err;
	out->taken = true;
	out->ts = src.ts;
	return true;
}

/*
 * The values the task source offers first; a thread it covers whole is not
 * queried. Otherwise the reply (shared with the taskstats source) gives
 * the rest.
 */
static int ts_thread(void *state, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	struct ts_state *st = state;
	const struct slot *s = NULL;
	struct ctp_taskstats v;
	struct slot got;

	memset(v.present, 0, sizeof(v.present));
	v.present[0] =
		ctp_src_task_take(st->api, task, task_take,
				  CTP_ARRAY_LEN(task_take), st->need, &v);
	if (st->need && !(st->need & ~v.present[0])) {
		count(st, C_FROM_TASK);
		return apply(st, rec, &v);
	}
	if (v.present[0])
		count(st, C_FROM_TASK_PART);
	if (st->skip != RUN) {
		count(st, C_SKIPPED);
		return v.present[0] ? apply(st, rec, &v) : 0;
	}
	/* Through the core, so the reply another plugin already asked for
	 * this thread is not asked again. */
	if (source_reply(st, task, &got))
		s = &got;
	else
		s = answer(st, task);
	if (!s)
		count(st, C_OTHER);
	else if (reply_ok(st, s))
		merge_reply(&v, &s->ts);
	return v.present[0] ? apply(st, rec, &v) : 0;
}

/*
 * The one-line remediation for the dominant failure: a query failure that
 * at least as many threads had as succeeded, else a family the host does
 * not measure.
 */
static const char *make_hint(struct ts_state *st)
{
	uint64_t ok = atomic_load(&st->n[C_OK]);
	uint64_t eperm = atomic_load(&st->n[C_EPERM]);
	uint64_t esrch = atomic_load(&st->n[C_ESRCH]);
	uint64_t other = atomic_load(&st->n[C_OTHER]);
	uint64_t skipped = atomic_load(&st->n[C_SKIPPED]);
	char *h = st->hint;
	size_t hl = sizeof(st->hint);

	if (skipped && skipped >= ok) {
		switch (st->skip) {
		case SKIP_NO_FAMILY:
			return "the kernel has no TASKSTATS genetlink family: "
			       "build it with CONFIG_TASKSTATS=y (and "
			       "CONFIG_TASK_DELAY_ACCT, CONFIG_TASK_XACCT)";
		case SKIP_NOT_LIVE:
			return "the proc root is not this kernel's /proc in "
			       "this pid namespace: taskstats not queried";
		case SKIP_NO_NETLINK:
			snprintf(h, hl,
				 "cannot query the TASKSTATS genetlink family "
				 "(%s): check CONFIG_TASKSTATS and netlink "
				 "access",
				 strerror(-st->skip_err));
			return h;
		case RUN:
			break;
		}
	}
	if (eperm && eperm >= ok && eperm >= esrch && eperm >= other) {
		snprintf(h, hl,
			 "%" PRIu64 " of %" PRIu64
			 " threads refused by taskstats with EPERM (no query "
			 "is sent after the first refusal): run as root or "
			 "grant CAP_NET_ADMIN (setcap cap_net_admin+ep "
			 "ctprof-core)",
			 eperm, ok + eperm + esrch + other);
		return h;
	}
	if (other && other >= ok && other >= esrch) {
		snprintf(h, hl,
			 "%" PRIu64 " of %" PRIu64
			 " taskstats replies were unusable (malformed, for "
			 "another task, or a struct version this plugin cannot "
			 "read)",
			 other, ok + eperm + esrch + other);
		return h;
	}
	if (esrch && esrch > ok) {
		snprintf(h, hl,
			 "%" PRIu64 " of %" PRIu64
			 " taskstats queries failed with ESRCH: run "
			 "ctprof-core in the pid namespace of the proc root",
			 esrch, ok + eperm + esrch + other);
		return h;
	}
	if (!ok)
		return NULL;
	if (st->delayacct == CTP_DELAYACCT_CONFIG_OFF)
		return "delay fields absent: the kernel lacks "
		       "CONFIG_TASK_DELAY_ACCT (or its sysctl is unreadable)";
	if (st->delayacct == CTP_DELAYACCT_RUNTIME_OFF &&
	    st->irqtime == IRQT_OFF)
		return "blkio, swapin, freepages, thrashing, compact and "
		       "wpcopy delays absent: sysctl kernel.task_delayacct=1 "
		       "(or boot with delayacct) to measure them; irq delays "
		       "also need CONFIG_IRQ_TIME_ACCOUNTING, which the kernel "
		       "lacks";
	if (st->delayacct == CTP_DELAYACCT_RUNTIME_OFF)
		return "blkio, swapin, freepages, thrashing, compact, wpcopy "
		       "and irq delays absent: sysctl kernel.task_delayacct=1 "
		       "(or boot with delayacct) to measure them";
	if (st->irqtime == IRQT_OFF && st->xacct == CTP_XACCT_OFF)
		return "irq delays absent: the kernel lacks "
		       "CONFIG_IRQ_TIME_ACCOUNTING; hiwater_rss/hiwater_vm "
		       "absent: the kernel lacks CONFIG_TASK_XACCT";
	if (st->irqtime == IRQT_OFF)
		return "irq delays absent: the kernel lacks "
		       "CONFIG_IRQ_TIME_ACCOUNTING (it charges irq time to "
		       "threads only with it)";
	if (st->xacct == CTP_XACCT_OFF)
		return "hiwater_rss/hiwater_vm absent: the kernel lacks "
		       "CONFIG_TASK_XACCT";
	return NULL;
}

/* The hint, and why exited tasks are not recorded when they were wanted. */
static const char *full_hint(struct ts_state *st)
{
	const char *h = make_hint(st);

	if (!st->exits_why[0])
		return h;
	snprintf(st->hint_all, sizeof(st->hint_all),
		 "%s%sexited tasks not recorded: %s", h ? h : "", h ? "; " : "",
		 st->exits_why);
	return st->hint_all;
}

static int ts_finish(void *state, struct ctp_record *host_rec)
{
	struct ts_state *st = state;

	(void)host_rec;
	/* Every exit received up to now goes to this snapshot. */
	if (st->exits)
		ctp_ts_exits_drain(st->exits);
	if (CTP_API_HAS(st->api, set_hint))
		st->api->set_hint(st->ctx, full_hint(st));
	/* No reply of this capture is handed to the next. */
	atomic_fetch_add(&st->cap_gen, 1);
	/* The tallies are this snapshot's: a recording's next starts at 0. */
	for (size_t c = 0; c < sizeof(st->n) / sizeof(st->n[0]); c++)
		atomic_store_explicit(&st->n[c], 0, memory_order_relaxed);
	return 0;
}

static void ts_fini(void *state)
{
	struct ts_state *st = state;

	if (!st)
		return;
	ctp_ts_exits_stop(st->exits);
	ctp_workers_fini(&st->workers, worker_done);
	free(st);
}

static const char *const exit_sources[] = {"auto", "bpf", "netlink", NULL};

static const struct ctp_option_desc options[] = {
	{.name = "batch_size",
	 .help = "taskstats queries sent per netlink batch",
	 .type = CTP_OPT_U64,
	 .def = "64",
	 .min = 1,
	 .max = MAX_BATCH},
	{.name = "exited_buffer",
	 .help = "exits kept between snapshots while recording: "
		 "notifications (more are counted as exits_lost; ~450 bytes "
		 "each), or the BPF exit program's ring (440 bytes each, "
		 "default 8 MiB; more keep only their sums per process)",
	 .type = CTP_OPT_U64,
	 .def = "65536",
	 .min = 1,
	 .max = CTP_TS_EXITS_MAX},
	{.name = "exited_source",
	 .help = "where exited tasks come from: auto (the BPF exit program "
		 "where it loads, else taskstats exit notifications), bpf, "
		 "netlink",
	 .type = CTP_OPT_STRING,
	 .def = "auto",
	 .choices = exit_sources},
};

static int parse_options(struct ts_state *st)
{
	const struct ctp_api *api = st->api;
	const char *src = NULL;
	uint64_t v;
	int r;

	st->batch = DEFAULT_BATCH;
	st->exits_cap = CTP_TS_EXITS_DEFAULT;
	r = api->opt_u64(st->ctx, "batch_size", &v);
	if (r != -ENOENT) {
		if (r < 0 || v < 1 || v > MAX_BATCH) {
			api->log(st->ctx, CTP_LOG_ERR,
				 "option 'batch_size': expected 1..%d",
				 MAX_BATCH);
			return -EINVAL;
		}
		st->batch = (size_t)v;
	}
	if (api->opt_str(st->ctx, "exited_source", &src) == 0 && src)
		st->exits_source = !strcmp(src, "bpf") ? CTP_TS_EXITS_BPF
				   : !strcmp(src, "netlink")
					   ? CTP_TS_EXITS_NETLINK
					   : CTP_TS_EXITS_AUTO;
	r = api->opt_u64(st->ctx, "exited_buffer", &v);
	if (r == -ENOENT)
		return 0;
	if (r < 0 || v < 1 || v > CTP_TS_EXITS_MAX) {
		api->log(st->ctx, CTP_LOG_ERR,
			 "option 'exited_buffer': expected 1..%u",
			 CTP_TS_EXITS_MAX);
		return -EINVAL;
	}
	st->exits_cap = (size_t)v;
	st->exits_cap_set = true;
	return 0;
}

/*
 * CONFIG_IRQ_TIME_ACCOUNTING from kconfig text. Kconfig writes a bool
 * symbol, set or "is not set", whenever its dependencies allow choosing
 * it; a full config (one naming CONFIG_TASKSTATS) without the symbol is
 * of a kernel that cannot have it (no HAVE_IRQ_TIME_ACCOUNTING, or native
 * virtual cpu accounting). Any other text is no proof either way.
 */
static enum irqtime parse_irqtime(const char *text, size_t len)
{
	switch (ctp_kconfig_lookup(text, len, "CONFIG_IRQ_TIME_ACCOUNTING",
				   NULL, NULL)) {
	case CTP_KCONFIG_YES:
		return IRQT_ON;
	case CTP_KCONFIG_NOT_SET:
		return IRQT_OFF;
	case CTP_KCONFIG_ABSENT:
		return ctp_kconfig_lookup(text, len, "CONFIG_TASKSTATS", NULL,
					  NULL) == CTP_KCONFIG_ABSENT
			       ? IRQT_UNKNOWN
			       : IRQT_OFF;
	default:
		return IRQT_UNKNOWN;
	}
}

static void probe_host(struct ts_state *st, int proc_fd)
{
	const struct ctp_api *api = st->api;
	char *kconfig = NULL;
	size_t klen = 0;
	int r;

	r = ctp_probe_delayacct(proc_fd, &st->delayacct);
	if (r < 0)
		api->log(st->ctx, CTP_LOG_WARNING,
			 "cannot read sys/kernel/task_delayacct (%s): no "
			 "delay family counted as measured",
			 strerror(-r));
	/* One read of config.gz for both options. */
	st->xacct = CTP_XACCT_UNKNOWN;
	st->irqtime = IRQT_UNKNOWN;
	st->io_acct = true;
	r = ctp_read_kconfig(proc_fd, &kconfig, &klen);
	if (r == 0) {
		st->xacct = ctp_parse_kconfig_xacct(kconfig, klen);
		st->irqtime = parse_irqtime(kconfig, klen);
		/* Storage bytes of exited threads: 0 without it. */
		st->io_acct =
			ctp_kconfig_lookup(kconfig, klen,
					   "CONFIG_TASK_IO_ACCOUNTING", NULL,
					   NULL) != CTP_KCONFIG_NOT_SET;
		free(kconfig);
	} else if (r != -ENOENT) {
		api->log(st->ctx, CTP_LOG_INFO,
			 "config.gz unreadable (%s): CONFIG_TASK_XACCT and "
			 "CONFIG_IRQ_TIME_ACCOUNTING taken as on",
			 strerror(-r));
	}
	st->active = ctp_taskstats_active(st->delayacct, st->xacct);
	st->irq_on = st->active.delay_block && st->irqtime != IRQT_OFF;
	st->gates = (struct ctp_ts_gates){.cpu_delay = st->active.cpu_delay,
					  .delay_block = st->active.delay_block,
					  .irq = st->irq_on,
					  .xacct = st->active.xacct,
					  .io = st->io_acct};
	api->log(st->ctx, CTP_LOG_INFO,
		 "delay accounting %s, CONFIG_TASK_XACCT %s, "
		 "CONFIG_IRQ_TIME_ACCOUNTING %s",
		 ctp_delayacct_state_name(st->delayacct),
		 ctp_xacct_state_name(st->xacct), irqtime_names[st->irqtime]);
}

/*
 * While a recorder runs, listen for exits (exits.h). Without the listener
 * the exited table is absent and finish's hint says why; the capture of
 * live threads goes on either way.
 */
static void listen_exits(struct ts_state *st, const struct ctp_roots *roots)
{
	const struct ctp_api *api = st->api;
	struct ctp_ts_exits_cfg cfg = {
		.family = st->skip == RUN ? st->family : 0,
		.sys_fd = roots ? roots->sys_fd : -1,
		.gates = st->gates,
		.cap = st->exits_cap,
		.source = st->exits_source,
		.ring_bytes = st->exits_cap_set
				      ? st->exits_cap * CTP_TS_EXIT_REC_BYTES
				      : 0,
		.cgroup_fd = roots ? roots->cgroup_fd : -1,
		.proc_fd = roots ? roots->proc_fd : -1,
	};
	int r;

	if (!CTP_API_HAS(api, exited_lost) || !CTP_API_HAS(api, recording) ||
	    !api->recording(st->ctx))
		return;
	/* The BPF program needs neither the family nor the live /proc's
	 * pid namespace... but its ids are the initial namespace's. */
	if (st->skip == SKIP_NOT_LIVE ||
	    (st->skip != RUN && st->exits_source == CTP_TS_EXITS_NETLINK)) {
		snprintf(st->exits_why, sizeof(st->exits_why), "%s",
			 st->skip == SKIP_NOT_LIVE
				 ? "the proc root is not this kernel's /proc"
			 : st->skip == SKIP_NO_FAMILY
				 ? "no TASKSTATS genetlink family"
				 : "the TASKSTATS family could not be queried");
		return;
	}
	r = ctp_ts_exits_start(st->ctx, api, &cfg, &st->exits, st->exits_why,
			       sizeof(st->exits_why));
	if (r < 0)
		api->log(st->ctx, CTP_LOG_WARNING,
			 "exited tasks not recorded: %s", st->exits_why);
	else if (!ctp_ts_exits_bpf(st->exits))
		api->log(st->ctx, CTP_LOG_INFO,
			 "listening for exits (%zu records between snapshots)",
			 st->exits_cap);
}

/* Offer the reply to the other collectors (an older core cannot). */
static void register_source(struct ts_state *st)
{
	int r;

	if (!CTP_API_HAS(st->api, source_get))
		return;
	r = st->api->source_register(st->ctx, CTP_SOURCE_TASKSTATS, ts_fill);
	if (r < 0)
		st->api->log(st->ctx, CTP_LOG_WARNING,
			     "cannot offer the taskstats source: %s",
			     strerror(-r));
	st->source = r == 0;
}

static int ts_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **state)
{
	const struct ctp_roots *roots;
	struct ts_state *st = calloc(1, sizeof(*st));
	int proc_fd, r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	st->refused.err = -EPERM;
	ctp_workers_init(&st->workers, sizeof(struct worker));
	r = CTP_ATTACH_TABLE(ctx, api, CTP_API_THROUGH(roots), srcs, st->fh,
			     st->ch);
	if (r == 0)
		r = parse_options(st);
	if (r < 0)
		goto out;

	roots = api->roots(ctx);
	proc_fd = roots ? roots->proc_fd : -1;
	probe_host(st, proc_fd);
	/* An older core has no derived fields: do without (it logs why when
	 * it refuses one). */
	if (CTP_API_HAS(api, derived_register))
		api->derived_register(ctx, st->irqtime == IRQT_OFF
						   ? &offcpu_noirq_desc
						   : &offcpu_desc);

	/* Init succeeds whatever the kernel lacks: threads are then counted
	 * as skipped and finish's hint says why. */
	if (!ctp_proc_is_live(proc_fd)) {
		st->skip = SKIP_NOT_LIVE;
		api->log(ctx, CTP_LOG_INFO,
			 "proc root %s is not this kernel's /proc: threads "
			 "not queried",
			 roots && roots->proc ? roots->proc : "(none)");
	} else {
		r = resolve_family(&st->family);
		if (r < 0) {
			st->skip =
				r == -ENOENT ? SKIP_NO_FAMILY : SKIP_NO_NETLINK;
			st->skip_err = r;
			api->log(ctx, CTP_LOG_WARNING,
				 "no TASKSTATS genetlink family (%s): "
				 "taskstats fields will be absent",
				 strerror(-r));
			r = 0;
		}
	}
	st->need = needed(st);
	if (r == 0)
		r = bind_values(st, ctx, api);
	if (r == 0 && st->skip == RUN)
		register_source(st);
	if (r == 0)
		listen_exits(st, roots);
out:
	if (r < 0) {
		ts_fini(st);
		return r;
	}
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "taskstats",
	.version = TASKSTATS_PLUGIN_VERSION,
	.description = "Per-thread delay accounting (cpu, blkio, swapin, "
		       "freepages, thrashing, compact, wpcopy, irq) and "
		       "memory high-water marks over taskstats genetlink",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_SPLITTABLE |
		 CTP_PLUGIN_OPTIONS | CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.init = ts_init,
	.fini = ts_fini,
	.thread = ts_thread,
	.finish = ts_finish,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
#ifdef CTP_TS_BPF_EXITS
	/* The exit program is loaded in init: under --user the capture child
	 * keeps these until the plugins' init is over (docs/RELIABILITY.md). */
	.capabilities = CTP_CAP_BIT(CAP_NET_ADMIN) | CTP_CAP_BIT(CAP_BPF) |
			CTP_CAP_BIT(CAP_PERFMON),
#else
	.capabilities = CTP_CAP_BIT(CAP_NET_ADMIN),
#endif
};
