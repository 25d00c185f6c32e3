/* SPDX-License-Identifier: MIT */
/*
 * abi-failing: a test collector whose thread callback always fails with
 * -EIO while its process callback succeeds. The core must disable only the
 * thread callback, after CTP_CB_MAX_CONSECUTIVE_ERRORS calls, say so once,
 * and keep capturing.
 *
 * Built with ABI_FAILING_ERRNO=E (abi-starved), the thread callback fails
 * with -E instead, a resource error: the core counts it as such, never as
 * an error nor a vanished task, and never disables the callback for it.
 */
#include <errno.h>
#include <stdatomic.h>

#include <ctprof/plugin.h>

#ifdef ABI_FAILING_ERRNO
#define ABI_FAILING_NAME "abi-starved"
#define FAIL_ERR	 ABI_FAILING_ERRNO
/* Nothing shared between calls but an atomic: fit for private descriptor
 * tables and split processes, which test_resource walks with. */
#define ABI_FAILING_FLAGS                                                      \
	(CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL | CTP_PLUGIN_SPLITTABLE)
#else
#define ABI_FAILING_NAME  "abi-failing"
#define FAIL_ERR	  EIO
#define ABI_FAILING_FLAGS CTP_PLUGIN_MT_SAFE
#endif

static const struct ctp_field_desc fields[] = {
	{.name = ABI_FAILING_NAME ".pid",
	 .help = "tgid, set by the process callback that works",
	 .scope = CTP_SCOPE_PROCESS,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
	{.name = ABI_FAILING_NAME ".calls",
	 .help = "thread callbacks made, set at finish",
	 .scope = CTP_SCOPE_HOST,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_SUM},
};

struct state {
	const struct ctp_api *api;
	int pid, calls;
	_Atomic uint64_t n;
};

static struct state the_state;

static int failing_init(struct ctp_ctx *ctx, const struct ctp_api *api,
			void **statep)
{
	the_state.api = api;
	the_state.pid = api->field_handle(ctx, 0);
	the_state.calls = api->field_handle(ctx, 1);
	*statep = &the_state;
	return 0;
}

static int failing_process(void *statep, const struct ctp_task *task,
			   struct ctp_record *rec)
{
	struct state *st = statep;
	return st->api->set_u64(rec, st->pid, (uint64_t)task->tgid);
}

static int failing_thread(void *statep, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct state *st = statep;
	(void)task;
	(void)rec;
	atomic_fetch_add(&st->n, 1);
	return -FAIL_ERR;
}

static int failing_finish(void *statep, struct ctp_record *host_rec)
{
	struct state *st = statep;
	return st->api->set_u64(host_rec, st->calls, atomic_load(&st->n));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = ABI_FAILING_NAME,
	.version = "0",
	.description = "thread callback always fails",
	.flags = ABI_FAILING_FLAGS,
	CTP_PLUGIN_FIELDS(fields),
	.init = failing_init,
	.process = failing_process,
	.thread = failing_thread,
	.finish = failing_finish,
};
