/* SPDX-License-Identifier: MIT */
/*
 * abi-dep: a test collector with a library of its own, found through its
 * RUNPATH ($ORIGIN/abi-dep), like jemalloc-probe's support library. The
 * loader must check that library as it checks the plugin.
 */
#include <ctprof/plugin.h>

int ctp_abi_dep_answer(void); /* abi_deplib.c */

static const struct ctp_field_desc fields[] = {
	{.name = "abi-dep.answer",
	 .help = "a number from the dependency",
	 .scope = CTP_SCOPE_HOST,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX},
};

struct state {
	const struct ctp_api *api;
	int h;
};

static struct state the_state;

static int dep_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **statep)
{
	the_state.api = api;
	the_state.h = api->field_handle(ctx, 0);
	*statep = &the_state;
	return 0;
}

static int dep_host(void *statep, struct ctp_record *rec)
{
	struct state *st = statep;
	return st->api->set_u64(rec, st->h, (uint64_t)ctp_abi_dep_answer());
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-dep",
	.version = "0",
	.description = "needs a library from its own directory",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.init = dep_init,
	.host = dep_host,
};
