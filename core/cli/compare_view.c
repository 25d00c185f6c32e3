/* SPDX-License-Identifier: MIT */
/*
 * `compare BASE CAND` as a view (docs/VIEWS.md, docs/COMPARE.md): the
 * view's sections over CAND, each counter column the change over the
 * interval summed per task matched by identity, CPU as percent of one CPU
 * over the interval, sorted by the change, idle groups hidden, fitted to
 * the terminal. The full per-field comparison is `--view all`
 * (core/analysis/compare.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "compare_view.h"
#include "coverage.h"
#include "exitsum.h"
#include "interval.h"
#include "recdir.h"
#include "readcli.h"
#include "render.h"
#include "viewshow.h"
#include "term.h"

#define PROG "ctprof-core compare"

/* The tasks that exited between BASE snap[0] and CAND snap[1]: their
 * exited tables and those of the recording's files between them, when the
 * two are files of one (core/cli/recdir.h); what went wrong to log. */
static int exited_of(const struct ctp_snap *const snap[2],
		     const char *const paths[2], uint64_t cap,
		     const struct ctp_view *v, FILE *log,
		     struct ctp_exit_sum *s)
{
	char **between = NULL;
	int n = ctp_recdir_between(paths[0], paths[1], &between);
	if (n < 0)
		return n;
	int r = ctp_exit_sum_paths(snap[0], snap[1], between, (size_t)n, cap, v,
				   log, PROG, s);
	ctp_recdir_list_free(between, n);
	return r;
}

int ctp_compare_view_exited(const struct ctp_snap *const snap[2],
			    const char *const paths[2], uint64_t cap,
			    const struct ctp_view *v, struct ctp_exit_sum *s)
{
	return exited_of(snap, paths, cap, v, stderr, s);
}

/* "BASE  2026-11-25 12:14:15.408 UTC  path" cut to the width. */
static void side_line(FILE *out, const char *tag, const struct ctp_snap *snap,
		      const char *path, size_t width)
{
	char when[64], line[1024];
	ctp_render_time(ctp_snap_header(snap)->start_realtime_ns, when,
			sizeof(when));
	int n = snprintf(line, sizeof(line), "%s  %s  %s", tag, when, path);
	if (width && n > 0 && (size_t)n > width && width > 4) {
		/* Keep the end of the path, where the file's name is. */
		size_t keep = width - 3 -
			      (size_t)(strlen(tag) + 2 + strlen(when) + 2);
		size_t plen = strlen(path);
		if (keep < plen && keep > 0)
			snprintf(line, sizeof(line), "%s  %s  ...%s", tag, when,
				 path + plen - keep);
	}
	fprintf(out, "%s\n", line);
}

/* What top's header says: the times, the host, exits, refused reads, the
 * sort column (the view's when none was asked for). */
static void fill_info(struct ctp_compare_view_info *in,
		      struct ctp_snap *const snap[2], double s,
		      const struct ctp_exit_sum *ex, const struct ctp_view *v,
		      const char *sort)
{
	const struct ctp_snap_header *h = ctp_snap_header(snap[1]);
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap[1]);
	in->base_ns = ctp_snap_header(snap[0])->start_realtime_ns;
	in->cand_ns = h->start_realtime_ns;
	in->seconds = s;
	/* A recording's bytes, for a terminal. */
	in->host[0] = '\0';
	if (h->hostname)
		ctp_render_escape(h->hostname, strlen(h->hostname), 32,
				  in->host, sizeof(in->host));
	/* A view naming no exited field reads no exited table (exitsum.h):
	 * whether CAND had a listener is its plugins' to say. */
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap[1]);
	in->exits = ex->present;
	for (size_t i = 0; i < ctp_snap_n_plugins(snap[1]); i++)
		in->exits |= p[i].exited;
	in->exited = ex->present ? ex->tasks : SIZE_MAX;
	in->denied = 0;
	for (size_t i = 0; i < rf->n_files; i++)
		in->denied += rf->denied[i];
	int c = sort ? ctp_view_col_find(v, sort) : -1;
	snprintf(in->sort, sizeof(in->sort), "%s",
		 v->full ? "" : v->cols[c >= 0 ? (size_t)c : v->sort].label);
}

int ctp_compare_view(const struct ctp_compare_view_args *a)
{
	struct ctp_view *v = NULL;
	struct ctp_snap *snap[2] = {NULL, NULL};
	struct ctp_interval *iv = NULL;
	struct ctp_exit_sum ex = {0};
	FILE *out = a->out ? a->out : stdout, *log = a->log ? a->log : stderr;
	char err[4096];
	int rc = CTP_EXIT_FAILURE;
	int r = ctp_view_find(a->view ? a->view : "top", &v, err, sizeof(err));
	if (r < 0) {
		if (!a->view)
			return -ENOENT; /* the caller shows everything */
		fprintf(log, PROG ": %s%s\n", err,
			r == -ENOENT ? " (`ctprof-core views` lists them)"
				     : "");
		return CTP_EXIT_USAGE;
	}
	for (int k = 0; k < 2; k++)
		if (ctp_snap_open(a->paths[k], a->cap, &snap[k], err,
				  sizeof(err)) < 0) {
			fprintf(log, PROG ": %s\n", err);
			goto out;
		}
	if (exited_of((const struct ctp_snap *const *)snap, a->paths, a->cap, v,
		      log, &ex) < 0 ||
	    ctp_interval_new(snap[0], snap[1], ex.present ? &ex : NULL, &iv) <
		    0) {
		fprintf(log, PROG ": out of memory\n");
		goto out;
	}
	const struct ctp_ident *id = ctp_interval_ident(iv);
	double s = ctp_interval_seconds(iv);
	size_t w = a->width, h = a->height, lines = 0, tw, th;
	if (!w || !h) {
		ctp_readcli_term(&tw, &th);
		w = w ? w : tw;
		h = h ? h : th;
	}
	size_t top = ctp_view_fit_rows(v, h, a->brief ? 2 : 3,
				       a->height ? &lines : NULL);
	struct ctp_view_opts vo = {
		.width = a->wide ? 0 : w,
		.top = a->top_set ? a->top : top,
		.sort = a->sort,
		.asc = a->asc,
		.group_by = a->group_by,
		.no_normalize = a->no_normalize,
		.want = a->want,
		.want_arg = a->want_arg,
		.interval = iv,
		.rename = a->rename,
		.color = out == stdout && ctp_color_for(STDOUT_FILENO),
		.filter = a->filter,
		.lines = a->height ? lines : 0,
	};
	if (a->info)
		fill_info(a->info, snap, s, &ex, v, a->sort);
	if (!a->brief) {
		side_line(out, "BASE", snap[0], a->paths[0], vo.width);
		side_line(out, "CAND", snap[1], a->paths[1], vo.width);
	}
	/* top's header says the interval: a line of its screen saved, unless
	 * something is wrong with it. */
	if (!a->brief || s <= 0 || !id->ok) {
		if (s > 0)
			fprintf(out, "%.2f s apart (%s)", s, id->clock);
		else
			fprintf(out, "no interval: CAND was not captured "
				     "after BASE; no rates");
		fprintf(out, "%s%s\n", id->ok ? "" : "; no task identity: ",
			id->ok ? "" : id->why);
	}
	struct ctp_coverage cov;
	if (ctp_coverage_compute(iv, v, &cov) == 0) {
		vo.host_cpu_s = cov.ok ? cov.host : -1;
		ctp_coverage_print(out, &cov, vo.width);
		ctp_coverage_free(&cov);
	}
	fputc('\n', out);
	r = ctp_view_show(out, snap[1], v, &vo, err, sizeof(err));
	if (r < 0) {
		fprintf(log, PROG ": %s\n", r == -EINVAL ? err : strerror(-r));
		rc = r == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
		goto out;
	}
	ctp_exit_sum_print(out, &ex, s, vo.top, vo.width);
	rc = fflush(out) == 0 ? CTP_EXIT_OK : CTP_EXIT_FAILURE;
out:
	ctp_interval_free(iv);
	ctp_exit_sum_free(&ex);
	ctp_snap_free(snap[0]);
	ctp_snap_free(snap[1]);
	ctp_view_free(v);
	return rc;
}
