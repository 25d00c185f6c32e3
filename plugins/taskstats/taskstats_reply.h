/* SPDX-License-Identifier: MIT */
/*
 * Generic-netlink taskstats messages: building TASKSTATS_CMD_GET and
 * CTRL_CMD_GETFAMILY requests and parsing their replies. Pure functions
 * over bytes (libmnl attribute helpers, no I/O, no allocation), tested on
 * buffers built from the kernel's struct taskstats
 * (tests/test_taskstats_reply.c).
 *
 * The parsed reply keeps every member of struct taskstats this code knows,
 * with a presence bit each, so other collectors (stat, schedstat, io,
 * status equivalents) can take their values from one query.
 *
 * Layout history (include/uapi/linux/taskstats.h), which decides what a
 * reply of a given `version` and payload length holds:
 *   v1        a different header (no ac_exitcode/ac_flag/ac_nice): refused;
 *   v2..v14   append-only: a member exists when the payload reaches it
 *             (v10 ac_btime64, v11 compact, v12 ac_tgid/ac_tgetime/ac_exe_*,
 *             v13 wpcopy, v14 irq);
 *   v15       the *_delay_max/min pairs inserted after each family's
 *             delay_total, shifting everything behind them (6.14);
 *   v16+      the same pairs moved to the end, after irq_delay_total;
 *             later versions append (v17: *_delay_max_ts), so a longer
 *             payload is fine and its unknown tail is ignored.
 * Members past the payload are absent, never zero.
 */
#ifndef CTP_TASKSTATS_REPLY_H
#define CTP_TASKSTATS_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The eight delay families, in struct taskstats order. */
enum ctp_ts_family {
	CTP_TS_CPU,
	CTP_TS_BLKIO,
	CTP_TS_SWAPIN,
	CTP_TS_FREEPAGES,
	CTP_TS_THRASHING,
	CTP_TS_COMPACT,
	CTP_TS_WPCOPY,
	CTP_TS_IRQ,
	CTP_TS_N_FAMILIES
};

/* What each family carries. */
enum ctp_ts_part {
	CTP_TS_COUNT, /* <f>_count: delay windows recorded */
	CTP_TS_TOTAL, /* <f>_delay_total: ns, cumulative */
	CTP_TS_MAX,   /* <f>_delay_max: ns, longest window (v15+) */
	CTP_TS_MIN,   /* <f>_delay_min: ns, shortest window, 0 = none (v15+) */
	CTP_TS_N_PARTS
};

/* Member id of one family's part: 0 .. 31. */
#define CTP_TS_DELAY(fam, part) ((fam)*CTP_TS_N_PARTS + (part))

/* Every other member kept, after the 32 delay members. */
enum ctp_ts_member {
	CTP_TS_HIWATER_RSS = CTP_TS_N_FAMILIES * CTP_TS_N_PARTS, /* kB */
	CTP_TS_HIWATER_VM,					 /* kB */
	CTP_TS_COREMEM,	    /* accumulated RSS, MB-usec */
	CTP_TS_VIRTMEM,	    /* accumulated VM, MB-usec */
	CTP_TS_UTIME,	    /* ac_utime, us */
	CTP_TS_STIME,	    /* ac_stime, us */
	CTP_TS_UTIMESCALED, /* us */
	CTP_TS_STIMESCALED, /* us */
	CTP_TS_MINFLT,
	CTP_TS_MAJFLT,
	CTP_TS_NVCSW,
	CTP_TS_NIVCSW,
	CTP_TS_READ_CHAR,
	CTP_TS_WRITE_CHAR,
	CTP_TS_READ_SYSCALLS,
	CTP_TS_WRITE_SYSCALLS,
	CTP_TS_READ_BYTES,
	CTP_TS_WRITE_BYTES,
	CTP_TS_CANCELLED_WRITE_BYTES,
	CTP_TS_CPU_RUN_REAL,	    /* cpu_run_real_total, ns */
	CTP_TS_CPU_RUN_VIRTUAL,	    /* cpu_run_virtual_total, ns */
	CTP_TS_CPU_SCALED_RUN_REAL, /* ns */
	CTP_TS_EXITCODE,
	CTP_TS_FLAG,  /* ac_flag: AFORK, ASU, ... */
	CTP_TS_NICE,  /* ac_nice: task_nice() stored in a u8; cast to int8_t */
	CTP_TS_SCHED, /* ac_sched: SCHED_* policy */
	CTP_TS_UID,
	CTP_TS_GID,
	CTP_TS_PID, /* ac_pid */
	CTP_TS_PPID,
	CTP_TS_BTIME,	/* ac_btime, s since the epoch (32 bits) */
	CTP_TS_ETIME,	/* ac_etime, us elapsed */
	CTP_TS_BTIME64, /* v10 */
	CTP_TS_TGID,	/* v12 ac_tgid */
	CTP_TS_TGETIME, /* v12, us */
	CTP_TS_EXE_DEV, /* v12 */
	CTP_TS_EXE_INODE,
	CTP_TS_COMM, /* ac_comm: in ctp_taskstats.comm, no value in v[] */
	CTP_TS_N_MEMBERS
};

/* TS_COMM_LEN of the uapi header. */
#define CTP_TS_COMM_LEN 32

/* One parsed TASKSTATS_CMD_GET reply. */
struct ctp_taskstats {
	uint32_t pid;	    /* TASKSTATS_TYPE_PID of the reply */
	uint16_t version;   /* struct taskstats version */
	uint32_t stats_len; /* payload bytes of TASKSTATS_TYPE_STATS */
	uint64_t present[(CTP_TS_N_MEMBERS + 63) / 64];
	uint64_t v[CTP_TS_N_MEMBERS];	/* widened to 64 bits */
	char comm[CTP_TS_COMM_LEN + 1]; /* NUL-terminated */
};

static inline bool ctp_ts_has(const struct ctp_taskstats *t, unsigned m)
{
	return m < CTP_TS_N_MEMBERS && (t->present[m / 64] >> (m % 64)) & 1;
}

/* What this host measures of a taskstats record (read once at init). */
struct ctp_ts_gates {
	bool cpu_delay;	  /* the cpu family (CONFIG_TASK_DELAY_ACCT) */
	bool delay_block; /* the other families (and task_delayacct=1) */
	bool irq;	  /* the irq family (and CONFIG_IRQ_TIME_ACCOUNTING) */
	bool xacct;	  /* CONFIG_TASK_XACCT: watermarks, chars, syscalls */
	bool io;	  /* and CONFIG_TASK_IO_ACCOUNTING: storage bytes */
};

/*
 * Whether member m of ts is a measurement: present in the record, of a
 * family or option the host measures, not the kernel's placeholder (a
 * delay_min of 0 before the first window; watermarks both 0 for a task
 * without an address space). Pure.
 */
bool ctp_ts_measured(const struct ctp_ts_gates *g,
		     const struct ctp_taskstats *ts, unsigned m);

/* kB (the watermarks' unit) to bytes, saturating. */
uint64_t ctp_ts_kib_bytes(uint64_t kib);

/*
 * ac_utime and ac_stime are tick samples (task_cputime()); on a host whose
 * ticks undercount (a virtual machine's, measured at 40-75 % of the run
 * time for 20-200 ms of CPU) they miss much of it. /proc/<pid>/stat and
 * getrusage() split the exact run time (sum_exec_runtime, taskstats
 * cpu_run_virtual_total, ns) in the samples' ratio (kernel/sched/cputime.c
 * cputime_adjust()); this does the same to *utime_us and *stime_us: all
 * of it to utime when stime is 0, to stime when utime is 0. Pure.
 */
void ctp_ts_cputime_adjust(uint64_t rtime_ns, uint64_t *utime_us,
			   uint64_t *stime_us);

/* Bytes of one TASKSTATS_CMD_GET request. */
#define CTP_TS_GET_LEN 28

/*
 * Write a TASKSTATS_CMD_GET for `tid` at buf (NLM_F_REQUEST, no ack).
 * Returns the bytes written (CTP_TS_GET_LEN, 4-aligned, so requests can be
 * packed back to back into one send), or 0 when cap is too small.
 */
size_t ctp_ts_put_get(void *buf, size_t cap, uint16_t family, uint32_t seq,
		      uint32_t tid);

/*
 * Parse one netlink message (the whole of one datagram from the kernel) as
 * the answer to a TASKSTATS_CMD_GET for `want_pid`, sent to generic-netlink
 * family `family` (0: do not check the message type). buf is aligned to 4
 * bytes, as netlink messages are (a recv() buffer of the caller's). *out is
 * cleared first. Returns:
 *   0                 a stats reply for want_pid: *out filled;
 *   the kernel's error (negative) from an NLMSG_ERROR: -EPERM without
 *                     CAP_NET_ADMIN, -ESRCH when the task is gone, ...;
 *   -EXDEV            a well-formed reply about another task (out->pid
 *                     says which; no value is decoded);
 *   -EPROTONOSUPPORT  a struct version this code cannot lay out (v1);
 *   -EBADMSG          anything malformed or truncated: short header, a
 *                     length past the buffer, wrong type or command, a
 *                     PID attribute not exactly 4 bytes, a missing or
 *                     repeated PID/STATS/AGGR_PID, an ack instead of data.
 * The kernel's taskstats code never answers with the last three errnos, so
 * they cannot be confused with a kernel error.
 */
int ctp_ts_parse_reply(const void *buf, size_t len, uint16_t family,
		       uint32_t want_pid, struct ctp_taskstats *out);

/*
 * One exit notification: what the kernel sends every listener registered
 * for the CPU a task exits on (kernel/taskstats.c taskstats_exit()). Pids
 * are in the initial pid namespace.
 */
struct ctp_ts_exit {
	struct ctp_taskstats ts; /* the task's own record; ts.pid its tid */
	bool has_tgid;		 /* an AGGR_TGID came with it: the task was */
	uint32_t tgid;		 /* the last thread of process tgid */
};

/*
 * Parse one exit notification (one datagram) of family `family` (0: not
 * checked) into *out, cleared first: an AGGR_PID nest (PID and STATS) and
 * at most one AGGR_TGID nest (TGID and STATS, whose stats are the
 * process's sum of its threads' records and are not decoded). Returns 0,
 * -EPROTONOSUPPORT for a v1 struct, the kernel's error from an
 * NLMSG_ERROR, or -EBADMSG for anything malformed (as ctp_ts_parse_reply,
 * and a TGID not exactly 4 bytes, a repeated AGGR_TGID).
 */
int ctp_ts_parse_exit(const void *buf, size_t len, uint16_t family,
		      struct ctp_ts_exit *out);

/* The longest cpulist a registration carries (the kernel allows 100 + 6
 * per possible CPU). */
#define CTP_TS_CPULIST_MAX 4096

/*
 * Write a TASKSTATS_CMD_GET that registers (or with `deregister` drops)
 * the sending socket as a listener for exits on the CPUs of `cpulist`
 * ("0-7"), asking for an ack. Returns the bytes written, or 0 when cap is
 * too small or the list is CTP_TS_CPULIST_MAX bytes or longer.
 */
size_t ctp_ts_put_register(void *buf, size_t cap, uint16_t family, uint32_t seq,
			   const char *cpulist, bool deregister);

/*
 * The answer to a request sent with NLM_F_ACK and sequence number seq: 0
 * for the ack, the kernel's error, -EXDEV for an answer about another
 * request, -EBADMSG for anything else.
 */
int ctp_nl_parse_ack(const void *buf, size_t len, uint32_t seq);

/* Whether len bytes at s are a cpulist as sysfs prints one ("0-3,8"):
 * digits, single '-' or ',' between them, shorter than
 * CTP_TS_CPULIST_MAX. */
bool ctp_ts_cpulist_ok(const char *s, size_t len);

/*
 * Write a CTRL_CMD_GETFAMILY request for the family called `name`
 * ("TASKSTATS"). Returns the bytes written, or 0 when cap is too small or
 * the name is GENL_NAMSIZ bytes or longer.
 */
size_t ctp_genl_put_getfamily(void *buf, size_t cap, uint32_t seq,
			      const char *name);

/*
 * Parse the answer to CTRL_CMD_GETFAMILY: 0 and *id (CTRL_ATTR_FAMILY_ID),
 * the kernel's error (-ENOENT: no such family, e.g. CONFIG_TASKSTATS off),
 * or -EBADMSG.
 */
int ctp_genl_parse_family(const void *buf, size_t len, uint16_t *id);

#endif
