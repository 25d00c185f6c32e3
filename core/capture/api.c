/* SPDX-License-Identifier: MIT */
/* The services the core offers plugins through struct ctp_api. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "engine.h"
#include "loader.h"
#include "log.h"
#include "options.h"

/* Rate limit: at most LOG_BURST lines per plugin per LOG_WINDOW. */
#define LOG_BURST     10
#define LOG_WINDOW_NS 5000000000ull

static void __attribute__((format(printf, 3, 4)))
api_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	if (!ctp_log_shown(level))
		return;
	struct ctp_capture *cap = ctx->eng->cap;
	struct ctp_plugin_info *info = &cap->plugins[ctx->plugin];
	struct ctp_plugin_rt *rt = info->rt;
	uint64_t now, suppressed = 0;
	bool print;

	/* The clock read under the lock: a reading taken before it could be
	 * older than the window another thread just started, and the
	 * difference would wrap (the reaper's bug in serve, 66d795e). */
	pthread_mutex_lock(&rt->log_lock);
	now = ctp_now_ns();
	if (now - rt->log_window_start_ns >= LOG_WINDOW_NS) {
		suppressed = rt->log_suppressed;
		rt->log_suppressed = 0;
		rt->log_window_start_ns = now;
		rt->log_in_window = 0;
	}
	print = rt->log_in_window < LOG_BURST;
	if (print)
		rt->log_in_window++;
	else
		rt->log_suppressed++;
	pthread_mutex_unlock(&rt->log_lock);

	if (suppressed)
		ctp_log(CTP_LOG_NOTICE, "%s: %" PRIu64 " messages suppressed",
			info->name, suppressed);
	if (!print)
		return;
	va_list ap;
	va_start(ap, fmt);
	ctp_vlog(info->name, level, fmt, ap);
	va_end(ap);
}

/* ---- Options ----------------------------------------------------------------
 */

static const struct ctp_kv *find_opt(struct ctp_ctx *ctx, const char *key)
{
	const struct ctp_plugin_cfg *pc =
		ctx->eng->cap->plugins[ctx->plugin].rt->cfg;
	if (!pc)
		return NULL;
	for (size_t i = 0; i < pc->n_opts; i++)
		if (strcmp(pc->opts[i].key, key) == 0)
			return &pc->opts[i];
	return NULL;
}

static int api_opt_str(struct ctp_ctx *ctx, const char *key, const char **out)
{
	const struct ctp_kv *kv = find_opt(ctx, key);
	if (!kv)
		return -ENOENT;
	*out = kv->value;
	return 0;
}

static int api_opt_u64(struct ctp_ctx *ctx, const char *key, uint64_t *out)
{
	const struct ctp_kv *kv = find_opt(ctx, key);
	return kv ? ctp_opt_parse_u64(kv->value, out) : -ENOENT;
}

static int api_opt_i64(struct ctp_ctx *ctx, const char *key, int64_t *out)
{
	const struct ctp_kv *kv = find_opt(ctx, key);
	return kv ? ctp_opt_parse_i64(kv->value, out) : -ENOENT;
}

static int api_opt_bool(struct ctp_ctx *ctx, const char *key, int *out)
{
	const struct ctp_kv *kv = find_opt(ctx, key);
	return kv ? ctp_opt_parse_bool(kv->value, out) : -ENOENT;
}

static const char *api_opt_key(struct ctp_ctx *ctx, size_t i)
{
	const struct ctp_plugin_cfg *pc =
		ctx->eng->cap->plugins[ctx->plugin].rt->cfg;
	if (!pc || i >= pc->n_opts)
		return NULL;
	return pc->opts[i].key;
}

/* ---- Fields
 * -------------------------------------------------------------------- */

static int api_field_register(struct ctp_ctx *ctx,
			      const struct ctp_field_desc *desc)
{
	const char *why;
	struct ctp_capture *cap = ctx->eng->cap;
	if (!desc || ctp_field_desc_check(desc, &why) < 0) {
		api_log(ctx, CTP_LOG_ERR, "field '%s' rejected: %s",
			desc && desc->name ? desc->name : "(null)",
			desc ? why : "no description");
		return -EINVAL;
	}
	int id = ctp_registry_add(&cap->reg, ctx->plugin, desc);
	if (id == -EEXIST) {
		int other = ctp_registry_find(&cap->reg, desc->name);
		uint32_t owner =
			ctp_registry_get(&cap->reg, (uint32_t)other)->plugin;
		if (owner == ctx->plugin)
			api_log(ctx, CTP_LOG_ERR,
				"field '%s' registered again with a different "
				"description",
				desc->name);
		else
			api_log(ctx, CTP_LOG_ERR,
				"field '%s' already registered by plugin '%s'",
				desc->name, cap->plugins[owner].name);
	}
	return id;
}

static int api_derived_register(struct ctp_ctx *ctx,
				const struct ctp_derived_desc *desc)
{
	struct ctp_capture *cap = ctx->eng->cap;
	const char *why = "no description";
	int term = -1, id = -EINVAL;

	if (desc)
		id = ctp_registry_add_derived(&cap->reg, ctx->plugin, desc,
					      &why, &term);
	if (id >= 0)
		return id;
	bool named = desc &&
		     desc->size >= offsetof(struct ctp_derived_desc, n_terms) &&
		     desc->field.name;
	const char *name = named ? desc->field.name : "(null)";
	if (term >= 0)
		api_log(ctx, CTP_LOG_ERR,
			"derived field '%s' rejected: term %d (%s): %s", name,
			term,
			desc->terms[term].field ? desc->terms[term].field
						: "(null)",
			why);
	else
		api_log(ctx, CTP_LOG_ERR, "derived field '%s' rejected: %s",
			name, why);
	return id;
}

static int api_field_handle(struct ctp_ctx *ctx, size_t table_index)
{
	struct ctp_plugin_rt *rt = ctx->eng->cap->plugins[ctx->plugin].rt;
	if (table_index >= rt->n_static)
		return -EINVAL;
	return rt->static_ids[table_index];
}

/* ---- Values
 * ---------------------------------------------------------------------- */

static int set_cell(struct ctp_record *rec, int field, uint8_t type, uint64_t v)
{
	const struct ctp_field *f =
		rec ? ctp_field_for_set(&rec->cap->reg, field, rec->scope, type,
					rec->plugin)
		    : NULL;
	if (!f)
		return -EINVAL;
	return ctp_table_set(rec->table, rec->row, rec->ident + f->col, v);
}

static int api_set_u64(struct ctp_record *rec, int field, uint64_t v)
{
	return set_cell(rec, field, CTP_TYPE_U64, v);
}

static int api_set_i64(struct ctp_record *rec, int field, int64_t v)
{
	return set_cell(rec, field, CTP_TYPE_I64, (uint64_t)v);
}

static int api_set_bool(struct ctp_record *rec, int field, int v)
{
	return set_cell(rec, field, CTP_TYPE_BOOL, v ? 1 : 0);
}

static int api_set_char(struct ctp_record *rec, int field, char v)
{
	return set_cell(rec, field, CTP_TYPE_CHAR, (unsigned char)v);
}

static int api_set_str(struct ctp_record *rec, int field, const char *s,
		       size_t len)
{
	if (!rec || (!s && len))
		return -EINVAL;
	/* -EINVAL for a NUL in the bytes. */
	int64_t id = ctp_blobpool_intern_text(rec->cap->blobs, s ? s : "", len);
	if (id < 0)
		return (int)id;
	return set_cell(rec, field, CTP_TYPE_STRING, (uint64_t)id);
}

static int64_t api_str_intern(struct ctp_ctx *ctx, const char *s, size_t len)
{
	if (!ctx || (!s && len))
		return -EINVAL;
	struct ctp_blobpool *pool = ctx->eng->cap->blobs;
	/* -EINVAL for a NUL in the bytes. */
	int64_t id = ctp_blobpool_intern_text(pool, s ? s : "", len);
	return id < 0 ? id : ctp_blobpool_handle(pool, id);
}

static int api_set_str_handle(struct ctp_record *rec, int field, int64_t handle)
{
	if (!rec)
		return -EINVAL;
	int64_t id = ctp_blobpool_handle_id(rec->cap->blobs, handle);
	if (id < 0)
		return (int)id;
	return set_cell(rec, field, CTP_TYPE_STRING, (uint64_t)id);
}

static int api_set_str_handles(struct ctp_record *rec, const int *fields,
			       const int64_t *handles, uint32_t n)
{
	if (!rec || (n && (!fields || !handles)))
		return -EINVAL;
	if (!n)
		return 0;
	if (rec->row >= rec->table->nrows)
		return -EINVAL;
	/* set_str_handle's checks, what they compare against loaded once:
	 * the pool's handles, the registry's size, the key of a string
	 * field of this plugin and scope; and the row's block. */
	const struct ctp_registry *reg = &rec->cap->reg;
	uint32_t n_fields = ctp_registry_count(reg), n_blobs;
	uint64_t gen, key = ctp_field_set_key(rec->scope, CTP_TYPE_STRING,
					      rec->plugin);
	struct ctp_row_cur c = ctp_row_cur(rec->table, rec->row);
	int err = 0;
	ctp_blobpool_handle_span(rec->cap->blobs, &gen, &n_blobs);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = (uint64_t)handles[i];
		int field = fields[i], r;
		const struct ctp_field *f =
			field < 0 || (uint32_t)field >= n_fields
				? NULL
				: ctp_registry_get(reg, (uint32_t)field);
		if (h >> 32 != gen || (uint32_t)h >= n_blobs)
			r = -ESTALE;
		else if (!f || f->set_key != key)
			r = -EINVAL;
		else
			r = ctp_row_set(&c, rec->ident + f->col, (uint32_t)h);
		if (r < 0 && !err)
			err = r;
	}
	return err;
}

static int api_set_cpuset(struct ctp_record *rec, int field,
			  const uint64_t *words, size_t n_words)
{
	if (!rec || (!words && n_words))
		return -EINVAL;
	while (n_words && words[n_words - 1] == 0)
		n_words--;
	/* Blobs hold little-endian words (the writer decodes them). */
	uint64_t buf[64];
	const void *data = n_words ? (const void *)words : "";
	if (n_words <= 64 && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
		for (size_t i = 0; i < n_words; i++)
			buf[i] = __builtin_bswap64(words[i]);
		data = buf;
	}
	int64_t id = ctp_blobpool_intern_cached(rec->cap->blobs, data,
						n_words * sizeof(uint64_t));
	if (id < 0)
		return (int)id;
	return set_cell(rec, field, CTP_TYPE_CPUSET, (uint64_t)id);
}

/* ---- Summary counters
 * -------------------------------------------------------------- */

static int api_summary_register(struct ctp_ctx *ctx, const char *name)
{
	return ctp_summary_register(&ctx->eng->cap->plugins[ctx->plugin], name);
}

static void api_set_hint(struct ctp_ctx *ctx, const char *text)
{
	struct ctp_plugin_info *info = &ctx->eng->cap->plugins[ctx->plugin];
	char *dup = NULL;
	if (text && strcspn(text, "\n")) {
		/* One line: cut at the first newline; empty clears. */
		dup = strndup(text, strcspn(text, "\n"));
		if (!dup)
			return;
	}
	pthread_mutex_lock(&info->rt->log_lock);
	free(info->hint);
	info->hint = dup;
	pthread_mutex_unlock(&info->rt->log_lock);
}

/* "CONFIG_" and at least one of [A-Z0-9_], at most 64 bytes in all. */
static bool kconfig_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n <= 7 || n > 64 || strncmp(s, "CONFIG_", 7) != 0)
		return false;
	for (size_t i = 7; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/*
 * Only from init, which runs on the main thread before the walk: the
 * writer reads the gates after it without a lock.
 */
static int api_file_gate(struct ctp_ctx *ctx, const char *file,
			 const char *kconfig)
{
	struct ctp_engine *eng = ctx->eng;
	struct ctp_plugin_rt *rt = eng->cap->plugins[ctx->plugin].rt;
	struct ctp_readfail *rf = &eng->cap->rf;
	uint32_t slot[2], n = 0;

	if (rt->initialized)
		return -EBUSY;
	if (!file)
		return -ENOENT;
	if (!kconfig_name_ok(kconfig))
		return -EINVAL;
	file += file[0] == '?';
	file += file[0] == '+';
	/* The tally slots of this plugin's files of that name: at most one
	 * per scope. */
	for (int scope = 0; scope < 2; scope++) {
		const uint8_t *map =
			scope ? rt->process_files : rt->thread_files;
		uint32_t nmap =
			scope ? rt->n_process_files : rt->n_thread_files;
		const struct ctp_filedef *defs =
			scope ? eng->process_files : eng->thread_files;
		for (uint32_t i = 0; i < nmap; i++) {
			const struct ctp_filedef *d = &defs[map[i]];
			if (strcmp(d->name, file) == 0 &&
			    d->tally < CTP_MAX_FILES) {
				slot[n++] = d->tally;
				break;
			}
		}
	}
	if (!n)
		return -ENOENT;
	/* Check every slot first, so a conflict changes nothing. */
	for (uint32_t i = 0; i < n; i++)
		if (rf->gate[slot[i]] && strcmp(rf->gate[slot[i]], kconfig))
			return -EEXIST;
	for (uint32_t i = 0; i < n; i++) {
		if (rf->gate[slot[i]])
			continue;
		rf->gate[slot[i]] = strdup(kconfig);
		if (!rf->gate[slot[i]])
			return -ENOMEM;
	}
	return 0;
}

static const struct ctp_roots *api_roots(struct ctp_ctx *ctx)
{
	return &ctx->eng->roots;
}

static bool api_recording(struct ctp_ctx *ctx)
{
	return ctx && ctx->eng->recording;
}

/* ---- The exited table ------------------------------------------------------
 */

void ctp_api_exited_close(struct ctp_plugin_rt *rt)
{
	/* Scope 0 is no field's: every setter refuses the record now. */
	rt->exited_rec.scope = 0;
}

/* The identity cells of a new exited row; the row is dropped on failure. */
static int exited_row(struct ctp_capture *cap, uint32_t tid, uint32_t tgid,
		      const char *comm, size_t comm_len, uint64_t exit_ns,
		      uint32_t *ret)
{
	struct ctp_table *t = &cap->exited;
	int64_t blob = -1;

	if (comm_len) {
		blob = ctp_blobpool_intern_cached(cap->blobs, comm, comm_len);
		if (blob < 0)
			return (int)blob;
	}
	int64_t row = ctp_table_add_row(t);
	if (row < 0)
		return (int)row;
	uint32_t r = (uint32_t)row;
	int err = ctp_table_set(t, r, CTP_XCOL_TID, tid);
	if (!err && tgid)
		err = ctp_table_set(t, r, CTP_XCOL_TGID, tgid);
	if (!err && blob >= 0)
		err = ctp_table_set(t, r, CTP_XCOL_COMM, (uint64_t)blob);
	if (!err && exit_ns)
		err = ctp_table_set(t, r, CTP_XCOL_EXIT_NS, exit_ns);
	if (err < 0) {
		ctp_table_truncate(t, r);
		return err;
	}
	*ret = r;
	return 0;
}

static int api_exited_begin(struct ctp_ctx *ctx, uint32_t tid, uint32_t tgid,
			    const char *comm, size_t comm_len,
			    uint64_t exit_boottime_ns, struct ctp_record **rec)
{
	if (!ctx || !rec)
		return -EINVAL;
	struct ctp_capture *cap = ctx->eng->cap;
	struct ctp_plugin_info *info = &cap->plugins[ctx->plugin];
	struct ctp_plugin_rt *rt = info->rt;
	uint32_t row = 0;

	/* Workers never touch the exited table: only the main thread's host
	 * and finish callbacks fill it. */
	if (!rt->in_host_cb)
		return -EBUSY;
	ctp_api_exited_close(rt);
	if ((!comm && comm_len) || comm_len > CTP_EXITED_COMM_MAX ||
	    (comm_len && memchr(comm, '\0', comm_len)))
		return -EINVAL;
	if (cap->exited.nrows >= CTP_EXITED_MAX_ROWS)
		return -ENOSPC;
	int err = exited_row(cap, tid, tgid, comm, comm_len, exit_boottime_ns,
			     &row);
	if (err < 0)
		return err;
	atomic_store(&info->exited, true);
	rt->exited_rec = (struct ctp_record){
		.cap = cap,
		.table = &cap->exited,
		.row = row,
		.scope = CTP_SCOPE_EXITED,
		.ident = CTP_EXITED_IDENT,
		.plugin = ctx->plugin,
	};
	*rec = &rt->exited_rec;
	return 0;
}

static void api_exited_end(struct ctp_record *rec)
{
	/* Only a record exited_begin handed out is closed here. */
	if (rec && rec->cap && rec->table == &rec->cap->exited)
		rec->scope = 0;
}

static void api_exited_lost(struct ctp_ctx *ctx, uint64_t n)
{
	if (!ctx)
		return;
	struct ctp_plugin_info *info = &ctx->eng->cap->plugins[ctx->plugin];
	atomic_fetch_add(&info->exited_lost, n);
	atomic_store(&info->exited, true);
}

/* The walk's services (file_get, source_register, source_get, cgroup_ref)
 * are the engine's: it sets them after this. */
void ctp_api_fill(struct ctp_api *api)
{
	memset(api, 0, sizeof(*api));
	api->abi = CTP_ABI_MAJOR;
	api->size = sizeof(*api);
	api->log = api_log;
	api->opt_str = api_opt_str;
	api->opt_u64 = api_opt_u64;
	api->opt_i64 = api_opt_i64;
	api->opt_bool = api_opt_bool;
	api->opt_key = api_opt_key;
	api->field_register = api_field_register;
	api->field_handle = api_field_handle;
	api->set_u64 = api_set_u64;
	api->set_i64 = api_set_i64;
	api->set_bool = api_set_bool;
	api->set_char = api_set_char;
	api->set_str = api_set_str;
	api->set_cpuset = api_set_cpuset;
	api->summary_register = api_summary_register;
	api->roots = api_roots;
	api->set_hint = api_set_hint;
	api->file_gate = api_file_gate;
	api->derived_register = api_derived_register;
	api->recording = api_recording;
	api->exited_begin = api_exited_begin;
	api->exited_end = api_exited_end;
	api->exited_lost = api_exited_lost;
	api->str_intern = api_str_intern;
	api->set_str_handle = api_set_str_handle;
	api->set_str_handles = api_set_str_handles;
}
