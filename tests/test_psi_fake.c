/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_psi_fake.h"

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

/* As the core: true/yes/on/1, false/no/off/0. */
static int fake_opt_bool(struct ctp_ctx *ctx, const char *key, int *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	const char *v = find_opt(ctx, key);

	if (!v)
		return -ENOENT;
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(v, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *fake_opt_key(struct ctp_ctx *ctx, size_t i)
{
	for (size_t j = 0; ctx->opts && ctx->opts[j]; j += 2)
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
	return FAKE_HANDLE_BASE + (int)i;
}

static struct fake_cell *cell_for(struct ctp_record *rec, int h, uint8_t type)
{
	const struct ctp_field_desc *f;
	int i = h - FAKE_HANDLE_BASE;

	rec->n_sets++;
	if (i < 0 || (uint32_t)i >= rec->desc->n_fields ||
	    i >= FAKE_MAX_FIELDS) {
		rec->bad_sets++;
		return NULL;
	}
	f = &rec->desc->fields[i];
	if (f->type != type || f->scope != rec->scope) {
		rec->bad_sets++;
		return NULL;
	}
	if (i == rec->ctx->failing_field)
		return NULL;
	rec->cells[i].set++;
	rec->cells[i].type = type;
	return &rec->cells[i];
}

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	struct fake_cell *c = cell_for(rec, h, CTP_TYPE_U64);

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
	struct fake_cell *c = cell_for(rec, h, CTP_TYPE_BOOL);

	if (!c)
		return -EINVAL;
	/* The ABI says nonzero is true; a plugin should say 0 or 1. */
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
	struct fake_cell *c;

	if (memchr(s, '\0', len)) {
		rec->bad_sets++;
		return -EINVAL;
	}
	c = cell_for(rec, h, CTP_TYPE_STRING);
	if (!c)
		return -EINVAL;
	c->slen = len;
	snprintf(c->s, sizeof(c->s), "%.*s", (int)len, s);
	return 0;
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
	for (unsigned i = 0; i < ctx->n_summary; i++)
		if (strcmp(ctx->summary_name[i], name) == 0)
			return (int)i;
	if (ctx->n_summary == FAKE_MAX_SUMMARY)
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
	struct fake_task *ft = task->core;

	ft->gets++;
	if (i != 0) {
		ft->bad_gets++;
		return -EINVAL;
	}
	ft->slot = ft->bytes;
	*out = &ft->slot;
	return ft->slot.err;
}

static int fake_file_gate(struct ctp_ctx *ctx, const char *file,
			  const char *kconfig)
{
	(void)ctx, (void)file, (void)kconfig;
	return 0;
}

static void fake_set_hint(struct ctp_ctx *ctx, const char *text)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->n_hint++;
	snprintf(ctx->hint, sizeof(ctx->hint), "%s", text ? text : "");
	pthread_mutex_unlock(&ctx->lock);
}

/* Up to file_gate: what came later (derived fields, cgroup_ref) these
 * plugins do not use, and they must not touch what `size` leaves out. */
const struct ctp_api fake_api = {
	.abi = CTP_ABI_MAJOR,
	.size = offsetof(struct ctp_api, file_gate) +
		sizeof(((struct ctp_api *)0)->file_gate),
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

void fake_ctx_init(struct ctp_ctx *ctx, const struct ctp_plugin *desc,
		   const char *const *opts)
{
	memset(ctx, 0, sizeof(*ctx));
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->desc = desc;
	ctx->opts = opts;
	ctx->disabled_field = ctx->failing_field = -1;
	ctx->roots = (struct ctp_roots){
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(struct ctp_roots),
		.proc = "/proc",
		.sys = "/sys",
		.proc_fd = -1,
		.sys_fd = -1,
		.cgroup_fd = -1,
	};
}

void fake_ctx_done(struct ctp_ctx *ctx)
{
	pthread_mutex_destroy(&ctx->lock);
}

void fake_rec_init(struct ctp_record *rec, struct ctp_ctx *ctx, uint8_t scope)
{
	memset(rec, 0, sizeof(*rec));
	rec->desc = ctx->desc;
	rec->ctx = ctx;
	rec->scope = scope;
}

int fake_field_index(const struct ctp_plugin *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_fields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

const struct fake_cell *fake_cell(const struct ctp_record *rec,
				  const char *name)
{
	int i = fake_field_index(rec->desc, name);

	if (i < 0)
		fail_msg("no field %s", name);
	return &rec->cells[i];
}

uint64_t fake_summary(const struct ctp_ctx *ctx, const char *name)
{
	for (unsigned i = 0; i < ctx->n_summary; i++)
		if (strcmp(ctx->summary_name[i], name) == 0)
			return ctx->summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

void fake_task_init(struct ctp_task *task, struct fake_task *ft,
		    const char *text, int err)
{
	memset(ft, 0, sizeof(*ft));
	ft->slot = (struct ctp_file){.err = -ENODATA};
	ft->bytes = (struct ctp_file){.data = text,
				      .len = text ? strlen(text) : 0,
				      .err = text ? 0 : err};
	*task = (struct ctp_task){
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(*task),
		.tgid = 1,
		.tid = 1,
		.dirfd = -1,
		.proc_fd = -1,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
		.files = &ft->slot,
		.n_files = 1,
		.core = ft,
	};
}
