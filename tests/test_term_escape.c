/* SPDX-License-Identifier: MIT */
/*
 * Text for a terminal (core/util/term.h): the one rule, the stream the
 * reader commands print through, and the log. A snapshot whose every
 * string (hostname, config path, roots, kernel, plugin name, version,
 * reason, hint and counters, read-failure files and kernel options, comms,
 * cgroup paths, string and char values) holds escape sequences and other
 * control bytes, and a view file whose title and labels do, go through
 * show, show --view all, show --group-by pid, compare, views and the log:
 * no byte a terminal acts on comes out (newlines aside), neither on stdout
 * nor on stderr.
 */
#include <fcntl.h>
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

#include "ctprof/plugin.h"
#include "e2e_util.h"
#include "log.h"
#include "snapbuild.h"
#include "term.h"

static char tmpdir[PATH_MAX];

/* Escapes of every kind: CSI (clear screen), OSC (window title, the
 * clipboard) ended by BEL, a C1 CSI as UTF-8 and as a lone byte, DEL,
 * a carriage return that would overwrite the line. */
#define EVIL                                                                   \
	"\x1b[2J\x1b]0;owned\x07\x1b]52;c;aGk=\x07\xc2\x9b"                    \
	"1m\x9b\x7f\r"

/* The first byte of text a terminal acts on: C0 but '\n', DEL, C1 as
 * UTF-8, a byte that is no UTF-8. NULL when none. */
static const char *first_control(const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;
	for (size_t i = 0; i < len;) {
		size_t l = ctp_utf8_len(p + i, len - i);
		if (!l ||
		    (l == 1 &&
		     ((p[i] < 0x20 && p[i] != '\n') || p[i] == 0x7f)) ||
		    (l == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0))
			return text + i;
		i += l;
	}
	return NULL;
}

static void no_control(const char *what, const char *path)
{
	char *text;
	size_t len;
	assert_int_equal(e2e_read_file(path, &text, &len), 0);
	const char *at = first_control(text, len);
	if (at) {
		size_t o = (size_t)(at - text);
		fail_msg("%s: byte 0x%02x at %zu, in:\n%.*s", what,
			 (unsigned char)*at, o, (int)(o < 200 ? o : 200),
			 at - (o < 200 ? o : 200));
	}
	free(text);
}

/* The rule, character by character. */
static void test_rule(void **state)
{
	static const struct {
		const char *in, *want;
	} c[] = {
		{"plain", "plain"},
		{"\x1b[31m", "\\x1b[31m"},
		{"a\nb\tc\r", "a\\x0ab\\x09c\\x0d"},
		{"\x7f", "\\x7f"},
		{"\xc2\x9b", "\\xc2\\x9b"}, /* C1 CSI, as UTF-8 */
		{"\x9b", "\\x9b"},	    /* C1 CSI, a lone byte */
		{"\xc2\xa0\xc3\xa9", "\xc2\xa0\xc3\xa9"}, /* nbsp, e-acute */
		{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
		{"\xe2\x82", "\\xe2\\x82"}, /* cut short */
		{"a\\x1b", "a\\\\x1b"},	    /* '\\' doubled */
	};
	char out[128];
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ctp_term_escape(c[i].in, strlen(c[i].in), SIZE_MAX, out,
				sizeof(out));
		if (strcmp(out, c[i].want) != 0)
			fail_msg("case %zu: \"%s\", expected \"%s\"", i, out,
				 c[i].want);
	}
	ctp_term_escape("abcdef", 6, 3, out, sizeof(out));
	assert_string_equal(out, "abc...");
}

/* The stream: the rule on every byte but '\n', a sequence split across
 * writes joined, one cut short at the end escaped. */
static void test_stream(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	(void)state;
	FILE *to = open_memstream(&buf, &len);
	assert_non_null(to);
	FILE *s = ctp_term_stream(to);
	assert_non_null(s);
	setvbuf(s, NULL, _IONBF, 0); /* each fputs one write */
	fputs("a\x1b[2Jb\n", s);
	fputs("\xc3", s);
	fputs("\xa9\xf0\x9f", s);
	fputs("\x98", s);
	fputs("\x80 \xe2\x82", s);
	fputs("z\xc2", s);
	assert_int_equal(fclose(s), 0);
	assert_int_equal(fclose(to), 0);
	assert_string_equal(buf, "a\\x1b[2Jb\n\xc3\xa9\xf0\x9f\x98\x80 "
				 "\\xe2\\x82z\\xc2");
	free(buf);
}

enum { X_CPU, X_STATE, X_NOTE, X_RSS, X_N };

/* A snapshot whose every string is hostile. */
static void write_evil(const char *path, uint64_t cpu)
{
	const struct ctp_field_desc d[X_N] = {
		[X_CPU] = {"t.cpu", "CPU " EVIL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
			   CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
		[X_STATE] = {"t.state", "State", CTP_SCOPE_THREAD,
			     CTP_TYPE_CHAR, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
			     CTP_RULE_MODE},
		[X_NOTE] = {"h.note", "Note", CTP_SCOPE_HOST, CTP_TYPE_STRING,
			    CTP_UNIT_NONE, CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
		[X_RSS] = {"p.rss", "RSS", CTP_SCOPE_PROCESS, CTP_TYPE_U64,
			   CTP_UNIT_BYTES, CTP_KIND_GAUGE, CTP_RULE_SUM},
	};
	struct ctp_capture *cap = sb_capture("plug" EVIL);
	struct ctp_plugin_info *p = &cap->plugins[0];
	char err[512];
	for (int i = 0; i < X_N; i++)
		assert_int_equal(ctp_registry_add(&cap->reg, 0, &d[i]), i);
	p->version = strdup("1.0" EVIL);
	p->path = strdup("/lib/" EVIL ".so");
	p->hint = strdup("hint " EVIL);
	p->summary_name[p->n_summary++] = strdup("count" EVIL);
	cap->hostname = strdup("host" EVIL);
	cap->config_path = strdup("/etc/" EVIL ".yaml");
	cap->kernel_release = strdup("6.1" EVIL);
	cap->proc_root = strdup("/proc" EVIL);
	cap->sys_root = strdup("/sys" EVIL);
	struct ctp_readfail *rf = &cap->rf;
	rf->file[0] = strdup("stat" EVIL);
	rf->gate[0] = strdup("CONFIG_" EVIL);
	rf->failures[0] = rf->missing[0] = 5;
	rf->n_files = 1;
	struct sb_cell note = {.set = true, .s = "note" EVIL};
	sb_put(cap, &cap->host, 0, CTP_HOST_IDENT, X_NOTE, &note);
	uint32_t cg = sb_cgroup(cap, "/sys" EVIL ".slice");
	uint32_t pr = sb_process(cap, 10, "proc" EVIL);
	sb_put_u64(cap, &cap->procs[0], pr, CTP_PROCESS_IDENT, X_RSS, 4096);
	for (uint32_t tid = 10; tid < 12; tid++) {
		uint32_t r = sb_thread(cap, tid,
				       tid == 10 ? "proc" EVIL : "thr" EVIL,
				       (int)cg);
		struct ctp_table *t = &cap->threads[0];
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, X_CPU, cpu + tid);
		sb_put_u64(cap, t, r, CTP_THREAD_IDENT, X_STATE, 0x1b);
	}
	if (sb_write(cap, path, err, sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	ctp_capture_free(cap);
}

/* What each reader prints of the snapshots and of a view file. */
static void test_readers(void **state)
{
	char a[PATH_MAX + 16], b[PATH_MAX + 16], view[PATH_MAX + 16],
		out[PATH_MAX + 16], err[PATH_MAX + 16];
	(void)state;
	snprintf(a, sizeof(a), "%s/a.ctprof", tmpdir);
	snprintf(b, sizeof(b), "%s/b.ctprof", tmpdir);
	snprintf(view, sizeof(view), "%s/evil.yaml", tmpdir);
	snprintf(out, sizeof(out), "%s/out.txt", tmpdir);
	snprintf(err, sizeof(err), "%s/err.txt", tmpdir);
	write_evil(a, 100);
	write_evil(b, 300);
	/* YAML's "\e" and "\a" are ESC and BEL. */
	static const char yaml[] =
		"view: evil\n"
		"description: \"desc \\e[2J\\e]0;owned\\a\"\n"
		"sort: cpu\n"
		"sections:\n"
		"  - {title: \"Proc\\e[2Jesses\\x9b\", group_by: pid}\n"
		"columns:\n"
		"  - {id: name, label: \"NAME\\e[5m\", ident: pcomm}\n"
		"  - {id: cpu, label: \"CPU\\e]0;x\\a\", field: t.cpu}\n";
	assert_int_equal(e2e_write_file(view, yaml, sizeof(yaml) - 1), 0);
	/* Views are found by name in the view path; the shipped ones too
	 * (all). */
	char vpath[2 * PATH_MAX + 8];
	const char *shipped = getenv("CTPROF_VIEW_DIR");
	snprintf(vpath, sizeof(vpath), "%s%s%s", tmpdir, shipped ? ":" : "",
		 shipped ? shipped : "");
	assert_int_equal(setenv("CTPROF_VIEW_DIR", vpath, 1), 0);
	const char *runs[][10] = {
		{"show", a, NULL},
		{"show", a, "--view", "all", NULL},
		{"show", a, "--view", "evil", NULL},
		{"show", a, "--group-by", "pid", NULL},
		{"show", a, "--group-by", "cgroup,comm", "--threads", NULL},
		{"compare", a, b, NULL},
		{"compare", a, b, "--view", "all", NULL},
		{"compare", a, b, "--view", "evil", NULL},
		{"views", view, NULL},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char what[256];
		snprintf(what, sizeof(what), "%s %s", runs[i][0],
			 runs[i][3] ? runs[i][3] : "");
		int rc = e2e_run(runs[i], out, err);
		if (rc != 0) {
			e2e_show_file("stdout", out);
			e2e_show_file("stderr", err);
			fail_msg("%s exited %d", what, rc);
		}
		no_control(what, out);
		no_control(what, err);
	}
	/* A file the reader refuses, naming what it holds: a field renamed
	 * with an escape, a value of the wrong type (python3-msgpack). */
	char bad[PATH_MAX + 16], cmd[4 * PATH_MAX];
	snprintf(bad, sizeof(bad), "%s/bad.ctprof", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import sys, msgpack, zstandard\n"
		 "d = zstandard.ZstdDecompressor().decompressobj()\n"
		 "o = msgpack.unpackb(d.decompress(open(sys.argv[1], \"rb\")"
		 ".read()), raw=True, strict_map_key=False)\n"
		 "n = b\"t.\\x1b[2Jcpu\"\n"
		 "for f in o[b\"fields\"]:\n"
		 "  if f[b\"name\"] == b\"t.cpu\": f[b\"name\"] = n\n"
		 "c = o[b\"threads\"][b\"columns\"]\n"
		 "o[b\"threads\"][b\"columns\"] = {n if k == b\"t.cpu\" "
		 "else k: [b\"str\"] + v[1:] if k == b\"t.cpu\" else v "
		 "for k, v in c.items()}\n"
		 "z = zstandard.ZstdCompressor(write_checksum=True)\n"
		 "open(sys.argv[2], \"wb\").write(z.compress(msgpack.packb("
		 "o, use_bin_type=False)))' %s %s",
		 a, bad);
	if (system(cmd) == 0) {
		const char *refused[] = {"show", bad, NULL};
		assert_int_not_equal(e2e_run(refused, out, err), 0);
		no_control("show of a refused file", err);
		char *why;
		assert_int_equal(e2e_read_file(err, &why, NULL), 0);
		assert_non_null(strstr(why, "t.\\x1b[2Jcpu"));
		free(why);
	} else {
		fprintf(stderr, "skip: no python3-msgpack or "
				"python3-zstandard\n");
	}
	/* The strings are there, escaped. */
	const char *show[] = {"show", a, NULL};
	assert_int_equal(e2e_run(show, out, err), 0);
	char *text;
	assert_int_equal(e2e_read_file(out, &text, NULL), 0);
	assert_non_null(strstr(text, "host\\x1b[2J\\x1b]0;owned\\x07"));
	free(text);
}

/* A log line (-v, a plugin's or the core's) is one line, escaped. */
static void test_log(void **state)
{
	char path[PATH_MAX + 16];
	(void)state;
	snprintf(path, sizeof(path), "%s/log.txt", tmpdir);
	fflush(stderr);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(2);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, 2);
	ctp_log(CTP_LOG_ERR, "process %s (pid %d) " EVIL, "comm" EVIL, 42);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	no_control("ctp_log", path);
	char *text;
	size_t len;
	assert_int_equal(e2e_read_file(path, &text, &len), 0);
	assert_non_null(strstr(text, "process comm\\x1b[2J"));
	assert_non_null(strchr(text, '\n'));
	assert_true(strchr(text, '\n') == text + len - 1); /* one line */
	free(text);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("term-escape", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_log),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
