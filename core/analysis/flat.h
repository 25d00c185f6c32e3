/* SPDX-License-Identifier: MIT */
/*
 * Flat, typed rows of one snapshot table for programs (docs/GROUPING.md
 * "Machine-readable tables"): `show --format csv|json|ndjson` now, `export
 * --format csv|ndjson`, one snapshot or a recording's files. One row per
 * thread, process, cgroup, the host, or per group of a struct ctp_groups;
 * identity columns first, then one column per selected field in registration
 * order, derived fields computed as the reader computes them (ctp_snap_value,
 * ctp_groups_aggregate). Private to the core.
 *
 * Values are exact: integers in the field's own unit, cpusets in the
 * kernel's list format ("0-3,8"), bools true/false, chars as the
 * character. Absent is an empty CSV cell or JSON null, never 0. Bytes that
 * are not well-formed UTF-8 are written as `dump` writes them, \u00XX of
 * the byte (literally, in CSV).
 */
#ifndef CTP_CORE_FLAT_H
#define CTP_CORE_FLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "group.h"
#include "reader.h"
#include "readopts.h"

enum ctp_flat_format {
	CTP_FLAT_CSV = 1,    /* RFC 4180, a header line, LF line ends */
	CTP_FLAT_JSON = 2,   /* one array of objects, one object a line */
	CTP_FLAT_NDJSON = 3, /* one object a line, nothing around them */
};

struct ctp_flat_opts {
	uint8_t format; /* enum ctp_flat_format */
	/* The table (enum ctp_scope). With groups: the scope whose fields
	 * are aggregated per group (not CTP_SCOPE_HOST). */
	uint8_t scope;
	/* --fields, --sort and --limit; NULL: every field, file (or key)
	 * order, every row. */
	const struct ctp_readopts *sel;
	/* For files of many captures: lead every row with the capture's
	 * start, start_realtime_ns and capture_time (the same as UTC text,
	 * "2026-11-27T06:28:09.979123Z"), and hostname (absent when the
	 * snapshot did not record it); a thread's or process's identity
	 * columns end with start_boottime_ns (absent when unknown), so
	 * (tgid, tid, start) tells a task from a later one of its ids. */
	bool capture_cols;
};

/* "csv", "json", "ndjson" -> enum ctp_flat_format; -EINVAL otherwise. */
int ctp_flat_format_parse(const char *name);
/* "threads", "processes", "cgroups", "host" -> enum ctp_scope; -EINVAL. */
int ctp_flat_table_parse(const char *name);
/* The table name of a scope, NULL for an invalid one. */
const char *ctp_flat_table_name(uint8_t scope);

/*
 * Write the rows of table o->scope of snap, or, when groups is not NULL
 * (built from snap), one row per group, to out in o->format. Returns 0;
 * -EINVAL with a message in err (a --sort field that is not of this
 * table's scope, the host table with groups, a bad format or scope);
 * -ENOMEM; -EIO when out reported a write error.
 */
int ctp_flat_write(FILE *out, const struct ctp_snap *snap,
		   struct ctp_groups *groups, const struct ctp_flat_opts *o,
		   char *err, size_t errlen);

/*
 * The rows of many snapshots (a recording's files, oldest first) as one
 * table: one header, the union of their field columns, each field column
 * absent (an empty cell, null) in the rows of a snapshot without it.
 * Streamed: a snapshot's rows are written when it is handed over, so the
 * caller holds one snapshot at a time. Use: new; cols over every snapshot
 * (the union, in the order fields first appear); rows over each; end;
 * free. ctp_flat_write is this over one snapshot.
 */
struct ctp_flat_writer;
/* A writer to out with o's format, table, selection and capture columns
 * (o copied; o->sel borrowed). 0 and *ret, or -EINVAL (a bad format or
 * table) or -ENOMEM with a message in err. */
int ctp_flat_writer_new(FILE *out, const struct ctp_flat_opts *o,
			struct ctp_flat_writer **ret, char *err, size_t errlen);
/* Add snap's fields of the table that o->sel selects and the writer has
 * not yet. Before the first rows: 0, -EINVAL after, -ENOMEM. */
int ctp_flat_writer_cols(struct ctp_flat_writer *w,
			 const struct ctp_snap *snap);
/* snap's rows (or, with groups built from snap, one per group: grouped
 * in every call or in none), sorted and limited per snapshot as o->sel
 * asks; the header before the first. Returns 0; -EINVAL with a message
 * (as ctp_flat_write's); -ENOMEM; -EIO when out reported an error. */
int ctp_flat_writer_rows(struct ctp_flat_writer *w, const struct ctp_snap *snap,
			 struct ctp_groups *groups, char *err, size_t errlen);
/* The end of the output (JSON's closing bracket; nothing when no rows
 * were ever written). 0, -ENOMEM (a cell failed) or -EIO. */
int ctp_flat_writer_end(struct ctp_flat_writer *w, char *err, size_t errlen);
/* NULL is fine. */
void ctp_flat_writer_free(struct ctp_flat_writer *w);

#endif
