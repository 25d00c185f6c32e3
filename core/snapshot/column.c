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
	struct ctp_value v = ctp_snap_value(snap, f, row);
	return ctp_value_number(&v, out);
}

int ctp_col_init(struct ctp_col *c, const struct ctp_snap *snap,
		 const struct ctp_snap_field *f)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, f->scope);
	size_t n = t ? t->rows : 0;
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->type = f->type == CTP_TYPE_I64 ? CTP_TYPE_I64 : CTP_TYPE_U64;
	c->has = calloc(n / 64 + 1, sizeof(*c->has));
	c->u64 = calloc(n ? n : 1, sizeof(*c->u64));
	if (!c->has || !c->u64) {
		ctp_col_done(c);
		return -ENOMEM;
	}
	c->rows = n;
	for (size_t r = 0; r < n; r++) {
		struct ctp_value v = ctp_snap_value(snap, f, r);
		if (v.type != c->type)
			continue;  /* absent, or the field is no number */
		c->u64[r] = v.u64; /* i64 shares the bits */
		c->has[r / 64] |= 1ull << (r % 64);
	}
	return 0;
}

void ctp_col_done(struct ctp_col *c)
{
	free(c->has);
	free(c->u64);
	memset(c, 0, sizeof(*c));
}
