/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core export FILE`: a snapshot where fleets keep their numbers
 * (docs/EXPORT.md). OpenMetrics or the Prometheus text format for
 * Prometheus and node_exporter's textfile collector (--textfile DIR), one
 * flat typed row per table row (CSV, NDJSON) for SQL engines. Output goes
 * through core/snapshot/outfile.h: a file appears whole or not at all.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctprof/plugin-util.h"
#include "export.h"
#include "flat.h"
#include "log.h"
#include "openmetrics.h"
#include "outfile.h"
#include "readcli.h"
#include "recdir.h"
#include "render.h"
#include "view.h"

#define PROG	    "ctprof-core export"
#define TEXTFILE    "ctprof.prom"
#define DEFAULT_TOP 50

enum { F_OPENMETRICS, F_PROMETHEUS, F_CSV, F_NDJSON };
static const char *const formats[] = {"openmetrics", "prometheus", "csv",
				      "ndjson", NULL};

struct opts {
	struct ctp_readopts r;
	const char *path, *out, *textfile, *view, *table;
	const char *from, *to; /* a recording's files (csv, ndjson) */
	bool recording;	       /* path is a recording's directory */
	int format;
	bool format_set;
	bool quiet; /* no line on stderr (record's textfile) */
	const struct ctp_series *series;  /* record's textfile: over time */
	struct ctp_om_timeline *timeline; /* a recording's, whole */
	size_t files;			  /* read into it */
	uint64_t top;
	char textpath[4096], latest[4096];
};

static void usage(FILE *f)
{
	fputs("Usage: ctprof-core export FILE|DIR [--format FORMAT] [-o OUT]\n"
	      "                          [--from T] [--to T] [--group-by "
	      "AXES]\n"
	      "                          [--view NAME | --fields GLOBS] [--top "
	      "N]"
	      "\n"
	      "                          [--table TABLE] [--textfile DIR] "
	      "[-q]\n"
	      "\n"
	      "  --format F      openmetrics (default), prometheus (text "
	      "0.0.4), csv, ndjson\n"
	      "  -o OUT          write OUT (whole or not at all; default "
	      "stdout)\n"
	      "  --textfile DIR  write DIR/" TEXTFILE " in the Prometheus "
	      "text format for\n"
	      "                  node_exporter's textfile collector, once "
	      "(record --textfile\n"
	      "                  keeps it fresh)\n"
	      "  -q, --quiet     only errors on stderr (a cron job's "
	      "refresh)\n"
	      "  --group-by AXES metrics' groups (default pcomm); csv/ndjson: "
	      "one row per group\n"
	      "  --view NAME     the fields of a view's columns, ranked by its "
	      "sort column\n"
	      "  --fields GLOBS  the fields to export (fnmatch, comma-"
	      "separated)\n"
	      "  --top N         metrics: the N largest groups, the rest as "
	      "group=\"other\"\n"
	      "                  (default 50, 0 for all)\n"
	      "  --table TABLE   csv/ndjson: threads (default), processes, "
	      "cgroups, host, exited\n"
	      "  --from T, --to T  of a DIR: its files from the one at or "
	      "before T to the one\n"
	      "                  at or before T (as compare picks them; "
	      "latest, -10m,\n"
	      "                  YYYY-mm-ddTHH:MM[:SS], HH:MM[:SS])\n"
	      "A recording's directory: csv and ndjson have the rows of every "
	      "file (or\n--from to --to; --from latest: the latest only), one "
	      "row per task per capture\nwith its capture_time; OpenMetrics "
	      "has every file over time (counters\nmonotonic, a timestamp per "
	      "sample: promtool backfills it); the 0.0.4 text and\n--textfile "
	      "are of its latest file. docs/EXPORT.md has the names, units "
	      "and\nlabels.\n",
	      f);
}

static int word(const char *arg, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(arg, list[i]) == 0)
			return i;
	return -1;
}

static int own_option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case 'o':
		o->out = arg;
		return -1;
	case 'f':
		if ((o->format = word(arg, formats)) < 0) {
			fprintf(stderr,
				PROG ": --format %s: expected openmetrics, "
				     "prometheus, csv or ndjson\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		o->format_set = true;
		return -1;
	case 'T':
		o->textfile = arg;
		return -1;
	case 'v':
		o->view = arg;
		return -1;
	case 't':
		if (ctp_parse_u64_str(arg, &o->top) < 0) {
			fprintf(stderr,
				PROG ": --top %s: expected a count, 0 "
				     "for all\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		return -1;
	case 'b':
		o->table = arg;
		return -1;
	case 'F':
		o->from = arg;
		return -1;
	case 'U':
		o->to = arg;
		return -1;
	case 'q':
		ctp_verbosity = -1;
		return -1;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	}
	return ctp_readcli_try_help("export");
}

/* What the options say together. -1 to go on, else the exit status. */
static int conflicts(struct opts *o)
{
	bool flat = o->format == F_CSV || o->format == F_NDJSON;
	const char *bad = NULL;
	if (o->textfile && flat)
		bad = "--textfile writes metrics, not csv or ndjson";
	else if (o->textfile && o->out)
		bad = "--textfile and -o: one output";
	else if (o->view && o->r.n_globs)
		bad = "--view and --fields: one selection";
	else if (o->table && !flat)
		bad = "--table is for --format csv or ndjson";
	else if ((o->from || o->to) && !o->recording)
		bad = "--from and --to pick files of a recording: give its "
		      "directory";
	else if ((o->from || o->to) &&
		 (o->textfile || o->format == F_PROMETHEUS))
		bad = "--from and --to are for --format openmetrics, csv or "
		      "ndjson (the 0.0.4 text and --textfile of a recording's "
		      "directory are of its latest file)";
	if (bad) {
		fprintf(stderr, PROG ": %s\n", bad);
		return ctp_readcli_try_help("export");
	}
	if (o->textfile) {
		int n = snprintf(o->textpath, sizeof(o->textpath), "%s/%s",
				 o->textfile, TEXTFILE);
		if (n < 0 || (size_t)n >= sizeof(o->textpath)) {
			fprintf(stderr, PROG ": --textfile: path too long\n");
			return CTP_EXIT_USAGE;
		}
		if (!o->format_set)
			o->format = F_PROMETHEUS;
		o->out = o->textpath;
	}
	return -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		CTP_READOPT_LONGOPTS,
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"textfile", required_argument, NULL, 'T'},
		{"view", required_argument, NULL, 'v'},
		{"top", required_argument, NULL, 't'},
		{"table", required_argument, NULL, 'b'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'U'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *const operands[] = {"FILE"};
	int rc = ctp_readopts_parse("export", &o->r, argc, argv,
				    "hqc:o:", lopts, own_option, o);
	if (rc >= 0)
		return rc;
	bool flat = o->format == F_CSV || o->format == F_NDJSON;
	if (!o->r.group_by && !flat)
		o->r.group_by = "pcomm";
	rc = ctp_readopts_finish("export", &o->r, argc, argv, 1, operands);
	if (rc >= 0)
		return rc;
	o->path = argv[optind];
	o->recording = ctp_recdir_is(o->path);
	return conflicts(o);
}

/* A recording's directory: its latest file. 0, or the exit status. */
static int latest_of(struct opts *o)
{
	return ctp_recdir_latest_of(&o->path, o->r.cap, PROG, o->latest,
				    sizeof(o->latest)) < 0
		       ? CTP_EXIT_FAILURE
		       : 0;
}

/* A recording's directory as OpenMetrics: every file, oldest first,
 * into o->timeline. 0, or the exit status. */
static int walk_of(struct opts *o, const struct ctp_view *v)
{
	char err[512];
	struct ctp_recdir_skips skips = {0};
	struct ctp_recdir_files files;
	int r = ctp_recdir_files_open(o->path, o->from, o->to, &skips, &files,
				      err, sizeof(err));
	if (r == 0)
		r = ctp_om_timeline_new(&o->timeline);
	if (r == 0)
		r = ctp_export_recording(o->timeline, &files, &skips, &o->r, v,
					 o->view != NULL, o->top, &o->files,
					 err, sizeof(err));
	else if (r == -ENOMEM)
		snprintf(err, sizeof(err), "%s", strerror(ENOMEM));
	if (r == 0 && !o->files) {
		snprintf(err, sizeof(err),
			 "%s: no readable snapshot of a recording%s", o->path,
			 o->from || o->to ? " between --from and --to" : "");
		r = -ENOENT;
	}
	ctp_recdir_warn_skips(stderr, PROG, o->path, &skips);
	ctp_recdir_files_done(&files);
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return CTP_EXIT_FAILURE;
	}
	return 0;
}

static bool want_glob(const void *arg, const char *field)
{
	return ctp_readopts_selected(arg, field);
}

/* A field one of the view's number columns names. */
static bool want_view(const void *arg, const char *field)
{
	const struct ctp_view *v = arg;
	for (size_t i = 0; i < v->n_cols; i++)
		for (size_t k = 0; k < v->cols[i].n_fields; k++)
			if (strcmp(v->cols[i].fields[k], field) == 0)
				return true;
	return false;
}

/* The sort column of v that ranks groups, or NULL. */
static const struct ctp_view_col *rank_col(const struct ctp_view *v)
{
	return v && !v->full && v->n_cols ? &v->cols[v->sort] : NULL;
}

/* What a series' export writes: the fields selected, its counters. */
static struct ctp_om_opts series_opts(const struct ctp_series *series,
				      const struct ctp_readopts *r,
				      const struct ctp_view *v,
				      bool view_selects, bool openmetrics)
{
	return (struct ctp_om_opts){
		.openmetrics = openmetrics,
		.want = view_selects ? want_view
			: r->n_globs ? want_glob
				     : NULL,
		.want_arg = view_selects ? (const void *)v : (const void *)r,
		.series = series,
	};
}

int ctp_export_series(FILE *out, const struct ctp_series *series,
		      const struct ctp_readopts *r, const struct ctp_view *v,
		      bool view_selects, bool openmetrics,
		      struct ctp_om_stats *st)
{
	struct ctp_om_opts mo =
		series_opts(series, r, v, view_selects, openmetrics);
	return ctp_om_write(out, ctp_series_snap(series),
			    ctp_series_groups(series), &mo, st);
}

/* A step of a recording's walk into a timeline. */
struct om_walk {
	struct ctp_om_timeline *t;
	struct ctp_series *s;
	const struct ctp_readopts *r;
	const struct ctp_view *v;
	bool view_selects;
	size_t *used;
	char *err;
	size_t errlen;
};

static int om_step(struct ctp_snap *snap, const struct ctp_recdir_file *file,
		   void *arg)
{
	struct om_walk *k = arg;
	(void)file;
	int rc = ctp_series_feed(k->s, snap, k->err, k->errlen);
	if (rc < 0)
		return rc;
	struct ctp_om_opts mo =
		series_opts(k->s, k->r, k->v, k->view_selects, true);
	rc = ctp_om_timeline_add(k->t, ctp_series_snap(k->s),
				 ctp_series_groups(k->s), &mo);
	if (rc < 0)
		snprintf(k->err, k->errlen, "%s", strerror(-rc));
	else
		(*k->used)++;
	return rc;
}

int ctp_export_recording(struct ctp_om_timeline *t,
			 struct ctp_recdir_files *files,
			 struct ctp_recdir_skips *skips,
			 const struct ctp_readopts *r, const struct ctp_view *v,
			 bool view_selects, uint64_t top, size_t *used,
			 char *err, size_t errlen)
{
	struct om_walk k = {.t = t,
			    .r = r,
			    .v = v,
			    .view_selects = view_selects,
			    .used = used,
			    .err = err,
			    .errlen = errlen};
	int rc = ctp_export_series_new(r, v, top, 0, &k.s);
	*used = 0;
	if (rc == 0)
		rc = ctp_recdir_walk_take(files, r->cap, skips, om_step, &k);
	else
		snprintf(err, errlen, "%s", strerror(-rc));
	ctp_series_free(k.s);
	return rc < 0 ? rc : 0;
}

int ctp_export_series_new(const struct ctp_readopts *r,
			  const struct ctp_view *v, uint64_t top,
			  uint64_t ttl_ns, struct ctp_series **ret)
{
	const struct ctp_view_col *sc = rank_col(v);
	struct ctp_series_opts so = {
		.spec = &r->spec,
		.top = top,
		.ttl_ns = ttl_ns,
		.rank = sc ? (const char *const *)sc->fields : NULL,
		.n_rank = sc ? sc->n_fields : 0,
		.cap = r->cap,
	};
	return ctp_series_new(&so, ret);
}

int ctp_export_metrics(FILE *out, const struct ctp_snap *snap,
		       const struct ctp_readopts *r, const struct ctp_view *v,
		       bool view_selects, bool openmetrics, uint64_t top,
		       struct ctp_om_stats *st, char *err, size_t errlen)
{
	struct ctp_groups *g;
	int rc = ctp_groups_new(snap, &r->spec, &g, err, errlen);
	if (rc < 0)
		return rc;
	const struct ctp_view_col *sc = rank_col(v);
	struct ctp_om_opts mo = {
		.openmetrics = openmetrics,
		.want = view_selects ? want_view
			: r->n_globs ? want_glob
				     : NULL,
		.want_arg = view_selects ? (const void *)v : (const void *)r,
		.top = top,
		.rank = sc ? (const char *const *)sc->fields : NULL,
		.n_rank = sc ? sc->n_fields : 0,
	};
	rc = ctp_om_write(out, snap, g, &mo, st);
	ctp_groups_free(g);
	if (rc < 0)
		snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

/* The metrics of snap to out, said on stderr. */
static int metrics(FILE *out, const struct ctp_snap *snap, struct opts *o,
		   const struct ctp_view *v, char *err, size_t errlen)
{
	struct ctp_om_stats st;
	if (o->timeline) {
		int r = ctp_om_timeline_write(o->timeline, out);
		if (r == 0 && ctp_verbosity >= 0)
			fprintf(stderr,
				PROG
				": %zu file%s of the recording, a timestamp "
				"per sample, counters over time\n",
				o->files, o->files == 1 ? "" : "s");
		if (r < 0)
			snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	int r = o->series ? ctp_export_series(out, o->series, &o->r, v,
					      o->view != NULL,
					      o->format == F_OPENMETRICS, &st)
			  : ctp_export_metrics(out, snap, &o->r, v,
					       o->view != NULL,
					       o->format == F_OPENMETRICS,
					       o->top, &st, err, errlen);
	if (r < 0 && o->series)
		snprintf(err, errlen, "%s", strerror(-r));
	if (r == 0 && ctp_verbosity >= 0 && !o->quiet)
		fprintf(stderr,
			PROG ": %zu series in %zu families; %zu of %zu "
			     "groups%s; %zu fields left out (ordinals, "
			     "strings, cpusets, exited)\n",
			st.series, st.families, st.kept, st.groups,
			st.kept < st.groups ? ", the rest as group=\"other\""
					    : "",
			st.skipped);
	return r;
}

/* A walk over a recording's files into a flat writer. */
struct walk {
	struct opts *o;
	struct ctp_flat_writer *w;
	char *err;
	size_t errlen;
	int64_t first, last; /* the capture times of the files written */
};

static int walk_cols(const struct ctp_snap *snap,
		     const struct ctp_recdir_file *file, void *arg)
{
	struct walk *k = arg;
	(void)file;
	int r = ctp_flat_writer_cols(k->w, snap);
	if (r < 0)
		snprintf(k->err, k->errlen, "%s", strerror(-r));
	return r;
}

static int walk_rows(const struct ctp_snap *snap,
		     const struct ctp_recdir_file *file, void *arg)
{
	struct walk *k = arg;
	struct ctp_groups *g = NULL;
	char err[768];
	int r = ctp_readopts_given(&k->o->r, CTP_READOPT_GROUP_BY)
			? ctp_groups_new(snap, &k->o->r.spec, &g, err,
					 sizeof(err))
			: 0;
	if (r == 0)
		r = ctp_flat_writer_rows(k->w, snap, g, err, sizeof(err));
	ctp_groups_free(g);
	if (r < 0)
		snprintf(k->err, k->errlen, "%s: %s", file->name, err);
	if (r == 0 && !k->first)
		k->first = file->t;
	k->last = file->t;
	return r;
}

/*
 * The flat rows of every file of the recording o->path from --from to
 * --to, oldest first, as one table: a first walk gathers the union of the
 * files' columns, a second writes each file's rows (one snapshot held at a
 * time). Files that are not readable snapshots are skipped and counted.
 */
static int recording_rows(FILE *out, struct opts *o,
			  const struct ctp_flat_opts *fo, char *err,
			  size_t errlen)
{
	struct ctp_recdir_skips skips = {0};
	struct ctp_recdir_files files;
	struct walk k = {.o = o, .err = err, .errlen = errlen};
	int n = ctp_recdir_files_open(o->path, o->from, o->to, &skips, &files,
				      err, errlen);
	if (n == 0)
		n = ctp_flat_writer_new(out, fo, &k.w, err, errlen);
	if (n == 0)
		n = ctp_recdir_walk(&files, o->r.cap, &skips, walk_cols, &k);
	if (n >= 0)
		n = ctp_recdir_walk(&files, o->r.cap, &skips, walk_rows, &k);
	if (n > 0)
		n = ctp_flat_writer_end(k.w, err, errlen) < 0 ? -EIO : n;
	ctp_recdir_warn_skips(stderr, PROG, o->path, &skips);
	if (n == 0)
		snprintf(err, errlen,
			 "%s: no readable snapshot of a recording%s", o->path,
			 o->from || o->to ? " between --from and --to" : "");
	if (n > 0 && ctp_verbosity >= 0) {
		char a[64], b[64];
		ctp_render_time((uint64_t)k.first, a, sizeof(a));
		ctp_render_time((uint64_t)k.last, b, sizeof(b));
		fprintf(stderr, PROG ": %s: %d file%s, %s to %s\n", o->path, n,
			n == 1 ? "" : "s", a, b);
	}
	ctp_flat_writer_free(k.w);
	ctp_recdir_files_done(&files);
	return n > 0 ? 0 : n == 0 ? -ENOENT : n;
}

/* The flat rows of snap to out; snap NULL: of the recording o->path. */
static int rows(FILE *out, const struct ctp_snap *snap, struct opts *o,
		char *err, size_t errlen)
{
	struct ctp_groups *g = NULL;
	int scope = ctp_flat_table_parse(o->table ? o->table : "threads");
	if (scope < 0) {
		snprintf(err, errlen,
			 "--table %s: expected threads, processes, cgroups, "
			 "host or exited",
			 o->table);
		return -EINVAL;
	}
	struct ctp_flat_opts fo = {
		.format = o->format == F_CSV ? CTP_FLAT_CSV : CTP_FLAT_NDJSON,
		.scope = (uint8_t)scope,
		.sel = &o->r,
		.capture_cols = true,
	};
	if (!snap)
		return recording_rows(out, o, &fo, err, errlen);
	int r = ctp_readopts_given(&o->r, CTP_READOPT_GROUP_BY)
			? ctp_groups_new(snap, &o->r.spec, &g, err, errlen)
			: 0;
	if (r == 0)
		r = ctp_flat_write(out, snap, g, &fo, err, errlen);
	ctp_groups_free(g);
	return r;
}

/* Write through an output file that appears whole or not at all. */
static int run(struct opts *o, const struct ctp_snap *snap,
	       const struct ctp_view *v)
{
	struct ctp_outfile t;
	char err[1024];
	const char *path = o->out ? o->out : "-";
	FILE *out = NULL;
	ctp_outfile_init(&t);
	/* node_exporter reads the textfile as its own user. */
	t.mode = o->textfile ? 0644 : 0;
	int r = ctp_outfile_open(&t, path, err, sizeof(err));
	if (r == 0 && !(out = fdopen(t.fd, "w")))
		r = -errno;
	if (r == 0)
		r = o->format == F_CSV || o->format == F_NDJSON
			    ? rows(out, snap, o, err, sizeof(err))
			    : metrics(out, snap, o, v, err, sizeof(err));
	if (out && fflush(out) != 0 && r == 0) {
		r = -errno;
		snprintf(err, sizeof(err), "%s: %s", path, strerror(-r));
	}
	if (r == 0)
		r = ctp_outfile_commit(&t, path, NULL, err, sizeof(err));
	if (out) {
		/* fclose closes the descriptor: the outfile must not. */
		if (t.stream && !t.close_fd)
			fflush(out);
		else {
			fclose(out);
			t.fd = -1;
		}
	}
	ctp_outfile_close(&t);
	if (r == 0 && o->textfile && !o->quiet && ctp_verbosity >= 0)
		fprintf(stderr,
			PROG ": note: %s is of this one capture and will not "
			     "be refreshed: `ctprof-core record --textfile %s` "
			     "keeps it current (alert on "
			     "ctprof_capture_timestamp_seconds, "
			     "docs/EXPORT.md)\n",
			o->textpath, o->textfile);
	if (r == 0)
		return CTP_EXIT_OK;
	fprintf(stderr, PROG ": %s\n", err);
	return r == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
}

int ctp_export_textfile(const char *snap_path, const char *dir, uint64_t cap,
			uint64_t ttl_ns, struct ctp_series **series)
{
	struct opts o = {.top = DEFAULT_TOP,
			 .format = F_PROMETHEUS,
			 .textfile = dir,
			 .quiet = true};
	struct ctp_snap *snap = NULL;
	struct ctp_view *v = NULL;
	char err[512], axes[] = "pcomm";
	int n = snprintf(o.textpath, sizeof(o.textpath), "%s/%s", dir,
			 TEXTFILE);
	if (n < 0 || (size_t)n >= sizeof(o.textpath)) {
		fprintf(stderr, "%s/%s: path too long\n", dir, TEXTFILE);
		return CTP_EXIT_FAILURE;
	}
	o.out = o.textpath;
	o.r.cap = cap;
	int rc = ctp_group_spec_parse(axes, &o.r.spec, err, sizeof(err)) < 0
			 ? CTP_EXIT_FAILURE
			 : 0;
	if (rc == 0 && ctp_view_find("top", &v, err, sizeof(err)) < 0)
		v = NULL; /* no view: ranked by the first CPU counter */
	if (rc == 0 &&
	    ctp_snap_open(snap_path, cap, &snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		rc = CTP_EXIT_FAILURE;
	}
	if (rc == 0 && series && !*series &&
	    ctp_export_series_new(&o.r, v, o.top, ttl_ns, series) < 0)
		rc = CTP_EXIT_FAILURE;
	if (rc == 0 && series) { /* the series takes the snapshot */
		rc = ctp_series_feed(*series, snap, err, sizeof(err)) < 0
			     ? CTP_EXIT_FAILURE
			     : 0;
		if (rc)
			fprintf(stderr, "%s: %s\n", snap_path, err);
		o.series = *series;
		snap = NULL;
	}
	if (rc == 0)
		rc = run(&o, o.series ? ctp_series_snap(o.series) : snap, v);
	ctp_snap_free(snap);
	ctp_view_free(v);
	return rc;
}

int ctp_cmd_export(int argc, char **argv)
{
	struct opts o = {.top = DEFAULT_TOP};
	struct ctp_snap *snap = NULL;
	struct ctp_view *v = NULL;
	char err[512];
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0) { /* --help, or a usage error said */
		ctp_readopts_done(&o.r);
		return rc;
	}
	/* csv and ndjson of a recording: every file (flat rows of each);
	 * OpenMetrics: all of it, over time; the 0.0.4 text: its latest. */
	bool whole = o.recording && (o.format == F_CSV || o.format == F_NDJSON);
	bool walk = o.recording && o.format == F_OPENMETRICS && !o.textfile;
	rc = whole || walk ? 0 : latest_of(&o);
	if (rc == 0 &&
	    ctp_view_find(o.view ? o.view : "top", &v, err, sizeof(err)) < 0 &&
	    o.view) {
		fprintf(stderr, PROG ": %s\n", err);
		rc = CTP_EXIT_USAGE;
	}
	if (rc == 0 && walk)
		rc = walk_of(&o, v);
	if (rc == 0 && !whole && !walk &&
	    ctp_snap_open(o.path, o.r.cap, &snap, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		rc = CTP_EXIT_FAILURE;
	}
	if (rc == 0)
		rc = run(&o, snap, v);
	ctp_om_timeline_free(o.timeline);
	ctp_snap_free(snap);
	ctp_view_free(v);
	ctp_readopts_done(&o.r);
	return rc;
}
