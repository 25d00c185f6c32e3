/* SPDX-License-Identifier: MIT */
/*
 * The schedstat plugin end to end: run the built ctprof-core with only
 * schedstat and decode the snapshot with core/snapshot/reader.c.
 *
 *   (no argument)   the fixture tree tests/fixtures/proc-sched: every
 *                   schedstat field of every thread, absent ones included,
 *                   the summary counters and the read-failure tally; the
 *                   same with 4 workers; `sched: false`.
 *   live-run-time   a thread of this process burns ~200 ms of CPU; its
 *                   schedstat.run_time is within 20% of its own
 *                   CLOCK_THREAD_CPUTIME_ID. Skips (77) without
 *                   task/<tid>/schedstat (CONFIG_SCHED_INFO off).
 *   live-absent     on a kernel whose sched file lacks the schedstats keys
 *                   (CONFIG_SCHEDSTATS off, or kernel.sched_schedstats=0),
 *                   those fields are absent for every thread, not zero;
 *                   by default (sched: auto) the sched file is not read
 *                   at all, with `sched: always` the keys it does print
 *                   (se.nr_migrations, se.slice) are recorded.
 *                   Skips (77) when the keys are there.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define FIX_PROC       CTP_TEST_FIXTURES "/proc-sched"
#define FIX_SYS	       CTP_TEST_FIXTURES "/sys"
#define FIX_CGROUP     CTP_TEST_FIXTURES "/cgroup"
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

/* ---- The plugin's fields ------------------------------------------------- */

enum { K_COUNT = 1, K_NS_SUM, K_NS_PEAK, K_NS_GAUGE, K_BOOL };

static const struct {
	const char *name; /* without "schedstat." */
	int k;
	bool gated; /* printed only with CONFIG_SCHEDSTATS (and the sysctl) */
} fdefs[] = {
	{"run_time", K_NS_SUM, false},
	{"wait_time", K_NS_SUM, false},
	{"timeslices", K_COUNT, false},
	{"nr_wakeups", K_COUNT, true},
	{"nr_wakeups_local", K_COUNT, true},
	{"nr_wakeups_remote", K_COUNT, true},
	{"nr_wakeups_sync", K_COUNT, true},
	{"nr_wakeups_migrate", K_COUNT, true},
	{"nr_wakeups_affine", K_COUNT, true},
	{"nr_wakeups_affine_attempts", K_COUNT, true},
	{"nr_migrations", K_COUNT, false},
	{"nr_forced_migrations", K_COUNT, true},
	{"nr_failed_migrations_affine", K_COUNT, true},
	{"nr_failed_migrations_running", K_COUNT, true},
	{"nr_failed_migrations_hot", K_COUNT, true},
	{"wait_sum", K_NS_SUM, true},
	{"wait_count", K_COUNT, true},
	{"wait_max", K_NS_PEAK, true},
	{"sleep_max", K_NS_PEAK, true},
	{"block_sum", K_NS_SUM, true},
	{"block_max", K_NS_PEAK, true},
	{"iowait_sum", K_NS_SUM, true},
	{"iowait_count", K_COUNT, true},
	{"exec_max", K_NS_PEAK, true},
	{"slice_max", K_NS_PEAK, true},
	{"core_forceidle_sum", K_NS_SUM, true},
	{"slice", K_NS_GAUGE, false},
	{"voluntary_sleep", K_NS_SUM, true},
};
#define N_FIELDS (sizeof(fdefs) / sizeof(fdefs[0]))

/* Find fdefs[i] in a snapshot and check its description. */
static const struct ctp_snap_field *snap_field(const struct ctp_snap *s,
					       size_t i)
{
	char name[64];
	const struct ctp_snap_field *f;
	uint8_t type = CTP_TYPE_U64, unit = CTP_UNIT_NS;
	uint8_t kind = CTP_KIND_COUNTER, rule = CTP_RULE_SUM;

	snprintf(name, sizeof(name), "schedstat.%s", fdefs[i].name);
	f = ctp_snap_field_find(s, name);
	CHECK(f, "field %s missing", name);
	if (!f)
		return NULL;
	switch (fdefs[i].k) {
	case K_COUNT:
		unit = CTP_UNIT_COUNT;
		break;
	case K_NS_PEAK:
		kind = CTP_KIND_PEAK;
		rule = CTP_RULE_MAX;
		break;
	case K_NS_GAUGE:
		kind = CTP_KIND_GAUGE;
		rule = CTP_RULE_MAX;
		break;
	case K_BOOL:
		type = CTP_TYPE_BOOL;
		unit = CTP_UNIT_NONE;
		kind = CTP_KIND_CATEGORICAL;
		rule = CTP_RULE_MODE;
		break;
	}
	CHECK(f->scope == CTP_SCOPE_THREAD && f->type == type &&
		      f->unit == unit && f->kind == kind && f->rule == rule,
	      "field %s: scope %u type %u unit %u kind %u rule %u", name,
	      f->scope, f->type, f->unit, f->kind, f->rule);
	CHECK(!strcmp(f->plugin, "schedstat"), "field %s: plugin %s", name,
	      f->plugin);
	return f->type == type ? f : NULL;
}

/* ---- What the fixture holds --------------------------------------------- */

/*
 * Every recorded thread, in snapshot order, with "name=value" for each field
 * that has a value; a field not named must be absent. The values are those
 * of the fixture's text (tests/fixtures/proc-sched/README says which case
 * each thread is).
 */
#define FULL_A                                                                 \
	"nr_wakeups=60791 nr_wakeups_local=41022 nr_wakeups_remote=19769 "     \
	"nr_wakeups_sync=2210 nr_wakeups_migrate=390 nr_wakeups_affine=803 "   \
	"nr_wakeups_affine_attempts=5120 nr_migrations=412 "                   \
	"nr_forced_migrations=7 nr_failed_migrations_affine=3 "                \
	"nr_failed_migrations_running=118 nr_failed_migrations_hot=45 "        \
	"wait_count=61204 wait_max=17998004 block_max=103004560 "              \
	"iowait_sum=8830000017 iowait_count=1270 exec_max=4000812 "            \
	"slice_max=11250331 core_forceidle_sum=1500250 slice=2800000 "
#define DL_C                                                                   \
	"nr_wakeups=2 nr_wakeups_local=1 nr_wakeups_remote=1 "                 \
	"nr_wakeups_sync=0 nr_wakeups_migrate=1 nr_wakeups_affine=0 "          \
	"nr_wakeups_affine_attempts=0 nr_migrations=1 "                        \
	"nr_forced_migrations=0 nr_failed_migrations_affine=0 "                \
	"nr_failed_migrations_running=0 nr_failed_migrations_hot=0 "           \
	"wait_sum=345 wait_count=3 wait_max=12 sleep_max=500000 "              \
	"block_sum=1000000 block_max=500000 iowait_sum=1000000 "               \
	"iowait_count=2 exec_max=999 slice_max=0 core_forceidle_sum=0 "        \
	"voluntary_sleep=0 "

static const struct exp_thread {
	uint32_t tgid, tid;
	const char *comm;
	const char *values;
} exp_threads[] = {
	{100, 100, "db-server",
	 "run_time=15302448102 wait_time=2210612345 timeslices=61874 " FULL_A
	 "wait_sum=2210540012 sleep_max=600012233001 block_sum=20533871007 "
	 "voluntary_sleep=4371288148268"},
	{100, 101, "my (x) t)",
	 "run_time=901000001 wait_time=123456 timeslices=150 nr_wakeups=130 "
	 "nr_wakeups_local=100 nr_wakeups_remote=30 nr_wakeups_sync=0 "
	 "nr_wakeups_migrate=4 nr_wakeups_affine=0 "
	 "nr_wakeups_affine_attempts=0 nr_migrations=9 "
	 "nr_forced_migrations=0 nr_failed_migrations_affine=0 "
	 "nr_failed_migrations_running=0 nr_failed_migrations_hot=0 "
	 "wait_sum=0 wait_count=0 wait_max=0 sleep_max=1000000000 "
	 "block_sum=0 block_max=0 iowait_sum=0 iowait_count=0 "
	 "exec_max=3999999 slice_max=0 slice=3000000 "
	 "voluntary_sleep=66000000000"},
	{100, 102, "dl-worker",
	 "run_time=250000000 wait_time=345 timeslices=5 " DL_C},
	{200, 200, "legacy",
	 "run_time=3300440055 wait_time=6100000 timeslices=640 nr_wakeups=600 "
	 "nr_wakeups_local=500 nr_wakeups_remote=100 nr_wakeups_sync=5 "
	 "nr_wakeups_migrate=6 nr_wakeups_affine=7 "
	 "nr_wakeups_affine_attempts=8 nr_migrations=77 "
	 "nr_forced_migrations=4 nr_failed_migrations_affine=1 "
	 "nr_failed_migrations_running=2 nr_failed_migrations_hot=3 "
	 "wait_sum=6000004 wait_count=700 wait_max=5000003 "
	 "sleep_max=30000000001 block_max=2000000 iowait_sum=8000005 "
	 "iowait_count=90 exec_max=3000001 slice_max=4000002"},
	{200, 201, "stats-prefix",
	 "run_time=3000000 wait_time=900000 timeslices=12 nr_wakeups=10 "
	 "nr_wakeups_local=8 nr_wakeups_remote=2 nr_wakeups_sync=1 "
	 "nr_wakeups_migrate=2 nr_wakeups_affine=1 "
	 "nr_wakeups_affine_attempts=3 nr_migrations=2 "
	 "nr_forced_migrations=0 nr_failed_migrations_affine=0 "
	 "nr_failed_migrations_running=0 nr_failed_migrations_hot=0 "
	 "wait_sum=900000 wait_count=4 wait_max=500000 sleep_max=7000000 "
	 "block_sum=4000000 block_max=3000000 iowait_sum=0 iowait_count=0 "
	 "exec_max=1000000 slice_max=2000000 voluntary_sleep=6000000"},
	{300, 300, "partial",
	 "run_time=116177358 wait_time=12166374 timeslices=414 "
	 "nr_migrations=54 slice=1400000"},
	/* no schedstat file */
	{300, 301, "no-schedstat", "nr_migrations=1 slice=1400000"},
	/* no sched file */
	{300, 302, "no-sched", "run_time=0 wait_time=0 timeslices=1"},
	/* wait_sum, sleep_max, sum_block_runtime negative */
	{400, 400, "neg-dotted",
	 "run_time=15302448102 wait_time=2210612345 timeslices=61874 " FULL_A},
	{400, 401, "garbage",
	 "run_time=123 nr_wakeups_remote=19769 nr_wakeups_sync=2210 "
	 "nr_wakeups_migrate=390 nr_wakeups_affine=803 "
	 "nr_wakeups_affine_attempts=5120 nr_migrations=412 "
	 "nr_forced_migrations=7 nr_failed_migrations_affine=3 "
	 "nr_failed_migrations_running=118 nr_failed_migrations_hot=45 "
	 "wait_sum=2210540012 sleep_max=600012233001 block_sum=2000000000 "
	 "block_max=103004560 iowait_count=1270 core_forceidle_sum=1500250"},
	{400, 402, "truncated",
	 "run_time=15302448102 wait_time=2210612345 nr_wakeups=60791 "
	 "nr_wakeups_local=41022 nr_wakeups_remote=19769 "
	 "nr_wakeups_sync=2210 nr_wakeups_migrate=390 nr_wakeups_affine=803 "
	 "nr_migrations=412 nr_forced_migrations=7 "
	 "nr_failed_migrations_affine=3 nr_failed_migrations_running=118 "
	 "nr_failed_migrations_hot=45 wait_sum=2210540012 wait_count=61204 "
	 "wait_max=17998004 sleep_max=600012233001 block_sum=20533871007 "
	 "block_max=103004560 iowait_sum=8830000017 iowait_count=1270 "
	 "exec_max=4000812 slice_max=11250331 "
	 "voluntary_sleep=4371288148268"},
	{400, 403, "no-header", "wait_time=5 timeslices=6 " DL_C},
	/* the fake wait_max in the header's comm is not taken */
	{400, 404, "evil",
	 "run_time=7 wait_time=8 timeslices=9 nr_migrations=54 slice=1400000"},
};
#define N_THREADS (sizeof(exp_threads) / sizeof(exp_threads[0]))

static const struct {
	uint32_t tgid;
	const char *comm;
	uint64_t nthreads;
} exp_procs[] = {
	{100, "db-server", 3},
	{200, "legacy", 2},
	{300, "partial", 3},
	{400, "neg-dotted", 5},
};
#define N_PROCS (sizeof(exp_procs) / sizeof(exp_procs[0]))

static const struct {
	const char *name;
	uint64_t value;
} exp_summary[] = {
	{"negative_dotted_values", 3},	 /* 400 */
	{"sched_parse_errors", 3},	 /* 401, 402, 403 */
	{"schedstat_parse_errors", 3},	 /* 401, 402, 403 */
	{"voluntary_sleep_negative", 1}, /* 401 */
	/* No taskstats source on a fixture root: the schedstat file for
	 * every thread; sched read (a copied tree says what it holds). */
	{"from_taskstats", 0},
	{"from_files", 13},
	{"sched_not_read", 0},
	{"from_task", 0},
};
#define N_SUMMARY (sizeof(exp_summary) / sizeof(exp_summary[0]))

/* The expected value of `name` in a values string; false when absent. */
static bool exp_value(const char *values, const char *name, uint64_t *v)
{
	size_t n = strlen(name);
	const char *p;

	for (p = values; *p;) {
		if (!strncmp(p, name, n) && p[n] == '=') {
			*v = strtoull(p + n + 1, NULL, 10);
			return true;
		}
		p += strcspn(p, " ");
		p += strspn(p, " ");
	}
	return false;
}

/* Every name in a values string is a field (no typo hides a check). */
static void expectations_name_fields(void **state)
{
	(void)state;
	nbad = 0;
	for (size_t t = 0; t < N_THREADS; t++) {
		const char *p = exp_threads[t].values;
		size_t named = 0;

		while (*p) {
			size_t len = strcspn(p, "=");
			bool known = false;

			for (size_t i = 0; i < N_FIELDS; i++)
				known |= strlen(fdefs[i].name) == len &&
					 !strncmp(p, fdefs[i].name, len);
			CHECK(known, "tid %u: no field '%.*s'",
			      exp_threads[t].tid, (int)len, p);
			named++;
			p += strcspn(p, " ");
			p += strspn(p, " ");
		}
		size_t found = 0;
		uint64_t v;
		for (size_t i = 0; i < N_FIELDS; i++)
			found += exp_value(exp_threads[t].values, fdefs[i].name,
					   &v);
		CHECK(found == named, "tid %u: a field is named twice",
		      exp_threads[t].tid);
	}
	assert_int_equal(nbad, 0);
}

/* ---- Running captures --------------------------------------------------- */

static char tmp[PATH_MAX];
static unsigned seq;
static struct ctp_snap *snaps[8];
static size_t n_snaps;

static int group_setup(void **state)
{
	(void)state;
	return e2e_tmpdir("e2e-sched", tmp, sizeof(tmp));
}

static int group_teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp);
}

/* Snapshots of the running test, freed by its teardown even when a check
 * fails midway (cmocka leaves the test by longjmp). */
static int free_snaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_snaps; i++)
		ctp_snap_free(snaps[i]);
	n_snaps = 0;
	return 0;
}

/* A YAML double-quoted scalar, so any path survives. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A config running schedstat alone (required); proc NULL: the live host. */
static int write_config(const char *path, const char *proc, unsigned workers,
			const char *options)
{
	FILE *f = fopen(path, "we");
	int bad;

	if (!f)
		return -errno;
	fputs("# written by tests/test_e2e_sched.c\nplugin_dirs:\n  - ", f);
	put_quoted(f, CTP_TEST_PLUGIN_DIR);
	fprintf(f, "\nworkers: %u\n", workers);
	if (proc) {
		fputs("roots:\n  proc: ", f);
		put_quoted(f, proc);
		fputs("\n  sys: ", f);
		put_quoted(f, FIX_SYS);
		fputs("\n  cgroup: ", f);
		put_quoted(f, FIX_CGROUP);
		fputc('\n', f);
	}
	fputs("plugins:\n  schedstat:\n    enabled: true\n"
	      "    required: true\n",
	      f);
	if (options)
		fprintf(f, "    options:\n      %s\n", options);
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

static struct ctp_snap *capture(const char *proc, unsigned workers,
				const char *options)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	unsigned n = ++seq;
	struct ctp_snap *s = NULL;

	PATH(cfg, "%s/cfg-%u.yaml", tmp, n);
	PATH(out, "%s/snap-%u.ctprof.zst", tmp, n);
	PATH(log, "%s/log-%u.txt", tmp, n);
	assert_int_equal(write_config(cfg, proc, workers, options), 0);
	s = e2e_capture(cfg, out, log);
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *s)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);

	assert_int_equal(ctp_snap_n_plugins(s), 1);
	assert_string_equal(p->name, "schedstat");
	return p;
}

static uint64_t summary(const struct ctp_snap_plugin *p, const char *name)
{
	for (size_t i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			return p->summary[i];
	fail_msg("no summary counter %s", name);
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

/* One cell against the expectation. */
static void check_value(const struct ctp_snap *s,
			const struct ctp_snap_field *f, size_t row,
			uint32_t tid, size_t i, bool have, uint64_t want)
{
	struct ctp_value v = ctp_snap_get(s, f, row);

	if (!have) {
		CHECK(v.type == CTP_VALUE_ABSENT,
		      "tid %u: %s should be absent (type %u, %" PRIu64 ")", tid,
		      fdefs[i].name, v.type, v.u64);
		return;
	}
	if (fdefs[i].k == K_BOOL) {
		CHECK(v.type == CTP_TYPE_BOOL && v.b == (want != 0),
		      "tid %u: %s type %u value %d, expected %" PRIu64, tid,
		      fdefs[i].name, v.type, v.b, want);
		return;
	}
	CHECK(v.type == CTP_TYPE_U64 && v.u64 == want,
	      "tid %u: %s type %u value %" PRIu64 ", expected %" PRIu64, tid,
	      fdefs[i].name, v.type, v.u64, want);
}

/* ---- The fixture -------------------------------------------------------- */

static void check_fixture(const struct ctp_snap *s)
{
	const struct ctp_snap_field *sf[N_FIELDS];
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	const struct ctp_snap_plugin *p = plugin(s);
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);

	nbad = 0;
	CHECK(ctp_snap_n_fields(s) == N_FIELDS, "%zu fields, expected %zu",
	      ctp_snap_n_fields(s), N_FIELDS);
	for (size_t i = 0; i < N_FIELDS; i++)
		sf[i] = snap_field(s, i);

	CHECK(p->status == 1 && p->errors == 0 && p->vanished == 0 &&
		      p->calls == N_THREADS + 1, /* and host */
	      "plugin status %u errors %" PRIu64 " vanished %" PRIu64
	      " calls %" PRIu64,
	      p->status, p->errors, p->vanished, p->calls);
	CHECK(p->n_summary == N_SUMMARY, "%zu summary counters", p->n_summary);
	for (size_t i = 0; i < N_SUMMARY; i++)
		CHECK(summary(p, exp_summary[i].name) == exp_summary[i].value,
		      "summary %s = %" PRIu64 ", expected %" PRIu64,
		      exp_summary[i].name, summary(p, exp_summary[i].name),
		      exp_summary[i].value);

	CHECK(rf->tids_walked == N_THREADS && rf->tids_recorded == N_THREADS &&
		      rf->tids_vanished == 0 && rf->tgids_walked == N_PROCS,
	      "walked %" PRIu64 " recorded %" PRIu64 " vanished %" PRIu64
	      " tgids %" PRIu64,
	      rf->tids_walked, rf->tids_recorded, rf->tids_vanished,
	      rf->tgids_walked);
	CHECK(tally(s, "schedstat") == 1, "schedstat failures %" PRIu64,
	      tally(s, "schedstat"));
	CHECK(tally(s, "sched") == 1, "sched failures %" PRIu64,
	      tally(s, "sched"));

	assert_non_null(tt);
	assert_non_null(pt);
	CHECK(pt->rows == N_PROCS, "%zu process rows", pt->rows);
	for (size_t i = 0; i < pt->rows && i < N_PROCS; i++)
		CHECK(pt->tgid[i] == exp_procs[i].tgid &&
			      e2e_bytes_eq(pt->comm[i], exp_procs[i].comm) &&
			      pt->nthreads[i] == exp_procs[i].nthreads,
		      "process row %zu: %" PRIu64 " with %" PRIu64 " threads",
		      i, pt->tgid[i], pt->nthreads[i]);

	CHECK(tt->rows == N_THREADS, "%zu thread rows, expected %zu", tt->rows,
	      N_THREADS);
	for (size_t r = 0; r < tt->rows && r < N_THREADS; r++) {
		const struct exp_thread *e = &exp_threads[r];

		CHECK(tt->tgid[r] == e->tgid && tt->tid[r] == e->tid &&
			      e2e_bytes_eq(tt->comm[r], e->comm),
		      "thread row %zu is %" PRIu64 "/%" PRIu64
		      ", expected %u/%u %s",
		      r, tt->tgid[r], tt->tid[r], e->tgid, e->tid, e->comm);
		if (tt->tid[r] != e->tid)
			continue;
		for (size_t i = 0; i < N_FIELDS; i++) {
			uint64_t want = 0;
			bool have = exp_value(e->values, fdefs[i].name, &want);

			if (sf[i])
				check_value(s, sf[i], r, e->tid, i, have, want);
		}
	}
	assert_int_equal(nbad, 0);
}

static void fixture_capture(void **state)
{
	(void)state;
	check_fixture(capture(FIX_PROC, 1, NULL));
}

/* Concurrent workers: the same snapshot content. */
static void fixture_workers(void **state)
{
	(void)state;
	check_fixture(capture(FIX_PROC, 4, NULL));
}

/* sched: false: the sched file is never read (so never tallied), and only
 * the three schedstat fields have values. */
static void fixture_sched_off(void **state)
{
	struct ctp_snap *s = capture(FIX_PROC, 1, "sched: false");
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_plugin *p = plugin(s);

	(void)state;
	nbad = 0;
	CHECK(tally(s, "sched") == 0, "sched failures %" PRIu64,
	      tally(s, "sched"));
	CHECK(tally(s, "schedstat") == 1, "schedstat failures %" PRIu64,
	      tally(s, "schedstat"));
	CHECK(summary(p, "sched_parse_errors") == 0 &&
		      summary(p, "negative_dotted_values") == 0 &&
		      summary(p, "schedstat_parse_errors") == 3,
	      "summary counters");
	assert_non_null(tt);
	CHECK(tt->rows == N_THREADS, "%zu thread rows", tt->rows);
	for (size_t r = 0; r < tt->rows && r < N_THREADS; r++) {
		for (size_t i = 0; i < N_FIELDS; i++) {
			const struct ctp_snap_field *f = snap_field(s, i);
			uint64_t want = 0;
			bool have = i < 3 && exp_value(exp_threads[r].values,
						       fdefs[i].name, &want);

			if (f)
				check_value(s, f, r, exp_threads[r].tid, i,
					    have, want);
		}
	}
	assert_int_equal(nbad, 0);
}

/* ---- Live: a thread of ours --------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool ready, release;

struct burner {
	uint64_t burn_ns; /* CPU to burn, 0 for none */
	pid_t tid;
	uint64_t cpu_ns; /* its CLOCK_THREAD_CPUTIME_ID when parked */
	int err;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *burner_main(void *arg)
{
	struct burner *b = arg;
	volatile uint64_t sink = 0;
	(void)sink;
	uint64_t start;

	b->tid = (pid_t)syscall(SYS_gettid);
	start = thread_cpu_ns();
	if (!start)
		b->err = -errno;
	while (!b->err && thread_cpu_ns() - start < b->burn_ns)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i * 2654435761u;
	b->cpu_ns = thread_cpu_ns();
	pthread_mutex_lock(&lock);
	ready = true;
	pthread_cond_broadcast(&cond);
	while (!release)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void start_burner(struct burner *b, pthread_t *th)
{
	ready = release = false;
	assert_int_equal(pthread_create(th, NULL, burner_main, b), 0);
	pthread_mutex_lock(&lock);
	while (!ready)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	assert_int_equal(b->err, 0);
}

static void stop_burner(pthread_t th)
{
	pthread_mutex_lock(&lock);
	release = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
}

static size_t row_of(const struct ctp_snap *s, pid_t tid)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);

	for (size_t i = 0; i < tt->rows; i++)
		if (tt->tid[i] == (uint64_t)tid &&
		    tt->tgid[i] == (uint64_t)getpid())
			return i;
	fail_msg("tid %d not in the snapshot", (int)tid);
	return 0;
}

static char *task_file(pid_t tid, const char *name)
{
	char path[128], *text = NULL;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
	if (e2e_read_file(path, &text, NULL) < 0)
		return NULL;
	return text;
}

static void live_run_time(void **state)
{
	struct burner b = {.burn_ns = 200000000};
	pthread_t th;
	struct ctp_snap *s;
	const struct ctp_snap_field *f;
	struct ctp_value v;
	size_t row;

	(void)state;
	start_burner(&b, &th);
	s = capture(NULL, 2, NULL);
	stop_burner(th);

	nbad = 0;
	row = row_of(s, b.tid);
	f = ctp_snap_field_find(s, "schedstat.run_time");
	assert_non_null(f);
	v = ctp_snap_get(s, f, row);
	assert_int_equal(v.type, CTP_TYPE_U64);
	print_message("[ NOTE     ] burner tid %d: CLOCK_THREAD_CPUTIME_ID "
		      "%" PRIu64 " ns, schedstat.run_time %" PRIu64 " ns\n",
		      (int)b.tid, b.cpu_ns, v.u64);
	CHECK(b.cpu_ns >= b.burn_ns, "burned only %" PRIu64 " ns", b.cpu_ns);
	CHECK(v.u64 >= b.cpu_ns - b.cpu_ns / 5 &&
		      v.u64 <= b.cpu_ns + b.cpu_ns / 5,
	      "run_time %" PRIu64 " not within 20%% of %" PRIu64, v.u64,
	      b.cpu_ns);
	f = ctp_snap_field_find(s, "schedstat.timeslices");
	assert_non_null(f);
	v = ctp_snap_get(s, f, row);
	CHECK(v.type == CTP_TYPE_U64 && v.u64 >= 1, "timeslices %" PRIu64,
	      v.u64);
	assert_int_equal(nbad, 0);
}

/* Keys of a live sched text, by an independent naive reader: the name at
 * the start of a line, bare or after a known prefix, then blanks and ':'. */
static bool live_has_key(const char *text, const char *key)
{
	static const char *const prefixes[] = {"", "se.", "stats.",
					       "se.statistics."};
	char want[96];

	for (size_t i = 0; i < 4; i++) {
		snprintf(want, sizeof(want), "%s%s", prefixes[i], key);
		for (const char *l = text; l && *l;
		     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			size_t n = strlen(want);

			if (!strncmp(l, want, n) &&
			    (l[n] == ' ' || l[n] == ':'))
				return true;
		}
	}
	return false;
}

/* The sched key behind a field, for the live check. */
static const char *sched_key(const char *field)
{
	if (!strcmp(field, "block_sum"))
		return "sum_block_runtime";
	if (!strcmp(field, "voluntary_sleep"))
		return "sum_sleep_runtime";
	return field;
}

static void live_absent(void **state)
{
	struct burner b = {.burn_ns = 0};
	pthread_t th;
	struct ctp_snap *s;
	const struct ctp_snap_table *tt;
	char *before, *after;
	size_t row;

	(void)state;
	/* The default: sched never opened, every sched field absent. */
	s = capture(NULL, 2, NULL);
	nbad = 0;
	CHECK(summary(plugin(s), "sched_not_read") == 1,
	      "sched_not_read %" PRIu64, summary(plugin(s), "sched_not_read"));
	CHECK(tally(s, "sched") == 0, "sched read failures");
	tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	for (size_t i = 3; i < N_FIELDS; i++) {
		const struct ctp_snap_field *f = snap_field(s, i);
		size_t set = 0;

		for (size_t r = 0; f && r < tt->rows; r++)
			set += ctp_snap_get(s, f, r).type != CTP_VALUE_ABSENT;
		CHECK(set == 0, "auto: %s has a value for %zu threads",
		      fdefs[i].name, set);
	}
	assert_int_equal(nbad, 0);

	start_burner(&b, &th);
	before = task_file(b.tid, "sched");
	s = capture(NULL, 2, "sched: always");
	after = task_file(b.tid, "sched");
	stop_burner(th);
	assert_non_null(before);
	assert_non_null(after);

	nbad = 0;
	tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	row = row_of(s, b.tid);
	for (size_t i = 3; i < N_FIELDS; i++) {
		const struct ctp_snap_field *f = snap_field(s, i);
		const char *key = sched_key(fdefs[i].name);
		bool in_before = live_has_key(before, key);
		bool in_after = live_has_key(after, key);
		struct ctp_value v;

		if (!f)
			continue;
		v = ctp_snap_get(s, f, row);
		if (fdefs[i].gated) {
			/* main() made sure the kernel prints none of these:
			 * absent for every thread of the host. */
			CHECK(!in_before && !in_after,
			      "%s appeared in the live sched file", key);
			size_t set = 0;
			for (size_t r = 0; r < tt->rows; r++)
				set += ctp_snap_get(s, f, r).type !=
				       CTP_VALUE_ABSENT;
			CHECK(set == 0, "%s has a value for %zu threads",
			      fdefs[i].name, set);
		} else if (in_before == in_after) {
			/* Printed or not by this kernel for this thread:
			 * the snapshot agrees. */
			CHECK((v.type != CTP_VALUE_ABSENT) == in_before,
			      "tid %d: %s is %s, the live sched file %s it",
			      (int)b.tid, fdefs[i].name,
			      v.type == CTP_VALUE_ABSENT ? "absent" : "set",
			      in_before ? "has" : "lacks");
		}
	}
	/* What this kernel does print is there. */
	const struct ctp_snap_field *mig =
		ctp_snap_field_find(s, "schedstat.nr_migrations");
	assert_non_null(mig);
	CHECK(ctp_snap_get(s, mig, row).type == CTP_TYPE_U64,
	      "nr_migrations absent");
	free(before);
	free(after);
	assert_int_equal(nbad, 0);
}

/* ---- main --------------------------------------------------------------- */

static const char *const gated_keys[] = {
	"nr_wakeups",
	"wait_sum",
	"wait_count",
	"wait_max",
	"sleep_max",
	"sum_sleep_runtime",
	"sum_block_runtime",
	"block_max",
	"iowait_sum",
	"iowait_count",
	"exec_max",
	"slice_max",
	"nr_forced_migrations",
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fixture";
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (!strcmp(mode, "fixture")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(expectations_name_fields),
			cmocka_unit_test_teardown(fixture_capture, free_snaps),
			cmocka_unit_test_teardown(fixture_workers, free_snaps),
			cmocka_unit_test_teardown(fixture_sched_off,
						  free_snaps),
		};
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	if (!strcmp(mode, "live-run-time")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test_teardown(live_run_time, free_snaps),
		};
		char *t = task_file(tid, "schedstat");

		if (!t) {
			printf("SKIP: /proc/self/task/%d/schedstat cannot be "
			       "read (%s): kernel without CONFIG_SCHED_INFO\n",
			       (int)tid, strerror(errno));
			return SKIP;
		}
		free(t);
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	if (!strcmp(mode, "live-absent")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test_teardown(live_absent, free_snaps),
		};
		char *t = task_file(tid, "sched");
		size_t i;

		if (!t) {
			printf("SKIP: /proc/self/task/%d/sched cannot be read "
			       "(%s): kernel without the sched file\n",
			       (int)tid, strerror(errno));
			return SKIP;
		}
		for (i = 0; i < sizeof(gated_keys) / sizeof(gated_keys[0]); i++)
			if (live_has_key(t, gated_keys[i]))
				break;
		free(t);
		if (i < sizeof(gated_keys) / sizeof(gated_keys[0])) {
			printf("SKIP: this kernel prints the schedstats keys "
			       "(%s...): CONFIG_SCHEDSTATS is on and "
			       "kernel.sched_schedstats=1, nothing to check "
			       "absent\n",
			       gated_keys[i]);
			return SKIP;
		}
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	fprintf(stderr, "usage: %s [live-run-time|live-absent]\n", argv[0]);
	return 2;
}
