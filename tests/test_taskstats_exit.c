/* SPDX-License-Identifier: MIT */
/*
 * taskstats exit notifications and listener registration
 * (plugins/taskstats/taskstats_reply.c): ctp_ts_parse_exit on messages
 * built here with libmnl as kernel/taskstats.c taskstats_exit() writes
 * them (a thread's AGGR_PID; the last thread's AGGR_PID and AGGR_TGID),
 * then truncated, oversized, repeated, misplaced, bit-flipped and random
 * bytes; ctp_ts_put_register, ctp_nl_parse_ack, ctp_ts_cpulist_ok; and
 * the pure helpers the exited rows use: ctp_ts_measured,
 * ctp_ts_cputime_adjust.
 *
 * `test_taskstats_exit --write-seed PATH` writes the fuzz seed of
 * tests/fuzz/corpus/parse_taskstats (family, pid, then a notification).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "taskstats_reply.h"

#define FAMILY 0x1f
#define HDRS   (MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)))
#define TID    48114
#define TGID   48113

/* A v16 payload: the installed header's struct (v13 or later) and the
 * 144 bytes v14-v16 appended, zero here. */
#define END13 (offsetof(struct taskstats, wpcopy_delay_total) + 8)
#define V16   (END13 + 144)
union stats {
	struct taskstats t;
	uint8_t b[sizeof(struct taskstats) > V16 ? sizeof(struct taskstats)
						 : V16];
};

/* A thread's record: its own times and the process's ids. */
static void fill(union stats *s, uint32_t pid, uint64_t utime)
{
	memset(s, 0, sizeof(*s));
	s->t.version = 16;
	s->t.ac_pid = pid;
	s->t.ac_tgid = TGID;
	s->t.ac_utime = utime;
	s->t.ac_stime = utime / 2;
	s->t.cpu_delay_total = 777;
	s->t.nvcsw = 5;
	s->t.read_char = 4096;
	s->t.ac_etime = 20000;
	s->t.ac_exitcode = 256;
	memcpy(s->t.ac_comm, "cc1", 4);
}

enum {
	M_PID = 1,	   /* AGGR_PID{PID, STATS} */
	M_TGID = 2,	   /* AGGR_TGID{TGID, STATS} after it */
	M_TGID_FIRST = 4,  /* ... before it */
	M_TGID_NO_ID = 8,  /* AGGR_TGID without its TGID */
	M_TGID_SHORT = 16, /* a TGID of 2 bytes */
	M_TGID_TWICE = 32, /* two AGGR_TGIDs */
	M_NO_STATS = 64,   /* AGGR_TGID without STATS */
};

static void put_tgid_nest(struct nlmsghdr *nlh, int m)
{
	union stats s;
	struct nlattr *n = mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_TGID);

	fill(&s, TGID, 999999);
	if (m & M_TGID_SHORT)
		mnl_attr_put_u16(nlh, TASKSTATS_TYPE_TGID, TGID);
	else if (!(m & M_TGID_NO_ID))
		mnl_attr_put_u32(nlh, TASKSTATS_TYPE_TGID, TGID);
	if (!(m & M_NO_STATS))
		mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, V16, &s);
	mnl_attr_nest_end(nlh, n);
}

/* A notification as the kernel sends it, variants by m. */
static size_t notification(void *buf, size_t cap, uint16_t type, uint8_t cmd,
			   int m)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	union stats s;

	memset(buf, 0, cap);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = TASKSTATS_GENL_VERSION;
	if (m & M_TGID_FIRST)
		put_tgid_nest(nlh, m);
	if (m & M_PID) {
		struct nlattr *n =
			mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_PID);
		fill(&s, TID, 183112);
		mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, TID);
		mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, V16, &s);
		mnl_attr_nest_end(nlh, n);
	}
	if (m & (M_TGID | M_TGID_TWICE))
		put_tgid_nest(nlh, m);
	if (m & M_TGID_TWICE)
		put_tgid_nest(nlh, m);
	assert_true(nlh->nlmsg_len <= cap);
	return nlh->nlmsg_len;
}

static size_t exit_msg(void *buf, size_t cap, int m)
{
	return notification(buf, cap, FAMILY, TASKSTATS_CMD_NEW, m);
}

/* The thread's own values, never the process sum's. */
static void expect_thread(const struct ctp_ts_exit *e)
{
	assert_int_equal(e->ts.pid, TID);
	assert_int_equal(e->ts.version, 16);
	assert_true(ctp_ts_has(&e->ts, CTP_TS_UTIME));
	assert_int_equal(e->ts.v[CTP_TS_UTIME], 183112);
	assert_int_equal(e->ts.v[CTP_TS_STIME], 91556);
	assert_int_equal(e->ts.v[CTP_TS_TGID], TGID);
	assert_int_equal(e->ts.v[CTP_TS_PID], TID);
	assert_int_equal(e->ts.v[CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_TOTAL)], 777);
	assert_int_equal(e->ts.v[CTP_TS_NVCSW], 5);
	assert_int_equal(e->ts.v[CTP_TS_READ_CHAR], 4096);
	assert_int_equal(e->ts.v[CTP_TS_ETIME], 20000);
	assert_int_equal(e->ts.v[CTP_TS_EXITCODE], 256);
	assert_string_equal(e->ts.comm, "cc1");
}

/* ---- Tests -------------------------------------------------------------- */

static void thread_exit(void **state)
{
	struct ctp_ts_exit e;
	uint8_t buf[4096];
	size_t n;

	(void)state;
	n = exit_msg(buf, sizeof(buf), M_PID);
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), 0);
	expect_thread(&e);
	assert_false(e.has_tgid);
	/* Family 0: not checked; spare room after the message. */
	assert_int_equal(ctp_ts_parse_exit(buf, sizeof(buf), 0, &e), 0);
	expect_thread(&e);
}

static void last_thread_exit(void **state)
{
	struct ctp_ts_exit e;
	uint8_t buf[4096];
	size_t n;

	(void)state;
	n = exit_msg(buf, sizeof(buf), M_PID | M_TGID);
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), 0);
	expect_thread(&e);
	assert_true(e.has_tgid);
	assert_int_equal(e.tgid, TGID);
	n = exit_msg(buf, sizeof(buf), M_PID | M_TGID_FIRST);
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), 0);
	expect_thread(&e);
	assert_true(e.has_tgid);
	/* A reply to a GET never has the process's aggregate. */
	struct ctp_taskstats ts;
	assert_int_equal(ctp_ts_parse_reply(buf, n, FAMILY, TID, &ts),
			 -EBADMSG);
}

static void malformed(void **state)
{
	static const int bad[] = {
		M_TGID,
		M_PID | M_TGID | M_TGID_NO_ID,
		M_PID | M_TGID | M_TGID_SHORT,
		M_PID | M_TGID_TWICE,
		M_PID | M_TGID | M_NO_STATS,
	};
	struct ctp_ts_exit e;
	uint8_t buf[4096];
	size_t n, i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = exit_msg(buf, sizeof(buf), bad[i]);
		if (ctp_ts_parse_exit(buf, n, FAMILY, &e) != -EBADMSG)
			fail_msg("variant %#x accepted", bad[i]);
		assert_false(ctp_ts_has(&e.ts, CTP_TS_UTIME));
		assert_false(e.has_tgid);
	}
	n = notification(buf, sizeof(buf), FAMILY + 1, TASKSTATS_CMD_NEW,
			 M_PID | M_TGID);
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), -EBADMSG);
	n = notification(buf, sizeof(buf), FAMILY, TASKSTATS_CMD_GET, M_PID);
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), -EBADMSG);

	/* Every shorter datagram, and nlmsg_len claiming more than sent. */
	n = exit_msg(buf, sizeof(buf), M_PID | M_TGID);
	for (i = 0; i < n; i++)
		if (ctp_ts_parse_exit(buf, i, FAMILY, &e) != -EBADMSG)
			fail_msg("cut at %zu accepted", i);
	((struct nlmsghdr *)buf)->nlmsg_len += 4;
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), -EBADMSG);
	/* The AGGR_TGID nest claiming more than the message holds. */
	n = exit_msg(buf, sizeof(buf), M_PID | M_TGID);
	struct nlattr *pa = (void *)(buf + HDRS);
	struct nlattr *tg = (void *)((uint8_t *)pa + MNL_ALIGN(pa->nla_len));
	assert_int_equal(tg->nla_type & NLA_TYPE_MASK,
			 TASKSTATS_TYPE_AGGR_TGID);
	tg->nla_len += 8;
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e), -EBADMSG);

	/* A v1 record, and a kernel error. */
	n = exit_msg(buf, sizeof(buf), M_PID);
	uint16_t v1 = 1; /* the payload's first member, unaligned here */
	memcpy(buf + n - V16, &v1, sizeof(v1));
	assert_int_equal(ctp_ts_parse_exit(buf, n, FAMILY, &e),
			 -EPROTONOSUPPORT);
	assert_false(ctp_ts_has(&e.ts, CTP_TS_UTIME));
	memset(buf, 0, sizeof(buf));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	struct nlmsgerr *err = mnl_nlmsg_put_extra_header(nlh, sizeof(*err));
	err->error = -EPERM;
	assert_int_equal(ctp_ts_parse_exit(buf, nlh->nlmsg_len, FAMILY, &e),
			 -EPERM);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Any byte of a notification flipped, and random datagrams: the parser
 * answers within its contract (the sanitizers watch every read). */
static void hostile_bytes(void **state)
{
	struct ctp_ts_exit e;
	uint8_t good[4096], buf[4096] __attribute__((aligned(8)));
	size_t n, i;
	int r;

	(void)state;
	n = exit_msg(good, sizeof(good), M_PID | M_TGID);
	for (i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			memcpy(buf, good, n);
			buf[i] ^= (uint8_t)(1u << bit);
			r = ctp_ts_parse_exit(buf, n, FAMILY, &e);
			if (r != 0 && r != -EBADMSG && r != -EPROTONOSUPPORT &&
			    (r >= 0 || r < -4095))
				fail_msg("byte %zu bit %d: %d", i, bit, r);
			if (r != 0)
				assert_int_equal(
					e.ts.present[0] | e.ts.present[1], 0);
		}
	}
	for (i = 0; i < 20000; i++) {
		size_t len = next() % 256;
		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)next();
		if (len >= 4 && next() % 2)
			memcpy(buf, &len, 4); /* a plausible nlmsg_len */
		r = ctp_ts_parse_exit(buf, len, 0, &e);
		assert_true(r <= 0);
	}
}

static void register_request(void **state)
{
	uint8_t buf[256];
	const struct nlmsghdr *nlh = (const void *)buf;
	const struct genlmsghdr *g;
	const struct nlattr *a;
	char big[CTP_TS_CPULIST_MAX + 1];
	size_t n;
	int attrs = 0;

	(void)state;
	n = ctp_ts_put_register(buf, sizeof(buf), FAMILY, 5, "0-3", false);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_len, n);
	assert_int_equal(nlh->nlmsg_type, FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	assert_int_equal(nlh->nlmsg_seq, 5);
	g = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(g->cmd, TASKSTATS_CMD_GET);
	mnl_attr_for_each(a, nlh, sizeof(*g))
	{
		assert_int_equal(mnl_attr_get_type(a),
				 TASKSTATS_CMD_ATTR_REGISTER_CPUMASK);
		assert_int_equal(mnl_attr_validate(a, MNL_TYPE_NUL_STRING), 0);
		assert_string_equal(mnl_attr_get_str(a), "0-3");
		attrs++;
	}
	assert_int_equal(attrs, 1);
	n = ctp_ts_put_register(buf, sizeof(buf), FAMILY, 6, "0", true);
	assert_true(n > 0);
	a = mnl_nlmsg_get_payload_offset(nlh, sizeof(*g));
	assert_int_equal(mnl_attr_get_type(a),
			 TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK);
	/* No room, or a list the kernel would refuse as too long. */
	assert_int_equal(ctp_ts_put_register(buf, 27, FAMILY, 5, "0-3", false),
			 0);
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(
		ctp_ts_put_register(buf, sizeof(buf), FAMILY, 5, big, false),
		0);
}

/* An NLMSG_ERROR answering request seq with error err. */
static size_t ack(void *buf, uint32_t seq, uint32_t req_seq, int err)
{
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;

	memset(buf, 0, 64);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = seq;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = err;
	e->msg.nlmsg_seq = req_seq;
	e->msg.nlmsg_type = FAMILY;
	return nlh->nlmsg_len;
}

static void acks(void **state)
{
	uint8_t buf[64];
	size_t n;

	(void)state;
	n = ack(buf, 5, 5, 0);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), 0);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 6), -EXDEV);
	n = ack(buf, 5, 4, 0);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), -EXDEV);
	n = ack(buf, 5, 5, -EPERM);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), -EPERM);
	n = ack(buf, 5, 5, -EINVAL);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), -EINVAL);
	/* Not an error message, cut short, a nonsense error. */
	n = ack(buf, 5, 5, 0);
	assert_int_equal(ctp_nl_parse_ack(buf, n - 1, 5), -EBADMSG);
	assert_int_equal(ctp_nl_parse_ack(buf, 8, 5), -EBADMSG);
	((struct nlmsghdr *)buf)->nlmsg_len = MNL_NLMSG_HDRLEN + 4;
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), -EBADMSG);
	n = ack(buf, 5, 5, 7);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), -EBADMSG);
	n = ack(buf, 5, 5, -5000);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 5), -EBADMSG);
	n = exit_msg(buf, sizeof(buf), 0);
	assert_int_equal(ctp_nl_parse_ack(buf, n, 0), -EBADMSG);
}

static void cpulists(void **state)
{
	static const char *const good[] = {"0", "0-3", "0-3,8,10-11", "127"};
	static const char *const bad[] = {"",	   "-1", "0-",	"0,,1",
					  "0-3\n", "a",	 "0 1", ",0"};
	char big[CTP_TS_CPULIST_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(ctp_ts_cpulist_ok(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ctp_ts_cpulist_ok(bad[i], strlen(bad[i])))
			fail_msg("\"%s\" accepted", bad[i]);
	memset(big, '1', sizeof(big));
	assert_false(ctp_ts_cpulist_ok(big, sizeof(big)));
	assert_true(ctp_ts_cpulist_ok(big, sizeof(big) - 1));
}

/* A record with members ids[] present (values vals[]). */
static void with(struct ctp_taskstats *t, const unsigned *ids,
		 const uint64_t *vals, size_t n)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		t->present[ids[i] / 64] |= 1ull << (ids[i] % 64);
		t->v[ids[i]] = vals[i];
	}
}

static void measured(void **state)
{
	const struct ctp_ts_gates all = {true, true, true, true, true},
				  none = {false, false, false, false, false},
				  no_io = {true, true, true, true, false};
	const unsigned cmin = CTP_TS_DELAY(CTP_TS_BLKIO, CTP_TS_MIN),
		       ccnt = CTP_TS_DELAY(CTP_TS_BLKIO, CTP_TS_COUNT),
		       cpu = CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_TOTAL),
		       irq = CTP_TS_DELAY(CTP_TS_IRQ, CTP_TS_TOTAL);
	struct ctp_taskstats t;

	(void)state;
	with(&t,
	     (unsigned[]){cmin, ccnt, cpu, irq, CTP_TS_UTIME, CTP_TS_READ_CHAR},
	     (uint64_t[]){0, 0, 5, 5, 7, 9}, 6);
	/* A minimum before any window is the kernel's 0, not a value. */
	assert_false(ctp_ts_measured(&all, &t, cmin));
	t.v[ccnt] = 1;
	assert_true(ctp_ts_measured(&all, &t, cmin));
	assert_true(ctp_ts_measured(&all, &t, cpu));
	assert_true(ctp_ts_measured(&all, &t, irq));
	assert_true(ctp_ts_measured(&all, &t, CTP_TS_READ_CHAR));
	/* Families and options the host does not measure. */
	assert_false(ctp_ts_measured(&none, &t, cmin));
	assert_false(ctp_ts_measured(&none, &t, cpu));
	assert_false(ctp_ts_measured(&none, &t, irq));
	assert_false(ctp_ts_measured(&none, &t, CTP_TS_READ_CHAR));
	/* Storage bytes need CONFIG_TASK_IO_ACCOUNTING as well. */
	with(&t, (unsigned[]){CTP_TS_READ_BYTES, CTP_TS_WRITE_CHAR},
	     (uint64_t[]){0, 0}, 2);
	assert_true(ctp_ts_measured(&all, &t, CTP_TS_READ_BYTES));
	assert_false(ctp_ts_measured(&no_io, &t, CTP_TS_READ_BYTES));
	assert_true(ctp_ts_measured(&no_io, &t, CTP_TS_WRITE_CHAR));
	with(&t,
	     (unsigned[]){cmin, ccnt, cpu, irq, CTP_TS_UTIME, CTP_TS_READ_CHAR},
	     (uint64_t[]){0, 1, 5, 5, 7, 9}, 6);
	/* Not gated; and absent is absent. */
	assert_true(ctp_ts_measured(&none, &t, CTP_TS_UTIME));
	assert_false(ctp_ts_measured(&all, &t, CTP_TS_STIME));
	/* Watermarks: both 0 is a task without an address space. */
	with(&t, (unsigned[]){CTP_TS_HIWATER_RSS, CTP_TS_HIWATER_VM},
	     (uint64_t[]){0, 0}, 2);
	assert_false(ctp_ts_measured(&all, &t, CTP_TS_HIWATER_RSS));
	t.v[CTP_TS_HIWATER_VM] = 4;
	assert_true(ctp_ts_measured(&all, &t, CTP_TS_HIWATER_RSS));
	assert_true(ctp_ts_measured(&all, &t, CTP_TS_HIWATER_VM));
	with(&t, (unsigned[]){CTP_TS_HIWATER_RSS}, (uint64_t[]){4}, 1);
	assert_false(ctp_ts_measured(&all, &t, CTP_TS_HIWATER_RSS));
	assert_int_equal(ctp_ts_kib_bytes(3), 3072);
	assert_int_equal(ctp_ts_kib_bytes(UINT64_MAX / 1000), UINT64_MAX);
}

static void cputime_adjust(void **state)
{
	uint64_t u, s;

	(void)state;
	/* Samples of 60 + 520 us over 1000 us of run time. */
	u = 60, s = 520;
	ctp_ts_cputime_adjust(1000000, &u, &s);
	assert_int_equal(s, 896);
	assert_int_equal(u, 104);
	u = 0, s = 8;
	ctp_ts_cputime_adjust(1000000, &u, &s);
	assert_int_equal(u, 0);
	assert_int_equal(s, 1000);
	u = 8, s = 0;
	ctp_ts_cputime_adjust(1000000, &u, &s);
	assert_int_equal(u, 1000);
	assert_int_equal(s, 0);
	/* No overflow at the extremes. */
	u = UINT64_MAX / 2, s = UINT64_MAX / 2;
	ctp_ts_cputime_adjust(UINT64_MAX, &u, &s);
	assert_int_equal(u + s, UINT64_MAX / 1000);
	assert_int_equal(s, UINT64_MAX / 1000 / 2);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-seed") == 0) {
		uint8_t buf[4096];
		uint16_t fam = FAMILY;
		uint32_t pid = TID;
		size_t n = exit_msg(buf, sizeof(buf), M_PID | M_TGID);
		FILE *f = fopen(argv[2], "wb");
		if (!f || fwrite(&fam, 2, 1, f) != 1 ||
		    fwrite(&pid, 4, 1, f) != 1 || fwrite(buf, n, 1, f) != 1 ||
		    fclose(f) != 0)
			return 1;
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_exit),
		cmocka_unit_test(last_thread_exit),
		cmocka_unit_test(malformed),
		cmocka_unit_test(hostile_bytes),
		cmocka_unit_test(register_request),
		cmocka_unit_test(acks),
		cmocka_unit_test(cpulists),
		cmocka_unit_test(measured),
		cmocka_unit_test(cputime_adjust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
