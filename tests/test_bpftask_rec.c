/* SPDX-License-Identifier: MIT */
/* Unit tests for the bpf-task record stream parser
 * (plugins/bpf-task/bpftask_rec.c) on literal bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bpftask_rec.h"

/* The record is in host byte order; these literals are little-endian. */
#define U16(v) (v) & 0xff, ((v) >> 8) & 0xff
#define U32(v) U16((v)&0xffff), U16(((v) >> 16) & 0xffff)
#define U64(v)                                                                 \
	U32((unsigned long long)(v)&0xffffffffu),                              \
		U32((unsigned long long)(v) >> 32)

/* tgid 4242, tid 4243, every counter a distinct number, comm "worker-3". */
static const unsigned char rec1[] = {
	U16(168),
	U16(1),
	U32(0x7), /* size, version, present */
	U32(4242),
	U32(4243),	      /* tgid, pid */
	U64(123456789012ull), /* start_boottime */
	U64(11),
	U64(2), /* minflt, majflt */
	U64(33),
	U64(4),		    /* nvcsw, nivcsw */
	U64(5000000005ull), /* sum_exec_runtime */
	U64(66666),
	U64(77), /* run_delay, pcount */
	U64(8),
	U64(9),
	U64(10),
	U64(11), /* rchar, wchar, syscr, syscw */
	U64(4096),
	U64(8192),
	U64(12288), /* read/write/cancelled bytes */
	U64(3000000000ull),
	U64(2000000000ull), /* utime, stime */
	'w',
	'o',
	'r',
	'k',
	'e',
	'r',
	'-',
	'3',
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0};

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
	assert_int_equal(r.present, 0x7);
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
	static const unsigned char size167[] = {U16(167)};
	static const unsigned char size336[] = {U16(336)};
	static const unsigned char version2[] = {U16(2)};
	static const unsigned char version0[] = {U16(0)};
	static const unsigned char present8[] = {U32(0xf)};
	static const unsigned char zero[] = {U32(0)};
	static const unsigned char minus1[] = {U32(0xffffffffu)};
	static const unsigned char nonul[] = "abcdefghijklmnop";
	(void)s;
	garbled(OFF_SIZE, size167, sizeof(size167));
	garbled(OFF_SIZE, size336, sizeof(size336));
	garbled(OFF_VERSION, version2, sizeof(version2));
	garbled(OFF_VERSION, version0, sizeof(version0));
	garbled(OFF_PRESENT, present8, sizeof(present8));
	garbled(OFF_TGID, zero, sizeof(zero));
	garbled(OFF_TGID, minus1, sizeof(minus1));
	garbled(OFF_PID, zero, sizeof(zero));
	garbled(OFF_PID, minus1, sizeof(minus1));
	garbled(OFF_COMM, nonul, 16);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
