/* SPDX-License-Identifier: MIT */
/* Taskstats generic-netlink messages; see taskstats_reply.h. */
#include "taskstats_reply.h"

#include <errno.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

_Static_assert(CTP_TS_COMM_LEN == TS_COMM_LEN, "TS_COMM_LEN changed");
_Static_assert(CTP_TS_GET_LEN == MNL_ALIGN(sizeof(struct nlmsghdr)) +
					 MNL_ALIGN(sizeof(struct genlmsghdr)) +
					 MNL_ATTR_HDRLEN + sizeof(uint32_t),
	       "request size");

/*
 * End of the v13 struct (wpcopy_delay_total). The installed header may be
 * that old, so the members added since are placed from here by hand, as
 * the kernel appends them: irq_count, irq_delay_total (v14), then the
 * max/min pair of each family in family order (v16).
 */
#define END_V13	      (offsetof(struct taskstats, wpcopy_delay_total) + 8)
#define OFF_IRQ_COUNT END_V13
#define OFF_IRQ_TOTAL (END_V13 + 8)
#define OFF_MAX(fam)  (END_V13 + 16 + 16 * (fam))
#define OFF_MIN(fam)  (END_V13 + 24 + 16 * (fam))

#if TASKSTATS_VERSION >= 14
_Static_assert(offsetof(struct taskstats, irq_count) == OFF_IRQ_COUNT,
	       "irq_count");
_Static_assert(offsetof(struct taskstats, irq_delay_total) == OFF_IRQ_TOTAL,
	       "irq_delay_total");
#endif
#if TASKSTATS_VERSION >= 16
_Static_assert(offsetof(struct taskstats, cpu_delay_max) == OFF_MAX(CTP_TS_CPU),
	       "cpu_delay_max");
_Static_assert(offsetof(struct taskstats, irq_delay_min) == OFF_MIN(CTP_TS_IRQ),
	       "irq_delay_min");
#endif

/* One member of struct taskstats: where it is in the v16+ layout. */
struct member {
	uint8_t id;	    /* enum ctp_ts_member or CTP_TS_DELAY() */
	uint8_t since;	    /* first version that has it */
	uint8_t size;	    /* 1, 4 or 8 */
	uint8_t is_max_min; /* a *_delay_max/min: moved between v15 and v16 */
	uint16_t off;	    /* offset in the v16+ layout */
	uint8_t fam;	    /* for max/min: its family */
};

#define FSIZE(f) sizeof(((struct taskstats *)0)->f)
#define HDR(i, v, f)                                                           \
	{                                                                      \
		.id = (i), .since = (v), .size = FSIZE(f),                     \
		.off = offsetof(struct taskstats, f)                           \
	}
#define TAIL(i, v, o)                                                          \
	{                                                                      \
		.id = (i), .since = (v), .size = 8, .off = (o)                 \
	}
#define MAXMIN(f)                                                              \
	{.id = CTP_TS_DELAY(f, CTP_TS_MAX),                                    \
	 .since = 15,                                                          \
	 .size = 8,                                                            \
	 .is_max_min = 1,                                                      \
	 .off = OFF_MAX(f),                                                    \
	 .fam = (f)},                                                          \
	{                                                                      \
		.id = CTP_TS_DELAY(f, CTP_TS_MIN), .since = 15, .size = 8,     \
		.is_max_min = 1, .off = OFF_MIN(f), .fam = (f)                 \
	}

/*
 * "since" is exact where the header says (v10 and later); older members are
 * given 2, the first layout this code reads: from v2 to v14 the struct only
 * grew at the end, so for them the payload length decides.
 */
static const struct member members[] = {
	HDR(CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_COUNT), 2, cpu_count),
	HDR(CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_TOTAL), 2, cpu_delay_total),
	HDR(CTP_TS_DELAY(CTP_TS_BLKIO, CTP_TS_COUNT), 2, blkio_count),
	HDR(CTP_TS_DELAY(CTP_TS_BLKIO, CTP_TS_TOTAL), 2, blkio_delay_total),
	HDR(CTP_TS_DELAY(CTP_TS_SWAPIN, CTP_TS_COUNT), 2, swapin_count),
	HDR(CTP_TS_DELAY(CTP_TS_SWAPIN, CTP_TS_TOTAL), 2, swapin_delay_total),
	HDR(CTP_TS_DELAY(CTP_TS_FREEPAGES, CTP_TS_COUNT), 2, freepages_count),
	HDR(CTP_TS_DELAY(CTP_TS_FREEPAGES, CTP_TS_TOTAL), 2,
	    freepages_delay_total),
	HDR(CTP_TS_DELAY(CTP_TS_THRASHING, CTP_TS_COUNT), 2, thrashing_count),
	HDR(CTP_TS_DELAY(CTP_TS_THRASHING, CTP_TS_TOTAL), 2,
	    thrashing_delay_total),
	HDR(CTP_TS_DELAY(CTP_TS_COMPACT, CTP_TS_COUNT), 11, compact_count),
	HDR(CTP_TS_DELAY(CTP_TS_COMPACT, CTP_TS_TOTAL), 11,
	    compact_delay_total),
	HDR(CTP_TS_DELAY(CTP_TS_WPCOPY, CTP_TS_COUNT), 13, wpcopy_count),
	HDR(CTP_TS_DELAY(CTP_TS_WPCOPY, CTP_TS_TOTAL), 13, wpcopy_delay_total),
	TAIL(CTP_TS_DELAY(CTP_TS_IRQ, CTP_TS_COUNT), 14, OFF_IRQ_COUNT),
	TAIL(CTP_TS_DELAY(CTP_TS_IRQ, CTP_TS_TOTAL), 14, OFF_IRQ_TOTAL),
	MAXMIN(CTP_TS_CPU),
	MAXMIN(CTP_TS_BLKIO),
	MAXMIN(CTP_TS_SWAPIN),
	MAXMIN(CTP_TS_FREEPAGES),
	MAXMIN(CTP_TS_THRASHING),
	MAXMIN(CTP_TS_COMPACT),
	MAXMIN(CTP_TS_WPCOPY),
	MAXMIN(CTP_TS_IRQ),
	HDR(CTP_TS_HIWATER_RSS, 2, hiwater_rss),
	HDR(CTP_TS_HIWATER_VM, 2, hiwater_vm),
	HDR(CTP_TS_COREMEM, 2, coremem),
	HDR(CTP_TS_VIRTMEM, 2, virtmem),
	HDR(CTP_TS_UTIME, 2, ac_utime),
	HDR(CTP_TS_STIME, 2, ac_stime),
	HDR(CTP_TS_UTIMESCALED, 2, ac_utimescaled),
	HDR(CTP_TS_STIMESCALED, 2, ac_stimescaled),
	HDR(CTP_TS_MINFLT, 2, ac_minflt),
	HDR(CTP_TS_MAJFLT, 2, ac_majflt),
	HDR(CTP_TS_NVCSW, 2, nvcsw),
	HDR(CTP_TS_NIVCSW, 2, nivcsw),
	HDR(CTP_TS_READ_CHAR, 2, read_char),
	HDR(CTP_TS_WRITE_CHAR, 2, write_char),
	HDR(CTP_TS_READ_SYSCALLS, 2, read_syscalls),
	HDR(CTP_TS_WRITE_SYSCALLS, 2, write_syscalls),
	HDR(CTP_TS_READ_BYTES, 2, read_bytes),
	HDR(CTP_TS_WRITE_BYTES, 2, write_bytes),
	HDR(CTP_TS_CANCELLED_WRITE_BYTES, 2, cancelled_write_bytes),
	HDR(CTP_TS_CPU_RUN_REAL, 2, cpu_run_real_total),
	HDR(CTP_TS_CPU_RUN_VIRTUAL, 2, cpu_run_virtual_total),
	HDR(CTP_TS_CPU_SCALED_RUN_REAL, 2, cpu_scaled_run_real_total),
	HDR(CTP_TS_EXITCODE, 2, ac_exitcode),
	HDR(CTP_TS_FLAG, 2, ac_flag),
	HDR(CTP_TS_NICE, 2, ac_nice),
	HDR(CTP_TS_SCHED, 2, ac_sched),
	HDR(CTP_TS_UID, 2, ac_uid),
	HDR(CTP_TS_GID, 2, ac_gid),
	HDR(CTP_TS_PID, 2, ac_pid),
	HDR(CTP_TS_PPID, 2, ac_ppid),
	HDR(CTP_TS_BTIME, 2, ac_btime),
	HDR(CTP_TS_ETIME, 2, ac_etime),
	HDR(CTP_TS_BTIME64, 10, ac_btime64),
	HDR(CTP_TS_TGID, 12, ac_tgid),
	HDR(CTP_TS_TGETIME, 12, ac_tgetime),
	HDR(CTP_TS_EXE_DEV, 12, ac_exe_dev),
	HDR(CTP_TS_EXE_INODE, 12, ac_exe_inode),
};

_Static_assert(sizeof(members) / sizeof(members[0]) == CTP_TS_N_MEMBERS - 1,
	       "every member but comm has a table entry");

/* Offsets of each family's delay_total in the v16 layout, for v15. */
static const uint16_t total_off[CTP_TS_N_FAMILIES] = {
	offsetof(struct taskstats, cpu_delay_total),
	offsetof(struct taskstats, blkio_delay_total),
	offsetof(struct taskstats, swapin_delay_total),
	offsetof(struct taskstats, freepages_delay_total),
	offsetof(struct taskstats, thrashing_delay_total),
	offsetof(struct taskstats, compact_delay_total),
	offsetof(struct taskstats, wpcopy_delay_total),
	OFF_IRQ_TOTAL,
};

/*
 * v15 (6.14) had each family's max/min pair right after its delay_total:
 * a member moves back 16 bytes for every family total before it.
 */
static size_t v15_shift(size_t off)
{
	size_t n = 0;
	int f;

	for (f = 0; f < CTP_TS_N_FAMILIES; f++)
		if (total_off[f] < off)
			n++;
	return 16 * n;
}

static size_t layout_off(const struct member *m, unsigned version)
{
	size_t t;

	if (version != 15)
		return m->off;
	if (!m->is_max_min)
		return m->off + v15_shift(m->off);
	t = total_off[m->fam];
	t += v15_shift(t);
	return m->id % CTP_TS_N_PARTS == CTP_TS_MAX ? t + 8 : t + 16;
}

static void set_present(struct ctp_taskstats *out, unsigned m)
{
	out->present[m / 64] |= 1ull << (m % 64);
}

/* Decode a TASKSTATS_TYPE_STATS payload. */
static int decode(const uint8_t *p, size_t len, struct ctp_taskstats *out)
{
	size_t i, off = offsetof(struct taskstats, ac_comm);
	uint16_t version;

	if (len < sizeof(version))
		return -EBADMSG;
	memcpy(&version, p, sizeof(version));
	out->version = version;
	out->stats_len = (uint32_t)len;
	/* v1 had no ac_exitcode/ac_flag/ac_nice: cpu_count sat at 8. */
	if (version < 2)
		return -EPROTONOSUPPORT;
	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		const struct member *m = &members[i];
		size_t o = layout_off(m, version);
		uint8_t u8;
		uint32_t u32;
		uint64_t u64;

		if (version < m->since || o + m->size > len)
			continue;
		switch (m->size) {
		case 1:
			memcpy(&u8, p + o, 1);
			out->v[m->id] = u8;
			break;
		case 4:
			memcpy(&u32, p + o, 4);
			out->v[m->id] = u32;
			break;
		default:
			memcpy(&u64, p + o, 8);
			out->v[m->id] = u64;
			break;
		}
		set_present(out, m->id);
	}
	if (version == 15)
		off += v15_shift(off);
	if (off + CTP_TS_COMM_LEN <= len) {
		/* The kernel NUL-pads it; stop at the first NUL anyway. */
		const uint8_t *nul = memchr(p + off, '\0', CTP_TS_COMM_LEN);
		size_t n = nul ? (size_t)(nul - (p + off)) : CTP_TS_COMM_LEN;

		memcpy(out->comm, p + off, n);
		out->comm[n] = '\0';
		set_present(out, CTP_TS_COMM);
	}
	return 0;
}

/*
 * Walk the attributes in [p, p + len) with libmnl's bounds checks, calling
 * cb for each. mnl_attr_parse() stops quietly at a bad attribute; here an
 * attribute whose length is short or runs past the end, or trailing bytes
 * too few for a header, make the whole message malformed.
 */
static int walk(const void *p, size_t len,
		int (*cb)(const struct nlattr *a, void *data), void *data)
{
	const struct nlattr *a = p;
	size_t rem = len;
	int r;

	if (len > INT32_MAX)
		return -EBADMSG;
	while (rem > 0) {
		size_t step;

		if (!mnl_attr_ok(a, (int)rem))
			return -EBADMSG;
		r = cb(a, data);
		if (r < 0)
			return r;
		step = MNL_ALIGN(a->nla_len);
		/* The last attribute may lack its alignment padding. */
		if (step >= rem)
			break;
		rem -= step;
		a = mnl_attr_next(a);
	}
	return 0;
}

/* One aggregate nest: its id attribute (PID or TGID) and its STATS. */
struct nest {
	uint16_t id_type; /* TASKSTATS_TYPE_PID or _TGID */
	const struct nlattr *id;
	const struct nlattr *stats;
};

struct aggr {
	const struct nlattr *pid_nest;	/* TASKSTATS_TYPE_AGGR_PID */
	const struct nlattr *tgid_nest; /* TASKSTATS_TYPE_AGGR_TGID */
	bool tgid_ok; /* an exit notification may carry both */
};

static int top_attr(const struct nlattr *a, void *data)
{
	struct aggr *ag = data;

	switch (mnl_attr_get_type(a)) {
	case TASKSTATS_TYPE_AGGR_PID:
		if (ag->pid_nest)
			return -EBADMSG;
		ag->pid_nest = a;
		return 0;
	case TASKSTATS_TYPE_AGGR_TGID:
		/* In a reply: a per-process answer to a per-thread question. */
		if (!ag->tgid_ok || ag->tgid_nest)
			return -EBADMSG;
		ag->tgid_nest = a;
		return 0;
	default:
		/* TASKSTATS_TYPE_NULL padding, or something newer. */
		return 0;
	}
}

static int nested_attr(const struct nlattr *a, void *data)
{
	struct nest *n = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type == n->id_type) {
		if (n->id || mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return -EBADMSG;
		n->id = a;
	} else if (type == TASKSTATS_TYPE_STATS) {
		if (n->stats)
			return -EBADMSG;
		n->stats = a;
	}
	return 0;
}

/* The id and STATS of an aggregate nest, each exactly once. */
static int walk_nest(const struct nlattr *a, uint16_t id_type, struct nest *n)
{
	*n = (struct nest){.id_type = id_type};
	if (walk(mnl_attr_get_payload(a), mnl_attr_get_payload_len(a),
		 nested_attr, n) < 0 ||
	    !n->id || !n->stats)
		return -EBADMSG;
	return 0;
}

/* The checks every TASKSTATS_CMD_NEW message passes, then its top-level
 * aggregates into *ag: 0, the kernel's error, or -EBADMSG. */
static int parse_new(const void *buf, size_t len, uint16_t family,
		     struct aggr *ag)
{
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *genl;
	size_t hdr = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*genl));

	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) ||
	    nlh->nlmsg_len > len)
		return -EBADMSG;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

		if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(e->error))
			return -EBADMSG;
		/* 0 is an ack: no data, which a GET never gets alone. */
		if (e->error >= 0 || e->error < -4095)
			return -EBADMSG;
		return e->error;
	}
	if ((family && nlh->nlmsg_type != family) || nlh->nlmsg_len < hdr)
		return -EBADMSG;
	genl = mnl_nlmsg_get_payload(nlh);
	if (genl->cmd != TASKSTATS_CMD_NEW)
		return -EBADMSG;
	if (walk((const char *)buf + hdr, nlh->nlmsg_len - hdr, top_attr, ag) <
		    0 ||
	    !ag->pid_nest)
		return -EBADMSG;
	return 0;
}

/* STATS into *out; nothing half-decoded is left on failure. */
static int decode_stats(const struct nlattr *stats, struct ctp_taskstats *out)
{
	int r = decode(mnl_attr_get_payload(stats),
		       mnl_attr_get_payload_len(stats), out);

	if (r < 0)
		memset(out->present, 0, sizeof(out->present));
	return r;
}

int ctp_ts_parse_reply(const void *buf, size_t len, uint16_t family,
		       uint32_t want_pid, struct ctp_taskstats *out)
{
	struct aggr ag = {0};
	struct nest n;
	int r;

	memset(out, 0, sizeof(*out));
	r = parse_new(buf, len, family, &ag);
	if (r < 0)
		return r;
	if (walk_nest(ag.pid_nest, TASKSTATS_TYPE_PID, &n) < 0)
		return -EBADMSG;
	out->pid = mnl_attr_get_u32(n.id);
	if (out->pid != want_pid)
		return -EXDEV;
	return decode_stats(n.stats, out);
}

int ctp_ts_parse_exit(const void *buf, size_t len, uint16_t family,
		      struct ctp_ts_exit *out)
{
	struct aggr ag = {.tgid_ok = true};
	struct nest n, tn;
	int r;

	memset(out, 0, sizeof(*out));
	r = parse_new(buf, len, family, &ag);
	if (r < 0)
		return r;
	if (walk_nest(ag.pid_nest, TASKSTATS_TYPE_PID, &n) < 0 ||
	    (ag.tgid_nest &&
	     walk_nest(ag.tgid_nest, TASKSTATS_TYPE_TGID, &tn) < 0))
		return -EBADMSG;
	if (ag.tgid_nest) {
		/* The process's sum is not decoded: its threads' records
		 * came (or come) one by one. */
		out->has_tgid = true;
		out->tgid = mnl_attr_get_u32(tn.id);
	}
	out->ts.pid = mnl_attr_get_u32(n.id);
	return decode_stats(n.stats, &out->ts);
}

/* A netlink header and a generic netlink header at buf (the caller
 * checked the room): the message to put attributes in. */
static struct nlmsghdr *put_genl(void *buf, uint16_t type, uint16_t flags,
				 uint32_t seq, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

/* Whether str, with its NUL at most max bytes, fits in a put_genl message
 * of cap bytes as its one attribute. */
static bool strz_fits(size_t cap, const char *str, size_t max)
{
	size_t n = strlen(str) + 1;

	return n <= max &&
	       cap >= MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)) +
			       MNL_ATTR_HDRLEN + MNL_ALIGN(n);
}

size_t ctp_ts_put_register(void *buf, size_t cap, uint16_t family, uint32_t seq,
			   const char *cpulist, bool deregister)
{
	struct nlmsghdr *nlh;

	if (!strz_fits(cap, cpulist, CTP_TS_CPULIST_MAX))
		return 0;
	nlh = put_genl(buf, family, NLM_F_REQUEST | NLM_F_ACK, seq,
		       TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION);
	mnl_attr_put_strz(nlh,
			  deregister ? TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK
				     : TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
			  cpulist);
	return nlh->nlmsg_len;
}

int ctp_nl_parse_ack(const void *buf, size_t len, uint32_t seq)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlmsgerr *e;

	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) ||
	    nlh->nlmsg_len > len || nlh->nlmsg_type != NLMSG_ERROR ||
	    nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(*e))
		return -EBADMSG;
	e = mnl_nlmsg_get_payload(nlh);
	if (e->error > 0 || e->error < -4095)
		return -EBADMSG;
	/* The request the answer is about carries our sequence number. */
	if (nlh->nlmsg_seq != seq || e->msg.nlmsg_seq != seq)
		return -EXDEV;
	return e->error;
}

bool ctp_ts_cpulist_ok(const char *s, size_t len)
{
	bool digit = false;

	if (!len || len >= CTP_TS_CPULIST_MAX)
		return false;
	/* "0-3,8,10-11": runs of digits joined by single '-' or ','. */
	for (size_t i = 0; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit = true;
			continue;
		}
		if ((s[i] != '-' && s[i] != ',') || !digit)
			return false;
		digit = false;
	}
	return digit;
}

/* ---- Measured or not -------------------------------------------------------
 */

uint64_t ctp_ts_kib_bytes(uint64_t kib)
{
	return kib > UINT64_MAX / 1024 ? UINT64_MAX : kib * 1024;
}

/* What xacct_add_tsk() fills (kernel/tsacct.c), and the part of it under
 * CONFIG_TASK_IO_ACCOUNTING. */
static bool xacct_member(unsigned m, bool *io)
{
	*io = false;
	switch (m) {
	case CTP_TS_READ_BYTES:
	case CTP_TS_WRITE_BYTES:
	case CTP_TS_CANCELLED_WRITE_BYTES:
		*io = true;
		return true;
	case CTP_TS_HIWATER_RSS:
	case CTP_TS_HIWATER_VM:
	case CTP_TS_READ_CHAR:
	case CTP_TS_WRITE_CHAR:
	case CTP_TS_READ_SYSCALLS:
	case CTP_TS_WRITE_SYSCALLS:
		return true;
	default:
		return false;
	}
}

bool ctp_ts_measured(const struct ctp_ts_gates *g,
		     const struct ctp_taskstats *ts, unsigned m)
{
	bool io;

	if (!ctp_ts_has(ts, m))
		return false;
	if (m < CTP_TS_N_FAMILIES * CTP_TS_N_PARTS) {
		unsigned fam = m / CTP_TS_N_PARTS, cnt;

		if (fam == CTP_TS_CPU	? !g->cpu_delay
		    : fam == CTP_TS_IRQ ? !g->irq
					: !g->delay_block)
			return false;
		/* 0 is the kernel's "no window yet", not a minimum. */
		cnt = CTP_TS_DELAY(fam, CTP_TS_COUNT);
		return m % CTP_TS_N_PARTS != CTP_TS_MIN ||
		       (ctp_ts_has(ts, cnt) && ts->v[cnt]);
	}
	if (!xacct_member(m, &io))
		return true;
	if (!g->xacct || (io && !g->io))
		return false;
	if (m != CTP_TS_HIWATER_RSS && m != CTP_TS_HIWATER_VM)
		return true;
	/* xacct_add_tsk() fills both only for a task with an mm. */
	return ctp_ts_has(ts, CTP_TS_HIWATER_RSS) &&
	       ctp_ts_has(ts, CTP_TS_HIWATER_VM) &&
	       (ts->v[CTP_TS_HIWATER_RSS] || ts->v[CTP_TS_HIWATER_VM]);
}

void ctp_ts_cputime_adjust(uint64_t rtime_ns, uint64_t *utime_us,
			   uint64_t *stime_us)
{
	uint64_t rtime = rtime_ns / 1000, u = *utime_us, s = *stime_us;

	if (!s) {
		*utime_us = rtime;
		return;
	}
	if (!u) {
		*stime_us = rtime;
		return;
	}
	/* rtime * s can pass 2^64 after 584 years of run time in ns; in
	 * 128 bits it cannot. */
	s = (uint64_t)((unsigned __int128)rtime * s /
		       ((unsigned __int128)u + s));
	*stime_us = s;
	*utime_us = rtime - s;
}

size_t ctp_ts_put_get(void *buf, size_t cap, uint16_t family, uint32_t seq,
		      uint32_t tid)
{
	struct nlmsghdr *nlh;

	if (cap < CTP_TS_GET_LEN)
		return 0;
	nlh = put_genl(buf, family, NLM_F_REQUEST, seq, TASKSTATS_CMD_GET,
		       TASKSTATS_GENL_VERSION);
	mnl_attr_put_u32(nlh, TASKSTATS_CMD_ATTR_PID, tid);
	return nlh->nlmsg_len;
}

size_t ctp_genl_put_getfamily(void *buf, size_t cap, uint32_t seq,
			      const char *name)
{
	struct nlmsghdr *nlh;

	if (!strz_fits(cap, name, GENL_NAMSIZ))
		return 0;
	nlh = put_genl(buf, GENL_ID_CTRL, NLM_F_REQUEST, seq,
		       CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	return nlh->nlmsg_len;
}

static int family_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **id = data;

	if (mnl_attr_get_type(a) != CTRL_ATTR_FAMILY_ID)
		return 0;
	if (*id || mnl_attr_validate(a, MNL_TYPE_U16) < 0)
		return -EBADMSG;
	*id = a;
	return 0;
}

int ctp_genl_parse_family(const void *buf, size_t len, uint16_t *id)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *a = NULL;
	size_t hdr = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr));
	uint16_t v;

	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) ||
	    nlh->nlmsg_len > len)
		return -EBADMSG;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

		if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(e->error) ||
		    e->error >= 0 || e->error < -4095)
			return -EBADMSG;
		return e->error;
	}
	if (nlh->nlmsg_type != GENL_ID_CTRL || nlh->nlmsg_len < hdr)
		return -EBADMSG;
	if (walk((const char *)buf + hdr, nlh->nlmsg_len - hdr, family_attr,
		 &a) < 0 ||
	    !a)
		return -EBADMSG;
	v = mnl_attr_get_u16(a);
	/* Ids below GENL_MIN_ID are reserved (GENL_ID_CTRL and friends). */
	if (v < GENL_MIN_ID)
		return -EBADMSG;
	*id = v;
	return 0;
}
