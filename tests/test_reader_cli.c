/* SPDX-License-Identifier: MIT */
/*
 * The snapshot readers' command lines (core/cli/readcli.c): `show`, `dump` and
 * `compare` take the decompression cap from --max-decompressed (with the
 * config's size suffixes), else from --config FILE, else from the default
 * config when it exists; and a missing or extra operand is named, not
 * answered with the whole usage. Runs the real binary, and a copy of it in
 * an installed layout (bin/, etc/ctprof/) to have a default config of our
 * own. And the option loop every reader runs (ctp_readopts_parse), in
 * process.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "build_config.h"
#include "cli.h"
#include "e2e_util.h"
#include "model.h"
#include "readcli.h"
#include "snapbuild.h"

static char tmp[PATH_MAX], snap[PATH_MAX], out[PATH_MAX], err[PATH_MAX];

/* Run `bin` with args (NULL-terminated, after argv[0]); stdout and stderr
 * to out and err. Returns the exit code, or -1 when it did not exit. */
static int run(const char *bin, ...)
{
	const char *argv[32];
	int argc = 0, status;
	va_list ap;
	argv[argc++] = bin;
	va_start(ap, bin);
	for (const char *a; (a = va_arg(ap, const char *)) && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		alarm(120); /* a reader that hangs ends here (-1) */
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
	char *b = NULL;
	size_t n;
	assert_int_equal(e2e_read_file(path, &b, &n), 0);
	return b;
}

/* The exit code is `code` and stderr holds every one of the strings. */
static void expect(int got, int code, ...)
{
	char *e = slurp(err);
	va_list ap;
	if (got != code)
		fail_msg("exit %d, want %d; stderr:\n%s", got, code, e);
	va_start(ap, code);
	for (const char *s; (s = va_arg(ap, const char *));)
		if (!strstr(e, s))
			fail_msg("stderr lacks \"%s\":\n%s", s, e);
	va_end(ap);
	free(e);
}

static void expect_no(const char *s)
{
	char *e = slurp(err);
	if (strstr(e, s))
		fail_msg("stderr has \"%s\":\n%s", s, e);
	free(e);
}

static void write_text(const char *path, const char *text)
{
	assert_int_equal(e2e_write_file(path, text, strlen(text)), 0);
}

static int setup(void **state)
{
	(void)state;
	char e[512];
	if (e2e_tmpdir("reader-cli", tmp, sizeof(tmp)) < 0 ||
	    E2E_PATHF(snap, "%s/s.ctprof", tmp) < 0 ||
	    E2E_PATHF(out, "%s/out", tmp) < 0 ||
	    E2E_PATHF(err, "%s/err", tmp) < 0)
		return -1;
	/* 400 threads: several KiB decompressed, well over 1K. */
	struct ctp_capture *cap = sb_capture("p");
	for (uint32_t p = 0; p < 20; p++) {
		sb_process(cap, 1000 + p * 100, "proc");
		for (uint32_t t = 0; t < 20; t++)
			sb_thread(cap, 1000 + p * 100 + t, "worker-thread", -1);
	}
	int r = sb_write(cap, snap, e, sizeof(e));
	ctp_capture_free(cap);
	if (r < 0) {
		fprintf(stderr, "%s\n", e);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

static void test_operands(void **state)
{
	(void)state;
	const char *b = CTP_TEST_BINARY;
	expect(run(b, "show", NULL), 2, "ctprof-core show: missing FILE",
	       "Try 'ctprof-core show --help'.", NULL);
	expect_no("Usage:");
	expect(run(b, "show", snap, "extra", NULL), 2,
	       "ctprof-core show: unexpected argument 'extra' (show takes one "
	       "FILE)",
	       NULL);
	expect_no("Usage:");
	expect(run(b, "dump", NULL), 2, "ctprof-core dump: missing FILE", NULL);
	expect(run(b, "dump", snap, snap, NULL), 2,
	       "ctprof-core dump: unexpected argument", NULL);
	expect(run(b, "compare", NULL), 2,
	       "ctprof-core compare: missing BASE (compare takes BASE and "
	       "CAND)",
	       NULL);
	expect(run(b, "compare", snap, NULL), 2,
	       "ctprof-core compare: missing CAND", NULL);
	expect(run(b, "compare", snap, snap, "x\ty", NULL), 2,
	       "ctprof-core compare: unexpected argument 'x\\x09y'", NULL);
	expect_no("Usage:");
	/* An unknown option: getopt says which, then where help is. */
	expect(run(b, "show", "--bogus", snap, NULL), 2, "--bogus",
	       "Try 'ctprof-core show --help'.", NULL);
	expect_no("Usage:");
	/* All still read a good file. */
	expect(run(b, "show", snap, NULL), 0, NULL);
	expect(run(b, "dump", snap, NULL), 0, NULL);
	expect(run(b, "compare", snap, snap, NULL), 0, NULL);
}

static void test_cap_option(void **state)
{
	(void)state;
	const char *b = CTP_TEST_BINARY;
	char cfg[PATH_MAX], bad[PATH_MAX];
	assert_int_equal(E2E_PATHF(cfg, "%s/small.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(bad, "%s/bad.yaml", tmp), 0);
	write_text(cfg, "max_decompressed_bytes: 1K\n");
	write_text(bad, "max_decompressed_bytes: lots\n");

	/* Suffixes as the config key takes them. */
	expect(run(b, "show", "--max-decompressed", "1K", snap, NULL), 1,
	       "cap of 1024 bytes", NULL);
	expect(run(b, "show", "--max-decompressed", "1KiB", snap, NULL), 1,
	       "cap of 1024 bytes", NULL);
	expect(run(b, "show", "--max-decompressed", "1M", snap, NULL), 0, NULL);
	expect(run(b, "dump", "--max-decompressed", "2K", snap, NULL), 1,
	       "cap of 2048 bytes", NULL);
	expect(run(b, "compare", "--max-decompressed", "1K", snap, snap, NULL),
	       1, "cap of 1024 bytes", NULL);
	expect(run(b, "show", "--max-decompressed", "1X", snap, NULL), 2,
	       "--max-decompressed wants a byte count", "not '1X'", NULL);
	expect(run(b, "show", "--max-decompressed", "0", snap, NULL), 2,
	       "--max-decompressed wants a byte count", NULL);

	/* --config: its key applies; the option overrides it. */
	expect(run(b, "show", "--config", cfg, snap, NULL), 1,
	       "cap of 1024 bytes", NULL);
	expect(run(b, "dump", "-c", cfg, snap, NULL), 1, "cap of 1024 bytes",
	       NULL);
	expect(run(b, "compare", "--config", cfg, snap, snap, NULL), 1,
	       "cap of 1024 bytes", NULL);
	expect(run(b, "show", "--config", cfg, "--max-decompressed", "1M", snap,
		   NULL),
	       0, NULL);
	/* A broken or missing config is a usage error naming it. */
	expect(run(b, "show", "--config", bad, snap, NULL), 2, bad,
	       "max_decompressed_bytes", NULL);
	expect(run(b, "dump", "--config", "/nonexistent.yaml", snap, NULL), 2,
	       "/nonexistent.yaml", NULL);
}

/* A FIFO or a device named as FILE is refused at once, never waited on (a
 * FIFO nobody writes would block open() forever); a pipe is read as "-". */
static void test_not_a_file(void **state)
{
	(void)state;
	const char *b = CTP_TEST_BINARY;
	char fifo[PATH_MAX];
	assert_int_equal(E2E_PATHF(fifo, "%s/fifo", tmp), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	expect(run(b, "show", fifo, NULL), 1,
	       "fifo: a FIFO, not a snapshot file (a pipe is read as `-`",
	       NULL);
	expect(run(b, "dump", fifo, NULL), 1, "a FIFO", NULL);
	expect(run(b, "compare", snap, fifo, NULL), 1, "a FIFO", NULL);
	expect(run(b, "export", fifo, NULL), 1, "a FIFO", NULL);
	expect(run(b, "dump", "/dev/null", NULL), 1,
	       "/dev/null: a character device, not a snapshot file", NULL);
	expect(run(b, "dump", tmp, NULL), 1, "Is a directory", NULL);
	assert_int_equal(unlink(fifo), 0);
}

/* A copy of the binary in PREFIX/bin with PREFIX/<config dir>/
 * collectors.yaml is an installed binary with a default config. */
static void test_default_config(void **state)
{
	(void)state;
	char bin[PATH_MAX], dir[PATH_MAX], cfg[PATH_MAX], *data = NULL;
	size_t n;
	assert_int_equal(E2E_PATHF(dir, "%s/prefix", tmp), 0);
	assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
	assert_int_equal(E2E_PATHF(dir, "%s/prefix/bin", tmp), 0);
	assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
	assert_int_equal(E2E_PATHF(bin, "%s/ctprof-core", dir), 0);
	assert_int_equal(e2e_read_file(CTP_TEST_BINARY, &data, &n), 0);
	assert_int_equal(e2e_write_file(bin, data, n), 0);
	free(data);
	assert_int_equal(chmod(bin, 0700), 0);
	assert_int_equal(E2E_PATHF(cfg, "%s/" CTP_CONFIG_DIR_FROM_BIN, dir), 0);
	/* mkdir -p of the config dir */
	for (char *p = cfg + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(cfg, 0700) == 0 || errno == EEXIST);
		*p = '/';
	}
	assert_true(mkdir(cfg, 0700) == 0 || errno == EEXIST);
	strncat(cfg, "/collectors.yaml", sizeof(cfg) - strlen(cfg) - 1);

	/* No default config: the built-in cap reads it. */
	expect(run(bin, "show", snap, NULL), 0, NULL);
	write_text(cfg, "max_decompressed_bytes: 1K\n");
	expect(run(bin, "show", snap, NULL), 1, "cap of 1024 bytes", NULL);
	expect(run(bin, "dump", snap, NULL), 1, "cap of 1024 bytes", NULL);
	expect(run(bin, "compare", snap, snap, NULL), 1, "cap of 1024 bytes",
	       NULL);
	expect(run(bin, "show", "--max-decompressed", "1M", snap, NULL), 0,
	       NULL);
	write_text(cfg, "max_decompressed_bytes: 1M\n");
	expect(run(bin, "show", snap, NULL), 0, NULL);
	assert_int_equal(unlink(cfg), 0);
}

/* What a command's own options saw (ctp_readopts_own_fn's ctx). */
struct own_seen {
	int n, code[8];
	const char *arg[8];
};

enum { O_OWN = CTP_READOPT_FIRST_FREE, O_STOP };

static int own(void *ctx, int c, const char *arg)
{
	struct own_seen *s = ctx;
	if (s->n < 8) {
		s->code[s->n] = c;
		s->arg[s->n] = arg;
	}
	s->n++;
	return c == O_STOP ? 7 : c == O_OWN ? -1 : CTP_EXIT_USAGE;
}

static int parse(struct ctp_readopts *r, struct own_seen *s, char **argv)
{
	static const struct option lopts[] = {
		CTP_READOPT_LONGOPTS,
		{"own", required_argument, NULL, O_OWN},
		{"stop", no_argument, NULL, O_STOP},
		{0},
	};
	int argc = 0;
	while (argv[argc])
		argc++;
	*r = (struct ctp_readopts){0};
	*s = (struct own_seen){0};
	opterr = 0; /* the unknown option's message is not the test's */
	return ctp_readopts_parse("test", r, argc, argv, "hc:", lopts, own, s);
}

/* Shared options land in the readopts and are recorded as given; the
 * command's own go to its function in order; the first exit status ends
 * the loop; each call parses from the start. */
static void test_parse_loop(void **state)
{
	(void)state;
	struct ctp_readopts r;
	struct own_seen s;
	char *a1[] = {"x", "--own",   "A", "--group-by", "pcomm", "--own",
		      "B", "--limit", "5", "FILE",	 NULL};
	assert_int_equal(parse(&r, &s, a1), -1);
	assert_string_equal(r.group_by, "pcomm");
	assert_int_equal(r.limit, 5);
	assert_true(ctp_readopts_given(&r, CTP_READOPT_GROUP_BY));
	assert_true(ctp_readopts_given(&r, CTP_READOPT_LIMIT));
	assert_false(ctp_readopts_given(&r, CTP_READOPT_FIELDS));
	assert_false(ctp_readopts_given(&r, CTP_READOPT_CAP));
	assert_false(ctp_readopts_given(&r, O_OWN));
	assert_int_equal(s.n, 2);
	assert_int_equal(s.code[0], O_OWN);
	assert_string_equal(s.arg[0], "A");
	assert_string_equal(s.arg[1], "B");
	assert_string_equal(a1[optind], "FILE");
	ctp_readopts_done(&r);

	/* Again over a new argv: from its start, nothing left of the first. */
	char *a2[] = {"x", "--fields", "a*,b", "--stop", "--own", "C", NULL};
	assert_int_equal(parse(&r, &s, a2), 7);
	assert_int_equal(r.n_globs, 2);
	assert_true(ctp_readopts_given(&r, CTP_READOPT_FIELDS));
	assert_false(ctp_readopts_given(&r, CTP_READOPT_GROUP_BY));
	assert_int_equal(s.n, 1); /* --own C after --stop is never read */
	assert_int_equal(s.code[0], O_STOP);
	ctp_readopts_done(&r);

	/* A shared option's usage error ends it; an unknown option is the
	 * command's to refuse. */
	char *a3[] = {"x", "--limit", "many", "--own", "D", NULL};
	assert_int_equal(parse(&r, &s, a3), CTP_EXIT_USAGE);
	assert_int_equal(s.n, 0);
	ctp_readopts_done(&r);
	char *a4[] = {"x", "--nonesuch", "--own", "E", NULL};
	assert_int_equal(parse(&r, &s, a4), CTP_EXIT_USAGE);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.code[0], '?');
	ctp_readopts_done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_cap_option),
		cmocka_unit_test(test_default_config),
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_parse_loop),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
