/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core views [NAME | FILE]`: the views show can print (a name per
 * line with its description and file), or one view's sections and columns;
 * a path checks a view file as show would read it (a plugin author's
 * check-config for views).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "readcli.h"
#include "term.h"
#include "table.h"
#include "view.h"

static const char *const show_names[] = {"",	 "value",   "delta",
					 "rate", "pct_cpu", "share"};
static const char *const ident_names[] = {"",	    "pcomm", "comm",
					  "cgroup", "pid",   "age"};

static void usage(FILE *f)
{
	fprintf(f, "Usage: ctprof-core views [--names] [--color=WHEN] "
		   "[NAME | FILE.yaml]\n"
		   "List the views `show --view NAME` takes, or print one "
		   "view's sections and\n"
		   "columns (a path: check a view file). Views are looked up "
		   "in $CTPROF_VIEW_DIR,\n"
		   "~/.config/ctprof/views, then the shipped ones "
		   "(docs/VIEWS.md).\n"
		   "  --names              only the names, one a line (for "
		   "scripts and completion)\n"
		   "  --color=WHEN         auto (default), always, never\n");
}

/* Every view's name, one a line, nothing else. 0 or -ENOMEM. */
static int list_names(void)
{
	char **names, **paths;
	size_t n;
	if (ctp_view_names(&names, &paths, &n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", names[i]);
		free(names[i]);
		free(paths[i]);
	}
	free(names);
	free(paths);
	return 0;
}

/* A view file's name and description, or why it is unreadable (*bad
 * set). 0 or -ENOMEM. */
static int list_row(struct ctp_table *t, const char *name, const char *path,
		    int *bad)
{
	struct ctp_view *v = NULL;
	char err[1024];
	int r = ctp_table_text(t, name);
	if (r == 0 && ctp_view_load(path, &v, err, sizeof(err)) < 0) {
		*bad = 1;
		r = ctp_table_textf(t, "(unreadable) %s", err);
	} else if (r == 0) {
		r = ctp_table_text(t, v->description);
	}
	ctp_view_free(v);
	return r;
}

/* Every view file's row. 0, 1 when one is unreadable, or -ENOMEM. */
static int list_rows(struct ctp_table *t)
{
	char **names, **paths;
	size_t n;
	int r = ctp_view_names(&names, &paths, &n), bad = 0;
	if (r < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (r == 0)
			r = list_row(t, names[i], paths[i], &bad);
		free(names[i]);
		free(paths[i]);
	}
	free(names);
	free(paths);
	return r < 0 ? r : bad;
}

static int list(void)
{
	static const struct ctp_table_col cols[] = {
		{"NAME", CTP_TABLE_OVERFLOW, 10, 0}, {"DESCRIPTION", 0, 0, 0}};
	struct ctp_table *t = ctp_table_new_cols(CTP_TABLE_VIEW, cols, 2);
	int r = t ? list_rows(t) : -ENOMEM;
	if (r >= 0) {
		ctp_table_headless(t);
		ctp_table_fit(t, 0, NULL);
		ctp_table_print(t, stdout, false);
	} else {
		fprintf(stderr, "ctprof-core views: out of memory\n");
	}
	ctp_table_free(t);
	return r == 0 ? CTP_EXIT_OK : CTP_EXIT_FAILURE;
}

/* Where column c takes its values from, into f. */
static void put_from(FILE *f, const struct ctp_view *v, size_t i)
{
	const struct ctp_view_col *c = &v->cols[i];
	if (c->src == CTP_VSRC_IDENT)
		fprintf(f, "the task's %s", ident_names[c->ident]);
	for (size_t k = 0; k < c->n_fields; k++)
		fprintf(f, "%s%s",
			k ? c->src == CTP_VSRC_SUM ? " + " : " | " : "",
			c->fields[k]);
	fprintf(f, "%s%s%s%s",
		c->src == CTP_VSRC_FIELD && c->n_fields > 1
			? " (the first with values)"
			: "",
		v->hide_zero[i] ? "; all zero: row hidden" : "",
		c->why_absent ? "; why absent: " : "",
		c->why_absent ? c->why_absent : "");
}

/* The view's columns: id, label, what each shows and where from. */
static int columns(const struct ctp_view *v)
{
	static const struct ctp_table_col cols[] = {
		{"COLUMN", CTP_TABLE_OVERFLOW, 10, 0},
		{"LABEL", CTP_TABLE_OVERFLOW, 8, 0},
		{"SHOWS", CTP_TABLE_OVERFLOW, 8, 0},
		{"FROM", 0, 0, 0}};
	struct ctp_table *t = ctp_table_new_cols(CTP_TABLE_VIEW, cols, 4);
	int r = t ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < v->n_cols; i++) {
		const struct ctp_view_col *c = &v->cols[i];
		char *from = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&from, &len);
		if (!f)
			r = -ENOMEM;
		else
			put_from(f, v, i);
		if (f && fclose(f) != 0)
			r = -ENOMEM;
		const char *const cells[] = {c->id, c->label,
					     show_names[c->show], from};
		if (r == 0)
			r = ctp_table_texts(t, cells, 4);
		free(from);
	}
	if (r == 0) {
		ctp_table_fit(t, 0, NULL);
		ctp_table_print(t, stdout, ctp_color_for(STDOUT_FILENO));
	}
	ctp_table_free(t);
	return r;
}

static int describe(const struct ctp_view *v)
{
	printf("view %s: %s\nfile: %s\n", v->name, v->description, v->path);
	if (v->full) {
		printf("prints the whole snapshot (show's full output)\n");
		return 0;
	}
	for (size_t i = 0; i < v->n_secs; i++)
		printf("section %zu: %s (--group-by %s)\n", i + 1,
		       v->secs[i].title, v->secs[i].group_by);
	printf("sorted by %s, %s\n", v->cols[v->sort].id,
	       v->asc ? "ascending" : "descending");
	return columns(v);
}

enum { O_NAMES = CTP_READOPT_FIRST_FREE };

/* views' options (ctp_readopts_own_fn): --names into *(bool *)ctx. */
static int views_option(void *ctx, int c, const char *arg)
{
	(void)arg;
	switch (c) {
	case O_NAMES:
		*(bool *)ctx = true;
		return -1;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	default:
		usage(stderr);
		return CTP_EXIT_USAGE;
	}
}

int ctp_cmd_views(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"color", required_argument, NULL, CTP_READOPT_COLOR},
		{"names", no_argument, NULL, O_NAMES},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct ctp_readopts ro = {0};
	bool names = false;
	int rc = ctp_readopts_parse("views", &ro, argc, argv, "h", lopts,
				    views_option, &names);
	ctp_readopts_done(&ro);
	if (rc >= 0)
		return rc;
	if (argc - optind > 1 || (names && argc > optind)) {
		usage(stderr);
		return CTP_EXIT_USAGE;
	}
	/* View files are anyone's text: shown by the terminal's rule. */
	FILE *screen = ctp_readcli_screen();
	rc = CTP_EXIT_OK;
	if (names) {
		rc = list_names() < 0 ? CTP_EXIT_FAILURE : CTP_EXIT_OK;
		goto out;
	}
	if (argc == optind) {
		rc = list();
		goto out;
	}
	struct ctp_view *v = NULL;
	char err[4096];
	const char *arg = argv[optind];
	bool file = strchr(arg, '/') || strstr(arg, ".yaml");
	int r = file ? ctp_view_load(arg, &v, err, sizeof(err))
		     : ctp_view_find(arg, &v, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "ctprof-core views: %s\n", err);
		rc = r == -ENOMEM ? CTP_EXIT_FAILURE : CTP_EXIT_USAGE;
		goto out;
	}
	if (describe(v) < 0) {
		fprintf(stderr, "ctprof-core views: out of memory\n");
		rc = CTP_EXIT_FAILURE;
	}
	ctp_view_free(v);
out:
	if (ctp_readcli_screen_done(screen) != 0 && rc == CTP_EXIT_OK)
		rc = CTP_EXIT_FAILURE;
	return rc;
}
