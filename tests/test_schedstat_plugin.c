/* SPDX-License-Identifier: MIT */
/*
 * The built schedstat.so, driven without the engine: dlopen it, check its
 * descriptor, and run init/thread/fini against a fake struct ctp_api that
 * records every set_* call and serves the lazy sched file through
 * file_get, over literal kernel text. Proves what is set, what stays
 * absent, the summary counters, the `sched` option and concurrent use.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctprof/plugin.h"
#include "schedstat_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/schedstat.so"
/* Handles are offset from table indices so a plugin passing an index where
 * a handle belongs is caught. */
#define HANDLE_BASE 100
#define MAX_FIELDS  32
#define N_FIELDS    28

#define SCHEDSTAT_FULL "15302448102 2210612345 61874\n"

/* ---- The fake core ------------------------------------------------------ */

struct ctp_ctx {
	const struct ctp_plugin *desc;
	const char *const *opts; /* key, value, ..., NULL */
	int disabled_field[2];	 /* table indices field_handle refuses */
	int failing_field;	 /* table index whose setter fails, or -1 */
	unsigned n_summary;
	const char *summary_name[8];
	uint64_t summary[8];
	pthread_mutex_t lock;
	unsigned n_log;
	char last_log[512];
};

struct cell {
	int set;
	uint8_t type;
	uint64_t u;
};

struct ctp_record {
	const struct ctp_plugin *desc;
	struct ctp_ctx *ctx;
	unsigned bad_sets; /* set calls with a wrong handle, type or scope */
	unsigned n_sets;
	struct cell cells[MAX_FIELDS];
};

/* What the fake file_get serves for a task. */
struct fake_task {
	struct ctp_file files[2];
	struct ctp_file sched; /* the lazy file, once fetched */
	unsigned gets;	       /* file_get calls */
	unsigned bad_gets;     /* calls for another index than 1 */
};

static void fake_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	(void)level;
	pthread_mutex_lock(&ctx->lock);
	va_start(ap, fmt);
	vsnprintf(ctx->last_log, sizeof(ctx->last_log), fmt, ap);
	va_end(ap);
	ctx->n_log++;
	pthread_mutex_unlock(&ctx->lock);
}

static const char *find_opt(struct ctp_ctx *ctx, const char *key)
{
	size_t i;

	for (i = 0; ctx->opts && ctx->opts[i]; i += 2)
		if (strcmp(ctx->opts[i], key) == 0)
			return ctx->opts[i + 1];
	return NULL;
}

static int fake_opt_str(struct ctp_ctx *ctx, const char *key, const char **out)
{
	const char *v = find_opt(ctx, key);

	if (!v)
		return -ENOENT;
	*out = v;
	return 0;
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
	const char *v = find_opt(ctx, key);

	if (!v)
		return -ENOENT;
	if (strcmp(v, "true") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0)
		*out = 0;
	else
		return -EINVAL;
	return 0;
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
	return -EINVAL;
}

static int fake_field_handle(struct ctp_ctx *ctx, size_t i)
{
	if (i >= ctx->desc->n_fields)
		return -EINVAL;
	if ((int)i == ctx->disabled_field[0] ||
	    (int)i == ctx->disabled_field[1])
		return -ENOENT;
	return HANDLE_BASE + (int)i;
}

static struct cell *cell_for(struct ctp_record *rec, int h, uint8_t type)
{
	const struct ctp_field_desc *f;
	int i = h - HANDLE_BASE;

	rec->n_sets++;
	if (i < 0 || (uint32_t)i >= rec->desc->n_fields || i >= MAX_FIELDS) {
		rec->bad_sets++;
		return NULL;
	}
	f = &rec->desc->fields[i];
	if (f->type != type || f->scope != CTP_SCOPE_THREAD) {
		rec->bad_sets++;
		return NULL;
	}
	rec->cells[i].set++;
	rec->cells[i].type = type;
	return &rec->cells[i];
}

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	struct cell *c;

	if (h - HANDLE_BASE == rec->ctx->failing_field)
		return -EINVAL;
	c = cell_for(rec, h, CTP_TYPE_U64);
	if (!c)
		return -EINVAL;
	c->u = v;
	return 0;
}

static int fake_set_i64(struct ctp_record *rec, int h, int64_t v)
{
	(void)v;
	cell_for(rec, h, CTP_TYPE_I64);
	return -EINVAL;
}

static int fake_set_bool(struct ctp_record *rec, int h, int v)
{
	struct cell *c;

	if (h - HANDLE_BASE == rec->ctx->failing_field)
		return -EINVAL;
	c = cell_for(rec, h, CTP_TYPE_BOOL);
	if (!c)
		return -EINVAL;
	/* The ABI says nonzero is true; the plugin should say 0 or 1. */
	if (v != 0 && v != 1)
		rec->bad_sets++;
	c->u = (uint64_t)v;
	return 0;
}

static int fake_set_char(struct ctp_record *rec, int h, char v)
{
	(void)v;
	cell_for(rec, h, CTP_TYPE_CHAR);
	return -EINVAL;
}

static int fake_set_str(struct ctp_record *rec, int h, const char *s,
			size_t len)
{
	(void)s, (void)len;
	cell_for(rec, h, CTP_TYPE_STRING);
	return -EINVAL;
}

static int fake_set_cpuset(struct ctp_record *rec, int h, const uint64_t *w,
			   size_t n)
{
	(void)w, (void)n;
	cell_for(rec, h, CTP_TYPE_CPUSET);
	return -EINVAL;
}

static int fake_summary_register(struct ctp_ctx *ctx, const char *name)
{
	unsigned i;

	for (i = 0; i < ctx->n_summary; i++)
		if (strcmp(ctx->summary_name[i], name) == 0)
			return (int)i;
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
	static const struct ctp_roots roots = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(roots),
		.proc = "/proc",
		.sys = "/sys",
		.proc_fd = -1,
		.sys_fd = -1,
		.cgroup_fd = -1,
	};

	(void)ctx;
	return &roots;
}

static int fake_file_get(const struct ctp_task *task, uint32_t i,
			 const struct ctp_file **out)
{
	struct fake_task *ft = task->core;

	ft->gets++;
	if (i != 1) {
		ft->bad_gets++;
		return -EINVAL;
	}
	*out = &ft->sched;
	return ft->sched.err;
}

/* What the plugin said with file_gate (it calls it once, at init). */
static char gate_file[32], gate_kconfig[32];
static unsigned gate_calls;

static int fake_file_gate(struct ctp_ctx *ctx, const char *file,
			  const char *kconfig)
{
	(void)ctx;
	gate_calls++;
	snprintf(gate_file, sizeof(gate_file), "%s", file);
	snprintf(gate_kconfig, sizeof(gate_kconfig), "%s", kconfig);
	return 0;
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
	fx->ctx.disabled_field[0] = fx->ctx.disabled_field[1] = -1;
	fx->ctx.failing_field = -1;
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

static const struct cell *cell(const struct fx *fx,
			       const struct ctp_record *rec, const char *name)
{
	return &rec->cells[field_index(fx->p, name)];
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

/*
 * Run the thread callback over (schedstat, sched) text; NULL text means the
 * read failed with the given error. The lazy sched slot starts as the core
 * leaves it (-ENODATA) and is served by file_get.
 */
static int run_thread(struct fx *fx, struct ctp_record *rec,
		      struct fake_task *ft, const char *schedstat,
		      int schedstat_err, const char *sched, int sched_err)
{
	struct ctp_task task = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(task),
		.tgid = 1,
		.tid = 1,
		.dirfd = -1,
		.proc_fd = -1,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
		.files = ft->files,
		.n_files = 2,
		.core = ft,
	};

	memset(ft, 0, sizeof(*ft));
	ft->files[0] =
		(struct ctp_file){.data = schedstat,
				  .len = schedstat ? strlen(schedstat) : 0,
				  .err = schedstat_err};
	ft->files[1] = (struct ctp_file){.err = -ENODATA};
	ft->sched = (struct ctp_file){.data = sched,
				      .len = sched ? strlen(sched) : 0,
				      .err = sched_err};
	memset(rec, 0, sizeof(*rec));
	rec->desc = fx->p;
	rec->ctx = &fx->ctx;
	return fx->p->thread(fx->state, &task, rec);
}

/* ---- What the plugin declares ------------------------------------------- */

enum { K_COUNT = 1, K_NS_SUM, K_NS_PEAK, K_NS_GAUGE, K_BOOL };

static const struct {
	const char *name;
	int k;
} expected[N_FIELDS] = {
	{"schedstat.run_time", K_NS_SUM},
	{"schedstat.wait_time", K_NS_SUM},
	{"schedstat.timeslices", K_COUNT},
	{"schedstat.nr_wakeups", K_COUNT},
	{"schedstat.nr_wakeups_local", K_COUNT},
	{"schedstat.nr_wakeups_remote", K_COUNT},
	{"schedstat.nr_wakeups_sync", K_COUNT},
	{"schedstat.nr_wakeups_migrate", K_COUNT},
	{"schedstat.nr_wakeups_affine", K_COUNT},
	{"schedstat.nr_wakeups_affine_attempts", K_COUNT},
	{"schedstat.nr_migrations", K_COUNT},
	{"schedstat.nr_forced_migrations", K_COUNT},
	{"schedstat.nr_failed_migrations_affine", K_COUNT},
	{"schedstat.nr_failed_migrations_running", K_COUNT},
	{"schedstat.nr_failed_migrations_hot", K_COUNT},
	{"schedstat.wait_sum", K_NS_SUM},
	{"schedstat.wait_count", K_COUNT},
	{"schedstat.wait_max", K_NS_PEAK},
	{"schedstat.sleep_max", K_NS_PEAK},
	{"schedstat.block_sum", K_NS_SUM},
	{"schedstat.block_max", K_NS_PEAK},
	{"schedstat.iowait_sum", K_NS_SUM},
	{"schedstat.iowait_count", K_COUNT},
	{"schedstat.exec_max", K_NS_PEAK},
	{"schedstat.slice_max", K_NS_PEAK},
	{"schedstat.core_forceidle_sum", K_NS_SUM},
	{"schedstat.slice", K_NS_GAUGE},
	{"schedstat.voluntary_sleep", K_NS_SUM},
};

static void descriptor(void **state)
{
	struct fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t i;

	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_int_equal(p->size, sizeof(struct ctp_plugin));
	assert_string_equal(p->name, "schedstat");
	assert_non_null(p->version);
	assert_non_null(p->description);
	assert_int_equal(p->flags, CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL);
	assert_int_equal(p->field_desc_size, sizeof(struct ctp_field_desc));
	assert_int_equal(p->n_fields, N_FIELDS);
	for (i = 0; i < N_FIELDS; i++) {
		const struct ctp_field_desc *f =
			&p->fields[field_index(p, expected[i].name)];
		uint8_t type = CTP_TYPE_U64, unit = CTP_UNIT_NS;
		uint8_t kind = CTP_KIND_COUNTER, rule = CTP_RULE_SUM;

		switch (expected[i].k) {
		case K_COUNT:
			unit = CTP_UNIT_COUNT;
			break;
		case K_NS_PEAK:
			kind = CTP_KIND_PEAK;
			rule = CTP_RULE_MAX;
			break;
		case K_NS_GAUGE:
			kind = CTP_KIND_GAUGE;
			rule = CTP_RULE_MAX;
			break;
		case K_BOOL:
			type = CTP_TYPE_BOOL;
			unit = CTP_UNIT_NONE;
			kind = CTP_KIND_CATEGORICAL;
			rule = CTP_RULE_MODE;
			break;
		}
		assert_int_equal(f->scope, CTP_SCOPE_THREAD);
		assert_int_equal(f->type, type);
		assert_int_equal(f->unit, unit);
		assert_int_equal(f->kind, kind);
		assert_int_equal(f->rule, rule);
		assert_int_equal(f->flags, 0);
		assert_non_null(f->help);
		assert_true(strlen(f->help) > 0);
		assert_null(strchr(f->help, '\n'));
	}
	assert_non_null(p->thread_files);
	assert_string_equal(p->thread_files[0], "schedstat");
	assert_string_equal(p->thread_files[1], "?sched");
	assert_null(p->thread_files[2]);
	assert_null(p->process_files);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_null(p->process);
	assert_null(p->host);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"shced", "true", NULL};
	static const char *const bad[] = {"sched", "sometimes", NULL};
	static const char *const on[] = {"sched", "true", NULL};
	static const char *const off[] = {"sched", "false", NULL};
	const char *const *good[] = {NULL, on, off};
	static const char *const names[] = {
		"negative_dotted_values", "sched_parse_errors",
		"schedstat_parse_errors", "voluntary_sleep_negative"};
	struct fx *fx = *state;
	struct ctp_api small = api;
	size_t i, j;

	assert_int_equal(start(fx, unknown), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'shced'"));
	pthread_mutex_destroy(&fx->ctx.lock);

	assert_int_equal(start(fx, bad), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "sched"));
	pthread_mutex_destroy(&fx->ctx.lock);

	for (i = 0; i < 3; i++) {
		gate_calls = 0;
		assert_int_equal(start(fx, good[i]), 0);
		assert_non_null(fx->state);
		/* schedstat is gated on CONFIG_SCHED_INFO; sched is not. */
		assert_int_equal(gate_calls, 1);
		assert_string_equal(gate_file, "schedstat");
		assert_string_equal(gate_kconfig, "CONFIG_SCHED_INFO");
		assert_int_equal(fx->ctx.n_summary, 4);
		for (j = 0; j < 4; j++)
			assert_int_equal(summary(fx, names[j]), 0);
		stop(fx);
	}

	/* An older core without file_get() cannot serve the lazy file. */
	small.size = offsetof(struct ctp_api, file_get);
	ctx_reset(fx, NULL);
	assert_int_equal(fx->p->init(&fx->ctx, &small, &fx->state), -ENOTSUP);
	pthread_mutex_destroy(&fx->ctx.lock);
}

/* Every field of SCHED_FULL, once. */
static void thread_all_fields(void **state)
{
	static const struct {
		const char *name;
		uint64_t v;
	} want[] = {
		{"schedstat.run_time", 15302448102ull},
		{"schedstat.wait_time", 2210612345ull},
		{"schedstat.timeslices", 61874},
		{"schedstat.nr_wakeups", 60791},
		{"schedstat.nr_wakeups_local", 41022},
		{"schedstat.nr_wakeups_remote", 19769},
		{"schedstat.nr_wakeups_sync", 2210},
		{"schedstat.nr_wakeups_migrate", 390},
		{"schedstat.nr_wakeups_affine", 803},
		{"schedstat.nr_wakeups_affine_attempts", 5120},
		{"schedstat.nr_migrations", 412},
		{"schedstat.nr_forced_migrations", 7},
		{"schedstat.nr_failed_migrations_affine", 3},
		{"schedstat.nr_failed_migrations_running", 118},
		{"schedstat.nr_failed_migrations_hot", 45},
		{"schedstat.wait_sum", 2210540012ull},
		{"schedstat.wait_count", 61204},
		{"schedstat.wait_max", 17998004},
		{"schedstat.sleep_max", 600012233001ull},
		{"schedstat.block_sum", 20533871007ull},
		{"schedstat.block_max", 103004560},
		{"schedstat.iowait_sum", 8830000017ull},
		{"schedstat.iowait_count", 1270},
		{"schedstat.exec_max", 4000812},
		{"schedstat.slice_max", 11250331},
		{"schedstat.core_forceidle_sum", 1500250},
		{"schedstat.slice", 2800000},
		{"schedstat.voluntary_sleep",
		 4391822019275ull - 20533871007ull},
	};
	struct fx *fx = *state;
	struct ctp_record rec;
	struct fake_task ft;
	size_t i;

	assert_int_equal(sizeof(want) / sizeof(want[0]), N_FIELDS);
	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_FIELDS);
	assert_int_equal(ft.gets, 1);
	assert_int_equal(ft.bad_gets, 0);
	for (i = 0; i < N_FIELDS; i++) {
		const struct cell *c = cell(fx, &rec, want[i].name);

		if (c->set != 1 || c->u != want[i].v)
			fail_msg("%s: set %d value %llu, expected %llu",
				 want[i].name, c->set, (unsigned long long)c->u,
				 (unsigned long long)want[i].v);
	}
	/* ext.enabled is parsed but recorded by the sched_ext plugin. */
	for (i = 0; i < fx->p->n_fields; i++)
		assert_null(strstr(fx->p->fields[i].name, "ext_enabled"));

	/* sched_ext task: no forceidle line. */
	assert_int_equal(run_thread(fx, &rec, &ft, "901000001 123456 150\n", 0,
				    SCHED_EXT_TASK, 0),
			 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_FIELDS - 1);
	assert_int_equal(cell(fx, &rec, "schedstat.core_forceidle_sum")->set,
			 0);
	assert_int_equal(cell(fx, &rec, "schedstat.block_sum")->set, 1);
	assert_int_equal(cell(fx, &rec, "schedstat.block_sum")->u, 0);
	assert_true(cell(fx, &rec, "schedstat.voluntary_sleep")->u ==
		    66000000000ull);
	for (i = 0; i < 4; i++)
		assert_int_equal(fx->ctx.summary[i], 0);
	stop(fx);
}

/* This host's kernel: CONFIG_SCHEDSTATS off. */
static void thread_host_partial(void **state)
{
	static const char *const set[] = {
		"schedstat.run_time", "schedstat.wait_time",
		"schedstat.timeslices", "schedstat.nr_migrations",
		"schedstat.slice"};
	struct fx *fx = *state;
	struct ctp_record rec;
	struct fake_task ft;
	uint32_t i, j;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_HOST, 0, SCHED_HOST, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 5);
	assert_int_equal(cell(fx, &rec, "schedstat.run_time")->u, 116177358);
	assert_int_equal(cell(fx, &rec, "schedstat.wait_time")->u, 12166374);
	assert_int_equal(cell(fx, &rec, "schedstat.timeslices")->u, 414);
	assert_int_equal(cell(fx, &rec, "schedstat.nr_migrations")->u, 54);
	assert_int_equal(cell(fx, &rec, "schedstat.slice")->u, 1400000);
	/* Everything else absent, not zero. */
	for (i = 0; i < fx->p->n_fields; i++) {
		int listed = 0;

		for (j = 0; j < 5; j++)
			listed |= !strcmp(fx->p->fields[i].name, set[j]);
		assert_int_equal(rec.cells[i].set, listed);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(fx->ctx.summary[i], 0);
	stop(fx);
}

/* Copy of `text` with the value of `key`'s line replaced. */
static char *edit(const char *text, const char *key, const char *value)
{
	size_t klen = strlen(key);
	char *out = malloc(strlen(text) + 256), *o = out;
	const char *l, *nl;

	assert_non_null(out);
	for (l = text; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		assert_non_null(nl);
		if (strncmp(l, key, klen) == 0 && l[klen] == ' ') {
			o += sprintf(o, "%-45s:%s\n", key, value);
			continue;
		}
		memcpy(o, l, (size_t)(nl + 1 - l));
		o += nl + 1 - l;
	}
	*o = '\0';
	return out;
}

static void thread_summary_counters(void **state)
{
	struct fx *fx = *state;
	struct ctp_record rec;
	struct fake_task ft;
	char *a, *b, *neg, *g, *blk;

	assert_int_equal(start(fx, NULL), 0);

	/* Three negative dotted values: absent, counted, not an error. */
	a = edit(SCHED_FULL, "wait_sum", "            -5.000000");
	b = edit(a, "sleep_max", "            -1.250000");
	neg = edit(b, "sum_block_runtime", "           -12.000000");
	assert_int_equal(run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, neg, 0),
			 0);
	assert_int_equal(rec.n_sets, N_FIELDS - 4);
	assert_int_equal(cell(fx, &rec, "schedstat.wait_sum")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.sleep_max")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.block_sum")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.voluntary_sleep")->set, 0);
	assert_int_equal(summary(fx, "negative_dotted_values"), 3);
	assert_int_equal(summary(fx, "sched_parse_errors"), 0);
	assert_int_equal(summary(fx, "voluntary_sleep_negative"), 0);

	/* Garbage: one parse error per file, the rest kept. */
	g = edit(SCHED_FULL, "nr_wakeups", "                 12x");
	assert_int_equal(run_thread(fx, &rec, &ft, "123 abc 5\n", 0, g, 0), 0);
	assert_int_equal(cell(fx, &rec, "schedstat.nr_wakeups")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.run_time")->u, 123);
	assert_int_equal(cell(fx, &rec, "schedstat.wait_time")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.timeslices")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.nr_wakeups_local")->u,
			 41022);
	assert_int_equal(rec.n_sets, 1 + N_FIELDS - 3 - 1);
	assert_int_equal(summary(fx, "sched_parse_errors"), 1);
	assert_int_equal(summary(fx, "schedstat_parse_errors"), 1);

	/* Block over sleep: no voluntary sleep, counted; block_sum kept. */
	blk = edit(SCHED_FULL, "sum_block_runtime", "       9999999.000000");
	assert_int_equal(run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, blk, 0),
			 0);
	assert_int_equal(cell(fx, &rec, "schedstat.voluntary_sleep")->set, 0);
	assert_true(cell(fx, &rec, "schedstat.block_sum")->u ==
		    9999999000000ull);
	assert_int_equal(rec.n_sets, N_FIELDS - 1);
	assert_int_equal(summary(fx, "voluntary_sleep_negative"), 1);

	/* A cut file: counted once, what parsed is kept. */
	assert_int_equal(run_thread(fx, &rec, &ft, "1 2 3", 0, "x (1, #thr", 0),
			 0);
	assert_int_equal(rec.n_sets, 2);
	assert_int_equal(summary(fx, "sched_parse_errors"), 2);
	assert_int_equal(summary(fx, "schedstat_parse_errors"), 2);
	assert_int_equal(summary(fx, "negative_dotted_values"), 3);
	assert_int_equal(rec.bad_sets, 0);
	free(a);
	free(b);
	free(neg);
	free(g);
	free(blk);
	stop(fx);
}

static void thread_files_missing(void **state)
{
	static const int errs[] = {-ENOENT, -ESRCH, -EACCES, -EIO};
	struct fx *fx = *state;
	struct ctp_record rec;
	struct fake_task ft;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		/* No schedstat (CONFIG_SCHED_INFO off): sched still read;
		 * the core tallies the failed read, the plugin does not
		 * fail. */
		assert_int_equal(
			run_thread(fx, &rec, &ft, NULL, errs[i], SCHED_HOST, 0),
			0);
		assert_int_equal(rec.n_sets, 2);
		assert_int_equal(cell(fx, &rec, "schedstat.run_time")->set, 0);
		assert_int_equal(cell(fx, &rec, "schedstat.slice")->u, 1400000);
		/* No sched: schedstat still recorded. */
		assert_int_equal(run_thread(fx, &rec, &ft, SCHEDSTAT_HOST, 0,
					    NULL, errs[i]),
				 0);
		assert_int_equal(rec.n_sets, 3);
		assert_int_equal(ft.gets, 1);
		assert_int_equal(cell(fx, &rec, "schedstat.timeslices")->u,
				 414);
		/* Neither: nothing, and still no error of the plugin. */
		assert_int_equal(
			run_thread(fx, &rec, &ft, NULL, errs[i], NULL, errs[i]),
			0);
		assert_int_equal(rec.n_sets, 0);
	}
	/* err 0 but no bytes is no file. */
	assert_int_equal(run_thread(fx, &rec, &ft, NULL, 0, NULL, 0), 0);
	assert_int_equal(rec.n_sets, 0);
	/* Empty files: parse errors, nothing set. */
	assert_int_equal(run_thread(fx, &rec, &ft, "", 0, "", 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "schedstat_parse_errors"), 1);
	assert_int_equal(summary(fx, "sched_parse_errors"), 1);
	assert_int_equal(rec.bad_sets, 0);

	/* A task that declares fewer files than the plugin needs. */
	{
		struct ctp_task task = {.abi = CTP_ABI_MAJOR,
					.size = sizeof(task),
					.files = ft.files,
					.n_files = 1,
					.core = &ft};

		assert_int_equal(fx->p->thread(fx->state, &task, &rec),
				 -EINVAL);
	}
	stop(fx);
}

static void option_sched_false(void **state)
{
	static const char *const off[] = {"sched", "false", NULL};
	struct fx *fx = *state;
	struct ctp_record rec;
	struct fake_task ft;

	assert_int_equal(start(fx, off), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0), 0);
	/* The sched file is never fetched. */
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 3);
	assert_int_equal(cell(fx, &rec, "schedstat.timeslices")->u, 61874);
	assert_int_equal(cell(fx, &rec, "schedstat.nr_migrations")->set, 0);
	stop(fx);
}

static void disabled_and_failing_fields(void **state)
{
	struct fx *fx = *state;
	struct ctp_record rec;
	struct fake_task ft;

	ctx_reset(fx, NULL);
	fx->ctx.disabled_field[0] = field_index(fx->p, "schedstat.wait_sum");
	fx->ctx.disabled_field[1] =
		field_index(fx->p, "schedstat.nr_wakeups_sync");
	assert_int_equal(fx->p->init(&fx->ctx, &api, &fx->state), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_FIELDS - 2);
	assert_int_equal(cell(fx, &rec, "schedstat.wait_sum")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.nr_wakeups_sync")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.wait_max")->u, 17998004);

	/* A refused setter is the plugin's error; the others still land. */
	fx->ctx.failing_field = field_index(fx->p, "schedstat.wait_count");
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0),
		-EINVAL);
	assert_int_equal(rec.n_sets, N_FIELDS - 3);
	assert_int_equal(cell(fx, &rec, "schedstat.wait_count")->set, 0);
	assert_int_equal(cell(fx, &rec, "schedstat.slice")->u, 2800000);
	stop(fx);
}

struct worker {
	struct fx *fx;
	const char *sched;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ctp_record *rec = malloc(sizeof(*rec));
	struct fake_task ft;
	int i;

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 500; i++) {
		if (run_thread(w->fx, rec, &ft, SCHEDSTAT_FULL, 0, w->sched,
			       0) != 0 ||
		    rec->bad_sets || rec->n_sets != N_FIELDS - 4 ||
		    cell(w->fx, rec, "schedstat.wait_max")->u != 17998004 ||
		    cell(w->fx, rec, "schedstat.run_time")->u != 15302448102ull)
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks on one state. */
static void concurrent_workers(void **state)
{
	struct fx *fx = *state;
	char *a = edit(SCHED_FULL, "wait_sum", "            -5.000000");
	char *b = edit(a, "sleep_max", "            -1.250000");
	char *neg = edit(b, "sum_block_runtime", "           -12.000000");
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){.fx = fx, .sched = neg};
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	assert_int_equal(summary(fx, "negative_dotted_values"), 4 * 500 * 3);
	assert_int_equal(summary(fx, "sched_parse_errors"), 0);
	stop(fx);
	free(a);
	free(b);
	free(neg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(thread_all_fields),
		cmocka_unit_test(thread_host_partial),
		cmocka_unit_test(thread_summary_counters),
		cmocka_unit_test(thread_files_missing),
		cmocka_unit_test(option_sched_false),
		cmocka_unit_test(disabled_and_failing_fields),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
