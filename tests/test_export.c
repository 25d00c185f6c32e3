/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core export` on a hand-built snapshot whose values are known:
 *   nginx 10: threads 10 (150 ticks, 2.5 s waited, S) and 11 (50, R)
 *   nginx 20: thread 20 (100 ticks, S)        -> group nginx 3.00 s
 *   redis 30: thread 30 (400 ticks, S)        -> group redis 4.00 s
 *   cron 40:  thread 40 (1 tick, S)           -> group cron  0.01 s
 * with a process gauge (bytes), a cgroup counter (us) and a host gauge
 * (hundredths of a percent). The outputs go to the clients people use:
 * promtool, Python's OpenMetrics parser, sqlite3 (each test skips with a
 * reason where its client is missing).
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
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "openmetrics.h"
#include "snapbuild.h"

static char tmp[PATH_MAX];

enum { X_CPU, X_WAIT, X_STATE, X_RSS, X_USAGE, X_LOAD, X_N };

static void write_snap(const char *path)
{
	const struct ctp_field_desc d[X_N] = {
		[X_CPU] = {"t.cpu", "CPU time", CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[X_WAIT] = {"t.wait_ns", "Run-queue wait", CTP_SCOPE_THREAD,
			    CTP_TYPE_U64, CTP_UNIT_NS, CTP_KIND_COUNTER,
			    CTP_RULE_SUM},
		[X_STATE] = {"t.state", "State letter", CTP_SCOPE_THREAD,
			     CTP_TYPE_CHAR, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
			     CTP_RULE_MODE},
		[X_RSS] = {"p.rss", "Resident \"set\"\\size", CTP_SCOPE_PROCESS,
			   CTP_TYPE_U64, CTP_UNIT_BYTES, CTP_KIND_GAUGE,
			   CTP_RULE_SUM},
		[X_USAGE] = {"c.usage_usec", "Cgroup CPU", CTP_SCOPE_CGROUP,
			     CTP_TYPE_U64, CTP_UNIT_US, CTP_KIND_COUNTER,
			     CTP_RULE_SUM},
		[X_LOAD] = {"host.pressure", "Pressure", CTP_SCOPE_HOST,
			    CTP_TYPE_U64, CTP_UNIT_CENTIPCT, CTP_KIND_GAUGE,
			    CTP_RULE_MAX},
	};
	static const struct {
		uint32_t tgid, tid;
		const char *comm;
		uint64_t cpu, wait;
		char state;
		uint64_t rss;
	} rows[] = {
		{10, 10, "nginx", 150, 2500000000ull, 'S', 4096},
		{10, 11, "nginx", 50, 0, 'R', 0},
		{20, 20, "nginx", 100, 7, 'S', 8192},
		{30, 30, "redis", 400, 1, 'S', 1 << 20},
		{40, 40, "cron", 1, 0, 'S', 12288},
	};
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < X_N; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t cg = sb_cgroup(cap, "/system.slice/web.service");
	sb_put_u64(cap, &cap->cgroups, cg, CTP_CGROUP_IDENT, X_USAGE, 1234567);
	sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, X_LOAD, 1250);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (i == 0 || rows[i].tgid != rows[i - 1].tgid) {
			uint32_t p =
				sb_process(cap, rows[i].tgid, rows[i].comm);
			sb_put_u64(cap, &cap->procs[0], p, CTP_PROCESS_IDENT,
				   X_RSS, rows[i].rss);
		}
		uint32_t r = sb_thread(cap, rows[i].tid, rows[i].comm, (int)cg);
		struct ctp_table *t = &cap->threads[0];
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, X_CPU, rows[i].cpu);
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, X_WAIT, rows[i].wait);
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, X_STATE,
			   (uint64_t)rows[i].state);
	}
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/* A snapshot of n host fields "h.f<i>" (value i) and n thread fields
 * "t.f<i>" (value i on one thread), then "x.dup-a" (1) and "x.dup_a" (2),
 * one family name: what export must write in time linear in the fields
 * (for a measurement: `test_export --write-many N PATH`). */
static int write_many(const char *path, size_t n)
{
	struct ctp_capture *cap = sb_capture("h");
	char err[512], (*names)[32] = calloc(2 * n + 2, sizeof(*names));
	assert_non_null(names);
	for (size_t i = 0; i < 2 * n + 2; i++) {
		bool host = i < n || i >= 2 * n;
		if (i >= 2 * n)
			snprintf(names[i], sizeof(names[i]), "x.dup%ca",
				 i == 2 * n ? '-' : '_');
		else
			snprintf(names[i], sizeof(names[i]), "%s.f%zu",
				 host ? "h" : "t", i < n ? i : i - n);
		const struct ctp_field_desc d = {
			.name = names[i],
			.help = "many",
			.scope = host ? CTP_SCOPE_HOST : CTP_SCOPE_THREAD,
			.type = CTP_TYPE_U64,
			.unit = CTP_UNIT_COUNT,
			.kind = CTP_KIND_GAUGE,
			.rule = CTP_RULE_SUM,
		};
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d), (int)i);
	}
	sb_process(cap, 1, "many");
	uint32_t r = sb_thread(cap, 1, "many", -1);
	for (size_t i = 0; i < n; i++) {
		sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, (int)i, i);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT,
			   (int)(n + i), i);
	}
	for (size_t i = 0; i < 2; i++)
		sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, (int)(2 * n + i),
			   i + 1);
	int rc = sb_write(cap, path, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "write %s: %s\n", path, err);
	ctp_capture_free(cap);
	free(names);
	return rc < 0;
}

/* `export snap.ctprof ARGS...` (NULL-terminated) into *out; its exit. */
static int run_export(char **out, ...)
{
	const char *args[16] = {"export", "snap.ctprof"};
	size_t n = 2, len;
	va_list ap;
	va_start(ap, out);
	for (const char *a; n < 15 && (a = va_arg(ap, const char *));)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	int rc = e2e_run(args, "out.txt", "err.txt");
	assert_int_equal(e2e_read_file("out.txt", out, &len), 0);
	return rc;
}

static void has_line(const char *text, const char *line)
{
	if (!e2e_has_line(text, line))
		fail_msg("no line '%s' in:\n%s", line, text);
}

/* The number writer: exact decimals of every unit's conversion, from 0 to
 * 2^64-1 and past it (a sum of groups), never rounded. */
static void test_decimal(void **state)
{
	static const struct {
		unsigned __int128 mag;
		bool neg;
		unsigned dec;
		const char *want;
	} c[] = {
		{0, false, 0, "0"},
		{0, false, 9, "0"},
		{0, true, 2, "0"},
		{1, false, 0, "1"},
		{1, false, 9, "0.000000001"}, /* 1 ns */
		{1, false, 6, "0.000001"},    /* 1 us */
		{1, false, 2, "0.01"},	      /* 1 tick */
		{1, false, 4, "0.0001"},      /* 0.01 % */
		{123456789, false, 9, "0.123456789"},
		{2500000007, false, 9, "2.500000007"},
		{1250, false, 4, "0.125"},
		{100, false, 2, "1"},
		{1000000000, false, 9, "1"},
		{1700000000123456789, false, 9, "1700000000.123456789"},
		{(unsigned __int128)1 << 63, false, 0, "9223372036854775808"},
		{(unsigned __int128)1 << 63, true, 0, "-9223372036854775808"},
		{(unsigned __int128)1 << 63, false, 2, "92233720368547758.08"},
		{UINT64_MAX, false, 0, "18446744073709551615"},
		{UINT64_MAX, false, 9, "18446744073.709551615"},
		{UINT64_MAX, false, 6, "18446744073709.551615"},
		{UINT64_MAX, false, 2, "184467440737095516.15"},
		{UINT64_MAX, false, 4, "1844674407370955.1615"},
		{18446744073709551367ull, false, 0, "18446744073709551367"},
		{(unsigned __int128)UINT64_MAX * 2, false, 0,
		 "36893488147419103230"},
		{15, false, 10, "0.0000000015"}, /* 1.5 ns */
		{5, true, 1, "-0.5"},
	};
	char buf[64];
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int n = ctp_om_decimal(buf, sizeof(buf), c[i].mag, c[i].neg,
				       c[i].dec);
		if (n < 0 || strcmp(buf, c[i].want) != 0)
			fail_msg("case %zu: \"%s\", expected \"%s\"", i, buf,
				 c[i].want);
		assert_int_equal((size_t)n, strlen(c[i].want));
	}
	assert_int_equal(ctp_om_decimal(buf, sizeof(buf), 1, false, 39),
			 -EINVAL);
}

enum { B_HUGE, B_NEG, B_NS, B_TICKS, B_MID, B_SAT, B_CG, B_N };

/* Values at the ends of their types, and a capture timestamp with
 * nanoseconds: each exported exactly (EXPORT.md "Units"). */
static void write_big(const char *path)
{
	const struct ctp_field_desc d[B_N] = {
		[B_HUGE] = {"big.huge", "Big", CTP_SCOPE_HOST, CTP_TYPE_U64,
			    CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[B_NEG] = {"big.neg", "Low", CTP_SCOPE_HOST, CTP_TYPE_I64,
			   CTP_UNIT_NONE, CTP_KIND_GAUGE, CTP_RULE_MIN},
		[B_NS] = {"t.busy", "Busy", CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_NS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[B_TICKS] = {"t.cpu", "CPU", CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[B_MID] = {"t.lat", "Latency", CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_NS, CTP_KIND_GAUGE, CTP_RULE_RANGE},
		[B_SAT] = {"t.sat", "Saturates", CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_NS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[B_CG] = {"c.usage_usec", "Cgroup CPU", CTP_SCOPE_CGROUP,
			  CTP_TYPE_U64, CTP_UNIT_US, CTP_KIND_COUNTER,
			  CTP_RULE_SUM},
	};
	/* Group "a" ranks first (by t.busy), then "b" and "c": with --top 1
	 * the rest is b + c, past 2^64; c's t.sat is past it. */
	static const struct {
		uint32_t tgid, tid;
		const char *comm;
		uint64_t busy, cpu, lat, sat;
	} rows[] = {
		{10, 10, "a", UINT64_MAX, 1ull << 63, 1, 1},
		{10, 11, "a", 0, 0, 2, 0},
		{20, 20, "b", UINT64_MAX - 1, 3, 7, 1},
		{30, 30, "c", UINT64_MAX - 2, 2, 7, UINT64_MAX},
		{30, 31, "c", 0, 0, 7, UINT64_MAX},
	};
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < B_N; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	cap->start_realtime_ns = 1700000000123456789ull;
	cap->start_mono_ns = 1;
	cap->end_mono_ns = UINT64_MAX;
	uint32_t cg = sb_cgroup(cap, "/big");
	sb_put_u64(cap, &cap->cgroups, cg, CTP_CGROUP_IDENT, B_CG, UINT64_MAX);
	sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, B_HUGE,
		   18446744073709551367ull);
	sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, B_NEG,
		   (uint64_t)INT64_MIN);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (i == 0 || rows[i].tgid != rows[i - 1].tgid)
			sb_process(cap, rows[i].tgid, rows[i].comm);
		uint32_t r = sb_thread(cap, rows[i].tid, rows[i].comm, (int)cg);
		struct ctp_table *t = &cap->threads[0];
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, B_NS, rows[i].busy);
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, B_TICKS, rows[i].cpu);
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, B_MID, rows[i].lat);
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, B_SAT, rows[i].sat);
	}
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/* A process named "" (prctl(PR_SET_NAME, "")): its series is labelled
 * group="\"\"", never group="", which Prometheus takes for no label and
 * so for the group-less series (exits of no known group). */
static void test_empty_name(void **state)
{
	const struct ctp_field_desc d = {
		"t.busy",    "Busy",	       CTP_SCOPE_THREAD, CTP_TYPE_U64,
		CTP_UNIT_NS, CTP_KIND_COUNTER, CTP_RULE_SUM};
	struct ctp_capture *cap = sb_capture("t");
	char err[512], *out;
	size_t len;

	(void)state;
	assert_int_equal(ctp_registry_add(&cap->reg, 0, &d), 0);
	cap->start_mono_ns = 1;
	cap->end_mono_ns = 2;
	sb_process(cap, 10, "a");
	uint32_t r = sb_thread(cap, 10, "a", -1);
	sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, 0, 1000000000);
	sb_process(cap, 20, "");
	r = sb_thread(cap, 20, "", -1);
	sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, 0, 2000000000);
	if (sb_write(cap, "empty.ctprof", err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
	const char *args[] = {"export", "empty.ctprof", NULL};
	assert_int_equal(e2e_run(args, "empty.om", "err.txt"), 0);
	assert_int_equal(e2e_read_file("empty.om", &out, &len), 0);
	has_line(out, "ctprof_t_busy_seconds_total{group=\"a\"} 1");
	has_line(out, "ctprof_t_busy_seconds_total{group=\"\\\"\\\"\"} 2");
	assert_null(strstr(out, "group=\"\"}"));
	assert_null(strstr(out, "ctprof_t_busy_seconds_total "));
	free(out);
}

static void test_exact(void **state)
{
	char *out;
	size_t len;
	(void)state;
	write_big("big.ctprof");
	const char *args[] = {"export", "big.ctprof", "--top", "1", NULL};
	assert_int_equal(e2e_run(args, "big.om", "err.txt"), 0);
	assert_int_equal(e2e_read_file("big.om", &out, &len), 0);
	has_line(out, "ctprof_big_huge_total 18446744073709551367");
	has_line(out, "ctprof_big_neg -9223372036854775808");
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"a\"} "
		      "92233720368547758.08");
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"other\"} 0.05");
	has_line(out, "ctprof_t_busy_seconds_total{group=\"a\"} "
		      "18446744073.709551615");
	/* b + c: 2^65 - 5 ns, a sum no 64-bit float holds. */
	has_line(out, "ctprof_t_busy_seconds_total{group=\"other\"} "
		      "36893488147.419103227");
	/* c's sum is not known: no sample of it, nor of the rest. */
	has_line(out, "ctprof_t_sat_seconds_total{group=\"a\"} 0.000000001");
	assert_null(strstr(out, "ctprof_t_sat_seconds_total{group=\"other\"}"));
	/* a's latency ranges 1..2 ns: its middle, 1.5 ns. */
	has_line(out, "ctprof_t_lat_seconds{group=\"a\"} 0.0000000015");
	has_line(out, "ctprof_c_usage_seconds_total{cgroup=\"/big\"} "
		      "18446744073709.551615");
	has_line(out, "ctprof_capture_timestamp_seconds "
		      "1700000000.123456789");
	has_line(out, "ctprof_capture_duration_seconds "
		      "18446744073.709551614");
	assert_null(strstr(out, "e+"));
	free(out);
	if (system("/usr/bin/python3 -c 'import prometheus_client' "
		   "2>/dev/null") == 0)
		assert_int_equal(
			system("/usr/bin/python3 -c 'from prometheus_client."
			       "openmetrics.parser import "
			       "text_string_to_metric_families as p\n"
			       "list(p(open(\"big.om\").read()))'"),
			0);
	/* What Prometheus reads of it. */
	if (system("promtool --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skip: no promtool (Debian's prometheus)\n");
		skip();
	}
	const char *prom[] = {"export", "big.ctprof", "--format", "prometheus",
			      NULL};
	assert_int_equal(e2e_run(prom, "big.prom", "err.txt"), 0);
	if (system("promtool check metrics < big.prom > lint.txt 2>&1")) {
		e2e_show_file("promtool check metrics", "lint.txt");
		fail_msg("promtool refused the export");
	}
}

/* Many fields: every family written once with its value (and, measured
 * in the report of issue 28, in time linear in the fields). */
static void test_many_fields(void **state)
{
	enum { N = 3000 };
	char *out, line[96];
	size_t len;
	(void)state;
	assert_int_equal(write_many("many.ctprof", N), 0);
	const char *args[] = {"export", "many.ctprof", NULL};
	assert_int_equal(e2e_run(args, "many.om", "err.txt"), 0);
	assert_int_equal(e2e_read_file("many.om", &out, &len), 0);
	size_t types = 0;
	for (const char *p = out; (p = strstr(p, "# TYPE ")); p++)
		types++;
	/* 2N fields, one of the two that clash, the collector's and the
	 * capture's 10 families. */
	assert_int_equal(types, 2 * N + 1 + 10);
	has_line(out, "ctprof_x_dup_a 1"); /* the first field keeps it */
	assert_null(strstr(out, "ctprof_x_dup_a 2"));
	for (size_t i = 0; i < N; i += 7) {
		snprintf(line, sizeof(line), "ctprof_h_f%zu %zu", i, i);
		has_line(out, line);
		snprintf(line, sizeof(line),
			 "ctprof_t_f%zu{group=\"many\"} %zu", i, i);
		has_line(out, line);
	}
	free(out);
	assert_int_equal(e2e_read_file("err.txt", &out, &len), 0);
	assert_non_null(strstr(out, "1 fields left out"));
	free(out);
}

/* Values in base units, exactly; one family per field; counters _total;
 * the categorical field counts threads per value; absent is no sample. */
static void test_openmetrics(void **state)
{
	char *out;
	(void)state;
	assert_int_equal(run_export(&out, NULL), 0);
	e2e_golden(CTP_TEST_SOURCE_DIR "/tests/golden/export/snap.om", out,
		   strlen(out));
	has_line(out, "# TYPE ctprof_t_cpu_seconds counter");
	has_line(out, "# UNIT ctprof_t_cpu_seconds seconds");
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"redis\"} 4");
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"nginx\"} 3");
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"cron\"} 0.01");
	/* t.wait_ns: the unit's word dropped, the value in seconds. */
	has_line(out, "ctprof_t_wait_seconds_total{group=\"nginx\"} "
		      "2.500000007");
	has_line(out, "ctprof_t_state{group=\"nginx\",state=\"S\"} 2");
	has_line(out, "ctprof_t_state{group=\"nginx\",state=\"R\"} 1");
	has_line(out, "ctprof_p_rss_bytes{group=\"redis\"} 1048576");
	has_line(out, "ctprof_c_usage_seconds_total{cgroup=\"/system.slice/"
		      "web.service\"} 1.234567");
	has_line(out, "ctprof_host_pressure_ratio 0.125");
	has_line(out, "# HELP ctprof_p_rss_bytes Resident \\\"set\\\"\\\\size "
		      "(field p.rss)");
	has_line(out, "# EOF");
	assert_null(strstr(out, "group=\"other\""));
	free(out);
	/* --top 1: redis, and the rest summed by each field's rule. */
	assert_int_equal(
		run_export(&out, "--top", "1", "--fields", "t.*", NULL), 0);
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"redis\"} 4");
	has_line(out, "ctprof_t_cpu_seconds_total{group=\"other\"} 3.01");
	has_line(out, "ctprof_t_state{group=\"other\",state=\"S\"} 3");
	assert_null(strstr(out, "rss"));
	free(out);
	char *err;
	size_t len;
	assert_int_equal(e2e_read_file("err.txt", &err, &len), 0);
	assert_non_null(strstr(err, "1 of 3 groups, the rest as "
				    "group=\"other\""));
	free(err);
}

/* Python's OpenMetrics parser is strict (TYPE, UNIT, _total, # EOF). */
static void test_openmetrics_parser(void **state)
{
	char *out;
	(void)state;
	if (system("/usr/bin/python3 -c 'import prometheus_client' "
		   "2>/dev/null") != 0) {
		fprintf(stderr, "skip: no python3-prometheus-client\n");
		skip();
	}
	assert_int_equal(run_export(&out, "-o", "snap.om", NULL), 0);
	free(out);
	int rc = system(
		"/usr/bin/python3 -c 'import sys\n"
		"from prometheus_client.openmetrics.parser import "
		"text_string_to_metric_families as p\n"
		"n = sum(len(f.samples) for f in p(open(\"snap.om\").read()))\n"
		"sys.exit(0 if n > 10 else 1)'");
	assert_int_equal(rc, 0);
}

/* The Prometheus text format passes promtool's checks, names included. */
static void test_promtool(void **state)
{
	char *out;
	(void)state;
	if (system("promtool --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skip: no promtool (Debian's prometheus)\n");
		skip();
	}
	assert_int_equal(run_export(&out, "--format", "prometheus", "-o",
				    "snap.prom", NULL),
			 0);
	free(out);
	if (system("promtool check metrics < snap.prom > lint.txt 2>&1")) {
		e2e_show_file("promtool check metrics", "lint.txt");
		fail_msg("promtool refused the export");
	}
	assert_int_equal(e2e_read_file("snap.prom", &out, &(size_t){0}), 0);
	has_line(out, "# TYPE ctprof_t_cpu_seconds_total counter");
	assert_null(strstr(out, "# EOF"));
	free(out);
}

/* --textfile DIR: DIR/ctprof.prom in the text format, nothing else. */
static void test_textfile(void **state)
{
	char *out;
	size_t n;
	(void)state;
	assert_int_equal(mkdir("tf", 0700) == 0 || errno == EEXIST, 1);
	assert_int_equal(run_export(&out, "--textfile", "tf", NULL), 0);
	free(out);
	assert_int_equal(e2e_read_file("tf/ctprof.prom", &out, &n), 0);
	has_line(out, "# TYPE ctprof_t_cpu_seconds_total counter");
	free(out);
	struct stat st;
	assert_int_equal(stat("tf/ctprof.prom", &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* node_exporter reads it */
	assert_int_equal(e2e_count_entries("tf", &n), 0);
	assert_int_equal(n, 1);
	/* A bad combination is a usage error that writes nothing. */
	assert_int_equal(
		run_export(&out, "--textfile", "tf", "--format", "csv", NULL),
		2);
	free(out);
	assert_int_equal(run_export(&out, "--format", "xml", NULL), 2);
	free(out);
	/* --help: the usage on stdout, exit 0, for every verb, in one
	 * spelling. */
	static const char *const verbs[] = {
		"export", "serve", "record",  "show",	      "compare",
		"dump",	  "views", "plugins", "check-config", NULL};
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		const char *help[] = {verbs[i] ? verbs[i] : "--help",
				      verbs[i] ? "--help" : NULL, NULL};
		assert_int_equal(e2e_run(help, "help.txt", "err.txt"), 0);
		assert_int_equal(e2e_read_file("help.txt", &out, &n), 0);
		if (strncmp(out, "Usage: ctprof-core ", 19) != 0)
			fail_msg("%s --help printed:\n%s", help[0], out);
		free(out);
	}
}

/* record --textfile DIR: the textfile after each snapshot. */
static void test_record_textfile(void **state)
{
	char yaml[4 * PATH_MAX], *out;
	size_t n;
	(void)state;
	int len = snprintf(yaml, sizeof(yaml),
			   "plugin_dirs: [\"%s\"]\n"
			   "roots: {proc: \"%s/proc\", sys: \"%s/sys\"}\n"
			   "plugins:\n  procfs-stat: {}\n",
			   CTP_TEST_PLUGIN_DIR, CTP_TEST_FIXTURES,
			   CTP_TEST_FIXTURES);
	assert_true(len > 0 && (size_t)len < sizeof(yaml));
	assert_int_equal(e2e_write_file("rec.yaml", yaml, (size_t)len), 0);
	assert_int_equal(mkdir("tf2", 0700) == 0 || errno == EEXIST, 1);
	const char *args[] = {"record", "--config",   "rec.yaml", "-o",
			      "rec",	"--count",    "2",	  "--interval",
			      "100ms",	"--textfile", "tf2",	  NULL};
	assert_int_equal(e2e_run(args, NULL, "err.txt"), 0);
	assert_int_equal(e2e_read_file("tf2/ctprof.prom", &out, &n), 0);
	has_line(out, "# TYPE ctprof_procfs_utime_seconds_total counter");
	free(out);
	assert_int_equal(e2e_count_entries("tf2", &n), 0);
	assert_int_equal(n, 1);
}

/* CSV into sqlite3: a GROUP BY over the rows matches show --group-by. */
static void test_sqlite(void **state)
{
	char *out;
	(void)state;
	if (system("sqlite3 --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skip: no sqlite3\n");
		skip();
	}
	assert_int_equal(
		run_export(&out, "--format", "csv", "-o", "threads.csv", NULL),
		0);
	free(out);
	assert_int_equal(
		system("sqlite3 -csv db.sqlite '.import threads.csv threads' "
		       "'SELECT comm, SUM(\"t.cpu\") FROM threads GROUP BY "
		       "comm ORDER BY comm' > sql.txt"),
		0);
	size_t len;
	assert_int_equal(e2e_read_file("sql.txt", &out, &len), 0);
	assert_string_equal(out, "cron,1\nnginx,300\nredis,400\n");
	free(out);
	const char *show[] = {"show",	  "snap.ctprof", "--group-by",
			      "pcomm",	  "--format",	 "csv",
			      "--fields", "t.cpu",	 NULL};
	assert_int_equal(e2e_run(show, "show.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("show.txt", &out, &len), 0);
	assert_non_null(strstr(out, "nginx,"));
	assert_non_null(strstr(out, ",300"));
	assert_non_null(strstr(out, ",400"));
	free(out);
	/* NDJSON: one object a line, absent as null. */
	assert_int_equal(run_export(&out, "--format", "ndjson", "--table",
				    "processes", NULL),
			 0);
	assert_non_null(strstr(out, "\"p.rss\":1048576"));
	free(out);
}

static int setup(void **state)
{
	(void)state;
	if (e2e_tmpdir("export", tmp, sizeof(tmp)) < 0 || chdir(tmp) < 0)
		return -1;
	write_snap("snap.ctprof");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (chdir("/") < 0)
		return -1;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--write-many") == 0)
		return write_many(argv[3], strtoul(argv[2], NULL, 10));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_openmetrics_parser),
		cmocka_unit_test(test_promtool),
		cmocka_unit_test(test_textfile),
		cmocka_unit_test(test_record_textfile),
		cmocka_unit_test(test_sqlite),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_empty_name),
		cmocka_unit_test(test_many_fields),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
