/* SPDX-License-Identifier: MIT */
/* Grouping and aggregation of a snapshot's rows (docs/GROUPING.md). */
#include "group.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "suggest.h"

/* ---- Normalization ---------------------------------------------------- */

static bool is_sep(unsigned char c)
{
	return c == '.' || c == '-' || c == '_' || c == '/' || c == ':' ||
	       c == '@' || c == '+' || c == '[' || c == ']' || c == ' ' ||
	       c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Lower-case only: hex digests are printed that way, while "C2" or "G1"
 * in thread names are words with a number. */
static bool is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

/* An output cursor with snprintf semantics. */
struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t room = o->cap - 1 - o->len;
		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static size_t finish(struct out *o)
{
	if (o->cap)
		o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
	return o->len;
}

/*
 * Hex needs six characters: the ids that vary between runs (container ids,
 * digests, inode or address suffixes) are at least that long, while short
 * tokens of hex letters and a digit are words with a number ("cc1", "a1",
 * "fd0", "e2"), which read as hex would hide the program behind {H}.
 */
#define HEX_MIN 6

static void token(struct out *o, const char *t, size_t n)
{
	const unsigned char *p = (const unsigned char *)t;
	size_t i = 0, digits = 0;
	bool hex = n >= HEX_MIN;

	for (size_t k = 0; k < n; k++) {
		digits += is_digit(p[k]);
		hex &= is_hex(p[k]);
	}
	if (n && digits == n) {
		put(o, "{N}", 3);
		return;
	}
	if (hex && digits) {
		put(o, "{H}", 3);
		return;
	}
	/* letters then digits */
	while (i < n && is_alpha(p[i]))
		i++;
	if (i > 0 && i < n && digits == n - i) {
		put(o, t, i);
		put(o, "{N}", 3);
		return;
	}
	/* digits then letters */
	for (i = 0; i < n && is_digit(p[i]); i++)
		;
	size_t j = i;
	while (j < n && is_alpha(p[j]))
		j++;
	if (i > 0 && i < n && j == n) {
		put(o, "{N}", 3);
		put(o, t + i, n - i);
		return;
	}
	put(o, t, n);
}

size_t ctp_norm_token(const char *t, size_t n, char *out, size_t outlen)
{
	struct out o = {out, outlen, 0};
	token(&o, t, n);
	return finish(&o);
}

/* Whether s[0..n) is n lower-case hex characters. */
static bool hex_run(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

/*
 * The length of the UUID at p (avail bytes, a token's start), the length
 * of the word glued before it in *lead: groups of 8, 4, 4, 4 and 12
 * lower-case hex characters joined by '-' or '_', followed by the end or a
 * separator, the first group maybe after ASCII letters ("pod<uuid>" in
 * kubepods cgroups, which join with '_'); 0 when there is none. Its
 * 4-character groups are too short for the token rule's {H}, yet they vary
 * with the rest of the UUID, so the UUID is recognized as a whole.
 */
static size_t uuid_len(const unsigned char *p, size_t avail, size_t *lead)
{
	static const size_t group[] = {8, 4, 4, 4, 12};
	size_t at = 0;

	while (at < avail && (is_alpha(p[at]) || is_digit(p[at])))
		at++;
	if (at < 8 || !hex_run(p + at - 8, 8))
		return 0;
	*lead = at - 8;
	for (size_t i = 0; i < *lead; i++)
		if (!is_alpha(p[i]))
			return 0;
	for (size_t k = 1; k < 5; k++) {
		if (at >= avail || (p[at] != '-' && p[at] != '_'))
			return 0;
		at++;
		if (avail - at < group[k] || !hex_run(p + at, group[k]))
			return 0;
		at += group[k];
	}
	return at == avail || is_sep(p[at]) ? at : 0;
}

/* A UUID at p (n bytes from uuid_len, after lead bytes of a word): the
 * word kept, each group {H}, the joins kept. */
static void uuid(struct out *o, const char *p, size_t n, size_t lead)
{
	put(o, p, lead);
	for (size_t i = lead; i < n; i++) {
		if (p[i] == '-' || p[i] == '_') {
			put(o, p + i, 1);
			continue;
		}
		put(o, "{H}", 3);
		while (i + 1 < n && p[i + 1] != '-' && p[i + 1] != '_')
			i++;
	}
}

static void name(struct out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		bool sep = is_sep(p[i]);
		size_t lead = 0, u = sep ? 0 : uuid_len(p + i, n - i, &lead);
		if (u) {
			uuid(o, s + i, u, lead);
			i += u;
			continue;
		}
		while (j < n && is_sep(p[j]) == sep)
			j++;
		if (sep)
			put(o, s + i, j - i);
		else
			token(o, s + i, j - i);
		i = j;
	}
}

size_t ctp_norm_name(const char *s, size_t n, char *out, size_t outlen)
{
	struct out o = {out, outlen, 0};
	name(&o, s, n);
	return finish(&o);
}

/* Unit types that can appear in a cgroup path component. */
static bool unit_type(const char *s, size_t n)
{
	static const char *const types[] = {"service", "socket", "timer",
					    "path",    "target", "mount",
					    "swap",    "scope",	 "slice"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i]) == n && memcmp(types[i], s, n) == 0)
			return true;
	return false;
}

/* One path component (no '/'). */
static void component(struct out *o, const char *s, size_t n)
{
	const char *at = memchr(s, '@', n);
	const char *dot = NULL;
	for (size_t i = n; i-- > 0;)
		if (s[i] == '.') {
			dot = s + i;
			break;
		}
	if (at && at > s && dot && dot > at + 1 &&
	    unit_type(dot + 1, (size_t)(s + n - dot - 1))) {
		const char *inst = at + 1;
		size_t ilen = (size_t)(dot - inst);
		bool seps = false;
		for (size_t i = 0; i < ilen; i++)
			seps |= is_sep((unsigned char)inst[i]);
		name(o, s, (size_t)(at - s));
		put(o, "@", 1);
		if (seps)
			put(o, "{I}", 3);
		else
			token(o, inst, ilen);
		put(o, dot, (size_t)(s + n - dot));
		return;
	}
	name(o, s, n);
}

size_t ctp_norm_cgroup(const char *s, size_t n, char *out, size_t outlen)
{
	struct out o = {out, outlen, 0};
	size_t i = 0;
	while (i < n) {
		if (s[i] == '/') {
			put(&o, "/", 1);
			i++;
			continue;
		}
		const char *slash = memchr(s + i, '/', n - i);
		size_t end = slash ? (size_t)(slash - s) : n;
		component(&o, s + i, end - i);
		i = end;
	}
	return finish(&o);
}

int ctp_flatten_match(const char *const *globs, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], path, 0) == 0)
			return (int)i;
	return -1;
}

/* ---- Spec ---------------------------------------------------------------*/

/* One axis name into *axis and its argument (cgroup:NAME, field:NAME) into
 * *arg; false when it is not one. */
static bool parse_axis(const char *a, uint8_t *axis, const char **arg)
{
	static const struct {
		const char *name;
		uint8_t axis;
	} plain[] = {{"pcomm", CTP_AXIS_PCOMM},	  {"comm", CTP_AXIS_COMM},
		     {"cgroup", CTP_AXIS_CGROUP}, {"none", CTP_AXIS_NONE},
		     {"pid", CTP_AXIS_PID},	  {"tid", CTP_AXIS_TID}};

	*arg = NULL;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(a, plain[i].name)) {
			*axis = plain[i].axis;
			return true;
		}
	if (!strncmp(a, "cgroup:", 7) && a[7]) {
		*axis = CTP_AXIS_CGROUP_V1;
		*arg = a + 7;
		return true;
	}
	if (!strncmp(a, "field:", 6) && a[6]) {
		*axis = CTP_AXIS_FIELD;
		*arg = a + 6;
		return true;
	}
	return false;
}

/* The argument of axis i of s (the hierarchy or field name), or NULL. */
static const char *axis_arg(const struct ctp_group_spec *s, size_t i)
{
	return s->axes[i] == CTP_AXIS_CGROUP_V1 ? s->v1[i]
	       : s->axes[i] == CTP_AXIS_FIELD	? s->field[i]
						: NULL;
}

int ctp_group_spec_parse(char *text, struct ctp_group_spec *spec, char *err,
			 size_t errlen)
{
	size_t n = 0;
	bool names = false, none = false;
	char *save = NULL;

	for (char *a = strtok_r(text, ",", &save); a;
	     a = strtok_r(NULL, ",", &save)) {
		uint8_t axis;
		const char *arg;
		if (!parse_axis(a, &axis, &arg)) {
			snprintf(err, errlen,
				 "unknown axis '%s' (pcomm, comm, cgroup, "
				 "cgroup:HIERARCHY, pid, tid, field:NAME, "
				 "none)",
				 a);
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++)
			if (spec->axes[i] == axis &&
			    (!arg || !strcmp(axis_arg(spec, i), arg))) {
				snprintf(err, errlen, "axis '%s' given twice",
					 a);
				return -EINVAL;
			}
		if (n == CTP_GROUP_MAX_AXES) {
			snprintf(err, errlen, "at most %d axes",
				 CTP_GROUP_MAX_AXES);
			return -EINVAL;
		}
		names |= axis == CTP_AXIS_PCOMM || axis == CTP_AXIS_COMM;
		none |= axis == CTP_AXIS_NONE;
		spec->v1[n] = axis == CTP_AXIS_CGROUP_V1 ? arg : NULL;
		spec->field[n] = axis == CTP_AXIS_FIELD ? arg : NULL;
		spec->axes[n++] = axis;
	}
	if (!n) {
		snprintf(err, errlen, "no axis given");
		return -EINVAL;
	}
	if (none && names) {
		snprintf(err, errlen,
			 "'none' already keys by process and thread name; "
			 "do not compose it with pcomm or comm");
		return -EINVAL;
	}
	for (size_t i = n; i < CTP_GROUP_MAX_AXES; i++)
		spec->v1[i] = spec->field[i] = NULL;
	spec->n_axes = n;
	return 0;
}

/* ---- Arena ----------------------------------------------------------------*/

struct block {
	struct block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct arena {
	struct block *head;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	if (!a->head || a->head->cap - a->head->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		struct block *b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	void *p = a->head->data + a->head->used;
	a->head->used += n;
	return p;
}

static void arena_done(struct arena *a)
{
	while (a->head) {
		struct block *b = a->head;
		a->head = b->next;
		free(b);
	}
}

/* ---- The table ----------------------------------------------------------*/

struct ctp_groups {
	const struct ctp_snap *snap;
	size_t n_key;
	const char *title[CTP_GROUP_MAX_KEY];
	bool numeric[CTP_GROUP_MAX_KEY];
	struct ctp_group *groups;
	size_t n;
	struct arena arena;
	const struct ctp_agg **cache; /* per field index */
};

const struct ctp_snap *ctp_groups_snap(const struct ctp_groups *g)
{
	return g->snap;
}

size_t ctp_groups_count(const struct ctp_groups *g)
{
	return g->n;
}

const struct ctp_group *ctp_groups_at(const struct ctp_groups *g, size_t i)
{
	return i < g->n ? &g->groups[i] : NULL;
}

size_t ctp_groups_n_key(const struct ctp_groups *g)
{
	return g->n_key;
}

const char *ctp_groups_key_title(const struct ctp_groups *g, size_t part)
{
	return part < g->n_key ? g->title[part] : NULL;
}

/* Numeric parts are decimal integers without leading zeros, maybe
 * negative (an I64 field's value): compared by sign, then length. */
static int part_cmp(const char *a, const char *b, bool numeric)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	if (numeric) {
		bool na = a[0] == '-', nb = b[0] == '-';
		if (na != nb)
			return na ? -1 : 1;
		size_t la = strlen(a), lb = strlen(b);
		if (la != lb)
			return (la < lb) != na ? -1 : 1;
		int c = strcmp(a, b);
		return na ? -c : c;
	}
	return strcmp(a, b);
}

/* Compare keys, leaving out part `skip` (n_key for none). */
static int key_cmp(const bool *numeric, size_t n_key, size_t skip,
		   const char *const *a, const char *const *b)
{
	for (size_t i = 0; i < n_key; i++) {
		if (i == skip)
			continue;
		int c = part_cmp(a[i], b[i], numeric[i]);
		if (c)
			return c;
	}
	return 0;
}

int ctp_groups_key_cmp(const struct ctp_groups *g, const char *const *a,
		       const char *const *b)
{
	return key_cmp(g->numeric, g->n_key, g->n_key, a, b);
}

const struct ctp_group *ctp_groups_find(const struct ctp_groups *g,
					const char *const *key)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = ctp_groups_key_cmp(g, g->groups[mid].key, key);
		if (c == 0)
			return &g->groups[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void ctp_groups_free(struct ctp_groups *g)
{
	if (!g)
		return;
	arena_done(&g->arena);
	free(g->cache);
	free(g);
}

/* ---- Building ------------------------------------------------------------*/

struct build {
	struct ctp_groups *g;
	const struct ctp_group_spec *spec;
	const struct ctp_snap_table *th, *pr, *cg;
	const char **keys; /* per thread row, n_key parts */
	size_t occ;	   /* the occurrence part, or n_key */
	uint32_t *proc_of; /* per thread row: process row, UINT32_MAX none */
	const char **cg_key[CTP_GROUP_MAX_AXES]; /* per cgroup row */
	const struct ctp_snap_field *v1f[CTP_GROUP_MAX_AXES];
	struct ctp_bytes v1h[CTP_GROUP_MAX_AXES]; /* v1f's hierarchies */
	/* Per field axis: the field whose value keys it. */
	const struct ctp_snap_field *keyf[CTP_GROUP_MAX_AXES];
	/* Per v1 axis, per thread row: the cgroup row of its path in that
	 * hierarchy (key "v1:<controllers>:<path>"), -1 when none. */
	int64_t *v1_row[CTP_GROUP_MAX_AXES];
	bool any_cgroup_axis;
	/* Extra tasks, rows th->rows.. of keys and proc_of. */
	const struct ctp_group_extra *x;
	size_t nx;
};

/* The extra task that row r of the build is, or NULL for a thread row. */
static const struct ctp_group_extra *extra_of(const struct build *b, size_t r)
{
	return r >= b->th->rows ? &b->x[r - b->th->rows] : NULL;
}

/* A NUL-terminated copy of bytes in the arena, normalized or not. */
static const char *key_str(struct ctp_groups *g, const char *s, size_t n,
			   int how /* 0 raw, 1 name, 2 cgroup */)
{
	size_t cap = how ? CTP_NORM_MAX(n) : n + 1;
	char *c = arena_alloc(&g->arena, cap);
	if (!c)
		return NULL;
	if (how == 1)
		ctp_norm_name(s, n, c, cap);
	else if (how == 2)
		ctp_norm_cgroup(s, n, c, cap);
	else {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

/* The key of a cgroup path for axis i: its flatten glob, or the path
 * (normalized). *out NULL for an unknown path; -ENOMEM. */
static int cgroup_key(struct build *b, const struct ctp_bytes *p,
		      const char **out)
{
	const struct ctp_group_spec *s = b->spec;
	*out = NULL;
	if (!p->ptr)
		return 0;
	if (s->n_flatten) {
		char *z = malloc(p->len + 1);
		if (!z)
			return -ENOMEM;
		memcpy(z, p->ptr, p->len);
		z[p->len] = '\0';
		int m = ctp_flatten_match(s->flatten, s->n_flatten, z);
		free(z);
		if (m >= 0) {
			*out = s->flatten[m];
			return 0;
		}
	}
	*out = key_str(b->g, p->ptr, p->len, s->no_normalize ? 0 : 2);
	return *out ? 0 : -ENOMEM;
}

static uint32_t find_proc(const struct ctp_snap_table *pr, uint64_t tgid)
{
	long r = ctp_snap_row(pr, tgid, 0);
	return r < 0 ? UINT32_MAX : (uint32_t)r;
}

/* A decimal number as a key part, in the arena. */
static const char *num_key(struct ctp_groups *g, bool neg, uint64_t mag)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%s%" PRIu64, neg ? "-" : "", mag);
	return key_str(g, num, (size_t)n, 0);
}

/* A field's value as a key part (raw), NULL for absent or no memory. */
static const char *value_key(struct ctp_groups *g, const struct ctp_value *v)
{
	struct ctp_bytes by;

	switch (v->type) {
	case CTP_TYPE_U64:
		return num_key(g, false, v->u64);
	case CTP_TYPE_I64:
		/* The magnitude of INT64_MIN does not fit an int64_t. */
		return num_key(g, v->i64 < 0,
			       v->i64 < 0 ? -(uint64_t)v->i64
					  : (uint64_t)v->i64);
	case CTP_TYPE_BOOL:
		return v->b ? "true" : "false";
	case CTP_TYPE_CHAR:
		return key_str(g, (const char *)&v->c, 1, 0);
	case CTP_TYPE_STRING:
		by = v->str;
		return key_str(g, by.ptr ? by.ptr : "", by.len, 0);
	}
	return NULL;
}

/* The key part of a field axis for thread row r: the thread's value, or
 * its process's for a process field. -ENOMEM, else 0. */
static int field_key(struct build *b, const struct ctp_snap_field *f, size_t r,
		     const char **out)
{
	struct ctp_value v = {0};
	if (f->scope == CTP_SCOPE_THREAD && !extra_of(b, r))
		v = ctp_snap_value(b->g->snap, f, r);
	else if (b->proc_of[r] != UINT32_MAX)
		v = ctp_snap_value(b->g->snap, f, b->proc_of[r]);
	*out = v.type == CTP_VALUE_ABSENT ? NULL : value_key(b->g, &v);
	return v.type != CTP_VALUE_ABSENT && !*out ? -ENOMEM : 0;
}

/* A name (process or thread comm) as a key part; NULL for nil. */
static int name_key(struct build *b, const struct ctp_bytes *c,
		    const char **out)
{
	int how = b->spec->no_normalize ? 0 : 1;
	*out = c && c->ptr ? key_str(b->g, c->ptr, c->len, how) : NULL;
	return c && c->ptr && !*out ? -ENOMEM : 0;
}

/* The key part of a v1 axis a for thread row r. */
static int v1_key(struct build *b, size_t a, size_t r, const char **out)
{
	struct ctp_value v = ctp_snap_get(b->g->snap, b->v1f[a], r);
	*out = NULL;
	if (v.type != CTP_TYPE_STRING)
		return 0;
	struct ctp_bytes by = v.str;
	if (!by.ptr)
		by.ptr = "";
	return cgroup_key(b, &by, out);
}

/* The key part of a v1 axis a for extra task x: its path in the axis's
 * hierarchy, which the exit sum took from a snapshot that saw it, its
 * process or its parent live (exit records carry no v1 path). */
static int extra_v1_key(struct build *b, size_t a,
			const struct ctp_group_extra *x, const char **out)
{
	const struct ctp_bytes *h = &b->v1h[a];
	*out = NULL;
	for (size_t i = 0; i < x->n_v1; i++) {
		const struct ctp_bytes *xh = &x->v1[i].hier;
		if (xh->len == h->len && !memcmp(xh->ptr, h->ptr, h->len))
			return cgroup_key(b, &x->v1[i].path, out);
	}
	return 0;
}

/* The key parts axis a gives thread row r, into k; how many in *np (the
 * occurrence of none is filled in later). */
static int axis_keys(struct build *b, size_t a, size_t r, const char **k,
		     size_t *np)
{
	uint32_t pr = b->proc_of[r];
	const struct ctp_group_extra *x = extra_of(b, r);
	const struct ctp_bytes *comm = x ? &x->comm : &b->th->comm[r],
			       *pcomm = x		   ? &x->pcomm
					: pr == UINT32_MAX ? NULL
							   : &b->pr->comm[pr];
	int64_t c;
	int ret = 0;

	*np = 1;
	switch (b->spec->axes[a]) {
	case CTP_AXIS_NONE:
		*np = 3;
		k[2] = NULL;
		if ((ret = name_key(b, comm, &k[1])) < 0)
			return ret;
		return name_key(b, pcomm, &k[0]);
	case CTP_AXIS_PCOMM:
		return name_key(b, pcomm, &k[0]);
	case CTP_AXIS_COMM:
		return name_key(b, comm, &k[0]);
	case CTP_AXIS_CGROUP:
		if (x)
			return cgroup_key(b, &x->cgroup, &k[0]);
		c = b->th->cgroup[r];
		k[0] = c >= 0 && (size_t)c < b->cg->rows ? b->cg_key[a][c]
							 : NULL;
		return 0;
	case CTP_AXIS_CGROUP_V1:
		k[0] = NULL;
		return x ? extra_v1_key(b, a, x, &k[0])
			 : v1_key(b, a, r, &k[0]);
	case CTP_AXIS_PID:
	case CTP_AXIS_TID:
		k[0] = num_key(b->g, false,
			       b->spec->axes[a] == CTP_AXIS_PID
				       ? (x ? x->tgid : b->th->tgid[r])
				       : (x ? x->tid : b->th->tid[r]));
		return k[0] ? 0 : -ENOMEM;
	case CTP_AXIS_FIELD:
		return field_key(b, b->keyf[a], r, &k[0]);
	}
	return -EINVAL;
}

static int thread_keys(struct build *b)
{
	struct ctp_groups *g = b->g;

	for (size_t r = 0; r < b->th->rows + b->nx; r++) {
		const char **k = &b->keys[r * g->n_key];
		const struct ctp_group_extra *x = extra_of(b, r);
		size_t p = 0, np;
		b->proc_of[r] = find_proc(b->pr, x ? x->tgid : b->th->tgid[r]);
		for (size_t a = 0; a < b->spec->n_axes; a++, p += np) {
			int ret = axis_keys(b, a, r, &k[p], &np);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct build *b = arg;
	uint32_t a = *(const uint32_t *)pa, c = *(const uint32_t *)pb;
	int r = key_cmp(b->g->numeric, b->g->n_key, b->occ,
			&b->keys[a * b->g->n_key], &b->keys[c * b->g->n_key]);
	if (r)
		return r;
	return (a > c) - (a < c);
}

static int cmp_groups(const void *pa, const void *pb, void *arg)
{
	const struct ctp_groups *g = arg;
	return ctp_groups_key_cmp(g, ((const struct ctp_group *)pa)->key,
				  ((const struct ctp_group *)pb)->key);
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return (a > b) - (a < b);
}

/*
 * The cgroup row axis a contributes for thread row r, or -1. A group's
 * cgroup-scope values come from the cgroups it is grouped by: the v2 row
 * for a `cgroup` axis, the thread's row in that v1 hierarchy for a
 * `cgroup:HIER` axis (never the v2 row its threads also point at). A
 * grouping with no cgroup axis takes the threads' v2 rows (once, from the
 * first axis).
 */
static int64_t group_cgroup_row(const struct build *b, size_t a, uint32_t r)
{
	switch (b->spec->axes[a]) {
	case CTP_AXIS_CGROUP:
		return b->th->cgroup[r];
	case CTP_AXIS_CGROUP_V1:
		return b->v1_row[a][r];
	default:
		return !b->any_cgroup_axis && a == 0 ? b->th->cgroup[r] : -1;
	}
}

/* Fill group `gr` with rows[0..n): threads, then extra tasks (rows sort
 * by key, then row, so a key's extras come after its threads). */
static int members(struct build *b, struct ctp_group *gr, const uint32_t *rows,
		   size_t n)
{
	struct ctp_groups *g = b->g;
	uint32_t *t = arena_alloc(&g->arena, n * sizeof(*t));
	uint32_t *p = arena_alloc(&g->arena, n * sizeof(*p));
	size_t np = 0, nc = 0, nt = 0;
	if (!t || !p)
		return -ENOMEM;
	while (nt < n && rows[nt] < b->th->rows)
		nt++;
	memcpy(t, rows, n * sizeof(*t));
	for (size_t i = nt; i < n; i++)
		t[i] = rows[i] - (uint32_t)b->th->rows;
	gr->extras = t + nt;
	gr->n_extras = (uint32_t)(n - nt);
	n = nt;
	uint32_t *c = arena_alloc(&g->arena,
				  (n ? n : 1) * b->spec->n_axes * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t pr = b->proc_of[rows[i]];
		if (pr != UINT32_MAX)
			p[np++] = pr;
		for (size_t a = 0; a < b->spec->n_axes; a++) {
			int64_t cg = group_cgroup_row(b, a, rows[i]);
			if (cg >= 0 && (size_t)cg < b->cg->rows)
				c[nc++] = (uint32_t)cg;
		}
	}
	/* Thread rows ascend with tgid, so process rows already ascend. */
	qsort(p, np, sizeof(*p), cmp_u32);
	qsort(c, nc, sizeof(*c), cmp_u32);
	size_t up = 0, uc = 0;
	for (size_t i = 0; i < np; i++)
		if (!up || p[up - 1] != p[i])
			p[up++] = p[i];
	for (size_t i = 0; i < nc; i++)
		if (!uc || c[uc - 1] != c[i])
			c[uc++] = c[i];
	gr->threads = t;
	gr->n_threads = (uint32_t)n;
	gr->processes = p;
	gr->n_processes = (uint32_t)up;
	gr->cgroups = c;
	gr->n_cgroups = (uint32_t)uc;
	return 0;
}

/* The section of thread path fields, one per cgroup v1 hierarchy, each
 * with a "hierarchy=<h>" dimension (the cgroup plugin declares them;
 * docs/FORMAT.md 7.2.1). */
#define V1_PATH_SECTION "cgroup-v1-path"

/* The value of dimension `key` in dims ("k=v,k=v"), its length in *len;
 * NULL when absent. */
static const char *dim_value(const char *dims, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	for (const char *p = dims; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > kl && p[kl] == '=' && !memcmp(p, key, kl)) {
			*len = n - kl - 1;
			return p + kl + 1;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

bool ctp_group_v1_field(const struct ctp_snap_field *f, const char **h,
			size_t *hlen)
{
	if (f->scope != CTP_SCOPE_THREAD || f->type != CTP_TYPE_STRING ||
	    strcmp(f->section, V1_PATH_SECTION) != 0)
		return false;
	*h = dim_value(f->dims, "hierarchy", hlen);
	return *h && *hlen;
}

/* The title of a field axis: the field's name upper-cased, so that it
 * reads as a key column like PCOMM and is not taken for the column of the
 * same field's aggregate, which show heads with the name as it is. */
static const char *field_title(struct ctp_groups *g,
			       const struct ctp_snap_field *f)
{
	size_t n = strlen(f->name);
	char *t = arena_alloc(&g->arena, n + 1);
	if (!t)
		return NULL;
	for (size_t i = 0; i <= n; i++) {
		char c = f->name[i];
		t[i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
	}
	return t;
}

/* "CGROUP:<hierarchy>" for the v1 axis of field f. */
static const char *v1_title(struct ctp_groups *g,
			    const struct ctp_snap_field *f)
{
	const char *h = "";
	size_t hl = 0;
	ctp_group_v1_field(f, &h, &hl);
	size_t n = hl + 8;
	char *t = arena_alloc(&g->arena, n);
	if (t)
		snprintf(t, n, "CGROUP:%.*s", (int)hl, h);
	return t;
}

/* The column titles and which parts compare as numbers; b->occ. */
static int titles(struct build *b)
{
	struct ctp_groups *g = b->g;
	const struct ctp_group_spec *s = b->spec;
	const struct ctp_snap_field *f;
	size_t p = 0;

	b->occ = CTP_GROUP_MAX_KEY;
	for (size_t a = 0; a < s->n_axes; a++) {
		switch (s->axes[a]) {
		case CTP_AXIS_PCOMM:
			g->title[p++] = "PCOMM";
			break;
		case CTP_AXIS_COMM:
			g->title[p++] = "COMM";
			break;
		case CTP_AXIS_NONE:
			g->title[p++] = "PCOMM";
			g->title[p++] = "COMM";
			b->occ = p;
			g->numeric[p] = true;
			g->title[p++] = "#";
			break;
		case CTP_AXIS_CGROUP:
			g->title[p++] = "CGROUP";
			break;
		case CTP_AXIS_CGROUP_V1:
			if (!(g->title[p++] = v1_title(g, b->v1f[a])))
				return -ENOMEM;
			break;
		case CTP_AXIS_PID:
		case CTP_AXIS_TID:
			g->numeric[p] = true;
			g->title[p++] =
				s->axes[a] == CTP_AXIS_PID ? "PID" : "TID";
			break;
		case CTP_AXIS_FIELD:
			f = b->keyf[a];
			g->numeric[p] = f->type == CTP_TYPE_U64 ||
					f->type == CTP_TYPE_I64;
			if (!(g->title[p++] = field_title(g, f)))
				return -ENOMEM;
			break;
		default:
			return -EINVAL;
		}
	}
	g->n_key = p;
	if (b->occ == CTP_GROUP_MAX_KEY)
		b->occ = p;
	return 0;
}

/* Whether field f can key groups: categorical of any type but a cpu set
 * (whose kind is cpuset anyway), or an ordinal char or string (a state
 * letter, a level name): a few distinct values. Ordinal numbers (nice,
 * priority, start time) are ranges more than categories. */
static bool keys_groups(const struct ctp_snap_field *f)
{
	if (f->kind == CTP_KIND_CATEGORICAL)
		return f->type != CTP_TYPE_CPUSET;
	return f->kind == CTP_KIND_ORDINAL &&
	       (f->type == CTP_TYPE_CHAR || f->type == CTP_TYPE_STRING);
}

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case CTP_KIND_COUNTER:
		return "a counter";
	case CTP_KIND_PEAK:
		return "a peak";
	case CTP_KIND_GAUGE:
		return "a gauge";
	case CTP_KIND_ORDINAL:
		return "an ordinal number";
	case CTP_KIND_CPUSET:
		return "a cpu set";
	}
	return "of a kind this reader does not know";
}

/*
 * The field of a field:NAME axis. Errors name the field: missing from the
 * snapshot (with the closest thread or process field's name when one is
 * near), of host or cgroup scope, or not a category.
 */
static int resolve_field(const struct ctp_snap *snap, const char *name,
			 const struct ctp_snap_field **out, char *err,
			 size_t errlen)
{
	const struct ctp_snap_field *f =
		name ? ctp_snap_field_find(snap, name) : NULL;
	char near[128] = "";

	if (!name)
		name = "";
	if (!f) {
		const struct ctp_snap_field *fs = ctp_snap_fields(snap);
		unsigned best = UINT_MAX;
		for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
			if (fs[i].scope == CTP_SCOPE_THREAD ||
			    fs[i].scope == CTP_SCOPE_PROCESS)
				ctp_closest_step(name, fs[i].name, &best, near,
						 sizeof(near));
		snprintf(err, errlen,
			 "axis field:%s: this snapshot has no field %s%s%s%s",
			 name, name, near[0] ? " (did you mean '" : "", near,
			 near[0] ? "'?)" : "");
		return -EINVAL;
	}
	if (f->scope != CTP_SCOPE_THREAD && f->scope != CTP_SCOPE_PROCESS) {
		snprintf(err, errlen,
			 "axis field:%s: %s is a %s field; groups are of "
			 "threads, keyed by thread or process fields",
			 name, name,
			 f->scope == CTP_SCOPE_HOST ? "host" : "cgroup");
		return -EINVAL;
	}
	if (!keys_groups(f)) {
		snprintf(err, errlen,
			 "axis field:%s: %s is %s, not a category; field: "
			 "takes categorical fields (and ordinal chars and "
			 "strings)",
			 name, name, kind_name(f->kind));
		return -EINVAL;
	}
	*out = f;
	return 0;
}

/*
 * The path field of v1 hierarchy `name`: the hierarchy as the cgroup plugin
 * spells it ("cpu-cpuacct": its controller list, ',' and '=' as '-'), or
 * one controller of exactly one hierarchy ("cpu").
 */
static int resolve_v1(const struct ctp_snap *snap, const char *name,
		      const struct ctp_snap_field **out, char *err,
		      size_t errlen)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t nf = ctp_snap_n_fields(snap), n = strlen(name), found = 0;
	char want[128];

	if (n >= sizeof(want)) {
		snprintf(err, errlen, "axis cgroup:%s: name too long", name);
		return -EINVAL;
	}
	for (size_t i = 0; i <= n; i++) {
		char c = name[i];
		want[i] = c == '='		 ? '-'
			  : c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a')
						 : c;
	}
	*out = NULL;
	for (size_t i = 0; i < nf; i++) {
		const char *h;
		size_t hl;
		if (!ctp_group_v1_field(&fs[i], &h, &hl))
			continue;
		if (hl == n && !memcmp(h, want, n)) {
			*out = &fs[i];
			return 0;
		}
		for (size_t k = 0; k < hl;) {
			const char *dash = memchr(h + k, '-', hl - k);
			size_t e = dash ? (size_t)(dash - h) : hl;
			if (e - k == n && !memcmp(h + k, want, n)) {
				found++;
				*out = &fs[i];
				break;
			}
			k = e + 1;
		}
	}
	if (found == 1)
		return 0;
	snprintf(err, errlen,
		 found ? "axis cgroup:%s: more than one v1 hierarchy has that "
			 "controller; name the hierarchy (cgroup:cpu-cpuacct)"
		       : "axis cgroup:%s: this snapshot has no thread path "
			 "field of cgroup v1 hierarchy %s (section "
			 "cgroup-v1-path; the cgroup plugin records one per "
			 "v1 hierarchy it meets)",
		 name, want);
	return -EINVAL;
}

/* A v1 hierarchy's name as the cgroup plugin spells it in field names:
 * the controller list lowered, ',' and '=' as '-' (into out, NUL-ended).
 * False when it does not fit. */
static bool hier_name(const char *ctl, size_t n, char *out, size_t outlen)
{
	if (n >= outlen)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = ctl[i];
		out[i] = c == ',' || c == '='	? '-'
			 : c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a')
						: c;
	}
	out[n] = '\0';
	return true;
}

struct keyed_row {
	struct ctp_bytes path;
	uint32_t row;
};

static int cmp_keyed(const void *pa, const void *pb)
{
	const struct keyed_row *a = pa, *b = pb;
	size_t n = a->path.len < b->path.len ? a->path.len : b->path.len;
	int c = n ? memcmp(a->path.ptr, b->path.ptr, n) : 0;
	if (c)
		return c;
	return (a->path.len > b->path.len) - (a->path.len < b->path.len);
}

/*
 * For v1 axis a: each thread's cgroup row in that hierarchy, found by its
 * path field among the rows keyed "v1:<controllers>:<path>" whose
 * controllers spell the axis's hierarchy (docs/FORMAT.md 7.2.1).
 */
static int map_v1_rows(struct build *b, size_t a)
{
	const char *fn = "";
	size_t hl = 0;
	ctp_group_v1_field(b->v1f[a], &fn, &hl);
	struct keyed_row *k =
		malloc((b->cg->rows ? b->cg->rows : 1) * sizeof(*k));
	b->v1_row[a] =
		malloc((b->th->rows ? b->th->rows : 1) * sizeof(*b->v1_row[a]));
	if (!k || !b->v1_row[a]) {
		free(k);
		return -ENOMEM;
	}
	size_t nk = 0;
	for (size_t c = 0; c < b->cg->rows; c++) {
		const struct ctp_bytes *p = &b->cg->path[c];
		if (!p->ptr || p->len < 4 || memcmp(p->ptr, "v1:", 3))
			continue;
		const char *ctl = p->ptr + 3;
		const char *colon = memchr(ctl, ':', p->len - 3);
		char h[128];
		if (!colon ||
		    !hier_name(ctl, (size_t)(colon - ctl), h, sizeof(h)) ||
		    strlen(h) != hl || memcmp(h, fn, hl))
			continue;
		k[nk].path.ptr = colon + 1;
		k[nk].path.len = p->len - (size_t)(colon + 1 - p->ptr);
		k[nk].row = (uint32_t)c;
		nk++;
	}
	qsort(k, nk, sizeof(*k), cmp_keyed);
	for (size_t r = 0; r < b->th->rows; r++) {
		struct ctp_value v = ctp_snap_get(b->g->snap, b->v1f[a], r);
		struct keyed_row want = {.path = v.str}, *hit = NULL;
		if (v.type == CTP_TYPE_STRING && nk)
			hit = bsearch(&want, k, nk, sizeof(*k), cmp_keyed);
		b->v1_row[a][r] = hit ? (int64_t)hit->row : -1;
	}
	free(k);
	return 0;
}

static int build(struct build *b)
{
	struct ctp_groups *g = b->g;
	const struct ctp_group_spec *s = b->spec;
	size_t rows = b->th->rows + b->nx;
	uint32_t *order = NULL;
	int ret = -ENOMEM;

	for (size_t a = 0; a < s->n_axes; a++) {
		if (s->axes[a] != CTP_AXIS_CGROUP)
			continue;
		b->cg_key[a] = calloc(b->cg->rows ? b->cg->rows : 1,
				      sizeof(*b->cg_key[a]));
		if (!b->cg_key[a])
			return -ENOMEM;
		for (size_t c = 0; c < b->cg->rows; c++)
			if ((ret = cgroup_key(b, &b->cg->path[c],
					      &b->cg_key[a][c])) < 0)
				return ret;
	}
	for (size_t a = 0; a < s->n_axes; a++) {
		b->any_cgroup_axis |= s->axes[a] == CTP_AXIS_CGROUP ||
				      s->axes[a] == CTP_AXIS_CGROUP_V1;
		if (s->axes[a] == CTP_AXIS_CGROUP_V1 &&
		    (ret = map_v1_rows(b, a)) < 0)
			return ret;
	}
	ret = -ENOMEM;
	b->keys = calloc(rows ? rows * g->n_key : 1, sizeof(*b->keys));
	b->proc_of = calloc(rows ? rows : 1, sizeof(*b->proc_of));
	order = malloc((rows ? rows : 1) * sizeof(*order));
	g->groups =
		arena_alloc(&g->arena, (rows ? rows : 1) * sizeof(*g->groups));
	if (!b->keys || !b->proc_of || !order || !g->groups)
		goto out;
	if ((ret = thread_keys(b)) < 0)
		goto out;
	for (size_t r = 0; r < rows; r++)
		order[r] = (uint32_t)r;
	qsort_r(order, rows, sizeof(*order), cmp_rows, b);

	bool none = b->occ < g->n_key;
	for (size_t i = 0; i < rows;) {
		size_t j = i + 1;
		while (j < rows && key_cmp(g->numeric, g->n_key, b->occ,
					   &b->keys[order[i] * g->n_key],
					   &b->keys[order[j] * g->n_key]) == 0)
			j++;
		for (size_t k = i; k < (none ? j : i + 1); k++) {
			struct ctp_group *gr = &g->groups[g->n++];
			const char **key =
				arena_alloc(&g->arena, g->n_key * sizeof(*key));
			if (!key) {
				ret = -ENOMEM;
				goto out;
			}
			memcpy(key, &b->keys[order[k] * g->n_key],
			       g->n_key * sizeof(*key));
			if (none) {
				char num[24];
				snprintf(num, sizeof(num), "%zu", k - i);
				key[b->occ] = key_str(g, num, strlen(num), 0);
				if (!key[b->occ]) {
					ret = -ENOMEM;
					goto out;
				}
			}
			gr->key = key;
			ret = none ? members(b, gr, &order[k], 1)
				   : members(b, gr, &order[i], j - i);
			if (ret < 0)
				goto out;
		}
		i = j;
	}
	if (none)
		qsort_r(g->groups, g->n, sizeof(*g->groups), cmp_groups, g);
	ret = 0;
out:
	free(order);
	return ret;
}

int ctp_groups_new(const struct ctp_snap *snap,
		   const struct ctp_group_spec *spec, struct ctp_groups **ret,
		   char *err, size_t errlen)
{
	return ctp_groups_new_extra(snap, spec, NULL, 0, ret, err, errlen);
}

int ctp_groups_new_extra(const struct ctp_snap *snap,
			 const struct ctp_group_spec *spec,
			 const struct ctp_group_extra *x, size_t nx,
			 struct ctp_groups **ret, char *err, size_t errlen)
{
	struct ctp_groups *g = calloc(1, sizeof(*g));
	struct build b = {.g = g, .spec = spec, .x = x, .nx = nx};
	int r = -ENOMEM;

	if (err && errlen)
		err[0] = '\0';
	if (!g)
		return -ENOMEM;
	g->snap = snap;
	if (!spec->n_axes || spec->n_axes > CTP_GROUP_MAX_AXES) {
		snprintf(err, errlen, "no axes to group by");
		r = -EINVAL;
		goto out;
	}
	g->cache = calloc(ctp_snap_n_fields(snap) + 1, sizeof(*g->cache));
	if (!g->cache)
		goto out;
	for (size_t a = 0; a < spec->n_axes; a++) {
		if (spec->axes[a] == CTP_AXIS_CGROUP_V1) {
			if ((r = resolve_v1(snap, spec->v1[a], &b.v1f[a], err,
					    errlen)) < 0)
				goto out;
			ctp_group_v1_field(b.v1f[a], &b.v1h[a].ptr,
					   &b.v1h[a].len);
		}
		if (spec->axes[a] == CTP_AXIS_FIELD &&
		    (r = resolve_field(snap, spec->field[a], &b.keyf[a], err,
				       errlen)) < 0)
			goto out;
	}
	if ((r = titles(&b)) < 0) {
		if (r == -EINVAL)
			snprintf(err, errlen, "unknown axis");
		goto out;
	}
	b.th = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	b.pr = ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	b.cg = ctp_snap_table(snap, CTP_SCOPE_CGROUP);
	r = build(&b);
out:
	free(b.keys);
	free(b.proc_of);
	for (size_t a = 0; a < CTP_GROUP_MAX_AXES; a++) {
		free(b.cg_key[a]);
		free(b.v1_row[a]);
	}
	if (r < 0) {
		if (r == -ENOMEM && err && errlen && !err[0])
			snprintf(err, errlen, "out of memory");
		ctp_groups_free(g);
		return r;
	}
	*ret = g;
	return 0;
}

static bool cpuset_eq(const struct ctp_value *a, const struct ctp_value *b)
{
	return a->cpuset.n == b->cpuset.n &&
	       (!a->cpuset.n || !memcmp(a->cpuset.r, b->cpuset.r,
					2 * a->cpuset.n * sizeof(uint32_t)));
}

/* ---- Aggregation --------------------------------------------------------*/

static bool ordered(uint8_t type)
{
	return type >= CTP_TYPE_U64 && type <= CTP_TYPE_STRING;
}

/* Whether this reader knows how to apply `rule` to values of `type`. */
static bool rule_known(uint8_t rule, uint8_t type)
{
	switch (rule) {
	case CTP_RULE_SUM:
		return type == CTP_TYPE_U64 || type == CTP_TYPE_I64;
	case CTP_RULE_MAX:
	case CTP_RULE_MIN:
	case CTP_RULE_RANGE:
	case CTP_RULE_MODE:
		return ordered(type);
	case CTP_RULE_UNION:
		return type == CTP_TYPE_CPUSET;
	}
	return false;
}

static int cmp_vals(const void *pa, const void *pb)
{
	return ctp_value_cmp(*(const struct ctp_value *const *)pa,
			     *(const struct ctp_value *const *)pb);
}

struct pair {
	uint32_t lo, hi;
};

static int cmp_pairs(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

/* The union of the present sets in vals[0..n); into the arena. */
static int cpuset_union(struct ctp_groups *g, const struct ctp_value *const *v,
			size_t n, struct ctp_agg *a)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i]->cpuset.n;
	struct pair *p = malloc((total ? total : 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i]->cpuset.n; j++)
			p[k++] = (struct pair){v[i]->cpuset.r[2 * j],
					       v[i]->cpuset.r[2 * j + 1]};
	qsort(p, k, sizeof(*p), cmp_pairs);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		/* Merge overlapping and adjacent ranges. */
		if (m && (uint64_t)p[i].lo <= (uint64_t)p[m - 1].hi + 1) {
			if (p[i].hi > p[m - 1].hi)
				p[m - 1].hi = p[i].hi;
		} else {
			p[m++] = p[i];
		}
	}
	uint32_t *r = arena_alloc(&g->arena, (m ? m : 1) * 2 * sizeof(*r));
	if (!r) {
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m; i++) {
		r[2 * i] = p[i].lo;
		r[2 * i + 1] = p[i].hi;
	}
	free(p);
	a->v.type = CTP_TYPE_CPUSET;
	a->v.cpuset.r = r;
	a->v.cpuset.n = m;
	for (size_t i = 1; i < n; i++)
		a->mixed |= !cpuset_eq(v[0], v[i]);
	return 0;
}

/* Reduce the present values vals[0..n) of field f, no number (those are
 * reduce_num's), by its rule. */
static int reduce(struct ctp_groups *g, const struct ctp_snap_field *f,
		  const struct ctp_value **vals, size_t n, struct ctp_agg *a)
{
	a->n_measured = (uint32_t)n;
	if (!n)
		return 0;
	if (!rule_known(f->rule, f->type)) {
		a->unknown = true;
		return 0;
	}
	switch (f->rule) {
	case CTP_RULE_MAX:
	case CTP_RULE_MIN:
	case CTP_RULE_RANGE: {
		const struct ctp_value *lo = vals[0], *hi = vals[0];
		for (size_t i = 1; i < n; i++) {
			if (ctp_value_cmp(vals[i], lo) < 0)
				lo = vals[i];
			if (ctp_value_cmp(vals[i], hi) > 0)
				hi = vals[i];
		}
		if (f->rule == CTP_RULE_RANGE) {
			a->v = *lo;
			a->hi = *hi;
			a->mixed = ctp_value_cmp(lo, hi) != 0;
		} else {
			a->v = f->rule == CTP_RULE_MAX ? *hi : *lo;
		}
		return 0;
	}
	case CTP_RULE_MODE: {
		/* Sorted, the first longest run is the most frequent value,
		 * the smallest on a tie. */
		qsort(vals, n, sizeof(*vals), cmp_vals);
		size_t best = 0, best_n = 0;
		for (size_t i = 0; i < n;) {
			size_t j = i + 1;
			while (j < n && ctp_value_cmp(vals[i], vals[j]) == 0)
				j++;
			if (j - i > best_n) {
				best = i;
				best_n = j - i;
			}
			i = j;
		}
		a->v = *vals[best];
		return 0;
	}
	case CTP_RULE_UNION:
		return cpuset_union(g, vals, n, a);
	}
	return 0;
}

static int cmp_nums(const void *pa, const void *pb)
{
	__int128 a = *(const __int128 *)pa, b = *(const __int128 *)pb;
	return (a > b) - (a < b);
}

/* x as a value of f's type (U64 or I64), x within its range. */
static struct ctp_value num_value(const struct ctp_snap_field *f, __int128 x)
{
	struct ctp_value v = {.type = f->type};
	if (f->type == CTP_TYPE_U64)
		v.u64 = (uint64_t)x;
	else
		v.i64 = (int64_t)x;
	return v;
}

/* Reduce the present numbers xs[0..n) of numeric field f (from its
 * column) by its rule, as reduce() its values. */
static void reduce_num(const struct ctp_snap_field *f, __int128 *xs, size_t n,
		       struct ctp_agg *a)
{
	a->n_measured = (uint32_t)n;
	if (!n)
		return;
	if (!rule_known(f->rule, f->type)) {
		a->unknown = true;
		return;
	}
	__int128 s = 0, lo = xs[0], hi = xs[0];
	switch (f->rule) {
	case CTP_RULE_SUM:
		for (size_t i = 0; i < n; i++)
			s += xs[i];
		a->v.type = f->type;
		if (f->type == CTP_TYPE_U64) {
			a->saturated = s > (__int128)UINT64_MAX;
			a->v.u64 = a->saturated ? UINT64_MAX : (uint64_t)s;
		} else {
			a->saturated = s > (__int128)INT64_MAX ||
				       s < (__int128)INT64_MIN;
			a->v.i64 = s > (__int128)INT64_MAX   ? INT64_MAX
				   : s < (__int128)INT64_MIN ? INT64_MIN
							     : (int64_t)s;
		}
		return;
	case CTP_RULE_MAX:
	case CTP_RULE_MIN:
	case CTP_RULE_RANGE:
		for (size_t i = 1; i < n; i++) {
			lo = xs[i] < lo ? xs[i] : lo;
			hi = xs[i] > hi ? xs[i] : hi;
		}
		a->v = num_value(f, f->rule == CTP_RULE_MIN ? lo : hi);
		if (f->rule == CTP_RULE_RANGE) {
			a->v = num_value(f, lo);
			a->hi = num_value(f, hi);
			a->mixed = lo != hi;
		}
		return;
	case CTP_RULE_MODE: {
		/* Sorted, the first longest run is the most frequent value,
		 * the smallest on a tie. */
		qsort(xs, n, sizeof(*xs), cmp_nums);
		size_t best = 0, best_n = 0;
		for (size_t i = 0; i < n;) {
			size_t j = i + 1;
			while (j < n && xs[j] == xs[i])
				j++;
			if (j - i > best_n) {
				best = i;
				best_n = j - i;
			}
			i = j;
		}
		a->v = num_value(f, xs[best]);
		return;
	}
	}
}

static const uint32_t *scope_rows(const struct ctp_group *gr, uint8_t scope,
				  uint32_t *n)
{
	switch (scope) {
	case CTP_SCOPE_THREAD:
		*n = gr->n_threads;
		return gr->threads;
	case CTP_SCOPE_PROCESS:
		*n = gr->n_processes;
		return gr->processes;
	case CTP_SCOPE_CGROUP:
		*n = gr->n_cgroups;
		return gr->cgroups;
	}
	*n = 0;
	return NULL;
}

static int aggregate_plain(struct ctp_groups *g, const struct ctp_snap_field *f,
			   struct ctp_agg *col)
{
	const struct ctp_snap_table *t = ctp_snap_table(g->snap, f->scope);
	const struct ctp_value *c = t->col[f->index];
	/* A number's members come from its column, one array. */
	bool num = ctp_field_is_number(f);
	const struct ctp_col *nc = num ? ctp_snap_col(g->snap, f) : NULL;
	size_t most = 0;
	if (num && !nc)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		uint32_t n;
		scope_rows(&g->groups[i], f->scope, &n);
		most = n > most ? n : most;
	}
	const struct ctp_value **vals = NULL;
	__int128 *xs = NULL;
	if (num ? !(xs = malloc((most ? most : 1) * sizeof(*xs)))
		: !(vals = malloc((most ? most : 1) * sizeof(*vals))))
		return -ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < g->n && ret == 0; i++) {
		uint32_t n;
		const uint32_t *rows = scope_rows(&g->groups[i], f->scope, &n);
		size_t k = 0;
		col[i].n_rows = n;
		if (num) {
			for (uint32_t r = 0; r < n; r++)
				if (ctp_col_has(nc, rows[r]))
					xs[k++] =
						nc->type == CTP_TYPE_I64
							? (__int128)nc
								  ->i64[rows[r]]
							: (__int128)nc->u64
								  [rows[r]];
			reduce_num(f, xs, k, &col[i]);
			continue;
		}
		for (uint32_t r = 0; c && r < n; r++)
			if (c[rows[r]].type != CTP_VALUE_ABSENT)
				vals[k++] = &c[rows[r]];
		ret = reduce(g, f, vals, k, &col[i]);
	}
	free(vals);
	free(xs);
	return ret;
}

static int aggregate_derived(struct ctp_groups *g,
			     const struct ctp_snap_field *f,
			     struct ctp_agg *col)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(g->snap);
	const struct ctp_agg *in[CTP_DERIVE_MAX_TERMS];

	for (size_t t = 0; t < f->n_terms; t++) {
		int ret =
			ctp_groups_aggregate(g, &fs[f->terms[t].input], &in[t]);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < g->n; i++) {
		struct ctp_value v[CTP_DERIVE_MAX_TERMS];
		uint32_t measured = UINT32_MAX;
		bool ok = true;
		scope_rows(&g->groups[i], f->scope, &col[i].n_rows);
		for (size_t t = 0; t < f->n_terms; t++) {
			const struct ctp_agg *a = &in[t][i];
			if (a->n_measured < measured)
				measured = a->n_measured;
			ok &= a->v.type != CTP_VALUE_ABSENT && !a->saturated &&
			      !a->unknown;
			v[t] = a->v;
		}
		col[i].n_measured = measured;
		if (!ok || !ctp_snap_derive(f, v, &col[i].v))
			col[i].v.type = CTP_VALUE_ABSENT;
	}
	return 0;
}

int ctp_groups_aggregate(struct ctp_groups *g, const struct ctp_snap_field *f,
			 const struct ctp_agg **out)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(g->snap);
	size_t nf = ctp_snap_n_fields(g->snap);

	if (f->index >= nf || f != &fs[f->index] ||
	    (f->scope != CTP_SCOPE_THREAD && f->scope != CTP_SCOPE_PROCESS &&
	     f->scope != CTP_SCOPE_CGROUP))
		return -EINVAL;
	if (g->cache[f->index]) {
		*out = g->cache[f->index];
		return 0;
	}
	struct ctp_agg *col =
		arena_alloc(&g->arena, (g->n ? g->n : 1) * sizeof(*col));
	if (!col)
		return -ENOMEM;
	memset(col, 0, (g->n ? g->n : 1) * sizeof(*col));
	int ret = f->n_terms ? aggregate_derived(g, f, col)
			     : aggregate_plain(g, f, col);
	if (ret < 0)
		return ret;
	g->cache[f->index] = col;
	*out = col;
	return 0;
}

/* ---- Comparing aggregates ------------------------------------------------*/

static bool present(const struct ctp_agg *a)
{
	return a->v.type != CTP_VALUE_ABSENT && !a->unknown;
}

int ctp_agg_cmp(const struct ctp_agg *a, const struct ctp_agg *b)
{
	bool pa = present(a), pb = present(b);
	if (!pa || !pb)
		return (int)pa - (int)pb;
	if (a->hi.type != CTP_VALUE_ABSENT && b->hi.type != CTP_VALUE_ABSENT &&
	    (a->v.type == CTP_TYPE_U64 || a->v.type == CTP_TYPE_I64)) {
		/* RANGE: by midpoint, i.e. by lo + hi, exactly. */
		__int128 x, y;
		ctp_agg_twice(a, &x);
		ctp_agg_twice(b, &y);
		return (x > y) - (x < y);
	}
	if (a->hi.type == CTP_TYPE_CHAR && b->hi.type == CTP_TYPE_CHAR) {
		int x = a->v.c + a->hi.c, y = b->v.c + b->hi.c;
		return (x > y) - (x < y);
	}
	if (a->v.type != b->v.type)
		return (a->v.type > b->v.type) - (a->v.type < b->v.type);
	return ctp_value_cmp(&a->v, &b->v);
}

bool ctp_agg_twice(const struct ctp_agg *a, __int128 *out)
{
	__int128 lo, hi;
	if (!present(a))
		return false;
	switch (a->v.type) {
	case CTP_TYPE_U64:
	case CTP_TYPE_I64:
		ctp_value_int(&a->v, &lo);
		if (a->hi.type != a->v.type || !ctp_value_int(&a->hi, &hi))
			hi = lo;
		break;
	case CTP_TYPE_BOOL:
		lo = hi = a->v.b;
		break;
	case CTP_TYPE_CHAR:
		lo = a->v.c;
		hi = a->hi.type == CTP_TYPE_CHAR ? a->hi.c : lo;
		break;
	case CTP_TYPE_CPUSET:
		lo = hi = ctp_cpuset_count(&a->v);
		break;
	default:
		return false;
	}
	*out = lo + hi;
	return true;
}

bool ctp_agg_number(const struct ctp_agg *a, long double *out)
{
	__int128 twice;
	if (!ctp_agg_twice(a, &twice))
		return false;
	*out = (long double)twice / 2;
	return true;
}

long ctp_group_spec_cgroup_part(const struct ctp_group_spec *spec)
{
	size_t p = 0;
	for (size_t i = 0; i < spec->n_axes; i++) {
		if (spec->axes[i] == CTP_AXIS_CGROUP ||
		    spec->axes[i] == CTP_AXIS_CGROUP_V1)
			return (long)p;
		p += spec->axes[i] == CTP_AXIS_NONE ? 3 : 1;
	}
	return -1;
}
