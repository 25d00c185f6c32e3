/* SPDX-License-Identifier: MIT */
/*
 * The exit records of the BPF exit program (plugins/bpf-task/exit_rec.h)
 * as the taskstats exits they stand for, and the cgroup v2 ids they carry
 * as paths. Pure but for ctp_ts_cgids_build, which reads the cgroup mount.
 */
#ifndef CTP_TASKSTATS_EXITS_BPF_H
#define CTP_TASKSTATS_EXITS_BPF_H

#include <stddef.h>
#include <stdint.h>

#include "exit_rec.h"
#include "taskstats_reply.h"

/*
 * One record as a taskstats exit: ids, comm, faults, switches, the seven
 * I/O counters exact (where the record has them), the delay families,
 * ppid, exit code, elapsed (us, exit less start), and utime/stime in us
 * already cputime_adjust()ed to the exact run time (sum_exec_runtime), as
 * the netlink path does with cpu_run_virtual_total. No watermarks: the
 * address space is gone by the last switch. e->ts.pid is the tid.
 */
void ctp_ts_exit_from_bpf(const struct ctp_bpfexit_rec *r,
			  struct ctp_ts_exit *e);

/* A process's total of the records the ring had no room for, the same
 * way; pid 0 (the row stands for s->threads threads of tgid), no start
 * time, so no elapsed. */
void ctp_ts_exit_from_bpfsum(uint32_t tgid, const struct ctp_bpfexit_sum *s,
			     struct ctp_ts_exit *e);

/* cgroup v2 directory inode numbers (the kernel's cgroup ids) to paths as
 * /proc/<pid>/cgroup's "0::" line gives them ("/", "/a/b"). */
struct ctp_ts_cgid {
	uint64_t id;
	char *path;
};
struct ctp_ts_cgids {
	struct ctp_ts_cgid *v; /* sorted by id */
	size_t n, cap;
	size_t builds; /* walks of the mount so far */
};

/* The most directories and the deepest level one walk visits. */
#define CTP_TS_CGIDS_MAX   65536
#define CTP_TS_CGIDS_DEPTH 32

/* Walk the cgroup v2 mount at dirfd (not closed) again: every directory's
 * inode number and path, at most CTP_TS_CGIDS_MAX of them, at most
 * CTP_TS_CGIDS_DEPTH deep. Returns the count, or a negative errno (the
 * old map kept). */
int ctp_ts_cgids_build(struct ctp_ts_cgids *m, int dirfd);
/* The path of id, or NULL. */
const char *ctp_ts_cgids_find(const struct ctp_ts_cgids *m, uint64_t id);
void ctp_ts_cgids_free(struct ctp_ts_cgids *m);

#endif
