/* SPDX-License-Identifier: MIT */
/*
 * The values the test plugin abi-tasksrc offers as the source "task"
 * (tests/plugins/abi_tasksrc.c), shared with the test that checks them
 * (tests/test_task_source.c) and the plugins' harness tests.
 */
#ifndef CTP_TEST_ABI_TASKSRC_H
#define CTP_TEST_ABI_TASKSRC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ctprof/source-task.h>

/* Value `i` of thread `tid`: 7,000,000 + 1,000 i + tid % 1000, a number
 * no fixture file holds; the values that must fit a field's range are
 * fixed: state 'D', priority -3, nice -7, processor 3, policy 1
 * (SCHED_FIFO). */
static inline uint64_t abi_tasksrc_value(int32_t tid, unsigned i)
{
	switch (i) {
	case CTP_SRC_TASK_STATE:
		return 'D';
	case CTP_SRC_TASK_PRIORITY:
		return (uint64_t)(int64_t)-3;
	case CTP_SRC_TASK_NICE:
		return (uint64_t)(int64_t)-7;
	case CTP_SRC_TASK_PROCESSOR:
		return 3;
	case CTP_SRC_TASK_POLICY:
		return 1;
	default:
		return 7000000u + 1000u * i + (uint64_t)tid % 1000u;
	}
}

/* The source's record of thread tid: every value, valid but those of
 * gaps (n_gaps value numbers). */
static inline void abi_tasksrc_make(struct ctp_src_task *s, int32_t tid,
				    const unsigned *gaps, size_t n_gaps)
{
	memset(s, 0, sizeof(*s));
	s->abi = 1;
	s->size = sizeof(*s);
	for (unsigned i = 0; i < CTP_SRC_TASK_N_VALUES; i++) {
		s->v[i] = abi_tasksrc_value(tid, i);
		s->valid[i / 64] |= 1ull << (i % 64);
	}
	for (size_t g = 0; g < n_gaps; g++)
		s->valid[gaps[g] / 64] &= ~(1ull << (gaps[g] % 64));
}

/* The values a "partial" thread (tid ending in 2) lacks: one of each
 * consumer's, and one of a pair that is only taken whole. */
#define ABI_TASKSRC_PARTIAL_GAPS                                               \
	CTP_SRC_TASK_MAJFLT, CTP_SRC_TASK_NICE, CTP_SRC_TASK_NIVCSW,           \
		CTP_SRC_TASK_WRITE_BYTES, CTP_SRC_TASK_TIMESLICES,             \
		CTP_SRC_TASK_DELAY(1, 1), CTP_SRC_TASK_HIWATER_VM

#endif
