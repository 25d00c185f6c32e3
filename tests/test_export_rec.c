/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core export DIR --format csv|ndjson`: a whole recording as one
 * table (core/cli/export.c, core/cli/recdir.c ctp_recdir_walk,
 * core/analysis/flat.c's writer). Hand-built recordings whose files differ
 * in their fields (the union header, absent cells), hold a corrupt file
 * and a directory in the middle (skipped, counted), and are cut by
 * --from/--to; then a live recording by the real `record` of a process the
 * test grows by 8, 24 and 64 MiB, loaded into sqlite3, where the growth
 * query of docs/EXPORT.md finds that process first.
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

#define T0 1700000000000000000ull /* 2023-11-14T22:13:20Z */
#define S  1000000000ull

enum { X_RSS, X_SWAP, X_CPU, X_N };

/* A recording's file in dir at T0 + sec: processes 10 "grow" and 20
 * "flat", one thread each; the fields `which` (bits of X_*) with rss
 * rss10/rss20 and swap swap10/swap20. */
static void write_file(const char *dir, unsigned sec, unsigned which,
		       uint64_t rss10, uint64_t rss20, uint64_t swap10,
		       uint64_t swap20)
{
	const struct ctp_field_desc d[X_N] = {
		[X_RSS] = {"p.rss", "Resident", CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			   CTP_UNIT_BYTES, CTP_KIND_GAUGE, CTP_RULE_SUM},
		[X_SWAP] = {"p.swap", "Swapped", CTP_SCOPE_PROCESS,
			    CTP_TYPE_U64, CTP_UNIT_BYTES, CTP_KIND_GAUGE,
			    CTP_RULE_SUM},
		[X_CPU] = {"t.cpu", "CPU", CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
	};
	int fid[X_N];
	struct ctp_capture *cap = sb_capture("t");
	char path[PATH_MAX], err[512];
	int n = 0;
	cap->start_realtime_ns = T0 + sec * S;
	cap->end_realtime_ns = cap->start_realtime_ns + S / 10;
	for (int i = 0; i < X_N; i++)
		fid[i] = which & (1u << i)
				 ? ctp_registry_add(&cap->reg, 0, &d[i])
				 : -1;
	for (int i = 0; i < X_N; i++)
		assert_true(fid[i] < 0 || fid[i] == n++);
	const struct {
		uint32_t tgid;
		const char *comm;
		uint64_t rss, swap;
	} p[] = {{10, "grow", rss10, swap10}, {20, "flat", rss20, swap20}};
	for (int i = 0; i < 2; i++) {
		uint32_t r = sb_process(cap, p[i].tgid, p[i].comm);
		if (fid[X_RSS] >= 0)
			sb_put_u64(cap, &cap->procs[0], r, CTP_PROCESS_IDENT,
				   fid[X_RSS], p[i].rss);
		if (fid[X_SWAP] >= 0)
			sb_put_u64(cap, &cap->procs[0], r, CTP_PROCESS_IDENT,
				   fid[X_SWAP], p[i].swap);
		uint32_t t = sb_thread(cap, p[i].tgid, p[i].comm, -1);
		if (fid[X_CPU] >= 0)
			sb_put_u64(cap, &cap->threads[0], t, CTP_THREAD_IDENT,
				   fid[X_CPU], 5);
	}
	assert_int_equal(ctp_recdir_name(dir, cap->start_realtime_ns, path,
					 sizeof(path)),
			 0);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

#define B(x) (1u << (x))

/* Three files: rss only; rss and swap; swap and a thread field. */
static void write_recording(const char *dir)
{
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(dir, 0, B(X_RSS), 1000, 500, 0, 0);
	write_file(dir, 10, B(X_RSS) | B(X_SWAP), 3000, 500, 7, 0);
	write_file(dir, 20, B(X_SWAP) | B(X_CPU), 0, 0, 9, 1);
}

/* `export ARGS...`: e2e_run_verb. */
#define run(out, err, ...) e2e_run_verb("export", out, err, __VA_ARGS__)

#define HEADER                                                                 \
	"start_realtime_ns,capture_time,hostname,tgid,comm,nthreads,cgroup,"   \
	"start_boottime_ns,p.rss,p.swap\n"
#define ROWS_1                                                                 \
	"1700000000000000000,2023-11-14T22:13:20.000000Z,,10,grow,1,,,1000,\n" \
	"1700000000000000000,2023-11-14T22:13:20.000000Z,,20,flat,1,,,500,\n"
#define ROWS_2                                                                 \
	"1700000010000000000,2023-11-14T22:13:30.000000Z,,10,grow,1,,,3000,"   \
	"7\n"                                                                  \
	"1700000010000000000,2023-11-14T22:13:30.000000Z,,20,flat,1,,,500,0\n"
#define ROWS_3                                                                 \
	"1700000020000000000,2023-11-14T22:13:40.000000Z,,10,grow,1,,,,9\n"    \
	"1700000020000000000,2023-11-14T22:13:40.000000Z,,20,flat,1,,,,1\n"

/* The whole recording: one header, the union of the files' columns in
 * the order they first appear, every file's rows in capture order, a
 * field a file lacks an empty cell (CSV) or null (NDJSON). */
static void test_union(void **state)
{
	char *out, *err;
	(void)state;
	write_recording("u");
	assert_int_equal(run(&out, &err, "u", "--format", "csv", "--table",
			     "processes", NULL),
			 0);
	assert_string_equal(out, HEADER ROWS_1 ROWS_2 ROWS_3);
	if (!strstr(err, "u: 3 files, 2023-11-14 22:13:20.000 UTC to "
			 "2023-11-14 22:13:40.000 UTC"))
		fail_msg("stderr: %s", err);
	free(out);
	free(err);
	assert_int_equal(run(&out, NULL, "u", "--format", "ndjson", "--table",
			     "processes", NULL),
			 0);
	assert_non_null(strstr(
		out, "{\"start_realtime_ns\":1700000000000000000,"
		     "\"capture_time\":\"2023-11-14T22:13:20.000000Z\","
		     "\"hostname\":null,\"tgid\":10,\"comm\":\"grow\","
		     "\"nthreads\":1,\"cgroup\":null,\"start_boottime_ns\":"
		     "null,\"p.rss\":1000,\"p.swap\":null}\n"));
	assert_non_null(strstr(out,
			       "\"tgid\":20,\"comm\":\"flat\",\"nthreads\":"
			       "1,\"cgroup\":null,\"start_boottime_ns\":"
			       "null,\"p.rss\":null,\"p.swap\":1}\n"));
	free(out);
	/* The threads table: t.cpu only in the last file. */
	assert_int_equal(run(&out, NULL, "u", "--format", "csv", NULL), 0);
	assert_non_null(strstr(out, "cgroup,start_boottime_ns,t.cpu\n"));
	assert_non_null(strstr(out, "Z,,10,10,grow,grow,,,\n"));
	assert_non_null(strstr(out, "Z,,10,10,grow,grow,,,5\n"));
	free(out);
	/* --group-by: one row per group per capture. */
	assert_int_equal(run(&out, NULL, "u", "--format", "csv", "--table",
			     "processes", "--group-by", "comm", NULL),
			 0);
	assert_string_equal(
		out,
		"start_realtime_ns,capture_time,hostname,comm,threads,"
		"processes,cgroups,p.rss,p.swap\n"
		"1700000000000000000,2023-11-14T22:13:20.000000Z,,flat,1,1,0,"
		"500,\n"
		"1700000000000000000,2023-11-14T22:13:20.000000Z,,grow,1,1,0,"
		"1000,\n"
		"1700000010000000000,2023-11-14T22:13:30.000000Z,,flat,1,1,0,"
		"500,0\n"
		"1700000010000000000,2023-11-14T22:13:30.000000Z,,grow,1,1,0,"
		"3000,7\n"
		"1700000020000000000,2023-11-14T22:13:40.000000Z,,flat,1,1,0,,"
		"1\n"
		"1700000020000000000,2023-11-14T22:13:40.000000Z,,grow,1,1,0,,"
		"9\n");
	free(out);
	/* A file of the recording given by its name: that file only. */
	char path[PATH_MAX];
	assert_int_equal(ctp_recdir_name("u", T0 + 10 * S, path, sizeof(path)),
			 0);
	assert_int_equal(run(&out, NULL, path, "--format", "csv", "--table",
			     "processes", NULL),
			 0);
	assert_string_equal(
		out, "start_realtime_ns,capture_time,hostname,tgid,comm,"
		     "nthreads,cgroup,start_boottime_ns,p.rss,p.swap\n" ROWS_2);
	free(out);
}

/* A file that is no snapshot and a directory named like one, in the
 * middle: skipped, counted on stderr, never fatal. */
static void test_corrupt_middle(void **state)
{
	char *out, *err, path[PATH_MAX];
	(void)state;
	write_recording("c");
	assert_int_equal(ctp_recdir_name("c", T0 + 5 * S, path, sizeof(path)),
			 0);
	assert_int_equal(e2e_write_file(path, "not zstd at all", 15), 0);
	assert_int_equal(ctp_recdir_name("c", T0 + 15 * S, path, sizeof(path)),
			 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(run(&out, &err, "c", "--format", "csv", "--table",
			     "processes", NULL),
			 0);
	assert_string_equal(out, HEADER ROWS_1 ROWS_2 ROWS_3);
	if (!strstr(err, "warning: c: skipped 2 entries that are not readable "
			 "snapshots (first: ctprof-20231114T2213") ||
	    !strstr(err, "c: 3 files"))
		fail_msg("stderr: %s", err);
	free(out);
	free(err);
	/* Nothing readable: an error, and no output file. */
	assert_int_equal(mkdir("bad", 0755), 0);
	assert_int_equal(ctp_recdir_name("bad", T0, path, sizeof(path)), 0);
	assert_int_equal(e2e_write_file(path, "junk", 4), 0);
	assert_int_equal(run(NULL, &err, "bad", "--format", "csv", "-o",
			     "bad.csv", NULL),
			 1);
	assert_non_null(strstr(err, "bad: no readable snapshot"));
	assert_int_equal(access("bad.csv", F_OK), -1);
	free(err);
}

/* --from and --to pick files as compare does: each the newest at or
 * before its time (local time; TZ=UTC here). */
static void test_from_to(void **state)
{
	char *out, *err;
	(void)state;
	write_recording("r");
	assert_int_equal(setenv("TZ", "UTC", 1), 0);
	assert_int_equal(run(&out, NULL, "r", "--format", "csv", "--table",
			     "processes", "--from", "2023-11-14T22:13:35",
			     "--to", "2023-11-14T22:13:39", NULL),
			 0);
	assert_string_equal(out, HEADER ROWS_2);
	free(out);
	/* From the first file (a time before the recording) to one. */
	assert_int_equal(run(&out, NULL, "r", "--format", "csv", "--table",
			     "processes", "--from", "2020-01-01T00:00", "--to",
			     "2023-11-14T22:13:30", NULL),
			 0);
	assert_string_equal(out, HEADER ROWS_1 ROWS_2);
	free(out);
	/* --from latest: the latest file only (export DIR's old answer). */
	assert_int_equal(run(&out, NULL, "r", "--format", "csv", "--table",
			     "processes", "--from", "latest", NULL),
			 0);
	assert_string_equal(
		out, "start_realtime_ns,capture_time,hostname,tgid,comm,"
		     "nthreads,cgroup,start_boottime_ns,p.swap\n"
		     "1700000020000000000,2023-11-14T22:13:40.000000Z,,10,grow,"
		     "1,,,9\n"
		     "1700000020000000000,2023-11-14T22:13:40.000000Z,,20,flat,"
		     "1,,,1\n");
	free(out);
	/* --from after --to: an error. */
	assert_int_equal(run(&out, &err, "r", "--format", "csv", "--from",
			     "2023-11-14T22:13:45", "--to",
			     "2023-11-14T22:13:25", NULL),
			 1);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "picks a file after"));
	free(out);
	free(err);
	/* Not a time; on a file; for metrics: usage errors. */
	assert_int_equal(
		run(NULL, &err, "r", "--format", "csv", "--from", "9:00", NULL),
		2);
	assert_non_null(strstr(err, "'9:00' is no time"));
	free(err);
	char path[PATH_MAX];
	assert_int_equal(ctp_recdir_name("r", T0, path, sizeof(path)), 0);
	assert_int_equal(run(NULL, NULL, path, "--format", "csv", "--from",
			     "latest", NULL),
			 2);
	assert_int_equal(run(NULL, NULL, "r", "--format", "prometheus",
			     "--from", "latest", NULL),
			 2);
	/* OpenMetrics of a directory: the files --from and --to pick, each
	 * sample at its capture's time. */
	assert_int_equal(run(&out, &err, "r", "--from", "2020-01-01T00:00",
			     "--to", "2023-11-14T22:13:30", NULL),
			 0);
	assert_non_null(
		strstr(out, "ctprof_capture_timestamp_seconds 1700000000 "));
	assert_non_null(
		strstr(out, "ctprof_capture_timestamp_seconds 1700000010 "));
	assert_null(strstr(out, "1700000020"));
	assert_non_null(strstr(err, ": 2 files of the recording"));
	free(out);
	free(err);
	/* The 0.0.4 text of a directory: still its latest file. */
	assert_int_equal(run(&out, NULL, "r", "--format", "prometheus", NULL),
			 0);
	assert_non_null(
		strstr(out, "ctprof_capture_timestamp_seconds 1700000020\n"));
	free(out);
}

/* A one-shot textfile: its capture time as a gauge (what the alert of
 * tests/prometheus/ctprof_stale.rules.yml reads), and a note on stderr
 * that nothing will refresh it; record --textfile, which does, says
 * nothing of it. */
static void test_textfile_stale(void **state)
{
	char *out, *err, path[PATH_MAX];
	size_t len;
	(void)state;
	assert_int_equal(mkdir("s", 0755), 0);
	write_file("s", 20, B(X_RSS), 1000, 500, 0, 0);
	assert_int_equal(mkdir("tf", 0755), 0);
	assert_int_equal(run(NULL, &err, "s", "--textfile", "tf", NULL), 0);
	if (!strstr(err, "tf/ctprof.prom is of this one capture and will not "
			 "be refreshed: `ctprof-core record --textfile tf` "
			 "keeps it current"))
		fail_msg("stderr: %s", err);
	free(err);
	/* -q (a cron job's refresh): nothing on stderr, the same file. */
	assert_int_equal(run(NULL, &err, "s", "--textfile", "tf", "-q", NULL),
			 0);
	assert_string_equal(err, "");
	free(err);
	assert_int_equal(e2e_read_file("tf/ctprof.prom", &out, &len), 0);
	assert_non_null(strstr(out, "\nctprof_capture_timestamp_seconds "
				    "1700000020\n"));
	free(out);
	/* The alert's metric is the one written. */
	snprintf(path, sizeof(path),
		 "%s/tests/prometheus/ctprof_stale.rules.yml",
		 CTP_TEST_SOURCE_DIR);
	assert_int_equal(e2e_read_file(path, &out, &len), 0);
	assert_non_null(strstr(
		out,
		"expr: time() - ctprof_capture_timestamp_seconds > 300\n"));
	free(out);
	/* record --textfile refreshes it: no note. */
	char yaml[2 * PATH_MAX];
	int n = snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\"]\n"
			 "roots: {proc: \"%s/proc\", sys: \"%s/sys\"}\n"
			 "plugins:\n  procfs-stat: {}\n",
			 CTP_TEST_PLUGIN_DIR, CTP_TEST_FIXTURES,
			 CTP_TEST_FIXTURES);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	assert_int_equal(e2e_write_file("fx.yaml", yaml, (size_t)n), 0);
	const char *rec[] = {"record",	"--config", "fx.yaml",	  "-o", "rt",
			     "--count", "1",	    "--textfile", "tf", NULL};
	assert_int_equal(e2e_run(rec, NULL, "err.txt"), 0);
	assert_int_equal(e2e_read_file("err.txt", &err, &len), 0);
	assert_null(strstr(err, "will not be refreshed"));
	free(err);
}

/* ---- A live recording in which one process grows ---- */

/* What sqlite3 answers to sql over table p of rec.csv, in out. */
static void sqlite(const char *sql, char *out, size_t n)
{
	char cmd[4096], *text;
	size_t len;
	snprintf(cmd, sizeof(cmd),
		 "sqlite3 -csv :memory: '.import --csv rec.csv p' \"%s\" "
		 "> sql.txt 2> sql-err.txt",
		 sql);
	if (system(cmd) != 0) {
		e2e_show_file("sqlite3", "sql-err.txt");
		fail_msg("sqlite3 failed: %s", sql);
	}
	assert_int_equal(e2e_read_file("sql.txt", &text, &len), 0);
	snprintf(out, n, "%s", text);
	free(text);
}

static void test_growth_sqlite(void **state)
{
	(void)state;
	if (system("sqlite3 --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skip: no sqlite3\n");
		skip();
	}
	int to[2], back[2], to2[2], back2[2];
	assert_int_equal(pipe(to), 0);
	assert_int_equal(pipe(back), 0);
	assert_int_equal(pipe(to2), 0);
	assert_int_equal(pipe(back2), 0);
	/* The grower at 8 MiB, and a bigger one that stays at 32. */
	pid_t grow = e2e_mem_holder(8, to[0], back[1]);
	pid_t flat = e2e_mem_holder(32, to2[0], back2[1]);
	e2e_started_add(grow);
	e2e_started_add(flat);
	e2e_read_ack(back[0]);
	e2e_read_ack(back2[0]);
	/* A proc root of the test and its two children only: what the
	 * recording holds is what the test made, however busy the host. */
	const pid_t pids[] = {getpid(), grow, flat};
	assert_int_equal(e2e_proc_root("proc", pids, 3), 0);
	char yaml[2 * PATH_MAX];
	int len = snprintf(yaml, sizeof(yaml),
			   "plugin_dirs: [\"%s\"]\n"
			   "roots: {proc: \"%s/proc\"}\n"
			   "plugins:\n  procfs-stat: {}\n  smaps: {}\n",
			   CTP_TEST_PLUGIN_DIR, tmp);
	assert_true(len > 0 && (size_t)len < sizeof(yaml));
	assert_int_equal(e2e_write_file("live.yaml", yaml, (size_t)len), 0);
	/* 8, 24, 64 MiB: a capture at each. */
	e2e_record_once("live.yaml", "rec");
	assert_int_equal(write(to[1], "\x10", 1), 1); /* +16 MiB */
	e2e_read_ack(back[0]);
	e2e_record_once("live.yaml", "rec");
	assert_int_equal(write(to[1], "\x28", 1), 1); /* +40 MiB */
	e2e_read_ack(back[0]);
	e2e_record_once("live.yaml", "rec");
	assert_int_equal(e2e_files("rec"), 3);
	char *err;
	assert_int_equal(run(NULL, &err, "rec", "--format", "csv", "--table",
			     "processes", "-o", "rec.csv", NULL),
			 0);
	assert_non_null(strstr(err, "rec: 3 files"));
	free(err);
	/* Per task (pid and start), the growth over the recording. */
	char ans[512], want[64];
	sqlite("SELECT tgid, max(CAST(\\\"smaps.rss\\\" AS INTEGER)) - "
	       "min(CAST(\\\"smaps.rss\\\" AS INTEGER)) AS grew FROM p "
	       "GROUP BY tgid, start_boottime_ns HAVING count(*) = 3 "
	       "ORDER BY grew DESC LIMIT 1",
	       ans, sizeof(ans));
	uint64_t grew = 0;
	int got = 0;
	assert_int_equal(sscanf(ans, "%d,%" SCNu64, &got, &grew), 2);
	if (got != grow)
		e2e_show_file("the recording", "rec.csv");
	assert_int_equal(got, grow);
	/* It touched 56 MiB more; smaps counts what is resident. */
	assert_true(grew >= 56ull << 20 && grew < 60ull << 20);
	/* EXPORT.md's query: first to last capture, by window. */
	sqlite("SELECT DISTINCT tgid, last_value(comm) OVER w AS comm, "
	       "last_value(rss) OVER w - first_value(rss) OVER w AS grew "
	       "FROM (SELECT tgid, comm, start_boottime_ns AS st, "
	       "start_realtime_ns AS t, "
	       "CAST(\\\"smaps.rss\\\" AS INTEGER) AS rss FROM p) WINDOW w AS "
	       "(PARTITION BY tgid, st ORDER BY t ROWS BETWEEN UNBOUNDED "
	       "PRECEDING AND UNBOUNDED FOLLOWING) ORDER BY grew DESC LIMIT 1",
	       ans, sizeof(ans));
	snprintf(want, sizeof(want), "%d,test_export_rec,%" PRIu64 "\n",
		 (int)grow, grew);
	assert_string_equal(ans, want);
	/* Every row has its capture_time, one per file. */
	sqlite("SELECT count(DISTINCT capture_time), count(DISTINCT "
	       "start_realtime_ns) FROM p",
	       ans, sizeof(ans));
	assert_string_equal(ans, "3,3\n");
	kill(grow, SIGKILL);
	kill(flat, SIGKILL);
	assert_true(e2e_wait(grow, NULL) >= 0);
	assert_true(e2e_wait(flat, NULL) >= 0);
	e2e_started_done(grow);
	e2e_started_done(flat);
	for (int i = 0; i < 2; i++) {
		close(to[i]);
		close(back[i]);
		close(to2[i]);
		close(back2[i]);
	}
}

static int setup(void **state)
{
	(void)state;
	if (e2e_tmpdir("export-rec", tmp, sizeof(tmp)) < 0 || chdir(tmp) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	e2e_started_stop_all();
	if (chdir("/") < 0)
		return -1;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_union),
		cmocka_unit_test(test_corrupt_middle),
		cmocka_unit_test(test_from_to),
		cmocka_unit_test(test_textfile_stale),
		cmocka_unit_test(test_growth_sqlite),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
