/* SPDX-License-Identifier: MIT */
/*
 * abi-procsrc: offers the per-process source "process" (include/ctprof/
 * source-process.h) with known values, and a thread source
 * ABI_PROCSRC_THREAD_SOURCE, for tests/test_task_source.c, which checks
 * that procfs-stat and io take each process value from it where it is
 * valid and from <tgid>/stat and <tgid>/io where not, that the core fills
 * it once per process row and shows each callback only the sources of its
 * scope.
 *
 * Value i of process tgid is abi_procsrc_value(tgid, i). What is valid
 * depends on the tgid's last digit:
 *   1  every value;
 *   2  every value but those of ABI_PROCSRC_PARTIAL_GAPS;
 *   other  the fill fails (-ENODATA), as a provider's does for a process
 *      its pass did not see.
 * Fields: abi-procsrc.offered (process), the values the process's record
 * holds (0 when the fill fails); abi-procsrc.thread_source (process), what
 * source_get of the thread source returns to the process callback;
 * abi-procsrc.process_source (thread), what source_get of "process"
 * returns to the thread callback. Summary counter `fills`: fills of
 * "process" run. Its process callback asks for "process" twice, and fails
 * (-EPROTO) when the second answer is not the first's.
 *
 * Built with ABI_PROCSRC_FAIL_INIT (abi-procsrc-fail): init adds both
 * sources, then fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ctprof/plugin.h>
#include <ctprof/source-process.h>

#include "abi_procsrc.h"

#ifdef ABI_PROCSRC_FAIL_INIT
#define NAME "abi-procsrc-fail"
#else
#define NAME "abi-procsrc"
#endif

static const struct ctp_field_desc fields[] = {
	{.name = NAME ".offered",
	 .help = "values of the process source this process's record holds",
	 .scope = CTP_SCOPE_PROCESS,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX},
	{.name = NAME ".thread_source",
	 .help = "source_get of the thread source from the process callback",
	 .scope = CTP_SCOPE_PROCESS,
	 .type = CTP_TYPE_I64,
	 .unit = CTP_UNIT_NONE,
	 .kind = CTP_KIND_ORDINAL,
	 .rule = CTP_RULE_RANGE},
	{.name = NAME ".process_source",
	 .help = "source_get of the process source from the thread callback",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_I64,
	 .unit = CTP_UNIT_NONE,
	 .kind = CTP_KIND_ORDINAL,
	 .rule = CTP_RULE_RANGE},
};

static const char *const counters[] = {"fills"};

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h[3];
	int fills;
};

static struct state st;

static const unsigned gaps[] = {ABI_PROCSRC_PARTIAL_GAPS};

static int fill(void *state, const struct ctp_task *task, void *buf, size_t cap,
		size_t *len)
{
	struct ctp_src_process s;
	unsigned kind = (unsigned)task->tgid % 10;

	(void)state;
	st.api->summary_add(st.ctx, st.fills, 1);
	if ((kind != 1 && kind != 2) || cap < sizeof(s) ||
	    task->tid != task->tgid)
		return -ENODATA;
	abi_procsrc_make(&s, task->tgid, gaps,
			 kind == 2 ? sizeof(gaps) / sizeof(gaps[0]) : 0);
	memcpy(buf, &s, sizeof(s));
	*len = sizeof(s);
	return 0;
}

/* The thread source: one byte. */
static int fill_thread(void *state, const struct ctp_task *task, void *buf,
		       size_t cap, size_t *len)
{
	(void)state;
	(void)task;
	if (cap < 1)
		return -ENOSPC;
	((char *)buf)[0] = 't';
	*len = 1;
	return 0;
}

static int procsrc_process(void *state, const struct ctp_task *task,
			   struct ctp_record *rec)
{
	struct state *s = state;
	const void *data;
	size_t len;
	uint64_t n = 0, v;
	int r;

	const void *again;
	size_t alen;
	int r1 = s->api->source_get(task, CTP_SOURCE_PROCESS, &data, &len);

	/* Asked twice: the second is the first's bytes, no second fill. */
	r = s->api->source_get(task, CTP_SOURCE_PROCESS, &again, &alen);
	if (r != r1 || (r == 0 && (again != data || alen != len)))
		return -EPROTO;
	if (r1 == 0)
		for (unsigned i = 0; i < CTP_SRC_PROC_N_VALUES; i++)
			n += ctp_src_process_get(data, len, i, &v);
	r = s->api->set_u64(rec, s->h[0], n);
	if (r == 0)
		r = s->api->set_i64(
			rec, s->h[1],
			s->api->source_get(task, ABI_PROCSRC_THREAD_SOURCE,
					   &data, &len));
	return r;
}

static int procsrc_thread(void *state, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct state *s = state;
	const void *data;
	size_t len;

	return s->api->set_i64(
		rec, s->h[2],
		s->api->source_get(task, CTP_SOURCE_PROCESS, &data, &len));
}

static int procsrc_init(struct ctp_ctx *ctx, const struct ctp_api *api,
			void **out)
{
	struct ctp_source_desc d = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(d),
		.name = CTP_SOURCE_PROCESS,
		.fill = fill,
		.n_values = CTP_SRC_PROC_N_VALUES,
		.valid_words = 1,
		.scope = CTP_SCOPE_PROCESS,
	};
	struct ctp_source_desc t = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(t),
		.name = ABI_PROCSRC_THREAD_SOURCE,
		.fill = fill_thread,
		.scope = CTP_SCOPE_THREAD,
	};
	int r;

	if (api->size < offsetof(struct ctp_api, source_add) +
				sizeof(api->source_add) ||
	    !api->source_add)
		return -ENOTSUP;
	st.ctx = ctx;
	st.api = api;
	for (unsigned i = 0; i < 3; i++)
		st.h[i] = api->field_handle(ctx, i);
	st.fills = api->summary_register(ctx, counters[0]);
	if (st.fills < 0)
		return st.fills;
	r = api->source_add(ctx, &d);
	if (r == 0)
		r = api->source_add(ctx, &t);
	if (r < 0)
		return r;
#ifdef ABI_PROCSRC_FAIL_INIT
	return -EIO;
#endif
	*out = &st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = NAME,
	.version = "1",
	.description = "offers the process source with known values",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.init = procsrc_init,
	.process = procsrc_process,
	.thread = procsrc_thread,
};
