/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core compare BASE CAND`: two snapshots grouped the same way
 * (core/analysis/group.h), joined by group key, field by field
 * (docs/COMPARE.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "group.h"
#include "hostdiff.h"
#include "ident.h"
#include "interval.h"
#include "column.h"
#include "compare.h"
#include "coverage.h"
#include "exitsum.h"
#include "reader.h"
#include "render.h"
#include "rename.h"
#include "table.h"
#include "term.h"

#define PROG "ctprof-core compare"

#define S_THREADS CTP_COMPARE_THREADS
#define S_CGROUPS CTP_COMPARE_CGROUPS
#define S_HOST	  CTP_COMPARE_HOST
#define S_PSI	  CTP_COMPARE_PSI
#define S_PLUGINS CTP_COMPARE_PLUGINS

/* One field compared by name: its description on each side (NULL where the
 * snapshot lacks it). */
struct fpair {
	const char *name;
	const struct ctp_snap_field *f[2];
	const struct ctp_agg *col[2];
};

/* A joined group's status (docs/COMPARE.md "Identity"). */
enum gstatus { ST_NEW, ST_GONE, ST_CONTINUING, ST_RESTARTED, ST_RENAMED };
static const char *const gstatus_names[] = {"new", "gone", "continuing",
					    "restarted", "renamed"};

/* One joined group: index into each side's table, or -1. */
struct jrow {
	long idx[2];
	int rank; /* sorting: 0 new, 1 gone, 2 both */
	long double score;
	bool has_key; /* --sort delta:/rate:, the sort field's delta */
	long double key;
	enum gstatus status;
	/* Threads by identity (only when the snapshots have start times):
	 * CAND members that were in BASE, CAND members that were not, BASE
	 * members no longer in CAND. */
	bool has_members;
	uint32_t n_cont, n_new, n_gone;
	/* Ages of the oldest and youngest member at its snapshot's capture
	 * (CAND's; BASE's for a gone group), when start times and the
	 * boot clock were recorded. */
	bool has_age;
	uint64_t age_old, age_young;
	/* The row's cgroup key part is one of a renamed pair (either side
	 * may be missing: a group of the renamed cgroup that is new or
	 * gone), else NULL. */
	const struct ctp_rename_pair *ren;
};

struct ctx;

/* A grouped section ready to print. */
struct gsec {
	const struct ctx *x;
	const char *name;  /* "threads", "cgroups", "psi" */
	const char *title; /* "Threads", ... */
	struct ctp_groups *g[2];
	struct fpair *fp;
	size_t nfp;
	struct jrow *rows;
	size_t nrows, shown;
	struct ctp_agg *aggs; /* host fields: one "group", owned */
	long by;	      /* the sort field's index in fp, or -1 */
	long cpart;	      /* the key part renamed cgroups pair, or -1 */
};

/* What --sort orders by. */
enum sort_kind { SORT_REL, SORT_VALUE, SORT_DELTA, SORT_RATE };

struct writer;

struct ctx {
	const struct ctp_compare_opts *o;
	const struct writer *w; /* the --format's implementation */
	const char *path[2];
	struct ctp_snap *snap[2];
	FILE *out;
	bool color;
	size_t columns; /* 0: no limit */
	/* The interval (interval.h): task matching, counters' changes and
	 * rates, and the tasks that exited in it, for coverage (none
	 * without an exited table). */
	struct ctp_interval *iv;
	const struct ctp_ident *id;
	const struct ctp_exit_sum *ex;
	/* Renamed cgroups (NULL: not applied), from group tables of the
	 * cgroup grouping, kept for the paths it points to. */
	struct ctp_rename *ren;
	struct ctp_groups *ren_g[2];
	struct ctp_rename_opts ren_opts;
	/* Seconds between the captures (0: unknown, no rates) and the
	 * clock that measured it. */
	long double interval;
	const char *interval_clock;
	/* --sort resolved: the kind and the field (NULL for rel); `sort`
	 * as given or defaulted, for the header. */
	enum sort_kind sort_kind;
	const char *sort_field, *sort;
	char sort_buf[256];
	/* --format csv: the one table of every part, streamed to out. */
	struct ctp_table *csv;
	/* --format json: the one document of every part, written to out. */
	struct ctp_table_doc doc;
};

struct ctp_hostdiff;
struct gsec;
struct plugin_pair;

/*
 * The output of a comparison in one format (--format): table, JSON or CSV
 * each implement every part, and ctp_compare picks one; the printers of
 * the parts compute what to say and leave how to this.
 */
struct writer {
	bool terminal;	     /* for a person: colour and terminal width */
	bool empty_sections; /* a grouped section of no field is written */
	void (*end)(struct ctx *x); /* after the last part (NULL: nothing) */
	void (*header)(struct ctx *x, const char **const only[2],
		       const size_t nonly[2]);
	/* A grouped section; table_if_empty: even one of no field. */
	int (*gsec)(struct ctx *x, struct gsec *s, bool table_if_empty);
	int (*host)(struct ctx *x, const struct ctp_hostdiff *d);
	int (*psi_host)(struct ctx *x, struct gsec *s);
	void (*plugins_begin)(struct ctx *x, size_t n);
	void (*plugin)(struct ctx *x, const struct plugin_pair *pp, bool first);
	/* After the plugins: the read-failure hints of each side (NULL:
	 * none). */
	void (*plugins_end)(struct ctx *x, const char *const hint[2]);
	/* The renamed-cgroups section (x->ren set). */
	int (*renamed)(struct ctx *x);
};

/* ---- Small helpers ---- */

static bool selected(const struct ctp_compare_opts *o, const char *name)
{
	return ctp_readopts_selected(&o->r, name);
}

/* The section of pressure fields (whichever plugin declares it): compare
 * shows them apart, per cgroup and for the host. */
#define PSI_SECTION "psi"

static bool is_psi(const struct ctp_snap_field *f)
{
	return strcmp(f->section, PSI_SECTION) == 0;
}

/* Fields whose changes read as "a -> b" rather than a difference. */
static bool categorical(const struct ctp_snap_field *f)
{
	return f->kind == CTP_KIND_CATEGORICAL || f->type == CTP_TYPE_STRING ||
	       f->type == CTP_TYPE_CHAR || f->type == CTP_TYPE_BOOL ||
	       f->type == CTP_TYPE_CPUSET;
}

static const struct ctp_snap_field *any_f(const struct fpair *p)
{
	return p->f[0] ? p->f[0] : p->f[1];
}

/* An aggregate for humans, with " (k/n)" when partly measured. */
static void human_agg(uint8_t unit, const struct ctp_agg *a, char *buf,
		      size_t n)
{
	if (!a)
		snprintf(buf, n, "-");
	else
		ctp_render_agg_cell(unit, a, buf, n);
}

/* A signed difference for humans: "+1.50 ms", "-3", "0". */
static void human_delta(char *buf, size_t n, long double d, uint8_t unit)
{
	long double m = fabsl(d);
	char t[64];
	if (d == 0) {
		snprintf(buf, n, "0");
		return;
	}
	if (m > 1.8e19L) {
		snprintf(buf, n, "%s>huge", d < 0 ? "-" : "+");
		return;
	}
	ctp_render_mag(t, sizeof(t), (uint64_t)(m + 0.5L), unit);
	snprintf(buf, n, "%s%s", d > 0 ? "+" : d < 0 ? "-" : "", t);
}

/* An exact number for machine output: integers in full, halves (range
 * midpoints) with one decimal. */
static void exact_num(char *buf, size_t n, long double x)
{
	if (fabsl(x) < 1.9e19L && x == (long double)(__int128)x)
		snprintf(buf, n, "%.0Lf", x);
	else
		snprintf(buf, n, "%.6Lg", x);
}

/* ---- JSON and CSV text ---- */

/* An aggregate exactly, as a JSON value: null when absent. */
static void json_agg(struct ctp_table_doc *d, const char *key,
		     const struct ctp_agg *a)
{
	char lo[512], hi[512];
	if (!a || a->v.type == CTP_VALUE_ABSENT || a->unknown) {
		ctp_table_doc_null(d, key);
		return;
	}
	if (a->hi.type != CTP_VALUE_ABSENT) {
		ctp_hostdiff_render(&a->v, lo, sizeof(lo));
		ctp_hostdiff_render(&a->hi, hi, sizeof(hi));
		ctp_table_doc_open(d, key, '{');
		ctp_table_doc_numf(d, "min", "%s", lo);
		ctp_table_doc_numf(d, "max", "%s", hi);
		ctp_table_doc_close(d);
		return;
	}
	ctp_table_doc_value(d, key, &a->v);
}

/* An aggregate exactly, as CSV text: absent, or "lo..hi" ranges. */
static void csv_agg(struct ctp_table *t, const struct ctp_agg *a)
{
	char buf[512], hi[256];
	if (!a || a->v.type == CTP_VALUE_ABSENT || a->unknown) {
		ctp_table_absent(t);
		return;
	}
	ctp_hostdiff_render(&a->v, buf, sizeof(buf));
	if (a->hi.type != CTP_VALUE_ABSENT && a->mixed) {
		ctp_hostdiff_render(&a->hi, hi, sizeof(hi));
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof(buf) - l, "..%s", hi);
	}
	ctp_table_text(t, buf);
}

/* ---- One field of one joined group ---- */

static const struct ctp_group *row_group(const struct gsec *s,
					 const struct jrow *r, int k)
{
	return r->idx[k] >= 0 ? ctp_groups_at(s->g[k], (size_t)r->idx[k])
			      : NULL;
}

/* The row's key: CAND's (a renamed row's current name), else BASE's. */
static const char *const *row_key(const struct gsec *s, const struct jrow *r)
{
	return row_group(s, r, r->idx[1] >= 0 ? 1 : 0)->key;
}

/* Both sides of a renamed pair are in the row. */
static bool renamed_row(const struct jrow *r)
{
	return r->ren && r->idx[0] >= 0 && r->idx[1] >= 0;
}

struct cmp {
	const struct ctp_agg *a[2]; /* NULL: group or field missing there */
	bool num;		    /* a delta (both sides, or per member) */
	long double x[2], delta;
	bool has_pct;
	long double pct;
	bool from_zero; /* a number that appeared from zero (rel sort) */
	bool cat;	/* compared as categories */
	bool changed;	/* categorical: the rendered values differ */
	/* Counters: the delta per second of the interval and, for time
	 * units, that as percent of one CPU; a member's counter went
	 * backwards (reset), so its CAND value was counted instead. */
	bool has_rate, has_cpu, reset;
	long double rate, cpu;
	char h[2][160];
};

/* A counter's change over the interval, member by member
 * (ctp_interval_group): a CAND member that was in BASE adds its
 * difference, a new one its whole value (it started from zero); BASE
 * members that left add nothing, nor does a member whose BASE value is
 * unknown. A member whose counter went backwards was reset by the kernel:
 * it adds its CAND value and c->reset says so. False when no member
 * added a change. */
static bool member_delta(const struct gsec *s, const struct jrow *r,
			 const struct fpair *p, struct ctp_interval_sum *m)
{
	const struct ctp_group *g = row_group(s, r, 1);
	*m = (struct ctp_interval_sum){0};
	return g && p->f[1] &&
	       ctp_interval_group(s->x->iv, p->f[1], g, m) == 0 && m->n > 0;
}

/* Per-member deltas apply to counters of grouped rows when the
 * snapshots have start times (else the aggregates are subtracted). */
static bool per_member(const struct gsec *s, const struct ctp_snap_field *f)
{
	return s->x && s->x->id && s->x->id->ok && s->g[0] &&
	       f->scope != CTP_SCOPE_HOST && ctp_interval_counter(f);
}

/* Rates of a counter's change m over the interval (interval.h): per
 * member, each over its own interval, when the change was; else over the
 * captures' interval. */
static void cell_rates(const struct ctx *x, const struct ctp_snap_field *f,
		       const struct ctp_interval_sum *m, struct cmp *c)
{
	if (!c->num || !ctp_interval_counter(f) || ctp_interval_reaped(f) || !x)
		return;
	long double rate = ctp_interval_rate(x->iv, m), cpu;
	if (isnan(rate))
		return;
	c->has_rate = true;
	c->rate = rate;
	if (!isnan(cpu = ctp_interval_cpu_pct(rate, f->unit)))
		c->has_cpu = true, c->cpu = cpu;
}

static void compare_cell(const struct gsec *s, const struct jrow *r,
			 const struct fpair *p, struct cmp *c)
{
	const struct ctp_snap_field *f = any_f(p);
	memset(c, 0, sizeof(*c));
	c->cat = categorical(f);
	for (int k = 0; k < 2; k++) {
		if (r->idx[k] >= 0 && p->col[k])
			c->a[k] = &p->col[k][r->idx[k]];
		human_agg(p->f[k] ? p->f[k]->unit : f->unit, c->a[k], c->h[k],
			  sizeof(c->h[k]));
	}
	if (c->cat) {
		c->changed = strcmp(c->h[0], c->h[1]) != 0;
		return;
	}
	bool n0 = c->a[0] && ctp_agg_number(c->a[0], &c->x[0]);
	bool n1 = c->a[1] && ctp_agg_number(c->a[1], &c->x[1]);
	/* A renamed cgroup's counters started from zero: its BASE value is
	 * the old cgroup's. */
	bool ren = renamed_row(r) && ctp_interval_counter(f) &&
		   f->scope != CTP_SCOPE_HOST;
	struct ctp_interval_sum m = {0};
	if (per_member(s, f))
		c->num = member_delta(s, r, p, &m);
	else if (ren) /* from zero */
		c->num = ctp_interval_agg_change(NULL, c->a[1], &m);
	else if (n0 && n1)
		c->num = ctp_interval_agg_change(c->a[0], c->a[1], &m);
	c->delta = m.delta;
	c->reset = m.reset;
	c->from_zero = c->num && (!n0 || c->x[0] == 0 || ren);
	/* A percentage of a ratio (a unit that is itself a percentage)
	 * means nothing; from zero it is none either. */
	if (c->num && !c->from_zero && r->idx[0] >= 0 &&
	    f->unit != CTP_UNIT_CENTIPCT) {
		c->has_pct = true;
		c->pct = c->delta * 100 / fabsl(c->x[0]);
	}
	cell_rates(s ? s->x : NULL, f, &m, c);
	c->changed = c->num ? c->delta != 0 : strcmp(c->h[0], c->h[1]) != 0;
}

/* The columns of compare's CSV: every part's lines, each part filling
 * its own (docs/COMPARE.md). */
static const char *const csv_cols[] = {"section",
				       "group",
				       "status",
				       "threads_base",
				       "threads_cand",
				       "processes_base",
				       "processes_cand",
				       "field",
				       "base",
				       "cand",
				       "delta",
				       "percent",
				       "changed",
				       "rate",
				       "cpu_percent",
				       "reset",
				       "members_continuing",
				       "members_new",
				       "members_gone",
				       "uptime_oldest_s",
				       "uptime_youngest_s",
				       "kind",
				       "jaccard",
				       "shared_types"};
/* The first column of the comparison of one field, and of a line's group
 * tail (members, uptimes, then kind, jaccard, shared_types). */
#define CSV_FIELD 7
#define CSV_TAIL  16
#define CSV_NCOLS (sizeof(csv_cols) / sizeof(csv_cols[0]))

/* A number cell when `have`, else absent. */
#define CSV_NUM(t, have, ...)                                                  \
	((have) ? ctp_table_numf(t, __VA_ARGS__) : ctp_table_absent(t))

/* The comparison of one field: field, base, cand, delta, percent,
 * changed, rate, cpu_percent, reset. */
static void csv_cmp(struct ctp_table *t, const char *field, const struct cmp *c)
{
	char num[64];
	ctp_table_text(t, field);
	csv_agg(t, c->a[0]);
	csv_agg(t, c->a[1]);
	if (c->num)
		exact_num(num, sizeof(num), c->delta);
	CSV_NUM(t, c->num, "%s", num);
	CSV_NUM(t, c->has_pct, "%.4Lf", c->pct);
	ctp_table_numf(t, "%d", c->changed);
	CSV_NUM(t, c->has_rate, "%.6Lg", c->rate);
	CSV_NUM(t, c->has_cpu, "%.4Lf", c->cpu);
	ctp_table_numf(t, "%d", c->reset);
}

/* The end of a group's CSV line: its member counts and ages (s). */
static void csv_row_tail(struct ctp_table *t, const struct jrow *r)
{
	CSV_NUM(t, r->has_members, "%" PRIu32, r->n_cont);
	CSV_NUM(t, r->has_members, "%" PRIu32, r->n_new);
	CSV_NUM(t, r->has_members, "%" PRIu32, r->n_gone);
	CSV_NUM(t, r->has_age, "%.3f", (double)r->age_old / 1e9);
	CSV_NUM(t, r->has_age, "%.3f", (double)r->age_young / 1e9);
	ctp_table_skip(t, CSV_NCOLS - CSV_TAIL - 5);
}

/* A counter's rate for humans, in its unit per second: "1.20 MiB/s",
 * "973 ms/s", "3.50/s". */
static void human_rate(char *buf, size_t n, long double rate, uint8_t unit)
{
	char t[64];
	long double m = fabsl(rate);
	const char *sign = rate < 0 ? "-" : "";
	if (ctp_unit_seconds(unit) > 0) {
		/* In ns, so that ticks read as time too. */
		m = m * ctp_unit_seconds(unit) * 1e9L;
		unit = CTP_UNIT_NS;
	}
	if (m == 0)
		snprintf(buf, n, "0");
	else if (m > 1.8e19L)
		snprintf(buf, n, "%s>huge/s", sign);
	else if ((unit == CTP_UNIT_COUNT || unit == CTP_UNIT_NONE) && m < 100)
		snprintf(buf, n, "%s%.2Lf/s", sign, m);
	else if (unit == CTP_UNIT_NS && m > 0 && m < 1)
		snprintf(buf, n, "%s%.2Lf ns/s", sign, m);
	else {
		ctp_render_mag(t, sizeof(t), (uint64_t)(m + 0.5L), unit);
		snprintf(buf, n, "%s%s/s", sign, t);
	}
}

/* An age for humans, short: "45.2s", "12m05s", "3h07m", "2d04h". */
static void human_age(char *buf, size_t n, uint64_t ns)
{
	uint64_t s = ns / 1000000000u;
	if (s < 60)
		snprintf(buf, n, "%.1fs", (double)ns / 1e9);
	else if (s < 3600)
		snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m", s / 3600,
			 s % 3600 / 60);
	else
		snprintf(buf, n, "%" PRIu64 "d%02" PRIu64 "h", s / 86400,
			 s % 86400 / 3600);
}

static void human_change(const struct cmp *c, uint8_t unit, char *d, size_t dn,
			 char *pc, size_t pn)
{
	d[0] = pc[0] = '\0';
	if (c->cat) {
		/* A group on one side only has no change to tell. */
		if (c->changed && c->a[0] && c->a[1])
			snprintf(d, dn, "%s -> %s", c->h[0], c->h[1]);
		return;
	}
	if (c->num)
		human_delta(d, dn, c->delta, unit);
	else
		snprintf(d, dn, "-");
	if (c->has_pct)
		snprintf(pc, pn, "%+.1Lf%%", c->pct);
	else
		snprintf(pc, pn, "-");
}

/* ---- Building a grouped section ---- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct fpair *)a)->name,
		      ((const struct fpair *)b)->name);
}

/* Which fields a section compares: the --fields globs, then its own test. */
struct field_filter {
	unsigned scopes; /* bit per enum ctp_scope */
	int psi;	 /* -1 any; 1 only the psi section's; 0 none of them */
	bool host_psi;	 /* only the host's psi section fields */
};

static bool field_wanted(const struct ctx *x, const struct field_filter *w,
			 const struct ctp_snap_field *f)
{
	if (!selected(x->o, f->name))
		return false;
	if (w->host_psi)
		return f->scope == CTP_SCOPE_HOST && is_psi(f);
	return (w->scopes & (1u << f->scope)) &&
	       (w->psi < 0 || is_psi(f) == (w->psi == 1));
}

/* The fields w selects, paired by name over both snapshots, in s->fp
 * sorted by name. */
static int pair_fields(struct ctx *x, struct gsec *s,
		       const struct field_filter *w)
{
	size_t cap = ctp_snap_n_fields(x->snap[0]) +
		     ctp_snap_n_fields(x->snap[1]) + 1;
	s->fp = calloc(cap, sizeof(*s->fp));
	if (!s->fp)
		return -ENOMEM;
	for (int k = 0; k < 2; k++) {
		const struct ctp_snap_field *fs = ctp_snap_fields(x->snap[k]);
		for (size_t i = 0; i < ctp_snap_n_fields(x->snap[k]); i++) {
			const struct ctp_snap_field *f = &fs[i];
			if (!field_wanted(x, w, f))
				continue;
			size_t j;
			for (j = 0; j < s->nfp; j++)
				if (!strcmp(s->fp[j].name, f->name))
					break;
			if (j == s->nfp)
				s->fp[s->nfp++].name = f->name;
			s->fp[j].f[k] = f;
		}
	}
	qsort(s->fp, s->nfp, sizeof(*s->fp), cmp_names);
	return 0;
}

/* The fields of the given scopes, by name over both snapshots, that the
 * --fields globs and the section's filter select. */
static int collect_fields(struct ctx *x, struct gsec *s, unsigned scopes,
			  int psi)
{
	struct field_filter w = {.scopes = scopes, .psi = psi};
	if (pair_fields(x, s, &w) < 0)
		return -ENOMEM;
	for (size_t j = 0; j < s->nfp; j++) {
		const struct ctp_interval_col *ch;
		for (int k = 0; k < 2; k++)
			if (s->fp[j].f[k] &&
			    ctp_groups_aggregate(s->g[k], s->fp[j].f[k],
						 &s->fp[j].col[k]) < 0)
				return -ENOMEM;
		/* A counter's changes per member, computed once. */
		if (s->fp[j].f[1] && per_member(s, s->fp[j].f[1]) &&
		    ctp_interval_col(x->iv, s->fp[j].f[1], &ch) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Largest relative change over the numeric fields; a change from 0 counts
 * above any percentage. */
static long double rel_score(const struct gsec *s, const struct jrow *r)
{
	long double best = 0;
	for (size_t j = 0; j < s->nfp; j++) {
		struct cmp c;
		compare_cell(s, r, &s->fp[j], &c);
		long double v = 0;
		if (c.has_pct)
			v = fabsl(c.pct);
		else if (c.num && c.delta != 0 && c.from_zero)
			v = 1e30L;
		else if (c.num && any_f(&s->fp[j])->unit == CTP_UNIT_CENTIPCT)
			v = fabsl(c.delta) / 100; /* percentage points */
		else if (c.cat && c.changed)
			v = 100;
		if (v > best)
			best = v;
	}
	return best;
}

struct sortctx {
	const struct gsec *s;
	const struct fpair *by; /* NULL: rel */
	enum sort_kind kind;
	bool asc;
};

/* By the sort field's delta: groups without one last either way. */
static int cmp_keys(const struct jrow *a, const struct jrow *b, bool asc)
{
	int c;
	if (a->has_key != b->has_key)
		return a->has_key ? -1 : 1;
	c = (a->key > b->key) - (a->key < b->key);
	return asc ? c : -c;
}

static int cmp_jrows(const void *pa, const void *pb, void *arg)
{
	const struct sortctx *sc = arg;
	const struct jrow *a = pa, *b = pb;
	int c = 0;
	if (sc->kind == SORT_DELTA || sc->kind == SORT_RATE) {
		c = cmp_keys(a, b, sc->asc);
	} else if (!sc->by) {
		c = (a->rank > b->rank) - (a->rank < b->rank);
		if (!c)
			c = (a->score < b->score) - (a->score > b->score);
		if (sc->asc)
			c = -c;
	} else {
		const struct ctp_agg *va = NULL, *vb = NULL;
		int ka = a->idx[1] >= 0 ? 1 : 0, kb = b->idx[1] >= 0 ? 1 : 0;
		if (sc->by->col[ka])
			va = &sc->by->col[ka][a->idx[ka]];
		if (sc->by->col[kb])
			vb = &sc->by->col[kb][b->idx[kb]];
		bool pa_ = va && va->v.type != CTP_VALUE_ABSENT;
		bool pb_ = vb && vb->v.type != CTP_VALUE_ABSENT;
		if (pa_ != pb_)
			return pa_ ? -1 : 1; /* absent last either way */
		if (pa_) {
			long double xa, xb;
			if (ctp_agg_number(va, &xa) && ctp_agg_number(vb, &xb))
				c = (xa > xb) - (xa < xb);
			else if (va->v.type == vb->v.type)
				c = ctp_agg_cmp(va, vb);
			if (!sc->asc)
				c = -c;
		}
	}
	if (c)
		return c;
	/* Ties in key order, which is the join order. */
	return (a < b) ? -1 : a > b;
}

/* Ages of group g's members (side k) at that side's capture. */
static void row_ages(const struct ctx *x, const struct ctp_group *g, int k,
		     struct jrow *r)
{
	uint64_t boot = x->id->boot_ns[k];
	for (uint32_t i = 0; boot && i < g->n_threads; i++) {
		uint64_t st = x->id->tstart[k][g->threads[i]];
		if (st == CTP_IDENT_UNKNOWN || st > boot)
			continue;
		uint64_t age = boot - st;
		if (!r->has_age || age > r->age_old)
			r->age_old = age;
		if (!r->has_age || age < r->age_young)
			r->age_young = age;
		r->has_age = true;
	}
}

/*
 * A joined row's status, member counts and ages. By identity, a group
 * present on both sides none of whose CAND threads were in BASE had its
 * members replaced: restarted.
 */
static void row_members(const struct ctx *x, const struct gsec *s,
			struct jrow *r)
{
	const struct ctp_group *g0 = row_group(s, r, 0),
			       *g1 = row_group(s, r, 1);
	const struct ctp_ident *id = x->id;

	r->status = r->rank == 0   ? ST_NEW
		    : r->rank == 1 ? ST_GONE
				   : ST_CONTINUING;
	row_ages(x, g1 ? g1 : g0, g1 ? 1 : 0, r);
	if (renamed_row(r))
		r->status = ST_RENAMED;
	if (!id->ok)
		return;
	r->has_members = true;
	for (uint32_t i = 0; g1 && i < g1->n_threads; i++)
		id->tmatch[g1->threads[i]] >= 0 ? r->n_cont++ : r->n_new++;
	for (uint32_t i = 0; g0 && i < g0->n_threads; i++)
		r->n_gone += !id->talive[g0->threads[i]];
	if (r->status == ST_CONTINUING && g0 && g1 && g0->n_threads &&
	    r->n_new && !r->n_cont)
		r->status = ST_RESTARTED;
}

/* The index in s->fp of the sort field, or -1. */
static long find_by(const struct ctx *x, const struct gsec *s)
{
	for (size_t k = 0; x->sort_field && k < s->nfp; k++)
		if (!strcmp(s->fp[k].name, x->sort_field))
			return (long)k;
	return -1;
}

/* BASE's keys as they join CAND's: a renamed cgroup part replaced by the
 * CAND path it was paired with; in *order, BASE's groups in that order. */
struct join {
	const struct ctp_groups *g;
	const char **keys; /* n_key parts per BASE group */
	size_t nk, *order;
};

static int cmp_join(const void *pa, const void *pb, void *arg)
{
	const struct join *j = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	return ctp_groups_key_cmp(j->g, &j->keys[a * j->nk],
				  &j->keys[b * j->nk]);
}

static int join_keys(const struct ctx *x, const struct gsec *s, struct join *j)
{
	size_t n0 = ctp_groups_count(s->g[0]);
	bool moved = false;

	j->g = s->g[0];
	j->nk = ctp_groups_n_key(s->g[0]);
	j->keys = calloc(n0 * j->nk + 1, sizeof(*j->keys));
	j->order = calloc(n0 + 1, sizeof(*j->order));
	if (!j->keys || !j->order)
		return -ENOMEM;
	for (size_t i = 0; i < n0; i++) {
		const char **k = &j->keys[i * j->nk];
		const struct ctp_rename_pair *p;
		memcpy(k, ctp_groups_at(s->g[0], i)->key, j->nk * sizeof(*k));
		j->order[i] = i;
		if (s->cpart >= 0 &&
		    (p = ctp_rename_find(x->ren, 0, k[s->cpart])))
			k[s->cpart] = p->path[1], moved = true;
	}
	if (moved)
		qsort_r(j->order, n0, sizeof(*j->order), cmp_join, j);
	return 0;
}

/* The renamed pair of a row's cgroup key part, if any. */
static const struct ctp_rename_pair *
row_rename(const struct ctx *x, const struct gsec *s, const struct jrow *r)
{
	int k = r->idx[0] >= 0 ? 0 : 1;
	if (s->cpart < 0)
		return NULL;
	return ctp_rename_find(x->ren, k, row_group(s, r, k)->key[s->cpart]);
}

/* Join two group tables by key (BASE's renamed cgroups under their CAND
 * names) into s->rows. */
static int join_rows(struct ctx *x, struct gsec *s)
{
	size_t n0 = ctp_groups_count(s->g[0]), n1 = ctp_groups_count(s->g[1]);
	size_t i = 0, j = 0;
	struct join jn = {0};
	s->rows = calloc(n0 + n1 + 1, sizeof(*s->rows));
	if (!s->rows || join_keys(x, s, &jn) < 0) {
		free(jn.keys);
		free(jn.order);
		return -ENOMEM;
	}
	while (i < n0 || j < n1) {
		int c;
		if (i == n0)
			c = 1;
		else if (j == n1)
			c = -1;
		else
			c = ctp_groups_key_cmp(s->g[0],
					       &jn.keys[jn.order[i] * jn.nk],
					       ctp_groups_at(s->g[1], j)->key);
		struct jrow *r = &s->rows[s->nrows++];
		r->idx[0] = c <= 0 ? (long)jn.order[i++] : -1;
		r->idx[1] = c >= 0 ? (long)j++ : -1;
		r->rank = r->idx[0] < 0 ? 0 : r->idx[1] < 0 ? 1 : 2;
		r->ren = row_rename(x, s, r);
		row_members(x, s, r);
	}
	free(jn.keys);
	free(jn.order);
	return 0;
}

/* Join two group tables and sort the rows. */
static int build_rows(struct ctx *x, struct gsec *s)
{
	if (join_rows(x, s) < 0)
		return -ENOMEM;
	s->by = find_by(x, s);
	const struct fpair *by = s->by >= 0 ? &s->fp[s->by] : NULL;
	s->shown = x->o->r.limit && x->o->r.limit < s->nrows
			   ? (size_t)x->o->r.limit
			   : s->nrows;
	/* A field of another section: keep key order. */
	if (x->sort_kind != SORT_REL && !by)
		return 0;
	for (size_t k = 0; k < s->nrows; k++) {
		struct jrow *r = &s->rows[k];
		struct cmp c;
		if (x->sort_kind == SORT_REL) {
			r->score = rel_score(s, r);
		} else if (x->sort_kind == SORT_DELTA) {
			compare_cell(s, r, by, &c);
			r->has_key = c.num, r->key = c.delta;
		} else if (x->sort_kind == SORT_RATE) {
			/* The rate shown: each member's change over its own
			 * interval, which need not order as the changes do. */
			compare_cell(s, r, by, &c);
			r->has_key = c.has_rate, r->key = c.rate;
		}
	}
	/* Stable: qsort_r with the index as the last key. */
	struct sortctx sc = {s, by, x->sort_kind, x->o->asc};
	qsort_r(s->rows, s->nrows, sizeof(*s->rows), cmp_jrows, &sc);
	return 0;
}

static void gsec_free(struct gsec *s)
{
	ctp_groups_free(s->g[0]);
	ctp_groups_free(s->g[1]);
	free(s->fp);
	free(s->rows);
}

static int gsec_build(struct ctx *x, struct gsec *s,
		      const struct ctp_group_spec *spec, unsigned scopes,
		      int psi, char *err, size_t errlen)
{
	s->x = x;
	s->cpart = x->ren ? ctp_group_spec_cgroup_part(spec) : -1;
	for (int k = 0; k < 2; k++) {
		int r = ctp_groups_new(x->snap[k], spec, &s->g[k], err, errlen);
		if (r < 0) {
			size_t l = strlen(err);
			snprintf(err + l, errlen - l, " (in %s)", x->path[k]);
			return r;
		}
	}
	if (ctp_groups_n_key(s->g[0]) != ctp_groups_n_key(s->g[1])) {
		snprintf(err, errlen, "the two snapshots group differently");
		return -EINVAL;
	}
	if (collect_fields(x, s, scopes, psi) < 0 || build_rows(x, s) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* ---- Table output ---- */

static void count_pair(char *buf, size_t n, const struct ctp_group *a,
		       const struct ctp_group *b, bool threads)
{
	char x[32], y[32];
	uint32_t va = a ? (threads ? a->n_threads : a->n_processes) : 0;
	uint32_t vb = b ? (threads ? b->n_threads : b->n_processes) : 0;
	ctp_render_count(x, sizeof(x), va);
	ctp_render_count(y, sizeof(y), vb);
	if (!a)
		snprintf(buf, n, "%s", y);
	else if (!b || va == vb)
		snprintf(buf, n, "%s", x);
	else
		snprintf(buf, n, "%s -> %s", x, y);
}

static const char *const mode_titles[][7] = {
	[CTP_COMPARE_FULL] = {"BASE", "CAND", "DELTA", "/s", "%CPU", "%", NULL},
	[CTP_COMPARE_DELTA] = {"DELTA", "/s", "%CPU", NULL},
	[CTP_COMPARE_PERCENT] = {"%", NULL},
	[CTP_COMPARE_ARROW] = {"CHANGE", NULL},
};

#define GSEC_CELL 400
/* Columns before the mode's: the key's, then these. */
#define GSEC_FIXED 5

/* The columns: the group key, status, uptime, counts, the field and the
 * mode's value columns. */
static int gsec_columns(const struct gsec *s, int mode, size_t nk, size_t nm,
			struct ctp_table *t)
{
	static const struct {
		const char *title;
		unsigned flags;
	} fixed[GSEC_FIXED] = {{"STATUS", 0},
			       {"UPTIME", CTP_TABLE_RIGHT},
			       {"THREADS", CTP_TABLE_RIGHT},
			       {"PROCS", CTP_TABLE_RIGHT},
			       {"FIELD", 0}};
	int r = 0;
	for (size_t k = 0; k < nk && r >= 0; k++)
		r = ctp_table_add_col(t, ctp_groups_key_title(s->g[0], k), 0);
	for (size_t i = 0; i < GSEC_FIXED && r >= 0; i++)
		r = ctp_table_add_col(t, fixed[i].title, fixed[i].flags);
	for (size_t m = 0; m < nm && r >= 0; m++)
		r = ctp_table_add_col(
			t, mode_titles[mode][m],
			mode != CTP_COMPARE_ARROW ? CTP_TABLE_RIGHT : 0);
	return r < 0 ? r : 0;
}

/* "<title>: N groups in BASE, M in CAND; ..." */
static void gsec_summary(struct ctx *x, const struct gsec *s)
{
	size_t n[5] = {0};

	for (size_t r = 0; r < s->nrows; r++)
		n[s->rows[r].status]++;
	fprintf(x->out,
		"\n%s: %zu groups in BASE, %zu in CAND; %zu new, %zu gone",
		s->title, ctp_groups_count(s->g[0]), ctp_groups_count(s->g[1]),
		n[ST_NEW], n[ST_GONE]);
	if (n[ST_RESTARTED])
		fprintf(x->out, ", %zu restarted", n[ST_RESTARTED]);
	if (n[ST_RENAMED])
		fprintf(x->out, ", %zu renamed", n[ST_RENAMED]);
	if (s->shown < s->nrows)
		fprintf(x->out, "; showing %zu", s->shown);
	fprintf(x->out, "\n");
}

/* A group's status for the table: new, gone, restarted; a continuing
 * group only says how its members changed ("+2 -1": two new threads, one
 * gone), nothing when they did not. */
static void status_cell(const struct jrow *r, char *buf, size_t n)
{
	buf[0] = '\0';
	if (r->status != ST_CONTINUING)
		snprintf(buf, n, "%s", gstatus_names[r->status]);
	else if (r->n_new && r->n_gone)
		snprintf(buf, n, "+%" PRIu32 " -%" PRIu32, r->n_new, r->n_gone);
	else if (r->n_new || r->n_gone)
		snprintf(buf, n, "%c%" PRIu32, r->n_new ? '+' : '-',
			 r->n_new ? r->n_new : r->n_gone);
}

/* How long the group has existed: its oldest member's age ("-" when
 * unknown). A group that has just started shows a small one; a continuing
 * group's new members show in STATUS; JSON and CSV have both ends. */
static void uptime_cell(const struct jrow *r, char *buf, size_t n)
{
	if (r->has_age)
		human_age(buf, n, r->age_old);
	else
		snprintf(buf, n, "-");
}

/* A renamed cgroup for the table: "BASE -> CAND", each escaped. */
static void renamed_cell(const struct ctp_rename_pair *p, char *buf, size_t n)
{
	char e[2][GSEC_CELL / 2 - 4];
	for (int k = 0; k < 2; k++)
		ctp_render_escape(p->path[k], strlen(p->path[k]),
				  CTP_RENDER_CELL_MAX, e[k], sizeof(e[k]));
	snprintf(buf, n, "%s -> %s", e[0], e[1]);
}

/* The first line of a row: its key, status and counts. */
static void gsec_key_cells(const struct gsec *s, const struct jrow *r,
			   size_t nk, char (*buf)[GSEC_CELL])
{
	const char *const *key = row_key(s, r);

	for (size_t k = 0; k < nk; k++) {
		const char *v = key[k] ? key[k] : "-";
		if (r->ren && (long)k == s->cpart) {
			renamed_cell(r->ren, buf[k], GSEC_CELL);
			continue;
		}
		ctp_render_escape(v, strlen(v), CTP_RENDER_CELL_MAX, buf[k],
				  GSEC_CELL);
	}
	status_cell(r, buf[nk], GSEC_CELL);
	uptime_cell(r, buf[nk + 1], GSEC_CELL);
	count_pair(buf[nk + 2], GSEC_CELL, row_group(s, r, 0),
		   row_group(s, r, 1), true);
	count_pair(buf[nk + 3], GSEC_CELL, row_group(s, r, 0),
		   row_group(s, r, 1), false);
}

/* The rate and %CPU cells of a counter (empty for other fields). */
static void rate_cells(const struct cmp *c, uint8_t unit, char *rate, char *cpu)
{
	if (c->has_rate)
		human_rate(rate, GSEC_CELL, c->rate, unit);
	if (c->has_cpu)
		snprintf(cpu, GSEC_CELL, "%.1Lf%%", c->cpu);
}

/* One field of a row: its name and the mode's value cells. */
static void gsec_field_cells(const struct gsec *s, const struct jrow *r,
			     const struct fpair *p, int mode, char *name,
			     char (*m)[GSEC_CELL])
{
	char d[GSEC_CELL], pc[64];
	struct cmp c;

	compare_cell(s, r, p, &c);
	human_change(&c, any_f(p)->unit, d, sizeof(d), pc, sizeof(pc));
	snprintf(name, GSEC_CELL, "%s", p->name);
	if (c.reset)
		snprintf(d + strlen(d), sizeof(d) - strlen(d), " (reset)");
	switch (mode) {
	case CTP_COMPARE_FULL:
		snprintf(m[0], GSEC_CELL, "%s", c.h[0]);
		snprintf(m[1], GSEC_CELL, "%s", c.h[1]);
		snprintf(m[2], GSEC_CELL, "%s", d);
		rate_cells(&c, any_f(p)->unit, m[3], m[4]);
		snprintf(m[5], GSEC_CELL, "%s", pc);
		break;
	case CTP_COMPARE_DELTA:
		snprintf(m[0], GSEC_CELL, "%s", d);
		rate_cells(&c, any_f(p)->unit, m[1], m[2]);
		break;
	case CTP_COMPARE_PERCENT:
		snprintf(m[0], GSEC_CELL, "%s", c.cat ? d : pc);
		break;
	case CTP_COMPARE_ARROW:
		if (c.changed || c.a[0] != c.a[1])
			snprintf(m[0], GSEC_CELL, "%s -> %s", c.h[0], c.h[1]);
		if (!c.changed)
			snprintf(m[0], GSEC_CELL, "%s", c.h[1]);
		break;
	}
}

/* A row's table lines: the key cells with the first field, then one line
 * per further field (a row without fields still gets its key line). */
static int gsec_row(struct ctp_table *t, char **cells, char (*buf)[GSEC_CELL],
		    const struct gsec *s, const struct jrow *r, size_t nk,
		    int mode)
{
	size_t ncols = ctp_table_n_cols(t);
	for (size_t j = 0; j < s->nfp || j == 0; j++) {
		/* The sort field first, so that the line with the key
		 * shows what the group was ranked by. */
		size_t f = s->by < 0		? j
			   : j == 0		? (size_t)s->by
			   : j <= (size_t)s->by ? j - 1
						: j;
		for (size_t i = 0; i < ncols; i++)
			buf[i][0] = '\0';
		if (j == 0)
			gsec_key_cells(s, r, nk, buf);
		if (j < s->nfp)
			gsec_field_cells(s, r, &s->fp[f], mode,
					 buf[nk + GSEC_FIXED - 1],
					 buf + nk + GSEC_FIXED);
		ctp_table_row_class(t, j	      ? CTP_TABLE_PLAIN
				       : r->rank == 0 ? CTP_TABLE_NEW
				       : r->rank == 1 ? CTP_TABLE_GONE
						      : CTP_TABLE_PLAIN);
		if (ctp_table_texts(t, (const char *const *)cells, ncols) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * One line per shown group with the sort field's change only, before the
 * per-field blocks: a group's block is as long as the fields selected (a
 * hundred and more by default), so without this the first screen would
 * hold one group instead of the ranking.
 */
static int print_gsec_overview(struct ctx *x, const struct gsec *s, size_t nk)
{
	static const char *const drop[] = {"<24",    "PROCS", "THREADS",
					   "/s",     "<16",   "UPTIME",
					   "STATUS", "<12",   NULL};
	struct gsec one = *s;
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	size_t ncols = nk + GSEC_FIXED + 3;
	char **cells = calloc(ncols, sizeof(*cells));
	char(*buf)[GSEC_CELL] = calloc(ncols, sizeof(*buf));
	int ret = -ENOMEM;

	one.fp = &s->fp[s->by], one.nfp = 1, one.by = 0;
	if (!cells || !buf || !t ||
	    gsec_columns(s, CTP_COMPARE_DELTA, nk, 3, t) < 0)
		goto out;
	ctp_table_hide(t, nk + GSEC_FIXED - 1); /* FIELD: the title says */
	for (size_t i = 0; i < ncols; i++)
		cells[i] = buf[i];
	for (size_t ri = 0; ri < s->shown; ri++)
		if (gsec_row(t, cells, buf, &one, &s->rows[ri], nk,
			     CTP_COMPARE_DELTA) < 0)
			goto out;
	fprintf(x->out, "  By %s over the interval:\n", s->fp[s->by].name);
	ctp_table_fit(t, x->columns, drop);
	ctp_table_print(t, x->out, x->color);
	fputc('\n', x->out);
	ret = 0;
out:
	ctp_table_free(t);
	free(cells);
	free(buf);
	return ret;
}

static int print_gsec_table(struct ctx *x, struct gsec *s)
{
	/* Least useful first: what the interval says (delta, %CPU) and who
	 * (key, status, uptime) stay longest; names are cut, in the
	 * middle, before they would go. */
	static const char *const drop[] = {"<24",    "PROCS",  "THREADS", "%",
					   "BASE",   "CAND",   "/s",	  "<16",
					   "UPTIME", "STATUS", "<12",	  NULL};
	size_t nk = ctp_groups_n_key(s->g[0]), nm = 0, ncols;
	int mode = x->o->mode, ret = -ENOMEM;
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	char **cells = NULL;
	char(*buf)[GSEC_CELL] = NULL;

	while (mode_titles[mode][nm])
		nm++;
	ncols = nk + GSEC_FIXED + nm;
	cells = calloc(ncols, sizeof(*cells));
	buf = calloc(ncols, sizeof(*buf));
	if (!cells || !buf || !t || gsec_columns(s, mode, nk, nm, t) < 0)
		goto out;
	for (size_t i = 0; i < ncols; i++)
		cells[i] = buf[i];
	gsec_summary(x, s);
	if (s->by >= 0 && s->nfp > 1 && s->shown &&
	    print_gsec_overview(x, s, nk) < 0)
		goto out;
	for (size_t ri = 0; ri < s->shown; ri++)
		if (gsec_row(t, cells, buf, s, &s->rows[ri], nk, mode) < 0)
			goto out;
	ctp_table_fit(t, x->columns, drop);
	ctp_table_print(t, x->out, x->color);
	if (s->shown < s->nrows)
		fprintf(x->out,
			"  \u2026 %zu more groups (--top 0 shows all)\n",
			s->nrows - s->shown);
	ret = 0;
out:
	ctp_table_free(t);
	free(cells);
	free(buf);
	return ret;
}

/* ---- JSON and CSV of a grouped section ---- */

/* How many of a group's rows had the field: [measured, rows]. */
static void json_measured(struct ctp_table_doc *d, const char *key,
			  const struct ctp_agg *a)
{
	if (!a) {
		ctp_table_doc_null(d, key);
		return;
	}
	ctp_table_doc_open(d, key, '[');
	ctp_table_doc_numf(d, NULL, "%" PRIu32, a->n_measured);
	ctp_table_doc_numf(d, NULL, "%" PRIu32, a->n_rows);
	ctp_table_doc_close(d);
}

/* An optional number, or null. */
static void json_u64_or_null(struct ctp_table_doc *d, const char *key,
			     bool have, uint64_t v)
{
	if (have)
		ctp_table_doc_numf(d, key, "%" PRIu64, v);
	else
		ctp_table_doc_null(d, key);
}

/* `"name":{"base":..,"cand":..,"delta":..,"percent":..` of one field,
 * left open for more members. */
static void json_cmp(struct ctp_table_doc *d, const char *name,
		     const struct cmp *c)
{
	char num[64];

	ctp_table_doc_open(d, name, '{');
	json_agg(d, "base", c->a[0]);
	json_agg(d, "cand", c->a[1]);
	if (c->num) {
		exact_num(num, sizeof(num), c->delta);
		ctp_table_doc_numf(d, "delta", "%s", num);
	} else {
		ctp_table_doc_null(d, "delta");
	}
	if (c->has_pct)
		ctp_table_doc_numf(d, "percent", "%.4Lf", c->pct);
	else
		ctp_table_doc_null(d, "percent");
	if (c->has_rate)
		ctp_table_doc_numf(d, "rate", "%.9Lg", c->rate);
	else
		ctp_table_doc_null(d, "rate");
	if (c->has_cpu)
		ctp_table_doc_numf(d, "cpu_percent", "%.4Lf", c->cpu);
	else
		ctp_table_doc_null(d, "cpu_percent");
	ctp_table_doc_bool(d, "reset", c->reset);
}

/* A group's member counts and ages (null when not known). */
static void json_row_members(struct ctp_table_doc *d, const struct jrow *r)
{
	if (r->has_members) {
		ctp_table_doc_open(d, "members", '{');
		ctp_table_doc_numf(d, "continuing", "%" PRIu32, r->n_cont);
		ctp_table_doc_numf(d, "new", "%" PRIu32, r->n_new);
		ctp_table_doc_numf(d, "gone", "%" PRIu32, r->n_gone);
		ctp_table_doc_close(d);
	} else {
		ctp_table_doc_null(d, "members");
	}
	if (r->has_age) {
		ctp_table_doc_open(d, "uptime", '{');
		ctp_table_doc_numf(d, "oldest_ns", "%" PRIu64, r->age_old);
		ctp_table_doc_numf(d, "youngest_ns", "%" PRIu64, r->age_young);
		ctp_table_doc_close(d);
	} else {
		ctp_table_doc_null(d, "uptime");
	}
}

/* The renamed pair of a group's cgroup (null when none). */
static void json_row_renamed(struct ctp_table_doc *d, const struct jrow *r)
{
	if (!r->ren) {
		ctp_table_doc_null(d, "renamed");
		return;
	}
	ctp_table_doc_open(d, "renamed", '{');
	ctp_table_doc_text(d, "base", r->ren->path[0]);
	ctp_table_doc_text(d, "cand", r->ren->path[1]);
	ctp_table_doc_close(d);
}

/* A group's threads or processes on each side (null: not there). */
static void json_counts(struct ctp_table_doc *d, const char *key,
			const struct ctp_group *g0, const struct ctp_group *g1,
			bool threads)
{
	ctp_table_doc_open(d, key, '{');
	json_u64_or_null(d, "base", g0,
			 g0 ? threads ? g0->n_threads : g0->n_processes : 0);
	json_u64_or_null(d, "cand", g1,
			 g1 ? threads ? g1->n_threads : g1->n_processes : 0);
	ctp_table_doc_close(d);
}

/* One joined group: its key, status, members, and each field compared. */
static void json_group(struct ctp_table_doc *d, struct gsec *s,
		       const struct jrow *r)
{
	size_t nk = ctp_groups_n_key(s->g[0]);
	const char *const *key = row_key(s, r);
	ctp_table_doc_open(d, NULL, '{');
	ctp_table_doc_open(d, "key", '[');
	for (size_t k = 0; k < nk; k++)
		ctp_table_doc_text(d, NULL, key[k]);
	ctp_table_doc_close(d);
	ctp_table_doc_text(d, "status", gstatus_names[r->status]);
	json_row_renamed(d, r);
	json_row_members(d, r);
	json_counts(d, "threads", row_group(s, r, 0), row_group(s, r, 1), true);
	json_counts(d, "processes", row_group(s, r, 0), row_group(s, r, 1),
		    false);
	ctp_table_doc_open(d, "fields", '{');
	for (size_t j = 0; j < s->nfp; j++) {
		struct cmp c;
		compare_cell(s, r, &s->fp[j], &c);
		json_cmp(d, s->fp[j].name, &c);
		ctp_table_doc_bool(d, "changed", c.changed);
		ctp_table_doc_open(d, "measured", '{');
		json_measured(d, "base", c.a[0]);
		json_measured(d, "cand", c.a[1]);
		ctp_table_doc_close(d);
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
	ctp_table_doc_close(d);
}

static void print_gsec_json(struct ctx *x, struct gsec *s)
{
	struct ctp_table_doc *d = &x->doc;
	size_t nk = ctp_groups_n_key(s->g[0]);
	ctp_table_doc_open(d, s->name, '{');
	ctp_table_doc_open(d, "key", '[');
	for (size_t k = 0; k < nk; k++)
		ctp_table_doc_text(d, NULL, ctp_groups_key_title(s->g[0], k));
	ctp_table_doc_close(d);
	ctp_table_doc_numf(d, "groups_base", "%zu", ctp_groups_count(s->g[0]));
	ctp_table_doc_numf(d, "groups_cand", "%zu", ctp_groups_count(s->g[1]));
	ctp_table_doc_numf(d, "joined", "%zu", s->nrows);
	ctp_table_doc_numf(d, "shown", "%zu", s->shown);
	ctp_table_doc_numf(d, "more", "%zu", s->nrows - s->shown);
	ctp_table_doc_open(d, "groups", '[');
	for (size_t ri = 0; ri < s->shown; ri++)
		json_group(d, s, &s->rows[ri]);
	ctp_table_doc_close(d);
	ctp_table_doc_close(d);
}

/* A cut section in CSV: kind `more`, the rows left out in delta. */
static void csv_more(struct ctp_table *t, const char *section, size_t more)
{
	if (!more)
		return;
	ctp_table_text(t, section);
	ctp_table_skip(t, 9);
	ctp_table_numf(t, "%zu", more);
	ctp_table_skip(t, 10);
	ctp_table_text(t, "more");
	ctp_table_skip(t, 2);
}

static void print_gsec_csv(struct ctx *x, struct gsec *s)
{
	struct ctp_table *t = x->csv;
	size_t nk = ctp_groups_n_key(s->g[0]);
	for (size_t ri = 0; ri < s->shown; ri++) {
		const struct jrow *r = &s->rows[ri];
		const char *const *key = row_key(s, r);
		const struct ctp_group *g[2] = {row_group(s, r, 0),
						row_group(s, r, 1)};
		char gk[1024] = "";
		size_t l = 0;
		for (size_t k = 0; k < nk && l < sizeof(gk); k++)
			l += r->ren && (long)k == s->cpart
				     ? (size_t)snprintf(
					       gk + l, sizeof(gk) - l,
					       "%s%s -> %s", k ? "|" : "",
					       r->ren->path[0], r->ren->path[1])
				     : (size_t)snprintf(gk + l, sizeof(gk) - l,
							"%s%s", k ? "|" : "",
							key[k] ? key[k] : "");
		for (size_t j = 0; j < s->nfp; j++) {
			struct cmp c;
			compare_cell(s, r, &s->fp[j], &c);
			ctp_table_text(t, s->name);
			ctp_table_text(t, gk);
			ctp_table_text(t, gstatus_names[r->status]);
			for (int k = 0; k < 2; k++)
				CSV_NUM(t, g[k], "%" PRIu32, g[k]->n_threads);
			for (int k = 0; k < 2; k++)
				CSV_NUM(t, g[k], "%" PRIu32, g[k]->n_processes);
			csv_cmp(t, s->fp[j].name, &c);
			csv_row_tail(t, r);
		}
	}
	if (s->nfp)
		csv_more(t, s->name, s->nrows - s->shown);
}

/* ---- Renamed cgroups ---- */

/* Types listed per side in the table before "… N more". */
#define RENAMED_TYPES_SHOWN 3

/* The pairs shown (--top). */
static size_t renamed_shown(const struct ctx *x)
{
	size_t n = ctp_rename_count(x->ren);
	return x->o->r.limit && x->o->r.limit < n ? (size_t)x->o->r.limit : n;
}

/* One thread type as "pcomm|comm" for a person (escaped). */
static size_t type_text(const struct ctx *x, uint32_t t, char *buf, size_t n)
{
	struct ctp_bytes pc, c;
	char a[128], b[128];
	ctp_rename_type(x->ren, t, &pc, &c);
	ctp_render_escape(pc.ptr, pc.len, 32, a, sizeof(a));
	ctp_render_escape(c.ptr, c.len, 32, b, sizeof(b));
	int w = snprintf(buf, n, "%s|%s", a, b);
	return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

/* The types only side k of p has, cut to a few: "a|b, c|d … 4 more". */
static void types_cell(const struct ctx *x, const struct ctp_rename_pair *p,
		       int k, char *buf, size_t n)
{
	size_t l = 0;
	uint32_t m = p->n_only[k];
	snprintf(buf, n, "-");
	for (uint32_t i = 0; i < m && i < RENAMED_TYPES_SHOWN && l < n; i++) {
		if (i)
			l += (size_t)snprintf(buf + l, n - l, ", ");
		if (l < n)
			l += type_text(x, p->only[k][i], buf + l, n - l);
	}
	if (m > RENAMED_TYPES_SHOWN && l < n)
		snprintf(buf + l, n - l, " \u2026 %" PRIu32 " more",
			 m - RENAMED_TYPES_SHOWN);
}

static void renamed_title(struct ctx *x)
{
	fprintf(x->out,
		"\nRenamed cgroups: %zu pairs of %zu BASE-only and %zu "
		"CAND-only cgroups (Jaccard of thread types >= %.2f, >= "
		"%" PRIu64 " shared)\n",
		ctp_rename_count(x->ren), ctp_rename_one_sided(x->ren, 0),
		ctp_rename_one_sided(x->ren, 1), x->ren_opts.min_jaccard,
		x->ren_opts.min_shared);
	if (ctp_rename_gave_up(x->ren))
		fprintf(x->out, "  none paired: too many one-sided cgroups "
				"to compare them all\n");
}

static int renamed_table(struct ctx *x)
{
	/* Paths are what a reader needs: the type lists go before paths
	 * are cut further. */
	static const char *const fit[] = {"<32",	  "HOW", "ONLY IN CAND",
					  "ONLY IN BASE", "<16", NULL};
	static const char *const titles[] = {
		"BASE", "CAND",		"JACCARD",     "SHARED",
		"HOW",	"ONLY IN BASE", "ONLY IN CAND"};
	size_t shown = renamed_shown(x);
	struct ctp_table *t;
	int ret = 0;

	if (!x->ren ||
	    (!ctp_rename_count(x->ren) && !ctp_rename_gave_up(x->ren)))
		return 0;
	if (!(t = ctp_table_new(CTP_TABLE_GRID)))
		return -ENOMEM;
	for (size_t i = 0; i < 7 && ret >= 0; i++)
		ret = ctp_table_add_col(t, titles[i],
					i == 2 || i == 3 ? CTP_TABLE_RIGHT : 0);
	renamed_title(x);
	for (size_t i = 0; i < shown && ret >= 0; i++) {
		const struct ctp_rename_pair *p = ctp_rename_at(x->ren, i);
		char c[7][GSEC_CELL];
		const char *cells[7];
		for (int k = 0; k < 2; k++) {
			ctp_render_escape(p->path[k], strlen(p->path[k]),
					  CTP_RENDER_CELL_MAX, c[k], GSEC_CELL);
			types_cell(x, p, k, c[5 + k], GSEC_CELL);
		}
		snprintf(c[2], GSEC_CELL, "%.2f", p->jaccard);
		snprintf(c[3], GSEC_CELL, "%" PRIu32, p->shared);
		snprintf(c[4], GSEC_CELL, "%s",
			 p->carried ? "parent" : "types");
		for (int j = 0; j < 7; j++)
			cells[j] = c[j];
		ret = ctp_table_texts(t, cells, 7);
	}
	ctp_table_fit(t, x->columns, fit);
	ctp_table_print(t, x->out, x->color);
	if (shown < ctp_rename_count(x->ren))
		fprintf(x->out, "  \u2026 %zu more pairs (--top 0 shows all)\n",
			ctp_rename_count(x->ren) - shown);
	ctp_table_free(t);
	return ret < 0 ? -ENOMEM : 0;
}

/* The types only side k of p has, as [[pcomm, comm], ...]. */
static void json_types(struct ctx *x, const char *key,
		       const struct ctp_rename_pair *p, int k)
{
	struct ctp_table_doc *d = &x->doc;
	ctp_table_doc_open(d, key, '[');
	for (uint32_t i = 0; i < p->n_only[k]; i++) {
		struct ctp_bytes pc, c;
		ctp_rename_type(x->ren, p->only[k][i], &pc, &c);
		ctp_table_doc_open(d, NULL, '[');
		ctp_table_doc_str(d, NULL, pc.ptr, pc.len);
		ctp_table_doc_str(d, NULL, c.ptr, c.len);
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
}

/* A base/cand pair of two counts. */
static void json_pair_u32(struct ctp_table_doc *d, const char *key, uint32_t a,
			  uint32_t b)
{
	ctp_table_doc_open(d, key, '{');
	ctp_table_doc_numf(d, "base", "%" PRIu32, a);
	ctp_table_doc_numf(d, "cand", "%" PRIu32, b);
	ctp_table_doc_close(d);
}

static int renamed_json(struct ctx *x)
{
	struct ctp_table_doc *d = &x->doc;
	size_t shown = renamed_shown(x), n = ctp_rename_count(x->ren);
	if (!x->ren) {
		ctp_table_doc_null(d, "renamed");
		return 0;
	}
	ctp_table_doc_open(d, "renamed", '{');
	ctp_table_doc_numf(d, "min_jaccard", "%.4f", x->ren_opts.min_jaccard);
	ctp_table_doc_numf(d, "min_shared", "%" PRIu64, x->ren_opts.min_shared);
	ctp_table_doc_numf(d, "base_only", "%zu",
			   ctp_rename_one_sided(x->ren, 0));
	ctp_table_doc_numf(d, "cand_only", "%zu",
			   ctp_rename_one_sided(x->ren, 1));
	ctp_table_doc_bool(d, "gave_up", ctp_rename_gave_up(x->ren));
	ctp_table_doc_numf(d, "shown", "%zu", shown);
	ctp_table_doc_numf(d, "more", "%zu", n - shown);
	ctp_table_doc_open(d, "pairs", '[');
	for (size_t i = 0; i < shown; i++) {
		const struct ctp_rename_pair *p = ctp_rename_at(x->ren, i);
		ctp_table_doc_open(d, NULL, '{');
		ctp_table_doc_text(d, "base", p->path[0]);
		ctp_table_doc_text(d, "cand", p->path[1]);
		ctp_table_doc_numf(d, "jaccard", "%.4f", p->jaccard);
		ctp_table_doc_numf(d, "shared", "%" PRIu32, p->shared);
		json_pair_u32(d, "types", p->n_types[0], p->n_types[1]);
		json_pair_u32(d, "threads", p->threads[0], p->threads[1]);
		ctp_table_doc_bool(d, "carried", p->carried);
		json_types(x, "only_in_base", p, 0);
		json_types(x, "only_in_cand", p, 1);
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
	ctp_table_doc_close(d);
	return 0;
}

/* CSV: per pair a `pair` line (base, cand: the paths; jaccard,
 * shared_types), then a `type_only_in_base`/`_cand` line per type (field:
 * "pcomm|comm"). */
static int renamed_csv(struct ctx *x)
{
	struct ctp_table *t = x->csv;
	size_t shown = renamed_shown(x);
	if (!x->ren)
		return 0;
	for (size_t i = 0; i < shown; i++) {
		const struct ctp_rename_pair *p = ctp_rename_at(x->ren, i);
		char gk[2048];
		snprintf(gk, sizeof(gk), "%s -> %s", p->path[0], p->path[1]);
		ctp_table_text(t, "renamed");
		ctp_table_text(t, gk);
		ctp_table_text(t, "renamed");
		ctp_table_numf(t, "%" PRIu32, p->threads[0]);
		ctp_table_numf(t, "%" PRIu32, p->threads[1]);
		ctp_table_skip(t, 3);
		ctp_table_text(t, p->path[0]);
		ctp_table_text(t, p->path[1]);
		ctp_table_skip(t, 11);
		ctp_table_text(t, "pair");
		ctp_table_numf(t, "%.4f", p->jaccard);
		ctp_table_numf(t, "%" PRIu32, p->shared);
		for (int k = 0; k < 2; k++)
			for (uint32_t j = 0; j < p->n_only[k]; j++) {
				struct ctp_bytes pc, c;
				ctp_rename_type(x->ren, p->only[k][j], &pc, &c);
				ctp_table_text(t, "renamed");
				ctp_table_text(t, gk);
				ctp_table_text(t, "renamed");
				ctp_table_skip(t, 4);
				ctp_table_textf(t, "%.*s|%.*s", (int)pc.len,
						pc.ptr, (int)c.len, c.ptr);
				ctp_table_skip(t, 13);
				ctp_table_textf(t, "type_only_in_%s",
						k ? "cand" : "base");
				ctp_table_skip(t, 2);
			}
	}
	csv_more(t, "renamed", ctp_rename_count(x->ren) - shown);
	return 0;
}

/* ---- Host and PSI host fields ---- */

/*
 * A host value for humans: a number in the unit its field declares
 * ("2.00 MiB", "1,234"), else the diff's own text (exact numbers, strings,
 * cpu lists, "unknown"). Returns true, with the number in *num, for a
 * number with a unit. JSON and CSV keep the diff's exact text.
 */
static bool host_human(struct ctx *x, int k, const char *key, const char *text,
		       char *buf, size_t n, long double *num)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(x->snap[k], key);
	struct ctp_value v = {.type = CTP_VALUE_ABSENT};
	if (f && f->unit != CTP_UNIT_NONE && f->scope == CTP_SCOPE_HOST)
		v = ctp_snap_get(x->snap[k], f, 0);
	if (v.type == CTP_TYPE_U64 || v.type == CTP_TYPE_I64) {
		ctp_render_value(f->unit, &v, buf, n);
		*num = v.type == CTP_TYPE_U64 ? (long double)v.u64
					      : (long double)v.i64;
		return true;
	}
	snprintf(buf, n, "%s", text);
	return false;
}

/* One host diff line for the table; numbers with a unit in it and, when
 * both sides have one in the same unit, the change ("+6.04 ms"), which
 * also tells apart two values that round to the same text. */
static void host_line(struct ctx *x, const struct ctp_hostdiff_line *l)
{
	char b[2][256], d[80] = "";
	long double v[2];
	bool num0 =
		host_human(x, 0, l->key, l->before, b[0], sizeof(b[0]), &v[0]);
	bool num1 =
		host_human(x, 1, l->key, l->after, b[1], sizeof(b[1]), &v[1]);
	const struct ctp_snap_field *f0 =
		ctp_snap_field_find(x->snap[0], l->key);
	const struct ctp_snap_field *f1 =
		ctp_snap_field_find(x->snap[1], l->key);
	if (num0 && num1 && f0->unit == f1->unit) {
		char t[64];
		human_delta(t, sizeof(t), v[1] - v[0], f1->unit);
		snprintf(d, sizeof(d), " (%s)", t);
	}
	fprintf(x->out, "  %s: %s -> %s%s\n", l->key, b[0], b[1], d);
}

static int host_table(struct ctx *x, const struct ctp_hostdiff *d)
{
	fprintf(x->out, "\nHost: %zu differences (BASE -> CAND)\n", d->n);
	for (size_t i = 0; i < d->n; i++)
		host_line(x, &d->lines[i]);
	return 0;
}

/* The host's differences: a table of key, base and cand (null: absent on
 * that side). */
static int host_json(struct ctx *x, const struct ctp_hostdiff *d)
{
	static const struct ctp_table_col cols[] = {
		{"key", 0, 0, 0}, {"base", 0, 0, 0}, {"cand", 0, 0, 0}};
	struct ctp_table *t = ctp_table_new_cols(CTP_TABLE_GRID, cols, 3);
	int r = t ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < d->n; i++) {
		const struct ctp_hostdiff_line *l = &d->lines[i];
		r = ctp_table_text(t, l->key);
		if (r == 0)
			r = l->before_absent ? ctp_table_absent(t)
					     : ctp_table_text(t, l->before);
		if (r == 0)
			r = l->after_absent ? ctp_table_absent(t)
					    : ctp_table_text(t, l->after);
	}
	if (r == 0)
		ctp_table_doc_table(&x->doc, "host", t);
	ctp_table_free(t);
	return r;
}

static int host_csv(struct ctx *x, const struct ctp_hostdiff *d)
{
	struct ctp_table *t = x->csv;

	for (size_t i = 0; i < d->n; i++) {
		ctp_table_text(t, "host");
		ctp_table_skip(t, CSV_FIELD - 1);
		ctp_table_text(t, d->lines[i].key);
		if (d->lines[i].before_absent)
			ctp_table_absent(t);
		else
			ctp_table_text(t, d->lines[i].before);
		if (d->lines[i].after_absent)
			ctp_table_absent(t);
		else
			ctp_table_text(t, d->lines[i].after);
		ctp_table_skip(t, 2);
		ctp_table_numf(t, "1"); /* changed */
		ctp_table_skip(t, CSV_NCOLS - 13);
	}
	return 0;
}

static int print_host(struct ctx *x)
{
	struct ctp_hostdiff_opts ho = {
		.include = (const char *const *)x->o->r.globs,
		.n_include = x->o->r.n_globs,
		.exclude_section = PSI_SECTION,
	};
	struct ctp_hostdiff *d;

	if (ctp_hostdiff_new(x->snap[0], x->snap[1], &ho, &d) < 0)
		return -ENOMEM;
	int r = x->w->host(x, d);
	ctp_hostdiff_free(d);
	return r;
}

/* The psi.* host fields as one joined row, each value an aggregate of one. */
static int collect_fields_host(struct ctx *x, struct gsec *s)
{
	struct field_filter w = {.host_psi = true};
	if (pair_fields(x, s, &w) < 0)
		return -ENOMEM;
	s->aggs = calloc(2 * s->nfp + 1, sizeof(*s->aggs));
	if (!s->aggs)
		return -ENOMEM;
	for (size_t j = 0; j < s->nfp; j++)
		for (int k = 0; k < 2; k++) {
			struct ctp_agg *a = &s->aggs[2 * j + (size_t)k];
			if (!s->fp[j].f[k])
				continue;
			a->v = ctp_snap_value(x->snap[k], s->fp[j].f[k], 0);
			a->n_rows = 1;
			a->n_measured = a->v.type != CTP_VALUE_ABSENT;
			s->fp[j].col[k] = a;
		}
	return 0;
}

/* The psi.* host fields with their deltas. */
/* Field j of the host's PSI fields, BASE against CAND. */
static void psi_cell(struct gsec *s, size_t j, struct cmp *c, char *d,
		     size_t dlen, char *pc, size_t pclen)
{
	struct jrow r = {.idx = {0, 0}, .rank = 2};

	compare_cell(s, &r, &s->fp[j], c);
	human_change(c, any_f(&s->fp[j])->unit, d, dlen, pc, pclen);
}

static int psi_host_table(struct ctx *x, struct gsec *s)
{
	static const char *const drop[] = {"<12", "%", "BASE", NULL};
	static const char *const titles[] = {"FIELD", "BASE", "CAND", "DELTA",
					     "%"};
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	int ret = t ? 0 : -ENOMEM;

	for (size_t i = 0; i < 5 && ret >= 0; i++)
		ret = ctp_table_add_col(t, titles[i], i ? CTP_TABLE_RIGHT : 0);
	fprintf(x->out, "\nPSI (host): %zu fields\n", s->nfp);
	for (size_t j = 0; j < s->nfp && ret >= 0; j++) {
		struct cmp c;
		char d[400], pc[64];
		psi_cell(s, j, &c, d, sizeof(d), pc, sizeof(pc));
		const char *cells[] = {s->fp[j].name, c.h[0], c.h[1], d, pc};
		ret = ctp_table_texts(t, cells, 5);
	}
	if (ret >= 0) {
		ctp_table_fit(t, x->columns, drop);
		ctp_table_print(t, x->out, x->color);
	}
	ctp_table_free(t);
	return ret < 0 ? -ENOMEM : 0;
}

static int psi_host_json(struct ctx *x, struct gsec *s)
{
	struct ctp_table_doc *d = &x->doc;
	ctp_table_doc_open(d, "psi_host", '{');
	for (size_t j = 0; j < s->nfp; j++) {
		struct cmp c;
		char dl[400], pc[64];
		psi_cell(s, j, &c, dl, sizeof(dl), pc, sizeof(pc));
		json_cmp(d, s->fp[j].name, &c);
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
	return 0;
}

static int psi_host_csv(struct ctx *x, struct gsec *s)
{
	for (size_t j = 0; j < s->nfp; j++) {
		struct cmp c;
		char d[400], pc[64];
		psi_cell(s, j, &c, d, sizeof(d), pc, sizeof(pc));
		ctp_table_text(x->csv, "psi");
		ctp_table_skip(x->csv, CSV_FIELD - 1);
		csv_cmp(x->csv, s->fp[j].name, &c);
		ctp_table_skip(x->csv, CSV_NCOLS - CSV_TAIL);
	}
	return 0;
}

static int print_psi_host(struct ctx *x)
{
	struct gsec s = {0};
	int ret = collect_fields_host(x, &s) < 0 ? -ENOMEM : 0;

	if (ret == 0)
		ret = x->w->psi_host(x, &s);
	free(s.fp);
	free(s.aggs);
	return ret;
}

/* ---- Plugins and read failures ---- */

/*
 * The kernel-config hint `show` prints: missing (ENOENT) gated files make
 * half or more of all read failures. Into buf; false when it does not fire.
 */
static bool gate_hint(const struct ctp_snap_readfail *rf, char *buf, size_t n)
{
	uint64_t total = 0, gated = 0;
	size_t o = 0, nopts = 0;
	for (size_t i = 0; i < rf->n_files; i++) {
		total += rf->failures[i];
		if (rf->gate[i])
			gated += rf->missing[i];
	}
	if (!gated || gated < total - gated)
		return false;
#define ADD(...)                                                               \
	do {                                                                   \
		if (o < n)                                                     \
			o += (size_t)snprintf(buf + o, n - o, __VA_ARGS__);    \
	} while (0)
	ADD("%" PRIu64 " of %" PRIu64
	    " read failures are missing files that exist only with ",
	    gated, total);
	for (size_t i = 0; i < rf->n_files; i++) {
		size_t j;
		if (!rf->gate[i] || !rf->missing[i])
			continue;
		for (j = 0; j < i; j++)
			if (rf->gate[j] && rf->missing[j] &&
			    !strcmp(rf->gate[j], rf->gate[i]))
				break;
		if (j < i)
			continue;
		ADD("%s%s (", nopts++ ? " / " : "", rf->gate[i]);
		for (j = i; j < rf->n_files; j++)
			if (rf->gate[j] && rf->missing[j] &&
			    !strcmp(rf->gate[j], rf->gate[i]))
				ADD("%s%s", j > i ? ", " : "", rf->file[j]);
		ADD(")");
	}
	ADD("; this kernel was probably built without %s",
	    nopts > 1 ? "them" : "it");
#undef ADD
	return true;
}

static const struct ctp_snap_plugin *plugin_find(const struct ctp_snap *s,
						 const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);
	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		if (!strcmp(p[i].name, name))
			return &p[i];
	return NULL;
}

static bool summary_get(const struct ctp_snap_plugin *p, const char *name,
			uint64_t *v)
{
	for (size_t i = 0; p && i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name)) {
			*v = p->summary[i];
			return true;
		}
	return false;
}

static const char *status_of(const struct ctp_snap_plugin *p)
{
	const char *s = p ? ctp_status_name(p->status) : NULL;
	return !p ? "-" : s ? s : "unknown";
}

/* "a -> b (+d)", or "a" when equal; "-" for a side without it. */
static void pair_text(char *buf, size_t n, bool ha, uint64_t a, bool hb,
		      uint64_t b)
{
	char x[32] = "-", y[32] = "-";
	if (ha)
		ctp_render_count(x, sizeof(x), a);
	if (hb)
		ctp_render_count(y, sizeof(y), b);
	if (ha && hb && a == b)
		snprintf(buf, n, "%s", x);
	else if (ha && hb)
		snprintf(buf, n, "%s -> %s (%s%" PRId64 ")", x, y,
			 b > a ? "+" : "", (int64_t)(b - a));
	else
		snprintf(buf, n, "%s -> %s", x, y);
}

/* One plugin on both sides, with the union of its summary counters'
 * names in order. */
struct plugin_pair {
	const char *name;
	const struct ctp_snap_plugin *p[2];
	const char *sn[2 * 64];
	size_t ns;
};

static void plugin_pair_init(const struct ctx *x, const char *name,
			     struct plugin_pair *pp)
{
	pp->name = name;
	pp->ns = 0;
	for (int k = 0; k < 2; k++)
		pp->p[k] = plugin_find(x->snap[k], name);
	for (int k = 0; k < 2; k++)
		for (size_t s = 0; pp->p[k] && s < pp->p[k]->n_summary; s++) {
			const char *nm = pp->p[k]->summary_name[s];
			size_t j;
			for (j = 0; j < pp->ns && strcmp(pp->sn[j], nm); j++)
				;
			if (j == pp->ns &&
			    pp->ns < sizeof(pp->sn) / sizeof(pp->sn[0]))
				pp->sn[pp->ns++] = nm;
		}
}

static void plugin_table(struct ctx *x, const struct plugin_pair *pp,
			 bool first)
{
	(void)first;
	FILE *out = x->out;
	const struct ctp_snap_plugin *const *p = pp->p;
	const char *s0 = status_of(p[0]), *s1 = status_of(p[1]);
	char t[256];
	fprintf(out, "  %s: %s%s%s", pp->name, s0, strcmp(s0, s1) ? " -> " : "",
		strcmp(s0, s1) ? s1 : "");
	pair_text(t, sizeof(t), p[0], p[0] ? p[0]->calls : 0, p[1],
		  p[1] ? p[1]->calls : 0);
	fprintf(out, "; calls %s", t);
	pair_text(t, sizeof(t), p[0], p[0] ? p[0]->errors : 0, p[1],
		  p[1] ? p[1]->errors : 0);
	fprintf(out, "; errors %s\n", t);
	for (size_t s = 0; s < pp->ns; s++) {
		uint64_t a = 0, b = 0;
		bool ha = summary_get(p[0], pp->sn[s], &a),
		     hb = summary_get(p[1], pp->sn[s], &b);
		pair_text(t, sizeof(t), ha, a, hb, b);
		fprintf(out, "    %s: %s\n", pp->sn[s], t);
	}
	for (int k = 0; k < 2; k++)
		if (p[k] && p[k]->hint &&
		    (k == 0 || !p[0] || !p[0]->hint ||
		     strcmp(p[0]->hint, p[k]->hint)))
			fprintf(out, "    hint (%s): %s\n", k ? "CAND" : "BASE",
				ctp_render_escape(p[k]->hint,
						  strlen(p[k]->hint), 400, t,
						  sizeof(t)));
}

/* `{"base": a, "cand": b}` of two optional numbers. */
static void json_pair_u64(struct ctp_table_doc *d, const char *key, bool ha,
			  uint64_t a, bool hb, uint64_t b)
{
	ctp_table_doc_open(d, key, '{');
	json_u64_or_null(d, "base", ha, a);
	json_u64_or_null(d, "cand", hb, b);
	ctp_table_doc_close(d);
}

/* `{"base": a, "cand": b}` of two optional strings. */
static void json_pair_text(struct ctp_table_doc *d, const char *key,
			   const char *a, const char *b)
{
	ctp_table_doc_open(d, key, '{');
	ctp_table_doc_text(d, "base", a);
	ctp_table_doc_text(d, "cand", b);
	ctp_table_doc_close(d);
}

static void plugin_json(struct ctx *x, const struct plugin_pair *pp, bool first)
{
	struct ctp_table_doc *d = &x->doc;
	const struct ctp_snap_plugin *const *p = pp->p;
	(void)first;
	ctp_table_doc_open(d, NULL, '{');
	ctp_table_doc_text(d, "name", pp->name);
	json_pair_text(d, "status", p[0] ? status_of(p[0]) : NULL,
		       p[1] ? status_of(p[1]) : NULL);
	json_pair_u64(d, "calls", p[0], p[0] ? p[0]->calls : 0, p[1],
		      p[1] ? p[1]->calls : 0);
	json_pair_u64(d, "errors", p[0], p[0] ? p[0]->errors : 0, p[1],
		      p[1] ? p[1]->errors : 0);
	ctp_table_doc_open(d, "summary", '{');
	for (size_t s = 0; s < pp->ns; s++) {
		uint64_t a = 0, b = 0;
		bool ha = summary_get(p[0], pp->sn[s], &a),
		     hb = summary_get(p[1], pp->sn[s], &b);
		ctp_table_doc_open(d, pp->sn[s], '{');
		json_u64_or_null(d, "base", ha, a);
		json_u64_or_null(d, "cand", hb, b);
		if (ha && hb)
			ctp_table_doc_numf(d, "delta", "%.0Lf",
					   (long double)b - (long double)a);
		else
			ctp_table_doc_null(d, "delta");
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
	json_pair_text(d, "hint", p[0] ? p[0]->hint : NULL,
		       p[1] ? p[1]->hint : NULL);
	ctp_table_doc_close(d);
}

static void plugin_csv(struct ctx *x, const struct plugin_pair *pp, bool first)
{
	(void)first;
	struct ctp_table *t = x->csv;
	for (size_t s = 0; s < pp->ns; s++) {
		uint64_t a = 0, b = 0;
		bool ha = summary_get(pp->p[0], pp->sn[s], &a),
		     hb = summary_get(pp->p[1], pp->sn[s], &b);
		ctp_table_text(t, "plugins");
		ctp_table_text(t, pp->name);
		ctp_table_skip(t, CSV_FIELD - 2);
		ctp_table_text(t, pp->sn[s]);
		CSV_NUM(t, ha, "%" PRIu64, a);
		CSV_NUM(t, hb, "%" PRIu64, b);
		CSV_NUM(t, ha && hb, "%.0Lf", (long double)b - (long double)a);
		ctp_table_absent(t);
		ctp_table_numf(t, "%d", !(ha && hb && a == b));
		ctp_table_skip(t, CSV_NCOLS - 13);
	}
}

static void plugins_begin_table(struct ctx *x, size_t n)
{
	fprintf(x->out, "\nPlugins:%s\n", n ? "" : " none");
}

static void plugins_begin_json(struct ctx *x, size_t n)
{
	(void)n;
	ctp_table_doc_open(&x->doc, "plugins", '[');
}

static void plugins_end_table(struct ctx *x, const char *const hint[2])
{
	for (int k = 0; k < 2; k++)
		if (hint[k])
			fprintf(x->out, "  read failures (%s) hint: %s\n",
				k ? "CAND" : "BASE", hint[k]);
}

static void plugins_end_json(struct ctx *x, const char *const hint[2])
{
	ctp_table_doc_close(&x->doc);
	json_pair_text(&x->doc, "read_failure_hint", hint[0], hint[1]);
}

static void plugin_none(struct ctx *x, size_t n)
{
	(void)x;
	(void)n;
}

static void plugins_end_none(struct ctx *x, const char *const hint[2])
{
	(void)x;
	(void)hint;
}

/* Every plugin of either side: status, calls, errors, summary counters
 * and hints, then the read-failure hint of each side. */
static int print_plugins(struct ctx *x)
{
	size_t n0 = ctp_snap_n_plugins(x->snap[0]),
	       n1 = ctp_snap_n_plugins(x->snap[1]), np = 0;
	const char **names = calloc(n0 + n1 + 1, sizeof(*names));
	struct plugin_pair *pp = malloc(sizeof(*pp));
	char h[2][2048];
	const char *hint[2];

	if (!names || !pp) {
		free(names);
		free(pp);
		return -ENOMEM;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < ctp_snap_n_plugins(x->snap[k]); i++) {
			const char *nm = ctp_snap_plugins(x->snap[k])[i].name;
			size_t j;
			for (j = 0; j < np && strcmp(names[j], nm); j++)
				;
			if (j == np)
				names[np++] = nm;
		}
	x->w->plugins_begin(x, np);
	for (size_t i = 0; i < np; i++) {
		plugin_pair_init(x, names[i], pp);
		x->w->plugin(x, pp, i == 0);
	}
	for (int k = 0; k < 2; k++)
		hint[k] = gate_hint(ctp_snap_readfail(x->snap[k]), h[k],
				    sizeof(h[k]))
				  ? h[k]
				  : NULL;
	x->w->plugins_end(x, hint);
	free(names);
	free(pp);
	return 0;
}

/* ---- Header ---- */

/* Field names (all scopes, --fields applied) present on side k only. */
static int only_in(struct ctx *x, int k, const char ***ret, size_t *n)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(x->snap[k]);
	size_t nf = ctp_snap_n_fields(x->snap[k]);
	const char **v = calloc(nf + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < nf; i++)
		if (selected(x->o, fs[i].name) &&
		    !ctp_snap_field_find(x->snap[!k], fs[i].name))
			v[(*n)++] = fs[i].name;
	*ret = v;
	return 0;
}

const char *const ctp_compare_mode_names[4] = {"full", "delta", "percent",
					       "arrow"};
const char *const ctp_compare_fmt_names[3] = {"table", "json", "csv"};
const char *const ctp_compare_section_names[5] = {"threads", "cgroups", "host",
						  "psi", "plugins"};

/* The shown counters of reaped children, which have no rate: what they
 * count instead, once. */
static void header_reaped(struct ctx *x)
{
	size_t n = 0;
	for (int k = 1; k >= 0; k--) {
		const struct ctp_snap_field *fs = ctp_snap_fields(x->snap[k]);
		for (size_t i = 0; i < ctp_snap_n_fields(x->snap[k]); i++) {
			char esc[512];
			if (!ctp_interval_reaped(&fs[i]) ||
			    !selected(x->o, fs[i].name) ||
			    (k == 0 &&
			     ctp_snap_field_find(x->snap[1], fs[i].name)))
				continue;
			fprintf(x->out, "%s%s",
				n++ ? ", "
				    : "No rate or %CPU for reaped children's "
				      "whole lives (added as each was reaped, "
				      "not time in the interval): ",
				ctp_render_escape(fs[i].name,
						  strlen(fs[i].name), 128, esc,
						  sizeof(esc)));
		}
	}
	if (n)
		fputc('\n', x->out);
}

/* The interval, and how tasks were matched: once, so that every counter
 * below is read the same way. */
static void header_interval(struct ctx *x)
{
	char t[64];
	if (x->interval > 0) {
		uint64_t ns = (uint64_t)(x->interval * 1e9L + 0.5L);
		ctp_render_mag(t, sizeof(t), ns, CTP_UNIT_NS);
		fprintf(x->out,
			"Interval: %s (%s); rates are per second of it\n", t,
			x->interval_clock);
	} else {
		fprintf(x->out, "Interval: unknown (CAND not after BASE); no "
				"rates\n");
	}
	if (!x->id->ok)
		fprintf(x->out,
			"No task identity (%s): counters are CAND - BASE "
			"per group\n",
			x->id->why);
	header_reaped(x);
}

static void header_table(struct ctx *x, const char **const only[2],
			 const size_t nonly[2])
{
	FILE *out = x->out;

	for (int k = 0; k < 2; k++) {
		const struct ctp_snap_header *h = ctp_snap_header(x->snap[k]);
		char t[64], esc[512];
		ctp_render_time(h->start_realtime_ns, t, sizeof(t));
		fprintf(out, "%s  %s (%s %s, %s%s%s)\n", k ? "CAND:" : "BASE:",
			ctp_render_escape(x->path[k], strlen(x->path[k]), 200,
					  esc, sizeof(esc)),
			*h->tool_name ? h->tool_name : "?",
			*h->tool_version ? h->tool_version : "?", t,
			h->hostname ? ", host " : "",
			h->hostname ? h->hostname : "");
	}
	header_interval(x);
	struct ctp_coverage cov;
	if (x->o->coverage &&
	    ctp_coverage_compute(x->iv, x->o->coverage, &cov) == 0) {
		ctp_coverage_print(out, &cov, 0);
		ctp_coverage_free(&cov);
	}
	fprintf(out, "Grouped by %s%s; sorted by %s; mode %s\n",
		x->o->r.group_by,
		x->o->r.spec.no_normalize ? " (names not normalized)" : "",
		x->sort, ctp_compare_mode_names[x->o->mode]);
	for (int k = 0; k < 2; k++) {
		if (!nonly[k])
			continue;
		fprintf(out, "Fields only in %s:", k ? "CAND" : "BASE");
		for (size_t i = 0; i < nonly[k]; i++)
			fprintf(out, "%s %s", i ? "," : "", only[k][i]);
		fputc('\n', out);
	}
}

/* "coverage": the table's coverage line as numbers (seconds), or null. */
static void coverage_json(struct ctx *x)
{
	struct ctp_coverage c;
	struct ctp_table_doc *d = &x->doc;
	if (!x->o->coverage ||
	    ctp_coverage_compute(x->iv, x->o->coverage, &c) < 0 || !c.ok ||
	    c.host < 0) {
		if (x->o->coverage && c.ok)
			ctp_coverage_free(&c);
		ctp_table_doc_null(d, "coverage");
		return;
	}
	ctp_table_doc_open(d, "coverage", '{');
	ctp_table_doc_numf(d, "cpu_s", "%.6f", c.host);
	ctp_table_doc_numf(d, "threads_s", "%.6f", c.threads);
	if (c.exited >= 0) {
		ctp_table_doc_numf(d, "exited_s", "%.6f", c.exited);
		ctp_table_doc_numf(d, "exited_tasks", "%zu", c.n_exited);
	} else {
		ctp_table_doc_null(d, "exited_s");
		ctp_table_doc_null(d, "exited_tasks");
	}
	ctp_table_doc_open(d, "cgroups", '[');
	for (size_t i = 0; i < c.n_cg; i++) {
		if (!c.cg[i].path[0])
			continue; /* not a cgroup v2 path */
		ctp_table_doc_open(d, NULL, '{');
		ctp_table_doc_text(d, "path", c.cg[i].path);
		ctp_table_doc_numf(d, "cpu_s", "%.6f", c.cg[i].usage);
		ctp_table_doc_numf(d, "threads_s", "%.6f", c.cg[i].threads);
		if (c.exited >= 0)
			ctp_table_doc_numf(d, "exited_s", "%.6f",
					   c.cg[i].exited);
		else
			ctp_table_doc_null(d, "exited_s");
		ctp_table_doc_close(d);
	}
	ctp_table_doc_close(d);
	ctp_table_doc_close(d);
	ctp_coverage_free(&c);
}

static void header_json(struct ctx *x, const char **const only[2],
			const size_t nonly[2])
{
	struct ctp_table_doc *d = &x->doc;

	ctp_table_doc_init(d, x->out);
	ctp_table_doc_open(d, NULL, '{');
	for (int k = 0; k < 2; k++) {
		const struct ctp_snap_header *h = ctp_snap_header(x->snap[k]);
		ctp_table_doc_open(d, k ? "cand" : "base", '{');
		ctp_table_doc_text(d, "path", x->path[k]);
		ctp_table_doc_text(d, "tool_version", h->tool_version);
		ctp_table_doc_text(d, "hostname", h->hostname);
		ctp_table_doc_numf(d, "start_realtime_ns", "%" PRIu64,
				   h->start_realtime_ns);
		json_u64_or_null(d, "start_boottime_ns",
				 h->start_boottime_ns != 0,
				 h->start_boottime_ns);
		ctp_table_doc_close(d);
	}
	if (x->interval > 0) {
		ctp_table_doc_numf(d, "interval_s", "%.9Lf", x->interval);
		ctp_table_doc_text(d, "interval_clock", x->interval_clock);
	} else {
		ctp_table_doc_null(d, "interval_s");
		ctp_table_doc_null(d, "interval_clock");
	}
	ctp_table_doc_bool(d, "identity", x->id->ok);
	coverage_json(x);
	ctp_table_doc_text(d, "group_by", x->o->r.group_by);
	ctp_table_doc_bool(d, "normalize", !x->o->r.spec.no_normalize);
	ctp_table_doc_text(d, "sort", x->sort);
	ctp_table_doc_text(d, "order", x->o->asc ? "asc" : "desc");
	for (int k = 0; k < 2; k++) {
		ctp_table_doc_open(
			d, k ? "fields_only_in_cand" : "fields_only_in_base",
			'[');
		for (size_t i = 0; i < nonly[k]; i++)
			ctp_table_doc_text(d, NULL, only[k][i]);
		ctp_table_doc_close(d);
	}
}

/* The document's end: its outer object closed, a line end. */
static void end_json(struct ctx *x)
{
	ctp_table_doc_close(&x->doc);
	putc('\n', x->out);
}

/* --format csv: the table every part adds its lines to, streamed. */
static int csv_begin(struct ctx *x)
{
	int r = 0;
	if (!(x->csv = ctp_table_new(CTP_TABLE_GRID)))
		return -ENOMEM;
	for (size_t c = 0; c < CSV_NCOLS && r >= 0; c++)
		r = ctp_table_add_col(x->csv, csv_cols[c], 0);
	if (r >= 0)
		ctp_table_stream(x->csv, x->out, CTP_TABLE_CSV);
	return r < 0 ? r : 0;
}

/* The fields only one side has. */
static void header_csv(struct ctx *x, const char **const only[2],
		       const size_t nonly[2])
{
	struct ctp_table *t = x->csv;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < nonly[k]; i++) {
			ctp_table_textf(t, "only_in_%s", k ? "cand" : "base");
			ctp_table_skip(t, CSV_FIELD - 1);
			ctp_table_text(t, only[k][i]);
			ctp_table_skip(t, CSV_NCOLS - CSV_FIELD - 1);
		}
}

static int print_header(struct ctx *x)
{
	const char **only[2] = {NULL, NULL};
	size_t nonly[2] = {0, 0};

	for (int k = 0; k < 2; k++)
		if (only_in(x, k, &only[k], &nonly[k]) < 0) {
			free(only[0]);
			return -ENOMEM;
		}
	x->w->header(x, (const char **const *)only, nonly);
	free(only[0]);
	free(only[1]);
	return 0;
}

/* ---- The command ---- */

static size_t term_columns(void)
{
	const char *c = getenv("COLUMNS");
	uint64_t v;
	if (c && ctp_parse_u64_str(c, &v) == 0 && v >= 20 && v < 100000)
		return (size_t)v;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 0;
}

static bool has_cgroup_axis(const struct ctp_group_spec *s)
{
	return ctp_group_spec_cgroup_part(s) >= 0;
}

static int gsec_table(struct ctx *x, struct gsec *s, bool table_if_empty)
{
	return s->nfp || table_if_empty ? print_gsec_table(x, s) : 0;
}

static int gsec_json(struct ctx *x, struct gsec *s, bool table_if_empty)
{
	(void)table_if_empty;
	print_gsec_json(x, s);
	return 0;
}

static int gsec_csv(struct ctx *x, struct gsec *s, bool table_if_empty)
{
	(void)table_if_empty;
	print_gsec_csv(x, s);
	return 0;
}

/* The three formats. */
static const struct writer writers[] = {
	[CTP_COMPARE_TABLE] = {.terminal = true,
			       .header = header_table,
			       .gsec = gsec_table,
			       .host = host_table,
			       .psi_host = psi_host_table,
			       .plugins_begin = plugins_begin_table,
			       .plugin = plugin_table,
			       .plugins_end = plugins_end_table,
			       .renamed = renamed_table},
	[CTP_COMPARE_JSON] = {.empty_sections = true,
			      .end = end_json,
			      .header = header_json,
			      .gsec = gsec_json,
			      .host = host_json,
			      .psi_host = psi_host_json,
			      .plugins_begin = plugins_begin_json,
			      .plugin = plugin_json,
			      .plugins_end = plugins_end_json,
			      .renamed = renamed_json},
	[CTP_COMPARE_CSV] = {.header = header_csv,
			     .gsec = gsec_csv,
			     .host = host_csv,
			     .psi_host = psi_host_csv,
			     .plugins_begin = plugin_none,
			     .plugin = plugin_csv,
			     .plugins_end = plugins_end_none,
			     .renamed = renamed_csv},
};

static int print_gsec(struct ctx *x, struct gsec *s, bool table_if_empty)
{
	return x->w->gsec(x, s, table_if_empty);
}

/*
 * --sort into x->sort_kind and x->sort_field: "rel", "delta:FIELD",
 * "rate:FIELD" (the same order: by the change),
 * "FIELD" (its CAND value); without --sort, the command's default. Returns
 * 0, or -EINVAL after a message for a field in neither snapshot or one
 * that has no delta.
 */
static int resolve_sort(struct ctx *x)
{
	const char *s = x->o->r.sort;
	const struct ctp_snap_field *f[2];

	if (!s && x->o->default_sort)
		s = x->o->default_sort(x->snap, x->sort_buf,
				       sizeof(x->sort_buf));
	x->sort = s ? s : "rel";
	x->sort_kind = SORT_REL;
	if (!s || !strcmp(s, "rel"))
		return 0;
	x->sort_kind = SORT_VALUE;
	x->sort_field = s;
	if (!strncmp(s, "delta:", 6) || !strncmp(s, "rate:", 5)) {
		x->sort_kind = s[0] == 'd' ? SORT_DELTA : SORT_RATE;
		x->sort_field = strchr(s, ':') + 1;
	}
	for (int k = 0; k < 2; k++)
		f[k] = ctp_snap_field_find(x->snap[k], x->sort_field);
	if (!f[0] && !f[1]) {
		fprintf(stderr,
			PROG ": --sort %s: no such field in either snapshot\n",
			s);
		return -EINVAL;
	}
	if (x->sort_kind >= SORT_DELTA && categorical(f[0] ? f[0] : f[1])) {
		fprintf(stderr, PROG ": --sort %s: %s has no delta\n", s,
			x->sort_field);
		return -EINVAL;
	}
	return 0;
}

/* The interval model (interval.h) and the time between the captures. */
static int set_interval(struct ctx *x)
{
	if (ctp_interval_new(x->snap[0], x->snap[1], x->ex, &x->iv) < 0)
		return -ENOMEM;
	x->id = ctp_interval_ident(x->iv);
	x->interval = (long double)ctp_interval_seconds(x->iv);
	x->interval_clock = x->interval > 0 ? x->id->clock : NULL;
	return 0;
}

/*
 * Renamed cgroups (rename.h) over the cgroup grouping cspec, when a
 * section keys groups by cgroup and --no-rename was not given: into
 * x->ren. Returns 0 or what ctp_groups_new or ctp_rename_new said, with a
 * message in err.
 */
static int build_rename(struct ctx *x, const struct ctp_group_spec *cspec,
			char *err, size_t errlen)
{
	const struct ctp_compare_opts *o = x->o;
	bool want = (o->sections & S_THREADS && has_cgroup_axis(&o->r.spec)) ||
		    (o->sections & (S_CGROUPS | S_PSI));
	x->ren_opts = (struct ctp_rename_opts){
		.min_jaccard = o->rename.jaccard_set ? o->rename.min_jaccard
						     : CTP_RENAME_MIN_JACCARD,
		.min_shared = o->rename.shared_set ? o->rename.min_shared
						   : CTP_RENAME_MIN_SHARED,
	};
	if (o->rename.off || !want)
		return 0;
	for (int k = 0; k < 2; k++) {
		int r = ctp_groups_new(x->snap[k], cspec, &x->ren_g[k], err,
				       errlen);
		if (r < 0) {
			size_t l = strlen(err);
			snprintf(err + l, errlen - l, " (in %s)", x->path[k]);
			return r;
		}
	}
	if (ctp_rename_new(x->ren_g, (size_t)ctp_group_spec_cgroup_part(cspec),
			   &x->ren_opts, &x->ren) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The renamed-cgroups section (JSON: null when renaming did not apply). */
static int print_renamed(struct ctx *x)
{
	return x->w->renamed(x);
}

static int run(struct ctx *x)
{
	const struct ctp_compare_opts *o = x->o;
	char err[512];
	struct gsec th = {.name = "threads", .title = "Threads"};
	struct gsec cg = {.name = "cgroups", .title = "Cgroups"};
	struct gsec pcg = {.name = "psi_cgroups", .title = "PSI (cgroups)"};
	struct ctp_group_spec cspec = {
		.axes = {CTP_AXIS_CGROUP},
		.n_axes = 1,
		.no_normalize = o->r.spec.no_normalize,
		.flatten = o->r.spec.flatten,
		.n_flatten = o->r.spec.n_flatten,
	};
	int rc = -ENOMEM, r;

	/* A grouping that has a cgroup axis already keys the cgroups. */
	if (has_cgroup_axis(&o->r.spec))
		cspec = o->r.spec;
	if (set_interval(x) < 0)
		goto nomem;
	if ((rc = resolve_sort(x)) < 0)
		goto out;
	rc = -ENOMEM;
	if ((r = build_rename(x, &cspec, err, sizeof(err))) < 0)
		goto fail;
	if ((o->sections & S_THREADS) &&
	    (r = gsec_build(x, &th, &o->r.spec,
			    1u << CTP_SCOPE_THREAD | 1u << CTP_SCOPE_PROCESS,
			    -1, err, sizeof(err))) < 0)
		goto fail;
	if ((o->sections & S_CGROUPS) &&
	    (r = gsec_build(x, &cg, &cspec, 1u << CTP_SCOPE_CGROUP, 0, err,
			    sizeof(err))) < 0)
		goto fail;
	if ((o->sections & S_PSI) &&
	    (r = gsec_build(x, &pcg, &cspec, 1u << CTP_SCOPE_CGROUP, 1, err,
			    sizeof(err))) < 0)
		goto fail;
	if ((o->fmt == CTP_COMPARE_CSV && csv_begin(x) < 0) ||
	    print_header(x) < 0 ||
	    ((o->sections & S_THREADS) && print_gsec(x, &th, true) < 0) ||
	    ((o->sections & S_CGROUPS) && (cg.nfp || x->w->empty_sections) &&
	     print_gsec(x, &cg, true) < 0) ||
	    print_renamed(x) < 0 ||
	    ((o->sections & S_HOST) && print_host(x) < 0) ||
	    ((o->sections & S_PSI) &&
	     (print_psi_host(x) < 0 || print_gsec(x, &pcg, false) < 0)) ||
	    ((o->sections & S_PLUGINS) && print_plugins(x) < 0))
		goto nomem;
	if (x->w->end)
		x->w->end(x);
	if (x->csv && ctp_table_end(x->csv) == -ENOMEM)
		goto nomem;
	if (fflush(x->out) != 0 || ferror(x->out)) {
		rc = errno ? -errno : -EIO;
		fprintf(stderr, PROG ": writing output: %s\n", strerror(-rc));
		goto out;
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, PROG ": --group-by %s: %s\n", o->r.group_by, err);
	rc = r == -ENOMEM ? -ENOMEM : -EINVAL;
	goto out;
nomem:
	fprintf(stderr, PROG ": out of memory\n");
out:
	gsec_free(&th);
	gsec_free(&cg);
	gsec_free(&pcg);
	ctp_interval_free(x->iv);
	x->iv = NULL;
	x->id = NULL;
	ctp_table_free(x->csv);
	x->csv = NULL;
	ctp_rename_free(x->ren);
	x->ren = NULL;
	for (int k = 0; k < 2; k++) {
		ctp_groups_free(x->ren_g[k]);
		x->ren_g[k] = NULL;
	}
	return rc;
}

int ctp_compare_snaps(const struct ctp_compare_opts *o,
		      struct ctp_snap *const snap[2], FILE *out, size_t columns,
		      bool color)
{
	struct ctx x = {.o = o,
			.w = &writers[o->fmt],
			.out = out,
			.color = color,
			.columns = columns};

	struct ctp_exit_sum ex = {0};
	int r = 0;
	for (int k = 0; k < 2; k++) {
		x.path[k] = o->paths[k] ? o->paths[k] : "-";
		x.snap[k] = snap[k];
	}
	/* The coverage line (table) and object (JSON) count them; CSV has
	 * neither. */
	if (o->coverage && o->fmt != CTP_COMPARE_CSV)
		r = ctp_exit_sum_paths(snap[0], snap[1], o->between,
				       o->n_between, o->r.cap, o->coverage,
				       stderr, PROG, &ex);
	x.ex = ex.present ? &ex : NULL;
	if (r == 0)
		r = run(&x);
	ctp_exit_sum_free(&ex);
	return r;
}

int ctp_compare(const struct ctp_compare_opts *o)
{
	const struct writer *w = &writers[o->fmt];
	struct ctp_snap *snap[2] = {NULL, NULL};
	int rc = 0;

	for (int k = 0; k < 2 && rc == 0; k++) {
		char err[512];
		rc = ctp_snap_open(o->paths[k], o->r.cap, &snap[k], err,
				   sizeof(err));
		if (rc < 0) {
			fprintf(stderr, PROG ": %s\n", err);
			/* The reader says -EINVAL for a corrupt file. */
			rc = rc == -EINVAL ? -EBADMSG : rc;
		}
	}
	if (rc == 0) {
		rc = ctp_compare_snaps(
			o, snap, stdout, w->terminal ? term_columns() : 0,
			w->terminal && ctp_color_for(STDOUT_FILENO));
	}
	ctp_snap_free(snap[0]);
	ctp_snap_free(snap[1]);
	return rc;
}
