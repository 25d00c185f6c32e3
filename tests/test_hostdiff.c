/* SPDX-License-Identifier: MIT */
/*
 * The host diff (core/analysis/hostdiff.c) over two snapshots written by the
 * real writer from hand-built captures and read back with the reader: which
 * keys differ, absent as "unknown" (unset, unregistered, or of another scope),
 * per-key lines for open key sets, text comparison across types, escaping,
 * include/exclude globs, `all`, printing and rendering limits.
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
#include <unistd.h>

#include <cmocka.h>

#include "hostdiff.h"
#include "model.h"
#include "reader.h"
#include "writer.h"

/* One host (or other scope) value of a hand-built capture. */
struct hv {
	const char *name;
	uint8_t scope, type, unit, kind, rule;
	bool set;
	uint64_t u; /* U64, I64 (two's complement), BOOL */
	const char *s;
	int cpus[8]; /* CPUSET: CPUs, ending at -1 */
};

#define STR(n, v)                                                              \
	{                                                                      \
		n, CTP_SCOPE_HOST, CTP_TYPE_STRING, CTP_UNIT_NONE,             \
			CTP_KIND_CATEGORICAL, CTP_RULE_MODE, true, 0, v        \
	}
#define STR_UNSET(n)                                                           \
	{                                                                      \
		n, CTP_SCOPE_HOST, CTP_TYPE_STRING, CTP_UNIT_NONE,             \
			CTP_KIND_CATEGORICAL, CTP_RULE_MODE, false, 0, NULL    \
	}
#define U64(n, v)                                                              \
	{                                                                      \
		n, CTP_SCOPE_HOST, CTP_TYPE_U64, CTP_UNIT_BYTES,               \
			CTP_KIND_GAUGE, CTP_RULE_MAX, true, (v), NULL          \
	}
#define I64(n, v)                                                              \
	{                                                                      \
		n, CTP_SCOPE_HOST, CTP_TYPE_I64, CTP_UNIT_NONE,                \
			CTP_KIND_CATEGORICAL, CTP_RULE_MODE, true,             \
			(uint64_t)(int64_t)(v), NULL                           \
	}
#define BOOLV(n, v)                                                            \
	{                                                                      \
		n, CTP_SCOPE_HOST, CTP_TYPE_BOOL, CTP_UNIT_NONE,               \
			CTP_KIND_CATEGORICAL, CTP_RULE_MODE, true, (v), NULL   \
	}
#define CPUS(n, ...)                                                           \
	{                                                                      \
		n, CTP_SCOPE_HOST, CTP_TYPE_CPUSET, CTP_UNIT_NONE,             \
			CTP_KIND_CPUSET, CTP_RULE_UNION, true, 0, NULL,        \
		{                                                              \
			__VA_ARGS__, -1                                        \
		}                                                              \
	}
#define END                                                                    \
	{                                                                      \
		NULL                                                           \
	}

static const struct hv before_vals[] = {
	STR("host.uname.release", "6.1.0"),
	U64("host.mem.total", 1024),
	STR("host.cpu.vendor", "GenuineIntel"),
	I64("host.sched.rt_runtime_us", 950000),
	STR("host.sched.only_a", "x"),
	I64("host.sched.typed", 100),
	STR("host.cpufreq.governor.cpu0", "performance"),
	STR("host.cpufreq.governor.cpu1", "performance"),
	STR("host.cmdline", "ro quiet"),
	U64("host.self.maxrss", 100),
	BOOLV("host.flag", 1),
	CPUS("host.cpus", 0, 1, 2, 3),
	STR_UNSET("host.absent_both"),
	/* Same name as a host field of the other snapshot, thread scope. */
	{"host.weird",
	 CTP_SCOPE_THREAD,
	 CTP_TYPE_U64,
	 CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER,
	 CTP_RULE_SUM,
	 false,
	 0,
	 NULL,
	 {-1}},
	END,
};

static const struct hv after_vals[] = {
	STR("host.uname.release", "6.6.0"),
	U64("host.mem.total", 1024),
	STR_UNSET("host.cpu.vendor"),
	I64("host.sched.rt_runtime_us", -1),
	I64("host.sched.only_b", 5),
	STR("host.sched.typed", "100"),
	STR("host.cpufreq.governor.cpu0", "powersave"),
	STR("host.cpufreq.governor.cpu1", "performance"),
	STR("host.cmdline", "ro\x01 \\x \xc3\xa9\xff"),
	U64("host.self.maxrss", 200),
	BOOLV("host.flag", 0),
	CPUS("host.cpus", 0, 1, 2, 3, 8),
	STR_UNSET("host.absent_both"),
	U64("host.weird", 1),
	END,
};

static const char *const expect_default[] = {
	"host.cmdline: ro quiet -> ro\\x01 \\\\x \xc3\xa9\\xff",
	"host.cpu.vendor: GenuineIntel -> unknown",
	"host.cpufreq.governor.cpu0: performance -> powersave",
	"host.cpus: 0-3 -> 0-3,8",
	"host.flag: true -> false",
	"host.sched.only_a: x -> unknown",
	"host.sched.only_b: unknown -> 5",
	"host.sched.rt_runtime_us: 950000 -> -1",
	"host.self.maxrss: 100 -> 200",
	"host.uname.release: 6.1.0 -> 6.6.0",
	"host.weird: unknown -> 1",
	NULL,
};

static char tmpdir[PATH_MAX - 64];

static uint64_t blob(struct ctp_capture *cap, const void *s, size_t n)
{
	int64_t id = ctp_blobpool_intern(cap->blobs, s, n);

	if (id < 0)
		abort();
	return (uint64_t)id;
}

/* Write a capture holding `vals` to tmpdir/name and open it. */
static struct ctp_snap *snapshot(const char *name, const struct hv *vals)
{
	struct ctp_capture *cap;
	struct ctp_snap *snap = NULL;
	char path[PATH_MAX], err[512];

	assert_int_equal(ctp_capture_new(1, &cap), 0);
	cap->plugins = calloc(1, sizeof(*cap->plugins));
	assert_non_null(cap->plugins);
	cap->n_plugins = 1;
	cap->plugins[0].name = strdup("host-context");
	cap->plugins[0].status = CTP_PST_LOADED;
	assert_int_equal(ctp_table_add_row(&cap->host), 0);
	for (const struct hv *v = vals; v->name; v++) {
		struct ctp_field_desc d = {.name = v->name,
					   .scope = v->scope,
					   .type = v->type,
					   .unit = v->unit,
					   .kind = v->kind,
					   .rule = v->rule};
		int id = ctp_registry_add(&cap->reg, 0, &d);
		const struct ctp_field *f;
		uint64_t x = v->u;

		assert_true(id >= 0);
		f = ctp_registry_get(&cap->reg, (uint32_t)id);
		if (!v->set)
			continue;
		if (v->type == CTP_TYPE_STRING) {
			x = blob(cap, v->s, strlen(v->s));
		} else if (v->type == CTP_TYPE_CPUSET) {
			uint64_t w[2] = {0, 0};

			for (int i = 0; v->cpus[i] >= 0; i++)
				w[v->cpus[i] / 64] |= 1ull << (v->cpus[i] % 64);
			x = blob(cap, w, w[1] ? 16 : 8);
		}
		assert_int_equal(ctp_table_set(&cap->host, 0,
					       CTP_HOST_IDENT + f->col, x),
				 0);
	}
	cap->proc_root = strdup("/proc");
	cap->sys_root = strdup("/sys");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (ctp_writer_write(cap, path, 3, "test", NULL, NULL, err,
			     sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
	if (ctp_snap_open(path, 1ull << 30, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	unlink(path);
	return snap;
}

struct pair {
	struct ctp_snap *a, *b;
};

static int setup(void **state)
{
	const char *base = getenv("TMPDIR");
	struct pair *p = calloc(1, sizeof(*p));

	snprintf(tmpdir, sizeof(tmpdir), "%s/ctp-hostdiff-XXXXXX",
		 base && *base ? base : "/tmp");
	if (!p || !mkdtemp(tmpdir))
		return -1;
	p->a = snapshot("a.ctprof", before_vals);
	p->b = snapshot("b.ctprof", after_vals);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	ctp_snap_free(p->a);
	ctp_snap_free(p->b);
	free(p);
	rmdir(tmpdir);
	return 0;
}

/* The diff's lines as `key: before -> after`, compared with lines
 * (NULL-terminated). */
static void expect_print(const struct ctp_hostdiff *d, const char *const *lines)
{
	size_t n = 0;

	for (; lines[n]; n++) {
		char got[1024];

		assert_true(n < d->n);
		snprintf(got, sizeof(got), "%s: %s -> %s", d->lines[n].key,
			 d->lines[n].before, d->lines[n].after);
		if (strcmp(got, lines[n]) != 0)
			fail_msg("line %zu: %s\nwant: %s", n, got, lines[n]);
	}
	assert_int_equal(d->n, n);
}

static void test_default(void **state)
{
	struct pair *p = *state;
	struct ctp_hostdiff *d;

	assert_int_equal(ctp_hostdiff_new(p->a, p->b, NULL, &d), 0);
	expect_print(d, expect_default);
	for (size_t i = 0; i < d->n; i++)
		assert_true(d->lines[i].differs);
	/* The absent flags, beside the rendered "unknown". */
	assert_string_equal(d->lines[1].key, "host.cpu.vendor");
	assert_false(d->lines[1].before_absent);
	assert_true(d->lines[1].after_absent);
	assert_string_equal(d->lines[6].key, "host.sched.only_b");
	assert_true(d->lines[6].before_absent);
	assert_false(d->lines[6].after_absent);
	ctp_hostdiff_free(d);

	/* The other way round: before and after swap. */
	assert_int_equal(ctp_hostdiff_new(p->b, p->a, NULL, &d), 0);
	assert_int_equal(d->n, 11);
	assert_string_equal(d->lines[3].key, "host.cpus");
	assert_string_equal(d->lines[3].before, "0-3,8");
	assert_string_equal(d->lines[3].after, "0-3");
	ctp_hostdiff_free(d);
}

static void test_same(void **state)
{
	struct pair *p = *state;
	struct ctp_hostdiff *d;
	static const char *const none[] = {NULL};

	assert_int_equal(ctp_hostdiff_new(p->a, p->a, NULL, &d), 0);
	assert_int_equal(d->n, 0);
	expect_print(d, none);
	ctp_hostdiff_free(d);
}

static void test_globs(void **state)
{
	struct pair *p = *state;
	struct ctp_hostdiff *d;
	static const char *const self[] = {"host.self.*"};
	static const char *const sched[] = {"host.sched.*", "host.cpus"};
	static const char *const only_b[] = {"*.only_b"};
	static const char *const want[] = {
		"host.cpus: 0-3 -> 0-3,8",
		"host.sched.only_a: x -> unknown",
		"host.sched.rt_runtime_us: 950000 -> -1",
		NULL,
	};
	struct ctp_hostdiff_opts o = {.exclude = self, .n_exclude = 1};

	assert_int_equal(ctp_hostdiff_new(p->a, p->b, &o, &d), 0);
	assert_int_equal(d->n, 10);
	for (size_t i = 0; i < d->n; i++)
		assert_null(strstr(d->lines[i].key, "host.self."));
	ctp_hostdiff_free(d);

	o = (struct ctp_hostdiff_opts){.include = sched,
				       .n_include = 2,
				       .exclude = only_b,
				       .n_exclude = 1};
	assert_int_equal(ctp_hostdiff_new(p->a, p->b, &o, &d), 0);
	expect_print(d, want);
	ctp_hostdiff_free(d);
}

static void test_all(void **state)
{
	struct pair *p = *state;
	struct ctp_hostdiff *d;
	struct ctp_hostdiff_opts o = {.all = true};
	static const struct {
		const char *key, *before, *after;
	} same[] = {
		{"host.absent_both", "unknown", "unknown"},
		{"host.cpufreq.governor.cpu1", "performance", "performance"},
		{"host.mem.total", "1024", "1024"},
		/* i64 100 and the string "100" read the same. */
		{"host.sched.typed", "100", "100"},
	};
	size_t found = 0;

	assert_int_equal(ctp_hostdiff_new(p->a, p->b, &o, &d), 0);
	assert_int_equal(d->n, 15);
	for (size_t i = 1; i < d->n; i++)
		assert_true(strcmp(d->lines[i - 1].key, d->lines[i].key) < 0);
	for (size_t i = 0; i < d->n; i++) {
		for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++) {
			if (strcmp(d->lines[i].key, same[k].key))
				continue;
			assert_false(d->lines[i].differs);
			assert_string_equal(d->lines[i].before, same[k].before);
			assert_string_equal(d->lines[i].after, same[k].after);
			found++;
		}
	}
	assert_int_equal(found, 4);
	ctp_hostdiff_free(d);
}

static void test_render(void **state)
{
	struct ctp_value v = {.type = CTP_TYPE_I64, .i64 = INT64_MIN};
	static const uint32_t r[] = {0, 0, 2, 5, 7, 7};
	char buf[64], tiny[4], longs[600];

	(void)state;
	assert_int_equal(ctp_hostdiff_render(&v, buf, sizeof(buf)), 20);
	assert_string_equal(buf, "-9223372036854775808");
	v = (struct ctp_value){.type = CTP_TYPE_U64, .u64 = UINT64_MAX};
	ctp_hostdiff_render(&v, buf, sizeof(buf));
	assert_string_equal(buf, "18446744073709551615");
	/* Too small: cut, terminated, and the needed length returned. */
	assert_int_equal(ctp_hostdiff_render(&v, tiny, sizeof(tiny)), 20);
	assert_string_equal(tiny, "184");
	assert_int_equal(ctp_hostdiff_render(&v, NULL, 0), 20);
	v = (struct ctp_value){.type = CTP_VALUE_ABSENT};
	ctp_hostdiff_render(&v, buf, sizeof(buf));
	assert_string_equal(buf, CTP_HOSTDIFF_UNKNOWN);
	v = (struct ctp_value){.type = CTP_TYPE_CHAR, .c = '\n'};
	ctp_hostdiff_render(&v, buf, sizeof(buf));
	assert_string_equal(buf, "\\x0a");
	v = (struct ctp_value){.type = CTP_TYPE_CPUSET};
	v.cpuset.r = r;
	v.cpuset.n = 3;
	ctp_hostdiff_render(&v, buf, sizeof(buf));
	assert_string_equal(buf, "0,2-5,7");
	v.cpuset.n = 0;
	ctp_hostdiff_render(&v, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* Long strings are never cut. */
	memset(longs, 'a', sizeof(longs));
	v = (struct ctp_value){.type = CTP_TYPE_STRING};
	v.str.ptr = longs;
	v.str.len = sizeof(longs);
	assert_int_equal(ctp_hostdiff_render(&v, NULL, 0), sizeof(longs));
}

/* A value longer than the renderer's first buffer survives whole. */
static void test_long_value(void **state)
{
	static char cmd[700];
	const struct hv a[] = {STR("host.cmdline", "short"), END};
	const struct hv b[] = {STR("host.cmdline", cmd), END};
	struct ctp_snap *sa, *sb;
	struct ctp_hostdiff *d;

	(void)state;
	memset(cmd, 'z', sizeof(cmd) - 1);
	sa = snapshot("la.ctprof", a);
	sb = snapshot("lb.ctprof", b);
	assert_int_equal(ctp_hostdiff_new(sa, sb, NULL, &d), 0);
	assert_int_equal(d->n, 1);
	assert_string_equal(d->lines[0].after, cmd);
	ctp_hostdiff_free(d);
	ctp_snap_free(sa);
	ctp_snap_free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_globs),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_long_value),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
