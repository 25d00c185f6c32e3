/* SPDX-License-Identifier: MIT */
/*
 * Small-sample statistics for comparing runs (compare --vs,
 * docs/COMPARE.md "Interval against interval"): the median and spread of
 * a side's runs, and the Mann-Whitney U test of two sides, as benchstat
 * (golang.org/x/perf) marks a difference inside the noise. Pure functions
 * over caller arrays. Private to the core.
 */
#ifndef CTP_CORE_STATS_H
#define CTP_CORE_STATS_H

#include <stddef.h>

/* The significance level a difference is marked at. */
#define CTP_STATS_ALPHA 0.05

/*
 * The median of x[0..n) (the mean of the middle two for an even n),
 * sorting x in place; NAN for n 0.
 */
double ctp_stats_median(double *x, size_t n);

/*
 * The spread of x[0..n) around its median m: the largest distance of a
 * value from m, in percent of |m|. 0 for n <= 1 or when every value is
 * m; NAN when m is 0 and a value differs.
 */
double ctp_stats_spread(const double *x, size_t n, double m);

/*
 * The two-sided Mann-Whitney U test (Wilcoxon rank-sum) of samples a and
 * b: *u the U of a (pairs with a's value above b's, ties counting a half),
 * *p the probability, were both drawn from one distribution, of a rank sum
 * of a at least as far from its mean as this one. Exact while na + nb <=
 * CTP_STATS_EXACT_MAX: the rank sums of every split of the pooled ranks
 * counted (ties at their mid-ranks, so the test is exact given the ties);
 * beyond, the normal approximation with the tie and continuity
 * corrections. Every value equal: p 1. Returns 0, -EINVAL when a side is
 * empty or a value is NAN, -ENOMEM.
 */
#define CTP_STATS_EXACT_MAX 50
int ctp_stats_utest(const double *a, size_t na, const double *b, size_t nb,
		    double *u, double *p);

#endif
