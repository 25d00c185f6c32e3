/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers for /proc/<tgid>/task/<tid>/schedstat and .../sched. No I/O,
 * no allocation, no logging; tested on literal kernel text
 * (tests/test_schedstat_parse.c).
 *
 * Both parsers store every value that parses cleanly and mark it present,
 * whatever happens to the others; a value that is garbage, overflows or is
 * cut off by the end of the buffer stays absent. The return value reports
 * the first problem met, so a caller can count damaged files.
 */
#ifndef CTP_SCHEDSTAT_PARSE_H
#define CTP_SCHEDSTAT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- schedstat ---------------------------------------------------------- */

enum {
	CTP_SCHEDSTAT_RUN = 1u << 0,	    /* (1) run_time_ns */
	CTP_SCHEDSTAT_WAIT = 1u << 1,	    /* (2) wait_time_ns */
	CTP_SCHEDSTAT_TIMESLICES = 1u << 2, /* (3) timeslices */
};

struct ctp_schedstat {
	uint32_t present; /* CTP_SCHEDSTAT_* */
	uint64_t run_ns;  /* se.sum_exec_runtime: time on a CPU */
	uint64_t wait_ns; /* sched_info.run_delay: time runnable, not running */
	uint64_t timeslices; /* sched_info.pcount: times put on a CPU */
};

/*
 * Parse "run wait timeslices\n" (fs/proc/base.c proc_pid_schedstat). Values
 * are separated by one space; anything after a space past the third value
 * (a future kernel's extra field) is ignored. Returns 0 when all three
 * parsed, else the first problem: -EINVAL (garbage), -ERANGE (a value over
 * 2^64-1; the others still parse), -EMSGSIZE (the buffer ends before a
 * value's terminator: that value may be cut and is absent).
 */
int ctp_parse_schedstat(const char *buf, size_t len, struct ctp_schedstat *out);

/* ---- sched -------------------------------------------------------------- */

/*
 * The keys kept from a sched file, named as kernel/sched/debug.c
 * proc_sched_show_task() prints them without their prefix. Key k parsed
 * sets bit k of ctp_sched.present (test with ctp_sched_has()). The numbers
 * are internal to ctprof-core and may change.
 */
enum ctp_sched_key {
	CTP_SCHED_NR_WAKEUPS,
	CTP_SCHED_NR_WAKEUPS_LOCAL,
	CTP_SCHED_NR_WAKEUPS_REMOTE,
	CTP_SCHED_NR_WAKEUPS_SYNC,
	CTP_SCHED_NR_WAKEUPS_MIGRATE,
	CTP_SCHED_NR_WAKEUPS_AFFINE,
	CTP_SCHED_NR_WAKEUPS_AFFINE_ATTEMPTS,
	CTP_SCHED_NR_MIGRATIONS, /* se.nr_migrations: not schedstats-gated */
	CTP_SCHED_NR_FORCED_MIGRATIONS,
	CTP_SCHED_NR_FAILED_MIGRATIONS_AFFINE,
	CTP_SCHED_NR_FAILED_MIGRATIONS_RUNNING,
	CTP_SCHED_NR_FAILED_MIGRATIONS_HOT,
	CTP_SCHED_WAIT_SUM,
	CTP_SCHED_WAIT_COUNT,
	CTP_SCHED_WAIT_MAX,
	CTP_SCHED_SLEEP_MAX,
	CTP_SCHED_SUM_SLEEP_RUNTIME,
	CTP_SCHED_SUM_BLOCK_RUNTIME,
	CTP_SCHED_BLOCK_MAX,
	CTP_SCHED_IOWAIT_SUM,
	CTP_SCHED_IOWAIT_COUNT,
	CTP_SCHED_EXEC_MAX,
	CTP_SCHED_SLICE_MAX,
	CTP_SCHED_CORE_FORCEIDLE_SUM,
	CTP_SCHED_SLICE,       /* se.slice: fair-class tasks only */
	CTP_SCHED_EXT_ENABLED, /* ext.enabled: 0 or 1 */
	CTP_SCHED_N_KEYS
};

/* How a key's value is printed. */
enum ctp_sched_fmt {
	CTP_SCHED_FMT_INT = 1,	/* P / P_SCHEDSTAT: "%21Ld" */
	CTP_SCHED_FMT_NS = 2,	/* PN / PN_SCHEDSTAT: "%14Ld.%06ld", ms.ns */
	CTP_SCHED_FMT_BOOL = 3, /* "%21Ld" of 0 or 1 */
};

struct ctp_sched {
	uint64_t present; /* bit k: key k parsed */
	/* By enum ctp_sched_key. FMT_NS keys are in nanoseconds. */
	uint64_t v[CTP_SCHED_N_KEYS];
	/* Kept FMT_NS values printed with a leading '-' (clock skew, e.g.
	 * after suspend): left absent and counted here, not as errors. */
	uint32_t negative;
	/* Header "comm (pid, #threads: n)"; comm points into the buffer and
	 * may hold spaces, parentheses and even newlines. */
	bool header;
	const char *comm;
	size_t comm_len;
	uint64_t pid, nr_threads;
};

static inline bool ctp_sched_has(const struct ctp_sched *s,
				 enum ctp_sched_key k)
{
	return (s->present >> k) & 1;
}

/*
 * Parse a sched file. The header runs up to the first line of at least 16
 * '-' (the kernel prints 67; a 15-byte comm cannot forge one), so nothing in
 * a thread's name is ever read as a key. Below it, each "key : value" line
 * is matched on its key with one "se.statistics.", "stats." or "se." prefix
 * removed (4.x-5.15 print se.statistics.wait_sum, later kernels wait_sum);
 * unknown keys and lines without ':' are ignored.
 *
 * FMT_NS values "ms.frac" become exact nanoseconds: the fraction is read
 * as its first six digits, padded with zeros when shorter. A leading '-'
 * leaves the value absent and bumps `negative`.
 *
 * Returns 0 when the file is well formed, else the first problem: -EINVAL
 * (no header, a malformed header, a garbage value of a kept key, a kept
 * key seen twice: the first one counts), -ERANGE (a kept value over
 * 2^64-1 ns or units), -EMSGSIZE (the buffer does not end with '\n': the
 * last line may be cut, and its value is absent). Keys parse either way.
 */
int ctp_parse_sched(const char *buf, size_t len, struct ctp_sched *out);

/* The printed format of a key (for tests and documentation). */
enum ctp_sched_fmt ctp_sched_key_fmt(enum ctp_sched_key k);
/* The key's name without prefix, e.g. "sum_block_runtime". */
const char *ctp_sched_key_name(enum ctp_sched_key k);

/*
 * Voluntary sleep: sum_sleep_runtime - sum_block_runtime (the kernel adds
 * blocked time to both). Returns 0 and *out; -ENODATA when either half is
 * absent; -ERANGE when block exceeds sleep (a torn read), *out untouched.
 */
int ctp_sched_voluntary_sleep(const struct ctp_sched *s, uint64_t *out);

#endif
