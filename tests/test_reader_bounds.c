/* SPDX-License-Identifier: MIT */
/*
 * Decompression bombs against the reader's memory budget
 * (core/snapshot/reader.c, docs/FORMAT.md "Size cap"): a few KB of zstd holding
 * 10^8 nils, a frame of zeros larger than the cap, maps of nils, maps nested
 * past msgpack-c's stack. Each must be refused with a clear message, and `show`
 * reading it (a child, its peak RSS from wait4) must stay under the cap plus
 * the documented constant; so must `show` of a real snapshot opened with a cap
 * of exactly what it needs.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "e2e_util.h"
#include "model.h"
#include "reader.h"
#include "sanitizer.h"
#include "snapbuild.h"

/* docs/FORMAT.md: peak RSS of show or dump stays under the cap plus this. */
#define RSS_CONSTANT (20ull << 20)
#define MiB	     (1ull << 20)

#define SANITIZED CTP_TEST_ASAN

static char tmp[PATH_MAX], errf[PATH_MAX];

/* A zstd frame (with checksum; window 2^wlog) of `head`, then `n` bytes
 * of `fill`, streamed to `path` without holding the content. */
static void write_frame(const char *path, const void *head, size_t hlen,
			unsigned char fill, uint64_t n, int wlog)
{
	static unsigned char in[1 << 20], out[1 << 17];
	ZSTD_CCtx *c = ZSTD_createCCtx();
	FILE *f = fopen(path, "w");
	assert_non_null(c);
	assert_non_null(f);
	assert_false(ZSTD_isError(
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	assert_false(ZSTD_isError(
		ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, wlog)));
	memset(in, fill, sizeof(in));
	for (int first = 1;; first = 0) {
		size_t k = n > sizeof(in) ? sizeof(in) : (size_t)n;
		ZSTD_inBuffer ib = {in, k, 0};
		if (first) {
			ZSTD_inBuffer hb = {head, hlen, 0};
			while (hb.pos < hb.size) {
				ZSTD_outBuffer ob = {out, sizeof(out), 0};
				assert_false(ZSTD_isError(ZSTD_compressStream2(
					c, &ob, &hb, ZSTD_e_continue)));
				fwrite(out, 1, ob.pos, f);
			}
		}
		n -= k;
		ZSTD_EndDirective end = n ? ZSTD_e_continue : ZSTD_e_end;
		for (;;) {
			ZSTD_outBuffer ob = {out, sizeof(out), 0};
			size_t r = ZSTD_compressStream2(c, &ob, &ib, end);
			assert_false(ZSTD_isError(r));
			fwrite(out, 1, ob.pos, f);
			if (end == ZSTD_e_end ? r == 0 : ib.pos == ib.size)
				break;
		}
		if (!n)
			break;
	}
	assert_int_equal(fclose(f), 0);
	ZSTD_freeCCtx(c);
}

/* Run CTP_TEST_BINARY with args; exit code, peak RSS in bytes. */
static int run_rss(uint64_t *rss, ...)
{
	const char *argv[16];
	int argc = 0, status;
	struct rusage ru;
	va_list ap;
	argv[argc++] = CTP_TEST_BINARY;
	va_start(ap, rss);
	for (const char *a; (a = va_arg(ap, const char *)) && argc < 15;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) ||
		    !freopen(errf, "w", stderr))
			_exit(127);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	*rss = (uint64_t)ru.ru_maxrss * 1024;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `show [--max-decompressed cap] file` (cap 0: the default config's)
 * exits with `code`, says `want`, and stays within cap + constant. */
static void expect_show(const char *file, uint64_t cap, int code,
			const char *want)
{
	char caps[32], *e = NULL;
	size_t n;
	uint64_t rss, bound = (cap ? cap : 512 * MiB) + RSS_CONSTANT;
	snprintf(caps, sizeof(caps), "%llu", (unsigned long long)cap);
	int rc = cap ? run_rss(&rss, "show", "--max-decompressed", caps, file,
			       NULL)
		     : run_rss(&rss, "show", file, NULL);
	assert_int_equal(e2e_read_file(errf, &e, &n), 0);
	if (rc != code || (want && !strstr(e, want)))
		fail_msg("show %s (cap %s): exit %d, want %d \"%s\"; stderr:\n"
			 "%s",
			 file, caps, rc, code, want ? want : "", e);
	free(e);
	fprintf(stderr, "# show %s, cap %llu MiB: peak RSS %.1f MiB\n",
		strrchr(file, '/') + 1,
		(unsigned long long)((cap ? cap : 512 * MiB) / MiB),
		(double)rss / MiB);
	if (!SANITIZED && rss > bound)
		fail_msg("show %s: peak RSS %llu bytes, over cap + constant "
			 "%llu",
			 file, (unsigned long long)rss,
			 (unsigned long long)bound);
}

static int setup(void **state)
{
	(void)state;
	if (e2e_tmpdir("reader-bounds", tmp, sizeof(tmp)) < 0 ||
	    E2E_PATHF(errf, "%s/err", tmp) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

/* A 3 KB file: an array of 10^8 nils (100 MB decompressed, 2.4 GB as
 * msgpack-c objects). */
static void test_nils(void **state)
{
	(void)state;
	char path[PATH_MAX];
	const unsigned char head[] = {0xdd, 0x05, 0xf5, 0xe1, 0x00};
	assert_int_equal(E2E_PATHF(path, "%s/nils.ctprof", tmp), 0);
	write_frame(path, head, sizeof(head), 0xc0, 100000000, 21);
	expect_show(path, 0, 1,
		    "decoding needs more memory than the decompression cap of "
		    "536870912 bytes allows (100000005 bytes of MessagePack)");
	expect_show(path, 64 * MiB, 1,
		    "exceeds the decompression cap of 67108864 bytes");
	expect_show(path, 120 * MiB, 1, "decoding needs more memory");
}

/* A frame of zeros one MiB larger than the cap, with the largest window
 * the reader takes (8 MiB). */
static void test_zeros(void **state)
{
	(void)state;
	char path[PATH_MAX];
	assert_int_equal(E2E_PATHF(path, "%s/zeros.ctprof", tmp), 0);
	write_frame(path, "", 0, 0, 513 * MiB, 23);
	expect_show(path, 0, 1,
		    "decompressed data exceeds the decompression cap of "
		    "536870912 bytes");
	expect_show(path, 64 * MiB, 1,
		    "exceeds the decompression cap of 67108864 bytes");
	/* A larger window than any writer level uses is refused. */
	assert_int_equal(E2E_PATHF(path, "%s/window.ctprof", tmp), 0);
	write_frame(path, "", 0, 0, 64 * MiB, 26);
	expect_show(path, 0, 1, "the zstd frame needs a window over 8 MiB");
}

/* Maps: an array of 4 million maps {nil: nil} (3 bytes, 3 objects each:
 * 12 MB that msgpack-c would make 288 MB), and maps nested 100,000 deep. */
static void test_maps(void **state)
{
	(void)state;
	char path[PATH_MAX];
	size_t n = 4 * 1000 * 1000, d = 100000;
	unsigned char *raw = malloc(5 + 3 * n);
	assert_non_null(raw);
	raw[0] = 0xdd;
	for (int i = 0; i < 4; i++)
		raw[1 + i] = (unsigned char)(n >> (24 - 8 * i));
	for (size_t i = 0; i < n; i++)
		memcpy(raw + 5 + 3 * i, "\x81\xc0\xc0", 3);
	assert_int_equal(E2E_PATHF(path, "%s/maps.ctprof", tmp), 0);
	write_frame(path, raw, 5 + 3 * n, 0, 0, 21);
	expect_show(path, 64 * MiB, 1,
		    "decoding needs more memory than the decompression cap of "
		    "67108864 bytes allows (12000005 bytes of MessagePack)");
	/* Within the default cap it decodes, and is not a snapshot. */
	expect_show(path, 0, 1,
		    "not a ctprof-core snapshot (the top level is an array");

	/* {nil: {nil: {...}}} 100,000 deep, then nil. */
	for (size_t i = 0; i < d; i++)
		memcpy(raw + 2 * i, "\x81\xc0", 2);
	raw[2 * d] = 0xc0;
	assert_int_equal(E2E_PATHF(path, "%s/deep.ctprof", tmp), 0);
	write_frame(path, raw, 2 * d + 1, 0, 0, 21);
	free(raw);
	expect_show(path, 0, 1, "corrupt MessagePack (nested too deep");
}

/* A real snapshot of 20,000 threads opens with a cap of exactly what it
 * needs (and not one byte less), and show stays within that. */
static void test_exact_fit(void **state)
{
	(void)state;
	char path[PATH_MAX], e[512];
	static const struct ctp_field_desc f = {
		"t.u",	      NULL,	      CTP_SCOPE_THREAD,
		CTP_TYPE_U64, CTP_UNIT_COUNT, CTP_KIND_COUNTER,
		CTP_RULE_SUM};
	assert_int_equal(E2E_PATHF(path, "%s/real.ctprof", tmp), 0);
	struct ctp_capture *cap = sb_capture("p");
	int fid = ctp_registry_add(&cap->reg, 0, &f);
	assert_true(fid >= 0);
	for (uint32_t p = 0; p < 200; p++) {
		sb_process(cap, 10000 + p * 200, "proc");
		for (uint32_t t = 0; t < 100; t++) {
			uint32_t r = sb_thread(cap, 10000 + p * 200 + t,
					       "worker-thread", -1);
			sb_put_u64(cap, &cap->threads[0], r, CTP_THREAD_IDENT,
				   fid, (uint64_t)t * 977);
		}
	}
	if (sb_write(cap, path, e, sizeof(e)) < 0)
		fail_msg("%s", e);
	ctp_capture_free(cap);
	struct ctp_snap *s;
	if (ctp_snap_open(path, 1ull << 40, &s, e, sizeof(e)) < 0)
		fail_msg("%s", e);
	uint64_t mem = ctp_snap_mem_size(s);
	ctp_snap_free(s);
	fprintf(stderr, "# real.ctprof: needs %llu bytes\n",
		(unsigned long long)mem);
	expect_show(path, mem, 0, NULL);
	expect_show(path, mem - 1, 1, "decoding needs more memory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nils),
		cmocka_unit_test(test_zeros),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_exact_fit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
