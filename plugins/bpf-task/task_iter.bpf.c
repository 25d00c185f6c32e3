/*
 * iter/task: one struct ctp_bpftask_rec per task of the reader's pid
 * namespace, written with bpf_seq_write. ctx->task is a BTF-typed pointer,
 * so members are read directly (the verifier checks each load against the
 * kernel's BTF; no probe-read copy) at offsets libbpf relocates (CO-RE,
 * task_core.h). Members a kernel may lack are guarded by
 * bpf_core_field_exists and flagged in rec.present. The record (696 bytes)
 * is built in a per-CPU map value (the BPF stack holds 512 bytes), every
 * member written once, no clearing first: a group the kernel lacks is
 * written as zeros.
 *
 * The task's pointer members (signal, mm, delays, cgroups) are each loaded
 * once, before any branch: on 6.3+ the verifier looks up
 * "task_struct__safe_trusted" and two to three more such names in
 * vmlinux's BTF, each by a linear search of its ~127,000 types (~0.4 ms
 * here), at every visit of a load of a pointer member from the trusted
 * ctx->task (check_ptr_to_btf_access()). Built with CTP_BPFTASK_CAST (the
 * light skeleton's first object; 6.2+), they are loaded through
 * bpf_rdonly_cast(t), an untrusted alias of the same task that the
 * verifier inlines into a move and from which it looks nothing up; the
 * pointees are read as before (faulting-safe loads), and t's own members
 * still by plain loads.
 */
#include <linux/bpf.h>

#include "task_core.h"
#include "bpftask_rec.h"
#include "bpfcg.h"
#include "cgroup_core.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#ifdef CTP_BPFTASK_CAST
/* kernel/bpf/helpers.c, 6.2+: obj as an untrusted pointer to btf_id. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#endif

/* The alias of t its pointer members are loaded through (above). */
static __always_inline struct task_struct *walk_of(struct task_struct *t)
{
#ifdef CTP_BPFTASK_CAST
	return bpf_rdonly_cast(t, bpf_core_type_id_kernel(struct task_struct));
#else
	return t;
#endif
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctp_bpftask_rec);
} scratch SEC(".maps");

/* Set by user space before a pass (bpftask.c): nonzero when nobody takes
 * the block delay families (kernel.task_delayacct is 0), so the pass does
 * not chase each task's task_delay_info. */
int ctp_skip_delays;

/* The css_sets the pass met (bpfcg.h): LRU, so a host with more than fit
 * loses only the oldest, and a stale entry is rewritten, never deleted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct ctp_bpfcg_set);
} cgsets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctp_bpfcg_set);
} cg_scratch SEC(".maps");

/* The css_set this CPU noted or found last, and in which pass: the next
 * task (the walk is in tid order, a process's threads mostly one after the
 * other) usually shares it, and then needs no map lookup. */
struct cg_last {
	__u64 key, gen;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_last);
} cg_last SEC(".maps");

/* Set by user space before a pass (bpftask.c): the pass's number, never
 * 0; 0 notes no css_set. */
__u64 ctp_cg_gen;

/* Family f of task_delay_info d: count and total when the kernel has
 * them, max and min when it has those too (6.16+). A task without its
 * task_delay_info (d NULL: a kernel thread started before
 * delayacct_init()) has zeros, what the reply says. */
#define DELAY(r, d, f, name)                                                   \
	do {                                                                   \
		if (bpf_core_field_exists(d->name##_count)) {                  \
			r->delays[f][0] = d ? d->name##_count : 0;             \
			r->delays[f][1] = d ? d->name##_delay : 0;             \
			r->present |= CTP_BPFTASK_HAS_DELAY(f);                \
		} else {                                                       \
			r->delays[f][0] = 0;                                   \
			r->delays[f][1] = 0;                                   \
		}                                                              \
		if (bpf_core_field_exists(d->name##_delay_max)) {              \
			r->delays[f][2] = d ? d->name##_delay_max : 0;         \
			r->delays[f][3] = d ? d->name##_delay_min : 0;         \
			r->present |= CTP_BPFTASK_HAS_DELAY_MAXMIN(f);         \
		} else {                                                       \
			r->delays[f][2] = 0;                                   \
			r->delays[f][3] = 0;                                   \
		}                                                              \
	} while (0)

/* stats_lock's sequence of signal_struct s, 5.10+ or before (seqlock_t
 * holding the seqcount_t itself); 0 with has clear where neither. */
static __always_inline __u32 sig_seq(struct signal_struct *s, int *has)
{
	struct signal_struct___old *o = (void *)s;

	*has = 1;
	if (bpf_core_field_exists(s->stats_lock.seqcount.seqcount.sequence))
		return s->stats_lock.seqcount.seqcount.sequence;
	if (bpf_core_field_exists(o->stats_lock.seqcount.sequence))
		return o->stats_lock.seqcount.sequence;
	*has = 0;
	return 0;
}

/*
 * The leader's signal_struct block: what /proc/<tgid>/stat and io add to
 * the live threads' counters (fs/proc/array.c do_task_stat() with whole,
 * fs/proc/base.c do_io_accounting(), kernel/sched/cputime.c
 * thread_group_cputime_adjusted()). seq is stats_lock's sequence read
 * before the task's first counter; it is read again after the block
 * (compiler barriers between): a block an exiting thread or a reaped
 * child wrote into meanwhile is marked by an odd sig_seq.
 */
static __always_inline void sig_block(struct ctp_bpftask_rec *r,
				      struct signal_struct *s, __u32 seq,
				      int has)
{
	r->present |= CTP_BPFTASK_HAS_SIG;
	r->nr_threads = (__u32)s->nr_threads;
	r->sig_utime = s->utime;
	r->sig_stime = s->stime;
	r->sig_rtime = s->sum_sched_runtime;
	r->sig_minflt = s->min_flt;
	r->sig_majflt = s->maj_flt;
	r->sig_cminflt = s->cmin_flt;
	r->sig_cmajflt = s->cmaj_flt;
	r->sig_cutime = s->cutime;
	r->sig_cstime = s->cstime;
	if (bpf_core_field_exists(s->prev_cputime.utime)) {
		r->present |= CTP_BPFTASK_HAS_SIG_PREV;
		r->sig_prev_utime = s->prev_cputime.utime;
		r->sig_prev_stime = s->prev_cputime.stime;
	} else {
		r->sig_prev_utime = r->sig_prev_stime = 0;
	}
	if (bpf_core_field_exists(s->ioac.rchar)) {
		r->sig_io[0] = s->ioac.rchar;
		r->sig_io[1] = s->ioac.wchar;
		r->sig_io[2] = s->ioac.syscr;
		r->sig_io[3] = s->ioac.syscw;
	} else {
		r->sig_io[0] = r->sig_io[1] = r->sig_io[2] = r->sig_io[3] = 0;
	}
	if (bpf_core_field_exists(s->ioac.read_bytes)) {
		r->sig_io[4] = s->ioac.read_bytes;
		r->sig_io[5] = s->ioac.write_bytes;
		r->sig_io[6] = s->ioac.cancelled_write_bytes;
	} else {
		r->sig_io[4] = r->sig_io[5] = r->sig_io[6] = 0;
	}
	asm volatile("" ::: "memory");
	if (has && sig_seq(s, &has) != seq)
		seq |= 1;
	r->sig_seq = seq;
}

/* Word w of cpus_mask, 0 where the kernel's NR_CPUS has no such word. */
#define CPUS_WORD(r, t, w)                                                     \
	(r)->cpus[w] = bpf_core_field_exists((t)->cpus_mask.bits[w])           \
			       ? (t)->cpus_mask.bits[w]                        \
			       : 0

#define CTP_PF_EXITING 0x4u /* include/linux/sched.h */

/*
 * The key of t's css_set cs (t->cgroups, NULL where the kernel has none),
 * noted in cgsets for this pass with the cgroup it links in every v1
 * hierarchy (proc_cgroup_show()'s task_cgroup_from_root() walks the same
 * links); 0 when it cannot be given: no cgroups, an exiting task (its
 * file prints "/" in every v1 hierarchy), more than CTP_BPFCG_MAX_LINKS
 * hierarchies, a task moved while its css_set was walked. The links are
 * read with probe reads (a list_head's container is no BTF pointer), once
 * per css_set and pass.
 */
static __always_inline __u64 cg_set(struct task_struct *task,
				    struct css_set___cg *cs)
{
	struct task_struct___cg *t = (void *)task;
	struct ctp_bpfcg_set *v, *s;
	struct cg_last *last;
	struct list_head___cg *pos, *head;
	__u64 key, gen = ctp_cg_gen;
	__u32 zero = 0, n = 0;
	int i;

	if (!gen || !cs || (task->flags & CTP_PF_EXITING))
		return 0;
	key = (__u64)(unsigned long)cs;
	last = bpf_map_lookup_elem(&cg_last, &zero);
	if (!last)
		return 0;
	if (last->key == key && last->gen == gen)
		return key;
	v = bpf_map_lookup_elem(&cgsets, &key);
	if (v && v->gen == gen) {
		last->key = key;
		last->gen = gen;
		return key;
	}
	s = bpf_map_lookup_elem(&cg_scratch, &zero);
	if (!s)
		return 0;
	head = (void *)((char *)cs +
			bpf_core_field_offset(struct css_set___cg, cgrp_links));
	pos = BPF_CORE_READ(cs, cgrp_links.next);
	/* One link a hierarchy, the default one's too (user space leaves it
	 * out): stored at the loop's own index, so the verifier sees one
	 * path through the loop, not one per count of v1 links. */
	for (i = 0; i < CTP_BPFCG_MAX_LINKS; i++) {
		struct cgrp_cset_link___cg *l;
		struct cgroup___cg *c;

		if (!pos || pos == head)
			break;
		l = (void *)((char *)pos -
			     bpf_core_field_offset(struct cgrp_cset_link___cg,
						   cgrp_link));
		c = BPF_CORE_READ(l, cgrp);
		s->p[i].hier = (__u32)BPF_CORE_READ(c, root, hierarchy_id);
		s->p[i].pad = 0;
		s->p[i].id = BPF_CORE_READ(c, kn, id);
		n = i + 1;
		pos = BPF_CORE_READ(pos, next);
	}
	if (pos != head)
		return 0;
	/* Still its css_set: the links were not freed under the walk (a
	 * css_set is put after its last task left it). A probe read: a
	 * second load of the member would be a second lookup (above). */
	asm volatile("" ::: "memory");
	if (BPF_CORE_READ(t, cgroups) != cs)
		return 0;
	s->gen = gen;
	s->n = n;
	s->pad = 0;
	if (bpf_map_update_elem(&cgsets, &key, s, BPF_ANY) < 0)
		return 0;
	last->key = key;
	last->gen = gen;
	return key;
}

/* The scheduler's values: run delay and count, the state, the CPU and
 * prev_cputime, each group flagged where the kernel has it. */
static __always_inline void sched_part(struct ctp_bpftask_rec *r,
				       struct task_struct *t)
{
	if (bpf_core_field_exists(t->sched_info)) {
		r->present |= CTP_BPFTASK_HAS_SCHED_INFO;
		r->run_delay = t->sched_info.run_delay;
		r->pcount = t->sched_info.pcount;
	} else {
		r->run_delay = 0;
		r->pcount = 0;
	}
	if (bpf_core_field_exists(t->sched_info.max_run_delay)) {
		r->present |= CTP_BPFTASK_HAS_RUN_DELAY_MAXMIN;
		r->run_delay_max = t->sched_info.max_run_delay;
		r->run_delay_min = t->sched_info.min_run_delay;
	} else {
		r->run_delay_max = 0;
		r->run_delay_min = 0;
	}
	if (bpf_core_field_exists(t->__state)) {
		r->present |= CTP_BPFTASK_HAS_STATE;
		r->state = t->__state;
		r->exit_state = (__u32)t->exit_state;
	} else {
		r->state = r->exit_state = 0;
	}
	if (bpf_core_field_exists(t->thread_info.cpu)) {
		r->present |= CTP_BPFTASK_HAS_CPU;
		r->cpu = t->thread_info.cpu;
	} else if (bpf_core_field_exists(
			   ((struct task_struct___cpu *)t)->cpu)) {
		r->present |= CTP_BPFTASK_HAS_CPU;
		r->cpu = ((struct task_struct___cpu *)t)->cpu;
	} else {
		r->cpu = 0;
	}
	if (bpf_core_field_exists(t->prev_cputime)) {
		r->present |= CTP_BPFTASK_HAS_PREV;
		r->prev_utime = t->prev_cputime.utime;
		r->prev_stime = t->prev_cputime.stime;
	} else {
		r->prev_utime = r->prev_stime = 0;
	}
}

/* The task's own I/O counters (task->ioac), in two groups. */
static __always_inline void io_part(struct ctp_bpftask_rec *r,
				    struct task_struct *t)
{
	if (bpf_core_field_exists(t->ioac.rchar)) {
		r->present |= CTP_BPFTASK_HAS_IO_XACCT;
		r->rchar = t->ioac.rchar;
		r->wchar = t->ioac.wchar;
		r->syscr = t->ioac.syscr;
		r->syscw = t->ioac.syscw;
	} else {
		r->rchar = r->wchar = r->syscr = r->syscw = 0;
	}
	if (bpf_core_field_exists(t->ioac.read_bytes)) {
		r->present |= CTP_BPFTASK_HAS_IO_BYTES;
		r->read_bytes = t->ioac.read_bytes;
		r->write_bytes = t->ioac.write_bytes;
		r->cancelled_write_bytes = t->ioac.cancelled_write_bytes;
	} else {
		r->read_bytes = r->write_bytes = r->cancelled_write_bytes = 0;
	}
}

/* The high-water marks of mm (t->mm) and the CPU mask. */
static __always_inline void mm_part(struct ctp_bpftask_rec *r,
				    struct task_struct *t, struct mm_struct *mm)
{
	/* get_task_mm() gives a kernel thread no mm (it may borrow one). */
	if (mm && !(r->flags & CTP_PF_KTHREAD) &&
	    bpf_core_field_exists(mm->rss_stat[0].count)) {
		r->present |= CTP_BPFTASK_HAS_MM;
		/* rss_stat[MM_FILEPAGES, MM_ANONPAGES, MM_SHMEMPAGES] */
		ctp_bpftask_mm_marks(
			mm->hiwater_rss, mm->hiwater_vm, mm->total_vm,
			mm->rss_stat[0].count, mm->rss_stat[1].count,
			mm->rss_stat[3].count, &r->hiwater_rss, &r->hiwater_vm);
	} else {
		r->hiwater_rss = r->hiwater_vm = 0;
	}
	if (bpf_core_field_exists(t->cpus_mask.bits[0])) {
		r->present |= CTP_BPFTASK_HAS_CPUS;
		CPUS_WORD(r, t, 0);
		CPUS_WORD(r, t, 1);
		CPUS_WORD(r, t, 2);
		CPUS_WORD(r, t, 3);
	} else {
		__builtin_memset(r->cpus, 0, sizeof(r->cpus));
	}
}

/* The address space's generation (bpftask_rec.h, version 6): the mm,
 * its executable, the exec count and the mmap lock's sequence, of a group
 * leader with an mm of its own (a kernel thread may borrow one): the
 * process source reads the leader's alone, so no other thread's record
 * loads its self_exec_id's cache line. */
static __always_inline void mm_seq_part(struct ctp_bpftask_rec *r,
					struct task_struct *t,
					struct mm_struct *mm)
{
	struct mm_struct___seqc *sq = (void *)mm;
	struct mm_struct___int *in = (void *)mm;

	r->mm_pad = 0;
	r->mm_id = r->exe_id = r->exec_id = 0;
	r->mm_seq = 0;
	if (!mm || (r->flags & CTP_PF_KTHREAD) || r->pid != r->tgid)
		return;
	if (bpf_core_field_exists(sq->mm_lock_seq.sequence))
		r->mm_seq = sq->mm_lock_seq.sequence;
	else if (bpf_core_field_exists(in->mm_lock_seq))
		r->mm_seq = (__u32)in->mm_lock_seq;
	else
		return;
	r->present |= CTP_BPFTASK_HAS_MM_SEQ;
	r->mm_id = (__u64)mm;
	r->exe_id = (__u64)mm->exe_file;
	r->exec_id = t->self_exec_id;
}

/*
 * Task t's record into r, every member written: the one fill of both
 * programs (the iterator's below writes it with bpf_seq_write, the
 * open-coded pass's straight into its array). In the object with the
 * open-coded pass it is a global function, which the verifier checks
 * once, on its own (t a trusted task: the argument's tag, 6.8+), instead
 * of at every step of the pass's nested loops it would be inlined in (33
 * times the instructions processed); elsewhere inlined, as before.
 */
#ifdef CTP_BPFTASK_WALK
__attribute__((noinline)) int
task_fill(struct ctp_bpftask_rec *r,
	  struct task_struct *t __attribute__((btf_decl_tag("arg:trusted"))))
#else
static __always_inline int task_fill(struct ctp_bpftask_rec *r,
				     struct task_struct *t)
#endif
{
	struct task_delay_info___iter *d = NULL;
	struct css_set___cg *cs = NULL;
	struct signal_struct *sig;
	struct task_struct *u;
	struct mm_struct *mm;
	__u32 sig_seq0;
	int has_seq = 0;

	if (!r)
		return 0; /* a global function's pointer may be NULL */
	r->size = sizeof(*r);
	r->version = CTP_BPFTASK_REC_VERSION;
	r->present = 0;
	r->tgid = t->tgid;
	r->pid = t->pid;
	/* The pointer members, each loaded once (above). */
	u = walk_of(t);
	sig = u->signal;
	mm = u->mm;
	if (bpf_core_field_exists(t->delays))
		d = u->delays;
	if (bpf_core_field_exists(((struct task_struct___cg *)t)->cgroups))
		cs = ((struct task_struct___cg *)u)->cgroups;
	/* stats_lock's sequence before any counter of the task is read: a
	 * thread that leaves after this moves its counters into the signal
	 * block and bumps it, which a later record of the group shows. */
	sig_seq0 = sig ? sig_seq(sig, &has_seq) : 0;
	asm volatile("" ::: "memory");
	r->start_boottime = t->start_boottime;
	r->minflt = t->min_flt;
	r->majflt = t->maj_flt;
	r->nvcsw = t->nvcsw;
	r->nivcsw = t->nivcsw;
	r->sum_exec_runtime = t->se.sum_exec_runtime;
	r->utime = t->utime;
	r->stime = t->stime;
	r->prio = t->prio;
	r->static_prio = t->static_prio;
	r->rt_priority = t->rt_priority;
	r->policy = t->policy;
	r->flags = t->flags;
	__builtin_memcpy(r->comm, t->comm, sizeof(r->comm));
	sched_part(r, t);
	io_part(r, t);
	/* delayacct_add_tsk() reads nothing of task_delay_info when the task
	 * has none: the reply's families stay 0, offered as such. */
	if (bpf_core_field_exists(t->delays) && !ctp_skip_delays) {
		DELAY(r, d, CTP_BPFTASK_FAM_BLKIO, blkio);
		DELAY(r, d, CTP_BPFTASK_FAM_SWAPIN, swapin);
		DELAY(r, d, CTP_BPFTASK_FAM_FREEPAGES, freepages);
		DELAY(r, d, CTP_BPFTASK_FAM_THRASHING, thrashing);
		DELAY(r, d, CTP_BPFTASK_FAM_COMPACT, compact);
		DELAY(r, d, CTP_BPFTASK_FAM_WPCOPY, wpcopy);
		DELAY(r, d, CTP_BPFTASK_FAM_IRQ, irq);
	} else {
		__builtin_memset(r->delays, 0, sizeof(r->delays));
	}
	mm_part(r, t, mm);
	/* The group's totals on the leader's record only; every record
	 * carries stats_lock's sequence, so user space tells a group no
	 * thread left during the pass (README.md "The process source"). */
	if (has_seq)
		r->present |= CTP_BPFTASK_HAS_SIG_SEQ;
	if (sig && r->pid == r->tgid) {
		sig_block(r, sig, sig_seq0, has_seq);
	} else {
		r->sig_seq = sig_seq0;
		r->nr_threads = 0;
		__builtin_memset(
			&r->sig_utime, 0,
			sizeof(*r) - __builtin_offsetof(struct ctp_bpftask_rec,
							sig_utime));
	}
	r->cg_set = cg_set(t, cs);
	if (r->cg_set)
		r->present |= CTP_BPFTASK_HAS_CG_SET;
	mm_seq_part(r, t, mm);
	return 0;
}

SEC("iter/task")
int ctp_task_rec(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct ctp_bpftask_rec *r;
	__u32 zero = 0;

	if (!t)
		return 0; /* the end of the walk */
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	task_fill(r, t);
	bpf_seq_write(seq, r, sizeof(*r));
	return 0;
}

#ifdef CTP_BPFTASK_WALK
#include "task_walk.h"
#endif
