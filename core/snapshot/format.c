/* SPDX-License-Identifier: MIT */
#include "format.h"

#include <string.h>

/* Indexed by the ABI's fixed numbers (include/ctprof/plugin.h); NULL for a
 * number the format does not name. */
static const char *const scope_names[] = {NULL,	     "host",   "cgroup",
					  "process", "thread", "exited"};
static const char *const type_names[] = {NULL,	 "u64",	   "i64",   "bool",
					 "char", "string", "cpuset"};
static const char *const unit_names[] = {"none",  "count", "ns",      "us",
					 "ticks", "bytes", "centipct"};
static const char *const kind_names[] = {
	NULL, "counter", "peak", "gauge", "categorical", "ordinal", "cpuset"};
static const char *const rule_names[] = {NULL,	 "sum",	  "max",  "min",
					 "mode", "range", "union"};
static const char *const status_names[] = {NULL, "loaded", "failed",
					   "disabled"};

#define TABLE(t)                                                               \
	{                                                                      \
		t, sizeof(t) / sizeof((t)[0])                                  \
	}

static const struct {
	const char *const *names;
	size_t n;
} tables[] = {
	[CTP_ENUM_SCOPE] = TABLE(scope_names),
	[CTP_ENUM_TYPE] = TABLE(type_names),
	[CTP_ENUM_UNIT] = TABLE(unit_names),
	[CTP_ENUM_KIND] = TABLE(kind_names),
	[CTP_ENUM_RULE] = TABLE(rule_names),
	[CTP_ENUM_STATUS] = TABLE(status_names),
};

const char *ctp_enum_name(enum ctp_enum e, unsigned v)
{
	if ((size_t)e >= sizeof(tables) / sizeof(tables[0]) || v >= tables[e].n)
		return NULL;
	return tables[e].names[v];
}

int ctp_enum_lookup(enum ctp_enum e, const char *s, size_t n)
{
	if ((size_t)e >= sizeof(tables) / sizeof(tables[0]))
		return -1;
	for (size_t i = 0; i < tables[e].n; i++) {
		const char *name = tables[e].names[i];
		if (name && strlen(name) == n && memcmp(name, s, n) == 0)
			return (int)i;
	}
	return -1;
}
