/* SPDX-License-Identifier: MIT */
/* Tasks that exited between two snapshots (see exitsum.h). */
#include "exitsum.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "hash.h"
#include "ident.h"
#include "interval.h"
#include "render.h"
#include "table.h"

struct entry {
	char *name;
	double cpu;
};

/* A time unit converts to another; others only to themselves. NAN: no
 * conversion. */
static double factor(uint8_t from, uint8_t to)
{
	if (from == to)
		return 1;
	double a = (double)ctp_unit_seconds(from),
	       b = (double)ctp_unit_seconds(to);
	return a > 0 && b > 0 ? a / b : NAN;
}

double ctp_exit_sum_scale(const struct ctp_exit_sum *s, size_t j, uint8_t to)
{
	return factor(s->unit[j], to);
}

long ctp_exit_sum_field(const struct ctp_exit_sum *s, const char *name)
{
	for (size_t j = 0; j < s->n_fields; j++)
		if (strcmp(s->fields[j], name) == 0)
			return (long)j;
	return -1;
}

static int add_name(struct ctp_exit_sum *s, const char *name)
{
	if (ctp_exit_sum_field(s, name) >= 0)
		return 0;
	char **nf = realloc(s->fields, (s->n_fields + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	s->fields = nf;
	if (!(s->fields[s->n_fields] = strdup(name)))
		return -ENOMEM;
	s->n_fields++;
	return 0;
}

/* The fields to keep: every column's exited list and the coverage's. */
static int want_fields(struct ctp_exit_sum *s, const struct ctp_view *v)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < v->n_cols; i++)
		for (size_t k = 0; r == 0 && k < v->cols[i].n_exited; k++)
			r = add_name(s, v->cols[i].exited[k]);
	const struct ctp_view_col *c = &v->coverage[CTP_VIEW_COVER_EXITED];
	for (size_t k = 0; r == 0 && k < c->n_fields; k++)
		r = add_name(s, c->fields[k]);
	s->has_cpu = c->n_fields > 0;
	if (r == 0 && !(s->unit = calloc(s->n_fields + 1, sizeof(*s->unit))))
		r = -ENOMEM;
	return r;
}

/* Room for one more task. */
static int grow(struct ctp_exit_sum *s)
{
	if (s->tasks < s->cap)
		return 0;
	size_t nc = s->cap ? s->cap * 2 : 256,
	       nf = s->n_fields ? s->n_fields : 1;
	struct ctp_group_extra *id = realloc(s->id, nc * sizeof(*id));
	if (id)
		s->id = id;
	long *br = realloc(s->base_row, nc * sizeof(*br));
	if (br)
		s->base_row = br;
	char **own = realloc(s->own, nc * sizeof(*own));
	if (own)
		s->own = own;
	double *val = realloc(s->val, nc * nf * sizeof(*val));
	if (val)
		s->val = val;
	double *cpu = realloc(s->cpu_of, nc * sizeof(*cpu));
	if (cpu)
		s->cpu_of = cpu;
	if (!id || !br || !own || !val || !cpu)
		return -ENOMEM;
	s->cap = nc;
	return 0;
}

/* The row of thread (tgid, tid) of snap, else of tgid's first live
 * thread (its main thread, when live); -1 when neither is there. */
static long live_row(const struct ctp_snap *snap, uint64_t tgid, uint64_t tid)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	long r = ctp_snap_row(t, tgid, tid);
	return r >= 0 ? r : ctp_snap_row(t, tgid, 0);
}

/* The cgroup path of thread (tgid, tid) of snap, else of tgid's first
 * live thread; nil when neither is there. */
static struct ctp_bytes cgroup_of(const struct ctp_snap *snap, uint64_t tgid,
				  uint64_t tid)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD),
				    *c = ctp_snap_table(snap, CTP_SCOPE_CGROUP);
	struct ctp_bytes nil = {0};
	long r = live_row(snap, tgid, tid);
	if (r < 0 || !t->cgroup || !c || t->cgroup[r] < 0 ||
	    (size_t)t->cgroup[r] >= c->rows)
		return nil;
	return c->path[t->cgroup[r]];
}

/* A set of v1 paths (a task's, one per hierarchy), kept once for every
 * task that ran there: n pairs pointing into the klen bytes of its key
 * that follow them (each hierarchy and path as its length, a size_t,
 * its bytes and a NUL). */
struct ctp_exit_v1set {
	uint32_t hash;
	size_t n, klen;
	struct ctp_group_v1 pair[];
};

/* A snapshot that may have seen a task live, and its v1 path fields
 * (the cgroup plugin's, found by their section: ctp_group_v1_field) with
 * their hierarchies. */
struct seen {
	const struct ctp_snap *snap;
	const struct ctp_snap_field **v1;
	struct ctp_bytes *hier;
	size_t n_v1;
};

static int seen_new(const struct ctp_snap *snap, struct seen *sn)
{
	*sn = (struct seen){.snap = snap};
	if (!snap)
		return 0;
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t nf = ctp_snap_n_fields(snap);
	sn->v1 = malloc((nf + 1) * sizeof(*sn->v1));
	sn->hier = malloc((nf + 1) * sizeof(*sn->hier));
	if (!sn->v1 || !sn->hier)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++) {
		struct ctp_bytes *h = &sn->hier[sn->n_v1];
		if (ctp_group_v1_field(&fs[i], &h->ptr, &h->len))
			sn->v1[sn->n_v1++] = &fs[i];
	}
	return 0;
}

static void seen_free(struct seen *sn)
{
	free(sn->v1);
	free(sn->hier);
}

/* Append n bytes of p to the key being built at *len, as a length, the
 * bytes and a NUL. */
static int key_add(struct ctp_exit_sum *s, size_t *len, const char *p, size_t n)
{
	size_t need = *len + sizeof(n) + n + 1;
	if (need > s->key_cap) {
		size_t cap = need * 2;
		unsigned char *k = realloc(s->key, cap);
		if (!k)
			return -ENOMEM;
		s->key = k;
		s->key_cap = cap;
	}
	memcpy(s->key + *len, &n, sizeof(n));
	if (n)
		memcpy(s->key + *len + sizeof(n), p, n);
	s->key[need - 1] = '\0';
	*len = need;
	return 0;
}

/* Room for one more set in the pool (kept at most half full). */
static int pool_grow(struct ctp_exit_sum *s)
{
	if (2 * (s->pool_n + 1) <= s->pool_cap)
		return 0;
	size_t cap = s->pool_cap ? 2 * s->pool_cap : 64;
	struct ctp_exit_v1set **t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < s->pool_cap; i++) {
		if (!s->pool[i])
			continue;
		size_t j = s->pool[i]->hash & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = s->pool[i];
	}
	free(s->pool);
	s->pool = t;
	s->pool_cap = cap;
	return 0;
}

/* The pool's set of the n pairs whose key is s->key[0..klen), added
 * when new. */
static int intern(struct ctp_exit_sum *s, size_t klen, size_t n,
		  const struct ctp_exit_v1set **out)
{
	uint32_t h = ctp_hash_bytes(s->key, klen);
	int r = pool_grow(s);
	if (r < 0)
		return r;
	size_t m = s->pool_cap - 1, i = h & m;
	for (; s->pool[i]; i = (i + 1) & m) {
		const struct ctp_exit_v1set *e = s->pool[i];
		if (e->hash == h && e->klen == klen &&
		    !memcmp(&e->pair[e->n], s->key, klen)) {
			*out = e;
			return 0;
		}
	}
	size_t size = sizeof(struct ctp_exit_v1set) +
		      n * sizeof(struct ctp_group_v1) + klen;
	struct ctp_exit_v1set *e = malloc(size);
	if (!e)
		return -ENOMEM;
	*e = (struct ctp_exit_v1set){.hash = h, .n = n, .klen = klen};
	char *k = (char *)&e->pair[n];
	memcpy(k, s->key, klen);
	for (size_t j = 0; j < 2 * n; j++) {
		size_t len;
		memcpy(&len, k, sizeof(len));
		struct ctp_bytes b = {.ptr = k + sizeof(len), .len = len};
		if (j % 2)
			e->pair[j / 2].path = b;
		else
			e->pair[j / 2].hier = b;
		k += sizeof(len) + len + 1;
	}
	s->pool[i] = e;
	s->pool_n++;
	s->bytes += size;
	*out = e;
	return 0;
}

/* The v1 paths of thread (tgid, tid) of sn, else of tgid's first live
 * thread, as a set of the pool; NULL when neither is there or the row
 * has none. */
static int v1_of(struct ctp_exit_sum *s, const struct seen *sn, uint64_t tgid,
		 uint64_t tid, const struct ctp_exit_v1set **out)
{
	long r = sn->n_v1 ? live_row(sn->snap, tgid, tid) : -1;
	size_t klen = 0, n = 0;
	int ret = 0;
	*out = NULL;
	for (size_t j = 0; r >= 0 && ret == 0 && j < sn->n_v1; j++) {
		struct ctp_value v =
			ctp_snap_get(sn->snap, sn->v1[j], (size_t)r);
		if (v.type != CTP_TYPE_STRING)
			continue;
		if ((ret = key_add(s, &klen, sn->hier[j].ptr,
				   sn->hier[j].len)) == 0 &&
		    (ret = key_add(s, &klen, v.str.ptr,
				   v.str.ptr ? v.str.len : 0)) == 0)
			n++;
	}
	return ret == 0 && n ? intern(s, klen, n, out) : ret;
}

/* Where a task ran, as one source knew it: its v2 cgroup path, or (v1)
 * its set of v1 paths. */
struct place {
	bool v1;
	struct ctp_bytes cg;
	const struct ctp_exit_v1set *set;
};

static bool placed(const struct place *p)
{
	return p->v1 ? p->set != NULL : p->cg.ptr != NULL;
}

/* Where thread (tgid, tid) of sn, else tgid's first live thread, ran,
 * into p (placed(p) when known); -ENOMEM. */
static int live_place(struct ctp_exit_sum *s, const struct seen *sn,
		      uint64_t tgid, uint64_t tid, struct place *p)
{
	if (p->v1)
		return v1_of(s, sn, tgid, tid, &p->set);
	p->cg = cgroup_of(sn->snap, tgid, tid);
	return 0;
}

/* Copies of comm, pcomm and cgroup (nil stays nil) in one block that task
 * i's id points into. */
static int own_names(struct ctp_exit_sum *s, size_t i,
		     const struct ctp_bytes *in)
{
	size_t len = 0;
	for (int k = 0; k < 3; k++)
		len += in[k].ptr ? in[k].len + 1 : 0;
	char *b = malloc(len ? len : 1), *p = b;
	struct ctp_bytes *out[3] = {&s->id[i].comm, &s->id[i].pcomm,
				    &s->id[i].cgroup};
	s->own[i] = b;
	if (!b)
		return -ENOMEM;
	for (int k = 0; k < 3; k++) {
		*out[k] = (struct ctp_bytes){0};
		if (!in[k].ptr)
			continue;
		memcpy(p, in[k].ptr, in[k].len);
		p[in[k].len] = '\0';
		*out[k] = (struct ctp_bytes){.ptr = p, .len = in[k].len};
		p += in[k].len + 1;
	}
	return 0;
}

/* The name of process tgid live in f, prev (the file before f) or base;
 * nil when none has it. */
static struct ctp_bytes live_pcomm(const struct ctp_snap *f,
				   const struct ctp_snap *prev,
				   const struct ctp_snap *base, uint64_t tgid)
{
	const struct ctp_snap *in[3] = {f, prev, base};
	for (int k = 0; k < 3 && tgid; k++) {
		if (!in[k])
			continue;
		const struct ctp_snap_table *p =
			ctp_snap_table(in[k], CTP_SCOPE_PROCESS);
		long pr = ctp_snap_row(p, tgid, 0);
		if (pr >= 0 && p->comm[pr].ptr)
			return p->comm[pr];
	}
	return (struct ctp_bytes){0};
}

/* Task i's values from row r of f's exited table. */
static void task_values(struct ctp_exit_sum *s, size_t i,
			const struct ctp_snap *f,
			const struct ctp_snap_field *const *ff,
			const double *fac, size_t r)
{
	for (size_t j = 0; j < s->n_fields; j++) {
		double *out = &s->val[i * s->n_fields + j];
		*out = NAN;
		if (!ff[j] || isnan(fac[j]))
			continue;
		long double x;
		if (ctp_snap_number(f, ff[j], r, &x))
			*out = (double)x * fac[j];
	}
}

/* Task i's CPU over the interval, seconds (the coverage lists): its time
 * at exit less what BASE had of the same thread (ctp_interval_exit_change).
 */
static double task_cpu(const struct ctp_exit_sum *s, size_t i,
		       const struct ctp_snap *base, const struct ctp_view *v)
{
	const struct ctp_view_col *c = &v->coverage[CTP_VIEW_COVER_EXITED],
				  *t = &v->coverage[CTP_VIEW_COVER_THREADS];
	size_t xf[CTP_VIEW_MAX_FIELDS], nxf = 0, nbf = 0;
	long double xk[CTP_VIEW_MAX_FIELDS], bk[CTP_VIEW_MAX_FIELDS], cpu;
	const struct ctp_snap_field *bf[CTP_VIEW_MAX_FIELDS];
	for (size_t k = 0; k < c->n_fields; k++) {
		long j = ctp_exit_sum_field(s, c->fields[k]);
		if (j >= 0)
			xf[nxf] = (size_t)j,
			xk[nxf++] = ctp_unit_seconds(s->unit[j]);
	}
	/* BASE's time fields of the threads (absent ones count 0). */
	for (size_t k = 0; k < t->n_fields; k++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(base, t->fields[k]);
		if (f && f->scope == CTP_SCOPE_THREAD &&
		    ctp_unit_seconds(f->unit))
			bf[nbf] = f, bk[nbf++] = ctp_unit_seconds(f->unit);
	}
	struct ctp_interval_exit_measure m = {.xf = xf,
					      .xk = xk,
					      .nxf = nxf,
					      .bf = bf,
					      .bk = bk,
					      .nbf = nbf,
					      .scope = CTP_SCOPE_THREAD};
	ctp_interval_exit_change(base, s, i, &m, &cpu);
	return (double)cpu;
}

/* The fields of s in f's exited table, and the factors to s's units. */
static void file_fields(struct ctp_exit_sum *s, const struct ctp_snap *f,
			const struct ctp_snap_field **ff, double *fac)
{
	for (size_t j = 0; j < s->n_fields; j++) {
		ff[j] = ctp_snap_field_find(f, s->fields[j]);
		if (ff[j] && ff[j]->scope != CTP_SCOPE_EXITED)
			ff[j] = NULL;
		if (ff[j] && !s->unit_set[j]) {
			s->unit[j] = ff[j]->unit;
			s->unit_set[j] = true;
		}
		if (ff[j] && ff[j]->step > s->step[j])
			s->step[j] = ff[j]->step;
		fac[j] = ff[j] ? factor(ff[j]->unit, s->unit[j]) : NAN;
	}
}

/* The processes of one file's exited table by pid (its main threads'
 * rows), the field of their parents (role "parent") and of the cgroup
 * each exited in (role "cgroup"). */
struct parents {
	const struct ctp_snap_field *pf; /* NULL: no parent known */
	const struct ctp_snap_field *cf; /* NULL: no exit cgroup known */
	struct prow {
		uint64_t pid;
		size_t row;
	} * by_pid;
	size_t n;
};

static int by_pid(const void *pa, const void *pb)
{
	const struct prow *a = pa, *b = pb;
	if (a->pid != b->pid)
		return (a->pid > b->pid) - (a->pid < b->pid);
	return (a->row > b->row) - (a->row < b->row);
}

static int parents_new(const struct ctp_snap *f, const struct ctp_snap_table *x,
		       struct parents *pa)
{
	*pa = (struct parents){
		.pf = ctp_snap_role_field(f, CTP_SCOPE_EXITED, "parent"),
		.cf = ctp_snap_role_field(f, CTP_SCOPE_EXITED, "cgroup")};
	if (!pa->pf || !x || !x->tgid)
		return 0;
	pa->by_pid = malloc((x->rows + 1) * sizeof(*pa->by_pid));
	if (!pa->by_pid)
		return -ENOMEM;
	for (size_t r = 0; r < x->rows; r++)
		if (x->tgid[r] && x->tgid[r] == x->tid[r])
			pa->by_pid[pa->n++] = (struct prow){x->tid[r], r};
	qsort(pa->by_pid, pa->n, sizeof(*pa->by_pid), by_pid);
	return 0;
}

/* The exited process pid's row that exited at or after `after` (a parent
 * outlives the child it waits for), or -1. */
static long parent_row(const struct parents *pa, const struct ctp_snap_table *x,
		       uint64_t pid, uint64_t after)
{
	size_t lo = 0, hi = pa->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pa->by_pid[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < pa->n && pa->by_pid[lo].pid == pid; lo++) {
		size_t r = pa->by_pid[lo].row;
		if (!x->exit_ns || !after || x->exit_ns[r] >= after)
			return (long)r;
	}
	return -1;
}

/* The cgroup row r of f's exited table says its task exited in (role
 * "cgroup"), or nil. */
static struct ctp_bytes exit_cgroup(const struct parents *pa,
				    const struct ctp_snap *f, size_t r)
{
	struct ctp_bytes nil = {0};
	if (!pa->cf)
		return nil;
	struct ctp_value v = ctp_snap_get(f, pa->cf, r);
	return v.type == CTP_TYPE_STRING && v.str.ptr && v.str.len ? v.str
								   : nil;
}

/*
 * Where the parent of row r of f's exited table ran (p->v1: its v1
 * paths, else its cgroup), for a task no snapshot saw live: a child
 * starts in its parent's cgroups. The parent as the first of `seen` had
 * it live (one that started before the task: not a later process of a
 * reused pid), else, when it exited too, its own parent's, up the exited
 * table a few generations; an exited parent's row says where it exited
 * when it has the cgroup role (v2 only: exit records carry no v1 path).
 * Not init's (pid 1 takes in orphans, wherever they ran). p stays
 * unplaced when none is known; -ENOMEM.
 */
static int parent_place(struct ctp_exit_sum *s, const struct parents *pa,
			const struct ctp_snap *f,
			const struct ctp_snap_table *x, size_t r,
			const struct seen *const *seen, size_t n_seen,
			struct place *p)
{
	uint64_t start = ctp_ident_exited_start(f, r),
		 after = x->exit_ns ? x->exit_ns[r] : 0;
	for (int gen = 0; pa->pf && gen < 8; gen++) {
		struct ctp_value v = ctp_snap_get(f, pa->pf, r);
		if (v.type != CTP_TYPE_U64 || v.u64 <= 1)
			return 0;
		for (size_t k = 0; k < n_seen; k++) {
			const struct ctp_snap *sk =
				seen[k] ? seen[k]->snap : NULL;
			long lr =
				sk ? ctp_snap_row(ctp_snap_table(
							  sk, CTP_SCOPE_THREAD),
						  v.u64, v.u64)
				   : -1;
			uint64_t ps = lr < 0 ? CTP_IDENT_UNKNOWN
					     : ctp_ident_task_start(
						       sk, CTP_SCOPE_THREAD,
						       (size_t)lr);
			if (lr < 0 ||
			    (ps != CTP_IDENT_UNKNOWN &&
			     start != CTP_IDENT_UNKNOWN && ps > start))
				continue;
			int ret = live_place(s, seen[k], v.u64, v.u64, p);
			if (ret < 0 || placed(p))
				return ret;
		}
		long pr = parent_row(pa, x, v.u64, after);
		if (pr < 0)
			return 0;
		r = (size_t)pr;
		after = x->exit_ns ? x->exit_ns[r] : 0;
		if (!p->v1 && (p->cg = exit_cgroup(pa, f, r)).ptr)
			return 0;
	}
	return 0;
}

/* Task i (row r of f's exited table x): who it is and where it ran, from
 * BASE, f and prev (the recording's file before f, NULL when none), the
 * snapshots that may have seen it live (sb, sf, sp: each with its v1
 * fields), else where its parent ran. */
static int task_ident(struct ctp_exit_sum *s, size_t i, const struct seen *sb,
		      const struct seen *sf, const struct seen *sp,
		      const struct ctp_snap_table *x, size_t r,
		      const struct parents *pa)
{
	const struct ctp_snap *base = sb->snap, *f = sf->snap, *prev = sp->snap;
	uint64_t tgid = x->tgid ? x->tgid[r] : 0;
	s->id[i].tgid = tgid;
	s->id[i].tid = x->tid[r];
	/* tid 0: several exited threads of tgid summed (FORMAT.md §7.4),
	 * never one BASE saw. */
	s->base_row[i] =
		tgid && x->tid[r]
			? ctp_snap_row(ctp_snap_table(base, CTP_SCOPE_THREAD),
				       tgid, x->tid[r])
			: -1;
	/* The same task, not a later one that reused its ids. */
	if (s->base_row[i] >= 0 &&
	    !ctp_ident_exited_same(base, (size_t)s->base_row[i],
				   ctp_ident_exited_start(f, r)))
		s->base_row[i] = -1;
	const struct seen *seen[4] = {s->base_row[i] >= 0 ? sb : NULL,
				      prev ? sp : NULL, sf, sb};
	/* Its cgroup where it exited, when its row says; else (and its v1
	 * paths, which no exit row has) where a snapshot saw it, else its
	 * parent. Without v1 fields in any of them, no v1 path. */
	struct place w[2] = {{.cg = exit_cgroup(pa, f, r)}, {.v1 = true}};
	int ret = 0;
	for (int v1 = 0; v1 < 2 && ret == 0; v1++) {
		if (v1 && !sb->n_v1 && !sf->n_v1 && !sp->n_v1)
			break;
		for (int k = 0; k < 4 && tgid && ret == 0 && !placed(&w[v1]);
		     k++)
			if (seen[k])
				ret = live_place(s, seen[k], tgid, x->tid[r],
						 &w[v1]);
		if (ret == 0 && !placed(&w[v1]))
			ret = parent_place(s, pa, f, x, r, seen + 1, 3, &w[v1]);
	}
	s->id[i].v1 = w[1].set ? w[1].set->pair : NULL;
	s->id[i].n_v1 = w[1].set ? w[1].set->n : 0;
	struct ctp_bytes in[3] = {x->comm[r], live_pcomm(f, prev, base, tgid),
				  w[0].cg};
	return ret < 0 ? ret : own_names(s, i, in);
}

/* Is exited row r of f's table a thread f read live too (same ids and
 * start)? */
static bool live_in(const struct ctp_snap *f, const struct ctp_snap_table *x,
		    size_t r)
{
	uint64_t tgid = x->tgid ? x->tgid[r] : 0;
	long row = tgid && x->tid[r]
			   ? ctp_snap_row(ctp_snap_table(f, CTP_SCOPE_THREAD),
					  tgid, x->tid[r])
			   : -1;
	return row >= 0 && ctp_ident_exited_same(f, (size_t)row,
						 ctp_ident_exited_start(f, r));
}

/* Does row r of f's exited table count in the interval that f ends (f
 * BASE or CAND)? An exit seen while a capture was taken is in that
 * capture's table, which ends two intervals (CAND of one, BASE of the
 * next): it counts in one of them only, the one after the capture when
 * the capture read its thread live (less that value: the live change
 * before has it), else the one before. */
static bool end_counts(const struct ctp_snap *base, const struct ctp_snap *f,
		       const struct ctp_snap_table *x, size_t r)
{
	return (f == base) == live_in(f, x, r);
}

/* One file's rows into s; `end`: f is BASE or CAND (end_counts), else a
 * file between them, all of whose rows are in the interval. */
static int add_file(const struct ctp_snap *base, const struct ctp_snap *f,
		    const struct ctp_snap *prev, bool end,
		    struct ctp_exit_sum *s)
{
	const struct ctp_snap_table *x = ctp_snap_table(f, CTP_SCOPE_EXITED);
	uint64_t from = ctp_snap_header(base)->start_boottime_ns;
	const struct ctp_snap_plugin *p = ctp_snap_plugins(f);
	/* BASE's own table holds what exited while BASE was being taken
	 * (after its start: in the interval); its losses are before it. */
	for (size_t i = 0; f != base && i < ctp_snap_n_plugins(f); i++)
		if (p[i].exited) {
			s->present = true;
			s->lost += p[i].exited_lost;
		}
	size_t nf = s->n_fields ? s->n_fields : 1;
	const struct ctp_snap_field **ff = calloc(nf, sizeof(*ff));
	double *fac = calloc(nf, sizeof(*fac));
	struct parents pa = {0};
	struct seen sb = {0}, sf = {0}, sp = {0};
	int ret = ff && fac ? parents_new(f, x, &pa) : -ENOMEM;
	if (ret == 0 && x && x->rows && (ret = seen_new(base, &sb)) == 0 &&
	    (ret = seen_new(f, &sf)) == 0)
		ret = seen_new(prev, &sp);
	if (ret == 0)
		file_fields(s, f, ff, fac);
	for (size_t r = 0; ret == 0 && x && r < x->rows; r++) {
		if (x->exit_ns && x->exit_ns[r] && from &&
		    x->exit_ns[r] <= from)
			continue; /* gone before BASE: not this interval */
		if (end && !end_counts(base, f, x, r))
			continue;
		uint64_t need = sizeof(struct ctp_group_extra) + 3 * 8 +
				(s->n_fields + 1) * sizeof(double) +
				(x->comm[r].ptr ? x->comm[r].len : 0) + 64;
		if (s->budget && s->bytes + need > s->budget) {
			s->over++;
			continue;
		}
		s->bytes += need;
		if ((ret = grow(s)) < 0 ||
		    (ret = task_ident(s, s->tasks, &sb, &sf, &sp, x, r, &pa)) <
			    0)
			break;
		task_values(s, s->tasks, f, ff, fac, r);
		s->tasks++;
	}
	seen_free(&sb);
	seen_free(&sf);
	seen_free(&sp);
	free(pa.by_pid);
	free(ff);
	free(fac);
	return ret;
}

static int by_tgid(const void *pa, const void *pb)
{
	const struct ctp_group_extra
		*a = *(const struct ctp_group_extra *const *)pa,
		*b = *(const struct ctp_group_extra *const *)pb;
	return (a->tgid > b->tgid) - (a->tgid < b->tgid);
}

/* A task whose process no snapshot had live takes the name of its
 * process's main thread when that exited too (a main thread is its own
 * process); else its process name stays unknown. */
static int main_thread_names(struct ctp_exit_sum *s)
{
	const struct ctp_group_extra **m = malloc((s->tasks + 1) * sizeof(*m));
	size_t nm = 0;
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < s->tasks; i++)
		if (s->id[i].tgid && s->id[i].tgid == s->id[i].tid)
			m[nm++] = &s->id[i];
	qsort(m, nm, sizeof(*m), by_tgid);
	for (size_t i = 0; i < s->tasks; i++) {
		struct ctp_group_extra *t = &s->id[i], key = {.tgid = t->tgid};
		const struct ctp_group_extra *kp = &key, **hit;
		if (t->pcomm.ptr || !t->tgid)
			continue;
		hit = bsearch(&kp, m, nm, sizeof(*m), by_tgid);
		if (hit)
			t->pcomm = (*hit)->comm;
	}
	free(m);
	return 0;
}

/* Each task's CPU, by its (normalized, escaped) process name, else its
 * own. */
static int name_entries(struct ctp_exit_sum *s, const struct ctp_snap *base,
			const struct ctp_view *v, struct entry *e)
{
	for (size_t i = 0; i < s->tasks; i++) {
		const struct ctp_bytes *nm =
			s->id[i].pcomm.ptr ? &s->id[i].pcomm : &s->id[i].comm;
		char raw[64], norm[256];
		ctp_render_escape(nm->ptr ? nm->ptr : "?",
				  nm->ptr ? nm->len : 1, 32, raw, sizeof(raw));
		ctp_norm_name(raw, strlen(raw), norm, sizeof(norm));
		if (!(e[i].name = strdup(norm)))
			return -ENOMEM;
		e[i].cpu = s->cpu_of[i] = task_cpu(s, i, base, v);
		s->cpu += e[i].cpu;
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

static int sum_begin(struct ctp_exit_sum *s, const struct ctp_view *v,
		     uint64_t budget)
{
	memset(s, 0, sizeof(*s));
	s->budget = budget;
	int r = want_fields(s, v);
	if (r == 0 &&
	    (!(s->unit_set = calloc(s->n_fields + 1, sizeof(*s->unit_set))) ||
	     !(s->step = calloc(s->n_fields + 1, sizeof(*s->step)))))
		r = -ENOMEM;
	return r;
}

static int sum_end(struct ctp_exit_sum *s, const struct ctp_snap *base,
		   const struct ctp_view *v)
{
	struct entry *e = calloc(s->tasks + 1, sizeof(*e));
	int r = e ? main_thread_names(s) : -ENOMEM;
	if (r == 0)
		r = name_entries(s, base, v, e);
	if (r == 0)
		r = group(s, e, s->tasks);
	for (size_t i = 0; e && i < s->tasks; i++)
		free(e[i].name);
	free(e);
	return r;
}

int ctp_exit_sum_paths(const struct ctp_snap *base, const struct ctp_snap *cand,
		       char *const *between, size_t n, uint64_t cap,
		       const struct ctp_view *v, FILE *log, const char *prog,
		       struct ctp_exit_sum *s)
{
	/* Files in capture order, each with the one before it (two open at
	 * once): a task that lived across a capture was seen live there. */
	struct ctp_snap *prev = NULL;
	int r = sum_begin(s, v, cap);
	if (r == 0 && !s->n_fields)
		return 0; /* the view asks nothing of exited tasks */
	if (r == 0)
		r = add_file(base, base, NULL, true, s);
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct ctp_snap *f;
		char err[512];
		if (ctp_snap_open(between[i], cap, &f, err, sizeof(err)) < 0) {
			fprintf(log, "%s: %s (its exited tasks are left out)\n",
				prog, err);
			continue;
		}
		r = add_file(base, f, prev ? prev : base, false, s);
		ctp_snap_free(prev);
		prev = f;
	}
	if (r == 0)
		r = add_file(base, cand, prev ? prev : base, true, s);
	ctp_snap_free(prev);
	return r == 0 ? sum_end(s, base, v) : r;
}

void ctp_exit_sum_print(FILE *out, const struct ctp_exit_sum *s,
			double interval_s, size_t top, size_t width)
{
	if (!s->present || !s->has_cpu)
		return;
	size_t shown = top && top < s->n_g ? top : s->n_g;
	fprintf(out, "\nExited in the interval: %zu tasks, %.1f s of CPU",
		s->tasks, s->cpu);
	if (s->lost)
		fprintf(out, ", %llu more lost", (unsigned long long)s->lost);
	if (s->over)
		fprintf(out,
			", %llu more left out past the memory budget "
			"(max_decompressed_bytes)",
			(unsigned long long)s->over);
	fputc('\n', out);
	if (!s->n_g)
		return;
	static const char *const titles[] = {"COMMAND", "TASKS", "CPU%",
					     "TIME"};
	static const size_t min[] = {0, 6, 6, 7};
	struct ctp_table *t = ctp_table_new(CTP_TABLE_VIEW);
	int r = t ? 0 : -ENOMEM;
	for (size_t c = 0; c < 4 && r >= 0; c++)
		r = ctp_table_add_col(t, titles[c], c ? CTP_TABLE_RIGHT : 0);
	if (r >= 0) /* names of half the width at most */
		ctp_table_width(t, 0, 0, width ? width / 2 : 0);
	for (size_t c = 1; c < 4 && r >= 0; c++)
		ctp_table_width(t, c, min[c], 0);
	for (size_t i = 0; i < shown && r >= 0; i++) {
		const struct ctp_exit_group *g = &s->g[i];
		char d[32];
		ctp_render_duration(d, sizeof(d), g->cpu);
		ctp_table_text(t, g->name);
		ctp_table_numf(t, "%zu", g->tasks);
		ctp_table_numf(t, "%.1f",
			       interval_s > 0 ? g->cpu / interval_s * 100 : 0);
		r = ctp_table_text(t, d);
	}
	if (r >= 0 && ctp_table_fit(t, 0, NULL) == 0)
		ctp_table_print(t, out, false);
	ctp_table_free(t);
	if (shown < s->n_g)
		fprintf(out, "  %zu more names (--top 0 shows all)\n",
			s->n_g - shown);
}

void ctp_exit_sum_free(struct ctp_exit_sum *s)
{
	for (size_t i = 0; i < s->n_g; i++)
		free(s->g[i].name);
	for (size_t i = 0; s->own && i < s->tasks; i++)
		free(s->own[i]);
	for (size_t j = 0; j < s->n_fields; j++)
		free(s->fields[j]);
	free(s->g);
	free(s->id);
	free(s->base_row);
	free(s->own);
	free(s->val);
	free(s->fields);
	free(s->unit);
	free(s->unit_set);
	free(s->step);
	free(s->cpu_of);
	for (size_t i = 0; i < s->pool_cap; i++)
		free(s->pool[i]);
	free(s->pool);
	free(s->key);
	memset(s, 0, sizeof(*s));
}
