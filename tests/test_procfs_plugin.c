/* SPDX-License-Identifier: MIT */
/*
 * The built procfs-stat.so loaded into a real engine (tests/harness.h) and
 * called without the walk over literal kernel text: its descriptor,
 * init/thread/process/fini, what is set in the capture, what stays absent,
 * the policy names and the summary counters.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/source-task.h"
#include "ctprof/source-taskstats.h"
#include "harness.h"
#include "plugins/abi_tasksrc.h"
#include "procfs_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/procfs-stat.so"

/* ---- Fixture ------------------------------------------------------------- */

static int setup(void **state)
{
	return hx_fx_setup(state, PLUGIN_PATH);
}

static void ctx_reset(struct hx_fx *fx, const char *proc_root,
		      const char *const *opts)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.eng.roots.proc = proc_root;
	fx->state = NULL;
}

static int start(struct hx_fx *fx, const char *proc_root,
		 const char *const *opts)
{
	ctx_reset(fx, proc_root, opts);
	return hx_fx_load(fx, 0);
}

/* Run the thread callback over (stat, status) text, status lazy as
 * declared; NULL text means err. With src, the taskstats source offers
 * those bytes (src_err: its error instead); *status_reads, when asked,
 * is how often status was fetched. */
static int run_thread_src(struct hx_fx *fx, struct hx_rec *rec, int tid,
			  const char *stat, const char *status,
			  const struct ctp_src_taskstats *src, size_t src_len,
			  int src_err, unsigned *status_reads)
{
	struct hx_task ft;
	int r;

	hx_task_init(&ft, tid, tid);
	hx_task_file(&ft, 0, stat, stat ? 0 : -ENOENT);
	hx_task_lazy(&ft, 1, status, status ? 0 : -ENOENT);
	if (src || src_err) {
		ft.src_name = CTP_SOURCE_TASKSTATS;
		ft.src_data = src;
		ft.src_len = src_len;
		ft.src_err = src_err;
	}
	r = hx_fx_run(fx, rec, &ft, CTP_SCOPE_THREAD);
	if (status_reads)
		*status_reads = ft.gets;
	return r;
}

static int run_thread(struct hx_fx *fx, struct hx_rec *rec, int tid,
		      const char *stat, int stat_err, const char *status,
		      int status_err)
{
	struct hx_task ft;

	hx_task_init(&ft, tid, tid);
	hx_task_file(&ft, 0, stat, stat_err);
	hx_task_lazy(&ft, 1, status, status_err);
	return hx_fx_run(fx, rec, &ft, CTP_SCOPE_THREAD);
}

static int run_process(struct hx_fx *fx, struct hx_rec *rec, const char *stat,
		       int err)
{
	struct hx_task ft;

	hx_task_init(&ft, 1, 1);
	hx_task_file(&ft, 0, stat, err);
	return hx_fx_run(fx, rec, &ft, CTP_SCOPE_PROCESS);
}

/* A status text with its Cpus_allowed_list replaced. */
static const char *status_with_cpus(char *buf, size_t cap, const char *list)
{
	const char *k = strstr(STATUS_T59, "Cpus_allowed_list:\t");
	const char *nl;

	assert_non_null(k);
	k += strlen("Cpus_allowed_list:\t");
	nl = strchr(k, '\n');
	assert_true(snprintf(buf, cap, "%.*s%s%s", (int)(k - STATUS_T59),
			     STATUS_T59, list, nl) < (int)cap);
	return buf;
}

/* ---- Tests -------------------------------------------------------------- */

/* The fields procfs-stat declares (what each declares: properties of all
 * plugins, test_plugin_properties). */
static const struct {
	const char *name;
} expected[] = {
	{"procfs.minflt"},
	{"procfs.majflt"},
	{"procfs.utime"},
	{"procfs.stime"},
	{"procfs.priority"},
	{"procfs.nice"},
	{"procfs.start_time"},
	{"procfs.processor"},
	{"procfs.rt_priority"},
	{"procfs.policy"},
	{"procfs.state"},
	{"procfs.voluntary_csw"},
	{"procfs.nonvoluntary_csw"},
	{"procfs.cpu_affinity"},
	{"procfs.nr_threads"},
	{"procfs.process.minflt"},
	{"procfs.process.majflt"},
	{"procfs.process.utime"},
	{"procfs.process.stime"},
	{"procfs.children.minflt"},
	{"procfs.children.majflt"},
	{"procfs.children.utime"},
	{"procfs.children.stime"},
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static void descriptor(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t i;

	hx_expect_descriptor(
		p, "procfs-stat",
		CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
			CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
			CTP_PLUGIN_NO_THREAD_DIR,
		N_EXPECTED);
	/* One declared option, checked by the core before init. */
	assert_int_equal(p->n_options, 1);
	assert_int_equal(p->option_desc_size, sizeof(struct ctp_option_desc));
	assert_string_equal(p->options[0].name, "affinity");
	assert_int_equal(p->options[0].type, CTP_OPT_STRING);
	assert_string_equal(p->options[0].def, "auto");
	assert_non_null(p->options[0].choices);
	/* Every expected field is there; what each field declares is
	 * checked as properties of all plugins (test_plugin_properties). */
	for (i = 0; i < N_EXPECTED; i++)
		assert_true(hx_table_index(p, expected[i].name) >= 0);
	assert_non_null(p->thread_files);
	assert_string_equal(p->thread_files[0], "stat");
	/* status only when the taskstats source cannot say (or affinity). */
	assert_string_equal(p->thread_files[1], "?status");
	assert_null(p->thread_files[2]);
	assert_non_null(p->process_files);
	/* Lazy: not read when the process source has every value. */
	assert_string_equal(p->process_files[0], "?stat");
	assert_null(p->process_files[1]);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_non_null(p->process);
	assert_null(p->host);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const bad_value[] = {"affinity", "sometimes", NULL};
	static const char *const each[][3] = {{"affinity", "auto", NULL},
					      {"affinity", "syscall", NULL},
					      {"affinity", "status", NULL}};
	struct hx_fx *fx = *state;
	size_t i;

	assert_int_equal(start(fx, "/proc", bad_value), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "sometimes"));
	hx_ctx_done(&fx->ctx);

	for (i = 0; i < 3; i++) {
		assert_int_equal(start(fx, "/proc", each[i]), 0);
		assert_non_null(fx->state);
		assert_int_equal(hx_info(&fx->ctx)->n_summary, 11);
		assert_int_equal(hx_summary(&fx->ctx, "from_taskstats"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "from_files"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "from_task"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "stat_from_task"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "stat_from_file"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"),
				 0);
		assert_int_equal(
			hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "affinity_from_task"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "process_from_source"),
				 0);
		assert_int_equal(hx_summary(&fx->ctx, "process_from_file"), 0);
		hx_fx_stop(fx);
	}

	/* An older core without file_get() (for the lazy status). */
	ctx_reset(fx, "/proc", NULL);
	assert_int_equal(hx_fx_load(fx, offsetof(struct ctp_api, file_get)),
			 -ENOTSUP);
	hx_ctx_done(&fx->ctx);
}

static void thread_all_fields(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, "/proc", opts), 0);
	assert_int_equal(
		run_thread(fx, &rec, 4491, STAT_FIFO, 0, STATUS_T59, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 14); /* each thread field exactly once */
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->u, 180);
	assert_int_equal(hx_cell(&rec, "procfs.majflt")->u, 1);
	/* Zero is a value: set, not absent. */
	assert_int_equal(hx_cell(&rec, "procfs.utime")->set, 1);
	assert_int_equal(hx_cell(&rec, "procfs.utime")->u, 0);
	assert_int_equal(hx_cell(&rec, "procfs.stime")->set, 1);
	assert_int_equal(hx_cell(&rec, "procfs.stime")->u, 0);
	assert_int_equal(hx_cell(&rec, "procfs.priority")->i, -51);
	assert_int_equal(hx_cell(&rec, "procfs.nice")->set, 1);
	assert_int_equal(hx_cell(&rec, "procfs.nice")->i, 0);
	assert_int_equal(hx_cell(&rec, "procfs.start_time")->u, 48490);
	assert_int_equal(hx_cell(&rec, "procfs.processor")->i, 1);
	assert_int_equal(hx_cell(&rec, "procfs.rt_priority")->u, 50);
	assert_string_equal(hx_cell(&rec, "procfs.policy")->str, "SCHED_FIFO");
	/* From stat (status, read at another moment, says S). */
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'R');
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 1341);
	assert_int_equal(hx_cell(&rec, "procfs.nonvoluntary_csw")->u, 14);
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->n_words, 1);
	assert_true(hx_cell(&rec, "procfs.cpu_affinity")->words[0] == 3);
	assert_int_equal(hx_cell(&rec, "procfs.nr_threads")->set, 0);

	assert_int_equal(
		run_thread(fx, &rec, 4492, STAT_NICE, 0, STATUS_T59, 0), 0);
	assert_int_equal(hx_cell(&rec, "procfs.priority")->i, 15);
	assert_int_equal(hx_cell(&rec, "procfs.nice")->i, -5);
	assert_string_equal(hx_cell(&rec, "procfs.policy")->str, "SCHED_OTHER");
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 0);
	hx_fx_stop(fx);
}

static void thread_policies(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	static const struct {
		const char *stat;
		const char *name;
	} cases[] = {
		{STAT_SELF, "SCHED_OTHER"},	   {STAT_FIFO, "SCHED_FIFO"},
		{STAT_BATCH, "SCHED_BATCH"},	   {STAT_IDLE, "SCHED_IDLE"},
		{STAT_DEADLINE, "SCHED_DEADLINE"},
	};
	static const struct {
		const char *num;
		const char *name;
	} edited[] = {
		{"2", "SCHED_RR"},
		{"7", "SCHED_EXT"},
		{"4", "unknown(4)"},
		{"8", "unknown(8)"},
		{"18446744073709551615", "unknown(18446744073709551615)"},
	};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	char line[1024];
	const char *tail;
	size_t i;

	assert_int_equal(start(fx, "/fixture", opts), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(run_thread(fx, &rec, 1, cases[i].stat, 0,
					    STATUS_T59, 0),
				 0);
		assert_string_equal(hx_cell(&rec, "procfs.policy")->str,
				    cases[i].name);
	}
	/* STAT_SELF ends "... 17 0 0 0 0 0 0 9398...": (41) is the third 0
	 * after exit_signal (38) = 17; swap it for other numbers. */
	tail = strstr(STAT_SELF, " 17 0 0 0 ");
	assert_non_null(tail);
	for (i = 0; i < sizeof(edited) / sizeof(edited[0]); i++) {
		snprintf(line, sizeof(line), "%.*s 17 0 0 %s%s",
			 (int)(tail - STAT_SELF), STAT_SELF, edited[i].num,
			 tail + strlen(" 17 0 0 0"));
		assert_int_equal(
			run_thread(fx, &rec, 1, line, 0, STATUS_T59, 0), 0);
		assert_string_equal(hx_cell(&rec, "procfs.policy")->str,
				    edited[i].name);
		assert_int_equal(hx_cell(&rec, "procfs.start_time")->u, 48017);
	}
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 0);
	hx_fx_stop(fx);
}

static void thread_absent_not_zero(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	static const char status_part[] = "Name:\tx\n"
					  "State:\tD (disk sleep)\n"
					  "Cpus_allowed_list:\t0-1,5\n";
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	const char *cut;
	char line[1024], status[4096];

	assert_int_equal(start(fx, "/fixture", opts), 0);
	/* stat cut inside (18) priority "-51" -> "-5"; status without the
	 * context switch lines. */
	cut = strstr(STAT_FIFO, " -51 ");
	assert_non_null(cut);
	snprintf(line, sizeof(line), "%.*s", (int)(cut - STAT_FIFO) + 3,
		 STAT_FIFO);
	assert_int_equal(run_thread(fx, &rec, 1, line, 0, status_part, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->u, 180);
	assert_int_equal(hx_cell(&rec, "procfs.stime")->set, 1);
	assert_int_equal(hx_cell(&rec, "procfs.priority")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.nice")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.start_time")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.processor")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.rt_priority")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.policy")->set, 0);
	/* stat's letter (before the cut), not status's D. */
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'R');
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.nonvoluntary_csw")->set, 0);
	assert_true(hx_cell(&rec, "procfs.cpu_affinity")->words[0] == 0x23);
	assert_int_equal(rec.n_sets, 6);
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 1);

	/* Nothing parses: nothing set, still not a plugin error. */
	assert_int_equal(run_thread(fx, &rec, 1, "garbage\n", 0, "junk\n", 0),
			 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 2);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 2);

	/* A bad cpu list is a status parse error; the rest is kept. */
	assert_int_equal(
		run_thread(fx, &rec, 1, STAT_SELF, 0,
			   status_with_cpus(status, sizeof(status), "3-1"), 0),
		0);
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 1341);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 3);
	assert_int_equal(
		run_thread(fx, &rec, 1, STAT_SELF, 0,
			   status_with_cpus(status, sizeof(status), ""), 0),
		0);
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->set, 0);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 4);
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 2);
	hx_fx_stop(fx);
}

static void thread_files_missing(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, "/fixture", opts), 0);
	/* One file gone: the other is still recorded; the engine, not the
	 * plugin, decides whether the task vanished. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -ENOENT, STATUS_T59, 0),
			 0);
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.state")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 1341);
	assert_int_equal(run_thread(fx, &rec, 1, STAT_SELF, 0, NULL, -ESRCH),
			 0);
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->u, 116);
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'R');
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->set, 0);
	/* Both gone: the vanish error reaches the engine. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -ENOENT, NULL, -ESRCH),
			 -ENOENT);
	assert_int_equal(rec.n_sets, 0);

	/* Another read error on one file: the other is still recorded. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -EACCES, STATUS_T59, 0),
			 0);
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.state")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->set, 1);
	assert_int_equal(run_thread(fx, &rec, 1, STAT_SELF, 0, NULL, -EIO), 0);
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->u, 116);
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'R');
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->set, 0);

	/* Neither readable: the read error. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -EACCES, NULL, -EIO),
			 -EACCES);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 0);
	hx_fx_stop(fx);
}

/* The process fields, each from its own <tgid>/stat field. */
static const char *const process_fields[] = {
	"procfs.nr_threads",	  "procfs.process.minflt",
	"procfs.process.majflt",  "procfs.process.utime",
	"procfs.process.stime",	  "procfs.children.minflt",
	"procfs.children.majflt", "procfs.children.utime",
	"procfs.children.stime",
};
#define N_PROCESS_FIELDS (sizeof(process_fields) / sizeof(process_fields[0]))

static void expect_process(const struct hx_rec *rec, const uint64_t *want)
{
	size_t i;

	assert_int_equal(rec->bad_sets, 0);
	assert_int_equal(rec->n_sets, N_PROCESS_FIELDS);
	for (i = 0; i < N_PROCESS_FIELDS; i++)
		hx_expect_u64(rec, process_fields[i], want[i]);
}

static void process_nr_threads(void **state)
{
	/* /proc/1/stat: (20) 13; (10) 41298, (12) 0, (14) 41, (15) 153;
	 * (11) 372013, (13) 237, (16) 1291, (17) 306. */
	static const uint64_t pid1[] = {13,	41298, 0,    41, 153,
					372013, 237,   1291, 306};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	char line[1024];
	const char *p;

	assert_int_equal(start(fx, "/fixture", NULL), 0);
	assert_int_equal(run_process(fx, &rec, STAT_PID1, 0), 0);
	expect_process(&rec, pid1);
	/* No thread field on a process row. */
	assert_int_equal(hx_cell(&rec, "procfs.utime")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->set, 0);

	/* (20) num_threads garbage: absent, counted, not an error; the
	 * rest of the row is kept. */
	p = strstr(STAT_PID1, " 13 0 12 ");
	assert_non_null(p);
	snprintf(line, sizeof(line), "%.*s 1x%s", (int)(p - STAT_PID1),
		 STAT_PID1, p + 3);
	assert_int_equal(run_process(fx, &rec, line, 0), 0);
	assert_int_equal(rec.n_sets, N_PROCESS_FIELDS - 1);
	assert_int_equal(hx_cell(&rec, "procfs.nr_threads")->set, 0);
	hx_expect_u64(&rec, "procfs.children.utime", 1291);
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 1);

	assert_int_equal(run_process(fx, &rec, NULL, -ENOENT), -ENOENT);
	assert_int_equal(run_process(fx, &rec, NULL, -ESRCH), -ENOENT);
	assert_int_equal(run_process(fx, &rec, NULL, -EACCES), -EACCES);
	assert_int_equal(rec.n_sets, 0);
	hx_fx_stop(fx);
}

/*
 * The kernel's process totals reach the process row: work of a thread that
 * exited and of children that were reaped, which no thread row has.
 */
static void process_totals(void **state)
{
	/* python3 808, its burner thread joined: 20 ticks of user time in
	 * the process, 5 + 0 in its live threads. */
	static const uint64_t dead_thread[] = {2,    2864, 0, 20, 1,
					       6539, 0,	   3, 3};
	/* The shell named "sh (x) y)" after reaping four busy children. */
	static const uint64_t reaped[] = {1, 251, 0, 0, 0, 38568, 0, 190, 18};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	uint64_t live_utime = 0;
	const char *cut;
	char line[1024];

	assert_int_equal(start(fx, "/fixture", NULL), 0);
	assert_int_equal(run_process(fx, &rec, STAT_TGID_DEAD_THREAD, 0), 0);
	expect_process(&rec, dead_thread);
	assert_int_equal(
		run_thread(fx, &rec, 808, STAT_TID_808, 0, STATUS_T59, 0), 0);
	live_utime += hx_u64(&rec, "procfs.utime");
	/* The thread's line repeats the process's children fields: they
	 * are not thread values. */
	assert_int_equal(hx_cell(&rec, "procfs.children.utime")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.process.utime")->set, 0);
	assert_int_equal(
		run_thread(fx, &rec, 874, STAT_TID_874, 0, STATUS_T59, 0), 0);
	live_utime += hx_u64(&rec, "procfs.utime");
	assert_true(live_utime == 5);

	assert_int_equal(run_process(fx, &rec, STAT_TGID_REAPED, 0), 0);
	expect_process(&rec, reaped);

	/* Cut inside (17) cstime: the values before it are kept, cstime
	 * and everything after it absent, one parse error. */
	cut = strstr(STAT_TGID_REAPED, " 190 18 ");
	assert_non_null(cut);
	snprintf(line, sizeof(line), "%.*s", (int)(cut - STAT_TGID_REAPED) + 6,
		 STAT_TGID_REAPED);
	assert_int_equal(run_process(fx, &rec, line, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 7);
	hx_expect_u64(&rec, "procfs.children.utime", 190);
	hx_expect_u64(&rec, "procfs.children.minflt", 38568);
	assert_int_equal(hx_cell(&rec, "procfs.children.stime")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.nr_threads")->set, 0);
	assert_int_equal(hx_summary(&fx->ctx, "stat_parse_errors"), 1);
	hx_fx_stop(fx);
}

/* process.cpu_time and children.cpu_time are formulas over the pairs,
 * process scope; the thread's cpu_time stays as it was. */
static void derived_cpu_times(void **state)
{
	static const struct {
		const char *name, *ut, *st;
		uint8_t scope;
	} want[] = {
		{"procfs.cpu_time", "procfs.utime", "procfs.stime",
		 CTP_SCOPE_THREAD},
		{"procfs.process.cpu_time", "procfs.process.utime",
		 "procfs.process.stime", CTP_SCOPE_PROCESS},
		{"procfs.children.cpu_time", "procfs.children.utime",
		 "procfs.children.stime", CTP_SCOPE_PROCESS},
	};
	struct hx_fx *fx = *state;
	size_t i;

	assert_int_equal(start(fx, "/fixture", NULL), 0);
	assert_int_equal(hx_n_derived(&fx->ctx), 3);
	for (i = 0; i < 3; i++) {
		const struct ctp_field *f = hx_derived(&fx->ctx, i);

		assert_string_equal(f->name, want[i].name);
		assert_int_equal(f->scope, want[i].scope);
		assert_int_equal(f->unit, CTP_UNIT_TICKS);
		assert_int_equal(f->kind, CTP_KIND_COUNTER);
		assert_int_equal(f->rule, CTP_RULE_SUM);
		assert_int_equal(f->n_terms, 2);
		assert_int_equal((int)f->terms[0].input,
				 hx_field(&fx->ctx, want[i].ut));
		assert_int_equal((int)f->terms[1].input,
				 hx_field(&fx->ctx, want[i].st));
		assert_int_equal(f->terms[0].coef, 1);
		assert_int_equal(f->terms[1].coef, 1);
	}
	hx_fx_stop(fx);
}

static void disabled_field(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	ctx_reset(fx, "/fixture", opts);
	fx->ctx.disabled_field[0] = hx_table_index(fx->p, "procfs.policy");
	assert_int_equal(hx_fx_load(fx, 0), 0);
	assert_int_equal(run_thread(fx, &rec, 1, STAT_FIFO, 0, STATUS_T59, 0),
			 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 13);
	assert_int_equal(hx_cell(&rec, "procfs.policy")->set, 0);
	assert_int_equal(hx_cell(&rec, "procfs.rt_priority")->u, 50);
	hx_fx_stop(fx);
}

static void expect_words_equal(const struct hx_cell *c, const cpu_set_t *set)
{
	size_t cpu;

	assert_int_equal(c->set, 1);
	for (cpu = 0; cpu < HX_MAX_WORDS * 64; cpu++) {
		int in = cpu / 64 < c->n_words &&
			 (c->words[cpu / 64] >> (cpu % 64) & 1);

		assert_int_equal(in, cpu < CPU_SETSIZE && CPU_ISSET(cpu, set));
	}
}

static int pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void affinity_modes(void **state)
{
	static const char *const syscall_opt[] = {"affinity", "syscall", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	cpu_set_t mine;
	char status[4096];
	int gone = pid_max();

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		skip();
	assert_true(gone > 0);
	status_with_cpus(status, sizeof(status), "0,5");

	/* auto on /proc: the syscall, whatever status claims. */
	assert_int_equal(start(fx, "/proc", NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, (int)gettid(), STAT_SELF, 0, status, 0),
		0);
	expect_words_equal(hx_cell(&rec, "procfs.cpu_affinity"), &mine);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 0);

	/* A tid that cannot exist (>= pid_max): ESRCH, status list. */
	assert_int_equal(run_thread(fx, &rec, gone, STAT_SELF, 0, status, 0),
			 0);
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->n_words, 1);
	assert_true(hx_cell(&rec, "procfs.cpu_affinity")->words[0] == 0x21);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 1);
	/* ... and no list to fall back on: absent. */
	assert_int_equal(
		run_thread(fx, &rec, gone, STAT_SELF, 0, NULL, -EACCES), 0);
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->set, 0);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 2);
	hx_fx_stop(fx);

	/* auto on a fixture root: the status list, even for a real tid. */
	assert_int_equal(start(fx, "/tmp/fixture-proc", NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, (int)gettid(), STAT_SELF, 0, status, 0),
		0);
	assert_true(hx_cell(&rec, "procfs.cpu_affinity")->words[0] == 0x21);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 0);
	hx_fx_stop(fx);

	/* syscall forced, and a second init on the same thread (its
	 * thread-local buffer belongs to the first, freed instance). */
	assert_int_equal(start(fx, "/tmp/fixture-proc", syscall_opt), 0);
	assert_int_equal(
		run_thread(fx, &rec, (int)gettid(), STAT_SELF, 0, status, 0),
		0);
	expect_words_equal(hx_cell(&rec, "procfs.cpu_affinity"), &mine);
	hx_fx_stop(fx);
}

struct worker {
	struct hx_fx *fx;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hx_rec *rec = malloc(sizeof(*rec));
	uint64_t first = 0;
	cpu_set_t mine;
	int i;

	if (!rec || sched_getaffinity(0, sizeof(mine), &mine) < 0) {
		free(rec);
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 64; i++)
		if (CPU_ISSET(i, &mine))
			first |= 1ull << i;
	for (i = 0; i < 200; i++) {
		const struct hx_cell *c;

		if (run_thread(w->fx, rec, (int)gettid(), STAT_FIFO, 0,
			       STATUS_T59, 0) != 0 ||
		    rec->bad_sets || rec->n_sets != 14) {
			w->failures++;
			continue;
		}
		c = hx_cell(rec, "procfs.cpu_affinity");
		if (c->n_words < 1 || c->words[0] != first)
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks, each worker its own buffers. */
static void concurrent_workers(void **state)
{
	static const char *const syscall_opt[] = {"affinity", "syscall", NULL};
	struct hx_fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, "/proc", syscall_opt), 0);
	for (i = 0; i < 4; i++) {
		w[i].fx = fx;
		w[i].failures = 0;
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	assert_int_equal(hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 0);
	hx_fx_stop(fx);
}

/*
 * The context switches from the taskstats source when it has both: status
 * is then never read (affinity from the syscall); otherwise from status,
 * and the summary counters say which served each thread.
 */
static void thread_from_source(void **state)
{
	static const char *const opts[] = {"affinity", "syscall", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct ctp_src_taskstats src = {.abi = 1, .size = sizeof(src)};
	int tid = (int)syscall(SYS_gettid);
	unsigned reads;

	src.v[CTP_SRC_TS_NVCSW] = 7;
	src.v[CTP_SRC_TS_NIVCSW] = 9;
	src.valid = 1u << CTP_SRC_TS_NVCSW | 1u << CTP_SRC_TS_NIVCSW;
	assert_int_equal(start(fx, "/proc", opts), 0);
	assert_int_equal(run_thread_src(fx, &rec, tid, STAT_SELF, STATUS_T59,
					&src, sizeof(src), 0, &reads),
			 0);
	assert_int_equal(reads, 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 7);
	assert_int_equal(hx_cell(&rec, "procfs.nonvoluntary_csw")->u, 9);
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'R');
	assert_int_equal(hx_cell(&rec, "procfs.cpu_affinity")->set, 1);
	assert_int_equal(hx_summary(&fx->ctx, "from_taskstats"), 1);

	/* A value the host does not measure, short bytes, another layout,
	 * a refused query: status gives both. */
	src.valid = 1u << CTP_SRC_TS_NVCSW;
	assert_int_equal(run_thread_src(fx, &rec, tid, STAT_SELF, STATUS_T59,
					&src, sizeof(src), 0, &reads),
			 0);
	assert_int_equal(reads, 1);
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 1341);
	src.valid |= 1u << CTP_SRC_TS_NIVCSW;
	assert_int_equal(run_thread_src(fx, &rec, tid, STAT_SELF, STATUS_T59,
					&src, 16, 0, &reads),
			 0);
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 1341);
	src.abi = 2;
	assert_int_equal(run_thread_src(fx, &rec, tid, STAT_SELF, STATUS_T59,
					&src, sizeof(src), 0, &reads),
			 0);
	assert_int_equal(hx_cell(&rec, "procfs.voluntary_csw")->u, 1341);
	assert_int_equal(run_thread_src(fx, &rec, tid, STAT_SELF, STATUS_T59,
					NULL, 0, -EPERM, &reads),
			 0);
	assert_int_equal(reads, 1);
	assert_int_equal(hx_cell(&rec, "procfs.nonvoluntary_csw")->u, 14);
	assert_int_equal(hx_summary(&fx->ctx, "from_files"), 4);
	assert_int_equal(hx_summary(&fx->ctx, "from_taskstats"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "status_parse_errors"), 0);
	hx_fx_stop(fx);
}

/* Run the thread callback as a core that deferred every file (a walk
 * from a source, issue 33): stat and status both lazy; with src, the
 * source "task" offers it. *reads is how many files were fetched. */
static int run_deferred(struct hx_fx *fx, struct hx_rec *rec, int tid,
			const struct ctp_src_task *src, unsigned *reads)
{
	struct hx_task ft;
	int r;

	hx_task_init(&ft, tid, tid);
	hx_task_lazy(&ft, 0, STAT_SELF, 0);
	hx_task_lazy(&ft, 1, STATUS_T59, 0);
	if (src) {
		ft.src_name = CTP_SOURCE_TASK;
		ft.src_data = src;
		ft.src_len = sizeof(*src);
	}
	r = hx_fx_run(fx, rec, &ft, CTP_SCOPE_THREAD);
	*reads = ft.gets;
	return r;
}

/*
 * The source "task" first, per value, and stat fetched through the core
 * only for what it lacks: not at all when it has every value, even when
 * the core deferred stat (then also without a source, stat is fetched).
 */
static void thread_from_task_source(void **state)
{
	static const char *const opts[] = {"affinity", "syscall", NULL};
	static const unsigned gaps[] = {CTP_SRC_TASK_MAJFLT, CTP_SRC_TASK_NICE,
					CTP_SRC_TASK_NIVCSW};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct ctp_src_task src;
	int tid = (int)syscall(SYS_gettid);
	unsigned reads;

	assert_int_equal(start(fx, "/proc", opts), 0);
	/* Every value: no file fetched. */
	abi_tasksrc_make(&src, tid, NULL, 0);
	assert_int_equal(run_deferred(fx, &rec, tid, &src, &reads), 0);
	assert_int_equal(reads, 0);
	assert_int_equal(rec.bad_sets, 0);
	hx_expect_u64(&rec, "procfs.minflt",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_MINFLT));
	hx_expect_u64(&rec, "procfs.majflt",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_MAJFLT));
	hx_expect_u64(&rec, "procfs.utime",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_UTIME));
	hx_expect_u64(&rec, "procfs.start_time",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_START_TIME));
	hx_expect_i64(&rec, "procfs.priority", -3);
	hx_expect_i64(&rec, "procfs.nice", -7);
	hx_expect_i64(&rec, "procfs.processor", 3);
	hx_expect_str(&rec, "procfs.policy", "SCHED_FIFO");
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'D');
	hx_expect_u64(&rec, "procfs.voluntary_csw",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_NVCSW));
	hx_expect_u64(&rec, "procfs.nonvoluntary_csw",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_NIVCSW));
	assert_int_equal(hx_summary(&fx->ctx, "stat_from_task"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "from_task"), 1);

	/* Gaps: stat for majflt and nice (its 0 and 0), status for the
	 * pair of context switches (1341, 14). */
	abi_tasksrc_make(&src, tid, gaps, sizeof(gaps) / sizeof(gaps[0]));
	assert_int_equal(run_deferred(fx, &rec, tid, &src, &reads), 0);
	assert_int_equal(reads, 2);
	hx_expect_u64(&rec, "procfs.minflt",
		      abi_tasksrc_value(tid, CTP_SRC_TASK_MINFLT));
	hx_expect_u64(&rec, "procfs.majflt", 0);
	hx_expect_i64(&rec, "procfs.nice", 0);
	hx_expect_i64(&rec, "procfs.priority", -3);
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'D');
	hx_expect_u64(&rec, "procfs.voluntary_csw", 1341);
	hx_expect_u64(&rec, "procfs.nonvoluntary_csw", 14);

	/* No source: stat fetched though the core deferred it. */
	assert_int_equal(run_deferred(fx, &rec, tid, NULL, &reads), 0);
	assert_int_equal(reads, 2);
	hx_expect_u64(&rec, "procfs.minflt", 116);
	hx_expect_u64(&rec, "procfs.start_time", 48017);
	assert_int_equal(hx_cell(&rec, "procfs.state")->c, 'R');
	assert_int_equal(hx_summary(&fx->ctx, "stat_from_task"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "stat_from_file"), 2);
	assert_int_equal(hx_summary(&fx->ctx, "from_files"), 2);
	hx_fx_stop(fx);
}

/* Thread tid with stat, a lazy status and the source "task" src. */
static void task_with_source(struct hx_task *ft, int tid, const char *status,
			     const struct ctp_src_task *src)
{
	hx_task_init(ft, tid, tid);
	hx_task_file(ft, 0, STAT_SELF, 0);
	hx_task_lazy(ft, 1, status, 0);
	ft->src_name = CTP_SOURCE_TASK;
	ft->src_data = src;
	ft->src_len = sizeof(*src);
}

/* Every value of the source "task" for tid, the mask CPUs 0, 2 and 128,
 * 191 (three words up to the highest set CPU), which expect_mask checks. */
static void source_with_mask(struct ctp_src_task *src, int tid)
{
	abi_tasksrc_make(src, tid, NULL, 0);
	src->v[CTP_SRC_TASK_CPUS(0)] = 0x5;
	src->v[CTP_SRC_TASK_CPUS(1)] = 0;
	src->v[CTP_SRC_TASK_CPUS(2)] = 0x8000000000000001ull;
	src->v[CTP_SRC_TASK_CPUS(3)] = 0;
}

/* Start with affinity: syscall, status' list "0,5" in status, this
 * thread's mask in *mine (skipped where the call does not work). */
static void start_for_mask(struct hx_fx *fx, char *status, size_t len,
			   cpu_set_t *mine)
{
	static const char *const opts[] = {"affinity", "syscall", NULL};

	if (sched_getaffinity(0, sizeof(*mine), mine) < 0)
		skip();
	status_with_cpus(status, len, "0,5");
	assert_int_equal(start(fx, "/proc", opts), 0);
}

static void expect_mask(const struct hx_cell *c)
{
	assert_int_equal(c->n_words, 3);
	assert_true(c->words[0] == 0x5 && c->words[1] == 0 &&
		    c->words[2] == 0x8000000000000001ull);
}

/*
 * The affinity from the source "task" where it offers all four words
 * (sched_getaffinity()'s mask, CPUs 0-255): no system call, words up to
 * the highest set CPU. A tid no task can have (>= pid_max) shows it: the
 * call would fail and the status list (0x21) be taken instead. One word
 * missing: the call for it (a real tid: this thread's mask).
 */
static void affinity_from_task_source(void **state)
{
	static const unsigned gap[] = {CTP_SRC_TASK_CPUS(2)};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct ctp_src_task src;
	const struct hx_cell *c;
	char status[4096];
	struct hx_task ft;
	cpu_set_t mine;
	int gone = pid_max(), tid = (int)syscall(SYS_gettid);

	assert_true(gone > 0);
	start_for_mask(fx, status, sizeof(status), &mine);
	source_with_mask(&src, gone);
	task_with_source(&ft, gone, status, &src);
	assert_int_equal(hx_fx_run(fx, &rec, &ft, CTP_SCOPE_THREAD), 0);
	c = hx_cell(&rec, "procfs.cpu_affinity");
	assert_int_equal(c->set, 1);
	expect_mask(c);
	assert_int_equal(ft.gets, 0); /* status not read either */
	assert_int_equal(hx_summary(&fx->ctx, "affinity_from_task"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_syscall_fallbacks"), 0);

	/* Only the lowest word set: one word, as the call hands it on. */
	src.v[CTP_SRC_TASK_CPUS(2)] = 0;
	assert_int_equal(hx_fx_run(fx, &rec, &ft, CTP_SCOPE_THREAD), 0);
	c = hx_cell(&rec, "procfs.cpu_affinity");
	assert_int_equal(c->n_words, 1);
	assert_true(c->words[0] == 0x5);

	/* A word missing: the call (this thread, its own mask). */
	abi_tasksrc_make(&src, tid, gap, 1);
	task_with_source(&ft, tid, status, &src);
	assert_int_equal(hx_fx_run(fx, &rec, &ft, CTP_SCOPE_THREAD), 0);
	expect_words_equal(hx_cell(&rec, "procfs.cpu_affinity"), &mine);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_from_task"), 2);
	hx_fx_stop(fx);
}

/*
 * A thread whose stat values and context switches the core copied (bound):
 * the policy's name and the affinity need one read of the source "task",
 * not one each. Where the source lacks a word of the mask, the call gives
 * it (a real tid: this thread's mask), the policy still from the source;
 * where it lacks the policy, stat is fetched for it.
 */
static void bound_one_source_read(void **state)
{
	static const unsigned gap[] = {CTP_SRC_TASK_CPUS(2)};
	static const unsigned no_policy[] = {CTP_SRC_TASK_POLICY};
	int tid = (int)syscall(SYS_gettid);
	struct hx_fx *fx = *state;
	struct ctp_src_task src;
	char status[4096];
	struct hx_task ft;
	struct hx_rec rec;
	cpu_set_t mine;

	/* Not this thread's mask: the source's, no call. */
	start_for_mask(fx, status, sizeof(status), &mine);
	source_with_mask(&src, tid);
	task_with_source(&ft, tid, status, &src);
	ft.task.bound = 1;
	assert_int_equal(hx_fx_run(fx, &rec, &ft, CTP_SCOPE_THREAD), 0);
	assert_int_equal(ft.src_gets, 1);
	assert_int_equal(ft.gets, 0);
	hx_expect_str(&rec, "procfs.policy", "SCHED_FIFO");
	expect_mask(hx_cell(&rec, "procfs.cpu_affinity"));
	/* The bound values are the core's: not set again here. */
	assert_int_equal(hx_cell(&rec, "procfs.minflt")->set, 0);
	assert_int_equal(hx_summary(&fx->ctx, "stat_from_task"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "from_task"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_from_task"), 1);

	/* A word missing: the call, the policy still from the one read. */
	abi_tasksrc_make(&src, tid, gap, 1);
	task_with_source(&ft, tid, status, &src);
	ft.task.bound = 1;
	assert_int_equal(hx_fx_run(fx, &rec, &ft, CTP_SCOPE_THREAD), 0);
	assert_int_equal(ft.src_gets, 1);
	expect_words_equal(hx_cell(&rec, "procfs.cpu_affinity"), &mine);
	hx_expect_str(&rec, "procfs.policy", "SCHED_FIFO");
	assert_int_equal(hx_summary(&fx->ctx, "affinity_from_task"), 1);

	/* No policy in the source: stat gives it (SCHED_OTHER). */
	abi_tasksrc_make(&src, tid, no_policy, 1);
	task_with_source(&ft, tid, status, &src);
	ft.task.bound = 1;
	assert_int_equal(hx_fx_run(fx, &rec, &ft, CTP_SCOPE_THREAD), 0);
	hx_expect_str(&rec, "procfs.policy", "SCHED_OTHER");
	assert_int_equal(hx_summary(&fx->ctx, "stat_from_file"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "affinity_from_task"), 2);
	hx_fx_stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(thread_all_fields),
		cmocka_unit_test(thread_policies),
		cmocka_unit_test(thread_absent_not_zero),
		cmocka_unit_test(thread_files_missing),
		cmocka_unit_test(thread_from_source),
		cmocka_unit_test(thread_from_task_source),
		cmocka_unit_test(affinity_from_task_source),
		cmocka_unit_test(bound_one_source_read),
		cmocka_unit_test(process_nr_threads),
		cmocka_unit_test(process_totals),
		cmocka_unit_test(derived_cpu_times),
		cmocka_unit_test(disabled_field),
		cmocka_unit_test(affinity_modes),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, hx_fx_teardown);
}
