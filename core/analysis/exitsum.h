/* SPDX-License-Identifier: MIT */
/*
 * Tasks that exited between two snapshots (docs/COMPARE.md "Exited
 * tasks"): the exited tables of CAND and of the recording's files between
 * BASE and CAND, each row's CPU over the interval (its total at exit, less
 * what BASE already had of the same thread: same ids and start, not a
 * reused pid), grouped by process name. The
 * CPU fields are a view's `coverage: exited:` list; the core names none.
 * Private to the core.
 */
#ifndef CTP_CORE_EXITSUM_H
#define CTP_CORE_EXITSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "group.h"
#include "reader.h"
#include "view.h"

struct ctp_exit_group {
	char *name; /* normalized process name, escaped for a terminal */
	size_t tasks;
	double cpu; /* seconds over the interval */
};

struct ctp_exit_sum {
	bool present; /* some file had an exited table or a plugin of it */
	bool has_cpu; /* the view says which exited fields are CPU time */
	size_t tasks;
	double cpu;
	uint64_t lost; /* exits the plugins said they missed */
	struct ctp_exit_group *g;
	size_t n_g;
	/* Per task (`tasks` of them), for compare's groups: what keys it
	 * (names, cgroup path and v1 paths as the snapshots knew them: its
	 * own comm, its process's, the cgroups of the thread BASE had, or
	 * of a live thread of its process, else of its parent), BASE's
	 * thread row of the same task (ids
	 * and start, ctp_ident_exited_same) or -1,
	 * and the values of `fields` (every column's `exited:` fields and
	 * the coverage ones; NAN: absent) in `unit` (the first file's; time
	 * units of later files converted). */
	struct ctp_group_extra *id;
	long *base_row;
	char **fields;
	uint8_t *unit;
	size_t n_fields;
	double *val;	/* tasks x n_fields */
	double *cpu_of; /* per task: its CPU over the interval, s */
	char **own;	/* per task: the bytes its id points at */
	bool *unit_set; /* per field: unit[] is known */
	/* Per field: its values are rounded down to a multiple of this (the
	 * field's `step`, the largest any file gave); 0 when exact. */
	uint64_t *step;
	size_t cap; /* tasks the arrays hold */
	/* Memory kept per task, with its names, against the budget: the
	 * tasks past it are counted in `over`, not kept. */
	uint64_t bytes, budget, over;
	/* The distinct sets of v1 paths the ids point at (id[].v1), each
	 * kept once however many tasks ran there: an open-addressing table
	 * of pool_cap slots, pool_n used; key: scratch for a set's bytes. */
	struct ctp_exit_v1set **pool;
	size_t pool_n, pool_cap;
	unsigned char *key;
	size_t key_cap;
};

/*
 * Add up the exited rows of the interval from base: BASE's own (what
 * exited while it was taken), those of the recording's files at paths
 * `between` (oldest first; each opened with the budget cap, added and
 * freed in turn, each with the one before it kept open: a task that lived
 * across a capture was seen live there, for its names and cgroup; one
 * that fails to open is said on log, "PROG: why (its exited tasks are left
 * out)", and skipped), then CAND's. Rows that exited before base was taken
 * are left out; the sum's own memory is held to cap too. Each exit counts
 * in one interval only, so that intervals in a row (a series, compare
 * from file to file of a recording) add up to the whole: a row of BASE's
 * table only when BASE read its thread live (what BASE had of it is taken
 * off), a row of CAND's only when CAND did not (CAND's live reading is
 * its change; the next interval takes the rest), every row of a file
 * between. Nothing is read when view v names no exited field. Returns 0
 * or -ENOMEM; s->present is false when no file had an exited table. Free
 * s in any case.
 */
int ctp_exit_sum_paths(const struct ctp_snap *base, const struct ctp_snap *cand,
		       char *const *between, size_t n, uint64_t cap,
		       const struct ctp_view *v, FILE *log, const char *prog,
		       struct ctp_exit_sum *s);
/* Index of field `name` in s->fields, or -1. */
long ctp_exit_sum_field(const struct ctp_exit_sum *s, const char *name);
/* What a value of field j times is in unit `to`: 1 for its own unit, the
 * ratio of two time units, NAN for any other pair. */
double ctp_exit_sum_scale(const struct ctp_exit_sum *s, size_t j, uint8_t to);
/* The section under compare's view: the groups by CPU, top first;
 * nothing without an exited table or the view's exited CPU fields. */
void ctp_exit_sum_print(FILE *out, const struct ctp_exit_sum *s,
			double interval_s, size_t top, size_t width);
void ctp_exit_sum_free(struct ctp_exit_sum *s);

#endif
