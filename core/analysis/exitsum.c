/* SPDX-License-Identifier: MIT */
/* Tasks that exited between two snapshots (see exitsum.h). */
#include "exitsum.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "render.h"

/* The sum of the time fields `names` (scope) of `row`, seconds. */
static double cpu_of(const struct ctp_snap *snap, const struct ctp_view_col *l,
		     uint8_t scope, size_t row)
{
	double sum = 0;
	for (size_t i = 0; i < l->n_fields; i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(snap, l->fields[i]);
		if (!f || f->scope != scope || !ctp_render_unit_s(f->unit))
			continue;
		struct ctp_value v = ctp_snap_value(snap, f, row);
		if (v.type == CTP_TYPE_U64)
			sum += (double)v.u64 * ctp_render_unit_s(f->unit);
	}
	return sum;
}

/* The row of tid in a table sorted by (tgid, tid), by a scan of the
 * tgid's run: -1 when absent. */
static long row_of(const struct ctp_snap_table *t, uint64_t tgid, uint64_t tid)
{
	size_t lo = 0, hi = t ? t->rows : 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->tgid[mid] < tgid ||
		    (t->tgid[mid] == tgid && t->tid && t->tid[mid] < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (t ? t->rows : 0) && t->tgid[lo] == tgid &&
	    (!t->tid || t->tid[lo] == tid))
		return (long)lo;
	return -1;
}

struct entry {
	char *name;
	double cpu;
};

/* The process name of an exited row: its own comm for a main thread,
 * else its process's from the file or BASE, else its own. */
static const struct ctp_bytes *pname(const struct ctp_snap *f,
				     const struct ctp_snap *base,
				     const struct ctp_snap_table *x, size_t r)
{
	if (x->tgid && x->tgid[r] && x->tgid[r] != x->tid[r]) {
		const struct ctp_snap *in[2] = {f, base};
		for (int k = 0; k < 2; k++) {
			const struct ctp_snap_table *p =
				ctp_snap_table(in[k], CTP_SCOPE_PROCESS);
			long pr = row_of(p, x->tgid[r], 0);
			if (pr >= 0 && p->comm[pr].ptr)
				return &p->comm[pr];
		}
	}
	return &x->comm[r];
}

/* One file's rows into e[*n...]. */
static int add_file(const struct ctp_snap *base, const struct ctp_snap *f,
		    const struct ctp_view *v, struct ctp_exit_sum *s,
		    struct entry **e, size_t *n, size_t *cap)
{
	const struct ctp_snap_table *x = ctp_snap_table(f, CTP_SCOPE_EXITED),
				    *bt = ctp_snap_table(base,
							 CTP_SCOPE_THREAD);
	uint64_t from = ctp_snap_header(base)->start_boottime_ns;
	const struct ctp_snap_plugin *p = ctp_snap_plugins(f);
	for (size_t i = 0; i < ctp_snap_n_plugins(f); i++)
		if (p[i].exited) {
			s->present = true;
			s->lost += p[i].exited_lost;
		}
	s->files++;
	for (size_t r = 0; x && r < x->rows; r++) {
		if (x->exit_ns && x->exit_ns[r] && from &&
		    x->exit_ns[r] <= from)
			continue; /* gone before BASE: not this interval */
		double cpu = cpu_of(f, &v->coverage[CTP_VIEW_COVER_EXITED],
				    CTP_SCOPE_EXITED, r);
		long b = x->tgid ? row_of(bt, x->tgid[r], x->tid[r]) : -1;
		if (b >= 0) /* what BASE already counted of it */
			cpu -= cpu_of(base,
				      &v->coverage[CTP_VIEW_COVER_THREADS],
				      CTP_SCOPE_THREAD, (size_t)b);
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			struct entry *ne = realloc(*e, nc * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			*e = ne, *cap = nc;
		}
		const struct ctp_bytes *nm = pname(f, base, x, r);
		char raw[64], norm[256];
		ctp_render_escape(nm->ptr ? nm->ptr : "?",
				  nm->ptr ? nm->len : 1, 32, raw, sizeof(raw));
		ctp_norm_name(raw, strlen(raw), norm, sizeof(norm));
		if (!((*e)[*n].name = strdup(norm)))
			return -ENOMEM;
		(*e)[(*n)++].cpu = cpu > 0 ? cpu : 0;
		s->tasks++;
		s->cpu += cpu > 0 ? cpu : 0;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
		      ((const struct entry *)b)->name);
}

static int by_cpu(const void *pa, const void *pb)
{
	const struct ctp_exit_group *a = pa, *b = pb;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Entries of one name into one group, the largest CPU first. */
static int group(struct ctp_exit_sum *s, struct entry *e, size_t n)
{
	if (n)
		qsort(e, n, sizeof(*e), by_name);
	s->g = calloc(n ? n : 1, sizeof(*s->g));
	if (!s->g)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!s->n_g || strcmp(s->g[s->n_g - 1].name, e[i].name) != 0) {
			s->g[s->n_g++].name = e[i].name;
			e[i].name = NULL;
		}
		s->g[s->n_g - 1].tasks++;
		s->g[s->n_g - 1].cpu += e[i].cpu;
	}
	qsort(s->g, s->n_g, sizeof(*s->g), by_cpu);
	return 0;
}

int ctp_exit_sum(const struct ctp_snap *base,
		 const struct ctp_snap *const *files, size_t n,
		 const struct ctp_view *v, struct ctp_exit_sum *s)
{
	struct entry *e = NULL;
	size_t ne = 0, cap = 0;
	int r = 0;
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; r == 0 && i < n; i++)
		r = add_file(base, files[i], v, s, &e, &ne, &cap);
	if (r == 0)
		r = group(s, e, ne);
	for (size_t i = 0; i < ne; i++)
		free(e[i].name);
	free(e);
	return r;
}

void ctp_exit_sum_print(FILE *out, const struct ctp_exit_sum *s,
			double interval_s, size_t top, size_t width)
{
	if (!s->present)
		return;
	size_t shown = top && top < s->n_g ? top : s->n_g;
	fprintf(out, "\nExited in the interval: %zu tasks, %.1f s of CPU",
		s->tasks, s->cpu);
	if (s->lost)
		fprintf(out, ", %llu more lost", (unsigned long long)s->lost);
	fputc('\n', out);
	if (!s->n_g)
		return;
	size_t nw = 7;
	for (size_t i = 0; i < shown; i++) {
		size_t w = ctp_render_width(s->g[i].name);
		nw = w > nw ? w : nw;
	}
	if (width && nw > width / 2)
		nw = width / 2;
	fprintf(out, "%-*s %6s %6s %7s\n", (int)nw, "COMMAND", "TASKS", "CPU%",
		"TIME");
	for (size_t i = 0; i < shown; i++) {
		const struct ctp_exit_group *g = &s->g[i];
		char t[32];
		ctp_render_duration(t, sizeof(t), g->cpu);
		fprintf(out, "%-*.*s %6zu %6.1f %7s\n", (int)nw, (int)nw,
			g->name, g->tasks,
			interval_s > 0 ? g->cpu / interval_s * 100 : 0, t);
	}
	if (shown < s->n_g)
		fprintf(out, "  %zu more names (--top 0 shows all)\n",
			s->n_g - shown);
}

void ctp_exit_sum_free(struct ctp_exit_sum *s)
{
	for (size_t i = 0; i < s->n_g; i++)
		free(s->g[i].name);
	free(s->g);
	memset(s, 0, sizeof(*s));
}
