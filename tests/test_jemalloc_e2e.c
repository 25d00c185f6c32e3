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
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "jemalloc_unknown.h"
#include "reader.h"

extern char **environ;

static char tmp[PATH_MAX];

/* The worker with `mode` and `arg` (NULL: none), started with
 * LD_LIBRARY_PATH=libdir (NULL: none): its pid once it said "R ...", what
 * it said in out (NUL-terminated), or -1. */
static pid_t spawn_mode(const char *path, const char *libdir, const char *mode,
			const char *arg, char *out, size_t cap)
{
	int p[2];
	char fdarg[16];
	size_t len = 0;
	pid_t pid;

	out[0] = '\0';
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		if (libdir)
			setenv("LD_LIBRARY_PATH", libdir, 1);
		execl(path, path, fdarg, mode, arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && len < cap - 1 && strncmp(out, "R ", 2) &&
	       !strstr(out, "\nR ")) {
		struct pollfd pf = {p[0], POLLIN, 0};
		ssize_t n;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		n = read(p[0], out + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		out[len] = '\0';
	}
	close(p[0]);
	if (pid > 0 && strncmp(out, "R ", 2) && !strstr(out, "\nR ")) {
		print_message("worker said: %s\n", out);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* A worker holding 16 MiB; its pid, or -1. */
static pid_t spawn_worker(const char *path, const char *libdir)
{
	char buf[128];
	return spawn_mode(path, libdir, "hold", NULL, buf, sizeof(buf));
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Config: jemalloc-probe alone, required, with options `opts` (the
 * inside of a YAML flow map, "method: auto") when not NULL. */
static void write_config(const char *path, const char *opts)
{
	char text[1024];
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\"]\n"
			 "workers: 1\n"
			 "plugins:\n"
			 "  jemalloc-probe:\n"
			 "    required: true\n"
			 "%s%s%s",
			 CTP_TEST_PLUGIN_DIR, opts ? "    options: {" : "",
			 opts ? opts : "", opts ? "}\n" : "");

	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(e2e_write_file(path, text, (size_t)n), 0);
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *snap)
{
	return e2e_plugin(snap, "jemalloc-probe");
}

static uint64_t summary(const struct ctp_snap *snap, const char *name)
{
	return e2e_summary(snap, "jemalloc-probe", name);
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

/* dir/libjemalloc.so.2: Debian's, with a version no entry knows. */
static void unknown_jemalloc(const char *dir)
{
	char dst[PATH_MAX];

	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(E2E_PATHF(dst, "%s/libjemalloc.so.2", dir), 0);
	assert_int_equal(jt_unknown_version(JEP_DEBIAN_LIB, dst), 0);
}

/* A thread's own reading of its counters (jemalloc_worker report). */
struct reading {
	long tid;
	unsigned long long a, d;
};

/* The worker in report mode with n threads: its pid and their readings
 * in r, or -1. */
static pid_t spawn_reporter(const char *path, const char *libdir, int n,
			    struct reading *r)
{
	char narg[16], buf[4096];
	int got = 0;

	snprintf(narg, sizeof(narg), "%d", n);
	pid_t pid = spawn_mode(path, libdir, "report", narg, buf, sizeof(buf));
	for (char *l = buf; pid > 0 && l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (l[0] == 'T' && got < n &&
		    sscanf(l, "T %ld %llu %llu", &r[got].tid, &r[got].a,
			   &r[got].d) == 3)
			got++;
	if (pid > 0 && got != n) {
		print_message("worker said: %s\n", buf);
		reap(pid);
		return -1;
	}
	return pid;
}

static long proc_row(const struct ctp_snap *snap, pid_t tgid)
{
	return e2e_row(snap, CTP_SCOPE_PROCESS, tgid);
}

static long thread_row(const struct ctp_snap *snap, long tid)
{
	return e2e_row(snap, CTP_SCOPE_THREAD, tid);
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
	/* Debian's build is in the shipped layouts: a copy whose version
	 * string no entry knows is a jemalloc without DWARF nobody knows. */
	char dir[PATH_MAX];
	assert_int_equal(E2E_PATHF(dir, "%s/unknown", tmp), 0);
	unknown_jemalloc(dir);
	pid = spawn_worker(JEP_WORKER_DEBIAN, dir);
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
		const char *fix =
			strstr(p->hint, "install its debug symbols or set "
					"option debuginfod: true with "
					"DEBUGINFOD_URLS, or add its tsd_s "
					"layout (ctprof-core jemalloc-layout)");

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

/* A loopback HTTP server standing for DEBUGINFOD_URLS: it answers every
 * request 404 and counts the connections, keeping the first request line. */
struct fake_server {
	int fd;
	unsigned port;
	pthread_t thread;
	atomic_bool stop;
	atomic_uint conns;
	char first[256];
};

static void serve_one(struct fake_server *s, int c)
{
	static const char reply[] = "HTTP/1.1 404 Not Found\r\n"
				    "Content-Length: 0\r\n"
				    "Connection: close\r\n\r\n";
	char buf[2048];
	size_t len = 0;

	/* The request's head, bounded: a client that says nothing for 10 s
	 * is answered anyway. */
	while (len < sizeof(buf) - 1) {
		struct pollfd pf = {c, POLLIN, 0};
		ssize_t n;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		n = read(c, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	buf[len] = '\0';
	if (atomic_fetch_add(&s->conns, 1) == 0)
		snprintf(s->first, sizeof(s->first), "%.*s",
			 (int)strcspn(buf, "\r\n"), buf);
	if (write(c, reply, sizeof(reply) - 1) < 0)
		print_message("fake server: write: %s\n", strerror(errno));
	close(c);
}

static void *serve(void *arg)
{
	struct fake_server *s = arg;

	while (!atomic_load(&s->stop)) {
		struct pollfd pf = {s->fd, POLLIN, 0};
		int c;

		if (poll(&pf, 1, 50) <= 0)
			continue;
		c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0)
			serve_one(s, c);
	}
	return NULL;
}

static void server_start(struct fake_server *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
	assert_int_equal(listen(s->fd, 64), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* Stop serving; connections made but not yet taken count too. The
 * connection count. */
static unsigned server_stop(struct fake_server *s)
{
	int c;

	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	assert_int_equal(fcntl(s->fd, F_SETFL, O_NONBLOCK), 0);
	while ((c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		atomic_fetch_add(&s->conns, 1);
		close(c);
	}
	close(s->fd);
	return atomic_load(&s->conns);
}

/* One capture of jemalloc-probe with `opts`, DEBUGINFOD_URLS pointing at
 * a fake server (and a fresh client cache, so no earlier answer stands in
 * for a query): how many connections it got, the first request in first. */
static unsigned debuginfod_capture(const char *tag, const char *opts,
				   char *first, size_t firstlen)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], cache[PATH_MAX];
	char url[64];
	struct fake_server s;
	unsigned n;
	int rc;

	assert_int_equal(E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(out, "%s/%s.ctprof", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(log, "%s/%s.log", tmp, tag), 0);
	assert_int_equal(E2E_PATHF(cache, "%s/%s.cache", tmp, tag), 0);
	write_config(cfg, opts);
	server_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", s.port);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	{
		const char *args[] = {"--config", cfg, "-o", out, NULL};

		rc = e2e_run_within(args, NULL, log, 600);
	}
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	n = server_stop(&s);
	if (rc != 0) {
		e2e_show_file("ctprof-core", log);
		fail_msg("capture %s: exit %d", tag, rc);
	}
	snprintf(first, firstlen, "%s", s.first);
	return n;
}

/* A build-id found in another process's file goes to debuginfod only
 * when the configuration says so (option debuginfod), whatever
 * DEBUGINFOD_URLS says: the stripped Debian jemalloc of a worker is
 * looked up on the server with debuginfod: true, and the server hears
 * nothing without it. */
static void debuginfod_opt_in(void **state)
{
	char first[256];
	pid_t pid;
	unsigned n;

	(void)state;
	if (!JEP_WORKER_DEBIAN[0]) {
		print_message("SKIP: no libjemalloc.so.2 installed\n");
		skip();
	}
	/* Proxies from the environment would take the queries elsewhere. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	pid = spawn_worker(JEP_WORKER_DEBIAN, NULL);
	assert_true(pid > 0);
	n = debuginfod_capture("dfd-default", NULL, first, sizeof(first));
	if (n)
		fail_msg("default: %u connections, the first: %s", n, first);
	n = debuginfod_capture("dfd-off", "debuginfod: false", first,
			       sizeof(first));
	if (n)
		fail_msg("debuginfod: false: %u connections, the first: %s", n,
			 first);
	n = debuginfod_capture("dfd-on", "debuginfod: true", first,
			       sizeof(first));
	reap(pid);
	print_message("[ INFO     ] debuginfod: true: %u connections, the "
		      "first: %s\n",
		      n, first);
	if (!n || strncmp(first, "GET /buildid/", 13) ||
	    !strstr(first, "/debuginfo "))
		fail_msg("debuginfod: true: %u connections, the first: %s", n,
			 first);
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

/* jemalloc-probe alone with options `opts` under strace: the number of
 * PTRACE_SEIZE calls, or -1 (e2e_traced_capture). */
static int traced_capture(const char *tag, const char *opts,
			  struct ctp_snap **snap)
{
	char cfg[PATH_MAX];

	if (E2E_PATHF(cfg, "%s/%s.yaml", tmp, tag) < 0)
		return -1;
	write_config(cfg, opts);
	return e2e_traced_capture(cfg, tmp, tag, "PTRACE_SEIZE", snap);
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
	seize = traced_capture("auto", "method: auto", &snap);
	print_message("[ INFO     ] auto: %d PTRACE_SEIZE\n", seize);
	assert_true(seize >= 1);
	assert_true(summary(snap, "method_ptrace") >= 1);
	ctp_snap_free(snap);
	reap(pid);
}

#define REPORTERS 4

/* `ctprof-core jemalloc-layout --name NAME LIB` into file `path`. */
static void learn(const char *name, const char *lib, const char *path)
{
	const char *args[] = {"jemalloc-layout", "--name", name, lib, NULL};
	assert_int_equal(e2e_run(args, path, NULL), 0);
}

/* Each reading equals the snapshot's counters of its thread. */
static void check_readings(const struct ctp_snap *snap, const struct reading *r,
			   int n)
{
	for (int i = 0; i < n; i++) {
		long tr = thread_row(snap, r[i].tid);
		assert_true(tr >= 0);
		uint64_t a =
			e2e_u64(snap, "jemalloc.allocated_bytes", (size_t)tr);
		uint64_t d =
			e2e_u64(snap, "jemalloc.deallocated_bytes", (size_t)tr);
		if (a != r[i].a || d != r[i].d)
			fail_msg("tid %ld: mallctl %llu/%llu, snapshot "
				 "%llu/%llu",
				 r[i].tid, r[i].a, r[i].d,
				 (unsigned long long)a, (unsigned long long)d);
	}
}

static void check_layout(const struct ctp_snap *snap, pid_t pid,
			 const char *want)
{
	long pr = proc_row(snap, pid);
	assert_true(pr >= 0);
	struct ctp_value lay = e2e_value(snap, "jemalloc.layout", (size_t)pr);
	assert_int_equal(lay.type, CTP_TYPE_STRING);
	if (!e2e_bytes_eq(lay.str, want))
		fail_msg("layout %.*s, want %s", (int)lay.str.len, lay.str.ptr,
			 want);
}

/* What a layout test needs, besides strace. */
enum { NEED_DEBIAN = 1, NEED_DEBUG_BUILD = 2 };

/* Skip without what a layout test needs: Debian's libjemalloc.so.2, the
 * -g jemalloc build, strace. */
static void need(unsigned what)
{
	if ((what & NEED_DEBIAN) && !JEP_WORKER_DEBIAN[0]) {
		print_message("SKIP: no libjemalloc.so.2 installed\n");
		skip();
	}
	if ((what & NEED_DEBUG_BUILD) && !JEP_WORKER_SHARED[0]) {
		print_message("SKIP: %s\n", JEP_SKIP_REASON);
		skip();
	}
	if (system("strace -V >/dev/null 2>&1") != 0) {
		print_message("SKIP: no strace\n");
		skip();
	}
}

/*
 * The worker `path` in report mode (LD_LIBRARY_PATH=libdir unless NULL),
 * captured once under strace with the option `layouts` and `method` (each
 * unless NULL): the snapshot, the worker's pid in *pid (reaped), its
 * threads' own readings in r. Nothing may be PTRACE_SEIZEd.
 */
static struct ctp_snap *capture_reporter(const char *tag, const char *path,
					 const char *libdir,
					 const char *layouts,
					 const char *method, struct reading *r,
					 pid_t *pid)
{
	char opts[PATH_MAX + 64];
	struct ctp_snap *snap = NULL;

	snprintf(opts, sizeof(opts), "%s%s%s%s%s%s",
		 layouts ? "layouts: \"" : "", layouts ? layouts : "",
		 layouts ? "\"" : "", layouts && method ? ", " : "",
		 method ? "method: " : "", method ? method : "");
	*pid = spawn_reporter(path, libdir, REPORTERS, r);
	assert_true(*pid > 0);
	int seize = traced_capture(tag, opts[0] ? opts : NULL, &snap);
	reap(*pid);
	assert_int_equal(seize, 0);
	return snap;
}

/* Into file `path`: the entry `name` of layouts file `from` (its first
 * line starting with it) renamed `as`, every offset 8 too far. */
static void shifted_entry(const char *from, const char *name, const char *as,
			  const char *path)
{
	char version[96], arch[32], line[512], *text, want[80];
	unsigned long long tls, tsd, st, al, de, pad;

	assert_int_equal(e2e_read_file(from, &text, NULL), 0);
	snprintf(want, sizeof(want), "%s ", name);
	const char *e = text;
	while (e && strncmp(e, want, strlen(want)))
		e = strchr(e, '\n'), e = e ? e + 1 : e;
	assert_non_null(e);
	assert_int_equal(sscanf(e + strlen(want),
				"%95s %31s %llu %llu %llu %llu %llu %llu",
				version, arch, &tls, &tsd, &st, &al, &de, &pad),
			 8);
	free(text);
	int n = snprintf(line, sizeof(line),
			 "%s %s %s %llu %llu %llu %llu %llu %llu\n", as,
			 version, arch, tls, tsd, st + 8, al + 8, de + 8, pad);
	assert_int_equal(e2e_write_file(path, line, (size_t)n), 0);
}

/*
 * Debian's libjemalloc.so.2 has no DWARF: its counters come from the
 * shipped layouts table. Each thread's own mallctl readings equal the
 * snapshot's, the process names the entry that served, and nothing is
 * ptrace-stopped (strace).
 */
static void debian_table(void **state)
{
	struct reading r[REPORTERS];
	pid_t pid;

	(void)state;
	need(NEED_DEBIAN);
	struct ctp_snap *snap = capture_reporter("table", JEP_WORKER_DEBIAN,
						 NULL, NULL, NULL, r, &pid);
	assert_true(summary(snap, "offsets_table") >= 1);
	check_layout(snap, pid, "5.3.0-x86_64");
	check_readings(snap, r, REPORTERS);
	for (int i = 0; i < REPORTERS; i++)
		print_message("[ INFO     ] tid %ld: mallctl %llu/%llu, equal "
			      "in the snapshot\n",
			      r[i].tid, r[i].a, r[i].d);
	ctp_snap_free(snap);
}

/*
 * A table entry with wrong offsets (Debian's, every offset 8 too far) is
 * caught by validation: the process is tagged layout-mismatch and records
 * nothing.
 */
static void corrupt_layout(void **state)
{
	struct reading r[REPORTERS];
	char shipped[PATH_MAX], bad[PATH_MAX];
	pid_t pid;

	(void)state;
	need(NEED_DEBIAN);
	assert_int_equal(E2E_PATHF(shipped, "%s/jemalloc-probe/layouts.txt",
				   CTP_TEST_PLUGIN_DIR),
			 0);
	assert_int_equal(E2E_PATHF(bad, "%s/bad-layouts.txt", tmp), 0);
	shifted_entry(shipped, "5.3.0-x86_64", "off-by-8", bad);
	struct ctp_snap *snap = capture_reporter("corrupt", JEP_WORKER_DEBIAN,
						 NULL, bad, NULL, r, &pid);
	assert_true(summary(snap, "tag.layout-mismatch") >= 1);
	long pr = proc_row(snap, pid);
	assert_true(pr >= 0);
	assert_int_equal(e2e_value(snap, "jemalloc.layout", (size_t)pr).type,
			 CTP_VALUE_ABSENT);
	for (int i = 0; i < REPORTERS; i++) {
		long tr = thread_row(snap, r[i].tid);
		assert_true(tr >= 0);
		assert_int_equal(
			e2e_value(snap, "jemalloc.allocated_bytes", (size_t)tr)
				.type,
			CTP_VALUE_ABSENT);
	}
	const struct ctp_snap_plugin *p = plugin(snap);
	print_message("[ INFO     ] hint: %s\n", p->hint ? p->hint : "");
	assert_non_null(p->hint);
	assert_non_null(strstr(p->hint, "layout-mismatch: "));
	ctp_snap_free(snap);
}

/* ---- Debian's redis-server --------------------------------------------- */

/* argv (a PATH program) with stdin from `in` and stdout to `out` (NULL:
 * /dev/null): its exit status, or -1. */
static int tool(const char *const *argv, const char *in, const char *out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO,
					 in ? in : "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO,
					 out ? out : "/dev/null",
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	st = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv,
			  environ);
	posix_spawn_file_actions_destroy(&fa);
	if (st || e2e_wait(pid, &st) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char redis_port[16];
static pid_t redis_pid = -1;

/* redis-cli -p PORT ARGS..., its output in tmp/cli.out (read into *text
 * when text is not NULL): its exit status. */
static int redis_cli(const char *a1, const char *a2, char **text)
{
	char out[PATH_MAX];
	const char *argv[] = {"redis-cli", "-p", redis_port, a1, a2, NULL};
	assert_int_equal(E2E_PATHF(out, "%s/cli.out", tmp), 0);
	int rc = tool(argv, NULL, out);
	if (text && e2e_read_file(out, text, NULL) < 0)
		*text = NULL;
	return rc;
}

/* INFO memory's used_memory. */
static uint64_t used_memory(void)
{
	char *text = NULL;
	assert_int_equal(redis_cli("info", "memory", &text), 0);
	const char *u = text ? strstr(text, "used_memory:") : NULL;
	assert_non_null(u);
	uint64_t v = strtoull(u + strlen("used_memory:"), NULL, 10);
	free(text);
	return v;
}

/* A free loopback port, as the kernel picks one. */
static void free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	snprintf(redis_port, sizeof(redis_port), "%u", ntohs(a.sin_port));
	close(fd);
}

/* redis-server on loopback with a config and directory of its own, up
 * when it answers PING. */
static void redis_start(void)
{
	char dir[PATH_MAX], conf[PATH_MAX], text[PATH_MAX * 2];
	assert_int_equal(E2E_PATHF(dir, "%s/redis", tmp), 0);
	assert_int_equal(E2E_PATHF(conf, "%s/redis.conf", tmp), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	free_port();
	int n = snprintf(text, sizeof(text),
			 "bind 127.0.0.1\nport %s\ndir %s\nsave \"\"\n"
			 "appendonly no\ndaemonize no\nlogfile \"\"\n",
			 redis_port, dir);
	assert_int_equal(e2e_write_file(conf, text, (size_t)n), 0);
	const char *argv[] = {"redis-server", conf, NULL};
	assert_int_equal(posix_spawnp(&redis_pid, "redis-server", NULL, NULL,
				      (char *const *)argv, environ),
			 0);
	for (int i = 0; i < 200; i++) {
		char *pong = NULL;
		if (redis_cli("ping", NULL, &pong) == 0 && pong &&
		    strstr(pong, "PONG")) {
			free(pong);
			return;
		}
		free(pong);
		usleep(50000);
	}
	fail_msg("redis-server on port %s did not answer PING", redis_port);
}

static void redis_stop(void)
{
	if (redis_pid <= 0)
		return;
	kill(redis_pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (waitpid(redis_pid, NULL, WNOHANG) == redis_pid) {
			redis_pid = -1;
			return;
		}
		usleep(50000);
	}
	kill(redis_pid, SIGKILL);
	waitpid(redis_pid, NULL, 0);
	redis_pid = -1;
}

/* The file of `n` SETs of `size` bytes each, in Redis' protocol. */
static void write_sets(const char *path, int n, size_t size)
{
	FILE *f = fopen(path, "we");
	char *val = malloc(size);
	assert_non_null(f);
	assert_non_null(val);
	memset(val, 'v', size);
	for (int i = 0; i < n; i++) {
		char key[32];
		int kl = snprintf(key, sizeof(key), "ctprof:%d", i);
		fprintf(f, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%zu\r\n", kl, key,
			size);
		fwrite(val, 1, size, f);
		fputs("\r\n", f);
	}
	free(val);
	assert_int_equal(fclose(f), 0);
}

/* Over redis' threads: allocated minus deallocated; every thread must
 * have both counters and the process the Debian layout. */
static int64_t redis_heap(const struct ctp_snap *snap, size_t *threads)
{
	const struct ctp_snap_table *tt =
		ctp_snap_table(snap, CTP_SCOPE_THREAD);
	long pr = proc_row(snap, redis_pid);
	int64_t sum = 0;

	assert_true(pr >= 0);
	struct ctp_value lay = e2e_value(snap, "jemalloc.layout", (size_t)pr);
	assert_int_equal(lay.type, CTP_TYPE_STRING);
	assert_true(e2e_bytes_eq(lay.str, "5.3.0-x86_64"));
	*threads = 0;
	for (size_t r = 0; r < tt->rows; r++) {
		if (tt->tgid[r] != (uint64_t)redis_pid)
			continue;
		uint64_t a = e2e_u64(snap, "jemalloc.allocated_bytes", r);
		uint64_t d = e2e_u64(snap, "jemalloc.deallocated_bytes", r);
		sum += (int64_t)(a - d);
		(*threads)++;
	}
	return sum;
}

/*
 * Debian's redis-server on Debian's libjemalloc.so.2, which has no DWARF:
 * the growth of the heap its threads' counters show, over 1,000 SETs of
 * 100 KiB, is within 5 % of redis' own used_memory growth; every thread
 * has both counters; nothing is ptrace-stopped (strace).
 */
static void redis_live(void **state)
{
	char sets[PATH_MAX];
	struct ctp_snap *s1 = NULL, *s2 = NULL;
	size_t n1, n2;

	(void)state;
	if (system("redis-server --version >/dev/null 2>&1") != 0 ||
	    system("redis-cli --version >/dev/null 2>&1") != 0) {
		print_message("SKIP: redis-server and redis-cli are not "
			      "installed (tools/dev.sh setup installs "
			      "them)\n");
		skip();
	}
	if (system("strace -V >/dev/null 2>&1") != 0) {
		print_message("SKIP: no strace\n");
		skip();
	}
	redis_start();
	assert_int_equal(E2E_PATHF(sets, "%s/sets.resp", tmp), 0);
	write_sets(sets, 1000, 100 * 1024);
	assert_int_equal(traced_capture("redis1", NULL, &s1), 0);
	uint64_t u1 = used_memory();
	{
		const char *argv[] = {"redis-cli", "-p", redis_port, "--pipe",
				      NULL};
		assert_int_equal(tool(argv, sets, NULL), 0);
	}
	assert_int_equal(traced_capture("redis2", NULL, &s2), 0);
	uint64_t u2 = used_memory();
	int64_t h1 = redis_heap(s1, &n1), h2 = redis_heap(s2, &n2);
	redis_stop();
	int64_t grew = h2 - h1, want = (int64_t)(u2 - u1);
	print_message("[ INFO     ] redis: %zu threads; heap by its threads' "
		      "counters grew %lld, used_memory grew %lld\n",
		      n2, (long long)grew, (long long)want);
	assert_true(n1 >= 1 && n2 >= 1);
	assert_true(want > 100 * 1024 * 1000);
	assert_true(llabs(grew - want) * 20 <= want);
	assert_true(summary(s2, "offsets_table") >= 1);
	ctp_snap_free(s1);
	ctp_snap_free(s2);
}

/* method: ptrace stops threads to read them, and never with a table
 * layout: the Debian worker is tagged table-ptrace and nothing is seized. */
static void table_never_ptraced(void **state)
{
	struct reading r[REPORTERS];
	pid_t pid;

	(void)state;
	need(NEED_DEBIAN);
	struct ctp_snap *snap = capture_reporter("tptrace", JEP_WORKER_DEBIAN,
						 NULL, NULL, "ptrace", r, &pid);
	assert_true(summary(snap, "tag.table-ptrace") >= 1);
	assert_int_equal(summary(snap, "method_ptrace"), 0);
	long tr = thread_row(snap, r[0].tid);
	assert_true(tr >= 0);
	assert_int_equal(
		e2e_value(snap, "jemalloc.allocated_bytes", (size_t)tr).type,
		CTP_VALUE_ABSENT);
	ctp_snap_free(snap);
}

/*
 * Learn a layout from the -g build, strip a copy of that library of
 * everything (as a distribution ships it), and read a worker running on
 * the copy through the learned line: its threads' own readings.
 */
static void learned_layout(void **state)
{
	struct reading r[REPORTERS];
	char file[PATH_MAX], dir[PATH_MAX], copy[PATH_MAX];
	char *data;
	size_t len;
	pid_t pid;

	(void)state;
	need(NEED_DEBUG_BUILD);
	assert_int_equal(E2E_PATHF(file, "%s/learned.txt", tmp), 0);
	learn("learned-test", JEP_DEBUG_LIB, file);
	assert_int_equal(E2E_PATHF(dir, "%s/stripped", tmp), 0);
	assert_int_equal(E2E_PATHF(copy, "%s/libjemalloc.so.2", dir), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(e2e_read_file(JEP_DEBUG_LIB, &data, &len), 0);
	assert_int_equal(e2e_write_file(copy, data, len), 0);
	free(data);
	{
		const char *argv[] = {"strip", "--strip-all", copy, NULL};
		assert_int_equal(tool(argv, NULL, NULL), 0);
	}
	struct ctp_snap *snap = capture_reporter("learned", JEP_WORKER_SHARED,
						 dir, file, NULL, r, &pid);
	check_layout(snap, pid, "learned-test");
	check_readings(snap, r, REPORTERS);
	ctp_snap_free(snap);
}

/* DWARF wins over a table entry for the same build, even a wrong one. */
static void dwarf_wins(void **state)
{
	struct reading r[REPORTERS];
	char learned[PATH_MAX], file[PATH_MAX];
	pid_t pid;

	(void)state;
	need(NEED_DEBUG_BUILD);
	assert_int_equal(E2E_PATHF(learned, "%s/right.txt", tmp), 0);
	assert_int_equal(E2E_PATHF(file, "%s/wrong.txt", tmp), 0);
	learn("right-test", JEP_DEBUG_LIB, learned);
	shifted_entry(learned, "right-test", "wrong-test", file);
	struct ctp_snap *snap = capture_reporter("dwarf", JEP_WORKER_SHARED,
						 NULL, file, NULL, r, &pid);
	check_layout(snap, pid, "dwarf");
	check_readings(snap, r, REPORTERS);
	assert_true(summary(snap, "offsets_dwarf") >= 1);
	ctp_snap_free(snap);
}

/* `args` with its stderr in *err (freed by the caller), at most 60 s:
 * its exit status. */
static int run_err(const char *const *args, const char *tag, char **err)
{
	char log[PATH_MAX];
	pid_t pid;

	assert_int_equal(E2E_PATHF(log, "%s/%s.log", tmp, tag), 0);
	assert_int_equal(e2e_spawn(args, NULL, log, &pid), 0);
	int rc = e2e_wait_bounded(pid, 60000, tag);
	assert_int_equal(e2e_read_file(log, err, NULL), 0);
	return rc;
}

/* The `layouts` option's files are the plugin's own check of the value
 * (issue 28 point 14): check-config exits 2 naming the config's position
 * and the layouts file's line and column, as init would fail; a FIFO
 * there is refused at once (it blocked the capture), by check-config and
 * by a capture, which fails the required plugin before init. */
static void layouts_checked(void **state)
{
	char cfg[PATH_MAX], bad[PATH_MAX], fifo[PATH_MAX], opts[PATH_MAX + 16],
		out[PATH_MAX], *err;
	static const char text[] = "# a layouts file\n"
				   "x y\n";

	(void)state;
	assert_int_equal(E2E_PATHF(cfg, "%s/layouts.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(bad, "%s/bad-line.txt", tmp), 0);
	assert_int_equal(E2E_PATHF(fifo, "%s/fifo.txt", tmp), 0);
	assert_int_equal(E2E_PATHF(out, "%s/layouts.ctprof", tmp), 0);
	assert_int_equal(e2e_write_file(bad, text, sizeof(text) - 1), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	const char *check[] = {"check-config", cfg, NULL};
	snprintf(opts, sizeof(opts), "layouts: \"%s\"", bad);
	write_config(cfg, opts);
	assert_int_equal(run_err(check, "check-bad", &err), 2);
	/* The value at line 6, column 24 ("    options: {layouts: "). */
	char want[4 * PATH_MAX];
	snprintf(want, sizeof(want),
		 "%s:6:24: plugin 'jemalloc-probe': option 'layouts': %s:2:4: "
		 "expected 9 words",
		 cfg, bad);
	if (!strstr(err, want))
		fail_msg("no '%s' in:\n%s", want, err);
	free(err);

	snprintf(opts, sizeof(opts), "layouts: \"%s\"", fifo);
	write_config(cfg, opts);
	assert_int_equal(run_err(check, "check-fifo", &err), 2);
	snprintf(want, sizeof(want),
		 "%s:6:24: plugin 'jemalloc-probe': option 'layouts': %s: not "
		 "a regular file",
		 cfg, fifo);
	if (!strstr(err, want))
		fail_msg("no '%s' in:\n%s", want, err);
	free(err);
	const char *cap[] = {"--config", cfg, "-o", out, NULL};
	assert_int_not_equal(run_err(cap, "capture-fifo", &err), 0);
	if (!strstr(err, "not a regular file"))
		fail_msg("no reason in:\n%s", err);
	free(err);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("jemalloc-e2e", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	redis_stop();
	e2e_rm_rf(tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debian_no_debuginfo),
		cmocka_unit_test(debuginfod_opt_in),
		cmocka_unit_test(debian_table),
		cmocka_unit_test(corrupt_layout),
		cmocka_unit_test(table_never_ptraced),
		cmocka_unit_test(learned_layout),
		cmocka_unit_test(dwarf_wins),
		cmocka_unit_test(redis_live),
		cmocka_unit_test(default_never_ptraces),
		cmocka_unit_test(layouts_checked),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
