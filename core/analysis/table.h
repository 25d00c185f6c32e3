/* SPDX-License-Identifier: MIT */
/*
 * One table for every printed output (systemd's format-table is the
 * model): a verb builds a table of typed cells under titled columns and
 * the table prints itself, as text fitted to a terminal's width, or as
 * CSV, JSON or NDJSON rows. The one CSV escaper and the one JSON escaper
 * are here, with the writers of exact values. Private to the core.
 *
 * Cells are added row by row, left to right; a row is complete after one
 * cell per column. A text cell is shown as given on a terminal (the
 * caller renders and escapes it, render.h); in CSV it is quoted as needed
 * and in JSON it is a string. A number cell is a literal, never quoted. A
 * value cell is a snapshot value written exactly (integers in full, cpu
 * sets in the kernel's list format, bytes that are no UTF-8 as \u00XX). An
 * absent cell is empty text, an empty CSV cell, JSON null.
 */
#ifndef CTP_CORE_TABLE_H
#define CTP_CORE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "reader.h"

struct ctp_table;

/* Column flags. */
enum {
	CTP_TABLE_RIGHT = 1u << 0, /* right-aligned (numbers, ids) */
	/* Never hidden by the fit step ">" (a view's key columns). */
	CTP_TABLE_KEEP = 1u << 1,
	/* Hidden when no row shows anything in it ("" or "-"). */
	CTP_TABLE_HIDE_EMPTY = 1u << 2,
	/* As wide as its title and minimum only: a longer cell is shown
	 * whole and moves the rest of its own line right (printf's "%-10s"),
	 * every other line keeps its alignment (a listing's names). */
	CTP_TABLE_OVERFLOW = 1u << 3,
	/* When the table is fitted to a width, a cell of this column that
	 * ends its line and would pass the width wraps at spaces (a word
	 * longer than the room is cut), each further line indented to the
	 * column's start and its hang (a hanging indent: "hint: " and the
	 * text under the text); as it is when that leaves 20 characters of
	 * room or fewer. */
	CTP_TABLE_WRAP = 1u << 4,
	/* The column the rows are sorted by: with colour, its title and
	 * cells in bold. */
	CTP_TABLE_SORTED = 1u << 5,
};

/* A row's or a cell's colour on a terminal that takes colour (an
 * attribute, never bytes in the cell: widths count what is seen). */
enum ctp_table_class {
	CTP_TABLE_PLAIN = 0,
	CTP_TABLE_NEW = 1,     /* green: a group only in CAND */
	CTP_TABLE_GONE = 2,    /* red: a group only in BASE, or exited */
	CTP_TABLE_CHANGED = 3, /* yellow: restarted (replaced, same key) */
	CTP_TABLE_NOTE = 4,    /* cyan: renamed */
};

/* How text is laid out. */
enum ctp_table_style {
	/* "  " before every column; a line ends at its last cell that is
	 * not empty; no header line when there are no rows (show,
	 * compare). */
	CTP_TABLE_GRID = 0,
	/* " " between columns; a line ends at the last shown column; the
	 * header line even without rows (views). */
	CTP_TABLE_VIEW = 1,
	/* "  " before every column, " " between; a line ends at the last
	 * shown column; the header line even without rows (plugins). */
	CTP_TABLE_LIST = 2,
};

enum ctp_table_format {
	CTP_TABLE_TEXT = 0,
	CTP_TABLE_CSV = 1,    /* RFC 4180, a header line, LF line ends */
	CTP_TABLE_JSON = 2,   /* one array of objects, one object a line */
	CTP_TABLE_NDJSON = 3, /* one object a line, nothing around them */
};

/* A new empty table in `style`; NULL when out of memory. */
struct ctp_table *ctp_table_new(enum ctp_table_style style);
/* A column declared: its title, CTP_TABLE_* flags, minimum width, and
 * for CTP_TABLE_WRAP the hang of its further lines. */
struct ctp_table_col {
	const char *title;
	unsigned flags;
	size_t min, hang;
};
/* A new table in `style` with n such columns; NULL when out of memory. */
struct ctp_table *ctp_table_new_cols(enum ctp_table_style style,
				     const struct ctp_table_col *cols,
				     size_t n);
/* Frees t and everything it owns; NULL is fine. */
void ctp_table_free(struct ctp_table *t);

/*
 * Add a column (before any cell): its header, copied, and CTP_TABLE_*
 * flags. Returns its index or -ENOMEM.
 */
int ctp_table_add_col(struct ctp_table *t, const char *title, unsigned flags);
size_t ctp_table_n_cols(const struct ctp_table *t);
/* Column c at least min characters wide, and at most max (0: no limit)
 * with its cells' ends cut off (no mark). */
void ctp_table_width(struct ctp_table *t, size_t c, size_t min, size_t max);
/* No header line in the text output (titles count for no width). */
void ctp_table_headless(struct ctp_table *t);
/* Hide column c from the text output (it stays in CSV and JSON). */
void ctp_table_hide(struct ctp_table *t, size_t c);
/*
 * Names: the text cells of column c elided by ctp_table_fit, each in the
 * middle to about max characters (at most CTP_TABLE_NAME_MAX) with one
 * mark ("\u2026", or "~" when the terminal takes no UTF-8), keeping enough
 * of its head or tail that no other name of the column reads the same; a
 * name that cannot be told apart within max keeps more. An elided name
 * is at most CTP_TABLE_NAME_BYTES bytes with its NUL.
 */
void ctp_table_elide(struct ctp_table *t, size_t c, size_t max);
#define CTP_TABLE_NAME_BYTES 64
#define CTP_TABLE_NAME_MAX   (CTP_TABLE_NAME_BYTES - 4)
/* One name elided so, into out (CTP_TABLE_NAME_BYTES). */
void ctp_table_elide_text(const char *src, size_t max, char *out);
/* Is column c shown in the text output, after ctp_table_fit? */
bool ctp_table_shown(const struct ctp_table *t, size_t c);

/*
 * Write rows to out in `fmt` as they are completed instead of keeping
 * them (the CSV header now), for tables of many rows. Call before the
 * first cell; ctp_table_end finishes.
 */
void ctp_table_stream(struct ctp_table *t, FILE *out,
		      enum ctp_table_format fmt);
/* The end of a streamed table (JSON's closing bracket). 0; the first
 * error of a cell (-ENOMEM), which wrote nothing more; -EIO when out
 * reported an error. */
int ctp_table_end(struct ctp_table *t);

/* Cells of the current row. Each returns 0 or -ENOMEM. A failure sticks:
 * the table drops every later cell and ctp_table_end returns it, so a
 * writer may check once. */
int ctp_table_text(struct ctp_table *t, const char *s);
int ctp_table_textf(struct ctp_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* n text cells. */
int ctp_table_texts(struct ctp_table *t, const char *const *s, size_t n);
/* A number as printf formats it: "%.4Lf", "%" PRIu64... */
int ctp_table_numf(struct ctp_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A value, borrowed until the row is written or the table freed. */
int ctp_table_value(struct ctp_table *t, const struct ctp_value *v);
/* (In a table of no columns, one absent cell adds an empty row.) */
int ctp_table_absent(struct ctp_table *t);
/* n absent cells. */
int ctp_table_skip(struct ctp_table *t, size_t n);
/* The colour of the current row (before its last cell). */
void ctp_table_row_class(struct ctp_table *t, enum ctp_table_class c);
/* The colour of the next cell added (inside its row's). */
void ctp_table_cell_class(struct ctp_table *t, enum ctp_table_class c);
size_t ctp_table_n_rows(const struct ctp_table *t);
/* The text of a kept cell ("" when absent). */
const char *ctp_table_cell(const struct ctp_table *t, size_t row, size_t col);

/*
 * Text: the column widths (each its widest cell or title, within its
 * minimum and maximum, ctp_table_width), columns with
 * CTP_TABLE_HIDE_EMPTY hidden when no row shows anything in them, then,
 * when width is not 0, the steps in order, each taken only while a line
 * would be wider than width: "<N" cuts the widest column to what the line
 * is over but to no less than N characters (a cut cell loses its middle
 * to "...": both ends of a name stay; a right-aligned one its end), and
 * moves to the next step when no column is wider than N; ">" hides the
 * first column that would pass width and every one after it, except
 * CTP_TABLE_KEEP ones; any other step hides the column of that title.
 * steps may be NULL. Names are elided (ctp_table_elide) first. A
 * CTP_TABLE_WRAP column wraps at width. Returns 0 or -ENOMEM.
 */
int ctp_table_fit(struct ctp_table *t, size_t width, const char *const *steps);
/* The text of the kept rows: the header (bold with colour), then each
 * row (in its class's colour, its cells in theirs, a CTP_TABLE_SORTED
 * column in bold); ctp_table_fit first. With colour or without, every
 * character is where it is without: the sequences go around cells, past
 * ctp_term_stream's rule (ctp_term_raw). */
void ctp_table_print(const struct ctp_table *t, FILE *out, bool color);
/* The kept rows in a machine format (as streamed). 0, or -EIO. */
int ctp_table_write(const struct ctp_table *t, FILE *out,
		    enum ctp_table_format fmt);

/* ---- Documents ---- */

/*
 * A JSON document of named tables and members (compare's: a header, then
 * a section per part, each holding its rows), written compactly as it is
 * built, through the one escaper and the exact value writer; the document
 * places every comma. Each call adds one member: named `key` inside an
 * object, an element (key NULL) inside an array or at the top.
 */
#define CTP_TABLE_DOC_DEPTH 16
struct ctp_table_doc {
	FILE *out;
	unsigned depth;
	char close[CTP_TABLE_DOC_DEPTH]; /* '}' or ']' of each open level */
	bool more[CTP_TABLE_DOC_DEPTH];	 /* has it a member yet */
};
void ctp_table_doc_init(struct ctp_table_doc *d, FILE *out);
/* Open an object ('{') or an array ('['); nesting past
 * CTP_TABLE_DOC_DEPTH levels is a bug (the level is not kept). */
void ctp_table_doc_open(struct ctp_table_doc *d, const char *key, char c);
/* Close the innermost open object or array. */
void ctp_table_doc_close(struct ctp_table_doc *d);
/* A string; null when s is NULL. */
void ctp_table_doc_text(struct ctp_table_doc *d, const char *key,
			const char *s);
void ctp_table_doc_str(struct ctp_table_doc *d, const char *key, const char *s,
		       size_t n);
/* A number as printf formats it. */
void ctp_table_doc_numf(struct ctp_table_doc *d, const char *key,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ctp_table_doc_null(struct ctp_table_doc *d, const char *key);
void ctp_table_doc_bool(struct ctp_table_doc *d, const char *key, bool b);
/* A value exactly (ctp_table_json_value). */
void ctp_table_doc_value(struct ctp_table_doc *d, const char *key,
			 const struct ctp_value *v);
/* The rows of t as an array of objects, one member of a column each (as
 * CTP_TABLE_JSON writes them, without line breaks). */
void ctp_table_doc_table(struct ctp_table_doc *d, const char *key,
			 const struct ctp_table *t);

/* ---- The escapers and exact values, for every writer ---- */

/*
 * n bytes at s as a JSON string: well-formed UTF-8 copied, '"', '\\' and
 * control characters escaped, every other byte as \u00XX of itself
 * (docs/FORMAT.md). The one JSON escaper.
 */
void ctp_table_json_str(FILE *f, const char *s, size_t n);
/* A NUL-terminated string as JSON; null when s is NULL. */
void ctp_table_json_text(FILE *f, const char *s);
/*
 * n bytes at s as CSV text: well-formed UTF-8 as it is, any other byte as
 * \u00XX of itself (as dump writes it); quoted, quotes doubled, only when
 * the text holds a comma, a quote, CR or LF, or is empty (an empty string
 * is "", an empty cell is absent). The one CSV escaper.
 */
void ctp_table_csv_str(FILE *f, const char *s, size_t n);
/* A value exactly as JSON: numbers, true/false, strings, a cpu set as the
 * string "0-3,8"; null when absent. */
void ctp_table_json_value(FILE *f, const struct ctp_value *v);
/* A value exactly as CSV: the same, a cpu set quoted unless one range;
 * nothing when absent. */
void ctp_table_csv_value(FILE *f, const struct ctp_value *v);

#endif
