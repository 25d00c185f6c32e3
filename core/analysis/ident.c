/* SPDX-License-Identifier: MIT */
/* Task identity across two snapshots (ident.h). */
#include "ident.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"

/* One task of a table, sorted by (tgid, tid) or by path for lookups. */
struct key {
	uint64_t a, b;	       /* (tgid, tid); processes (tgid, 0) */
	struct ctp_bytes path; /* cgroups */
	uint64_t start;	       /* ns, CTP_IDENT_UNKNOWN */
	uint32_t row;
};

static int cmp_ids(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

static int cmp_paths(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	size_t n = a->path.len < b->path.len ? a->path.len : b->path.len;
	int c = n ? memcmp(a->path.ptr, b->path.ptr, n) : 0;
	return c ? c
		 : (a->path.len > b->path.len) - (a->path.len < b->path.len);
}

/* A start value of field f (may be NULL) in row, in ns. */
static uint64_t start_of(const struct ctp_snap *s,
			 const struct ctp_snap_field *f, size_t row)
{
	struct ctp_value v;
	if (!f)
		return CTP_IDENT_UNKNOWN;
	v = ctp_snap_get(s, f, row);
	return v.type == CTP_TYPE_U64 ? v.u64 * ctp_unit_ns(f->unit)
				      : CTP_IDENT_UNKNOWN;
}

/* Unknown start times match anything: identity then rests on the ids. */
static bool same_start(uint64_t a, uint64_t b)
{
	return a == CTP_IDENT_UNKNOWN || b == CTP_IDENT_UNKNOWN || a == b;
}

/* The keys of one side's threads (sorted) and their start times. */
static struct key *thread_keys(const struct ctp_snap *s, uint64_t *start)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_field *f =
		ctp_snap_start_field(s, CTP_SCOPE_THREAD);
	struct key *k = calloc(t->rows + 1, sizeof(*k));
	if (!k)
		return NULL;
	for (size_t i = 0; i < t->rows; i++) {
		start[i] = start_of(s, f, i);
		k[i] = (struct key){.a = t->tgid[i],
				    .b = t->tid[i],
				    .start = start[i],
				    .row = (uint32_t)i};
	}
	qsort(k, t->rows, sizeof(*k), cmp_ids);
	return k;
}

/* The keys of one side's processes (sorted by tgid): the start time of a
 * process-scope start field when the snapshot has one, else its leader's. */
static struct key *process_keys(const struct ctp_snap *s, const struct key *tk,
				size_t ntk)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	const struct ctp_snap_field *f =
		ctp_snap_start_field(s, CTP_SCOPE_PROCESS);
	struct key *k = calloc(t->rows + 1, sizeof(*k));
	if (!k)
		return NULL;
	for (size_t i = 0; i < t->rows; i++) {
		struct key want = {.a = t->tgid[i], .b = t->tgid[i]};
		const struct key *leader =
			bsearch(&want, tk, ntk, sizeof(*tk), cmp_ids);
		k[i] = (struct key){.a = t->tgid[i], .row = (uint32_t)i};
		k[i].start = f	      ? start_of(s, f, i)
			     : leader ? leader->start
				      : CTP_IDENT_UNKNOWN;
	}
	qsort(k, t->rows, sizeof(*k), cmp_ids);
	return k;
}

static struct key *cgroup_keys(const struct ctp_snap *s)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	struct key *k = calloc(t->rows + 1, sizeof(*k));
	if (!k)
		return NULL;
	for (size_t i = 0; i < t->rows; i++)
		k[i] = (struct key){.path = t->path[i], .row = (uint32_t)i};
	qsort(k, t->rows, sizeof(*k), cmp_paths);
	return k;
}

/* For every CAND key, the BASE row with the same ids and start, or -1;
 * mark the BASE rows found. */
static void match(const struct key *base, size_t nb, const struct key *cand,
		  size_t nc, int (*cmp)(const void *, const void *), long *out,
		  bool *alive)
{
	for (size_t i = 0; i < nc; i++) {
		const struct key *b =
			bsearch(&cand[i], base, nb, sizeof(*base), cmp);
		long r = b && same_start(b->start, cand[i].start) ? (long)b->row
								  : -1;
		out[cand[i].row] = r;
		if (r >= 0)
			alive[r] = true;
	}
}

static int alloc_side(struct ctp_ident *id, const struct ctp_snap *const s[2])
{
	size_t n[3][2];
	for (int k = 0; k < 2; k++) {
		n[0][k] = ctp_snap_table(s[k], CTP_SCOPE_THREAD)->rows + 1;
		n[1][k] = ctp_snap_table(s[k], CTP_SCOPE_PROCESS)->rows + 1;
		n[2][k] = ctp_snap_table(s[k], CTP_SCOPE_CGROUP)->rows + 1;
		id->tstart[k] = calloc(n[0][k], sizeof(uint64_t));
	}
	id->tmatch = calloc(n[0][1], sizeof(long));
	id->pmatch = calloc(n[1][1], sizeof(long));
	id->cmatch = calloc(n[2][1], sizeof(long));
	id->talive = calloc(n[0][0], sizeof(bool));
	id->palive = calloc(n[1][0], sizeof(bool));
	id->calive = calloc(n[2][0], sizeof(bool));
	return id->tstart[0] && id->tstart[1] && id->tmatch && id->pmatch &&
			       id->cmatch && id->talive && id->palive &&
			       id->calive
		       ? 0
		       : -ENOMEM;
}

/* Match all three tables; keys freed here. */
static int match_all(struct ctp_ident *id, const struct ctp_snap *const s[2])
{
	struct key *tk[2] = {NULL, NULL}, *pk[2] = {NULL, NULL},
		   *ck[2] = {NULL, NULL};
	size_t nt[2], np[2], nc[2];
	int rc = 0;

	for (int k = 0; k < 2; k++) {
		nt[k] = ctp_snap_table(s[k], CTP_SCOPE_THREAD)->rows;
		np[k] = ctp_snap_table(s[k], CTP_SCOPE_PROCESS)->rows;
		nc[k] = ctp_snap_table(s[k], CTP_SCOPE_CGROUP)->rows;
		tk[k] = thread_keys(s[k], id->tstart[k]);
		pk[k] = tk[k] ? process_keys(s[k], tk[k], nt[k]) : NULL;
		ck[k] = cgroup_keys(s[k]);
		if (!tk[k] || !pk[k] || !ck[k])
			rc = -ENOMEM;
	}
	if (rc == 0) {
		match(tk[0], nt[0], tk[1], nt[1], cmp_ids, id->tmatch,
		      id->talive);
		match(pk[0], np[0], pk[1], np[1], cmp_ids, id->pmatch,
		      id->palive);
		match(ck[0], nc[0], ck[1], nc[1], cmp_paths, id->cmatch,
		      id->calive);
	}
	for (int k = 0; k < 2; k++) {
		free(tk[k]);
		free(pk[k]);
		free(ck[k]);
	}
	return rc;
}

double ctp_ident_interval(const struct ctp_snap *const snap[2],
			  const char **clock)
{
	const struct ctp_snap_header *b = ctp_snap_header(snap[0]),
				     *c = ctp_snap_header(snap[1]);
	if (b->start_boottime_ns &&
	    c->start_boottime_ns > b->start_boottime_ns) {
		*clock = "boottime";
		return (double)(c->start_boottime_ns - b->start_boottime_ns) /
		       1e9;
	}
	*clock = "realtime";
	return c->start_realtime_ns > b->start_realtime_ns
		       ? (double)(c->start_realtime_ns - b->start_realtime_ns) /
				 1e9
		       : 0;
}

/* When snapshot s read its process row `row` (-1: none), on the boot
 * clock: its read_boottime_ns, else the capture's start; 0: unknown. */
static uint64_t read_ns(const struct ctp_snap *s, long row)
{
	const struct ctp_snap_table *p = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	if (row >= 0 && p->read_ns && p->read_ns[row])
		return p->read_ns[row];
	return ctp_snap_header(s)->start_boottime_ns;
}

/* Each CAND process's own interval, and its threads' (their process's):
 * from BASE's read of the same process (by identity; BASE's start for
 * one it did not have) to CAND's. */
static int task_intervals(struct ctp_ident *id,
			  const struct ctp_snap *const s[2])
{
	const struct ctp_snap_table *p = ctp_snap_table(s[1],
							CTP_SCOPE_PROCESS),
				    *t = ctp_snap_table(s[1], CTP_SCOPE_THREAD);
	id->piv = calloc(p->rows + 1, sizeof(double));
	id->tiv = calloc(t->rows + 1, sizeof(double));
	if (!id->piv || !id->tiv)
		return -ENOMEM;
	for (size_t i = 0; i < p->rows; i++) {
		long m = id->ok ? id->pmatch[i] : -1;
		uint64_t from = read_ns(s[0], m), to = read_ns(s[1], (long)i);
		/* Else (no boot clock, CAND's read not after BASE's) the
		 * captures' interval. */
		id->piv[i] = from && to > from ? (double)(to - from) / 1e9
					       : id->interval_s;
	}
	for (size_t i = 0; i < t->rows; i++) {
		long pr = ctp_snap_row(p, t->tgid[i], 0);
		id->tiv[i] = pr >= 0 ? id->piv[pr] : id->interval_s;
	}
	uint64_t cf = ctp_snap_header(s[0])->cgroups_read_boottime_ns,
		 ct = ctp_snap_header(s[1])->cgroups_read_boottime_ns;
	id->cgiv = cf && ct > cf ? (double)(ct - cf) / 1e9 : id->interval_s;
	return 0;
}

uint64_t ctp_ident_task_start(const struct ctp_snap *s, uint8_t scope, size_t r)
{
	const struct ctp_snap_field *f = ctp_snap_start_field(s, scope);
	const struct ctp_snap_table *t = ctp_snap_table(s, scope);
	if (scope != CTP_SCOPE_PROCESS || f)
		return start_of(s, f, r);
	long lr = ctp_snap_row(ctp_snap_table(s, CTP_SCOPE_THREAD), t->tgid[r],
			       t->tgid[r]);
	return lr < 0 ? CTP_IDENT_UNKNOWN
		      : start_of(s, ctp_snap_start_field(s, CTP_SCOPE_THREAD),
				 (size_t)lr);
}

uint64_t ctp_ident_exited_start(const struct ctp_snap *s, size_t r)
{
	const struct ctp_snap_table *x = ctp_snap_table(s, CTP_SCOPE_EXITED);
	const struct ctp_snap_field *f =
		ctp_snap_role_field(s, CTP_SCOPE_EXITED, "elapsed");
	if (!f || !x->exit_ns || !x->exit_ns[r])
		return CTP_IDENT_UNKNOWN;
	struct ctp_value v = ctp_snap_get(s, f, r);
	uint64_t age = v.type == CTP_TYPE_U64 ? v.u64 * ctp_unit_ns(f->unit)
					      : CTP_IDENT_UNKNOWN;
	return age <= x->exit_ns[r] ? x->exit_ns[r] - age : CTP_IDENT_UNKNOWN;
}

bool ctp_ident_exited_same(const struct ctp_snap *base, size_t row,
			   uint64_t start)
{
	const struct ctp_snap_table *t = ctp_snap_table(base, CTP_SCOPE_THREAD);
	if (start == CTP_IDENT_UNKNOWN)
		return true;
	/* The exit's start is never before the task's (the stamp comes
	 * after the exit); stat's start is in ticks, cut down. */
	uint64_t s0 = start_of(
		base, ctp_snap_start_field(base, CTP_SCOPE_THREAD), row);
	if (s0 != CTP_IDENT_UNKNOWN && start + 1000000 < s0)
		return false;
	long pr = ctp_snap_row(ctp_snap_table(base, CTP_SCOPE_PROCESS),
			       t->tgid[row], 0);
	uint64_t seen = read_ns(base, pr);
	return !seen || start <= seen;
}

double ctp_ident_task_interval(const struct ctp_ident *id, uint8_t scope,
			       size_t row)
{
	if (scope == CTP_SCOPE_THREAD)
		return id->tiv[row];
	if (scope == CTP_SCOPE_PROCESS)
		return id->piv[row];
	if (scope == CTP_SCOPE_CGROUP)
		return id->cgiv;
	return id->interval_s;
}

int ctp_ident_new(const struct ctp_snap *const snap[2], struct ctp_ident **ret)
{
	struct ctp_ident *id = calloc(1, sizeof(*id));
	int rc;

	if (!id)
		return -ENOMEM;
	for (int k = 0; k < 2; k++)
		id->boot_ns[k] = ctp_snap_header(snap[k])->start_boottime_ns;
	id->ok = true;
	for (int k = 1; k >= 0; k--)
		if (!ctp_snap_start_field(snap[k], CTP_SCOPE_THREAD)) {
			id->ok = false;
			id->why = k ? "no start times in CAND"
				    : "no start times in BASE";
		}
	rc = alloc_side(id, snap);
	/* Ages need only one side's start times; matching needs both. */
	for (int k = 0; k < 2 && rc == 0; k++) {
		const struct ctp_snap_field *f =
			ctp_snap_start_field(snap[k], CTP_SCOPE_THREAD);
		size_t n = ctp_snap_table(snap[k], CTP_SCOPE_THREAD)->rows;
		for (size_t i = 0; i < n; i++)
			id->tstart[k][i] = start_of(snap[k], f, i);
	}
	if (rc == 0 && id->ok)
		rc = match_all(id, snap);
	id->interval_s = ctp_ident_interval(snap, &id->clock);
	if (rc == 0)
		rc = task_intervals(id, snap);
	if (rc < 0) {
		ctp_ident_free(id);
		return rc;
	}
	*ret = id;
	return 0;
}

void ctp_ident_free(struct ctp_ident *id)
{
	if (!id)
		return;
	for (int k = 0; k < 2; k++)
		free(id->tstart[k]);
	free(id->tmatch);
	free(id->pmatch);
	free(id->cmatch);
	free(id->talive);
	free(id->palive);
	free(id->calive);
	free(id->tiv);
	free(id->piv);
	free(id);
}
