/*
 * iter/task: one struct ctp_bpftask_rec per task of the reader's pid
 * namespace, written with bpf_seq_write. ctx->task is a BTF-typed pointer,
 * so members are read directly (the verifier checks each load against the
 * kernel's BTF; no probe-read copy) at offsets libbpf relocates (CO-RE,
 * task_core.h). Member groups a kernel config may leave out are guarded by
 * bpf_core_field_exists and flagged in rec.present.
 */
#include "task_core.h"
#include "bpftask_rec.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("iter/task")
int ctp_task_rec(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct ctp_bpftask_rec r;

	if (!t)
		return 0; /* the end of the walk */
	__builtin_memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.version = CTP_BPFTASK_REC_VERSION;
	r.tgid = t->tgid;
	r.pid = t->pid;
	r.start_boottime = t->start_boottime;
	r.minflt = t->min_flt;
	r.majflt = t->maj_flt;
	r.nvcsw = t->nvcsw;
	r.nivcsw = t->nivcsw;
	r.sum_exec_runtime = t->se.sum_exec_runtime;
	r.utime = t->utime;
	r.stime = t->stime;
	if (bpf_core_field_exists(t->sched_info)) {
		r.present |= CTP_BPFTASK_HAS_SCHED_INFO;
		r.run_delay = t->sched_info.run_delay;
		r.pcount = t->sched_info.pcount;
	}
	if (bpf_core_field_exists(t->ioac.rchar)) {
		r.present |= CTP_BPFTASK_HAS_IO_XACCT;
		r.rchar = t->ioac.rchar;
		r.wchar = t->ioac.wchar;
		r.syscr = t->ioac.syscr;
		r.syscw = t->ioac.syscw;
	}
	if (bpf_core_field_exists(t->ioac.read_bytes)) {
		r.present |= CTP_BPFTASK_HAS_IO_BYTES;
		r.read_bytes = t->ioac.read_bytes;
		r.write_bytes = t->ioac.write_bytes;
		r.cancelled_write_bytes = t->ioac.cancelled_write_bytes;
	}
	__builtin_memcpy(r.comm, t->comm, sizeof(r.comm));
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}
