/* SPDX-License-Identifier: MIT */
/* Interval against interval: compare --vs (see vs.h, docs/COMPARE.md). */
#include "vs.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "render.h"
#include "stats.h"
#include "viewshow.h"

#define CELL 64

/* A side's runs and each one's sections as numbers. */
struct side {
	const struct ctp_vs_run *run;
	size_t n;
	struct ctp_view_nums **nums; /* per run, v->n_secs sections */
};

/* A number column of the union of the runs' (a run lacks a column whose
 * fields its snapshots lack). */
struct ucol {
	struct ctp_view_num_col c;
	long *at[2]; /* per side and run: the run's column, or -1 */
	bool per_s;  /* the view shows the change: divide by the interval */
};

/* A group of any run of a section: its key, and where each run has it. */
struct entry {
	char *const *key;
	int side;
	size_t run, g;
};

/* One group and column over both sides. */
struct cell {
	double med[2], spread[2];
	size_t n[2];
	double ratio, delta_pct, u, p; /* NAN: none */
};

struct grow {
	char *const *key;
	struct cell *cell; /* per union column */
	double rank;
};

struct vsect {
	size_t nk;
	struct ucol *uc;
	size_t nuc, sort; /* sort: into uc, SIZE_MAX none */
	struct grow *g;
	size_t ng, shown, hidden;
	struct cell *cells;
};

static size_t sort_nk;

static int key_cmp(char *const *a, char *const *b, size_t nk)
{
	for (size_t k = 0; k < nk; k++) {
		if (!a[k] != !b[k])
			return a[k] ? 1 : -1;
		int c = a[k] ? strcmp(a[k], b[k]) : 0;
		if (c)
			return c;
	}
	return 0;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = key_cmp(a->key, b->key, sort_nk);
	if (c)
		return c;
	return a->side != b->side ? a->side - b->side
				  : (a->run > b->run) - (a->run < b->run);
}

/* Largest rank first (the change of the sort column), ties by key. */
static int cmp_grow(const void *pa, const void *pb)
{
	const struct grow *a = pa, *b = pb;
	if (a->rank != b->rank)
		return a->rank < b->rank ? 1 : -1;
	return key_cmp(a->key, b->key, sort_nk);
}

static void vsect_free(struct vsect *s)
{
	for (size_t u = 0; u < s->nuc; u++)
		for (int k = 0; k < 2; k++)
			free(s->uc[u].at[k]);
	free(s->uc);
	free(s->g);
	free(s->cells);
}

/* The union of the runs' number columns of section si, in the view's
 * order, and where each run has each. */
static int union_cols(const struct side sd[2], size_t si, size_t n_view_cols,
		      struct vsect *s)
{
	s->uc = calloc(n_view_cols + 1, sizeof(*s->uc));
	if (!s->uc)
		return -ENOMEM;
	s->sort = SIZE_MAX;
	for (size_t vc = 0; vc < n_view_cols; vc++) {
		struct ucol *u = &s->uc[s->nuc];
		bool any = false;
		for (int k = 0; k < 2; k++) {
			if (!(u->at[k] = malloc(sd[k].n * sizeof(long))))
				return -ENOMEM;
			for (size_t r = 0; r < sd[k].n; r++) {
				const struct ctp_view_nums *n =
					&sd[k].nums[r][si];
				u->at[k][r] = -1;
				for (size_t c = 0; c < n->nc; c++)
					if (n->col[c].col == vc) {
						u->at[k][r] = (long)c;
						if (!any)
							u->c = n->col[c];
						any = true;
						if (n->sort == c)
							s->sort = s->nuc;
					}
			}
		}
		/* A change shown as an amount is per second of each run's
		 * interval: runs of different lengths compare. */
		if (any && u->c.change && u->c.show <= CTP_VSHOW_DELTA)
			u->c.show = CTP_VSHOW_RATE, u->per_s = true;
		if (any)
			s->nuc++;
		else
			for (int k = 0; k < 2; k++)
				free(u->at[k]), u->at[k] = NULL;
	}
	return 0;
}

/* The statistics of one group and column from its values per side. */
static int cell_stats(double *x[2], struct cell *c)
{
	for (int k = 0; k < 2; k++) {
		c->med[k] = ctp_stats_median(x[k], c->n[k]);
		c->spread[k] = c->n[k] < 2 ? NAN
					   : ctp_stats_spread(x[k], c->n[k],
							      c->med[k]);
	}
	c->ratio = c->delta_pct = c->u = c->p = NAN;
	if (c->n[0] && c->n[1] && c->med[0] != 0) {
		c->ratio = c->med[1] / c->med[0];
		c->delta_pct = (c->ratio - 1) * 100;
	}
	if (c->n[0] >= 2 && c->n[1] >= 2)
		return ctp_stats_utest(x[0], c->n[0], x[1], c->n[1], &c->u,
				       &c->p);
	return 0;
}

/* Group gi's values of union column u per side (ent: its entries, one
 * per run that has the group): a run without the group adds 0 to a
 * change (the group did nothing in its interval), nothing to a level. */
static void values(const struct side sd[2], size_t si, const struct ucol *u,
		   const struct entry *ent, size_t n_ent, double *x[2],
		   size_t nx[2])
{
	for (int k = 0; k < 2; k++) {
		nx[k] = 0;
		for (size_t r = 0; r < sd[k].n; r++) {
			long c = u->at[k][r];
			const struct ctp_view_nums *n = &sd[k].nums[r][si];
			const struct entry *e = NULL;
			for (size_t i = 0; i < n_ent && !e; i++)
				if (ent[i].side == k && ent[i].run == r)
					e = &ent[i];
			if (c < 0)
				continue;
			if (!e) {
				if (u->c.change)
					x[k][nx[k]++] = 0;
				continue;
			}
			long double v = n->num[e->g * n->nc + (size_t)c];
			if (u->per_s)
				v /= ctp_interval_seconds(sd[k].run[r].iv);
			if (!isnan(v))
				x[k][nx[k]++] = (double)v;
		}
	}
}

static bool zero(double m)
{
	return isnan(m) || m == 0;
}

/* Is group row hidden: every hide_zero column (every column when the
 * view marks none) 0 or absent on both sides? */
static bool hidden_group(const struct ctp_view *v, const struct vsect *s,
			 const struct cell *cell)
{
	for (size_t u = 0; u < s->nuc; u++)
		if ((!v->any_hide || v->hide_zero[s->uc[u].c.col]) &&
		    (!zero(cell[u].med[0]) || !zero(cell[u].med[1])))
			return false;
	return true;
}

/* Section si over both sides: groups joined by key, their statistics,
 * sorted by the sort column's change from A to B, largest first. */
static int build_section(const struct side sd[2], size_t si,
			 const struct ctp_view *v, struct vsect *s)
{
	size_t total = 0, maxr = sd[0].n > sd[1].n ? sd[0].n : sd[1].n;
	int r = union_cols(sd, si, v->n_cols, s);
	if (r < 0)
		return r;
	s->nk = sd[0].nums[0][si].nk;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < sd[k].n; i++)
			total += sd[k].nums[i][si].ng;
	struct entry *e = malloc((total + 1) * sizeof(*e));
	double *x[2] = {malloc((maxr + 1) * sizeof(double)),
			malloc((maxr + 1) * sizeof(double))};
	s->g = malloc((total + 1) * sizeof(*s->g));
	s->cells = malloc((total * s->nuc + 1) * sizeof(*s->cells));
	r = e && x[0] && x[1] && s->g && s->cells ? 0 : -ENOMEM;
	size_t ne = 0;
	for (int k = 0; r == 0 && k < 2; k++)
		for (size_t i = 0; i < sd[k].n; i++) {
			const struct ctp_view_nums *n = &sd[k].nums[i][si];
			if (n->nk != s->nk)
				continue; /* another shape of key */
			for (size_t g = 0; g < n->ng; g++)
				e[ne++] = (struct entry){&n->key[g * n->nk], k,
							 i, g};
		}
	sort_nk = s->nk;
	if (r == 0)
		qsort(e, ne, sizeof(*e), cmp_entry);
	for (size_t i = 0; r == 0 && i < ne;) {
		size_t j = i + 1;
		while (j < ne && !key_cmp(e[i].key, e[j].key, s->nk))
			j++;
		struct cell *cell = &s->cells[s->ng * s->nuc];
		for (size_t u = 0; r == 0 && u < s->nuc; u++) {
			values(sd, si, &s->uc[u], &e[i], j - i, x, cell[u].n);
			r = cell_stats(x, &cell[u]);
		}
		if (!hidden_group(v, s, cell)) {
			struct grow *g = &s->g[s->ng++];
			g->key = e[i].key;
			g->cell = cell;
			g->rank = 0;
			if (s->sort != SIZE_MAX) {
				const struct cell *c = &cell[s->sort];
				double a = zero(c->med[0]) ? 0 : c->med[0],
				       b = zero(c->med[1]) ? 0 : c->med[1];
				g->rank = fabs(b - a);
			}
		} else {
			s->hidden++;
		}
		i = j;
	}
	if (r == 0)
		qsort(s->g, s->ng, sizeof(*s->g), cmp_grow);
	free(e);
	free(x[0]);
	free(x[1]);
	return r;
}

/* ---- Output -------------------------------------------------------------*/

static const char *const show_names[] = {
	[CTP_VSHOW_VALUE] = "value", [CTP_VSHOW_DELTA] = "delta",
	[CTP_VSHOW_RATE] = "rate",   [CTP_VSHOW_PCT_CPU] = "pct_cpu",
	[CTP_VSHOW_SHARE] = "share",
};

/* A median as the view shows its column. */
static void num_text(const struct ctp_view_num_col *c, double x, char *buf)
{
	if (isnan(x)) {
		snprintf(buf, CELL, "-");
		return;
	}
	switch (c->show) {
	case CTP_VSHOW_PCT_CPU:
	case CTP_VSHOW_SHARE:
		snprintf(buf, CELL, "%.1f", x);
		return;
	}
	ctp_render_compact(buf, CELL - 3, x, c->unit);
	if (c->show == CTP_VSHOW_RATE)
		strcat(buf, "/s");
	else if (c->change && x > 0)
		memmove(buf + 1, buf, strlen(buf) + 1), buf[0] = '+';
}

/* B against A: "+65.4% (p=0.029 n=4+4)", "~ (p=0.343 n=3+3)", with one
 * run a side the change alone. */
/* "B vs A": the change of the medians, or "~" inside the noise. */
static void delta_text(const struct cell *c, char buf[static CELL * 2])
{
	char d[24];
	if (isnan(c->delta_pct))
		snprintf(d, sizeof(d), "%s",
			 !zero(c->med[1]) && c->n[0] ? "from 0" : "-");
	else if (fabs(c->delta_pct) < 0.05)
		snprintf(d, sizeof(d), "0%%");
	else
		snprintf(d, sizeof(d), "%+.1f%%",
			 fmin(fmax(c->delta_pct, -1e12), 1e12));
	snprintf(buf, CELL * 2, "%s",
		 isnan(c->p) || c->p < CTP_STATS_ALPHA ? d : "~");
}

/* "P": the test's p, and the runs that had the group when not all did
 * (a group missing from a run has no gauge there). */
static void p_text(const struct cell *c, const size_t *runs,
		   char buf[static CELL * 2])
{
	buf[0] = '\0';
	if (isnan(c->p))
		return;
	if (c->n[0] == runs[0] && c->n[1] == runs[1])
		snprintf(buf, CELL * 2, "%.3f", c->p);
	else
		snprintf(buf, CELL * 2, "%.3f n=%zu+%zu", c->p, c->n[0],
			 c->n[1]);
}

static void spread_text(const struct cell *c, int k, char *buf)
{
	buf[0] = '\0';
	if (c->n[k] >= 2 && !isnan(c->spread[k]))
		snprintf(buf, CELL, "\xc2\xb1%.0f%%", c->spread[k]);
}

static const char *label_of(const struct ctp_view *v, const struct ucol *u)
{
	return v->cols[u->c.col].label;
}

/* The text table of a section: per shown group, a line per column that
 * is not 0 on both sides, the key on the group's first. */
static int text_table(const struct ctp_view *v, const struct vsect *s,
		      const struct ctp_view_nums *shape, const size_t *runs,
		      const struct ctp_vs_opts *o, FILE *out)
{
	struct ctp_table *t = ctp_table_new(CTP_TABLE_VIEW);
	int r = t ? 0 : -ENOMEM;
	static const char *const title[] = {"COLUMN",	"A",   "\xc2\xb1", "B",
					    "\xc2\xb1", "B/A", "B vs A",   "P"};
	static const unsigned flag[] = {CTP_TABLE_KEEP,
					CTP_TABLE_RIGHT,
					CTP_TABLE_HIDE_EMPTY,
					CTP_TABLE_RIGHT,
					CTP_TABLE_HIDE_EMPTY,
					CTP_TABLE_RIGHT,
					CTP_TABLE_KEEP | CTP_TABLE_RIGHT,
					CTP_TABLE_HIDE_EMPTY};
	for (size_t k = 0; r >= 0 && k < s->nk; k++)
		if ((r = ctp_table_add_col(t, shape->key_title[k],
					   CTP_TABLE_KEEP)) >= 0)
			ctp_table_elide(t, (size_t)r, 24);
	for (size_t k = 0; r >= 0 && k < 8; k++)
		r = ctp_table_add_col(t, title[k], flag[k]);
	for (size_t i = 0; r >= 0 && i < s->shown; i++) {
		const struct grow *g = &s->g[i];
		bool first = true;
		for (size_t u = 0; r >= 0 && u < s->nuc; u++) {
			const struct cell *c = &g->cell[u];
			char buf[4][CELL * 2], esc[CELL * 4];
			if (zero(c->med[0]) && zero(c->med[1]))
				continue;
			for (size_t k = 0; r >= 0 && k < s->nk; k++)
				r = ctp_table_text(
					t, !first ? ""
					   : g->key[k]
						   ? ctp_render_escape(
							     g->key[k],
							     strlen(g->key[k]),
							     CELL, esc,
							     sizeof(esc))
						   : "-");
			first = false;
			const char *l = label_of(v, &s->uc[u]);
			ctp_table_text(t, ctp_render_escape(l, strlen(l), CELL,
							    esc, sizeof(esc)));
			num_text(&s->uc[u].c, c->med[0], buf[0]);
			spread_text(c, 0, buf[1]);
			num_text(&s->uc[u].c, c->med[1], buf[2]);
			spread_text(c, 1, buf[3]);
			ctp_table_texts(t,
					(const char *const[]){buf[0], buf[1],
							      buf[2], buf[3]},
					4);
			if (isnan(c->ratio))
				ctp_table_text(t, "-");
			else
				ctp_table_textf(t, "%.2f", c->ratio);
			delta_text(c, buf[0]);
			if (!isnan(c->p) && c->p < CTP_STATS_ALPHA)
				ctp_table_cell_class(t, CTP_TABLE_CHANGED);
			ctp_table_text(t, buf[0]);
			p_text(c, runs, buf[1]);
			r = ctp_table_text(t, buf[1]);
		}
	}
	static const char *const steps[] = {"<12", "\xc2\xb1", "B/A", NULL};
	if (r >= 0)
		r = ctp_table_fit(t, o->width, steps);
	if (r >= 0)
		ctp_table_print(t, out, o->color);
	ctp_table_free(t);
	return r < 0 ? r : 0;
}

/* "A  run 1  5.02 s  a0.zst -> a1.zst" per run. */
static void run_lines(FILE *out, const char *tag, const struct side *sd)
{
	for (size_t r = 0; r < sd->n; r++) {
		const struct ctp_vs_run *run = &sd->run[r];
		char when[64];
		ctp_render_time(ctp_snap_header(ctp_interval_snap(run->iv, 0))
					->start_realtime_ns,
				when, sizeof(when));
		fprintf(out, "%s run %zu  %s  %.2f s  %s -> %s\n", tag, r + 1,
			when, ctp_interval_seconds(run->iv), run->path[0],
			run->path[1]);
	}
}

static void keys_text(const struct ctp_view_nums *shape, size_t nk, char *buf,
		      size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < nk; k++) {
		int w = snprintf(buf + len, n - len, "%s%s", k ? "," : "",
				 shape->key_title[k]);
		if (w < 0 || (size_t)w >= n - len)
			return;
		len += (size_t)w;
	}
	for (char *p = buf; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
}

static int print_text(FILE *out, const struct side sd[2],
		      const struct ctp_vs_opts *o, struct vsect *secs)
{
	const struct ctp_view *v = o->v;
	run_lines(out, "A", &sd[0]);
	run_lines(out, "B", &sd[1]);
	fprintf(out,
		"View %s: counters per second of each run's interval (%% of "
		"one CPU for times), levels at its end;\nmedian of a side's "
		"runs \xc2\xb1 the farthest run from it; B/A the ratio of the "
		"medians\n",
		v->name);
	if (sd[0].n < 2 || sd[1].n < 2)
		fprintf(out,
			"n=%zu+%zu runs: no test of significance (it needs 2 "
			"runs a side or more, and 4 for p < %.2f)\n",
			sd[0].n, sd[1].n, CTP_STATS_ALPHA);
	else
		fprintf(out,
			"n=%zu+%zu runs: ~ marks a difference inside the "
			"noise (P, Mann-Whitney U test: p >= %.2f)\n",
			sd[0].n, sd[1].n, CTP_STATS_ALPHA);
	for (size_t si = 0; si < v->n_secs; si++) {
		const struct vsect *s = &secs[si];
		const struct ctp_view_nums *shape = &sd[0].nums[0][si];
		char keys[256];
		keys_text(shape, s->nk, keys, sizeof(keys));
		fprintf(out, "\n%s by %s, %zu of %zu", v->secs[si].title, keys,
			s->shown, s->ng);
		if (s->sort != SIZE_MAX)
			fprintf(out, " by the change of %s",
				label_of(v, &s->uc[s->sort]));
		if (s->hidden)
			fprintf(out, " (%zu at zero hidden)", s->hidden);
		fputc('\n', out);
		size_t runs[2] = {sd[0].n, sd[1].n};
		int r = text_table(v, s, shape, runs, o, out);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The machine table: a line per shown group and column. */
static int machine_table(const struct ctp_vs_opts *o, struct vsect *secs,
			 struct ctp_table **ret)
{
	static const char *const title[] = {"section",	    "group", "column",
					    "show",	    "unit",  "a_median",
					    "a_spread_pct", "a_n",   "b_median",
					    "b_spread_pct", "b_n",   "ratio",
					    "delta_pct",    "u",     "p",
					    "significant"};
	size_t nt = sizeof(title) / sizeof(*title);
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	int r = t ? 0 : -ENOMEM;
	for (size_t k = 0; r >= 0 && k < nt; k++)
		r = ctp_table_add_col(t, title[k], 0);
	for (size_t si = 0; r >= 0 && si < o->v->n_secs; si++) {
		const struct vsect *s = &secs[si];
		for (size_t i = 0; r >= 0 && i < s->shown; i++) {
			const struct grow *g = &s->g[i];
			char key[1024];
			size_t len = 0;
			key[0] = '\0';
			for (size_t k = 0; k < s->nk; k++) {
				int w = snprintf(key + len, sizeof(key) - len,
						 "%s%s", k ? "|" : "",
						 g->key[k] ? g->key[k] : "");
				if (w > 0 && (size_t)w < sizeof(key) - len)
					len += (size_t)w;
			}
			for (size_t u = 0; r >= 0 && u < s->nuc; u++) {
				const struct cell *c = &g->cell[u];
				const struct ctp_view_num_col *nc = &s->uc[u].c;
				if (!c->n[0] && !c->n[1])
					continue;
				ctp_table_text(t, o->v->secs[si].title);
				ctp_table_text(t, key);
				ctp_table_text(t, label_of(o->v, &s->uc[u]));
				ctp_table_text(t, show_names[nc->show]);
				ctp_table_text(t, ctp_unit_name(nc->unit));
				const double num[] = {c->med[0], c->spread[0],
						      c->med[1], c->spread[1],
						      c->ratio,	 c->delta_pct,
						      c->u,	 c->p};
				for (size_t k = 0; k < 8; k++) {
					if (isnan(num[k]))
						ctp_table_absent(t);
					else
						ctp_table_numf(t, "%.9g",
							       num[k]);
					if (k == 1 || k == 3)
						ctp_table_numf(t, "%zu",
							       c->n[k / 2]);
				}
				r = isnan(c->p) ? ctp_table_absent(t)
						: ctp_table_numf(
							  t, "%s",
							  c->p < CTP_STATS_ALPHA
								  ? "true"
								  : "false");
			}
		}
	}
	if (r < 0) {
		ctp_table_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

static void json_side(struct ctp_table_doc *d, const char *key,
		      const struct side *sd)
{
	ctp_table_doc_open(d, key, '[');
	for (size_t r = 0; r < sd->n; r++) {
		ctp_table_doc_open(d, NULL, '{');
		ctp_table_doc_text(d, "base", sd->run[r].path[0]);
		ctp_table_doc_text(d, "cand", sd->run[r].path[1]);
		ctp_table_doc_numf(d, "interval_s", "%.9g",
				   ctp_interval_seconds(sd->run[r].iv));
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
}

static int print_machine(FILE *out, const struct side sd[2],
			 const struct ctp_vs_opts *o, struct vsect *secs)
{
	struct ctp_table *t;
	int r = machine_table(o, secs, &t);
	if (r < 0)
		return r;
	if (o->fmt == CTP_TABLE_CSV) {
		r = ctp_table_write(t, out, CTP_TABLE_CSV);
	} else {
		struct ctp_table_doc d;
		ctp_table_doc_init(&d, out);
		ctp_table_doc_open(&d, NULL, '{');
		ctp_table_doc_text(&d, "view", o->v->name);
		json_side(&d, "a", &sd[0]);
		json_side(&d, "b", &sd[1]);
		ctp_table_doc_numf(&d, "alpha", "%.2f", CTP_STATS_ALPHA);
		ctp_table_doc_table(&d, "rows", t);
		ctp_table_doc_close(&d);
		fputc('\n', out);
	}
	ctp_table_free(t);
	return r;
}

/* Every run's sections as numbers. */
static int side_nums(struct side *sd, const struct ctp_vs_opts *o, char *err,
		     size_t errlen)
{
	struct ctp_view_opts vo = {
		.sort = o->sort,
		.asc = -1,
		.group_by = o->group_by,
		.no_normalize = o->no_normalize,
		.want = o->want,
		.want_arg = o->want_arg,
		.by_name = true,
	};
	if (!(sd->nums = calloc(sd->n, sizeof(*sd->nums))))
		return -ENOMEM;
	for (size_t r = 0; r < sd->n; r++) {
		vo.interval = sd->run[r].iv;
		int e = ctp_view_nums(ctp_interval_snap(sd->run[r].iv, 1), o->v,
				      &vo, &sd->nums[r], err, errlen);
		if (e < 0)
			return e;
	}
	return 0;
}

int ctp_vs_print(FILE *out, const struct ctp_vs_run *a, size_t na,
		 const struct ctp_vs_run *b, size_t nb,
		 const struct ctp_vs_opts *o, char *err, size_t errlen)
{
	struct side sd[2] = {{.run = a, .n = na}, {.run = b, .n = nb}};
	struct vsect *secs = calloc(o->v->n_secs + 1, sizeof(*secs));
	int r = secs ? 0 : -ENOMEM;
	if (!na || !nb)
		r = -EINVAL, snprintf(err, errlen, "a side has no run");
	for (int k = 0; r == 0 && k < 2; k++)
		r = side_nums(&sd[k], o, err, errlen);
	for (size_t si = 0; r == 0 && si < o->v->n_secs; si++) {
		r = build_section(sd, si, o->v, &secs[si]);
		secs[si].shown =
			o->top && secs[si].ng > o->top ? o->top : secs[si].ng;
	}
	if (r == 0)
		r = o->fmt == CTP_TABLE_TEXT ? print_text(out, sd, o, secs)
					     : print_machine(out, sd, o, secs);
	if (r == 0 && ferror(out))
		r = -EIO;
	for (size_t si = 0; secs && si < o->v->n_secs; si++)
		vsect_free(&secs[si]);
	free(secs);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; sd[k].nums && i < sd[k].n; i++)
			ctp_view_nums_free(sd[k].nums[i], o->v->n_secs);
		free(sd[k].nums);
	}
	return r;
}
