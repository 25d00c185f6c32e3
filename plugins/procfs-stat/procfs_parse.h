/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers for /proc/<pid>/task/<tid>/{stat,status}, /proc/<tgid>/stat
 * (the same line, with process-wide values) and the kernel's cpu list
 * format. No I/O, no allocation, no logging; tested on literal
 * kernel text (tests/test_procfs_parse.c).
 *
 * Truncation: the kernel ends both files with '\n'. A value that runs into
 * the end of the buffer without one may have been cut by a short read, so
 * it is treated as absent (and the parse reports -EMSGSIZE).
 */
#ifndef CTP_PROCFS_PARSE_H
#define CTP_PROCFS_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * proc(5) field numbers of the stat fields kept. Presence bit of field N is
 * (1ull << N) in ctp_stat.present; test it with ctp_stat_has().
 */
enum {
	CTP_STAT_PID = 1,
	CTP_STAT_COMM = 2,
	CTP_STAT_STATE = 3,
	CTP_STAT_MINFLT = 10,
	CTP_STAT_CMINFLT = 11,
	CTP_STAT_MAJFLT = 12,
	CTP_STAT_CMAJFLT = 13,
	CTP_STAT_UTIME = 14,
	CTP_STAT_STIME = 15,
	CTP_STAT_CUTIME = 16,
	CTP_STAT_CSTIME = 17,
	CTP_STAT_PRIORITY = 18,
	CTP_STAT_NICE = 19,
	CTP_STAT_NUM_THREADS = 20,
	CTP_STAT_STARTTIME = 22,
	CTP_STAT_PROCESSOR = 39,
	CTP_STAT_RT_PRIORITY = 40,
	CTP_STAT_POLICY = 41,
};

struct ctp_stat {
	uint64_t present; /* bit N: proc(5) field N parsed */
	int64_t pid;
	const char *comm; /* points into the parsed buffer, not terminated */
	size_t comm_len;
	char state;
	/* The thread's own; in <tgid>/stat the whole process's, threads that
	 * have exited included (do_task_stat with whole = 1). */
	uint64_t minflt, majflt;
	uint64_t utime, stime; /* USER_HZ ticks */
	/* Waited-for children, as the kernel keeps them per process
	 * (signal_struct); the same in every thread's stat of a process. */
	uint64_t cminflt, cmajflt;
	uint64_t cutime, cstime; /* USER_HZ ticks */
	int64_t priority, nice;
	uint64_t num_threads;
	uint64_t starttime; /* USER_HZ ticks since boot */
	int64_t processor;
	uint64_t rt_priority;
	uint64_t policy; /* SCHED_* number */
};

static inline int ctp_stat_has(const struct ctp_stat *st, unsigned field)
{
	return field < 64 && (st->present >> field) & 1;
}

/*
 * Parse one stat line ("pid (comm) state ..."; fs/proc/array.c do_task_stat).
 * comm runs from the first '(' to the last ')' of the buffer, so it may hold
 * spaces and parentheses. Every field that parses cleanly is stored and
 * marked present, whatever happens to the others. Returns 0 when the line
 * is complete and every kept field parsed (a complete line with fewer
 * fields, as from an older kernel, is fine); otherwise the first problem:
 * -EINVAL (no "(comm)", or garbage in a kept field), -ERANGE (a kept field
 * overflows its type), -EMSGSIZE (the buffer ends without '\n').
 */
int ctp_parse_stat(const char *buf, size_t len, struct ctp_stat *out);

enum {
	CTP_STATUS_STATE = 1u << 0,
	CTP_STATUS_VOLUNTARY_CSW = 1u << 1,
	CTP_STATUS_NONVOLUNTARY_CSW = 1u << 2,
	CTP_STATUS_CPUS_ALLOWED_LIST = 1u << 3,
};

struct ctp_status {
	uint32_t present; /* CTP_STATUS_* */
	char state;	  /* "State:" letter */
	uint64_t voluntary_csw, nonvoluntary_csw;
	/* "Cpus_allowed_list:" value, pointing into the buffer. */
	const char *cpus_allowed_list;
	size_t cpus_allowed_list_len;
};

/*
 * Parse the keys above out of a status file. Returns 0 when all are present
 * and valid; otherwise the first problem: -ENODATA (a key is missing),
 * -EINVAL (garbage), -ERANGE (overflow), -EMSGSIZE (a value is cut off by
 * the end of the buffer). What did parse is marked present either way.
 */
int ctp_parse_status(const char *buf, size_t len, struct ctp_status *out);

/*
 * Parse a cpu list as the kernel prints it ("%*pbl": "0-3,8,10-11") into a
 * bitmap, bit i of words[i / 64] for CPU i. The whole of [s, s + len) must
 * be the list (an empty one is the empty set). On success clears and fills
 * words[0..nwords), sets *n_used to the number of words up to the highest
 * set bit (0 for the empty set) and returns the number of CPUs in the set.
 * Returns -EINVAL on garbage or a reversed range, -ERANGE when a CPU does
 * not fit in nwords words; words is then unspecified and *n_used untouched.
 */
int ctp_parse_cpulist(const char *s, size_t len, uint64_t *words, size_t nwords,
		      size_t *n_used);

/*
 * Name of a SCHED_* policy number ("SCHED_OTHER", ...), or NULL when the
 * number is not one the kernel defines (the caller prints "unknown(N)").
 */
const char *ctp_sched_policy_name(uint64_t policy);

#endif
