/* SPDX-License-Identifier: MIT */
/*
 * Rules of the real core that a one-line change of the core used to break
 * with every test still green (issue 12, "Tests against the real core").
 * Each test runs the built ctprof-core with the test collector
 * tests/plugins/abi_mut.c (three builds: abi-mut, abi-mut-lazy,
 * abi-mut-eager) on a fixture tree and reads the snapshot back:
 *
 *   field ownership   core/capture/api.c set_cell: a plugin cannot set another
 *                     plugin's field by passing its handle
 *   consecutive reset core/capture/engine.c after_call: a success resets the
 *                     consecutive-failure count, so a callback failing
 *                     every other call is never disabled
 *   lazy promotion    core/capture/loader.c map_files: a file one plugin wants
 *                     lazily and another up front is read up front, in
 *                     either order of the plugins
 *   vanished task     core/capture/engine.c thread_close: a thread whose
 *                     directory is gone after a callback said -ENOENT is
 *                     dropped, counted as vanished, its failed reads not
 *                     tallied
 *   opt_u64           core/capture/api.c: C syntax, must start with a
 *                     digit, no trailing bytes, no overflow
 */
#include <errno.h>
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

#include "e2e_util.h"
#include "reader.h"

#define FIXTURE_PROC CTP_TEST_FIXTURES "/abi-proc"

/* ---- Helpers ------------------------------------------------------------ */

/* One test's private directory, removed by teardown. */
struct mcase {
	char dir[PATH_MAX];
	char proc[PATH_MAX]; /* the proc root of the capture */
	char log[PATH_MAX];  /* ctprof-core's stderr */
	struct ctp_snap *snap;
};

static int setup(void **state)
{
	struct mcase *c = calloc(1, sizeof(*c));
	if (!c || e2e_tmpdir("mut", c->dir, sizeof(c->dir)) < 0) {
		free(c);
		return -1;
	}
	if (E2E_PATHF(c->log, "%s/stderr.txt", c->dir) < 0)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct mcase *c = *state;
	if (c->snap)
		ctp_snap_free(c->snap);
	e2e_rm_rf(c->dir);
	free(c);
	return 0;
}

static void put_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_file(const char *path, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(buf));
	if (e2e_write_file(path, buf, (size_t)n) < 0)
		fail_msg("cannot write %s", path);
}

static void mkdir_or_fail(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* A private copy of tests/fixtures/abi-proc as the proc root. */
static void copy_fixture(struct mcase *c)
{
	assert_int_equal(E2E_PATHF(c->proc, "%s/proc", c->dir), 0);
	assert_int_equal(e2e_copy_tree(FIXTURE_PROC, c->proc), 0);
}

/* One process `tgid` with threads tgid, tgid+1, ... named comms[i]; the
 * thread file abi-mut-file ("f-<tid>") only where has_file[i]. */
static void gen_process(struct mcase *c, unsigned tgid, size_t n,
			const char *const *comms, const bool *has_file)
{
	char p[PATH_MAX];
	assert_int_equal(E2E_PATHF(c->proc, "%s/proc", c->dir), 0);
	mkdir_or_fail(c->proc);
	assert_int_equal(E2E_PATHF(p, "%s/%u", c->proc, tgid), 0);
	mkdir_or_fail(p);
	assert_int_equal(E2E_PATHF(p, "%s/%u/comm", c->proc, tgid), 0);
	put_file(p, "%s\n", comms[0]);
	assert_int_equal(E2E_PATHF(p, "%s/%u/task", c->proc, tgid), 0);
	mkdir_or_fail(p);
	for (size_t i = 0; i < n; i++) {
		unsigned tid = tgid + (unsigned)i;
		assert_int_equal(
			E2E_PATHF(p, "%s/%u/task/%u", c->proc, tgid, tid), 0);
		mkdir_or_fail(p);
		assert_int_equal(
			E2E_PATHF(p, "%s/%u/task/%u/comm", c->proc, tgid, tid),
			0);
		put_file(p, "%s\n", comms[i]);
		if (has_file && !has_file[i])
			continue;
		assert_int_equal(E2E_PATHF(p, "%s/%u/task/%u/abi-mut-file",
					   c->proc, tgid, tid),
				 0);
		put_file(p, "f-%u\n", tid);
	}
}

/* Capture c->proc with one worker and the `plugins:` body given (YAML,
 * indented two spaces); fails the test unless ctprof-core exits 0. */
static const struct ctp_snap *capture(struct mcase *c, const char *plugins)
{
	char cfg[PATH_MAX], out[PATH_MAX], text[4096];
	assert_int_equal(E2E_PATHF(cfg, "%s/collectors.yaml", c->dir), 0);
	assert_int_equal(E2E_PATHF(out, "%s/snap.ctprof.zst", c->dir), 0);
	/* sys is the fixture too, and cgroup auto finds no mountinfo in it:
	 * nothing of this host is read. */
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\"]\n"
			 "workers: 1\n"
			 "roots:\n  proc: \"%s\"\n  sys: \"%s\"\n"
			 "  cgroup: auto\n"
			 "plugins:\n%s",
			 CTP_ABI_PLUGIN_DIR, c->proc, c->proc, plugins);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(e2e_write_file(cfg, text, (size_t)n), 0);
	if (c->snap)
		ctp_snap_free(c->snap);
	c->snap = e2e_capture(cfg, out, c->log);
	return c->snap;
}

static char *stderr_of(const struct mcase *c)
{
	char *b = NULL;
	assert_int_equal(e2e_read_file(c->log, &b, NULL), 0);
	return b;
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *snap,
					    const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	fail_msg("plugin %s not in the snapshot", name);
	return NULL;
}

/* Row of the thread table holding tid, or -1. */
static long thread_row(const struct ctp_snap *snap, uint64_t tid)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_non_null(t);
	for (size_t r = 0; r < t->rows; r++)
		if (t->tid[r] == tid)
			return (long)r;
	return -1;
}

static size_t row_of(const struct ctp_snap *snap, uint64_t tid)
{
	long r = thread_row(snap, tid);
	if (r < 0)
		fail_msg("tid %" PRIu64 " not in the thread table", tid);
	return (size_t)r;
}

/* The read-failure tally of one file and its ENOENT part. */
static uint64_t tally_of(const struct ctp_snap *snap, const char *file,
			 uint64_t *missing)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	for (size_t i = 0; i < rf->n_files; i++)
		if (strcmp(rf->file[i], file) == 0) {
			*missing = rf->missing[i];
			return rf->failures[i];
		}
	fail_msg("no read-failure tally for %s", file);
	return 0;
}

/* ---- 1. Field ownership (core/capture/api.c set_cell)
 * ---------------------------- */

/*
 * abi-mut in mode thief tries set_u64 and set_str with every handle below
 * 256 that is not its own, after abi-good (loaded first, so its fields have
 * handles the thief reaches) filled the row. The core must refuse every one
 * (-EINVAL), and abi-good's values stay what abi-good set: tid 101's
 * abi-good.value, which abi-good leaves absent, stays absent.
 */
static void test_field_ownership(void **state)
{
	struct mcase *c = *state;
	copy_fixture(c);
	const struct ctp_snap *snap =
		capture(c, "  abi-good: {}\n"
			   "  abi-mut: {options: {mode: thief}}\n");
	assert_int_equal(plugin(snap, "abi-good")->errors, 0);
	assert_int_equal(plugin(snap, "abi-mut")->errors, 0);
	static const struct {
		unsigned tid;
		const char *comm;
		int64_t value; /* -1: absent */
	} want[] = {
		{100, "abi-main", 0},
		{101, "abi-worker", -1},
		{200, "abi-other", 7},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t row = row_of(snap, want[i].tid);
		if (e2e_u64(snap, "abi-mut.stolen", row) != 0)
			fail_msg("tid %u: the core let abi-mut set %" PRIu64
				 " values of fields it does not own",
				 want[i].tid,
				 e2e_u64(snap, "abi-mut.stolen", row));
		e2e_assert_str(snap, "abi-good.comm", row, want[i].comm);
		struct ctp_value v = e2e_value(snap, "abi-good.value", row);
		if (want[i].value < 0)
			assert_int_equal(v.type, CTP_VALUE_ABSENT);
		else
			assert_int_equal(e2e_u64(snap, "abi-good.value", row),
					 (uint64_t)want[i].value);
	}
}

/* ---- 2. The consecutive-failure reset (core/capture/engine.c after_call)
 * --------- */

/*
 * abi-mut in mode flaky fails every other thread call with -EIO: 50
 * failures in 100 calls, more than CTP_CB_MAX_CONSECUTIVE_ERRORS (32), but
 * never two in a row. One worker, so the calls come in order. The thread
 * callback must never be disabled: all 100 calls made, 50 errors, no
 * warning.
 */
static void test_consecutive_reset(void **state)
{
	struct mcase *c = *state;
	enum { NT = 100 };
	const char *comms[NT];
	for (size_t i = 0; i < NT; i++)
		comms[i] = "flaky";
	gen_process(c, 1000, NT, comms, NULL);
	const struct ctp_snap *snap =
		capture(c, "  abi-mut: {options: {mode: flaky}}\n");
	const struct ctp_snap_plugin *p = plugin(snap, "abi-mut");
	assert_int_equal(p->status, 1 /* loaded */);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows, NT);
	char *err = stderr_of(c);
	if (strstr(err, "disabled"))
		fail_msg("a callback failing every other call was disabled:\n"
			 "%s",
			 err);
	free(err);
	assert_int_equal(e2e_u64(snap, "abi-mut.calls", 0), NT);
	assert_int_equal(p->errors, NT / 2);
	assert_int_equal(p->vanished, 0);
	/* Every call recorded its slot, the failing ones too. */
	for (unsigned tid = 1000; tid < 1000 + NT; tid++)
		assert_int_equal(
			e2e_i64(snap, "abi-mut.slot_err", row_of(snap, tid)),
			0);
}

/* ---- 3. Lazy-to-eager promotion (core/capture/loader.c map_files)
 * --------------- */

/*
 * abi-mut-lazy declares "?abi-lazy", abi-mut-eager "abi-lazy"; neither
 * calls file_get. Whatever the order of the two in the config, the file
 * must be read up front: both slots hold the bytes on entry (not -ENODATA),
 * and the read that fails (tid 200 has no abi-lazy) is tallied, although
 * nobody fetched it. Two lazy declarations stay lazy.
 */
static void check_promoted(struct mcase *c, const char *plugins)
{
	const struct ctp_snap *snap = capture(c, plugins);
	static const char *const names[] = {"abi-mut-lazy", "abi-mut-eager"};
	for (size_t i = 0; i < 2; i++) {
		char slot[64], slot_err[64];
		assert_int_equal(plugin(snap, names[i])->errors, 0);
		assert_int_equal(E2E_PATHF(slot, "%s.slot", names[i]), 0);
		assert_int_equal(E2E_PATHF(slot_err, "%s.slot_err", names[i]),
				 0);
		for (unsigned tid = 100; tid <= 101; tid++) {
			char want[32];
			size_t row = row_of(snap, tid);
			int64_t e = e2e_i64(snap, slot_err, row);
			if (e != 0)
				fail_msg("%s tid %u: slot err %" PRId64
					 " on entry; abi-lazy (declared "
					 "eagerly by abi-mut-eager) was not "
					 "read up front\nplugins:\n%s",
					 names[i], tid, e, plugins);
			assert_int_equal(E2E_PATHF(want, "lazy-%u", tid), 0);
			e2e_assert_str(snap, slot, row, want);
		}
		assert_int_equal(e2e_i64(snap, slot_err, row_of(snap, 200)),
				 -ENOENT);
	}
	uint64_t missing;
	assert_int_equal(tally_of(snap, "abi-lazy", &missing), 1);
	assert_int_equal(missing, 1);
}

static void test_lazy_promotion(void **state)
{
	struct mcase *c = *state;
	char p[PATH_MAX];
	copy_fixture(c);
	static const unsigned tids[][2] = {{100, 100}, {100, 101}};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(E2E_PATHF(p, "%s/%u/task/%u/abi-lazy", c->proc,
					   tids[i][0], tids[i][1]),
				 0);
		put_file(p, "lazy-%u\nsecond line\n", tids[i][1]);
	}
	/* The lazy declaration first: the eager one must promote it. */
	check_promoted(c, "  abi-mut-lazy: {}\n  abi-mut-eager: {}\n");
	/* The eager one first: the lazy one must not demote it. */
	check_promoted(c, "  abi-mut-eager: {}\n  abi-mut-lazy: {}\n");

	/* Two lazy declarations (abi-good's "?abi-lazy", which fails its
	 * call when the slot is not -ENODATA) stay lazy: nobody fetches, so
	 * nothing is read nor tallied. */
	const struct ctp_snap *snap =
		capture(c, "  abi-good: {}\n  abi-mut-lazy: {}\n");
	assert_int_equal(plugin(snap, "abi-good")->errors, 0);
	assert_int_equal(plugin(snap, "abi-mut-lazy")->errors, 0);
	static const unsigned all[] = {100, 101, 200};
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(e2e_i64(snap, "abi-mut-lazy.slot_err",
					 row_of(snap, all[i])),
				 -ENODATA);
	uint64_t missing;
	assert_int_equal(tally_of(snap, "abi-lazy", &missing), 0);
}

/* ---- 4. A thread that vanished mid-walk (core/capture/engine.c thread_close)
 * -------- */

/*
 * Process 1000 (a private tree), one worker:
 *   1000 "keep"    has abi-mut-file; its callback succeeds
 *   1001 "vanish"  no abi-mut-file (a failed read); its callback renames
 *                  task/1001 away and returns -ENOENT
 *   1002 "enoent"  no abi-mut-file; its callback returns -ENOENT, but
 *                  task/1002 stays: the row is kept, its failure tallied
 *   1003 "vanish"  has abi-mut-file; the callback alone says it vanished
 * 1001 and 1003 must be dropped and counted as vanished, and 1001's failed
 * read must not be tallied.
 */
static void test_vanished_thread(void **state)
{
	struct mcase *c = *state;
	static const char *const comms[] = {"keep", "vanish", "enoent",
					    "vanish"};
	static const bool has_file[] = {true, false, false, true};
	gen_process(c, 1000, 4, comms, has_file);
	const struct ctp_snap *snap =
		capture(c, "  abi-mut: {options: {mode: vanish}}\n");

	/* The plugin did rename the two directories. */
	for (unsigned tid = 1001; tid <= 1003; tid += 2) {
		char p[PATH_MAX];
		struct stat st;
		assert_int_equal(E2E_PATHF(p, "%s/1000/gone-%u", c->proc, tid),
				 0);
		if (stat(p, &st) < 0)
			fail_msg("abi-mut did not rename task/%u away", tid);
	}
	const struct ctp_snap_plugin *p = plugin(snap, "abi-mut");
	assert_int_equal(p->errors, 0);
	assert_int_equal(p->vanished, 3);
	assert_int_equal(e2e_u64(snap, "abi-mut.calls", 0), 4);

	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows, 2);
	size_t keep = row_of(snap, 1000), stay = row_of(snap, 1002);
	e2e_assert_str(snap, "abi-mut.slot", keep, "f-1000");
	assert_int_equal(e2e_i64(snap, "abi-mut.slot_err", stay), -ENOENT);
	for (unsigned tid = 1001; tid <= 1003; tid += 2)
		if (thread_row(snap, tid) >= 0)
			fail_msg("tid %u vanished under the walk but has a "
				 "row",
				 tid);

	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	assert_int_equal(rf->tids_walked, 4);
	assert_int_equal(rf->tids_recorded, 2);
	assert_int_equal(rf->tids_vanished, 2);
	/* Only 1002's failed read: 1001's went with its row. */
	uint64_t missing;
	assert_int_equal(tally_of(snap, "abi-mut-file", &missing), 1);
	assert_int_equal(missing, 1);
	/* The process row counts the two threads recorded. */
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	assert_int_equal(pt->rows, 1);
	assert_int_equal(pt->nthreads[0], 2);
}

/* ---- 5. opt_u64 (core/capture/api.c)
 * --------------------------------------------- */

/*
 * abi-mut in mode opts reads every other option with opt_u64 and records
 * "key=0:value" or "key=errno". docs/PLUGINS.md: C syntax (0x hex, a
 * leading 0 octal), must start with a digit; anything else, trailing
 * bytes, or a value past 2^64-1 is -EINVAL.
 */
static void test_opt_u64(void **state)
{
	struct mcase *c = *state;
	static const struct {
		const char *key, *yaml, *want;
	} opts[] = {
		{"dec", "\"250\"", "0:250"},
		{"zero", "\"0\"", "0:0"},
		{"hex", "\"0x10\"", "0:16"},
		{"oct", "\"010\"", "0:8"},
		{"max", "\"18446744073709551615\"", "0:18446744073709551615"},
		{"neg", "\"-1\"", "-22"},
		{"space", "\" 5\"", "-22"},
		{"empty", "\"\"", "-22"},
		{"plus", "\"+5\"", "-22"},
		{"trail", "\"5x\"", "-22"},
		{"trailspace", "\"5 \"", "-22"},
		{"over", "\"18446744073709551616\"", "-22"},
		{"hexonly", "\"0x\"", "-22"},
		{"badoct", "\"08\"", "-22"},
		{"word", "\"ten\"", "-22"},
	};
	char plugins[2048], want[1024];
	size_t po = 0, wo = 0;
	po += (size_t)snprintf(plugins, sizeof(plugins),
			       "  abi-mut:\n    options:\n      mode: opts\n");
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		po += (size_t)snprintf(plugins + po, sizeof(plugins) - po,
				       "      %s: %s\n", opts[i].key,
				       opts[i].yaml);
		wo += (size_t)snprintf(want + wo, sizeof(want) - wo, "%s%s=%s",
				       i ? " " : "", opts[i].key, opts[i].want);
		assert_true(po < sizeof(plugins) && wo < sizeof(want));
	}
	copy_fixture(c);
	const struct ctp_snap *snap = capture(c, plugins);
	assert_int_equal(plugin(snap, "abi-mut")->errors, 0);
	e2e_assert_str(snap, "abi-mut.opts", 0, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_field_ownership, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_consecutive_reset, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lazy_promotion, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vanished_thread, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_opt_u64, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
