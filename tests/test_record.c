/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core record` (issue 15, docs/RECORD.md) on the fixture tree: N
 * snapshots at the interval, each a complete snapshot every verb reads;
 * --keep and --max-bytes remove the oldest, never the newest; SIGTERM in
 * the middle exits 130 and leaves no temporary file; a plugin that crashes
 * is left out for the rest of the recording, which goes on; the config's
 * record: settings apply when the command line has none; SIGHUP reloads
 * the config; bad options are usage errors.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
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
#include "model.h"
#include "reader.h"

#define FIX_PROC CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	 CTP_TEST_FIXTURES "/sys"

static char tmpdir[PATH_MAX];

/* A config with procfs-stat on the fixture tree, `extra` appended under
 * plugins: (YAML lines) and `tail` after it (top-level keys). */
static void write_cfg(const char *path, const char *extra, const char *tail)
{
	char yaml[4 * PATH_MAX];
	int n = snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\", \"%s\"]\n"
			 "roots: {proc: \"%s\", sys: \"%s\"}\n"
			 "plugins:\n"
			 "  procfs-stat: {options: {affinity: status}}\n%s%s",
			 CTP_ABI_PLUGIN_DIR, CTP_TEST_PLUGIN_DIR, FIX_PROC,
			 FIX_SYS, extra, tail);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	assert_int_equal(e2e_write_file(path, yaml, (size_t)n), 0);
}

static int is_snap(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return n > 18 && strncmp(e->d_name, "ctprof-", 7) == 0 &&
	       strcmp(e->d_name + n - 11, ".ctprof.zst") == 0;
}

/* The recording's files in dir, oldest first; every entry of dir must be
 * one (no temporary file left). Returns how many; names in *names. */
static int files(const char *dir, struct dirent ***names)
{
	size_t all = 0;
	assert_int_equal(e2e_count_entries(dir, &all), 0);
	int n = scandir(dir, names, is_snap, alphasort);
	assert_true(n >= 0);
	if ((size_t)n != all)
		fail_msg("%s: %zu entries, %d of them snapshots", dir, all, n);
	return n;
}

static void free_names(struct dirent **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static struct ctp_snap *open_snap(const char *dir, const char *name)
{
	char path[PATH_MAX], err[512];
	struct ctp_snap *s = NULL;
	assert_int_equal(E2E_PATHF(path, "%s/%s", dir, name), 0);
	if (ctp_snap_open(path, 1ull << 31, &s, err, sizeof(err)) < 0)
		fail_msg("%s: %s", path, err);
	return s;
}

/* When the capture in dir/name started, as `show` prints it (UTC, to the
 * second). */
static void started(const char *dir, const char *name, char *when, size_t n)
{
	struct ctp_snap *s = open_snap(dir, name);
	time_t t =
		(time_t)(ctp_snap_header(s)->start_realtime_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, n, "%Y-%m-%d %H:%M:%S", &tm);
	ctp_snap_free(s);
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *s,
					    const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);
	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	return NULL;
}

/* A fresh directory for one test: dir/out (the recording), dir/c.yaml. */
static void dirs(const char *tag, char *dir, char *out, char *cfg)
{
	assert_int_equal(e2e_pathf(dir, PATH_MAX, "%s/%s", tmpdir, tag), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(e2e_pathf(out, PATH_MAX, "%s/out", dir), 0);
	assert_int_equal(e2e_pathf(cfg, PATH_MAX, "%s/c.yaml", dir), 0);
}

static int run_log(const char *const *args, const char *dir, char **err)
{
	char log[PATH_MAX];
	size_t len;
	assert_int_equal(E2E_PATHF(log, "%s/log", dir), 0);
	int rc = e2e_run(args, NULL, log);
	assert_int_equal(e2e_read_file(log, err, &len), 0);
	return rc;
}

/* Three snapshots 300 ms apart, each complete: the plugin loaded, every
 * fixture thread, start times one interval apart. */
static void test_count(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], *err;
	dirs("count", dir, out, cfg);
	write_cfg(cfg, "", "");
	const char *args[] = {"record",	    "--config", cfg,	   "-o", out,
			      "--interval", "300ms",	"--count", "3",	 NULL};
	int rc = run_log(args, dir, &err);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, err);
	assert_non_null(strstr(err, "record: 3 snapshot(s) in "));
	free(err);
	struct dirent **names;
	assert_int_equal(files(out, &names), 3);
	uint64_t prev = 0;
	size_t rows = 0, policies = 0;
	for (int i = 0; i < 3; i++) {
		struct ctp_snap *s = open_snap(out, names[i]->d_name);
		const struct ctp_snap_header *h = ctp_snap_header(s);
		const struct ctp_snap_plugin *p = plugin(s, "procfs-stat");
		assert_non_null(p);
		assert_int_equal(p->status, CTP_PST_LOADED);
		size_t n = ctp_snap_table(s, CTP_SCOPE_THREAD)->rows;
		assert_true(n > 0);
		if (i)
			assert_int_equal(n, rows); /* the same fixture */
		rows = n;
		/* The policy's name is set by a string handle of the capture
		 * (procfs-stat): a later capture's threads have it as the
		 * first's do. */
		size_t named = 0;
		for (size_t r = 0; r < n; r++)
			named += e2e_value(s, "procfs.policy", r).type !=
				 CTP_VALUE_ABSENT;
		assert_true(named > 0);
		if (i)
			assert_int_equal(named, policies);
		policies = named;
		/* A capture's counters are its own, not the recording's. */
		assert_int_equal(
			p->calls,
			ctp_snap_table(s, CTP_SCOPE_THREAD)->rows +
				ctp_snap_table(s, CTP_SCOPE_PROCESS)->rows);
		if (prev) {
			uint64_t gap = h->start_realtime_ns - prev;
			if (gap < 250000000ull || gap > 2000000000ull)
				fail_msg("captures %llu ns apart",
					 (unsigned long long)gap);
		}
		prev = h->start_realtime_ns;
		ctp_snap_free(s);
	}
	free_names(names, 3);
}

/* --keep 2 of 4: the two newest stay. --max-bytes under two files' size:
 * one stays, the newest, never removed. */
static void test_retention(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], *err;
	dirs("keep", dir, out, cfg);
	write_cfg(cfg, "", "");
	const char *args[] = {"record", "--config",   cfg,     "-o",
			      out,	"--interval", "200ms", "--count",
			      "4",	"--keep",     "2",     NULL};
	int rc = run_log(args, dir, &err);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, err);
	/* The files written, in order, from the log lines. */
	char written[4][PATH_MAX];
	int nw = 0;
	for (char *p = err; nw < 4 && (p = strstr(p, out)); p++) {
		size_t l = strcspn(p, ":");
		snprintf(written[nw++], PATH_MAX, "%.*s", (int)l, p);
		p += l;
	}
	free(err);
	assert_int_equal(nw, 4);
	struct dirent **names;
	assert_int_equal(files(out, &names), 2);
	char p2[PATH_MAX], p3[PATH_MAX];
	assert_int_equal(E2E_PATHF(p2, "%s/%s", out, names[0]->d_name), 0);
	assert_int_equal(E2E_PATHF(p3, "%s/%s", out, names[1]->d_name), 0);
	assert_string_equal(p2, written[2]);
	assert_string_equal(p3, written[3]);
	free_names(names, 2);

	dirs("bytes", dir, out, cfg);
	write_cfg(cfg, "", "");
	const char *a2[] = {"record", "--config",    cfg,     "-o",
			    out,      "--interval",  "200ms", "--count",
			    "3",      "--max-bytes", "1K",    NULL};
	rc = run_log(a2, dir, &err);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, err);
	free(err);
	assert_int_equal(files(out, &names), 1);
	free_names(names, 1);
}

/* SIGTERM while recording: exit 130, every file whole, no temporary. */
static void test_sigterm(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX];
	dirs("term", dir, out, cfg);
	write_cfg(cfg, "", "");
	const char *args[] = {"record", "--config",   cfg,     "-o",
			      out,	"--interval", "100ms", NULL};
	pid_t pid;
	int st;
	assert_int_equal(e2e_spawn(args, NULL, NULL, &pid), 0);
	struct timespec ts = {0, 700000000};
	nanosleep(&ts, NULL);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(e2e_wait(pid, &st), 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	struct dirent **names;
	int n = files(out, &names);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++)
		ctp_snap_free(open_snap(out, names[i]->d_name));
	free_names(names, n);
}

/* A plugin that crashes in its thread callback: left out for the rest of
 * the recording (one warning), which goes on to its count. */
static void test_crash(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], *err;
	dirs("crash", dir, out, cfg);
	write_cfg(cfg, "  abi-crash: {options: {where: thread}}\n", "");
	const char *args[] = {"record",	    "--config", cfg,	   "-o", out,
			      "--interval", "200ms",	"--count", "3",	 NULL};
	int rc = run_log(args, dir, &err);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, err);
	const char *w = strstr(err, "plugin abi-crash crashed: SIGSEGV in "
				    "thread callback");
	if (!w || strstr(w + 1, "plugin abi-crash crashed"))
		fail_msg("wanted one crash warning:\n%s", err);
	free(err);
	struct dirent **names;
	assert_int_equal(files(out, &names), 3);
	for (int i = 0; i < 3; i++) {
		struct ctp_snap *s = open_snap(out, names[i]->d_name);
		const struct ctp_snap_plugin *p = plugin(s, "abi-crash");
		assert_non_null(p);
		assert_int_equal(p->status, CTP_PST_FAILED);
		assert_non_null(strstr(p->reason, "crashed: SIGSEGV"));
		assert_int_equal(plugin(s, "procfs-stat")->status,
				 CTP_PST_LOADED);
		ctp_snap_free(s);
	}
	free_names(names, 3);
}

/* A hint set during a capture is that capture's: gone from the next ones
 * when the plugin no longer sets it; the one init set is in every file
 * where no capture's replaces it. */
static void test_hints(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], *err;
	dirs("hints", dir, out, cfg);
	write_cfg(cfg,
		  "  abi-good: {options: {hint: \"cause seen\", "
		  "hint_captures: \"1\"}}\n"
		  "  abi-twin: {options: {init_hint: \"said once\", "
		  "hint: \"cause seen\", hint_captures: \"1\"}}\n",
		  "");
	const char *args[] = {"record",	    "--config", cfg,	   "-o", out,
			      "--interval", "200ms",	"--count", "3",	 NULL};
	int rc = run_log(args, dir, &err);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, err);
	free(err);
	struct dirent **names;
	assert_int_equal(files(out, &names), 3);
	for (int i = 0; i < 3; i++) {
		struct ctp_snap *s = open_snap(out, names[i]->d_name);
		const struct ctp_snap_plugin *g = plugin(s, "abi-good"),
					     *t = plugin(s, "abi-twin");
		assert_non_null(g);
		assert_non_null(t);
		if (i == 0) {
			assert_non_null(g->hint);
			assert_string_equal(g->hint, "cause seen");
			assert_non_null(t->hint);
			assert_string_equal(t->hint, "cause seen");
		} else {
			assert_null(g->hint);
			assert_non_null(t->hint);
			assert_string_equal(t->hint, "said once");
		}
		ctp_snap_free(s);
	}
	free_names(names, 3);
}

/* record: in the config gives the directory and the interval; SIGHUP
 * reloads the config (here: a second plugin appears in later files). */
static void test_config_and_hup(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], tail[2 * PATH_MAX];
	dirs("hup", dir, out, cfg);
	snprintf(tail, sizeof(tail), "record: {interval: 200ms, dir: \"%s\"}\n",
		 out);
	write_cfg(cfg, "", tail);
	const char *args[] = {"record", "--config", cfg, NULL};
	pid_t pid;
	int st;
	assert_int_equal(e2e_spawn(args, NULL, NULL, &pid), 0);
	struct timespec ts = {0, 600000000};
	nanosleep(&ts, NULL);
	write_cfg(cfg, "  abi-crash: {options: {where: fini}}\n", tail);
	assert_int_equal(kill(pid, SIGHUP), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(e2e_wait(pid, &st), 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	struct dirent **names;
	int n = files(out, &names);
	assert_true(n >= 3);
	struct ctp_snap *first = open_snap(out, names[0]->d_name),
			*last = open_snap(out, names[n - 1]->d_name);
	assert_null(plugin(first, "abi-crash"));
	assert_non_null(plugin(last, "abi-crash"));
	ctp_snap_free(first);
	ctp_snap_free(last);
	free_names(names, n);
}

/* The verbs read a recording's directory: show DIR the latest file,
 * compare DIR the last two, --from picks BASE by time. */
static void test_dir_verbs(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], *err, *text;
	size_t len;
	dirs("verbs", dir, out, cfg);
	write_cfg(cfg, "", "");
	const char *rec[] = {"record",	   "--config", cfg,	  "-o", out,
			     "--interval", "200ms",    "--count", "3",	NULL};
	assert_int_equal(run_log(rec, dir, &err), 0);
	free(err);
	struct dirent **names;
	assert_int_equal(files(out, &names), 3);
	char log[PATH_MAX], txt[PATH_MAX];
	assert_int_equal(E2E_PATHF(txt, "%s/out.txt", dir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/log", dir), 0);
	const char *cmp[] = {"compare", out, "--wide", NULL};
	assert_int_equal(e2e_run(cmp, txt, log), 0);
	assert_int_equal(e2e_read_file(txt, &text, &len), 0);
	const char *b = strstr(text, "BASE "), *c = strstr(text, "CAND ");
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(strstr(b, names[1]->d_name));
	assert_true(strstr(b, names[1]->d_name) < c);
	assert_non_null(strstr(c, names[2]->d_name));
	free(text);
	const char *from[] = {"compare", out, "--from", "-1h", "--wide", NULL};
	assert_int_equal(e2e_run(from, txt, log), 0);
	assert_int_equal(e2e_read_file(txt, &text, &len), 0);
	c = strstr(text, "CAND ");
	assert_non_null(c);
	assert_true(strstr(text, names[0]->d_name) < c);
	free(text);
	/* show DIR: the header line is the latest capture's. */
	char when[64];
	started(out, names[2]->d_name, when, sizeof(when));
	const char *show[] = {"show", out, NULL};
	assert_int_equal(e2e_run(show, txt, log), 0);
	assert_int_equal(e2e_read_file(txt, &text, &len), 0);
	assert_non_null(strstr(text, when));
	free(text);
	const char *bad[] = {"compare", out, "--from", "yesterday", NULL};
	assert_int_equal(e2e_run(bad, NULL, log), 2);
	assert_int_equal(e2e_read_file(log, &text, &len), 0);
	assert_non_null(strstr(text, "'yesterday' is no time"));
	free(text);
	free_names(names, 3);
}

/* The files `record` says it wrote, in order, from its log. */
static int written_files(const char *log, const char *out, char (*w)[PATH_MAX],
			 int max)
{
	int n = 0;
	size_t ol = strlen(out);
	for (const char *l = log; n < max && *l;) {
		const char *nl = strchr(l, '\n'),
			   *end = nl ? nl : l + strlen(l);
		const char *p = l + strlen("ctprof-core: "), *th;
		if (strncmp(l, "ctprof-core: ", 13) == 0 &&
		    strncmp(p, out, ol) == 0 && p[ol] == '/' &&
		    (th = strstr(p, ": ")) && th < end &&
		    strstr(p, " threads, ") < end)
			snprintf(w[n++], PATH_MAX, "%.*s", (int)(th - p), p);
		l = nl ? nl + 1 : end;
	}
	return n;
}

/* `record --count n --keep keep` into out, 200 ms apart, which must
 * succeed; the n files it wrote into w, its log returned. */
static char *record_keep(const char *dir, const char *out, const char *cfg,
			 int n, int keep, char (*w)[PATH_MAX])
{
	char count[16], kp[16], *err;
	snprintf(count, sizeof(count), "%d", n);
	snprintf(kp, sizeof(kp), "%d", keep);
	const char *args[] = {"record", "--config",   cfg,     "-o",
			      out,	"--interval", "200ms", "--count",
			      count,	"--keep",     kp,      NULL};
	int rc = run_log(args, dir, &err);
	if (rc != 0)
		fail_msg("exit %d:\n%s", rc, err);
	assert_int_equal(written_files(err, out, w, n), n);
	return err;
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;
	assert_int_equal(E2E_PATHF(p, "%s/%s", dir, name), 0);
	return lstat(p, &st) == 0;
}

/* One snapshot of the fixture, written to `path`. */
static void one_snapshot(const char *dir, const char *cfg, const char *path)
{
	char one[PATH_MAX], *err;
	struct dirent **names;
	assert_int_equal(E2E_PATHF(one, "%s/one", dir), 0);
	const char *args[] = {"record", "--config", cfg, "-o",
			      one,	"--count",  "1", NULL};
	if (run_log(args, dir, &err) != 0)
		fail_msg("%s", err);
	free(err);
	assert_int_equal(files(one, &names), 1);
	char p[PATH_MAX];
	assert_int_equal(E2E_PATHF(p, "%s/%s", one, names[0]->d_name), 0);
	assert_int_equal(e2e_copy_file(p, path), 0);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rmdir(one), 0);
	free_names(names, 1);
}

/*
 * Retention in a directory others use (issue 28): it removes only files
 * named exactly as the recorder names them, regular, not links, of its own
 * user, and keeps the newest it wrote. A name outside the grammar, another
 * user's files, a link and a FIFO stay; a file of ours named in the future
 * goes first (one warning). show DIR then reads the newest capture.
 */
static void test_untrusted_dir(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], p[PATH_MAX], *err;
	bool root = geteuid() == 0;
	dirs("untrusted", dir, out, cfg);
	write_cfg(cfg, "", "");
	assert_int_equal(mkdir(out, 0755), 0);
	static const char golden[] = "ctprof-000-golden.ctprof.zst",
			  ours_future[] =
				  "ctprof-20991231T000000.000Z.ctprof.zst",
			  theirs_future[] =
				  "ctprof-20981231T000000.000Z.ctprof.zst",
			  theirs_old[] =
				  "ctprof-20010101T000000.000Z.ctprof.zst",
			  link_name[] =
				  "ctprof-20501231T000000.000Z.ctprof.zst",
			  fifo_name[] =
				  "ctprof-20401231T000000.000Z.ctprof.zst";
	assert_int_equal(E2E_PATHF(p, "%s/%s", out, golden), 0);
	one_snapshot(dir, cfg, p);
	assert_int_equal(E2E_PATHF(p, "%s/%s", out, ours_future), 0);
	assert_int_equal(e2e_write_file(p, "garbage\n", 8), 0);
	if (root) {
		/* Another user's (nobody: uid 65534 on Debian). */
		const char *theirs[] = {theirs_future, theirs_old};
		for (int i = 0; i < 2; i++) {
			assert_int_equal(E2E_PATHF(p, "%s/%s", out, theirs[i]),
					 0);
			assert_int_equal(e2e_write_file(p, "theirs\n", 7), 0);
			assert_int_equal(chown(p, 65534, 65534), 0);
		}
	}
	assert_int_equal(E2E_PATHF(p, "%s/%s", out, link_name), 0);
	assert_int_equal(symlink("/etc/hostname", p), 0);
	assert_int_equal(E2E_PATHF(p, "%s/%s", out, fifo_name), 0);
	assert_int_equal(mkfifo(p, 0600), 0);

	char w[6][PATH_MAX];
	err = record_keep(dir, out, cfg, 6, 4, w);
	assert_true(exists(out, golden));
	for (int i = 0; i < 6; i++) {
		struct stat st;
		if ((lstat(w[i], &st) == 0) != (i >= 2))
			fail_msg("%s: %s", w[i], i >= 2 ? "removed" : "kept");
	}
	assert_false(exists(out, ours_future));
	assert_true(exists(out, link_name));
	assert_true(exists(out, fifo_name));
	if (root) {
		assert_true(exists(out, theirs_future));
		assert_true(exists(out, theirs_old));
	}
	const char *warn = strstr(err, "named after the capture just taken");
	if (!warn || strstr(warn + 1, "named after the capture just taken"))
		fail_msg("wanted one warning:\n%s", err);
	free(err);

	/* show DIR: the newest capture, past the FIFO, link and garbage. */
	char txt[PATH_MAX], log[PATH_MAX], when[64], *text;
	size_t len;
	assert_int_equal(E2E_PATHF(txt, "%s/out.txt", dir), 0);
	assert_int_equal(E2E_PATHF(log, "%s/log", dir), 0);
	started(out, strrchr(w[5], '/') + 1, when, sizeof(when));
	const char *show[] = {"show", out, NULL};
	assert_int_equal(e2e_run_within(show, txt, log, 120), 0);
	assert_int_equal(e2e_read_file(txt, &text, &len), 0);
	assert_non_null(strstr(text, when));
	free(text);
}

/*
 * A wall clock that stepped back: the directory holds captures named in
 * the future (taken while the clock was ahead). Retention removes those
 * first and keeps the captures it is taking now (not the other way round,
 * which left only the file just written).
 */
static void test_clock_back(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], p[PATH_MAX], *err;
	dirs("clockback", dir, out, cfg);
	write_cfg(cfg, "", "");
	assert_int_equal(mkdir(out, 0750), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
			E2E_PATHF(p,
				  "%s/ctprof-20990101T00000%d.000Z.ctprof.zst",
				  out, i),
			0);
		one_snapshot(dir, cfg, p);
	}
	char w[3][PATH_MAX];
	err = record_keep(dir, out, cfg, 3, 3, w);
	struct dirent **names;
	assert_int_equal(files(out, &names), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(E2E_PATHF(p, "%s/%s", out, names[i]->d_name),
				 0);
		assert_string_equal(p, w[i]);
	}
	free_names(names, 3);
	assert_non_null(strstr(err, "3 file(s) named after the capture just "
				    "taken (the wall clock stepped back?)"));
	free(err);
}

static void test_usage(void **state)
{
	(void)state;
	char dir[PATH_MAX], out[PATH_MAX], cfg[PATH_MAX], *err;
	dirs("usage", dir, out, cfg);
	write_cfg(cfg, "", "");
	const char *a1[] = {"record", "--config",   cfg,  "-o",
			    out,      "--interval", "5x", NULL};
	assert_int_equal(run_log(a1, dir, &err), 2);
	assert_non_null(strstr(err, "--interval wants a duration"));
	free(err);
	const char *a2[] = {"record", "--config", cfg, NULL};
	assert_int_equal(run_log(a2, dir, &err), 2);
	assert_non_null(strstr(err, "no directory: give -o DIR or set "
				    "record.dir"));
	free(err);
	const char *a3[] = {"record",  "--config", cfg,		 "-o", out,
			    "--count", "2",	   "--duration", "1s", NULL};
	assert_int_equal(run_log(a3, dir, &err), 2);
	free(err);
	const char *a4[] = {"record", "--config",   cfg,    "-o",
			    out,      "--interval", "10ms", NULL};
	assert_int_equal(run_log(a4, dir, &err), 2);
	assert_non_null(strstr(err, "from 100ms to 1d"));
	free(err);
	/* The directory as the readers take it, once. */
	const char *a5[] = {"record", "--config", cfg, out, "-o", out, NULL};
	assert_int_equal(run_log(a5, dir, &err), 2);
	assert_non_null(strstr(err, "the directory is given once"));
	free(err);
	const char *a6[] = {"record",  "--config", cfg, out,
			    "--count", "1",	   NULL};
	assert_int_equal(run_log(a6, dir, &err), 0);
	free(err);
	struct dirent **names;
	assert_int_equal(files(out, &names), 1);
	free_names(names, 1);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("record", tmpdir, sizeof(tmpdir));
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("CTP_KEEP_TMP"))
		e2e_rm_rf(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_retention),
		cmocka_unit_test(test_sigterm),
		cmocka_unit_test(test_crash),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_config_and_hup),
		cmocka_unit_test(test_dir_verbs),
		cmocka_unit_test(test_untrusted_dir),
		cmocka_unit_test(test_clock_back),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
