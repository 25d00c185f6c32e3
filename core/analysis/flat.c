/* SPDX-License-Identifier: MIT */
/* Flat, typed rows of one table as CSV, JSON or NDJSON (flat.h). */
#include "flat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "column.h"
#include "ident.h"
#include "table.h"

/* ---- Names ---- */

static const char *const table_names[] = {
	[CTP_SCOPE_HOST] = "host",	   [CTP_SCOPE_CGROUP] = "cgroups",
	[CTP_SCOPE_PROCESS] = "processes", [CTP_SCOPE_THREAD] = "threads",
	[CTP_SCOPE_EXITED] = "exited",
};

int ctp_flat_format_parse(const char *name)
{
	if (!strcmp(name, "csv"))
		return CTP_FLAT_CSV;
	if (!strcmp(name, "json"))
		return CTP_FLAT_JSON;
	if (!strcmp(name, "ndjson"))
		return CTP_FLAT_NDJSON;
	return -EINVAL;
}

int ctp_flat_table_parse(const char *name)
{
	for (int s = CTP_SCOPE_HOST; s <= CTP_SCOPE_EXITED; s++)
		if (!strcmp(name, table_names[s]))
			return s;
	return -EINVAL;
}

const char *ctp_flat_table_name(uint8_t scope)
{
	return scope >= CTP_SCOPE_HOST && scope <= CTP_SCOPE_EXITED
		       ? table_names[scope]
		       : NULL;
}

/* ---- Columns ---- */

enum col_kind {
	K_START,    /* start_realtime_ns of the capture */
	K_TIME,	    /* the same as UTC text, RFC 3339 to the microsecond */
	K_HOSTNAME, /* the recorded hostname */
	K_TID,
	K_TGID,
	K_COMM,
	K_PCOMM,    /* a thread's process's comm */
	K_TCGROUP,  /* a thread's cgroup path */
	K_NTHREADS, /* a process's thread count */
	K_TSTART,   /* a thread's or process's start since boot, ns */
	K_PCGROUP,  /* a process's cgroup: its main thread's */
	K_PATH,	    /* a cgroup's own path */
	K_XTGID,    /* an exited task's tgid, absent when unknown (0) */
	K_EXIT,	    /* an exited task's exit time since boot, absent when 0 */
	K_KEY,	    /* a group's key part */
	K_GTHREADS, /* a group's member counts */
	K_GPROCS,
	K_GCGROUPS,
	K_FIELD, /* a field's value or aggregate */
	K_MIN,	 /* a RANGE aggregate's two ends */
	K_MAX,
};

struct col {
	uint8_t kind;
	const char *name; /* the header */
	char *owned;	  /* name, when built here */
	size_t part;	  /* K_KEY: which part */
	bool number;	  /* K_KEY: the occurrence of axis none */
	size_t fi;	  /* K_FIELD, K_MIN, K_MAX: the writer's field */
	/* Of the snapshot being written: the field, NULL when it has none
	 * of that name in this table; grouped, its aggregate per group. */
	const struct ctp_snap_field *f;
	const struct ctp_col *num; /* ungrouped numeric field: its column */
	const struct ctp_agg *agg;
};

/* A field column of the writer: the union over the snapshots it saw. */
struct wfield {
	char *name;
	bool range; /* rule range: two columns per group (.min, .max) */
};

struct ctp_flat_writer {
	FILE *out;
	struct ctp_flat_opts o;
	struct wfield *fields;
	size_t nfields, fcap;
	bool started, grouped;
	struct col *cols;
	size_t ncols, cap;
	struct ctp_table *tab;
};

/* One snapshot's rows being written. */
struct flat {
	struct ctp_flat_writer *w;
	const struct ctp_snap *snap;
	struct ctp_groups *groups;
	const struct ctp_flat_opts *o;
	const struct ctp_snap_table *t, *threads, *procs, *cgroups;
	size_t *order, nrows, shown;
	char when[40]; /* K_TIME */
};

static bool selected(const struct ctp_flat_opts *o,
		     const struct ctp_snap_field *f)
{
	return !o->sel || ctp_readopts_selected(o->sel, f->name);
}

static struct col *add_col(struct ctp_flat_writer *w, uint8_t kind,
			   const char *name)
{
	struct col *c = &w->cols[w->ncols++];
	*c = (struct col){.kind = kind, .name = name};
	return c;
}

/* The writer's field i + suffix, owned by the column. */
static int add_named(struct ctp_flat_writer *w, uint8_t kind, size_t fi,
		     const char *suffix)
{
	struct col *c = add_col(w, kind, NULL);
	c->fi = fi;
	if (asprintf(&c->owned, "%s%s", w->fields[fi].name, suffix) < 0) {
		c->owned = NULL;
		return -ENOMEM;
	}
	c->name = c->owned;
	return 0;
}

/* A group key column: its title lower-cased, "#" as "occurrence". */
static int add_key(struct ctp_flat_writer *w, struct ctp_groups *groups,
		   size_t part)
{
	const char *title = ctp_groups_key_title(groups, part);
	struct col *c = add_col(w, K_KEY, NULL);
	c->part = part;
	c->number = !strcmp(title, "#");
	c->owned = strdup(c->number ? "occurrence" : title);
	if (!c->owned)
		return -ENOMEM;
	for (char *p = c->owned; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	c->name = c->owned;
	return 0;
}

/* The identity columns of a plain table. */
static void ident_cols(struct ctp_flat_writer *w)
{
	switch (w->o.scope) {
	case CTP_SCOPE_THREAD:
		add_col(w, K_TID, "tid");
		add_col(w, K_TGID, "tgid");
		add_col(w, K_COMM, "comm");
		add_col(w, K_PCOMM, "pcomm");
		add_col(w, K_TCGROUP, "cgroup");
		if (w->o.capture_cols)
			add_col(w, K_TSTART, "start_boottime_ns");
		break;
	case CTP_SCOPE_PROCESS:
		add_col(w, K_TGID, "tgid");
		add_col(w, K_COMM, "comm");
		add_col(w, K_NTHREADS, "nthreads");
		add_col(w, K_PCGROUP, "cgroup");
		if (w->o.capture_cols)
			add_col(w, K_TSTART, "start_boottime_ns");
		break;
	case CTP_SCOPE_CGROUP:
		add_col(w, K_PATH, "path");
		break;
	case CTP_SCOPE_EXITED:
		add_col(w, K_TID, "tid");
		add_col(w, K_XTGID, "tgid");
		add_col(w, K_COMM, "comm");
		add_col(w, K_EXIT, "exit_boottime_ns");
		break;
	}
}

/* Every column, once, at the first rows written: capture, identity or key
 * and counts, then the fields (groups: the first snapshot's, whose key
 * titles are the spec's). */
static int build_cols(struct ctp_flat_writer *w, struct ctp_groups *groups)
{
	size_t nk = groups ? ctp_groups_n_key(groups) : 0;
	int r;

	w->grouped = groups != NULL;
	w->cap = 3 + 6 + nk + 3 + 2 * w->nfields;
	w->cols = calloc(w->cap, sizeof(*w->cols));
	if (!w->cols)
		return -ENOMEM;
	if (w->o.capture_cols) {
		add_col(w, K_START, "start_realtime_ns");
		add_col(w, K_TIME, "capture_time");
		add_col(w, K_HOSTNAME, "hostname");
	}
	if (!groups)
		ident_cols(w);
	for (size_t k = 0; k < nk; k++)
		if ((r = add_key(w, groups, k)) < 0)
			return r;
	if (groups) {
		add_col(w, K_GTHREADS, "threads");
		add_col(w, K_GPROCS, "processes");
		add_col(w, K_GCGROUPS, "cgroups");
	}
	for (size_t i = 0; i < w->nfields; i++) {
		if (groups && w->fields[i].range) {
			if ((r = add_named(w, K_MIN, i, ".min")) < 0 ||
			    (r = add_named(w, K_MAX, i, ".max")) < 0)
				return r;
		} else {
			add_col(w, K_FIELD, w->fields[i].name)->fi = i;
		}
	}
	return 0;
}

/* The writer's field of this name, or nfields. */
static size_t wfield_find(const struct ctp_flat_writer *w, const char *name)
{
	size_t i = 0;
	while (i < w->nfields && strcmp(w->fields[i].name, name) != 0)
		i++;
	return i;
}

/* Each field column's field in x's snapshot (NULL: absent there: none of
 * the name in this table, or of another rule than the column's) and its
 * aggregate per group. */
static int resolve_cols(struct flat *x)
{
	struct ctp_flat_writer *w = x->w;
	int r;
	for (size_t c = 0; c < w->ncols; c++) {
		struct col *col = &w->cols[c];
		const struct ctp_snap_field *f;
		col->f = NULL;
		col->num = NULL;
		col->agg = NULL;
		if (col->kind != K_FIELD && col->kind != K_MIN &&
		    col->kind != K_MAX)
			continue;
		f = ctp_snap_field_find(x->snap, w->fields[col->fi].name);
		if (!f || f->scope != w->o.scope ||
		    (x->groups &&
		     (f->rule == CTP_RULE_RANGE) != (col->kind != K_FIELD)))
			continue;
		col->f = f;
		if (x->groups &&
		    (r = ctp_groups_aggregate(x->groups, f, &col->agg)) < 0)
			return r;
		if (!x->groups && ctp_field_is_number(f) &&
		    !(col->num = ctp_snap_col(x->snap, f)))
			return -ENOMEM;
	}
	return 0;
}

/* ---- Cells ---- */

static struct ctp_value v_u64(uint64_t u)
{
	return (struct ctp_value){.type = CTP_TYPE_U64, .u64 = u};
}

/* Bytes as a STRING value; absent when ptr is NULL. */
static struct ctp_value v_bytes(const char *ptr, size_t len)
{
	struct ctp_value v = {.type = CTP_VALUE_ABSENT};
	if (ptr) {
		v.type = CTP_TYPE_STRING;
		v.str = (struct ctp_bytes){ptr, len};
	}
	return v;
}

static struct ctp_value v_cgroup(const struct flat *x, int64_t row)
{
	if (row < 0 || (uint64_t)row >= x->cgroups->rows)
		return v_bytes(NULL, 0);
	const struct ctp_bytes *b = &x->cgroups->path[row];
	return v_bytes(b->ptr, b->len);
}

/* An identity cell of row `row` of the plain table. */
static struct ctp_value ident_value(const struct flat *x, const struct col *c,
				    size_t row)
{
	const struct ctp_snap_table *t = x->t;
	int64_t r;

	switch (c->kind) {
	case K_TID:
		return v_u64(t->tid[row]);
	case K_TGID:
		return v_u64(t->tgid[row]);
	case K_NTHREADS:
		return v_u64(t->nthreads[row]);
	case K_COMM:
		return v_bytes(t->comm[row].ptr, t->comm[row].len);
	case K_PATH:
		return v_bytes(t->path[row].ptr, t->path[row].len);
	case K_XTGID:
		return t->tgid[row] ? v_u64(t->tgid[row]) : v_bytes(NULL, 0);
	case K_EXIT:
		return t->exit_ns[row] ? v_u64(t->exit_ns[row])
				       : v_bytes(NULL, 0);
	case K_TCGROUP:
		return v_cgroup(x, t->cgroup[row]);
	case K_TSTART: {
		uint64_t ns = ctp_ident_task_start(x->snap, x->o->scope, row);
		return ns == CTP_IDENT_UNKNOWN ? v_bytes(NULL, 0) : v_u64(ns);
	}
	case K_PCOMM:
		r = ctp_snap_row(x->procs, t->tgid[row], 0);
		return r < 0 ? v_bytes(NULL, 0)
			     : v_bytes(x->procs->comm[r].ptr,
				       x->procs->comm[r].len);
	case K_PCGROUP:
		r = ctp_snap_row(x->threads, t->tgid[row], t->tgid[row]);
		return r < 0 ? v_bytes(NULL, 0)
			     : v_cgroup(x, x->threads->cgroup[r]);
	}
	return v_bytes(NULL, 0);
}

/* A cell of group gi. A saturated sum has no exact value: absent. */
static struct ctp_value group_value(const struct flat *x, const struct col *c,
				    size_t gi)
{
	const struct ctp_group *g = ctp_groups_at(x->groups, gi);
	const struct ctp_agg *a = c->agg ? &c->agg[gi] : NULL;

	switch (c->kind) {
	case K_KEY: {
		const char *k = g->key[c->part];
		if (k && c->number)
			return v_u64(strtoull(k, NULL, 10));
		return v_bytes(k, k ? strlen(k) : 0);
	}
	case K_GTHREADS:
		return v_u64(g->n_threads);
	case K_GPROCS:
		return v_u64(g->n_processes);
	case K_GCGROUPS:
		return v_u64(g->n_cgroups);
	}
	if (!c->f || !a || a->unknown || a->saturated)
		return v_bytes(NULL, 0);
	return c->kind == K_MAX ? a->hi : a->v;
}

/* The cell of column c in the row-th row written (a table row or group). */
static struct ctp_value cell(const struct flat *x, const struct col *c,
			     size_t row)
{
	const struct ctp_snap_header *h = ctp_snap_header(x->snap);

	if (c->kind == K_START)
		return v_u64(h->start_realtime_ns);
	if (c->kind == K_TIME)
		return v_bytes(x->when, strlen(x->when));
	if (c->kind == K_HOSTNAME)
		return v_bytes(h->hostname,
			       h->hostname ? strlen(h->hostname) : 0);
	if (x->groups)
		return group_value(x, c, row);
	if (c->kind == K_FIELD)
		return c->num ? ctp_col_value(c->num, row)
		       : c->f ? ctp_snap_value(x->snap, c->f, row)
			      : v_bytes(NULL, 0);
	return ident_value(x, c, row);
}

/* ---- Order ---- */

struct sortctx {
	const struct ctp_value *vals; /* rows */
	const struct ctp_agg *aggs;   /* groups */
};

/* Descending, absent last, ties in file (or key) order. */
static int cmp_order(const void *pa, const void *pb, void *arg)
{
	const struct sortctx *s = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c;

	if (s->aggs) {
		c = -ctp_agg_cmp(&s->aggs[a], &s->aggs[b]);
	} else {
		const struct ctp_value *va = &s->vals[a], *vb = &s->vals[b];
		bool ha = va->type != CTP_VALUE_ABSENT,
		     hb = vb->type != CTP_VALUE_ABSENT;
		c = ha != hb ? (ha ? -1 : 1) : ha ? -ctp_value_cmp(va, vb) : 0;
	}
	return c ? c : (a > b) - (a < b);
}

/* The sort field, checked against the table: 0 and *ret (NULL for none),
 * or -EINVAL with a message. */
static int sort_field(const struct flat *x, const struct ctp_snap_field **ret,
		      char *err, size_t errlen)
{
	const char *name = x->o->sel ? x->o->sel->sort : NULL;
	*ret = NULL;
	if (!name)
		return 0;
	const struct ctp_snap_field *f = ctp_snap_field_find(x->snap, name);
	if (!f) {
		snprintf(err, errlen,
			 "--sort %s: no such field in this snapshot", name);
		return -EINVAL;
	}
	if (f->scope != x->o->scope) {
		snprintf(err, errlen,
			 "--sort %s: a %s field, not of the %s table", name,
			 ctp_scope_name(f->scope),
			 ctp_flat_table_name(x->o->scope));
		return -EINVAL;
	}
	*ret = f;
	return 0;
}

/* x->order: the rows (groups) to write, sorted and limited as asked. */
static int make_order(struct flat *x, char *err, size_t errlen)
{
	const struct ctp_snap_field *sortf;
	struct sortctx sc = {0};
	struct ctp_value *vals = NULL;
	int r;

	if ((r = sort_field(x, &sortf, err, errlen)) < 0)
		return r;
	x->order = malloc((x->nrows ? x->nrows : 1) * sizeof(*x->order));
	if (!x->order)
		return -ENOMEM;
	for (size_t i = 0; i < x->nrows; i++)
		x->order[i] = i;
	if (sortf && x->groups) {
		if ((r = ctp_groups_aggregate(x->groups, sortf, &sc.aggs)) < 0)
			return r;
	} else if (sortf) {
		vals = malloc((x->nrows ? x->nrows : 1) * sizeof(*vals));
		if (!vals)
			return -ENOMEM;
		const struct ctp_col *num =
			ctp_field_is_number(sortf)
				? ctp_snap_col(x->snap, sortf)
				: NULL;
		if (ctp_field_is_number(sortf) && !num) {
			free(vals);
			return -ENOMEM;
		}
		for (size_t i = 0; i < x->nrows; i++)
			vals[i] = num ? ctp_col_value(num, i)
				      : ctp_snap_value(x->snap, sortf, i);
		sc.vals = vals;
	}
	if (sortf)
		qsort_r(x->order, x->nrows, sizeof(*x->order), cmp_order, &sc);
	free(vals);
	uint64_t limit = x->o->sel ? x->o->sel->limit : 0;
	x->shown = limit && limit < x->nrows ? (size_t)limit : x->nrows;
	return 0;
}

/* ---- The table ---- */

/* Format and table (the writer's, once). */
static int check_format(const struct ctp_flat_opts *o, char *err, size_t errlen)
{
	if (o->format < CTP_FLAT_CSV || o->format > CTP_FLAT_NDJSON) {
		snprintf(err, errlen, "unknown output format %u", o->format);
		return -EINVAL;
	}
	if (!ctp_flat_table_name(o->scope)) {
		snprintf(err, errlen, "unknown table %u", o->scope);
		return -EINVAL;
	}
	return 0;
}

/* The groups asked with the table (each snapshot's). */
static int check_groups(const struct ctp_snap *snap, struct ctp_groups *groups,
			const struct ctp_flat_opts *o, char *err, size_t errlen)
{
	if (groups && o->scope == CTP_SCOPE_HOST) {
		snprintf(err, errlen,
			 "the host table has one row: it is not grouped");
		return -EINVAL;
	}
	if (groups && o->scope == CTP_SCOPE_EXITED) {
		snprintf(err, errlen,
			 "the exited table is not grouped (groups are of live "
			 "threads and processes)");
		return -EINVAL;
	}
	if (groups && ctp_groups_snap(groups) != snap) {
		snprintf(err, errlen, "the groups are of another snapshot");
		return -EINVAL;
	}
	return 0;
}

/* The table streamed to the output, its header now. */
static int start(struct ctp_flat_writer *w, struct ctp_groups *groups)
{
	int r = build_cols(w, groups);
	if (r < 0)
		return r;
	if (!(w->tab = ctp_table_new(CTP_TABLE_GRID)))
		return -ENOMEM;
	for (size_t c = 0; c < w->ncols && r >= 0; c++)
		r = ctp_table_add_col(w->tab, w->cols[c].name, 0);
	if (r < 0)
		return r;
	ctp_table_stream(w->tab, w->out, (enum ctp_table_format)w->o.format);
	w->started = true;
	return 0;
}

/* The shown rows of x through the writer's table. */
static int write_rows(struct flat *x)
{
	struct ctp_flat_writer *w = x->w;
	int r = 0;
	for (size_t i = 0; i < x->shown && r >= 0; i++) {
		if (!w->ncols)
			r = ctp_table_absent(w->tab); /* an empty row */
		for (size_t c = 0; c < w->ncols && r >= 0; c++) {
			struct ctp_value v = cell(x, &w->cols[c], x->order[i]);
			r = ctp_table_value(w->tab, &v);
		}
	}
	if (r == 0 && ferror(w->out))
		r = -EIO;
	return r;
}

/* The capture's start as RFC 3339 UTC text to the microsecond (what
 * sqlite's date functions and DuckDB's TIMESTAMP read). */
static void capture_time(uint64_t ns, char *out, size_t n)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char day[32] = "";
	if (gmtime_r(&t, &tm))
		strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, n, "%s.%06uZ", day, (unsigned)(ns % 1000000000u / 1000u));
}

static void say_error(int r, char *err, size_t errlen)
{
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (r == -EIO)
		snprintf(err, errlen, "writing output failed");
}

int ctp_flat_writer_new(FILE *out, const struct ctp_flat_opts *o,
			struct ctp_flat_writer **ret, char *err, size_t errlen)
{
	struct ctp_flat_writer *w;
	int r = check_format(o, err, errlen);
	if (r < 0)
		return r;
	if (!(w = calloc(1, sizeof(*w)))) {
		say_error(-ENOMEM, err, errlen);
		return -ENOMEM;
	}
	w->out = out;
	w->o = *o;
	*ret = w;
	return 0;
}

int ctp_flat_writer_cols(struct ctp_flat_writer *w, const struct ctp_snap *snap)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t nf = ctp_snap_n_fields(snap);
	if (w->started)
		return -EINVAL;
	for (size_t i = 0; i < nf; i++) {
		const struct ctp_snap_field *f = &fs[i];
		if (f->scope != w->o.scope || !selected(&w->o, f) ||
		    wfield_find(w, f->name) < w->nfields)
			continue;
		if (w->nfields == w->fcap) {
			size_t cap = w->fcap ? 2 * w->fcap : 64;
			struct wfield *nv =
				realloc(w->fields, cap * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			w->fields = nv;
			w->fcap = cap;
		}
		w->fields[w->nfields] = (struct wfield){
			.name = strdup(f->name),
			.range = f->rule == CTP_RULE_RANGE,
		};
		if (!w->fields[w->nfields].name)
			return -ENOMEM;
		w->nfields++;
	}
	return 0;
}

int ctp_flat_writer_rows(struct ctp_flat_writer *w, const struct ctp_snap *snap,
			 struct ctp_groups *groups, char *err, size_t errlen)
{
	struct flat x = {
		.w = w,
		.snap = snap,
		.groups = groups,
		.o = &w->o,
		.threads = ctp_snap_table(snap, CTP_SCOPE_THREAD),
		.procs = ctp_snap_table(snap, CTP_SCOPE_PROCESS),
		.cgroups = ctp_snap_table(snap, CTP_SCOPE_CGROUP),
	};
	int r = check_groups(snap, groups, &w->o, err, errlen);

	if (r < 0)
		return r;
	if (w->started && w->grouped != (groups != NULL)) {
		snprintf(err, errlen, "grouped and plain rows in one table");
		return -EINVAL;
	}
	capture_time(ctp_snap_header(snap)->start_realtime_ns, x.when,
		     sizeof(x.when));
	x.t = ctp_snap_table(snap, w->o.scope);
	x.nrows = groups ? ctp_groups_count(groups) : x.t->rows;
	/* The order first: a bad --sort writes nothing, not even the
	 * header. */
	if ((r = make_order(&x, err, errlen)) < 0 ||
	    (!w->started && (r = start(w, groups)) < 0) ||
	    (r = resolve_cols(&x)) < 0)
		goto out;
	r = write_rows(&x);
out:
	say_error(r, err, errlen);
	free(x.order);
	return r;
}

int ctp_flat_writer_end(struct ctp_flat_writer *w, char *err, size_t errlen)
{
	int r = w->started ? ctp_table_end(w->tab) : 0;
	say_error(r, err, errlen);
	return r;
}

void ctp_flat_writer_free(struct ctp_flat_writer *w)
{
	if (!w)
		return;
	for (size_t c = 0; c < w->ncols; c++)
		free(w->cols[c].owned);
	free(w->cols);
	for (size_t i = 0; i < w->nfields; i++)
		free(w->fields[i].name);
	free(w->fields);
	ctp_table_free(w->tab);
	free(w);
}

int ctp_flat_write(FILE *out, const struct ctp_snap *snap,
		   struct ctp_groups *groups, const struct ctp_flat_opts *o,
		   char *err, size_t errlen)
{
	struct ctp_flat_writer *w = NULL;
	int r = ctp_flat_writer_new(out, o, &w, err, errlen);
	if (r == 0 && (r = ctp_flat_writer_cols(w, snap)) < 0)
		say_error(r, err, errlen);
	if (r == 0)
		r = ctp_flat_writer_rows(w, snap, groups, err, errlen);
	if (r == 0)
		r = ctp_flat_writer_end(w, err, errlen);
	ctp_flat_writer_free(w);
	return r;
}
