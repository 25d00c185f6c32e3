/* SPDX-License-Identifier: MIT */
/*
 * Typed numbers from a snapshot: a cell as a number, a field's unit as
 * seconds or nanoseconds, and a numeric column of a table as one array of
 * its type with absence as a bitmap, so that readers iterate numbers
 * without deriving them again from cells. Private to the core.
 */
#ifndef CTP_CORE_COLUMN_H
#define CTP_CORE_COLUMN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* The ABI's clock tick for /proc times (CTP_UNIT_TICKS). */
#define CTP_USER_HZ 100

/* ---- Units -----------------------------------------------------------------
 *
 * A time unit (ns, us, USER_HZ ticks) converts to seconds and to
 * nanoseconds; any other unit is no time and gives 0. */

/* Seconds per unit. */
long double ctp_unit_seconds(uint8_t unit);
/* x units in seconds, rounded once (x / units per second); 0 for no time
 * unit. What a value shows as a duration goes through this. */
long double ctp_unit_to_seconds(long double x, uint8_t unit);
/* Nanoseconds per unit, exactly. */
uint64_t ctp_unit_ns(uint8_t unit);

/* ---- Cells ---------------------------------------------------------------*/

/* A U64 or I64 cell exactly; false for an absent cell or another type
 * (bool, char, string, cpuset). */
bool ctp_value_int(const struct ctp_value *v, __int128 *out);
/* The same as a long double (exact: 64 bits of mantissa). */
bool ctp_value_number(const struct ctp_value *v, long double *out);
/* The number of field f in `row` of its table (derived fields computed,
 * ctp_snap_value); false when absent or not a number. */
bool ctp_snap_number(const struct ctp_snap *snap,
		     const struct ctp_snap_field *f, size_t row,
		     long double *out);

/* ---- Columns -------------------------------------------------------------*/

/*
 * A numeric field's values over every row of its table (host: 1 row),
 * derived fields computed: one array of the field's type, and a bitmap
 * of the rows that have a value. Built once, read many times; a field
 * that is no number (type other than U64/I64) gives a column of no value.
 */
struct ctp_col {
	const struct ctp_snap_field *f;
	size_t rows;
	uint8_t type;  /* CTP_TYPE_U64 or CTP_TYPE_I64 */
	uint64_t *has; /* bit r of word r / 64: row r has a value */
	union {
		uint64_t *u64;
		int64_t *i64;
	};
};

/* Fill c with field f of snap (c's arrays allocated). Returns 0 or
 * -ENOMEM (c left empty). */
int ctp_col_init(struct ctp_col *c, const struct ctp_snap *snap,
		 const struct ctp_snap_field *f);
void ctp_col_done(struct ctp_col *c);

static inline bool ctp_col_has(const struct ctp_col *c, size_t r)
{
	return r < c->rows && (c->has[r / 64] >> (r % 64) & 1);
}

/* Row r as a number; false when it has none. */
static inline bool ctp_col_number(const struct ctp_col *c, size_t r,
				  long double *out)
{
	if (!ctp_col_has(c, r))
		return false;
	*out = c->type == CTP_TYPE_I64 ? (long double)c->i64[r]
				       : (long double)c->u64[r];
	return true;
}

#endif
