/* SPDX-License-Identifier: MIT */
/*
 * Name and cgroup-path normalization (core/analysis/group.c, docs/GROUPING.md):
 * a table of real thread, process and unit names with the key each must
 * normalize to, worked out by hand from the token rules; cgroup paths with
 * systemd instances; output-buffer semantics; flatten globs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "group.h"

struct norm_case {
	const char *in, *want;
};

/* Thread and process names (comm is at most 15 bytes; the kernel cuts
 * longer ones, as the JVM's and browsers' show). */
static const struct norm_case names[] = {
	/* Kernel threads. */
	{"kworker/3:1H", "kworker/{N}:{N}H"},
	{"kworker/u16:2-events_unbound", "kworker/u{N}:{N}-events_unbound"},
	{"kworker/0:0-mm_percpu_wq", "kworker/{N}:{N}-mm_percpu_wq"},
	{"kworker/5:2+events", "kworker/{N}:{N}+events"},
	{"ksoftirqd/0", "ksoftirqd/{N}"},
	{"migration/3", "migration/{N}"},
	{"rcu_preempt", "rcu_preempt"},
	/* nvme0q3 mixes letters and digits twice: no rule fits, kept. */
	{"irq/45-nvme0q3", "irq/{N}-nvme0q3"},
	{"jbd2/sda1-8", "jbd{N}/sda{N}-{N}"},
	{"cpuhp/7", "cpuhp/{N}"},
	{"kthreadd", "kthreadd"},
	{"idle_inject/2", "idle_inject/{N}"},
	{"scsi_eh_0", "scsi_eh_{N}"},
	{"card1-crtc0", "card{N}-crtc{N}"},
	{"xfs-buf/dm-0", "xfs-buf/dm-{N}"},
	{"kdamond.0", "kdamond.{N}"},
	{"md0_raid1", "md{N}_raid{N}"},
	{"UVM GPU1 BH", "UVM GPU{N} BH"},
	/* systemd units as names. */
	{"user@1000.service", "user@{N}.service"},
	{"getty@tty1.service", "getty@tty{N}.service"},
	{"session-3.scope", "session-{N}.scope"},
	/* JVM. '#' is not a separator, so "Thread#3" is one token that no
	 * rule fits: GC threads keep their numbers. */
	{"C2 CompilerThre", "C{N} CompilerThre"},
	{"C1 CompilerThre", "C{N} CompilerThre"},
	{"GC Thread#3", "GC Thread#3"},
	{"G1 Conc#0", "G{N} Conc#0"},
	{"G1 Young RemSet", "G{N} Young RemSet"},
	{"VM Periodic Tas", "VM Periodic Tas"},
	{"pool-3-thread-12", "pool-{N}-thread-{N}"},
	/* Go runtimes name no threads: processes group by name. */
	{"containerd", "containerd"},
	{"kubelet", "kubelet"},
	/* Rust / tokio. */
	{"tokio-runtime-w", "tokio-runtime-w"},
	{"tokio-rt-worker", "tokio-rt-worker"},
	/* Browsers. */
	{"Chrome_ChildIOT", "Chrome_ChildIOT"},
	{"ThreadPoolForeg", "ThreadPoolForeg"},
	{"WebExtensions", "WebExtensions"},
	{"Isolated Web Co", "Isolated Web Co"},
	{"IPC I/O Parent", "IPC I/O Parent"},
	/* Databases, interpreters, containers. */
	{"postgres: 14/main: walwriter", "postgres: {N}/main: walwriter"},
	{"php-fpm7.4", "php-fpm{N}.{N}"},
	{"python3.11", "python{N}.{N}"},
	{"runc:[2:INIT]", "runc:[{N}:INIT]"},
	{"worker-63", "worker-{N}"},
	{"burn-0", "burn-{N}"},
	/* Token rules one by one, and their order. */
	{"0", "{N}"},
	{"abc123def", "{H}"},
	{"a1", "{H}"},
	{"12ab", "{H}"}, /* hex wins over digits+letters */
	{"12xy", "{N}xy"},
	{"100Hz", "{N}Hz"},
	{"Ab12", "Ab{N}"},	  /* 'A' is not lower-case hex */
	{"deadbeef", "deadbeef"}, /* hex needs a digit */
	{"fd0", "{H}"},
	{"cc1", "{H}"}, /* gcc's cc1: hex-looking, so {H} */
	{"sda1", "sda{N}"},
	{"a..b--1", "a..b--{N}"}, /* separator runs kept verbatim */
	{"x\t7", "x\t{N}"},
	{"\xc3\xb8rn3", "\xc3\xb8rn3"}, /* not ASCII letters: kept */
	{"", ""},
};

static void test_names(void **state)
{
	(void)state;
	size_t n = sizeof(names) / sizeof(names[0]);
	assert_true(n >= 30);
	for (size_t i = 0; i < n; i++) {
		char out[256];
		size_t len = strlen(names[i].in);
		size_t got = ctp_norm_name(names[i].in, len, out, sizeof(out));
		if (strcmp(out, names[i].want))
			fail_msg("'%s' -> '%s', expected '%s'", names[i].in,
				 out, names[i].want);
		assert_int_equal(got, strlen(names[i].want));
		assert_true(got + 1 <= CTP_NORM_MAX(len));
	}
}

/* A normalized name normalizes to itself: placeholders are kept tokens. */
static void test_idempotent(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char a[256], b[256];
		ctp_norm_name(names[i].in, strlen(names[i].in), a, sizeof(a));
		ctp_norm_name(a, strlen(a), b, sizeof(b));
		assert_string_equal(a, b);
	}
}

static const struct norm_case paths[] = {
	{"/", "/"},
	{"", ""},
	{"/init.scope", "/init.scope"},
	{"/system.slice/foo@123.service", "/system.slice/foo@{N}.service"},
	{"/user.slice/user-1000.slice/session-3.scope",
	 "/user.slice/user-{N}.slice/session-{N}.scope"},
	{"/user.slice/user-1000.slice/user@1000.service/app.slice/"
	 "app-gnome-firefox-4321.scope",
	 "/user.slice/user-{N}.slice/user@{N}.service/app.slice/"
	 "app-gnome-firefox-{N}.scope"},
	{"/system.slice/system-getty.slice/getty@tty1.service",
	 "/system.slice/system-getty.slice/getty@tty{N}.service"},
	{"/system.slice/serial-getty@ttyS0.service",
	 "/system.slice/serial-getty@ttyS{N}.service"},
	{"/system.slice/wg-quick@wg0.service",
	 "/system.slice/wg-quick@wg{N}.service"},
	/* A word instance is a distinct unit: kept. */
	{"/system.slice/openvpn@client.service",
	 "/system.slice/openvpn@client.service"},
	/* The whole instance is one token, so hex-looking ones are {H}. */
	{"/system.slice/container@abc12.service",
	 "/system.slice/container@{H}.service"},
	/* An escaped path as instance: {I}. */
	{"/system.slice/system-systemd\\x2dfsck.slice/"
	 "systemd-fsck@dev-disk-by\\x2duuid-7d1c.service",
	 "/system.slice/system-systemd\\x2dfsck.slice/"
	 "systemd-fsck@{I}.service"},
	/* Not a unit type: token rules apply, instance not one token. */
	{"/x@dev-sda1.conf", "/x@dev-sda{N}.conf"},
	{"/x@dev-sda1.service", "/x@{I}.service"},
	/* Empty instance: not a template instance. */
	{"/system.slice/getty@.service", "/system.slice/getty@.service"},
	{"/system.slice/docker-"
	 "4f1c2a9be8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1."
	 "scope",
	 "/system.slice/docker-{H}.scope"},
	{"/kubepods.slice/kubepods-burstable.slice/"
	 "kubepods-burstable-pod6b1e3f0a_7c2d_4e5f_8a9b_0c1d2e3f4a5b.slice",
	 "/kubepods.slice/kubepods-burstable.slice/"
	 "kubepods-burstable-pod6b1e3f0a_{H}_{H}_{H}_{H}.slice"},
	{"/machine.slice/machine-qemu\\x2d1\\x2dvm.scope",
	 "/machine.slice/machine-qemu\\x2d1\\x2dvm.scope"},
	{"//a1//", "//{H}//"},
};

static void test_cgroups(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char out[512];
		size_t len = strlen(paths[i].in);
		size_t got =
			ctp_norm_cgroup(paths[i].in, len, out, sizeof(out));
		if (strcmp(out, paths[i].want))
			fail_msg("'%s' -> '%s', expected '%s'", paths[i].in,
				 out, paths[i].want);
		assert_int_equal(got, strlen(paths[i].want));
		assert_true(got + 1 <= CTP_NORM_MAX(len));
	}
}

static void test_tokens(void **state)
{
	(void)state;
	char out[32];
	/* One token, no splitting: separators are the caller's business. */
	assert_int_equal(ctp_norm_token("42", 2, out, sizeof(out)), 3);
	assert_string_equal(out, "{N}");
	assert_int_equal(ctp_norm_token("u16", 3, out, sizeof(out)), 4);
	assert_string_equal(out, "u{N}");
	assert_int_equal(ctp_norm_token("1H", 2, out, sizeof(out)), 4);
	assert_string_equal(out, "{N}H");
	assert_int_equal(ctp_norm_token("3fa9", 4, out, sizeof(out)), 3);
	assert_string_equal(out, "{H}");
	assert_int_equal(ctp_norm_token("nvme0q3", 7, out, sizeof(out)), 7);
	assert_string_equal(out, "nvme0q3");
	/* Only n bytes are read. */
	assert_int_equal(ctp_norm_token("7xyz", 1, out, sizeof(out)), 3);
	assert_string_equal(out, "{N}");
}

/* snprintf semantics: the full length back, a cut NUL-terminated copy. */
static void test_buffer(void **state)
{
	(void)state;
	char out[8];
	const char *in = "worker-1.2.3";
	memset(out, 'x', sizeof(out));
	size_t n = ctp_norm_name(in, strlen(in), out, 5);
	assert_int_equal(n, strlen("worker-{N}.{N}.{N}"));
	assert_string_equal(out, "work");
	assert_int_equal(out[5], 'x'); /* nothing past outlen */
	assert_int_equal(ctp_norm_name(in, strlen(in), NULL, 0), n);
	assert_int_equal(ctp_norm_cgroup("/a@1.service", 12, out, 1), 14);
	assert_string_equal(out, "");
	/* Worst case of the bound: one-digit tokens between separators. */
	const char *worst = "1.1.1.1";
	n = ctp_norm_name(worst, 7, NULL, 0);
	assert_int_equal(n, 15);
	assert_true(n + 1 <= CTP_NORM_MAX(7));
}

static void test_flatten(void **state)
{
	(void)state;
	const char *const globs[] = {"/user.slice/*", "/system.slice/docker-*",
				     "/system.slice/*"};
	assert_int_equal(ctp_flatten_match(
				 globs, 3,
				 "/user.slice/user-1000.slice/session-3.scope"),
			 0);
	/* First match wins. */
	assert_int_equal(
		ctp_flatten_match(globs, 3, "/system.slice/docker-ab.scope"),
		1);
	assert_int_equal(ctp_flatten_match(globs, 3, "/system.slice/x"), 2);
	/* The glob's own directory is not under it. */
	assert_int_equal(ctp_flatten_match(globs, 3, "/user.slice"), -1);
	assert_int_equal(ctp_flatten_match(globs, 3, "/init.scope"), -1);
	assert_int_equal(ctp_flatten_match(globs, 0, "/user.slice/x"), -1);
}

static void test_spec(void **state)
{
	(void)state;
	struct ctp_group_spec s = {0};
	char err[256], t1[] = "cgroup,pcomm", t2[] = "pcomm,bogus",
		       t3[] = "none,comm", t4[] = "comm,comm",
		       t5[] = "cgroup:cpu,none", t6[] = "",
		       t7[] = "pcomm,comm,cgroup,cgroup:cpu,none";

	assert_int_equal(ctp_group_spec_parse(t1, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n_axes, 2);
	assert_int_equal(s.axes[0], CTP_AXIS_CGROUP);
	assert_int_equal(s.axes[1], CTP_AXIS_PCOMM);
	assert_int_equal(ctp_group_spec_parse(t2, &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "unknown axis 'bogus'"));
	assert_int_equal(ctp_group_spec_parse(t3, &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "'none' already keys"));
	assert_int_equal(ctp_group_spec_parse(t4, &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "given twice"));
	assert_int_equal(ctp_group_spec_parse(t5, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n_axes, 2);
	assert_int_equal(s.axes[0], CTP_AXIS_CGROUP_V1);
	assert_string_equal(s.v1[0], "cpu");
	assert_null(s.v1[1]);
	assert_int_equal(ctp_group_spec_parse(t6, &s, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ctp_group_spec_parse(t7, &s, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_cgroups),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_flatten),
		cmocka_unit_test(test_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
