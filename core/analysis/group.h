/* SPDX-License-Identifier: MIT */
/*
 * Grouping and aggregation of a snapshot's rows (docs/GROUPING.md): name
 * normalization, grouping keys over axes, and the reduction of each field
 * across a group by the rule its plugin registered, derived fields
 * included. Used by `show --group-by` and `compare`. Private to the core.
 *
 * A group table (struct ctp_groups) is built from one snapshot. Its groups
 * are sorted by key (ctp_groups_key_cmp), so two tables built with the same
 * spec from two snapshots join by key: ctp_groups_find() looks a key of one
 * up in the other, or walk both in order. Fields are matched across
 * snapshots by name (ctp_snap_field_find).
 */
#ifndef CTP_CORE_GROUP_H
#define CTP_CORE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "value.h" /* ctp_snap_value, ctp_value_cmp */

/* ---- Normalization (pure) ------------------------------------------------
 *
 * A name is split into tokens on . - _ / : @ + [ ] and ASCII whitespace;
 * separators are kept verbatim. Each token is classified, first match wins:
 *   all digits                               {N}   "42"
 *   6+ chars of 0-9a-f, at least one digit   {H}   "3fa9c2d1e8b7"
 *   ASCII letters then digits                 prefix{N}   "sda1" -> sda{N},
 *                                                         "cc1" -> cc{N}
 *   digits then ASCII letters                 {N}suffix   "1H" -> {N}H
 *   anything else                             kept        "cc1plus", "3fa9"
 * Hex is lower-case only and needs six characters, so that short words
 * with a number ("cc1", "a1", "fd0") are not read as ids; ids that vary
 * between runs (container ids, digests) are longer. A UUID (hex groups of
 * 8-4-4-4-12 joined by '-' or '_', starting a token or after its letters,
 * "pod<uuid>") is one unit whose groups each become {H}: its short groups
 * vary as much as its long ones.
 * A placeholder is never longer than 3 bytes and replaces at least one, so
 * an output buffer of 3 * len + 1 bytes always suffices.
 *
 * Each function writes at most outlen - 1 bytes and a NUL (nothing when
 * outlen is 0) and returns the length of the whole result, like snprintf.
 */
#define CTP_NORM_MAX(len) (3 * (len) + 1)

/* One token (no separator in it). */
size_t ctp_norm_token(const char *t, size_t n, char *out, size_t outlen);
/* A process or thread name (tokens, and UUIDs as a whole). */
size_t ctp_norm_name(const char *s, size_t n, char *out, size_t outlen);
/*
 * A cgroup path: per '/'-separated component, a systemd template unit
 * "name@instance.type" (type one of service, socket, timer, path, target,
 * mount, swap, scope, slice) gets its whole instance classified as one
 * token (so "user@1000.service" -> "user@{N}.service", "getty@tty1.service"
 * -> "getty@tty{N}.service"), an instance that holds separators (an escaped
 * path, "dev-disk-by\x2duuid-...") becomes {I}, any other instance is kept
 * ("openvpn@client.service"); the rest of the component goes through the
 * token rules ("session-3.scope" -> "session-{N}.scope").
 */
size_t ctp_norm_cgroup(const char *s, size_t n, char *out, size_t outlen);

/* The first of n fnmatch(3) globs (no flags: '*' also matches '/') that
 * matches path, or -1. */
int ctp_flatten_match(const char *const *globs, size_t n, const char *path);

/* ---- Grouping -------------------------------------------------------------*/

enum ctp_axis {
	CTP_AXIS_PCOMM = 1,  /* the process's name */
	CTP_AXIS_COMM = 2,   /* the thread's name */
	CTP_AXIS_CGROUP = 3, /* the thread's cgroup v2 path */
	/* One group per thread, keyed by process name, thread name and the
	 * occurrence (0, 1, ...) of that pair in (tgid, tid) order among the
	 * threads with the same other key parts. */
	CTP_AXIS_NONE = 4,
	/* A named cgroup v1 hierarchy: the thread's path in it, from the
	 * thread-scope string field of section cgroup-v1-path whose
	 * dimension hierarchy=<h> names it (absent there: unknown). Keys
	 * normalize as cgroup paths and --flatten applies. */
	CTP_AXIS_CGROUP_V1 = 5,
	/* Exact identity: the thread's tgid, or its tid, as decimal text
	 * (keys sort numerically). Never normalized. */
	CTP_AXIS_PID = 6,
	CTP_AXIS_TID = 7,
	/* The value of a categorical (or ordinal char or string) field of
	 * thread or process scope, as text (raw, never normalized); a
	 * process field gives every thread of the process its value.
	 * Absent: unknown. */
	CTP_AXIS_FIELD = 8,
};

#define CTP_GROUP_MAX_AXES 4
#define CTP_GROUP_MAX_KEY  6 /* key parts: none gives three */

struct ctp_group_spec {
	uint8_t axes[CTP_GROUP_MAX_AXES]; /* enum ctp_axis, outermost first */
	size_t n_axes;
	/* CTP_AXIS_CGROUP_V1: the hierarchy name, per axis (else NULL). */
	const char *v1[CTP_GROUP_MAX_AXES];
	/* CTP_AXIS_FIELD: the field's name, per axis (else NULL). */
	const char *field[CTP_GROUP_MAX_AXES];
	bool no_normalize; /* keys are the raw names and paths */
	/* Cgroup paths (raw, before normalization) matching one of these
	 * globs group as one, keyed by the glob itself. */
	const char *const *flatten;
	size_t n_flatten;
};

/*
 * Parse "cgroup,pcomm" (axes pcomm, comm, cgroup, none, cgroup:NAME, pid,
 * tid, field:NAME) into spec->axes, spec->v1 and spec->field (pointing
 * into `text`, which must outlive the spec; ',' is overwritten with NUL).
 * Other members are left alone. Whether a field:NAME exists and can key
 * groups is the snapshot's business (ctp_groups_new). Returns 0, or
 * -EINVAL with a message in err: unknown or repeated axis, too many, or
 * none with pcomm or comm (none already keys by both).
 */
int ctp_group_spec_parse(char *text, struct ctp_group_spec *spec, char *err,
			 size_t errlen);

/* One group. Every pointer lives as long as the table. */
struct ctp_group {
	/* n_key parts (ctp_groups_n_key), NUL-terminated; NULL where the
	 * snapshot does not know the part (nil comm, no cgroup). */
	const char *const *key;
	/* Thread-table rows of the members, ascending. */
	const uint32_t *threads;
	uint32_t n_threads;
	/* Process-table rows of the distinct tgids of the members. */
	const uint32_t *processes;
	uint32_t n_processes;
	/* Cgroup-table rows of the distinct cgroups of the members (members
	 * whose cgroup is unknown add none). */
	const uint32_t *cgroups;
	uint32_t n_cgroups;
	/* Indexes of the extra tasks (ctp_groups_new_extra) in the group,
	 * ascending; none for a table built without. A group may have only
	 * these (every member exited). */
	const uint32_t *extras;
	uint32_t n_extras;
};

/* A task's path in one cgroup v1 hierarchy, the hierarchy as the
 * "hierarchy=" dimension of the thread path fields names it
 * (ctp_group_v1_field). */
struct ctp_group_v1 {
	struct ctp_bytes hier, path;
};

/*
 * A task that is not a row of the snapshot but belongs to its groups:
 * compare's tasks that exited in the interval (core/analysis/exitsum.h).
 * It is keyed like a thread from what the caller knows of it: names,
 * cgroup path (nil where unknown: the key part is unknown) and its paths
 * in the v1 hierarchies (n_v1 of them; a v1 axis whose hierarchy is not
 * among them is unknown), tgid and tid. A field axis takes the value of
 * its live process (a process field), else it is unknown. It adds no
 * process or cgroup row to its group: those are the live members'.
 */
struct ctp_group_extra {
	uint64_t tgid, tid;
	struct ctp_bytes comm, pcomm, cgroup;
	const struct ctp_group_v1 *v1;
	size_t n_v1;
};

/* Is f a thread path field of a cgroup v1 hierarchy (section
 * "cgroup-v1-path", a string with a "hierarchy=<h>" dimension,
 * docs/FORMAT.md 7.2.1)? Its hierarchy in *h, *hlen bytes. */
bool ctp_group_v1_field(const struct ctp_snap_field *f, const char **h,
			size_t *hlen);

struct ctp_groups;

/*
 * Group the threads of `snap` by `spec`. A v1 axis cgroup:NAME takes NAME as
 * the hierarchy the cgroup plugin names ("cpu-cpuacct", "name-systemd";
 * "name=systemd" is taken as that) or as one controller of exactly one
 * hierarchy ("cpu"). A field:NAME axis needs a field of that name in the
 * snapshot, of thread or process scope, of kind categorical (any type but
 * cpuset) or ordinal (char or string). Returns 0 and *ret, -EINVAL with a
 * message in err (no such v1 hierarchy in this snapshot, an ambiguous
 * controller, a field that is missing, naming the closest one, or cannot
 * key groups, no axes), or -ENOMEM. The table refers to snap, which must
 * outlive it.
 */
int ctp_groups_new(const struct ctp_snap *snap,
		   const struct ctp_group_spec *spec, struct ctp_groups **ret,
		   char *err, size_t errlen);
/* The same, with n extra tasks x (which must outlive the table) keyed
 * among the threads. */
int ctp_groups_new_extra(const struct ctp_snap *snap,
			 const struct ctp_group_spec *spec,
			 const struct ctp_group_extra *x, size_t n,
			 struct ctp_groups **ret, char *err, size_t errlen);
void ctp_groups_free(struct ctp_groups *g);

const struct ctp_snap *ctp_groups_snap(const struct ctp_groups *g);
size_t ctp_groups_count(const struct ctp_groups *g);
/* Group i, in key order. */
const struct ctp_group *ctp_groups_at(const struct ctp_groups *g, size_t i);
/* Key parts per group, and each part's column title ("PCOMM", "COMM",
 * "CGROUP", "#" for the occurrence of none, "CGROUP:<hierarchy>", "PID",
 * "TID", a field axis's field name in upper case: "PROCFS.STATE"). */
size_t ctp_groups_n_key(const struct ctp_groups *g);
const char *ctp_groups_key_title(const struct ctp_groups *g, size_t part);
/* Order of two keys of this table's shape: parts in turn, NULL first, the
 * occurrence, pids, tids and integer field values numerically, other parts
 * bytewise. */
int ctp_groups_key_cmp(const struct ctp_groups *g, const char *const *a,
		       const char *const *b);
/* The group with this key (parts as ctp_groups_n_key), or NULL. */
/* The key part of spec's first cgroup axis (v2 or v1), or -1. */
long ctp_group_spec_cgroup_part(const struct ctp_group_spec *spec);
const struct ctp_group *ctp_groups_find(const struct ctp_groups *g,
					const char *const *key);

/* ---- Aggregation ----------------------------------------------------------*/

/*
 * A field reduced over one group's rows of the field's scope: the threads
 * for thread fields, each distinct process once for process fields, each
 * distinct cgroup once for cgroup fields.
 *
 * `v.type` is CTP_VALUE_ABSENT when no row had the field (render "-"),
 * else the result: SUM, MAX, MIN, MODE and derived fields in v; RANGE min
 * in v and max in hi; UNION the union in v (a CPUSET).
 */
struct ctp_agg {
	struct ctp_value v, hi;
	uint32_t n_measured; /* rows that had the field (derived: the least
				of its inputs') */
	uint32_t n_rows;     /* rows of the field's scope in the group */
	/* RANGE: min != max. UNION: the members' sets were not all equal. */
	bool mixed;
	/* SUM beyond the type's range: v is clamped to the limit. */
	bool saturated;
	/* The rule (or the type/rule pair) is unknown to this reader: v is
	 * absent even though n_measured may be > 0. */
	bool unknown;
};

/*
 * The aggregates of field f (of g's snapshot, scope thread, process or
 * cgroup) for every group, indexed like ctp_groups_at. Computed on first
 * use and kept with the table. Derived fields are computed from their
 * inputs' aggregates: absent when an input's is absent, saturated or
 * unknown, or when the result does not fit the field's type. Returns 0 and
 * *col, -EINVAL for a host field or a field of another snapshot, -ENOMEM.
 */
int ctp_groups_aggregate(struct ctp_groups *g, const struct ctp_snap_field *f,
			 const struct ctp_agg **col);

/*
 * Order of two aggregates of the same field, for sorting: absent below
 * everything, numbers by value, RANGE by midpoint, UNION by CPU count,
 * others (MODE of a string, char, bool) by value. Returns <0, 0, >0.
 */
int ctp_agg_cmp(const struct ctp_agg *a, const struct ctp_agg *b);
/* A number for an aggregate (RANGE: midpoint; UNION: CPU count; BOOL, CHAR:
 * their value); false when absent or not numeric (STRING). */
bool ctp_agg_number(const struct ctp_agg *a, long double *out);
/* Twice that number, exactly (a RANGE's lo + hi): for writers that must
 * not round (export). */
bool ctp_agg_twice(const struct ctp_agg *a, __int128 *out);

#endif
