/* SPDX-License-Identifier: MIT */
/*
 * End to end on the fixture tree tests/fixtures/proc: run the built
 * ctprof-core with procfs-stat, decode the snapshot with core/snapshot/reader.c
 * and check every value against the expectations below, which are themselves
 * checked against the fixture text first. Also: worker counts give the same
 * snapshot, `show`/`dump` print the odd names verbatim, non-ENOENT read
 * failures are tallied, and SIGTERM/SIGINT leave no file behind.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "group.h"
#include "reader.h"

#define FIX_PROC       CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	       CTP_TEST_FIXTURES "/sys"
#define FIX_CGROUP     CTP_TEST_FIXTURES "/cgroup"
#define MAX_SNAP       (1ull << 30)
#define PATH(buf, ...) assert_int_equal(E2E_PATHF(buf, __VA_ARGS__), 0)

/* Collect every mismatch of a check before failing, so one run says all. */
static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* ---- What the fixture holds --------------------------------------------- */

/* The process-scope totals of <tgid>/stat, in exp_proc.v order, with the
 * proc(5) field each comes from. */
enum { N_PFIELDS = 8 };
static const struct {
	const char *name;
	unsigned stat_no;
} pfdef[N_PFIELDS] = {
	{"procfs.process.minflt", 10},	{"procfs.process.majflt", 12},
	{"procfs.process.utime", 14},	{"procfs.process.stime", 15},
	{"procfs.children.minflt", 11}, {"procfs.children.majflt", 13},
	{"procfs.children.utime", 16},	{"procfs.children.stime", 17},
};

/* The thread table, nr_threads, the process totals, and the derived
 * procfs.cpu_time, procfs.process.cpu_time and procfs.children.cpu_time. */
#define N_PLUGIN_FIELDS (F_COUNT + 1 + N_PFIELDS + 3)

#define BIT(i) (1u << (i))
/* What only status holds on a fixture root (no taskstats there); the run
 * state is stat's letter. */
#define STATUS_FIELDS (BIT(F_VCSW) | BIT(F_NVCSW) | BIT(F_AFFINITY))

struct exp_thread {
	uint32_t tgid, tid;
	const char *comm;
	const char *cgroup; /* NULL: the file has no 0:: line */
	int64_t v[F_COUNT]; /* numeric fields by index */
	const char *policy;
	char state;
	const char *cpus; /* cpu list as the kernel prints it */
	uint32_t absent;  /* BIT(field) of fields with no value */
};

#define NUMS(minflt, majflt, utime, stime, prio, nice, start, cpu, rt, vcsw,   \
	     nvcsw)                                                            \
	{                                                                      \
		[F_MINFLT] = minflt, [F_MAJFLT] = majflt, [F_UTIME] = utime,   \
		[F_STIME] = stime, [F_PRIORITY] = prio, [F_NICE] = nice,       \
		[F_START_TIME] = start, [F_PROCESSOR] = cpu,                   \
		[F_RT_PRIORITY] = rt, [F_VCSW] = vcsw, [F_NVCSW] = nvcsw       \
	}

#define APP "/user.slice/user-1000.slice/app.scope"
#define FOO "/system.slice/foo.service"

/* Recorded threads, in the order the snapshot must list them. */
static const struct exp_thread exp_threads[] = {
	{1, 1, "systemd", "/init.scope",
	 NUMS(48211, 187, 312, 905, 20, 0, 4, 2, 0, 18250, 2301), "SCHED_OTHER",
	 'S', "0-3", 0},
	{37, 37, "kworker/3:1H", "/",
	 NUMS(0, 0, 0, 57, 0, -20, 31, 3, 0, 9120, 3), "SCHED_OTHER", 'I', "3",
	 0},
	{985, 985, "app-server", APP,
	 NUMS(20411, 12, 1530, 220, 20, 0, 1200, 0, 0, 5012, 88), "SCHED_OTHER",
	 'S', "0-3", 0},
	{985, 986, "worker-0", APP,
	 NUMS(3377, 0, 88120, 4021, 20, 0, 1201, 1, 0, 120, 40033),
	 "SCHED_OTHER", 'R', "0-3", 0},
	{985, 987, "worker-1", APP,
	 NUMS(2981, 3, 87654, 4100, 25, 5, 1201, 2, 0, 133, 39870),
	 "SCHED_BATCH", 'D', "0,2-3", 0},
	{985, 988, "gc thread", APP "/gc",
	 NUMS(150, 0, 7777, 12, 20, 0, 1203, 3, 0, 777, 21), "SCHED_EXT", 'S',
	 "2-3", 0},
	/* status has no Cpus_allowed_list */
	{985, 990, "io_uring-sq", APP,
	 NUMS(7, 0, 5, 66, 20, 0, 1300, 0, 0, 9, 1), "unknown(42)", 'S', NULL,
	 BIT(F_AFFINITY)},
	/* no status file */
	{985, 1001, "http-1", APP, NUMS(66, 0, 10, 4, 20, 0, 1402, 1, 0, 0, 0),
	 "SCHED_OTHER", 'S', NULL, STATUS_FIELDS},
	/* stat cut inside (22) starttime */
	{985, 1010, "logger", APP, NUMS(41, 0, 3, 1, 20, 0, 0, 0, 0, 30, 2),
	 NULL, 'S', "0-3",
	 BIT(F_START_TIME) | BIT(F_PROCESSOR) | BIT(F_RT_PRIORITY) |
		 BIT(F_POLICY)},
	{1204, 1204, "my (weird) name)", FOO,
	 NUMS(900, 1, 40, 30, 20, 0, 2000, 0, 0, 61, 5), "SCHED_OTHER", 'S',
	 "0-3", 0},
	/* cgroup file without a 0:: line */
	{1204, 1205, "worker-0", NULL,
	 NUMS(10, 0, 1, 1, 20, 0, 2001, 1, 0, 12, 0), "SCHED_OTHER", 'S', "0-3",
	 0},
	{1204, 1206, "worker-1", FOO,
	 NUMS(12, 0, 400, 90, -51, 0, 2001, 1, 50, 5000, 7), "SCHED_FIFO", 'S',
	 "1", 0},
};
#define N_THREADS (sizeof(exp_threads) / sizeof(exp_threads[0]))

struct exp_proc {
	uint32_t tgid;
	const char *comm;
	uint64_t nthreads;     /* threads recorded */
	uint64_t nr_threads;   /* (20) num_threads of <tgid>/stat */
	uint64_t v[N_PFIELDS]; /* the totals, as pfdef names them */
};

/* 985 has more CPU time than its live threads (some exited) and both 985
 * and 1204 have reaped children. */
static const struct exp_proc exp_procs[] = {
	{1, "systemd", 1, 1, {48211, 187, 312, 905, 0, 0, 0, 0}},
	{37, "kworker/3:1H", 1, 1, {0, 0, 0, 57, 0, 0, 0, 0}},
	{985,
	 "app-server",
	 7,
	 7,
	 {27142, 15, 190512, 9001, 5120, 3, 2750, 412}},
	{1204, "my (weird) name)", 3, 4, {922, 1, 441, 121, 0, 0, 77, 9}},
};
#define N_PROCS (sizeof(exp_procs) / sizeof(exp_procs[0]))

/* Distinct cgroups of recorded threads; "/system.slice/gone.service" of the
 * vanished thread must not be among them. */
static const char *const exp_cgroups[] = {"/init.scope", "/", APP, APP "/gc",
					  FOO};
#define N_CGROUPS (sizeof(exp_cgroups) / sizeof(exp_cgroups[0]))

/* The walk: 5 tgid dirs (3333 has no stat nor comm), 13 tid dirs under the
 * 4 that stay (1204/task/1207 has neither); one missing status file. */
#define EXP_TGIDS_WALKED   5
#define EXP_TGIDS_VANISHED 1
#define EXP_TIDS_WALKED	   13
#define EXP_TIDS_VANISHED  1
static const struct {
	const char *file;
	uint64_t failures;
} exp_files[] = {{"stat", 0}, {"status", 1}, {"process/stat", 0}};
#define N_FILES (sizeof(exp_files) / sizeof(exp_files[0]))

/* procfs-stat summary counters: 1010's stat is cut, 990's status lacks
 * Cpus_allowed_list; affinity comes from status off the live /proc. */
static const struct {
	const char *name;
	uint64_t value;
} exp_summary[] = {{"stat_parse_errors", 1},
		   {"status_parse_errors", 1},
		   {"affinity_syscall_fallbacks", 0},
		   /* No taskstats source on a fixture root: status for
		    * every thread. */
		   {"from_taskstats", 0},
		   {"from_files", 12},
		   /* Nor a task source: stat for every thread. */
		   {"from_task", 0},
		   {"stat_from_task", 0},
		   {"stat_from_file", 12},
		   /* A fixture tree: the status list, no source. */
		   {"affinity_from_task", 0},
		   /* Nor a process source: <tgid>/stat for the 4 that
		    * stay. */
		   {"process_from_source", 0},
		   {"process_from_file", 4}};
#define N_SUMMARY (sizeof(exp_summary) / sizeof(exp_summary[0]))

/* ---- Reading the fixture text (independently of the plugin) ------------- */

static char *fixture_text(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *fixture_text(const char *fmt, ...)
{
	char rel[256], path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	PATH(path, "%s/%s", FIX_PROC, rel);
	char *buf = NULL;
	if (e2e_read_file(path, &buf, NULL) < 0)
		return NULL;
	return buf;
}

/* The expectations above say what the fixture files say. */
static void expectations_match_fixture(void **state)
{
	(void)state;
	nbad = 0;
	for (size_t i = 0; i < N_THREADS; i++) {
		const struct exp_thread *e = &exp_threads[i];
		char tok[64];
		char *comm = fixture_text("%u/task/%u/comm", e->tgid, e->tid);
		char *stat = fixture_text("%u/task/%u/stat", e->tgid, e->tid);
		char *status =
			fixture_text("%u/task/%u/status", e->tgid, e->tid);
		char *cg = fixture_text("%u/task/%u/cgroup", e->tgid, e->tid);
		CHECK(comm && stat && cg, "tid %u: fixture files missing",
		      e->tid);
		if (!comm || !stat || !cg)
			goto next;
		CHECK(strcspn(comm, "\n") == strlen(e->comm) &&
			      !strncmp(comm, e->comm, strlen(e->comm)),
		      "tid %u: comm file says '%s'", e->tid, comm);
		/* The walk names a thread from stat: both must agree, as
		 * the kernel's do (one proc_task_name() text). */
		CHECK(strchr(stat, '(') && strrchr(stat, ')') &&
			      strrchr(stat, ')') - strchr(stat, '(') - 1 ==
				      (long)strlen(e->comm) &&
			      !strncmp(strchr(stat, '(') + 1, e->comm,
				       strlen(e->comm)),
		      "tid %u: stat's name differs from comm", e->tid);
		CHECK(e2e_stat_token(stat, 3, tok, sizeof(tok)) &&
			      tok[0] == e->state,
		      "tid %u: stat state", e->tid);
		char cgbuf[256];
		const char *v2 = e2e_cgroup_v2(cg, cgbuf, sizeof(cgbuf));
		CHECK((!v2 && !e->cgroup) ||
			      (v2 && e->cgroup && !strcmp(v2, e->cgroup)),
		      "tid %u: cgroup file says %s", e->tid,
		      v2 ? v2 : "(none)");
		for (int f = 0; f < F_COUNT; f++) {
			if (!e2e_fdef[f].stat_no)
				continue;
			bool have = e2e_stat_token(stat, e2e_fdef[f].stat_no,
						   tok, sizeof(tok));
			if (e->absent & BIT(f)) {
				CHECK(!have, "tid %u: %s is in the stat text",
				      e->tid, e2e_fdef[f].name);
				continue;
			}
			CHECK(have, "tid %u: stat lacks field %u", e->tid,
			      e2e_fdef[f].stat_no);
			if (!have)
				continue;
			long long n = strtoll(tok, NULL, 10);
			char pb[32];
			if (f == F_POLICY)
				CHECK(!strcmp(e2e_policy_name(n, pb,
							      sizeof(pb)),
					      e->policy),
				      "tid %u: policy %lld", e->tid, n);
			else
				CHECK(n == e->v[f],
				      "tid %u: %s is %lld in stat", e->tid,
				      e2e_fdef[f].name, n);
		}
		if (!status) {
			CHECK((e->absent & STATUS_FIELDS) == STATUS_FIELDS,
			      "tid %u: no status file", e->tid);
			goto next;
		}
		CHECK(e2e_status_value(status, "State", tok, sizeof(tok)) &&
			      tok[0] == e->state,
		      "tid %u: State", e->tid);
		CHECK(e2e_status_value(status, "voluntary_ctxt_switches", tok,
				       sizeof(tok)) &&
			      strtoll(tok, NULL, 10) == e->v[F_VCSW],
		      "tid %u: voluntary_ctxt_switches", e->tid);
		CHECK(e2e_status_value(status, "nonvoluntary_ctxt_switches",
				       tok, sizeof(tok)) &&
			      strtoll(tok, NULL, 10) == e->v[F_NVCSW],
		      "tid %u: nonvoluntary_ctxt_switches", e->tid);
		bool cpus = e2e_status_value(status, "Cpus_allowed_list", tok,
					     sizeof(tok));
		CHECK(cpus ? e->cpus && !strcmp(tok, e->cpus)
			   : (e->absent & BIT(F_AFFINITY)) != 0,
		      "tid %u: Cpus_allowed_list", e->tid);
	next:
		free(comm);
		free(stat);
		free(status);
		free(cg);
	}
	for (size_t i = 0; i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		char tok[64];
		char *comm = fixture_text("%u/comm", p->tgid);
		char *stat = fixture_text("%u/stat", p->tgid);
		CHECK(comm && stat, "tgid %u: files missing", p->tgid);
		if (comm && stat) {
			CHECK(strcspn(comm, "\n") == strlen(p->comm) &&
				      !strncmp(comm, p->comm, strlen(p->comm)),
			      "tgid %u: comm", p->tgid);
			CHECK(e2e_stat_token(stat, 20, tok, sizeof(tok)) &&
				      strtoull(tok, NULL, 10) == p->nr_threads,
			      "tgid %u: num_threads", p->tgid);
			for (int k = 0; k < N_PFIELDS; k++)
				CHECK(e2e_stat_token(stat, pfdef[k].stat_no,
						     tok, sizeof(tok)) &&
					      strtoull(tok, NULL, 10) ==
						      p->v[k],
				      "tgid %u: stat field %u", p->tgid,
				      pfdef[k].stat_no);
		}
		free(comm);
		free(stat);
	}
	/* The two vanished entries really lack their name (stat and comm,
	 * gone together as in the kernel). */
	char *c1 = fixture_text("1204/task/1207/comm");
	char *s1 = fixture_text("1204/task/1207/stat");
	char *c2 = fixture_text("3333/comm");
	char *s2 = fixture_text("3333/stat");
	CHECK(!c1 && !s1, "1204/task/1207 should have no stat nor comm");
	CHECK(!c2 && !s2, "3333 should have no stat nor comm");
	free(c1);
	free(s1);
	free(c2);
	free(s2);
	assert_int_equal(nbad, 0);
}

/* ---- Running captures --------------------------------------------------- */

static char tmp[PATH_MAX];
static unsigned seq;

static int group_setup(void **state)
{
	(void)state;
	return e2e_tmpdir("e2e", tmp, sizeof(tmp));
}

static int group_teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp);
}

/* Snapshots of the running test, freed by its teardown even when a check
 * fails midway (cmocka leaves the test by longjmp). */
static struct ctp_snap *snaps[8];
static size_t n_snaps;

static int free_snaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_snaps; i++)
		ctp_snap_free(snaps[i]);
	n_snaps = 0;
	return 0;
}

struct run {
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	uint64_t t0, t1; /* CLOCK_REALTIME around the run */
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Capture `proc` with `workers` and `split` (split_threads, 0: default)
 * in the config and `jflag` (or NULL) as -j; returns the decoded snapshot
 * or fails the test. */
static struct ctp_snap *capture_split(const char *proc, unsigned workers,
				      unsigned split, const char *jflag,
				      struct run *r)
{
	unsigned n = ++seq;
	PATH(r->cfg, "%s/cfg-%u.yaml", tmp, n);
	PATH(r->out, "%s/snap-%u.ctprof.zst", tmp, n);
	PATH(r->log, "%s/log-%u.txt", tmp, n);
	char unused[PATH_MAX];
	PATH(unused, "%s/from-config-%u.ctprof.zst", tmp, n);
	struct e2e_cfg c = {
		.proc = proc,
		.sys = FIX_SYS,
		.cgroup = FIX_CGROUP,
		.output = unused,
		.workers = workers,
		.split_threads = split,
		.required = true,
	};
	assert_int_equal(e2e_write_config(r->cfg, &c), 0);
	const char *args[] = {"--config",	   r->cfg, "-o", r->out,
			      jflag ? "-j" : NULL, jflag,  NULL};
	r->t0 = realtime_ns();
	int rc = e2e_run(args, NULL, r->log);
	r->t1 = realtime_ns();
	if (rc != 0) {
		e2e_show_file("ctprof-core stderr", r->log);
		fail_msg("ctprof-core --config %s -o %s exited with %d", r->cfg,
			 r->out, rc);
	}
	/* -o wins over the config's output. */
	assert_int_equal(access(unused, F_OK), -1);

	struct ctp_snap *s = NULL;
	char err[512];
	int ret = ctp_snap_open(r->out, MAX_SNAP, &s, err, sizeof(err));
	if (ret < 0)
		fail_msg("cannot read the snapshot: %s", err);
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

static struct ctp_snap *capture(const char *proc, unsigned workers,
				const char *jflag, struct run *r)
{
	return capture_split(proc, workers, 0, jflag, r);
}

/* ---- Checking a fixture snapshot ---------------------------------------- */

static const struct ctp_snap_field *
field(const struct ctp_snap *s, const char *name, uint8_t scope, uint8_t type)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	CHECK(f, "field %s missing", name);
	if (!f)
		return NULL;
	CHECK(f->scope == scope && f->type == type,
	      "field %s: scope %u type %u, expected %u %u", name, f->scope,
	      f->type, scope, type);
	CHECK(!strcmp(f->plugin, "procfs-stat"), "field %s: plugin %s", name,
	      f->plugin);
	return f->scope == scope && f->type == type ? f : NULL;
}

static void check_thread_field(const struct ctp_snap *s,
			       const struct ctp_snap_field *f, size_t row,
			       const struct exp_thread *e, int idx)
{
	struct ctp_value v = ctp_snap_get(s, f, row);
	const char *name = e2e_fdef[idx].name;
	if (e->absent & BIT(idx)) {
		CHECK(v.type == CTP_VALUE_ABSENT,
		      "tid %u: %s should be absent (type %u)", e->tid, name,
		      v.type);
		return;
	}
	CHECK(v.type == e2e_fdef[idx].type,
	      "tid %u: %s absent or mistyped (%u)", e->tid, name, v.type);
	if (v.type != e2e_fdef[idx].type)
		return;
	char buf[64];
	switch (v.type) {
	case CTP_TYPE_U64:
		CHECK(v.u64 == (uint64_t)e->v[idx],
		      "tid %u: %s = %" PRIu64 ", expected %" PRId64, e->tid,
		      name, v.u64, e->v[idx]);
		break;
	case CTP_TYPE_I64:
		CHECK(v.i64 == e->v[idx],
		      "tid %u: %s = %" PRId64 ", expected %" PRId64, e->tid,
		      name, v.i64, e->v[idx]);
		break;
	case CTP_TYPE_STRING:
		CHECK(e2e_bytes_eq(v.str, e->policy),
		      "tid %u: %s = '%.*s', expected '%s'", e->tid, name,
		      (int)v.str.len, v.str.ptr, e->policy);
		break;
	case CTP_TYPE_CHAR:
		CHECK(v.c == (unsigned char)e->state,
		      "tid %u: %s = '%c', expected '%c'", e->tid, name, v.c,
		      e->state);
		break;
	case CTP_TYPE_CPUSET:
		e2e_cpuset_str(&v, buf, sizeof(buf));
		CHECK(!strcmp(buf, e->cpus), "tid %u: %s = {%s}, expected {%s}",
		      e->tid, name, buf, e->cpus);
		break;
	}
}

/*
 * The process totals of <tgid>/stat on every process row, and the two
 * derived sums computed from them: exited threads and reaped children are
 * only there.
 */
static void check_process_totals(const struct ctp_snap *s)
{
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	const struct ctp_snap_field *f[N_PFIELDS], *pcpu, *ccpu;
	const struct ctp_value absent = {.type = CTP_VALUE_ABSENT};

	for (int k = 0; k < N_PFIELDS; k++)
		f[k] = field(s, pfdef[k].name, CTP_SCOPE_PROCESS, CTP_TYPE_U64);
	pcpu = field(s, "procfs.process.cpu_time", CTP_SCOPE_PROCESS,
		     CTP_TYPE_U64);
	ccpu = field(s, "procfs.children.cpu_time", CTP_SCOPE_PROCESS,
		     CTP_TYPE_U64);
	CHECK(pcpu && pcpu->n_terms == 2 && ccpu && ccpu->n_terms == 2,
	      "process and children cpu_time are not derived sums");
	for (size_t i = 0; i < pt->rows && i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		for (int k = 0; k < N_PFIELDS; k++) {
			struct ctp_value v =
				f[k] ? ctp_snap_get(s, f[k], i) : absent;
			CHECK(v.type == CTP_TYPE_U64 && v.u64 == p->v[k],
			      "tgid %u: %s = %" PRIu64 " (type %u), expected "
			      "%" PRIu64,
			      p->tgid, pfdef[k].name, v.u64, v.type, p->v[k]);
		}
		struct ctp_value pv =
			pcpu ? ctp_snap_value(s, pcpu, i) : absent;
		struct ctp_value cv =
			ccpu ? ctp_snap_value(s, ccpu, i) : absent;
		CHECK(pv.type == CTP_TYPE_U64 && pv.u64 == p->v[2] + p->v[3],
		      "tgid %u: procfs.process.cpu_time %" PRIu64, p->tgid,
		      pv.u64);
		CHECK(cv.type == CTP_TYPE_U64 && cv.u64 == p->v[6] + p->v[7],
		      "tgid %u: procfs.children.cpu_time %" PRIu64, p->tgid,
		      cv.u64);
	}
	/* What readers are told of the children's counters: the change of
	 * a reaped child's whole life is no rate (FORMAT.md §4). */
	for (int k = 0; k < N_PFIELDS; k++)
		CHECK(f[k] && !strcmp(f[k]->role,
				      strncmp(pfdef[k].name, "procfs.children.",
					      16)
					      ? ""
					      : "reaped"),
		      "%s: role '%s'", pfdef[k].name, f[k] ? f[k]->role : "?");
	CHECK(ccpu && !strcmp(ccpu->role, "reaped") && pcpu && !*pcpu->role,
	      "cpu_time roles");
	/* When each process was read: within the capture, on the boot
	 * clock (CLOCK_MONOTONIC's duration, plus a little). */
	const struct ctp_snap_header *h = ctp_snap_header(s);
	CHECK(pt->read_ns, "no processes.read_boottime_ns");
	for (size_t i = 0; pt->read_ns && i < pt->rows; i++)
		CHECK(pt->read_ns[i] >= h->start_boottime_ns &&
			      pt->read_ns[i] <= h->start_boottime_ns +
							h->duration_ns +
							100000000ull,
		      "tgid %" PRIu64 " read at %" PRIu64
		      ", outside the capture %" PRIu64 " + %" PRIu64,
		      pt->tgid[i], pt->read_ns[i], h->start_boottime_ns,
		      h->duration_ns);
}

static void check_fixture_snapshot(const struct ctp_snap *s, unsigned workers,
				   const char *proc, const struct run *r)
{
	nbad = 0;

	/* Header. */
	const struct ctp_snap_header *h = ctp_snap_header(s);
	struct utsname u;
	assert_int_equal(uname(&u), 0);
	CHECK(h->version == CTP_SNAP_VERSION, "version %" PRIu64, h->version);
	CHECK(!strcmp(h->tool_name, "ctprof-core"), "tool %s", h->tool_name);
	CHECK(*h->tool_version, "no tool version");
	CHECK(h->workers == workers, "workers %" PRIu64 ", expected %u",
	      h->workers, workers);
	CHECK(h->proc_root && !strcmp(h->proc_root, proc), "proc_root %s",
	      h->proc_root ? h->proc_root : "(nil)");
	CHECK(h->sys_root && !strcmp(h->sys_root, FIX_SYS), "sys_root %s",
	      h->sys_root ? h->sys_root : "(nil)");
	CHECK(h->cgroup_root && !strcmp(h->cgroup_root, FIX_CGROUP),
	      "cgroup_root %s", h->cgroup_root ? h->cgroup_root : "(nil)");
	CHECK(h->config_path && !strcmp(h->config_path, r->cfg),
	      "config_path %s", h->config_path ? h->config_path : "(nil)");
	CHECK(h->kernel_release && !strcmp(h->kernel_release, u.release),
	      "kernel_release %s",
	      h->kernel_release ? h->kernel_release : "(nil)");
	CHECK(!h->hostname, "hostname recorded without record_hostname");
	CHECK(r->t0 <= h->start_realtime_ns &&
		      h->start_realtime_ns <= h->end_realtime_ns &&
		      h->end_realtime_ns <= r->t1,
	      "capture times %" PRIu64 "..%" PRIu64 " outside the run %" PRIu64
	      "..%" PRIu64,
	      h->start_realtime_ns, h->end_realtime_ns, r->t0, r->t1);

	/* Fields: procfs-stat's table, nothing else. */
	CHECK(ctp_snap_n_fields(s) == N_PLUGIN_FIELDS, "%zu fields",
	      ctp_snap_n_fields(s));
	const struct ctp_snap_field *tf[F_COUNT];
	for (int i = 0; i < F_COUNT; i++)
		tf[i] = field(s, e2e_fdef[i].name, CTP_SCOPE_THREAD,
			      e2e_fdef[i].type);
	const struct ctp_snap_field *nr =
		field(s, E2E_NR_THREADS, CTP_SCOPE_PROCESS, CTP_TYPE_U64);
	/* procfs.cpu_time = utime + stime, computed by readers. */
	const struct ctp_snap_field *cpu =
		field(s, "procfs.cpu_time", CTP_SCOPE_THREAD, CTP_TYPE_U64);
	CHECK(cpu && cpu->n_terms == 2 && cpu->kind == CTP_KIND_COUNTER,
	      "procfs.cpu_time is not utime + stime");
	const struct ctp_snap_field *ut = field(s, "procfs.utime",
						CTP_SCOPE_THREAD, CTP_TYPE_U64),
				    *st = field(s, "procfs.stime",
						CTP_SCOPE_THREAD, CTP_TYPE_U64);

	/* Threads, in (tgid, tid) order. */
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	assert_non_null(tt);
	assert_non_null(ct);
	CHECK(tt->rows == N_THREADS, "%zu thread rows, expected %zu", tt->rows,
	      N_THREADS);
	for (size_t i = 0; cpu && ut && st && i < tt->rows; i++) {
		struct ctp_value vc = ctp_snap_value(s, cpu, i),
				 vu = ctp_snap_value(s, ut, i),
				 vs = ctp_snap_value(s, st, i);
		CHECK(vc.type == CTP_TYPE_U64 && vc.u64 == vu.u64 + vs.u64,
		      "row %zu: cpu_time is not utime + stime", i);
	}
	for (size_t i = 0; i < tt->rows && i < N_THREADS; i++) {
		const struct exp_thread *e = &exp_threads[i];
		CHECK(tt->tid[i] == e->tid && tt->tgid[i] == e->tgid,
		      "thread row %zu is %" PRIu64 "/%" PRIu64
		      ", expected %u/%u",
		      i, tt->tgid[i], tt->tid[i], e->tgid, e->tid);
		if (tt->tid[i] != e->tid)
			continue;
		CHECK(e2e_bytes_eq(tt->comm[i], e->comm),
		      "tid %u: comm '%.*s', expected '%s'", e->tid,
		      (int)tt->comm[i].len,
		      tt->comm[i].ptr ? tt->comm[i].ptr : "", e->comm);
		int64_t cg = tt->cgroup[i];
		if (!e->cgroup)
			CHECK(cg == -1, "tid %u: has cgroup row %" PRId64,
			      e->tid, cg);
		else
			CHECK(cg >= 0 && (size_t)cg < ct->rows &&
				      e2e_bytes_eq(ct->path[cg], e->cgroup),
			      "tid %u: cgroup row %" PRId64 ", expected %s",
			      e->tid, cg, e->cgroup);
		for (int f = 0; f < F_COUNT; f++)
			if (tf[f])
				check_thread_field(s, tf[f], i, e, f);
	}

	/* Processes; a thread's process name is its process row's comm. */
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	assert_non_null(pt);
	CHECK(pt->rows == N_PROCS, "%zu process rows", pt->rows);
	for (size_t i = 0; i < pt->rows && i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		CHECK(pt->tgid[i] == p->tgid, "process row %zu is %" PRIu64, i,
		      pt->tgid[i]);
		CHECK(e2e_bytes_eq(pt->comm[i], p->comm),
		      "tgid %u: comm '%.*s'", p->tgid, (int)pt->comm[i].len,
		      pt->comm[i].ptr ? pt->comm[i].ptr : "");
		CHECK(pt->nthreads[i] == p->nthreads,
		      "tgid %u: nthreads %" PRIu64, p->tgid, pt->nthreads[i]);
		size_t counted = 0;
		for (size_t t = 0; t < tt->rows; t++)
			counted += tt->tgid[t] == p->tgid;
		CHECK(counted == p->nthreads, "tgid %u: %zu thread rows",
		      p->tgid, counted);
		if (nr) {
			struct ctp_value v = ctp_snap_get(s, nr, i);
			CHECK(v.type == CTP_TYPE_U64 && v.u64 == p->nr_threads,
			      "tgid %u: nr_threads %" PRIu64 " (type %u)",
			      p->tgid, v.u64, v.type);
		}
	}
	check_process_totals(s);

	/* Cgroups: each expected path exactly once, nothing more. */
	CHECK(ct->rows == N_CGROUPS, "%zu cgroup rows", ct->rows);
	for (size_t k = 0; k < N_CGROUPS; k++) {
		size_t hits = 0;
		for (size_t i = 0; i < ct->rows; i++)
			hits += e2e_bytes_eq(ct->path[i], exp_cgroups[k]);
		CHECK(hits == 1, "cgroup %s appears %zu times", exp_cgroups[k],
		      hits);
	}

	/* The walk and its read failures. */
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	CHECK(rf->tgids_walked == EXP_TGIDS_WALKED, "tgids_walked %" PRIu64,
	      rf->tgids_walked);
	CHECK(rf->tgids_vanished == EXP_TGIDS_VANISHED,
	      "tgids_vanished %" PRIu64, rf->tgids_vanished);
	CHECK(rf->tids_walked == EXP_TIDS_WALKED, "tids_walked %" PRIu64,
	      rf->tids_walked);
	CHECK(rf->tids_recorded == N_THREADS, "tids_recorded %" PRIu64,
	      rf->tids_recorded);
	CHECK(rf->tids_vanished == EXP_TIDS_VANISHED, "tids_vanished %" PRIu64,
	      rf->tids_vanished);
	CHECK(rf->n_files == N_FILES, "%zu tallied files", rf->n_files);
	for (size_t k = 0; k < N_FILES; k++) {
		size_t i;
		for (i = 0; i < rf->n_files; i++)
			if (!strcmp(rf->file[i], exp_files[k].file))
				break;
		CHECK(i < rf->n_files, "no tally for %s", exp_files[k].file);
		if (i < rf->n_files)
			CHECK(rf->failures[i] == exp_files[k].failures,
			      "%s: %" PRIu64 " failures, expected %" PRIu64,
			      exp_files[k].file, rf->failures[i],
			      exp_files[k].failures);
	}
	CHECK(rf->dominant_file && !strcmp(rf->dominant_file, "status"),
	      "dominant_file %s",
	      rf->dominant_file ? rf->dominant_file : "(nil)");

	/* The plugin. */
	CHECK(ctp_snap_n_plugins(s) == 1, "%zu plugins", ctp_snap_n_plugins(s));
	if (ctp_snap_n_plugins(s) >= 1) {
		const struct ctp_snap_plugin *p = &ctp_snap_plugins(s)[0];
		char path[PATH_MAX];
		PATH(path, "%s/procfs-stat.so", CTP_TEST_PLUGIN_DIR);
		CHECK(!strcmp(p->name, "procfs-stat"), "plugin %s", p->name);
		CHECK(p->status == 1 &&
			      !strcmp(ctp_status_name(p->status), "loaded"),
		      "plugin status %u", p->status);
		CHECK(p->required, "plugin not marked required");
		CHECK(p->version && *p->version, "plugin has no version");
		CHECK(p->path && !strcmp(p->path, path), "plugin path %s",
		      p->path ? p->path : "(nil)");
		CHECK(!p->reason, "plugin has a reason: %s", p->reason);
		/* One call per recorded thread and per recorded process. */
		CHECK(p->calls == N_THREADS + N_PROCS, "plugin calls %" PRIu64,
		      p->calls);
		CHECK(p->errors == 0, "plugin errors %" PRIu64, p->errors);
		CHECK(p->n_summary == N_SUMMARY, "%zu summary counters",
		      p->n_summary);
		for (size_t k = 0; k < N_SUMMARY; k++) {
			size_t i;
			for (i = 0; i < p->n_summary; i++)
				if (!strcmp(p->summary_name[i],
					    exp_summary[k].name))
					break;
			CHECK(i < p->n_summary &&
				      p->summary[i] == exp_summary[k].value,
			      "summary %s: %" PRIu64 ", expected %" PRIu64,
			      exp_summary[k].name,
			      i < p->n_summary ? p->summary[i] : UINT64_MAX,
			      exp_summary[k].value);
		}
	}
	assert_int_equal(nbad, 0);
}

static void fixture_capture(void **state)
{
	(void)state;
	struct run r;
	struct ctp_snap *s = capture(FIX_PROC, 1, NULL, &r);
	check_fixture_snapshot(s, 1, FIX_PROC, &r);
}

/*
 * A generated proc tree, shared by the tests below and grown on demand:
 * single-thread processes whose files are copies of 986's. File creation
 * is slow on some disks, so it starts small.
 */
static char big_tree[PATH_MAX];
static unsigned big_procs;

static int grow_big_tree(unsigned nprocs)
{
	static const char *const names[] = {"stat", "status", "cgroup"};
	char *text[3] = {NULL, NULL, NULL};
	size_t len[3];
	char path[PATH_MAX];
	int r = 0;
	for (int i = 0; i < 3 && r == 0; i++) {
		PATH(path, "%s/985/task/986/%s", FIX_PROC, names[i]);
		r = e2e_read_file(path, &text[i], &len[i]);
	}
	if (r == 0 && !big_procs) {
		PATH(big_tree, "%s/big-proc", tmp);
		if (mkdir(big_tree, 0755) < 0)
			r = -errno;
	}
	for (; big_procs < nprocs && r == 0; big_procs++) {
		unsigned tgid = 10000 + big_procs;
		char comm[32];
		int n = snprintf(comm, sizeof(comm), "gen-%u\n", tgid);
		PATH(path, "%s/%u", big_tree, tgid);
		if (mkdir(path, 0755) < 0) {
			r = -errno;
			break;
		}
		PATH(path, "%s/%u/comm", big_tree, tgid);
		r = e2e_write_file(path, comm, (size_t)n);
		PATH(path, "%s/%u/stat", big_tree, tgid);
		if (r == 0)
			r = e2e_write_file(path, text[0], len[0]);
		PATH(path, "%s/%u/task", big_tree, tgid);
		if (r == 0 && mkdir(path, 0755) < 0)
			r = -errno;
		PATH(path, "%s/%u/task/%u", big_tree, tgid, tgid);
		if (r == 0 && mkdir(path, 0755) < 0)
			r = -errno;
		PATH(path, "%s/%u/task/%u/comm", big_tree, tgid, tgid);
		if (r == 0)
			r = e2e_write_file(path, comm, (size_t)n);
		for (int i = 0; i < 3 && r == 0; i++) {
			PATH(path, "%s/%u/task/%u/%s", big_tree, tgid, tgid,
			     names[i]);
			r = e2e_write_file(path, text[i], len[i]);
		}
	}
	for (int i = 0; i < 3; i++)
		free(text[i]);
	return r;
}

/* ---- Same content whatever the worker count ----------------------------- */

static bool value_eq(const struct ctp_value *a, const struct ctp_value *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case CTP_VALUE_ABSENT:
		return true;
	case CTP_TYPE_U64:
		return a->u64 == b->u64;
	case CTP_TYPE_I64:
		return a->i64 == b->i64;
	case CTP_TYPE_BOOL:
		return a->b == b->b;
	case CTP_TYPE_CHAR:
		return a->c == b->c;
	case CTP_TYPE_STRING:
		return a->str.len == b->str.len &&
		       !memcmp(a->str.ptr, b->str.ptr, a->str.len);
	case CTP_TYPE_CPUSET:
		return a->cpuset.n == b->cpuset.n &&
		       !memcmp(a->cpuset.r, b->cpuset.r,
			       2 * a->cpuset.n * sizeof(*a->cpuset.r));
	}
	return false;
}

static bool bytes_eq(struct ctp_bytes a, struct ctp_bytes b)
{
	if (!a.ptr || !b.ptr)
		return !a.ptr && !b.ptr;
	return a.len == b.len && !memcmp(a.ptr, b.ptr, a.len);
}

static struct ctp_bytes thread_cgroup(const struct ctp_snap *s, size_t row)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	if (tt->cgroup[row] < 0)
		return (struct ctp_bytes){NULL, 0};
	return ct->path[tt->cgroup[row]];
}

/* Same rows in the same order with the same values (cgroups compared by
 * path: their row numbers follow the order workers met them). */
static void check_same_content(const struct ctp_snap *a,
			       const struct ctp_snap *b, const char *what)
{
	nbad = 0;
	CHECK(ctp_snap_n_fields(a) == ctp_snap_n_fields(b), "%s: fields", what);
	static const uint8_t scopes[] = {CTP_SCOPE_THREAD, CTP_SCOPE_PROCESS,
					 CTP_SCOPE_CGROUP, CTP_SCOPE_HOST};
	for (size_t si = 0; si < sizeof(scopes); si++) {
		const struct ctp_snap_table *ta = ctp_snap_table(a, scopes[si]);
		const struct ctp_snap_table *tb = ctp_snap_table(b, scopes[si]);
		CHECK(ta->rows == tb->rows, "%s: scope %u has %zu vs %zu rows",
		      what, scopes[si], ta->rows, tb->rows);
		if (ta->rows != tb->rows)
			continue;
		for (size_t r = 0; r < ta->rows; r++) {
			size_t rb = r;
			switch (scopes[si]) {
			case CTP_SCOPE_THREAD:
				CHECK(ta->tid[r] == tb->tid[r] &&
					      ta->tgid[r] == tb->tgid[r] &&
					      bytes_eq(ta->comm[r],
						       tb->comm[r]) &&
					      bytes_eq(thread_cgroup(a, r),
						       thread_cgroup(b, r)),
				      "%s: thread row %zu differs", what, r);
				break;
			case CTP_SCOPE_PROCESS:
				CHECK(ta->tgid[r] == tb->tgid[r] &&
					      ta->nthreads[r] ==
						      tb->nthreads[r] &&
					      bytes_eq(ta->comm[r],
						       tb->comm[r]),
				      "%s: process row %zu differs", what, r);
				break;
			case CTP_SCOPE_CGROUP:
				for (rb = 0; rb < tb->rows; rb++)
					if (bytes_eq(ta->path[r], tb->path[rb]))
						break;
				CHECK(rb < tb->rows, "%s: cgroup %.*s missing",
				      what, (int)ta->path[r].len,
				      ta->path[r].ptr);
				break;
			}
			if (rb >= tb->rows)
				continue;
			for (size_t fi = 0; fi < ctp_snap_n_fields(a); fi++) {
				const struct ctp_snap_field *fa =
					&ctp_snap_fields(a)[fi];
				if (fa->scope != scopes[si])
					continue;
				const struct ctp_snap_field *fb =
					ctp_snap_field_find(b, fa->name);
				CHECK(fb && fb->type == fa->type,
				      "%s: field %s", what, fa->name);
				if (!fb)
					continue;
				struct ctp_value va = ctp_snap_get(a, fa, r);
				struct ctp_value vb = ctp_snap_get(b, fb, rb);
				CHECK(value_eq(&va, &vb),
				      "%s: %s differs in row %zu", what,
				      fa->name, r);
			}
		}
	}
	const struct ctp_snap_readfail *ra = ctp_snap_readfail(a);
	const struct ctp_snap_readfail *rb = ctp_snap_readfail(b);
	CHECK(ra->tids_walked == rb->tids_walked &&
		      ra->tids_recorded == rb->tids_recorded &&
		      ra->tids_vanished == rb->tids_vanished &&
		      ra->tgids_walked == rb->tgids_walked &&
		      ra->tgids_vanished == rb->tgids_vanished &&
		      ra->n_files == rb->n_files,
	      "%s: read failure tallies differ", what);
	for (size_t i = 0; i < ra->n_files && i < rb->n_files; i++)
		CHECK(!strcmp(ra->file[i], rb->file[i]) &&
			      ra->failures[i] == rb->failures[i],
		      "%s: tally of %s differs", what, ra->file[i]);
	assert_int_equal(nbad, 0);
}

static void workers_same_snapshot(void **state)
{
	(void)state;
	struct run r1, r2, r3;
	struct ctp_snap *s1 = capture(FIX_PROC, 1, NULL, &r1);
	struct ctp_snap *s2 = capture(FIX_PROC, 2, NULL, &r2);
	/* -j overrides the config. */
	struct ctp_snap *s3 = capture(FIX_PROC, 1, "3", &r3);
	check_fixture_snapshot(s2, 2, FIX_PROC, &r2);
	check_fixture_snapshot(s3, 3, FIX_PROC, &r3);
	check_same_content(s1, s2, "workers 1 vs 2");
	check_same_content(s1, s3, "workers 1 vs 3");

	/* Enough processes that the workers interleave for sure. */
	assert_int_equal(grow_big_tree(250), 0);
	struct ctp_snap *b1 = capture(big_tree, 1, NULL, &r1);
	struct ctp_snap *b4 = capture(big_tree, 4, NULL, &r2);
	assert_int_equal(ctp_snap_table(b1, CTP_SCOPE_THREAD)->rows, big_procs);
	check_same_content(b1, b4, "generated tree, workers 1 vs 4");
}

/* Processes split among workers (split_threads: 1, every thread its own
 * chunk, so every multi-threaded process is split) give the same snapshot,
 * every value checked, as one worker walking them whole. */
static void split_same_snapshot(void **state)
{
	(void)state;
	struct run r1, r2, r3;
	struct ctp_snap *s1 = capture(FIX_PROC, 1, NULL, &r1);
	struct ctp_snap *s2 = capture_split(FIX_PROC, 2, 1, NULL, &r2);
	struct ctp_snap *s3 = capture_split(FIX_PROC, 3, 1, NULL, &r3);
	check_fixture_snapshot(s2, 2, FIX_PROC, &r2);
	check_fixture_snapshot(s3, 3, FIX_PROC, &r3);
	check_same_content(s1, s2, "workers 1 vs 2, split_threads 1");
	check_same_content(s1, s3, "workers 1 vs 3, split_threads 1");
}

/* ---- show and dump ------------------------------------------------------ */

static void show_and_dump(void **state)
{
	(void)state;
	struct run r;
	capture(FIX_PROC, 1, NULL, &r);

	char out[PATH_MAX], err[PATH_MAX];
	PATH(out, "%s/show.out", tmp);
	PATH(err, "%s/show.err", tmp);
	const char *show[] = {"show", r.out, NULL};
	int rc = e2e_run(show, out, err);
	if (rc != 0)
		e2e_show_file("show stderr", err);
	assert_int_equal(rc, 0);
	char *text;
	assert_int_equal(e2e_read_file(out, &text, NULL), 0);
	static const char *const names[] = {"my (weird) name)", "kworker/3:1H",
					    "gc thread", "worker-1"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strstr(text, names[i])) {
			e2e_show_file("show output", out);
			fail_msg("show does not print '%s' verbatim", names[i]);
		}
	free(text);

	const char *dump[] = {"dump", r.out, NULL};
	rc = e2e_run(dump, out, err);
	if (rc != 0)
		e2e_show_file("dump stderr", err);
	assert_int_equal(rc, 0);
	assert_int_equal(e2e_read_file(out, &text, NULL), 0);
	/* A JSON string: parentheses and spaces need no escaping. */
	assert_non_null(strstr(text, "\"my (weird) name)\""));
	assert_non_null(strstr(text, "\"kworker/3:1H\""));
	free(text);
}

/* ---- Read failures other than ENOENT ------------------------------------ */

static size_t thread_row(const struct ctp_snap *s, uint32_t tid)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	for (size_t i = 0; i < tt->rows; i++)
		if (tt->tid[i] == tid)
			return i;
	fail_msg("tid %u not recorded", tid);
	return 0;
}

static uint64_t tally(const struct ctp_snap *s, const char *file)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	for (size_t i = 0; i < rf->n_files; i++)
		if (!strcmp(rf->file[i], file))
			return rf->failures[i];
	fail_msg("no tally for %s", file);
	return 0;
}

/*
 * In a copy of the fixture, 986's status becomes a directory (read fails
 * with EISDIR, even for root) and, when not root, 987's status gets mode
 * 000 (EACCES). Both threads stay, with their stat fields and without their
 * status fields, and each failure is tallied under "status".
 */
static void unreadable_status(void **state)
{
	(void)state;
	char copy[PATH_MAX], p[PATH_MAX];
	PATH(copy, "%s/proc-unreadable", tmp);
	assert_int_equal(e2e_copy_tree(FIX_PROC, copy), 0);

	PATH(p, "%s/985/task/986/status", copy);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	uint32_t tids[2] = {986, 0};
	if (geteuid() != 0) {
		PATH(p, "%s/985/task/987/status", copy);
		assert_int_equal(chmod(p, 0), 0);
		tids[1] = 987;
	} else {
		print_message("[ NOTE     ] running as root, which reads "
			      "mode-000 files: skipping the EACCES part, "
			      "checking EISDIR only\n");
	}

	struct run r;
	struct ctp_snap *s = capture(copy, 1, NULL, &r);
	nbad = 0;
	uint64_t fails = 1 + 1 + (tids[1] != 0);
	CHECK(tally(s, "status") == fails,
	      "status failures %" PRIu64 ", expected %" PRIu64,
	      tally(s, "status"), fails);
	CHECK(tally(s, "stat") == 0, "stat failures");
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	CHECK(rf->tids_recorded == N_THREADS && rf->tids_vanished == 1,
	      "recorded %" PRIu64 " vanished %" PRIu64, rf->tids_recorded,
	      rf->tids_vanished);
	CHECK(ctp_snap_plugins(s)[0].errors == 0, "plugin errors %" PRIu64,
	      ctp_snap_plugins(s)[0].errors);
	for (int k = 0; k < 2 && tids[k]; k++) {
		const struct exp_thread *e = NULL;
		for (size_t i = 0; i < N_THREADS; i++)
			if (exp_threads[i].tid == tids[k])
				e = &exp_threads[i];
		assert_non_null(e);
		struct exp_thread x = *e;
		x.absent |= STATUS_FIELDS;
		size_t row = thread_row(s, x.tid);
		for (int f = 0; f < F_COUNT; f++) {
			const struct ctp_snap_field *sf =
				ctp_snap_field_find(s, e2e_fdef[f].name);
			assert_non_null(sf);
			check_thread_field(s, sf, row, &x, f);
		}
	}
	assert_int_equal(nbad, 0);
	assert_int_equal(e2e_rm_rf(copy), 0);
}

/* ---- SIGTERM / SIGINT --------------------------------------------------- */

/* 1 when the exec'ed ctprof-core catches both SIGINT and SIGTERM. */
static int handlers_installed(pid_t pid)
{
	char path[64], *text;
	PATH(path, "/proc/%d/comm", (int)pid);
	if (e2e_read_file(path, &text, NULL) < 0)
		return 0;
	bool ours = !strcmp(text, "ctprof-core\n");
	free(text);
	if (!ours)
		return 0;
	PATH(path, "/proc/%d/status", (int)pid);
	if (e2e_read_file(path, &text, NULL) < 0)
		return 0;
	char *p = strstr(text, "\nSigCgt:\t");
	unsigned long long mask = p ? strtoull(p + 9, NULL, 16) : 0;
	free(text);
	unsigned long long want =
		(1ull << (SIGINT - 1)) | (1ull << (SIGTERM - 1));
	return (mask & want) == want;
}

/*
 * Interrupt a capture of the generated tree as soon as its handlers are in:
 * exit 130 and nothing left in the output directory. If it finished first,
 * the tree was too small for this machine: grow it fourfold and try again;
 * fail if even the largest one finishes.
 */
static void stop_signal(int sig)
{
	unsigned nprocs = big_procs ? big_procs : 250;
	for (int attempt = 0; attempt < 4; attempt++, nprocs *= 4) {
		char outdir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX];
		char log[PATH_MAX];
		PATH(outdir, "%s/out-%d-%u", tmp, sig, nprocs);
		PATH(out, "%s/snap.ctprof.zst", outdir);
		PATH(cfg, "%s/big-%d.yaml", tmp, sig);
		PATH(log, "%s/big-%d.log", tmp, sig);
		assert_int_equal(grow_big_tree(nprocs), 0);
		assert_int_equal(mkdir(outdir, 0755), 0);
		struct e2e_cfg c = {
			.proc = big_tree,
			.sys = FIX_SYS,
			.cgroup = FIX_CGROUP,
			.workers = 1,
			.required = true,
		};
		assert_int_equal(e2e_write_config(cfg, &c), 0);

		const char *args[] = {"--config", cfg, "-o", out, NULL};
		pid_t pid;
		int st = 0;
		assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
		bool exited = false;
		for (int i = 0; i < 100000 && !handlers_installed(pid); i++) {
			if (waitpid(pid, &st, WNOHANG) == pid) {
				exited = true;
				break;
			}
			usleep(100);
		}
		if (!exited) {
			assert_int_equal(kill(pid, sig), 0);
			assert_int_equal(e2e_wait(pid, &st), 0);
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			print_message("[ NOTE     ] capture of %u processes "
				      "finished before signal %d; retrying "
				      "larger\n",
				      nprocs, sig);
			assert_int_equal(e2e_rm_rf(outdir), 0);
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 130) {
			e2e_show_file("ctprof-core stderr", log);
			fail_msg(
				"signal %d: wait status %#x, expected exit 130",
				sig, st);
		}
		size_t n = 99;
		assert_int_equal(e2e_count_entries(outdir, &n), 0);
		if (n != 0) {
			e2e_show_file("ctprof-core stderr", log);
			fail_msg("signal %d: %zu files left in %s", sig, n,
				 outdir);
		}
		assert_int_equal(e2e_rm_rf(outdir), 0);
		return;
	}
	fail_msg("signal %d: every capture finished before the signal", sig);
}

static void sigterm_leaves_nothing(void **state)
{
	(void)state;
	stop_signal(SIGTERM);
}

static void sigint_leaves_nothing(void **state)
{
	(void)state;
	stop_signal(SIGINT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expectations_match_fixture),
		cmocka_unit_test_teardown(fixture_capture, free_snaps),
		cmocka_unit_test_teardown(workers_same_snapshot, free_snaps),
		cmocka_unit_test_teardown(split_same_snapshot, free_snaps),
		cmocka_unit_test_teardown(show_and_dump, free_snaps),
		cmocka_unit_test_teardown(unreadable_status, free_snaps),
		cmocka_unit_test(sigterm_leaves_nothing),
		cmocka_unit_test(sigint_leaves_nothing),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
