/* SPDX-License-Identifier: MIT */
/*
 * `compare A0 A1 [A0' A1' ...] --vs B0 B1 [...]`: the files, their
 * intervals and the checks; the comparison itself is core/analysis/vs.c
 * (docs/COMPARE.md "Interval against interval").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "compare_view.h"
#include "exitsum.h"
#include "interval.h"
#include "readcli.h"
#include "term.h"
#include "view.h"
#include "vs.h"

#define PROG "ctprof-core compare"

/* One run's files, snapshots, exited tasks and interval. */
struct run {
	struct ctp_snap *snap[2];
	struct ctp_exit_sum ex;
	struct ctp_interval *iv;
};

static void run_free(struct run *r)
{
	ctp_interval_free(r->iv);
	ctp_exit_sum_free(&r->ex);
	ctp_snap_free(r->snap[0]);
	ctp_snap_free(r->snap[1]);
}

/* Open run i of side k (files p[0], p[1]); an exit status after a
 * message, or -1 to go on. */
static int run_open(const struct ctp_compare_vs_args *a,
		    const struct ctp_view *v, int k, size_t i, char *const *p,
		    struct run *r, struct ctp_vs_run *vr)
{
	char err[4096];
	for (int j = 0; j < 2; j++)
		if (ctp_snap_open(p[j], a->cap, &r->snap[j], err, sizeof(err)) <
		    0) {
			fprintf(stderr, PROG ": --vs: %s\n", err);
			return CTP_EXIT_USAGE;
		}
	if (ctp_compare_view_exited((const struct ctp_snap *const *)r->snap,
				    (const char *const *)p, a->cap, v,
				    &r->ex) < 0 ||
	    ctp_interval_new(r->snap[0], r->snap[1],
			     r->ex.present ? &r->ex : NULL, &r->iv) < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return CTP_EXIT_FAILURE;
	}
	if (ctp_interval_seconds(r->iv) <= 0) {
		fprintf(stderr,
			PROG ": --vs: %c run %zu: %s was not captured after "
			     "%s; give each run as BASE CAND, the earlier "
			     "file first\n",
			"AB"[k], i + 1, p[1], p[0]);
		return CTP_EXIT_USAGE;
	}
	*vr = (struct ctp_vs_run){.path = {p[0], p[1]}, .iv = r->iv};
	return -1;
}

/* A warning when the snapshots come from different hosts: a comparison
 * of runs is of one host under two settings. */
static void warn_hosts(struct run *const runs[2], const size_t n[2],
		       char *const *const paths[2])
{
	const char *first = NULL, *fp = NULL;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < n[k]; i++)
			for (int j = 0; j < 2; j++) {
				const char *h =
					ctp_snap_header(runs[k][i].snap[j])
						->hostname;
				if (!h)
					continue;
				if (!first) {
					first = h, fp = paths[k][2 * i + j];
				} else if (strcmp(h, first) != 0) {
					fprintf(stderr,
						PROG ": warning: --vs: %s is "
						     "of host %s, %s of %s\n",
						paths[k][2 * i + j], h, fp,
						first);
					return;
				}
			}
}

int ctp_compare_vs(const struct ctp_compare_vs_args *a)
{
	struct ctp_view *v = NULL;
	struct run *runs[2] = {NULL, NULL};
	struct ctp_vs_run *vr[2] = {NULL, NULL};
	size_t nr[2] = {a->n[0] / 2, a->n[1] / 2};
	char err[4096];
	char *buf = NULL;
	size_t len = 0;
	int rc = CTP_EXIT_FAILURE;
	int r = ctp_view_find(a->view ? a->view : "top", &v, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return CTP_EXIT_USAGE;
	}
	if (v->full) {
		fprintf(stderr,
			PROG ": --vs takes a view of columns, not "
			     "'%s' (the full comparison)\n",
			v->name);
		rc = CTP_EXIT_USAGE;
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		runs[k] = calloc(nr[k] + 1, sizeof(*runs[k]));
		vr[k] = calloc(nr[k] + 1, sizeof(*vr[k]));
		if (!runs[k] || !vr[k]) {
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
		for (size_t i = 0; i < nr[k]; i++)
			if ((rc = run_open(a, v, k, i, &a->paths[k][2 * i],
					   &runs[k][i], &vr[k][i])) >= 0)
				goto out;
	}
	warn_hosts(runs, nr, a->paths);
	size_t w, h;
	ctp_readcli_term(&w, &h);
	struct ctp_vs_opts o = {
		.v = v,
		.sort = a->sort,
		.group_by = a->group_by,
		.no_normalize = a->no_normalize,
		.want = a->want,
		.want_arg = a->want_arg,
		.width = a->wide || a->fmt != CTP_TABLE_TEXT ? 0 : w,
		.top = a->top_set		  ? a->top
		       : a->fmt == CTP_TABLE_TEXT ? 8
						  : 0,
		.fmt = (enum ctp_table_format)a->fmt,
		.color = a->fmt == CTP_TABLE_TEXT &&
			 ctp_color_for(STDOUT_FILENO),
	};
	/* All of it, or nothing: the output is made before any of it goes
	 * out. Text is made through the terminal rule (ctp_term_stream), so
	 * that it goes out as it is: the table's own colour sequences pass
	 * (ctp_term_raw), every other byte is escaped once, here. */
	bool text = a->fmt == CTP_TABLE_TEXT;
	FILE *m = open_memstream(&buf, &len),
	     *tw = m && text ? ctp_term_stream(m) : m;
	if (!tw) {
		if (m)
			fclose(m);
		fprintf(stderr, PROG ": out of memory\n");
		rc = CTP_EXIT_FAILURE;
		goto out;
	}
	r = ctp_vs_print(tw, vr[0], nr[0], vr[1], nr[1], &o, err, sizeof(err));
	if (tw != m && fclose(tw) != 0 && r == 0)
		r = -ENOMEM;
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n",
			r == -EINVAL ? err : strerror(-r));
		rc = r == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
		goto out;
	}
	if (text)
		ctp_term_raw(stdout, buf);
	rc = (text || fwrite(buf, 1, len, stdout) == len) &&
			     fflush(stdout) == 0 && !ferror(stdout)
		     ? CTP_EXIT_OK
		     : CTP_EXIT_FAILURE;
out:
	free(buf);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; runs[k] && i < nr[k]; i++)
			run_free(&runs[k][i]);
		free(runs[k]);
		free(vr[k]);
	}
	ctp_view_free(v);
	return rc;
}
