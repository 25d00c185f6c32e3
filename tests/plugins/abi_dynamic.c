/* SPDX-License-Identifier: MIT */
/*
 * abi-dynamic: a test collector with an open key set. It has no static
 * table; its thread callback registers "abi-dynamic.t<tid>" for every
 * thread it sees and sets it to the tid on that thread's row only, and its
 * finish callback registers a host field counting them. It runs MT-safe so
 * registration races between workers.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include <ctprof/plugin.h>

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	_Atomic uint64_t registered;
};

static struct state the_state;

static int dynamic_init(struct ctp_ctx *ctx, const struct ctp_api *api,
			void **statep)
{
	the_state.ctx = ctx;
	the_state.api = api;
	*statep = &the_state;
	return 0;
}

static int dynamic_thread(void *statep, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct state *st = statep;
	char name[64];
	snprintf(name, sizeof(name), "abi-dynamic.t%d", (int)task->tid);
	struct ctp_field_desc d = {
		.name = name,
		.help = "tid, on its own thread's row",
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_U64,
		.kind = CTP_KIND_CATEGORICAL,
		.rule = CTP_RULE_MODE,
	};
	int h = st->api->field_register(st->ctx, &d);
	if (h < 0)
		return h;
	/* Registering the same description again must give the same handle;
	 * a mismatch counts as an error the test sees. */
	if (st->api->field_register(st->ctx, &d) != h)
		return -EPROTO;
	atomic_fetch_add(&st->registered, 1);
	return st->api->set_u64(rec, h, (uint64_t)task->tid);
}

static int dynamic_finish(void *statep, struct ctp_record *host_rec)
{
	struct state *st = statep;
	static const struct ctp_field_desc d = {
		.name = "abi-dynamic.registered",
		.help = "thread fields registered",
		.scope = CTP_SCOPE_HOST,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_COUNT,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_SUM,
	};
	int h = st->api->field_register(st->ctx, &d);
	if (h < 0)
		return h;
	return st->api->set_u64(host_rec, h, atomic_load(&st->registered));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-dynamic",
	.version = "0",
	.description = "registers its fields at runtime",
	.flags = CTP_PLUGIN_MT_SAFE,
	.init = dynamic_init,
	.thread = dynamic_thread,
	.finish = dynamic_finish,
};
