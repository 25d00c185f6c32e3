/* SPDX-License-Identifier: MIT */
/*
 * abi-good: a well-behaved test collector for tests/test_abi.c. It uses
 * every callback and both kinds of declared file, so the test can check
 * that each reaches the snapshot, and it leaves one value unset on purpose
 * (absent must stay distinguishable from zero).
 *
 * Fixture files (tests/fixtures/abi-proc): task/<tid>/abi-data holds
 * "zero", "absent" or a number; <tgid>/abi-pdata holds a number.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ctprof/plugin.h>

enum {
	F_VALUE,
	F_COMM,
	F_CGROUP,
	F_PVALUE,
	F_THREADS,
	F_GREETING,
	F_CGLEN,
	F_CPUS,
	F_EMPTY,
	F_N,
};

static const struct ctp_field_desc fields[] = {
	[F_VALUE] = {.name = "abi-good.value",
		     .help = "number from task/<tid>/abi-data",
		     .scope = CTP_SCOPE_THREAD,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_COUNT,
		     .kind = CTP_KIND_COUNTER,
		     .rule = CTP_RULE_SUM},
	[F_COMM] = {.name = "abi-good.comm",
		    .help = "thread name as handed to the callback",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
	[F_CGROUP] = {.name = "abi-good.cgroup",
		      .help = "cgroup path as handed to the callback",
		      .scope = CTP_SCOPE_THREAD,
		      .type = CTP_TYPE_STRING,
		      .kind = CTP_KIND_CATEGORICAL,
		      .rule = CTP_RULE_MODE},
	[F_PVALUE] = {.name = "abi-good.pvalue",
		      .help = "number from <tgid>/abi-pdata",
		      .scope = CTP_SCOPE_PROCESS,
		      .type = CTP_TYPE_U64,
		      .kind = CTP_KIND_GAUGE,
		      .rule = CTP_RULE_MAX},
	[F_THREADS] = {.name = "abi-good.threads",
		       .help = "thread callbacks made",
		       .scope = CTP_SCOPE_HOST,
		       .type = CTP_TYPE_U64,
		       .unit = CTP_UNIT_COUNT,
		       .kind = CTP_KIND_COUNTER,
		       .rule = CTP_RULE_SUM},
	[F_GREETING] = {.name = "abi-good.greeting",
			.help = "the 'greeting' option",
			.scope = CTP_SCOPE_HOST,
			.type = CTP_TYPE_STRING,
			.kind = CTP_KIND_CATEGORICAL,
			.rule = CTP_RULE_MODE},
	[F_CGLEN] = {.name = "abi-good.path_len",
		     .help = "length of the cgroup path",
		     .scope = CTP_SCOPE_CGROUP,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_BYTES,
		     .kind = CTP_KIND_GAUGE,
		     .rule = CTP_RULE_MAX},
	[F_CPUS] = {.name = "abi-good.cpus",
		    .help = "{0, 65} for tid 100, the empty set otherwise",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_CPUSET,
		    .kind = CTP_KIND_CPUSET,
		    .rule = CTP_RULE_UNION},
	[F_EMPTY] = {.name = "abi-good.empty",
		     .help = "the empty string, passed as (NULL, 0)",
		     .scope = CTP_SCOPE_THREAD,
		     .type = CTP_TYPE_STRING,
		     .kind = CTP_KIND_CATEGORICAL,
		     .rule = CTP_RULE_MODE},
};

static const char *const thread_files[] = {"abi-data", NULL};
static const char *const process_files[] = {"abi-pdata", NULL};

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h[F_N];
	int sum_threads;
	const char *greeting;
	_Atomic uint64_t threads;
};

/* Parse a decimal number ending at NUL or newline. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0 || (i < len && s[i] != '\n'))
		return -EINVAL;
	*out = v;
	return 0;
}

static int good_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **statep)
{
	/* Everything used below is in ABI 1's first table; a plugin using a
	 * later member would test CTP_HAS(api, struct ctp_api, member). */
	if (!CTP_HAS(api, struct ctp_api, roots))
		return -ENOTSUP;
	for (size_t i = 0; api->opt_key(ctx, i); i++) {
		if (strcmp(api->opt_key(ctx, i), "greeting") != 0) {
			api->log(ctx, CTP_LOG_ERR, "unknown option '%s'",
				 api->opt_key(ctx, i));
			return -EINVAL;
		}
	}
	struct state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	for (size_t i = 0; i < F_N; i++)
		st->h[i] = api->field_handle(ctx, i);
	st->sum_threads = api->summary_register(ctx, "threads");
	if (api->opt_str(ctx, "greeting", &st->greeting) < 0)
		st->greeting = NULL;
	*statep = st;
	return 0;
}

static void good_fini(void *statep)
{
	free(statep);
}

static int good_host(void *statep, struct ctp_record *rec)
{
	struct state *st = statep;
	if (!st->greeting)
		return 0;
	return st->api->set_str(rec, st->h[F_GREETING], st->greeting,
				strlen(st->greeting));
}

static int good_process(void *statep, const struct ctp_task *task,
			struct ctp_record *rec)
{
	struct state *st = statep;
	const struct ctp_file *f = &task->files[0];
	uint64_t v;
	if (task->n_files != 1)
		return -EPROTO;
	if (f->err)
		return 0;
	if (parse_u64(f->data, f->len, &v) < 0)
		return -EINVAL;
	return st->api->set_u64(rec, st->h[F_PVALUE], v);
}

static int good_thread(void *statep, const struct ctp_task *task,
		       struct ctp_record *rec)
{
	struct state *st = statep;
	const struct ctp_api *api = st->api;
	const struct ctp_file *f = &task->files[0];
	int ret;

	atomic_fetch_add(&st->threads, 1);
	api->summary_add(st->ctx, st->sum_threads, 1);
	if (task->n_files != 1)
		return -EPROTO;
	ret = api->set_str(rec, st->h[F_COMM], task->comm, strlen(task->comm));
	if (ret < 0)
		return ret;
	ret = api->set_str(rec, st->h[F_CGROUP], task->cgroup,
			   strlen(task->cgroup));
	if (ret < 0)
		return ret;
	/* Empty values given as NULL pointers are legal (and present). */
	ret = api->set_str(rec, st->h[F_EMPTY], NULL, 0);
	if (ret < 0)
		return ret;
	if (task->tid == 100) {
		static const uint64_t cpus[] = {1, 2, 0};
		ret = api->set_cpuset(rec, st->h[F_CPUS], cpus, 3);
	} else {
		ret = api->set_cpuset(rec, st->h[F_CPUS], NULL, 0);
	}
	if (ret < 0)
		return ret;
	if (f->err)
		return 0;
	if (f->len >= 4 && memcmp(f->data, "zero", 4) == 0)
		return api->set_u64(rec, st->h[F_VALUE], 0);
	if (f->len >= 6 && memcmp(f->data, "absent", 6) == 0)
		return 0;
	uint64_t v;
	if (parse_u64(f->data, f->len, &v) < 0)
		return -EINVAL;
	return api->set_u64(rec, st->h[F_VALUE], v);
}

static int good_cgroup(void *statep, const struct ctp_cgroup *cg,
		       struct ctp_record *rec)
{
	struct state *st = statep;
	return st->api->set_u64(rec, st->h[F_CGLEN], strlen(cg->path));
}

static int good_finish(void *statep, struct ctp_record *host_rec)
{
	struct state *st = statep;
	return st->api->set_u64(host_rec, st->h[F_THREADS],
				atomic_load(&st->threads));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-good",
	.version = "1.2.3",
	.description = "well-behaved test collector",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.thread_files = thread_files,
	.process_files = process_files,
	.init = good_init,
	.fini = good_fini,
	.host = good_host,
	.process = good_process,
	.thread = good_thread,
	.cgroup = good_cgroup,
	.finish = good_finish,
};
