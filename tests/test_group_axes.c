/* SPDX-License-Identifier: MIT */
/*
 * The identity and field axes of grouping (core/analysis/group.c,
 * docs/GROUPING.md): `pid`, `tid` and `field:NAME`, alone and composed with
 * other axes, absent values, the errors that name the field, the join of
 * two snapshots' tables by key (what compare does), and `show --group-by`
 * over them. The snapshots are hand-built captures written by the real
 * writer and read back by the real reader; expected groups and aggregates
 * are worked out by hand from the rows in snapshot().
 */
#include <errno.h>
#include <fcntl.h>
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

#include "cli.h"
#include "e2e_util.h"
#include "group.h"
#include "reader.h"
#include "snapbuild.h"

static char tmpdir[PATH_MAX];

enum {
	T_STATE,  /* char, categorical */
	T_POLICY, /* string, categorical */
	T_LEVEL,  /* string, ordinal: accepted */
	T_FLAG,	  /* bool, categorical */
	T_CODE,	  /* i64, categorical: numeric keys, negative too */
	T_CNT,	  /* u64 counter: refused */
	T_NICE,	  /* i64 ordinal: refused */
	T_CPUS,	  /* cpu set: refused */
	P_KIND,	  /* process string, categorical */
	P_FAULTS, /* process counter */
	C_MODE,	  /* cgroup string, categorical: refused by scope */
	H_KERNEL, /* host string, categorical: refused by scope */
	N_F
};

static const struct ctp_field_desc descs[N_F] = {
	[T_STATE] = {"t.state", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CHAR,
		     CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_POLICY] = {"t.policy", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING,
		      CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_LEVEL] = {"t.level", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING,
		     CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_MODE},
	[T_FLAG] = {"t.flag", NULL, CTP_SCOPE_THREAD, CTP_TYPE_BOOL,
		    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_CODE] = {"t.code", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64,
		    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_CNT] = {"t.cnt", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_NICE] = {"t.nice", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64,
		    CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	[T_CPUS] = {"t.cpus", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CPUSET,
		    CTP_UNIT_NONE, CTP_KIND_CPUSET, CTP_RULE_UNION},
	[P_KIND] = {"p.kind", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_STRING,
		    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[P_FAULTS] = {"p.faults", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
		      CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[C_MODE] = {"c.mode", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_STRING,
		    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[H_KERNEL] = {"h.kernel", NULL, CTP_SCOPE_HOST, CTP_TYPE_STRING,
		      CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
};

/* Cells: absent, a number, a string. */
#define NO                                                                     \
	{                                                                      \
		0                                                              \
	}
#define U(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(x)                                \
	}
#define S(lit)                                                                 \
	{                                                                      \
		.set = true, .s = (lit)                                        \
	}

struct trow {
	uint32_t tid;
	const char *comm;
	int cg; /* -1: none */
	struct sb_cell state, policy, level, flag, code, cnt;
};

struct prow {
	uint32_t tgid;
	const char *comm;
	struct sb_cell kind, faults;
	size_t n;
	struct trow t[3];
};

/*
 * cgroups 0 "/a", 1 "/b". Processes in tgid order (9 < 100 < 1000, which
 * byte order would get wrong); thread 1000 has no state and no cgroup,
 * process 1000 no kind, thread 9 no policy and no code.
 *
 *   tgid  tid    comm      cg  state policy      level flag  code  cnt
 *   9     9      db        /b  D     -           low   -     -     8
 *   100   100    app       /a  S     SCHED_OTHER high  true  -2    1
 *   100   101    worker-0  /a  R     SCHED_OTHER high  false 3     2
 *   100   102    worker-1  /b  S     SCHED_FIFO  low   false -10   4
 *   1000  1000   app       -   -     SCHED_OTHER -     -     3     16
 *   1000  20000  worker-0  /a  S     SCHED_OTHER low   true  10    32
 *
 * p.kind: 9 "store", 100 "web", 1000 absent; p.faults 5, 10, 1.
 * `moved` makes thread 101 S instead of R (the second snapshot of a
 * compare).
 */
static struct ctp_snap *snapshot(const char *name, bool moved)
{
	const struct prow procs[] = {
		{9,
		 "db",
		 S("store"),
		 U(5),
		 1,
		 {{9, "db", 1, U('D'), NO, S("low"), NO, NO, U(8)}}},
		{100,
		 "app",
		 S("web"),
		 U(10),
		 3,
		 {{100, "app", 0, U('S'), S("SCHED_OTHER"), S("high"), U(1),
		   U(-2), U(1)},
		  {101, "worker-0", 0, U(moved ? 'S' : 'R'), S("SCHED_OTHER"),
		   S("high"), U(0), U(3), U(2)},
		  {102, "worker-1", 1, U('S'), S("SCHED_FIFO"), S("low"), U(0),
		   U(-10), U(4)}}},
		{1000,
		 "app",
		 NO,
		 U(1),
		 2,
		 {{1000, "app", -1, NO, S("SCHED_OTHER"), NO, NO, U(3), U(16)},
		  {20000, "worker-0", 0, U('S'), S("SCHED_OTHER"), S("low"),
		   U(1), U(10), U(32)}}},
	};
	struct ctp_capture *cap = sb_capture("test");
	int fid[N_F];
	for (int i = 0; i < N_F; i++) {
		fid[i] = ctp_registry_add(&cap->reg, 0, &descs[i]);
		assert_true(fid[i] >= 0);
	}
	sb_cgroup(cap, "/a");
	sb_cgroup(cap, "/b");
	struct sb_cell kern = S("6.8.0");
	sb_put(cap, &cap->host, 0, CTP_HOST_IDENT, fid[H_KERNEL], &kern);
	for (size_t p = 0; p < sizeof(procs) / sizeof(procs[0]); p++) {
		const struct prow *pr = &procs[p];
		uint32_t prow = sb_process(cap, pr->tgid, pr->comm);
		sb_put(cap, &cap->procs[0], prow, CTP_PROCESS_IDENT,
		       fid[P_KIND], &pr->kind);
		sb_put(cap, &cap->procs[0], prow, CTP_PROCESS_IDENT,
		       fid[P_FAULTS], &pr->faults);
		for (size_t i = 0; i < pr->n; i++) {
			const struct trow *t = &pr->t[i];
			struct ctp_table *tt = &cap->threads[0];
			uint32_t r = sb_thread(cap, t->tid, t->comm, t->cg);
			const struct sb_cell *cells[] = {&t->state, &t->policy,
							 &t->level, &t->flag,
							 &t->code,  &t->cnt};
			const int which[] = {T_STATE, T_POLICY, T_LEVEL,
					     T_FLAG,  T_CODE,	T_CNT};
			for (size_t c = 0; c < 6; c++)
				sb_put(cap, tt, r, CTP_THREAD_IDENT,
				       fid[which[c]], cells[c]);
		}
	}
	char path[PATH_MAX + 32], err[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_capture_free(cap);
	struct ctp_snap *s = NULL;
	if (ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return s;
}

/* Group s by `axes`; 0 and *g, or the error's return with err filled. */
static int try_group(struct ctp_snap *s, const char *axes,
		     struct ctp_groups **g, char *err, size_t errlen)
{
	char text[128];
	struct ctp_group_spec spec = {0};
	snprintf(text, sizeof(text), "%s", axes);
	int r = ctp_group_spec_parse(text, &spec, err, errlen);
	return r < 0 ? r : ctp_groups_new(s, &spec, g, err, errlen);
}

static struct ctp_groups *group(struct ctp_snap *s, const char *axes)
{
	struct ctp_groups *g = NULL;
	char err[256];
	if (try_group(s, axes, &g, err, sizeof(err)) < 0)
		fail_msg("%s: %s", axes, err);
	return g;
}

/* Key part `part` of group i, "-" for unknown (as show prints it). */
static const char *part(const struct ctp_groups *g, size_t i, size_t part)
{
	const char *k = ctp_groups_at(g, i)->key[part];
	return k ? k : "-";
}

/* "k1|k2|...:threads/procs" for every group, in table order, so one
 * string states the whole grouping. */
static void expect_groups(const struct ctp_groups *g, const char *want)
{
	char got[1024] = "";
	size_t len = 0;
	for (size_t i = 0; i < ctp_groups_count(g); i++) {
		const struct ctp_group *gr = ctp_groups_at(g, i);
		for (size_t k = 0; k < ctp_groups_n_key(g); k++)
			len += (size_t)snprintf(got + len, sizeof(got) - len,
						"%s%s", k ? "|" : "",
						part(g, i, k));
		len += (size_t)snprintf(got + len, sizeof(got) - len,
					":%u/%u%s", gr->n_threads,
					gr->n_processes,
					i + 1 < ctp_groups_count(g) ? " " : "");
		assert_true(len < sizeof(got));
	}
	if (strcmp(got, want))
		fail_msg("groups\n  %s\nexpected\n  %s", got, want);
}

/* The sum of u64 field `name` per group, as "a b c" ("-" absent). */
static void expect_sums(struct ctp_groups *g, const char *name,
			const char *want)
{
	const struct ctp_snap_field *f =
		ctp_snap_field_find(ctp_groups_snap(g), name);
	const struct ctp_agg *col;
	char got[256] = "";
	size_t len = 0;
	assert_non_null(f);
	assert_int_equal(ctp_groups_aggregate(g, f, &col), 0);
	for (size_t i = 0; i < ctp_groups_count(g); i++) {
		if (col[i].v.type == CTP_VALUE_ABSENT)
			len += (size_t)snprintf(got + len, sizeof(got) - len,
						"%s-", i ? " " : "");
		else
			len += (size_t)snprintf(
				got + len, sizeof(got) - len, "%s%llu",
				i ? " " : "", (unsigned long long)col[i].v.u64);
	}
	if (strcmp(got, want))
		fail_msg("%s sums\n  %s\nexpected\n  %s", name, got, want);
}

static void expect_titles(const struct ctp_groups *g, const char *want)
{
	char got[256] = "";
	for (size_t k = 0; k < ctp_groups_n_key(g); k++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
			 k ? " " : "", ctp_groups_key_title(g, k));
	assert_string_equal(got, want);
}

static void test_pid_tid(void **unused)
{
	(void)unused;
	struct ctp_snap *s = snapshot("a.ctprof", false);

	/* Numeric order, not byte order; a process-scope counter once per
	 * process. */
	struct ctp_groups *g = group(s, "pid");
	expect_titles(g, "PID");
	expect_groups(g, "9:1/1 100:3/1 1000:2/1");
	expect_sums(g, "t.cnt", "8 7 48");
	expect_sums(g, "p.faults", "5 10 1");
	ctp_groups_free(g);

	g = group(s, "tid");
	expect_titles(g, "TID");
	expect_groups(g, "9:1/1 100:1/1 101:1/1 102:1/1 1000:1/1 20000:1/1");
	expect_sums(g, "t.cnt", "8 1 2 4 16 32");
	/* Each thread's group has its process's counter. */
	expect_sums(g, "p.faults", "5 10 10 10 1 1");
	const char *key[] = {"20000"};
	const struct ctp_group *gr = ctp_groups_find(g, key);
	assert_non_null(gr);
	assert_int_equal(gr->n_threads, 1);
	ctp_groups_free(g);

	/* Composed: by name, then pid. Names are normalized, pids never. */
	g = group(s, "pcomm,pid");
	expect_titles(g, "PCOMM PID");
	expect_groups(g, "app|100:3/1 app|1000:2/1 db|9:1/1");
	ctp_groups_free(g);
	g = group(s, "comm,tid");
	expect_groups(g, "app|100:1/1 app|1000:1/1 db|9:1/1 "
			 "worker-{N}|101:1/1 worker-{N}|102:1/1 "
			 "worker-{N}|20000:1/1");
	ctp_groups_free(g);
	ctp_snap_free(s);
}

static void test_field(void **unused)
{
	(void)unused;
	struct ctp_snap *s = snapshot("a.ctprof", false);

	/* A char: the absent value is its own group, first. */
	struct ctp_groups *g = group(s, "field:t.state");
	expect_titles(g, "T.STATE");
	expect_groups(g, "-:1/1 D:1/1 R:1/1 S:3/2");
	expect_sums(g, "t.cnt", "16 8 2 37");
	/* S holds threads of processes 100 and 1000: each counted once. */
	expect_sums(g, "p.faults", "1 5 10 11");
	ctp_groups_free(g);

	/* A string, raw: values are never normalized. */
	g = group(s, "field:t.policy");
	expect_groups(g, "-:1/1 SCHED_FIFO:1/1 SCHED_OTHER:4/2");
	ctp_groups_free(g);

	/* An ordinal string, a bool. */
	g = group(s, "field:t.level");
	expect_groups(g, "-:1/1 high:2/1 low:3/3");
	ctp_groups_free(g);
	g = group(s, "field:t.flag");
	expect_groups(g, "-:2/2 false:2/1 true:2/2");
	ctp_groups_free(g);

	/* An integer: numeric order, negative numbers first. */
	g = group(s, "field:t.code");
	expect_groups(g, "-:1/1 -10:1/1 -2:1/1 3:2/2 10:1/1");
	expect_sums(g, "t.cnt", "8 4 1 18 32");
	ctp_groups_free(g);

	/* A process field applies to every thread of the process. */
	g = group(s, "field:p.kind");
	expect_titles(g, "P.KIND");
	expect_groups(g, "-:2/1 store:1/1 web:3/1");
	expect_sums(g, "t.cnt", "48 8 7");
	expect_sums(g, "p.faults", "1 5 10");
	ctp_groups_free(g);
	ctp_snap_free(s);
}

static void test_composed(void **unused)
{
	(void)unused;
	struct ctp_snap *s = snapshot("a.ctprof", false);

	struct ctp_groups *g = group(s, "cgroup,field:t.state");
	expect_titles(g, "CGROUP T.STATE");
	expect_groups(g, "-|-:1/1 /a|R:1/1 /a|S:2/2 /b|D:1/1 /b|S:1/1");
	expect_sums(g, "t.cnt", "16 2 33 8 4");
	ctp_groups_free(g);

	/* Two field axes and a name. */
	g = group(s, "field:p.kind,field:t.policy,pcomm");
	expect_titles(g, "P.KIND T.POLICY PCOMM");
	expect_groups(g, "-|SCHED_OTHER|app:2/1 store|-|db:1/1 "
			 "web|SCHED_FIFO|app:1/1 web|SCHED_OTHER|app:2/1");
	ctp_groups_free(g);

	/* none keeps its meaning beside a field axis: one group per thread,
	 * the occurrence counted within the other parts. */
	g = group(s, "field:t.state,none");
	expect_titles(g, "T.STATE PCOMM COMM #");
	expect_groups(g, "-|app|app|0:1/1 D|db|db|0:1/1 "
			 "R|app|worker-{N}|0:1/1 S|app|app|0:1/1 "
			 "S|app|worker-{N}|0:1/1 S|app|worker-{N}|1:1/1");
	ctp_groups_free(g);
	ctp_snap_free(s);
}

/* The join compare does: keys of one table looked up in another's. */
static void test_join(void **unused)
{
	(void)unused;
	struct ctp_snap *a = snapshot("a.ctprof", false);
	struct ctp_snap *b = snapshot("b.ctprof", true);
	struct ctp_groups *ga = group(a, "field:t.state");
	struct ctp_groups *gb = group(b, "field:t.state");

	/* R is gone (its thread is S now); S has one more; the absent
	 * state joins the absent state. */
	const char *r[] = {"R"}, *st[] = {"S"}, *none[] = {NULL};
	assert_null(ctp_groups_find(gb, r));
	assert_int_equal(ctp_groups_find(ga, st)->n_threads, 3);
	assert_int_equal(ctp_groups_find(gb, st)->n_threads, 4);
	assert_int_equal(ctp_groups_find(gb, none)->n_threads, 1);
	for (size_t i = 0; i < ctp_groups_count(gb); i++) {
		const struct ctp_group *x = ctp_groups_at(gb, i);
		assert_non_null(ctp_groups_find(ga, x->key));
	}
	ctp_groups_free(ga);
	ctp_groups_free(gb);

	ga = group(a, "tid");
	gb = group(b, "tid");
	assert_int_equal(ctp_groups_count(ga), ctp_groups_count(gb));
	for (size_t i = 0; i < ctp_groups_count(ga); i++)
		assert_ptr_equal(ctp_groups_find(gb, ctp_groups_at(ga, i)->key),
				 ctp_groups_at(gb, i));
	ctp_groups_free(ga);
	ctp_groups_free(gb);
	ctp_snap_free(a);
	ctp_snap_free(b);
}

static void expect_error(struct ctp_snap *s, const char *axes, const char *want)
{
	struct ctp_groups *g = NULL;
	char err[512] = "";
	int r = try_group(s, axes, &g, err, sizeof(err));
	if (r != -EINVAL || !strstr(err, want))
		fail_msg("%s: %d '%s', expected -EINVAL with '%s'", axes, r,
			 err, want);
	assert_null(g);
}

static void test_errors(void **unused)
{
	(void)unused;
	struct ctp_snap *s = snapshot("a.ctprof", false);

	/* Missing, with the closest thread or process field. */
	expect_error(s, "field:t.stat",
		     "field:t.stat: this snapshot has no field t.stat "
		     "(did you mean 't.state'?)");
	expect_error(s, "pcomm,field:p.kinds", "(did you mean 'p.kind'?)");
	expect_error(s, "field:procfs.state",
		     "this snapshot has no field procfs.state");
	struct ctp_groups *g = NULL;
	char err[512];
	assert_int_equal(
		try_group(s, "field:procfs.state", &g, err, sizeof(err)),
		-EINVAL);
	assert_null(strstr(err, "did you mean"));
	/* Not a category. */
	expect_error(s, "field:t.cnt",
		     "field:t.cnt: t.cnt is a counter, not a category");
	expect_error(s, "field:t.nice", "t.nice is an ordinal number");
	expect_error(s, "field:t.cpus", "t.cpus is a cpu set");
	/* Not of a thread or its process. */
	expect_error(s, "field:c.mode", "c.mode is a cgroup field");
	expect_error(s, "field:h.kernel", "h.kernel is a host field");
	/* Parsing. */
	expect_error(s, "field:", "unknown axis 'field:'");
	expect_error(s, "pid,pid", "axis 'pid' given twice");
	expect_error(s, "field:t.state,field:t.state",
		     "axis 'field:t.state' given twice");
	expect_error(s, "none,comm", "'none' already keys");
	expect_error(s, "pid,tid,field:t.state,field:t.flag,cgroup",
		     "at most 4 axes");
	ctp_snap_free(s);
}

/* ---- show --group-by, in-process ---- */

static int run_show(char **out, char **errout, ...)
{
	char *argv[16], po[PATH_MAX + 16], pe[PATH_MAX + 16];
	int argc = 0;
	va_list ap;
	argv[argc++] = "show";
	va_start(ap, errout);
	for (char *a; (a = va_arg(ap, char *)) && argc < 15;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(po, sizeof(po), "%s/show.out", tmpdir);
	snprintf(pe, sizeof(pe), "%s/show.err", tmpdir);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
	dup2(fo, 1);
	dup2(fe, 2);
	optind = 0; /* getopt_long again from the start */
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

static void expect_in(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("expected\n%s\nin\n%s", want, text);
}

static void test_show(void **unused)
{
	(void)unused;
	char path[PATH_MAX + 16], *out, *eo;
	ctp_snap_free(snapshot("show.ctprof", false));
	snprintf(path, sizeof(path), "%s/show.ctprof", tmpdir);

	int rc = run_show(&out, &eo, path, "--group-by", "field:t.state",
			  "--threads", "--fields", "t.cnt,t.state", NULL);
	assert_int_equal(rc, 0);
	expect_in(out, "Threads grouped by field:t.state: 4 groups of 6 "
		       "threads\n"
		       "  T.STATE  THREADS  PROCS  t.state  t.cnt\n"
		       "  -              1      1  -           16\n"
		       "  D              1      1  D            8\n"
		       "  R              1      1  R            2\n"
		       "  S              3      2  S           37\n");
	free(out);
	free(eo);

	rc = run_show(&out, &eo, path, "--group-by", "pid", "--processes",
		      "--fields", "p.faults", NULL);
	assert_int_equal(rc, 0);
	/* Ids name nothing: the process's name beside them, as ps. */
	expect_in(out, "Processes grouped by pid: 3 groups of 3 processes\n"
		       "  PID   COMMAND  THREADS  PROCS  p.faults\n"
		       "  9     db             1      1         5\n"
		       "  100   app            3      1        10\n"
		       "  1000  app            2      1         1\n");
	free(out);
	free(eo);

	/* A thread's own name by its tid; none where a name is the key. */
	rc = run_show(&out, &eo, path, "--group-by", "pid,tid", "--threads",
		      "--fields", "t.cnt", NULL);
	assert_int_equal(rc, 0);
	expect_in(out, "  PID   TID    COMMAND   THREADS  PROCS  t.cnt\n"
		       "  9     9      db              1      1      8\n"
		       "  100   100    app             1      1      1\n"
		       "  100   101    worker-0        1      1      2\n");
	free(out);
	free(eo);
	rc = run_show(&out, &eo, path, "--group-by", "pcomm,pid", "--processes",
		      "--fields", "p.faults", NULL);
	assert_int_equal(rc, 0);
	expect_in(out, "  PCOMM  PID   THREADS  PROCS  p.faults\n");
	free(out);
	free(eo);

	rc = run_show(&out, &eo, path, "--group-by", "field:t.stat", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	expect_in(eo, "did you mean 't.state'?");
	free(out);
	free(eo);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("group-axes", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_tid),	 cmocka_unit_test(test_field),
		cmocka_unit_test(test_composed), cmocka_unit_test(test_join),
		cmocka_unit_test(test_errors),	 cmocka_unit_test(test_show),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
