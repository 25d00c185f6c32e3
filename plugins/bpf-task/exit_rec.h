/*
 * The record the sched_switch exit program (task_exit.bpf.c) sends through
 * its ring buffer for every thread's last switch away (a thread that
 * exited: its counters final), the per-process totals it keeps instead
 * when the ring is full, and the pure parser of one ring record. Shared by
 * the BPF program and user space, so only fixed-width kernel uapi types
 * and no padding: the layout is the same on both sides.
 */
#ifndef CTP_BPFEXIT_REC_H
#define CTP_BPFEXIT_REC_H

#include <linux/types.h>

#define CTP_BPFEXIT_REC_VERSION 1

/* The delay families in the order of the taskstats plugin's members
 * (taskstats_reply.h CTP_TS_CPU ...), and the parts of each. */
#define CTP_BPFEXIT_N_FAMILIES                                                 \
	8		      /* cpu blkio swapin freepages thrashing          \
				 compact wpcopy irq */
#define CTP_BPFEXIT_N_PARTS 4 /* count total max min */

/* Bits of ctp_bpfexit_rec.present: a group of values the running kernel
 * has (CO-RE existence checks, a non-NULL task->delays); an absent group
 * is 0. */
#define CTP_BPFEXIT_HAS_IO_XACCT 0x1u /* rchar..syscw (TASK_XACCT) */
#define CTP_BPFEXIT_HAS_IO_BYTES 0x2u /* *_bytes (TASK_IO_ACCOUNTING) */
#define CTP_BPFEXIT_HAS_CGROUP	 0x4u /* cgroup_id (cgroup v2) */
/* Family f's count and total (1 << (8 + f)), its max and min
 * (1 << (16 + f)). */
#define CTP_BPFEXIT_HAS_DELAY(f)  (1u << (8 + (f)))
#define CTP_BPFEXIT_HAS_MAXMIN(f) (1u << (16 + (f)))
#define CTP_BPFEXIT_HAS_ALL	  0xffff07u

struct ctp_bpfexit_rec {
	__u16 size;    /* sizeof(struct ctp_bpfexit_rec) */
	__u16 version; /* CTP_BPFEXIT_REC_VERSION */
	__u32 present; /* CTP_BPFEXIT_HAS_* */
	__s32 tgid;
	__s32 pid;	      /* the thread id (global) */
	__s32 ppid;	      /* real_parent's tgid when it exited */
	__s32 exit_code;      /* task->exit_code: wait() status */
	__u64 start_boottime; /* ns since boot, suspend included */
	__u64 exit_boottime;  /* bpf_ktime_get_boot_ns() at the last switch */
	__u64 utime, stime; /* raw tick samples, ns (not cputime_adjust()ed) */
	__u64 sum_exec_runtime; /* se.sum_exec_runtime, ns: final */
	__u64 minflt, majflt, nvcsw, nivcsw;
	__u64 rchar, wchar, syscr, syscw;
	__u64 read_bytes, write_bytes, cancelled_write_bytes;
	__u64 cgroup_id; /* cgroups->dfl_cgrp->kn->id: the v2 directory's
			    inode number */
	/* [family][part]: cpu from sched_info (pcount, run_delay,
	 * max/min_run_delay), the rest from task->delays. */
	__u64 delay[CTP_BPFEXIT_N_FAMILIES][CTP_BPFEXIT_N_PARTS];
	char comm[16]; /* TASK_COMM_LEN, NUL-terminated */
};

/*
 * A process's sums of the records the ring had no room for (key: tgid and
 * the generation user space drains, see task_exit.bpf.c): the sums are
 * kept, only the per-thread detail is lost. Fields as in the record;
 * delay[f][0..1] are count and total (max and min are not sums).
 */
struct ctp_bpfexit_sum {
	__u64 threads; /* records summed */
	__u32 present; /* the present bits of the first record */
	__s32 ppid;    /* of the first record */
	__u64 cgroup_id;
	__u64 exit_boottime; /* the latest */
	__u64 utime, stime, sum_exec_runtime;
	__u64 minflt, majflt, nvcsw, nivcsw;
	__u64 rchar, wchar, syscr, syscw;
	__u64 read_bytes, write_bytes, cancelled_write_bytes;
	__u64 delay[CTP_BPFEXIT_N_FAMILIES][2];
	char comm[16]; /* of the first record */
};

struct ctp_bpfexit_key {
	__u32 tgid;
	__u32 gen; /* 0 or 1 */
};

#ifndef __bpf__
#include <stddef.h>

_Static_assert(sizeof(struct ctp_bpfexit_rec) == 432,
	       "ctp_bpfexit_rec has padding or changed size");
_Static_assert(sizeof(struct ctp_bpfexit_sum) == 288,
	       "ctp_bpfexit_sum has padding or changed size");

/*
 * One ring record (the len bytes at buf, as the ring handed them over)
 * into *out. Returns 0, or -EBADMSG for bytes that are not one whole
 * record of this version (a wrong length, size or version, unknown present
 * bits, ids <= 0, a comm without its NUL); *out is then untouched. Reads no
 * byte outside buf[0..len); buf needs no alignment.
 */
int ctp_bpfexit_rec_parse(const void *buf, size_t len,
			  struct ctp_bpfexit_rec *out);
#endif

#endif /* CTP_BPFEXIT_REC_H */
