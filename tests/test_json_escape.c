/* SPDX-License-Identifier: MIT */
/*
 * One JSON escaper (ctp_table_json_str, core/analysis/table.c) for dump and
 * compare: kernel bytes that are not UTF-8 and control characters come out
 * as valid JSON that a JSON parser maps back to the same bytes (each as
 * U+00XX). Checked with Python's json module on both commands' output.
 * One CSV escaper (ctp_table_csv_str) for show and compare: the same text
 * is the same cell in both.
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

#include "e2e_util.h"
#include "snapbuild.h"

static char tmpdir[PATH_MAX];

/* A comm with an invalid UTF-8 byte, a control byte, a quote and a
 * well-formed two-byte character. */
static const char comm[] = "w\xff\x01\"\xc3\xa9";

static void write_snapshot(const char *path)
{
	struct ctp_capture *cap = sb_capture("t");
	static const struct ctp_field_desc d = {
		"t.cnt",      "a count",      CTP_SCOPE_THREAD,
		CTP_TYPE_U64, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
		CTP_RULE_SUM};
	int fid = ctp_registry_add(&cap->reg, 0, &d);
	assert_true(fid >= 0);
	sb_process(cap, 10, comm);
	uint32_t r = sb_thread(cap, 10, comm, -1);
	sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, fid, 1);
	char err[512];
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_capture_free(cap);
}

static void test_both_commands(void **unused)
{
	(void)unused;
	char snap[PATH_MAX + 16], out[PATH_MAX + 16], cmd[4 * PATH_MAX];
	snprintf(snap, sizeof(snap), "%s/s.ctprof.zst", tmpdir);
	snprintf(out, sizeof(out), "%s/out.json", tmpdir);
	write_snapshot(snap);

	/* The comm as Python sees the JSON string: U+00FF for the 0xff byte,
	 * U+0001, '"', U+00E9. */
	static const char want[] = "w\\xff\\x01\\\"\\xe9";
	const char *dump[] = {"dump", snap, NULL};
	assert_int_equal(e2e_run(dump, out, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys; "
		 "d=json.load(open(sys.argv[1])); "
		 "assert d[\"threads\"][\"comm\"][0]==\"%s\", "
		 "repr(d[\"threads\"][\"comm\"][0])' %s",
		 want, out);
	assert_int_equal(system(cmd), 0);

	const char *cmp[] = {"compare", snap,	      snap,   "--format",
			     "json",	"--group-by", "comm", "--no-normalize",
			     NULL};
	assert_int_equal(e2e_run(cmp, out, NULL), 0);
	/* Some string of the parsed output (the group key) is the comm. */
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys\n"
		 "def walk(v):\n"
		 "  if isinstance(v,dict): [walk(x) for x in v.values()]\n"
		 "  elif isinstance(v,list): [walk(x) for x in v]\n"
		 "  elif isinstance(v,str): seen.add(v)\n"
		 "seen=set(); walk(json.load(open(sys.argv[1])))\n"
		 "assert \"%s\" in seen, sorted(seen)[:20]' %s",
		 want, out);
	assert_int_equal(system(cmd), 0);
}

static char *run(const char *const *args, const char *out)
{
	char *buf;
	size_t len;
	assert_int_equal(e2e_run(args, out, NULL), 0);
	assert_int_equal(e2e_read_file(out, &buf, &len), 0);
	return buf;
}

static void test_compare_csv_as_show(void **unused)
{
	(void)unused;
	char snap[PATH_MAX + 16], out[PATH_MAX + 16];
	snprintf(snap, sizeof(snap), "%s/s.ctprof.zst", tmpdir);
	snprintf(out, sizeof(out), "%s/out.csv", tmpdir);
	write_snapshot(snap);

	/* The comm's CSV cell: quoted for its '"', which is doubled; the
	 * 0xff byte as \u00ff; the rest as it is. */
	static const char want[] = "\"w\\u00ff\x01\"\"\xc3\xa9\"";
	const char *show[] = {"show",	    snap,   "--format",	      "csv",
			      "--group-by", "comm", "--no-normalize", NULL};
	char *s = run(show, out);
	if (!strstr(s, want))
		fail_msg("show: no %s in\n%s", want, s);
	free(s);
	const char *cmp[] = {"compare", snap,	      snap,   "--format",
			     "csv",	"--group-by", "comm", "--no-normalize",
			     NULL};
	s = run(cmp, out);
	/* threads,<the comm>,continuing,... */
	char line[64];
	snprintf(line, sizeof(line), "\nthreads,%s,", want);
	if (!strstr(s, line))
		fail_msg("compare: no %s in\n%s", line + 1, s);
	free(s);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("json", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_commands),
		cmocka_unit_test(test_compare_csv_as_show),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
