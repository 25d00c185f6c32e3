/* SPDX-License-Identifier: MIT */
/*
 * The values of a decoded snapshot (reader.h): a field's value in a row,
 * a derived field computed from its inputs (docs/FORMAT.md §4 `derive`),
 * the order of two values and the size of a CPU set. Pure over what the
 * reader holds. Private to the core.
 */
#ifndef CTP_CORE_VALUE_H
#define CTP_CORE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/*
 * The value of field f in one row of its scope's table (host: row 0),
 * computing derived fields from that row's inputs (absent when any is).
 * For ordinary fields this is ctp_snap_get().
 */
struct ctp_value ctp_snap_value(const struct ctp_snap *snap,
				const struct ctp_snap_field *f, size_t row);

/*
 * Apply derived field f's formula to its inputs' values (in[i] for term i,
 * as U64 or I64) into *out. Returns false when an input is absent or the
 * result does not fit f's type.
 */
bool ctp_snap_derive(const struct ctp_snap_field *f, const struct ctp_value *in,
		     struct ctp_value *out);

/* Order of two present values of one type (bytewise for strings, by CPU
 * count then ranges for cpusets). */
int ctp_value_cmp(const struct ctp_value *a, const struct ctp_value *b);
/* CPUs in a CPUSET value. */
uint64_t ctp_cpuset_count(const struct ctp_value *v);

#endif
