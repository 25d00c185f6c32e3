/* SPDX-License-Identifier: MIT */
/*
 * procfs-stat: per-thread CPU time, page faults, scheduling parameters, run
 * state, context switches and CPU affinity from /proc/<tgid>/task/<tid>/stat
 * and status; per process, from /proc/<tgid>/stat, the thread count and the
 * kernel's own process totals, which keep the work of exited threads and
 * of waited-for children that no thread row holds.
 *
 * The cheapest source first, per value: a thread's stat values and its
 * context switches come from the per-task source "task"
 * (include/ctprof/source-task.h) where it offers them; stat is read only
 * for the values it lacks (not at all when it has every one this capture
 * records), and the context switches then come from the taskstats
 * plugin's source (it has the same two counters, nvcsw and nivcsw, from
 * the reply it gets anyway), else from status. The affinity too comes
 * from the source where it offers sched_getaffinity()'s mask (CPUS0..3),
 * else from the call. status is otherwise read only for the affinity list
 * when sched_getaffinity cannot give it (or `affinity: status`). The run state
 * comes from stat, which prints the same letter. A process row's values come
 * the same way from the per-process source "process"
 * (include/ctprof/source-process.h: <tgid>/stat's whole-group values), and
 * <tgid>/stat, lazy, is read only for those it lacks.
 *
 * Options:
 *   affinity: auto (default) | syscall | status
 *     syscall  the task source's mask, else sched_getaffinity(tid); falls
 *              back to Cpus_allowed_list when the call fails (the thread
 *              exited after status was read).
 *     status   Cpus_allowed_list only (fixture trees have fake tids).
 *     auto     syscall when the proc root is "/proc", status otherwise.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "ctprof/source-process.h"
#include "ctprof/source-task.h"
#include "ctprof/source-taskstats.h"
#include "procfs_parse.h"
#include "workers.h"

#ifndef PROCFS_STAT_VERSION
#define PROCFS_STAT_VERSION "0"
#endif

/* The fields, one line each in procfs_parse.h (CTP_STAT_FIELDS);
 * ctp_stat_src says where each comes from. */
enum { CTP_STAT_FIELDS(CTP_FT_ID) N_FIELDS };
static const struct ctp_field_desc fields[] = {CTP_STAT_FIELDS(CTP_FT_DESC)};

/* Declaration order is the order of task->files[]. */
enum { TF_STAT, TF_STATUS, N_TF };
static const char *const thread_files[] = {"stat", "?status", NULL};
/* Lazy: not read when the source "process" gives every value. */
enum { PF_STAT, N_PF };
static const char *const process_files[] = {"?stat", NULL};

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
	C_FROM_TASK,
	C_STAT_FROM_TASK,
	C_STAT_FROM_FILE,
	C_AFF_FROM_TASK,
	C_PROC_FROM_SOURCE,
	C_PROC_FROM_FILE,
	N_COUNTERS
};
static const char *const counter_names[] = {
	[C_STAT_ERR] = "stat_parse_errors",
	[C_STATUS_ERR] = "status_parse_errors",
	[C_AFF_FALLBACK] = "affinity_syscall_fallbacks",
	/* Threads whose context switches came from the taskstats source /
	 * from status / from the task source. */
	[C_FROM_TASKSTATS] = "from_taskstats",
	[C_FROM_FILES] = "from_files",
	[C_FROM_TASK] = "from_task",
	/* Threads whose stat values all came from the task source (stat not
	 * read) / that read stat for some or all of them. */
	[C_STAT_FROM_TASK] = "stat_from_task",
	[C_STAT_FROM_FILE] = "stat_from_file",
	/* Threads whose affinity came from the task source (no
	 * sched_getaffinity call). */
	[C_AFF_FROM_TASK] = "affinity_from_task",
	/* Process rows whose stat values all came from the source "process"
	 * (<tgid>/stat not read) / that read <tgid>/stat for some or all. */
	[C_PROC_FROM_SOURCE] = "process_from_source",
	[C_PROC_FROM_FILE] = "process_from_file",
};

/* The stat values the source "task" offers: stat field (pos) from source
 * value `value`, kept in struct ctp_stat as the field list says. */
#define STAT_TAKE(pos, val)                                                    \
	{                                                                      \
		.value = (val),                                                \
		.type = (CTP_STAT_KINDS_C >> (pos)&1)	? CTP_TYPE_CHAR        \
			: (CTP_STAT_KINDS_I >> (pos)&1) ? CTP_TYPE_I64         \
							: CTP_TYPE_U64,        \
		.bit = (pos),                                                  \
		.off = offsetof(struct ctp_stat, w) +                          \
		       (pos) * sizeof(union ctp_word)                          \
	}
static const struct ctp_src_take stat_take[] = {
	STAT_TAKE(CTP_STAT_STATE, CTP_SRC_TASK_STATE),
	STAT_TAKE(CTP_STAT_MINFLT, CTP_SRC_TASK_MINFLT),
	STAT_TAKE(CTP_STAT_MAJFLT, CTP_SRC_TASK_MAJFLT),
	STAT_TAKE(CTP_STAT_UTIME, CTP_SRC_TASK_UTIME),
	STAT_TAKE(CTP_STAT_STIME, CTP_SRC_TASK_STIME),
	STAT_TAKE(CTP_STAT_PRIORITY, CTP_SRC_TASK_PRIORITY),
	STAT_TAKE(CTP_STAT_NICE, CTP_SRC_TASK_NICE),
	STAT_TAKE(CTP_STAT_STARTTIME, CTP_SRC_TASK_START_TIME),
	STAT_TAKE(CTP_STAT_PROCESSOR, CTP_SRC_TASK_PROCESSOR),
	STAT_TAKE(CTP_STAT_RT_PRIORITY, CTP_SRC_TASK_RT_PRIORITY),
	STAT_TAKE(CTP_STAT_POLICY, CTP_SRC_TASK_POLICY),
};
/* The process's stat values the source "process" offers (all u64). */
static const struct ctp_src_take process_take[] = {
	STAT_TAKE(CTP_STAT_NUM_THREADS, CTP_SRC_PROC_NUM_THREADS),
	STAT_TAKE(CTP_STAT_MINFLT, CTP_SRC_PROC_MINFLT),
	STAT_TAKE(CTP_STAT_MAJFLT, CTP_SRC_PROC_MAJFLT),
	STAT_TAKE(CTP_STAT_UTIME, CTP_SRC_PROC_UTIME),
	STAT_TAKE(CTP_STAT_STIME, CTP_SRC_PROC_STIME),
	STAT_TAKE(CTP_STAT_CMINFLT, CTP_SRC_PROC_CMINFLT),
	STAT_TAKE(CTP_STAT_CMAJFLT, CTP_SRC_PROC_CMAJFLT),
	STAT_TAKE(CTP_STAT_CUTIME, CTP_SRC_PROC_CUTIME),
	STAT_TAKE(CTP_STAT_CSTIME, CTP_SRC_PROC_CSTIME),
};
/* The context switches, kept in a pair (voluntary, involuntary). */
static const struct ctp_src_take csw_take[] = {
	{.value = CTP_SRC_TASK_NVCSW, .type = CTP_TYPE_U64, .bit = 0, .off = 0},
	{.value = CTP_SRC_TASK_NIVCSW,
	 .type = CTP_TYPE_U64,
	 .bit = 1,
	 .off = sizeof(uint64_t)},
};

/*
 * What the thread callback takes from the source "task" besides the values
 * the core copies (the policy, whose name the plugin sets, and
 * sched_getaffinity()'s mask of CPUs 0-255, word w at cpus[w]), in one
 * read of the source: bit X_POLICY, bits X_CPUS.
 */
struct thread_extra {
	uint64_t policy;
	uint64_t cpus[4];
};
#define X_POLICY (1ull << 0)
#define X_CPUS	 (0xfull << 1)
#define X_TAKE(val, b, member)                                                 \
	{                                                                      \
		.value = (val), .type = CTP_TYPE_U64, .bit = (b),              \
		.off = offsetof(struct thread_extra, member)                   \
	}
static const struct ctp_src_take extra_take[] = {
	X_TAKE(CTP_SRC_TASK_POLICY, 0, policy),
	X_TAKE(CTP_SRC_TASK_CPUS(0), 1, cpus[0]),
	X_TAKE(CTP_SRC_TASK_CPUS(1), 2, cpus[1]),
	X_TAKE(CTP_SRC_TASK_CPUS(2), 3, cpus[2]),
	X_TAKE(CTP_SRC_TASK_CPUS(3), 4, cpus[3]),
};

struct procfs_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	/* The list's stat fields of each scope, as set from a parse. */
	struct ctp_fields_plan thread_plan, process_plan;
	/* The stat fields (presence bits) a thread row records: the plan's
	 * and the policy, which the code sets; a process row's. */
	uint64_t thread_need, process_need;
	/* What procfs_thread takes of extra_take: the policy while it is
	 * recorded, the mask while the affinity comes from the call. */
	uint64_t extra_want;
	enum affinity_mode affinity;
	_Atomic size_t ncpus;	 /* a mask size the kernel accepted */
	struct ctp_workers bufs; /* struct aff_buf, one per worker thread */
	/* The policies' names by string handle (ctp_api.str_intern), by
	 * policy number, -1 none yet; str_handles: the core has them. */
	bool str_handles;
	_Atomic int64_t policy_h[8];
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

/*
 * The policy's name: through its string handle where the core has them
 * (every thread sets one of a few names; a handle saves measuring, hashing
 * and comparing it on each, about half the set). A handle is good for the
 * capture that made it: the first thread of the next capture has it
 * refused (-ESTALE) and makes it again; workers that race make the same.
 */
static void set_policy(struct procfs_state *st, struct ctp_setter *set,
		       int field, uint64_t policy)
{
	char buf[8 + 20 + 1];
	const char *name = ctp_sched_policy_name(policy);
	int64_t h;

	if (!name) {
		ctp_set_str(set, field, buf, fmt_unknown_policy(buf, policy));
		return;
	}
	if (field < 0 || !st->str_handles ||
	    policy >= CTP_ARRAY_LEN(st->policy_h)) {
		ctp_set_str(set, field, name, strlen(name));
		return;
	}
	h = atomic_load_explicit(&st->policy_h[policy], memory_order_relaxed);
	if (h >= 0 && st->api->set_str_handle(set->rec, field, h) == 0)
		return;
	h = st->api->str_intern(st->ctx, name, strlen(name));
	if (h < 0) {
		ctp_set_str(set, field, name, strlen(name));
		return;
	}
	atomic_store_explicit(&st->policy_h[policy], h, memory_order_relaxed);
	ctp_set_str_handle(set, field, h);
}

/* The fields of `scope` from a stat line (the thread's, or <tgid>/stat for
 * the process, where the kernel sums the whole thread group, exited threads
 * included, and keeps the waited-for children's totals: fs/proc/array.c
 * do_task_stat, whole = 1). */
static void set_stat(struct procfs_state *st, struct ctp_setter *set,
		     const struct ctp_stat *s, uint8_t scope)
{
	ctp_fields_apply(set,
			 scope == CTP_SCOPE_THREAD ? &st->thread_plan
						   : &st->process_plan,
			 s, s->present);
	if (scope == CTP_SCOPE_THREAD && ctp_stat_has(s, CTP_STAT_POLICY))
		set_policy(st, set, st->fh[F_POLICY], s->w[CTP_STAT_POLICY].u);
}

static void count(struct procfs_state *st, int counter)
{
	st->api->summary_add(st->ctx, st->counter[counter], 1);
}

/*
 * Affinity from the status list. Returns 1 when set, 0 when there is no
 * list (*bad set when the list does not parse), or a set_cpuset error.
 */
static int affinity_from_status(struct procfs_state *st, struct ctp_setter *set,
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
	r = ctp_set_cpuset(set, st->fh[F_CPU_AFFINITY], words, n);
	return r < 0 ? r : 1;
}

/* The context switches from the task source, else the taskstats source:
 * 1 when set (*counter says which: C_FROM_TASK, C_FROM_TASKSTATS), 0 when
 * neither has both, or a set_u64 error. */
static int csw_from_source(struct procfs_state *st, const struct ctp_task *task,
			   struct ctp_setter *set, int *counter)
{
	const void *data;
	size_t len;
	uint64_t csw[2];
	int r1, r2;

	*counter = C_FROM_TASK;
	if (ctp_src_task_take(st->api, task, csw_take, CTP_ARRAY_LEN(csw_take),
			      3, csw) != 3) {
		*counter = C_FROM_TASKSTATS;
		if (!CTP_API_HAS(st->api, source_get) ||
		    st->api->source_get(task, CTP_SOURCE_TASKSTATS, &data,
					&len) < 0 ||
		    !ctp_src_taskstats_get(data, len, CTP_SRC_TS_NVCSW,
					   &csw[0]) ||
		    !ctp_src_taskstats_get(data, len, CTP_SRC_TS_NIVCSW,
					   &csw[1]))
			return 0;
	}
	r1 = ctp_set_u64(set, st->fh[F_VOLUNTARY_CSW], csw[0]);
	r2 = ctp_set_u64(set, st->fh[F_NONVOLUNTARY_CSW], csw[1]);
	return r1 < 0 ? r1 : r2 < 0 ? r2 : 1;
}

/* The context switches from status. */
static void csw_from_status(struct procfs_state *st, struct ctp_setter *set,
			    const struct ctp_status *s)
{
	if (s->present & CTP_STATUS_VOLUNTARY_CSW)
		ctp_set_u64(set, st->fh[F_VOLUNTARY_CSW], s->voluntary_csw);
	if (s->present & CTP_STATUS_NONVOLUNTARY_CSW)
		ctp_set_u64(set, st->fh[F_NONVOLUNTARY_CSW],
			    s->nonvoluntary_csw);
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

/* The thread's affinity: the task source's mask (x, when `got` has all
 * four words), else sched_getaffinity, else status' list. */
static void set_affinity(struct procfs_state *st, const struct ctp_task *task,
			 struct ctp_setter *set, const struct thread_extra *x,
			 uint64_t got, struct ctp_status *ss, int *fetched,
			 int *bad)
{
	const uint64_t *words;
	size_t n;
	int r = -ENOTSUP;

	if (st->affinity == AFF_SYSCALL) {
		if ((got & X_CPUS) == X_CPUS) {
			/* As affinity_syscall() hands it on: up to the
			 * highest set CPU. */
			n = CTP_ARRAY_LEN(x->cpus);
			while (n && !x->cpus[n - 1])
				n--;
			ctp_set_cpuset(set, st->fh[F_CPU_AFFINITY], x->cpus, n);
			count(st, C_AFF_FROM_TASK);
			return;
		}
		r = affinity_syscall(st, task->tid, &words, &n);
		if (r == 0)
			ctp_set_cpuset(set, st->fh[F_CPU_AFFINITY], words, n);
		else
			count(st, C_AFF_FALLBACK);
	}
	if (r < 0 && status_get(st, task, ss, fetched, bad) == 0)
		affinity_from_status(st, set, ss, bad);
}

/* Whether the core set every field this plugin bound for the thread
 * (ctp_api.field_bind: the stat values and the context switches). */
static bool bound(const struct ctp_task *task)
{
	return CTP_HAS(task, struct ctp_task, bound) && task->bound;
}

/*
 * The stat values of `miss` from the task's declared stat (file `file`,
 * fetched when the core deferred it) into s: 0, or the read's error.
 */
static int stat_fill(struct procfs_state *st, const struct ctp_task *task,
		     uint32_t file, uint64_t miss, struct ctp_stat *s)
{
	struct ctp_stat f;
	const char *data;
	size_t len;
	int r = ctp_task_fetch(st->api, task, file, &data, &len);

	if (r < 0)
		return r;
	if (ctp_parse_stat(data, len, &f) < 0)
		count(st, C_STAT_ERR);
	miss &= f.present;
	s->present |= miss;
	for (; miss; miss &= miss - 1)
		s->w[__builtin_ctzll(miss)] = f.w[__builtin_ctzll(miss)];
	return 0;
}

/*
 * The thread's stat values: those the task source offers, the rest from
 * stat, which is read only when the source lacks one. Returns 1 when any
 * was set, else the read's error (0 when nothing is recorded).
 */
static int thread_stat(struct procfs_state *st, const struct ctp_task *task,
		       struct ctp_setter *set, const struct thread_extra *x,
		       uint64_t got)
{
	struct ctp_stat s;
	uint64_t miss;
	int r;

	if (!st->thread_need)
		return 0;
	/* The core set the bound values: only the policy's name is ours. */
	if (bound(task) && (st->fh[F_POLICY] < 0 || (got & X_POLICY))) {
		if (st->fh[F_POLICY] >= 0)
			set_policy(st, set, st->fh[F_POLICY], x->policy);
		count(st, C_STAT_FROM_TASK);
		return 1;
	}
	s.present = ctp_src_task_take(st->api, task, stat_take,
				      CTP_ARRAY_LEN(stat_take), st->thread_need,
				      &s);
	miss = st->thread_need & ~s.present;
	count(st, miss ? C_STAT_FROM_FILE : C_STAT_FROM_TASK);
	if (miss) {
		/* Up front on a /proc walk (the core names the thread from
		 * it), fetched here when the core deferred it. */
		r = stat_fill(st, task, TF_STAT, miss, &s);
		if (r < 0 && !s.present)
			return r;
	}
	set_stat(st, set, &s, CTP_SCOPE_THREAD);
	return s.present ? 1 : 0;
}

/*
 * The task source's values the core copies itself (ctp_api.field_bind):
 * the stat values of the thread plan and the context switches, a thread
 * getting them all from the source or none (the core then leaves them
 * empty and procfs_thread takes each as before). The policy's name and the
 * affinity stay here, so the callback is still called.
 */
static int bind_values(struct procfs_state *st, struct ctp_ctx *ctx,
		       const struct ctp_api *api)
{
	int64_t b;
	int r = 0;

	if (!CTP_API_HAS(api, field_bind))
		return 0;
	b = ctp_src_task_bind(api, ctx, &st->thread_plan, stat_take,
			      CTP_ARRAY_LEN(stat_take));
	if (b < 0)
		return (int)b;
	if (st->fh[F_VOLUNTARY_CSW] >= 0)
		r = api->field_bind(ctx, st->fh[F_VOLUNTARY_CSW],
				    CTP_SOURCE_TASK, CTP_SRC_TASK_NVCSW);
	if (r == 0 && st->fh[F_NONVOLUNTARY_CSW] >= 0)
		r = api->field_bind(ctx, st->fh[F_NONVOLUNTARY_CSW],
				    CTP_SOURCE_TASK, CTP_SRC_TASK_NIVCSW);
	return r;
}

static int procfs_thread(void *state, const struct ctp_task *task,
			 struct ctp_record *rec)
{
	struct procfs_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	struct ctp_status ss;
	struct thread_extra x;
	uint64_t xgot;
	int rerr = 0, got = 0, status_bad = 0, fetched = 0, c, r;

	/* One read of the source for the policy and the mask, which the
	 * core does not copy (a string, a set). */
	xgot = ctp_src_task_take(st->api, task, extra_take,
				 CTP_ARRAY_LEN(extra_take), st->extra_want, &x);
	/* A missing file is not the end: the engine decides whether the
	 * task vanished; what the other sources hold is still recorded. */
	r = thread_stat(st, task, &set, &x, xgot);
	if (r == -EPROTO)
		return r;
	if (r > 0)
		got = 1;
	else
		rerr = r;

	/* No source is asked, no file read, for fields nobody records. */
	c = C_FROM_TASK;
	r = st->fh[F_VOLUNTARY_CSW] < 0 && st->fh[F_NONVOLUNTARY_CSW] < 0
		    ? -ENOENT
	    : bound(task) ? 1 /* the core set them */
			  : csw_from_source(st, task, &set, &c);
	if (r > 0) {
		count(st, c);
		got = 1;
	} else if (r == 0) {
		count(st, C_FROM_FILES);
		r = status_get(st, task, &ss, &fetched, &status_bad);
		if (r == 0) {
			csw_from_status(st, &set, &ss);
			got = 1;
		} else if (!rerr) {
			rerr = r;
		}
	}

	/* sched_getaffinity is a system call: none for a field nobody
	 * records. */
	if (st->fh[F_CPU_AFFINITY] >= 0)
		set_affinity(st, task, &set, &x, xgot, &ss, &fetched,
			     &status_bad);
	if (status_bad)
		count(st, C_STATUS_ERR);

	if (set.err < 0)
		return set.err;
	/* No source could be read: nothing recorded, say why. */
	return got ? 0 : rerr;
}

/* The process's values: those the source "process" offers, the rest from
 * <tgid>/stat, read only when the source lacks one. */
static int procfs_process(void *state, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct procfs_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	struct ctp_stat s;
	uint64_t miss;
	int r;

	if (!st->process_need)
		return 0;
	s.present = ctp_src_values_take(
		st->api, task, CTP_SOURCE_PROCESS, 1, process_take,
		CTP_ARRAY_LEN(process_take), st->process_need, &s);
	miss = st->process_need & ~s.present;
	count(st, miss ? C_PROC_FROM_FILE : C_PROC_FROM_SOURCE);
	if (miss) {
		r = stat_fill(st, task, PF_STAT, miss, &s);
		if (r < 0 && !s.present)
			return ctp_err_vanished(r) ? -ENOENT : r;
	}
	set_stat(st, &set, &s, CTP_SCOPE_PROCESS);
	return set.err;
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
	st->str_handles = CTP_API_HAS(api, str_intern) &&
			  CTP_API_HAS(api, set_str_handle);
	for (size_t i = 0; i < CTP_ARRAY_LEN(st->policy_h); i++)
		atomic_init(&st->policy_h[i], -1);
	ctp_workers_init(&st->bufs, sizeof(struct aff_buf));
	/* The lazy status needs file_get. */
	r = CTP_ATTACH_TABLE(ctx, api, CTP_API_THROUGH(file_get), ctp_stat_src,
			     st->fh, st->counter);
	if (r == 0)
		r = ctp_fields_plan(&st->thread_plan, fields, ctp_stat_src,
				    st->fh, N_FIELDS, CTP_SCOPE_THREAD);
	if (r == 0)
		r = ctp_fields_plan(&st->process_plan, fields, ctp_stat_src,
				    st->fh, N_FIELDS, CTP_SCOPE_PROCESS);
	if (r == 0)
		r = parse_options(ctx, api, &mode);
	if (r < 0) {
		procfs_fini(st);
		return r;
	}
	st->affinity = mode;
	for (size_t i = 0; i < st->thread_plan.n; i++)
		st->thread_need |= 1ull << st->thread_plan.step[i].bit;
	if (st->fh[F_POLICY] >= 0)
		st->thread_need |= 1ull << CTP_STAT_POLICY;
	for (size_t i = 0; i < st->process_plan.n; i++)
		st->process_need |= 1ull << st->process_plan.step[i].bit;
	r = bind_values(st, ctx, api);
	if (r < 0) {
		procfs_fini(st);
		return r;
	}
	affinity_probe(st);
	if (st->fh[F_POLICY] >= 0)
		st->extra_want |= X_POLICY;
	if (st->fh[F_CPU_AFFINITY] >= 0 && st->affinity == AFF_SYSCALL)
		st->extra_want |= X_CPUS;
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
