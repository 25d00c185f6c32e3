/* SPDX-License-Identifier: MIT */
/*
 * host-context's pure parsers (plugins/host-context/host_parse.c) on literal
 * kernel text: cpuinfo (x86, arm64), meminfo, THP menus, sched_* tunables,
 * cpu and node online lists, single-value files; garbage, truncation and
 * overflow.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "host_parse.h"

#define LIT(s) s, sizeof(s) - 1

static void assert_str(struct ctp_hc_str s, const char *want)
{
	if (!s.ptr || s.len != strlen(want) || memcmp(s.ptr, want, s.len))
		fail_msg("got \"%.*s\", want \"%s\"", (int)s.len,
			 s.ptr ? s.ptr : "(null)", want);
}

/* ---- cpuinfo ---- */

/* arch/x86/kernel/cpu/proc.c, two processors of different models. */
static const char cpuinfo_x86[] =
	"processor\t: 0\n"
	"vendor_id\t: GenuineIntel\n"
	"cpu family\t: 6\n"
	"model\t\t: 85\n"
	"model name\t: Intel(R) Xeon(R) Processor @ 2.50GHz\n"
	"stepping\t: 7\n"
	"flags\t\t: fpu vme de pse tsc msr pae mce\n"
	"power management:\n"
	"\n"
	"processor\t: 1\n"
	"vendor_id\t: AuthenticAMD\n"
	"model name\t: AMD EPYC 7763 64-Core Processor\n"
	"\n";

/* arch/arm64/kernel/cpuinfo.c: no vendor_id, no model name. */
static const char cpuinfo_arm64[] =
	"processor\t: 0\n"
	"BogoMIPS\t: 243.75\n"
	"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"
	"CPU implementer\t: 0x41\n"
	"CPU architecture: 8\n"
	"CPU variant\t: 0x3\n"
	"CPU part\t: 0xd0c\n"
	"CPU revision\t: 1\n"
	"\n"
	"processor\t: 1\n"
	"BogoMIPS\t: 243.75\n"
	"\n";

/* The same kernel read by a 32-bit (compat) task prints a model name. */
static const char cpuinfo_arm64_compat[] =
	"processor\t: 0\n"
	"model name\t: ARMv8 Processor rev 1 (v8l)\n"
	"BogoMIPS\t: 243.75\n"
	"CPU implementer\t: 0x41\n"
	"\n";

static void test_cpuinfo_x86(void **state)
{
	struct ctp_hc_cpuinfo ci;

	(void)state;
	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(cpuinfo_x86), &ci), 0);
	assert_true(ci.has_model && ci.has_vendor);
	assert_str(ci.model, "Intel(R) Xeon(R) Processor @ 2.50GHz");
	assert_str(ci.vendor, "GenuineIntel");
}

static void test_cpuinfo_arm64(void **state)
{
	struct ctp_hc_cpuinfo ci;

	(void)state;
	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(cpuinfo_arm64), &ci),
			 -ENODATA);
	assert_false(ci.has_model);
	assert_false(ci.has_vendor);

	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(cpuinfo_arm64_compat), &ci),
			 0);
	assert_true(ci.has_model);
	assert_false(ci.has_vendor);
	assert_str(ci.model, "ARMv8 Processor rev 1 (v8l)");
}

static void test_cpuinfo_odd(void **state)
{
	struct ctp_hc_cpuinfo ci;
	/* Cut inside the model line: the half value is not used. */
	static const char cut[] = "processor\t: 0\n"
				  "vendor_id\t: GenuineIntel\n"
				  "model name\t: Intel(R) Xe";
	/* An empty value is skipped; a later line of the block counts. */
	static const char empty[] = "vendor_id\t:\n"
				    "model name\t:   \n"
				    "model name\t: Second\n"
				    "vendor_id\t: V\n";
	/* A key that only starts like ours is another key. */
	static const char prefix[] = "model name extra\t: nope\n"
				     "vendor_id2\t: nope\n\n";
	static const char nul[] = "vendor_id\t: Gen\0uine\n"
				  "model name\t: M\n";
	static const char junk[] = "\x01\x02\xff garbage without colon\n"
				   "::::\n";

	(void)state;
	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(cut), &ci), 0);
	assert_true(ci.has_vendor);
	assert_false(ci.has_model);

	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(empty), &ci), 0);
	assert_str(ci.model, "Second");
	assert_str(ci.vendor, "V");

	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(prefix), &ci), -ENODATA);
	/* A line with a NUL byte is dropped, the others kept. */
	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(nul), &ci), 0);
	assert_false(ci.has_vendor);
	assert_str(ci.model, "M");

	assert_int_equal(ctp_hc_parse_cpuinfo(LIT(junk), &ci), -ENODATA);
	assert_int_equal(ctp_hc_parse_cpuinfo("", 0, &ci), -ENODATA);
	/* A blank line first: the first block is empty. */
	assert_int_equal(ctp_hc_parse_cpuinfo(LIT("\nmodel name\t: X\n"), &ci),
			 -ENODATA);
}

/* ---- meminfo ---- */

/* fs/proc/meminfo.c on a 6.1 x86 kernel. */
static const char meminfo[] = "MemTotal:       24684096 kB\n"
			      "MemFree:        20108300 kB\n"
			      "MemAvailable:   22785980 kB\n"
			      "Buffers:          152444 kB\n"
			      "AnonHugePages:         0 kB\n"
			      "HugePages_Total:      64\n"
			      "HugePages_Free:       60\n"
			      "HugePages_Rsvd:        0\n"
			      "HugePages_Surp:        0\n"
			      "Hugepagesize:       2048 kB\n"
			      "Hugetlb:          131072 kB\n"
			      "DirectMap4k:      345984 kB\n";

static void test_meminfo(void **state)
{
	struct ctp_hc_meminfo mi;

	(void)state;
	assert_int_equal(ctp_hc_parse_meminfo(LIT(meminfo), &mi), 0);
	assert_int_equal(mi.present, CTP_HC_MEM_ALL);
	assert_int_equal(mi.mem_total_bytes, 24684096ull * 1024);
	assert_int_equal(mi.hp_total, 64);
	assert_int_equal(mi.hp_free, 60);
	assert_int_equal(mi.hp_size_bytes, 2048ull * 1024);
}

static void test_meminfo_missing_and_bad(void **state)
{
	struct ctp_hc_meminfo mi;
	/* No CONFIG_HUGETLBFS: no HugePages_* lines at all. */
	static const char nohuge[] = "MemTotal:        8000000 kB\n"
				     "MemFree:         1000000 kB\n";
	/* 2^54 KiB is 2^64 bytes: does not fit once scaled. */
	static const char scaled[] = "MemTotal:       18014398509481984 kB\n"
				     "HugePages_Total:       0\n"
				     "HugePages_Free:        0\n"
				     "Hugepagesize:       2048 kB\n";
	static const char digits[] = "MemTotal:       1 kB\n"
				     "HugePages_Total: 99999999999999999999\n"
				     "HugePages_Free:        0\n"
				     "Hugepagesize:       2048 kB\n";
	static const char garbage[] = "MemTotal:       lots kB\n"
				      "HugePages_Total:      1 kB\n"
				      "HugePages_Free:       -1\n"
				      "Hugepagesize:       2048 MB\n";
	static const char cut[] = "MemTotal:       100 kB\n"
				  "HugePages_Total:      1\n"
				  "HugePages_Free:       1\n"
				  "Hugepagesize:       2048 kB";
	static const char cut_unit[] = "MemTotal:       100 k";

	(void)state;
	assert_int_equal(ctp_hc_parse_meminfo(LIT(nohuge), &mi), -ENODATA);
	assert_int_equal(mi.present, CTP_HC_MEM_TOTAL);
	assert_int_equal(mi.mem_total_bytes, 8000000ull * 1024);

	assert_int_equal(ctp_hc_parse_meminfo(LIT(scaled), &mi), -ERANGE);
	assert_int_equal(mi.present,
			 CTP_HC_HP_TOTAL | CTP_HC_HP_FREE | CTP_HC_HP_SIZE);
	assert_int_equal(mi.hp_total, 0);

	assert_int_equal(ctp_hc_parse_meminfo(LIT(digits), &mi), -ERANGE);
	assert_int_equal(mi.present,
			 CTP_HC_MEM_TOTAL | CTP_HC_HP_FREE | CTP_HC_HP_SIZE);
	assert_int_equal(mi.mem_total_bytes, 1024);

	/* Every value bad: word, unit where none belongs, sign, MB. */
	assert_int_equal(ctp_hc_parse_meminfo(LIT(garbage), &mi), -EINVAL);
	assert_int_equal(mi.present, 0);

	assert_int_equal(ctp_hc_parse_meminfo(LIT(cut), &mi), -EMSGSIZE);
	assert_int_equal(mi.present,
			 CTP_HC_MEM_TOTAL | CTP_HC_HP_TOTAL | CTP_HC_HP_FREE);
	assert_int_equal(ctp_hc_parse_meminfo(LIT(cut_unit), &mi), -EMSGSIZE);
	assert_int_equal(mi.present, 0);

	assert_int_equal(ctp_hc_parse_meminfo("", 0, &mi), -ENODATA);
	assert_int_equal(mi.present, 0);
}

/* ---- THP menus ---- */

static void test_menu(void **state)
{
	struct ctp_hc_menu m;

	(void)state;
	assert_int_equal(ctp_hc_parse_menu(LIT("always [madvise] never\n"), &m),
			 0);
	assert_str(m.menu, "always [madvise] never");
	assert_true(m.has_active);
	assert_str(m.active, "madvise");

	assert_int_equal(
		ctp_hc_parse_menu(
			LIT("always defer [defer+madvise] madvise never\n"),
			&m),
		0);
	assert_str(m.menu, "always defer [defer+madvise] madvise never");
	assert_str(m.active, "defer+madvise");

	assert_int_equal(ctp_hc_parse_menu(LIT("[always] madvise never"), &m),
			 0);
	assert_str(m.active, "always");

	/* Two choices marked (never printed by the kernel): the first. */
	assert_int_equal(ctp_hc_parse_menu(LIT("[a] [b]\n"), &m), 0);
	assert_str(m.active, "a");
}

static void test_menu_bad(void **state)
{
	struct ctp_hc_menu m;

	(void)state;
	/* No choice marked: the menu is kept, the choice is absent. */
	assert_int_equal(ctp_hc_parse_menu(LIT("always madvise never\n"), &m),
			 -ENODATA);
	assert_str(m.menu, "always madvise never");
	assert_false(m.has_active);
	/* Cut before the ']'. */
	assert_int_equal(ctp_hc_parse_menu(LIT("always [madv"), &m), -EINVAL);
	assert_str(m.menu, "always [madv");
	assert_false(m.has_active);
	assert_int_equal(ctp_hc_parse_menu(LIT("always [] never\n"), &m),
			 -EINVAL);
	assert_false(m.has_active);
	assert_int_equal(ctp_hc_parse_menu(LIT("a ]b[ c\n"), &m), -EINVAL);
	assert_false(m.has_active);
	assert_int_equal(ctp_hc_parse_menu(LIT("\n"), &m), -ENODATA);
	assert_str(m.menu, "");
	/* A NUL cannot be stored: nothing is set. */
	assert_int_equal(ctp_hc_parse_menu(LIT("[al\0ways]\n"), &m), -EINVAL);
	assert_null(m.menu.ptr);
	assert_false(m.has_active);
}

/* ---- sched tunables ---- */

static void test_sched_name(void **state)
{
	char out[CTP_HC_NAME_MAX + 1], tiny[16], longname[200];

	(void)state;
	assert_int_equal(
		ctp_hc_sched_field_name("sched_rt_period_us", out, sizeof(out)),
		0);
	assert_string_equal(out, "host.sched.rt_period_us");
	assert_int_equal(
		ctp_hc_sched_field_name("sched_util-clamp_2", out, sizeof(out)),
		0);
	assert_string_equal(out, "host.sched.util-clamp_2");
	assert_int_equal(ctp_hc_sched_field_name("sched_", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(ctp_hc_sched_field_name("panic", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(ctp_hc_sched_field_name("sche", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(
		ctp_hc_sched_field_name("sched_Upper", out, sizeof(out)),
		-EINVAL);
	assert_int_equal(ctp_hc_sched_field_name("sched_a.b", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(ctp_hc_sched_field_name("sched_a b", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(
		ctp_hc_sched_field_name("sched_\xc3\xa9", out, sizeof(out)),
		-EINVAL);
	/* 11 + 117 = 128 fits; one more does not. */
	memset(longname, 'x', sizeof(longname));
	memcpy(longname, "sched_", 6);
	longname[6 + 117] = '\0';
	assert_int_equal(ctp_hc_sched_field_name(longname, out, sizeof(out)),
			 0);
	assert_int_equal(strlen(out), CTP_HC_NAME_MAX);
	longname[6 + 117] = 'x';
	longname[6 + 118] = '\0';
	assert_int_equal(ctp_hc_sched_field_name(longname, out, sizeof(out)),
			 -ENAMETOOLONG);
	/* The caller's buffer is too small. */
	assert_int_equal(ctp_hc_sched_field_name("sched_rt_period_us", tiny,
						 sizeof(tiny)),
			 -ENAMETOOLONG);
}

static void expect_int(const char *text, size_t len, int64_t want)
{
	struct ctp_hc_tunable t;

	assert_int_equal(ctp_hc_parse_tunable(text, len, &t), 0);
	if (!t.is_int)
		fail_msg("\"%.*s\" should be the integer %lld", (int)len, text,
			 (long long)want);
	assert_true(t.value == want);
}

static void expect_text(const char *text, size_t len, const char *want)
{
	struct ctp_hc_tunable t;

	assert_int_equal(ctp_hc_parse_tunable(text, len, &t), 0);
	if (t.is_int)
		fail_msg("\"%.*s\" should stay text", (int)len, text);
	assert_str(t.text, want);
}

static void test_tunable(void **state)
{
	struct ctp_hc_tunable t;

	(void)state;
	expect_int(LIT("1000000\n"), 1000000);
	expect_int(LIT("-1\n"), -1);
	expect_int(LIT("0\n"), 0);
	expect_int(LIT(" 5 \n"), 5);
	expect_int(LIT("9223372036854775807\n"), INT64_MAX);
	expect_int(LIT("-9223372036854775808\n"), INT64_MIN);
	/* Not canonical, so not rebuildable from a number: kept as text. */
	expect_text(LIT("007\n"), "007");
	expect_text(LIT("+1\n"), "+1");
	expect_text(LIT("-0\n"), "-0");
	expect_text(LIT("-\n"), "-");
	expect_text(LIT("9223372036854775808\n"), "9223372036854775808");
	expect_text(LIT("-9223372036854775809\n"), "-9223372036854775809");
	expect_text(LIT("18446744073709551616\n"), "18446744073709551616");
	/* Several values: internal blanks kept verbatim. */
	expect_text(LIT("  1024\t512\n"), "1024\t512");
	expect_text(LIT("12abc\n"), "12abc");
	expect_text(LIT("\n"), "");
	expect_text("", 0, "");
	assert_int_equal(ctp_hc_parse_tunable(LIT("1\0002\n"), &t), -EINVAL);
}

/* ---- online lists and node directories ---- */

static void test_online(void **state)
{
	uint64_t w[4];

	(void)state;
	/* drivers/base/cpu.c "%*pbl\n" */
	assert_int_equal(ctp_hc_parse_online(LIT("0-3\n"), w, 4), 4);
	assert_int_equal(w[0], 0xf);
	assert_int_equal(ctp_hc_parse_online(LIT("0\n"), w, 4), 1);
	assert_int_equal(ctp_hc_parse_online(LIT("0-3,8-11,64\n"), w, 4), 9);
	assert_int_equal(w[0], 0xf0f);
	assert_int_equal(w[1], 1);
	assert_int_equal(ctp_hc_parse_online(LIT("0-255"), w, 4), 256);
	/* No CPU/node online (an empty list) is a measured 0. */
	assert_int_equal(ctp_hc_parse_online(LIT("\n"), w, 4), 0);
	assert_int_equal(ctp_hc_parse_online("", 0, w, 4), 0);
}

static void test_online_bad(void **state)
{
	uint64_t w[4];

	(void)state;
	assert_int_equal(ctp_hc_parse_online(LIT("0-x\n"), w, 4), -EINVAL);
	assert_int_equal(ctp_hc_parse_online(LIT("3-1\n"), w, 4), -EINVAL);
	/* Truncated inside a range or after a comma. */
	assert_int_equal(ctp_hc_parse_online(LIT("0-"), w, 4), -EINVAL);
	assert_int_equal(ctp_hc_parse_online(LIT("0,"), w, 4), -EINVAL);
	assert_int_equal(ctp_hc_parse_online(LIT("0 1\n"), w, 4), -EINVAL);
	assert_int_equal(ctp_hc_parse_online(LIT("-1\n"), w, 4), -EINVAL);
	/* Past the bitmap, and past 64 bits. */
	assert_int_equal(ctp_hc_parse_online(LIT("0-256\n"), w, 4), -ERANGE);
	assert_int_equal(
		ctp_hc_parse_online(LIT("99999999999999999999\n"), w, 4),
		-ERANGE);
	assert_int_equal(ctp_hc_parse_online(LIT("0\0-1\n"), w, 4), -EINVAL);
}

static void test_node_dir(void **state)
{
	(void)state;
	assert_true(ctp_hc_is_node_dir("node0"));
	assert_true(ctp_hc_is_node_dir("node12"));
	assert_false(ctp_hc_is_node_dir("node"));
	assert_false(ctp_hc_is_node_dir("nodes"));
	assert_false(ctp_hc_is_node_dir("node1a"));
	assert_false(ctp_hc_is_node_dir("online"));
	assert_false(ctp_hc_is_node_dir("cpu0"));
}

/* ---- single values ---- */

static void test_trim(void **state)
{
	struct ctp_hc_str s;

	(void)state;
	assert_int_equal(
		ctp_hc_trim(LIT("BOOT_IMAGE=/vmlinuz ro  quiet isolcpus=2,3\n"),
			    &s),
		0);
	assert_str(s, "BOOT_IMAGE=/vmlinuz ro  quiet isolcpus=2,3");
	assert_int_equal(ctp_hc_trim(LIT("performance\n"), &s), 0);
	assert_str(s, "performance");
	assert_int_equal(ctp_hc_trim(LIT(" \t\n"), &s), 0);
	assert_int_equal(s.len, 0);
	assert_int_equal(ctp_hc_trim("", 0, &s), 0);
	assert_int_equal(s.len, 0);
	assert_int_equal(ctp_hc_trim(LIT("a\0b\n"), &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpuinfo_x86),
		cmocka_unit_test(test_cpuinfo_arm64),
		cmocka_unit_test(test_cpuinfo_odd),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_meminfo_missing_and_bad),
		cmocka_unit_test(test_menu),
		cmocka_unit_test(test_menu_bad),
		cmocka_unit_test(test_sched_name),
		cmocka_unit_test(test_tunable),
		cmocka_unit_test(test_online),
		cmocka_unit_test(test_online_bad),
		cmocka_unit_test(test_node_dir),
		cmocka_unit_test(test_trim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
