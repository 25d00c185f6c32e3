/* SPDX-License-Identifier: MIT */
/*
 * A recording's directory (core/cli/recdir.c, docs/RECORD.md): the exact
 * file-name grammar; every documented time form of --from/--to parsed or
 * refused, against a fixed now, in UTC and in a zone with daylight saving;
 * picks that skip what is not a readable snapshot (links, FIFOs,
 * directories, garbage, cut files) with one warning line, never block, and
 * look at CTP_RECDIR_TRIES files at most; and, through the binary,
 * show/export/compare DIR on such a directory, compare --from/--to
 * HH:MM:SS picking the files those times name, and compare saying when
 * BASE and CAND are one file or no interval apart.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "recdir.h"
#include "snapbuild.h"

#define S  1000000000ll
#define MS 1000000ll

static char tmp[PATH_MAX];

/* ns since the epoch of a UTC date and time. */
static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = {.tm_year = y - 1900,
			.tm_mon = mo - 1,
			.tm_mday = d,
			.tm_hour = h,
			.tm_min = mi,
			.tm_sec = s};
	return (int64_t)timegm(&tm) * S;
}

static void set_tz(const char *tz)
{
	assert_int_equal(setenv("TZ", tz, 1), 0);
	tzset();
}

/* ---- names ---------------------------------------------------------- */

static void test_names(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"ctprof-000-golden.ctprof.zst",
		"ctprof-20261125T151401.486Z.ctprof.zst.tmp",
		".ctprof-20261125T151401.486Z.ctprof.zst.tmp.aB3dE9",
		"ctprof-20261125T151401.486z.ctprof.zst",
		"ctprof-20261125t151401.486Z.ctprof.zst",
		"ctprof-20261125T151401486Z.ctprof.zst",
		"ctprof-20261125T151401.486Z.ctprof.zsT",
		"ctprof-2026112xT151401.486Z.ctprof.zst",
		"ctprof-+0261125T151401.486Z.ctprof.zst",
		"ctprof-20261125T151401.-86Z.ctprof.zst",
		"ctprof-20261125T151401. 86Z.ctprof.zst",
		"ctprof-20260230T151401.486Z.ctprof.zst", /* Feb 30 */
		"ctprof-20261131T151401.486Z.ctprof.zst", /* Nov 31 */
		"ctprof-20261325T151401.486Z.ctprof.zst", /* month 13 */
		"ctprof-20261125T241401.486Z.ctprof.zst", /* hour 24 */
		"ctprof-20261125T156001.486Z.ctprof.zst", /* minute 60 */
		"ctprof-20261125T151460.486Z.ctprof.zst", /* second 60 */
		"ctprof-.ctprof.zst",
		"",
	};
	int64_t t;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ctp_recdir_name_time(bad[i], &t) != -EINVAL)
			fail_msg("'%s' taken for a recording's file", bad[i]);
	assert_int_equal(ctp_recdir_name_time(
				 "ctprof-20261125T151401.486Z.ctprof.zst", &t),
			 0);
	assert_int_equal(t, utc(2026, 11, 25, 15, 14, 1) + 486 * MS);
	assert_int_equal(ctp_recdir_name_time(
				 "ctprof-20240229T000000.000Z.ctprof.zst", &t),
			 0);
	assert_int_equal(t, utc(2024, 2, 29, 0, 0, 0));
	/* What the recorder names, read back (to the millisecond). */
	char path[PATH_MAX];
	int64_t ns = utc(2031, 1, 2, 3, 4, 5) + 678 * MS + 999999;
	assert_int_equal(ctp_recdir_name("d", (uint64_t)ns, path, sizeof(path)),
			 0);
	assert_string_equal(path, "d/ctprof-20310102T030405.678Z.ctprof.zst");
	assert_int_equal(ctp_recdir_name_time(path + 2, &t), 0);
	assert_int_equal(t, ns - 999999);
}

/* ---- times ---------------------------------------------------------- */

struct when_case {
	const char *when;
	int ret;
	int64_t want; /* with ret 0 */
};

static void check_when(const struct when_case *c, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++) {
		int64_t got = 12345;
		int r = ctp_recdir_parse_when(c[i].when, now, &got);
		if (r != c[i].ret)
			fail_msg("'%s': %d, want %d", c[i].when, r, c[i].ret);
		if (r == 0 && got != c[i].want)
			fail_msg("'%s': %lld, want %lld (%+lld s)", c[i].when,
				 (long long)got, (long long)c[i].want,
				 (long long)((got - c[i].want) / S));
		if (r < 0 && got != 12345)
			fail_msg("'%s': refused but written", c[i].when);
	}
}

/* Every form RECORD.md and COMPARE.md give, and the near misses, in UTC
 * against now = 2026-11-25 23:00:00.5. "22:13:00" is today's 22:13:00:
 * the failed date form must leave nothing (a year) behind. */
static void test_when_utc(void **state)
{
	(void)state;
	set_tz("UTC");
	const int64_t now = utc(2026, 11, 25, 23, 0, 0) + 500 * MS;
	const int64_t today = utc(2026, 11, 25, 0, 0, 0);
	const struct when_case c[] = {
		{"latest", 0, INT64_MAX},
		{"-90s", 0, now - 90 * S},
		{"-10m", 0, now - 600 * S},
		{"-1h", 0, now - 3600 * S},
		{"-1d", 0, now - 86400 * S},
		{"-500ms", 0, now - 500 * MS},
		{"-2", 0, now - 2 * S},
		{"22:13", 0, today + (22 * 3600 + 13 * 60) * S},
		{"22:13:00", 0, today + (22 * 3600 + 13 * 60) * S},
		{"22:13:15", 0, today + (22 * 3600 + 13 * 60 + 15) * S},
		{"00:00", 0, today},
		{"23:59:59", 0, today + 86399 * S},
		{"2026-11-24T22:13", 0, utc(2026, 11, 24, 22, 13, 0)},
		{"2026-11-24T22:13:05", 0, utc(2026, 11, 24, 22, 13, 5)},
		{"2026-11-24 22:13:05", 0, utc(2026, 11, 24, 22, 13, 5)},
		{"1999-12-31T23:59:59", 0, utc(1999, 12, 31, 23, 59, 59)},
		{"2024-02-29T12:00", 0, utc(2024, 2, 29, 12, 0, 0)},
		{"", -EINVAL, 0},
		{"yesterday", -EINVAL, 0},
		{"22", -EINVAL, 0},
		{"22:1", -EINVAL, 0},
		{"2:13", -EINVAL, 0},
		{"22:13:", -EINVAL, 0},
		{"22:13:5", -EINVAL, 0},
		{"22:13:00x", -EINVAL, 0},
		{"22:13:00 ", -EINVAL, 0},
		{" 22:13", -EINVAL, 0},
		{"22.13", -EINVAL, 0},
		{"22:13:00:00", -EINVAL, 0},
		{"2026-11-25", -EINVAL, 0},
		{"2026-11-25T22", -EINVAL, 0},
		{"2026-11-25T22:13Z", -EINVAL, 0},
		{"2026-11-25X22:13", -EINVAL, 0},
		{"26-11-25T22:13", -EINVAL, 0},
		{"2026-1-25T22:13:00", -EINVAL, 0},
		{"-", -EINVAL, 0},
		{"-x", -EINVAL, 0},
		{"-0s", -EINVAL, 0},
		{"-1h ", -EINVAL, 0},
		{"+1h", -EINVAL, 0},
		{"24:00", -ERANGE, 0},
		{"22:60", -ERANGE, 0},
		{"22:13:60", -ERANGE, 0},
		{"2026-02-30T10:00", -ERANGE, 0},
		{"2025-02-29T10:00", -ERANGE, 0},
		{"2026-13-01T00:00", -ERANGE, 0},
		{"2026-00-10T00:00", -ERANGE, 0},
		{"2026-11-00T00:00", -ERANGE, 0},
	};
	check_when(c, sizeof(c) / sizeof(c[0]), now);
}

/* Local time in a zone with daylight saving (a POSIX TZ string: no tzdata
 * needed): summer and winter offsets, and an hour the spring gap skips. */
static void test_when_zone(void **state)
{
	(void)state;
	set_tz("CET-1CEST,M3.5.0,M10.5.0/3");
	const int64_t now = utc(2026, 7, 1, 12, 0, 0); /* 14:00 CEST */
	const struct when_case c[] = {
		{"22:13", 0, utc(2026, 7, 1, 20, 13, 0)},
		{"01:30:10", 0, utc(2026, 6, 30, 23, 30, 10)},
		{"2026-01-15T08:00", 0, utc(2026, 1, 15, 7, 0, 0)},
		{"2026-07-15T08:00:01", 0, utc(2026, 7, 15, 6, 0, 1)},
		{"2026-03-29T02:30", -ERANGE, 0},
	};
	check_when(c, sizeof(c) / sizeof(c[0]), now);
	set_tz("UTC");
}

/* ---- picks ---------------------------------------------------------- */

/* A snapshot taken at ns, written as the recording's file in dir; its
 * path into path. */
static void put_snap(const char *dir, int64_t ns, char *path, size_t len)
{
	char e[512];
	assert_int_equal(ctp_recdir_name(dir, (uint64_t)ns, path, len), 0);
	struct ctp_capture *cap = sb_capture("p");
	sb_process(cap, 100, "proc");
	sb_thread(cap, 100, "proc", -1);
	cap->start_realtime_ns = (uint64_t)ns;
	cap->end_realtime_ns = (uint64_t)ns + 1000000;
	if (sb_write(cap, path, e, sizeof(e)) < 0)
		fail_msg("%s", e);
	ctp_capture_free(cap);
}

/* The first len/2 bytes of src as dst: a zstd frame cut short. */
static void put_cut(const char *src, const char *dst)
{
	char *b;
	size_t n;
	assert_int_equal(e2e_read_file(src, &b, &n), 0);
	assert_int_equal(e2e_write_file(dst, b, n / 2), 0);
	free(b);
}

static void name_at(const char *dir, int64_t ns, char *path, size_t len)
{
	assert_int_equal(ctp_recdir_name(dir, (uint64_t)ns, path, len), 0);
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

#define T0 utc(2026, 11, 25, 10, 0, 0)

/* dir/tag: A (T0) and B (T0+15 s) readable; named newer than both, in
 * order, a link to B, a FIFO, a directory, text, B cut in half; and a
 * readable snapshot under a name that is not a recording's. */
static void hostile_dir(const char *tag, char *dir, char *a, char *b, char *cut)
{
	char p[PATH_MAX];
	assert_int_equal(e2e_pathf(dir, PATH_MAX, "%s/%s", tmp, tag), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	put_snap(dir, T0, a, PATH_MAX);
	put_snap(dir, T0 + 15 * S, b, PATH_MAX);
	name_at(dir, T0 + 20 * S, p, sizeof(p));
	assert_int_equal(symlink(b, p), 0);
	name_at(dir, T0 + 25 * S, p, sizeof(p));
	assert_int_equal(mkfifo(p, 0600), 0);
	name_at(dir, T0 + 30 * S, p, sizeof(p));
	assert_int_equal(mkdir(p, 0700), 0);
	name_at(dir, T0 + 35 * S, p, sizeof(p));
	assert_int_equal(e2e_write_file(p, "garbage\n", 8), 0);
	name_at(dir, T0 + 40 * S, cut, PATH_MAX);
	put_cut(b, cut);
	assert_int_equal(E2E_PATHF(p, "%s/ctprof-000-golden.ctprof.zst", dir),
			 0);
	put_cut(a, p);
}

static void test_pick(void **state)
{
	(void)state;
	char dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX], cut[PATH_MAX];
	char out[PATH_MAX], err[512], *warn = NULL;
	size_t wlen = 0;
	set_tz("UTC");
	hostile_dir("pick", dir, a, b, cut);
	alarm(120); /* a pick that blocks on the FIFO ends the test */
	struct ctp_recdir_skips sk = {0};
	struct ctp_recdir_pick p = {
		.dir = dir, .when = "latest", .cap = 1 << 26, .skips = &sk};
	if (ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_string_equal(out, b);
	assert_int_equal(sk.n, 5);
	if (strncmp(sk.first, base(cut), strlen(base(cut))) != 0)
		fail_msg("first skipped: %s", sk.first);
	FILE *f = open_memstream(&warn, &wlen);
	assert_non_null(f);
	ctp_recdir_warn_skips(f, "prog", dir, &sk);
	fclose(f);
	if (!strstr(warn, "prog: warning: ") ||
	    !strstr(warn, ": skipped 5 entries that are not readable "
			  "snapshots (first: ") ||
	    strchr(warn, '\n') != warn + wlen - 1)
		fail_msg("warning: %s", warn);
	free(warn);
	/* The same entries met again (compare's BASE) are not counted
	 * twice. */
	p.when = "2026-11-25T10:00:50";
	assert_int_equal(
		ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, b);
	assert_int_equal(sk.n, 5);
	/* BASE before CAND, by time, and before the recording began. */
	p.when = NULL;
	p.before = b;
	assert_int_equal(
		ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, a);
	p.before = a;
	assert_int_equal(
		ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)),
		-ENOENT);
	p.before = NULL;
	p.when = "2026-11-25T10:00:14";
	assert_int_equal(
		ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, a);
	p.when = "2026-11-25T09:00";
	assert_int_equal(
		ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, a);
	p.when = "25:00";
	assert_int_equal(
		ctp_recdir_pick(&p, out, sizeof(out), err, sizeof(err)),
		-ERANGE);
	assert_non_null(strstr(err, "'25:00': no such date or local time"));
	/* Between A and a later C: the regular files only (a cut one is
	 * there for its exited tasks to be reported left out). */
	char c[PATH_MAX], **between = NULL;
	put_snap(dir, T0 + 50 * S, c, sizeof(c));
	int n = ctp_recdir_between(a, c, &between);
	assert_int_equal(n, 3);
	assert_string_equal(between[0], b);
	assert_string_equal(base(between[1]) + 7,
			    "20261125T100035.000Z.ctprof.zst");
	assert_string_equal(between[2], cut);
	ctp_recdir_list_free(between, n);
	alarm(0);
}

/* Bounded: of files named newer than the last readable one, the pick
 * decodes CTP_RECDIR_TRIES at most, then says so. */
/* A walk's step: the files' names in order, into the walk's string. */
struct seen {
	char names[2 * PATH_MAX + 4];
	int stop_after; /* return -EINTR after this many; 0: never */
	int n;
};

static int note(const struct ctp_snap *snap, const struct ctp_recdir_file *f,
		void *arg)
{
	struct seen *s = arg;
	size_t l = strlen(s->names);
	assert_int_equal((int64_t)ctp_snap_header(snap)->start_realtime_ns,
			 f->t);
	snprintf(s->names + l, sizeof(s->names) - l, "%s ", f->name);
	return ++s->n == s->stop_after ? -EINTR : 0;
}

/* The walk export DIR (and the OpenMetrics of a recording) reads: the
 * files from --from to --to oldest first, each opened as a pick opens it
 * (the FIFO never), the unreadable skipped and counted once over two
 * walks. */
static void test_walk(void **state)
{
	(void)state;
	char dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX], cut[PATH_MAX];
	char err[512], want[2 * PATH_MAX + 4];
	struct ctp_recdir_files f;
	struct ctp_recdir_skips sk = {0};
	struct seen seen = {0};
	set_tz("UTC");
	hostile_dir("walk", dir, a, b, cut);
	alarm(120); /* a walk that blocks on the FIFO ends the test */
	if (ctp_recdir_files_open(dir, NULL, NULL, &sk, &f, err, sizeof(err)) <
	    0)
		fail_msg("%s", err);
	assert_int_equal(f.n, 7);  /* a to cut, the odd entries in between */
	assert_int_equal(sk.n, 3); /* the link, the FIFO, the directory */
	assert_int_equal(ctp_recdir_walk(&f, 1 << 26, &sk, note, &seen), 2);
	snprintf(want, sizeof(want), "%s %s ", base(a), base(b));
	assert_string_equal(seen.names, want);
	assert_int_equal(sk.n, 5); /* and the garbage, the cut file */
	/* The garbage made a snapshot: a second walk still leaves it out
	 * (what export's row walk must do after its column walk). */
	char g[PATH_MAX];
	name_at(dir, T0 + 35 * S, g, sizeof(g));
	assert_int_equal(e2e_copy_file(a, g), 0);
	seen = (struct seen){0};
	assert_int_equal(ctp_recdir_walk(&f, 1 << 26, &sk, note, &seen), 2);
	assert_string_equal(seen.names, want);
	assert_int_equal(sk.n, 5);
	/* A step that fails ends the walk with its error. */
	seen = (struct seen){.stop_after = 1};
	assert_int_equal(ctp_recdir_walk(&f, 1 << 26, &sk, note, &seen),
			 -EINTR);
	ctp_recdir_files_done(&f);
	/* --from picks b (the newest at or before), --to the first: one
	 * file; --from after --to: -ERANGE. */
	assert_int_equal(ctp_recdir_files_open(dir, "2026-11-25T10:00:20",
					       "2026-11-25T10:00:15", &sk, &f,
					       err, sizeof(err)),
			 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].name, base(b));
	ctp_recdir_files_done(&f);
	assert_int_equal(ctp_recdir_files_open(dir, "2026-11-25T10:00:15",
					       "2026-11-25T10:00:05", &sk, &f,
					       err, sizeof(err)),
			 -ERANGE);
	assert_non_null(strstr(err, "picks a file after"));
	ctp_recdir_files_done(&f);
	/* No file of a recording: none listed, not an error. */
	assert_int_equal(ctp_recdir_files_open(tmp, NULL, NULL, &sk, &f, err,
					       sizeof(err)),
			 0);
	assert_int_equal(f.n, 0);
	ctp_recdir_files_done(&f);
	assert_int_equal(
		ctp_recdir_files_open(a, NULL, NULL, &sk, &f, err, sizeof(err)),
		-ENOTDIR);
	ctp_recdir_files_done(&f);
	alarm(0);
}

static void test_pick_bounded(void **state)
{
	(void)state;
	char dir[PATH_MAX], a[PATH_MAX], p[PATH_MAX], out[PATH_MAX], err[512];
	assert_int_equal(E2E_PATHF(dir, "%s/bounded", tmp), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	put_snap(dir, T0, a, sizeof(a));
	for (int i = 1; i <= CTP_RECDIR_TRIES - 1; i++) {
		name_at(dir, T0 + i * S, p, sizeof(p));
		put_cut(a, p);
	}
	struct ctp_recdir_skips sk = {0};
	const struct ctp_recdir_pick pk = {
		.dir = dir, .when = "latest", .cap = 1 << 26, .skips = &sk};
	assert_int_equal(
		ctp_recdir_pick(&pk, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, a);
	assert_int_equal(sk.n, CTP_RECDIR_TRIES - 1);
	name_at(dir, T0 + CTP_RECDIR_TRIES * S, p, sizeof(p));
	put_cut(a, p);
	memset(&sk, 0, sizeof(sk));
	assert_int_equal(
		ctp_recdir_pick(&pk, out, sizeof(out), err, sizeof(err)),
		-ENOENT);
	assert_int_equal(sk.n, CTP_RECDIR_TRIES);
	if (!strstr(err, "no readable snapshot of the recording at or before "
			 "that time among the 16 newest files named like one"))
		fail_msg("%s", err);
}

/* Links, FIFOs and directories named like newer files, more of them than
 * a pick decodes: left out unopened, they do not count among its tries,
 * and the snapshot behind them is found. */
static void test_pick_unopened(void **state)
{
	(void)state;
	char dir[PATH_MAX], a[PATH_MAX], p[PATH_MAX], out[PATH_MAX], err[512];
	assert_int_equal(E2E_PATHF(dir, "%s/unopened", tmp), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	put_snap(dir, T0, a, sizeof(a));
	for (int i = 1; i <= 3 * CTP_RECDIR_TRIES; i++) {
		name_at(dir, T0 + i * S, p, sizeof(p));
		if (i % 3 == 0)
			assert_int_equal(mkfifo(p, 0600), 0);
		else if (i % 3 == 1)
			assert_int_equal(symlink(a, p), 0);
		else
			assert_int_equal(mkdir(p, 0700), 0);
	}
	struct ctp_recdir_skips sk = {0};
	const struct ctp_recdir_pick pk = {
		.dir = dir, .when = "latest", .cap = 1 << 26, .skips = &sk};
	if (ctp_recdir_pick(&pk, out, sizeof(out), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(out, a);
	assert_int_equal(sk.n, 3 * CTP_RECDIR_TRIES);
}

/* ---- the verbs, through the binary ---------------------------------- */

static char *slurp(const char *path)
{
	char *t;
	size_t n;
	assert_int_equal(e2e_read_file(path, &t, &n), 0);
	return t;
}

static unsigned lines_with(const char *text, const char *needle)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Run the binary (a hang fails); its stdout and stderr into *o and *e. */
static int run(const char *const *args, char **o, char **e)
{
	char op[PATH_MAX], ep[PATH_MAX];
	assert_int_equal(E2E_PATHF(op, "%s/out.txt", tmp), 0);
	assert_int_equal(E2E_PATHF(ep, "%s/err.txt", tmp), 0);
	int rc = e2e_run_within(args, op, ep, 120);
	if (rc == -ETIME)
		fail_msg("ctprof-core %s %s: still running after 120 s",
			 args[0], args[1]);
	*o = slurp(op);
	*e = slurp(ep);
	return rc;
}

/* show, export and compare DIR on the hostile directory: the newest
 * readable snapshot, one warning line, no hang on the FIFO. */
static void test_dir_verbs(void **state)
{
	(void)state;
	char dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX], cut[PATH_MAX], *o, *e;
	hostile_dir("verbs", dir, a, b, cut);
	const char *show[] = {"show", dir, "--max-decompressed", "64M", NULL};
	if (run(show, &o, &e) != 0)
		fail_msg("show DIR: %s", e);
	assert_non_null(strstr(o, "2026-11-25 10:00:15.000"));
	assert_int_equal(lines_with(e, "\n"), 1);
	assert_int_equal(lines_with(e, "ctprof-core show: warning: "), 1);
	assert_non_null(strstr(e, "skipped 5 entries"));
	free(o);
	free(e);
	const char *exp[] = {"export", dir, "--max-decompressed", "64M", NULL};
	if (run(exp, &o, &e) != 0)
		fail_msg("export DIR: %s", e);
	assert_int_equal(lines_with(e, "warning"), 1); /* and its summary */
	assert_non_null(strstr(e, "skipped 5 entries"));
	free(o);
	free(e);
	const char *cmp[] = {"compare", dir,	  "--max-decompressed",
			     "64M",	"--wide", NULL};
	if (run(cmp, &o, &e) != 0)
		fail_msg("compare DIR: %s", e);
	const char *bl = strstr(o, "BASE "), *cl = strstr(o, "CAND ");
	if (!bl || !cl || !strstr(bl, base(a)) || strstr(bl, base(a)) > cl ||
	    !strstr(cl, base(b)))
		fail_msg("compare DIR picked:\n%s", o);
	assert_int_equal(lines_with(e, "\n"), 1);
	assert_non_null(strstr(e, "skipped 5 entries"));
	free(o);
	free(e);
}

/* compare DIR --from/--to HH:MM[:SS] picks the files those times of today
 * name (not the first file), and a pick of one file for both, or two files
 * of one moment, is said. */
static void test_from_to(void **state)
{
	(void)state;
	char dir[PATH_MAX], f[3][PATH_MAX], copy[PATH_MAX], *o, *e;
	set_tz("UTC"); /* the children's zone too */
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	int64_t midnight = (int64_t)timegm(&tm) * S;
	assert_int_equal(E2E_PATHF(dir, "%s/fromto", tmp), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (int i = 0; i < 3; i++)
		put_snap(dir, midnight + (10 + 15 * i) * S, f[i], PATH_MAX);
	static const struct {
		const char *from, *to;
		int base, cand;
	} c[] = {
		{"00:00:25", "00:00:40", 1, 2},
		{"00:00:11", "00:00:39", 0, 1},
		{"00:00:26", "00:00:26", 1, 1},
		{"00:00", "00:01", 0, 2},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *args[] = {"compare", dir,	  "--from", c[i].from,
				      "--to",	 c[i].to, "--wide", NULL};
		if (run(args, &o, &e) != 0)
			fail_msg("--from %s --to %s: %s", c[i].from, c[i].to,
				 e);
		const char *bl = strstr(o, "BASE "), *cl = strstr(o, "CAND ");
		assert_non_null(bl);
		assert_non_null(cl);
		const char *bn = strstr(bl, base(f[c[i].base]));
		if (!bn || bn > cl || !strstr(cl, base(f[c[i].cand])))
			fail_msg("--from %s --to %s picked:\n%s", c[i].from,
				 c[i].to, o);
		bool same = c[i].base == c[i].cand;
		if (same != (strstr(e, "warning: BASE and CAND are the same "
				       "file") != NULL))
			fail_msg("--from %s --to %s: stderr:\n%s", c[i].from,
				 c[i].to, e);
		free(o);
		free(e);
	}
	/* Two names of one file, and two files of one moment. */
	const char *self[] = {"compare", f[0], f[0], NULL};
	assert_int_equal(run(self, &o, &e), 0);
	assert_non_null(strstr(e, "warning: BASE and CAND are the same file"));
	assert_non_null(strstr(o, "no interval"));
	free(o);
	free(e);
	assert_int_equal(E2E_PATHF(copy, "%s/copy.ctprof.zst", tmp), 0);
	char *bytes;
	size_t n;
	assert_int_equal(e2e_read_file(f[0], &bytes, &n), 0);
	assert_int_equal(e2e_write_file(copy, bytes, n), 0);
	free(bytes);
	const char *twin[] = {"compare", f[0], copy, NULL};
	assert_int_equal(run(twin, &o, &e), 0);
	assert_null(strstr(e, "same file"));
	assert_non_null(strstr(o, "no interval: CAND was not captured after "
				  "BASE"));
	free(o);
	free(e);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("recdir", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("CTP_KEEP_TMP"))
		e2e_rm_rf(tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_when_utc),
		cmocka_unit_test(test_when_zone),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_pick_bounded),
		cmocka_unit_test(test_pick_unopened),
		cmocka_unit_test(test_dir_verbs),
		cmocka_unit_test(test_from_to),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
