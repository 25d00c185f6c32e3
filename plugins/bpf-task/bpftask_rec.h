/*
 * The record the iter/task program writes for every task, one after the
 * other with no framing, and the pure parser of that stream. Shared by the
 * BPF program (task_iter.bpf.c) and user space, so only fixed-width kernel
 * uapi types and no padding: the layout is the same on both sides.
 */
#ifndef CTP_BPFTASK_REC_H
#define CTP_BPFTASK_REC_H

#include <linux/types.h>

#define CTP_BPFTASK_REC_VERSION 6

/* Bits of ctp_bpftask_rec.present: a group of values the running kernel
 * has (CO-RE existence checks, and for mm and delays a pointer that is not
 * NULL); values of an absent group are 0. */
#define CTP_BPFTASK_HAS_SCHED_INFO	 0x1u /* run_delay, pcount (SCHED_INFO) */
#define CTP_BPFTASK_HAS_IO_XACCT	 0x2u /* rchar..syscw (TASK_XACCT) */
#define CTP_BPFTASK_HAS_IO_BYTES	 0x4u /* *_bytes (TASK_IO_ACCOUNTING) */
#define CTP_BPFTASK_HAS_STATE		 0x8u /* __state (5.14+), exit_state */
#define CTP_BPFTASK_HAS_CPU		 0x10u /* thread_info.cpu or cpu */
#define CTP_BPFTASK_HAS_PREV		 0x20u /* prev_cputime */
#define CTP_BPFTASK_HAS_MM		 0x40u /* an mm with the 6.2+ rss_stat */
#define CTP_BPFTASK_HAS_RUN_DELAY_MAXMIN 0x80u /* sched_info.{max,min}_ */
/* delays[f][0..1] (count, total) of family f, CTP_BPFTASK_FAM_*: the kernel
 * has the family's members (0 for a task without its task_delay_info, as
 * the reply, which delayacct_add_tsk() leaves zeroed then). */
#define CTP_BPFTASK_HAS_DELAY(f) (0x100u << (f))
/* delays[f][2..3] (max, min; 6.16+). */
#define CTP_BPFTASK_HAS_DELAY_MAXMIN(f) (0x8000u << (f))
/* cpus[] (cpus_mask.bits[0], and the words the kernel's NR_CPUS has). */
#define CTP_BPFTASK_HAS_CPUS 0x400000u
/* sig_seq: signal->stats_lock's sequence (every record). */
#define CTP_BPFTASK_HAS_SIG_SEQ 0x800000u
/* The group leader's record (pid == tgid) with its signal_struct block:
 * nr_threads and sig_* (sig_io as HAS_IO_XACCT, HAS_IO_BYTES say). */
#define CTP_BPFTASK_HAS_SIG 0x1000000u
/* sig_prev_utime, sig_prev_stime (signal->prev_cputime). */
#define CTP_BPFTASK_HAS_SIG_PREV 0x2000000u
/* cg_set: the key of the task's css_set in the map cgsets (bpfcg.h). */
#define CTP_BPFTASK_HAS_CG_SET 0x4000000u
/* mm_id, exec_id, mm_seq: the task's mm and its mmap lock's sequence
 * (mm_lock_seq, CONFIG_PER_VMA_LOCK, 6.4+). */
#define CTP_BPFTASK_HAS_MM_SEQ 0x8000000u
#define CTP_BPFTASK_HAS_ALL    0xfffffffu

/* Words of cpus_mask a record holds: CPUs 0-255. */
#define CTP_BPFTASK_CPU_WORDS 4

/* The task_delay_info families, in the taskstats order after cpu. */
enum {
	CTP_BPFTASK_FAM_BLKIO = 0,
	CTP_BPFTASK_FAM_SWAPIN,
	CTP_BPFTASK_FAM_FREEPAGES,
	CTP_BPFTASK_FAM_THRASHING,
	CTP_BPFTASK_FAM_COMPACT,
	CTP_BPFTASK_FAM_WPCOPY,
	CTP_BPFTASK_FAM_IRQ,
	CTP_BPFTASK_N_FAM
};

/* task_struct.flags bits this project reads (include/linux/sched.h). */
#define CTP_PF_WQ_WORKER 0x00000020u /* comm file appends "-<workqueue>" */
#define CTP_PF_KTHREAD	 0x00200000u

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
	/* Version 2. */
	__u32 state;	  /* __state (HAS_STATE) */
	__u32 exit_state; /* exit_state (HAS_STATE) */
	__s32 prio, static_prio;
	__u32 rt_priority, policy;
	__u32 cpu;			    /* task_cpu() (HAS_CPU) */
	__u32 flags;			    /* PF_* */
	__u64 prev_utime, prev_stime;	    /* prev_cputime, ns (HAS_PREV) */
	__u64 run_delay_max, run_delay_min; /* sched_info, ns */
	/* delays->{f}_count, _delay, _delay_max, _delay_min. */
	__u64 delays[CTP_BPFTASK_N_FAM][4];
	/* mm (HAS_MM): taskstats' watermarks in pages, as
	 * ctp_bpftask_mm_marks() works them out from the mm. */
	__u64 hiwater_rss, hiwater_vm;
	/* cpus_mask.bits (HAS_CPUS): the CPUs the task may run on, CPU i
	 * at bit i % 64 of word i / 64; words the kernel lacks are 0. Not
	 * yet and'ed with cpu_active_mask (sched_getaffinity() does). */
	__u64 cpus[CTP_BPFTASK_CPU_WORDS];
	/* Version 4: the thread group's signal_struct. sig_seq on every
	 * record (HAS_SIG_SEQ): stats_lock's sequence read before any of the
	 * task's counters, which goes up by 2 each time an exiting thread's
	 * counters move into the block (and each time a child is reaped); on
	 * the leader's record read again after the block and stored odd when
	 * it moved meanwhile. The rest on the leader's record only (HAS_SIG),
	 * 0 on the others. */
	__u32 sig_seq;
	__u32 nr_threads;
	__u64 sig_utime, sig_stime;	      /* raw ns, exited threads' */
	__u64 sig_rtime;		      /* sum_sched_runtime, ns */
	__u64 sig_prev_utime, sig_prev_stime; /* prev_cputime (HAS_SIG_PREV) */
	__u64 sig_minflt, sig_majflt, sig_cminflt, sig_cmajflt;
	__u64 sig_cutime, sig_cstime; /* ns, waited-for children's */
	/* ioac: rchar, wchar, syscr, syscw, read_bytes, write_bytes,
	 * cancelled_write_bytes. */
	__u64 sig_io[7];
	/* Version 5 (HAS_CG_SET): the key of the css_set's entry in cgsets
	 * (bpfcg.h), an opaque grouping key that stays in this process; 0:
	 * none. After the signal block, which the program zeroes on all but
	 * the leader's record before it sets this. */
	__u64 cg_set;
	/* Version 6 (HAS_MM_SEQ, on a group leader's record; 0 without and
	 * on the others): which layout of mappings the task's address space
	 * has. mm_lock_seq changes each time a writer
	 * of the mappings lets go of the mmap lock (mmap_write_unlock(),
	 * mmap_write_downgrade(): vma_end_write_all()), and every change of
	 * a mapping /proc/<pid>/maps shows is made under that lock; an exec
	 * gives the task a new mm and a higher self_exec_id. So two passes
	 * that read the same three saw the same mappings (README.md, "The
	 * address space's generation"). mm_id is the mm_struct's address:
	 * compared in this process, never shown or stored; exe_id, its
	 * exe_file's, which prctl(PR_SET_MM_EXE_FILE) may replace under no
	 * write lock. */
	__u64 mm_id;
	__u64 exe_id;
	__u64 exec_id; /* self_exec_id */
	__u32 mm_seq;  /* mm_lock_seq */
	__u32 mm_pad;  /* 0 */
};

/*
 * taskstats' hiwater_rss and hiwater_vm (kernel/tsacct.c xacct_add_tsk())
 * in pages from an mm's members: max(hiwater_rss, get_mm_rss()) and
 * max(hiwater_vm, total_vm), where get_mm_rss() sums the file, anon and
 * shmem rss_stat counts, each clamped at 0 as
 * percpu_counter_read_positive() does. Pure; the BPF program calls it.
 */
static inline void ctp_bpftask_mm_marks(__u64 hiwater_rss, __u64 hiwater_vm,
					__u64 total_vm, __s64 file, __s64 anon,
					__s64 shmem, __u64 *rss, __u64 *vm)
{
	__u64 sum = (__u64)(file > 0 ? file : 0) +
		    (__u64)(anon > 0 ? anon : 0) +
		    (__u64)(shmem > 0 ? shmem : 0);

	*rss = hiwater_rss > sum ? hiwater_rss : sum;
	*vm = hiwater_vm > total_vm ? hiwater_vm : total_vm;
}

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

_Static_assert(sizeof(struct ctp_bpftask_rec) == 696,
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

/*
 * Check the len bytes at buf in place, as ctp_bpftask_rec_next() checks
 * each record, copying none: the number of records, or -EBADMSG when the
 * bytes are not whole records of this version. Pure.
 */
long ctp_bpftask_rec_check(const void *buf, size_t len);

/*
 * The check of a stream read in pieces: after each read, ctp_bpftask_rec_more()
 * with the bytes buf[0..len) read so far checks the whole records not yet
 * checked (while the read's bytes are still in the cache); at the end
 * ctp_bpftask_rec_end() gives what ctp_bpftask_rec_check() gives for
 * buf[0..len): the number of records, or -EBADMSG. Start from zeros.
 * Pure.
 */
struct ctp_bpftask_rec_scan {
	size_t checked; /* bytes of whole records checked */
	int bad;	/* one of them is not a record */
};
void ctp_bpftask_rec_more(struct ctp_bpftask_rec_scan *sc, const void *buf,
			  size_t len);
long ctp_bpftask_rec_end(const struct ctp_bpftask_rec_scan *sc, size_t len);
/* The next bytes of the stream checked where they are before they are
 * copied to its end (at sc->checked): a run's records, in the cache the
 * program's writes left them in, not in the stream's buffer, which the
 * copy writes without reading. Pure. */
void ctp_bpftask_rec_add(struct ctp_bpftask_rec_scan *sc, const void *recs,
			 size_t bytes);

/* Huge pages (2 MiB), in which a pass's buffer is sized from their size
 * on. */
#define CTP_BPFTASK_HUGE (2u << 20)

/*
 * The bytes a pass's buffer is mapped with: at least want, rounded up to
 * whole 4 KiB pages (to whole huge pages from CTP_BPFTASK_HUGE on), but
 * never past the first page boundary past max_bytes (a pass reads one byte
 * past its most to know it went past). Pure.
 */
size_t ctp_bpftask_buf_size(size_t want, size_t max_bytes);

/* The bytes a pass's first buffer wants for `tasks` tasks expected:
 * their records, an eighth more and 16 records of slack (saturating).
 * Pure. */
size_t ctp_bpftask_buf_want(size_t tasks);

/*
 * The count of threads in /proc/loadavg's len bytes at buf (the total of
 * its fourth field, "running/total": the kernel's nr_threads, every task
 * a pass reads): 0 with *tasks, -EBADMSG for other text, -ERANGE above
 * SIZE_MAX. Pure.
 */
int ctp_bpftask_loadavg_tasks(const char *buf, size_t len, size_t *tasks);

/*
 * Whether the /proc/<pid>/status text of len bytes at buf is a process of
 * the initial pid namespace: its NSpid line has one id (a kernel before
 * 4.1, without the line, has one namespace: true). Pure.
 */
bool ctp_bpftask_status_initial_pidns(const char *buf, size_t len);

/*
 * Whether /proc names the task of these task_struct flags and this comm
 * (16 bytes, NUL-terminated) by more than comm, so the walk list must say
 * CTP_WALK_COMM_FILE: a workqueue worker (PF_WQ_WORKER: "-<workqueue>"
 * appended), and a kernel thread whose comm fills all 15 bytes (a name
 * cut short at creation: the kernel keeps the whole one, full_name, and
 * /proc prints that, "rcu_tasks_kthread" for "rcu_tasks_kthre"). Pure.
 */
bool ctp_bpftask_comm_short(__u32 flags, const char *comm);

/* The most ctp_bpftask_comm_text writes: 16 bytes of 4, and the NUL. */
#define CTP_BPFTASK_COMM_TEXT 65

/*
 * comm (16 bytes, NUL-terminated or not) as one field of a line of text
 * into out (CTP_BPFTASK_COMM_TEXT bytes): a control byte (below 0x20, and
 * 0x7f) and the backslash as "\xNN", as show prints names, so a name
 * with a newline, a tab or an escape sequence neither splits a line nor
 * a column nor reaches the terminal. Returns out. Pure.
 */
char *ctp_bpftask_comm_text(const char *comm, char *out);

/*
 * stat's state letter (field 3) of a task whose __state and exit_state are
 * these: the kernel's __task_state_index() and task_state_to_char()
 * (include/linux/sched.h, 5.14+ constants) redone: TASK_REPORT bits of
 * both, TASK_IDLE as 'I', TASK_RTLOCK_WAIT and TASK_FROZEN as 'D', then
 * the highest bit set picks one of "RSDTtXZPI". Pure.
 */
char ctp_bpftask_state_char(__u32 state, __u32 exit_state);

/*
 * The kernel's cputime_adjust() (kernel/sched/cputime.c): scale the tick
 * samples utime and stime so they add up to rtime (sum_exec_runtime),
 * keeping each from going below *prev_utime, *prev_stime, which it updates
 * as the kernel updates prev_cputime. The result is the new *prev_utime,
 * *prev_stime (ns). stime * rtime / (utime + stime) is an exact 128-bit
 * product and floor division, as mul_u64_u64_div_u64() on x86-64. Pure.
 */
void ctp_cputime_adjust(__u64 utime, __u64 stime, __u64 rtime,
			__u64 *prev_utime, __u64 *prev_stime);

/* The kernel's nsec_to_clock_t(): ns in USER_HZ ticks (user_hz > 0), as
 * stat prints times. Pure. */
__u64 ctp_nsec_to_clock_t(__u64 ns, unsigned long user_hz);

/*
 * taskstats' hiwater_rss and hiwater_vm in bytes: the record's pages times
 * page_size. Returns 0, or -ENODATA when the record has no mm (a kernel
 * thread, or a kernel without the layout). Pure.
 */
int ctp_bpftask_hiwater(const struct ctp_bpftask_rec *r, __u64 page_size,
			__u64 *rss_bytes, __u64 *vm_bytes);

/*
 * cpu_active_mask (CPUs 0-255) as sched_getaffinity() shows it, from one
 * thread of this process: mask is what sched_getaffinity() gave for it
 * (cpus_mask & cpu_active_mask), cpus its cpus_mask from a pass taken
 * after that call and before again, possible the host's possible CPUs.
 * Where cpus covers every possible CPU, mask is cpu_active_mask itself:
 * copied to *active, returns 0. -ENODATA when cpus misses a possible CPU
 * (the thread pinned: its mask shows only part of cpu_active_mask). Pure.
 */
int ctp_bpftask_active_cpus(const __u64 mask[CTP_BPFTASK_CPU_WORDS],
			    const __u64 cpus[CTP_BPFTASK_CPU_WORDS],
			    const __u64 possible[CTP_BPFTASK_CPU_WORDS],
			    __u64 active[CTP_BPFTASK_CPU_WORDS]);

/* What turns a record into source-task.h values besides the record. */
struct ctp_bpftask_conv {
	unsigned long user_hz; /* sysconf(_SC_CLK_TCK) */
	__u64 page_size;
	int times;     /* offer utime and stime (no nohz_full CPU) */
	int delays_on; /* kernel.task_delayacct is 1: offer the block
			  families (blkio..irq) */
	int cpu_delay; /* offer the cpu family (delay accounting built
			  in, CONFIG_SCHED_INFO) */
	int cpus_on;   /* offer CPUS0..3: active holds cpu_active_mask */
	__u64 active[CTP_BPFTASK_CPU_WORDS];
	int mm_gen_on;	 /* offer MM_GEN: mm_key is random */
	__u64 mm_key[2]; /* the key MM_GEN is hashed under */
};

/* SipHash-2-4 (Aumasson and Bernstein) under key of n 64-bit words, as
 * of their 8n little-endian bytes. Pure. */
__u64 ctp_bpftask_siphash(const __u64 key[2], const __u64 *w, size_t n);

/*
 * The process source's MM_GEN (source-process.h) from the leader's
 * record: SipHash-2-4 under key of its start time, mm, exe file, exec count and
 * mmap lock sequence, never 0; 0 when the record lacks them (no
 * HAS_MM_SEQ). Keyed so that the value shows nothing of the kernel
 * address it is made of. Pure.
 */
__u64 ctp_bpftask_mm_gen(const struct ctp_bpftask_rec *leader,
			 const __u64 key[2]);

struct ctp_src_task;

/*
 * Fill *out (struct ctp_src_task of include/ctprof/source-task.h) from a
 * record: the values the record has, in the files' units, their valid
 * bits and no other (values not offered are 0). CPUS0..3 are cpus and
 * conv->active, as sched_getaffinity() ands them. utime_ticks and stime_ticks
 * are stat's (14) and (15) as the caller computed them (ctp_cputime_adjust()
 * then ctp_nsec_to_clock_t(), kept monotonic per task). Pure.
 */
void ctp_bpftask_to_src(const struct ctp_bpftask_rec *r,
			const struct ctp_bpftask_conv *conv, __u64 utime_ticks,
			__u64 stime_ticks, struct ctp_src_task *out);

/* stat's utime and stime of one task as handed out, in ticks. */
struct ctp_bpftask_ticks {
	__s32 tgid, tid;
	__u64 start_boottime; /* with tid, which task (tids are reused) */
	__u64 utime, stime;
	/* A group leader's self_exec_id (HAS_MM_SEQ), else 0: a thread that
	 * execs takes its leader's tid and start_boottime (de_thread()) but
	 * not its times, and has a higher self_exec_id. */
	__u64 exec_id;
};

/*
 * Keep what is handed out from going down: for each task of cur (sorted by
 * tgid then tid) that prev (sorted the same way, the last pass's values)
 * also has, with the same start_boottime and, where both know it (not 0),
 * the same exec_id, raise cur's utime and stime to at least prev's. The kernel
 * keeps stat's times monotonic through prev_cputime, which a /proc read updates
 * and a BPF pass never does, so cputime_adjust() against the kernel's
 * prev_cputime alone may give less than the last pass did. Pure; O(n_prev +
 * n_cur).
 */
void ctp_bpftask_keep_monotonic(const struct ctp_bpftask_ticks *prev,
				size_t n_prev, struct ctp_bpftask_ticks *cur,
				size_t n_cur);

/*
 * One process's part of a pass: the sums over the records of its threads
 * (ctp_bpftask_proc_add, in any order), from which its "process" source
 * values are made (ctp_bpftask_proc_to_src). Start from zeros with tgid
 * set.
 */
struct ctp_bpftask_proc {
	__s32 tgid;
	__u32 n;      /* records added */
	__u32 leader; /* idx of the tgid's own record (CTP_BPFTASK_PROC_LEADER)
		       */
	__u32 flags;  /* CTP_BPFTASK_PROC_* */
	__u32 seq;    /* the first record's sig_seq */
	__u32 pad;
	__u64 minflt, majflt;
	__u64 utime, stime, rtime; /* raw samples, sum_exec_runtime (ns) */
	__u64 io[7];		   /* as sig_io */
};
#define CTP_BPFTASK_PROC_LEADER	   0x1u /* the leader's record was added */
#define CTP_BPFTASK_PROC_SEQ	   0x2u /* the first record had sig_seq */
#define CTP_BPFTASK_PROC_SEQ_MIXED 0x4u /* records differ in sig_seq */

/* Add record r (its index idx, kept for the leader) to p. Pure. */
void ctp_bpftask_proc_add(struct ctp_bpftask_proc *p,
			  const struct ctp_bpftask_rec *r, __u32 idx);

/*
 * Whether p's sums are those of the threads the leader's signal block
 * leaves out, at one instant: the leader's block read whole (an even
 * sig_seq), every record with that sig_seq (no thread left the group and
 * no child was reaped between the reads of the group's records; on a
 * kernel without the sequence, not checked), and as many records as
 * nr_threads (none born before the block was read and missed, none
 * missed because it left before its turn). leader is p's leader record.
 * Pure.
 */
int ctp_bpftask_proc_whole(const struct ctp_bpftask_proc *p,
			   const struct ctp_bpftask_rec *leader);

/*
 * stat's (14) utime and (15) stime of the process in ticks, as
 * thread_group_cputime_adjusted() then nsec_to_clock_t() make them: the
 * group's raw samples and run time (the leader's block plus p's sums)
 * through ctp_cputime_adjust() against signal->prev_cputime. Pure.
 */
void ctp_bpftask_proc_ticks(const struct ctp_bpftask_proc *p,
			    const struct ctp_bpftask_rec *leader,
			    unsigned long user_hz, __u64 *utime, __u64 *stime);

struct ctp_src_process;

/*
 * Fill *out (struct ctp_src_process of include/ctprof/source-process.h)
 * from p and its leader's record (NULL: none): num_threads and the
 * children's values from the leader's block, the group's sums where
 * ctp_bpftask_proc_whole() holds (utime_ticks and stime_ticks as the caller
 * made them, ctp_bpftask_proc_ticks() kept monotonic, offered with
 * conv->times and signal->prev_cputime), their valid bits and no other.
 * Returns 0, or -ENODATA when there is no leader record with its block
 * (nothing offered). Pure.
 */
int ctp_bpftask_proc_to_src(const struct ctp_bpftask_proc *p,
			    const struct ctp_bpftask_rec *leader,
			    const struct ctp_bpftask_conv *conv,
			    __u64 utime_ticks, __u64 stime_ticks,
			    struct ctp_src_process *out);

/*
 * The "process" values of the process whose records are recs[idx[0..n))
 * (idx NULL: recs[0..n)), every one of the same tgid, as a first pass
 * makes them (no clamp across passes): ctp_bpftask_proc_add over each,
 * then ctp_bpftask_proc_ticks and ctp_bpftask_proc_to_src. Returns as the
 * latter. Pure.
 */
int ctp_bpftask_process(const struct ctp_bpftask_rec *recs, const __u32 *idx,
			size_t n, const struct ctp_bpftask_conv *conv,
			struct ctp_src_process *out);

/* A task's place in the walk order: key (tgid << 32 | tid, both positive)
 * and its record's index in the pass. */
struct ctp_bpftask_key {
	__u64 key;
	__u32 idx, pad;
};

/*
 * Sort keys[0..n) by key, ascending: (tgid, tid) order. tmp has room for n
 * keys. An LSD radix sort by bytes, a byte every key shares skipped, none
 * at all when keys are in order already, and the four low (tid) bytes'
 * none when keys are in tid order already (a pass's stream is): O(n), no
 * comparison callback. Stable. Pure.
 */
void ctp_bpftask_sort(struct ctp_bpftask_key *keys, struct ctp_bpftask_key *tmp,
		      size_t n);

/* Set value `which` of *out with its valid bit. */
void ctp_bpftask_src_put(struct ctp_src_task *out, unsigned which, __u64 v);

/*
 * The init check (README.md "The check on this kernel"): every value valid
 * in both pass (a record through ctp_bpftask_to_src) and files (the same
 * task's files, parsed, in the same layout) whose two differ gets its bit
 * in off (the valid words' layout, or'ed in). A value one side lacks is
 * not judged. Returns how many differ. Pure.
 */
unsigned ctp_bpftask_check(const struct ctp_src_task *pass,
			   const struct ctp_src_task *files, uint64_t off[2]);

/* The same for the "process" values (struct ctp_src_process). Pure. */
unsigned ctp_bpftask_proc_check(const struct ctp_src_process *pass,
				const struct ctp_src_process *files,
				uint64_t off[1]);

/*
 * The values the check judges, the bits of off (task) and poff (process)
 * set for each (or'ed in): every value with a file to compare it with (a
 * name below), never the delays, watermarks or maps generation, which no
 * file of the check offers. A check that could not run turns these off.
 * Returns how many. Pure.
 */
unsigned ctp_bpftask_judged(uint64_t off[2], uint64_t poff[1]);

/* "stat utime", "io rchar", ...: the file and its name for a value the
 * check sees (stat, status, io, schedstat), else NULL. */
const char *ctp_bpftask_value_name(unsigned which);

/* The value a name means: the whole ("stat utime") or its second word
 * ("utime"); -1 when none. Pure. */
int ctp_bpftask_value_by_name(const char *name);

/* "process stat utime", "process io rchar", ...: the name of a "process"
 * value (the check's, the log's), else NULL. */
const char *ctp_bpftask_proc_value_name(unsigned which);

/* The "process" value a whole name means, -1 when none. Pure. */
int ctp_bpftask_proc_value_by_name(const char *name);
#endif

#endif /* CTP_BPFTASK_REC_H */
