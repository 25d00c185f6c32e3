/* SPDX-License-Identifier: MIT */
/* Unit tests for the bpf-task record stream parser
 * (plugins/bpf-task/bpftask_rec.c) on literal bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bpftask_rec.h"

#include <ctprof/source-process.h>
#include <ctprof/source-task.h>

/* The record is in host byte order; these literals are little-endian. */
#define U16(v) (v) & 0xff, ((v) >> 8) & 0xff
#define U32(v) U16((v)&0xffff), U16(((v) >> 16) & 0xffff)
#define U64(v)                                                                 \
	U32((unsigned long long)(v)&0xffffffffu),                              \
		U32((unsigned long long)(v) >> 32)

/* tgid 4242, tid 4243, every counter a distinct number, comm "worker-3". */
static const unsigned char rec1[] = {
	U16(696), U16(6), U32(0xfffffffu),	/* size, version, present */
	U32(4242), U32(4243),			/* tgid, pid */
	U64(123456789012ull),			/* start_boottime */
	U64(11), U64(2),			/* minflt, majflt */
	U64(33), U64(4),			/* nvcsw, nivcsw */
	U64(5000000005ull),			/* sum_exec_runtime */
	U64(66666), U64(77),			/* run_delay, pcount */
	U64(8), U64(9), U64(10), U64(11),	/* rchar, wchar, syscr, syscw */
	U64(4096), U64(8192), U64(12288),	/* read/write/cancelled bytes */
	U64(3000000000ull), U64(2000000000ull), /* utime, stime */
	'w', 'o', 'r', 'k', 'e', 'r', '-', '3', 0, 0, 0, 0, 0, 0, 0, 0,
	/* version 2 */
	U32(0x402), U32(0), /* state TASK_IDLE, exit_state */
	U32(120), U32(125), /* prio, static_prio */
	U32(0), U32(3),	    /* rt_priority, policy SCHED_BATCH */
	U32(1),		    /* cpu */
	U32(0x00200020u),   /* flags: PF_KTHREAD | PF_WQ_WORKER */
	U64(2900000000ull), U64(2100000000ull), /* prev_cputime */
	U64(999), U64(7),			/* run_delay max, min */
	/* delays: blkio..irq, count, total, max, min */
	U64(1), U64(100), U64(60), U64(40), U64(2), U64(200), U64(110), U64(90),
	U64(3), U64(300), U64(120), U64(80), U64(4), U64(400), U64(130),
	U64(70), U64(5), U64(500), U64(140), U64(60), U64(6), U64(600),
	U64(150), U64(50), U64(7), U64(700), U64(160), U64(40), U64(1100),
	U64(5100), /* hiwater_rss, hiwater_vm (pages) */
	/* cpus_mask: CPUs 0, 2, 127, 128, 255 */
	U64(0x5), U64(0x8000000000000000ull), U64(0x1),
	U64(0x8000000000000000ull),
	/* version 4: sig_seq, nr_threads, then the signal block */
	U32(6), U32(3), U64(1001), U64(1002), U64(1003), U64(1004), U64(1005),
	U64(1006), U64(1007), U64(1008), U64(1009), U64(1010), U64(1011),
	U64(1012), U64(1013), U64(1014), U64(1015), U64(1016), U64(1017),
	U64(1018),
	/* version 5: cg_set */
	U64(0xffff888012345678ull),
	/* version 6: mm_id, exe_id, exec_id, mm_seq, mm_pad */
	U64(0xffff888087654320ull), U64(0xffff888011112220ull), U64(3),
	U32(1234), U32(0)};

/* Offsets into rec1 of what the garbling tests break. */
enum {
	OFF_SIZE = 0,
	OFF_VERSION = 2,
	OFF_PRESENT = 4,
	OFF_TGID = 8,
	OFF_PID = 12,
	OFF_COMM = 152
};

static void test_layout(void **s)
{
	(void)s;
	assert_int_equal(sizeof(rec1), sizeof(struct ctp_bpftask_rec));
	assert_int_equal(offsetof(struct ctp_bpftask_rec, comm), OFF_COMM);
	assert_int_equal(offsetof(struct ctp_bpftask_rec, pid), OFF_PID);
}

static void test_two_records(void **s)
{
	unsigned char buf[2 * sizeof(rec1) + 1];
	struct ctp_bpftask_rec r;
	size_t off = 0;
	(void)s;
	/* At an odd address: the parser needs no alignment. */
	memcpy(buf + 1, rec1, sizeof(rec1));
	memcpy(buf + 1 + sizeof(rec1), rec1, sizeof(rec1));
	buf[1 + sizeof(rec1) + OFF_PID] = 0x94; /* tid 4244 */
	assert_int_equal(
		ctp_bpftask_rec_next(buf + 1, 2 * sizeof(rec1), &off, &r), 1);
	assert_int_equal(off, sizeof(rec1));
	assert_int_equal(r.tgid, 4242);
	assert_int_equal(r.pid, 4243);
	assert_int_equal(r.present, 0xfffffff);
	assert_true(r.start_boottime == 123456789012ull);
	assert_int_equal(r.minflt, 11);
	assert_int_equal(r.majflt, 2);
	assert_int_equal(r.nvcsw, 33);
	assert_int_equal(r.nivcsw, 4);
	assert_true(r.sum_exec_runtime == 5000000005ull);
	assert_int_equal(r.run_delay, 66666);
	assert_int_equal(r.pcount, 77);
	assert_int_equal(r.rchar, 8);
	assert_int_equal(r.wchar, 9);
	assert_int_equal(r.syscr, 10);
	assert_int_equal(r.syscw, 11);
	assert_int_equal(r.read_bytes, 4096);
	assert_int_equal(r.write_bytes, 8192);
	assert_int_equal(r.cancelled_write_bytes, 12288);
	assert_true(r.utime == 3000000000ull);
	assert_true(r.stime == 2000000000ull);
	assert_string_equal(r.comm, "worker-3");
	assert_int_equal(r.state, 0x402);
	assert_int_equal(r.exit_state, 0);
	assert_int_equal(r.prio, 120);
	assert_int_equal(r.static_prio, 125);
	assert_int_equal(r.policy, 3);
	assert_int_equal(r.cpu, 1);
	assert_int_equal(r.flags, 0x00200020);
	assert_true(r.prev_utime == 2900000000ull);
	assert_true(r.prev_stime == 2100000000ull);
	assert_int_equal(r.run_delay_max, 999);
	assert_int_equal(r.run_delay_min, 7);
	assert_int_equal(r.delays[CTP_BPFTASK_FAM_IRQ][1], 700);
	assert_int_equal(r.delays[CTP_BPFTASK_FAM_BLKIO][3], 40);
	assert_int_equal(r.hiwater_rss, 1100);
	assert_int_equal(r.hiwater_vm, 5100);
	assert_true(r.cpus[0] == 0x5);
	assert_true(r.cpus[1] == 0x8000000000000000ull);
	assert_true(r.cpus[2] == 0x1);
	assert_true(r.cg_set == 0xffff888012345678ull);
	assert_true(r.mm_id == 0xffff888087654320ull);
	assert_true(r.exe_id == 0xffff888011112220ull);
	assert_int_equal(r.exec_id, 3);
	assert_int_equal(r.mm_seq, 1234);
	assert_true(r.cpus[3] == 0x8000000000000000ull);
	assert_int_equal(r.sig_seq, 6);
	assert_int_equal(r.nr_threads, 3);
	assert_int_equal(r.sig_utime, 1001);
	assert_int_equal(r.sig_rtime, 1003);
	assert_int_equal(r.sig_prev_stime, 1005);
	assert_int_equal(r.sig_cmajflt, 1009);
	assert_int_equal(r.sig_cstime, 1011);
	assert_int_equal(r.sig_io[0], 1012);
	assert_int_equal(r.sig_io[6], 1018);
	assert_int_equal(
		ctp_bpftask_rec_next(buf + 1, 2 * sizeof(rec1), &off, &r), 1);
	assert_int_equal(r.pid, 4244);
	assert_int_equal(off, 2 * sizeof(rec1));
	assert_int_equal(
		ctp_bpftask_rec_next(buf + 1, 2 * sizeof(rec1), &off, &r), 0);
}

static void test_empty(void **s)
{
	struct ctp_bpftask_rec r;
	size_t off = 0;
	(void)s;
	assert_int_equal(ctp_bpftask_rec_next("", 0, &off, &r), 0);
	off = 1;
	assert_int_equal(ctp_bpftask_rec_next("", 0, &off, &r), -EBADMSG);
}

/* A short tail is an error that reads nothing past the buffer (a heap
 * block of exactly the short length: ASan sees any overread) and leaves
 * *off and *out alone. */
static void test_short(void **s)
{
	struct ctp_bpftask_rec r, before;
	(void)s;
	for (size_t len = 1; len < sizeof(rec1); len++) {
		unsigned char *b = malloc(len);
		size_t off = 0;
		assert_non_null(b);
		memcpy(b, rec1, len);
		memset(&r, 0x5a, sizeof(r));
		before = r;
		assert_int_equal(ctp_bpftask_rec_next(b, len, &off, &r),
				 -EBADMSG);
		assert_int_equal(off, 0);
		assert_memory_equal(&r, &before, sizeof(r));
		free(b);
	}
	/* A whole record and a tail. */
	unsigned char two[sizeof(rec1) + 100];
	size_t off = 0;
	memcpy(two, rec1, sizeof(rec1));
	memcpy(two + sizeof(rec1), rec1, 100);
	assert_int_equal(ctp_bpftask_rec_next(two, sizeof(two), &off, &r), 1);
	assert_int_equal(ctp_bpftask_rec_next(two, sizeof(two), &off, &r),
			 -EBADMSG);
	assert_int_equal(off, sizeof(rec1));
}

static void garbled(size_t at, const unsigned char *bytes, size_t n)
{
	unsigned char b[sizeof(rec1)];
	struct ctp_bpftask_rec r;
	size_t off = 0;
	memcpy(b, rec1, sizeof(b));
	memcpy(b + at, bytes, n);
	if (ctp_bpftask_rec_next(b, sizeof(b), &off, &r) != -EBADMSG)
		fail_msg("bytes at %zu accepted", at);
	assert_int_equal(off, 0);
}

static void test_garbled(void **s)
{
	static const unsigned char size168[] = {U16(168)};
	static const unsigned char size503[] = {U16(503)};
	static const unsigned char version1[] = {U16(1)};
	static const unsigned char version2[] = {U16(2)};
	static const unsigned char version0[] = {U16(0)};
	static const unsigned char present8[] = {U32(0x10000000)};
	static const unsigned char version4[] = {U16(4)};
	static const unsigned char version5[] = {U16(5)};
	static const unsigned char size664[] = {U16(664)};
	static const unsigned char version3[] = {U16(3)};
	static const unsigned char zero[] = {U32(0)};
	static const unsigned char minus1[] = {U32(0xffffffffu)};
	static const unsigned char nonul[] = "abcdefghijklmnop";
	(void)s;
	garbled(OFF_SIZE, size168, sizeof(size168));
	garbled(OFF_SIZE, size503, sizeof(size503));
	garbled(OFF_VERSION, version1, sizeof(version1));
	garbled(OFF_VERSION, version0, sizeof(version0));
	garbled(OFF_VERSION, version2, sizeof(version2));
	garbled(OFF_VERSION, version3, sizeof(version3));
	garbled(OFF_VERSION, version4, sizeof(version4));
	garbled(OFF_VERSION, version5, sizeof(version5));
	garbled(OFF_SIZE, size664, sizeof(size664));
	garbled(OFF_PRESENT, present8, sizeof(present8));
	garbled(OFF_TGID, zero, sizeof(zero));
	garbled(OFF_TGID, minus1, sizeof(minus1));
	garbled(OFF_PID, zero, sizeof(zero));
	garbled(OFF_PID, minus1, sizeof(minus1));
	garbled(OFF_COMM, nonul, 16);
}

/* Each block family's valid bits follow its own two present bits alone
 * (count and total; max and min), under delays_on, whatever the others'. */
static void test_to_src_families(void **s)
{
	struct ctp_bpftask_conv conv = {.user_hz = 100, .delays_on = 1};
	struct ctp_bpftask_rec r;
	struct ctp_src_task t;
	(void)s;
	memcpy(&r, rec1, sizeof(r));
	for (unsigned f = 0; f < CTP_BPFTASK_N_FAM; f++) {
		for (unsigned combo = 0; combo < 16; combo++) {
			__u32 others = combo & 4 ? 0x7fu : 0;
			r.present = CTP_BPFTASK_HAS_ALL;
			for (unsigned g = 0; g < CTP_BPFTASK_N_FAM; g++)
				if (g != f && !((others >> g) & 1))
					r.present &=
						~(CTP_BPFTASK_HAS_DELAY(g) |
						  CTP_BPFTASK_HAS_DELAY_MAXMIN(
							  g));
			if (!(combo & 1))
				r.present &= ~CTP_BPFTASK_HAS_DELAY(f);
			if (!(combo & 2))
				r.present &= ~CTP_BPFTASK_HAS_DELAY_MAXMIN(f);
			conv.delays_on = !(combo & 8);
			ctp_bpftask_to_src(&r, &conv, 0, 0, &t);
			for (unsigned g = 0; g < CTP_BPFTASK_N_FAM; g++) {
				unsigned has = g == f		   ? combo & 3
					       : (others >> g) & 1 ? 3
								   : 0;
				for (unsigned part = 0; part < 4; part++) {
					unsigned i =
						CTP_SRC_TASK_DELAY(g + 1, part);
					bool want = conv.delays_on &&
						    ((has >> (part / 2)) & 1);
					if (((t.valid[0] >> i) & 1) != want)
						fail_msg("family %u part %u "
							 "(f %u combo %u)",
							 g + 1, part, f, combo);
				}
			}
		}
	}
}

/* A stream checked in the pieces reads return (ctp_bpftask_rec_more after
 * each, ctp_bpftask_rec_end) or in whole records (ctp_bpftask_rec_add): whole
 * records and pieces that end inside one, a record garbled first, in the middle
 * or last, a short tail, none: always what ctp_bpftask_rec_check says of the
 * whole. */
static void test_scan(void **s)
{
	enum { N = 7 };
	static unsigned char b[N * sizeof(rec1) + 100];
	uint64_t x = 0x2545f4914f6cdd1dull;
	(void)s;
	for (int shape = 0; shape < 6; shape++) {
		size_t len = N * sizeof(rec1);
		for (size_t i = 0; i < N; i++)
			memcpy(b + i * sizeof(rec1), rec1, sizeof(rec1));
		if (shape == 1 || shape == 2 || shape == 3) /* garbled */
			b[(shape == 1	? 0
			   : shape == 2 ? 3
					: N - 1) *
				  sizeof(rec1) +
			  OFF_VERSION] = 9;
		if (shape == 4) { /* a tail */
			memcpy(b + len, rec1, 100);
			len += 100;
		}
		if (shape == 5)
			len = 0;
		long want = ctp_bpftask_rec_check(b, len);
		assert_int_equal(want, shape == 0   ? N
				       : shape == 5 ? 0
						    : -EBADMSG);
		for (int split = 0; split < 50; split++) {
			struct ctp_bpftask_rec_scan sc = {0};
			size_t got = 0;
			while (got < len) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				/* Whole records, or any cut (a read's end). */
				size_t step =
					split % 2 ? 1 + x % 1500
						  : sizeof(rec1) * (1 + x % 3);
				got = got + step > len ? len : got + step;
				ctp_bpftask_rec_more(&sc, b, got);
			}
			assert_int_equal(ctp_bpftask_rec_end(&sc, len), want);
			/* Whole records checked where they are (a run's, before
			 * its copy), a tail after them read as a stream. */
			sc = (struct ctp_bpftask_rec_scan){0};
			got = 0;
			while (len - got >= sizeof(rec1)) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				size_t step = sizeof(rec1) * (1 + x % 3);
				if (step >
				    (len - got) / sizeof(rec1) * sizeof(rec1))
					step = (len - got) / sizeof(rec1) *
					       sizeof(rec1);
				ctp_bpftask_rec_add(&sc, b + got, step);
				got += step;
			}
			ctp_bpftask_rec_more(&sc, b, len);
			assert_int_equal(ctp_bpftask_rec_end(&sc, len), want);
		}
	}
}

/* The kernel's rules on literal states (include/linux/sched.h values). */
static void test_state_char(void **s)
{
	(void)s;
	assert_int_equal(ctp_bpftask_state_char(0x0, 0), 'R');
	assert_int_equal(ctp_bpftask_state_char(0x1, 0), 'S');
	assert_int_equal(ctp_bpftask_state_char(0x2, 0), 'D');
	/* TASK_KILLABLE = WAKEKILL | UNINTERRUPTIBLE */
	assert_int_equal(ctp_bpftask_state_char(0x102, 0), 'D');
	/* TASK_IDLE = UNINTERRUPTIBLE | NOLOAD */
	assert_int_equal(ctp_bpftask_state_char(0x402, 0), 'I');
	/* NOLOAD alone is not idle. */
	assert_int_equal(ctp_bpftask_state_char(0x400, 0), 'R');
	/* TASK_STOPPED = WAKEKILL | __TASK_STOPPED */
	assert_int_equal(ctp_bpftask_state_char(0x104, 0), 'T');
	/* TASK_TRACED (6.0+: __TASK_TRACED) */
	assert_int_equal(ctp_bpftask_state_char(0x8, 0), 't');
	/* a zombie: __state TASK_DEAD, exit_state EXIT_ZOMBIE */
	assert_int_equal(ctp_bpftask_state_char(0x80, 0x20), 'Z');
	/* dead: EXIT_DEAD; EXIT_TRACE = ZOMBIE | DEAD shows Z */
	assert_int_equal(ctp_bpftask_state_char(0x80, 0x10), 'X');
	assert_int_equal(ctp_bpftask_state_char(0x80, 0x30), 'Z');
	/* TASK_PARKED (kthread_parkme: PARKED | TASK_IDLE? no: PARKED) */
	assert_int_equal(ctp_bpftask_state_char(0x40, 0), 'P');
	/* TASK_RTLOCK_WAIT and TASK_FROZEN are reported as D */
	assert_int_equal(ctp_bpftask_state_char(0x1000, 0), 'D');
	assert_int_equal(ctp_bpftask_state_char(0x8000 | 0x1, 0), 'D');
	/* TASK_FREEZABLE | INTERRUPTIBLE stays S; WAKING alone is R */
	assert_int_equal(ctp_bpftask_state_char(0x2000 | 0x1, 0), 'S');
	assert_int_equal(ctp_bpftask_state_char(0x200, 0), 'R');
	/* idle wins over a report bit; the frozen rule over idle */
	assert_int_equal(ctp_bpftask_state_char(0x402 | 0x1, 0), 'I');
	assert_int_equal(ctp_bpftask_state_char(0x402 | 0x8000, 0), 'D');
}

static void adj(uint64_t ut, uint64_t st, uint64_t rt, uint64_t pu, uint64_t ps,
		uint64_t want_u, uint64_t want_s)
{
	__u64 u = pu, s = ps;
	ctp_cputime_adjust(ut, st, rt, &u, &s);
	if (u != want_u || s != want_s)
		fail_msg("adjust(%llu, %llu, %llu, prev %llu/%llu) = %llu/%llu,"
			 " want %llu/%llu",
			 (unsigned long long)ut, (unsigned long long)st,
			 (unsigned long long)rt, (unsigned long long)pu,
			 (unsigned long long)ps, (unsigned long long)u,
			 (unsigned long long)s, (unsigned long long)want_u,
			 (unsigned long long)want_s);
}

/* cputime_adjust() on literal cases, worked by hand. */
static void test_cputime_adjust(void **s)
{
	(void)s;
	/* The split scaled to rtime: 3:1 of 1000 -> 750/250. */
	adj(3, 1, 1000, 0, 0, 750, 250);
	/* Floor of stime * rtime / total: 1 * 1000 / 3 = 333. */
	adj(2, 1, 1000, 0, 0, 667, 333);
	/* stime 0: all user; utime 0: all system; both 0: all user. */
	adj(5, 0, 1000, 0, 0, 1000, 0);
	adj(0, 5, 1000, 0, 0, 0, 1000);
	adj(0, 0, 1000, 0, 0, 1000, 0);
	/* prev ahead of (or at) rtime: prev unchanged. */
	adj(3, 1, 1000, 900, 200, 900, 200);
	adj(3, 1, 1000, 800, 200, 800, 200);
	/* stime may not go down: scaled 250 < prev 400 -> 400, utime the
	 * rest. */
	adj(3, 1, 1000, 100, 400, 600, 400);
	/* utime may not go down: scaled 750 < prev 800 -> 800, stime the
	 * rest. */
	adj(3, 1, 1000, 800, 100, 800, 200);
	adj(1, 1, 1000, 550, 449, 550, 450);
	/* The clamps keep the sum at rtime: stime held at prev, utime
	 * grows by all of the new run time. */
	adj(1, 1, 2000, 500, 1400, 600, 1400);
	/* A 128-bit product: stime * rtime overflows 64 bits. 2^40 ticks of
	 * each, rtime 2^62: half each, exactly. */
	adj(1ull << 40, 1ull << 40, 1ull << 62, 0, 0, 1ull << 61, 1ull << 61);
	/* A 64-bit product would wrap: stime 3e18 * rtime 8e18 / 4e18 ->
	 * stime 6e18. */
	adj(1000000000000000000ull, 3000000000000000000ull,
	    8000000000000000000ull, 0, 0, 2000000000000000000ull,
	    6000000000000000000ull);
	/* Floor, not round: 7 * 10 / 9 = 7.77 -> 7. */
	adj(2, 7, 10, 0, 0, 3, 7);
}

static void test_clock_t(void **s)
{
	(void)s;
	assert_int_equal(ctp_nsec_to_clock_t(0, 100), 0);
	assert_int_equal(ctp_nsec_to_clock_t(9999999, 100), 0);
	assert_int_equal(ctp_nsec_to_clock_t(10000000, 100), 1);
	assert_int_equal(ctp_nsec_to_clock_t(123456789012ull, 100), 12345);
	assert_int_equal(ctp_nsec_to_clock_t(123456789012ull, 1000), 123456);
	assert_int_equal(ctp_nsec_to_clock_t(123456789012ull, 250), 30864);
	/* The constant divisor of USER_HZ 100 against the general one, at
	 * the ends of its range and around each tick. */
	static const uint64_t ns[] = {UINT64_MAX, UINT64_MAX - 1,
				      18446744073700000000ull, 1,
				      99999999999ull};
	for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++)
		assert_true(ctp_nsec_to_clock_t(ns[i], 100) ==
			    ns[i] / (1000000000ull / 100));
	for (uint64_t t = 1; t < 100000; t += 7) {
		assert_true(ctp_nsec_to_clock_t(t * 10000000 - 1, 100) ==
			    t - 1);
		assert_true(ctp_nsec_to_clock_t(t * 10000000, 100) == t);
	}
}

static void test_hiwater(void **s)
{
	struct ctp_bpftask_rec r;
	__u64 rss, vm;
	(void)s;
	/* What the program works out from the mm: rss sum 600 + 500 + (-50
	 * clamped to 0) = 1100 > hiwater 1000. */
	ctp_bpftask_mm_marks(1000, 5000, 5100, 600, 500, -50, &rss, &vm);
	assert_int_equal(rss, 1100);
	assert_int_equal(vm, 5100);
	/* The recorded marks win when above the current values. */
	ctp_bpftask_mm_marks(2000, 6000, 5100, 600, 500, -50, &rss, &vm);
	assert_int_equal(rss, 2000);
	assert_int_equal(vm, 6000);
	/* Every count below 0: clamped each, not summed first. */
	ctp_bpftask_mm_marks(0, 0, 0, -5, 3, -1, &rss, &vm);
	assert_int_equal(rss, 3);
	/* The record's pages in bytes. */
	memset(&r, 0, sizeof(r));
	r.present = CTP_BPFTASK_HAS_MM;
	r.hiwater_rss = 1100;
	r.hiwater_vm = 5100;
	assert_int_equal(ctp_bpftask_hiwater(&r, 4096, &rss, &vm), 0);
	assert_int_equal(rss, 1100 * 4096);
	assert_int_equal(vm, 5100 * 4096);
	r.present = 0;
	assert_int_equal(ctp_bpftask_hiwater(&r, 4096, &rss, &vm), -ENODATA);
}

/* cpu_active_mask from a thread's sched_getaffinity() and cpus_mask:
 * only where that cpus_mask covers every possible CPU. */
static void test_active_cpus(void **s)
{
	const __u64 possible[4] = {0xff, 0, 0, 0}; /* CPUs 0-7 */
	const __u64 got[4] = {0xf7, 0, 0, 0};	   /* 3 is not active */
	__u64 cpus[4] = {~0ull, ~0ull, ~0ull, ~0ull}, active[4] = {9, 9, 9, 9};
	(void)s;
	assert_int_equal(ctp_bpftask_active_cpus(got, cpus, possible, active),
			 0);
	assert_true(active[0] == 0xf7 && !active[1] && !active[2] &&
		    !active[3]);
	/* Just the possible CPUs is enough. */
	cpus[0] = 0xff;
	cpus[1] = cpus[2] = cpus[3] = 0;
	assert_int_equal(ctp_bpftask_active_cpus(got, cpus, possible, active),
			 0);
	/* Pinned off CPU 7: its mask says nothing of CPU 7. */
	cpus[0] = 0x7f;
	active[0] = 9;
	assert_int_equal(ctp_bpftask_active_cpus(got, cpus, possible, active),
			 -ENODATA);
	assert_true(active[0] == 9);
	/* A possible CPU in a high word. */
	const __u64 possible2[4] = {0x1, 0, 0, 0x8000000000000000ull};
	cpus[0] = 0x1;
	assert_int_equal(ctp_bpftask_active_cpus(got, cpus, possible2, active),
			 -ENODATA);
	cpus[3] = 0x8000000000000000ull;
	assert_int_equal(ctp_bpftask_active_cpus(got, cpus, possible2, active),
			 0);
}

static uint64_t val(const struct ctp_src_task *t, unsigned which)
{
	uint64_t v = 0xdeadbeef;
	if (!ctp_src_task_get(t, sizeof(*t), which, &v))
		fail_msg("value %u absent", which);
	return v;
}

/* The record in the source's layout and units. */
static void test_to_src(void **s)
{
	struct ctp_bpftask_rec r;
	struct ctp_src_task t;
	struct ctp_bpftask_conv conv = {
		.user_hz = 100,
		.page_size = 4096,
		.times = 1,
		.delays_on = 1,
		.cpu_delay = 1,
		.cpus_on = 1,
		/* CPU 0 and 255 not active */
		.active = {~1ull, ~0ull, 0, 0x7fffffffffffffffull}};
	size_t off = 0;
	uint64_t v;
	(void)s;
	assert_int_equal(ctp_bpftask_rec_next(rec1, sizeof(rec1), &off, &r), 1);
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	assert_int_equal(t.abi, 1);
	assert_int_equal(t.size, sizeof(t));
	assert_int_equal(val(&t, CTP_SRC_TASK_MINFLT), 11);
	assert_int_equal(val(&t, CTP_SRC_TASK_MAJFLT), 2);
	assert_int_equal(val(&t, CTP_SRC_TASK_UTIME), 21);
	assert_int_equal(val(&t, CTP_SRC_TASK_STIME), 34);
	assert_int_equal((int64_t)val(&t, CTP_SRC_TASK_PRIORITY), 20);
	assert_int_equal((int64_t)val(&t, CTP_SRC_TASK_NICE), 5);
	assert_int_equal(val(&t, CTP_SRC_TASK_START_TIME), 12345);
	assert_int_equal(val(&t, CTP_SRC_TASK_PROCESSOR), 1);
	assert_int_equal(val(&t, CTP_SRC_TASK_RT_PRIORITY), 0);
	assert_int_equal(val(&t, CTP_SRC_TASK_POLICY), 3);
	assert_int_equal(val(&t, CTP_SRC_TASK_STATE), 'I');
	assert_int_equal(val(&t, CTP_SRC_TASK_NVCSW), 33);
	assert_int_equal(val(&t, CTP_SRC_TASK_NIVCSW), 4);
	assert_int_equal(val(&t, CTP_SRC_TASK_RCHAR), 8);
	assert_int_equal(val(&t, CTP_SRC_TASK_SYSCW), 11);
	assert_int_equal(val(&t, CTP_SRC_TASK_CANCELLED_WRITE_BYTES), 12288);
	assert_true(val(&t, CTP_SRC_TASK_RUN_NS) == 5000000005ull);
	assert_int_equal(val(&t, CTP_SRC_TASK_RUN_DELAY_NS), 66666);
	assert_int_equal(val(&t, CTP_SRC_TASK_TIMESLICES), 77);
	/* cpu family from sched_info */
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(0, 0)), 77);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(0, 1)), 66666);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(0, 2)), 999);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(0, 3)), 7);
	/* blkio is family 1, irq family 7 */
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(1, 0)), 1);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(1, 1)), 100);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(1, 2)), 60);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(1, 3)), 40);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(7, 0)), 7);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(7, 1)), 700);
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(7, 3)), 40);
	assert_int_equal(val(&t, CTP_SRC_TASK_HIWATER_RSS), 1100 * 4096);
	assert_int_equal(val(&t, CTP_SRC_TASK_HIWATER_VM), 5100 * 4096);
	/* sched_getaffinity()'s mask: cpus_mask and cpu_active_mask. */
	assert_true(val(&t, CTP_SRC_TASK_CPUS(0)) == 0x4);
	assert_true(val(&t, CTP_SRC_TASK_CPUS(1)) == 0x8000000000000000ull);
	assert_true(val(&t, CTP_SRC_TASK_CPUS(2)) == 0);
	assert_true(val(&t, CTP_SRC_TASK_CPUS(3)) == 0);
	assert_int_equal(CTP_SRC_TASK_CPUS(3), CTP_SRC_TASK_CPUS3);
	/* No mask without cpu_active_mask, nor from a record without one. */
	conv.cpus_on = 0;
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	for (unsigned w = 0; w < 4; w++)
		assert_false(ctp_src_task_get(&t, sizeof(t),
					      CTP_SRC_TASK_CPUS(w), &v));
	conv.cpus_on = 1;
	r.present &= ~CTP_BPFTASK_HAS_CPUS;
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_CPUS(0), &v));
	r.present |= CTP_BPFTASK_HAS_CPUS;

	/* What the kernel lacks (or the host does not measure) is absent:
	 * a user task whose mm the kernel's layout hides (no HAS_MM). */
	r.flags &= ~CTP_PF_KTHREAD;
	r.present &=
		~(CTP_BPFTASK_HAS_CPU | CTP_BPFTASK_HAS_STATE |
		  CTP_BPFTASK_HAS_MM | CTP_BPFTASK_HAS_DELAY(6) |
		  CTP_BPFTASK_HAS_DELAY_MAXMIN(6) |
		  CTP_BPFTASK_HAS_RUN_DELAY_MAXMIN | CTP_BPFTASK_HAS_IO_BYTES);
	conv.times = 0;
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_PROCESSOR, &v));
	assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_STATE, &v));
	assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v));
	assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_STIME, &v));
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_HIWATER_RSS, &v));
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_READ_BYTES, &v));
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_DELAY(7, 0), &v));
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_DELAY(0, 2), &v));
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(6, 0)), 6);
	assert_int_equal(val(&t, CTP_SRC_TASK_RCHAR), 8);
	/* A kernel thread has no mm: the reply's marks are 0 and 0
	 * (xacct_add_tsk()), offered so taskstats needs no query. */
	r.flags |= CTP_PF_KTHREAD;
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	assert_int_equal(val(&t, CTP_SRC_TASK_HIWATER_RSS), 0);
	assert_int_equal(val(&t, CTP_SRC_TASK_HIWATER_VM), 0);
	/* kernel.task_delayacct=0: no block family; the cpu family stays
	 * (delayacct_add_tsk() copies sched_info first). */
	conv.delays_on = 0;
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_DELAY(1, 0), &v));
	assert_int_equal(val(&t, CTP_SRC_TASK_DELAY(0, 0)), 77);
	conv.cpu_delay = 0;
	ctp_bpftask_to_src(&r, &conv, 21, 34, &t);
	assert_false(
		ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_DELAY(0, 0), &v));
	assert_int_equal(val(&t, CTP_SRC_TASK_TIMESLICES), 77);
}

/* The init check on literal values: equal, one differs (its bit off, the
 * others kept), a value one side lacks (not judged), the names. */
static void test_check(void **s)
{
	struct ctp_src_task pass, files;
	uint64_t off[2] = {0, 0};
	(void)s;
	memset(&pass, 0, sizeof(pass));
	pass.abi = files.abi = 1;
	pass.size = sizeof(pass);
	files = pass;
	ctp_bpftask_src_put(&pass, CTP_SRC_TASK_UTIME, 12);
	ctp_bpftask_src_put(&files, CTP_SRC_TASK_UTIME, 12);
	ctp_bpftask_src_put(&pass, CTP_SRC_TASK_NIVCSW, 4);
	ctp_bpftask_src_put(&files, CTP_SRC_TASK_NIVCSW, 4);
	/* Only the pass has a watermark, only the files a majflt. */
	ctp_bpftask_src_put(&pass, CTP_SRC_TASK_HIWATER_VM, 4096);
	ctp_bpftask_src_put(&files, CTP_SRC_TASK_MAJFLT, 9);
	assert_int_equal(ctp_bpftask_check(&pass, &files, off), 0);
	assert_true(off[0] == 0 && off[1] == 0);

	ctp_bpftask_src_put(&files, CTP_SRC_TASK_UTIME, 13);
	ctp_bpftask_src_put(&pass, CTP_SRC_TASK_HIWATER_VM, 0);
	assert_int_equal(ctp_bpftask_check(&pass, &files, off), 1);
	assert_true(off[0] == UINT64_C(1) << CTP_SRC_TASK_UTIME);
	assert_true(off[1] == 0);
	/* Or'ed in: a second differing value adds its bit. */
	ctp_bpftask_src_put(&pass, CTP_SRC_TASK_NIVCSW, 5);
	assert_int_equal(ctp_bpftask_check(&pass, &files, off), 2);
	assert_true(off[0] == ((UINT64_C(1) << CTP_SRC_TASK_UTIME) |
			       (UINT64_C(1) << CTP_SRC_TASK_NIVCSW)));

	assert_string_equal(ctp_bpftask_value_name(CTP_SRC_TASK_UTIME),
			    "stat utime");
	assert_string_equal(ctp_bpftask_value_name(CTP_SRC_TASK_TIMESLICES),
			    "schedstat timeslices");
	assert_null(ctp_bpftask_value_name(CTP_SRC_TASK_HIWATER_RSS));
	assert_int_equal(ctp_bpftask_value_by_name("utime"),
			 CTP_SRC_TASK_UTIME);
	assert_int_equal(ctp_bpftask_value_by_name("io rchar"),
			 CTP_SRC_TASK_RCHAR);
	assert_int_equal(ctp_bpftask_value_by_name("stat"), -1);
	assert_int_equal(ctp_bpftask_value_by_name("hiwater_rss"), -1);
	/* The affinity words, named past the unnamed watermarks. */
	assert_string_equal(ctp_bpftask_value_name(CTP_SRC_TASK_CPUS(1)),
			    "affinity cpus1");
	assert_int_equal(ctp_bpftask_value_by_name("cpus3"),
			 CTP_SRC_TASK_CPUS(3));
}

/* ---- The process source ---------------------------------------------- */

/* A process 500 of three threads (500 the leader, 501, 502) and what
 * exited threads left in its signal block, all of one stats_lock
 * sequence: every value of the file at one instant. */
static void proc_recs(struct ctp_bpftask_rec r[3])
{
	static const struct {
		int pid;
		__u64 minflt, majflt, ut, st, rt, io;
	} t[3] = {
		{500, 10, 1, 2000000000ull, 1000000000ull, 2500000000ull, 1},
		{501, 20, 0, 1000000000ull, 1000000000ull, 2000000000ull, 2},
		{502, 30, 2, 0, 0, 500000000ull, 3},
	};
	memset(r, 0, 3 * sizeof(*r));
	for (int i = 0; i < 3; i++) {
		r[i].size = sizeof(*r);
		r[i].version = CTP_BPFTASK_REC_VERSION;
		r[i].present = CTP_BPFTASK_HAS_SIG_SEQ |
			       CTP_BPFTASK_HAS_IO_XACCT |
			       CTP_BPFTASK_HAS_IO_BYTES | CTP_BPFTASK_HAS_PREV;
		r[i].tgid = 500;
		r[i].pid = t[i].pid;
		r[i].sig_seq = 8;
		r[i].minflt = t[i].minflt;
		r[i].majflt = t[i].majflt;
		r[i].utime = t[i].ut;
		r[i].stime = t[i].st;
		r[i].sum_exec_runtime = t[i].rt;
		/* io counters: thread i has (i + 1) * io of each */
		r[i].rchar = t[i].io;
		r[i].wchar = 2 * t[i].io;
		r[i].syscr = 3 * t[i].io;
		r[i].syscw = 4 * t[i].io;
		r[i].read_bytes = 5 * t[i].io;
		r[i].write_bytes = 6 * t[i].io;
		r[i].cancelled_write_bytes = 7 * t[i].io;
	}
	r[0].present |= CTP_BPFTASK_HAS_SIG | CTP_BPFTASK_HAS_SIG_PREV;
	r[0].start_boottime = 777;
	r[0].nr_threads = 3;
	r[0].sig_utime = 1000000000ull;
	r[0].sig_stime = 1000000000ull;
	r[0].sig_rtime = 1500000000ull;
	r[0].sig_minflt = 100;
	r[0].sig_majflt = 5;
	r[0].sig_cminflt = 1000;
	r[0].sig_cmajflt = 7;
	r[0].sig_cutime = 1234000000ull;
	r[0].sig_cstime = 500000000ull;
	for (int i = 0; i < 7; i++)
		r[0].sig_io[i] = 1000 * (__u64)(i + 1);
}

static const struct ctp_bpftask_conv proc_conv = {.user_hz = 100, .times = 1};

static uint64_t pval(const struct ctp_src_process *p, unsigned which)
{
	uint64_t v = 0xdeadbeef;
	if (!ctp_src_process_get(p, sizeof(*p), which, &v))
		fail_msg("process value %u absent", which);
	return v;
}

static bool phas(const struct ctp_src_process *p, unsigned which)
{
	uint64_t v;
	return ctp_src_process_get(p, sizeof(*p), which, &v);
}

/* Which values a process with these records offers: the block's alone
 * (num_threads, the children's) or every one. */
#define P_BLOCK_ONLY                                                           \
	((1u << CTP_SRC_PROC_NUM_THREADS) | (1u << CTP_SRC_PROC_CMINFLT) |     \
	 (1u << CTP_SRC_PROC_CMAJFLT) | (1u << CTP_SRC_PROC_CUTIME) |          \
	 (1u << CTP_SRC_PROC_CSTIME))
#define P_ALL                                                                  \
	(((1u << CTP_SRC_PROC_N_VALUES) - 1) & ~(1u << CTP_SRC_PROC_MM_GEN))

static void offers(const struct ctp_bpftask_rec *r, const __u32 *idx, size_t n,
		   const struct ctp_bpftask_conv *conv, unsigned want)
{
	struct ctp_src_process p;
	unsigned got = 0;
	assert_int_equal(ctp_bpftask_process(r, idx, n, conv, &p), 0);
	for (unsigned i = 0; i < CTP_SRC_PROC_N_VALUES; i++)
		if (phas(&p, i))
			got |= 1u << i;
	if (got != want)
		fail_msg("offered 0x%x, want 0x%x", got, want);
}

/* Every value, worked by hand: the block plus each thread, the times
 * through cputime_adjust() of the group sums. */
static void test_process(void **s)
{
	struct ctp_bpftask_rec r[3];
	struct ctp_src_process p;
	(void)s;
	proc_recs(r);
	assert_int_equal(ctp_bpftask_process(r, NULL, 3, &proc_conv, &p), 0);
	assert_int_equal(p.abi, 1);
	assert_int_equal(p.size, sizeof(p));
	assert_true(p.valid[0] == P_ALL);
	assert_int_equal(pval(&p, CTP_SRC_PROC_NUM_THREADS), 3);
	assert_int_equal(pval(&p, CTP_SRC_PROC_MINFLT), 100 + 10 + 20 + 30);
	assert_int_equal(pval(&p, CTP_SRC_PROC_MAJFLT), 5 + 1 + 0 + 2);
	/* utime 1+2+1+0 = 4 s of samples, stime 1+1+1+0 = 3 s, run time
	 * 1.5+2.5+2+0.5 = 6.5 s: stime 3 * 6.5 / 7 = 2.785714285 s (floor,
	 * ns), utime the rest 3.714285715 s: 371 and 278 ticks. */
	assert_int_equal(pval(&p, CTP_SRC_PROC_UTIME), 371);
	assert_int_equal(pval(&p, CTP_SRC_PROC_STIME), 278);
	assert_int_equal(pval(&p, CTP_SRC_PROC_CMINFLT), 1000);
	assert_int_equal(pval(&p, CTP_SRC_PROC_CMAJFLT), 7);
	assert_int_equal(pval(&p, CTP_SRC_PROC_CUTIME), 123);
	assert_int_equal(pval(&p, CTP_SRC_PROC_CSTIME), 50);
	/* io: the block's 1000 * k plus k * (1 + 2 + 3) of the threads */
	for (unsigned k = 1; k <= 7; k++)
		assert_int_equal(pval(&p, CTP_SRC_PROC_RCHAR + k - 1),
				 1000 * k + 6 * k);
	/* In any order, the leader not first. */
	const __u32 idx[3] = {2, 0, 1};
	struct ctp_src_process q;
	assert_int_equal(ctp_bpftask_process(r, idx, 3, &proc_conv, &q), 0);
	assert_memory_equal(&p, &q, sizeof(p));
}

/* stat's times of the process through cputime_adjust()'s cases, as the
 * thread tests take them (test_cputime_adjust), on the group's sums and
 * signal->prev_cputime. */
static void proc_times(struct ctp_bpftask_rec *r, __u64 prev_u, __u64 prev_s,
		       uint64_t want_u, uint64_t want_s)
{
	struct ctp_src_process p;
	r[0].sig_prev_utime = prev_u;
	r[0].sig_prev_stime = prev_s;
	assert_int_equal(ctp_bpftask_process(r, NULL, 3, &proc_conv, &p), 0);
	if (pval(&p, CTP_SRC_PROC_UTIME) != want_u ||
	    pval(&p, CTP_SRC_PROC_STIME) != want_s)
		fail_msg("prev %llu/%llu: %llu/%llu ticks, want %llu/%llu",
			 (unsigned long long)prev_u, (unsigned long long)prev_s,
			 (unsigned long long)pval(&p, CTP_SRC_PROC_UTIME),
			 (unsigned long long)pval(&p, CTP_SRC_PROC_STIME),
			 (unsigned long long)want_u,
			 (unsigned long long)want_s);
}

static void test_process_times(void **s)
{
	struct ctp_bpftask_rec r[3];
	(void)s;
	proc_recs(r);
	/* Run time 6.5 s, samples 4:3 -> 371/278 as above. */
	proc_times(r, 0, 0, 371, 278);
	/* prev at or past the run time: prev itself (6.6 s). */
	proc_times(r, 4000000000ull, 2600000000ull, 400, 260);
	/* stime may not go down: scaled 2.79 s < prev 3.5 s -> 3.5 s, utime
	 * the rest 3 s. */
	proc_times(r, 100000000ull, 3500000000ull, 300, 350);
	/* utime may not go down: scaled 3.71 s < prev 4.2 s -> 4.2 s,
	 * stime the rest 2.3 s. */
	proc_times(r, 4200000000ull, 100000000ull, 420, 230);
	/* No system sample in the group: all user. */
	proc_recs(r);
	r[0].sig_stime = r[0].stime = r[1].stime = 0;
	proc_times(r, 0, 0, 650, 0);
	/* No user sample: all system. */
	proc_recs(r);
	r[0].sig_utime = r[0].utime = r[1].utime = 0;
	proc_times(r, 0, 0, 0, 650);
	/* No sample at all: all user, as the kernel's stime == 0 case. */
	proc_recs(r);
	for (int i = 0; i < 3; i++)
		r[i].utime = r[i].stime = 0;
	r[0].sig_utime = r[0].sig_stime = 0;
	proc_times(r, 0, 0, 650, 0);
	/* The group's samples overflow 64 bits in the product: 2^40 s of
	 * each, run time 2^62 ns -> half each. */
	proc_recs(r);
	for (int i = 0; i < 3; i++)
		r[i].utime = r[i].stime = r[i].sum_exec_runtime = 0;
	r[0].sig_utime = r[0].sig_stime = 1ull << 40;
	r[0].sig_rtime = 1ull << 62;
	proc_times(r, 0, 0, (1ull << 61) / 10000000, (1ull << 61) / 10000000);
}

/* What is offered when the pass did not see the group whole. */
/* SipHash-2-4's published vectors (key 00..0f; messages 00, 01, ..., of
 * 0, 8, 16 and 40 bytes). */
static void test_siphash(void **s)
{
	static const __u64 key[2] = {0x0706050403020100ull,
				     0x0f0e0d0c0b0a0908ull};
	__u64 w[5];
	(void)s;
	for (int i = 0; i < 5; i++)
		w[i] = 0x0706050403020100ull + 0x0808080808080808ull * (__u64)i;
	assert_true(ctp_bpftask_siphash(key, w, 0) == 0x726fdb47dd0e0e31ull);
	assert_true(ctp_bpftask_siphash(key, w, 1) == 0x93f5f5799a932462ull);
	assert_true(ctp_bpftask_siphash(key, w, 2) == 0x3f2acc7f57c29bdbull);
	assert_true(ctp_bpftask_siphash(key, w, 5) == 0x0e3ea96b5304a7d0ull);
}

/* MM_GEN: offered with the leader's HAS_MM_SEQ and a key; the same for
 * the same mm, exe, exec count, sequence and start; another when any of
 * them moves, or under another key. */
static void test_mm_gen(void **s)
{
	struct ctp_bpftask_rec r[3];
	struct ctp_bpftask_conv conv = proc_conv;
	struct ctp_src_process p;
	uint64_t g0, g;
	(void)s;
	proc_recs(r);
	conv.mm_gen_on = 1;
	conv.mm_key[0] = 0x1234;
	conv.mm_key[1] = 0x5678;
	/* Without HAS_MM_SEQ on the leader (a kernel thread's, an old
	 * kernel's), none; the other threads' records do not count. */
	r[1].present |= CTP_BPFTASK_HAS_MM_SEQ;
	offers(r, NULL, 3, &conv, P_ALL);
	r[0].present |= CTP_BPFTASK_HAS_MM_SEQ;
	r[0].mm_id = 0xffff888012340000ull;
	r[0].exe_id = 0xffff888056780000ull;
	r[0].exec_id = 2;
	r[0].mm_seq = 1000;
	offers(r, NULL, 3, &conv, P_ALL | 1u << CTP_SRC_PROC_MM_GEN);
	/* Without a key, none. */
	conv.mm_gen_on = 0;
	offers(r, NULL, 3, &conv, P_ALL);
	conv.mm_gen_on = 1;
	assert_int_equal(ctp_bpftask_process(r, NULL, 3, &conv, &p), 0);
	g0 = pval(&p, CTP_SRC_PROC_MM_GEN);
	assert_true(g0 != 0);
	/* Nothing of the address is in it: none of its 64 bits equal. */
	assert_true(g0 != r[0].mm_id && g0 != r[0].exe_id);
	/* The other threads' values and counters do not move it. */
	r[1].mm_seq = 77;
	r[2].minflt += 5;
	assert_int_equal(ctp_bpftask_process(r, NULL, 3, &conv, &p), 0);
	assert_true(pval(&p, CTP_SRC_PROC_MM_GEN) == g0);
	assert_true(ctp_bpftask_mm_gen(&r[0], conv.mm_key) == g0);
	/* Each input moves it. */
	__u64 *in[] = {&r[0].start_boottime, &r[0].mm_id, &r[0].exe_id,
		       &r[0].exec_id};
	for (size_t i = 0; i < sizeof(in) / sizeof(*in); i++) {
		*in[i] += 2;
		g = ctp_bpftask_mm_gen(&r[0], conv.mm_key);
		assert_true(g != 0 && g != g0);
		*in[i] -= 2;
	}
	r[0].mm_seq += 2;
	assert_true(ctp_bpftask_mm_gen(&r[0], conv.mm_key) != g0);
	r[0].mm_seq -= 2;
	assert_true(ctp_bpftask_mm_gen(&r[0], conv.mm_key) == g0);
	conv.mm_key[1]++;
	assert_true(ctp_bpftask_mm_gen(&r[0], conv.mm_key) != g0);
}

static void test_process_partial(void **s)
{
	struct ctp_bpftask_rec r[3];
	struct ctp_src_process p;
	struct ctp_bpftask_conv conv = proc_conv;
	(void)s;
	/* No leader record (it is not in the pass): nothing. */
	proc_recs(r);
	assert_int_equal(ctp_bpftask_process(r + 1, NULL, 2, &conv, &p),
			 -ENODATA);
	assert_true(p.valid[0] == 0);
	/* A leader record without the block (a kernel where signal was
	 * not read): nothing. */
	r[0].present &= ~CTP_BPFTASK_HAS_SIG;
	assert_int_equal(ctp_bpftask_process(r, NULL, 3, &conv, &p), -ENODATA);
	assert_true(p.valid[0] == 0);
	/* nr_threads 4, 3 records: a thread that left before its turn (its
	 * counters in neither) or one born before the block and not listed.
	 * The sums would be of other threads than the file's: only the
	 * block's own values. */
	proc_recs(r);
	r[0].nr_threads = 4;
	offers(r, NULL, 3, &conv, P_BLOCK_ONLY);
	assert_int_equal(ctp_bpftask_process(r, NULL, 3, &conv, &p), 0);
	assert_int_equal(pval(&p, CTP_SRC_PROC_NUM_THREADS), 4);
	/* nr_threads 2, 3 records: one counted that the block's instant did
	 * not have (born after it). */
	r[0].nr_threads = 2;
	offers(r, NULL, 3, &conv, P_BLOCK_ONLY);
	/* A thread's sequence differs: a thread left (its counters moved
	 * into the block) between two reads of the group. */
	proc_recs(r);
	r[2].sig_seq = 10;
	offers(r, NULL, 3, &conv, P_BLOCK_ONLY);
	/* The leader's block written into while read (odd). */
	proc_recs(r);
	for (int i = 0; i < 3; i++)
		r[i].sig_seq = 9;
	offers(r, NULL, 3, &conv, P_BLOCK_ONLY);
	/* One record without the sequence among others with it. */
	proc_recs(r);
	r[1].present &= ~CTP_BPFTASK_HAS_SIG_SEQ;
	offers(r, NULL, 3, &conv, P_BLOCK_ONLY);
	/* A kernel without the sequence at all: the count alone decides. */
	for (int i = 0; i < 3; i++)
		r[i].present &= ~CTP_BPFTASK_HAS_SIG_SEQ;
	offers(r, NULL, 3, &conv, P_ALL);
	r[0].nr_threads = 4;
	offers(r, NULL, 3, &conv, P_BLOCK_ONLY);
	/* Times need signal->prev_cputime and no nohz_full CPU; io its
	 * kernel's configuration. */
	proc_recs(r);
	unsigned times =
		(1u << CTP_SRC_PROC_UTIME) | (1u << CTP_SRC_PROC_STIME);
	r[0].present &= ~CTP_BPFTASK_HAS_SIG_PREV;
	offers(r, NULL, 3, &conv, P_ALL & ~times);
	r[0].present |= CTP_BPFTASK_HAS_SIG_PREV;
	conv.times = 0;
	offers(r, NULL, 3, &conv, P_ALL & ~times);
	conv.times = 1;
	r[0].present &= ~CTP_BPFTASK_HAS_IO_BYTES;
	offers(r, NULL, 3, &conv,
	       P_ALL & ~((1u << CTP_SRC_PROC_READ_BYTES) |
			 (1u << CTP_SRC_PROC_WRITE_BYTES) |
			 (1u << CTP_SRC_PROC_CANCELLED_WRITE_BYTES)));
	r[0].present &= ~CTP_BPFTASK_HAS_IO_XACCT;
	offers(r, NULL, 3, &conv,
	       P_ALL & ~(((1u << 7) - 1) << CTP_SRC_PROC_RCHAR));
	/* The pieces the plugin calls one by one say the same. */
	proc_recs(r);
	struct ctp_bpftask_proc pr = {.tgid = 500};
	for (__u32 i = 3; i-- > 0;)
		ctp_bpftask_proc_add(&pr, &r[i], i);
	assert_int_equal(pr.n, 3);
	assert_true(pr.flags & CTP_BPFTASK_PROC_LEADER);
	assert_int_equal(pr.leader, 0);
	assert_true(ctp_bpftask_proc_whole(&pr, &r[0]));
	assert_false(ctp_bpftask_proc_whole(&pr, NULL));
	__u64 ut, st;
	ctp_bpftask_proc_ticks(&pr, &r[0], 100, &ut, &st);
	assert_int_equal(ut, 371);
	assert_int_equal(st, 278);
}

/* The check of the process values and their names. */
static void test_process_check(void **s)
{
	struct ctp_src_process pass = {.abi = 1, .size = sizeof(pass)};
	struct ctp_src_process files = pass;
	uint64_t off[1] = {0};
	(void)s;
	pass.valid[0] = files.valid[0] =
		(1u << CTP_SRC_PROC_UTIME) | (1u << CTP_SRC_PROC_RCHAR);
	pass.valid[0] |= 1u << CTP_SRC_PROC_CSTIME; /* the pass only */
	pass.v[CTP_SRC_PROC_UTIME] = files.v[CTP_SRC_PROC_UTIME] = 12;
	pass.v[CTP_SRC_PROC_RCHAR] = 5;
	files.v[CTP_SRC_PROC_RCHAR] = 6;
	assert_int_equal(ctp_bpftask_proc_check(&pass, &files, off), 1);
	assert_true(off[0] == UINT64_C(1) << CTP_SRC_PROC_RCHAR);
	assert_string_equal(ctp_bpftask_proc_value_name(CTP_SRC_PROC_UTIME),
			    "process stat utime");
	assert_string_equal(
		ctp_bpftask_proc_value_name(CTP_SRC_PROC_CANCELLED_WRITE_BYTES),
		"process io cancelled_write_bytes");
	assert_null(ctp_bpftask_proc_value_name(CTP_SRC_PROC_N_VALUES));
	assert_int_equal(ctp_bpftask_proc_value_by_name("process io syscw"),
			 CTP_SRC_PROC_SYSCW);
	assert_int_equal(ctp_bpftask_proc_value_by_name("utime"), -1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The radix sort against qsort on (tgid, tid) keys of every shape: in
 * order, reversed, shuffled, equal high bytes, ids up to pid_max's limit,
 * in tid order (a pass's stream: the tid bytes' passes left out) with
 * tgids of one to three varying bytes, an odd number of passes among them;
 * stable (equal keys keep their records' order). */
static void test_sort(void **s)
{
	enum { N = 5000 };
	static struct ctp_bpftask_key keys[N], tmp[N];
	static uint64_t want[N];
	uint64_t x = 88172645463325252ull; /* xorshift64 */
	(void)s;
	for (int shape = 0; shape < 9; shape++) {
		size_t n = shape == 4 ? 1 : N;
		for (size_t i = 0; i < n; i++) {
			uint32_t tgid, tid;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			switch (shape) {
			case 0: /* in order */
				tgid = 100 + (uint32_t)i / 10;
				tid = 100 + (uint32_t)i;
				break;
			case 1: /* reversed */
				tgid = 4194303 - (uint32_t)i / 10;
				tid = 4194303 - (uint32_t)i;
				break;
			case 2: /* tid order, processes interleaved */
			case 5: /* the same, the equal keys kept in order */
				tgid = 1 + (uint32_t)(x % 7) * 1000;
				tid = 1 + (uint32_t)i;
				break;
			case 6: /* tid order, tgids of three bytes */
				tgid = 1 + (uint32_t)(x % 4194304);
				tid = 7 + (uint32_t)i * 800;
				break;
			case 7: /* tid order, tgids of one byte, tids equal */
				tgid = 1 + (uint32_t)(x % 200);
				tid = 1 + (uint32_t)i / 3;
				break;
			case 8: /* a tid below the one before: a full sort */
				tgid = 1 + (uint32_t)(x % 7) * 1000;
				tid = i == N / 2 ? 1 : 2 + (uint32_t)i;
				break;
			default:
				tgid = 1 + (uint32_t)(x % 4194304);
				tid = 1 + (uint32_t)((x >> 24) % 4194304);
				break;
			}
			keys[i].key = (uint64_t)tgid << 32 | tid;
			keys[i].idx = (uint32_t)i;
			want[i] = keys[i].key;
		}
		/* Two equal keys: their order kept. */
		if (n > 2 && shape != 5 && shape != 7)
			keys[n - 1].key = want[n - 1] = keys[0].key;
		if (shape == 5) /* equal keys in tid order */
			keys[n - 1].key = want[n - 1] = keys[n - 2].key;
		qsort(want, n, sizeof(*want), cmp_u64);
		ctp_bpftask_sort(keys, tmp, n);
		for (size_t i = 0; i < n; i++) {
			assert_true(keys[i].key == want[i]);
			if (i && keys[i].key == keys[i - 1].key)
				assert_true(keys[i - 1].idx < keys[i].idx);
		}
	}
}

static void test_keep_monotonic(void **s)
{
	const struct ctp_bpftask_ticks prev[] = {
		{1, 1, 100, 50, 50},   /* gone */
		{10, 10, 500, 30, 20}, /* same task: raises cur's utime */
		{10, 12, 600, 9, 9},   /* same tid, another task (start) */
		{20, 21, 700, 5, 99},  /* raises stime only */
	};
	struct ctp_bpftask_ticks cur[] = {
		{10, 10, 500, 25, 22}, {10, 11, 550, 1, 1}, /* new */
		{10, 12, 650, 2, 2},			    /* tid reused */
		{20, 21, 700, 6, 90},  {30, 30, 800, 3, 3},
	};
	(void)s;
	ctp_bpftask_keep_monotonic(prev, 4, cur, 5);
	assert_int_equal(cur[0].utime, 30);
	assert_int_equal(cur[0].stime, 22);
	assert_int_equal(cur[1].utime, 1);
	assert_int_equal(cur[2].utime, 2);
	assert_int_equal(cur[2].stime, 2);
	assert_int_equal(cur[3].utime, 6);
	assert_int_equal(cur[3].stime, 99);
	assert_int_equal(cur[4].utime, 3);

	/* A leader's exec count: another thread that exec'd holds the
	 * leader's tid and start time with its own (lower) times and a
	 * higher count; 0 on either side is not known, and the floor stays. */
	const struct ctp_bpftask_ticks eprev[] = {
		{40, 40, 900, 292, 12, 7},
		{41, 41, 901, 50, 5, 7},
		{42, 42, 902, 50, 5, 0},
	};
	struct ctp_bpftask_ticks ecur[] = {
		{40, 40, 900, 0, 0, 8},
		{41, 41, 901, 49, 5, 7},
		{42, 42, 902, 49, 4, 3},
	};
	ctp_bpftask_keep_monotonic(eprev, 3, ecur, 3);
	assert_int_equal(ecur[0].utime, 0);
	assert_int_equal(ecur[0].stime, 0);
	assert_int_equal(ecur[1].utime, 50);
	assert_int_equal(ecur[2].utime, 50);
	assert_int_equal(ecur[2].stime, 5);
}

/* A pass's buffer: records and slack for the tasks expected, whole pages,
 * whole huge pages from 2 MiB, never past the page after max_bytes. */
static void test_buf_size(void **s)
{
	const size_t rec = sizeof(struct ctp_bpftask_rec), max = 1000000 * rec;

	(void)s;
	assert_int_equal(ctp_bpftask_buf_want(0), 16 * rec);
	assert_int_equal(ctp_bpftask_buf_want(1), 17 * rec);
	assert_int_equal(ctp_bpftask_buf_want(30000),
			 (30000 + 3750 + 16) * rec);
	assert_int_equal(ctp_bpftask_buf_want(SIZE_MAX / 2),
			 SIZE_MAX / rec * rec);
	/* 17 records: 8568 bytes, three pages. */
	assert_int_equal(ctp_bpftask_buf_size(17 * rec, max), 12288);
	assert_int_equal(ctp_bpftask_buf_size(0, max), 4096);
	assert_int_equal(ctp_bpftask_buf_size(4096, max), 4096);
	/* 30,000 tasks expected: 33,766 records, rounded up to whole huge
	 * pages (eleven of 664-byte records). */
	assert_int_equal(ctp_bpftask_buf_size(ctp_bpftask_buf_want(30000), max),
			 (33766 * rec + CTP_BPFTASK_HUGE - 1) /
				 CTP_BPFTASK_HUGE * CTP_BPFTASK_HUGE);
	assert_int_equal(ctp_bpftask_buf_size(CTP_BPFTASK_HUGE, max),
			 CTP_BPFTASK_HUGE);
	assert_int_equal(ctp_bpftask_buf_size(CTP_BPFTASK_HUGE + 1, max),
			 2 * CTP_BPFTASK_HUGE);
	/* Capped at the page after max_bytes: room to see one byte past. */
	assert_int_equal(ctp_bpftask_buf_size(1u << 30, 4 * rec), 4096);
	assert_int_equal(ctp_bpftask_buf_size(1u << 30, 4096), 8192);
	assert_int_equal(ctp_bpftask_buf_size(1u << 30, 3u << 20),
			 (3u << 20) + 4096);
	assert_int_equal(ctp_bpftask_buf_size(1u << 30, max),
			 max / 4096 * 4096 + 4096);
	assert_int_equal(ctp_bpftask_buf_size(SIZE_MAX, SIZE_MAX),
			 SIZE_MAX / 4096 * 4096);
}

/* The NSpid line of literal status texts (fs/proc/array.c). */
static void test_initial_pidns(void **s)
{
	static const char init[] = "Name:\tbash\nTgid:\t812\nNSpid:\t812\n"
				   "NSsid:\t812\n";
	static const char nested[] = "Name:\tbash\nNSpid:\t30412\t7\n";
	static const char nested3[] = "Name:\tx\nNSpid:\t30412 7 1\n";
	static const char old[] = "Name:\tbash\nTgid:\t812\nPid:\t812\n";
	static const char last[] = "Name:\tbash\nNSpid:\t812";
	static const char last2[] = "Name:\tbash\nNSpid:\t812\t1";
	/* A task named after the key (status escapes a newline in a name,
	 * so a name never starts a line): only a line's start counts. */
	static const char named[] = "Name:\tNSpid:\t1\nNSpid:\t9\t3\n";
	static const char named2[] = "Name:\tNSpid:\t1\t2\nNSpid:\t9\n";
	(void)s;
	assert_true(ctp_bpftask_status_initial_pidns(init, strlen(init)));
	assert_false(ctp_bpftask_status_initial_pidns(nested, strlen(nested)));
	assert_false(
		ctp_bpftask_status_initial_pidns(nested3, strlen(nested3)));
	assert_true(ctp_bpftask_status_initial_pidns(old, strlen(old)));
	assert_true(ctp_bpftask_status_initial_pidns(last, strlen(last)));
	assert_false(ctp_bpftask_status_initial_pidns(last2, strlen(last2)));
	assert_false(ctp_bpftask_status_initial_pidns(named, strlen(named)));
	assert_true(ctp_bpftask_status_initial_pidns(named2, strlen(named2)));
	/* Cut short within the key: no line. */
	assert_true(ctp_bpftask_status_initial_pidns(init, 25));
	assert_true(ctp_bpftask_status_initial_pidns("", 0));
}

/* Which records the walk list names by their comm file: a workqueue
 * worker, and a kernel thread whose comm is cut at 15 bytes (/proc prints
 * its whole name), not a user thread of 15 bytes, nor a kernel thread of
 * a shorter name. */
static void test_comm_short(void **s)
{
	(void)s;
	assert_true(ctp_bpftask_comm_short(CTP_PF_WQ_WORKER | CTP_PF_KTHREAD,
					   "kworker/0:1"));
	assert_true(ctp_bpftask_comm_short(CTP_PF_KTHREAD, "rcu_tasks_kthre"));
	assert_false(ctp_bpftask_comm_short(CTP_PF_KTHREAD, "rcu_tasks_kthr"));
	assert_false(ctp_bpftask_comm_short(CTP_PF_KTHREAD, "ksoftirqd/0"));
	assert_false(ctp_bpftask_comm_short(0, "abcdefghijklmno"));
	assert_false(ctp_bpftask_comm_short(0, "kworker/0:1"));
	assert_false(ctp_bpftask_comm_short(CTP_PF_KTHREAD, ""));
}

/* A name as a field of bpf-task-dump's lines: control bytes and the
 * backslash as \\xNN, the rest as it is; 16 bytes without a NUL stay
 * within the buffer. */
static void test_comm_text(void **s)
{
	char out[CTP_BPFTASK_COMM_TEXT];
	static const char full[16] = {'\n', '\n', '\n', '\n', '\n', '\n',
				      '\n', '\n', '\n', '\n', '\n', '\n',
				      '\n', '\n', '\n', '\n'};
	(void)s;
	assert_string_equal(ctp_bpftask_comm_text("a\nb", out), "a\\x0ab");
	assert_string_equal(ctp_bpftask_comm_text("a\tb", out), "a\\x09b");
	assert_string_equal(ctp_bpftask_comm_text("\x1b[31mred", out),
			    "\\x1b[31mred");
	assert_string_equal(ctp_bpftask_comm_text("a\\b\x7f", out),
			    "a\\x5cb\\x7f");
	assert_string_equal(ctp_bpftask_comm_text("", out), "");
	assert_string_equal(ctp_bpftask_comm_text("x y (z) 1 2", out),
			    "x y (z) 1 2");
	assert_int_equal(strlen(ctp_bpftask_comm_text(full, out)), 64);
}

/* /proc/loadavg's count of threads (fs/proc/loadavg.c). */
static void test_loadavg(void **s)
{
	static const char ok[] = "0.52 0.58 0.59 3/1193 12345\n";
	size_t n = 7;

	(void)s;
	assert_int_equal(ctp_bpftask_loadavg_tasks(ok, strlen(ok), &n), 0);
	assert_int_equal(n, 1193);
	assert_int_equal(
		ctp_bpftask_loadavg_tasks("0.00 0.00 0.00 1/30012 9 ", 25, &n),
		0);
	assert_int_equal(n, 30012);
	/* Cut in the count, no count, garbage, an overflow: n untouched. */
	n = 7;
	assert_int_equal(ctp_bpftask_loadavg_tasks(ok, 20, &n), -EBADMSG);
	assert_int_equal(ctp_bpftask_loadavg_tasks("0.52 0.58 0.59 3/", 18, &n),
			 -EBADMSG);
	assert_int_equal(
		ctp_bpftask_loadavg_tasks("0.52 0.58 0.59 3/x 1", 20, &n),
		-EBADMSG);
	assert_int_equal(ctp_bpftask_loadavg_tasks("", 0, &n), -EBADMSG);
	assert_int_equal(ctp_bpftask_loadavg_tasks(
				 "1/99999999999999999999999 1", 27, &n),
			 -ERANGE);
	assert_int_equal(n, 7);
}

int main(void)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return 77; /* the literals are little-endian */
#endif
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_two_records),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_garbled),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_state_char),
		cmocka_unit_test(test_cputime_adjust),
		cmocka_unit_test(test_clock_t),
		cmocka_unit_test(test_hiwater),
		cmocka_unit_test(test_active_cpus),
		cmocka_unit_test(test_to_src),
		cmocka_unit_test(test_to_src_families),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_process_times),
		cmocka_unit_test(test_process_partial),
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_mm_gen),
		cmocka_unit_test(test_process_check),
		cmocka_unit_test(test_keep_monotonic),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_buf_size),
		cmocka_unit_test(test_loadavg),
		cmocka_unit_test(test_initial_pidns),
		cmocka_unit_test(test_comm_short),
		cmocka_unit_test(test_comm_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
