/* SPDX-License-Identifier: MIT */
/*
 * The interval model (core/analysis/interval.c) on hand-built snapshots
 * written by the real writer. BASE at boot 1000 s, CAND 10 s later, a
 * third capture 10 s after CAND; t.cpu in ticks, t.begin the start time:
 *
 *   process 10 "app" (cgroup /a), read 12 s apart (its own interval):
 *     thread 10   100 -> 300     +200
 *     thread 11   500 -> 20      a reset: counts 20, flagged
 *     thread 12   30, gone       exits at 1005 s with 0.6 s (x.cpu, us)
 *     thread 13   new, 50        +50 from zero
 *   process 20 "db": thread 20 40 -> 140 (+100), its cgroup /old in BASE
 *     and /new in CAND (renamed: /new's usage counts from zero)
 *   process 30 "svc": thread 30 without t.cpu in BASE, 70 in CAND
 *   thread 14 of process 40, which no snapshot saw, exits with 0.2 s
 *   cgroups: /a 1000 -> 4000 us, /old 5000 us gone, /new 300 us new
 *
 * so "app" changed by 270 ticks (never 250: a reset dropped; never
 * 20 - 500 or 520: double-counted), at 270 / 12 s; "db" by 100 over its
 * 10 s. Without start times (no identity) nothing matches by member.
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
#include "exitsum.h"
#include "group.h"
#include "interval.h"
#include "model.h"
#include "snapbuild.h"
#include "view.h"

static char tmp[PATH_MAX];

enum { F_CPU, F_START, F_IO, F_USAGE, F_XCPU, NF };

#define SEC 1000000000ull
#define A   UINT64_MAX /* absent */

struct th {
	uint32_t tgid, tid;
	uint64_t cpu, start;
	int cg;
};

/* Side k (0 BASE, 1 CAND, 2 the capture after CAND); `start`: with
 * the start-time field (task identity). */
static struct ctp_snap *side(int k, bool start)
{
	const struct ctp_field_desc d[NF] = {
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     start ? CTP_FIELD_START_TIME : 0},
		[F_IO] = {"p.io", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			  CTP_UNIT_BYTES, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_USAGE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
			     CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_XCPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
	};
	static const char *const cgs[3][2] = {
		{"/a", "/old"}, {"/a", "/new"}, {"/a", "/new"}};
	static const uint64_t usage[3][2] = {
		{1000, 5000}, {4000, 300}, {4500, 400}};
	static const struct th ths[3][5] = {
		{{10, 10, 100, 50, 0},
		 {10, 11, 500, 60, 0},
		 {10, 12, 30, 70, 0},
		 {20, 20, 40, 80, 1},
		 {30, 30, A, 90, 0}},
		{{10, 10, 300, 50, 0},
		 {10, 11, 20, 60, 0},
		 {10, 13, 50, 100500, 0},
		 {20, 20, 140, 80, 1},
		 {30, 30, 70, 90, 0}},
		{{10, 10, 350, 50, 0},
		 {10, 11, 25, 60, 0},
		 {10, 13, 60, 100500, 0},
		 {20, 20, 150, 80, 1},
		 {30, 30, 80, 90, 0}},
	};
	static const uint64_t io[3] = {1000, 3000, 3500};
	struct ctp_capture *cap = sb_capture("t");
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap;
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	for (int i = 0; i < 2; i++) {
		uint32_t r = sb_cgroup(cap, cgs[k][i]);
		sb_put_u64(cap, &cap->cgroups, r, CTP_CGROUP_IDENT, F_USAGE,
			   usage[k][i]);
	}
	uint32_t last = 0;
	for (int i = 0; i < 5; i++) {
		const struct th *t = &ths[k][i];
		if (t->tgid != last) {
			uint32_t p = sb_process(cap, t->tgid,
						t->tgid == 10	? "app"
						: t->tgid == 20 ? "db"
								: "svc");
			if (t->tgid == 10) {
				/* Read half a second into BASE, 2.5 s into
				 * CAND: 12 s apart. */
				ctp_table_set(
					&cap->procs[0], p, CTP_PCOL_READ_NS,
					(1000 + 10 * (uint64_t)k) * SEC +
						(k ? 5 * SEC / 2 : SEC / 2));
				sb_put_u64(cap, &cap->procs[0], p,
					   CTP_PROCESS_IDENT, F_IO, io[k]);
			}
			last = t->tgid;
		}
		uint32_t r = sb_thread(cap, t->tid, t->tgid == 10 ? "app" : "x",
				       t->cg);
		if (t->cpu != A)
			sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT,
				   F_CPU, t->cpu);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, F_START,
			   t->start);
	}
	if (k == 1) {
		uint32_t x = sb_exited(cap, 12, 10, "app", 1005 * SEC);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, F_XCPU,
			   600000);
		x = sb_exited(cap, 14, 40, "q", 1006 * SEC);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, F_XCPU,
			   200000);
		cap->plugins[0].exited = true;
	}
	cap->start_boottime_ns = (1000 + 10 * (uint64_t)k) * SEC;
	assert_int_equal(E2E_PATHF(path, "%s/%d%d.ctprof", tmp, k, start), 0);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
	if (ctp_snap_open(path, 1u << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return snap;
}

struct fixture {
	struct ctp_snap *snap[3];
	struct ctp_interval *iv;
};

static struct fixture open_all(bool start)
{
	struct fixture x;
	for (int k = 0; k < 3; k++)
		x.snap[k] = side(k, start);
	assert_int_equal(ctp_interval_new(x.snap[0], x.snap[1], NULL, &x.iv),
			 0);
	return x;
}

static void close_all(struct fixture *x)
{
	ctp_interval_free(x->iv);
	for (int k = 0; k < 3; k++)
		ctp_snap_free(x->snap[k]);
}

/* Group `name` of CAND grouped by axes; *g the table (free it). */
static const struct ctp_group *group(const struct ctp_snap *snap,
				     const char *axes, const char *name,
				     struct ctp_groups **g)
{
	struct ctp_group_spec spec = {.no_normalize = true};
	char text[64], err[256];
	snprintf(text, sizeof(text), "%s", axes);
	assert_int_equal(ctp_group_spec_parse(text, &spec, err, sizeof(err)),
			 0);
	assert_int_equal(ctp_groups_new(snap, &spec, g, err, sizeof(err)), 0);
	const char *key[1] = {name};
	const struct ctp_group *gr = ctp_groups_find(*g, key);
	assert_non_null(gr);
	return gr;
}

static const struct ctp_snap_field *field(const struct ctp_snap *s,
					  const char *name)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	assert_non_null(f);
	return f;
}

static bool near(long double a, long double b)
{
	return fabsl(a - b) < 1e-9L;
}

/* Per task: a matched one's difference, a new one whole, a reset one its
 * CAND value, one whose BASE value is unknown no change. */
static void test_members(void **state)
{
	(void)state;
	struct fixture x = open_all(true);
	const struct ctp_snap *c = x.snap[1];
	const struct ctp_interval_col *col;
	assert_true(ctp_interval_ident(x.iv)->ok);
	assert_int_equal(ctp_interval_col(x.iv, field(c, "t.cpu"), &col), 0);
	assert_ptr_equal(col->f[0], field(x.snap[0], "t.cpu"));
	assert_int_equal(col->rows, 5);
	static const struct {
		uint8_t how;
		long double d;
	} want[5] = {{CTP_IV_SAME, 200},
		     {CTP_IV_RESET, 20},
		     {CTP_IV_NEW, 50},
		     {CTP_IV_SAME, 100},
		     {CTP_IV_UNKNOWN, 0}};
	for (size_t r = 0; r < 5; r++) {
		assert_int_equal(col->how[r], want[r].how);
		assert_true(near(col->d[r], want[r].d));
	}
	/* Computed once: the same column again. */
	const struct ctp_interval_col *again;
	assert_int_equal(ctp_interval_col(x.iv, field(c, "t.cpu"), &again), 0);
	assert_ptr_equal(again, col);
	/* Host fields and fields of another snapshot have no members. */
	assert_int_equal(
		ctp_interval_col(x.iv, field(x.snap[0], "t.cpu"), &again),
		-EINVAL);
	close_all(&x);
}

/* A group: 200 + 20 (reset) + 50 (new); thread 12, gone, adds nothing.
 * Its rate is over process 10's own 12 s, not the captures' 10 s. */
static void test_group_reset(void **state)
{
	(void)state;
	struct fixture x = open_all(true);
	struct ctp_groups *g;
	const struct ctp_group *app = group(x.snap[1], "pcomm", "app", &g);
	struct ctp_interval_sum s;
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "t.cpu"), app, &s),
		0);
	assert_int_equal(s.n, 3);
	assert_true(s.reset);
	assert_true(near(s.delta, 270)); /* 250: the reset dropped */
	assert_true(s.per_s_ok);
	assert_true(near(s.per_s, 270.0L / 12));
	assert_true(ctp_interval_seconds(x.iv) == 10);
	assert_true(near(ctp_interval_rate(x.iv, &s), 22.5L));
	/* Ticks per second as percent of one CPU: 22.5 ticks/s = 0.225 s/s. */
	assert_true(near(ctp_interval_cpu_pct(22.5L, CTP_UNIT_TICKS), 22.5L));
	assert_true(isnan(ctp_interval_cpu_pct(22.5L, CTP_UNIT_BYTES)));
	/* A process counter over the group's process. */
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "p.io"), app, &s), 0);
	assert_true(s.n == 1 && near(s.delta, 2000));
	ctp_groups_free(g);
	/* The member whose BASE value is unknown: nothing. */
	const struct ctp_group *svc = group(x.snap[1], "pcomm", "svc", &g);
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "t.cpu"), svc, &s),
		0);
	assert_int_equal(s.n, 0); /* never its whole 70 */
	ctp_groups_free(g);
	close_all(&x);
}

/* A renamed cgroup: its threads by identity (+100 of 140), its own
 * counter from zero (a cgroup is the same only by its path); a kept
 * cgroup's counter changes by the difference. */
static void test_renamed(void **state)
{
	(void)state;
	struct fixture x = open_all(true);
	struct ctp_groups *g;
	struct ctp_interval_sum s;
	const struct ctp_group *gr = group(x.snap[1], "cgroup", "/new", &g);
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "t.cpu"), gr, &s), 0);
	assert_true(s.n == 1 && near(s.delta, 100) && !s.reset);
	assert_true(near(ctp_interval_rate(x.iv, &s), 10));
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "c.usage"), gr, &s),
		0);
	assert_true(s.n == 1 && near(s.delta, 300));
	ctp_groups_free(g);
	gr = group(x.snap[1], "cgroup", "/a", &g);
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "c.usage"), gr, &s),
		0);
	assert_true(s.n == 1 && near(s.delta, 3000));
	ctp_groups_free(g);
	close_all(&x);
}

/* The exited tasks: thread 12 at exit (60 ticks) less BASE's 30; thread
 * 14, which BASE never had, whole; a process measure takes none of a
 * live process's. */
static void test_exited(void **state)
{
	(void)state;
	static const char yaml[] =
		"view: c\ndescription: d\nsort: a\n"
		"sections: [{title: T, group_by: pcomm}]\n"
		"columns: [{id: a, label: A, field: t.cpu, exited: [x.cpu]}]\n"
		"coverage: {threads: [t.cpu], exited: [x.cpu]}\n";
	struct fixture x = open_all(true);
	struct ctp_view *v;
	struct ctp_exit_sum ex;
	char err[256];
	assert_int_equal(ctp_view_parse("c.yaml", yaml, strlen(yaml), &v, err,
					sizeof(err)),
			 0);
	assert_int_equal(ctp_exit_sum_paths(x.snap[0], x.snap[1], NULL, 0,
					    1u << 30, v, stderr, "test", &ex),
			 0);
	assert_int_equal(ex.tasks, 2);
	/* exitsum's CPU per task: 0.6 s - 0.3 s, and 0.2 s. */
	assert_true(fabs(ex.cpu_of[0] - 0.3) < 1e-9);
	assert_true(fabs(ex.cpu_of[1] - 0.2) < 1e-9);
	ctp_interval_free(x.iv);
	assert_int_equal(ctp_interval_new(x.snap[0], x.snap[1], &ex, &x.iv), 0);
	assert_ptr_equal(ctp_interval_exited(x.iv), &ex);
	long j = ctp_exit_sum_field(&ex, "x.cpu");
	assert_true(j >= 0);
	size_t xf[1] = {(size_t)j};
	long double xk[1] = {
		ctp_exit_sum_scale(&ex, (size_t)j, CTP_UNIT_TICKS)};
	const struct ctp_snap_field *bf[1] = {field(x.snap[0], "t.cpu")};
	struct ctp_interval_exit_measure m = {.xf = xf,
					      .xk = xk,
					      .nxf = 1,
					      .bf = bf,
					      .nbf = 1,
					      .scope = CTP_SCOPE_THREAD};
	long double d;
	assert_true(ctp_interval_exit_change(x.snap[0], &ex, 0, &m, &d));
	assert_true(near(d, 30));
	assert_true(ctp_interval_exit_change(x.snap[0], &ex, 1, &m, &d));
	assert_true(near(d, 20));
	/* At exit less than BASE had (another source's rounding): no
	 * change, never its whole value at exit. */
	long double small[1] = {xk[0] / 10};
	m.xk = small;
	assert_true(ctp_interval_exit_change(x.snap[0], &ex, 0, &m, &d));
	assert_true(near(d, 0));
	m.xk = xk;
	/* In the groups: thread 12 joins "app" (its live process). */
	struct ctp_group_spec spec = {.no_normalize = true};
	char text[] = "pcomm";
	struct ctp_groups *g;
	assert_int_equal(ctp_group_spec_parse(text, &spec, err, sizeof(err)),
			 0);
	assert_int_equal(ctp_groups_new_extra(x.snap[1], &spec, ex.id, ex.tasks,
					      &g, err, sizeof(err)),
			 0);
	const char *key[1] = {"app"};
	const struct ctp_group *app = ctp_groups_find(g, key);
	assert_non_null(app);
	assert_int_equal(app->n_extras, 1);
	struct ctp_interval_sum s, live;
	ctp_interval_exit_group(x.iv, app, &m, &s);
	assert_true(s.n == 1 && near(s.delta, 30));
	assert_true(s.per_s_ok && near(s.per_s, 3)); /* over the 10 s */
	/* Live and exited add up: 270 + 30. */
	assert_int_equal(
		ctp_interval_group(x.iv, field(x.snap[1], "t.cpu"), app, &live),
		0);
	ctp_interval_sum_add(&live, &s);
	assert_true(live.n == 4 && live.reset && near(live.delta, 300));
	assert_true(near(ctp_interval_rate(x.iv, &live), 270.0L / 12 + 3));
	m.scope = CTP_SCOPE_PROCESS;
	ctp_interval_exit_group(x.iv, app, &m, &s);
	assert_int_equal(s.n, 0);
	ctp_groups_free(g);
	ctp_view_free(v);
	close_all(&x);
	ctp_exit_sum_free(&ex);
}

/* Along a recording: the next pair's model, CAND become BASE; a task's
 * results are found by its identity. */
static void test_step(void **state)
{
	(void)state;
	struct fixture x = open_all(true);
	const struct ctp_interval_col *col;
	const uint64_t start10 = 50 * (SEC / 100);
	assert_int_equal(
		ctp_interval_col(x.iv, field(x.snap[1], "t.cpu"), &col), 0);
	ctp_interval_free(x.iv);
	assert_int_equal(ctp_interval_new(x.snap[1], x.snap[2], NULL, &x.iv),
			 0);
	assert_ptr_equal(ctp_interval_snap(x.iv, 0), x.snap[1]);
	assert_ptr_equal(ctp_interval_snap(x.iv, 1), x.snap[2]);
	long r = ctp_interval_find(x.iv, CTP_SCOPE_THREAD, 10, 10, start10);
	assert_int_equal(r, 0);
	assert_int_equal(
		ctp_interval_find(x.iv, CTP_SCOPE_THREAD, 10, 10, start10 + 1),
		-1); /* another task of the same ids */
	assert_int_equal(ctp_interval_find(x.iv, CTP_SCOPE_THREAD, 10, 12,
					   CTP_IDENT_UNKNOWN),
			 -1);
	assert_int_equal(
		ctp_interval_find(x.iv, CTP_SCOPE_PROCESS, 10, 0, start10), 0);
	assert_int_equal(
		ctp_interval_col(x.iv, field(x.snap[2], "t.cpu"), &col), 0);
	assert_ptr_equal(col->f[0], field(x.snap[1], "t.cpu"));
	assert_int_equal(col->how[r], CTP_IV_SAME);
	assert_true(near(col->d[r], 50));
	/* Thread 30 has a BASE value now. */
	assert_int_equal(col->how[4], CTP_IV_SAME);
	assert_true(near(col->d[4], 10));
	close_all(&x);
}

/* Without start times: no member matches; a group's change is its
 * aggregate's. */
static void test_no_identity(void **state)
{
	(void)state;
	struct fixture x = open_all(false);
	const struct ctp_interval_col *col;
	assert_false(ctp_interval_ident(x.iv)->ok);
	assert_int_equal(
		ctp_interval_col(x.iv, field(x.snap[1], "t.cpu"), &col), 0);
	for (size_t r = 0; r < col->rows; r++)
		assert_int_equal(col->how[r], CTP_IV_UNKNOWN);
	struct ctp_groups *g[2];
	const struct ctp_group *c = group(x.snap[1], "pcomm", "app", &g[1]),
			       *b = group(x.snap[0], "pcomm", "app", &g[0]);
	const struct ctp_agg *ca, *ba;
	assert_int_equal(
		ctp_groups_aggregate(g[1], field(x.snap[1], "t.cpu"), &ca), 0);
	assert_int_equal(
		ctp_groups_aggregate(g[0], field(x.snap[0], "t.cpu"), &ba), 0);
	struct ctp_interval_sum s;
	size_t ci = (size_t)(c - ctp_groups_at(g[1], 0)),
	       bi = (size_t)(b - ctp_groups_at(g[0], 0));
	assert_true(ctp_interval_agg_change(&ba[bi], &ca[ci], &s));
	assert_true(near(s.delta, 370 - 630)); /* can go negative */
	assert_false(s.per_s_ok);
	assert_true(near(ctp_interval_rate(x.iv, &s), -26));
	assert_true(ctp_interval_agg_change(NULL, &ca[ci], &s));
	assert_true(near(s.delta, 370));
	ctp_groups_free(g[0]);
	ctp_groups_free(g[1]);
	close_all(&x);
}

static void test_kinds(void **state)
{
	(void)state;
	struct fixture x = open_all(true);
	assert_true(ctp_interval_counter(field(x.snap[1], "t.cpu")));
	assert_false(ctp_interval_counter(field(x.snap[1], "t.begin")));
	assert_false(ctp_interval_reaped(field(x.snap[1], "t.cpu")));
	close_all(&x);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("interval", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_group_reset),
		cmocka_unit_test(test_renamed),
		cmocka_unit_test(test_exited),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_no_identity),
		cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
