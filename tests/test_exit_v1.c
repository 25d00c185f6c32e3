/* SPDX-License-Identifier: MIT */
/*
 * Exited tasks on a cgroup v1 axis (`cgroup:HIER`, docs/COMPARE.md
 * "Exited tasks"): the exit sum (core/analysis/exitsum.c) gives each task
 * its paths in the v1 hierarchies by the rules of its v2 cgroup (a
 * snapshot that saw it live, its process's first live thread, else its
 * parent, a few generations up, never init's, never a later process of a
 * reused pid) and the groups (group.c) key it by them; exit rows carry no
 * v1 path. Hand-built captures by the real writer, 5 s apart (boot 1000,
 * 1005, 1010 s); the v1 path fields are named unlike the cgroup plugin's
 * on purpose (the core finds them by section and dimension):
 *
 *   make 10 (cpuacct /build, memory /mem-build), live in all three, t.cpu
 *     100 -> 200 -> 300 ticks; its thread 11 "worker" in cpuacct /build-w
 *     (memory /mem-w), 50 -> 100 ticks in BASE and the middle file, exits
 *     at 1008 s with 1.5 s; its thread 12 "helper", never seen live,
 *     exits at 1007 s with 0.5 s
 *   cc1 30, child of make, born and gone before the middle file (2 s)
 *   job 60 (cpuacct /jobs), live only in the middle file, exits at 1008 s
 *     (0.3 s); its child sh 61 (0.2 s) and grandchild cc-job 62 (0.1 s),
 *     which no file saw, exit before it
 *   fst 63, child of make, whose row says it exited in v2 /fast (0.4 s)
 *   orphan 70 (parent 999, which no file knows), adopted 71 (parent 1,
 *     init) and late 80 (parent 20, svc, which started after it: a reused
 *     pid; its row's age says when it started), 0.25 s each
 *   svc 20 (cpuacct /svc), live in CAND only, started at 1009 s
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
#include "model.h"
#include "series.h"
#include "snapbuild.h"
#include "view.h"

static char tmp[PATH_MAX];

enum { F_CPU, F_BEGIN, F_ACCT, F_MEM, X_CPU, X_PPID, X_CG, X_AGE, NF };

#define SEC 1000000000ull

static const char view_text[] =
	"view: c\ndescription: d\nsort: a\n"
	"sections: [{title: T, group_by: pcomm}]\n"
	"columns: [{id: a, label: A, field: t.cpu, exited: [x.cpu]}]\n"
	"coverage: {threads: [t.cpu], exited: [x.cpu]}\n";

struct live {
	uint32_t tgid, tid;
	const char *comm, *acct, *mem;
	uint64_t cpu, begin; /* ticks */
};

struct gone {
	uint32_t tid, tgid;
	const char *comm;
	uint64_t exit_s, us, ppid, age_us;
	const char *cg; /* role cgroup (v2), NULL: none */
};

static const struct live lives[3][4] = {
	{{10, 10, "make", "/build", "/mem-build", 100, 100},
	 {10, 11, "worker", "/build-w", "/mem-w", 50, 200}},
	{{10, 10, "make", "/build", "/mem-build", 200, 100},
	 {10, 11, "worker", "/build-w", "/mem-w", 100, 200},
	 {60, 60, "job", "/jobs", "/mem-jobs", 10, 100200}},
	{{10, 10, "make", "/build", "/mem-build", 300, 100},
	 {20, 20, "svc", "/svc", "/mem-svc", 5, 100900}},
};

static const struct gone gones[3][10] = {
	{{0}},
	{{30, 30, "cc1", 1003, 2000000, 10, 0, NULL}},
	{{11, 10, "worker", 1008, 1500000, 0, 0, NULL},
	 {12, 10, "helper", 1007, 500000, 0, 0, NULL},
	 {60, 60, "job", 1008, 300000, 0, 0, NULL},
	 {61, 61, "sh", 1007, 200000, 60, 0, NULL},
	 {62, 62, "cc-job", 1006, 100000, 61, 0, NULL},
	 {63, 63, "fst", 1007, 400000, 10, 0, "/fast"},
	 {70, 70, "orphan", 1009, 250000, 999, 0, NULL},
	 {71, 71, "adopted", 1009, 250000, 1, 0, NULL},
	 {80, 80, "late", 1008, 250000, 20, 1000000, NULL}},
};

static char paths[3][PATH_MAX];

static void put_str(struct ctp_capture *cap, struct ctp_table *t, uint32_t r,
		    uint32_t ident, int fid, const char *s)
{
	struct sb_cell c = {.set = true, .s = s};
	sb_put(cap, t, r, ident, fid, &c);
}

/* File k of the recording, written to paths[k]. */
static void write_side(int k)
{
	const struct ctp_field_desc d[NF] = {
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_BEGIN] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[F_ACCT] = {"w.acct", "v1 cpuacct path", CTP_SCOPE_THREAD,
			    CTP_TYPE_STRING, CTP_UNIT_NONE,
			    CTP_KIND_CATEGORICAL, CTP_RULE_MODE, CTP_FIELD_META,
			    0, "cgroup-v1-path", "hierarchy=cpuacct"},
		[F_MEM] = {"w.mem", "v1 memory path", CTP_SCOPE_THREAD,
			   CTP_TYPE_STRING, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
			   CTP_RULE_MODE, CTP_FIELD_META, 0, "cgroup-v1-path",
			   "hierarchy=memory"},
		[X_CPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			   CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[X_PPID] = {"x.ppid", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE,
			    CTP_FIELD_PARENT},
		[X_CG] = {"x.cgroup", NULL, CTP_SCOPE_EXITED, CTP_TYPE_STRING,
			  CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE,
			  CTP_FIELD_CGROUP},
		[X_AGE] = {"x.age", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			   CTP_UNIT_US, CTP_KIND_GAUGE, CTP_RULE_MAX,
			   CTP_FIELD_ELAPSED},
	};
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_table *th = &cap->threads[0], *x = &cap->exited;
	char err[512];
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t cg = sb_cgroup(cap, "/"), last = 0;
	for (int i = 0; i < 4 && lives[k][i].tgid; i++) {
		const struct live *l = &lives[k][i];
		if (l->tgid != last)
			sb_process(cap, l->tgid, lives[k][i].comm);
		last = l->tgid;
		uint32_t r = sb_thread(cap, l->tid, l->comm, (int)cg);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, F_CPU, l->cpu);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, F_BEGIN, l->begin);
		put_str(cap, th, r, CTP_THREAD_IDENT, F_ACCT, l->acct);
		put_str(cap, th, r, CTP_THREAD_IDENT, F_MEM, l->mem);
	}
	for (int i = 0; i < 10 && gones[k][i].tid; i++) {
		const struct gone *g = &gones[k][i];
		uint32_t r = sb_exited(cap, g->tid, g->tgid, g->comm,
				       g->exit_s * SEC);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, g->us);
		if (g->ppid)
			sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_PPID,
				   g->ppid);
		if (g->age_us)
			sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_AGE,
				   g->age_us);
		if (g->cg)
			sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CG,
				   sb_blob(cap, g->cg, strlen(g->cg)));
	}
	cap->plugins[0].exited = true;
	cap->start_boottime_ns = (1000 + 5 * (uint64_t)k) * SEC;
	cap->start_realtime_ns = 1700000000000000000ull + (uint64_t)k * 5 * SEC;
	cap->end_realtime_ns = cap->start_realtime_ns + SEC / 10;
	assert_int_equal(E2E_PATHF(paths[k], "%s/%d.ctprof", tmp, k), 0);
	if (sb_write(cap, paths[k], err, sizeof(err)) < 0)
		fail_msg("write %s: %s", paths[k], err);
	ctp_capture_free(cap);
}

static struct ctp_snap *open_side(int k)
{
	struct ctp_snap *s;
	char err[512];
	if (ctp_snap_open(paths[k], 1u << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return s;
}

static struct ctp_view *view(void)
{
	struct ctp_view *v;
	char err[256];
	if (ctp_view_parse("c.yaml", view_text, strlen(view_text), &v, err,
			   sizeof(err)) < 0)
		fail_msg("%s", err);
	return v;
}

static struct ctp_groups *group(const struct ctp_snap *snap, const char *axes,
				const struct ctp_exit_sum *ex)
{
	struct ctp_group_spec spec = {.no_normalize = true};
	char text[64], err[256];
	struct ctp_groups *g;
	snprintf(text, sizeof(text), "%s", axes);
	assert_int_equal(ctp_group_spec_parse(text, &spec, err, sizeof(err)),
			 0);
	if (ctp_groups_new_extra(snap, &spec, ex->id, ex->tasks, &g, err,
				 sizeof(err)) < 0)
		fail_msg("%s: %s", axes, err);
	return g;
}

/* The comms of group `key`'s exited tasks (NULL: the keyless group),
 * sorted by tid, comma-separated; "" when it has none, "-" when there is
 * no such group. */
static const char *extras_of(const struct ctp_groups *g,
			     const struct ctp_exit_sum *ex, const char *key)
{
	static char out[256];
	const char *k[1] = {key};
	const struct ctp_group *gr = ctp_groups_find(g, k);
	if (!gr)
		return "-";
	out[0] = '\0';
	for (uint32_t i = 0; i < gr->n_extras; i++) {
		const struct ctp_group_extra *x = &ex->id[gr->extras[i]];
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%.*s",
			 i ? "," : "", (int)x->comm.len, x->comm.ptr);
	}
	return out;
}

/* compare BASE CAND over the recording (the middle file between): each
 * exited task in the v1 group of its thread, its process, its parent or
 * its parent's parent, as a snapshot saw them; none where no snapshot
 * saw its parent (or its parent is init, or a later process of its pid). */
static void test_compare_groups(void **state)
{
	(void)state;
	struct ctp_view *v = view();
	struct ctp_snap *base = open_side(0), *cand = open_side(2);
	struct ctp_exit_sum ex;
	char *between[1] = {paths[1]};
	assert_int_equal(ctp_exit_sum_paths(base, cand, between, 1, 1u << 30, v,
					    stderr, "test", &ex),
			 0);
	assert_int_equal(ex.tasks, 10);
	struct ctp_groups *g = group(cand, "cgroup:cpuacct", &ex);
	/* Its own path BASE saw (not its process's /build). */
	assert_string_equal(extras_of(g, &ex, "/build-w"), "worker");
	/* A thread no file saw, by its process's live thread; children of
	 * make by make, fst too (its row's v2 /fast is no v1 path). */
	assert_string_equal(extras_of(g, &ex, "/build"), "cc1,helper,fst");
	/* Seen only in the middle file (freed before CAND is read), and its
	 * child and grandchild by it. */
	assert_string_equal(extras_of(g, &ex, "/jobs"), "job,sh,cc-job");
	assert_string_equal(extras_of(g, &ex, "/svc"), "");
	assert_string_equal(extras_of(g, &ex, NULL), "orphan,adopted,late");
	ctp_groups_free(g);
	/* Another hierarchy of the same tasks: its own paths. */
	g = group(cand, "cgroup:memory", &ex);
	assert_string_equal(extras_of(g, &ex, "/mem-w"), "worker");
	assert_string_equal(extras_of(g, &ex, "/mem-build"), "cc1,helper,fst");
	ctp_groups_free(g);
	/* The v2 axis as before: fst where its row says. */
	g = group(cand, "cgroup", &ex);
	assert_string_equal(extras_of(g, &ex, "/fast"), "fst");
	ctp_groups_free(g);
	ctp_exit_sum_free(&ex);
	ctp_snap_free(base);
	ctp_snap_free(cand);
	ctp_view_free(v);
}

/* The exporters' series over the recording, file by file: a v1 group's
 * counter takes its exited tasks' work (never lost to the keyless
 * group), and counts them. */
static void test_series(void **state)
{
	(void)state;
	struct ctp_view *v = view();
	const struct ctp_view *vs[1] = {v};
	struct ctp_group_spec spec = {.no_normalize = true};
	char axes[] = "cgroup:cpuacct", err[256];
	assert_int_equal(ctp_group_spec_parse(axes, &spec, err, sizeof(err)),
			 0);
	struct ctp_series_opts o = {.spec = &spec, .views = vs, .n_views = 1};
	struct ctp_series *s;
	assert_int_equal(ctp_series_new(&o, &s), 0);
	for (int k = 0; k < 3; k++)
		if (ctp_series_feed(s, open_side(k), err, sizeof(err)) < 0)
			fail_msg("feed %d: %s", k, err);
	const struct ctp_snap_field *f =
		ctp_snap_field_find(ctp_series_snap(s), "t.cpu");
	assert_non_null(f);
	/* Per group: its t.cpu increase in ticks and its exited tasks. make
	 * +200 and cc1 2 s, helper 0.5 s, fst 0.4 s; worker +50 live, then
	 * 1.5 s at exit less the middle file's 1 s; job 0.3 s less the
	 * middle file's 0.1 s (+10 live before), sh 0.2 s, cc-job 0.1 s. */
	static const struct {
		const char *label;
		long double ticks;
		uint64_t exited;
	} want[] = {{"\"/build\"", 490, 3},
		    {"\"/build-w\"", 100, 1},
		    {"\"/jobs\"", 60, 3}};
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		size_t i = 0;
		while (i < ctp_series_n(s) &&
		       !strstr(ctp_series_labels(s, i), want[w].label))
			i++;
		if (i == ctp_series_n(s))
			fail_msg("no series %s", want[w].label);
		long double x;
		assert_true(ctp_series_value(s, i, f, &x));
		if (fabsl(x - want[w].ticks) > 1e-6)
			fail_msg("%s: %Lg ticks, want %Lg",
				 ctp_series_labels(s, i), x, want[w].ticks);
		assert_int_equal(ctp_series_exited(s, i), want[w].exited);
	}
	ctp_series_free(s);
	ctp_view_free(v);
}

static int setup(void **state)
{
	(void)state;
	if (e2e_tmpdir("exit_v1", tmp, sizeof(tmp)) < 0)
		return -1;
	for (int k = 0; k < 3; k++)
		write_side(k);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_groups),
		cmocka_unit_test(test_series),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
