/*
 * The open-coded pass (built with CTP_BPFTASK_WALK, 6.8+, in the object
 * the light skeleton loads first; included at the end of task_iter.bpf.c,
 * so it shares its maps and its one fill, task_fill()). A sleepable
 * SEC("syscall") program that user space runs with BPF_PROG_TEST_RUN
 * (bpftask.c walk_pass()), in two modes:
 *
 * - list (ctp_walk_mode 0): every process's tgid into walk_pids, walking
 *   the processes (BPF_TASK_ITER_ALL_PROCS), a few loads each;
 * - threads (1): the processes walk_pids[first..end) in turn, each found
 *   by its tgid (bpf_task_from_pid, the initial pid namespace's ids) and
 *   its threads walked (BPF_TASK_ITER_PROC_THREADS) into walk_recs, at
 *   most ctp_walk_k records a run. A process that does not fit in what is
 *   left of the run is left for the next one (ctp_walk_next); one that
 *   does not fit in an empty run is named in ctp_walk_big (user space
 *   walks it with the iterator's pid parameter).
 *
 * Why runs: each run holds one RCU read section (the iterators need it),
 * and with preempt=none the CPU does not schedule in it; bounded by k
 * records (and CTP_BPFTASK_WALK_RUN_PROCS processes) a run, it is bounded in
 * time, where one walk of the whole host is not. No pid lookup per task
 * (iter/task does two per step, find_ge_pid and get_pid_task), one per process.
 *
 * The counters of a run (the record's index) live in the .bss and are
 * loaded and stored each step: a counter in a register would be a known
 * value to the verifier at every step of the loops, which then never meet
 * a state they have seen and are walked to the verifier's limit.
 */
#ifndef CTP_BPFTASK_TASK_WALK_H
#define CTP_BPFTASK_TASK_WALK_H

#include "bpftask_walk.h"

/* kernel/bpf/task_iter.c, 6.7+ (enum bpf_iter_task_type). */
#define CTP_TASK_ITER_ALL_PROCS	   0
#define CTP_TASK_ITER_PROC_THREADS 2

/* The task iterator's state on the BPF stack, as the kernel's BTF sizes
 * it (include/uapi/linux/bpf.h, 6.7+). */
struct bpf_iter_task {
	__u64 __opaque[3];
} __attribute__((aligned(8)));

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym;
extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

/* The tgids of the list run (user space sorts them in place): 64-bit
 * values, as a mapped array lays its values 8 bytes apart. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CTP_BPFTASK_WALK_PROCS);
	__type(key, __u32);
	__type(value, __u64);
} walk_pids SEC(".maps");

/* The records of a threads run, read by user space in place. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CTP_BPFTASK_WALK_K);
	__type(key, __u32);
	__type(value, struct ctp_bpftask_rec);
} walk_recs SEC(".maps");

/* In: the mode, the processes of a threads run and its records' limit
 * (at most CTP_BPFTASK_WALK_K), the list's (at most
 * CTP_BPFTASK_WALK_PROCS). Out: what the run did. */
__u32 ctp_walk_mode, ctp_walk_first, ctp_walk_end, ctp_walk_k;
__u32 ctp_walk_procs;
__u32 ctp_walk_n;    /* list: tgids noted; threads: records written */
__u32 ctp_walk_over; /* list: more processes than walk_pids holds */
__u32 ctp_walk_next; /* threads: the first process not walked */
__u32 ctp_walk_big;  /* threads: a process of more than k threads, or 0 */
__u64 ctp_walk_ns;   /* the run's RCU section, ns */

static __always_inline void walk_list(void)
{
	struct bpf_iter_task it;
	struct task_struct *p;

	ctp_walk_n = 0;
	ctp_walk_over = 0;
	bpf_iter_task_new(&it, NULL, CTP_TASK_ITER_ALL_PROCS);
	while ((p = bpf_iter_task_next(&it))) {
		__u32 n = ctp_walk_n;
		__s32 tgid = p->tgid;
		__u64 *slot;

		if (!tgid)
			continue; /* init_task, the idle task: no pid */
		slot = n < ctp_walk_procs ? bpf_map_lookup_elem(&walk_pids, &n)
					  : NULL;
		if (!slot) {
			ctp_walk_over = 1;
			break;
		}
		*slot = (__u32)tgid;
		ctp_walk_n = n + 1;
	}
	bpf_iter_task_destroy(&it);
}

/* The threads of process p into walk_recs from ctp_walk_n on: 0, or 1
 * when they do not fit below k. */
static __always_inline int walk_threads(struct task_struct *p, __u32 k)
{
	struct bpf_iter_task it;
	struct task_struct *t;
	int over = 0;

	bpf_iter_task_new(&it, p, CTP_TASK_ITER_PROC_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		__u32 n = ctp_walk_n;
		struct ctp_bpftask_rec *r;

		if (n >= k || !(r = bpf_map_lookup_elem(&walk_recs, &n))) {
			over = 1;
			break;
		}
		task_fill(r, t);
		ctp_walk_n = n + 1;
	}
	bpf_iter_task_destroy(&it);
	return over;
}

/* Process first + idx of walk_pids (bpf_loop's callback): its threads,
 * 0 to go on to the next, 1 to end the run. */
static long walk_proc(__u64 idx, void *ctx)
{
	__u32 k = *(__u32 *)ctx, i = ctp_walk_first + (__u32)idx;
	__u32 n0 = ctp_walk_n, nt;
	__u64 *tgid;
	struct task_struct *p;
	int over;

	tgid = bpf_map_lookup_elem(&walk_pids, &i);
	if (!tgid)
		return 1;
	p = bpf_task_from_pid((__s32)*tgid);
	if (!p)
		return 0; /* exited since the list run */
	/* Not the leader: the process exited and its id names a thread of
	 * another now, whose threads from this one on its own process
	 * gives. */
	if (p->pid != (__s32)*tgid || p->tgid != (__s32)*tgid) {
		bpf_task_release(p);
		return 0;
	}
	nt = (__u32)walk_of(p)->signal->nr_threads;
	if (nt > k) {
		/* Never fits: the records before it are kept. */
		bpf_task_release(p);
		ctp_walk_big = (__u32)*tgid;
		ctp_walk_next = i + 1;
		return 1;
	}
	over = n0 + nt > k || walk_threads(p, k);
	bpf_task_release(p);
	if (!over)
		return 0;
	/* Its records, if any, taken back: a process is walked whole, in
	 * one run. */
	ctp_walk_n = n0;
	ctp_walk_next = i;
	if (n0 == 0) {
		ctp_walk_big = (__u32)*tgid;
		ctp_walk_next = i + 1;
	}
	return 1;
}

/* The processes walk_pids[first..end), at most CTP_BPFTASK_WALK_RUN_PROCS of
 * them and their threads' k records, by bpf_loop (a helper: no kfunc for the
 * loader to look up, as the numbers iterator's three would be). */
static __always_inline void walk_procs(void)
{
	__u32 k = ctp_walk_k, first = ctp_walk_first, end = ctp_walk_end;

	if (k > CTP_BPFTASK_WALK_K)
		k = CTP_BPFTASK_WALK_K;
	/* At most CTP_BPFTASK_WALK_RUN_PROCS processes a run too: each
	 * costs a lookup, one that exited gives no record. */
	if (end > first + CTP_BPFTASK_WALK_RUN_PROCS)
		end = first + CTP_BPFTASK_WALK_RUN_PROCS;
	ctp_walk_n = 0;
	ctp_walk_big = 0;
	ctp_walk_next = end;
	if (end > first)
		bpf_loop(end - first, walk_proc, &k, 0);
}

SEC("syscall")
int ctp_walk(void *ctx)
{
	__u64 t0;

	(void)ctx;
	bpf_rcu_read_lock();
	t0 = bpf_ktime_get_ns();
	if (ctp_walk_mode == 0)
		walk_list();
	else
		walk_procs();
	ctp_walk_ns = bpf_ktime_get_ns() - t0;
	bpf_rcu_read_unlock();
	return 0;
}

#endif /* CTP_BPFTASK_TASK_WALK_H */
