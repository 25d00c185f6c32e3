/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core trend DIR` (core/analysis/trend.c over core/cli/recdir.c's
 * walk, core/cli/trend_cmd.c): a hand-built recording, written by the real
 * writer 10 s apart, in which a process grows and exits before the last
 * file (listed first for growth, "ended" at its last capture), one
 * shrinks (last), a pid is reused (two rows: identity is the start time)
 * and a corrupt file in the middle is skipped and counted; a thread
 * counter's increase and peak rate; then a live `record` of a child the
 * test grows and kills before the last capture, first under --view mem.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "recdir.h"
#include "snapbuild.h"

static char tmp[PATH_MAX];

#define SEC 1000000000ull
#define T0  1700000000000000000ull /* 2023-11-14T22:13:20Z */
#define MIB (1ull << 20)

enum { F_RSS, F_CPU, F_START, NF };

/* One process of a capture: its pid, name, rss (MiB), its one thread's
 * cpu (ticks) and start (ticks since boot). */
struct proc {
	uint32_t pid;
	const char *comm;
	uint64_t rss, cpu, start;
};

/* Capture k of the recording in dir (boot 1000 + 10 k s). */
static void write_file(const char *dir, int k, const struct proc *p, size_t n)
{
	const struct ctp_field_desc d[NF] = {
		[F_RSS] = {"p.rss", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			   CTP_UNIT_BYTES, CTP_KIND_GAUGE, CTP_RULE_SUM},
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
	};
	struct ctp_capture *cap = sb_capture("t");
	char path[PATH_MAX], err[512];
	uint64_t at = (1000 + 10 * (uint64_t)k) * SEC;
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	for (size_t i = 0; i < n; i++) {
		uint32_t r = sb_process(cap, p[i].pid, p[i].comm);
		sb_put_u64(cap, &cap->procs[0], r, CTP_PROCESS_IDENT, F_RSS,
			   p[i].rss * MIB);
		uint32_t t = sb_thread(cap, p[i].pid, p[i].comm, -1);
		sb_put_u64(cap, &cap->threads[0], t, CTP_THREAD_IDENT, F_CPU,
			   p[i].cpu);
		sb_put_u64(cap, &cap->threads[0], t, CTP_THREAD_IDENT, F_START,
			   p[i].start);
	}
	cap->start_boottime_ns = at;
	cap->start_realtime_ns = T0 + at;
	cap->end_realtime_ns = cap->start_realtime_ns + SEC / 10;
	assert_int_equal(ctp_recdir_name(dir, cap->start_realtime_ns, path,
					 sizeof(path)),
			 0);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/* The view: per process, rss (sorted by) and cpu as percent of a CPU. */
static const char view_text[] =
	"view: tv\n"
	"description: test\n"
	"sort: rss\n"
	"sections:\n"
	"  - {title: Processes, group_by: pid}\n"
	"columns:\n"
	"  - {id: name, label: COMMAND, ident: pcomm}\n"
	"  - {id: rss, label: RSS, field: p.rss}\n"
	"  - {id: cpu, label: CPU%, field: t.cpu, show: pct_cpu}\n";

/*
 * Six captures; the fourth file is corrupt. grower (10) 100, 200, 900
 * MiB then gone; shrinker (20) 500 down to 100; steady (30) 50; pid 40
 * "reused" started at 1 s, gone at capture 2, again from capture 4 with
 * another start (1035 s), 20 then 30 MiB.
 */
static void write_recording(const char *dir)
{
	assert_int_equal(mkdir(dir, 0755), 0);
	const struct proc c0[] = {{10, "grower", 100, 0, 100},
				  {20, "shrinker", 500, 0, 100},
				  {30, "steady", 50, 0, 100},
				  {40, "reused", 10, 0, 100}};
	const struct proc c1[] = {{10, "grower", 200, 100, 100},
				  {20, "shrinker", 400, 10, 100},
				  {30, "steady", 50, 0, 100},
				  {40, "reused", 10, 0, 100}};
	const struct proc c2[] = {{10, "grower", 900, 300, 100},
				  {20, "shrinker", 300, 20, 100},
				  {30, "steady", 50, 0, 100}};
	const struct proc c4[] = {{20, "shrinker", 100, 30, 100},
				  {30, "steady", 50, 0, 100},
				  {40, "reused", 20, 5, 103500}};
	const struct proc c5[] = {{20, "shrinker", 100, 40, 100},
				  {30, "steady", 50, 0, 100},
				  {40, "reused", 30, 10, 103500}};
	char path[PATH_MAX];
	write_file(dir, 0, c0, 4);
	write_file(dir, 1, c1, 4);
	write_file(dir, 2, c2, 3);
	/* Capture 3: named as a recording's file, not a snapshot. */
	assert_int_equal(
		ctp_recdir_name(dir, T0 + 1030 * SEC, path, sizeof(path)), 0);
	assert_int_equal(e2e_write_file(path, "garbage", 7), 0);
	write_file(dir, 4, c4, 3);
	write_file(dir, 5, c5, 3);
}

/* `trend ARGS...`: e2e_run_verb. */
#define run(out, err, ...) e2e_run_verb("trend", out, err, __VA_ARGS__)

/* The line of out starting with prefix (its rest into line), or fail. */
static size_t line_no(const char *out, const char *prefix, char *line, size_t n)
{
	size_t no = 0;
	for (const char *p = out; *p; no++) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			snprintf(line, n, "%.*s", (int)len, p);
			return no;
		}
		p += len + (e != NULL);
	}
	fail_msg("no line %s in:\n%s", prefix, out);
	return 0;
}

static size_t lines(const char *out)
{
	size_t n = 0;
	for (; *out; out++)
		n += *out == '\n';
	return n;
}

#define T(s) "2023-11-14T22:" s ".000+00:00"

/* Growth: the grower, which ended before the last file, first; the
 * shrinker last; pid 40 twice; the corrupt file counted. */
static void test_growth(void **state)
{
	char *out, *err, line[1024];
	(void)state;
	write_recording("g");
	assert_int_equal(
		run(&out, &err, "g", "--view", "tv", "--format", "csv", NULL),
		0);
	assert_int_equal(line_no(out, "PID,", line, sizeof(line)), 0);
	assert_string_equal(line,
			    "PID,COMMAND,CHANGE,FIRST,@FIRST,LAST,@LAST,STATUS,"
			    "MAX,@MAX,MIN,@MIN,CPU");
	/* 22:13:20 is boot 0: capture k is at 22:30:00 + 10 k s. */
	assert_int_equal(line_no(out, "10,", line, sizeof(line)), 1);
	assert_string_equal(
		line,
		"10,grower,838860800,104857600," T("30:00") ",943718400," T(
			"30:20") ",ended,943718400," T("30:20") ",104857600," T("30:00") ",300");
	assert_int_equal(line_no(out, "20,", line, sizeof(line)), 5);
	assert_int_equal(lines(out), 6);
	/* The reused pid: two tasks, each its own first and last. */
	assert_int_equal(line_no(out, "40,reused,10485760,20971520,", line,
				 sizeof(line)),
			 2);
	assert_non_null(strstr(line, ",new,"));
	assert_int_equal(
		line_no(out, "40,reused,0,10485760,", line, sizeof(line)), 4);
	assert_non_null(strstr(line, "," T("30:10") ",ended,"));
	if (!strstr(err, "5 of 6 files, 1 skipped; 5 rows"))
		fail_msg("stderr: %s", err);
	assert_non_null(strstr(err, "warning: g: skipped an entry that is "
				    "not a readable snapshot (ctprof-2023"));
	free(out);
	free(err);
	/* --asc: the shrinker first. */
	assert_int_equal(run(&out, NULL, "g", "--view", "tv", "--format", "csv",
			     "--asc", NULL),
			 0);
	assert_int_equal(
		line_no(out, "20,shrinker,-419430400,", line, sizeof(line)), 1);
	free(out);
}

/* A counter: its increase, and its peak rate between two captures (20
 * ticks a second, 20 % of one CPU, in the interval to capture 2). */
static void test_counter(void **state)
{
	char *out, line[1024];
	(void)state;
	write_recording("c");
	assert_int_equal(run(&out, NULL, "c", "--view", "tv", "--format", "csv",
			     "--sort", "cpu", NULL),
			 0);
	assert_int_equal(line_no(out, "PID,", line, sizeof(line)), 0);
	assert_string_equal(line, "PID,COMMAND,INCREASE,PEAK%,@PEAK,@FIRST,"
				  "@LAST,STATUS,RSS");
	assert_int_equal(line_no(out, "10,grower,300,20,", line, sizeof(line)),
			 1);
	assert_string_equal(line,
			    "10,grower,300,20," T("30:20") "," T("30:00") "," T(
				    "30:20") ",ended,838860800");
	/* shrinker 0, 10, 20, 30, 40 (the corrupt file between): 40. */
	assert_int_equal(line_no(out, "20,shrinker,40,", line, sizeof(line)),
			 2);
	/* The new task of pid 40 counts from zero: 10 ticks. */
	assert_int_equal(line_no(out, "40,reused,10,", line, sizeof(line)), 3);
	free(out);
	/* The peak rate: rss:max is a gauge's; cpu:min is refused. */
	char *err;
	assert_int_equal(
		run(NULL, &err, "c", "--view", "tv", "--sort", "cpu:min", NULL),
		2);
	assert_non_null(strstr(err, "cpu is a counter"));
	free(err);
	assert_int_equal(run(&out, NULL, "c", "--view", "tv", "--format", "csv",
			     "--sort", "rss:max", "--top", "1", NULL),
			 0);
	assert_int_equal(line_no(out, "10,grower,", line, sizeof(line)), 1);
	assert_int_equal(lines(out), 2);
	free(out);
}

/* The text: the grower first, "ended", times as HH:MM:SS, fitted. */
static void test_text(void **state)
{
	char *out, line[1024];
	(void)state;
	write_recording("t");
	setenv("COLUMNS", "60", 1);
	assert_int_equal(run(&out, NULL, "t", "--view", "tv", NULL), 0);
	unsetenv("COLUMNS");
	assert_int_equal(line_no(out, "t: 2023-11-14 22:30:00 to 22:30:50 ",
				 line, sizeof(line)),
			 0);
	assert_int_equal(line_no(out, "PID COMMAND", line, sizeof(line)), 1);
	assert_int_equal(line_no(out, " 10 grower", line, sizeof(line)), 2);
	assert_non_null(strstr(line, "+800M"));
	assert_non_null(strstr(line, "22:30:20 ended"));
	for (const char *p = out; *p;) {
		const char *e = strchr(p, '\n');
		if (p != out) /* the header line is not the table's */
			assert_true((size_t)(e - p) <= 60);
		p = e + 1;
	}
	free(out);
}

/* ---- A live recording in which a child grows, then is killed ---- */

static void test_live(void **state)
{
	(void)state;
	struct stat st;
	if (stat("/proc/self/smaps_rollup", &st) < 0) {
		fprintf(stderr, "skip: no /proc/self/smaps_rollup\n");
		skip();
	}
	int to[2], back[2];
	assert_int_equal(pipe(to), 0);
	assert_int_equal(pipe(back), 0);
	pid_t grow = e2e_mem_holder(8, to[0], back[1]);
	e2e_started_add(grow);
	e2e_read_ack(back[0]);
	/* A proc root of the test and its child only: the recording holds
	 * what the test made, however busy the host. */
	const pid_t pids[] = {getpid(), grow};
	assert_int_equal(e2e_proc_root("proc", pids, 2), 0);
	char yaml[2 * PATH_MAX];
	int len = snprintf(yaml, sizeof(yaml),
			   "plugin_dirs: [\"%s\"]\n"
			   "roots: {proc: \"%s/proc\"}\n"
			   "plugins:\n  procfs-stat: {}\n  smaps: {}\n",
			   CTP_TEST_PLUGIN_DIR, tmp);
	assert_true(len > 0 && (size_t)len < sizeof(yaml));
	assert_int_equal(e2e_write_file("live.yaml", yaml, (size_t)len), 0);
	e2e_record_once("live.yaml", "rec");
	assert_int_equal(write(to[1], "\x30", 1), 1); /* +48 MiB */
	e2e_read_ack(back[0]);
	e2e_record_once("live.yaml", "rec");
	kill(grow, SIGKILL);
	assert_true(e2e_wait(grow, NULL) >= 0);
	e2e_started_done(grow);
	e2e_record_once("live.yaml", "rec");
	assert_int_equal(e2e_files("rec"), 3);
	char *out, *err, line[1024], want[64];
	int rc = run(&out, &err, "rec", "--view", "mem", "--format", "csv",
		     NULL);
	if (rc != 0)
		fail_msg("trend: %d: %s", rc, err);
	snprintf(want, sizeof(want), "%d,", (int)grow);
	if (line_no(out, want, line, sizeof(line)) != 1)
		fail_msg("not first:\n%s", out);
	/* It touched 48 MiB more and was gone at the last capture. */
	unsigned long long grew = 0;
	assert_int_equal(sscanf(line + strlen(want), "%*[^,],%llu", &grew), 1);
	assert_true(grew >= 48ull << 20);
	assert_non_null(strstr(line, ",ended,"));
	free(out);
	free(err);
	for (int i = 0; i < 2; i++) {
		close(to[i]);
		close(back[i]);
	}
}

static int setup(void **state)
{
	(void)state;
	char views[PATH_MAX];
	if (e2e_tmpdir("trend", tmp, sizeof(tmp)) < 0 || chdir(tmp) < 0 ||
	    mkdir("views", 0755) < 0 ||
	    e2e_write_file("views/tv.yaml", view_text, strlen(view_text)) < 0)
		return -1;
	if (E2E_PATHF(views, "%s/views", tmp) < 0)
		return -1;
	setenv("CTPROF_VIEW_DIR", views, 1);
	setenv("TZ", "UTC", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	e2e_started_stop_all();
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
