/* SPDX-License-Identifier: MIT */
/*
 * Tasks that exited between two snapshots (docs/COMPARE.md "Exited
 * tasks"): the exited tables of CAND and of the recording's files between
 * BASE and CAND, each row's CPU over the interval (its total at exit, less
 * what BASE already had of the same thread), grouped by process name. The
 * CPU fields are a view's `coverage: exited:` list; the core names none.
 * Private to the core.
 */
#ifndef CTP_CORE_EXITSUM_H
#define CTP_CORE_EXITSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "reader.h"
#include "view.h"

struct ctp_exit_group {
	char *name; /* normalized process name, escaped for a terminal */
	size_t tasks;
	double cpu; /* seconds over the interval */
};

struct ctp_exit_sum {
	bool present; /* some file had an exited table or a plugin of it */
	size_t tasks, files;
	double cpu;
	uint64_t lost; /* exits the plugins said they missed */
	struct ctp_exit_group *g;
	size_t n_g;
};

/*
 * Add up the exited rows of `files` (CAND, and the files of its recording
 * between BASE and CAND, any order) for the interval from base: rows that
 * exited before base was taken are left out. Returns 0 (s->present false
 * when no file has an exited table), -ENOMEM.
 */
int ctp_exit_sum(const struct ctp_snap *base,
		 const struct ctp_snap *const *files, size_t n,
		 const struct ctp_view *v, struct ctp_exit_sum *s);
/* The section under compare's view: the groups by CPU, top first. */
void ctp_exit_sum_print(FILE *out, const struct ctp_exit_sum *s,
			double interval_s, size_t top, size_t width);
void ctp_exit_sum_free(struct ctp_exit_sum *s);

#endif
