/* SPDX-License-Identifier: MIT */
/*
 * Snapshot writer and reader: a hand-built capture written, read back and
 * compared value by value; hostile files refused with clear errors; the
 * temporary-file rules; `show` and `dump` output.
 *
 * Run with `--write-sample PATH` it only writes the sample snapshot (for
 * tests/decode_snapshot.py); with `--dump PATH` it runs `dump` in-process;
 * with `--write-synthetic PATH N` it writes a realistic N-thread capture
 * (for the layout measurement in docs/FORMAT.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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
#include <msgpack.h>
#include <zstd.h>

#include "cli.h"
#include "model.h"
#include "reader.h"
#include "writer.h"

#define CAP_DEFAULT (1ull << 32)

/* ---- The sample capture ---- */

/* Field ids in registration order (also their index in the snapshot). */
enum {
	F_HOST_MEM,
	F_HOST_NAME,
	F_HOST_CPUS,
	F_HOST_SKEW,
	F_CG_USAGE,
	F_RSS,
	F_NICE,
	F_UTIME,
	F_DELTA,
	F_RUNNING,
	F_STATE,
	F_WCHAN,
	F_CPUS,
	F_NEVER,
	F_LOAD,
	F_COUNT
};

static const struct ctp_field_desc sample_fields[F_COUNT] = {
	[F_HOST_MEM] = {"alpha.host_mem", "Total memory", CTP_SCOPE_HOST,
			CTP_TYPE_U64, CTP_UNIT_BYTES, CTP_KIND_GAUGE,
			CTP_RULE_MAX},
	[F_HOST_NAME] = {"alpha.host_name", NULL, CTP_SCOPE_HOST,
			 CTP_TYPE_STRING, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
			 CTP_RULE_MODE},
	[F_HOST_CPUS] = {"alpha.host_cpus", "Online CPUs", CTP_SCOPE_HOST,
			 CTP_TYPE_CPUSET, CTP_UNIT_NONE, CTP_KIND_CPUSET,
			 CTP_RULE_UNION},
	[F_HOST_SKEW] = {"alpha.host_skew", "Never measured", CTP_SCOPE_HOST,
			 CTP_TYPE_I64, CTP_UNIT_NS, CTP_KIND_GAUGE,
			 CTP_RULE_MIN},
	[F_CG_USAGE] = {"alpha.cg_usage", "cpu.stat usage_usec",
			CTP_SCOPE_CGROUP, CTP_TYPE_U64, CTP_UNIT_US,
			CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_RSS] = {"alpha.rss", "Peak RSS", CTP_SCOPE_PROCESS, CTP_TYPE_U64,
		   CTP_UNIT_BYTES, CTP_KIND_PEAK, CTP_RULE_MAX},
	[F_NICE] = {"alpha.nice", "Nice", CTP_SCOPE_PROCESS, CTP_TYPE_I64,
		    CTP_UNIT_NONE, CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	[F_UTIME] = {"alpha.utime", "User time", CTP_SCOPE_THREAD, CTP_TYPE_U64,
		     CTP_UNIT_TICKS, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_DELTA] = {"alpha.delta", "Signed gauge", CTP_SCOPE_THREAD,
		     CTP_TYPE_I64, CTP_UNIT_NS, CTP_KIND_GAUGE, CTP_RULE_MIN},
	[F_RUNNING] = {"alpha.running", "Is running", CTP_SCOPE_THREAD,
		       CTP_TYPE_BOOL, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
		       CTP_RULE_MODE},
	[F_STATE] = {"alpha.state", "Task state", CTP_SCOPE_THREAD,
		     CTP_TYPE_CHAR, CTP_UNIT_NONE, CTP_KIND_ORDINAL,
		     CTP_RULE_MODE},
	[F_WCHAN] = {"alpha.wchan", "Wait channel", CTP_SCOPE_THREAD,
		     CTP_TYPE_STRING, CTP_UNIT_NONE, CTP_KIND_CATEGORICAL,
		     CTP_RULE_MODE},
	[F_CPUS] = {"alpha.cpus", "Allowed CPUs", CTP_SCOPE_THREAD,
		    CTP_TYPE_CPUSET, CTP_UNIT_NONE, CTP_KIND_CPUSET,
		    CTP_RULE_UNION},
	[F_NEVER] = {"alpha.never", "Never set", CTP_SCOPE_THREAD, CTP_TYPE_U64,
		     CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_LOAD] = {"alpha.load", "Load", CTP_SCOPE_THREAD, CTP_TYPE_U64,
		    CTP_UNIT_CENTIPCT, CTP_KIND_GAUGE, CTP_RULE_MAX},
};

/* A cell: present or not, and its value (for STRING a C string with an
 * explicit length, for CPUSET a list of CPUs ending at -1). */
struct cell {
	bool set;
	uint64_t v;
	const char *s;
	size_t slen;
	int cpus[20];
};

#define ABSENT                                                                 \
	{                                                                      \
		0                                                              \
	}
#define U(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(x)                                \
	}
#define I(x)                                                                   \
	{                                                                      \
		.set = true, .v = (uint64_t)(int64_t)(x)                       \
	}
#define S(lit)                                                                 \
	{                                                                      \
		.set = true, .s = (lit), .slen = sizeof(lit) - 1               \
	}
#define C(...)                                                                 \
	{                                                                      \
		.set = true, .cpus = { __VA_ARGS__, -1 }                       \
	}
#define CEMPTY                                                                 \
	{                                                                      \
		.set = true, .cpus = { -1 }                                    \
	}

struct trow {
	uint32_t tgid, tid;
	const char *comm;
	int cgroup; /* -1 absent */
	struct cell utime, delta, running, state, wchan, cpus, load;
};

/* In (tgid, tid) order: the order the snapshot must have. */
static const struct trow sample_threads[] = {
	{50, 50, "init", 0, U(0), I(-5), U(1), U('S'), S("do_wait"),
	 C(0, 1, 2, 3), U(100)},
	{100, 100, "we\"ird\\\x01\xff", 1, ABSENT, I(0), U(0), U('R'), ABSENT,
	 C(0, 2, 4), ABSENT},
	{100, 101, "worker/1", -1, U(12345678901234ull), I(INT64_MIN), ABSENT,
	 U('D'), S("bad\xc3\x28utf8\"q\n"), CEMPTY, U(0)},
	{100, 102, "worker/2", 1, U(7), I(INT64_MAX), U(1), ABSENT, S(""),
	 ABSENT, U(10000)},
	{200, 200, "\xc3\xa9moji\xe2\x9c\x93", 2, U(UINT64_MAX), I(-1), U(0),
	 U('Z'), S("ep_poll"), C(1, 63, 64, 127, 128), U(5)},
	{200, 201, "tab\there", 2, U(1), I(1), U(1), U('S'),
	 S("futex_wait_queue"),
	 C(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18),
	 U(1)},
	{300, 300, "p300", 0, U(2), ABSENT, ABSENT, ABSENT, ABSENT, ABSENT,
	 ABSENT},
};
#define N_THREADS (sizeof(sample_threads) / sizeof(sample_threads[0]))

struct prow {
	uint32_t tgid;
	const char *comm;
	uint32_t nthreads;
	struct cell rss, nice;
};

static const struct prow sample_procs[] = {
	{50, "init", 1, U(1048576), I(0)},
	{100, "we\"ird\\\x01\xff", 3, ABSENT, I(-20)},
	{200, "\xc3\xa9moji\xe2\x9c\x93", 2, U(0), I(19)},
	{300, "p300", 1, U(4096), ABSENT},
};
#define N_PROCS (sizeof(sample_procs) / sizeof(sample_procs[0]))

static const char *const sample_cgroups[] = {"/", "/system.slice/odd\"n\\x",
					     "/user.slice"};
static const struct cell sample_cg_usage[] = {U(1000), ABSENT, U(0)};

/* Where each process lives: spans deliberately out of tgid order, workers
 * holding processes in non-tgid order, one process's threads out of tid
 * order, and one stray thread row no span covers. */
struct placement {
	uint32_t tgid;
	uint16_t worker;
	uint32_t tids[3];
	uint32_t n;
};
static const struct placement sample_place[] = {
	{300, 2, {300}, 1},
	{100, 0, {102, 100, 101}, 3},
	{200, 1, {200, 201}, 2},
	{50, 0, {50}, 1},
};

static const struct trow *thread_of(uint32_t tid)
{
	for (size_t i = 0; i < N_THREADS; i++)
		if (sample_threads[i].tid == tid)
			return &sample_threads[i];
	return NULL;
}

static const struct prow *proc_of(uint32_t tgid)
{
	for (size_t i = 0; i < N_PROCS; i++)
		if (sample_procs[i].tgid == tgid)
			return &sample_procs[i];
	return NULL;
}

static uint64_t blob(struct ctp_capture *cap, const char *s, size_t n)
{
	int64_t id = ctp_blobpool_intern(cap->blobs, s, n);
	if (id < 0)
		abort();
	return (uint64_t)id;
}

static uint64_t cpuset_blob(struct ctp_capture *cap, const int *cpus)
{
	unsigned char b[32] = {0};
	size_t len = 0;
	for (size_t i = 0; cpus[i] >= 0; i++) {
		b[cpus[i] / 8] |= (unsigned char)(1u << (cpus[i] % 8));
		size_t w = ((size_t)cpus[i] / 64 + 1) * 8;
		if (w > len)
			len = w;
	}
	return blob(cap, (const char *)b, len);
}

static void put(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
		uint32_t ident, int fid, const struct cell *c)
{
	const struct ctp_field *f = ctp_registry_get(&cap->reg, (uint32_t)fid);
	uint64_t v = c->v;
	if (!c->set)
		return;
	if (f->type == CTP_TYPE_STRING)
		v = blob(cap, c->s, c->slen);
	else if (f->type == CTP_TYPE_CPUSET)
		v = cpuset_blob(cap, c->cpus);
	if (ctp_table_set(t, row, ident + f->col, v) < 0)
		abort();
}

static char *xstrdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;
	if (s && !d)
		abort();
	return d;
}

static void add_plugin(struct ctp_capture *cap, const char *name,
		       const char *path, const char *version,
		       const char *reason, uint8_t status, bool required)
{
	struct ctp_plugin_info *p = &cap->plugins[cap->n_plugins++];
	p->name = xstrdup(name);
	p->path = xstrdup(path);
	p->version = xstrdup(version);
	p->reason = xstrdup(reason);
	p->status = status;
	p->required = required;
}

#define SAMPLE_HINT "run as root or grant CAP_NET_ADMIN (3 of 42 probes: EPERM)"

static struct ctp_capture *build_sample(bool hostname)
{
	struct ctp_capture *cap;
	if (ctp_capture_new(3, &cap) < 0)
		abort();

	cap->plugins = calloc(3, sizeof(*cap->plugins));
	if (!cap->plugins)
		abort();
	add_plugin(cap, "alpha", "/usr/lib/ctprof/plugins/alpha.so", "1.2.3",
		   NULL, CTP_PST_LOADED, true);
	add_plugin(cap, "beta", NULL, NULL,
		   "dlopen: cannot open shared object file", CTP_PST_FAILED,
		   false);
	add_plugin(cap, "gamma", "/x/gamma.so", NULL, "disabled in config",
		   CTP_PST_DISABLED, false);
	struct ctp_plugin_info *a = &cap->plugins[0];
	/* beta and gamma keep a NULL hint: written as nil. */
	a->hint = xstrdup(SAMPLE_HINT);
	a->time_ns = 123456789;
	a->calls = 42;
	a->errors = 1;
	a->vanished = 2;
	a->n_summary = 2;
	a->summary_name[0] = xstrdup("probes");
	a->summary[0] = 7;
	a->summary_name[1] = xstrdup("skipped");
	a->summary[1] = 0;

	for (int i = 0; i < F_COUNT; i++)
		if (ctp_registry_add(&cap->reg, 0, &sample_fields[i]) != i)
			abort();

	/* Host. */
	if (ctp_table_add_row(&cap->host) != 0)
		abort();
	struct cell hm = U(8589934592ull), hn = S("box-1"),
		    hc = C(0, 1, 2, 3, 8, 9, 10, 11, 64, 66, 67, 68, 69, 70);
	put(cap, &cap->host, 0, CTP_HOST_IDENT, F_HOST_MEM, &hm);
	put(cap, &cap->host, 0, CTP_HOST_IDENT, F_HOST_NAME, &hn);
	put(cap, &cap->host, 0, CTP_HOST_IDENT, F_HOST_CPUS, &hc);

	/* Cgroups. */
	for (size_t i = 0; i < 3; i++) {
		int64_t r = ctp_table_add_row(&cap->cgroups);
		if (r < 0)
			abort();
		ctp_table_set(&cap->cgroups, (uint32_t)r, CTP_CCOL_PATH,
			      blob(cap, sample_cgroups[i],
				   strlen(sample_cgroups[i])));
		put(cap, &cap->cgroups, (uint32_t)r, CTP_CGROUP_IDENT,
		    F_CG_USAGE, &sample_cg_usage[i]);
	}

	/* Processes and threads, placed per worker. */
	size_t np = sizeof(sample_place) / sizeof(sample_place[0]);
	cap->spans = calloc(np, sizeof(*cap->spans));
	if (!cap->spans)
		abort();
	cap->n_spans = np;
	for (size_t i = 0; i < np; i++) {
		const struct placement *pl = &sample_place[i];
		const struct prow *p = proc_of(pl->tgid);
		struct ctp_table *pt = &cap->procs[pl->worker];
		struct ctp_table *tt = &cap->threads[pl->worker];
		uint32_t prow = (uint32_t)ctp_table_add_row(pt);
		ctp_table_set(pt, prow, CTP_PCOL_TGID, p->tgid);
		ctp_table_set(pt, prow, CTP_PCOL_COMM,
			      blob(cap, p->comm, strlen(p->comm)));
		ctp_table_set(pt, prow, CTP_PCOL_NTHREADS, pl->n);
		put(cap, pt, prow, CTP_PROCESS_IDENT, F_RSS, &p->rss);
		put(cap, pt, prow, CTP_PROCESS_IDENT, F_NICE, &p->nice);
		cap->spans[i] = (struct ctp_span){.tgid = pl->tgid,
						  .worker = pl->worker,
						  .proc_row = prow,
						  .thread_row = tt->nrows,
						  .nthreads = pl->n};
		for (uint32_t k = 0; k < pl->n; k++) {
			const struct trow *t = thread_of(pl->tids[k]);
			uint32_t r = (uint32_t)ctp_table_add_row(tt);
			ctp_table_set(tt, r, CTP_TCOL_TID, t->tid);
			ctp_table_set(tt, r, CTP_TCOL_TGID, t->tgid);
			ctp_table_set(tt, r, CTP_TCOL_COMM,
				      blob(cap, t->comm, strlen(t->comm)));
			if (t->cgroup >= 0)
				ctp_table_set(tt, r, CTP_TCOL_CGROUP,
					      (uint64_t)t->cgroup);
			uint32_t id = CTP_THREAD_IDENT;
			put(cap, tt, r, id, F_UTIME, &t->utime);
			put(cap, tt, r, id, F_DELTA, &t->delta);
			put(cap, tt, r, id, F_RUNNING, &t->running);
			put(cap, tt, r, id, F_STATE, &t->state);
			put(cap, tt, r, id, F_WCHAN, &t->wchan);
			put(cap, tt, r, id, F_CPUS, &t->cpus);
			put(cap, tt, r, id, F_LOAD, &t->load);
		}
	}
	/* A stray row in worker 2 that no span covers must not be written. */
	struct ctp_table *t2 = &cap->threads[2];
	uint32_t stray = (uint32_t)ctp_table_add_row(t2);
	ctp_table_set(t2, stray, CTP_TCOL_TID, 999);
	ctp_table_set(t2, stray, CTP_TCOL_TGID, 300);
	ctp_table_set(t2, stray,
		      CTP_THREAD_IDENT +
			      ctp_registry_get(&cap->reg, F_NEVER)->col,
		      5);

	cap->rf = (struct ctp_readfail){.tids_walked = 9,
					.tids_recorded = 7,
					.tids_vanished = 2,
					.tgids_walked = 5,
					.tgids_vanished = 1,
					.n_files = 3};
	cap->rf.file[0] = xstrdup("stat");
	cap->rf.file[1] = xstrdup("status");
	cap->rf.file[2] = xstrdup("io");
	cap->rf.failures[0] = 0;
	cap->rf.failures[1] = 3;
	cap->rf.failures[2] = 5;
	/* status: one of three did not exist; io: none existed, and io is
	 * gated. */
	cap->rf.missing[1] = 1;
	cap->rf.missing[2] = 5;
	cap->rf.denied[1] = 2;
	cap->rf.gate[2] = xstrdup("CONFIG_TASK_IO_ACCOUNTING");

	cap->start_realtime_ns = 1700000000123456789ull;
	cap->end_realtime_ns = 1700000002623456789ull;
	cap->start_mono_ns = 1000;
	cap->end_mono_ns = 2500001000ull;
	cap->proc_root = xstrdup("/proc");
	cap->sys_root = xstrdup("/sys");
	cap->cgroup_root = xstrdup("/sys/fs/cgroup");
	cap->config_path = xstrdup("/etc/ctprof/collectors.yaml");
	cap->kernel_release = xstrdup("6.1.0-test");
	if (hostname)
		cap->hostname = xstrdup("sample-host");
	return cap;
}

/* ---- Helpers ---- */

static char tmpdir[512];

static int setup_dir(void **state)
{
	(void)state;
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/ctp-snap-XXXXXX",
		 base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	DIR *d = opendir(tmpdir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(tmpdir);
	return 0;
}

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void write_sample(const char *path, bool hostname)
{
	struct ctp_capture *cap = build_sample(hostname);
	char err[512];
	uint64_t bytes = 0;
	int r = ctp_writer_write(cap, path, 3, "9.9.9-test", NULL, &bytes, err,
				 sizeof(err));
	if (r < 0)
		fail_msg("write %s: %s", path, err);
	assert_true(bytes > 0);
	ctp_capture_free(cap);
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void check_cell(const struct ctp_value *v, uint8_t type,
		       const struct cell *c, const char *what)
{
	if (!c->set) {
		if (v->type != CTP_VALUE_ABSENT)
			fail_msg("%s: expected absent, got type %u", what,
				 v->type);
		return;
	}
	if (v->type != type)
		fail_msg("%s: expected type %u, got %u", what, type, v->type);
	switch (type) {
	case CTP_TYPE_U64:
		assert_true(v->u64 == c->v);
		break;
	case CTP_TYPE_I64:
		assert_true(v->i64 == (int64_t)c->v);
		break;
	case CTP_TYPE_BOOL:
		assert_int_equal(v->b, c->v != 0);
		break;
	case CTP_TYPE_CHAR:
		assert_int_equal(v->c, (unsigned char)c->v);
		break;
	case CTP_TYPE_STRING:
		assert_int_equal(v->str.len, c->slen);
		assert_memory_equal(v->str.ptr, c->s, c->slen);
		break;
	case CTP_TYPE_CPUSET: {
		/* Expand the ranges back into CPUs and compare. */
		size_t k = 0;
		for (size_t i = 0; i < v->cpuset.n; i++)
			for (uint32_t cpu = v->cpuset.r[2 * i];
			     cpu <= v->cpuset.r[2 * i + 1]; cpu++) {
				if (c->cpus[k] != (int)cpu)
					fail_msg("%s: cpu %u unexpected", what,
						 cpu);
				k++;
			}
		assert_int_equal(c->cpus[k], -1);
		break;
	}
	}
}

static void check_bytes(struct ctp_bytes b, const char *s)
{
	assert_non_null(b.ptr);
	assert_int_equal(b.len, strlen(s));
	assert_memory_equal(b.ptr, s, b.len);
}

/* ---- Round trip ---- */

/*
 * Every value of the sample (written with a hostname), as read back.
 * legacy: the kept golden file, written before plugins[].hint and
 * read_failures.missing/gates existed: the reader must give nil hints, no
 * missing files and no gates for it.
 */
static void check_sample(const struct ctp_snap *snap, bool legacy)
{
	const struct ctp_snap_header *h = ctp_snap_header(snap);
	assert_int_equal(h->version, 1);
	assert_string_equal(h->tool_name, "ctprof-core");
	assert_string_equal(h->tool_version, "9.9.9-test");
	assert_true(h->start_realtime_ns == 1700000000123456789ull);
	assert_true(h->end_realtime_ns == 1700000002623456789ull);
	assert_true(h->duration_ns == 2500000000ull);
	assert_int_equal(h->workers, 3);
	assert_string_equal(h->proc_root, "/proc");
	assert_string_equal(h->sys_root, "/sys");
	assert_string_equal(h->cgroup_root, "/sys/fs/cgroup");
	assert_string_equal(h->config_path, "/etc/ctprof/collectors.yaml");
	assert_string_equal(h->kernel_release, "6.1.0-test");
	assert_string_equal(h->hostname, "sample-host");

	/* Every registered field is listed, even the all-absent one. */
	assert_int_equal(ctp_snap_n_fields(snap), F_COUNT);
	const struct ctp_snap_field *fs = ctp_snap_fields(snap);
	for (int i = 0; i < F_COUNT; i++) {
		const struct ctp_field_desc *d = &sample_fields[i];
		assert_string_equal(fs[i].name, d->name);
		assert_string_equal(fs[i].plugin, "alpha");
		assert_string_equal(fs[i].help, d->help ? d->help : "");
		assert_int_equal(fs[i].scope, d->scope);
		assert_int_equal(fs[i].type, d->type);
		assert_int_equal(fs[i].unit, d->unit);
		assert_int_equal(fs[i].kind, d->kind);
		assert_int_equal(fs[i].rule, d->rule);
		assert_int_equal(fs[i].index, i);
		assert_ptr_equal(ctp_snap_field_find(snap, d->name), &fs[i]);
	}
	assert_null(ctp_snap_field_find(snap, "alpha.nope"));

	assert_int_equal(ctp_snap_n_plugins(snap), 3);
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);
	assert_string_equal(p[0].name, "alpha");
	assert_int_equal(p[0].status, CTP_PST_LOADED);
	assert_string_equal(p[0].version, "1.2.3");
	assert_string_equal(p[0].path, "/usr/lib/ctprof/plugins/alpha.so");
	assert_null(p[0].reason);
	if (legacy)
		assert_null(p[0].hint);
	else
		assert_string_equal(p[0].hint, SAMPLE_HINT);
	assert_true(p[0].required);
	assert_int_equal(p[0].time_ns, 123456789);
	assert_int_equal(p[0].calls, 42);
	assert_int_equal(p[0].errors, 1);
	assert_int_equal(p[0].vanished, 2);
	assert_int_equal(p[0].n_summary, 2);
	assert_string_equal(p[0].summary_name[0], "probes");
	assert_int_equal(p[0].summary[0], 7);
	assert_string_equal(p[0].summary_name[1], "skipped");
	assert_int_equal(p[0].summary[1], 0);
	assert_string_equal(p[1].name, "beta");
	assert_int_equal(p[1].status, CTP_PST_FAILED);
	assert_null(p[1].version);
	assert_null(p[1].path);
	assert_string_equal(p[1].reason,
			    "dlopen: cannot open shared object file");
	assert_null(p[1].hint);
	assert_false(p[1].required);
	assert_int_equal(p[1].n_summary, 0);
	assert_int_equal(p[2].status, CTP_PST_DISABLED);
	assert_string_equal(p[2].reason, "disabled in config");
	assert_null(p[2].hint);

	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	assert_int_equal(rf->tids_walked, 9);
	assert_int_equal(rf->tids_recorded, 7);
	assert_int_equal(rf->tids_vanished, 2);
	assert_int_equal(rf->tgids_walked, 5);
	assert_int_equal(rf->tgids_vanished, 1);
	assert_int_equal(rf->n_files, 3);
	assert_string_equal(rf->file[0], "stat");
	assert_int_equal(rf->failures[0], 0);
	assert_string_equal(rf->file[1], "status");
	assert_int_equal(rf->failures[1], 3);
	assert_string_equal(rf->file[2], "io");
	assert_int_equal(rf->failures[2], 5);
	assert_string_equal(rf->dominant_file, "io");
	assert_int_equal(rf->missing[0], 0);
	assert_int_equal(rf->missing[1], legacy ? 0 : 1);
	assert_int_equal(rf->missing[2], legacy ? 0 : 5);
	assert_int_equal(rf->denied[0], 0);
	assert_int_equal(rf->denied[1], legacy ? 0 : 2);
	assert_int_equal(rf->denied[2], 0);
	assert_null(rf->gate[0]);
	assert_null(rf->gate[1]);
	if (legacy)
		assert_null(rf->gate[2]);
	else
		assert_string_equal(rf->gate[2], "CONFIG_TASK_IO_ACCOUNTING");

	/* Host. */
	struct cell hm = U(8589934592ull), hn = S("box-1"),
		    hc = C(0, 1, 2, 3, 8, 9, 10, 11, 64, 66, 67, 68, 69, 70),
		    hs = ABSENT;
	struct ctp_value v = ctp_snap_get(snap, &fs[F_HOST_MEM], 0);
	check_cell(&v, CTP_TYPE_U64, &hm, "host_mem");
	v = ctp_snap_get(snap, &fs[F_HOST_NAME], 0);
	check_cell(&v, CTP_TYPE_STRING, &hn, "host_name");
	v = ctp_snap_get(snap, &fs[F_HOST_CPUS], 0);
	check_cell(&v, CTP_TYPE_CPUSET, &hc, "host_cpus");
	assert_int_equal(v.cpuset.n, 4); /* 0-3, 8-11, 64, 66-70 */
	v = ctp_snap_get(snap, &fs[F_HOST_SKEW], 0);
	check_cell(&v, CTP_TYPE_I64, &hs, "host_skew");

	/* Cgroups. */
	const struct ctp_snap_table *cg =
		ctp_snap_table(snap, CTP_SCOPE_CGROUP);
	assert_int_equal(cg->rows, 3);
	for (size_t i = 0; i < 3; i++) {
		check_bytes(cg->path[i], sample_cgroups[i]);
		v = ctp_snap_get(snap, &fs[F_CG_USAGE], i);
		check_cell(&v, CTP_TYPE_U64, &sample_cg_usage[i], "cg_usage");
	}

	/* Processes, in tgid order whatever the spans said. */
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	assert_int_equal(pt->rows, N_PROCS);
	assert_null(pt->tid);
	for (size_t i = 0; i < N_PROCS; i++) {
		const struct prow *e = &sample_procs[i];
		assert_int_equal(pt->tgid[i], e->tgid);
		check_bytes(pt->comm[i], e->comm);
		assert_int_equal(pt->nthreads[i], e->nthreads);
		v = ctp_snap_get(snap, &fs[F_RSS], i);
		check_cell(&v, CTP_TYPE_U64, &e->rss, "rss");
		v = ctp_snap_get(snap, &fs[F_NICE], i);
		check_cell(&v, CTP_TYPE_I64, &e->nice, "nice");
	}

	/* Threads, in (tgid, tid) order; the stray row is not there. */
	const struct ctp_snap_table *tt =
		ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(tt->rows, N_THREADS);
	for (size_t i = 0; i < N_THREADS; i++) {
		const struct trow *e = &sample_threads[i];
		char what[64];
		snprintf(what, sizeof(what), "thread %u", e->tid);
		assert_int_equal(tt->tid[i], e->tid);
		assert_int_equal(tt->tgid[i], e->tgid);
		check_bytes(tt->comm[i], e->comm);
		assert_int_equal(tt->cgroup[i], e->cgroup);
		v = ctp_snap_get(snap, &fs[F_UTIME], i);
		check_cell(&v, CTP_TYPE_U64, &e->utime, what);
		v = ctp_snap_get(snap, &fs[F_DELTA], i);
		check_cell(&v, CTP_TYPE_I64, &e->delta, what);
		v = ctp_snap_get(snap, &fs[F_RUNNING], i);
		check_cell(&v, CTP_TYPE_BOOL, &e->running, what);
		v = ctp_snap_get(snap, &fs[F_STATE], i);
		check_cell(&v, CTP_TYPE_CHAR, &e->state, what);
		v = ctp_snap_get(snap, &fs[F_WCHAN], i);
		check_cell(&v, CTP_TYPE_STRING, &e->wchan, what);
		v = ctp_snap_get(snap, &fs[F_CPUS], i);
		check_cell(&v, CTP_TYPE_CPUSET, &e->cpus, what);
		v = ctp_snap_get(snap, &fs[F_LOAD], i);
		check_cell(&v, CTP_TYPE_U64, &e->load, what);
		v = ctp_snap_get(snap, &fs[F_NEVER], i);
		assert_int_equal(v.type, CTP_VALUE_ABSENT);
	}
	/* A measured zero stays a zero, an absent stays absent. */
	v = ctp_snap_get(snap, &fs[F_UTIME], 0);
	assert_int_equal(v.type, CTP_TYPE_U64);
	assert_true(v.u64 == 0);
	v = ctp_snap_get(snap, &fs[F_UTIME], 1);
	assert_int_equal(v.type, CTP_VALUE_ABSENT);
	/* The all-absent column is omitted; the others are there. */
	assert_null(tt->col[F_NEVER]);
	assert_non_null(tt->col[F_UTIME]);
	assert_null(tt->col[F_RSS]);
}

/*
 * Cells start one byte wide and widen on the first value that does not
 * fit: every value reads back as set, in every block, across each width's
 * edges, whichever order the widths come in; absent cells stay absent.
 */
static void test_table_cells(void **state)
{
	(void)state;
	static const uint64_t edges[] = {0,
					 1,
					 255,
					 256,
					 65535,
					 65536,
					 UINT32_MAX,
					 1ull << 32,
					 UINT64_MAX - 1,
					 UINT64_MAX,
					 12345678901ull};
	const uint32_t ne = sizeof(edges) / sizeof(edges[0]);
	const uint32_t nrows = 3 * CTP_BLOCK_ROWS + 7;
	struct ctp_table t;
	ctp_table_init(&t);
	for (uint32_t r = 0; r < nrows; r++)
		assert_int_equal(ctp_table_add_row(&t), (int64_t)r);
	/* Column 3: every other row, widths growing up the block; column 9:
	 * the widest value first, in the middle of the block. */
	for (uint32_t r = 0; r < nrows; r += 2)
		assert_int_equal(ctp_table_set(&t, r, 3, edges[(r / 2) % ne]),
				 0);
	for (uint32_t r = nrows; r-- > 0;)
		assert_int_equal(
			ctp_table_set(&t, r, 9, edges[(r * 7 + 3) % ne]), 0);
	for (uint32_t r = 0; r < nrows; r++) {
		uint64_t v = 42;
		if (r % 2) {
			assert_false(ctp_table_get(&t, r, 3, &v));
		} else {
			assert_true(ctp_table_get(&t, r, 3, &v));
			assert_int_equal(v, edges[(r / 2) % ne]);
		}
		assert_true(ctp_table_get(&t, r, 9, &v));
		assert_int_equal(v, edges[(r * 7 + 3) % ne]);
		assert_false(ctp_table_get(&t, r, 4, &v));
	}
	/* A block that never needs more than a byte keeps reading as one. */
	for (uint32_t r = 0; r < CTP_BLOCK_ROWS; r++)
		assert_int_equal(ctp_table_set(&t, r, 20, r % 200), 0);
	uint64_t v;
	assert_true(ctp_table_get(&t, 1000, 20, &v));
	assert_int_equal(v, 1000 % 200);
	ctp_table_clear(&t, 1000, 20);
	assert_false(ctp_table_get(&t, 1000, 20, &v));
	ctp_table_truncate(&t, 5);
	assert_int_equal(ctp_table_add_row(&t), 5);
	assert_false(ctp_table_get(&t, 5, 9, &v));
	assert_true(ctp_table_get(&t, 4, 3, &v));
	assert_int_equal(v, edges[2]);
	ctp_table_done(&t);
}

static void test_roundtrip(void **state)
{
	(void)state;
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap = NULL;
	path_in(path, sizeof(path), "rt.ctprof");
	write_sample(path, true);
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	check_sample(snap, false);
	ctp_snap_free(snap);
}

/*
 * A sample written by the first v1 writer and kept in the tree: whatever
 * the writer becomes, version-1 files must keep reading the same. (The
 * file is `test_writer_reader --write-sample`'s output of then, without
 * plugins[].hint, read_failures.missing and read_failures.gates.)
 */
static void test_golden_v1(void **state)
{
	(void)state;
	char err[512];
	struct ctp_snap *snap = NULL;
	const char *path = CTP_TEST_FIXTURES "/snapshots/sample-v1.ctprof";
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	check_sample(snap, true);
	ctp_snap_free(snap);
}

/*
 * A capture no plugin added exited rows to writes the very bytes it wrote
 * before the exited table existed: the kept file is the MessagePack inside
 * `test_writer_reader --write-sample`'s output of the commit before it.
 * Regenerate it (zstd -dc) only for a deliberate change of the sample.
 */
static void test_bytes_unchanged(void **state)
{
	(void)state;
	char path[PATH_MAX];
	size_t zl, kl;
	path_in(path, sizeof(path), "same.ctprof");
	write_sample(path, true);
	void *z = slurp(path, &zl);
	void *kept = slurp(CTP_TEST_FIXTURES
			   "/snapshots/sample-v1-before-exited.msgpack",
			   &kl);
	unsigned long long n = ZSTD_getFrameContentSize(z, zl);
	if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR)
		n = 1 << 20;
	void *raw = malloc((size_t)n);
	assert_non_null(raw);
	size_t got = ZSTD_decompress(raw, (size_t)n, z, zl);
	assert_false(ZSTD_isError(got));
	assert_int_equal(got, kl);
	assert_memory_equal(raw, kept, kl);
	free(raw);
	free(kept);
	free(z);
}

/* Find key k of map m in the raw tree. */
static const msgpack_object *mget(const msgpack_object *m, const char *k)
{
	if (m->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *key = &m->via.map.ptr[i].key;
		if (key->type == MSGPACK_OBJECT_STR &&
		    key->via.str.size == strlen(k) &&
		    memcmp(key->via.str.ptr, k, strlen(k)) == 0)
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

static bool key_is(const msgpack_object *k, const char *name)
{
	return k->type == MSGPACK_OBJECT_STR &&
	       k->via.str.size == strlen(name) &&
	       memcmp(k->via.str.ptr, name, k->via.str.size) == 0;
}

/* The keys of map m are exactly `keys`, in that order. */
static void assert_keys(const msgpack_object *m, const char *const *keys,
			size_t n, const char *what)
{
	assert_non_null(m);
	assert_int_equal(m->type, MSGPACK_OBJECT_MAP);
	if (m->via.map.size != n)
		fail_msg("%s has %u keys, expected %zu", what, m->via.map.size,
			 n);
	for (uint32_t i = 0; i < n; i++)
		if (!key_is(&m->via.map.ptr[i].key, keys[i]))
			fail_msg("%s: key %u is not \"%s\"", what, i, keys[i]);
}

static void test_key_order_and_hostname(void **state)
{
	(void)state;
	static const char *const order[] = {
		"format",  "version",	"tool",		 "capture",
		"fields",  "plugins",	"read_failures", "host",
		"cgroups", "processes", "threads"};
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap;
	path_in(path, sizeof(path), "nohost.ctprof");
	write_sample(path, false);
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	const msgpack_object *root = ctp_snap_root(snap);
	assert_int_equal(root->type, MSGPACK_OBJECT_MAP);
	assert_int_equal(root->via.map.size, 11);
	for (uint32_t i = 0; i < 11; i++) {
		const msgpack_object *k = &root->via.map.ptr[i].key;
		assert_int_equal(k->via.str.size, strlen(order[i]));
		assert_memory_equal(k->via.str.ptr, order[i], k->via.str.size);
	}
	/* hint right after reason; missing before dominant_file and gates
	 * last, both always written. */
	static const char *const plugin_keys[] = {
		"name",	   "status", "reason",	 "hint",
		"version", "path",   "required", "time_ns",
		"calls",   "errors", "vanished", "summary"};
	static const char *const rf_keys[] = {"tids_walked",	"tids_recorded",
					      "tids_vanished",	"tgids_walked",
					      "tgids_vanished", "files",
					      "missing",	"denied",
					      "dominant_file",	"gates"};
	const msgpack_object *plugins = mget(root, "plugins");
	assert_non_null(plugins);
	assert_int_equal(plugins->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(plugins->via.array.size, 3);
	for (uint32_t i = 0; i < 3; i++) {
		const msgpack_object *p = &plugins->via.array.ptr[i];
		assert_keys(p, plugin_keys, 12, "plugins[i]");
		/* alpha has one, the others nil (not absent). */
		assert_int_equal(mget(p, "hint")->type,
				 i ? MSGPACK_OBJECT_NIL : MSGPACK_OBJECT_STR);
	}
	const msgpack_object *rf = mget(root, "read_failures");
	assert_keys(rf, rf_keys, 10, "read_failures");
	assert_int_equal(mget(rf, "missing")->via.map.size, 3);
	assert_int_equal(mget(rf, "denied")->via.map.size, 3);
	assert_int_equal(mget(rf, "gates")->via.map.size, 1);

	const msgpack_object *capture = mget(root, "capture");
	assert_non_null(capture);
	assert_null(mget(capture, "hostname"));
	assert_null(ctp_snap_header(snap)->hostname);
	ctp_snap_free(snap);
}

/*
 * When each process was read (FORMAT.md §7.2 `read_boottime_ns`): written
 * after nthreads, in tgid order whichever worker read the process, nil
 * where unset; absent from a capture that set none (the sample, every
 * file before it), and then read as NULL.
 */
static void test_read_times(void **state)
{
	(void)state;
	static const char *const keys[] = {
		"rows",	  "tgid", "comm", "nthreads", "read_boottime_ns",
		"columns"};
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap;
	struct ctp_capture *cap = build_sample(false);
	/* Every process but the first placed (worker order is not tgid
	 * order), its tgid in ms since boot. */
	for (size_t i = 1; i < cap->n_spans; i++)
		ctp_table_set(&cap->procs[cap->spans[i].worker],
			      cap->spans[i].proc_row, CTP_PCOL_READ_NS,
			      cap->spans[i].tgid * 1000000ull);
	path_in(path, sizeof(path), "read.ctprof");
	uint64_t bytes = 0;
	if (ctp_writer_write(cap, path, 3, "9.9.9-test", NULL, &bytes, err,
			     sizeof(err)) < 0)
		fail_msg("write %s: %s", path, err);
	uint32_t unset = cap->spans[0].tgid;
	ctp_capture_free(cap);
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	const msgpack_object *pm = mget(ctp_snap_root(snap), "processes");
	assert_keys(pm, keys, 6, "processes");
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	assert_non_null(pt->read_ns);
	for (size_t i = 0; i < pt->rows; i++)
		assert_int_equal(
			pt->read_ns[i],
			pt->tgid[i] == unset ? 0 : pt->tgid[i] * 1000000ull);
	ctp_snap_free(snap);
	/* None set: no key, and a reader of it has none. */
	path_in(path, sizeof(path), "noread.ctprof");
	write_sample(path, false);
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);
	pm = mget(ctp_snap_root(snap), "processes");
	assert_null(mget(pm, "read_boottime_ns"));
	assert_null(ctp_snap_table(snap, CTP_SCOPE_PROCESS)->read_ns);
	ctp_snap_free(snap);
}

/* ---- Hostile files ---- */

/* Open a buffer that must be refused; the message must contain `want`. */
static void expect_refused(const void *buf, size_t len, uint64_t cap,
			   const char *want)
{
	char err[512] = "";
	struct ctp_snap *snap = NULL;
	int r = ctp_snap_open_buf("bad.ctprof", buf, len, cap, &snap, err,
				  sizeof(err));
	if (r >= 0)
		fail_msg("a bad file was accepted (want \"%s\")", want);
	assert_null(snap);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not mention \"%s\"", err, want);
	assert_non_null(strstr(err, "bad.ctprof: "));
}

/* A zstd frame of raw, with the content checksum unless `no_sum`. */
static void *zcompress_with(const void *raw, size_t n, bool no_sum,
			    size_t *out_len)
{
	size_t bound = ZSTD_compressBound(n);
	void *z = malloc(bound);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	assert_non_null(z);
	assert_non_null(c);
	assert_false(ZSTD_isError(
		ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)));
	assert_false(ZSTD_isError(
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, !no_sum)));
	size_t r = ZSTD_compress2(c, z, bound, raw, n);
	assert_false(ZSTD_isError(r));
	ZSTD_freeCCtx(c);
	*out_len = r;
	return z;
}

static void *zcompress(const void *raw, size_t n, size_t *out_len)
{
	return zcompress_with(raw, n, false, out_len);
}

static void *sample_bytes(size_t *len)
{
	char path[PATH_MAX];
	path_in(path, sizeof(path), "hostile.ctprof");
	write_sample(path, false);
	return slurp(path, len);
}

static void test_truncated_and_corrupt(void **state)
{
	(void)state;
	size_t len;
	unsigned char *good = sample_bytes(&len);
	assert_true(len > 64);

	expect_refused(good, 0, CAP_DEFAULT, "empty file");
	expect_refused(good, 3, CAP_DEFAULT, "too short");
	size_t cuts[] = {4, 5, 9, 17, len / 3, len / 2, len - 5, len - 1};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		expect_refused(good, cuts[i], CAP_DEFAULT, "truncated");

	/* A flipped byte in the body: the frame checksum or the decoder
	 * catches it. */
	unsigned char *bad = malloc(len);
	assert_non_null(bad);
	memcpy(bad, good, len);
	bad[len / 2] ^= 0x5a;
	expect_refused(bad, len, CAP_DEFAULT, "zstd");
	/* Every single-byte corruption must be refused or decode cleanly;
	 * never crash (ASan run). */
	for (size_t i = 0; i < len; i++) {
		char err[256];
		struct ctp_snap *s = NULL;
		memcpy(bad, good, len);
		bad[i] ^= 0xff;
		if (ctp_snap_open_buf("x", bad, len, CAP_DEFAULT, &s, err,
				      sizeof(err)) == 0)
			ctp_snap_free(s);
		else
			assert_true(err[0] != '\0');
	}
	/* Trailing bytes after the frame. */
	unsigned char *tail = malloc(len + 3);
	assert_non_null(tail);
	memcpy(tail, good, len);
	memcpy(tail + len, "xyz", 3);
	expect_refused(tail, len + 3, CAP_DEFAULT, "trailing data");

	/* Not zstd at all. */
	const char *text = "format: ctprof-core-snapshot\n";
	expect_refused(text, strlen(text), CAP_DEFAULT, "not zstd-compressed");

	free(tail);
	free(bad);
	free(good);
}

/*
 * Mutate the decompressed MessagePack of the sample (every byte flipped in
 * turn, then cut at every offset), recompress, and open: the checksum no
 * longer hides the parser, which must refuse or accept, never crash.
 */
static void test_mutated_msgpack(void **state)
{
	(void)state;
	size_t len, zl;
	char err[512];
	void *good = sample_bytes(&len);
	struct ctp_snap *snap;
	if (ctp_snap_open_buf("x", good, len, CAP_DEFAULT, &snap, err,
			      sizeof(err)) < 0)
		fail_msg("%s", err);
	size_t n = ctp_snap_raw_size(snap);
	ctp_snap_free(snap);
	/* Recover the raw bytes with zstd directly. */
	unsigned char *raw = malloc(n), *mut = malloc(n);
	assert_non_null(raw);
	assert_non_null(mut);
	assert_int_equal(ZSTD_decompress(raw, n, good, len), n);

	size_t refused = 0, accepted = 0;
	for (size_t i = 0; i < 2 * n; i++) {
		size_t m = n;
		memcpy(mut, raw, n);
		if (i < n)
			mut[i] ^= (unsigned char)(i % 2 ? 0xff : 0x01);
		else
			m = i - n;
		void *z = zcompress(mut, m, &zl);
		err[0] = '\0';
		if (ctp_snap_open_buf("x", z, zl, CAP_DEFAULT, &snap, err,
				      sizeof(err)) == 0) {
			/* Whatever was accepted must be usable. */
			const struct ctp_snap_field *fs = ctp_snap_fields(snap);
			for (size_t f = 0; f < ctp_snap_n_fields(snap); f++) {
				const struct ctp_snap_table *t =
					ctp_snap_table(snap, fs[f].scope);
				for (size_t r = 0; r < t->rows; r++)
					(void)ctp_snap_get(snap, &fs[f], r);
			}
			ctp_snap_free(snap);
			accepted++;
		} else {
			assert_true(err[0] != '\0');
			refused++;
		}
		free(z);
	}
	/* Every cut is refused; most flips are. */
	assert_true(refused >= n);
	assert_true(refused > accepted);
	free(raw);
	free(mut);
	free(good);
}

static void test_bad_msgpack(void **state)
{
	(void)state;
	size_t zl;
	void *z;

	/* Garbage that is not MessagePack. */
	const unsigned char junk[] = {0xc1, 0x00, 0x01};
	z = zcompress(junk, sizeof(junk), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "invalid byte 0xc1");
	free(z);

	/* An array header claiming 2^32-1 elements in 6 bytes. */
	const unsigned char huge[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x00};
	z = zcompress(huge, sizeof(huge), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "claims more elements");
	free(z);

	/* A map cut in the middle: between entries, inside a string. */
	const unsigned char cut[] = {0x82, 0xa1, 'a', 0x01};
	z = zcompress(cut, sizeof(cut), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "truncated");
	free(z);
	const unsigned char cut2[] = {0x81, 0xa5, 'a', 'b'};
	z = zcompress(cut2, sizeof(cut2), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "data ends inside an object");
	free(z);

	/* Two objects. */
	const unsigned char two[] = {0x80, 0x80};
	z = zcompress(two, sizeof(two), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "trailing garbage");
	free(z);

	/* Nesting deeper than msgpack-c's stack. */
	unsigned char deep[100];
	memset(deep, 0x91, sizeof(deep));
	deep[99] = 0xc0;
	z = zcompress(deep, sizeof(deep), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "corrupt MessagePack");
	free(z);

	/* Valid MessagePack, but not a map / not ours. */
	const unsigned char arr[] = {0x90};
	z = zcompress(arr, sizeof(arr), &zl);
	expect_refused(z, zl, CAP_DEFAULT, "not a ctprof-core snapshot");
	free(z);
}

/*
 * Re-pack the sample's decoded tree with one top-level key replaced (or,
 * with `add`, one extra key appended), compress, and return the bytes.
 */
typedef void (*repl_fn)(msgpack_packer *pk, const msgpack_object *old);

static void pk_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

static void *mutate(const char *key, repl_fn fn, bool add, size_t *zl)
{
	size_t len;
	char err[256];
	void *good = sample_bytes(&len);
	struct ctp_snap *snap;
	if (ctp_snap_open_buf("good", good, len, CAP_DEFAULT, &snap, err,
			      sizeof(err)) < 0)
		fail_msg("%s", err);
	const msgpack_object *root = ctp_snap_root(snap);
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, root->via.map.size + (add ? 1 : 0));
	for (uint32_t i = 0; i < root->via.map.size; i++) {
		const msgpack_object_kv *kv = &root->via.map.ptr[i];
		msgpack_pack_object(&pk, kv->key);
		if (!add && kv->key.via.str.size == strlen(key) &&
		    memcmp(kv->key.via.str.ptr, key, strlen(key)) == 0)
			fn(&pk, &kv->val);
		else
			msgpack_pack_object(&pk, kv->val);
	}
	if (add) {
		pk_str(&pk, key);
		fn(&pk, NULL);
	}
	void *z = zcompress(sb.data, sb.size, zl);
	msgpack_sbuffer_destroy(&sb);
	ctp_snap_free(snap);
	free(good);
	return z;
}

static void expect_mutation(const char *key, repl_fn fn, bool add,
			    const char *want)
{
	size_t zl;
	void *z = mutate(key, fn, add, &zl);
	if (want) {
		expect_refused(z, zl, CAP_DEFAULT, want);
	} else {
		char err[256];
		struct ctp_snap *s;
		if (ctp_snap_open_buf("ok", z, zl, CAP_DEFAULT, &s, err,
				      sizeof(err)) < 0)
			fail_msg("refused: %s", err);
		ctp_snap_free(s);
	}
	free(z);
}

static void r_format(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	pk_str(pk, "some-other-format");
}

static void r_version(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_uint64(pk, 999);
}

static void r_future(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "anything");
	msgpack_pack_array(pk, 0);
}

/* The comm threads_with gives every row (may hold a NUL byte). */
static const char *th_comm = "c";
static size_t th_comm_len = 1;

/* A threads table of one row with one column given by `col`. */
static void threads_with(msgpack_packer *pk, const char *name,
			 void (*col)(msgpack_packer *pk), uint64_t rows,
			 uint64_t tid_len, uint64_t cgroup)
{
	msgpack_pack_map(pk, 6);
	pk_str(pk, "rows");
	msgpack_pack_uint64(pk, rows);
	pk_str(pk, "tid");
	msgpack_pack_array(pk, tid_len);
	for (uint64_t i = 0; i < tid_len; i++)
		msgpack_pack_uint64(pk, 10 + i);
	pk_str(pk, "tgid");
	msgpack_pack_array(pk, rows);
	for (uint64_t i = 0; i < rows; i++)
		msgpack_pack_uint64(pk, 10);
	pk_str(pk, "comm");
	msgpack_pack_array(pk, rows);
	for (uint64_t i = 0; i < rows; i++) {
		msgpack_pack_str(pk, th_comm_len);
		msgpack_pack_str_body(pk, th_comm, th_comm_len);
	}
	pk_str(pk, "cgroup");
	msgpack_pack_array(pk, rows);
	for (uint64_t i = 0; i < rows; i++)
		msgpack_pack_uint64(pk, cgroup);
	pk_str(pk, "columns");
	msgpack_pack_map(pk, col ? 1 : 0);
	if (col) {
		pk_str(pk, name);
		col(pk);
	}
}

static void c_three(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 3);
	for (int i = 0; i < 3; i++)
		msgpack_pack_uint64(pk, 1);
}

static void c_str(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	pk_str(pk, "twelve");
}

static void c_neg(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_int64(pk, -3);
}

static void c_two_chars(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	pk_str(pk, "RS");
}

static void c_odd_cpuset(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 3);
	for (int i = 0; i < 3; i++)
		msgpack_pack_uint64(pk, (uint64_t)i);
}

static void c_desc_cpuset(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint64(pk, 8);
	msgpack_pack_uint64(pk, 9);
	msgpack_pack_uint64(pk, 0);
	msgpack_pack_uint64(pk, 3);
}

static void c_int_bool(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_uint64(pk, 1);
}

static void c_nil(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_nil(pk);
}

static void r_th_wrong_len(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.utime", c_three, 2, 2, 0);
}

static void r_th_str_u64(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.utime", c_str, 1, 1, 0);
}

static void r_th_neg_u64(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.utime", c_neg, 1, 1, 0);
}

static void r_th_char(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.state", c_two_chars, 1, 1, 0);
}

static void r_th_cpuset_odd(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.cpus", c_odd_cpuset, 1, 1, 0);
}

static void r_th_cpuset_desc(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.cpus", c_desc_cpuset, 1, 1, 0);
}

static void r_th_bool(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.running", c_int_bool, 1, 1, 0);
}

static void r_th_unknown_col(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.missing", c_nil, 1, 1, 0);
}

static void r_th_wrong_scope(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.rss", c_nil, 1, 1, 0);
}

static void r_th_tid_len(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.utime", c_nil, 1, 2, 0);
}

static void r_th_cgroup(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.utime", c_nil, 1, 1, 77);
}

static void r_th_nil_ok(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.utime", c_nil, 1, 1, 0);
}

static void c_nul_str(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_str(pk, 3);
	msgpack_pack_str_body(pk, "a\0b", 3);
}

static void r_th_nul_wchan(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	threads_with(pk, "alpha.wchan", c_nul_str, 1, 1, 0);
}

/* The sample's cgroups, all three paths with a NUL byte. */
static void r_cg_nul(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 3);
	pk_str(pk, "rows");
	msgpack_pack_uint64(pk, 3);
	pk_str(pk, "path");
	msgpack_pack_array(pk, 3);
	for (int i = 0; i < 3; i++) {
		msgpack_pack_str(pk, 3);
		msgpack_pack_str_body(pk, "/\0x", 3);
	}
	pk_str(pk, "columns");
	msgpack_pack_map(pk, 0);
}

/* The sample's fields with the first one's `type` replaced. */
static void r_fields_type(msgpack_packer *pk, const msgpack_object *o)
{
	msgpack_pack_array(pk, o->via.array.size);
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *m = &o->via.array.ptr[i];
		msgpack_pack_map(pk, m->via.map.size);
		for (uint32_t k = 0; k < m->via.map.size; k++) {
			const msgpack_object_kv *kv = &m->via.map.ptr[k];
			msgpack_pack_object(pk, kv->key);
			if (i == 0 && kv->key.via.str.size == 4 &&
			    memcmp(kv->key.via.str.ptr, "type", 4) == 0)
				pk_str(pk, "float128");
			else
				msgpack_pack_object(pk, kv->val);
		}
	}
}

/* Map m again, with key k's value packed by pack instead. */
static void with_value(msgpack_packer *pk, const msgpack_object *m,
		       const char *k, void (*pack)(msgpack_packer *pk))
{
	msgpack_pack_map(pk, m->via.map.size);
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];
		msgpack_pack_object(pk, kv->key);
		if (key_is(&kv->key, k))
			pack(pk);
		else
			msgpack_pack_object(pk, kv->val);
	}
}

static void v_seven(msgpack_packer *pk)
{
	msgpack_pack_uint64(pk, 7);
}

/* The sample's plugins with alpha's hint a number. */
static void r_plugins_hint(msgpack_packer *pk, const msgpack_object *o)
{
	msgpack_pack_array(pk, o->via.array.size);
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		if (i == 0)
			with_value(pk, &o->via.array.ptr[i], "hint", v_seven);
		else
			msgpack_pack_object(pk, o->via.array.ptr[i]);
	}
}

/* The sample's read_failures (files stat 0, status 3, io 5) with each of
 * these as `missing`. */
static void v_missing_over(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 3);
	pk_str(pk, "stat");
	msgpack_pack_uint64(pk, 0);
	pk_str(pk, "status");
	msgpack_pack_uint64(pk, 1);
	pk_str(pk, "io");
	msgpack_pack_uint64(pk, 6);
}

static void v_missing_unknown(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	pk_str(pk, "smaps");
	msgpack_pack_uint64(pk, 0);
}

static void v_missing_str(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	pk_str(pk, "io");
	pk_str(pk, "5");
}

static void v_missing_array(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 0);
}

/* Fewer than the files, each at most its failures: the rest count 0. */
static void v_missing_some(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	pk_str(pk, "status");
	msgpack_pack_uint64(pk, 1);
}

static void r_rf_missing_over(msgpack_packer *pk, const msgpack_object *o)
{
	with_value(pk, o, "missing", v_missing_over);
}

static void r_rf_missing_unknown(msgpack_packer *pk, const msgpack_object *o)
{
	with_value(pk, o, "missing", v_missing_unknown);
}

static void r_rf_missing_str(msgpack_packer *pk, const msgpack_object *o)
{
	with_value(pk, o, "missing", v_missing_str);
}

static void r_rf_missing_array(msgpack_packer *pk, const msgpack_object *o)
{
	with_value(pk, o, "missing", v_missing_array);
}

static void r_rf_missing_some(msgpack_packer *pk, const msgpack_object *o)
{
	with_value(pk, o, "missing", v_missing_some);
}

static void r_fields_dup(msgpack_packer *pk, const msgpack_object *o)
{
	msgpack_pack_array(pk, o->via.array.size + 1);
	for (uint32_t i = 0; i < o->via.array.size; i++)
		msgpack_pack_object(pk, o->via.array.ptr[i]);
	msgpack_pack_object(pk, o->via.array.ptr[0]);
}

static void r_host_mismatch(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "alpha.host_mem");
	msgpack_pack_true(pk);
}

/* A host key naming no field, and one naming a thread field. */
static void r_host_unknown(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "alpha.nope");
	msgpack_pack_uint64(pk, 1);
}

static void r_host_thread_field(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_map(pk, 1);
	pk_str(pk, "alpha.utime");
	msgpack_pack_uint64(pk, 1);
}

static void r_nil(msgpack_packer *pk, const msgpack_object *o)
{
	(void)o;
	msgpack_pack_nil(pk);
}

/* The processes table with read_boottime_ns of `n` entries, each made by
 * `cell`. */
static void processes_read(msgpack_packer *pk, const msgpack_object *o,
			   uint32_t n, void (*cell)(msgpack_packer *pk))
{
	msgpack_pack_map(pk, o->via.map.size + 1);
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		msgpack_pack_object(pk, o->via.map.ptr[i].key);
		msgpack_pack_object(pk, o->via.map.ptr[i].val);
	}
	pk_str(pk, "read_boottime_ns");
	msgpack_pack_array(pk, n);
	for (uint32_t i = 0; i < n; i++)
		cell(pk);
}

static void c_pr_str(msgpack_packer *pk)
{
	pk_str(pk, "soon");
}

static void r_pr_read_str(msgpack_packer *pk, const msgpack_object *o)
{
	processes_read(pk, o, N_PROCS, c_pr_str);
}

static void r_pr_read_short(msgpack_packer *pk, const msgpack_object *o)
{
	processes_read(pk, o, N_PROCS - 1, c_nil);
}

static void test_bad_structure(void **state)
{
	(void)state;
	expect_mutation("format", r_format, false,
			"not a ctprof-core snapshot (format is "
			"\"some-other-format\"");
	expect_mutation("version", r_version, false,
			"unsupported snapshot version 999 (this reader "
			"supports version 1)");
	expect_mutation("threads", r_th_wrong_len, false,
			"threads.columns.alpha.utime has 3 values but rows is "
			"2");
	expect_mutation("threads", r_th_tid_len, false,
			"threads.tid has 2 entries but rows is 1");
	expect_mutation("threads", r_th_str_u64, false,
			"field alpha.utime is u64 but the value is a string");
	expect_mutation("threads", r_th_neg_u64, false,
			"field alpha.utime is u64 but the value is a negative");
	expect_mutation("threads", r_th_char, false, "1-byte string");
	expect_mutation("threads", r_th_cpuset_odd, false, "even-length array");
	expect_mutation("threads", r_th_cpuset_desc, false,
			"not ascending and disjoint");
	expect_mutation("threads", r_th_bool, false,
			"field alpha.running is bool");
	expect_mutation("threads", r_th_unknown_col, false,
			"\"alpha.missing\" is not in fields");
	expect_mutation("threads", r_th_wrong_scope, false,
			"threads.columns: field alpha.rss has scope process, "
			"not thread");
	expect_mutation("threads", r_th_cgroup, false, "threads.cgroup[0]");
	expect_mutation("processes", r_pr_read_str, false,
			"processes.read_boottime_ns[0]: expected an unsigned "
			"integer or nil, found a string");
	expect_mutation("processes", r_pr_read_short, false,
			"processes.read_boottime_ns has 3 entries but rows is "
			"4");
	expect_mutation("threads", r_nil, false,
			"snapshot.threads: expected a map, found nil");
	expect_mutation("fields", r_fields_type, false,
			"unknown type \"float128\"");
	expect_mutation("fields", r_fields_dup, false, "listed twice");
	expect_mutation("host", r_host_mismatch, false,
			"field alpha.host_mem is u64 but the value is a "
			"boolean");
	expect_mutation("host", r_host_unknown, false,
			"host: \"alpha.nope\" is not in fields");
	expect_mutation("host", r_host_thread_field, false,
			"host: field alpha.utime has scope thread, not host");
	expect_mutation("plugins", r_plugins_hint, false,
			"plugins[0].hint: expected a string or nil");
	expect_mutation("read_failures", r_rf_missing_over, false,
			"read_failures.missing: \"io\" has more missing (6) "
			"than failures (5)");
	expect_mutation("read_failures", r_rf_missing_unknown, false,
			"read_failures.missing: \"smaps\" is not in files");
	expect_mutation("read_failures", r_rf_missing_str, false,
			"read_failures.missing: entries must map a file name "
			"to a count");
	expect_mutation("read_failures", r_rf_missing_array, false,
			"read_failures.missing: expected a map");
	{
		/* A file listing only some files: the others have none
		 * missing. */
		size_t zl;
		char err[256];
		struct ctp_snap *s;
		void *z =
			mutate("read_failures", r_rf_missing_some, false, &zl);
		if (ctp_snap_open_buf("some", z, zl, CAP_DEFAULT, &s, err,
				      sizeof(err)) < 0)
			fail_msg("refused: %s", err);
		const struct ctp_snap_readfail *rf = ctp_snap_readfail(s);
		assert_int_equal(rf->n_files, 3);
		assert_int_equal(rf->missing[0], 0);
		assert_int_equal(rf->missing[1], 1);
		assert_int_equal(rf->missing[2], 0);
		ctp_snap_free(s);
		free(z);
	}
	/* Forward compatibility: unknown keys are ignored, nil cells are
	 * absent. */
	expect_mutation("future_key", r_future, true, NULL);
	expect_mutation("threads", r_th_nil_ok, false, NULL);
}

/*
 * What FORMAT.md forbids and a reader must refuse even though it decodes:
 * a frame without the content checksum the writer always sets, a NUL byte
 * in a comm, a cgroup path or a STRING value.
 */
static void test_spec_forbids(void **state)
{
	(void)state;
	size_t len, zl;
	char err[512];
	void *good = sample_bytes(&len);
	struct ctp_snap *snap;
	if (ctp_snap_open_buf("x", good, len, CAP_DEFAULT, &snap, err,
			      sizeof(err)) < 0)
		fail_msg("%s", err);
	size_t n = ctp_snap_raw_size(snap);
	ctp_snap_free(snap);
	unsigned char *raw = malloc(n);
	assert_non_null(raw);
	assert_int_equal(ZSTD_decompress(raw, n, good, len), n);

	/* The same bytes with the checksum are fine, without are not. */
	void *z = zcompress_with(raw, n, false, &zl);
	if (ctp_snap_open_buf("x", z, zl, CAP_DEFAULT, &snap, err,
			      sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_snap_free(snap);
	free(z);
	z = zcompress_with(raw, n, true, &zl);
	expect_refused(z, zl, CAP_DEFAULT,
		       "the zstd frame has no content "
		       "checksum");
	free(z);
	free(raw);
	free(good);

	th_comm = "ab\0cd";
	th_comm_len = 5;
	expect_mutation("threads", r_th_nil_ok, false,
			"threads.comm[0]: holds a NUL byte, which the format "
			"never allows in a comm");
	th_comm = "c";
	th_comm_len = 1;
	expect_mutation("cgroups", r_cg_nul, false,
			"cgroups.path[0]: holds a NUL byte");
	expect_mutation("threads", r_th_nul_wchan, false,
			"field alpha.wchan is string but the value is a string "
			"holding a NUL byte");
}

static void test_cap(void **state)
{
	(void)state;
	size_t len;
	char err[512];
	void *good = sample_bytes(&len);
	struct ctp_snap *snap;
	if (ctp_snap_open_buf("x", good, len, CAP_DEFAULT, &snap, err,
			      sizeof(err)) < 0)
		fail_msg("%s", err);
	size_t raw = ctp_snap_raw_size(snap);
	uint64_t mem = ctp_snap_mem_size(snap);
	ctp_snap_free(snap);
	/* The budget holds the bytes, the tree and the decoded values. */
	assert_true(mem > 3 * raw);

	/* Exactly the budget is fine, one byte less is not. */
	if (ctp_snap_open_buf("x", good, len, mem, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_snap_free(snap);
	char want[300];
	snprintf(want, sizeof(want),
		 "decoding needs more memory than the decompression cap of "
		 "%llu bytes allows (%zu bytes of MessagePack); raise it "
		 "with --max-decompressed or the config's "
		 "max_decompressed_bytes",
		 (unsigned long long)mem - 1, raw);
	expect_refused(good, len, mem - 1, want);
	assert_int_equal(
		ctp_snap_open_buf("x", good, len, mem - 1, &snap, err, 512),
		-EFBIG);
	/* Below the decompressed size, decompression stops. */
	snprintf(want, sizeof(want),
		 "exceeds the decompression cap of %zu bytes; raise it with "
		 "--max-decompressed or the config's max_decompressed_bytes",
		 raw - 1);
	expect_refused(good, len, raw - 1, want);
	expect_refused(good, len, raw, "decoding needs more memory");
	expect_refused(good, len, 16, "exceeds the decompression cap of 16 ");
	expect_refused(good, len, 0, "exceeds the decompression cap of 0 ");
	int r = ctp_snap_open_buf("x", good, len, 100, &snap, err, sizeof(err));
	assert_int_equal(r, -EFBIG);
	free(good);
}

static void test_open_errors(void **state)
{
	(void)state;
	char path[PATH_MAX], err[512];
	struct ctp_snap *snap = NULL;
	path_in(path, sizeof(path), "does-not-exist");
	assert_int_equal(
		ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)),
		-ENOENT);
	assert_null(snap);
	assert_non_null(strstr(err, "does-not-exist"));
	/* A directory. */
	assert_true(ctp_snap_open(tmpdir, CAP_DEFAULT, &snap, err,
				  sizeof(err)) < 0);
	assert_null(snap);
}

/* A capture with nothing in it is still a valid snapshot, and "-" writes
 * the same bytes to stdout. */
static void test_empty_and_stdout(void **state)
{
	(void)state;
	struct ctp_capture *cap;
	char path[PATH_MAX], out[PATH_MAX], err[512];
	struct ctp_snap *snap;
	uint64_t bytes = 0;
	assert_int_equal(ctp_capture_new(2, &cap), 0);
	path_in(path, sizeof(path), "empty.ctprof");
	if (ctp_writer_write(cap, path, 1, NULL, NULL, &bytes, err,
			     sizeof(err)) < 0)
		fail_msg("%s", err);
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(ctp_snap_n_fields(snap), 0);
	assert_int_equal(ctp_snap_n_plugins(snap), 0);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_THREAD)->rows, 0);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_PROCESS)->rows, 0);
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_CGROUP)->rows, 0);
	assert_null(ctp_snap_header(snap)->proc_root);
	assert_string_equal(ctp_snap_header(snap)->tool_version, "");
	assert_null(ctp_snap_readfail(snap)->dominant_file);
	ctp_snap_free(snap);

	/* Same capture to stdout, redirected to a file. */
	path_in(out, sizeof(out), "stdout.ctprof");
	fflush(stdout);
	int saved = dup(1);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	uint64_t bytes2 = 0;
	int r = ctp_writer_write(cap, "-", 1, NULL, NULL, &bytes2, err,
				 sizeof(err));
	dup2(saved, 1);
	close(saved);
	close(fd);
	assert_int_equal(r, 0);
	assert_true(bytes2 == bytes);
	size_t n1, n2;
	char *a = slurp(path, &n1), *b = slurp(out, &n2);
	assert_int_equal(n1, n2);
	assert_int_equal(n1, bytes);
	assert_memory_equal(a, b, n1);
	free(a);
	free(b);
	ctp_capture_free(cap);
}

/* The writer keeps its compression context for the next write (a
 * recorder's): a write after others, at another level and of another
 * capture, gives the bytes the first write of the same capture gave. */
static void test_kept_context(void **state)
{
	(void)state;
	struct ctp_capture *cap = build_sample(false), *empty;
	char p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX], err[512];
	size_t n1, n2, n3;

	assert_int_equal(ctp_capture_new(2, &empty), 0);
	path_in(p1, sizeof(p1), "kept1.ctprof");
	path_in(p2, sizeof(p2), "kept2.ctprof");
	path_in(p3, sizeof(p3), "kept3.ctprof");
	if (ctp_writer_write(cap, p1, 3, "t", NULL, NULL, err, sizeof(err)) <
		    0 ||
	    ctp_writer_write(empty, p2, 19, "t", NULL, NULL, err, sizeof(err)) <
		    0 ||
	    ctp_writer_write(cap, p2, 19, "t", NULL, NULL, err, sizeof(err)) <
		    0 ||
	    ctp_writer_write(cap, p3, 3, "t", NULL, NULL, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	char *a = slurp(p1, &n1), *b = slurp(p2, &n2), *c = slurp(p3, &n3);
	assert_int_equal(n1, n3);
	assert_memory_equal(a, c, n1);
	/* The level in between did change the bytes. */
	assert_false(n1 == n2 && memcmp(a, b, n1) == 0);
	free(a);
	free(b);
	free(c);
	ctp_capture_free(empty);
	ctp_capture_free(cap);
}

/* ---- Files ---- */

static void test_cancel_leaves_nothing(void **state)
{
	(void)state;
	char sub[600], path[PATH_MAX], err[512];
	snprintf(sub, sizeof(sub), "%s/cancel", tmpdir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(path, sizeof(path), "%s/out.ctprof", sub);

	struct ctp_capture *cap = build_sample(false);
	volatile sig_atomic_t cancel = 1;
	uint64_t bytes = 77;
	int r = ctp_writer_write(cap, path, 3, "t", &cancel, &bytes, err,
				 sizeof(err));
	assert_int_equal(r, -ECANCELED);
	assert_int_equal(bytes, 77); /* untouched on failure */
	assert_non_null(strstr(err, "cancel"));
	assert_int_equal(count_entries(sub), 0);

	/* An existing target survives a cancelled write untouched. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	r = ctp_writer_write(cap, path, 3, "t", &cancel, NULL, err,
			     sizeof(err));
	assert_int_equal(r, -ECANCELED);
	assert_int_equal(count_entries(sub), 1);
	size_t n;
	char *b = slurp(path, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(b, "old", 3);
	free(b);

	/* A failed write (bad level) leaves nothing either. */
	unlink(path);
	r = ctp_writer_write(cap, path, 1000, "t", NULL, NULL, err,
			     sizeof(err));
	assert_int_equal(r, -EINVAL);
	assert_int_equal(count_entries(sub), 0);
	/* Writing over a directory fails cleanly. */
	char dirpath[PATH_MAX];
	snprintf(dirpath, sizeof(dirpath), "%s/adir", sub);
	assert_int_equal(mkdir(dirpath, 0700), 0);
	r = ctp_writer_write(cap, dirpath, 3, "t", NULL, NULL, err,
			     sizeof(err));
	assert_true(r < 0);
	assert_int_equal(count_entries(sub), 1);
	rmdir(dirpath);
	/* A directory that does not exist. */
	snprintf(dirpath, sizeof(dirpath), "%s/nodir/x.ctprof", sub);
	r = ctp_writer_write(cap, dirpath, 3, "t", NULL, NULL, err,
			     sizeof(err));
	assert_int_equal(r, -ENOENT);
	assert_non_null(strstr(err, "nodir"));
	rmdir(sub);
	ctp_capture_free(cap);
}

static void test_mode_and_symlink(void **state)
{
	(void)state;
	char path[PATH_MAX], victim[PATH_MAX], err[512];
	struct stat st;
	path_in(path, sizeof(path), "mode.ctprof");

	/* 0640 whatever the umask. */
	mode_t old = umask(077);
	write_sample(path, false);
	umask(old);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	old = umask(0);
	write_sample(path, false);
	umask(old);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);

	/* A symlink at the target is replaced, never written through. */
	path_in(victim, sizeof(victim), "victim");
	FILE *f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	path_in(path, sizeof(path), "link.ctprof");
	assert_int_equal(symlink(victim, path), 0);
	write_sample(path, false);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	size_t n;
	char *b = slurp(victim, &n);
	assert_int_equal(n, 8);
	assert_memory_equal(b, "precious", 8);
	free(b);
	struct ctp_snap *snap;
	if (ctp_snap_open(path, CAP_DEFAULT, &snap, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	ctp_snap_free(snap);

	/* A dangling symlink too. */
	path_in(path, sizeof(path), "dangling.ctprof");
	path_in(victim, sizeof(victim), "nowhere");
	assert_int_equal(symlink(victim, path), 0);
	write_sample(path, false);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(access(victim, F_OK), -1);

	/* Relative path without a directory part. */
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	write_sample("rel.ctprof", false);
	assert_int_equal(chdir(cwd), 0);
	path_in(path, sizeof(path), "rel.ctprof");
	assert_int_equal(lstat(path, &st), 0);
}

/* ---- show and dump ---- */

/* Run a command with stdout and stderr captured into files. */
static int run_cmd(int (*cmd)(int, char **), char *out, size_t outlen,
		   char *errout, size_t errlen, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, errlen);
	for (char *a; (a = va_arg(ap, char *)) && argc < 15;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;

	char po[PATH_MAX], pe[PATH_MAX];
	path_in(po, sizeof(po), "cmd.out");
	path_in(pe, sizeof(pe), "cmd.err");
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);

	size_t n;
	char *b = slurp(po, &n);
	snprintf(out, outlen, "%.*s", (int)n, b);
	free(b);
	b = slurp(pe, &n);
	snprintf(errout, errlen, "%.*s", (int)n, b);
	free(b);
	unlink(po);
	unlink(pe);
	return rc;
}

static void expect_in(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" not found in output:\n%s", needle, hay);
}

static void test_show(void **state)
{
	(void)state;
	static char out[1 << 16], eo[4096];
	char path[PATH_MAX], bad[PATH_MAX];
	path_in(path, sizeof(path), "show.ctprof");
	write_sample(path, true);

	int rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
			 path, "--view", "all", NULL);
	if (rc != 0)
		fail_msg("show: %d %s", rc, eo);
	expect_in(out, "format version 1");
	expect_in(out, "9.9.9-test");
	expect_in(out, "2.50 s");
	expect_in(out, "sample-host");
	expect_in(out, "alpha.host_mem");
	expect_in(out, "8.00 GiB");
	expect_in(out, "0-3,8-11,64,66-70");
	expect_in(out, "alpha");
	expect_in(out, "probes=7");
	expect_in(out, "beta");
	expect_in(out, "failed");
	expect_in(out, "dlopen: cannot open shared object file");
	{
		/* alpha's hint on the line right after alpha's, indented;
		 * beta and gamma have none. */
		const char *al = strstr(out, "\n  alpha ");
		assert_non_null(al);
		const char *nl = strchr(al + 1, '\n');
		assert_non_null(nl);
		const char *h = strstr(nl, "  hint: " SAMPLE_HINT "\n");
		assert_non_null(h);
		assert_ptr_equal(strspn(nl + 1, " ") + nl + 1, h + 2);
		assert_ptr_equal(strstr(out, "hint: "), h + 2);
	}
	/* io's 5 failures are all missing and io is gated: 5 of 8. */
	expect_in(out, "  per file: stat 0, status 3 (1 missing, 2 denied), io "
		       "5 (5 missing); dominant: io\n"
		       "  hint: 5 of 8 read failures are missing files that "
		       "exist only with CONFIG_TASK_IO_ACCOUNTING (io); this "
		       "kernel was probably built without it\n");
	/* utime 12345678901234 ticks at USER_HZ 100. */
	expect_in(out, "123456789012.34 s");
	/* Absent renders '-', measured zero renders 0. */
	expect_in(out, "init");
	expect_in(out, "100.00%"); /* load 10000 centi-percent */
	/* Odd bytes in comm are escaped, never printed raw. */
	expect_in(out, "we\"ird\\\\\\x01\\xff");
	assert_null(strchr(out, '\x01'));

	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--summary", NULL);
	assert_int_equal(rc, 0);
	expect_in(out, "7 threads");
	expect_in(out, "4 processes");
	assert_null(strstr(out, "alpha.utime"));

	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--fields", "alpha.ut*,alpha.state", "--sort",
		     "alpha.utime", "--limit", "2", "--no-host", NULL);
	if (rc != 0)
		fail_msg("show: %d %s", rc, eo);
	expect_in(out, "alpha.utime");
	assert_null(strstr(out, "alpha.wchan"));
	assert_null(strstr(out, "alpha.host_mem"));
	/* Sorted descending by utime, 2 rows: UINT64_MAX then 12345678901234.
	 */
	const char *a = strstr(out, "\xc3\xa9moji");
	const char *b = strstr(out, "worker/1");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_null(strstr(out, "worker/2"));

	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--threads", NULL);
	assert_int_equal(rc, 0);
	expect_in(out, "Threads: 7");
	assert_null(strstr(out, "Processes:"));
	assert_null(strstr(out, "Cgroups:"));
	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--processes", "--sort", "alpha.rss", NULL);
	assert_int_equal(rc, 0);
	expect_in(out, "Processes: 4, by alpha.rss");
	assert_null(strstr(out, "Threads:"));
	/* rss descending, absent last: 50 (1 MiB), 300 (4 KiB), 200 (0 B),
	 * then 100 (absent). */
	a = strstr(out, "1.00 MiB");
	b = strstr(out, "4.00 KiB");
	const char *z = strstr(out, " 0 B");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(z);
	assert_true(a < b && b < z);
	assert_true(strstr(z, "we\"ird") != NULL);

	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     "--help", NULL);
	assert_int_equal(rc, CTP_EXIT_OK);
	expect_in(out, "--summary");
	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--limit", "x", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--bogus", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     path, "--sort", "alpha.nosuch", NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	expect_in(eo, "alpha.nosuch");

	path_in(bad, sizeof(bad), "bad.ctprof");
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fputs("garbage", f);
	fclose(f);
	rc = run_cmd(ctp_cmd_show, out, sizeof(out), eo, sizeof(eo), "show",
		     bad, NULL);
	assert_int_equal(rc, CTP_EXIT_FAILURE);
	expect_in(eo, "not zstd-compressed");
}

static void test_dump(void **state)
{
	(void)state;
	static char out[1 << 16], eo[4096];
	char path[PATH_MAX];
	path_in(path, sizeof(path), "dump.ctprof");
	write_sample(path, false);

	int rc = run_cmd(ctp_cmd_dump, out, sizeof(out), eo, sizeof(eo), "dump",
			 path, NULL);
	if (rc != 0)
		fail_msg("dump: %d %s", rc, eo);
	expect_in(out, "\"format\": \"ctprof-core-snapshot\"");
	/* Escapes: quote, backslash, control byte, invalid UTF-8 byte. */
	expect_in(out, "\"we\\\"ird\\\\\\u0001\\u00ff\"");
	expect_in(out, "\"bad\\u00c3(utf8\\\"q\\n\"");
	expect_in(out, "\"tab\\there\"");
	/* Valid UTF-8 passes through. */
	expect_in(out, "\"\xc3\xa9moji\xe2\x9c\x93\"");
	expect_in(out, "18446744073709551615");
	expect_in(out, "-9223372036854775808");
	expect_in(out, "null");
	assert_null(strstr(out, "hostname"));

	rc = run_cmd(ctp_cmd_dump, out, sizeof(out), eo, sizeof(eo), "dump",
		     "--format", "json", path, NULL);
	assert_int_equal(rc, 0);
	rc = run_cmd(ctp_cmd_dump, out, sizeof(out), eo, sizeof(eo), "dump",
		     "--format", "yaml", path, NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	rc = run_cmd(ctp_cmd_dump, out, sizeof(out), eo, sizeof(eo), "dump",
		     "--help", NULL);
	assert_int_equal(rc, CTP_EXIT_OK);
	rc = run_cmd(ctp_cmd_dump, out, sizeof(out), eo, sizeof(eo), "dump",
		     NULL);
	assert_int_equal(rc, CTP_EXIT_USAGE);
	rc = run_cmd(ctp_cmd_dump, out, sizeof(out), eo, sizeof(eo), "dump",
		     tmpdir, NULL);
	assert_int_equal(rc, CTP_EXIT_FAILURE);
}

/* ---- A realistic synthetic capture (layout measurement) ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so the measurement is repeatable. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double unif(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* Heavy-tailed counter: most small, a few huge, like /proc counters. */
static uint64_t heavy(double scale)
{
	double u = unif();
	return (uint64_t)(exp(u * u * scale) - 1.0);
}

static const struct ctp_field_desc synth_fields[] = {
	{"s.utime", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.stime", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.nvcsw", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.nivcsw", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.minflt", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.majflt", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.state", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CHAR, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_MODE},
	{"s.processor", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{"s.nice", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"s.prio", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"s.policy", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{"s.cpus", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CPUSET, CTP_UNIT_NONE,
	 CTP_KIND_CPUSET, CTP_RULE_UNION},
	{"s.start", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
	 CTP_KIND_GAUGE, CTP_RULE_MIN},
	{"s.run_delay", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"s.wchan", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{"s.rss", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64, CTP_UNIT_BYTES,
	 CTP_KIND_PEAK, CTP_RULE_MAX},
	{"s.vsize", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64, CTP_UNIT_BYTES,
	 CTP_KIND_GAUGE, CTP_RULE_MAX},
};
#define N_SYNTH (sizeof(synth_fields) / sizeof(synth_fields[0]))

static void set_f(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
		  uint32_t ident, int fid, uint64_t v)
{
	ctp_table_set(t, row,
		      ident + ctp_registry_get(&cap->reg, (uint32_t)fid)->col,
		      v);
}

/*
 * About what a busy 64-CPU server shows: ~1 in 10 processes a kernel thread,
 * most user processes single-threaded, a few with hundreds of threads named
 * after a pool; counters heavy-tailed; wchan absent for running threads.
 */
static struct ctp_capture *build_synthetic(uint32_t nthreads)
{
	static const char *const wchans[] = {
		"do_epoll_wait",     "futex_wait_queue",
		"do_select",	     "worker_thread",
		"smpboot_thread_fn", "rescuer_thread",
		"pipe_read",	     "do_sys_poll",
		"hrtimer_nanosleep", "unix_stream_read_generic",
		"kthreadd",	     "do_wait"};
	static const char *const pools[] = {
		"java", "postgres", "nginx", "python3", "envoy", "containerd"};
	struct ctp_capture *cap;
	if (ctp_capture_new(2, &cap) < 0)
		abort();
	cap->plugins = calloc(1, sizeof(*cap->plugins));
	add_plugin(cap, "s", "/x/s.so", "1", NULL, CTP_PST_LOADED, false);
	for (size_t i = 0; i < N_SYNTH; i++)
		if (ctp_registry_add(&cap->reg, 0, &synth_fields[i]) != (int)i)
			abort();
	ctp_table_add_row(&cap->host);
	for (int i = 0; i < 60; i++) {
		char p[64];
		snprintf(p, sizeof(p), "/system.slice/service-%d.service", i);
		int64_t r = ctp_table_add_row(&cap->cgroups);
		ctp_table_set(&cap->cgroups, (uint32_t)r, CTP_CCOL_PATH,
			      blob(cap, p, strlen(p)));
	}
	unsigned char all[8], one[8];
	memset(all, 0xff, 8);
	uint64_t all_id = blob(cap, (const char *)all, 8);

	size_t capspans = 1024;
	cap->spans = calloc(capspans, sizeof(*cap->spans));
	uint32_t tgid = 1, made = 0;
	uint64_t boot = 4000;
	while (made < nthreads) {
		bool kernel = unif() < 0.1;
		uint32_t n =
			kernel || unif() < 0.6 ? 1 : (uint32_t)(1 + heavy(5.5));
		if (n > nthreads - made)
			n = nthreads - made;
		uint16_t w = (uint16_t)(cap->n_spans % 2);
		struct ctp_table *pt = &cap->procs[w], *tt = &cap->threads[w];
		char comm[32];
		if (kernel)
			snprintf(comm, sizeof(comm), "kworker/%u:%u",
				 (unsigned)(rnd() % 64), (unsigned)(rnd() % 3));
		else
			snprintf(comm, sizeof(comm), "%s",
				 pools[rnd() %
				       (sizeof(pools) / sizeof(pools[0]))]);
		uint32_t prow = (uint32_t)ctp_table_add_row(pt);
		ctp_table_set(pt, prow, CTP_PCOL_TGID, tgid);
		ctp_table_set(pt, prow, CTP_PCOL_COMM,
			      blob(cap, comm, strlen(comm)));
		ctp_table_set(pt, prow, CTP_PCOL_NTHREADS, n);
		if (!kernel) {
			set_f(cap, pt, prow, CTP_PROCESS_IDENT, 15,
			      (heavy(9) + 1) * 4096);
			set_f(cap, pt, prow, CTP_PROCESS_IDENT, 16,
			      (heavy(12) + 1000) * 4096);
		}
		if (cap->n_spans == capspans) {
			capspans *= 2;
			cap->spans = realloc(cap->spans,
					     capspans * sizeof(*cap->spans));
		}
		cap->spans[cap->n_spans++] =
			(struct ctp_span){.tgid = tgid,
					  .worker = w,
					  .proc_row = prow,
					  .thread_row = tt->nrows,
					  .nthreads = n};
		uint64_t cg = kernel ? 0 : rnd() % 60;
		int nice = kernel ? (unif() < 0.3 ? -20 : 0)
				  : (unif() < 0.9 ? 0 : (int)(rnd() % 40) - 20);
		uint64_t start = boot += rnd() % 500;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t r = (uint32_t)ctp_table_add_row(tt);
			uint32_t tid = tgid + k;
			ctp_table_set(tt, r, CTP_TCOL_TID, tid);
			ctp_table_set(tt, r, CTP_TCOL_TGID, tgid);
			char tcomm[32];
			if (k == 0 || kernel)
				snprintf(tcomm, sizeof(tcomm), "%s", comm);
			else
				snprintf(tcomm, sizeof(tcomm), "%.8s-w%u", comm,
					 k % 64);
			ctp_table_set(tt, r, CTP_TCOL_COMM,
				      blob(cap, tcomm, strlen(tcomm)));
			ctp_table_set(tt, r, CTP_TCOL_CGROUP, cg);
			uint32_t id = CTP_THREAD_IDENT;
			double st = unif();
			char state = st < 0.03		  ? 'R'
				     : st < 0.05	  ? 'D'
				     : kernel && st < 0.5 ? 'I'
							  : 'S';
			set_f(cap, tt, r, id, 0, heavy(13));
			set_f(cap, tt, r, id, 1, heavy(11));
			set_f(cap, tt, r, id, 2, heavy(15));
			set_f(cap, tt, r, id, 3, heavy(10));
			if (!kernel)
				set_f(cap, tt, r, id, 4, heavy(14));
			set_f(cap, tt, r, id, 5, unif() < 0.9 ? 0 : heavy(6));
			set_f(cap, tt, r, id, 6, (uint64_t)state);
			set_f(cap, tt, r, id, 7, rnd() % 64);
			set_f(cap, tt, r, id, 8, (uint64_t)(int64_t)nice);
			set_f(cap, tt, r, id, 9,
			      (uint64_t)(int64_t)(20 + nice));
			const char *pol = unif() < 0.97	 ? "SCHED_OTHER"
					  : unif() < 0.5 ? "SCHED_FIFO"
							 : "SCHED_IDLE";
			set_f(cap, tt, r, id, 10, blob(cap, pol, strlen(pol)));
			if (kernel && unif() < 0.5) {
				memset(one, 0, 8);
				unsigned c = (unsigned)(rnd() % 64);
				one[c / 8] = (unsigned char)(1u << (c % 8));
				set_f(cap, tt, r, id, 11,
				      blob(cap, (const char *)one, 8));
			} else {
				set_f(cap, tt, r, id, 11, all_id);
			}
			set_f(cap, tt, r, id, 12,
			      start + (k ? rnd() % 100 : 0));
			set_f(cap, tt, r, id, 13, heavy(27));
			if (state != 'R') {
				const char *wc =
					wchans[rnd() % (sizeof(wchans) /
							sizeof(wchans[0]))];
				set_f(cap, tt, r, id, 14,
				      blob(cap, wc, strlen(wc)));
			}
		}
		made += n;
		tgid += n + (uint32_t)(rnd() % 20);
	}
	cap->proc_root = xstrdup("/proc");
	cap->sys_root = xstrdup("/sys");
	return cap;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-sample") == 0) {
		struct ctp_capture *cap = build_sample(true);
		char err[512];
		int r = ctp_writer_write(cap, argv[2], 3, "9.9.9-test", NULL,
					 NULL, err, sizeof(err));
		ctp_capture_free(cap);
		if (r < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "--write-synthetic") == 0) {
		struct ctp_capture *cap =
			build_synthetic((uint32_t)strtoul(argv[3], NULL, 10));
		char err[512];
		uint64_t bytes = 0;
		int r = ctp_writer_write(cap, argv[2], 3, "synthetic", NULL,
					 &bytes, err, sizeof(err));
		ctp_capture_free(cap);
		if (r < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("%llu bytes\n", (unsigned long long)bytes);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
		char *av[] = {"dump", argv[2], NULL};
		return ctp_cmd_dump(2, av);
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_cells),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_golden_v1),
		cmocka_unit_test(test_bytes_unchanged),
		cmocka_unit_test(test_key_order_and_hostname),
		cmocka_unit_test(test_read_times),
		cmocka_unit_test(test_truncated_and_corrupt),
		cmocka_unit_test(test_bad_msgpack),
		cmocka_unit_test(test_mutated_msgpack),
		cmocka_unit_test(test_bad_structure),
		cmocka_unit_test(test_spec_forbids),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_empty_and_stdout),
		cmocka_unit_test(test_kept_context),
		cmocka_unit_test(test_cancel_leaves_nothing),
		cmocka_unit_test(test_mode_and_symlink),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_dump),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
