/* SPDX-License-Identifier: MIT */
/*
 * compare's coverage line (core/analysis/coverage.c, docs/COMPARE.md): on a
 * hand-built pair, BASE at boot 1000 s and CAND 10 s later,
 *   cgroup /    usage 1.0 s -> 6.0 s (+5 s: everything the host ran)
 *   cgroup /a   usage 0.5 s -> 3.5 s (+3 s)
 *   thread 10 in /a: 100 -> 200 ticks (+1 s, the same thread)
 *   thread 11 in /:  50 ticks, gone in CAND (counts nothing)
 *   thread 12 in /a: new, 100 ticks (+1 s, from zero)
 * so the threads explain 2 s of 5 (40%), and of /a's 3 s, 2 (67%).
 * CAND's exited table then says where the rest went: thread 11 exited
 * with 1.5 s (+1 s over BASE's 0.5 s, in BASE's cgroup /), and thread 13
 * of process 10, which no snapshot saw, with 0.5 s (its process's live
 * thread is in /a); 1.5 s of 3 unexplained, /a's 0.5 s of 1.
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
#include <unistd.h>

#include <cmocka.h>

#include "coverage.h"
#include "exitsum.h"
#include "e2e_util.h"
#include "interval.h"
#include "model.h"
#include "snapbuild.h"

static char tmp[PATH_MAX];

enum { F_CPU, F_START, F_USAGE, F_XCPU, NF };

/* When each side read process 10 and the cgroups, ns since boot; 0: not
 * recorded (test_read_times sets them). */
static uint64_t read_p10[2], read_cg[2];

static void write_side(int k, const char *path)
{
	const struct ctp_field_desc d[NF] = {
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[F_USAGE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
			     CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_XCPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
	};
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t root = sb_cgroup(cap, "/"), a = sb_cgroup(cap, "/a");
	sb_put_u64(cap, &cap->cgroups, root, CTP_CGROUP_IDENT, F_USAGE,
		   k ? 6000000 : 1000000);
	sb_put_u64(cap, &cap->cgroups, a, CTP_CGROUP_IDENT, F_USAGE,
		   k ? 3500000 : 500000);
	uint32_t p10 = sb_process(cap, 10, "p");
	if (read_p10[k])
		ctp_table_set(&cap->procs[0], p10, CTP_PCOL_READ_NS,
			      read_p10[k]);
	cap->cgroups_boottime_ns = read_cg[k];
	struct {
		uint32_t tid, cg;
		uint64_t cpu, start;
	} base[] = {{10, a, 100, 100}, {11, root, 50, 100}},
	  cand[] = {{10, a, 200, 100}, {12, a, 100, 100500}};
	for (int i = 0; i < 2; i++) {
		uint32_t tid = k ? cand[i].tid : base[i].tid;
		uint32_t r = sb_thread(cap, tid, "p",
				       (int)(k ? cand[i].cg : base[i].cg));
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, F_CPU,
			   k ? cand[i].cpu : base[i].cpu);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, F_START,
			   k ? cand[i].start : base[i].start);
	}
	if (k) {
		uint32_t x = sb_exited(cap, 11, 10, "p", 1005000000000ull);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, F_XCPU,
			   1500000);
		x = sb_exited(cap, 13, 10, "q", 1006000000000ull);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, F_XCPU,
			   500000);
		cap->plugins[0].exited = true;
	}
	cap->start_boottime_ns =
		(1000ull + 10ull * (uint64_t)k) * 1000000000ull;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static void open_pair(struct ctp_snap *snap[2])
{
	char p[2][PATH_MAX], err[512];
	for (int k = 0; k < 2; k++) {
		assert_int_equal(E2E_PATHF(p[k], "%s/%d.ctprof", tmp, k), 0);
		write_side(k, p[k]);
		if (ctp_snap_open(p[k], 1u << 30, &snap[k], err, sizeof(err)) <
		    0)
			fail_msg("%s", err);
	}
}

/* ctp_coverage_compute over the pair's interval, with the exit sum ex
 * (NULL: none). */
static int coverage(struct ctp_snap *const snap[2], const struct ctp_view *v,
		    const struct ctp_exit_sum *ex, struct ctp_coverage *c)
{
	struct ctp_interval *iv;
	assert_int_equal(ctp_interval_new(snap[0], snap[1], ex, &iv), 0);
	int r = ctp_coverage_compute(iv, v, c);
	ctp_interval_free(iv);
	return r;
}

/* A view of thread CPU t.cpu with coverage lists `cover` (YAML). */
static struct ctp_view *cover_view(const char *cover)
{
	char yaml[512], err[512];
	struct ctp_view *v;
	int n = snprintf(yaml, sizeof(yaml),
			 "view: c\ndescription: d\nsort: a\n"
			 "sections: [{title: T, group_by: tid}]\n"
			 "columns: [{id: a, label: A, field: t.cpu}]\n%s",
			 cover);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	if (ctp_view_parse("c.yaml", yaml, (size_t)n, &v, err, sizeof(err)))
		fail_msg("%s", err);
	return v;
}

static void test_coverage(void **state)
{
	(void)state;
	struct ctp_snap *snap[2];
	open_pair(snap);
	struct ctp_view *v =
		cover_view("coverage: {threads: [t.cpu], cgroup: [c.usage]}\n");
	struct ctp_coverage c;
	assert_int_equal(coverage(snap, v, NULL, &c), 0);
	assert_true(c.ok);
	assert_true(c.threads > 1.999 && c.threads < 2.001);
	assert_true(c.host > 4.999 && c.host < 5.001);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ctp_coverage_print(f, &c, 80);
	fclose(f);
	assert_string_equal(buf, "CPU 5.0 s: threads 2.0 s (40%), the rest "
				 "3.0 s (60%) in tasks that exited\n"
				 "  /a 3.0 s: threads 2.0 s (67%)\n");
	free(buf);
	ctp_coverage_free(&c);
	/* With the exited tasks: each one's CPU in its cgroup too. */
	ctp_view_free(v);
	v = cover_view("coverage: {threads: [t.cpu], cgroup: [c.usage], "
		       "exited: [x.cpu]}\n");
	struct ctp_exit_sum ex;
	assert_int_equal(ctp_exit_sum_paths(snap[0], snap[1], NULL, 0, 1u << 30,
					    v, stderr, "test", &ex),
			 0);
	assert_true(ex.present);
	assert_int_equal(ex.tasks, 2);
	assert_int_equal(coverage(snap, v, &ex, &c), 0);
	assert_true(c.exited > 1.499 && c.exited < 1.501);
	f = open_memstream(&buf, &len);
	ctp_coverage_print(f, &c, 0);
	fclose(f);
	assert_string_equal(buf,
			    "CPU 5.0 s: threads 2.0 s (40%), 2 exited "
			    "tasks 1.5 s (30%), rest 1.5 s\n"
			    "  /a 3.0 s: threads 2.0 s (67%), exited 0.5 s "
			    "(17%)\n");
	free(buf);
	ctp_coverage_free(&c);
	ctp_exit_sum_free(&ex);
	/* A memory budget that holds one of the two: the other is counted,
	 * not kept. */
	assert_int_equal(ctp_exit_sum_paths(snap[0], snap[1], NULL, 0, 300, v,
					    stderr, "test", &ex),
			 0);
	assert_int_equal(ex.tasks, 1);
	assert_int_equal(ex.over, 1);
	f = open_memstream(&buf, &len);
	ctp_exit_sum_print(f, &ex, 10, 0, 0);
	fclose(f);
	assert_non_null(strstr(buf, "1 tasks, 1.0 s of CPU, 1 more left out "
				    "past the memory budget"));
	free(buf);
	ctp_exit_sum_free(&ex);
	/* A view without coverage: lists: nothing to say. */
	ctp_view_free(v);
	v = cover_view("");
	assert_int_equal(coverage(snap, v, NULL, &c), 0);
	assert_false(c.ok);
	ctp_coverage_free(&c);
	ctp_view_free(v);
	ctp_snap_free(snap[0]);
	ctp_snap_free(snap[1]);
}

/*
 * The same pair read as a busy host reads it (issue 28): BASE reads
 * process 10 at 1001 s and the cgroups at 1002 s; CAND, a slower capture,
 * reads process 10 at 1010 s and the cgroups at 1014 s. The cgroups'
 * usage is over 12 s; threads 10 and 12 (new, of the same process) each
 * changed +1 s over their process's 9 s between the reads, at their
 * rates 1.33 s of those 12 s: 2.67 s explained, not 2.0 s. The snapshots carry
 * the times (capture.cgroups_read_boottime_ns), and the cgroups' interval
 * is theirs.
 */
static void test_read_times(void **state)
{
	(void)state;
	const uint64_t sec = 1000000000ull;
	struct ctp_snap *snap[2];
	read_p10[0] = 1001 * sec, read_p10[1] = 1010 * sec;
	read_cg[0] = 1002 * sec, read_cg[1] = 1014 * sec;
	open_pair(snap);
	read_p10[0] = read_p10[1] = read_cg[0] = read_cg[1] = 0;
	assert_int_equal(ctp_snap_header(snap[1])->cgroups_read_boottime_ns,
			 1014 * sec);
	struct ctp_view *v =
		cover_view("coverage: {threads: [t.cpu], cgroup: [c.usage]}\n");
	struct ctp_ident *id;
	assert_int_equal(
		ctp_ident_new((const struct ctp_snap *const *)snap, &id), 0);
	double cgiv = ctp_ident_task_interval(id, CTP_SCOPE_CGROUP, 0);
	assert_true(cgiv > 11.999 && cgiv < 12.001);
	struct ctp_coverage c;
	assert_int_equal(coverage(snap, v, NULL, &c), 0);
	assert_true(c.ok);
	print_message("threads explain %.3f s of %.3f s\n", c.threads, c.host);
	assert_true(c.host > 4.999 && c.host < 5.001);
	assert_true(c.threads > 24.0 / 9 - 0.001 &&
		    c.threads < 24.0 / 9 + 0.001);
	ctp_coverage_free(&c);
	ctp_view_free(v);
	ctp_ident_free(id);
	ctp_snap_free(snap[0]);
	ctp_snap_free(snap[1]);
}

/*
 * A reused pid (issue 28): process 70 "rs", started at boot 900 s, has
 * 1 s of CPU when BASE (boot 1000 s) reads it at 1000.5 s; it exits at
 * 1002 s with 1.5 s, after 102 s. Another process 70 "rs" starts at
 * 1003 s and exits at 1004 s with 0.11 s, after 1 s. Both exits are in
 * CAND's table (boot 1010 s). The first used 0.5 s in the interval (1.5 s
 * less BASE's 1 s); the second is another task of the same ids (it
 * started after BASE read 70), so its 0.11 s counts whole: 0.61 s, never
 * 0.5 s (0.11 - 1 counted as nothing). And process 71 "rt", which
 * exits at 1000.1 s with 0.3 s after 50 s, while BASE is being taken (in
 * BASE's own table), before BASE reads another 71 that started at
 * 1000.2 s with 0.05 s: not that one either, so BASE did not read it live
 * and its exit is the interval before BASE's (each exit counts in one
 * interval). Without the elapsed time (older files) the ids alone match,
 * as before: BASE's 71 is taken for it, which counts less its 0.05 s.
 */
static void write_reuse(int k, const char *path, bool elapsed)
{
	enum { R_CPU, R_START, R_XCPU, R_XAGE, N_R };
	const struct ctp_field_desc d[N_R] = {
		[R_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[R_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[R_XCPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[R_XAGE] = {"x.elapsed", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_US, CTP_KIND_PEAK, CTP_RULE_MAX,
			    elapsed ? CTP_FIELD_ELAPSED : 0},
	};
	const uint64_t sec = 1000000000ull;
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < N_R; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	if (k == 0) {
		uint32_t p = sb_process(cap, 70, "rs");
		ctp_table_set(&cap->procs[0], p, CTP_PCOL_READ_NS,
			      1000 * sec + sec / 2);
		uint32_t r = sb_thread(cap, 70, "rs", -1);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, R_CPU,
			   100);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, R_START,
			   90000);
		p = sb_process(cap, 71, "rt");
		ctp_table_set(&cap->procs[0], p, CTP_PCOL_READ_NS,
			      1000 * sec + sec / 2);
		r = sb_thread(cap, 71, "rt", -1);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, R_CPU,
			   5);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, R_START,
			   100020);
		uint32_t x =
			sb_exited(cap, 71, 71, "rt", 1000 * sec + sec / 10);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, R_XCPU,
			   300000);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, R_XAGE,
			   50000000);
		cap->plugins[0].exited = true;
	} else {
		uint32_t x = sb_exited(cap, 70, 70, "rs", 1002 * sec);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, R_XCPU,
			   1500000);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, R_XAGE,
			   102000000);
		x = sb_exited(cap, 70, 70, "rs", 1004 * sec);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, R_XCPU,
			   110000);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, R_XAGE,
			   1000000);
		cap->plugins[0].exited = true;
	}
	cap->start_boottime_ns = (1000ull + 10ull * (uint64_t)k) * sec;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/* The exited tasks of the pair write_reuse makes. */
static void reuse_sum(bool elapsed, struct ctp_exit_sum *ex)
{
	char p[2][PATH_MAX], err[512];
	struct ctp_snap *snap[2];
	struct ctp_view *v;
	static const char yaml[] =
		"view: c\ndescription: d\nsort: a\n"
		"sections: [{title: T, group_by: tid}]\n"
		"columns: [{id: a, label: A, field: t.cpu, exited: [x.cpu]}]\n"
		"coverage: {threads: [t.cpu], exited: [x.cpu]}\n";
	for (int k = 0; k < 2; k++) {
		assert_int_equal(E2E_PATHF(p[k], "%s/r%d.ctprof", tmp, k), 0);
		write_reuse(k, p[k], elapsed);
		if (ctp_snap_open(p[k], 1u << 30, &snap[k], err, sizeof(err)) <
		    0)
			fail_msg("%s", err);
	}
	assert_int_equal(ctp_view_parse("c.yaml", yaml, strlen(yaml), &v, err,
					sizeof(err)),
			 0);
	assert_int_equal(ctp_exit_sum_paths(snap[0], snap[1], NULL, 0, 1u << 30,
					    v, stderr, "test", ex),
			 0);
	ctp_view_free(v);
	ctp_snap_free(snap[0]);
	ctp_snap_free(snap[1]);
}

static void test_reused_pid(void **state)
{
	(void)state;
	struct ctp_exit_sum ex;
	reuse_sum(true, &ex);
	/* CAND's two 70s; BASE's 71 is not the 71 that exited, so that
	 * exit is not BASE's live thread's and not in this interval. */
	assert_int_equal(ex.tasks, 2);
	assert_int_equal(ex.id[0].tid, 70);
	assert_int_equal(ex.id[1].tid, 70);
	/* The first 70 is BASE's thread, the other is not. */
	assert_int_equal(ex.base_row[0], 0);
	assert_int_equal(ex.base_row[1], -1);
	assert_true(ex.cpu_of[0] > 0.499 && ex.cpu_of[0] < 0.501);
	assert_true(ex.cpu_of[1] > 0.109 && ex.cpu_of[1] < 0.111);
	assert_int_equal(ex.n_g, 1);
	assert_string_equal(ex.g[0].name, "rs");
	assert_int_equal(ex.g[0].tasks, 2);
	assert_true(ex.g[0].cpu > 0.609 && ex.g[0].cpu < 0.611);
	ctp_exit_sum_free(&ex);
	/* Files without the elapsed role: by ids, the second 70 loses
	 * BASE's 1 s and 71 BASE's 0.05 s, as before. */
	reuse_sum(false, &ex);
	assert_int_equal(ex.base_row[0], 1);
	assert_int_equal(ex.base_row[2], 0);
	assert_true(ex.cpu_of[0] > 0.249 && ex.cpu_of[0] < 0.251);
	assert_true(ex.g[0].cpu > 0.499 && ex.g[0].cpu < 0.501);
	ctp_exit_sum_free(&ex);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("coverage", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_coverage),
					   cmocka_unit_test(test_read_times),
					   cmocka_unit_test(test_reused_pid)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
