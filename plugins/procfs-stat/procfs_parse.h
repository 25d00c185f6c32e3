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

#include "ctprof/plugin-util.h"

/*
 * proc(5) numbers of stat fields the code names (the list below keeps
 * others too). Field N is kept in ctp_stat.w[N], its presence bit is
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

/* ---- procfs-stat's fields -------------------------------------------------
 *
 * One line a field, in the order they are registered: X(id, source,
 * description) (<ctprof/plugin-util.h> "Field tables"). A source
 * CTP_STAT_SRC(n, t) is stat field (n) kept as t (u: uint64_t, i: int64_t,
 * c: one char) in ctp_stat.w[n]: ctp_parse_stat keeps exactly the fields
 * listed here, and the plugin sets them as they are. CTP_STAT_CODE(n, t):
 * kept the same, set by the plugin's code (a conversion); CTP_STAT_NONE:
 * a field the plugin finds in code. Adding a stat field is its line here,
 * nothing else: the parser's kinds and struct ctp_stat's size come from
 * the list (below).
 */
/* The text shared by the help of the process-scope fields. */
#define CTP_STAT_WHOLE                                                         \
	" of the whole process since it started: its live threads and "        \
	"those that exited, not its children; <tgid>/stat field "
#define CTP_STAT_WAITED                                                        \
	" of the process's children that exited and were waited for "          \
	"(wait4, waitpid...), each with the descendants it waited "            \
	"for; not running children, nor those reaped unwaited "                \
	"(SIGCHLD ignored); <tgid>/stat field "
#define CTP_STAT_SRC(n, t)	      CTP_SRC_POS(n, struct ctp_stat, w[n].t)
#define CTP_STAT_CODE(n, t)	      CTP_SRC_POS_CODE(n, struct ctp_stat, w[n].t)
#define CTP_STAT_NONE		      CTP_SRC_NONE
#define CTP_STAT_PROCESS(nm, un, hlp) CTP_FIELD_COUNTER(nm, PROCESS, un, hlp)
/* A child's whole life is added when it is reaped: no rate over an
 * interval (CTP_FIELD_REAPED). */
#define CTP_STAT_CHILD(nm, un, hlp)                                            \
	CTP_FIELD_ROLE(nm, PROCESS, U64, un, COUNTER, SUM, CTP_FIELD_REAPED,   \
		       hlp)

#define CTP_STAT_FIELDS(X)                                                     \
	X(F_MINFLT, CTP_STAT_SRC(10, u),                                       \
	  CTP_FIELD_COUNTER("procfs.minflt", THREAD, COUNT,                    \
			    "Minor page faults (no disk I/O), stat field 10")) \
	X(F_MAJFLT, CTP_STAT_SRC(12, u),                                       \
	  CTP_FIELD_COUNTER("procfs.majflt", THREAD, COUNT,                    \
			    "Major page faults (needed disk I/O), stat field " \
			    "12"))                                             \
	X(F_UTIME, CTP_STAT_SRC(14, u),                                        \
	  CTP_FIELD_COUNTER("procfs.utime", THREAD, TICKS,                     \
			    "User-mode CPU time since thread start, stat "     \
			    "field 14"))                                       \
	X(F_STIME, CTP_STAT_SRC(15, u),                                        \
	  CTP_FIELD_COUNTER("procfs.stime", THREAD, TICKS,                     \
			    "Kernel-mode CPU time since thread start, stat "   \
			    "field 15"))                                       \
	X(F_PRIORITY, CTP_STAT_SRC(18, i),                                     \
	  CTP_FIELD("procfs.priority", THREAD, I64, NONE, ORDINAL, RANGE,      \
		    "Kernel scheduling priority (task_prio: 0..39 fair, "      \
		    "negative real-time), stat field 18"))                     \
	X(F_NICE, CTP_STAT_SRC(19, i),                                         \
	  CTP_FIELD("procfs.nice", THREAD, I64, NONE, ORDINAL, RANGE,          \
		    "Nice value, -20..19, stat field 19"))                     \
	X(F_START_TIME, CTP_STAT_SRC(22, u),                                   \
	  CTP_FIELD_ROLE("procfs.start_time", THREAD, U64, TICKS, ORDINAL,     \
			 RANGE, CTP_FIELD_START_TIME,                          \
			 "Thread start time since boot, stat field 22"))       \
	X(F_PROCESSOR, CTP_STAT_SRC(39, i),                                    \
	  CTP_FIELD("procfs.processor", THREAD, I64, NONE, ORDINAL, RANGE,     \
		    "CPU the thread last ran on, stat field 39"))              \
	X(F_RT_PRIORITY, CTP_STAT_SRC(40, u),                                  \
	  CTP_FIELD("procfs.rt_priority", THREAD, U64, NONE, ORDINAL, RANGE,   \
		    "Real-time priority, 0 unless FIFO/RR, stat field 40"))    \
	X(F_POLICY, CTP_STAT_CODE(41, u),                                      \
	  CTP_FIELD_LABEL("procfs.policy", THREAD,                             \
			  "Scheduling policy name (SCHED_OTHER, ...), stat "   \
			  "field 41"))                                         \
	X(F_STATE, CTP_STAT_SRC(3, c),                                         \
	  CTP_FIELD("procfs.state", THREAD, CHAR, NONE, CATEGORICAL, MODE,     \
		    "Run state letter (R, S, D, T, t, X, Z, P, I), stat "      \
		    "field 3 (status State's letter)"))                        \
	X(F_VOLUNTARY_CSW, CTP_STAT_NONE,                                      \
	  CTP_FIELD_COUNTER("procfs.voluntary_csw", THREAD, COUNT,             \
			    "Voluntary context switches (gave up the CPU), "   \
			    "status voluntary_ctxt_switches"))                 \
	X(F_NONVOLUNTARY_CSW, CTP_STAT_NONE,                                   \
	  CTP_FIELD_COUNTER("procfs.nonvoluntary_csw", THREAD, COUNT,          \
			    "Involuntary context switches (preempted), "       \
			    "status nonvoluntary_ctxt_switches"))              \
	X(F_CPU_AFFINITY, CTP_STAT_NONE,                                       \
	  CTP_FIELD("procfs.cpu_affinity", THREAD, CPUSET, NONE, CPUSET,       \
		    UNION,                                                     \
		    "CPUs the thread may run on (sched_getaffinity or "        \
		    "Cpus_allowed_list)"))                                     \
	X(F_NR_THREADS, CTP_STAT_SRC(20, u),                                   \
	  CTP_FIELD_GAUGE("procfs.nr_threads", PROCESS, COUNT, MAX,            \
			  "Threads in the process, stat field 20"))            \
	X(F_PROC_MINFLT, CTP_STAT_SRC(10, u),                                  \
	  CTP_STAT_PROCESS("procfs.process.minflt", COUNT,                     \
			   "Minor page faults" CTP_STAT_WHOLE "10"))           \
	X(F_PROC_MAJFLT, CTP_STAT_SRC(12, u),                                  \
	  CTP_STAT_PROCESS("procfs.process.majflt", COUNT,                     \
			   "Major page faults" CTP_STAT_WHOLE "12"))           \
	X(F_PROC_UTIME, CTP_STAT_SRC(14, u),                                   \
	  CTP_STAT_PROCESS("procfs.process.utime", TICKS,                      \
			   "User-mode CPU time" CTP_STAT_WHOLE "14"))          \
	X(F_PROC_STIME, CTP_STAT_SRC(15, u),                                   \
	  CTP_STAT_PROCESS("procfs.process.stime", TICKS,                      \
			   "Kernel-mode CPU time" CTP_STAT_WHOLE "15"))        \
	X(F_CHILD_MINFLT, CTP_STAT_SRC(11, u),                                 \
	  CTP_STAT_CHILD("procfs.children.minflt", COUNT,                      \
			 "Minor page faults" CTP_STAT_WAITED "11 (cminflt)"))  \
	X(F_CHILD_MAJFLT, CTP_STAT_SRC(13, u),                                 \
	  CTP_STAT_CHILD("procfs.children.majflt", COUNT,                      \
			 "Major page faults" CTP_STAT_WAITED "13 (cmajflt)"))  \
	X(F_CHILD_UTIME, CTP_STAT_SRC(16, u),                                  \
	  CTP_STAT_CHILD("procfs.children.utime", TICKS,                       \
			 "User-mode CPU time" CTP_STAT_WAITED "16 (cutime)"))  \
	X(F_CHILD_STIME, CTP_STAT_SRC(17, u),                                  \
	  CTP_STAT_CHILD("procfs.children.stime", TICKS,                       \
			 "Kernel-mode CPU time" CTP_STAT_WAITED                \
			 "17 (cstime)"))

/*
 * The list's words at compile time. A row's source is taken apart by
 * pasting a prefix onto its macro's name (an argument next to ## is not
 * expanded first): CTP_STAT_WORD_##src of CTP_STAT_SRC(14, u) is
 * CTP_STAT_WORD_CTP_STAT_SRC(14, u), "14, CTP_STAT_T_u"; of CTP_STAT_NONE,
 * "0, 0". A row with any other source does not compile.
 */
#define CTP_STAT_WORD_CTP_STAT_SRC(n, t)  n, CTP_STAT_T_##t
#define CTP_STAT_WORD_CTP_STAT_CODE(n, t) n, CTP_STAT_T_##t
#define CTP_STAT_WORD_CTP_STAT_NONE	  0, 0
#define CTP_STAT_T_u			  1
#define CTP_STAT_T_i			  2
#define CTP_STAT_T_c			  3
/* "| bit n" when the row's type is `want` (an expression). */
#define CTP_STAT_BIT(want, ...)	  CTP_STAT_BIT_(want, __VA_ARGS__)
#define CTP_STAT_BIT_(want, n, t) | ((uint64_t)((t) == (want)) << (n))
#define CTP_STAT_KIND_U(id, src, desc)                                         \
	CTP_STAT_BIT(CTP_STAT_T_u, CTP_STAT_WORD_##src)
#define CTP_STAT_KIND_I(id, src, desc)                                         \
	CTP_STAT_BIT(CTP_STAT_T_i, CTP_STAT_WORD_##src)
#define CTP_STAT_KIND_C(id, src, desc)                                         \
	CTP_STAT_BIT(CTP_STAT_T_c, CTP_STAT_WORD_##src)
/* For checks at compile time: every kept position; those kept as two
 * types. */
#define CTP_STAT_KINDS_U (0 CTP_STAT_FIELDS(CTP_STAT_KIND_U))
#define CTP_STAT_KINDS_I (0 CTP_STAT_FIELDS(CTP_STAT_KIND_I))
#define CTP_STAT_KINDS_C (0 CTP_STAT_FIELDS(CTP_STAT_KIND_C))
#define CTP_STAT_KINDS_ALL                                                     \
	(CTP_STAT_KINDS_U | CTP_STAT_KINDS_I | CTP_STAT_KINDS_C)
#define CTP_STAT_KINDS_OVERLAP                                                 \
	((CTP_STAT_KINDS_U & CTP_STAT_KINDS_I) |                               \
	 (CTP_STAT_KINDS_U & CTP_STAT_KINDS_C) |                               \
	 (CTP_STAT_KINDS_I & CTP_STAT_KINDS_C))
/* The kinds of word ctp_parse_stat keeps (ctp_fields_scan_line). */
#define CTP_STAT_KINDS                                                         \
	{                                                                      \
		.u = CTP_STAT_KINDS_U, .i = CTP_STAT_KINDS_I,                  \
		.c = CTP_STAT_KINDS_C                                          \
	}
/* A member of n + 1 bytes a row: the union's size is the highest kept
 * position + 1, the words struct ctp_stat holds. */
#define CTP_STAT_SIZE(id, ...)		 CTP_STAT_SIZE_(id, __VA_ARGS__)
#define CTP_STAT_SIZE_(id, n, t)	 char id[(n) + 1];
#define CTP_STAT_SIZE_ROW(id, src, desc) CTP_STAT_SIZE(id, CTP_STAT_WORD_##src)
union ctp_stat_sizer {
	CTP_STAT_FIELDS(CTP_STAT_SIZE_ROW)
};
#define CTP_STAT_WORDS sizeof(union ctp_stat_sizer)

struct ctp_stat {
	uint64_t present; /* bit N: proc(5) field N parsed */
	int64_t pid;
	const char *comm; /* points into the parsed buffer, not terminated */
	size_t comm_len;
	/* w[N]: stat field (N) as the list keeps it, from (3) on (state: .c).
	 * In <tgid>/stat the whole process's (do_task_stat, whole = 1):
	 * minflt, majflt, utime, stime of its threads, those that exited
	 * included. cminflt, cmajflt, cutime, cstime are the waited-for
	 * children's, kept per process (signal_struct): the same in every
	 * thread's stat. proc(5) says %ld for cutime and cstime and the kernel
	 * prints them signed, but they come from unsigned tick counts: a sign
	 * is garbage, so they are u. Times are USER_HZ ticks; policy is a
	 * SCHED_* number. */
	union ctp_word w[CTP_STAT_WORDS];
};

static inline int ctp_stat_has(const struct ctp_stat *st, unsigned field)
{
	return field < 64 && (st->present >> field) & 1;
}

/* The sources of CTP_STAT_FIELDS, in its order. */
#define CTP_STAT_N_FIELDS (0 CTP_STAT_FIELDS(CTP_FT_COUNT))
extern const struct ctp_field_src ctp_stat_src[CTP_STAT_N_FIELDS];

/*
 * Parse one stat line ("pid (comm) state ..."; fs/proc/array.c do_task_stat).
 * comm runs from the first '(' to the last ')' of the buffer, so it may hold
 * spaces and parentheses. Past it, the fields ctp_stat_src lists are kept
 * (ctp_fields_scan_line). Every field that parses cleanly is stored and
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
