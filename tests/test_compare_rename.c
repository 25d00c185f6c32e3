/* SPDX-License-Identifier: MIT */
/*
 * Renamed cgroups in `compare` (docs/COMPARE.md "Renamed cgroups"), on
 * hand-built snapshot pairs run through the real binary:
 *   app   /system.slice/app-blue.scope -> app-green.scope: 12 shared thread
 *         types of 13 (worker-3 and worker-7 are one type): paired, 12/13
 *   few   few-a -> few-b: 9 shared of 9, Jaccard 1 but too few: not paired
 *   low   low-a -> low-b: 34 shared of 40, Jaccard 0.85: not paired
 *   svc   /svc/one.scope: two.scope has its 10 types (1.0), three.scope
 *         one more (10/11): two wins, three stays new
 *   pod   /pod-x.slice -> /pod-y.slice (10 of 10), and their children
 *         sidecar (no type in common) and sidecar/inner carried down
 *   stay  in both: continuing
 * Every thread of a renamed cgroup is new (another tgid, started after
 * BASE), so counters count from zero. Then the thresholds and
 * --no-rename; the key with other axes; JSON and CSV shapes. And the sort
 * and truncation rules of issue 14's parity list on a second pair: a change
 * from zero ranks above any percentage, a ratio (a unit that is a
 * percentage) has no percent and ranks by its change in points, a cut
 * section says what it left out.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "model.h"
#include "snapbuild.h"

static char tmp[PATH_MAX];

/* One process: its cgroup, name, tgid and threads (space-separated names;
 * "low:N+M" is N generated names shared by both sides, then M of this
 * side's own). */
struct pspec {
	const char *cg, *pcomm;
	uint32_t tgid;
	const char *comms;
};

static const struct pspec base_p[] = {
	{"/system.slice/app-blue.scope", "app", 100,
	 "app gc io net log db http tls dns cache timer worker-3 old"},
	{"/system.slice/few-a.scope", "few", 200, "fa fb fc fd fe ff fg fh fi"},
	{"/system.slice/low-a.scope", "low", 300, "low:34+2"},
	{"/svc/one.scope", "svc", 400, "sa sb sc sd se sf sg sh si sj"},
	{"/pod-x.slice", "pod", 500, "pa pb pc pd pe pf pg ph pi pj"},
	{"/pod-x.slice/sidecar", "side", 510, "side"},
	{"/pod-x.slice/sidecar/inner", "inner", 520, "inner"},
	{"/system.slice/stay.service", "stay", 900, "stay"},
};
static const struct pspec cand_p[] = {
	{"/system.slice/app-green.scope", "app", 1100,
	 "app gc io net log db http tls dns cache timer worker-7"},
	{"/system.slice/few-b.scope", "few", 1200,
	 "fa fb fc fd fe ff fg fh fi"},
	{"/system.slice/low-b.scope", "low", 1300, "low:34+4"},
	{"/svc/two.scope", "svc", 1400, "sa sb sc sd se sf sg sh si sj"},
	{"/svc/three.scope", "svc", 1450, "sa sb sc sd se sf sg sh si sj sk"},
	{"/pod-y.slice", "pod", 1500, "pa pb pc pd pe pf pg ph pi pj"},
	{"/pod-y.slice/sidecar", "side", 1510, "proxy"},
	{"/pod-y.slice/sidecar/inner", "inner", 1520, "inner"},
	{"/system.slice/stay.service", "stay", 900, "stay"},
};

/* Names without digits (a digit would normalize them together). */
static void gen_name(char *buf, size_t n, const char *side, int i)
{
	snprintf(buf, n, "l%s%c%c", side, 'a' + i / 26, 'a' + i % 26);
}

/* Split a pspec's comms into names[] (storage in buf); k: side. */
static size_t comms_of(const struct pspec *p, int k, char (*names)[32],
		       size_t max)
{
	size_t n = 0;
	int shared, own;
	if (sscanf(p->comms, "low:%d+%d", &shared, &own) == 2) {
		for (int i = 0; i < shared && n < max; i++)
			gen_name(names[n++], 32, "", i);
		for (int i = 0; i < own && n < max; i++)
			gen_name(names[n++], 32, k ? "c" : "b", i);
		return n;
	}
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", p->comms);
	for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && n < max;
	     t = strtok_r(NULL, " ", &save))
		snprintf(names[n++], 32, "%s", t);
	return n;
}

enum { F_CPU, F_START, F_USAGE, F_UTIL, NF };

/* Side k of the rename pair; role false: the start field is an ordinary
 * one (no identity). BASE at boot time 1000 s, CAND 10 s later; threads
 * of BASE started at 1 s, CAND's at 1005 s except stay's (the same
 * thread). t.cpu 10 ticks per thread in BASE, 20 in CAND; c.usage 1000 us
 * per cgroup in BASE, 500 in CAND. */
static void write_rename_side(int k, const char *path, bool role)
{
	const struct ctp_field_desc d[NF] = {
		[F_CPU] = {"t.cpu", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_START] = {"t.begin", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			     CTP_UNIT_TICKS, CTP_KIND_ORDINAL, CTP_RULE_RANGE,
			     role ? CTP_FIELD_START_TIME : 0},
		[F_USAGE] = {"c.usage", NULL, CTP_SCOPE_CGROUP, CTP_TYPE_U64,
			     CTP_UNIT_US, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[F_UTIL] = {"t.util", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			    CTP_UNIT_CENTIPCT, CTP_KIND_GAUGE, CTP_RULE_MAX},
	};
	const struct pspec *ps = k ? cand_p : base_p;
	size_t np = k ? sizeof(cand_p) / sizeof(*cand_p)
		      : sizeof(base_p) / sizeof(*base_p);
	struct ctp_capture *cap = sb_capture("t");
	char err[512], names[64][32];
	uint32_t cg[16];

	for (int i = 0; i < NF; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	for (size_t i = 0; i < np; i++) {
		cg[i] = sb_cgroup(cap, ps[i].cg);
		sb_put_u64(cap, &cap->cgroups, cg[i], CTP_CGROUP_IDENT, F_USAGE,
			   !k		       ? 1000
			   : ps[i].tgid == 900 ? 1500
					       : 500);
	}
	for (size_t i = 0; i < np; i++) {
		size_t n = comms_of(&ps[i], k, names, 64);
		bool stay = ps[i].tgid == 900;
		sb_process(cap, ps[i].tgid, ps[i].pcomm);
		for (size_t j = 0; j < n; j++) {
			uint32_t r = sb_thread(cap, ps[i].tgid + (uint32_t)j,
					       names[j], (int)cg[i]);
			struct ctp_table *tt = &cap->threads[0];
			sb_put_u64(cap, tt, r, CTP_THREAD_IDENT, F_CPU,
				   k ? 20 : 10);
			sb_put_u64(cap, tt, r, CTP_THREAD_IDENT, F_START,
				   k && !stay ? 100500 : 100);
			sb_put_u64(cap, tt, r, CTP_THREAD_IDENT, F_UTIL, 5000);
		}
	}
	cap->start_boottime_ns =
		(1000ull + 10ull * (uint64_t)k) * 1000000000ull;
	cap->start_realtime_ns += (uint64_t)k * 10000000000ull;
	cap->end_realtime_ns += (uint64_t)k * 10000000000ull;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static int setup(void **state)
{
	(void)state;
	if (e2e_tmpdir("rename", tmp, sizeof(tmp)) < 0 || chdir(tmp) < 0)
		return -1;
	setenv("NO_COLOR", "1", 1);
	setenv("COLUMNS", "200", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (chdir("/") < 0)
		return -1;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

/* `compare A B ARGS...` (NULL-terminated) with exit status `want`; stdout
 * in *out. */
static void run(int want, char **out, const char *a, const char *b, ...)
{
	const char *args[40] = {"compare", a, b};
	size_t n = 3, len;
	va_list ap;
	va_start(ap, b);
	for (const char *s; (s = va_arg(ap, const char *)) && n < 39;)
		args[n++] = s;
	va_end(ap);
	args[n] = NULL;
	int rc = e2e_run(args, "out.txt", "err.txt");
	if (rc != want)
		e2e_show_file("compare stderr", "err.txt");
	assert_int_equal(rc, want);
	assert_int_equal(e2e_read_file("out.txt", out, &len), 0);
}

static void write_pair(bool role)
{
	write_rename_side(0, "rbase.ctprof", role);
	write_rename_side(1, "rcand.ctprof", role);
}

/* A line that starts with `prefix` (then ',' or its end). */
static bool has_prefix_line(const char *out, const char *prefix)
{
	size_t l = strlen(prefix);
	for (const char *p = out; (p = strstr(p, prefix)); p++)
		if ((p == out || p[-1] == '\n') &&
		    (p[l] == ',' || p[l] == '\n' || !p[l]))
			return true;
	return false;
}

static void has(const char *out, const char *prefix)
{
	if (!has_prefix_line(out, prefix))
		fail_msg("missing line '%s' in:\n%s", prefix, out);
}

static void hasnt(const char *out, const char *prefix)
{
	if (has_prefix_line(out, prefix))
		fail_msg("unexpected line '%s' in:\n%s", prefix, out);
}

/* No group or section line with status renamed. */
static void no_renamed_status(const char *out)
{
	if (strstr(out, ",renamed,"))
		fail_msg("unexpected renamed in:\n%s", out);
}

#define APP "/system.slice/app-blue.scope -> /system.slice/app-green.scope"

static void test_pairs_default(void **state)
{
	char *out;
	(void)state;
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "threads,cgroups", "--format", "csv", "--fields",
	    "t.cpu,c.usage", NULL);
	/* 12 shared types of 13: 12/13 = 0.9231; old only in BASE. */
	has(out, "renamed," APP ",renamed,13,12,,,,/system.slice/"
		 "app-blue.scope,/system.slice/app-green.scope,,,,,,,,,,,,"
		 "pair,0.9231,12");
	has(out, "renamed," APP ",renamed,,,,,app|old,,,,,,,,,,,,,,"
		 "type_only_in_base,,");
	has(out, "threads," APP ",renamed,13,12");
	has(out, "cgroups," APP ",renamed,13,12");
	/* Jaccard 1 but 9 shared types: not paired. */
	has(out, "threads,/system.slice/few-a.scope,gone");
	has(out, "threads,/system.slice/few-b.scope,new");
	/* Jaccard 34/40 = 0.85 < 0.90: not paired. */
	has(out, "threads,/system.slice/low-a.scope,gone");
	has(out, "threads,/system.slice/low-b.scope,new");
	/* Two candidates: the exact one wins, the other stays new. */
	has(out, "renamed,/svc/one.scope -> /svc/two.scope,renamed,10,10,,,,"
		 "/svc/one.scope,/svc/two.scope,,,,,,,,,,,,pair,1.0000,10");
	has(out, "threads,/svc/three.scope,new");
	/* Carried down to the children whatever their overlap. */
	has(out, "renamed,/pod-x.slice -> /pod-y.slice,renamed,10,10");
	has(out, "renamed,/pod-x.slice/sidecar -> /pod-y.slice/sidecar,"
		 "renamed,1,1,,,,/pod-x.slice/sidecar,/pod-y.slice/sidecar,,"
		 ",,,,,,,,,,pair,0.0000,0");
	has(out, "renamed,/pod-x.slice/sidecar -> /pod-y.slice/sidecar,"
		 "renamed,,,,,side|proxy,,,,,,,,,,,,,,type_only_in_cand,,");
	has(out, "threads,/pod-x.slice/sidecar/inner -> "
		 "/pod-y.slice/sidecar/inner,renamed");
	has(out, "threads,/system.slice/stay.service,continuing");
	hasnt(out, "renamed,/system.slice/few-a.scope -> "
		   "/system.slice/few-b.scope");
	free(out);
}

static void test_deltas(void **state)
{
	char *out;
	(void)state;
	/* Every thread of app-green is new: t.cpu counts from zero, 12 x 20
	 * ticks = 2.4 s in 10 s; no percent (BASE's value is another
	 * cgroup's); 12 new members, the 13 of BASE gone. */
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "threads,cgroups", "--format", "csv", "--fields",
	    "t.cpu,c.usage", NULL);
	has(out, "threads," APP ",renamed,13,12,1,1,t.cpu,130,240,240,,1,24,"
		 "24.0000,0,0,12,13,5.000,5.000,,,");
	/* The cgroup's own counter: from zero too. */
	has(out, "cgroups," APP ",renamed,13,12,1,1,c.usage,1000,500,500,,1");
	/* The continuing cgroup: CAND - BASE of the same thread. */
	has(out, "threads,/system.slice/stay.service,continuing,1,1,1,1,t.cpu,"
		 "10,20,10,100.0000");
	free(out);
	/* Without start times: counted from zero all the same. */
	write_pair(false);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "threads", "--format", "csv", "--fields", "t.cpu",
	    NULL);
	has(out, "threads," APP ",renamed,13,12,1,1,t.cpu,130,240,240,,1");
	free(out);
}

static void test_thresholds(void **state)
{
	char *out;
	(void)state;
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "cgroups", "--format", "csv", "--rename-min-jaccard",
	    "0.85", "--rename-min-shared", "9", NULL);
	has(out, "renamed,/system.slice/low-a.scope -> "
		 "/system.slice/low-b.scope,renamed,36,38,,,,/system.slice/"
		 "low-a.scope,/system.slice/low-b.scope,,,,,,,,,,,,pair,"
		 "0.8500,34");
	has(out, "renamed,/system.slice/few-a.scope -> "
		 "/system.slice/few-b.scope,renamed,9,9");
	free(out);
	/* --no-rename: plain new and gone. */
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "threads,cgroups", "--format", "csv", "--no-rename",
	    NULL);
	hasnt(out, "renamed");
	has(out, "threads,/system.slice/app-blue.scope,gone");
	has(out, "threads,/system.slice/app-green.scope,new");
	no_renamed_status(out);
	free(out);
	/* Bad values are usage errors. */
	run(2, &out, "rbase.ctprof", "rcand.ctprof", "--rename-min-jaccard",
	    "1.5", NULL);
	free(out);
	run(2, &out, "rbase.ctprof", "rcand.ctprof", "--rename-min-shared", "x",
	    NULL);
	free(out);
}

static void test_axes(void **state)
{
	char *out;
	(void)state;
	write_pair(true);
	/* With other axes, the cgroup part of the key is what pairs. */
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by",
	    "pcomm,cgroup", "--sections", "threads", "--format", "csv",
	    "--fields", "t.cpu", NULL);
	has(out, "threads,app|" APP ",renamed,13,12,1,1,t.cpu,130,240,240");
	/* A group of a renamed cgroup on one side only keeps new/gone, under
	 * the pair's name. */
	has(out, "threads,side|/pod-x.slice/sidecar -> /pod-y.slice/sidecar,"
		 "renamed,1,1");
	free(out);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by",
	    "cgroup,comm", "--sections", "threads", "--format", "csv",
	    "--fields", "t.cpu", NULL);
	has(out, "threads," APP "|old,gone");
	has(out, "threads," APP "|gc,renamed,1,1");
	has(out, "threads," APP "|worker-{N},renamed,1,1");
	free(out);
	/* No cgroup axis: the threads section is by name, the cgroups
	 * section still pairs. */
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--format", "csv",
	    "--sections", "threads,cgroups", "--fields", "t.cpu,c.usage", NULL);
	has(out, "threads,app,restarted");
	has(out, "cgroups," APP ",renamed");
	free(out);
	/* Only the threads section without a cgroup axis: no pairing. */
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--format", "json",
	    "--sections", "threads", NULL);
	assert_non_null(strstr(out, "\"renamed\":null"));
	free(out);
}

static void test_json(void **state)
{
	char *out;
	(void)state;
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--format", "json", NULL);
	free(out);
	/* The section's shape and the pairs, checked by a JSON parser. */
	const char *py =
		"/usr/bin/python3 -c 'import json; d = "
		"json.load(open(\"out.txt\"));"
		"r = d[\"renamed\"];"
		"assert (r[\"min_jaccard\"], r[\"min_shared\"]) == (0.9, 10), "
		"r;"
		"assert (r[\"base_only\"], r[\"cand_only\"]) == (7, 8), r;"
		"assert not r[\"gave_up\"] and r[\"more\"] == 0;"
		"p = {x[\"base\"]: x for x in r[\"pairs\"]};"
		"assert len(p) == 5, p;"
		"a = p[\"/system.slice/app-blue.scope\"];"
		"assert a[\"cand\"] == \"/system.slice/app-green.scope\";"
		"assert (a[\"jaccard\"], a[\"shared\"]) == (0.9231, 12), a;"
		"assert a[\"types\"] == {\"base\": 13, \"cand\": 12}, a;"
		"assert a[\"threads\"] == {\"base\": 13, \"cand\": 12}, a;"
		"assert a[\"only_in_base\"] == [[\"app\", \"old\"]], a;"
		"assert a[\"only_in_cand\"] == [] and not a[\"carried\"];"
		"assert p[\"/pod-x.slice/sidecar\"][\"carried\"];"
		"assert [x[\"base\"] for x in r[\"pairs\"]] == "
		"[\"/pod-x.slice\", \"/pod-x.slice/sidecar\", "
		"\"/pod-x.slice/sidecar/inner\", \"/svc/one.scope\", "
		"\"/system.slice/app-blue.scope\"], r;"
		"g = [x for x in d[\"threads\"][\"groups\"] "
		"if x[\"status\"] == \"renamed\"];"
		"assert len(g) == 5, g;"
		"a = [x for x in g if x[\"renamed\"][\"base\"] == "
		"\"/system.slice/app-blue.scope\"][0];"
		"assert a[\"key\"] == [\"/system.slice/app-green.scope\"], a;"
		"assert a[\"fields\"][\"t.cpu\"][\"delta\"] == 240, a;"
		"assert a[\"fields\"][\"t.cpu\"][\"percent\"] is None, a;"
		"assert a[\"members\"] == {\"continuing\": 0, \"new\": 12, "
		"\"gone\": 13}, a;"
		"assert all(x[\"renamed\"] is None for x in "
		"d[\"threads\"][\"groups\"] if x[\"status\"] != "
		"\"renamed\" and \"three\" in x[\"key\"][0]);"
		"'";
	assert_int_equal(system(py), 0);
}

static void test_csv_shape(void **state)
{
	char *out;
	(void)state;
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--format", "csv", "--top", "2", NULL);
	free(out);
	/* Every row has the header's columns; kinds are pair, the type
	 * lines and more (the rows --top left out, in delta). */
	const char *py =
		"/usr/bin/python3 -c 'import csv; r = list(csv.DictReader("
		"open(\"out.txt\")));"
		"assert all(None not in x and None not in x.values() for x in "
		"r);"
		"k = {x[\"kind\"] for x in r};"
		"assert k == {\"\", \"pair\", \"type_only_in_base\", "
		"\"type_only_in_cand\", \"more\"}, k;"
		"m = {x[\"section\"]: x[\"delta\"] for x in r "
		"if x[\"kind\"] == \"more\"};"
		"assert m == {\"threads\": \"9\", \"cgroups\": \"9\", "
		"\"renamed\": \"3\"}, m;"
		"p = [x for x in r if x[\"kind\"] == \"pair\"];"
		"assert [(x[\"base\"], x[\"cand\"], x[\"jaccard\"], "
		"x[\"shared_types\"]) for x in p] == [(\"/pod-x.slice\", "
		"\"/pod-y.slice\", \"1.0000\", \"10\"), "
		"(\"/pod-x.slice/sidecar\", \"/pod-y.slice/sidecar\", "
		"\"0.0000\", \"0\")], p'";
	assert_int_equal(system(py), 0);
}

/* The table: the section, "BASE -> CAND" keys, status, the cut lists. */
static void test_table(void **state)
{
	char *out;
	(void)state;
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "cgroups", "--rename-min-jaccard", "0.85", NULL);
	assert_non_null(strstr(out, "\nRenamed cgroups: 6 pairs of 7 "
				    "BASE-only and 8 CAND-only cgroups "
				    "(Jaccard of thread types >= 0.85, >= 10 "
				    "shared)\n"));
	assert_non_null(strstr(out, "  /system.slice/app-blue.scope -> "
				    "/system.slice/app-green.scope  renamed"));
	assert_non_null(strstr(out, ", 6 renamed"));
	/* low-b's 4 own types: three, then how many more. */
	assert_non_null(strstr(out, "low|lcaa, low|lcab, low|lcac \u2026 1 "
				    "more"));
	assert_non_null(strstr(out, "  parent  "));
	free(out);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "cgroups", "--top", "2", NULL);
	assert_non_null(strstr(out, "  \u2026 3 more pairs (--top 0 shows "
				    "all)\n"));
	assert_non_null(strstr(out, "  \u2026 9 more groups (--top 0 shows "
				    "all)\n"));
	free(out);
	/* Nothing to pair: no section. */
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--group-by", "cgroup",
	    "--sections", "cgroups", "--no-rename", NULL);
	assert_null(strstr(out, "Renamed cgroups"));
	free(out);
}

/* The view over the interval pairs renamed cgroups too: the CAND row is
 * marked renamed and a line under the section names its BASE path;
 * --no-rename leaves it new. */
static void contains(const char *out, const char *want)
{
	if (!strstr(out, want))
		fail_msg("missing '%s' in:\n%s", want, out);
}

static void test_view(void **state)
{
	char *out;
	(void)state;
	assert_int_equal(mkdir("views", 0755) == 0 || errno == EEXIST, 1);
	FILE *f = fopen("views/rn.yaml", "w");
	assert_non_null(f);
	fputs("view: rn\ndescription: renamed cgroups\nsort: cpu\n"
	      "sections: [{title: Cgroups, group_by: cgroup}]\n"
	      "columns:\n"
	      "  - {id: cpu, label: CPU%, field: t.cpu, show: pct_cpu}\n"
	      "  - {id: usage, label: USAGE, field: c.usage}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	char *shipped = getenv("CTPROF_VIEW_DIR");
	shipped = shipped ? strdup(shipped) : NULL;
	setenv("CTPROF_VIEW_DIR", "views", 1);
	setenv("LC_ALL", "C", 1);
	write_pair(true);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--view", "rn", "--top",
	    "0", NULL);
	/* 12 new threads x 20 ticks over 10 s: 24% of one CPU. */
	contains(out, "\n/system.slice/app-green.scope renamed 24.0 +500us\n");
	contains(out, "\n  renamed: /system.slice/app-blue.scope "
		      "-> /system.slice/app-green.scope, 92% "
		      "of thread types shared\n");
	contains(out, "\n  renamed: /pod-x.slice/sidecar -> "
		      "/pod-y.slice/sidecar, as its parent\n");
	contains(out, "\n/system.slice/few-b.scope     new ");
	free(out);
	run(0, &out, "rbase.ctprof", "rcand.ctprof", "--view", "rn", "--top",
	    "0", "--no-rename", NULL);
	assert_null(strstr(out, "renamed"));
	contains(out, "\n/system.slice/app-green.scope new ");
	free(out);
	unsetenv("LC_ALL");
	if (shipped)
		setenv("CTPROF_VIEW_DIR", shipped, 1);
	else
		unsetenv("CTPROF_VIEW_DIR");
	free(shipped);
}

/*
 * Issue 14's parity rules on a second pair, grouped by pcomm, sorted rel:
 *   zero   t.cnt 0 -> 5 (appeared from zero: no percent)
 *   huge   t.cnt 1 -> 100000 (+9999900%)
 *   ratio  t.util 30% -> 60% (a ratio: no percent; 30 points)
 *   calm   t.cnt 100 -> 150 (+50%)
 */
static void write_parity_side(int k, const char *path)
{
	static const struct ctp_field_desc d[] = {
		{"t.cnt", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
		{"t.util", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		 CTP_UNIT_CENTIPCT, CTP_KIND_GAUGE, CTP_RULE_MAX},
	};
	static const struct {
		const char *name;
		uint64_t cnt[2], util[2];
	} g[] = {{"calm", {100, 150}, {0, 0}},
		 {"huge", {1, 100000}, {0, 0}},
		 {"ratio", {7, 7}, {3000, 6000}},
		 {"zero", {0, 5}, {0, 0}}};
	struct ctp_capture *cap = sb_capture("t");
	char err[512];
	for (int i = 0; i < 2; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	for (uint32_t i = 0; i < 4; i++) {
		sb_process(cap, 10 + i, g[i].name);
		uint32_t r = sb_thread(cap, 10 + i, g[i].name, -1);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, 0,
			   g[i].cnt[k]);
		sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT, 1,
			   g[i].util[k]);
	}
	cap->start_realtime_ns += (uint64_t)k * 10000000000ull;
	cap->end_realtime_ns += (uint64_t)k * 10000000000ull;
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

static void test_parity_rules(void **state)
{
	char *out;
	(void)state;
	write_parity_side(0, "pbase.ctprof");
	write_parity_side(1, "pcand.ctprof");
	run(0, &out, "pbase.ctprof", "pcand.ctprof", "--sort", "rel",
	    "--sections", "threads", "--format", "csv", NULL);
	/* From zero first, then the percentages, then the ratio's 30
	 * points (it would have outranked all as "from zero" before). */
	const char *order[] = {"threads,zero,", "threads,huge,",
			       "threads,calm,", "threads,ratio,"};
	const char *at = out;
	for (size_t i = 0; i < 4; i++) {
		const char *p = strstr(at, order[i]);
		if (!p)
			fail_msg("'%s' not after the previous in:\n%s",
				 order[i], out);
		at = p;
	}
	/* A ratio's change has no percent; nor has a change from zero. */
	has(out, "threads,ratio,continuing,1,1,1,1,t.util,3000,6000,3000,,1");
	has(out, "threads,zero,continuing,1,1,1,1,t.cnt,0,5,5,,1");
	has(out, "threads,huge,continuing,1,1,1,1,t.cnt,1,100000,99999,"
		 "9999900.0000,1");
	free(out);
	/* The table's percent cell of a ratio is "-". */
	run(0, &out, "pbase.ctprof", "pcand.ctprof", "--sort", "rel",
	    "--sections", "threads", "--fields", "t.util", "--mode", "percent",
	    NULL);
	assert_non_null(strstr(out, "t.util  -\n"));
	free(out);
	/* Cut: the table says how many and how to see them, JSON `more`,
	 * CSV a `more` line. */
	run(0, &out, "pbase.ctprof", "pcand.ctprof", "--sort", "rel",
	    "--sections", "threads", "--top", "1", NULL);
	assert_non_null(strstr(out, "  \u2026 3 more groups (--top 0 shows "
				    "all)\n"));
	free(out);
	run(0, &out, "pbase.ctprof", "pcand.ctprof", "--sort", "rel",
	    "--sections", "threads", "--top", "1", "--format", "json", NULL);
	assert_non_null(strstr(out, "\"shown\":1,\"more\":3,"));
	free(out);
	run(0, &out, "pbase.ctprof", "pcand.ctprof", "--sort", "rel",
	    "--sections", "threads", "--top", "1", "--format", "csv", NULL);
	has(out, "threads,,,,,,,,,,3,,,,,,,,,,,more,,");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_default),
		cmocka_unit_test(test_deltas),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_axes),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv_shape),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_parity_rules),
		cmocka_unit_test(test_view),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
