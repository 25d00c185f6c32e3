/* SPDX-License-Identifier: MIT */
/*
 * Views (core/analysis/view.c, viewshow.c, docs/VIEWS.md): every shipped
 * view file parses; a bad view file gets one FILE:LINE:COL message per
 * mistake; `show` prints the top, cpu and mem views of a hand-built
 * snapshot exactly as tests/golden/views/ says, at 80 and 200 columns, no
 * line wider than the screen, busiest first, idle rows hidden; `views`
 * lists and describes them; a wrong --view or --sort is a usage error; a
 * column's `why_absent:` field is counted under its section, per reason.
 *
 * To regenerate the golden files after a deliberate output change, run
 *   CTP_REGEN_GOLDEN=1 build-dir/tests/test_views
 * and review the diff of tests/golden/views/ before committing it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "render.h"
#include "snapbuild.h"
#include "view.h"
#include "viewshow.h"
#include "reader.h"

#define GOLDEN CTP_TEST_SOURCE_DIR "/tests/golden/views"
#define VIEWS  CTP_TEST_SOURCE_DIR "/views"

static char tmp[PATH_MAX];

/* The fields of the shipped plugins the views read, as they register. */
enum { UT, ST, START, STATE, MINF, MAJF, RD, WR, NTHR, RSS, PSS, NF };
static const struct ctp_field_desc fields[NF] = {
	[UT] = {.name = "procfs.utime",
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_TICKS,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_SUM},
	[ST] = {.name = "procfs.stime",
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_TICKS,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_SUM},
	[START] = {.name = "procfs.start_time",
		   .scope = CTP_SCOPE_THREAD,
		   .type = CTP_TYPE_U64,
		   .unit = CTP_UNIT_TICKS,
		   .kind = CTP_KIND_ORDINAL,
		   .rule = CTP_RULE_RANGE,
		   .flags = CTP_FIELD_START_TIME},
	[STATE] = {.name = "procfs.state",
		   .scope = CTP_SCOPE_THREAD,
		   .type = CTP_TYPE_CHAR,
		   .kind = CTP_KIND_CATEGORICAL,
		   .rule = CTP_RULE_MODE},
	[MINF] = {.name = "procfs.minflt",
		  .scope = CTP_SCOPE_THREAD,
		  .type = CTP_TYPE_U64,
		  .unit = CTP_UNIT_COUNT,
		  .kind = CTP_KIND_COUNTER,
		  .rule = CTP_RULE_SUM},
	[MAJF] = {.name = "procfs.majflt",
		  .scope = CTP_SCOPE_THREAD,
		  .type = CTP_TYPE_U64,
		  .unit = CTP_UNIT_COUNT,
		  .kind = CTP_KIND_COUNTER,
		  .rule = CTP_RULE_SUM},
	[RD] = {.name = "io.read_bytes",
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_BYTES,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_SUM},
	[WR] = {.name = "io.write_bytes",
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_BYTES,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_SUM},
	[NTHR] = {.name = "procfs.nr_threads",
		  .scope = CTP_SCOPE_PROCESS,
		  .type = CTP_TYPE_U64,
		  .unit = CTP_UNIT_COUNT,
		  .kind = CTP_KIND_GAUGE,
		  .rule = CTP_RULE_MAX},
	[RSS] = {.name = "smaps.rss",
		 .scope = CTP_SCOPE_PROCESS,
		 .type = CTP_TYPE_U64,
		 .unit = CTP_UNIT_BYTES,
		 .kind = CTP_KIND_GAUGE,
		 .rule = CTP_RULE_MAX},
	[PSS] = {.name = "smaps.pss",
		 .scope = CTP_SCOPE_PROCESS,
		 .type = CTP_TYPE_U64,
		 .unit = CTP_UNIT_BYTES,
		 .kind = CTP_KIND_GAUGE,
		 .rule = CTP_RULE_MAX},
};

/* Boot clock at the capture: 1000 s; the walk took 0.5 s. */
#define BOOT_S 1000

struct thr {
	uint32_t tid;
	const char *comm;
	uint64_t ut, st, start_s, minf, majf, rd, wr;
	char state;
};
struct proc {
	uint32_t tgid;
	const char *comm;
	uint64_t rss, pss; /* 0: absent (a kernel thread) */
	struct thr t[3];
	size_t nt;
};

/* web: 3 threads alive 500 s; db: 2 alive 100 s; idle: nothing to show;
 * two kernel workers whose names are elided at 80 columns and differ in
 * one character in their middle. */
static const struct proc procs[] = {
	{100,
	 "web",
	 300 << 20,
	 250 << 20,
	 {{100, "web", 5000, 1000, 500, 9000, 3, 4096, 0, 'S'},
	  {101, "web-worker-1", 20000, 5000, 500, 100, 0, 0, 1 << 20, 'R'},
	  {102, "web-worker-2", 10000, 2500, 500, 100, 0, 0, 0, 'S'}},
	 3},
	{200,
	 "db",
	 1 << 30,
	 900 << 20,
	 {{200, "db", 2000, 3000, 900, 50000, 120, 512 << 20, 64 << 20, 'S'},
	  {201, "db-writer", 1000, 4000, 900, 10, 0, 0, 256 << 20, 'D'}},
	 2},
	{300,
	 "idle",
	 1 << 20,
	 1 << 19,
	 {{300, "idle", 0, 0, 10, 5, 0, 0, 0, 'S'}},
	 1},
	{400,
	 "kworker/u8:3-events_unbound_long_name",
	 0,
	 0,
	 {{400, "kworker/u8:3-events_unbound_long_name", 0, 40, 2, 0, 0, 0, 0,
	   'I'}},
	 1},
	{401,
	 "kworker/u8:4-events_unbound_long_name",
	 0,
	 0,
	 {{401, "kworker/u8:4-events_unbound_long_name", 0, 30, 2, 0, 0, 0, 0,
	   'I'}},
	 1},
};

static void put(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
		uint32_t ident, int f, uint64_t v)
{
	sb_put_u64(cap, t, row, ident, f, v);
}

/* self: a tgid recorded as the capture's own, 0 for none. */
static void write_snapshot(const char *path, uint32_t self)
{
	struct ctp_capture *cap = sb_capture("t");
	if (self)
		cap->self_tgid[cap->n_self++] = self;
	char err[512];
	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &fields[i]), i);
	cap->start_boottime_ns = (uint64_t)BOOT_S * 1000000000ull;
	cap->start_mono_ns = 1;
	cap->end_mono_ns = 1 + 500000000ull;
	/* Enough summary counters to need several lines at 60 columns. */
	cap->plugins[0].n_summary = 8;
	for (int i = 0; i < 8; i++) {
		char name[32];
		snprintf(name, sizeof(name), "counter_number_%d", i);
		cap->plugins[0].summary_name[i] = strdup(name);
		cap->plugins[0].summary[i] = 1000u + (unsigned)i;
	}
	struct ctp_table *pt = &cap->procs[0], *tt = &cap->threads[0];
	for (size_t i = 0; i < sizeof(procs) / sizeof(*procs); i++) {
		const struct proc *p = &procs[i];
		uint32_t pr = sb_process(cap, p->tgid, p->comm);
		put(cap, pt, pr, CTP_PROCESS_IDENT, NTHR, p->nt);
		if (p->rss) {
			put(cap, pt, pr, CTP_PROCESS_IDENT, RSS, p->rss);
			put(cap, pt, pr, CTP_PROCESS_IDENT, PSS, p->pss);
		}
		for (size_t j = 0; j < p->nt; j++) {
			const struct thr *t = &p->t[j];
			uint32_t r = sb_thread(cap, t->tid, t->comm, -1);
			uint64_t v[] = {[UT] = t->ut,
					[ST] = t->st,
					[START] = t->start_s * 100,
					[STATE] = (uint64_t)t->state,
					[MINF] = t->minf,
					[MAJF] = t->majf,
					[RD] = t->rd,
					[WR] = t->wr};
			for (int f = UT; f <= WR; f++)
				put(cap, tt, r, CTP_THREAD_IDENT, f, v[f]);
		}
	}
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/* Display columns of one line (UTF-8 continuation bytes take none). */
static size_t line_width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

static void check_width(const char *out, size_t width)
{
	for (const char *p = out; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (line_width(p, n) > width)
			fail_msg("a line of %zu columns at width %zu:\n%.*s",
				 line_width(p, n), width, (int)n, p);
		p += n + (nl != NULL);
	}
}

/* `show snap.ctprof ARGS...` at `width` columns against GOLDEN/name. */
static void golden(const char *name, size_t width, ...)
{
	const char *args[16] = {"show", "snap.ctprof"};
	char cols[16], path[PATH_MAX], *out;
	size_t n = 2, len;
	va_list ap;
	va_start(ap, width);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 15;)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	snprintf(cols, sizeof(cols), "%zu", width);
	setenv("COLUMNS", cols, 1);
	int rc = e2e_run(args, "out.txt", "err.txt");
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	if (rc != 0)
		e2e_show_file("stderr", "err.txt");
	assert_int_equal(rc, 0);
	check_width(out, width);
	assert_int_equal(E2E_PATHF(path, "%s/%s", GOLDEN, name), 0);
	e2e_golden(path, out, len);
	free(out);
}

static void test_golden(void **state)
{
	(void)state;
	golden("top-80.txt", 80, NULL);
	golden("top-200.txt", 200, NULL);
	golden("cpu-80.txt", 80, "--view", "cpu", NULL);
	golden("cpu-200.txt", 200, "--view", "cpu", NULL);
	golden("mem-80.txt", 80, "--view", "mem", NULL);
	golden("mem-200.txt", 200, "--view", "mem", NULL);
	golden("top-sort-rss-asc.txt", 200, "--sort", "rss", "--asc", "--top",
	       "2", NULL);
}

/* What the golden files say, checked by reading rather than by eye: the
 * busiest first, CPU% as a lifetime average, idle rows hidden. */
static void test_numbers(void **state)
{
	(void)state;
	const char *args[] = {"show", "snap.ctprof", "--wide", NULL};
	char *out;
	size_t len;
	assert_int_equal(e2e_run(args, "out.txt", NULL), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	/* web: (35000 + 8500) ticks = 435 s over 500.5 s alive: 86.9%; db:
	 * 100 s over 100.5 s: 99.5%; so db comes first. */
	const char *db = strstr(out, "\n200 "), *web = strstr(out, "\n100 ");
	assert_non_null(db);
	assert_non_null(web);
	assert_true(db < web);
	assert_non_null(strstr(db, " 99.5 "));
	assert_non_null(strstr(web, " 86.9 "));
	/* idle has no CPU, I/O or... RSS 1 MiB: it stays; its thread,
	 * with nothing, is hidden among the threads. */
	assert_non_null(strstr(out, "Threads, top 7 of 7 by CPU% (1 at zero "
				    "hidden)"));
	free(out);
}

/* show --view all wraps plugin lines to $COLUMNS, losing no counter, and
 * keeps them whole for a pipe without $COLUMNS. */
static void test_plugins_wrapped(void **state)
{
	(void)state;
	const char *args[] = {"show", "snap.ctprof", "--view", "all", NULL};
	char *out;
	size_t len;
	setenv("COLUMNS", "60", 1);
	assert_int_equal(e2e_run(args, "all.txt", NULL), 0);
	assert_int_equal(e2e_read_file("all.txt", &out, &len), 0);
	const char *p = strstr(out, "\nPlugins:\n"),
		   *end = strstr(out, "\nRead");
	assert_non_null(p);
	assert_non_null(end);
	for (const char *l = p + 1; l < end;) {
		const char *nl = strchr(l, '\n');
		assert_true(line_width(l, (size_t)(nl - l)) <= 60);
		l = nl + 1;
	}
	for (int i = 0; i < 8; i++) {
		char want[40];
		snprintf(want, sizeof(want), "counter_number_%d=%d", i,
			 1000 + i);
		assert_non_null(strstr(p, want));
	}
	free(out);
	unsetenv("COLUMNS");
	assert_int_equal(e2e_run(args, "all.txt", NULL), 0);
	assert_int_equal(e2e_read_file("all.txt", &out, &len), 0);
	assert_non_null(strstr(out, "counter_number_6=1006 "
				    "counter_number_7=1007\n"));
	assert_non_null(strstr(out, "0 vanished; counter_number_0=1000 "));
	free(out);
}

/* --format with --view: the view's fields are the flat rows' columns. */
static void test_flat_view(void **state)
{
	(void)state;
	const char *args[] = {"show",	 "snap.ctprof", "--format",
			      "csv",	 "--view",	"mem",
			      "--table", "processes",	NULL};
	char *out;
	size_t len;
	assert_int_equal(e2e_run(args, "out.csv", NULL), 0);
	assert_int_equal(e2e_read_file("out.csv", &out, &len), 0);
	/* Registration order; minflt/majflt are thread fields. */
	assert_non_null(strstr(out, "tgid,comm,nthreads,cgroup,"
				    "procfs.nr_threads,smaps.rss,smaps.pss\n"));
	assert_non_null(strstr(out, "\n200,db,2,,2,1073741824,943718400\n"));
	free(out);
}

/* A view file and the one message it gets. */
static void bad_view(const char *name, const char *text, const char *want)
{
	char path[PATH_MAX], err[1024];
	struct ctp_view *v = NULL;
	assert_int_equal(E2E_PATHF(path, "%s/%s.yaml", tmp, name), 0);
	int r = ctp_view_parse(path, text, strlen(text), &v, err, sizeof(err));
	if (r != -EINVAL)
		fail_msg("%s: parsed (%d)", name, r);
	if (strncmp(err, path, strlen(path)) != 0 ||
	    !strstr(err + strlen(path), want))
		fail_msg("%s: got '%s', wanted '%s...%s'", name, err, path,
			 want);
}

#define HEAD  "description: d\nsort: a\nsections: [{title: T, group_by: pid}]\n"
#define COL_A "columns:\n  - {id: a, label: A, field: x.y}\n"

static void test_parse_errors(void **state)
{
	(void)state;
	bad_view("v", "view: w\n" HEAD COL_A,
		 ":1:7: 'view' is the file's name without .yaml ([a-z0-9_]+): "
		 "expected 'v', got 'w'");
	bad_view("v", "view: v\nsrot: a\n" HEAD COL_A,
		 ":2:1: unknown key 'srot' in a view (expected one of: view, "
		 "description, sort, order, hide_zero, sections, columns, "
		 "full, coverage); did you mean 'sort'?");
	bad_view("v", "view: v\n" HEAD COL_A "coverage: {thread: [a]}\n",
		 ":7:12: unknown key 'thread' in 'coverage' (expected one of: "
		 "threads, cgroup, exited); did you mean 'threads'?");
	bad_view("v", "view: v\n" HEAD COL_A "coverage: [a]\n",
		 ":7:11: 'coverage' must be a mapping");
	bad_view("v", "view: v\n" HEAD "columns:\n  - {id: a, label: A}\n",
		 ":6:5: 'columns[0]' needs id, label and one of field, first, "
		 "sum, ident");
	bad_view("v",
		 "view: v\n" HEAD
		 "columns:\n  - {id: a, label: A, field: x.y, sum: [a.b]}\n",
		 ":6:40: 'columns[0].sum': a column takes one of field, first, "
		 "sum and ident (the other is at line 6)");
	bad_view("v",
		 "view: v\n" HEAD
		 "columns:\n  - {id: a, label: A, field: x.y, show: pct}\n",
		 ":6:41: 'columns[0].show' must be one of value, delta, rate, "
		 "pct_cpu, share, got 'pct'");
	bad_view("v",
		 "view: v\ndescription: d\nsort: b\n"
		 "sections: [{title: T, group_by: pid}]\n" COL_A,
		 ":3:7: 'sort' names no column of this view: 'b'");
	bad_view("v",
		 "view: v\n" HEAD
		 "columns:\n  - {id: a, label: A, field: x.y}\n"
		 "  - {id: a, label: B, field: x.z}\n",
		 ":7:5: column id 'a' is also columns[0]'s");
	bad_view("v",
		 "view: v\n" HEAD
		 "columns:\n  - {id: a, label: A, field: x.y, in: [U]}\n",
		 ":6:40: 'columns[0].in': 'U' is not the title of a section of "
		 "this view");
	bad_view("v",
		 "view: v\n" HEAD "columns:\n  - {id: a, label: A, "
		 "field: X.Y}\n",
		 ":6:30: 'columns[0].field': a field name is [a-z0-9_.-]+, "
		 "got 'X.Y'");
	bad_view("v",
		 "view: v\n" HEAD "columns:\n  - {id: a, label: A, field: x.y, "
		 "why_absent: [x.z]}\n",
		 ":6:47: 'columns[0].why_absent' is one field name "
		 "([a-z0-9_.-]+), got ");
	bad_view("v",
		 "view: v\n" HEAD "columns:\n  - {id: a, label: A, ident: pid, "
		 "why_absent: x.z}\n",
		 ":6:5: 'columns[0]': a name column takes no exited or "
		 "why_absent field");
	bad_view("v", "view: v\nview: v\n",
		 ":2:1: duplicate key 'view' (first given at line 1, column "
		 "1)");
	bad_view("v", "view: v\ndescription: d\n",
		 "a view needs sections, columns and sort (or full: true)");
}

/* Every file in views/ is a valid view, and `views` lists each. */
static void test_shipped(void **state)
{
	(void)state;
	DIR *d = opendir(VIEWS);
	struct dirent *e;
	size_t n = 0;
	char *list;
	size_t len;
	const char *args[] = {"views", NULL};
	assert_int_equal(e2e_run(args, "views.txt", NULL), 0);
	assert_int_equal(e2e_read_file("views.txt", &list, &len), 0);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[PATH_MAX], err[1024], name[64];
		size_t l = strlen(e->d_name);
		if (l <= 5 || strcmp(e->d_name + l - 5, ".yaml"))
			continue;
		struct ctp_view *v = NULL;
		assert_int_equal(E2E_PATHF(path, "%s/%s", VIEWS, e->d_name), 0);
		if (ctp_view_load(path, &v, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		snprintf(name, sizeof(name), "%s ", v->name);
		assert_non_null(strstr(list, name));
		ctp_view_free(v);
		n++;
	}
	closedir(d);
	free(list);
	/* The list: top, cpu, sched, mem, io, delay, cgroup,
	 * jemalloc, all. */
	assert_true(n >= 9);
}

/* A view none of whose fields the snapshot has says so per section, in
 * one line that fits 80 columns, and exits 0. */
static void test_nothing_to_show(void **state)
{
	(void)state;
	const char *args[] = {"show", "snap.ctprof", "--view", "jemalloc",
			      NULL};
	char *out;
	size_t len;
	assert_int_equal(e2e_run(args, "j.txt", NULL), 0);
	assert_int_equal(e2e_read_file("j.txt", &out, &len), 0);
	assert_non_null(strstr(out, "\nProcesses: nothing here from view "
				    "'jemalloc' (ctprof-core views "
				    "jemalloc)\n"));
	check_width(out, 80);
	free(out);
}

/* Numbers as the columns show them: three significant digits, one
 * letter of unit. */
static void test_compact(void **state)
{
	(void)state;
	static const struct {
		long double x;
		uint8_t unit;
		const char *want;
	} cases[] = {
		{0, CTP_UNIT_BYTES, "0"},
		{512, CTP_UNIT_BYTES, "512B"},
		{999, CTP_UNIT_BYTES, "999B"},
		{1000, CTP_UNIT_BYTES, "0.98K"},
		{606208, CTP_UNIT_BYTES, "592K"},
		{69468160, CTP_UNIT_BYTES, "66.2M"},
		{1073741824, CTP_UNIT_BYTES, "1.00G"},
		{-4096, CTP_UNIT_BYTES, "-4.00K"},
		{850, CTP_UNIT_NS, "850ns"},
		{12000, CTP_UNIT_NS, "12us"},
		{340e6L, CTP_UNIT_NS, "340ms"},
		{1.25e9L, CTP_UNIT_NS, "1.2s"},
		{312e6L, CTP_UNIT_US, "5m12s"},
		{1122000, CTP_UNIT_TICKS, "3h07m"},
		{1051200 * 100.0L, CTP_UNIT_TICKS, "12d04h"},
		{99999, CTP_UNIT_COUNT, "99999"},
		{123456, CTP_UNIT_COUNT, "123k"},
		{4500000, CTP_UNIT_COUNT, "4.50M"},
		{1815, CTP_UNIT_CENTIPCT, "18.1%"},
		{42, CTP_UNIT_NONE, "42"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char buf[32];
		ctp_render_compact(buf, sizeof(buf), cases[i].x, cases[i].unit);
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("case %zu: %s, want %s", i, buf,
				 cases[i].want);
	}
}

/* Two names that differ in their middle stay apart when elided, with "~"
 * where the locale is not UTF-8 and U+2026 where it is. */
static void test_elision(void **state)
{
	(void)state;
	const char *args[] = {"show", "snap.ctprof", "--view", "cpu", NULL};
	char *out;
	size_t len;
	setenv("COLUMNS", "80", 1);
	setenv("LC_ALL", "C", 1);
	assert_int_equal(e2e_run(args, "ascii.txt", NULL), 0);
	setenv("LC_ALL", "C.UTF-8", 1);
	assert_int_equal(e2e_read_file("ascii.txt", &out, &len), 0);
	assert_non_null(strstr(out, "\n400 kworker/u8:3~"));
	assert_non_null(strstr(out, "\n401 kworker/u8:4~"));
	for (size_t i = 0; i < len; i++)
		assert_true((unsigned char)out[i] < 0x80);
	free(out);
	assert_int_equal(e2e_run(args, "utf8.txt", NULL), 0);
	assert_int_equal(e2e_read_file("utf8.txt", &out, &len), 0);
	assert_non_null(strstr(out, "\n400 kworker/u8:3\xe2\x80\xa6"));
	assert_non_null(strstr(out, "\n401 kworker/u8:4\xe2\x80\xa6"));
	free(out);
}

/* The capturing processes (capture.self_tgids) are left out of a view and
 * counted: here db (200) plays the collector. */
static void test_self_hidden(void **state)
{
	(void)state;
	const char *args[] = {"show", "self.ctprof", "--wide", NULL};
	char *out;
	size_t len;
	write_snapshot("self.ctprof", 200);
	assert_int_equal(e2e_run(args, "self.txt", NULL), 0);
	assert_int_equal(e2e_read_file("self.txt", &out, &len), 0);
	assert_null(strstr(out, "\n200 "));
	assert_non_null(strstr(out, "\n100 "));
	assert_non_null(strstr(out, "Processes, top 3 of 3 by CPU% (1 at zero "
				    "and 1 of ctprof-core hidden)"));
	assert_non_null(strstr(out, "Threads, top 5 of 5 by CPU% (1 at zero "
				    "and 2 of ctprof-core hidden)"));
	free(out);
}

/* A plugin's label field saying why rows lack a column's value: t.why on
 * the processes without t.fine. Twelve processes; 2 has two threads. */
static void write_why_snapshot(const char *path)
{
	enum { W_SIZE, W_FINE, W_WHY, W_UT, W_N };
	static const struct ctp_field_desc wf[W_N] = {
		[W_SIZE] = {.name = "t.size",
			    .scope = CTP_SCOPE_PROCESS,
			    .type = CTP_TYPE_U64,
			    .unit = CTP_UNIT_BYTES,
			    .kind = CTP_KIND_GAUGE,
			    .rule = CTP_RULE_MAX},
		[W_FINE] = {.name = "t.fine",
			    .scope = CTP_SCOPE_PROCESS,
			    .type = CTP_TYPE_U64,
			    .unit = CTP_UNIT_BYTES,
			    .kind = CTP_KIND_GAUGE,
			    .rule = CTP_RULE_MAX},
		[W_WHY] = {.name = "t.why",
			   .scope = CTP_SCOPE_PROCESS,
			   .type = CTP_TYPE_STRING,
			   .kind = CTP_KIND_CATEGORICAL,
			   .rule = CTP_RULE_MODE},
		[W_UT] = {.name = "t.utime",
			  .scope = CTP_SCOPE_THREAD,
			  .type = CTP_TYPE_U64,
			  .unit = CTP_UNIT_TICKS,
			  .kind = CTP_KIND_COUNTER,
			  .rule = CTP_RULE_SUM},
	};
	/* Ten reasons: the first eight by count, then "other"; one with a
	 * terminal escape in it. */
	static const char *const why[] = {NULL,
					  "budget",
					  "budget",
					  "cap",
					  "k\x1b"
					  "1",
					  "k2",
					  "k3",
					  "k4",
					  "k5",
					  "k6",
					  "k7",
					  "k8"};
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < W_N; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &wf[i]), i);
	struct ctp_table *pt = &cap->procs[0], *tt = &cap->threads[0];
	for (uint32_t i = 0; i < sizeof(why) / sizeof(*why); i++) {
		char comm[16];
		snprintf(comm, sizeof(comm), "p%u", i + 1);
		uint32_t pr = sb_process(cap, i + 1, comm);
		sb_put_u64(cap, pt, pr, CTP_PROCESS_IDENT, W_SIZE,
			   (uint64_t)(100 - i) << 20);
		if (why[i])
			sb_put(cap, pt, pr, CTP_PROCESS_IDENT, W_WHY,
			       &(struct sb_cell){.set = true, .s = why[i]});
		else
			sb_put_u64(cap, pt, pr, CTP_PROCESS_IDENT, W_FINE,
				   1 << 20);
		for (uint32_t t = 0; t < (i == 1 ? 2u : 1u); t++) {
			uint32_t r =
				sb_thread(cap, (i + 1) * 100 + t, comm, -1);
			sb_put_u64(cap, tt, r, CTP_THREAD_IDENT, W_UT, 5);
		}
	}
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static char *show_why(const char *out, const char *cols, const char *extra)
{
	const char *args[] = {"show", "why.ctprof", "--view",
			      "why",  extra,	    NULL};
	char *text;
	size_t len;
	setenv("COLUMNS", cols, 1);
	assert_int_equal(e2e_run(args, out, NULL), 0);
	assert_int_equal(e2e_read_file(out, &text, &len), 0);
	return text;
}

/*
 * `why_absent:` (issue 28): under each section showing the column, how
 * many rows of the label field's table carry a reason, most frequent
 * first, at most eight then "other", escaped, wrapped to the width; a
 * process counted once however many of its threads' groups hold it; not
 * under a section the column is not in.
 */
static void test_why_absent(void **state)
{
	(void)state;
	write_why_snapshot("why.ctprof");
	static const char view[] =
		"view: why\ndescription: d\nsort: size\n"
		"sections: [{title: Procs, group_by: pid}, "
		"{title: Thr, group_by: tid}]\n"
		"columns:\n"
		"  - {id: name, label: COMMAND, ident: pcomm}\n"
		"  - {id: size, label: SIZE, field: t.size}\n"
		"  - {id: fine, label: FINE, field: t.fine, why_absent: t.why, "
		"in: [Procs]}\n";
	char dir[PATH_MAX], path[PATH_MAX];
	assert_int_equal(E2E_PATHF(dir, "%s/whyviews", tmp), 0);
	assert_int_equal(E2E_PATHF(path, "%s/why.yaml", dir), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(e2e_write_file(path, view, strlen(view)), 0);
	setenv("CTPROF_VIEW_DIR", dir, 1);

	const char *line = "  no FINE for 11 processes (t.why): budget 2, "
			   "cap 1, k\\x1b1 1, k2 1, k3 1, k4 1, k5 1, k6 1, "
			   "other 2\n";
	char *out = show_why("why.txt", "200", "--top=3");
	const char *at = strstr(out, line);
	if (!at)
		fail_msg("no '%s' in:\n%s", line, out);
	/* Under Procs, not under Thr. */
	assert_true(at < strstr(out, "\nThr"));
	assert_null(strstr(at + strlen(line), "no FINE"));
	free(out);

	/* Grouped by thread, p2 is in two groups and counted once. */
	out = show_why("why-tid.txt", "200", "--group-by=tid");
	if (!strstr(out, line))
		fail_msg("no '%s' in:\n%s", line, out);
	free(out);

	/* At 40 columns it wraps, each line within the width. */
	out = show_why("why-40.txt", "40", "--top=3");
	line = "  no FINE for 11 processes (t.why):\n"
	       "    budget 2, cap 1, k\\x1b1 1, k2 1,\n"
	       "    k3 1, k4 1, k5 1, k6 1, other 2\n";
	if (!strstr(out, line))
		fail_msg("no '%s' in:\n%s", line, out);
	free(out);

	/* `views` describes it. */
	const char *args[] = {"views", "why", NULL};
	assert_int_equal(e2e_run(args, "why-views.txt", NULL), 0);
	size_t len;
	assert_int_equal(e2e_read_file("why-views.txt", &out, &len), 0);
	assert_non_null(strstr(out, "; why absent: t.why\n"));
	free(out);
	unsetenv("CTPROF_VIEW_DIR");
}

/* Mistakes on the command line: each a usage error with what to do. */
static void test_cli_errors(void **state)
{
	(void)state;
	const char *a1[] = {"show", "snap.ctprof", "--view", "topp", NULL};
	assert_int_equal(e2e_run(a1, NULL, "err.txt"), 2);
	char *err;
	size_t len;
	assert_int_equal(e2e_read_file("err.txt", &err, &len), 0);
	assert_non_null(strstr(err, "no view 'topp' in "));
	assert_non_null(strstr(err, "; did you mean 'top'?"));
	free(err);
	const char *a2[] = {"show", "snap.ctprof", "--sort", "nope", NULL};
	assert_int_equal(e2e_run(a2, NULL, "err.txt"), 2);
	assert_int_equal(e2e_read_file("err.txt", &err, &len), 0);
	assert_non_null(strstr(err, "--sort nope: no such column in view "
				    "'top'"));
	free(err);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	(void)state;
	if (e2e_tmpdir("views", tmp, sizeof(tmp)) < 0)
		return -1;
	E2E_PATHF(p, "%s/snap.ctprof", tmp);
	write_snapshot(p, 0);
	if (chdir(tmp) < 0)
		return -1;
	unsetenv("LINES");
	/* The goldens are UTF-8 (the elision mark). */
	setenv("LC_ALL", "C.UTF-8", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("CTP_KEEP_TMP"))
		e2e_rm_rf(tmp);
	return 0;
}

/* `top`'s `/` (ctp_view_opts.filter): only the rows whose name holds the
 * text, any case; the title says what matched and counts only them. */
static void test_filter(void **state)
{
	(void)state;
	struct ctp_snap *snap = NULL;
	struct ctp_view *v = NULL;
	char err[1024];
	assert_int_equal(
		ctp_snap_open("snap.ctprof", 1 << 26, &snap, err, sizeof(err)),
		0);
	assert_int_equal(ctp_view_load(VIEWS "/top.yaml", &v, err, sizeof(err)),
			 0);
	static const char *const want[] = {"WEB", "kworker"};
	for (size_t k = 0; k < 2; k++) {
		char *out = NULL;
		size_t len = 0, rows = 0;
		FILE *m = open_memstream(&out, &len);
		struct ctp_view_opts o = {
			.width = 200, .asc = -1, .filter = want[k]};
		assert_int_equal(
			ctp_view_show(m, snap, v, &o, err, sizeof(err)), 0);
		fclose(m);
		char title[64];
		snprintf(title, sizeof(title), " matching '%s'", want[k]);
		assert_non_null(strstr(out, title));
		/* Rows start with their id; none of another name. */
		for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
			size_t sp = strspn(l, " ");
			if (l[sp] < '0' || l[sp] > '9')
				continue;
			rows++;
			if (!strcasestr(l, want[k]))
				fail_msg("'%s' kept a row of another name: %s",
					 want[k], l);
		}
		assert_true(rows > 0);
		free(out);
	}
	ctp_view_free(v);
	ctp_snap_free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_flat_view),
		cmocka_unit_test(test_plugins_wrapped),
		cmocka_unit_test(test_nothing_to_show),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_cli_errors),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_elision),
		cmocka_unit_test(test_self_hidden),
		cmocka_unit_test(test_why_absent),
		cmocka_unit_test(test_filter),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
