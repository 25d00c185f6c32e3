/* SPDX-License-Identifier: MIT */
/*
 * abi-fdprobe: a CTP_PLUGIN_FD_LOCAL test collector. Its thread callback
 * records whether the thread running it has a descriptor table of its own,
 * apart from the main thread's (kcmp(2) KCMP_FILES), which is what the
 * core does for its workers when every loaded plugin carries the flag.
 * Nothing is recorded when kcmp is unavailable (no CONFIG_KCMP).
 * It also records which thread ran each callback, lingering 1 ms per call
 * so that a second worker has time to take part, for the tests of
 * processes split among workers (CTP_PLUGIN_SPLITTABLE), and counts its
 * thread calls in summary counter "threads" (each worker's adds kept apart
 * during the walk and merged after it).
 */
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <ctprof/plugin.h>

static const struct ctp_field_desc fields[] = {
	{.name = "abi-fdprobe.private_fds",
	 .help = "the thread callback ran with a descriptor table other "
		 "than the main thread's",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_BOOL,
	 .kind = CTP_KIND_CATEGORICAL,
	 .rule = CTP_RULE_MODE},
	{.name = "abi-fdprobe.caller",
	 .help = "the thread id of the thread that ran the thread callback",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .kind = CTP_KIND_ORDINAL,
	 .rule = CTP_RULE_RANGE},
};

struct state {
	const struct ctp_api *api;
	struct ctp_ctx *ctx;
	int h, h_caller, sum_threads;
};

static struct state the_state;

static int fdprobe_init(struct ctp_ctx *ctx, const struct ctp_api *api,
			void **statep)
{
	the_state.api = api;
	the_state.ctx = ctx;
	the_state.sum_threads = api->summary_register(ctx, "threads");
	if (the_state.sum_threads < 0)
		return the_state.sum_threads;
	the_state.h = api->field_handle(ctx, 0);
	the_state.h_caller = api->field_handle(ctx, 1);
	*statep = &the_state;
	return 0;
}

static int fdprobe_thread(void *statep, const struct ctp_task *task,
			  struct ctp_record *rec)
{
	struct state *st = statep;
	(void)task;
	long self = syscall(SYS_gettid);
	struct timespec ts = {.tv_nsec = 1000000};
	nanosleep(&ts, NULL);
	st->api->summary_add(st->ctx, st->sum_threads, 1);
	int ret = st->api->set_u64(rec, st->h_caller, (uint64_t)self);
	long r = syscall(SYS_kcmp, (long)getpid(), self, KCMP_FILES, 0L, 0L);
	if (r < 0 || ret < 0)
		return ret;
	return st->api->set_bool(rec, st->h, r != 0);
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-fdprobe",
	.version = "0",
	.description = "fd-local; records whether workers own their "
		       "descriptor table",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE,
	CTP_PLUGIN_FIELDS(fields),
	.init = fdprobe_init,
	.thread = fdprobe_thread,
};
