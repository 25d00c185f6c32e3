/* SPDX-License-Identifier: MIT */
/*
 * Coverage of a comparison (docs/COMPARE.md "Coverage"): how much of the
 * CPU the cgroups used between two snapshots the threads of the snapshots
 * explain, and how much ran in tasks that exited in between (the exited
 * table's rows when the snapshot has them). The fields are a view's
 * `coverage:` lists: the core names none. Private to the core.
 */
#ifndef CTP_CORE_COVERAGE_H
#define CTP_CORE_COVERAGE_H

#include <stddef.h>
#include <stdio.h>

#include "interval.h"
#include "reader.h"
#include "view.h"

/* One cgroup v2 path of CAND: its CPU usage over the interval and what
 * its threads (and its descendants') used. Seconds. */
struct ctp_coverage_cg {
	const char *path; /* CAND's bytes, NUL-terminated copy */
	double usage, threads;
	double exited; /* of exited tasks known to have run in it, s */
};

struct ctp_coverage {
	bool ok;	/* the view names fields both snapshots have */
	double threads; /* CPU of the threads over the interval, seconds */
	double exited;	/* of the exited rows, seconds; < 0: no table */
	size_t n_exited;
	/* The root cgroup's (all tasks'), < 0 when no root usage. */
	double host;
	/* Cgroups whose usage their live threads explain least, by CPU
	 * left unexplained, largest first (not the root). */
	struct ctp_coverage_cg *cg;
	size_t n_cg;
};

/* Compute over an interval (interval.h): its tasks' changes, and the
 * tasks that exited in it (none without an exit sum; each one's CPU goes
 * to its cgroup and the cgroup's ancestors where its cgroup is known).
 * Returns 0 (c->ok false when the view or the snapshots lack the fields,
 * or there is no task identity), -ENOMEM. */
int ctp_coverage_compute(struct ctp_interval *iv, const struct ctp_view *v,
			 struct ctp_coverage *c);
/* The coverage lines under compare's header, within width (0: any). */
void ctp_coverage_print(FILE *out, const struct ctp_coverage *c, size_t width);
void ctp_coverage_free(struct ctp_coverage *c);

#endif
