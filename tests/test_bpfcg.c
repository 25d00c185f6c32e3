/* SPDX-License-Identifier: MIT */
/* Unit tests for the css_sets a bpf-task pass notes (plugins/bpf-task/
 * bpfcg.c) and the decoding of the source "cgroup-v1"
 * (include/ctprof/source-cgroup-v1.h): pure, on literal values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bpfcg.h"

#include <ctprof/source-cgroup-v1.h>

/* A css_set of pass gen: the default hierarchy's link (id 0) among
 * the v1 ones, as the program notes them. */
static struct ctp_bpfcg_entry entry(__u64 key, __u64 gen)
{
	struct ctp_bpfcg_entry e = {.key = key};

	e.set.gen = gen;
	e.set.n = 4;
	e.set.p[0] = (struct ctp_bpfcg_pair){.hier = 9, .id = 1};
	e.set.p[1] = (struct ctp_bpfcg_pair){.hier = 0, .id = 77};
	e.set.p[2] = (struct ctp_bpfcg_pair){.hier = 4, .id = 0x100000abcull};
	e.set.p[3] = (struct ctp_bpfcg_pair){.hier = 1, .id = 2};
	return e;
}

static void test_keep_find(void **s)
{
	struct ctp_bpfcg_entry e[7];
	(void)s;
	e[0] = entry(0x3000, 5);
	e[1] = entry(0x1000, 4); /* an earlier pass's: stale */
	e[2] = entry(0x2000, 5);
	e[3] = entry(0, 5); /* no key */
	e[4] = entry(0x4000, 5);
	e[4].set.n = CTP_BPFCG_MAX_LINKS + 1; /* past the bound */
	e[5] = entry(0x5000, 5);
	e[5].set.p[3].hier = 9; /* a hierarchy twice */
	e[6] = entry(0x1800, 5);
	assert_int_equal(ctp_bpfcg_keep(e, 7, 5), 3);
	assert_true(e[0].key == 0x1800 && e[1].key == 0x2000 &&
		    e[2].key == 0x3000);
	assert_ptr_equal(ctp_bpfcg_find(e, 3, 0x2000), &e[1]);
	assert_ptr_equal(ctp_bpfcg_find(e, 3, 0x3000), &e[2]);
	assert_null(ctp_bpfcg_find(e, 3, 0x1000));
	assert_null(ctp_bpfcg_find(e, 3, 0));
	assert_null(ctp_bpfcg_find(e, 0, 0x2000));
}

static void test_too_many_v1(void **s)
{
	struct ctp_bpfcg_entry e = {.key = 1};
	(void)s;
	e.set.gen = 1;
	/* 17 links are fine when one is the default hierarchy's... */
	e.set.n = CTP_BPFCG_MAX_LINKS;
	for (__u32 i = 0; i < e.set.n; i++)
		e.set.p[i] = (struct ctp_bpfcg_pair){.hier = i, .id = i};
	assert_int_equal(ctp_bpfcg_keep(&e, 1, 1), 1);
	/* ...not 17 v1 ones. */
	e.set.p[0].hier = 100;
	assert_int_equal(ctp_bpfcg_keep(&e, 1, 1), 0);
}

static void test_to_src_pairs(void **s)
{
	struct ctp_bpfcg_entry e = entry(0x1000, 1);
	struct ctp_src_cgroup_v1 src;
	struct ctp_src_cg1_pair p[CTP_SRC_CG1_MAX_PAIRS];
	(void)s;
	ctp_bpfcg_to_src(&e.set, &src);
	assert_int_equal(src.abi, 1);
	assert_int_equal(src.size, sizeof(src));
	/* The default hierarchy's link is left out, the order kept. */
	assert_int_equal(ctp_src_cg1_pairs(&src, sizeof(src), p, 16), 3);
	assert_int_equal(p[0].hier, 9);
	assert_true(p[0].id == 1);
	assert_int_equal(p[1].hier, 4);
	assert_true(p[1].id == 0x100000abcull);
	assert_int_equal(p[2].hier, 1);
	assert_true(p[2].id == 2);
	/* No v1 hierarchy at all (a pure v2 host): zero pairs, offered. */
	e.set.n = 1;
	e.set.p[0].hier = 0;
	ctp_bpfcg_to_src(&e.set, &src);
	assert_int_equal(ctp_src_cg1_pairs(&src, sizeof(src), p, 16), 0);
}

static void test_decode_bad(void **s)
{
	struct ctp_bpfcg_entry e = entry(0x1000, 1);
	struct ctp_src_cgroup_v1 src, bad;
	struct ctp_src_cg1_pair p[CTP_SRC_CG1_MAX_PAIRS];
	(void)s;
	ctp_bpfcg_to_src(&e.set, &src);
	/* Short bytes, a short size, another abi. */
	assert_int_equal(ctp_src_cg1_pairs(&src, 40, p, 16), -EBADMSG);
	bad = src;
	bad.size = 8 + 8 + 8 * 4; /* N, pair 0 and half of pair 1 */
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	bad = src;
	bad.abi = 2;
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	/* A count past the bound or the caller's room. */
	bad = src;
	bad.v[CTP_SRC_CG1_N] = CTP_SRC_CG1_MAX_PAIRS + 1;
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	assert_int_equal(ctp_src_cg1_pairs(&src, sizeof(src), p, 2), -EBADMSG);
	/* A pair's value not offered. */
	bad = src;
	bad.valid[0] &= ~(1ull << CTP_SRC_CG1_ID(1));
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	/* No count. */
	bad = src;
	bad.valid[0] &= ~(1ull << CTP_SRC_CG1_N);
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	/* Hierarchy 0, one past INT32_MAX, one twice. */
	bad = src;
	bad.v[CTP_SRC_CG1_HIER(2)] = 0;
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	bad.v[CTP_SRC_CG1_HIER(2)] = (uint64_t)INT32_MAX + 1;
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	bad.v[CTP_SRC_CG1_HIER(2)] = 9;
	assert_int_equal(ctp_src_cg1_pairs(&bad, sizeof(bad), p, 16), -EBADMSG);
	/* The good bytes still decode. */
	assert_int_equal(ctp_src_cg1_pairs(&src, sizeof(src), p, 16), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_find),
		cmocka_unit_test(test_too_many_v1),
		cmocka_unit_test(test_to_src_pairs),
		cmocka_unit_test(test_decode_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
