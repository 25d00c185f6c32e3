// SPDX-License-Identifier: MIT
/* A time budget per capture for a plugin's costly reads (budget.h). */
#include <time.h>

#include "budget.h"

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ctp_budget_init(struct ctp_budget *b, uint64_t limit_ns)
{
	b->limit_ns = limit_ns;
	ctp_budget_reset(b);
}

void ctp_budget_reset(struct ctp_budget *b)
{
	atomic_store(&b->cpu_ns, 0);
	atomic_store(&b->wall_ns, 0);
}

bool ctp_budget_left(const struct ctp_budget *b, uint64_t reserve_ns)
{
	uint64_t cpu, wall;

	if (b->limit_ns == UINT64_MAX)
		return true;
	if (reserve_ns >= b->limit_ns)
		return false;
	cpu = atomic_load_explicit(&b->cpu_ns, memory_order_relaxed);
	wall = atomic_load_explicit(&b->wall_ns, memory_order_relaxed) /
	       CTP_BUDGET_WALL_FACTOR;
	return cpu < b->limit_ns - reserve_ns &&
	       wall < b->limit_ns - reserve_ns;
}

void ctp_budget_begin(struct ctp_budget_mark *m)
{
	m->cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	m->wall = now_ns(CLOCK_MONOTONIC);
}

void ctp_budget_end(struct ctp_budget *b, const struct ctp_budget_mark *m,
		    uint64_t *cpu_ns, uint64_t *wall_ns)
{
	uint64_t dw = now_ns(CLOCK_MONOTONIC) - m->wall;
	uint64_t dc = now_ns(CLOCK_THREAD_CPUTIME_ID) - m->cpu;

	atomic_fetch_add_explicit(&b->cpu_ns, dc, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->wall_ns, dw, memory_order_relaxed);
	if (cpu_ns)
		*cpu_ns = dc;
	if (wall_ns)
		*wall_ns = dw;
}
