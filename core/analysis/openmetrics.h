/* SPDX-License-Identifier: MIT */
/*
 * A snapshot as metrics (docs/EXPORT.md): the OpenMetrics 1.0 text
 * exposition, or the Prometheus text format 0.0.4 that node_exporter's
 * textfile collector and older scrapers read. One metric family per field
 * (`ctprof_` + the name with every other byte than [a-zA-Z0-9_] as `_`),
 * in base units (seconds, bytes, ratios), counters as counters, gauges and
 * peaks as gauges, categorical fields as one series per value counting
 * the group's rows that have it. Thread and process fields are one series
 * per group of a struct ctp_groups, the largest `top` groups by a ranking
 * and the rest summed (by each field's rule) into group="other"; cgroup
 * fields one series per cgroup, host fields one series. Absent values give
 * no sample. Private to the core.
 */
#ifndef CTP_CORE_OPENMETRICS_H
#define CTP_CORE_OPENMETRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "group.h"
#include "reader.h"

struct ctp_series;

struct ctp_om_opts {
	/* OpenMetrics 1.0 (# UNIT, counters' samples _total, # EOF); else
	 * the Prometheus text format 0.0.4. */
	bool openmetrics;
	/* Is a field wanted (--fields, a view's)? NULL: every field. */
	bool (*want)(const void *arg, const char *field);
	const void *want_arg;
	/* Groups kept, the rest summed into group="other"; 0: all. */
	size_t top;
	/* The fields whose aggregates, added, rank the groups (a view's sort
	 * column); none present: the first thread counter of a time unit;
	 * none either: key order. */
	const char *const *rank;
	size_t n_rank;
	/* Counters over time (series.h): its exported groups and running
	 * sums; the snapshot and groups given must be its newest. NULL: the
	 * snapshot's own aggregates, the top groups by `rank`. */
	const struct ctp_series *series;
	/* A timestamp on every sample (ns since the epoch; 0: none, as a
	 * scrape and the textfile collector want). */
	uint64_t timestamp_ns;
};

struct ctp_om_stats {
	size_t families, series;
	size_t groups, kept; /* groups of the grouping, and kept by top */
	size_t skipped;	     /* fields of no family: ordinals, strings,
				cpusets, exited, name clashes */
};

/*
 * mag / 10^dec (dec <= 38) as an exact decimal into buf (snprintf's
 * contract): a whole number without a point ("18446744073709551615"), a
 * fraction without trailing zeros ("0.123456789" for 123456789 and 9),
 * "-" first when neg and mag is not 0. Returns the length, or -EINVAL.
 */
int ctp_om_decimal(char *buf, size_t n, unsigned __int128 mag, bool neg,
		   unsigned dec);

/* Group gi's labels, `k="v",...` without braces (malloc'ed; NULL: no
 * memory): what identifies its series. */
char *ctp_om_group_labels(struct ctp_groups *g, size_t gi);
/* The labels of the groups past the --top cut, summed. A group whose own
 * labels read the same (a process named "other") is summed with them,
 * never a second series of those labels. */
#define CTP_OM_OTHER_LABELS "group=\"other\""

/* Write snap (grouped as g, built from snap) to out. Returns 0, -ENOMEM,
 * or -EIO when out reported a write error. */
int ctp_om_write(FILE *out, const struct ctp_snap *snap, struct ctp_groups *g,
		 const struct ctp_om_opts *o, struct ctp_om_stats *st);

/*
 * A recording as one OpenMetrics exposition with a timestamp per sample,
 * as `promtool tsdb create-blocks-from openmetrics` backfills: each
 * capture's metrics (in capture order, with o->series its counters over
 * time) at its start time, every family's samples together (the format
 * does not interleave families), kept in memory until written.
 */
struct ctp_om_timeline;
int ctp_om_timeline_new(struct ctp_om_timeline **ret);
/* snap grouped as g (a series': ctp_series_snap, _groups) at its capture
 * time (o->timestamp_ns 0), or o->timestamp_ns. 0, -ENOMEM or -EIO. */
int ctp_om_timeline_add(struct ctp_om_timeline *t, const struct ctp_snap *snap,
			struct ctp_groups *g, const struct ctp_om_opts *o);
/* Every family, then # EOF. 0, -ENOMEM, -EIO. */
int ctp_om_timeline_write(struct ctp_om_timeline *t, FILE *out);
void ctp_om_timeline_free(struct ctp_om_timeline *t);

#endif
