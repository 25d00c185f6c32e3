/* SPDX-License-Identifier: MIT */
/* Typed numbers from a snapshot (see column.h). */
#include "column.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ctp_snap_value: the cell of a field, derived fields computed. */
#include "value.h"

long double ctp_unit_seconds(uint8_t unit)
{
	switch (unit) {
	case CTP_UNIT_NS:
		return 1e-9L;
	case CTP_UNIT_US:
		return 1e-6L;
	case CTP_UNIT_TICKS:
		return 1.0L / CTP_USER_HZ;
	}
	return 0;
}

long double ctp_unit_to_seconds(long double x, uint8_t unit)
{
	/* Divided by the whole number of units in a second: one correctly
	 * rounded step, so a duration is the same long double whatever unit
	 * recorded it. Times 1e-9L rounds twice: 48,650,000,000 ns came out
	 * 48.6499... ("48.6s") where 4,865 ticks gave 48.6500...1 ("48.7s"). */
	switch (unit) {
	case CTP_UNIT_NS:
		return x / 1000000000;
	case CTP_UNIT_US:
		return x / 1000000;
	case CTP_UNIT_TICKS:
		return x / CTP_USER_HZ;
	}
	return 0;
}

uint64_t ctp_unit_ns(uint8_t unit)
{
	switch (unit) {
	case CTP_UNIT_NS:
		return 1;
	case CTP_UNIT_US:
		return 1000;
	case CTP_UNIT_TICKS:
		return 1000000000u / CTP_USER_HZ;
	}
	return 0;
}

bool ctp_value_int(const struct ctp_value *v, __int128 *out)
{
	if (v->type == CTP_TYPE_U64)
		*out = v->u64;
	else if (v->type == CTP_TYPE_I64)
		*out = v->i64;
	else
		return false;
	return true;
}

bool ctp_value_number(const struct ctp_value *v, long double *out)
{
	__int128 x;
	if (!ctp_value_int(v, &x))
		return false;
	*out = (long double)x;
	return true;
}

bool ctp_snap_number(const struct ctp_snap *snap,
		     const struct ctp_snap_field *f, size_t row,
		     long double *out)
{
	const struct ctp_col *c = ctp_snap_col(snap, f);
	if (c)
		return ctp_col_number(c, row, out);
	/* Out of memory for the column: the cell itself. */
	struct ctp_value v = ctp_snap_value(snap, f, row);
	return ctp_value_number(&v, out);
}

uint64_t ctp_col_bytes(size_t rows)
{
	/* One block: the values, then the bitmap; the struct; malloc's
	 * overhead of each. */
	return (uint64_t)rows * 8 + ((uint64_t)rows / 64 + 1) * 8 +
	       sizeof(struct ctp_col) + 2 * 32;
}

int ctp_col_build(const struct ctp_snap *snap, const struct ctp_snap_field *f,
		  struct ctp_col **out)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, f->scope);
	const struct ctp_col *in[CTP_DERIVE_MAX_TERMS];
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	const struct ctp_value *cells = NULL;
	size_t n = t ? t->rows : 0;

	*out = NULL;
	if (!ctp_field_is_number(f) || !n)
		return 0;
	if (!f->n_terms) {
		if (!t->col || !(cells = t->col[f->index]))
			return 0; /* omitted: no value in any row */
	} else {
		for (size_t i = 0; i < f->n_terms; i++)
			if (!(in[i] = ctp_snap_col(snap,
						   &fs[f->terms[i].input])))
				return -ENOMEM;
	}
	struct ctp_col *c = malloc(sizeof(*c));
	uint64_t *data = malloc((n + n / 64 + 1) * sizeof(*data));
	if (!c || !data) {
		free(c);
		free(data);
		return -ENOMEM;
	}
	*c = (struct ctp_col){.f = f,
			      .rows = n,
			      .type = f->type,
			      .has = data + n,
			      .u64 = data};
	/* A bitmap word at a time; the values of absent rows are 0. */
	for (size_t w = 0; w <= n / 64; w++) {
		uint64_t bits = 0;
		size_t end = n - w * 64 < 64 ? n : w * 64 + 64;
		for (size_t r = w * 64; cells && r < end; r++) {
			bool has = cells[r].type == c->type;
			c->u64[r] = has ? cells[r].u64 : 0; /* i64 shares it */
			bits |= (uint64_t)has << (r % 64);
		}
		for (size_t r = w * 64; !cells && r < end; r++) {
			struct ctp_value v = {.type = CTP_VALUE_ABSENT},
					 iv[CTP_DERIVE_MAX_TERMS];
			size_t i = 0;
			while (i < f->n_terms &&
			       (iv[i] = ctp_col_value(in[i], r)).type !=
				       CTP_VALUE_ABSENT)
				i++;
			bool has = i == f->n_terms &&
				   ctp_snap_derive(f, iv, &v) &&
				   v.type == c->type;
			c->u64[r] = has ? v.u64 : 0;
			bits |= (uint64_t)has << (r % 64);
		}
		c->has[w] = bits;
	}
	*out = c;
	return 0;
}

void ctp_col_free(struct ctp_col *c)
{
	if (c)
		free(c->u64);
	free(c);
}

bool ctp_snap_has_values(const struct ctp_snap *snap,
			 const struct ctp_snap_field *f)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, f->scope);
	const struct ctp_col *c =
		ctp_field_is_number(f) ? ctp_snap_col(snap, f) : NULL;
	for (size_t w = 0; c && w < c->rows / 64 + !!(c->rows % 64); w++)
		if (c->has[w])
			return true;
	for (size_t r = 0; !c && t && r < t->rows; r++)
		if (ctp_snap_value(snap, f, r).type != CTP_VALUE_ABSENT)
			return true;
	return false;
}
