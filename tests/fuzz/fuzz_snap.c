/* SPDX-License-Identifier: MIT */
/* See fuzz_snap.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "fuzz_snap.h"
#include "group.h"
#include "openmetrics.h"

/* Every field as metrics (export, serve), in both formats, the top two
 * groups kept and the rest as other. */
static bool want_all(const void *arg, const char *field)
{
	(void)arg;
	(void)field;
	return true; /* names cpusets too */
}

static void metrics(const struct ctp_snap *snap, struct ctp_groups *g)
{
	FILE *out = fopen("/dev/null", "w");
	if (!out)
		return;
	static const char *const rank[] = {"procfs.utime"};
	for (int om = 0; om < 2; om++) {
		struct ctp_om_opts o = {.openmetrics = om,
					.top = 2,
					.want = om ? want_all : NULL,
					.rank = rank,
					.n_rank = 1};
		struct ctp_om_stats st;
		ctp_om_write(out, snap, g, &o, &st);
	}
	fclose(out);
}

/* Every value of every field, rendered as show renders it; a number's
 * column holds the same (the harness aborts where it does not). */
static void read_all(const struct ctp_snap *snap)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);

	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		const struct ctp_snap_table *t =
			ctp_snap_table(snap, fs[i].scope);
		size_t rows = fs[i].scope == CTP_SCOPE_HOST ? 1
			      : t			    ? t->rows
							    : 0;
		const struct ctp_col *c = ctp_snap_col(snap, &fs[i]);

		for (size_t r = 0; r < rows && r < 4096; r++) {
			struct ctp_value v = ctp_snap_value(snap, &fs[i], r);
			if (c && ctp_field_is_number(&fs[i])) {
				struct ctp_value w = ctp_col_value(c, r);
				if (w.type != v.type ||
				    (v.type != CTP_VALUE_ABSENT &&
				     w.u64 != v.u64))
					abort();
			}
		}
	}
}

/* Group along one spec and aggregate every field of a grouped scope. */
static void group_by(const struct ctp_snap *snap, const char *axes)
{
	struct ctp_group_spec spec = {0};
	struct ctp_groups *g;
	char text[256], err[256];

	if ((size_t)snprintf(text, sizeof(text), "%s", axes) >= sizeof(text))
		return;
	if (ctp_group_spec_parse(text, &spec, err, sizeof(err)) < 0 ||
	    ctp_groups_new(snap, &spec, &g, err, sizeof(err)) < 0)
		return;
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		const struct ctp_agg *col;
		if (fs[i].scope != CTP_SCOPE_HOST)
			ctp_groups_aggregate(g, &fs[i], &col);
	}
	if (strcmp(axes, "pcomm") == 0 || strcmp(axes, "cgroup,tid") == 0)
		metrics(snap, g);
	ctp_groups_free(g);
}

/*
 * Group by field:NAME over up to 8 label-like thread and process fields
 * (categorical or ordinal: the ones that can key groups, or are refused
 * for their type), alone and composed with an identity axis, so that values
 * of every type become keys; then one field of another kind and a missing
 * one, refused.
 */
static void group_by_fields(const struct ctp_snap *snap)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t labels = 0, others = 0;
	char axes[256];

	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		bool label = fs[i].kind == CTP_KIND_CATEGORICAL ||
			     fs[i].kind == CTP_KIND_ORDINAL;
		if ((fs[i].scope != CTP_SCOPE_THREAD &&
		     fs[i].scope != CTP_SCOPE_PROCESS) ||
		    (label ? labels++ >= 8 : others++ >= 1))
			continue;
		snprintf(axes, sizeof(axes), "field:%s", fs[i].name);
		group_by(snap, axes);
		snprintf(axes, sizeof(axes), "pid,field:%s", fs[i].name);
		group_by(snap, axes);
	}
	group_by(snap, "field:no.such.field");
}

void ctp_fuzz_exercise(const struct ctp_snap *snap)
{
	static const char *const specs[] = {"pcomm", "comm",	     "cgroup",
					    "none",  "cgroup,pcomm", "pid",
					    "tid",   "cgroup,tid"};

	read_all(snap);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		group_by(snap, specs[i]);
	group_by_fields(snap);
}
