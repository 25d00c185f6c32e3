/* SPDX-License-Identifier: MIT */
/* The interval between two snapshots (see interval.h). */
#include "interval.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"

struct ctp_interval {
	const struct ctp_snap *snap[2];
	const struct ctp_exit_sum *ex;
	struct ctp_ident *id;
	/* Per CAND field (its index): the counter's change once computed
	 * (how NULL: not yet). */
	struct ctp_interval_col *col;
	size_t nf;
};

static void cols_free(struct ctp_interval_col *col, size_t n)
{
	for (size_t i = 0; col && i < n; i++) {
		free((void *)col[i].how);
		free((void *)col[i].d);
	}
	free(col);
}

/* The pair (base, cand) into a new iv; iv untouched on failure. */
static int pair(struct ctp_interval *iv, const struct ctp_snap *base,
		const struct ctp_snap *cand, const struct ctp_exit_sum *ex)
{
	const struct ctp_snap *s[2] = {base, cand};
	struct ctp_ident *id;
	size_t nf = ctp_snap_n_fields(cand);
	struct ctp_interval_col *col = calloc(nf + 1, sizeof(*col));
	if (!col)
		return -ENOMEM;
	if (ctp_ident_new(s, &id) < 0) {
		free(col);
		return -ENOMEM;
	}
	iv->snap[0] = base;
	iv->snap[1] = cand;
	iv->ex = ex;
	iv->id = id;
	iv->col = col;
	iv->nf = nf;
	return 0;
}

int ctp_interval_new(const struct ctp_snap *base, const struct ctp_snap *cand,
		     const struct ctp_exit_sum *ex, struct ctp_interval **ret)
{
	struct ctp_interval *iv = calloc(1, sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	int r = pair(iv, base, cand, ex);
	if (r < 0) {
		free(iv);
		return r;
	}
	*ret = iv;
	return 0;
}

void ctp_interval_free(struct ctp_interval *iv)
{
	if (!iv)
		return;
	ctp_ident_free(iv->id);
	cols_free(iv->col, iv->nf);
	free(iv);
}

const struct ctp_snap *ctp_interval_snap(const struct ctp_interval *iv, int k)
{
	return iv->snap[k ? 1 : 0];
}

const struct ctp_ident *ctp_interval_ident(const struct ctp_interval *iv)
{
	return iv->id;
}

const struct ctp_exit_sum *ctp_interval_exited(const struct ctp_interval *iv)
{
	return iv->ex;
}

double ctp_interval_seconds(const struct ctp_interval *iv)
{
	return iv->id->interval_s;
}

long ctp_interval_find(const struct ctp_interval *iv, uint8_t scope,
		       uint64_t tgid, uint64_t tid, uint64_t start_ns)
{
	const struct ctp_snap_table *t = ctp_snap_table(iv->snap[1], scope);
	if (scope != CTP_SCOPE_THREAD && scope != CTP_SCOPE_PROCESS)
		return -1;
	long r = ctp_snap_row(t, tgid, scope == CTP_SCOPE_THREAD ? tid : 0);
	if (r < 0 || start_ns == CTP_IDENT_UNKNOWN)
		return r;
	/* A process is its leader thread's start. */
	long tr = scope == CTP_SCOPE_THREAD
			  ? r
			  : ctp_snap_row(ctp_snap_table(iv->snap[1],
							CTP_SCOPE_THREAD),
					 tgid, tgid);
	uint64_t s = tr >= 0 ? iv->id->tstart[1][tr] : CTP_IDENT_UNKNOWN;
	return s == CTP_IDENT_UNKNOWN || s == start_ns ? r : -1;
}

/* ---- Fields by kind and rule ---------------------------------------------*/

bool ctp_interval_counter(const struct ctp_snap_field *f)
{
	return f->kind == CTP_KIND_COUNTER && f->rule == CTP_RULE_SUM &&
	       (f->type == CTP_TYPE_U64 || f->type == CTP_TYPE_I64);
}

bool ctp_interval_reaped(const struct ctp_snap_field *f)
{
	return strcmp(f->role, "reaped") == 0;
}

/* ---- A counter per task --------------------------------------------------*/

/* CAND row -> BASE row of the same task of `scope`, NULL without task
 * identity. Cgroups have no start time: one is the same by its path. */
static const long *matches(const struct ctp_ident *id, uint8_t scope)
{
	if (!id->ok)
		return NULL;
	return scope == CTP_SCOPE_THREAD    ? id->tmatch
	       : scope == CTP_SCOPE_PROCESS ? id->pmatch
					    : id->cmatch;
}

/* Each of the rows' change from the two sides' columns. */
static void changes(const struct ctp_col *c1, const struct ctp_col *c0,
		    size_t rows, const long *match, uint8_t *how,
		    long double *d)
{
	for (size_t r = 0; r < rows; r++) {
		long double x1, x0;
		long m = match ? match[r] : -1;
		how[r] = CTP_IV_NONE;
		d[r] = 0;
		if (!ctp_col_number(c1, r, &x1))
			continue;
		if (!match ||
		    (m >= 0 && (!c0 || !ctp_col_number(c0, (size_t)m, &x0))))
			how[r] = CTP_IV_UNKNOWN;
		else if (m < 0)
			how[r] = CTP_IV_NEW, d[r] = x1; /* from zero */
		else if (x1 < x0)
			how[r] = CTP_IV_RESET, d[r] = x1; /* the kernel's */
		else
			how[r] = CTP_IV_SAME, d[r] = x1 - x0;
	}
}

int ctp_interval_col(struct ctp_interval *iv, const struct ctp_snap_field *f,
		     const struct ctp_interval_col **ret)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(iv->snap[1]);
	if (f < fs || f >= fs + iv->nf || f->scope == CTP_SCOPE_HOST ||
	    f->scope == CTP_SCOPE_EXITED)
		return -EINVAL;
	struct ctp_interval_col *c = &iv->col[f->index];
	if (c->how) {
		*ret = c;
		return 0;
	}
	const struct ctp_snap_field *bf =
		ctp_snap_field_find(iv->snap[0], f->name);
	if (bf && bf->scope != f->scope)
		bf = NULL;
	const struct ctp_snap_table *t = ctp_snap_table(iv->snap[1], f->scope);
	const struct ctp_col *c1 = ctp_snap_col(iv->snap[1], f),
			     *c0 = bf ? ctp_snap_col(iv->snap[0], bf) : NULL;
	uint8_t *how =
		c1 && (c0 || !bf) ? calloc(t->rows + 1, sizeof(*how)) : NULL;
	long double *d = how ? calloc(t->rows + 1, sizeof(*d)) : NULL;
	if (d)
		changes(c1, c0, t->rows, matches(iv->id, f->scope), how, d);
	*c = (struct ctp_interval_col){
		.f = {bf, f}, .rows = t->rows, .how = how, .d = d};
	if (!d) {
		free(how);
		*c = (struct ctp_interval_col){0};
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

/* ---- A group's change ----------------------------------------------------*/

/* The member rows of scope in group g. */
static uint32_t scope_rows(const struct ctp_group *g, uint8_t scope,
			   const uint32_t **rows)
{
	switch (scope) {
	case CTP_SCOPE_THREAD:
		*rows = g->threads;
		return g->n_threads;
	case CTP_SCOPE_PROCESS:
		*rows = g->processes;
		return g->n_processes;
	case CTP_SCOPE_CGROUP:
		*rows = g->cgroups;
		return g->n_cgroups;
	}
	return 0;
}

int ctp_interval_group(struct ctp_interval *iv, const struct ctp_snap_field *f,
		       const struct ctp_group *g, struct ctp_interval_sum *out)
{
	const struct ctp_interval_col *c;
	const uint32_t *rows = NULL;
	*out = (struct ctp_interval_sum){.per_s_ok = true};
	int r = ctp_interval_col(iv, f, &c);
	if (r < 0)
		return r;
	uint32_t n = scope_rows(g, f->scope, &rows);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t row = rows[i];
		if (c->how[row] == CTP_IV_NONE || c->how[row] == CTP_IV_UNKNOWN)
			continue;
		double own = ctp_ident_task_interval(iv->id, f->scope, row);
		out->delta += c->d[row];
		out->n++;
		out->reset |= c->how[row] == CTP_IV_RESET;
		if (own > 0)
			out->per_s += c->d[row] / (long double)own;
		else
			out->per_s_ok = false;
	}
	return 0;
}

bool ctp_interval_agg_change(const struct ctp_agg *base,
			     const struct ctp_agg *cand,
			     struct ctp_interval_sum *out)
{
	long double c, b;
	*out = (struct ctp_interval_sum){0};
	if (!cand || !ctp_agg_number(cand, &c))
		return false;
	out->n = 1;
	out->delta = base && ctp_agg_number(base, &b) ? c - b : c;
	return true;
}

void ctp_interval_sum_add(struct ctp_interval_sum *acc,
			  const struct ctp_interval_sum *s)
{
	acc->n += s->n;
	acc->reset |= s->reset;
	acc->per_s_ok = acc->per_s_ok && s->per_s_ok;
	acc->delta += s->delta;
	acc->per_s += s->per_s;
}

long double ctp_interval_rate(const struct ctp_interval *iv,
			      const struct ctp_interval_sum *s)
{
	long double t = (long double)iv->id->interval_s;
	if (t <= 0)
		return NAN;
	return s->per_s_ok ? s->per_s : s->delta / t;
}

long double ctp_interval_cpu_pct(long double rate, uint8_t unit)
{
	long double k = ctp_unit_seconds(unit);
	return k > 0 ? rate * k * 100 : NAN;
}

/* ---- Exited tasks --------------------------------------------------------*/

bool ctp_interval_exit_change(const struct ctp_snap *base,
			      const struct ctp_exit_sum *ex, size_t e,
			      const struct ctp_interval_exit_measure *m,
			      long double *out)
{
	long double v = 0, b = 0, x;
	bool has = false,
	     known = ex->base_row[e] >= 0 && m->scope == CTP_SCOPE_THREAD;
	for (size_t k = 0; k < m->nxf; k++) {
		double y = ex->val[e * ex->n_fields + m->xf[k]];
		if (!isnan(y))
			v += (long double)y * m->xk[k], has = true;
	}
	/* What BASE had of the same task (ex->base_row: same ids and
	 * start). */
	for (size_t k = 0; known && k < m->nbf; k++)
		if (m->bf[k] && ctp_snap_number(base, m->bf[k],
						(size_t)ex->base_row[e], &x))
			b += m->bk ? x * m->bk[k] : x;
	*out = v - b > 0 ? v - b : 0;
	return has;
}

/* Is tgid a live process of snap? */
static bool live_process(const struct ctp_snap *snap, uint64_t tgid)
{
	return ctp_snap_row(ctp_snap_table(snap, CTP_SCOPE_PROCESS), tgid, 0) >=
	       0;
}

void ctp_interval_exit_group(const struct ctp_interval *iv,
			     const struct ctp_group *g,
			     const struct ctp_interval_exit_measure *m,
			     struct ctp_interval_sum *out)
{
	const struct ctp_exit_sum *ex = iv->ex;
	long double t = (long double)iv->id->interval_s;
	*out = (struct ctp_interval_sum){0};
	for (uint32_t i = 0; ex && m->nxf && i < g->n_extras; i++) {
		size_t e = g->extras[i];
		long double d;
		if (m->scope == CTP_SCOPE_PROCESS &&
		    (live_process(iv->snap[1], ex->id[e].tgid) ||
		     live_process(iv->snap[0], ex->id[e].tgid)))
			continue;
		if (!ctp_interval_exit_change(iv->snap[0], ex, e, m, &d))
			continue;
		out->delta += d;
		out->n++;
	}
	/* They ran within the captures' interval. */
	out->per_s_ok = t > 0;
	out->per_s = t > 0 ? out->delta / t : 0;
}
