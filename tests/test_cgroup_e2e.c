/* SPDX-License-Identifier: MIT */
/*
 * The cgroup collector end to end on the three host layouts, each a fixture
 * tree with its own proc/self/mountinfo and a cgroup hierarchy (the root, a
 * nested service, a process whose threads sit in different cgroups):
 *
 *   tests/fixtures/cgroup-v2      pure v2; app.scope is "domain threaded"
 *                                 with thread 301 in its threaded child gc
 *   tests/fixtures/cgroup-hybrid  this build host's shape: v2 at
 *                                 sys/fs/cgroup/unified without controllers,
 *                                 v1 cpu, cpuacct, memory, pids, name=systemd
 *                                 mounted; blkio and devices listed but not
 *                                 mounted; thread 301 moved alone in cpu
 *   tests/fixtures/cgroup-v1      pure v1 (no "0::" line, no cgroup2): cpu and
 *                                 cpuacct co-mounted, pids a container-style
 *                                 bind of /system.slice
 *
 * The built ctprof-core runs the cgroup plugin on each; the snapshot is read
 * back with core/snapshot/reader.c and every cgroup.* value of every row is
 * checked against the tables below: a value not listed must be absent. Also the
 * thread identity and path fields, field descriptions, summary counters,
 * `auto` discovery of the cgroup roots from a mountinfo naming the copied
 * tree, the v1 option off, and several workers.
 */
#include <errno.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define FIX	       CTP_TEST_FIXTURES
#define MAX_SNAP       (1ull << 30)
#define PATH(buf, ...) assert_int_equal(E2E_PATHF(buf, __VA_ARGS__), 0)

static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* ---- Expectations -------------------------------------------------------- */

/* One expected value; a field of the row not listed must be absent. */
struct ev {
	const char *field;
	char t; /* 'u', 'i', 's' */
	uint64_t u;
	int64_t i;
	const char *s;
};
#define U(f, v)                                                                \
	{                                                                      \
		f, 'u', v, 0, NULL                                             \
	}
#define I(f, v)                                                                \
	{                                                                      \
		f, 'i', 0, v, NULL                                             \
	}
#define S(f, v)                                                                \
	{                                                                      \
		f, 's', 0, 0, v                                                \
	}
#define MAXV 48

struct exp_cg {
	const char *path; /* the cgroups table's path: v2 path or v1 key */
	struct ev v[MAXV];
};

struct exp_thread {
	uint32_t tgid, tid;
	const char *v2; /* identity column's path; NULL when nil */
	struct ev v[8]; /* the thread's cgroup.* fields */
};

struct counter {
	const char *name;
	uint64_t value;
};

struct layout {
	const char *name;
	const char *dir;     /* under tests/fixtures */
	const char *v2_root; /* under dir; NULL: "auto" finds none */
	const struct exp_cg *cgs;
	size_t n_cgs;
	const struct exp_thread *threads;
	size_t n_threads;
	struct counter counters[7];
};

#define C2(k) "cgroup.v2." k
#define C1(k) "cgroup.v1." k
#define FOO   "/system.slice/foo.service"
#define APP   "/user.slice/app.scope"
#define GC    APP "/gc"
#define ALL   UINT64_MAX

/* v2 cpu.stat as the fixture's cgroups without bandwidth stats print it. */
#define CPU_BASE(u, us, sy)                                                    \
	U(C2("cpu.stat.usage_usec"), u), U(C2("cpu.stat.user_usec"), us),      \
		U(C2("cpu.stat.system_usec"), sy)
#define CPU_BW(p, t, tu)                                                       \
	U(C2("cpu.stat.nr_periods"), p), U(C2("cpu.stat.nr_throttled"), t),    \
		U(C2("cpu.stat.throttled_usec"), tu),                          \
		U(C2("cpu.stat.nr_bursts"), 0),                                \
		U(C2("cpu.stat.burst_usec"), 0)
#define MEM_EVENTS(l, h, m, o, ok)                                             \
	U(C2("memory.events.low"), l), U(C2("memory.events.high"), h),         \
		U(C2("memory.events.max"), m), U(C2("memory.events.oom"), o),  \
		U(C2("memory.events.oom_kill"), ok),                           \
		U(C2("memory.events.oom_group_kill"), 0)

static const struct exp_cg v2_cgs[] = {
	{"/init.scope",
	 {CPU_BASE(5000000, 3000000, 2000000), CPU_BW(0, 0, 0),
	  U(C2("memory.current"), 8388608), U(C2("memory.low"), 0),
	  U(C2("memory.min"), 0), MEM_EVENTS(0, 0, 0, 0, 0),
	  U(C2("pids.current"), 1), S(C2("cgroup.type"), "domain")}},
	/* the root: no cgroup.type, no limits */
	{"/",
	 {CPU_BASE(987654321, 123456789, 864197532),
	  U(C2("cpu.stat.nice_usec"), 0),
	  U(C2("cpu.stat.core_sched.force_idle_usec"), 0),
	  U(C2("memory.stat.anon"), 1048576000),
	  U(C2("memory.stat.file"), 2097152000),
	  U(C2("memory.stat.pgfault"), 123456),
	  U(C2("memory.stat.workingset_refault_file"), 42)}},
	{FOO,
	 {CPU_BASE(7200000000, 5000000000, 2200000000),
	  CPU_BW(72000, 1500, 98765432), U(C2("cpu.max.quota_us"), 50000),
	  U(C2("cpu.max.period_us"), 100000), U(C2("cpu.weight"), 100),
	  I(C2("cpu.weight.nice"), 0), U(C2("memory.current"), 402653184),
	  U(C2("memory.max"), 536870912),
	  /* memory.high "max": absent; memory.low "max": all of it */
	  U(C2("memory.low"), ALL), U(C2("memory.min"), 0),
	  U(C2("memory.stat.anon"), 301989888),
	  U(C2("memory.stat.file"), 100663296),
	  U(C2("memory.stat.kernel"), 2097152),
	  U(C2("memory.stat.zswapped"), 0),
	  U(C2("memory.stat.pgfault"), 1234567),
	  U(C2("memory.stat.pgmajfault"), 89),
	  U(C2("memory.stat.workingset_refault_file"), 1000),
	  U(C2("memory.stat.thp_fault_alloc"), 3), MEM_EVENTS(0, 0, 17, 2, 1),
	  U(C2("pids.current"), 2), U(C2("pids.max"), 100),
	  S(C2("cgroup.type"), "domain")}},
	{APP,
	 {CPU_BASE(4000, 3000, 1000), CPU_BW(0, 0, 0),
	  U(C2("cpu.stat.future_usec"), 7),
	  /* cpu.max "max 100000": the quota is absent */
	  U(C2("cpu.max.period_us"), 100000), U(C2("cpu.weight"), 200),
	  I(C2("cpu.weight.nice"), -3), U(C2("memory.current"), 268435456),
	  U(C2("memory.high"), 1073741824), U(C2("memory.low"), 268435456),
	  U(C2("memory.min"), ALL),
	  /* a garbage line and an overflowing pgmajfault are skipped */
	  U(C2("memory.stat.anon"), 134217728),
	  U(C2("memory.stat.file"), 134217728),
	  U(C2("memory.stat.pgfault"), 99),
	  U(C2("memory.stat.zz_future_bytes"), 4096), MEM_EVENTS(0, 4, 0, 0, 0),
	  U(C2("memory.events.future_event"), 3), U(C2("pids.current"), 2),
	  U(C2("pids.max"), 512), S(C2("cgroup.type"), "domain threaded")}},
	/* threaded: no memory controller; cpu.weight.nice is garbage */
	{GC,
	 {CPU_BASE(1000, 600, 400), CPU_BW(10, 2, 3000),
	  U(C2("cpu.max.quota_us"), 25000), U(C2("cpu.max.period_us"), 50000),
	  U(C2("cpu.weight"), 100), U(C2("pids.current"), 1),
	  S(C2("cgroup.type"), "threaded")}},
};

static const struct exp_thread v2_threads[] = {
	{1, 1, "/init.scope", {{0}}}, {2, 2, "/", {{0}}},
	{100, 100, FOO, {{0}}},	      {100, 101, FOO, {{0}}},
	{300, 300, APP, {{0}}},	      {300, 301, GC, {{0}}},
};

/* Hybrid: v2 rows carry only cpu.stat and cgroup.type (no controllers). */
#define HCPU(u)                                                                \
	U(C2("cpu.stat.usage_usec"), u), U(C2("cpu.stat.user_usec"), (u) / 2), \
		U(C2("cpu.stat.system_usec"), (u) - (u) / 2),                  \
		U(C2("cpu.stat.nice_usec"), 0)
#define V1CPU(p, t, tt)                                                        \
	U(C1("cpu.stat.nr_periods"), p), U(C1("cpu.stat.nr_throttled"), t),    \
		U(C1("cpu.stat.throttled_time"), tt),                          \
		U(C1("cpu.stat.nr_bursts"), 0),                                \
		U(C1("cpu.stat.burst_time"), 0)
#define HIER(h) S(C1("hierarchy"), h)
/* v1 memory.stat of the fixtures; the unlimited memsw limit is absent. */
#define V1MEM(rss)                                                             \
	U(C1("memory.stat.cache"), 4096), U(C1("memory.stat.rss"), rss),       \
		U(C1("memory.stat.rss_huge"), 0),                              \
		U(C1("memory.stat.pgpgin"), 100),                              \
		U(C1("memory.stat.pgpgout"), 50),                              \
		U(C1("memory.stat.pgfault"), 1000),                            \
		U(C1("memory.stat.pgmajfault"), 2),                            \
		U(C1("memory.stat.total_rss"), rss),                           \
		U(C1("memory.stat.total_pgfault"), 1000)

static const struct exp_cg hy_cgs[] = {
	{"/init.scope", {HCPU(1000000), S(C2("cgroup.type"), "domain")}},
	{"/",
	 {U(C2("cpu.stat.usage_usec"), 2546762007),
	  U(C2("cpu.stat.user_usec"), 1126341814),
	  U(C2("cpu.stat.system_usec"), 1420420192),
	  U(C2("cpu.stat.nice_usec"), 0)}},
	{FOO, {HCPU(7100000000), S(C2("cgroup.type"), "domain")}},
	{APP, {HCPU(5000), S(C2("cgroup.type"), "domain")}},
	{"v1:name=systemd:/init.scope", {HIER("name=systemd")}},
	{"v1:name=systemd:/", {HIER("name=systemd")}},
	{"v1:name=systemd:" FOO, {HIER("name=systemd")}},
	{"v1:name=systemd:" APP, {HIER("name=systemd")}},
	/* the pids root has no pids.* files */
	{"v1:pids:/", {HIER("pids")}},
	{"v1:pids:" FOO,
	 {HIER("pids"), U(C1("pids.current"), 2), U(C1("pids.max"), 100)}},
	{"v1:pids:" APP, {HIER("pids"), U(C1("pids.current"), 2)}},
	/* listed in /proc but not mounted */
	{"v1:blkio:/", {HIER("blkio")}},
	{"v1:devices:/", {HIER("devices")}},
	{"v1:devices:" FOO, {HIER("devices")}},
	{"v1:devices:" APP, {HIER("devices")}},
	{"v1:memory:/",
	 {HIER("memory"), U(C1("memory.usage_in_bytes"), 1234567890),
	  U(C1("memory.max_usage_in_bytes"), 2000000000), V1MEM(11169792)}},
	{"v1:memory:" FOO,
	 {HIER("memory"), U(C1("memory.usage_in_bytes"), 402653184),
	  U(C1("memory.limit_in_bytes"), 536870912),
	  U(C1("memory.max_usage_in_bytes"), 500000000), V1MEM(301989888),
	  U(C1("memory.stat.hierarchical_memory_limit"), 536870912)}},
	/* limit unlimited, max_usage overflows, no memory.stat */
	{"v1:memory:" APP,
	 {HIER("memory"), U(C1("memory.usage_in_bytes"), 268435456)}},
	{"v1:cpuacct:/",
	 {HIER("cpuacct"), U(C1("cpuacct.usage"), 2583479814936)}},
	{"v1:cpuacct:" FOO,
	 {HIER("cpuacct"), U(C1("cpuacct.usage"), 7200000000000)}},
	{"v1:cpuacct:" APP, {HIER("cpuacct"), U(C1("cpuacct.usage"), 1000000)}},
	{"v1:cpu:/",
	 {HIER("cpu"), U(C1("cpu.cfs_period_us"), 100000),
	  U(C1("cpu.shares"), 1024), V1CPU(0, 0, 0),
	  U(C1("cpu.stat.usage_usec"), 3051924677),
	  U(C1("cpu.stat.user_usec"), 1462090829),
	  U(C1("cpu.stat.system_usec"), 1589833847),
	  U(C1("cpu.stat.nice_usec"), 0)}},
	{"v1:cpu:" FOO,
	 {HIER("cpu"), U(C1("cpu.cfs_quota_us"), 50000),
	  U(C1("cpu.cfs_period_us"), 100000), U(C1("cpu.shares"), 512),
	  V1CPU(1000, 20, 123456789)}},
	{"v1:cpu:" APP,
	 {HIER("cpu"), U(C1("cpu.cfs_period_us"), 100000),
	  U(C1("cpu.shares"), 2048), V1CPU(0, 0, 0)}},
	{"v1:cpu:" GC,
	 {HIER("cpu"), U(C1("cpu.cfs_quota_us"), 20000),
	  U(C1("cpu.cfs_period_us"), 100000), U(C1("cpu.shares"), 256),
	  V1CPU(50, 5, 5000000)}},
};

#define P(h, v) S(C1(h ".path"), v)
#define HY(sd, pids, blk, dev, mem, acct, cpu)                                 \
	{                                                                      \
		P("name-systemd", sd), P("pids", pids), P("blkio", blk),       \
			P("devices", dev), P("memory", mem),                   \
			P("cpuacct", acct), P("cpu", cpu)                      \
	}

static const struct exp_thread hy_threads[] = {
	{1, 1, "/init.scope", HY("/init.scope", "/", "/", "/", "/", "/", "/")},
	{2, 2, "/", HY("/", "/", "/", "/", "/", "/", "/")},
	{100, 100, FOO, HY(FOO, FOO, "/", FOO, FOO, FOO, FOO)},
	{100, 101, FOO, HY(FOO, FOO, "/", FOO, FOO, FOO, FOO)},
	{300, 300, APP, HY(APP, APP, "/", APP, APP, APP, APP)},
	/* moved alone in the cpu hierarchy: v1 membership is per thread */
	{300, 301, APP, HY(APP, APP, "/", APP, APP, APP, GC)},
};

static const struct exp_cg v1_cgs[] = {
	{"v1:name=systemd:/init.scope", {HIER("name=systemd")}},
	{"v1:name=systemd:/", {HIER("name=systemd")}},
	{"v1:name=systemd:" FOO, {HIER("name=systemd")}},
	{"v1:name=systemd:" APP, {HIER("name=systemd")}},
	/* pids shows /system.slice only: the others are unreachable */
	{"v1:pids:/", {HIER("pids")}},
	{"v1:pids:" FOO,
	 {HIER("pids"), U(C1("pids.current"), 2), U(C1("pids.max"), 64)}},
	{"v1:pids:" APP, {HIER("pids")}},
	{"v1:memory:/",
	 {HIER("memory"), U(C1("memory.usage_in_bytes"), 3221225472),
	  U(C1("memory.max_usage_in_bytes"), 4294967296), V1MEM(1073741824)}},
	{"v1:memory:" FOO,
	 {HIER("memory"), U(C1("memory.usage_in_bytes"), 402653184),
	  U(C1("memory.limit_in_bytes"), 536870912),
	  U(C1("memory.max_usage_in_bytes"), 500000000), V1MEM(301989888),
	  U(C1("memory.stat.hierarchical_memory_limit"), 536870912)}},
	{"v1:memory:" APP,
	 {HIER("memory"), U(C1("memory.usage_in_bytes"), 268435456),
	  U(C1("memory.limit_in_bytes"), 1073741824),
	  U(C1("memory.max_usage_in_bytes"), 300000000),
	  U(C1("memory.stat.cache"), 0), U(C1("memory.stat.rss"), 268435456),
	  U(C1("memory.stat.future_thing"), 8)}},
	{"v1:cpu,cpuacct:/",
	 {HIER("cpu,cpuacct"), U(C1("cpuacct.usage"), 987654321000),
	  U(C1("cpu.cfs_period_us"), 100000), U(C1("cpu.shares"), 1024),
	  V1CPU(0, 0, 0)}},
	{"v1:cpu,cpuacct:" FOO,
	 {HIER("cpu,cpuacct"), U(C1("cpuacct.usage"), 7200000000000),
	  U(C1("cpu.cfs_quota_us"), 50000), U(C1("cpu.cfs_period_us"), 100000),
	  U(C1("cpu.shares"), 512), V1CPU(1000, 20, 123456789)}},
	{"v1:cpu,cpuacct:" APP,
	 {HIER("cpu,cpuacct"), U(C1("cpuacct.usage"), 1000000),
	  U(C1("cpu.cfs_period_us"), 100000), U(C1("cpu.shares"), 2048),
	  V1CPU(0, 0, 0), U(C1("cpu.stat.wait_sum"), 12345)}},
	/* cfs_quota_us overflows: absent */
	{"v1:cpu,cpuacct:" GC,
	 {HIER("cpu,cpuacct"), U(C1("cpuacct.usage"), 400000),
	  U(C1("cpu.cfs_period_us"), 100000), U(C1("cpu.shares"), 256),
	  V1CPU(50, 5, 5000000)}},
};

#define V1T(sd, pids, mem, cpu)                                                \
	{                                                                      \
		P("pids", pids), P("memory", mem), P("cpu-cpuacct", cpu),      \
			P("name-systemd", sd)                                  \
	}

static const struct exp_thread v1_threads[] = {
	{1, 1, NULL, V1T("/init.scope", "/", "/", "/")},
	{2, 2, NULL, V1T("/", "/", "/", "/")},
	{100, 100, NULL, V1T(FOO, FOO, FOO, FOO)},
	{100, 101, NULL, V1T(FOO, FOO, FOO, FOO)},
	{300, 300, NULL, V1T(APP, APP, APP, APP)},
	{300, 301, NULL, V1T(APP, APP, APP, GC)},
};

#define N(a) a, sizeof(a) / sizeof(a[0])
#define COUNTERS(parse, no_mount, v1_unreach)                                  \
	{                                                                      \
		{"parse_errors", parse}, {"read_errors", 0},                   \
			{"keys_dropped", 0}, {"v1_no_mount", no_mount},        \
			{"v1_unreachable", v1_unreach}, {"v2_unreachable", 0}, \
		{                                                              \
			"ref_errors", 0                                        \
		}                                                              \
	}

static const struct layout layouts[] = {
	{"v2", "cgroup-v2", "sys/fs/cgroup", N(v2_cgs), N(v2_threads),
	 COUNTERS(2, 0, 0)},
	{"hybrid", "cgroup-hybrid", "sys/fs/cgroup/unified", N(hy_cgs),
	 N(hy_threads), COUNTERS(1, 4, 0)},
	{"v1", "cgroup-v1", NULL, N(v1_cgs), N(v1_threads), COUNTERS(2, 0, 2)},
};
enum { L_V2, L_HYBRID, L_V1 };

/* ---- Field descriptions -------------------------------------------------- */

struct exp_desc {
	const char *name;
	uint8_t scope, type, unit, kind, rule;
};
#define CG CTP_SCOPE_CGROUP
static const struct exp_desc descs[] = {
	{C2("cpu.stat.usage_usec"), CG, CTP_TYPE_U64, CTP_UNIT_US,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C2("cpu.stat.nr_throttled"), CG, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C2("cpu.max.quota_us"), CG, CTP_TYPE_U64, CTP_UNIT_US, CTP_KIND_GAUGE,
	 CTP_RULE_MAX},
	{C2("cpu.weight.nice"), CG, CTP_TYPE_I64, CTP_UNIT_NONE, CTP_KIND_GAUGE,
	 CTP_RULE_MIN},
	{C2("memory.max"), CG, CTP_TYPE_U64, CTP_UNIT_BYTES, CTP_KIND_GAUGE,
	 CTP_RULE_MAX},
	{C2("memory.low"), CG, CTP_TYPE_U64, CTP_UNIT_BYTES, CTP_KIND_GAUGE,
	 CTP_RULE_MIN},
	{C2("cgroup.type"), CG, CTP_TYPE_STRING, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{C1("hierarchy"), CG, CTP_TYPE_STRING, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{C1("cpuacct.usage"), CG, CTP_TYPE_U64, CTP_UNIT_NS, CTP_KIND_COUNTER,
	 CTP_RULE_SUM},
	{C1("memory.max_usage_in_bytes"), CG, CTP_TYPE_U64, CTP_UNIT_BYTES,
	 CTP_KIND_PEAK, CTP_RULE_MAX},
	{C1("cpu.stat.throttled_time"), CG, CTP_TYPE_U64, CTP_UNIT_NS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
};
/* Runtime ones, when the layout registers them. */
static const struct exp_desc runtime_descs[] = {
	{C2("memory.stat.anon"), CG, CTP_TYPE_U64, CTP_UNIT_BYTES,
	 CTP_KIND_GAUGE, CTP_RULE_MAX},
	{C2("memory.stat.pgfault"), CG, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C2("memory.events.oom_kill"), CG, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C2("cpu.stat.future_usec"), CG, CTP_TYPE_U64, CTP_UNIT_US,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C1("memory.stat.total_rss"), CG, CTP_TYPE_U64, CTP_UNIT_BYTES,
	 CTP_KIND_GAUGE, CTP_RULE_MAX},
	{C1("memory.stat.pgpgin"), CG, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C1("cpu.stat.wait_sum"), CG, CTP_TYPE_U64, CTP_UNIT_NS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{C1("memory.path"), CTP_SCOPE_THREAD, CTP_TYPE_STRING, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{C1("cpu-cpuacct.path"), CTP_SCOPE_THREAD, CTP_TYPE_STRING,
	 CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
};

static void check_desc(const struct ctp_snap *s, const struct exp_desc *d,
		       bool must)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(s, d->name);

	if (!f) {
		CHECK(!must, "field %s missing", d->name);
		return;
	}
	CHECK(!strcmp(f->plugin, "cgroup") && f->scope == d->scope &&
		      f->type == d->type && f->unit == d->unit &&
		      f->kind == d->kind && f->rule == d->rule && *f->help,
	      "field %s: plugin %s scope %u type %u unit %u kind %u rule %u",
	      d->name, f->plugin, f->scope, f->type, f->unit, f->kind, f->rule);
}

/* ---- Running ------------------------------------------------------------- */

static char tmp[PATH_MAX];
static unsigned seq;
static struct ctp_snap *snaps[16];
static size_t n_snaps;

static int group_setup(void **state)
{
	(void)state;
	return e2e_tmpdir("cgroup-e2e", tmp, sizeof(tmp));
}

static int group_teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_snaps; i++)
		ctp_snap_free(snaps[i]);
	return e2e_rm_rf(tmp);
}

static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * Capture `base`/proc with the cgroup plugin (required). cgroup_root NULL
 * writes "auto"; prefix NULL leaves mount_prefix out; extra is more of the
 * plugin's options (YAML flow map entries) or NULL.
 */
static struct ctp_snap *capture(const char *base, const char *cgroup_root,
				const char *prefix, const char *extra,
				unsigned workers)
{
	char cfg[PATH_MAX], log[PATH_MAX], out[PATH_MAX], proc[PATH_MAX];
	unsigned n = ++seq;

	PATH(cfg, "%s/cfg-%u.yaml", tmp, n);
	PATH(log, "%s/log-%u.txt", tmp, n);
	PATH(out, "%s/snap-%u.ctprof.zst", tmp, n);
	PATH(proc, "%s/proc", base);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fputs("plugin_dirs: [", f);
	put_quoted(f, CTP_TEST_PLUGIN_DIR);
	fprintf(f, "]\nworkers: %u\nroots:\n  proc: ", workers);
	put_quoted(f, proc);
	fputs("\n  sys: ", f);
	put_quoted(f, base);
	fputs("\n  cgroup: ", f);
	put_quoted(f, cgroup_root ? cgroup_root : "auto");
	fputs("\nplugins:\n  cgroup:\n    required: true\n    options: {", f);
	if (prefix) {
		fputs("mount_prefix: ", f);
		put_quoted(f, prefix);
	}
	if (extra)
		fprintf(f, "%s%s", prefix ? ", " : "", extra);
	fputs("}\n", f);
	assert_int_equal(fclose(f), 0);

	struct ctp_snap *s = e2e_capture(cfg, out, log);
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

/* A fixture layout captured in place: explicit v2 root, mount_prefix. */
static struct ctp_snap *capture_fixture(const struct layout *l,
					const char *extra, unsigned workers)
{
	char base[PATH_MAX], root[PATH_MAX];

	PATH(base, "%s/%s", FIX, l->dir);
	if (l->v2_root)
		PATH(root, "%s/%s", base, l->v2_root);
	return capture(base, l->v2_root ? root : NULL, base, extra, workers);
}

/* ---- Checking ------------------------------------------------------------ */

static bool value_eq(const struct ctp_value *v, const struct ev *e)
{
	switch (e->t) {
	case 'u':
		return v->type == CTP_TYPE_U64 && v->u64 == e->u;
	case 'i':
		return v->type == CTP_TYPE_I64 && v->i64 == e->i;
	case 's':
		return v->type == CTP_TYPE_STRING && e2e_bytes_eq(v->str, e->s);
	}
	return false;
}

static void value_str(const struct ctp_value *v, char *buf, size_t len)
{
	switch (v->type) {
	case CTP_VALUE_ABSENT:
		snprintf(buf, len, "absent");
		break;
	case CTP_TYPE_U64:
		snprintf(buf, len, "%" PRIu64, v->u64);
		break;
	case CTP_TYPE_I64:
		snprintf(buf, len, "%" PRId64, v->i64);
		break;
	case CTP_TYPE_STRING:
		snprintf(buf, len, "\"%.*s\"", (int)v->str.len, v->str.ptr);
		break;
	default:
		snprintf(buf, len, "type %u", v->type);
	}
}

/* Every cgroup.* field of `scope` on row `row` against the list. */
static void check_row(const struct ctp_snap *s, uint8_t scope, size_t row,
		      const struct ev *evs, size_t n_ev, const char *what)
{
	size_t matched = 0;

	for (size_t fi = 0; fi < ctp_snap_n_fields(s); fi++) {
		const struct ctp_snap_field *f = &ctp_snap_fields(s)[fi];
		const struct ev *e = NULL;
		char got[128];

		if (f->scope != scope || strncmp(f->name, "cgroup.", 7) != 0)
			continue;
		for (size_t k = 0; k < n_ev && evs[k].field; k++)
			if (!strcmp(evs[k].field, f->name))
				e = &evs[k];
		struct ctp_value v = ctp_snap_get(s, f, row);
		value_str(&v, got, sizeof(got));
		if (!e) {
			CHECK(v.type == CTP_VALUE_ABSENT,
			      "%s: %s should be absent, is %s", what, f->name,
			      got);
			continue;
		}
		matched++;
		CHECK(value_eq(&v, e), "%s: %s is %s", what, f->name, got);
	}
	/* Every expected value names a field of the snapshot. */
	size_t want = 0;
	while (want < n_ev && evs[want].field)
		want++;
	CHECK(matched == want, "%s: %zu of %zu expected fields exist", what,
	      matched, want);
}

static void check_counters(const struct ctp_snap *s, const struct layout *l)
{
	const struct ctp_snap_plugin *p = NULL;

	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		if (!strcmp(ctp_snap_plugins(s)[i].name, "cgroup"))
			p = &ctp_snap_plugins(s)[i];
	assert_non_null(p);
	CHECK(p->status == 1 && p->errors == 0,
	      "%s: plugin status %u errors %" PRIu64, l->name, p->status,
	      p->errors);
	for (size_t c = 0; c < 7; c++) {
		size_t i;
		for (i = 0; i < p->n_summary; i++)
			if (!strcmp(p->summary_name[i], l->counters[c].name))
				break;
		CHECK(i < p->n_summary && p->summary[i] == l->counters[c].value,
		      "%s: counter %s = %" PRIu64 ", expected %" PRIu64,
		      l->name, l->counters[c].name,
		      i < p->n_summary ? p->summary[i] : UINT64_MAX,
		      l->counters[c].value);
	}
}

/* The row of the cgroups table with this path, or -1. */
static long cg_row(const struct ctp_snap_table *ct, const char *path)
{
	for (size_t r = 0; r < ct->rows; r++)
		if (e2e_bytes_eq(ct->path[r], path))
			return (long)r;
	return -1;
}

static void check_layout(const struct ctp_snap *s, const struct layout *l,
			 bool v1)
{
	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	size_t want_rows = 0;

	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		check_desc(s, &descs[i], true);
	for (size_t i = 0; i < sizeof(runtime_descs) / sizeof(runtime_descs[0]);
	     i++)
		check_desc(s, &runtime_descs[i], false);

	/* Cgroup rows: exactly the expected ones, every value. */
	for (size_t i = 0; i < l->n_cgs; i++) {
		const struct exp_cg *e = &l->cgs[i];
		bool is_v1 = !strncmp(e->path, "v1:", 3);
		if (is_v1 && !v1)
			continue;
		want_rows++;
		long r = cg_row(ct, e->path);
		CHECK(r >= 0, "%s: no cgroup row %s", l->name, e->path);
		if (r < 0)
			continue;
		char what[256];
		snprintf(what, sizeof(what), "%s %s", l->name, e->path);
		check_row(s, CTP_SCOPE_CGROUP, (size_t)r, e->v, MAXV, what);
	}
	CHECK(ct->rows == want_rows, "%s: %zu cgroup rows, expected %zu",
	      l->name, ct->rows, want_rows);

	/* Threads: identity and path fields. */
	CHECK(tt->rows == l->n_threads, "%s: %zu thread rows", l->name,
	      tt->rows);
	for (size_t i = 0; i < tt->rows && i < l->n_threads; i++) {
		const struct exp_thread *e = &l->threads[i];
		char what[64];
		snprintf(what, sizeof(what), "%s tid %u", l->name, e->tid);
		CHECK(tt->tid[i] == e->tid && tt->tgid[i] == e->tgid,
		      "%s: row %zu is %" PRIu64, what, i, tt->tid[i]);
		int64_t c = tt->cgroup[i];
		if (!e->v2)
			CHECK(c < 0, "%s: has a cgroup identity", what);
		else
			CHECK(c >= 0 && (size_t)c < ct->rows &&
				      e2e_bytes_eq(ct->path[c], e->v2),
			      "%s: cgroup identity %" PRId64, what, c);
		static const struct ev none[1] = {{0}};
		check_row(s, CTP_SCOPE_THREAD, i, v1 ? e->v : none, v1 ? 8 : 1,
			  what);
	}
}

/* ---- Tests --------------------------------------------------------------- */

static void run_layout(int li, unsigned workers)
{
	const struct layout *l = &layouts[li];
	struct ctp_snap *s = capture_fixture(l, NULL, workers);
	const struct ctp_snap_header *h = ctp_snap_header(s);

	nbad = 0;
	if (l->v2_root)
		CHECK(h->cgroup_root && strstr(h->cgroup_root, l->v2_root),
		      "%s: cgroup root %s", l->name,
		      h->cgroup_root ? h->cgroup_root : "(nil)");
	else
		CHECK(!h->cgroup_root, "%s: a cgroup v2 root %s", l->name,
		      h->cgroup_root);
	check_layout(s, l, true);
	check_counters(s, l);
	assert_int_equal(nbad, 0);
}

static void layout_v2(void **state)
{
	(void)state;
	run_layout(L_V2, 1);
}

static void layout_hybrid(void **state)
{
	(void)state;
	run_layout(L_HYBRID, 1);
}

static void layout_v1(void **state)
{
	(void)state;
	run_layout(L_V1, 1);
}

static void layouts_workers(void **state)
{
	(void)state;
	for (int li = 0; li < 3; li++)
		run_layout(li, 3);
}

/*
 * `auto` everywhere: a copy of the tree whose mountinfo names the copy's
 * own mount points, no mount_prefix. The core finds the v2 mount, the
 * plugin the v1 ones, from the same file.
 */
static void layouts_auto(void **state)
{
	(void)state;
	for (int li = 0; li < 3; li++) {
		const struct layout *l = &layouts[li];
		char src[PATH_MAX], dst[PATH_MAX], mi[PATH_MAX];
		char *text = NULL, *out;
		size_t len = 0, o = 0;

		PATH(src, "%s/%s", FIX, l->dir);
		PATH(dst, "%s/auto-%s", tmp, l->name);
		assert_int_equal(e2e_copy_tree(src, dst), 0);
		PATH(mi, "%s/proc/self/mountinfo", dst);
		assert_int_equal(e2e_read_file(mi, &text, &len), 0);
		/* Field 5, the mount point, of every /sys line. */
		out = malloc(len * 2 + 4096);
		assert_non_null(out);
		for (char *line = text; *line;) {
			char *nl = strchr(line, '\n');
			size_t ll = nl ? (size_t)(nl - line + 1) : strlen(line);
			char *f = line;
			for (int k = 0; k < 4 && f; k++) {
				f = memchr(f, ' ', ll - (size_t)(f - line));
				if (f)
					f++;
			}
			if (f && !strncmp(f, "/sys/", 5)) {
				memcpy(out + o, line, (size_t)(f - line));
				o += (size_t)(f - line);
				o += (size_t)sprintf(out + o, "%s", dst);
				memcpy(out + o, f, ll - (size_t)(f - line));
				o += ll - (size_t)(f - line);
			} else {
				memcpy(out + o, line, ll);
				o += ll;
			}
			line += ll;
		}
		assert_int_equal(e2e_write_file(mi, out, o), 0);
		free(out);
		free(text);

		struct ctp_snap *s = capture(dst, NULL, NULL, NULL, 2);
		const struct ctp_snap_header *h = ctp_snap_header(s);
		char want[PATH_MAX];
		nbad = 0;
		if (l->v2_root) {
			PATH(want, "%s/%s", dst, l->v2_root);
			CHECK(h->cgroup_root && !strcmp(h->cgroup_root, want),
			      "%s: auto found %s", l->name,
			      h->cgroup_root ? h->cgroup_root : "(nil)");
		} else {
			CHECK(!h->cgroup_root, "%s: auto found %s", l->name,
			      h->cgroup_root);
		}
		check_layout(s, l, true);
		check_counters(s, l);
		assert_int_equal(nbad, 0);
	}
}

/* v1: false: no v1 row, no path field value, the v2 side unchanged. */
static void hybrid_v1_off(void **state)
{
	const struct layout *l = &layouts[L_HYBRID];
	struct ctp_snap *s;

	(void)state;
	s = capture_fixture(l, "v1: false", 1);
	nbad = 0;
	check_layout(s, l, false);
	assert_int_equal(nbad, 0);
}

/*
 * Rows added with cgroup_ref go only to the plugins that referenced them:
 * abi-good records the length of every cgroup path it is called with, so
 * with both plugins on the hybrid tree it has a value on each v2 row and
 * none on any v1 row, which the cgroup plugin filled all the same.
 */
static void keyed_rows_only_to_referrers(void **state)
{
	const struct layout *l = &layouts[L_HYBRID];
	char base[PATH_MAX], cfg[PATH_MAX], log[PATH_MAX], out[PATH_MAX];
	char err[512];
	struct ctp_snap *s = NULL;

	(void)state;
	PATH(base, "%s/%s", FIX, l->dir);
	PATH(cfg, "%s/cfg-ref.yaml", tmp);
	PATH(log, "%s/log-ref.txt", tmp);
	PATH(out, "%s/snap-ref.ctprof.zst", tmp);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fputs("plugin_dirs: [", f);
	put_quoted(f, CTP_TEST_PLUGIN_DIR);
	fputs(", ", f);
	put_quoted(f, CTP_ABI_PLUGIN_DIR);
	fprintf(f,
		"]\nroots: {proc: \"%s/proc\", cgroup: \"%s/%s\"}\n"
		"plugins:\n  abi-good: {required: true}\n"
		"  cgroup: {required: true, options: {mount_prefix: \"%s\"}}\n",
		base, base, l->v2_root, base);
	assert_int_equal(fclose(f), 0);
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	int rc = e2e_run(args, NULL, log);
	if (rc != 0) {
		e2e_show_file("ctprof-core stderr", log);
		fail_msg("ctprof-core exited with %d", rc);
	}
	if (ctp_snap_open(out, MAX_SNAP, &s, err, sizeof(err)) < 0)
		fail_msg("cannot read the snapshot: %s", err);
	snaps[n_snaps++] = s;

	const struct ctp_snap_table *ct = ctp_snap_table(s, CTP_SCOPE_CGROUP);
	const struct ctp_snap_field *len =
		ctp_snap_field_find(s, "abi-good.path_len");
	const struct ctp_snap_field *hier =
		ctp_snap_field_find(s, C1("hierarchy"));
	size_t n_v1 = 0;
	nbad = 0;
	assert_non_null(len);
	assert_non_null(hier);
	CHECK(ct->rows == l->n_cgs, "%zu cgroup rows", ct->rows);
	for (size_t r = 0; r < ct->rows; r++) {
		bool v1 = ct->path[r].len > 3 &&
			  !memcmp(ct->path[r].ptr, "v1:", 3);
		struct ctp_value v = ctp_snap_get(s, len, r);
		struct ctp_value h = ctp_snap_get(s, hier, r);
		n_v1 += v1;
		if (v1)
			CHECK(v.type == CTP_VALUE_ABSENT &&
				      h.type == CTP_TYPE_STRING,
			      "%.*s: path_len type %u, hierarchy type %u",
			      (int)ct->path[r].len, ct->path[r].ptr, v.type,
			      h.type);
		else
			CHECK(v.type == CTP_TYPE_U64 &&
				      v.u64 == ct->path[r].len &&
				      h.type == CTP_VALUE_ABSENT,
			      "%.*s: path_len type %u value %" PRIu64,
			      (int)ct->path[r].len, ct->path[r].ptr, v.type,
			      v.u64);
	}
	CHECK(n_v1 == 21, "%zu v1 rows", n_v1);
	assert_int_equal(nbad, 0);
}

/* An unknown option fails the required plugin: no snapshot. */
static void unknown_option(void **state)
{
	char cfg[PATH_MAX], log[PATH_MAX], out[PATH_MAX], proc[PATH_MAX];
	char *err = NULL;

	(void)state;
	PATH(cfg, "%s/cfg-bad.yaml", tmp);
	PATH(log, "%s/log-bad.txt", tmp);
	PATH(out, "%s/snap-bad.ctprof.zst", tmp);
	PATH(proc, "%s/cgroup-v2/proc", FIX);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fprintf(f,
		"plugin_dirs: [\"%s\"]\nroots: {proc: \"%s\"}\n"
		"plugins:\n  cgroup: {required: true, options: {v2: off}}\n",
		CTP_TEST_PLUGIN_DIR, proc);
	assert_int_equal(fclose(f), 0);
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	assert_int_equal(e2e_run(args, NULL, log), 3);
	assert_int_equal(e2e_read_file(log, &err, NULL), 0);
	assert_non_null(strstr(err, "unknown option 'v2'"));
	free(err);
	assert_int_equal(access(out, F_OK), -1);
}

/* The tables describe the fixtures: spot checks read independently. */
static void fixtures_say_so(void **state)
{
	static const struct {
		const char *file, *text;
	} spots[] = {
		{"cgroup-v2/sys/fs/cgroup/system.slice/foo.service/memory.low",
		 "max\n"},
		{"cgroup-v2/sys/fs/cgroup/user.slice/app.scope/memory.min",
		 "max\n"},
		{"cgroup-v2/sys/fs/cgroup/user.slice/app.scope/cpu.max",
		 "max 100000\n"},
		{"cgroup-v2/sys/fs/cgroup/user.slice/app.scope/gc/cgroup.type",
		 "threaded\n"},
		{"cgroup-v2/proc/300/task/301/cgroup",
		 "0::/user.slice/app.scope/gc\n"},
		{"cgroup-hybrid/sys/fs/cgroup/memory/memory.limit_in_bytes",
		 "9223372036854771712\n"},
		{"cgroup-hybrid/sys/fs/cgroup/pids/user.slice/app.scope/"
		 "pids.max",
		 "max\n"},
		{"cgroup-v1/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us",
		 "-1\n"},
	};
	char path[PATH_MAX];
	char *t;

	(void)state;
	for (size_t i = 0; i < sizeof(spots) / sizeof(spots[0]); i++) {
		PATH(path, "%s/%s", FIX, spots[i].file);
		t = NULL;
		assert_int_equal(e2e_read_file(path, &t, NULL), 0);
		assert_string_equal(t, spots[i].text);
		free(t);
	}
	/* Absent because the file is: the v2 root has no cgroup.type, the
	 * threaded gc no memory.current, the hybrid pids root no pids.max. */
	static const char *const missing[] = {
		"cgroup-v2/sys/fs/cgroup/cgroup.type",
		("cgroup-v2/sys/fs/cgroup/user.slice/app.scope/gc/"
		 "memory.current"),
		"cgroup-hybrid/sys/fs/cgroup/pids/pids.max",
		"cgroup-hybrid/sys/fs/cgroup/blkio",
	};
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		PATH(path, "%s/%s", FIX, missing[i]);
		assert_int_equal(access(path, F_OK), -1);
	}
}

/* Write text at base/rel, making its directories. */
static void put_file(const char *base, const char *rel, const char *text)
{
	char path[PATH_MAX], cmd[PATH_MAX + 32];

	PATH(path, "%s/%s", base, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(e2e_write_file(path, text, strlen(text)), 0);
}

static uint64_t counter_of(const struct ctp_snap *s, const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);

	for (size_t i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			return p->summary[i];
	fail_msg("no counter %s", name);
	return 0;
}

/*
 * v1 paths from the hierarchies' `tasks` listings (issue 17), on a tree
 * made here: hierarchy cpu mounted whole; 100's own cgroup file says
 * /file-says but the listings put it in /a, and the listing wins (the file
 * is not read); 101 is listed in /a and /b (moved while listed): its file;
 * 102 is in no listing and has no stat (its age unknown): its file; 200 is
 * in no listing and started long before it: the root, whose own `tasks`
 * is never read (it says 200 is not there); 201 is in no listing and
 * started after it (born into a cgroup since): its file. Then the listing
 * of /b cannot be read (a directory where `tasks` should be): the
 * hierarchy is not listed and every thread reads its file.
 */
static void v1_listings(void **state)
{
	static const struct {
		uint32_t tgid, tid;
		const char *file, *want;
	} th[] = {{100, 100, "/file-says", "/a"},
		  {100, 101, "/a", "/a"},
		  {100, 102, "/b", "/b"},
		  {200, 200, "/", "/"},
		  {200, 201, "/young", "/young"}};
	char base[PATH_MAX], rel[128], text[128];

	(void)state;
	PATH(base, "%s/listings", tmp);
	put_file(base, "proc/self/mountinfo",
		 "31 25 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup "
		 "cgroup rw,cpu\n");
	put_file(base, "proc/self/cgroup", "1:cpu:/\n");
	for (size_t i = 0; i < sizeof(th) / sizeof(th[0]); i++) {
		snprintf(rel, sizeof(rel), "proc/%u/comm", th[i].tgid);
		put_file(base, rel, "app\n");
		snprintf(rel, sizeof(rel), "proc/%u/task/%u/comm", th[i].tgid,
			 th[i].tid);
		put_file(base, rel, "app\n");
		snprintf(rel, sizeof(rel), "proc/%u/task/%u/cgroup", th[i].tgid,
			 th[i].tid);
		snprintf(text, sizeof(text), "1:cpu:%s\n", th[i].file);
		put_file(base, rel, text);
		if (th[i].tid == 102)
			continue;
		/* Started 1 s after boot, or (201) in a century. */
		snprintf(rel, sizeof(rel), "proc/%u/task/%u/stat", th[i].tgid,
			 th[i].tid);
		snprintf(text, sizeof(text),
			 "%u (app) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %s "
			 "0 0\n",
			 th[i].tid, th[i].tid == 201 ? "315360000000" : "100");
		put_file(base, rel, text);
	}
	put_file(base, "sys/fs/cgroup/cpu/tasks", "999\n");
	put_file(base, "sys/fs/cgroup/cpu/a/tasks", "100\n101\n");
	put_file(base, "sys/fs/cgroup/cpu/b/tasks", "101\n");

	for (int round = 0; round < 2; round++) {
		struct ctp_snap *s = capture(base, NULL, base, NULL, 1);
		const struct ctp_snap_table *tt =
			ctp_snap_table(s, CTP_SCOPE_THREAD);
		const struct ctp_snap_table *ct =
			ctp_snap_table(s, CTP_SCOPE_CGROUP);
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s, "cgroup.v1.cpu.path");

		assert_non_null(f);
		assert_int_equal(tt->rows, 5);
		for (size_t i = 0; i < 5; i++) {
			struct ctp_value v = ctp_snap_get(s, f, i);
			const char *want = round == 0 ? th[i].want : th[i].file;

			assert_int_equal(tt->tid[i], th[i].tid);
			if (v.type != CTP_TYPE_STRING ||
			    !e2e_bytes_eq(v.str, want))
				fail_msg("round %d tid %u: path %.*s, expected "
					 "%s",
					 round, th[i].tid,
					 v.type == CTP_TYPE_STRING
						 ? (int)v.str.len
						 : 0,
					 v.type == CTP_TYPE_STRING ? v.str.ptr
								   : "",
					 want);
		}
		/* The rows referenced: exactly the paths threads are in. */
		assert_true(cg_row(ct, "v1:cpu:/a") >= 0);
		assert_true(cg_row(ct, "v1:cpu:/b") >= 0);
		assert_true(cg_row(ct, "v1:cpu:/") >= 0);
		assert_true((cg_row(ct, "v1:cpu:/file-says") >= 0) ==
			    (round == 1));
		assert_int_equal(counter_of(s, "from_listings"),
				 round == 0 ? 2 : 0);
		assert_int_equal(counter_of(s, "from_files"),
				 round == 0 ? 3 : 5);
		assert_int_equal(counter_of(s, "hierarchies_unlisted"),
				 round == 0 ? 0 : 1);
		assert_int_equal(counter_of(s, "ref_errors"), 0);
		/* Unreadable: `tasks` of /b is a directory now. */
		if (round == 0) {
			PATH(rel, "%s/sys/fs/cgroup/cpu/b/tasks", base);
			assert_int_equal(unlink(rel), 0);
			assert_int_equal(mkdir(rel, 0755), 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixtures_say_so),
		cmocka_unit_test(layout_v2),
		cmocka_unit_test(layout_hybrid),
		cmocka_unit_test(layout_v1),
		cmocka_unit_test(layouts_workers),
		cmocka_unit_test(layouts_auto),
		cmocka_unit_test(hybrid_v1_off),
		cmocka_unit_test(keyed_rows_only_to_referrers),
		cmocka_unit_test(unknown_option),
		cmocka_unit_test(v1_listings),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
