// SPDX-License-Identifier: MIT
/*
 * ctprof-core with the appstats collector against real publishers:
 * appstats_worker (through include/ctprof/appstats.h) and appstats_raw
 * (the registry written by hand from docs/APPSTATS.md, then broken each
 * way). Per thread, the snapshot holds exactly what each thread published;
 * no thread is ever ptraced; a broken registry is tagged in
 * appstats.status and nothing of it is recorded. Then what one publisher
 * may cost the others (appstats_big): a name declared two ways, a process
 * declaring names without end, 16 MiB registries, the capture's budget.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

extern char **environ;

#define MIB	 (1024ull * 1024)
#define MAX_TIDS 16
#define WAIT_MS	 10000

static char tmp[PATH_MAX];

struct worker {
	pid_t pid;
	int out; /* its stdout */
	int n;
	int32_t tid[MAX_TIDS]; /* line "i tid": tid[i] */
	char last[128];	       /* the last line read */
	char name[16];	       /* "name NAME": its process name */
};

/* One line of the worker's stdout (without its newline) within the
 * deadline; false at its end or the deadline. */
static bool read_line(struct worker *w, char *buf, size_t len, int ms)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = {.fd = w->out, .events = POLLIN};
		char c;

		if (poll(&p, 1, ms) <= 0 || read(w->out, &c, 1) != 1)
			return false;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return true;
}

/* The worker running, if any: a failed check leaves its test at once, and
 * the next start (or the teardown) stops what it left. */
static pid_t running = -1;

static void stop_running(void)
{
	if (running > 0) {
		kill(running, SIGKILL);
		waitpid(running, NULL, 0);
	}
	running = -1;
}

/* Start argv and read the worker's "i tid" lines up to "ready". */
static void launch(struct worker *w, const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	int p[2];

	memset(w, 0, sizeof(*w));
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	assert_int_equal(posix_spawnp(&w->pid, argv[0], &fa, NULL,
				      (char *const *)argv, environ),
			 0);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	w->out = p[0];
	for (;;) {
		int i, tid;

		if (!read_line(w, w->last, sizeof(w->last), WAIT_MS))
			fail_msg("%s: no \"ready\"", argv[0]);
		if (!strcmp(w->last, "ready"))
			return;
		if (!strncmp(w->last, "name ", 5)) {
			snprintf(w->name, sizeof(w->name), "%s", w->last + 5);
			continue;
		}
		if (sscanf(w->last, "%d %d", &i, &tid) == 2 && i >= 0 &&
		    i < MAX_TIDS) {
			w->tid[i] = tid;
			if (i + 1 > w->n)
				w->n = i + 1;
		}
	}
}

/* Start argv (a worker, or a command running one), the one running. */
static void spawn_worker(struct worker *w, const char *const *argv)
{
	stop_running();
	launch(w, argv);
	running = w->pid;
}

/* Workers running beside each other (the budget tests), stopped together
 * (by the test, or by the teardown when a check left it early). */
#define CROWD 24
static struct worker crowd[CROWD];
static int n_crowd;

/* `path mode [arg]` beside the others. */
static struct worker *join_arg(const char *path, const char *mode,
			       const char *arg)
{
	const char *argv[] = {path, mode, arg, NULL};
	struct worker *w = &crowd[n_crowd];

	assert_true(n_crowd < CROWD);
	launch(w, argv);
	n_crowd++;
	return w;
}

static struct worker *join(const char *path, const char *mode)
{
	return join_arg(path, mode, NULL);
}

static void stop_crowd(void)
{
	for (int i = 0; i < n_crowd; i++) {
		kill(crowd[i].pid, SIGKILL);
		waitpid(crowd[i].pid, NULL, 0);
		close(crowd[i].out);
	}
	n_crowd = 0;
}

/* Start `path mode` and read its lines up to "ready". */
static void start(struct worker *w, const char *path, const char *mode)
{
	const char *argv[] = {path, mode, NULL};

	spawn_worker(w, argv);
}

static void stop(struct worker *w)
{
	stop_running();
	close(w->out);
}

/* appstats alone (with procfs-stat for the rows' names), required, with
 * `opts` its options (YAML flow pairs, or ""); with `split`, 2 workers
 * walking a process's threads in chunks of 2. */
static void config_opts(char *cfg, size_t len, const char *tag, bool split,
			const char *opts)
{
	char text[1024];
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\"]\nworkers: %s\nplugins:\n"
			 "  procfs-stat: {required: true}\n"
			 "  appstats: {required: true, options: {%s}}\n",
			 CTP_TEST_PLUGIN_DIR,
			 split ? "2\nsplit_threads: 2" : "1", opts);

	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_true(e2e_pathf(cfg, len, "%s/%s.yaml", tmp, tag) >= 0);
	assert_int_equal(e2e_write_file(cfg, text, (size_t)n), 0);
}

static void config_split(char *cfg, size_t len, const char *tag, bool split)
{
	config_opts(cfg, len, tag, split, "");
}

static void config(char *cfg, size_t len, const char *tag)
{
	config_split(cfg, len, tag, false);
}

static struct ctp_snap *capture(const char *tag)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];

	config(cfg, sizeof(cfg), tag);
	assert_true(E2E_PATHF(out, "%s/%s.ctprof", tmp, tag) >= 0);
	assert_true(E2E_PATHF(log, "%s/%s.log", tmp, tag) >= 0);
	return e2e_capture(cfg, out, log);
}

static uint64_t summary(const struct ctp_snap *s, const char *name)
{
	return e2e_summary(s, "appstats", name);
}

/* The thread's value of app.<name>: true with *v, false when absent. */
static bool app_value(const struct ctp_snap *s, const char *name, long tid,
		      uint64_t *v)
{
	char full[64];
	const struct ctp_snap_field *f;
	long row = e2e_row(s, CTP_SCOPE_THREAD, tid);
	struct ctp_value x;

	snprintf(full, sizeof(full), "app.%s", name);
	f = ctp_snap_field_find(s, full);
	if (row < 0 || !f)
		return false;
	x = ctp_snap_get(s, f, (size_t)row);
	if (x.type == CTP_VALUE_ABSENT)
		return false;
	assert_int_equal(x.type, CTP_TYPE_U64);
	*v = x.u64;
	return true;
}

static uint64_t app_u64(const struct ctp_snap *s, const char *name, long tid)
{
	uint64_t v = 0;

	if (!app_value(s, name, tid, &v))
		fail_msg("tid %ld: no app.%s", tid, name);
	return v;
}

/* No thread of process pid has any app.* value. */
static void nothing_recorded(const struct ctp_snap *s, pid_t pid)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_field *f = ctp_snap_fields(s);

	for (size_t i = 0; i < ctp_snap_n_fields(s); i++) {
		if (strncmp(f[i].name, "app.", 4))
			continue;
		for (size_t r = 0; r < t->rows; r++)
			if (t->tgid[r] == (uint64_t)pid &&
			    ctp_snap_get(s, &f[i], r).type != CTP_VALUE_ABSENT)
				fail_msg("tid %llu has %s",
					 (unsigned long long)t->tid[r],
					 f[i].name);
	}
}

static void status_is(const struct ctp_snap *s, pid_t pid, const char *want)
{
	long row = e2e_row(s, CTP_SCOPE_PROCESS, pid);

	assert_true(row >= 0);
	e2e_assert_str(s, "appstats.status", (size_t)row, want);
}

/* The number in column `col` of the CSV row whose first cell is `key`
 * (fails the test without one). */
static long long csv_cell(const char *text, const char *key, const char *col)
{
	const char *row = NULL, *nl = strchr(text, '\n');
	size_t want = 0, i = 0, kl = strlen(key), cl = strlen(col);
	bool found = false;

	/* The header's column index. */
	for (const char *p = text; p && p < nl; i++) {
		const char *e = memchr(p, ',', (size_t)(nl - p));
		size_t len = (size_t)((e ? e : nl) - p);

		if (len == cl && !memcmp(p, col, cl)) {
			want = i;
			found = true;
			break;
		}
		p = e ? e + 1 : NULL;
	}
	if (!found)
		fail_msg("no column %s in:\n%s", col, text);
	for (const char *p = nl; p && *p; p = strchr(p + 1, '\n'))
		if (!strncmp(p + 1, key, kl) && p[1 + kl] == ',') {
			row = p + 1;
			break;
		}
	if (!row)
		fail_msg("no row %s in:\n%s", key, text);
	for (i = 0; i < want && row; i++) {
		row = strchr(row, ',');
		row = row ? row + 1 : NULL;
	}
	if (!row || *row < '0' || *row > '9')
		fail_msg("row %s: no number in column %s", key, col);
	return strtoll(row, NULL, 10);
}

static void need_strace(void)
{
	if (system("strace -V >/dev/null 2>&1") != 0) {
		print_message("SKIP: no strace\n");
		skip();
	}
}

/* The worker: 8 threads, thread i arena_bytes (i + 1) MiB and
 * requests 1,000 (i + 1); captured under strace: no ptrace request at
 * all; grouped by process name, each field by its own rule. */
static void eight_threads(void **state)
{
	struct ctp_snap *s = NULL;
	struct worker w;
	char cfg[PATH_MAX], csv[PATH_MAX], *text;
	int traced;

	(void)state;
	need_strace();
	start(&w, APS_WORKER, "eight");
	assert_int_equal(w.n, 8);
	config(cfg, sizeof(cfg), "eight");
	traced = e2e_traced_capture(cfg, tmp, "eight", "ptrace(", &s);
	stop(&w);
	assert_int_equal(traced, 0);
	status_is(s, w.pid, "ok");
	for (int i = 0; i < 8; i++) {
		assert_int_equal(app_u64(s, "arena_bytes", w.tid[i]),
				 (uint64_t)(i + 1) * MIB);
		assert_int_equal(app_u64(s, "requests", w.tid[i]),
				 1000ull * (uint64_t)(i + 1));
	}
	/* The main thread published nothing. */
	uint64_t v;
	assert_false(app_value(s, "requests", w.pid, &v));
	/* (another publisher on the host may add to these) */
	assert_true(summary(s, "publishers") >= 1);
	assert_true(summary(s, "threads_ok") >= 8);
	ctp_snap_free(s);

	/* show --group-by pcomm: requests summed (36,000), arena_bytes by
	 * its rule, max (8 MiB). */
	char snap[PATH_MAX];
	assert_true(E2E_PATHF(snap, "%s/eight.ctprof", tmp) >= 0);
	assert_true(E2E_PATHF(csv, "%s/eight.csv", tmp) >= 0);
	const char *args[] = {"show",	  snap,	      "--group-by",
			      "pcomm",	  "--fields", "app.*",
			      "--format", "csv",      NULL};
	assert_int_equal(e2e_run(args, csv, NULL), 0);
	assert_int_equal(e2e_read_file(csv, &text, NULL), 0);
	assert_int_equal(csv_cell(text, w.name, "app.requests"), 36000);
	assert_int_equal(csv_cell(text, w.name, "app.arena_bytes"), 8 * MIB);
	free(text);
}

/* Start `unshare --pid --fork --kill-child [--mount-proc] WORKER mode`:
 * the worker as pid 1 of a pid namespace (with its own /proc when
 * own_proc), its lines read up to "ready" (its tids are the namespace's).
 * *inner: the worker's host pid, to enter the namespace by. Returns false when
 * namespaces are not available here. */
static bool start_alone(struct worker *w, const char *mode, bool own_proc,
			pid_t *inner)
{
	/* --kill-child: the worker (its namespace's init, which ignores
	 * signals it has no handler for) dies with unshare, also when a
	 * failed check leaves a test early. */
	const char *argv[] = {"unshare",
			      "--pid",
			      "--fork",
			      "--kill-child",
			      own_proc ? "--mount-proc" : APS_WORKER,
			      own_proc ? APS_WORKER : mode,
			      own_proc ? mode : NULL,
			      NULL};
	char path[64], *text;

	if (geteuid() != 0 ||
	    system(own_proc ? "unshare --pid --fork --kill-child "
			      "--mount-proc true 2>/dev/null"
			    : "unshare --pid --fork --kill-child true "
			      "2>/dev/null"))
		return false;
	spawn_worker(w, argv);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)w->pid,
		 (int)w->pid);
	assert_int_equal(e2e_read_file(path, &text, NULL), 0);
	*inner = (pid_t)atol(text);
	free(text);
	assert_true(*inner > 0);
	return true;
}

/* Capture with cfg inside the pid and mount namespaces of `inner`. */
static struct ctp_snap *capture_in(pid_t inner, const char *cfg,
				   const char *out, const char *log)
{
	char target[16], err[512];
	snprintf(target, sizeof(target), "%d", (int)inner);
	const char *argv[] = {
		"nsenter",	 "--target", target, "--pid", "--mount", "--",
		CTP_TEST_BINARY, "--config", cfg,    "-o",    out,	 NULL};
	posix_spawn_file_actions_t fa;
	struct ctp_snap *s = NULL;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawnp(&pid, "nsenter", &fa, NULL,
				      (char *const *)argv, environ),
			 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(e2e_wait(pid, &st), 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		e2e_show_file("capture stderr", log);
		fail_msg("the capture in the namespace failed");
	}
	if (ctp_snap_open(out, 1ull << 31, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return s;
}

/* The eight publishers walked by 2 workers in chunks of 2 threads: the
 * threads another worker walks find the values the process callback read
 * (the per-capture store of split processes). Which worker takes a chunk
 * is not fixed, and on a busy host both may be busy with other processes,
 * or the second not scheduled, until the owner has walked every chunk
 * itself. So the capture runs in the worker's own pid namespace, where it
 * is the only process to walk (with the capture's own), the publishers
 * are its last 8 threads after 300 that publish nothing (150 chunks for
 * the other worker to join in), and captures repeat (at most 20) until
 * one served a thread from the store; every capture's values must be
 * right. */
static void eight_threads_split(void **state)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	uint64_t shared = 0;
	struct worker w;
	pid_t inner = 0;

	(void)state;
	if (!start_alone(&w, "wide", true, &inner)) {
		print_message("SKIP: no pid namespaces here (unshare --pid "
			      "needs root)\n");
		skip();
	}
	config_split(cfg, sizeof(cfg), "split", true);
	assert_true(E2E_PATHF(out, "%s/split.ctprof", tmp) >= 0);
	assert_true(E2E_PATHF(log, "%s/split.log", tmp) >= 0);
	int c = 0;
	for (; c < 20 && !shared; c++) {
		struct ctp_snap *s = capture_in(inner, cfg, out, log);

		status_is(s, 1, "ok"); /* the worker, pid 1 in there */
		for (int i = 0; i < 8; i++)
			assert_int_equal(app_u64(s, "requests", w.tid[i]),
					 1000ull * (uint64_t)(i + 1));
		shared = summary(s, "threads_from_other_workers");
		ctp_snap_free(s);
	}
	stop(&w);
	print_message("[ INFO     ] %d capture(s), %" PRIu64
		      " threads from the other worker\n",
		      c, shared);
	assert_true(shared > 0);
}

/* The tid of `pid`'s thread whose tid in its own pid namespace is ns (the
 * last number of its NSpid line), or 0. */
/* appstats beside jemalloc-probe (and procfs-stat for names), workers 1. */
static void config_both(char *cfg, size_t len, const char *tag)
{
	char text[1024];
	int n = snprintf(text, sizeof(text),
			 "plugin_dirs: [\"%s\"]\nworkers: 1\nplugins:\n"
			 "  procfs-stat: {required: true}\n"
			 "  appstats: {required: true}\n"
			 "  jemalloc-probe: {required: true}\n",
			 CTP_TEST_PLUGIN_DIR);

	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_true(e2e_pathf(cfg, len, "%s/%s.yaml", tmp, tag) >= 0);
	assert_int_equal(e2e_write_file(cfg, text, (size_t)n), 0);
}

/* The eight workers' values are in s. */
static void eight_values(const struct ctp_snap *s, const struct worker *w)
{
	status_is(s, w->pid, "ok");
	for (int i = 0; i < 8; i++)
		assert_int_equal(app_u64(s, "arena_bytes", w->tid[i]),
				 (uint64_t)(i + 1) * MIB);
}

#define MAX_PIDS 8192

/* Both plugins read every process's maps, from one read of the core
 * (procelf.h): under strace -y, no process's maps is opened twice in a
 * capture, the publisher's once, and appstats still reads it. */
static void maps_read_once(void **state)
{
	static long pid[MAX_PIDS];
	static int opens[MAX_PIDS];
	struct ctp_snap *s = NULL;
	struct worker w;
	char cfg[PATH_MAX], *trace;
	size_t n = 0, total = 0;

	(void)state;
	need_strace();
	start(&w, APS_WORKER, "eight");
	config_both(cfg, sizeof(cfg), "maps_once");
	assert_int_equal(e2e_strace_capture_fds(cfg, tmp, "maps_once",
						"openat,newfstatat", &s,
						&trace),
			 0);
	stop(&w);
	eight_values(s, &w);
	ctp_snap_free(s);
	/* openat(5</proc/42>, "maps", ...) */
	for (const char *q = trace; (q = strstr(q, "</proc/")); q++) {
		char *end;
		long p = strtol(q + 7, &end, 10);
		size_t i;

		if (end == q + 7 || strncmp(end, ">, \"maps\", ", 10))
			continue;
		for (i = 0; i < n && pid[i] != p; i++)
			;
		if (i == n) {
			assert_true(n < MAX_PIDS);
			pid[n] = p;
			opens[n++] = 0;
		}
		opens[i]++;
		total++;
	}
	/* newfstatat(5</proc/42>, "exe", ...): the executable's identity
	 * once per plugin after the maps (not before them as well). */
	size_t exe_worker = 0;
	char key[64];
	snprintf(key, sizeof(key), "</proc/%ld>, \"exe\"", (long)w.pid);
	for (const char *q = trace; (q = strstr(q, key)); q++)
		exe_worker++;
	free(trace);
	print_message("[ INFO     ] maps opened %zu times for %zu processes; "
		      "the worker's exe looked up %zu times\n",
		      total, n, exe_worker);
	assert_in_range(exe_worker, 1, 2);
	bool seen = false;
	for (size_t i = 0; i < n; i++) {
		if (opens[i] > 1)
			fail_msg("pid %ld: maps opened %d times", pid[i],
				 opens[i]);
		seen |= pid[i] == w.pid;
	}
	assert_true(seen);
}

/* A copy of the worker at a path of `plen` bytes (directories of 250
 * bytes under tmp) into *out. */
static void long_path_copy(char *out, size_t plen)
{
	char *bin;
	size_t len, at;

	assert_true(plen < PATH_MAX);
	at = (size_t)snprintf(out, PATH_MAX, "%s", tmp);
	while (plen - at > 1 + 255) {
		out[at++] = '/';
		memset(out + at, 'd', 250);
		at += 250;
		out[at] = '\0';
		assert_true(mkdir(out, 0755) == 0 || errno == EEXIST);
	}
	out[at++] = '/';
	memset(out + at, 'w', plen - at);
	out[plen] = '\0';
	assert_int_equal(e2e_read_file(APS_WORKER, &bin, &len), 0);
	assert_int_equal(e2e_write_file(out, bin, len), 0);
	free(bin);
	assert_int_equal(chmod(out, 0755), 0);
}

/* The core's read of maps is whole when its first read is short: the
 * worker's first mapping is a page at 0x10000 (a line of some 40 bytes),
 * its executable's next, at a path that makes that line longer than the
 * rest of the kernel's page, so the first read returns the first line
 * alone. appstats finds the registry in the executable all the same. */
static void maps_short_first_read(void **state)
{
	char path[PATH_MAX];
	struct ctp_snap *s;
	struct worker w;

	(void)state;
	long_path_copy(path, 4030);
	setenv("APS_LOW_PAGE", "1", 1);
	start(&w, path, "eight");
	unsetenv("APS_LOW_PAGE");
	s = capture("short_first");
	stop(&w);
	eight_values(s, &w);
	ctp_snap_free(s);
}

static long host_tid_of(pid_t pid, long ns)
{
	char dir[64], path[PATH_MAX], *text;
	struct dirent *de;
	long found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	while (d && !found && (de = readdir(d))) {
		const char *p;
		long last = -1;

		if (de->d_name[0] == '.' ||
		    E2E_PATHF(path, "%s/%s/status", dir, de->d_name) < 0 ||
		    e2e_read_file(path, &text, NULL) < 0)
			continue;
		p = strstr(text, "\nNSpid:");
		for (p = p ? p + 7 : NULL; p && *p && *p != '\n'; p++)
			if (*p >= '0' && *p <= '9')
				last = strtol(p, (char **)&p, 10), p--;
		if (last == ns)
			found = atol(de->d_name);
		free(text);
	}
	if (d)
		closedir(d);
	return found;
}

/* The 8-thread worker in a pid namespace of its own (unshare --pid): its
 * slots hold tids of that namespace, which the reader maps through each
 * thread's NSpid line; thread i's values land on its host tid. */
static void pid_namespace(void **state)
{
	struct ctp_snap *s;
	struct worker w;
	pid_t child = 0;

	(void)state;
	if (!start_alone(&w, "eight", false, &child)) {
		print_message("SKIP: no pid namespaces here (unshare --pid "
			      "needs root)\n");
		skip();
	}
	s = capture("pidns");
	for (int i = 0; i < 8; i++) {
		long host = host_tid_of(child, w.tid[i]);

		assert_true(host > 0 && host != w.tid[i]);
		assert_int_equal(app_u64(s, "arena_bytes", host),
				 (uint64_t)(i + 1) * MIB);
	}
	status_is(s, child, "ok");
	ctp_snap_free(s);
	kill(child, SIGKILL);
	stop(&w);
}

/* Threads born and exiting while they publish (more threads than slots):
 * every value read sits on the thread that published it, slots are
 * reused (nothing dropped), and each capture completes. */
static void churn(void **state)
{
	struct worker w;
	uint64_t matched = 0;
	long made = -1;
	unsigned long long dropped = ~0ull;

	(void)state;
	start(&w, APS_WORKER, "churn");
	assert_int_equal(w.n, 4);
	for (int c = 0; c < 5; c++) {
		char tag[16];
		struct ctp_snap *s;
		const struct ctp_snap_table *t;

		snprintf(tag, sizeof(tag), "churn%d", c);
		s = capture(tag);
		status_is(s, w.pid, "ok");
		t = ctp_snap_table(s, CTP_SCOPE_THREAD);
		for (size_t r = 0; r < t->rows; r++) {
			uint64_t v;

			if (t->tgid[r] != (uint64_t)w.pid ||
			    !app_value(s, "self_tid", (long)t->tid[r], &v))
				continue;
			/* 0: claimed, its first set not made yet */
			if (v && v != t->tid[r])
				fail_msg("tid %llu shows self_tid %llu",
					 (unsigned long long)t->tid[r],
					 (unsigned long long)v);
			matched += v == t->tid[r];
		}
		/* The steady threads, in every capture. */
		for (int i = 0; i < w.n; i++)
			assert_int_equal(app_u64(s, "self_tid", w.tid[i]),
					 (uint64_t)w.tid[i]);
		ctp_snap_free(s);
		usleep(100 * 1000);
	}
	kill(w.pid, SIGTERM);
	while (read_line(&w, w.last, sizeof(w.last), WAIT_MS))
		if (sscanf(w.last, "threads %ld dropped %llu", &made,
			   &dropped) == 2)
			break;
	stop(&w);
	print_message("[ INFO     ] %llu values on their own threads; "
		      "%ld threads published, %llu updates dropped\n",
		      (unsigned long long)matched, made, dropped);
	assert_true(made > 1024);     /* more threads than slots ... */
	assert_int_equal(dropped, 0); /* ... and none went without */
}

/* The header included, nothing declared: the symbol is there, the magic
 * is not; routine, nothing recorded. */
static void unset(void **state)
{
	struct worker w;
	struct ctp_snap *s;

	(void)state;
	start(&w, APS_WORKER, "unset");
	s = capture("unset");
	stop(&w);
	status_is(s, w.pid, "unset");
	nothing_recorded(s, w.pid);
	assert_true(summary(s, "tag.unset") >= 1);
	ctp_snap_free(s);
}

/* A registry written from APPSTATS.md alone, without the header: read as
 * the header's. Thread i: hits 100 (i + 1), depth i. */
static void raw_ok(void **state)
{
	struct worker w;
	struct ctp_snap *s;

	(void)state;
	start(&w, APS_RAW, "ok");
	assert_int_equal(w.n, 3);
	s = capture("raw-ok");
	stop(&w);
	status_is(s, w.pid, "ok");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(app_u64(s, "hits", w.tid[i]),
				 100ull * (uint64_t)(i + 1));
		assert_int_equal(app_u64(s, "depth", w.tid[i]), (uint64_t)i);
	}
	ctp_snap_free(s);
}

/* Two shared objects include the header, the executable does not: the
 * registry in use is the first-loaded object's, mapped above the other's
 * (which stays zero); both objects' threads publish into it. */
static void two_objects(void **state)
{
	struct worker w;
	struct ctp_snap *s;

	(void)state;
	start(&w, APS_DSO, "");
	assert_int_equal(w.n, 3);
	s = capture("dso");
	stop(&w);
	status_is(s, w.pid, "ok");
	for (int i = 0; i < 3; i++)
		assert_int_equal(app_u64(s, "hits", w.tid[i]),
				 10ull * (uint64_t)(i + 1));
	ctp_snap_free(s);
}

/* Each broken registry: tagged, named in the hint, nothing recorded. */
static void raw_refused(void **state)
{
	static const struct {
		const char *mode, *tag;
	} cases[] = {
		{"bad-magic", "bad-magic"}, {"bad-version", "bad-version"},
		{"absurd", "bad-layout"},   {"outside", "bad-layout"},
		{"bad-field", "bad-field"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct worker w;
		struct ctp_snap *s;
		char counter[64], want[96];
		const struct ctp_snap_plugin *p;

		start(&w, APS_RAW, cases[i].mode);
		s = capture(cases[i].mode);
		stop(&w);
		status_is(s, w.pid, cases[i].tag);
		nothing_recorded(s, w.pid);
		snprintf(counter, sizeof(counter), "tag.%s", cases[i].tag);
		assert_true(summary(s, counter) >= 1);
		p = e2e_plugin(s, "appstats");
		snprintf(want, sizeof(want), "%s: appstats_raw (pid %d)",
			 cases[i].tag, (int)w.pid);
		if (!p->hint || !strstr(p->hint, want))
			fail_msg("%s: hint '%s', want '%s'", cases[i].mode,
				 p->hint ? p->hint : "", want);
		print_message("[ INFO     ] %s: %s\n", cases[i].mode, p->hint);
		ctp_snap_free(s);
	}
}

/* A slot of a tid that is not a thread of the process (pid 1): ignored
 * and counted; the process's own threads keep theirs. */
static void raw_foreign(void **state)
{
	struct worker w;
	struct ctp_snap *s;
	uint64_t v;

	(void)state;
	start(&w, APS_RAW, "foreign");
	s = capture("raw-foreign");
	stop(&w);
	status_is(s, w.pid, "ok");
	assert_true(summary(s, "slots_not_a_thread") >= 1);
	assert_false(app_value(s, "hits", 1, &v));
	for (int i = 0; i < 3; i++)
		assert_int_equal(app_u64(s, "hits", w.tid[i]),
				 100ull * (uint64_t)(i + 1));
	ctp_snap_free(s);
}

/* Two stable slots of one tid: neither can be trusted, both dropped. */
static void raw_dup(void **state)
{
	struct worker w;
	struct ctp_snap *s;
	uint64_t v;

	(void)state;
	start(&w, APS_RAW, "dup");
	s = capture("raw-dup");
	stop(&w);
	assert_true(summary(s, "slots_duplicate_tid") >= 2);
	assert_false(app_value(s, "hits", w.tid[0], &v));
	assert_int_equal(app_u64(s, "hits", w.tid[1]), 200);
	assert_int_equal(app_u64(s, "hits", w.tid[2]), 300);
	ctp_snap_free(s);
}

/* The header flipping and a slot changing hands without pause: a capture
 * that sees the header change refuses the registry ("changed", nothing
 * recorded); one that does not keeps only stable slots, each on its own
 * thread. Whether a capture sees the change is the machine's timing, so
 * 10 captures are checked each way and the count only reported
 * (test_appstats_parse checks the detection itself on fixed copies). */
static void raw_changing(void **state)
{
	struct worker w;
	int changed = 0, ok = 0;

	(void)state;
	start(&w, APS_RAW, "changing");
	for (int c = 0; c < 10; c++) {
		char tag[32];
		struct ctp_snap *s;
		long row;
		struct ctp_value st;

		snprintf(tag, sizeof(tag), "raw-changing%d", c);
		s = capture(tag);
		row = e2e_row(s, CTP_SCOPE_PROCESS, w.pid);
		assert_true(row >= 0);
		st = e2e_value(s, "appstats.status", (size_t)row);
		assert_int_equal(st.type, CTP_TYPE_STRING);
		if (e2e_bytes_eq(st.str, "changed")) {
			changed++;
			nothing_recorded(s, w.pid);
		} else {
			assert_true(e2e_bytes_eq(st.str, "ok"));
			ok++;
			for (int i = 0; i < 3; i++)
				assert_int_equal(app_u64(s, "hits", w.tid[i]),
						 100ull * (uint64_t)(i + 1));
		}
		ctp_snap_free(s);
	}
	stop(&w);
	print_message("[ INFO     ] changed %d, ok %d\n", changed, ok);
}

/* ---- What one publisher may cost the others ----------------------------- */

/* The snapshots of a recording: the last one, and how many. */
struct last_snap {
	char path[PATH_MAX];
	int n;
};

static void note_snap(const struct ctp_snap *s, const char *path, void *arg)
{
	struct last_snap *l = arg;

	(void)s;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->n++;
}

/* Wait (at most 60 s) until dir holds `n` snapshots. */
static void wait_files(const char *dir, size_t n)
{
	uint64_t t0 = e2e_now_ms();

	while (e2e_files(dir) < n) {
		if (e2e_now_ms() - t0 > 60000)
			fail_msg("%s: fewer than %zu snapshots after 60 s", dir,
				 n);
		usleep(20 * 1000);
	}
}

/* The recording running, if any (stopped by the teardown when a check
 * left its test early). */
static pid_t recording = -1;

/* A recording with cfg into dir, every 100 ms, as long as it takes. */
static pid_t record_start(const char *cfg, const char *dir, const char *log)
{
	const char *args[] = {"record", "--config", cfg,  "-o",	  dir,
			      "-i",	"100ms",    "-n", "1000", NULL};

	assert_int_equal(e2e_spawn(args, NULL, log, &recording), 0);
	return recording;
}

/* Stop the recording: its exit code, 130 when SIGTERM ended it in good
 * order. */
static int record_end(pid_t pid)
{
	int rc;

	kill(pid, SIGTERM);
	rc = e2e_wait_bounded(pid, 60000, "record");
	recording = -1;
	return rc;
}

/* End the recording (the capture in progress is discarded); the newest
 * snapshot, opened. */
static struct ctp_snap *record_stop(pid_t pid, const char *dir)
{
	struct last_snap l = {.n = 0};
	char err[256];
	struct ctp_snap *s = NULL;

	assert_int_equal(record_end(pid), 130);
	if (e2e_each_snapshot(dir, note_snap, &l, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_true(l.n > 0);
	if (ctp_snap_open(l.path, 1ull << 31, &s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return s;
}

static void hint_has(const struct ctp_snap *s, const char *want)
{
	const struct ctp_snap_plugin *p = e2e_plugin(s, "appstats");

	if (!p->hint || !strstr(p->hint, want))
		fail_msg("hint '%s', want '%s'", p->hint ? p->hint : "", want);
}

/*
 * The squatter: appstats_worker declares app.requests_<pid> as
 * count/counter/sum, appstats_raw "squat" as bytes/gauge/max. A recording
 * sees one of them first, alone, then both: the name stays the first's
 * (the run's first declaration owns it), the other's requests is left out
 * for that process alone (its other field read), it is tagged conflict
 * and named in the hint with both descriptions.
 */
static void squat_order(bool squatter_first)
{
	char cfg[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], want[320], req[32];
	struct worker *legit, *squat;
	struct ctp_snap *s;
	pid_t rec;
	size_t n;

	/* requests_<our pid>: another run of these tests beside this one
	 * (a host runs several suites) is another owner of "requests". */
	snprintf(req, sizeof(req), "requests_%d", (int)getpid());
	config(cfg, sizeof(cfg), squatter_first ? "squat1" : "squat2");
	assert_true(E2E_PATHF(dir, "%s/squat%d", tmp, squatter_first) >= 0);
	assert_true(E2E_PATHF(log, "%s/squat%d.log", tmp, squatter_first) >= 0);
	if (squatter_first)
		squat = join_arg(APS_RAW, "squat", req);
	else
		legit = join_arg(APS_WORKER, "eight", req);
	rec = record_start(cfg, dir, log);
	wait_files(dir, 1);
	if (squatter_first)
		legit = join_arg(APS_WORKER, "eight", req);
	else
		squat = join_arg(APS_RAW, "squat", req);
	/* Two captures that saw both. */
	n = e2e_files(dir);
	wait_files(dir, n + 2);
	s = record_stop(rec, dir);
	/* Each one's other field, and its status. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(app_u64(s, "hits", squat->tid[i]),
				 100ull * (uint64_t)(i + 1));
	for (int i = 0; i < 8; i++)
		assert_int_equal(app_u64(s, "arena_bytes", legit->tid[i]),
				 (uint64_t)(i + 1) * MIB);
	status_is(s, squatter_first ? legit->pid : squat->pid, "conflict");
	status_is(s, squatter_first ? squat->pid : legit->pid, "ok");
	assert_true(summary(s, "tag.conflict") >= 1);
	if (squatter_first) {
		/* The squatter owns the name: its values, and none of the
		 * legitimate process's. */
		uint64_t v;
		for (int i = 0; i < 3; i++)
			assert_int_equal(app_u64(s, req, squat->tid[i]),
					 (uint64_t)i);
		for (int i = 0; i < 8; i++)
			assert_false(app_value(s, req, legit->tid[i], &v));
		snprintf(want, sizeof(want),
			 "conflict: %s (pid %d): declares app.%s as "
			 "count/counter/sum; app.%s is bytes/gauge/max "
			 "(pid %d, appstats_raw)",
			 legit->name, (int)legit->pid, req, req,
			 (int)squat->pid);
	} else {
		/* The legitimate counter keeps being read. */
		uint64_t v;
		for (int i = 0; i < 8; i++)
			assert_int_equal(app_u64(s, req, legit->tid[i]),
					 1000ull * (uint64_t)(i + 1));
		for (int i = 0; i < 3; i++)
			assert_false(app_value(s, req, squat->tid[i], &v));
		snprintf(want, sizeof(want),
			 "conflict: appstats_raw (pid %d): declares app.%s as "
			 "bytes/gauge/max; app.%s is count/counter/sum (pid "
			 "%d, %s)",
			 (int)squat->pid, req, req, (int)legit->pid,
			 legit->name);
	}
	hint_has(s, want);
	print_message("[ INFO     ] %s\n", e2e_plugin(s, "appstats")->hint);
	ctp_snap_free(s);
	stop_crowd();
}

static void squatter_second(void **state)
{
	(void)state;
	squat_order(false);
}

static void squatter_first(void **state)
{
	(void)state;
	squat_order(true);
}

/* How many app.* fields named with prefix the snapshot has. */
static size_t app_fields(const struct ctp_snap *s, const char *prefix)
{
	const struct ctp_snap_field *f = ctp_snap_fields(s);
	size_t n = 0, pl = strlen(prefix);

	for (size_t i = 0; i < ctp_snap_n_fields(s); i++)
		n += !strncmp(f[i].name, prefix, pl);
	return n;
}

static void sum_max_names(const struct ctp_snap *s, const char *path, void *arg)
{
	(void)path;
	*(uint64_t *)arg += summary(s, "tag.max-names");
}

/* A process declaring 256 new names every 20 ms (thousands in a
 * recording) owns at most max_names (64) of the run's 1,024: a process
 * started after it has filled the table on the old code still gets its
 * fields. */
static void names_hog(void **state)
{
	char cfg[PATH_MAX], dir[PATH_MAX], log[PATH_MAX];
	struct worker *hog, *late;
	struct ctp_snap *s;
	pid_t rec;
	size_t n;

	(void)state;
	config(cfg, sizeof(cfg), "names");
	assert_true(E2E_PATHF(dir, "%s/names", tmp) >= 0);
	assert_true(E2E_PATHF(log, "%s/names.log", tmp) >= 0);
	hog = join(APS_BIG, "names");
	rec = record_start(cfg, dir, log);
	/* 6 captures: 6 sets of 256 names, more than 1,024. */
	wait_files(dir, 6);
	late = join(APS_RAW, "ok");
	n = e2e_files(dir);
	wait_files(dir, n + 2);
	s = record_stop(rec, dir);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(app_u64(s, "hits", late->tid[i]),
				 100ull * (uint64_t)(i + 1));
		assert_int_equal(app_u64(s, "depth", late->tid[i]),
				 (uint64_t)i);
	}
	status_is(s, late->pid, "ok");
	/* Tagged in the captures that read it whole (one racing a renaming
	 * may see it changed, or with nothing declared). */
	uint64_t tagged = 0;
	char err[256];
	assert_true(e2e_each_snapshot(dir, sum_max_names, &tagged, err,
				      sizeof(err)) > 0);
	print_message("[ INFO     ] %zu app.g* fields; tag.max-names %" PRIu64
		      " in the recording\n",
		      app_fields(s, "app.g"), tagged);
	assert_true(app_fields(s, "app.g") <= 64);
	assert_true(tagged >= 1);
	(void)hog;
	ctp_snap_free(s);
	stop_crowd();
}

/* A 16 MiB registry under the default max_registry_bytes (1 MiB): not
 * read (its header only), tagged too-large and named in the hint. */
static void registry_too_large(void **state)
{
	struct ctp_snap *s;
	struct worker *big;
	char want[160];

	(void)state;
	big = join(APS_BIG, "big");
	s = capture("too-large");
	status_is(s, big->pid, "too-large");
	nothing_recorded(s, big->pid);
	assert_true(summary(s, "tag.too-large") >= 1);
	snprintf(want, sizeof(want),
		 "too-large: appstats_big (pid %d): 16777216 bytes, "
		 "max_registry_bytes 1048576",
		 (int)big->pid);
	hint_has(s, want);
	ctp_snap_free(s);
	stop_crowd();
}

/* Our big processes' statuses in s: how many read (big_hits 7 on the
 * main thread) and how many left out for the budget (nothing recorded).
 * Every one is one or the other. */
static void count_big(const struct ctp_snap *s, int n, int *ok, int *budget)
{
	*ok = *budget = 0;
	for (int i = 0; i < n; i++) {
		long row = e2e_row(s, CTP_SCOPE_PROCESS, crowd[i].pid);
		struct ctp_value st;

		assert_true(row >= 0);
		st = e2e_value(s, "appstats.status", (size_t)row);
		assert_int_equal(st.type, CTP_TYPE_STRING);
		if (e2e_bytes_eq(st.str, "ok")) {
			assert_int_equal(app_u64(s, "big_hits", crowd[i].pid),
					 7);
			++*ok;
		} else if (e2e_bytes_eq(st.str, "time-budget")) {
			nothing_recorded(s, crowd[i].pid);
			++*budget;
		} else {
			fail_msg("pid %d: appstats.status %.*s",
				 (int)crowd[i].pid, (int)st.str.len,
				 (const char *)st.str.ptr);
		}
	}
}

/* The 20 processes with 16 MiB registries, allowed by
 * max_registry_bytes, against a 1 ms budget: a read of one (48 MiB
 * copied) spends it, and the others are left out, tagged time-budget,
 * counted and named in the hint. The capture's time is printed, not
 * checked. */
static void twenty_big(void **state)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	struct ctp_snap *s;
	int ok, budget;
	uint64_t t0;

	(void)state;
	for (int i = 0; i < 20; i++)
		join(APS_BIG, "big");
	config_opts(cfg, sizeof(cfg), "twenty", false,
		    "max_registry_bytes: 16777216, time_budget_ms: 1");
	assert_true(E2E_PATHF(out, "%s/twenty.ctprof", tmp) >= 0);
	assert_true(E2E_PATHF(log, "%s/twenty.log", tmp) >= 0);
	t0 = e2e_now_ms();
	s = e2e_capture(cfg, out, log);
	print_message("[ INFO     ] capture of 20 x 16 MiB registries, "
		      "1 ms budget: %" PRIu64 " ms\n",
		      e2e_now_ms() - t0);
	count_big(s, 20, &ok, &budget);
	print_message("[ INFO     ] read %d, left out %d; %s\n", ok, budget,
		      e2e_plugin(s, "appstats")->hint);
	assert_true(budget >= 1);
	assert_true(summary(s, "tag.time-budget") >= (uint64_t)budget);
	hint_has(s, "time-budget: ");
	ctp_snap_free(s);
	stop_crowd();
}

/* Left out by the budget, read first in the next capture: 3 big
 * registries against a 1 ms budget, recorded until each was read in some
 * capture (at most 30 captures; the walk by pid alone would read the
 * first one every time). */
static void budget_rotates(void **state)
{
	char cfg[PATH_MAX], dir[PATH_MAX], log[PATH_MAX];
	bool seen[3] = {false, false, false};
	int captures = 0;
	pid_t rec;

	(void)state;
	for (int i = 0; i < 3; i++)
		join(APS_BIG, "big");
	config_opts(cfg, sizeof(cfg), "rotate", false,
		    "max_registry_bytes: 16777216, time_budget_ms: 1");
	assert_true(E2E_PATHF(dir, "%s/rotate", tmp) >= 0);
	assert_true(E2E_PATHF(log, "%s/rotate.log", tmp) >= 0);
	rec = record_start(cfg, dir, log);
	for (int k = 1; k <= 30 && !(seen[0] && seen[1] && seen[2]); k++) {
		char err[256], path[PATH_MAX];
		struct last_snap l = {.n = 0};
		struct ctp_snap *s = NULL;

		wait_files(dir, (size_t)k);
		assert_true(e2e_each_snapshot(dir, note_snap, &l, err,
					      sizeof(err)) >= 0);
		snprintf(path, sizeof(path), "%s", l.path);
		if (ctp_snap_open(path, 1ull << 31, &s, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		for (int i = 0; i < 3; i++) {
			long row = e2e_row(s, CTP_SCOPE_PROCESS, crowd[i].pid);
			struct ctp_value st;

			assert_true(row >= 0);
			st = e2e_value(s, "appstats.status", (size_t)row);
			if (e2e_bytes_eq(st.str, "ok"))
				seen[i] = true;
		}
		ctp_snap_free(s);
		captures = k;
	}
	assert_int_equal(record_end(rec), 130);
	print_message("[ INFO     ] each of 3 read within %d captures\n",
		      captures);
	assert_true(seen[0] && seen[1] && seen[2]);
	stop_crowd();
}

/* The options' bounds, checked by the core from the plugin's table before
 * any capture: FILE:LINE:COL, exit 2. */
static void options_checked(void **state)
{
	static const struct {
		const char *opt, *want;
	} bad[] = {
		{"max_names: 0", "option 'max_names': 0 is out of range"},
		{"max_names: 1025", "option 'max_names': 1025 is out of range"},
		{"max_registry_bytes: 16777217",
		 "option 'max_registry_bytes': 16777217 is out of range"},
		{"time_budget_ms: 50ms",
		 "option 'time_budget_ms': '50ms' is not a whole number"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char cfg[PATH_MAX], err[PATH_MAX], *text;
		const char *args[] = {"check-config", cfg, NULL};

		config_opts(cfg, sizeof(cfg), "opts", false, bad[i].opt);
		assert_true(E2E_PATHF(err, "%s/opts.err", tmp) >= 0);
		assert_int_equal(e2e_run(args, NULL, err), 2);
		assert_int_equal(e2e_read_file(err, &text, NULL), 0);
		if (!strstr(text, bad[i].want) || !strstr(text, "opts.yaml:"))
			fail_msg("%s: '%s'", bad[i].opt, text);
		free(text);
	}
}

/* After each crowd test, also one a check left early. */
static int stop_all(void **state)
{
	(void)state;
	stop_crowd();
	if (recording > 0)
		record_end(recording);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("appstats", tmp, sizeof(tmp)) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	stop_running();
	stop_all(state);
	e2e_rm_rf(tmp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eight_threads),
		cmocka_unit_test(eight_threads_split),
		cmocka_unit_test(maps_read_once),
		cmocka_unit_test(maps_short_first_read),
		cmocka_unit_test(churn),
		cmocka_unit_test(unset),
		cmocka_unit_test(raw_ok),
		cmocka_unit_test(two_objects),
		cmocka_unit_test(pid_namespace),
		cmocka_unit_test(raw_refused),
		cmocka_unit_test(raw_foreign),
		cmocka_unit_test(raw_dup),
		cmocka_unit_test(raw_changing),
		cmocka_unit_test(options_checked),
		cmocka_unit_test_teardown(squatter_second, stop_all),
		cmocka_unit_test_teardown(squatter_first, stop_all),
		cmocka_unit_test_teardown(names_hog, stop_all),
		cmocka_unit_test_teardown(registry_too_large, stop_all),
		cmocka_unit_test_teardown(twenty_big, stop_all),
		cmocka_unit_test_teardown(budget_rotates, stop_all),
	};

	if (geteuid() != 0) {
		/* Reading another process's memory needs the same user or
		 * CAP_SYS_PTRACE; the workers are ours, so this runs as
		 * anyone. Still, ptrace_scope may forbid it. */
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
