/*
 * The check on this kernel (README.md): a helper thread of this process
 * does a little of everything and blocks; one pass gives its record, its
 * files give the same values, both in the source's layout.
 */
#ifndef CTP_BPFCHECK_H
#define CTP_BPFCHECK_H

#include "bpftask.h"

#include <ctprof/source-task.h>

#include <stddef.h>

/*
 * Start the helper, wait until it blocks, take one pass over it alone
 * (a whole pass of at most max_bytes on a kernel without the iterator's
 * tid parameter, before 6.1) and read its stat, status, io and schedstat
 * under proc_fd (the live /proc) and its sched_getaffinity(), join it.
 * The helper leaves one CPU out of its mask where it has two. With
 * possible (the host's possible CPUs, CTP_BPFTASK_CPU_WORDS words; NULL
 * where they do not fit) the pass's masks are and'ed with
 * cpu_active_mask worked out as a capture works it out. *pass is its record
 * through ctp_bpftask_to_src (stat's times as the fill works them out for a
 * first pass), *files the files' values. 0, or a negative errno with why it
 * could not run in why.
 * Bounded: the helper blocks within about 200 ms or the check gives up.
 */
int ctp_bpfcheck_run(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_conv *conv, const __u64 *possible,
		     int proc_fd, struct ctp_src_task *pass,
		     struct ctp_src_task *files, char *why, size_t whylen);

struct ctp_src_process;

/*
 * The same for the "process" values: a child process (its own reaped
 * child, a thread that worked and exited, two threads that work and
 * block) whose records of one pass (its
 * threads alone on 6.1+, else a whole pass of at most max_bytes) made into
 * "process" values as a first pass makes them (ctp_bpftask_process) go to
 * *pass, and its <pid>/stat and <pid>/io under proc_fd to *files. The
 * child is ended and reaped before it returns. 0, or a negative errno with
 * why in why. Bounded as ctp_bpfcheck_run.
 */
int ctp_bpfcheck_process(struct ctp_bpftask *b, size_t max_bytes,
			 const struct ctp_bpftask_conv *conv, int proc_fd,
			 struct ctp_src_process *pass,
			 struct ctp_src_process *files, char *why,
			 size_t whylen);

#endif /* CTP_BPFCHECK_H */
