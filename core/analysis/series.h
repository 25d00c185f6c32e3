/* SPDX-License-Identifier: MIT */
/*
 * Metrics series that are right over time (docs/EXPORT.md "Counters over
 * time"): the state a stateful exporter (serve, record --textfile, a
 * recording's export) keeps from one snapshot to the next, so that each
 * exported group's counter is a running sum of its members' increases
 * since the series began, never the sum over the members alive at one
 * capture (which drops whenever a member exits, renames or leaves).
 *
 * Fed snapshots in capture order, it moves the interval model
 * (interval.h) along them with the tasks that exited in between
 * (exitsum.h): per group of the newest snapshot and per counter (kind
 * counter, rule sum) it adds its members' changes (by identity: a new
 * member its whole value, a reset one its new value) and its exited
 * tasks' (their exit records less what the earlier snapshot had of
 * them). Groups are the labels OpenMetrics writes (openmetrics.h): the
 * largest `top` by this interval's increase, and every group once
 * exported while it had an increase within `ttl_ns`; the increases of
 * the others go to group="other". Counters start at zero with the first
 * snapshot. Private to the core.
 */
#ifndef CTP_CORE_SERIES_H
#define CTP_CORE_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "group.h"
#include "reader.h"
#include "view.h"

#define CTP_SERIES_TTL_DEFAULT_NS (600 * 1000000000ull) /* 10 minutes */
#define CTP_SERIES_MAX_DEFAULT	  1000

struct ctp_series_opts {
	/* Copied; the names and globs it points to must outlive the
	 * series (none for pcomm, comm, cgroup). */
	const struct ctp_group_spec *spec;
	size_t top;	   /* 0: every group */
	uint64_t ttl_ns;   /* 0: CTP_SERIES_TTL_DEFAULT_NS */
	size_t max_series; /* 0: CTP_SERIES_MAX_DEFAULT */
	/* The fields ranking groups by their increase (a view's sort
	 * column; copied); none present: the first thread time counter. */
	const char *const *rank;
	size_t n_rank;
	/* The views whose columns pair live counters with the exited
	 * table's fields (`field:` or `sum:` with as many `exited:`, or one
	 * `exited:` for a `first:`); NULL: every view found
	 * (ctp_view_names). */
	const struct ctp_view *const *views;
	size_t n_views;
	uint64_t cap; /* memory budget of the exit sums (0: none) */
};

struct ctp_series;

/* Returns 0 and *ret, -ENOMEM, or a view's error. */
int ctp_series_new(const struct ctp_series_opts *o, struct ctp_series **ret);
void ctp_series_free(struct ctp_series *s);

/*
 * The next snapshot (taken: its MessagePack tree is freed at once,
 * ctp_snap_drop_tree, the rest at the end of the next feed; the snapshot
 * before and the interval model between the two go at the end of this
 * one, so between feeds the series holds one decoded snapshot). Returns
 * 0, or -ENOMEM / -EINVAL (a grouping the snapshot cannot make) with a
 * message in err and the series as it was before (snap freed).
 */
int ctp_series_feed(struct ctp_series *s, struct ctp_snap *snap, char *err,
		    size_t errlen);

/* The newest snapshot and its groups (NULL before the first feed). */
const struct ctp_snap *ctp_series_snap(const struct ctp_series *s);
struct ctp_groups *ctp_series_groups(const struct ctp_series *s);

/* ---- What openmetrics.c writes ------------------------------------------*/

/* Is CAND's group gi exported as its own series? */
bool ctp_series_exported(const struct ctp_series *s, size_t gi);
/* Exported group series (group="other" is one more, index n). */
size_t ctp_series_n(const struct ctp_series *s);
/* Series i's labels (`k="v",...`); i == n: group="other". */
const char *ctp_series_labels(const struct ctp_series *s, size_t i);
/* Does the series count CAND's field f (a thread or process counter)? */
bool ctp_series_counts(const struct ctp_series *s,
		       const struct ctp_snap_field *f);
/* Series i's running sum of CAND's field f in f's unit; false when no
 * member of it ever had the field. A series' first sample is 0 (its work
 * until then appears at the next snapshot: increase() counts it). */
bool ctp_series_value(const struct ctp_series *s, size_t i,
		      const struct ctp_snap_field *f, long double *out);
/* Series i's exited tasks (rows of the exited tables) so far. */
uint64_t ctp_series_exited(const struct ctp_series *s, size_t i);

struct ctp_series_stats {
	uint64_t feeds;
	size_t series;	 /* group series exported, group="other" included */
	size_t tracked;	 /* groups remembered (exported or not) */
	size_t expired;	 /* exported groups dropped by the TTL, so far */
	size_t capped;	 /* exported groups dropped by max_series, so far */
	uint64_t exited; /* exited tasks counted, so far */
	uint64_t lost;	 /* exits the plugins said they missed, so far */
	bool exits;	 /* some snapshot had an exited table */
};
void ctp_series_stats(const struct ctp_series *s, struct ctp_series_stats *st);

#endif
