/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cgroups.h"
#include "fakeapi.h"
#include "fakecore.h"
#include "options.h"

/* ---- Log and options ------------------------------------------------------
 */

static void __attribute__((format(printf, 3, 4)))
fake_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > ctx->log_max)
		return;
	pthread_mutex_lock(&ctx->lock);
	va_start(ap, fmt);
	vsnprintf(ctx->last_log, sizeof(ctx->last_log), fmt, ap);
	va_end(ap);
	ctx->n_log++;
	pthread_mutex_unlock(&ctx->lock);
}

static const char *find_opt(struct ctp_ctx *ctx, const char *key)
{
	for (size_t i = 0; ctx->opts && ctx->opts[i]; i += 2)
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

/* The values, parsed by the core's own parsers. */
static int fake_opt_u64(struct ctp_ctx *ctx, const char *key, uint64_t *out)
{
	const char *v = find_opt(ctx, key);
	return v ? ctp_opt_parse_u64(v, out) : -ENOENT;
}

static int fake_opt_i64(struct ctp_ctx *ctx, const char *key, int64_t *out)
{
	const char *v = find_opt(ctx, key);
	return v ? ctp_opt_parse_i64(v, out) : -ENOENT;
}

static int fake_opt_bool(struct ctp_ctx *ctx, const char *key, int *out)
{
	const char *v = find_opt(ctx, key);
	return v ? ctp_opt_parse_bool(v, out) : -ENOENT;
}

static const char *fake_opt_key(struct ctp_ctx *ctx, size_t i)
{
	for (size_t j = 0; ctx->opts && ctx->opts[j]; j += 2)
		if (j / 2 == i)
			return ctx->opts[j];
	return NULL;
}

/* ---- Fields ----------------------------------------------------------------
 */

/* Into the core's registry (its checks, its answer for a name again);
 * the view in ctx->fields follows. ctx->lock held. */
static int add_field(struct ctp_ctx *ctx, const struct ctp_field_desc *d)
{
	const char *why;
	int id;

	if (ctp_field_desc_check(d, &why) < 0)
		return -EINVAL;
	id = ctp_registry_add(&ctx->cap->reg, 0, d);
	if (id < 0)
		return id;
	if (id >= FAKE_MAX_FIELDS)
		fail_msg("raise FAKE_MAX_FIELDS");
	if ((unsigned)id == ctx->n_fields) {
		snprintf(ctx->names[id], sizeof(ctx->names[id]), "%s", d->name);
		ctx->fields[id] = *d;
		ctx->fields[id].name = ctx->names[id];
		ctx->fields[id].help = NULL;
		ctx->n_fields++;
	}
	ctx->registered[id]++;
	return id;
}

static int fake_field_register(struct ctp_ctx *ctx,
			       const struct ctp_field_desc *d)
{
	int r;

	if (ctx->forbid_register)
		fail_msg("%s registers no field at runtime (%s)",
			 ctx->desc->name, d->name);
	pthread_mutex_lock(&ctx->lock);
	ctx->n_register++;
	if (ctx->register_err)
		r = ctx->register_err;
	else if (ctx->refuse_name && strcmp(d->name, ctx->refuse_name) == 0)
		r = -EEXIST;
	else
		r = add_field(ctx, d);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* The static table was registered first, in order (fake_ctx_init). */
static int fake_field_handle(struct ctp_ctx *ctx, size_t i)
{
	if (i >= ctx->desc->n_fields)
		return -EINVAL;
	for (int k = 0; k < FAKE_MAX_DISABLED; k++)
		if ((int)i == ctx->disabled_field[k])
			return -ENOENT;
	return ctx->static_ids[i];
}

/* The core's checks of a formula; the name is kept for the test. */
static int fake_derived_register(struct ctp_ctx *ctx,
				 const struct ctp_derived_desc *d)
{
	const char *why = NULL;
	int term = -1, r;

	pthread_mutex_lock(&ctx->lock);
	r = ctp_registry_add_derived(&ctx->cap->reg, 0, d, &why, &term);
	if (r >= 0 && ctx->n_derived < FAKE_MAX_DERIVED) {
		snprintf(ctx->derived[ctx->n_derived], sizeof(ctx->derived[0]),
			 "%s", d->field.name);
		ctx->derived_desc[ctx->n_derived++] = *d;
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* ---- Setters ---------------------------------------------------------------
 */

/*
 * The core's setter of `type` on the record's row (v, or p and n for
 * strings and cpu sets); the cell the test reads, with the raw value the
 * core stored in *raw, or NULL (counted) when the core refused it or the
 * test made the field fail.
 */
static struct fake_cell *store(struct ctp_record *rec, int h, uint8_t type,
			       uint64_t v, const void *p, size_t n,
			       uint64_t *raw, int *err)
{
	struct ctp_ctx *ctx = rec->ctx;
	struct ctp_table *t;
	uint32_t ident;
	bool got;

	*err = -EINVAL;
	if (h >= 0 && h == ctx->failing_field)
		return NULL;
	rec->n_sets++;
	pthread_mutex_lock(&ctx->lock);
	*err = fakecore_set(ctx->cap, rec->scope, rec->row, h, type, v, p, n);
	t = fakecore_table(ctx->cap, rec->scope, &ident);
	got = *err == 0 && h < FAKE_MAX_FIELDS &&
	      ctp_table_get(
		      t, rec->row,
		      ident + ctp_registry_get(&ctx->cap->reg, (uint32_t)h)
				      ->col,
		      raw);
	pthread_mutex_unlock(&ctx->lock);
	if (!got) {
		rec->bad_sets++;
		return NULL;
	}
	rec->cells[h].set++;
	rec->cells[h].type = type;
	return &rec->cells[h];
}

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	uint64_t raw;
	int err;
	struct fake_cell *c =
		store(rec, h, CTP_TYPE_U64, v, NULL, 0, &raw, &err);

	if (c)
		c->u = raw;
	return err;
}

static int fake_set_i64(struct ctp_record *rec, int h, int64_t v)
{
	uint64_t raw;
	int err;
	struct fake_cell *c =
		store(rec, h, CTP_TYPE_I64, (uint64_t)v, NULL, 0, &raw, &err);

	if (c)
		c->i = (int64_t)raw;
	return err;
}

static int fake_set_bool(struct ctp_record *rec, int h, int v)
{
	uint64_t raw;
	int err;
	struct fake_cell *c =
		store(rec, h, CTP_TYPE_BOOL, (uint64_t)v, NULL, 0, &raw, &err);

	/* The ABI says nonzero is true; a plugin should say 0 or 1. */
	if (c && v != 0 && v != 1)
		rec->bad_sets++;
	if (c)
		c->u = raw;
	return err;
}

static int fake_set_char(struct ctp_record *rec, int h, char v)
{
	uint64_t raw;
	int err;
	struct fake_cell *c = store(rec, h, CTP_TYPE_CHAR, (unsigned char)v,
				    NULL, 0, &raw, &err);

	if (c)
		c->c = (char)raw;
	return err;
}

/* The bytes of blob `id` of the capture. */
static const char *blob(struct ctp_ctx *ctx, uint64_t id, size_t *len)
{
	const char *b;

	pthread_mutex_lock(&ctx->lock);
	b = ctp_blobpool_get(ctx->cap->blobs, id, len);
	pthread_mutex_unlock(&ctx->lock);
	return b;
}

/* A string the core refuses (a NUL inside) is a bad set. */
static int fake_set_str(struct ctp_record *rec, int h, const char *s,
			size_t len)
{
	uint64_t raw;
	size_t n = 0;
	int err;
	struct fake_cell *c =
		store(rec, h, CTP_TYPE_STRING, 0, s, len, &raw, &err);
	const char *b = c ? blob(rec->ctx, raw, &n) : NULL;

	if (!c)
		return err;
	if (!b || n >= sizeof(c->str))
		fail_msg("string of %zu bytes: raise FAKE_STR_MAX", n);
	memcpy(c->str, b, n);
	c->str[n] = '\0';
	c->len = n;
	return err;
}

static int fake_set_cpuset(struct ctp_record *rec, int h, const uint64_t *w,
			   size_t n)
{
	uint64_t raw;
	size_t len = 0;
	int err;
	struct fake_cell *c =
		store(rec, h, CTP_TYPE_CPUSET, 0, w, n, &raw, &err);
	const char *b = c ? blob(rec->ctx, raw, &len) : NULL;

	if (!c)
		return err;
	if (!b || len > sizeof(c->words))
		fail_msg("cpu set of %zu bytes: raise FAKE_MAX_WORDS", len);
	/* The core keeps little-endian words, trailing zero words trimmed. */
	c->n_words = len / sizeof(uint64_t);
	for (size_t i = 0; i < c->n_words; i++) {
		uint64_t x = 0;
		for (size_t k = 0; k < 8; k++)
			x |= (uint64_t)(unsigned char)b[8 * i + k] << (8 * k);
		c->words[i] = x;
	}
	return err;
}

/* ---- Summary, roots, files, hints, gates, cgroup rows ---------------------
 */

/* The core's summary counters; ctx->summary_name and summary follow. */
static int fake_summary_register(struct ctp_ctx *ctx, const char *name)
{
	int r;

	pthread_mutex_lock(&ctx->lock);
	r = ctp_summary_register(&ctx->cap->plugins[0], name);
	if (r >= 0 && (unsigned)r == ctx->n_summary && r < FAKE_MAX_SUMMARY) {
		snprintf(ctx->summary_name[r], sizeof(ctx->summary_name[0]),
			 "%s", name);
		ctx->n_summary++;
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static void fake_summary_add(struct ctp_ctx *ctx, int counter, uint64_t d)
{
	pthread_mutex_lock(&ctx->lock);
	if (counter >= 0 &&
	    (uint32_t)counter < ctx->cap->plugins[0].n_summary) {
		atomic_fetch_add(&ctx->cap->plugins[0].summary[counter], d);
		if ((unsigned)counter < ctx->n_summary)
			ctx->summary[counter] = atomic_load(
				&ctx->cap->plugins[0].summary[counter]);
	}
	pthread_mutex_unlock(&ctx->lock);
}

static const struct ctp_roots *fake_roots(struct ctp_ctx *ctx)
{
	return &ctx->roots;
}

/* Eager files are served as read; a lazy one is read on its first fetch. */
static int fake_file_get(const struct ctp_task *task, uint32_t i,
			 const struct ctp_file **out)
{
	struct fake_task *ft = task->core;

	if (!ft)
		return -EINVAL;
	ft->gets++;
	if (i >= task->n_files || i >= FAKE_MAX_FILES) {
		ft->bad_gets++;
		return -EINVAL;
	}
	if (!(ft->lazy & 1u << i)) {
		ft->bad_gets++;
	} else if (ft->files[i].err == -ENODATA && !ft->files[i].data) {
		if (ft->sleep_ms) {
			struct timespec ts = {
				.tv_sec = ft->sleep_ms / 1000,
				.tv_nsec =
					(long)(ft->sleep_ms % 1000) * 1000000};

			while (nanosleep(&ts, &ts) < 0)
				;
		}
		ft->files[i] = ft->bytes[i];
	}
	*out = &ft->files[i];
	return ft->files[i].err;
}

static void fake_set_hint(struct ctp_ctx *ctx, const char *text)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->n_hint++;
	ctx->hint_set = text != NULL;
	snprintf(ctx->hint, sizeof(ctx->hint), "%s", text ? text : "");
	pthread_mutex_unlock(&ctx->lock);
}

static int fake_file_gate(struct ctp_ctx *ctx, const char *file,
			  const char *kconfig)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->n_gates++;
	snprintf(ctx->gate_file, sizeof(ctx->gate_file), "%s", file);
	snprintf(ctx->gate_kconfig, sizeof(ctx->gate_kconfig), "%s", kconfig);
	pthread_mutex_unlock(&ctx->lock);
	return ctx->gate_ret;
}

static int fake_cgroup_ref(struct ctp_ctx *ctx, const char *key, size_t len)
{
	unsigned i;
	int r;

	pthread_mutex_lock(&ctx->lock);
	ctx->n_ref_calls++;
	if (ctx->ref_err) {
		r = ctx->ref_err;
		goto out;
	}
	/* The core's syntax of a key. */
	if (!ctp_cgroup_key_ok(key, len)) {
		r = -EINVAL;
		goto out;
	}
	for (i = 0; i < ctx->n_keys; i++)
		if (strlen(ctx->keys[i]) == len &&
		    !memcmp(ctx->keys[i], key, len))
			break;
	if (i == ctx->n_keys) {
		if (i == FAKE_MAX_REFS || len >= sizeof(ctx->keys[0])) {
			r = -ENOSPC;
			goto out;
		}
		memcpy(ctx->keys[i], key, len);
		ctx->keys[i][len] = '\0';
		ctx->n_keys++;
	}
	r = (int)i;
out:
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

const struct ctp_api fake_api = {
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
	.derived_register = fake_derived_register,
	.cgroup_ref = fake_cgroup_ref,
};

/* ---- Fixture ---------------------------------------------------------------
 */

const struct ctp_plugin *fake_dlopen(const char *path, void **dl)
{
	const struct ctp_plugin *p;

	*dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*dl) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return NULL;
	}
	p = dlsym(*dl, CTP_PLUGIN_SYMBOL);
	if (!p) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		dlclose(*dl);
		*dl = NULL;
	}
	return p;
}

int fake_fx_setup(void **state, const char *path)
{
	struct fake_fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->p = fake_dlopen(path, &fx->dl);
	if (!fx->p) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

int fake_fx_teardown(void **state)
{
	struct fake_fx *fx = *state;

	dlclose(fx->dl);
	free(fx);
	return 0;
}

int fake_fx_start(struct fake_fx *fx, const struct ctp_api *api,
		  const char *const *opts)
{
	const struct ctp_kv *bad;
	char why[512];

	fake_ctx_init(&fx->ctx, fx->p, opts);
	fx->state = NULL;
	/* As the loader: declared options are checked before init. */
	if (ctp_options_check(fx->p, &fx->ctx.pcfg, &bad, why, sizeof(why)) <
	    0) {
		snprintf(fx->ctx.last_log, sizeof(fx->ctx.last_log), "%s", why);
		return -EINVAL;
	}
	return fx->p->init(&fx->ctx, api, &fx->state);
}

void fake_fx_stop(struct fake_fx *fx)
{
	if (fx->state)
		fx->p->fini(fx->state);
	fx->state = NULL;
	fake_ctx_done(&fx->ctx);
}

int fake_fx_run(struct fake_fx *fx, struct ctp_record *rec,
		struct fake_task *ft, uint8_t scope)
{
	fake_rec_init(rec, &fx->ctx, scope);
	if (scope == CTP_SCOPE_PROCESS)
		return fx->p->process(fx->state, &ft->task, rec);
	return fx->p->thread(fx->state, &ft->task, rec);
}

void fake_ctx_init(struct ctp_ctx *ctx, const struct ctp_plugin *desc,
		   const char *const *opts)
{
	memset(ctx, 0, sizeof(*ctx));
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->desc = desc;
	ctx->opts = opts;
	ctx->log_max = CTP_LOG_DEBUG;
	for (int k = 0; k < FAKE_MAX_DISABLED; k++)
		ctx->disabled_field[k] = -1;
	ctx->failing_field = -1;
	ctx->roots = (struct ctp_roots){
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_roots),
		.proc = "/proc",
		.sys = "/sys",
		.proc_fd = -1,
		.sys_fd = -1,
		.cgroup_fd = -1,
	};
	if (ctp_capture_new(1, &ctx->cap) < 0)
		fail_msg("capture: out of memory");
	ctx->cap->plugins = calloc(1, sizeof(*ctx->cap->plugins));
	if (!ctx->cap->plugins)
		fail_msg("capture: out of memory");
	ctx->cap->n_plugins = 1;
	/* The options as the config would hand them over. */
	for (size_t i = 0; opts && opts[2 * i]; i++) {
		if (i == sizeof(ctx->kv) / sizeof(ctx->kv[0]))
			fail_msg("too many options");
		ctx->kv[i] = (struct ctp_kv){.key = (char *)opts[2 * i],
					     .value = (char *)opts[2 * i + 1],
					     .line = 1,
					     .col = 1};
		ctx->pcfg.n_opts = i + 1;
	}
	ctx->pcfg.name = (char *)desc->name;
	ctx->pcfg.enabled = 1;
	ctx->pcfg.opts = ctx->kv;
	/* As the loader: the static table, then the declared counters. */
	for (uint32_t i = 0; i < desc->n_fields; i++) {
		ctx->static_ids[i] = add_field(ctx, &desc->fields[i]);
		if (ctx->static_ids[i] < 0)
			fail_msg("static field %s not registered: %d",
				 desc->fields[i].name, ctx->static_ids[i]);
	}
	for (uint32_t i = 0; desc->counters && i < desc->n_counters; i++)
		if (fake_summary_register(ctx, desc->counters[i]) != (int)i)
			fail_msg("declared counter %s", desc->counters[i]);
}

void fake_ctx_done(struct ctp_ctx *ctx)
{
	ctp_capture_free(ctx->cap);
	ctx->cap = NULL;
	pthread_mutex_destroy(&ctx->lock);
}

void fake_rec_init(struct ctp_record *rec, struct ctp_ctx *ctx, uint8_t scope)
{
	uint32_t ident;
	int64_t row;

	memset(rec, 0, sizeof(*rec));
	rec->ctx = ctx;
	rec->scope = scope;
	/* A fresh row of the capture's table of that scope. */
	pthread_mutex_lock(&ctx->lock);
	row = ctp_table_add_row(fakecore_table(ctx->cap, scope, &ident));
	pthread_mutex_unlock(&ctx->lock);
	if (row < 0)
		fail_msg("table row: out of memory");
	rec->row = (uint32_t)row;
}

void fake_task_init(struct fake_task *ft, int32_t tgid, int32_t tid)
{
	memset(ft, 0, sizeof(*ft));
	ft->task = (struct ctp_task){
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_task),
		.tgid = tgid,
		.tid = tid,
		.dirfd = -1,
		.proc_fd = -1,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
		.files = ft->files,
		.n_files = 0,
		.core = ft,
	};
}

void fake_task_file(struct fake_task *ft, uint32_t i, const char *text, int err)
{
	if (i >= FAKE_MAX_FILES)
		fail_msg("file %u: raise FAKE_MAX_FILES", i);
	ft->files[i] = (struct ctp_file){
		.data = text, .len = text ? strlen(text) : 0, .err = err};
	ft->lazy &= ~(1u << i);
	if (ft->task.n_files <= i)
		ft->task.n_files = i + 1;
}

void fake_task_lazy(struct fake_task *ft, uint32_t i, const char *text, int err)
{
	fake_task_file(ft, i, NULL, -ENODATA);
	ft->bytes[i] = (struct ctp_file){
		.data = text, .len = text ? strlen(text) : 0, .err = err};
	ft->lazy |= 1u << i;
}

void fake_task_prefetch(struct fake_task *ft, uint32_t i)
{
	ft->files[i] = ft->bytes[i];
}

/* ---- Lookups ---------------------------------------------------------------
 */

int fake_field_index(const struct ctp_plugin *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_fields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

int fake_table_index(const struct ctp_plugin *p, const char *name)
{
	int i = fake_field_index(p, name);

	if (i < 0)
		fail_msg("no field %s", name);
	return i;
}

int fake_field(struct ctp_ctx *ctx, const char *name)
{
	int i;

	pthread_mutex_lock(&ctx->lock);
	i = ctp_registry_find(&ctx->cap->reg, name);
	pthread_mutex_unlock(&ctx->lock);
	return i < 0 ? -1 : i;
}

const struct fake_cell *fake_cell_or_null(const struct ctp_record *rec,
					  const char *name)
{
	int i = fake_field(rec->ctx, name);

	return i < 0 ? NULL : &rec->cells[i];
}

const struct fake_cell *fake_cell(const struct ctp_record *rec,
				  const char *name)
{
	const struct fake_cell *c = fake_cell_or_null(rec, name);

	if (!c)
		fail_msg("no field %s", name);
	return c;
}

bool fake_is_set(const struct ctp_record *rec, const char *name)
{
	const struct fake_cell *c = fake_cell_or_null(rec, name);

	return c && c->set;
}

uint64_t fake_u64(const struct ctp_record *rec, const char *name)
{
	const struct fake_cell *c = fake_cell_or_null(rec, name);

	if (!c)
		fail_msg("field %s not registered", name);
	if (c->set != 1)
		fail_msg("field %s set %d times", name, c->set);
	return c->u;
}

/* The set cell of a field of `type`; fails the test otherwise. */
static const struct fake_cell *expect_cell(const struct ctp_record *rec,
					   const char *name, uint8_t type)
{
	int i = fake_field(rec->ctx, name);

	if (i < 0 || !rec->cells[i].set)
		fail_msg("%s: absent", name);
	if (rec->ctx->fields[i].type != type)
		fail_msg("%s: not a field of type %u", name, type);
	return &rec->cells[i];
}

void fake_expect_u64(const struct ctp_record *rec, const char *name,
		     uint64_t want)
{
	const struct fake_cell *c = expect_cell(rec, name, CTP_TYPE_U64);

	if (c->u != want)
		fail_msg("%s: %llu, want %llu", name, (unsigned long long)c->u,
			 (unsigned long long)want);
}

void fake_expect_i64(const struct ctp_record *rec, const char *name,
		     int64_t want)
{
	const struct fake_cell *c = expect_cell(rec, name, CTP_TYPE_I64);

	if (c->i != want)
		fail_msg("%s: %lld, want %lld", name, (long long)c->i,
			 (long long)want);
}

void fake_expect_str(const struct ctp_record *rec, const char *name,
		     const char *want)
{
	const struct fake_cell *c = expect_cell(rec, name, CTP_TYPE_STRING);

	if (c->set != 1)
		fail_msg("%s: set %d times", name, c->set);
	if (strcmp(c->str, want) != 0)
		fail_msg("%s: \"%s\", want \"%s\"", name, c->str, want);
}

uint64_t fake_summary(const struct ctp_ctx *ctx, const char *name)
{
	for (unsigned i = 0; i < ctx->n_summary; i++)
		if (strcmp(ctx->summary_name[i], name) == 0)
			return ctx->summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

void fake_expect_descriptor(const struct ctp_plugin *p, const char *name,
			    uint32_t flags, uint32_t n_fields)
{
	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_int_equal(p->size, sizeof(struct ctp_plugin));
	assert_string_equal(p->name, name);
	assert_non_null(p->version);
	assert_non_null(p->description);
	assert_int_equal(p->flags, flags);
	assert_int_equal(p->field_desc_size, sizeof(struct ctp_field_desc));
	assert_int_equal(p->n_fields, n_fields);
}

void fake_expect_field(const struct ctp_field_desc *f, uint8_t scope,
		       uint8_t type, uint8_t unit, uint8_t kind, uint8_t rule)
{
	assert_int_equal(f->scope, scope);
	assert_int_equal(f->type, type);
	assert_int_equal(f->unit, unit);
	assert_int_equal(f->kind, kind);
	assert_int_equal(f->rule, rule);
	/* Only CTP_FIELD_META, and then a section or dimensions the core's
	 * own check accepts. */
	assert_int_equal(f->flags & ~CTP_FIELD_META, 0);
	if (f->flags & CTP_FIELD_META)
		assert_true(f->section || f->dims);
	assert_non_null(f->help);
	assert_true(strlen(f->help) > 0);
	assert_null(strchr(f->help, '\n'));
}
