/* SPDX-License-Identifier: MIT */
/*
 * The per-process source "process" (ctp_api.source_add with scope
 * CTP_SCOPE_PROCESS, plugin.h): a process's totals as /proc/<tgid>/stat and
 * /proc/<tgid>/io print them, where the kernel sums the whole thread group
 * (its live threads and the totals its exited ones left in signal_struct)
 * and keeps the waited-for children's totals, each in the unit and with
 * the arithmetic of that file, so a collector takes it in place of the
 * file for a process row. The bpf-task plugin offers it from the same pass
 * as the source "task" (plugins/bpf-task/README.md says how each value is
 * made and why it equals the file); another provider may offer the same
 * layout.
 *
 * A value is offered only where the provider made it from the same kernel
 * variables the file prints, with the file's arithmetic redone (utime and
 * stime: thread_group_cputime_adjusted()); a value it lacks, or one its
 * check on this kernel found unequal to the file, is left out (its `valid`
 * bit clear), and consumers read their file for it.
 *
 * Layout: source-values.h with one valid word: struct ctp_src_process,
 * `size` bytes. Members are only ever appended. Read it with
 * ctp_src_process_get().
 */
#ifndef CTPROF_SOURCE_PROCESS_H
#define CTPROF_SOURCE_PROCESS_H

#include "source-values.h"

#define CTP_SOURCE_PROCESS "process"

/* Value numbers: fixed, never reordered or reused. */
enum ctp_src_process_value {
	/* /proc/<tgid>/stat (fs/proc/array.c do_task_stat(), whole = 1):
	 * (20) num_threads; (10) minflt and (12) majflt of the whole group;
	 * (14) utime and (15) stime of the whole group in USER_HZ ticks
	 * (thread_group_cputime_adjusted()); the waited-for children's (11)
	 * cminflt, (13) cmajflt, (16) cutime and (17) cstime (ticks). */
	CTP_SRC_PROC_NUM_THREADS = 0,
	CTP_SRC_PROC_MINFLT = 1,
	CTP_SRC_PROC_MAJFLT = 2,
	CTP_SRC_PROC_UTIME = 3,
	CTP_SRC_PROC_STIME = 4,
	CTP_SRC_PROC_CMINFLT = 5,
	CTP_SRC_PROC_CMAJFLT = 6,
	CTP_SRC_PROC_CUTIME = 7,
	CTP_SRC_PROC_CSTIME = 8,
	/* /proc/<tgid>/io (whole group: signal_struct's ioac plus every live
	 * thread's), bytes and calls. */
	CTP_SRC_PROC_RCHAR = 9,
	CTP_SRC_PROC_WCHAR = 10,
	CTP_SRC_PROC_SYSCR = 11,
	CTP_SRC_PROC_SYSCW = 12,
	CTP_SRC_PROC_READ_BYTES = 13,
	CTP_SRC_PROC_WRITE_BYTES = 14,
	CTP_SRC_PROC_CANCELLED_WRITE_BYTES = 15,
	/* Not a file's value: the generation of the process's mappings, an
	 * opaque number (not a count, never 0) that one provider gives equal
	 * in two captures made in one process only where /proc/<tgid>/maps
	 * lists the same mappings in both (addresses, permissions, offsets,
	 * devices and inodes: the layout; a path a rename changed may differ).
	 * A consumer that made something of the maps in the capture before
	 * may keep it and not read them again. Keyed per provider instance:
	 * meaningless in another process, so never put it in a snapshot.
	 * bpf-task: the mm, its exec count and its mmap lock's sequence
	 * (plugins/bpf-task/README.md, "The address space's generation"). */
	CTP_SRC_PROC_MM_GEN = 16,
	CTP_SRC_PROC_N_VALUES
};

struct ctp_src_process {
	uint32_t abi;	   /* 1 */
	uint32_t size;	   /* bytes of this struct as the provider built it */
	uint64_t valid[1]; /* bit i: value i is offered */
	uint64_t v[CTP_SRC_PROC_N_VALUES]; /* by enum ctp_src_process_value */
};

/* Value `which` of a "process" source's bytes (ctp_api.source_get from a
 * process callback), or false when absent. Pure. */
static inline bool ctp_src_process_get(const void *data, size_t len,
				       unsigned which, uint64_t *out)
{
	return ctp_src_values_get(data, len, 1, which, out);
}

#endif /* CTPROF_SOURCE_PROCESS_H */
