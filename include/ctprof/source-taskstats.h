/* SPDX-License-Identifier: MIT */
/*
 * The per-task source "taskstats" (ctp_api.source_register, plugin.h):
 * what the taskstats plugin offers other collectors from the one
 * TASKSTATS_CMD_GET reply it gets for each thread anyway, so they need not
 * open a file for the same numbers.
 *
 * Only values that equal what the files show are offered: each member is
 * read from the same kernel variable the file prints, in the same unit.
 * Left out on purpose (docs/PLUGINS.md "Per-task sources"):
 *   - ac_utime/ac_stime: raw tick samples; stat's utime/stime are those
 *     samples rescaled to the exact run time (cputime_adjust()) and kept
 *     monotonic per task, which one reply cannot reproduce;
 *   - the I/O counters: the kernel rounds every one of them down to a
 *     multiple of 1024 in the reply (xacct_add_tsk(), KB_MASK), the read
 *     and write system call counts included.
 *
 * Layout: struct ctp_src_taskstats, `size` bytes. Members are only ever
 * appended; a value exists when `size` covers it and its bit in `valid` is
 * set (the provider sets it only where the host measures the value).
 * Bytes past `size` are the provider's own (the whole reply, for its
 * thread callback): no part of the layout. Read it with
 * ctp_src_taskstats_get().
 */
#ifndef CTPROF_SOURCE_TASKSTATS_H
#define CTPROF_SOURCE_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CTP_SOURCE_TASKSTATS "taskstats"

/* Value numbers: fixed, never reordered or reused. */
enum ctp_src_ts_value {
	/* Context switches, status voluntary_ctxt_switches and
	 * nonvoluntary_ctxt_switches (nvcsw, nivcsw). */
	CTP_SRC_TS_NVCSW = 0,
	CTP_SRC_TS_NIVCSW = 1,
	/* schedstat's three numbers (CONFIG_SCHED_INFO): time on a CPU, ns
	 * (se.sum_exec_runtime: cpu_run_virtual_total), time runnable and
	 * waiting, ns (sched_info.run_delay: cpu_delay_total), and times put
	 * on a CPU (sched_info.pcount: cpu_count). */
	CTP_SRC_TS_RUN_NS = 2,
	CTP_SRC_TS_RUN_DELAY_NS = 3,
	CTP_SRC_TS_TIMESLICES = 4,
	CTP_SRC_TS_N_VALUES
};

struct ctp_src_taskstats {
	uint32_t abi;	/* 1 */
	uint32_t size;	/* bytes of this struct as the provider built it */
	uint64_t valid; /* bit i: value i is measured */
	uint64_t v[CTP_SRC_TS_N_VALUES]; /* by enum ctp_src_ts_value */
};

/*
 * Value `which` of a source's bytes (as ctp_api.source_get returned them),
 * or false when absent: short bytes, another layout, an older provider or
 * a value the host does not measure. Pure.
 */
static inline bool ctp_src_taskstats_get(const void *data, size_t len,
					 enum ctp_src_ts_value which,
					 uint64_t *out)
{
	struct ctp_src_taskstats s;
	size_t need = offsetof(struct ctp_src_taskstats, v) +
		      ((size_t)which + 1) * sizeof(uint64_t);

	if (!data || len < offsetof(struct ctp_src_taskstats, v) ||
	    (unsigned)which >= 64)
		return false;
	memcpy(&s, data, offsetof(struct ctp_src_taskstats, v));
	if (s.abi != 1 || s.size > len || s.size < need ||
	    !((s.valid >> which) & 1))
		return false;
	memcpy(out, (const char *)data + need - sizeof(uint64_t), sizeof(*out));
	return true;
}

#endif /* CTPROF_SOURCE_TASKSTATS_H */
