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

/* The presence bits of ctp_schedstat, and their masks. */
enum {
	CTP_SCHEDSTAT_RUN_BIT,	      /* (1) run_time_ns */
	CTP_SCHEDSTAT_WAIT_BIT,	      /* (2) wait_time_ns */
	CTP_SCHEDSTAT_TIMESLICES_BIT, /* (3) timeslices */
};
enum {
	CTP_SCHEDSTAT_RUN = 1u << CTP_SCHEDSTAT_RUN_BIT,
	CTP_SCHEDSTAT_WAIT = 1u << CTP_SCHEDSTAT_WAIT_BIT,
	CTP_SCHEDSTAT_TIMESLICES = 1u << CTP_SCHEDSTAT_TIMESLICES_BIT,
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
 * proc_sched_show_task() prints them without their prefix, with how the
 * value is printed: X(ID, key, format). Key CTP_SCHED_<ID> parsed sets
 * bit CTP_SCHED_<ID> of ctp_sched.present (test with ctp_sched_has()). The
 * numbers are internal to ctprof-core and may change; keys that start
 * with the same letter stay together (the parser narrows by it).
 */
#define CTP_SCHED_KEYS(X)                                                      \
	X(NR_WAKEUPS, "nr_wakeups", INT)                                       \
	X(NR_WAKEUPS_LOCAL, "nr_wakeups_local", INT)                           \
	X(NR_WAKEUPS_REMOTE, "nr_wakeups_remote", INT)                         \
	X(NR_WAKEUPS_SYNC, "nr_wakeups_sync", INT)                             \
	X(NR_WAKEUPS_MIGRATE, "nr_wakeups_migrate", INT)                       \
	X(NR_WAKEUPS_AFFINE, "nr_wakeups_affine", INT)                         \
	X(NR_WAKEUPS_AFFINE_ATTEMPTS, "nr_wakeups_affine_attempts", INT)       \
	/* se.nr_migrations: not schedstats-gated */                           \
	X(NR_MIGRATIONS, "nr_migrations", INT)                                 \
	X(NR_FORCED_MIGRATIONS, "nr_forced_migrations", INT)                   \
	X(NR_FAILED_MIGRATIONS_AFFINE, "nr_failed_migrations_affine", INT)     \
	X(NR_FAILED_MIGRATIONS_RUNNING, "nr_failed_migrations_running", INT)   \
	X(NR_FAILED_MIGRATIONS_HOT, "nr_failed_migrations_hot", INT)           \
	X(WAIT_SUM, "wait_sum", NS)                                            \
	X(WAIT_COUNT, "wait_count", INT)                                       \
	X(WAIT_MAX, "wait_max", NS)                                            \
	X(SLEEP_MAX, "sleep_max", NS)                                          \
	X(SUM_SLEEP_RUNTIME, "sum_sleep_runtime", NS)                          \
	X(SUM_BLOCK_RUNTIME, "sum_block_runtime", NS)                          \
	X(BLOCK_MAX, "block_max", NS)                                          \
	X(IOWAIT_SUM, "iowait_sum", NS)                                        \
	X(IOWAIT_COUNT, "iowait_count", INT)                                   \
	X(EXEC_MAX, "exec_max", NS)                                            \
	X(SLICE_MAX, "slice_max", NS)                                          \
	X(CORE_FORCEIDLE_SUM, "core_forceidle_sum", NS)                        \
	/* se.slice: fair-class tasks only */                                  \
	X(SLICE, "slice", INT)                                                 \
	/* ext.enabled: 0 or 1 */                                              \
	X(EXT_ENABLED, "ext.enabled", BOOL)

enum ctp_sched_key {
#define CTP_SCHED_ID(id, key, fmt) CTP_SCHED_##id,
	CTP_SCHED_KEYS(CTP_SCHED_ID)
#undef CTP_SCHED_ID
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
