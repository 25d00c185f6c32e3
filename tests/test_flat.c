/* SPDX-License-Identifier: MIT */
/*
 * Flat, typed rows (core/analysis/flat.c) and `show --format csv|json|ndjson`
 * on a hand-built snapshot written by the real writer and read back by the
 * real reader: exact CSV, JSON and NDJSON text for every table and for a
 * group table, with absent values, a comm holding a comma, a quote, a
 * newline and a byte that is not UTF-8, cpusets (one CPU, ranges, empty),
 * negative I64 values, derived fields and RANGE aggregates.
 *
 * `test_flat --tools` (ctest test_flat_tools) loads the output into the
 * real programs: the CSV into sqlite3 (.mode csv, .import), whose sums and
 * GROUP BY must equal the snapshot's own, and the JSON into python3's json
 * module and jq. Exits 77 when sqlite3 or jq is not installed
 * (tools/dev.sh installs both).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "flat.h"
#include "group.h"
#include "reader.h"
#include "readopts.h"
#include "snapbuild.h"

#define SKIP 77

static char tmp[PATH_MAX];
static char snap_path[PATH_MAX + 32];

/* ---- The snapshot ---- */

#define ABSENT                                                                 \
	{                                                                      \
		0                                                              \
	}
#define U(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(x)                                \
	}
#define I(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(int64_t)(x)                       \
	}
#define S(lit)                                                                 \
	{                                                                      \
		.set = true, .s = (lit)                                        \
	}
#define C(...)                                                                 \
	{                                                                      \
		.set = true, .cpus = { __VA_ARGS__, -1 }                       \
	}
#define EMPTYSET                                                               \
	{                                                                      \
		.set = true, .cpus = { -1 }                                    \
	}

enum { T_CNT, T_DELTA, T_STATE, T_ON, T_WCHAN, T_CPUS, T_A, T_B, N_TF };
enum { P_RSS = N_TF, C_USAGE, H_MEM, H_SKEW, N_PLAIN };

static const struct ctp_field_desc plain[N_PLAIN] = {
	[T_CNT] = {"t.cnt", "a count", CTP_SCOPE_THREAD, CTP_TYPE_U64,
		   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_DELTA] = {"t.delta", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64,
		     CTP_UNIT_NS, CTP_KIND_GAUGE, CTP_RULE_RANGE},
	[T_STATE] = {"t.state", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CHAR,
		     CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_ON] = {"t.on", NULL, CTP_SCOPE_THREAD, CTP_TYPE_BOOL, CTP_UNIT_NONE,
		  CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_WCHAN] = {"t.wchan", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING,
		     CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[T_CPUS] = {"t.cpus", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CPUSET,
		    CTP_UNIT_NONE, CTP_KIND_CPUSET, CTP_RULE_UNION},
	[T_A] = {"t.a", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[T_B] = {"t.b", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[P_RSS] = {"p.rss", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64,
		   CTP_UNIT_BYTES, CTP_KIND_PEAK, CTP_RULE_MAX},
	[C_USAGE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
		     CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[H_MEM] = {"h.mem", NULL, CTP_SCOPE_HOST, CTP_TYPE_U64, CTP_UNIT_BYTES,
		   CTP_KIND_GAUGE, CTP_RULE_MAX},
	[H_SKEW] = {"h.skew", NULL, CTP_SCOPE_HOST, CTP_TYPE_I64, CTP_UNIT_NS,
		    CTP_KIND_GAUGE, CTP_RULE_MAX},
};

#define TERM(f, c)                                                             \
	{                                                                      \
		.field = (f), .coef = (c), .max_set = 0                        \
	}
#define DERIVED(nm, ty, kd, rl, ...)                                           \
	{                                                                      \
		.abi = CTP_ABI_MAJOR, .size = sizeof(struct ctp_derived_desc), \
		.field =                                                       \
			{nm, NULL, CTP_SCOPE_THREAD, ty, CTP_UNIT_NS, kd, rl}, \
		.n_terms = 2, .terms = {                                       \
			__VA_ARGS__                                            \
		}                                                              \
	}

/* t.ab = a + b, t.net = a - b (I64, negative when b > a). */
static const struct ctp_derived_desc derived[] = {
	DERIVED("t.ab", CTP_TYPE_U64, CTP_KIND_COUNTER, CTP_RULE_SUM,
		TERM("t.a", 1), TERM("t.b", 1)),
	DERIVED("t.net", CTP_TYPE_I64, CTP_KIND_GAUGE, CTP_RULE_MAX,
		TERM("t.a", 1), TERM("t.b", -1)),
};

/* A comma, a quote, a newline and a byte that is not UTF-8. */
#define ODD "we\"i,rd\n\xff"

static const char *const cgroups[] = {"/a.slice/x,y.service", "/b"};
static const struct sb_cell cg_usage[] = {U(100), ABSENT};

struct trow {
	uint32_t tgid, tid;
	const char *comm;
	int cg;
	struct sb_cell v[N_TF];
};

static const struct trow threads[] = {
	/* cnt delta state on wchan cpus a b */
	{10,
	 10,
	 "app",
	 0,
	 {U(5), I(-7), U('S'), U(1), S("ep_poll"), C(0, 1, 2, 3, 8), U(100),
	  U(30)}},
	{10,
	 11,
	 "app",
	 0,
	 {U(7), I(3), U('R'), U(0), ABSENT, EMPTYSET, U(1), U(2)}},
	{20,
	 20,
	 ODD,
	 1,
	 {ABSENT, I(INT64_MIN), U('D'), ABSENT, S("a\tb"), C(5), ABSENT, U(7)}},
	{30,
	 30,
	 NULL,
	 -1,
	 {U(0), ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT}},
};

static const struct {
	uint32_t tgid;
	const char *comm;
	struct sb_cell rss;
} procs[] = {{10, "app", U(4096)}, {20, ODD, ABSENT}, {30, NULL, U(0)}};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void register_fields(struct ctp_capture *cap)
{
	for (int i = 0; i < N_PLAIN; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &plain[i]), i);
	for (size_t i = 0; i < N(derived); i++) {
		const char *why = NULL;
		int term;
		int r = ctp_registry_add_derived(&cap->reg, 0, &derived[i],
						 &why, &term);
		if (r < 0)
			fail_msg("derived %zu: %d (%s)", i, r, why);
	}
}

static void write_snapshot(const char *path)
{
	struct ctp_capture *cap = sb_capture("t");
	struct sb_cell mem = U(1048576), skew = I(-3);
	char err[512];

	register_fields(cap);
	sb_put(cap, &cap->host, 0, CTP_HOST_IDENT, H_MEM, &mem);
	sb_put(cap, &cap->host, 0, CTP_HOST_IDENT, H_SKEW, &skew);
	for (size_t i = 0; i < N(cgroups); i++) {
		uint32_t r = sb_cgroup(cap, cgroups[i]);
		sb_put(cap, &cap->cgroups, r, CTP_CGROUP_IDENT, C_USAGE,
		       &cg_usage[i]);
	}
	for (size_t p = 0; p < N(procs); p++) {
		uint32_t pr = sb_process(cap, procs[p].tgid, procs[p].comm);
		sb_put(cap, &cap->procs[0], pr, CTP_PROCESS_IDENT, P_RSS,
		       &procs[p].rss);
		for (size_t k = 0; k < N(threads); k++) {
			const struct trow *t = &threads[k];
			if (t->tgid != procs[p].tgid)
				continue;
			uint32_t r = sb_thread(cap, t->tid, t->comm, t->cg);
			for (int f = 0; f < N_TF; f++)
				sb_put(cap, &cap->threads[0], r,
				       CTP_THREAD_IDENT, f, &t->v[f]);
		}
	}
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
}

static struct ctp_snap *open_snap(const char *path)
{
	struct ctp_snap *snap;
	char err[512];
	if (ctp_snap_open(path, 1ull << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("open %s: %s", path, err);
	return snap;
}

/* ---- Running the writer ---- */

struct sel {
	const char *fields, *sort, *group_by;
	uint64_t limit;
	bool capture_cols;
};

/* ctp_flat_write's output (and return value in *rc) for one table. */
static char *flat(const struct ctp_snap *snap, uint8_t format, uint8_t scope,
		  const struct sel *s, int *rc, char *err, size_t errlen)
{
	struct ctp_readopts r = {.sort = s ? s->sort : NULL,
				 .limit = s ? s->limit : 0};
	char *globs[8], fields[256], axes[64];
	struct ctp_groups *groups = NULL;
	char *buf = NULL;
	size_t len = 0;

	if (s && s->fields) {
		snprintf(fields, sizeof(fields), "%s", s->fields);
		for (char *save = NULL, *g = strtok_r(fields, ",", &save);
		     g && r.n_globs < N(globs); g = strtok_r(NULL, ",", &save))
			globs[r.n_globs++] = g;
		r.globs = globs;
	}
	if (s && s->group_by) {
		snprintf(axes, sizeof(axes), "%s", s->group_by);
		assert_int_equal(
			ctp_group_spec_parse(axes, &r.spec, err, errlen), 0);
		assert_int_equal(
			ctp_groups_new(snap, &r.spec, &groups, err, errlen), 0);
	}
	struct ctp_flat_opts o = {.format = format,
				  .scope = scope,
				  .sel = &r,
				  .capture_cols = s && s->capture_cols};
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	*rc = ctp_flat_write(m, snap, groups, &o, err, errlen);
	fclose(m);
	ctp_groups_free(groups);
	return buf;
}

/* The text of one table, which must be written without error. */
static char *flat_ok(const struct ctp_snap *snap, uint8_t format, uint8_t scope,
		     const struct sel *s)
{
	char err[512] = "";
	int rc;
	char *out = flat(snap, format, scope, s, &rc, err, sizeof(err));
	if (rc != 0)
		fail_msg("ctp_flat_write: %d (%s)", rc, err);
	return out;
}

static void expect(const struct ctp_snap *snap, uint8_t format, uint8_t scope,
		   const struct sel *s, const char *want)
{
	char *got = flat_ok(snap, format, scope, s);
	if (strcmp(got, want) != 0)
		fail_msg("got:\n%s\nwant:\n%s", got, want);
	free(got);
}

/* ---- Exact output ---- */

static void test_threads_csv(void **state)
{
	const struct ctp_snap *snap = *state;
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, NULL,
	       "tid,tgid,comm,pcomm,cgroup,t.cnt,t.delta,t.state,t.on,"
	       "t.wchan,t.cpus,t.a,t.b,t.ab,t.net\n"
	       "10,10,app,app,\"/a.slice/x,y.service\",5,-7,S,true,ep_poll,"
	       "\"0-3,8\",100,30,130,70\n"
	       "11,10,app,app,\"/a.slice/x,y.service\",7,3,R,false,,\"\",1,2,"
	       "3,-1\n"
	       "20,20,\"we\"\"i,rd\n\\u00ff\",\"we\"\"i,rd\n\\u00ff\",/b,,"
	       "-9223372036854775808,D,,a\tb,5,,7,,\n"
	       "30,30,,,,0,,,,,,,,,\n");
}

static void test_threads_json(void **state)
{
	const struct ctp_snap *snap = *state;
	struct sel s = {.fields = "t.cnt,t.state,t.on,t.wchan,t.cpus,t.net"};
	static const char rows[] =
		"{\"tid\":10,\"tgid\":10,\"comm\":\"app\",\"pcomm\":\"app\","
		"\"cgroup\":\"/a.slice/x,y.service\",\"t.cnt\":5,\"t.state\":"
		"\"S\",\"t.on\":true,\"t.wchan\":\"ep_poll\",\"t.cpus\":"
		"\"0-3,8\",\"t.net\":70}SEP"
		"{\"tid\":11,\"tgid\":10,\"comm\":\"app\",\"pcomm\":\"app\","
		"\"cgroup\":\"/a.slice/x,y.service\",\"t.cnt\":7,\"t.state\":"
		"\"R\",\"t.on\":false,\"t.wchan\":null,\"t.cpus\":\"\","
		"\"t.net\":-1}SEP"
		"{\"tid\":20,\"tgid\":20,\"comm\":\"we\\\"i,rd\\n\\u00ff\","
		"\"pcomm\":\"we\\\"i,rd\\n\\u00ff\",\"cgroup\":\"/b\","
		"\"t.cnt\":null,\"t.state\":\"D\",\"t.on\":null,\"t.wchan\":"
		"\"a\\tb\",\"t.cpus\":\"5\",\"t.net\":null}SEP"
		"{\"tid\":30,\"tgid\":30,\"comm\":null,\"pcomm\":null,"
		"\"cgroup\":null,\"t.cnt\":0,\"t.state\":null,\"t.on\":null,"
		"\"t.wchan\":null,\"t.cpus\":null,\"t.net\":null}";
	char want[4096], nd[4096];
	/* JSON: "[\n" rows joined by ",\n" "\n]\n"; NDJSON: a row a line. */
	size_t o = (size_t)snprintf(want, sizeof(want), "[\n");
	size_t n = 0;
	for (const char *p = rows; *p;) {
		const char *sep = strstr(p, "SEP");
		size_t l = sep ? (size_t)(sep - p) : strlen(p);
		o += (size_t)snprintf(want + o, sizeof(want) - o, "%.*s%s",
				      (int)l, p, sep ? ",\n" : "\n]\n");
		n += (size_t)snprintf(nd + n, sizeof(nd) - n, "%.*s\n", (int)l,
				      p);
		p += l + (sep ? 3 : 0);
	}
	expect(snap, CTP_FLAT_JSON, CTP_SCOPE_THREAD, &s, want);
	expect(snap, CTP_FLAT_NDJSON, CTP_SCOPE_THREAD, &s, nd);
}

static void test_other_tables(void **state)
{
	const struct ctp_snap *snap = *state;
	/* A process's cgroup is its main thread's (tid == tgid). */
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_PROCESS, NULL,
	       "tgid,comm,nthreads,cgroup,p.rss\n"
	       "10,app,2,\"/a.slice/x,y.service\",4096\n"
	       "20,\"we\"\"i,rd\n\\u00ff\",1,/b,\n"
	       "30,,1,,0\n");
	expect(snap, CTP_FLAT_NDJSON, CTP_SCOPE_PROCESS, NULL,
	       "{\"tgid\":10,\"comm\":\"app\",\"nthreads\":2,\"cgroup\":"
	       "\"/a.slice/x,y.service\",\"p.rss\":4096}\n"
	       "{\"tgid\":20,\"comm\":\"we\\\"i,rd\\n\\u00ff\",\"nthreads\":1,"
	       "\"cgroup\":\"/b\",\"p.rss\":null}\n"
	       "{\"tgid\":30,\"comm\":null,\"nthreads\":1,\"cgroup\":null,"
	       "\"p.rss\":0}\n");
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_CGROUP, NULL,
	       "path,c.usage\n\"/a.slice/x,y.service\",100\n/b,\n");
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_HOST, NULL,
	       "h.mem,h.skew\n1048576,-3\n");
	expect(snap, CTP_FLAT_JSON, CTP_SCOPE_HOST, NULL,
	       "[\n{\"h.mem\":1048576,\"h.skew\":-3}\n]\n");
	/* The capture columns export leads with (issues 16, 31): the
	 * start as ns and as RFC 3339 UTC text. */
	struct sel cap = {.capture_cols = true};
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_HOST, &cap,
	       "start_realtime_ns,capture_time,hostname,h.mem,h.skew\n"
	       "1700000000000000000,2023-11-14T22:13:20.000000Z,,1048576,-3"
	       "\n");
}

/*
 * Groups by process name: the unknown name first, then app (threads 10
 * and 11), then the odd name (kept: its newline is a separator, the other
 * tokens have nothing to fold). RANGE is two columns; the mode of S and R
 * is R (ties to the smallest), of true and false false; the union of
 * {0-3,8} and {} is 0-3,8; t.cnt of the odd group is absent (no thread had
 * it), t.ab absent as its t.a is.
 */
static void test_groups(void **state)
{
	const struct ctp_snap *snap = *state;
	struct sel s = {.group_by = "pcomm"};
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, &s,
	       "pcomm,threads,processes,cgroups,t.cnt,t.delta.min,t.delta.max,"
	       "t.state,t.on,t.wchan,t.cpus,t.a,t.b,t.ab,t.net\n"
	       ",1,1,0,0,,,,,,,,,,\n"
	       "app,2,1,1,12,-7,3,R,false,ep_poll,\"0-3,8\",101,32,133,69\n"
	       "\"we\"\"i,rd\n\\u00ff\",1,1,1,,-9223372036854775808,"
	       "-9223372036854775808,D,,a\tb,5,,7,,\n");
	struct sel p = {.group_by = "pcomm", .fields = "p.*,t.delta"};
	expect(snap, CTP_FLAT_NDJSON, CTP_SCOPE_PROCESS, &p,
	       "{\"pcomm\":null,\"threads\":1,\"processes\":1,\"cgroups\":0,"
	       "\"p.rss\":0}\n"
	       "{\"pcomm\":\"app\",\"threads\":2,\"processes\":1,\"cgroups\":1,"
	       "\"p.rss\":4096}\n"
	       "{\"pcomm\":\"we\\\"i,rd\\n\\u00ff\",\"threads\":1,"
	       "\"processes\":1,\"cgroups\":1,\"p.rss\":null}\n");
	/* none: three key parts, the occurrence a number. */
	struct sel none = {.group_by = "cgroup,none", .fields = "t.cnt"};
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, &none,
	       "cgroup,pcomm,comm,occurrence,threads,processes,cgroups,t.cnt\n"
	       ",,,0,1,1,0,0\n"
	       "\"/a.slice/x,y.service\",app,app,0,1,1,1,5\n"
	       "\"/a.slice/x,y.service\",app,app,1,1,1,1,7\n"
	       "/b,\"we\"\"i,rd\n\\u00ff\",\"we\"\"i,rd\n\\u00ff\",0,1,1,1,\n");
}

static void test_sort_limit(void **state)
{
	const struct ctp_snap *snap = *state;
	/* Descending, absent last, ties in file order. */
	struct sel s = {.fields = "t.net", .sort = "t.net"};
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, &s,
	       "tid,tgid,comm,pcomm,cgroup,t.net\n"
	       "10,10,app,app,\"/a.slice/x,y.service\",70\n"
	       "11,10,app,app,\"/a.slice/x,y.service\",-1\n"
	       "20,20,\"we\"\"i,rd\n\\u00ff\",\"we\"\"i,rd\n\\u00ff\",/b,\n"
	       "30,30,,,,\n");
	struct sel g = {.group_by = "pcomm",
			.fields = "t.cnt",
			.sort = "t.cnt",
			.limit = 2};
	expect(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, &g,
	       "pcomm,threads,processes,cgroups,t.cnt\n"
	       "app,2,1,1,12\n,1,1,0,0\n");
	struct sel none = {.fields = "nothing.*", .limit = 1};
	expect(snap, CTP_FLAT_JSON, CTP_SCOPE_CGROUP, &none,
	       "[\n{\"path\":\"/a.slice/x,y.service\"}\n]\n");
	struct sel zero = {.sort = "t.cnt", .group_by = "comm", .limit = 0};
	char *out = flat_ok(snap, CTP_FLAT_JSON, CTP_SCOPE_THREAD, &zero);
	assert_non_null(strstr(out, "\"comm\":\"app\""));
	free(out);
}

static void test_errors(void **state)
{
	const struct ctp_snap *snap = *state;
	char err[512] = "";
	int rc;
	struct sel other = {.sort = "p.rss"};
	free(flat(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, &other, &rc, err,
		  sizeof(err)));
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(err,
			    "--sort p.rss: a process field, not of the threads "
			    "table");
	struct sel none = {.sort = "t.nope"};
	free(flat(snap, CTP_FLAT_CSV, CTP_SCOPE_THREAD, &none, &rc, err,
		  sizeof(err)));
	assert_int_equal(rc, -EINVAL);
	struct sel host = {.group_by = "pcomm"};
	free(flat(snap, CTP_FLAT_CSV, CTP_SCOPE_HOST, &host, &rc, err,
		  sizeof(err)));
	assert_int_equal(rc, -EINVAL);
	free(flat(snap, 9, CTP_SCOPE_HOST, NULL, &rc, err, sizeof(err)));
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(ctp_flat_format_parse("ndjson"), CTP_FLAT_NDJSON);
	assert_int_equal(ctp_flat_format_parse("table"), -EINVAL);
	assert_int_equal(ctp_flat_table_parse("cgroups"), CTP_SCOPE_CGROUP);
	assert_int_equal(ctp_flat_table_parse("thread"), -EINVAL);
}

/* ---- The command ---- */

/* Run `ctprof-core show ARGS...`; its stdout into *out. */
static int show(char **out, ...)
{
	const char *argv[24] = {"show", snap_path};
	char po[PATH_MAX + 16];
	int argc = 2;
	va_list ap;

	va_start(ap, out);
	for (const char *a; (a = va_arg(ap, const char *)) && argc < 23;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(po, sizeof(po), "%s/show.out", tmp);
	int rc = e2e_run(argv, po, NULL);
	assert_int_equal(e2e_read_file(po, out, NULL), 0);
	return rc;
}

static void test_show_command(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(show(&out, "--format", "csv", "--fields", "t.cnt",
			      "--sort", "t.cnt", "--limit", "2", NULL),
			 0);
	assert_string_equal(out, "tid,tgid,comm,pcomm,cgroup,t.cnt\n"
				 "11,10,app,app,\"/a.slice/x,y.service\",7\n"
				 "10,10,app,app,\"/a.slice/x,y.service\",5\n");
	free(out);
	/* No --limit: every row, not table's 50. */
	assert_int_equal(
		show(&out, "--format", "ndjson", "--table", "cgroups", NULL),
		0);
	assert_string_equal(out, "{\"path\":\"/a.slice/x,y.service\","
				 "\"c.usage\":100}\n"
				 "{\"path\":\"/b\",\"c.usage\":null}\n");
	free(out);
	assert_int_equal(show(&out, "--format", "json", "--table", "processes",
			      "--group-by", "pcomm", "--fields", "p.rss",
			      "--sort", "p.rss", NULL),
			 0);
	assert_non_null(strstr(out, "[\n{\"pcomm\":\"app\","));
	free(out);
	/* Usage errors: 2, nothing on stdout. */
	static const char *const bad[][4] = {
		{"--format", "xml", NULL},
		{"--table", "threads", NULL},
		{"--format", "csv", "--table", "thread"},
		{"--format", "csv", "--summary", NULL},
		{"--format", "csv", "--sort", "p.rss"},
	};
	for (size_t i = 0; i < N(bad); i++) {
		assert_int_equal(show(&out, bad[i][0], bad[i][1], bad[i][2],
				      bad[i][3], NULL),
				 2);
		assert_string_equal(out, "");
		free(out);
	}
	/* table stays the default. */
	assert_int_equal(show(&out, "--summary", NULL), 0);
	assert_non_null(strstr(out, "Counts: 4 threads"));
	free(out);
}

/* Two threads whose CPU sets hold as many CPUs, 0-1 before 2-3 in the
 * file: `show`'s table sorts them as its CSV does (ctp_value_cmp: equal
 * counts by their ranges, 2-3 first descending), not in file order. */
static void test_show_sort_cpusets(void **state)
{
	(void)state;
	struct ctp_capture *cap = sb_capture("t");
	struct sb_cell lo = C(0, 1), hi = C(2, 3);
	char path[PATH_MAX + 32], po[PATH_MAX + 32], err[512], *out;
	register_fields(cap);
	sb_process(cap, 10, "app");
	uint32_t r = sb_thread(cap, 10, "app", -1);
	sb_put(cap, &cap->threads[0], r, CTP_THREAD_IDENT, T_CPUS, &lo);
	r = sb_thread(cap, 11, "app", -1);
	sb_put(cap, &cap->threads[0], r, CTP_THREAD_IDENT, T_CPUS, &hi);
	snprintf(path, sizeof(path), "%s/cpus.ctprof", tmp);
	snprintf(po, sizeof(po), "%s/cpus.out", tmp);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
	const char *table[] = {"show",	 path,	   "--threads", "--fields",
			       "t.cpus", "--sort", "t.cpus",	NULL},
		   *csv[] = {"show",   path,	 "--format", "csv", "--fields",
			     "t.cpus", "--sort", "t.cpus",   NULL};
	assert_int_equal(e2e_run(csv, po, NULL), 0);
	assert_int_equal(e2e_read_file(po, &out, NULL), 0);
	assert_string_equal(out, "tid,tgid,comm,pcomm,cgroup,t.cpus\n"
				 "11,10,app,app,,2-3\n10,10,app,app,,0-1\n");
	free(out);
	assert_int_equal(e2e_run(table, po, NULL), 0);
	assert_int_equal(e2e_read_file(po, &out, NULL), 0);
	char *a = strstr(out, "2-3"), *b = strstr(out, "0-1");
	assert_true(a && b && a < b);
	free(out);
}

/* ---- Setup ---- */

static int setup(void **state)
{
	if (e2e_tmpdir("flat", tmp, sizeof(tmp)) < 0)
		return -1;
	snprintf(snap_path, sizeof(snap_path), "%s/flat.ctprof", tmp);
	write_snapshot(snap_path);
	*state = open_snap(snap_path);
	return 0;
}

static int teardown(void **state)
{
	ctp_snap_free(*state);
	return e2e_rm_rf(tmp);
}

/* ---- Real consumers (--tools) ---- */

/* What a shell command prints (up to len - 1 bytes, the last newline
 * dropped) into buf; its exit status. */
static int sh(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sh(char *buf, size_t len, const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(buf, 1, len - 1, p);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	while (fgetc(p) != EOF)
		;
	return pclose(p);
}

/* Field `name` summed over the thread table by the reader, as text ("" when
 * no row has it: SQL's SUM of nothing is NULL). */
static void reader_sum(const struct ctp_snap *snap, const char *name, char *buf,
		       size_t len)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, name);
	size_t rows = ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows, n = 0;
	int64_t sum = 0;
	assert_non_null(f);
	for (size_t r = 0; r < rows; r++) {
		struct ctp_value v = ctp_snap_value(snap, f, r);
		if (v.type == CTP_TYPE_U64)
			sum += (int64_t)v.u64;
		else if (v.type == CTP_TYPE_I64)
			sum += v.i64;
		n += v.type != CTP_VALUE_ABSENT;
	}
	if (n)
		snprintf(buf, len, "%" PRId64, sum);
	else
		buf[0] = '\0';
}

/* `show SNAP --format FORMAT [--group-by AXES --no-normalize]` into out. */
static void show_to(const char *snap, const char *out, const char *format,
		    const char *group_by)
{
	const char *argv[8] = {"show",
			       snap,
			       "--format",
			       format,
			       group_by ? "--group-by" : NULL,
			       group_by,
			       "--no-normalize",
			       NULL};
	assert_int_equal(e2e_run(argv, out, NULL), 0);
}

/* sqlite3 on database tmp/t.db with a script; its output into buf. */
static void sqlite(char *buf, size_t len, const char *script)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/q.sql", tmp);
	assert_int_equal(e2e_write_file(path, script, strlen(script)), 0);
	int rc =
		sh(buf, len, "sqlite3 -batch '%s/t.db' < '%s' 2>&1", tmp, path);
	if (rc != 0)
		fail_msg("sqlite3: %d: %s", rc, buf);
}

/* The SQL aggregate of a field's rule (sum, max, min). */
static const char *sql_agg(const struct ctp_snap *snap, const char *field)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, field);
	assert_non_null(f);
	switch (f->rule) {
	case CTP_RULE_SUM:
		return "SUM";
	case CTP_RULE_MAX:
		return "MAX";
	case CTP_RULE_MIN:
		return "MIN";
	}
	fail_msg("%s: no SQL aggregate for its rule", field);
	return NULL;
}

/*
 * The CSV of a snapshot in sqlite3 (.mode csv, .import): a row per thread,
 * SUM(field) equal to the reader's sum, and a GROUP BY pcomm over the thread
 * rows, with the SQL aggregate of the field's rule, equal to show's own
 * --group-by pcomm rows.
 */
static void check_sqlite(const char *file, const struct ctp_snap *snap,
			 const char *field)
{
	char script[3 * PATH_MAX + 1024], got[4096], want[128];
	snprintf(script, sizeof(script), "rm -f '%s/t.db'", tmp);
	assert_int_equal(system(script), 0);
	snprintf(script, sizeof(script), "%s/t.csv", tmp);
	show_to(file, script, "csv", NULL);
	snprintf(script, sizeof(script), "%s/g.csv", tmp);
	show_to(file, script, "csv", "pcomm");

	snprintf(script, sizeof(script),
		 ".mode csv\n.import '%s/t.csv' threads\n"
		 ".import '%s/g.csv' groups\n"
		 "SELECT COUNT(*) FROM threads;\n"
		 "SELECT SUM(CAST(NULLIF(\"%s\", '') AS INTEGER)) FROM "
		 "threads;\n"
		 "SELECT COUNT(*) FROM groups;\n"
		 "SELECT COUNT(*) FROM (SELECT pcomm, %s(CAST(NULLIF(\"%s\", "
		 "'') AS INTEGER)) AS s FROM threads GROUP BY pcomm) AS t "
		 "JOIN groups AS g ON g.pcomm = t.pcomm "
		 "WHERE t.s IS CAST(NULLIF(g.\"%s\", '') AS INTEGER);\n",
		 tmp, tmp, field, sql_agg(snap, field), field, field);
	sqlite(got, sizeof(got), script);
	reader_sum(snap, field, want, sizeof(want));
	unsigned long long rows = 0, ng = 0, same = 0;
	char sum[128] = "";
	/* Four lines: rows, the sum, groups, groups whose sum matched. */
	assert_int_equal(sscanf(got, "%llu\n%127[^\n]\n%llu\n%llu", &rows, sum,
				&ng, &same) == 4 ||
				 (!*want && sscanf(got, "%llu\n\n%llu\n%llu",
						   &rows, &ng, &same) == 3),
			 1);
	fprintf(stderr,
		"sqlite3: %s: %llu rows, SUM(%s) = %s (reader: %s), "
		"%llu groups, %llu equal\n",
		file, rows, field, sum, want, ng, same);
	assert_int_equal(rows, ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows);
	assert_string_equal(sum, want);
	assert_true(ng > 0);
	assert_int_equal(same, ng);
}

/* The JSON of a snapshot in python3's json module and jq: a row per
 * thread, the field's sum (nulls left out) equal to the reader's. */
static void check_json(const char *file, const struct ctp_snap *snap,
		       const char *field)
{
	char out[PATH_MAX + 16], got[256], want[128];
	snprintf(out, sizeof(out), "%s/t.json", tmp);
	show_to(file, out, "json", NULL);
	reader_sum(snap, field, want, sizeof(want));
	assert_int_equal(sh(got, sizeof(got),
			    "/usr/bin/python3 -c 'import json,sys; "
			    "d=json.load(open(sys.argv[1])); "
			    "v=[r[sys.argv[2]] for r in d "
			    "if r[sys.argv[2]] is not None]; "
			    "print(len(d), sum(v) if v else \"\")' '%s' '%s'",
			    out, field),
			 0);
	fprintf(stderr, "python3: %s: %s (reader: %zu %s)\n", file, got,
		ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows, want);
	char expect_py[160];
	snprintf(expect_py, sizeof(expect_py), "%zu %s",
		 ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows, want);
	assert_string_equal(got, expect_py);
	assert_int_equal(sh(got, sizeof(got),
			    "jq -r '[.[][\"%s\"] | select(. != null)] | "
			    "if length > 0 then add else \"\" end' '%s'",
			    field, out),
			 0);
	fprintf(stderr, "jq: %s: %s\n", file, got);
	assert_string_equal(got, want);
}

/* The odd comm as the consumers read it: in sqlite the CSV text with the
 * 0xff byte as the six characters \u00ff, in Python U+00FF (dump's
 * convention); the row count is not fooled by the newline in it. */
static void check_odd_comm(void)
{
	char got[512];
	sqlite(got, sizeof(got),
	       "SELECT hex(comm) FROM threads WHERE tid = '20';\n");
	/* w e " i , r d \n \ u 0 0 f f */
	assert_string_equal(got, "776522692C72640A5C7530306666");
}

static bool have(const char *prog)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static void test_tools(void **state)
{
	char fixture[PATH_MAX], cfg[PATH_MAX + 16], live[PATH_MAX + 16],
		log[PATH_MAX + 16];
	(void)state;
	check_sqlite(snap_path, *state, "t.a");
	check_odd_comm();
	check_sqlite(snap_path, *state, "t.cnt");
	check_json(snap_path, *state, "t.net");

	snprintf(fixture, sizeof(fixture), "%s/snapshots/sample-v1.ctprof",
		 CTP_TEST_FIXTURES);
	struct ctp_snap *fx = open_snap(fixture);
	check_sqlite(fixture, fx, "alpha.load");
	check_json(fixture, fx, "alpha.load");
	ctp_snap_free(fx);

	/* This host, captured by the real binary with procfs-stat. */
	snprintf(cfg, sizeof(cfg), "%s/c.yaml", tmp);
	snprintf(live, sizeof(live), "%s/live.ctprof", tmp);
	snprintf(log, sizeof(log), "%s/live.log", tmp);
	struct e2e_cfg c = {.required = true};
	assert_int_equal(e2e_write_config(cfg, &c), 0);
	struct ctp_snap *ls = e2e_capture(cfg, live, log);
	check_sqlite(live, ls, "procfs.utime");
	check_json(live, ls, "procfs.stime");
	ctp_snap_free(ls);
}

static int run_tools(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tools),
	};
	static const char *const progs[] = {"sqlite3", "jq"};
	for (size_t i = 0; i < N(progs); i++)
		if (!have(progs[i])) {
			fprintf(stderr,
				"test_flat --tools: %s is not installed "
				"(tools/dev.sh installs it): skipped\n",
				progs[i]);
			return SKIP;
		}
	return cmocka_run_group_tests(tests, setup, teardown);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_csv),
		cmocka_unit_test(test_threads_json),
		cmocka_unit_test(test_other_tables),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_sort_limit),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_show_command),
		cmocka_unit_test(test_show_sort_cpusets),
	};
	if (argc > 1 && !strcmp(argv[1], "--tools"))
		return run_tools();
	return cmocka_run_group_tests(tests, setup, teardown);
}
