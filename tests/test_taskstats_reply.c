/* SPDX-License-Identifier: MIT */
/*
 * The taskstats reply parser and request builders
 * (plugins/taskstats/taskstats_reply.c) on byte buffers built here with
 * libmnl around the kernel's struct taskstats: the current version, shorter
 * replies of older kernels, the 6.14 (v15) layout, a longer future one, a
 * reply for another task, attributes in unexpected order, truncated and
 * oversized attributes, kernel errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "taskstats_reply.h"

#define FAMILY 0x1f
#define PID    4242

/*
 * The kernel's struct at v16. The installed uapi header is v13 on the build
 * host; v14 appended irq, v16 appended the max/min pairs.
 */
#if TASKSTATS_VERSION == 13
struct ts16 {
	struct taskstats b;
	__u64 irq_count;
	__u64 irq_delay_total;
	__u64 cpu_delay_max, cpu_delay_min;
	__u64 blkio_delay_max, blkio_delay_min;
	__u64 swapin_delay_max, swapin_delay_min;
	__u64 freepages_delay_max, freepages_delay_min;
	__u64 thrashing_delay_max, thrashing_delay_min;
	__u64 compact_delay_max, compact_delay_min;
	__u64 wpcopy_delay_max, wpcopy_delay_min;
	__u64 irq_delay_max, irq_delay_min;
};
#define B(f) b.f
#elif TASKSTATS_VERSION >= 16
struct ts16 {
	struct taskstats b;
};
#define B(f) b.f
#else
#error "write the test's v16 struct for this uapi header"
#endif

#if TASKSTATS_VERSION == 13
#define T(f) f
#else
#define T(f) b.f
#endif

/* The v15 struct of Linux 6.14, each max/min pair after its total. */
struct ts15 {
	__u16 version;
	__u32 ac_exitcode;
	__u8 ac_flag;
	__u8 ac_nice;
	__u64 cpu_count __attribute__((aligned(8)));
	__u64 cpu_delay_total, cpu_delay_max, cpu_delay_min;
	__u64 blkio_count, blkio_delay_total, blkio_delay_max, blkio_delay_min;
	__u64 swapin_count, swapin_delay_total, swapin_delay_max,
		swapin_delay_min;
	__u64 cpu_run_real_total;
	__u64 cpu_run_virtual_total;
	char ac_comm[TS_COMM_LEN];
	__u8 ac_sched __attribute__((aligned(8)));
	__u8 ac_pad[3];
	__u32 ac_uid __attribute__((aligned(8)));
	__u32 ac_gid, ac_pid, ac_ppid, ac_btime;
	__u64 ac_etime __attribute__((aligned(8)));
	__u64 ac_utime, ac_stime, ac_minflt, ac_majflt;
	__u64 coremem, virtmem, hiwater_rss, hiwater_vm;
	__u64 read_char, write_char, read_syscalls, write_syscalls;
	__u64 read_bytes, write_bytes, cancelled_write_bytes;
	__u64 nvcsw, nivcsw;
	__u64 ac_utimescaled, ac_stimescaled, cpu_scaled_run_real_total;
	__u64 freepages_count, freepages_delay_total, freepages_delay_max,
		freepages_delay_min;
	__u64 thrashing_count, thrashing_delay_total, thrashing_delay_max,
		thrashing_delay_min;
	__u64 ac_btime64;
	__u64 compact_count, compact_delay_total, compact_delay_max,
		compact_delay_min;
	__u32 ac_tgid;
	__u64 ac_tgetime __attribute__((aligned(8)));
	__u64 ac_exe_dev, ac_exe_inode;
	__u64 wpcopy_count, wpcopy_delay_total, wpcopy_delay_max,
		wpcopy_delay_min;
	__u64 irq_count, irq_delay_total, irq_delay_max, irq_delay_min;
};

/* Both have 144 bytes more than v13. */
_Static_assert(sizeof(struct ts15) ==
		       offsetof(struct taskstats, wpcopy_delay_total) + 8 + 144,
	       "v15 size");
_Static_assert(sizeof(struct ts16) == sizeof(struct ts15), "v16 size");

#define D(f, p) CTP_TS_DELAY(CTP_TS_##f, CTP_TS_##p)

/* Member id, name in struct taskstats (<= v13), since version. */
#define HDR_MEMBERS(X)                                                         \
	X(D(CPU, COUNT), cpu_count, 2)                                         \
	X(D(CPU, TOTAL), cpu_delay_total, 2)                                   \
	X(D(BLKIO, COUNT), blkio_count, 2)                                     \
	X(D(BLKIO, TOTAL), blkio_delay_total, 2)                               \
	X(D(SWAPIN, COUNT), swapin_count, 2)                                   \
	X(D(SWAPIN, TOTAL), swapin_delay_total, 2)                             \
	X(D(FREEPAGES, COUNT), freepages_count, 2)                             \
	X(D(FREEPAGES, TOTAL), freepages_delay_total, 2)                       \
	X(D(THRASHING, COUNT), thrashing_count, 2)                             \
	X(D(THRASHING, TOTAL), thrashing_delay_total, 2)                       \
	X(D(COMPACT, COUNT), compact_count, 11)                                \
	X(D(COMPACT, TOTAL), compact_delay_total, 11)                          \
	X(D(WPCOPY, COUNT), wpcopy_count, 13)                                  \
	X(D(WPCOPY, TOTAL), wpcopy_delay_total, 13)                            \
	X(CTP_TS_HIWATER_RSS, hiwater_rss, 2)                                  \
	X(CTP_TS_HIWATER_VM, hiwater_vm, 2)                                    \
	X(CTP_TS_COREMEM, coremem, 2)                                          \
	X(CTP_TS_VIRTMEM, virtmem, 2)                                          \
	X(CTP_TS_UTIME, ac_utime, 2)                                           \
	X(CTP_TS_STIME, ac_stime, 2)                                           \
	X(CTP_TS_UTIMESCALED, ac_utimescaled, 2)                               \
	X(CTP_TS_STIMESCALED, ac_stimescaled, 2)                               \
	X(CTP_TS_MINFLT, ac_minflt, 2)                                         \
	X(CTP_TS_MAJFLT, ac_majflt, 2)                                         \
	X(CTP_TS_NVCSW, nvcsw, 2)                                              \
	X(CTP_TS_NIVCSW, nivcsw, 2)                                            \
	X(CTP_TS_READ_CHAR, read_char, 2)                                      \
	X(CTP_TS_WRITE_CHAR, write_char, 2)                                    \
	X(CTP_TS_READ_SYSCALLS, read_syscalls, 2)                              \
	X(CTP_TS_WRITE_SYSCALLS, write_syscalls, 2)                            \
	X(CTP_TS_READ_BYTES, read_bytes, 2)                                    \
	X(CTP_TS_WRITE_BYTES, write_bytes, 2)                                  \
	X(CTP_TS_CANCELLED_WRITE_BYTES, cancelled_write_bytes, 2)              \
	X(CTP_TS_CPU_RUN_REAL, cpu_run_real_total, 2)                          \
	X(CTP_TS_CPU_RUN_VIRTUAL, cpu_run_virtual_total, 2)                    \
	X(CTP_TS_CPU_SCALED_RUN_REAL, cpu_scaled_run_real_total, 2)            \
	X(CTP_TS_EXITCODE, ac_exitcode, 2)                                     \
	X(CTP_TS_FLAG, ac_flag, 2)                                             \
	X(CTP_TS_NICE, ac_nice, 2)                                             \
	X(CTP_TS_SCHED, ac_sched, 2)                                           \
	X(CTP_TS_UID, ac_uid, 2)                                               \
	X(CTP_TS_GID, ac_gid, 2)                                               \
	X(CTP_TS_PID, ac_pid, 2)                                               \
	X(CTP_TS_PPID, ac_ppid, 2)                                             \
	X(CTP_TS_BTIME, ac_btime, 2)                                           \
	X(CTP_TS_ETIME, ac_etime, 2)                                           \
	X(CTP_TS_BTIME64, ac_btime64, 10)                                      \
	X(CTP_TS_TGID, ac_tgid, 12)                                            \
	X(CTP_TS_TGETIME, ac_tgetime, 12)                                      \
	X(CTP_TS_EXE_DEV, ac_exe_dev, 12)                                      \
	X(CTP_TS_EXE_INODE, ac_exe_inode, 12)

/* Members past v13: irq (v14) and max/min (v15 interleaved, v16 tail). */
#define TAIL_MEMBERS(X)                                                        \
	X(D(IRQ, COUNT), irq_count, 14)                                        \
	X(D(IRQ, TOTAL), irq_delay_total, 14)                                  \
	X(D(CPU, MAX), cpu_delay_max, 15)                                      \
	X(D(CPU, MIN), cpu_delay_min, 15)                                      \
	X(D(BLKIO, MAX), blkio_delay_max, 15)                                  \
	X(D(BLKIO, MIN), blkio_delay_min, 15)                                  \
	X(D(SWAPIN, MAX), swapin_delay_max, 15)                                \
	X(D(SWAPIN, MIN), swapin_delay_min, 15)                                \
	X(D(FREEPAGES, MAX), freepages_delay_max, 15)                          \
	X(D(FREEPAGES, MIN), freepages_delay_min, 15)                          \
	X(D(THRASHING, MAX), thrashing_delay_max, 15)                          \
	X(D(THRASHING, MIN), thrashing_delay_min, 15)                          \
	X(D(COMPACT, MAX), compact_delay_max, 15)                              \
	X(D(COMPACT, MIN), compact_delay_min, 15)                              \
	X(D(WPCOPY, MAX), wpcopy_delay_max, 15)                                \
	X(D(WPCOPY, MIN), wpcopy_delay_min, 15)                                \
	X(D(IRQ, MAX), irq_delay_max, 15)                                      \
	X(D(IRQ, MIN), irq_delay_min, 15)

/*
 * A distinct value per member that fills its width, so reading the wrong
 * offset or width shows: u8 100+id, u32 and u64 repeating id+1 bytes.
 */
static uint64_t val(unsigned id, size_t size)
{
	uint64_t b = (uint64_t)(id + 1);

	switch (size) {
	case 1:
		return 100 + id;
	case 4:
		return b * 0x01010101ull;
	default:
		return b * 0x0101010101010101ull;
	}
}

static const char comm[] = "worker (1)";

static void fill16(struct ts16 *t, uint16_t version)
{
	memset(t, 0, sizeof(*t));
	t->B(version) = version;
#define SET(id, f, v) t->B(f) = (__typeof__(t->B(f)))val(id, sizeof(t->B(f)));
	HDR_MEMBERS(SET)
#undef SET
#define SET(id, f, v) t->T(f) = val(id, 8);
	TAIL_MEMBERS(SET)
#undef SET
	memcpy(t->B(ac_comm), comm, sizeof(comm));
}

static void fill15(struct ts15 *t)
{
	memset(t, 0, sizeof(*t));
	t->version = 15;
#define SET(id, f, v) t->f = (__typeof__(t->f))val(id, sizeof(t->f));
	HDR_MEMBERS(SET)
	TAIL_MEMBERS(SET)
#undef SET
	memcpy(t->ac_comm, comm, sizeof(comm));
}

/* Reply layout variants. */
enum {
	ORD_PLAIN = 0,		/* AGGR_PID{PID, STATS} */
	ORD_STATS_FIRST = 1,	/* AGGR_PID{STATS, PID} */
	ORD_PADDED = 2,		/* TYPE_NULL pad in the nest and on top */
	ORD_NO_NESTED_FLAG = 4, /* the kernel's nla_nest_start_noflag() */
};

static size_t build(void *buf, size_t cap, uint16_t type, uint8_t cmd,
		    uint32_t pid, const void *stats, size_t slen, int ord)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlattr *nest;

	memset(buf, 0, cap);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = 7;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = TASKSTATS_GENL_VERSION;
	if (ord & ORD_PADDED)
		mnl_attr_put(nlh, TASKSTATS_TYPE_NULL, 0, NULL);
	nest = mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_PID);
	if (ord & ORD_PADDED)
		mnl_attr_put(nlh, TASKSTATS_TYPE_NULL, 0, NULL);
	if (!(ord & ORD_STATS_FIRST))
		mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, pid);
	mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, slen, stats);
	if (ord & ORD_STATS_FIRST)
		mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, pid);
	mnl_attr_nest_end(nlh, nest);
	if (ord & ORD_NO_NESTED_FLAG)
		nest->nla_type &= (uint16_t)~NLA_F_NESTED;
	assert_true(nlh->nlmsg_len <= cap);
	return nlh->nlmsg_len;
}

static size_t reply(void *buf, size_t cap, uint32_t pid, const void *stats,
		    size_t slen, int ord)
{
	return build(buf, cap, FAMILY, TASKSTATS_CMD_NEW, pid, stats, slen,
		     ord);
}

static unsigned n_present(const struct ctp_taskstats *t)
{
	unsigned m, n = 0;

	for (m = 0; m < CTP_TS_N_MEMBERS; m++)
		n += ctp_ts_has(t, m);
	return n;
}

#define EXPECT(id, f, size)                                                    \
	do {                                                                   \
		if (!ctp_ts_has(out, (id)))                                    \
			fail_msg("member %s (%u) absent", #f, (unsigned)(id)); \
		if (out->v[(id)] != val((id), (size)))                         \
			fail_msg("member %s: %#llx, expected %#llx", #f,       \
				 (unsigned long long)out->v[(id)],             \
				 (unsigned long long)val((id), (size)));       \
	} while (0)

/* Every member present with its value. */
static void expect_all(const struct ctp_taskstats *out)
{
	const struct ts16 *t = NULL;

	(void)t;
#define CHK(id, f, v) EXPECT(id, f, sizeof(t->B(f)));
	HDR_MEMBERS(CHK)
#undef CHK
#define CHK(id, f, v) EXPECT(id, f, 8);
	TAIL_MEMBERS(CHK)
#undef CHK
	assert_true(ctp_ts_has(out, CTP_TS_COMM));
	assert_string_equal(out->comm, comm);
	assert_int_equal(n_present(out), CTP_TS_N_MEMBERS);
}

/* ---- Tests -------------------------------------------------------------- */

static void current_version(void **state)
{
	static const int ords[] = {
		ORD_PLAIN, ORD_STATS_FIRST, ORD_PADDED, ORD_NO_NESTED_FLAG,
		ORD_STATS_FIRST | ORD_PADDED | ORD_NO_NESTED_FLAG};
	struct ts16 t;
	struct ctp_taskstats o, *out = &o;
	uint8_t buf[2048];
	size_t i, n;

	(void)state;
	fill16(&t, 16);
	for (i = 0; i < sizeof(ords) / sizeof(ords[0]); i++) {
		n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ords[i]);
		assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out),
				 0);
		assert_int_equal(out->pid, PID);
		assert_int_equal(out->version, 16);
		assert_int_equal(out->stats_len, sizeof(t));
		expect_all(out);
	}
	/* Family 0: the type is not checked. */
	n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, 0, PID, out), 0);
	expect_all(out);
	/* A buffer longer than the message (one datagram, spare room). */
	assert_int_equal(ctp_ts_parse_reply(buf, sizeof(buf), FAMILY, PID, out),
			 0);
	expect_all(out);
}

static void longer_future_version(void **state)
{
	struct {
		struct ts16 t;
		uint8_t v17[128]; /* *_delay_max_ts, 8 x __kernel_timespec */
		uint8_t more[40];
	} big;
	struct ctp_taskstats o, *out = &o;
	uint8_t buf[2048];
	size_t n;

	(void)state;
	fill16(&big.t, 17);
	memset(big.v17, 0xee, sizeof(big.v17));
	memset(big.more, 0xdd, sizeof(big.more));
	n = reply(buf, sizeof(buf), PID, &big, sizeof(big), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	assert_int_equal(out->version, 17);
	assert_int_equal(out->stats_len, sizeof(big));
	expect_all(out);
}

/* The installed header's own struct: v13, 416 bytes. */
static void short_old_versions(void **state)
{
	struct ts16 t;
	struct ctp_taskstats o, *out = &o;
	uint8_t buf[2048];
	size_t n, end13 = offsetof(struct taskstats, wpcopy_delay_total) + 8;
	unsigned f;

	(void)state;
	fill16(&t, 13);
	n = reply(buf, sizeof(buf), PID, &t, end13, ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	assert_int_equal(out->version, 13);
	assert_int_equal(out->stats_len, end13);
#define CHK(id, f, v) EXPECT(id, f, sizeof(t.B(f)));
	HDR_MEMBERS(CHK)
#undef CHK
	for (f = 0; f < CTP_TS_N_FAMILIES; f++) {
		assert_false(ctp_ts_has(out, CTP_TS_DELAY(f, CTP_TS_MAX)));
		assert_false(ctp_ts_has(out, CTP_TS_DELAY(f, CTP_TS_MIN)));
		assert_int_equal(out->v[CTP_TS_DELAY(f, CTP_TS_MAX)], 0);
	}
	assert_false(ctp_ts_has(out, D(IRQ, COUNT)));
	assert_false(ctp_ts_has(out, D(IRQ, TOTAL)));
	assert_int_equal(n_present(out), CTP_TS_N_MEMBERS - 18);

	/* v14: irq appended, still no max/min. */
	t.B(version) = 14;
	n = reply(buf, sizeof(buf), PID, &t, end13 + 16, ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	EXPECT(D(IRQ, COUNT), irq_count, 8);
	EXPECT(D(IRQ, TOTAL), irq_delay_total, 8);
	assert_false(ctp_ts_has(out, D(CPU, MAX)));
	assert_int_equal(n_present(out), CTP_TS_N_MEMBERS - 16);

	/* v9 (4.20): the struct ends after thrashing. */
	t.B(version) = 9;
	n = reply(buf, sizeof(buf), PID, &t,
		  offsetof(struct taskstats, ac_btime64), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	EXPECT(D(THRASHING, TOTAL), thrashing_delay_total, 8);
	EXPECT(CTP_TS_HIWATER_RSS, hiwater_rss, 8);
	assert_false(ctp_ts_has(out, CTP_TS_BTIME64));
	assert_false(ctp_ts_has(out, D(COMPACT, COUNT)));
	assert_false(ctp_ts_has(out, CTP_TS_TGID));
	assert_false(ctp_ts_has(out, D(WPCOPY, COUNT)));
	assert_string_equal(out->comm, comm);

	/* A payload cut inside hiwater_vm: the member it reaches into and
	 * everything after it are absent, never partly read. */
	t.B(version) = 11;
	n = reply(buf, sizeof(buf), PID, &t,
		  offsetof(struct taskstats, hiwater_vm) + 4, ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	EXPECT(CTP_TS_HIWATER_RSS, hiwater_rss, 8);
	assert_false(ctp_ts_has(out, CTP_TS_HIWATER_VM));
	assert_false(ctp_ts_has(out, CTP_TS_READ_CHAR));
	assert_false(ctp_ts_has(out, D(FREEPAGES, COUNT)));
	EXPECT(D(CPU, COUNT), cpu_count, 8);
	EXPECT(CTP_TS_MAJFLT, ac_majflt, 8);

	/* Just the version: nothing but that. */
	n = reply(buf, sizeof(buf), PID, &t, 2, ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	assert_int_equal(out->version, 11);
	assert_int_equal(n_present(out), 0);

	/* The version decides too: a v12 reply of full length has no wpcopy,
	 * irq or max/min, whatever its bytes say. */
	t.B(version) = 12;
	n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	EXPECT(CTP_TS_EXE_INODE, ac_exe_inode, 8);
	assert_false(ctp_ts_has(out, D(WPCOPY, COUNT)));
	assert_false(ctp_ts_has(out, D(IRQ, COUNT)));
	assert_false(ctp_ts_has(out, D(BLKIO, MAX)));
	assert_int_equal(n_present(out), CTP_TS_N_MEMBERS - 20);
}

static void v15_layout(void **state)
{
	struct ts15 t;
	struct ctp_taskstats o, *out = &o;
	uint8_t buf[2048];
	size_t n;

	(void)state;
	fill15(&t);
	n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	assert_int_equal(out->version, 15);
	expect_all(out);

	/* Cut after swapin_delay_min: the shifted rest is absent. */
	n = reply(buf, sizeof(buf), PID, &t,
		  offsetof(struct ts15, cpu_run_real_total), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, out), 0);
	EXPECT(D(SWAPIN, MIN), swapin_delay_min, 8);
	EXPECT(D(BLKIO, COUNT), blkio_count, 8);
	assert_false(ctp_ts_has(out, CTP_TS_CPU_RUN_REAL));
	assert_false(ctp_ts_has(out, CTP_TS_COMM));
	assert_int_equal(n_present(out), 12 + 3);
}

static void refused_v1(void **state)
{
	struct ts16 t;
	struct ctp_taskstats o;
	uint8_t buf[2048];
	size_t n;

	(void)state;
	fill16(&t, 1);
	n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, &o),
			 -EPROTONOSUPPORT);
	assert_int_equal(o.version, 1);
	assert_int_equal(n_present(&o), 0);
}

static void wrong_pid(void **state)
{
	struct ts16 t;
	struct ctp_taskstats o;
	uint8_t buf[2048];
	size_t n;

	(void)state;
	fill16(&t, 16);
	n = reply(buf, sizeof(buf), PID + 1, &t, sizeof(t), ORD_STATS_FIRST);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, &o), -EXDEV);
	assert_int_equal(o.pid, PID + 1);
	assert_int_equal(n_present(&o), 0);
	assert_int_equal(o.v[D(CPU, COUNT)], 0);
}

/* Offset of the first attribute of type `type` at or after `from`. */
static size_t find_attr(const uint8_t *buf, size_t n, size_t from,
			uint16_t type)
{
	size_t off;

	for (off = from; off + 4 <= n; off += 4) {
		const struct nlattr *a = (const void *)(buf + off);

		if ((a->nla_type & NLA_TYPE_MASK) == type && a->nla_len >= 4 &&
		    a->nla_len <= n - off)
			return off;
	}
	fail_msg("no attribute %u", type);
	return 0;
}

#define HDRS (MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)))

static void truncated(void **state)
{
	struct ts16 t;
	struct ctp_taskstats o;
	uint8_t buf[2048], copy[2048];
	struct nlmsghdr *nlh = (void *)copy;
	struct nlattr *a;
	size_t n, off, nest;

	(void)state;
	fill16(&t, 16);
	n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ORD_PLAIN);

	/* The datagram shorter than its header says, anywhere. */
	for (off = 0; off < n; off += off < 64 ? 1 : 37)
		assert_int_equal(ctp_ts_parse_reply(buf, off, FAMILY, PID, &o),
				 -EBADMSG);
	/* nlmsg_len itself cut short: the attributes run past it. */
	memcpy(copy, buf, n);
	nlh->nlmsg_len = (uint32_t)(n - 8);
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);
	nlh->nlmsg_len = 8;
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);
	nlh->nlmsg_len = (uint32_t)(HDRS - 2);
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);

	/* The nest cut so STATS runs past it. */
	memcpy(copy, buf, n);
	nest = find_attr(copy, n, HDRS, TASKSTATS_TYPE_AGGR_PID);
	a = (void *)(copy + nest);
	a->nla_len = (uint16_t)(a->nla_len - 16);
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);
	/* STATS 2 bytes shorter, without its padding: legal, and the member
	 * it no longer covers whole is absent. */
	memcpy(copy, buf, n);
	off = find_attr(copy, n, nest + 4, TASKSTATS_TYPE_STATS);
	((struct nlattr *)(copy + off))->nla_len -= 2;
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o), 0);
	assert_int_equal(o.stats_len, sizeof(t) - 2);
	assert_false(ctp_ts_has(&o, D(IRQ, MIN)));
	assert_true(ctp_ts_has(&o, D(IRQ, MAX)));
	/* The nest holding 2 stray bytes after STATS, too few for an
	 * attribute header. */
	memcpy(copy, buf, n);
	memset(copy + n, 0, 4);
	((struct nlattr *)(copy + nest))->nla_len += 2;
	nlh->nlmsg_len += 4;
	assert_int_equal(ctp_ts_parse_reply(copy, n + 4, FAMILY, PID, &o),
			 -EBADMSG);
	/* ... while 4 stray zero bytes are an empty attribute header: an
	 * attribute of type 0 and length 0 is below its header size. */
	((struct nlattr *)(copy + nest))->nla_len += 2;
	assert_int_equal(ctp_ts_parse_reply(copy, n + 4, FAMILY, PID, &o),
			 -EBADMSG);
	/* An attribute length below its own header. */
	memcpy(copy, buf, n);
	off = find_attr(copy, n, nest + 4, TASKSTATS_TYPE_PID);
	((struct nlattr *)(copy + off))->nla_len = 2;
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);

	/* STATS too short to hold the version. */
	n = reply(buf, sizeof(buf), PID, &t, 1, ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, &o), -EBADMSG);
	n = reply(buf, sizeof(buf), PID, &t, 0, ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, &o), -EBADMSG);
	assert_int_equal(n_present(&o), 0);
}

static void oversized(void **state)
{
	struct ts16 t;
	struct ctp_taskstats o;
	uint8_t buf[2048], copy[2048];
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlattr *nest;
	uint64_t pid64 = PID;
	size_t n, off;

	(void)state;
	fill16(&t, 16);
	n = reply(buf, sizeof(buf), PID, &t, sizeof(t), ORD_PLAIN);

	/* The top attribute claiming more than the message holds. */
	memcpy(copy, buf, n);
	off = find_attr(copy, n, HDRS, TASKSTATS_TYPE_AGGR_PID);
	((struct nlattr *)(copy + off))->nla_len += 8;
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);
	/* STATS claiming more than its nest holds. */
	memcpy(copy, buf, n);
	off = find_attr(copy, n, HDRS + 4, TASKSTATS_TYPE_STATS);
	((struct nlattr *)(copy + off))->nla_len += 4;
	assert_int_equal(ctp_ts_parse_reply(copy, n, FAMILY, PID, &o),
			 -EBADMSG);

	/* A PID of 8 bytes (and of 2). */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = FAMILY;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = TASKSTATS_CMD_NEW;
	nest = mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_PID);
	mnl_attr_put(nlh, TASKSTATS_TYPE_PID, sizeof(pid64), &pid64);
	mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, sizeof(t), &t);
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(
		ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY, PID, &o),
		-EBADMSG);
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = FAMILY;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = TASKSTATS_CMD_NEW;
	nest = mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_PID);
	mnl_attr_put_u16(nlh, TASKSTATS_TYPE_PID, PID);
	mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, sizeof(t), &t);
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(
		ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY, PID, &o),
		-EBADMSG);
	assert_int_equal(n_present(&o), 0);
}

/* Missing, repeated and foreign attributes, wrong header fields. */
static void structure(void **state)
{
	struct ts16 t;
	struct ctp_taskstats o;
	uint8_t buf[2048];
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlattr *nest;
	size_t n;
	int i;

	(void)state;
	fill16(&t, 16);
	/* Wrong family type, wrong command. */
	n = build(buf, sizeof(buf), FAMILY + 1, TASKSTATS_CMD_NEW, PID, &t,
		  sizeof(t), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, &o), -EBADMSG);
	n = build(buf, sizeof(buf), FAMILY, TASKSTATS_CMD_GET, PID, &t,
		  sizeof(t), ORD_PLAIN);
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, PID, &o), -EBADMSG);

	for (i = 0; i < 7; i++) {
		memset(buf, 0, sizeof(buf));
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = FAMILY;
		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		g->cmd = TASKSTATS_CMD_NEW;
		if (i == 6) {
			/* A per-process answer. */
			nest = mnl_attr_nest_start(nlh,
						   TASKSTATS_TYPE_AGGR_TGID);
			mnl_attr_put_u32(nlh, TASKSTATS_TYPE_TGID, PID);
			mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, sizeof(t), &t);
			mnl_attr_nest_end(nlh, nest);
		}
		if (i != 0) {
			nest = mnl_attr_nest_start(nlh,
						   TASKSTATS_TYPE_AGGR_PID);
			if (i != 1)
				mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, PID);
			if (i == 3)
				mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, PID);
			if (i != 2)
				mnl_attr_put(nlh, TASKSTATS_TYPE_STATS,
					     sizeof(t), &t);
			if (i == 4)
				mnl_attr_put(nlh, TASKSTATS_TYPE_STATS,
					     sizeof(t), &t);
			mnl_attr_nest_end(nlh, nest);
		}
		if (i == 5) {
			nest = mnl_attr_nest_start(nlh,
						   TASKSTATS_TYPE_AGGR_PID);
			mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, PID);
			mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, sizeof(t), &t);
			mnl_attr_nest_end(nlh, nest);
		}
		/* 0: no AGGR_PID, 1: no PID, 2: no STATS, 3: two PIDs,
		 * 4: two STATS, 5: two AGGR_PIDs, 6: AGGR_TGID too. */
		if (ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY, PID, &o) !=
		    -EBADMSG)
			fail_msg("case %d accepted", i);
		assert_int_equal(n_present(&o), 0);
	}
}

static void kernel_errors(void **state)
{
	static const int errs[] = {-EPERM, -ESRCH, -EINVAL, -ENOMEM};
	struct ctp_taskstats o;
	uint8_t buf[256];
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		memset(buf, 0, sizeof(buf));
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = NLMSG_ERROR;
		nlh->nlmsg_seq = 9;
		e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
		e->error = errs[i];
		e->msg.nlmsg_len = CTP_TS_GET_LEN;
		e->msg.nlmsg_type = FAMILY;
		e->msg.nlmsg_seq = 9;
		assert_int_equal(ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY,
						    PID, &o),
				 errs[i]);
		assert_int_equal(n_present(&o), 0);
	}
	/* An ack carries no data; an error cut after the header. */
	e->error = 0;
	assert_int_equal(
		ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY, PID, &o),
		-EBADMSG);
	e->error = -EPERM;
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
	assert_int_equal(
		ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY, PID, &o),
		-EBADMSG);
	/* A nonsense errno. */
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + sizeof(*e);
	e->error = -100000;
	assert_int_equal(
		ctp_ts_parse_reply(buf, nlh->nlmsg_len, FAMILY, PID, &o),
		-EBADMSG);
}

static void put_get(void **state)
{
	uint8_t buf[3 * CTP_TS_GET_LEN + 1];
	const struct nlmsghdr *nlh;
	const struct genlmsghdr *g;
	const struct nlattr *a;
	size_t off = 0, n;
	int i, len, attrs;

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	for (i = 0; i < 3; i++) {
		n = ctp_ts_put_get(buf + off, sizeof(buf) - off, FAMILY,
				   100 + (uint32_t)i, 5000 + (uint32_t)i);
		assert_int_equal(n, CTP_TS_GET_LEN);
		off += n;
	}
	assert_int_equal(
		ctp_ts_put_get(buf + off, sizeof(buf) - off, FAMILY, 1, 1), 0);
	/* Back to back, as one send carries them. */
	nlh = (const void *)buf;
	len = (int)off;
	for (i = 0; mnl_nlmsg_ok(nlh, len); i++) {
		assert_int_equal(nlh->nlmsg_type, FAMILY);
		assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST);
		assert_int_equal(nlh->nlmsg_seq, 100 + i);
		assert_int_equal(nlh->nlmsg_pid, 0);
		g = mnl_nlmsg_get_payload(nlh);
		assert_int_equal(g->cmd, TASKSTATS_CMD_GET);
		assert_int_equal(g->version, TASKSTATS_GENL_VERSION);
		attrs = 0;
		mnl_attr_for_each(a, nlh, sizeof(*g))
		{
			assert_int_equal(mnl_attr_get_type(a),
					 TASKSTATS_CMD_ATTR_PID);
			assert_int_equal(mnl_attr_validate(a, MNL_TYPE_U32), 0);
			assert_int_equal(mnl_attr_get_u32(a), 5000 + i);
			attrs++;
		}
		assert_int_equal(attrs, 1);
		nlh = mnl_nlmsg_next(nlh, &len);
	}
	assert_int_equal(i, 3);
	assert_int_equal(len, 0);
}

static void family(void **state)
{
	uint8_t buf[256];
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlmsgerr *e;
	const struct nlattr *a;
	uint16_t id = 0;
	size_t n;
	int names = 0;

	(void)state;
	/* The request. */
	n = ctp_genl_put_getfamily(buf, sizeof(buf), 3, TASKSTATS_GENL_NAME);
	assert_true(n > 0);
	nlh = (void *)buf;
	assert_int_equal(nlh->nlmsg_len, n);
	assert_int_equal(nlh->nlmsg_type, GENL_ID_CTRL);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST);
	assert_int_equal(nlh->nlmsg_seq, 3);
	g = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(g->cmd, CTRL_CMD_GETFAMILY);
	mnl_attr_for_each(a, nlh, sizeof(*g))
	{
		assert_int_equal(mnl_attr_get_type(a), CTRL_ATTR_FAMILY_NAME);
		assert_string_equal(mnl_attr_get_str(a), "TASKSTATS");
		names++;
	}
	assert_int_equal(names, 1);
	assert_int_equal(ctp_genl_put_getfamily(buf, 20, 3, "TASKSTATS"), 0);

	/* The answer, as the kernel writes it (name, id, version, ...). */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_NEWFAMILY;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "TASKSTATS");
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, 0x1f);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, 1);
	assert_int_equal(ctp_genl_parse_family(buf, nlh->nlmsg_len, &id), 0);
	assert_int_equal(id, 0x1f);
	assert_int_equal(ctp_genl_parse_family(buf, nlh->nlmsg_len - 4, &id),
			 -EBADMSG);

	/* An id that is not a u16, a reserved id, no id. */
	mnl_attr_put_u32(nlh, CTRL_ATTR_FAMILY_ID, 0x20);
	assert_int_equal(ctp_genl_parse_family(buf, nlh->nlmsg_len, &id),
			 -EBADMSG);
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, NLMSG_MIN_TYPE - 1);
	assert_int_equal(ctp_genl_parse_family(buf, nlh->nlmsg_len, &id),
			 -EBADMSG);
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "TASKSTATS");
	assert_int_equal(ctp_genl_parse_family(buf, nlh->nlmsg_len, &id),
			 -EBADMSG);

	/* No such family (CONFIG_TASKSTATS off). */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -ENOENT;
	assert_int_equal(ctp_genl_parse_family(buf, nlh->nlmsg_len, &id),
			 -ENOENT);
	assert_int_equal(id, 0x1f);
}

/*
 * The two requests with a string attribute, at the edges of their bounds:
 * a header (16), a genl header (4), an attribute header (4) and the string
 * with its NUL, padded to 4. One byte less room, or one byte more string
 * than the kernel takes (GENL_NAMSIZ, CTP_TS_CPULIST_MAX with the NUL), is
 * refused with 0; exactly enough is written.
 */
static void string_bounds(void **state)
{
	static uint8_t buf[16 + 4 + 4 + CTP_TS_CPULIST_MAX + 4];
	char name[GENL_NAMSIZ + 1], list[CTP_TS_CPULIST_MAX + 1];
	const size_t name_need = 16 + 4 + 4 + GENL_NAMSIZ;
	const size_t list_need = 16 + 4 + 4 + CTP_TS_CPULIST_MAX;

	(void)state;
	memset(name, 'N', GENL_NAMSIZ - 1);
	name[GENL_NAMSIZ - 1] = '\0';
	assert_int_equal(ctp_genl_put_getfamily(buf, name_need, 1, name),
			 name_need);
	assert_int_equal(ctp_genl_put_getfamily(buf, name_need - 1, 1, name),
			 0);
	memset(name, 'N', GENL_NAMSIZ);
	name[GENL_NAMSIZ] = '\0';
	assert_int_equal(ctp_genl_put_getfamily(buf, sizeof(buf), 1, name), 0);

	memset(list, '1', CTP_TS_CPULIST_MAX - 1);
	list[CTP_TS_CPULIST_MAX - 1] = '\0';
	assert_int_equal(ctp_ts_put_register(buf, list_need, 7, 1, list, false),
			 list_need);
	assert_int_equal(
		ctp_ts_put_register(buf, list_need - 1, 7, 1, list, false), 0);
	memset(list, '1', CTP_TS_CPULIST_MAX);
	list[CTP_TS_CPULIST_MAX] = '\0';
	assert_int_equal(
		ctp_ts_put_register(buf, sizeof(buf), 7, 1, list, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(current_version),
		cmocka_unit_test(longer_future_version),
		cmocka_unit_test(short_old_versions),
		cmocka_unit_test(v15_layout),
		cmocka_unit_test(refused_v1),
		cmocka_unit_test(wrong_pid),
		cmocka_unit_test(truncated),
		cmocka_unit_test(oversized),
		cmocka_unit_test(structure),
		cmocka_unit_test(kernel_errors),
		cmocka_unit_test(put_get),
		cmocka_unit_test(family),
		cmocka_unit_test(string_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
