/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core trend DIR`: questions over a whole recording (docs/TREND.md).
 * Walks the recording's files from --from to --to in capture order, one
 * snapshot at a time (two for a counter's change), into the trend model
 * (core/analysis/trend.h), then prints its rows through the one table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctprof/plugin-util.h"
#include "log.h"
#include "readcli.h"
#include "term.h"
#include "recdir.h"
#include "render.h"
#include "table.h"
#include "trend.h"
#include "view.h"

#define PROG "ctprof-core trend"

enum { F_TEXT, F_CSV, F_JSON };
static const char *const formats[] = {"text", "csv", "json", NULL};

struct opts {
	struct ctp_readopts r;
	const char *dir, *view, *from, *to;
	int format;
	uint64_t top;
	bool top_set, asc;
};

static void usage(FILE *f)
{
	fputs("Usage: ctprof-core trend DIR [--from T] [--to T] [--view V]\n"
	      "                         [--group-by AXES] [--sort COL[:STAT]] "
	      "[--asc]\n"
	      "                         [--top N] [--format text|csv|json]\n"
	      "\n"
	      "Per task or group of a recording, from its first capture to "
	      "its last: a gauge's\n"
	      "first, last, minimum and maximum and when, and its change; a "
	      "counter's increase\n"
	      "and its peak rate between two captures and when. Tasks that "
	      "ended during it are\n"
	      "rows too (STATUS: ended after the time of their last "
	      "capture).\n"
	      "\n"
	      "  --from T, --to T   the files from the one at or before T to "
	      "the one at or\n"
	      "                     before T (latest, -10m, "
	      "YYYY-mm-ddTHH:MM[:SS], HH:MM[:SS])\n"
	      "  --view V           the measures: V's number columns "
	      "(default mem)\n"
	      "  --group-by AXES    rows (default: the view's first "
	      "section's, pid for mem)\n"
	      "  --sort COL[:STAT]  rank by a column's id or label (default: "
	      "the view's sort\n"
	      "                     column) and STAT: change (default; a "
	      "counter's increase),\n"
	      "                     first, last, min, max, peak (a counter's "
	      "highest rate)\n"
	      "  --asc              lowest first: shrink (--sort rss --asc), "
	      "the lowest minimum\n"
	      "                     (--sort rss:min --asc)\n"
	      "  --top N            rows (default: what fits the terminal; "
	      "csv, json: all)\n"
	      "  --format F         text (default), csv, json (times as RFC "
	      "3339, numbers in\n"
	      "                     the field's unit)\n"
	      "docs/TREND.md has the numbers' meaning.\n",
	      f);
}

static int own_option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;
	switch (c) {
	case 'f':
		o->format = -1;
		for (int i = 0; formats[i]; i++)
			if (strcmp(arg, formats[i]) == 0)
				o->format = i;
		if (o->format < 0) {
			fprintf(stderr,
				PROG ": --format %s: expected text, csv or "
				     "json\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		return -1;
	case 'v':
		o->view = arg;
		return -1;
	case 't':
		if (ctp_parse_u64_str(arg, &o->top) < 0) {
			fprintf(stderr,
				PROG ": --top %s: expected a count, 0 for "
				     "all\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		o->top_set = true;
		return -1;
	case 'F':
		o->from = arg;
		return -1;
	case 'U':
		o->to = arg;
		return -1;
	case 'a':
		o->asc = true;
		return -1;
	case 'd':
		o->asc = false;
		return -1;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	}
	return ctp_readcli_try_help("trend");
}

/* The view (--view, default mem) into *v. -1, or the exit status. */
static int load_view(const struct opts *o, struct ctp_view **v)
{
	char err[512];
	if (ctp_view_find(o->view ? o->view : "mem", v, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return CTP_EXIT_USAGE;
	}
	if ((*v)->full) {
		fprintf(stderr,
			PROG ": view %s has no columns: give a view of "
			     "columns (ctprof-core views)\n",
			(*v)->name);
		return CTP_EXIT_USAGE;
	}
	return -1;
}

static int parse_args(int argc, char **argv, struct opts *o,
		      struct ctp_view **v)
{
	static const struct option lopts[] = {
		CTP_READOPT_LONGOPTS,
		{"format", required_argument, NULL, 'f'},
		{"view", required_argument, NULL, 'v'},
		{"top", required_argument, NULL, 't'},
		{"from", required_argument, NULL, 'F'},
		{"to", required_argument, NULL, 'U'},
		{"asc", no_argument, NULL, 'a'},
		{"desc", no_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *const operands[] = {"DIR"};
	int rc = ctp_readopts_parse("trend", &o->r, argc, argv, "hc:", lopts,
				    own_option, o);
	if (rc >= 0)
		return rc;
	const char *bad = o->r.n_globs ? "--fields"
			  : o->r.limit ? "--limit (--top N)"
				       : NULL;
	if (bad) {
		fprintf(stderr, PROG ": %s is not a trend option\n", bad);
		return ctp_readcli_try_help("trend");
	}
	if ((rc = load_view(o, v)) >= 0)
		return rc;
	/* The rows: the view's first section's grouping by default. */
	if (!o->r.group_by)
		o->r.group_by = (*v)->n_secs ? (*v)->secs[0].group_by : "pid";
	rc = ctp_readopts_finish("trend", &o->r, argc, argv, 1, operands);
	if (rc >= 0)
		return rc;
	o->dir = argv[optind];
	return -1;
}

/* A step of the walk: the snapshot into the model. */
struct walk {
	struct ctp_trend *t;
	char *err;
	size_t errlen;
};

static int step(struct ctp_snap *snap, const struct ctp_recdir_file *file,
		void *arg)
{
	struct walk *k = arg;
	char err[512];
	int r = ctp_trend_feed(k->t, snap, file->t, err, sizeof(err));
	if (r < 0)
		snprintf(k->err, k->errlen, "%s: %s", file->name, err);
	return r;
}

/* The header line: what was read (local times, the last one's date when
 * it is another day). */
static void header(FILE *out, const struct opts *o, const struct ctp_trend *t,
		   size_t files, const struct ctp_recdir_skips *skips)
{
	int64_t a, b;
	char x[64], y[64], span[32], esc[512];
	size_t fed = ctp_trend_fed(t, &a, &b);
	ctp_trend_time(a, true, x, sizeof(x));
	ctp_trend_time(b, true, y, sizeof(y));
	bool day = strncmp(x, y, 10) == 0;
	x[19] = y[19] = '\0'; /* YYYY-mm-ddTHH:MM:SS */
	x[10] = y[10] = ' ';
	ctp_render_duration(span, sizeof(span), (long double)(b - a) / 1e9);
	fprintf(out,
		"%s: %s to %s (%s); %zu of %zu files, %u skipped; %zu rows\n",
		ctp_render_escape(o->dir, strlen(o->dir), 256, esc,
				  sizeof(esc)),
		x, day ? y + 11 : y, span, fed, files, skips->n,
		ctp_trend_rows(t));
}

static int print(const struct opts *o, const struct ctp_trend *t, size_t files,
		 const struct ctp_recdir_skips *skips)
{
	size_t w, h;
	ctp_readcli_term(&w, &h);
	struct ctp_trend_print p = {
		.sort = o->r.sort,
		.asc = o->asc,
		.top = o->top_set  ? o->top
		       : o->format ? 0
				   : (h > 8 ? h - 4 : 20),
		.machine = o->format != F_TEXT,
	};
	struct ctp_table *tab = NULL;
	char err[512];
	int r = ctp_trend_table(t, &p, &tab, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return r == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
	}
	if (o->format == F_TEXT) {
		FILE *screen = ctp_readcli_screen();
		static const char *const steps[] = {"<16", ">", NULL};
		header(stdout, o, t, files, skips);
		r = ctp_table_fit(tab, w, steps);
		if (r == 0)
			ctp_table_print(tab, stdout,
					ctp_color_for(STDOUT_FILENO));
		if (ctp_readcli_screen_done(screen) != 0 && r == 0)
			r = -EIO;
	} else {
		if (ctp_verbosity >= 0)
			header(stderr, o, t, files, skips);
		r = ctp_table_write(tab, stdout,
				    o->format == F_CSV ? CTP_TABLE_CSV
						       : CTP_TABLE_JSON);
		if (fflush(stdout) != 0 && r == 0)
			r = -EIO;
	}
	ctp_table_free(tab);
	if (r < 0) {
		fprintf(stderr, PROG ": writing: %s\n", strerror(-r));
		return CTP_EXIT_FAILURE;
	}
	return CTP_EXIT_OK;
}

/* The view's section of the grouping (its columns `in:` it), else the
 * first. */
static size_t section(const struct opts *o, const struct ctp_view *v)
{
	for (size_t i = 0; i < v->n_secs; i++)
		if (strcmp(v->secs[i].group_by, o->r.group_by) == 0)
			return i;
	return 0;
}

static int run(struct opts *o, const struct ctp_view *v)
{
	char err[768];
	struct ctp_recdir_skips skips = {0};
	struct ctp_recdir_files files;
	struct ctp_trend *t = NULL;
	struct ctp_trend_opts to = {
		.spec = &o->r.spec, .view = v, .section = section(o, v)};
	struct walk k = {.err = err, .errlen = sizeof(err)};
	int n = ctp_recdir_files_open(o->dir, o->from, o->to, &skips, &files,
				      err, sizeof(err));
	if (n == 0 && (n = ctp_trend_new(&to, &t)) < 0)
		snprintf(err, sizeof(err), "%s", strerror(-n));
	k.t = t;
	if (n == 0)
		n = ctp_recdir_walk_take(&files, o->r.cap, &skips, step, &k);
	ctp_recdir_warn_skips(stderr, PROG, o->dir, &skips);
	if (n == 0)
		snprintf(err, sizeof(err),
			 "%s: no readable snapshot of a recording%s", o->dir,
			 o->from || o->to ? " between --from and --to" : "");
	int rc = n > 0				? print(o, t, files.n, &skips)
		 : n == -EINVAL || n == -ERANGE ? CTP_EXIT_USAGE
						: CTP_EXIT_FAILURE;
	if (n <= 0)
		fprintf(stderr, PROG ": %s\n", err);
	ctp_trend_free(t);
	ctp_recdir_files_done(&files);
	return rc;
}

int ctp_cmd_trend(int argc, char **argv)
{
	struct opts o = {0};
	struct ctp_view *v = NULL;
	int rc = parse_args(argc, argv, &o, &v);
	if (rc < 0)
		rc = run(&o, v);
	ctp_view_free(v);
	ctp_readopts_done(&o.r);
	return rc;
}
