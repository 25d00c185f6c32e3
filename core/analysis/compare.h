/* SPDX-License-Identifier: MIT */
/*
 * Comparing two snapshots (docs/COMPARE.md): group both the same way, join
 * the groups by key, and report per field what changed, as a table, JSON
 * or CSV. The command line is core/cli/compare_cmd.c. Private to the core.
 */
#ifndef CTP_CORE_COMPARE_H
#define CTP_CORE_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include <stdio.h>

#include "readopts.h"

/* Groups per section of the table when --top is not given (JSON and CSV:
 * all). */
#define CTP_COMPARE_DEFAULT_LIMIT 20

/* Table cells (--mode). */
enum ctp_compare_mode {
	CTP_COMPARE_FULL,
	CTP_COMPARE_DELTA,
	CTP_COMPARE_PERCENT,
	CTP_COMPARE_ARROW,
};
/* Output (--format). */
enum ctp_compare_fmt {
	CTP_COMPARE_TABLE,
	CTP_COMPARE_JSON,
	CTP_COMPARE_CSV,
};
/* Sections (--sections), bit i for ctp_compare_section_names[i]. */
enum {
	CTP_COMPARE_THREADS = 1,
	CTP_COMPARE_CGROUPS = 2,
	CTP_COMPARE_HOST = 4,
	CTP_COMPARE_PSI = 8,
	CTP_COMPARE_PLUGINS = 16,
	CTP_COMPARE_ALL = 31,
};

/* The names the command line uses, indexed by the enums above. */
extern const char *const ctp_compare_mode_names[4];
extern const char *const ctp_compare_fmt_names[3];
extern const char *const ctp_compare_section_names[5];

struct ctp_snap;

/* The sort when --sort is not given, chosen from the two snapshots:
 * "delta:FIELD", "rate:FIELD", "FIELD" or "rel", written into buf (n
 * bytes) or a constant; NULL for rel. */
typedef const char *ctp_compare_sort_fn(struct ctp_snap *const snap[2],
					char *buf, size_t n);

struct ctp_view;

struct ctp_compare_opts {
	struct ctp_readopts r; /* --group-by, --fields, --top, --sort... */
	/* NULL: rel. The command line's is core/cli/compare_cmd.c's. */
	ctp_compare_sort_fn *default_sort;
	/* The view whose coverage: lists make the table's coverage line
	 * (coverage.h), or NULL for none. */
	const struct ctp_view *coverage;
	/* The files of BASE's and CAND's recording between them, whose
	 * exited tables (with CAND's) the coverage counts. */
	char *const *between;
	size_t n_between;
	bool asc;
	unsigned sections;
	enum ctp_compare_mode mode;
	enum ctp_compare_fmt fmt;
	const char *paths[2]; /* BASE, CAND */
	/* Renamed cgroups (docs/COMPARE.md): off (--no-rename), and the
	 * thresholds when set (else CTP_RENAME_MIN_JACCARD and
	 * CTP_RENAME_MIN_SHARED of rename.h). */
	struct {
		bool off, jaccard_set, shared_set;
		double min_jaccard;
		uint64_t min_shared;
	} rename;
};

/* Open both snapshots and write the comparison to stdout, messages on
 * stderr. Returns 0; -EINVAL when the request does not fit the snapshots
 * (a --group-by axis or --sort field they lack); -EBADMSG for a corrupt
 * snapshot; or another negative errno (a snapshot cannot be opened, out of
 * memory, the output cannot be written). */
int ctp_compare(const struct ctp_compare_opts *o);

/* The same on two decoded snapshots, written to out at `columns` (0: no
 * limit), in colour or not; o->paths name them in the header (NULL: "-"). */
int ctp_compare_snaps(const struct ctp_compare_opts *o,
		      struct ctp_snap *const snap[2], FILE *out, size_t columns,
		      bool color);

#endif
