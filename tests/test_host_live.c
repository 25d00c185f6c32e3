/* SPDX-License-Identifier: MIT */
/*
 * ctprof-core with host-context on the live /proc and /sys: every host value
 * equals what an independent, deliberately naive read of the same source
 * gives (uname(2), MemTotal, the online CPU list and sysconf, cpuinfo,
 * hugepages, THP, sched_* tunables, governors, node directories, cmdline,
 * delay accounting, config.gz through zlib's gz* API), and the collector's
 * own figures agree with getrusage(RUSAGE_CHILDREN) and the allocator it
 * was built with.
 *
 * Exits 77 (skipped) only when the host lacks /proc/meminfo or
 * /sys/devices/system/cpu/online; a source that is merely absent (no
 * cpufreq in a VM, no config.gz) is checked to be absent in the snapshot.
 */
#include <dirent.h>
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "e2e_util.h"
#include "reader.h"
#include "test_host_util.h"

#define SKIP 77

static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

static struct host_run run;

/* A whole file with surrounding whitespace removed, or NULL. */
static char *slurp_trim(const char *path)
{
	char *b = NULL, *s, *e;

	if (e2e_read_file(path, &b, NULL) < 0)
		return NULL;
	for (s = b; *s && strchr(" \t\n", *s); s++)
		;
	e = s + strlen(s);
	while (e > s && strchr(" \t\n", e[-1]))
		e--;
	memmove(b, s, (size_t)(e - s));
	b[e - s] = '\0';
	return b;
}

/* Value of "Key:" in /proc/meminfo as a number, -1 when missing. */
static long long meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	long long v = -1;
	size_t kl = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = atoll(line + kl + 1);
	fclose(f);
	return v;
}

/* Count of a "0-3,8" list, naively with strtoul; -1 on garbage. */
static long count_list(const char *s)
{
	long n = 0;

	while (*s) {
		char *e;
		unsigned long lo = strtoul(s, &e, 10), hi = lo;

		if (e == s)
			return -1;
		if (*e == '-')
			hi = strtoul(e + 1, &e, 10);
		n += (long)(hi - lo + 1);
		s = *e == ',' ? e + 1 : e;
		if (*e && *e != ',')
			return -1;
	}
	return n;
}

static void test_uname(void **state)
{
	struct utsname u;

	(void)state;
	nbad = 0;
	assert_int_equal(uname(&u), 0);
	CHECK(host_str_is(run.snap, "host.uname.sysname", u.sysname), "x");
	CHECK(host_str_is(run.snap, "host.uname.release", u.release), "x");
	CHECK(host_str_is(run.snap, "host.uname.machine", u.machine), "x");
	if (nbad)
		fail();
}

static void test_memory(void **state)
{
	long long total = meminfo("MemTotal");
	long long hp_total = meminfo("HugePages_Total");
	long long hp_size = meminfo("Hugepagesize");

	(void)state;
	nbad = 0;
	assert_true(total > 0);
	CHECK(host_u64_is(run.snap, "host.mem.total", (uint64_t)total * 1024),
	      "MemTotal");
	if (hp_total >= 0) {
		CHECK(host_u64_is(run.snap, "host.hugepages.total",
				  (uint64_t)hp_total),
		      "HugePages_Total");
		CHECK(host_u64_is(run.snap, "host.hugepages.size",
				  (uint64_t)hp_size * 1024),
		      "Hugepagesize");
		/* Free pages move; none configured means none free. */
		if (hp_total == 0)
			CHECK(host_u64_is(run.snap, "host.hugepages.free", 0),
			      "HugePages_Free");
	} else {
		CHECK(host_value(run.snap, "host.hugepages.total").type ==
			      CTP_VALUE_ABSENT,
		      "hugepages without HugePages_Total");
	}
	if (nbad)
		fail();
}

static void test_cpus(void **state)
{
	char *online = slurp_trim("/sys/devices/system/cpu/online");
	long n = count_list(online);
	long cpus[1024], nc = 0;

	(void)state;
	nbad = 0;
	assert_true(n > 0);
	CHECK(host_u64_is(run.snap, "host.cpu.online", (uint64_t)n), "online");
	CHECK(sysconf(_SC_NPROCESSORS_ONLN) == n, "sysconf says %ld",
	      sysconf(_SC_NPROCESSORS_ONLN));
	/* The CPUs of the list, for the governors. */
	for (char *s = online; *s && nc < 1024;) {
		char *e;
		long lo = strtol(s, &e, 10), hi = lo;

		if (*e == '-')
			hi = strtol(e + 1, &e, 10);
		for (long c = lo; c <= hi && nc < 1024; c++)
			cpus[nc++] = c;
		s = *e ? e + 1 : e;
	}
	free(online);
	for (long i = 0; i < nc; i++) {
		char path[128], name[64];
		char *gov;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%ld/cpufreq/"
			 "scaling_governor",
			 cpus[i]);
		snprintf(name, sizeof(name), "host.cpufreq.governor.cpu%ld",
			 cpus[i]);
		gov = slurp_trim(path);
		if (gov)
			CHECK(host_str_is(run.snap, name, gov), "%s", name);
		else
			CHECK(!ctp_snap_field_find(run.snap, name),
			      "%s without cpufreq", name);
		free(gov);
	}
	if (nbad)
		fail();
}

static void test_cpuinfo(void **state)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096], model[4096] = "", vendor[4096] = "";

	(void)state;
	nbad = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && line[0] != '\n') {
		char *colon = strchr(line, ':'), *v;

		if (!colon)
			continue;
		v = colon + 1 + strspn(colon + 1, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (!strncmp(line, "model name", 10) && !model[0])
			strcpy(model, v);
		if (!strncmp(line, "vendor_id", 9) && !vendor[0])
			strcpy(vendor, v);
	}
	fclose(f);
	if (model[0])
		CHECK(host_str_is(run.snap, "host.cpu.model", model), "model");
	else
		CHECK(host_value(run.snap, "host.cpu.model").type ==
			      CTP_VALUE_ABSENT,
		      "model without a model name line");
	if (vendor[0])
		CHECK(host_str_is(run.snap, "host.cpu.vendor", vendor),
		      "vendor");
	else
		CHECK(host_value(run.snap, "host.cpu.vendor").type ==
			      CTP_VALUE_ABSENT,
		      "vendor without vendor_id (arm64)");
	if (nbad)
		fail();
}

static void menu(const char *file, const char *menu_f, const char *active_f)
{
	char path[128], *m;

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s",
		 file);
	m = slurp_trim(path);
	if (!m) {
		CHECK(host_value(run.snap, menu_f).type == CTP_VALUE_ABSENT,
		      "%s without %s", menu_f, path);
		return;
	}
	CHECK(host_str_is(run.snap, menu_f, m), "%s", menu_f);
	char *o = strchr(m, '['), *c = o ? strchr(o, ']') : NULL;
	if (o && c) {
		*c = '\0';
		CHECK(host_str_is(run.snap, active_f, o + 1), "%s", active_f);
	}
	free(m);
}

static void test_files(void **state)
{
	char *cmd = slurp_trim("/proc/cmdline");
	char *da = slurp_trim("/proc/sys/kernel/task_delayacct");

	(void)state;
	nbad = 0;
	menu("enabled", "host.thp.enabled.menu", "host.thp.enabled.active");
	menu("defrag", "host.thp.defrag.menu", "host.thp.defrag.active");
	if (cmd)
		CHECK(host_str_is(run.snap, "host.cmdline", cmd), "cmdline");
	CHECK(host_str_is(run.snap, "host.task_delayacct",
			  !da		     ? "config-off"
			  : !strcmp(da, "1") ? "on"
					     : "runtime-off"),
	      "task_delayacct");
	free(cmd);
	free(da);
	if (nbad)
		fail();
}

static void test_xacct(void **state)
{
	gzFile gz = gzopen("/proc/config.gz", "rb");
	char line[512];
	const char *want = "unknown";

	(void)state;
	nbad = 0;
	if (!gz) {
		CHECK(host_value(run.snap, "host.config_task_xacct").type ==
			      CTP_VALUE_ABSENT,
		      "xacct without /proc/config.gz");
		if (nbad)
			fail();
		return;
	}
	while (gzgets(gz, line, sizeof(line))) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "CONFIG_TASK_XACCT=y")) {
			want = "on";
			break;
		}
		if (!strcmp(line, "# CONFIG_TASK_XACCT is not set")) {
			want = "off";
			break;
		}
	}
	gzclose(gz);
	CHECK(host_str_is(run.snap, "host.config_task_xacct", want), "xacct");
	if (nbad)
		fail();
}

static void test_sched(void **state)
{
	DIR *d = opendir("/proc/sys/kernel");
	struct dirent *e;
	size_t seen = 0, fields = 0;
	const struct ctp_snap_field *fs = ctp_snap_fields(run.snap);

	(void)state;
	nbad = 0;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], name[300], *text;
		struct ctp_value v;
		struct stat sb;

		if (strncmp(e->d_name, "sched_", 6))
			continue;
		snprintf(path, sizeof(path), "/proc/sys/kernel/%s", e->d_name);
		if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		text = slurp_trim(path);
		if (!text)
			continue;
		snprintf(name, sizeof(name), "host.sched.%s", e->d_name + 6);
		v = host_value(run.snap, name);
		if (v.type == CTP_TYPE_I64) {
			char num[32];

			snprintf(num, sizeof(num), "%" PRId64, v.i64);
			CHECK(!strcmp(num, text), "%s = %s, file says %s", name,
			      num, text);
		} else {
			CHECK(host_str_is(run.snap, name, text), "%s", name);
		}
		seen++;
		free(text);
	}
	closedir(d);
	for (size_t i = 0; i < ctp_snap_n_fields(run.snap); i++)
		fields += !strncmp(fs[i].name, "host.sched.", 11);
	CHECK(fields == seen, "%zu host.sched.* fields, %zu tunables", fields,
	      seen);
	if (nbad)
		fail();
}

static void test_numa(void **state)
{
	DIR *d = opendir("/sys/devices/system/node");
	struct dirent *e;
	uint64_t n = 0;

	(void)state;
	nbad = 0;
	if (!d) {
		CHECK(host_value(run.snap, "host.numa.nodes").type ==
			      CTP_VALUE_ABSENT,
		      "nodes without /sys/devices/system/node");
		if (nbad)
			fail();
		return;
	}
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' &&
		    e->d_name[4] <= '9')
			n++;
	closedir(d);
	/* Offline nodes keep no directory (drivers/base/node.c). */
	CHECK(host_u64_is(run.snap, "host.numa.nodes", n), "nodes");
	if (nbad)
		fail();
}

static void test_self(void **state)
{
	struct rusage ch;
	struct ctp_value v;
	bool je = strcmp(HOST_EXPECT_ALLOCATOR, "jemalloc") == 0;

	(void)state;
	nbad = 0;
	/* The only child this process has waited for is the capture. */
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ch), 0);
	CHECK(host_str_is(run.snap, "host.self.allocator",
			  HOST_EXPECT_ALLOCATOR),
	      "allocator");
	v = host_value(run.snap, "host.self.maxrss");
	CHECK(v.type == CTP_TYPE_U64 && v.u64 > 0 &&
		      v.u64 <= (uint64_t)ch.ru_maxrss * 1024,
	      "maxrss %" PRIu64 " vs the child's %ld KiB", v.u64, ch.ru_maxrss);
	v = host_value(run.snap, "host.self.cpu_user");
	CHECK(v.type == CTP_TYPE_U64 &&
		      v.u64 <= (uint64_t)ch.ru_utime.tv_sec * 1000000000u +
				       (uint64_t)ch.ru_utime.tv_usec * 1000u,
	      "cpu_user");
	v = host_value(run.snap, "host.self.cpu_system");
	CHECK(v.type == CTP_TYPE_U64 &&
		      v.u64 <= (uint64_t)ch.ru_stime.tv_sec * 1000000000u +
				       (uint64_t)ch.ru_stime.tv_usec * 1000u,
	      "cpu_system");
	if (je) {
		uint64_t al =
			host_value(run.snap, "host.self.jemalloc.allocated")
				.u64;
		uint64_t ac =
			host_value(run.snap, "host.self.jemalloc.active").u64;

		CHECK(al > 0 && ac >= al,
		      "allocated %" PRIu64 " active %" PRIu64, al, ac);
		CHECK(host_value(run.snap, "host.self.jemalloc.resident").u64 >=
			      ac,
		      "resident < active");
		CHECK(host_value(run.snap, "host.self.jemalloc.narenas").u64 >=
			      1,
		      "narenas");
	} else {
		v = host_value(run.snap, "host.self.glibc.uordblks");
		CHECK(v.type == CTP_TYPE_U64 && (v.u64 > 0 || HOST_ASAN),
		      "uordblks");
	}
	if (nbad)
		fail();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uname), cmocka_unit_test(test_memory),
		cmocka_unit_test(test_cpus),  cmocka_unit_test(test_cpuinfo),
		cmocka_unit_test(test_files), cmocka_unit_test(test_xacct),
		cmocka_unit_test(test_sched), cmocka_unit_test(test_numa),
		cmocka_unit_test(test_self),
	};
	int r;

	if (access("/proc/meminfo", R_OK) < 0 ||
	    access("/sys/devices/system/cpu/online", R_OK) < 0) {
		fprintf(stderr, "skipped: no readable /proc/meminfo or "
				"/sys/devices/system/cpu/online\n");
		return SKIP;
	}
	if (host_capture(NULL, NULL, &run) != 0) {
		fprintf(stderr, "capture failed\n");
		return 1;
	}
	r = cmocka_run_group_tests(tests, NULL, NULL);
	host_run_done(&run);
	return r;
}
