// SPDX-License-Identifier: MIT
/* jemalloc-probe's pure helpers: maps lines, names, TLS arithmetic, tags,
 * the examples each tag keeps and the hint. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
	struct ctp_map m;

	(void)state;
	assert_int_equal(ctp_maps_line(l1, strlen(l1), &m), 0);
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

	assert_int_equal(ctp_maps_line(l2, strlen(l2), &m), 0);
	assert_false(m.exec);
	assert_true(m.ino == 0);
	assert_string_equal(m.path, "[stack]");

	/* No path at all; major above 255. */
	assert_int_equal(ctp_maps_line(l3, strlen(l3), &m), 0);
	assert_int_equal(m.path_len, 0);
	assert_true(m.dev == makedev(0x103, 0xa));

	assert_int_equal(ctp_maps_line("", 0, &m), -EINVAL);
	assert_int_equal(ctp_maps_line("zz-1 r-xp", 9, &m), -EINVAL);
	assert_int_equal(ctp_maps_line("1-2 r-xp 0 fd:01 x", 18, &m), -EINVAL);
	/* Truncated after the perms. */
	assert_int_equal(ctp_maps_line("1-2 r-x", 7, &m), -EINVAL);
}

/* A process's maps text: only the file mappings kept, with their paths in
 * the text; anonymous lines (a '/' only in an anon name) and a garbled
 * line with a path skipped; the last line without its newline kept. */
static void test_maps_parse(void **state)
{
	static const char text[] =
		"55d0a000-55d0b000 r--p 00000000 fd:01 42                "
		"         /usr/bin/prog\n"
		"55d0b000-55d0c000 r-xp 00001000 fd:01 42                "
		"         /usr/bin/prog\n"
		"7f00000000-7f00001000 ---p 00000000 00:00 0 \n"
		"7f00001000-7f00801000 rw-p 00000000 00:00 0 \n"
		"7f00801000-7f00802000 rw-p 00000000 00:00 0             "
		"         [anon:a/b]\n"
		"7f00802000-7f00803000 rw-s 00000000 00:01 77            "
		"         /memfd:x (deleted)\n"
		"zz-1 r-xp 0 fd:01 9 /usr/lib/garbled\n"
		"7f00900000-7f00901000 r-xp 00000000 fd:01 99            "
		"         /usr/lib/libc.so.6\n"
		"7ffd4d1e0000-7ffd4d201000 rw-p 00000000 00:00 0         "
		"         [stack]\n"
		"7ffd4d300000-7ffd4d301000 r-xp 00000000 fd:01 5 /lib/last";
	struct ctp_maps m = {0};

	(void)state;
	assert_int_equal(ctp_maps_parse(&m, text, strlen(text)), 0);
	assert_int_equal(m.n, 5);
	assert_true(m.v[0].start == 0x55d0a000 && !m.v[0].exec &&
		    m.v[0].ino == 42);
	assert_true(m.v[1].offset == 0x1000 && m.v[1].exec);
	assert_memory_equal(m.v[1].path, "/usr/bin/prog\n", 14);
	assert_int_equal(m.v[1].path_len, 13);
	assert_true(m.v[2].ino == 77 && m.v[2].path_len == 18);
	assert_true(m.v[3].ino == 99 && m.v[3].dev == makedev(0xfd, 1));
	assert_true(m.v[4].ino == 5 && m.v[4].path_len == 9);
	assert_memory_equal(m.v[4].path, "/lib/last", 9);
	/* The buffers are reused: a second text replaces the first. */
	assert_int_equal(ctp_maps_parse(&m, text, 0), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(ctp_maps_parse(&m, "1-2 r-xp 0 fd:01 3 /x\n", 22), 0);
	assert_int_equal(m.n, 1);
	ctp_maps_free(&m);
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
		     "debug symbols or set option debuginfod: true with "
		     "DEBUGINFOD_URLS, or add its tsd_s layout (ctprof-core "
		     "jemalloc-layout)");
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
		     "2 in all: install its debug symbols or set option "
		     "debuginfod: true with DEBUGINFOD_URLS, or add its tsd_s "
		     "layout (ctprof-core jemalloc-layout)");
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

/* ---- Layouts table --------------------------------------------------- */

#define V530 "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"
#define V521 "5.2.1-0-g886e40bb339ec1358a5ff2a52fdb782ca66461cb"

static void test_layouts_parse(void **state)
{
	static const char text[] =
		"# comment line\n"
		"\n"
		"   \t  \n"
		"debian12-amd64 " V530 " x86_64 2632 0 816 824 840 7\r\n"
		"\ta.b_c-1\t" V521 "  aarch64 0xA48 0x10 0 8 16 0 # tail\n"
		"last " V530 " x86_64 4096 8 0 8 16 7";
	struct ctp_jep_layouts l = {0};
	size_t line, col;
	const char *why = NULL;

	(void)state;
	assert_int_equal(ctp_jep_layouts_parse(text, strlen(text), &l, &line,
					       &col, &why),
			 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].name, "debian12-amd64");
	assert_string_equal(l.v[0].version, V530);
	assert_string_equal(l.v[0].arch, "x86_64");
	assert_int_equal(l.v[0].tls_size, 2632);
	assert_int_equal(l.v[0].tsd_offset, 0);
	assert_int_equal(l.v[0].off_state, 816);
	assert_int_equal(l.v[0].off_alloc, 824);
	assert_int_equal(l.v[0].off_dealloc, 840);
	assert_int_equal(l.v[0].state_pad, 7);
	assert_string_equal(l.v[1].name, "a.b_c-1");
	assert_int_equal(l.v[1].tls_size, 0xa48);
	assert_int_equal(l.v[1].tsd_offset, 16);
	assert_int_equal(l.v[2].tsd_offset, 8);
	/* The first entry for a build wins; each key must match. */
	assert_ptr_equal(ctp_jep_layout_find(&l, V530, "x86_64", 2632),
			 &l.v[0]);
	assert_ptr_equal(ctp_jep_layout_find(&l, V530, "x86_64", 4096),
			 &l.v[2]);
	assert_null(ctp_jep_layout_find(&l, V530, "aarch64", 2632));
	assert_null(ctp_jep_layout_find(&l, V521, "x86_64", 0xa48));
	assert_null(ctp_jep_layout_find(&l, V530, "x86_64", 2633));
	assert_null(ctp_jep_layout_find(NULL, V530, "x86_64", 2632));
	/* A printed line parses back to the same entry. */
	char out[256];
	struct ctp_jep_layouts back = {0};
	ctp_jep_layout_line(&l.v[1], out, sizeof(out));
	assert_int_equal(ctp_jep_layouts_parse(out, strlen(out), &back, &line,
					       &col, &why),
			 0);
	assert_int_equal(back.n, 1);
	assert_memory_equal(&back.v[0], &l.v[1], sizeof(l.v[1]));
	ctp_jep_layouts_free(&back);
	ctp_jep_layouts_free(&l);
	assert_null(l.v);
}

/* Each bad line: the line and column of the fault, and nothing after. */
static void test_layouts_errors(void **state)
{
	/* at: the text where the fault is (its first place in the bad
	 * line), NULL for column 1. */
	static const struct {
		const char *text;
		size_t line;
		const char *at;
	} bad[] = {
		{"x " V530 " x86_64 2632 0 816 824 840\n", 1, "\n"},
		{"ok " V530 " x86_64 2632 0 816 824 840 7\n"
		 "x " V530 " x86_64 2632 0 816 824 840 7 9\n",
		 2, "9\n"},
		{"x " V530 " x86_64 26z2 0 816 824 840 7\n", 1, "26z2"},
		{"x " V530 " x86_64 0x 0 816 824 840 7\n", 1, "0x"},
		{"x " V530 " x86_64 4294967297 0 816 824 840 7\n", 1, "4294"},
		{"n@me " V530 " x86_64 2632 0 816 824 840 7\n", 1, NULL},
		{"x " V530 " x86-64! 2632 0 816 824 840 7\n", 1, "x86-64!"},
		{"x " V530 "\x01 x86_64 2632 0 816 824 840 7\n", 1, "5.3.0"},
		{"x " V530 " x86_64 2632 0 816 2632 840 7\n", 1, NULL},
		{"x " V530 " x86_64 2632 2632 0 8 16 7\n", 1, NULL},
		{"x " V530 " x86_64 2632 0 816 826 840 7\n", 1, NULL},
		{"x " V530 " x86_64 2632 0 816 824 824 7\n", 1, NULL},
		{"x " V530 " x86_64 2632 0 828 824 840 7\n", 1, NULL},
		{"x " V530 " x86_64 2632 0 816\r 824 840 7\n", 1, "\r"},
		{"x " V530 " x86_64 2632 0 816 824 840 8\n", 1, NULL},
		{"x " V530 " x86_64 2632 0 820 824 840 7\n", 1, NULL},
		{"a-name-that-is-far-too-long-for-the-layout-table " V530
		 " x86_64 2632 0 816 824 840 7\n",
		 1, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctp_jep_layouts l = {0};
		size_t line = 0, col = 0, want = 1;
		const char *why = NULL, *start = bad[i].text;
		for (size_t k = 1; k < bad[i].line; k++)
			start = strchr(start, '\n') + 1;
		if (bad[i].at)
			want = (size_t)(strstr(start, bad[i].at) - start) + 1;
		int r = ctp_jep_layouts_parse(bad[i].text, strlen(bad[i].text),
					      &l, &line, &col, &why);
		if (r != -EINVAL || line != bad[i].line || col != want || !why)
			fail_msg("case %zu: r %d at %zu:%zu (%s), want "
				 "%zu:%zu",
				 i, r, line, col, why ? why : "-", bad[i].line,
				 want);
		assert_int_equal(l.n, bad[i].line - 1);
		ctp_jep_layouts_free(&l);
	}
	/* A NUL inside a line. */
	static const char nul[] = "x " V530 " x86_64 2632 0\0 816 824 840 7\n";
	struct ctp_jep_layouts l = {0};
	size_t line, col;
	const char *why;
	assert_int_equal(ctp_jep_layouts_parse(nul, sizeof(nul) - 1, &l, &line,
					       &col, &why),
			 -EINVAL);
	assert_int_equal(line, 1);
	assert_int_equal(col, (size_t)(strchr(nul, '\0') - nul) + 1);
	/* Over 1 MiB: refused before parsing, with no line. */
	char *big = calloc(CTP_JEP_LAYOUTS_MAX_BYTES + 1, 1);
	assert_non_null(big);
	memset(big, '#', CTP_JEP_LAYOUTS_MAX_BYTES + 1);
	assert_int_equal(ctp_jep_layouts_parse(big,
					       CTP_JEP_LAYOUTS_MAX_BYTES + 1,
					       &l, &line, &col, &why),
			 -EFBIG);
	assert_int_equal(line, 0);
	free(big);
	ctp_jep_layouts_free(&l);

	/* A file: all of it or nothing of it, the error as FILE:LINE:COL. */
	char path[] = "/tmp/ctp-layouts-XXXXXX", err[512];
	static const char two[] = "ok " V530 " x86_64 2632 0 816 824 840 7\n"
				  "bad " V530 " x86_64 2632 0 816 824\n";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, two, sizeof(two) - 1),
			 (ssize_t)sizeof(two) - 1);
	close(fd);
	assert_int_equal(ctp_jep_layouts_load(path, &l, err, sizeof(err)),
			 -EINVAL);
	unlink(path);
	assert_int_equal(l.n, 0);
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	assert_int_equal(strncmp(err + strlen(path), ":2:", 3), 0);
	assert_non_null(strstr(err, ": expected 9 words"));
	ctp_jep_layouts_free(&l);
}

static void test_find_version(void **state)
{
	char v[80];
	static const char bin[] = "\x7f"
				  "ELF\0\0junk<jemalloc>: "
				  "1.2\0" V530 "\0more";
	(void)state;
	assert_int_equal(
		ctp_jep_find_version(bin, sizeof(bin) - 1, v, sizeof(v)), 0);
	assert_string_equal(v, V530);
	/* At the very end of the buffer, no NUL after it. */
	assert_int_equal(ctp_jep_find_version(V521, strlen(V521), v, sizeof(v)),
			 0);
	assert_string_equal(v, V521);
	/* Not a version: 39 hex digits, 41, uppercase, a digit before it,
	 * a missing part. */
	static const char *const no[] = {
		"5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90",
		"5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c1",
		"5.3.0-0-g54EAED1D8B56B1AA528BE3BDD1877E59C56FA90C",
		"15.3.0.1-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c",
		"5.3-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c",
		"5.3.0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c",
		"",
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (ctp_jep_find_version(no[i], strlen(no[i]), v, sizeof(v)) !=
		    -ENOENT)
			fail_msg("'%s' taken for a version", no[i]);
	/* One that does not fit is passed over for the next. */
	assert_int_equal(ctp_jep_find_version(V530, strlen(V530), v, 10),
			 -ENOENT);
	static const char two[] = "1234567890.1234567890.1234567890-"
				  "1234567890-g"
				  "54eaed1d8b56b1aa528be3bdd1877e59c56fa90c "
				  "and " V530;
	assert_int_equal(
		ctp_jep_find_version(two, sizeof(two) - 1, v, sizeof(v)), 0);
	assert_string_equal(v, V530);
	assert_string_equal(ctp_jep_arch_name(62), "x86_64");
	assert_string_equal(ctp_jep_arch_name(183), "aarch64");
	assert_null(ctp_jep_arch_name(3));
}

/* The shipped table parses, and no two entries share a name or a build
 * (a second entry for a build would never be used). */
static void test_shipped_layouts(void **state)
{
	struct ctp_jep_layouts l = {0};
	char err[512];

	(void)state;
	if (ctp_jep_layouts_load(JEP_LAYOUTS_FILE, &l, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_true(l.n >= 5);
	for (size_t i = 0; i < l.n; i++)
		for (size_t j = i + 1; j < l.n; j++) {
			assert_string_not_equal(l.v[i].name, l.v[j].name);
			assert_ptr_equal(ctp_jep_layout_find(&l, l.v[j].version,
							     l.v[j].arch,
							     l.v[j].tls_size),
					 &l.v[j]);
		}
	ctp_jep_layouts_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_maps_parse),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_tls_x86_64),
		cmocka_unit_test(test_tls_arm64),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_seen),
		cmocka_unit_test(test_hint),
		cmocka_unit_test(test_layouts_parse),
		cmocka_unit_test(test_layouts_errors),
		cmocka_unit_test(test_find_version),
		cmocka_unit_test(test_shipped_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
