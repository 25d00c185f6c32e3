/* SPDX-License-Identifier: MIT */
/*
 * hello: the smallest useful ctprof-core collector, built out of tree
 * against the installed <ctprof/plugin.h> only. docs/PLUGINS.md walks
 * through it.
 *
 * Per thread it records the length of the thread's name and the
 * voluntary context switches from task/<tid>/status; per host the
 * `greeting` option. Build: make (uses pkg-config ctprof-plugin).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ctprof/plugin.h>

/* Indexes into the static field table, also used for field_handle(). */
enum { F_COMM_LEN, F_VCSW, F_GREETING, F_COUNT };

static const struct ctp_field_desc fields[] = {
	[F_COMM_LEN] = {.name = "hello.comm_len",
			.help = "length of the thread name",
			.scope = CTP_SCOPE_THREAD,
			.type = CTP_TYPE_U64,
			.unit = CTP_UNIT_BYTES,
			.kind = CTP_KIND_GAUGE,
			.rule = CTP_RULE_MAX},
	[F_VCSW] = {.name = "hello.voluntary_ctxt_switches",
		    .help = "voluntary context switches (status)",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_U64,
		    .unit = CTP_UNIT_COUNT,
		    .kind = CTP_KIND_COUNTER,
		    .rule = CTP_RULE_SUM},
	[F_GREETING] = {.name = "hello.greeting",
			.help = "the greeting option",
			.scope = CTP_SCOPE_HOST,
			.type = CTP_TYPE_STRING,
			.kind = CTP_KIND_CATEGORICAL,
			.rule = CTP_RULE_MODE},
};

/* The core reads task/<tid>/status once per thread and hands us the bytes
 * in task->files[0], shared with every other plugin that declared it. */
static const char *const thread_files[] = {"status", NULL};

struct hello {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int field[F_COUNT];
	int sum_no_vcsw; /* summary counter: status without the line */
	const char *greeting;
};

/* Every option, declared so the core refuses a typo before init and
 * `ctprof-core check-config` reports it at its line and column. */
static const struct ctp_option_desc options[] = {
	{.name = "greeting",
	 .help = "text recorded as hello.greeting",
	 .type = CTP_OPT_STRING,
	 .def = "hello"},
};

static int hello_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **state)
{
	/* Options are declared (options[] below): the core has already
	 * refused any other than `greeting`. */
	struct hello *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->ctx = ctx;
	h->api = api;
	for (size_t i = 0; i < F_COUNT; i++)
		h->field[i] = api->field_handle(ctx, i);
	h->sum_no_vcsw = api->summary_register(ctx, "status_without_vcsw");
	/* The string lives as long as the configuration: past fini. */
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

/* Pure parser: the value of "voluntary_ctxt_switches:" in status text. */
static int parse_vcsw(const char *buf, size_t len, uint64_t *out)
{
	static const char key[] = "voluntary_ctxt_switches:";
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if ((size_t)(le - p) > sizeof(key) - 1 &&
		    memcmp(p, key, sizeof(key) - 1) == 0) {
			const char *q = p + sizeof(key) - 1;
			uint64_t v = 0;
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (q == le)
				return -EINVAL;
			for (; q < le; q++) {
				if (*q < '0' || *q > '9')
					return -EINVAL;
				if (v > (UINT64_MAX - 9) / 10)
					return -ERANGE;
				v = v * 10 + (uint64_t)(*q - '0');
			}
			*out = v;
			return 0;
		}
		p = nl ? nl + 1 : end;
	}
	return -ENOENT;
}

static int hello_thread(void *state, const struct ctp_task *task,
			struct ctp_record *rec)
{
	struct hello *h = state;
	const struct ctp_file *status = &task->files[0];
	int ret =
		h->api->set_u64(rec, h->field[F_COMM_LEN], strlen(task->comm));
	if (ret < 0)
		return ret;
	/* The core could not read the file. It already tallies the failure
	 * and notices a thread that exited; we only leave the value absent
	 * (never 0: absent means "not measured"). */
	if (status->err)
		return 0;
	uint64_t v;
	ret = parse_vcsw(status->data, status->len, &v);
	if (ret == -ENOENT) {
		h->api->summary_add(h->ctx, h->sum_no_vcsw, 1);
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
	.thread_files = thread_files,
	.init = hello_init,
	.fini = hello_fini,
	.host = hello_host,
	.thread = hello_thread,
};
