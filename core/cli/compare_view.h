/* SPDX-License-Identifier: MIT */
/* `compare BASE CAND` as a view (compare_view.c). Private to the core. */
#ifndef CTP_CORE_COMPARE_VIEW_H
#define CTP_CORE_COMPARE_VIEW_H

#include <stdbool.h>
#include <stdint.h>

struct ctp_rename_opts;

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

#endif
