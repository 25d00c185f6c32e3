/* SPDX-License-Identifier: MIT */
/*
 * procfs-stat: per-thread CPU time, page faults, scheduling parameters, run
 * state, context switches and CPU affinity from /proc/<tgid>/task/<tid>/stat
 * and status; per process, from /proc/<tgid>/stat, the thread count and the
 * kernel's own process totals, which keep the work of exited threads and
 * of waited-for children that no thread row holds.
 *
 * status is read only when something needs it: the context switches when
 * the taskstats plugin's per-task source cannot give them (it has the same
 * two counters, nvcsw and nivcsw, from the reply it gets anyway), and the
 * affinity list when sched_getaffinity cannot (or `affinity: status`).
 * The run state comes from stat, which prints the same letter.
 *
 * Options:
 *   affinity: auto (default) | syscall | status
 *     syscall  sched_getaffinity(tid); falls back to Cpus_allowed_list when
 *              the call fails (the thread exited after status was read).
 *     status   Cpus_allowed_list only (fixture trees have fake tids).
 *     auto     syscall when the proc root is "/proc", status otherwise.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "ctprof/source-taskstats.h"
#include "procfs_parse.h"
#include "workers.h"

#ifndef PROCFS_STAT_VERSION
#define PROCFS_STAT_VERSION "0"
#endif

enum {
	F_MINFLT,
	F_MAJFLT,
	F_UTIME,
	F_STIME,
	F_PRIORITY,
	F_NICE,
	F_START_TIME,
	F_PROCESSOR,
	F_RT_PRIORITY,
	F_POLICY,
	F_STATE,
	F_VOLUNTARY_CSW,
	F_NONVOLUNTARY_CSW,
	F_CPU_AFFINITY,
	F_NR_THREADS,
	F_PROC_MINFLT,
	F_PROC_MAJFLT,
	F_PROC_UTIME,
	F_PROC_STIME,
	F_CHILD_MINFLT,
	F_CHILD_MAJFLT,
	F_CHILD_UTIME,
	F_CHILD_STIME,
	N_FIELDS
};

/* The text shared by the help of the process-scope fields. */
#define WHOLE                                                                  \
	" of the whole process since it started: its live threads and "        \
	"those that exited, not its children; <tgid>/stat field "
#define WAITED                                                                 \
	" of the process's children that exited and were waited for "          \
	"(wait4, waitpid...), each with the descendants it waited "            \
	"for; not running children, nor those reaped unwaited "                \
	"(SIGCHLD ignored); <tgid>/stat field "
#define PROC_COUNTER(nm, un, hlp) CTP_FIELD_COUNTER(nm, PROCESS, un, hlp)
/* A child's whole life is added when it is reaped: no rate over an
 * interval (CTP_FIELD_REAPED). */
#define CHILD_COUNTER(nm, un, hlp)                                             \
	CTP_FIELD_ROLE(nm, PROCESS, U64, un, COUNTER, SUM, CTP_FIELD_REAPED,   \
		       hlp)

static const struct ctp_field_desc fields[] = {
	[F_MINFLT] = CTP_FIELD_COUNTER(
		"procfs.minflt", THREAD, COUNT,
		"Minor page faults (no disk I/O), stat field 10"),
	[F_MAJFLT] =
		CTP_FIELD_COUNTER("procfs.majflt", THREAD, COUNT,
				  "Major page faults (needed disk I/O), stat "
				  "field 12"),
	[F_UTIME] =
		CTP_FIELD_COUNTER("procfs.utime", THREAD, TICKS,
				  "User-mode CPU time since thread start, stat "
				  "field 14"),
	[F_STIME] = CTP_FIELD_COUNTER(
		"procfs.stime", THREAD, TICKS,
		"Kernel-mode CPU time since thread start, stat "
		"field 15"),
	[F_PRIORITY] =
		CTP_FIELD("procfs.priority", THREAD, I64, NONE, ORDINAL, RANGE,
			  "Kernel scheduling priority (task_prio: 0..39 "
			  "fair, negative real-time), stat field 18"),
	[F_NICE] = CTP_FIELD("procfs.nice", THREAD, I64, NONE, ORDINAL, RANGE,
			     "Nice value, -20..19, stat field 19"),
	[F_START_TIME] =
		CTP_FIELD_ROLE("procfs.start_time", THREAD, U64, TICKS, ORDINAL,
			       RANGE, CTP_FIELD_START_TIME,
			       "Thread start time since boot, stat field 22"),
	[F_PROCESSOR] =
		CTP_FIELD("procfs.processor", THREAD, I64, NONE, ORDINAL, RANGE,
			  "CPU the thread last ran on, stat field 39"),
	[F_RT_PRIORITY] = CTP_FIELD("procfs.rt_priority", THREAD, U64, NONE,
				    ORDINAL, RANGE,
				    "Real-time priority, 0 unless FIFO/RR, "
				    "stat field 40"),
	[F_POLICY] =
		CTP_FIELD_LABEL("procfs.policy", THREAD,
				"Scheduling policy name (SCHED_OTHER, ...), "
				"stat field 41"),
	[F_STATE] =
		CTP_FIELD("procfs.state", THREAD, CHAR, NONE, CATEGORICAL, MODE,
			  "Run state letter (R, S, D, T, t, X, Z, P, I), "
			  "stat field 3 (status State's letter)"),
	[F_VOLUNTARY_CSW] =
		CTP_FIELD_COUNTER("procfs.voluntary_csw", THREAD, COUNT,
				  "Voluntary context switches (gave up the "
				  "CPU), status voluntary_ctxt_switches"),
	[F_NONVOLUNTARY_CSW] =
		CTP_FIELD_COUNTER("procfs.nonvoluntary_csw", THREAD, COUNT,
				  "Involuntary context switches "
				  "(preempted), status "
				  "nonvoluntary_ctxt_switches"),
	[F_CPU_AFFINITY] = CTP_FIELD(
		"procfs.cpu_affinity", THREAD, CPUSET, NONE, CPUSET, UNION,
		"CPUs the thread may run on "
		"(sched_getaffinity or Cpus_allowed_list)"),
	[F_NR_THREADS] =
		CTP_FIELD_GAUGE("procfs.nr_threads", PROCESS, COUNT, MAX,
				"Threads in the process, stat field 20"),
	[F_PROC_MINFLT] = PROC_COUNTER("procfs.process.minflt", COUNT,
				       "Minor page faults" WHOLE "10"),
	[F_PROC_MAJFLT] = PROC_COUNTER("procfs.process.majflt", COUNT,
				       "Major page faults" WHOLE "12"),
	[F_PROC_UTIME] = PROC_COUNTER("procfs.process.utime", TICKS,
				      "User-mode CPU time" WHOLE "14"),
	[F_PROC_STIME] = PROC_COUNTER("procfs.process.stime", TICKS,
				      "Kernel-mode CPU time" WHOLE "15"),
	[F_CHILD_MINFLT] =
		CHILD_COUNTER("procfs.children.minflt", COUNT,
			      "Minor page faults" WAITED "11 (cminflt)"),
	[F_CHILD_MAJFLT] =
		CHILD_COUNTER("procfs.children.majflt", COUNT,
			      "Major page faults" WAITED "13 (cmajflt)"),
	[F_CHILD_UTIME] =
		CHILD_COUNTER("procfs.children.utime", TICKS,
			      "User-mode CPU time" WAITED "16 (cutime)"),
	[F_CHILD_STIME] =
		CHILD_COUNTER("procfs.children.stime", TICKS,
			      "Kernel-mode CPU time" WAITED "17 (cstime)"),
};

_Static_assert(sizeof(fields) / sizeof(fields[0]) == N_FIELDS,
	       "field table and enum disagree");

/* Declaration order is the order of task->files[]. */
enum { TF_STAT, TF_STATUS, N_TF };
static const char *const thread_files[] = {"stat", "?status", NULL};
enum { PF_STAT, N_PF };
static const char *const process_files[] = {"stat", NULL};

enum affinity_mode {
	AFF_SYSCALL = 1,
	AFF_STATUS = 2,
};

/* Largest kernel NR_CPUS (x86 MAXSMP) bounds the status list bitmap. */
#define CPULIST_MAX_WORDS (8192 / 64)
/* Give up growing the sched_getaffinity mask past this many CPUs. */
#define AFFINITY_MAX_CPUS (1u << 20)

/* One worker thread's sched_getaffinity buffers (a block of st->bufs;
 * set NULL until first sized). */
struct aff_buf {
	size_t ncpus; /* CPU_ALLOC count */
	size_t setsize;
	cpu_set_t *set;
	uint64_t *words;
	size_t nwords;
};

enum {
	C_STAT_ERR,
	C_STATUS_ERR,
	C_AFF_FALLBACK,
	C_FROM_TASKSTATS,
	C_FROM_FILES,
	N_COUNTERS
};
static const char *const counter_names[] = {
	[C_STAT_ERR] = "stat_parse_errors",
	[C_STATUS_ERR] = "status_parse_errors",
	[C_AFF_FALLBACK] = "affinity_syscall_fallbacks",
	/* Threads whose context switches came from the taskstats source /
	 * from status. */
	[C_FROM_TASKSTATS] = "from_taskstats",
	[C_FROM_FILES] = "from_files",
};

struct procfs_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	enum affinity_mode affinity;
	_Atomic size_t ncpus;	 /* a mask size the kernel accepted */
	struct ctp_workers bufs; /* struct aff_buf, one per worker thread */
};

static int aff_buf_resize(struct aff_buf *b, size_t ncpus)
{
	size_t setsize = CPU_ALLOC_SIZE(ncpus);
	size_t nwords = (setsize + sizeof(uint64_t) - 1) / sizeof(uint64_t);
	cpu_set_t *set = CPU_ALLOC(ncpus);
	uint64_t *words = calloc(nwords, sizeof(*words));

	if (!set || !words) {
		if (set)
			CPU_FREE(set);
		free(words);
		return -ENOMEM;
	}
	if (b->set)
		CPU_FREE(b->set);
	free(b->words);
	b->set = set;
	b->ncpus = ncpus;
	b->setsize = setsize;
	b->words = words;
	b->nwords = nwords;
	return 0;
}

/* What a block holds (ctp_workers_fini's `done`). */
static void aff_buf_done(void *block)
{
	struct aff_buf *b = block;

	if (b->set)
		CPU_FREE(b->set);
	free(b->words);
}

/* The calling thread's buffers (held while it lives, then another's). */
static struct aff_buf *aff_buf_get(struct procfs_state *st)
{
	struct aff_buf *b = ctp_workers_get(&st->bufs);

	if (!b || (!b->set && aff_buf_resize(b, atomic_load(&st->ncpus)) < 0))
		return NULL;
	return b;
}

/*
 * sched_getaffinity(tid) into the calling worker's buffer, growing it while
 * the kernel says it is smaller than its cpumask (EINVAL). Returns the
 * number of words up to the highest set CPU in *n, words in *out.
 */
static int affinity_syscall(struct procfs_state *st, pid_t tid,
			    const uint64_t **out, size_t *n)
{
	struct aff_buf *b = aff_buf_get(st);
	const unsigned long *bits;
	size_t i, nlongs;
	int r;

	if (!b)
		return -ENOMEM;
	while (sched_getaffinity(tid, b->setsize, b->set) < 0) {
		if (errno != EINVAL || b->ncpus >= AFFINITY_MAX_CPUS)
			return -errno;
		r = aff_buf_resize(b, b->ncpus * 2);
		if (r < 0)
			return r;
		if (b->ncpus > atomic_load(&st->ncpus))
			atomic_store(&st->ncpus, b->ncpus);
	}
	/* A cpu_set_t is an array of unsigned long, bit i of long i/N. */
	bits = (const unsigned long *)(const void *)b->set;
	nlongs = b->setsize / sizeof(unsigned long);
	memset(b->words, 0, b->nwords * sizeof(*b->words));
	for (i = 0; i < nlongs; i++) {
		size_t bit = i * sizeof(unsigned long) * 8;

		b->words[bit / 64] |= (uint64_t)bits[i] << (bit % 64);
	}
	*n = b->nwords;
	while (*n && !b->words[*n - 1])
		(*n)--;
	*out = b->words;
	return 0;
}

static int set_u64(struct procfs_state *st, struct ctp_record *rec, int f,
		   uint64_t v)
{
	return st->fh[f] < 0 ? 0 : st->api->set_u64(rec, st->fh[f], v);
}

static int set_i64(struct procfs_state *st, struct ctp_record *rec, int f,
		   int64_t v)
{
	return st->fh[f] < 0 ? 0 : st->api->set_i64(rec, st->fh[f], v);
}

/* Keep the first failure of a series of set_* calls. */
static void keep(int *ret, int r)
{
	if (r < 0 && *ret == 0)
		*ret = r;
}

/* "unknown(N)" without stdio: the hot path does no formatting I/O. */
static size_t fmt_unknown_policy(char *buf, uint64_t v)
{
	char digits[20];
	size_t n = 0, len = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(buf, "unknown(", 8);
	len = 8;
	while (n)
		buf[len++] = digits[--n];
	buf[len++] = ')';
	return len;
}

static int set_policy(struct procfs_state *st, struct ctp_record *rec,
		      uint64_t policy)
{
	char buf[8 + 20 + 1];
	const char *name;

	if (st->fh[F_POLICY] < 0)
		return 0;
	name = ctp_sched_policy_name(policy);
	if (name)
		return st->api->set_str(rec, st->fh[F_POLICY], name,
					strlen(name));
	return st->api->set_str(rec, st->fh[F_POLICY], buf,
				fmt_unknown_policy(buf, policy));
}

static int set_thread_stat(struct procfs_state *st, struct ctp_record *rec,
			   const struct ctp_stat *s)
{
	int ret = 0;

	if (ctp_stat_has(s, CTP_STAT_MINFLT))
		keep(&ret, set_u64(st, rec, F_MINFLT, s->minflt));
	if (ctp_stat_has(s, CTP_STAT_MAJFLT))
		keep(&ret, set_u64(st, rec, F_MAJFLT, s->majflt));
	if (ctp_stat_has(s, CTP_STAT_UTIME))
		keep(&ret, set_u64(st, rec, F_UTIME, s->utime));
	if (ctp_stat_has(s, CTP_STAT_STIME))
		keep(&ret, set_u64(st, rec, F_STIME, s->stime));
	if (ctp_stat_has(s, CTP_STAT_PRIORITY))
		keep(&ret, set_i64(st, rec, F_PRIORITY, s->priority));
	if (ctp_stat_has(s, CTP_STAT_NICE))
		keep(&ret, set_i64(st, rec, F_NICE, s->nice));
	if (ctp_stat_has(s, CTP_STAT_STARTTIME))
		keep(&ret, set_u64(st, rec, F_START_TIME, s->starttime));
	if (ctp_stat_has(s, CTP_STAT_PROCESSOR))
		keep(&ret, set_i64(st, rec, F_PROCESSOR, s->processor));
	if (ctp_stat_has(s, CTP_STAT_RT_PRIORITY))
		keep(&ret, set_u64(st, rec, F_RT_PRIORITY, s->rt_priority));
	if (ctp_stat_has(s, CTP_STAT_POLICY))
		keep(&ret, set_policy(st, rec, s->policy));
	if (ctp_stat_has(s, CTP_STAT_STATE) && st->fh[F_STATE] >= 0)
		keep(&ret, st->api->set_char(rec, st->fh[F_STATE], s->state));
	return ret;
}

static int set_thread_status(struct procfs_state *st, struct ctp_record *rec,
			     const struct ctp_status *s)
{
	int ret = 0;

	if (s->present & CTP_STATUS_VOLUNTARY_CSW)
		keep(&ret, set_u64(st, rec, F_VOLUNTARY_CSW, s->voluntary_csw));
	if (s->present & CTP_STATUS_NONVOLUNTARY_CSW)
		keep(&ret,
		     set_u64(st, rec, F_NONVOLUNTARY_CSW, s->nonvoluntary_csw));
	return ret;
}

static void count(struct procfs_state *st, int counter)
{
	st->api->summary_add(st->ctx, st->counter[counter], 1);
}

/*
 * Affinity from the status list. Returns 1 when set, 0 when there is no
 * list (*bad set when the list does not parse), or a set_cpuset error.
 */
static int affinity_from_status(struct procfs_state *st, struct ctp_record *rec,
				const struct ctp_status *s, int *bad)
{
	uint64_t words[CPULIST_MAX_WORDS];
	size_t n;
	int r;

	if (!s || !(s->present & CTP_STATUS_CPUS_ALLOWED_LIST))
		return 0;
	r = ctp_parse_cpulist(s->cpus_allowed_list, s->cpus_allowed_list_len,
			      words, CPULIST_MAX_WORDS, &n);
	/* A live task always may run somewhere: empty means broken text. */
	if (r <= 0) {
		*bad = 1;
		return 0;
	}
	r = st->api->set_cpuset(rec, st->fh[F_CPU_AFFINITY], words, n);
	return r < 0 ? r : 1;
}

/* The context switches from the taskstats source: 1 when set, 0 when it
 * cannot give them, or a set_u64 error. */
static int csw_from_source(struct procfs_state *st, const struct ctp_task *task,
			   struct ctp_record *rec)
{
	const void *data;
	size_t len;
	uint64_t vol, invol;
	int ret = 0;

	if (!CTP_API_HAS(st->api, source_get) ||
	    st->api->source_get(task, CTP_SOURCE_TASKSTATS, &data, &len) < 0 ||
	    !ctp_src_taskstats_get(data, len, CTP_SRC_TS_NVCSW, &vol) ||
	    !ctp_src_taskstats_get(data, len, CTP_SRC_TS_NIVCSW, &invol))
		return 0;
	keep(&ret, set_u64(st, rec, F_VOLUNTARY_CSW, vol));
	keep(&ret, set_u64(st, rec, F_NONVOLUNTARY_CSW, invol));
	return ret < 0 ? ret : 1;
}

/* status, fetched and parsed into *ss on the thread's first need (*fetched
 * remembers it): 0, or the read's error. *bad is set when it does not parse
 * whole (what parsed is kept). */
static int status_get(struct procfs_state *st, const struct ctp_task *task,
		      struct ctp_status *ss, int *fetched, int *bad)
{
	const char *data;
	size_t len;
	int r;

	if (*fetched)
		return *fetched > 0 ? 0 : *fetched;
	r = ctp_task_fetch(st->api, task, TF_STATUS, &data, &len);
	*fetched = r < 0 ? r : 1;
	if (r < 0)
		return r;
	if (ctp_parse_status(data, len, ss) < 0)
		*bad = 1;
	return 0;
}

static int procfs_thread(void *state, const struct ctp_task *task,
			 struct ctp_record *rec)
{
	struct procfs_state *st = state;
	const char *data;
	size_t len;
	struct ctp_stat s;
	struct ctp_status ss;
	int ret = 0, rerr = 0, got = 0, status_bad = 0, fetched = 0, r;

	/* A missing file is not the end: the engine decides whether the
	 * task vanished; what the other file holds is still recorded. */
	r = ctp_task_file(task, TF_STAT, &data, &len);
	if (r == -EPROTO)
		return r;
	if (r == 0) {
		if (ctp_parse_stat(data, len, &s) < 0)
			count(st, C_STAT_ERR);
		keep(&ret, set_thread_stat(st, rec, &s));
		got = 1;
	} else {
		rerr = r;
	}

	r = csw_from_source(st, task, rec);
	if (r > 0) {
		count(st, C_FROM_TASKSTATS);
	} else if (r < 0) {
		keep(&ret, r);
	} else {
		count(st, C_FROM_FILES);
		r = status_get(st, task, &ss, &fetched, &status_bad);
		if (r == 0) {
			keep(&ret, set_thread_status(st, rec, &ss));
			got = 1;
		} else if (!rerr) {
			rerr = r;
		}
	}

	if (st->fh[F_CPU_AFFINITY] >= 0) {
		const uint64_t *words;
		size_t n;

		r = -ENOTSUP;
		if (st->affinity == AFF_SYSCALL) {
			r = affinity_syscall(st, task->tid, &words, &n);
			if (r == 0)
				keep(&ret, st->api->set_cpuset(
						   rec, st->fh[F_CPU_AFFINITY],
						   words, n));
			else
				count(st, C_AFF_FALLBACK);
		}
		if (r < 0 &&
		    status_get(st, task, &ss, &fetched, &status_bad) == 0)
			keep(&ret,
			     affinity_from_status(st, rec, &ss, &status_bad));
	}
	if (status_bad)
		count(st, C_STATUS_ERR);

	if (ret < 0)
		return ret;
	/* Neither file readable: nothing recorded, say why. */
	return got ? 0 : rerr;
}

/*
 * The process row from <tgid>/stat, where the kernel sums the whole thread
 * group, exited threads included, and keeps the waited-for children's
 * totals (fs/proc/array.c do_task_stat, whole = 1).
 */
static int set_process_stat(struct procfs_state *st, struct ctp_record *rec,
			    const struct ctp_stat *s)
{
	const struct {
		unsigned stat_no;
		int field;
		uint64_t v;
	} vals[] = {
		{CTP_STAT_NUM_THREADS, F_NR_THREADS, s->num_threads},
		{CTP_STAT_MINFLT, F_PROC_MINFLT, s->minflt},
		{CTP_STAT_MAJFLT, F_PROC_MAJFLT, s->majflt},
		{CTP_STAT_UTIME, F_PROC_UTIME, s->utime},
		{CTP_STAT_STIME, F_PROC_STIME, s->stime},
		{CTP_STAT_CMINFLT, F_CHILD_MINFLT, s->cminflt},
		{CTP_STAT_CMAJFLT, F_CHILD_MAJFLT, s->cmajflt},
		{CTP_STAT_CUTIME, F_CHILD_UTIME, s->cutime},
		{CTP_STAT_CSTIME, F_CHILD_STIME, s->cstime},
	};
	int ret = 0;

	for (size_t i = 0; i < CTP_ARRAY_LEN(vals); i++)
		if (ctp_stat_has(s, vals[i].stat_no))
			keep(&ret, set_u64(st, rec, vals[i].field, vals[i].v));
	return ret;
}

static int procfs_process(void *state, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct procfs_state *st = state;
	const char *data;
	size_t len;
	struct ctp_stat s;
	int r;

	r = ctp_task_file(task, PF_STAT, &data, &len);
	if (ctp_err_vanished(r))
		return -ENOENT;
	if (r < 0)
		return r;
	if (ctp_parse_stat(data, len, &s) < 0)
		count(st, C_STAT_ERR);
	return set_process_stat(st, rec, &s);
}

static const char *const affinity_modes[] = {"auto", "syscall", "status", NULL};

static const struct ctp_option_desc options[] = {
	{.name = "affinity",
	 .help = "where procfs.cpu_affinity comes from: sched_getaffinity(2) "
		 "(syscall), Cpus_allowed_list of status, or syscall on the "
		 "live /proc and status elsewhere (auto)",
	 .type = CTP_OPT_STRING,
	 .def = "auto",
	 .choices = affinity_modes},
};

static int parse_options(struct ctp_ctx *ctx, const struct ctp_api *api,
			 enum affinity_mode *mode)
{
	const struct ctp_roots *roots;
	const char *v;
	int r;

	r = api->opt_str(ctx, "affinity", &v);
	if (r == -ENOENT) {
		v = "auto";
	} else if (r < 0) {
		api->log(ctx, CTP_LOG_ERR, "option 'affinity': %s",
			 strerror(-r));
		return r;
	}
	if (strcmp(v, "syscall") == 0) {
		*mode = AFF_SYSCALL;
	} else if (strcmp(v, "status") == 0) {
		*mode = AFF_STATUS;
	} else if (strcmp(v, "auto") == 0) {
		/* Only the live /proc has tids sched_getaffinity knows. */
		roots = api->roots(ctx);
		*mode = roots && roots->proc &&
					strcmp(roots->proc, "/proc") == 0
				? AFF_SYSCALL
				: AFF_STATUS;
	} else {
		api->log(ctx, CTP_LOG_ERR,
			 "option 'affinity': '%s' is not auto, syscall or "
			 "status",
			 v);
		return -EINVAL;
	}
	return 0;
}

static void procfs_fini(void *state)
{
	struct procfs_state *st = state;

	if (!st)
		return;
	ctp_workers_fini(&st->bufs, aff_buf_done);
	free(st);
}

/* Size the affinity mask once to the kernel's cpumask, so workers start
 * with a buffer the kernel accepts; fall back to Cpus_allowed_list when
 * the call does not work here. */
static void affinity_probe(struct procfs_state *st)
{
	const uint64_t *words;
	size_t n;
	int r;

	if (st->affinity != AFF_SYSCALL)
		return;
	r = affinity_syscall(st, 0, &words, &n);
	if (r < 0) {
		st->api->log(st->ctx, CTP_LOG_WARNING,
			     "sched_getaffinity: %s; using Cpus_allowed_list",
			     strerror(-r));
		st->affinity = AFF_STATUS;
	}
}

/* user + kernel time of a pair of fields, as one derived field (flags
 * fl: the pair's). */
#define CPU_TIME(nm, sc, fl, hlp, ut, stm)                                     \
	{                                                                      \
		.abi = CTP_ABI_MAJOR, .size = sizeof(struct ctp_derived_desc), \
		.field = CTP_FIELD_ROLE(nm, sc, U64, TICKS, COUNTER, SUM, fl,  \
					hlp),                                  \
		.n_terms = 2,                                                  \
		.terms = {{.field = (ut), .coef = 1},                          \
			  {.field = (stm), .coef = 1}},                        \
	}

/* All the CPU a thread used is what `compare` ranks by when a view sums
 * the two (docs/COMPARE.md); the process-scope pair counts what the
 * threads cannot: exited threads and waited-for children. */
static const struct ctp_derived_desc cpu_time_descs[] = {
	CPU_TIME("procfs.cpu_time", THREAD, 0,
		 "CPU time in user and kernel mode since thread start: "
		 "utime + stime",
		 "procfs.utime", "procfs.stime"),
	CPU_TIME("procfs.process.cpu_time", PROCESS, 0,
		 "CPU time in user and kernel mode of the whole process, "
		 "exited threads included, not children: process.utime + "
		 "process.stime",
		 "procfs.process.utime", "procfs.process.stime"),
	CPU_TIME("procfs.children.cpu_time", PROCESS, CTP_FIELD_REAPED,
		 "CPU time in user and kernel mode of the children that "
		 "exited and were waited for, with the descendants they "
		 "waited for: children.utime + children.stime",
		 "procfs.children.utime", "procfs.children.stime"),
};

static int procfs_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		       void **state)
{
	struct procfs_state *st = calloc(1, sizeof(*st));
	enum affinity_mode mode = AFF_STATUS;
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	atomic_init(&st->ncpus, CPU_SETSIZE);
	ctp_workers_init(&st->bufs, sizeof(struct aff_buf));
	/* The lazy status needs file_get. */
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(file_get), st->fh,
		       st->counter);
	if (r == 0)
		r = parse_options(ctx, api, &mode);
	if (r < 0) {
		procfs_fini(st);
		return r;
	}
	st->affinity = mode;
	affinity_probe(st);
	/* An older core has no derived fields: do without. */
	for (size_t i = 0; i < CTP_ARRAY_LEN(cpu_time_descs) &&
			   CTP_API_HAS(api, derived_register);
	     i++)
		api->derived_register(ctx, &cpu_time_descs[i]);
	api->log(ctx, CTP_LOG_DEBUG, "affinity from %s",
		 st->affinity == AFF_SYSCALL ? "sched_getaffinity"
					     : "Cpus_allowed_list");
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "procfs-stat",
	.version = PROCFS_STAT_VERSION,
	.description = "Per-thread CPU time, faults, scheduling, state, "
		       "context switches and affinity from /proc stat and "
		       "status",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
		 CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.thread_files = thread_files,
	.process_files = process_files,
	.init = procfs_init,
	.fini = procfs_fini,
	.thread = procfs_thread,
	.process = procfs_process,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = 0,
};
