/* SPDX-License-Identifier: MIT */
/*
 * Medians, spreads and the Mann-Whitney U test (core/analysis/stats.c)
 * against published values: R's wilcox.test example (W = 35, one-sided p
 * 0.1272, so two-sided 0.2544), the exact p of fully separated samples
 * (2 / C(n1 + n2, n1)), the two-tailed 0.05 critical values of U in the
 * standard tables (n1 = n2 = 8: 13, 10: 23), ties at mid-ranks (p counted
 * by hand over every split), and the normal approximation past 50 values.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats.h"

static double utest_p(const double *a, size_t na, const double *b, size_t nb,
		      double *u)
{
	double p = -1, uu;
	assert_int_equal(ctp_stats_utest(a, na, b, nb, &uu, &p), 0);
	if (u)
		*u = uu;
	return p;
}

static void test_median_spread(void **state)
{
	(void)state;
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
	assert_true(isnan(ctp_stats_median(NULL, 0)));
	assert_float_equal(ctp_stats_median(odd, 3), 3, 0);
	assert_float_equal(ctp_stats_median(even, 4), 2.5, 0);
	assert_float_equal(ctp_stats_median(one, 1), 7, 0);
	/* The farthest value from 3 is 1 or 5: 2 of 3, 66.7%. */
	assert_float_equal(ctp_stats_spread(odd, 3, 3), 200.0 / 3, 1e-9);
	assert_float_equal(ctp_stats_spread(one, 1, 7), 0, 0);
	double zeros[] = {0, 0}, zx[] = {0, 1};
	assert_float_equal(ctp_stats_spread(zeros, 2, 0), 0, 0);
	assert_true(isnan(ctp_stats_spread(zx, 2, 0)));
}

/* R: wilcox.test(x, y, alternative = "g"): W = 35, p-value = 0.1272. */
static void test_r_example(void **state)
{
	(void)state;
	const double x[] = {0.80, 0.83, 1.89, 1.04, 1.45,
			    1.38, 1.91, 1.64, 0.73, 1.46};
	const double y[] = {1.15, 0.88, 0.90, 0.74, 1.21};
	double u, p = utest_p(x, 10, y, 5, &u);
	assert_float_equal(u, 35, 0);
	assert_float_equal(p, 0.2544, 0.0001);
	/* The test is symmetric in its sides. */
	assert_float_equal(utest_p(y, 5, x, 10, &u), p, 1e-12);
	assert_float_equal(u, 15, 0);
}

/* Every value of a below every value of b: 2 splits of C(n, na) as far. */
static void test_separated(void **state)
{
	(void)state;
	static const double want[] = {0,	0,	  2.0 / 6,
				      2.0 / 20, 2.0 / 70, 2.0 / 252};
	for (size_t n = 2; n <= 5; n++) {
		double a[5], b[5], u;
		for (size_t i = 0; i < n; i++)
			a[i] = (double)i, b[i] = (double)(10 + i);
		assert_float_equal(utest_p(a, n, b, n, &u), want[n], 1e-12);
		assert_float_equal(u, 0, 0);
	}
	/* benchstat's rule: n = 3 a side never reaches 0.05, 4 does. */
	assert_true(want[3] > CTP_STATS_ALPHA && want[4] < CTP_STATS_ALPHA);
}

/* Samples of n each, no value tied, whose U is exactly u: b at 10, 20,
 * ..., and a's values placed above as many of b's as u asks. */
static double p_at_u(size_t n, size_t u)
{
	double a[16], b[16], got;
	for (size_t i = 0; i < n; i++) {
		size_t above = u / n + (i < u % n); /* b values below a[i] */
		/* Distinct (ties would change the distribution). */
		a[i] = 5 + 10.0 * (double)above + 0.01 * (double)i;
		b[i] = 10.0 * (double)(i + 1);
	}
	double p = utest_p(a, n, b, n, &got);
	assert_float_equal(got, (double)u, 0);
	return p;
}

/* Critical values of U, two-tailed alpha 0.05 (the published tables):
 * n1 = n2 = 8: 13; n1 = n2 = 10: 23. At or below: p <= 0.05 (exactly,
 * 0.0499 and 0.0433; one above, 0.0650 and 0.0524). */
static void test_critical_values(void **state)
{
	(void)state;
	assert_float_equal(p_at_u(8, 13), 0.049883449, 1e-8);
	assert_float_equal(p_at_u(10, 24), 0.052425902, 1e-8);
	assert_true(p_at_u(8, 13) <= 0.05);
	assert_true(p_at_u(8, 14) > 0.05);
	assert_true(p_at_u(10, 23) <= 0.05);
	assert_true(p_at_u(10, 24) > 0.05);
	/* The middle of the distribution is p 1. */
	assert_float_equal(p_at_u(8, 32), 1, 1e-12);
}

/* Ties at their mid-ranks; p counted by hand over every split (Python,
 * itertools.combinations): {1,1,2,3} vs {1,2,2,4}: U 6, p 0.657143;
 * {1,2,2} vs {2,3,3}: U 1, p 0.3. */
static void test_ties(void **state)
{
	(void)state;
	const double a[] = {1, 1, 2, 3}, b[] = {1, 2, 2, 4};
	const double c[] = {1, 2, 2}, d[] = {2, 3, 3};
	double u;
	assert_float_equal(utest_p(a, 4, b, 4, &u), 0.657142857, 1e-8);
	assert_float_equal(u, 6, 0);
	assert_float_equal(utest_p(c, 3, d, 3, &u), 0.3, 1e-12);
	assert_float_equal(u, 1, 0);
	/* A side against itself: every value tied, no difference. */
	const double same[] = {4, 4, 4};
	assert_float_equal(utest_p(same, 3, same, 3, &u), 1, 0);
	assert_float_equal(utest_p(a, 4, a, 4, &u), 1, 1e-12);
}

/* Past CTP_STATS_EXACT_MAX values: the normal approximation. */
static void test_normal(void **state)
{
	(void)state;
	double a[30], b[30], u;
	for (int i = 0; i < 30; i++)
		a[i] = i, b[i] = 30 + i;
	assert_true(utest_p(a, 30, b, 30, &u) < 1e-9);
	for (int i = 0; i < 30; i++)
		a[i] = 2 * i, b[i] = 2 * i + 1; /* interleaved */
	assert_true(utest_p(a, 30, b, 30, &u) > 0.8);
}

static void test_bad(void **state)
{
	(void)state;
	double a[] = {1, NAN}, u, p;
	assert_int_equal(ctp_stats_utest(a, 1, a, 0, &u, &p), -22);
	assert_int_equal(ctp_stats_utest(a, 2, a, 1, &u, &p), -22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_spread),
		cmocka_unit_test(test_r_example),
		cmocka_unit_test(test_separated),
		cmocka_unit_test(test_critical_values),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_normal),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
