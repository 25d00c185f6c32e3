/* SPDX-License-Identifier: MIT */
/*
 * abi-notmt: a test collector that is not MT-safe. Its thread callback
 * keeps an unlocked counter and lingers a little so that, were the core to
 * call it from two workers at once, the overlap would be seen (and
 * counted) and the counter would lose updates.
 */
#include <stdatomic.h>
#include <time.h>

#include <ctprof/plugin.h>

enum { F_SEQ, F_CALLS, F_OVERLAPS };

static const struct ctp_field_desc fields[] = {
	[F_SEQ] = {.name = "abi-notmt.seq",
		   .help = "order of this thread's call, from 1",
		   .scope = CTP_SCOPE_THREAD,
		   .type = CTP_TYPE_U64,
		   .kind = CTP_KIND_ORDINAL,
		   .rule = CTP_RULE_RANGE},
	[F_CALLS] = {.name = "abi-notmt.calls",
		     .help = "thread callbacks, counted without a lock",
		     .scope = CTP_SCOPE_HOST,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_COUNT,
		     .kind = CTP_KIND_COUNTER,
		     .rule = CTP_RULE_SUM},
	[F_OVERLAPS] = {.name = "abi-notmt.overlaps",
			.help = "calls that found another call running",
			.scope = CTP_SCOPE_HOST,
			.type = CTP_TYPE_U64,
			.unit = CTP_UNIT_COUNT,
			.kind = CTP_KIND_COUNTER,
			.rule = CTP_RULE_SUM},
};

struct state {
	const struct ctp_api *api;
	int h[3];
	uint64_t calls; /* deliberately not atomic */
	_Atomic int inside;
	_Atomic uint64_t overlaps;
};

static struct state the_state;

static int notmt_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **statep)
{
	the_state.api = api;
	for (size_t i = 0; i < 3; i++)
		the_state.h[i] = api->field_handle(ctx, i);
	*statep = &the_state;
	return 0;
}

static int notmt_thread(void *statep, const struct ctp_task *task,
			struct ctp_record *rec)
{
	struct state *st = statep;
	(void)task;
	if (atomic_fetch_add(&st->inside, 1) != 0)
		atomic_fetch_add(&st->overlaps, 1);
	uint64_t seq = st->calls + 1;
	struct timespec ts = {.tv_nsec = 1000000};
	nanosleep(&ts, NULL);
	st->calls = seq;
	atomic_fetch_sub(&st->inside, 1);
	return st->api->set_u64(rec, st->h[F_SEQ], seq);
}

static int notmt_finish(void *statep, struct ctp_record *host_rec)
{
	struct state *st = statep;
	int ret = st->api->set_u64(host_rec, st->h[F_CALLS], st->calls);
	if (ret < 0)
		return ret;
	return st->api->set_u64(host_rec, st->h[F_OVERLAPS],
				atomic_load(&st->overlaps));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-notmt",
	.version = "0",
	.description = "not MT-safe; detects concurrent calls",
	.flags = 0,
	CTP_PLUGIN_FIELDS(fields),
	.init = notmt_init,
	.thread = notmt_thread,
	.finish = notmt_finish,
};
