/* SPDX-License-Identifier: MIT */
/*
 * abi-optcheck: a test collector whose option `file` has a value check of
 * its own (ctp_option_desc.check), for tests/test_abi.c: a value starting
 * with "ok" passes, any other fails with "<value>:1:2: not ok". Built
 * with ABI_OPT_V1 as abi-optv1: the same table declared with the element
 * size of the first ABI 1 plugins, which stops before `check`, so the
 * core reads no check and takes any value. init counts its calls in
 * abi-optcheck.inits (the check runs before it, or it never runs).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <ctprof/plugin.h>

#ifdef ABI_OPT_V1
#define NAME "abi-optv1"
#else
#define NAME "abi-optcheck"
#endif

static const struct ctp_field_desc fields[] = {
	{.name = NAME ".inits",
	 .help = "init calls",
	 .scope = CTP_SCOPE_HOST,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX},
};

static int check_file(const char *value, char *why, size_t whylen)
{
	if (!strncmp(value, "ok", 2))
		return 0;
	snprintf(why, whylen, "%s:1:2: not ok", value);
	return -EINVAL;
}

static const struct ctp_option_desc options[] = {
	{.name = "file",
	 .help = "checked by the plugin",
	 .type = CTP_OPT_STRING,
	 .def = "ok",
	 .check = check_file},
};

static const struct ctp_api *api_of;
static int field, inits;

static int oc_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **state)
{
	api_of = api;
	field = api->field_handle(ctx, 0);
	inits++;
	*state = &field;
	return 0;
}

static void oc_fini(void *state)
{
	(void)state;
}

static int oc_finish(void *state, struct ctp_record *host_rec)
{
	(void)state;
	return api_of->set_u64(host_rec, field, (uint64_t)inits);
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = NAME,
	.version = "0",
	.description = "an option with a value check of its own",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	.options = options,
	.n_options = 1,
#ifdef ABI_OPT_V1
	.option_desc_size = offsetof(struct ctp_option_desc, check),
#else
	.option_desc_size = sizeof(struct ctp_option_desc),
#endif
	.init = oc_init,
	.fini = oc_fini,
	.finish = oc_finish,
};
