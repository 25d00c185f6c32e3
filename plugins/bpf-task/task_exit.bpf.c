/*
 * tp_btf/sched_switch: the last switch away from a thread that exited
 * (prev_state TASK_DEAD, set by do_task_dead() just before its final
 * __schedule()). Everything of the thread is final here: its run time was
 * charged by put_prev_task() before the tracepoint, and exit_mm(),
 * exit_files() and the rest of do_exit() ran before (README.md, "Exited
 * tasks"). One struct ctp_bpfexit_rec per exit goes to the ring buffer;
 * when the ring is full the record's sums go to a per-process total in
 * `sums` instead, under the generation user space is not draining, so no
 * sum is lost, only the detail, and `folded` counts how many.
 *
 * The test every context switch pays is the first one: the tracepoint's
 * own prev_state argument against TASK_DEAD, no memory load.
 */
#include "task_core.h"
#include "exit_rec.h"

#include <linux/bpf.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define TASK_DEAD 0x80 /* include/linux/sched.h */

/* What this program reads beyond task_core.h's task_struct members (its
 * exit_code, real_parent and cgroups are declared there). */
struct kernfs_node {
	__u64 id;
} CORE;

struct cgroup {
	struct kernfs_node *kn;
} CORE;

struct css_set {
	struct cgroup *dfl_cgrp;
} CORE;

/* struct task_delay_info___iter: task_core.h's. */

/* Set by the loader before load: the ring's size in bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} ring SEC(".maps");

/* Per-process totals of what the ring had no room for (exit_rec.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ctp_bpfexit_key);
	__type(value, struct ctp_bpfexit_sum);
} sums SEC(".maps");

/* A record's room when the ring has none. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctp_bpfexit_rec);
} scratch SEC(".maps");

/* Shared with user space through the skeleton's mmap of .bss. gen: the
 * generation of `sums` written to (user space flips it, then waits for
 * inflight[old] to be 0 before it drains the old one). */
__u32 gen;
__u64 inflight[2];
__u64 folded;	 /* records summed into `sums` (detail lost) */
__u64 lost_sums; /* records neither sent nor summed: `sums` full */

#define FAM(f, name)                                                           \
	do {                                                                   \
		if (bpf_core_field_exists(d->name##_delay)) {                  \
			r->delay[f][0] = d->name##_count;                      \
			r->delay[f][1] = d->name##_delay;                      \
			r->present |= CTP_BPFEXIT_HAS_DELAY(f);                \
		}                                                              \
		if (bpf_core_field_exists(d->name##_delay_max)) {              \
			r->delay[f][2] = d->name##_delay_max;                  \
			r->delay[f][3] = d->name##_delay_min;                  \
			r->present |= CTP_BPFEXIT_HAS_MAXMIN(f);               \
		}                                                              \
	} while (0)

static __always_inline void fill(struct ctp_bpfexit_rec *r,
				 struct task_struct *t)
{
	struct task_delay_info___iter *d;
	struct css_set *cs;

	__builtin_memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->version = CTP_BPFEXIT_REC_VERSION;
	r->exit_boottime = bpf_ktime_get_boot_ns();
	r->tgid = t->tgid;
	r->pid = t->pid;
	r->ppid = t->real_parent ? t->real_parent->tgid : 0;
	r->exit_code = t->exit_code;
	r->start_boottime = t->start_boottime;
	r->utime = t->utime;
	r->stime = t->stime;
	r->sum_exec_runtime = t->se.sum_exec_runtime;
	r->minflt = t->min_flt;
	r->majflt = t->maj_flt;
	r->nvcsw = t->nvcsw;
	r->nivcsw = t->nivcsw;
	if (bpf_core_field_exists(t->ioac.rchar)) {
		r->present |= CTP_BPFEXIT_HAS_IO_XACCT;
		r->rchar = t->ioac.rchar;
		r->wchar = t->ioac.wchar;
		r->syscr = t->ioac.syscr;
		r->syscw = t->ioac.syscw;
	}
	if (bpf_core_field_exists(t->ioac.read_bytes)) {
		r->present |= CTP_BPFEXIT_HAS_IO_BYTES;
		r->read_bytes = t->ioac.read_bytes;
		r->write_bytes = t->ioac.write_bytes;
		r->cancelled_write_bytes = t->ioac.cancelled_write_bytes;
	}
	cs = t->cgroups;
	if (cs && cs->dfl_cgrp && cs->dfl_cgrp->kn) {
		r->cgroup_id = cs->dfl_cgrp->kn->id;
		r->present |= CTP_BPFEXIT_HAS_CGROUP;
	}
	if (bpf_core_field_exists(t->sched_info)) {
		r->delay[0][0] = t->sched_info.pcount;
		r->delay[0][1] = t->sched_info.run_delay;
		r->present |= CTP_BPFEXIT_HAS_DELAY(0);
		if (bpf_core_field_exists(t->sched_info.max_run_delay)) {
			r->delay[0][2] = t->sched_info.max_run_delay;
			r->delay[0][3] = t->sched_info.min_run_delay;
			r->present |= CTP_BPFEXIT_HAS_MAXMIN(0);
		}
	}
	d = bpf_core_field_exists(t->delays) ? t->delays : 0;
	if (d) {
		FAM(1, blkio);
		FAM(2, swapin);
		FAM(3, freepages);
		FAM(4, thrashing);
		FAM(5, compact);
		FAM(6, wpcopy);
		FAM(7, irq);
	}
	__builtin_memcpy(r->comm, t->comm, sizeof(r->comm));
	r->comm[15] = 0;
}

#define READ_GEN() (*(volatile __u32 *)&gen & 1)

/* inflight[g] += d, as a fetching (fully ordered) atomic. */
static __always_inline void enter(__u32 g, __s64 d)
{
	__u64 old = __sync_fetch_and_add(&inflight[g & 1], d);

	barrier_var(old);
}

#define ADD(m) __sync_fetch_and_add(&s->m, r->m)

/* The record's sums into its process's total of generation g. */
static __always_inline void sum_into(const struct ctp_bpfexit_rec *r, __u32 g)
{
	struct ctp_bpfexit_key k = {.tgid = (__u32)r->tgid, .gen = g};
	struct ctp_bpfexit_sum *s = bpf_map_lookup_elem(&sums, &k);

	if (!s) {
		struct ctp_bpfexit_sum n;

		__builtin_memset(&n, 0, sizeof(n));
		n.present = r->present;
		n.ppid = r->ppid;
		n.cgroup_id = r->cgroup_id;
		__builtin_memcpy(n.comm, r->comm, sizeof(n.comm));
		/* Zeros first, then the adds below: one path for a new
		 * total and a racing one. */
		bpf_map_update_elem(&sums, &k, &n, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&sums, &k);
		if (!s) {
			__sync_fetch_and_add(&lost_sums, 1);
			return;
		}
	}
	__sync_fetch_and_add(&s->threads, 1);
	if (r->exit_boottime > s->exit_boottime)
		s->exit_boottime = r->exit_boottime;
	ADD(utime);
	ADD(stime);
	ADD(sum_exec_runtime);
	ADD(minflt);
	ADD(majflt);
	ADD(nvcsw);
	ADD(nivcsw);
	ADD(rchar);
	ADD(wchar);
	ADD(syscr);
	ADD(syscw);
	ADD(read_bytes);
	ADD(write_bytes);
	ADD(cancelled_write_bytes);
	for (int f = 0; f < CTP_BPFEXIT_N_FAMILIES; f++) {
		__sync_fetch_and_add(&s->delay[f][0], r->delay[f][0]);
		__sync_fetch_and_add(&s->delay[f][1], r->delay[f][1]);
	}
	__sync_fetch_and_add(&folded, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ctp_task_exit, _Bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct task_struct *t = prev;
	struct ctp_bpfexit_rec *r;
	__u32 zero = 0, g;

	if (prev_state != TASK_DEAD)
		return 0;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (r) {
		fill(r, t);
		bpf_ringbuf_submit(r, 0);
		return 0;
	}
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	fill(r, t);
	/* Announce the write in the generation read, then read it again: a
	 * flip in between sends this one to the new generation (user space
	 * flips, then waits for the old one's count to be 0). */
	g = READ_GEN();
	enter(g, 1);
	if (READ_GEN() != g) {
		enter(g, -1);
		g ^= 1;
		enter(g, 1);
	}
	sum_into(r, g);
	enter(g, -1);
	return 0;
}
