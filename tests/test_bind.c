/* SPDX-License-Identifier: MIT */
/*
 * Bound values (core/capture/bind.c, ctp_api.field_bind): what a binding
 * accepts, which source it resolves to, and the per-thread copy from a
 * value source's bytes into a table row: offered values set (char and bool
 * narrowed), a value not offered, past the bytes' size or past the valid
 * words makes the binding unserved and leaves none of the plugin's cells
 * set, a guard at 0 leaves its cell absent and still counts as served, a
 * header of another abi or a size past the bytes serves nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bind.h"
#include "model.h"

#define NV 70 /* values: two valid words */

struct vec {
	uint32_t abi, size;
	uint64_t valid[2];
	uint64_t v[NV];
};

static void vec_init(struct vec *x)
{
	memset(x, 0, sizeof(*x));
	x->abi = 1;
	x->size = sizeof(*x);
	for (unsigned i = 0; i < NV; i++) {
		x->v[i] = 1000 + i;
		x->valid[i / 64] |= 1ull << (i % 64);
	}
}

static void vec_drop(struct vec *x, unsigned i)
{
	x->valid[i / 64] &= ~(1ull << (i % 64));
}

static bool cell(const struct ctp_table *t, uint32_t col, uint64_t *v)
{
	return ctp_table_get(t, 0, col, v);
}

static void add_checks(void **state)
{
	(void)state;
	struct ctp_binds b = {0};

	assert_int_equal(ctp_binds_add(&b, 0, CTP_TYPE_U64, "task", 1), 0);
	/* One source per plugin, one binding per cell. */
	assert_int_equal(ctp_binds_add(&b, 1, CTP_TYPE_U64, "other", 2),
			 -EINVAL);
	assert_int_equal(ctp_binds_add(&b, 0, CTP_TYPE_U64, "task", 2),
			 -EINVAL);
	/* Strings and sets are not copied values. */
	assert_int_equal(ctp_binds_add(&b, 2, CTP_TYPE_STRING, "task", 2),
			 -EINVAL);
	assert_int_equal(ctp_binds_add(&b, 2, CTP_TYPE_CPUSET, "task", 2),
			 -EINVAL);
	assert_int_equal(
		ctp_binds_add(&b, 2, CTP_TYPE_U64, "task", CTP_BIND_MAX_VALUE),
		-EINVAL);
	assert_int_equal(ctp_binds_add(&b, 2, CTP_TYPE_U64, "", 2), -EINVAL);
	assert_int_equal(ctp_binds_add(&b, 2, CTP_TYPE_U64, NULL, 2), -EINVAL);
	assert_int_equal(ctp_binds_add(&b, 2, CTP_TYPE_I64, "task",
				       3 | CTP_BIND_GUARD(4)),
			 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[1].value, 3);
	assert_int_equal(b.v[1].guard, 5);
	for (uint32_t c = 3; c < CTP_MAX_BINDS + 1; c++)
		assert_int_equal(ctp_binds_add(&b, c, CTP_TYPE_U64, "task", 0),
				 0);
	assert_int_equal(ctp_binds_add(&b, 999, CTP_TYPE_U64, "task", 0),
			 -ENOSPC);
	ctp_binds_free(&b);
}

static void resolve(void **state)
{
	(void)state;
	struct ctp_binds b = {0};
	const char *names[] = {"taskstats", "task"};
	struct ctp_valsrc vs[] = {{0, 0}, {NV, 2}};

	assert_int_equal(ctp_binds_add(&b, 0, CTP_TYPE_U64, "task", NV - 1), 0);
	ctp_binds_resolve(&b, names, vs, 2);
	assert_int_equal(b.src, 1);
	/* Absent, or hidden (n 0): not served. */
	ctp_binds_resolve(&b, names, vs, 1);
	assert_int_equal(b.src, -1);
	ctp_binds_resolve(&b, names, vs, 0);
	assert_int_equal(b.src, -1);
	/* A source that is not a value source, or has fewer values. */
	vs[1].n_values = 0;
	ctp_binds_resolve(&b, names, vs, 2);
	assert_int_equal(b.src, -1);
	vs[1].n_values = NV - 1;
	ctp_binds_resolve(&b, names, vs, 2);
	assert_int_equal(b.src, -1);
	ctp_binds_free(&b);
}

/* Columns 0..5: u64 value 3, i64 value 65 (the second word), char value
 * 10, bool value 11, u64 value 20 guarded by value 21, u64 value 30 (a
 * plain binding added after the others: kept ahead of them). */
static void bind_five(struct ctp_binds *b, bool resolved)
{
	const char *names[] = {"task"};
	const struct ctp_valsrc vs[] = {{NV, 2}};

	memset(b, 0, sizeof(*b));
	assert_int_equal(ctp_binds_add(b, 0, CTP_TYPE_U64, "task", 3), 0);
	assert_int_equal(ctp_binds_add(b, 1, CTP_TYPE_I64, "task", 65), 0);
	assert_int_equal(ctp_binds_add(b, 2, CTP_TYPE_CHAR, "task", 10), 0);
	assert_int_equal(ctp_binds_add(b, 3, CTP_TYPE_BOOL, "task", 11), 0);
	assert_int_equal(ctp_binds_add(b, 4, CTP_TYPE_U64, "task",
				       20 | CTP_BIND_GUARD(21)),
			 0);
	assert_int_equal(ctp_binds_add(b, 5, CTP_TYPE_U64, "task", 30), 0);
	assert_int_equal(b->n, 6);
	assert_int_equal(b->n_plain, 3);
	for (uint32_t i = 0; i < b->n; i++)
		assert_int_equal(i < b->n_plain,
				 !b->v[i].guard &&
					 (b->v[i].type == CTP_TYPE_U64 ||
					  b->v[i].type == CTP_TYPE_I64));
	/* Resolved against the source or not, the copy is the same: what
	 * bytes must hold (b->top) is known from the bindings alone. */
	if (resolved) {
		ctp_binds_resolve(b, names, vs, 1);
		assert_int_equal(b->src, 0);
		assert_int_equal(b->top, 66);
	}
}

static void apply_served_with(bool resolved)
{
	struct ctp_binds b;
	struct ctp_table t;
	struct vec x;
	uint64_t v;

	bind_five(&b, resolved);
	vec_init(&x);
	x.v[10] = 0x1244; /* 'D' in the low byte */
	x.v[11] = 7;
	x.v[65] = (uint64_t)-3;
	ctp_table_init(&t);
	assert_true(ctp_table_add_row(&t) == 0);
	assert_true(ctp_binds_apply(&b, &x, sizeof(x), 2, &t, 0, 0));
	assert_true(cell(&t, 0, &v));
	assert_int_equal(v, 1003);
	assert_true(cell(&t, 1, &v));
	assert_int_equal((int64_t)v, -3);
	assert_true(cell(&t, 2, &v));
	assert_int_equal(v, 'D');
	assert_true(cell(&t, 3, &v));
	assert_int_equal(v, 1);
	assert_true(cell(&t, 4, &v));
	assert_int_equal(v, 1020);
	assert_true(cell(&t, 5, &v));
	assert_int_equal(v, 1030);
	ctp_table_done(&t);

	/* The guard at 0: served, its cell absent; at 0 but not offered:
	 * not served. Columns offset by the identity columns (ident). */
	x.v[21] = 0;
	ctp_table_init(&t);
	assert_true(ctp_table_add_row(&t) == 0);
	assert_true(ctp_binds_apply(&b, &x, sizeof(x), 2, &t, 0, 5));
	assert_true(cell(&t, 5, &v));
	assert_false(cell(&t, 4 + 5, &v));
	ctp_table_done(&t);
	ctp_binds_free(&b);
}

static void apply_served(void **state)
{
	(void)state;
	apply_served_with(false);
	apply_served_with(true);
}

/* Not served: none of the plugin's cells is left set. */
static void check_unserved(const struct ctp_binds *b, const void *data,
			   size_t len, uint32_t words)
{
	struct ctp_table t;
	uint64_t v;

	ctp_table_init(&t);
	assert_true(ctp_table_add_row(&t) == 0);
	assert_false(ctp_binds_apply(b, data, len, words, &t, 0, 0));
	for (uint32_t c = 0; c < 6; c++)
		assert_false(cell(&t, c, &v));
	ctp_table_done(&t);
}

static void apply_unserved_with(bool resolved)
{
	struct ctp_binds b;
	struct vec x;

	bind_five(&b, resolved);
	vec_init(&x);
	vec_drop(&x, 65);
	check_unserved(&b, &x, sizeof(x), 2);
	vec_init(&x);
	vec_drop(&x, 21); /* the guard not offered */
	check_unserved(&b, &x, sizeof(x), 2);
	vec_init(&x);
	x.size = offsetof(struct vec, v) + 65 * 8; /* value 65 past size */
	check_unserved(&b, &x, sizeof(x), 2);
	vec_init(&x);
	x.size = sizeof(x) + 8; /* claims more than the fill made */
	check_unserved(&b, &x, sizeof(x), 2);
	vec_init(&x);
	x.abi = 2;
	check_unserved(&b, &x, sizeof(x), 2);
	/* Bytes shorter than the header. */
	vec_init(&x);
	check_unserved(&b, &x, 16, 2);
	check_unserved(&b, NULL, 0, 2);
	ctp_binds_free(&b);
}

static void apply_unserved(void **state)
{
	(void)state;
	apply_unserved_with(false);
	apply_unserved_with(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_checks),
		cmocka_unit_test(resolve),
		cmocka_unit_test(apply_served),
		cmocka_unit_test(apply_unserved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
