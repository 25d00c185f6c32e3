/* SPDX-License-Identifier: MIT */
/*
 * End to end on the fixture tree tests/fixtures/proc-mem: the built
 * ctprof-core with the io and smaps plugins, the snapshot decoded with
 * core/snapshot/reader.c and every io field of every thread, and every
 * process io and smaps field of every process, checked (absent ones
 * included) against the expectations below, which are themselves checked
 * against the fixture text first. Also the read-failure tally with its missing
 * (ENOENT) part and kernel-config gate, `show`'s hint (only missing gated files
 * count: an io that is a directory, EISDIR like an unreadable one's EACCES,
 * does not), the smaps skip options (size cap, time budget) and worker counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define FIX_PROC       CTP_TEST_FIXTURES "/proc-mem"
#define FIX_SYS	       CTP_TEST_FIXTURES "/sys"
#define FIX_CGROUP     CTP_TEST_FIXTURES "/cgroup"
#define PATH(buf, ...) assert_int_equal(E2E_PATHF(buf, __VA_ARGS__), 0)

/* Collect every mismatch of a check before failing, so one run says all. */
static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* ---- What the fixture holds --------------------------------------------- */

enum { N_IO = 7 };
static const char *const io_keys[N_IO] = {"rchar",
					  "wchar",
					  "syscr",
					  "syscw",
					  "read_bytes",
					  "write_bytes",
					  "cancelled_write_bytes"};
static const uint8_t io_units[N_IO] = {
	CTP_UNIT_BYTES, CTP_UNIT_BYTES, CTP_UNIT_COUNT, CTP_UNIT_COUNT,
	CTP_UNIT_BYTES, CTP_UNIT_BYTES, CTP_UNIT_BYTES};

#define ALL_IO	 0x7fu
#define IO_NONE	 0u
#define NO_IO(i) (ALL_IO & ~(1u << (i)))

struct exp_thread {
	uint32_t tgid, tid;
	const char *comm;
	uint64_t io[N_IO];
	unsigned present; /* bit i: io value i present */
};

static const struct exp_thread exp_threads[] = {
	{100, 100, "app", {273215, 12132, 67210, 490, 0, 286720, 0}, ALL_IO},
	{100,
	 101,
	 "app-writer",
	 {6976, 1048576, 10, 256, 0, 1052672, 4096},
	 ALL_IO},
	/* cut inside cancelled_write_bytes */
	{100, 102, "app-cut", {100, 200, 3, 4, 5, 6, 0}, NO_IO(6)},
	{200, 200, "big", {UINT64_MAX, 1, 2, 3, 4, 5, 6}, ALL_IO},
	/* no io files */
	{300, 300, "noio", {0}, IO_NONE},
	{300, 301, "noio-1", {0}, IO_NONE},
	/* a kernel thread: all zero, all present */
	{400, 400, "kworker/0:1", {0, 0, 0, 0, 0, 0, 0}, ALL_IO},
	{500, 500, "denied", {0}, IO_NONE},
	{600, 600, "badstatm", {1, 2, 3, 4, 5, 6, 7}, ALL_IO},
	{700, 700, "nostatm", {7, 6, 5, 4, 3, 2, 1}, ALL_IO},
};
#define N_THREADS (sizeof(exp_threads) / sizeof(exp_threads[0]))

struct kv {
	const char *key; /* as in smaps_rollup */
	uint64_t kib;
};

/* 100's smaps_rollup, a python3 process on the build machine. */
static const struct kv rollup_app[] = {
	{"Rss", 11400},
	{"Pss", 9719},
	{"Pss_Dirty", 5344},
	{"Pss_Anon", 5344},
	{"Pss_File", 4375},
	{"Pss_Shmem", 0},
	{"Shared_Clean", 1784},
	{"Shared_Dirty", 0},
	{"Private_Clean", 4272},
	{"Private_Dirty", 5344},
	{"Referenced", 11400},
	{"Anonymous", 5344},
	{"KSM", 0},
	{"LazyFree", 0},
	{"AnonHugePages", 0},
	{"ShmemPmdMapped", 0},
	{"FilePmdMapped", 0},
	{"Shared_Hugetlb", 0},
	{"Private_Hugetlb", 0},
	{"Swap", 0},
	{"SwapPss", 0},
	{"Locked", 0},
};
/* 300's: a future key; Swap overflows and the junk line is skipped. */
static const struct kv rollup_noio[] = {
	{"Rss", 6000},
	{"Pss", 3000},
	{"Pss_Anon", 1200},
	{"Zswap_Future", 8},
};

struct exp_proc {
	uint32_t tgid;
	const char *comm;
	uint64_t nthreads;
	uint64_t resident_pages; /* statm (2); 0 when not parsable */
	const struct kv *kv;	 /* smaps values; NULL: all absent */
	size_t n_kv;
	uint64_t io[N_IO]; /* <tgid>/io, the io.process.* values */
	unsigned io_present;
};

#define KV(a) a, sizeof(a) / sizeof(a[0])
static const struct exp_proc exp_procs[] = {
	/* more than its threads' sum: exited threads and reaped children */
	{100,
	 "app",
	 3,
	 2850,
	 KV(rollup_app),
	 {412345, 5255212, 68001, 1302, 8192, 5533702, 4096},
	 ALL_IO},
	/* over the default 16 GiB: never read */
	{200,
	 "big",
	 1,
	 (16ull << 30) / 4096 + 1,
	 NULL,
	 0,
	 {UINT64_MAX, 1, 2, 3, 4, 5, 6},
	 ALL_IO},
	{300, "noio", 2, 1500, KV(rollup_noio), {0}, IO_NONE},
	{400, "kworker/0:1", 1, 0, NULL, 0, {0, 0, 0, 0, 0, 0, 0}, ALL_IO},
	{500, "denied", 1, 1000, NULL, 0, {0}, IO_NONE},
	{600, "badstatm", 1, 0, NULL, 0, {1, 2, 3, 4, 5, 6, 7}, ALL_IO},
	{700, "nostatm", 1, 0, NULL, 0, {7, 6, 5, 4, 3, 2, 1}, ALL_IO},
};
#define N_PROCS (sizeof(exp_procs) / sizeof(exp_procs[0]))

/* The distinct smaps keys, 100's 22 and 300's Zswap_Future, and
 * smaps.not_read. */
#define N_SMAPS_FIELDS 24

struct counter {
	const char *name;
	uint64_t value;
};

/* What a run expects of the tally and the smaps counters. Every failure
 * of the fixture is a file that does not exist (ENOENT), so each file's
 * missing count equals its failures. */
struct exp_run {
	uint64_t io_fail, pio_fail, statm_fail, rollup_fail;
	struct counter smaps[6]; /* read_us is not deterministic */
	bool smaps_values;	 /* the smaps values above were read */
	/* Per exp_procs entry: why its smaps_rollup was not read (it then
	 * has statm's resident size as smaps.rss and this in
	 * smaps.not_read, and no other smaps value); NULL: as above. */
	const char *why[N_PROCS];
};

static const struct exp_run run_default = {
	3,
	2,
	1,
	1,
	{{"skipped_rss", 1},
	 {"skipped_budget", 0},
	 {"no_mm", 1},
	 {"statm_parse_errors", 1},
	 {"parse_errors", 1},
	 {"keys_dropped", 0}},
	true,
	/* 200 over 16 GiB; 500's smaps_rollup missing (like EACCES). */
	{NULL, "max_rss_bytes", NULL, NULL, "unreadable", NULL, NULL},
};

/* max_rss_bytes: 1: every process with memory is too big, so no
 * smaps_rollup is opened at all and none is tallied. */
static const struct exp_run run_tiny_cap = {
	3,
	2,
	1,
	0,
	{{"skipped_rss", 4},
	 {"skipped_budget", 0},
	 {"no_mm", 1},
	 {"statm_parse_errors", 1},
	 {"parse_errors", 0},
	 {"keys_dropped", 0}},
	false,
	{"max_rss_bytes", "max_rss_bytes", "max_rss_bytes", NULL,
	 "max_rss_bytes", NULL, NULL},
};

/* time_budget_ms: 0: size checks first, then nothing may be read. */
static const struct exp_run run_no_budget = {
	3,
	2,
	1,
	0,
	{{"skipped_rss", 1},
	 {"skipped_budget", 3},
	 {"no_mm", 1},
	 {"statm_parse_errors", 1},
	 {"parse_errors", 0},
	 {"keys_dropped", 0}},
	false,
	{"time_budget_ms", "max_rss_bytes", "time_budget_ms", NULL,
	 "time_budget_ms", NULL, NULL},
};

#define HINT                                                                   \
	"  hint: 5 of 7 read failures are missing files that exist only "      \
	"with CONFIG_TASK_IO_ACCOUNTING (io, process/io); this kernel was "    \
	"probably built without it"

/* ---- Reading the fixture text (independently of the plugins) ------------ */

static char *fixture_text(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *fixture_text(const char *fmt, ...)
{
	char rel[256], path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	PATH(path, "%s/%s", FIX_PROC, rel);
	char *buf = NULL;
	if (e2e_read_file(path, &buf, NULL) < 0)
		return NULL;
	return buf;
}

/* The line after l's, or NULL after the last. */
static const char *next_line(const char *l)
{
	l = strchr(l, '\n');
	return l ? l + 1 : NULL;
}

/* A "key: number\n" line of io text: 1 and the number, 0 when the key is
 * missing or its line has no newline. A deliberately naive reader. */
static int io_value(const char *text, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = next_line(l)) {
		if (strncmp(l, key, kl) || l[kl] != ':')
			continue;
		if (!strchr(l, '\n'))
			return 0;
		*v = strtoull(l + kl + 1, NULL, 10);
		return 1;
	}
	return 0;
}

/* The kB of "Key:   N kB" in smaps_rollup text; 1 found, 0 not. */
static int rollup_value(const char *text, const char *key, uint64_t *kib)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = next_line(l)) {
		char unit[8];
		unsigned long long n;
		if (strncmp(l, key, kl) || l[kl] != ':')
			continue;
		if (sscanf(l + kl + 1, " %llu %7s", &n, unit) != 2 ||
		    strcmp(unit, "kB") != 0)
			return 0;
		*kib = n;
		return 1;
	}
	return 0;
}

static int count_key_lines(const char *text)
{
	int n = 0;
	for (const char *l = text; l && *l; l = next_line(l)) {
		const char *colon = strchr(l, ':'), *nl = strchr(l, '\n');
		n += colon && (!nl || colon < nl) && colon > l &&
		     !strchr(l, '[');
	}
	return n;
}

static void expectations_match_fixture(void **state)
{
	(void)state;
	nbad = 0;
	for (size_t i = 0; i < N_THREADS; i++) {
		const struct exp_thread *e = &exp_threads[i];
		char *comm = fixture_text("%u/task/%u/comm", e->tgid, e->tid);
		char *io = fixture_text("%u/task/%u/io", e->tgid, e->tid);
		CHECK(comm && strcspn(comm, "\n") == strlen(e->comm) &&
			      !strncmp(comm, e->comm, strlen(e->comm)),
		      "tid %u: comm", e->tid);
		CHECK(!io == !e->present, "tid %u: io file %s", e->tid,
		      io ? "exists" : "missing");
		for (int k = 0; io && k < N_IO; k++) {
			uint64_t v = 0;
			int have = io_value(io, io_keys[k], &v);
			CHECK(have == !!(e->present & (1u << k)) &&
				      (!have || v == e->io[k]),
			      "tid %u: %s is %s %" PRIu64 " in the file",
			      e->tid, io_keys[k], have ? "" : "absent", v);
		}
		free(comm);
		free(io);
	}
	for (size_t i = 0; i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		char *comm = fixture_text("%u/comm", p->tgid);
		char *statm = fixture_text("%u/statm", p->tgid);
		char *rollup = fixture_text("%u/smaps_rollup", p->tgid);
		char *io = fixture_text("%u/io", p->tgid);
		unsigned long long size = 0, res = 0;
		CHECK(!io == !p->io_present, "tgid %u: io file %s", p->tgid,
		      io ? "exists" : "missing");
		for (int k = 0; io && k < N_IO; k++) {
			uint64_t v = 0;
			int have = io_value(io, io_keys[k], &v);
			CHECK(have == !!(p->io_present & (1u << k)) &&
				      (!have || v == p->io[k]),
			      "tgid %u: %s is %s %" PRIu64 " in the file",
			      p->tgid, io_keys[k], have ? "" : "absent", v);
		}
		free(io);
		CHECK(comm && strcspn(comm, "\n") == strlen(p->comm) &&
			      !strncmp(comm, p->comm, strlen(p->comm)),
		      "tgid %u: comm", p->tgid);
		if (statm && sscanf(statm, "%llu %llu", &size, &res) == 2)
			CHECK(res == p->resident_pages,
			      "tgid %u: statm says %llu pages", p->tgid, res);
		else
			CHECK(p->resident_pages == 0,
			      "tgid %u: statm unreadable", p->tgid);
		if (p->kv) {
			CHECK(rollup, "tgid %u: no smaps_rollup", p->tgid);
			for (size_t k = 0; rollup && k < p->n_kv; k++) {
				uint64_t kib = 0;
				CHECK(rollup_value(rollup, p->kv[k].key,
						   &kib) &&
					      kib == p->kv[k].kib,
				      "tgid %u: %s", p->tgid, p->kv[k].key);
			}
		}
		free(comm);
		free(statm);
		free(rollup);
	}
	/* A process's io is at least its live threads' (the fixture is
	 * realistic): the kernel adds exited threads and children to it. */
	for (size_t i = 0; i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		for (int k = 0; k < N_IO; k++) {
			uint64_t sum = 0;
			for (size_t t = 0; t < N_THREADS; t++)
				if (exp_threads[t].tgid == p->tgid &&
				    (exp_threads[t].present & (1u << k)))
					sum += exp_threads[t].io[k];
			CHECK(!(p->io_present & (1u << k)) || p->io[k] >= sum,
			      "tgid %u: %s below its threads'", p->tgid,
			      io_keys[k]);
		}
	}
	/* 100's file has exactly its 22 keys; 300's two bad lines exist. */
	char *r = fixture_text("100/smaps_rollup");
	CHECK(r && count_key_lines(r) == 22, "100: key lines");
	free(r);
	r = fixture_text("300/smaps_rollup");
	uint64_t kib;
	CHECK(r && strstr(r, "this line is not a key\n") &&
		      rollup_value(r, "Swap", &kib) &&
		      kib == UINT64_MAX, /* strtoull saturates */
	      "300: the bad lines");
	free(r);
	/* The files that must be missing are. */
	static const char *const missing[] = {
		"300/task/300/io",  "300/task/301/io",	"300/io",
		"400/smaps_rollup", "500/smaps_rollup", "500/task/500/io",
		"500/io",	    "700/statm"};
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		char *t = fixture_text("%s", missing[i]);
		CHECK(!t, "%s exists", missing[i]);
		free(t);
	}
	assert_int_equal(nbad, 0);
}

/* ---- Running captures --------------------------------------------------- */

static char tmp[PATH_MAX];
static unsigned seq;

static int group_setup(void **state)
{
	(void)state;
	return e2e_tmpdir("e2e-mem", tmp, sizeof(tmp));
}

static int group_teardown(void **state)
{
	(void)state;
	return e2e_rm_rf(tmp);
}

static struct ctp_snap *snaps[8];
static size_t n_snaps;

static int free_snaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_snaps; i++)
		ctp_snap_free(snaps[i]);
	n_snaps = 0;
	return 0;
}

/* A YAML double-quoted scalar. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * Capture `proc` with io (unless !with_io) and smaps, both required,
 * `smaps_opts` (YAML flow map body or NULL) and `workers`; the snapshot
 * path goes to out. Returns the decoded snapshot or fails the test.
 */
static struct ctp_snap *capture(const char *proc, bool with_io,
				const char *smaps_opts, unsigned workers,
				char *out, size_t outlen)
{
	char cfg[PATH_MAX], log[PATH_MAX];
	unsigned n = ++seq;
	PATH(cfg, "%s/cfg-%u.yaml", tmp, n);
	PATH(log, "%s/log-%u.txt", tmp, n);
	assert_int_equal(
		e2e_pathf(out, outlen, "%s/snap-%u.ctprof.zst", tmp, n), 0);
	FILE *f = fopen(cfg, "we");
	assert_non_null(f);
	fputs("plugin_dirs: [", f);
	put_quoted(f, CTP_TEST_PLUGIN_DIR);
	fprintf(f, "]\nworkers: %u\nroots:\n  proc: ", workers);
	put_quoted(f, proc);
	fputs("\n  sys: ", f);
	put_quoted(f, FIX_SYS);
	fputs("\n  cgroup: ", f);
	put_quoted(f, FIX_CGROUP);
	fputs("\nplugins:\n", f);
	if (with_io)
		fputs("  io: {required: true}\n", f);
	fprintf(f, "  smaps: {required: true, options: {%s}}\n",
		smaps_opts ? smaps_opts : "");
	assert_int_equal(fclose(f), 0);

	struct ctp_snap *s = e2e_capture(cfg, out, log);
	assert_true(n_snaps < sizeof(snaps) / sizeof(snaps[0]));
	snaps[n_snaps++] = s;
	return s;
}

/* ---- Checking a fixture snapshot ---------------------------------------- */

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *s,
					    const char *name)
{
	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		if (!strcmp(ctp_snap_plugins(s)[i].name, name))
			return &ctp_snap_plugins(s)[i];
	CHECK(0, "plugin %s missing", name);
	return NULL;
}

static void check_counter(const struct ctp_snap_plugin *p, const char *name,
			  uint64_t want)
{
	size_t i;
	for (i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			break;
	CHECK(i < p->n_summary && p->summary[i] == want,
	      "%s summary %s: %" PRIu64 ", expected %" PRIu64, p->name, name,
	      i < p->n_summary ? p->summary[i] : UINT64_MAX, want);
}

/* "smaps." and the key in lower case. */
static const char *smaps_name(char *buf, size_t len, const char *key)
{
	size_t n = (size_t)snprintf(buf, len, "smaps.%s", key);
	for (size_t i = 0; i < n && i < len; i++)
		if (buf[i] >= 'A' && buf[i] <= 'Z')
			buf[i] = (char)(buf[i] - 'A' + 'a');
	return buf;
}

static void check_io(const struct ctp_snap *s, bool with_io)
{
	const struct ctp_snap_table *tt = ctp_snap_table(s, CTP_SCOPE_THREAD);
	const struct ctp_snap_field *f[N_IO];
	char name[64];

	CHECK(tt->rows == N_THREADS, "%zu thread rows", tt->rows);
	for (int k = 0; k < N_IO; k++) {
		snprintf(name, sizeof(name), "io.%s", io_keys[k]);
		f[k] = ctp_snap_field_find(s, name);
		if (!with_io) {
			CHECK(!f[k], "field %s without the io plugin", name);
			continue;
		}
		CHECK(f[k], "field %s missing", name);
		if (!f[k])
			continue;
		CHECK(!strcmp(f[k]->plugin, "io") &&
			      f[k]->scope == CTP_SCOPE_THREAD &&
			      f[k]->type == CTP_TYPE_U64 &&
			      f[k]->unit == io_units[k] &&
			      f[k]->kind == CTP_KIND_COUNTER &&
			      f[k]->rule == CTP_RULE_SUM && *f[k]->help,
		      "field %s: description", name);
	}
	if (!with_io)
		return;
	for (size_t i = 0; i < tt->rows && i < N_THREADS; i++) {
		const struct exp_thread *e = &exp_threads[i];
		CHECK(tt->tid[i] == e->tid && tt->tgid[i] == e->tgid,
		      "thread row %zu is %" PRIu64 "/%" PRIu64, i, tt->tgid[i],
		      tt->tid[i]);
		for (int k = 0; k < N_IO; k++) {
			if (!f[k])
				continue;
			struct ctp_value v = ctp_snap_get(s, f[k], i);
			if (!(e->present & (1u << k)))
				CHECK(v.type == CTP_VALUE_ABSENT,
				      "tid %u: io.%s should be absent", e->tid,
				      io_keys[k]);
			else
				CHECK(v.type == CTP_TYPE_U64 &&
					      v.u64 == e->io[k],
				      "tid %u: io.%s = %" PRIu64
				      " (type %u), expected %" PRIu64,
				      e->tid, io_keys[k], v.u64, v.type,
				      e->io[k]);
		}
	}
}

/* io.process.* on every process row: <tgid>/io, absent where it is
 * missing. */
static void check_process_io(const struct ctp_snap *s, bool with_io)
{
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	const struct ctp_snap_field *f[N_IO];
	char name[64];

	for (int k = 0; k < N_IO; k++) {
		snprintf(name, sizeof(name), "io.process.%s", io_keys[k]);
		f[k] = ctp_snap_field_find(s, name);
		if (!with_io) {
			CHECK(!f[k], "field %s without the io plugin", name);
			continue;
		}
		CHECK(f[k] && !strcmp(f[k]->plugin, "io") &&
			      f[k]->scope == CTP_SCOPE_PROCESS &&
			      f[k]->type == CTP_TYPE_U64 &&
			      f[k]->unit == io_units[k] &&
			      f[k]->kind == CTP_KIND_COUNTER &&
			      f[k]->rule == CTP_RULE_SUM && *f[k]->help,
		      "field %s: missing or described wrong", name);
	}
	for (size_t i = 0; with_io && i < pt->rows && i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		for (int k = 0; k < N_IO; k++) {
			if (!f[k])
				continue;
			struct ctp_value v = ctp_snap_get(s, f[k], i);
			if (!(p->io_present & (1u << k)))
				CHECK(v.type == CTP_VALUE_ABSENT,
				      "tgid %u: io.process.%s should be absent",
				      p->tgid, io_keys[k]);
			else
				CHECK(v.type == CTP_TYPE_U64 &&
					      v.u64 == p->io[k],
				      "tgid %u: io.process.%s = %" PRIu64
				      " (type %u), expected %" PRIu64,
				      p->tgid, io_keys[k], v.u64, v.type,
				      p->io[k]);
		}
	}
}

/* Any process not read in run x? */
static bool any_not_read(const struct exp_run *x)
{
	for (size_t i = 0; i < N_PROCS; i++)
		if (x->why[i])
			return true;
	return false;
}

/* One smaps field of process row i: its expected value, or absent. */
static void check_smaps_value(const struct ctp_snap *s, const struct exp_run *x,
			      size_t i, const struct ctp_snap_field *f)
{
	const struct exp_proc *p = &exp_procs[i];
	struct ctp_value v = ctp_snap_get(s, f, i);
	uint64_t page = (uint64_t)getpagesize();
	const char *why = x->why[i];
	char name[96];

	if (!strcmp(f->name, "smaps.not_read")) {
		CHECK(why ? v.type == CTP_TYPE_STRING &&
				      v.str.len == strlen(why) &&
				      !memcmp(v.str.ptr, why, v.str.len)
			  : v.type == CTP_VALUE_ABSENT,
		      "tgid %u: smaps.not_read type %u, expected %s", p->tgid,
		      v.type, why ? why : "absent");
		return;
	}
	if (why && !strcmp(f->name, "smaps.rss")) {
		/* What was read is kept: statm's resident size. */
		CHECK(v.type == CTP_TYPE_U64 &&
			      v.u64 == p->resident_pages * page,
		      "tgid %u: smaps.rss = %" PRIu64
		      ", expected statm's %" PRIu64,
		      p->tgid, v.u64, p->resident_pages * page);
		return;
	}
	const struct kv *want = NULL;
	for (size_t k = 0; !why && x->smaps_values && k < p->n_kv; k++)
		if (!strcmp(smaps_name(name, sizeof(name), p->kv[k].key),
			    f->name))
			want = &p->kv[k];
	if (!want)
		CHECK(v.type == CTP_VALUE_ABSENT,
		      "tgid %u: %s should be absent", p->tgid, f->name);
	else
		CHECK(v.type == CTP_TYPE_U64 && v.u64 == want->kib * 1024,
		      "tgid %u: %s = %" PRIu64 ", expected %" PRIu64, p->tgid,
		      f->name, v.u64, want->kib * 1024);
}

static void check_smaps(const struct ctp_snap *s, const struct exp_run *x)
{
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	size_t n_smaps = 0;
	uint64_t page = (uint64_t)getpagesize();

	/* Exactly the keys read, each a process gauge in bytes, and why a
	 * process was not read, a label. */
	for (size_t i = 0; i < ctp_snap_n_fields(s); i++) {
		const struct ctp_snap_field *f = &ctp_snap_fields(s)[i];
		if (strncmp(f->name, "smaps.", 6) != 0)
			continue;
		n_smaps++;
		bool label = !strcmp(f->name, "smaps.not_read");
		CHECK(!strcmp(f->plugin, "smaps") &&
			      f->scope == CTP_SCOPE_PROCESS &&
			      f->type == (label ? CTP_TYPE_STRING
						: CTP_TYPE_U64) &&
			      f->unit == (label ? CTP_UNIT_NONE
						: CTP_UNIT_BYTES) &&
			      f->kind == (label ? CTP_KIND_CATEGORICAL
						: CTP_KIND_GAUGE) &&
			      f->rule == (label ? CTP_RULE_MODE : CTP_RULE_MAX),
		      "field %s: description", f->name);
	}
	/* smaps.not_read is static; smaps.rss comes with the first process
	 * read or not read. */
	CHECK(n_smaps == (x->smaps_values   ? N_SMAPS_FIELDS
			  : any_not_read(x) ? 2
					    : 1),
	      "%zu smaps fields", n_smaps);

	CHECK(pt->rows == N_PROCS, "%zu process rows", pt->rows);
	for (size_t i = 0; i < pt->rows && i < N_PROCS; i++) {
		const struct exp_proc *p = &exp_procs[i];
		CHECK(pt->tgid[i] == p->tgid && pt->nthreads[i] == p->nthreads,
		      "process row %zu: %" PRIu64 " with %" PRIu64 " threads",
		      i, pt->tgid[i], pt->nthreads[i]);
		/* Every smaps field of the snapshot, on every process. */
		for (size_t fi = 0; fi < ctp_snap_n_fields(s); fi++) {
			const struct ctp_snap_field *f =
				&ctp_snap_fields(s)[fi];
			if (!strncmp(f->name, "smaps.", 6))
				check_smaps_value(s, x, i, f);
		}
		/* Only 200 is beyond the default cap of 16 GiB. */
		CHECK((p->resident_pages * page > 16ull << 30) ==
			      (p->tgid == 200),
		      "tgid %u: resident vs the default cap", p->tgid);
	}
	if (x->smaps_values) {
		/* Grouping by process never multiplies: one row, one value. */
		const struct ctp_snap_field *rss =
			ctp_snap_field_find(s, "smaps.rss");
		CHECK(rss && ctp_snap_get(s, rss, 0).u64 == 11400 * 1024,
		      "100: smaps.rss");
	}
}

/* Failures of `file`, its gate and how many of them were ENOENT. */
static uint64_t tally_missing(const struct ctp_snap *s, const char *file,
			      const char **gate, uint64_t *missing)
{
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	for (size_t i = 0; i < rf->n_files; i++)
		if (!strcmp(rf->file[i], file)) {
			*gate = rf->gate[i];
			*missing = rf->missing[i];
			return rf->failures[i];
		}
	*gate = NULL;
	*missing = UINT64_MAX;
	CHECK(0, "no tally for %s", file);
	return UINT64_MAX;
}

static uint64_t tally(const struct ctp_snap *s, const char *file,
		      const char **gate)
{
	uint64_t missing;
	return tally_missing(s, file, gate, &missing);
}

static void check_snapshot(const struct ctp_snap *s, const struct exp_run *x,
			   bool with_io, unsigned workers)
{
	nbad = 0;
	CHECK(ctp_snap_header(s)->workers == workers, "workers %" PRIu64,
	      ctp_snap_header(s)->workers);
	check_io(s, with_io);
	check_process_io(s, with_io);
	check_smaps(s, x);

	const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
	const char *gate;
	CHECK(rf->tids_walked == N_THREADS && rf->tids_recorded == N_THREADS &&
		      rf->tids_vanished == 0 && rf->tgids_walked == N_PROCS &&
		      rf->tgids_vanished == 0,
	      "walk: %" PRIu64 "/%" PRIu64 "/%" PRIu64 " tids, %" PRIu64
	      "/%" PRIu64 " tgids",
	      rf->tids_walked, rf->tids_recorded, rf->tids_vanished,
	      rf->tgids_walked, rf->tgids_vanished);
	CHECK(rf->n_files == (with_io ? 4u : 2u), "%zu tallied files",
	      rf->n_files);
	uint64_t missing;
	if (with_io) {
		CHECK(tally_missing(s, "io", &gate, &missing) == x->io_fail &&
			      missing == x->io_fail,
		      "io failures, missing %" PRIu64, missing);
		CHECK(gate && !strcmp(gate, "CONFIG_TASK_IO_ACCOUNTING"),
		      "io gate %s", gate ? gate : "(none)");
		/* <tgid>/io fails like the threads' and is gated the same. */
		CHECK(tally_missing(s, "process/io", &gate, &missing) ==
				      x->pio_fail &&
			      missing == x->pio_fail,
		      "process/io failures, missing %" PRIu64, missing);
		CHECK(gate && !strcmp(gate, "CONFIG_TASK_IO_ACCOUNTING"),
		      "process/io gate %s", gate ? gate : "(none)");
	}
	CHECK(tally_missing(s, "process/statm", &gate, &missing) ==
			      x->statm_fail &&
		      missing == x->statm_fail && !gate,
	      "process/statm failures, missing %" PRIu64, missing);
	CHECK(tally_missing(s, "process/smaps_rollup", &gate, &missing) ==
			      x->rollup_fail &&
		      missing == x->rollup_fail && !gate,
	      "process/smaps_rollup failures, missing %" PRIu64, missing);

	const struct ctp_snap_plugin *p;
	if (with_io && (p = plugin(s, "io"))) {
		/* one call per thread and one per process */
		CHECK(p->status == 1 && p->errors == 0 && p->vanished == 0 &&
			      p->calls == N_THREADS + N_PROCS,
		      "io: status %u, %" PRIu64 " errors, %" PRIu64
		      " vanished, %" PRIu64 " calls",
		      p->status, p->errors, p->vanished, p->calls);
		CHECK(p->n_summary == 5, "io: %zu counters", p->n_summary);
		check_counter(p, "parse_errors", 1);
		/* No task source on a fixture root: every thread's file;
		 * nor a process source: every process's. */
		check_counter(p, "from_task", 0);
		check_counter(p, "from_files", N_THREADS);
		check_counter(p, "process_from_source", 0);
		check_counter(p, "process_from_file", N_PROCS);
	}
	if ((p = plugin(s, "smaps"))) {
		/* host + one call per process */
		CHECK(p->status == 1 && p->errors == 0 && p->vanished == 0 &&
			      p->calls == 1 + N_PROCS,
		      "smaps: status %u, %" PRIu64 " errors, %" PRIu64
		      " vanished, %" PRIu64 " calls",
		      p->status, p->errors, p->vanished, p->calls);
		CHECK(p->n_summary == 8, "smaps: %zu counters", p->n_summary);
		for (size_t k = 0; k < 6; k++)
			check_counter(p, x->smaps[k].name, x->smaps[k].value);
	}
	assert_int_equal(nbad, 0);
}

/* `show --summary`'s output. */
static char *show(const char *snap)
{
	char out[PATH_MAX], err[PATH_MAX], *text = NULL;
	PATH(out, "%s/show-%u.out", tmp, seq);
	PATH(err, "%s/show-%u.err", tmp, seq);
	const char *args[] = {"show", "--summary", snap, NULL};
	int rc = e2e_run(args, out, err);
	if (rc != 0) {
		e2e_show_file("show stderr", err);
		fail_msg("show exited with %d", rc);
	}
	assert_int_equal(e2e_read_file(out, &text, NULL), 0);
	return text;
}

static void fixture_default(void **state)
{
	(void)state;
	char out[PATH_MAX];
	struct ctp_snap *s = capture(FIX_PROC, true, NULL, 1, out, sizeof(out));
	check_snapshot(s, &run_default, true, 1);

	/* io's 3 missing thread files and 2 missing process files are 5 of
	 * the 7 failures: the kernel-config hint, under the per-file line. */
	char *text = show(out);
	if (!strstr(text, "  per file: io 3 (3 missing), process/io 2 (2 "
			  "missing), process/statm 1 (1 missing), "
			  "process/smaps_rollup 1 (1 missing); "
			  "dominant: io\n" HINT "\n"))
		fail_msg("no per-file line and hint in:\n%s", text);
	free(text);
}

/* Same values whatever the number of workers (registration races). */
static void fixture_workers(void **state)
{
	(void)state;
	char out[PATH_MAX];
	for (unsigned w = 2; w <= 4; w++)
		check_snapshot(
			capture(FIX_PROC, true, NULL, w, out, sizeof(out)),
			&run_default, true, w);
}

static void fixture_size_cap(void **state)
{
	(void)state;
	char out[PATH_MAX];
	check_snapshot(capture(FIX_PROC, true, "max_rss_bytes: 1", 1, out,
			       sizeof(out)),
		       &run_tiny_cap, true, 1);
	/* 300's 1500 pages exactly: 300 read (and 500, whose read fails),
	 * 100 and 200 too big. */
	char opt[64];
	snprintf(opt, sizeof(opt), "max_rss_bytes: %llu",
		 (unsigned long long)(1500 * (uint64_t)getpagesize()));
	struct ctp_snap *s = capture(FIX_PROC, true, opt, 1, out, sizeof(out));
	nbad = 0;
	const struct ctp_snap_field *rss = ctp_snap_field_find(s, "smaps.rss");
	const struct ctp_snap_table *pt = ctp_snap_table(s, CTP_SCOPE_PROCESS);
	CHECK(rss, "no smaps.rss");
	/* 300 from its smaps_rollup; 100 and 200 too big and 500
	 * unreadable keep statm's size; the rest have none. */
	for (size_t i = 0; rss && i < pt->rows && i < N_PROCS; i++) {
		struct ctp_value v = ctp_snap_get(s, rss, i);
		uint64_t want =
			pt->tgid[i] == 300 ? 6000 * 1024
			: exp_procs[i].tgid <= 200 || exp_procs[i].tgid == 500
				? exp_procs[i].resident_pages *
					  (uint64_t)getpagesize()
				: 0;
		CHECK(want ? v.type == CTP_TYPE_U64 && v.u64 == want
			   : v.type == CTP_VALUE_ABSENT,
		      "tgid %" PRIu64 ": smaps.rss type %u, %" PRIu64
		      ", expected %" PRIu64,
		      pt->tgid[i], v.type, v.u64, want);
	}
	check_counter(plugin(s, "smaps"), "skipped_rss", 2);
	const char *gate;
	CHECK(tally(s, "process/smaps_rollup", &gate) == 1, "500 read");
	assert_int_equal(nbad, 0);
}

static void fixture_no_budget(void **state)
{
	(void)state;
	char out[PATH_MAX];
	check_snapshot(capture(FIX_PROC, true, "time_budget_ms: 0", 1, out,
			       sizeof(out)),
		       &run_no_budget, true, 1);
}

/* `ARGS...` (NULL-terminated) at 200 columns: its output, or fails. */
static char *run_cli(const char *a0, ...)
{
	const char *args[12] = {a0};
	char out[PATH_MAX], err[PATH_MAX], *text = NULL;
	size_t n = 1;
	va_list ap;
	va_start(ap, a0);
	for (const char *a; n < 11 && (a = va_arg(ap, const char *));)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	PATH(out, "%s/cli-%u.out", tmp, ++seq);
	PATH(err, "%s/cli-%u.err", tmp, seq);
	setenv("COLUMNS", "200", 1);
	int rc = e2e_run(args, out, err);
	if (rc != 0) {
		e2e_show_file("stderr", err);
		fail_msg("%s exited with %d", a0, rc);
	}
	assert_int_equal(e2e_read_file(out, &text, NULL), 0);
	return text;
}

static void expect_in(const char *what, const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("%s: no '%s' in:\n%s", what, want, text);
}

/*
 * Issue 28: a process whose smaps_rollup is not read keeps its RSS, and
 * every view that shows memory says how many processes have no PSS and
 * why. The time budget of 0 ms skips 100, 300 and 500, the default size
 * cap 200 (16 GiB and a page): the mem view lists 200 first (by RSS, not
 * hidden as "at zero") and 100 with statm's 11.1 MiB; it, the top view
 * and compare's mem view print the line.
 */
static void views_say_why(void **state)
{
	(void)state;
	char a[PATH_MAX], b[PATH_MAX];
	const char *why = "  no PSS for 4 processes (smaps.not_read): "
			  "time_budget_ms 3, max_rss_bytes 1\n";
	capture(FIX_PROC, true, "time_budget_ms: 0", 1, a, sizeof(a));
	capture(FIX_PROC, true, "time_budget_ms: 0", 1, b, sizeof(b));

	char *text = run_cli("show", a, "--view", "mem", NULL);
	expect_in("show --view mem", text, why);
	/* No process has a PSS: no PSS column (RSS is not shown as one). */
	const char *head = strstr(text, "\nPID COMMAND ");
	const char *first = head ? strchr(head + 1, '\n') : NULL;
	if (!first || memmem(head, (size_t)(first - head), "PSS", 3) ||
	    !memmem(head, (size_t)(first - head), " RSS", 4))
		fail_msg("a PSS column, or no RSS column, in:\n%s", text);
	if (strstr(first, "\n200 big ") != first || !strstr(first, " 16.0G") ||
	    !strstr(first, "\n100 app "))
		fail_msg("200 not first, or 100 missing, in:\n%s", text);
	free(text);
	text = run_cli("show", a, NULL);
	expect_in("show (top)", text, why);
	free(text);
	text = run_cli("compare", a, b, "--view", "mem", NULL);
	expect_in("compare --view mem", text, why);
	free(text);

	/* The default: 200 too big, 500's smaps_rollup unreadable. */
	capture(FIX_PROC, true, NULL, 1, a, sizeof(a));
	text = run_cli("show", a, "--view", "mem", NULL);
	expect_in("show --view mem", text,
		  "  no PSS for 2 processes (smaps.not_read): "
		  "max_rss_bytes 1, unreadable 1\n");
	free(text);
}

/* Without io nothing is gated, so 2 ungated failures give no hint. */
static void fixture_without_io(void **state)
{
	(void)state;
	char out[PATH_MAX];
	struct ctp_snap *s =
		capture(FIX_PROC, false, NULL, 1, out, sizeof(out));
	check_snapshot(s, &run_default, false, 1);
	char *text = show(out);
	assert_null(strstr(text, "hint:"));
	assert_non_null(strstr(text, "per file: process/statm 1 (1 missing), "
				     "process/smaps_rollup 1 (1 missing); "
				     "dominant: process/statm"));
	free(text);
}

/* A directory where a task's io file should be: open works, read fails
 * with EISDIR. Like EACCES on another user's io, a failure of a file that
 * exists. */
static void io_dir(const char *root, unsigned tgid, unsigned tid)
{
	char p[PATH_MAX];
	PATH(p, "%s/%u/task/%u/io", root, tgid, tid);
	if (unlink(p) < 0)
		assert_int_equal(errno, ENOENT);
	assert_int_equal(mkdir(p, 0755), 0);
}

/*
 * Failures of a gated file that exists (EISDIR here, EACCES on a real
 * host) do not say the kernel lacks the option. Every thread's io a
 * directory: 10 io failures, none missing, beside the 2 missing
 * process/io of 14 in all: no hint (the old rule, gated failures of all,
 * would have blamed CONFIG_TASK_IO_ACCOUNTING). Then only 100/task/100's
 * io a directory beside the 3 missing ones: 4 io failures, 3 missing,
 * and 2 missing process/io, of 8 in all: the hint, counting the 5.
 */
static void gated_but_not_missing(void **state)
{
	(void)state;
	char copy[PATH_MAX], out[PATH_MAX];
	PATH(copy, "%s/proc-mem-isdir", tmp);
	assert_int_equal(e2e_copy_tree(FIX_PROC, copy), 0);
	for (size_t i = 0; i < N_THREADS; i++)
		io_dir(copy, exp_threads[i].tgid, exp_threads[i].tid);
	struct ctp_snap *s = capture(copy, true, NULL, 1, out, sizeof(out));
	const char *gate;
	uint64_t missing;
	nbad = 0;
	CHECK(tally_missing(s, "io", &gate, &missing) == N_THREADS &&
		      missing == 0,
	      "io: %" PRIu64 " missing", missing);
	CHECK(gate && !strcmp(gate, "CONFIG_TASK_IO_ACCOUNTING"), "io gate");
	CHECK(tally_missing(s, "process/statm", &gate, &missing) == 1 &&
		      missing == 1,
	      "statm");
	/* The plugin saw an unreadable file, not an error of its own. */
	const struct ctp_snap_plugin *p = plugin(s, "io");
	CHECK(p && p->errors == 0 && p->calls == N_THREADS + N_PROCS,
	      "io plugin");
	const struct ctp_snap_field *f = ctp_snap_field_find(s, "io.rchar");
	for (size_t i = 0; f && i < N_THREADS; i++)
		CHECK(ctp_snap_get(s, f, i).type == CTP_VALUE_ABSENT,
		      "row %zu: io.rchar present", i);
	assert_int_equal(nbad, 0);
	char *text = show(out);
	if (strstr(text, "hint:"))
		fail_msg("a hint for failures that are not missing files:\n%s",
			 text);
	assert_non_null(strstr(text, "per file: io 10, process/io 2 (2 "
				     "missing), process/statm 1 (1 "
				     "missing), process/smaps_rollup 1 (1 "
				     "missing); dominant: io\n"));
	free(text);
	assert_int_equal(e2e_rm_rf(copy), 0);

	/* One directory among the missing: the hint counts only the 3. */
	assert_int_equal(e2e_copy_tree(FIX_PROC, copy), 0);
	io_dir(copy, 100, 100);
	s = capture(copy, true, NULL, 1, out, sizeof(out));
	nbad = 0;
	CHECK(tally_missing(s, "io", &gate, &missing) == 4 && missing == 3,
	      "io: %" PRIu64 " missing", missing);
	assert_int_equal(nbad, 0);
	text = show(out);
	if (!strstr(text, "  per file: io 4 (3 missing), process/io 2 (2 "
			  "missing), process/statm 1 (1 missing), "
			  "process/smaps_rollup 1 (1 missing); "
			  "dominant: io\n"
			  "  hint: 5 of 8 read failures are missing files "
			  "that exist only with CONFIG_TASK_IO_ACCOUNTING "
			  "(io, process/io); this kernel was probably built "
			  "without it\n"))
		fail_msg("no per-file line and hint in:\n%s", text);
	free(text);
	assert_int_equal(e2e_rm_rf(copy), 0);
}

/* Below half: with more ungated failures the hint goes away. */
static void hint_below_half(void **state)
{
	(void)state;
	char copy[PATH_MAX], p[PATH_MAX], out[PATH_MAX];
	PATH(copy, "%s/proc-mem-copy", tmp);
	assert_int_equal(e2e_copy_tree(FIX_PROC, copy), 0);
	/* Four more statm failures: 3 io and 2 process/io, 5 of 11. */
	static const unsigned gone[] = {100, 200, 300, 400};
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		PATH(p, "%s/%u/statm", copy, gone[i]);
		assert_int_equal(unlink(p), 0);
	}
	struct ctp_snap *s = capture(copy, true, NULL, 1, out, sizeof(out));
	const char *gate;
	uint64_t missing;
	nbad = 0;
	/* All missing: the threshold alone keeps the hint away. */
	CHECK(tally_missing(s, "io", &gate, &missing) == 3 && missing == 3,
	      "io");
	CHECK(tally_missing(s, "process/io", &gate, &missing) == 2 &&
		      missing == 2,
	      "process/io");
	CHECK(tally_missing(s, "process/statm", &gate, &missing) == 5 &&
		      missing == 5,
	      "statm");
	assert_int_equal(nbad, 0);
	char *text = show(out);
	assert_null(strstr(text, "hint:"));
	free(text);
	assert_int_equal(e2e_rm_rf(copy), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expectations_match_fixture),
		cmocka_unit_test_teardown(fixture_default, free_snaps),
		cmocka_unit_test_teardown(fixture_workers, free_snaps),
		cmocka_unit_test_teardown(fixture_size_cap, free_snaps),
		cmocka_unit_test_teardown(fixture_no_budget, free_snaps),
		cmocka_unit_test_teardown(views_say_why, free_snaps),
		cmocka_unit_test_teardown(fixture_without_io, free_snaps),
		cmocka_unit_test_teardown(hint_below_half, free_snaps),
		cmocka_unit_test_teardown(gated_but_not_missing, free_snaps),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
