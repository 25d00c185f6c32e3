/* SPDX-License-Identifier: MIT */
/*
 * The one table of every printed output (core/analysis/table.c): its CSV
 * and JSON escapers, its machine formats, the fitting of its text to a
 * width, the elision of names. (test_json_escape: the commands' output.)
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table.h"

/* What fn writes to a stream, malloc'ed. */
static char *written(void (*fn)(FILE *f, void *arg), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void csv_of(FILE *f, void *arg)
{
	const char *s = arg;
	ctp_table_csv_str(f, s, strlen(s));
}

static void json_of(FILE *f, void *arg)
{
	const char *s = arg;
	ctp_table_json_str(f, s, strlen(s));
}

static void expect(void (*fn)(FILE *f, void *arg), const char *in,
		   const char *want)
{
	char *got = written(fn, (void *)in);
	assert_string_equal(got, want);
	free(got);
}

static void test_csv_escaper(void **unused)
{
	(void)unused;
	expect(csv_of, "plain", "plain");
	expect(csv_of, "", "\"\"");
	expect(csv_of, "a,b", "\"a,b\"");
	expect(csv_of, "say \"hi\"", "\"say \"\"hi\"\"\"");
	expect(csv_of, "two\nlines", "\"two\nlines\"");
	/* A byte that is no UTF-8 as dump writes it; UTF-8 as it is. */
	expect(csv_of, "w\xff\xc3\xa9", "w\\u00ff\xc3\xa9");
}

static void test_json_escaper(void **unused)
{
	(void)unused;
	expect(json_of, "", "\"\"");
	expect(json_of, "q\"b\\", "\"q\\\"b\\\\\"");
	expect(json_of, "\x01\t\n\x7f", "\"\\u0001\\t\\n\\u007f\"");
	expect(json_of, "w\xff\xc3\xa9", "\"w\\u00ff\xc3\xa9\"");
}

/* A table of a text column, a number column and a value column. */
static struct ctp_table *sample(void)
{
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	assert_non_null(t);
	assert_int_equal(ctp_table_add_col(t, "name", 0), 0);
	assert_int_equal(ctp_table_add_col(t, "n", CTP_TABLE_RIGHT), 1);
	assert_int_equal(ctp_table_add_col(t, "v", 0), 2);
	struct ctp_value v = {.type = CTP_TYPE_U64, .u64 = 7};
	assert_int_equal(ctp_table_text(t, "a,b"), 0);
	assert_int_equal(ctp_table_numf(t, "%.2f", 1.5), 0);
	assert_int_equal(ctp_table_value(t, &v), 0);
	v = (struct ctp_value){.type = CTP_TYPE_STRING, .str = {"x\"y", 3}};
	assert_int_equal(ctp_table_absent(t), 0);
	assert_int_equal(ctp_table_numf(t, "%d", 2), 0);
	assert_int_equal(ctp_table_value(t, &v), 0);
	assert_int_equal(ctp_table_n_rows(t), 2);
	return t;
}

static void write_csv(FILE *f, void *arg)
{
	assert_int_equal(ctp_table_write(arg, f, CTP_TABLE_CSV), 0);
}

static void write_json(FILE *f, void *arg)
{
	assert_int_equal(ctp_table_write(arg, f, CTP_TABLE_JSON), 0);
}

static void write_ndjson(FILE *f, void *arg)
{
	assert_int_equal(ctp_table_write(arg, f, CTP_TABLE_NDJSON), 0);
}

static void test_formats(void **unused)
{
	(void)unused;
	struct ctp_table *t = sample();
	expect(write_csv, (void *)t,
	       "name,n,v\n\"a,b\",1.50,7\n,2,\"x\"\"y\"\n");
	expect(write_json, (void *)t,
	       "[\n{\"name\":\"a,b\",\"n\":1.50,\"v\":7},\n"
	       "{\"name\":null,\"n\":2,\"v\":\"x\\\"y\"}\n]\n");
	expect(write_ndjson, (void *)t,
	       "{\"name\":\"a,b\",\"n\":1.50,\"v\":7}\n"
	       "{\"name\":null,\"n\":2,\"v\":\"x\\\"y\"}\n");
	ctp_table_free(t);

	/* No rows: an empty array; no columns: one empty object a row. */
	t = ctp_table_new(CTP_TABLE_GRID);
	expect(write_json, (void *)t, "[]\n");
	assert_int_equal(ctp_table_absent(t), 0);
	assert_int_equal(ctp_table_absent(t), 0);
	expect(write_json, (void *)t, "[\n{},\n{}\n]\n");
	ctp_table_free(t);
}

/* Streamed rows are written as they are completed, and kept nowhere. */
static void test_stream(void **unused)
{
	(void)unused;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ctp_table *t = ctp_table_new(CTP_TABLE_GRID);
	assert_int_equal(ctp_table_add_col(t, "a", 0), 0);
	ctp_table_stream(t, f, CTP_TABLE_JSON);
	assert_int_equal(ctp_table_text(t, "x"), 0);
	fflush(f);
	assert_string_equal(buf, "[\n{\"a\":\"x\"}");
	assert_int_equal(ctp_table_n_rows(t), 0);
	assert_int_equal(ctp_table_end(t), 0);
	fclose(f);
	assert_string_equal(buf, "[\n{\"a\":\"x\"}\n]\n");
	free(buf);
	ctp_table_free(t);
}

struct text_case {
	struct ctp_table *t;
	size_t width;
	const char *const *steps;
};

static void write_text(FILE *f, void *arg)
{
	struct text_case *c = arg;
	ctp_table_fit(c->t, c->width, c->steps);
	ctp_table_print(c->t, f, false);
}

static struct ctp_table *grid(enum ctp_table_style style, unsigned flags)
{
	static const char *const rows[][3] = {
		{"taskstats.cpu_delay_total", "12", "-"},
		{"taskstats.cpu_delay_max", "3", ""}};
	struct ctp_table *t = ctp_table_new(style);
	assert_int_equal(ctp_table_add_col(t, "FIELD", CTP_TABLE_KEEP), 0);
	assert_int_equal(ctp_table_add_col(t, "N", CTP_TABLE_RIGHT), 1);
	assert_int_equal(ctp_table_add_col(t, "NOTE", flags), 2);
	for (size_t r = 0; r < 2; r++)
		assert_int_equal(ctp_table_texts(t, rows[r], 3), 0);
	return t;
}

static void test_text_fit(void **unused)
{
	(void)unused;
	/* Grid: "  " before each column, a line ends at its last cell that
	 * is not empty. */
	struct text_case c = {grid(CTP_TABLE_GRID, 0), 0, NULL};
	expect(write_text, (void *)&c,
	       "  FIELD                       N  NOTE\n"
	       "  taskstats.cpu_delay_total  12  -\n"
	       "  taskstats.cpu_delay_max     3\n");
	ctp_table_free(c.t);

	/* Cut in the middle to what the line is over, both ends kept. */
	static const char *const cut[] = {"<10", NULL};
	c = (struct text_case){grid(CTP_TABLE_GRID, 0), 30, cut};
	expect(write_text, (void *)&c,
	       "  FIELD                N  NOTE\n"
	       "  taskstat...y_total  12  -\n"
	       "  taskstat...lay_max   3\n");
	ctp_table_free(c.t);

	/* A step naming a column hides it. */
	static const char *const drop[] = {"N", NULL};
	c = (struct text_case){grid(CTP_TABLE_GRID, 0), 33, drop};
	expect(write_text, (void *)&c,
	       "  FIELD                      NOTE\n"
	       "  taskstats.cpu_delay_total  -\n"
	       "  taskstats.cpu_delay_max\n");
	ctp_table_free(c.t);

	/* View: " " between columns; a column that shows nothing is hidden;
	 * ">" hides from the first column past the width on, never a
	 * KEEP one. */
	c = (struct text_case){grid(CTP_TABLE_VIEW, CTP_TABLE_HIDE_EMPTY), 0,
			       NULL};
	expect(write_text, (void *)&c,
	       "FIELD                      N\n"
	       "taskstats.cpu_delay_total 12\n"
	       "taskstats.cpu_delay_max    3\n");
	ctp_table_free(c.t);
	static const char *const past[] = {">", NULL};
	c = (struct text_case){grid(CTP_TABLE_VIEW, 0), 27, past};
	expect(write_text, (void *)&c,
	       "FIELD\n"
	       "taskstats.cpu_delay_total\n"
	       "taskstats.cpu_delay_max\n");
	assert_false(ctp_table_shown(c.t, 1));
	assert_false(ctp_table_shown(c.t, 2));
	ctp_table_free(c.t);
}

static void write_color(FILE *f, void *arg)
{
	struct text_case *c = arg;
	ctp_table_fit(c->t, c->width, c->steps);
	ctp_table_print(c->t, f, true);
}

/* Colour is an attribute: the sequences go around a cell's text (never
 * its padding), a cut cell is cut as without colour, and with the
 * sequences taken out the text is the plain one. */
static void test_color(void **unused)
{
	(void)unused;
	static const char *const cut[] = {"<10", NULL};
	struct ctp_table *t = ctp_table_new(CTP_TABLE_VIEW);
	assert_int_equal(ctp_table_add_col(t, "NAME", CTP_TABLE_KEEP), 0);
	assert_int_equal(ctp_table_add_col(t, "NEW", 0), 1);
	assert_int_equal(
		ctp_table_add_col(t, "N", CTP_TABLE_RIGHT | CTP_TABLE_SORTED),
		2);
	assert_int_equal(ctp_table_text(t, "taskstats.cpu_delay_total"), 0);
	ctp_table_cell_class(t, CTP_TABLE_NEW);
	assert_int_equal(ctp_table_text(t, "new"), 0);
	assert_int_equal(ctp_table_text(t, "12"), 0);
	ctp_table_row_class(t, CTP_TABLE_GONE);
	assert_int_equal(ctp_table_text(t, "cc1"), 0);
	ctp_table_cell_class(t, CTP_TABLE_CHANGED);
	assert_int_equal(ctp_table_text(t, "restarted"), 0);
	assert_int_equal(ctp_table_text(t, "3"), 0);
	struct text_case c = {t, 24, cut};
	char *got = written(write_color, &c);
	assert_string_equal(
		got, "\033[1mNAME        NEW        "
		     "\033[1;4mN\033[0m\033[1m\033[0m\n"
		     "task...otal \033[32mnew\033[0m       \033[1m12\033[0m\n"
		     "\033[31mcc1         \033[33mrestarted\033[0m\033[31m  "
		     "\033[1m3\033[0m\033[31m\033[0m\n");
	char *plain = written(write_text, &c);
	/* Taken out, the sequences leave the plain text. */
	char *o = got;
	for (const char *p = got; *p;) {
		if (*p == '\033')
			p = strchr(p, 'm') + 1;
		else
			*o++ = *p++;
	}
	*o = '\0';
	assert_string_equal(got, plain);
	free(got);
	free(plain);
	ctp_table_free(t);
}

/* An overflow column keeps its width: a longer cell moves the rest of its
 * own line only (printf's "%-10s"), as the views and plugins listings
 * print. List style: "  " before, " " between, no line trimmed. */
static void test_overflow(void **unused)
{
	(void)unused;
	static const struct ctp_table_col cols[] = {
		{"COLUMN", CTP_TABLE_OVERFLOW, 10, 0},
		{"LABEL", CTP_TABLE_OVERFLOW, 8, 0},
		{"FROM", 0, 0, 0}};
	static const char *const rows[][3] = {
		{"usage", "CPU", "cgroup.usage"},
		{"nr_throttled", "NTHR", "cgroup.nr_throttled"},
		{"pids", "THROTTLED", ""}};
	struct text_case c = {ctp_table_new_cols(CTP_TABLE_VIEW, cols, 3), 0,
			      NULL};
	for (size_t r = 0; r < 3; r++)
		assert_int_equal(ctp_table_texts(c.t, rows[r], 3), 0);
	expect(write_text, (void *)&c,
	       "COLUMN     LABEL    FROM\n"
	       "usage      CPU      cgroup.usage\n"
	       "nr_throttled NTHR     cgroup.nr_throttled\n"
	       "pids       THROTTLED \n");
	ctp_table_free(c.t);

	c.t = ctp_table_new_cols(CTP_TABLE_LIST, cols, 3);
	expect(write_text, (void *)&c, "  COLUMN     LABEL    FROM\n");
	for (size_t r = 0; r < 2; r++)
		assert_int_equal(ctp_table_texts(c.t, rows[r], 3), 0);
	expect(write_text, (void *)&c,
	       "  COLUMN     LABEL    FROM\n"
	       "  usage      CPU      cgroup.usage\n"
	       "  nr_throttled NTHR     cgroup.nr_throttled\n");
	ctp_table_free(c.t);
}

/* A last column that wraps at the fitted width, at spaces, each further
 * line indented to the column's start (show's plugins); as it is without
 * a width or with 20 characters of room or fewer. An empty one still ends
 * its line. A cell that ends its line in a column with a hang (the
 * status, for a hint) hangs its further lines past the column's start. */
static void test_wrap(void **unused)
{
	(void)unused;
	static const struct ctp_table_col cols[] = {
		{"NAME", 0, 0, 0},
		{"STATUS", CTP_TABLE_OVERFLOW | CTP_TABLE_WRAP, 8, 6},
		{"TEXT", CTP_TABLE_WRAP, 0, 0}};
	static const char *const rows[][3] = {
		{"io", "loaded", "0.1.0, 2 calls, 0 errors; parse_errors=0"},
		{"psi", "failed", "(no such file: /proc/pressure/cpu)"},
		{"smaps", "disabled", ""},
		{"", "hint: a-word-longer-than-the-room-of-a-line here", ""}};
	struct text_case c = {ctp_table_new_cols(CTP_TABLE_GRID, cols, 3), 42,
			      NULL};
	for (size_t r = 0; r < 4; r++)
		assert_int_equal(ctp_table_texts(c.t, rows[r], 3), 0);
	ctp_table_headless(c.t);
	expect(write_text, (void *)&c,
	       "  io     loaded    0.1.0, 2 calls, 0\n"
	       "                   errors; parse_errors=0\n"
	       "  psi    failed    (no such file:\n"
	       "                   /proc/pressure/cpu)\n"
	       "  smaps  disabled\n"
	       "         hint: a-word-longer-than-the-room\n"
	       "               -of-a-line here\n");
	c.width = 0;
	expect(write_text, (void *)&c,
	       "  io     loaded    0.1.0, 2 calls, 0 errors; parse_errors=0\n"
	       "  psi    failed    (no such file: /proc/pressure/cpu)\n"
	       "  smaps  disabled\n"
	       "         hint: a-word-longer-than-the-room-of-a-line here\n");
	/* 20 characters of room or fewer past the indent (the text's 19,
	 * the hint's 9 + 6): as it is. */
	c.width = 35;
	expect(write_text, (void *)&c,
	       "  io     loaded    0.1.0, 2 calls, 0 errors; parse_errors=0\n"
	       "  psi    failed    (no such file: /proc/pressure/cpu)\n"
	       "  smaps  disabled\n"
	       "         hint: a-word-longer-than-the-room-of-a-line here\n");
	/* Never broken after the hang's label. */
	ctp_table_free(c.t);
	c.width = 42;
	c.t = ctp_table_new_cols(CTP_TABLE_GRID, cols, 3);
	assert_int_equal(ctp_table_texts(c.t, rows[3], 3), 0);
	ctp_table_headless(c.t);
	expect(write_text, (void *)&c,
	       "    hint: a-word-longer-than-the-room-of-a\n"
	       "          -line here\n");
	ctp_table_free(c.t);
}

static void write_doc(FILE *f, void *arg)
{
	struct ctp_table_doc d;
	const struct ctp_value v = {.type = CTP_TYPE_U64, .u64 = 7};
	ctp_table_doc_init(&d, f);
	ctp_table_doc_open(&d, NULL, '{');
	ctp_table_doc_text(&d, "say \"hi\"", "a\nb");
	ctp_table_doc_open(&d, "key", '[');
	ctp_table_doc_text(&d, NULL, "x");
	ctp_table_doc_null(&d, NULL);
	ctp_table_doc_open(&d, NULL, '[');
	ctp_table_doc_close(&d);
	ctp_table_doc_close(&d);
	ctp_table_doc_numf(&d, "n", "%.2f", 1.5);
	ctp_table_doc_bool(&d, "b", false);
	ctp_table_doc_value(&d, "v", &v);
	ctp_table_doc_text(&d, "none", NULL);
	ctp_table_doc_table(&d, "rows", arg);
	ctp_table_doc_open(&d, "empty", '{');
	ctp_table_doc_close(&d);
	ctp_table_doc_close(&d);
}

/* A document of members and named tables: commas placed by the document,
 * keys and strings through the one escaper, a table's rows as compact
 * objects (compare's JSON). */
static void test_doc(void **unused)
{
	(void)unused;
	struct ctp_table *t = sample();
	expect(write_doc, (void *)t,
	       "{\"say \\\"hi\\\"\":\"a\\nb\",\"key\":[\"x\",null,[]],"
	       "\"n\":1.50,\"b\":false,\"v\":7,\"none\":null,"
	       "\"rows\":[{\"name\":\"a,b\",\"n\":1.50,\"v\":7},"
	       "{\"name\":null,\"n\":2,\"v\":\"x\\\"y\"}],\"empty\":{}}");
	ctp_table_free(t);
	/* No rows: an empty array. */
	t = ctp_table_new(CTP_TABLE_GRID);
	assert_int_equal(ctp_table_add_col(t, "a", 0), 0);
	expect(write_doc, (void *)t,
	       "{\"say \\\"hi\\\"\":\"a\\nb\",\"key\":[\"x\",null,[]],"
	       "\"n\":1.50,\"b\":false,\"v\":7,\"none\":null,"
	       "\"rows\":[],\"empty\":{}}");
	ctp_table_free(t);
}

/* Names elided in the middle stay apart: each keeps the byte where it
 * differs from its neighbours. */
static void test_elide(void **unused)
{
	(void)unused;
	static const char *const names[] = {"abcdefghij-1-zzzzzz",
					    "abcdefghij-2-zzzzzz", "short"};
	setenv("LC_ALL", "C", 1); /* the mark is "~" */
	struct ctp_table *t = ctp_table_new(CTP_TABLE_VIEW);
	assert_int_equal(ctp_table_add_col(t, "COMM", 0), 0);
	ctp_table_elide(t, 0, 14);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(ctp_table_text(t, names[i]), 0);
	assert_int_equal(ctp_table_fit(t, 0, NULL), 0);
	assert_string_equal(ctp_table_cell(t, 0, 0), "abcdefghij-1~z");
	assert_string_equal(ctp_table_cell(t, 1, 0), "abcdefghij-2~z");
	assert_string_equal(ctp_table_cell(t, 2, 0), "short");
	ctp_table_free(t);
	char out[CTP_TABLE_NAME_BYTES];
	ctp_table_elide_text(names[0], 14, out); /* alone: the middle */
	assert_string_equal(out, "abcdef~-zzzzzz");
	unsetenv("LC_ALL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_escaper),
		cmocka_unit_test(test_json_escaper),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test(test_color),
		cmocka_unit_test(test_elide),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_doc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
