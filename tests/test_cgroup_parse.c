/* SPDX-License-Identifier: MIT */
/*
 * The cgroup plugin's pure parsers (plugins/cgroup/cgroup_parse.c) on
 * literal kernel text: every control file it reads, in both versions, with
 * the "max" tokens, missing newlines, garbage and overflow; the membership
 * file and mountinfo as a 6.18 hybrid host prints them; and the names and
 * keys derived from them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cgroup_parse.h"
#include "ctprof/plugin.h"

#define LIT(s) s, sizeof(s) - 1

/* ---- Single values ------------------------------------------------------- */

static void u64_values(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(ctp_cg_parse_u64(LIT("402653184\n"), &v), 0);
	assert_int_equal(v, 402653184);
	assert_int_equal(ctp_cg_parse_u64(LIT("0\n"), &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(ctp_cg_parse_u64(LIT("18446744073709551615\n"), &v),
			 0);
	assert_true(v == UINT64_MAX);
	/* cpuacct.usage as a 6.18 host prints it */
	assert_int_equal(ctp_cg_parse_u64(LIT("2583479814936\n"), &v), 0);
	assert_true(v == 2583479814936ull);

	v = 7;
	assert_int_equal(ctp_cg_parse_u64(LIT("18446744073709551616\n"), &v),
			 -ERANGE);
	assert_int_equal(ctp_cg_parse_u64(LIT("99999999999999999999\n"), &v),
			 -ERANGE);
	assert_int_equal(ctp_cg_parse_u64(LIT("max\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT("12a\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT(" 12\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT("12 \n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT("-1\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT("\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT("1\n2\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_u64(LIT("12"), &v), -EMSGSIZE);
	assert_int_equal(ctp_cg_parse_u64("", 0, &v), -ENODATA);
	assert_int_equal(v, 7); /* untouched on failure */
}

static void u64_max_values(void **state)
{
	uint64_t v = 7;
	bool is_max = false;

	(void)state;
	assert_int_equal(ctp_cg_parse_u64_max(LIT("max\n"), &v, &is_max), 0);
	assert_true(is_max);
	assert_int_equal(v, 0);
	assert_int_equal(ctp_cg_parse_u64_max(LIT("536870912\n"), &v, &is_max),
			 0);
	assert_false(is_max);
	assert_int_equal(v, 536870912);
	assert_int_equal(ctp_cg_parse_u64_max(LIT("0\n"), &v, &is_max), 0);
	assert_false(is_max);
	assert_int_equal(v, 0);

	is_max = true;
	v = 7;
	assert_int_equal(ctp_cg_parse_u64_max(LIT("Max\n"), &v, &is_max),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_u64_max(LIT("maximum\n"), &v, &is_max),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_u64_max(LIT("max 1\n"), &v, &is_max),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_u64_max(LIT("max"), &v, &is_max),
			 -EMSGSIZE);
	assert_int_equal(ctp_cg_parse_u64_max(LIT("18446744073709551616\n"), &v,
					      &is_max),
			 -ERANGE);
	assert_int_equal(ctp_cg_parse_u64_max("", 0, &v, &is_max), -ENODATA);
	assert_true(is_max);
	assert_int_equal(v, 7);
}

static void i64_values(void **state)
{
	int64_t v = 7;

	(void)state;
	/* cpu.cfs_quota_us without a limit, cpu.weight.nice */
	assert_int_equal(ctp_cg_parse_i64(LIT("-1\n"), &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(ctp_cg_parse_i64(LIT("-20\n"), &v), 0);
	assert_int_equal(v, -20);
	assert_int_equal(ctp_cg_parse_i64(LIT("50000\n"), &v), 0);
	assert_int_equal(v, 50000);
	assert_int_equal(ctp_cg_parse_i64(LIT("-9223372036854775808\n"), &v),
			 0);
	assert_true(v == INT64_MIN);

	v = 7;
	assert_int_equal(ctp_cg_parse_i64(LIT("9223372036854775808\n"), &v),
			 -ERANGE);
	assert_int_equal(ctp_cg_parse_i64(LIT("-9223372036854775809\n"), &v),
			 -ERANGE);
	assert_int_equal(ctp_cg_parse_i64(LIT("--1\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_i64(LIT("-\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_i64(LIT("garbage\n"), &v), -EINVAL);
	assert_int_equal(ctp_cg_parse_i64(LIT("-1"), &v), -EMSGSIZE);
	assert_int_equal(v, 7);
}

static void cpu_max(void **state)
{
	struct ctp_cg_cpu_max m;

	(void)state;
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("max 100000\n"), &m), 0);
	assert_true(m.quota_max);
	assert_int_equal(m.quota, 0);
	assert_int_equal(m.period, 100000);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("50000 100000\n"), &m), 0);
	assert_false(m.quota_max);
	assert_int_equal(m.quota, 50000);
	assert_int_equal(m.period, 100000);

	memset(&m, 0x5a, sizeof(m));
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("max\n"), &m), -EINVAL);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("50000\n"), &m), -EINVAL);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("50000  100000\n"), &m),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("50000 100000 7\n"), &m),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("maxi 100000\n"), &m),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("max max\n"), &m), -EINVAL);
	assert_int_equal(
		ctp_cg_parse_cpu_max(LIT("99999999999999999999 100000\n"), &m),
		-ERANGE);
	assert_int_equal(
		ctp_cg_parse_cpu_max(LIT("max 99999999999999999999\n"), &m),
		-ERANGE);
	assert_int_equal(ctp_cg_parse_cpu_max(LIT("max 100000"), &m),
			 -EMSGSIZE);
	assert_int_equal(ctp_cg_parse_cpu_max("", 0, &m), -ENODATA);
	/* untouched on failure */
	assert_int_equal(m.period, 0x5a5a5a5a5a5a5a5aull);
}

static void one_line(void **state)
{
	const char *w = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(ctp_cg_parse_line(LIT("domain threaded\n"), &w, &n),
			 0);
	assert_int_equal(n, 15);
	assert_memory_equal(w, "domain threaded", 15);
	assert_int_equal(ctp_cg_parse_line(LIT("threaded\n"), &w, &n), 0);
	assert_int_equal(n, 8);

	assert_int_equal(ctp_cg_parse_line(LIT("\n"), &w, &n), -ENODATA);
	assert_int_equal(ctp_cg_parse_line("", 0, &w, &n), -ENODATA);
	assert_int_equal(ctp_cg_parse_line(LIT("domain"), &w, &n), -EMSGSIZE);
	assert_int_equal(ctp_cg_parse_line(LIT("domain\nthreaded\n"), &w, &n),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_line(LIT("dom\001ain\n"), &w, &n),
			 -EINVAL);
	assert_int_equal(ctp_cg_parse_line("do\0main\n", 8, &w, &n), -EINVAL);
}

/* ---- Keyed files --------------------------------------------------------- */

/* A 6.18 v2 cpu.stat with CONFIG_SCHED_CORE and the cpu controller on. */
static const char v2_cpu_stat[] = "usage_usec 7200000000\n"
				  "user_usec 5000000000\n"
				  "system_usec 2200000000\n"
				  "core_sched.force_idle_usec 0\n"
				  "nr_periods 72000\n"
				  "nr_throttled 1500\n"
				  "throttled_usec 98765432\n"
				  "nr_bursts 0\n"
				  "burst_usec 0\n";

/* The first lines of a v1 memory.stat on the build host (6.18, hybrid). */
static const char v1_memory_stat[] =
	"cache 0\n"
	"rss 0\n"
	"rss_huge 0\n"
	"shmem 0\n"
	"mapped_file 0\n"
	"dirty 0\n"
	"writeback 0\n"
	"workingset_refault_anon 0\n"
	"workingset_refault_file 0\n"
	"swap 0\n"
	"swapcached 0\n"
	"pgpgin 0\n"
	"pgpgout 0\n"
	"pgfault 0\n"
	"pgmajfault 0\n"
	"inactive_anon 0\n"
	"active_anon 0\n"
	"inactive_file 0\n"
	"active_file 0\n"
	"unevictable 0\n"
	"hierarchical_memory_limit 9223372036854771712\n"
	"hierarchical_memsw_limit 9223372036854771712\n"
	"total_cache 666095616\n"
	"total_rss 552960000\n"
	"total_pgfault 85896624\n";

static const struct ctp_keyval *kv_find(const struct ctp_cg_keyed *k,
					const char *key)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->kv[i].key_len == strlen(key) &&
		    memcmp(k->kv[i].key, key, k->kv[i].key_len) == 0)
			return &k->kv[i];
	return NULL;
}

static uint64_t kv_value(const struct ctp_cg_keyed *k, const char *key)
{
	const struct ctp_keyval *kv = kv_find(k, key);

	if (!kv)
		fail_msg("key %s missing", key);
	return kv->value;
}

static struct ctp_cg_keyed kd;

static void keyed_real(void **state)
{
	(void)state;
	assert_int_equal(ctp_cg_parse_keyed(LIT(v2_cpu_stat), &kd), 0);
	assert_int_equal(kd.n, 9);
	assert_int_equal(kd.malformed, 0);
	assert_true(kv_value(&kd, "usage_usec") == 7200000000ull);
	assert_int_equal(kv_value(&kd, "nr_throttled"), 1500);
	assert_int_equal(kv_value(&kd, "throttled_usec"), 98765432);
	assert_int_equal(kv_value(&kd, "core_sched.force_idle_usec"), 0);
	/* file order */
	assert_memory_equal(kd.kv[0].key, "usage_usec", 10);
	assert_memory_equal(kd.kv[8].key, "burst_usec", 10);

	assert_int_equal(ctp_cg_parse_keyed(LIT(v1_memory_stat), &kd), 0);
	assert_int_equal(kd.n, 25);
	assert_true(kv_value(&kd, "hierarchical_memory_limit") ==
		    9223372036854771712ull);
	assert_int_equal(kv_value(&kd, "total_pgfault"), 85896624);

	/* memory.events of a cgroup that hit its limit */
	assert_int_equal(
		ctp_cg_parse_keyed(LIT("low 0\nhigh 0\nmax 17\noom 2\n"
				       "oom_kill 1\noom_group_kill 0\n"),
				   &kd),
		0);
	assert_int_equal(kd.n, 6);
	assert_int_equal(kv_value(&kd, "max"), 17);
	assert_int_equal(kv_value(&kd, "oom_kill"), 1);

	assert_int_equal(ctp_cg_parse_keyed("", 0, &kd), 0);
	assert_int_equal(kd.n, 0);
}

static void keyed_garbage(void **state)
{
	(void)state;
	/* Each bad line is skipped; the good ones around it stay. */
	static const char text[] = "anon 4096\n"
				   "this is garbage\n"
				   "Upper 1\n"
				   "two  spaces\n"
				   "x 1 2\n"
				   "neg -1\n"
				   ".dot 1\n"
				   "dot. 1\n"
				   "a..b 1\n"
				   "novalue \n"
				   " 5\n"
				   "anon 8192\n"
				   "file 8192\n";
	assert_int_equal(ctp_cg_parse_keyed(LIT(text), &kd), -EINVAL);
	assert_int_equal(kd.n, 2);
	assert_int_equal(kd.malformed, 11);
	assert_int_equal(kv_value(&kd, "anon"), 4096); /* first one wins */
	assert_int_equal(kv_value(&kd, "file"), 8192);

	/* overflow: the first problem is reported, the rest parses */
	assert_int_equal(
		ctp_cg_parse_keyed(LIT("pgmajfault 99999999999999999999\n"
				       "pgfault 3\n"),
				   &kd),
		-ERANGE);
	assert_int_equal(kd.n, 1);
	assert_int_equal(kd.malformed, 1);
	assert_null(kv_find(&kd, "pgmajfault"));
	assert_int_equal(kv_value(&kd, "pgfault"), 3);

	/* a line cut by a short read */
	assert_int_equal(ctp_cg_parse_keyed(LIT("anon 4096\nfile 81"), &kd),
			 -EMSGSIZE);
	assert_int_equal(kd.n, 1);
	assert_int_equal(kd.malformed, 1);

	/* a key longer than CTP_CG_KEY_MAX */
	char longkey[CTP_CG_KEY_MAX + 8];
	memset(longkey, 'k', CTP_CG_KEY_MAX + 1);
	strcpy(longkey + CTP_CG_KEY_MAX + 1, " 1\n");
	assert_int_equal(ctp_cg_parse_keyed(longkey, strlen(longkey), &kd),
			 -EINVAL);
	assert_int_equal(kd.n, 0);
	/* exactly CTP_CG_KEY_MAX is fine */
	strcpy(longkey + CTP_CG_KEY_MAX, " 1\n");
	assert_int_equal(ctp_cg_parse_keyed(longkey, strlen(longkey), &kd), 0);
	assert_int_equal(kd.n, 1);
}

static void keyed_cap(void **state)
{
	static char text[(CTP_CG_MAX_KEYS + 8) * 16];
	size_t off = 0;

	(void)state;
	for (int i = 0; i < CTP_CG_MAX_KEYS + 8; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"k%d %d\n", i, i);
	assert_int_equal(ctp_cg_parse_keyed(text, off, &kd), -E2BIG);
	assert_int_equal(kd.n, CTP_CG_MAX_KEYS);
	assert_int_equal(kd.dropped, 8);
	assert_int_equal(kd.malformed, 0);
	assert_int_equal(kv_value(&kd, "k0"), 0);
}

/* ---- /proc/<pid>/cgroup -------------------------------------------------- */

/* /proc/self/cgroup on the build host: hybrid, 9 v1 hierarchies. */
static const char hybrid_cgroup[] =
	"9:name=systemd:/\n"
	"8:pids:/\n"
	"7:blkio:/\n"
	"6:freezer:/\n"
	"5:devices:/\n"
	"4:memory:/process_api/2efcf56a033163b6c4bd07ad83ae6cc3\n"
	"3:cpuset:/\n"
	"2:cpuacct:/\n"
	"1:cpu:/\n"
	"0::/\n";

static void line_is(const struct ctp_cg_line *l, uint32_t id, const char *ctrl,
		    const char *path)
{
	assert_int_equal(l->id, id);
	assert_int_equal(l->ctrl_len, strlen(ctrl));
	assert_memory_equal(l->ctrl, ctrl, l->ctrl_len);
	assert_int_equal(l->path_len, strlen(path));
	assert_memory_equal(l->path, path, l->path_len);
}

static void membership(void **state)
{
	static struct ctp_cg_membership m;

	(void)state;
	assert_int_equal(ctp_cg_parse_membership(LIT(hybrid_cgroup), &m), 0);
	assert_int_equal(m.n, 10);
	line_is(&m.line[0], 9, "name=systemd", "/");
	line_is(&m.line[5], 4, "memory",
		"/process_api/2efcf56a033163b6c4bd07ad83ae6cc3");
	line_is(&m.line[9], 0, "", "/");

	/* pure v2; pure v1 with co-mounted controllers */
	assert_int_equal(
		ctp_cg_parse_membership(LIT("0::/user.slice/a.scope\n"), &m),
		0);
	assert_int_equal(m.n, 1);
	line_is(&m.line[0], 0, "", "/user.slice/a.scope");
	assert_int_equal(ctp_cg_parse_membership(
				 LIT("11:cpu,cpuacct:/system.slice/x.service\n"
				     "10:net_cls,net_prio:/\n"
				     "1:name=systemd:/a:b c\n"),
				 &m),
			 0);
	assert_int_equal(m.n, 3);
	line_is(&m.line[0], 11, "cpu,cpuacct", "/system.slice/x.service");
	line_is(&m.line[1], 10, "net_cls,net_prio", "/");
	/* the path is everything after the second ':' */
	line_is(&m.line[2], 1, "name=systemd", "/a:b c");

	/* garbage: each bad line skipped, counted */
	assert_int_equal(ctp_cg_parse_membership(LIT("x:cpu:/\n"
						     "1::/\n"
						     "0:cpu:/\n"
						     "1:cpu:relative\n"
						     "1:cpu\n"
						     "1:cpu:\n"
						     "1:c p u:/\n"
						     "2:memory:/ok\n"),
						 &m),
			 -EINVAL);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.malformed, 7);
	line_is(&m.line[0], 2, "memory", "/ok");

	/* overflow of the id, and a cut last line */
	assert_int_equal(ctp_cg_parse_membership(LIT("99999999999:cpu:/\n"
						     "0::/x\n"
						     "1:cpu:/cut"),
						 &m),
			 -ERANGE);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.malformed, 2);
	assert_int_equal(ctp_cg_parse_membership(LIT("0::/x\n1:cpu:/cut"), &m),
			 -EMSGSIZE);

	/* more lines than kept */
	static char many[(CTP_CG_MAX_LINES + 3) * 16];
	size_t off = 0;
	for (int i = 1; i <= CTP_CG_MAX_LINES + 3; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off,
					"%d:name=h%d:/\n", i, i);
	assert_int_equal(ctp_cg_parse_membership(many, off, &m), -E2BIG);
	assert_int_equal(m.n, CTP_CG_MAX_LINES);
	assert_int_equal(m.dropped, 3);
}

/* ---- mountinfo ----------------------------------------------------------- */

/* The cgroup lines of /proc/self/mountinfo on the build host, plus a root
 * file system line with optional fields. */
static const char mountinfo[] =
	"22 1 254:1 / / rw,relatime shared:1 master:2 - ext4 /dev/vda rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "
	"rw,memory\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup "
	"rw,xattr,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 "
	"rw\n"
	"50 31 0:40 /docker/ab /mnt/my\\040cg rw - cgroup cgroup "
	"rw,cpu,cpuacct\n";

static void slice_is(const char *p, size_t n, const char *want)
{
	assert_int_equal(n, strlen(want));
	assert_memory_equal(p, want, n);
}

static void mountinfo_lines(void **state)
{
	const char *p = mountinfo, *end = mountinfo + sizeof(mountinfo) - 1;
	struct ctp_cg_mount m;

	(void)state;
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	slice_is(m.point, m.point_len, "/");
	slice_is(m.fstype, m.fstype_len, "ext4");
	slice_is(m.super, m.super_len, "rw");
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	slice_is(m.fstype, m.fstype_len, "tmpfs");
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	slice_is(m.root, m.root_len, "/");
	slice_is(m.point, m.point_len, "/sys/fs/cgroup/cpu");
	slice_is(m.fstype, m.fstype_len, "cgroup");
	slice_is(m.super, m.super_len, "rw,cpu");
	assert_true(ctp_cg_mount_holds(&m, LIT("cpu")));
	assert_false(ctp_cg_mount_holds(&m, LIT("cpuacct")));
	assert_false(ctp_cg_mount_holds(&m, LIT("cpu,cpuacct")));
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	assert_true(ctp_cg_mount_holds(&m, LIT("memory")));
	assert_false(ctp_cg_mount_holds(&m, LIT("mem")));
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	assert_true(ctp_cg_mount_holds(&m, LIT("name=systemd")));
	assert_false(ctp_cg_mount_holds(&m, LIT("systemd")));
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	slice_is(m.fstype, m.fstype_len, "cgroup2");
	assert_false(ctp_cg_mount_holds(&m, LIT("rw"))); /* not v1 */
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	slice_is(m.root, m.root_len, "/docker/ab");
	slice_is(m.point, m.point_len, "/mnt/my\\040cg");
	assert_true(ctp_cg_mount_holds(&m, LIT("cpu,cpuacct")));
	assert_true(ctp_cg_mount_holds(&m, LIT("cpuacct")));
	assert_false(ctp_cg_mount_holds(&m, "", 0));
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 0);

	/* garbage lines are skipped and said so; the next one still parses */
	static const char bad[] = "1 2 3\n"
				  "1 2 0:1 / /x rw no-separator cgroup\n"
				  "1 2 0:1 / /x rw -\n"
				  "1 2 0:1 / /y rw - cgroup cgroup rw,pids\n"
				  "1 2 0:1 / /z rw - cgroup cgroup rw,cut";
	p = bad;
	end = bad + sizeof(bad) - 1;
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), -EINVAL);
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), -EINVAL);
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), -EINVAL);
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 1);
	slice_is(m.point, m.point_len, "/y");
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), -EMSGSIZE);
	assert_int_equal(ctp_cg_mountinfo_next(&p, end, &m), 0);
}

static void unescape(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(
		ctp_cg_unescape(LIT("/mnt/my\\040cg"), out, sizeof(out)), 10);
	assert_string_equal(out, "/mnt/my cg");
	assert_int_equal(
		ctp_cg_unescape(LIT("a\\134b\\011c\\012"), out, sizeof(out)),
		6);
	assert_string_equal(out, "a\\b\tc\n");
	/* not an escape: kept as is */
	assert_int_equal(ctp_cg_unescape(LIT("\\04"), out, sizeof(out)), 3);
	assert_string_equal(out, "\\04");
	assert_int_equal(ctp_cg_unescape(LIT("\\9ab"), out, sizeof(out)), 4);
	/* NUL, encoded or not; past a byte */
	assert_int_equal(ctp_cg_unescape(LIT("a\\000"), out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(ctp_cg_unescape("a\0b", 3, out, sizeof(out)), -EINVAL);
	assert_int_equal(ctp_cg_unescape(LIT("\\400"), out, sizeof(out)),
			 -EINVAL);
	/* room for the NUL too */
	assert_int_equal(
		ctp_cg_unescape(LIT("0123456789abcdef"), out, sizeof(out)),
		-ENAMETOOLONG);
	assert_int_equal(
		ctp_cg_unescape(LIT("0123456789abcde"), out, sizeof(out)), 15);
	assert_int_equal(ctp_cg_unescape("", 0, out, 0), -ENAMETOOLONG);
}

static void comma_lists(void **state)
{
	(void)state;
	assert_true(ctp_cg_list_has(LIT("rw,cpu,cpuacct"), LIT("cpu")));
	assert_true(ctp_cg_list_has(LIT("rw,cpu,cpuacct"), LIT("cpuacct")));
	assert_true(ctp_cg_list_has(LIT("rw,cpu,cpuacct"), LIT("rw")));
	assert_false(ctp_cg_list_has(LIT("rw,cpu,cpuacct"), LIT("cpua")));
	assert_false(ctp_cg_list_has(LIT("rw,cpu,cpuacct"), LIT("pu")));
	assert_false(ctp_cg_list_has(LIT("rw,cpu,cpuacct"), "", 0));
	assert_false(ctp_cg_list_has("", 0, LIT("cpu")));
}

static void rel_is(const char *path, const char *root, int ret,
		   const char *want)
{
	const char *rel = NULL;
	size_t n = 0;

	assert_int_equal(ctp_cg_path_in_mount(path, strlen(path), root,
					      strlen(root), &rel, &n),
			 ret);
	if (ret == 0) {
		assert_int_equal(n, strlen(want));
		assert_memory_equal(rel, want, n);
	}
}

static void paths_in_mounts(void **state)
{
	(void)state;
	rel_is("/a/b", "/", 0, "a/b");
	rel_is("/", "/", 0, "");
	rel_is("/a/b", "/a", 0, "b");
	rel_is("/a/b", "/a/", 0, "b");
	rel_is("/a", "/a", 0, "");
	rel_is("/docker/ab/x", "/docker/ab", 0, "x");
	/* not under the mount's root: invisible through it */
	rel_is("/ab", "/a", -ENOENT, NULL);
	rel_is("/", "/a", -ENOENT, NULL);
	rel_is("/x/y", "/a", -ENOENT, NULL);
	/* a task outside the reader's cgroup namespace */
	rel_is("/../other", "/", -EINVAL, NULL);
	rel_is("/a/./b", "/", -EINVAL, NULL);
	rel_is("/a/..", "/", -EINVAL, NULL);
	rel_is("/a/..b", "/", 0, "a/..b");
}

/* ---- Names and keys ------------------------------------------------------ */

static void v1_keys(void **state)
{
	char key[64];
	const char *c, *p;
	size_t cl, pl;

	(void)state;
	assert_int_equal(ctp_cg_v1_key(key, sizeof(key), LIT("cpu,cpuacct"),
				       LIT("/system.slice/x")),
			 30);
	assert_string_equal(key, "v1:cpu,cpuacct:/system.slice/x");
	assert_int_equal(
		ctp_cg_v1_key_split(key, strlen(key), &c, &cl, &p, &pl), 0);
	slice_is(c, cl, "cpu,cpuacct");
	slice_is(p, pl, "/system.slice/x");
	/* a path holding ':' splits at the first ':' after the controllers */
	assert_int_equal(ctp_cg_v1_key_split(LIT("v1:name=systemd:/a:b"), &c,
					     &cl, &p, &pl),
			 0);
	slice_is(c, cl, "name=systemd");
	slice_is(p, pl, "/a:b");
	assert_int_equal(
		ctp_cg_v1_key_split(LIT("v1:pids:/"), &c, &cl, &p, &pl), 0);
	slice_is(p, pl, "/");

	/* "v1:memory:/" and its NUL */
	assert_int_equal(ctp_cg_v1_key(key, 11, LIT("memory"), LIT("/")),
			 -ENAMETOOLONG);
	assert_int_equal(ctp_cg_v1_key(key, 12, LIT("memory"), LIT("/")), 11);
	assert_int_equal(ctp_cg_v1_key_split(LIT("v2:cpu:/"), &c, &cl, &p, &pl),
			 -EINVAL);
	assert_int_equal(ctp_cg_v1_key_split(LIT("v1::/"), &c, &cl, &p, &pl),
			 -EINVAL);
	assert_int_equal(ctp_cg_v1_key_split(LIT("v1:cpu:"), &c, &cl, &p, &pl),
			 -EINVAL);
	assert_int_equal(ctp_cg_v1_key_split(LIT("v1:cpu:x"), &c, &cl, &p, &pl),
			 -EINVAL);
	assert_int_equal(ctp_cg_v1_key_split(LIT("v1:cpu"), &c, &cl, &p, &pl),
			 -EINVAL);
	assert_int_equal(
		ctp_cg_v1_key_split(LIT("/system.slice"), &c, &cl, &p, &pl),
		-EINVAL);
}

static void hier_is(const char *ctrl, int ret, const char *want)
{
	char buf[32];

	assert_int_equal(ctp_cg_hier_name(ctrl, strlen(ctrl), buf, sizeof(buf)),
			 ret);
	if (ret >= 0)
		assert_string_equal(buf, want);
}

static void hierarchy_names(void **state)
{
	(void)state;
	hier_is("memory", 6, "memory");
	hier_is("cpu,cpuacct", 11, "cpu-cpuacct");
	hier_is("net_cls,net_prio", 16, "net_cls-net_prio");
	hier_is("name=systemd", 12, "name-systemd");
	hier_is("name=My.Hier", 12, "name-my.hier");
	hier_is("", -EINVAL, NULL);
	hier_is("a b", -EINVAL, NULL);
	hier_is("name=a..b", -EINVAL, NULL);
	hier_is("name=x.", -EINVAL, NULL);
	hier_is(".x", -EINVAL, NULL);
	hier_is("a:b", -EINVAL, NULL);
	hier_is("0123456789012345678901234567890", 31,
		"0123456789012345678901234567890");
	hier_is("01234567890123456789012345678901", -ENAMETOOLONG, NULL);
}

static void meta_is(enum ctp_cg_keyed_file f, const char *key, uint8_t unit,
		    uint8_t kind, uint8_t rule)
{
	struct ctp_cg_keymeta m;

	ctp_cg_key_meta(f, key, strlen(key), &m);
	if (m.unit != unit || m.kind != kind || m.rule != rule)
		fail_msg("%s: unit %u kind %u rule %u, expected %u %u %u", key,
			 m.unit, m.kind, m.rule, unit, kind, rule);
}

static void key_meta(void **state)
{
	(void)state;
	meta_is(CTP_CG_V2_CPU_STAT, "usage_usec", CTP_UNIT_US, CTP_KIND_COUNTER,
		CTP_RULE_SUM);
	meta_is(CTP_CG_V2_CPU_STAT, "core_sched.force_idle_usec", CTP_UNIT_US,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_CPU_STAT, "nr_throttled", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V1_CPU_STAT, "throttled_time", CTP_UNIT_NS,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V1_CPU_STAT, "wait_sum", CTP_UNIT_NS, CTP_KIND_COUNTER,
		CTP_RULE_SUM);
	meta_is(CTP_CG_V1_CPU_STAT, "something", CTP_UNIT_NONE,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_MEMORY_STAT, "anon", CTP_UNIT_BYTES, CTP_KIND_GAUGE,
		CTP_RULE_MAX);
	meta_is(CTP_CG_V2_MEMORY_STAT, "anon_thp", CTP_UNIT_BYTES,
		CTP_KIND_GAUGE, CTP_RULE_MAX);
	meta_is(CTP_CG_V2_MEMORY_STAT, "zswapped", CTP_UNIT_BYTES,
		CTP_KIND_GAUGE, CTP_RULE_MAX);
	meta_is(CTP_CG_V2_MEMORY_STAT, "zswpout", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_MEMORY_STAT, "pgfault", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_MEMORY_STAT, "pswpin", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_MEMORY_STAT, "workingset_refault_anon",
		CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_MEMORY_STAT, "thp_fault_alloc", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V2_MEMORY_EVENTS, "oom_kill", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V1_MEMORY_STAT, "total_pgfault", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V1_MEMORY_STAT, "pgpgin", CTP_UNIT_COUNT,
		CTP_KIND_COUNTER, CTP_RULE_SUM);
	meta_is(CTP_CG_V1_MEMORY_STAT, "total_rss", CTP_UNIT_BYTES,
		CTP_KIND_GAUGE, CTP_RULE_MAX);
	meta_is(CTP_CG_V1_MEMORY_STAT, "hierarchical_memory_limit",
		CTP_UNIT_BYTES, CTP_KIND_GAUGE, CTP_RULE_MAX);
}

static void v1_unlimited(void **state)
{
	(void)state;
	/* LONG_MAX / PAGE_SIZE * PAGE_SIZE for 4, 16 and 64 KiB pages */
	assert_true(9223372036854771712ull >= CTP_CG_V1_UNLIMITED);
	assert_true(9223372036854759424ull >= CTP_CG_V1_UNLIMITED);
	assert_true(9223372036854710272ull >= CTP_CG_V1_UNLIMITED);
	/* a real limit, even a silly one, is below */
	assert_true(9223372036854710271ull < CTP_CG_V1_UNLIMITED);
	assert_true((1ull << 62) < CTP_CG_V1_UNLIMITED);
}

/* ctp_cg_pairs_seek answers as ctp_id_pairs_find whatever the order of
 * the asks and wherever the cursor stood, and leaves it at the first pair
 * not below the id asked. */
static void check_seek(const struct ctp_id_pair *m, size_t n, uint32_t id,
		       size_t *pos)
{
	const struct ctp_id_pair *want = ctp_id_pairs_find(m, n, id);
	const struct ctp_id_pair *got = ctp_cg_pairs_seek(m, n, id, pos);
	size_t lb = 0;

	while (lb < n && m[lb].id < id)
		lb++;
	if (got != want || *pos != lb)
		fail_msg("id %u: got %p want %p, pos %zu want %zu", id,
			 (const void *)got, (const void *)want, *pos, lb);
}

static void pairs_seek(void **state)
{
	struct ctp_id_pair m[300];
	size_t n = 0, pos;
	uint32_t x = 1;

	(void)state;
	/* Odd ids 3..599 but runs of gaps, as a cgroup's tids among
	 * others'. */
	for (uint32_t id = 3; n < 300; id += (n % 17 == 0) ? 40 : 2)
		m[n] = (struct ctp_id_pair){.id = id, .val = (uint32_t)n}, n++;
	for (size_t len = 0; len <= n; len += len < 5 ? 1 : 37) {
		uint32_t top = len ? m[len - 1].id + 3 : 5;

		pos = 0; /* rising, every id: listed or not */
		for (uint32_t id = 0; id <= top; id++)
			check_seek(m, len, id, &pos);
		pos = len; /* falling */
		for (uint32_t id = top + 1; id-- > 0;)
			check_seek(m, len, id, &pos);
		for (int k = 0; k < 2000; k++) { /* any order, any cursor */
			x = x * 1103515245u + 12345u;
			pos = (x >> 8) % (len + 3);
			x = x * 1103515245u + 12345u;
			check_seek(m, len, (x >> 8) % (top + 1), &pos);
		}
	}
	/* Found means the pair itself, its val intact. */
	pos = 0;
	assert_int_equal(ctp_cg_pairs_seek(m, n, m[42].id, &pos)->val, 42);
	assert_int_equal(pos, 42);
	assert_null(ctp_cg_pairs_seek(m, n, m[42].id + 1, &pos));
	assert_int_equal(pos, 43);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(u64_values),
		cmocka_unit_test(u64_max_values),
		cmocka_unit_test(i64_values),
		cmocka_unit_test(cpu_max),
		cmocka_unit_test(one_line),
		cmocka_unit_test(keyed_real),
		cmocka_unit_test(keyed_garbage),
		cmocka_unit_test(keyed_cap),
		cmocka_unit_test(membership),
		cmocka_unit_test(mountinfo_lines),
		cmocka_unit_test(unescape),
		cmocka_unit_test(comma_lists),
		cmocka_unit_test(paths_in_mounts),
		cmocka_unit_test(v1_keys),
		cmocka_unit_test(hierarchy_names),
		cmocka_unit_test(key_meta),
		cmocka_unit_test(v1_unlimited),
		cmocka_unit_test(pairs_seek),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
