/* SPDX-License-Identifier: MIT */
/*
 * abi-wrongtype: a test collector that misuses the setters and the field
 * registry on purpose and stores what each call returned, so the test can
 * check the core refused every one with the documented errno. It also sets
 * its string field properly, so the refusals must not have touched it.
 */
#include <errno.h>
#include <string.h>

#include <ctprof/plugin.h>

enum {
	F_NAME,
	F_RET_U64_ON_STR,
	F_RET_STR_ON_I64,
	F_RET_SCOPE,
	F_RET_BADHANDLE,
	F_RET_NUL,
	F_RET_BADRULE,
	F_RET_EXISTS,
	F_THREAD_U64,
	F_N,
};

#define RET_FIELD(n, s, h)                                                     \
	{                                                                      \
		.name = "abi-wrongtype." n, .help = h, .scope = CTP_SCOPE_##s, \
		.type = CTP_TYPE_I64, .kind = CTP_KIND_GAUGE,                  \
		.rule = CTP_RULE_MIN                                           \
	}

static const struct ctp_field_desc fields[] = {
	[F_NAME] = {.name = "abi-wrongtype.name",
		    .help = "thread name, set properly",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
	[F_RET_U64_ON_STR] =
		RET_FIELD("u64_on_string", THREAD, "set_u64 on a string field"),
	[F_RET_STR_ON_I64] =
		RET_FIELD("string_on_i64", THREAD, "set_str on an i64 field"),
	[F_RET_SCOPE] = RET_FIELD("thread_field_on_host", HOST,
				  "set_u64 of a thread field on the host row"),
	[F_RET_BADHANDLE] = RET_FIELD("bad_handle", HOST,
				      "set_i64 with a handle never issued"),
	[F_RET_NUL] = RET_FIELD("embedded_nul", HOST,
				"set_str of bytes holding a NUL"),
	[F_RET_BADRULE] = RET_FIELD("register_counter_max", HOST,
				    "field_register of a counter with max"),
	[F_RET_EXISTS] = RET_FIELD("register_taken", HOST,
				   "field_register of abi-good.value"),
	/* A thread field of the right type for set_u64, set on the host row:
	 * only the scope is wrong. */
	[F_THREAD_U64] = {.name = "abi-wrongtype.thread_u64",
			  .help = "a thread counter, never set on a thread",
			  .scope = CTP_SCOPE_THREAD,
			  .type = CTP_TYPE_U64,
			  .unit = CTP_UNIT_COUNT,
			  .kind = CTP_KIND_COUNTER,
			  .rule = CTP_RULE_SUM},
};

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h[F_N];
};

static struct state the_state;

static int wt_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		   void **statep)
{
	the_state.ctx = ctx;
	the_state.api = api;
	for (size_t i = 0; i < F_N; i++)
		the_state.h[i] = api->field_handle(ctx, i);
	*statep = &the_state;
	return 0;
}

static int wt_host(void *statep, struct ctp_record *rec)
{
	struct state *st = statep;
	const struct ctp_api *api = st->api;
	int r;

	r = api->set_u64(rec, st->h[F_THREAD_U64], 1);
	api->set_i64(rec, st->h[F_RET_SCOPE], r);
	r = api->set_i64(rec, 1000000, 1);
	api->set_i64(rec, st->h[F_RET_BADHANDLE], r);
	r = api->set_str(rec, st->h[F_RET_NUL], "a\0b", 3);
	api->set_i64(rec, st->h[F_RET_NUL], r);

	const struct ctp_field_desc badrule = {
		.name = "abi-wrongtype.counter_max",
		.scope = CTP_SCOPE_HOST,
		.type = CTP_TYPE_U64,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_MAX,
	};
	r = api->field_register(st->ctx, &badrule);
	api->set_i64(rec, st->h[F_RET_BADRULE], r);
	const struct ctp_field_desc taken = {
		.name = "abi-good.value",
		.help = "number from task/<tid>/abi-data",
		.scope = CTP_SCOPE_THREAD,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_COUNT,
		.kind = CTP_KIND_COUNTER,
		.rule = CTP_RULE_SUM,
	};
	r = api->field_register(st->ctx, &taken);
	api->set_i64(rec, st->h[F_RET_EXISTS], r);
	return 0;
}

static int wt_thread(void *statep, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	struct state *st = statep;
	const struct ctp_api *api = st->api;
	int r;

	r = api->set_u64(rec, st->h[F_NAME], 42);
	api->set_i64(rec, st->h[F_RET_U64_ON_STR], r);
	r = api->set_str(rec, st->h[F_RET_STR_ON_I64], "x", 1);
	/* Must not have been stored: the i64 is written only now. */
	api->set_i64(rec, st->h[F_RET_STR_ON_I64], r);
	return api->set_str(rec, st->h[F_NAME], task->comm, strlen(task->comm));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-wrongtype",
	.version = "0",
	.description = "misuses the setters on purpose",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.init = wt_init,
	.host = wt_host,
	.thread = wt_thread,
};
