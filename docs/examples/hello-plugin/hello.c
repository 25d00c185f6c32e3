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

/* What hello keeps of task/<tid>/status: the parser fills it. */
struct status_vals {
	uint64_t present; /* bit i: the value of presence bit i is there */
	uint64_t vcsw;
};

/*
 * The fields, one line each: X(index, where its value comes from, its
 * description). The list makes the enum of indexes (also used for
 * field_handle()), the static field table and, beside it, the table of
 * sources: voluntary_ctxt_switches is the key of that name in status, kept
 * in struct status_vals' vcsw with presence bit 0; the other two the code
 * finds itself (CTP_SRC_NONE).
 */
#define HELLO_FIELDS(X)                                                        \
	X(F_COMM_LEN, CTP_SRC_NONE,                                            \
	  CTP_FIELD_GAUGE("hello.comm_len", THREAD, BYTES, MAX,                \
			  "length of the thread name"))                        \
	X(F_VCSW,                                                              \
	  CTP_SRC_KEY("voluntary_ctxt_switches", struct status_vals, vcsw, 0), \
	  CTP_FIELD_COUNTER("hello.voluntary_ctxt_switches", THREAD, COUNT,    \
			    "voluntary context switches (status)"))            \
	X(F_GREETING, CTP_SRC_NONE,                                            \
	  CTP_FIELD_LABEL("hello.greeting", HOST, "the greeting option"))

enum { HELLO_FIELDS(CTP_FT_ID) F_COUNT };
static const struct ctp_field_desc fields[] = {HELLO_FIELDS(CTP_FT_DESC)};
static const struct ctp_field_src srcs[] = {HELLO_FIELDS(CTP_FT_SRC)};

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
	 * opt_str, the sources checked against the fields, the three
	 * fields' and the counter's handles. */
	int r = CTP_ATTACH_TABLE(ctx, api, CTP_API_THROUGH(opt_str), srcs,
				 h->field, h->counter);
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

/* Every value goes through a checked setter: a field the core refused
 * (its handle < 0) is skipped, and the first failing set_* is kept in
 * set.err for the callback to return. */
static int hello_host(void *state, struct ctp_record *rec)
{
	struct hello *h = state;
	struct ctp_setter set = CTP_SETTER(h->api, rec);

	return ctp_set_str(&set, h->field[F_GREETING], h->greeting,
			   strlen(h->greeting));
}

static int hello_thread(void *state, const struct ctp_task *task,
			struct ctp_record *rec)
{
	struct hello *h = state;
	struct ctp_setter set = CTP_SETTER(h->api, rec);
	struct status_vals sv = {0};
	const char *status;
	size_t len;
	int r;

	ctp_set_u64(&set, h->field[F_COMM_LEN], strlen(task->comm));
	/* The core could not read the file. It already tallies the failure
	 * and notices a thread that exited; we only leave the value absent
	 * (never 0: absent means "not measured"). */
	if (ctp_task_file(task, TF_STATUS, &status, &len) < 0)
		return set.err;
	/* The keys the sources name, into sv; then every value that parsed
	 * into its field. */
	r = ctp_fields_scan_keys(status, len, srcs, F_COUNT, &sv, &sv.present);
	if (r == -ENODATA)
		h->api->summary_add(h->ctx, h->counter[C_NO_VCSW], 1);
	ctp_fields_set(&set, fields, srcs, h->field, F_COUNT, CTP_SCOPE_THREAD,
		       &sv, sv.present);
	/* A garbled or cut line is an error of this thread's callback. */
	return r < 0 && r != -ENODATA ? r : set.err;
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
