/* SPDX-License-Identifier: MIT */
/*
 * The plugin ABI end to end: the real ctprof-core binary loads the test
 * collectors of tests/plugins/ (built into their own directory) against the
 * tiny proc tree tests/fixtures/abi-proc or a generated one, and the
 * snapshot is read back with the reader library.
 *
 * Run without arguments for the tests any user can run; with --root for
 * the permission checks that only apply to root (exits 77 otherwise).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "engine.h"
#include "e2e_util.h"
#include "loader.h"
#include "reader.h"

#define FIXTURE_PROC CTP_TEST_FIXTURES "/abi-proc"
#define PLUGDIR	     CTP_ABI_PLUGIN_DIR

static char tmp_root[PATH_MAX];
static unsigned case_no;

/* ---- Small helpers ---------------------------------------------------- */

/* snprintf that fails the test rather than truncate a path or a line. */
static void xsnprintf(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void xsnprintf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		fail_msg("string too long for its buffer: %s", out);
}

static void write_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void write_file(const char *path, const char *fmt, ...)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fail_msg("cannot create %s: %s", path, strerror(errno));
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int c;
	while ((c = fgetc(f)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		buf[len++] = (char)c;
	}
	fclose(f);
	if (!buf)
		return strdup("");
	buf[len] = '\0';
	return buf;
}

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	xsnprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", buf, strerror(errno));
}

/* A fresh directory for one test case. */
static void case_dir(char *out, size_t len, const char *what)
{
	xsnprintf(out, len, "%s/%02u-%s", tmp_root, ++case_no, what);
	mkdir_p(out);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Is `line` one whole line of `text`? */
#define has_line e2e_has_line

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *hit = strstr(line, needle);
		if (hit && hit < line + len)
			n++;
		line += len + (nl ? 1 : 0);
	}
	return n;
}

#define assert_line(text, ...)                                                 \
	do {                                                                   \
		char want_[8192];                                              \
		xsnprintf(want_, sizeof(want_), __VA_ARGS__);                  \
		if (!has_line((text), want_))                                  \
			fail_msg("missing line:\n  %s\nin stderr:\n%s", want_, \
				 (text));                                      \
	} while (0)

/* ---- Running the binary -------------------------------------------------- */

struct run {
	int status; /* exit status, or 128 + signal */
	char *out, *err;
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* Run ctprof-core with `args` (NULL-terminated), its stdout and stderr
 * going to dir/stdout.txt and dir/stderr.txt, and return both. */
static struct run run_core(const char *dir, const char *const *args)
{
	char outp[PATH_MAX], errp[PATH_MAX];
	const char *argv[32];
	size_t n = 0;
	argv[n++] = CTP_TEST_BINARY;
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	xsnprintf(outp, sizeof(outp), "%s/stdout.txt", dir);
	xsnprintf(errp, sizeof(errp), "%s/stderr.txt", dir);

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		unsetenv("CTPROF_PLUGIN_DIR");
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	struct run r = {
		.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
		.out = read_all(outp),
		.err = read_all(errp),
	};
	return r;
}

/*
 * Write a config into `dir` and capture with it into dir/out/snap.zst.
 * `plugins` is the YAML body of the `plugins:` map (indented two spaces),
 * `extra` more top-level lines; plugin_dirs lists `dirs2` (may be NULL)
 * and then PLUGDIR.
 */
static struct run capture_flag(const char *dir, const char *proc,
			       unsigned workers, const char *dirs2,
			       const char *extra, const char *plugins,
			       const char *flag);

static struct run capture(const char *dir, const char *proc, unsigned workers,
			  const char *dirs2, const char *extra,
			  const char *plugins)
{
	return capture_flag(dir, proc, workers, dirs2, extra, plugins, NULL);
}

/* The same, with one more command-line flag (NULL: none). */
static struct run capture_flag(const char *dir, const char *proc,
			       unsigned workers, const char *dirs2,
			       const char *extra, const char *plugins,
			       const char *flag)
{
	char cfg[PATH_MAX], outdir[PATH_MAX], out[PATH_MAX];
	xsnprintf(cfg, sizeof(cfg), "%s/collectors.yaml", dir);
	xsnprintf(outdir, sizeof(outdir), "%s/out", dir);
	xsnprintf(out, sizeof(out), "%s/snap.ctprof.zst", outdir);
	mkdir_p(outdir);
	/* sys points at the fixture too, and cgroup auto finds no mountinfo
	 * there, so no sysfs or cgroup tree of this host is read. */
	write_file(cfg,
		   "plugin_dirs:\n%s%s%s  - \"%s\"\n"
		   "workers: %u\n"
		   "roots:\n  proc: \"%s\"\n  sys: \"%s\"\n  cgroup: auto\n"
		   "%s"
		   "plugins:\n%s",
		   dirs2 ? "  - \"" : "", dirs2 ? dirs2 : "",
		   dirs2 ? "\"\n" : "", PLUGDIR, workers, proc, proc,
		   extra ? extra : "", plugins);
	const char *args[] = {"--config", cfg, "-o", out, flag, NULL};
	return run_core(dir, args);
}

static struct ctp_snap *open_snap(const char *dir)
{
	char path[PATH_MAX], err[1024];
	struct ctp_snap *snap = NULL;
	xsnprintf(path, sizeof(path), "%s/out/snap.ctprof.zst", dir);
	int r = ctp_snap_open(path, 1ull << 30, &snap, err, sizeof(err));
	if (r < 0)
		fail_msg("reading the snapshot: %s", err);
	return snap;
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *snap,
					    const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	fail_msg("plugin %s not in the snapshot", name);
	return NULL;
}

static const struct ctp_snap_field *field(const struct ctp_snap *snap,
					  const char *name)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, name);
	if (!f)
		fail_msg("field %s not in the snapshot", name);
	return f;
}

/* Row of the thread (or process, by tgid) table holding `id`. */
static size_t row_of(const struct ctp_snap *snap, uint8_t scope, uint64_t id)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, scope);
	assert_non_null(t);
	const uint64_t *ids = scope == CTP_SCOPE_THREAD ? t->tid : t->tgid;
	for (size_t r = 0; r < t->rows; r++)
		if (ids[r] == id)
			return r;
	fail_msg("id %" PRIu64 " not in the %s table", id,
		 ctp_scope_name(scope));
	return 0;
}

/* A proc tree of nproc processes with nthreads threads each: tgids 1000,
 * 1100, ...; tids tgid..tgid+nthreads-1; abi-data holds the tid. */
static void gen_tree(const char *root, unsigned nproc, unsigned nthreads)
{
	char path[PATH_MAX];
	for (unsigned p = 0; p < nproc; p++) {
		unsigned tgid = 1000 + 100 * p;
		xsnprintf(path, sizeof(path), "%s/%u/task", root, tgid);
		mkdir_p(path);
		xsnprintf(path, sizeof(path), "%s/%u/comm", root, tgid);
		write_file(path, "gen-%u\n", p);
		xsnprintf(path, sizeof(path), "%s/%u/abi-pdata", root, tgid);
		write_file(path, "%u\n", p);
		for (unsigned t = 0; t < nthreads; t++) {
			unsigned tid = tgid + t;
			xsnprintf(path, sizeof(path), "%s/%u/task/%u", root,
				  tgid, tid);
			mkdir_p(path);
			xsnprintf(path, sizeof(path), "%s/%u/task/%u/comm",
				  root, tgid, tid);
			write_file(path, "gen-%u-%u\n", p, t);
			xsnprintf(path, sizeof(path), "%s/%u/task/%u/cgroup",
				  root, tgid, tid);
			write_file(path, "0::/gen.slice/p%u\n", p);
			xsnprintf(path, sizeof(path), "%s/%u/task/%u/abi-data",
				  root, tgid, tid);
			write_file(path, "%u\n", tid);
		}
	}
}

/* What dlopen/dlsym themselves say about a file, for the expected lines. */
static void dl_errors(const char *path, char *open_err, size_t olen,
		      char *sym_err, size_t slen)
{
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		xsnprintf(open_err, olen, "%s", dlerror());
		return;
	}
	dlerror();
	if (!dlsym(h, CTP_PLUGIN_SYMBOL))
		xsnprintf(sym_err, slen, "%s", dlerror());
	dlclose(h);
}

/* Every value of every field of `plugin_name` is absent. */
static void assert_no_values(const struct ctp_snap *snap,
			     const char *plugin_name)
{
	const struct ctp_snap_field *f = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		if (strcmp(f[i].plugin, plugin_name) != 0)
			continue;
		const struct ctp_snap_table *t =
			ctp_snap_table(snap, f[i].scope);
		for (size_t r = 0; r < t->rows; r++)
			if (ctp_snap_get(snap, &f[i], r).type !=
			    CTP_VALUE_ABSENT)
				fail_msg("failed plugin %s has a value for %s",
					 plugin_name, f[i].name);
	}
}

/* ---- Tests --------------------------------------------------------------- */

static const char good_plugin[] = "  abi-good:\n"
				  "    options: {greeting: hello}\n";

/* A good plugin: every callback and declared file reaches the snapshot. */
static void test_good_plugin(void **unused)
{
	(void)unused;
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "good");
	struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL, good_plugin);
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	assert_int_equal(count_lines_with(r.err, "warning"), 0);
	assert_int_equal(count_lines_with(r.err, "error"), 0);
	assert_int_equal(count_lines_with(r.err, "plugins failed: none"), 1);

	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-good");
	assert_int_equal(p->status, CTP_PST_LOADED);
	assert_string_equal(p->version, "1.2.3");
	assert_string_equal(p->path, PLUGDIR "/abi-good.so");
	assert_null(p->reason);
	assert_null(p->hint);
	assert_int_equal(p->errors, 0);
	assert_int_equal(p->vanished, 0);
	/* host 1 + process 2 + thread 3 + cgroup 2 + finish 1 */
	assert_int_equal(p->calls, 9);
	assert_int_equal(p->n_summary, 1);
	assert_string_equal(p->summary_name[0], "threads");
	assert_int_equal(p->summary[0], 3);

	const struct ctp_snap_field *f = field(snap, "abi-good.value");
	assert_string_equal(f->plugin, "abi-good");
	assert_int_equal(f->scope, CTP_SCOPE_THREAD);
	assert_int_equal(f->type, CTP_TYPE_U64);
	assert_int_equal(f->unit, CTP_UNIT_COUNT);
	assert_int_equal(f->kind, CTP_KIND_COUNTER);
	assert_int_equal(f->rule, CTP_RULE_SUM);
	assert_string_equal(f->help, "number from task/<tid>/abi-data");

	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(t->rows, 3);
	size_t r100 = row_of(snap, CTP_SCOPE_THREAD, 100);
	size_t r101 = row_of(snap, CTP_SCOPE_THREAD, 101);
	size_t r200 = row_of(snap, CTP_SCOPE_THREAD, 200);
	/* Absent vs zero: 100 set 0, 101 left unset. */
	assert_int_equal(e2e_u64(snap, "abi-good.value", r100), 0);
	assert_int_equal(e2e_value(snap, "abi-good.value", r101).type,
			 CTP_VALUE_ABSENT);
	assert_int_equal(e2e_u64(snap, "abi-good.value", r200), 7);
	e2e_assert_str(snap, "abi-good.comm", r100, "abi-main");
	e2e_assert_str(snap, "abi-good.comm", r101, "abi-worker");
	e2e_assert_str(snap, "abi-good.comm", r200, "abi-other");
	e2e_assert_str(snap, "abi-good.cgroup", r101,
		       "/abi.slice/main.service");
	e2e_assert_str(snap, "abi-good.cgroup", r200,
		       "/abi.slice/other.service");
	/* Empty values passed as (NULL, 0) are present and empty. */
	e2e_assert_str(snap, "abi-good.empty", r101, "");
	struct ctp_value cpus = e2e_value(snap, "abi-good.cpus", r100);
	assert_int_equal(cpus.type, CTP_TYPE_CPUSET);
	assert_int_equal(cpus.cpuset.n, 2);
	assert_int_equal(cpus.cpuset.r[0], 0);
	assert_int_equal(cpus.cpuset.r[1], 0);
	assert_int_equal(cpus.cpuset.r[2], 65);
	assert_int_equal(cpus.cpuset.r[3], 65);
	for (size_t i = 0; i < 2; i++) {
		cpus = e2e_value(snap, "abi-good.cpus", i ? r200 : r101);
		assert_int_equal(cpus.type, CTP_TYPE_CPUSET);
		assert_int_equal(cpus.cpuset.n, 0);
	}

	assert_int_equal(e2e_u64(snap, "abi-good.pvalue",
				 row_of(snap, CTP_SCOPE_PROCESS, 100)),
			 42);
	assert_int_equal(e2e_u64(snap, "abi-good.pvalue",
				 row_of(snap, CTP_SCOPE_PROCESS, 200)),
			 7);
	assert_int_equal(e2e_u64(snap, "abi-good.threads", 0), 3);
	e2e_assert_str(snap, "abi-good.greeting", 0, "hello");

	const struct ctp_snap_table *cg =
		ctp_snap_table(snap, CTP_SCOPE_CGROUP);
	assert_int_equal(cg->rows, 2);
	for (size_t i = 0; i < cg->rows; i++)
		assert_int_equal(e2e_u64(snap, "abi-good.path_len", i),
				 cg->path[i].len);

	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	assert_int_equal(rf->tids_recorded, 3);
	assert_int_equal(rf->tgids_walked, 2);
	ctp_snap_free(snap);
	run_free(&r);
}

/* `dump` prints the measured zero as 0 and the unset value as null. */
static void test_dump_absent_vs_zero(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], snap[PATH_MAX];
	case_dir(dir, sizeof(dir), "dump");
	struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL, good_plugin);
	assert_int_equal(r.status, 0);
	run_free(&r);
	xsnprintf(snap, sizeof(snap), "%s/out/snap.ctprof.zst", dir);

	/* Decode the JSON with the standard library's json module (no
	 * third-party package), and print the column of abi-good.value in
	 * tid order: a reader of the dump sees exactly this. */
	char script[PATH_MAX];
	xsnprintf(script, sizeof(script), "%s/values.py", dir);
	write_file(script,
		   "import json, sys\n"
		   "doc = json.load(sys.stdin)\n"
		   "def walk(o):\n"
		   "    if isinstance(o, dict):\n"
		   "        yield o\n"
		   "        for v in o.values(): yield from walk(v)\n"
		   "    elif isinstance(o, list):\n"
		   "        for v in o: yield from walk(v)\n"
		   "for t in walk(doc):\n"
		   "    cols = t.get('columns')\n"
		   "    if isinstance(cols, dict) and 'abi-good.value' in cols"
		   " and 'tid' in t:\n"
		   "        for tid, v in sorted(zip(t['tid'],"
		   " cols['abi-good.value'])):\n"
		   "            print(tid, json.dumps(v))\n");
	char cmd[3 * PATH_MAX];
	xsnprintf(cmd, sizeof(cmd), "'%s' dump '%s' | /usr/bin/python3 '%s'",
		  CTP_TEST_BINARY, snap, script);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char out[4096];
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	if (st != 0 || strcmp(out, "100 0\n101 null\n200 7\n") != 0)
		fail_msg("dump gave (status %d):\n%s", st, out);
}

/* The exited table through the real engine and binary (tests/plugins/
 * abi_exited.c): rows added from finish with their identity and values,
 * every refusal the API promises, the losses, and what `show --view all`
 * and `dump` print of it; a snapshot without exited rows has no table. */
static void test_exited_table(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], path[PATH_MAX];
	case_dir(dir, sizeof(dir), "exited");
	struct run r =
		capture(dir, FIXTURE_PROC, 2, NULL, NULL, "  abi-exited: {}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	run_free(&r);
	struct ctp_snap *snap = open_snap(dir);
	e2e_assert_str(snap, "abi-exited.checks", 0,
		       "busy=-16 thread_rec=-22 after_end=-22 wrong_scope=-22 "
		       "nul=-22 long=-22 recording=0");
	assert_int_equal(field(snap, "abi-exited.cpu")->scope,
			 CTP_SCOPE_EXITED);
	assert_int_equal(field(snap, "abi-exited.code")->scope,
			 CTP_SCOPE_EXITED);
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_EXITED);
	assert_int_equal(t->rows, 4);
	static const uint64_t tid[] = {1000, 1001, 1002, 1003};
	static const uint64_t tgid[] = {1000, 0, 1000, 1000};
	static const uint64_t exit_ns[] = {5000000000ull, 0, 5000000002ull,
					   5000000003ull};
	static const char *const comm[] = {"exiter-0", NULL, "exiter-2",
					   "unclosed"};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(t->tid[i], tid[i]);
		assert_int_equal(t->tgid[i], tgid[i]);
		assert_int_equal(t->exit_ns[i], exit_ns[i]);
		if (comm[i])
			assert_true(e2e_bytes_eq(t->comm[i], comm[i]));
		else
			assert_null(t->comm[i].ptr);
		assert_int_equal(e2e_i64(snap, "abi-exited.code", i),
				 (int64_t)i - 1);
		if (i == 1)
			assert_int_equal(
				e2e_value(snap, "abi-exited.cpu", i).type,
				CTP_VALUE_ABSENT);
		else
			assert_int_equal(e2e_u64(snap, "abi-exited.cpu", i),
					 10 * (i + 1));
	}
	/* Three thread callbacks lost one each, finish two. */
	const struct ctp_snap_plugin *p = plugin(snap, "abi-exited");
	assert_true(p->exited);
	assert_int_equal(p->exited_lost, 5);
	ctp_snap_free(snap);

	xsnprintf(path, sizeof(path), "%s/out/snap.ctprof.zst", dir);
	const char *show[] = {"show", path, "--view", "all", NULL};
	r = run_core(dir, show);
	assert_int_equal(r.status, 0);
	assert_line(r.out, "Exited: 4 tasks exited since the last snapshot; "
			   "lost: abi-exited 5");
	run_free(&r);
	const char *dump[] = {"dump", path, NULL};
	r = run_core(dir, dump);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\n  \"exited\": {\n    \"fields\": ["));
	assert_non_null(strstr(r.out, "\"tid\": [1000, 1001, 1002, 1003]"));
	assert_non_null(
		strstr(r.out, "\"lost\": {\n      \"abi-exited\": 5\n"));
	run_free(&r);

	/* Nothing exited: no table, in the file or in show. */
	case_dir(dir, sizeof(dir), "no-exited");
	r = capture(dir, FIXTURE_PROC, 1, NULL, NULL, good_plugin);
	assert_int_equal(r.status, 0);
	run_free(&r);
	xsnprintf(path, sizeof(path), "%s/out/snap.ctprof.zst", dir);
	r = run_core(dir, dump);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "\"exited\""));
	run_free(&r);
	r = run_core(dir, show);
	assert_null(strstr(r.out, "Exited:"));
	run_free(&r);
}

/* Every way a plugin fails to load: one exact line each, FAILED with the
 * same reason in the snapshot, nothing of it captured, the rest captured. */
static void test_load_failures(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], extra[PATH_MAX], garbage[PATH_MAX];
	case_dir(dir, sizeof(dir), "failures");
	xsnprintf(extra, sizeof(extra), "%s/more-plugins", dir);
	mkdir_p(extra);
	xsnprintf(garbage, sizeof(garbage), "%s/abi-garbage.so", extra);
	write_file(garbage, "this is not an ELF file\n");

	struct run r = capture(dir, FIXTURE_PROC, 1, extra, NULL,
			       "  abi-good: {}\n"
			       "  abi-badabi: {}\n"
			       "  abi-nosym: {}\n"
			       "  abi-small: {}\n"
			       "  abi-misnamed: {}\n"
			       "  abi-dupfield: {}\n"
			       "  abi-collide: {}\n"
			       "  abi-countermode: {}\n"
			       "  abi-gaugesum: {}\n"
			       "  abi-initfail: {}\n"
			       "  abi-garbage: {}\n"
			       "  abi-missing: {}\n"
			       "  abi-flagbits: {}\n"
			       "  abi-resfield: {}\n"
			       "  abi-trailing: {}\n"
			       "  abi-startbad: {}\n"
			       "  abi-starttwice: {}\n"
			       "  abi-badcmd: {}\n"
			       "  abi-shadowcmd: {}\n"
			       "  abi-badcaps: {}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);

	char open_err[1024] = "", sym_err[1024] = "", dummy[1024] = "";
	dl_errors(PLUGDIR "/abi-nosym.so", dummy, sizeof(dummy), sym_err,
		  sizeof(sym_err));
	assert_string_equal(dummy, "");
	assert_string_not_equal(sym_err, "");
	dl_errors(garbage, open_err, sizeof(open_err), dummy, sizeof(dummy));
	assert_string_not_equal(open_err, "");

	static const char rule_why[] =
		"aggregation rule does not fit the kind (counter: sum; peak: "
		"max/min; gauge: max/min/range; categorical: mode; ordinal: "
		"range/min/max/mode; cpuset: union)";
	struct {
		const char *name;
		char why[2048];
	} want[] = {
		{"abi-badabi", "plugin ABI version 99, this core speaks 1"},
		{"abi-nosym", ""},
		{"abi-small", ""},
		{"abi-misnamed",
		 "descriptor names itself 'someone-else', expected "
		 "'abi-misnamed': did you mean plugin 'someone-else' (in a "
		 "file someone-else.so)?"},
		{"abi-dupfield", "field 'abi-dupfield.x' is declared twice"},
		{"abi-collide", "field 'abi-good.value' is already registered "
				"by plugin 'abi-good'"},
		{"abi-countermode", ""},
		{"abi-gaugesum", ""},
		{"abi-initfail", ""},
		{"abi-garbage", ""},
		{"abi-missing", ""},
		{"abi-flagbits", "descriptor has unknown flag bits 0x80 (this "
				 "core knows 0x3f)"},
		{"abi-resfield", "field 'abi-resfield.y': reserved members "
				 "(flags, reserved) must be 0"},
		{"abi-trailing", ""},
		{"abi-startbad",
		 "field 'abi-startbad.y': CTP_FIELD_START_TIME is for a "
		 "thread or process u64 ordinal field in ns, us or ticks"},
		{"abi-starttwice",
		 "field 'abi-starttwice.z': the thread start time is already "
		 "field 'abi-starttwice.y' (one per scope)"},
		{"abi-badcmd", "command 1: a name of [a-z0-9-] (1 to 32 bytes, "
			       "not a ctprof-core command) and a run function "
			       "are required"},
		{"abi-shadowcmd", "command 0: a name of [a-z0-9-] (1 to 32 "
				  "bytes, not a ctprof-core command) and a run "
				  "function are required"},
		{"abi-badcaps", ""},
	};
	xsnprintf(want[1].why, sizeof(want[1].why),
		  "missing symbol ctp_plugin_v1: %s", sym_err);
	xsnprintf(want[2].why, sizeof(want[2].why),
		  "descriptor size 8 is smaller than the %zu bytes ABI 1 "
		  "requires",
		  offsetof(struct ctp_plugin, finish) + sizeof(void *));
	xsnprintf(want[6].why, sizeof(want[6].why), "field '%s': %s",
		  "abi-countermode.y", rule_why);
	xsnprintf(want[7].why, sizeof(want[7].why), "field '%s': %s",
		  "abi-gaugesum.y", rule_why);
	xsnprintf(want[8].why, sizeof(want[8].why), "init failed: %s",
		  strerror(EIO));
	xsnprintf(want[9].why, sizeof(want[9].why), "dlopen failed: %s",
		  open_err);
	xsnprintf(want[10].why, sizeof(want[10].why),
		  "abi-missing.so not found in plugin directories: %s:%s",
		  extra, PLUGDIR);
	xsnprintf(want[13].why, sizeof(want[13].why),
		  "descriptor byte %zu is set: past the %zu bytes this core "
		  "knows",
		  sizeof(struct ctp_plugin), sizeof(struct ctp_plugin));

	xsnprintf(want[18].why, sizeof(want[18].why),
		  "capabilities 0x8000000000000000 name capability numbers "
		  "past %u, the last this core knows",
		  (unsigned)CAP_LAST_CAP);

	struct ctp_snap *snap = open_snap(dir);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char path[PATH_MAX];
		const char *name = want[i].name;
		if (strcmp(name, "abi-missing") == 0)
			xsnprintf(path, sizeof(path), "not found");
		else if (strcmp(name, "abi-garbage") == 0)
			xsnprintf(path, sizeof(path), "%s", garbage);
		else
			xsnprintf(path, sizeof(path), "%s/%s.so", PLUGDIR,
				  name);
		assert_line(r.err, "ctprof-core: warning: plugin %s (%s): %s",
			    name, path, want[i].why);
		/* Exactly one line names it (the summary aside). */
		char tag[256];
		xsnprintf(tag, sizeof(tag), "plugin %s ", name);
		assert_int_equal(count_lines_with(r.err, tag), 1);

		const struct ctp_snap_plugin *p = plugin(snap, name);
		assert_int_equal(p->status, CTP_PST_FAILED);
		assert_non_null(p->reason);
		assert_string_equal(p->reason, want[i].why);
		if (strcmp(name, "abi-missing") == 0)
			assert_null(p->path);
		else
			assert_string_equal(p->path, path);
		assert_int_equal(p->calls, 0);
		assert_no_values(snap, name);
	}
	/* The capture went on for the plugin that loaded. */
	assert_int_equal(plugin(snap, "abi-good")->status, CTP_PST_LOADED);
	assert_int_equal(e2e_u64(snap, "abi-good.value",
				 row_of(snap, CTP_SCOPE_THREAD, 200)),
			 7);
	/* Refused before registering anything. */
	assert_null(ctp_snap_field_find(snap, "abi-dupfield.x"));
	assert_null(ctp_snap_field_find(snap, "abi-countermode.x"));
	assert_string_equal(field(snap, "abi-good.value")->plugin, "abi-good");

	ctp_snap_free(snap);
	run_free(&r);
}

/* The summary's list of failed plugins, in configuration order. */
static void test_summary_line(void **unused)
{
	(void)unused;
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "summary");
	struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
			       "  abi-badabi: {}\n"
			       "  abi-good: {}\n"
			       "  abi-initfail: {}\n");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines_with(r.err, "3 threads, 2 processes, 2 "
						 "cgroups in "),
			 1);
	assert_int_equal(count_lines_with(r.err, "; plugins failed: "
						 "abi-badabi, abi-initfail"),
			 1);
	run_free(&r);
}

/* A required plugin that fails: exit 3, and nothing in the output dir. */
static void test_required_failure(void **unused)
{
	(void)unused;
	static const char *const cases[][2] = {
		{"abi-initfail", "init failed"},
		{"abi-badabi", "plugin ABI version 99"},
		{"abi-missing", "abi-missing.so not found"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = cases[i][0];
		char dir[PATH_MAX], outdir[PATH_MAX], plugins[512];
		case_dir(dir, sizeof(dir), "required");
		xsnprintf(plugins, sizeof(plugins),
			  "  abi-good: {required: true}\n"
			  "  %s:\n    required: true\n",
			  name);
		struct run r =
			capture(dir, FIXTURE_PROC, 1, NULL, NULL, plugins);
		if (r.status != CTP_EXIT_REQUIRED)
			fail_msg("%s: exit %d, stderr:\n%s", name, r.status,
				 r.err);
		char prefix[256];
		xsnprintf(prefix, sizeof(prefix),
			  "ctprof-core: error: plugin %s (", name);
		assert_int_equal(count_lines_with(r.err, prefix), 1);
		assert_int_equal(count_lines_with(r.err, cases[i][1]), 1);
		assert_int_equal(count_lines_with(r.err, "[required]"), 1);
		assert_line(r.err,
			    "ctprof-core: error: required plugin %s failed: "
			    "no snapshot written",
			    name);
		xsnprintf(outdir, sizeof(outdir), "%s/out", dir);
		assert_int_equal(count_entries(outdir), 0);
		run_free(&r);
	}

	/* A required plugin that loads is no obstacle. */
	char dir[PATH_MAX], outdir[PATH_MAX];
	case_dir(dir, sizeof(dir), "required-ok");
	struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
			       "  abi-good: {required: true}\n"
			       "  abi-initfail: {required: false}\n");
	assert_int_equal(r.status, 0);
	xsnprintf(outdir, sizeof(outdir), "%s/out", dir);
	assert_int_equal(count_entries(outdir), 1);
	run_free(&r);
}

/* A callback that keeps failing is disabled once, with one message; the
 * plugin's other callbacks and the capture go on. */
static void test_failing_callback(void **unused)
{
	(void)unused;
	enum { NTHREADS = CTP_CB_MAX_CONSECUTIVE_ERRORS + 8 };
	char dir[PATH_MAX], proc[PATH_MAX];
	case_dir(dir, sizeof(dir), "failing");
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, 1, NTHREADS);
	struct run r = capture(dir, proc, 1, NULL, NULL,
			       "  abi-failing: {}\n"
			       "  abi-good: {}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	assert_line(r.err,
		    "ctprof-core: warning: plugin abi-failing: thread callback "
		    "failed %d times in a row (last: %s); disabled for the "
		    "rest of this snapshot",
		    CTP_CB_MAX_CONSECUTIVE_ERRORS, strerror(EIO));
	assert_int_equal(count_lines_with(r.err, "abi-failing"), 1);

	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-failing");
	assert_int_equal(p->status, CTP_PST_LOADED);
	assert_int_equal(p->errors, CTP_CB_MAX_CONSECUTIVE_ERRORS);
	/* thread calls until disabled + 1 process + 1 finish */
	assert_int_equal(p->calls, CTP_CB_MAX_CONSECUTIVE_ERRORS + 2);
	assert_int_equal(e2e_u64(snap, "abi-failing.calls", 0),
			 CTP_CB_MAX_CONSECUTIVE_ERRORS);
	assert_int_equal(e2e_u64(snap, "abi-failing.pid",
				 row_of(snap, CTP_SCOPE_PROCESS, 1000)),
			 1000);
	assert_int_equal(e2e_u64(snap, "abi-good.threads", 0), NTHREADS);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows,
			 NTHREADS);
	assert_int_equal(plugin(snap, "abi-good")->errors, 0);
	ctp_snap_free(snap);
	run_free(&r);
}

/* Fields registered at runtime from concurrent thread callbacks all reach
 * the snapshot, each with its value on its own row only. */
static void test_runtime_fields(void **unused)
{
	(void)unused;
	enum { NPROC = 4, NTHR = 10 };
	char dir[PATH_MAX], proc[PATH_MAX];
	case_dir(dir, sizeof(dir), "dynamic");
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, NPROC, NTHR);
	struct run r = capture(dir, proc, 2, NULL, NULL,
			       "  abi-good: {}\n"
			       "  abi-dynamic: {}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(ctp_snap_header(snap)->workers, 2);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-dynamic");
	assert_int_equal(p->status, CTP_PST_LOADED);
	assert_int_equal(p->errors, 0);

	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(t->rows, NPROC * NTHR);
	size_t n_dynamic = 0;
	const struct ctp_snap_field *f = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
		if (strncmp(f[i].name, "abi-dynamic.t", 13) == 0)
			n_dynamic++;
	assert_int_equal(n_dynamic, NPROC * NTHR);
	for (size_t row = 0; row < t->rows; row++) {
		char name[64];
		xsnprintf(name, sizeof(name), "abi-dynamic.t%" PRIu64,
			  t->tid[row]);
		const struct ctp_snap_field *fd = field(snap, name);
		assert_string_equal(fd->plugin, "abi-dynamic");
		assert_int_equal(fd->scope, CTP_SCOPE_THREAD);
		for (size_t other = 0; other < t->rows; other++) {
			struct ctp_value v = ctp_snap_get(snap, fd, other);
			if (other == row) {
				assert_int_equal(v.type, CTP_TYPE_U64);
				assert_int_equal(v.u64, t->tid[row]);
			} else {
				assert_int_equal(v.type, CTP_VALUE_ABSENT);
			}
		}
	}
	assert_int_equal(e2e_u64(snap, "abi-dynamic.registered", 0),
			 NPROC * NTHR);
	ctp_snap_free(snap);
	run_free(&r);
}

/* A plugin without CTP_PLUGIN_MT_SAFE is never entered twice at once,
 * even with two workers. */
static void test_not_mt_safe(void **unused)
{
	(void)unused;
	enum { NPROC = 4, NTHR = 10, N = NPROC * NTHR };
	char dir[PATH_MAX], proc[PATH_MAX];
	case_dir(dir, sizeof(dir), "notmt");
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, NPROC, NTHR);
	struct run r = capture(dir, proc, 2, NULL, NULL,
			       "  abi-notmt: {}\n"
			       "  abi-good: {}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(ctp_snap_header(snap)->workers, 2);
	assert_int_equal(plugin(snap, "abi-notmt")->errors, 0);
	assert_int_equal(e2e_u64(snap, "abi-notmt.overlaps", 0), 0);
	assert_int_equal(e2e_u64(snap, "abi-notmt.calls", 0), N);
	bool seen[N + 1] = {false};
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(t->rows, N);
	for (size_t row = 0; row < t->rows; row++) {
		uint64_t seq = e2e_u64(snap, "abi-notmt.seq", row);
		assert_in_range(seq, 1, N);
		assert_false(seen[seq]);
		seen[seq] = true;
	}
	assert_int_equal(e2e_u64(snap, "abi-good.threads", 0), N);
	ctp_snap_free(snap);
	run_free(&r);
}

/* Workers get descriptor tables of their own exactly when every loaded
 * plugin with a task callback is CTP_PLUGIN_FD_LOCAL, and only with more
 * than one worker (one walks on the main thread). */
static void private_fds_case(const char *what, unsigned workers,
			     const char *plugins, bool want)
{
	enum { NPROC = 3, NTHR = 4, N = NPROC * NTHR };
	char dir[PATH_MAX], proc[PATH_MAX];
	case_dir(dir, sizeof(dir), what);
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, NPROC, NTHR);
	struct run r =
		capture_flag(dir, proc, workers, NULL, NULL, plugins, "-v");
	if (r.status != 0)
		fail_msg("%s: exit %d, stderr:\n%s", what, r.status, r.err);
	/* -v names the plugin that keeps the table shared. */
	assert_int_equal(count_lines_with(r.err,
					  "plugin abi-notmt is not "
					  "CTP_PLUGIN_FD_LOCAL: the workers "
					  "share one descriptor table"),
			 strstr(plugins, "abi-notmt") ? 1 : 0);
	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(t->rows, N);
	for (size_t row = 0; row < t->rows; row++) {
		struct ctp_value v =
			e2e_value(snap, "abi-fdprobe.private_fds", row);
		if (v.type == CTP_VALUE_ABSENT) {
			ctp_snap_free(snap);
			run_free(&r);
			print_message("kcmp(2) unavailable (CONFIG_KCMP off?): "
				      "cannot tell descriptor tables apart\n");
			skip();
		}
		assert_int_equal(v.type, CTP_TYPE_BOOL);
		if (v.b != want)
			fail_msg(
				"%s: thread row %zu: private table %d, want %d",
				what, row, v.b, want);
	}
	ctp_snap_free(snap);
	run_free(&r);
}

static void test_private_fds(void **unused)
{
	(void)unused;
	private_fds_case("fdlocal-2w", 2, "  abi-fdprobe: {}\n", true);
	private_fds_case("fdlocal-1w", 1, "  abi-fdprobe: {}\n", false);
	/* abi-notmt has a thread callback and not the flag. */
	private_fds_case("fdlocal-mixed", 2,
			 "  abi-fdprobe: {}\n  abi-notmt: {}\n", false);
}

/* A process of 64 threads, split_threads `split`, `workers`, plugins;
 * returns how many distinct workers ran its thread callbacks, after
 * checking the rows are whole and in order, and that abi-fdprobe's summary
 * counter of its thread calls, added on every worker that ran them, holds
 * them all. */
static unsigned split_callers(const char *what, unsigned workers,
			      unsigned split, const char *plugins)
{
	enum { NTHR = 64 };
	char dir[PATH_MAX], proc[PATH_MAX], extra[64];
	case_dir(dir, sizeof(dir), what);
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	xsnprintf(extra, sizeof(extra), "split_threads: %u\n", split);
	gen_tree(proc, 1, NTHR);
	struct run r = capture(dir, proc, workers, NULL, extra, plugins);
	if (r.status != 0)
		fail_msg("%s: exit %d, stderr:\n%s", what, r.status, r.err);
	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *p =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	assert_int_equal(t->rows, NTHR);
	assert_int_equal(p->rows, 1);
	assert_int_equal(p->nthreads[0], NTHR);
	uint64_t callers[NTHR];
	unsigned n = 0;
	for (size_t row = 0; row < t->rows; row++) {
		/* (tgid, tid) order, every tid once: the tree's tids are
		 * 1000..1063. */
		assert_int_equal(t->tgid[row], 1000);
		assert_int_equal(t->tid[row], 1000 + row);
		uint64_t c = e2e_u64(snap, "abi-fdprobe.caller", row);
		unsigned k = 0;
		while (k < n && callers[k] != c)
			k++;
		if (k == n)
			callers[n++] = c;
	}
	const struct ctp_snap_plugin *fp = plugin(snap, "abi-fdprobe");
	assert_int_equal(fp->n_summary, 1);
	assert_string_equal(fp->summary_name[0], "threads");
	assert_int_equal(fp->summary[0], NTHR);
	ctp_snap_free(snap);
	run_free(&r);
	return n;
}

/* With every thread plugin CTP_PLUGIN_SPLITTABLE, a process of more than
 * split_threads threads is walked by several workers; not otherwise. */
static void test_split_process(void **unused)
{
	(void)unused;
	/* 64 threads of 1 ms in chunks of 8 over two workers: the second
	 * worker, with no process of its own, takes chunks. */
	assert_true(split_callers("split-2w", 2, 8, "  abi-fdprobe: {}\n") >=
		    2);
	assert_int_equal(
		split_callers("split-off", 2, 0, "  abi-fdprobe: {}\n"), 1);
	assert_int_equal(
		split_callers("split-above", 2, 64, "  abi-fdprobe: {}\n"), 1);
	assert_int_equal(split_callers("split-1w", 1, 8, "  abi-fdprobe: {}\n"),
			 1);
	/* abi-notmt has a thread callback and not the flag. */
	assert_int_equal(split_callers("split-mixed", 2, 8,
				       "  abi-fdprobe: {}\n"
				       "  abi-notmt: {}\n"),
			 1);
}

/* Setters refuse a wrong type, scope, handle or string, and the registry
 * refuses a bad rule or a taken name, with -EINVAL/-EEXIST. */
static void test_wrong_type(void **unused)
{
	(void)unused;
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "wrongtype");
	struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
			       "  abi-good: {}\n"
			       "  abi-wrongtype: {}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	assert_line(r.err,
		    "ctprof-core: abi-wrongtype: error: field "
		    "'abi-wrongtype.counter_max' rejected: aggregation rule "
		    "does not fit the kind (counter: sum; peak: max/min; "
		    "gauge: max/min/range; categorical: mode; ordinal: "
		    "range/min/max/mode; cpuset: union)");
	assert_line(r.err, "ctprof-core: abi-wrongtype: error: field "
			   "'abi-good.value' already registered by plugin "
			   "'abi-good'");

	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(plugin(snap, "abi-wrongtype")->errors, 0);
	assert_int_equal(e2e_i64(snap, "abi-wrongtype.thread_field_on_host", 0),
			 -EINVAL);
	assert_int_equal(e2e_i64(snap, "abi-wrongtype.bad_handle", 0), -EINVAL);
	assert_int_equal(e2e_i64(snap, "abi-wrongtype.embedded_nul", 0),
			 -EINVAL);
	assert_int_equal(e2e_i64(snap, "abi-wrongtype.register_counter_max", 0),
			 -EINVAL);
	assert_int_equal(e2e_i64(snap, "abi-wrongtype.register_taken", 0),
			 -EEXIST);
	assert_null(ctp_snap_field_find(snap, "abi-wrongtype.counter_max"));
	assert_string_equal(field(snap, "abi-good.value")->plugin, "abi-good");

	static const struct {
		uint64_t tid;
		const char *comm;
	} threads[] = {
		{100, "abi-main"}, {101, "abi-worker"}, {200, "abi-other"}};
	for (size_t i = 0; i < 3; i++) {
		size_t row = row_of(snap, CTP_SCOPE_THREAD, threads[i].tid);
		assert_int_equal(
			e2e_i64(snap, "abi-wrongtype.u64_on_string", row),
			-EINVAL);
		assert_int_equal(
			e2e_i64(snap, "abi-wrongtype.string_on_i64", row),
			-EINVAL);
		e2e_assert_str(snap, "abi-wrongtype.name", row,
			       threads[i].comm);
	}
	ctp_snap_free(snap);
	run_free(&r);
}

/* A plugin rejecting its options fails init with its own message. */
static void test_plugin_options(void **unused)
{
	(void)unused;
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "options");
	struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
			       "  abi-good:\n"
			       "    options: {greeting: hi, bogus: 1}\n");
	assert_int_equal(r.status, 0);
	assert_line(r.err, "ctprof-core: abi-good: error: unknown option "
			   "'bogus'");
	assert_line(r.err,
		    "ctprof-core: warning: plugin abi-good (%s): init failed: "
		    "%s",
		    PLUGDIR "/abi-good.so", strerror(EINVAL));
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(plugin(snap, "abi-good")->status, CTP_PST_FAILED);
	assert_no_values(snap, "abi-good");
	ctp_snap_free(snap);
	run_free(&r);
}

/* Nothing of a plugin whose init failed stays registered: none of its
 * fields (static or from init), none of the files only it declared (not
 * read, not tallied), no gate, summary counter or hint. */
static void assert_left_nothing(const struct ctp_snap *snap, const char *name)
{
	const struct ctp_snap_plugin *p = plugin(snap, name);
	assert_int_equal(p->status, CTP_PST_FAILED);
	assert_int_equal(p->n_summary, 0);
	assert_null(p->hint);
	const struct ctp_snap_field *f = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
		if (strcmp(f[i].plugin, name) == 0)
			fail_msg("failed plugin %s left field %s", name,
				 f[i].name);
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	for (size_t i = 0; i < rf->n_files; i++) {
		if (strstr(rf->file[i], "abi-"))
			fail_msg("failed plugin %s left file %s in the tally",
				 name, rf->file[i]);
		assert_null(rf->gate[i]);
	}
}

static void test_init_failure_rolled_back(void **unused)
{
	(void)unused;
	static const char *const cfgs[] = {
		"  abi-good:\n    options: {bogus: 1}\n",
		"  abi-good:\n    options: {fail: late}\n",
	};
	for (size_t c = 0; c < 2; c++) {
		char dir[PATH_MAX];
		case_dir(dir, sizeof(dir), c ? "rollback-late" : "rollback");
		struct run r =
			capture(dir, FIXTURE_PROC, 1, NULL, NULL, cfgs[c]);
		assert_int_equal(r.status, 0);
		struct ctp_snap *snap = open_snap(dir);
		assert_left_nothing(snap, "abi-good");
		ctp_snap_free(snap);
		run_free(&r);
	}
	/* A plugin loaded after the failed one gets the columns back and
	 * records as it would alone. */
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "rollback-next");
	struct run r = capture(dir, FIXTURE_PROC, 2, NULL, NULL,
			       "  abi-good:\n    options: {fail: late}\n"
			       "  abi-twin: {}\n");
	assert_int_equal(r.status, 0);
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(plugin(snap, "abi-twin")->status, CTP_PST_LOADED);
	assert_int_equal(plugin(snap, "abi-twin")->errors, 0);
	assert_int_equal(plugin(snap, "abi-twin")->n_summary, 1);
	const struct ctp_snap_field *f = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++)
		assert_string_equal(f[i].plugin, "abi-twin");
	assert_int_equal(e2e_u64(snap, "abi-twin.value",
				 row_of(snap, CTP_SCOPE_THREAD, 200)),
			 7);
	e2e_assert_str(snap, "abi-twin.comm",
		       row_of(snap, CTP_SCOPE_THREAD, 101), "abi-worker");
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	size_t gated = 0;
	for (size_t i = 0; i < rf->n_files; i++)
		gated += rf->gate[i] != NULL;
	assert_int_equal(gated, 1);
	ctp_snap_free(snap);
	run_free(&r);
}

/* A plugin file that is a symbolic link is refused, for any user and
 * whatever allow_insecure_plugins says. */
static void test_symlink_refused(void **unused)
{
	(void)unused;
	static const char *const extras[] = {NULL,
					     "allow_insecure_plugins: true\n"};
	for (size_t i = 0; i < 2; i++) {
		char dir[PATH_MAX], pdir[PATH_MAX], link[PATH_MAX];
		case_dir(dir, sizeof(dir), "symlink");
		xsnprintf(pdir, sizeof(pdir), "%s/linked", dir);
		mkdir_p(pdir);
		xsnprintf(link, sizeof(link), "%s/abi-dynamic.so", pdir);
		assert_int_equal(symlink(PLUGDIR "/abi-dynamic.so", link), 0);
		/* pdir is searched before PLUGDIR, so the link is found. */
		struct run r = capture(dir, FIXTURE_PROC, 1, pdir, extras[i],
				       "  abi-good: {}\n"
				       "  abi-dynamic: {}\n");
		assert_int_equal(r.status, 0);
		assert_line(r.err,
			    "ctprof-core: warning: plugin abi-dynamic (%s): "
			    "not a regular file (symbolic link)",
			    link);
		struct ctp_snap *snap = open_snap(dir);
		assert_int_equal(plugin(snap, "abi-dynamic")->status,
				 CTP_PST_FAILED);
		assert_int_equal(plugin(snap, "abi-good")->status,
				 CTP_PST_LOADED);
		ctp_snap_free(snap);
		run_free(&r);
	}
}

/* The tally of one file, failing the test when it is not listed; its
 * gate and its ENOENT part in *gate and *missing (missing may be NULL). */
static uint64_t tally_of(const struct ctp_snap *snap, const char *file,
			 const char **gate, uint64_t *missing)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	for (size_t i = 0; i < rf->n_files; i++)
		if (strcmp(rf->file[i], file) == 0) {
			*gate = rf->gate[i];
			if (missing)
				*missing = rf->missing[i];
			return rf->failures[i];
		}
	fail_msg("no read-failure tally for %s", file);
	return 0;
}

/*
 * Lazy files ("?abi-lazy") and file_gate. The fixture has no abi-lazy
 * anywhere, so every read of it would fail and be tallied:
 *  (a) not fetched: never opened (nothing tallied), the slot -ENODATA;
 *  (c) fetched: each failure tallied, file_get's -ENOENT seen by the
 *      plugin, the thread still recorded, and `show` blames the gate.
 * The gate itself: recorded in read_failures.gates; a repeat is fine; an
 * undeclared file, a bad option name, a conflicting gate and a call after
 * init are refused (host field abi-good.file_gate lists the returns).
 */
static void test_lazy_files(void **unused)
{
	(void)unused;
	char want_gates[128];
	xsnprintf(want_gates, sizeof(want_gates), "0 0 %d %d %d %d %d", -ENOENT,
		  -EINVAL, -EEXIST, -EINVAL, -EBUSY);
	for (int fetch = 0; fetch < 2; fetch++) {
		char dir[PATH_MAX];
		case_dir(dir, sizeof(dir), fetch ? "lazy-fetch" : "lazy-off");
		struct run r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
				       fetch ? "  abi-good: {options: {lazy: "
					       "fetch}}\n"
					     : "  abi-good: {}\n");
		if (r.status != 0)
			fail_msg("exit %d, stderr:\n%s", r.status, r.err);
		struct ctp_snap *snap = open_snap(dir);
		const struct ctp_snap_plugin *p = plugin(snap, "abi-good");
		/* The plugin checks the slot before fetching (-EPROTO). */
		assert_int_equal(p->errors, 0);
		assert_int_equal(p->vanished, 0);
		const char *gate = NULL;
		uint64_t missing = UINT64_MAX;
		/* The fixture has no abi-lazy: every failure is ENOENT. */
		assert_int_equal(tally_of(snap, "abi-lazy", &gate, &missing),
				 fetch ? 3 : 0);
		assert_int_equal(missing, fetch ? 3 : 0);
		assert_non_null(gate);
		assert_string_equal(gate, "CONFIG_ABI_LAZY");
		assert_int_equal(tally_of(snap, "abi-data", &gate, &missing),
				 0);
		assert_null(gate);
		assert_int_equal(missing, 0);
		assert_int_equal(
			tally_of(snap, "process/abi-pdata", &gate, &missing),
			0);
		assert_null(gate);
		assert_int_equal(missing, 0);
		e2e_assert_str(snap, "abi-good.file_gate", 0, want_gates);

		const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
		assert_int_equal(rf->tids_recorded, 3);
		assert_int_equal(rf->tids_vanished, 0);
		const struct ctp_snap_table *t =
			ctp_snap_table(snap, CTP_SCOPE_THREAD);
		for (size_t row = 0; row < t->rows; row++) {
			assert_int_equal(
				e2e_value(snap, "abi-good.lazy", row).type,
				CTP_VALUE_ABSENT);
			struct ctp_value e =
				e2e_value(snap, "abi-good.lazy_err", row);
			if (fetch)
				assert_int_equal(
					e2e_i64(snap, "abi-good.lazy_err", row),
					-ENOENT);
			else
				assert_int_equal(e.type, CTP_VALUE_ABSENT);
		}
		/* The eager file is read as before. */
		assert_int_equal(e2e_u64(snap, "abi-good.value",
					 row_of(snap, CTP_SCOPE_THREAD, 200)),
				 7);
		ctp_snap_free(snap);
		run_free(&r);

		char path[PATH_MAX];
		xsnprintf(path, sizeof(path), "%s/out/snap.ctprof.zst", dir);
		const char *args[] = {"show", "--summary", path, NULL};
		r = run_core(dir, args);
		assert_int_equal(r.status, 0);
		if (fetch) {
			assert_line(r.out,
				    "  per file: abi-data 0, abi-lazy 3 (3 "
				    "missing), process/abi-pdata 0; dominant: "
				    "abi-lazy");
			assert_line(r.out,
				    "  hint: 3 of 3 read failures are missing "
				    "files that exist only with "
				    "CONFIG_ABI_LAZY (abi-lazy); this kernel "
				    "was probably built without it");
		} else {
			assert_null(strstr(r.out, "hint:"));
		}
		run_free(&r);
	}
}

/*
 * (b) A lazy file is read at most once per task, however many plugins
 * fetch it, and they all get the same bytes: each task's abi-lazy is a
 * link to /proc/sys/kernel/random/uuid, which says something new on every
 * read, and abi-good and abi-twin must record the same line per thread
 * (and each of them, fetching twice, the same bytes twice).
 */
static void test_lazy_shared(void **unused)
{
	(void)unused;
	enum { NPROC = 3, NTHR = 4, N = NPROC * NTHR };
	static const char uuid[] = "/proc/sys/kernel/random/uuid";
	char u1[64] = "", u2[64] = "";
	for (int k = 0; k < 2; k++) {
		FILE *f = fopen(uuid, "r");
		if (!f)
			break;
		if (!fgets(k ? u2 : u1, sizeof(u1), f))
			(k ? u2 : u1)[0] = '\0';
		fclose(f);
	}
	bool fresh = u1[0] && u2[0] && strcmp(u1, u2) != 0;
	if (!fresh) {
		print_message("[ SKIP     ] %s does not change between reads\n",
			      uuid);
		skip();
	}

	char dir[PATH_MAX], proc[PATH_MAX], path[PATH_MAX];
	case_dir(dir, sizeof(dir), "lazy-shared");
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, NPROC, NTHR);
	for (unsigned p = 0; p < NPROC; p++)
		for (unsigned t = 0; t < NTHR; t++) {
			unsigned tgid = 1000 + 100 * p;
			xsnprintf(path, sizeof(path), "%s/%u/task/%u/abi-lazy",
				  proc, tgid, tgid + t);
			assert_int_equal(symlink(uuid, path), 0);
		}
	struct run r = capture(dir, proc, 2, NULL, NULL,
			       "  abi-good: {options: {lazy: fetch}}\n"
			       "  abi-twin: {options: {lazy: fetch}}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(plugin(snap, "abi-good")->errors, 0);
	assert_int_equal(plugin(snap, "abi-twin")->errors, 0);
	const char *gate = NULL;
	assert_int_equal(tally_of(snap, "abi-lazy", &gate, NULL), 0);
	assert_string_equal(gate, "CONFIG_ABI_LAZY");

	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(t->rows, N);
	struct ctp_bytes seen[N];
	for (size_t row = 0; row < t->rows; row++) {
		struct ctp_value a = e2e_value(snap, "abi-good.lazy", row);
		struct ctp_value b = e2e_value(snap, "abi-twin.lazy", row);
		assert_int_equal(a.type, CTP_TYPE_STRING);
		assert_int_equal(b.type, CTP_TYPE_STRING);
		assert_int_equal(a.str.len, 36); /* a uuid */
		if (b.str.len != a.str.len ||
		    memcmp(a.str.ptr, b.str.ptr, a.str.len) != 0)
			fail_msg("tid %" PRIu64 ": abi-good read %.*s, "
				 "abi-twin %.*s: read twice",
				 t->tid[row], (int)a.str.len, a.str.ptr,
				 (int)b.str.len, b.str.ptr);
		assert_int_equal(e2e_i64(snap, "abi-twin.lazy_err", row), 0);
		/* Per task: every thread has its own read. */
		for (size_t k = 0; k < row; k++)
			assert_false(
				seen[k].len == a.str.len &&
				memcmp(seen[k].ptr, a.str.ptr, a.str.len) == 0);
		seen[row] = a.str;
	}
	ctp_snap_free(snap);
	run_free(&r);
}

/*
 * A gated lazy file that exists but cannot be read (a directory: EISDIR,
 * as EACCES would be for another user's file) fails every read, and the
 * failures are tallied, but none is missing: the kernel has the option, so
 * `show` gives no kernel-config hint however many there are.
 */
static void test_lazy_gated_unreadable(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], proc[PATH_MAX], path[PATH_MAX];
	case_dir(dir, sizeof(dir), "lazy-isdir");
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, 2, 2);
	for (unsigned p = 0; p < 2; p++)
		for (unsigned t = 0; t < 2; t++) {
			unsigned tgid = 1000 + 100 * p;
			xsnprintf(path, sizeof(path), "%s/%u/task/%u/abi-lazy",
				  proc, tgid, tgid + t);
			assert_int_equal(mkdir(path, 0755), 0);
		}
	struct run r = capture(dir, proc, 1, NULL, NULL,
			       "  abi-good: {options: {lazy: fetch}}\n");
	if (r.status != 0)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	run_free(&r);
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(plugin(snap, "abi-good")->errors, 0);
	const char *gate = NULL;
	uint64_t missing = UINT64_MAX;
	assert_int_equal(tally_of(snap, "abi-lazy", &gate, &missing), 4);
	assert_int_equal(missing, 0);
	assert_string_equal(gate, "CONFIG_ABI_LAZY");
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(t->rows, 4);
	for (size_t row = 0; row < t->rows; row++)
		assert_int_equal(e2e_i64(snap, "abi-good.lazy_err", row),
				 -EISDIR);
	ctp_snap_free(snap);

	xsnprintf(path, sizeof(path), "%s/out/snap.ctprof.zst", dir);
	const char *args[] = {"show", "--summary", path, NULL};
	r = run_core(dir, args);
	assert_int_equal(r.status, 0);
	assert_line(r.out, "  per file: abi-data 0, abi-lazy 4, "
			   "process/abi-pdata 0; dominant: abi-lazy");
	if (strstr(r.out, "hint:"))
		fail_msg("a kernel-config hint for files that exist:\n%s",
			 r.out);
	run_free(&r);
}

/*
 * set_hint through the real core: the last call wins, only the first line
 * is kept, NULL clears; the snapshot keeps it per plugin and `show` prints
 * it on its own line under that plugin, indented past the name column.
 */
static void test_plugin_hint(void **unused)
{
	(void)unused;
	static const struct {
		const char *opt;  /* abi-good's `hint` option, YAML */
		const char *want; /* NULL: nil */
	} cases[] = {
		{"\"run as root\\nsecond line\"", "run as root"},
		{"\"-\"", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[PATH_MAX], plugins[256], path[PATH_MAX];
		case_dir(dir, sizeof(dir), "hint");
		xsnprintf(plugins, sizeof(plugins),
			  "  abi-good: {options: {hint: %s}}\n"
			  "  abi-twin: {}\n",
			  cases[i].opt);
		struct run r =
			capture(dir, FIXTURE_PROC, 1, NULL, NULL, plugins);
		if (r.status != 0)
			fail_msg("exit %d, stderr:\n%s", r.status, r.err);
		run_free(&r);
		struct ctp_snap *snap = open_snap(dir);
		const struct ctp_snap_plugin *good = plugin(snap, "abi-good");
		if (cases[i].want)
			assert_string_equal(good->hint, cases[i].want);
		else
			assert_null(good->hint);
		/* A plugin that never calls set_hint has none. */
		assert_null(plugin(snap, "abi-twin")->hint);
		ctp_snap_free(snap);

		xsnprintf(path, sizeof(path), "%s/out/snap.ctprof.zst", dir);
		const char *args[] = {"show", "--summary", path, NULL};
		r = run_core(dir, args);
		assert_int_equal(r.status, 0);
		if (cases[i].want) {
			/* "  abi-good  loaded ..." then 2 + 8 + 2 spaces. */
			const char *l = strstr(r.out, "\n  abi-good  loaded ");
			assert_non_null(l);
			l = strchr(l + 1, '\n');
			assert_non_null(l);
			char want[128];
			xsnprintf(want, sizeof(want),
				  "\n            hint: %s\n", cases[i].want);
			assert_true(strncmp(l, want, strlen(want)) == 0);
			assert_int_equal(count_lines_with(r.out, "hint:"), 1);
		} else {
			assert_null(strstr(r.out, "hint:"));
		}
		run_free(&r);
	}
}

/* ---- Root only ----------------------------------------------------------- */

/* Copy PLUGDIR/rel to dir/rel with `mode`; out gets the copy's path. */
static void copy_file(const char *rel, const char *dir, mode_t mode, char *out,
		      size_t outlen)
{
	char src[PATH_MAX];
	xsnprintf(src, sizeof(src), "%s/%s", PLUGDIR, rel);
	xsnprintf(out, outlen, "%s/%s", dir, rel);
	FILE *in = fopen(src, "rb"), *o = fopen(out, "wb");
	assert_non_null(in);
	assert_non_null(o);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, o), n);
	fclose(in);
	assert_int_equal(fclose(o), 0);
	assert_int_equal(chmod(out, mode), 0);
}

/* Copy a built test plugin into `dir` with `mode`. */
static void copy_plugin(const char *name, const char *dir, mode_t mode,
			char *out, size_t outlen)
{
	char rel[PATH_MAX];
	xsnprintf(rel, sizeof(rel), "%s.so", name);
	copy_file(rel, dir, mode, out, outlen);
}

/* Capture with abi-notmt taken from `pdir` (searched first) and abi-good
 * from PLUGDIR. */
static struct run capture_from(const char *dir, const char *pdir, bool insecure)
{
	return capture(dir, FIXTURE_PROC, 1, pdir,
		       insecure ? "allow_insecure_plugins: true\n" : NULL,
		       "  abi-good: {}\n"
		       "  abi-notmt: {}\n");
}

static void expect_refused(const char *dir, const struct run *r,
			   const char *path, const char *why)
{
	if (r->status != 0)
		fail_msg("exit %d, stderr:\n%s", r->status, r->err);
	assert_line(r->err, "ctprof-core: warning: plugin abi-notmt (%s): %s",
		    path, why);
	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-notmt");
	assert_int_equal(p->status, CTP_PST_FAILED);
	assert_string_equal(p->reason, why);
	assert_int_equal(plugin(snap, "abi-good")->status, CTP_PST_LOADED);
	ctp_snap_free(snap);
}

static void expect_loaded(const char *dir, const struct run *r,
			  const char *path)
{
	if (r->status != 0)
		fail_msg("exit %d, stderr:\n%s", r->status, r->err);
	assert_int_equal(count_lines_with(r->err, "abi-notmt"), 0);
	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-notmt");
	assert_int_equal(p->status, CTP_PST_LOADED);
	assert_string_equal(p->path, path);
	assert_int_equal(e2e_u64(snap, "abi-notmt.calls", 0), 3);
	ctp_snap_free(snap);
}

/* Group- or other-writable plugin files are refused as root, unless
 * allow_insecure_plugins is set. */
static void test_root_writable_file(void **unused)
{
	(void)unused;
	static const mode_t modes[] = {0664, 0646, 0775};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char dir[PATH_MAX], pdir[PATH_MAX], path[PATH_MAX], why[512];
		case_dir(dir, sizeof(dir), "writable");
		xsnprintf(pdir, sizeof(pdir), "%s/plugins", dir);
		mkdir_p(pdir);
		copy_plugin("abi-notmt", pdir, modes[i], path, sizeof(path));
		xsnprintf(why, sizeof(why),
			  "file is writable by group or others (mode %04o); "
			  "refusing as root (allow_insecure_plugins overrides)",
			  (unsigned)modes[i]);
		struct run r = capture_from(dir, pdir, false);
		expect_refused(dir, &r, path, why);
		run_free(&r);

		case_dir(dir, sizeof(dir), "writable-allowed");
		xsnprintf(pdir, sizeof(pdir), "%s/plugins", dir);
		mkdir_p(pdir);
		copy_plugin("abi-notmt", pdir, modes[i], path, sizeof(path));
		r = capture_from(dir, pdir, true);
		expect_loaded(dir, &r, path);
		run_free(&r);
	}
}

/* The loader's reason for an unsafe directory `dir` (`what`: "is writable
 * by others (mode 0777)"). */
static void dir_why(char *why, size_t len, const char *dir, const char *what)
{
	xsnprintf(why, len,
		  "directory %s %s; refusing as root "
		  "(allow_insecure_plugins overrides)",
		  dir, what);
}

/* A plugin directory writable by others is refused as root, unless it is
 * sticky (like /tmp) or allow_insecure_plugins is set. */
static void test_root_writable_dir(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], pdir[PATH_MAX], path[PATH_MAX], why[PATH_MAX + 128];
	case_dir(dir, sizeof(dir), "dir-writable");
	xsnprintf(pdir, sizeof(pdir), "%s/plugins", dir);
	mkdir_p(pdir);
	copy_plugin("abi-notmt", pdir, 0644, path, sizeof(path));
	assert_int_equal(chmod(pdir, 0777), 0);
	dir_why(why, sizeof(why), pdir, "is writable by others (mode 0777)");
	struct run r = capture_from(dir, pdir, false);
	expect_refused(dir, &r, path, why);
	run_free(&r);

	r = capture_from(dir, pdir, true);
	expect_loaded(dir, &r, path);
	run_free(&r);

	assert_int_equal(chmod(pdir, 01777), 0);
	r = capture_from(dir, pdir, false);
	expect_loaded(dir, &r, path);
	run_free(&r);
}

/* A case whose plugin directory is PARENT/plugins (0755), PARENT with
 * `mode` and owner `uid`; the real path of PARENT goes to `real`. */
static void parent_case(const char *what, mode_t mode, uid_t uid, char *dir,
			char *pdir, char *path, char *real)
{
	char parent[PATH_MAX];
	case_dir(dir, PATH_MAX, what);
	xsnprintf(parent, sizeof(parent), "%s/parent", dir);
	xsnprintf(pdir, PATH_MAX, "%s/plugins", parent);
	mkdir_p(pdir);
	copy_plugin("abi-notmt", pdir, 0644, path, PATH_MAX);
	assert_int_equal(chown(parent, uid, 0), 0);
	assert_int_equal(chmod(parent, mode), 0);
	assert_non_null(realpath(parent, real));
}

/* Every directory above the plugin's is checked too, like OpenSSH's
 * StrictModes: owned by root or us, not writable by group or others
 * unless sticky. */
static void test_root_parent_dirs(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], pdir[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
	char why[PATH_MAX + 128];
	static const struct {
		const char *what;
		mode_t mode;
		uid_t uid;
		const char *why; /* NULL: loads */
	} cases[] = {
		{"parent-0777", 0777, 0, "is writable by others (mode 0777)"},
		{"parent-0757", 0757, 0, "is writable by others (mode 0757)"},
		{"parent-0775", 0775, 0, "is writable by group (mode 0775)"},
		{"parent-2775", 02775, 0, "is writable by group (mode 2775)"},
		{"parent-1777", 01777, 0, NULL},
		{"parent-0755", 0755, 0, NULL},
		{"parent-other", 0755, 65534, "is owned by uid 65534"},
		{"parent-other-1777", 01777, 65534, "is owned by uid 65534"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parent_case(cases[i].what, cases[i].mode, cases[i].uid, dir,
			    pdir, path, real);
		struct run r = capture_from(dir, pdir, false);
		if (!cases[i].why) {
			expect_loaded(dir, &r, path);
			run_free(&r);
			continue;
		}
		dir_why(why, sizeof(why), real, cases[i].why);
		expect_refused(dir, &r, path, why);
		run_free(&r);
		r = capture_from(dir, pdir, true);
		expect_loaded(dir, &r, path);
		run_free(&r);
	}

	/* Required, the refusal ends the capture: exit 3, no snapshot. */
	parent_case("parent-required", 0777, 0, dir, pdir, path, real);
	struct run r = capture(dir, FIXTURE_PROC, 1, pdir, NULL,
			       "  abi-notmt: {required: true}\n");
	if (r.status != CTP_EXIT_REQUIRED)
		fail_msg("exit %d, stderr:\n%s", r.status, r.err);
	dir_why(why, sizeof(why), real, "is writable by others (mode 0777)");
	assert_line(r.err,
		    "ctprof-core: error: plugin abi-notmt (%s): %s [required]",
		    path, why);
	run_free(&r);

	/* A link on the way is resolved and the real chain checked: the
	 * plugin directory named through LINK -> PARENT (0777). */
	char link[PATH_MAX], lpdir[PATH_MAX], lpath[PATH_MAX];
	parent_case("parent-link", 0777, 0, dir, pdir, path, real);
	xsnprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(real, link), 0);
	xsnprintf(lpdir, sizeof(lpdir), "%s/plugins", link);
	xsnprintf(lpath, sizeof(lpath), "%s/abi-notmt.so", lpdir);
	dir_why(why, sizeof(why), real, "is writable by others (mode 0777)");
	r = capture_from(dir, lpdir, false);
	expect_refused(dir, &r, lpath, why);
	run_free(&r);
	assert_int_equal(chmod(real, 0755), 0);
	r = capture_from(dir, lpdir, false);
	expect_loaded(dir, &r, lpath);
	run_free(&r);
}

/* A plugin directory made right in /tmp (root's, sticky, 1777) loads. */
static void test_root_tmp(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], pdir[] = "/tmp/ctp-abi-plugins-XXXXXX";
	char path[PATH_MAX];
	struct stat st;

	assert_int_equal(stat("/tmp", &st), 0);
	if (st.st_uid != 0 || (st.st_mode & 07777) != 01777)
		skip(); /* not the usual /tmp: nothing to show */
	assert_non_null(mkdtemp(pdir));
	case_dir(dir, sizeof(dir), "tmp");
	copy_plugin("abi-notmt", pdir, 0644, path, sizeof(path));
	struct run r = capture_from(dir, pdir, false);
	unlink(path);
	rmdir(pdir);
	expect_loaded(dir, &r, path);
	run_free(&r);
}

/* A plugin file owned by another user is refused as root. */
static void test_root_foreign_owner(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], pdir[PATH_MAX], path[PATH_MAX];
	case_dir(dir, sizeof(dir), "owner");
	xsnprintf(pdir, sizeof(pdir), "%s/plugins", dir);
	mkdir_p(pdir);
	copy_plugin("abi-notmt", pdir, 0644, path, sizeof(path));
	assert_int_equal(chown(path, 65534, 65534), 0);
	struct run r = capture_from(dir, pdir, false);
	expect_refused(dir, &r, path,
		       "file is owned by uid 65534; refusing as root");
	run_free(&r);

	r = capture_from(dir, pdir, true);
	expect_loaded(dir, &r, path);
	run_free(&r);
}

/* abi-dep from a copy of its directory (plugin 0644, library `libmode`,
 * library directory `dirmode`); the run's snapshot status of abi-dep. */
static struct run dep_capture(const char *what, mode_t libmode, mode_t dirmode,
			      bool insecure, char *dir, char *lib)
{
	char pdir[PATH_MAX], ldir[PATH_MAX], path[PATH_MAX];
	case_dir(dir, PATH_MAX, what);
	xsnprintf(pdir, sizeof(pdir), "%s/plugins", dir);
	xsnprintf(ldir, sizeof(ldir), "%s/abi-dep", pdir);
	mkdir_p(ldir);
	copy_file("abi-dep.so", pdir, 0644, path, sizeof(path));
	copy_file("abi-dep/libctp-abi-dep.so", pdir, libmode, lib, PATH_MAX);
	assert_int_equal(chmod(ldir, dirmode), 0);
	return capture(dir, FIXTURE_PROC, 1, pdir,
		       insecure ? "allow_insecure_plugins: true\n" : NULL,
		       "  abi-dep: {}\n");
}

static void expect_dep(const char *dir, const struct run *r, const char *why)
{
	if (r->status != 0)
		fail_msg("exit %d, stderr:\n%s", r->status, r->err);
	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-dep");
	if (why) {
		assert_int_equal(p->status, CTP_PST_FAILED);
		assert_string_equal(p->reason, why);
		assert_non_null(strstr(r->err, why));
	} else {
		if (p->status != CTP_PST_LOADED)
			fail_msg("abi-dep not loaded: %s", p->reason);
		assert_int_equal(e2e_u64(snap, "abi-dep.answer", 0), 42);
	}
	ctp_snap_free(snap);
}

/* A library the plugin loads from its own directory (RUNPATH $ORIGIN/...)
 * is checked like the plugin: a writable one, or one in a directory others
 * can write, is refused as root. */
static void test_root_dependency(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], lib[PATH_MAX], why[2 * PATH_MAX];

	struct run r = dep_capture("dep-ok", 0755, 0755, false, dir, lib);
	expect_dep(dir, &r, NULL);
	run_free(&r);

	r = dep_capture("dep-writable", 0775, 0755, false, dir, lib);
	xsnprintf(why, sizeof(why),
		  "dependency %s: file is writable by group or others (mode "
		  "0775); refusing as root (allow_insecure_plugins overrides)",
		  lib);
	expect_dep(dir, &r, why);
	run_free(&r);

	r = dep_capture("dep-dir", 0755, 0777, false, dir, lib);
	char ldir[PATH_MAX];
	xsnprintf(ldir, sizeof(ldir), "%s", lib);
	*strrchr(ldir, '/') = '\0';
	xsnprintf(why, sizeof(why),
		  "dependency %s: directory %s is writable by others (mode "
		  "0777); refusing as root (allow_insecure_plugins overrides)",
		  lib, ldir);
	expect_dep(dir, &r, why);
	run_free(&r);

	r = dep_capture("dep-insecure", 0775, 0777, true, dir, lib);
	expect_dep(dir, &r, NULL);
	run_free(&r);

	/* The library is a link (as libfoo.so.1 -> libfoo.so.1.2 are): its
	 * target sits in a safe directory, but the link's own directory is
	 * writable by others, so the link could be pointed elsewhere. */
	r = dep_capture("dep-link", 0755, 0755, false, dir, lib);
	run_free(&r);
	char target[PATH_MAX];
	xsnprintf(target, sizeof(target), "%s/libctp-abi-dep.so.real", dir);
	assert_int_equal(rename(lib, target), 0);
	assert_int_equal(symlink(target, lib), 0);
	xsnprintf(ldir, sizeof(ldir), "%s", lib);
	*strrchr(ldir, '/') = '\0';
	assert_int_equal(chmod(ldir, 0777), 0);
	char pdir[PATH_MAX];
	xsnprintf(pdir, sizeof(pdir), "%s/plugins", dir);
	r = capture(dir, FIXTURE_PROC, 1, pdir, NULL, "  abi-dep: {}\n");
	xsnprintf(why, sizeof(why),
		  "dependency %s: directory %s is writable by others (mode "
		  "0777); refusing as root (allow_insecure_plugins overrides)",
		  lib, ldir);
	expect_dep(dir, &r, why);
	run_free(&r);
}

/* `plugins --config` shows the loader's reason for a plugin it refuses. */
/* Run `VERB --config FILE` or `VERB FILE` on a config listing `plugins`
 * (the body of the plugins: map) with plugin_dirs: [PLUGDIR]. */
static struct run config_verb(const char *what, const char *verb,
			      const char *plugins, char *cfg, size_t cfglen)
{
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), what);
	xsnprintf(cfg, cfglen, "%s/collectors.yaml", dir);
	write_file(cfg, "plugin_dirs: [\"%s\"]\nplugins:\n%s", PLUGDIR,
		   plugins);
	const char *args[] = {verb, strcmp(verb, "plugins") ? cfg : "--config",
			      strcmp(verb, "plugins") ? NULL : cfg, NULL};
	return run_core(dir, args);
}

/* A descriptor built before the commands table (its size stops short of
 * it) declares none, whatever lies past it. */
static void test_commands_old_size(void **unused)
{
	(void)unused;
	struct ctp_plugin d = {
		.abi = CTP_ABI_MAJOR,
		.size = offsetof(struct ctp_plugin, commands),
		.commands = (const struct ctp_command *)&d,
		.n_commands = 0xffffffffu,
	};
	assert_int_equal(ctp_plugin_n_commands(&d), 0);
	assert_null(ctp_plugin_command(&d, 0));
	d.size = sizeof(d);
	d.n_commands = 3;
	assert_int_equal(ctp_plugin_n_commands(&d), 3);
}

/* Capabilities: read only with CTP_PLUGIN_CAPS and a size that holds
 * them; else the default set (a plugin built before they existed). */
static void test_caps_declared(void **unused)
{
	(void)unused;
	bool declared = true;
	struct ctp_plugin d = {
		.abi = CTP_ABI_MAJOR,
		.size = offsetof(struct ctp_plugin, capabilities),
		.flags = CTP_PLUGIN_CAPS,
		.capabilities = 0,
	};
	assert_int_equal(ctp_plugin_caps(&d, &declared), CTP_CAPS_UNDECLARED);
	assert_false(declared);
	d.size = sizeof(d);
	assert_int_equal(ctp_plugin_caps(&d, &declared), 0);
	assert_true(declared);
	d.flags = 0;
	d.capabilities = CTP_CAP_BIT(CAP_SYS_PTRACE);
	assert_int_equal(ctp_plugin_caps(&d, &declared), CTP_CAPS_UNDECLARED);
	assert_false(declared);
	assert_int_equal(CTP_CAPS_UNDECLARED,
			 CTP_CAP_BIT(CAP_DAC_READ_SEARCH) |
				 CTP_CAP_BIT(CAP_NET_ADMIN) |
				 CTP_CAP_BIT(CAP_SYS_PTRACE));
}

static void test_plugins_command(void **unused)
{
	(void)unused;
	char cfg[PATH_MAX];
	struct run r = config_verb("plugins-cmd", "plugins",
				   "  abi-good: {}\n  abi-twin: {}\n", cfg,
				   sizeof(cfg));
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines_with(r.out, "abi-good.value"), 1);
	assert_int_equal(count_lines_with(r.out, "abi-good.path_len"), 1);
	assert_int_equal(count_lines_with(r.out, "abi-twin.value"), 1);
	/* abi-good declares no capabilities: the default set. */
	assert_int_equal(count_lines_with(r.out,
					  "  capabilities: CAP_DAC_READ_SEARCH,"
					  "CAP_NET_ADMIN,CAP_SYS_PTRACE "
					  "(undeclared: the default set is "
					  "kept)"),
			 2);
	run_free(&r);

	/* Without --config: every plugin of the build tree, enums named as
	 * the snapshot format names them (one table: "centipct"). */
	const char *all[] = {"plugins", NULL};
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "plugins-all");
	r = run_core(dir, all);
	assert_int_equal(r.status, 0);
	assert_true(count_lines_with(r.out, " centipct ") > 0);
	assert_int_equal(count_lines_with(r.out, "centi-pct"), 0);
	/* Declared summary counters are listed before any capture. */
	assert_int_equal(count_lines_with(r.out,
					  "  summary counters: missing, "
					  "unsupported, read_errors, "
					  "parse_errors, cgroups_unreachable"),
			 1);
	/* Each shipped plugin's declaration (docs/PLUGINS.md). */
	assert_int_equal(count_lines_with(r.out, "  capabilities: "
						 "CAP_DAC_READ_SEARCH,"
						 "CAP_SYS_PTRACE\n"),
			 1);
	/* taskstats: with CAP_BPF and CAP_PERFMON where the build has its
	 * exit program, as bpf-task (both or neither). */
	assert_int_equal(
		count_lines_with(r.out, "  capabilities: CAP_NET_ADMIN\n") +
			count_lines_with(r.out, "  capabilities: CAP_NET_ADMIN,"
						"CAP_PERFMON,CAP_BPF\n"),
		1);
	assert_int_equal(
		count_lines_with(r.out, "  capabilities: CAP_SYS_PTRACE\n"), 3);
	run_free(&r);

	/* A plugin that does not load is an error, not a listing. */
	r = config_verb("plugins-cmd-bad", "plugins",
			"  abi-good: {}\n  abi-badabi: {}\n", cfg, sizeof(cfg));
	assert_int_equal(r.status, CTP_EXIT_USAGE);
	assert_string_equal(r.out, "");
	assert_line(
		r.err,
		"%s:4:3: plugin 'abi-badabi' (%s/abi-badabi.so): plugin ABI "
		"version 99, this core speaks 1",
		cfg, PLUGDIR);
	run_free(&r);
}

/* check-config and plugins --config resolve every plugin the config lists,
 * enabled here or not: a typo or a misnamed file is a FILE:LINE:COL error
 * with a suggestion, exit 2 and nothing on stdout. */
static void test_config_resolves_plugins(void **unused)
{
	(void)unused;
	static const char *const verbs[] = {"check-config", "plugins"};
	for (size_t v = 0; v < 2; v++) {
		char cfg[PATH_MAX];
		struct run r =
			config_verb("resolve", verbs[v],
				    "  abi-good: {}\n"
				    "  abi-goodd: {}\n"
				    "  abi-misnamed:\n    enabled: false\n"
				    "  zzzz-unlike-anything: {}\n",
				    cfg, sizeof(cfg));
		assert_int_equal(r.status, CTP_EXIT_USAGE);
		assert_string_equal(r.out, "");
		assert_line(r.err,
			    "%s:4:3: plugin 'abi-goodd': abi-goodd.so not "
			    "found in plugin directories: %s; did you mean "
			    "'abi-good'?",
			    cfg, PLUGDIR);
		assert_int_equal(
			count_lines_with(
				r.err,
				":5:3: plugin 'abi-misnamed' (" PLUGDIR
				"/abi-misnamed.so): descriptor names itself "
				"'someone-else', expected 'abi-misnamed': did "
				"you mean plugin 'someone-else' (in a file "
				"someone-else.so)?"),
			1);
		assert_line(r.err,
			    "%s:7:3: plugin 'zzzz-unlike-anything': "
			    "zzzz-unlike-anything.so not found in plugin "
			    "directories: %s",
			    cfg, PLUGDIR);
		assert_int_equal(count_lines_with(r.err, "did you mean"), 2);
		run_free(&r);
	}
	/* All found: the effective config, exit 0. */
	char cfg[PATH_MAX], dir[PATH_MAX];
	struct run r = config_verb("resolve-ok", "check-config",
				   "  abi-good: {}\n", cfg, sizeof(cfg));
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines_with(r.out, "abi-good"), 1);
	assert_string_equal(r.err, "");
	/* `--config FILE`, as every other verb takes it, is the same. */
	case_dir(dir, sizeof(dir), "check-config-option");
	const char *opt[] = {"check-config", "--config", cfg, NULL};
	struct run o = run_core(dir, opt);
	assert_int_equal(o.status, 0);
	assert_string_equal(o.out, r.out);
	run_free(&o);
	/* Not both. */
	const char *both[] = {"check-config", "--config", cfg, cfg, NULL};
	o = run_core(dir, both);
	assert_int_equal(o.status, CTP_EXIT_USAGE);
	run_free(&o);
	run_free(&r);
}

/* An option's value check of its own (ctp_option_desc.check; the core
 * knows no plugin by it): check-config reports a value it refuses at the
 * value's position, for a plugin enabled here, not for one disabled nor
 * for a host rule of other hosts; a capture fails the plugin before init
 * (a required one, the capture); a table at the first ABI 1 element size
 * carries no check and takes any value. */
static void test_option_value_checks(void **unused)
{
	(void)unused;
	char cfg[PATH_MAX], dir[PATH_MAX];
	struct run r = config_verb("optcheck-bad", "check-config",
				   "  abi-optcheck:\n"
				   "    options: {file: nope}\n",
				   cfg, sizeof(cfg));
	assert_int_equal(r.status, CTP_EXIT_USAGE);
	assert_string_equal(r.out, "");
	assert_line(r.err,
		    "%s:4:21: plugin 'abi-optcheck': option 'file': "
		    "nope:1:2: not ok",
		    cfg);
	run_free(&r);
	static const char *const fine[] = {
		"  abi-optcheck: {options: {file: okay}}\n",
		"  abi-optcheck:\n    enabled: false\n"
		"    options: {file: nope}\n",
		"  abi-optcheck: {}\nhosts:\n"
		"  - match: {hostname: \"nope-*\"}\n"
		"    plugins:\n      abi-optcheck: {options: {file: nope}}\n",
		"  abi-optv1: {options: {file: nope}}\n",
	};
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		r = config_verb("optcheck-fine", "check-config", fine[i], cfg,
				sizeof(cfg));
		if (r.status != 0)
			fail_msg("case %zu: exit %d:\n%s", i, r.status, r.err);
		run_free(&r);
	}

	/* The capture: the plugin fails before init, with the position. */
	case_dir(dir, sizeof(dir), "optcheck-capture");
	r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
		    "  abi-optcheck: {options: {file: nope}}\n"
		    "  abi-optv1: {options: {file: nope}}\n");
	assert_int_equal(r.status, 0);
	struct ctp_snap *snap = open_snap(dir);
	const struct ctp_snap_plugin *p = plugin(snap, "abi-optcheck");
	assert_int_equal(p->status, CTP_PST_FAILED);
	assert_non_null(strstr(p->reason, "/collectors.yaml:9:"));
	assert_non_null(strstr(p->reason, "option 'file': nope:1:2: not ok"));
	assert_null(ctp_snap_field_find(snap, "abi-optcheck.inits"));
	assert_int_equal(plugin(snap, "abi-optv1")->status, CTP_PST_LOADED);
	ctp_snap_free(snap);
	run_free(&r);
	case_dir(dir, sizeof(dir), "optcheck-required");
	r = capture(dir, FIXTURE_PROC, 1, NULL, NULL,
		    "  abi-optcheck: {required: true, options: {file: no}}\n");
	assert_int_not_equal(r.status, 0);
	assert_non_null(strstr(r.err, "option 'file': no:1:2: not ok"));
	run_free(&r);
}

/* Options a plugin declares (CTP_PLUGIN_OPTIONS: io declares none,
 * procfs-stat one) are checked by the core: check-config reports each
 * mistake at its position, in declarations and host rules alike; a
 * capture fails the plugin before init; `plugins` lists them. */
static void test_declared_options(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], cfg[PATH_MAX];
	case_dir(dir, sizeof(dir), "options-declared");
	xsnprintf(cfg, sizeof(cfg), "%s/collectors.yaml", dir);
	write_file(cfg,
		   "plugin_dirs: [\"%s\"]\n"
		   "plugins:\n"
		   "  io:\n"
		   "    options: {fields: rchar}\n"
		   "  procfs-stat:\n"
		   "    options: {afinity: status}\n"
		   "hosts:\n"
		   "  - match: {hostname: \"nope-*\"}\n"
		   "    plugins:\n"
		   "      procfs-stat: {options: {affinity: sometimes}}\n",
		   CTP_TEST_PLUGIN_DIR);
	const char *check[] = {"check-config", cfg, NULL};
	struct run r = run_core(dir, check);
	assert_int_equal(r.status, CTP_EXIT_USAGE);
	assert_string_equal(r.out, "");
	assert_int_equal(count_lines_with(r.err, ":4:"), 1);
	assert_int_equal(count_lines_with(r.err,
					  "plugin 'io': unknown option "
					  "'fields' (io has no options)"),
			 1);
	assert_int_equal(count_lines_with(r.err,
					  "plugin 'procfs-stat': unknown "
					  "option 'afinity'; did you mean "
					  "'affinity'?"),
			 1);
	assert_int_equal(count_lines_with(r.err, ":10:"), 1);
	assert_int_equal(count_lines_with(r.err,
					  "option 'affinity': 'sometimes' is "
					  "not one of: auto, syscall, status"),
			 1);
	run_free(&r);

	/* The capture: io fails before init, with the position. */
	case_dir(dir, sizeof(dir), "options-capture");
	r = capture(dir, FIXTURE_PROC, 1, CTP_TEST_PLUGIN_DIR, NULL,
		    "  io:\n    options: {fields: rchar}\n"
		    "  procfs-stat: {options: {affinity: status}}\n");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines_with(r.err, "io: error"), 0);
	assert_int_equal(count_lines_with(r.err,
					  "unknown option 'fields' (io has "
					  "no options)"),
			 1);
	struct ctp_snap *snap = open_snap(dir);
	assert_int_equal(plugin(snap, "io")->status, CTP_PST_FAILED);
	/* FILE:LINE:COL of the option, then what is wrong. */
	assert_non_null(
		strstr(plugin(snap, "io")->reason, "/collectors.yaml:11:"));
	assert_non_null(strstr(plugin(snap, "io")->reason,
			       "unknown option 'fields' (io has no options)"));
	assert_int_equal(plugin(snap, "procfs-stat")->status, CTP_PST_LOADED);
	ctp_snap_free(snap);
	run_free(&r);

	/* plugins lists what is declared. */
	case_dir(dir, sizeof(dir), "options-listed");
	xsnprintf(cfg, sizeof(cfg), "%s/collectors.yaml", dir);
	write_file(cfg,
		   "plugin_dirs: [\"%s\"]\nplugins:\n  io: {}\n"
		   "  procfs-stat: {}\n",
		   CTP_TEST_PLUGIN_DIR);
	const char *list[] = {"plugins", "--config", cfg, NULL};
	r = run_core(dir, list);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines_with(r.out, "  options: none"), 1);
	assert_int_equal(
		count_lines_with(r.out, "(one of: auto, syscall, status)"), 1);
	run_free(&r);
}

/* -o naming a directory writes a new file in it, named by the configured
 * pattern's last component (as cp(1) copies into a directory). */
static void test_output_dir(void **unused)
{
	(void)unused;
	char dir[PATH_MAX], cfg[PATH_MAX], outdir[PATH_MAX];
	case_dir(dir, sizeof(dir), "output-dir");
	xsnprintf(cfg, sizeof(cfg), "%s/collectors.yaml", dir);
	xsnprintf(outdir, sizeof(outdir), "%s/snaps", dir);
	mkdir_p(outdir);
	write_file(cfg,
		   "plugin_dirs: [\"%s\"]\n"
		   "output: \"/elsewhere/host-%%Y.ctprof.zst\"\n"
		   "roots: {proc: \"%s\", sys: \"%s\"}\n"
		   "plugins:\n  abi-good: {}\n",
		   PLUGDIR, FIXTURE_PROC, FIXTURE_PROC);
	const char *args[] = {"--config", cfg, "-o", outdir, NULL};
	struct run r = run_core(dir, args);
	if (r.status != 0)
		fail_msg("exit %d:\n%s", r.status, r.err);
	assert_int_equal(count_entries(outdir), 1);
	DIR *d = opendir(outdir);
	assert_non_null(d);
	struct dirent *e;
	bool found = false;
	while ((e = readdir(d)))
		found |= strncmp(e->d_name, "host-2", 6) == 0 &&
			 strstr(e->d_name, ".ctprof.zst") != NULL;
	closedir(d);
	assert_true(found);
	run_free(&r);
}

/* A mistyped command says what it is closest to, and exits 2. */
static void test_wrong_verb(void **unused)
{
	(void)unused;
	char dir[PATH_MAX];
	case_dir(dir, sizeof(dir), "verb");
	const char *args[] = {"chek-config", "x.yaml", NULL};
	struct run r = run_core(dir, args);
	assert_int_equal(r.status, CTP_EXIT_USAGE);
	assert_line(r.err, "ctprof-core: unknown command 'chek-config'; did "
			   "you mean 'check-config'?");
	assert_string_equal(r.out, "");
	run_free(&r);
}

/* --strict: a plugin that fails to load, or whose callback is disabled
 * after repeated errors, fails the capture (exit 3, no file); without it
 * both captures succeed. */
static void test_strict(void **unused)
{
	(void)unused;
	static const char *const cases[][2] = {
		{"  abi-good: {}\n  abi-initfail: {}\n", "abi-initfail failed"},
		{"  abi-good: {}\n  smap: {}\n", "smap failed"},
		{"  abi-failing: {}\n", "abi-failing had a callback disabled"},
	};
	char proc[PATH_MAX], dir[PATH_MAX], outdir[PATH_MAX];
	case_dir(dir, sizeof(dir), "strict-tree");
	xsnprintf(proc, sizeof(proc), "%s/proc", dir);
	gen_tree(proc, 1, CTP_CB_MAX_CONSECUTIVE_ERRORS + 8);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int strict = 0; strict < 2; strict++) {
			case_dir(dir, sizeof(dir), "strict");
			struct run r = capture_flag(dir, proc, 1, NULL, NULL,
						    cases[i][0],
						    strict ? "--strict" : NULL);
			xsnprintf(outdir, sizeof(outdir), "%s/out", dir);
			if (r.status != (strict ? CTP_EXIT_REQUIRED : 0))
				fail_msg("case %zu strict %d: exit %d:\n%s", i,
					 strict, r.status, r.err);
			assert_int_equal(count_entries(outdir), !strict);
			assert_int_equal(count_lines_with(r.err, cases[i][1]),
					 strict);
			run_free(&r);
		}
	}
}

/* ---- Setup --------------------------------------------------------------- */

static int group_setup(void **unused)
{
	(void)unused;
	const char *base = getenv("TMPDIR");
	xsnprintf(tmp_root, sizeof(tmp_root), "%s/ctp-abi-XXXXXX",
		  base && *base ? base : "/tmp");
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

static int group_teardown(void **unused)
{
	(void)unused;
	if (!getenv("CTP_TEST_KEEP"))
		nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "kept %s\n", tmp_root);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_plugin),
		cmocka_unit_test(test_dump_absent_vs_zero),
		cmocka_unit_test(test_exited_table),
		cmocka_unit_test(test_load_failures),
		cmocka_unit_test(test_summary_line),
		cmocka_unit_test(test_required_failure),
		cmocka_unit_test(test_failing_callback),
		cmocka_unit_test(test_runtime_fields),
		cmocka_unit_test(test_not_mt_safe),
		cmocka_unit_test(test_private_fds),
		cmocka_unit_test(test_split_process),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_plugin_options),
		cmocka_unit_test(test_init_failure_rolled_back),
		cmocka_unit_test(test_symlink_refused),
		cmocka_unit_test(test_commands_old_size),
		cmocka_unit_test(test_caps_declared),
		cmocka_unit_test(test_plugins_command),
		cmocka_unit_test(test_config_resolves_plugins),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_wrong_verb),
		cmocka_unit_test(test_output_dir),
		cmocka_unit_test(test_declared_options),
		cmocka_unit_test(test_option_value_checks),
		cmocka_unit_test(test_lazy_files),
		cmocka_unit_test(test_lazy_shared),
		cmocka_unit_test(test_lazy_gated_unreadable),
		cmocka_unit_test(test_plugin_hint),
	};
	static const struct CMUnitTest root_tests[] = {
		cmocka_unit_test(test_root_writable_file),
		cmocka_unit_test(test_root_writable_dir),
		cmocka_unit_test(test_root_parent_dirs),
		cmocka_unit_test(test_root_tmp),
		cmocka_unit_test(test_root_foreign_owner),
		cmocka_unit_test(test_root_dependency),
	};
	if (argc > 1 && strcmp(argv[1], "--root") == 0) {
		if (geteuid() != 0) {
			printf("not root: the permission checks only apply to "
			       "root\n");
			return 77;
		}
		return cmocka_run_group_tests_name("abi-root", root_tests,
						   group_setup, group_teardown);
	}
	return cmocka_run_group_tests_name("abi", tests, group_setup,
					   group_teardown);
}
