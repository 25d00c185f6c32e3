/* SPDX-License-Identifier: MIT */
/*
 * The BPF exit record (plugins/bpf-task/exit_rec.h) on literal bytes: the
 * parser takes one whole record and refuses anything else with nothing
 * written; a record and a per-process total as taskstats exits
 * (plugins/taskstats/exits_bpf.h): exact I/O, utime/stime split from the
 * exact run time, elapsed, the delay families; cgroup ids as paths on a
 * directory tree made here.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "exits_bpf.h"

/* Little-endian bytes of a record: the program writes host order, and the
 * project builds for little-endian hosts (x86_64, aarch64). */
static size_t put(unsigned char *b, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[off + (size_t)i] = (unsigned char)(v >> (8 * i));
	return off + (size_t)n;
}

/* A record laid out member by member, independent of the struct. */
static void literal(unsigned char *b)
{
	size_t o = 0;

	memset(b, 0, 432);
	o = put(b, o, 432, 2);	   /* size */
	o = put(b, o, 1, 2);	   /* version */
	o = put(b, o, 0x303, 4);   /* present: xacct, bytes, cpu+blkio */
	o = put(b, o, 4000, 4);	   /* tgid */
	o = put(b, o, 4001, 4);	   /* pid */
	o = put(b, o, 17, 4);	   /* ppid */
	o = put(b, o, 256, 4);	   /* exit_code */
	o = put(b, o, 1000000, 8); /* start_boottime */
	o = put(b, o, 9000000, 8); /* exit_boottime */
	o = put(b, o, 3000000, 8); /* utime (samples) */
	o = put(b, o, 1000000, 8); /* stime */
	o = put(b, o, 6000000, 8); /* sum_exec_runtime */
	o = put(b, o, 11, 8);	   /* minflt */
	o = put(b, o, 2, 8);	   /* majflt */
	o = put(b, o, 5, 8);	   /* nvcsw */
	o = put(b, o, 7, 8);	   /* nivcsw */
	o = put(b, o, 1000, 8);	   /* rchar */
	o = put(b, o, 1001, 8);	   /* wchar */
	o = put(b, o, 3, 8);	   /* syscr */
	o = put(b, o, 10, 8);	   /* syscw */
	o = put(b, o, 4096, 8);	   /* read_bytes */
	o = put(b, o, 513, 8);	   /* write_bytes */
	o = put(b, o, 0, 8);	   /* cancelled_write_bytes */
	o = put(b, o, 0x1234, 8);  /* cgroup_id (HAS_CGROUP not set) */
	o = put(b, o, 4, 8);	   /* delay[cpu]: count */
	o = put(b, o, 777, 8);	   /* total */
	o = put(b, o, 500, 8);	   /* max (HAS_MAXMIN not set) */
	o = put(b, o, 1, 8);	   /* min */
	o = put(b, o, 2, 8);	   /* delay[blkio]: count */
	o = put(b, o, 888, 8);	   /* total */
	memcpy(b + 432 - 16, "worker", 7);
}

static void parses(void **state)
{
	unsigned char b[440];
	struct ctp_bpfexit_rec r;

	(void)state;
	literal(b + 1); /* unaligned */
	assert_int_equal(ctp_bpfexit_rec_parse(b + 1, 432, &r), 0);
	assert_int_equal(r.tgid, 4000);
	assert_int_equal(r.pid, 4001);
	assert_int_equal(r.ppid, 17);
	assert_int_equal(r.wchar, 1001);
	assert_int_equal(r.syscw, 10);
	assert_int_equal(r.cgroup_id, 0x1234);
	assert_int_equal(r.delay[1][1], 888);
	assert_string_equal(r.comm, "worker");
}

static void refuses(void **state)
{
	unsigned char b[440], c[440];
	struct ctp_bpfexit_rec r, keep;

	(void)state;
	memset(&keep, 0x5a, sizeof(keep));
	/* A short or long buffer, a wrong size or version, an unknown
	 * present bit, ids <= 0, a comm without NUL: refused, *out kept. */
	struct {
		size_t off;
		uint64_t v;
		int n;
	} bad[] = {{0, 431, 2},	       {2, 2, 2}, {4, 0x8, 4},
		   {4, 1u << 30, 4},   {8, 0, 4}, {12, 0, 4},
		   {16, 0xffffffff, 4}};
	literal(b);
	r = keep;
	assert_int_equal(ctp_bpfexit_rec_parse(b, 431, &r), -EBADMSG);
	assert_int_equal(ctp_bpfexit_rec_parse(b, 433, &r), -EBADMSG);
	assert_int_equal(ctp_bpfexit_rec_parse(NULL, 0, &r), -EBADMSG);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(c, b, sizeof(c));
		put(c, bad[i].off, bad[i].v, bad[i].n);
		assert_int_equal(ctp_bpfexit_rec_parse(c, 432, &r), -EBADMSG);
	}
	memcpy(c, b, sizeof(c));
	memset(c + 432 - 16, 'a', 16);
	assert_int_equal(ctp_bpfexit_rec_parse(c, 432, &r), -EBADMSG);
	assert_memory_equal(&r, &keep, sizeof(r));
}

static void as_exit(void **state)
{
	unsigned char b[432];
	struct ctp_bpfexit_rec r;
	struct ctp_ts_exit e;

	(void)state;
	literal(b);
	assert_int_equal(ctp_bpfexit_rec_parse(b, sizeof(b), &r), 0);
	ctp_ts_exit_from_bpf(&r, &e);
	assert_int_equal(e.ts.pid, 4001);
	assert_int_equal(e.ts.v[CTP_TS_TGID], 4000);
	assert_int_equal(e.ts.v[CTP_TS_PPID], 17);
	assert_int_equal(e.ts.v[CTP_TS_EXITCODE], 256);
	/* 6 ms of run time split 3:1 as the samples are. */
	assert_int_equal(e.ts.v[CTP_TS_UTIME], 4500);
	assert_int_equal(e.ts.v[CTP_TS_STIME], 1500);
	assert_int_equal(e.ts.v[CTP_TS_ETIME], 8000);
	/* Exact, where taskstats' KB_MASK gives 0 and 0. */
	assert_int_equal(e.ts.v[CTP_TS_WRITE_CHAR], 1001);
	assert_int_equal(e.ts.v[CTP_TS_WRITE_BYTES], 513);
	assert_int_equal(e.ts.v[CTP_TS_WRITE_SYSCALLS], 10);
	assert_true(ctp_ts_has(&e.ts, CTP_TS_CANCELLED_WRITE_BYTES));
	assert_int_equal(e.ts.v[CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_TOTAL)], 777);
	assert_int_equal(e.ts.v[CTP_TS_DELAY(CTP_TS_BLKIO, CTP_TS_COUNT)], 2);
	/* Flagged absent: max/min, the other families, the watermarks. */
	assert_false(ctp_ts_has(&e.ts, CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_MAX)));
	assert_false(
		ctp_ts_has(&e.ts, CTP_TS_DELAY(CTP_TS_SWAPIN, CTP_TS_TOTAL)));
	assert_false(ctp_ts_has(&e.ts, CTP_TS_HIWATER_RSS));
	assert_string_equal(e.ts.comm, "worker");

	/* Without the I/O groups: absent, not 0. */
	r.present = 0;
	ctp_ts_exit_from_bpf(&r, &e);
	assert_false(ctp_ts_has(&e.ts, CTP_TS_WRITE_CHAR));
	assert_false(ctp_ts_has(&e.ts, CTP_TS_WRITE_BYTES));
}

static void sum_as_exit(void **state)
{
	struct ctp_bpfexit_sum s = {
		.threads = 3,
		.present = CTP_BPFEXIT_HAS_IO_XACCT | CTP_BPFEXIT_HAS_DELAY(0),
		.ppid = 9,
		.utime = 0,
		.stime = 0,
		.sum_exec_runtime = 2500000,
		.wchar = 3003,
		.syscw = 30,
		.delay = {{6, 60}},
		.comm = "abcdefghijklmnop", /* no NUL: cut at 15 */
	};
	struct ctp_ts_exit e;

	(void)state;
	ctp_ts_exit_from_bpfsum(4000, &s, &e);
	assert_int_equal(e.ts.pid, 0);
	assert_int_equal(e.ts.v[CTP_TS_TGID], 4000);
	/* No samples: all of the run time is user time (cputime_adjust). */
	assert_int_equal(e.ts.v[CTP_TS_UTIME], 2500);
	assert_int_equal(e.ts.v[CTP_TS_STIME], 0);
	assert_int_equal(e.ts.v[CTP_TS_WRITE_CHAR], 3003);
	assert_int_equal(e.ts.v[CTP_TS_DELAY(CTP_TS_CPU, CTP_TS_COUNT)], 6);
	assert_false(ctp_ts_has(&e.ts, CTP_TS_ETIME));
	assert_false(ctp_ts_has(&e.ts, CTP_TS_PID));
	assert_false(ctp_ts_has(&e.ts, CTP_TS_WRITE_BYTES));
	assert_string_equal(e.ts.comm, "abcdefghijklmno");
}

static void cgroup_ids(void **state)
{
	char root[] = "/tmp/ctp-cgids-XXXXXX", p[256];
	struct ctp_ts_cgids m = {0};
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/a", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/a/b", root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(stat(p, &st), 0);
	fd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_null(ctp_ts_cgids_find(&m, (uint64_t)st.st_ino));
	assert_int_equal(ctp_ts_cgids_build(&m, fd), 3);
	assert_string_equal(ctp_ts_cgids_find(&m, (uint64_t)st.st_ino), "/a/b");
	snprintf(p, sizeof(p), "%s/a", root);
	assert_int_equal(stat(p, &st), 0);
	assert_string_equal(ctp_ts_cgids_find(&m, (uint64_t)st.st_ino), "/a");
	assert_int_equal(stat(root, &st), 0);
	assert_string_equal(ctp_ts_cgids_find(&m, (uint64_t)st.st_ino), "/");
	assert_int_equal(ctp_ts_cgids_build(&m, -1), -EBADF);
	assert_int_equal(m.n, 3); /* kept */
	close(fd);
	ctp_ts_cgids_free(&m);
	snprintf(p, sizeof(p), "%s/a/b", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a", root);
	rmdir(p);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses),     cmocka_unit_test(refuses),
		cmocka_unit_test(as_exit),    cmocka_unit_test(sum_as_exit),
		cmocka_unit_test(cgroup_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
