/* SPDX-License-Identifier: MIT */
/* What `export` shares with `serve` and `record` (export.c). Private to
 * the core. */
#ifndef CTP_CORE_EXPORT_H
#define CTP_CORE_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "openmetrics.h"
#include "readopts.h"
#include "series.h"
#include "view.h"

/*
 * snap as metrics to out, as export and serve write them: grouped by r's
 * spec; the fields r's --fields select, or v's columns' when view_selects;
 * ranked by v's sort column (v may be NULL); the top `top` groups.
 * OpenMetrics, else the Prometheus text format 0.0.4. Returns 0 and the
 * counts in *st, -EINVAL with a message in err (a grouping the snapshot
 * cannot make), -ENOMEM or -EIO.
 */
int ctp_export_metrics(FILE *out, const struct ctp_snap *snap,
		       const struct ctp_readopts *r, const struct ctp_view *v,
		       bool view_selects, bool openmetrics, uint64_t top,
		       struct ctp_om_stats *st, char *err, size_t errlen);

/*
 * Counters over time (core/analysis/series.h) for serve, record
 * --textfile and a recording's export: a series grouped by r's spec,
 * the top `top` groups ranked by v's sort column by their increase,
 * ttl_ns (0: the default) --series-ttl. Returns 0 and *ret, or -ENOMEM.
 */
int ctp_export_series_new(const struct ctp_readopts *r,
			  const struct ctp_view *v, uint64_t top,
			  uint64_t ttl_ns, struct ctp_series **ret);
/* Its newest snapshot as metrics (as ctp_export_metrics, the groups and
 * counters the series'). Returns 0, -ENOMEM or -EIO. */
int ctp_export_series(FILE *out, const struct ctp_series *series,
		      const struct ctp_readopts *r, const struct ctp_view *v,
		      bool view_selects, bool openmetrics,
		      struct ctp_om_stats *st);

/* The files of a recording (recdir.h's list, oldest first) as one
 * OpenMetrics exposition over time into t (openmetrics.h), through a
 * series grouped by r's spec; a file that is no readable snapshot is
 * marked bad and counted in skips. *used: the files read. Returns 0, or
 * -errno with err. */
struct ctp_recdir_files;
struct ctp_recdir_skips;
int ctp_export_recording(struct ctp_om_timeline *t,
			 struct ctp_recdir_files *files,
			 struct ctp_recdir_skips *skips,
			 const struct ctp_readopts *r, const struct ctp_view *v,
			 bool view_selects, uint64_t top, size_t *used,
			 char *err, size_t errlen);

/* The snapshot at snap_path as DIR/ctprof.prom for node_exporter's
 * textfile collector (export --textfile DIR, grouped by pcomm, the top 50
 * by CPU); record --textfile after each file, with *series its counters
 * over time (made at the first call, ttl_ns its --series-ttl, 0 the
 * default; NULL: the snapshot alone). Returns
 * the exit status. */
int ctp_export_textfile(const char *snap_path, const char *dir, uint64_t cap,
			uint64_t ttl_ns, struct ctp_series **series);

#endif
