/* SPDX-License-Identifier: MIT */
/* `compare BASE CAND` as a view (compare_view.c). Private to the core. */
#ifndef CTP_CORE_COMPARE_VIEW_H
#define CTP_CORE_COMPARE_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <stdio.h>

struct ctp_rename_opts;

/* What `top` says in its own header about the interval shown. */
struct ctp_compare_view_info {
	uint64_t base_ns, cand_ns; /* the two captures' start, realtime */
	double seconds;		   /* the interval; <= 0: none */
	char host[64];
	bool exits;	 /* an exited table (a taskstats listener) */
	size_t exited;	 /* tasks that exited in the interval; SIZE_MAX:
			    the view reads no exited table */
	uint64_t denied; /* CAND's reads refused (not root) */
	char sort[64];	 /* the sort column's label, "" none */
};

struct ctp_compare_view_args {
	const char *paths[2];
	uint64_t cap;
	const char *view; /* NULL: top */
	const char *sort; /* a column; NULL: the view's */
	int asc;	  /* -1: the view's order */
	uint64_t top;
	bool top_set, wide, no_normalize;
	const char *group_by; /* NULL: each section's */
	bool (*want)(const void *arg, const char *field);
	const void *want_arg;
	/* Renamed cgroups' thresholds; NULL: --no-rename. */
	const struct ctp_rename_opts *rename;
	/* `top` (top.c): where the screen and the messages go (NULL: stdout,
	 * stderr), the screen's size (0: the terminal's; a height also fits
	 * the rows to it), rows whose name holds `filter` only, no BASE and
	 * CAND lines (brief), and what the header says (info, NULL: none). */
	FILE *out, *log;
	size_t width, height;
	const char *filter;
	bool brief;
	struct ctp_compare_view_info *info;
};

/* Print the view over the interval. Returns the exit status, or -ENOENT
 * when no view was asked for and the default one is missing (the caller
 * then shows the full comparison). */
int ctp_compare_view(const struct ctp_compare_view_args *a);

struct ctp_snap;
struct ctp_view;
struct ctp_exit_sum;
/* The tasks that exited between BASE snap[0] and CAND snap[1]: their
 * exited tables and those of the recording's files between them, when the
 * two are files of one (core/cli/recdir.h). Returns 0 or -ENOMEM. */
int ctp_compare_view_exited(const struct ctp_snap *const snap[2],
			    const char *const paths[2], uint64_t cap,
			    const struct ctp_view *v, struct ctp_exit_sum *s);

/* compare A0 A1 [A0' A1' ...] --vs B0 B1 [...] (core/analysis/vs.h). */
struct ctp_compare_vs_args {
	char *const *paths[2]; /* per side, pairs of BASE CAND */
	size_t n[2];	       /* files per side, even */
	uint64_t cap;
	const char *view; /* NULL: top */
	const char *sort;
	uint64_t top;
	bool top_set, wide, no_normalize;
	const char *group_by; /* NULL: each section's, by name */
	bool (*want)(const void *arg, const char *field);
	const void *want_arg;
	int fmt; /* enum ctp_table_format */
};

/* Run it. Returns the exit status (2 for an unreadable file, a pair in the
 * wrong order, a bad option; nothing printed on stdout then). */
int ctp_compare_vs(const struct ctp_compare_vs_args *a);

#endif
