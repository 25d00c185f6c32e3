/* SPDX-License-Identifier: MIT */
/*
 * The consumers of the per-task source "task" (issue 33), end to end: the
 * ctprof-core binary captures tests/fixtures/proc-tasksrc with the test
 * plugin abi-tasksrc offering "task" (tests/plugins/abi_tasksrc.h says
 * which values, valid or not, for which tid) beside procfs-stat, io,
 * schedstat and taskstats. Each value in the snapshot must be the
 * source's where its bit is set and the file's where it is clear or the
 * fill failed; a thread the source covers must not have its io or
 * schedstat file read (they are missing in the tree: a read would be
 * tallied as a failure); the summary counters say which source served
 * how many threads. The same capture without the test plugin is the
 * files' alone.
 *
 * The per-process source "process" the same way, on
 * tests/fixtures/proc-procsrc with the test plugin abi-procsrc
 * (tests/plugins/abi_procsrc.h): procfs-stat's and io's process values
 * are the source's where its bit is set, <tgid>/stat's and <tgid>/io's
 * where not; a process it covers has neither file read; the core fills it
 * once per process row, shows it to no thread callback (nor a thread
 * source to a process callback), and a provider that fails its init
 * leaves no source behind.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugins/abi_procsrc.h"
#include "plugins/abi_tasksrc.h"
#include "e2e_util.h"
#include "model.h"
#include "reader.h"

#define FIXTURE	 CTP_TEST_SOURCE_DIR "/tests/fixtures/proc-tasksrc"
#define PFIXTURE CTP_TEST_SOURCE_DIR "/tests/fixtures/proc-procsrc"

enum { TID_FILES = 2000, TID_COVERED = 2001, TID_PARTIAL = 2002 };
enum { PID_FILES = 3000, PID_COVERED = 3001, PID_PARTIAL = 3002 };

static char tmp[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("tasksrc", tmp, sizeof(tmp)) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	e2e_rm_rf(tmp);
	return 0;
}

/* Capture tree `root` with the plugins of `plugins` (config lines) into a
 * snapshot of tag's name; the snapshot opened. */
static struct ctp_snap *capture_with(const char *tag, const char *root,
				     const char *plugins)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], text[2048], err[512];
	struct ctp_snap *snap = NULL;
	pid_t pid;
	int st;

	assert_int_equal(E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(out, "%s/%s.ctprof.zst", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(log, "%s/%s.log", tmp, tag), 0);
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\", \"%s\"]\n"
			 "workers: 1\n"
			 "roots: {proc: \"%s\", sys: \"%s\", cgroup: auto}\n"
			 "plugins:\n"
			 "%s",
			 CTP_ABI_PLUGIN_DIR, CTP_TEST_PLUGIN_DIR, root, root,
			 plugins);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(e2e_write_file(cfg, text, (size_t)n), 0);
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		e2e_show_file("ctprof-core's stderr", log);
		fail_msg("ctprof-core exited with status %d", st);
	}
	if (ctp_snap_open(out, 1ull << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("reading %s: %s", out, err);
	return snap;
}

/* Capture the fixture with the four consumers (and abi-tasksrc when
 * with_source). */
static struct ctp_snap *capture(const char *tag, bool with_source)
{
	char plugins[512];
	int n = snprintf(plugins, sizeof(plugins),
			 "%s"
			 "  procfs-stat: {options: {affinity: status}}\n"
			 "  io: {}\n"
			 "  schedstat: {options: {sched: never}}\n"
			 "  taskstats: {}\n",
			 with_source ? "  abi-tasksrc: {}\n" : "");
	assert_true(n > 0 && (size_t)n < sizeof(plugins));
	return capture_with(tag, FIXTURE, plugins);
}

static size_t thread_row(const struct ctp_snap *s, long tid)
{
	long r = e2e_row(s, CTP_SCOPE_THREAD, tid);

	if (r < 0)
		fail_msg("tid %ld not recorded", tid);
	return (size_t)r;
}

static uint64_t src(long tid, unsigned value)
{
	return abi_tasksrc_value((int32_t)tid, value);
}

static bool absent(const struct ctp_snap *s, const char *name, size_t row)
{
	return e2e_value(s, name, row).type == CTP_VALUE_ABSENT;
}

static char state_of(const struct ctp_snap *s, size_t row)
{
	struct ctp_value v = e2e_value(s, "procfs.state", row);

	assert_int_equal(v.type, CTP_TYPE_CHAR);
	return (char)v.c;
}

/* The stat values and context switches of procfs-stat. */
static void check_procfs(const struct ctp_snap *s)
{
	size_t f = thread_row(s, TID_FILES), c = thread_row(s, TID_COVERED),
	       p = thread_row(s, TID_PARTIAL);

	/* No source for 2000: its files. */
	assert_int_equal(e2e_u64(s, "procfs.minflt", f), 11);
	assert_int_equal(e2e_u64(s, "procfs.utime", f), 14);
	assert_int_equal(state_of(s, f), 'S');
	assert_int_equal(e2e_u64(s, "procfs.voluntary_csw", f), 61);
	e2e_assert_str(s, "procfs.policy", f, "SCHED_OTHER");

	/* Every value from the source. */
	assert_int_equal(e2e_u64(s, "procfs.minflt", c),
			 src(TID_COVERED, CTP_SRC_TASK_MINFLT));
	assert_int_equal(e2e_u64(s, "procfs.majflt", c),
			 src(TID_COVERED, CTP_SRC_TASK_MAJFLT));
	assert_int_equal(e2e_u64(s, "procfs.utime", c),
			 src(TID_COVERED, CTP_SRC_TASK_UTIME));
	assert_int_equal(e2e_u64(s, "procfs.stime", c),
			 src(TID_COVERED, CTP_SRC_TASK_STIME));
	assert_int_equal(e2e_i64(s, "procfs.priority", c), -3);
	assert_int_equal(e2e_i64(s, "procfs.nice", c), -7);
	assert_int_equal(e2e_u64(s, "procfs.start_time", c),
			 src(TID_COVERED, CTP_SRC_TASK_START_TIME));
	assert_int_equal(e2e_i64(s, "procfs.processor", c), 3);
	assert_int_equal(e2e_u64(s, "procfs.rt_priority", c),
			 src(TID_COVERED, CTP_SRC_TASK_RT_PRIORITY));
	e2e_assert_str(s, "procfs.policy", c, "SCHED_FIFO");
	assert_int_equal(state_of(s, c), 'D');
	assert_int_equal(e2e_u64(s, "procfs.voluntary_csw", c),
			 src(TID_COVERED, CTP_SRC_TASK_NVCSW));
	assert_int_equal(e2e_u64(s, "procfs.nonvoluntary_csw", c),
			 src(TID_COVERED, CTP_SRC_TASK_NIVCSW));

	/* Per value: majflt and nice from stat, the rest from the source;
	 * the context switches are taken as a pair, so both from status. */
	assert_int_equal(e2e_u64(s, "procfs.minflt", p),
			 src(TID_PARTIAL, CTP_SRC_TASK_MINFLT));
	assert_int_equal(e2e_u64(s, "procfs.majflt", p), 12);
	assert_int_equal(e2e_i64(s, "procfs.nice", p), 0);
	assert_int_equal(e2e_i64(s, "procfs.priority", p), -3);
	assert_int_equal(e2e_u64(s, "procfs.start_time", p),
			 src(TID_PARTIAL, CTP_SRC_TASK_START_TIME));
	assert_int_equal(state_of(s, p), 'D');
	assert_int_equal(e2e_u64(s, "procfs.voluntary_csw", p), 61);
	assert_int_equal(e2e_u64(s, "procfs.nonvoluntary_csw", p), 5);

	/* No process source: the process row is <tgid>/stat's. */
	long pr = e2e_row(s, CTP_SCOPE_PROCESS, 2000);
	assert_true(pr >= 0);
	assert_int_equal(e2e_u64(s, "procfs.process.minflt", (size_t)pr), 111);

	assert_int_equal(e2e_summary(s, "procfs-stat", "stat_from_task"), 1);
	assert_int_equal(e2e_summary(s, "procfs-stat", "stat_from_file"), 2);
	assert_int_equal(e2e_summary(s, "procfs-stat", "from_task"), 1);
	assert_int_equal(e2e_summary(s, "procfs-stat", "from_files"), 2);
	assert_int_equal(e2e_summary(s, "procfs-stat", "from_taskstats"), 0);
	assert_int_equal(e2e_summary(s, "procfs-stat", "stat_parse_errors"), 0);
}

static void check_io(const struct ctp_snap *s)
{
	static const char *const keys[] = {"io.rchar",
					   "io.wchar",
					   "io.syscr",
					   "io.syscw",
					   "io.read_bytes",
					   "io.write_bytes",
					   "io.cancelled_write_bytes"};
	size_t f = thread_row(s, TID_FILES), c = thread_row(s, TID_COVERED),
	       p = thread_row(s, TID_PARTIAL);

	for (unsigned i = 0; i < 7; i++) {
		unsigned v = CTP_SRC_TASK_RCHAR + i;

		assert_int_equal(e2e_u64(s, keys[i], f), 101 + i);
		assert_int_equal(e2e_u64(s, keys[i], c), src(TID_COVERED, v));
		assert_int_equal(e2e_u64(s, keys[i], p),
				 v == CTP_SRC_TASK_WRITE_BYTES
					 ? 101 + i
					 : src(TID_PARTIAL, v));
	}
	long pr = e2e_row(s, CTP_SCOPE_PROCESS, 2000);
	assert_true(pr >= 0);
	assert_int_equal(e2e_u64(s, "io.process.rchar", (size_t)pr), 901);
	assert_int_equal(e2e_summary(s, "io", "from_task"), 1);
	assert_int_equal(e2e_summary(s, "io", "from_files"), 2);
}

static void check_schedstat(const struct ctp_snap *s)
{
	size_t f = thread_row(s, TID_FILES), c = thread_row(s, TID_COVERED),
	       p = thread_row(s, TID_PARTIAL);

	assert_int_equal(e2e_u64(s, "schedstat.run_time", f), 301);
	assert_int_equal(e2e_u64(s, "schedstat.timeslices", f), 303);
	assert_int_equal(e2e_u64(s, "schedstat.run_time", c),
			 src(TID_COVERED, CTP_SRC_TASK_RUN_NS));
	assert_int_equal(e2e_u64(s, "schedstat.wait_time", c),
			 src(TID_COVERED, CTP_SRC_TASK_RUN_DELAY_NS));
	assert_int_equal(e2e_u64(s, "schedstat.timeslices", c),
			 src(TID_COVERED, CTP_SRC_TASK_TIMESLICES));
	assert_int_equal(e2e_u64(s, "schedstat.run_time", p),
			 src(TID_PARTIAL, CTP_SRC_TASK_RUN_NS));
	assert_int_equal(e2e_u64(s, "schedstat.wait_time", p),
			 src(TID_PARTIAL, CTP_SRC_TASK_RUN_DELAY_NS));
	assert_int_equal(e2e_u64(s, "schedstat.timeslices", p), 303);
	assert_int_equal(e2e_summary(s, "schedstat", "from_task"), 1);
	assert_int_equal(e2e_summary(s, "schedstat", "from_files"), 2);
}

/* taskstats sends no query on a tree that is not the live /proc: what it
 * records is the source's, and nothing where the source has nothing. */
static void check_taskstats(const struct ctp_snap *s)
{
	size_t f = thread_row(s, TID_FILES), c = thread_row(s, TID_COVERED),
	       p = thread_row(s, TID_PARTIAL);

	assert_int_equal(e2e_u64(s, "taskstats.cpu_count", c),
			 src(TID_COVERED, CTP_SRC_TASK_DELAY(0, 0)));
	assert_int_equal(e2e_u64(s, "taskstats.blkio_delay_total", c),
			 src(TID_COVERED, CTP_SRC_TASK_DELAY(1, 1)));
	assert_int_equal(e2e_u64(s, "taskstats.irq_delay_min", c),
			 src(TID_COVERED, CTP_SRC_TASK_DELAY(7, 3)));
	assert_int_equal(e2e_u64(s, "taskstats.hiwater_rss", c),
			 src(TID_COVERED, CTP_SRC_TASK_HIWATER_RSS));
	assert_int_equal(e2e_u64(s, "taskstats.hiwater_vm", c),
			 src(TID_COVERED, CTP_SRC_TASK_HIWATER_VM));
	assert_int_equal(e2e_u64(s, "taskstats.blkio_count", p),
			 src(TID_PARTIAL, CTP_SRC_TASK_DELAY(1, 0)));
	assert_true(absent(s, "taskstats.blkio_delay_total", p));
	/* The watermarks are taken only as a pair. */
	assert_true(absent(s, "taskstats.hiwater_rss", p));
	assert_true(absent(s, "taskstats.cpu_count", f));
	assert_int_equal(e2e_summary(s, "taskstats", "from_task"), 1);
	assert_int_equal(e2e_summary(s, "taskstats", "from_task_partial"), 1);
	assert_int_equal(e2e_summary(s, "taskstats", "skipped"), 2);
}

/* The covered thread's io and schedstat are missing from the tree: a
 * read of either would be a failure in the tally. */
static uint64_t failures(const struct ctp_snap *s, const char *file)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);

	for (size_t i = 0; i < rf->n_files; i++)
		if (strcmp(rf->file[i], file) == 0)
			return rf->failures[i];
	return 0;
}

/* io, schedstat and taskstats bind every thread value they take from the
 * source (ctp_api.field_bind): the core copies them, and calls none of
 * them for the covered thread, only for the other two (and io for its
 * process). Printed for the run without the source, for comparison. */
static void calls_without(const struct ctp_snap *s, const char *how)
{
	static const char *const names[] = {"io", "schedstat", "taskstats"};
	uint64_t c[3];

	for (unsigned i = 0; i < 3; i++) {
		c[i] = e2e_plugin(s, names[i])->calls;
		print_message("[ INFO     ] %s: %s called %" PRIu64 " times\n",
			      how, names[i], c[i]);
	}
	if (strcmp(how, "with the source") != 0)
		return;
	assert_int_equal(c[0], 1 + 2);
	assert_int_equal(c[1], 1 + 2);
	assert_int_equal(c[2], 1 + 2);
}

static void source_per_value(void **state)
{
	(void)state;
	struct ctp_snap *s = capture("source", true);

	assert_int_equal(e2e_plugin(s, "abi-tasksrc")->status, CTP_PST_LOADED);
	assert_int_equal(
		e2e_u64(s, "abi-tasksrc.offered", thread_row(s, TID_COVERED)),
		CTP_SRC_TASK_N_VALUES);
	check_procfs(s);
	check_io(s);
	check_schedstat(s);
	check_taskstats(s);
	assert_int_equal(failures(s, "io"), 0);
	assert_int_equal(failures(s, "schedstat"), 0);
	assert_int_equal(ctp_snap_readfail(s)->tids_recorded, 3);
	calls_without(s, "with the source");
	ctp_snap_free(s);
}

/* Without the source: the files' values, and the covered thread's missing
 * files read (and tallied) as the fallback. */
static void files_without_source(void **state)
{
	(void)state;
	struct ctp_snap *s = capture("files", false);
	size_t c = thread_row(s, TID_COVERED);

	assert_int_equal(e2e_u64(s, "procfs.minflt", c), 11);
	assert_int_equal(state_of(s, c), 'S');
	assert_true(absent(s, "io.rchar", c));
	assert_true(absent(s, "schedstat.run_time", c));
	assert_true(absent(s, "taskstats.cpu_count", c));
	assert_int_equal(failures(s, "io"), 1);
	assert_int_equal(failures(s, "schedstat"), 1);
	assert_int_equal(e2e_summary(s, "procfs-stat", "stat_from_file"), 3);
	assert_int_equal(e2e_summary(s, "io", "from_files"), 3);
	assert_int_equal(e2e_summary(s, "schedstat", "from_files"), 3);
	assert_int_equal(e2e_summary(s, "taskstats", "from_task"), 0);
	calls_without(s, "files only");
	ctp_snap_free(s);
}

/* ---- The per-process source "process" ---------------------------------- */

/* Capture proc-procsrc with procfs-stat and io, then `provider` (a test
 * plugin's name, or NULL for none): after them, so its own process
 * callback asks for "process" after both consumers did. */
static struct ctp_snap *pcapture(const char *tag, const char *provider)
{
	char plugins[512];
	int n = snprintf(plugins, sizeof(plugins),
			 "  procfs-stat: {options: {affinity: status}}\n"
			 "  io: {}\n"
			 "%s%s%s",
			 provider ? "  " : "", provider ? provider : "",
			 provider ? ": {}\n" : "");
	assert_true(n > 0 && (size_t)n < sizeof(plugins));
	return capture_with(tag, PFIXTURE, plugins);
}

static size_t process_row(const struct ctp_snap *s, long tgid)
{
	long r = e2e_row(s, CTP_SCOPE_PROCESS, tgid);

	if (r < 0)
		fail_msg("tgid %ld not recorded", tgid);
	return (size_t)r;
}

static uint64_t psrc(long tgid, unsigned value)
{
	return abi_procsrc_value((int32_t)tgid, value);
}

/* procfs-stat's process fields and the stat field each prints, with the
 * value the fixture's <tgid>/stat holds. */
static const struct {
	const char *name;
	unsigned value;
	uint64_t file;
} pstat[] = {
	{"procfs.nr_threads", CTP_SRC_PROC_NUM_THREADS, 1},
	{"procfs.process.minflt", CTP_SRC_PROC_MINFLT, 111},
	{"procfs.process.majflt", CTP_SRC_PROC_MAJFLT, 112},
	{"procfs.process.utime", CTP_SRC_PROC_UTIME, 114},
	{"procfs.process.stime", CTP_SRC_PROC_STIME, 115},
	{"procfs.children.minflt", CTP_SRC_PROC_CMINFLT, 211},
	{"procfs.children.majflt", CTP_SRC_PROC_CMAJFLT, 212},
	{"procfs.children.utime", CTP_SRC_PROC_CUTIME, 216},
	{"procfs.children.stime", CTP_SRC_PROC_CSTIME, 217},
};
static const char *const pio[] = {"io.process.rchar",
				  "io.process.wchar",
				  "io.process.syscr",
				  "io.process.syscw",
				  "io.process.read_bytes",
				  "io.process.write_bytes",
				  "io.process.cancelled_write_bytes"};

static bool partial_gap(unsigned value)
{
	static const unsigned gaps[] = {ABI_PROCSRC_PARTIAL_GAPS};

	for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
		if (gaps[i] == value)
			return true;
	return false;
}

/* The process row of tgid as `how` says: 'f' every value from the files,
 * 's' every value from the source, 'p' the source's but its gaps. */
static void check_process(const struct ctp_snap *s, long tgid, char how)
{
	size_t r = process_row(s, tgid);

	for (size_t i = 0; i < sizeof(pstat) / sizeof(pstat[0]); i++) {
		bool file = how == 'f' ||
			    (how == 'p' && partial_gap(pstat[i].value));
		uint64_t want =
			file ? pstat[i].file : psrc(tgid, pstat[i].value);
		if (e2e_u64(s, pstat[i].name, r) != want)
			fail_msg("tgid %ld %s: %" PRIu64 ", not %" PRIu64, tgid,
				 pstat[i].name, e2e_u64(s, pstat[i].name, r),
				 want);
	}
	for (unsigned i = 0; i < 7; i++) {
		unsigned v = CTP_SRC_PROC_RCHAR + i;
		bool file = how == 'f' || (how == 'p' && partial_gap(v));
		uint64_t want = file ? 901 + i : psrc(tgid, v);
		if (e2e_u64(s, pio[i], r) != want)
			fail_msg("tgid %ld %s: %" PRIu64 ", not %" PRIu64, tgid,
				 pio[i], e2e_u64(s, pio[i], r), want);
	}
}

/* What abi-procsrc's own callbacks found: the values offered for each
 * process, one fill a process row (the failed one too) however many
 * plugins asked, and no source of the other scope. */
static void check_provider(const struct ctp_snap *s)
{
	assert_int_equal(e2e_plugin(s, "abi-procsrc")->status, CTP_PST_LOADED);
	assert_int_equal(e2e_plugin(s, "abi-procsrc")->errors, 0);
	assert_int_equal(
		e2e_u64(s, "abi-procsrc.offered", process_row(s, PID_COVERED)),
		CTP_SRC_PROC_N_VALUES);
	assert_int_equal(
		e2e_u64(s, "abi-procsrc.offered", process_row(s, PID_PARTIAL)),
		CTP_SRC_PROC_N_VALUES - 3);
	assert_int_equal(
		e2e_u64(s, "abi-procsrc.offered", process_row(s, PID_FILES)),
		0);
	assert_int_equal(e2e_summary(s, "abi-procsrc", "fills"), 3);
	for (long id = PID_FILES; id <= PID_PARTIAL; id++) {
		assert_int_equal(e2e_i64(s, "abi-procsrc.thread_source",
					 process_row(s, id)),
				 -ENOENT);
		assert_int_equal(e2e_i64(s, "abi-procsrc.process_source",
					 thread_row(s, id)),
				 -ENOENT);
	}
}

/* The core serves the provider's process source to process callbacks,
 * once per process row, and to no thread callback; a thread source is no
 * process callback's. Only the provider: it is the one asker. */
static void process_source_core(void **state)
{
	(void)state;
	struct ctp_snap *s =
		capture_with("process-core", PFIXTURE, "  abi-procsrc: {}\n");

	/* Asked twice a row by the provider itself. */
	check_provider(s);
	ctp_snap_free(s);
}

/* Each process's values from the source where it offers them, the files'
 * where not; the covered process's files not read. */
static void process_source_per_value(void **state)
{
	(void)state;
	struct ctp_snap *s = pcapture("process-source", "abi-procsrc");

	check_process(s, PID_FILES, 'f');
	check_process(s, PID_COVERED, 's');
	check_process(s, PID_PARTIAL, 'p');
	/* procfs-stat and io asked before the provider, on every row. */
	check_provider(s);
	/* 3001 has neither <tgid>/stat nor <tgid>/io: a read would be a
	 * failure in the tally (and, for stat, leave it unread). */
	assert_int_equal(failures(s, "process/stat"), 0);
	assert_int_equal(failures(s, "process/io"), 0);
	assert_int_equal(ctp_snap_readfail(s)->tgids_vanished, 0);
	assert_int_equal(e2e_summary(s, "procfs-stat", "process_from_source"),
			 1);
	assert_int_equal(e2e_summary(s, "procfs-stat", "process_from_file"), 2);
	assert_int_equal(e2e_summary(s, "io", "process_from_source"), 1);
	assert_int_equal(e2e_summary(s, "io", "process_from_file"), 2);
	assert_int_equal(e2e_summary(s, "procfs-stat", "stat_parse_errors"), 0);
	ctp_snap_free(s);
}

/* No provider, or one whose init failed after adding its sources: every
 * process from its files, as before any process source; 3001, without
 * <tgid>/stat (read up front, as the core names the process from it),
 * is unread. */
static void check_no_process_source(struct ctp_snap *s)
{
	check_process(s, PID_FILES, 'f');
	check_process(s, PID_PARTIAL, 'f');
	assert_true(e2e_row(s, CTP_SCOPE_PROCESS, PID_COVERED) < 0);
	assert_int_equal(ctp_snap_readfail(s)->tgids_vanished, 1);
	assert_int_equal(e2e_summary(s, "procfs-stat", "process_from_source"),
			 0);
	assert_int_equal(e2e_summary(s, "procfs-stat", "process_from_file"), 2);
	assert_int_equal(e2e_summary(s, "io", "process_from_source"), 0);
	assert_int_equal(e2e_summary(s, "io", "process_from_file"), 2);
}

static void process_files_without_source(void **state)
{
	(void)state;
	struct ctp_snap *s = pcapture("process-files", NULL);

	check_no_process_source(s);
	ctp_snap_free(s);
}

static void process_source_failed_init(void **state)
{
	(void)state;
	struct ctp_snap *s = pcapture("process-failed", "abi-procsrc-fail");

	assert_int_equal(e2e_plugin(s, "abi-procsrc-fail")->status,
			 CTP_PST_FAILED);
	check_no_process_source(s);
	ctp_snap_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(source_per_value),
		cmocka_unit_test(files_without_source),
		cmocka_unit_test(process_source_core),
		cmocka_unit_test(process_source_per_value),
		cmocka_unit_test(process_files_without_source),
		cmocka_unit_test(process_source_failed_init),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
