/*
 * bpf-task in a build without BPF (CMake found no clang, bpftool or
 * libbpf >= 1.0, or CTP_BPF is OFF: plugins/bpf-task/CMakeLists.txt). The
 * shipped config lists bpf-task first; this plugin loads there, takes the
 * same options, offers no source and says why, once in the log and in
 * every snapshot's hint, so each collector reads its files and the capture
 * goes on as on a kernel where the program cannot load.
 */
#include "bpftask_opts.h"

#include <ctprof/plugin.h>

#include <stdio.h>
#include <string.h>

#ifndef BPF_TASK_MISSING
#define BPF_TASK_MISSING "unknown"
#endif

#define WHY                                                                    \
	"no BPF task source, collectors read their files: this build has "     \
	"no BPF (" BPF_TASK_MISSING ")"

static const char *const counter_names[] = {"unavailable"};

static const struct ctp_option_desc options[] = {CTP_BPFTASK_OPTIONS};

struct absent {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
};

static struct absent the_state;

static int absent_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		       void **state)
{
	the_state.ctx = ctx;
	the_state.api = api;
	*state = &the_state;
	api->log(ctx, CTP_LOG_NOTICE, "%s", WHY);
	if (CTP_HAS(api, struct ctp_api, set_hint))
		api->set_hint(ctx, WHY);
	return 0;
}

static void absent_fini(void *state)
{
	(void)state;
}

/* Each capture without the source, as bpf_task.c counts them. */
static int absent_host(void *state, struct ctp_record *rec)
{
	struct absent *a = state;
	(void)rec;
	a->api->summary_add(a->ctx, 0, 1);
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ctprof-core: bpf-task-dump: this build has no BPF "
			"(" BPF_TASK_MISSING ")\n");
	return 1;
}

static const struct ctp_command commands[] = {
	{.name = "bpf-task-dump",
	 .usage = "[--tid TID]  one BPF task-iterator pass (not in this "
		  "build)",
	 .run = cmd_dump},
};

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "bpf-task",
	.version = BPF_TASK_VERSION,
	.description = "the per-task source \"task\" from a BPF task iterator "
		       "(not in this build: " BPF_TASK_MISSING ")",
	.flags = CTP_PLUGIN_OPTIONS | CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_OPTION_TABLE(options),
	.init = absent_init,
	.fini = absent_fini,
	.host = absent_host,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	CTP_PLUGIN_COMMAND_TABLE(commands),
	/* Nothing to load: no capability. */
	.capabilities = 0,
};
