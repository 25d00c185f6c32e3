/* SPDX-License-Identifier: MIT */
/* The one table of every printed output (see table.h). */
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "render.h"
#include "term.h"

enum cell_type { C_ABSENT, C_TEXT, C_NUMBER, C_VALUE };

struct cell {
	uint8_t type;
	uint8_t cls; /* enum ctp_table_class */
	char *text;  /* C_TEXT, C_NUMBER: owned */
	struct ctp_value v;
};

struct col {
	char *title;
	unsigned flags;
	size_t w;
	bool hidden;
	size_t elide;	 /* names elided to this, 0: not */
	size_t min, max; /* ctp_table_width */
	size_t hang;	 /* CTP_TABLE_WRAP: further lines indented past start */
};

struct ctp_table {
	enum ctp_table_style style;
	bool headless;
	size_t width; /* ctp_table_fit's: where a CTP_TABLE_WRAP cell wraps */
	struct col *cols;
	size_t ncols, cols_cap;
	struct cell *cells; /* kept rows, nrows * ncols */
	uint8_t *cls;	    /* per kept row */
	size_t nrows, cells_cap, cls_cap;
	struct cell *cur; /* the row being added */
	size_t ncur;
	uint8_t cur_cls;
	uint8_t next_cls; /* of the next cell */
	FILE *out;	  /* streamed: rows written as completed */
	enum ctp_table_format fmt;
	size_t written;
	int err; /* the first failure; later cells are dropped */
};

/* ---- Escapers and exact values ---- */

void ctp_table_json_str(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t l = ctp_utf8_len(p + i, n - i);
		if (l > 1) {
			fwrite(p + i, 1, l, f);
			i += l;
			continue;
		}
		i++;
		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (l == 0 || c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				putc((int)c, f);
		}
	}
	putc('"', f);
}

void ctp_table_json_text(FILE *f, const char *s)
{
	if (s)
		ctp_table_json_str(f, s, strlen(s));
	else
		fputs("null", f);
}

void ctp_table_csv_str(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote = n == 0;
	for (size_t i = 0; i < n && !quote; i++)
		quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' ||
			p[i] == '\n';
	if (quote)
		putc('"', f);
	for (size_t i = 0; i < n;) {
		size_t l = ctp_utf8_len(p + i, n - i);
		if (l == 0) {
			fprintf(f, "\\u%04x", p[i]);
			i++;
			continue;
		}
		if (l == 1 && p[i] == '"')
			putc('"', f);
		fwrite(p + i, 1, l, f);
		i += l;
	}
	if (quote)
		putc('"', f);
}

/* A cpu set in the kernel's list format: "0-3,8"; "" when empty. */
static void put_cpuset(FILE *f, const struct ctp_value *v)
{
	for (size_t i = 0; i < v->cpuset.n; i++) {
		uint32_t lo = v->cpuset.r[2 * i], hi = v->cpuset.r[2 * i + 1];
		fprintf(f, "%s%" PRIu32, i ? "," : "", lo);
		if (hi != lo)
			fprintf(f, "-%" PRIu32, hi);
	}
}

/* A number or bool; false for other types. */
static bool put_scalar(FILE *f, const struct ctp_value *v)
{
	switch (v->type) {
	case CTP_TYPE_U64:
		fprintf(f, "%" PRIu64, v->u64);
		return true;
	case CTP_TYPE_I64:
		fprintf(f, "%" PRId64, v->i64);
		return true;
	case CTP_TYPE_BOOL:
		fputs(v->b ? "true" : "false", f);
		return true;
	}
	return false;
}

void ctp_table_json_value(FILE *f, const struct ctp_value *v)
{
	if (put_scalar(f, v))
		return;
	switch (v->type) {
	case CTP_TYPE_CHAR:
		ctp_table_json_str(f, (const char *)&v->c, 1);
		break;
	case CTP_TYPE_STRING:
		ctp_table_json_str(f, v->str.ptr, v->str.len);
		break;
	case CTP_TYPE_CPUSET:
		putc('"', f);
		put_cpuset(f, v);
		putc('"', f);
		break;
	default:
		fputs("null", f);
	}
}

void ctp_table_csv_value(FILE *f, const struct ctp_value *v)
{
	if (put_scalar(f, v))
		return;
	switch (v->type) {
	case CTP_TYPE_CHAR:
		ctp_table_csv_str(f, (const char *)&v->c, 1);
		break;
	case CTP_TYPE_STRING:
		ctp_table_csv_str(f, v->str.ptr, v->str.len);
		break;
	case CTP_TYPE_CPUSET: {
		bool quote = v->cpuset.n != 1; /* commas, or empty */
		if (quote)
			putc('"', f);
		put_cpuset(f, v);
		if (quote)
			putc('"', f);
		break;
	}
	default: /* absent: an empty cell */
		break;
	}
}

/* ---- Building ---- */

struct ctp_table *ctp_table_new(enum ctp_table_style style)
{
	struct ctp_table *t = calloc(1, sizeof(*t));
	if (t)
		t->style = style;
	return t;
}

struct ctp_table *ctp_table_new_cols(enum ctp_table_style style,
				     const struct ctp_table_col *cols, size_t n)
{
	struct ctp_table *t = ctp_table_new(style);
	for (size_t c = 0; t && c < n; c++) {
		if (ctp_table_add_col(t, cols[c].title, cols[c].flags) < 0) {
			ctp_table_free(t);
			return NULL;
		}
		ctp_table_width(t, c, cols[c].min, 0);
		t->cols[c].hang = cols[c].hang;
	}
	return t;
}

static void cell_done(struct cell *c)
{
	free(c->text);
	c->text = NULL;
}

void ctp_table_free(struct ctp_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		cell_done(&t->cells[i]);
	for (size_t i = 0; i < t->ncur; i++)
		cell_done(&t->cur[i]);
	for (size_t c = 0; c < t->ncols; c++)
		free(t->cols[c].title);
	free(t->cols);
	free(t->cells);
	free(t->cls);
	free(t->cur);
	free(t);
}

int ctp_table_add_col(struct ctp_table *t, const char *title, unsigned flags)
{
	char *s = strdup(title);
	if (!s || CTP_GROW(t->cols, t->cols_cap, t->ncols + 1, 8) < 0) {
		free(s);
		return -ENOMEM;
	}
	struct cell *cur = realloc(t->cur, (t->ncols + 1) * sizeof(*cur));
	if (!cur) {
		free(s);
		return -ENOMEM;
	}
	t->cur = cur;
	t->cols[t->ncols] = (struct col){.title = s, .flags = flags};
	return (int)t->ncols++;
}

size_t ctp_table_n_cols(const struct ctp_table *t)
{
	return t->ncols;
}

void ctp_table_hide(struct ctp_table *t, size_t c)
{
	t->cols[c].hidden = true;
}

bool ctp_table_shown(const struct ctp_table *t, size_t c)
{
	return c < t->ncols && !t->cols[c].hidden;
}

size_t ctp_table_n_rows(const struct ctp_table *t)
{
	return t->nrows;
}

static const char *cell_text(const struct cell *c)
{
	return c->type == C_TEXT || c->type == C_NUMBER ? c->text : "";
}

const char *ctp_table_cell(const struct ctp_table *t, size_t row, size_t col)
{
	return cell_text(&t->cells[row * t->ncols + col]);
}

/* ---- Machine formats ---- */

static void write_header(const struct ctp_table *t, FILE *out,
			 enum ctp_table_format fmt)
{
	if (fmt != CTP_TABLE_CSV)
		return;
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			putc(',', out);
		ctp_table_csv_str(out, t->cols[c].title,
				  strlen(t->cols[c].title));
	}
	putc('\n', out);
}

static void write_cell(FILE *out, enum ctp_table_format fmt,
		       const struct cell *c)
{
	bool csv = fmt == CTP_TABLE_CSV;
	switch (c->type) {
	case C_TEXT:
		(csv ? ctp_table_csv_str : ctp_table_json_str)(out, c->text,
							       strlen(c->text));
		break;
	case C_NUMBER:
		fputs(c->text, out);
		break;
	case C_VALUE:
		(csv ? ctp_table_csv_value : ctp_table_json_value)(out, &c->v);
		break;
	default:
		if (!csv)
			fputs("null", out);
	}
}

/* The i-th row written. */
static void write_row(const struct ctp_table *t, FILE *out,
		      enum ctp_table_format fmt, const struct cell *row,
		      size_t i, bool eol)
{
	bool csv = fmt == CTP_TABLE_CSV;
	if (fmt == CTP_TABLE_JSON)
		fputs(i ? ",\n" : "[\n", out);
	if (!csv)
		putc('{', out);
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			putc(',', out);
		if (!csv) {
			ctp_table_json_str(out, t->cols[c].title,
					   strlen(t->cols[c].title));
			putc(':', out);
		}
		write_cell(out, fmt, &row[c]);
	}
	if (!csv)
		putc('}', out);
	if (fmt != CTP_TABLE_JSON && eol)
		putc('\n', out);
}

static void write_end(FILE *out, enum ctp_table_format fmt, size_t rows)
{
	if (fmt == CTP_TABLE_JSON)
		fputs(rows ? "\n]\n" : "[]\n", out);
}

void ctp_table_stream(struct ctp_table *t, FILE *out, enum ctp_table_format fmt)
{
	t->out = out;
	t->fmt = fmt;
	write_header(t, out, fmt);
}

int ctp_table_end(struct ctp_table *t)
{
	if (t->err)
		return t->err;
	write_end(t->out, t->fmt, t->written);
	return ferror(t->out) ? -EIO : 0;
}

int ctp_table_write(const struct ctp_table *t, FILE *out,
		    enum ctp_table_format fmt)
{
	write_header(t, out, fmt);
	for (size_t r = 0; r < t->nrows; r++)
		write_row(t, out, fmt, &t->cells[r * t->ncols], r, true);
	write_end(out, fmt, t->nrows);
	return ferror(out) ? -EIO : 0;
}

/* ---- Documents ---- */

void ctp_table_doc_init(struct ctp_table_doc *d, FILE *out)
{
	memset(d, 0, sizeof(*d));
	d->out = out;
}

/* Where a member starts: its comma, its name. */
static void doc_member(struct ctp_table_doc *d, const char *key)
{
	if (d->depth) {
		if (d->more[d->depth - 1])
			putc(',', d->out);
		d->more[d->depth - 1] = true;
	}
	if (key) {
		ctp_table_json_text(d->out, key);
		putc(':', d->out);
	}
}

void ctp_table_doc_open(struct ctp_table_doc *d, const char *key, char c)
{
	doc_member(d, key);
	putc(c, d->out);
	if (d->depth < CTP_TABLE_DOC_DEPTH) {
		d->close[d->depth] = c == '[' ? ']' : '}';
		d->more[d->depth++] = false;
	}
}

void ctp_table_doc_close(struct ctp_table_doc *d)
{
	if (d->depth)
		putc(d->close[--d->depth], d->out);
}

void ctp_table_doc_text(struct ctp_table_doc *d, const char *key, const char *s)
{
	doc_member(d, key);
	ctp_table_json_text(d->out, s);
}

void ctp_table_doc_str(struct ctp_table_doc *d, const char *key, const char *s,
		       size_t n)
{
	doc_member(d, key);
	ctp_table_json_str(d->out, s, n);
}

void ctp_table_doc_numf(struct ctp_table_doc *d, const char *key,
			const char *fmt, ...)
{
	va_list ap;
	doc_member(d, key);
	va_start(ap, fmt);
	vfprintf(d->out, fmt, ap);
	va_end(ap);
}

void ctp_table_doc_null(struct ctp_table_doc *d, const char *key)
{
	doc_member(d, key);
	fputs("null", d->out);
}

void ctp_table_doc_bool(struct ctp_table_doc *d, const char *key, bool b)
{
	doc_member(d, key);
	fputs(b ? "true" : "false", d->out);
}

void ctp_table_doc_value(struct ctp_table_doc *d, const char *key,
			 const struct ctp_value *v)
{
	doc_member(d, key);
	ctp_table_json_value(d->out, v);
}

void ctp_table_doc_table(struct ctp_table_doc *d, const char *key,
			 const struct ctp_table *t)
{
	ctp_table_doc_open(d, key, '[');
	for (size_t r = 0; r < t->nrows; r++) {
		doc_member(d, NULL);
		write_row(t, d->out, CTP_TABLE_NDJSON, &t->cells[r * t->ncols],
			  r, false);
	}
	ctp_table_doc_close(d);
}

/* ---- Cells ---- */

/* The row is complete: written (streamed) or kept. */
static int row_done(struct ctp_table *t)
{
	int r = 0;
	if (t->out) {
		write_row(t, t->out, t->fmt, t->cur, t->written++, true);
		for (size_t i = 0; i < t->ncols; i++)
			cell_done(&t->cur[i]);
	} else if (CTP_GROW(t->cells, t->cells_cap, (t->nrows + 1) * t->ncols,
			    16) < 0 ||
		   CTP_GROW(t->cls, t->cls_cap, t->nrows + 1, 16) < 0) {
		for (size_t i = 0; i < t->ncols; i++)
			cell_done(&t->cur[i]);
		r = -ENOMEM;
	} else {
		if (t->ncols) /* (an empty row has no cells) */
			memcpy(&t->cells[t->nrows * t->ncols], t->cur,
			       t->ncols * sizeof(*t->cur));
		t->cls[t->nrows++] = t->cur_cls;
	}
	t->ncur = 0;
	t->cur_cls = CTP_TABLE_PLAIN;
	return r;
}

static int add_cell(struct ctp_table *t, struct cell c)
{
	if (t->err) {
		free(c.text);
		return t->err;
	}
	if (!t->ncols) { /* an empty row: one absent cell says so */
		free(c.text);
		return c.type == C_ABSENT ? row_done(t) : -EINVAL;
	}
	c.cls = t->next_cls;
	t->next_cls = CTP_TABLE_PLAIN;
	t->cur[t->ncur++] = c;
	return t->err = t->ncur == t->ncols ? row_done(t) : 0;
}

__attribute__((format(printf, 3, 0))) static int
add_vf(struct ctp_table *t, uint8_t type, const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		return t->err = -ENOMEM;
	return add_cell(t, (struct cell){.type = type, .text = s});
}

int ctp_table_text(struct ctp_table *t, const char *s)
{
	char *d = strdup(s);
	if (!d)
		return t->err = -ENOMEM;
	return add_cell(t, (struct cell){.type = C_TEXT, .text = d});
}

int ctp_table_texts(struct ctp_table *t, const char *const *s, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = ctp_table_text(t, s[i]);
	return r;
}

int ctp_table_textf(struct ctp_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = add_vf(t, C_TEXT, fmt, ap);
	va_end(ap);
	return r;
}

int ctp_table_numf(struct ctp_table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = add_vf(t, C_NUMBER, fmt, ap);
	va_end(ap);
	return r;
}

int ctp_table_value(struct ctp_table *t, const struct ctp_value *v)
{
	return add_cell(t, (struct cell){.type = C_VALUE, .v = *v});
}

int ctp_table_absent(struct ctp_table *t)
{
	return add_cell(t, (struct cell){.type = C_ABSENT});
}

int ctp_table_skip(struct ctp_table *t, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = ctp_table_absent(t);
	return r;
}

void ctp_table_row_class(struct ctp_table *t, enum ctp_table_class c)
{
	t->cur_cls = (uint8_t)c;
}

void ctp_table_cell_class(struct ctp_table *t, enum ctp_table_class c)
{
	t->next_cls = (uint8_t)c;
}

/* ---- Names ---- */

#define NB CTP_TABLE_NAME_BYTES

void ctp_table_elide(struct ctp_table *t, size_t c, size_t max)
{
	t->cols[c].elide = max;
}

/* Length of the common prefix of a and b; of the common suffix when
 * `back`. */
static size_t common(const char *a, const char *b, bool back)
{
	size_t na = strlen(a), nb = strlen(b), k = 0;
	while (k < na && k < nb &&
	       (back ? a[na - 1 - k] == b[nb - 1 - k] : a[k] == b[k]))
		k++;
	return k;
}

static const char *const *names_sorted;
static bool names_back;
static int cmp_names(const void *pa, const void *pb)
{
	const char *a = names_sorted[*(const size_t *)pa],
		   *b = names_sorted[*(const size_t *)pb];
	if (!names_back)
		return strcmp(a, b);
	size_t na = strlen(a), nb = strlen(b), k = common(a, b, true);
	if (k == na || k == nb)
		return (na > nb) - (na < nb);
	return (unsigned char)a[na - 1 - k] - (unsigned char)b[nb - 1 - k];
}

/* For every name, the longest prefix (or suffix, `back`) it shares with
 * another, different name of the column: its neighbours once sorted. */
static void shared_parts(const char *const *full, size_t n, size_t *idx,
			 size_t *out, bool back)
{
	for (size_t i = 0; i < n; i++)
		idx[i] = i, out[i] = 0;
	names_sorted = full;
	names_back = back;
	qsort(idx, n, sizeof(*idx), cmp_names);
	/* A run of one name is no ambiguity: each run against the runs
	 * beside it, every member taking the largest. */
	size_t ps = 0, pe = 0; /* the previous run, [ps, pe) */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !strcmp(full[idx[j]], full[idx[i]]))
			j++;
		if (pe > ps) {
			size_t k = common(full[idx[ps]], full[idx[i]], back);
			for (size_t m = ps; m < j; m++)
				if (k > out[idx[m]])
					out[idx[m]] = k;
		}
		ps = i, pe = j, i = j;
	}
}

/* Step back to the start of a UTF-8 sequence (forward when `fwd`). */
static size_t seq_start(const char *s, size_t i, size_t n, bool fwd)
{
	while (i > 0 && i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
		i += fwd ? 1 : (size_t)-1;
	return i;
}

/* A name cut in the middle to about max characters, keeping more than
 * the lcp leading and lcs trailing bytes it shares with another name. */
static void elide_name(const char *src, size_t lcp, size_t lcs, size_t max,
		       char *out)
{
	size_t n = strlen(src);
	if (max > CTP_TABLE_NAME_MAX)
		max = CTP_TABLE_NAME_MAX;
	if ((ctp_render_width(src) <= max && n < NB) || max < 3) {
		snprintf(out, NB, "%s", src);
		return;
	}
	size_t keep = max - 1, head = keep / 2, tail = keep - head;
	if (head <= lcp && tail <= lcs) {
		if (lcp + 2 <= keep)
			head = lcp + 1, tail = keep - head;
		else if (lcs + 2 <= keep)
			tail = lcs + 1, head = keep - tail;
		else
			head = lcp + 1, tail = lcs + 1;
	}
	while (head + tail + 3 >= NB && tail > 1)
		tail--;
	while (head + tail + 3 >= NB && head > 1)
		head--;
	if (head + tail >= n) {
		snprintf(out, NB, "%.*s", (int)(NB - 1), src);
		return;
	}
	head = seq_start(src, head, n, false);
	size_t from = seq_start(src, n - tail, n, true);
	snprintf(out, NB, "%.*s%s%s", (int)head, src,
		 ctp_render_utf8() ? "\xe2\x80\xa6" : "~", src + from);
}

void ctp_table_elide_text(const char *src, size_t max, char *out)
{
	elide_name(src, 0, 0, max, out);
}

/* Column c's names elided (ctp_table_elide). */
static int elide_col(struct ctp_table *t, size_t c)
{
	size_t n = t->nrows, max = t->cols[c].elide;
	const char **full = calloc(n ? n : 1, sizeof(*full));
	size_t *lcp = calloc(n ? 3 * n : 1, sizeof(*lcp)), *lcs = lcp + n;
	int r = full && lcp ? 0 : -ENOMEM;
	bool cut = false;
	for (size_t i = 0; r == 0 && i < n; i++) {
		full[i] = ctp_table_cell(t, i, c);
		cut |= ctp_render_width(full[i]) > max || strlen(full[i]) >= NB;
	}
	if (r == 0 && cut) {
		shared_parts(full, n, lcs + n, lcp, false);
		shared_parts(full, n, lcs + n, lcs, true);
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct cell *k = &t->cells[i * t->ncols + c];
		char *e = k->type == C_TEXT ? malloc(NB) : NULL;
		if (!e)
			continue; /* not a name, or no memory: as it is */
		elide_name(k->text, lcp[i], lcs[i], max, e);
		free(k->text);
		k->text = e;
	}
	free(full);
	free(lcp);
	return r;
}

/* ---- Text ---- */

/* Each style's layout: before the first column, between columns; does a
 * line end at its last cell that is not empty (else at its last shown
 * column), is there a header line without rows. */
static const struct {
	const char *indent, *gap;
	bool trim, empty_header;
} styles[] = {
	[CTP_TABLE_GRID] = {"  ", "  ", true, false},
	[CTP_TABLE_VIEW] = {"", " ", false, true},
	[CTP_TABLE_LIST] = {"  ", " ", false, true},
};

#define STYLE(t) (&styles[(t)->style])

/* How wide a line of the shown columns is. */
static size_t line_width(const struct ctp_table *t)
{
	size_t total = 0, n = 0;
	for (size_t c = 0; c < t->ncols; c++)
		if (!t->cols[c].hidden)
			total += t->cols[c].w, n++;
	return strlen(STYLE(t)->indent) + total +
	       (n ? n - 1 : 0) * strlen(STYLE(t)->gap);
}

void ctp_table_width(struct ctp_table *t, size_t c, size_t min, size_t max)
{
	t->cols[c].min = min;
	t->cols[c].max = max;
}

void ctp_table_headless(struct ctp_table *t)
{
	t->headless = true;
}

/* Does no row show anything in column c? */
static bool col_empty(const struct ctp_table *t, size_t c)
{
	for (size_t r = 0; r < t->nrows; r++) {
		const char *s = ctp_table_cell(t, r, c);
		if (s[0] && strcmp(s, "-") != 0)
			return false;
	}
	return t->nrows > 0;
}

/* Cut the widest column wider than `min` by what the line is over (at
 * least one character). False when none is. */
static bool cut_widest(struct ctp_table *t, size_t over, size_t min)
{
	size_t widest = 0, wc = 0;
	for (size_t c = 0; c < t->ncols; c++)
		if (!t->cols[c].hidden && t->cols[c].w > widest)
			widest = t->cols[c].w, wc = c;
	if (widest <= min)
		return false;
	t->cols[wc].w = over < widest - min ? widest - over : min;
	return true;
}

static void hide_title(struct ctp_table *t, const char *title)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!t->cols[c].hidden && !strcmp(t->cols[c].title, title)) {
			t->cols[c].hidden = true;
			return;
		}
}

/* Hide the first column that passes width, and every one after it, but
 * CTP_TABLE_KEEP ones. */
static void hide_past(struct ctp_table *t, size_t width)
{
	size_t used = strlen(STYLE(t)->indent), n = 0;
	bool past = false;
	for (size_t c = 0; c < t->ncols; c++) {
		struct col *k = &t->cols[c];
		if (k->hidden)
			continue;
		size_t w = (n ? strlen(STYLE(t)->gap) : 0) + k->w;
		if (!(k->flags & CTP_TABLE_KEEP) &&
		    (past || used + w > width)) {
			k->hidden = past = true;
			continue;
		}
		used += w, n++;
	}
}

int ctp_table_fit(struct ctp_table *t, size_t width, const char *const *steps)
{
	t->width = width;
	for (size_t c = 0; c < t->ncols; c++) {
		struct col *k = &t->cols[c];
		if (k->elide && elide_col(t, c) < 0)
			return -ENOMEM;
		if ((k->flags & CTP_TABLE_HIDE_EMPTY) && col_empty(t, c))
			k->hidden = true;
		k->w = t->headless ? 0 : ctp_render_width(k->title);
		for (size_t r = 0;
		     !(k->flags & CTP_TABLE_OVERFLOW) && r < t->nrows; r++) {
			size_t w = ctp_render_width(ctp_table_cell(t, r, c));
			if (w > k->w)
				k->w = w;
		}
		if (k->w < k->min)
			k->w = k->min;
		if (k->max && k->w > k->max)
			k->w = k->max;
	}
	for (size_t i = 0; width && steps && steps[i];) {
		size_t total = line_width(t);
		if (total <= width)
			return 0;
		if (steps[i][0] == '<') {
			if (!cut_widest(t, total - width,
					(size_t)atoi(steps[i] + 1)))
				i++;
		} else if (steps[i][0] == '>') {
			hide_past(t, width);
			i++;
		} else {
			hide_title(t, steps[i++]);
		}
	}
	return 0;
}

/* The byte offset of the i-th character of s (its end when shorter). */
static size_t char_at(const char *s, size_t i)
{
	size_t n = 0;
	const char *p = s;
	for (; *p; p++)
		if (((unsigned char)*p & 0xc0) != 0x80 && n++ == i)
			break;
	return (size_t)(p - s);
}

/* s wrapped at `width` (ctp_table_fit's), starting at column `at`, each
 * further line indented to `indent` (CTP_TABLE_WRAP); the first line not
 * broken within its first `hang` characters (a label such as "hint: "). */
static void put_wrapped(FILE *out, const char *s, size_t at, size_t indent,
			size_t hang, size_t width)
{
	if (!width || width <= indent + 20) {
		fputs(s, out);
		return;
	}
	while (*s) {
		size_t room = width > at ? width - at : 1, n = strlen(s);
		if (ctp_render_width(s) > room) {
			size_t end = char_at(s, room), cut = end;
			while (cut > hang && s[cut] != ' ')
				cut--;
			/* A word longer than a line is cut. */
			n = cut > hang ? cut : end;
		}
		fwrite(s, 1, n, out);
		s += n;
		while (*s == ' ')
			s++;
		if (*s)
			fprintf(out, "\n%*s", (int)indent, "");
		at = indent;
		hang = 0;
	}
}

/* Colour around a cell: the cell's sequence before it; after it, a reset
 * and the row's sequence again. Through ctp_term_raw, past the rule. */
struct paint {
	const char *cell, *row; /* NULL: none */
};

static void paint_on(FILE *out, const struct paint *p)
{
	if (p->cell)
		ctp_term_raw(out, p->cell);
}

static void paint_off(FILE *out, const struct paint *p)
{
	if (!p->cell)
		return;
	ctp_term_raw(out, CTP_SGR_RESET);
	if (p->row)
		ctp_term_raw(out, p->row);
}

/* s in exactly w display characters (none after it when last). Wider: cut
 * in the middle with "..." so that both ends of a name stay
 * (taskstats.f...delay_total and taskstats.f...delay_max stay apart);
 * right-aligned cells keep the head; a column with a maximum width its
 * head only, with no mark; a CTP_TABLE_OVERFLOW one shows it whole. The
 * text in p's colour, the padding not. Returns how many characters it
 * took. */
static size_t put_cell(FILE *out, const char *s, const struct col *k, bool last,
		       const struct paint *p)
{
	size_t sw = ctp_render_width(s), w = k->w;
	bool right = k->flags & CTP_TABLE_RIGHT;
	size_t pad = sw < w ? w - sw : 0;
	if (sw <= w && right)
		fprintf(out, "%*s", (int)pad, "");
	paint_on(out, p);
	if (sw > w && k->flags & CTP_TABLE_OVERFLOW) {
		fputs(s, out);
		w = sw;
	} else if (sw > w && k->max) {
		fwrite(s, 1, char_at(s, w), out);
	} else if (sw > w) {
		size_t keep = w > 3 ? w - 3 : 0;
		size_t tail = right ? 0 : keep / 2, head = keep - tail;
		fwrite(s, 1, char_at(s, head), out);
		fputs(w >= 3 ? "..." : "", out);
		fputs(s + char_at(s, sw - tail), out);
	} else {
		fputs(s, out);
	}
	paint_off(out, p);
	if (sw <= w && !right && !last)
		fprintf(out, "%*s", (int)pad, "");
	return w;
}

/* The column a line stops at: its last shown cell that is not empty (so
 * that it never ends in padding), or its last shown column. */
static size_t line_last(const struct ctp_table *t, const char *const *line)
{
	size_t last = STYLE(t)->trim ? 0 : SIZE_MAX;
	for (size_t c = 0; c < t->ncols; c++)
		if (!t->cols[c].hidden && (!STYLE(t)->trim || *line[c]))
			last = c;
	return last;
}

/* The sequence a cell of class cls in column k is shown in (with colour);
 * NULL for none. The header's sort title bold and underlined. */
static const char *cell_sgr(const struct col *k, uint8_t cls, bool header)
{
	static const char *const by_class[][2] = {
		[CTP_TABLE_PLAIN] = {NULL, CTP_SGR_BOLD},
		[CTP_TABLE_NEW] = {CTP_SGR_GREEN, "\033[1;32m"},
		[CTP_TABLE_GONE] = {CTP_SGR_RED, "\033[1;31m"},
		[CTP_TABLE_CHANGED] = {CTP_SGR_YELLOW, "\033[1;33m"},
		[CTP_TABLE_NOTE] = {CTP_SGR_CYAN, "\033[1;36m"},
	};
	bool sorted = k->flags & CTP_TABLE_SORTED;
	if (header)
		return sorted ? "\033[1;4m" : NULL;
	return cls < sizeof(by_class) / sizeof(by_class[0])
		       ? by_class[cls][sorted]
		       : NULL;
}

/* One line: the cells of line[], with colour the row in `row` (NULL:
 * none) and each cell in its own (cls[c]; header: the titles'). */
static void print_line(const struct ctp_table *t, FILE *out,
		       const char *const *line, const char *row,
		       const struct cell *cells, bool color)
{
	size_t last = line_last(t, line), at = 0, start = 0;
	bool first = true;
	for (size_t c = 0; c < t->ncols && (last == SIZE_MAX || c <= last);
	     c++) {
		const struct col *k = &t->cols[c];
		if (k->hidden)
			continue;
		const char *sep = first ? STYLE(t)->indent : STYLE(t)->gap;
		struct paint p = {
			.cell = color ? cell_sgr(k, cells ? cells[c].cls : 0,
						 !cells)
				      : NULL,
			.row = row};
		first = false;
		fputs(sep, out);
		at += strlen(sep);
		start += strlen(sep);
		if (c == last && (k->flags & CTP_TABLE_WRAP)) {
			paint_on(out, &p);
			put_wrapped(out, line[c], at, start + k->hang, k->hang,
				    t->width);
			paint_off(out, &p);
		} else {
			at += put_cell(out, line[c], k, c == last, &p);
		}
		start += k->w;
	}
}

void ctp_table_print(const struct ctp_table *t, FILE *out, bool color)
{
	static const char *const sgr[] = {"", CTP_SGR_GREEN, CTP_SGR_RED,
					  CTP_SGR_YELLOW, CTP_SGR_CYAN};
	if (!t->nrows && !STYLE(t)->empty_header)
		return;
	const char **line = calloc(t->ncols ? t->ncols : 1, sizeof(*line));
	if (!line)
		return;
	for (size_t r = t->headless; r <= t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++)
			line[c] = r ? ctp_table_cell(t, r - 1, c)
				    : t->cols[c].title;
		const char *on = !color ? ""
				 : !r	? CTP_SGR_BOLD
					: sgr[t->cls[r - 1]];
		if (*on)
			ctp_term_raw(out, on);
		print_line(t, out, line, *on ? on : NULL,
			   r ? &t->cells[(r - 1) * t->ncols] : NULL, color);
		if (*on)
			ctp_term_raw(out, CTP_SGR_RESET);
		fputc('\n', out);
	}
	free(line);
}
