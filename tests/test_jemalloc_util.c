// SPDX-License-Identifier: MIT
/* jemalloc-probe's pure helpers: maps lines, names, TLS arithmetic, tags,
 * the examples each tag keeps and the hint. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "jep.h"

static void test_maps_line(void **state)
{
	static const char l1[] = "7f3a1c000000-7f3a1c021000 r-xp 00002000 "
				 "fd:01 1311234                    "
				 "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
	static const char l2[] = "7ffd4d1e0000-7ffd4d201000 rw-p 00000000 "
				 "00:00 0                          [stack]";
	static const char l3[] = "55d0-55e0 r--p 00000000 103:0a 42";
	struct ctp_jep_map m;

	(void)state;
	assert_int_equal(ctp_jep_maps_line(l1, strlen(l1), &m), 0);
	assert_true(m.start == 0x7f3a1c000000ull);
	assert_true(m.end == 0x7f3a1c021000ull);
	assert_true(m.offset == 0x2000);
	assert_true(m.exec);
	assert_true(m.dev == makedev(0xfd, 1));
	assert_true(m.ino == 1311234);
	assert_int_equal(m.path_len, strlen("/usr/lib/x86_64-linux-gnu/"
					    "libjemalloc.so.2"));
	assert_memory_equal(m.path, "/usr/lib/x86_64-linux-gnu/libjemalloc",
			    37);

	assert_int_equal(ctp_jep_maps_line(l2, strlen(l2), &m), 0);
	assert_false(m.exec);
	assert_true(m.ino == 0);
	assert_string_equal(m.path, "[stack]");

	/* No path at all; major above 255. */
	assert_int_equal(ctp_jep_maps_line(l3, strlen(l3), &m), 0);
	assert_int_equal(m.path_len, 0);
	assert_true(m.dev == makedev(0x103, 0xa));

	assert_int_equal(ctp_jep_maps_line("", 0, &m), -EINVAL);
	assert_int_equal(ctp_jep_maps_line("zz-1 r-xp", 9, &m), -EINVAL);
	assert_int_equal(ctp_jep_maps_line("1-2 r-xp 0 fd:01 x", 18, &m),
			 -EINVAL);
	/* Truncated after the perms. */
	assert_int_equal(ctp_jep_maps_line("1-2 r-x", 7, &m), -EINVAL);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(ctp_jep_member_kind("thread_allocated"), 1);
	assert_int_equal(ctp_jep_member_kind("thread_deallocated"), 2);
	assert_int_equal(
		ctp_jep_member_kind("cant_access_tsd_items_directly_use_a_"
				    "getter_or_setter_thread_allocated"),
		1);
	assert_int_equal(
		ctp_jep_member_kind("cant_access_tsd_items_directly_use_a_"
				    "getter_or_setter_thread_deallocated"),
		2);
	/* 5.3 has neighbours with the same stem. */
	assert_int_equal(
		ctp_jep_member_kind("cant_access_tsd_items_directly_use_a_"
				    "getter_or_setter_thread_allocated_next_"
				    "event_fast"),
		0);
	assert_int_equal(ctp_jep_member_kind("thread_allocated_last_event"), 0);

	assert_true(ctp_jep_is_tsd_symbol("tsd_tls"));
	assert_true(ctp_jep_is_tsd_symbol("je_tsd_tls"));
	assert_true(ctp_jep_is_tsd_symbol("_rjem_je_tsd_tls"));
	assert_false(ctp_jep_is_tsd_symbol("xtsd_tls"));
	assert_false(ctp_jep_is_tsd_symbol("_tsd_tls"));
	assert_false(ctp_jep_is_tsd_symbol("tsd_tls_x"));
	assert_false(ctp_jep_is_tsd_symbol("tsd_booted"));
}

static void test_tls_x86_64(void **state)
{
	uint64_t a;

	(void)state;
	/* Block of 0x1c8 bytes aligned to 64 ends at tp: starts 0x200 below. */
	assert_int_equal(
		ctp_jep_tls_x86_64(0x7f0000001000ull, 0x1c8, 64, 0x10, &a), 0);
	assert_true(a == 0x7f0000001000ull - 0x200 + 0x10);
	assert_int_equal(ctp_jep_tls_x86_64(0x1000, 0x100, 0, 0, &a), 0);
	assert_true(a == 0xf00);
	assert_int_equal(ctp_jep_tls_x86_64(0x1000, 0x100, 24, 0, &a), -EINVAL);
	assert_int_equal(ctp_jep_tls_x86_64(0x10, 0x100, 16, 0, &a), -EINVAL);
	assert_int_equal(ctp_jep_tls_x86_64(0x1000, 0x100, 16, 0x100, &a),
			 -EINVAL);
}

static void test_tls_arm64(void **state)
{
	uint64_t a;

	(void)state;
	/* Variant I: the block follows the 16-byte TCB. */
	assert_int_equal(
		ctp_jep_tls_arm64(0xffff80001000ull, 0x1c8, 8, 0x10, &a), 0);
	assert_true(a == 0xffff80001000ull + 16 + 0x10);
	/* Alignment above the TCB size pushes the block out. */
	assert_int_equal(ctp_jep_tls_arm64(0x4000, 0x1c8, 64, 0x8, &a), 0);
	assert_true(a == 0x4000 + 64 + 8);
	assert_int_equal(ctp_jep_tls_arm64(0x4000, 0x100, 48, 0, &a), -EINVAL);
	assert_int_equal(ctp_jep_tls_arm64(UINT64_MAX - 8, 0x100, 16, 0, &a),
			 -EINVAL);
	assert_int_equal(ctp_jep_tls_arm64(0x4000, 0x100, 16, 0x100, &a),
			 -EINVAL);
}

static void test_tags(void **state)
{
	uint64_t c[CTP_JEP_N_TAGS] = {0};

	(void)state;
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_NOT_JEMALLOC),
			    "not-jemalloc");
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_EXITED), "process-exited");
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_NO_DEBUGINFO),
			    "no-debuginfo");
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_THREAD_DB), "thread-db");
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_PTRACE_SEIZE),
			    "ptrace-seize");
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_VM_READV),
			    "process-vm-readv");
	assert_string_equal(ctp_jep_tag_name(CTP_JEP_N_TAGS), "unknown");
	for (int i = 0; i < CTP_JEP_N_TAGS; i++)
		assert_non_null(ctp_jep_tag_name((enum ctp_jep_tag)i));
	assert_true(ctp_jep_tag_routine(CTP_JEP_NOT_JEMALLOC));
	assert_true(ctp_jep_tag_routine(CTP_JEP_EXITED));
	assert_false(ctp_jep_tag_routine(CTP_JEP_MAPS));

	assert_int_equal(ctp_jep_dominant(c), -1);
	c[CTP_JEP_NOT_JEMALLOC] = 1000; /* routine: never dominant */
	c[CTP_JEP_EXITED] = 500;
	assert_int_equal(ctp_jep_dominant(c), -1);
	c[CTP_JEP_VM_READV] = 3;
	c[CTP_JEP_PTRACE_SEIZE] = 3;
	assert_int_equal(ctp_jep_dominant(c), CTP_JEP_PTRACE_SEIZE);
	c[CTP_JEP_VM_READV] = 4;
	assert_int_equal(ctp_jep_dominant(c), CTP_JEP_VM_READV);
}

/* Each tag keeps its first three distinct processes, comm made printable. */
static void test_seen(void **state)
{
	struct ctp_jep_seen s = {0};
	char buf[256];

	(void)state;
	ctp_jep_examples(buf, sizeof(buf), &s, 0);
	assert_string_equal(buf, "");
	ctp_jep_seen_add(&s, 1234, "redis-server");
	ctp_jep_seen_add(&s, 1234, "redis-server"); /* another thread */
	assert_int_equal(s.n, 1);
	ctp_jep_examples(buf, sizeof(buf), &s, 1);
	assert_string_equal(buf, "redis-server (pid 1234)");
	ctp_jep_seen_add(&s, 7, "nl\nq\x7f");
	ctp_jep_seen_add(&s, 8, NULL);
	ctp_jep_seen_add(&s, 9, "fourth");
	assert_int_equal(s.n, 3);
	assert_string_equal(s.ex[1].comm, "nl?q?");
	ctp_jep_examples(buf, sizeof(buf), &s, 3);
	assert_string_equal(buf, "redis-server (pid 1234), nl?q? (pid 7), ? "
				 "(pid 8)");
	ctp_jep_examples(buf, sizeof(buf), &s, 40);
	assert_string_equal(buf, "redis-server (pid 1234), nl?q? (pid 7), ? "
				 "(pid 8), ... 40 in all");
	/* A 15-byte comm fits; a short buffer is cut, the length is whole. */
	ctp_jep_seen_add(&s, 10, "x");
	memset(&s, 0, sizeof(s));
	ctp_jep_seen_add(&s, 5, "0123456789abcdefXYZ");
	assert_string_equal(s.ex[0].comm, "0123456789abcde");
	assert_int_equal(ctp_jep_examples(buf, 8, &s, 1),
			 (int)strlen("0123456789abcde (pid 5)"));
	assert_string_equal(buf, "0123456");
}

static void test_hint(void **state)
{
	uint64_t c[CTP_JEP_N_TAGS] = {0};
	struct ctp_jep_seen seen[CTP_JEP_N_TAGS];
	char buf[1024];

	(void)state;
	memset(seen, 0, sizeof(seen));
	/* Nothing failed (routine outcomes and deferred TLS only). */
	c[CTP_JEP_NOT_JEMALLOC] = 90;
	c[CTP_JEP_EXITED] = 2;
	c[CTP_JEP_TLS_DEFERRED] = 5;
	assert_int_equal(ctp_jep_hint(buf, sizeof(buf), c, seen, 0), 0);
	assert_string_equal(buf, "");

	/* The host: root with CAP_SYS_PTRACE, PID 1 refusing its
	 * maps, Debian's redis-server without DWARF. Both causes are named,
	 * the refusal as the process's, not as a missing privilege. */
	c[CTP_JEP_NO_DEBUGINFO] = 1;
	ctp_jep_seen_add(&seen[CTP_JEP_NO_DEBUGINFO], 1234, "redis-server");
	c[CTP_JEP_MAPS] = 1;
	seen[CTP_JEP_MAPS].denied = 1;
	ctp_jep_seen_add(&seen[CTP_JEP_MAPS], 1, "init");
	ctp_jep_hint(buf, sizeof(buf), c, seen,
		     CTP_JEP_HINT_PRIVILEGED | CTP_JEP_HINT_FALLBACK_OFF);
	assert_string_equal(
		buf, "maps-read: init (pid 1): refused access although "
		     "ctprof-core holds CAP_SYS_PTRACE (a protected process: "
		     "another user namespace's, an LSM, or "
		     "kernel.yama.ptrace_scope 3); no privilege fixes this; "
		     "no-debuginfo: redis-server (pid 1234): install its "
		     "debug symbols or set DEBUGINFOD_URLS");
	/* The same without the capability: the privilege is the cause. */
	ctp_jep_hint(buf, sizeof(buf), c, seen, 0);
	assert_non_null(strstr(buf, "maps-read: init (pid 1): permission "
				    "denied: run as root or grant "
				    "CAP_SYS_PTRACE, and check "
				    "kernel.yama.ptrace_scope; no-debuginfo: "
				    "redis-server (pid 1234): install"));
	/* The more frequent tag first; a tag mostly not denied keeps its
	 * own cause. */
	c[CTP_JEP_NO_DEBUGINFO] = 2;
	c[CTP_JEP_MAPS] = 3; /* 1 of 3 denied */
	ctp_jep_hint(buf, sizeof(buf), c, seen, CTP_JEP_HINT_PRIVILEGED);
	assert_string_equal(
		buf, "maps-read: init (pid 1), ... 3 in all: its maps could "
		     "not be read; no-debuginfo: redis-server (pid 1234), ... "
		     "2 in all: install its debug symbols or set "
		     "DEBUGINFOD_URLS");
	/* At most three tags; the rest counted. thread-db names the opt-in
	 * fallback only when it is off. */
	c[CTP_JEP_THREAD_DB] = 4;
	c[CTP_JEP_VM_READV] = 1;
	c[CTP_JEP_PTRACE_STOP] = 1;
	ctp_jep_hint(buf, sizeof(buf), c, seen, CTP_JEP_HINT_FALLBACK_OFF);
	assert_true(strncmp(buf,
			    "thread-db: 4 in all: libthread_db cannot "
			    "read it; method: auto",
			    60) == 0);
	assert_non_null(strstr(buf, "; 2 more failure tags (-v lists them)"));
	assert_null(strstr(buf, "process-vm-readv"));
	ctp_jep_hint(buf, sizeof(buf), c, seen, 0);
	assert_null(strstr(buf, "method: auto"));
	/* A short buffer holds whole entries only. */
	assert_int_equal(ctp_jep_hint(buf, 40, c, seen, 0), 0);
	assert_string_equal(buf, "");
	assert_int_equal(ctp_jep_hint(buf, 0, c, seen, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_tls_x86_64),
		cmocka_unit_test(test_tls_arm64),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_seen),
		cmocka_unit_test(test_hint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
