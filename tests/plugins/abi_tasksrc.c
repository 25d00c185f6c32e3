/* SPDX-License-Identifier: MIT */
/*
 * abi-tasksrc: offers the per-task source "task" (include/ctprof/
 * source-task.h) with known values, for tests/test_task_source.c, which
 * checks that procfs-stat, io, schedstat and taskstats take each value
 * from it where it is valid and from their files (or query) where not.
 *
 * Value i of thread tid is ABI_TASKSRC_VALUE(tid, i) (a number no fixture
 * file holds), but the state ('D'), priority (-3), nice (-7), processor (3)
 * and policy (1, SCHED_FIFO), which must fit their fields. What is valid
 * depends on the tid's last digit:
 *   1  every value;
 *   2  every value but those of ABI_TASKSRC_PARTIAL_GAPS (their bits
 *      clear: the consumers read those from their files);
 *   3  the fill fails (-ENODATA), as a provider's does for a thread its
 *      pass did not see;
 *   other  the fill fails too.
 * The thread field abi-tasksrc.offered is how many values the thread's
 * record holds (0 when the fill fails), asked through source_get like any
 * consumer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ctprof/plugin.h>
#include <ctprof/source-task.h>

#include "abi_tasksrc.h"

static const struct ctp_field_desc fields[] = {
	{.name = "abi-tasksrc.offered",
	 .help = "values of the task source this thread's record holds",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX},
};

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h;
};

static const unsigned gaps[] = {ABI_TASKSRC_PARTIAL_GAPS};

static int fill(void *state, const struct ctp_task *task, void *buf, size_t cap,
		size_t *len)
{
	struct ctp_src_task s;
	unsigned kind = (unsigned)task->tid % 10;

	(void)state;
	if ((kind != 1 && kind != 2) || cap < sizeof(s))
		return -ENODATA;
	abi_tasksrc_make(&s, task->tid, gaps,
			 kind == 2 ? sizeof(gaps) / sizeof(gaps[0]) : 0);
	memcpy(buf, &s, sizeof(s));
	*len = sizeof(s);
	return 0;
}

static int tasksrc_thread(void *state, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct state *st = state;
	const void *data;
	size_t len;
	uint64_t n = 0, v;

	if (st->api->source_get(task, CTP_SOURCE_TASK, &data, &len) == 0)
		for (unsigned i = 0; i < CTP_SRC_TASK_N_VALUES; i++)
			n += ctp_src_task_get(data, len, i, &v);
	return st->api->set_u64(rec, st->h, n);
}

static int tasksrc_init(struct ctp_ctx *ctx, const struct ctp_api *api,
			void **out)
{
	static struct state st;
	struct ctp_source_desc d = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(d),
		.name = CTP_SOURCE_TASK,
		.fill = fill,
		/* A value source: the consumers' bound fields are copied by
		 * the core (ctp_api.field_bind). */
		.n_values = CTP_SRC_TASK_N_VALUES,
		.valid_words = 2,
	};
	int r;

	if (api->size < offsetof(struct ctp_api, source_add) +
				sizeof(api->source_add) ||
	    !api->source_add)
		return -ENOTSUP;
	st.ctx = ctx;
	st.api = api;
	st.h = api->field_handle(ctx, 0);
	r = api->source_add(ctx, &d);
	if (r < 0)
		return r;
	*out = &st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-tasksrc",
	.version = "1",
	.description = "offers the task source with known values",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.init = tasksrc_init,
	.thread = tasksrc_thread,
};
