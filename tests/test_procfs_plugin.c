/* SPDX-License-Identifier: MIT */
/*
 * The built procfs-stat.so, driven without the engine: dlopen it, check its
 * descriptor, and run init/thread/process/fini against a fake struct ctp_api
 * that records every set_* call, over literal kernel text. Proves what is
 * set, what stays absent, the policy names and the summary counters.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/plugin.h"
#include "procfs_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/procfs-stat.so"
/* Handles are offset from table indices so a plugin passing an index where
 * a handle belongs is caught. */
#define HANDLE_BASE 100
#define MAX_FIELDS  32
#define MAX_WORDS   8

/* ---- The fake core ------------------------------------------------------ */

struct ctp_ctx {
	const struct ctp_plugin *desc;
	const char *const *opts; /* key, value, ..., NULL */
	struct ctp_roots roots;
	int disabled_field; /* table index field_handle refuses, or -1 */
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
	int64_t i;
	char c;
	char str[64];
	uint64_t words[MAX_WORDS];
	size_t n_words;
};

struct ctp_record {
	const struct ctp_plugin *desc;
	uint8_t scope;
	unsigned bad_sets; /* set calls with a wrong handle, type or scope */
	unsigned n_sets;
	struct cell cells[MAX_FIELDS];
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

static struct cell *cell_for(struct ctp_record *rec, int h, uint8_t type)
{
	const struct ctp_field_desc *f;
	int i = h - HANDLE_BASE;

	rec->n_sets++;
	if (i < 0 || (uint32_t)i >= rec->desc->n_fields) {
		rec->bad_sets++;
		return NULL;
	}
	f = &rec->desc->fields[i];
	if (f->type != type || f->scope != rec->scope) {
		rec->bad_sets++;
		return NULL;
	}
	rec->cells[i].set++;
	rec->cells[i].type = type;
	return &rec->cells[i];
}

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	struct cell *c = cell_for(rec, h, CTP_TYPE_U64);

	if (!c)
		return -EINVAL;
	c->u = v;
	return 0;
}

static int fake_set_i64(struct ctp_record *rec, int h, int64_t v)
{
	struct cell *c = cell_for(rec, h, CTP_TYPE_I64);

	if (!c)
		return -EINVAL;
	c->i = v;
	return 0;
}

static int fake_set_bool(struct ctp_record *rec, int h, int v)
{
	struct cell *c = cell_for(rec, h, CTP_TYPE_BOOL);

	if (!c)
		return -EINVAL;
	c->u = (uint64_t)v;
	return 0;
}

static int fake_set_char(struct ctp_record *rec, int h, char v)
{
	struct cell *c = cell_for(rec, h, CTP_TYPE_CHAR);

	if (!c)
		return -EINVAL;
	c->c = v;
	return 0;
}

static int fake_set_str(struct ctp_record *rec, int h, const char *s,
			size_t len)
{
	struct cell *c = cell_for(rec, h, CTP_TYPE_STRING);

	if (!c || len >= sizeof(c->str) || memchr(s, '\0', len))
		return -EINVAL;
	memcpy(c->str, s, len);
	c->str[len] = '\0';
	return 0;
}

static int fake_set_cpuset(struct ctp_record *rec, int h, const uint64_t *w,
			   size_t n)
{
	struct cell *c = cell_for(rec, h, CTP_TYPE_CPUSET);

	if (!c)
		return -EINVAL;
	/* Trailing zero words carry nothing, like the core's trim. */
	while (n && !w[n - 1])
		n--;
	if (n > MAX_WORDS)
		return -E2BIG;
	memcpy(c->words, w, n * sizeof(*w));
	c->n_words = n;
	return 0;
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

static void ctx_reset(struct fx *fx, const char *proc_root,
		      const char *const *opts)
{
	memset(&fx->ctx, 0, sizeof(fx->ctx));
	pthread_mutex_init(&fx->ctx.lock, NULL);
	fx->ctx.desc = fx->p;
	fx->ctx.opts = opts;
	fx->ctx.roots.proc = proc_root;
	fx->ctx.roots.sys = "/sys";
	fx->ctx.roots.proc_fd = fx->ctx.roots.sys_fd = -1;
	fx->ctx.roots.cgroup_fd = -1;
	fx->ctx.disabled_field = -1;
	fx->state = NULL;
}

static int start(struct fx *fx, const char *proc_root, const char *const *opts)
{
	ctx_reset(fx, proc_root, opts);
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

static void rec_init(struct ctp_record *rec, const struct fx *fx, uint8_t scope)
{
	memset(rec, 0, sizeof(*rec));
	rec->desc = fx->p;
	rec->scope = scope;
}

/* Run the thread callback over (stat, status) text; NULL text means err. */
static int run_thread(struct fx *fx, struct ctp_record *rec, int tid,
		      const char *stat, int stat_err, const char *status,
		      int status_err)
{
	struct ctp_file files[2] = {
		{.data = stat, .len = stat ? strlen(stat) : 0, .err = stat_err},
		{.data = status,
		 .len = status ? strlen(status) : 0,
		 .err = status_err},
	};
	struct ctp_task task = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(task),
		.tgid = tid,
		.tid = tid,
		.dirfd = -1,
		.proc_fd = -1,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
		.files = files,
		.n_files = 2,
	};

	rec_init(rec, fx, CTP_SCOPE_THREAD);
	return fx->p->thread(fx->state, &task, rec);
}

static int run_process(struct fx *fx, struct ctp_record *rec, const char *stat,
		       int err)
{
	struct ctp_file f = {
		.data = stat, .len = stat ? strlen(stat) : 0, .err = err};
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
		.files = &f,
		.n_files = 1,
	};

	rec_init(rec, fx, CTP_SCOPE_PROCESS);
	return fx->p->process(fx->state, &task, rec);
}

/* A status text with its Cpus_allowed_list replaced. */
static const char *status_with_cpus(char *buf, size_t cap, const char *list)
{
	const char *k = strstr(STATUS_T59, "Cpus_allowed_list:\t");
	const char *nl;

	assert_non_null(k);
	k += strlen("Cpus_allowed_list:\t");
	nl = strchr(k, '\n');
	assert_true(snprintf(buf, cap, "%.*s%s%s", (int)(k - STATUS_T59),
			     STATUS_T59, list, nl) < (int)cap);
	return buf;
}

/* ---- Tests -------------------------------------------------------------- */

static const struct {
	const char *name;
	uint8_t scope, type, unit, kind, rule;
} expected[] = {
	{"procfs.minflt", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"procfs.majflt", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"procfs.utime", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"procfs.stime", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"procfs.priority", CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"procfs.nice", CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"procfs.start_time", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_TICKS,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"procfs.processor", CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"procfs.rt_priority", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_NONE,
	 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	{"procfs.policy", CTP_SCOPE_THREAD, CTP_TYPE_STRING, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{"procfs.state", CTP_SCOPE_THREAD, CTP_TYPE_CHAR, CTP_UNIT_NONE,
	 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	{"procfs.voluntary_csw", CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"procfs.nonvoluntary_csw", CTP_SCOPE_THREAD, CTP_TYPE_U64,
	 CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	{"procfs.cpu_affinity", CTP_SCOPE_THREAD, CTP_TYPE_CPUSET,
	 CTP_UNIT_NONE, CTP_KIND_CPUSET, CTP_RULE_UNION},
	{"procfs.nr_threads", CTP_SCOPE_PROCESS, CTP_TYPE_U64, CTP_UNIT_COUNT,
	 CTP_KIND_GAUGE, CTP_RULE_MAX},
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static void descriptor(void **state)
{
	struct fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t i;

	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_int_equal(p->size, sizeof(struct ctp_plugin));
	assert_string_equal(p->name, "procfs-stat");
	assert_non_null(p->version);
	assert_non_null(p->description);
	assert_int_equal(p->flags, CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL);
	assert_int_equal(p->field_desc_size, sizeof(struct ctp_field_desc));
	assert_int_equal(p->n_fields, N_EXPECTED);
	for (i = 0; i < N_EXPECTED; i++) {
		const struct ctp_field_desc *f =
			&p->fields[field_index(p, expected[i].name)];

		assert_int_equal(f->scope, expected[i].scope);
		assert_int_equal(f->type, expected[i].type);
		assert_int_equal(f->unit, expected[i].unit);
		assert_int_equal(f->kind, expected[i].kind);
		assert_int_equal(f->rule, expected[i].rule);
		assert_int_equal(f->flags, 0);
		assert_non_null(f->help);
		assert_true(strlen(f->help) > 0);
		assert_null(strchr(f->help, '\n'));
	}
	assert_non_null(p->thread_files);
	assert_string_equal(p->thread_files[0], "stat");
	assert_string_equal(p->thread_files[1], "status");
	assert_null(p->thread_files[2]);
	assert_non_null(p->process_files);
	assert_string_equal(p->process_files[0], "stat");
	assert_null(p->process_files[1]);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_non_null(p->process);
	assert_null(p->host);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"affinity", "status", "afinity",
					      "syscall", NULL};
	static const char *const bad_value[] = {"affinity", "sometimes", NULL};
	static const char *const each[][3] = {{"affinity", "auto", NULL},
					      {"affinity", "syscall", NULL},
					      {"affinity", "status", NULL}};
	struct fx *fx = *state;
	struct ctp_api small = api;
	size_t i;

	assert_int_equal(start(fx, "/proc", unknown), -EINVAL);
	assert_null(fx->state);
	assert_int_equal(fx->ctx.n_log, 1);
	assert_non_null(strstr(fx->ctx.last_log, "'afinity'"));
	pthread_mutex_destroy(&fx->ctx.lock);

	assert_int_equal(start(fx, "/proc", bad_value), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "sometimes"));
	pthread_mutex_destroy(&fx->ctx.lock);

	for (i = 0; i < 3; i++) {
		assert_int_equal(start(fx, "/proc", each[i]), 0);
		assert_non_null(fx->state);
		assert_int_equal(fx->ctx.n_summary, 3);
		assert_int_equal(summary(fx, "stat_parse_errors"), 0);
		assert_int_equal(summary(fx, "status_parse_errors"), 0);
		assert_int_equal(summary(fx, "affinity_syscall_fallbacks"), 0);
		stop(fx);
	}

	/* An older core without roots(). */
	small.size = offsetof(struct ctp_api, roots);
	ctx_reset(fx, "/proc", NULL);
	assert_int_equal(fx->p->init(&fx->ctx, &small, &fx->state), -ENOTSUP);
	pthread_mutex_destroy(&fx->ctx.lock);
}

static void thread_all_fields(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	struct fx *fx = *state;
	struct ctp_record rec;

	assert_int_equal(start(fx, "/proc", opts), 0);
	assert_int_equal(
		run_thread(fx, &rec, 4491, STAT_FIFO, 0, STATUS_T59, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 14); /* each thread field exactly once */
	assert_int_equal(cell(fx, &rec, "procfs.minflt")->u, 180);
	assert_int_equal(cell(fx, &rec, "procfs.majflt")->u, 1);
	/* Zero is a value: set, not absent. */
	assert_int_equal(cell(fx, &rec, "procfs.utime")->set, 1);
	assert_int_equal(cell(fx, &rec, "procfs.utime")->u, 0);
	assert_int_equal(cell(fx, &rec, "procfs.stime")->set, 1);
	assert_int_equal(cell(fx, &rec, "procfs.stime")->u, 0);
	assert_int_equal(cell(fx, &rec, "procfs.priority")->i, -51);
	assert_int_equal(cell(fx, &rec, "procfs.nice")->set, 1);
	assert_int_equal(cell(fx, &rec, "procfs.nice")->i, 0);
	assert_int_equal(cell(fx, &rec, "procfs.start_time")->u, 48490);
	assert_int_equal(cell(fx, &rec, "procfs.processor")->i, 1);
	assert_int_equal(cell(fx, &rec, "procfs.rt_priority")->u, 50);
	assert_string_equal(cell(fx, &rec, "procfs.policy")->str, "SCHED_FIFO");
	assert_int_equal(cell(fx, &rec, "procfs.state")->c, 'S');
	assert_int_equal(cell(fx, &rec, "procfs.voluntary_csw")->u, 1341);
	assert_int_equal(cell(fx, &rec, "procfs.nonvoluntary_csw")->u, 14);
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->n_words, 1);
	assert_true(cell(fx, &rec, "procfs.cpu_affinity")->words[0] == 3);
	assert_int_equal(cell(fx, &rec, "procfs.nr_threads")->set, 0);

	assert_int_equal(
		run_thread(fx, &rec, 4492, STAT_NICE, 0, STATUS_T59, 0), 0);
	assert_int_equal(cell(fx, &rec, "procfs.priority")->i, 15);
	assert_int_equal(cell(fx, &rec, "procfs.nice")->i, -5);
	assert_string_equal(cell(fx, &rec, "procfs.policy")->str,
			    "SCHED_OTHER");
	assert_int_equal(summary(fx, "stat_parse_errors"), 0);
	assert_int_equal(summary(fx, "status_parse_errors"), 0);
	stop(fx);
}

static void thread_policies(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	static const struct {
		const char *stat;
		const char *name;
	} cases[] = {
		{STAT_SELF, "SCHED_OTHER"},	   {STAT_FIFO, "SCHED_FIFO"},
		{STAT_BATCH, "SCHED_BATCH"},	   {STAT_IDLE, "SCHED_IDLE"},
		{STAT_DEADLINE, "SCHED_DEADLINE"},
	};
	static const struct {
		const char *num;
		const char *name;
	} edited[] = {
		{"2", "SCHED_RR"},
		{"7", "SCHED_EXT"},
		{"4", "unknown(4)"},
		{"8", "unknown(8)"},
		{"18446744073709551615", "unknown(18446744073709551615)"},
	};
	struct fx *fx = *state;
	struct ctp_record rec;
	char line[1024];
	const char *tail;
	size_t i;

	assert_int_equal(start(fx, "/fixture", opts), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(run_thread(fx, &rec, 1, cases[i].stat, 0,
					    STATUS_T59, 0),
				 0);
		assert_string_equal(cell(fx, &rec, "procfs.policy")->str,
				    cases[i].name);
	}
	/* STAT_SELF ends "... 17 0 0 0 0 0 0 9398...": (41) is the third 0
	 * after exit_signal (38) = 17; swap it for other numbers. */
	tail = strstr(STAT_SELF, " 17 0 0 0 ");
	assert_non_null(tail);
	for (i = 0; i < sizeof(edited) / sizeof(edited[0]); i++) {
		snprintf(line, sizeof(line), "%.*s 17 0 0 %s%s",
			 (int)(tail - STAT_SELF), STAT_SELF, edited[i].num,
			 tail + strlen(" 17 0 0 0"));
		assert_int_equal(
			run_thread(fx, &rec, 1, line, 0, STATUS_T59, 0), 0);
		assert_string_equal(cell(fx, &rec, "procfs.policy")->str,
				    edited[i].name);
		assert_int_equal(cell(fx, &rec, "procfs.start_time")->u, 48017);
	}
	assert_int_equal(summary(fx, "stat_parse_errors"), 0);
	stop(fx);
}

static void thread_absent_not_zero(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	static const char status_part[] = "Name:\tx\n"
					  "State:\tD (disk sleep)\n"
					  "Cpus_allowed_list:\t0-1,5\n";
	struct fx *fx = *state;
	struct ctp_record rec;
	const char *cut;
	char line[1024], status[4096];

	assert_int_equal(start(fx, "/fixture", opts), 0);
	/* stat cut inside (18) priority "-51" -> "-5"; status without the
	 * context switch lines. */
	cut = strstr(STAT_FIFO, " -51 ");
	assert_non_null(cut);
	snprintf(line, sizeof(line), "%.*s", (int)(cut - STAT_FIFO) + 3,
		 STAT_FIFO);
	assert_int_equal(run_thread(fx, &rec, 1, line, 0, status_part, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(cell(fx, &rec, "procfs.minflt")->u, 180);
	assert_int_equal(cell(fx, &rec, "procfs.stime")->set, 1);
	assert_int_equal(cell(fx, &rec, "procfs.priority")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.nice")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.start_time")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.processor")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.rt_priority")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.policy")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.state")->c, 'D');
	assert_int_equal(cell(fx, &rec, "procfs.voluntary_csw")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.nonvoluntary_csw")->set, 0);
	assert_true(cell(fx, &rec, "procfs.cpu_affinity")->words[0] == 0x23);
	assert_int_equal(rec.n_sets, 6);
	assert_int_equal(summary(fx, "stat_parse_errors"), 1);
	assert_int_equal(summary(fx, "status_parse_errors"), 1);

	/* Nothing parses: nothing set, still not a plugin error. */
	assert_int_equal(run_thread(fx, &rec, 1, "garbage\n", 0, "junk\n", 0),
			 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "stat_parse_errors"), 2);
	assert_int_equal(summary(fx, "status_parse_errors"), 2);

	/* A bad cpu list is a status parse error; the rest is kept. */
	assert_int_equal(
		run_thread(fx, &rec, 1, STAT_SELF, 0,
			   status_with_cpus(status, sizeof(status), "3-1"), 0),
		0);
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.voluntary_csw")->u, 1341);
	assert_int_equal(summary(fx, "status_parse_errors"), 3);
	assert_int_equal(
		run_thread(fx, &rec, 1, STAT_SELF, 0,
			   status_with_cpus(status, sizeof(status), ""), 0),
		0);
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->set, 0);
	assert_int_equal(summary(fx, "status_parse_errors"), 4);
	assert_int_equal(summary(fx, "stat_parse_errors"), 2);
	stop(fx);
}

static void thread_files_missing(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	struct fx *fx = *state;
	struct ctp_record rec;

	assert_int_equal(start(fx, "/fixture", opts), 0);
	/* One file gone: the other is still recorded; the engine, not the
	 * plugin, decides whether the task vanished. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -ENOENT, STATUS_T59, 0),
			 0);
	assert_int_equal(cell(fx, &rec, "procfs.minflt")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.state")->c, 'S');
	assert_int_equal(run_thread(fx, &rec, 1, STAT_SELF, 0, NULL, -ESRCH),
			 0);
	assert_int_equal(cell(fx, &rec, "procfs.minflt")->u, 116);
	assert_int_equal(cell(fx, &rec, "procfs.state")->set, 0);
	/* Both gone: the vanish error reaches the engine. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -ENOENT, NULL, -ESRCH),
			 -ENOENT);
	assert_int_equal(rec.n_sets, 0);

	/* Another read error on one file: the other is still recorded. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -EACCES, STATUS_T59, 0),
			 0);
	assert_int_equal(cell(fx, &rec, "procfs.minflt")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.state")->c, 'S');
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->set, 1);
	assert_int_equal(run_thread(fx, &rec, 1, STAT_SELF, 0, NULL, -EIO), 0);
	assert_int_equal(cell(fx, &rec, "procfs.minflt")->u, 116);
	assert_int_equal(cell(fx, &rec, "procfs.state")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->set, 0);

	/* Neither readable: the read error. */
	assert_int_equal(run_thread(fx, &rec, 1, NULL, -EACCES, NULL, -EIO),
			 -EACCES);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "stat_parse_errors"), 0);
	assert_int_equal(summary(fx, "status_parse_errors"), 0);
	stop(fx);
}

static void process_nr_threads(void **state)
{
	struct fx *fx = *state;
	struct ctp_record rec;
	char line[1024];
	const char *p;

	assert_int_equal(start(fx, "/fixture", NULL), 0);
	assert_int_equal(run_process(fx, &rec, STAT_PID1, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 1);
	assert_int_equal(cell(fx, &rec, "procfs.nr_threads")->u, 13);

	/* (20) num_threads garbage: absent, counted, not an error. */
	p = strstr(STAT_PID1, " 13 0 12 ");
	assert_non_null(p);
	snprintf(line, sizeof(line), "%.*s 1x%s", (int)(p - STAT_PID1),
		 STAT_PID1, p + 3);
	assert_int_equal(run_process(fx, &rec, line, 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(summary(fx, "stat_parse_errors"), 1);

	assert_int_equal(run_process(fx, &rec, NULL, -ENOENT), -ENOENT);
	assert_int_equal(run_process(fx, &rec, NULL, -ESRCH), -ENOENT);
	assert_int_equal(run_process(fx, &rec, NULL, -EACCES), -EACCES);
	assert_int_equal(rec.n_sets, 0);
	stop(fx);
}

static void disabled_field(void **state)
{
	static const char *const opts[] = {"affinity", "status", NULL};
	struct fx *fx = *state;
	struct ctp_record rec;

	ctx_reset(fx, "/fixture", opts);
	fx->ctx.disabled_field = field_index(fx->p, "procfs.policy");
	assert_int_equal(fx->p->init(&fx->ctx, &api, &fx->state), 0);
	assert_int_equal(run_thread(fx, &rec, 1, STAT_FIFO, 0, STATUS_T59, 0),
			 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 13);
	assert_int_equal(cell(fx, &rec, "procfs.policy")->set, 0);
	assert_int_equal(cell(fx, &rec, "procfs.rt_priority")->u, 50);
	stop(fx);
}

static void expect_words_equal(const struct cell *c, const cpu_set_t *set)
{
	size_t cpu;

	assert_int_equal(c->set, 1);
	for (cpu = 0; cpu < MAX_WORDS * 64; cpu++) {
		int in = cpu / 64 < c->n_words &&
			 (c->words[cpu / 64] >> (cpu % 64) & 1);

		assert_int_equal(in, cpu < CPU_SETSIZE && CPU_ISSET(cpu, set));
	}
}

static int pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void affinity_modes(void **state)
{
	static const char *const syscall_opt[] = {"affinity", "syscall", NULL};
	struct fx *fx = *state;
	struct ctp_record rec;
	cpu_set_t mine;
	char status[4096];
	int gone = pid_max();

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		skip();
	assert_true(gone > 0);
	status_with_cpus(status, sizeof(status), "0,5");

	/* auto on /proc: the syscall, whatever status claims. */
	assert_int_equal(start(fx, "/proc", NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, (int)gettid(), STAT_SELF, 0, status, 0),
		0);
	expect_words_equal(cell(fx, &rec, "procfs.cpu_affinity"), &mine);
	assert_int_equal(summary(fx, "affinity_syscall_fallbacks"), 0);

	/* A tid that cannot exist (>= pid_max): ESRCH, status list. */
	assert_int_equal(run_thread(fx, &rec, gone, STAT_SELF, 0, status, 0),
			 0);
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->n_words, 1);
	assert_true(cell(fx, &rec, "procfs.cpu_affinity")->words[0] == 0x21);
	assert_int_equal(summary(fx, "affinity_syscall_fallbacks"), 1);
	/* ... and no list to fall back on: absent. */
	assert_int_equal(
		run_thread(fx, &rec, gone, STAT_SELF, 0, NULL, -EACCES), 0);
	assert_int_equal(cell(fx, &rec, "procfs.cpu_affinity")->set, 0);
	assert_int_equal(summary(fx, "affinity_syscall_fallbacks"), 2);
	stop(fx);

	/* auto on a fixture root: the status list, even for a real tid. */
	assert_int_equal(start(fx, "/tmp/fixture-proc", NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, (int)gettid(), STAT_SELF, 0, status, 0),
		0);
	assert_true(cell(fx, &rec, "procfs.cpu_affinity")->words[0] == 0x21);
	assert_int_equal(summary(fx, "affinity_syscall_fallbacks"), 0);
	stop(fx);

	/* syscall forced, and a second init on the same thread (its
	 * thread-local buffer belongs to the first, freed instance). */
	assert_int_equal(start(fx, "/tmp/fixture-proc", syscall_opt), 0);
	assert_int_equal(
		run_thread(fx, &rec, (int)gettid(), STAT_SELF, 0, status, 0),
		0);
	expect_words_equal(cell(fx, &rec, "procfs.cpu_affinity"), &mine);
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
	uint64_t first = 0;
	cpu_set_t mine;
	int i;

	if (!rec || sched_getaffinity(0, sizeof(mine), &mine) < 0) {
		free(rec);
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 64; i++)
		if (CPU_ISSET(i, &mine))
			first |= 1ull << i;
	for (i = 0; i < 200; i++) {
		const struct cell *c;

		if (run_thread(w->fx, rec, (int)gettid(), STAT_FIFO, 0,
			       STATUS_T59, 0) != 0 ||
		    rec->bad_sets || rec->n_sets != 14) {
			w->failures++;
			continue;
		}
		c = cell(w->fx, rec, "procfs.cpu_affinity");
		if (c->n_words < 1 || c->words[0] != first)
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks, each worker its own buffers. */
static void concurrent_workers(void **state)
{
	static const char *const syscall_opt[] = {"affinity", "syscall", NULL};
	struct fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, "/proc", syscall_opt), 0);
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
	assert_int_equal(summary(fx, "affinity_syscall_fallbacks"), 0);
	stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(thread_all_fields),
		cmocka_unit_test(thread_policies),
		cmocka_unit_test(thread_absent_not_zero),
		cmocka_unit_test(thread_files_missing),
		cmocka_unit_test(process_nr_threads),
		cmocka_unit_test(disabled_field),
		cmocka_unit_test(affinity_modes),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
