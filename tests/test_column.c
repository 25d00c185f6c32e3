/* SPDX-License-Identifier: MIT */
/*
 * Typed numbers from a snapshot (core/snapshot/column.c): units as seconds
 * and nanoseconds, a cell as a number, and a column of a hand-built
 * snapshot (absent cells, an i64 field, a derived field, a string field)
 * as one array with absence as a bitmap, which the snapshot builds once,
 * keeps and frees, within the budget its open charged.
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

#include "column.h"
#include "e2e_util.h"
#include "model.h"
#include "render.h"
#include "snapbuild.h"

static char tmp[PATH_MAX];

enum { F_CNT, F_PRIO, F_NAME, F_SUM, NF };

#define TERM(f, c)                                                             \
	{                                                                      \
		.field = (f), .coef = (c)                                      \
	}

/* `rows` threads: t.cnt is r * 10 except every seventh row, which lacks
 * it; t.nice is -r; t.sum = t.cnt + t.cnt; with `twice`, t.sum2 = 2 t.cnt
 * too (a derived field has no values in the file). Written to c.ctprof. */
static struct ctp_snap *snapshot_of(uint32_t rows, bool twice)
{
	const struct ctp_field_desc d[F_SUM] = {
		[F_CNT] = {"t.cnt", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_PRIO] = {"t.nice", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64,
			    CTP_UNIT_NONE, CTP_KIND_GAUGE, CTP_RULE_MAX},
		[F_NAME] = {"t.name", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING,
			    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	};
	const struct ctp_derived_desc sum = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_derived_desc),
		.field = {"t.sum", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
		.n_terms = 2,
		.terms = {TERM("t.cnt", 1), TERM("t.cnt", 1)},
	};
	struct ctp_capture *cap = sb_capture("t");
	char path[PATH_MAX], err[512];
	const char *why;
	int term;
	struct ctp_snap *snap;
	for (int i = 0; i < F_SUM; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	const struct ctp_derived_desc sum2 = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_derived_desc),
		.field = {"t.sum2", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
		.n_terms = 1,
		.terms = {TERM("t.cnt", 2)},
	};
	assert_int_equal(
		ctp_registry_add_derived(&cap->reg, 0, &sum, &why, &term),
		F_SUM);
	if (twice)
		assert_int_equal(ctp_registry_add_derived(&cap->reg, 0, &sum2,
							  &why, &term),
				 F_SUM + 1);
	sb_process(cap, 1, "p");
	for (uint32_t r = 0; r < rows; r++) {
		uint32_t row = sb_thread(cap, 1 + r, "p", -1);
		struct sb_cell name = {.set = true, .s = "x"};
		if (r % 7)
			sb_put_u64(cap, &cap->threads[0], row, CTP_THREAD_IDENT,
				   F_CNT, r * 10);
		sb_put_u64(cap, &cap->threads[0], row, CTP_THREAD_IDENT, F_PRIO,
			   (uint64_t) - (int64_t)r);
		sb_put(cap, &cap->threads[0], row, CTP_THREAD_IDENT, F_NAME,
		       &name);
	}
	assert_int_equal(E2E_PATHF(path, "%s/c.ctprof", tmp), 0);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
	if (ctp_snap_open(path, 1u << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return snap;
}

/* 70 threads: more than one bitmap word. */
static struct ctp_snap *snapshot(void)
{
	return snapshot_of(70, false);
}

static void test_units(void **state)
{
	(void)state;
	assert_true(ctp_unit_seconds(CTP_UNIT_NS) == 1e-9L);
	assert_true(ctp_unit_seconds(CTP_UNIT_US) == 1e-6L);
	assert_true(ctp_unit_seconds(CTP_UNIT_TICKS) == 1.0L / 100);
	assert_true(ctp_unit_seconds(CTP_UNIT_BYTES) == 0);
	assert_true(ctp_unit_seconds(CTP_UNIT_COUNT) == 0);
	assert_int_equal(ctp_unit_ns(CTP_UNIT_NS), 1);
	assert_int_equal(ctp_unit_ns(CTP_UNIT_US), 1000);
	assert_int_equal(ctp_unit_ns(CTP_UNIT_TICKS), 10000000);
	assert_int_equal(ctp_unit_ns(CTP_UNIT_CENTIPCT), 0);
}

/* A duration shows the same whatever unit recorded it: 48.65 s (tid 14's
 * 4,865 ticks in tests/fixtures/recording) is one correctly rounded long
 * double from ticks, us and ns alike, so "48.7s" from each. Multiplied by
 * 1e-9L, the ns value was 48.64999... and showed "48.6s". */
static void test_to_seconds(void **state)
{
	(void)state;
	const long double s = 4865.0L / 100;
	assert_true(ctp_unit_to_seconds(4865, CTP_UNIT_TICKS) == s);
	assert_true(ctp_unit_to_seconds(48650000, CTP_UNIT_US) == s);
	assert_true(ctp_unit_to_seconds(48650000000.0L, CTP_UNIT_NS) == s);
	assert_true(ctp_unit_to_seconds(4865, CTP_UNIT_BYTES) == 0);
	static const struct {
		long double x;
		uint8_t unit;
	} d[] = {{4865, CTP_UNIT_TICKS},
		 {48650000, CTP_UNIT_US},
		 {48650000000.0L, CTP_UNIT_NS},
		 {-48650000000.0L, CTP_UNIT_NS}};
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		char buf[32];
		ctp_render_compact(buf, sizeof(buf), d[i].x, d[i].unit);
		assert_string_equal(buf, d[i].x < 0 ? "-48.7s" : "48.7s");
	}
}

static void test_values(void **state)
{
	(void)state;
	long double x = -1;
	__int128 i = 0;
	struct ctp_value u = {.type = CTP_TYPE_U64, .u64 = UINT64_MAX},
			 s = {.type = CTP_TYPE_I64, .i64 = INT64_MIN},
			 b = {.type = CTP_TYPE_BOOL, .b = true},
			 a = {.type = CTP_VALUE_ABSENT};
	assert_true(ctp_value_number(&u, &x));
	assert_true(x == 18446744073709551615.0L);
	assert_true(ctp_value_int(&s, &i));
	assert_true(i == INT64_MIN);
	assert_true(ctp_value_number(&s, &x));
	assert_true(x == -9223372036854775808.0L);
	x = 7;
	assert_false(ctp_value_number(&b, &x));
	assert_false(ctp_value_number(&a, &x));
	assert_true(x == 7); /* untouched */
}

/* Field `name`'s column, checked to be the one of the snapshot. */
static const struct ctp_col *col(const struct ctp_snap *snap, const char *name)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, name);
	assert_non_null(f);
	const struct ctp_col *c = ctp_snap_col(snap, f);
	assert_non_null(c);
	return c;
}

static void test_columns(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot();
	long double x;
	const struct ctp_col *c = col(snap, "t.cnt");
	assert_ptr_equal(c->f, ctp_snap_field_find(snap, "t.cnt"));
	assert_int_equal(c->rows, 70);
	assert_int_equal(c->type, CTP_TYPE_U64);
	for (size_t r = 0; r < 70; r++) {
		assert_int_equal(ctp_col_has(c, r), r % 7 != 0);
		assert_int_equal(ctp_col_number(c, r, &x), r % 7 != 0);
		if (r % 7)
			assert_true(x == (long double)(r * 10));
		/* The bitmap: bit r of word r / 64. */
		assert_int_equal(c->has[r / 64] >> (r % 64) & 1, r % 7 != 0);
		struct ctp_value v = ctp_col_value(c, r);
		assert_int_equal(v.type,
				 r % 7 ? CTP_TYPE_U64 : CTP_VALUE_ABSENT);
	}
	assert_false(ctp_col_has(c, 70)); /* past the table */
	c = col(snap, "t.nice");
	assert_int_equal(c->type, CTP_TYPE_I64);
	assert_true(ctp_col_number(c, 69, &x) && x == -69);
	assert_int_equal(c->i64[3], -3);
	assert_int_equal(ctp_col_value(c, 3).i64, -3);
	/* Derived: computed per row, absent where an input is. */
	c = col(snap, "t.sum");
	assert_int_equal(c->rows, 70);
	assert_false(ctp_col_has(c, 14));
	assert_true(ctp_col_number(c, 15, &x) && x == 300);
	assert_true(ctp_snap_number(snap, ctp_snap_field_find(snap, "t.sum"),
				    15, &x) &&
		    x == 300);
	assert_true(ctp_snap_has_values(snap, c->f));
	/* No number: no row has one. */
	assert_true(
		ctp_snap_has_values(snap, ctp_snap_field_find(snap, "t.name")));
	c = col(snap, "t.name");
	assert_null(c->f);
	for (size_t r = 0; r < 70; r++)
		assert_false(ctp_col_has(c, r));
	ctp_snap_free(snap);
}

/* The snapshot builds a column once and keeps it: the same pointer on
 * every request, derived fields included, freed with the snapshot (the
 * sanitizer build finds a leak or a use after free). */
static void test_cached(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot();
	const char *names[] = {"t.sum", "t.cnt", "t.nice"};
	const struct ctp_col *first[3];
	for (int i = 0; i < 3; i++)
		first[i] = col(snap, names[i]);
	for (int i = 0; i < 3; i++) {
		assert_ptr_equal(col(snap, names[i]), first[i]);
		assert_ptr_equal(first[i]->f,
				 ctp_snap_field_find(snap, names[i]));
	}
	/* A field of another snapshot is no field of this one. */
	struct ctp_snap *other = snapshot();
	const struct ctp_col *c =
		ctp_snap_col(snap, ctp_snap_field_find(other, "t.cnt"));
	assert_non_null(c);
	assert_int_equal(c->rows, 0);
	assert_false(ctp_col_has(c, 1));
	ctp_snap_free(other);
	ctp_snap_free(snap);
}

/* The open charges the columns to the budget before any is built: one
 * more derived field (no values in the file) costs at least its column,
 * a snapshot opened with exactly what it needs builds every column, and
 * what it needs holds them. */
static void test_budget(void **state)
{
	(void)state;
	struct ctp_snap *snap = snapshot_of(7000, false);
	uint64_t once = ctp_snap_mem_size(snap);
	ctp_snap_free(snap);
	snap = snapshot_of(7000, true);
	assert_true(ctp_snap_mem_size(snap) - once >= ctp_col_bytes(7000));
	ctp_snap_free(snap);
	snap = snapshot();
	uint64_t mem = ctp_snap_mem_size(snap);
	ctp_snap_free(snap);
	char path[PATH_MAX], err[512];
	assert_int_equal(E2E_PATHF(path, "%s/c.ctprof", tmp), 0);
	assert_int_equal(ctp_snap_open(path, mem - 1, &snap, err, sizeof(err)),
			 -EFBIG);
	assert_int_equal(ctp_snap_open(path, mem, &snap, err, sizeof(err)), 0);
	size_t numeric = 0;
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		if (fs[i].type != CTP_TYPE_U64 && fs[i].type != CTP_TYPE_I64)
			continue;
		const struct ctp_snap_table *t =
			ctp_snap_table(snap, fs[i].scope);
		numeric += ctp_col_bytes(t->rows);
		assert_non_null(ctp_snap_col(snap, &fs[i]));
	}
	/* t.cnt, t.nice and t.sum at least, each charged. */
	assert_true(numeric >= 3 * ctp_col_bytes(70));
	assert_true(mem > numeric);
	ctp_snap_free(snap);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("column", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_units),
					   cmocka_unit_test(test_to_seconds),
					   cmocka_unit_test(test_values),
					   cmocka_unit_test(test_columns),
					   cmocka_unit_test(test_cached),
					   cmocka_unit_test(test_budget)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
