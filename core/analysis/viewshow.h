/* SPDX-License-Identifier: MIT */
/*
 * A view (view.h) over one snapshot, for `show`: per section, the groups
 * sorted by the view's column, the top N, the columns that fit the width.
 * Private to the core.
 */
#ifndef CTP_CORE_VIEWSHOW_H
#define CTP_CORE_VIEWSHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "group.h"

#include "interval.h"
#include "reader.h"
#include "view.h"

struct ctp_rename_opts;

struct ctp_view_opts {
	size_t width;	      /* columns of the screen; 0: no limit */
	size_t top;	      /* rows per section; 0: all */
	const char *sort;     /* column id or label; NULL: the view's */
	int asc;	      /* -1: the view's order, 0 desc, 1 asc */
	const char *group_by; /* replaces every section's grouping */
	bool no_normalize;
	/* --fields: a column is kept when one of its fields is wanted
	 * (name columns always); NULL keeps every column. */
	bool (*want)(const void *arg, const char *field);
	const void *want_arg;
	/* compare: the interval (core/analysis/interval.h) from its BASE to
	 * the shown snapshot, its CAND. Counters then show their change per
	 * group, summed per task matched by identity: a task new in the
	 * interval counts from zero, a gone one not at all, a counter that
	 * went back (a reset) counts its new value. pct_cpu and rate are
	 * over the interval; the tasks that exited in it (its exit sum) join
	 * the groups as their threads do, and a column with `exited:` fields
	 * adds each one's value at exit (less what BASE had of the same
	 * task). NULL: one snapshot, lifetime averages. */
	struct ctp_interval *interval;
	/* compare: pair renamed cgroups (core/analysis/rename.h) in sections
	 * grouped by cgroup with these thresholds; NULL: do not. */
	const struct ctp_rename_opts *rename;
	/* compare: the CPU the host used in the interval (the coverage
	 * line's, core/analysis/coverage.h), seconds; <= 0: unknown. A
	 * section with a percent-of-CPU column then says how much of it
	 * its rows shown, and all its rows, hold. */
	double host_cpu_s;
	/* Lines the sections may take in all (0: no limit): `top` rows per
	 * section is lowered until the sections, their notes included,
	 * fit (never below 3 rows). */
	size_t lines;
	/* compare --vs: a section grouped by pid is grouped by pcomm, one by
	 * tid by pcomm,comm (pids differ from run to run; --group-by is
	 * taken as given). */
	bool by_name;
	/* Colour on a terminal (core/util/term.h ctp_color_for): the sort
	 * column in bold, compare's new/exited/restarted/renamed states. */
	bool color;
	/* Rows whose name (a key part or a name column, as printed before
	 * escaping) holds this text, case-insensitively, only; NULL or "":
	 * every row (`top`'s `/`). */
	const char *filter;
};

/*
 * Rows per section that fit a terminal of `height` lines under `header`
 * lines of the command's own (and a blank line after them), with each
 * section's title and column names, blank lines between sections and the
 * shell's prompt; 20 when the height is unknown or small, at least 3.
 * *lines (when not NULL): the lines the sections may take in all, for
 * ctp_view_opts.lines (0 when the height is unknown or small).
 */
size_t ctp_view_fit_rows(const struct ctp_view *v, size_t height, size_t header,
			 size_t *lines);

/*
 * Print the sections of view v over snap to out. Columns naming fields the
 * snapshot lacks (or has no value of) are left out. Returns 0, -EINVAL with
 * a message in err (a --sort naming no column, a bad grouping), -ENOMEM,
 * or -EIO when writing failed.
 */
int ctp_view_show(FILE *out, const struct ctp_snap *snap,
		  const struct ctp_view *v, const struct ctp_view_opts *o,
		  char *err, size_t errlen);

/* One number column of a section (ctp_view_nums). */
struct ctp_view_num_col {
	size_t col;   /* the view's column (index into v->cols) */
	uint8_t unit; /* the number's unit before `show` */
	uint8_t show; /* how it is shown (enum ctp_view_show) */
	bool change;  /* a change over the interval; else a level at its end */
};

/* One section of a view as numbers: per group (the capture's own left
 * out, none hidden or cut) its key parts and its number columns, as the
 * section would print them (a change, a rate, % of one CPU; a gauge's
 * value in the shown snapshot). */
struct ctp_view_nums {
	size_t nk;			    /* key parts */
	char *key_title[CTP_GROUP_MAX_KEY]; /* ctp_groups_key_title */
	size_t nc;			    /* number columns */
	struct ctp_view_num_col *col;	    /* nc */
	size_t ng;			    /* groups */
	char **key;			    /* ng x nk, NULL: unknown */
	long double *num;		    /* ng x nc, NAN: absent */
	size_t sort;			    /* into col; SIZE_MAX: none */
	bool asc;			    /* the sort's order */
};

/*
 * The sections of view v over snap (o as for ctp_view_show; width, top,
 * lines unused) as numbers: v->n_secs of them into *ret, which the caller
 * frees with ctp_view_nums_free. Returns 0, -EINVAL with a message in err,
 * -ENOMEM.
 */
int ctp_view_nums(const struct ctp_snap *snap, const struct ctp_view *v,
		  const struct ctp_view_opts *o, struct ctp_view_nums **ret,
		  char *err, size_t errlen);
void ctp_view_nums_free(struct ctp_view_nums *n, size_t n_secs);

#endif
