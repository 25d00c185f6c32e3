/* SPDX-License-Identifier: MIT */
/* Questions over a whole recording (see trend.h, docs/TREND.md). */
#include "trend.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "column.h"
#include "grow.h"
#include "hash.h"
#include "ident.h"
#include "interval.h"
#include "render.h"

#define CELL 64
/* Names are elided in the middle beyond this (ctp_table_elide). */
#define NAME_W 16

/* One measure of one row over the recording. */
struct stat1 {
	bool any; /* a value seen */
	long double first, last, min, max;
	int64_t t_first, t_last, t_min, t_max;
	/* A counter: its increase (the sum of its changes between captures
	 * the row was in, by identity), and the highest rate of one. */
	bool inc_any, peak_any;
	long double inc, peak;
	int64_t t_peak;
};

/* One row: a task or group, from the first capture it was in. */
struct row {
	char *id;   /* the key parts and the task's start: what joins */
	char **key; /* the key parts (NULL: unknown), for printing */
	char *name; /* the view's name column of its last capture */
	size_t name_len;
	int64_t seen_first, seen_last;
	struct stat1 *m; /* per measure */
};

/* A number column of the view. */
struct measure {
	const struct ctp_view_col *c;
	bool resolved; /* unit and kind known (the first snapshot with it) */
	bool counter;
	bool pct; /* a time counter shown as percent of one CPU */
	uint8_t unit;
	/* This snapshot's fields (none: no value in it). */
	const struct ctp_snap_field *f[CTP_VIEW_MAX_FIELDS];
	const struct ctp_agg *agg[CTP_VIEW_MAX_FIELDS];
	size_t nf;
};

struct ctp_trend {
	struct ctp_group_spec spec;
	const struct ctp_view *v;
	const struct ctp_view_col *name_col; /* an ident pcomm or comm */
	struct measure *ms;
	size_t n_ms;
	/* Rows, and an open-addressing index of them by id. */
	struct row *rows;
	size_t n_rows, cap_rows;
	long *idx;
	size_t idx_cap;
	/* Key titles, from the first snapshot. */
	char **titles;
	size_t n_key;
	struct ctp_snap *prev;
	size_t fed;
	int64_t t0, t1;
	/* Which start identifies a group: none, a thread's, a process's. */
	uint8_t ident_scope;
};

/* ---- Rows -----------------------------------------------------------------*/

static size_t hash(const char *s)
{
	return ctp_hash_bytes(s, strlen(s));
}

static int index_grow(struct ctp_trend *t)
{
	size_t cap = t->idx_cap ? t->idx_cap * 2 : 256;
	long *idx = malloc(cap * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		idx[i] = -1;
	for (size_t r = 0; r < t->n_rows; r++) {
		size_t h = hash(t->rows[r].id) & (cap - 1);
		while (idx[h] >= 0)
			h = (h + 1) & (cap - 1);
		idx[h] = (long)r;
	}
	free(t->idx);
	t->idx = idx;
	t->idx_cap = cap;
	return 0;
}

/* The row of id, or -1 with *slot where it would go. */
static long row_find(const struct ctp_trend *t, const char *id, size_t *slot)
{
	size_t h = hash(id) & (t->idx_cap - 1);
	while (t->idx[h] >= 0 && strcmp(t->rows[t->idx[h]].id, id) != 0)
		h = (h + 1) & (t->idx_cap - 1);
	*slot = h;
	return t->idx[h];
}

static void row_done(struct row *r, size_t n_key)
{
	free(r->id);
	for (size_t k = 0; r->key && k < n_key; k++)
		free(r->key[k]);
	free(r->key);
	free(r->name);
	free(r->m);
}

/* The row for id (a new one keyed by gr's key); its index or -ENOMEM. */
static long row_get(struct ctp_trend *t, const char *id,
		    const struct ctp_group *gr)
{
	if ((t->n_rows + 1) * 2 > t->idx_cap && index_grow(t) < 0)
		return -ENOMEM;
	size_t slot;
	long i = row_find(t, id, &slot);
	if (i >= 0)
		return i;
	if (CTP_GROW(t->rows, t->cap_rows, t->n_rows + 1, 64) < 0)
		return -ENOMEM;
	struct row *r = &t->rows[t->n_rows];
	memset(r, 0, sizeof(*r));
	r->id = strdup(id);
	r->key = calloc(t->n_key + 1, sizeof(*r->key));
	r->m = calloc(t->n_ms + 1, sizeof(*r->m));
	bool ok = r->id && r->key && r->m;
	for (size_t k = 0; ok && k < t->n_key; k++)
		if (gr->key[k] && !(r->key[k] = strdup(gr->key[k])))
			ok = false;
	if (!ok) {
		row_done(r, t->n_key);
		return -ENOMEM;
	}
	t->idx[slot] = (long)t->n_rows;
	return (long)t->n_rows++;
}

/* ---- The model ------------------------------------------------------------*/

int ctp_trend_new(const struct ctp_trend_opts *o, struct ctp_trend **ret)
{
	struct ctp_trend *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->spec = *o->spec;
	t->v = o->view;
	t->ms = calloc(t->v->n_cols + 1, sizeof(*t->ms));
	if (!t->ms) {
		free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->v->n_cols; i++) {
		const struct ctp_view_col *c = &t->v->cols[i];
		if (c->in_mask && !(c->in_mask & (1u << o->section)))
			continue; /* another section's */
		if (c->src != CTP_VSRC_IDENT)
			t->ms[t->n_ms++].c = c;
		else if (!t->name_col && (c->ident == CTP_VIDENT_PCOMM ||
					  c->ident == CTP_VIDENT_COMM))
			t->name_col = c;
	}
	/* Groups of one task carry its start: a reused id is another. */
	for (size_t k = 0; k < t->spec.n_axes; k++) {
		uint8_t a = t->spec.axes[k];
		if (a == CTP_AXIS_TID || a == CTP_AXIS_NONE)
			t->ident_scope = CTP_SCOPE_THREAD;
		else if (a == CTP_AXIS_PID && !t->ident_scope)
			t->ident_scope = CTP_SCOPE_PROCESS;
	}
	*ret = t;
	return 0;
}

void ctp_trend_free(struct ctp_trend *t)
{
	if (!t)
		return;
	for (size_t r = 0; r < t->n_rows; r++)
		row_done(&t->rows[r], t->n_key);
	free(t->rows);
	free(t->idx);
	for (size_t k = 0; t->titles && k < t->n_key; k++)
		free(t->titles[k]);
	free(t->titles);
	free(t->ms);
	ctp_snap_free(t->prev);
	free(t);
}

size_t ctp_trend_fed(const struct ctp_trend *t, int64_t *first, int64_t *last)
{
	*first = t->t0;
	*last = t->t1;
	return t->fed;
}

size_t ctp_trend_rows(const struct ctp_trend *t)
{
	return t->n_rows;
}

/* A field whose change means something: an amount, not a label (a state
 * letter, a CPU number, a nice value). */
static bool amount(const struct ctp_snap_field *f)
{
	return (f->kind == CTP_KIND_COUNTER || f->kind == CTP_KIND_GAUGE ||
		f->kind == CTP_KIND_PEAK) &&
	       (f->type == CTP_TYPE_U64 || f->type == CTP_TYPE_I64);
}

/* The fields measure m reads in snap, as a view's column does
 * (viewshow.c): the first with values, or the sum of those of one unit. */
static void resolve(struct measure *m, const struct ctp_snap *snap)
{
	const struct ctp_view_col *c = m->c;
	m->nf = 0;
	for (size_t i = 0; i < c->n_fields; i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(snap, c->fields[i]);
		if (!f || f->scope == CTP_SCOPE_HOST || !amount(f) ||
		    !ctp_snap_has_values(snap, f))
			continue;
		if (m->resolved && (f->unit != m->unit ||
				    ctp_interval_counter(f) != m->counter))
			continue; /* a measure keeps its unit and kind */
		if (m->nf && f->unit != m->f[0]->unit)
			continue;
		m->f[m->nf++] = f;
		if (c->src == CTP_VSRC_FIELD)
			break;
	}
	if (m->nf && !m->resolved) {
		m->resolved = true;
		m->unit = m->f[0]->unit;
		m->counter = ctp_interval_counter(m->f[0]);
		m->pct = m->counter && c->show == CTP_VSHOW_PCT_CPU &&
			 ctp_unit_seconds(m->unit) > 0;
	}
}

/* The id of group gr: its key parts, and the start of its task when the
 * grouping is by task. False when out of room. */
static bool group_id(const struct ctp_trend *t, const struct ctp_snap *snap,
		     const struct ctp_group *gr, char *buf, size_t n)
{
	size_t len = 0;
	for (size_t k = 0; k < t->n_key; k++) {
		const char *p = gr->key[k] ? gr->key[k] : "\x1e";
		int w = snprintf(buf + len, n - len, "%s\x1f", p);
		if (w < 0 || (size_t)w >= n - len)
			return false;
		len += (size_t)w;
	}
	uint64_t start = CTP_IDENT_UNKNOWN;
	if (t->ident_scope == CTP_SCOPE_THREAD && gr->n_threads)
		start = ctp_ident_task_start(snap, CTP_SCOPE_THREAD,
					     gr->threads[0]);
	else if (t->ident_scope == CTP_SCOPE_PROCESS && gr->n_processes)
		start = ctp_ident_task_start(snap, CTP_SCOPE_PROCESS,
					     gr->processes[0]);
	if (start != CTP_IDENT_UNKNOWN) {
		int w = snprintf(buf + len, n - len, "%" PRIu64, start);
		if (w < 0 || (size_t)w >= n - len)
			return false;
	}
	return true;
}

/* The name a row shows: its name column's bytes in its last capture (a
 * process that exec'd is shown as what it became). */
static int row_name(const struct ctp_trend *t, const struct ctp_snap *snap,
		    const struct ctp_group *gr, struct row *r)
{
	if (!t->name_col)
		return 0;
	bool pc = t->name_col->ident == CTP_VIDENT_PCOMM;
	const struct ctp_snap_table *tb =
		ctp_snap_table(snap, pc ? CTP_SCOPE_PROCESS : CTP_SCOPE_THREAD);
	const struct ctp_bytes *b = NULL;
	if (pc && gr->n_processes)
		b = &tb->comm[gr->processes[0]];
	else if (!pc && gr->n_threads)
		b = &tb->comm[gr->threads[0]];
	if (!b || !b->ptr ||
	    (r->name && r->name_len == b->len &&
	     memcmp(r->name, b->ptr, b->len) == 0))
		return 0;
	char *name = malloc(b->len + 1);
	if (!name)
		return -ENOMEM;
	memcpy(name, b->ptr, b->len);
	name[b->len] = '\0';
	free(r->name);
	r->name = name;
	r->name_len = b->len;
	return 0;
}

/* The group's level of measure m (its aggregates added), or NAN. */
static long double level(const struct measure *m, size_t gi)
{
	long double sum = 0;
	if (!m->nf)
		return NAN;
	for (size_t k = 0; k < m->nf; k++) {
		long double x;
		if (!ctp_agg_number(&m->agg[k][gi], &x))
			return NAN;
		sum += x;
	}
	return sum;
}

static void take_level(struct stat1 *s, long double x, int64_t t_ns)
{
	if (isnan(x))
		return;
	if (!s->any) {
		s->any = true;
		s->first = s->min = s->max = x;
		s->t_first = s->t_min = s->t_max = t_ns;
	}
	if (x < s->min)
		s->min = x, s->t_min = t_ns;
	if (x > s->max)
		s->max = x, s->t_max = t_ns;
	s->last = x;
	s->t_last = t_ns;
}

/*
 * A counter's change for CAND's group gr since the capture before (iv):
 * per task by identity (a task new in it counts from zero, a reset its
 * new value), and the rate of it. Without identity (older snapshots), the
 * group's level less its level at the capture before, when it was there
 * and did not go back. False when there is none.
 */
static bool counter_change(struct ctp_interval *iv, const struct measure *m,
			   const struct ctp_group *gr, const struct stat1 *s,
			   int64_t t_prev, long double now, long double *d,
			   long double *rate)
{
	if (!ctp_interval_ident(iv)->ok) {
		double secs = ctp_interval_seconds(iv);
		if (!s->any || s->t_last != t_prev || isnan(now) ||
		    now < s->last)
			return false;
		*d = now - s->last;
		*rate = secs > 0 ? *d / secs : NAN;
		return true;
	}
	struct ctp_interval_sum sum = {.per_s_ok = true}, f;
	for (size_t k = 0; k < m->nf; k++) {
		ctp_interval_group(iv, m->f[k], gr, &f);
		ctp_interval_sum_add(&sum, &f);
	}
	if (!sum.n)
		return false;
	*d = sum.delta;
	*rate = ctp_interval_rate(iv, &sum);
	return true;
}

static void take_change(struct stat1 *s, long double d, long double rate,
			int64_t t_ns)
{
	s->inc += d;
	s->inc_any = true;
	if (!isnan(rate) && (!s->peak_any || rate > s->peak)) {
		s->peak_any = true;
		s->peak = rate;
		s->t_peak = t_ns;
	}
}

static int titles(struct ctp_trend *t, const struct ctp_groups *g)
{
	t->n_key = ctp_groups_n_key(g);
	if (!(t->titles = calloc(t->n_key + 1, sizeof(*t->titles))))
		return -ENOMEM;
	for (size_t k = 0; k < t->n_key; k++)
		if (!(t->titles[k] = strdup(ctp_groups_key_title(g, k))))
			return -ENOMEM;
	return 0;
}

/* Every group of snap into its row. */
static int feed_groups(struct ctp_trend *t, const struct ctp_snap *snap,
		       struct ctp_groups *g, struct ctp_interval *iv,
		       int64_t t_ns)
{
	for (size_t mi = 0; mi < t->n_ms; mi++) {
		struct measure *m = &t->ms[mi];
		resolve(m, snap);
		for (size_t k = 0; k < m->nf; k++) {
			int r = ctp_groups_aggregate(g, m->f[k], &m->agg[k]);
			if (r < 0)
				return r;
		}
	}
	char id[4096];
	for (size_t gi = 0; gi < ctp_groups_count(g); gi++) {
		const struct ctp_group *gr = ctp_groups_at(g, gi);
		if (!group_id(t, snap, gr, id, sizeof(id)))
			continue; /* keys are names: this does not happen */
		long ri = row_get(t, id, gr);
		if (ri < 0)
			return (int)ri;
		struct row *r = &t->rows[ri];
		if (row_name(t, snap, gr, r) < 0)
			return -ENOMEM;
		if (!r->seen_first)
			r->seen_first = t_ns;
		r->seen_last = t_ns;
		for (size_t mi = 0; mi < t->n_ms; mi++) {
			const struct measure *m = &t->ms[mi];
			struct stat1 *s = &r->m[mi];
			long double now = level(m, gi), d, rate;
			if (m->counter && iv &&
			    counter_change(iv, m, gr, s, t->t1, now, &d, &rate))
				take_change(s, d, rate, t_ns);
			take_level(s, now, t_ns);
		}
	}
	return 0;
}

int ctp_trend_feed(struct ctp_trend *t, struct ctp_snap *snap, int64_t t_ns,
		   char *err, size_t errlen)
{
	struct ctp_groups *g = NULL;
	struct ctp_interval *iv = NULL;
	int r = ctp_groups_new(snap, &t->spec, &g, err, errlen);
	if (r == 0 && !t->titles)
		r = titles(t, g);
	if (r == 0 && !t->idx)
		r = index_grow(t);
	if (r == 0 && t->prev)
		r = ctp_interval_new(t->prev, snap, NULL, &iv);
	if (r == 0)
		r = feed_groups(t, snap, g, iv, t_ns);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	ctp_interval_free(iv);
	ctp_groups_free(g);
	if (r < 0) {
		ctp_snap_free(snap);
		return r;
	}
	ctp_snap_free(t->prev);
	t->prev = snap;
	if (!t->fed++)
		t->t0 = t_ns;
	t->t1 = t_ns;
	return 0;
}

/* ---- The table ------------------------------------------------------------*/

static const char *const stat_names[] = {"change", "first", "last",
					 "min",	   "max",   "peak"};

/* --sort "COL[:STAT]" into the measure and statistic. */
static int sort_of(const struct ctp_trend *t, const char *sort, size_t *mi,
		   int *stat, char *err, size_t errlen)
{
	char col[128];
	const char *colon = sort ? strchr(sort, ':') : NULL;
	*stat = CTP_TREND_CHANGE;
	if (!sort) {
		/* The view's, or the section's column of its label (io's DISK
		 * of processes), else the first. */
		const struct ctp_view_col *c = &t->v->cols[t->v->sort];
		*mi = 0;
		for (size_t i = t->n_ms; i-- > 0;)
			if (t->ms[i].c == c ||
			    strcmp(t->ms[i].c->label, c->label) == 0)
				*mi = i;
		return 0;
	} else {
		size_t n = colon ? (size_t)(colon - sort) : strlen(sort);
		snprintf(col, sizeof(col), "%.*s", (int)n, sort);
	}
	if (colon) {
		*stat = -1;
		for (size_t k = 0; k < 6; k++)
			if (strcasecmp(colon + 1, stat_names[k]) == 0)
				*stat = (int)k;
		if (*stat < 0) {
			snprintf(err, errlen,
				 "--sort %s: expected COLUMN[:STAT], STAT one "
				 "of change, first, last, min, max, peak",
				 sort);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < t->n_ms; i++)
		if (strcasecmp(t->ms[i].c->id, col) == 0 ||
		    strcasecmp(t->ms[i].c->label, col) == 0) {
			*mi = i;
			return 0;
		}
	snprintf(err, errlen, "--sort %s: no number column '%s' in view %s",
		 sort ? sort : col, col, t->v->name);
	return -EINVAL;
}

/* The number a row is ranked by, or NAN. */
static long double rank_of(const struct stat1 *s, bool counter, int stat)
{
	if (counter && (stat == CTP_TREND_CHANGE || stat == CTP_TREND_PEAK))
		return stat == CTP_TREND_PEAK ? (s->peak_any ? s->peak : NAN)
		       : s->inc_any	      ? s->inc
					      : (s->any ? 0 : NAN);
	if (!s->any)
		return NAN;
	switch (stat) {
	case CTP_TREND_FIRST:
		return s->first;
	case CTP_TREND_LAST:
		return s->last;
	case CTP_TREND_MIN:
		return s->min;
	case CTP_TREND_MAX:
	case CTP_TREND_PEAK:
		return s->max;
	}
	return s->last - s->first;
}

struct ranked {
	size_t row;
	long double x;
};

static const struct ctp_trend *sort_t;
static bool sort_asc;

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;
	if (a->x != b->x)
		return (a->x < b->x) == sort_asc ? -1 : 1;
	return strcmp(sort_t->rows[a->row].id, sort_t->rows[b->row].id);
}

/* A capture time: local HH:MM:SS on a terminal, RFC 3339 in a file. */
void ctp_trend_time(int64_t ns, bool machine, char *buf, size_t n)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	if (!localtime_r(&s, &tm)) {
		snprintf(buf, n, "%" PRId64, ns);
		return;
	}
	if (!machine) {
		strftime(buf, n, "%H:%M:%S", &tm);
		return;
	}
	char d[32], z[8];
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm); /* +hhmm */
	snprintf(buf, n, "%s.%03d%.3s:%s", d, (int)(ns % 1000000000 / 1000000),
		 z, z + 3);
}

/* A number of measure m: compact with its unit on a terminal, else as it
 * is in the field's unit (a rate per second, a percent of one CPU). */
static void number(const struct measure *m, long double x, bool change,
		   bool rate, const struct ctp_trend_print *p, char *buf)
{
	if (isnan(x)) {
		snprintf(buf, CELL, p->machine ? "" : "-");
		return;
	}
	if (rate && m->pct)
		x = ctp_interval_cpu_pct(x, m->unit);
	if (p->machine) { /* a literal, no unit; at most 3 decimals */
		snprintf(buf, CELL, "%.3Lf", x);
		char *e = buf + strlen(buf);
		while (e[-1] == '0')
			*--e = '\0';
		if (e[-1] == '.')
			e[-1] = '\0';
		if (strcmp(buf, "-0") == 0)
			strcpy(buf, "0");
		return;
	}
	if (rate && m->pct) {
		snprintf(buf, CELL, "%.1Lf%%", x);
		return;
	}
	ctp_render_compact(buf + (change && x > 0), CELL - 4, x, m->unit);
	if (change && x > 0)
		buf[0] = '+';
	if (rate)
		strcat(buf, "/s");
}

static int cell(struct ctp_table *tab, const char *s)
{
	return *s ? ctp_table_text(tab, s) : ctp_table_absent(tab);
}

/* A number cell: a literal in CSV and JSON, text on a terminal. */
static int num_cell(struct ctp_table *tab, const char *s, bool machine)
{
	return *s && machine ? ctp_table_numf(tab, "%s", s) : cell(tab, s);
}

/* The titles of measure m's statistics. */
/* The title of the sort statistic's column: it is marked sorted (bold
 * with colour). */
static bool sorts(const char *title, bool counter, enum ctp_trend_stat stat)
{
	static const char *const gauge[] = {
		[CTP_TREND_CHANGE] = "CHANGE", [CTP_TREND_FIRST] = "FIRST",
		[CTP_TREND_LAST] = "LAST",     [CTP_TREND_MIN] = "MIN",
		[CTP_TREND_MAX] = "MAX",       [CTP_TREND_PEAK] = "MAX"};
	if (counter)
		return strcmp(title, stat == CTP_TREND_PEAK ? "PEAK"
							    : "INCREASE") == 0;
	return (size_t)stat < sizeof(gauge) / sizeof(gauge[0]) &&
	       strcmp(title, gauge[stat]) == 0;
}

static int stat_cols(struct ctp_table *tab, const struct measure *m,
		     enum ctp_trend_stat stat)
{
	static const char *const gauge[] = {
		"CHANGE", "FIRST", "@FIRST", "LAST", "@LAST",
		"STATUS", "MAX",   "@MAX",   "MIN",  "@MIN"};
	static const char *const counter[] = {"INCREASE", "PEAK",  "@PEAK",
					      "@FIRST",	  "@LAST", "STATUS"};
	const char *const *c = m->counter ? counter : gauge;
	size_t n = m->counter ? 6 : 10;
	for (size_t i = 0; i < n; i++) {
		const char *title = c[i];
		unsigned fl =
			strcmp(title, "STATUS") == 0 ? 0 : CTP_TABLE_RIGHT;
		if (sorts(title, m->counter, stat))
			fl |= CTP_TABLE_SORTED;
		if (m->pct && strcmp(title, "PEAK") == 0)
			title = "PEAK%"; /* of one CPU */
		if (ctp_table_add_col(tab, title, fl) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* "new" (not in the first capture), "ended" (not in the last: it ended
 * after @LAST), or both. */
static const char *status(const struct ctp_trend *t, const struct row *r)
{
	bool fresh = r->seen_first > t->t0, ended = r->seen_last < t->t1;
	return fresh && ended ? "new,ended"
	       : fresh	      ? "new"
	       : ended	      ? "ended"
			      : "";
}

/* STATUS, coloured as compare's states are: ended red, new green. */
static int status_cell(struct ctp_table *tab, const struct ctp_trend *t,
		       const struct row *r)
{
	const char *st = status(t, r);
	if (*st)
		ctp_table_cell_class(tab, strstr(st, "ended") ? CTP_TABLE_GONE
							      : CTP_TABLE_NEW);
	return cell(tab, st);
}

static int stat_cells(struct ctp_table *tab, const struct ctp_trend *t,
		      const struct measure *m, const struct row *r,
		      const struct ctp_trend_print *p)
{
	const struct stat1 *s = &r->m[m - t->ms];
	char b[CELL];
	int rc = 0;
#define NUM(x, ch, rt)                                                         \
	(number(m, (x), (ch), (rt), p, b), rc |= num_cell(tab, b, p->machine))
#define WHEN(ok, ns)                                                           \
	((ok) ? ctp_trend_time((ns), p->machine, b, sizeof(b))                 \
	      : (void)(b[0] = 0),                                              \
	 rc |= cell(tab, b))
	if (m->counter) {
		NUM(s->inc_any ? s->inc : s->any ? 0 : NAN, true, false);
		NUM(s->peak_any ? s->peak : NAN, false, true);
		WHEN(s->peak_any, s->t_peak);
		WHEN(true, r->seen_first);
		WHEN(true, r->seen_last);
		rc |= status_cell(tab, t, r);
	} else {
		NUM(s->any ? s->last - s->first : NAN, true, false);
		NUM(s->any ? s->first : NAN, false, false);
		WHEN(s->any, s->t_first);
		NUM(s->any ? s->last : NAN, false, false);
		WHEN(s->any, s->t_last);
		rc |= status_cell(tab, t, r);
		NUM(s->any ? s->max : NAN, false, false);
		WHEN(s->any, s->t_max);
		NUM(s->any ? s->min : NAN, false, false);
		WHEN(s->any, s->t_min);
	}
#undef NUM
#undef WHEN
	return rc ? -ENOMEM : 0;
}

static int name_cell(struct ctp_table *tab, const char *s, size_t n,
		     bool machine)
{
	char esc[1024];
	if (!s)
		return machine ? ctp_table_absent(tab)
			       : ctp_table_text(tab, "?");
	return ctp_table_text(
		tab,
		machine ? s : ctp_render_escape(s, n, 256, esc, sizeof(esc)));
}

/* A key part of ids (decimal pids, tids): a number. */
static bool id_title(const char *title)
{
	return strcmp(title, "PID") == 0 || strcmp(title, "TID") == 0;
}

/* Another measure's column: its change, titled by its label; a counter
 * shown as percent of a CPU in the view is its increase here, a time
 * ("CPU%" titled "CPU"). */
static int other_col(struct ctp_table *tab, const struct measure *m)
{
	char title[64];
	size_t n = strlen(m->c->label);
	if (m->pct && n > 1 && m->c->label[n - 1] == '%')
		n--;
	snprintf(title, sizeof(title), "%.*s", (int)n, m->c->label);
	return ctp_table_add_col(tab, title,
				 CTP_TABLE_RIGHT | CTP_TABLE_HIDE_EMPTY);
}

/* The columns: key parts, the name, the sort measure's statistics, the
 * other measures' changes. *name_shown: the name column is there. */
static int columns(struct ctp_table *tab, const struct ctp_trend *t, size_t sm,
		   enum ctp_trend_stat stat, bool *name_shown)
{
	int rc = 0;
	*name_shown = t->name_col != NULL;
	for (size_t k = 0; k < t->n_key && rc >= 0; k++) {
		const char *title = t->titles[k];
		bool id = id_title(title);
		if ((strcmp(title, "PCOMM") == 0 && t->name_col &&
		     t->name_col->ident == CTP_VIDENT_PCOMM) ||
		    (strcmp(title, "COMM") == 0 && t->name_col &&
		     t->name_col->ident == CTP_VIDENT_COMM))
			*name_shown = false; /* the key says it */
		rc = ctp_table_add_col(tab, title,
				       CTP_TABLE_KEEP |
					       (id ? CTP_TABLE_RIGHT : 0));
		if (rc >= 0 && !id)
			ctp_table_elide(tab, (size_t)rc, NAME_W);
	}
	if (rc >= 0 && *name_shown)
		rc = ctp_table_add_col(tab, t->name_col->label, CTP_TABLE_KEEP);
	if (rc >= 0 && *name_shown)
		ctp_table_elide(tab, (size_t)rc, NAME_W);
	if (rc >= 0)
		rc = stat_cols(tab, &t->ms[sm], stat);
	for (size_t i = 0; i < t->n_ms && rc >= 0; i++)
		if (i != sm && t->ms[i].resolved)
			rc = other_col(tab, &t->ms[i]);
	return rc < 0 ? -ENOMEM : 0;
}

static int row_cells(struct ctp_table *tab, const struct ctp_trend *t,
		     size_t sm, bool name_shown, const struct row *r,
		     const struct ctp_trend_print *p)
{
	char b[CELL];
	int rc = 0;
	for (size_t k = 0; k < t->n_key; k++)
		rc |= p->machine && r->key[k] && id_title(t->titles[k])
			      ? ctp_table_numf(tab, "%s", r->key[k])
			      : name_cell(tab, r->key[k],
					  r->key[k] ? strlen(r->key[k]) : 0,
					  p->machine);
	if (name_shown)
		rc |= name_cell(tab, r->name, r->name_len, p->machine);
	rc |= stat_cells(tab, t, &t->ms[sm], r, p);
	for (size_t i = 0; i < t->n_ms; i++) {
		const struct measure *m = &t->ms[i];
		const struct stat1 *s = &r->m[i];
		if (i == sm || !m->resolved)
			continue;
		number(m,
		       m->counter ? (s->inc_any ? s->inc
				     : s->any	? 0
						: NAN)
		       : s->any	  ? s->last - s->first
				  : NAN,
		       true, false, p, b);
		rc |= num_cell(tab, b, p->machine);
	}
	return rc ? -ENOMEM : 0;
}

int ctp_trend_table(const struct ctp_trend *t, const struct ctp_trend_print *p,
		    struct ctp_table **ret, char *err, size_t errlen)
{
	size_t sm = 0;
	int stat;
	if (!t->n_ms) {
		snprintf(err, errlen, "view %s has no number column",
			 t->v->name);
		return -EINVAL;
	}
	int rc = sort_of(t, p->sort, &sm, &stat, err, errlen);
	if (rc < 0)
		return rc;
	const struct measure *m = &t->ms[sm];
	if (t->fed && !m->resolved) {
		snprintf(err, errlen,
			 "column %s of view %s has no value in these files",
			 m->c->id, t->v->name);
		return -EINVAL;
	}
	if (m->counter && stat != CTP_TREND_CHANGE && stat != CTP_TREND_PEAK) {
		snprintf(err, errlen,
			 "--sort %s: %s is a counter: its change (the "
			 "increase) or peak (the highest rate)",
			 p->sort, m->c->id);
		return -EINVAL;
	}
	struct ranked *rk = calloc(t->n_rows + 1, sizeof(*rk));
	struct ctp_table *tab = ctp_table_new(CTP_TABLE_VIEW);
	bool name_shown;
	size_t n = 0;
	rc = rk && tab ? columns(tab, t, sm, stat, &name_shown) : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < t->n_rows; i++) {
		long double x = rank_of(&t->rows[i].m[sm], m->counter, stat);
		if (!isnan(x)) /* a row without the measure is none of its */
			rk[n++] = (struct ranked){.row = i, .x = x};
	}
	if (rc == 0) {
		sort_t = t;
		sort_asc = p->asc;
		qsort(rk, n, sizeof(*rk), cmp_ranked);
	}
	for (size_t i = 0; rc == 0 && i < n && (!p->top || i < p->top); i++)
		rc = row_cells(tab, t, sm, name_shown, &t->rows[rk[i].row], p);
	free(rk);
	if (rc < 0) {
		ctp_table_free(tab);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	*ret = tab;
	return 0;
}
