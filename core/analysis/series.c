/* SPDX-License-Identifier: MIT */
/* Metrics series that are right over time (see series.h). */
#include "series.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "exitsum.h"
#include "interval.h"
#include "openmetrics.h"

/* One group series: exported now, or remembered for when it is again. */
struct entry {
	char *labels;
	long double *acc; /* per counter slot, in the field's unit */
	bool *seen;	  /* per slot: a member had the field */
	size_t n_slots;
	uint64_t exited;
	uint64_t active_ns; /* the last capture it had an increase in */
	uint64_t zero_feed; /* the feed it is first written at: as 0 */
	bool exported;
};

struct ctp_series {
	struct ctp_series_opts o;
	struct ctp_group_spec spec; /* a copy (its strings borrowed) */
	char **rank;		    /* copies of o.rank */
	struct ctp_view *xview;	    /* live counter -> exited fields, a column
				       each (fields[0], exited[]) */
	struct ctp_snap *snap[2];
	struct ctp_exit_sum *ex; /* the interval's (the model borrows it) */
	struct ctp_interval *iv;
	struct ctp_groups *g; /* CAND's, with the exited tasks */
	char **names;	      /* counter slots by field name */
	size_t n_names;
	long *slot_of; /* per CAND field: its slot or -1 */
	struct entry *e;
	size_t n_e;
	struct entry other;
	long *gent;  /* per CAND group: its entry or -1 */
	size_t *exp; /* exported entries, by labels */
	size_t n_exp;
	uint64_t feeds;
	size_t expired, capped;
	uint64_t exited, lost;
	bool exits;
};

/* ---- The pairs of live and exited fields -------------------------------*/

static int pair_add(struct ctp_view *v, const char *live, char *const *exited,
		    size_t n)
{
	for (size_t i = 0; i < v->n_cols; i++)
		if (strcmp(v->cols[i].fields[0], live) == 0)
			return 0; /* the first view's pairing wins */
	struct ctp_view_col *c = realloc(v->cols, (v->n_cols + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	v->cols = c;
	c = &v->cols[v->n_cols];
	memset(c, 0, sizeof(*c));
	v->n_cols++;
	c->src = CTP_VSRC_FIELD;
	if (!(c->id = strdup(live)) || !(c->fields[0] = strdup(live)))
		return -ENOMEM;
	c->n_fields = 1;
	for (size_t k = 0; k < n; k++) {
		if (!(c->exited[k] = strdup(exited[k])))
			return -ENOMEM;
		c->n_exited++;
	}
	return 0;
}

/* A view's columns as pairs: `field:`/`sum:` with as many exited fields
 * pair in order; one exited field for a `field:` or `first:` pairs with
 * each of its fields. */
static int view_pairs(struct ctp_view *x, const struct ctp_view *v)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < v->n_cols; i++) {
		const struct ctp_view_col *c = &v->cols[i];
		if (c->src == CTP_VSRC_IDENT || !c->n_exited)
			continue;
		for (size_t k = 0; r == 0 && k < c->n_fields; k++) {
			if (c->n_exited == c->n_fields)
				r = pair_add(x, c->fields[k], &c->exited[k], 1);
			else if (c->n_exited == 1 && c->src == CTP_VSRC_FIELD)
				r = pair_add(x, c->fields[k], c->exited, 1);
		}
	}
	return r;
}

static int all_views(struct ctp_view *x)
{
	char **names = NULL, **paths = NULL;
	size_t n = 0;
	int r = ctp_view_names(&names, &paths, &n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct ctp_view *v;
		char err[512];
		/* A broken view of the user's costs its pairs only. */
		if (ctp_view_load(paths[i], &v, err, sizeof(err)) < 0)
			continue;
		r = view_pairs(x, v);
		ctp_view_free(v);
	}
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
		free(paths[i]);
	}
	free(names);
	free(paths);
	return r;
}

int ctp_series_new(const struct ctp_series_opts *o, struct ctp_series **ret)
{
	struct ctp_series *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	if (!s->o.ttl_ns)
		s->o.ttl_ns = CTP_SERIES_TTL_DEFAULT_NS;
	if (!s->o.max_series)
		s->o.max_series = CTP_SERIES_MAX_DEFAULT;
	s->o.views = NULL; /* borrowed for the pairs only */
	s->spec = *o->spec;
	s->o.spec = &s->spec;
	int r = -ENOMEM;
	if (!(s->rank = calloc(o->n_rank + 1, sizeof(*s->rank)))) {
		free(s);
		return -ENOMEM;
	}
	s->o.rank = (const char *const *)s->rank;
	for (size_t k = 0; k < o->n_rank; k++)
		if (!(s->rank[k] = strdup(o->rank[k]))) {
			ctp_series_free(s);
			return -ENOMEM;
		}
	if ((s->xview = calloc(1, sizeof(*s->xview))) &&
	    (s->xview->name = strdup("series")) &&
	    (s->other.labels = strdup(CTP_OM_OTHER_LABELS))) {
		r = 0;
		for (size_t i = 0; r == 0 && o->views && i < o->n_views; i++)
			r = view_pairs(s->xview, o->views[i]);
		if (r == 0 && !o->views)
			r = all_views(s->xview);
	}
	if (r < 0) {
		ctp_series_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

static void entry_free(struct entry *e)
{
	free(e->labels);
	free(e->acc);
	free(e->seen);
}

static void exits_free(struct ctp_exit_sum *ex)
{
	if (ex)
		ctp_exit_sum_free(ex);
	free(ex);
}

void ctp_series_free(struct ctp_series *s)
{
	if (!s)
		return;
	ctp_interval_free(s->iv);
	ctp_groups_free(s->g);
	exits_free(s->ex);
	ctp_snap_free(s->snap[0]);
	ctp_snap_free(s->snap[1]);
	for (size_t i = 0; i < s->n_names; i++)
		free(s->names[i]);
	free(s->names);
	for (size_t i = 0; i < s->n_e; i++)
		entry_free(&s->e[i]);
	entry_free(&s->other);
	free(s->e);
	free(s->slot_of);
	free(s->gent);
	free(s->exp);
	ctp_view_free(s->xview);
	for (size_t k = 0; s->rank && s->rank[k]; k++)
		free(s->rank[k]);
	free(s->rank);
	free(s);
}

/* ---- Slots and entries ----------------------------------------------------*/

static bool counted(const struct ctp_snap_field *f)
{
	return (f->scope == CTP_SCOPE_THREAD ||
		f->scope == CTP_SCOPE_PROCESS) &&
	       ctp_interval_counter(f);
}

/* Every counter of snap its slot (new names get new ones) in slot_of. */
static int slots(struct ctp_series *s, const struct ctp_snap *snap,
		 long *slot_of)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		slot_of[i] = -1;
		if (!counted(&fs[i]))
			continue;
		size_t k = 0;
		while (k < s->n_names && strcmp(s->names[k], fs[i].name) != 0)
			k++;
		if (k == s->n_names) {
			char **nn = realloc(s->names,
					    (s->n_names + 1) * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			s->names = nn;
			if (!(nn[k] = strdup(fs[i].name)))
				return -ENOMEM;
			s->n_names++;
		}
		slot_of[i] = (long)k;
	}
	return 0;
}

/* Room in e for every slot. */
static int entry_slots(struct entry *e, size_t n)
{
	if (e->n_slots >= n)
		return 0;
	long double *a = realloc(e->acc, (n + 1) * sizeof(*a));
	if (a)
		e->acc = a;
	bool *b = realloc(e->seen, (n + 1) * sizeof(*b));
	if (b)
		e->seen = b;
	if (!a || !b)
		return -ENOMEM;
	for (size_t k = e->n_slots; k < n; k++)
		e->acc[k] = 0, e->seen[k] = false;
	e->n_slots = n;
	return 0;
}

static long find_entry(const struct ctp_series *s, const char *labels)
{
	for (size_t i = 0; i < s->n_e; i++)
		if (strcmp(s->e[i].labels, labels) == 0)
			return (long)i;
	return -1;
}

static long new_entry(struct ctp_series *s, const char *labels)
{
	struct entry *ne = realloc(s->e, (s->n_e + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	s->e = ne;
	memset(&ne[s->n_e], 0, sizeof(*ne));
	if (!(ne[s->n_e].labels = strdup(labels)))
		return -ENOMEM;
	return (long)s->n_e++;
}

/* ---- One interval ---------------------------------------------------------*/

/* What CAND's group gi changed by in the interval. */
struct delta {
	long double *d; /* per slot */
	bool *any;	/* per slot: a member had a change */
	long double rank;
	bool active;
	uint64_t exited;
};

/* The column of the pairs naming live field name, or NULL. */
static const struct ctp_view_col *pair_of(const struct ctp_series *s,
					  const char *name)
{
	for (size_t i = 0; i < s->xview->n_cols; i++)
		if (strcmp(s->xview->cols[i].fields[0], name) == 0)
			return &s->xview->cols[i];
	return NULL;
}

/* Exited field name, scaled to unit, into xf/xk at *n (room: max). */
static void exit_add(const struct ctp_series *s, const char *name, uint8_t unit,
		     size_t *xf, long double *xk, size_t *n, size_t max)
{
	long j = ctp_exit_sum_field(s->ex, name);
	double sc = j >= 0 && s->ex->unit_set[j]
			    ? ctp_exit_sum_scale(s->ex, (size_t)j, unit)
			    : NAN;
	if (!isnan(sc) && *n < max) {
		xf[*n] = (size_t)j;
		xk[(*n)++] = sc;
	}
}

/*
 * The exited measure pairing CAND's counter f: its exited fields in the
 * exit sum, scaled to f's unit, less BASE's f. A derived sum of counters
 * (procfs.cpu_time = utime + stime) pairs with its terms' exited fields
 * when every term has a pair, so it counts what exited as its terms do.
 * False when f has none, and for every process counter: the kernel adds
 * a reaped process's totals to its reaper's (<tgid>/io, the children's
 * times and faults of stat), so a process's exit is already in a live
 * process's increase, and its last stretch after the capture before is
 * there too; an exit record on top would count it twice (the thread
 * counters, which hold no child, are the ones that take exits).
 */
static bool exit_measure(const struct ctp_series *s,
			 const struct ctp_snap_field *f, size_t *xf,
			 long double *xk, const struct ctp_snap_field **bf,
			 struct ctp_interval_exit_measure *m)
{
	const struct ctp_snap *cand = ctp_interval_snap(s->iv, 1);
	const struct ctp_view_col *c = pair_of(s, f->name);
	size_t n = 0;
	if (!s->ex || f->scope != CTP_SCOPE_THREAD)
		return false;
	if (c) {
		for (size_t k = 0; k < c->n_exited; k++)
			exit_add(s, c->exited[k], f->unit, xf, xk, &n,
				 CTP_VIEW_MAX_FIELDS);
	} else {
		for (size_t t = 0; t < f->n_terms; t++) {
			const struct ctp_snap_term *tm = &f->terms[t];
			const struct ctp_snap_field *in =
				&ctp_snap_fields(cand)[tm->input];
			const struct ctp_view_col *tc = pair_of(s, in->name);
			if (tm->coef != 1 || tm->max_set || !tc ||
			    tc->n_exited != 1)
				return false;
			exit_add(s, tc->exited[0], f->unit, xf, xk, &n,
				 CTP_VIEW_MAX_FIELDS);
		}
	}
	bf[0] = ctp_snap_field_find(ctp_interval_snap(s->iv, 0), f->name);
	if (bf[0] && bf[0]->scope != f->scope)
		bf[0] = NULL;
	*m = (struct ctp_interval_exit_measure){.xf = xf,
						.xk = xk,
						.nxf = n,
						.bf = bf,
						.nbf = 1,
						.scope = f->scope};
	return n > 0;
}

/* The first thread time counter: the ranking without the asked one. */
static const struct ctp_snap_field *first_time(const struct ctp_snap *snap)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
		if (fs[i].scope == CTP_SCOPE_THREAD &&
		    fs[i].kind == CTP_KIND_COUNTER && ctp_unit_ns(fs[i].unit))
			return &fs[i];
	return NULL;
}

/* Is field f one of the ranking's (rank_any: some is present)? */
static bool ranks(const struct ctp_series *s, const struct ctp_snap_field *f,
		  const struct ctp_snap_field *fallback)
{
	for (size_t k = 0; k < s->o.n_rank; k++)
		if (strcmp(s->o.rank[k], f->name) == 0)
			return true;
	return f == fallback;
}

static const struct ctp_snap_field *rank_fallback(const struct ctp_series *s,
						  const struct ctp_snap *snap)
{
	for (size_t k = 0; k < s->o.n_rank; k++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(snap, s->o.rank[k]);
		if (f && (f->scope == CTP_SCOPE_THREAD ||
			  f->scope == CTP_SCOPE_PROCESS))
			return NULL; /* the asked ranking is there */
	}
	return first_time(snap);
}

/* Every CAND group's change over the interval. */
static int deltas(struct ctp_series *s, struct delta *dl, size_t ng)
{
	const struct ctp_snap *c = ctp_interval_snap(s->iv, 1);
	const struct ctp_snap_field *fs = ctp_snap_fields(c),
				    *fb = rank_fallback(s, c);
	for (size_t i = 0; i < ctp_snap_n_fields(c); i++) {
		long slot = s->slot_of[i];
		if (slot < 0)
			continue;
		size_t xf[CTP_VIEW_MAX_FIELDS];
		long double xk[CTP_VIEW_MAX_FIELDS];
		const struct ctp_snap_field *bf[1];
		struct ctp_interval_exit_measure m;
		bool xm = exit_measure(s, &fs[i], xf, xk, bf, &m);
		bool rk = ranks(s, &fs[i], fb);
		for (size_t gi = 0; gi < ng; gi++) {
			const struct ctp_group *g = ctp_groups_at(s->g, gi);
			struct ctp_interval_sum sum, xs;
			int r = ctp_interval_group(s->iv, &fs[i], g, &sum);
			if (r < 0)
				return r;
			if (xm) {
				ctp_interval_exit_group(s->iv, g, &m, &xs);
				if (xs.n)
					ctp_interval_sum_add(&sum, &xs);
			}
			if (!sum.n)
				continue;
			dl[gi].d[slot] += sum.delta;
			dl[gi].any[slot] = true;
			dl[gi].active |= sum.delta > 0;
			if (rk)
				dl[gi].rank += sum.delta;
		}
	}
	for (size_t gi = 0; gi < ng; gi++) {
		dl[gi].exited = ctp_groups_at(s->g, gi)->n_extras;
		dl[gi].active |= dl[gi].exited > 0;
	}
	return 0;
}

/* The first snapshot: no interval; its groups ranked by their lifetime
 * aggregates (as a one-shot export ranks them), every counter at 0. */
static int first_deltas(struct ctp_series *s, struct delta *dl, size_t ng)
{
	const struct ctp_snap *c = s->snap[1];
	const struct ctp_snap_field *fs = ctp_snap_fields(c),
				    *fb = rank_fallback(s, c);
	for (size_t i = 0; i < ctp_snap_n_fields(c); i++) {
		long slot = s->slot_of[i];
		const struct ctp_agg *col;
		if (slot < 0)
			continue;
		if (ctp_groups_aggregate(s->g, &fs[i], &col) < 0)
			return -ENOMEM;
		bool rk = ranks(s, &fs[i], fb);
		for (size_t gi = 0; gi < ng; gi++) {
			long double x;
			if (!ctp_agg_number(&col[gi], &x))
				continue;
			dl[gi].any[slot] = true;
			dl[gi].active = true;
			if (rk)
				dl[gi].rank += x;
		}
	}
	return 0;
}

static const struct delta *rank_dl;
static int by_rank(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	if (rank_dl[a].rank != rank_dl[b].rank)
		return rank_dl[a].rank > rank_dl[b].rank ? -1 : 1;
	return (a > b) - (a < b);
}

static const struct ctp_series *sort_s;
static int by_active(const void *pa, const void *pb)
{
	const struct entry *a = &sort_s->e[*(const size_t *)pa],
			   *b = &sort_s->e[*(const size_t *)pb];
	if (a->active_ns != b->active_ns)
		return a->active_ns > b->active_ns ? -1 : 1;
	return strcmp(a->labels, b->labels);
}

static int by_labels(const void *pa, const void *pb)
{
	return strcmp(sort_s->e[*(const size_t *)pa].labels,
		      sort_s->e[*(const size_t *)pb].labels);
}

/* Entries of the CAND groups, the exported set of this capture. */
static int choose(struct ctp_series *s, const struct delta *dl, size_t ng,
		  uint64_t now)
{
	size_t *ord = malloc((ng + 1) * sizeof(*ord)), na = 0;
	if (!ord)
		return -ENOMEM;
	for (size_t gi = 0; gi < ng; gi++) {
		char *l = ctp_om_group_labels(s->g, gi);
		if (!l) {
			free(ord);
			return -ENOMEM;
		}
		s->gent[gi] = find_entry(s, l);
		/* A group whose labels read as other's (a process named
		 * "other") is other's: one series of those labels. */
		bool own = strcmp(l, s->other.labels) != 0;
		free(l);
		if (s->gent[gi] >= 0 && dl[gi].active)
			s->e[s->gent[gi]].active_ns = now;
		if (dl[gi].active && own)
			ord[na++] = gi;
	}
	rank_dl = dl;
	qsort(ord, na, sizeof(*ord), by_rank);
	size_t top = s->o.top && s->o.top < na ? s->o.top : na;
	for (size_t k = 0; k < top; k++) {
		size_t gi = ord[k];
		long ei = s->gent[gi];
		if (ei < 0) {
			/* Two groups of one capture whose labels read alike
			 * (bytes written as \xNN text) are one series. */
			char *l = ctp_om_group_labels(s->g, gi);
			long had = l ? find_entry(s, l) : -1;
			ei = !l ? -ENOMEM : had >= 0 ? had : new_entry(s, l);
			free(l);
			if (ei < 0) {
				free(ord);
				return (int)ei;
			}
			if (had < 0)
				s->e[ei].zero_feed = s->feeds;
			s->gent[gi] = ei;
		}
		s->e[ei].active_ns = now;
		s->e[ei].exported = true;
	}
	free(ord);
	/* The TTL, then the cap: the least recently active go first. */
	size_t *ex = malloc((s->n_e + 1) * sizeof(*ex)), ne = 0;
	if (!ex)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_e; i++) {
		struct entry *e = &s->e[i];
		if (e->exported && now - e->active_ns > s->o.ttl_ns) {
			e->exported = false;
			s->expired++;
		}
		if (e->exported)
			ex[ne++] = i;
	}
	sort_s = s;
	qsort(ex, ne, sizeof(*ex), by_active);
	for (size_t k = s->o.max_series; k < ne; k++) {
		s->e[ex[k]].exported = false;
		s->capped++;
	}
	free(ex);
	return 0;
}

/* Forget the groups long unexported past twice the cap (a group that
 * comes back after that starts again at zero). */
static void evict(struct ctp_series *s)
{
	if (s->n_e <= 2 * s->o.max_series)
		return;
	size_t *idx = malloc(s->n_e * sizeof(*idx));
	if (!idx)
		return;
	for (size_t i = 0; i < s->n_e; i++)
		idx[i] = i;
	sort_s = s;
	qsort(idx, s->n_e, sizeof(*idx), by_active);
	bool *drop = calloc(s->n_e, sizeof(*drop));
	for (size_t k = 2 * s->o.max_series; drop && k < s->n_e; k++)
		drop[idx[k]] = !s->e[idx[k]].exported;
	size_t w = 0;
	for (size_t i = 0; drop && i < s->n_e; i++) {
		if (drop[i])
			entry_free(&s->e[i]);
		else
			s->e[w++] = s->e[i];
	}
	if (drop)
		s->n_e = w;
	free(drop);
	free(idx);
}

/* The changes into the exported groups' sums, the rest into other's. */
static int apply(struct ctp_series *s, const struct delta *dl, size_t ng)
{
	for (size_t gi = 0; gi < ng; gi++) {
		long ei = s->gent[gi];
		struct entry *e =
			ei >= 0 && s->e[ei].exported ? &s->e[ei] : &s->other;
		if (entry_slots(e, s->n_names) < 0)
			return -ENOMEM;
		for (size_t k = 0; k < s->n_names; k++) {
			e->acc[k] += dl[gi].d[k];
			e->seen[k] |= dl[gi].any[k];
		}
		e->exited += dl[gi].exited;
		s->exited += dl[gi].exited;
	}
	if (entry_slots(&s->other, s->n_names) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_e; i++)
		if (entry_slots(&s->e[i], s->n_names) < 0)
			return -ENOMEM;
	return 0;
}

/* The exported entries by labels; gent again after an eviction. */
static int listing(struct ctp_series *s, size_t ng)
{
	free(s->exp);
	s->n_exp = 0;
	if (!(s->exp = malloc((s->n_e + 1) * sizeof(*s->exp))))
		return -ENOMEM;
	for (size_t i = 0; i < s->n_e; i++)
		if (s->e[i].exported)
			s->exp[s->n_exp++] = i;
	sort_s = s;
	qsort(s->exp, s->n_exp, sizeof(*s->exp), by_labels);
	for (size_t gi = 0; gi < ng; gi++) {
		char *l = ctp_om_group_labels(s->g, gi);
		if (!l)
			return -ENOMEM;
		s->gent[gi] = find_entry(s, l);
		free(l);
	}
	return 0;
}

static void deltas_free(struct delta *dl, size_t ng)
{
	for (size_t gi = 0; dl && gi < ng; gi++) {
		free(dl[gi].d);
		free(dl[gi].any);
	}
	free(dl);
}

/* The moment of a capture, for the TTL: since boot when known. */
static uint64_t when(const struct ctp_snap *snap)
{
	const struct ctp_snap_header *h = ctp_snap_header(snap);
	return h->start_boottime_ns ? h->start_boottime_ns
				    : h->start_realtime_ns;
}

int ctp_series_feed(struct ctp_series *s, struct ctp_snap *snap, char *err,
		    size_t errlen)
{
	struct ctp_exit_sum *ex = NULL;
	struct ctp_groups *g = NULL;
	bool first = !s->snap[1];
	/* Kept until the next feed, read only through the table calls. */
	ctp_snap_drop_tree(snap);
	long *slot_of = calloc(ctp_snap_n_fields(snap) + 1, sizeof(*slot_of));
	int r = slot_of ? 0 : -ENOMEM;
	if (r == 0 && !first) {
		/* What exited between the two captures. */
		ex = calloc(1, sizeof(*ex));
		r = ex ? ctp_exit_sum_paths(s->snap[1], snap, NULL, 0, s->o.cap,
					    s->xview, stderr, "ctprof-core", ex)
		       : -ENOMEM;
	}
	if (r == 0)
		r = ctp_groups_new_extra(snap, s->o.spec, ex ? ex->id : NULL,
					 ex ? ex->tasks : 0, &g, err, errlen);
	if (r == 0 && !first)
		r = ctp_interval_new(s->snap[1], snap, ex, &s->iv);
	if (r < 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "%s", strerror(ENOMEM));
		ctp_groups_free(g);
		exits_free(ex);
		free(slot_of);
		ctp_snap_free(snap);
		return r;
	}
	/* The model is on (snap[1], snap) now: what it held before goes. */
	ctp_groups_free(s->g);
	s->g = g;
	exits_free(s->ex);
	s->ex = ex;
	if (ex) {
		s->exits |= ex->present;
		s->lost += ex->lost;
	}
	ctp_snap_free(s->snap[0]);
	s->snap[0] = s->snap[1];
	s->snap[1] = snap;
	free(s->slot_of);
	s->slot_of = slot_of;
	s->feeds++;
	size_t ng = ctp_groups_count(g);
	struct delta *dl = calloc(ng + 1, sizeof(*dl));
	long *gent = realloc(s->gent, (ng + 1) * sizeof(*gent));
	r = dl && gent ? slots(s, snap, slot_of) : -ENOMEM;
	if (gent)
		s->gent = gent;
	for (size_t gi = 0; r == 0 && gi < ng; gi++)
		if (!(dl[gi].d = calloc(s->n_names + 1, sizeof(*dl[gi].d))) ||
		    !(dl[gi].any = calloc(s->n_names + 1, sizeof(bool))))
			r = -ENOMEM;
	if (r == 0)
		r = first ? first_deltas(s, dl, ng) : deltas(s, dl, ng);
	if (r == 0)
		r = choose(s, dl, ng, when(snap));
	if (r == 0)
		r = apply(s, dl, ng);
	if (r == 0)
		evict(s);
	if (r == 0)
		r = listing(s, ng);
	deltas_free(dl, ng);
	/* The export reads the newest snapshot, its groups and exits; the
	 * next feed pairs it with its successor. The model of this pair and
	 * the snapshot before are done with: freed now, a stateful exporter
	 * holds one decoded capture between feeds instead of two. */
	ctp_interval_free(s->iv);
	s->iv = NULL;
	ctp_snap_free(s->snap[0]);
	s->snap[0] = NULL;
	if (r < 0)
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

/* ---- Readers
 * ---------------------------------------------------------------*/

const struct ctp_snap *ctp_series_snap(const struct ctp_series *s)
{
	return s->snap[1];
}

struct ctp_groups *ctp_series_groups(const struct ctp_series *s)
{
	return s->g;
}

bool ctp_series_exported(const struct ctp_series *s, size_t gi)
{
	return s->gent && gi < ctp_groups_count(s->g) && s->gent[gi] >= 0 &&
	       s->e[s->gent[gi]].exported;
}

size_t ctp_series_n(const struct ctp_series *s)
{
	return s->n_exp;
}

static const struct entry *at(const struct ctp_series *s, size_t i)
{
	return i < s->n_exp ? &s->e[s->exp[i]] : &s->other;
}

const char *ctp_series_labels(const struct ctp_series *s, size_t i)
{
	return at(s, i)->labels;
}

bool ctp_series_counts(const struct ctp_series *s,
		       const struct ctp_snap_field *f)
{
	return s->snap[1] && s->slot_of &&
	       f->index < ctp_snap_n_fields(s->snap[1]) &&
	       &ctp_snap_fields(s->snap[1])[f->index] == f &&
	       s->slot_of[f->index] >= 0;
}

bool ctp_series_value(const struct ctp_series *s, size_t i,
		      const struct ctp_snap_field *f, long double *out)
{
	if (!ctp_series_counts(s, f))
		return false;
	const struct entry *e = at(s, i);
	size_t k = (size_t)s->slot_of[f->index];
	if (k >= e->n_slots || !e->seen[k])
		return false;
	*out = e->zero_feed == s->feeds ? 0 : e->acc[k];
	return true;
}

uint64_t ctp_series_exited(const struct ctp_series *s, size_t i)
{
	const struct entry *e = at(s, i);
	return e->zero_feed == s->feeds ? 0 : e->exited;
}

void ctp_series_stats(const struct ctp_series *s, struct ctp_series_stats *st)
{
	*st = (struct ctp_series_stats){.feeds = s->feeds,
					.series = s->n_exp + 1,
					.tracked = s->n_e,
					.expired = s->expired,
					.capped = s->capped,
					.exited = s->exited,
					.lost = s->lost,
					.exits = s->exits};
}
