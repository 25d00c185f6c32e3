/* SPDX-License-Identifier: MIT */
/* See harness.h. */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroups.h"
#include "harness.h"

/* The harness context of a plugin's real context (plugin 0 of its own
 * engine), and of a record the harness made. */
static struct hx_ctx *ctx_of(struct ctp_ctx *c)
{
	return (struct hx_ctx *)((char *)c->eng - offsetof(struct hx_ctx, eng));
}

static struct hx_rec *rec_of(struct ctp_record *r)
{
	return (struct hx_rec *)((char *)r - offsetof(struct hx_rec, core));
}

/* ---- Wrappers around the core's members --------------------------------- */

static void __attribute__((format(printf, 3, 4)))
hx_log(struct ctp_ctx *c, int level, const char *fmt, ...)
{
	struct hx_ctx *ctx = ctx_of(c);
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (level <= ctx->log_max) {
		pthread_mutex_lock(&ctx->lock);
		snprintf(ctx->last_log, sizeof(ctx->last_log), "%s", line);
		ctx->n_log++;
		pthread_mutex_unlock(&ctx->lock);
	}
	ctx->core.log(c, level, "%s", line);
}

static int hx_field_register(struct ctp_ctx *c, const struct ctp_field_desc *d)
{
	struct hx_ctx *ctx = ctx_of(c);
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
		r = ctx->core.field_register(c, d);
	if (r >= HX_MAX_FIELDS)
		fail_msg("raise HX_MAX_FIELDS");
	if (r >= 0)
		ctx->registered[r]++;
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static int hx_field_handle(struct ctp_ctx *c, size_t i)
{
	struct hx_ctx *ctx = ctx_of(c);

	for (int k = 0; k < HX_MAX_DISABLED; k++)
		if (ctx->disabled_field[k] >= 0 &&
		    i == (size_t)ctx->disabled_field[k])
			return -ENOENT;
	return ctx->core.field_handle(c, i);
}

/* The core's setter of `type` (v, or p and n for strings and cpu sets). */
/* set_str_handle through set(): a string set by its handle (in v). */
#define HX_STR_HANDLE 0xfe

static int core_set(struct hx_ctx *ctx, struct ctp_record *r, int h,
		    uint8_t type, uint64_t v, const void *p, size_t n)
{
	switch (type) {
	case HX_STR_HANDLE:
		return ctx->core.set_str_handle(r, h, (int64_t)v);
	case CTP_TYPE_U64:
		return ctx->core.set_u64(r, h, v);
	case CTP_TYPE_I64:
		return ctx->core.set_i64(r, h, (int64_t)v);
	case CTP_TYPE_BOOL:
		return ctx->core.set_bool(r, h, (int)v);
	case CTP_TYPE_CHAR:
		return ctx->core.set_char(r, h, (char)v);
	case CTP_TYPE_STRING:
		return ctx->core.set_str(r, h, p, n);
	default:
		return ctx->core.set_cpuset(r, h, p, n);
	}
}

/* A cpu set blob: little-endian words. */
static void read_words(struct hx_cell *c, const char *b, size_t len)
{
	if (len > sizeof(c->words))
		fail_msg("cpu set of %zu bytes: raise HX_MAX_WORDS", len);
	c->n_words = len / sizeof(uint64_t);
	for (size_t i = 0; i < c->n_words; i++) {
		uint64_t x = 0;
		for (size_t k = 0; k < 8; k++)
			x |= (uint64_t)(unsigned char)b[8 * i + k] << (8 * k);
		c->words[i] = x;
	}
}

/* The cell of field h as the core stored it in the record's row. ctx->lock
 * held. */
static bool read_back(struct hx_rec *rec, int h, uint8_t type)
{
	struct ctp_capture *cap = rec->ctx->cap;
	struct hx_cell *c = &rec->cells[h];
	const struct ctp_field *f = ctp_registry_get(&cap->reg, (uint32_t)h);
	const char *b;
	uint64_t raw;
	size_t len = 0;

	if (!ctp_table_get(rec->core.table, rec->core.row,
			   rec->core.ident + f->col, &raw))
		return false;
	c->type = type;
	c->u = raw;
	c->i = (int64_t)raw;
	c->c = (char)raw;
	if (type != CTP_TYPE_STRING && type != CTP_TYPE_CPUSET)
		return true;
	b = ctp_blobpool_get(cap->blobs, raw, &len);
	if (!b)
		return false;
	if (type == CTP_TYPE_CPUSET) {
		read_words(c, b, len);
		return true;
	}
	if (len >= sizeof(c->str))
		fail_msg("string of %zu bytes: raise HX_STR_MAX", len);
	memcpy(c->str, b, len);
	c->str[len] = '\0';
	c->len = len;
	return true;
}

/* The core's setter, counted; then what it stored, read back. */
static int set(struct ctp_record *r, int h, uint8_t type, uint64_t v,
	       const void *p, size_t n)
{
	struct hx_rec *rec;
	struct hx_ctx *ctx;
	bool got;
	int err;

	if (!r)
		fail_msg("a setter called without a record");
	rec = rec_of(r);
	ctx = rec->ctx;
	if (h >= 0 && h == ctx->failing_field)
		return -EINVAL;
	rec->n_sets++;
	pthread_mutex_lock(&ctx->lock);
	err = core_set(ctx, r, h, type, v, p, n);
	got = err == 0 && h >= 0 && h < HX_MAX_FIELDS &&
	      read_back(rec, h, type == HX_STR_HANDLE ? CTP_TYPE_STRING : type);
	pthread_mutex_unlock(&ctx->lock);
	if (!got) {
		rec->bad_sets++;
		return err;
	}
	rec->cells[h].set++;
	return err;
}

static int hx_set_u64(struct ctp_record *r, int h, uint64_t v)
{
	return set(r, h, CTP_TYPE_U64, v, NULL, 0);
}

static int hx_set_i64(struct ctp_record *r, int h, int64_t v)
{
	return set(r, h, CTP_TYPE_I64, (uint64_t)v, NULL, 0);
}

static int hx_set_bool(struct ctp_record *r, int h, int v)
{
	int err = set(r, h, CTP_TYPE_BOOL, (uint64_t)v, NULL, 0);

	/* The ABI says nonzero is true; a plugin should say 0 or 1. */
	if (err == 0 && v != 0 && v != 1)
		rec_of(r)->bad_sets++;
	return err;
}

static int hx_set_char(struct ctp_record *r, int h, char v)
{
	return set(r, h, CTP_TYPE_CHAR, (unsigned char)v, NULL, 0);
}

static int hx_set_str(struct ctp_record *r, int h, const char *s, size_t len)
{
	return set(r, h, CTP_TYPE_STRING, 0, s, len);
}

static int hx_set_cpuset(struct ctp_record *r, int h, const uint64_t *w,
			 size_t n)
{
	return set(r, h, CTP_TYPE_CPUSET, 0, w, n);
}

static int hx_set_str_handle(struct ctp_record *r, int h, int64_t handle)
{
	return set(r, h, HX_STR_HANDLE, (uint64_t)handle, NULL, 0);
}

/* The core's set_str_handles, each field counted as a set and read back
 * (a refused batch counts one bad set). */
static int hx_set_str_handles(struct ctp_record *r, const int *hs,
			      const int64_t *handles, uint32_t n)
{
	struct hx_rec *rec;
	struct hx_ctx *ctx;
	int err;

	if (!r)
		fail_msg("a setter called without a record");
	rec = rec_of(r);
	ctx = rec->ctx;
	rec->n_sets += n;
	pthread_mutex_lock(&ctx->lock);
	err = ctx->core.set_str_handles(r, hs, handles, n);
	for (uint32_t i = 0; hs && i < n; i++)
		if (hs[i] >= 0 && hs[i] < HX_MAX_FIELDS &&
		    read_back(rec, hs[i], CTP_TYPE_STRING))
			rec->cells[hs[i]].set++;
	pthread_mutex_unlock(&ctx->lock);
	if (err < 0)
		rec->bad_sets++;
	return err;
}

/* Burn ms of this thread's CPU time: as long in CPU time however busy the
 * host is (the wall time it takes is not). */
static void spin_cpu(unsigned ms)
{
	struct timespec t0, t;
	uint64_t spent;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		spent = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull +
			(uint64_t)(t.tv_nsec - t0.tv_nsec);
	} while (spent < (uint64_t)ms * 1000000ull);
}

/* Eager files are served as the test made them; a lazy one is "read" on
 * its first fetch. (The engine's own file_get needs its walk.) */
static int hx_file_get(const struct ctp_task *task, uint32_t i,
		       const struct ctp_file **out)
{
	struct hx_task *ft = task ? task->core : NULL;

	if (!ft)
		return -EINVAL;
	ft->gets++;
	if (i >= task->n_files || i >= HX_MAX_FILES) {
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
		if (ft->spin_ms)
			spin_cpu(ft->spin_ms);
		ft->files[i] = ft->bytes[i];
	}
	*out = &ft->files[i];
	return ft->files[i].err;
}

/* The context whose plugin serves source_get (the last one loaded: the
 * api hands source_get no context). */
static struct hx_ctx *src_ctx;

static int hx_source_get(const struct ctp_task *task, const char *name,
			 const void **data, size_t *len)
{
	struct hx_task *ft = task ? task->core : NULL;

	if (!ft || !name || !data || !len)
		return -EINVAL;
	ft->src_gets++;
	if (ft->src_name) {
		if (strcmp(ft->src_name, name) != 0)
			return -ENOENT;
		if (ft->src_err)
			return ft->src_err;
		*data = ft->src_data;
		*len = ft->src_len;
		return 0;
	}
	if (!ft->src_loaded) {
		const struct ctp_engine *eng = src_ctx ? &src_ctx->eng : NULL;
		uint32_t i = 0;

		while (eng && i < eng->n_sources &&
		       strcmp(eng->sources[i].name, name) != 0)
			i++;
		if (!eng || i == eng->n_sources)
			return -ENOENT;
		ft->src_fills++;
		ft->src_ret = eng->sources[i].fill(
			hx_state(src_ctx), task, ft->src_buf,
			sizeof(ft->src_buf), &ft->src_buf_len);
		ft->src_loaded = true;
	}
	if (ft->src_ret < 0)
		return ft->src_ret;
	*data = ft->src_buf;
	*len = ft->src_buf_len;
	return 0;
}

static void hx_set_hint(struct ctp_ctx *c, const char *text)
{
	struct hx_ctx *ctx = ctx_of(c);

	pthread_mutex_lock(&ctx->lock);
	ctx->n_hint++;
	pthread_mutex_unlock(&ctx->lock);
	ctx->core.set_hint(c, text);
}

static int hx_file_gate(struct ctp_ctx *c, const char *file,
			const char *kconfig)
{
	struct hx_ctx *ctx = ctx_of(c);

	ctx->n_gates++;
	if (ctx->gate_ret)
		return ctx->gate_ret;
	return ctx->core.file_gate(c, file, kconfig);
}

static int hx_cgroup_ref(struct ctp_ctx *c, const char *key, size_t len)
{
	struct hx_ctx *ctx = ctx_of(c);
	int r;

	/* Under the harness's lock: records of cgroup scope add rows to the
	 * same table. */
	pthread_mutex_lock(&ctx->lock);
	ctx->n_ref_calls++;
	r = ctx->ref_err ? ctx->ref_err : ctx->core.cgroup_ref(c, key, len);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* The plugin gets a harness record that copies the core's, so the
 * setters' wrappers read back what the core stored in the exited row. */
static int hx_exited_begin(struct ctp_ctx *c, uint32_t tid, uint32_t tgid,
			   const char *comm, size_t comm_len, uint64_t exit_ns,
			   struct ctp_record **out)
{
	struct hx_ctx *ctx = ctx_of(c);
	struct ctp_record *core = NULL;
	int r;

	pthread_mutex_lock(&ctx->lock);
	ctx->n_exited_calls++;
	if (ctx->exited_rec)
		ctx->exited_rec->core.scope = 0;
	r = ctx->core.exited_begin(c, tid, tgid, comm, comm_len, exit_ns,
				   &core);
	if (r == 0 && !ctx->exited_rec) {
		ctx->exited_rec = calloc(1, sizeof(*ctx->exited_rec));
		if (!ctx->exited_rec)
			fail_msg("exited record: out of memory");
	}
	if (r == 0) {
		ctx->exited_core = core;
		ctx->exited_rec->ctx = ctx;
		ctx->exited_rec->core = *core;
		*out = &ctx->exited_rec->core;
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static void hx_exited_end(struct ctp_record *r)
{
	struct hx_ctx *ctx;

	if (!r)
		return;
	ctx = rec_of(r)->ctx;
	if (!ctx || r != &ctx->exited_rec->core)
		fail_msg("exited_end of a record exited_begin did not give");
	ctx->core.exited_end(ctx->exited_core);
	r->scope = ctx->exited_core->scope;
}

/* The engine's api table, the wrapped members replaced. */
static void wrap_api(struct hx_ctx *ctx)
{
	struct ctp_api *a = &ctx->eng.api;

	ctx->core = *a;
	a->log = hx_log;
	a->field_register = hx_field_register;
	a->field_handle = hx_field_handle;
	a->set_u64 = hx_set_u64;
	a->set_i64 = hx_set_i64;
	a->set_bool = hx_set_bool;
	a->set_char = hx_set_char;
	a->set_str = hx_set_str;
	a->set_cpuset = hx_set_cpuset;
	a->set_str_handle = hx_set_str_handle;
	a->set_str_handles = hx_set_str_handles;
	a->file_get = hx_file_get;
	a->source_get = hx_source_get;
	a->set_hint = hx_set_hint;
	a->file_gate = hx_file_gate;
	a->cgroup_ref = hx_cgroup_ref;
	a->exited_begin = hx_exited_begin;
	a->exited_end = hx_exited_end;
}

/* ---- Contexts ------------------------------------------------------------ */

const struct ctp_plugin *hx_dlopen(const char *path, void **dl)
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

/* The directory the plugin was loaded from. */
static void plugin_dir(const struct ctp_plugin *desc, char *out, size_t len)
{
	Dl_info info;
	char path[PATH_MAX];

	if (!dladdr(desc, &info) || !info.dli_fname)
		fail_msg("%s: no file for the descriptor", desc->name);
	snprintf(path, sizeof(path), "%s", info.dli_fname);
	snprintf(out, len, "%s", dirname(path));
}

void hx_ctx_init(struct hx_ctx *ctx, const struct ctp_plugin *desc,
		 const char *const *opts)
{
	memset(ctx, 0, sizeof(*ctx));
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->desc = desc;
	ctx->log_max = CTP_LOG_DEBUG;
	for (int k = 0; k < HX_MAX_DISABLED; k++)
		ctx->disabled_field[k] = -1;
	ctx->failing_field = -1;

	/* A config with the one plugin, found where the test found it. */
	for (size_t i = 0; opts && opts[2 * i]; i++) {
		if (i == HX_MAX_OPTS)
			fail_msg("raise HX_MAX_OPTS");
		ctx->kv[i] = (struct ctp_kv){.key = (char *)opts[2 * i],
					     .value = (char *)opts[2 * i + 1],
					     .line = 1,
					     .col = 1};
		ctx->pcfg.n_opts = i + 1;
	}
	ctx->pcfg.name = (char *)desc->name;
	ctx->pcfg.enabled = 1;
	ctx->pcfg.opts = ctx->kv;
	plugin_dir(desc, ctx->dir, sizeof(ctx->dir));
	ctx->dirs[0] = ctx->dir;
	ctx->cfg.plugin_dirs = ctx->dirs;
	ctx->cfg.n_plugin_dirs = 1;
	ctx->cfg.workers = 1;
	ctx->cfg.plugins = &ctx->pcfg;
	ctx->cfg.n_plugins = 1;
	/* The build tree may be group-writable; the tests do not check it. */
	ctx->cfg.allow_insecure_plugins = 1;

	if (ctp_capture_new(1, &ctx->cap) < 0)
		fail_msg("capture: out of memory");
	if (ctp_engine_init(&ctx->eng, &ctx->cfg, ctx->cap, NULL) < 0)
		fail_msg("engine init failed");
	/* The roots the test gives: none opened by default. */
	if (ctx->eng.roots.proc_fd >= 0)
		close(ctx->eng.roots.proc_fd);
	if (ctx->eng.roots.sys_fd >= 0)
		close(ctx->eng.roots.sys_fd);
	if (ctx->eng.roots.cgroup_fd >= 0)
		close(ctx->eng.roots.cgroup_fd);
	ctx->eng.roots.proc_fd = ctx->eng.roots.sys_fd =
		ctx->eng.roots.cgroup_fd = -1;
	ctx->eng.roots.proc = "/proc";
	ctx->eng.roots.sys = "/sys";
	ctx->eng.roots.cgroup = NULL;
	wrap_api(ctx);
}

static const char init_failed[] = "init failed: ";

static bool init_failed_in(const char *reason)
{
	return reason &&
	       strncmp(reason, init_failed, sizeof(init_failed) - 1) == 0;
}

/* The errno init returned, from the loader's reason "init failed: %s";
 * -EINVAL for a refusal before init (as the loader's own). */
static int init_errno(const char *reason)
{
	const size_t skip = sizeof(init_failed) - 1;

	if (!init_failed_in(reason))
		return -EINVAL;
	for (int e = 1; e < 4096; e++)
		if (strcmp(reason + skip, strerror(e)) == 0)
			return -e;
	fail_msg("no errno for '%s'", reason);
	return -EINVAL;
}

int hx_ctx_load(struct hx_ctx *ctx, size_t api_size)
{
	struct ctp_plugin_info *info;

	if (ctx->loaded)
		fail_msg("hx_ctx_load twice");
	ctx->loaded = true;
	if (api_size)
		ctx->eng.api.size = (uint32_t)api_size;
	if (ctx->source_add)
		ctx->eng.api.source_add = ctx->source_add;
	if (ctp_engine_load(&ctx->eng) < 0)
		fail_msg("loader: out of memory");
	src_ctx = ctx;
	info = hx_info(ctx);
	if (info->status == CTP_PST_LOADED)
		return 0;
	if (!init_failed_in(info->reason))
		snprintf(ctx->last_log, sizeof(ctx->last_log), "%s",
			 info->reason ? info->reason : "");
	return init_errno(info->reason);
}

void hx_ctx_done(struct hx_ctx *ctx)
{
	/* The fds in the roots are the test's. */
	ctx->eng.roots.proc_fd = ctx->eng.roots.sys_fd =
		ctx->eng.roots.cgroup_fd = -1;
	if (src_ctx == ctx)
		src_ctx = NULL;
	ctp_engine_done(&ctx->eng);
	ctp_capture_free(ctx->cap);
	ctx->cap = NULL;
	free(ctx->exited_rec);
	ctx->exited_rec = NULL;
	pthread_mutex_destroy(&ctx->lock);
}

void *hx_state(const struct hx_ctx *ctx)
{
	const struct ctp_plugin_info *info = hx_info(ctx);

	return info && info->rt && info->rt->initialized ? info->rt->state
							 : NULL;
}

int hx_fx_setup(void **state, const char *path)
{
	struct hx_fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->p = hx_dlopen(path, &fx->dl);
	if (!fx->p) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

int hx_fx_teardown(void **state)
{
	struct hx_fx *fx = *state;

	dlclose(fx->dl);
	free(fx);
	return 0;
}

int hx_fx_start(struct hx_fx *fx, size_t api_size, const char *const *opts)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	return hx_fx_load(fx, api_size);
}

int hx_fx_load(struct hx_fx *fx, size_t api_size)
{
	int r = hx_ctx_load(&fx->ctx, api_size);

	fx->state = hx_state(&fx->ctx);
	return r;
}

void hx_fx_stop(struct hx_fx *fx)
{
	hx_ctx_done(&fx->ctx);
	fx->state = NULL;
}

/* The table rows of `scope` live in, and their identity columns. */
static struct ctp_table *table_of(struct ctp_capture *cap, uint8_t scope,
				  uint32_t *ident)
{
	switch (scope) {
	case CTP_SCOPE_HOST:
		*ident = CTP_HOST_IDENT;
		return &cap->host;
	case CTP_SCOPE_CGROUP:
		*ident = CTP_CGROUP_IDENT;
		return &cap->cgroups;
	case CTP_SCOPE_PROCESS:
		*ident = CTP_PROCESS_IDENT;
		return &cap->procs[0];
	case CTP_SCOPE_EXITED:
		*ident = CTP_EXITED_IDENT;
		return &cap->exited;
	default:
		*ident = CTP_THREAD_IDENT;
		return &cap->threads[0];
	}
}

void hx_rec_init(struct hx_rec *rec, struct hx_ctx *ctx, uint8_t scope)
{
	int64_t row;

	memset(rec, 0, sizeof(*rec));
	rec->ctx = ctx;
	rec->core.cap = ctx->cap;
	rec->core.scope = scope;
	rec->core.plugin = 0;
	pthread_mutex_lock(&ctx->lock);
	rec->core.table = table_of(ctx->cap, scope, &rec->core.ident);
	row = ctp_table_add_row(rec->core.table);
	pthread_mutex_unlock(&ctx->lock);
	if (row < 0)
		fail_msg("table row: out of memory");
	rec->core.row = (uint32_t)row;
}

int hx_fx_run(struct hx_fx *fx, struct hx_rec *rec, struct hx_task *ft,
	      uint8_t scope)
{
	hx_rec_init(rec, &fx->ctx, scope);
	if (scope == CTP_SCOPE_PROCESS)
		return fx->p->process(fx->state, &ft->task, &rec->core);
	return fx->p->thread(fx->state, &ft->task, &rec->core);
}

int hx_host_call(struct hx_ctx *ctx, struct hx_rec *rec, bool finish)
{
	struct ctp_plugin_rt *rt = hx_info(ctx)->rt;
	void *state = hx_state(ctx);
	int r;

	/* The gate host_calls (engine.c) opens around the callback. */
	hx_rec_init(rec, ctx, CTP_SCOPE_HOST);
	rt->in_host_cb = true;
	r = finish ? ctx->desc->finish(state, &rec->core)
		   : ctx->desc->host(state, &rec->core);
	rt->in_host_cb = false;
	ctp_api_exited_close(rt);
	if (ctx->exited_rec)
		ctx->exited_rec->core.scope = 0;
	return r;
}

int hx_fx_finish(struct hx_fx *fx, struct hx_rec *rec)
{
	return hx_host_call(&fx->ctx, rec, true);
}

int hx_fx_host(struct hx_fx *fx, struct hx_rec *rec)
{
	return hx_host_call(&fx->ctx, rec, false);
}

void hx_task_init(struct hx_task *ft, int32_t tgid, int32_t tid)
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

void hx_task_file(struct hx_task *ft, uint32_t i, const char *text, int err)
{
	if (i >= HX_MAX_FILES)
		fail_msg("file %u: raise HX_MAX_FILES", i);
	ft->files[i] = (struct ctp_file){
		.data = text, .len = text ? strlen(text) : 0, .err = err};
	ft->lazy &= ~(1u << i);
	if (ft->task.n_files <= i)
		ft->task.n_files = i + 1;
}

void hx_task_lazy(struct hx_task *ft, uint32_t i, const char *text, int err)
{
	hx_task_file(ft, i, NULL, -ENODATA);
	ft->bytes[i] = (struct ctp_file){
		.data = text, .len = text ? strlen(text) : 0, .err = err};
	ft->lazy |= 1u << i;
}

void hx_task_prefetch(struct hx_task *ft, uint32_t i)
{
	ft->files[i] = ft->bytes[i];
}

/* ---- What the core holds --------------------------------------------------
 */

struct ctp_plugin_info *hx_info(const struct hx_ctx *ctx)
{
	if (!ctx->cap || !ctx->cap->n_plugins)
		fail_msg("the plugin is not loaded (hx_ctx_load)");
	return &ctx->cap->plugins[0];
}

uint64_t hx_summary(const struct hx_ctx *ctx, const char *name)
{
	const struct ctp_plugin_info *info = hx_info(ctx);

	for (uint32_t i = 0; i < info->n_summary; i++)
		if (strcmp(info->summary_name[i], name) == 0)
			return atomic_load(&info->summary[i]);
	fail_msg("no summary counter %s", name);
	return 0;
}

const char *hx_hint(const struct hx_ctx *ctx)
{
	const char *h = ctp_plugin_hint(hx_info(ctx));

	return h ? h : "";
}

bool hx_hint_set(const struct hx_ctx *ctx)
{
	return ctp_plugin_hint(hx_info(ctx)) != NULL;
}

const char *hx_gate(const struct hx_ctx *ctx, const char *name)
{
	const struct ctp_readfail *rf = &ctx->cap->rf;

	for (uint32_t i = 0; i < rf->n_files; i++) {
		const char *f = rf->file[i];

		if (strncmp(f, "process/", 8) == 0)
			f += 8;
		if (strcmp(f, name) == 0 && rf->gate[i])
			return rf->gate[i];
	}
	return NULL;
}

unsigned hx_n_fields(const struct hx_ctx *ctx)
{
	return ctp_registry_count(&ctx->cap->reg);
}

const struct ctp_field *hx_field_at(const struct hx_ctx *ctx, unsigned id)
{
	if (id >= hx_n_fields(ctx))
		fail_msg("no field %u", id);
	return ctp_registry_get(&ctx->cap->reg, id);
}

int hx_field(const struct hx_ctx *ctx, const char *name)
{
	int i = ctp_registry_find(&ctx->cap->reg, name);

	return i < 0 ? -1 : i;
}

unsigned hx_n_derived(const struct hx_ctx *ctx)
{
	unsigned n = 0;

	for (unsigned i = 0; i < hx_n_fields(ctx); i++)
		n += hx_field_at(ctx, i)->n_terms > 0;
	return n;
}

const struct ctp_field *hx_derived(const struct hx_ctx *ctx, unsigned k)
{
	for (unsigned i = 0; i < hx_n_fields(ctx); i++) {
		const struct ctp_field *f = hx_field_at(ctx, i);

		if (f->n_terms && k-- == 0)
			return f;
	}
	fail_msg("no derived field %u", k);
	return NULL;
}

/* Row `row` of the cgroup table when plugin 0 referenced it: its key. */
static const char *ref_key(const struct hx_ctx *ctx, uint32_t row)
{
	uint64_t blob;
	size_t len;

	if (!ctp_cgroups_referenced(ctp_engine_cgroups(&ctx->eng), 0, row) ||
	    !ctp_table_get(&ctx->cap->cgroups, row, CTP_CCOL_PATH, &blob))
		return NULL;
	return ctp_blobpool_get(ctx->cap->blobs, blob, &len);
}

unsigned hx_n_keys(const struct hx_ctx *ctx)
{
	unsigned n = 0;

	for (uint32_t r = 0; r < ctx->cap->cgroups.nrows; r++)
		n += ref_key(ctx, r) != NULL;
	return n;
}

const char *hx_key(const struct hx_ctx *ctx, unsigned i)
{
	for (uint32_t r = 0; r < ctx->cap->cgroups.nrows; r++) {
		const char *k = ref_key(ctx, r);

		if (k && i-- == 0)
			return k;
	}
	fail_msg("no key %u", i);
	return NULL;
}

uint32_t hx_exited_rows(const struct hx_ctx *ctx)
{
	return ctx->cap->exited.nrows;
}

int64_t hx_exited_row(const struct hx_ctx *ctx, uint32_t tid)
{
	uint64_t v;

	for (uint32_t r = 0; r < ctx->cap->exited.nrows; r++)
		if (ctp_table_get(&ctx->cap->exited, r, CTP_XCOL_TID, &v) &&
		    v == tid)
			return r;
	return -1;
}

void hx_exited_ident(const struct hx_ctx *ctx, uint32_t row, uint32_t *tid,
		     uint32_t *tgid, const char **comm, uint64_t *exit_ns)
{
	const struct ctp_table *t = &ctx->cap->exited;
	uint64_t v;

	if (row >= t->nrows)
		fail_msg("no exited row %u", row);
	*tid = ctp_table_get(t, row, CTP_XCOL_TID, &v) ? (uint32_t)v : 0;
	*tgid = ctp_table_get(t, row, CTP_XCOL_TGID, &v) ? (uint32_t)v : 0;
	*comm = ctp_table_get(t, row, CTP_XCOL_COMM, &v)
			? ctp_blobpool_get(ctx->cap->blobs, v, NULL)
			: NULL;
	*exit_ns = ctp_table_get(t, row, CTP_XCOL_EXIT_NS, &v) ? v : 0;
}

bool hx_exited_u64(const struct hx_ctx *ctx, uint32_t row, const char *name,
		   uint64_t *v)
{
	int id = hx_field(ctx, name);

	if (id < 0)
		fail_msg("no field %s", name);
	return ctp_table_get(
		&ctx->cap->exited, row,
		CTP_EXITED_IDENT + hx_field_at(ctx, (unsigned)id)->col, v);
}

uint64_t hx_exited_lost(const struct hx_ctx *ctx)
{
	return atomic_load(&hx_info(ctx)->exited_lost);
}

int hx_field_index(const struct ctp_plugin *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_fields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

int hx_table_index(const struct ctp_plugin *p, const char *name)
{
	int i = hx_field_index(p, name);

	if (i < 0)
		fail_msg("no field %s", name);
	return i;
}

const struct hx_cell *hx_cell_or_null(const struct hx_rec *rec,
				      const char *name)
{
	int i = hx_field(rec->ctx, name);

	return i < 0 ? NULL : &rec->cells[i];
}

const struct hx_cell *hx_cell(const struct hx_rec *rec, const char *name)
{
	const struct hx_cell *c = hx_cell_or_null(rec, name);

	if (!c)
		fail_msg("no field %s", name);
	return c;
}

bool hx_is_set(const struct hx_rec *rec, const char *name)
{
	const struct hx_cell *c = hx_cell_or_null(rec, name);

	return c && c->set;
}

uint64_t hx_u64(const struct hx_rec *rec, const char *name)
{
	const struct hx_cell *c = hx_cell_or_null(rec, name);

	if (!c)
		fail_msg("field %s not registered", name);
	if (c->set != 1)
		fail_msg("field %s set %d times", name, c->set);
	return c->u;
}

/* The set cell of a field of `type`; fails the test otherwise. */
static const struct hx_cell *expect_cell(const struct hx_rec *rec,
					 const char *name, uint8_t type)
{
	int i = hx_field(rec->ctx, name);

	if (i < 0 || !rec->cells[i].set)
		fail_msg("%s: absent", name);
	if (hx_field_at(rec->ctx, (unsigned)i)->type != type)
		fail_msg("%s: not a field of type %u", name, type);
	return &rec->cells[i];
}

void hx_expect_u64(const struct hx_rec *rec, const char *name, uint64_t want)
{
	const struct hx_cell *c = expect_cell(rec, name, CTP_TYPE_U64);

	if (c->u != want)
		fail_msg("%s: %llu, want %llu", name, (unsigned long long)c->u,
			 (unsigned long long)want);
}

void hx_expect_i64(const struct hx_rec *rec, const char *name, int64_t want)
{
	const struct hx_cell *c = expect_cell(rec, name, CTP_TYPE_I64);

	if (c->i != want)
		fail_msg("%s: %lld, want %lld", name, (long long)c->i,
			 (long long)want);
}

void hx_expect_str(const struct hx_rec *rec, const char *name, const char *want)
{
	const struct hx_cell *c = expect_cell(rec, name, CTP_TYPE_STRING);

	if (c->set != 1)
		fail_msg("%s: set %d times", name, c->set);
	if (strcmp(c->str, want) != 0)
		fail_msg("%s: \"%s\", want \"%s\"", name, c->str, want);
}

void hx_expect_descriptor(const struct ctp_plugin *p, const char *name,
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
