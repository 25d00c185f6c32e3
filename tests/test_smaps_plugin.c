/* SPDX-License-Identifier: MIT */
/*
 * The built smaps.so, driven without the engine: dlopen it, check its
 * descriptor, and run init/host/process/fini against a fake struct ctp_api
 * that records field registrations, file fetches and set_u64 calls, over
 * literal kernel text. Proves the open key set, kB -> bytes, the statm
 * size cap, the time budget, what is never read, and concurrent callers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/plugin.h"
#include "test_smaps_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/smaps.so"
/* Handles are offset so an index passed as a handle is caught. */
#define HANDLE_BASE 500
#define MAX_FIELDS  128

/* ---- The fake core ------------------------------------------------------ */

struct reg {
	char name[160];
	struct ctp_field_desc d;
	int refuse; /* field_register returns -EEXIST */
};

struct ctp_ctx {
	const char *const *opts; /* key, value, ..., NULL */
	struct ctp_roots roots;
	pthread_mutex_t lock;
	unsigned n_register; /* field_register calls */
	unsigned n_fields;
	struct reg fields[MAX_FIELDS];
	const char *refuse_name; /* field_register refuses this name */
	unsigned n_summary;
	const char *summary_name[16];
	uint64_t summary[16];
	unsigned n_log;
	char last_log[512];
};

struct ctp_record {
	uint8_t scope;
	unsigned bad_sets, n_sets;
	int set[MAX_FIELDS];
	uint64_t v[MAX_FIELDS];
};

/* What one fake process offers: task->core points at it. */
struct fake_proc {
	const char *rollup; /* NULL: the read fails with rollup_err */
	int rollup_err;
	unsigned sleep_ms; /* file_get takes this long */
	unsigned n_get;	   /* file_get calls */
	struct ctp_file got;
};

static void fake_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	if (level == CTP_LOG_DEBUG)
		return;
	pthread_mutex_lock(&ctx->lock);
	va_start(ap, fmt);
	vsnprintf(ctx->last_log, sizeof(ctx->last_log), fmt, ap);
	va_end(ap);
	ctx->n_log++;
	pthread_mutex_unlock(&ctx->lock);
}

static int fake_opt_str(struct ctp_ctx *ctx, const char *key, const char **out)
{
	size_t i;

	for (i = 0; ctx->opts && ctx->opts[i]; i += 2)
		if (strcmp(ctx->opts[i], key) == 0) {
			*out = ctx->opts[i + 1];
			return 0;
		}
	return -ENOENT;
}

static int fake_opt_u64(struct ctp_ctx *ctx, const char *key, uint64_t *out)
{
	(void)ctx, (void)key, (void)out;
	return -EINVAL;
}

static int fake_opt_i64(struct ctp_ctx *ctx, const char *key, int64_t *out)
{
	(void)ctx, (void)key, (void)out;
	return -EINVAL;
}

static int fake_opt_bool(struct ctp_ctx *ctx, const char *key, int *out)
{
	(void)ctx, (void)key, (void)out;
	return -EINVAL;
}

static const char *fake_opt_key(struct ctp_ctx *ctx, size_t i)
{
	size_t j;

	for (j = 0; ctx->opts && ctx->opts[j]; j += 2)
		if (j / 2 == i)
			return ctx->opts[j];
	return NULL;
}

/* Like the core: the same name again returns the same handle. */
static int fake_field_register(struct ctp_ctx *ctx,
			       const struct ctp_field_desc *d)
{
	unsigned i;
	int ret;

	pthread_mutex_lock(&ctx->lock);
	ctx->n_register++;
	for (i = 0; i < ctx->n_fields; i++)
		if (strcmp(ctx->fields[i].name, d->name) == 0)
			break;
	if (ctx->refuse_name && strcmp(d->name, ctx->refuse_name) == 0) {
		ret = -EEXIST;
	} else if (i < ctx->n_fields) {
		ret = HANDLE_BASE + (int)i;
	} else if (i == MAX_FIELDS ||
		   strlen(d->name) >= sizeof(ctx->fields[i].name)) {
		ret = -ENOSPC;
	} else {
		strcpy(ctx->fields[i].name, d->name);
		ctx->fields[i].d = *d;
		ctx->fields[i].d.name = ctx->fields[i].name;
		ctx->fields[i].d.help = NULL;
		ctx->n_fields++;
		ret = HANDLE_BASE + (int)i;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

static int fake_field_handle(struct ctp_ctx *ctx, size_t i)
{
	(void)ctx, (void)i;
	return -EINVAL; /* smaps has no static table */
}

static struct ctp_ctx *the_ctx; /* set_u64 checks against it */

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	int i = h - HANDLE_BASE, bad;

	rec->n_sets++;
	pthread_mutex_lock(&the_ctx->lock);
	bad = i < 0 || (unsigned)i >= the_ctx->n_fields ||
	      the_ctx->fields[i].d.type != CTP_TYPE_U64 ||
	      the_ctx->fields[i].d.scope != rec->scope;
	pthread_mutex_unlock(&the_ctx->lock);
	if (bad) {
		rec->bad_sets++;
		return -EINVAL;
	}
	rec->set[i]++;
	rec->v[i] = v;
	return 0;
}

static int fake_set_i64(struct ctp_record *rec, int h, int64_t v)
{
	(void)h, (void)v;
	rec->bad_sets++;
	return -EINVAL;
}

static int fake_set_bool(struct ctp_record *rec, int h, int v)
{
	(void)h, (void)v;
	rec->bad_sets++;
	return -EINVAL;
}

static int fake_set_char(struct ctp_record *rec, int h, char v)
{
	(void)h, (void)v;
	rec->bad_sets++;
	return -EINVAL;
}

static int fake_set_str(struct ctp_record *rec, int h, const char *s,
			size_t len)
{
	(void)h, (void)s, (void)len;
	rec->bad_sets++;
	return -EINVAL;
}

static int fake_set_cpuset(struct ctp_record *rec, int h, const uint64_t *w,
			   size_t n)
{
	(void)h, (void)w, (void)n;
	rec->bad_sets++;
	return -EINVAL;
}

static int fake_summary_register(struct ctp_ctx *ctx, const char *name)
{
	if (ctx->n_summary == 16)
		return -ENOSPC;
	ctx->summary_name[ctx->n_summary] = name;
	return (int)ctx->n_summary++;
}

static void fake_summary_add(struct ctp_ctx *ctx, int counter, uint64_t d)
{
	pthread_mutex_lock(&ctx->lock);
	if (counter >= 0 && (unsigned)counter < ctx->n_summary)
		ctx->summary[counter] += d;
	pthread_mutex_unlock(&ctx->lock);
}

static const struct ctp_roots *fake_roots(struct ctp_ctx *ctx)
{
	return &ctx->roots;
}

/* Eager files come from task->files; the lazy one from the fake process. */
static int fake_file_get(const struct ctp_task *task, uint32_t i,
			 const struct ctp_file **out)
{
	struct fake_proc *fp = task->core;

	if (i >= task->n_files)
		return -EINVAL;
	if (i == 0) {
		*out = &task->files[0];
		return task->files[0].err;
	}
	fp->n_get++;
	if (fp->sleep_ms) {
		struct timespec ts = {.tv_sec = fp->sleep_ms / 1000,
				      .tv_nsec = (long)(fp->sleep_ms % 1000) *
						 1000000};
		while (nanosleep(&ts, &ts) < 0)
			;
	}
	fp->got = (struct ctp_file){
		.data = fp->rollup,
		.len = fp->rollup ? strlen(fp->rollup) : 0,
		.err = fp->rollup ? 0 : fp->rollup_err,
	};
	*out = &fp->got;
	return fp->got.err;
}

static const struct ctp_api api = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_api),
	.log = fake_log,
	.opt_str = fake_opt_str,
	.opt_u64 = fake_opt_u64,
	.opt_i64 = fake_opt_i64,
	.opt_bool = fake_opt_bool,
	.opt_key = fake_opt_key,
	.field_register = fake_field_register,
	.field_handle = fake_field_handle,
	.set_u64 = fake_set_u64,
	.set_i64 = fake_set_i64,
	.set_bool = fake_set_bool,
	.set_char = fake_set_char,
	.set_str = fake_set_str,
	.set_cpuset = fake_set_cpuset,
	.summary_register = fake_summary_register,
	.summary_add = fake_summary_add,
	.roots = fake_roots,
	.file_get = fake_file_get,
};

/* ---- Fixture ------------------------------------------------------------- */

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct ctp_ctx ctx;
	void *state;
};

static uint64_t page;

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	page = (uint64_t)getpagesize();
	fx->dl = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!fx->dl) {
		fprintf(stderr, "dlopen %s: %s\n", PLUGIN_PATH, dlerror());
		free(fx);
		return -1;
	}
	fx->p = dlsym(fx->dl, CTP_PLUGIN_SYMBOL);
	if (!fx->p) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		dlclose(fx->dl);
		free(fx);
		return -1;
	}
	the_ctx = &fx->ctx;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	dlclose(fx->dl);
	free(fx);
	return 0;
}

static void ctx_reset(struct fx *fx, const char *const *opts)
{
	memset(&fx->ctx, 0, sizeof(fx->ctx));
	pthread_mutex_init(&fx->ctx.lock, NULL);
	fx->ctx.opts = opts;
	fx->ctx.roots.proc = "/proc";
	fx->ctx.roots.sys = "/sys";
	fx->ctx.roots.proc_fd = fx->ctx.roots.sys_fd = -1;
	fx->ctx.roots.cgroup_fd = -1;
	fx->state = NULL;
}

static int start(struct fx *fx, const char *const *opts)
{
	ctx_reset(fx, opts);
	return fx->p->init(&fx->ctx, &api, &fx->state);
}

static void stop(struct fx *fx)
{
	fx->p->fini(fx->state);
	fx->state = NULL;
	pthread_mutex_destroy(&fx->ctx.lock);
}

static uint64_t summary(const struct fx *fx, const char *name)
{
	unsigned i;

	for (i = 0; i < fx->ctx.n_summary; i++)
		if (strcmp(fx->ctx.summary_name[i], name) == 0)
			return fx->ctx.summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

/* Index of a registered field, or -1. */
static int reg_index(struct fx *fx, const char *name)
{
	int ret = -1;
	unsigned i;

	pthread_mutex_lock(&fx->ctx.lock);
	for (i = 0; i < fx->ctx.n_fields && ret < 0; i++)
		if (strcmp(fx->ctx.fields[i].name, name) == 0)
			ret = (int)i;
	pthread_mutex_unlock(&fx->ctx.lock);
	return ret;
}

/* The value of a field in rec; fails when unset or unregistered. */
static uint64_t value(struct fx *fx, const struct ctp_record *rec,
		      const char *name)
{
	int i = reg_index(fx, name);

	if (i < 0)
		fail_msg("field %s not registered", name);
	if (rec->set[i] != 1)
		fail_msg("field %s set %d times", name, rec->set[i]);
	return rec->v[i];
}

static int is_set(struct fx *fx, const struct ctp_record *rec, const char *name)
{
	int i = reg_index(fx, name);

	return i >= 0 && rec->set[i];
}

/* Run the process callback: statm text (NULL: read failed with -EACCES)
 * and the fake process behind the lazy file. */
static int run_process(struct fx *fx, struct ctp_record *rec, const char *statm,
		       struct fake_proc *fp)
{
	struct ctp_file files[2] = {
		{.data = statm,
		 .len = statm ? strlen(statm) : 0,
		 .err = statm ? 0 : -EACCES},
		{.err = -ENODATA},
	};
	struct ctp_task task = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(task),
		.tgid = 42,
		.tid = 42,
		.dirfd = -1,
		.proc_fd = -1,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
		.files = files,
		.n_files = 2,
		.core = fp,
	};

	memset(rec, 0, sizeof(*rec));
	rec->scope = CTP_SCOPE_PROCESS;
	return fx->p->process(fx->state, &task, rec);
}

/* A statm saying `pages` resident (and a non-zero size). */
static const char *statm_pages(char *buf, size_t cap, uint64_t pages)
{
	snprintf(buf, cap, "%llu %llu 10 1 0 5 0\n",
		 (unsigned long long)pages + 100, (unsigned long long)pages);
	return buf;
}

/* Lower-case "smaps.<key>". */
static const char *field_name(char *buf, size_t cap, const char *key)
{
	size_t i, n = (size_t)snprintf(buf, cap, "smaps.%s", key);

	for (i = 0; i < n; i++)
		if (buf[i] >= 'A' && buf[i] <= 'Z')
			buf[i] = (char)(buf[i] - 'A' + 'a');
	return buf;
}

/* rec holds exactly ROLLUP_PY's keys and values. */
static void expect_rollup_py(struct fx *fx, const struct ctp_record *rec)
{
	char name[96];
	size_t i;

	assert_int_equal(rec->bad_sets, 0);
	assert_int_equal(rec->n_sets, ROLLUP_PY_N);
	for (i = 0; i < ROLLUP_PY_N; i++)
		assert_true(value(fx, rec,
				  field_name(name, sizeof(name),
					     ROLLUP_PY_KV[i].key)) ==
			    ROLLUP_PY_KV[i].kib * 1024);
}

/* ---- Tests -------------------------------------------------------------- */

static void descriptor(void **state)
{
	struct fx *fx = *state;
	const struct ctp_plugin *p = fx->p;

	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_int_equal(p->size, sizeof(struct ctp_plugin));
	assert_string_equal(p->name, "smaps");
	assert_non_null(p->version);
	assert_non_null(p->description);
	assert_int_equal(p->flags, CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL);
	/* Every field is registered at runtime: the key set is open. */
	assert_int_equal(p->n_fields, 0);
	assert_null(p->thread_files);
	assert_non_null(p->process_files);
	assert_string_equal(p->process_files[0], "statm");
	/* Lazy: read only when statm and the budget allow. */
	assert_string_equal(p->process_files[1], "?smaps_rollup");
	assert_null(p->process_files[2]);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->host);
	assert_non_null(p->process);
	assert_null(p->thread);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"max_rss", "1G", NULL};
	static const char *const bad_size[] = {"max_rss_bytes", "16 GB", NULL};
	static const char *const bad_ms[] = {"time_budget_ms", "300ms", NULL};
	static const char *const good[] = {"max_rss_bytes", "1KiB",
					   "time_budget_ms", "unlimited", NULL};
	static const char *const counters[] = {
		"skipped_rss",	"skipped_budget",
		"no_mm",	"statm_parse_errors",
		"parse_errors", "keys_dropped",
		"read_us"};
	struct fx *fx = *state;
	struct ctp_api small = api;
	size_t i;

	assert_int_equal(start(fx, unknown), -EINVAL);
	assert_null(fx->state);
	assert_non_null(strstr(fx->ctx.last_log, "'max_rss'"));
	pthread_mutex_destroy(&fx->ctx.lock);
	assert_int_equal(start(fx, bad_size), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'16 GB'"));
	pthread_mutex_destroy(&fx->ctx.lock);
	assert_int_equal(start(fx, bad_ms), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'300ms'"));
	pthread_mutex_destroy(&fx->ctx.lock);

	assert_int_equal(start(fx, good), 0);
	assert_int_equal(fx->ctx.n_log, 0);
	assert_int_equal(fx->ctx.n_summary,
			 sizeof(counters) / sizeof(counters[0]));
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		assert_int_equal(summary(fx, counters[i]), 0);
	assert_int_equal(fx->ctx.n_register, 0); /* nothing until read */
	stop(fx);

	/* The lazy file needs file_get. */
	small.size = offsetof(struct ctp_api, file_get);
	ctx_reset(fx, NULL);
	assert_int_equal(fx->p->init(&fx->ctx, &small, &fx->state), -ENOTSUP);
	pthread_mutex_destroy(&fx->ctx.lock);
}

/* Every key becomes smaps.<key lowercased>, a process gauge in bytes,
 * registered once however many processes have it. */
static void process_all_keys(void **state)
{
	struct fx *fx = *state;
	struct fake_proc fp = {.rollup = ROLLUP_PY};
	struct ctp_record rec;
	char name[96];
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(fx->p->host(fx->state, NULL), 0);
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(fp.n_get, 1);
	expect_rollup_py(fx, &rec);
	assert_int_equal(fx->ctx.n_fields, ROLLUP_PY_N);
	for (i = 0; i < ROLLUP_PY_N; i++) {
		const struct reg *r = &fx->ctx.fields[i];

		/* In file order, as met. */
		assert_string_equal(r->name, field_name(name, sizeof(name),
							ROLLUP_PY_KV[i].key));
		assert_int_equal(r->d.scope, CTP_SCOPE_PROCESS);
		assert_int_equal(r->d.type, CTP_TYPE_U64);
		assert_int_equal(r->d.unit, CTP_UNIT_BYTES);
		assert_int_equal(r->d.kind, CTP_KIND_GAUGE);
		assert_int_equal(r->d.rule, CTP_RULE_MAX);
		assert_int_equal(r->d.flags, 0);
	}
	assert_string_equal(fx->ctx.fields[0].name, "smaps.rss");
	assert_string_equal(fx->ctx.fields[3].name, "smaps.pss_anon");
	assert_int_equal(fx->ctx.n_register, ROLLUP_PY_N);

	/* A second process: cached handles, no new registration. */
	fp = (struct fake_proc){.rollup = ROLLUP_CAT};
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(fx->ctx.n_register, ROLLUP_PY_N);
	assert_int_equal(rec.n_sets, 22);
	assert_int_equal(value(fx, &rec, "smaps.rss"), 1708 * 1024);
	assert_int_equal(value(fx, &rec, "smaps.private_clean"), 40 * 1024);
	/* Zero is a value. */
	assert_int_equal(value(fx, &rec, "smaps.swap"), 0);

	/* A future kernel's key: one more field, nothing else to do. */
	fp = (struct fake_proc){.rollup = "0-1 ---p 00000000 00:00 0 [rollup]\n"
					  "Rss:  8 kB\n"
					  "Zswapped_Future:  12 kB\n"};
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(rec.n_sets, 2);
	assert_int_equal(value(fx, &rec, "smaps.rss"), 8192);
	assert_int_equal(value(fx, &rec, "smaps.zswapped_future"), 12288);
	assert_int_equal(fx->ctx.n_register, ROLLUP_PY_N + 1);
	assert_int_equal(summary(fx, "parse_errors"), 0);
	assert_int_equal(summary(fx, "skipped_rss"), 0);
	assert_int_equal(summary(fx, "skipped_budget"), 0);
	stop(fx);
}

/* What is never read: no statm, a broken statm, a kernel thread. */
static void process_not_read(void **state)
{
	struct fx *fx = *state;
	struct fake_proc fp = {.rollup = ROLLUP_PY};
	struct ctp_record rec;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(fx->p->host(fx->state, NULL), 0);
	/* statm unreadable (tallied by the core): size unknown, no risk. */
	assert_int_equal(run_process(fx, &rec, NULL, &fp), 0);
	assert_int_equal(summary(fx, "statm_parse_errors"), 0);
	assert_int_equal(fp.n_get, 0);
	assert_int_equal(rec.n_sets, 0);
	/* statm garbage or cut. */
	assert_int_equal(run_process(fx, &rec, "x y z\n", &fp), 0);
	assert_int_equal(run_process(fx, &rec, "4025 28", &fp), 0);
	assert_int_equal(summary(fx, "statm_parse_errors"), 2);
	assert_int_equal(fp.n_get, 0);
	/* A kernel thread: no mm, and smaps_rollup would say ESRCH. */
	assert_int_equal(run_process(fx, &rec, STATM_KTHREAD, &fp), 0);
	assert_int_equal(summary(fx, "no_mm"), 1);
	assert_int_equal(fp.n_get, 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(fx->ctx.n_register, 0);
	stop(fx);
}

/* A failed or broken smaps_rollup. */
static void process_rollup_problems(void **state)
{
	struct fx *fx = *state;
	struct fake_proc fp = {.rollup = NULL, .rollup_err = -EACCES};
	struct ctp_record rec;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(fx->p->host(fx->state, NULL), 0);
	/* Unreadable: tallied by the core, values absent, no error. */
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(fp.n_get, 1);
	assert_int_equal(rec.n_sets, 0);
	fp = (struct fake_proc){.rollup = NULL, .rollup_err = -ESRCH};
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "parse_errors"), 0);

	/* Malformed, overflowing and cut lines are skipped; the rest kept;
	 * the file counts once. */
	fp = (struct fake_proc){.rollup = "0-1 ---p 0 00:00 0 [rollup]\n"
					  "Rss: 100 kB\n"
					  "Pss: garbage kB\n"
					  "Swap: 18014398509481984 kB\n"
					  "Locked: 3 kB\n"
					  "Anonymous: 4"};
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 2);
	assert_int_equal(value(fx, &rec, "smaps.rss"), 102400);
	assert_int_equal(value(fx, &rec, "smaps.locked"), 3072);
	assert_false(is_set(fx, &rec, "smaps.pss"));
	assert_false(is_set(fx, &rec, "smaps.swap"));
	assert_false(is_set(fx, &rec, "smaps.anonymous"));
	assert_int_equal(summary(fx, "parse_errors"), 1);
	/* Empty (no mm after all): nothing, and not an error. */
	fp = (struct fake_proc){.rollup = ""};
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "parse_errors"), 1);
	stop(fx);
}

/* A key the core refuses (e.g. its name is taken) is asked for once and
 * then skipped, counted in keys_dropped. */
static void process_refused_key(void **state)
{
	struct fx *fx = *state;
	struct fake_proc fp = {.rollup = ROLLUP_PY};
	struct ctp_record rec;
	int i;

	ctx_reset(fx, NULL);
	fx->ctx.refuse_name = "smaps.swap";
	assert_int_equal(fx->p->init(&fx->ctx, &api, &fx->state), 0);
	for (i = 0; i < 3; i++) {
		fp.n_get = 0;
		assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
		assert_int_equal(rec.bad_sets, 0);
		assert_int_equal(rec.n_sets, ROLLUP_PY_N - 1);
		assert_int_equal(value(fx, &rec, "smaps.swappss"), 0);
		assert_false(is_set(fx, &rec, "smaps.swap"));
	}
	assert_int_equal(fx->ctx.n_register, ROLLUP_PY_N);
	assert_int_equal(summary(fx, "keys_dropped"), 3);
	stop(fx);
}

/* max_rss_bytes against statm's resident pages times the page size. */
static void size_cap(void **state)
{
	char cap_at[32], cap_below[32], statm[64];
	const char *at[] = {"max_rss_bytes", cap_at, NULL};
	const char *below[] = {"max_rss_bytes", cap_below, NULL};
	static const char *const zero[] = {"max_rss_bytes", "0", NULL};
	struct fx *fx = *state;
	struct fake_proc fp = {.rollup = ROLLUP_PY};
	struct ctp_record rec;

	snprintf(cap_at, sizeof(cap_at), "%llu",
		 (unsigned long long)(2850 * page));
	snprintf(cap_below, sizeof(cap_below), "%llu",
		 (unsigned long long)(2850 * page - 1));

	/* Exactly at the cap: read. */
	assert_int_equal(start(fx, at), 0);
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(fp.n_get, 1);
	expect_rollup_py(fx, &rec);
	assert_int_equal(summary(fx, "skipped_rss"), 0);
	stop(fx);

	/* One byte over: skipped, never read, values absent. */
	fp.n_get = 0;
	assert_int_equal(start(fx, below), 0);
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(fp.n_get, 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "skipped_rss"), 1);
	/* Smaller processes still are. */
	assert_int_equal(run_process(fx, &rec,
				     statm_pages(statm, sizeof(statm), 2849),
				     &fp),
			 0);
	assert_int_equal(fp.n_get, 1);
	assert_int_equal(rec.n_sets, ROLLUP_PY_N);
	stop(fx);

	/* 0: anything resident is too big; a process with nothing resident
	 * (but an mm) is still read. */
	fp.n_get = 0;
	assert_int_equal(start(fx, zero), 0);
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(run_process(fx, &rec,
				     statm_pages(statm, sizeof(statm), 0), &fp),
			 0);
	assert_int_equal(fp.n_get, 1);
	assert_int_equal(summary(fx, "skipped_rss"), 1);
	stop(fx);

	/* The default: 16 GiB. */
	fp.n_get = 0;
	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_process(fx, &rec,
				     statm_pages(statm, sizeof(statm),
						 (16ull << 30) / page),
				     &fp),
			 0);
	assert_int_equal(fp.n_get, 1);
	assert_int_equal(run_process(fx, &rec,
				     statm_pages(statm, sizeof(statm),
						 (16ull << 30) / page + 1),
				     &fp),
			 0);
	assert_int_equal(fp.n_get, 1);
	/* Pages times page size past 64 bits is over any cap. */
	assert_int_equal(
		run_process(fx, &rec,
			    statm_pages(statm, sizeof(statm), UINT64_MAX / 2),
			    &fp),
		0);
	assert_int_equal(fp.n_get, 1);
	assert_int_equal(summary(fx, "skipped_rss"), 2);
	stop(fx);
}

/*
 * time_budget_ms: reads are metered; once the snapshot's budget is spent
 * the rest are skipped, and host() (once per snapshot) starts afresh.
 * Each fake read sleeps 30 ms against a 10 ms budget, so exactly the first
 * read happens however slow the machine is.
 */
static void time_budget(void **state)
{
	static const char *const b10[] = {"time_budget_ms", "10", NULL};
	static const char *const b0[] = {"time_budget_ms", "0", NULL};
	struct fx *fx = *state;
	struct fake_proc fp = {.rollup = ROLLUP_PY, .sleep_ms = 30};
	struct ctp_record rec;
	int i;

	assert_int_equal(start(fx, b10), 0);
	for (int snap = 1; snap <= 2; snap++) {
		assert_int_equal(fx->p->host(fx->state, NULL), 0);
		for (i = 0; i < 4; i++) {
			assert_int_equal(run_process(fx, &rec, STATM_PY, &fp),
					 0);
			if (i == 0)
				expect_rollup_py(fx, &rec);
			else
				assert_int_equal(rec.n_sets, 0);
		}
		assert_int_equal(fp.n_get, snap);
		assert_int_equal(summary(fx, "skipped_budget"), 3 * snap);
	}
	/* read_us meters the reads: at least the sleeps. */
	assert_true(summary(fx, "read_us") >= 2 * 30000);
	/* Skips by size are decided before the budget is looked at. */
	assert_int_equal(run_process(fx, &rec, STATM_KTHREAD, &fp), 0);
	assert_int_equal(summary(fx, "skipped_budget"), 6);
	stop(fx);

	/* 0 ms: nothing is read at all. */
	fp = (struct fake_proc){.rollup = ROLLUP_PY};
	assert_int_equal(start(fx, b0), 0);
	assert_int_equal(fx->p->host(fx->state, NULL), 0);
	assert_int_equal(run_process(fx, &rec, STATM_PY, &fp), 0);
	assert_int_equal(fp.n_get, 0);
	assert_int_equal(summary(fx, "skipped_budget"), 1);
	stop(fx);
}

struct worker {
	struct fx *fx;
	int id;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ctp_record *rec = malloc(sizeof(*rec));
	char text[128];
	int i;

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 300; i++) {
		/* Common keys, plus one of 8 per-worker keys now and then. */
		struct fake_proc fp = {.rollup = ROLLUP_PY};

		if (i % 3 == 0) {
			snprintf(text, sizeof(text),
				 "Rss: %d kB\nW%d_K%d: %d kB\n", i, w->id,
				 i % 8, w->id);
			fp.rollup = text;
		}
		if (run_process(w->fx, rec, STATM_PY, &fp) != 0 ||
		    rec->bad_sets || fp.n_get != 1) {
			w->failures++;
			continue;
		}
		if (i % 3 == 0) {
			char name[32];

			snprintf(name, sizeof(name), "smaps.w%d_k%d", w->id,
				 i % 8);
			if (rec->n_sets != 2 ||
			    value(w->fx, rec, "smaps.rss") !=
				    (uint64_t)i * 1024 ||
			    value(w->fx, rec, name) != (uint64_t)w->id * 1024)
				w->failures++;
		} else if (rec->n_sets != ROLLUP_PY_N ||
			   value(w->fx, rec, "smaps.pss") != 9719 * 1024) {
			w->failures++;
		}
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent process callbacks meeting new keys at the same time
 * register each exactly once and always find the right handle. */
static void concurrent_workers(void **state)
{
	static const char *const unlimited[] = {"time_budget_ms", "unlimited",
						NULL};
	struct fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, unlimited), 0);
	assert_int_equal(fx->p->host(fx->state, NULL), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){.fx = fx, .id = i};
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	assert_int_equal(fx->ctx.n_fields, ROLLUP_PY_N + 4 * 8);
	/* One registration per key, even when workers meet it at once. */
	assert_int_equal(fx->ctx.n_register, ROLLUP_PY_N + 4 * 8);
	assert_int_equal(summary(fx, "skipped_budget"), 0);
	stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(process_all_keys),
		cmocka_unit_test(process_not_read),
		cmocka_unit_test(process_rollup_problems),
		cmocka_unit_test(process_refused_key),
		cmocka_unit_test(size_cap),
		cmocka_unit_test(time_budget),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
