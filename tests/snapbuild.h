/* SPDX-License-Identifier: MIT */
/*
 * Building captures by hand for tests that then write them with the real
 * writer (core/snapshot/writer.h) and read them back, so that every case states
 * its inputs rather than hand-edited snapshot bytes. Used by test_group and
 * test_compare. Failures end the running cmocka test.
 *
 * A capture from sb_capture() has one worker, one host row and one loaded
 * plugin; the test registers its fields, then adds cgroups, and processes
 * each followed by its threads.
 */
#ifndef CTP_TESTS_SNAPBUILD_H
#define CTP_TESTS_SNAPBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* A value to store: absent unless set; a STRING field takes s, a CPUSET
 * field the CPUs in cpus[] up to the first negative one. */
struct sb_cell {
	bool set;
	uint64_t v;
	const char *s;
	int cpus[70];
};

/* A capture with one worker, the host row and a loaded plugin `plugin`
 * (cap->plugins[0]), realtime start/end 1700000000 s and one second on. */
struct ctp_capture *sb_capture(const char *plugin);

/* The blob id of n bytes of s. */
uint64_t sb_blob(struct ctp_capture *cap, const char *s, size_t n);

/* Store c in row `row` of table t at field `fid`'s column; `ident` is the
 * table's count of identity columns (CTP_THREAD_IDENT, ...). */
void sb_put(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
	    uint32_t ident, int fid, const struct sb_cell *c);
/* The same for a number (or blob id) v, always present. */
void sb_put_u64(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
		uint32_t ident, int fid, uint64_t v);

/* A cgroup row with `path`; returns its row (the threads' cgroup index). */
uint32_t sb_cgroup(struct ctp_capture *cap, const char *path);

/* A process row (comm NULL: none), which the threads added after it belong
 * to; returns its row of cap->procs[0]. */
uint32_t sb_process(struct ctp_capture *cap, uint32_t tgid, const char *comm);

/* A thread of the last process (comm NULL: none; cg < 0: unknown cgroup);
 * returns its row of cap->threads[0]. */
uint32_t sb_thread(struct ctp_capture *cap, uint32_t tid, const char *comm,
		   int cg);

/* A row of the exited table: tgid and exit_ns 0 and comm NULL are left
 * absent (unknown); returns its row of cap->exited. */
uint32_t sb_exited(struct ctp_capture *cap, uint32_t tid, uint32_t tgid,
		   const char *comm, uint64_t exit_ns);

/* Write cap to path with the real writer (3 = zstd level, tool "test").
 * Returns its result, with a message in err. */
int sb_write(struct ctp_capture *cap, const char *path, char *err,
	     size_t errlen);

#endif
