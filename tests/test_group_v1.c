/* SPDX-License-Identifier: MIT */
/*
 * Grouping by a cgroup v1 hierarchy (`--group-by cgroup:HIER`,
 * core/analysis/group.c) takes a group's cgroup-scope values from that
 * hierarchy's rows
 * ("v1:<controllers>:<path>", docs/FORMAT.md 7.2.1), never from the v2
 * rows its threads also point at. The snapshot here places the same
 * threads differently in v1 and v2, as on a hybrid host.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "group.h"
#include "reader.h"
#include "snapbuild.h"

static char tmpdir[PATH_MAX];

enum { F_V1PATH, F_MEM, F_PIDS, F_V2CPU, F_CNT, N_F };

static const struct ctp_field_desc descs[N_F] = {
	/* Named unlike the cgroup plugin's on purpose: the axis finds the
	 * field by its section and hierarchy dimension alone. */
	[F_V1PATH] = {"other.where", "path in the memory hierarchy",
		      CTP_SCOPE_THREAD, CTP_TYPE_STRING, CTP_UNIT_NONE,
		      CTP_KIND_CATEGORICAL, CTP_RULE_MODE, CTP_FIELD_META, 0,
		      "cgroup-v1-path", "hierarchy=memory"},
	[F_MEM] = {"cgroup.v1.memory.usage_in_bytes", "v1 memory usage",
		   CTP_SCOPE_CGROUP, CTP_TYPE_U64, CTP_UNIT_BYTES,
		   CTP_KIND_GAUGE, CTP_RULE_MAX},
	[F_PIDS] = {"cgroup.v1.pids.current", "v1 pids", CTP_SCOPE_CGROUP,
		    CTP_TYPE_U64, CTP_UNIT_COUNT, CTP_KIND_GAUGE, CTP_RULE_MAX},
	[F_V2CPU] = {"cgroup.v2.cpu.stat.usage_usec", "v2 cpu usage",
		     CTP_SCOPE_CGROUP, CTP_TYPE_U64, CTP_UNIT_US,
		     CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_CNT] = {"t.cnt", "a count", CTP_SCOPE_THREAD, CTP_TYPE_U64,
		   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
};

/*
 * cgroups: 0 "/fidv2" (cpu 1000), 1 "v1:memory:/fidmem" (48.75 MiB),
 * 2 "v1:pids:/fidmem" (pids 9: same path, another hierarchy), 3 "/other"
 * (cpu 7). Threads 101, 102 of "app" are in v2 /fidv2 and v1 memory
 * /fidmem; thread 201 of "db" in v2 /other and v1 memory /dbmem, a v1
 * cgroup with no row.
 */
static struct ctp_snap *snapshot(void)
{
	struct ctp_capture *cap = sb_capture("cgroup");
	int fid[N_F];
	for (int i = 0; i < N_F; i++) {
		fid[i] = ctp_registry_add(&cap->reg, 0, &descs[i]);
		assert_true(fid[i] >= 0);
	}
	uint32_t v2 = sb_cgroup(cap, "/fidv2");
	uint32_t mem = sb_cgroup(cap, "v1:memory:/fidmem");
	uint32_t pids = sb_cgroup(cap, "v1:pids:/fidmem");
	uint32_t other = sb_cgroup(cap, "/other");
	sb_put_u64(cap, &cap->cgroups, v2, CTP_CGROUP_IDENT, fid[F_V2CPU],
		   1000);
	sb_put_u64(cap, &cap->cgroups, other, CTP_CGROUP_IDENT, fid[F_V2CPU],
		   7);
	sb_put_u64(cap, &cap->cgroups, mem, CTP_CGROUP_IDENT, fid[F_MEM],
		   51118080);
	sb_put_u64(cap, &cap->cgroups, pids, CTP_CGROUP_IDENT, fid[F_PIDS], 9);
	struct sb_cell fidmem = {.set = true, .s = "/fidmem"};
	struct sb_cell dbmem = {.set = true, .s = "/dbmem"};
	sb_process(cap, 100, "app");
	for (uint32_t t = 101; t <= 102; t++) {
		uint32_t r = sb_thread(cap, t, "app", (int)v2);
		sb_put(cap, &cap->threads[0], r, CTP_THREAD_IDENT,
		       fid[F_V1PATH], &fidmem);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT,
			   fid[F_CNT], 1);
	}
	sb_process(cap, 200, "db");
	uint32_t r = sb_thread(cap, 201, "db", (int)other);
	sb_put(cap, &cap->threads[0], r, CTP_THREAD_IDENT, fid[F_V1PATH],
	       &dbmem);
	sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, fid[F_CNT], 1);

	char path[PATH_MAX + 16], err[512];
	snprintf(path, sizeof(path), "%s/v1.ctprof.zst", tmpdir);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_capture_free(cap);
	struct ctp_snap *s = NULL;
	if (ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return s;
}

static struct ctp_groups *group(struct ctp_snap *s, const char *axes)
{
	char text[64], err[256];
	struct ctp_group_spec spec = {.no_normalize = true};
	snprintf(text, sizeof(text), "%s", axes);
	assert_int_equal(ctp_group_spec_parse(text, &spec, err, sizeof(err)),
			 0);
	struct ctp_groups *g = NULL;
	if (ctp_groups_new(s, &spec, &g, err, sizeof(err)) < 0)
		fail_msg("%s: %s", axes, err);
	return g;
}

static size_t find(const struct ctp_groups *g, const char *key)
{
	for (size_t i = 0; i < ctp_groups_count(g); i++) {
		const char *k = ctp_groups_at(g, i)->key[0];
		if (k && strcmp(k, key) == 0)
			return i;
	}
	fail_msg("no group %s", key);
	return 0;
}

/* The aggregate of field `name` in group i: its u64, or -1 when absent. */
static int64_t agg(struct ctp_groups *g, const char *name, size_t i)
{
	const struct ctp_snap_field *f =
		ctp_snap_field_find(ctp_groups_snap(g), name);
	assert_non_null(f);
	const struct ctp_agg *col;
	assert_int_equal(ctp_groups_aggregate(g, f, &col), 0);
	if (col[i].v.type == CTP_VALUE_ABSENT)
		return -1;
	assert_int_equal(col[i].v.type, CTP_TYPE_U64);
	return (int64_t)col[i].v.u64;
}

static void test_v1_group_takes_v1_rows(void **unused)
{
	(void)unused;
	struct ctp_snap *s = snapshot();

	/* By the memory hierarchy: /fidmem has the v1 row's 48.75 MiB and
	 * none of /fidv2's cpu usage, nor the pids row of the same path. */
	struct ctp_groups *g = group(s, "cgroup:memory");
	size_t fid = find(g, "/fidmem"), db = find(g, "/dbmem");
	assert_int_equal(ctp_groups_at(g, fid)->n_threads, 2);
	assert_int_equal(agg(g, "cgroup.v1.memory.usage_in_bytes", fid),
			 51118080);
	assert_int_equal(agg(g, "cgroup.v2.cpu.stat.usage_usec", fid), -1);
	assert_int_equal(agg(g, "cgroup.v1.pids.current", fid), -1);
	assert_int_equal(agg(g, "t.cnt", fid), 2);
	/* A v1 cgroup without a row: no cgroup values at all. */
	assert_int_equal(ctp_groups_at(g, db)->n_cgroups, 0);
	assert_int_equal(agg(g, "cgroup.v2.cpu.stat.usage_usec", db), -1);
	ctp_groups_free(g);

	/* By the v2 cgroup: the v2 rows, no v1 values. */
	g = group(s, "cgroup");
	size_t v2 = find(g, "/fidv2");
	assert_int_equal(agg(g, "cgroup.v2.cpu.stat.usage_usec", v2), 1000);
	assert_int_equal(agg(g, "cgroup.v1.memory.usage_in_bytes", v2), -1);
	ctp_groups_free(g);

	/* Without a cgroup axis, groups take their threads' v2 rows. */
	g = group(s, "pcomm");
	assert_int_equal(
		agg(g, "cgroup.v2.cpu.stat.usage_usec", find(g, "app")), 1000);
	assert_int_equal(agg(g, "cgroup.v2.cpu.stat.usage_usec", find(g, "db")),
			 7);
	ctp_groups_free(g);
	ctp_snap_free(s);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("group-v1", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_group_takes_v1_rows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
