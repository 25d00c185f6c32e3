/* SPDX-License-Identifier: MIT */
/*
 * Task identity across two snapshots (docs/COMPARE.md "Identity"): a tid
 * or tgid is reused by the kernel, so a thread is the same thread only when
 * (tgid, tid, start time) agree, and a process when (tgid, start time of
 * its leader, the thread whose tid is the tgid) agree. The start time is
 * the field whose role is start_time (ctp_snap_start_field), never a field
 * found by name. Cgroups have no start time: they match by path.
 * Used by `compare` for per-member deltas. Private to the core.
 */
#ifndef CTP_CORE_IDENT_H
#define CTP_CORE_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* A start time or age that is not known. */
#define CTP_IDENT_UNKNOWN UINT64_MAX

struct ctp_ident {
	/* Both snapshots have a thread start-time field: the matches below
	 * are by identity. False: no member matching at all (older
	 * snapshots), and `why` says which side lacks it. */
	bool ok;
	const char *why;
	/* Per side, per thread row: the start since boot in ns, or
	 * CTP_IDENT_UNKNOWN (absent value, or !ok). */
	uint64_t *tstart[2];
	/* CAND row -> BASE row of the same task, or -1 (a new task); per
	 * BASE row whether the task is still in CAND. For threads,
	 * processes and cgroups (by raw path). */
	long *tmatch, *pmatch, *cmatch;
	bool *talive, *palive, *calive;
	/* Each side's CLOCK_BOOTTIME at capture start, 0 when not recorded
	 * (then no ages). */
	uint64_t boot_ns[2];
	/* The interval between the captures (ctp_ident_interval) and its
	 * clock; per CAND thread and process row, the task's own interval,
	 * and the cgroups', s (ctp_ident_task_interval). */
	double interval_s;
	const char *clock;
	double *tiv, *piv, cgiv;
};

/* Match the tasks of BASE (snap[0]) and CAND (snap[1]). Returns 0 and
 * *ret, or -ENOMEM. */
int ctp_ident_new(const struct ctp_snap *const snap[2], struct ctp_ident **ret);
void ctp_ident_free(struct ctp_ident *id);

/* The interval between the captures of snap[0] (BASE) and snap[1]
 * (CAND), seconds: their starts on the boot clock when both recorded it
 * and CAND's is later (it does not jump with the wall clock), else on the
 * realtime clock; *clock says which. 0 when CAND is not after BASE. */
double ctp_ident_interval(const struct ctp_snap *const snap[2],
			  const char **clock);

/* The interval over which CAND's task `row` of `scope` changed, seconds:
 * a capture takes a while, so each process is read at its own moment
 * (`read_boottime_ns`, FORMAT.md) and a counter's change is over the time
 * between BASE's and CAND's reads of it. A thread takes its process's; a
 * process new in the interval (or one BASE did not match by identity)
 * counts from BASE's capture start. Cgroups take the time between the
 * two captures' reads of the cgroups (`cgroups_read_boottime_ns`, after
 * each walk), and tasks or cgroups of snapshots that recorded no read
 * times the interval between the captures. Every rate and percent of a
 * task or cgroup over the interval divides by this. */
double ctp_ident_task_interval(const struct ctp_ident *id, uint8_t scope,
			       size_t row);

/* When the thread of row r of s's threads table (scope THREAD), or the
 * process of row r of its processes table (PROCESS) started, ns since
 * boot: its start field (role "start_time"); a process without one of its
 * own takes its leader thread's. CTP_IDENT_UNKNOWN when unknown. */
uint64_t ctp_ident_task_start(const struct ctp_snap *s, uint8_t scope,
			      size_t r);

/* When the task of row r of snapshot s's exited table started, ns since
 * boot: its exit time less its field of role "elapsed" (FORMAT.md §4), a
 * little late by how late the plugin stamped the exit;
 * CTP_IDENT_UNKNOWN when either is absent (older snapshots). */
uint64_t ctp_ident_exited_start(const struct ctp_snap *s, size_t r);

/* Is the exited task that started at `start` (ctp_ident_exited_start) the
 * thread at `row` of BASE's threads table, which has its tgid and tid?
 * Not when it started before that thread, nor after BASE read that
 * thread's process (`read_boottime_ns`, else BASE's start): the thread was
 * alive then, so a task of its ids that started later is another (a
 * reused pid). An unknown start matches by the ids alone. */
bool ctp_ident_exited_same(const struct ctp_snap *base, size_t row,
			   uint64_t start);

#endif
