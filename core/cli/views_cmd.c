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

#include "cli.h"
#include "readcli.h"
#include "view.h"

static const char *const show_names[] = {"",	 "value",   "delta",
					 "rate", "pct_cpu", "share"};
static const char *const ident_names[] = {"",	    "pcomm", "comm",
					  "cgroup", "pid",   "age"};

static void usage(FILE *f)
{
	fprintf(f, "Usage: ctprof-core views [NAME | FILE.yaml]\n"
		   "List the views `show --view NAME` takes, or print one "
		   "view's sections and\n"
		   "columns (a path: check a view file). Views are looked up "
		   "in $CTPROF_VIEW_DIR,\n"
		   "~/.config/ctprof/views, then the shipped ones "
		   "(docs/VIEWS.md).\n");
}

static int list(void)
{
	char **names, **paths;
	size_t n;
	if (ctp_view_names(&names, &paths, &n) < 0) {
		fprintf(stderr, "ctprof-core views: out of memory\n");
		return CTP_EXIT_FAILURE;
	}
	int rc = CTP_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		struct ctp_view *v = NULL;
		char err[1024];
		if (ctp_view_load(paths[i], &v, err, sizeof(err)) < 0) {
			printf("%-10s (unreadable) %s\n", names[i], err);
			rc = CTP_EXIT_FAILURE;
		} else {
			printf("%-10s %s\n", names[i], v->description);
		}
		ctp_view_free(v);
		free(names[i]);
		free(paths[i]);
	}
	free(names);
	free(paths);
	return rc;
}

static void describe(const struct ctp_view *v)
{
	printf("view %s: %s\nfile: %s\n", v->name, v->description, v->path);
	if (v->full) {
		printf("prints the whole snapshot (show's full output)\n");
		return;
	}
	for (size_t i = 0; i < v->n_secs; i++)
		printf("section %zu: %s (--group-by %s)\n", i + 1,
		       v->secs[i].title, v->secs[i].group_by);
	printf("sorted by %s, %s\n", v->cols[v->sort].id,
	       v->asc ? "ascending" : "descending");
	printf("%-10s %-8s %-8s %s\n", "COLUMN", "LABEL", "SHOWS", "FROM");
	for (size_t i = 0; i < v->n_cols; i++) {
		const struct ctp_view_col *c = &v->cols[i];
		printf("%-10s %-8s %-8s ", c->id, c->label,
		       show_names[c->show]);
		if (c->src == CTP_VSRC_IDENT)
			printf("the task's %s", ident_names[c->ident]);
		for (size_t k = 0; k < c->n_fields; k++)
			printf("%s%s",
			       k ? c->src == CTP_VSRC_SUM ? " + " : " | " : "",
			       c->fields[k]);
		printf("%s%s%s%s\n",
		       c->src == CTP_VSRC_FIELD && c->n_fields > 1
			       ? " (the first with values)"
			       : "",
		       v->hide_zero[i] ? "; all zero: row hidden" : "",
		       c->why_absent ? "; why absent: " : "",
		       c->why_absent ? c->why_absent : "");
	}
}

int ctp_cmd_views(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
				       strcmp(argv[1], "--help") == 0))) {
		usage(argc > 2 ? stderr : stdout);
		return argc > 2 ? CTP_EXIT_USAGE : CTP_EXIT_OK;
	}
	/* View files are anyone's text: shown by the terminal's rule. */
	FILE *screen = ctp_readcli_screen();
	int rc = CTP_EXIT_OK;
	if (argc < 2) {
		rc = list();
		goto out;
	}
	struct ctp_view *v = NULL;
	char err[4096];
	bool file = strchr(argv[1], '/') || strstr(argv[1], ".yaml");
	int r = file ? ctp_view_load(argv[1], &v, err, sizeof(err))
		     : ctp_view_find(argv[1], &v, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "ctprof-core views: %s\n", err);
		rc = r == -ENOMEM ? CTP_EXIT_FAILURE : CTP_EXIT_USAGE;
		goto out;
	}
	describe(v);
	ctp_view_free(v);
out:
	if (ctp_readcli_screen_done(screen) != 0 && rc == CTP_EXIT_OK)
		rc = CTP_EXIT_FAILURE;
	return rc;
}
