// SPDX-License-Identifier: MIT
/*
 * ctprof-core with jemalloc-probe on the live host:
 *
 *   debian_no_debuginfo  a worker linked against the distribution's
 *                        libjemalloc.so.2 (Debian's has no DWARF) is
 *                        tagged no-debuginfo, and the snapshot's hint,
 *                        `show` and the -v log name it with its pid and
 *                        the remedy; running with CAP_SYS_PTRACE, no
 *                        hint blames a missing privilege;
 *   default_never_ptraces
 *                        a static jemalloc worker running on a deleted
 *                        copy of libc (libthread_db cannot serve it) is
 *                        tagged thread-db and never ptraced with no
 *                        `method` option: strace of the collector shows no
 *                        PTRACE_SEIZE; with `method: auto` it does (so the
 *                        check can see one).
 *
 * Each case exits 77 for what the host lacks (the worker, strace).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

extern char **environ;

static char tmp[PATH_MAX];

/* A worker holding 16 MiB, started with LD_LIBRARY_PATH=libdir (NULL:
 * none); its pid, or -1. */
static pid_t spawn_worker(const char *path, const char *libdir)
{
	int p[2];
	char fdarg[16], buf[128];
	size_t len = 0;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		if (libdir)
			setenv("LD_LIBRARY_PATH", libdir, 1);
		execl(path, path, fdarg, "hold", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && len < sizeof(buf) - 1) {
		struct pollfd pf = {p[0], POLLIN, 0};
		ssize_t n;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		n = read(p[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len))
			break;
	}
	close(p[0]);
	buf[len] = '\0';
	if (pid > 0 && buf[0] != 'R') {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Config: jemalloc-probe alone, required, with `method` when not NULL. */
static void write_config(const char *path, const char *method)
{
	char text[1024];
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\"]\n"
			 "workers: 1\n"
			 "plugins:\n"
			 "  jemalloc-probe:\n"
			 "    required: true\n"
			 "%s%s%s",
			 CTP_TEST_PLUGIN_DIR,
			 method ? "    options: {method: " : "",
			 method ? method : "", method ? "}\n" : "");

	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(e2e_write_file(path, text, (size_t)n), 0);
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *snap)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);

	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		if (!strcmp(p[i].name, "jemalloc-probe"))
			return &p[i];
	fail_msg("no jemalloc-probe in the snapshot");
	return NULL;
}

static uint64_t summary(const struct ctp_snap *snap, const char *name)
{
	const struct ctp_snap_plugin *p = plugin(snap);

	for (size_t i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			return p->summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

static bool cap_sys_ptrace(void)
{
	char *b, val[64];
	bool yes = false;

	if (e2e_read_file("/proc/self/status", &b, NULL) < 0)
		return false;
	if (e2e_status_value(b, "CapEff", val, sizeof(val)))
		yes = (strtoull(val, NULL, 16) >> 19) & 1;
	free(b);
	return yes;
}

static void debian_no_debuginfo(void **state)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], shown[PATH_MAX];
	char want[256], *text = NULL;
	const struct ctp_snap_plugin *p;
	struct ctp_snap *snap;
	pid_t pid;

	(void)state;
	if (!JEP_WORKER_DEBIAN[0]) {
		print_message("SKIP: no libjemalloc.so.2 installed\n");
		skip();
	}
	pid = spawn_worker(JEP_WORKER_DEBIAN, NULL);
	assert_true(pid > 0);
	assert_int_equal(E2E_PATHF(cfg, "%s/deb.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(out, "%s/deb.ctprof", tmp), 0);
	assert_int_equal(E2E_PATHF(log, "%s/deb.log", tmp), 0);
	assert_int_equal(E2E_PATHF(shown, "%s/deb.show", tmp), 0);
	write_config(cfg, NULL);
	{
		const char *args[] = {"--config", cfg, "-o", out, "-v", NULL};

		assert_int_equal(e2e_run(args, NULL, log), 0);
	}
	assert_int_equal(
		ctp_snap_open(out, 1ull << 31, &snap, want, sizeof(want)), 0);
	reap(pid);
	p = plugin(snap);
	assert_true(summary(snap, "tag.no-debuginfo") >= 1);
	assert_non_null(p->hint);
	print_message("[ INFO     ] hint: %s\n", p->hint);
	/* The worker, by name and pid, under its tag, with the remedy. */
	snprintf(want, sizeof(want), "jemalloc_worker (pid %d)", (int)pid);
	{
		const char *tag = strstr(p->hint, "no-debuginfo: ");
		const char *ex = strstr(p->hint, want);
		const char *fix = strstr(p->hint, "install its debug symbols "
						  "or set DEBUGINFOD_URLS");

		if (!tag || !ex || !fix || ex < tag || fix < ex)
			fail_msg("hint does not name %s under no-debuginfo: "
				 "%s",
				 want, p->hint);
	}
	if (cap_sys_ptrace() && (strstr(p->hint, "run as root") ||
				 strstr(p->hint, "grant CAP_SYS_PTRACE")))
		fail_msg("privileged, yet the hint blames privilege: %s",
			 p->hint);
	/* -v: the tag's line names the worker too. */
	assert_int_equal(e2e_read_file(log, &text, NULL), 0);
	if (!strstr(text, want) || !strstr(text, "no-debuginfo: ")) {
		e2e_show_file("ctprof-core -v", log);
		fail_msg("-v does not name %s", want);
	}
	free(text);
	/* show prints the hint on its own line (its start: show cuts a hint
	 * at 400 characters, and a jemalloc worker of a test running beside
	 * this one can make it that long). */
	{
		const char *args[] = {"show", "--summary", out, NULL};
		char line[1200];

		assert_int_equal(e2e_run(args, shown, NULL), 0);
		assert_int_equal(e2e_read_file(shown, &text, NULL), 0);
		snprintf(line, sizeof(line), "  hint: %.200s", p->hint);
		if (!strstr(text, line))
			fail_msg("show does not print the hint:\n%s", text);
		free(text);
	}
	ctp_snap_free(snap);
}

/* Copy this process's libc into dir; its path in dst. */
static int copy_libc(const char *dir, char *dst, size_t dlen)
{
	char *maps, *p, src[PATH_MAX] = "", *data;
	size_t len;

	if (e2e_read_file("/proc/self/maps", &maps, NULL) < 0)
		return -1;
	for (p = maps; (p = strchr(p, '/'));) {
		size_t n = strcspn(p, "\n");

		if (n < sizeof(src) && memmem(p, n, "/libc.so", 8)) {
			memcpy(src, p, n);
			src[n] = '\0';
			break;
		}
		p += n;
	}
	free(maps);
	if (!src[0] || e2e_read_file(src, &data, &len) < 0)
		return -1;
	if (e2e_pathf(dst, dlen, "%s/%s", dir, strrchr(src, '/') + 1) < 0) {
		free(data);
		return -1;
	}
	int r = e2e_write_file(dst, data, len);
	free(data);
	return r;
}

static char asan_saved[1024];
static bool asan_had;

/* ctprof-core under `strace -f -e trace=ptrace`; the number of
 * PTRACE_SEIZE calls in its log, or -1. */
static int traced_capture(const char *tag, const char *method,
			  struct ctp_snap **snap)
{
	char cfg[PATH_MAX], out[PATH_MAX], slog[PATH_MAX], elog[PATH_MAX];
	char err[512], *text;
	const char *argv[] = {"strace",
			      "-f",
			      "-qq",
			      "-e",
			      "trace=ptrace",
			      "-o",
			      slog,
			      CTP_TEST_BINARY,
			      "--config",
			      cfg,
			      "-o",
			      out,
			      NULL};
	posix_spawn_file_actions_t fa;
	int st, seize = 0;
	pid_t pid;

	if (E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag) < 0 ||
	    E2E_PATHF(out, "%s/%s.ctprof", tmp, tag) < 0 ||
	    E2E_PATHF(slog, "%s/%s.strace", tmp, tag) < 0 ||
	    E2E_PATHF(elog, "%s/%s.log", tmp, tag) < 0)
		return -1;
	write_config(cfg, method);
	/* LeakSanitizer cannot run under a tracer (it ptraces itself). */
	{
		const char *o = getenv("ASAN_OPTIONS");
		char opts[1024];

		snprintf(opts, sizeof(opts), "%s%sdetect_leaks=0", o ? o : "",
			 o && *o ? ":" : "");
		snprintf(asan_saved, sizeof(asan_saved), "%s", o ? o : "");
		asan_had = o != NULL;
		setenv("ASAN_OPTIONS", opts, 1);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					 O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, elog,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	st = posix_spawnp(&pid, "strace", &fa, NULL, (char *const *)argv,
			  environ);
	posix_spawn_file_actions_destroy(&fa);
	if (asan_had)
		setenv("ASAN_OPTIONS", asan_saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	if (st || e2e_wait(pid, &st) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		e2e_show_file("strace ctprof-core", elog);
		return -1;
	}
	if (ctp_snap_open(out, 1ull << 31, snap, err, sizeof(err)) < 0 ||
	    e2e_read_file(slog, &text, NULL) < 0)
		return -1;
	for (const char *q = text; (q = strstr(q, "PTRACE_SEIZE")); q++)
		seize++;
	free(text);
	return seize;
}

static void default_never_ptraces(void **state)
{
	char dir[PATH_MAX], libc[PATH_MAX];
	struct ctp_snap *snap = NULL;
	int seize;
	pid_t pid;

	(void)state;
	if (!JEP_WORKER_STATIC[0]) {
		print_message("SKIP: %s\n", JEP_SKIP_REASON);
		skip();
	}
	if (system("strace -V >/dev/null 2>&1") != 0) {
		print_message("SKIP: no strace\n");
		skip();
	}
	assert_int_equal(E2E_PATHF(dir, "%s/lib", tmp), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(copy_libc(dir, libc, sizeof(libc)), 0);
	pid = spawn_worker(JEP_WORKER_STATIC, dir);
	unlink(libc);
	assert_true(pid > 0);

	/* No method option: the stop-free read only. */
	seize = traced_capture("default", NULL, &snap);
	assert_true(seize >= 0);
	print_message("[ INFO     ] default: %d PTRACE_SEIZE, thread-db %llu, "
		      "method_ptrace %llu\n",
		      seize, (unsigned long long)summary(snap, "tag.thread-db"),
		      (unsigned long long)summary(snap, "method_ptrace"));
	assert_true(summary(snap, "tag.thread-db") >= 1);
	assert_int_equal(summary(snap, "method_ptrace"), 0);
	assert_int_equal(seize, 0);
	ctp_snap_free(snap);

	/* Opted in: the same target is seized, and strace sees it. */
	seize = traced_capture("auto", "auto", &snap);
	print_message("[ INFO     ] auto: %d PTRACE_SEIZE\n", seize);
	assert_true(seize >= 1);
	assert_true(summary(snap, "method_ptrace") >= 1);
	ctp_snap_free(snap);
	reap(pid);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("jemalloc-e2e", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	e2e_rm_rf(tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debian_no_debuginfo),
		cmocka_unit_test(default_never_ptraces),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
