/* SPDX-License-Identifier: MIT */
/*
 * Running the built ctprof-core for the psi and sched_ext end-to-end tests
 * (tests/test_psi_e2e.c, tests/test_scx_e2e.c): a private temp directory,
 * a config naming the roots and the plugins, the capture, and lookups in
 * the decoded snapshot. Test code only.
 */
#ifndef CTP_TEST_PSI_RUN_H
#define CTP_TEST_PSI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

struct run_cfg {
	/* Roots; NULL: the live host's (/proc, /sys, cgroup auto). */
	const char *proc, *sys, *cgroup;
	unsigned workers; /* 0: 1 */
	/* The YAML under "plugins:", every line indented by two spaces. */
	const char *plugins;
};

/* The private directory of this test run (group setup/teardown). */
int run_setup(const char *tag);
int run_teardown(void);
const char *run_dir(void);

/* Capture with c and open the snapshot; fails the running test (with the
 * child's stderr) when ctprof-core does not exit 0. The snapshot is freed
 * by run_free_snaps(), a cmocka teardown. */
struct ctp_snap *run_capture(const struct run_cfg *c);
int run_free_snaps(void **state);

/* A summary counter (fails the test when it is not there). */
uint64_t run_summary(const struct ctp_snap_plugin *p, const char *name);
/* Read failures tallied for a per-task file; 0 when it is not listed. */
uint64_t run_tally(const struct ctp_snap *s, const char *file);
/* Row of a cgroup path in the cgroups table, or -1. */
long run_cgroup_row(const struct ctp_snap *s, const char *path);

#endif
