/* SPDX-License-Identifier: MIT */
/*
 * hello: the smallest useful ctprof-core collector, built out of tree
 * against the installed <ctprof/plugin.h> and the plugin toolkit
 * <ctprof/plugin-util.h>. docs/PLUGINS.md walks through it.
 *
 * Per thread it records the length of the thread's name and the
 * voluntary context switches from task/<tid>/status; per host the
 * `greeting` option. Build: make (uses pkg-config ctprof-plugin).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ctprof/plugin-util.h>

/* Indexes into the static field table, also used for field_handle(). */
enum { F_COMM_LEN, F_VCSW, F_GREETING, F_COUNT };

static const struct ctp_field_desc fields[] = {
	[F_COMM_LEN] = CTP_FIELD_GAUGE("hello.comm_len", THREAD, BYTES, MAX,
				       "length of the thread name"),
	[F_VCSW] =
		CTP_FIELD_COUNTER("hello.voluntary_ctxt_switches", THREAD,
				  COUNT, "voluntary context switches (status)"),
	[F_GREETING] =
		CTP_FIELD_LABEL("hello.greeting", HOST, "the greeting option"),
};

/* Summary counters shown with the plugin's status by `show` and
 * `plugins`; the core registers them before init. */
enum { C_NO_VCSW, C_COUNT };
static const char *const counters[] = {
	[C_NO_VCSW] = "status_without_vcsw",
};

/* The core reads task/<tid>/status once per thread and hands us the bytes
 * in task->files[0], shared with every other plugin that declared it. */
enum { TF_STATUS };
static const char *const thread_files[] = {"status", NULL};

/* Every option, declared so the core refuses a typo before init and
 * `ctprof-core check-config` reports it at its line and column. */
static const struct ctp_option_desc options[] = {
	{.name = "greeting",
	 .help = "text recorded as hello.greeting",
	 .type = CTP_OPT_STRING,
	 .def = "hello"},
};

struct hello {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int field[F_COUNT];
	int counter[C_COUNT];
	const char *greeting;
};

static int hello_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **state)
{
	struct hello *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->ctx = ctx;
	h->api = api;
	/* The ABI check and every handle in one step: the core's API up to
	 * opt_str, the three fields' and the counter's handles. */
	int r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(opt_str), h->field,
			   h->counter);
	if (r < 0) {
		free(h);
		return r;
	}
	/* Options are declared (options[] above): the core has already
	 * refused any other than `greeting`. The string lives as long as
	 * the configuration: past fini. */
	if (api->opt_str(ctx, "greeting", &h->greeting) < 0)
		h->greeting = "hello";
	*state = h;
	return 0;
}

static void hello_fini(void *state)
{
	free(state);
}

static int hello_host(void *state, struct ctp_record *rec)
{
	struct hello *h = state;
	return h->api->set_str(rec, h->field[F_GREETING], h->greeting,
			       strlen(h->greeting));
}

static int hello_thread(void *state, const struct ctp_task *task,
			struct ctp_record *rec)
{
	struct hello *h = state;
	const char *status;
	size_t len;
	uint64_t v;
	int ret =
		h->api->set_u64(rec, h->field[F_COMM_LEN], strlen(task->comm));
	if (ret < 0)
		return ret;
	/* The core could not read the file. It already tallies the failure
	 * and notices a thread that exited; we only leave the value absent
	 * (never 0: absent means "not measured"). */
	if (ctp_task_file(task, TF_STATUS, &status, &len) < 0)
		return 0;
	ret = ctp_kv_u64(status, len, "voluntary_ctxt_switches", &v);
	if (ret == -ENOENT) {
		h->api->summary_add(h->ctx, h->counter[C_NO_VCSW], 1);
		return 0;
	}
	if (ret < 0)
		return ret;
	return h->api->set_u64(rec, h->field[F_VCSW], v);
}

/* The one exported symbol. */
CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "hello",
	.version = "1.0",
	.description = "example collector: thread name length, context "
		       "switches",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	CTP_PLUGIN_COUNTER_TABLE(counters),
	.thread_files = thread_files,
	.init = hello_init,
	.fini = hello_fini,
	.host = hello_host,
	.thread = hello_thread,
};
