/* SPDX-License-Identifier: MIT */
/*
 * The values the test plugin abi-procsrc offers as the per-process source
 * "process" (tests/plugins/abi_procsrc.c), shared with the test that checks
 * them (tests/test_task_source.c).
 */
#ifndef CTP_TEST_ABI_PROCSRC_H
#define CTP_TEST_ABI_PROCSRC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ctprof/source-process.h>

/* Value `i` of process tgid: 8,000,000 + 1,000 i + tgid % 1000, a number
 * no fixture file holds. */
static inline uint64_t abi_procsrc_value(int32_t tgid, unsigned i)
{
	return 8000000u + 1000u * i + (uint64_t)tgid % 1000u;
}

/* The values a "partial" process (tgid ending in 2) lacks (bits clear):
 * one of stat's own, one of its children's, one of io's. */
#define ABI_PROCSRC_PARTIAL_GAPS                                               \
	CTP_SRC_PROC_MAJFLT, CTP_SRC_PROC_CSTIME, CTP_SRC_PROC_WRITE_BYTES

/* The source's record of process tgid: every value, valid but those of
 * gaps (n_gaps value numbers). */
static inline void abi_procsrc_make(struct ctp_src_process *s, int32_t tgid,
				    const unsigned *gaps, size_t n_gaps)
{
	memset(s, 0, sizeof(*s));
	s->abi = 1;
	s->size = sizeof(*s);
	for (unsigned i = 0; i < CTP_SRC_PROC_N_VALUES; i++) {
		s->v[i] = abi_procsrc_value(tgid, i);
		s->valid[0] |= 1ull << i;
	}
	for (size_t g = 0; g < n_gaps; g++)
		s->valid[0] &= ~(1ull << gaps[g]);
}

/* The thread-scope source abi-procsrc offers beside it, so a process
 * callback has one of the other scope to ask for. */
#define ABI_PROCSRC_THREAD_SOURCE "procsrc-thread"

#endif
