/* SPDX-License-Identifier: MIT */
/* Renamed cgroups across two snapshots (rename.h). */
#include "rename.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

/* One distinct key-part value of one side: its path and the sorted,
 * distinct thread types of the threads under it. */
struct val {
	const char *path;
	uint32_t *types;
	uint32_t nt, threads;
	bool paired;
};

/* One thread of a one-sided value, for interning its type. */
struct tref {
	char *s;	/* pcomm, NUL, comm, NUL */
	size_t len, lp; /* all of s; its pcomm */
	uint32_t side, val;
};

struct cand {
	uint32_t i, j, shared;
	double jac;
};

struct ctp_rename {
	struct ctp_groups *g[2];
	size_t part;
	struct ctp_rename_opts o;
	struct val *v[2]; /* one-sided values, sorted by path */
	size_t nv[2];
	struct tref *types; /* interned: s and the length of its pcomm */
	size_t ntypes;
	struct ctp_rename_pair *pairs;
	size_t npairs;
	size_t *by[2]; /* pair indexes sorted by path[k] */
	uint64_t work;
	bool gave_up;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool in_sorted(const char *const *v, size_t n, const char *s)
{
	return n && bsearch(&s, v, n, sizeof(*v), cmp_str) != NULL;
}

/* The distinct non-NULL values of key part `part` of g, sorted, in *out. */
static int distinct(const struct ctp_groups *g, size_t part, const char ***out,
		    size_t *n)
{
	size_t ng = ctp_groups_count(g), m = 0;
	const char **v = calloc(ng + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* A group of exited tasks only (compare's) is no live cgroup. */
	for (size_t i = 0; i < ng; i++)
		if (ctp_groups_at(g, i)->key[part] &&
		    ctp_groups_at(g, i)->n_threads)
			v[m++] = ctp_groups_at(g, i)->key[part];
	qsort(v, m, sizeof(*v), cmp_str);
	*n = 0;
	for (size_t i = 0; i < m; i++)
		if (!*n || strcmp(v[*n - 1], v[i]))
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}

/* The values of each side that the other lacks, into r->v. */
static int one_sided(struct ctp_rename *r)
{
	const char **d[2] = {NULL, NULL};
	size_t nd[2] = {0, 0};
	int rc = 0;

	for (int k = 0; k < 2 && rc == 0; k++)
		rc = distinct(r->g[k], r->part, &d[k], &nd[k]);
	for (int k = 0; k < 2 && rc == 0; k++) {
		r->v[k] = calloc(nd[k] + 1, sizeof(*r->v[k]));
		if (!r->v[k]) {
			rc = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < nd[k]; i++)
			if (!in_sorted(d[!k], nd[!k], d[k][i]))
				r->v[k][r->nv[k]++].path = d[k][i];
	}
	free(d[0]);
	free(d[1]);
	return rc;
}

static struct val *find_val(struct val *v, size_t n, const char *path)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].path, path);
		if (!c)
			return &v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The process row of tgid (the process table is in tgid order), or -1. */
static long proc_row(const struct ctp_snap_table *pr, uint64_t tgid)
{
	size_t lo = 0, hi = pr->rows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pr->tgid[mid] == tgid)
			return (long)mid;
		if (pr->tgid[mid] < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* A name normalized into a new string ("" for none). */
static char *norm(const struct ctp_bytes *b, size_t *len)
{
	const char *s = b && b->ptr ? b->ptr : "";
	size_t n = b && b->ptr ? b->len : 0;
	*len = ctp_norm_name(s, n, NULL, 0);
	char *out = malloc(*len + 1);
	if (out)
		ctp_norm_name(s, n, out, *len + 1);
	return out;
}

/* Thread row t's type: "pcomm\0comm\0" of snap. */
static char *type_of(const struct ctp_snap *snap, uint32_t t, size_t *len,
		     size_t *plen)
{
	const struct ctp_snap_table *th = ctp_snap_table(snap,
							 CTP_SCOPE_THREAD),
				    *pr = ctp_snap_table(snap,
							 CTP_SCOPE_PROCESS);
	long p = proc_row(pr, th->tgid[t]);
	size_t lp, lc;
	char *a = norm(p >= 0 ? &pr->comm[p] : NULL, &lp);
	char *c = norm(&th->comm[t], &lc);
	char *s = a && c ? malloc(lp + lc + 2) : NULL;
	if (s) {
		memcpy(s, a, lp + 1);
		memcpy(s + lp + 1, c, lc + 1);
		*len = lp + lc + 2;
		*plen = lp;
	}
	free(a);
	free(c);
	return s;
}

/* The threads of the one-sided values, each with its type string. */
static int collect_threads(struct ctp_rename *r, struct tref **ret, size_t *n)
{
	size_t cap = 1;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < ctp_groups_count(r->g[k]); i++)
			cap += ctp_groups_at(r->g[k], i)->n_threads;
	struct tref *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*ret = t;
	*n = 0;
	for (uint32_t k = 0; k < 2; k++) {
		const struct ctp_snap *snap = ctp_groups_snap(r->g[k]);
		for (size_t i = 0; i < ctp_groups_count(r->g[k]); i++) {
			const struct ctp_group *gr = ctp_groups_at(r->g[k], i);
			const char *p = gr->key[r->part];
			struct val *v =
				p ? find_val(r->v[k], r->nv[k], p) : NULL;
			for (uint32_t j = 0; v && j < gr->n_threads; j++) {
				struct tref *e = &t[(*n)++];
				e->side = k;
				e->val = (uint32_t)(v - r->v[k]);
				e->s = type_of(snap, gr->threads[j], &e->len,
					       &e->lp);
				if (!e->s)
					return -ENOMEM;
				v->threads++;
			}
		}
	}
	return 0;
}

static int cmp_trefs(const void *pa, const void *pb)
{
	const struct tref *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->s, b->s, n);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return (a > b) - (a < b);
}

/* Each value's types as sorted distinct ids into the interned r->types;
 * the strings of t move there or are freed. */
static int assign_types(struct ctp_rename *r, struct tref *t, size_t n,
			uint32_t *ids)
{
	qsort(t, n, sizeof(*t), cmp_trefs);
	r->types = calloc(n + 1, sizeof(*r->types));
	if (!r->types)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!r->ntypes || cmp_trefs(&r->types[r->ntypes - 1], &t[i])) {
			r->types[r->ntypes++] = t[i];
			t[i].s = NULL;
		}
		ids[i] = (uint32_t)(r->ntypes - 1);
		r->v[t[i].side][t[i].val].nt++;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < r->nv[k]; i++) {
			struct val *v = &r->v[k][i];
			v->types = calloc(v->nt + 1, sizeof(*v->types));
			if (!v->types)
				return -ENOMEM;
			v->nt = 0;
		}
	for (size_t i = 0; i < n; i++) {
		struct val *v = &r->v[t[i].side][t[i].val];
		v->types[v->nt++] = ids[i];
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < r->nv[k]; i++) {
			struct val *v = &r->v[k][i];
			uint32_t m = 0;
			qsort(v->types, v->nt, sizeof(*v->types), cmp_u32);
			for (uint32_t j = 0; j < v->nt; j++)
				if (!m || v->types[m - 1] != v->types[j])
					v->types[m++] = v->types[j];
			v->nt = m;
		}
	return 0;
}

static int build_types(struct ctp_rename *r)
{
	struct tref *t = NULL;
	size_t n = 0;
	uint32_t *ids = NULL;
	int rc = collect_threads(r, &t, &n);
	if (rc == 0 && !(ids = calloc(n + 1, sizeof(*ids))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = assign_types(r, t, n, ids);
	for (size_t i = 0; t && i < n; i++)
		free(t[i].s);
	free(t);
	free(ids);
	return rc;
}

/* Types a and b share (both sorted, distinct). */
static uint32_t shared_of(const struct val *a, const struct val *b)
{
	uint32_t i = 0, j = 0, s = 0;
	while (i < a->nt && j < b->nt) {
		if (a->types[i] == b->types[j])
			s++, i++, j++;
		else if (a->types[i] < b->types[j])
			i++;
		else
			j++;
	}
	return s;
}

static bool over(const struct ctp_rename *r, uint32_t shared, uint32_t uni)
{
	return shared >= r->o.min_shared &&
	       (double)shared >= r->o.min_jaccard * (double)uni - 1e-9;
}

/* BASE value i against CAND value j: into c when over the thresholds.
 * False when the work bound is hit. */
static bool try_pair(struct ctp_rename *r, uint32_t i, uint32_t j,
		     struct cand *c, bool *keep)
{
	const struct val *a = &r->v[0][i], *b = &r->v[1][j];
	uint32_t lo = a->nt < b->nt ? a->nt : b->nt,
		 hi = a->nt < b->nt ? b->nt : a->nt;
	*keep = false;
	if (++r->work > CTP_RENAME_MAX_WORK)
		return false;
	/* The overlap is at most the smaller set: skip without merging. */
	if (!hi || !over(r, lo, hi))
		return true;
	r->work += a->nt + b->nt;
	if (r->work > CTP_RENAME_MAX_WORK)
		return false;
	uint32_t s = shared_of(a, b), uni = a->nt + b->nt - s;
	if (!over(r, s, uni))
		return true;
	*c = (struct cand){i, j, s, (double)s / (double)uni};
	*keep = true;
	return true;
}

static int cmp_cands(const void *pa, const void *pb, void *arg)
{
	const struct cand *a = pa, *b = pb;
	const struct ctp_rename *r = arg;
	int c;
	if (a->jac != b->jac)
		return a->jac > b->jac ? -1 : 1;
	if (a->shared != b->shared)
		return a->shared > b->shared ? -1 : 1;
	if ((c = strcmp(r->v[0][a->i].path, r->v[0][b->i].path)))
		return c;
	return strcmp(r->v[1][a->j].path, r->v[1][b->j].path);
}

/* Every pair over the thresholds, best first; *n 0 after giving up. */
static int candidates(struct ctp_rename *r, struct cand **ret, size_t *n)
{
	size_t cap = 0;
	struct cand *c = NULL;
	*n = 0;
	for (uint32_t i = 0; i < r->nv[0]; i++)
		for (uint32_t j = 0; j < r->nv[1]; j++) {
			struct cand one;
			bool keep;
			if (!try_pair(r, i, j, &one, &keep) ||
			    (keep && *n == CTP_RENAME_MAX_CANDIDATES)) {
				r->gave_up = true;
				*n = 0;
				*ret = c;
				return 0;
			}
			if (!keep)
				continue;
			if (*n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct cand *g = realloc(c, nc * sizeof(*c));
				if (!g) {
					free(c);
					return -ENOMEM;
				}
				c = g, cap = nc;
			}
			c[(*n)++] = one;
		}
	if (*n)
		qsort_r(c, *n, sizeof(*c), cmp_cands, r);
	*ret = c;
	return 0;
}

/* Record the pair of BASE value a and CAND value b. */
static int add_pair(struct ctp_rename *r, struct val *a, struct val *b,
		    bool carried)
{
	struct ctp_rename_pair *p = &r->pairs[r->npairs];
	const struct val *v[2] = {a, b};
	p->path[0] = a->path, p->path[1] = b->path;
	p->shared = shared_of(a, b);
	uint32_t uni = a->nt + b->nt - p->shared;
	p->jaccard = uni ? (double)p->shared / (double)uni : 1;
	p->carried = carried;
	for (int k = 0; k < 2; k++) {
		uint32_t *o = calloc(v[k]->nt - p->shared + 1, sizeof(*o));
		if (!o)
			return -ENOMEM;
		p->only[k] = o;
		p->n_types[k] = v[k]->nt;
		p->threads[k] = v[k]->threads;
		for (uint32_t i = 0, j = 0; i < v[k]->nt; i++) {
			const struct val *w = v[!k];
			while (j < w->nt && w->types[j] < v[k]->types[i])
				j++;
			if (j == w->nt || w->types[j] != v[k]->types[i])
				o[p->n_only[k]++] = v[k]->types[i];
		}
	}
	a->paired = b->paired = true;
	r->npairs++;
	return 0;
}

/* The length of path as a parent: without a trailing '/'. */
static size_t parent_len(const char *p)
{
	size_t n = strlen(p);
	return n && p[n - 1] == '/' ? n - 1 : n;
}

/* (X, Y) paired: pair the one-sided descendants X/s with Y/s. */
static int carry_down(struct ctp_rename *r, struct val *x, const char *y)
{
	size_t lx = parent_len(x->path), ly = parent_len(y);
	for (struct val *d = x + 1; d < r->v[0] + r->nv[0]; d++) {
		if (strncmp(d->path, x->path, lx) || d->path[lx] != '/')
			break;
		if (d->paired)
			continue;
		const char *suffix = d->path + lx;
		size_t ls = strlen(suffix);
		char *want = malloc(ly + ls + 1);
		if (!want)
			return -ENOMEM;
		memcpy(want, y, ly);
		memcpy(want + ly, suffix, ls + 1);
		struct val *e = find_val(r->v[1], r->nv[1], want);
		free(want);
		if (e && !e->paired && add_pair(r, d, e, true) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int cmp_by0(const void *a, const void *b, void *arg)
{
	const struct ctp_rename *r = arg;
	return strcmp(r->pairs[*(const size_t *)a].path[0],
		      r->pairs[*(const size_t *)b].path[0]);
}

static int cmp_by1(const void *a, const void *b, void *arg)
{
	const struct ctp_rename *r = arg;
	return strcmp(r->pairs[*(const size_t *)a].path[1],
		      r->pairs[*(const size_t *)b].path[1]);
}

/* Greedy best-first over the candidates, then the lookup indexes. */
static int choose(struct ctp_rename *r, const struct cand *c, size_t n)
{
	size_t most = r->nv[0] < r->nv[1] ? r->nv[0] : r->nv[1];
	r->pairs = calloc(most + 1, sizeof(*r->pairs));
	for (int k = 0; k < 2; k++)
		r->by[k] = calloc(most + 1, sizeof(*r->by[k]));
	if (!r->pairs || !r->by[0] || !r->by[1])
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct val *a = &r->v[0][c[i].i], *b = &r->v[1][c[i].j];
		if (a->paired || b->paired)
			continue;
		if (add_pair(r, a, b, false) < 0 ||
		    carry_down(r, a, b->path) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->npairs; i++)
		r->by[0][i] = r->by[1][i] = i;
	qsort_r(r->by[0], r->npairs, sizeof(size_t), cmp_by0, r);
	qsort_r(r->by[1], r->npairs, sizeof(size_t), cmp_by1, r);
	return 0;
}

int ctp_rename_new(struct ctp_groups *const g[2], size_t part,
		   const struct ctp_rename_opts *o, struct ctp_rename **ret)
{
	struct ctp_rename *r = calloc(1, sizeof(*r));
	struct cand *c = NULL;
	size_t n = 0;
	int rc;

	if (!r)
		return -ENOMEM;
	r->g[0] = g[0], r->g[1] = g[1], r->part = part, r->o = *o;
	rc = one_sided(r);
	if (rc == 0 && r->nv[0] && r->nv[1])
		rc = build_types(r);
	if (rc == 0)
		rc = candidates(r, &c, &n);
	if (rc == 0)
		rc = choose(r, c, n);
	free(c);
	if (rc < 0) {
		ctp_rename_free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

void ctp_rename_free(struct ctp_rename *r)
{
	if (!r)
		return;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; r->v[k] && i < r->nv[k]; i++)
			free(r->v[k][i].types);
		free(r->v[k]);
		free(r->by[k]);
	}
	for (size_t i = 0; r->pairs && i < r->npairs; i++)
		for (int k = 0; k < 2; k++)
			free((void *)r->pairs[i].only[k]);
	free(r->pairs);
	for (size_t i = 0; r->types && i < r->ntypes; i++)
		free(r->types[i].s);
	free(r->types);
	free(r);
}

size_t ctp_rename_count(const struct ctp_rename *r)
{
	return r ? r->npairs : 0;
}

const struct ctp_rename_pair *ctp_rename_at(const struct ctp_rename *r,
					    size_t i)
{
	return r && i < r->npairs ? &r->pairs[i] : NULL;
}

const struct ctp_rename_pair *ctp_rename_find(const struct ctp_rename *r, int k,
					      const char *path)
{
	size_t lo = 0, hi = r && path ? r->npairs : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ctp_rename_pair *p = &r->pairs[r->by[k][mid]];
		int c = strcmp(p->path[k], path);
		if (!c)
			return p;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool ctp_rename_gave_up(const struct ctp_rename *r)
{
	return r && r->gave_up;
}

size_t ctp_rename_one_sided(const struct ctp_rename *r, int k)
{
	return r ? r->nv[k] : 0;
}

void ctp_rename_type(const struct ctp_rename *r, uint32_t t,
		     struct ctp_bytes *pcomm, struct ctp_bytes *comm)
{
	const struct tref *y = &r->types[t];
	*pcomm = (struct ctp_bytes){.ptr = y->s, .len = y->lp};
	*comm = (struct ctp_bytes){.ptr = y->s + y->lp + 1,
				   .len = y->len - y->lp - 2};
}
