/* SPDX-License-Identifier: MIT */
/* core/config/config.c: defaults, the full schema, every error class with its
 * exact position, host rules and the effective-config printer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

#define FIX CTP_TEST_FIXTURES "/config/"

/* Stands for "*ret left untouched": loading must never write it on error. */
static char sentinel_storage;
#define SENTINEL ((struct ctp_config *)(void *)&sentinel_storage)

static struct ctp_config *load_ok(const char *yaml)
{
	struct ctp_config *cfg = NULL;
	char err[1024] = "";
	int r;

	r = ctp_config_load_buf("t.yaml", yaml, strlen(yaml), &cfg, err,
				sizeof(err));
	if (r < 0)
		fail_msg("load failed (%d): %s", r, err);
	assert_non_null(cfg);
	return cfg;
}

/* Loading `yaml` fails with -EINVAL and a one-line message that starts with
 * "t.yaml:<where>: " and contains `what`. */
static void expect_error(const char *yaml, const char *where, const char *what)
{
	struct ctp_config *cfg = SENTINEL;
	char err[1024] = "", prefix[64];
	int r;

	r = ctp_config_load_buf("t.yaml", yaml, strlen(yaml), &cfg, err,
				sizeof(err));
	if (r != -EINVAL)
		fail_msg("expected -EINVAL for <<%s>>, got %d (%s)", yaml, r,
			 err);
	assert_ptr_equal(cfg, SENTINEL);
	snprintf(prefix, sizeof(prefix), "t.yaml:%s: ", where);
	if (strncmp(err, prefix, strlen(prefix)))
		fail_msg("expected message at %s, got: %s", where, err);
	if (!strstr(err, what))
		fail_msg("expected '%s' in: %s", what, err);
	if (strchr(err, '\n'))
		fail_msg("message is not one line: %s", err);
}

static const struct ctp_kv *opt(const struct ctp_plugin_cfg *pc,
				const char *key)
{
	for (size_t i = 0; i < pc->n_opts; i++)
		if (!strcmp(pc->opts[i].key, key))
			return &pc->opts[i];
	return NULL;
}

static void assert_defaults(const struct ctp_config *cfg)
{
	assert_int_equal(cfg->n_plugin_dirs, 0);
	assert_string_equal(cfg->output, "ctprof-%Y%m%dT%H%M%S.ctprof.zst");
	assert_int_equal(cfg->compression_level, 3);
	assert_int_equal(cfg->workers, 1);
	assert_string_equal(cfg->proc_root, "/proc");
	assert_string_equal(cfg->sys_root, "/sys");
	assert_string_equal(cfg->cgroup_root, "auto");
	assert_int_equal(cfg->record_hostname, 0);
	assert_int_equal(cfg->allow_insecure_plugins, 0);
	assert_true(cfg->max_decompressed_bytes == UINT64_C(512) << 20);
	assert_int_equal(cfg->n_plugins, 0);
	assert_int_equal(cfg->n_rules, 0);
}

/* ---- Defaults ------------------------------------------------------------ */

static void test_defaults(void **state)
{
	static const char *const empties[] = {
		"", "# only a comment\n", "---\n", "---\n...\n", "~\n",
	};
	struct ctp_config *cfg = NULL;
	char err[256];

	(void)state;
	assert_int_equal(ctp_config_defaults(&cfg), 0);
	assert_null(cfg->path);
	assert_defaults(cfg);
	ctp_config_free(cfg);

	for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		cfg = load_ok(empties[i]);
		assert_string_equal(cfg->path, "t.yaml");
		assert_defaults(cfg);
		ctp_config_free(cfg);
	}

	/* No buffer at all is an empty file too. */
	cfg = NULL;
	assert_int_equal(
		ctp_config_load_buf(NULL, NULL, 0, &cfg, err, sizeof(err)), 0);
	assert_defaults(cfg);
	ctp_config_free(cfg);

	cfg = NULL;
	assert_int_equal(
		ctp_config_load(FIX "empty.yaml", &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->path, FIX "empty.yaml");
	assert_defaults(cfg);
	ctp_config_free(cfg);

	ctp_config_free(NULL);
}

/* The shipped config/collectors.yaml loads and runs procfs-stat. */
static void test_shipped_config(void **state)
{
	const struct ctp_plugin_cfg *pc;
	struct ctp_config *cfg = NULL;
	char err[512] = "";
	int r;

	(void)state;
	r = ctp_config_load(CTP_TEST_SOURCE_DIR "/config/collectors.yaml", &cfg,
			    err, sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
	assert_string_equal(cfg->output, "ctprof-%Y%m%dT%H%M%S.ctprof.zst");
	assert_int_equal(cfg->workers, 1);
	assert_true(cfg->max_decompressed_bytes == UINT64_C(512) << 20);
	pc = ctp_config_plugin(cfg, "procfs-stat");
	assert_non_null(pc);
	assert_int_equal(pc->enabled, 1);
	assert_int_equal(pc->required, 0);
	/* The shipped config names only plugins this tree builds, so a fresh
	 * install never reports a missing one. */
	assert_true(cfg->n_plugins >= 1);
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		char so[4096];
		snprintf(so, sizeof(so), "%s/%s.so", CTP_TEST_PLUGIN_DIR,
			 cfg->plugins[i].name);
		if (access(so, F_OK) != 0)
			fail_msg("default config lists '%s' but %s does not "
				 "exist",
				 cfg->plugins[i].name, so);
	}
	assert_int_equal(cfg->n_rules, 0);
	ctp_config_free(cfg);
}

/* ---- A full valid file --------------------------------------------------- */

static void test_full_file(void **state)
{
	const struct ctp_plugin_cfg *pc;
	const struct ctp_host_rule *rule;
	const struct ctp_kv *kv;
	struct ctp_config *cfg = NULL;
	char err[512] = "";
	int r;

	(void)state;
	r = ctp_config_load(FIX "full.yaml", &cfg, err, sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
	assert_string_equal(cfg->path, FIX "full.yaml");
	assert_int_equal(cfg->n_plugin_dirs, 2);
	assert_string_equal(cfg->plugin_dirs[0], "/opt/ctprof/plugins");
	assert_string_equal(cfg->plugin_dirs[1], "/usr/lib/ctprof/plugins");
	assert_string_equal(cfg->output, "/var/tmp/ctprof-%Y%m%d.ctprof.zst");
	assert_int_equal(cfg->compression_level, 9);
	assert_int_equal(cfg->workers, 8);
	assert_int_equal(cfg->record_hostname, 1);
	assert_int_equal(cfg->allow_insecure_plugins, 0);
	assert_true(cfg->max_decompressed_bytes == UINT64_C(512) << 20);
	assert_string_equal(cfg->proc_root, "/srv/fixture/proc");
	assert_string_equal(cfg->sys_root, "/srv/fixture/sys");
	assert_string_equal(cfg->cgroup_root, "/srv/fixture/cgroup");

	/* Declaration order is kept. */
	assert_int_equal(cfg->n_plugins, 2);
	assert_string_equal(cfg->plugins[0].name, "procfs-stat");
	assert_string_equal(cfg->plugins[1].name, "jemalloc-probe");
	pc = &cfg->plugins[0];
	assert_int_equal(pc->enabled, 1);
	assert_int_equal(pc->required, 1);
	assert_int_equal(pc->line, 16);
	assert_int_equal(pc->col, 3);
	assert_int_equal(pc->n_opts, 2);
	kv = opt(pc, "fields");
	assert_non_null(kv);
	assert_string_equal(kv->value, "utime,stime,nice");
	assert_int_equal(kv->line, 20);
	assert_int_equal(kv->col, 15);
	kv = opt(pc, "period_ms");
	assert_non_null(kv);
	assert_string_equal(kv->value, "250");
	assert_int_equal(kv->line, 21);
	assert_int_equal(kv->col, 18);
	pc = &cfg->plugins[1];
	assert_int_equal(pc->enabled, 0);
	assert_int_equal(pc->required, 0);
	kv = opt(pc, "symbol");
	assert_non_null(kv);
	assert_string_equal(kv->value, "je_mallctl");

	assert_int_equal(cfg->n_rules, 2);
	rule = &cfg->rules[0];
	assert_int_equal(rule->line, 26);
	assert_int_equal(rule->col, 5);
	assert_string_equal(rule->hostname_glob, "db-*");
	assert_string_equal(rule->release_glob, "6.*");
	assert_null(rule->path_exists);
	assert_int_equal(rule->n_plugins, 1);
	assert_string_equal(rule->plugins[0].name, "jemalloc-probe");
	assert_int_equal(rule->plugins[0].enabled, 1);
	assert_int_equal(rule->plugins[0].required, -1);
	assert_int_equal(rule->plugins[0].n_opts, 1);
	assert_string_equal(rule->plugins[0].opts[0].key, "arenas");
	assert_string_equal(rule->plugins[0].opts[0].value, "all");
	rule = &cfg->rules[1];
	assert_null(rule->hostname_glob);
	assert_null(rule->release_glob);
	assert_string_equal(rule->path_exists, "/sys/kernel/sched_ext");
	assert_int_equal(rule->plugins[0].enabled, -1);
	assert_int_equal(rule->plugins[0].required, 0);
	ctp_config_free(cfg);
}

static void test_scalar_forms(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} sizes[] = {
		{"1", 1},
		{"4294967296", UINT64_C(4294967296)},
		{"64K", UINT64_C(64) << 10},
		{"64KiB", UINT64_C(64) << 10},
		{"3M", UINT64_C(3) << 20},
		{"3MiB", UINT64_C(3) << 20},
		{"2G", UINT64_C(2) << 30},
		{"16GiB", UINT64_C(16) << 30},
		{"\"8G\"", UINT64_C(8) << 30},
		{"18446744073709551615", UINT64_MAX},
	};
	static const struct {
		const char *text;
		int v;
	} bools[] = {
		{"true", 1}, {"false", 0}, {"yes", 1},	{"no", 0},
		{"on", 1},   {"off", 0},   {"TRUE", 1}, {"Off", 0},
	};
	struct ctp_config *cfg;
	char buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(buf, sizeof(buf), "max_decompressed_bytes: %s\n",
			 sizes[i].text);
		cfg = load_ok(buf);
		if (cfg->max_decompressed_bytes != sizes[i].bytes)
			fail_msg("%s gave %llu", sizes[i].text,
				 (unsigned long long)
					 cfg->max_decompressed_bytes);
		ctp_config_free(cfg);
	}
	for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		snprintf(buf, sizeof(buf), "record_hostname: %s\n",
			 bools[i].text);
		cfg = load_ok(buf);
		assert_int_equal(cfg->record_hostname, bools[i].v);
		ctp_config_free(cfg);
	}
	cfg = load_ok("workers: 256\ncompression_level: 19\n");
	assert_int_equal(cfg->split_threads, 512); /* the default */
	assert_int_equal(cfg->workers, 256);
	assert_int_equal(cfg->compression_level, 19);
	ctp_config_free(cfg);
	cfg = load_ok("split_threads: 0\n");
	assert_int_equal(cfg->split_threads, 0);
	ctp_config_free(cfg);
	cfg = load_ok("workers: 1\ncompression_level: 1\noutput: '-'\n");
	assert_int_equal(cfg->workers, 1);
	assert_int_equal(cfg->compression_level, 1);
	assert_string_equal(cfg->output, "-");
	ctp_config_free(cfg);

	/* Empty sections read as empty; an empty option value is "". */
	cfg = load_ok("plugin_dirs:\nroots:\nhosts:\nplugins:\n  a:\n"
		      "  b: {options: {x: , y: [], z: ''}}\n");
	assert_int_equal(cfg->n_plugin_dirs, 0);
	assert_int_equal(cfg->n_plugins, 2);
	assert_int_equal(cfg->plugins[0].enabled, 1);
	assert_int_equal(cfg->plugins[0].n_opts, 0);
	assert_int_equal(cfg->plugins[1].n_opts, 3);
	assert_string_equal(opt(&cfg->plugins[1], "x")->value, "");
	assert_string_equal(opt(&cfg->plugins[1], "y")->value, "");
	assert_string_equal(opt(&cfg->plugins[1], "z")->value, "");
	ctp_config_free(cfg);
}

/* ---- Errors -------------------------------------------------------------- */

static void test_error_syntax(void **state)
{
	struct ctp_config *cfg = SENTINEL;
	char err[512] = "";

	(void)state;
	expect_error("workers: [1, 2\n", "2:1", "YAML syntax error");
	expect_error("a: b: c\n", "1:5", "YAML syntax error");
	expect_error("plugins:\n  x: 'open\n", "3:1", "YAML syntax error");
	expect_error("workers: 1\n\tbad: 2\n", "2:1", "YAML syntax error");
	expect_error("output: \"\xff\"\n", "1:10",
		     "invalid input: invalid leading UTF-8 octet");

	assert_int_equal(ctp_config_load(FIX "syntax-error.yaml", &cfg, err,
					 sizeof(err)),
			 -EINVAL);
	assert_ptr_equal(cfg, SENTINEL);
	assert_string_equal(err, FIX "syntax-error.yaml:5:4: YAML syntax "
				     "error: did not find expected key (while "
				     "parsing a block mapping at line 3, "
				     "column 3)");
}

static void test_error_yaml_features(void **state)
{
	(void)state;
	expect_error("workers: &w 2\n", "1:10", "YAML anchors ('&w')");
	expect_error("a: &x {}\nb: *x\n", "1:4", "YAML anchors ('&x')");
	expect_error("roots:\n  proc: *p\n", "2:9", "YAML aliases ('*p')");
	expect_error("workers: !!int 2\n", "1:10", "YAML tags");
	expect_error("workers: 1\n---\nworkers: 2\n", "2:1",
		     "a second YAML document");
	expect_error("- workers: 1\n", "1:1",
		     "the top level must be a mapping of settings, got a "
		     "sequence");
	expect_error("workers\n", "1:1",
		     "the top level must be a mapping of settings, got "
		     "'workers'");
	expect_error("? [a]\n: b\n", "1:3",
		     "mapping keys must be plain names, got a sequence");
	expect_error("output: \"a\\0b\"\n", "1:9",
		     "value contains a NUL character");

	/* Deep nesting stops early instead of recursing on. */
	{
		char deep[4096];
		size_t o = 0;

		o += (size_t)snprintf(deep, sizeof(deep),
				      "plugins: {a: "
				      "{options: {x: ");
		for (int i = 0; i < 1000; i++)
			deep[o++] = '[';
		deep[o] = '\0';
		expect_error(deep, "1:57", "nested more than 32 levels deep");
	}
}

static void test_error_unknown_keys(void **state)
{
	(void)state;
	expect_error("workers: 1\nworkes: 2\n", "2:1",
		     "unknown key 'workes' in top level (expected one of: "
		     "plugin_dirs, output, compression_level, workers, "
		     "split_threads, record_hostname, allow_insecure_plugins, "
		     "max_decompressed_bytes, roots, plugins, hosts, record, "
		     "service); did "
		     "you mean 'workers'?");
	expect_error("roots:\n  proc: /proc\n  cgroups: auto\n", "3:3",
		     "unknown key 'cgroups' in 'roots' (expected one of: "
		     "proc, sys, cgroup); did you mean 'cgroup'?");
	expect_error("plugins:\n  procfs-stat:\n    enable: false\n", "3:5",
		     "unknown key 'enable' in 'plugins.procfs-stat' (expected "
		     "one of: enabled, required, options)");
	expect_error("plugins: {a: {}}\nhosts:\n  - match: {hostname: x}\n"
		     "    plugin: {a: {}}\n",
		     "4:5", "unknown key 'plugin' in 'hosts[0]'");
	expect_error("plugins: {a: {}}\nhosts:\n  - match: {host: x}\n", "3:13",
		     "unknown key 'host' in 'hosts[0].match'");
	expect_error("plugins: {a: {}}\nhosts:\n  - match: {hostname: x}\n"
		     "  - match: {kernel: '6.*'}\n    plugins:\n"
		     "      a: {enabeld: true}\n",
		     "6:11", "unknown key 'enabeld' in 'hosts[1].plugins.a'");
	/* No suggestion when nothing is close. */
	expect_error("zzzzzz: 1\n", "1:1",
		     "unknown key 'zzzzzz' in top level (expected one of: "
		     "plugin_dirs, output, compression_level, workers, "
		     "split_threads, record_hostname, allow_insecure_plugins, "
		     "max_decompressed_bytes, roots, plugins, hosts, record, "
		     "service)");
}

/* `record:` at the top level and in host rules: the rules matching the
 * host lay their settings over the top level's; check-config prints the
 * effective ones; a bad duration names its place. */
/* `service:`: what the services do with a capture that misbehaves. */
static void test_service(void **state)
{
	(void)state;
	struct ctp_config *cfg = load_ok("plugins: {a: {}}\n");
	assert_int_equal(cfg->service.deadline_ns, 30000000000ull);
	assert_int_equal(cfg->service.memory_limit, 2ull << 30);
	assert_int_equal(cfg->service.quarantine_after, 1);
	assert_int_equal(cfg->service.series_ttl_ns, 600000000000ull);
	ctp_config_free(cfg);
	cfg = load_ok("service: {capture_deadline: 2500ms, memory_limit: "
		      "512MiB, quarantine_after: 3, series_ttl: 1h}\n"
		      "plugins: {a: {}}\n");
	assert_int_equal(cfg->service.series_ttl_ns, 3600000000000ull);
	assert_int_equal(cfg->service.deadline_ns, 2500000000ull);
	assert_int_equal(cfg->service.memory_limit, 512ull << 20);
	assert_int_equal(cfg->service.quarantine_after, 3);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(ctp_config_print(cfg, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "service:\n  capture_deadline: 2500ms\n"
				    "  memory_limit: 536870912\n"
				    "  quarantine_after: 3\n"
				    "  series_ttl: 3600000ms\n"));
	free(buf);
	ctp_config_free(cfg);
	expect_error("service: {capture_deadline: 50ms}\n", "1:29",
		     "'service.capture_deadline' must be a duration from "
		     "100ms to 1h");
	expect_error("service: {memory_limit: 1MiB}\n", "1:25",
		     "'service.memory_limit' must be a byte count of at "
		     "least 64MiB");
	expect_error("service: {quarantine_after: 0}\n", "1:29",
		     "service.quarantine_after");
	expect_error("service: {series_ttl: 500ms}\n", "1:23",
		     "'service.series_ttl' must be a duration from 1s to 7d");
	expect_error("service: {deadline: 1s}\n", "1:11",
		     "unknown key 'deadline' in 'service'");
	expect_error("service: [1]\n", "1:10", "'service' must be a mapping");
}

static void test_record(void **state)
{
	(void)state;
	struct ctp_config *cfg = load_ok(
		"record: {interval: 10s, keep: 100, dir: /var/lib/ctp}\n"
		"plugins: {a: {}}\n"
		"hosts:\n"
		"  - match: {hostname: 'db*'}\n"
		"    record: {interval: 1m, max_bytes: 1GiB}\n"
		"  - match: {hostname: 'web*'}\n"
		"    record: {dir: /srv/ctp}\n");
	assert_int_equal(cfg->record.interval_ns, 10000000000ull);
	assert_int_equal(cfg->record.keep, 100);
	assert_string_equal(cfg->record.dir_ref, "/var/lib/ctp");
	struct ctp_host_facts db = {"db-7", "6.1.0"}, web = {"web1", "6.1.0"};
	assert_int_equal(ctp_config_apply_hosts(cfg, &db), 0);
	assert_int_equal(cfg->record.interval_ns, 60000000000ull);
	assert_int_equal(cfg->record.max_bytes, 1ull << 30);
	assert_int_equal(cfg->record.keep, 100);
	assert_string_equal(cfg->record.dir_ref, "/var/lib/ctp");
	assert_int_equal(ctp_config_apply_hosts(cfg, &web), 0);
	assert_int_equal(cfg->record.interval_ns, 10000000000ull);
	assert_int_equal(cfg->record.max_bytes, 0);
	assert_string_equal(cfg->record.dir_ref, "/srv/ctp");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(ctp_config_print(cfg, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "record:\n  interval: 10000ms\n  keep: "
				    "100\n  dir: \"/srv/ctp\"\n"));
	free(buf);
	ctp_config_free(cfg);
	expect_error("record: {interval: 10x}\n", "1:20",
		     "'record.interval' must be a duration from 100ms to 1d");
	expect_error("record: {interval: 50ms}\n", "1:20",
		     "'record.interval' must be a duration");
	expect_error("plugins: {a: {}}\nhosts:\n  - match: {hostname: x}\n"
		     "    record: {keep: 0}\n",
		     "4:20",
		     "'hosts[0].record.keep' must be an integer in 1..");
	expect_error("record: {kep: 3}\n", "1:10",
		     "unknown key 'kep' in 'record'");
	uint64_t ns;
	assert_int_equal(ctp_config_parse_duration("250ms", &ns), 0);
	assert_int_equal(ns, 250000000ull);
	assert_int_equal(ctp_config_parse_duration("2", &ns), 0);
	assert_int_equal(ns, 2000000000ull);
	assert_int_equal(ctp_config_parse_duration("0s", &ns), -EDOM);
	assert_int_equal(ctp_config_parse_duration("s", &ns), -EINVAL);
	assert_int_equal(
		ctp_config_parse_duration("99999999999999999999s", &ns),
		-ERANGE);
	assert_int_equal(ctp_config_parse_duration("300000000000d", &ns),
			 -ERANGE);
}

static void test_error_types(void **state)
{
	(void)state;
	expect_error("workers: [1]\n", "1:10",
		     "'workers' must be an integer in 1..256, got a sequence");
	expect_error("output: {a: b}\n", "1:9",
		     "'output' must be a non-empty string, got a mapping");
	expect_error("output: ''\n", "1:9",
		     "'output' must be a non-empty string, got ''");
	expect_error("plugin_dirs: /usr/lib\n", "1:14",
		     "'plugin_dirs' must be a sequence of directories, got "
		     "'/usr/lib'");
	expect_error("plugin_dirs: [/a, [b]]\n", "1:19",
		     "'plugin_dirs[1]' must be a non-empty string, got a "
		     "sequence");
	expect_error("plugin_dirs: [lib/plugins]\n", "1:15",
		     "'plugin_dirs[0]' must be an absolute path, got "
		     "'lib/plugins'");
	expect_error("roots: /proc\n", "1:8",
		     "'roots' must be a mapping (proc, sys, cgroup), got "
		     "'/proc'");
	expect_error("roots:\n  sys: [a]\n", "2:8",
		     "'roots.sys' must be a non-empty string, got a sequence");
	expect_error("plugins: [procfs-stat]\n", "1:10",
		     "'plugins' must be a mapping of plugin names, got a "
		     "sequence");
	expect_error("plugins:\n  procfs-stat: true\n", "2:16",
		     "'plugins.procfs-stat' must be a mapping (enabled, "
		     "required, options), got 'true'");
	expect_error("plugins:\n  procfs-stat:\n    options: fast\n", "3:14",
		     "'plugins.procfs-stat.options' must be a mapping of "
		     "option names to values, got 'fast'");
	expect_error("plugins:\n  Procfs.Stat: {}\n", "2:3",
		     "plugin name 'Procfs.Stat' is not valid: use only a-z, "
		     "0-9, '_' and '-'");
	expect_error("hosts: {match: x}\n", "1:8",
		     "'hosts' must be a sequence of host rules, got a mapping");
	expect_error("hosts: [db-1]\n", "1:9",
		     "'hosts[0]' must be a mapping with 'match' and "
		     "'plugins', got 'db-1'");
	expect_error("hosts:\n  - match: db-*\n", "2:12",
		     "'hosts[0].match' must be a mapping of conditions");
	expect_error("hosts:\n  - match: {hostname: x}\n    plugins: [a]\n",
		     "3:14",
		     "'hosts[0].plugins' must be a mapping of plugin names, "
		     "got a sequence");
	expect_error("hosts:\n  - match: {kernel: ''}\n", "2:21",
		     "'hosts[0].match.kernel' must be a non-empty string");
}

static void test_error_ranges(void **state)
{
	(void)state;
	expect_error("workers: many\n", "1:10",
		     "'workers' must be an integer in 1..256, got 'many'");
	expect_error("workers: 0\n", "1:10",
		     "'workers' must be an integer in 1..256, got '0'");
	expect_error("workers: 257\n", "1:10",
		     "'workers' must be an integer in 1..256, got '257'");
	expect_error("workers: -1\n", "1:10",
		     "'workers' must be an integer in 1..256, got '-1'");
	expect_error("workers: 2.5\n", "1:10",
		     "'workers' must be an integer in 1..256, got '2.5'");
	expect_error("workers: 99999999999999999999999\n", "1:10",
		     "'workers' must be an integer in 1..256");
	expect_error("split_threads: 4194305\n", "1:16",
		     "'split_threads' must be an integer in 0..4194304, got "
		     "'4194305'");
	expect_error("split_threads: -1\n", "1:16",
		     "'split_threads' must be an integer in 0..4194304, got "
		     "'-1'");
	expect_error("compression_level: 20\n", "1:20",
		     "'compression_level' must be an integer in 1..19, got "
		     "'20'");
	expect_error("compression_level: 0\n", "1:20",
		     "'compression_level' must be an integer in 1..19, got "
		     "'0'");
	expect_error("max_decompressed_bytes: 0\n", "1:25",
		     "'max_decompressed_bytes' must be at least 1, got '0'");
	expect_error("max_decompressed_bytes: 4T\n", "1:25",
		     "'max_decompressed_bytes' must be a byte count below 2^64 "
		     "(an integer, optionally followed by K, M, G, KiB, MiB or "
		     "GiB), got '4T'");
	expect_error("max_decompressed_bytes: 17179869184GiB\n", "1:25",
		     "'max_decompressed_bytes' must be a byte count below "
		     "2^64");
	expect_error("max_decompressed_bytes: 18446744073709551616\n", "1:25",
		     "'max_decompressed_bytes' must be a byte count below "
		     "2^64");
	expect_error("max_decompressed_bytes: G\n", "1:25",
		     "'max_decompressed_bytes' must be a byte count");
}

static void test_error_duplicates(void **state)
{
	(void)state;
	expect_error("workers: 1\noutput: x\nworkers: 2\n", "3:1",
		     "duplicate key 'workers' (first given at line 1, "
		     "column 1)");
	expect_error("roots: {proc: /a, proc: /b}\n", "1:19",
		     "duplicate key 'proc' (first given at line 1, column 9)");
	expect_error("plugins:\n  a: {}\n  b: {}\n  a: {enabled: false}\n",
		     "4:3",
		     "duplicate key 'a' (first given at line 2, "
		     "column 3)");
	expect_error("plugins:\n  a:\n    options: {k: 1, j: 2, k: 3}\n",
		     "3:27",
		     "duplicate key 'k' (first given at line 3, "
		     "column 15)");
	/* The first repeat in file order is the one reported. */
	expect_error("b: 1\na: 1\na: 2\nb: 2\n", "3:1",
		     "duplicate key 'a' (first given at line 2, column 1)");
}

static void test_error_bad_bool(void **state)
{
	(void)state;
	expect_error("record_hostname: maybe\n", "1:18",
		     "'record_hostname' must be a boolean (true/false, "
		     "yes/no, on/off), got 'maybe'");
	expect_error("allow_insecure_plugins: 1\n", "1:25",
		     "'allow_insecure_plugins' must be a boolean");
	/* y/n are YAML 1.1 booleans too, but too easy to write by accident. */
	expect_error("plugins:\n  a: {required: y}\n", "2:17",
		     "'plugins.a.required' must be a boolean (true/false, "
		     "yes/no, on/off), got 'y'");
	expect_error("plugins:\n  a:\n    enabled: [true]\n", "3:14",
		     "'plugins.a.enabled' must be a boolean (true/false, "
		     "yes/no, on/off), got a sequence");
}

static void test_error_options(void **state)
{
	(void)state;
	expect_error("plugins:\n  a:\n    options:\n      x: {y: 1}\n", "4:10",
		     "option 'x' in 'plugins.a.options' must be a scalar or a "
		     "sequence of scalars, got a mapping (nested mappings are "
		     "not supported)");
	expect_error("plugins:\n  a:\n    options:\n      x: [1, {y: 2}]\n",
		     "4:14",
		     "option 'x' in 'plugins.a.options' must be a scalar or a "
		     "sequence of scalars, got a mapping inside the sequence");
	expect_error("plugins:\n  a:\n    options:\n      x: [1, [2]]\n",
		     "4:14", "got a sequence inside the sequence");
	expect_error("plugins:\n  a:\n    options:\n      x: [a, 'b,c']\n",
		     "4:14",
		     "items of option 'x' in 'plugins.a.options' are joined "
		     "with ',', so they cannot contain one: got 'b,c'");
	expect_error("plugins:\n  a:\n    options: {'': 1}\n", "3:15",
		     "empty option name in 'plugins.a.options'");
	expect_error("plugins: {a: {}}\nhosts:\n  - match: {hostname: x}\n"
		     "    plugins:\n      a: {options: {deep: {er: 1}}}\n",
		     "5:27",
		     "option 'deep' in 'hosts[0].plugins.a.options' must be a "
		     "scalar or a sequence of scalars, got a mapping");
}

static void test_error_host_rules(void **state)
{
	struct ctp_config *cfg = SENTINEL;
	char err[512] = "";

	(void)state;
	expect_error("plugins:\n  jemalloc-probe: {}\nhosts:\n"
		     "  - match: {hostname: 'db-*'}\n    plugins:\n"
		     "      jemaloc-probe: {enabled: true}\n",
		     "6:7",
		     "host rule names plugin 'jemaloc-probe' which is not "
		     "declared under 'plugins:'; did you mean "
		     "'jemalloc-probe'?");
	/* Even with no plugins declared at all, and with hosts: first. */
	expect_error("hosts:\n  - match: {kernel: '6.*'}\n"
		     "    plugins: {psi: {enabled: false}}\n",
		     "3:15",
		     "host rule names plugin 'psi' which is not declared "
		     "under 'plugins:'");
	expect_error("hosts:\n  - match: {}\n    plugins: {}\n", "2:12",
		     "'hosts[0].match' needs at least one condition (hostname, "
		     "kernel or path_exists)");
	expect_error("hosts:\n  - match:\n    plugins: {}\n", "2:11",
		     "'hosts[0].match' needs at least one condition");
	expect_error("hosts:\n  - match: {hostname: a}\n  - plugins: {}\n",
		     "3:5",
		     "'hosts[1]' has no 'match:': a host rule needs at least "
		     "one condition (hostname, kernel or path_exists)");
	expect_error("hosts:\n  - match: {path_exists: sys/kernel}\n", "2:26",
		     "'hosts[0].match.path_exists' must be an absolute path, "
		     "got 'sys/kernel'");

	assert_int_equal(ctp_config_load(FIX "undeclared-plugin.yaml", &cfg,
					 err, sizeof(err)),
			 -EINVAL);
	assert_ptr_equal(cfg, SENTINEL);
	assert_string_equal(err, FIX "undeclared-plugin.yaml:8:7: host rule "
				     "names plugin 'jemaloc-probe' which is "
				     "not declared under 'plugins:'; did you "
				     "mean 'jemalloc-probe'?");
}

static void test_error_files(void **state)
{
	struct ctp_config *cfg = SENTINEL;
	char err[512] = "", path[] = "/tmp/ctp-config-XXXXXX";
	char *big;
	int fd;

	(void)state;
	assert_int_equal(ctp_config_load(FIX "no-such-file.yaml", &cfg, err,
					 sizeof(err)),
			 -ENOENT);
	assert_ptr_equal(cfg, SENTINEL);
	assert_string_equal(err,
			    FIX "no-such-file.yaml: No such file or directory");

	assert_int_equal(ctp_config_load(CTP_TEST_FIXTURES "/config", &cfg, err,
					 sizeof(err)),
			 -EISDIR);
	assert_ptr_equal(cfg, SENTINEL);
	assert_string_equal(err, CTP_TEST_FIXTURES "/config: Is a directory");

	/* Mode 000 stops only a process without CAP_DAC_OVERRIDE. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "workers: 2\n", 11), 11);
	close(fd);
	assert_int_equal(chmod(path, 0), 0);
	if (access(path, R_OK) < 0) {
		char want[600];

		assert_int_equal(ctp_config_load(path, &cfg, err, sizeof(err)),
				 -EACCES);
		assert_ptr_equal(cfg, SENTINEL);
		snprintf(want, sizeof(want), "%s: Permission denied", path);
		assert_string_equal(err, want);
	} else {
		/* Root reads it anyway: that is a successful load. */
		assert_int_equal(ctp_config_load(path, &cfg, err, sizeof(err)),
				 0);
		assert_int_equal(cfg->workers, 2);
		ctp_config_free(cfg);
		cfg = SENTINEL;
	}
	unlink(path);

	/* Past the size cap, without parsing it. */
	big = malloc((2u << 20) + 1);
	assert_non_null(big);
	memset(big, '#', 2u << 20);
	big[2u << 20] = '\0';
	assert_int_equal(ctp_config_load_buf("big.yaml", big, 2u << 20, &cfg,
					     err, sizeof(err)),
			 -EFBIG);
	assert_ptr_equal(cfg, SENTINEL);
	assert_non_null(strstr(err, "big.yaml: too large for a config file"));
	free(big);

	/* No error buffer: still fails cleanly. */
	assert_int_equal(ctp_config_load_buf("t.yaml", "workers: 0\n", 11, &cfg,
					     NULL, 0),
			 -EINVAL);
	assert_ptr_equal(cfg, SENTINEL);
	/* A tiny one is cut but still terminated. */
	assert_int_equal(
		ctp_config_load_buf("t.yaml", "workers: 0\n", 11, &cfg, err, 8),
		-EINVAL);
	assert_string_equal(err, "t.yaml:");
}

/* A value with a newline still gives a one-line message. */
static void test_error_one_line(void **state)
{
	(void)state;
	expect_error("workers: \"1\\n2\"\n", "1:10",
		     "'workers' must be an integer in 1..256, got '1\\n2'");
	expect_error("\"bad\\nkey\\x01\": 1\n", "1:1",
		     "unknown key 'bad\\nkey\\x01' in top level");
}

/* ---- Host rules ---------------------------------------------------------- */

static const char rules_yaml[] =
	"plugins:\n"
	"  procfs-stat:\n"
	"    options: {fields: [utime, stime], period_ms: 100}\n"
	"  jemalloc-probe:\n"
	"    enabled: false\n"
	"hosts:\n"
	"  - match: {hostname: 'db-*'}\n"
	"    plugins:\n"
	"      jemalloc-probe: {enabled: true, required: true}\n"
	"  - match: {kernel: '6.*'}\n"
	"    plugins:\n"
	"      procfs-stat: {options: {period_ms: 50, extra: on}}\n"
	"  - match: {hostname: 'db-7', kernel: '6.1.*'}\n"
	"    plugins:\n"
	"      jemalloc-probe: {enabled: false}\n"
	"  - match: {hostname: 'db-9*'}\n"
	"    plugins:\n"
	"      jemalloc-probe: {required: false}\n";

static const struct ctp_plugin_cfg *applied(struct ctp_config *cfg,
					    const char *host, const char *rel,
					    const char *name)
{
	struct ctp_host_facts f = {host, rel};

	assert_int_equal(ctp_config_apply_hosts(cfg, &f), 0);
	return ctp_config_plugin(cfg, name);
}

static void test_hosts_hostname_glob(void **state)
{
	struct ctp_config *cfg = load_ok(rules_yaml);
	const struct ctp_plugin_cfg *pc;

	(void)state;
	pc = ctp_config_plugin(cfg, "jemalloc-probe");
	assert_int_equal(pc->enabled, 0); /* before any rule */
	pc = applied(cfg, "db-12", "5.15.0", "jemalloc-probe");
	assert_int_equal(pc->enabled, 1);
	assert_int_equal(pc->required, 1);
	assert_int_equal(cfg->rule_matched[0], 1);
	assert_int_equal(cfg->rule_matched[1], 0);
	assert_int_equal(cfg->rule_matched[2], 0);
	/* Host names compare case-insensitively. */
	pc = applied(cfg, "DB-12", "5.15.0", "jemalloc-probe");
	assert_int_equal(pc->enabled, 1);
	/* Non-matching rules change nothing. */
	pc = applied(cfg, "web-1", "5.15.0", "jemalloc-probe");
	assert_int_equal(pc->enabled, 0);
	assert_int_equal(pc->required, 0);
	pc = ctp_config_plugin(cfg, "procfs-stat");
	assert_string_equal(opt(pc, "period_ms")->value, "100");
	assert_null(opt(pc, "extra"));
	assert_int_equal(cfg->rule_matched[0], 0);
	ctp_config_free(cfg);
}

static void test_hosts_release_glob_and_merge(void **state)
{
	struct ctp_config *cfg = load_ok(rules_yaml);
	const struct ctp_plugin_cfg *pc;
	const struct ctp_kv *kv;

	(void)state;
	pc = applied(cfg, "web-1", "6.8.0-rc1", "procfs-stat");
	assert_int_equal(cfg->rule_matched[1], 1);
	/* Options merge key by key: one replaced, one added, one kept. */
	assert_int_equal(pc->n_opts, 3);
	assert_string_equal(opt(pc, "fields")->value, "utime,stime");
	kv = opt(pc, "period_ms");
	assert_string_equal(kv->value, "50");
	assert_int_equal(kv->line, 12); /* the rule's value now */
	assert_int_equal(kv->col, 42);
	assert_string_equal(opt(pc, "extra")->value, "on");
	assert_int_equal(pc->enabled, 1);
	/* The declarations are not touched by applying. */
	assert_string_equal(opt(&cfg->declared_plugins[0], "period_ms")->value,
			    "100");
	/* Release globs are case-sensitive and anchored. */
	pc = applied(cfg, "web-1", "16.0", "procfs-stat");
	assert_string_equal(opt(pc, "period_ms")->value, "100");
	ctp_config_free(cfg);
}

static void test_hosts_later_wins(void **state)
{
	struct ctp_config *cfg = load_ok(rules_yaml);
	const struct ctp_plugin_cfg *pc;

	(void)state;
	/* Rules 0, 1 and 2 all match; 2 turns off what 0 turned on, and
	 * leaves `required` from rule 0 alone. */
	pc = applied(cfg, "db-7", "6.1.55", "jemalloc-probe");
	assert_int_equal(cfg->rule_matched[0], 1);
	assert_int_equal(cfg->rule_matched[1], 1);
	assert_int_equal(cfg->rule_matched[2], 1);
	assert_int_equal(pc->enabled, 0);
	assert_int_equal(pc->required, 1);
	assert_int_equal(cfg->rule_matched[3], 0);
	/* Without rule 2 the earlier one stands. */
	pc = applied(cfg, "db-7", "5.10", "jemalloc-probe");
	assert_int_equal(pc->enabled, 1);
	assert_int_equal(pc->required, 1);
	/* A later rule can turn a flag back off, too. */
	pc = applied(cfg, "db-90", "5.10", "jemalloc-probe");
	assert_int_equal(cfg->rule_matched[0], 1);
	assert_int_equal(cfg->rule_matched[3], 1);
	assert_int_equal(pc->enabled, 1);
	assert_int_equal(pc->required, 0);
	ctp_config_free(cfg);
}

static void test_hosts_path_exists(void **state)
{
	const struct ctp_plugin_cfg *pc;
	struct ctp_config *cfg;
	char yaml[1024];

	(void)state;
	snprintf(yaml, sizeof(yaml),
		 "plugins:\n  a: {enabled: false}\n  b: {enabled: false}\n"
		 "hosts:\n"
		 "  - match: {path_exists: %s}\n    plugins: {a: {enabled: "
		 "on}}\n"
		 "  - match: {path_exists: %s}\n    plugins: {b: {enabled: "
		 "on}}\n",
		 FIX "path-exists-marker", FIX "no-such-marker");
	cfg = load_ok(yaml);
	assert_int_equal(ctp_config_rule_matches(&cfg->rules[0], NULL), 1);
	assert_int_equal(ctp_config_rule_matches(&cfg->rules[1], NULL), 0);
	pc = applied(cfg, "any", "any", "a");
	assert_int_equal(pc->enabled, 1);
	pc = ctp_config_plugin(cfg, "b");
	assert_int_equal(pc->enabled, 0);
	ctp_config_free(cfg);
}

static void test_hosts_matching_details(void **state)
{
	struct ctp_host_rule rule = {0};
	struct ctp_host_facts f = {"db-1", "6.1.0"}, none = {NULL, NULL};
	struct ctp_config *cfg;
	struct utsname u;

	(void)state;
	rule.hostname_glob = "db-[0-9]";
	assert_int_equal(ctp_config_rule_matches(&rule, &f), 1);
	/* Unknown facts never satisfy a condition on them. */
	assert_int_equal(ctp_config_rule_matches(&rule, &none), 0);
	assert_int_equal(ctp_config_rule_matches(&rule, NULL), 0);
	rule.release_glob = "6.2*";
	assert_int_equal(ctp_config_rule_matches(&rule, &f), 0); /* AND */
	rule.release_glob = "6.1*";
	assert_int_equal(ctp_config_rule_matches(&rule, &f), 1);
	assert_int_equal(ctp_config_rule_matches(NULL, &f), 0);

	/* NULL facts: this machine, as uname(2) tells. */
	assert_int_equal(uname(&u), 0);
	cfg = load_ok("plugins: {a: {enabled: off}}\nhosts:\n"
		      "  - match: {hostname: '*'}\n"
		      "    plugins: {a: {enabled: on}}\n");
	assert_int_equal(ctp_config_apply_hosts(cfg, NULL), 0);
	assert_int_equal(ctp_config_plugin(cfg, "a")->enabled, 1);
	assert_string_equal(cfg->hosts_hostname, u.nodename);
	assert_string_equal(cfg->hosts_release, u.release);
	assert_null(ctp_config_plugin(cfg, "b"));
	assert_null(ctp_config_plugin(NULL, "a"));
	assert_int_equal(ctp_config_apply_hosts(NULL, &f), -EINVAL);
	ctp_config_free(cfg);
}

/* ---- Printing ------------------------------------------------------------ */

static char *print_to_string(const struct ctp_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(ctp_config_print(cfg, f), 0);
	fclose(f);
	return text;
}

static void test_print(void **state)
{
	const struct ctp_plugin_cfg *pc;
	struct ctp_config *cfg, *back;
	char err[512] = "", *text;

	(void)state;
	assert_int_equal(
		ctp_config_load(FIX "full.yaml", &cfg, err, sizeof(err)), 0);
	text = print_to_string(cfg);
	assert_non_null(strstr(text, "# host rules: not applied\n"));
	assert_non_null(strstr(text, "hosts[0] (line 26): hostname \"db-*\", "
				     "kernel \"6.*\": not evaluated\n"));
	free(text);

	assert_int_equal(
		applied(cfg, "db-3", "6.6.1", "jemalloc-probe")->enabled, 1);
	text = print_to_string(cfg);
	assert_non_null(strstr(text, "matched against hostname \"db-3\", "
				     "kernel \"6.6.1\""));
	assert_non_null(strstr(text, "hosts[0] (line 26): hostname \"db-*\", "
				     "kernel \"6.*\": matched\n"));
	assert_non_null(strstr(text, "workers: 8\n"));
	assert_non_null(strstr(text, "  \"jemalloc-probe\":\n"
				     "    enabled: true\n"
				     "    required: false\n"
				     "    options:\n"
				     "      \"symbol\": \"je_mallctl\"\n"
				     "      \"arenas\": \"all\"\n"));

	/* What is printed is a config with the same effective settings. */
	back = load_ok(text);
	assert_int_equal(back->n_rules, 0);
	assert_int_equal(back->n_plugin_dirs, 2);
	assert_string_equal(back->plugin_dirs[1], "/usr/lib/ctprof/plugins");
	assert_string_equal(back->output, cfg->output);
	assert_int_equal(back->compression_level, 9);
	assert_int_equal(back->workers, 8);
	assert_int_equal(back->record_hostname, 1);
	assert_true(back->max_decompressed_bytes == UINT64_C(512) << 20);
	assert_string_equal(back->cgroup_root, "/srv/fixture/cgroup");
	assert_int_equal(back->n_plugins, 2);
	pc = ctp_config_plugin(back, "jemalloc-probe");
	assert_int_equal(pc->enabled, 1);
	assert_string_equal(opt(pc, "arenas")->value, "all");
	pc = ctp_config_plugin(back, "procfs-stat");
	assert_int_equal(pc->required, 1);
	assert_string_equal(opt(pc, "fields")->value, "utime,stime,nice");
	ctp_config_free(back);
	free(text);
	ctp_config_free(cfg);

	/* Odd bytes survive the round trip. */
	cfg = load_ok("output: \"a\\\"b\\\\c\\td\\x01\"\n");
	text = print_to_string(cfg);
	back = load_ok(text);
	assert_string_equal(back->output, "a\"b\\c\td\x01");
	assert_non_null(strstr(text, "# plugin_dirs: not set"));
	assert_non_null(strstr(text, "plugins: {}\n"));
	assert_non_null(strstr(text, "# host rules: none\n"));
	ctp_config_free(back);
	free(text);
	ctp_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_shipped_config),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_scalar_forms),
		cmocka_unit_test(test_error_syntax),
		cmocka_unit_test(test_error_yaml_features),
		cmocka_unit_test(test_error_unknown_keys),
		cmocka_unit_test(test_error_types),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_service),
		cmocka_unit_test(test_error_ranges),
		cmocka_unit_test(test_error_duplicates),
		cmocka_unit_test(test_error_bad_bool),
		cmocka_unit_test(test_error_options),
		cmocka_unit_test(test_error_host_rules),
		cmocka_unit_test(test_error_files),
		cmocka_unit_test(test_error_one_line),
		cmocka_unit_test(test_hosts_hostname_glob),
		cmocka_unit_test(test_hosts_release_glob_and_merge),
		cmocka_unit_test(test_hosts_later_wins),
		cmocka_unit_test(test_hosts_path_exists),
		cmocka_unit_test(test_hosts_matching_details),
		cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
