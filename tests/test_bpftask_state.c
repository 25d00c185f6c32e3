/* SPDX-License-Identifier: MIT */
/*
 * bpf-task's times across runs (plugins/bpf-task/bpftask_state.c): the
 * state file's checks on literal bytes (truncated, wrong magic, version,
 * entry size or boot id, version 1's entries widened, too many entries, a
 * length unlike the counts, unsorted or repeated entries, a process entry of
 * another tid), the boot id's text, the case of the defect on literal values
 * (stat's stime 52 ticks handed out, the kernel's arithmetic at 51 a run later:
 * the file's 52 kept), and the file's reading and writing in a directory (temp
 * file and rename, 0600, a symlink, another owner, a directory others can
 * write, a file above the bound).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpftask_state.h"
#include "statedir.h"

/* The file is in host byte order; these literals are little-endian. */
#define U16(v) (v) & 0xff, ((v) >> 8) & 0xff
#define U32(v) U16((v)&0xffff), U16(((v) >> 16) & 0xffff)
#define U64(v)                                                                 \
	U32((unsigned long long)(v)&0xffffffffu),                              \
		U32((unsigned long long)(v) >> 32)
#define BOOT                                                                   \
	0x8d, 0x1f, 0x3a, 0x20, 0x55, 0x6b, 0x4c, 0x0e, 0x9a, 0x41, 0x07,      \
		0x2b, 0xc3, 0xde, 0x10, 0x77
static const uint8_t boot[16] = {BOOT};
static const char boot_text[] = "8d1f3a20-556b-4c0e-9a41-072bc3de1077\n";

/* Two threads of process 100, one of 200; processes 100 and 200. */
static const unsigned char file1[] __attribute__((aligned(8))) = {
	'c',	  't',	    'p',       'b',	't',	 't',
	'\n',	  0,	    U32(2),    U32(40), /* magic.. */
	U64(3),	  U64(2),   BOOT,		/* n_tasks, n_procs, boot id */
	U32(100), U32(100), U64(5000), U64(48), U64(52), U64(3),
	U32(100), U32(101), U64(5001), U64(7),	U64(0),	 U64(0),
	U32(200), U32(200), U64(6000), U64(1),	U64(2),	 U64(9),
	U32(100), U32(100), U64(5000), U64(55), U64(52), U64(0),
	U32(200), U32(200), U64(6000), U64(1),	U64(2),	 U64(0),
};

/* file1 as version 1 wrote it (32-byte entries, no exec_id): what a build
 * before the entries' exec_id left in /run/ctprof-core. */
static const unsigned char file1_v1[] __attribute__((aligned(8))) = {
	'c',	  't',	    'p',       'b',	't',
	't',	  '\n',	    0,	       U32(1),	U32(32), /* magic.. */
	U64(3),	  U64(2),   BOOT, /* n_tasks, n_procs, boot id */
	U32(100), U32(100), U64(5000), U64(48), U64(52),
	U32(100), U32(101), U64(5001), U64(7),	U64(0),
	U32(200), U32(200), U64(6000), U64(1),	U64(2),
	U32(100), U32(100), U64(5000), U64(55), U64(52),
	U32(200), U32(200), U64(6000), U64(1),	U64(2),
};

static enum ctp_bpftask_state_why parse(const void *buf, size_t len, size_t max,
					size_t *nt, size_t *np)
{
	const struct ctp_bpftask_ticks *t = NULL, *p = NULL;
	return ctp_bpftask_state_parse(buf, len, boot, max, &t, nt, &p, np);
}

/* A copy of file1 (8-byte aligned) for a test to spoil. */
static unsigned char *copy1(void)
{
	unsigned char *b = aligned_alloc(8, sizeof(file1) + 64);
	assert_non_null(b);
	memcpy(b, file1, sizeof(file1));
	return b;
}

static void good(void **state)
{
	const struct ctp_bpftask_ticks *t = NULL, *p = NULL;
	size_t nt = 0, np = 0;

	(void)state;
	assert_int_equal(ctp_bpftask_state_parse(file1, sizeof(file1), boot, 3,
						 &t, &nt, &p, &np),
			 CTP_BTS_OK);
	assert_int_equal(nt, 3);
	assert_int_equal(np, 2);
	assert_int_equal(t[1].tgid, 100);
	assert_int_equal(t[1].tid, 101);
	assert_int_equal(t[1].start_boottime, 5001);
	assert_int_equal(t[0].stime, 52);
	assert_int_equal(t[0].exec_id, 3);
	assert_int_equal(t[2].exec_id, 9);
	assert_int_equal(p[0].utime, 55);
	assert_int_equal(p[1].tgid, 200);
	/* No entries at all. */
	assert_int_equal(parse(file1, 48, 3, &nt, &np), CTP_BTS_COUNT);
	unsigned char *b = copy1();
	memset(b + 16, 0, 16); /* both counts 0 */
	assert_int_equal(parse(b, 48, 3, &nt, &np), CTP_BTS_OK);
	assert_int_equal(nt + np, 0);
	free(b);
}

static void spoiled(void **state)
{
	size_t nt = 99, np = 99;
	unsigned char *b = copy1();

	(void)state;
	/* Truncated: in the header, in an entry, an entry short. */
	assert_int_equal(parse(file1, 0, 3, &nt, &np), CTP_BTS_SHORT);
	assert_int_equal(parse(file1, 47, 3, &nt, &np), CTP_BTS_SHORT);
	assert_int_equal(parse(file1, sizeof(file1) - 1, 3, &nt, &np),
			 CTP_BTS_COUNT);
	assert_int_equal(parse(file1, sizeof(file1) - 40, 3, &nt, &np),
			 CTP_BTS_COUNT);
	/* Longer than its counts. */
	memset(b + sizeof(file1), 0, 40);
	assert_int_equal(parse(b, sizeof(file1) + 40, 3, &nt, &np),
			 CTP_BTS_COUNT);
	/* Too many entries for the bound, before the length is looked at:
	 * a count near 2^64 is not multiplied. */
	assert_int_equal(parse(file1, sizeof(file1), 2, &nt, &np), CTP_BTS_BIG);
	b[16 + 7] = 0x80; /* n_tasks 2^63 + 3 */
	assert_int_equal(parse(b, sizeof(file1), 1u << 22, &nt, &np),
			 CTP_BTS_BIG);
	memcpy(b, file1, sizeof(file1));
	b[16] = 4; /* n_tasks 4: one more than there is */
	assert_int_equal(parse(b, sizeof(file1), 8, &nt, &np), CTP_BTS_COUNT);
	memcpy(b, file1, sizeof(file1));
	/* Magic, version, entry size, boot id. */
	b[0] = 'C';
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_MAGIC);
	b[0] = 'c';
	b[8] = 1;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_VERSION);
	b[8] = 2;
	b[12] = 32;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_VERSION);
	b[12] = 40;
	b[47] ^= 1;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_BOOT);
	b[47] ^= 1;
	/* Unsorted: tasks 101 before 100 of process 100. */
	b[48 + 4] = 101;
	b[88 + 4] = 100;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_ORDER);
	/* Repeated. */
	b[48 + 4] = 100;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_ORDER);
	memcpy(b, file1, sizeof(file1));
	/* Processes unsorted; a process entry whose tid is not its tgid. */
	b[168] = 250;
	b[168 + 4] = 250;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_ORDER);
	memcpy(b, file1, sizeof(file1));
	b[168 + 4] = 101;
	assert_int_equal(parse(b, sizeof(file1), 3, &nt, &np), CTP_BTS_ORDER);
	/* Nothing was set on the way. */
	assert_int_equal(nt, 99);
	assert_int_equal(np, 99);
	assert_string_equal(ctp_bpftask_state_why_name(CTP_BTS_BOOT),
			    "another boot");
	free(b);
}

/* Version 1: its header passes (its own entry size), parse() refuses its
 * entries in place, widen() makes them this version's with exec_id 0. */
static void version1(void **state)
{
	struct ctp_bpftask_state_hdr h;
	struct ctp_bpftask_ticks e[5];
	size_t nt = 99, np = 99;

	(void)state;
	memcpy(&h, file1_v1, sizeof(h));
	assert_int_equal(
		ctp_bpftask_state_check_header(&h, sizeof(file1_v1), boot, 3),
		CTP_BTS_OK);
	/* Its length counted in version 2's entries: not its counts. */
	assert_int_equal(
		ctp_bpftask_state_check_header(&h, 48 + 5 * 40, boot, 3),
		CTP_BTS_COUNT);
	assert_int_equal(parse(file1_v1, sizeof(file1_v1), 3, &nt, &np),
			 CTP_BTS_VERSION);
	assert_int_equal(nt, 99);
	/* Version 1 of entry size 40, version 3: not read. */
	h.entry_size = 40;
	assert_int_equal(
		ctp_bpftask_state_check_header(&h, sizeof(file1_v1), boot, 3),
		CTP_BTS_VERSION);
	h.entry_size = 32;
	h.version = 3;
	assert_int_equal(
		ctp_bpftask_state_check_header(&h, sizeof(file1_v1), boot, 3),
		CTP_BTS_VERSION);
	/* Widened in place: file1's entries, exec_id 0 (unknown). */
	memset(e, 0xa5, sizeof(e));
	memcpy(e, file1_v1 + 48, 5 * 32);
	ctp_bpftask_state_widen(e, 5);
	const struct ctp_bpftask_ticks *t = NULL, *p = NULL;
	assert_int_equal(ctp_bpftask_state_parse(file1, sizeof(file1), boot, 3,
						 &t, &nt, &p, &np),
			 CTP_BTS_OK);
	for (size_t i = 0; i < 5; i++) {
		struct ctp_bpftask_ticks want = i < 3 ? t[i] : p[i - 3];
		want.exec_id = 0;
		assert_memory_equal(&e[i], &want, sizeof(want));
	}
}

static void boot_id(void **state)
{
	uint8_t id[16];

	(void)state;
	assert_int_equal(ctp_bpftask_boot_id(boot_text, strlen(boot_text), id),
			 0);
	assert_memory_equal(id, boot, 16);
	assert_int_equal(ctp_bpftask_boot_id(boot_text, 36, id), 0);
	assert_int_equal(ctp_bpftask_boot_id(boot_text, 35, id), -EINVAL);
	assert_int_equal(ctp_bpftask_boot_id("8d1f3a20x556b-4c0e-9a41-"
					     "072bc3de1077",
					     36, id),
			 -EINVAL);
	assert_int_equal(ctp_bpftask_boot_id("8d1f3a20-556b-4c0e-9a41-"
					     "072bc3de107g",
					     36, id),
			 -EINVAL);
	assert_int_equal(ctp_bpftask_boot_id("", 0, id), -EINVAL);
}

/*
 * The defect: a thread of mostly system work handed out stime 52 ticks
 * (stime_raw 520 ms, utime_raw 480 ms, 1000 ms run); a separate run, its
 * work since then all user (utime_raw 1000 ms, 1500 ms run), nobody
 * having read its stat: the kernel's arithmetic gives 51. Loaded from the
 * first run's file as the last pass, the second run's keeps 52.
 */
static void defect_case(void **state)
{
	const struct ctp_bpftask_ticks *t, *p;
	struct ctp_bpftask_ticks cur[2];
	__u64 pu = 0, ps = 0;
	size_t nt, np;

	(void)state;
	ctp_cputime_adjust(480000000, 520000000, 1000000000, &pu, &ps);
	assert_int_equal(ctp_nsec_to_clock_t(ps, 100), 52);
	assert_int_equal(ctp_nsec_to_clock_t(pu, 100), 48);
	/* The kernel's prev_cputime untouched (no /proc read): 0 again. */
	pu = ps = 0;
	ctp_cputime_adjust(1000000000, 520000000, 1500000000, &pu, &ps);
	cur[0] = (struct ctp_bpftask_ticks){
		.tgid = 100,
		.tid = 100,
		.start_boottime = 5000,
		.utime = ctp_nsec_to_clock_t(pu, 100),
		.stime = ctp_nsec_to_clock_t(ps, 100)};
	assert_int_equal(cur[0].stime, 51); /* down: the defect */
	assert_int_equal(cur[0].utime, 98);
	/* Another task on tid 101 (its start differs): not raised. */
	cur[1] = (struct ctp_bpftask_ticks){
		.tgid = 100, .tid = 101, .start_boottime = 9999, .utime = 3};
	assert_int_equal(ctp_bpftask_state_parse(file1, sizeof(file1), boot, 8,
						 &t, &nt, &p, &np),
			 CTP_BTS_OK);
	ctp_bpftask_keep_monotonic(t, nt, cur, 2);
	assert_int_equal(cur[0].stime, 52);
	assert_int_equal(cur[0].utime, 98);
	assert_int_equal(cur[1].utime, 3);
	assert_int_equal(cur[1].stime, 0);
}

static char dir[64];
static int dfd = -1;

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctp-btstate-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -1 : 0;
}

static int teardown_dir(void **state)
{
	char p[128];
	(void)state;
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	close(dfd);
	return system(p) == 0 ? 0 : -1;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ctp_bpftask_state_load into fresh arrays: its return, *why set. */
static int load(size_t max, struct ctp_bpftask_ticks **t, size_t *nt,
		struct ctp_bpftask_ticks **p, size_t *np, struct stat *sb,
		enum ctp_bpftask_state_why *why)
{
	size_t ct = 0, cp = 0;
	*t = *p = NULL;
	return ctp_bpftask_state_load(dfd, boot, max, t, &ct, nt, p, &cp, np,
				      sb, why);
}

/* Write n bytes of buf as the state file. */
static void put(const void *buf, size_t n)
{
	int fd = openat(dfd, "bpf-task-times",
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

static void files(void **state)
{
	enum { N = 30000 };
	struct ctp_bpftask_ticks *t = calloc(N, sizeof(*t)), *rt, *rp;
	struct ctp_bpftask_state_hdr h;
	enum ctp_bpftask_state_why why;
	struct stat sb, sb2;
	struct timespec t0;
	char sub[128], why_s[256];
	size_t nt = 7, np = 7;
	int fd;

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < N; i++)
		t[i] = (struct ctp_bpftask_ticks){
			.tgid = (int32_t)(1000 + i / 1000),
			.tid = (int32_t)(1000 + i),
			.start_boottime = i * 7,
			.utime = i,
			.stime = i / 2};
	assert_int_equal(load(N, &rt, &nt, &rp, &np, &sb, &why), -ENOENT);
	/* 30,000 tasks and 30 processes. */
	struct ctp_bpftask_ticks procs[30];
	for (int i = 0; i < 30; i++)
		procs[i] = (struct ctp_bpftask_ticks){.tgid = 1000 + i,
						      .tid = 1000 + i};
	ctp_bpftask_state_header(&h, boot, N, 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ctp_bpftask_state_write(dfd, &h, t, procs, &sb), 0);
	printf("write of %d entries: %.3f ms\n", N + 30, ms_since(&t0));
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(sb.st_size, 48 + (N + 30) * 40);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(load(N, &rt, &nt, &rp, &np, &sb2, &why), 0);
	printf("load and check of %d entries: %.3f ms\n", N + 30,
	       ms_since(&t0));
	assert_int_equal(why, CTP_BTS_OK);
	assert_int_equal(sb2.st_ino, sb.st_ino);
	assert_int_equal(nt, N);
	assert_int_equal(np, 30);
	assert_memory_equal(rt, t, N * sizeof(*t));
	assert_memory_equal(rp, procs, sizeof(procs));
	free(rt);
	free(rp);
	/* A version 1 file (a build before exec_id): loaded widened, so
	 * what it handed out stays the floor across the upgrade. */
	put(file1_v1, sizeof(file1_v1));
	assert_int_equal(load(N, &rt, &nt, &rp, &np, &sb2, &why), 0);
	assert_int_equal(why, CTP_BTS_OK);
	assert_int_equal(nt, 3);
	assert_int_equal(np, 2);
	assert_int_equal(rt[0].stime, 52);
	assert_int_equal(rt[1].tid, 101);
	assert_int_equal(rt[2].start_boottime, 6000);
	assert_int_equal(rt[0].exec_id + rt[1].exec_id + rt[2].exec_id, 0);
	assert_int_equal(rp[0].utime, 55);
	assert_int_equal(rp[1].tgid, 200);
	free(rt);
	free(rp);
	ctp_bpftask_state_header(&h, boot, N, 30);
	assert_int_equal(ctp_bpftask_state_write(dfd, &h, t, procs, &sb), 0);
	/* Above the bound: the header says so, the entries are not read. */
	nt = np = 7;
	assert_int_equal(load(N - 1, &rt, &nt, &rp, &np, &sb2, &why), -EINVAL);
	assert_int_equal(why, CTP_BTS_BIG);
	assert_null(rt);
	assert_int_equal(nt, 7);
	/* Rewritten: a new file (rename), no temp file left. */
	ctp_bpftask_state_header(&h, boot, 1, 0);
	assert_int_equal(ctp_bpftask_state_write(dfd, &h, t, NULL, &sb2), 0);
	assert_true(sb2.st_ino != sb.st_ino);
	snprintf(sub, sizeof(sub), "%s/.bpf-task-times.%ld", dir,
		 (long)getpid());
	assert_int_equal(access(sub, F_OK), -1);
	/* The literal files through the load: each reason, from the file. */
	put(file1, sizeof(file1));
	assert_int_equal(load(3, &rt, &nt, &rp, &np, &sb2, &why), 0);
	assert_int_equal(nt, 3);
	assert_int_equal(rt[0].stime, 52);
	free(rt);
	free(rp);
	put(file1, 47);
	assert_int_equal(load(3, &rt, &nt, &rp, &np, &sb2, &why), -EINVAL);
	assert_int_equal(why, CTP_BTS_SHORT);
	free(rt);
	free(rp);
	put(file1, sizeof(file1) - 8);
	assert_int_equal(load(3, &rt, &nt, &rp, &np, &sb2, &why), -EINVAL);
	assert_int_equal(why, CTP_BTS_COUNT);
	free(rt);
	free(rp);
	unsigned char *b = copy1();
	b[48 + 4] = 101;
	b[80 + 4] = 100;
	put(b, sizeof(file1));
	assert_int_equal(load(3, &rt, &nt, &rp, &np, &sb2, &why), -EINVAL);
	assert_int_equal(why, CTP_BTS_ORDER);
	free(rt);
	free(rp);
	free(b);
	/* A symlink in the file's place is not followed. */
	assert_int_equal(unlinkat(dfd, "bpf-task-times", 0), 0);
	assert_int_equal(symlinkat("/etc/passwd", dfd, "bpf-task-times"), 0);
	assert_int_equal(load(N, &rt, &nt, &rp, &np, &sb2, &why), -EPERM);
	assert_int_equal(unlinkat(dfd, "bpf-task-times", 0), 0);
	/* A directory in its place: not a regular file. */
	assert_int_equal(mkdirat(dfd, "bpf-task-times", 0700), 0);
	assert_int_equal(load(N, &rt, &nt, &rp, &np, &sb2, &why), -EPERM);
	assert_int_equal(unlinkat(dfd, "bpf-task-times", AT_REMOVEDIR), 0);
	/* Another owner's file (root can make one). */
	if (geteuid() == 0) {
		put(file1, sizeof(file1));
		assert_int_equal(
			fchownat(dfd, "bpf-task-times", 65534, 65534, 0), 0);
		assert_int_equal(load(3, &rt, &nt, &rp, &np, &sb2, &why),
				 -EPERM);
		assert_int_equal(unlinkat(dfd, "bpf-task-times", 0), 0);
	}
	/* The directory: made 0700 where missing; refused where others
	 * can write it, or where it is a symlink. */
	snprintf(sub, sizeof(sub), "%s/state", dir);
	assert_int_equal(ctp_statedir_open(sub, &fd, why_s, sizeof(why_s)), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	close(fd);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(ctp_statedir_open(sub, &fd, why_s, sizeof(why_s)),
			 -EPERM);
	assert_non_null(strstr(why_s, "writable by it alone"));
	snprintf(sub, sizeof(sub), "%s/link", dir);
	assert_int_equal(symlink(dir, sub), 0);
	assert_true(ctp_statedir_open(sub, &fd, why_s, sizeof(why_s)) < 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good),
		cmocka_unit_test(spoiled),
		cmocka_unit_test(version1),
		cmocka_unit_test(boot_id),
		cmocka_unit_test(defect_case),
		cmocka_unit_test_setup_teardown(files, setup_dir, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
