/* SPDX-License-Identifier: MIT */
/*
 * compare --vs (core/analysis/vs.c) on hand-built runs written by the real
 * writer: each run two captures 10 s apart of a process "work" whose
 * thread's t.cpu (ticks, 100 a second) grew by a known amount, and whose
 * pid differs from run to run (groups join by name). The medians, the
 * ratio B/A and the mark are read from the printed table and the CSV.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "interval.h"
#include "model.h"
#include "snapbuild.h"
#include "view.h"
#include "vs.h"

static char tmp[PATH_MAX];
static int seq;

enum { F_CPU, F_START, F_RSS, NF };

#define SEC 1000000000ull

/* A capture at boot second `at` of process "work" (pid tgid) with one
 * thread of t.cpu `cpu` ticks, and p.rss `rss`. */
static struct ctp_snap *build(uint64_t at, uint32_t tgid, uint64_t cpu,
			      uint64_t rss)
{
	const struct ctp_field_desc d[NF] = {
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[F_RSS] = {"p.rss", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			   CTP_UNIT_BYTES, CTP_KIND_GAUGE, CTP_RULE_SUM},
	};
	struct ctp_capture *cap = sb_capture("t");
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap;
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t p = sb_process(cap, tgid, "work");
	sb_put_u64(cap, &cap->procs[0], p, CTP_PROCESS_IDENT, F_RSS, rss);
	uint32_t t = sb_thread(cap, tgid, "work", -1);
	sb_put_u64(cap, &cap->threads[0], t, CTP_THREAD_IDENT, F_CPU, cpu);
	/* Started a second after boot, long before any capture. */
	sb_put_u64(cap, &cap->threads[0], t, CTP_THREAD_IDENT, F_START, 100);
	cap->start_boottime_ns = at * SEC;
	cap->start_realtime_ns = 1700000000000000000ull + at * SEC;
	cap->end_realtime_ns = cap->start_realtime_ns + SEC / 10;
	assert_int_equal(E2E_PATHF(path, "%s/%d.ctprof", tmp, seq++), 0);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
	if (ctp_snap_open(path, 1u << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return snap;
}

static const char view_text[] =
	"view: vstest\n"
	"description: t.cpu as percent of one CPU, p.rss\n"
	"sort: cpu\n"
	"sections:\n"
	"  - {title: Processes, group_by: pid}\n"
	"columns:\n"
	"  - {id: pid, label: PID, ident: pid}\n"
	"  - {id: cpu, label: CPU%, field: t.cpu, show: pct_cpu}\n"
	"  - {id: rss, label: RSS, field: p.rss}\n";

#define MAXR 4

/* A side: run i grew t.cpu by cpu[i] ticks over 10 s, its process (pid
 * base_pid + i) holding rss[i] bytes at the end. */
struct side {
	struct ctp_snap *snap[MAXR][2];
	struct ctp_interval *iv[MAXR];
	struct ctp_vs_run run[MAXR];
	size_t n;
};

static void side_build(struct side *s, uint32_t base_pid, const uint64_t *cpu,
		       const uint64_t *rss, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = 1000 + 100 * (uint64_t)seq;
		uint32_t pid = base_pid + (uint32_t)i;
		s->snap[i][0] = build(at, pid, 5000, rss[i] / 2);
		s->snap[i][1] = build(at + 10, pid, 5000 + cpu[i], rss[i]);
		assert_int_equal(ctp_interval_new(s->snap[i][0], s->snap[i][1],
						  NULL, &s->iv[i]),
				 0);
		s->run[i] =
			(struct ctp_vs_run){.path = {"a", "b"}, .iv = s->iv[i]};
	}
}

static void side_free(struct side *s)
{
	for (size_t i = 0; i < s->n; i++) {
		ctp_interval_free(s->iv[i]);
		ctp_snap_free(s->snap[i][0]);
		ctp_snap_free(s->snap[i][1]);
	}
}

/* The output of A against B in fmt; the caller frees it. */
static char *vs(const struct side *a, const struct side *b,
		enum ctp_table_format fmt)
{
	struct ctp_view *v;
	char err[512], *buf = NULL;
	size_t len = 0;
	if (ctp_view_parse("vstest.yaml", view_text, strlen(view_text), &v, err,
			   sizeof(err)) < 0)
		fail_msg("%s", err);
	struct ctp_vs_opts o = {.v = v, .fmt = fmt};
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	int r = ctp_vs_print(m, a->run, a->n, b->run, b->n, &o, err,
			     sizeof(err));
	assert_int_equal(fclose(m), 0);
	if (r < 0)
		fail_msg("ctp_vs_print: %d %s", r, err);
	ctp_view_free(v);
	return buf;
}

/* The CSV line of column col: its fields after "Processes,work,col,". */
static void csv_line(const char *csv, const char *col, char *out, size_t n)
{
	char want[64];
	snprintf(want, sizeof(want), "Processes,work,%s,", col);
	const char *p = strstr(csv, want);
	if (!p)
		fail_msg("no %s line in:\n%s", col, csv);
	p += strlen(want);
	size_t l = strcspn(p, "\n");
	snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), p);
}

/* One run a side: 100 ticks in 10 s (10% of a CPU) against 300 (30%). */
static void test_one_run(void **state)
{
	(void)state;
	struct side a, b;
	const uint64_t ca[] = {100}, cb[] = {300};
	const uint64_t ra[] = {1u << 20}, rb[] = {2u << 20};
	side_build(&a, 100, ca, ra, 1);
	side_build(&b, 900, cb, rb, 1);
	char *t = vs(&a, &b, CTP_TABLE_TEXT), line[256];
	if (!strstr(t, "n=1+1 runs: no test of significance") ||
	    !strstr(t, "Processes by pcomm, 1 of 1 by the change of CPU%") ||
	    !strstr(t, "work  CPU%    10.0  30.0 3.00 +200.0%\n") ||
	    !strstr(t, "      RSS    1.00M 2.00M 2.00 +100.0%\n") ||
	    strstr(t, "(p="))
		fail_msg("%s", t);
	free(t);
	t = vs(&a, &b, CTP_TABLE_CSV);
	/* show,unit,a_median,a_spread,a_n,b_median,b_spread,b_n,ratio,
	 * delta_pct,u,p,significant: no spread, no test with one run. */
	csv_line(t, "CPU%", line, sizeof(line));
	assert_string_equal(line, "pct_cpu,ticks,10,,1,30,,1,3,200,,,");
	csv_line(t, "RSS", line, sizeof(line));
	assert_string_equal(line, "value,bytes,1048576,,1,2097152,,1,2,100,,,");
	free(t);
	side_free(&a);
	side_free(&b);
}

/* Four runs a side, B three times A's CPU: every B above every A, p =
 * 2 / C(8, 4) = 0.029 < 0.05, marked as a difference. */
static void test_four_runs(void **state)
{
	(void)state;
	struct side a, b;
	const uint64_t ca[] = {100, 110, 90, 105}, cb[] = {300, 310, 290, 305};
	const uint64_t r[] = {1u << 20, 1u << 20, 1u << 20, 1u << 20};
	side_build(&a, 100, ca, r, 4);
	side_build(&b, 900, cb, r, 4);
	char *t = vs(&a, &b, CTP_TABLE_TEXT), line[256];
	/* Medians 10.25 and 30.25; A's farthest run 9 (12%), B's 29 (4%). */
	if (!strstr(t, "n=4+4 runs: ~ marks a difference inside the noise") ||
	    !strstr(t, "CPU%    10.2 \xc2\xb1"
		       "12%  30.2 \xc2\xb1"
		       "4% 2.95 "
		       "+195.1% 0.029\n"))
		fail_msg("%s", t);
	free(t);
	t = vs(&a, &b, CTP_TABLE_CSV);
	csv_line(t, "CPU%", line, sizeof(line));
	assert_string_equal(line, "pct_cpu,ticks,10.25,12.195122,4,30.25,"
				  "4.1322314,4,2.95121951,195.121951,0,"
				  "0.0285714286,true");
	free(t);
	side_free(&a);
	side_free(&b);
}

/* A side against itself: ratio 1, no difference (p 1, ~). */
static void test_itself(void **state)
{
	(void)state;
	struct side a;
	const uint64_t ca[] = {100, 110, 90, 105};
	const uint64_t r[] = {1u << 20, 2u << 20, 1u << 20, 1u << 20};
	side_build(&a, 100, ca, r, 4);
	char *t = vs(&a, &a, CTP_TABLE_TEXT), line[256];
	if (!strstr(t, "CPU%    10.2 \xc2\xb1"
		       "12%   10.2 \xc2\xb1"
		       "12%  1.00      "
		       "~ 1.000\n"))
		fail_msg("%s", t);
	free(t);
	t = vs(&a, &a, CTP_TABLE_CSV);
	csv_line(t, "CPU%", line, sizeof(line));
	assert_string_equal(line, "pct_cpu,ticks,10.25,12.195122,4,10.25,"
				  "12.195122,4,1,0,8,1,false");
	free(t);
	side_free(&a);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("vs", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_run),
		cmocka_unit_test(test_four_runs),
		cmocka_unit_test(test_itself),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
