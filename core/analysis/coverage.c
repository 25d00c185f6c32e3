/* SPDX-License-Identifier: MIT */
/* Coverage of a comparison (see coverage.h). */
#include "coverage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "interval.h"
#include "group.h"
#include "render.h"

/* A counter's change in `row` (the interval model's: a new task and a
 * reset counter count their CAND value, one whose BASE value is unknown
 * nothing), in seconds. */
static double change_s(const struct ctp_interval_col *c, size_t row)
{
	return (double)c->d[row] * (double)ctp_unit_seconds(c->f[1]->unit);
}

/* The changes of the fields of view list l in CAND, time counters of
 * `scope`; *n of them. `first`: only the first present. Returns 0 or
 * -ENOMEM. */
static int fields_of(struct ctp_interval *iv, const struct ctp_view_col *l,
		     uint8_t scope, bool first,
		     const struct ctp_interval_col **f, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < l->n_fields && !(first && *n); i++) {
		const struct ctp_snap_field *c = ctp_snap_field_find(
			ctp_interval_snap(iv, 1), l->fields[i]);
		if (!c || c->scope != scope || !ctp_unit_seconds(c->unit))
			continue;
		if (ctp_interval_col(iv, c, &f[*n]) < 0)
			return -ENOMEM;
		(*n)++;
	}
	return 0;
}

static const char *const *cg_sorted;
static int cmp_cg(const void *a, const void *b)
{
	return strcmp(cg_sorted[*(const size_t *)a],
		      cg_sorted[*(const size_t *)b]);
}

/* The index in order[] (sorted paths) of `path` (len bytes), or -1. */
static long find_path(const char *const *paths, const size_t *order, size_t n,
		      const char *path, size_t len)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *p = paths[order[mid]];
		int c = strncmp(p, path, len);
		if (c == 0)
			c = p[len] ? 1 : 0;
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Add x to acc[] of the cgroup at path p (len bytes) and of each of its
 * ancestors that paths[] (sorted by order[]) has. */
static void roll(const char *const *paths, const size_t *order, size_t n,
		 const char *p, size_t len, double x, double *acc)
{
	long k = find_path(paths, order, n, p, len);
	if (k >= 0)
		acc[order[k]] += x;
	while (len > 1) {
		while (len > 1 && p[len - 1] != '/')
			len--;
		len = len > 1 ? len - 1 : 1; /* "/a/b" -> "/a" -> "/" */
		if ((k = find_path(paths, order, n, p, len)) >= 0)
			acc[order[k]] += x;
	}
}

/* Per cgroup: its threads' CPU and its exited tasks', each rolled up to
 * every ancestor. */
static int roll_up(struct ctp_coverage_cg *cg, const char *const *paths,
		   const double *direct, size_t n,
		   const struct ctp_exit_sum *ex)
{
	size_t *order = calloc(n + 1, sizeof(*order));
	double *acc = calloc(2 * n + 1, sizeof(*acc));
	if (!order || !acc) {
		free(order);
		free(acc);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	cg_sorted = paths;
	qsort(order, n, sizeof(*order), cmp_cg);
	for (size_t r = 0; r < n; r++)
		if (direct[r] != 0 && paths[r][0] == '/')
			roll(paths, order, n, paths[r], strlen(paths[r]),
			     direct[r], acc);
	for (size_t i = 0; ex && i < ex->tasks; i++) {
		const struct ctp_bytes *p = &ex->id[i].cgroup;
		if (p->ptr && p->len && p->ptr[0] == '/' && ex->cpu_of[i] > 0)
			roll(paths, order, n, p->ptr, p->len, ex->cpu_of[i],
			     acc + n);
	}
	for (size_t r = 0; r < n; r++) {
		cg[r].threads = acc[r];
		cg[r].exited = acc[n + r];
	}
	free(order);
	free(acc);
	return 0;
}

static int by_gap(const void *pa, const void *pb)
{
	const struct ctp_coverage_cg *a = pa, *b = pb;
	double ga = a->usage - a->threads - a->exited,
	       gb = b->usage - b->threads - b->exited;
	return (ga < gb) - (ga > gb);
}

/* Cgroups: usage over the interval, threads' CPU rolled up, the root's
 * usage as the host's. */
static int cgroups(struct ctp_interval *iv, const struct ctp_view *v,
		   const double *tcpu, struct ctp_coverage *c)
{
	const struct ctp_snap *cand = ctp_interval_snap(iv, 1);
	const struct ctp_exit_sum *ex = ctp_interval_exited(iv);
	const struct ctp_snap_table *ct = ctp_snap_table(cand,
							 CTP_SCOPE_CGROUP),
				    *tt = ctp_snap_table(cand,
							 CTP_SCOPE_THREAD);
	const struct ctp_interval_col *uf[1];
	size_t nu, n = ct ? ct->rows : 0;
	if (fields_of(iv, &v->coverage[CTP_VIEW_COVER_CGROUP], CTP_SCOPE_CGROUP,
		      true, uf, &nu) < 0)
		return -ENOMEM;
	if (!nu || !n)
		return 0;
	c->cg = calloc(n, sizeof(*c->cg));
	const char **paths = calloc(n, sizeof(*paths));
	double *direct = calloc(n, sizeof(*direct));
	int r = c->cg && paths && direct ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		/* v2 paths only ("v1:..." rows are another hierarchy). */
		const struct ctp_bytes *p = &ct->path[i];
		paths[i] = p->ptr && p->len && p->ptr[0] == '/' &&
					   !memchr(p->ptr, '\0', p->len)
				   ? strndup(p->ptr, p->len)
				   : strdup("");
		if (!paths[i])
			r = -ENOMEM;
		c->cg[i].path = paths[i];
		c->cg[i].usage = change_s(uf[0], i);
	}
	for (size_t t = 0; r == 0 && tt && t < tt->rows; t++)
		if (tt->cgroup[t] >= 0 && (size_t)tt->cgroup[t] < n)
			direct[tt->cgroup[t]] += tcpu[t];
	if (r == 0)
		r = roll_up(c->cg, paths, direct, n, ex);
	c->n_cg = r == 0 ? n : 0;
	for (size_t i = 0; r == 0 && i < n; i++)
		if (strcmp(paths[i], "/") == 0)
			c->host = c->cg[i].usage;
	if (r == 0)
		qsort(c->cg, n, sizeof(*c->cg), by_gap);
	for (size_t i = 0; r < 0 && paths && i < n; i++)
		free((char *)paths[i]);
	if (r < 0) {
		free(c->cg);
		c->cg = NULL;
	}
	free(paths); /* else the strings belong to c->cg now */
	free(direct);
	return r;
}

int ctp_coverage_compute(struct ctp_interval *iv, const struct ctp_view *v,
			 struct ctp_coverage *c)
{
	memset(c, 0, sizeof(*c));
	c->host = c->exited = -1;
	const struct ctp_interval_col *tf[CTP_VIEW_MAX_FIELDS];
	const struct ctp_ident *id = ctp_interval_ident(iv);
	const struct ctp_exit_sum *ex = ctp_interval_exited(iv);
	size_t ntf;
	const struct ctp_snap_table *tt =
		ctp_snap_table(ctp_interval_snap(iv, 1), CTP_SCOPE_THREAD);
	if (!id->ok || !tt)
		return 0;
	if (fields_of(iv, &v->coverage[CTP_VIEW_COVER_THREADS],
		      CTP_SCOPE_THREAD, false, tf, &ntf) < 0)
		return -ENOMEM;
	if (!ntf)
		return 0;
	double *tcpu = calloc(tt->rows ? tt->rows : 1, sizeof(*tcpu));
	if (!tcpu)
		return -ENOMEM;
	/* The cgroups' usage is over the time between the captures' reads
	 * of the cgroups, each thread's change over the time between its
	 * process's reads: a thread's change at its rate over the cgroups'
	 * time is what their usage holds of it (a capture of a large or
	 * busy host reads its first process seconds before the cgroups). */
	double cgiv = ctp_ident_task_interval(id, CTP_SCOPE_CGROUP, 0);
	for (size_t t = 0; t < tt->rows; t++) {
		double tiv = ctp_ident_task_interval(id, CTP_SCOPE_THREAD, t);
		for (size_t k = 0; k < ntf; k++)
			tcpu[t] += change_s(tf[k], t);
		if (tiv > 0 && cgiv > 0)
			tcpu[t] *= cgiv / tiv;
		c->threads += tcpu[t];
	}
	if (ex) {
		c->exited = ex->cpu;
		c->n_exited = ex->tasks;
	}
	int r = cgroups(iv, v, tcpu, c);
	free(tcpu);
	c->ok = r == 0;
	return r;
}

static void put_line(FILE *out, const char *line, size_t width)
{
	if (width && ctp_render_width(line) > width)
		fprintf(out, "%.*s\n", (int)width, line);
	else
		fprintf(out, "%s\n", line);
}

void ctp_coverage_print(FILE *out, const struct ctp_coverage *c, size_t width)
{
	char line[512], name[64];
	/* Below half a second the line is rounding: thread times are in
	 * clock ticks (10 ms), the cgroups' in microseconds. */
	if (!c->ok || c->host < 0.5)
		return;
	double pct = c->threads < c->host ? c->threads / c->host * 100 : 100;
	double rest = c->host - c->threads - (c->exited > 0 ? c->exited : 0);
	if (c->exited >= 0)
		snprintf(
			line, sizeof(line),
			"CPU %.1f s: threads %.1f s (%.0f%%), %zu exited tasks "
			"%.1f s (%.0f%%), rest %.1f s",
			c->host, c->threads, pct, c->n_exited, c->exited,
			c->exited / c->host * 100, rest);
	else
		snprintf(line, sizeof(line),
			 "CPU %.1f s: threads %.1f s (%.0f%%), the rest %.1f s "
			 "(%.0f%%) in tasks that exited",
			 c->host, c->threads, pct, rest > 0 ? rest : 0,
			 rest > 0 ? rest / c->host * 100 : 0);
	put_line(out, line, width);
	/* Where the unexplained CPU ran: cgroups that lost 5% of the host's
	 * and 0.1 s or more. */
	for (size_t i = 0, shown = 0; i < c->n_cg && shown < 3; i++) {
		const struct ctp_coverage_cg *g = &c->cg[i];
		double gap = g->usage - g->threads - g->exited;
		if (gap < 0.1 || gap < c->host * 0.05)
			break;
		if (!g->path[0] || strcmp(g->path, "/") == 0)
			continue;
		ctp_render_escape(g->path, strlen(g->path), 40, name,
				  sizeof(name));
		int k = snprintf(line, sizeof(line),
				 "  %s %.1f s: threads %.1f s (%.0f%%)", name,
				 g->usage, g->threads,
				 g->usage > 0 ? g->threads / g->usage * 100
					      : 0);
		if (c->exited >= 0 && k > 0 && (size_t)k < sizeof(line))
			snprintf(line + k, sizeof(line) - (size_t)k,
				 ", exited %.1f s (%.0f%%)", g->exited,
				 g->usage > 0 ? g->exited / g->usage * 100 : 0);
		put_line(out, line, width);
		shown++;
	}
}

void ctp_coverage_free(struct ctp_coverage *c)
{
	for (size_t i = 0; i < c->n_cg; i++)
		free((char *)c->cg[i].path);
	free(c->cg);
	memset(c, 0, sizeof(*c));
}
