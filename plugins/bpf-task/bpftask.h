/*
 * The iter/task program in user space: load and attach it once per
 * process, then run passes over every task of the caller's pid namespace.
 * Needs libbpf, the kernel's BTF and CAP_BPF + CAP_PERFMON (or
 * CAP_SYS_ADMIN).
 *
 * Loaded by its light skeleton first (the kernel relocates it against its
 * own BTF: 5.17+, and BPF_PROG_RUN of a syscall program allowed): where
 * asked for (CTP_BPFTASK_OPEN_WALK), the object with the open-coded pass
 * (6.8+, below); then the program built with bpf_rdonly_cast (6.2+), else
 * the one without; else by libbpf's skeleton (libbpf parses
 * /sys/kernel/btf/vmlinux) of the one without. For tests,
 * CTP_BPFTASK_LOADER=libbpf skips the light skeletons, =light takes no fallback
 * to libbpf's and =light-nocast loads the light skeleton of the program without
 * bpf_rdonly_cast alone.
 */
#ifndef CTP_BPFTASK_H
#define CTP_BPFTASK_H

#include "bpfcg.h"
#include "bpftask_rec.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ctp_bpftask;

/*
 * Whether this process is in the initial pid namespace, the one whose ids
 * the program records (bpf_task_from_pid() takes them too), as the proc
 * root proc_fd (-1: /proc) says: its ns/pid is the initial namespace's
 * (PROC_PID_INIT_INO), or, where that cannot be looked at, its status's
 * NSpid has one id.
 */
bool ctp_bpftask_initial_pidns(int proc_fd);

/*
 * Open, load (the verifier runs here, once) and attach the program.
 * Returns 0 with *ret set, or a negative errno with one line saying which
 * step failed and why in why (-ENOENT: no /sys/kernel/btf/vmlinux; -EPERM:
 * bpf() refused, privileges, lockdown or a seccomp filter); where both
 * loaders fail, libbpf's step and reason.
 */
int ctp_bpftask_open(struct ctp_bpftask **ret, char *why, size_t whylen);

/* The same, with flags: CTP_BPFTASK_OPEN_WALK loads the open-coded pass
 * (below) where the kernel has it, as CTP_BPFTASK_PASS=open-coded does
 * (=iter: never); without, iter/task alone, whose load costs less
 * (README.md "The open-coded pass"). */
#define CTP_BPFTASK_OPEN_WALK 1u
int ctp_bpftask_open_flags(struct ctp_bpftask **ret, unsigned flags, char *why,
			   size_t whylen);
void ctp_bpftask_free(struct ctp_bpftask *b);

/* Which loader loaded the program, in words: "the light skeleton", "the
 * light skeleton, of the program without bpf_rdonly_cast (the one with it:
 * <step: reason>)", or "libbpf's skeleton (the light one: <step:
 * reason>)". Owned by b. */
const char *ctp_bpftask_loader(const struct ctp_bpftask *b);

/*
 * How many tasks the first pass is expected to read (e.g. /proc/loadavg's
 * count of threads): its buffer is mapped for them and some slack at once
 * instead of grown as the stream comes (without a call: room for 16).
 * The buffer is kept for the passes after it and grown, without a copy,
 * when one outgrows it.
 */
void ctp_bpftask_expect(struct ctp_bpftask *b, size_t tasks);

/*
 * Whether the buffer serves many passes (a recorder's): then it is mapped
 * in huge pages where THP allows, faulted in once; else (a one-shot
 * capture, the default) in 4 KiB pages faulted in at once by the mmap
 * (MAP_POPULATE). A huge page the kernel takes from memory it has not
 * touched lately costs its first write dearly on a guest whose host takes
 * freed memory back (virtio-balloon free page reporting: 2 MiB blocks and
 * larger): bench.py's one-shot captures took 145-152 ms in 3-4 of 10
 * where the others took 104-110, against 110-116 with 4 KiB pages.
 */
void ctp_bpftask_buf_reused(struct ctp_bpftask *b, bool reused);

/* The bytes the pass's buffer has mapped now (0 before the first pass). */
size_t ctp_bpftask_buf_bytes(const struct ctp_bpftask *b);

/*
 * One pass: every task's record, parsed and checked, into a buffer of its
 * own, valid until the next pass or ctp_bpftask_free. At most max_bytes of
 * records are read (-E2BIG beyond). Returns the number of records with
 * *recs set, or a negative errno (-EBADMSG: the stream was not whole
 * records).
 */
int ctp_bpftask_pass(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_rec **recs);

/*
 * A pass over one task (the iterator's tid parameter, 6.1+): its record,
 * through a link of its own made and dropped here. Returns the number of
 * records (0: no such task) with *recs set as ctp_bpftask_pass does, or a
 * negative errno (-EINVAL and the like where the kernel has no parameter).
 */
int ctp_bpftask_pass_tid(struct ctp_bpftask *b, int tid,
			 const struct ctp_bpftask_rec **recs);

/* The same over the threads of process pid (the iterator's pid
 * parameter, 6.1+), at most max_bytes of records. */
int ctp_bpftask_pass_pid(struct ctp_bpftask *b, int pid, size_t max_bytes,
			 const struct ctp_bpftask_rec **recs);

/*
 * sched_getaffinity(tid) (0: the calling thread) as words of CPUs 0-255,
 * CPU i at bit i % 64 of words[i / 64]. 0, or a negative errno: the
 * call's (-EINVAL: the kernel's cpumask is above 1024 CPUs), -EOVERFLOW
 * for a CPU above 255.
 */
int ctp_bpftask_getaffinity(pid_t tid, __u64 words[CTP_BPFTASK_CPU_WORDS]);

/*
 * The open-coded pass (README.md "The open-coded pass"): where it was
 * asked for (CTP_BPFTASK_OPEN_WALK), the kernel has it (6.8+:
 * bpf_iter_task_*, bpf_task_from_pid, bpf_rcu_read_lock and a global
 * function's trusted argument) and the process is in the initial pid
 * namespace, ctp_bpftask_pass() walks the tasks by runs of a syscall
 * program of at most CTP_BPFTASK_WALK_K records each (bpftask_walk.h), a
 * process of more threads by the iterator's pid parameter, instead of by
 * iter/task; the same records (the same set of tasks, every task alive
 * for the whole pass once), by process in tgid order instead of in tid
 * order.
 *
 * ctp_bpftask_walk_why(): NULL where it is loaded, else why not.
 * ctp_bpftask_use_walk(): whether passes take it from now on (on where
 * loaded); returns whether they will.
 * ctp_bpftask_walk_limit(): its records a run (1 to CTP_BPFTASK_WALK_K,
 * the default) and processes a pass (0 to CTP_BPFTASK_WALK_PROCS, the
 * default; more: iter/task's whole pass): lower for tests.
 * ctp_bpftask_walk_stats(): what the last pass by it did.
 */
struct ctp_bpftask_walk_stats {
	unsigned runs;	       /* program runs, the list's included */
	unsigned big;	       /* processes walked by the pid parameter */
	unsigned max_run_recs; /* the most records of one run */
	bool whole;	       /* the pass was iter/task's, whole */
	__u64 list_ns;	       /* the list run's RCU section, ns */
	__u64 max_run_ns;      /* the longest threads run's, ns */
};
const char *ctp_bpftask_walk_why(const struct ctp_bpftask *b);
bool ctp_bpftask_use_walk(struct ctp_bpftask *b, bool on);
void ctp_bpftask_walk_limit(struct ctp_bpftask *b, unsigned k, unsigned procs);
/* The last pass's (runs 0: it did not try the open-coded pass). */
void ctp_bpftask_walk_stats(const struct ctp_bpftask *b,
			    struct ctp_bpftask_walk_stats *st);

/* Whether the passes from now on leave out the block delay families (read
 * as absent): nobody takes them while kernel.task_delayacct is 0. */
void ctp_bpftask_skip_delays(struct ctp_bpftask *b, bool skip);

/* Whether the passes from now on note each task's css_set (bpfcg.h; off:
 * every record's cg_set is 0). */
void ctp_bpftask_note_cgroups(struct ctp_bpftask *b, bool on);

/*
 * The css_sets the last ctp_bpftask_pass noted (bpfcg.h), sorted by key
 * (ctp_bpfcg_find) into a buffer of b's, valid until the next call or
 * ctp_bpftask_free. Returns their number with *sets set, or a negative
 * errno of bpf(). Entries of earlier passes are left out.
 */
int ctp_bpftask_cg_sets(struct ctp_bpftask *b,
			const struct ctp_bpfcg_entry **sets);

#endif /* CTP_BPFTASK_H */
