/*
 * The record the iter/task program writes for every task, one after the
 * other with no framing, and the pure parser of that stream. Shared by the
 * BPF program (task_iter.bpf.c) and user space, so only fixed-width kernel
 * uapi types and no padding: the layout is the same on both sides.
 */
#ifndef CTP_BPFTASK_REC_H
#define CTP_BPFTASK_REC_H

#include <linux/types.h>

#define CTP_BPFTASK_REC_VERSION 1

/* Bits of ctp_bpftask_rec.present: a group of values the running kernel
 * has (CO-RE existence checks); values of an absent group are 0. */
#define CTP_BPFTASK_HAS_SCHED_INFO 0x1u /* run_delay, pcount (SCHED_INFO) */
#define CTP_BPFTASK_HAS_IO_XACCT   0x2u /* rchar..syscw (TASK_XACCT) */
#define CTP_BPFTASK_HAS_IO_BYTES   0x4u /* *_bytes (TASK_IO_ACCOUNTING) */
#define CTP_BPFTASK_HAS_ALL	   0x7u

struct ctp_bpftask_rec {
	__u16 size;    /* sizeof(struct ctp_bpftask_rec) */
	__u16 version; /* CTP_BPFTASK_REC_VERSION */
	__u32 present; /* CTP_BPFTASK_HAS_* */
	__s32 tgid;
	__s32 pid;		/* the thread id (global) */
	__u64 start_boottime;	/* ns since boot, suspend included */
	__u64 minflt, majflt;	/* min_flt, maj_flt */
	__u64 nvcsw, nivcsw;	/* context switches */
	__u64 sum_exec_runtime; /* se.sum_exec_runtime, ns */
	__u64 run_delay;	/* sched_info.run_delay, ns */
	__u64 pcount;		/* sched_info.pcount */
	__u64 rchar, wchar, syscr, syscw;
	__u64 read_bytes, write_bytes, cancelled_write_bytes;
	__u64 utime, stime; /* raw, ns (not cputime_adjust()ed) */
	char comm[16];	    /* TASK_COMM_LEN, NUL-terminated */
};

#ifndef __bpf__
#include <stddef.h>

_Static_assert(sizeof(struct ctp_bpftask_rec) == 168,
	       "ctp_bpftask_rec has padding or changed size");

/*
 * Take the record at *off of the len bytes at buf into *out and move *off
 * past it. Returns 1 for a record, 0 at the end of the stream, -EBADMSG
 * for a stream that is not whole records of this version (a short tail, a
 * wrong size or version, unknown present bits, ids <= 0, a comm without
 * its NUL); *off and *out are then left as they were. Reads no byte
 * outside buf[0..len); buf needs no alignment.
 */
int ctp_bpftask_rec_next(const void *buf, size_t len, size_t *off,
			 struct ctp_bpftask_rec *out);
#endif

#endif /* CTP_BPFTASK_REC_H */
