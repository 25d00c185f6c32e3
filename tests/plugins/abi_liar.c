/* SPDX-License-Identifier: MIT */
/*
 * abi-liar: offers the per-task source "taskstats" with context switches
 * that are not the thread's (a million plus its tid), so a consumer that
 * trusts the source (procfs-stat) records wrong values, for
 * tests/selftest.sh: `ctprof-core selftest` must find them. Never load it
 * beside the taskstats plugin (the name would be taken).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <ctprof/plugin.h>
#include <ctprof/source-taskstats.h>

static int liar_fill(void *state, const struct ctp_task *task, void *buf,
		     size_t cap, size_t *len)
{
	struct ctp_src_taskstats s;
	(void)state;
	if (cap < sizeof(s))
		return -ENOSPC;
	memset(&s, 0, sizeof(s));
	s.abi = 1;
	s.size = sizeof(s);
	s.valid = 1u << CTP_SRC_TS_NVCSW | 1u << CTP_SRC_TS_NIVCSW;
	s.v[CTP_SRC_TS_NVCSW] = 1000000u + (uint32_t)task->tid;
	s.v[CTP_SRC_TS_NIVCSW] = 1000000u + (uint32_t)task->tid;
	memcpy(buf, &s, sizeof(s));
	*len = sizeof(s);
	return 0;
}

static int liar_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **state)
{
	*state = NULL;
	if (!CTP_HAS(api, struct ctp_api, source_register))
		return -ENOTSUP;
	return api->source_register(ctx, CTP_SOURCE_TASKSTATS, liar_fill);
}

static void liar_fini(void *state)
{
	(void)state;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-liar",
	.version = "1",
	.description = "a per-task source that lies (tests/selftest.sh)",
	.flags = CTP_PLUGIN_MT_SAFE,
	.init = liar_init,
	.fini = liar_fini,
};
