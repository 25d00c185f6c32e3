/* SPDX-License-Identifier: MIT */
/*
 * The interval between two snapshots, BASE and CAND (docs/COMPARE.md "The
 * interval and rates"): what every reader of a comparison needs of it,
 * computed once and typed. Each task's identity join (ident.h: tid and
 * start time), per counter each task's change with resets, the task's
 * own interval, a group's change and its rate and percent of one CPU,
 * and the change of the tasks that exited in between (exitsum.h). The
 * views (viewshow.c), the full comparison (compare.c) and the coverage
 * line (coverage.c) read their numbers here and compute none again.
 *
 * The model is of one pair (a recording's next pair is a new model),
 * and a task's results are addressed by its CAND row, which
 * ctp_interval_find() gives for a task's identity.
 * Private to the core.
 */
#ifndef CTP_CORE_INTERVAL_H
#define CTP_CORE_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exitsum.h"
#include "group.h"
#include "ident.h"
#include "reader.h"

struct ctp_interval;

/*
 * The interval from base to cand, with the tasks that exited in it (ex,
 * NULL: none known; borrowed, it must outlive the model). Both snapshots
 * must outlive it too. Returns 0 and *ret, or -ENOMEM.
 */
int ctp_interval_new(const struct ctp_snap *base, const struct ctp_snap *cand,
		     const struct ctp_exit_sum *ex, struct ctp_interval **ret);
void ctp_interval_free(struct ctp_interval *iv);

/* BASE (k 0) or CAND (k 1). */
const struct ctp_snap *ctp_interval_snap(const struct ctp_interval *iv, int k);
/* The task matching (ident.h); ok false without start times. */
const struct ctp_ident *ctp_interval_ident(const struct ctp_interval *iv);
/* The exited tasks, or NULL. */
const struct ctp_exit_sum *ctp_interval_exited(const struct ctp_interval *iv);
/* Seconds between the captures (ctp_ident_interval); 0 when CAND is not
 * after BASE (then no rates). */
double ctp_interval_seconds(const struct ctp_interval *iv);

/*
 * The CAND row of the task (tgid, tid, start in ns since boot;
 * CTP_IDENT_UNKNOWN: any) in its scope's table (thread or process: tid
 * 0), or -1: a task's results in the next interval of a recording.
 */
long ctp_interval_find(const struct ctp_interval *iv, uint8_t scope,
		       uint64_t tgid, uint64_t tid, uint64_t start_ns);

/* ---- Fields by kind and rule ---------------------------------------------*/

/* A counter the interval is read from: kind counter, rule sum, a number. */
bool ctp_interval_counter(const struct ctp_snap_field *f);
/* A counter of reaped children (role reaped, FORMAT.md §4): its change is
 * their whole lives, no time spent in the interval, so it has no rate. */
bool ctp_interval_reaped(const struct ctp_snap_field *f);

/* ---- A counter per task --------------------------------------------------*/

/* How a task's counter changed. */
enum ctp_interval_how {
	CTP_IV_NONE = 0, /* no CAND value: no change */
	CTP_IV_SAME,	 /* the task was in BASE: CAND - BASE */
	CTP_IV_NEW,	 /* the task is new: its CAND value (from zero) */
	CTP_IV_RESET,	 /* the counter went back: its CAND value */
	/* The task was in BASE without the value, or there is no task
	 * identity: the change is unknown (it adds nothing). */
	CTP_IV_UNKNOWN,
};

/* One counter's change per CAND row of its scope. */
struct ctp_interval_col {
	const struct ctp_snap_field *f[2]; /* BASE's (NULL: none), CAND's */
	size_t rows;
	const uint8_t *how;   /* enum ctp_interval_how per row */
	const long double *d; /* per row: the change (0: NONE, UNKNOWN) */
};

/*
 * The change of CAND's field f (thread, process or cgroup scope) per task,
 * computed on first use from the typed columns of both sides (BASE's
 * field of the same name) and kept with the model. Tasks match by
 * identity (cgroups by path); a field that is no number changes nowhere.
 * Returns 0 and *ret, -EINVAL for a host field or one of another
 * snapshot, -ENOMEM.
 */
int ctp_interval_col(struct ctp_interval *iv, const struct ctp_snap_field *f,
		     const struct ctp_interval_col **ret);

/* ---- A group's change ----------------------------------------------------*/

/*
 * A change summed over members: the change and the change per second,
 * each member's over its own interval (ctp_ident_task_interval). Sums of
 * several fields or of the exited tasks add (ctp_interval_sum_add).
 */
struct ctp_interval_sum {
	uint32_t n;	   /* members that added a change */
	bool reset;	   /* a member's counter went back */
	bool per_s_ok;	   /* every one of them had an interval */
	long double delta; /* the change */
	long double per_s; /* the members' changes per second, added */
};

/*
 * Field f's change over the members of CAND's group g of f's scope: a
 * member in BASE adds its difference, a new one its whole value, a reset
 * one its CAND value (and sets reset), one whose BASE value is unknown
 * nothing (its change is unknown: never its whole life). Never
 * aggregate(CAND) - aggregate(BASE), which goes negative when a group's
 * members are replaced. Returns 0 (out->n 0: no member had a change),
 * or what ctp_interval_col returns.
 */
int ctp_interval_group(struct ctp_interval *iv, const struct ctp_snap_field *f,
		       const struct ctp_group *g, struct ctp_interval_sum *out);

/*
 * Without task identity: a group's change as its CAND aggregate less
 * BASE's (base NULL: a group that counted from zero, its whole value).
 * False when CAND's or BASE's aggregate is no number. The sum has no
 * per-member rate (per_s_ok false: the captures' interval).
 */
bool ctp_interval_agg_change(const struct ctp_agg *base,
			     const struct ctp_agg *cand,
			     struct ctp_interval_sum *out);

/* acc += s. */
void ctp_interval_sum_add(struct ctp_interval_sum *acc,
			  const struct ctp_interval_sum *s);

/*
 * The rate of a change, per second: its members' own when every one had
 * an interval, else the change over the captures' interval. NAN when the
 * interval is unknown (CAND not after BASE).
 */
long double ctp_interval_rate(const struct ctp_interval *iv,
			      const struct ctp_interval_sum *s);
/* A rate in `unit` as percent of one CPU: a time unit's seconds per
 * second x 100; NAN for other units. */
long double ctp_interval_cpu_pct(long double rate, uint8_t unit);

/* ---- Exited tasks --------------------------------------------------------*/

/*
 * What a measure of the exited tasks reads: the exited fields xf[] (into
 * the exit sum's fields) and their scales to the measure's unit xk[], and
 * the live fields of the same measure in BASE (bf[], thread scope: what
 * BASE had of the same task is taken off) with their scales bk[] (NULL:
 * 1). scope: the measure's live scope (a process measure takes only the
 * tasks of processes neither snapshot had live: a live one's counters
 * already hold its dead threads).
 */
struct ctp_interval_exit_measure {
	const size_t *xf;
	const long double *xk;
	size_t nxf;
	const struct ctp_snap_field *const *bf;
	const long double *bk;
	size_t nbf;
	uint8_t scope;
};

/*
 * Exited task e's change of measure m (exit sum ex, BASE base): its value
 * at exit less what BASE had of the same task (ex->base_row; the BASE
 * fields it has), never below zero (the exit record and the live thread
 * are two sources, each rounded its own way); its whole value when BASE
 * had no such task. False when it has none of the exited fields.
 */
bool ctp_interval_exit_change(const struct ctp_snap *base,
			      const struct ctp_exit_sum *ex, size_t e,
			      const struct ctp_interval_exit_measure *m,
			      long double *out);

/*
 * Measure m over the exited tasks of CAND's group g (g->extras, indexes
 * into the model's exit sum): their changes added, each over the captures'
 * interval (they ran within it). out->n 0 when none had one.
 */
void ctp_interval_exit_group(const struct ctp_interval *iv,
			     const struct ctp_group *g,
			     const struct ctp_interval_exit_measure *m,
			     struct ctp_interval_sum *out);

#endif
