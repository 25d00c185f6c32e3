/*
 * The kernel types task_iter.bpf.c reads, declared locally with only the
 * members it uses. preserve_access_index makes every access a CO-RE
 * relocation that libbpf resolves against the running kernel's BTF at load
 * time by type and member *name*, so neither the layout of this header nor
 * the build host's kernel matters: no vmlinux.h, no /sys/kernel/btf at
 * build time. A member a kernel lacks (or has with another type) fails
 * bpf_core_field_exists, which the program tests before reading it.
 * Definitions: include/linux/sched.h, include/linux/task_io_accounting.h,
 * include/linux/delayacct.h (task_delay_info), include/linux/mm_types.h
 * (mm_struct; hiwater_* sit in an anonymous struct there, which CO-RE
 * looks through), include/linux/percpu_counter.h, include/linux/bpf.h
 * (bpf_iter_meta), kernel/bpf/task_iter.c (bpf_iter__task),
 * include/linux/sched/signal.h (signal_struct), include/linux/seqlock.h
 * (seqlock_t, an anonymous struct there).
 */
#ifndef CTP_BPFTASK_TASK_CORE_H
#define CTP_BPFTASK_TASK_CORE_H

#include <linux/types.h>

#define CORE __attribute__((preserve_access_index))

struct seq_file;

struct sched_entity {
	__u64 sum_exec_runtime;
} CORE;

struct sched_info {
	unsigned long pcount;
	unsigned long long run_delay;
	unsigned long long max_run_delay; /* 6.16+ */
	unsigned long long min_run_delay;
} CORE;

/* x86 and most arches: CONFIG_THREAD_INFO_IN_TASK, task_cpu() reads
 * thread_info.cpu. */
struct thread_info {
	__u32 cpu;
} CORE;

struct prev_cputime {
	__u64 utime;
	__u64 stime;
} CORE;

/* Counts are u32 in the kernel; _delay_max/_min appeared in 6.16. A
 * flavour of task_delay_info (libbpf matches the name before "___"), as
 * both programs read it. */
struct task_delay_info___iter {
	__u64 blkio_delay, blkio_delay_max, blkio_delay_min;
	__u32 blkio_count;
	__u64 swapin_delay, swapin_delay_max, swapin_delay_min;
	__u32 swapin_count;
	__u64 freepages_delay, freepages_delay_max, freepages_delay_min;
	__u32 freepages_count;
	__u64 thrashing_delay, thrashing_delay_max, thrashing_delay_min;
	__u32 thrashing_count;
	__u64 compact_delay, compact_delay_max, compact_delay_min;
	__u32 compact_count;
	__u64 wpcopy_delay, wpcopy_delay_max, wpcopy_delay_min;
	__u32 wpcopy_count;
	__u64 irq_delay, irq_delay_max, irq_delay_min;
	__u32 irq_count;
} CORE;

/* 6.2+: rss_stat is an array of these (before, struct mm_rss_stat of
 * atomic_long_t, which fails the existence check). */
struct percpu_counter {
	__s64 count;
} CORE;

struct file;

struct mm_struct {
	struct file *exe_file;
	unsigned long hiwater_rss;
	unsigned long hiwater_vm;
	unsigned long total_vm;
	struct percpu_counter rss_stat[4]; /* NR_MM_COUNTERS */
} CORE;

/* mm_lock_seq: a seqcount_t from 6.13 on (odd while a writer holds the
 * lock), an int 6.4-6.12 (raised as a writer lets go); absent without
 * CONFIG_PER_VMA_LOCK. Flavours, matched by the name before "___". */
struct mm_struct___seqc {
	struct {
		unsigned int sequence;
	} mm_lock_seq;
} CORE;

struct mm_struct___int {
	int mm_lock_seq;
} CORE;

struct task_io_accounting {
	__u64 rchar;
	__u64 wchar;
	__u64 syscr;
	__u64 syscw;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
} CORE;

/* The thread group's totals (include/linux/sched/signal.h): what exited
 * threads left (utime .. ioac) and the waited-for children's (c*), and
 * stats_lock, the seqlock __exit_signal() and wait_task_zombie() write
 * them under. 5.10+: seqlock_t holds a seqcount_spinlock_t, which holds the
 * seqcount_t; before, seqlock_t held the seqcount_t itself (the ___old
 * flavour). */
struct signal_struct {
	int nr_threads;
	struct {
		struct {
			struct {
				unsigned int sequence;
			} seqcount;
		} seqcount;
	} stats_lock;
	__u64 utime, stime, cutime, cstime;
	struct prev_cputime prev_cputime;
	unsigned long min_flt, maj_flt, cmin_flt, cmaj_flt;
	struct task_io_accounting ioac;
	unsigned long long sum_sched_runtime;
} CORE;

struct signal_struct___old {
	struct {
		struct {
			unsigned int sequence;
		} seqcount;
	} stats_lock;
} CORE;

/* NR_CPUS bits (include/linux/cpumask_types.h); the program reads the
 * words of CPUs 0-255 the running kernel has. */
struct cpumask {
	unsigned long bits[4];
} CORE;

struct task_struct {
	struct thread_info thread_info;
	unsigned int __state; /* 5.14+ */
	int exit_state;
	unsigned int flags;
	int prio;
	int static_prio;
	unsigned int rt_priority;
	unsigned int policy;
	struct mm_struct *mm;
	struct signal_struct *signal;
	struct prev_cputime prev_cputime;
	struct task_delay_info___iter *delays;
	int pid; /* pid_t */
	int tgid;
	struct sched_entity se;
	struct sched_info sched_info;
	struct cpumask cpus_mask;
	__u64 utime;
	__u64 stime;
	unsigned long nvcsw;
	unsigned long nivcsw;
	__u64 start_boottime;
	__u64 self_exec_id;
	unsigned long min_flt;
	unsigned long maj_flt;
	char comm[16];
	struct task_io_accounting ioac;
	/* The exit program's (task_exit.bpf.c, which declares css_set). */
	int exit_code;
	struct task_struct *real_parent;
	struct css_set *cgroups;
} CORE;

/* Where task_cpu() reads task_struct.cpu instead (no thread_info in the
 * task): a flavour, matched by the name before "___". */
struct task_struct___cpu {
	unsigned int cpu;
} CORE;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
} CORE;

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} CORE;

#endif /* CTP_BPFTASK_TASK_CORE_H */
