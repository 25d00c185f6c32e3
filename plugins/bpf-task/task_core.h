/*
 * The kernel types task_iter.bpf.c reads, declared locally with only the
 * members it uses. preserve_access_index makes every access a CO-RE
 * relocation that libbpf resolves against the running kernel's BTF at load
 * time by type and member *name*, so neither the layout of this header nor
 * the build host's kernel matters: no vmlinux.h, no /sys/kernel/btf at
 * build time. Definitions: include/linux/sched.h, include/linux/
 * task_io_accounting.h, include/linux/bpf.h (bpf_iter_meta),
 * kernel/bpf/task_iter.c (bpf_iter__task).
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

struct task_struct {
	int pid; /* pid_t */
	int tgid;
	struct sched_entity se;
	struct sched_info sched_info;
	__u64 utime;
	__u64 stime;
	unsigned long nvcsw;
	unsigned long nivcsw;
	__u64 start_boottime;
	unsigned long min_flt;
	unsigned long maj_flt;
	char comm[16];
	struct task_io_accounting ioac;
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
