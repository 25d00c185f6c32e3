/* SPDX-License-Identifier: MIT */
/*
 * The built io.so, driven without the engine: dlopen it, check its
 * descriptor, and run init/thread/fini against a fake struct ctp_api that
 * records every set_u64 and file_gate call, over literal kernel text.
 * Proves what is set, what stays absent, the kernel-config gate and the
 * summary counter, also with concurrent callers.
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

#include <cmocka.h>

#include "ctprof/plugin.h"
#include "test_io_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/io.so"
/* Handles are offset from table indices so a plugin passing an index where
 * a handle belongs is caught. */
#define HANDLE_BASE 100
#define MAX_FIELDS  16

/* ---- The fake core ------------------------------------------------------ */

struct ctp_ctx {
	const struct ctp_plugin *desc;
	const char *const *opts; /* key, value, ..., NULL */
	struct ctp_roots roots;
	int disabled_field; /* table index field_handle refuses, or -1 */
	int gate_ret;	    /* what file_gate returns */
	unsigned n_gates;
	char gate_file[64], gate_kconfig[64];
	unsigned n_summary;
	const char *summary_name[8];
	uint64_t summary[8];
	pthread_mutex_t lock;
	unsigned n_log;
	char last_log[512];
};

struct ctp_record {
	const struct ctp_plugin *desc;
	uint8_t scope;
	unsigned bad_sets, n_sets;
	int set[MAX_FIELDS];
	uint64_t v[MAX_FIELDS];
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

static int fake_field_register(struct ctp_ctx *ctx,
			       const struct ctp_field_desc *d)
{
	(void)ctx, (void)d;
	fail_msg("io registers no field at runtime");
	return -EINVAL;
}

static int fake_field_handle(struct ctp_ctx *ctx, size_t i)
{
	if (i >= ctx->desc->n_fields)
		return -EINVAL;
	if ((int)i == ctx->disabled_field)
		return -ENOENT;
	return HANDLE_BASE + (int)i;
}

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	int i = h - HANDLE_BASE;

	rec->n_sets++;
	if (i < 0 || (uint32_t)i >= rec->desc->n_fields ||
	    rec->desc->fields[i].type != CTP_TYPE_U64 ||
	    rec->desc->fields[i].scope != rec->scope) {
		rec->bad_sets++;
		return -EINVAL;
	}
	rec->set[i]++;
	rec->v[i] = v;
	return 0;
}

/* io sets nothing but u64 values. */
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
	if (ctx->n_summary == 8)
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

static int fake_file_get(const struct ctp_task *task, uint32_t i,
			 const struct ctp_file **out)
{
	if (i >= task->n_files)
		return -EINVAL;
	*out = &task->files[i];
	return task->files[i].err;
}

static void fake_set_hint(struct ctp_ctx *ctx, const char *text)
{
	(void)ctx, (void)text;
}

static int fake_file_gate(struct ctp_ctx *ctx, const char *file,
			  const char *kconfig)
{
	ctx->n_gates++;
	snprintf(ctx->gate_file, sizeof(ctx->gate_file), "%s", file);
	snprintf(ctx->gate_kconfig, sizeof(ctx->gate_kconfig), "%s", kconfig);
	return ctx->gate_ret;
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
	.set_hint = fake_set_hint,
	.file_gate = fake_file_gate,
};

/* ---- Fixture ------------------------------------------------------------- */

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct ctp_ctx ctx;
	void *state;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
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
	fx->ctx.desc = fx->p;
	fx->ctx.opts = opts;
	fx->ctx.roots.proc = "/proc";
	fx->ctx.roots.sys = "/sys";
	fx->ctx.roots.proc_fd = fx->ctx.roots.sys_fd = -1;
	fx->ctx.roots.cgroup_fd = -1;
	fx->ctx.disabled_field = -1;
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

static int field_index(const struct ctp_plugin *p, const char *name)
{
	uint32_t i;

	for (i = 0; i < p->n_fields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return (int)i;
	fail_msg("no field %s", name);
	return -1;
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

/* Run the thread callback over io text; NULL text means the read failed
 * with err. */
static int run_thread(struct fx *fx, struct ctp_record *rec, const char *io,
		      int err)
{
	struct ctp_file f = {
		.data = io, .len = io ? strlen(io) : 0, .err = err};
	struct ctp_task task = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(task),
		.tgid = 1,
		.tid = 2,
		.dirfd = -1,
		.proc_fd = -1,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
		.files = &f,
		.n_files = 1,
	};

	memset(rec, 0, sizeof(*rec));
	rec->desc = fx->p;
	rec->scope = CTP_SCOPE_THREAD;
	return fx->p->thread(fx->state, &task, rec);
}

/* ---- Tests -------------------------------------------------------------- */

static const struct {
	const char *name;
	uint8_t unit;
	uint64_t bash; /* value in IO_BASH */
} expected[] = {
	{"io.rchar", CTP_UNIT_BYTES, 273215},
	{"io.wchar", CTP_UNIT_BYTES, 12132},
	{"io.syscr", CTP_UNIT_COUNT, 67210},
	{"io.syscw", CTP_UNIT_COUNT, 490},
	{"io.read_bytes", CTP_UNIT_BYTES, 0},
	{"io.write_bytes", CTP_UNIT_BYTES, 286720},
	{"io.cancelled_write_bytes", CTP_UNIT_BYTES, 0},
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static void descriptor(void **state)
{
	struct fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t i;

	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_int_equal(p->size, sizeof(struct ctp_plugin));
	assert_string_equal(p->name, "io");
	assert_non_null(p->version);
	assert_non_null(p->description);
	assert_int_equal(p->flags, CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL);
	assert_int_equal(p->field_desc_size, sizeof(struct ctp_field_desc));
	assert_int_equal(p->n_fields, N_EXPECTED);
	for (i = 0; i < N_EXPECTED; i++) {
		const struct ctp_field_desc *f =
			&p->fields[field_index(p, expected[i].name)];

		assert_int_equal(f->scope, CTP_SCOPE_THREAD);
		assert_int_equal(f->type, CTP_TYPE_U64);
		assert_int_equal(f->unit, expected[i].unit);
		assert_int_equal(f->kind, CTP_KIND_COUNTER);
		assert_int_equal(f->rule, CTP_RULE_SUM);
		assert_int_equal(f->flags, 0);
		assert_non_null(f->help);
		assert_true(strlen(f->help) > 0);
		assert_null(strchr(f->help, '\n'));
	}
	assert_non_null(p->thread_files);
	assert_string_equal(p->thread_files[0], "io");
	assert_null(p->thread_files[1]);
	assert_null(p->process_files);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_null(p->process);
	assert_null(p->host);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_and_gate(void **state)
{
	static const char *const opts[] = {"fields", "rchar", NULL};
	struct fx *fx = *state;
	struct ctp_api small = api;

	/* io has no options: any is a mistake. */
	assert_int_equal(start(fx, opts), -EINVAL);
	assert_null(fx->state);
	assert_int_equal(fx->ctx.n_log, 1);
	assert_non_null(strstr(fx->ctx.last_log, "'fields'"));
	assert_int_equal(fx->ctx.n_gates, 0);
	pthread_mutex_destroy(&fx->ctx.lock);

	/* The gate names the file and the kernel option, once. */
	assert_int_equal(start(fx, NULL), 0);
	assert_non_null(fx->state);
	assert_int_equal(fx->ctx.n_log, 0);
	assert_int_equal(fx->ctx.n_gates, 1);
	assert_string_equal(fx->ctx.gate_file, "io");
	assert_string_equal(fx->ctx.gate_kconfig, "CONFIG_TASK_IO_ACCOUNTING");
	assert_int_equal(fx->ctx.n_summary, 1);
	assert_int_equal(summary(fx, "parse_errors"), 0);
	stop(fx);

	/* A refused gate costs only the hint. */
	ctx_reset(fx, NULL);
	fx->ctx.gate_ret = -EEXIST;
	assert_int_equal(fx->p->init(&fx->ctx, &api, &fx->state), 0);
	assert_int_equal(fx->ctx.n_gates, 1);
	stop(fx);

	/* A core from before file_gate: no call past its table. */
	small.size = offsetof(struct ctp_api, file_gate);
	ctx_reset(fx, NULL);
	assert_int_equal(fx->p->init(&fx->ctx, &small, &fx->state), 0);
	assert_int_equal(fx->ctx.n_gates, 0);
	stop(fx);

	/* ... and one without roots(), the oldest this plugin accepts. */
	small.size = offsetof(struct ctp_api, roots);
	ctx_reset(fx, NULL);
	assert_int_equal(fx->p->init(&fx->ctx, &small, &fx->state), -ENOTSUP);
	pthread_mutex_destroy(&fx->ctx.lock);
}

static void thread_all_fields(void **state)
{
	struct fx *fx = *state;
	struct ctp_record rec;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, IO_BASH, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_EXPECTED);
	for (i = 0; i < N_EXPECTED; i++) {
		int k = field_index(fx->p, expected[i].name);

		assert_int_equal(rec.set[k], 1);
		assert_true(rec.v[k] == expected[i].bash);
	}
	/* Zero is a value: set, not absent. */
	assert_int_equal(run_thread(fx, &rec, IO_CAT, 0), 0);
	assert_int_equal(rec.n_sets, N_EXPECTED);
	assert_int_equal(rec.set[field_index(fx->p, "io.wchar")], 1);
	assert_int_equal(rec.v[field_index(fx->p, "io.wchar")], 0);
	assert_int_equal(rec.v[field_index(fx->p, "io.rchar")], 6976);
	assert_int_equal(summary(fx, "parse_errors"), 0);
	stop(fx);
}

/* A failed read: values absent, callback fine, nothing counted (the core
 * tallies the failure and decides whether the thread vanished). */
static void thread_file_missing(void **state)
{
	static const int errs[] = {-ENOENT, -ESRCH, -EACCES, -EIO, -EISDIR};
	struct fx *fx = *state;
	struct ctp_record rec;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		assert_int_equal(run_thread(fx, &rec, NULL, errs[i]), 0);
		assert_int_equal(rec.n_sets, 0);
	}
	assert_int_equal(summary(fx, "parse_errors"), 0);
	stop(fx);
}

/* Broken text: what parses is set, the rest absent, each file counted
 * once in parse_errors. */
static void thread_partial(void **state)
{
	static const char bad[] = "rchar: 5\n"
				  "wchar: 6x\n"
				  "syscr: 99999999999999999999\n"
				  "syscw: 8\n"
				  "write_bytes: 9\n"
				  "cancelled_write_bytes: 1";
	struct fx *fx = *state;
	struct ctp_record rec;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, bad, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 3);
	assert_int_equal(rec.v[field_index(fx->p, "io.rchar")], 5);
	assert_int_equal(rec.v[field_index(fx->p, "io.syscw")], 8);
	assert_int_equal(rec.v[field_index(fx->p, "io.write_bytes")], 9);
	/* garbage, overflow, missing, cut short */
	assert_int_equal(rec.set[field_index(fx->p, "io.wchar")], 0);
	assert_int_equal(rec.set[field_index(fx->p, "io.syscr")], 0);
	assert_int_equal(rec.set[field_index(fx->p, "io.read_bytes")], 0);
	assert_int_equal(
		rec.set[field_index(fx->p, "io.cancelled_write_bytes")], 0);
	assert_int_equal(summary(fx, "parse_errors"), 1);

	assert_int_equal(run_thread(fx, &rec, "", 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(run_thread(fx, &rec, "\x01\x02garbage", 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "parse_errors"), 3);
	stop(fx);
}

static void disabled_field(void **state)
{
	struct fx *fx = *state;
	struct ctp_record rec;

	ctx_reset(fx, NULL);
	fx->ctx.disabled_field = field_index(fx->p, "io.syscr");
	assert_int_equal(fx->p->init(&fx->ctx, &api, &fx->state), 0);
	assert_int_equal(run_thread(fx, &rec, IO_BASH, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_EXPECTED - 1);
	assert_int_equal(rec.set[field_index(fx->p, "io.syscr")], 0);
	assert_int_equal(rec.v[field_index(fx->p, "io.syscw")], 490);
	stop(fx);
}

struct worker {
	struct fx *fx;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ctp_record *rec = malloc(sizeof(*rec));
	int i, k = field_index(w->fx->p, "io.write_bytes");

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 500; i++) {
		const char *text = i % 2 ? IO_BASH : "rchar: 1\n";

		if (run_thread(w->fx, rec, text, 0) != 0 || rec->bad_sets ||
		    rec->n_sets != (i % 2 ? N_EXPECTED : 1u) ||
		    (i % 2 && rec->v[k] != 286720))
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks share nothing but the counters. */
static void concurrent_workers(void **state)
{
	struct fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < 4; i++) {
		w[i].fx = fx;
		w[i].failures = 0;
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	/* Each "rchar: 1" file lacks six keys: 4 workers x 250. */
	assert_int_equal(summary(fx, "parse_errors"), 1000);
	stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_and_gate),
		cmocka_unit_test(thread_all_fields),
		cmocka_unit_test(thread_file_missing),
		cmocka_unit_test(thread_partial),
		cmocka_unit_test(disabled_field),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
