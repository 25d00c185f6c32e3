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

/*
 * Real comm names, as /proc/PID/task/TID/comm shows them (at most 15
 * bytes: the kernel cuts longer ones, as the JVM's, browsers' and some
 * kernel threads' show), gathered from desktops, build hosts, database and
 * container hosts, with the key each must have. The point of the rule is
 * in the right column: thread pools and per-CPU/per-device kernel threads
 * fold into one group, while the programs people look for (cc1, as, ld,
 * bash) keep readable names.
 */
static const struct norm_case real[] = {
	/* Kernel threads: per-CPU, per-device, per-queue. */
	{"kworker/3:1H", "kworker/{N}:{N}H"},
	{"kworker/u16:2-events_unbound", "kworker/u{N}:{N}-events_unbound"},
	{"kworker/0:0-mm_percpu_wq", "kworker/{N}:{N}-mm_percpu_wq"},
	{"kworker/5:2+events", "kworker/{N}:{N}+events"},
	{"kworker/R-rcu_g", "kworker/R-rcu_g"},
	{"ksoftirqd/0", "ksoftirqd/{N}"},
	{"migration/0", "migration/{N}"},
	{"cpuhp/1", "cpuhp/{N}"},
	{"idle_inject/2", "idle_inject/{N}"},
	{"rcu_preempt", "rcu_preempt"},
	{"rcu_tasks_kthre", "rcu_tasks_kthre"},
	{"kthreadd", "kthreadd"},
	{"khugepaged", "khugepaged"},
	{"kswapd0", "kswapd{N}"},
	{"kcompactd0", "kcompactd{N}"},
	{"oom_reaper", "oom_reaper"},
	{"watchdogd", "watchdogd"},
	{"kauditd", "kauditd"},
	{"kblockd", "kblockd"},
	{"writeback", "writeback"},
	/* The name of an interrupt as /proc/interrupts shows it, and the
	 * thread's comm, which the kernel cuts at 15 bytes. */
	{"irq/24-ahci[0000:00:1f.2]", "irq/{N}-ahci[{N}:{N}:{N}f.{N}]"},
	{"irq/24-ahci[000", "irq/{N}-ahci[{N}"},
	{"irq/128-iwlwifi", "irq/{N}-iwlwifi"},
	/* nvme0q3 mixes letters and digits twice: no rule fits, kept. */
	{"irq/45-nvme0q3", "irq/{N}-nvme0q3"},
	{"jbd2/sda1-8", "jbd{N}/sda{N}-{N}"},
	{"jbd2/nvme0n1p2-", "jbd{N}/nvme0n1p2-"},
	{"ext4-rsv-conver", "ext{N}-rsv-conver"},
	{"scsi_eh_0", "scsi_eh_{N}"},
	{"scsi_tmf_0", "scsi_tmf_{N}"},
	{"nvme-wq", "nvme-wq"},
	{"loop0", "loop{N}"},
	{"dmcrypt_write/2", "dmcrypt_write/{N}"},
	{"xfs-buf/dm-0", "xfs-buf/dm-{N}"},
	{"btrfs-transacti", "btrfs-transacti"},
	{"napi/eth0-8193", "napi/eth{N}-{N}"},
	{"card1-crtc0", "card{N}-crtc{N}"},
	{"kdamond.0", "kdamond.{N}"},
	{"md0_raid1", "md{N}_raid{N}"},
	{"UVM GPU1 BH", "UVM GPU{N} BH"},
	/* A build: the compiler proper keeps its name (letters then a
	 * digit, cc{N}; no other program is called cc<digit>), its C++
	 * sibling mixes twice and is kept, so the two stay apart. */
	{"cc1", "cc{N}"},
	{"cc1plus", "cc1plus"},
	{"as", "as"},
	{"ld", "ld"},
	{"ld.bfd", "ld.bfd"},
	{"collect2", "collect{N}"},
	{"lto1", "lto{N}"},
	{"make", "make"},
	{"gcc-12", "gcc-{N}"},
	{"clang-17", "clang-{N}"},
	{"x86_64-linux-gn", "x{N}_{N}-linux-gn"},
	{"rustc", "rustc"},
	{"cargo", "cargo"},
	/* Shells and interpreters. */
	{"bash", "bash"},
	{"zsh", "zsh"},
	{"python3", "python{N}"},
	{"python3.11", "python{N}.{N}"},
	{"php-fpm7.4", "php-fpm{N}.{N}"},
	{"node", "node"},
	/* JVM. '#' is not a separator, so "Thread#0" is one token that no
	 * rule fits: GC threads keep their numbers. */
	{"java", "java"},
	{"C2 CompilerThre", "C{N} CompilerThre"},
	{"C1 CompilerThre", "C{N} CompilerThre"},
	{"GC Thread#0", "GC Thread#0"},
	{"G1 Conc#0", "G{N} Conc#0"},
	{"G1 Young RemSet", "G{N} Young RemSet"},
	{"VM Periodic Tas", "VM Periodic Tas"},
	{"pool-3-thread-12", "pool-{N}-thread-{N}"},
	/* Rust, Go, browsers, desktops. */
	{"tokio-runtime-w", "tokio-runtime-w"},
	{"containerd", "containerd"},
	{"kubelet", "kubelet"},
	{"chrome", "chrome"},
	{"ThreadPoolForeg", "ThreadPoolForeg"},
	{"Chrome_ChildIOT", "Chrome_ChildIOT"},
	{"Isolated Web Co", "Isolated Web Co"},
	{"IPC I/O Parent", "IPC I/O Parent"},
	{"dav1d-worker", "dav1d-worker"},
	{"llvmpipe-0", "llvmpipe-{N}"},
	{"gmain", "gmain"},
	{"gdbus", "gdbus"},
	/* Servers. */
	{"postgres", "postgres"},
	{"postgres: 14/main: walwriter", "postgres: {N}/main: walwriter"},
	{"redis-server", "redis-server"},
	{"io_thd_1", "io_thd_{N}"},
	{"bio_lazy_free", "bio_lazy_free"},
	{"rs:main Q:Reg", "rs:main Q:Reg"},
	{"in:imjournal", "in:imjournal"},
	{"systemd-journal", "systemd-journal"},
	{"sshd", "sshd"},
	{"nginx", "nginx"},
	{"worker-63", "worker-{N}"},
	{"stress-ng-cpu", "stress-ng-cpu"},
	/* Containers and ids: a container id and a UUID vary between runs
	 * and fold; a word made of hex letters does not. */
	{"3fa9c2d1e8b7", "{H}"},
	{"runc:[2:INIT]", "runc:[{N}:INIT]"},
	{"containerd-shim", "containerd-shim"},
	{"550e8400-e29b-41d4-a716-446655440000", "{H}-{H}-{H}-{H}-{H}"},
	{"vm-550e8400-e29b-41d4-a716-446655440000", "vm-{H}-{H}-{H}-{H}-{H}"},
	{"deadbeef-worker", "deadbeef-worker"},
	/* systemd units, as cgroup components and as names. */
	{"session-3.scope", "session-{N}.scope"},
	{"user@1000.service", "user@{N}.service"},
	{"getty@tty1.service", "getty@tty{N}.service"},
};

/* The token rules one by one, and their order. */
static const struct norm_case rules[] = {
	{"0", "{N}"},
	{"007", "{N}"},
	/* Hex: six characters or more, lower case, with a digit. */
	{"abc123def", "{H}"},
	{"beef42-worker", "{H}-worker"},
	{"3fa9c2", "{H}"},
	{"3fa9c", "3fa9c"}, /* five: kept (no other rule fits) */
	{"a1", "a{N}"},	    /* short: letters then digits */
	{"fd0", "fd{N}"},
	{"12ab", "{N}ab"}, /* short: digits then letters */
	{"12abcd", "{H}"}, /* hex wins over digits then letters */
	{"abcdef1", "{H}"},
	{"deadbeef", "deadbeef"},	  /* hex needs a digit */
	{"3FA9C2D1E8B7", "3FA9C2D1E8B7"}, /* and lower case */
	{"12xy", "{N}xy"},
	{"100Hz", "{N}Hz"},
	{"Ab12", "Ab{N}"},
	{"sda1", "sda{N}"},
	{"u16", "u{N}"},
	/* A UUID is one unit: its 4-character groups fold too; '_' joins
	 * as well as '-'; a word glued before it is kept. Not a UUID: wrong
	 * group lengths, upper case, glued to a word with digits. */
	{"6b1e3f0a_7c2d_4e5f_8a9b_0c1d2e3f4a5b", "{H}_{H}_{H}_{H}_{H}"},
	{"abcdefab-abcd-abcd-abcd-abcdefabcdef", "{H}-{H}-{H}-{H}-{H}"},
	{"550e8400-e29b-41d4-a716-44665544000", "{H}-e29b-41d4-a{N}-{N}"},
	{"550E8400-E29B-41D4-A716-446655440000", "550E8400-E29B-41D4-A{N}-{N}"},
	{"pod550e8400-e29b-41d4-a716-446655440000", "pod{H}-{H}-{H}-{H}-{H}"},
	{"x1550e8400-e29b-41d4-a716-446655440000",
	 "x1550e8400-e29b-41d4-a{N}-{N}"},
	{"550e8400-e29b-41d4-a716-446655440000x", "{H}-e29b-41d4-a{N}-{N}x"},
	{"a..b--1", "a..b--{N}"}, /* separator runs kept verbatim */
	{"x\t7", "x\t{N}"},
	{"\xc3\xb8rn3", "\xc3\xb8rn3"}, /* not ASCII letters: kept */
	{"", ""},
};

static void check_names(const struct norm_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char out[256];
		size_t len = strlen(c[i].in);
		size_t got = ctp_norm_name(c[i].in, len, out, sizeof(out));
		if (strcmp(out, c[i].want))
			fail_msg("'%s' -> '%s', expected '%s'", c[i].in, out,
				 c[i].want);
		assert_int_equal(got, strlen(c[i].want));
		assert_true(got + 1 <= CTP_NORM_MAX(len));
	}
}

static void test_real_names(void **state)
{
	(void)state;
	size_t n = sizeof(real) / sizeof(real[0]);
	assert_true(n >= 60);
	check_names(real, n);
}

static void test_rules(void **state)
{
	(void)state;
	check_names(rules, sizeof(rules) / sizeof(rules[0]));
}

/* A normalized name normalizes to itself: placeholders are kept tokens. */
static void idempotent(const char *in, size_t len)
{
	char a[1024], b[1024];
	size_t n = ctp_norm_name(in, len, a, sizeof(a));
	assert_true(n < sizeof(a));
	assert_true(n + 1 <= CTP_NORM_MAX(len));
	ctp_norm_name(a, n, b, sizeof(b));
	if (strcmp(a, b))
		fail_msg("'%.*s' -> '%s' -> '%s'", (int)len, in, a, b);
}

static void test_idempotent(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++)
		idempotent(real[i].in, strlen(real[i].in));
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		idempotent(rules[i].in, strlen(rules[i].in));
}

/*
 * The same two properties (idempotent, within CTP_NORM_MAX) on random
 * names over an alphabet dense in what the rules look at: hex letters,
 * other letters, digits, the UUID joins and other separators, placeholder
 * braces and a non-ASCII byte. Seeded, so a failure replays.
 */
static void test_random_names(void **state)
{
	(void)state;
	static const char alpha[] = "0123456789abcdefxyzABFH-_./:@ {}#\xc3";
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 200000; round++) {
		char in[48];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t len = (size_t)(x % sizeof(in));
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = alpha[x % (sizeof(alpha) - 1)];
		}
		idempotent(in, len);
	}
	/* UUID-shaped names, where random text rarely lands. */
	for (int round = 0; round < 20000; round++) {
		char in[64];
		size_t len = 0;
		static const size_t group[] = {8, 4, 4, 4, 12};
		for (size_t k = 0; k < 5; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (k)
				in[len++] = "-_-."[x % 4];
			size_t g = group[k] + (x >> 8) % 3 - (x >> 16) % 2;
			for (size_t i = 0; i < g;
			     i++, x = x * 6364136223846793005ull + 1)
				in[len++] = "0123456789abcdefz"[(x >> 33) % 17];
		}
		idempotent(in, len);
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
	/* The whole instance is one token: a short one with a number is a
	 * word with a number, a long hex one an id. */
	{"/system.slice/container@abc12.service",
	 "/system.slice/container@abc{N}.service"},
	{"/system.slice/container@3fa9c2d1e8b7.service",
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
	 "kubepods-burstable-pod{H}_{H}_{H}_{H}_{H}.slice"},
	{"/machine.slice/machine-qemu\\x2d1\\x2dvm.scope",
	 "/machine.slice/machine-qemu\\x2d1\\x2dvm.scope"},
	{"//a1//", "//a{N}//"},
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
	assert_int_equal(ctp_norm_token("3fa9", 4, out, sizeof(out)), 4);
	assert_string_equal(out, "3fa9");
	assert_int_equal(ctp_norm_token("3fa9c2", 6, out, sizeof(out)), 3);
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
	/* The identity axes and field:NAME (whether the field exists is the
	 * snapshot's business, test_group_axes.c). */
	char t8[] = "pid,field:procfs.state,tid,cgroup:cpu";
	assert_int_equal(ctp_group_spec_parse(t8, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n_axes, 4);
	assert_int_equal(s.axes[0], CTP_AXIS_PID);
	assert_int_equal(s.axes[1], CTP_AXIS_FIELD);
	assert_string_equal(s.field[1], "procfs.state");
	assert_null(s.v1[1]);
	assert_int_equal(s.axes[2], CTP_AXIS_TID);
	assert_null(s.field[2]);
	assert_string_equal(s.v1[3], "cpu");
	assert_null(s.field[3]);
	assert_int_equal(ctp_group_spec_parse(t7, &s, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_names),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_random_names),
		cmocka_unit_test(test_cgroups),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_flatten),
		cmocka_unit_test(test_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
