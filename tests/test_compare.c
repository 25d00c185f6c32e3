/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core compare` over two hand-built captures written by the real
 * writer: joins with groups on one side only, deltas and percentages
 * (baseline 0 and absent), range midpoints, categorical changes, fields on
 * one side only, sorting, limits, field globs, each display mode, and
 * golden outputs under tests/golden/compare/.
 *
 * To regenerate the golden files after a deliberate output change, run
 *   CTP_REGEN_GOLDEN=1 build-dir/tests/test_compare
 * and review the diff of tests/golden/compare/ before committing it.
 */
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <pty.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "snapbuild.h"

#define GOLDEN CTP_TEST_SOURCE_DIR "/tests/golden/compare"

static char tmp[PATH_MAX];

/* Fields; t.old only in BASE, t.new only in CAND. */
enum { T_CNT, T_TIME, T_NICE, T_WCHAN, P_RSS, C_USAGE, H_MEM, T_ONE, NF };
static const struct ctp_field_desc fields[NF] = {
	[T_CNT] = {"t.cnt", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_TIME] = {"t.time", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		    CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_NICE] = {"t.nice", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64,
		    CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	[T_WCHAN] = {"t.wchan", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING,
		     CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[P_RSS] = {"p.rss", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
		   CTP_UNIT_BYTES, CTP_KIND_PEAK, CTP_RULE_MAX},
	[C_USAGE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
		     CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[H_MEM] = {"h.mem", NULL, CTP_SCOPE_HOST, CTP_TYPE_U64, CTP_UNIT_BYTES,
		   CTP_KIND_GAUGE, CTP_RULE_MAX},
	[T_ONE] = {NULL, NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
		   CTP_KIND_COUNTER, CTP_RULE_SUM},
};

#define A (-1) /* absent */
struct trow {
	uint32_t tgid, tid;
	const char *comm;
	int cg;
	int64_t cnt, time, nice;
	const char *wchan; /* NULL: absent */
	int64_t one;	   /* t.old / t.new */
};
struct prow {
	uint32_t tgid;
	const char *comm;
	int64_t rss;
};
struct side {
	const struct trow *t;
	size_t nt;
	const struct prow *p;
	size_t np;
	const char *one_name;
	uint64_t usage[2]; /* per cgroup */
	uint64_t mem;
};

static const char *const cgroups[] = {"/app.slice", "/db.slice"};

/*
 * BASE: app (2 threads), db (cnt 0, time absent), gone.
 * CAND: app (2 threads, more of everything), db (cnt 7, time 500), fresh.
 */
static const struct trow base_t[] = {
	{100, 100, "app", 0, 10, 1000, 0, "ep_poll", 1},
	{100, 101, "worker-0", 0, 20, 3000, 4, "futex", 2},
	{200, 200, "db", 1, 0, A, -2, "do_wait", 3},
	{300, 300, "gone", 1, 5, 50, 0, "futex", 4},
};
static const struct prow base_p[] = {
	{100, "app", 4096}, {200, "db", 1024}, {300, "gone", 512}};
static const struct trow cand_t[] = {
	{100, 100, "app", 0, 15, 1500, 0, "futex", 5},
	{100, 101, "worker-0", 0, 25, 4500, 10, "futex", 6},
	{200, 200, "db", 1, 7, 500, -2, "do_wait", 7},
	{400, 400, "fresh", 1, 1, 100, 0, NULL, 8},
};
static const struct prow cand_p[] = {
	{100, "app", 8192}, {200, "db", 1024}, {400, "fresh", 256}};

static const struct side sides[2] = {
	{base_t, 4, base_p, 3, "t.old", {100, 200}, 1048576},
	{cand_t, 4, cand_p, 3, "t.new", {150, 200}, 2097152},
};

static void set(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
		uint32_t ident, int f, int64_t v)
{
	if (v != A)
		sb_put_u64(cap, t, row, ident, f, (uint64_t)v);
}

static void write_side(int k, const char *path)
{
	const struct side *s = &sides[k];
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	cap->plugins[0].calls = k ? 12 : 10;
	cap->plugins[0].n_summary = 1;
	cap->plugins[0].summary_name[0] = strdup("files");
	cap->plugins[0].summary[0] = k ? 9 : 7;
	for (int i = 0; i < NF; i++) {
		struct ctp_field_desc d = fields[i];
		if (i == T_ONE)
			d.name = s->one_name;
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d), i);
	}
	set(cap, &cap->host, 0, CTP_HOST_IDENT, H_MEM, (int64_t)s->mem);
	for (int i = 0; i < 2; i++) {
		uint32_t r = sb_cgroup(cap, cgroups[i]);
		set(cap, &cap->cgroups, r, CTP_CGROUP_IDENT, C_USAGE,
		    (int64_t)s->usage[i]);
	}
	struct ctp_table *pt = &cap->procs[0], *tt = &cap->threads[0];
	for (size_t i = 0; i < s->np; i++) {
		uint32_t prow = sb_process(cap, s->p[i].tgid, s->p[i].comm);
		set(cap, pt, prow, CTP_PROCESS_IDENT, P_RSS, s->p[i].rss);
		for (size_t j = 0; j < s->nt; j++) {
			const struct trow *t = &s->t[j];
			if (t->tgid != s->p[i].tgid)
				continue;
			uint32_t r = sb_thread(cap, t->tid, t->comm, t->cg);
			set(cap, tt, r, CTP_THREAD_IDENT, T_CNT, t->cnt);
			set(cap, tt, r, CTP_THREAD_IDENT, T_TIME, t->time);
			set(cap, tt, r, CTP_THREAD_IDENT, T_NICE, t->nice);
			if (t->wchan)
				set(cap, tt, r, CTP_THREAD_IDENT, T_WCHAN,
				    (int64_t)sb_blob(cap, t->wchan,
						     strlen(t->wchan)));
			set(cap, tt, r, CTP_THREAD_IDENT, T_ONE, t->one);
		}
	}
	/* Ten seconds apart: the interval of the rates. */
	cap->start_realtime_ns += (uint64_t)k * 10000000000ull;
	cap->end_realtime_ns += (uint64_t)k * 10000000000ull;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	(void)state;
	if (e2e_tmpdir("compare", tmp, sizeof(tmp)) < 0)
		return -1;
	E2E_PATHF(p, "%s/base.ctprof", tmp);
	write_side(0, p);
	E2E_PATHF(p, "%s/cand.ctprof", tmp);
	write_side(1, p);
	/* Relative snapshot names keep the golden files free of $TMPDIR. */
	if (chdir(tmp) < 0)
		return -1;
	setenv("NO_COLOR", "1", 1);
	setenv("COLUMNS", "110", 1);
	/* Goldens hold UTF-8 (the change arrow, the elision mark). */
	setenv("LC_ALL", "C.UTF-8", 1);
	/* The test's own view (tests/golden/compare/views/t.yaml) first. */
	static char views[2 * PATH_MAX];
	const char *shipped = getenv("CTPROF_VIEW_DIR");
	snprintf(views, sizeof(views), "%s/views%s%s", GOLDEN,
		 shipped ? ":" : "", shipped ? shipped : "");
	setenv("CTPROF_VIEW_DIR", views, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (chdir("/") < 0)
		return -1;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

/* Run `compare base.ctprof cand.ctprof ARGS...`; stdout in *out. */
static int run(char **out, ...)
{
	const char *args[40] = {"compare", "base.ctprof", "cand.ctprof"};
	size_t n = 3, len;
	va_list ap;
	va_start(ap, out);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 39;)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	int rc = e2e_run(args, "out.txt", "err.txt");
	if (rc != 0)
		e2e_show_file("compare stderr", "err.txt");
	assert_int_equal(e2e_read_file("out.txt", out, &len), 0);
	return rc;
}

/* An exact line in the output. */
static void has_line(const char *out, const char *line)
{
	if (!e2e_has_line(out, line))
		fail_msg("missing line '%s' in:\n%s", line, out);
}

static void no_line_with(const char *out, const char *s)
{
	if (strstr(out, s))
		fail_msg("unexpected '%s' in:\n%s", s, out);
}

/* CSV is line-per-(group, field), so every rule shows as one exact line. */
/* A CSV line that starts with `prefix` and has more columns after it. */
static void has_csv(const char *out, const char *prefix)
{
	size_t l = strlen(prefix);
	for (const char *p = out; (p = strstr(p, prefix)); p++)
		if ((p == out || p[-1] == '\n') && p[l] == ',')
			return;
	fail_msg("missing line '%s,...' in:\n%s", prefix, out);
}

static void test_csv_values(void **state)
{
	char *out;
	(void)state;
	assert_int_equal(run(&out, "--format", "csv", NULL), 0);
	/* app: two threads, sums 30 -> 40: +10, +33.3333%. */
	has_csv(out, "threads,app,continuing,2,2,1,1,t.cnt,30,40,10,33.3333,1");
	/* db: baseline 0 -> 7: delta, no percent. */
	has_csv(out, "threads,db,continuing,1,1,1,1,t.cnt,0,7,7,,1");
	/* db: baseline absent -> 500: neither delta nor percent. */
	has_csv(out, "threads,db,continuing,1,1,1,1,t.time,,500,,,1");
	/* Ranges by midpoint: 0..4 (2) -> 0..10 (5): +3, +150%. */
	has_csv(out, "threads,app,continuing,2,2,1,1,t.nice,0..4,0..10,3,150."
		     "0000,1");
	/* Negative baseline: -2 -> -2 unchanged. */
	has_csv(out, "threads,db,continuing,1,1,1,1,t.nice,-2,-2,0,0.0000,0");
	/* Categorical: mode ep_poll (tie, smallest) -> futex. */
	has_csv(out,
		"threads,app,continuing,2,2,1,1,t.wchan,ep_poll,futex,,,1");
	has_csv(out,
		"threads,db,continuing,1,1,1,1,t.wchan,do_wait,do_wait,,,0");
	/* Groups on one side only. */
	has_csv(out, "threads,fresh,new,,1,,1,t.cnt,,1,,,1");
	has_csv(out, "threads,gone,gone,1,,1,,t.cnt,5,,,,1");
	/* Process scope: 4096 -> 8192 bytes. */
	has_csv(out, "threads,app,continuing,2,2,1,1,p.rss,4096,8192,4096,100."
		     "0000,1");
	/* Fields on one side only. */
	has_csv(out, "only_in_base,,,,,,,t.old,,,,,");
	has_csv(out, "only_in_cand,,,,,,,t.new,,,,,");
	has_csv(out, "threads,app,continuing,2,2,1,1,t.old,3,,,,1");
	has_csv(out, "threads,app,continuing,2,2,1,1,t.new,,11,,,1");
	/* Cgroups, host, plugins. */
	has_csv(out,
		"cgroups,/"
		"app.slice,continuing,2,2,1,1,c.usage,100,150,50,50.0000,1");
	has_csv(out, "host,,,,,,,h.mem,1048576,2097152,,,1");
	has_csv(out, "plugins,t,,,,,,files,7,9,2,,1");
	/* Rates over the 10 s between the captures (realtime: no boot
	 * clock); without start times no member counts or ages. */
	has_line(out, "threads,app,continuing,2,2,1,1,t.cnt,30,40,10,33.3333,"
		      "1,1,,0,,,,,,,,");
	has_line(out, "threads,app,continuing,2,2,1,1,t.time,4000,6000,2000,"
		      "50.0000,1,200,0.0000,0,,,,,,,,");
	free(out);
}

/* The order of the group names in a CSV column of t.cnt lines. */
static void order_of(const char *out, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = '\0';
	for (const char *p = out; (p = strstr(p, "threads,")); p++) {
		if (p != out && p[-1] != '\n')
			continue;
		const char *g = p + 8, *e = strchr(g, ',');
		if (!strstr(e, ",t.cnt,") ||
		    strstr(e, ",t.cnt,") > strchr(e, '\n'))
			continue;
		o += (size_t)snprintf(buf + o, n - o, "%s%.*s", o ? " " : "",
				      (int)(e - g), g);
	}
}

static void test_sorting_and_limit(void **state)
{
	char *out, ord[256];
	(void)state;
	/* rel: new first, then gone, then by largest relative change; db's
	 * t.cnt change from 0 has no percentage but ranks above any (app's
	 * largest is 150% on t.nice). */
	assert_int_equal(run(&out, "--format", "csv", "--sections", "threads",
			     "--sort", "rel", NULL),
			 0);
	order_of(out, ord, sizeof(ord));
	assert_string_equal(ord, "fresh gone db app");
	free(out);
	assert_int_equal(run(&out, "--format", "csv", "--sections", "threads",
			     "--sort", "t.cnt", NULL),
			 0);
	order_of(out, ord, sizeof(ord));
	/* Candidate values (baseline for gone): 40, 7, 5, 1. */
	assert_string_equal(ord, "app db gone fresh");
	free(out);
	assert_int_equal(run(&out, "--format", "csv", "--sections", "threads",
			     "--sort", "t.cnt", "--asc", NULL),
			 0);
	order_of(out, ord, sizeof(ord));
	assert_string_equal(ord, "fresh gone db app");
	free(out);
	assert_int_equal(run(&out, "--format", "csv", "--sections", "threads",
			     "--sort", "t.cnt", "--limit", "2", NULL),
			 0);
	order_of(out, ord, sizeof(ord));
	assert_string_equal(ord, "app db");
	free(out);
}

static void test_field_globs(void **state)
{
	char *out;
	(void)state;
	assert_int_equal(
		run(&out, "--format", "csv", "--fields", "t.c*,h.*", NULL), 0);
	has_csv(out, "threads,app,continuing,2,2,1,1,t.cnt,30,40,10,33.3333,1");
	has_csv(out, "host,,,,,,,h.mem,1048576,2097152,,,1");
	no_line_with(out, "t.time");
	no_line_with(out, "p.rss");
	no_line_with(out, "t.old");
	free(out);
}

static void test_usage_errors(void **state)
{
	char *out;
	const char *bad[][4] = {
		{"--mode", "sideways", NULL},
		{"--format", "xml", NULL},
		{"--sections", "threads,nope", NULL},
		{"--group-by", "pcomm,pcomm", NULL},
		{"--sort", "no.such.field", NULL},
		{"--limit", "-1", NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(run(&out, bad[i][0], bad[i][1], NULL), 2);
		free(out);
	}
	const char *missing[] = {"compare", "base.ctprof", "nope.ctprof", NULL};
	assert_int_equal(e2e_run(missing, NULL, NULL), 1);
	const char *one[] = {"compare", "base.ctprof", NULL};
	assert_int_equal(e2e_run(one, NULL, NULL), 2);
}

static void test_json_parses(void **state)
{
	char *out;
	(void)state;
	assert_int_equal(run(&out, "--format", "json", NULL), 0);
	free(out);
	int rc = system("/usr/bin/python3 -m json.tool out.txt >/dev/null");
	assert_int_equal(rc, 0);
}

/*
 * Run `compare base.ctprof cand.ctprof --sections threads` with stdout on a
 * pseudo-terminal, NO_COLOR as `no_color` (NULL: unset); the terminal's
 * bytes in *out.
 */
static void run_pty(const char *no_color, char **out)
{
	int fd;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	assert_non_null(buf);
	pid_t pid = forkpty(&fd, NULL, NULL, NULL);
	if (pid < 0) {
		free(buf);
		skip();
	}
	if (pid == 0) {
		if (no_color)
			setenv("NO_COLOR", no_color, 1);
		else
			unsetenv("NO_COLOR");
		execl(CTP_TEST_BINARY, CTP_TEST_BINARY, "compare",
		      "base.ctprof", "cand.ctprof", "--sections", "threads",
		      (char *)NULL);
		_exit(127);
	}
	for (;;) {
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			assert_non_null(nb);
			buf = nb;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* EIO once the child has closed its side */
		len += (size_t)r;
	}
	buf[len] = '\0';
	close(fd);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	*out = buf;
}

/* The line of `out` holding `s` (a pty ends lines in "\r\n"). */
static const char *line_of(const char *out, const char *s, char *buf, size_t n)
{
	const char *p = strstr(out, s);
	if (!p)
		fail_msg("no '%s' in:\n%s", s, out);
	const char *b = p, *e = strchr(p, '\n');
	while (b > out && b[-1] != '\n')
		b--;
	e = e ? e : p + strlen(p);
	snprintf(buf, n, "%.*s", (int)(e - b), b);
	return buf;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_color(void **state)
{
	char *out, l[512];
	(void)state;
	/* On a terminal: bold titles, new rows green, gone rows red, each
	 * reset before the line ends; unchanged rows plain. */
	run_pty(NULL, &out);
	assert_true(starts(line_of(out, "STATUS", l, sizeof(l)), "\033[1m"));
	assert_non_null(strstr(l, "\033[0m\r"));
	line_of(out, "fresh", l, sizeof(l));
	assert_true(starts(l, "\033[32m  fresh"));
	assert_non_null(strstr(l, "\033[0m\r"));
	assert_true(
		starts(line_of(out, "gone  ", l, sizeof(l)), "\033[31m  gone"));
	assert_true(starts(line_of(out, "  db  ", l, sizeof(l)), "  db"));
	free(out);
	/* NO_COLOR set: no escape at all. */
	run_pty("1", &out);
	assert_non_null(strstr(out, "fresh"));
	no_line_with(out, "\033");
	free(out);
	/* An empty NO_COLOR does not count (no-color.org). */
	run_pty("", &out);
	assert_non_null(strstr(out, "\033[32m  fresh"));
	free(out);
	/* Not a terminal: no escape even without NO_COLOR. */
	unsetenv("NO_COLOR");
	assert_int_equal(run(&out, "--sections", "threads", NULL), 0);
	assert_non_null(strstr(out, "fresh"));
	no_line_with(out, "\033");
	free(out);
	setenv("NO_COLOR", "1", 1);
}

/*
 * A pair for the plugins section: plugin "io" with a hint on the candidate
 * side only, and on the candidate 10 of 11 read failures missing files
 * gated on one kernel option; a count host field of 1,234,567 -> 1,234,568.
 */
static void write_hint_side(int k, const char *path)
{
	static const struct ctp_field_desc d = {
		"h.count",	NULL,		CTP_SCOPE_HOST, CTP_TYPE_U64,
		CTP_UNIT_COUNT, CTP_KIND_GAUGE, CTP_RULE_MAX};
	struct ctp_capture *cap = sb_capture("io");
	char err[512];
	assert_int_equal(ctp_registry_add(&cap->reg, 0, &d), 0);
	sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, 0,
		   1234567u + (unsigned)k);
	cap->plugins[0].errors = k ? 11 : 0;
	if (k) {
		cap->plugins[0].hint = strdup("enable task I/O accounting");
		assert_non_null(cap->plugins[0].hint);
		struct ctp_readfail *rf = &cap->rf;
		rf->n_files = 2;
		rf->file[0] = strdup("io");
		rf->gate[0] = strdup("CONFIG_TASK_IO_ACCOUNTING");
		rf->failures[0] = 10;
		rf->missing[0] = 10;
		rf->file[1] = strdup("stat");
		rf->failures[1] = 1;
		assert_true(rf->file[0] && rf->gate[0] && rf->file[1]);
	}
	sb_process(cap, 10, "p");
	sb_thread(cap, 10, "p", -1);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static void test_hints(void **state)
{
	const char *cmp[] = {"compare",		 "hint-base.ctprof",
			     "hint-cand.ctprof", "--sections",
			     "host,plugins",	 NULL};
	const char *show[] = {"show", "hint-cand.ctprof", "--view", "all",
			      NULL};
	char *out;
	size_t len;
	(void)state;
	write_hint_side(0, "hint-base.ctprof");
	write_hint_side(1, "hint-cand.ctprof");

	assert_int_equal(e2e_run(cmp, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "  h.count: 1,234,567 -> 1,234,568 (+1)");
	has_line(out, "  io: loaded; calls 0; errors 0 -> 11 (+11)");
	has_line(out, "    hint (CAND): enable task I/O accounting");
	no_line_with(out, "hint (BASE)");
	no_line_with(out, "read failures (BASE)");
	has_line(out, "  read failures (CAND) hint: 10 of 11 read failures "
		      "are missing files that exist only with "
		      "CONFIG_TASK_IO_ACCOUNTING (io); this kernel was "
		      "probably built without it");
	free(out);

	/* The same in JSON, with exact host values. */
	const char *js[] = {"compare",
			    "hint-base.ctprof",
			    "hint-cand.ctprof",
			    "--sections",
			    "host,plugins",
			    "--format",
			    "json",
			    NULL};
	assert_int_equal(e2e_run(js, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	assert_non_null(strstr(out, "\"key\":\"h.count\",\"base\":\"1234567\","
				    "\"cand\":\"1234568\""));
	assert_non_null(strstr(out, "\"hint\":{\"base\":null,\"cand\":\"enable "
				    "task I/O accounting\"}"));
	assert_non_null(strstr(out, "\"read_failure_hint\":{\"base\":null,"
				    "\"cand\":\"10 of 11 read failures"));
	free(out);

	/* `show` prints both hints too, and counts with separators. */
	assert_int_equal(e2e_run(show, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	assert_non_null(strstr(out, "  hint: enable task I/O accounting\n"));
	assert_non_null(strstr(out, "\n  hint: 10 of 11 read failures are "
				    "missing files that exist only with "
				    "CONFIG_TASK_IO_ACCOUNTING (io); this "
				    "kernel was probably built without it\n"));
	assert_non_null(strstr(out, "  1,234,568\n"));
	free(out);
}

/*
 * Identity (docs/COMPARE.md): a pair with a start-time field (role
 * start_time, in ticks) and the boot clock, BASE at 1000 s, CAND at 1010 s:
 *   svc    threads 10, 11, 12; CAND: 10 (+200), 12 (+0), 13 new (100),
 *          11 exited: +300, members 2/1/1
 *   job    tgid 20 exits, tgid 21 of the same name starts: restarted, +7
 *          (not 7 - 400)
 *   reset  its counter went from 1000 to 200: +200, flagged
 *   fresh  new, started at 1008 s: +50, uptime 2 s
 *   reuse  tid 50 again but started at 1006 s: restarted, +3
 *   old    gone
 * With role false the start field is an ordinary one: no identity.
 */
struct irow {
	const char *comm;
	uint32_t tgid, tid;
	uint64_t start, cpu; /* ticks */
};
static const struct irow ibase[] = {
	{"svc", 10, 10, 100, 50},     {"svc", 10, 11, 100, 30},
	{"svc", 10, 12, 200, 5},      {"job", 20, 20, 300, 400},
	{"reset", 30, 30, 100, 1000}, {"old", 40, 40, 100, 10},
	{"reuse", 50, 50, 100, 500},
};
static const struct irow icand[] = {
	{"svc", 10, 10, 100, 250},    {"svc", 10, 12, 200, 5},
	{"svc", 10, 13, 100500, 100}, {"job", 21, 21, 100200, 7},
	{"reset", 30, 30, 100, 200},  {"fresh", 60, 60, 100800, 50},
	{"reuse", 50, 50, 100600, 3},
};

/* No value (write_rows). */
#define NO_CPU UINT64_MAX

/* Side k of a pair 10 s apart: rows (cpu NO_CPU: absent) of processes
 * in tgid order, the start field a start time when `role`. */
static void write_rows(int k, const char *path, bool role,
		       const struct irow *rows, size_t n)
{
	const struct ctp_field_desc d[] = {
		{"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
		{"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		 CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
		 role ? CTP_FIELD_START_TIME : 0},
	};
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < 2; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || rows[i].tgid != rows[i - 1].tgid)
			sb_process(cap, rows[i].tgid, rows[i].comm);
		uint32_t r = sb_thread(cap, rows[i].tid, rows[i].comm, -1);
		if (rows[i].cpu != NO_CPU)
			sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT,
				   0, rows[i].cpu);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, 1,
			   rows[i].start);
	}
	cap->start_boottime_ns =
		(1000ull + 10ull * (uint64_t)k) * 1000000000ull;
	cap->start_realtime_ns += (uint64_t)k * 10000000000ull;
	cap->end_realtime_ns += (uint64_t)k * 10000000000ull;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static void write_ident_side(int k, const char *path, bool role)
{
	if (k)
		write_rows(k, path, role, icand,
			   sizeof(icand) / sizeof(*icand));
	else
		write_rows(k, path, role, ibase,
			   sizeof(ibase) / sizeof(*ibase));
}

/* `compare ibase.ctprof icand.ctprof ARGS...` into *out. */
static void run_ident(bool role, char **out, const char *a1, const char *a2)
{
	const char *args[] = {"compare",
			      "ibase.ctprof",
			      "icand.ctprof",
			      "--sections",
			      "threads",
			      "--format",
			      "csv",
			      a1,
			      a2,
			      NULL};
	size_t len;
	write_ident_side(0, "ibase.ctprof", role);
	write_ident_side(1, "icand.ctprof", role);
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", out, &len), 0);
}

static void test_identity(void **state)
{
	char *out;
	(void)state;
	run_ident(true, &out, "--fields", "t.cpu");
	/* Per member: (250-50) + (5-5) + 100 new; 11 gone adds nothing.
	 * 300 ticks = 3 s in 10 s: 30/s, 30% of one CPU. Ages at 1010 s:
	 * thread 10 started at 1 s, thread 13 at 1005 s (gone: ages at
	 * BASE). Percent is of BASE's value, as for every field. */
	has_line(out, "threads,svc,continuing,3,3,1,1,t.cpu,85,355,300,"
		      "352.9412,1,30,30.0000,0,2,1,1,1009.000,5.000,,,");
	/* Replaced by another process of the same name: its own 7. */
	has_line(out, "threads,job,restarted,1,1,1,1,t.cpu,400,7,7,1.7500,1,"
		      "0.7,0.7000,0,0,1,1,8.000,8.000,,,");
	/* Counter went backwards: counted from zero, flagged. */
	has_line(out, "threads,reset,continuing,1,1,1,1,t.cpu,1000,200,200,"
		      "20.0000,1,20,20.0000,1,1,0,0,1009.000,1009.000,,,");
	/* Started after BASE: its value is its delta; just started. */
	has_line(out, "threads,fresh,new,,1,,1,t.cpu,,50,50,,1,5,5.0000,0,0,1,"
		      "0,2.000,2.000,,,");
	/* The same tid, another start time: another thread. */
	has_line(out, "threads,reuse,restarted,1,1,1,1,t.cpu,500,3,3,0.6000,"
		      "1,0.3,0.3000,0,0,1,1,4.000,4.000,,,");
	has_line(out, "threads,old,gone,1,,1,,t.cpu,10,,,,1,,,0,0,0,1,"
		      "999.000,999.000,,,");
	free(out);

	/* Without a start-time field: CAND - BASE of the aggregates, as
	 * before identity; job goes negative. */
	run_ident(false, &out, "--fields", "t.cpu");
	has_line(out, "threads,job,continuing,1,1,1,1,t.cpu,400,7,-393,"
		      "-98.2500,1,-39.3,-39.3000,0,,,,,,,,");
	has_line(out, "threads,fresh,new,,1,,1,t.cpu,,50,,,1,,,0,,,,,,,,");
	free(out);
}

static void test_identity_sort(void **state)
{
	char *out, ord[256];
	size_t o = 0;
	(void)state;
	/* The default: delta of the first CPU-time counter, t.cpu; gone
	 * (no delta) last. rate: sorts the same. */
	const char *sorts[] = {NULL, "delta:t.cpu", "rate:t.cpu"};
	for (size_t i = 0; i < 3; i++) {
		run_ident(true, &out, sorts[i] ? "--sort" : "--fields",
			  sorts[i] ? sorts[i] : "t.cpu");
		o = 0;
		ord[0] = '\0';
		for (const char *p = out; (p = strstr(p, "\nthreads,")); p++) {
			const char *g = p + 9, *e = strchr(g, ',');
			const char *nl = strchr(g, '\n'),
				   *f = strstr(g, ",t.cpu,");
			if (f && (!nl || f < nl))
				o += (size_t)snprintf(ord + o, sizeof(ord) - o,
						      "%s%.*s", o ? " " : "",
						      (int)(e - g), g);
		}
		assert_string_equal(ord, "svc reset fresh job reuse old");
		free(out);
	}
	/* The table says the interval, the sort and identity. */
	const char *args[] = {"compare",    "ibase.ctprof", "icand.ctprof",
			      "--sections", "threads",	    NULL};
	size_t len;
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out,
		 "Interval: 10.00 s (boottime); rates are per second of it");
	assert_non_null(strstr(out, "sorted by delta:t.cpu"));
	no_line_with(out, "No task identity");
	free(out);
}

static void test_top(void **state)
{
	char *out;
	size_t len;
	(void)state;
	write_ident_side(0, "ibase.ctprof", true);
	write_ident_side(1, "icand.ctprof", true);
	const char *args[] = {"compare",
			      "ibase.ctprof",
			      "icand.ctprof",
			      "--sections",
			      "threads",
			      "--top",
			      "2",
			      NULL};
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "  \u2026 4 more groups (--top 0 shows all)");
	assert_non_null(strstr(out, "  svc "));
	assert_non_null(strstr(out, "  reset "));
	no_line_with(out, "  fresh ");
	free(out);
}

/* The view over the interval on the identity pair: per member, so the
 * restarted job counts its own 7 ticks (never 7 - 400), the fresh group
 * is new, and reset's counter that went back counts its new value with a
 * '!' explained under the section. */
static void test_view_identity(void **state)
{
	char *out;
	size_t len;
	(void)state;
	write_ident_side(0, "ibase.ctprof", true);
	write_ident_side(1, "icand.ctprof", true);
	const char *args[] = {"compare", "ibase.ctprof", "icand.ctprof",
			      "--view",	 "ti",		 NULL};
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	e2e_golden(GOLDEN "/view-ident.txt", out, len);
	has_line(out, "  !: a counter went back in the interval (a reset); its "
		      "new value is counted");
	assert_non_null(strstr(out, "\nreset           20.0! +2.0s!"));
	assert_non_null(strstr(out, "\njob   restarted   0.7  +70ms"));
	assert_null(strstr(out, " -"));
	free(out);
}

/* A task matched by identity whose BASE value is unknown (BASE did not
 * read it): its change is unknown, so it adds nothing, in the view as in
 * the full comparison (never its whole 500 ticks of life). svc's thread
 * 10 has no t.cpu in BASE and 500 in CAND; thread 11 goes 10 -> 30. */
static const struct irow ubase[] = {{"svc", 10, 10, 100, NO_CPU},
				    {"svc", 10, 11, 100, 10}},
			 ucand[] = {{"svc", 10, 10, 100, 500},
				    {"svc", 10, 11, 100, 30}};

static void test_unknown_before(void **state)
{
	char *out;
	size_t len;
	(void)state;
	write_rows(0, "ubase.ctprof", true, ubase, 2);
	write_rows(1, "ucand.ctprof", true, ucand, 2);
	const char *view[] = {"compare", "ubase.ctprof", "ucand.ctprof",
			      "--view",	 "ti",		 NULL};
	assert_int_equal(e2e_run(view, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	assert_non_null(strstr(out, "\nsvc    2.0 +200ms "));
	free(out);
	const char *csv[] = {
		"compare",    "ubase.ctprof", "ucand.ctprof", "--format", "csv",
		"--sections", "threads",      "--fields",     "t.cpu",	  NULL};
	assert_int_equal(e2e_run(csv, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	assert_non_null(strstr(out, "threads,svc,continuing,2,2,1,1,t.cpu,10,"
				    "530,20,200.0000,1,2,2.0000,0,"));
	free(out);
}

/* Capture k of several `apart` s apart (the first at boot 1000 s) into
 * path, and cap freed. */
static void write_apart(struct ctp_capture *cap, int k, uint64_t apart,
			const char *path)
{
	const uint64_t s = 1000000000ull;
	char err[512];
	cap->start_boottime_ns = (1000ull + apart * (uint64_t)k) * s;
	cap->start_realtime_ns += (uint64_t)k * apart * s;
	cap->end_realtime_ns += (uint64_t)k * apart * s;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/*
 * A recording of three files 5 s apart (boot 1000, 1005, 1010 s) whose
 * exited tables hold what ran in between:
 *   make 10: thread 10 100 -> 200 ticks (+1 s); thread 11 "worker" had
 *            50 ticks in BASE and exited at 1008 s with 1.5 s (+1 s);
 *            p.cpu, its process counter (dead threads in it), +2 s
 *   svc 20:  thread 20 idle
 *   cc1 30:  born and gone between BASE and the middle file: its main
 *            thread 2 s and a helper thread 31 "cc1-helper" 0.5 s
 *   cc1 40:  exited at 1009 s with 1 s (in CAND's table)
 *   50:      exited at 999 s, before BASE: not in the interval
 * so 5.5 s of CPU over 10 s, all the root cgroup used: 1 s of live
 * threads and 4.5 s exited.
 */
/* With it, the recording also has process 60 "job", seen live only in
 * the middle file (in cgroup /jobs), that exits with 0.3 s before CAND:
 * its exit row knows no cgroup, the file before it does; and its child
 * 61 (0.2 s) and grandchild 62 (0.1 s), which no file saw live: their
 * rows name their parents (x.ppid), 61 job, 62 61, which exited after
 * it. And process 63 "fst" (0.4 s), a child of make 10 (in /) that no
 * file saw live, whose row says it exited in /fast (x.cgroup, role
 * cgroup, as from the BPF exit program), and its child 64 (0.1 s),
 * whose row names no cgroup: both in /fast. */
static bool with_job;
/* The exited worker's CPU at exit, us (below BASE's 0.5 s of it: another
 * source's rounding, test_exit_below_base). */
static uint64_t worker_exit_us = 1500000;

static void write_exit_side(int k, const char *path)
{
	enum { T_CPU, T_BEGIN, P_CPU, X_CPU, C_USE, X_PPID, X_CG, N_XF };
	const struct ctp_field_desc d[N_XF] = {
		[T_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[T_BEGIN] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[P_CPU] = {"p.cpu", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[X_CPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			   CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[C_USE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
			   CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[X_PPID] = {"x.ppid", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE,
			    CTP_FIELD_PARENT},
		[X_CG] = {"x.cgroup", NULL, CTP_SCOPE_EXITED, CTP_TYPE_STRING,
			  CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE,
			  CTP_FIELD_CGROUP},
	};
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_table *th = &cap->threads[0], *x = &cap->exited;
	const uint64_t s = 1000000000ull;
	for (int i = 0; i < N_XF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t cg = sb_cgroup(cap, "/"),
		 jobs = with_job && k == 1 ? sb_cgroup(cap, "/jobs") : 0;
	sb_put_u64(cap, &cap->cgroups, cg, CTP_CGROUP_IDENT, C_USE,
		   k == 2 ? (with_job ? 7600000 : 6500000) : 1000000);
	uint32_t r, p = sb_process(cap, 10, "make");
	sb_put_u64(cap, &cap->procs[0], p, CTP_PROCESS_IDENT, P_CPU,
		   k == 2 ? 350 : 150);
	r = sb_thread(cap, 10, "make", (int)cg);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_CPU, k == 2 ? 200 : 100);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_BEGIN, 100);
	if (k == 0) {
		r = sb_thread(cap, 11, "worker", (int)cg);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_CPU, 50);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_BEGIN, 200);
	}
	sb_process(cap, 20, "svc");
	r = sb_thread(cap, 20, "svc", (int)cg);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_CPU, 10);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_BEGIN, 100);
	if (with_job && k == 1) {
		sb_process(cap, 60, "job");
		r = sb_thread(cap, 60, "job", (int)jobs);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_CPU, 10);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_BEGIN, 100200);
	}
	if (with_job && k == 2) {
		r = sb_exited(cap, 60, 60, "job", 1008 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 300000);
		r = sb_exited(cap, 62, 62, "cc-job", 1006 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 100000);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_PPID, 61);
		r = sb_exited(cap, 61, 61, "sh", 1007 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 200000);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_PPID, 60);
		r = sb_exited(cap, 64, 64, "fk", 1006 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 100000);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_PPID, 63);
		r = sb_exited(cap, 63, 63, "fst", 1007 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 400000);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_PPID, 10);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CG,
			   sb_blob(cap, "/fast", 5));
		/* make's threads the exit program had no room for: one
		 * total of tid 0 (never make's live thread 10). */
		r = sb_exited(cap, 0, 10, "make", 1008 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 300000);
	}
	if (k == 1) {
		r = sb_exited(cap, 30, 30, "cc1", 1003 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 2000000);
		r = sb_exited(cap, 31, 30, "cc1-helper", 1003 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 500000);
	}
	if (k == 2) {
		r = sb_exited(cap, 11, 10, "worker", 1008 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, worker_exit_us);
		r = sb_exited(cap, 40, 40, "cc1", 1009 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 1000000);
		r = sb_exited(cap, 50, 50, "early", 999 * s);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 9000000);
	}
	cap->plugins[0].exited = true;
	write_apart(cap, k, 5, path);
}

/* An exited task whose value at exit is below what BASE had of it (the
 * exit record and the live thread are two sources, each rounded its own
 * way) changed by nothing, in the view's columns as in the exited summary
 * and the coverage line: never by its whole 0.4 s (a reset's rule). */
static void test_exit_below_base(void **state)
{
	static const char *const names[2] = {
		"low/ctprof-20231114T221320.000Z.ctprof.zst",
		"low/ctprof-20231114T221330.000Z.ctprof.zst"};
	char *out;
	size_t len;
	(void)state;
	assert_int_equal(mkdir("low", 0700) == 0 || errno == EEXIST, 1);
	worker_exit_us = 400000;
	write_exit_side(0, names[0]);
	write_exit_side(2, names[1]);
	worker_exit_us = 1500000;
	const char *args[] = {"compare", names[0], names[1],
			      "--view",	 "tx",	   NULL};
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 10 -1     make    10.0 +2.0s +1.0s");
	assert_null(strstr(out, "+400ms"));
	has_line(out, "CPU 5.5 s: threads 1.0 s (18%), 2 exited tasks 1.0 s "
		      "(18%), rest 3.5 s");
	free(out);
}

/* compare over a recording adds the tasks that exited in it to their
 * groups: a process, a thread, a name; coverage reaches 100%. */
static void test_view_exited(void **state)
{
	static const char *const names[3] = {
		"rec/ctprof-20231114T221320.000Z.ctprof.zst",
		"rec/ctprof-20231114T221325.000Z.ctprof.zst",
		"rec/ctprof-20231114T221330.000Z.ctprof.zst"};
	char *out;
	size_t len;
	(void)state;
	assert_int_equal(mkdir("rec", 0700) == 0 || errno == EEXIST, 1);
	for (int k = 0; k < 3; k++)
		write_exit_side(k, names[k]);
	const char *args[] = {"compare", names[0], names[2],
			      "--view",	 "tx",	   NULL};
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	e2e_golden(GOLDEN "/view-exited.txt", out, len);
	has_line(out, "CPU 5.5 s: threads 1.0 s (18%), 4 exited tasks 4.5 s "
		      "(82%), rest 0.0 s");
	/* cc1 30 from the middle file with its helper; its process counter
	 * is its tasks' (it started and ended in the interval). */
	has_line(out, " 30 exited cc1     25.0 +2.5s +2.5s");
	/* make: its thread and its exited worker, one of its tasks gone;
	 * its process counter already holds the worker. */
	has_line(out, " 10 -1     make    20.0 +2.0s +2.0s");
	has_line(out, " 11 exited  10 make    worker     10.0  +1.0s");
	assert_null(strstr(out, "early"));
	/* By name: both cc1 processes, 3.5 s. */
	has_line(out, "cc{N} exited 35.0 +3.5s");
	/* Each section's rows hold all the host's CPU, the top two 82%. */
	has_line(out, "  all 5 rows: 5.5 s of the host's 5.5 s CPU (100%)");
	free(out);
	const char *top2[] = {"compare", names[0], names[2], "--view",
			      "tx",	 "--top",  "2",	     NULL};
	assert_int_equal(e2e_run(top2, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "  these 2 rows: 4.5 s of the host's 5.5 s CPU (82%); "
		      "all rows 5.5 s (100%)");
	free(out);
	/* Without the middle file, its tasks are not there. */
	assert_int_equal(unlink(names[1]), 0);
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "CPU 5.5 s: threads 1.0 s (18%), 2 exited tasks 2.0 s "
		      "(36%), rest 2.5 s");
	assert_null(strstr(out, "cc1-helper"));
	free(out);
	/* A task seen live only in the file before its exit's: its cgroup
	 * (and name) come from there. */
	with_job = true;
	assert_int_equal(mkdir("rec2", 0700) == 0 || errno == EEXIST, 1);
	char rec2[3][64];
	for (int k = 0; k < 3; k++) {
		snprintf(rec2[k], sizeof(rec2[k]), "rec2/%s", names[k] + 4);
		write_exit_side(k, rec2[k]);
	}
	with_job = false;
	const char *cg[] = {"compare", rec2[0],	     rec2[2],  "--view",
			    "tx",      "--group-by", "cgroup", NULL};
	assert_int_equal(e2e_run(cg, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	if (!strstr(out, "\n/jobs  exited job "))
		fail_msg("no exited row for /jobs in:\n%s", out);
	/* With the child and grandchild, by their parents' cgroup. */
	has_line(out, "/jobs  exited job      6.0 +600ms +600ms");
	/* Where its row says it exited, not its parent's /; its child by
	 * it. */
	if (!strstr(out, "\n/fast  exited "))
		fail_msg("no exited row for /fast in:\n%s", out);
	/* make's total of tid 0 adds to make, BASE's thread 10 not taken
	 * from it. */
	has_line(out, "/      -2     make    23.0  +2.0s  +2.3s");
	free(out);
}

/*
 * Exits while a capture is taken (the plugin's table is drained when the
 * capture ends), in a recording of three files 5 s apart (boot 1000,
 * 1005, 1010 s; root cgroup usage 1.0, 3.5, 4.8 s):
 *   make 10: thread 10 100 -> 200 -> 300 ticks (+1 s each interval)
 *   cc 70:   thread 70 1.0 s, then 2.0 s read live by file 1, which then
 *            also records its exit at 1005.1 s with 2.3 s
 *   ld 80:   thread 80 0.5 s, exits at 1005.05 s with 1.0 s, in file 1's
 *            table but before file 1 read it
 * so cc's true change is +1.0 s over 0 -> 1 (its live reading; its exit
 * record is no more of it) and +0.3 s over 1 -> 2 (the record less the
 * 2.0 s read live); ld's +0.5 s over 0 -> 1 and nothing over 1 -> 2.
 * Each exit counts once: 0 -> 2 is the sum, cc +1.3 s, ld +0.5 s.
 */
static void write_during_side(int k, const char *path)
{
	enum { T_CPU, T_BEGIN, X_CPU, C_USE, N_DF };
	const struct ctp_field_desc d[N_DF] = {
		[T_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[T_BEGIN] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
		[X_CPU] = {"x.cpu", NULL, CTP_SCOPE_EXITED, CTP_TYPE_U64,
			   CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[C_USE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
			   CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
	};
	static const uint64_t usage[3] = {1000000, 3500000, 4800000};
	/* Per thread (make, cc, ld) its ticks in file k; 0: not live. */
	static const struct {
		uint32_t tid;
		const char *comm;
		uint64_t cpu[3];
	} t[3] = {{10, "make", {100, 200, 300}},
		  {70, "cc", {100, 200, 0}},
		  {80, "ld", {50, 0, 0}}};
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_table *th = &cap->threads[0], *x = &cap->exited;
	const uint64_t s = 1000000000ull;
	for (int i = 0; i < N_DF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t cg = sb_cgroup(cap, "/");
	sb_put_u64(cap, &cap->cgroups, cg, CTP_CGROUP_IDENT, C_USE, usage[k]);
	for (int i = 0; i < 3; i++) {
		if (!t[i].cpu[k])
			continue;
		sb_process(cap, t[i].tid, t[i].comm);
		uint32_t r = sb_thread(cap, t[i].tid, t[i].comm, (int)cg);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_CPU, t[i].cpu[k]);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_BEGIN, 100);
	}
	if (k == 1) {
		uint32_t r = sb_exited(cap, 70, 70, "cc", 1005 * s + s / 10);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 2300000);
		r = sb_exited(cap, 80, 80, "ld", 1005 * s + s / 20);
		sb_put_u64(cap, x, r, CTP_EXITED_IDENT, X_CPU, 1000000);
	}
	cap->plugins[0].exited = true;
	write_apart(cap, k, 5, path);
}

/* compare over each interval of that recording: a thread read live by
 * CAND whose exit CAND's table also holds is its live change alone, and
 * an exit in BASE's table that BASE did not read live was the interval
 * before's; the intervals add up to the whole. */
static void test_exit_during_capture(void **state)
{
	static const char *const names[3] = {
		"dur/ctprof-20231114T221320.000Z.ctprof.zst",
		"dur/ctprof-20231114T221325.000Z.ctprof.zst",
		"dur/ctprof-20231114T221330.000Z.ctprof.zst"};
	char *out;
	size_t len;
	(void)state;
	assert_int_equal(mkdir("dur", 0700) == 0 || errno == EEXIST, 1);
	for (int k = 0; k < 3; k++)
		write_during_side(k, names[k]);
	assert_int_equal(setenv("TZ", "UTC", 1), 0);
	/* 0 -> 1, picked in the recording. */
	const char *first[] = {"compare", "dur",
			       "--from",  "2023-11-14T22:13:20",
			       "--to",	  "2023-11-14T22:13:25",
			       "--view",  "tx",
			       NULL};
	assert_int_equal(e2e_run(first, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 70         70 cc      cc     20.0  +1.0s");
	has_line(out, " 80 exited  80 ld      ld     10.0 +500ms");
	has_line(out, "CPU 2.5 s: threads 2.0 s (80%), 1 exited tasks 0.5 s "
		      "(20%), rest 0.0 s");
	free(out);
	/* 1 -> 2: BASE the file before the latest. */
	const char *second[] = {"compare", "dur", "--view", "tx", NULL};
	assert_int_equal(e2e_run(second, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 70 exited  70 cc      cc      6.0 +300ms");
	no_line_with(out, " ld ");
	has_line(out, "CPU 1.3 s: threads 1.0 s (77%), 1 exited tasks 0.3 s "
		      "(23%), rest 0.0 s");
	free(out);
	/* 0 -> 2 over the middle file: the sum. */
	const char *whole[] = {"compare", names[0], names[2],
			       "--view",  "tx",	    NULL};
	assert_int_equal(e2e_run(whole, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 70 exited  70 cc      cc     13.0  +1.3s");
	has_line(out, " 80 exited  80 ld      ld      5.0 +500ms");
	/* (its rest, a rounding's -0.0 s or 0.0 s, is not the point) */
	assert_non_null(strstr(out, "\nCPU 3.8 s: threads 2.0 s (53%), 2 "
				    "exited tasks 1.8 s (47%), rest "));
	free(out);
}

/* Side k of a pair 10 s apart (BASE at boot 1000 s) into path, and cap
 * freed. */
static void write_pair_side(struct ctp_capture *cap, int k, const char *path)
{
	write_apart(cap, k, 10, path);
}

/*
 * A capture takes a while, and each process is read at its own moment
 * (read_boottime_ns). BASE starts at boot 1000 s and reads process 10 at
 * once, process 20 at 1003 s (a slow capture); CAND starts at 1010 s and
 * reads 20 at once, 10 at 1013 s. So thread 10 changed over 13 s, thread
 * 20 over 7 s, while the captures are 10 s apart. Each runs half the
 * time and waits for a CPU the other half, run + wait = its interval:
 * 50% + 50% each, never 65% + 65% (13 s over 10). Thread 21 started in
 * process 20 in the interval (1 s of CPU over 20's 7 s: 14.3%); process
 * 30 is new, read at 1012 s: 6 s of CPU over the 12 s since BASE's start.
 * `read` false writes no read times (older files): the captures'
 * interval for every task.
 */
static void write_read_side(int k, const char *path, bool read)
{
	enum { T_RUN, T_WAIT, T_BEGIN, N_RF };
	const struct ctp_field_desc d[N_RF] = {
		[T_RUN] = {"t.run", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_NS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[T_WAIT] = {"t.wait", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			    CTP_UNIT_NS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[T_BEGIN] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     CTP_FIELD_START_TIME},
	};
	const uint64_t s = 1000000000ull;
	struct {
		uint32_t tgid, tid;
		uint64_t read_s, run, wait, begin;
	} rows[2][4] = {
		{{10, 10, 1000, 1 * s, 1 * s, 100},
		 {20, 20, 1003, 2 * s, 2 * s, 100}},
		{{10, 10, 1013, 7500000000ull, 7500000000ull, 100},
		 {20, 20, 1010, 5500000000ull, 5500000000ull, 100},
		 {20, 21, 1010, 1 * s, 0, 100500},
		 {30, 30, 1012, 6 * s, 0, 100100}},
	};
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_table *th = &cap->threads[0];
	for (int i = 0; i < N_RF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t last = 0;
	for (int i = 0; i < (k ? 4 : 2); i++) {
		if (rows[k][i].tgid != last) {
			uint32_t p = sb_process(cap, rows[k][i].tgid, "p");
			if (read)
				ctp_table_set(&cap->procs[0], p,
					      CTP_PCOL_READ_NS,
					      rows[k][i].read_s * s);
			last = rows[k][i].tgid;
		}
		char comm[16];
		snprintf(comm, sizeof(comm), "t%u", rows[k][i].tid);
		uint32_t r = sb_thread(cap, rows[k][i].tid, comm, -1);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_RUN, rows[k][i].run);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_WAIT,
			   rows[k][i].wait);
		sb_put_u64(cap, th, r, CTP_THREAD_IDENT, T_BEGIN,
			   rows[k][i].begin);
	}
	write_pair_side(cap, k, path);
}

static void test_task_interval(void **state)
{
	char *out;
	size_t len;
	(void)state;
	write_read_side(0, "rbase.ctprof", true);
	write_read_side(1, "rcand.ctprof", true);
	const char *view[] = {"compare", "rbase.ctprof", "rcand.ctprof",
			      "--view",	 "tq",		 "--wide",
			      NULL};
	assert_int_equal(e2e_run(view, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 10      50.0   50.0 500ms/s");
	has_line(out, " 20      50.0   50.0 500ms/s");
	has_line(out, " 21 new   0.0   14.3 143ms/s");
	has_line(out, " 30 new   0.0   50.0 500ms/s");
	free(out);
	/* The full comparison: the same per-task intervals. */
	const char *csv[] = {"compare",	   "rbase.ctprof", "rcand.ctprof",
			     "--group-by", "tid",	   "--fields",
			     "t.run",	   "--format",	   "csv",
			     "--sections", "threads",	   NULL};
	assert_int_equal(e2e_run(csv, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "threads,10,continuing,1,1,1,1,t.run,1000000000,"
		      "7500000000,6500000000,650.0000,1,5e+08,50.0000,0,1,0,0,"
		      "1009.000,1009.000,,,");
	has_line(out, "threads,21,new,,1,,1,t.run,,1000000000,1000000000,,1,"
		      "1.42857e+08,14.2857,0,0,1,0,5.000,5.000,,,");
	free(out);
	/* --sort rate: by the rates shown (10, 20 and 30 at 500 ms/s, in
	 * key order, then 21), not by the changes (6.5, 6, 3.5, 1 s). */
	static const char *const sorts[][2] = {{"rate:t.run", "10 20 30 21"},
					       {"delta:t.run", "10 30 20 21"}};
	for (int i = 0; i < 2; i++) {
		const char *by[] = {"compare",	    "rbase.ctprof",
				    "rcand.ctprof", "--group-by",
				    "tid",	    "--fields",
				    "t.run",	    "--format",
				    "csv",	    "--sections",
				    "threads",	    "--sort",
				    sorts[i][0],    NULL};
		char order[64] = "";
		assert_int_equal(e2e_run(by, "out.txt", "err.txt"), 0);
		assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
		for (char *l = strstr(out, "\nthreads,"); l;
		     l = strstr(l + 1, "\nthreads,")) {
			size_t o = strlen(order);
			snprintf(order + o, sizeof(order) - o, "%s%ld",
				 o ? " " : "", strtol(l + 9, NULL, 10));
		}
		if (strcmp(order, sorts[i][1]))
			fail_msg("--sort %s: %s, not %s", sorts[i][0], order,
				 sorts[i][1]);
		free(out);
	}
	/* Files without read times: the captures' 10 s for every task. */
	write_read_side(0, "rbase.ctprof", false);
	write_read_side(1, "rcand.ctprof", false);
	assert_int_equal(e2e_run(view, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 10      65.0   65.0 650ms/s");
	has_line(out, " 20      35.0   35.0 350ms/s");
	free(out);
}

/*
 * PID 1 reaps orphans (issue 28, point 9): its children's counters
 * (role reaped) jump by each orphan's whole life, 44.6 s in a 10 s
 * interval on a host of 2 CPUs; a percent of the interval (446%) is no
 * measure of anything. The fields are named as procfs-stat's, so that the
 * shipped `top` view reads them.
 */
static void write_reaped_side(int k, const char *path)
{
	enum { R_UT, R_CUT, R_CST, R_START, N_RR };
	const struct ctp_field_desc d[N_RR] = {
		[R_UT] = {"procfs.utime", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[R_CUT] = {"procfs.children.utime", NULL, CTP_SCOPE_PROCESS,
			   CTP_TYPE_U64, CTP_UNIT_TICKS, CTP_KIND_COUNTER,
			   CTP_RULE_SUM, CTP_FIELD_REAPED},
		[R_CST] = {"procfs.children.stime", NULL, CTP_SCOPE_PROCESS,
			   CTP_TYPE_U64, CTP_UNIT_TICKS, CTP_KIND_COUNTER,
			   CTP_RULE_SUM, CTP_FIELD_REAPED},
		[R_START] = {"procfs.start_time", NULL, CTP_SCOPE_THREAD,
			     CTP_TYPE_U64, CTP_UNIT_TICKS, CTP_KIND_ORDINAL,
			     CTP_RULE_RANGE, CTP_FIELD_START_TIME},
	};
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_table *th = &cap->threads[0], *pt = &cap->procs[0];
	for (int i = 0; i < N_RR; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	uint32_t p = sb_process(cap, 1, "init");
	sb_put_u64(cap, pt, p, CTP_PROCESS_IDENT, R_CUT, k ? 5000 : 1000);
	sb_put_u64(cap, pt, p, CTP_PROCESS_IDENT, R_CST, k ? 960 : 500);
	uint32_t r = sb_thread(cap, 1, "init", -1);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, R_UT, k ? 310 : 300);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, R_START, 100);
	write_pair_side(cap, k, path);
}

static void test_reaped(void **state)
{
	char *out;
	size_t len;
	(void)state;
	write_reaped_side(0, "cbase.ctprof");
	write_reaped_side(1, "ccand.ctprof");
	setenv("COLUMNS", "80", 1);
	/* The shipped view: the amount, and what it is. */
	const char *top[] = {"compare", "cbase.ctprof", "ccand.ctprof", NULL};
	assert_int_equal(e2e_run(top, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "PID COMMAND CPU%   CHLD    AGE   TIME");
	has_line(out, "  1 init     1.0 +44.6s 16m49s +100ms");
	has_line(out, "  CHLD: whole lives of the children reaped in the "
		      "interval, not a share of it");
	no_line_with(out, "446");
	free(out);
	/* A view that asks for a percent and a rate of them: amounts too. */
	const char *tr[] = {"compare", "cbase.ctprof", "ccand.ctprof",
			    "--view",  "tr",	       NULL};
	assert_int_equal(e2e_run(tr, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "PID COMMAND  KIDS% KIDS/S CPU%");
	has_line(out, "  1 init    +44.6s +40.0s  1.0");
	has_line(out, "  KIDS%: whole lives of the children reaped in the "
		      "interval, not a share of it");
	has_line(out, "  KIDS/S: whole lives of the children reaped in the "
		      "interval, not a share of it");
	free(out);
	/* One snapshot: what the column holds. */
	const char *show[] = {"show", "ccand.ctprof", NULL};
	assert_int_equal(e2e_run(show, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out,
		 "  CHLD: whole lives of the children reaped (waited for)");
	free(out);
	/* The full comparison: no rate, no percent of CPU, and why. */
	const char *all[] = {
		"compare",  "cbase.ctprof", "ccand.ctprof", "--view",  "all",
		"--format", "csv",	    "--sections",   "threads", NULL};
	assert_int_equal(e2e_run(all, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "threads,init,continuing,1,1,1,1,procfs.children.utime,"
		      "1000,5000,4000,400.0000,1,,,0,1,0,0,1009.000,1009.000,,"
		      ",");
	has_line(out, "threads,init,continuing,1,1,1,1,procfs.utime,300,310,"
		      "10,3.3333,1,1,1.0000,0,1,0,0,1009.000,1009.000,,,");
	free(out);
	const char *tab[] = {
		"compare", "cbase.ctprof", "ccand.ctprof", "--view",
		"all",	   "--sections",   "threads",	   NULL};
	assert_int_equal(e2e_run(tab, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out,
		 "No rate or %CPU for reaped children's whole lives (added "
		 "as each was reaped, not time in the interval): "
		 "procfs.children.utime, procfs.children.stime");
	no_line_with(out, "446");
	free(out);
	setenv("COLUMNS", "110", 1);
}

/*
 * Exited I/O in KiB steps (issue 28, point 10): taskstats rounds an
 * exited task's I/O counters down to a multiple of 1024, its system call
 * counts too (field `step`), so a child that read 9800 bytes in 18 calls
 * shows 9216 bytes and 0 calls. `compare --view io` says so under each
 * section that adds such a task; `with_exit` false: no exited task, no
 * line. Fields are named as the io and taskstats plugins', so that the
 * shipped view reads them.
 */
static void write_kib_side(int k, const char *path, bool with_exit)
{
	enum { K_RB, K_SR, K_START, K_XRB, K_XSR, N_K };
	const struct ctp_field_desc d[N_K] = {
		[K_RB] = {"io.read_bytes", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_BYTES, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[K_SR] = {"io.syscr", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			  CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[K_START] = {"procfs.start_time", NULL, CTP_SCOPE_THREAD,
			     CTP_TYPE_U64, CTP_UNIT_TICKS, CTP_KIND_ORDINAL,
			     CTP_RULE_RANGE, CTP_FIELD_START_TIME},
		[K_XRB] = {"taskstats.exited.read_bytes", NULL,
			   CTP_SCOPE_EXITED, CTP_TYPE_U64, CTP_UNIT_BYTES,
			   CTP_KIND_COUNTER, CTP_RULE_SUM, CTP_FIELD_KIB_STEP},
		[K_XSR] = {"taskstats.exited.syscr", NULL, CTP_SCOPE_EXITED,
			   CTP_TYPE_U64, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
			   CTP_RULE_SUM, CTP_FIELD_KIB_STEP},
	};
	const uint64_t sec = 1000000000ull;
	struct ctp_capture *cap = sb_capture("t");
	struct ctp_table *th = &cap->threads[0];
	for (int i = 0; i < N_K; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	sb_process(cap, 10, "make");
	uint32_t r = sb_thread(cap, 10, "make", -1);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, K_RB, k ? 8192 : 4096);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, K_SR, k ? 40 : 20);
	sb_put_u64(cap, th, r, CTP_THREAD_IDENT, K_START, 100);
	if (k && with_exit) {
		uint32_t x = sb_exited(cap, 11, 11, "cc1", 1005 * sec);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, K_XRB, 9216);
		sb_put_u64(cap, &cap->exited, x, CTP_EXITED_IDENT, K_XSR, 0);
	}
	cap->plugins[0].exited = true;
	write_pair_side(cap, k, path);
}

static void test_kib_steps(void **state)
{
	char *out;
	size_t len;
	(void)state;
	setenv("COLUMNS", "80", 1);
	write_kib_side(0, "kbase.ctprof", true);
	write_kib_side(1, "kcand.ctprof", true);
	const char *io[] = {"compare", "kbase.ctprof", "kcand.ctprof",
			    "--view",  "io",	       NULL};
	assert_int_equal(e2e_run(io, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, " 11 exited cc1     +9.00K     0");
	has_line(out, "  READ, READS: exited tasks' values are rounded down to "
		      "1024s (KiB steps)");
	has_line(out, " 11 exited  11 cc1    +9.00K +9.00K     0");
	has_line(out, "  DISK, READ, READS: exited tasks' values are rounded "
		      "down to 1024s (KiB steps)");
	free(out);
	/* Narrower: the reason on a line of its own. */
	setenv("COLUMNS", "60", 1);
	assert_int_equal(e2e_run(io, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	has_line(out, "  DISK, READ, READS:");
	has_line(out, "    exited tasks' values are rounded down to 1024s (KiB "
		      "steps)");
	free(out);
	/* No exited task shown: nothing to say. */
	write_kib_side(1, "kcand.ctprof", false);
	assert_int_equal(e2e_run(io, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	no_line_with(out, "1024");
	free(out);
	setenv("COLUMNS", "110", 1);
}

/* Output of one invocation against tests/golden/compare/NAME. */
static void golden(const char *name, ...)
{
	const char *args[40] = {"compare", "base.ctprof", "cand.ctprof"};
	char path[PATH_MAX], *out;
	size_t n = 3, len;
	va_list ap;
	va_start(ap, name);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 39;)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	assert_int_equal(e2e_run(args, "out.txt", "err.txt"), 0);
	assert_int_equal(e2e_read_file("out.txt", &out, &len), 0);
	assert_int_equal(E2E_PATHF(path, "%s/%s", GOLDEN, name), 0);
	e2e_golden(path, out, len);
	free(out);
}

static void test_golden(void **state)
{
	(void)state;
	golden("table-full.txt", "--view", "all", NULL);
	/* The default output is a view over the interval: the test's own
	 * (these snapshots have no start times: group-by-group
	 * differences). */
	golden("view-t.txt", "--view", "t", NULL);
	golden("table-delta.txt", "--mode", "delta", NULL);
	golden("table-percent.txt", "--mode", "percent", NULL);
	golden("table-arrow.txt", "--mode", "arrow", NULL);
	golden("table-comm-cgroup.txt", "--group-by", "cgroup,comm",
	       "--sections", "threads,cgroups", NULL);
	golden("output.json", "--format", "json", NULL);
	golden("output.csv", "--format", "csv", NULL);
	/* Narrow terminal: columns dropped, names cut. */
	setenv("COLUMNS", "60", 1);
	golden("table-narrow.txt", "--sections", "threads", NULL);
	setenv("COLUMNS", "110", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_values),
		cmocka_unit_test(test_sorting_and_limit),
		cmocka_unit_test(test_field_globs),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_json_parses),
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_color),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_identity_sort),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_view_identity),
		cmocka_unit_test(test_unknown_before),
		cmocka_unit_test(test_view_exited),
		cmocka_unit_test(test_exit_below_base),
		cmocka_unit_test(test_exit_during_capture),
		cmocka_unit_test(test_task_interval),
		cmocka_unit_test(test_reaped),
		cmocka_unit_test(test_kib_steps),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
