/* SPDX-License-Identifier: MIT */
/*
 * abi-burnsrc, abi-burnask (ABI_BURN_ASKER) and abi-burnbind
 * (ABI_BURN_BINDER): test collectors that spend known amounts of time, for
 * tests/test_engine_time.c, which checks the core charges each plugin what
 * it spent. abi-burnsrc's thread callback spins ABI_BURN_SRC_CALL_NS; it
 * offers the thread source "abi-burn", whose fill spins ABI_BURN_FILL_NS,
 * and the value source "abi-burnv" (one value: the tid), whose fill spins
 * ABI_BURN_VFILL_NS. abi-burnask's thread callback asks for "abi-burn" (so
 * the fill runs inside it, or, with option `prefill: on`, which it passes
 * to ctp_api.source_prefill, before it) and spins ABI_BURN_ASK_CALL_NS.
 * abi-burnbind binds its field to the value of "abi-burnv" (so the core fills
 * it before the thread callbacks) and its thread callback spins
 * ABI_BURN_BIND_CALL_NS. Spinning is on CLOCK_MONOTONIC, the clock the core
 * times callbacks with, so each call or fill lasts at least that long. Summary
 * counters: "calls" the thread callbacks, "fills" and "vfills" the fills of
 * each source, "asked" the asks of "abi-burn" that succeeded, "bound" the calls
 * for a thread whose bound field the core set.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <ctprof/plugin.h>

#include "abi_burn.h"

#if defined(ABI_BURN_ASKER)
#define NAME "abi-burnask"
#elif defined(ABI_BURN_BINDER)
#define NAME "abi-burnbind"
#else
#define NAME "abi-burnsrc"
#endif

enum { C_CALLS, C_FILLS, C_VFILLS, C_ASKED, C_BOUND };
static const char *const counters[] = {"calls", "fills", "vfills", "asked",
				       "bound"};

static const struct ctp_field_desc fields[] = {
	{.name = NAME ".seen",
	 .help = "1 for every thread called",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_GAUGE,
	 .rule = CTP_RULE_MAX},
};

struct state {
	const struct ctp_api *api;
	struct ctp_ctx *ctx;
	int h;
	int prefill; /* abi-burnask's option */
};

static struct state the_state;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

#if !defined(ABI_BURN_ASKER) && !defined(ABI_BURN_BINDER)
static int burn_fill(void *statep, const struct ctp_task *task, void *buf,
		     size_t cap, size_t *len)
{
	struct state *st = statep;
	uint64_t tid = (uint64_t)task->tid;
	(void)cap;
	spin(ABI_BURN_FILL_NS);
	st->api->summary_add(st->ctx, C_FILLS, 1);
	__builtin_memcpy(buf, &tid, sizeof(tid));
	*len = sizeof(tid);
	return 0;
}

/* A value source's bytes: abi 1, size, valid[1], v[1]. */
struct vbytes {
	uint32_t abi, size;
	uint64_t valid[1];
	uint64_t v[1];
};

static int burn_vfill(void *statep, const struct ctp_task *task, void *buf,
		      size_t cap, size_t *len)
{
	struct state *st = statep;
	struct vbytes b = {.abi = 1,
			   .size = sizeof(b),
			   .valid = {1},
			   .v = {(uint64_t)task->tid}};
	(void)cap;
	spin(ABI_BURN_VFILL_NS);
	st->api->summary_add(st->ctx, C_VFILLS, 1);
	__builtin_memcpy(buf, &b, sizeof(b));
	*len = sizeof(b);
	return 0;
}
#endif

static int burn_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **statep)
{
	the_state.api = api;
	the_state.ctx = ctx;
	the_state.h = api->field_handle(ctx, 0);
	*statep = &the_state;
#if defined(ABI_BURN_ASKER)
	int prefill = 0;
	if (api->opt_bool(ctx, "prefill", &prefill) == -EINVAL)
		return -EINVAL;
	/* Not a source name: refused. */
	if (prefill && api->source_prefill(ctx, "Not/A Name", 1) != -EINVAL)
		return -EPROTO;
	the_state.prefill = prefill;
	return prefill ? api->source_prefill(ctx, ABI_BURN_SOURCE, 1) : 0;
#elif defined(ABI_BURN_BINDER)
	return api->field_bind(ctx, the_state.h, ABI_BURN_VSOURCE, 0);
#else
	const struct ctp_source_desc v = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(v),
		.name = ABI_BURN_VSOURCE,
		.fill = burn_vfill,
		.n_values = 1,
		.valid_words = 1,
	};
	int r = api->source_register(ctx, ABI_BURN_SOURCE, burn_fill);
	return r < 0 ? r : api->source_add(ctx, &v);
#endif
}

static int burn_thread(void *statep, const struct ctp_task *task,
		       struct ctp_record *rec)
{
	struct state *st = statep;
#ifdef ABI_BURN_ASKER
	const void *data;
	size_t len;
	if (st->api->source_get(task, ABI_BURN_SOURCE, &data, &len) == 0)
		st->api->summary_add(st->ctx, C_ASKED, 1);
	/* Only init and the host callback say what to prefill. */
	if (st->prefill &&
	    st->api->source_prefill(st->ctx, ABI_BURN_SOURCE, 0) != -EBUSY)
		return -EPROTO;
	spin(ABI_BURN_ASK_CALL_NS);
#elif defined(ABI_BURN_BINDER)
	if (task->bound)
		st->api->summary_add(st->ctx, C_BOUND, 1);
	spin(ABI_BURN_BIND_CALL_NS);
	st->api->summary_add(st->ctx, C_CALLS, 1);
	return 0;
#else
	(void)task;
	spin(ABI_BURN_SRC_CALL_NS);
#endif
	st->api->summary_add(st->ctx, C_CALLS, 1);
	return st->api->set_u64(rec, st->h, 1);
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = NAME,
	.version = "0",
	.description = "spends known amounts of time",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_COUNTER_TABLE(counters),
	.init = burn_init,
	.thread = burn_thread,
};
