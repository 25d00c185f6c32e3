/* SPDX-License-Identifier: MIT */
/*
 * Resource errors (issue 29): a capture that runs short of descriptors or
 * memory counts what it could not read as such, never as vanished tasks,
 * its accounting still adds up, and ctp_capture_spoiled() says so with the
 * reason.
 *
 * - In process, the real engine (config parser, loader, walk) over the
 *   fixture proc tree and the live /proc, with RLIMIT_NOFILE's soft limit
 *   lowered to leave it exactly k free descriptors: k = 1, every process
 *   directory opens but none of its files (all processes unread); k = 2
 *   with a plugin that wants thread directories, every process is read
 *   but none of its threads (all threads unread, their processes too).
 * - A plugin whose thread callback fails with ENOMEM (abi-starved): its
 *   calls are counted as resource errors, never errors nor vanished, the
 *   rows stay and the callback is never disabled for it.
 * - The counters through the writer, the C reader and `dump`; a clean
 *   capture writes none of them and an old snapshot reads them as 0.
 * - The binary: a one-shot capture under a descriptor limit just large
 *   enough to write its snapshot writes one whose counters say it;
 *   `record` under it writes every snapshot and says why once per run of
 *   spoiled captures.
 */
#include <dirent.h>
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
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture_util.h"
#include "config.h"
#include "e2e_util.h"
#include "engine.h"
#include "loader.h"
#include "model.h"
#include "reader.h"

#define FIX_PROC   CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	   CTP_TEST_FIXTURES "/sys"
#define FIX_CGROUP CTP_TEST_FIXTURES "/cgroup"

static char tmpdir[PATH_MAX];

/* One loaded engine over a config text. */
struct run {
	struct ctp_config *cfg;
	struct ctp_capture *cap;
	struct ctp_engine eng;
};

/* A config of `top` (top-level lines) and `plugins` (lines under
 * "plugins:") over the fixture tree. */
static void fixture_yaml(char *yaml, size_t len, const char *top,
			 const char *plugins)
{
	assert_true(
		snprintf(yaml, len,
			 "plugin_dirs: [\"%s\", \"%s\"]\n%s"
			 "roots: {proc: \"%s\", sys: \"%s\", cgroup: \"%s\"}\n"
			 "plugins:\n%s",
			 CTP_TEST_PLUGIN_DIR, CTP_ABI_PLUGIN_DIR, top, FIX_PROC,
			 FIX_SYS, FIX_CGROUP, plugins) < (int)len);
}

/* The real engine loaded with such a config (live: the host's roots). */
static void run_load_with(struct run *r, bool live, const char *top,
			  const char *plugins)
{
	char yaml[4 * PATH_MAX], err[512];
	if (live)
		snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\", \"%s\"]\n%s"
			 "plugins:\n%s",
			 CTP_TEST_PLUGIN_DIR, CTP_ABI_PLUGIN_DIR, top, plugins);
	else
		fixture_yaml(yaml, sizeof(yaml), top, plugins);
	memset(r, 0, sizeof(*r));
	if (ctp_config_load_buf("test.yaml", yaml, strlen(yaml), &r->cfg, err,
				sizeof(err)) < 0)
		fail_msg("config: %s", err);
	/* The build tree may be group-writable; not what this tests. */
	r->cfg->allow_insecure_plugins = 1;
	assert_int_equal(ctp_capture_new(r->cfg->workers, &r->cap), 0);
	assert_int_equal(ctp_engine_init(&r->eng, r->cfg, r->cap, NULL), 0);
	assert_int_equal(ctp_engine_load(&r->eng), 0);
	for (uint32_t i = 0; i < r->cap->n_plugins; i++)
		if (r->cap->plugins[i].status != CTP_PST_LOADED)
			fail_msg("plugin %s: %s", r->cap->plugins[i].name,
				 r->cap->plugins[i].reason
					 ? r->cap->plugins[i].reason
					 : "not loaded");
}

static void run_load(struct run *r, bool live, const char *plugins)
{
	run_load_with(r, live, "workers: 1\n", plugins);
}

static void run_done(struct run *r)
{
	ctp_engine_done(&r->eng);
	ctp_capture_free(r->cap);
	ctp_config_free(r->cfg);
}

/*
 * One capture with exactly `k` descriptors free (k < 0: the limit as it
 * is): the soft limit is set to the lowest free descriptor + k, after
 * checking that the k above it are free too, and restored before anything
 * is asserted. *limit is the limit the capture ran under.
 */
static int capture_with(struct run *r, int k, uint64_t *limit)
{
	struct rlimit old, low;
	const char *what;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	*limit = old.rlim_cur;
	if (k < 0)
		return ctp_cli_capture_again(&r->eng, false, &what);
	int lowest = fcntl(0, F_DUPFD_CLOEXEC, 0);
	assert_true(lowest >= 0);
	close(lowest);
	for (int fd = lowest; fd < lowest + k; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			fail_msg("descriptor %d is open: not %d free", fd, k);
	low = old;
	low.rlim_cur = (rlim_t)(lowest + k);
	*limit = low.rlim_cur;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int ret = ctp_cli_capture_again(&r->eng, false, &what);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	return ret;
}

/* What every capture's tally must say, spoiled or not. */
static void assert_adds_up(const struct ctp_capture *cap)
{
	const struct ctp_readfail *rf = &cap->rf;
	assert_int_equal(rf->tids_walked, rf->tids_recorded +
						  rf->tids_vanished +
						  rf->tids_unread_resource);
	assert_int_equal(rf->tgids_walked, cap->n_spans + rf->tgids_vanished +
						   rf->tgids_unread_resource);
}

/* The clean tally of the fixture, for comparison. */
struct tally {
	uint64_t tids_walked, tids_recorded, tids_vanished;
	uint64_t tgids_walked, tgids_vanished;
	size_t processes;
};

static struct tally clean_fixture(const char *plugins)
{
	struct run r;
	uint64_t limit;
	run_load(&r, false, plugins);
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	const struct ctp_readfail *rf = &r.cap->rf;
	struct tally t = {rf->tids_walked,    rf->tids_recorded,
			  rf->tids_vanished,  rf->tgids_walked,
			  rf->tgids_vanished, r.cap->n_spans};
	assert_false(ctp_capture_spoiled(r.cap, NULL, 0));
	assert_int_equal(rf->tids_unread_resource, 0);
	assert_int_equal(rf->tgids_unread_resource, 0);
	assert_int_equal(rf->resource_err, 0);
	assert_adds_up(r.cap);
	assert_true(t.processes > 0);
	assert_true(t.tids_recorded > 0);
	run_done(&r);
	return t;
}

/* k = 1: each process directory opens, none of its files: every process
 * is unread (none vanished: EMFILE comes before the lookup), no thread
 * is walked, and the reason says so. */
static void test_fixture_processes_unread(void **unused)
{
	(void)unused;
	struct tally clean = clean_fixture("  procfs-stat: {}\n");
	struct run r;
	uint64_t limit;
	char why[256], want[256];
	run_load(&r, false, "  procfs-stat: {}\n");
	assert_int_equal(capture_with(&r, 1, &limit), 0);
	const struct ctp_readfail *rf = &r.cap->rf;
	assert_int_equal(rf->tgids_walked, clean.tgids_walked);
	assert_int_equal(rf->tgids_unread_resource, clean.tgids_walked);
	assert_int_equal(rf->tgids_vanished, 0);
	assert_int_equal(rf->tids_walked, 0);
	assert_int_equal(r.cap->n_spans, 0);
	assert_int_equal(rf->resource_err, -EMFILE);
	assert_int_equal(rf->nofile_limit, limit);
	assert_adds_up(r.cap);
	assert_true(ctp_capture_spoiled(r.cap, why, sizeof(why)));
	snprintf(want, sizeof(want),
		 "%" PRIu64 " of %" PRIu64
		 " processes unread: %s (EMFILE); descriptor limit %" PRIu64,
		 clean.tgids_walked, clean.tgids_walked, strerror(EMFILE),
		 limit);
	assert_string_equal(why, want);
	run_done(&r);
}

/* k = 2 with a plugin that wants thread directories (abi-good): every
 * process and its thread list are read, then no thread's files: every
 * thread is unread, and so is every process that had one recorded. */
static void test_fixture_threads_unread(void **unused)
{
	(void)unused;
	static const char plugins[] = "  procfs-stat: {}\n  abi-good: {}\n";
	struct tally clean = clean_fixture(plugins);
	struct run r;
	uint64_t limit;
	char why[256], want[256];
	run_load(&r, false, plugins);
	assert_int_equal(capture_with(&r, 2, &limit), 0);
	assert_true(ctp_engine_thread_dirs(&r.eng)); /* abi-good wants them */
	const struct ctp_readfail *rf = &r.cap->rf;
	assert_int_equal(rf->tids_walked, clean.tids_walked);
	assert_int_equal(rf->tids_unread_resource, rf->tids_walked);
	assert_int_equal(rf->tids_recorded, 0);
	assert_int_equal(rf->tids_vanished, 0);
	assert_int_equal(rf->tgids_unread_resource, clean.processes);
	assert_int_equal(rf->tgids_vanished, clean.tgids_vanished);
	assert_int_equal(r.cap->n_spans, 0);
	assert_adds_up(r.cap);
	assert_true(ctp_capture_spoiled(r.cap, why, sizeof(why)));
	snprintf(want, sizeof(want),
		 "%zu of %" PRIu64 " processes unread, %" PRIu64 " of %" PRIu64
		 " threads unread: %s (EMFILE); descriptor limit %" PRIu64,
		 clean.processes, clean.tgids_walked, rf->tids_walked,
		 rf->tids_walked, strerror(EMFILE), limit);
	assert_string_equal(why, want);
	run_done(&r);
}

/* Two workers, each with a private descriptor table (every plugin is
 * CTP_PLUGIN_FD_LOCAL) and so k = 2 free of its own, and processes split
 * among them a thread a chunk: every thread is unread, and so is every
 * split process that had one recorded, decided after the walk. */
static void test_fixture_split_unread(void **unused)
{
	(void)unused;
	static const char top[] = "workers: 2\nsplit_threads: 1\n";
	static const char plugins[] = "  procfs-stat: {}\n  abi-starved: {}\n";
	struct run r;
	uint64_t limit;
	run_load_with(&r, false, top, plugins);
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	assert_true(ctp_engine_private_fds(&r.eng) &&
		    ctp_engine_thread_dirs(&r.eng));
	assert_true(r.cap->n_xspans > 0); /* some process was split */
	uint64_t walked = r.cap->rf.tids_walked;
	size_t processes = r.cap->n_spans;
	uint64_t vanished = r.cap->rf.tgids_vanished;
	assert_int_equal(capture_with(&r, 2, &limit), 0);
	const struct ctp_readfail *rf = &r.cap->rf;
	assert_int_equal(rf->tids_walked, walked);
	assert_int_equal(rf->tids_unread_resource, walked);
	assert_int_equal(rf->tgids_unread_resource, processes);
	assert_int_equal(rf->tgids_vanished, vanished);
	assert_int_equal(r.cap->n_spans, 0);
	assert_adds_up(r.cap);
	run_done(&r);
}

/* The live host, k = 1: processes that exited meanwhile may vanish, the
 * rest are unread; none is recorded and the tally adds up. A capture with
 * the limit as it is is not spoiled. */
static void test_live(void **unused)
{
	(void)unused;
	struct run r;
	uint64_t limit;
	char why[256], want[256];
	run_load(&r, true, "  procfs-stat: {}\n");
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	if (ctp_capture_spoiled(r.cap, why, sizeof(why)))
		fail_msg("a capture with every descriptor: %s", why);
	assert_adds_up(r.cap);
	assert_true(r.cap->n_spans > 0);
	assert_int_equal(capture_with(&r, 1, &limit), 0);
	const struct ctp_readfail *rf = &r.cap->rf;
	assert_true(rf->tgids_unread_resource > 0);
	assert_int_equal(rf->tgids_walked,
			 rf->tgids_unread_resource + rf->tgids_vanished);
	assert_int_equal(rf->tids_walked, 0);
	assert_int_equal(r.cap->n_spans, 0);
	assert_adds_up(r.cap);
	assert_true(ctp_capture_spoiled(r.cap, why, sizeof(why)));
	snprintf(want, sizeof(want),
		 "%" PRIu64 " of %" PRIu64
		 " processes unread: %s (EMFILE); descriptor limit %" PRIu64,
		 rf->tgids_unread_resource, rf->tgids_walked, strerror(EMFILE),
		 limit);
	assert_string_equal(why, want);
	run_done(&r);
}

static const struct ctp_plugin_info *info_of(const struct ctp_capture *cap,
					     const char *name)
{
	for (uint32_t i = 0; i < cap->n_plugins; i++)
		if (strcmp(cap->plugins[i].name, name) == 0)
			return &cap->plugins[i];
	fail_msg("no plugin %s", name);
	return NULL;
}

/* abi-starved's thread callback fails with ENOMEM on the live host: each
 * such call is a resource error (not an error, not a vanished task), the
 * rows stay, and the callback is never disabled for it however many. */
static void test_plugin_resource(void **unused)
{
	(void)unused;
	struct run r;
	uint64_t limit;
	char why[256], want[256];
	run_load(&r, true, "  procfs-stat: {}\n  abi-starved: {}\n");
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	const struct ctp_plugin_info *p = info_of(r.cap, "abi-starved");
	const struct ctp_readfail *rf = &r.cap->rf;
	uint64_t res = atomic_load(&p->resource);
	assert_int_equal(atomic_load(&p->errors), 0);
	assert_int_equal(atomic_load(&p->vanished), 0);
	/* One thread call per thread walked that got that far. */
	assert_true(res >= rf->tids_recorded);
	assert_true(rf->tids_recorded > 0);
	if (rf->tids_recorded > CTP_CB_MAX_CONSECUTIVE_ERRORS)
		assert_false(atomic_load(&p->rt->cb_disabled[CB_THREAD]));
	assert_int_equal(atomic_load(&p->resource_err), -ENOMEM);
	assert_int_equal(rf->resource_err, -ENOMEM);
	assert_adds_up(r.cap);
	assert_true(ctp_capture_spoiled(r.cap, why, sizeof(why)));
	snprintf(want, sizeof(want),
		 "%" PRIu64 " plugin calls failed: %s (ENOMEM)", res,
		 strerror(ENOMEM));
	assert_string_equal(why, want);
	run_done(&r);
}

/* Write the capture, read it back with the C reader. */
static struct ctp_snap *write_read(struct ctp_capture *cap,
				   const struct ctp_config *cfg,
				   const char *name, char *path, size_t len)
{
	char err[512];
	struct ctp_snap *s = NULL;
	assert_int_equal(snprintf(path, len, "%s/%s", tmpdir, name) < (int)len,
			 1);
	if (ctp_cli_write_to(cap, cfg, path, NULL, NULL, false, err,
			     sizeof(err)) != 0)
		fail_msg("write: %s", err);
	if (ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("read: %s", err);
	return s;
}

/* `ctprof-core dump path` holds `"key": value` for each pair of want. */
static void assert_dump_has(const char *path, const char *const *want)
{
	char out[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(E2E_PATHF(out, "%s.json", path), 0);
	const char *args[] = {"dump", path, NULL};
	assert_int_equal(e2e_run_within(args, out, NULL, 120), 0);
	assert_int_equal(e2e_read_file(out, &text, &len), 0);
	for (size_t i = 0; want[i]; i++)
		if (!strstr(text, want[i]))
			fail_msg("dump has no %s", want[i]);
	free(text);
}

/* The counters of a spoiled capture through the writer, the reader and
 * dump; a clean one writes none of them and reads 0, as an old file. */
static void test_snapshot_counters(void **unused)
{
	(void)unused;
	static const char plugins[] =
		"  procfs-stat: {}\n  abi-good: {}\n  abi-starved: {}\n";
	struct run r;
	uint64_t limit;
	char path[PATH_MAX], line[128];
	run_load(&r, false, plugins);
	assert_int_equal(capture_with(&r, 2, &limit), 0);
	const struct ctp_readfail *rf = &r.cap->rf;
	uint64_t tids = rf->tids_unread_resource,
		 tgids = rf->tgids_unread_resource;
	assert_true(tids > 0 && tgids > 0);
	struct ctp_snap *s =
		write_read(r.cap, r.cfg, "spoiled.ctprof", path, sizeof(path));
	const struct ctp_snap_readfail *srf = ctp_snap_readfail(s);
	assert_int_equal(srf->tids_unread_resource, tids);
	assert_int_equal(srf->tgids_unread_resource, tgids);
	assert_int_equal(srf->cgroups_unread_resource, 0);
	assert_int_equal(srf->nofile_limit, limit);
	assert_non_null(srf->resource_error);
	assert_string_equal(srf->resource_error, "EMFILE");
	assert_int_equal(srf->tids_walked, tids);
	ctp_snap_free(s);
	snprintf(line, sizeof(line), "\"tgids_unread_resource\": %" PRIu64,
		 tgids);
	char line2[128];
	snprintf(line2, sizeof(line2), "\"tids_unread_resource\": %" PRIu64,
		 tids);
	const char *const want[] = {line, line2,
				    "\"resource_error\": \"EMFILE\"", NULL};
	assert_dump_has(path, want);

	/* The same engine again, every descriptor free. */
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	const struct ctp_plugin_info *p = info_of(r.cap, "abi-starved");
	uint64_t calls = atomic_load(&p->resource);
	assert_true(calls > 0);
	assert_int_equal(rf->tids_unread_resource, 0);
	s = write_read(r.cap, r.cfg, "starved.ctprof", path, sizeof(path));
	srf = ctp_snap_readfail(s);
	assert_int_equal(srf->tids_unread_resource, 0);
	assert_string_equal(srf->resource_error, "ENOMEM");
	const struct ctp_snap_plugin *sp = e2e_plugin(s, "abi-starved");
	assert_int_equal(sp->resource, calls);
	assert_int_equal(sp->errors, 0);
	assert_int_equal(e2e_plugin(s, "procfs-stat")->resource, 0);
	ctp_snap_free(s);
	run_done(&r);

	/* Clean: no resource key at all, and 0 read back. */
	run_load(&r, false, "  procfs-stat: {}\n");
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	s = write_read(r.cap, r.cfg, "clean.ctprof", path, sizeof(path));
	srf = ctp_snap_readfail(s);
	assert_int_equal(srf->tids_unread_resource, 0);
	assert_int_equal(srf->tgids_unread_resource, 0);
	assert_int_equal(srf->nofile_limit, 0);
	assert_null(srf->resource_error);
	ctp_snap_free(s);
	char *text = NULL;
	size_t len = 0;
	char out[PATH_MAX];
	const char *args[] = {"dump", path, NULL};
	assert_int_equal(E2E_PATHF(out, "%s.json", path), 0);
	assert_int_equal(e2e_run_within(args, out, NULL, 120), 0);
	assert_int_equal(e2e_read_file(out, &text, &len), 0);
	assert_null(strstr(text, "_unread_resource"));
	assert_null(strstr(text, "\"resource_error\""));
	free(text);
	run_done(&r);

	/* More resource failures of a file than failures: refused. */
	run_load(&r, false, "  procfs-stat: {}\n");
	assert_int_equal(capture_with(&r, -1, &limit), 0);
	r.cap->rf.resource[0] = r.cap->rf.failures[0] + 1;
	assert_int_equal(snprintf(path, sizeof(path), "%s/over.ctprof",
				  tmpdir) < (int)sizeof(path),
			 1);
	char err[512];
	if (ctp_cli_write_to(r.cap, r.cfg, path, NULL, NULL, false, err,
			     sizeof(err)) != 0)
		fail_msg("write: %s", err);
	assert_true(ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) < 0);
	char over[128];
	snprintf(over, sizeof(over),
		 "has more resource (%" PRIu64 ") than failures (%" PRIu64 ")",
		 r.cap->rf.resource[0], r.cap->rf.failures[0]);
	if (!strstr(err, "read_failures.resource: ") || !strstr(err, over))
		fail_msg("refused with: %s", err);
	run_done(&r);

	/* A file from before the counters. */
	assert_int_equal(ctp_snap_open(CTP_TEST_FIXTURES
				       "/snapshots/sample-v1.ctprof",
				       1ull << 30, &s, err, sizeof(err)),
			 0);
	srf = ctp_snap_readfail(s);
	assert_int_equal(srf->tids_unread_resource, 0);
	assert_int_equal(srf->tgids_unread_resource, 0);
	assert_null(srf->resource_error);
	for (size_t i = 0; i < srf->n_files; i++)
		assert_int_equal(srf->resource[i], 0);
	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		assert_int_equal(ctp_snap_plugins(s)[i].resource, 0);
	ctp_snap_free(s);
}

/* The binary with args (NULL-terminated, after argv[0]) under
 * RLIMIT_NOFILE n (fork, setrlimit, exec), stderr to log: its pid. */
static pid_t spawn_limited(unsigned n, const char *log, const char *const *args)
{
	char *argv[16] = {CTP_TEST_BINARY};
	for (size_t i = 0; args[i]; i++) {
		assert_true(i + 2 < sizeof(argv) / sizeof(argv[0]));
		argv[i + 1] = (char *)args[i];
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0644);
		struct rlimit rl;
		if (fd < 0 || dup2(fd, 2) < 0 ||
		    getrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(126);
		rl.rlim_cur = n;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(126);
		execv(CTP_TEST_BINARY, argv);
		_exit(127);
	}
	return pid;
}

/* The fixture with procfs-stat and abi-good (thread directories) at
 * tmpdir/<tag>.yaml, into cfg. */
static void cli_config(const char *tag, char *cfg, size_t len)
{
	char yaml[4 * PATH_MAX];
	assert_true(snprintf(cfg, len, "%s/%s.yaml", tmpdir, tag) < (int)len);
	/* allow_insecure_plugins: the loader's checks of the plugins'
	 * directories (and, in a sanitizer build, of its runtime library's)
	 * hold descriptors of their own; without them the walk, not the
	 * load, is what the smallest limit starves. */
	fixture_yaml(yaml, sizeof(yaml),
		     "workers: 1\nallow_insecure_plugins: true\n",
		     "  procfs-stat: {}\n  abi-good: {}\n");
	assert_int_equal(e2e_write_file(cfg, yaml, strlen(yaml)), 0);
}

/* Every plugin of the snapshot at path loaded? (Under a small limit the
 * loader's checks of a plugin's directories may run short first: a
 * sanitizer build's plugins have a runtime library as a dependency, whose
 * directory chain is checked too.) */
static bool all_loaded(const char *path)
{
	struct ctp_snap *s = NULL;
	char err[512];
	bool ok = ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) == 0;
	const struct ctp_snap_plugin *p = ok ? ctp_snap_plugins(s) : NULL;
	for (size_t i = 0; ok && i < ctp_snap_n_plugins(s); i++)
		ok = p[i].status == CTP_PST_LOADED;
	ctp_snap_free(s);
	return ok;
}

/* The smallest limit (4 .. 64) under which a one-shot capture with cfg
 * writes a snapshot with every plugin loaded, at out
 * (tmpdir/<tag>-N.ctprof); stderr to log. */
static unsigned smallest_limit(const char *cfg, const char *tag, char *out,
			       size_t len, const char *log)
{
	for (unsigned n = 4; n <= 64; n++) {
		assert_true(snprintf(out, len, "%s/%s-%u.ctprof", tmpdir, tag,
				     n) < (int)len);
		const char *args[] = {
			"--no-supervise", "--config", cfg, "-o", out, NULL};
		if (e2e_wait_bounded(spawn_limited(n, log, args), 120000,
				     "a capture under a limit") == 0 &&
		    all_loaded(out))
			return n;
	}
	e2e_show_file("stderr", log);
	fail_msg("no snapshot under any limit up to 64");
	return 0;
}

/*
 * The smallest descriptor limit under which the binary writes a snapshot
 * of the fixture is too small for the walk, which holds a process's and a
 * thread's directory and a file at once while the writer needs two: that
 * snapshot counts its unread tasks, and the report line says why.
 */
static void test_cli_limit(void **unused)
{
	(void)unused;
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	cli_config("cli", cfg, sizeof(cfg));
	assert_int_equal(E2E_PATHF(log, "%s/cli.log", tmpdir), 0);
	unsigned n = smallest_limit(cfg, "cli", out, sizeof(out), log);
	struct ctp_snap *s = NULL;
	char err[512];
	if (ctp_snap_open(out, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	if (rf->tids_unread_resource + rf->tgids_unread_resource == 0) {
		e2e_show_file("stderr", log);
		fail_msg("limit %u: nothing counted unread", n);
	}
	assert_int_equal(rf->tids_walked, rf->tids_recorded +
						  rf->tids_vanished +
						  rf->tids_unread_resource);
	assert_int_equal(rf->tgids_walked,
			 ctp_snap_table(s, CTP_SCOPE_PROCESS)->rows +
				 rf->tgids_vanished +
				 rf->tgids_unread_resource);
	assert_non_null(rf->resource_error);
	assert_string_equal(rf->resource_error, "EMFILE");
	assert_int_equal(rf->nofile_limit, n);
	ctp_snap_free(s);
	char *text = NULL;
	size_t len = 0;
	char tail[128];
	assert_int_equal(e2e_read_file(log, &text, &len), 0);
	snprintf(tail, sizeof(tail), "(EMFILE); descriptor limit %u\n", n);
	if (!strstr(text, "short of resources: ") || !strstr(text, tail)) {
		e2e_show_file("stderr", log);
		fail_msg("the report line does not say why");
	}
	free(text);
}

/* How many times needle occurs in text. */
static unsigned count_in(const char *text, const char *needle)
{
	unsigned n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Wait (a hang guard only) until dir holds at least n files. */
static void wait_files(const char *dir, size_t n, pid_t pid, const char *log)
{
	for (uint64_t t0 = e2e_now_ms(); e2e_files(dir) < n;) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			e2e_show_file("stderr", log);
			fail_msg("record ended with %zu of %zu snapshots",
				 e2e_files(dir), n);
		}
		if (e2e_now_ms() - t0 > 120000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("no %zu snapshots in 2 minutes", n);
		}
		usleep(20000);
	}
}

struct spoiled_count {
	size_t spoiled, clean;
};

static void count_spoiled(const struct ctp_snap *s, const char *path, void *arg)
{
	struct spoiled_count *c = arg;
	(void)path;
	if (ctp_snap_readfail(s)->tids_unread_resource +
	    ctp_snap_readfail(s)->tgids_unread_resource)
		c->spoiled++;
	else
		c->clean++;
}

/*
 * `record` under the same limit as test_cli_limit's: every snapshot is
 * written, spoiled ones counted as such; the log says why once for the run
 * of them, not per capture, and once that the run ended when the limit is
 * raised (prlimit on the recorder) and a complete capture follows.
 */
static void test_record_once(void **unused)
{
	(void)unused;
	char cfg[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], out[PATH_MAX];
	cli_config("rec", cfg, sizeof(cfg));
	assert_int_equal(E2E_PATHF(log, "%s/rec.log", tmpdir), 0);
	/* record holds no more descriptors than a one-shot capture while it
	 * walks, and writes the same way; a margin of one more would leave
	 * its walk whole. */
	unsigned n = smallest_limit(cfg, "rec", out, sizeof(out), log);
	assert_int_equal(E2E_PATHF(dir, "%s/rec", tmpdir), 0);
	const char *args[] = {"record", "--no-supervise", "--config", cfg, "-o",
			      dir,	"--interval",	  "100ms",    NULL};
	pid_t pid = spawn_limited(n, log, args);
	wait_files(dir, 3, pid, log);
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(prlimit(pid, RLIMIT_NOFILE, &rl, NULL), 0);
	wait_files(dir, e2e_files(dir) + 3, pid, log);
	kill(pid, SIGTERM);
	e2e_wait_bounded(pid, 60000, "record after SIGTERM");

	struct spoiled_count c = {0};
	char err[512];
	assert_true(e2e_each_snapshot(dir, count_spoiled, &c, err,
				      sizeof(err)) > 0);
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(e2e_read_file(log, &text, &len), 0);
	if (c.spoiled < 3 || c.clean < 2 ||
	    count_in(text, "capture short of resources: ") != 1 ||
	    count_in(text, "Too many open files") != 1 ||
	    count_in(text, "captures complete again after ") != 1 ||
	    count_in(text, "; short of resources\n") != c.spoiled) {
		free(text);
		e2e_show_file("stderr", log);
		fail_msg("%zu spoiled and %zu clean snapshots, or the log "
			 "says it other than once",
			 c.spoiled, c.clean);
	}
	free(text);
}

static int setup(void **unused)
{
	(void)unused;
	return e2e_tmpdir("resource", tmpdir, sizeof(tmpdir)) < 0 ? -1 : 0;
}

static int teardown(void **unused)
{
	(void)unused;
	e2e_rm_rf(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_processes_unread),
		cmocka_unit_test(test_fixture_threads_unread),
		cmocka_unit_test(test_fixture_split_unread),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_plugin_resource),
		cmocka_unit_test(test_snapshot_counters),
		cmocka_unit_test(test_cli_limit),
		cmocka_unit_test(test_record_once),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
