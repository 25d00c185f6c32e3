/* SPDX-License-Identifier: MIT */
/*
 * schedstat: per-thread scheduler accounting from
 * /proc/<tgid>/task/<tid>/schedstat (on-CPU time, run-queue wait,
 * timeslices; CONFIG_SCHED_INFO) and .../sched (wakeups, migrations,
 * wait/sleep/block/iowait sums and peaks; most of it needs
 * CONFIG_SCHEDSTATS and kernel.sched_schedstats=1). A key the kernel does
 * not print stays absent. README.md has the field table.
 *
 * The cheapest source first, per value: schedstat's three numbers are in
 * the per-task source "task" (include/ctprof/source-task.h) and in the
 * taskstats reply (include/ctprof/source-taskstats.h), read from the same
 * kernel variables; the taskstats source is asked for what "task" lacks,
 * and the file is opened only when neither gives all three (no provider,
 * no CAP_NET_ADMIN, a kernel without delay accounting). sched is opened only
 * when its schedstats keys are printed (kernel.sched_schedstats=1, checked at
 * every capture) or asked for.
 *
 * Options:
 *   sched: auto (default) | always | never
 *     auto    read sched while kernel.sched_schedstats is 1 (on a proc root
 *             that is not this kernel's procfs, a copied tree: always);
 *             without it sched holds only se.nr_migrations and se.slice
 *             of this plugin's fields, which auto leaves absent.
 *     always  read it for every thread (true is accepted for it).
 *     never   never open it (false): the three schedstat fields only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "ctprof/source-task.h"
#include "ctprof/source-taskstats.h"
#include "hostprobe.h"
#include "schedstat_parse.h"

#ifndef SCHEDSTAT_VERSION
#define SCHEDSTAT_VERSION "0"
#endif

/* Lifetime totals add up across threads; lifetime peaks do not. */
#define COUNT(n, h)   CTP_FIELD_COUNTER("schedstat." n, THREAD, COUNT, h)
#define SUM_NS(n, h)  CTP_FIELD_COUNTER("schedstat." n, THREAD, NS, h)
#define PEAK_NS(n, h) CTP_FIELD_PEAK("schedstat." n, THREAD, NS, h)
/* A value of the schedstat file (ctp_schedstat), or of a sched key
 * (ctp_sched, schedstat_parse.h CTP_SCHED_KEYS). */
#define FILE_SRC(m, b)                                                         \
	CTP_SRC_SLOT(struct ctp_schedstat, m, CTP_SCHEDSTAT_##b##_BIT)
#define KEY_SRC(id)                                                            \
	CTP_SRC_SLOT(struct ctp_sched, v[CTP_SCHED_##id], CTP_SCHED_##id)

/* The fields, one line each (X(id, source, description)): the schedstat
 * file's three, sched's keys (sum_sleep_runtime only feeds
 * voluntary_sleep; ext.enabled is the sched_ext plugin's, which reads the
 * same bytes through the core), then what the code derives. */
#define FILE_FIELDS(X)                                                         \
	X(F_RUN_TIME, FILE_SRC(run_ns, RUN),                                   \
	  SUM_NS("run_time",                                                   \
		 "Time on a CPU (se.sum_exec_runtime), schedstat field 1"))    \
	X(F_WAIT_TIME, FILE_SRC(wait_ns, WAIT),                                \
	  SUM_NS("wait_time", "Time runnable but waiting for a CPU "           \
			      "(run_delay), schedstat field 2"))               \
	X(F_TIMESLICES, FILE_SRC(timeslices, TIMESLICES),                      \
	  COUNT("timeslices", "Times the thread was put on a CPU (pcount), "   \
			      "schedstat field 3"))
#define KEY_FIELDS(X)                                                          \
	X(F_NR_WAKEUPS, KEY_SRC(NR_WAKEUPS),                                   \
	  COUNT("nr_wakeups", "Wakeups, sched nr_wakeups"))                    \
	X(F_NR_WAKEUPS_LOCAL, KEY_SRC(NR_WAKEUPS_LOCAL),                       \
	  COUNT("nr_wakeups_local",                                            \
		"Wakeups on the waker's CPU, sched nr_wakeups_local"))         \
	X(F_NR_WAKEUPS_REMOTE, KEY_SRC(NR_WAKEUPS_REMOTE),                     \
	  COUNT("nr_wakeups_remote", "Wakeups on another CPU than the "        \
				     "waker's, sched nr_wakeups_remote"))      \
	X(F_NR_WAKEUPS_SYNC, KEY_SRC(NR_WAKEUPS_SYNC),                         \
	  COUNT("nr_wakeups_sync",                                             \
		"Synchronous (WF_SYNC) wakeups, sched nr_wakeups_sync"))       \
	X(F_NR_WAKEUPS_MIGRATE, KEY_SRC(NR_WAKEUPS_MIGRATE),                   \
	  COUNT("nr_wakeups_migrate", "Wakeups that moved the thread to "      \
				      "another CPU, sched "                    \
				      "nr_wakeups_migrate"))                   \
	X(F_NR_WAKEUPS_AFFINE, KEY_SRC(NR_WAKEUPS_AFFINE),                     \
	  COUNT("nr_wakeups_affine", "Wake-affine decisions that chose the "   \
				     "waker's CPU, sched nr_wakeups_affine"))  \
	X(F_NR_WAKEUPS_AFFINE_ATTEMPTS, KEY_SRC(NR_WAKEUPS_AFFINE_ATTEMPTS),   \
	  COUNT("nr_wakeups_affine_attempts",                                  \
		"Wake-affine decisions taken, sched "                          \
		"nr_wakeups_affine_attempts"))                                 \
	X(F_NR_MIGRATIONS, KEY_SRC(NR_MIGRATIONS),                             \
	  COUNT("nr_migrations",                                               \
		"Migrations between CPUs, sched se.nr_migrations"))            \
	X(F_NR_FORCED_MIGRATIONS, KEY_SRC(NR_FORCED_MIGRATIONS),               \
	  COUNT("nr_forced_migrations",                                        \
		"Load-balancer migrations despite a cache-hot thread, sched "  \
		"nr_forced_migrations"))                                       \
	X(F_NR_FAILED_MIGRATIONS_AFFINE, KEY_SRC(NR_FAILED_MIGRATIONS_AFFINE), \
	  COUNT("nr_failed_migrations_affine",                                 \
		"Migrations refused by CPU affinity, sched "                   \
		"nr_failed_migrations_affine"))                                \
	X(F_NR_FAILED_MIGRATIONS_RUNNING,                                      \
	  KEY_SRC(NR_FAILED_MIGRATIONS_RUNNING),                               \
	  COUNT("nr_failed_migrations_running",                                \
		"Migrations refused because the thread was running, sched "    \
		"nr_failed_migrations_running"))                               \
	X(F_NR_FAILED_MIGRATIONS_HOT, KEY_SRC(NR_FAILED_MIGRATIONS_HOT),       \
	  COUNT("nr_failed_migrations_hot",                                    \
		"Migrations refused because the thread was cache-hot, sched "  \
		"nr_failed_migrations_hot"))                                   \
	X(F_WAIT_SUM, KEY_SRC(WAIT_SUM),                                       \
	  SUM_NS("wait_sum",                                                   \
		 "Run-queue wait time (fair/rt/dl classes), sched wait_sum"))  \
	X(F_WAIT_COUNT, KEY_SRC(WAIT_COUNT),                                   \
	  COUNT("wait_count", "Run-queue waits ended, sched wait_count"))      \
	X(F_WAIT_MAX, KEY_SRC(WAIT_MAX),                                       \
	  PEAK_NS("wait_max", "Longest run-queue wait, sched wait_max"))       \
	X(F_SLEEP_MAX, KEY_SRC(SLEEP_MAX),                                     \
	  PEAK_NS("sleep_max", "Longest off-CPU sleep (voluntary or "          \
			       "blocked), sched sleep_max"))                   \
	X(F_BLOCK_SUM, KEY_SRC(SUM_BLOCK_RUNTIME),                             \
	  SUM_NS("block_sum",                                                  \
		 "Time blocked uninterruptibly, sched sum_block_runtime"))     \
	X(F_BLOCK_MAX, KEY_SRC(BLOCK_MAX),                                     \
	  PEAK_NS("block_max",                                                 \
		  "Longest uninterruptible block, sched block_max"))           \
	X(F_IOWAIT_SUM, KEY_SRC(IOWAIT_SUM),                                   \
	  SUM_NS("iowait_sum", "Time blocked waiting for I/O (part of "        \
			       "block_sum), sched iowait_sum"))                \
	X(F_IOWAIT_COUNT, KEY_SRC(IOWAIT_COUNT),                               \
	  COUNT("iowait_count", "I/O waits ended, sched iowait_count"))        \
	X(F_EXEC_MAX, KEY_SRC(EXEC_MAX),                                       \
	  PEAK_NS("exec_max", "Longest on-CPU stretch between accounting "     \
			      "updates, sched exec_max"))                      \
	X(F_SLICE_MAX, KEY_SRC(SLICE_MAX),                                     \
	  PEAK_NS("slice_max", "Longest fair-class slice run before being "    \
			       "switched out, sched slice_max"))               \
	X(F_CORE_FORCEIDLE_SUM, KEY_SRC(CORE_FORCEIDLE_SUM),                   \
	  SUM_NS("core_forceidle_sum",                                         \
		 "Time an SMT sibling was forced idle for this thread (core "  \
		 "scheduling), sched core_forceidle_sum"))                     \
	X(F_SLICE, KEY_SRC(SLICE),                                             \
	  CTP_FIELD_GAUGE("schedstat.slice", THREAD, NS, MAX,                  \
			  "Current fair-class slice length, sched se.slice"))
#define CODE_FIELDS(X)                                                         \
	X(F_VOLUNTARY_SLEEP, CTP_SRC_NONE,                                     \
	  SUM_NS("voluntary_sleep", "Interruptible sleep time: sched "         \
				    "sum_sleep_runtime minus "                 \
				    "sum_block_runtime"))
#define FIELDS(X) FILE_FIELDS(X) KEY_FIELDS(X) CODE_FIELDS(X)

enum { FIELDS(CTP_FT_ID) N_FIELDS };
static const struct ctp_field_desc fields[] = {FIELDS(CTP_FT_DESC)};
static const struct ctp_field_src srcs[] = {FIELDS(CTP_FT_SRC)};
/* The rows of each parse's output. */
#define N_FILE_FIELDS (0 FILE_FIELDS(CTP_FT_COUNT))
#define N_KEY_FIELDS  (0 KEY_FIELDS(CTP_FT_COUNT))

/* Declaration order is the order of task->files[]. sched is lazy so that
 * `sched: false` never opens it. */
enum { TF_SCHEDSTAT, TF_SCHED, N_TF };
static const char *const thread_files[] = {"?schedstat", "?sched", NULL};

enum {
	C_NEGATIVE,	  /* negative_dotted_values */
	C_SCHED_ERR,	  /* sched_parse_errors */
	C_SCHEDSTAT_ERR,  /* schedstat_parse_errors */
	C_SLEEP_NEGATIVE, /* voluntary_sleep_negative */
	C_FROM_TASKSTATS, /* threads whose schedstat values came from the */
	C_FROM_FILES,	  /* taskstats source / from the schedstat file */
	C_SCHED_SKIPPED,  /* captures that left sched unread (auto) */
	C_FROM_TASK,	  /* ... from the task source */
	N_COUNTERS
};
static const char *const counter_names[N_COUNTERS] = {
	[C_NEGATIVE] = "negative_dotted_values",
	[C_SCHED_ERR] = "sched_parse_errors",
	[C_SCHEDSTAT_ERR] = "schedstat_parse_errors",
	[C_SLEEP_NEGATIVE] = "voluntary_sleep_negative",
	[C_FROM_TASKSTATS] = "from_taskstats",
	[C_FROM_FILES] = "from_files",
	[C_SCHED_SKIPPED] = "sched_not_read",
	[C_FROM_TASK] = "from_task",
};

/* The task source's three values. */
#define SS_TAKE(val, m, b)                                                     \
	{                                                                      \
		.value = (val), .type = CTP_TYPE_U64,                          \
		.bit = CTP_SCHEDSTAT_##b##_BIT,                                \
		.off = offsetof(struct ctp_schedstat, m)                       \
	}
static const struct ctp_src_take schedstat_take[] = {
	SS_TAKE(CTP_SRC_TASK_RUN_NS, run_ns, RUN),
	SS_TAKE(CTP_SRC_TASK_RUN_DELAY_NS, wait_ns, WAIT),
	SS_TAKE(CTP_SRC_TASK_TIMESLICES, timeslices, TIMESLICES),
};

enum sched_mode { SCHED_AUTO, SCHED_ALWAYS, SCHED_NEVER };

/* Read-only during the walk: the callbacks share it across workers
 * (read_sched is decided by host, before the walk). */
struct sched_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	enum sched_mode mode;
	bool live;	/* the proc root is this kernel's procfs */
	uint32_t need;	/* CTP_SCHEDSTAT_* bits a thread row records */
	int read_sched; /* this capture reads sched */
	bool all_bound; /* the core copies every schedstat value recorded */
};

static void count(const struct sched_state *st, int c, uint64_t n)
{
	if (n)
		st->api->summary_add(st->ctx, st->counter[c], n);
}

/* Rows [first, first + n) of the table from one parse's output. */
static void set_rows(const struct sched_state *st, struct ctp_setter *set,
		     size_t first, size_t n, const void *vals, uint64_t present)
{
	ctp_fields_set(set, fields + first, srcs + first, st->fh + first, n, 0,
		       vals, present);
}

/* The values of f that ss lacks, into ss (f.present says which). */
static void merge_schedstat(struct ctp_schedstat *ss,
			    const struct ctp_schedstat *f)
{
	uint32_t add = f->present & ~ss->present;

	if (add & CTP_SCHEDSTAT_RUN)
		ss->run_ns = f->run_ns;
	if (add & CTP_SCHEDSTAT_WAIT)
		ss->wait_ns = f->wait_ns;
	if (add & CTP_SCHEDSTAT_TIMESLICES)
		ss->timeslices = f->timeslices;
	ss->present |= add;
}

/* The three values from the taskstats source into ss, for the values ss
 * lacks; false when it cannot give all three. */
static bool schedstat_from_taskstats(const struct sched_state *st,
				     const struct ctp_task *task,
				     struct ctp_schedstat *ss)
{
	struct ctp_schedstat t;
	const void *data;
	size_t len;
	uint32_t miss = st->need & ~ss->present;

	if (!CTP_API_HAS(st->api, source_get) ||
	    st->api->source_get(task, CTP_SOURCE_TASKSTATS, &data, &len) < 0)
		return false;
	if (!ctp_src_taskstats_get(data, len, CTP_SRC_TS_RUN_NS, &t.run_ns) ||
	    !ctp_src_taskstats_get(data, len, CTP_SRC_TS_RUN_DELAY_NS,
				   &t.wait_ns) ||
	    !ctp_src_taskstats_get(data, len, CTP_SRC_TS_TIMESLICES,
				   &t.timeslices))
		return false;
	t.present = miss;
	merge_schedstat(ss, &t);
	return true;
}

/*
 * The schedstat values: the task source's, then the taskstats source's
 * for the rest, then the file's for what neither gave (each thread
 * counted under the last it needed). Returns 0, or -EPROTO when the core
 * handed fewer files than declared.
 */
static int thread_schedstat(const struct sched_state *st,
			    const struct ctp_task *task, struct ctp_setter *set)
{
	struct ctp_schedstat ss, f;
	const char *data;
	size_t len;
	int r;

	if (!st->need)
		return 0;
	ss.present = (uint32_t)ctp_src_task_take(st->api, task, schedstat_take,
						 CTP_ARRAY_LEN(schedstat_take),
						 st->need, &ss);
	if (!(st->need & ~ss.present)) {
		count(st, C_FROM_TASK, 1);
	} else if (schedstat_from_taskstats(st, task, &ss)) {
		count(st, C_FROM_TASKSTATS, 1);
	} else {
		count(st, C_FROM_FILES, 1);
		r = ctp_task_fetch(st->api, task, TF_SCHEDSTAT, &data, &len);
		if (r == -EPROTO)
			return r;
		if (r == 0) {
			if (ctp_parse_schedstat(data, len, &f) < 0)
				count(st, C_SCHEDSTAT_ERR, 1);
			f.present &= st->need;
			merge_schedstat(&ss, &f);
		}
	}
	set_rows(st, set, F_RUN_TIME, N_FILE_FIELDS, &ss, ss.present);
	return 0;
}

static void record_sched(const struct sched_state *st, struct ctp_setter *set,
			 const char *data, size_t len)
{
	struct ctp_sched s;
	uint64_t v;
	int r;

	if (ctp_parse_sched(data, len, &s) < 0)
		count(st, C_SCHED_ERR, 1);
	count(st, C_NEGATIVE, s.negative);
	set_rows(st, set, F_NR_WAKEUPS, N_KEY_FIELDS, &s, s.present);
	r = ctp_sched_voluntary_sleep(&s, &v);
	if (r == 0)
		ctp_set_u64(set, st->fh[F_VOLUNTARY_SLEEP], v);
	else if (r == -ERANGE)
		count(st, C_SLEEP_NEGATIVE, 1);
}

/*
 * A file that cannot be read leaves its fields absent and is not an error
 * of the plugin: schedstat and sched are missing on kernels built without
 * them, and the core already tallies each failed read per file name. Only
 * a refused set_* (a bug) is returned.
 */
static int sched_thread(void *state, const struct ctp_task *task,
			struct ctp_record *rec)
{
	const struct sched_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const char *data;
	size_t len;
	int r;

	r = thread_schedstat(st, task, &set);
	if (r < 0)
		return r;
	if (st->read_sched) {
		r = ctp_task_fetch(st->api, task, TF_SCHED, &data, &len);
		if (r == -EPROTO)
			return r;
		if (r == 0)
			record_sched(st, &set, data, len);
	}
	return set.err;
}

static const char *const sched_modes[] = {"auto", "always", "never",
					  "true", "false",  NULL};

static const struct ctp_option_desc options[] = {
	{.name = "sched",
	 .help = "read task/<tid>/sched (wait_sum and the other schedstats "
		 "keys): auto (while kernel.sched_schedstats is 1), always "
		 "(true) or never (false)",
	 .type = CTP_OPT_STRING,
	 .def = "auto",
	 .choices = sched_modes},
};

static int parse_options(struct ctp_ctx *ctx, const struct ctp_api *api,
			 enum sched_mode *mode)
{
	const char *s;
	int r;

	*mode = SCHED_AUTO;
	r = api->opt_str(ctx, "sched", &s);
	if (r == -ENOENT)
		return 0;
	if (r == 0 && strcmp(s, "auto") == 0)
		return 0;
	if (r == 0 && (!strcmp(s, "always") || !strcmp(s, "true"))) {
		*mode = SCHED_ALWAYS;
		return 0;
	}
	if (r == 0 && (!strcmp(s, "never") || !strcmp(s, "false"))) {
		*mode = SCHED_NEVER;
		return 0;
	}
	api->log(ctx, CTP_LOG_ERR,
		 "option 'sched': not auto, always (true) or never (false)");
	return -EINVAL;
}

/*
 * Whether this capture reads sched. Under auto: while the kernel prints
 * the schedstats keys (<proc>/sys/kernel/sched_schedstats is 1; it exists
 * only with CONFIG_SCHEDSTATS), and always on a proc root that is not
 * this kernel's procfs (a copied tree says what it holds).
 */
/* kernel.sched_schedstats under the proc root: 1 on, 0 off, or the read's
 * negative errno (-ENOENT: a kernel without CONFIG_SCHEDSTATS). */
static int schedstats_sysctl(int proc_fd)
{
	char buf[16];
	size_t n = 0;
	int r = ctp_read_small(proc_fd, "sys/kernel/sched_schedstats", buf,
			       sizeof(buf), &n);

	return r < 0 ? r : n && buf[0] == '1';
}

static bool want_sched(const struct sched_state *st)
{
	const struct ctp_roots *roots = st->api->roots(st->ctx);
	int on;

	if (st->mode != SCHED_AUTO)
		return st->mode == SCHED_ALWAYS;
	on = schedstats_sysctl(roots ? roots->proc_fd : -1);
	return on >= 0 ? on == 1 : !st->live;
}

static int sched_host(void *state, struct ctp_record *rec)
{
	struct sched_state *st = state;

	(void)rec;
	st->read_sched = want_sched(st);
	if (!st->read_sched && st->mode == SCHED_AUTO)
		count(st, C_SCHED_SKIPPED, 1);
	/* Without sched, a thread whose three values the core copied from
	 * the source has nothing left for sched_thread. */
	if (st->all_bound)
		return st->api->thread_skip_bound(st->ctx, !st->read_sched,
						  st->counter[C_FROM_TASK]);
	return 0;
}

/*
 * Why sched's schedstats keys (wait_sum, sleep_max, nr_wakeups, ...) are
 * absent on this kernel, as a hint; NULL when they are printed or it
 * cannot tell. <proc>/sys/kernel/sched_schedstats exists only with
 * CONFIG_SCHEDSTATS (kernel/sched/core.c) and says whether they are on;
 * without it, config.gz tells a kernel built without the option (a fixture
 * tree with neither says nothing).
 */
static const char *schedstats_hint(int proc_fd)
{
	char *kconfig = NULL;
	size_t klen = 0;
	int r = schedstats_sysctl(proc_fd);
	if (r >= 0)
		return r == 0 ? "schedstat.wait_sum and the other schedstats "
				"fields are absent: kernel.sched_schedstats "
				"is 0 (sysctl -w kernel.sched_schedstats=1 "
				"turns them on)"
			      : NULL;
	if (r != -ENOENT || ctp_read_kconfig(proc_fd, &kconfig, &klen) < 0)
		return NULL;
	enum ctp_kconfig_value v = ctp_kconfig_lookup(
		kconfig, klen, "CONFIG_SCHEDSTATS", NULL, NULL);
	free(kconfig);
	return v == CTP_KCONFIG_NOT_SET || v == CTP_KCONFIG_ABSENT
		       ? "schedstat.wait_sum and the other schedstats fields "
			 "are absent: this kernel is built without "
			 "CONFIG_SCHEDSTATS"
		       : NULL;
}

static void sched_fini(void *state)
{
	free(state);
}

static int sched_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **state)
{
	struct sched_state *st = calloc(1, sizeof(*st));
	enum sched_mode mode = SCHED_AUTO;
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	/* The lazy sched file needs file_get. */
	r = CTP_ATTACH_TABLE(ctx, api, CTP_API_THROUGH(file_get), srcs, st->fh,
			     st->counter);
	if (r == 0)
		r = parse_options(ctx, api, &mode);
	if (r < 0) {
		free(st);
		return r;
	}
	st->mode = mode;
	for (size_t i = 0; i < CTP_ARRAY_LEN(schedstat_take); i++)
		if (st->fh[F_RUN_TIME + i] >= 0)
			st->need |= 1u << schedstat_take[i].bit;
	{
		const struct ctp_roots *roots = api->roots(ctx);
		st->live = ctp_proc_is_live(roots ? roots->proc_fd : -1);
	}
	/* The source's values copied by the core (ctp_api.field_bind). */
	if (st->need && CTP_API_HAS(api, field_bind) &&
	    CTP_API_HAS(api, thread_skip_bound)) {
		for (size_t i = 0; r == 0 && i < CTP_ARRAY_LEN(schedstat_take);
		     i++)
			if (st->fh[F_RUN_TIME + i] >= 0)
				r = api->field_bind(ctx, st->fh[F_RUN_TIME + i],
						    CTP_SOURCE_TASK,
						    schedstat_take[i].value);
		if (r < 0) {
			free(st);
			return r;
		}
		st->all_bound = true;
	}
	/* Decided again by host before every walk. */
	st->read_sched = want_sched(st);
	/* schedstat exists only with CONFIG_SCHED_INFO; saying so lets `show`
	 * tell such a kernel from other read failures. (sched is not gated:
	 * it needed CONFIG_SCHED_DEBUG only before 6.15.) An older core
	 * without gates just gives no such hint. */
	if (CTP_API_HAS(api, file_gate)) {
		r = api->file_gate(ctx, "schedstat", "CONFIG_SCHED_INFO");
		if (r < 0)
			api->log(ctx, CTP_LOG_DEBUG, "file_gate schedstat: %s",
				 strerror(-r));
	}
	/* Said once, from init: the kernel decides it for the whole capture. */
	if (mode != SCHED_NEVER && CTP_API_HAS(api, set_hint) &&
	    CTP_API_HAS(api, roots)) {
		const struct ctp_roots *roots = api->roots(ctx);
		const char *hint = schedstats_hint(roots ? roots->proc_fd : -1);
		if (hint)
			api->set_hint(ctx, hint);
	}
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "schedstat",
	.version = SCHEDSTAT_VERSION,
	.description = "Per-thread scheduler accounting: CPU, run-queue wait, "
		       "wakeups, migrations, sleep/block/iowait from /proc "
		       "schedstat and sched",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
		 CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.thread_files = thread_files,
	.init = sched_init,
	.fini = sched_fini,
	.host = sched_host,
	.thread = sched_thread,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = 0,
};
