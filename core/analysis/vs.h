/* SPDX-License-Identifier: MIT */
/*
 * `compare A0 A1 --vs B0 B1` (docs/COMPARE.md "Interval against
 * interval"): a view's numbers over each run's interval (viewshow.h,
 * ctp_view_nums), per side the median of its runs and their spread, per
 * group and column the ratio of B's median to A's and, with two runs or
 * more a side, the Mann-Whitney U test of the two (stats.h), printed
 * through the one table (table.h). Private to the core.
 */
#ifndef CTP_CORE_VS_H
#define CTP_CORE_VS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "interval.h"
#include "table.h"
#include "view.h"

/* One run: the interval from paths[0] to paths[1] (its exited tasks
 * included), borrowed. */
struct ctp_vs_run {
	const char *path[2];
	struct ctp_interval *iv;
};

struct ctp_vs_opts {
	const struct ctp_view *v;
	const char *sort;     /* a column of v; NULL: the view's */
	const char *group_by; /* NULL: each section's, by name (pid: pcomm) */
	bool no_normalize;
	bool (*want)(const void *arg, const char *field);
	const void *want_arg;
	size_t width;		   /* text: the screen's columns; 0: no limit */
	uint64_t top;		   /* groups per section; 0: all */
	enum ctp_table_format fmt; /* TEXT, CSV or JSON */
	bool color; /* text: a difference outside the noise in yellow */
};

/*
 * Side A's runs a[0..na) against side B's b[0..nb) (each side one run or
 * more, every interval positive), the whole output to out once it is
 * computed (nothing on an error). Returns 0, -EINVAL with a message in err
 * (a --sort naming no column, a bad grouping), -ENOMEM, -EIO.
 */
int ctp_vs_print(FILE *out, const struct ctp_vs_run *a, size_t na,
		 const struct ctp_vs_run *b, size_t nb,
		 const struct ctp_vs_opts *o, char *err, size_t errlen);

#endif
