/* SPDX-License-Identifier: MIT */
/*
 * The per-task source "task" (ctp_api.source_add, plugin.h): a thread's
 * counters as the kernel keeps them in its task_struct, each in the unit
 * and with the arithmetic of the file that prints it, so a collector takes
 * it in place of that file. The bpf-task plugin offers it from one BPF
 * task-iterator pass per capture (plugins/bpf-task/README.md says where
 * each value comes from and why it equals the file); another provider may
 * offer the same layout.
 *
 * A value is offered only where the provider read it from the same kernel
 * variable the file prints and, for the few the kernel computes while
 * printing (stat's utime and stime: cputime_adjust()), redid that
 * arithmetic; a value a kernel lacks, or one the provider's check on this
 * kernel found unequal to its file, is left out (its `valid` bit clear),
 * and consumers read their file for it.
 *
 * Layout: struct ctp_src_task, `size` bytes. Members are only ever
 * appended; a value exists when `size` covers it and its bit in `valid`
 * is set (source-values.h). Read it with ctp_src_task_get().
 */
#ifndef CTPROF_SOURCE_TASK_H
#define CTPROF_SOURCE_TASK_H

#include "source-values.h"

#define CTP_SOURCE_TASK "task"

/* Value numbers: fixed, never reordered or reused. Signed values are
 * stored as their two's complement in the u64. */
enum ctp_src_task_value {
	/* /proc/<tgid>/task/<tid>/stat, as it prints them (fs/proc/array.c
	 * do_task_stat(), whole = 0): fields (10) minflt, (12) majflt, (14)
	 * utime and (15) stime in USER_HZ ticks (cputime_adjust()ed), (18)
	 * priority and (19) nice (signed), (22) starttime in USER_HZ ticks,
	 * (39) processor, (40) rt_priority, (41) policy, (3) state (the
	 * letter's code). */
	CTP_SRC_TASK_MINFLT = 0,
	CTP_SRC_TASK_MAJFLT = 1,
	CTP_SRC_TASK_UTIME = 2,
	CTP_SRC_TASK_STIME = 3,
	CTP_SRC_TASK_PRIORITY = 4,
	CTP_SRC_TASK_NICE = 5,
	CTP_SRC_TASK_START_TIME = 6,
	CTP_SRC_TASK_PROCESSOR = 7,
	CTP_SRC_TASK_RT_PRIORITY = 8,
	CTP_SRC_TASK_POLICY = 9,
	CTP_SRC_TASK_STATE = 10,
	/* status: voluntary_ctxt_switches, nonvoluntary_ctxt_switches. */
	CTP_SRC_TASK_NVCSW = 11,
	CTP_SRC_TASK_NIVCSW = 12,
	/* task/<tid>/io, the thread's own counters, bytes and calls. */
	CTP_SRC_TASK_RCHAR = 13,
	CTP_SRC_TASK_WCHAR = 14,
	CTP_SRC_TASK_SYSCR = 15,
	CTP_SRC_TASK_SYSCW = 16,
	CTP_SRC_TASK_READ_BYTES = 17,
	CTP_SRC_TASK_WRITE_BYTES = 18,
	CTP_SRC_TASK_CANCELLED_WRITE_BYTES = 19,
	/* schedstat: time on a CPU (ns), time runnable and waiting (ns),
	 * times put on a CPU. */
	CTP_SRC_TASK_RUN_NS = 20,
	CTP_SRC_TASK_RUN_DELAY_NS = 21,
	CTP_SRC_TASK_TIMESLICES = 22,
	/* The taskstats reply's delay members (struct taskstats, version
	 * 17 names): 8 families in this order, cpu, blkio, swapin,
	 * freepages, thrashing, compact, wpcopy, irq, each as count,
	 * delay_total (ns), delay_max (ns), delay_min (ns); value
	 * CTP_SRC_TASK_DELAY(family, part). */
	CTP_SRC_TASK_DELAY0 = 23,
	/* taskstats hiwater_rss and hiwater_vm, in bytes (the reply's KiB
	 * times 1024). */
	CTP_SRC_TASK_HIWATER_RSS = 55,
	CTP_SRC_TASK_HIWATER_VM = 56,
	/* sched_getaffinity(2) of the thread (its cpus_mask and'ed with
	 * cpu_active_mask), as 4 words: CPU i at bit i % 64 of value
	 * CTP_SRC_TASK_CPUS(i / 64), CPUs 0-255. Offered only as all four
	 * and only where every possible CPU of the host is below 256. */
	CTP_SRC_TASK_CPUS0 = 57,
	CTP_SRC_TASK_CPUS3 = 60,
	CTP_SRC_TASK_N_VALUES
};
#define CTP_SRC_TASK_DELAY(family, part)                                       \
	(CTP_SRC_TASK_DELAY0 + 4 * (family) + (part))
#define CTP_SRC_TASK_CPUS(word) (CTP_SRC_TASK_CPUS0 + (word))

struct ctp_src_task {
	uint32_t abi;	   /* 1 */
	uint32_t size;	   /* bytes of this struct as the provider built it */
	uint64_t valid[2]; /* bit i of valid[i / 64]: value i is offered */
	uint64_t v[CTP_SRC_TASK_N_VALUES]; /* by enum ctp_src_task_value */
};

/*
 * Value `which` of a source's bytes (as ctp_api.source_get returned them),
 * or false when absent: short bytes, another layout, an older provider or
 * a value not offered. Pure.
 */
static inline bool ctp_src_task_get(const void *data, size_t len,
				    unsigned which, uint64_t *out)
{
	return ctp_src_values_get(data, len, 2, which, out);
}

#endif /* CTPROF_SOURCE_TASK_H */
