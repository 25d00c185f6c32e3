/* SPDX-License-Identifier: MIT */
/*
 * Broken test collectors for tests/test_abi.c, one per -D switch (see
 * tests/abi.cmake). Each is wrong in exactly one way so the test can match
 * the loader's reason for it; everything else is a valid plugin whose
 * thread callback would set a value, so a plugin the loader should have
 * refused shows up in the snapshot.
 *
 *   ABI_BAD_ABI        abi-badabi       descriptor abi 99
 *   ABI_NO_SYMBOL      abi-nosym        exports ctp_plugin_v2 instead
 *   ABI_SMALL          abi-small        descriptor size 8
 *   ABI_MISNAMED       abi-misnamed     descriptor names itself otherwise
 *   ABI_DUP_FIELD      abi-dupfield     one field name twice in its table
 *   ABI_COLLIDE        abi-collide      a field abi-good already has
 *   ABI_COUNTER_MODE   abi-countermode  counter with rule mode
 *   ABI_GAUGE_SUM      abi-gaugesum     gauge with rule sum
 *   ABI_INIT_EIO       abi-initfail     init returns -EIO
 *   ABI_FLAG_BITS      abi-flagbits     a flag bit no ABI defines
 *   ABI_FIELD_RESERVED abi-resfield     a field's reserved member set
 *   ABI_TRAILING       abi-trailing     a byte set past the known descriptor
 *   ABI_START_BAD      abi-startbad     CTP_FIELD_START_TIME on a gauge
 *   ABI_START_TWICE    abi-starttwice   two thread start times
 *   ABI_BAD_COMMAND    abi-badcmd       a command named with a capital
 *   ABI_SHADOW_COMMAND abi-shadowcmd    a command named like a core one
 *   ABI_BAD_CAPS       abi-badcaps      a capability number no kernel has
 */
#include <errno.h>
#include <stdint.h>

#include <ctprof/plugin.h>

#if defined(ABI_BAD_ABI)
#define NAME "abi-badabi"
#elif defined(ABI_NO_SYMBOL)
#define NAME "abi-nosym"
#elif defined(ABI_SMALL)
#define NAME "abi-small"
#elif defined(ABI_MISNAMED)
#define NAME "abi-misnamed"
#elif defined(ABI_DUP_FIELD)
#define NAME "abi-dupfield"
#elif defined(ABI_COLLIDE)
#define NAME "abi-collide"
#elif defined(ABI_COUNTER_MODE)
#define NAME "abi-countermode"
#elif defined(ABI_GAUGE_SUM)
#define NAME "abi-gaugesum"
#elif defined(ABI_INIT_EIO)
#define NAME "abi-initfail"
#elif defined(ABI_FLAG_BITS)
#define NAME "abi-flagbits"
#elif defined(ABI_FIELD_RESERVED)
#define NAME "abi-resfield"
#elif defined(ABI_TRAILING)
#define NAME "abi-trailing"
#elif defined(ABI_START_BAD)
#define NAME "abi-startbad"
#elif defined(ABI_START_TWICE)
#define NAME "abi-starttwice"
#elif defined(ABI_BAD_COMMAND)
#define NAME "abi-badcmd"
#elif defined(ABI_SHADOW_COMMAND)
#define NAME "abi-shadowcmd"
#elif defined(ABI_BAD_CAPS)
#define NAME "abi-badcaps"
#else
#error "pick a variant"
#endif

static const struct ctp_field_desc fields[] = {
	{.name = NAME ".x",
	 .help = "set to 1 on every thread",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_SUM},
#if defined(ABI_FIELD_RESERVED)
	{.name = NAME ".y",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX,
	 .reserved = 1},
#endif
#if defined(ABI_DUP_FIELD)
	{.name = NAME ".x",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX},
#elif defined(ABI_COLLIDE)
	/* Exactly abi-good's description: the name alone must clash. */
	{.name = "abi-good.value",
	 .help = "number from task/<tid>/abi-data",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_SUM},
#elif defined(ABI_COUNTER_MODE)
	{.name = NAME ".y",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_MODE},
#elif defined(ABI_GAUGE_SUM)
	{.name = NAME ".y",
	 .scope = CTP_SCOPE_PROCESS,
	 .type = CTP_TYPE_I64,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_SUM},
#elif defined(ABI_START_BAD)
	{.name = NAME ".y",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_TICKS,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX,
	 .flags = CTP_FIELD_START_TIME},
#elif defined(ABI_START_TWICE)
	{.name = NAME ".y",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_NS,
	 .kind = CTP_KIND_ORDINAL,
	 .rule = CTP_RULE_RANGE,
	 .flags = CTP_FIELD_START_TIME},
	{.name = NAME ".z",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_TICKS,
	 .kind = CTP_KIND_ORDINAL,
	 .rule = CTP_RULE_RANGE,
	 .flags = CTP_FIELD_START_TIME},
#endif
};

struct state {
	const struct ctp_api *api;
	int x;
};

static struct state the_state;

static int bad_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **statep)
{
	the_state.api = api;
	the_state.x = api->field_handle(ctx, 0);
#if defined(ABI_INIT_EIO)
	(void)statep;
	return -EIO;
#else
	*statep = &the_state;
	return 0;
#endif
}

static int bad_thread(void *statep, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	struct state *st = statep;
	(void)task;
	return st->api->set_u64(rec, st->x, 1);
}

#if defined(ABI_BAD_COMMAND) || defined(ABI_SHADOW_COMMAND)
static int bad_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static const struct ctp_command commands[] = {
#if defined(ABI_BAD_COMMAND)
	{.name = "ok-name", .usage = "", .run = bad_run},
	{.name = "Bad-name", .usage = "", .run = bad_run},
#else
	{.name = "show", .usage = "", .run = bad_run},
#endif
};
#endif

#if defined(ABI_NO_SYMBOL)
#define SYMBOL ctp_plugin_v2
#else
#define SYMBOL ctp_plugin_v1
#endif

#if defined(ABI_TRAILING)
/* A descriptor of a later ABI minor: one more member, set, that this core
 * would not know to honour. */
struct later_plugin {
	struct ctp_plugin p;
	uint64_t later_member;
};
CTP_EXPORT const struct later_plugin SYMBOL = {
	.later_member = 1,
	.p =
		{
#else
CTP_EXPORT const struct ctp_plugin SYMBOL = {
#endif
#if defined(ABI_BAD_ABI)
			.abi = 99,
			.size = sizeof(struct ctp_plugin),
#elif defined(ABI_SMALL)
	.abi = CTP_ABI_MAJOR,
	.size = 8,
#elif defined(ABI_TRAILING)
.abi = CTP_ABI_MAJOR, .size = sizeof(struct later_plugin),
#else
CTP_PLUGIN_HEADER,
#endif
#if defined(ABI_MISNAMED)
			.name = "someone-else",
#else
	.name = NAME,
#endif
			.version = "0",
			.description = "broken on purpose",
#if defined(ABI_FLAG_BITS)
			.flags = CTP_PLUGIN_MT_SAFE | (1u << 7),
#elif defined(ABI_BAD_CAPS)
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_CAPS,
	.capabilities = CTP_CAP_BIT(63),
#else
		      .flags = CTP_PLUGIN_MT_SAFE,
#endif
			CTP_PLUGIN_FIELDS(fields),
			.init = bad_init,
			.thread = bad_thread,
#if defined(ABI_BAD_COMMAND) || defined(ABI_SHADOW_COMMAND)
			CTP_PLUGIN_COMMAND_TABLE(commands),
#endif
#if defined(ABI_TRAILING)
		},
#endif
};
