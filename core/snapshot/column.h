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
/* The number of field f in `row` of its table (derived fields computed):
 * its column's (ctp_snap_col); false when absent or not a number. */
bool ctp_snap_number(const struct ctp_snap *snap,
		     const struct ctp_snap_field *f, size_t row,
		     long double *out);

/* ---- Columns -------------------------------------------------------------*/

/* Is f a number (U64 or I64), the fields that have columns? */
static inline bool ctp_field_is_number(const struct ctp_snap_field *f)
{
	return f->type == CTP_TYPE_U64 || f->type == CTP_TYPE_I64;
}

/*
 * A numeric field's values over every row of its table (host: 1 row),
 * derived fields computed: one array of the field's type, and a bitmap
 * of the rows that have a value. The snapshot owns them: ctp_snap_col()
 * builds one on first request and keeps it until ctp_snap_free().
 */
struct ctp_col {
	const struct ctp_snap_field *f; /* NULL: the column of no value */
	size_t rows;
	uint8_t type;  /* CTP_TYPE_U64 or CTP_TYPE_I64 */
	uint64_t *has; /* bit r of word r / 64: row r has a value */
	union {
		uint64_t *u64;
		int64_t *i64;
	};
};

/*
 * Field f's column in snap, built on the first request (derived fields
 * from their inputs' columns) and the same pointer after. A field that is
 * no number (type other than U64/I64), has no values in the file or is of
 * another snapshot gives a column of no value (rows 0). NULL only when out
 * of memory. The open charged every numeric field's column to its budget
 * (ctp_col_bytes), so a column never takes the snapshot past it. Like
 * everything of a snapshot, for one thread at a time.
 */
const struct ctp_col *ctp_snap_col(const struct ctp_snap *snap,
				   const struct ctp_snap_field *f);

/* What a column of `rows` rows holds, with malloc's overhead: what the
 * open charges per numeric field. */
uint64_t ctp_col_bytes(size_t rows);
/* For the reader: build field f's column into *out (NULL for the column
 * of no value), or -ENOMEM; free one with ctp_col_free(). */
int ctp_col_build(const struct ctp_snap *snap, const struct ctp_snap_field *f,
		  struct ctp_col **out);
void ctp_col_free(struct ctp_col *c);

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

/* Does field f have a value in any row of its table? (A number's from its
 * column.) */
bool ctp_snap_has_values(const struct ctp_snap *snap,
			 const struct ctp_snap_field *f);

/* Row r as a cell: the field's type, or absent. */
static inline struct ctp_value ctp_col_value(const struct ctp_col *c, size_t r)
{
	struct ctp_value v = {.type = CTP_VALUE_ABSENT};
	if (ctp_col_has(c, r)) {
		v.type = c->type;
		v.u64 = c->u64[r]; /* i64 shares the bits */
	}
	return v;
}

#endif
