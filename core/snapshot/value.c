/* SPDX-License-Identifier: MIT */
/* The values of a decoded snapshot (see value.h). */
#include "value.h"

#include <string.h>

bool ctp_snap_derive(const struct ctp_snap_field *f, const struct ctp_value *in,
		     struct ctp_value *out)
{
	__int128 sum = 0, best[256];
	bool have[256] = {false};

	for (size_t i = 0; i < f->n_terms; i++) {
		const struct ctp_snap_term *t = &f->terms[i];
		__int128 x;
		if (in[i].type == CTP_TYPE_U64)
			x = (__int128)in[i].u64;
		else if (in[i].type == CTP_TYPE_I64)
			x = (__int128)in[i].i64;
		else
			return false;
		x *= t->coef;
		if (!t->max_set) {
			sum += x;
		} else if (!have[t->max_set] || x > best[t->max_set]) {
			best[t->max_set] = x;
			have[t->max_set] = true;
		}
	}
	for (size_t k = 1; k < 256; k++)
		if (have[k])
			sum += best[k];
	if (f->type == CTP_TYPE_U64) {
		if (sum < 0 || sum > (__int128)UINT64_MAX)
			return false;
		*out = (struct ctp_value){.type = CTP_TYPE_U64,
					  .u64 = (uint64_t)sum};
		return true;
	}
	if (sum < (__int128)INT64_MIN || sum > (__int128)INT64_MAX)
		return false;
	*out = (struct ctp_value){.type = CTP_TYPE_I64, .i64 = (int64_t)sum};
	return true;
}

struct ctp_value ctp_snap_value(const struct ctp_snap *snap,
				const struct ctp_snap_field *f, size_t row)
{
	struct ctp_value in[CTP_DERIVE_MAX_TERMS], out = {0};
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);

	if (!f->n_terms)
		return ctp_snap_get(snap, f, row);
	/* The reader bounds nesting (FORMAT.md §4), so this recursion is
	 * shallow. */
	for (size_t i = 0; i < f->n_terms; i++) {
		in[i] = ctp_snap_value(snap, &fs[f->terms[i].input], row);
		if (in[i].type == CTP_VALUE_ABSENT)
			return out;
	}
	if (!ctp_snap_derive(f, in, &out))
		out.type = CTP_VALUE_ABSENT;
	return out;
}

uint64_t ctp_cpuset_count(const struct ctp_value *v)
{
	uint64_t n = 0;
	for (size_t i = 0; i < v->cpuset.n; i++)
		n += (uint64_t)v->cpuset.r[2 * i + 1] - v->cpuset.r[2 * i] + 1;
	return n;
}

int ctp_value_cmp(const struct ctp_value *a, const struct ctp_value *b)
{
	switch (a->type) {
	case CTP_TYPE_U64:
		return (a->u64 > b->u64) - (a->u64 < b->u64);
	case CTP_TYPE_I64:
		return (a->i64 > b->i64) - (a->i64 < b->i64);
	case CTP_TYPE_BOOL:
		return (int)a->b - (int)b->b;
	case CTP_TYPE_CHAR:
		return (int)a->c - (int)b->c;
	case CTP_TYPE_STRING: {
		size_t n = a->str.len < b->str.len ? a->str.len : b->str.len;
		int c = n ? memcmp(a->str.ptr, b->str.ptr, n) : 0;
		if (c)
			return c < 0 ? -1 : 1;
		return (a->str.len > b->str.len) - (a->str.len < b->str.len);
	}
	case CTP_TYPE_CPUSET: {
		uint64_t x = ctp_cpuset_count(a), y = ctp_cpuset_count(b);
		if (x != y)
			return (x > y) - (x < y);
		size_t n =
			a->cpuset.n < b->cpuset.n ? a->cpuset.n : b->cpuset.n;
		for (size_t i = 0; i < 2 * n; i++)
			if (a->cpuset.r[i] != b->cpuset.r[i])
				return a->cpuset.r[i] < b->cpuset.r[i] ? -1 : 1;
		return (a->cpuset.n > b->cpuset.n) -
		       (a->cpuset.n < b->cpuset.n);
	}
	}
	return 0;
}
