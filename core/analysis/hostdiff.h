/* SPDX-License-Identifier: MIT */
/*
 * Host diff: what differs between the host rows of two snapshots, one line
 * per key, "key: before -> after". For the comparison commands; private to
 * the core.
 *
 * Keys are the host-scope field names of either snapshot, compared by name
 * (so a field one snapshot lacks counts as absent there). Open key sets
 * (host.sched.<tunable>, host.cpufreq.governor.cpu<N>, ...) are one field
 * per key, so they diff per key with no special case. Values are compared
 * as rendered text, so a tunable stored as i64 in one snapshot and as a
 * string in the other is equal when the text is. Absent renders "unknown".
 */
#ifndef CTP_CORE_HOSTDIFF_H
#define CTP_CORE_HOSTDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "reader.h"

/* What an absent value renders as. */
#define CTP_HOSTDIFF_UNKNOWN "unknown"

struct ctp_hostdiff_opts {
	/* fnmatch(3) globs over field names: a key is compared when it
	 * matches one of `include` (all keys when n_include is 0) and none of
	 * `exclude`, e.g. to leave the collector's own heap and CPU time
	 * out of an environment comparison. */
	const char *const *include;
	size_t n_include;
	const char *const *exclude;
	size_t n_exclude;
	/* Leave out the fields of this section (ctp_snap_field.section),
	 * shown elsewhere; NULL: none. */
	const char *exclude_section;
	/* List keys whose values are equal too. */
	bool all;
};

struct ctp_hostdiff_line {
	const char *key;    /* field name */
	const char *before; /* rendered value, "unknown" when absent */
	const char *after;
	bool before_absent, after_absent;
	bool differs; /* false only with opts.all */
};

struct ctp_hostdiff {
	size_t n;
	struct ctp_hostdiff_line *lines; /* ascending by key (strcmp) */
};

/*
 * Compare the host rows of `before` and `after` (opts may be NULL: every
 * key, differences only). Returns 0 and *ret, which owns every string of
 * its lines (ctp_hostdiff_free); -ENOMEM with *ret untouched.
 */
int ctp_hostdiff_new(const struct ctp_snap *before,
		     const struct ctp_snap *after,
		     const struct ctp_hostdiff_opts *opts,
		     struct ctp_hostdiff **ret);
void ctp_hostdiff_free(struct ctp_hostdiff *d);

/*
 * A value as the diff shows it, into buf (always NUL-terminated): decimal
 * numbers, true/false, a cpu list ("0-3,8"), strings with bytes that are
 * not printable UTF-8 as \xNN and '\\' doubled; "unknown" when absent.
 * Never cut: returns the length the whole text needs (excluding the NUL),
 * so a caller whose buffer was too small can retry with a larger one.
 */
size_t ctp_hostdiff_render(const struct ctp_value *v, char *buf, size_t len);

#endif
