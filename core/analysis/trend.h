/* SPDX-License-Identifier: MIT */
/*
 * Questions over a whole recording (docs/TREND.md): fed a recording's
 * snapshots in capture order, per task or group and per measure (a view's
 * number column) its first, last, minimum and maximum and when, and for a
 * counter its increase over the recording and its peak rate between two
 * captures and when. A task is kept from the first capture it is seen in
 * to the last, so one that ended during the recording is still a row
 * (ended after its last capture). Groups keyed by pid, tid or none (one
 * per thread) carry their task's identity (start time, ident.h): a reused
 * pid is another row.
 *
 * The state is per row only (its key, name and a few numbers a measure);
 * the model holds at most two snapshots (the previous one, for counters'
 * changes through the interval model, interval.h). Pure: no I/O; the
 * caller reads the snapshots and prints the table. Private to the core.
 */
#ifndef CTP_CORE_TREND_H
#define CTP_CORE_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "group.h"
#include "reader.h"
#include "table.h"
#include "view.h"

/* What a row is ranked by: a statistic of the sort measure. */
enum ctp_trend_stat {
	CTP_TREND_CHANGE = 0, /* gauge: last - first; counter: increase */
	CTP_TREND_FIRST,
	CTP_TREND_LAST,
	CTP_TREND_MIN,
	CTP_TREND_MAX,
	CTP_TREND_PEAK, /* counter: the peak rate (gauge: the max) */
};

struct ctp_trend_opts {
	/* The grouping (copied; the strings it points to must outlive the
	 * model). */
	const struct ctp_group_spec *spec;
	/* The view whose number columns are the measures (borrowed, must
	 * outlive the model); its ident pcomm/comm column names rows. */
	const struct ctp_view *view;
	/* The section whose columns (`in:`) are the measures. */
	size_t section;
};

struct ctp_trend;

/* Returns 0 and *ret, or -ENOMEM. */
int ctp_trend_new(const struct ctp_trend_opts *o, struct ctp_trend **ret);
/* The previous snapshot is freed with the model. NULL is fine. */
void ctp_trend_free(struct ctp_trend *t);

/*
 * The next snapshot of the recording, captured at t_ns (ns since the
 * epoch, realtime; later than the one before): taken, the model frees it
 * when the next one comes or with the model (also on failure). Returns 0,
 * -EINVAL with a message in err (a grouping this snapshot cannot make), or
 * -ENOMEM (the model as before but for this snapshot).
 */
int ctp_trend_feed(struct ctp_trend *t, struct ctp_snap *snap, int64_t t_ns,
		   char *err, size_t errlen);

/* Snapshots fed, and the capture times of the first and last. */
size_t ctp_trend_fed(const struct ctp_trend *t, int64_t *first, int64_t *last);
/* Rows (tasks or groups) seen so far. */
size_t ctp_trend_rows(const struct ctp_trend *t);

/* A capture time: local HH:MM:SS, or (machine) RFC 3339 with the
 * milliseconds and the offset. */
void ctp_trend_time(int64_t ns, bool machine, char *buf, size_t n);

/* What to print. */
struct ctp_trend_print {
	/* The measure ranked by: a view column's id or label, optionally
	 * ":STAT" (change, first, last, min, max, peak); NULL: the view's
	 * sort column (or the section's column of its label, else the first
	 * measure), its change. */
	const char *sort;
	bool asc;     /* ascending (shrink first) instead of descending */
	size_t top;   /* rows; 0: all */
	bool machine; /* CSV/JSON: times as RFC 3339, raw numbers */
};

/*
 * The rows sorted as p says, as a table (text cells rendered for a
 * terminal unless p->machine): the key parts and the row's name, then the
 * sort measure's statistics (a gauge: CHANGE, FIRST, @, LAST, @, MIN, @,
 * MAX, @; a counter: INCREASE, RATE, PEAK, @), STATUS (new, ended and
 * when), then the other measures' changes. Returns 0 and *ret, -EINVAL
 * with a message in err (a sort naming no measure, a bad STAT, no
 * measure with values), -ENOMEM.
 */
int ctp_trend_table(const struct ctp_trend *t, const struct ctp_trend_print *p,
		    struct ctp_table **ret, char *err, size_t errlen);

#endif
