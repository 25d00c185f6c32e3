/* SPDX-License-Identifier: MIT */
/*
 * abi-exited: the exited table through the real engine, for
 * tests/test_abi.c. It declares exited-scope fields statically and one at
 * init, adds exited rows from finish, and records in the host string
 * abi-exited.checks what the core answered where it must refuse:
 *
 *   busy         exited_begin from a thread callback (-EBUSY)
 *   thread_rec   an exited field set on a thread record (-EINVAL)
 *   wrong_scope  a thread field set on an exited record (-EINVAL)
 *   after_end    a setter on a record exited_end closed (-EINVAL)
 *   nul, long    a comm with a NUL byte, one of 65 bytes (-EINVAL)
 *   recording    what recording() says (0: a one-shot capture)
 *
 * Rows from finish: tid 1000 and 1002 of tgid 1000 ("exiter-0",
 * "exiter-2", exit times 5e9 + i), tid 1001 with nothing known but its
 * tid, and tid 1003 ("unclosed"), left open for the core to close. cpu is
 * 10 (i + 1) except on 1001; code is i - 1; state 'X'. Every thread
 * callback reports one lost exit and finish two more.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctprof/plugin.h>

enum { F_SEEN, F_CHECKS, F_CPU, F_STATE, F_N };

static const struct ctp_field_desc fields[] = {
	[F_SEEN] = {.name = "abi-exited.seen",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_U64,
		    .unit = CTP_UNIT_COUNT,
		    .kind = CTP_KIND_COUNTER,
		    .rule = CTP_RULE_SUM},
	[F_CHECKS] = {.name = "abi-exited.checks",
		      .scope = CTP_SCOPE_HOST,
		      .type = CTP_TYPE_STRING,
		      .kind = CTP_KIND_CATEGORICAL,
		      .rule = CTP_RULE_MODE},
	[F_CPU] = {.name = "abi-exited.cpu",
		   .help = "CPU time of an exited task",
		   .scope = CTP_SCOPE_EXITED,
		   .type = CTP_TYPE_U64,
		   .unit = CTP_UNIT_US,
		   .kind = CTP_KIND_COUNTER,
		   .rule = CTP_RULE_SUM},
	[F_STATE] = {.name = "abi-exited.state",
		     .scope = CTP_SCOPE_EXITED,
		     .type = CTP_TYPE_CHAR,
		     .kind = CTP_KIND_ORDINAL,
		     .rule = CTP_RULE_MODE},
};

static const struct ctp_field_desc code_desc = {
	.name = "abi-exited.code",
	.help = "registered at init",
	.scope = CTP_SCOPE_EXITED,
	.type = CTP_TYPE_I64,
	.kind = CTP_KIND_CATEGORICAL,
	.rule = CTP_RULE_MODE,
};

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h[F_N];
	int code;
	_Atomic int busy, thread_rec;
};

static int ex_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **out)
{
	struct state *st;

	if (!CTP_HAS(api, struct ctp_api, exited_lost))
		return -ENOTSUP;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	for (int i = 0; i < F_N; i++)
		st->h[i] = api->field_handle(ctx, (size_t)i);
	st->code = api->field_register(ctx, &code_desc);
	atomic_store(&st->busy, 1);
	atomic_store(&st->thread_rec, 1);
	*out = st;
	return st->code < 0 ? st->code : 0;
}

static void ex_fini(void *state)
{
	free(state);
}

static int ex_thread(void *state, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	struct state *st = state;
	struct ctp_record *x = NULL;

	(void)task;
	atomic_store(&st->busy,
		     st->api->exited_begin(st->ctx, 1, 1, "w", 1, 0, &x));
	atomic_store(&st->thread_rec, st->api->set_u64(rec, st->h[F_CPU], 1));
	st->api->exited_lost(st->ctx, 1);
	return st->api->set_u64(rec, st->h[F_SEEN], 1);
}

/* One exited row as the header says; *rec is left open. */
static int add_row(struct state *st, int i, struct ctp_record **rec)
{
	const struct ctp_api *api = st->api;
	char comm[16];
	int n = snprintf(comm, sizeof(comm), "exiter-%d", i);
	int r;

	if (i == 1)
		r = api->exited_begin(st->ctx, 1001, 0, NULL, 0, 0, rec);
	else if (i == 3)
		r = api->exited_begin(st->ctx, 1003, 1000, "unclosed", 8,
				      5000000003ull, rec);
	else
		r = api->exited_begin(st->ctx, 1000 + (uint32_t)i, 1000, comm,
				      (size_t)n, 5000000000ull + (uint64_t)i,
				      rec);
	if (r < 0)
		return r;
	if (i != 1 &&
	    (r = api->set_u64(*rec, st->h[F_CPU], 10 * (uint64_t)(i + 1))) < 0)
		return r;
	if ((r = api->set_char(*rec, st->h[F_STATE], 'X')) < 0)
		return r;
	return api->set_i64(*rec, st->code, i - 1);
}

static int ex_finish(void *state, struct ctp_record *host)
{
	struct state *st = state;
	const struct ctp_api *api = st->api;
	char long_comm[CTP_EXITED_COMM_MAX + 1], checks[256];
	struct ctp_record *rec = NULL, *x = NULL;
	int r, wrong = 0, after = 0, nul, lng;

	for (int i = 0; i < 3; i++) {
		if ((r = add_row(st, i, &rec)) < 0)
			return r;
		if (i == 0)
			wrong = api->set_u64(rec, st->h[F_SEEN], 1);
		api->exited_end(rec);
		if (i == 0)
			after = api->set_u64(rec, st->h[F_CPU], 99);
	}
	nul = api->exited_begin(st->ctx, 1, 1, "a\0b", 3, 0, &x);
	memset(long_comm, 'c', sizeof(long_comm));
	lng = api->exited_begin(st->ctx, 1, 1, long_comm, sizeof(long_comm), 0,
				&x);
	if ((r = add_row(st, 3, &rec)) < 0)
		return r;
	api->exited_lost(st->ctx, 2);
	snprintf(checks, sizeof(checks),
		 "busy=%d thread_rec=%d after_end=%d wrong_scope=%d nul=%d "
		 "long=%d recording=%d",
		 atomic_load(&st->busy), atomic_load(&st->thread_rec), after,
		 wrong, nul, lng, api->recording(st->ctx));
	return api->set_str(host, st->h[F_CHECKS], checks, strlen(checks));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-exited",
	.version = "1.0",
	.description = "exited table test collector",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.init = ex_init,
	.fini = ex_fini,
	.thread = ex_thread,
	.finish = ex_finish,
};
