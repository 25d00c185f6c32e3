/* SPDX-License-Identifier: MIT */
/* `ctprof-core compare BASE CAND`: the command line; the comparison itself
 * is core/analysis/compare.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ctprof/plugin-util.h"
#include "compare.h"
#include "compare_view.h"
#include "readcli.h"
#include "recdir.h"
#include "rename.h"
#include "table.h"
#include "view.h"
#include "reader.h"
#include "term.h"

#define PROG "ctprof-core compare"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ctprof-core compare [OPTIONS] BASE CAND\n"
		"       ctprof-core compare [OPTIONS] DIR [--from T] [--to T]\n"
		"       ctprof-core compare [OPTIONS] A0 A1 [A0' A1' ...] --vs "
		"B0 B1 [B0' B1' ...]\n"
		"DIR is a recording (ctprof-core record): CAND is its file at "
		"--to (default\n"
		"latest), BASE its file at --from (default: the one before "
		"CAND); a time T is\n"
		"latest, -DURATION (-10m, -1h), YYYY-mm-ddTHH:MM[:SS] or "
		"HH:MM[:SS] (local).\n"
		"By default, the `top` view over the interval between the "
		"snapshots: the\n"
		"processes and threads that used the most CPU between them, "
		"each counter as\n"
		"its change (tasks matched by tid and start time), fitted to "
		"the terminal.\n"
		"  --view NAME          another view (`ctprof-core views`); "
		"all: the full\n"
		"                       comparison below\n"
		"  --top N, --sort COLUMN, --asc, --wide   as in show\n"
		"\n"
		"--vs: run A's interval (A0 to A1) against run B's, per group "
		"by name (pid:\n"
		"pcomm, tid: pcomm,comm): each view column's rate (per "
		"second, %% of a CPU) or\n"
		"level at the end, A and B, the ratio B/A; with several runs "
		"a side (pairs of\n"
		"files), medians \xc2\xb1 spread, and ~ for a difference "
		"inside the noise\n"
		"(Mann-Whitney U test, p >= 0.05). --view, --group-by, "
		"--sort COLUMN, --top N,\n"
		"--wide, --format table|csv|json apply.\n"
		"\n"
		"The full comparison (--view all, or any option below without "
		"--view): group\n"
		"both snapshots the same way, join the groups by key and show, "
		"per field, the\n"
		"baseline, the candidate, the change, its rate per second "
		"and, for CPU time,\n"
		"percent of one CPU.\n"
		"\n"
		"  --group-by AXES      pcomm, comm, cgroup, cgroup:HIER, pid, "
		"tid, field:NAME,\n"
		"                       none, or a comma list\n"
		"                       (default pcomm)\n"
		"  --no-normalize       group by raw names, not worker-{N}\n"
		"  --flatten GLOB       cgroup paths matching GLOB form one "
		"group (repeatable)\n"
		"  --sort KEY           delta:FIELD or rate:FIELD (its "
		"change), "
		"FIELD (its\n"
		"                       candidate value), rel (largest "
		"relative change, new and\n"
		"                       gone first); default: delta of the "
		"first CPU-time counter\n"
		"  --asc, --desc        sort order (default descending)\n"
		"  --top N, --limit N   at most N groups per section (default "
		"%d in the table,\n"
		"                       all in json and csv; 0: all)\n"
		"  --fields GLOB[,GLOB] only fields matching a glob "
		"(repeatable)\n"
		"  --sections LIST      threads,cgroups,host,psi,plugins "
		"(default all)\n"
		"  --mode MODE          table cells: full, delta, percent, "
		"arrow (default full)\n"
		"  --format FMT         table, json, csv (default table)\n"
		"  --no-rename          do not pair renamed cgroups (a "
		"CAND-only cgroup with\n"
		"                       the BASE-only one of the same thread "
		"types)\n"
		"  --rename-min-jaccard F  pair at a Jaccard of thread types "
		">= F (default %.2f)\n"
		"  --rename-min-shared N   and >= N shared types (default "
		"%d)\n"
		"  -c, --config FILE    take max_decompressed_bytes from FILE "
		"(default: the\n"
		"                       default config when it exists)\n"
		"  --max-decompressed BYTES  refuse snapshots that need more "
		"memory (K, M, G,\n"
		"                       KiB, MiB, GiB; overrides the config)\n"
		"  --color=WHEN         auto (default), always, never\n"
		"  -h, --help           this help\n"
		"\n"
		"Colour (new, exited, restarted rows; the sort column) with "
		"--color=always, or\n"
		"on a terminal without NO_COLOR; never in json or csv. The "
		"output fits\n"
		"$COLUMNS or the terminal's width.\n"
		"Exit status: 0 ok, 1 unreadable snapshot or I/O error, 2 "
		"usage.\n",
		CTP_COMPARE_DEFAULT_LIMIT, CTP_RENAME_MIN_JACCARD,
		CTP_RENAME_MIN_SHARED);
}

static int parse_sections(char *list, unsigned *out)
{
	*out = 0;
	for (char *save = NULL, *g = strtok_r(list, ",", &save); g;
	     g = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < 5 && strcmp(g, ctp_compare_section_names[i]);
		     i++)
			;
		if (i == 5)
			return -EINVAL;
		*out |= 1u << i;
	}
	return *out ? 0 : -EINVAL;
}

static int pick(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

/* compare's own long options. */
enum {
	O_ASC = CTP_READOPT_FIRST_FREE,
	O_DESC,
	O_SECTIONS,
	O_MODE,
	O_FORMAT,
	O_TOP,
	O_VIEW,
	O_WIDE,
	O_NO_RENAME,
	O_RENAME_JACCARD,
	O_RENAME_SHARED,
	O_FROM,
	O_TO,
};

/* What the command line asked for beyond ctp_compare_opts: a view, and
 * whether any option of the full comparison was given. */
struct view_ask {
	const char *view;
	bool wide, full_opts, top_set, asc_set, group_by_given;
	/* compare DIR (a recording): --from, --to, and the paths picked. */
	const char *from, *to;
	char picked[2][4096];
	/* compare A0 A1 ... --vs B0 B1 ...: each side's files. */
	bool vs;
	char **files[2];
	size_t n_files[2];
};

/* --limit/--top not given: the default depends on --format. */
#define LIMIT_UNSET UINT64_MAX

/*
 * The sort without --sort: the delta of the first CPU-time counter, i.e.
 * the first thread-scope counter in a time unit in registration order of
 * BASE (else CAND). Found by its metadata, never by name. The one place
 * the default lives, so that a view can replace it.
 */
/* Is f derived as the plain sum of exactly the fields in names? */
static bool sum_of(const struct ctp_snap *snap, const struct ctp_snap_field *f,
		   char *const *names, size_t n)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	if (f->n_terms != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct ctp_snap_term *t = &f->terms[i];
		size_t j = 0;
		while (j < n && strcmp(fs[t->input].name, names[j]) != 0)
			j++;
		if (j == n || t->coef != 1 || t->max_set)
			return false;
	}
	return true;
}

/* What the default view (`top`) sorts by, as one field of the snapshots:
 * a column's single field (the first present of a `first:` list), or the
 * derived field that is a `sum:` column's sum (procfs.cpu_time for user +
 * system time). NULL when there is none. */
static const char *view_sort_field(struct ctp_snap *const snap[2])
{
	struct ctp_view *v;
	char err[512];
	const char *name = NULL;
	if (ctp_view_find("top", &v, err, sizeof(err)) < 0)
		return NULL;
	const struct ctp_view_col *c = &v->cols[v->sort];
	for (int k = 1; k >= 0 && !name && c->src == CTP_VSRC_SUM; k--) {
		const struct ctp_snap_field *fs = ctp_snap_fields(snap[k]);
		for (size_t i = 0; i < ctp_snap_n_fields(snap[k]); i++)
			if (fs[i].kind == CTP_KIND_COUNTER &&
			    sum_of(snap[k], &fs[i], c->fields, c->n_fields)) {
				name = fs[i].name;
				break;
			}
	}
	for (size_t i = 0; !name && c->src != CTP_VSRC_SUM && i < c->n_fields;
	     i++)
		for (int k = 1; k >= 0 && !name; k--)
			if (ctp_snap_field_find(snap[k], c->fields[i]))
				name = ctp_snap_field_find(snap[k],
							   c->fields[i])
					       ->name;
	ctp_view_free(v);
	return name; /* the snapshot's string, not the view's */
}

/* The full comparison's order without --sort: the change of what the
 * default view sorts by, else of the first thread time counter. */
static const char *default_sort(struct ctp_snap *const snap[2], char *buf,
				size_t n)
{
	const char *vf = view_sort_field(snap);
	if (vf) {
		snprintf(buf, n, "delta:%s", vf);
		return buf;
	}
	for (int k = 0; k < 2; k++) {
		const struct ctp_snap_field *fs = ctp_snap_fields(snap[k]);
		for (size_t i = 0; i < ctp_snap_n_fields(snap[k]); i++) {
			const struct ctp_snap_field *f = &fs[i];
			if (f->scope == CTP_SCOPE_THREAD &&
			    f->kind == CTP_KIND_COUNTER &&
			    f->rule == CTP_RULE_SUM &&
			    (f->unit == CTP_UNIT_NS || f->unit == CTP_UNIT_US ||
			     f->unit == CTP_UNIT_TICKS)) {
				snprintf(buf, n, "delta:%s", f->name);
				return buf;
			}
		}
	}
	return NULL;
}

/* --no-rename, --rename-min-jaccard F (0 to 1), --rename-min-shared N. */
static int rename_option(struct ctp_compare_opts *o, int c, const char *arg)
{
	char *end;
	double j;

	switch (c) {
	case O_NO_RENAME:
		o->rename.off = true;
		return -1;
	case O_RENAME_JACCARD:
		errno = 0;
		j = strtod(arg, &end);
		if (errno == 0 && end != arg && !*end && j >= 0 && j <= 1) {
			o->rename.min_jaccard = j;
			o->rename.jaccard_set = true;
			return -1;
		}
		fprintf(stderr,
			PROG ": --rename-min-jaccard wants a number from 0 to "
			     "1, not '%s'\n",
			arg);
		return CTP_EXIT_USAGE;
	case O_RENAME_SHARED:
		if (ctp_parse_u64_str(arg, &o->rename.min_shared) == 0) {
			o->rename.shared_set = true;
			return -1;
		}
		fprintf(stderr,
			PROG ": --rename-min-shared wants a number, not '%s'\n",
			arg);
		return CTP_EXIT_USAGE;
	default:
		return ctp_readcli_try_help("compare");
	}
}

/* One of compare's own options into *o. Returns -1 to go on, else the
 * exit status after a message. */
/* What compare's own options fill: ctp_readopts_parse's ctx. */
struct compare_args {
	struct ctp_compare_opts *o;
	struct view_ask *va;
};

static int compare_option(void *ctx, int c, const char *arg)
{
	struct ctp_compare_opts *o = ((struct compare_args *)ctx)->o;
	struct view_ask *va = ((struct compare_args *)ctx)->va;
	char *copy;
	int v;

	/* Options only the full comparison has: with them and no --view, it
	 * is what the user gets. */
	va->full_opts |= c == O_SECTIONS || c == O_MODE ||
			 (c == O_FORMAT && strcmp(arg, "table") != 0);
	switch (c) {
	case O_VIEW:
		va->view = arg;
		return -1;
	case O_FROM:
		va->from = arg;
		return -1;
	case O_TO:
		va->to = arg;
		return -1;
	case O_WIDE:
		va->wide = true;
		return -1;
	case O_ASC:
	case O_DESC:
		o->asc = c == O_ASC;
		va->asc_set = true;
		return -1;
	case O_SECTIONS:
		if (!(copy = strdup(arg))) {
			fprintf(stderr, PROG ": out of memory\n");
			return CTP_EXIT_FAILURE;
		}
		v = parse_sections(copy, &o->sections);
		free(copy);
		if (v == 0)
			return -1;
		fprintf(stderr,
			PROG ": --sections wants a list of threads, cgroups, "
			     "host, psi, plugins, not '%s'\n",
			arg);
		return CTP_EXIT_USAGE;
	case O_MODE:
		if ((v = pick(arg, ctp_compare_mode_names, 4)) >= 0) {
			o->mode = (enum ctp_compare_mode)v;
			return -1;
		}
		fprintf(stderr,
			PROG ": --mode wants full, delta, percent or arrow, "
			     "not '%s'\n",
			arg);
		return CTP_EXIT_USAGE;
	case O_FORMAT:
		if ((v = pick(arg, ctp_compare_fmt_names, 3)) >= 0) {
			o->fmt = (enum ctp_compare_fmt)v;
			return -1;
		}
		fprintf(stderr,
			PROG ": --format wants table, json or csv, not '%s'\n",
			arg);
		return CTP_EXIT_USAGE;
	case O_TOP:
		va->top_set = true;
		if (ctp_parse_u64_str(arg, &o->r.limit) == 0)
			return -1;
		fprintf(stderr, PROG ": --top wants a number, not '%s'\n", arg);
		return CTP_EXIT_USAGE;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	default:
		return rename_option(o, c, arg);
	}
}

/* compare DIR: CAND at --to (default the latest), BASE at --from (default
 * the file before CAND). Returns -1 to go on, else the exit status. */
static int pick_pair(struct ctp_compare_opts *o, struct view_ask *va,
		     const char *dir)
{
	char err[512];
	struct ctp_recdir_skips skips = {0};
	struct ctp_recdir_pick p = {.dir = dir,
				    .when = va->to ? va->to : "latest",
				    .cap = o->r.cap,
				    .skips = &skips};
	int r = ctp_recdir_pick(&p, va->picked[1], sizeof(va->picked[1]), err,
				sizeof(err));
	if (r == 0) {
		/* BASE: at --from, else the readable file before CAND. */
		p.when = va->from;
		p.before = va->from ? NULL : va->picked[1];
		r = ctp_recdir_pick(&p, va->picked[0], sizeof(va->picked[0]),
				    err, sizeof(err));
	}
	ctp_recdir_warn_skips(stderr, PROG, dir, &skips);
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return r == -EINVAL || r == -ERANGE ? CTP_EXIT_USAGE
						    : CTP_EXIT_FAILURE;
	}
	o->paths[0] = va->picked[0];
	o->paths[1] = va->picked[1];
	return -1;
}

/* --vs: the operands after it, up to the next option, are side B's files.
 * They and --vs leave argv (*argc shrinks) into va->files[1]. Returns -1,
 * or an exit status. */
static int split_vs(int *argc, char **argv, struct view_ask *va)
{
	int at = 1;
	while (at < *argc && strcmp(argv[at], "--vs") != 0 &&
	       strcmp(argv[at], "--") != 0)
		at++;
	if (at == *argc || strcmp(argv[at], "--vs") != 0)
		return -1;
	int end = at + 1;
	while (end < *argc && argv[end][0] != '-')
		end++;
	va->vs = true;
	va->n_files[1] = (size_t)(end - at - 1);
	va->files[1] = malloc((va->n_files[1] + 1) * sizeof(char *));
	if (!va->files[1]) {
		fprintf(stderr, PROG ": out of memory\n");
		return CTP_EXIT_FAILURE;
	}
	memcpy(va->files[1], &argv[at + 1], va->n_files[1] * sizeof(char *));
	memmove(&argv[at], &argv[end],
		(size_t)(*argc - end + 1) * sizeof(char *));
	*argc -= end - at;
	return -1;
}

/* A side's files: BASE CAND pairs, one pair or more. */
static bool vs_side_ok(char side, size_t n)
{
	if (n >= 2 && n % 2 == 0)
		return true;
	fprintf(stderr,
		PROG ": --vs: side %c has %zu file%s: give runs as pairs of "
		     "files, BASE CAND [BASE CAND ...]\n",
		side, n, n == 1 ? "" : "s");
	return false;
}

/* compare A0 A1 [...] --vs B0 B1 [...]: the operands are side A's. */
static int vs_operands(struct ctp_compare_opts *o, struct view_ask *va,
		       int argc, char **argv)
{
	if (va->from || va->to) {
		fprintf(stderr, PROG ": --from and --to do not go with --vs: "
				     "give each run's two files\n");
		return CTP_EXIT_USAGE;
	}
	va->files[0] = &argv[optind];
	va->n_files[0] = (size_t)(argc - optind);
	if (!vs_side_ok('A', va->n_files[0]) ||
	    !vs_side_ok('B', va->n_files[1]))
		return CTP_EXIT_USAGE;
	/* The reader cap and the grouping options' checks, as for two
	 * files (every operand is present: none is named missing). */
	return ctp_readopts_finish("compare", &o->r, optind + 2, argv, 2,
				   (const char *const[]){"A0", "A1"});
}

/* Parse compare's command line into *o. Returns -1 to go on, else the exit
 * status to end with. */
static int parse_compare_args(int argc, char **argv, struct ctp_compare_opts *o,
			      struct view_ask *va)
{
	static const struct option lopts[] = {
		CTP_READOPT_LONGOPTS,
		{"asc", no_argument, NULL, O_ASC},
		{"desc", no_argument, NULL, O_DESC},
		{"sections", required_argument, NULL, O_SECTIONS},
		{"mode", required_argument, NULL, O_MODE},
		{"format", required_argument, NULL, O_FORMAT},
		{"top", required_argument, NULL, O_TOP},
		{"view", required_argument, NULL, O_VIEW},
		{"wide", no_argument, NULL, O_WIDE},
		{"no-rename", no_argument, NULL, O_NO_RENAME},
		{"rename-min-jaccard", required_argument, NULL,
		 O_RENAME_JACCARD},
		{"rename-min-shared", required_argument, NULL, O_RENAME_SHARED},
		{"from", required_argument, NULL, O_FROM},
		{"to", required_argument, NULL, O_TO},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *const operands[] = {"BASE", "CAND"};
	static const char *const dir_operand[] = {"DIR"};
	struct compare_args ca = {.o = o, .va = va};
	int rc = ctp_readopts_parse("compare", &o->r, argc, argv, "hc:", lopts,
				    compare_option, &ca);
	if (rc >= 0)
		return rc;
	va->group_by_given = ctp_readopts_given(&o->r, CTP_READOPT_GROUP_BY);
	va->full_opts |= va->group_by_given ||
			 ctp_readopts_given(&o->r, CTP_READOPT_FIELDS) ||
			 ctp_readopts_given(&o->r, CTP_READOPT_FLATTEN);
	va->top_set |= ctp_readopts_given(&o->r, CTP_READOPT_LIMIT);
	if (va->vs)
		return vs_operands(o, va, argc, argv);
	/* One operand: a recording's directory. */
	if (argc - optind == 1 && ctp_recdir_is(argv[optind])) {
		rc = ctp_readopts_finish("compare", &o->r, argc, argv, 1,
					 dir_operand);
		return rc < 0 ? pick_pair(o, va, argv[optind]) : rc;
	}
	if (va->from || va->to) {
		fprintf(stderr, PROG ": --from and --to pick files of a "
				     "recording: give its directory\n");
		return CTP_EXIT_USAGE;
	}
	rc = ctp_readopts_finish("compare", &o->r, argc, argv, 2, operands);
	if (rc < 0) {
		o->paths[0] = argv[optind];
		o->paths[1] = argv[optind + 1];
	}
	return rc;
}

static bool want_field(const void *arg, const char *field)
{
	return ctp_readopts_selected(arg, field);
}

/* The view over the interval, when that is what was asked for (the
 * default); -1 to run the full comparison instead. */
static int run_view(const struct ctp_compare_opts *o, const struct view_ask *va)
{
	bool dotted = o->r.sort &&
		      (strchr(o->r.sort, '.') || strchr(o->r.sort, ':') ||
		       strcmp(o->r.sort, "rel") == 0);
	if (va->view ? strcmp(va->view, "all") == 0
		     : va->full_opts || dotted || o->fmt != CTP_COMPARE_TABLE)
		return -1;
	struct ctp_rename_opts ren = {
		.min_jaccard = o->rename.jaccard_set ? o->rename.min_jaccard
						     : CTP_RENAME_MIN_JACCARD,
		.min_shared = o->rename.shared_set ? o->rename.min_shared
						   : CTP_RENAME_MIN_SHARED,
	};
	struct ctp_compare_view_args a = {
		.paths = {o->paths[0], o->paths[1]},
		.cap = o->r.cap,
		.view = va->view,
		.sort = o->r.sort,
		.asc = va->asc_set ? o->asc : -1,
		.top = o->r.limit,
		.top_set = va->top_set,
		.wide = va->wide,
		.group_by = va->group_by_given ? o->r.group_by : NULL,
		.no_normalize = o->r.spec.no_normalize,
		.want = o->r.n_globs ? want_field : NULL,
		.want_arg = &o->r,
		.rename = o->rename.off ? NULL : &ren,
	};
	int rc = ctp_compare_view(&a);
	return rc == -ENOENT ? -1 : rc;
}

/* compare A0 A1 ... --vs B0 B1 ... (core/cli/compare_vs.c). */
static int run_vs(const struct ctp_compare_opts *o, const struct view_ask *va)
{
	static const int fmt[] = {[CTP_COMPARE_TABLE] = CTP_TABLE_TEXT,
				  [CTP_COMPARE_JSON] = CTP_TABLE_JSON,
				  [CTP_COMPARE_CSV] = CTP_TABLE_CSV};
	struct ctp_compare_vs_args a = {
		.paths = {va->files[0], va->files[1]},
		.n = {va->n_files[0], va->n_files[1]},
		.cap = o->r.cap,
		.view = va->view,
		.sort = o->r.sort,
		.top = o->r.limit,
		.top_set = va->top_set,
		.wide = va->wide,
		.no_normalize = o->r.spec.no_normalize,
		.group_by = va->group_by_given ? o->r.group_by : NULL,
		.want = o->r.n_globs ? want_field : NULL,
		.want_arg = &o->r,
		.fmt = fmt[o->fmt],
	};
	FILE *screen =
		o->fmt == CTP_COMPARE_TABLE ? ctp_readcli_screen() : NULL;
	int rc = ctp_compare_vs(&a);
	if (screen && ctp_readcli_screen_done(screen) != 0 && rc == CTP_EXIT_OK)
		rc = CTP_EXIT_FAILURE;
	return rc;
}

/* BASE and CAND one file (by name, a link, or two picks of a directory):
 * the comparison is of a file with itself, every change zero. Said, and
 * shown anyway: it is the answer to what was asked. */
static void warn_same_file(const struct ctp_compare_opts *o)
{
	struct stat a, b;
	if (strcmp(o->paths[0], "-") == 0 || strcmp(o->paths[1], "-") == 0 ||
	    stat(o->paths[0], &a) < 0 || stat(o->paths[1], &b) < 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return;
	char lab[64];
	fprintf(stderr,
		PROG ": %s: BASE and CAND are the same file (%s): every "
		     "change is zero and there is no interval\n",
		ctp_color_label("warning", CTP_SGR_YELLOW, lab, sizeof(lab)),
		o->paths[1]);
}

int ctp_cmd_compare(int argc, char **argv)
{
	struct ctp_compare_opts o = {.r.limit = LIMIT_UNSET,
				     .r.group_by = "pcomm",
				     .default_sort = default_sort,
				     .sections = CTP_COMPARE_ALL};
	struct view_ask va = {0};
	int rc = split_vs(&argc, argv, &va);
	if (rc < 0)
		rc = parse_compare_args(argc, argv, &o, &va);
	if (rc < 0 && va.vs) {
		rc = run_vs(&o, &va);
		free(va.files[1]);
		ctp_readopts_done(&o.r);
		return rc;
	}
	free(va.files[1]);
	va.files[1] = NULL;
	FILE *screen = rc < 0 && o.fmt == CTP_COMPARE_TABLE
			       ? ctp_readcli_screen()
			       : NULL;
	if (rc < 0)
		warn_same_file(&o);
	if (rc < 0)
		rc = run_view(&o, &va);
	if (o.r.limit == LIMIT_UNSET)
		o.r.limit = o.fmt == CTP_COMPARE_TABLE
				    ? CTP_COMPARE_DEFAULT_LIMIT
				    : 0;
	struct ctp_view *top = NULL;
	char verr[512];
	char **between = NULL;
	int nb = 0;
	if (rc < 0 && ctp_view_find("top", &top, verr, sizeof(verr)) == 0) {
		o.coverage = top;
		nb = ctp_recdir_between(o.paths[0], o.paths[1], &between);
		o.between = between;
		o.n_between = nb > 0 ? (size_t)nb : 0;
	}
	if (rc < 0) {
		int r = ctp_compare(&o);
		rc = r == 0	    ? CTP_EXIT_OK
		     : r == -EINVAL ? CTP_EXIT_USAGE
				    : CTP_EXIT_FAILURE;
	}
	if (screen && ctp_readcli_screen_done(screen) != 0 && rc == CTP_EXIT_OK)
		rc = CTP_EXIT_FAILURE;
	ctp_recdir_list_free(between, nb);
	ctp_view_free(top);
	ctp_readopts_done(&o.r);
	return rc;
}
