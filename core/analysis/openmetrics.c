/* SPDX-License-Identifier: MIT */
/* A snapshot as metrics (see openmetrics.h and docs/EXPORT.md). */
#include "openmetrics.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "ctprof/plugin.h"
#include "render.h"
#include "series.h"
#include "term.h"

#define NAME_MAX_LEN 200

struct om {
	FILE *out;
	const struct ctp_om_opts *o;
	struct ctp_om_stats *st;
	const struct ctp_snap *snap;
	struct ctp_groups *g;
	size_t ng, kept;
	size_t *order; /* groups by rank, the kept first */
	char **labels; /* per group: `k="v",...` without braces */
	char **fam;    /* per field: its family, NULL when it has none */
	int err;
};

/* Text as a label value or help: \ " and newline escaped (" only when
 * quoted), bytes that are no UTF-8 as the text \xNN. */
static void put_text(FILE *out, const char *s, size_t n, bool quoted)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t l = ctp_utf8_len(p + i, n - i);
		if (p[i] == '\\' || (quoted && p[i] == '"'))
			fprintf(out, "\\%c", p[i]);
		else if (p[i] == '\n')
			fputs("\\n", out);
		else if (!l || p[i] < 0x20 || p[i] == 0x7f)
			fprintf(out, "\\\\x%02x", p[i]);
		else
			fwrite(p + i, 1, l, out);
		i += l ? l : 1;
	}
}

/* s with every byte outside [a-zA-Z0-9_] as '_', into out. */
static void sanitize(const char *s, char *out, size_t n)
{
	size_t i = 0;
	for (; s[i] && i + 1 < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_';
		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
}

static bool ends_with(const char *s, const char *sfx)
{
	size_t a = strlen(s), b = strlen(sfx);
	return a >= b && strcmp(s + a - b, sfx) == 0;
}

/* The base unit a field's values are written in, and the decimal places
 * of one of its units in it (a ns is 10^-9 s: a time unit's ns per unit
 * is a power of ten). */
static const char *base_unit(uint8_t unit, int *dec)
{
	*dec = 0;
	if (ctp_unit_ns(unit)) {
		*dec = 9;
		for (uint64_t ns = ctp_unit_ns(unit); ns >= 10; ns /= 10)
			(*dec)--;
		return "seconds";
	}
	switch (unit) {
	case CTP_UNIT_BYTES:
		return "bytes";
	case CTP_UNIT_CENTIPCT:
		*dec = 4;
		return "ratio";
	}
	return NULL;
}

/* Unit abbreviations the Prometheus naming rules (promtool's lint) want
 * spelled as base units; a field name's own ("cfs_period_us", a sysctl's
 * "rt_period_us") is its word, not its unit, which the field registers. */
static const char *const abbrev[] = {"s",  "ms", "us",	 "ns",	 "sec",	 "b",
				     "kb", "mb", "gb",	 "tb",	 "pb",	 "m",
				     "h",  "d",	 "usec", "nsec", "msec", NULL};

/* Drop the tokens of s that are unit abbreviations. */
static void drop_abbrev(char *s)
{
	char *w = s, *tok = s;
	for (char *p = s;; p++) {
		if (*p != '_' && *p)
			continue;
		size_t len = (size_t)(p - tok);
		bool drop = false;
		for (size_t i = 0; abbrev[i] && tok != s; i++)
			drop |= strlen(abbrev[i]) == len &&
				strncmp(tok, abbrev[i], len) == 0;
		if (!drop) {
			if (w != s)
				*w++ = '_';
			memmove(w, tok, len);
			w += len;
		}
		if (!*p)
			break;
		tok = p + 1;
	}
	*w = '\0';
}

/* A family's name: ctprof_<field>[_<unit>], in Prometheus' naming rules:
 * unit abbreviations dropped (the value is in base units, or a category
 * whose label keeps the field's own word), and a gauge never ending like
 * a counter's or a histogram's series (_total, _count, _sum, _bucket:
 * "_value" added). */
static void family(const struct ctp_snap_field *f, char *buf, size_t n)
{
	char s[NAME_MAX_LEN], sfx[16];
	int k;
	const char *u = base_unit(f->unit, &k);
	bool cat = f->kind == CTP_KIND_CATEGORICAL;
	if (cat || f->type == CTP_TYPE_CPUSET)
		u = f->type == CTP_TYPE_CPUSET ? "cpus" : NULL;
	sanitize(f->name, s, sizeof(s));
	drop_abbrev(s);
	snprintf(sfx, sizeof(sfx), "_%s", u ? u : "");
	bool gauge = f->kind != CTP_KIND_COUNTER || cat;
	const char *tail = "";
	if (u && !ends_with(s, sfx))
		tail = sfx;
	else if (gauge && (ends_with(s, "_total") || ends_with(s, "_count") ||
			   ends_with(s, "_sum") || ends_with(s, "_bucket")))
		tail = "_value";
	snprintf(buf, n, "ctprof_%s%s", s, tail);
}

/* The # lines of a family: type, unit, help. */
static void header(struct om *m, const char *name, const char *type,
		   const char *unit, const char *help)
{
	FILE *out = m->out;
	bool counter = strcmp(type, "counter") == 0;
	const char *tot = counter && !m->o->openmetrics ? "_total" : "";
	fprintf(out, "# TYPE %s%s %s\n", name, tot, type);
	if (unit && m->o->openmetrics)
		fprintf(out, "# UNIT %s %s\n", name, unit);
	fprintf(out, "# HELP %s%s ", name, tot);
	put_text(out, help, strlen(help), m->o->openmetrics);
	fputc('\n', out);
	m->st->families++;
}

int ctp_om_decimal(char *buf, size_t n, unsigned __int128 mag, bool neg,
		   unsigned dec)
{
	char d[64];
	size_t l = sizeof(d), point;
	if (dec > 38)
		return -EINVAL;
	do {
		d[--l] = (char)('0' + (int)(mag % 10));
		mag /= 10;
	} while (mag);
	while (sizeof(d) - l <= dec) /* a digit before the point */
		d[--l] = '0';
	point = sizeof(d) - dec;
	size_t end = sizeof(d);
	while (end > point && d[end - 1] == '0')
		end--;
	bool zero = point - l == 1 && d[l] == '0' && end == point;
	return snprintf(buf, n, "%s%.*s%s%.*s", neg && !zero ? "-" : "",
			(int)(point - l), d + l, end > point ? "." : "",
			(int)(end - point), d + point);
}

/* One sample: name[_total]{labels} value, the value twice/2 in units of
 * 10^-dec of the base unit, written exactly (a range's middle may be a
 * half: one more decimal place). */
static void sample(struct om *m, const char *name, bool counter,
		   const char *labels, const char *extra, __int128 twice,
		   int dec)
{
	FILE *out = m->out;
	char v[64];
	unsigned __int128 mag = twice < 0 ? -(unsigned __int128)twice
					  : (unsigned __int128)twice;
	if (mag % 2 == 0)
		ctp_om_decimal(v, sizeof(v), mag / 2, twice < 0, (unsigned)dec);
	else /* x.5 units: 5 tenths of one */
		ctp_om_decimal(v, sizeof(v), mag * 5, twice < 0,
			       (unsigned)dec + 1);
	fprintf(out, "%s%s", name, counter ? "_total" : "");
	bool l = labels && *labels, e = extra && *extra;
	if (l || e)
		fprintf(out, "{%s%s%s}", l ? labels : "", l && e ? "," : "",
			e ? extra : "");
	fprintf(out, " %s", v);
	if (m->o->timestamp_ns) { /* seconds, to the millisecond */
		ctp_om_decimal(v, sizeof(v), m->o->timestamp_ns / 1000000,
			       false, 3);
		fprintf(out, " %s", v);
	}
	fputc('\n', out);
	m->st->series++;
}

/* `name="value"` of raw bytes into a malloc'ed string. */
static char *label(const char *name, const char *v, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "%s=\"", name);
	put_text(f, v, n, true);
	fputc('"', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The label name of key part i: PCOMM is `group`. */
static void part_label(struct ctp_groups *g, size_t i, char *buf, size_t n)
{
	const char *t = ctp_groups_key_title(g, i);
	char s[64];
	if (strcmp(t, "PCOMM") == 0)
		t = "group";
	else if (strcmp(t, "#") == 0)
		t = "n";
	sanitize(t, s, sizeof(s));
	for (char *p = s; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	snprintf(buf, n, "%s", s);
}

char *ctp_om_group_labels(struct ctp_groups *g, size_t gi)
{
	size_t nk = ctp_groups_n_key(g);
	const struct ctp_group *gr = ctp_groups_at(g, gi);
	char *acc = strdup("");
	for (size_t i = 0; acc && i < nk; i++) {
		char ln[64], *one, *both = NULL;
		if (!gr->key[i])
			continue;
		part_label(g, i, ln, sizeof(ln));
		/* An empty value is no label to Prometheus: a process named
		 * "" would be one series with the group-less one (exits whose
		 * group is unknown). Written as the two quotes that show an
		 * empty string in CSV (docs/EXPORT.md). */
		one = *gr->key[i] ? label(ln, gr->key[i], strlen(gr->key[i]))
				  : label(ln, "\"\"", 2);
		if (one &&
		    asprintf(&both, "%s%s%s", acc, *acc ? "," : "", one) < 0)
			both = NULL;
		free(one);
		free(acc);
		acc = both;
	}
	return acc;
}

static int group_labels(struct om *m)
{
	m->labels = calloc(m->ng + 1, sizeof(*m->labels));
	if (!m->labels)
		return -ENOMEM;
	for (size_t gi = 0; gi < m->ng; gi++)
		if (!(m->labels[gi] = ctp_om_group_labels(m->g, gi)))
			return -ENOMEM;
	return 0;
}

static const long double *rank_of;
static int by_rank(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	bool ha = !isnan(rank_of[a]), hb = !isnan(rank_of[b]);
	if (ha != hb)
		return ha ? -1 : 1;
	if (ha && rank_of[a] != rank_of[b])
		return rank_of[a] > rank_of[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/* The groups by the ranking fields' sum, largest first. */
static int rank(struct om *m)
{
	long double *r = malloc((m->ng + 1) * sizeof(*r));
	m->order = malloc((m->ng + 1) * sizeof(*m->order));
	if (!r || !m->order) {
		free(r);
		return -ENOMEM;
	}
	for (size_t gi = 0; gi < m->ng; gi++) {
		r[gi] = NAN;
		m->order[gi] = gi;
	}
	if (m->o->series) { /* its exported groups first, in key order */
		m->kept = 0;
		for (size_t gi = 0; gi < m->ng; gi++)
			if (ctp_series_exported(m->o->series, gi))
				m->order[m->kept++] = gi;
		for (size_t gi = 0, k = m->kept; gi < m->ng; gi++)
			if (!ctp_series_exported(m->o->series, gi))
				m->order[k++] = gi;
		free(r);
		return 0;
	}
	const struct ctp_snap_field *fs = ctp_snap_fields(m->snap),
				    *first = NULL;
	size_t found = 0;
	/* Without the ranking's fields: the first thread time counter. */
	for (size_t i = 0; !first && i < ctp_snap_n_fields(m->snap); i++)
		if (fs[i].scope == CTP_SCOPE_THREAD &&
		    fs[i].kind == CTP_KIND_COUNTER && ctp_unit_ns(fs[i].unit))
			first = &fs[i];
	for (size_t k = 0; k <= m->o->n_rank; k++) {
		const struct ctp_snap_field *f =
			k < m->o->n_rank
				? ctp_snap_field_find(m->snap, m->o->rank[k])
			: found ? NULL
				: first;
		const struct ctp_agg *col;
		if (!f ||
		    (f->scope != CTP_SCOPE_THREAD &&
		     f->scope != CTP_SCOPE_PROCESS) ||
		    ctp_groups_aggregate(m->g, f, &col) < 0)
			continue;
		found++;
		for (size_t gi = 0; gi < m->ng; gi++) {
			long double x;
			if (ctp_agg_number(&col[gi], &x))
				r[gi] = isnan(r[gi]) ? x : r[gi] + x;
		}
	}
	rank_of = r;
	qsort(m->order, m->ng, sizeof(*m->order), by_rank);
	free(r);
	m->kept = m->o->top && m->o->top < m->ng ? m->o->top : m->ng;
	if (m->kept == m->ng)
		return 0; /* no other: every group its own series */
	/* A group labelled as other is other's: last, past the cut. */
	size_t k = 0, nother = 0;
	for (size_t i = 0; i < m->ng; i++)
		if (strcmp(m->labels[m->order[i]], CTP_OM_OTHER_LABELS) != 0)
			m->order[k++] = m->order[i];
	for (size_t gi = 0; gi < m->ng; gi++)
		if (strcmp(m->labels[gi], CTP_OM_OTHER_LABELS) == 0)
			m->order[k + nother++] = gi;
	if (m->kept > m->ng - nother)
		m->kept = m->ng - nother;
	return 0;
}

/* A value as label text ("S", "42", "true"); false when absent or not a
 * category. */
static bool value_text(const struct ctp_value *v, char *buf, size_t n)
{
	switch (v->type) {
	case CTP_TYPE_U64:
		snprintf(buf, n, "%" PRIu64, v->u64);
		return true;
	case CTP_TYPE_I64:
		snprintf(buf, n, "%" PRId64, v->i64);
		return true;
	case CTP_TYPE_BOOL:
		snprintf(buf, n, "%s", v->b ? "true" : "false");
		return true;
	case CTP_TYPE_CHAR:
		snprintf(buf, n, "%c", v->c);
		return true;
	}
	return false;
}

struct count {
	char v[32];
	uint64_t n;
};

/* Count value texts of f over rows into c[*nc...] (at most cap). */
static void count_rows(const struct ctp_snap *snap,
		       const struct ctp_snap_field *f, const uint32_t *rows,
		       size_t n, struct count *c, size_t *nc, size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		struct ctp_value v = ctp_snap_value(snap, f, rows[i]);
		char t[32];
		if (!value_text(&v, t, sizeof(t)))
			continue;
		size_t k = 0;
		while (k < *nc && strcmp(c[k].v, t) != 0)
			k++;
		if (k == *nc) {
			if (*nc == cap)
				continue;
			snprintf(c[(*nc)++].v, sizeof(c[0].v), "%s", t);
			c[k].n = 0;
		}
		c[k].n++;
	}
}

#define MAX_VALUES 64

static void put_counts(struct om *m, const char *name, const char *labels,
		       const char *lname, const struct count *c, size_t nc)
{
	for (size_t k = 0; k < nc; k++) {
		char *extra = label(lname, c[k].v, strlen(c[k].v));
		if (!extra) {
			m->err = -ENOMEM;
			return;
		}
		sample(m, name, false, labels, extra, 2 * (__int128)c[k].n, 0);
		free(extra);
	}
}

/* The label of a categorical field's values: its name's last part. */
static void value_label(const struct ctp_snap_field *f, char *buf, size_t n)
{
	const char *dot = strrchr(f->name, '.');
	sanitize(dot ? dot + 1 : f->name, buf, n);
}

/* A categorical field per group: rows per value. */
static void categorical(struct om *m, const struct ctp_snap_field *f,
			const char *name)
{
	char lname[64];
	value_label(f, lname, sizeof(lname));
	struct count c[MAX_VALUES], oc[MAX_VALUES];
	size_t noc = 0;
	for (size_t k = 0; k < m->ng; k++) {
		const struct ctp_group *gr = ctp_groups_at(m->g, m->order[k]);
		const uint32_t *rows = f->scope == CTP_SCOPE_THREAD
					       ? gr->threads
					       : gr->processes;
		size_t n = f->scope == CTP_SCOPE_THREAD ? gr->n_threads
							: gr->n_processes;
		size_t nc = 0;
		if (k >= m->kept) {
			count_rows(m->snap, f, rows, n, oc, &noc, MAX_VALUES);
			continue;
		}
		count_rows(m->snap, f, rows, n, c, &nc, MAX_VALUES);
		put_counts(m, name, m->labels[m->order[k]], lname, c, nc);
	}
	put_counts(m, name, CTP_OM_OTHER_LABELS, lname, oc, noc);
}

/* The rest's aggregate by the field's rule, twice it; false when none,
 * when the rule does not combine or a group's sum is past its type's
 * range (its value is then not known exactly). */
static bool other_value(const struct om *m, const struct ctp_snap_field *f,
			const struct ctp_agg *col, __int128 *out)
{
	bool any = false;
	for (size_t k = m->kept; k < m->ng; k++) {
		const struct ctp_agg *a = &col[m->order[k]];
		__int128 x;
		if (a->saturated || a->unknown)
			return false;
		if (!ctp_agg_twice(a, &x))
			continue;
		if (!any)
			*out = x;
		else if (f->rule == CTP_RULE_SUM)
			*out += x;
		else if (f->rule == CTP_RULE_MAX)
			*out = x > *out ? x : *out;
		else if (f->rule == CTP_RULE_MIN)
			*out = x < *out ? x : *out;
		else
			return false;
		any = true;
	}
	return any;
}

/* A thread or process field per group. */
static void per_group(struct om *m, const struct ctp_snap_field *f,
		      const char *name, bool counter, int k)
{
	const struct ctp_agg *col;
	if (ctp_groups_aggregate(m->g, f, &col) < 0) {
		m->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < m->kept; i++) {
		const struct ctp_agg *a = &col[m->order[i]];
		__int128 x;
		if (a->saturated || a->unknown || !ctp_agg_twice(a, &x))
			continue;
		sample(m, name, counter, m->labels[m->order[i]], NULL, x, k);
	}
	__int128 x;
	if (other_value(m, f, col, &x))
		sample(m, name, counter, CTP_OM_OTHER_LABELS, NULL, x, k);
}

/* A counter the series keeps: each exported group's running sum, and
 * other's (series.h), to three more decimal places than the unit's (an
 * exited task's time converted to the field's unit). */
static void per_series(struct om *m, const struct ctp_snap_field *f,
		       const char *name, int k)
{
	const struct ctp_series *s = m->o->series;
	for (size_t i = 0; i <= ctp_series_n(s); i++) {
		long double x;
		if (!ctp_series_value(s, i, f, &x))
			continue;
		/* Not through a long long: a sum of ns past 4.6e15 (53 days
		 * of CPU over a group) would wrap. */
		__int128 t = (__int128)(x * 2000 + 0.5L);
		sample(m, name, true, ctp_series_labels(s, i), NULL, t, k + 3);
	}
}

/* Has a counter the series keeps a sample? */
static bool series_values(const struct om *m, const struct ctp_snap_field *f)
{
	long double x;
	for (size_t i = 0; i <= ctp_series_n(m->o->series); i++)
		if (ctp_series_value(m->o->series, i, f, &x))
			return true;
	return false;
}

/* A cgroup field per cgroup, or the host's. */
static void per_row(struct om *m, const struct ctp_snap_field *f,
		    const char *name, bool counter, int k, bool cat)
{
	const struct ctp_snap_table *t = ctp_snap_table(m->snap, f->scope);
	char lname[64], text[32], *extra = NULL;
	/* A number's rows from its column. */
	const struct ctp_col *num =
		ctp_field_is_number(f) ? ctp_snap_col(m->snap, f) : NULL;
	if (ctp_field_is_number(f) && !num) {
		m->err = -ENOMEM;
		return;
	}
	value_label(f, lname, sizeof(lname));
	for (size_t r = 0; t && r < t->rows; r++) {
		struct ctp_value v = num ? ctp_col_value(num, r)
					 : ctp_snap_value(m->snap, f, r);
		__int128 x;
		free(extra);
		extra = NULL;
		if (cat) { /* its value as a label, counted once */
			if (!value_text(&v, text, sizeof(text)))
				continue;
			if (!(extra = label(lname, text, strlen(text)))) {
				m->err = -ENOMEM;
				return;
			}
			x = 2;
		} else if (ctp_value_int(&v, &x))
			x *= 2;
		else if (v.type == CTP_TYPE_CPUSET)
			x = 2 * (__int128)ctp_cpuset_count(&v);
		else
			continue;
		char *l = NULL;
		if (f->scope == CTP_SCOPE_CGROUP &&
		    !(l = label("cgroup", t->path[r].ptr ? t->path[r].ptr : "",
				t->path[r].ptr ? t->path[r].len : 0))) {
			m->err = -ENOMEM;
			break;
		}
		sample(m, name, counter, l, extra, x, k);
		free(l);
	}
	free(extra);
}

/* Can field f be a family? */
static bool exported(const struct om *m, const struct ctp_snap_field *f)
{
	if (m->o->want && !m->o->want(m->o->want_arg, f->name))
		return false;
	/* A cpuset only when asked for by name (--fields, a view). */
	if (f->type == CTP_TYPE_CPUSET)
		return m->o->want && f->scope != CTP_SCOPE_EXITED;
	return f->scope != CTP_SCOPE_EXITED && f->type != CTP_TYPE_STRING &&
	       f->kind != CTP_KIND_ORDINAL && f->kind != CTP_KIND_CPUSET;
}

static int by_family(const void *pa, const void *pb, void *arg)
{
	char *const *fam = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(fam[a], fam[b]);
	return c ? c : (a > b) - (a < b);
}

/* Each field's family name, NULL when it has none: not exported, or the
 * name an earlier field's (names that clash once sanitized). Sorted once,
 * so n log n in the fields, never a search per field. */
static int families(struct om *m)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(m->snap);
	size_t n = ctp_snap_n_fields(m->snap), k = 0;
	size_t *idx = malloc((n + 1) * sizeof(*idx));
	m->fam = calloc(n + 1, sizeof(*m->fam));
	if (!idx || !m->fam)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		char name[NAME_MAX_LEN + 32];
		if (!exported(m, &fs[i]))
			continue;
		family(&fs[i], name, sizeof(name));
		if (!(m->fam[i] = strdup(name)))
			goto oom;
		idx[k++] = i;
	}
	qsort_r(idx, k, sizeof(*idx), by_family, m->fam);
	/* In a run of one name the first field (by index) keeps it. */
	for (size_t j = 1, first = 0; j < k; j++) {
		if (strcmp(m->fam[idx[j]], m->fam[idx[first]]) != 0) {
			first = j;
			continue;
		}
		free(m->fam[idx[j]]);
		m->fam[idx[j]] = NULL;
	}
	free(idx);
	return 0;
oom:
	free(idx);
	return -ENOMEM;
}

static void field(struct om *m, const struct ctp_snap_field *f)
{
	const char *name = m->fam[f - ctp_snap_fields(m->snap)];
	int k;
	const char *unit = base_unit(f->unit, &k);
	bool cat = f->kind == CTP_KIND_CATEGORICAL,
	     counter = f->kind == CTP_KIND_COUNTER;
	if (cat || f->type == CTP_TYPE_CPUSET)
		unit = NULL, k = 0;
	if (!name) {
		m->st->skipped++;
		return;
	}
	bool kept =
		m->o->series && counter && ctp_series_counts(m->o->series, f);
	/* A family with no sample says nothing. */
	if (kept ? !series_values(m, f) : !ctp_snap_has_values(m->snap, f))
		return;
	char help[1024];
	snprintf(help, sizeof(help), "%s (field %s%s)", *f->help ? f->help : "",
		 f->name,
		 f->type == CTP_TYPE_CPUSET ? "; CPUs in the set, a group's "
					      "union"
					    : "");
	header(m, name, counter ? "counter" : "gauge", unit,
	       help[0] == ' ' ? help + 1 : help);
	bool grouped =
		f->scope == CTP_SCOPE_THREAD || f->scope == CTP_SCOPE_PROCESS;
	if (kept)
		per_series(m, f, name, k);
	else if (cat && grouped)
		categorical(m, f, name);
	else if (grouped)
		per_group(m, f, name, counter, k);
	else /* a cgroup's or the host's; a category as a label */
		per_row(m, f, name, counter, k, cat);
}

static const char *const status_names[] = {"unknown", "loaded", "failed",
					   "disabled"};

/* A plugin a service left out after it crashed, hung or ran out of
 * memory (core/cli/capsvc.h): failed, with one of those reasons. */
static bool quarantined(const struct ctp_snap_plugin *p)
{
	static const char *const why[] = {
		"crashed: ", "hung: ", "out of memory: "};
	for (size_t i = 0; p->status == 2 && p->reason && i < 3; i++)
		if (strncmp(p->reason, why[i], strlen(why[i])) == 0)
			return true;
	return false;
}

/* The walk's counts and the per-task files that could not be read, by
 * file and why (missing, denied, other). */
static void read_failures(struct om *m)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(m->snap);
	if (!rf)
		return;
	static const char tasks[] = "ctprof_capture_tasks";
	header(m, tasks, "gauge", NULL,
	       "Tasks the walk met: walked, recorded, vanished, by kind");
	const struct {
		const char *l;
		uint64_t v;
	} t[] = {
		{"kind=\"thread\",what=\"walked\"", rf->tids_walked},
		{"kind=\"thread\",what=\"recorded\"", rf->tids_recorded},
		{"kind=\"thread\",what=\"vanished\"", rf->tids_vanished},
		{"kind=\"process\",what=\"walked\"", rf->tgids_walked},
		{"kind=\"process\",what=\"vanished\"", rf->tgids_vanished},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		sample(m, tasks, false, t[i].l, NULL, 2 * (__int128)t[i].v, 0);
	static const char rfn[] = "ctprof_collector_read_failures";
	header(m, rfn, "gauge", NULL,
	       "Per-task files the capture could not read, by file and "
	       "why: missing (ENOENT), denied (EACCES, EPERM), resource "
	       "(EMFILE, ENFILE, ENOMEM, ENOBUFS), other");
	for (size_t i = 0; i < rf->n_files; i++) {
		uint64_t miss = rf->missing ? rf->missing[i] : 0,
			 den = rf->denied ? rf->denied[i] : 0,
			 res = rf->resource ? rf->resource[i] : 0,
			 all = rf->failures[i];
		uint64_t why[4] = {
			miss, den, res,
			all > miss + den + res ? all - miss - den - res : 0};
		static const char *const wn[4] = {"missing", "denied",
						  "resource", "other"};
		char *l = label("file", rf->file[i], strlen(rf->file[i]));
		if (!l) {
			m->err = -ENOMEM;
			return;
		}
		for (int k = 0; k < 4; k++) {
			char e[32];
			snprintf(e, sizeof(e), "reason=\"%s\"", wn[k]);
			if (why[k])
				sample(m, rfn, false, l, e,
				       2 * (__int128)why[k], 0);
		}
		free(l);
	}
}

/* The plugins, and the capture itself. */
static void collectors(struct om *m)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(m->snap);
	size_t n = ctp_snap_n_plugins(m->snap);
	struct {
		const char *name, *help;
	} g[] = {
		{"ctprof_collector_info",
		 "A collector plugin of the capture: version and status"},
		{"ctprof_collector_seconds",
		 "CPU the plugin's callbacks took in the capture"},
		{"ctprof_collector_calls", "Callbacks into the plugin"},
		{"ctprof_collector_errors", "Callbacks that failed"},
		{"ctprof_collector_vanished",
		 "Tasks that vanished while the plugin read them"},
		{"ctprof_collector_stat",
		 "The plugin's own counters of the capture (its summary)"},
	};
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		header(m, g[i].name, "gauge", i == 1 ? "seconds" : NULL,
		       g[i].help);
		for (size_t j = 0; j < n; j++) {
			char *l = label("plugin", p[j].name, strlen(p[j].name));
			char *e = NULL, *v = NULL;
			if (!l) {
				m->err = -ENOMEM;
				return;
			}
			if (i == 0) {
				const char *ver =
					p[j].version ? p[j].version : "";
				v = label("version", ver, strlen(ver));
				const char *st =
					status_names[p[j].status < 4
							     ? p[j].status
							     : 0];
				if (quarantined(&p[j]))
					st = "quarantined";
				if (v &&
				    asprintf(&e, "%s,status=\"%s\"", v, st) < 0)
					e = NULL;
				sample(m, g[i].name, false, l, e, 2, 0);
			}
			for (size_t s = 0; i == 5 && s < p[j].n_summary; s++) {
				free(e);
				e = label("name", p[j].summary_name[s],
					  strlen(p[j].summary_name[s]));
				sample(m, g[i].name, false, l, e,
				       2 * (__int128)p[j].summary[s], 0);
			}
			uint64_t x[] = {0, p[j].time_ns, p[j].calls,
					p[j].errors, p[j].vanished};
			if (i >= 1 && i <= 4)
				sample(m, g[i].name, false, l, NULL,
				       2 * (__int128)x[i], i == 1 ? 9 : 0);
			free(v);
			free(e);
			free(l);
		}
	}
	read_failures(m);
	const struct ctp_snap_header *h = ctp_snap_header(m->snap);
	header(m, "ctprof_capture_duration_seconds", "gauge", "seconds",
	       "How long the capture took");
	sample(m, "ctprof_capture_duration_seconds", false, NULL, NULL,
	       2 * (__int128)h->duration_ns, 9);
	header(m, "ctprof_capture_timestamp_seconds", "gauge", "seconds",
	       "When the capture started, seconds since the epoch");
	sample(m, "ctprof_capture_timestamp_seconds", false, NULL, NULL,
	       2 * (__int128)h->start_realtime_ns, 9);
}

/* The series' own: how many, and the exited tasks per group. */
static void series_families(struct om *m)
{
	const struct ctp_series *s = m->o->series;
	struct ctp_series_stats st;
	ctp_series_stats(s, &st);
	static const char xt[] = "ctprof_exited_tasks";
	header(m, xt, "counter", NULL,
	       "Tasks (threads) that exited between captures, by the group "
	       "they were in, since the exporter started");
	for (size_t i = 0; i <= ctp_series_n(s); i++)
		sample(m, xt, true, ctp_series_labels(s, i), NULL,
		       2 * (__int128)ctp_series_exited(s, i), 0);
	static const char sn[] = "ctprof_series";
	header(m, sn, "gauge", NULL,
	       "Group series exported (group=\"other\" included), groups "
	       "remembered, and exported groups dropped so far by the TTL "
	       "(--series-ttl) and by the cap");
	const struct {
		const char *what;
		size_t n;
	} w[] = {{"what=\"exported\"", st.series},
		 {"what=\"tracked\"", st.tracked},
		 {"what=\"expired\"", st.expired},
		 {"what=\"capped\"", st.capped}};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		sample(m, sn, false, w[i].what, NULL, 2 * (__int128)w[i].n, 0);
	if (!st.exits)
		return;
	static const char lo[] = "ctprof_exited_lost";
	header(m, lo, "counter", NULL,
	       "Exits the plugins said they missed, since the exporter "
	       "started");
	sample(m, lo, true, NULL, NULL, 2 * (__int128)st.lost, 0);
}

int ctp_om_write(FILE *out, const struct ctp_snap *snap, struct ctp_groups *g,
		 const struct ctp_om_opts *o, struct ctp_om_stats *st)
{
	struct om m = {.out = out, .o = o, .st = st, .snap = snap, .g = g};
	memset(st, 0, sizeof(*st));
	m.ng = ctp_groups_count(g);
	int r = group_labels(&m);
	if (r == 0)
		r = rank(&m);
	if (r == 0)
		r = families(&m);
	st->groups = m.ng;
	st->kept = m.kept;
	const struct ctp_snap_field *f = ctp_snap_fields(snap);
	for (size_t i = 0; r == 0 && !m.err && i < ctp_snap_n_fields(snap); i++)
		field(&m, &f[i]);
	if (r == 0 && !m.err)
		collectors(&m);
	if (r == 0 && !m.err && o->series)
		series_families(&m);
	if (r == 0 && !m.err && o->openmetrics)
		fputs("# EOF\n", out);
	for (size_t gi = 0; m.labels && gi < m.ng; gi++)
		free(m.labels[gi]);
	for (size_t i = 0; m.fam && i < ctp_snap_n_fields(snap); i++)
		free(m.fam[i]);
	free(m.labels);
	free(m.fam);
	free(m.order);
	if (r == 0)
		r = m.err;
	return r == 0 && ferror(out) ? -EIO : r;
}

/* ---- A recording: families over time -------------------------------------*/

struct tl_family {
	char *name;
	char *head, *body; /* # lines once; samples of every capture */
	size_t head_len, body_len;
	FILE *hf, *bf;
};

struct ctp_om_timeline {
	/* Each its own block: its memory streams point into it. */
	struct tl_family **f;
	size_t n;
};

int ctp_om_timeline_new(struct ctp_om_timeline **ret)
{
	return (*ret = calloc(1, sizeof(**ret))) ? 0 : -ENOMEM;
}

void ctp_om_timeline_free(struct ctp_om_timeline *t)
{
	for (size_t i = 0; t && i < t->n; i++) {
		fclose(t->f[i]->hf);
		fclose(t->f[i]->bf);
		free(t->f[i]->head);
		free(t->f[i]->body);
		free(t->f[i]->name);
		free(t->f[i]);
	}
	if (t)
		free(t->f);
	free(t);
}

/* The family `name` (len bytes), made when new (*fresh). */
static struct tl_family *tl_family(struct ctp_om_timeline *t, const char *name,
				   size_t len, bool *fresh)
{
	*fresh = false;
	for (size_t i = t->n; i-- > 0;)
		if (strlen(t->f[i]->name) == len &&
		    memcmp(t->f[i]->name, name, len) == 0)
			return t->f[i];
	struct tl_family **nf = realloc(t->f, (t->n + 1) * sizeof(*nf)), *f;
	if (!nf)
		return NULL;
	t->f = nf;
	if (!(f = calloc(1, sizeof(*f))))
		return NULL;
	if (!(f->name = strndup(name, len)) ||
	    !(f->hf = open_memstream(&f->head, &f->head_len)) ||
	    !(f->bf = open_memstream(&f->body, &f->body_len))) {
		if (f->hf)
			fclose(f->hf);
		free(f->head);
		free(f->name);
		free(f);
		return NULL;
	}
	nf[t->n++] = f;
	*fresh = true;
	return f;
}

/* One capture's exposition, its lines to their families. */
static int tl_split(struct ctp_om_timeline *t, const char *text, size_t len)
{
	struct tl_family *cur = NULL;
	bool fresh = false;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (l >= 7 && memcmp(p, "# TYPE ", 7) == 0) {
			const char *n = p + 7, *sp = memchr(n, ' ', l - 7);
			if (!sp ||
			    !(cur = tl_family(t, n, (size_t)(sp - n), &fresh)))
				return -ENOMEM;
		}
		if (cur && p[0] == '#' && (l < 5 || memcmp(p, "# EOF", 5))) {
			if (fresh)
				fwrite(p, 1, l, cur->hf);
		} else if (cur && p[0] != '#') {
			fwrite(p, 1, l, cur->bf);
		}
		p += l;
	}
	return 0;
}

int ctp_om_timeline_add(struct ctp_om_timeline *t, const struct ctp_snap *snap,
			struct ctp_groups *g, const struct ctp_om_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	struct ctp_om_stats st;
	struct ctp_om_opts oo = *o;
	oo.openmetrics = true;
	if (!oo.timestamp_ns)
		oo.timestamp_ns = ctp_snap_header(snap)->start_realtime_ns;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	int r = ctp_om_write(f, snap, g, &oo, &st);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = tl_split(t, buf, len);
	free(buf);
	return r;
}

int ctp_om_timeline_write(struct ctp_om_timeline *t, FILE *out)
{
	for (size_t i = 0; i < t->n; i++) {
		struct tl_family *f = t->f[i];
		if (fflush(f->hf) != 0 || fflush(f->bf) != 0)
			return -ENOMEM;
		fwrite(f->head, 1, f->head_len, out);
		fwrite(f->body, 1, f->body_len, out);
	}
	fputs("# EOF\n", out);
	return ferror(out) ? -EIO : 0;
}
