/* SPDX-License-Identifier: MIT */
/*
 * Grouping and aggregation (core/analysis/group.c), derived fields end to end
 * (registry, writer, reader, aggregation) and `show --group-by`.
 *
 * Every snapshot here is a hand-built struct ctp_capture written by the real
 * writer and read back by the real reader; the expected aggregates in the
 * comments are worked out by hand from the rows below.
 *
 * `test_group --live-taskstats` instead captures this host with the
 * taskstats plugin and delay accounting switched on, and checks that
 * taskstats.offcpu_delay_total equals its formula over the raw inputs, per
 * thread and per group (77 without CAP_NET_ADMIN or taskstats).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

#include "cli.h"
#include "e2e_util.h"
#include "group.h"
#include "model.h"
#include "reader.h"
#include "render.h"
#include "snapbuild.h"
#include "writer.h"

#define SKIP 77

static char tmp[PATH_MAX];

/* ---- Building captures ---- */

/* Cells (snapbuild.h): absent, u64, i64, string, cpu set. */
#define ABSENT                                                                 \
	{                                                                      \
		0                                                              \
	}
#define U(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(x)                                \
	}
#define I(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(int64_t)(x)                       \
	}
#define S(lit)                                                                 \
	{                                                                      \
		.set = true, .s = (lit)                                        \
	}
#define C(...)                                                                 \
	{                                                                      \
		.set = true, .cpus = { __VA_ARGS__, -1 }                       \
	}

/* Fields, in registration order: inputs before the derived fields. */
enum {
	T_CNT,
	T_PEAK,
	T_LOW,
	T_STATE,
	T_WCHAN,
	T_FLAG,
	T_NICE,
	T_LOAD,
	T_CPUS,
	T_NEVER,
	T_A,
	T_B,
	T_C,
	T_D,
	T_V1,
	N_TF, /* thread fields */
	P_FAULTS = N_TF,
	P_RSS,
	P_PRIO,
	C_USAGE,
	H_MEM,
	N_PLAIN,
	D_TOTAL = N_PLAIN, /* a + b + max(c, d) */
	D_NET,		   /* a - b, i64 */
	D_NESTED,	   /* total + 2a */
	D_PF2,		   /* 2 * p.faults */
	D_HOST,		   /* 2 * h.mem */
	N_FIELDS
};
#define N_PF 3 /* process fields */

static const struct ctp_field_desc plain[N_PLAIN] = {
	[T_CNT] = {"t.cnt", "count", CTP_SCOPE_THREAD, CTP_TYPE_U64,
		   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_PEAK] = {"t.peak", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		    CTP_UNIT_BYTES, CTP_KIND_PEAK, CTP_RULE_MAX},
	[T_LOW] = {"t.low", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NS,
		   CTP_KIND_PEAK, CTP_RULE_MIN},
	[T_STATE] = {"t.state", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CHAR,
		     CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_MODE},
	[T_WCHAN] = {"t.wchan", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING,
		     CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_FLAG] = {"t.flag", NULL, CTP_SCOPE_THREAD, CTP_TYPE_BOOL,
		    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_NICE] = {"t.nice", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64,
		    CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	[T_LOAD] = {"t.load", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		    CTP_UNIT_CENTIPCT, CTP_KIND_GAUGE, CTP_RULE_RANGE},
	[T_CPUS] = {"t.cpus", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CPUSET,
		    CTP_UNIT_NONE, CTP_KIND_CPUSET, CTP_RULE_UNION},
	[T_NEVER] = {"t.never", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		     CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_A] = {"t.a", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_B] = {"t.b", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_C] = {"t.c", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_D] = {"t.d", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	/* A v1 path field as the cgroup plugin declares one: found by its
	 * section and hierarchy dimension, not by its name. */
	[T_V1] = {"cgroup.v1.cpu-cpuacct.path", NULL, CTP_SCOPE_THREAD,
		  CTP_TYPE_STRING, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
		  CTP_RULE_MODE, CTP_FIELD_META, 0, "cgroup-v1-path",
		  "hierarchy=cpu-cpuacct"},
	[P_FAULTS] = {"p.faults", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
		      CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[P_RSS] = {"p.rss", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
		   CTP_UNIT_BYTES, CTP_KIND_PEAK, CTP_RULE_MAX},
	[P_PRIO] = {"p.prio", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_I64,
		    CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_MODE},
	[C_USAGE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
		     CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[H_MEM] = {"h.mem", NULL, CTP_SCOPE_HOST, CTP_TYPE_U64, CTP_UNIT_BYTES,
		   CTP_KIND_GAUGE, CTP_RULE_MAX},
};

#define TERM(f, c, s)                                                          \
	{                                                                      \
		.field = (f), .coef = (c), .max_set = (s)                      \
	}
#define DERIVED(nm, sc, ty, un, kd, rl, n, ...)                                \
	{                                                                      \
		.abi = CTP_ABI_MAJOR, .size = sizeof(struct ctp_derived_desc), \
		.field = {nm, NULL, sc, ty, un, kd, rl}, .n_terms = n,         \
		.terms = {__VA_ARGS__},                                        \
	}

static const struct ctp_derived_desc derived[N_FIELDS - N_PLAIN] = {
	[D_TOTAL - N_PLAIN] = DERIVED(
		"t.total", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		CTP_KIND_COUNTER, CTP_RULE_SUM, 4, TERM("t.a", 1, 0),
		TERM("t.b", 1, 0), TERM("t.c", 1, 1), TERM("t.d", 1, 1)),
	[D_NET - N_PLAIN] = DERIVED("t.net", CTP_SCOPE_THREAD, CTP_TYPE_I64,
				    CTP_UNIT_NS, CTP_KIND_GAUGE, CTP_RULE_MAX,
				    2, TERM("t.a", 1, 0), TERM("t.b", -1, 0)),
	[D_NESTED - N_PLAIN] =
		DERIVED("t.nested", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
			CTP_KIND_COUNTER, CTP_RULE_SUM, 2,
			TERM("t.total", 1, 0), TERM("t.a", 2, 0)),
	[D_PF2 - N_PLAIN] = DERIVED(
		"p.faults2", CTP_SCOPE_PROCESS, CTP_TYPE_U64, CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM, 1, TERM("p.faults", 2, 0)),
	[D_HOST - N_PLAIN] =
		DERIVED("h.mem2", CTP_SCOPE_HOST, CTP_TYPE_U64, CTP_UNIT_BYTES,
			CTP_KIND_GAUGE, CTP_RULE_MAX, 1, TERM("h.mem", 2, 0)),
};

struct trow {
	uint32_t tgid, tid;
	const char *comm; /* NULL: nil */
	int cg;		  /* -1: unknown */
	struct sb_cell v[N_TF];
};

struct prow {
	uint32_t tgid;
	const char *comm;
	struct sb_cell v[N_PF];
};

struct dataset {
	const struct trow *threads;
	size_t n_threads;
	const struct prow *procs;
	size_t n_procs;
	const char *const *cgroups;
	const struct sb_cell *cg_usage;
	size_t n_cgroups;
	bool no_v1; /* leave out cgroup.v1.cpu */
};

/*
 * The main sample. Processes 100 and 200 are both "app", 300 is "db", 400
 * has no name. Expected aggregates are in the tests.
 */
static const struct trow main_threads[] = {
	/*  tgid tid comm  cg  cnt    peak     low    state   wchan
	 *  flag  nice   load  cpus   never a b c d v1 */
	{100,
	 100,
	 "app",
	 0,
	 {U(10), U(1000), I(-5), U('S'), S("ep_poll"), U(1), I(0), U(10),
	  C(0, 1, 2, 3), ABSENT, U(100), U(10), U(5), U(7), S("/app")}},
	{100,
	 101,
	 "worker-0",
	 0,
	 {U(20), U(3000), I(-9), U('R'), ABSENT, U(0), I(5), U(30),
	  C(0, 1, 2, 3), ABSENT, U(200), U(20), U(50), U(1), S("/app")}},
	{100,
	 102,
	 "worker-1",
	 0,
	 {ABSENT, U(2000), ABSENT, U('R'), S("futex"), U(1), I(-2), U(20),
	  C(4, 5), ABSENT, U(300), ABSENT, U(0), U(0), S("/app")}},
	{100,
	 103,
	 "worker-2",
	 0,
	 {U(5), ABSENT, I(3), U('S'), S("futex"), U(0), I(5), ABSENT, ABSENT,
	  ABSENT, U(400), U(40), U(2), U(3), S("/app")}},
	{200,
	 200,
	 "app",
	 1,
	 {U(1), U(500), I(0), U('D'), S("ep_poll"), U(1), I(0), U(0),
	  C(0, 1, 2, 3), ABSENT, U(1), U(1), U(1), U(1), S("/app")}},
	{200,
	 201,
	 "worker-0",
	 1,
	 {U(2), U(600), I(1), U('S'), S("futex"), U(1), I(19), U(5),
	  C(8, 9, 10, 11), ABSENT, U(2), U(2), U(2), U(2), S("/app")}},
	{300,
	 300,
	 "db",
	 2,
	 {U(7), U(700), ABSENT, U('S'), S("do_wait"), U(0), I(-20), U(70),
	  C(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
	    19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
	    36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52,
	    53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63),
	  ABSENT, ABSENT, U(5), U(5), U(5), S("/db-1")}},
	{300,
	 301,
	 "worker-7",
	 3,
	 {ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT,
	  ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, S("/db-2")}},
	{400,
	 400,
	 NULL,
	 -1,
	 {U(0), ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT,
	  ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT}},
};

static const struct prow main_procs[] = {
	/* faults, rss, prio */
	{100, "app", {U(1000), U(4096), I(0)}},
	{200, "app", {U(50), U(8192), I(-5)}},
	{300, "db", {ABSENT, U(1024), I(0)}},
	{400, NULL, {U(4), ABSENT, ABSENT}},
};

static const char *const main_cgroups[] = {
	"/system.slice/app@1.service", "/system.slice/app@2.service",
	"/user.slice/user-1000.slice/session-3.scope",
	"/user.slice/user-1000.slice/session-4.scope"};
static const struct sb_cell main_usage[] = {U(100), U(200), ABSENT, U(50)};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct dataset main_set = {
	main_threads, N(main_threads), main_procs,     N(main_procs),
	main_cgroups, main_usage,      N(main_cgroups)};

/* Build a snapshot's capture; fields as above. */
static struct ctp_capture *build_capture(const struct dataset *ds)
{
	struct ctp_capture *cap = sb_capture("t");

	for (int i = 0; i < N_PLAIN; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &plain[i]), i);
	for (int i = N_PLAIN; i < N_FIELDS; i++) {
		const char *why = NULL;
		int term;
		int r = ctp_registry_add_derived(
			&cap->reg, 0, &derived[i - N_PLAIN], &why, &term);
		if (r != i)
			fail_msg("derived %d: %d (%s)", i, r, why);
	}

	struct sb_cell mem = U(1048576);
	sb_put(cap, &cap->host, 0, CTP_HOST_IDENT, H_MEM, &mem);

	for (size_t i = 0; i < ds->n_cgroups; i++) {
		uint32_t r = sb_cgroup(cap, ds->cgroups[i]);
		sb_put(cap, &cap->cgroups, r, CTP_CGROUP_IDENT, C_USAGE,
		       &ds->cg_usage[i]);
	}

	for (size_t i = 0; i < ds->n_procs; i++) {
		const struct prow *p = &ds->procs[i];
		uint32_t prow = sb_process(cap, p->tgid, p->comm);
		for (int f = 0; f < N_PF; f++)
			sb_put(cap, &cap->procs[0], prow, CTP_PROCESS_IDENT,
			       P_FAULTS + f, &p->v[f]);
		for (size_t k = 0; k < ds->n_threads; k++) {
			const struct trow *t = &ds->threads[k];
			if (t->tgid != p->tgid)
				continue;
			uint32_t r = sb_thread(cap, t->tid, t->comm, t->cg);
			for (int f = 0; f < N_TF; f++)
				if (f != T_V1 || !ds->no_v1)
					sb_put(cap, &cap->threads[0], r,
					       CTP_THREAD_IDENT, f, &t->v[f]);
		}
	}
	return cap;
}

static int write_capture(struct ctp_capture *cap, const char *name, char *path,
			 size_t pathlen, char *err, size_t errlen)
{
	int n = snprintf(path, pathlen, "%s/%s", tmp, name);
	if (n < 0 || (size_t)n >= pathlen)
		return -ENAMETOOLONG;
	return sb_write(cap, path, err, errlen);
}

static struct ctp_snap *open_capture(struct ctp_capture *cap, const char *name)
{
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap;
	if (write_capture(cap, name, path, sizeof(path), err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	if (ctp_snap_open(path, 1ull << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	return snap;
}

static struct ctp_snap *snapshot(const struct dataset *ds, const char *name)
{
	struct ctp_capture *cap = build_capture(ds);
	struct ctp_snap *snap = open_capture(cap, name);
	ctp_capture_free(cap);
	return snap;
}

/* ---- Helpers to look at groups ---- */

static struct ctp_groups *group(const struct ctp_snap *snap, const char *axes,
				bool no_normalize, const char *const *flatten,
				size_t n_flatten)
{
	struct ctp_group_spec spec = {.no_normalize = no_normalize,
				      .flatten = flatten,
				      .n_flatten = n_flatten};
	char text[128], err[256];
	struct ctp_groups *g;
	snprintf(text, sizeof(text), "%s", axes);
	if (ctp_group_spec_parse(text, &spec, err, sizeof(err)) < 0)
		fail_msg("spec %s: %s", axes, err);
	if (ctp_groups_new(snap, &spec, &g, err, sizeof(err)) < 0)
		fail_msg("group %s: %s", axes, err);
	return g;
}

/* The key of group i as "a|b|c" ("-" for unknown parts). */
static const char *key_text(const struct ctp_groups *g, size_t i, char *buf,
			    size_t n)
{
	const struct ctp_group *gr = ctp_groups_at(g, i);
	size_t o = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < ctp_groups_n_key(g); k++)
		o += (size_t)snprintf(buf + o, n - o, "%s%s", k ? "|" : "",
				      gr->key[k] ? gr->key[k] : "-");
	return buf;
}

/* Index of the group whose key text is `want`; fails when none. */
static size_t find_key(const struct ctp_groups *g, const char *want)
{
	char buf[512];
	for (size_t i = 0; i < ctp_groups_count(g); i++)
		if (!strcmp(key_text(g, i, buf, sizeof(buf)), want))
			return i;
	fail_msg("no group '%s'", want);
	return 0;
}

static void expect_keys(const struct ctp_groups *g, const char *const *want,
			size_t n)
{
	char buf[512];
	if (ctp_groups_count(g) != n) {
		for (size_t i = 0; i < ctp_groups_count(g); i++)
			fprintf(stderr, "  group %zu: %s\n", i,
				key_text(g, i, buf, sizeof(buf)));
		fail_msg("%zu groups, expected %zu", ctp_groups_count(g), n);
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(key_text(g, i, buf, sizeof(buf)), want[i]))
			fail_msg("group %zu is '%s', expected '%s'", i, buf,
				 want[i]);
}

static const struct ctp_agg *agg(struct ctp_groups *g, const char *field,
				 size_t i)
{
	const struct ctp_snap *snap = ctp_groups_snap(g);
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, field);
	const struct ctp_agg *col;
	assert_non_null(f);
	assert_int_equal(ctp_groups_aggregate(g, f, &col), 0);
	return &col[i];
}

/* The aggregate rendered as `show` prints it, "(k/n)" included. */
static const char *cell(struct ctp_groups *g, const char *field, size_t i,
			char *buf, size_t n)
{
	const struct ctp_snap_field *f =
		ctp_snap_field_find(ctp_groups_snap(g), field);
	assert_non_null(f);
	ctp_render_agg_cell(f->unit, agg(g, field, i), buf, n);
	return buf;
}

#define EXPECT_CELL(g, field, i, want)                                         \
	do {                                                                   \
		char b_[256];                                                  \
		const char *got_ = cell(g, field, i, b_, sizeof(b_));          \
		if (strcmp(got_, want))                                        \
			fail_msg("%s of group %zu: '%s', expected '%s'",       \
				 field, (size_t)(i), got_, want);              \
	} while (0)

/* ---- Grouping ---- */

static void test_pcomm(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "pcomm.ctprof");
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	static const char *const keys[] = {"-", "app", "db"};
	expect_keys(g, keys, 3);
	assert_string_equal(ctp_groups_key_title(g, 0), "PCOMM");
	const struct ctp_group *app = ctp_groups_at(g, 1);
	assert_int_equal(app->n_threads, 6);
	assert_int_equal(app->n_processes, 2);
	assert_int_equal(app->n_cgroups, 2);
	/* Thread rows in (tgid, tid) order: 100..103 then 200, 201. */
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(app->threads[i], i);
	assert_int_equal(app->processes[0], 0);
	assert_int_equal(app->processes[1], 1);
	assert_int_equal(ctp_groups_at(g, 2)->n_threads, 2);
	assert_int_equal(ctp_groups_at(g, 2)->n_processes, 1);
	assert_int_equal(ctp_groups_at(g, 0)->n_cgroups, 0);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* Each rule on the "app" group (threads 100-103, 200, 201). */
static void test_rules(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "rules.ctprof");
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	const struct ctp_agg *a;

	/* SUM: 10 + 20 + 5 + 1 + 2, 102 unmeasured. */
	a = agg(g, "t.cnt", 1);
	assert_int_equal(a->v.type, CTP_TYPE_U64);
	assert_int_equal(a->v.u64, 38);
	assert_int_equal(a->n_measured, 5);
	assert_int_equal(a->n_rows, 6);
	EXPECT_CELL(g, "t.cnt", 1, "38 (5/6)");
	/* MAX of 1000, 3000, 2000, 500, 600. */
	a = agg(g, "t.peak", 1);
	assert_int_equal(a->v.u64, 3000);
	EXPECT_CELL(g, "t.peak", 1, "2.93 KiB (5/6)");
	/* MIN of -5, -9, 3, 0, 1. */
	a = agg(g, "t.low", 1);
	assert_int_equal(a->v.type, CTP_TYPE_I64);
	assert_int_equal(a->v.i64, -9);
	EXPECT_CELL(g, "t.low", 1, "-9 ns (5/6)");
	/* MODE: S three times, R twice, D once. */
	a = agg(g, "t.state", 1);
	assert_int_equal(a->v.c, 'S');
	EXPECT_CELL(g, "t.state", 1, "S");
	/* MODE of strings: futex 3, ep_poll 2. */
	EXPECT_CELL(g, "t.wchan", 1, "futex (5/6)");
	/* MODE of bools: true 4, false 2. */
	EXPECT_CELL(g, "t.flag", 1, "true");
	/* RANGE of 0, 5, -2, 5, 0, 19. */
	a = agg(g, "t.nice", 1);
	assert_int_equal(a->v.i64, -2);
	assert_int_equal(a->hi.i64, 19);
	assert_true(a->mixed);
	EXPECT_CELL(g, "t.nice", 1, "-2..19");
	EXPECT_CELL(g, "t.load", 1, "0.00%..0.30% (5/6)");
	/* UNION of 0-3, 0-3, 4-5, 0-3, 8-11: 0-5,8-11, members differ. */
	a = agg(g, "t.cpus", 1);
	assert_int_equal(a->v.type, CTP_TYPE_CPUSET);
	assert_int_equal(ctp_cpuset_count(&a->v), 10);
	assert_true(a->mixed);
	EXPECT_CELL(g, "t.cpus", 1, "mixed 0-5,8-11 (10) (5/6)");
	/* "db": one set, so not mixed; RANGE of one value prints it. */
	EXPECT_CELL(g, "t.cpus", 2, "0-63 (64) (1/2)");
	assert_false(agg(g, "t.cpus", 2)->mixed);
	EXPECT_CELL(g, "t.nice", 2, "-20 (1/2)");
	assert_false(agg(g, "t.nice", 2)->mixed);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* MODE ties go to the smallest value; absent never counts. */
static void test_mode_ties(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "ties.ctprof");
	struct ctp_groups *g = group(snap, "comm", false, NULL, 0);
	static const char *const keys[] = {"-", "app", "db", "worker-{N}"};
	expect_keys(g, keys, 4);
	/* worker-{N}: 101 R, 102 R, 103 S, 201 S, 301 absent: R < S. */
	EXPECT_CELL(g, "t.state", 3, "R (4/5)");
	/* flags 0, 1, 0, 1: false < true. */
	EXPECT_CELL(g, "t.flag", 3, "false (4/5)");
	/* prio of processes 100, 200, 300 (each once): 0, -5, 0 -> 0. */
	EXPECT_CELL(g, "p.prio", 3, "0");
	/* app: processes 100 and 200, prio 0 and -5 tie: -5. */
	EXPECT_CELL(g, "p.prio", 1, "-5");
	ctp_groups_free(g);
	/* pcomm db: 300 S and 301 unmeasured: absent is no value, so S. */
	g = group(snap, "pcomm", false, NULL, 0);
	EXPECT_CELL(g, "t.state", 2, "S (1/2)");
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

static void test_absent(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "absent.ctprof");
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	const struct ctp_agg *a;

	/* Never measured anywhere: absent, "-", never 0. */
	for (size_t i = 0; i < 3; i++) {
		a = agg(g, "t.never", i);
		assert_int_equal(a->v.type, CTP_VALUE_ABSENT);
		assert_int_equal(a->n_measured, 0);
		EXPECT_CELL(g, "t.never", i, "-");
	}
	/* db: 300 has no t.low and 301 nothing: absent. */
	a = agg(g, "t.low", 2);
	assert_int_equal(a->v.type, CTP_VALUE_ABSENT);
	assert_int_equal(a->n_rows, 2);
	EXPECT_CELL(g, "t.low", 2, "-");
	/* A measured zero stays a zero: tid 400's count. */
	a = agg(g, "t.cnt", 0);
	assert_int_equal(a->v.type, CTP_TYPE_U64);
	assert_int_equal(a->v.u64, 0);
	EXPECT_CELL(g, "t.cnt", 0, "0");
	/* Partly measured: 7 over one of db's two threads. */
	EXPECT_CELL(g, "t.cnt", 2, "7 (1/2)");
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* Process fields count each process once, however many threads. */
static void test_process_dedup(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "dedup.ctprof");
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	/* app: 1000 + 50 (not 4 * 1000 + 2 * 50), over 2 processes. */
	const struct ctp_agg *a = agg(g, "p.faults", 1);
	assert_int_equal(a->v.u64, 1050);
	assert_int_equal(a->n_rows, 2);
	assert_int_equal(a->n_measured, 2);
	EXPECT_CELL(g, "p.rss", 1, "8.00 KiB");
	EXPECT_CELL(g, "p.faults", 2, "-");
	EXPECT_CELL(g, "p.faults", 0, "4");
	ctp_groups_free(g);

	/* comm: worker-{N} spans processes 100 (three threads), 200 and 300:
	 * 1000 + 50, 300 unmeasured. */
	g = group(snap, "comm", false, NULL, 0);
	EXPECT_CELL(g, "p.faults", 3, "1,050 (2/3)");
	EXPECT_CELL(g, "p.rss", 3, "8.00 KiB");
	ctp_groups_free(g);

	/* Cgroup fields: each cgroup once. app@{N}.service is cgroups 0 and
	 * 1 (100 + 200 us); the session scopes 2 (absent) and 3 (50). */
	g = group(snap, "cgroup", false, NULL, 0);
	static const char *const keys[] = {
		"-", "/system.slice/app@{N}.service",
		"/user.slice/user-{N}.slice/session-{N}.scope"};
	expect_keys(g, keys, 3);
	EXPECT_CELL(g, "c.usage", 1, "300 us");
	EXPECT_CELL(g, "c.usage", 2, "50 us (1/2)");
	EXPECT_CELL(g, "c.usage", 0, "-");
	assert_int_equal(agg(g, "c.usage", 0)->n_rows, 0);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

static void test_derived(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "derived.ctprof");
	const struct ctp_snap_field *total =
		ctp_snap_field_find(snap, "t.total");
	assert_non_null(total);
	assert_int_equal(total->n_terms, 4);
	assert_string_equal(ctp_snap_fields(snap)[total->terms[2].input].name,
			    "t.c");
	assert_int_equal(total->terms[2].max_set, 1);
	assert_int_equal(ctp_snap_field_find(snap, "t.net")->terms[1].coef, -1);

	/* Per row: tid 100: 100 + 10 + max(5, 7) = 117. */
	struct ctp_value v = ctp_snap_value(snap, total, 0);
	assert_int_equal(v.type, CTP_TYPE_U64);
	assert_int_equal(v.u64, 117);
	/* tid 101: 200 + 20 + max(50, 1) = 270; net 180; nested 270+400. */
	assert_int_equal(ctp_snap_value(snap, total, 1).u64, 270);
	assert_int_equal(
		ctp_snap_value(snap, ctp_snap_field_find(snap, "t.net"), 1).i64,
		180);
	assert_int_equal(
		ctp_snap_value(snap, ctp_snap_field_find(snap, "t.nested"), 1)
			.u64,
		670);
	/* tid 102 has no t.b: absent. */
	assert_int_equal(ctp_snap_value(snap, total, 2).type, CTP_VALUE_ABSENT);
	/* Stored nowhere: the reader's own value is absent. */
	assert_int_equal(ctp_snap_get(snap, total, 0).type, CTP_VALUE_ABSENT);
	/* Host: 2 * 1 MiB. */
	v = ctp_snap_value(snap, ctp_snap_field_find(snap, "h.mem2"), 0);
	assert_int_equal(v.u64, 2097152);

	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	/* app, from the group's sums: a 1003, b 73 (5/6), c 60, d 14:
	 * 1003 + 73 + max(60, 14) = 1136 -- not the sum of per-thread
	 * maxima (7 + 50 + 0 + 3 + 1 + 2 = 63). */
	const struct ctp_agg *a = agg(g, "t.total", 1);
	assert_int_equal(a->v.type, CTP_TYPE_U64);
	assert_int_equal(a->v.u64, 1136);
	assert_int_equal(a->n_measured, 5);
	EXPECT_CELL(g, "t.total", 1, "1.14 us (5/6)");
	EXPECT_CELL(g, "t.net", 1, "930 ns (5/6)");
	/* nested: 1136 + 2 * 1003. */
	assert_int_equal(agg(g, "t.nested", 1)->v.u64, 3142);
	/* db: t.a never measured: every formula over it is absent. */
	EXPECT_CELL(g, "t.total", 2, "-");
	EXPECT_CELL(g, "t.nested", 2, "-");
	assert_int_equal(agg(g, "t.total", 2)->n_measured, 0);
	/* Process scope: from the deduplicated sum, 2 * 1050. */
	EXPECT_CELL(g, "p.faults2", 1, "2,100");
	EXPECT_CELL(g, "p.faults2", 2, "-");
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

static void test_compose(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "compose.ctprof");
	struct ctp_groups *g = group(snap, "cgroup,pcomm", false, NULL, 0);
	static const char *const keys[] = {
		"-|-", "/system.slice/app@{N}.service|app",
		"/user.slice/user-{N}.slice/session-{N}.scope|db"};
	expect_keys(g, keys, 3);
	assert_string_equal(ctp_groups_key_title(g, 0), "CGROUP");
	assert_string_equal(ctp_groups_key_title(g, 1), "PCOMM");
	ctp_groups_free(g);

	/* Raw names and paths: every (cgroup, comm) pair of its own. */
	g = group(snap, "cgroup,comm", true, NULL, 0);
	static const char *const raw[] = {
		"-|-",
		"/system.slice/app@1.service|app",
		"/system.slice/app@1.service|worker-0",
		"/system.slice/app@1.service|worker-1",
		"/system.slice/app@1.service|worker-2",
		"/system.slice/app@2.service|app",
		"/system.slice/app@2.service|worker-0",
		"/user.slice/user-1000.slice/session-3.scope|db",
		"/user.slice/user-1000.slice/session-4.scope|worker-7"};
	expect_keys(g, raw, N(raw));
	ctp_groups_free(g);

	/* pcomm inside comm: worker-{N} splits by process name. */
	g = group(snap, "comm,pcomm", false, NULL, 0);
	EXPECT_CELL(g, "t.cnt", find_key(g, "worker-{N}|app"), "27 (3/4)");
	EXPECT_CELL(g, "t.cnt", find_key(g, "worker-{N}|db"), "-");
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

static void test_none(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "none.ctprof");
	struct ctp_groups *g = group(snap, "none", false, NULL, 0);
	static const char *const keys[] = {"-|-|0",
					   "app|app|0",
					   "app|app|1",
					   "app|worker-{N}|0",
					   "app|worker-{N}|1",
					   "app|worker-{N}|2",
					   "app|worker-{N}|3",
					   "db|db|0",
					   "db|worker-{N}|0"};
	expect_keys(g, keys, N(keys));
	assert_string_equal(ctp_groups_key_title(g, 2), "#");
	/* Occurrences follow (tgid, tid): app|worker-{N}|3 is tid 201. */
	const struct ctp_group *gr = ctp_groups_at(g, 6);
	assert_int_equal(gr->n_threads, 1);
	assert_int_equal(
		ctp_snap_table(snap, CTP_SCOPE_THREAD)->tid[gr->threads[0]],
		201);
	EXPECT_CELL(g, "t.cnt", 6, "2");
	ctp_groups_free(g);

	/* Composed with cgroup, the occurrence counts within the cgroup. */
	g = group(snap, "cgroup,none", true, NULL, 0);
	assert_int_equal(ctp_groups_n_key(g), 4);
	find_key(g, "/system.slice/app@1.service|app|worker-0|0");
	find_key(g, "/system.slice/app@2.service|app|worker-0|0");
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* Twelve burn-N threads: occurrences order as numbers (9 before 10). */
static void test_none_numeric(void **state)
{
	(void)state;
	struct trow t[13];
	static const char *const names[] = {
		"burner", "burn-0",  "burn-1", "burn-2", "burn-3",
		"burn-4", "burn-5",  "burn-6", "burn-7", "burn-8",
		"burn-9", "burn-10", "burn-11"};
	for (uint32_t i = 0; i < 13; i++)
		t[i] = (struct trow){500, 500 + i, names[i], -1, {U(i)}};
	static const struct prow p[] = {{500, "burner", {ABSENT}}};
	struct dataset ds = {t, 13, p, 1, NULL, NULL, 0, true};
	struct ctp_snap *snap = snapshot(&ds, "burn.ctprof");
	struct ctp_groups *g = group(snap, "none", false, NULL, 0);
	char key[64], val[16];
	assert_int_equal(ctp_groups_count(g), 13);
	for (size_t i = 0; i < 12; i++) {
		snprintf(key, sizeof(key), "burner|burn-{N}|%zu", i);
		assert_int_equal(find_key(g, key), i);
		/* The i-th burn thread by tid has count i + 1. */
		snprintf(val, sizeof(val), "%zu", i + 1);
		EXPECT_CELL(g, "t.cnt", i, val);
	}
	ctp_groups_free(g);

	/* comm: one burn-{N} group of 12 threads in 1 process. */
	g = group(snap, "comm", false, NULL, 0);
	size_t i = find_key(g, "burn-{N}");
	assert_int_equal(ctp_groups_at(g, i)->n_threads, 12);
	assert_int_equal(ctp_groups_at(g, i)->n_processes, 1);
	EXPECT_CELL(g, "t.cnt", i, "78"); /* 1 + ... + 12 */
	ctp_groups_free(g);

	/* The v1 path field is registered but never measured here: every
	 * thread's v1 path is unknown, one group. */
	g = group(snap, "cgroup:cpu", false, NULL, 0);
	static const char *const v1[] = {"-"};
	expect_keys(g, v1, 1);
	assert_int_equal(ctp_groups_at(g, 0)->n_threads, 13);
	ctp_groups_free(g);
	/* No such field at all: the v1 axis says what it looks for. */
	struct ctp_group_spec spec = {0};
	char text[] = "cgroup:memory", err[256];
	assert_int_equal(ctp_group_spec_parse(text, &spec, err, sizeof(err)),
			 0);
	assert_int_equal(ctp_groups_new(snap, &spec, &g, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err,
			       "no thread path field of cgroup v1 hierarchy "
			       "memory"));
	ctp_snap_free(snap);
}

static void test_flatten(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "flatten.ctprof");
	const char *const globs[] = {"/user.slice/*"};
	struct ctp_groups *g = group(snap, "cgroup", false, globs, 1);
	static const char *const keys[] = {"-", "/system.slice/app@{N}.service",
					   "/user.slice/*"};
	expect_keys(g, keys, 3);
	assert_int_equal(ctp_groups_at(g, 2)->n_threads, 2);
	assert_int_equal(ctp_groups_at(g, 2)->n_cgroups, 2);
	ctp_groups_free(g);

	/* Raw paths, one glob per service: the rest stay apart. */
	const char *const g2[] = {"/system.slice/app@*"};
	g = group(snap, "cgroup", true, g2, 1);
	static const char *const keys2[] = {
		"-", "/system.slice/app@*",
		"/user.slice/user-1000.slice/session-3.scope",
		"/user.slice/user-1000.slice/session-4.scope"};
	expect_keys(g, keys2, 4);
	EXPECT_CELL(g, "t.cnt", 1, "38 (5/6)");
	ctp_groups_free(g);

	/* The v1 hierarchy axis: paths from cgroup.v1.cpu-cpuacct.path,
	 * normalized and flattened like v2 paths; named by the hierarchy or
	 * by one of its controllers. */
	static const char *const v1[] = {"-", "/app", "/db-{N}"};
	static const char *const v1names[] = {"cpu-cpuacct", "cpuacct", "cpu",
					      "CPU"};
	for (size_t i = 0; i < N(v1names); i++) {
		char axis[64];
		snprintf(axis, sizeof(axis), "cgroup:%s", v1names[i]);
		g = group(snap, axis, false, NULL, 0);
		expect_keys(g, v1, 3);
		assert_string_equal(ctp_groups_key_title(g, 0),
				    "CGROUP:cpu-cpuacct");
		ctp_groups_free(g);
	}
	/* Not a controller of it, only a prefix of one. */
	struct ctp_group_spec spec = {0};
	char text[] = "cgroup:cpuacc", err[256];
	assert_int_equal(ctp_group_spec_parse(text, &spec, err, sizeof(err)),
			 0);
	assert_int_equal(ctp_groups_new(snap, &spec, &g, err, sizeof(err)),
			 -EINVAL);
	const char *const g3[] = {"/db*"};
	g = group(snap, "cgroup:cpu", false, g3, 1);
	static const char *const v1f[] = {"-", "/app", "/db*"};
	expect_keys(g, v1f, 3);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* Two snapshots grouped alike join by key. */
static void test_join(void **state)
{
	(void)state;
	struct trow t[N(main_threads) + 1];
	struct prow p[N(main_procs) + 1];
	size_t nt = 0, np = 0;
	/* Candidate: db gone, a new process 600 "newproc". */
	for (size_t i = 0; i < N(main_threads); i++)
		if (main_threads[i].tgid != 300)
			t[nt++] = main_threads[i];
	for (size_t i = 0; i < N(main_procs); i++)
		if (main_procs[i].tgid != 300)
			p[np++] = main_procs[i];
	t[nt++] = (struct trow){600, 600, "newproc", 0, {U(3)}};
	p[np++] = (struct prow){600, "newproc", {ABSENT}};
	struct dataset cand = {
		t, nt, p, np, main_cgroups, main_usage, N(main_cgroups)};
	struct ctp_snap *bs = snapshot(&main_set, "base.ctprof");
	struct ctp_snap *cs = snapshot(&cand, "cand.ctprof");
	struct ctp_groups *b = group(bs, "pcomm", false, NULL, 0);
	struct ctp_groups *c = group(cs, "pcomm", false, NULL, 0);
	static const char *const ck[] = {"-", "app", "newproc"};
	expect_keys(c, ck, 3);

	const struct ctp_group *x =
		ctp_groups_find(c, ctp_groups_at(b, 1)->key);
	assert_ptr_equal(x, ctp_groups_at(c, 1)); /* app on both sides */
	assert_null(ctp_groups_find(c, ctp_groups_at(b, 2)->key)); /* gone */
	assert_null(ctp_groups_find(b, ctp_groups_at(c, 2)->key)); /* new */
	/* The unknown-name group joins the unknown-name group. */
	assert_ptr_equal(ctp_groups_find(c, ctp_groups_at(b, 0)->key),
			 ctp_groups_at(c, 0));
	/* Fields join by name. */
	const struct ctp_snap_field *fb = ctp_snap_field_find(bs, "t.cnt"),
				    *fc = ctp_snap_field_find(cs, "t.cnt");
	const struct ctp_agg *ab, *ac;
	assert_int_equal(ctp_groups_aggregate(b, fb, &ab), 0);
	assert_int_equal(ctp_groups_aggregate(c, fc, &ac), 0);
	assert_int_equal(ab[1].v.u64, ac[1].v.u64);
	/* A field of another snapshot is refused. */
	assert_int_equal(ctp_groups_aggregate(c, fb, &ab), -EINVAL);
	ctp_groups_free(b);
	ctp_groups_free(c);
	ctp_snap_free(bs);
	ctp_snap_free(cs);
}

/* Sorting aggregates: absent lowest, ranges by midpoint, sets by count. */
static void test_agg_cmp(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot(&main_set, "cmp.ctprof");
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	long double x;
	/* nice: "-" absent, app -2..19 (midpoint 8.5), db -20. */
	assert_true(ctp_agg_cmp(agg(g, "t.nice", 0), agg(g, "t.nice", 2)) < 0);
	assert_true(ctp_agg_cmp(agg(g, "t.nice", 1), agg(g, "t.nice", 2)) > 0);
	assert_true(ctp_agg_number(agg(g, "t.nice", 1), &x));
	assert_true(x == 8.5L);
	assert_false(ctp_agg_number(agg(g, "t.nice", 0), &x));
	/* cpus: app 10 CPUs < db 64. */
	assert_true(ctp_agg_cmp(agg(g, "t.cpus", 1), agg(g, "t.cpus", 2)) < 0);
	assert_int_equal(ctp_agg_cmp(agg(g, "t.cnt", 1), agg(g, "t.cnt", 1)),
			 0);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* Sums past the type's range saturate, and formulas over them are absent. */
static void test_saturation(void **state)
{
	(void)state;
	struct trow t[] = {
		{700,
		 700,
		 "big",
		 -1,
		 {U(UINT64_MAX), [T_A] = U(UINT64_MAX), [T_B] = U(1),
		  [T_C] = U(0), [T_D] = U(0)}},
		{700,
		 701,
		 "big",
		 -1,
		 {U(2), [T_A] = U(1), [T_B] = U(1), [T_C] = U(0),
		  [T_D] = U(0)}},
	};
	struct prow p[] = {{700, "big", {ABSENT}}};
	struct dataset ds = {t, 2, p, 1, NULL, NULL, 0, true};
	struct ctp_snap *snap = snapshot(&ds, "sat.ctprof");
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	const struct ctp_agg *a = agg(g, "t.cnt", 0);
	assert_true(a->saturated);
	assert_true(a->v.u64 == UINT64_MAX);
	char buf[64];
	ctp_render_agg(CTP_UNIT_COUNT, a, buf, sizeof(buf));
	assert_string_equal(buf, ">18,446,744,073,709,551,615");
	/* t.a saturates: total is absent rather than wrong. */
	assert_int_equal(agg(g, "t.total", 0)->v.type, CTP_VALUE_ABSENT);
	/* Per row, UINT64_MAX + 1 + 0 does not fit a u64: absent too. */
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, "t.total");
	assert_int_equal(ctp_snap_value(snap, f, 0).type, CTP_VALUE_ABSENT);
	/* ... and a - b = UINT64_MAX - 1 does not fit an i64. */
	f = ctp_snap_field_find(snap, "t.net");
	assert_int_equal(ctp_snap_value(snap, f, 0).type, CTP_VALUE_ABSENT);
	assert_int_equal(ctp_snap_value(snap, f, 1).i64, 0);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* ---- Derived fields: registration and the reader's checks ---- */

static void test_register(void **state)
{
	(void)state;
	struct ctp_capture *cap;
	const char *why;
	int term;
	assert_int_equal(ctp_capture_new(1, &cap), 0);
	for (int i = 0; i < N_PLAIN; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &plain[i]), i);

	struct ctp_derived_desc d = derived[0];
	int id = ctp_registry_add_derived(&cap->reg, 0, &d, &why, &term);
	assert_int_equal(id, N_PLAIN);
	/* The same again: the same handle; different: -EEXIST. */
	assert_int_equal(
		ctp_registry_add_derived(&cap->reg, 0, &d, &why, &term), id);
	d.terms[1].coef = 2;
	assert_int_equal(
		ctp_registry_add_derived(&cap->reg, 0, &d, &why, &term),
		-EEXIST);
	/* An ordinary field of that name is another description. */
	struct ctp_field_desc fd = d.field;
	assert_int_equal(ctp_registry_add(&cap->reg, 0, &fd), -EEXIST);

#define REFUSE(expect, bad_term, ...)                                          \
	do {                                                                   \
		struct ctp_derived_desc x = derived[0];                        \
		x.field.name = "t.x";                                          \
		__VA_ARGS__;                                                   \
		assert_int_equal(ctp_registry_add_derived(&cap->reg, 0, &x,    \
							  &why, &term),        \
				 expect);                                      \
		assert_int_equal(term, bad_term);                              \
	} while (0)
	REFUSE(-ENOENT, 1, x.terms[1].field = "t.nope");
	REFUSE(-EINVAL, 0, x.terms[0].coef = 0);
	REFUSE(-EINVAL, 0, x.terms[0].coef = -1);	   /* u64 result */
	REFUSE(-EINVAL, 2, x.terms[2].field = "p.faults"); /* scope */
	REFUSE(-EINVAL, 2, x.terms[2].field = "t.nice");   /* range */
	REFUSE(-EINVAL, 2, x.terms[2].field = "t.state");  /* not a number */
	REFUSE(-EINVAL, -1, x.n_terms = 0);
	REFUSE(-EINVAL, -1, x.n_terms = CTP_DERIVE_MAX_TERMS + 1);
	REFUSE(-EINVAL, -1, x.field.type = CTP_TYPE_STRING;
	       x.field.kind = CTP_KIND_CATEGORICAL;
	       x.field.rule = CTP_RULE_MODE);
	REFUSE(-EINVAL, -1, x.size = 8);
	REFUSE(-EINVAL, -1, x.field.name = "Bad Name");

	/* Nesting: four deep is fine, a fifth level is refused. */
	const char *prev = "t.a";
	static const char *const names[] = {"t.d1", "t.d2", "t.d3", "t.d4",
					    "t.d5"};
	for (int i = 0; i < 5; i++) {
		struct ctp_derived_desc n = DERIVED(
			names[i], CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
			CTP_KIND_COUNTER, CTP_RULE_SUM, 1, TERM(prev, 1, 0));
		int r = ctp_registry_add_derived(&cap->reg, 0, &n, &why, &term);
		if (i < 4)
			assert_true(r >= 0);
		else
			assert_int_equal(r, -EINVAL);
		prev = names[i];
	}
	ctp_capture_free(cap);
}

/* A capture whose derived field was tampered with after registration: the
 * writer writes it as is, the reader must refuse it with `msg`. */
static void refused(struct ctp_capture *cap, const char *name, const char *msg)
{
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap = NULL;
	if (write_capture(cap, name, path, sizeof(path), err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	int r = ctp_snap_open(path, 1ull << 30, &snap, err, sizeof(err));
	if (r != -EINVAL || !strstr(err, msg))
		fail_msg("%s: %d '%s', expected -EINVAL with '%s'", name, r,
			 r < 0 ? err : "", msg);
	ctp_capture_free(cap);
}

static struct ctp_field *field(struct ctp_capture *cap, int id)
{
	return ctp_registry_get(&cap->reg, (uint32_t)id);
}

static void test_reader_checks(void **state)
{
	(void)state;
	struct ctp_capture *cap;

	cap = build_capture(&main_set);
	field(cap, D_TOTAL)->terms[0].input = D_NET;
	refused(cap, "later.ctprof", "does not come before t.total");

	cap = build_capture(&main_set);
	field(cap, D_TOTAL)->terms[1].coef = 0;
	refused(cap, "coef.ctprof", "coef: expected a non-zero");

	cap = build_capture(&main_set);
	field(cap, D_TOTAL)->terms[0].input = P_FAULTS;
	refused(cap, "scope.ctprof", "is not a u64 or i64 field of scope");

	cap = build_capture(&main_set);
	field(cap, D_TOTAL)->terms[0].input = T_NICE;
	refused(cap, "range.ctprof", "not reduced to one value");

	cap = build_capture(&main_set);
	field(cap, D_TOTAL)->type = CTP_TYPE_BOOL;
	refused(cap, "type.ctprof", "is not u64 or i64");

	/* Values stored for a derived field. */
	cap = build_capture(&main_set);
	assert_int_equal(
		ctp_table_set(&cap->threads[0], 0,
			      CTP_THREAD_IDENT + field(cap, D_TOTAL)->col, 5),
		0);
	refused(cap, "column.ctprof", "derived field t.total has a column");
	cap = build_capture(&main_set);
	assert_int_equal(ctp_table_set(&cap->host, 0,
				       CTP_HOST_IDENT + field(cap, D_HOST)->col,
				       5),
			 0);
	refused(cap, "hostval.ctprof", "derived field h.mem2 has a value");

	/* Nesting five deep (the registry refuses to build it, so chain
	 * existing fields by hand). */
	cap = build_capture(&main_set);
	struct ctp_derived_desc n[3] = {
		DERIVED("t.e1", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
			CTP_KIND_COUNTER, CTP_RULE_SUM, 1,
			TERM("t.nested", 1, 0)),
		DERIVED("t.e2", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
			CTP_KIND_COUNTER, CTP_RULE_SUM, 1, TERM("t.e1", 1, 0)),
		DERIVED("t.e3", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
			CTP_KIND_COUNTER, CTP_RULE_SUM, 1, TERM("t.a", 1, 0)),
	};
	const char *why;
	int term, ids[3];
	for (int i = 0; i < 3; i++)
		assert_true((ids[i] = ctp_registry_add_derived(
				     &cap->reg, 0, &n[i], &why, &term)) >= 0);
	/* total 1, nested 2, e1 3, e2 4: e3 on e2 is 5. */
	field(cap, ids[2])->terms[0].input = (uint32_t)ids[1];
	refused(cap, "deep.ctprof", "nest more than 4 deep");
}

/* The snapshot the Python decoder checks (tests/decode_snapshot.py). */
static int write_derived_sample(const char *path)
{
	struct ctp_capture *cap = build_capture(&main_set);
	char err[512];
	int r = sb_write(cap, path, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "write %s: %s\n", path, err);
	ctp_capture_free(cap);
	return r < 0 ? 1 : 0;
}

/* ---- show --group-by ---- */

/* Run `show` in-process; stdout into a malloc'ed string. */
static int run_show(char **out, char **errout, ...)
{
	char *argv[24], po[PATH_MAX + 16], pe[PATH_MAX + 16];
	int argc = 0;
	va_list ap;
	argv[argc++] = "show";
	va_start(ap, errout);
	for (char *a; (a = va_arg(ap, char *)) && argc < 23;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(po, sizeof(po), "%s/show.out", tmp);
	snprintf(pe, sizeof(pe), "%s/show.err", tmp);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = ctp_cmd_show(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	assert_int_equal(e2e_read_file(po, out, NULL), 0);
	assert_int_equal(e2e_read_file(pe, errout, NULL), 0);
	return rc;
}

/* The part of show's output from the "Counts:" line on. */
static const char *tables(const char *out)
{
	const char *p = strstr(out, "\nCounts:");
	assert_non_null(p);
	return p + 1;
}

static void expect_text(const char *got, const char *want)
{
	if (strcmp(got, want))
		fail_msg("show printed:\n%s\nexpected:\n%s", got, want);
}

static void test_show(void **state)
{
	(void)state;
	char path[PATH_MAX], err[512], *out, *eo;
	struct ctp_capture *cap = build_capture(&main_set);
	assert_int_equal(write_capture(cap, "show.ctprof", path, sizeof(path),
				       err, sizeof(err)),
			 0);
	ctp_capture_free(cap);

	int rc = run_show(&out, &eo, path, "--group-by", "pcomm", "--fields",
			  "t.cnt,t.state,t.cpus,t.total,p.faults", NULL);
	assert_int_equal(rc, 0);
	expect_text(tables(out),
		    "Counts: 9 threads, 4 processes, 4 cgroups, 25 fields, "
		    "1 plugins\n"
		    "\n"
		    "Processes grouped by pcomm: 3 groups of 4 processes, "
		    "1 with none of these fields left out\n"
		    "  PCOMM  THREADS  PROCS  p.faults\n"
		    "  -            1      1         4\n"
		    "  app          6      2     1,050\n"
		    "\n"
		    "Threads grouped by pcomm: 3 groups of 9 threads\n"
		    "  PCOMM  THREADS  PROCS     t.cnt  t.state  "
		    "t.cpus                           t.total\n"
		    "  -            1      1         0  -        "
		    "-                                      -\n"
		    "  app          6      2  38 (5/6)  S        "
		    "mixed 0-5,8-11 (10) (5/6)  1.14 us (5/6)\n"
		    "  db           2      1   7 (1/2)  S (1/2)  "
		    "0-63 (64) (1/2)                        -\n");
	free(out);
	free(eo);

	/* Sorted and limited: the sort field's table by it, the limit on
	 * both. */
	rc = run_show(&out, &eo, path, "--group-by", "pcomm", "--fields",
		      "t.cnt,p.faults", "--sort", "t.cnt", "--limit", "2",
		      NULL);
	assert_int_equal(rc, 0);
	expect_text(tables(out),
		    "Counts: 9 threads, 4 processes, 4 cgroups, 25 fields, "
		    "1 plugins\n"
		    "\n"
		    "Processes grouped by pcomm: 3 groups of 4 processes, "
		    "1 with none of these fields left out\n"
		    "  PCOMM  THREADS  PROCS  p.faults\n"
		    "  -            1      1         4\n"
		    "  app          6      2     1,050\n"
		    "\n"
		    "Threads grouped by pcomm: 3 groups of 9 threads, showing "
		    "2, by t.cnt (descending, absent last)\n"
		    "  PCOMM  THREADS  PROCS     t.cnt\n"
		    "  app          6      2  38 (5/6)\n"
		    "  db           2      1   7 (1/2)\n");
	free(out);
	free(eo);

	/* Composed with cgroup, flattened, threads only; cgroup fields get
	 * their own table. */
	rc = run_show(&out, &eo, path, "--group-by", "cgroup,pcomm",
		      "--flatten", "/user.slice/*", "--fields", "t.cnt,c.usage",
		      "--threads", NULL);
	assert_int_equal(rc, 0);
	expect_text(tables(out),
		    "Counts: 9 threads, 4 processes, 4 cgroups, 25 fields, "
		    "1 plugins\n"
		    "\n"
		    "Threads grouped by cgroup,pcomm: 3 groups of 9 threads\n"
		    "  CGROUP                         PCOMM  THREADS  PROCS  "
		    "   t.cnt\n"
		    "  -                              -            1      1  "
		    "       0\n"
		    "  /system.slice/app@{N}.service  app          6      2  "
		    "38 (5/6)\n"
		    "  /user.slice/*                  db           2      1  "
		    " 7 (1/2)\n");
	free(out);
	free(eo);

	rc = run_show(&out, &eo, path, "--group-by", "cgroup", "--fields",
		      "c.usage", NULL);
	assert_int_equal(rc, 0);
	/* The group without c.usage is left out, and said to be. */
	assert_non_null(strstr(out, "Cgroups grouped by cgroup: 3 groups of "
				    "4 cgroups, 1 with none of these fields "
				    "left out\n"
				    "  CGROUP                                  "
				    "      THREADS  PROCS      c.usage\n"
				    "  /system.slice/app@{N}.service           "
				    "            6      2       300 us\n"));
	assert_non_null(strstr(out,
			       "  /user.slice/user-{N}.slice/session-"
			       "{N}.scope        2      1  50 us (1/2)\n"));
	free(out);
	free(eo);

	/* Plain show computes derived fields per row, and sorts by them:
	 * 103 has 400 + 40 + max(2, 3), 101 200 + 20 + max(50, 1). */
	rc = run_show(&out, &eo, path, "--threads", "--fields", "t.total",
		      "--sort", "t.total", "--limit", "2", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(
		strstr(out, "  TGID  TID  COMM      CGROUP                 "
			    "      t.total\n"
			    "   100  103  worker-2  /system.slice/app@1.service"
			    "   443 ns\n"
			    "   100  101  worker-0  /system.slice/app@1.service"
			    "   270 ns\n"));
	free(out);
	free(eo);

	/* Rows without any selected field are left out and counted: of the
	 * 9 threads, 5 have t.total. */
	rc = run_show(&out, &eo, path, "--threads", "--fields", "t.total",
		      NULL);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\nThreads: 9, 4 with none of these "
				    "fields left out\n"));
	free(out);
	free(eo);

	/* Usage errors. */
	rc = run_show(&out, &eo, path, "--group-by", "bogus", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	assert_non_null(strstr(eo, "unknown axis 'bogus'"));
	free(out);
	free(eo);
	rc = run_show(&out, &eo, path, "--flatten", "/x/*", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	assert_non_null(strstr(eo, "need --group-by"));
	free(out);
	free(eo);
	rc = run_show(&out, &eo, path, "--group-by", "cgroup:memory", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	assert_non_null(strstr(eo, "cgroup v1 hierarchy memory"));
	free(out);
	free(eo);
}

/* ---- The taskstats plugin's derived field, through the real binary ---- */

static const char *const offcpu_terms[][2] = {
	{"taskstats.cpu_delay_total", "0"},
	{"taskstats.blkio_delay_total", "0"},
	{"taskstats.freepages_delay_total", "0"},
	{"taskstats.compact_delay_total", "0"},
	{"taskstats.wpcopy_delay_total", "0"},
	{"taskstats.irq_delay_total", "0"},
	{"taskstats.swapin_delay_total", "1"},
	{"taskstats.thrashing_delay_total", "1"},
};

static int capture_with_taskstats(const char *proc, const char *tag,
				  struct ctp_snap **snap)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], err[512];
	FILE *f;
	if (e2e_pathf(cfg, sizeof(cfg), "%s/%s.yaml", tmp, tag) < 0 ||
	    e2e_pathf(out, sizeof(out), "%s/%s.ctprof", tmp, tag) < 0 ||
	    e2e_pathf(log, sizeof(log), "%s/%s.log", tmp, tag) < 0)
		return -ENAMETOOLONG;
	f = fopen(cfg, "we");
	if (!f)
		return -errno;
	fprintf(f, "plugin_dirs: [\"%s\"]\n", CTP_TEST_PLUGIN_DIR);
	if (proc)
		fprintf(f, "roots:\n  proc: \"%s\"\n", proc);
	fprintf(f, "plugins:\n  procfs-stat:\n    enabled: true\n"
		   "  taskstats:\n    enabled: true\n    required: true\n");
	if (fclose(f))
		return -EIO;
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	int rc = e2e_run(args, log, log);
	if (rc != 0) {
		e2e_show_file("ctprof-core", log);
		return -EIO;
	}
	if (ctp_snap_open(out, 1ull << 32, snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -EINVAL;
	}
	return 0;
}

static void test_taskstats_registered(void **state)
{
	(void)state;
	struct ctp_snap *snap;
	/* The fixture tree is not this kernel's /proc: taskstats queries
	 * nothing, so every input, and the total, is absent. */
	assert_int_equal(capture_with_taskstats(CTP_TEST_FIXTURES "/proc",
						"tsfix", &snap),
			 0);
	const struct ctp_snap_field *f =
		ctp_snap_field_find(snap, "taskstats.offcpu_delay_total");
	assert_non_null(f);
	assert_string_equal(f->plugin, "taskstats");
	assert_int_equal(f->scope, CTP_SCOPE_THREAD);
	assert_int_equal(f->type, CTP_TYPE_U64);
	assert_int_equal(f->unit, CTP_UNIT_NS);
	assert_int_equal(f->n_terms, 8);
	for (size_t i = 0; i < 8; i++) {
		assert_string_equal(
			ctp_snap_fields(snap)[f->terms[i].input].name,
			offcpu_terms[i][0]);
		assert_int_equal(f->terms[i].coef, 1);
		assert_int_equal(f->terms[i].max_set, atoi(offcpu_terms[i][1]));
	}
	struct ctp_groups *g = group(snap, "pcomm", false, NULL, 0);
	assert_true(ctp_groups_count(g) > 0);
	for (size_t i = 0; i < ctp_groups_count(g); i++) {
		const struct ctp_agg *a =
			agg(g, "taskstats.offcpu_delay_total", i);
		assert_int_equal(a->v.type, CTP_VALUE_ABSENT);
		EXPECT_CELL(g, "taskstats.offcpu_delay_total", i, "-");
	}
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* ---- Live: the formula against the kernel's own numbers ---- */

/* The formula over n inputs: max_set[i] 0 adds, 1 takes the larger. */
static uint64_t offcpu(const uint64_t *in, const int *max_set, size_t n)
{
	uint64_t s = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!max_set[i])
			s += in[i];
		else if (in[i] > m)
			m = in[i];
	}
	return s + m;
}

static int live_taskstats(void)
{
	const char *knob = "/proc/sys/kernel/task_delayacct";
	char *old = NULL;
	struct ctp_snap *snap = NULL;
	int r;

	if (e2e_read_file(knob, &old, NULL) < 0 ||
	    e2e_write_file(knob, "1\n", 2) < 0) {
		fprintf(stderr, "SKIP: cannot switch %s on\n", knob);
		free(old);
		return SKIP;
	}
	r = capture_with_taskstats(NULL, "tslive", &snap);
	e2e_write_file(knob, old, strlen(old));
	free(old);
	if (r < 0)
		return 1;

	const struct ctp_snap_field *f = ctp_snap_field_find(
					    snap,
					    "taskstats.offcpu_delay_total"),
				    *in[8];
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	/* All eight inputs, or all but irq on a kernel without
	 * CONFIG_IRQ_TIME_ACCOUNTING (which never charges irq delay). */
	size_t nt = f->n_terms;
	int sets[8];
	if (nt != 8 && nt != 7)
		return 1;
	for (size_t i = 0, k = 0; i < 8; i++) {
		if (nt == 7 &&
		    !strcmp(offcpu_terms[i][0], "taskstats.irq_delay_total"))
			continue;
		in[k] = ctp_snap_field_find(snap, offcpu_terms[i][0]);
		sets[k] = atoi(offcpu_terms[i][1]);
		if (!in[k] || f->terms[k].input != in[k]->index ||
		    f->terms[k].max_set != sets[k]) {
			fprintf(stderr, "offcpu term %zu is not %s\n", k,
				offcpu_terms[i][0]);
			return 1;
		}
		k++;
	}
	size_t full = 0, nonzero = 0, bad = 0;
	for (size_t row = 0; row < t->rows; row++) {
		uint64_t v[8];
		bool all = true;
		for (size_t i = 0; i < nt; i++) {
			struct ctp_value x = ctp_snap_get(snap, in[i], row);
			all &= x.type == CTP_TYPE_U64;
			v[i] = x.u64;
		}
		struct ctp_value got = ctp_snap_value(snap, f, row);
		if (!all) {
			bad += got.type != CTP_VALUE_ABSENT;
			continue;
		}
		full++;
		nonzero += offcpu(v, sets, nt) > 0;
		if (got.type != CTP_TYPE_U64 ||
		    got.u64 != offcpu(v, sets, nt)) {
			fprintf(stderr, "row %zu: %" PRIu64 " != %" PRIu64 "\n",
				row, got.u64, offcpu(v, sets, nt));
			bad++;
		}
	}
	/* Per group: the formula over the members' sums. */
	struct ctp_group_spec spec = {0};
	char text[] = "pcomm", err[256];
	struct ctp_groups *g = NULL;
	if (ctp_group_spec_parse(text, &spec, err, sizeof(err)) < 0 ||
	    ctp_groups_new(snap, &spec, &g, err, sizeof(err)) < 0)
		return 1;
	const struct ctp_agg *col;
	if (ctp_groups_aggregate(g, f, &col) < 0)
		return 1;
	for (size_t i = 0; i < ctp_groups_count(g); i++) {
		const struct ctp_group *gr = ctp_groups_at(g, i);
		uint64_t sum[8] = {0};
		bool all = true;
		for (uint32_t k = 0; k < gr->n_threads; k++)
			for (size_t j = 0; j < nt; j++) {
				struct ctp_value x = ctp_snap_get(
					snap, in[j], gr->threads[k]);
				if (x.type == CTP_TYPE_U64)
					sum[j] += x.u64;
				else
					all = false;
			}
		if (all && (col[i].v.type != CTP_TYPE_U64 ||
			    col[i].v.u64 != offcpu(sum, sets, nt))) {
			fprintf(stderr, "group %s: wrong total\n",
				gr->key[0] ? gr->key[0] : "-");
			bad++;
		}
	}
	fprintf(stderr,
		"%zu threads, %zu with every input (%zu non-zero), %zu "
		"wrong\n",
		(size_t)t->rows, full, nonzero, bad);
	ctp_groups_free(g);
	ctp_snap_free(snap);
	if (!full) {
		fprintf(stderr, "SKIP: no thread has every delay family "
				"(no CAP_NET_ADMIN or no taskstats?)\n");
		return SKIP;
	}
	return bad || !nonzero ? 1 : 0;
}

/* ---- Main ---- */

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("group", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-derived")) {
		snprintf(tmp, sizeof(tmp), "/tmp");
		return write_derived_sample(argv[2]);
	}
	if (argc == 2 && !strcmp(argv[1], "--live-taskstats")) {
		if (e2e_tmpdir("group-live", tmp, sizeof(tmp)) < 0)
			return 1;
		int r = live_taskstats();
		e2e_rm_rf(tmp);
		return r;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcomm),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_mode_ties),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_process_dedup),
		cmocka_unit_test(test_derived),
		cmocka_unit_test(test_compose),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_none_numeric),
		cmocka_unit_test(test_flatten),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_agg_cmp),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_reader_checks),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_taskstats_registered),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
