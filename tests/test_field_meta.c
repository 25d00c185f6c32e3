/* SPDX-License-Identifier: MIT */
/*
 * Field sections and labelled dimensions (CTP_FIELD_META) and the other
 * flags (roles, steps): checked when a field registers
 * (core/capture/model.c), written to the snapshot and read back
 * (docs/FORMAT.md, fields[].section, .dims, .role, .step) without any
 * plugin.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "reader.h"
#include "snapbuild.h"

static struct ctp_field_desc meta(const char *section, const char *dims)
{
	struct ctp_field_desc d = {.name = "x.y",
				   .scope = CTP_SCOPE_HOST,
				   .type = CTP_TYPE_U64,
				   .unit = CTP_UNIT_COUNT,
				   .kind = CTP_KIND_GAUGE,
				   .rule = CTP_RULE_MAX,
				   .flags = CTP_FIELD_META,
				   .section = section,
				   .dims = dims};
	return d;
}

static void test_syntax(void **unused)
{
	(void)unused;
	static const char *const good[][2] = {
		{"psi", "resource=cpu,window=avg10"},
		{NULL, "hierarchy=cpu-cpuacct"},
		{"cgroup.v1", NULL},
		{NULL, NULL},
	};
	static const char *const bad[][2] = {
		{"", NULL},	{"a,b", NULL},	 {"Psi", NULL},
		{NULL, "a"},	{NULL, "a="},	 {NULL, "=b"},
		{NULL, "a=b,"}, {NULL, "a=b=c"}, {NULL, "a=b,,c=d"},
		{NULL, "a=B"},	{NULL, ""},	 {"a b", NULL},
	};
	const char *why;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct ctp_field_desc d = meta(good[i][0], good[i][1]);
		if (ctp_field_desc_check(&d, &why) != 0)
			fail_msg("good %zu refused: %s", i, why);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctp_field_desc d = meta(bad[i][0], bad[i][1]);
		if (ctp_field_desc_check(&d, &why) == 0)
			fail_msg("bad %zu (%s, %s) accepted", i,
				 bad[i][0] ? bad[i][0] : "-",
				 bad[i][1] ? bad[i][1] : "-");
	}
	/* Without the flag the members are not read at all. */
	struct ctp_field_desc d = meta("Not Checked", "=");
	d.flags = 0;
	assert_int_equal(ctp_field_desc_check(&d, &why), 0);
}

static void test_round_trip(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], path[PATH_MAX + 16], err[512];
	assert_int_equal(e2e_tmpdir("meta", dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/m.ctprof.zst", dir);
	struct ctp_capture *cap = sb_capture("p");
	struct ctp_field_desc a = meta("psi", "resource=cpu,window=avg10");
	struct ctp_field_desc b = meta(NULL, NULL);
	b.name = "x.plain";
	b.flags = 0;
	assert_true(ctp_registry_add(&cap->reg, 0, &a) >= 0);
	assert_true(ctp_registry_add(&cap->reg, 0, &b) >= 0);
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_capture_free(cap);
	struct ctp_snap *s = NULL;
	if (ctp_snap_open(path, 1ull << 30, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	const struct ctp_snap_field *f = ctp_snap_field_find(s, "x.y");
	assert_non_null(f);
	assert_string_equal(f->section, "psi");
	assert_string_equal(f->dims, "resource=cpu,window=avg10");
	f = ctp_snap_field_find(s, "x.plain");
	assert_string_equal(f->section, "");
	assert_string_equal(f->dims, "");
	ctp_snap_free(s);
	e2e_rm_rf(dir);
}

/* Two snapshots for compare: host fields "x.p" (section psi) and
 * "psi.named" (no section: a name is not a section), cgroup fields "x.pc"
 * (section psi) and "x.c". */
static void write_pair(const char *dir, char paths[2][PATH_MAX + 16])
{
	for (int k = 0; k < 2; k++) {
		char err[512];
		struct ctp_capture *cap = sb_capture("p");
		struct ctp_field_desc d[4] = {
			meta("psi", "window=avg10"), meta(NULL, NULL),
			meta("psi", "resource=cpu"), meta(NULL, NULL)};
		d[0].name = "x.p";
		d[1].name = "psi.named";
		d[1].flags = 0;
		d[2].name = "x.pc";
		d[2].scope = CTP_SCOPE_CGROUP;
		d[3].name = "x.c";
		d[3].scope = CTP_SCOPE_CGROUP;
		d[3].flags = 0;
		int id[4];
		for (int i = 0; i < 4; i++) {
			id[i] = ctp_registry_add(&cap->reg, 0, &d[i]);
			assert_true(id[i] >= 0);
		}
		for (int i = 0; i < 2; i++)
			sb_put_u64(cap, &cap->host, 0, CTP_HOST_IDENT, id[i],
				   10 + (uint64_t)k);
		uint32_t cg = sb_cgroup(cap, "/a");
		for (int i = 2; i < 4; i++)
			sb_put_u64(cap, &cap->cgroups, cg, CTP_CGROUP_IDENT,
				   id[i], 20 + (uint64_t)k);
		sb_process(cap, 1, "init");
		sb_thread(cap, 1, "init", (int)cg);
		snprintf(paths[k], sizeof(paths[k]), "%s/%d.ctprof.zst", dir,
			 k);
		if (sb_write(cap, paths[k], err, sizeof(err)) < 0)
			fail_msg("%s", err);
		ctp_capture_free(cap);
	}
}

/* compare puts a field in its PSI sections by section, never by name. */
static void test_compare_sections(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], paths[2][PATH_MAX + 16], out[PATH_MAX + 16],
		cmd[4 * PATH_MAX];
	assert_int_equal(e2e_tmpdir("meta-cmp", dir, sizeof(dir)), 0);
	write_pair(dir, paths);
	snprintf(out, sizeof(out), "%s/out.json", dir);
	const char *args[] = {"compare", paths[0],     paths[1], "--format",
			      "json",	 "--group-by", "cgroup", NULL};
	assert_int_equal(e2e_run(args, out, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys\n"
		 "d=json.load(open(sys.argv[1]))\n"
		 "host=[l[\"key\"] for l in d[\"host\"]]\n"
		 "assert host==[\"psi.named\"], host\n"
		 "assert list(d[\"psi_host\"])==[\"x.p\"], d[\"psi_host\"]\n"
		 "cg=d[\"cgroups\"][\"groups\"][0][\"fields\"]\n"
		 "assert list(cg)==[\"x.c\"], cg\n"
		 "pc=d[\"psi_cgroups\"][\"groups\"][0][\"fields\"]\n"
		 "assert list(pc)==[\"x.pc\"], pc' %s",
		 out);
	assert_int_equal(system(cmd), 0);
	e2e_rm_rf(dir);
}

static struct ctp_field_desc start_desc(const char *name, uint8_t scope)
{
	struct ctp_field_desc d = {.name = name,
				   .scope = scope,
				   .type = CTP_TYPE_U64,
				   .unit = CTP_UNIT_TICKS,
				   .kind = CTP_KIND_ORDINAL,
				   .rule = CTP_RULE_RANGE,
				   .flags = CTP_FIELD_START_TIME};
	return d;
}

/* Write cap to dir/name and open it: 0 and *s, or the reader's error. */
static int write_open(struct ctp_capture *cap, const char *dir,
		      const char *name, struct ctp_snap **s, char *err,
		      size_t errlen)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (sb_write(cap, path, err, errlen) < 0)
		fail_msg("%s", err);
	ctp_capture_free(cap);
	return ctp_snap_open(path, 1ull << 30, s, err, errlen);
}

/* CTP_FIELD_START_TIME: which fields may carry it, one per scope, the
 * snapshot's role key and header clock, and a reader refusing a role on a
 * field that cannot be a start time. */
static void test_start_time(void **unused)
{
	(void)unused;
	const char *why;
	struct ctp_field_desc d = start_desc("x.start", CTP_SCOPE_THREAD);
	assert_int_equal(ctp_field_desc_check(&d, &why), 0);
	d.unit = CTP_UNIT_NS;
	assert_int_equal(ctp_field_desc_check(&d, &why), 0);
	struct ctp_field_desc bad[4] = {d, d, d, d};
	bad[0].scope = CTP_SCOPE_HOST;
	bad[1].kind = CTP_KIND_GAUGE;
	bad[1].rule = CTP_RULE_MAX;
	bad[2].unit = CTP_UNIT_BYTES;
	bad[3].type = CTP_TYPE_I64;
	for (size_t i = 0; i < 4; i++)
		if (ctp_field_desc_check(&bad[i], &why) == 0)
			fail_msg("bad start time %zu accepted", i);

	char dir[PATH_MAX], err[512];
	assert_int_equal(e2e_tmpdir("start", dir, sizeof(dir)), 0);
	struct ctp_capture *cap = sb_capture("p");
	cap->start_boottime_ns = 123456789;
	struct ctp_field_desc t = start_desc("x.tstart", CTP_SCOPE_THREAD);
	struct ctp_field_desc t2 = start_desc("x.tstart2", CTP_SCOPE_THREAD);
	struct ctp_field_desc p = start_desc("x.pstart", CTP_SCOPE_PROCESS);
	assert_true(ctp_registry_add(&cap->reg, 0, &t) >= 0);
	assert_int_equal(ctp_registry_add(&cap->reg, 0, &t2), -EEXIST);
	assert_true(ctp_registry_add(&cap->reg, 0, &p) >= 0);
	struct ctp_snap *s = NULL;
	if (write_open(cap, dir, "ok.zst", &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(ctp_snap_header(s)->start_boottime_ns, 123456789);
	assert_string_equal(ctp_snap_start_field(s, CTP_SCOPE_THREAD)->name,
			    "x.tstart");
	assert_string_equal(ctp_snap_start_field(s, CTP_SCOPE_PROCESS)->name,
			    "x.pstart");
	assert_string_equal(ctp_snap_field_find(s, "x.pstart")->role,
			    "start_time");
	ctp_snap_free(s);

	/* A writer that put the role on a gauge: the file is refused. */
	cap = sb_capture("p");
	struct ctp_field_desc g = meta(NULL, NULL);
	g.flags = 0;
	g.scope = CTP_SCOPE_THREAD;
	int id = ctp_registry_add(&cap->reg, 0, &g);
	assert_true(id >= 0);
	ctp_registry_get(&cap->reg, (uint32_t)id)->flags = CTP_FIELD_START_TIME;
	assert_int_equal(write_open(cap, dir, "bad.zst", &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "role start_time needs"));
	e2e_rm_rf(dir);
}

/* A description of `name` with flags fl, otherwise as start_desc's but
 * of kind k (its rule: sum for a counter, max otherwise). */
static struct ctp_field_desc flag_desc(const char *name, uint8_t scope,
				       uint8_t kind, uint8_t fl)
{
	struct ctp_field_desc d = start_desc(name, scope);
	d.kind = kind;
	d.rule = kind == CTP_KIND_COUNTER ? CTP_RULE_SUM : CTP_RULE_MAX;
	d.flags = fl;
	return d;
}

/* CTP_FIELD_ELAPSED, CTP_FIELD_REAPED and CTP_FIELD_KIB_STEP (issue 28):
 * which fields may carry them, one role per field, one elapsed time per
 * scope, the snapshot's role and step keys, and a reader refusing a role
 * on a field that cannot have it. */
static void test_flags(void **unused)
{
	(void)unused;
	const char *why;
	struct ctp_field_desc good[] = {
		flag_desc("x.age", CTP_SCOPE_EXITED, CTP_KIND_PEAK,
			  CTP_FIELD_ELAPSED),
		flag_desc("x.kids", CTP_SCOPE_PROCESS, CTP_KIND_COUNTER,
			  CTP_FIELD_REAPED),
		flag_desc("x.io", CTP_SCOPE_EXITED, CTP_KIND_COUNTER,
			  CTP_FIELD_KIB_STEP),
		flag_desc("x.kio", CTP_SCOPE_THREAD, CTP_KIND_COUNTER,
			  CTP_FIELD_REAPED | CTP_FIELD_KIB_STEP),
		flag_desc("x.dad", CTP_SCOPE_EXITED, CTP_KIND_CATEGORICAL,
			  CTP_FIELD_PARENT),
		flag_desc("x.cg", CTP_SCOPE_EXITED, CTP_KIND_CATEGORICAL,
			  CTP_FIELD_CGROUP),
	};
	struct ctp_field_desc bad[] = {
		/* elapsed: exited scope, u64, a time */
		flag_desc("x.b0", CTP_SCOPE_THREAD, CTP_KIND_PEAK,
			  CTP_FIELD_ELAPSED),
		flag_desc("x.b1", CTP_SCOPE_EXITED, CTP_KIND_PEAK,
			  CTP_FIELD_ELAPSED),
		/* reaped: a thread or process counter */
		flag_desc("x.b2", CTP_SCOPE_PROCESS, CTP_KIND_PEAK,
			  CTP_FIELD_REAPED),
		flag_desc("x.b3", CTP_SCOPE_EXITED, CTP_KIND_COUNTER,
			  CTP_FIELD_REAPED),
		/* two roles */
		flag_desc("x.b4", CTP_SCOPE_PROCESS, CTP_KIND_ORDINAL,
			  CTP_FIELD_START_TIME | CTP_FIELD_REAPED),
		/* a step of a string */
		flag_desc("x.b5", CTP_SCOPE_THREAD, CTP_KIND_CATEGORICAL,
			  CTP_FIELD_KIB_STEP),
		/* parent: exited scope, u64 */
		flag_desc("x.b7", CTP_SCOPE_THREAD, CTP_KIND_CATEGORICAL,
			  CTP_FIELD_PARENT),
		/* cgroup: exited scope, string */
		flag_desc("x.b8", CTP_SCOPE_EXITED, CTP_KIND_CATEGORICAL,
			  CTP_FIELD_CGROUP),
		/* a flag no one defined */
		flag_desc("x.b6", CTP_SCOPE_THREAD, CTP_KIND_COUNTER, 1u << 7),
	};
	good[4].rule = CTP_RULE_MODE;
	good[5].rule = CTP_RULE_MODE;
	good[5].type = CTP_TYPE_STRING;
	good[5].unit = CTP_UNIT_NONE;
	bad[7].rule = CTP_RULE_MODE;
	bad[8].rule = CTP_RULE_MODE;
	bad[1].unit = CTP_UNIT_BYTES;
	bad[4].rule = CTP_RULE_RANGE;
	bad[5].type = CTP_TYPE_STRING;
	bad[5].unit = CTP_UNIT_NONE;
	bad[5].rule = CTP_RULE_MODE;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (ctp_field_desc_check(&good[i], &why) != 0)
			fail_msg("good %zu refused: %s", i, why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ctp_field_desc_check(&bad[i], &why) == 0)
			fail_msg("bad %zu accepted", i);

	char dir[PATH_MAX], err[512];
	assert_int_equal(e2e_tmpdir("flags", dir, sizeof(dir)), 0);
	struct ctp_capture *cap = sb_capture("p");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(ctp_registry_add(&cap->reg, 0, &good[i]) >= 0);
	struct ctp_field_desc age2 = good[0];
	age2.name = "x.age2";
	assert_int_equal(ctp_registry_add(&cap->reg, 0, &age2), -EEXIST);
	struct ctp_field_desc dad2 = good[4];
	dad2.name = "x.dad2";
	assert_int_equal(ctp_registry_add(&cap->reg, 0, &dad2), -EEXIST);
	struct ctp_snap *s = NULL;
	if (write_open(cap, dir, "ok.zst", &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_string_equal(ctp_snap_field_find(s, "x.age")->role, "elapsed");
	assert_ptr_equal(ctp_snap_role_field(s, CTP_SCOPE_EXITED, "elapsed"),
			 ctp_snap_field_find(s, "x.age"));
	assert_string_equal(ctp_snap_field_find(s, "x.kids")->role, "reaped");
	assert_ptr_equal(ctp_snap_role_field(s, CTP_SCOPE_EXITED, "parent"),
			 ctp_snap_field_find(s, "x.dad"));
	assert_ptr_equal(ctp_snap_role_field(s, CTP_SCOPE_EXITED, "cgroup"),
			 ctp_snap_field_find(s, "x.cg"));
	assert_string_equal(ctp_snap_field_find(s, "x.io")->role, "");
	assert_int_equal(ctp_snap_field_find(s, "x.io")->step, 1024);
	assert_int_equal(ctp_snap_field_find(s, "x.kio")->step, 1024);
	assert_int_equal(ctp_snap_field_find(s, "x.kids")->step, 0);
	ctp_snap_free(s);

	/* A writer that put a role on a field that cannot have it: each
	 * file is refused. */
	static const struct {
		uint8_t scope, kind, flag;
		const char *want;
	} wrong[] = {
		{CTP_SCOPE_THREAD, CTP_KIND_PEAK, CTP_FIELD_ELAPSED,
		 "role elapsed needs an exited u64 field"},
		{CTP_SCOPE_EXITED, CTP_KIND_COUNTER, CTP_FIELD_REAPED,
		 "role reaped needs a thread or process"},
		{CTP_SCOPE_PROCESS, CTP_KIND_PEAK, CTP_FIELD_PARENT,
		 "role parent needs an exited u64 field"},
		{CTP_SCOPE_EXITED, CTP_KIND_COUNTER, CTP_FIELD_CGROUP,
		 "role cgroup needs an exited string field"},
	};
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		cap = sb_capture("p");
		struct ctp_field_desc g =
			flag_desc("x.w", wrong[i].scope, wrong[i].kind, 0);
		int id = ctp_registry_add(&cap->reg, 0, &g);
		assert_true(id >= 0);
		ctp_registry_get(&cap->reg, (uint32_t)id)->flags =
			wrong[i].flag;
		assert_int_equal(
			write_open(cap, dir, "bad.zst", &s, err, sizeof(err)),
			-EINVAL);
		if (!strstr(err, wrong[i].want))
			fail_msg("\"%s\" does not say \"%s\"", err,
				 wrong[i].want);
	}
	/* Two elapsed times of the exited table. */
	cap = sb_capture("p");
	assert_true(ctp_registry_add(&cap->reg, 0, &good[0]) >= 0);
	age2.flags = 0;
	int id = ctp_registry_add(&cap->reg, 0, &age2);
	assert_true(id >= 0);
	ctp_registry_get(&cap->reg, (uint32_t)id)->flags = CTP_FIELD_ELAPSED;
	assert_int_equal(write_open(cap, dir, "two.zst", &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "are both the elapsed time of one scope"));
	e2e_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_compare_sections),
		cmocka_unit_test(test_start_time),
		cmocka_unit_test(test_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
