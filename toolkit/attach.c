/* SPDX-License-Identifier: MIT */
/* Attaching a plugin to the core, and a task's declared files; see
 * <ctprof/plugin-util.h>. */
#include "ctprof/plugin-util.h"
#include "ctprof/source-task.h"

#include <string.h>

/* The log member exists in every ABI 1 core, but a table too short to hold
 * it cannot be trusted with anything. */
static bool can_log(const struct ctp_api *api)
{
	return CTP_API_HAS(api, log);
}

static int check_core(struct ctp_ctx *ctx, const struct ctp_api *api,
		      size_t need)
{
	if (!api || api->abi != CTP_ABI_MAJOR)
		return -ENOTSUP;
	if (api->size < need) {
		if (can_log(api))
			api->log(ctx, CTP_LOG_ERR,
				 "this core's API ends at byte %u, the plugin "
				 "needs %zu: update ctprof-core",
				 (unsigned)api->size, need);
		return -ENOTSUP;
	}
	return 0;
}

static void fill_fields(struct ctp_ctx *ctx, const struct ctp_api *api,
			const struct ctp_plugin *desc,
			const struct ctp_attach *a)
{
	for (size_t i = 0; i < a->n_fields; i++) {
		int h = api->field_handle(ctx, i);

		a->field_handles[i] = h;
		if (h < 0 && i < desc->n_fields)
			api->log(ctx, CTP_LOG_DEBUG,
				 "field %s has no handle: %s",
				 desc->fields[i].name, strerror(-h));
	}
}

static int fill_counters(struct ctp_ctx *ctx, const struct ctp_api *api,
			 const struct ctp_plugin *desc,
			 const struct ctp_attach *a)
{
	if (a->n_counters && (!CTP_HAS(desc, struct ctp_plugin, counters) ||
			      a->n_counters > desc->n_counters))
		return -EINVAL; /* the plugin's own tables disagree */
	for (size_t i = 0; i < a->n_counters; i++) {
		int h = api->summary_register(ctx, desc->counters[i]);

		if (h < 0) {
			api->log(ctx, CTP_LOG_ERR,
				 "cannot register summary counter %s: %s",
				 desc->counters[i], strerror(-h));
			return h;
		}
		a->counter_handles[i] = h;
	}
	return 0;
}

/* The sources of the static table fit its descriptions (a bug of the
 * plugin's own tables when not, said once with the field's name). */
static int check_sources(struct ctp_ctx *ctx, const struct ctp_api *api,
			 const struct ctp_plugin *desc,
			 const struct ctp_attach *a)
{
	const char *why;
	size_t bad;
	int r;

	if (!a->field_src)
		return 0;
	r = ctp_fields_check(desc->fields, a->field_src, desc->n_fields, &bad,
			     &why);
	if (r < 0 && can_log(api))
		api->log(ctx, CTP_LOG_ERR, "field %s: its source has %s",
			 desc->fields[bad].name, why);
	return r;
}

int ctp_attach(struct ctp_ctx *ctx, const struct ctp_api *api,
	       const struct ctp_plugin *desc, const struct ctp_attach *a)
{
	/* Everything used below is in the first ABI 1 core. */
	size_t need = a->api_need;
	int r;

	if (need < CTP_API_THROUGH(summary_add))
		need = CTP_API_THROUGH(summary_add);
	r = check_core(ctx, api, need);
	if (r < 0)
		return r;
	if ((a->n_fields && !a->field_handles) ||
	    (a->n_counters && !a->counter_handles) ||
	    a->n_fields > desc->n_fields)
		return -EINVAL; /* the plugin's own tables disagree */
	r = check_sources(ctx, api, desc, a);
	if (r < 0)
		return r;
	fill_fields(ctx, api, desc, a);
	return fill_counters(ctx, api, desc, a);
}

int ctp_task_file(const struct ctp_task *task, uint32_t i, const char **data,
		  size_t *len)
{
	const struct ctp_file *f;

	if (!CTP_HAS(task, struct ctp_task, n_files) || i >= task->n_files)
		return -EPROTO;
	f = &task->files[i];
	if (f->err)
		return f->err < 0 ? f->err : -EIO;
	if (!f->data)
		return -ENODATA;
	*data = f->data;
	*len = f->len;
	return 0;
}

int ctp_task_fetch(const struct ctp_api *api, const struct ctp_task *task,
		   uint32_t i, const char **data, size_t *len)
{
	const struct ctp_file *f = NULL;
	int r = ctp_task_file(task, i, data, len);

	if (r != -ENODATA || !CTP_API_HAS(api, file_get))
		return r;
	r = api->file_get(task, i, &f);
	if (r < 0)
		return r;
	if (!f || !f->data)
		return -ENODATA;
	*data = f->data;
	*len = f->len;
	return 0;
}

uint64_t ctp_src_values_take(const struct ctp_api *api,
			     const struct ctp_task *task, const char *source,
			     unsigned valid_words,
			     const struct ctp_src_take *map, size_t n,
			     uint64_t want, void *vals)
{
	const void *data;
	size_t len;
	uint64_t got = 0, v;
	char *out = vals;

	if (!want || !CTP_API_HAS(api, source_get) ||
	    api->source_get(task, source, &data, &len) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(want >> map[i].bit & 1) ||
		    !ctp_src_values_get(data, len, valid_words, map[i].value,
					&v))
			continue;
		if (map[i].type == CTP_TYPE_CHAR)
			out[map[i].off] = (char)v;
		else /* u64, and i64 as its two's complement */
			memcpy(out + map[i].off, &v, sizeof(v));
		got |= 1ull << map[i].bit;
	}
	return got;
}

uint64_t ctp_src_task_take(const struct ctp_api *api,
			   const struct ctp_task *task,
			   const struct ctp_src_take *map, size_t n,
			   uint64_t want, void *vals)
{
	return ctp_src_values_take(api, task, CTP_SOURCE_TASK, 2, map, n, want,
				   vals);
}

int64_t ctp_src_task_bind(const struct ctp_api *api, struct ctp_ctx *ctx,
			  const struct ctp_fields_plan *p,
			  const struct ctp_src_take *map, size_t n)
{
	uint64_t bound = 0;

	if (!CTP_API_HAS(api, field_bind))
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct ctp_fields_step *st = &p->step[i];
		int r;

		for (size_t k = 0; k < n; k++) {
			if (map[k].bit != st->bit || map[k].type != st->type)
				continue;
			r = api->field_bind(ctx, st->fh, CTP_SOURCE_TASK,
					    map[k].value);
			if (r < 0)
				return r;
			bound |= 1ull << st->bit;
			break;
		}
	}
	return (int64_t)bound;
}
