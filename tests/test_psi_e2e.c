/* SPDX-License-Identifier: MIT */
/*
 * The psi plugin end to end: run the built ctprof-core with psi alone and
 * decode the snapshot with core/snapshot/reader.c.
 *
 *   (no argument)  the fixture trees tests/fixtures/psi/{proc,cgroup}: every
 *                  host and cgroup value, absent ones included, the field
 *                  descriptions, the summary counters; the same with 4
 *                  workers; a copy of the trees without any pressure file
 *                  (PSI off: all absent, no error, the hint); the host and
 *                  cgroup options.
 *   live           this host, in whichever state PSI is: on, every value
 *                  the kernel prints is there and lies between two
 *                  independent reads taken before and after the capture
 *                  (host files and this process's own cgroup); off (no
 *                  <proc>/pressure, or EOPNOTSUPP), every psi value absent,
 *                  no plugin error, and the hint.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"
#include "test_psi_run.h"

#define FIX_PROC   CTP_TEST_FIXTURES "/psi/proc"
#define FIX_CGROUP CTP_TEST_FIXTURES "/psi/cgroup"
#define FIX_SYS	   CTP_TEST_FIXTURES "/sys"
#define PSI_ONLY   "  psi:\n    required: true"

/* Collect every mismatch of a check before failing, so one run says all. */
static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* ---- The plugin's fields ------------------------------------------------- */

static const char *const res_names[] = {"cpu", "memory", "io", "irq"};
static const char *const half_names[] = {"some", "full"};
static const char *const metric_names[] = {"avg10", "avg60", "avg300", "total"};
#define N_RES 4

/* Does the plugin record (res, half) in this scope? Host scope has no cpu
 * "full" (never computed for the system) and no scope has irq "some". */
static bool recorded(bool host, int res, int half)
{
	if (res == 3 && half == 0)
		return false;
	return !(host && res == 0 && half == 1);
}

static void field_name(char *buf, size_t len, bool host, int res, int half,
		       int m)
{
	snprintf(buf, len, "psi.%s%s.%s.%s", host ? "" : "cg.", res_names[res],
		 half_names[half], metric_names[m]);
}

/* Every field exists with the right description; the unrecorded
 * combinations are not registered at all. */
static void check_fields(const struct ctp_snap *s)
{
	size_t n = 0;

	for (int h = 0; h < 2; h++)
		for (int r = 0; r < N_RES; r++)
			for (int hf = 0; hf < 2; hf++)
				for (int m = 0; m < 4; m++) {
					char name[64];
					const struct ctp_snap_field *f;
					bool total = m == 3;

					field_name(name, sizeof(name), h, r, hf,
						   m);
					f = ctp_snap_field_find(s, name);
					if (!recorded(h, r, hf)) {
						CHECK(!f, "field %s exists",
						      name);
						continue;
					}
					n++;
					CHECK(f, "field %s missing", name);
					if (!f)
						continue;
					CHECK(f->scope == (h ? CTP_SCOPE_HOST
							     : CTP_SCOPE_CGROUP) &&
						      f->type == CTP_TYPE_U64 &&
						      f->unit ==
							      (total ? CTP_UNIT_US
								     : CTP_UNIT_CENTIPCT) &&
						      f->kind ==
							      (total ? CTP_KIND_COUNTER
								     : CTP_KIND_GAUGE) &&
						      f->rule ==
							      (total ? CTP_RULE_SUM
								     : CTP_RULE_MAX) &&
						      !strcmp(f->plugin,
							      "psi") &&
						      f->help[0],
					      "field %s: scope %u type %u unit "
					      "%u kind %u rule %u",
					      name, f->scope, f->type, f->unit,
					      f->kind, f->rule);
				}
	CHECK(n == 52 && ctp_snap_n_fields(s) == n, "%zu fields, expected %zu",
	      ctp_snap_n_fields(s), n);
}

/*
 * Expected values of one row: "res.half=avg10/avg60/avg300/total ..."; a
 * (res, half) not named must be absent.
 */
static bool exp_half(const char *values, int res, int half, uint64_t v[4])
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "%s.%s=", res_names[res], half_names[half]);
	for (p = values; p && *p; p += strcspn(p, " "), p += strspn(p, " ")) {
		if (strncmp(p, key, strlen(key)) != 0)
			continue;
		p += strlen(key);
		for (int m = 0; m < 4; m++) {
			char *e;

			v[m] = strtoull(p, &e, 10);
			p = e + (m < 3);
		}
		return true;
	}
	return false;
}

static void check_row(const struct ctp_snap *s, bool host, size_t row,
		      const char *what, const char *values)
{
	for (int r = 0; r < N_RES; r++)
		for (int hf = 0; hf < 2; hf++) {
			uint64_t want[4];
			bool have = exp_half(values, r, hf, want);

			CHECK(!have || recorded(host, r, hf),
			      "%s: expectation names %s.%s", what, res_names[r],
			      half_names[hf]);
			if (!recorded(host, r, hf))
				continue;
			for (int m = 0; m < 4; m++) {
				char name[64];
				const struct ctp_snap_field *f;
				struct ctp_value v;

				field_name(name, sizeof(name), host, r, hf, m);
				f = ctp_snap_field_find(s, name);
				if (!f)
					continue; /* reported by check_fields */
				v = ctp_snap_get(s, f, row);
				if (!have)
					CHECK(v.type == CTP_VALUE_ABSENT,
					      "%s: %s should be absent, is "
					      "%" PRIu64,
					      what, name, v.u64);
				else
					CHECK(v.type == CTP_TYPE_U64 &&
						      v.u64 == want[m],
					      "%s: %s type %u value %" PRIu64
					      ", expected %" PRIu64,
					      what, name, v.type, v.u64,
					      want[m]);
			}
		}
}

/* ---- What the fixture holds --------------------------------------------- */

static const char exp_host[] = "cpu.some=105/50/25/123456789 "
			       "memory.some=1234/567/89/987654321 "
			       "memory.full=1000/450/75/876543210 "
			       "io.some=10000/9999/1/18446744073709551615 "
			       "io.full=10099/5050/29/42 "
			       "irq.full=57/28/14/5550000";

static const struct {
	const char *path;
	const char *values;
} exp_cgroups[] = {
	{"/", "cpu.some=105/50/25/123456789 cpu.full=0/0/0/0 "
	      "memory.some=1234/567/89/987654321 "
	      "memory.full=1000/450/75/876543210 "
	      "io.some=0/19/38/29162536 io.full=0/17/31/21343507"},
	{"/system.slice/db.service",
	 "cpu.some=310/220/130/4000001 cpu.full=110/90/70/2500002 "
	 "memory.some=4567/3001/999/71000003 "
	 "memory.full=4000/2550/808/65000004 "
	 "io.some=777/666/555/9000005 io.full=444/333/222/8000006 "
	 "irq.full=2/1/0/1234"},
	{"/app.slice/web.scope",
	 "cpu.some=2000/1500/1000/300000007 cpu.full=500/400/300/100000008 "
	 "memory.some=0/0/0/0 memory.full=0/0/0/0 "
	 "io.some=10/5/1/11 io.full=0/0/0/9"},
	{"/app.slice/web.scope/pool",
	 "cpu.some=9950/9825/9700/280000009 cpu.full=6000/5500/5000/90000010 "
	 "memory.some=0/0/0/12 memory.full=0/0/0/13 "
	 "io.some=0/0/0/14 io.full=0/0/0/15"},
	{"/batch.slice/job.scope", ""},
	{"/broken.scope", "cpu.full=20/10/5/2000 memory.some=30/20/10/3000 "
			  "io.full=0/0/0/77"},
	{"/gone.scope", ""},
};
#define N_CGROUPS (sizeof(exp_cgroups) / sizeof(exp_cgroups[0]))

/* Thread -> its cgroup path. */
static const struct {
	uint32_t tid;
	const char *cgroup;
} exp_threads[] = {
	{1, "/"},
	{100, "/system.slice/db.service"},
	{101, "/system.slice/db.service"},
	{200, "/app.slice/web.scope"},
	{201, "/app.slice/web.scope/pool"},
	{300, "/batch.slice/job.scope"},
	{400, "/broken.scope"},
	{500, "/gone.scope"},
};
#define N_THREADS (sizeof(exp_threads) / sizeof(exp_threads[0]))

static const struct {
	const char *name;
	uint64_t value;
} exp_summary[] = {
	/* irq.pressure of /, web.scope, pool; all four of job.scope */
	{"missing", 7},
	{"unsupported", 0},
	{"read_errors", 0},
	/* broken.scope: one per file */
	{"parse_errors", 4},
	/* gone.scope */
	{"cgroups_unreachable", 1},
};

static void check_threads(const struct ctp_snap *s)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);

	assert_non_null(tt);
	CHECK(tt->rows == N_THREADS, "%zu thread rows", tt->rows);
	for (size_t r = 0; r < tt->rows && r < N_THREADS; r++) {
		int64_t cg = tt->cgroup[r];

		CHECK(tt->tid[r] == exp_threads[r].tid && cg >= 0 &&
			      (size_t)cg < ct->rows &&
			      e2e_bytes_eq(ct->path[cg], exp_threads[r].cgroup),
		      "thread row %zu: tid %" PRIu64 ", cgroup row %" PRId64
		      ", expected %u in %s",
		      r, tt->tid[r], cg, exp_threads[r].tid,
		      exp_threads[r].cgroup);
	}
}

static void check_fixture(const struct ctp_snap *s)
{
	const struct ctp_snap_plugin *p = e2e_plugin(s, "psi");
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);

	nbad = 0;
	check_fields(s);
	CHECK(p->status == 1 && p->errors == 0 && p->vanished == 0 && !p->hint,
	      "plugin status %u errors %" PRIu64 " vanished %" PRIu64
	      " hint %s",
	      p->status, p->errors, p->vanished, p->hint ? p->hint : "-");
	/* host, 7 cgroups, finish */
	CHECK(p->calls == 1 + N_CGROUPS + 1, "%" PRIu64 " calls", p->calls);
	CHECK(p->n_summary == 5, "%zu summary counters", p->n_summary);
	for (size_t i = 0; i < sizeof(exp_summary) / sizeof(exp_summary[0]);
	     i++) {
		uint64_t v = run_summary(p, exp_summary[i].name);

		CHECK(v == exp_summary[i].value,
		      "summary %s = %" PRIu64 ", expected %" PRIu64,
		      exp_summary[i].name, v, exp_summary[i].value);
	}
	check_row(s, true, 0, "host", exp_host);
	assert_non_null(ct);
	CHECK(ct->rows == N_CGROUPS, "%zu cgroup rows", ct->rows);
	for (size_t i = 0; i < N_CGROUPS; i++) {
		long row = run_cgroup_row(s, exp_cgroups[i].path);

		CHECK(row >= 0, "no cgroup row %s", exp_cgroups[i].path);
		if (row >= 0)
			check_row(s, false, (size_t)row, exp_cgroups[i].path,
				  exp_cgroups[i].values);
	}
	check_threads(s);
	assert_int_equal(nbad, 0);
}

static void fixture_capture(void **state)
{
	struct run_cfg c = {.proc = FIX_PROC,
			    .sys = FIX_SYS,
			    .cgroup = FIX_CGROUP,
			    .plugins = PSI_ONLY};

	(void)state;
	check_fixture(run_capture(&c));
}

/* Concurrent workers: the same values (cgroup rows may come in another
 * order; they are looked up by path). */
static void fixture_workers(void **state)
{
	struct run_cfg c = {.proc = FIX_PROC,
			    .sys = FIX_SYS,
			    .cgroup = FIX_CGROUP,
			    .workers = 4,
			    .plugins = PSI_ONLY};

	(void)state;
	check_fixture(run_capture(&c));
}

/* Remove every pressure file of a copied tree. */
static int strip_pressure(const char *dir)
{
	static const char *const sub[] = {
		"",
		"/system.slice/db.service",
		"/app.slice/web.scope",
		"/app.slice/web.scope/pool",
		"/batch.slice/job.scope",
		"/broken.scope",
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		for (int r = 0; r < N_RES; r++) {
			if (E2E_PATHF(path, "%s%s/%s.pressure", dir, sub[i],
				      res_names[r]) < 0)
				return -ENAMETOOLONG;
			if (unlink(path) < 0 && errno != ENOENT)
				return -errno;
		}
	return 0;
}

/*
 * PSI off: the kernel creates no <proc>/pressure and no cgroup pressure
 * files (psi_proc_init(), cgroup_psi_enabled()). Everything absent, no
 * error, and the hint says how to turn it on.
 */
static void fixture_psi_off(void **state)
{
	char proc[PATH_MAX], cg[PATH_MAX], pressure[PATH_MAX];
	struct run_cfg c = {.sys = FIX_SYS, .plugins = PSI_ONLY};
	const struct ctp_snap_plugin *p;
	const struct ctp_snap_table *ct;
	struct ctp_snap *s;

	(void)state;
	assert_int_equal(E2E_PATHF(proc, "%s/off-proc", run_dir()), 0);
	assert_int_equal(E2E_PATHF(cg, "%s/off-cgroup", run_dir()), 0);
	assert_int_equal(E2E_PATHF(pressure, "%s/pressure", proc), 0);
	assert_int_equal(e2e_copy_tree(FIX_PROC, proc), 0);
	assert_int_equal(e2e_copy_tree(FIX_CGROUP, cg), 0);
	assert_int_equal(e2e_rm_rf(pressure), 0);
	assert_int_equal(strip_pressure(cg), 0);
	c.proc = proc;
	c.cgroup = cg;
	s = run_capture(&c);

	nbad = 0;
	check_fields(s);
	p = e2e_plugin(s, "psi");
	CHECK(p->status == 1 && p->errors == 0, "status %u errors %" PRIu64,
	      p->status, p->errors);
	CHECK(p->hint && strstr(p->hint, "psi=1") &&
		      strstr(p->hint, "CONFIG_PSI"),
	      "hint: %s", p->hint ? p->hint : "(none)");
	/* 4 host files, 4 in each of the 6 reachable cgroups */
	CHECK(run_summary(p, "missing") == 4 + 6 * 4, "missing %" PRIu64,
	      run_summary(p, "missing"));
	CHECK(run_summary(p, "parse_errors") == 0 &&
		      run_summary(p, "read_errors") == 0 &&
		      run_summary(p, "cgroups_unreachable") == 1,
	      "summary counters");
	check_row(s, true, 0, "host", "");
	ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	assert_non_null(ct);
	CHECK(ct->rows == N_CGROUPS, "%zu cgroup rows", ct->rows);
	for (size_t r = 0; r < ct->rows; r++)
		check_row(s, false, r, "cgroup", "");
	assert_int_equal(nbad, 0);
}

/* host: false leaves the host row empty, cgroup: false the cgroups. */
static void fixture_options(void **state)
{
	struct run_cfg c = {.proc = FIX_PROC,
			    .sys = FIX_SYS,
			    .cgroup = FIX_CGROUP,
			    .plugins = PSI_ONLY "\n    options: {host: false}"};
	struct ctp_snap *s;
	const struct ctp_snap_plugin *p;

	(void)state;
	s = run_capture(&c);
	nbad = 0;
	check_row(s, true, 0, "host", "");
	for (size_t i = 0; i < N_CGROUPS; i++) {
		long row = run_cgroup_row(s, exp_cgroups[i].path);

		CHECK(row >= 0, "no cgroup row %s", exp_cgroups[i].path);
		if (row >= 0)
			check_row(s, false, (size_t)row, exp_cgroups[i].path,
				  exp_cgroups[i].values);
	}
	p = e2e_plugin(s, "psi");
	CHECK(!p->hint, "hint without a host pass: %s", p->hint);
	CHECK(run_summary(p, "missing") == 7, "missing %" PRIu64,
	      run_summary(p, "missing"));

	c.plugins = PSI_ONLY "\n    options: {cgroup: false}";
	s = run_capture(&c);
	check_row(s, true, 0, "host", exp_host);
	for (size_t r = 0; r < N_CGROUPS; r++)
		check_row(s, false, r, "cgroup", "");
	p = e2e_plugin(s, "psi");
	CHECK(run_summary(p, "missing") == 0 &&
		      run_summary(p, "parse_errors") == 0 &&
		      run_summary(p, "cgroups_unreachable") == 0,
	      "cgroup: false still read cgroups");
	assert_int_equal(nbad, 0);
}

/* An unknown option or a non-boolean fails the (required) plugin: the
 * core refuses both before init (psi declares its options), naming the
 * option and its position. */
static void fixture_bad_options(void **state)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	static const char *const bad[] = {"{hots: false}", "{host: maybe}"};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		FILE *f;
		char *text = NULL;

		assert_int_equal(
			E2E_PATHF(cfg, "%s/bad-%zu.yaml", run_dir(), i), 0);
		assert_int_equal(E2E_PATHF(out, "%s/bad-%zu.zst", run_dir(), i),
				 0);
		assert_int_equal(E2E_PATHF(log, "%s/bad-%zu.log", run_dir(), i),
				 0);
		f = fopen(cfg, "we");
		assert_non_null(f);
		fprintf(f,
			"plugin_dirs: [\"%s\"]\nroots: {proc: \"%s\"}\n"
			"plugins:\n  psi: {required: true, options: %s}\n",
			CTP_TEST_PLUGIN_DIR, FIX_PROC, bad[i]);
		assert_int_equal(fclose(f), 0);
		const char *args[] = {"--config", cfg, "-o", out, NULL};
		assert_int_equal(e2e_run(args, NULL, log), 3);
		assert_int_equal(e2e_read_file(log, &text, NULL), 0);
		if (!strstr(text, i ? "option 'host': 'maybe' is not a boolean"
				    : "unknown option 'hots'; did you mean "
				      "'host'?") ||
		    !strstr(text, ".yaml:4:"))
			fail_msg("stderr: %s", text);
		free(text);
		assert_int_equal(access(out, F_OK), -1);
	}
}

/* ---- Live ---------------------------------------------------------------- */

/* One pressure file by an independent, naive reader (sscanf). */
struct indep {
	int err; /* 0, or the negative errno of the read */
	bool have[2];
	uint64_t v[2][4]; /* [half][avg10, avg60, avg300 (centi), total] */
};

static void indep_read(const char *path, struct indep *out)
{
	char *text = NULL;
	const char *line;

	memset(out, 0, sizeof(*out));
	out->err = e2e_read_file(path, &text, NULL);
	if (out->err < 0)
		return;
	for (line = text; line && *line;) {
		unsigned long long a[3], b[3], total;
		char half[8];

		if (sscanf(line,
			   "%7s avg10=%llu.%2llu avg60=%llu.%2llu "
			   "avg300=%llu.%2llu total=%llu",
			   half, &a[0], &b[0], &a[1], &b[1], &a[2], &b[2],
			   &total) == 8) {
			int h = !strcmp(half, "full");

			out->have[h] = true;
			for (int m = 0; m < 3; m++)
				out->v[h][m] = a[m] * 100 + b[m];
			out->v[h][3] = total;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	free(text);
}

static bool off_err(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP;
}

/*
 * A recorded row against reads of the same files before and after the
 * capture: a total between the two, an average between the two (PSI
 * updates averages every 2 s; the capture takes a few ms).
 */
static void check_live_row(const struct ctp_snap *s, bool host, size_t row,
			   const char *what, const struct indep before[N_RES],
			   const struct indep after[N_RES], bool kernel_root)
{
	for (int r = 0; r < N_RES; r++)
		for (int hf = 0; hf < 2; hf++) {
			/* The root cgroup shows the system group: its cpu
			 * "full" is not recorded either. */
			bool skip = kernel_root && r == 0 && hf == 1;

			if (!recorded(host, r, hf))
				continue;
			for (int m = 0; m < 4; m++) {
				char name[64];
				const struct ctp_snap_field *f;
				struct ctp_value v;
				uint64_t lo, hi;
				bool there =
					before[r].have[hf] && after[r].have[hf];

				field_name(name, sizeof(name), host, r, hf, m);
				f = ctp_snap_field_find(s, name);
				CHECK(f, "no field %s", name);
				if (!f)
					continue;
				v = ctp_snap_get(s, f, row);
				if (skip || before[r].err < 0 ||
				    !before[r].have[hf]) {
					CHECK(v.type == CTP_VALUE_ABSENT,
					      "%s: %s is %" PRIu64
					      ", expected absent (%s)",
					      what, name, v.u64,
					      skip ? "root cgroup"
						   : "not in the file");
					continue;
				}
				if (!there)
					continue; /* changed under us */
				lo = before[r].v[hf][m];
				hi = after[r].v[hf][m];
				if (lo > hi) {
					uint64_t t = lo;

					lo = hi;
					hi = t;
				}
				CHECK(v.type == CTP_TYPE_U64 && v.u64 >= lo &&
					      v.u64 <= hi,
				      "%s: %s = %" PRIu64 " (type %u), "
				      "independent reads %" PRIu64
				      " .. %" PRIu64,
				      what, name, v.u64, v.type, lo, hi);
			}
		}
}

static void read_all(const char *const paths[N_RES], struct indep out[N_RES])
{
	for (int r = 0; r < N_RES; r++)
		indep_read(paths[r], &out[r]);
}

/* This process's v2 cgroup path, or "" when none. */
static void own_cgroup(char *buf, size_t len)
{
	char *text = NULL;

	buf[0] = '\0';
	if (e2e_read_file("/proc/self/cgroup", &text, NULL) < 0)
		return;
	if (!e2e_cgroup_v2(text, buf, len))
		buf[0] = '\0';
	free(text);
}

/* The cgroup2 mount point from /proc/self/mountinfo, "" when none. */
static void cgroup2_mount(char *buf, size_t len)
{
	char *text = NULL, *line, *save = NULL;

	buf[0] = '\0';
	if (e2e_read_file("/proc/self/mountinfo", &text, NULL) < 0)
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char mnt[PATH_MAX];

		if (strstr(line, " - cgroup2 ") &&
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	}
	free(text);
}

static void live(void **state)
{
	char host_path[N_RES][64], cg_path[N_RES][PATH_MAX];
	char cg[PATH_MAX], mnt[PATH_MAX], dir[PATH_MAX];
	const char *hp[N_RES], *cp[N_RES];
	struct indep hb[N_RES], ha[N_RES], cb[N_RES], ca[N_RES];
	struct run_cfg c = {.plugins = PSI_ONLY};
	const struct ctp_snap_header *hdr;
	const struct ctp_snap_plugin *p;
	struct ctp_snap *s;
	struct statfs sfs;
	struct stat sb;
	bool off, root = false;
	long row = -1;

	(void)state;
	own_cgroup(cg, sizeof(cg));
	cgroup2_mount(mnt, sizeof(mnt));
	assert_int_equal(E2E_PATHF(dir, "%s%s", mnt, strcmp(cg, "/") ? cg : ""),
			 0);
	for (int r = 0; r < N_RES; r++) {
		snprintf(host_path[r], sizeof(host_path[r]),
			 "/proc/pressure/%s", res_names[r]);
		hp[r] = host_path[r];
		assert_int_equal(E2E_PATHF(cg_path[r], "%s/%s.pressure", dir,
					   res_names[r]),
				 0);
		cp[r] = cg_path[r];
	}
	/* The kernel's root cgroup: cgroupfs, inode 1. */
	root = mnt[0] && statfs(dir, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == 0x63677270 && stat(dir, &sb) == 0 &&
	       sb.st_ino == 1;

	read_all(hp, hb);
	read_all(cp, cb);
	s = run_capture(&c);
	read_all(hp, ha);
	read_all(cp, ca);
	off = off_err(hb[0].err) && off_err(hb[1].err) && off_err(hb[2].err);

	nbad = 0;
	hdr = ctp_snap_header(s);
	p = e2e_plugin(s, "psi");
	print_message("[ NOTE     ] PSI is %s on this host; own cgroup '%s'%s "
		      "under '%s'\n",
		      off ? "off" : "on", cg,
		      root ? " (the kernel's root)" : "", mnt);
	CHECK(p->status == 1 && p->errors == 0, "status %u errors %" PRIu64,
	      p->status, p->errors);
	CHECK(run_summary(p, "parse_errors") == 0 &&
		      run_summary(p, "read_errors") == 0,
	      "parse errors %" PRIu64 " read errors %" PRIu64,
	      run_summary(p, "parse_errors"), run_summary(p, "read_errors"));
	if (off) {
		CHECK(p->hint && strstr(p->hint, "psi=1"), "hint: %s",
		      p->hint ? p->hint : "(none)");
	} else {
		CHECK(!p->hint, "hint with PSI on: %s", p->hint);
		/* Something to compare: cpu "some" at least. */
		CHECK(hb[0].have[0], "/proc/pressure/cpu has no some line");
	}
	check_live_row(s, true, 0, "host", hb, ha, false);

	if (!cg[0] || !mnt[0]) {
		print_message("[ NOTE     ] no cgroup v2 for this process: "
			      "cgroup values not checked\n");
	} else {
		CHECK(hdr->cgroup_root && !strcmp(hdr->cgroup_root, mnt),
		      "capture used cgroup root %s, mountinfo says %s",
		      hdr->cgroup_root ? hdr->cgroup_root : "(none)", mnt);
		row = run_cgroup_row(s, cg);
		CHECK(row >= 0, "no cgroup row for %s", cg);
		if (row >= 0)
			check_live_row(s, false, (size_t)row, cg, cb, ca, root);
	}
	assert_int_equal(nbad, 0);
}

/* ---- main --------------------------------------------------------------- */

static int group_setup(void **state)
{
	(void)state;
	return run_setup("e2e-psi");
}

static int group_teardown(void **state)
{
	(void)state;
	return run_teardown();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fixture";

	if (!strcmp(mode, "fixture")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test_teardown(fixture_capture,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_workers,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_psi_off,
						  run_free_snaps),
			cmocka_unit_test_teardown(fixture_options,
						  run_free_snaps),
			cmocka_unit_test(fixture_bad_options),
		};
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	if (!strcmp(mode, "live")) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test_teardown(live, run_free_snaps),
		};
		return cmocka_run_group_tests(tests, group_setup,
					      group_teardown);
	}
	fprintf(stderr, "usage: %s [live]\n", argv[0]);
	return 2;
}
