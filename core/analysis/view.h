/* SPDX-License-Identifier: MIT */
/*
 * Views (docs/VIEWS.md): what a reader prints first, as data. A view is a
 * YAML file naming an ordered list of columns (a field, the first of
 * several that has values, a sum of fields, or a task's name), how each is
 * shown (value, delta, rate, percent of one CPU, share of the total), the
 * sections it prints (each a grouping: per process, per thread, per
 * cgroup...), a default sort and the rows to leave out. The core knows no
 * field by name; the views shipped beside it do, as plugins' data. Private
 * to the core.
 */
#ifndef CTP_CORE_VIEW_H
#define CTP_CORE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a column's number comes from. */
enum ctp_view_src {
	CTP_VSRC_FIELD = 1, /* the first of `fields` that has values */
	CTP_VSRC_SUM,	    /* the sum of `fields` (one unit) */
	CTP_VSRC_IDENT,	    /* the first member's pcomm, comm or cgroup */
};

/* How a column shows its number. In `show` (one snapshot) the counters
 * count since each task started, so delta is the value itself and rate
 * and pct_cpu are lifetime averages (from the start-time field). */
enum ctp_view_show {
	CTP_VSHOW_VALUE = 1,
	CTP_VSHOW_DELTA,
	CTP_VSHOW_RATE,	   /* per second */
	CTP_VSHOW_PCT_CPU, /* a time counter as percent of one CPU */
	CTP_VSHOW_SHARE,   /* percent of the section's total */
};

/* CTP_VSRC_IDENT's names (what a member's row says). */
enum ctp_view_ident {
	CTP_VIDENT_PCOMM = 1,
	CTP_VIDENT_COMM,
	CTP_VIDENT_CGROUP,
	CTP_VIDENT_PID, /* the first member's tgid */
	CTP_VIDENT_AGE, /* how long the oldest member has existed */
	/* Not in files: compare's column saying which members started in
	 * the interval ("new": all of them; "+N": N of them). */
	CTP_VIDENT_STATUS,
};

#define CTP_VIEW_MAX_FIELDS 8

struct ctp_view_col {
	char *id;    /* [a-z0-9_]+, unique in the view */
	char *label; /* the header cell */
	uint8_t src, show, ident;
	char *fields[CTP_VIEW_MAX_FIELDS];
	size_t n_fields;
	/* `exited:` (compare): the exited table's fields whose sum is this
	 * column's number for a task that exited in the interval (time
	 * units converted to the column's), added to its group; none: the
	 * column counts live tasks only. */
	char *exited[CTP_VIEW_MAX_FIELDS];
	size_t n_exited;
	/* `why_absent:` a label field (a plugin's) set on a row that lacks
	 * this column's value, saying why: under each section with the
	 * column, one line counts the rows that carry it, per reason. NULL:
	 * none. */
	char *why_absent;
	/* The sections (by index) the column is shown in; all when none
	 * was given (`in: [Threads]`). */
	uint32_t in_mask;
	unsigned line; /* in the view file, for messages */
};

struct ctp_view_section {
	char *title;
	char *group_by; /* axes as --group-by takes them */
};

enum {
	CTP_VIEW_COVER_THREADS,
	CTP_VIEW_COVER_CGROUP,
	CTP_VIEW_COVER_EXITED,
	CTP_VIEW_COVER_N
};

struct ctp_view {
	char *name, *description;
	char *path; /* the file it came from */
	struct ctp_view_col *cols;
	size_t n_cols;
	struct ctp_view_section *secs;
	size_t n_secs;
	size_t sort;	 /* index into cols */
	bool asc;	 /* default: descending */
	bool *hide_zero; /* per column: rows where every marked column is
			    0 or absent are left out */
	bool any_hide;
	bool full; /* `full: true`: the view is today's complete output
		      (`all`); columns and sections are not used */
	/* `coverage:` (compare, docs/COMPARE.md): the thread time counters
	 * that add up to a thread's CPU, the cgroup CPU usage counters (the
	 * first present is used) and the exited table's CPU counters; a
	 * member with no fields when not given. */
	struct ctp_view_col coverage[CTP_VIEW_COVER_N];
};

/*
 * Parse a view file's bytes (`name` for messages and the view's expected
 * name: the file name without ".yaml"). Returns 0 and *out, -EINVAL with
 * "FILE:LINE:COL: message" in err, -ENOMEM.
 */
int ctp_view_parse(const char *path, const char *buf, size_t len,
		   struct ctp_view **out, char *err, size_t errlen);
/* The same from a file (at most 256 KiB, a regular file). */
int ctp_view_load(const char *path, struct ctp_view **out, char *err,
		  size_t errlen);
void ctp_view_free(struct ctp_view *v);

/*
 * The directories views are looked up in, first match wins:
 * $CTPROF_VIEW_DIR (':'-separated), $XDG_CONFIG_HOME/ctprof/views (else
 * ~/.config/ctprof/views), then the shipped ones (ctp_paths_view_dir).
 * Returns 0 and a NULL-terminated array the caller frees with
 * ctp_view_dirs_free, or -ENOMEM.
 */
int ctp_view_dirs(char ***out);
void ctp_view_dirs_free(char **dirs);

/*
 * The view `name` from the directories above. Returns 0 and *out, -ENOENT
 * with "no view 'x' in DIR:DIR...; did you mean 'y'?" in err, or the
 * parser's error for a bad file.
 */
int ctp_view_find(const char *name, struct ctp_view **out, char *err,
		  size_t errlen);

/* Every view name found (sorted, first directory wins on a clash), with
 * its file; the caller frees both arrays' strings and the arrays. */
int ctp_view_names(char ***names, char ***paths, size_t *n);

/* The column whose id or label (case-insensitively) is s, or -1. */
int ctp_view_col_find(const struct ctp_view *v, const char *s);

#endif
