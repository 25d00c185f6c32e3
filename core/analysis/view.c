/* SPDX-License-Identifier: MIT */
/* View files (see view.h and docs/VIEWS.md). */
#include "view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "yamltree.h"

/* A view is a page of YAML; the cap keeps a wrong path from being read. */
#define VIEW_MAX_BYTES (256u * 1024)
#define VIEW_MAX_COLS  64
#define VIEW_MAX_SECS  8

static const char *const top_keys[] = {
	"view",	    "description", "sort", "order",    "hide_zero",
	"sections", "columns",	   "full", "coverage", NULL};
static const char *const cover_keys[] = {"threads", "cgroup", "exited", NULL};
static const char *const col_keys[] = {"id",	 "label",      "field", "first",
				       "sum",	 "ident",      "show",	"in",
				       "exited", "why_absent", NULL};
static const char *const sec_keys[] = {"title", "group_by", NULL};
static const char *const shows[] = {"value",   "delta", "rate",
				    "pct_cpu", "share", NULL};
static const char *const idents[] = {"pcomm", "comm", "cgroup",
				     "pid",   "age",  NULL};

void ctp_view_free(struct ctp_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_cols; i++) {
		free(v->cols[i].id);
		free(v->cols[i].label);
		for (size_t k = 0; k < v->cols[i].n_fields; k++)
			free(v->cols[i].fields[k]);
		for (size_t k = 0; k < v->cols[i].n_exited; k++)
			free(v->cols[i].exited[k]);
		free(v->cols[i].why_absent);
	}
	for (size_t i = 0; i < v->n_secs; i++) {
		free(v->secs[i].title);
		free(v->secs[i].group_by);
	}
	for (size_t i = 0; i < CTP_VIEW_COVER_N; i++)
		for (size_t k = 0; k < v->coverage[i].n_fields; k++)
			free(v->coverage[i].fields[k]);
	free(v->cols);
	free(v->secs);
	free(v->hide_zero);
	free(v->name);
	free(v->description);
	free(v->path);
	free(v);
}

/* [a-z0-9_.-]+, as field names are (docs/FORMAT.md §4). */
static bool name_ok(const char *s, bool dots)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || (dots && (*s == '.' || *s == '-'))))
			return false;
	return true;
}

/* One of the NULL-terminated `words`: its index + 1 into *out. */
static int conv_word(struct ctp_yctx *c, const char *path,
		     const struct ctp_ynode *v, const char *const *words,
		     uint8_t *out)
{
	struct ctp_yclip b;
	char list[128] = "";
	size_t o = 0;
	for (size_t i = 0; v->type == CTP_Y_SCALAR && words[i]; i++)
		if (strcmp(v->str, words[i]) == 0) {
			*out = (uint8_t)(i + 1);
			return 0;
		}
	for (size_t i = 0; words[i] && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
				      i ? ", " : "", words[i]);
	return ctp_y_fail(c, v, "'%s' must be one of %s, got %s", path, list,
			  ctp_y_got(&b, v));
}

/* A field name, or a sequence of 1..CTP_VIEW_MAX_FIELDS of them, into
 * out[*n...]. */
static int conv_names(struct ctp_yctx *c, const char *path,
		      const struct ctp_ynode *v, char **out, size_t *nout)
{
	const struct ctp_ynode *const *items = &v;
	size_t n = 1;
	if (v->type == CTP_Y_SEQ) {
		items = (const struct ctp_ynode *const *)v->kids;
		n = v->n;
	}
	if (n == 0 || n > CTP_VIEW_MAX_FIELDS)
		return ctp_y_fail(c, v, "'%s' names 1 to %d fields, got %zu",
				  path, CTP_VIEW_MAX_FIELDS, n);
	for (size_t i = 0; i < n; i++) {
		struct ctp_yclip b;
		const struct ctp_ynode *it = items[i];
		if (it->type != CTP_Y_SCALAR || !name_ok(it->str, true))
			return ctp_y_fail(c, it,
					  "'%s': a field name is "
					  "[a-z0-9_.-]+, got %s",
					  path, ctp_y_got(&b, it));
		if (!(out[(*nout)++] = strdup(it->str)))
			return -ENOMEM;
	}
	return 0;
}

static int conv_fields(struct ctp_yctx *c, const char *path,
		       const struct ctp_ynode *v, struct ctp_view_col *col)
{
	return conv_names(c, path, v, col->fields, &col->n_fields);
}

/* `in: [TITLE, ...]`: the sections, by title, a column is shown in. */
static int conv_in(struct ctp_yctx *c, const char *path,
		   const struct ctp_ynode *v, struct ctp_view_col *col)
{
	struct ctp_yclip b;
	const struct ctp_view *view = c->user;
	if (v->type != CTP_Y_SEQ || v->n == 0)
		return ctp_y_fail(c, v,
				  "'%s' must be a sequence of section "
				  "titles, got %s",
				  path, ctp_y_got(&b, v));
	for (size_t i = 0; i < v->n; i++) {
		const struct ctp_ynode *t = v->kids[i];
		size_t s = 0;
		while (s < view->n_secs &&
		       (t->type != CTP_Y_SCALAR ||
			strcmp(t->str, view->secs[s].title)))
			s++;
		if (s == view->n_secs)
			return ctp_y_fail(c, t,
					  "'%s': %s is not the title of a "
					  "section of this view",
					  path, ctp_y_got(&b, t));
		col->in_mask |= 1u << s;
	}
	return 0;
}

/* The value of one column key (index k of col_keys). */
static int col_key(struct ctp_yctx *c, const char *path, int k,
		   const struct ctp_ynode *v, struct ctp_view_col *col,
		   const struct ctp_ynode **src_at)
{
	struct ctp_yclip b;
	switch (k) {
	case 0:
		if (v->type != CTP_Y_SCALAR || !name_ok(v->str, false))
			return ctp_y_fail(c, v, "'%s' is [a-z0-9_]+, got %s",
					  path, ctp_y_got(&b, v));
		return ctp_y_str(c, path, v, &col->id);
	case 1:
		return ctp_y_str(c, path, v, &col->label);
	case 6:
		return conv_word(c, path, v, shows, &col->show);
	case 7:
		return conv_in(c, path, v, col);
	case 8:
		return conv_names(c, path, v, col->exited, &col->n_exited);
	case 9:
		if (v->type != CTP_Y_SCALAR || !name_ok(v->str, true))
			return ctp_y_fail(c, v,
					  "'%s' is one field name "
					  "([a-z0-9_.-]+), got %s",
					  path, ctp_y_got(&b, v));
		return ctp_y_str(c, path, v, &col->why_absent);
	}
	/* field, first, sum, ident: where the number comes from. */
	if (*src_at)
		return ctp_y_fail(c, v,
				  "'%s': a column takes one of field, first, "
				  "sum and ident (the other is at line %u)",
				  path, (*src_at)->line);
	*src_at = v;
	if (k == 5) {
		col->src = CTP_VSRC_IDENT;
		return conv_word(c, path, v, idents, &col->ident);
	}
	col->src = k == 4 ? CTP_VSRC_SUM : CTP_VSRC_FIELD;
	if (k == 2 && v->type != CTP_Y_SCALAR)
		return ctp_y_fail(c, v, "'%s' is one field name, got %s", path,
				  ctp_y_got(&b, v));
	return conv_fields(c, path, v, col);
}

static int conv_col(struct ctp_yctx *c, size_t i, const struct ctp_ynode *m,
		    struct ctp_view_col *col)
{
	const struct ctp_ynode *src_at = NULL;
	char path[64];
	struct ctp_yclip b;
	if (m->type != CTP_Y_MAP)
		return ctp_y_fail(c, m,
				  "'columns[%zu]' must be a mapping, got %s", i,
				  ctp_y_got(&b, m));
	col->line = m->line;
	col->show = CTP_VSHOW_VALUE;
	for (size_t j = 0; j + 1 < m->n; j += 2) {
		ctp_y_path(path, sizeof(path), "columns[%zu].%s", i,
			   m->kids[j]->str);
		int k = ctp_y_key_index(c, m->kids[j], col_keys, "a column");
		if (k < 0)
			return k;
		int r = col_key(c, path, k, m->kids[j + 1], col, &src_at);
		if (r < 0)
			return r;
	}
	if (!col->id || !col->label || !src_at)
		return ctp_y_fail(c, m,
				  "'columns[%zu]' needs id, label and one of "
				  "field, first, sum, ident",
				  i);
	if (col->src == CTP_VSRC_IDENT && col->show != CTP_VSHOW_VALUE)
		return ctp_y_fail(c, m,
				  "'columns[%zu]': a name column shows its "
				  "value only",
				  i);
	if (col->src == CTP_VSRC_IDENT && (col->n_exited || col->why_absent))
		return ctp_y_fail(c, m,
				  "'columns[%zu]': a name column takes no "
				  "exited or why_absent field",
				  i);
	return 0;
}

static int conv_cols(struct ctp_yctx *c, const struct ctp_ynode *v,
		     struct ctp_view *view)
{
	struct ctp_yclip b;
	if (v->type != CTP_Y_SEQ || v->n == 0 || v->n > VIEW_MAX_COLS)
		return ctp_y_fail(c, v,
				  "'columns' must be a sequence of 1 to %d "
				  "columns, got %s",
				  VIEW_MAX_COLS, ctp_y_got(&b, v));
	view->cols = calloc(v->n, sizeof(*view->cols));
	view->hide_zero = calloc(v->n, sizeof(*view->hide_zero));
	if (!view->cols || !view->hide_zero)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		view->n_cols = i + 1;
		int r = conv_col(c, i, v->kids[i], &view->cols[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(view->cols[j].id, view->cols[i].id) == 0)
				return ctp_y_fail(c, v->kids[i],
						  "column id '%s' is also "
						  "columns[%zu]'s",
						  view->cols[i].id, j);
	}
	return 0;
}

static int conv_secs(struct ctp_yctx *c, const struct ctp_ynode *v,
		     struct ctp_view *view)
{
	struct ctp_yclip b;
	if (v->type != CTP_Y_SEQ || v->n == 0 || v->n > VIEW_MAX_SECS)
		return ctp_y_fail(c, v,
				  "'sections' must be a sequence of 1 to %d "
				  "sections, got %s",
				  VIEW_MAX_SECS, ctp_y_got(&b, v));
	view->secs = calloc(v->n, sizeof(*view->secs));
	if (!view->secs)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		const struct ctp_ynode *m = v->kids[i];
		struct ctp_view_section *s = &view->secs[i];
		char path[64];
		view->n_secs = i + 1;
		if (m->type != CTP_Y_MAP)
			return ctp_y_fail(c, m,
					  "'sections[%zu]' must be a mapping, "
					  "got %s",
					  i, ctp_y_got(&b, m));
		for (size_t j = 0; j + 1 < m->n; j += 2) {
			ctp_y_path(path, sizeof(path), "sections[%zu].%s", i,
				   m->kids[j]->str);
			int k = ctp_y_key_index(c, m->kids[j], sec_keys,
						"a section");
			if (k < 0)
				return k;
			int r = ctp_y_str(c, path, m->kids[j + 1],
					  k == 0 ? &s->title : &s->group_by);
			if (r < 0)
				return r;
		}
		if (!s->title || !s->group_by)
			return ctp_y_fail(c, m,
					  "'sections[%zu]' needs title and "
					  "group_by",
					  i);
	}
	return 0;
}

/* A column id in the view: its index, or an error at v. */
static int col_ref(struct ctp_yctx *c, const char *path,
		   const struct ctp_ynode *v, const struct ctp_view *view)
{
	struct ctp_yclip b;
	const char *ids[VIEW_MAX_COLS + 1];
	for (size_t i = 0; i < view->n_cols; i++)
		ids[i] = view->cols[i].id;
	ids[view->n_cols] = NULL;
	if (v->type == CTP_Y_SCALAR)
		for (size_t i = 0; i < view->n_cols; i++)
			if (strcmp(v->str, ids[i]) == 0)
				return (int)i;
	const char *near = v->type == CTP_Y_SCALAR
				   ? ctp_y_closest(v->str, ids, view->n_cols)
				   : NULL;
	return ctp_y_fail(c, v, "'%s' names no column of this view: %s%s%s",
			  path, ctp_y_got(&b, v), near ? "; did you mean " : "",
			  near ? near : "");
}

/* sort, order, hide_zero: after the columns they name. */
static int conv_refs(struct ctp_yctx *c, const struct ctp_ynode *const *at,
		     struct ctp_view *view)
{
	struct ctp_yclip b;
	int r;
	if (at[2]) {
		if ((r = col_ref(c, "sort", at[2], view)) < 0)
			return r;
		view->sort = (size_t)r;
	}
	if (at[3]) {
		uint8_t o = 0;
		static const char *const orders[] = {"desc", "asc", NULL};
		if ((r = conv_word(c, "order", at[3], orders, &o)) < 0)
			return r;
		view->asc = o == 2;
	}
	if (!at[4])
		return 0;
	if (at[4]->type != CTP_Y_SEQ)
		return ctp_y_fail(c, at[4],
				  "'hide_zero' must be a sequence of column "
				  "ids, got %s",
				  ctp_y_got(&b, at[4]));
	for (size_t i = 0; i < at[4]->n; i++) {
		if ((r = col_ref(c, "hide_zero", at[4]->kids[i], view)) < 0)
			return r;
		view->hide_zero[r] = view->any_hide = true;
	}
	return 0;
}

/* The view's name is its file's: views are found by file name. */
static int check_name(struct ctp_yctx *c, const struct ctp_ynode *v,
		      struct ctp_view *view)
{
	const char *base = strrchr(c->name, '/');
	base = base ? base + 1 : c->name;
	size_t n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".yaml") == 0)
		n -= 5;
	if (!name_ok(view->name, false) || strlen(view->name) != n ||
	    strncmp(view->name, base, n) != 0)
		return ctp_y_fail(c, v,
				  "'view' is the file's name without .yaml "
				  "([a-z0-9_]+): expected '%.*s', got '%s'",
				  (int)n, base, view->name);
	return 0;
}

/* `coverage: {threads: [...], cgroup: [...], exited: [...]}`. */
static int conv_coverage(struct ctp_yctx *c, const struct ctp_ynode *v,
			 struct ctp_view *view)
{
	struct ctp_yclip b;
	char path[48];
	if (v->type != CTP_Y_MAP)
		return ctp_y_fail(c, v,
				  "'coverage' must be a mapping (threads, "
				  "cgroup, exited), got %s",
				  ctp_y_got(&b, v));
	for (size_t j = 0; j + 1 < v->n; j += 2) {
		int k = ctp_y_key_index(c, v->kids[j], cover_keys,
					"'coverage'");
		if (k < 0)
			return k;
		snprintf(path, sizeof(path), "coverage.%s", cover_keys[k]);
		int r = conv_fields(c, path, v->kids[j + 1],
				    &view->coverage[k]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int conv_view(struct ctp_yctx *c, const struct ctp_ynode *root,
		     struct ctp_view *view)
{
	const struct ctp_ynode *at[9] = {0};
	struct ctp_yclip b;
	int r, full = 0;
	if (!root || root->type != CTP_Y_MAP)
		return ctp_y_fail_at(c, root ? root->line : 1,
				     root ? root->col : 1,
				     "a view is a mapping, got %s",
				     root ? ctp_y_got(&b, root) : "nothing");
	for (size_t j = 0; j + 1 < root->n; j += 2) {
		int k = ctp_y_key_index(c, root->kids[j], top_keys, "a view");
		if (k < 0)
			return k;
		at[k] = root->kids[j + 1];
	}
	if (!at[0] || !at[1])
		return ctp_y_fail(c, root, "a view needs view and description");
	if ((r = ctp_y_str(c, "view", at[0], &view->name)) < 0 ||
	    (r = check_name(c, at[0], view)) < 0 ||
	    (r = ctp_y_str(c, "description", at[1], &view->description)) < 0 ||
	    (at[7] && (r = ctp_y_bool(c, "full", at[7], &full)) < 0))
		return r;
	view->full = full;
	if (view->full)
		return 0;
	if (!at[5] || !at[6] || !at[2])
		return ctp_y_fail(c, root,
				  "a view needs sections, columns and sort "
				  "(or full: true)");
	if ((r = conv_secs(c, at[5], view)) < 0 ||
	    (r = conv_cols(c, at[6], view)) < 0 ||
	    (at[8] && (r = conv_coverage(c, at[8], view)) < 0))
		return r;
	return conv_refs(c, at, view);
}

int ctp_view_parse(const char *path, const char *buf, size_t len,
		   struct ctp_view **out, char *err, size_t errlen)
{
	struct ctp_yctx c = {path, buf, len, err, errlen, NULL};
	struct ctp_ynode *root = NULL;
	struct ctp_view *view = calloc(1, sizeof(*view));
	if (err && errlen)
		err[0] = '\0';
	if (!view || !(view->path = strdup(path))) {
		ctp_view_free(view);
		return -ENOMEM;
	}
	c.user = view;
	int r = ctp_yaml_parse(&c, &root);
	if (r == 0)
		r = conv_view(&c, root, view);
	ctp_ynode_free(root);
	if (r == -ENOMEM && err && errlen && !err[0])
		ctp_y_fail_file(&c, "out of memory");
	if (r < 0) {
		ctp_view_free(view);
		return r;
	}
	*out = view;
	return 0;
}

int ctp_view_load(const char *path, struct ctp_view **out, char *err,
		  size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > VIEW_MAX_BYTES) {
		int e = fd < 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : EFBIG;
		snprintf(err, errlen, "%s: %s", path,
			 e == EINVAL  ? "not a regular file"
			 : e == EFBIG ? "larger than a view can be (256 KiB)"
				      : strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	ssize_t n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 buf ? strerror(errno) : "out of memory");
		free(buf);
		return buf ? -EIO : -ENOMEM;
	}
	int r = ctp_view_parse(path, buf, (size_t)n, out, err, errlen);
	free(buf);
	return r;
}

int ctp_view_col_find(const struct ctp_view *v, const char *s)
{
	for (size_t i = 0; i < v->n_cols; i++)
		if (strcmp(v->cols[i].id, s) == 0 ||
		    strcasecmp(v->cols[i].label, s) == 0)
			return (int)i;
	return -1;
}

/* ---- Where views are ------------------------------------------------------
 */

void ctp_view_dirs_free(char **dirs)
{
	for (size_t i = 0; dirs && dirs[i]; i++)
		free(dirs[i]);
	free(dirs);
}

static int push_dir(char ***dirs, size_t *n, const char *s, size_t len)
{
	char **d = realloc(*dirs, (*n + 2) * sizeof(**dirs));
	if (!d)
		return -ENOMEM;
	*dirs = d;
	if (!(d[*n] = strndup(s, len)))
		return -ENOMEM;
	d[++*n] = NULL;
	return 0;
}

int ctp_view_dirs(char ***out)
{
	char **dirs = NULL, buf[PATH_MAX];
	size_t n = 0;
	int r = 0;
	const char *env = getenv("CTPROF_VIEW_DIR");
	for (const char *p = env; r == 0 && p && *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len)
			r = push_dir(&dirs, &n, p, len);
		p = colon ? colon + 1 : p + len;
	}
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int w = -1;
	if (xdg && *xdg == '/')
		w = snprintf(buf, sizeof(buf), "%s/ctprof/views", xdg);
	else if (home && *home == '/')
		w = snprintf(buf, sizeof(buf), "%s/.config/ctprof/views", home);
	if (r == 0 && w > 0 && (size_t)w < sizeof(buf))
		r = push_dir(&dirs, &n, buf, (size_t)w);
	ctp_paths_view_dir(buf, sizeof(buf));
	if (r == 0)
		r = push_dir(&dirs, &n, buf, strlen(buf));
	if (r < 0) {
		ctp_view_dirs_free(dirs);
		return r;
	}
	*out = dirs;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.yaml of the directories, first directory first. */
static int scan_dirs(char **dirs, char ***names, char ***paths, size_t *n)
{
	size_t cap = 0;
	*names = *paths = NULL;
	*n = 0;
	for (size_t i = 0; dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml"))
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 16;
				char **a = realloc(*names, cap * sizeof(*a));
				if (a)
					*names = a;
				char **b = realloc(*paths, cap * sizeof(*b));
				if (b)
					*paths = b;
				if (!a || !b) {
					closedir(d);
					return -ENOMEM;
				}
			}
			(*names)[*n] = strndup(e->d_name, len - 5);
			if (asprintf(&(*paths)[*n], "%s/%s", dirs[i],
				     e->d_name) < 0)
				(*paths)[*n] = NULL;
			if (!(*names)[(*n)++] || !(*paths)[*n - 1]) {
				closedir(d);
				return -ENOMEM;
			}
		}
		if (d)
			closedir(d);
	}
	return 0;
}

int ctp_view_names(char ***names, char ***paths, size_t *n)
{
	char **dirs;
	int r = ctp_view_dirs(&dirs);
	if (r < 0)
		return r;
	r = scan_dirs(dirs, names, paths, n);
	ctp_view_dirs_free(dirs);
	if (r < 0)
		return r;
	/* Keep the first of each name (the user's over the shipped), then
	 * sort by name. */
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		bool dup = false;
		for (size_t j = 0; j < k && !dup; j++)
			dup = strcmp((*names)[j], (*names)[i]) == 0;
		if (dup) {
			free((*names)[i]);
			free((*paths)[i]);
			continue;
		}
		(*names)[k] = (*names)[i];
		(*paths)[k++] = (*paths)[i];
	}
	*n = k;
	/* Sort names and paths together (a handful: insertion sort). */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i;
		     j > 0 && cmp_str(&(*names)[j - 1], &(*names)[j]) > 0;
		     j--) {
			char *t = (*names)[j];
			(*names)[j] = (*names)[j - 1];
			(*names)[j - 1] = t;
			t = (*paths)[j];
			(*paths)[j] = (*paths)[j - 1];
			(*paths)[j - 1] = t;
		}
	return 0;
}

int ctp_view_find(const char *name, struct ctp_view **out, char *err,
		  size_t errlen)
{
	char **dirs, path[PATH_MAX];
	int r = ctp_view_dirs(&dirs);
	if (r < 0)
		return r;
	for (size_t i = 0; dirs[i]; i++) {
		int w = snprintf(path, sizeof(path), "%s/%s.yaml", dirs[i],
				 name);
		if (w > 0 && (size_t)w < sizeof(path) && name_ok(name, false) &&
		    access(path, F_OK) == 0) {
			ctp_view_dirs_free(dirs);
			return ctp_view_load(path, out, err, errlen);
		}
	}
	size_t o = (size_t)snprintf(err, errlen, "no view '%s' in ", name);
	for (size_t i = 0; dirs[i] && o < errlen; i++)
		o += (size_t)snprintf(err + o, errlen - o, "%s%s", i ? ":" : "",
				      dirs[i]);
	ctp_view_dirs_free(dirs);
	char **names, **paths;
	size_t n = 0;
	if (o < errlen && ctp_view_names(&names, &paths, &n) == 0) {
		const char *near =
			ctp_y_closest(name, (const char *const *)names, n);
		if (near)
			snprintf(err + o, errlen - o, "; did you mean '%s'?",
				 near);
		for (size_t i = 0; i < n; i++) {
			free(names[i]);
			free(paths[i]);
		}
		free(names);
		free(paths);
	}
	return -ENOENT;
}
