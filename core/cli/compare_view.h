/* SPDX-License-Identifier: MIT */
/* `compare BASE CAND` as a view (compare_view.c). Private to the core. */
#ifndef CTP_CORE_COMPARE_VIEW_H
#define CTP_CORE_COMPARE_VIEW_H

#include <stdbool.h>
#include <stdint.h>

struct ctp_exit_sum;
struct ctp_rename_opts;
struct ctp_snap;
struct ctp_view;

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
};

/* Print the view over the interval. Returns the exit status, or -ENOENT
 * when no view was asked for and the default one is missing (the caller
 * then shows the full comparison). */
int ctp_compare_view(const struct ctp_compare_view_args *a);

/* The tasks that exited between BASE snap[0] and CAND snap[1]: CAND's
 * exited table and those of the recording's files between them (when the
 * two are files of one, core/cli/recdir.h), with the fields view v names
 * (core/analysis/exitsum.h). A file that cannot be read is said on stderr
 * after prog. Returns 0 or -ENOMEM; free s in any case. */
int ctp_compare_exited(const struct ctp_snap *const snap[2],
		       const char *const paths[2], uint64_t cap,
		       const struct ctp_view *v, const char *prog,
		       struct ctp_exit_sum *s);

#endif
