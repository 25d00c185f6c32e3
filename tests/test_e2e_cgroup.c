/* SPDX-License-Identifier: MIT */
/*
 * A thread's cgroup identity, end to end. After listing task/, the engine
 * reads one thread's cgroup file per process -- the *probe*: the first
 * listed tid that is not the leader, or the leader when it is the only
 * thread -- and gives that v2 path to every thread of the process when the
 * kernel guarantees they share it (the path is a "domain" cgroup, or the
 * root without a threaded child, and has no "/.."); otherwise it reads each
 * task/<tid>/cgroup. The leader is not the probe because a zombie leader
 * (PF_EXITING) is skipped when its process is migrated: its cgroup file,
 * and <tgid>/cgroup, can name a cgroup its live threads have left.
 *
 * The fixture (tests/fixtures/cg-share, see its README) has threads other
 * than the probe whose own cgroup file is missing or names another cgroup
 * although their process is in a "domain" cgroup. That violates kernel
 * semantics on purpose: it is the only way to see, from the snapshot,
 * which file the engine read.
 *
 * Run as `test_e2e_cgroup live`, it captures the live host instead: every
 * thread's path against its own cgroup file, then (as root, when it can
 * make cgroups) a real zombie leader left behind by a migration. Skipped,
 * 77, without a cgroup2 mount. The engine tells a zombie leader by the
 * <tgid>/stat it reads up front; while a process source is loaded (the
 * test plugin abi-procsrc) it reads none, and tells it by the leader's exe
 * link: the zombie's threads still get their own cgroup, and a live
 * process's threads still read no cgroup file of their own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define FIX	       CTP_TEST_FIXTURES "/cg-share"
#define FIX_PROC       FIX "/proc"
#define FIX_CGROUP     FIX "/cgroup"
#define FIX_OUTSIDE    FIX "/outside.service"
#define FIX_SYS	       CTP_TEST_FIXTURES "/sys"
#define SKIP	       77
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

/*
 * The cgroup roots a capture is given. TYPED is the fixture's own tree (no
 * threaded child of the root); THR_ROOT and DOT_ROOT are copies of it with
 * one threaded child added at the root, named "rt.threads" and ".rt"; NONE
 * is a path that does not exist. Each root has outside.service/ next to it,
 * so that "/../outside.service" can be looked up from it.
 */
enum scen { TYPED, THR_ROOT, DOT_ROOT, NONE, N_SCEN };
static const char *const scen_name[N_SCEN] = {
	"fixture cgroup root", "root with a threaded child",
	"root with a threaded .child", "no cgroup root"};

#define A     "/system.slice/a.service"
#define B     "/system.slice/b.service"
#define POOL  "/app.slice/pool"
#define Q     "/batch.slice/q"
#define NT    "/system.slice/notype.service"
#define STRAY "/stray.scope"
#define GHOST "/system.slice/ghost.service"
#define OUT   "/../outside.service"
#define OLD   "/old.service"
#define NEW   "/new.service"

struct exp_thread {
	uint32_t tgid, tid;
	const char *comm;
	/* The 0:: path of the thread's own task/<tid>/cgroup; NULL when the
	 * file is missing. */
	const char *own;
	/* The path the snapshot must give it per scenario; NULL: none. */
	const char *cg[N_SCEN];
};

/*
 * Recorded threads, in the snapshot's (tgid, tid) order. "INCONSISTENT"
 * marks a thread whose own file deliberately contradicts the kernel (its
 * process is in a cgroup that holds whole processes); none of them is a
 * probe.
 */
static const struct exp_thread exp_threads[] = {
	/* (d) the root: shared while no child of the root is threaded. 21
	 * is the probe. */
	{20, 20, "root-proc", "/", {"/", "/", "/", "/"}},
	{20, 21, "root-probe", "/", {"/", "/", "/", "/"}},
	/* INCONSISTENT while the root has no threaded child. */
	{20, 22, "root-stray", STRAY, {"/", STRAY, STRAY, STRAY}},
	/* (a) a "domain" cgroup: the probe's path (101), whatever the other
	 * threads' own files say or whether they exist. */
	{100, 100, "a-main", A, {A, A, A, A}},
	{100, 101, "a-probe", A, {A, A, A, A}},
	{100, 102, "a-nocg", NULL, {A, A, A, NULL}}, /* INCONSISTENT */
	{100, 103, "a-other", B, {A, A, A, B}},	     /* INCONSISTENT */
	/* The same "domain" path again: decided once, still shared. The
	 * pid space wrapped: 107 sorts before the leader and is the probe. */
	{110, 107, "a2-wrap", A, {A, A, A, A}},
	{110, 110, "a-second", A, {A, A, A, A}},
	{110, 111, "a2-nocg", NULL, {A, A, A, NULL}}, /* INCONSISTENT */
	/* (h) A path with "/.." lies outside our cgroup namespace: never
	 * shared, though <root>/../outside.service/cgroup.type says
	 * "domain". */
	{120, 120, "out-main", OUT, {OUT, OUT, OUT, OUT}},
	{120, 121, "out-probe", OUT, {OUT, OUT, OUT, OUT}},
	{120, 122, "out-other", B, {B, B, B, B}}, /* INCONSISTENT */
	/* (b) "domain threaded": each thread's own file. The leader 200 and
	 * the probe 201, both in POOL, vanished. */
	{200,
	 202,
	 "pool-t2",
	 POOL "/t2",
	 {POOL "/t2", POOL "/t2", POOL "/t2", POOL "/t2"}},
	{200,
	 203,
	 "pool-t1b",
	 POOL "/t1",
	 {POOL "/t1", POOL "/t1", POOL "/t1", POOL "/t1"}},
	{200,
	 204,
	 "pool-t2b",
	 POOL "/t2",
	 {POOL "/t2", POOL "/t2", POOL "/t2", POOL "/t2"}},
	/* (c) "threaded" itself (the probe 301 is in w2): each thread's own
	 * file. */
	{300, 300, "q-main", Q "/w1", {Q "/w1", Q "/w1", Q "/w1", Q "/w1"}},
	{300, 301, "q-w2", Q "/w2", {Q "/w2", Q "/w2", Q "/w2", Q "/w2"}},
	/* No cgroup.type to read for the probe's path: in doubt, each
	 * thread's own file. */
	{400, 400, "notype", NT, {NT, NT, NT, NT}},
	{400, 401, "nt-probe", NT, {NT, NT, NT, NT}},
	{400, 402, "nt-other", NT "/x", {NT "/x", NT "/x", NT "/x", NT "/x"}},
	/* (i) A zombie leader left in OLD when its process was migrated to
	 * NEW (the kernel skips an exiting task). Not an inconsistency: the
	 * kernel does this. The leader takes the shared path too: a zombie
	 * runs nothing and has no cgroup of its own worth profiling; its
	 * process lives in NEW. The pid space wrapped here too: the probe is
	 * 595, not the second listed tid (the leader). */
	{600, 595, "zmb-wrap", NEW, {NEW, NEW, NEW, NEW}},
	{600, 600, "zmb-main", OLD, {NEW, NEW, NEW, OLD}},
	{600, 601, "zmb-w1", NEW, {NEW, NEW, NEW, NEW}},
	{600, 602, "zmb-w2", NEW, {NEW, NEW, NEW, NEW}},
};
#define N_THREADS (sizeof(exp_threads) / sizeof(exp_threads[0]))

/* Per process: its probe, the probe's path and that path's cgroup.type,
 * and the path of <tgid>/cgroup, which is the leader's (as in the kernel,
 * task/<tgid>/cgroup says the same). */
static const struct {
	uint32_t tgid, probe;
	const char *path;
	const char *type; /* NULL: no cgroup.type (the root has none) */
	const char *leader;
} exp_procs[] = {
	{20, 21, "/", NULL, "/"},
	{100, 101, A, "domain", A},
	{110, 107, A, "domain", A},
	{120, 121, OUT, "domain", OUT},
	{200, 201, POOL, "domain threaded", POOL},
	{300, 301, Q "/w2", "threaded", Q "/w1"},
	{400, 401, NT, NULL, NT},
	{500, 500, GHOST, "domain", GHOST},
	{600, 595, NEW, "domain", OLD},
};
#define N_PROCS (sizeof(exp_procs) / sizeof(exp_procs[0]))

/* (f) Paths no recorded thread is in: POOL (200's leader and its probe 201
 * vanished; the probe's file was read, but POOL is not "whole") and GHOST
 * (500's only thread, its own probe, vanished; its path is "whole"). Neither
 * may be in the cgroups table. */
static const char *const never_cgroups[] = {POOL, GHOST};

/* The walk: 9 tgid dirs, all with a comm; 28 tid dirs, 200, 201 and 500
 * without a comm (vanished). 500 has no other thread, so the process
 * recorded nothing and is dropped as vanished too. */
#define EXP_TGIDS_WALKED   9
#define EXP_TGIDS_VANISHED 1
#define EXP_TIDS_WALKED	   28
#define EXP_TIDS_VANISHED  3

/* ---- Reading the fixture text (independently of the engine) ------------- */

static char *text_at(const char *root, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static char *text_at(const char *root, const char *fmt, ...)
{
	char rel[512], path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	PATH(path, "%s/%s", root, rel);
	char *buf = NULL;
	if (e2e_read_file(path, &buf, NULL) < 0)
		return NULL;
	return buf;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A cgroup.type's first line names a domain that holds whole processes. */
static bool says_domain(const char *type)
{
	return type && !strcmp(type, "domain");
}

/* The 0:: path of FIX_PROC/<rel> ("(no file)", "(no 0:: line)"). */
static const char *fixture_v2(const char *rel, char *buf, size_t len)
{
	char *text = text_at(FIX_PROC, "%s", rel);
	const char *v2 = text ? e2e_cgroup_v2(text, buf, len) : NULL;
	if (!v2)
		snprintf(buf, len, "%s", text ? "(no 0:: line)" : "(no file)");
	free(text);
	return buf;
}

/* The probe of fixture process tgid by the rule, from its task/ listing:
 * the lowest tid that is not tgid, else tgid; 0 when task/ is unreadable. */
static uint32_t fixture_probe(uint32_t tgid)
{
	char dir[PATH_MAX];
	PATH(dir, "%s/%u/task", FIX_PROC, tgid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	uint32_t probe = 0;
	bool leader = false;
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		unsigned long v = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end)
			continue;
		if (v == tgid)
			leader = true;
		else if (!probe || v < probe)
			probe = (uint32_t)v;
	}
	closedir(d);
	return probe ? probe : leader ? tgid : 0;
}

/* The first line of a fixture-side text file, or NULL. */
static char *first_line(char *text)
{
	if (text)
		text[strcspn(text, "\n")] = '\0';
	return text;
}

static char roots[N_SCEN][PATH_MAX];

/* The expectations above say what the fixture files say. */
static void expectations_match_fixture(void **state)
{
	(void)state;
	nbad = 0;
	char buf[512], rel[64];
	for (size_t i = 0; i < N_THREADS; i++) {
		const struct exp_thread *e = &exp_threads[i];
		char *comm =
			text_at(FIX_PROC, "%u/task/%u/comm", e->tgid, e->tid);
		char *cg =
			text_at(FIX_PROC, "%u/task/%u/cgroup", e->tgid, e->tid);
		CHECK(comm && strcspn(comm, "\n") == strlen(e->comm) &&
			      !strncmp(comm, e->comm, strlen(e->comm)),
		      "tid %u: comm file says '%s'", e->tid,
		      comm ? comm : "(none)");
		const char *v2 =
			cg ? e2e_cgroup_v2(cg, buf, sizeof(buf)) : NULL;
		CHECK(same(v2, e->own), "tid %u: own cgroup file says %s",
		      e->tid, cg ? v2 ? v2 : "(no 0:: line)" : "(no file)");
		/* Per-thread reading must give the own path: the NONE
		 * column is what a thread's own file says. */
		CHECK(same(e->cg[NONE], e->own), "tid %u: NONE is not own",
		      e->tid);
		free(comm);
		free(cg);
	}
	for (size_t i = 0; i < N_PROCS; i++) {
		uint32_t tgid = exp_procs[i].tgid, probe = exp_procs[i].probe;
		CHECK(fixture_probe(tgid) == probe,
		      "tgid %u: the rule picks probe %u, expected %u", tgid,
		      fixture_probe(tgid), probe);
		snprintf(rel, sizeof(rel), "%u/task/%u/cgroup", tgid, probe);
		CHECK(!strcmp(fixture_v2(rel, buf, sizeof(buf)),
			      exp_procs[i].path),
		      "tgid %u: probe's cgroup says %s", tgid, buf);
		/* <tgid>/cgroup is the leader's, as in the kernel. */
		snprintf(rel, sizeof(rel), "%u/cgroup", tgid);
		CHECK(!strcmp(fixture_v2(rel, buf, sizeof(buf)),
			      exp_procs[i].leader),
		      "tgid %u: cgroup says %s", tgid, buf);
		snprintf(rel, sizeof(rel), "%u/task/%u/cgroup", tgid, tgid);
		CHECK(!strcmp(fixture_v2(rel, buf, sizeof(buf)),
			      exp_procs[i].leader),
		      "tgid %u: the leader's cgroup says %s", tgid, buf);
		char *type = first_line(text_at(FIX_CGROUP, "%s/cgroup.type",
						exp_procs[i].path + 1));
		CHECK(same(type, exp_procs[i].type),
		      "cgroup %s: cgroup.type says %s", exp_procs[i].path,
		      type ? type : "(no file)");
		free(type);
	}
	/* (i) discriminates: reading <tgid>/cgroup or the leader's file
	 * would have shared OLD, a "domain" too. 600's leader is a zombie. */
	char *old_type =
		first_line(text_at(FIX_CGROUP, "old.service/cgroup.type"));
	char *zstat = text_at(FIX_PROC, "600/task/600/stat");
	char *paren = zstat ? strrchr(zstat, ')') : NULL;
	CHECK(says_domain(old_type) && paren && !strncmp(paren, ") Z ", 4),
	      "600: the leader should be a zombie in a domain %s", OLD);
	free(old_type);
	free(zstat);
	/* The threaded children of the root the THR_ROOT and DOT_ROOT copies
	 * add must not be in the fixture itself. */
	char *t1 = text_at(FIX_CGROUP, "rt.threads/cgroup.type");
	char *t2 = text_at(FIX_CGROUP, ".rt/cgroup.type");
	CHECK(!t1 && !t2, "the fixture root already has a threaded child");
	free(t1);
	free(t2);
	/* (h) discriminates: from every root the engine is given, the
	 * "/.." path can be looked up and says "domain", so only the "/.."
	 * rule keeps it from being shared. */
	for (int sc = 0; sc < N_SCEN; sc++) {
		if (sc == NONE)
			continue;
		char *t = first_line(
			text_at(roots[sc], "%s/cgroup.type", &OUT[1]));
		CHECK(says_domain(t), "%s: %s/cgroup.type says %s",
		      scen_name[sc], OUT, t ? t : "(no file)");
		free(t);
	}
	/* No direct child of the fixture root says "threaded". */
	DIR *d = opendir(FIX_CGROUP);
	assert_non_null(d);
	size_t kids = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char sub[PATH_MAX];
		struct stat st;
		PATH(sub, "%s/%s", FIX_CGROUP, e->d_name);
		if (e->d_name[0] == '.' || stat(sub, &st) ||
		    !S_ISDIR(st.st_mode))
			continue;
		char *t = text_at(FIX_CGROUP, "%s/cgroup.type", e->d_name);
		CHECK(t && !strstr(t, "threaded"), "%s: cgroup.type %s",
		      e->d_name, t ? t : "(none)");
		free(t);
		kids++;
	}
	closedir(d);
	CHECK(kids > 0, "the fixture root has no child cgroup");
	/* The vanished threads: neither stat nor comm (the walk names a
	 * thread from either). */
	static const uint32_t gone[][2] = {{200, 200}, {200, 201}, {500, 500}};
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		char *c = text_at(FIX_PROC, "%u/task/%u/comm", gone[i][0],
				  gone[i][1]);
		char *s = text_at(FIX_PROC, "%u/task/%u/stat", gone[i][0],
				  gone[i][1]);
		CHECK(!c && !s, "tid %u should have no stat nor comm",
		      gone[i][1]);
		free(c);
		free(s);
	}
	assert_int_equal(nbad, 0);
}

/* ---- Running captures --------------------------------------------------- */

static char tmp[PATH_MAX];
static unsigned seq;

/* A copy of the fixture cgroup root, at <tmp>/<name>/cgroup with
 * outside.service next to it, with a threaded child `name` added. */
static int threaded_copy(const char *name, char *out, size_t len)
{
	char top[PATH_MAX], outside[PATH_MAX], dir[PATH_MAX], type[PATH_MAX];
	int r;
	if ((r = E2E_PATHF(top, "%s/%s", tmp, name + (*name == '.'))) < 0 ||
	    (r = e2e_pathf(out, len, "%s/cgroup", top)) < 0 ||
	    (r = E2E_PATHF(outside, "%s/outside.service", top)) < 0 ||
	    (r = E2E_PATHF(dir, "%s/%s", out, name)) < 0 ||
	    (r = E2E_PATHF(type, "%s/cgroup.type", dir)) < 0)
		return r;
	if (mkdir(top, 0755) < 0)
		return -errno;
	if ((r = e2e_copy_tree(FIX_CGROUP, out)) < 0 ||
	    (r = e2e_copy_tree(FIX_OUTSIDE, outside)) < 0)
		return r;
	if (mkdir(dir, 0755) < 0)
		return -errno;
	return e2e_write_file(type, "threaded\n", 9);
}

static int group_setup(void **state)
{
	(void)state;
	int r = e2e_tmpdir("cgshare", tmp, sizeof(tmp));
	if (r < 0)
		return r;
	if ((r = E2E_PATHF(roots[TYPED], "%s", FIX_CGROUP)) < 0 ||
	    (r = threaded_copy("rt.threads", roots[THR_ROOT],
			       sizeof(roots[THR_ROOT]))) < 0 ||
	    (r = threaded_copy(".rt", roots[DOT_ROOT],
			       sizeof(roots[DOT_ROOT]))) < 0 ||
	    (r = E2E_PATHF(roots[NONE], "%s/no-such-cgroup-root", tmp)) < 0)
		return r;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp);
}

/* Snapshots of the running test, freed by its teardown even when a check
 * fails midway (cmocka leaves the test by longjmp). */
static struct ctp_snap *snaps[4];
static size_t n_snaps;

static int free_snaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_snaps; i++)
		ctp_snap_free(snaps[i]);
	n_snaps = 0;
	return 0;
}

/* Capture `proc` with cgroup root `cgroup` and `workers`; the decoded
 * snapshot, or the test fails. The stderr log's path goes to `log`. */
static struct ctp_snap *capture(const char *proc, const char *sys,
				const char *cgroup, unsigned workers, char *log,
				size_t loglen)
{
	char cfg[PATH_MAX], out[PATH_MAX];
	unsigned n = ++seq;
	PATH(cfg, "%s/cfg-%u.yaml", tmp, n);
	PATH(out, "%s/snap-%u.ctprof.zst", tmp, n);
	assert_int_equal(e2e_pathf(log, loglen, "%s/log-%u.txt", tmp, n), 0);
	struct e2e_cfg c = {
		.proc = proc,
		.sys = sys,
		.cgroup = cgroup,
		.workers = workers,
		.required = true,
	};
	assert_int_equal(e2e_write_config(cfg, &c), 0);
	struct ctp_snap *s = e2e_capture(cfg, out, log);
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

/* Capture the live host (2 workers) with procfs-stat and the test plugin
 * abi-procsrc, a process source, into snapshot `tag`: under strace
 * (opens) into *trace when trace is not NULL. */
static struct ctp_snap *capture_procsrc(const char *tag, char **trace)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	PATH(cfg, "%s/%s.yaml", tmp, tag);
	PATH(out, "%s/%s.ctprof.zst", tmp, tag);
	PATH(log, "%s/%s.log", tmp, tag);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\", \"%s\"]\n"
		"workers: 2\n"
		"plugins:\n"
		"  procfs-stat: {required: true}\n"
		"  abi-procsrc: {required: true}\n",
		CTP_ABI_PLUGIN_DIR, CTP_TEST_PLUGIN_DIR);
	assert_int_equal(fclose(f), 0);
	struct ctp_snap *s = NULL;
	if (trace) {
		if (e2e_strace_capture(cfg, tmp, tag, "openat,open,openat2", &s,
				       trace) < 0)
			fail_msg("strace ctprof-core failed");
	} else {
		s = e2e_capture(cfg, out, log);
	}
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

/* ---- Checking a snapshot ------------------------------------------------ */

/* The cgroup path of thread row i, or NULL when it has none. */
static bool thread_cgroup(const struct ctp_snap *s, size_t i,
			  struct ctp_bytes *out)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *c = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	if (t->cgroup[i] < 0 || (size_t)t->cgroup[i] >= c->rows)
		return false;
	*out = c->path[t->cgroup[i]];
	return out->ptr != NULL;
}

static bool in_cgroups(const struct ctp_snap *s, const char *path)
{
	const struct ctp_snap_table *c = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	for (size_t r = 0; r < c->rows; r++)
		if (e2e_bytes_eq(c->path[r], path))
			return true;
	return false;
}

/* Every check of one fixture snapshot against scenario `sc`. */
static void check_snapshot(const struct ctp_snap *s, enum scen sc,
			   unsigned workers)
{
	const char *what = scen_name[sc];
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *c = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	assert_non_null(t);
	assert_non_null(c);
	assert_non_null(t->cgroup);
	assert_non_null(c->path);

	const struct ctp_snap_header *h = ctp_snap_header(s);
	CHECK(h->workers == workers, "%s: header workers %" PRIu64, what,
	      h->workers);
	CHECK(h->cgroup_root && !strcmp(h->cgroup_root, roots[sc]),
	      "%s: header cgroup_root %s", what,
	      h->cgroup_root ? h->cgroup_root : "(nil)");

	/* Threads, in order, with the expected cgroup. */
	CHECK(t->rows == N_THREADS, "%s: %zu threads, expected %zu", what,
	      t->rows, N_THREADS);
	for (size_t i = 0; i < N_THREADS && i < t->rows; i++) {
		const struct exp_thread *e = &exp_threads[i];
		CHECK(t->tgid[i] == e->tgid && t->tid[i] == e->tid,
		      "%s: row %zu is %" PRIu64 "/%" PRIu64 ", expected %u/%u",
		      what, i, t->tgid[i], t->tid[i], e->tgid, e->tid);
		CHECK(e2e_bytes_eq(t->comm[i], e->comm), "%s: tid %u comm",
		      what, e->tid);
		struct ctp_bytes p;
		bool have = thread_cgroup(s, i, &p);
		const char *want = e->cg[sc];
		CHECK(want ? have && e2e_bytes_eq(p, want) : !have,
		      "%s: tid %u: cgroup %.*s, expected %s", what, e->tid,
		      have ? (int)p.len : 6, have ? p.ptr : "(none)",
		      want ? want : "(none)");
	}

	/* (f) The cgroups table is exactly the distinct paths of the
	 * recorded threads: each once, and nothing else. */
	size_t distinct = 0;
	for (size_t i = 0; i < N_THREADS; i++) {
		const char *p = exp_threads[i].cg[sc];
		bool seen = !p;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same(exp_threads[j].cg[sc], p);
		if (seen)
			continue;
		distinct++;
		CHECK(in_cgroups(s, p), "%s: cgroup %s missing", what, p);
	}
	CHECK(c->rows == distinct, "%s: %zu cgroups, expected %zu", what,
	      c->rows, distinct);
	for (size_t r = 0; r < c->rows; r++) {
		bool used = false;
		for (size_t i = 0; i < t->rows && !used; i++)
			used = t->cgroup[i] == (int64_t)r;
		CHECK(used, "%s: cgroup %.*s: no recorded thread in it", what,
		      c->path[r].ptr ? (int)c->path[r].len : 5,
		      c->path[r].ptr ? c->path[r].ptr : "(nil)");
		for (size_t q = 0; q < r; q++)
			CHECK(c->path[q].len != c->path[r].len ||
				      memcmp(c->path[q].ptr, c->path[r].ptr,
					     c->path[r].len),
			      "%s: cgroup rows %zu and %zu are the same", what,
			      q, r);
	}
	for (size_t i = 0; i < sizeof(never_cgroups) / sizeof(*never_cgroups);
	     i++)
		CHECK(!in_cgroups(s, never_cgroups[i]),
		      "%s: %s is in the cgroups table", what, never_cgroups[i]);

	/* The walk, and no read failure at all: in particular none for a
	 * "cgroup" file, though 101 and 111 have none. */
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	CHECK(rf->tgids_walked == EXP_TGIDS_WALKED &&
		      rf->tgids_vanished == EXP_TGIDS_VANISHED &&
		      rf->tids_walked == EXP_TIDS_WALKED &&
		      rf->tids_vanished == EXP_TIDS_VANISHED &&
		      rf->tids_recorded == N_THREADS,
	      "%s: walked %" PRIu64 "/%" PRIu64 " tgids, %" PRIu64 "/%" PRIu64
	      "/%" PRIu64 " tids (walked/vanished/recorded)",
	      what, rf->tgids_walked, rf->tgids_vanished, rf->tids_walked,
	      rf->tids_vanished, rf->tids_recorded);
	CHECK(rf->n_files > 0, "%s: no file in the tally", what);
	for (size_t i = 0; i < rf->n_files; i++) {
		CHECK(rf->failures[i] == 0 && rf->missing[i] == 0,
		      "%s: %" PRIu64 " failures (%" PRIu64 " missing) for %s",
		      what, rf->failures[i], rf->missing[i], rf->file[i]);
		CHECK(strcmp(rf->file[i], "cgroup") || rf->failures[i] == 0,
		      "%s: cgroup read failures tallied", what);
	}
}

/* (g) Two snapshots of the same tree agree row for row. */
static void check_same(const struct ctp_snap *a, const struct ctp_snap *b,
		       const char *what)
{
	const struct ctp_snap_table *ta = ctp_snap_table(a, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *tb = ctp_snap_table(b, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ca = ctp_snap_table(a, CTP_SCOPE_CGROUP);
	const struct ctp_snap_table *cb = ctp_snap_table(b, CTP_SCOPE_CGROUP);
	CHECK(ta->rows == tb->rows && ca->rows == cb->rows,
	      "%s: workers 1 and 3 give %zu/%zu threads, %zu/%zu cgroups", what,
	      ta->rows, tb->rows, ca->rows, cb->rows);
	for (size_t i = 0; i < ta->rows && i < tb->rows; i++) {
		struct ctp_bytes pa = {0}, pb = {0};
		bool ha = thread_cgroup(a, i, &pa),
		     hb = thread_cgroup(b, i, &pb);
		CHECK(ta->tid[i] == tb->tid[i] && ha == hb &&
			      (!ha || (pa.len == pb.len &&
				       !memcmp(pa.ptr, pb.ptr, pa.len))),
		      "%s: row %zu differs between workers 1 and 3", what, i);
	}
	/* The same set of paths (rows are in discovery order). */
	for (size_t r = 0; r < ca->rows; r++) {
		bool found = false;
		for (size_t q = 0; q < cb->rows && !found; q++)
			found = ca->path[r].len == cb->path[q].len &&
				!memcmp(ca->path[r].ptr, cb->path[q].ptr,
					ca->path[r].len);
		CHECK(found, "%s: cgroup %.*s only with workers 1", what,
		      (int)ca->path[r].len, ca->path[r].ptr);
	}
}

static void run_scenario(enum scen sc)
{
	nbad = 0;
	char log1[PATH_MAX], log3[PATH_MAX];
	struct ctp_snap *s1 =
		capture(FIX_PROC, FIX_SYS, roots[sc], 1, log1, sizeof(log1));
	struct ctp_snap *s3 =
		capture(FIX_PROC, FIX_SYS, roots[sc], 3, log3, sizeof(log3));
	check_snapshot(s1, sc, 1);
	check_snapshot(s3, sc, 3);
	check_same(s1, s3, scen_name[sc]);

	/* (e) Without a cgroup root the engine says so and captures; with
	 * one it has nothing to warn about. */
	for (int k = 0; k < 2; k++) {
		char *log = NULL;
		assert_int_equal(e2e_read_file(k ? log3 : log1, &log, NULL), 0);
		bool warned = strstr(log, "cannot open cgroup root") &&
			      strstr(log, roots[NONE]);
		CHECK(warned == (sc == NONE), "%s: %s warning about the root",
		      scen_name[sc], warned ? "a" : "no");
		if (warned != (sc == NONE))
			e2e_show_file("ctprof-core stderr", k ? log3 : log1);
		free(log);
	}
	assert_int_equal(nbad, 0);
}

/* (a), (b), (c), (d) with the root shared, (f), (g). */
static void typed_tree(void **state)
{
	(void)state;
	run_scenario(TYPED);
}

/* (d) A threaded child of the root: threads of root processes may be in
 * it, so each reads its own file. */
static void root_with_threaded_child(void **state)
{
	(void)state;
	run_scenario(THR_ROOT);
}

/* The same with a child whose name starts with a dot: a legal cgroup name. */
static void root_with_threaded_dot_child(void **state)
{
	(void)state;
	run_scenario(DOT_ROOT);
}

/* (e) No cgroup root: every thread reads its own file. */
static void no_cgroup_root(void **state)
{
	(void)state;
	run_scenario(NONE);
}

/* ---- The live host ------------------------------------------------------ */

/* The cgroup2 mount point from /proc/self/mountinfo, or false. */
static bool cgroup2_mount(char *out, size_t len)
{
	char *buf = NULL;
	if (e2e_read_file("/proc/self/mountinfo", &buf, NULL) < 0)
		return false;
	bool found = false;
	for (char *line = buf; line && *line && !found;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *sep = strstr(line, " - ");
		char mnt[PATH_MAX];
		/* id parent maj:min root mountpoint ... - fstype ... */
		if (sep && !strncmp(sep + 3, "cgroup2 ", 8) &&
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    strlen(mnt) < len) {
			strcpy(out, mnt);
			found = true;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return found;
}

/* The 0:: path of /proc/<tgid>/task/<tid>/cgroup now: 1 and the path (""
 * when the file has no 0:: line), 0 when the thread is gone. */
static int live_cgroup(uint64_t tgid, uint64_t tid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path),
		 "/proc/%" PRIu64 "/task/%" PRIu64 "/cgroup", tgid, tid);
	char *text = NULL;
	int r = e2e_read_file(path, &text, NULL);
	if (r == -ENOENT || r == -ESRCH)
		return 0;
	if (r < 0)
		return r;
	if (!e2e_cgroup_v2(text, out, len))
		out[0] = '\0';
	free(text);
	return 1;
}

/* A thread's 0:: path as read before the capture. */
struct seen {
	uint64_t tgid, tid;
	char *path;
};
static struct seen *before;
static size_t n_before, cap_before;

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool numeric(const char *s, uint64_t *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	*v = strtoull(s, &end, 10);
	return *end == '\0';
}

/* Every thread's own cgroup path now, sorted by (tgid, tid). */
static int list_before(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *e;
	int ret = 0;
	while (ret == 0 && (e = readdir(d))) {
		uint64_t tgid;
		if (!numeric(e->d_name, &tgid))
			continue;
		char tdir[64];
		snprintf(tdir, sizeof(tdir), "/proc/%" PRIu64 "/task", tgid);
		DIR *td = opendir(tdir);
		if (!td)
			continue; /* gone */
		struct dirent *te;
		while (ret == 0 && (te = readdir(td))) {
			uint64_t tid;
			char path[PATH_MAX];
			if (!numeric(te->d_name, &tid) ||
			    live_cgroup(tgid, tid, path, sizeof(path)) <= 0)
				continue;
			if (n_before == cap_before) {
				size_t nc = cap_before ? cap_before * 2 : 1024;
				struct seen *nb =
					realloc(before, nc * sizeof(*nb));
				if (!nb) {
					ret = -ENOMEM;
					break;
				}
				before = nb;
				cap_before = nc;
			}
			char *p = strdup(path);
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			before[n_before++] = (struct seen){tgid, tid, p};
		}
		closedir(td);
	}
	closedir(d);
	qsort(before, n_before, sizeof(*before), cmp_seen);
	return ret;
}

static const char *path_before(uint64_t tgid, uint64_t tid)
{
	struct seen key = {tgid, tid, NULL};
	const struct seen *s =
		bsearch(&key, before, n_before, sizeof(*before), cmp_seen);
	return s ? s->path : NULL;
}

#define N_PARKED 3
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static bool released;
static pthread_t parked_th[N_PARKED];
static size_t n_parked;

static void *parked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&park_lock);
	while (!released)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

static char live_mnt[PATH_MAX];

static int live_setup(void **state)
{
	(void)state;
	int r = e2e_tmpdir("cgshare-live", tmp, sizeof(tmp));
	if (r < 0)
		return r;
	/* This process is multi-threaded, so at least one process's
	 * threads are checked whatever else runs on the host. */
	for (; n_parked < N_PARKED; n_parked++)
		if (pthread_create(&parked_th[n_parked], NULL, parked, NULL))
			return -EAGAIN;
	return 0;
}

static int live_teardown(void **state)
{
	(void)state;
	pthread_mutex_lock(&park_lock);
	released = true;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
	for (size_t i = 0; i < n_parked; i++)
		pthread_join(parked_th[i], NULL);
	for (size_t i = 0; i < n_before; i++)
		free(before[i].path);
	free(before);
	return e2e_rm_rf(tmp);
}

/* The state letter of /proc/<tgid>/task/<tid>/stat now, or 0. */
static char live_state(uint64_t tgid, uint64_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%" PRIu64 "/stat",
		 tgid, tid);
	char *text = NULL;
	if (e2e_read_file(path, &text, NULL) < 0)
		return 0;
	const char *p = strrchr(text, ')');
	char s = p && p[1] == ' ' ? p[2] : 0;
	free(text);
	return s;
}

/* Does another recorded thread of row i's process have row i's path? */
static bool path_of_sibling(const struct ctp_snap *s, size_t i)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	for (size_t j = 0; j < t->rows; j++)
		if (j != i && t->tgid[j] == t->tgid[i] &&
		    t->cgroup[j] == t->cgroup[i])
			return true;
	return false;
}

/*
 * Every recorded thread's cgroup is what its own cgroup file says right
 * after the capture. Threads gone by then are skipped, and so are threads
 * that moved during the capture (their file said something else just
 * before it). A zombie leader may instead have the path of its process's
 * other threads: the kernel leaves it behind when the process moves.
 */
static void live_host(void **state)
{
	(void)state;
	nbad = 0;
	assert_int_equal(list_before(), 0);
	char log[PATH_MAX];
	struct ctp_snap *s =
		capture("/proc", "/sys", "auto", 2, log, sizeof(log));
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_header *h = ctp_snap_header(s);
	CHECK(h->cgroup_root && !strcmp(h->cgroup_root, live_mnt),
	      "header cgroup_root %s, mountinfo says %s",
	      h->cgroup_root ? h->cgroup_root : "(nil)", live_mnt);

	size_t checked = 0, gone = 0, moved = 0, ours = 0, zombies = 0;
	for (size_t i = 0; i < t->rows; i++) {
		char now[PATH_MAX];
		int r = live_cgroup(t->tgid[i], t->tid[i], now, sizeof(now));
		CHECK(r >= 0, "tid %" PRIu64 ": cannot read its cgroup: %s",
		      t->tid[i], strerror(-r));
		if (r <= 0) {
			gone += r == 0;
			continue;
		}
		const char *was = path_before(t->tgid[i], t->tid[i]);
		if (was && strcmp(was, now)) {
			moved++;
			continue;
		}
		struct ctp_bytes p;
		bool have = thread_cgroup(s, i, &p);
		bool ok = *now ? have && e2e_bytes_eq(p, now) : !have;
		if (!ok && t->tid[i] == t->tgid[i] &&
		    live_state(t->tgid[i], t->tid[i]) == 'Z' && have &&
		    path_of_sibling(s, i)) {
			zombies++;
			continue;
		}
		CHECK(ok,
		      "tgid %" PRIu64 " tid %" PRIu64
		      ": snapshot says %.*s, its cgroup file %s",
		      t->tgid[i], t->tid[i], have ? (int)p.len : 6,
		      have ? p.ptr : "(none)", *now ? now : "(no 0:: line)");
		checked++;
		ours += t->tgid[i] == (uint64_t)getpid();
	}
	print_message("live: %zu threads checked, %zu gone, %zu moved, %zu "
		      "zombie leaders left behind\n",
		      checked, gone, moved, zombies);
	CHECK(ours >= N_PARKED + 1, "%zu of this process's %d threads checked",
	      ours, N_PARKED + 1);
	assert_int_equal(nbad, 0);
}

/* ---- A real zombie leader ----------------------------------------------- */

/*
 * A child process (this executable run as `zombie-child`) joins cgroup OLD,
 * starts two threads and ends its leader with pthread_exit: the leader is a
 * zombie while the threads wait for the release pipe to close. Moving the
 * process to NEW then moves only the threads (the kernel skips an exiting
 * task), so the leader's cgroup file, and /proc/<pid>/cgroup, still say
 * OLD. The capture must put all three in NEW.
 */
#define ZC_THREADS 2
static pid_t zc_pid = -1;
static int zc_release = -1;
static char zc_dir[3][PATH_MAX]; /* base, base/old, base/new */
static size_t zc_ndirs;

/* The child: fd 0 is the release pipe, fd 1 the ready pipe. */
static void *zc_wait(void *arg)
{
	(void)arg;
	char c;
	while (read(0, &c, 1) > 0)
		;
	return NULL;
}

static int zombie_child(void)
{
	pthread_t th;
	for (int i = 0; i < ZC_THREADS; i++)
		if (pthread_create(&th, NULL, zc_wait, NULL))
			return 1;
	if (write(1, "r", 1) != 1)
		return 1;
	close(1);
	pthread_exit(NULL);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int zc_teardown(void **state)
{
	if (zc_release >= 0)
		close(zc_release);
	zc_release = -1;
	if (zc_pid > 0) {
		/* Its threads end at EOF; kill it only if they do not. */
		int st, i;
		for (i = 0; i < 200 && waitpid(zc_pid, &st, WNOHANG) == 0; i++)
			sleep_ms(10);
		if (i == 200) {
			kill(zc_pid, SIGKILL);
			waitpid(zc_pid, &st, 0);
		}
		zc_pid = -1;
	}
	/* A cgroup can stay busy a moment after its last task is reaped. */
	while (zc_ndirs > 0) {
		const char *d = zc_dir[zc_ndirs - 1];
		int i;
		for (i = 0; i < 100 && rmdir(d) < 0 && errno == EBUSY; i++)
			sleep_ms(20);
		if (access(d, F_OK) == 0)
			fprintf(stderr, "could not remove cgroup %s\n", d);
		zc_ndirs--;
	}
	return free_snaps(state);
}

/* The child's threads in snapshot s all have its live threads' path
 * `mate`, its zombie leader too. */
static void check_zombie_threads(const struct ctp_snap *s, uint64_t pid,
				 const char *mate)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t rows = 0;
	for (size_t k = 0; k < t->rows; k++) {
		if (t->tgid[k] != pid)
			continue;
		struct ctp_bytes p;
		bool have = thread_cgroup(s, k, &p);
		CHECK(have && e2e_bytes_eq(p, mate),
		      "tid %" PRIu64 ": cgroup %.*s, expected %s", t->tid[k],
		      have ? (int)p.len : 6, have ? p.ptr : "(none)", mate);
		rows++;
	}
	CHECK(rows == ZC_THREADS + 1, "%zu threads of %" PRIu64 " recorded",
	      rows, pid);
}

static void live_zombie_leader(void **state)
{
	(void)state;
	nbad = 0;
	char procs[2][PATH_MAX];
	PATH(zc_dir[0], "%s/ctprof-test-zombie-%d", live_mnt, (int)getpid());
	PATH(zc_dir[1], "%s/old", zc_dir[0]);
	PATH(zc_dir[2], "%s/new", zc_dir[0]);
	for (int i = 0; i < 3; i++) {
		if (mkdir(zc_dir[i], 0755) < 0) {
			print_message("skipped: cannot make cgroup %s: %s\n",
				      zc_dir[i], strerror(errno));
			skip();
		}
		zc_ndirs++;
	}
	for (int i = 0; i < 2; i++) {
		PATH(procs[i], "%s/cgroup.procs", zc_dir[i + 1]);
		char *type = first_line(text_at(zc_dir[i + 1], "cgroup.type"));
		bool domain = says_domain(type);
		free(type);
		if (!domain) {
			print_message("skipped: %s is not a domain\n",
				      zc_dir[i + 1]);
			skip();
		}
	}

	int rel[2], rdy[2];
	assert_int_equal(pipe2(rel, O_CLOEXEC), 0);
	if (pipe2(rdy, O_CLOEXEC) < 0) {
		close(rel[0]);
		close(rel[1]);
		fail_msg("pipe2: %s", strerror(errno));
	}
	zc_pid = fork();
	if (zc_pid == 0) {
		/* Join OLD ("0": the writer), then run as the child. */
		int fd = open(procs[0], O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(3);
		close(fd);
		if (dup2(rel[0], 0) < 0 || dup2(rdy[1], 1) < 0)
			_exit(4);
		execl("/proc/self/exe", "test_e2e_cgroup", "zombie-child",
		      (char *)NULL);
		_exit(5);
	}
	close(rel[0]);
	close(rdy[1]);
	zc_release = rel[1];
	if (zc_pid < 0) {
		close(rdy[0]);
		fail_msg("fork: %s", strerror(errno));
	}
	char c;
	ssize_t n = read(rdy[0], &c, 1);
	close(rdy[0]);
	if (n != 1) {
		int st = 0;
		waitpid(zc_pid, &st, 0);
		zc_pid = -1;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
			print_message("skipped: cannot join %s\n", zc_dir[1]);
			skip();
		}
		fail_msg("zombie child did not start (status %#x)", st);
	}
	/* Wait for the leader's pthread_exit to leave a zombie. */
	uint64_t pid = (uint64_t)zc_pid;
	int i;
	for (i = 0; i < 500 && live_state(pid, pid) != 'Z'; i++)
		sleep_ms(10);
	assert_true(i < 500);
	char pidstr[32];
	snprintf(pidstr, sizeof(pidstr), "%d\n", (int)zc_pid);
	int r = write_str(procs[1], pidstr);
	if (r < 0) {
		print_message("skipped: cannot move %d to %s: %s\n",
			      (int)zc_pid, zc_dir[2], strerror(-r));
		skip();
	}

	/* What the kernel did: the leader left in OLD, the threads in NEW. */
	char leader[PATH_MAX], procwide[PATH_MAX], mate[PATH_MAX];
	assert_int_equal(live_cgroup(pid, pid, leader, sizeof(leader)), 1);
	char *text = NULL;
	char pc[64];
	snprintf(pc, sizeof(pc), "/proc/%" PRIu64 "/cgroup", pid);
	assert_int_equal(e2e_read_file(pc, &text, NULL), 0);
	if (!e2e_cgroup_v2(text, procwide, sizeof(procwide)))
		procwide[0] = '\0';
	free(text);
	mate[0] = '\0';
	size_t nmates = 0;
	char tdir[64];
	snprintf(tdir, sizeof(tdir), "/proc/%" PRIu64 "/task", pid);
	DIR *d = opendir(tdir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		uint64_t tid;
		char p[PATH_MAX];
		if (!numeric(e->d_name, &tid) || tid == pid ||
		    live_cgroup(pid, tid, p, sizeof(p)) != 1)
			continue;
		CHECK(!mate[0] || !strcmp(mate, p),
		      "threads of %" PRIu64 " in %s and %s", pid, mate, p);
		strcpy(mate, p);
		nmates++;
	}
	closedir(d);
	assert_int_equal(nmates, ZC_THREADS);
	if (!strcmp(leader, mate)) {
		print_message("skipped: this kernel moved the zombie leader "
			      "too (%s)\n",
			      leader);
		skip();
	}
	print_message("zombie leader %" PRIu64 " in %s (/proc/%" PRIu64
		      "/cgroup: %s), its threads in %s\n",
		      pid, leader, pid, procwide, mate);
	CHECK(!strcmp(procwide, leader), "/proc/%" PRIu64 "/cgroup says %s",
	      pid, procwide);

	char log[PATH_MAX];
	check_zombie_threads(
		capture("/proc", "/sys", "auto", 2, log, sizeof(log)), pid,
		mate);
	/* No <tgid>/stat read up front: the leader's exe link tells. */
	check_zombie_threads(capture_procsrc("zombie-procsrc", NULL), pid,
			     mate);
	assert_int_equal(nbad, 0);
}

/*
 * With a process source loaded, a live process of several threads is
 * still placed by the cgroup listings, its leader known alive by its exe
 * link: no thread of it opens its own cgroup file (nor does the probe).
 */
static void live_leader_by_exe(void **state)
{
	(void)state;
	if (system("strace -V >/dev/null 2>&1") != 0) {
		print_message("skipped: no strace (tools/dev.sh deps installs "
			      "it)\n");
		skip();
	}
	pid_t kid = e2e_crowd(ZC_THREADS, "cg-crowd");
	assert_true(kid > 0);
	char *text = NULL;
	struct ctp_snap *s = capture_procsrc("crowd-procsrc", &text);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t rows = 0, bad = 0;
	for (size_t k = 0; k < t->rows; k++) {
		if (t->tgid[k] != (uint64_t)kid)
			continue;
		rows++;
		char pat[48];
		snprintf(pat, sizeof(pat), "task/%" PRIu64 "/cgroup",
			 t->tid[k]);
		for (char *l = strstr(text, pat); l; l = strstr(l + 1, pat))
			bad++;
	}
	free(text);
	assert_int_equal(rows, ZC_THREADS + 1);
	if (bad)
		fail_msg("%zu opens of a cgroup file of the child's threads",
			 bad);
}

static int live(void)
{
	if (!cgroup2_mount(live_mnt, sizeof(live_mnt))) {
		fprintf(stderr, "skipped: no cgroup2 mount in "
				"/proc/self/mountinfo\n");
		return SKIP;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(live_host, free_snaps),
		cmocka_unit_test_teardown(live_zombie_leader, zc_teardown),
		cmocka_unit_test_teardown(live_leader_by_exe, free_snaps),
	};
	return cmocka_run_group_tests(tests, live_setup, live_teardown);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "live"))
		return live();
	if (argc > 1 && !strcmp(argv[1], "zombie-child"))
		return zombie_child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expectations_match_fixture),
		cmocka_unit_test_teardown(typed_tree, free_snaps),
		cmocka_unit_test_teardown(root_with_threaded_child, free_snaps),
		cmocka_unit_test_teardown(root_with_threaded_dot_child,
					  free_snaps),
		cmocka_unit_test_teardown(no_cgroup_root, free_snaps),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
