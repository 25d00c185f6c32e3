/* SPDX-License-Identifier: MIT */
/*
 * The host accounting probes (plugins/common/hostprobe.c): the pure parsers
 * on literal kernel text, the gzip reader on streams made here with zlib,
 * the readers on a temporary proc tree, the family reduction, and the
 * readers on the live /proc against an independent reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "hostprobe.h"

/* Excerpt of a real /proc/config.gz (6.x, x86_64). */
static const char kconfig[] =
	"#\n"
	"# Automatically generated file; DO NOT EDIT.\n"
	"# Linux/x86 6.18.0 Kernel Configuration\n"
	"#\n"
	"CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\n"
	"CONFIG_TASKSTATS=y\n"
	"CONFIG_TASK_DELAY_ACCT=y\n"
	"CONFIG_TASK_XACCT=y\n"
	"CONFIG_TASK_IO_ACCOUNTING=y\n"
	"# CONFIG_PSI_DEFAULT_DISABLED is not set\n"
	"CONFIG_LOG_BUF_SHIFT=17\n"
	"CONFIG_IKCONFIG=m\n"
	"CONFIG_DEFAULT_HOSTNAME=\"(none)\"\n";

/* ---- Delay accounting ---------------------------------------------------- */

static void parse_delayacct(void **state)
{
	static const struct {
		const char *text;
		int ret;
		enum ctp_delayacct_state want;
	} cases[] = {
		{"1\n", 0, CTP_DELAYACCT_ON},
		{"0\n", 0, CTP_DELAYACCT_RUNTIME_OFF},
		{"1", 0, CTP_DELAYACCT_ON},
		{"  1 \t\n", 0, CTP_DELAYACCT_ON},
		{"2\n", 0, CTP_DELAYACCT_RUNTIME_OFF},
		{"10\n", 0, CTP_DELAYACCT_RUNTIME_OFF},
		{"1 1\n", 0, CTP_DELAYACCT_RUNTIME_OFF},
		{"", -ENODATA, 0},
		{" \n\n", -ENODATA, 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum ctp_delayacct_state s = (enum ctp_delayacct_state)99;
		int r = ctp_parse_delayacct(cases[i].text,
					    strlen(cases[i].text), &s);

		assert_int_equal(r, cases[i].ret);
		if (r == 0)
			assert_int_equal(s, cases[i].want);
		else
			assert_int_equal(s, 99);
	}
	/* Bounded: bytes past len are not read. */
	{
		enum ctp_delayacct_state s;

		assert_int_equal(ctp_parse_delayacct("0111", 1, &s), 0);
		assert_int_equal(s, CTP_DELAYACCT_RUNTIME_OFF);
		assert_int_equal(ctp_parse_delayacct("1000", 1, &s), 0);
		assert_int_equal(s, CTP_DELAYACCT_ON);
	}
	assert_string_equal(ctp_delayacct_state_name(CTP_DELAYACCT_ON), "on");
	assert_string_equal(ctp_delayacct_state_name(CTP_DELAYACCT_RUNTIME_OFF),
			    "runtime-off");
	assert_string_equal(ctp_delayacct_state_name(CTP_DELAYACCT_CONFIG_OFF),
			    "config-off");
	assert_string_equal(ctp_delayacct_state_name(0), "unknown");
}

/* ---- Kernel config text -------------------------------------------------- */

static void kconfig_lookup(void **state)
{
	const char *v;
	size_t vl;
	size_t n = strlen(kconfig);

	(void)state;
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_TASK_XACCT", &v, &vl),
		CTP_KCONFIG_YES);
	assert_int_equal(vl, 1);
	assert_memory_equal(v, "y", 1);
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_TASKSTATS", NULL, NULL),
		CTP_KCONFIG_YES);
	assert_int_equal(ctp_kconfig_lookup(kconfig, n,
					    "CONFIG_PSI_DEFAULT_DISABLED", &v,
					    &vl),
			 CTP_KCONFIG_NOT_SET);
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_IKCONFIG", NULL, NULL),
		CTP_KCONFIG_MODULE);
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_LOG_BUF_SHIFT", &v, &vl),
		CTP_KCONFIG_OTHER);
	assert_int_equal(vl, 2);
	assert_memory_equal(v, "17", 2);
	assert_int_equal(ctp_kconfig_lookup(kconfig, n,
					    "CONFIG_DEFAULT_HOSTNAME", &v, &vl),
			 CTP_KCONFIG_OTHER);
	assert_int_equal(vl, strlen("\"(none)\""));
	/* A prefix of real symbols, and a missing symbol. */
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_TASK", NULL, NULL),
		CTP_KCONFIG_ABSENT);
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_TASK_XACC", NULL, NULL),
		CTP_KCONFIG_ABSENT);
	assert_int_equal(
		ctp_kconfig_lookup(kconfig, n, "CONFIG_PSI", NULL, NULL),
		CTP_KCONFIG_ABSENT);
	/* Only the first n bytes count: cut before the XACCT line. */
	assert_int_equal(ctp_kconfig_lookup(
				 kconfig,
				 (size_t)(strstr(kconfig, "CONFIG_TASK_XACCT") -
					  kconfig),
				 "CONFIG_TASK_XACCT", NULL, NULL),
			 CTP_KCONFIG_ABSENT);
	/* Blanks and CRLF around a line, no final newline, "=n". */
	assert_int_equal(ctp_kconfig_lookup("  CONFIG_A=y\r\n", 14, "CONFIG_A",
					    NULL, NULL),
			 CTP_KCONFIG_YES);
	assert_int_equal(ctp_kconfig_lookup("x\n#CONFIG_A is not set", 22,
					    "CONFIG_A", NULL, NULL),
			 CTP_KCONFIG_NOT_SET);
	assert_int_equal(
		ctp_kconfig_lookup("CONFIG_A=n\n", 11, "CONFIG_A", NULL, NULL),
		CTP_KCONFIG_NOT_SET);
	/* A comment merely mentioning the symbol is not a setting. */
	assert_int_equal(ctp_kconfig_lookup("# CONFIG_A is set somewhere\n", 28,
					    "CONFIG_A", NULL, NULL),
			 CTP_KCONFIG_ABSENT);
	assert_int_equal(
		ctp_kconfig_lookup("CONFIG_A\n", 9, "CONFIG_A", NULL, NULL),
		CTP_KCONFIG_ABSENT);
	assert_int_equal(ctp_kconfig_lookup("", 0, "CONFIG_A", NULL, NULL),
			 CTP_KCONFIG_ABSENT);
}

static void kconfig_xacct(void **state)
{
	static const char off[] = "CONFIG_TASKSTATS=y\n"
				  "# CONFIG_TASK_XACCT is not set\n";
	static const char other[] = "CONFIG_TASKSTATS=y\n"
				    "CONFIG_TASK_XACCT_EXTRA=y\n"
				    "#   CONFIG_TASK_XACCT_X is not set\n";

	(void)state;
	assert_int_equal(ctp_parse_kconfig_xacct(kconfig, strlen(kconfig)),
			 CTP_XACCT_ON);
	assert_int_equal(ctp_parse_kconfig_xacct(off, strlen(off)),
			 CTP_XACCT_OFF);
	assert_int_equal(ctp_parse_kconfig_xacct(other, strlen(other)),
			 CTP_XACCT_UNKNOWN);
	assert_int_equal(ctp_parse_kconfig_xacct("", 0), CTP_XACCT_UNKNOWN);
	assert_string_equal(ctp_xacct_state_name(CTP_XACCT_ON), "on");
	assert_string_equal(ctp_xacct_state_name(CTP_XACCT_OFF), "off");
	assert_string_equal(ctp_xacct_state_name(CTP_XACCT_UNKNOWN), "unknown");
}

/* ---- gzip ---------------------------------------------------------------- */

/* deflate `len` bytes; windowBits 16+15 writes a gzip wrapper, 15 zlib. */
static size_t deflate_buf(const void *in, size_t len, unsigned char *out,
			  size_t cap, int window_bits)
{
	z_stream zs;
	size_t n;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 8,
				      Z_DEFAULT_STRATEGY),
			 Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	n = cap - zs.avail_out;
	deflateEnd(&zs);
	return n;
}

/* A config text far larger than the reader's first buffer (64 KiB). */
static char *big_config(size_t *len)
{
	size_t cap = 600 * 1024, off = 0;
	char *b = malloc(cap);
	unsigned i = 0;

	assert_non_null(b);
	while (off + 64 < cap) {
		int n = snprintf(b + off, cap - off, "CONFIG_GENERATED_%u=%s\n",
				 i, i % 3 ? "y" : "m");

		off += (size_t)n;
		i++;
	}
	off += (size_t)snprintf(b + off, cap - off, "CONFIG_TASK_XACCT=y\n");
	*len = off;
	return b;
}

static void gunzip(void **state)
{
	unsigned char gz[4096], zl[4096];
	size_t n = strlen(kconfig), gzn, zln, outn, bigl, biggz;
	char *out = NULL, *big;
	unsigned char *bz;

	(void)state;
	gzn = deflate_buf(kconfig, n, gz, sizeof(gz), 16 + MAX_WBITS);
	assert_true(gzn > 18);
	assert_int_equal(gz[0], 0x1f);
	assert_int_equal(gz[1], 0x8b);

	assert_int_equal(ctp_gunzip(gz, gzn, 1 << 20, &out, &outn), 0);
	assert_int_equal(outn, n);
	assert_memory_equal(out, kconfig, n);
	assert_int_equal(out[n], '\0');
	free(out);

	/* Exactly the cap is fine, one byte less is not. */
	out = NULL;
	assert_int_equal(ctp_gunzip(gz, gzn, n, &out, &outn), 0);
	assert_int_equal(outn, n);
	free(out);
	out = NULL;
	assert_int_equal(ctp_gunzip(gz, gzn, n - 1, &out, &outn), -EFBIG);
	assert_null(out);

	/* Truncated anywhere (in the data, in the trailer): refused. */
	assert_int_equal(ctp_gunzip(gz, gzn - 1, 1 << 20, &out, &outn),
			 -EBADMSG);
	assert_int_equal(ctp_gunzip(gz, gzn / 2, 1 << 20, &out, &outn),
			 -EBADMSG);
	assert_int_equal(ctp_gunzip(gz, 10, 1 << 20, &out, &outn), -EBADMSG);
	assert_int_equal(ctp_gunzip(gz, 0, 1 << 20, &out, &outn), -EBADMSG);
	assert_null(out);

	/* Corrupt: a CRC mismatch from one flipped byte of the body. */
	gz[gzn / 2] ^= 0x55;
	assert_int_equal(ctp_gunzip(gz, gzn, 1 << 20, &out, &outn), -EBADMSG);
	gz[gzn / 2] ^= 0x55;
	/* ... and of the stored CRC itself. */
	gz[gzn - 8] ^= 0x01;
	assert_int_equal(ctp_gunzip(gz, gzn, 1 << 20, &out, &outn), -EBADMSG);
	gz[gzn - 8] ^= 0x01;

	/* Plain text and a zlib (not gzip) stream. */
	assert_int_equal(ctp_gunzip(kconfig, n, 1 << 20, &out, &outn),
			 -EBADMSG);
	zln = deflate_buf(kconfig, n, zl, sizeof(zl), MAX_WBITS);
	assert_int_equal(ctp_gunzip(zl, zln, 1 << 20, &out, &outn), -EBADMSG);
	assert_null(out);

	/* A large stream grows the buffer several times. */
	big = big_config(&bigl);
	bz = malloc(bigl);
	assert_non_null(bz);
	biggz = deflate_buf(big, bigl, bz, bigl, 16 + MAX_WBITS);
	assert_int_equal(
		ctp_gunzip(bz, biggz, CTP_KCONFIG_MAX_BYTES, &out, &outn), 0);
	assert_int_equal(outn, bigl);
	assert_memory_equal(out, big, bigl);
	assert_int_equal(ctp_parse_kconfig_xacct(out, outn), CTP_XACCT_ON);
	free(out);
	out = NULL;
	assert_int_equal(ctp_gunzip(bz, biggz, bigl - 1, &out, &outn), -EFBIG);
	assert_null(out);
	free(bz);
	free(big);
}

/* ---- Readers on a proc tree ---------------------------------------------- */

static char tree[64];

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st, (void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void put_file(const char *rel, const void *data, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void drop_file(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	assert_int_equal(unlink(path), 0);
}

static int tree_setup(void **state)
{
	char path[128];

	(void)state;
	snprintf(tree, sizeof(tree), "/tmp/ctprof-hostprobe.XXXXXX");
	if (!mkdtemp(tree))
		return -1;
	snprintf(path, sizeof(path), "%s/sys", tree);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/kernel", tree);
	return mkdir(path, 0755);
}

static int tree_teardown(void **state)
{
	(void)state;
	nftw(tree, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void readers_on_tree(void **state)
{
	static const char off[] = "# CONFIG_TASK_XACCT is not set\n";
	unsigned char gz[4096];
	enum ctp_delayacct_state d;
	enum ctp_xacct_state x;
	char *text;
	size_t len, gzn;
	int fd;

	(void)state;
	fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);

	/* No sysctl: not built in, and that is an answer, not an error. */
	d = CTP_DELAYACCT_ON;
	assert_int_equal(ctp_probe_delayacct(fd, &d), 0);
	assert_int_equal(d, CTP_DELAYACCT_CONFIG_OFF);
	put_file("sys/kernel/task_delayacct", "0\n", 2);
	assert_int_equal(ctp_probe_delayacct(fd, &d), 0);
	assert_int_equal(d, CTP_DELAYACCT_RUNTIME_OFF);
	put_file("sys/kernel/task_delayacct", "1\n", 2);
	assert_int_equal(ctp_probe_delayacct(fd, &d), 0);
	assert_int_equal(d, CTP_DELAYACCT_ON);
	/* Empty: unreadable content, reported, and nothing measured. */
	put_file("sys/kernel/task_delayacct", "", 0);
	d = CTP_DELAYACCT_ON;
	assert_int_equal(ctp_probe_delayacct(fd, &d), -ENODATA);
	assert_int_equal(d, CTP_DELAYACCT_CONFIG_OFF);

	/* No config.gz: unknown, with the reason. */
	x = CTP_XACCT_ON;
	assert_int_equal(ctp_probe_xacct(fd, &x), -ENOENT);
	assert_int_equal(x, CTP_XACCT_UNKNOWN);
	assert_int_equal(ctp_read_kconfig(fd, &text, &len), -ENOENT);

	gzn = deflate_buf(kconfig, strlen(kconfig), gz, sizeof(gz),
			  16 + MAX_WBITS);
	put_file("config.gz", gz, gzn);
	assert_int_equal(ctp_probe_xacct(fd, &x), 0);
	assert_int_equal(x, CTP_XACCT_ON);
	assert_int_equal(ctp_read_kconfig(fd, &text, &len), 0);
	assert_int_equal(len, strlen(kconfig));
	assert_string_equal(text, kconfig);
	free(text);

	gzn = deflate_buf(off, strlen(off), gz, sizeof(gz), 16 + MAX_WBITS);
	put_file("config.gz", gz, gzn);
	assert_int_equal(ctp_probe_xacct(fd, &x), 0);
	assert_int_equal(x, CTP_XACCT_OFF);

	/* Corrupt: unknown, never off. */
	put_file("config.gz", gz, gzn - 4);
	x = CTP_XACCT_OFF;
	assert_int_equal(ctp_probe_xacct(fd, &x), -EBADMSG);
	assert_int_equal(x, CTP_XACCT_UNKNOWN);
	put_file("config.gz", kconfig, strlen(kconfig));
	assert_int_equal(ctp_probe_xacct(fd, &x), -EBADMSG);
	assert_int_equal(x, CTP_XACCT_UNKNOWN);
	drop_file("config.gz");
	drop_file("sys/kernel/task_delayacct");
	close(fd);

	/* No proc root at all. */
	d = CTP_DELAYACCT_ON;
	assert_int_equal(ctp_probe_delayacct(-1, &d), -EBADF);
	assert_int_equal(d, CTP_DELAYACCT_CONFIG_OFF);
	assert_int_equal(ctp_probe_xacct(-1, &x), -EBADF);
	assert_int_equal(x, CTP_XACCT_UNKNOWN);
}

/* ---- Family reduction ---------------------------------------------------- */

static void active_families(void **state)
{
	static const struct {
		enum ctp_delayacct_state d;
		enum ctp_xacct_state x;
		bool cpu, block, xacct;
	} cases[] = {
		{CTP_DELAYACCT_CONFIG_OFF, CTP_XACCT_ON, false, false, true},
		{CTP_DELAYACCT_CONFIG_OFF, CTP_XACCT_OFF, false, false, false},
		{CTP_DELAYACCT_CONFIG_OFF, CTP_XACCT_UNKNOWN, false, false,
		 true},
		{CTP_DELAYACCT_RUNTIME_OFF, CTP_XACCT_ON, true, false, true},
		{CTP_DELAYACCT_RUNTIME_OFF, CTP_XACCT_OFF, true, false, false},
		{CTP_DELAYACCT_RUNTIME_OFF, CTP_XACCT_UNKNOWN, true, false,
		 true},
		{CTP_DELAYACCT_ON, CTP_XACCT_ON, true, true, true},
		{CTP_DELAYACCT_ON, CTP_XACCT_OFF, true, true, false},
		{CTP_DELAYACCT_ON, CTP_XACCT_UNKNOWN, true, true, true},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctp_taskstats_active a =
			ctp_taskstats_active(cases[i].d, cases[i].x);

		assert_int_equal(a.cpu_delay, cases[i].cpu);
		assert_int_equal(a.delay_block, cases[i].block);
		assert_int_equal(a.xacct, cases[i].xacct);
	}
}

/* ---- The live /proc ------------------------------------------------------ */

static void live_proc(void **state)
{
	enum ctp_delayacct_state d;
	enum ctp_xacct_state x;
	char buf[16] = "";
	FILE *f;
	int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	if (fd < 0)
		skip();
	assert_int_equal(ctp_probe_delayacct(fd, &d), 0);
	f = fopen("/proc/sys/kernel/task_delayacct", "r");
	if (!f) {
		assert_int_equal(d, CTP_DELAYACCT_CONFIG_OFF);
	} else {
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_int_equal(d, buf[0] == '1' ? CTP_DELAYACCT_ON
						  : CTP_DELAYACCT_RUNTIME_OFF);
	}

	/* The kernel's own config, decoded by gzip(1) for comparison. */
	if (access("/proc/config.gz", R_OK) == 0 &&
	    (f = popen("gzip -dc /proc/config.gz 2>/dev/null", "r"))) {
		enum ctp_xacct_state want = CTP_XACCT_UNKNOWN;
		char line[512];
		int lines = 0, st;

		while (fgets(line, sizeof(line), f)) {
			lines++;
			if (!strcmp(line, "CONFIG_TASK_XACCT=y\n"))
				want = CTP_XACCT_ON;
			else if (!strcmp(line,
					 "# CONFIG_TASK_XACCT is not set\n"))
				want = CTP_XACCT_OFF;
		}
		st = pclose(f);
		if (st == 0 && lines > 0) {
			assert_int_equal(ctp_probe_xacct(fd, &x), 0);
			assert_int_equal(x, want);
			print_message("[ INFO     ] live: delay accounting %s, "
				      "CONFIG_TASK_XACCT %s\n",
				      ctp_delayacct_state_name(d),
				      ctp_xacct_state_name(x));
		}
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_delayacct),
		cmocka_unit_test(kconfig_lookup),
		cmocka_unit_test(kconfig_xacct),
		cmocka_unit_test(gunzip),
		cmocka_unit_test_setup_teardown(readers_on_tree, tree_setup,
						tree_teardown),
		cmocka_unit_test(active_families),
		cmocka_unit_test(live_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
