/* SPDX-License-Identifier: MIT */
/* Medians, spreads and the Mann-Whitney U test (see stats.h). */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

double ctp_stats_median(double *x, size_t n)
{
	if (!n)
		return NAN;
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

double ctp_stats_spread(const double *x, size_t n, double m)
{
	double far = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(x[i] - m) > far)
			far = fabs(x[i] - m);
	if (far == 0)
		return 0;
	return m == 0 ? NAN : far / fabs(m) * 100;
}

/* A pooled value and the side it came from. */
struct pooled {
	double v;
	bool a;
};

static int cmp_pooled(const void *pa, const void *pb)
{
	return cmp_double(&((const struct pooled *)pa)->v,
			  &((const struct pooled *)pb)->v);
}

/*
 * Twice each pooled value's mid-rank (an integer: ranks 1..n, a run of
 * ties at the mean of its ranks), into r2 in the sorted order; *ties the
 * sum of t^3 - t over the runs of t ties.
 */
static void midranks2(const struct pooled *s, size_t n, long *r2, double *ties)
{
	*ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && s[j + 1].v == s[i].v)
			j++;
		for (size_t k = i; k <= j; k++)
			r2[k] = (long)(i + 1 + j + 1); /* 2 x mean rank */
		double t = (double)(j - i + 1);
		*ties += t * t * t - t;
		i = j + 1;
	}
}

/*
 * P(|W - E| >= |w - E|) over the splits of the pooled ranks r2 (doubled)
 * into na and the rest, W the doubled rank sum of the na: count the
 * splits by their sum (a subset-sum count, in doubles: C(50, 25) is
 * below 2^53, so exact).
 */
static int exact_p(const long *r2, size_t n, size_t na, long w, double *p)
{
	long top = (long)(n * (n + 1)); /* the doubled sum of every rank */
	size_t width = (size_t)top + 1;
	double *ways = calloc((na + 1) * width, sizeof(*ways));
	if (!ways)
		return -ENOMEM;
	ways[0] = 1;
	for (size_t i = 0; i < n; i++)
		for (size_t k = (i + 1 < na ? i + 1 : na); k >= 1; k--)
			for (long s = top; s >= r2[i]; s--)
				ways[k * width + (size_t)s] +=
					ways[(k - 1) * width +
					     (size_t)(s - r2[i])];
	/* E doubled is na (n + 1): compare doubled distances exactly. */
	long e = (long)(na * (n + 1)), d = labs(w - e);
	double all = 0, far = 0;
	for (long s = 0; s <= top; s++) {
		double c = ways[na * width + (size_t)s];
		all += c;
		if (labs(s - e) >= d)
			far += c;
	}
	free(ways);
	*p = far / all;
	return 0;
}

int ctp_stats_utest(const double *a, size_t na, const double *b, size_t nb,
		    double *u, double *p)
{
	size_t n = na + nb;
	if (!na || !nb)
		return -EINVAL;
	struct pooled *s = malloc(n * sizeof(*s));
	long *r2 = malloc(n * sizeof(*r2));
	int r = s && r2 ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		s[i] = (struct pooled){i < na ? a[i] : b[i - na], i < na};
		if (isnan(s[i].v))
			r = -EINVAL;
	}
	if (r < 0)
		goto out;
	qsort(s, n, sizeof(*s), cmp_pooled);
	double ties;
	midranks2(s, n, r2, &ties);
	long w = 0;
	for (size_t i = 0; i < n; i++)
		w += s[i].a ? r2[i] : 0;
	*u = (double)w / 2 - (double)na * (double)(na + 1) / 2;
	if (s[0].v == s[n - 1].v) {
		*p = 1; /* every value equal: no difference at all */
	} else if (n <= CTP_STATS_EXACT_MAX) {
		r = exact_p(r2, n, na, w, p);
	} else {
		double mu = (double)na * (double)nb / 2, N = (double)n;
		double var = (double)na * (double)nb / 12 *
			     ((N + 1) - ties / (N * (N - 1)));
		double z = (fabs(*u - mu) - 0.5) / sqrt(var);
		*p = z <= 0 ? 1 : erfc(z / sqrt(2));
	}
out:
	free(s);
	free(r2);
	return r;
}
