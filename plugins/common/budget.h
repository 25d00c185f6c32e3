/* SPDX-License-Identifier: MIT */
/*
 * A plugin's time budget per capture for its costly reads, shared by its
 * workers (smaps' smaps_rollup, appstats' registries). What is metered is
 * the reading threads' CPU time (the kernel's work for a read is system
 * time of the reader): a read that waits for a CPU or a lock costs the
 * host nothing, and a wall-clock budget would be spent on the host's load
 * instead. The wall time of the reads is metered too, and the budget is
 * also spent at CTP_BUDGET_WALL_FACTOR budgets of it, so that reads which
 * only wait still cannot stretch a capture without bound.
 */
#ifndef CTP_BUDGET_H
#define CTP_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CTP_BUDGET_WALL_FACTOR 10

struct ctp_budget {
	uint64_t limit_ns;		  /* UINT64_MAX: unlimited */
	_Atomic uint64_t cpu_ns, wall_ns; /* spent, this capture */
};

/* When one read started (ctp_budget_begin). */
struct ctp_budget_mark {
	uint64_t cpu, wall;
};

void ctp_budget_init(struct ctp_budget *b, uint64_t limit_ns);
/* A fresh budget: call once per capture, before the walk. */
void ctp_budget_reset(struct ctp_budget *b);
/* Whether one more read may start with reserve_ns of the budget kept for
 * others: what was spent, in CPU time and in wall time over the factor,
 * plus reserve_ns, is under the limit. Always true when unlimited. */
bool ctp_budget_left(const struct ctp_budget *b, uint64_t reserve_ns);
void ctp_budget_begin(struct ctp_budget_mark *m);
/* Charge the read that started at m; its CPU and wall time in *cpu_ns and
 * *wall_ns (either may be NULL). */
void ctp_budget_end(struct ctp_budget *b, const struct ctp_budget_mark *m,
		    uint64_t *cpu_ns, uint64_t *wall_ns);

#endif /* CTP_BUDGET_H */
