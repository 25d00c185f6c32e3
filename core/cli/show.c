/* SPDX-License-Identifier: MIT */
/* `ctprof-core show`: a snapshot rendered for humans. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "cli.h"
#include "column.h"
#include "flat.h"
#include "group.h"
#include "readcli.h"
#include "recdir.h"
#include "reader.h"
#include "render.h"
#include "table.h"
#include "view.h"
#include "viewshow.h"
#include "term.h"

#define DEFAULT_LIMIT 50

struct opts {
	struct ctp_readopts r; /* --fields, --limit, --sort, --group-by... */
	bool summary, no_host, threads, processes;
	const char *path;
	/* Views (docs/VIEWS.md): --view NAME, --top N, --wide, --asc. */
	const char *view;
	uint64_t top;
	bool top_set, wide;
	int asc; /* -1: the view's order */
	/* --format (0: table, else enum ctp_flat_format) and --table (a
	 * scope); the default --limit is 50 rows only for table. */
	uint8_t format, table;
	bool table_given;
};

/* ---- Sections ---- */

static bool selected(const struct opts *o, const struct ctp_snap_field *f)
{
	return ctp_readopts_selected(&o->r, f->name);
}

static void print_header(const char *path, const struct ctp_snap *snap)
{
	const struct ctp_snap_header *h = ctp_snap_header(snap);
	char a[64], b[64], d[64], esc[512];

	printf("Snapshot:  %s (format version %" PRIu64 ", %zu bytes "
	       "decompressed)\n",
	       ctp_render_escape(path, strlen(path), 200, esc, sizeof(esc)),
	       h->version, ctp_snap_raw_size(snap));
	printf("Tool:      %s %s\n", *h->tool_name ? h->tool_name : "?",
	       *h->tool_version ? h->tool_version : "?");
	ctp_render_time(h->start_realtime_ns, a, sizeof(a));
	ctp_render_time(h->end_realtime_ns, b, sizeof(b));
	ctp_render_mag(d, sizeof(d), h->duration_ns, CTP_UNIT_NS);
	printf("Captured:  %s .. %s (%s, %" PRIu64 " workers)\n", a, b, d,
	       h->workers);
	if (h->hostname)
		printf("Host:      %s\n",
		       ctp_render_escape(h->hostname, strlen(h->hostname), 200,
					 esc, sizeof(esc)));
	if (h->kernel_release)
		printf("Kernel:    %s\n",
		       ctp_render_escape(h->kernel_release,
					 strlen(h->kernel_release), 200, esc,
					 sizeof(esc)));
	printf("Roots:     proc=%s sys=%s cgroup=%s\n",
	       h->proc_root ? h->proc_root : "-",
	       h->sys_root ? h->sys_root : "-",
	       h->cgroup_root ? h->cgroup_root : "-");
	if (h->config_path)
		printf("Config:    %s\n", h->config_path);
	/* Only when a walk source was loaded: absent, the proc root. The
	 * processes its list lacked, when the proc root's listing found
	 * some (none, or not listed: the source called its list complete). */
	if (h->walk_source && h->walk_unlisted)
		printf("Walk:      from walk source %s (%" PRIu64
		       " more processes from %s)\n",
		       ctp_render_escape(h->walk_source, strlen(h->walk_source),
					 200, esc, sizeof(esc)),
		       h->walk_unlisted, h->proc_root ? h->proc_root : "-");
	else if (h->walk_source)
		printf("Walk:      from walk source %s\n",
		       ctp_render_escape(h->walk_source, strlen(h->walk_source),
					 200, esc, sizeof(esc)));
	else if (h->walk_fallback)
		printf("Walk:      %s (%s; %" PRIu64 " captures so far)\n",
		       h->proc_root ? h->proc_root : "-",
		       ctp_render_escape(h->walk_fallback,
					 strlen(h->walk_fallback), 200, esc,
					 sizeof(esc)),
		       h->walk_fallbacks);
}

struct column {
	const char *title;
	bool right;
	const struct ctp_snap_field *field; /* NULL: identity */
};

/* A table of these columns; NULL when out of memory. */
static struct ctp_table *grid(const struct column *cols, size_t ncols)
{
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	for (size_t c = 0; t && c < ncols; c++)
		if (ctp_table_add_col(t, cols[c].title,
				      cols[c].right ? CTP_TABLE_RIGHT : 0) <
		    0) {
			ctp_table_free(t);
			return NULL;
		}
	return t;
}

/* The table as text, each column as wide as its widest cell. */
static void print_grid(struct ctp_table *t)
{
	ctp_table_fit(t, 0, NULL);
	ctp_table_print(t, stdout, false);
}

static int cmp_field_name(const void *a, const void *b)
{
	return strcmp((*(const struct ctp_snap_field *const *)a)->name,
		      (*(const struct ctp_snap_field *const *)b)->name);
}

/* Host values sorted by field name: registration order depends on plugin
 * order and on when open key sets were met, so it is not stable across
 * snapshots worth comparing by eye. */
static void print_host(const struct ctp_snap *snap, const struct opts *o)
{
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t nf = ctp_snap_n_fields(snap), n = 0;
	char buf[1024];
	static const struct column cols[] = {{"FIELD", false, NULL},
					     {"VALUE", false, NULL}};
	struct ctp_table *t = grid(cols, 2);
	const struct ctp_snap_field **hf = malloc((nf ? nf : 1) * sizeof(*hf));
	int r = t && hf ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < nf; i++)
		if (fs[i].scope == CTP_SCOPE_HOST && selected(o, &fs[i]))
			hf[n++] = &fs[i];
	if (n)
		qsort(hf, n, sizeof(*hf), cmp_field_name);
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct ctp_value v = ctp_snap_value(snap, hf[i], 0);
		ctp_render_value(hf[i]->unit, &v, buf, sizeof(buf));
		if ((r = ctp_table_text(t, hf[i]->name)) == 0)
			r = ctp_table_text(t, buf);
	}
	if (r < 0) {
		fprintf(stderr, "ctprof-core: show: out of memory\n");
	} else if (n) {
		printf("\nHost values:\n");
		ctp_table_headless(t);
		print_grid(t);
	}
	ctp_table_free(t);
	free(hf);
}

/* What a plugin's row says after its status: for a loaded one its
 * version, time, calls and summary counters; why it failed; [required]. */
static void plugin_text(const struct ctp_snap_plugin *p, char *line,
			size_t size)
{
	char t[64], esc[512];
	size_t o = 0;
	line[0] = '\0';
	if (p->status == 1) {
		ctp_render_mag(t, sizeof(t), p->time_ns, CTP_UNIT_NS);
		o += (size_t)snprintf(line + o, size - o,
				      "%s, %s, %" PRIu64 " calls, %" PRIu64
				      " errors, %" PRIu64 " vanished",
				      p->version ? p->version : "?", t,
				      p->calls, p->errors, p->vanished);
		if (p->resource)
			o += (size_t)snprintf(line + o, size - o,
					      ", %" PRIu64
					      " short of resources",
					      p->resource);
		for (size_t s = 0; s < p->n_summary && o < size; s++)
			o += (size_t)snprintf(line + o, size - o,
					      "%s%s=%" PRIu64, s ? " " : "; ",
					      p->summary_name[s],
					      p->summary[s]);
	}
	if (p->reason && o < size)
		o += (size_t)snprintf(
			line + o, size - o, "%s(%s)", o ? " " : "",
			ctp_render_escape(p->reason, strlen(p->reason), 400,
					  esc, sizeof(esc)));
	if (p->required && o < size)
		snprintf(line + o, size - o, "%s[required]", o ? " " : "");
}

/* A plugin's hint: on a row of its own, "hint: " in the status column and
 * the text hanging under itself. */
static const char hint_label[] = "hint: ";
static int hint_row(struct ctp_table *t, const char *hint)
{
	char esc[512];
	int r = ctp_table_text(t, "");
	if (r == 0)
		r = ctp_table_textf(t, "%s%s", hint_label,
				    ctp_render_escape(hint, strlen(hint), 400,
						      esc, sizeof(esc)));
	return r == 0 ? ctp_table_absent(t) : r;
}

/* Each plugin: its name, status and what it says, then its hint. The text
 * wraps on a screen whose width is known; to a pipe it is one greppable
 * line per plugin. */
static void print_plugins(const struct ctp_snap *snap)
{
	static const struct ctp_table_col cols[] = {
		{"PLUGIN", 0, 0, 0},
		{"STATUS", CTP_TABLE_OVERFLOW | CTP_TABLE_WRAP, 8,
		 sizeof(hint_label) - 1},
		{"TEXT", CTP_TABLE_WRAP, 0, 0}};
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	size_t np = ctp_snap_n_plugins(snap), width = 0, height;
	char line[8192];
	if (getenv("COLUMNS") || isatty(STDOUT_FILENO))
		ctp_readcli_term(&width, &height);
	struct ctp_table *t = ctp_table_new_cols(CTP_TABLE_GRID, cols, 3);
	int r = t ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < np; i++) {
		const char *st = ctp_status_name(p[i].status);
		plugin_text(&p[i], line, sizeof(line));
		const char *const row[] = {p[i].name, st ? st : "unknown",
					   line};
		r = ctp_table_texts(t, row, 3);
		if (r == 0 && p[i].hint)
			r = hint_row(t, p[i].hint);
	}
	printf("\nPlugins:%s\n", np ? "" : " none");
	if (r < 0) {
		fprintf(stderr, "ctprof-core: show: out of memory\n");
	} else {
		ctp_table_headless(t);
		ctp_table_fit(t, width, NULL);
		ctp_table_print(t, stdout, false);
	}
	ctp_table_free(t);
}

/*
 * Files that exist only with a kernel option (ctp_api.file_gate): when such
 * files were *missing* (ENOENT, read_failures.missing) for half or more of
 * all read failures, the likeliest cause is a kernel built without the
 * option, so say so, naming each option once with its missing files.
 * Permission errors on a gated file do not count: they say nothing about
 * the kernel's configuration.
 */
static void print_gate_hint(const struct ctp_snap_readfail *rf)
{
	uint64_t total = 0, gated = 0;
	size_t nopts = 0;

	for (size_t i = 0; i < rf->n_files; i++) {
		total += rf->failures[i];
		if (rf->gate[i])
			gated += rf->missing[i];
	}
	if (!gated || gated < total - gated)
		return;
	printf("  hint: %" PRIu64 " of %" PRIu64
	       " read failures are missing files that exist only with ",
	       gated, total);
	for (size_t i = 0; i < rf->n_files; i++) {
		const char *opt = rf->gate[i];
		size_t j;
		if (!opt || !rf->missing[i])
			continue;
		for (j = 0; j < i; j++)
			if (rf->gate[j] && rf->missing[j] &&
			    strcmp(rf->gate[j], opt) == 0)
				break;
		if (j < i)
			continue; /* named with its first file */
		printf("%s%s (", nopts++ ? " / " : "", opt);
		for (j = i; j < rf->n_files; j++)
			if (rf->gate[j] && rf->missing[j] &&
			    strcmp(rf->gate[j], opt) == 0)
				printf("%s%s", j > i ? ", " : "", rf->file[j]);
		putchar(')');
	}
	printf("; this kernel was probably built without %s\n",
	       nopts > 1 ? "them" : "it");
}

/*
 * Permission denials (EACCES/EPERM, read_failures.denied): when they are
 * half or more of all read failures, the capture ran without the right to
 * read other users' tasks (io and smaps_rollup need ptrace read access:
 * root, CAP_SYS_PTRACE or the same user), so say so, naming the files.
 */
static void print_denied_hint(const struct ctp_snap_readfail *rf,
			      int ptrace_capable)
{
	uint64_t total = 0, denied = 0;
	size_t n = 0;

	for (size_t i = 0; i < rf->n_files; i++) {
		total += rf->failures[i];
		denied += rf->denied[i];
	}
	if (!denied || denied < total - denied)
		return;
	printf("  hint: %" PRIu64 " of %" PRIu64
	       " read failures were permission denied (",
	       denied, total);
	for (size_t i = 0; i < rf->n_files; i++)
		if (rf->denied[i])
			printf("%s%s %" PRIu64, n++ ? ", " : "", rf->file[i],
			       rf->denied[i]);
	if (ptrace_capable == 1)
		printf("): the capture held CAP_SYS_PTRACE, so these "
		       "processes refuse access themselves (another user "
		       "namespace's, an LSM, or kernel.yama.ptrace_scope 3); "
		       "no privilege fixes this\n");
	else if (ptrace_capable == 0)
		printf("): reading other users' tasks' files such as io and "
		       "smaps_rollup needs root or CAP_SYS_PTRACE; run the "
		       "capture as root\n");
	else
		printf("): other users' tasks' files such as io and "
		       "smaps_rollup need root or CAP_SYS_PTRACE (or their "
		       "processes refuse even those)\n");
}

/*
 * Resource errors (read_failures.*_unread_resource, .resource,
 * plugins[].resource): the collector ran short of descriptors or memory,
 * so the snapshot misses what it could not read, whatever the host did.
 */
static void print_resource_note(const struct ctp_snap *snap)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	uint64_t files = 0, calls = 0;
	for (size_t i = 0; i < rf->n_files; i++)
		files += rf->resource[i];
	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		calls += p[i].resource;
	const uint64_t n[] = {rf->tgids_unread_resource,
			      rf->tids_unread_resource,
			      rf->cgroups_unread_resource, files, calls};
	const uint64_t of[] = {rf->tgids_walked, rf->tids_walked, 0, 0, 0};
	static const char *const what[] = {
		"processes unread", "threads unread", "cgroups unread",
		"file reads failed", "plugin calls failed"};
	const char *sep = "  short of resources: ";
	for (size_t k = 0; k < 5; k++) {
		if (!n[k])
			continue;
		printf("%s%" PRIu64, sep, n[k]);
		if (of[k])
			printf(" of %" PRIu64, of[k]);
		printf(" %s", what[k]);
		sep = ", ";
	}
	if (*sep != ',')
		return;
	char esc[128];
	if (rf->resource_error)
		printf(" (%s)", ctp_render_escape(rf->resource_error,
						  strlen(rf->resource_error),
						  32, esc, sizeof(esc)));
	if (rf->nofile_limit)
		printf("; descriptor limit %" PRIu64, rf->nofile_limit);
	printf("\n");
}

static void print_readfail(const struct ctp_snap *snap)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	printf("\nRead failures: %" PRIu64 " threads walked, %" PRIu64
	       " recorded, %" PRIu64 " vanished; %" PRIu64
	       " processes walked, %" PRIu64 " vanished\n",
	       rf->tids_walked, rf->tids_recorded, rf->tids_vanished,
	       rf->tgids_walked, rf->tgids_vanished);
	printf("  per file:");
	if (!rf->n_files)
		printf(" none");
	for (size_t i = 0; i < rf->n_files; i++) {
		printf("%s %s %" PRIu64, i ? "," : "", rf->file[i],
		       rf->failures[i]);
		const uint64_t part[] = {rf->missing[i], rf->denied[i],
					 rf->resource[i]};
		static const char *const what[] = {"missing", "denied",
						   "short of resources"};
		const char *sep = " (";
		for (size_t k = 0; k < 3; k++) {
			if (!part[k])
				continue;
			printf("%s%" PRIu64 " %s", sep, part[k], what[k]);
			sep = ", ";
		}
		if (*sep == ',')
			putchar(')');
	}
	printf("; dominant: %s\n",
	       rf->dominant_file ? rf->dominant_file : "none");
	print_resource_note(snap);
	print_gate_hint(rf);
	print_denied_hint(rf, ctp_snap_header(snap)->ptrace_capable);
}

/* One line on the exited table, when the snapshot has one: how many tasks
 * exited since the last snapshot, and how many each plugin says it missed
 * (FORMAT.md §7.4). */
static void print_exited(const struct ctp_snap *snap)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_EXITED);
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	bool any = t->rows > 0;
	size_t n = 0;

	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		any |= p[i].exited;
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
		any |= fs[i].scope == CTP_SCOPE_EXITED;
	if (!any)
		return;
	printf("\nExited: %zu task%s exited since the last snapshot; lost:",
	       t->rows, t->rows == 1 ? "" : "s");
	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		if (p[i].exited)
			printf("%s %s %" PRIu64, n++ ? "," : "", p[i].name,
			       p[i].exited_lost);
	printf("%s\n", n ? "" : " none reported");
}

/* ---- Tables ---- */

struct sortctx {
	const struct ctp_value *col;
};

/* Descending, absent last, ties in file order. */
static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct sortctx *s = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct ctp_value *va = &s->col[a], *vb = &s->col[b];
	bool pa_ = va->type != CTP_VALUE_ABSENT,
	     pb_ = vb->type != CTP_VALUE_ABSENT;
	if (pa_ != pb_)
		return pa_ ? -1 : 1;
	if (pa_) {
		int c = ctp_value_cmp(va, vb);
		if (c)
			return -c;
	}
	return (a > b) - (a < b);
}

/* An identity cell (TGID, TID, THREADS, COMM, CGROUP) of `row`. */
static void ident_cell(const struct ctp_snap *snap, uint8_t scope,
		       const char *title, size_t row, char *buf, size_t len)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, scope);
	const struct ctp_snap_table *cgt =
		ctp_snap_table(snap, CTP_SCOPE_CGROUP);
	const struct ctp_bytes *b = NULL;
	if (!strcmp(title, "TGID")) {
		snprintf(buf, len, "%" PRIu64, t->tgid[row]);
		return;
	}
	if (!strcmp(title, "TID")) {
		snprintf(buf, len, "%" PRIu64, t->tid[row]);
		return;
	}
	if (!strcmp(title, "THREADS")) {
		snprintf(buf, len, "%" PRIu64, t->nthreads[row]);
		return;
	}
	if (!strcmp(title, "COMM"))
		b = &t->comm[row];
	else if (scope == CTP_SCOPE_CGROUP) /* CGROUP: the row's own */
		b = &t->path[row];
	else if (t->cgroup[row] >= 0) /* CGROUP: the thread's */
		b = &cgt->path[t->cgroup[row]];
	if (b && b->ptr)
		ctp_render_escape(b->ptr, b->len, CTP_RENDER_CELL_MAX, buf,
				  len);
	else
		snprintf(buf, len, "-");
}

/* The identity columns of a scope's table, then its selected fields.
 * NULL when short of memory. */
static struct column *table_columns(const struct ctp_snap *snap,
				    const struct opts *o, uint8_t scope,
				    size_t *ncols)
{
	static const struct column thread_ident[] = {{"TGID", true},
						     {"TID", true},
						     {"COMM", false},
						     {"CGROUP", false}};
	static const struct column proc_ident[] = {
		{"TGID", true}, {"COMM", false}, {"THREADS", true}};
	static const struct column cg_ident[] = {{"CGROUP", false}};
	const struct column *ident = scope == CTP_SCOPE_THREAD	  ? thread_ident
				     : scope == CTP_SCOPE_PROCESS ? proc_ident
								  : cg_ident;
	size_t nident = scope == CTP_SCOPE_THREAD    ? 4
			: scope == CTP_SCOPE_PROCESS ? 3
						     : 1;
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t nf = ctp_snap_n_fields(snap), n = 0;
	struct column *cols = calloc(nident + nf, sizeof(*cols));
	if (!cols)
		return NULL;
	for (size_t i = 0; i < nident; i++)
		cols[n++] = ident[i];
	for (size_t i = 0; i < nf; i++)
		if (fs[i].scope == scope && selected(o, &fs[i]))
			cols[n++] = (struct column){
				fs[i].name,
				fs[i].type == CTP_TYPE_U64 ||
					fs[i].type == CTP_TYPE_I64,
				&fs[i]};
	*ncols = n;
	return cols;
}

/* Rows of table t in display order: by sortf's values, descending, when
 * given (a derived field's computed into *dcol, which the caller frees).
 * Returns 0 or -ENOMEM. */
static int sort_rows(const struct ctp_snap *snap,
		     const struct ctp_snap_table *t,
		     const struct ctp_snap_field *sortf, size_t *order,
		     struct ctp_value **dcol)
{
	for (size_t i = 0; i < t->rows; i++)
		order[i] = i;
	const struct ctp_value *scol = sortf ? t->col[sortf->index] : NULL;
	if (sortf && sortf->n_terms) {
		/* Computed once, in the snapshot's column. */
		const struct ctp_col *c = ctp_snap_col(snap, sortf);
		*dcol = c ? malloc((t->rows ? t->rows : 1) * sizeof(**dcol))
			  : NULL;
		if (!*dcol)
			return -ENOMEM;
		for (size_t i = 0; i < t->rows; i++)
			(*dcol)[i] = ctp_col_value(c, i);
		scol = *dcol;
	}
	if (scol) {
		struct sortctx sc = {scol};
		qsort_r(order, t->rows, sizeof(*order), cmp_rows, &sc);
	}
	return 0;
}

/* With --fields, the rows worth a line: those with a value of at least one
 * selected field (a thread that publishes nothing has no app.* value). The
 * kept rows stay in order at the front of order[]; returns how many. */
static size_t keep_rows_with_fields(const struct ctp_snap *snap,
				    const struct column *cols, size_t ncols,
				    size_t *order, size_t n)
{
	size_t kept = 0;

	for (size_t r = 0; r < n; r++) {
		bool any = false;

		for (size_t c = 0; c < ncols && !any; c++)
			any = cols[c].field &&
			      ctp_snap_value(snap, cols[c].field, order[r])
					      .type != CTP_VALUE_ABSENT;
		if (any)
			order[kept++] = order[r];
	}
	return kept;
}

/* One scope's table, row by row: identity columns, then every selected
 * field, sorted and limited as asked (with --fields, only rows that have
 * one of them). Returns 0 or -ENOMEM. */
static int print_table(const struct ctp_snap *snap, const struct opts *o,
		       uint8_t scope, const char *title)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, scope);
	const struct ctp_snap_field *sortf =
		o->r.sort ? ctp_snap_field_find(snap, o->r.sort) : NULL;
	size_t ncols = 0, shown = 0;
	struct ctp_table *grd = NULL;
	struct ctp_value *dcol = NULL; /* a derived sort field's values */
	int ret = -ENOMEM;

	if (sortf && sortf->scope != scope)
		sortf = NULL;
	struct column *cols = table_columns(snap, o, scope, &ncols);
	size_t *order = malloc((t->rows ? t->rows : 1) * sizeof(*order));
	if (!cols || !order || sort_rows(snap, t, sortf, order, &dcol) < 0)
		goto out;
	size_t kept = t->rows;
	if (o->r.n_globs)
		kept = keep_rows_with_fields(snap, cols, ncols, order, t->rows);
	shown = o->r.limit && o->r.limit < kept ? (size_t)o->r.limit : kept;
	printf("\n%s: %zu", title, t->rows);
	if (kept < t->rows)
		printf(", %zu with none of these fields left out",
		       t->rows - kept);
	if (shown < kept)
		printf(", showing %zu", shown);
	if (sortf)
		printf(", by %s (descending, absent last)", sortf->name);
	printf("\n");
	if (!shown) {
		ret = 0;
		goto out;
	}
	if (!(grd = grid(cols, ncols)))
		goto out;
	for (size_t r = 0; r < shown; r++) {
		for (size_t c = 0; c < ncols; c++) {
			char buf[256];
			if (cols[c].field) {
				struct ctp_value v = ctp_snap_value(
					snap, cols[c].field, order[r]);
				ctp_render_value(cols[c].field->unit, &v, buf,
						 sizeof(buf));
			} else {
				ident_cell(snap, scope, cols[c].title, order[r],
					   buf, sizeof(buf));
			}
			if (ctp_table_text(grd, buf) < 0)
				goto out;
		}
	}
	print_grid(grd);
	ret = 0;
out:
	ctp_table_free(grd);
	free(cols);
	free(order);
	free(dcol);
	return ret;
}

/* ---- Grouped tables (--group-by) ---- */

struct gsortctx {
	const struct ctp_agg *col;
};

/* Descending, absent last, ties in key order. */
static int cmp_groups(const void *pa, const void *pb, void *arg)
{
	const struct gsortctx *s = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = ctp_agg_cmp(&s->col[a], &s->col[b]);
	if (c)
		return -c;
	return (a > b) - (a < b);
}

/*
 * The name a table grouped by ids shows beside them (COMMAND, as ps): the
 * thread's with a tid axis, else the process's with a pid axis; none when
 * an axis already names the groups. 0, or the scope of the name.
 */
static uint8_t command_scope(const struct ctp_group_spec *s)
{
	uint8_t scope = 0;
	for (size_t i = 0; i < s->n_axes; i++) {
		if (s->axes[i] == CTP_AXIS_PCOMM ||
		    s->axes[i] == CTP_AXIS_COMM || s->axes[i] == CTP_AXIS_NONE)
			return 0;
		if (s->axes[i] == CTP_AXIS_TID)
			scope = CTP_SCOPE_THREAD;
		else if (s->axes[i] == CTP_AXIS_PID && !scope)
			scope = CTP_SCOPE_PROCESS;
	}
	return scope;
}

/* A group's COMMAND: the name of its first row of `scope` (a pid or tid
 * group has one). */
static void command_cell(const struct ctp_snap *snap,
			 const struct ctp_group *gr, uint8_t scope, char *buf,
			 size_t len)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, scope);
	bool thread = scope == CTP_SCOPE_THREAD;
	uint32_t n = thread ? gr->n_threads : gr->n_processes;
	const struct ctp_bytes *b =
		t && n ? &t->comm[thread ? gr->threads[0] : gr->processes[0]]
		       : NULL;
	if (b && b->ptr)
		ctp_render_escape(b->ptr, b->len, CTP_RENDER_CELL_MAX, buf,
				  len);
	else
		snprintf(buf, len, "-");
}

/* The key parts, COMMAND when the keys are ids (command_scope), THREADS,
 * PROCS, then every selected field of `scope` (its aggregate over the
 * groups into aggs[field index]). */
static int grouped_columns(struct ctp_groups *g, const struct opts *o,
			   uint8_t scope, struct column *cols, size_t *ncols,
			   const struct ctp_agg **aggs)
{
	const struct ctp_snap *snap = ctp_groups_snap(g);
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	size_t nf = ctp_snap_n_fields(snap), nk = ctp_groups_n_key(g), n = 0;
	int ret;

	for (size_t k = 0; k < nk; k++)
		cols[n++] = (struct column){ctp_groups_key_title(g, k), false,
					    NULL};
	if (command_scope(&o->r.spec))
		cols[n++] = (struct column){"COMMAND", false, NULL};
	cols[n++] = (struct column){"THREADS", true, NULL};
	cols[n++] = (struct column){"PROCS", true, NULL};
	for (size_t i = 0; i < nf; i++) {
		if (fs[i].scope != scope || !selected(o, &fs[i]))
			continue;
		if ((ret = ctp_groups_aggregate(g, &fs[i], &aggs[i])) < 0)
			return ret;
		cols[n++] = (struct column){fs[i].name,
					    fs[i].type == CTP_TYPE_U64 ||
						    fs[i].type == CTP_TYPE_I64,
					    &fs[i]};
	}
	*ncols = n;
	return 0;
}

/* The groups' order (by the sort field's aggregate when there is one) and
 * how many rows of `scope` they hold. */
static int grouped_order(struct ctp_groups *g, uint8_t scope,
			 const struct ctp_snap_field *sortf, size_t *order,
			 uint64_t *rows)
{
	size_t ng = ctp_groups_count(g);
	const struct ctp_agg *col;
	int ret;

	*rows = 0;
	for (size_t i = 0; i < ng; i++) {
		const struct ctp_group *gr = ctp_groups_at(g, i);
		order[i] = i;
		*rows += scope == CTP_SCOPE_THREAD    ? gr->n_threads
			 : scope == CTP_SCOPE_PROCESS ? gr->n_processes
						      : gr->n_cgroups;
	}
	if (!sortf)
		return 0;
	if ((ret = ctp_groups_aggregate(g, sortf, &col)) < 0)
		return ret;
	struct gsortctx sc = {col};
	qsort_r(order, ng, sizeof(*order), cmp_groups, &sc);
	return 0;
}

/* One cell of group gr (the order[r]-th group) in column c; cmd: the
 * COMMAND column's scope, 0 without one. */
static void grouped_cell(struct ctp_groups *g, const struct ctp_group *gr,
			 size_t gi, size_t c, uint8_t cmd,
			 const struct column *cols, const struct ctp_agg **aggs,
			 char *buf, size_t len)
{
	size_t nk = ctp_groups_n_key(g), nx = nk + (cmd != 0);
	if (c < nk && gr->key[c])
		ctp_render_escape(gr->key[c], strlen(gr->key[c]),
				  CTP_RENDER_CELL_MAX, buf, len);
	else if (c < nk)
		snprintf(buf, len, "-");
	else if (c < nx)
		command_cell(ctp_groups_snap(g), gr, cmd, buf, len);
	else if (c == nx)
		snprintf(buf, len, "%" PRIu32, gr->n_threads);
	else if (c == nx + 1)
		snprintf(buf, len, "%" PRIu32, gr->n_processes);
	else
		ctp_render_agg_cell(cols[c].field->unit,
				    &aggs[cols[c].field->index][gi], buf, len);
}

/* Every shown cell into t. */
static int grouped_cells(struct ctp_groups *g, const size_t *order,
			 size_t shown, uint8_t cmd, const struct column *cols,
			 size_t ncols, const struct ctp_agg **aggs,
			 struct ctp_table *t)
{
	for (size_t r = 0; r < shown; r++) {
		const struct ctp_group *gr = ctp_groups_at(g, order[r]);
		for (size_t c = 0; c < ncols; c++) {
			char buf[512];
			grouped_cell(g, gr, order[r], c, cmd, cols, aggs, buf,
				     sizeof(buf));
			if (ctp_table_text(t, buf) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* keep_rows_with_fields for groups: those where some member had one of
 * the selected fields. */
static size_t keep_groups_with_fields(const struct column *cols, size_t ncols,
				      const struct ctp_agg **aggs,
				      size_t *order, size_t ng)
{
	size_t kept = 0;

	for (size_t i = 0; i < ng; i++) {
		bool any = false;

		for (size_t c = 0; c < ncols && !any; c++)
			any = cols[c].field &&
			      aggs[cols[c].field->index][order[i]].n_measured;
		if (any)
			order[kept++] = order[i];
	}
	return kept;
}

static void grouped_title(const struct opts *o, const char *title,
			  uint8_t scope, size_t ng, uint64_t rows, size_t kept,
			  size_t shown, const struct ctp_snap_field *sortf)
{
	printf("\n%s grouped by %s: %zu groups of %" PRIu64 " %s", title,
	       o->r.group_by, ng, rows,
	       scope == CTP_SCOPE_THREAD    ? "threads"
	       : scope == CTP_SCOPE_PROCESS ? "processes"
					    : "cgroups");
	if (kept < ng)
		printf(", %zu with none of these fields left out", ng - kept);
	if (shown < kept)
		printf(", showing %zu", shown);
	if (sortf)
		printf(", by %s (descending, absent last)", sortf->name);
	printf("\n");
}

/*
 * One table of groups: the key parts, THREADS, PROCS, then the aggregate of
 * every selected field of `scope` with "(k/n)" when only k of the group's n
 * rows of that scope had it.
 */
static int print_grouped(struct ctp_groups *g, const struct opts *o,
			 uint8_t scope, const char *title)
{
	const struct ctp_snap *snap = ctp_groups_snap(g);
	size_t nf = ctp_snap_n_fields(snap), ng = ctp_groups_count(g);
	size_t nk = ctp_groups_n_key(g), ncols = 0, shown = 0;
	const struct ctp_snap_field *sortf =
		o->r.sort ? ctp_snap_field_find(snap, o->r.sort) : NULL;
	struct column *cols = calloc(nk + 3 + nf, sizeof(*cols));
	const struct ctp_agg **aggs = calloc(nf + 1, sizeof(*aggs));
	size_t *order = malloc((ng ? ng : 1) * sizeof(*order));
	struct ctp_table *t = NULL;
	uint64_t rows = 0;
	int ret = -ENOMEM;

	if (!cols || !aggs || !order)
		goto out;
	if (sortf && sortf->scope != scope)
		sortf = NULL;
	if ((ret = grouped_columns(g, o, scope, cols, &ncols, aggs)) < 0 ||
	    (ret = grouped_order(g, scope, sortf, order, &rows)) < 0)
		goto out;
	size_t kept = ng;
	if (o->r.n_globs)
		kept = keep_groups_with_fields(cols, ncols, aggs, order, ng);
	shown = o->r.limit && o->r.limit < kept ? (size_t)o->r.limit : kept;
	grouped_title(o, title, scope, ng, rows, kept, shown, sortf);
	if (!shown)
		goto out;
	ret = -ENOMEM;
	if (!(t = grid(cols, ncols)) ||
	    (ret = grouped_cells(g, order, shown, command_scope(&o->r.spec),
				 cols, ncols, aggs, t)) < 0)
		goto out;
	print_grid(t);
out:
	ctp_table_free(t);
	free(cols);
	free(aggs);
	free(order);
	return ret;
}

static bool has_cgroup_axis(const struct ctp_group_spec *s)
{
	for (size_t i = 0; i < s->n_axes; i++)
		if (s->axes[i] == CTP_AXIS_CGROUP ||
		    s->axes[i] == CTP_AXIS_CGROUP_V1)
			return true;
	return false;
}

/* ---- Command ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ctprof-core show FILE [options]\n"
		"Show the snapshot FILE (\"-\" for stdin; a recording's "
		"directory: its latest).\nBy default the "
		"`top` view: one\n"
		"header line, then the busiest processes and threads, fitted "
		"to the terminal\n"
		"(docs/VIEWS.md).\n"
		"\n"
		"Views:\n"
		"  --view NAME               top (default), cpu, sched, mem, "
		"io, delay, cgroup,\n"
		"                            jemalloc, all (everything); "
		"`ctprof-core views`\n"
		"  --top N                   rows per section (default: what "
		"fits the\n"
		"                            terminal, else 20; 0 = all)\n"
		"  --sort COLUMN             a column of the view (id or "
		"label: cpu, RSS...)\n"
		"  --asc, --desc             order (default: the view's)\n"
		"  --wide                    every column, whatever the width\n"
		"\n"
		"The full output (--view all, or any of these without "
		"--view):\n"
		"  --summary                 header, plugins, read failures "
		"and counts only\n"
		"  --fields GLOB[,GLOB...]   fields to show (fnmatch globs); "
		"with --view: the\n"
		"                            columns reading a matching field\n"
		"  --limit N                 rows per table (default %d, 0 = "
		"all)\n"
		"  --sort FIELD              a dotted field name: order that "
		"field's table\n"
		"  --threads, --processes    only that table\n"
		"  --no-host                 leave out host values\n"
		"  --group-by AXES           one row per group: pcomm, comm, "
		"cgroup,\n"
		"                            cgroup:HIER, pid, tid, "
		"field:NAME, none, composed\n"
		"                            with ',' (docs/GROUPING.md); with "
		"--view: every\n"
		"                            section's rows\n"
		"  --no-normalize            group by raw names (default: "
		"worker-3 -> worker-{N})\n"
		"  --flatten GLOB            cgroups matching GLOB group as "
		"one (repeatable)\n"
		"\n"
		"Machine-readable:\n"
		"  --format FMT              csv, json, ndjson: one flat, "
		"typed row per row\n"
		"                            or group (table: the default "
		"output)\n"
		"  --table TABLE             threads (default), processes, "
		"cgroups, host,\n"
		"                            exited (tasks that exited since "
		"the last snapshot);\n"
		"                            with --view: the view's fields "
		"as columns\n"
		"\n"
		"  -c, --config FILE         take max_decompressed_bytes from "
		"FILE\n"
		"  --max-decompressed BYTES  refuse snapshots that need more "
		"memory\n"
		"  --color=WHEN              auto (default: on a terminal, "
		"without NO_COLOR),\n"
		"                            always, never\n"
		"  -h, --help                this help\n"
		"\n"
		"Absent values print as '-'. Exit status: 0 ok, 1 unreadable "
		"or corrupt\n"
		"snapshot, 2 usage error.\n",
		DEFAULT_LIMIT);
}

/* --format FMT or --table TABLE into *o. Returns -1 to go on, else the
 * exit status. */
static int flat_option(struct opts *o, bool table, const char *arg)
{
	int v = table			? ctp_flat_table_parse(arg)
		: !strcmp(arg, "table") ? 0
					: ctp_flat_format_parse(arg);
	if (v < 0) {
		fprintf(stderr, "ctprof-core show: unknown %s '%s' (%s)\n",
			table ? "table" : "format", arg,
			table ? "threads, processes, cgroups, host or exited"
			      : "table, csv, json or ndjson");
		return ctp_readcli_try_help("show");
	}
	if (table) {
		o->table = (uint8_t)v;
		o->table_given = true;
	} else {
		o->format = (uint8_t)v;
	}
	return -1;
}

/* Options of one output form used with the other. Returns -1 or
 * CTP_EXIT_USAGE. */
static int flat_conflicts(struct opts *o)
{
	const char *bad =
		!o->format && o->table_given ? "--table needs --format csv, "
					       "json or ndjson"
		: o->format && (o->summary || o->no_host || o->threads ||
				o->processes)
			? "--summary, --no-host, --threads and --processes "
			  "are for --format table (use --table)"
		: o->format && o->r.group_by && o->table == CTP_SCOPE_HOST
			? "--table host has one row: it is not grouped"
		: o->format && o->r.group_by && o->table == CTP_SCOPE_EXITED
			? "--table exited is not grouped"
			: NULL;
	if (!bad) {
		if (!o->table_given)
			o->table = CTP_SCOPE_THREAD;
		if (o->format && !ctp_readopts_given(&o->r, CTP_READOPT_LIMIT))
			o->r.limit = 0;
		return -1;
	}
	fprintf(stderr, "ctprof-core show: %s\n", bad);
	return ctp_readcli_try_help("show");
}

/* A recording's directory as FILE: its latest snapshot. 0, or -1 after a
 * message. */
static int latest_of(struct opts *o)
{
	static char latest[4096];
	return ctp_recdir_latest_of(&o->path, o->r.cap, "ctprof-core show",
				    latest, sizeof(latest));
}

/* show's own option codes (getopt_long). */
enum {
	O_SUMMARY = CTP_READOPT_FIRST_FREE,
	O_THREADS,
	O_PROCESSES,
	O_NO_HOST,
	O_VIEW,
	O_TOP,
	O_WIDE,
	O_ASC,
	O_DESC,
	O_FORMAT,
	O_TABLE,
};

/* One of show's own options into the struct opts at ctx
 * (ctp_readopts_own_fn). */
static int show_option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case O_FORMAT:
	case O_TABLE:
		return flat_option(o, c == O_TABLE, arg);
	case O_SUMMARY:
		o->summary = true;
		return -1;
	case O_THREADS:
		o->threads = true;
		return -1;
	case O_PROCESSES:
		o->processes = true;
		return -1;
	case O_NO_HOST:
		o->no_host = true;
		return -1;
	case O_VIEW:
		o->view = arg;
		return -1;
	case O_TOP:
		if (ctp_parse_u64_str(arg, &o->top) < 0) {
			fprintf(stderr, "ctprof-core show: --top: expected a "
					"count, 0 for all\n");
			return CTP_EXIT_USAGE;
		}
		o->top_set = true;
		return -1;
	case O_WIDE:
		o->wide = true;
		return -1;
	case O_ASC:
	case O_DESC:
		o->asc = c == O_ASC;
		return -1;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	default:
		return ctp_readcli_try_help("show");
	}
}

/* Parse show's command line into *o. Returns -1 to go on, else the exit
 * status to end with (--help, a usage error, out of memory). */
static int parse_show_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		CTP_READOPT_LONGOPTS,
		{"summary", no_argument, NULL, O_SUMMARY},
		{"threads", no_argument, NULL, O_THREADS},
		{"processes", no_argument, NULL, O_PROCESSES},
		{"no-host", no_argument, NULL, O_NO_HOST},
		{"view", required_argument, NULL, O_VIEW},
		{"top", required_argument, NULL, O_TOP},
		{"wide", no_argument, NULL, O_WIDE},
		{"asc", no_argument, NULL, O_ASC},
		{"desc", no_argument, NULL, O_DESC},
		{"format", required_argument, NULL, O_FORMAT},
		{"table", required_argument, NULL, O_TABLE},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *const operands[] = {"FILE"};
	int rc = ctp_readopts_parse("show", &o->r, argc, argv, "hc:", lopts,
				    show_option, o);
	if (rc >= 0)
		return rc;
	rc = ctp_readopts_finish("show", &o->r, argc, argv, 1, operands);
	if (rc < 0)
		o->path = argv[optind];
	if (rc < 0 && latest_of(o) < 0)
		return CTP_EXIT_FAILURE;
	return rc < 0 ? flat_conflicts(o) : rc;
}

/* What --sort and --fields ask of this snapshot. Returns 0, or the exit
 * status after a message. */
static int check_against(const struct ctp_snap *snap, const struct opts *o)
{
	if (o->r.sort) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(snap, o->r.sort);
		if (!f || f->scope == CTP_SCOPE_HOST) {
			fprintf(stderr, "ctprof-core show: --sort %s: %s\n",
				o->r.sort,
				f ? "a host field has one value, nothing "
				    "to sort"
				  : "no such field in this snapshot");
			return CTP_EXIT_USAGE;
		}
	}
	if (o->r.n_globs) {
		size_t hits = 0, nf = ctp_snap_n_fields(snap);
		for (size_t i = 0; i < nf; i++)
			hits += selected(o, &ctp_snap_fields(snap)[i]);
		if (!hits)
			fprintf(stderr, "ctprof-core show: note: --fields "
					"matches no field of this snapshot\n");
	}
	return 0;
}

/* The cgroup, process and thread tables, plain or grouped, as asked.
 * Returns 0 or -ENOMEM. */
static int print_tables(const struct ctp_snap *snap, struct ctp_groups *groups,
			const struct opts *o)
{
	static const struct {
		uint8_t scope;
		const char *title;
	} order[] = {{CTP_SCOPE_CGROUP, "Cgroups"},
		     {CTP_SCOPE_PROCESS, "Processes"},
		     {CTP_SCOPE_THREAD, "Threads"}};
	bool both = !o->threads && !o->processes;
	bool cg = false;
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
		cg |= fs[i].scope == CTP_SCOPE_CGROUP && selected(o, &fs[i]);
	for (size_t i = 0; i < 3; i++) {
		uint8_t scope = order[i].scope;
		bool want = scope == CTP_SCOPE_CGROUP
				    ? both && cg &&
					      (!groups ||
					       has_cgroup_axis(&o->r.spec))
			    : scope == CTP_SCOPE_PROCESS ? both || o->processes
							 : both || o->threads;
		if (!want)
			continue;
		int r = groups ? print_grouped(groups, o, scope, order[i].title)
			       : print_table(snap, o, scope, order[i].title);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The table or groups as flat rows (--format csv, json, ndjson). Returns
 * the exit status. */
static int show_flat(const struct ctp_snap *snap, struct ctp_groups *groups,
		     const struct opts *o)
{
	struct ctp_flat_opts fo = {
		.format = o->format, .scope = o->table, .sel = &o->r};
	char err[512];
	int r = ctp_flat_write(stdout, snap, groups, &fo, err, sizeof(err));
	if (r == 0 && fflush(stdout) != 0) {
		r = -EIO;
		snprintf(err, sizeof(err), "writing output: %s",
			 strerror(errno));
	}
	if (r == 0)
		return CTP_EXIT_OK;
	fprintf(stderr, "ctprof-core show: %s\n", err);
	return r == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
}

/* Show one snapshot as *o asks. Returns the exit status. */
static int run_show(const struct opts *o)
{
	struct ctp_snap *snap = NULL;
	struct ctp_groups *groups = NULL;
	char err[512];
	int rc = CTP_EXIT_FAILURE;

	if (ctp_snap_open(o->path, o->r.cap, &snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctprof-core show: %s\n", err);
		return CTP_EXIT_FAILURE;
	}
	if ((rc = check_against(snap, o)) != 0)
		goto out;
	int gr = o->r.group_by && !o->summary
			 ? ctp_groups_new(snap, &o->r.spec, &groups, err,
					  sizeof(err))
			 : 0;
	if (gr < 0) {
		fprintf(stderr, "ctprof-core show: --group-by %s: %s\n",
			o->r.group_by, err);
		/* -EINVAL: an axis this snapshot cannot give; else the
		 * machine failed us. */
		rc = gr == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
		goto out;
	}

	if (o->format) {
		rc = show_flat(snap, groups, o);
		goto out;
	}
	print_header(o->path, snap);
	if (!o->summary && !o->no_host)
		print_host(snap, o);
	print_plugins(snap);
	print_readfail(snap);
	print_exited(snap);
	printf("\nCounts: %zu threads, %zu processes, %zu cgroups, %zu "
	       "fields, %zu plugins\n",
	       ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows,
	       ctp_snap_table(snap, CTP_SCOPE_PROCESS)->rows,
	       ctp_snap_table(snap, CTP_SCOPE_CGROUP)->rows,
	       ctp_snap_n_fields(snap), ctp_snap_n_plugins(snap));
	rc = CTP_EXIT_FAILURE;
	if (!o->summary && print_tables(snap, groups, o) < 0) {
		fprintf(stderr, "ctprof-core show: out of memory\n");
		goto out;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ctprof-core show: writing output: %s\n",
			strerror(errno));
		goto out;
	}
	rc = CTP_EXIT_OK;
out:
	ctp_groups_free(groups);
	ctp_snap_free(snap);
	return rc;
}

/* ---- Views ---- */

/* The full output (today's `all`) unless a view is asked for or none of
 * the full output's own options is given. */
static bool uses_view(const struct opts *o)
{
	if (o->format)
		return false; /* flat rows: one table, --fields (flat.c) */
	if (o->view)
		return strcmp(o->view, "all") != 0;
	/* A --sort naming a field (dotted, "plugin.field") sorts the full
	 * tables; a view's column ids have no dot. */
	return !(o->summary || o->no_host || o->threads || o->processes ||
		 o->r.group_by || o->r.n_globs ||
		 ctp_readopts_given(&o->r, CTP_READOPT_LIMIT) ||
		 (o->r.sort && strchr(o->r.sort, '.')));
}

static bool want_field(const void *arg, const char *name)
{
	return ctp_readopts_selected(arg, name);
}

/* One line: what was captured where, when, how much, what failed. */
static void view_header(const struct ctp_snap *snap)
{
	const struct ctp_snap_header *h = ctp_snap_header(snap);
	char when[64];
	ctp_render_time(h->start_realtime_ns, when, sizeof(when));
	printf("%s%s%s  %zu threads, %zu processes, read in %.2f s",
	       h->hostname ? h->hostname : "", h->hostname ? "  " : "", when,
	       ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows,
	       ctp_snap_table(snap, CTP_SCOPE_PROCESS)->rows,
	       (double)h->duration_ns / 1e9);
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	size_t failed = 0;
	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		if (p[i].status == 2)
			printf("%s%s",
			       failed++ ? ", " : "  failed: ", p[i].name);
	printf("\n");
	print_resource_note(snap);
	printf("\n");
}

static int run_show(const struct opts *o);

static int run_show(const struct opts *o);

static int run_view(const struct opts *o)
{
	struct ctp_snap *snap = NULL;
	struct ctp_view *v = NULL;
	char err[4096];
	int rc = CTP_EXIT_FAILURE;
	const char *name = o->view ? o->view : "top";
	int r = ctp_view_find(name, &v, err, sizeof(err));
	if (r < 0 && !o->view) {
		/* A broken install: the whole snapshot still reads. */
		char lab[64];
		fprintf(stderr,
			"ctprof-core show: %s: %s; showing everything "
			"(--view all)\n",
			ctp_color_label("warning", CTP_SGR_YELLOW, lab,
					sizeof(lab)),
			err);
		return run_show(o);
	}
	if (r < 0) {
		fprintf(stderr, "ctprof-core show: %s%s\n", err,
			r == -ENOENT ? " (`ctprof-core views` lists them)"
				     : "");
		return CTP_EXIT_USAGE;
	}
	if (ctp_snap_open(o->path, o->r.cap, &snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctprof-core show: %s\n", err);
		goto out;
	}
	size_t w, h, lines;
	ctp_readcli_term(&w, &h);
	size_t fit = ctp_view_fit_rows(v, h, 1, &lines);
	struct ctp_view_opts vo = {
		.width = o->wide ? 0 : w,
		.top = o->top_set ? o->top : fit,
		.lines = o->top_set ? 0 : lines,
		.sort = o->r.sort,
		.asc = o->asc,
		.group_by = o->r.group_by,
		.no_normalize = o->r.spec.no_normalize,
		.want = o->r.n_globs ? want_field : NULL,
		.want_arg = &o->r,
		.color = !o->format && ctp_color_for(STDOUT_FILENO),
	};
	view_header(snap);
	r = ctp_view_show(stdout, snap, v, &vo, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "ctprof-core show: %s\n",
			r == -EINVAL ? err : strerror(-r));
		rc = r == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
		goto out;
	}
	rc = fflush(stdout) == 0 ? CTP_EXIT_OK : CTP_EXIT_FAILURE;
out:
	ctp_view_free(v);
	ctp_snap_free(snap);
	return rc;
}

/* --format with --view (and no --fields): the view's fields are the
 * columns of the flat rows. Returns -1 to go on, else the exit status. */
static int view_fields(struct opts *o)
{
	struct ctp_view *v = NULL;
	char err[4096];
	int r = ctp_view_find(o->view, &v, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "ctprof-core show: %s\n", err);
		return r == -ENOMEM ? CTP_EXIT_FAILURE : CTP_EXIT_USAGE;
	}
	int rc = -1;
	for (size_t i = 0; rc < 0 && i < v->n_cols; i++)
		for (size_t k = 0; rc < 0 && k < v->cols[i].n_fields; k++)
			rc = ctp_readopts_option("show", &o->r,
						 CTP_READOPT_FIELDS,
						 v->cols[i].fields[k]);
	ctp_view_free(v);
	return rc;
}

int ctp_cmd_show(int argc, char **argv)
{
	struct opts o = {.r.limit = DEFAULT_LIMIT, .asc = -1};
	int rc = parse_show_args(argc, argv, &o);
	if (rc < 0 && o.format && o.view && strcmp(o.view, "all") != 0 &&
	    !o.r.n_globs)
		rc = view_fields(&o);
	if (rc < 0) {
		FILE *screen = o.format ? NULL : ctp_readcli_screen();
		rc = uses_view(&o) ? run_view(&o) : run_show(&o);
		if (screen && ctp_readcli_screen_done(screen) != 0 &&
		    rc == CTP_EXIT_OK)
			rc = CTP_EXIT_FAILURE;
	}
	ctp_readopts_done(&o.r);
	return rc;
}
