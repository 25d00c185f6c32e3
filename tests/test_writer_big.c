// SPDX-License-Identifier: MIT
/*
 * The writer's cell path over many rows: thousands of threads (several
 * table blocks), every scalar type in all its size classes, absent cells
 * scattered through each column, and cpusets that repeat, alternate and
 * are too fragmented to cache. Everything read back must be what was put.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "reader.h"
#include "snapbuild.h"

#define N_THREADS 5000
#define PER_PROC  700

enum { F_U, F_I, F_C, F_B, F_CPUS, N_F };

static const struct ctp_field_desc descs[N_F] = {
	[F_U] = {"t.u", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_I] = {"t.i", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
		 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	[F_C] = {"t.c", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CHAR, CTP_UNIT_NONE,
		 CTP_KIND_ORDINAL, CTP_RULE_MODE},
	[F_B] = {"t.b", NULL, CTP_SCOPE_THREAD, CTP_TYPE_BOOL, CTP_UNIT_NONE,
		 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[F_CPUS] = {"t.cpus", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CPUSET,
		    CTP_UNIT_NONE, CTP_KIND_CPUSET, CTP_RULE_UNION},
};

static uint64_t u_of(uint32_t i)
{
	return ((uint64_t)i * 2654435761u) << (i % 37);
}

static int64_t i_of(uint32_t i)
{
	int64_t m = (int64_t)((uint64_t)i << (i % 50) >> 1);
	return i % 2 ? -m : m;
}

static bool absent(uint32_t i, int f)
{
	return (i + (uint32_t)f * 3) % 7 == 3;
}

/* Which cpuset thread i has: runs of equal ones, and now and then the
 * even CPUs below 128 (64 runs: more than the writer caches). */
static int cpus_kind(uint32_t i)
{
	if (i % 50 == 0)
		return 3;
	return (int)(i / 3 % 3);
}

static void fill_cpus(int kind, int *cpus)
{
	size_t n = 0;
	switch (kind) {
	case 0:
		cpus[n++] = 0;
		cpus[n++] = 1;
		break;
	case 1:
		cpus[n++] = 5;
		break;
	case 2:
		for (int c = 64; c < 70; c++)
			cpus[n++] = c;
		cpus[n++] = 100;
		break;
	default:
		for (int c = 0; c < 128; c += 2)
			cpus[n++] = c;
	}
	cpus[n] = -1;
}

static void check_cpus(struct ctp_value v, int kind)
{
	int cpus[70];
	size_t k = 0;
	fill_cpus(kind, cpus);
	assert_int_equal(v.type, CTP_TYPE_CPUSET);
	/* Expand the runs and compare with the list. */
	for (size_t r = 0; r < v.cpuset.n; r++)
		for (uint32_t c = v.cpuset.r[2 * r]; c <= v.cpuset.r[2 * r + 1];
		     c++) {
			assert_true(cpus[k] >= 0);
			assert_int_equal(c, cpus[k]);
			k++;
		}
	assert_int_equal(cpus[k], -1);
}

static void many_rows(void **state)
{
	char dir[] = "/tmp/ctp-wbig-XXXXXX", path[PATH_MAX], err[512];
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_snap *snap;
	int fid[N_F];

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (int f = 0; f < N_F; f++) {
		fid[f] = ctp_registry_add(&cap->reg, 0, &descs[f]);
		assert_true(fid[f] >= 0);
	}
	for (uint32_t i = 0; i < N_THREADS; i++) {
		if (i % PER_PROC == 0)
			sb_process(cap, 1000 + i, "p");
		uint32_t row = sb_thread(cap, 1000 + i, "t", -1);
		struct sb_cell c[N_F] = {{0}};
		c[F_U] = (struct sb_cell){.set = true, .v = u_of(i)};
		c[F_I] = (struct sb_cell){.set = true, .v = (uint64_t)i_of(i)};
		c[F_C] = (struct sb_cell){.set = true, .v = 'A' + i % 26};
		c[F_B] = (struct sb_cell){.set = true, .v = i % 3 == 0};
		c[F_CPUS].set = true;
		fill_cpus(cpus_kind(i), c[F_CPUS].cpus);
		for (int f = 0; f < N_F; f++)
			if (!absent(i, f))
				sb_put(cap, &cap->threads[0], row,
				       CTP_THREAD_IDENT, fid[f], &c[f]);
	}
	snprintf(path, sizeof(path), "%s/big.ctprof.zst", dir);
	assert_int_equal(sb_write(cap, path, err, sizeof(err)), 0);
	ctp_capture_free(cap);
	if (ctp_snap_open(path, 1ull << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows,
			 N_THREADS);
	const struct ctp_snap_field *sf[N_F];
	for (int f = 0; f < N_F; f++) {
		sf[f] = ctp_snap_field_find(snap, descs[f].name);
		assert_non_null(sf[f]);
	}
	for (uint32_t i = 0; i < N_THREADS; i++) {
		for (int f = 0; f < N_F; f++) {
			struct ctp_value v = ctp_snap_get(snap, sf[f], i);
			if (absent(i, f)) {
				assert_int_equal(v.type, CTP_VALUE_ABSENT);
				continue;
			}
			switch (f) {
			case F_U:
				assert_int_equal(v.type, CTP_TYPE_U64);
				assert_true(v.u64 == u_of(i));
				break;
			case F_I:
				assert_int_equal(v.type, CTP_TYPE_I64);
				assert_true(v.i64 == i_of(i));
				break;
			case F_C:
				assert_int_equal(v.type, CTP_TYPE_CHAR);
				assert_int_equal(v.c, 'A' + i % 26);
				break;
			case F_B:
				assert_int_equal(v.type, CTP_TYPE_BOOL);
				assert_int_equal(v.b, i % 3 == 0);
				break;
			case F_CPUS:
				check_cpus(v, cpus_kind(i));
				break;
			}
		}
	}
	ctp_snap_free(snap);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
