/* SPDX-License-Identifier: MIT */
/*
 * Counters over time (core/analysis/series.c) on hand-built captures
 * written by the real writer, 10 s apart: t.cpu a thread counter in ticks
 * (100 a second), t.begin the start time (task identity), x.cpu the
 * exited table's CPU in us, paired with t.cpu by a view's column. Each
 * case feeds a sequence and reads the OpenMetrics the exporters write
 * (ctp_om_write with the series): a group's counter is the running sum of
 * its members' increases, exited members' work included, and no series
 * ever goes down (checked after every feed, over every counter line),
 * through an exit, a rename that moves a member to another group, a
 * reset, the --top cut and the TTL.
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
#include <sys/stat.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "group.h"
#include "model.h"
#include "openmetrics.h"
#include "series.h"
#include "snapbuild.h"
#include "view.h"

static char tmp[PATH_MAX];

enum { F_CPU, F_START, F_XCPU, F_PIO, NF };

#define SEC  1000000000ull
#define CPU  "ctprof_t_cpu_seconds_total"
#define XT   "ctprof_exited_tasks_total"
#define ALL  "ctprof_t_all_seconds_total"
#define PIO  "ctprof_p_io_seconds_total"
#define MAXT 8

struct th {
	uint32_t tgid, tid;
	const char *pcomm;
	uint64_t cpu, start;
	uint64_t pio; /* p.io of its process (its first thread's) */
};

struct ex {
	uint32_t tgid, tid;
	const char *comm;
	uint64_t us; /* x.cpu at exit */
	bool during; /* exited while the capture was taken (after its start) */
};

struct cap {
	struct th t[MAXT];
	struct ex x[MAXT];
};

static int seq;

/* Capture k (boot 1000 + 10 k s) of threads c->t (tgid 0 ends) and exits
 * c->x (tid 0 ends); its exits happen in the interval before it. */
static struct ctp_snap *build(int k, const struct cap *c)
{
	const struct ctp_field_desc d[NF] = {
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[F_XCPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_PIO] = {"p.io", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
	};
	struct ctp_capture *cap = sb_capture("t");
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap;
	uint64_t at = (1000 + 10 * (uint64_t)k) * SEC;
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	/* t.all: a derived sum of t.cpu (as procfs.cpu_time is of utime and
	 * stime), paired through its term. */
	const struct ctp_derived_desc all = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_derived_desc),
		.field = {"t.all", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		.n_terms = 1,
		.terms = {{.field = "t.cpu", .coef = 1}},
	};
	const char *why;
	int term;
	assert_int_equal(
		ctp_registry_add_derived(&cap->reg, 0, &all, &why, &term), NF);
	uint32_t last = 0;
	for (int i = 0; i < MAXT && c->t[i].tgid; i++) {
		const struct th *t = &c->t[i];
		if (t->tgid != last) {
			uint32_t p = sb_process(cap, t->tgid, t->pcomm);
			if (t->pio)
				sb_put_u64(cap, &cap->procs[0], p,
					   CTP_PROCESS_IDENT, F_PIO, t->pio);
		}
		last = t->tgid;
		uint32_t r = sb_thread(cap, t->tid, t->pcomm, -1);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, F_CPU,
			   t->cpu);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, F_START,
			   t->start);
	}
	for (int i = 0; i < MAXT && c->x[i].tid; i++) {
		uint32_t x =
			sb_exited(cap, c->x[i].tid, c->x[i].tgid, c->x[i].comm,
				  c->x[i].during ? at + SEC / 20 : at - SEC);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, F_XCPU,
			   c->x[i].us);
	}
	cap->plugins[0].exited = true;
	cap->start_boottime_ns = at;
	cap->start_realtime_ns = 1700000000000000000ull + at;
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
	"view: pairs\n"
	"description: t.cpu and the exited tasks' x.cpu\n"
	"sort: cpu\n"
	"sections:\n"
	"  - {title: Processes, group_by: pid}\n"
	"columns:\n"
	"  - {id: cpu, label: CPU, field: t.cpu, exited: [x.cpu]}\n"
	"  - {id: pio, label: PIO, field: p.io, exited: [x.cpu]}\n";

struct run {
	struct ctp_series *s;
	struct ctp_group_spec spec;
	struct ctp_view *v;
	char axes[16];
	char *out; /* the last output */
	char *prev;
};

static void run_new(struct run *r, size_t top, uint64_t ttl_ns)
{
	char err[512];
	memset(r, 0, sizeof(*r));
	r->spec.no_normalize = true;
	snprintf(r->axes, sizeof(r->axes), "pcomm");
	assert_int_equal(
		ctp_group_spec_parse(r->axes, &r->spec, err, sizeof(err)), 0);
	if (ctp_view_parse("pairs.yaml", view_text, strlen(view_text), &r->v,
			   err, sizeof(err)) < 0)
		fail_msg("%s", err);
	const struct ctp_view *vs[1] = {r->v};
	struct ctp_series_opts o = {.spec = &r->spec,
				    .top = top,
				    .ttl_ns = ttl_ns,
				    .views = vs,
				    .n_views = 1};
	assert_int_equal(ctp_series_new(&o, &r->s), 0);
}

static void run_free(struct run *r)
{
	ctp_series_free(r->s);
	ctp_view_free(r->v);
	free(r->out);
	free(r->prev);
}

/* The value of series `name{labels}` in text, NAN when absent. */
static double value_in(const char *text, const char *name, const char *labels)
{
	char key[256];
	snprintf(key, sizeof(key), "\n%s{%s} ", name, labels);
	const char *at = text ? strstr(text, key) : NULL;
	return at ? strtod(at + strlen(key), NULL) : NAN;
}

/* Every counter line of prev is in out with a value no lower. */
static void monotonic(const char *prev, const char *out)
{
	for (const char *p = prev; p && *p;) {
		const char *nl = strchr(p, '\n'), *sp, *br;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512], name[256], labels[256];
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p = nl ? nl + 1 : p + len;
		if (line[0] == '#' || !strstr(line, "_total{"))
			continue;
		br = strchr(line, '{');
		sp = strrchr(line, '}');
		snprintf(name, sizeof(name), "%.*s", (int)(br - line), line);
		snprintf(labels, sizeof(labels), "%.*s", (int)(sp - br - 1),
			 br + 1);
		double a = strtod(sp + 2, NULL),
		       b = value_in(out, name, labels);
		if (isnan(b))
			continue; /* expired: no sample, never a lower one */
		if (b < a)
			fail_msg("%s{%s} went down: %g -> %g", name, labels, a,
				 b);
	}
}

/* Feed capture k, write the metrics, check nothing went down. */
static void feed(struct run *r, int k, const struct cap *c)
{
	char err[512];
	assert_int_equal(ctp_series_feed(r->s, build(k, c), err, sizeof(err)),
			 0);
	free(r->prev);
	r->prev = r->out;
	r->out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&r->out, &len);
	assert_non_null(f);
	struct ctp_om_opts mo = {.openmetrics = true, .series = r->s};
	struct ctp_om_stats st;
	assert_int_equal(ctp_om_write(f, ctp_series_snap(r->s),
				      ctp_series_groups(r->s), &mo, &st),
			 0);
	assert_int_equal(fclose(f), 0);
	monotonic(r->prev, r->out);
}

static double cpu(const struct run *r, const char *group)
{
	char l[64];
	snprintf(l, sizeof(l), "group=\"%s\"", group);
	return value_in(r->out, CPU, l);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

/* A member exits: its work after BASE (its exit record less what BASE
 * had) is added to its group's counter, which the sum over the live
 * members would have lost (1.3 s, then 3 s without thread 12's 0.3 s). */
static void test_exit(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c0 = {
		.t = {{10, 10, "app", 100, 5}, {10, 12, "app", 30, 6}}};
	struct cap c1 = {.t = {{10, 10, "app", 300, 5}},
			 .x = {{10, 12, "app", 600000}}};
	struct cap c2 = {.t = {{10, 10, "app", 310, 5}}};
	feed(&r, 0, &c0);
	assert_true(near(cpu(&r, "app"), 0)); /* from the first capture */
	feed(&r, 1, &c1);
	/* +2 s of thread 10, +0.3 s of thread 12 (0.6 s at its exit less
	 * the 0.3 s BASE had). */
	assert_true(near(cpu(&r, "app"), 2.3));
	assert_true(near(value_in(r.out, XT, "group=\"app\""), 1));
	/* A derived sum of the counter counts the exit as its term does. */
	assert_true(near(value_in(r.out, ALL, "group=\"app\""), 2.3));
	feed(&r, 2, &c2);
	assert_true(near(cpu(&r, "app"), 2.4));
	assert_true(near(value_in(r.out, ALL, "group=\"app\""), 2.4));
	run_free(&r);
}

/* A thread read live by a capture exits while that capture is taken:
 * its exit record is in that capture's table, which is also the next
 * interval's BASE. It counts once: its live value up to the read in the
 * interval before, the rest of its exit record in the one after. */
static void test_exit_during_capture(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c0 = {
		.t = {{10, 10, "app", 100, 5}, {10, 12, "app", 30, 6}}};
	struct cap c1 = {.t = {{10, 10, "app", 300, 5}, {10, 12, "app", 50, 6}},
			 .x = {{10, 12, "app", 600000, true}}};
	struct cap c2 = {.t = {{10, 10, "app", 310, 5}}};
	feed(&r, 0, &c0);
	feed(&r, 1, &c1);
	assert_true(near(cpu(&r, "app"), 2.2)); /* +2 s, +0.2 s live */
	feed(&r, 2, &c2);
	/* +0.1 s of thread 10, +0.1 s of 12's exit (0.6 s less the 0.5 s
	 * read live): 0.6 s of thread 12 in all, less the 0.3 s before. */
	assert_true(near(cpu(&r, "app"), 2.4));
	assert_true(near(value_in(r.out, XT, "group=\"app\""), 1));
	run_free(&r);
}

/* A process-scope counter such as <tgid>/io's includes the children the
 * process waited for: the kernel adds a reaped child's total to its
 * parent's. A child born and reaped between two captures is therefore in
 * its parent's increase; its exit record must not count it a second time
 * in its own group (the thread counter still takes the record). */
static void test_process_exit(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c0 = {.t = {{10, 10, "make", 100, 5, 40}}};
	/* Child 20 read 0.5 s worth and was reaped: make's p.io +50. */
	struct cap c1 = {.t = {{10, 10, "make", 110, 5, 90}},
			 .x = {{20, 20, "cc", 500000}}};
	struct cap c2 = {.t = {{10, 10, "make", 110, 5, 90}}};
	feed(&r, 0, &c0);
	feed(&r, 1, &c1);
	feed(&r, 2, &c2); /* cc's series shows its work from here */
	assert_true(near(value_in(r.out, PIO, "group=\"make\""), 0.5));
	double cc = value_in(r.out, PIO, "group=\"cc\"");
	if (!isnan(cc) && !near(cc, 0))
		fail_msg("cc's p.io %g: its exit counted beside make's", cc);
	/* The thread counter has the child's exit. */
	assert_true(near(cpu(&r, "cc"), 0.5));
	run_free(&r);
}

/* A process renames (its pcomm, the group, changes; its identity does
 * not): what it did before stays with the old group, its increase after
 * goes to the new one, which starts at 0 (its first sample) and shows it
 * the capture after. A new member adds its whole value. */
static void test_rename(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c[4] = {
		{.t = {{20, 20, "old", 40, 8}}},
		{.t = {{20, 20, "old", 90, 8}}},
		{.t = {{20, 20, "new", 140, 8}}},
		{.t = {{20, 20, "new", 150, 8}, {21, 21, "late", 70, 500}}},
	};
	feed(&r, 0, &c[0]);
	feed(&r, 1, &c[1]);
	assert_true(near(cpu(&r, "old"), 0.5));
	feed(&r, 2, &c[2]);
	assert_true(near(cpu(&r, "old"), 0.5)); /* kept, within the TTL */
	assert_true(near(cpu(&r, "new"), 0));	/* its first sample */
	feed(&r, 3, &c[3]);
	assert_true(near(cpu(&r, "new"), 0.6)); /* 0.5 + 0.1 */
	assert_true(near(cpu(&r, "late"), 0));
	/* Nothing counted twice, nothing lost: 0.5 + 0.6 of process 20. */
	assert_true(near(cpu(&r, "old") + cpu(&r, "new"), 1.1));
	run_free(&r);
}

/* A counter that goes back (the same task: ids and start) adds its new
 * value, never the drop. */
static void test_reset(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c[3] = {
		{.t = {{30, 30, "svc", 500, 9}}},
		{.t = {{30, 30, "svc", 20, 9}}},
		{.t = {{30, 30, "svc", 50, 9}}},
	};
	for (int k = 0; k < 3; k++)
		feed(&r, k, &c[k]);
	assert_true(near(cpu(&r, "svc"), 0.5)); /* 20 + 30 ticks */
	run_free(&r);
}

/* A running sum past what a long long holds in thousandths of the
 * unit (5e15 ticks x 2000) is written exactly, never wrapped. */
static void test_large(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c0 = {.t = {{40, 40, "big", 0, 9}}};
	struct cap c1 = {.t = {{40, 40, "big", 5000000000000000ull, 9}}};
	feed(&r, 0, &c0);
	feed(&r, 1, &c1);
	assert_non_null(strstr(r.out, "\n" CPU "{group=\"big\"} "
				      "50000000000000\n"));
	run_free(&r);
}

/* Two groups whose labels read alike (a control byte is written as the
 * text \x01, which a name may also hold) are one series, never two
 * series of one name and labels. */
static void test_label_clash(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 0);
	struct cap c0 = {.t = {{1, 1, "a", 0, 1}}};
	struct cap c1 = {.t = {{1, 1, "a", 10, 1},
			       {2, 2, "b\x01", 100, 2},
			       {3, 3, "b\\x01", 100, 3}}};
	struct cap c2 = {.t = {{1, 1, "a", 20, 1},
			       {2, 2, "b\x01", 200, 2},
			       {3, 3, "b\\x01", 200, 3}}};
	feed(&r, 0, &c0);
	feed(&r, 1, &c1);
	feed(&r, 2, &c2);
	const char *key = "\n" CPU "{group=\"b\\\\x01\"} ";
	const char *at = strstr(r.out, key);
	assert_non_null(at);
	assert_null(strstr(at + 1, key)); /* once */
	assert_true(near(strtod(at + strlen(key), NULL), 4.0));
	run_free(&r);
}

/* A process named "other" is a group whose labels read group="other",
 * as the groups past the --top cut's do: never two series of one name
 * and labels (Prometheus would take either in turn, a reset at each
 * drop); its increase is other's, which stays monotonic. */
static void test_named_other(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 1, 0);
	/* "other" has the larger increase each interval. */
	uint64_t o[] = {0, 500, 1000, 1500}, b[] = {0, 10, 20, 30};
	for (int k = 0; k < 4; k++) {
		struct cap c = {
			.t = {{1, 1, "other", o[k], 1}, {2, 2, "b", b[k], 2}}};
		feed(&r, k, &c);
		const char *key = "\n" CPU "{group=\"other\"} ";
		const char *at = strstr(r.out, key);
		if (k > 0)
			assert_non_null(at);
		if (at)
			assert_null(strstr(at + 1, key)); /* once */
	}
	/* "other" is never a group of its own: its 15 s are other's, and
	 * b, the only group left to rank, leads and has its 0.3 s. */
	assert_true(near(cpu(&r, "other"), 15.0));
	assert_true(near(cpu(&r, "b"), 0.3));
	run_free(&r);
	/* A one-shot export (no series) of the last capture, --top 1: the
	 * same one series group="other" (15 s), b its own (0.3 s). */
	struct cap c = {.t = {{1, 1, "other", 1500, 1}, {2, 2, "b", 30, 2}}};
	struct ctp_snap *snap = build(9, &c);
	struct ctp_group_spec spec = {.no_normalize = true};
	char axes[] = "pcomm", err[512], *out = NULL;
	assert_int_equal(ctp_group_spec_parse(axes, &spec, err, sizeof(err)),
			 0);
	struct ctp_groups *g;
	assert_int_equal(ctp_groups_new(snap, &spec, &g, err, sizeof(err)), 0);
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	struct ctp_om_opts mo = {.openmetrics = true, .top = 1};
	struct ctp_om_stats st;
	assert_int_equal(ctp_om_write(f, snap, g, &mo, &st), 0);
	assert_int_equal(fclose(f), 0);
	const char *key = "\n" CPU "{group=\"other\"} ";
	const char *at = strstr(out, key);
	assert_non_null(at);
	assert_null(strstr(at + 1, key));
	assert_true(near(value_in(out, CPU, "group=\"other\""), 15.0));
	assert_true(near(value_in(out, CPU, "group=\"b\""), 0.3));
	free(out);
	ctp_groups_free(g);
	ctp_snap_free(snap);
}

/* --top 1: the group that leads each interval is exported and keeps its
 * series while it is active (TTL 25 s); the others' increases go to
 * other, which is monotonic too; a group idle past the TTL loses its
 * series (no sample, never a lower one) and its later increases go to
 * other. */
static void test_top_ttl(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 1, 25 * SEC);
	/* a leads the first interval, b the second; c never leads. */
	uint64_t a[] = {0, 100, 110, 110, 110, 110, 200},
		 b[] = {0, 10, 110, 120, 130, 140, 150},
		 cc[] = {0, 5, 10, 15, 20, 25, 30};
	for (int k = 0; k < 7; k++) {
		struct cap c = {.t = {{1, 1, "a", a[k], 1},
				      {2, 2, "b", b[k], 2},
				      {3, 3, "c", cc[k], 3}}};
		feed(&r, k, &c);
		if (k == 1) { /* a led the first capture too */
			assert_true(near(cpu(&r, "a"), 1.0));
			assert_true(isnan(cpu(&r, "b")));
			/* b's 0.1 s and c's 0.05 s. */
			assert_true(near(cpu(&r, "other"), 0.15));
		}
		if (k == 2) {
			assert_true(near(cpu(&r, "a"), 1.1));
			assert_true(near(cpu(&r, "b"), 0)); /* first sample */
		}
		if (k == 3) /* both kept: a was active 10 s ago */
			assert_true(near(cpu(&r, "a"), 1.1) &&
				    near(cpu(&r, "b"), 1.1));
	}
	/* a idle from capture 2 (20 s) to 5 (50 s): past 25 s it expired
	 * at capture 5; its increase at capture 6 went to other, unless it
	 * led that interval (it did: 0.9 s): exported again, from where it
	 * was. */
	assert_true(near(cpu(&r, "a"), 2.0));
	assert_true(near(cpu(&r, "b"), 1.4));
	struct ctp_series_stats st;
	ctp_series_stats(r.s, &st);
	assert_int_equal(st.expired, 1);
	/* other: b's first 0.1 s and c's 0.3 s. */
	assert_true(near(cpu(&r, "other"), 0.4));
	run_free(&r);
}

/* The TTL alone: a group idle past it has no series any more, and
 * ctprof_series says how many are exported. */
static void test_expiry(void **state)
{
	(void)state;
	struct run r;
	run_new(&r, 0, 15 * SEC);
	uint64_t a[] = {0, 100, 100, 100, 100};
	for (int k = 0; k < 5; k++) {
		struct cap c = {.t = {{1, 1, "a", a[k], 1},
				      {2, 2, "b", 10 * (uint64_t)k, 2}}};
		feed(&r, k, &c);
	}
	assert_true(isnan(cpu(&r, "a"))); /* idle since 10 s, now 40 s */
	assert_true(near(cpu(&r, "b"), 0.4));
	assert_true(near(value_in(r.out, "ctprof_series", "what=\"exported\""),
			 2)); /* b and other */
	run_free(&r);
}

/* record --textfile keeps the series from file to file: on the fixture
 * tree, which never changes, every group's CPU counter stays at 0 (its
 * increase since the first capture), where a snapshot alone gives each
 * group its members' lifetime sums; ctprof_series counts the series. */
static void test_record_textfile(void **state)
{
	(void)state;
	char yaml[4 * PATH_MAX], cfg[PATH_MAX], rec[PATH_MAX], tf[PATH_MAX],
		prom[PATH_MAX], *out;
	size_t n;
	int len = snprintf(yaml, sizeof(yaml),
			   "plugin_dirs: [\"%s\"]\n"
			   "roots: {proc: \"%s/proc\", sys: \"%s/sys\"}\n"
			   "plugins:\n  procfs-stat: {}\n",
			   CTP_TEST_PLUGIN_DIR, CTP_TEST_FIXTURES,
			   CTP_TEST_FIXTURES);
	assert_true(len > 0 && (size_t)len < sizeof(yaml));
	assert_int_equal(E2E_PATHF(cfg, "%s/rec.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(rec, "%s/rec", tmp), 0);
	assert_int_equal(E2E_PATHF(tf, "%s/tf", tmp), 0);
	assert_int_equal(E2E_PATHF(prom, "%s/tf/ctprof.prom", tmp), 0);
	assert_int_equal(e2e_write_file(cfg, yaml, (size_t)len), 0);
	assert_int_equal(mkdir(tf, 0700), 0);
	const char *args[] = {"record", "--config",   cfg, "-o",
			      rec,	"--count",    "3", "--interval",
			      "100ms",	"--textfile", tf,  NULL};
	assert_int_equal(e2e_run(args, NULL, NULL), 0);
	assert_int_equal(e2e_read_file(prom, &out, &n), 0);
	assert_non_null(strstr(out, "\nctprof_series{what=\"exported\"} "));
	size_t lines = 0;
	for (const char *p = out; (p = strstr(p, "\nctprof_procfs_utime_"
						 "seconds_total{"));
	     p++) {
		const char *sp = strchr(p, ' ');
		assert_non_null(sp);
		if (strtod(sp + 1, NULL) != 0)
			fail_msg("not 0 on a tree that never changes:%.*s",
				 (int)(strchr(sp, '\n') - p), p);
		lines++;
	}
	assert_true(lines > 1);
	free(out);
}

/* export DIR --format openmetrics: the whole recording (the fixture's 4
 * files), every sample with its capture's timestamp, each family once
 * with all its samples, every counter never lower than at the capture
 * before; promtool backfills it (when installed). */
static void test_recording_export(void **state)
{
	(void)state;
	char om[PATH_MAX], blocks[PATH_MAX], cmd[3 * PATH_MAX], *out;
	size_t n;
	assert_int_equal(E2E_PATHF(om, "%s/rec.om", tmp), 0);
	assert_int_equal(E2E_PATHF(blocks, "%s/blocks", tmp), 0);
	const char *args[] = {"export",	  CTP_TEST_FIXTURES "/recording",
			      "--format", "openmetrics",
			      "--top",	  "3",
			      "-o",	  om,
			      NULL};
	assert_int_equal(e2e_run(args, NULL, NULL), 0);
	assert_int_equal(e2e_read_file(om, &out, &n), 0);
	/* Per counter series: its last value and timestamp. */
	struct {
		char key[256];
		double v, t;
	} *last = calloc(4096, sizeof(*last));
	size_t nl = 0, samples = 0, families = 0;
	double t_min = INFINITY, t_max = 0;
	char seen[256][128];
	assert_non_null(last);
	for (char *p = out, *nx; p && *p; p = nx) {
		nx = strchr(p, '\n');
		if (nx)
			*nx++ = '\0';
		if (strncmp(p, "# TYPE ", 7) == 0) {
			char name[128];
			assert_int_equal(sscanf(p + 7, "%127s", name), 1);
			for (size_t k = 0; k < families; k++)
				if (strcmp(seen[k], name) == 0)
					fail_msg("family %s twice", name);
			assert_true(families < 256);
			snprintf(seen[families++], sizeof(seen[0]), "%s", name);
			continue;
		}
		if (*p == '#')
			continue;
		char key[256];
		double v, t;
		const char *sp =
			strrchr(p, '}') ? strrchr(p, '}') + 1 : strchr(p, ' ');
		snprintf(key, sizeof(key), "%.*s", (int)(sp - p), p);
		if (sscanf(sp, " %lf %lf", &v, &t) != 2)
			fail_msg("no timestamp: %s", p);
		samples++;
		t_min = t < t_min ? t : t_min;
		t_max = t > t_max ? t : t_max;
		/* A counter's samples end _total (a gauge never does). */
		const char *br = strchr(key, '{');
		size_t kl = br ? (size_t)(br - key) : strlen(key);
		if (kl < 6 || strncmp(key + kl - 6, "_total", 6) != 0)
			continue;
		size_t k = 0;
		while (k < nl && strcmp(last[k].key, key) != 0)
			k++;
		if (k == nl) {
			assert_true(nl < 4096);
			snprintf(last[nl++].key, sizeof(last[0].key), "%s",
				 key);
		} else {
			if (t <= last[k].t)
				fail_msg("%s: timestamps out of order", key);
			if (v < last[k].v)
				fail_msg("%s went down: %g -> %g", key,
					 last[k].v, v);
		}
		last[k].v = v;
		last[k].t = t;
	}
	assert_true(samples > 100 && nl > 10);
	assert_true(t_max - t_min > 4); /* 4 files 1.5 s apart */
	free(last);
	free(out);
	if (system("promtool --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "promtool not installed: no backfill\n");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "promtool tsdb create-blocks-from openmetrics %s %s "
		 ">/dev/null 2>&1",
		 om, blocks);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("series", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_exit_during_capture),
		cmocka_unit_test(test_process_exit),
		cmocka_unit_test(test_rename),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_label_clash),
		cmocka_unit_test(test_named_other),
		cmocka_unit_test(test_top_ttl),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_record_textfile),
		cmocka_unit_test(test_recording_export),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
