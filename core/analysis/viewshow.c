/* SPDX-License-Identifier: MIT */
/* A view over one snapshot (see viewshow.h and docs/VIEWS.md). */
#include "viewshow.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "column.h"
#include "exitsum.h"
#include "group.h"
#include "rename.h"
#include "render.h"
#include "table.h"

#define CELL 64
/* Name columns are elided in the middle beyond this, or a fifth of a wider
 * screen (ctp_table_elide). */
#define NAME_MAX_W 24
/* A name as escaped before it is elided. */
#define NAME_FULL 512

/* One column of one section, resolved against the snapshot. */
struct vcol {
	const struct ctp_view_col *c;
	const struct ctp_snap_field *f[CTP_VIEW_MAX_FIELDS];
	const struct ctp_agg *agg[CTP_VIEW_MAX_FIELDS];
	/* compare: the same fields in BASE (NULL where it lacks one). */
	const struct ctp_snap_field *bf[CTP_VIEW_MAX_FIELDS];
	size_t nf;
	uint8_t unit;
	/* compare: the column's `exited:` fields (indexes into the exited
	 * tasks' fields) and their scales to `unit`. */
	size_t xf[CTP_VIEW_MAX_FIELDS];
	long double xk[CTP_VIEW_MAX_FIELDS];
	size_t nxf;
	struct ctp_interval_exit_measure xm; /* of xf, xk and bf */
	bool kib;	  /* an exited field's values are in steps of 1024 */
	long double *num; /* per group; NAN when absent */
	/* compare, a gauge or peak: the group's BASE value, NAN if none. */
	long double *before;
	/* compare, a counter: per group, whether a member's went back (a
	 * reset; its new value was counted). */
	bool *reset;
	long double total;
	/* It reads a counter of reaped children (role reaped): their whole
	 * lives, added as each was reaped, so its change over an interval
	 * is shown as an amount, never as a percent or a rate of it. */
	bool reaped;
};

struct sect {
	size_t name_w; /* names are elided beyond this */
	const struct ctp_snap *snap;
	const struct ctp_view *v;
	const struct ctp_view_opts *o;
	/* compare: the interval (o->interval), its BASE, task matching and
	 * exited tasks; NULL for one snapshot. */
	struct ctp_interval *iv;
	const struct ctp_snap *base;
	const struct ctp_ident *id;
	const struct ctp_exit_sum *ex;
	struct ctp_groups *g;
	/* compare: BASE grouped the same way, for gauges' values before and,
	 * without task identity (older snapshots), group-by-group changes. */
	struct ctp_groups *bg;
	bool by_group;
	/* compare, a section grouped by cgroup: renamed cgroups paired
	 * (BASE's key part cpart of a pair joins CAND's), else NULL. */
	struct ctp_rename *ren;
	long cpart;
	size_t ng, nk;
	struct vcol *cols;
	size_t nc;
	long double *age; /* seconds since the oldest member started, NAN */
	size_t *order, n_order, hidden, self, filtered;
	/* The printed rows: key parts, then the columns. */
	struct ctp_table *tab;
};

/* The fields a column reads in this snapshot; false to leave it out. */
static bool resolve(struct sect *s, struct vcol *vc)
{
	const struct ctp_view_col *c = vc->c;
	if (c->src == CTP_VSRC_IDENT)
		return true;
	for (size_t i = 0; i < c->n_fields; i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s->snap, c->fields[i]);
		if (!f || f->scope == CTP_SCOPE_HOST ||
		    (s->o->want && !s->o->want(s->o->want_arg, f->name)) ||
		    !ctp_snap_has_values(s->snap, f))
			continue;
		if (vc->nf && f->unit != vc->unit)
			continue; /* a sum adds one unit only */
		vc->unit = f->unit;
		vc->f[vc->nf++] = f;
		if (c->src == CTP_VSRC_FIELD)
			break;
	}
	return vc->nf > 0 &&
	       (c->show != CTP_VSHOW_PCT_CPU || ctp_unit_seconds(vc->unit) > 0);
}

/* The number a column shows for group gi (before `show`), or NAN. */
static long double raw_number(const struct vcol *vc, size_t gi)
{
	long double sum = 0;
	for (size_t k = 0; k < vc->nf; k++) {
		long double x;
		if (!ctp_agg_number(&vc->agg[k][gi], &x))
			return NAN;
		sum += x;
	}
	return sum;
}

/* The pair whose CAND side is group gr's cgroup, or NULL. */
static const struct ctp_rename_pair *renamed(const struct sect *s,
					     const struct ctp_group *gr)
{
	if (!s->ren || !gr->key[s->cpart])
		return NULL;
	return ctp_rename_find(s->ren, 1, gr->key[s->cpart]);
}

/* BASE's group that joins group gr: the same key, or with a renamed
 * cgroup's BASE path. */
static const struct ctp_group *base_group(const struct sect *s,
					  const struct ctp_group *gr)
{
	const struct ctp_rename_pair *p = renamed(s, gr);
	if (!p)
		return ctp_groups_find(s->bg, gr->key);
	const char *key[CTP_GROUP_MAX_KEY];
	memcpy(key, gr->key, s->nk * sizeof(*key));
	key[s->cpart] = p->path[0];
	return ctp_groups_find(s->bg, key);
}

/* The aggregate of field k of vc over BASE's group of the same key as
 * group gi; NULL when BASE has no such group or field. */
static const struct ctp_agg *
base_agg(const struct sect *s, const struct vcol *vc, size_t k, size_t gi)
{
	const struct ctp_agg *ba;
	const struct ctp_group *bgr = base_group(s, ctp_groups_at(s->g, gi));
	const struct ctp_snap_field *bf = vc->bf[k];
	if (!bgr || !bf || ctp_groups_aggregate(s->bg, bf, &ba) < 0)
		return NULL;
	return &ba[bgr - ctp_groups_at(s->bg, 0)];
}

static bool base_group_number(const struct sect *s, const struct vcol *vc,
			      size_t k, size_t gi, long double *b)
{
	const struct ctp_agg *ba = base_agg(s, vc, k, gi);
	return ba && ctp_agg_number(ba, b);
}

/* How many of the group's threads started in the interval (identity
 * known), else 0. */
static uint32_t fresh_threads(const struct sect *s, const struct ctp_group *gr)
{
	uint32_t fresh = 0;
	if (!s->id || !s->id->ok)
		return 0;
	for (uint32_t i = 0; i < gr->n_threads; i++)
		fresh += s->id->tmatch[gr->threads[i]] < 0;
	return fresh;
}

/* A gauge's or peak's value before the interval: BASE's group of the same
 * key, unless every member of this one is new; NAN when none. */
static long double before_number(const struct sect *s, const struct vcol *vc,
				 size_t gi)
{
	const struct ctp_group *gr = ctp_groups_at(s->g, gi);
	long double sum = 0, b;
	if (gr->n_threads && fresh_threads(s, gr) == gr->n_threads &&
	    !renamed(s, gr))
		return NAN;
	for (size_t k = 0; k < vc->nf; k++) {
		if (!base_group_number(s, vc, k, gi, &b))
			return NAN;
		sum += b;
	}
	return sum;
}

/* The column's exited fields, when it counts a thread's or a process's
 * change. */
static void exited_fields(const struct sect *s, struct vcol *vc)
{
	const struct ctp_exit_sum *ex = s->ex;
	if (!ex || (vc->f[0]->scope != CTP_SCOPE_THREAD &&
		    vc->f[0]->scope != CTP_SCOPE_PROCESS))
		return;
	for (size_t i = 0; i < vc->c->n_exited; i++) {
		long j = ctp_exit_sum_field(ex, vc->c->exited[i]);
		double k = j >= 0 ? ctp_exit_sum_scale(ex, (size_t)j, vc->unit)
				  : NAN;
		if (isnan(k))
			continue;
		vc->xf[vc->nxf] = (size_t)j;
		vc->xk[vc->nxf++] = k;
		vc->kib |= ex->step[j] > 1;
	}
	vc->xm = (struct ctp_interval_exit_measure){.xf = vc->xf,
						    .xk = vc->xk,
						    .nxf = vc->nxf,
						    .bf = vc->bf,
						    .nbf = vc->nf,
						    .scope = vc->f[0]->scope};
}

/* A counter column's changes: each field's per task, computed once by
 * the interval model (a field it has none of changes nowhere), and the
 * column's exited fields. */
static int changes(struct sect *s, struct vcol *vc)
{
	const struct ctp_interval_col *c;
	for (size_t k = 0; !s->by_group && k < vc->nf; k++)
		if (ctp_interval_col(s->iv, vc->f[k], &c) == -ENOMEM)
			return -ENOMEM;
	exited_fields(s, vc);
	return 0;
}

/* Is column vc a change over the interval (compare, a counter)? */
static bool interval_col(const struct sect *s, const struct vcol *vc)
{
	return s->base && s->bg && vc->f[0]->kind == CTP_KIND_COUNTER &&
	       vc->f[0]->scope != CTP_SCOPE_HOST;
}

/* What column vc shows: the view's `show`, but a reaped counter's change
 * over the interval as the amount (vcol.reaped). */
static uint8_t col_show(const struct sect *s, const struct vcol *vc)
{
	if (vc->reaped && interval_col(s, vc) &&
	    (vc->c->show == CTP_VSHOW_PCT_CPU || vc->c->show == CTP_VSHOW_RATE))
		return CTP_VSHOW_DELTA;
	return vc->c->show;
}

/* Field k of column vc's change over the interval for group gi: per
 * task matched by identity, without identity the group's change. False
 * when no member had a change. */
static bool field_change(const struct sect *s, const struct vcol *vc, size_t k,
			 size_t gi, struct ctp_interval_sum *out)
{
	if (s->by_group)
		return ctp_interval_agg_change(base_agg(s, vc, k, gi),
					       &vc->agg[k][gi], out);
	/* The field's changes were computed when the column was made. */
	ctp_interval_group(s->iv, vc->f[k], ctp_groups_at(s->g, gi), out);
	return out->n > 0;
}

/* A counter column over the interval: the change, or for pct_cpu and
 * rate the change per second, each live task's over its own interval
 * and the exited tasks' over the captures' interval (they ran within
 * it); without identity, the groups' change over it. */
static long double interval_number(const struct sect *s, const struct vcol *vc,
				   size_t gi, bool *reset)
{
	struct ctp_interval_sum sum = {.per_s_ok = true}, f, x;
	bool live = true;
	for (size_t k = 0; k < vc->nf && live; k++) {
		live = field_change(s, vc, k, gi, &f);
		*reset |= f.reset;
		ctp_interval_sum_add(&sum, &f);
	}
	ctp_interval_exit_group(s->iv, ctp_groups_at(s->g, gi), &vc->xm, &x);
	if (x.n && live)
		ctp_interval_sum_add(&sum, &x);
	else if (x.n)
		sum = x, live = true;
	if (!live)
		return NAN;
	switch (col_show(s, vc)) {
	case CTP_VSHOW_PCT_CPU:
		return ctp_interval_cpu_pct(ctp_interval_rate(s->iv, &sum),
					    vc->unit);
	case CTP_VSHOW_RATE:
		return ctp_interval_rate(s->iv, &sum);
	}
	return sum.delta;
}

static long double shown_number(const struct sect *s, struct vcol *vc,
				size_t gi)
{
	if (interval_col(s, vc))
		return interval_number(s, vc, gi, &vc->reset[gi]);
	long double x = raw_number(vc, gi);
	switch (vc->c->show) {
	case CTP_VSHOW_PCT_CPU:
		return s->age[gi] > 0 ? x * ctp_unit_seconds(vc->unit) /
						s->age[gi] * 100
				      : NAN;
	case CTP_VSHOW_RATE:
		return s->age[gi] > 0 ? x / s->age[gi] : NAN;
	}
	return x;
}

/* Ages from the start-time field and the capture's boot clock, at the end
 * of the walk: a task read late in it has aged and counted that long, and
 * one that started during it (ctprof-core itself) would otherwise show
 * more than all its CPU. */
static int ages(struct sect *s)
{
	const struct ctp_snap_header *h = ctp_snap_header(s->snap);
	const struct ctp_snap_field *st =
		ctp_snap_start_field(s->snap, CTP_SCOPE_THREAD);
	const struct ctp_agg *a = NULL;
	s->age = calloc(s->ng ? s->ng : 1, sizeof(*s->age));
	if (!s->age)
		return -ENOMEM;
	if (st && h->start_boottime_ns) {
		int r = ctp_groups_aggregate(s->g, st, &a);
		if (r < 0)
			return r;
	}
	long double end =
		(long double)(h->start_boottime_ns + h->duration_ns) * 1e-9L;
	for (size_t gi = 0; gi < s->ng; gi++) {
		s->age[gi] = NAN;
		if (a && a[gi].v.type == CTP_TYPE_U64)
			s->age[gi] = end - (long double)a[gi].v.u64 *
						   ctp_unit_seconds(st->unit);
	}
	return 0;
}

/* compare's status column, first after the keys. */
static const struct ctp_view_col status_col = {
	.id = "new",
	.label = "NEW",
	.src = CTP_VSRC_IDENT,
	.ident = CTP_VIDENT_STATUS,
	.show = CTP_VSHOW_VALUE,
};

static int columns(struct sect *s, size_t si)
{
	s->cols = calloc(s->v->n_cols + 1, sizeof(*s->cols));
	if (!s->cols)
		return -ENOMEM;
	if (s->base && !s->by_group) {
		s->cols[0].c = &status_col;
		s->cols[0].num =
			malloc((s->ng ? s->ng : 1) * sizeof(long double));
		if (!s->cols[0].num)
			return -ENOMEM;
		for (size_t gi = 0; gi < s->ng; gi++)
			s->cols[0].num[gi] = NAN;
		s->nc = 1;
	}
	for (size_t i = 0; i < s->v->n_cols; i++) {
		const struct ctp_view_col *c = &s->v->cols[i];
		struct vcol *vc = &s->cols[s->nc];
		if (c->in_mask && !(c->in_mask & (1u << si)))
			continue;
		memset(vc, 0, sizeof(*vc));
		vc->c = c;
		if (!resolve(s, vc))
			continue;
		for (size_t k = 0; k < vc->nf; k++)
			vc->reaped |= strcmp(vc->f[k]->role, "reaped") == 0;
		for (size_t k = 0; k < vc->nf; k++) {
			int r = ctp_groups_aggregate(s->g, vc->f[k],
						     &vc->agg[k]);
			if (r < 0)
				return r;
			if (s->base)
				vc->bf[k] = ctp_snap_field_find(s->base,
								vc->f[k]->name);
		}
		vc->num = malloc((s->ng ? s->ng : 1) * sizeof(*vc->num));
		if (!vc->num)
			return -ENOMEM;
		/* Levels that move (not an ordinal: a last CPU, a nice). */
		bool gauge = s->base && c->src != CTP_VSRC_IDENT &&
			     !interval_col(s, vc) &&
			     c->show <= CTP_VSHOW_DELTA &&
			     (vc->f[0]->kind == CTP_KIND_GAUGE ||
			      vc->f[0]->kind == CTP_KIND_PEAK);
		if (gauge && !(vc->before = malloc((s->ng ? s->ng : 1) *
						   sizeof(*vc->before))))
			return -ENOMEM;
		if (c->src != CTP_VSRC_IDENT && interval_col(s, vc) &&
		    !(vc->reset = calloc(s->ng ? s->ng : 1, sizeof(bool))))
			return -ENOMEM;
		if (c->src != CTP_VSRC_IDENT && interval_col(s, vc) &&
		    changes(s, vc) < 0)
			return -ENOMEM;
		for (size_t gi = 0; gi < s->ng; gi++) {
			vc->num[gi] = c->src != CTP_VSRC_IDENT
					      ? shown_number(s, vc, gi)
				      : c->ident == CTP_VIDENT_AGE ? s->age[gi]
								   : NAN;
			if (!isnan(vc->num[gi]))
				vc->total += vc->num[gi];
			if (gauge)
				vc->before[gi] = before_number(s, vc, gi);
		}
		s->nc++;
	}
	return 0;
}

static const struct sect *sort_ctx;
static size_t sort_col;
static bool sort_asc;

/* Absent last whatever the order; ties by key. */
static int cmp_rows(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const long double *num = sort_ctx->cols[sort_col].num;
	bool ha = !isnan(num[a]), hb = !isnan(num[b]);
	if (ha != hb)
		return ha ? -1 : 1;
	if (ha && num[a] != num[b])
		return (num[a] < num[b]) == sort_asc ? -1 : 1;
	return a < b ? -1 : a > b;
}

static bool hidden_row(const struct sect *s, size_t gi)
{
	if (!s->v->any_hide)
		return false;
	bool any = false;
	for (size_t c = 0; c < s->nc; c++) {
		if (s->cols[c].c == &status_col)
			continue;
		size_t vi = (size_t)(s->cols[c].c - s->v->cols);
		if (!s->v->hide_zero[vi])
			continue;
		any = true;
		long double x = s->cols[c].num[gi];
		if (!isnan(x) && x != 0)
			return false;
	}
	return any;
}

/* Is every thread of group gi one of the capturing processes'? */
static bool self_row(const struct sect *s, size_t gi)
{
	const struct ctp_snap_header *h = ctp_snap_header(s->snap);
	const struct ctp_group *gr = ctp_groups_at(s->g, gi);
	const struct ctp_snap_table *th =
		ctp_snap_table(s->snap, CTP_SCOPE_THREAD);
	if (!h->n_self || !gr->n_threads)
		return false;
	for (uint32_t i = 0; i < gr->n_threads; i++) {
		size_t k = 0;
		while (k < h->n_self &&
		       h->self_tgid[k] != th->tgid[gr->threads[i]])
			k++;
		if (k == h->n_self)
			return false;
	}
	return true;
}

static bool name_bytes(const struct sect *s, const struct ctp_group *gr,
		       size_t col, const char **p, size_t *n);

/* Does a name of group gi (name_bytes) hold the filter text? */
static bool filtered_in(const struct sect *s, size_t gi, const char *f)
{
	const struct ctp_group *gr = ctp_groups_at(s->g, gi);
	size_t fl = strlen(f);
	for (size_t c = 0; c < s->nk + s->nc; c++) {
		const char *p;
		size_t n;
		if (!name_bytes(s, gr, c, &p, &n) || !p)
			continue;
		for (size_t i = 0; i + fl <= n; i++)
			if (strncasecmp(p + i, f, fl) == 0)
				return true;
	}
	return false;
}

/* Rows to print: not hidden (idle, or the capture itself), matching the
 * filter, sorted, cut at top. */
static int rows(struct sect *s, const struct ctp_view_opts *o, size_t sc,
		bool asc)
{
	s->order = malloc((s->ng ? s->ng : 1) * sizeof(*s->order));
	if (!s->order)
		return -ENOMEM;
	for (size_t gi = 0; gi < s->ng; gi++) {
		if (self_row(s, gi))
			s->self++;
		else if (hidden_row(s, gi))
			s->hidden++;
		else if (o->filter && *o->filter &&
			 !filtered_in(s, gi, o->filter))
			s->filtered++;
		else
			s->order[s->n_order++] = gi;
	}
	if (sc != SIZE_MAX) { /* else key order, as grouped */
		sort_ctx = s;
		sort_col = sc;
		sort_asc = asc;
		qsort(s->order, s->n_order, sizeof(*s->order), cmp_rows);
	}
	if (o->top && s->n_order > o->top)
		s->n_order = o->top;
	return 0;
}

/* An age, the duration form of ctp_render_compact; "-" when unknown. */
static void age_cell(long double age, char *buf)
{
	if (isnan(age) || age < 0)
		snprintf(buf, CELL, "-");
	else
		ctp_render_duration(buf, CELL, age);
}

/* "new" when every thread of the group started in the interval, "+N"
 * when N of them did; "exited" when every task of the group exited in
 * it, "-M" when M of them did (after "+N"); "" otherwise. Returns the
 * colour of the whole states (partial counts plain). */
static enum ctp_table_class status_cell(const struct sect *s,
					const struct ctp_group *gr, char *buf)
{
	uint32_t fresh = fresh_threads(s, gr), gone = gr->n_extras;
	enum ctp_table_class cls = CTP_TABLE_PLAIN;
	buf[0] = '\0';
	if (renamed(s, gr))
		snprintf(buf, CELL, "renamed"), cls = CTP_TABLE_NOTE;
	else if (!gr->n_threads && gone)
		snprintf(buf, CELL, "exited"), cls = CTP_TABLE_GONE;
	else if (fresh && fresh == gr->n_threads && base_group(s, gr))
		/* replaced, same key */
		snprintf(buf, CELL, "restarted"), cls = CTP_TABLE_CHANGED;
	else if (fresh && fresh == gr->n_threads)
		snprintf(buf, CELL, "new"), cls = CTP_TABLE_NEW;
	else if (fresh)
		snprintf(buf, CELL, "+%u", fresh);
	if (gone && gr->n_threads && strlen(buf) + 12 < CELL)
		snprintf(buf + strlen(buf), CELL - strlen(buf), "-%u", gone);
	return cls;
}

/* Is column col of the view a name (a key part, a name ident)? */
static bool name_col(const struct sect *s, size_t col)
{
	const struct ctp_view_col *c =
		col < s->nk ? NULL : s->cols[col - s->nk].c;
	return !c ||
	       (c->src == CTP_VSRC_IDENT &&
		(c->ident == CTP_VIDENT_PCOMM || c->ident == CTP_VIDENT_COMM ||
		 c->ident == CTP_VIDENT_CGROUP));
}

/* The bytes a name column (a key part, or a name ident) shows for group
 * gr; false for other columns. *p NULL when the group has none. */
static bool name_bytes(const struct sect *s, const struct ctp_group *gr,
		       size_t col, const char **p, size_t *n)
{
	*p = NULL;
	*n = 0;
	if (!name_col(s, col))
		return false;
	if (col < s->nk) {
		*p = gr->key[col];
		*n = *p ? strlen(*p) : 0;
		return true;
	}
	const struct ctp_view_col *c = s->cols[col - s->nk].c;
	const struct ctp_snap_table *t = ctp_snap_table(
		s->snap, c->ident == CTP_VIDENT_PCOMM  ? CTP_SCOPE_PROCESS
			 : c->ident == CTP_VIDENT_COMM ? CTP_SCOPE_THREAD
						       : CTP_SCOPE_CGROUP);
	const struct ctp_bytes *b = NULL;
	const struct ctp_group_extra *x =
		gr->n_extras ? &s->ex->id[gr->extras[0]] : NULL;
	if (c->ident == CTP_VIDENT_PCOMM && gr->n_processes)
		b = &t->comm[gr->processes[0]];
	else if (c->ident == CTP_VIDENT_COMM && gr->n_threads)
		b = &t->comm[gr->threads[0]];
	else if (c->ident == CTP_VIDENT_CGROUP && gr->n_cgroups)
		b = &t->path[gr->cgroups[0]];
	else if (x) /* every member exited: what the first one was */
		b = c->ident == CTP_VIDENT_PCOMM  ? &x->pcomm
		    : c->ident == CTP_VIDENT_COMM ? &x->comm
						  : &x->cgroup;
	if (b && b->ptr)
		*p = b->ptr, *n = b->len;
	return true;
}

/* An ident's cell into buf; its colour (compare's status column). */
static enum ctp_table_class ident_cell(const struct sect *s,
				       const struct ctp_group *gr,
				       uint8_t ident, char *buf)
{
	if (ident == CTP_VIDENT_STATUS)
		return status_cell(s, gr, buf);
	if (ident == CTP_VIDENT_AGE) {
		size_t gi = (size_t)(gr - ctp_groups_at(s->g, 0));
		age_cell(s->age[gi], buf);
	} else if (ident == CTP_VIDENT_PID && gr->n_threads) {
		const struct ctp_snap_table *th =
			ctp_snap_table(s->snap, CTP_SCOPE_THREAD);
		snprintf(buf, CELL, "%llu",
			 (unsigned long long)th->tgid[gr->threads[0]]);
	} else if (ident == CTP_VIDENT_PID && gr->n_extras &&
		   s->ex->id[gr->extras[0]].tgid) {
		snprintf(buf, CELL, "%llu",
			 (unsigned long long)s->ex->id[gr->extras[0]].tgid);
	} else {
		snprintf(buf, CELL, "-");
	}
	return CTP_TABLE_PLAIN;
}

/* An aggregate a number cannot say: a category (a state letter),
 * unknown, a range, a saturated sum. */
static bool special_agg(const struct ctp_agg *a)
{
	return (a->v.type != CTP_TYPE_U64 && a->v.type != CTP_TYPE_I64) ||
	       (a->unknown && a->n_measured) || a->saturated ||
	       (a->mixed && a->hi.type != CTP_VALUE_ABSENT);
}

/* A gauge in compare: "before->after" when the two read differently. */
static void before_after(const struct vcol *vc, size_t gi, char *buf)
{
	char b[CELL];
	if (!vc->before || isnan(vc->before[gi]))
		return;
	ctp_render_compact(b, sizeof(b), vc->before[gi], vc->unit);
	if (strcmp(b, buf) == 0 || strlen(b) + strlen(buf) + 4 >= CELL)
		return;
	const char *arrow = ctp_render_utf8() ? "\xe2\x86\x92" : "->";
	size_t lb = strlen(b), la = strlen(arrow);
	memmove(buf + lb + la, buf, strlen(buf) + 1);
	memcpy(buf, b, lb);
	memcpy(buf + lb, arrow, la);
}

static void number_cell(const struct sect *s, const struct vcol *vc, size_t gi,
			char *buf)
{
	long double x = vc->num[gi];
	bool change = interval_col(s, vc);
	if (!change && vc->nf == 1 && vc->c->show <= CTP_VSHOW_DELTA &&
	    (isnan(x) || special_agg(&vc->agg[0][gi]))) {
		/* A categorical value (a state letter), "?", a range. */
		ctp_render_agg(vc->unit, &vc->agg[0][gi], buf, CELL);
		return;
	}
	if (isnan(x)) {
		snprintf(buf, CELL, "-");
		return;
	}
	uint8_t show = col_show(s, vc);
	switch (show) {
	case CTP_VSHOW_PCT_CPU:
		snprintf(buf, CELL, "%.1Lf%s", x,
			 vc->reset && vc->reset[gi] ? "!" : "");
		return;
	case CTP_VSHOW_SHARE:
		snprintf(buf, CELL, "%.1Lf%%",
			 vc->total > 0 ? x / vc->total * 100 : 0);
		return;
	}
	ctp_render_compact(buf, CELL - 2, x, vc->unit);
	if (show == CTP_VSHOW_RATE)
		strcat(buf, "/s");
	if (change && x > 0 && show != CTP_VSHOW_RATE) {
		/* A change over the interval reads as one: "+1.2s". */
		memmove(buf + 1, buf, strnlen(buf, CELL - 2) + 1);
		buf[0] = '+';
	}
	if (vc->reset && vc->reset[gi])
		strcat(buf, "!"); /* explained under the section */
	before_after(vc, gi, buf);
}

/* The columns: the key parts (ids right-aligned, as numbers are), then
 * the view's. A column no printed row has a value in is left out, unless
 * it is the sort column sc; names are elided to s->name_w. */
static int table_cols(struct sect *s, size_t sc)
{
	int r = 0;
	for (size_t k = 0; k < s->nk && r >= 0; k++) {
		const char *title = ctp_groups_key_title(s->g, k);
		bool id =
			strcmp(title, "PID") == 0 || strcmp(title, "TID") == 0;
		r = ctp_table_add_col(s->tab, title,
				      CTP_TABLE_KEEP |
					      (id ? CTP_TABLE_RIGHT : 0));
	}
	for (size_t c = 0; c < s->nc && r >= 0; c++) {
		const struct ctp_view_col *vc = s->cols[c].c;
		bool right = vc->src != CTP_VSRC_IDENT ||
			     vc->ident == CTP_VIDENT_PID ||
			     vc->ident == CTP_VIDENT_AGE;
		r = ctp_table_add_col(s->tab, vc->label,
				      (right ? CTP_TABLE_RIGHT : 0) |
					      (c != sc ? CTP_TABLE_HIDE_EMPTY
						       : CTP_TABLE_SORTED));
	}
	for (size_t c = 0; c < s->nk + s->nc && r >= 0; c++)
		if (name_col(s, c))
			ctp_table_elide(s->tab, c, s->name_w);
	return r < 0 ? r : 0;
}

/* Every printed row's cells: names escaped, idents, numbers. */
static int fill_table(struct sect *s, size_t sc)
{
	int r = (s->tab = ctp_table_new(CTP_TABLE_VIEW)) ? 0 : -ENOMEM;
	if (r == 0)
		r = table_cols(s, sc);
	for (size_t i = 0; r == 0 && i < s->n_order; i++) {
		size_t gi = s->order[i];
		const struct ctp_group *gr = ctp_groups_at(s->g, gi);
		for (size_t c = 0; r == 0 && c < s->nk + s->nc; c++) {
			const struct vcol *vc =
				c < s->nk ? NULL : &s->cols[c - s->nk];
			char buf[NAME_FULL];
			const char *p;
			size_t len;
			if (name_bytes(s, gr, c, &p, &len))
				ctp_render_escape(p ? p : "-", p ? len : 1,
						  NAME_FULL / 4, buf,
						  sizeof(buf));
			else if (vc->c->src == CTP_VSRC_IDENT)
				ctp_table_cell_class(
					s->tab,
					ident_cell(s, gr, vc->c->ident, buf));
			else
				number_cell(s, vc, gi, buf);
			r = ctp_table_text(s->tab, buf);
		}
	}
	return r;
}

/* Is column c of the section printed (ctp_table_fit)? */
static bool col_shown(const struct sect *s, size_t c)
{
	return ctp_table_shown(s->tab, s->nk + c);
}

/* compare: the section's part of the host's CPU, from its first column
 * of percent of CPU over the interval: "these 20 rows: 3.1 s of the
 * host's 4.4 s CPU (70%); all rows 4.2 s (95%)". */
static void shown_line(FILE *out, const struct sect *s)
{
	/* The host's CPU is the root cgroup's, over the time between the
	 * captures' reads of the cgroups; the rows' percents are rates. */
	double host = s->o->host_cpu_s,
	       iv = s->id ? ctp_ident_task_interval(s->id, CTP_SCOPE_CGROUP, 0)
			  : 0;
	if (!s->base || host < 0.5 || iv <= 0 || !s->n_order)
		return;
	for (size_t c = 0; c < s->nc; c++) {
		const struct vcol *vc = &s->cols[c];
		if (col_show(s, vc) != CTP_VSHOW_PCT_CPU ||
		    !interval_col(s, vc))
			continue;
		long double shown = 0;
		for (size_t r = 0; r < s->n_order; r++)
			if (!isnan(vc->num[s->order[r]]))
				shown += vc->num[s->order[r]];
		double a = (double)(shown * iv / 100),
		       t = (double)(vc->total * iv / 100);
		bool all =
			s->n_order == s->ng - s->hidden - s->self - s->filtered;
		fprintf(out,
			"  %s %zu row%s: %.1f s of the host's %.1f s CPU "
			"(%.0f%%)",
			all ? "all" : "these", s->n_order,
			s->n_order == 1 ? "" : "s", a, host, a / host * 100);
		/* ctprof-core's own rows are hidden */
		if (!all || s->self || s->filtered)
			fprintf(out, "; all rows %.1f s (%.0f%%)", t,
				t / host * 100);
		fputc('\n', out);
		return;
	}
}

/* Under a section, what a '!' means when a printed cell has one. */
static void reset_line(FILE *out, const struct sect *s)
{
	for (size_t c = 0; c < s->nc; c++) {
		const struct vcol *vc = &s->cols[c];
		for (size_t r = 0;
		     vc->reset && col_shown(s, c) && r < s->n_order; r++)
			if (vc->reset[s->order[r]]) {
				fputs("  !: a counter went back in the "
				      "interval (a reset); its new value is "
				      "counted\n",
				      out);
				return;
			}
	}
}

/* Under a section, what a printed column of reaped children's counters
 * holds (vcol.reaped): not what they used in the interval. */
static void reaped_line(FILE *out, const struct sect *s)
{
	for (size_t c = 0; c < s->nc; c++) {
		const struct vcol *vc = &s->cols[c];
		if (!vc->reaped || !col_shown(s, c))
			continue;
		char esc[CELL * 4];
		fprintf(out, "  %s: ",
			ctp_render_escape(vc->c->label, strlen(vc->c->label),
					  CELL, esc, sizeof(esc)));
		fputs(s->base ? "whole lives of the children reaped in the "
				"interval, not a share of it\n"
			      : "whole lives of the children reaped (waited "
				"for)\n",
		      out);
	}
}

/* Under a section, the printed columns that add exited tasks whose
 * values their source rounds down (field `step`: taskstats' I/O, in KiB
 * steps), when a printed row has exited tasks: their small counts read 0.
 * The reason goes on a line of its own when one would not fit. */
static void step_line(FILE *out, const struct sect *s)
{
	static const char why[] = "exited tasks' values are rounded down to "
				  "1024s (KiB steps)";
	char labels[512] = "";
	size_t n = 0, len = 0;
	bool extras = false;
	for (size_t r = 0; r < s->n_order; r++)
		extras |= ctp_groups_at(s->g, s->order[r])->n_extras > 0;
	for (size_t c = 0; extras && c < s->nc; c++) {
		const struct vcol *vc = &s->cols[c];
		char esc[CELL * 4];
		if (!vc->kib || !col_shown(s, c))
			continue;
		ctp_render_escape(vc->c->label, strlen(vc->c->label), CELL, esc,
				  sizeof(esc));
		int w = snprintf(labels + len, sizeof(labels) - len, "%s%s",
				 n++ ? ", " : "", esc);
		if (w > 0 && (size_t)w < sizeof(labels) - len)
			len += (size_t)w;
	}
	if (!n)
		return;
	bool one =
		!s->o->width ||
		2 + ctp_render_width(labels) + 2 + strlen(why) <= s->o->width;
	fprintf(out, "  %s:%s%s\n", labels, one ? " " : "\n    ", why);
}

/* Under a section, each printed renamed cgroup with its BASE path. */
static void renamed_lines(FILE *out, const struct sect *s)
{
	const char *arrow = ctp_render_utf8() ? " \xe2\x86\x92 " : " -> ";
	size_t w =
		s->o->width > 48 ? (s->o->width - 44) / 2 : CTP_TABLE_NAME_MAX;
	for (size_t r = 0; r < s->n_order; r++) {
		const struct ctp_rename_pair *p =
			renamed(s, ctp_groups_at(s->g, s->order[r]));
		if (!p)
			continue;
		char e[2][NAME_FULL], c[2][CTP_TABLE_NAME_BYTES];
		for (int k = 0; k < 2; k++) {
			ctp_render_escape(p->path[k], strlen(p->path[k]),
					  NAME_FULL / 4, e[k], sizeof(e[k]));
			ctp_table_elide_text(e[k], w, c[k]);
		}
		if (p->carried)
			fprintf(out, "  renamed: %s%s%s, as its parent\n", c[0],
				arrow, c[1]);
		else
			fprintf(out,
				"  renamed: %s%s%s, %.0f%% of thread types "
				"shared\n",
				c[0], arrow, c[1], p->jaccard * 100);
	}
}

/* Distinct reasons one `why_absent:` line names; more are "other". */
#define WHY_MAX 8

struct why {
	struct ctp_bytes text[WHY_MAX];
	size_t n[WHY_MAX], kinds, other, total;
};

/* Tally the reason of each row of f's table in the section's groups, each
 * row once (a process is a member of each of its threads' groups). */
static int why_tally(const struct sect *s, const struct ctp_snap_field *f,
		     struct why *w)
{
	const struct ctp_snap_table *t = ctp_snap_table(s->snap, f->scope);
	bool *seen = calloc(t->rows ? t->rows : 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (size_t gi = 0; gi < s->ng; gi++) {
		const struct ctp_group *gr = ctp_groups_at(s->g, gi);
		const uint32_t *rows =
			f->scope == CTP_SCOPE_THREAD	? gr->threads
			: f->scope == CTP_SCOPE_PROCESS ? gr->processes
							: gr->cgroups;
		uint32_t n = f->scope == CTP_SCOPE_THREAD    ? gr->n_threads
			     : f->scope == CTP_SCOPE_PROCESS ? gr->n_processes
							     : gr->n_cgroups;
		for (uint32_t i = 0; i < n; i++) {
			if (seen[rows[i]])
				continue;
			seen[rows[i]] = true;
			struct ctp_value v = ctp_snap_get(s->snap, f, rows[i]);
			if (v.type != CTP_TYPE_STRING)
				continue;
			size_t k = 0;
			while (k < w->kinds &&
			       (w->text[k].len != v.str.len ||
				memcmp(w->text[k].ptr, v.str.ptr, v.str.len)))
				k++;
			if (k == w->kinds && k < WHY_MAX)
				w->text[w->kinds++] = v.str;
			if (k < WHY_MAX)
				w->n[k]++;
			else
				w->other++;
			w->total++;
		}
	}
	free(seen);
	return 0;
}

/* Append one part of a note to line (of width *used), wrapping before it
 * when it would pass the screen's width. */
static void note_part(FILE *out, size_t width, size_t *used, const char *part)
{
	size_t w = ctp_render_width(part);
	if (width && *used > 3 && *used + w > width) {
		fputs("\n   ", out);
		*used = 3;
	}
	fputs(part, out);
	*used += w;
}

/*
 * Under a section, per column of it with `why_absent:` (a label field a
 * plugin sets on the rows it could not give the column's value): how many
 * rows carry a reason, and which, most frequent first. "  no PSS for 26
 * processes (smaps.not_read): time_budget_ms 24, max_rss_bytes 2". Also
 * when the column itself is left out (no row has its value at all).
 */
static int absent_lines(FILE *out, const struct sect *s, size_t si)
{
	static const char *const noun[][2] = {
		[CTP_SCOPE_CGROUP] = {"cgroup", "cgroups"},
		[CTP_SCOPE_PROCESS] = {"process", "processes"},
		[CTP_SCOPE_THREAD] = {"thread", "threads"}};
	for (size_t i = 0; i < s->v->n_cols; i++) {
		const struct ctp_view_col *c = &s->v->cols[i];
		const struct ctp_snap_field *f =
			c->why_absent
				? ctp_snap_field_find(s->snap, c->why_absent)
				: NULL;
		bool wanted = !s->o->want;
		for (size_t k = 0; !wanted && k < c->n_fields; k++)
			wanted = s->o->want(s->o->want_arg, c->fields[k]);
		if (!f || !wanted ||
		    (c->in_mask && !(c->in_mask & (1u << si))) ||
		    (f->scope != CTP_SCOPE_PROCESS &&
		     f->scope != CTP_SCOPE_THREAD &&
		     f->scope != CTP_SCOPE_CGROUP))
			continue;
		struct why w = {0};
		int r = why_tally(s, f, &w);
		if (r < 0)
			return r;
		if (!w.total)
			continue;
		/* Most frequent first; ties as met. */
		for (size_t a = 1; a < w.kinds; a++)
			for (size_t b = a; b > 0 && w.n[b] > w.n[b - 1]; b--) {
				struct ctp_bytes t = w.text[b];
				size_t n = w.n[b];
				w.text[b] = w.text[b - 1], w.n[b] = w.n[b - 1];
				w.text[b - 1] = t, w.n[b - 1] = n;
			}
		char label[CELL], part[CELL + 32];
		size_t used = 0;
		ctp_render_escape(c->label, strlen(c->label), CELL / 4, label,
				  sizeof(label));
		snprintf(part, sizeof(part), "  no %s for %zu %s", label,
			 w.total, noun[f->scope][w.total != 1]);
		note_part(out, s->o->width, &used, part);
		snprintf(part, sizeof(part), " (%s):", f->name);
		note_part(out, s->o->width, &used, part);
		for (size_t k = 0; k <= w.kinds; k++) {
			char text[CELL];
			if (k == w.kinds && !w.other)
				break;
			if (k < w.kinds)
				ctp_render_escape(w.text[k].ptr, w.text[k].len,
						  CELL / 4, text, sizeof(text));
			snprintf(part, sizeof(part), " %s %zu%s",
				 k < w.kinds ? text : "other",
				 k < w.kinds ? w.n[k] : w.other,
				 k < w.kinds - !w.other ? "," : "");
			note_part(out, s->o->width, &used, part);
		}
		fputc('\n', out);
	}
	return 0;
}

static void sect_free(struct sect *s)
{
	for (size_t c = 0; c < s->nc; c++) {
		free(s->cols[c].num);
		free(s->cols[c].before);
		free(s->cols[c].reset);
	}
	free(s->cols);
	free(s->age);
	free(s->order);
	ctp_table_free(s->tab);
	ctp_rename_free(s->ren);
	ctp_groups_free(s->g);
	ctp_groups_free(s->bg);
}

/* The first number column of the section, else SIZE_MAX (key order). */
static size_t first_number(const struct sect *s)
{
	for (size_t c = 0; c < s->nc; c++)
		if (s->cols[c].c->src != CTP_VSRC_IDENT)
			return c;
	return SIZE_MAX;
}

/*
 * The sort column of this section and its order: --sort (a column id or
 * label of the view), else the view's. A column this section does not
 * show (`in:`, or no values in this snapshot) leaves the section to the
 * view's column, else its first number. A name that is no column of the
 * view at all is an error.
 */
static int sort_of(const struct sect *s, const struct ctp_view_opts *o,
		   size_t *sc, bool *asc, char *err, size_t errlen)
{
	*asc = o->asc >= 0 ? o->asc : s->v->asc;
	if (o->sort && ctp_view_col_find(s->v, o->sort) < 0) {
		snprintf(err, errlen,
			 "--sort %s: no such column in view '%s' "
			 "(`ctprof-core views %s` lists them)",
			 o->sort, s->v->name, s->v->name);
		return -EINVAL;
	}
	/* The view's column (ctp_view_col_find: by id or label), if this
	 * section shows it; else the view's own sort column. */
	const struct ctp_view_col *want[2] = {
		o->sort ? &s->v->cols[ctp_view_col_find(s->v, o->sort)] : NULL,
		&s->v->cols[s->v->sort]};
	for (size_t k = 0; k < 2; k++)
		for (size_t c = 0; want[k] && c < s->nc; c++)
			if (s->cols[c].c == want[k]) {
				*sc = c;
				return 0;
			}
	*sc = first_number(s);
	return 0;
}

/* lifetime: bit 0, a pct_cpu column is shown; bit 1, a rate column. */
/* The title in buf, long (compact false) or short. */
static void title_text(char *buf, size_t n, const struct sect *s, size_t si,
		       size_t sc, unsigned lifetime, bool compact)
{
	static const char *const since[2][4] = {
		{"", ", % since task start", ", /s since task start",
		 ", % and /s since task start"},
		{"", ", lifetime %", ", lifetime /s", ", lifetime % and /s"}};
	size_t o = 0;
#define ADD(...)                                                               \
	do {                                                                   \
		int w_ = snprintf(buf + o, n - o, __VA_ARGS__);                \
		o = w_ < 0 ? o : o + (size_t)w_ < n ? o + (size_t)w_ : n - 1;  \
	} while (0)
	ADD("%s", s->v->secs[si].title);
	if (s->base)
		ADD(" over %.2f s", ctp_interval_seconds(s->iv));
	ADD(", top %zu of %zu", s->n_order,
	    s->ng - s->hidden - s->self - s->filtered);
	if (s->o->filter && *s->o->filter)
		ADD(" matching '%s'", s->o->filter);
	if (sc != SIZE_MAX)
		ADD(" by %s", s->cols[sc].c->label);
	/* Hidden rows: those whose hide_zero columns are all zero or absent
	 * ("idle" only fits a CPU view), and the capturing processes. */
	if (compact && (s->hidden || s->self))
		ADD(" (%zu hidden)", s->hidden + s->self);
	else if (s->hidden && s->self)
		ADD(" (%zu at zero and %zu of ctprof-core hidden)", s->hidden,
		    s->self);
	else if (s->hidden || s->self)
		ADD(" (%zu %s hidden)", s->hidden + s->self,
		    s->hidden ? "at zero" : "of ctprof-core");
	if (!s->base)
		ADD("%s", since[compact][lifetime & 3]);
#undef ADD
}

/* The section's title line, the short form when the long one would not
 * fit the width. */
static void title_line(FILE *out, const struct sect *s, size_t si, size_t sc,
		       unsigned lifetime)
{
	char buf[512];
	title_text(buf, sizeof(buf), s, si, sc, lifetime, false);
	if (s->o->width && ctp_render_width(buf) > s->o->width)
		title_text(buf, sizeof(buf), s, si, sc, lifetime, true);
	fprintf(out, "%s\n", buf);
}

/* The axes section si is grouped by: --group-by, else the section's; with
 * by_name, a pid axis is pcomm and a tid axis pcomm,comm. */
static void section_axes(const struct sect *s, size_t si,
			 const struct ctp_view_opts *o, char *buf, size_t n)
{
	const char *axes = o->group_by ? o->group_by : s->v->secs[si].group_by;
	size_t len = 0;
	buf[0] = '\0';
	if (!o->by_name || o->group_by) {
		snprintf(buf, n, "%s", axes);
		return;
	}
	for (const char *p = axes; *p;) {
		size_t t = strcspn(p, ",");
		const char *name = t == 3 && !strncmp(p, "pid", 3) ? "pcomm"
				   : t == 3 && !strncmp(p, "tid", 3)
					   ? "pcomm,comm"
					   : NULL;
		int w = name ? snprintf(buf + len, n - len, "%s%s",
					len ? "," : "", name)
			     : snprintf(buf + len, n - len, "%s%.*s",
					len ? "," : "", (int)t, p);
		if (w < 0 || (size_t)w >= n - len)
			return;
		len += (size_t)w;
		p += t + (p[t] == ',');
	}
}

/* Group the section and compute its columns: the part of a section `show`
 * and the numbers share. */
static int section_build(struct sect *s, size_t si,
			 const struct ctp_view_opts *o, char *err,
			 size_t errlen)
{
	struct ctp_group_spec spec = {.no_normalize = o->no_normalize};
	char axes[256];
	section_axes(s, si, o, axes, sizeof(axes));
	int r = ctp_group_spec_parse(axes, &spec, err, errlen);
	const struct ctp_exit_sum *ex = s->ex;
	if (r == 0)
		r = ctp_groups_new_extra(s->snap, &spec, ex ? ex->id : NULL,
					 ex ? ex->tasks : 0, &s->g, err,
					 errlen);
	if (r == 0 && s->base)
		r = ctp_groups_new(s->base, &spec, &s->bg, err, errlen);
	s->by_group = s->base && !s->id->ok;
	s->cpart = ctp_group_spec_cgroup_part(&spec);
	if (r == 0 && s->bg && o->rename && s->cpart >= 0 &&
	    ctp_rename_new((struct ctp_groups *const[2]){s->bg, s->g},
			   (size_t)s->cpart, o->rename, &s->ren) < 0)
		r = -ENOMEM;
	if (r < 0)
		return r;
	s->ng = ctp_groups_count(s->g);
	s->nk = ctp_groups_n_key(s->g);
	if ((r = ages(s)) < 0)
		return r;
	return columns(s, si);
}

static int section(FILE *out, struct sect *s, size_t si,
		   const struct ctp_view_opts *o, char *err, size_t errlen)
{
	size_t sc;
	bool asc;
	unsigned lifetime = 0;
	int r;
	if ((r = section_build(s, si, o, err, errlen)) < 0 ||
	    (r = sort_of(s, o, &sc, &asc, err, errlen)) < 0)
		return r;
	size_t numbers = 0;
	for (size_t c = 0; c < s->nc; c++) {
		lifetime |= (s->cols[c].c->show == CTP_VSHOW_PCT_CPU) |
			    (s->cols[c].c->show == CTP_VSHOW_RATE) << 1;
		numbers += s->cols[c].c->src != CTP_VSRC_IDENT;
	}
	if (!numbers) {
		fprintf(out,
			"%s: nothing here from view '%s' (ctprof-core views "
			"%s)\n",
			s->v->secs[si].title, s->v->name, s->v->name);
		return 0;
	}
	/* Columns past the width go, from the first that does not fit. */
	static const char *const past[] = {">", NULL};
	if ((r = rows(s, o, sc, asc)) < 0 || (r = fill_table(s, sc)) < 0 ||
	    (r = ctp_table_fit(s->tab, o->width, past)) < 0)
		return r;
	title_line(out, s, si, sc, lifetime);
	ctp_table_print(s->tab, out, o->color);
	shown_line(out, s);
	reset_line(out, s);
	reaped_line(out, s);
	step_line(out, s);
	renamed_lines(out, s);
	return absent_lines(out, s, si);
}

size_t ctp_view_fit_rows(const struct ctp_view *v, size_t height, size_t header,
			 size_t *lines)
{
	if (lines)
		*lines = 0;
	if (height < 12 || !v->n_secs)
		return 20;
	size_t fixed = header + 1 + 2 * v->n_secs + (v->n_secs - 1) + 1;
	size_t per = height > fixed ? (height - fixed) / v->n_secs : 0;
	if (lines)
		*lines = height - header - 2; /* the blank line, the prompt */
	return per < 3 ? 3 : per;
}

static void sect_init(struct sect *s, const struct ctp_snap *snap,
		      const struct ctp_view *v, const struct ctp_view_opts *o)
{
	*s = (struct sect){.snap = snap, .v = v, .o = o, .iv = o->interval};
	if (s->iv) {
		s->base = ctp_interval_snap(s->iv, 0);
		s->id = ctp_interval_ident(s->iv);
		s->ex = ctp_interval_exited(s->iv);
	}
	s->name_w = !o->width			? CELL
		    : o->width / 5 > NAME_MAX_W ? o->width / 5
						: NAME_MAX_W;
}

static int show_sections(FILE *out, const struct ctp_snap *snap,
			 const struct ctp_view *v,
			 const struct ctp_view_opts *o, char *err,
			 size_t errlen)
{
	for (size_t si = 0; si < v->n_secs; si++) {
		struct sect s;
		sect_init(&s, snap, v, o);
		if (si)
			fputc('\n', out);
		int r = section(out, &s, si, o, err, errlen);
		sect_free(&s);
		if (r < 0)
			return r;
	}
	return ferror(out) ? -EIO : 0;
}

static size_t count_lines(const char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n + (len && buf[len - 1] != '\n');
}

int ctp_view_show(FILE *out, const struct ctp_snap *snap,
		  const struct ctp_view *v, const struct ctp_view_opts *o,
		  char *err, size_t errlen)
{
	if (!o->lines || !o->top || !v->n_secs)
		return show_sections(out, snap, v, o, err, errlen);
	/* The notes under a section (what a column holds, why values are
	 * absent) are known once it is laid out: lay the sections out, and
	 * again with fewer rows while they take more lines than there are. */
	struct ctp_view_opts fo = *o;
	/* Counted without colour: the lines are the same. */
	fo.color = false;
	for (;;) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (!m)
			return -ENOMEM;
		int r = show_sections(m, snap, v, &fo, err, errlen);
		if (fclose(m) != 0 && r == 0)
			r = -ENOMEM;
		size_t n = r == 0 ? count_lines(buf, len) : 0;
		if (r == 0 && n > o->lines && fo.top > 3) {
			size_t cut = (n - o->lines + v->n_secs - 1) / v->n_secs;
			fo.top = fo.top > cut + 3 ? fo.top - cut : 3;
			free(buf);
			continue;
		}
		/* The colour's sequences are the program's: written past a
		 * ctp_term_stream's rule, which a buffer would lose. */
		if (r == 0 && o->color) {
			free(buf);
			fo.color = true;
			return show_sections(out, snap, v, &fo, err, errlen);
		}
		if (r == 0 && len && fwrite(buf, 1, len, out) != len)
			r = -EIO;
		free(buf);
		return r < 0 ? r : ferror(out) ? -EIO : 0;
	}
}

/* ---- The numbers (compare --vs) ------------------------------------------*/

void ctp_view_nums_free(struct ctp_view_nums *n, size_t n_secs)
{
	for (size_t i = 0; n && i < n_secs; i++) {
		for (size_t k = 0; k < n[i].ng * n[i].nk; k++)
			free(n[i].key[k]);
		for (size_t k = 0; k < n[i].nk; k++)
			free(n[i].key_title[k]);
		free(n[i].key);
		free(n[i].col);
		free(n[i].num);
	}
	free(n);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Section s (built) as numbers into *n: every group but the capture's own,
 * the number columns. */
static int nums_of(struct sect *s, size_t sc, bool asc, struct ctp_view_nums *n)
{
	n->nk = s->nk;
	n->sort = SIZE_MAX;
	n->asc = asc;
	for (size_t k = 0; k < s->nk; k++)
		if (!(n->key_title[k] = strdup(ctp_groups_key_title(s->g, k))))
			return -ENOMEM;
	n->col = calloc(s->nc ? s->nc : 1, sizeof(*n->col));
	n->key = calloc(s->ng * s->nk + 1, sizeof(*n->key));
	if (!n->col || !n->key)
		return -ENOMEM;
	size_t *cols = calloc(s->nc ? s->nc : 1, sizeof(*cols));
	if (!cols)
		return -ENOMEM;
	for (size_t c = 0; c < s->nc; c++) {
		const struct vcol *vc = &s->cols[c];
		const struct ctp_snap_field *f = vc->f[0];
		if (vc->c->src == CTP_VSRC_IDENT ||
		    (f->kind != CTP_KIND_COUNTER && f->kind != CTP_KIND_GAUGE &&
		     f->kind != CTP_KIND_PEAK) ||
		    (f->type != CTP_TYPE_U64 && f->type != CTP_TYPE_I64))
			continue; /* no amount: a name, a state, an order */
		if (c == sc)
			n->sort = n->nc;
		cols[n->nc] = c;
		n->col[n->nc++] = (struct ctp_view_num_col){
			.col = (size_t)(vc->c - s->v->cols),
			.unit = vc->unit,
			.show = col_show(s, vc),
			.change = interval_col(s, vc),
		};
	}
	n->num = malloc((s->ng * n->nc + 1) * sizeof(*n->num));
	int r = n->num ? 0 : -ENOMEM;
	for (size_t gi = 0; r == 0 && gi < s->ng; gi++) {
		const struct ctp_group *gr = ctp_groups_at(s->g, gi);
		if (self_row(s, gi))
			continue;
		for (size_t k = 0; k < s->nk; k++)
			if (gr->key[k] && !(n->key[n->ng * s->nk + k] =
						    dup_or_null(gr->key[k])))
				r = -ENOMEM;
		for (size_t c = 0; c < n->nc; c++)
			n->num[n->ng * n->nc + c] = s->cols[cols[c]].num[gi];
		n->ng++;
	}
	free(cols);
	return r;
}

int ctp_view_nums(const struct ctp_snap *snap, const struct ctp_view *v,
		  const struct ctp_view_opts *o, struct ctp_view_nums **ret,
		  char *err, size_t errlen)
{
	struct ctp_view_nums *n = calloc(v->n_secs + 1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	int r = 0;
	for (size_t si = 0; r == 0 && si < v->n_secs; si++) {
		struct sect s;
		size_t sc;
		bool asc;
		sect_init(&s, snap, v, o);
		r = section_build(&s, si, o, err, errlen);
		if (r == 0)
			r = sort_of(&s, o, &sc, &asc, err, errlen);
		if (r == 0)
			r = nums_of(&s, sc, asc, &n[si]);
		sect_free(&s);
	}
	if (r < 0) {
		ctp_view_nums_free(n, v->n_secs);
		return r;
	}
	*ret = n;
	return 0;
}
