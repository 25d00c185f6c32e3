/* SPDX-License-Identifier: MIT */
/*
 * End to end on the fixture roots tests/fixtures/host: run the built
 * ctprof-core with host-context, decode the snapshot with
 * core/snapshot/reader.c and check every host value, the field descriptions and
 * the summary counters; `show` prints the host block sorted by name. Then the
 * same with roots that hold nothing: only the uname triple (and the collector's
 * own figures, which come from no file) have values.
 */
#include <errno.h>
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
#include <sys/utsname.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"
#include "test_host_util.h"

#define FIX CTP_TEST_FIXTURES "/host"

static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* What the fixture holds (tests/fixtures/host/README). */
static const struct {
	const char *name, *value;
} exp_str[] = {
	{"host.cpu.model", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"},
	{"host.cpu.vendor", "GenuineIntel"},
	{"host.thp.enabled.menu", "[always] madvise never"},
	{"host.thp.enabled.active", "always"},
	{"host.thp.defrag.menu", "always defer [defer+madvise] madvise never"},
	{"host.thp.defrag.active", "defer+madvise"},
	{"host.cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 "
			 "root=UUID=0b6e1c5c-3f2e-4f0e-9d53-2f7b1c9e8a11 ro "
			 "quiet isolcpus=2,3 transparent_hugepage=always"},
	{"host.task_delayacct", "on"},
	{"host.config_task_xacct", "off"},
	{"host.sched.huge", "18446744073709551616"},
	{"host.sched.leading_zero", "007"},
	{"host.sched.util_clamp_pair", "1024\t512"},
	{"host.cpufreq.governor.cpu0", "performance"},
	{"host.cpufreq.governor.cpu1", "performance"},
	{"host.cpufreq.governor.cpu2", "powersave"},
	{"host.self.allocator", HOST_EXPECT_ALLOCATOR},
};

static const struct {
	const char *name;
	uint64_t value;
	uint8_t unit;
} exp_u64[] = {
	{"host.mem.total", 16314660ull * 1024, CTP_UNIT_BYTES},
	{"host.hugepages.total", 64, CTP_UNIT_COUNT},
	{"host.hugepages.free", 60, CTP_UNIT_COUNT},
	{"host.hugepages.size", 2048ull * 1024, CTP_UNIT_BYTES},
	{"host.cpu.online", 4, CTP_UNIT_COUNT},
	{"host.numa.nodes", 2, CTP_UNIT_COUNT},
};

static const struct {
	const char *name;
	int64_t value;
} exp_i64[] = {
	{"host.sched.autogroup_enabled", 1},
	{"host.sched.cfs_bandwidth_slice_us", 5000},
	{"host.sched.energy_aware", 0},
	{"host.sched.rr_timeslice_ms", 100},
	{"host.sched.rt_period_us", 1000000},
	{"host.sched.rt_runtime_us", -1},
};

/* Fields that must not exist at all: skipped, ignored, offline. */
static const char *const exp_none[] = {
	"host.sched.Upper",	      "host.sched.domain",
	"host.sched.panic",	      "host.cpufreq.governor.cpu3",
	"host.cpufreq.governor.cpu5",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_uname(const struct ctp_snap *s)
{
	struct utsname u;

	assert_int_equal(uname(&u), 0);
	CHECK(host_str_is(s, "host.uname.sysname", u.sysname), "sysname");
	CHECK(host_str_is(s, "host.uname.release", u.release), "release");
	CHECK(host_str_is(s, "host.uname.machine", u.machine), "machine");
}

/* The collector's own figures: present whatever the roots. */
static void check_self(const struct ctp_snap *s)
{
	struct ctp_value v = host_value(s, "host.self.maxrss");
	bool je = strcmp(HOST_EXPECT_ALLOCATOR, "jemalloc") == 0;

	CHECK(host_str_is(s, "host.self.allocator", HOST_EXPECT_ALLOCATOR),
	      "allocator");
	CHECK(v.type == CTP_TYPE_U64 && v.u64 > 0, "maxrss %u", v.type);
	v = host_value(s, "host.self.cpu_user");
	CHECK(v.type == CTP_TYPE_U64, "cpu_user absent");
	v = host_value(s, "host.self.cpu_system");
	CHECK(v.type == CTP_TYPE_U64, "cpu_system absent");
	v = host_value(s, je ? "host.self.jemalloc.allocated"
			     : "host.self.glibc.uordblks");
	CHECK(v.type == CTP_TYPE_U64 && (v.u64 > 0 || HOST_ASAN),
	      "heap in use %u", v.type);
	v = host_value(s, je ? "host.self.glibc.uordblks"
			     : "host.self.jemalloc.allocated");
	CHECK(v.type == CTP_VALUE_ABSENT, "the other allocator's figure set");
}

static void test_fixture(void **state)
{
	struct host_run r;
	const struct ctp_snap *s;

	(void)state;
	nbad = 0;
	assert_int_equal(host_capture(FIX "/proc", FIX "/sys", &r), 0);
	s = r.snap;
	check_uname(s);
	check_self(s);
	for (size_t i = 0; i < N(exp_str); i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s, exp_str[i].name);

		CHECK(host_str_is(s, exp_str[i].name, exp_str[i].value), "%s",
		      exp_str[i].name);
		CHECK(f && f->kind == CTP_KIND_CATEGORICAL &&
			      f->rule == CTP_RULE_MODE &&
			      !strcmp(f->plugin, "host-context"),
		      "%s: description", exp_str[i].name);
	}
	for (size_t i = 0; i < N(exp_u64); i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s, exp_u64[i].name);

		CHECK(host_u64_is(s, exp_u64[i].name, exp_u64[i].value), "%s",
		      exp_u64[i].name);
		CHECK(f && f->kind == CTP_KIND_GAUGE &&
			      f->rule == CTP_RULE_MAX &&
			      f->unit == exp_u64[i].unit,
		      "%s: description", exp_u64[i].name);
	}
	for (size_t i = 0; i < N(exp_i64); i++)
		CHECK(host_i64_is(s, exp_i64[i].name, exp_i64[i].value), "%s",
		      exp_i64[i].name);
	for (size_t i = 0; i < N(exp_none); i++)
		CHECK(!ctp_snap_field_find(s, exp_none[i]), "%s exists",
		      exp_none[i]);
	/* The only host fields: ours, every one of them checked above or a
	 * self figure. */
	{
		const struct ctp_snap_field *fs = ctp_snap_fields(s);
		size_t host = 0;

		for (size_t i = 0; i < ctp_snap_n_fields(s); i++)
			if (fs[i].scope == CTP_SCOPE_HOST) {
				host++;
				CHECK(!strncmp(fs[i].name, "host.", 5), "%s",
				      fs[i].name);
			}
		/* 34 static fields, 9 tunables, 3 governors. */
		CHECK(host == 34 + 9 + 3, "%zu host fields", host);
	}
	CHECK(host_summary(s, "sources_missing") == 1, "sources_missing");
	CHECK(host_summary(s, "sources_unreadable") == 0, "unreadable");
	CHECK(host_summary(s, "parse_errors") == 0, "parse_errors");
	CHECK(host_summary(s, "keys_skipped") == 1, "keys_skipped");
	if (nbad)
		fail_msg("%d mismatches", nbad);

	/* `show`: the host block in name order, each value once. */
	{
		char out[700], *text = NULL, *p, *end, prev[160] = "";
		const char *args[] = {"show", r.out, "--view", "all", NULL};
		size_t n = 0;

		snprintf(out, sizeof(out), "%s/show.txt", r.dir);
		assert_int_equal(e2e_run(args, out, NULL), 0);
		assert_int_equal(e2e_read_file(out, &text, NULL), 0);
		p = strstr(text, "\nHost values:\n");
		assert_non_null(p);
		p += strlen("\nHost values:\n");
		end = strstr(p, "\n\n");
		assert_non_null(end);
		for (char *l = p; l < end; n++) {
			char name[160];
			char *nl = strchr(l, '\n');

			assert_int_equal(sscanf(l, " %159s", name), 1);
			if (strcmp(prev, name) >= 0)
				fail_msg("show: %s after %s", name, prev);
			strcpy(prev, name);
			l = nl + 1;
		}
		assert_int_equal(n, 34 + 9 + 3);
		assert_non_null(strstr(p, "  host.sched.rt_runtime_us "));
		assert_non_null(strstr(p, " -1\n"));
		free(text);
	}
	host_run_done(&r);
}

static const char *proc_1(const char *proc)
{
	static char p[700];

	snprintf(p, sizeof(p), "%s/1", proc);
	return p;
}

/* Roots with no host source in them: every file-sourced value absent. */
static void test_nothing(void **state)
{
	struct host_run r;
	char dir[512], proc[600], sys[600];
	const struct ctp_snap_field *fs;

	(void)state;
	nbad = 0;
	assert_int_equal(e2e_tmpdir("host-empty", dir, sizeof(dir)), 0);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	/* The sys root does not even exist. */
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	assert_int_equal(mkdir(proc, 0755), 0);
	/* One process, so the walk has a task; no host source. */
	if (e2e_copy_tree(FIX "/proc/1", proc_1(proc)) < 0 ||
	    host_capture(proc, sys, &r) != 0) {
		e2e_rm_rf(dir);
		fail_msg("capture on %s failed", proc);
	}
	check_uname(r.snap);
	check_self(r.snap);
	fs = ctp_snap_fields(r.snap);
	for (size_t i = 0; i < ctp_snap_n_fields(r.snap); i++) {
		struct ctp_value v;

		if (fs[i].scope != CTP_SCOPE_HOST)
			continue;
		/* No runtime field: there was no tunable and no CPU. */
		CHECK(strncmp(fs[i].name, "host.sched.", 11) &&
			      strncmp(fs[i].name, "host.cpufreq.", 13),
		      "%s registered", fs[i].name);
		if (!strncmp(fs[i].name, "host.uname.", 11) ||
		    !strncmp(fs[i].name, "host.self.", 10))
			continue;
		v = ctp_snap_get(r.snap, &fs[i], 0);
		CHECK(v.type == CTP_VALUE_ABSENT, "%s has a value", fs[i].name);
	}
	CHECK(host_summary(r.snap, "sources_missing") == 10,
	      "sources_missing %llu",
	      (unsigned long long)host_summary(r.snap, "sources_missing"));
	CHECK(host_summary(r.snap, "sources_unreadable") == 0, "unreadable");
	host_run_done(&r);
	e2e_rm_rf(dir);
	if (nbad)
		fail_msg("%d mismatches", nbad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
