/* SPDX-License-Identifier: MIT */
/*
 * The names the snapshot format gives the ABI's enums (docs/FORMAT.md
 * "fields"): the one table the writer writes, the reader reads and the
 * commands print. Pure; private to the core.
 */
#ifndef CTP_CORE_FORMAT_H
#define CTP_CORE_FORMAT_H

#include <stddef.h>

/* The header's "format" and the version this writer writes and this reader
 * understands. */
#define CTP_SNAP_FORMAT	 "ctprof-core-snapshot"
#define CTP_SNAP_VERSION 1

enum ctp_enum {
	CTP_ENUM_SCOPE,
	CTP_ENUM_TYPE,
	CTP_ENUM_UNIT,
	CTP_ENUM_KIND,
	CTP_ENUM_RULE,
	CTP_ENUM_STATUS,
};

/* The name of value v of enum e ("thread", "centipct"...); NULL when the
 * format has none for it. */
const char *ctp_enum_name(enum ctp_enum e, unsigned v);

/* The value named by the n bytes at s in enum e, or -1. */
int ctp_enum_lookup(enum ctp_enum e, const char *s, size_t n);

static inline const char *ctp_scope_name(unsigned v)
{
	return ctp_enum_name(CTP_ENUM_SCOPE, v);
}
static inline const char *ctp_type_name(unsigned v)
{
	return ctp_enum_name(CTP_ENUM_TYPE, v);
}
static inline const char *ctp_unit_name(unsigned v)
{
	return ctp_enum_name(CTP_ENUM_UNIT, v);
}
static inline const char *ctp_kind_name(unsigned v)
{
	return ctp_enum_name(CTP_ENUM_KIND, v);
}
static inline const char *ctp_rule_name(unsigned v)
{
	return ctp_enum_name(CTP_ENUM_RULE, v);
}
static inline const char *ctp_status_name(unsigned v)
{
	return ctp_enum_name(CTP_ENUM_STATUS, v);
}

#endif
