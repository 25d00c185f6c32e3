/* SPDX-License-Identifier: MIT */
/*
 * abi-good: a well-behaved test collector for tests/test_abi.c. It uses
 * every callback and both kinds of declared file, so the test can check
 * that each reaches the snapshot, and it leaves one value unset on purpose
 * (absent must stay distinguishable from zero).
 *
 * Fixture files (tests/fixtures/abi-proc): task/<tid>/abi-data holds
 * "zero", "absent" or a number; <tgid>/abi-pdata holds a number.
 *
 * task/<tid>/abi-lazy is declared lazily ("?abi-lazy") and gated on a
 * made-up kernel option with file_gate. With option `lazy: fetch` the
 * thread callback fetches it (twice: the bytes must be the same) and
 * records its first line and file_get's return; otherwise it checks the
 * slot says -ENODATA and never fetches. Built a second time as abi-twin
 * (ABI_GOOD_NAME), so two plugins can ask for the same lazy file.
 *
 * With option `hint: TEXT`, finish sets a hint, then replaces it with TEXT
 * (set_hint's last call wins), or clears it when TEXT is "-"; with
 * `hint_captures: N` too, only in the first N captures of the run. With
 * `init_hint: TEXT`, init sets TEXT.
 *
 * Its thread callback sets the cgroup through a string handle
 * (ctp_api.str_intern, set_str_handle, set_str_handles).
 *
 * With option `fail: late`, init registers everything it can (summary
 * counter, file gate, a runtime field, a hint) and then fails: the loader
 * must undo all of it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <ctprof/plugin.h>

#ifndef ABI_GOOD_NAME
#define ABI_GOOD_NAME "abi-good"
#endif
#define N(field) ABI_GOOD_NAME "." field

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
	F_LAZY,
	F_LAZY_ERR,
	F_GATE,
	F_N,
};

static const struct ctp_field_desc fields[] = {
	[F_VALUE] = {.name = N("value"),
		     .help = "number from task/<tid>/abi-data",
		     .scope = CTP_SCOPE_THREAD,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_COUNT,
		     .kind = CTP_KIND_COUNTER,
		     .rule = CTP_RULE_SUM},
	[F_COMM] = {.name = N("comm"),
		    .help = "thread name as handed to the callback",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
	[F_CGROUP] = {.name = N("cgroup"),
		      .help = "cgroup path as handed to the callback",
		      .scope = CTP_SCOPE_THREAD,
		      .type = CTP_TYPE_STRING,
		      .kind = CTP_KIND_CATEGORICAL,
		      .rule = CTP_RULE_MODE},
	[F_PVALUE] = {.name = N("pvalue"),
		      .help = "number from <tgid>/abi-pdata",
		      .scope = CTP_SCOPE_PROCESS,
		      .type = CTP_TYPE_U64,
		      .kind = CTP_KIND_GAUGE,
		      .rule = CTP_RULE_MAX},
	[F_THREADS] = {.name = N("threads"),
		       .help = "thread callbacks made",
		       .scope = CTP_SCOPE_HOST,
		       .type = CTP_TYPE_U64,
		       .unit = CTP_UNIT_COUNT,
		       .kind = CTP_KIND_COUNTER,
		       .rule = CTP_RULE_SUM},
	[F_GREETING] = {.name = N("greeting"),
			.help = "the 'greeting' option",
			.scope = CTP_SCOPE_HOST,
			.type = CTP_TYPE_STRING,
			.kind = CTP_KIND_CATEGORICAL,
			.rule = CTP_RULE_MODE},
	[F_CGLEN] = {.name = N("path_len"),
		     .help = "length of the cgroup path",
		     .scope = CTP_SCOPE_CGROUP,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_BYTES,
		     .kind = CTP_KIND_GAUGE,
		     .rule = CTP_RULE_MAX},
	[F_CPUS] = {.name = N("cpus"),
		    .help = "{0, 65} for tid 100, the empty set otherwise",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_CPUSET,
		    .kind = CTP_KIND_CPUSET,
		    .rule = CTP_RULE_UNION},
	[F_EMPTY] = {.name = N("empty"),
		     .help = "the empty string, passed as (NULL, 0)",
		     .scope = CTP_SCOPE_THREAD,
		     .type = CTP_TYPE_STRING,
		     .kind = CTP_KIND_CATEGORICAL,
		     .rule = CTP_RULE_MODE},
	[F_LAZY] = {.name = N("lazy"),
		    .help = "first line of the lazy task/<tid>/abi-lazy",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
	[F_LAZY_ERR] = {.name = N("lazy_err"),
			.help = "what file_get returned for abi-lazy",
			.scope = CTP_SCOPE_THREAD,
			.type = CTP_TYPE_I64,
			.kind = CTP_KIND_CATEGORICAL,
			.rule = CTP_RULE_MODE},
	[F_GATE] = {.name = N("file_gate"),
		    .help = "file_gate results, init's then host's",
		    .scope = CTP_SCOPE_HOST,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
};

static const char *const thread_files[] = {"abi-data", "?abi-lazy", NULL};
static const char *const process_files[] = {"abi-pdata", NULL};

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h[F_N];
	int sum_threads;
	const char *greeting;
	const char *hint;	/* the `hint` option, NULL when not set */
	uint64_t hint_captures; /* finishes that set it; 0: every one */
	uint64_t finishes;
	int fetch_lazy;
	char gates[128]; /* file_gate results, space-separated */
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

/* Append " <ret>" (no stdio in a plugin that needs none). */
static size_t gate_result(char *out, size_t cap, int ret)
{
	char digits[12];
	size_t n = 0, len = 0;
	unsigned v = ret < 0 ? (unsigned)-ret : (unsigned)ret;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (cap < n + 3)
		return 0;
	out[len++] = ' ';
	if (ret < 0)
		out[len++] = '-';
	while (n)
		out[len++] = digits[--n];
	out[len] = '\0';
	return len;
}

static int good_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **statep)
{
	/* Everything used below is in ABI 1's first table; a plugin using a
	 * later member would test CTP_HAS(api, struct ctp_api, member). */
	if (!CTP_HAS(api, struct ctp_api, roots))
		return -ENOTSUP;
	for (size_t i = 0; api->opt_key(ctx, i); i++) {
		if (strcmp(api->opt_key(ctx, i), "greeting") != 0 &&
		    strcmp(api->opt_key(ctx, i), "lazy") != 0 &&
		    strcmp(api->opt_key(ctx, i), "hint") != 0 &&
		    strcmp(api->opt_key(ctx, i), "hint_captures") != 0 &&
		    strcmp(api->opt_key(ctx, i), "init_hint") != 0 &&
		    strcmp(api->opt_key(ctx, i), "fail") != 0) {
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
	if (api->opt_str(ctx, "hint", &st->hint) < 0)
		st->hint = NULL;
	const char *text;
	if (api->opt_str(ctx, "hint_captures", &text) == 0 &&
	    parse_u64(text, strlen(text), &st->hint_captures) < 0) {
		free(st);
		return -EINVAL;
	}
	if (api->opt_str(ctx, "init_hint", &text) == 0 &&
	    CTP_HAS(api, struct ctp_api, set_hint))
		api->set_hint(ctx, text);
	const char *lazy;
	if (api->opt_str(ctx, "lazy", &lazy) == 0)
		st->fetch_lazy = strcmp(lazy, "fetch") == 0;
	if (CTP_HAS(api, struct ctp_api, file_gate)) {
		/* The gate, again with the '?', then each refusal. */
		static const char *const calls[][2] = {
			{"abi-lazy", "CONFIG_ABI_LAZY"},
			{"?abi-lazy", "CONFIG_ABI_LAZY"},
			{"abi-nope", "CONFIG_ABI_LAZY"},
			{"abi-lazy", "config_abi_lazy"},
			{"abi-lazy", "CONFIG_OTHER"},
			{"abi-pdata", "CONFIG_"},
		};
		size_t off = 0;
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			off += gate_result(
				st->gates + off, sizeof(st->gates) - off,
				api->file_gate(ctx, calls[i][0], calls[i][1]));
	}
	const char *fail;
	if (api->opt_str(ctx, "fail", &fail) == 0 &&
	    strcmp(fail, "late") == 0) {
		static const struct ctp_field_desc late = {
			.name = ABI_GOOD_NAME ".late",
			.help = "registered by an init that then fails",
			.scope = CTP_SCOPE_THREAD,
			.type = CTP_TYPE_U64,
			.unit = CTP_UNIT_COUNT,
			.kind = CTP_KIND_GAUGE,
			.rule = CTP_RULE_MAX};
		api->field_register(ctx, &late);
		if (CTP_HAS(api, struct ctp_api, set_hint))
			api->set_hint(ctx, "a hint from a failed init");
		free(st);
		return -EINVAL;
	}
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
	const struct ctp_api *api = st->api;
	if (CTP_HAS(api, struct ctp_api, file_gate)) {
		/* Too late: only init may gate. */
		size_t off = strlen(st->gates);
		gate_result(
			st->gates + off, sizeof(st->gates) - off,
			api->file_gate(st->ctx, "abi-lazy", "CONFIG_ABI_LAZY"));
		int ret = api->set_str(rec, st->h[F_GATE], st->gates + 1,
				       strlen(st->gates + 1));
		if (ret < 0)
			return ret;
	}
	if (!st->greeting)
		return 0;
	return api->set_str(rec, st->h[F_GREETING], st->greeting,
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

/*
 * The lazy file: untouched until fetched (unless another plugin fetched it
 * for this task already: then the slot holds those bytes), then the same
 * bytes each time.
 */
static int lazy_file(struct state *st, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	const struct ctp_api *api = st->api;
	const struct ctp_file slot = task->files[1], *a, *b;
	bool untouched = slot.err == -ENODATA && !slot.data;
	if (!st->fetch_lazy)
		return untouched ? 0 : -EPROTO;
	int ret = api->file_get(task, 1, &a);
	if (api->set_i64(rec, st->h[F_LAZY_ERR], ret) < 0)
		return -EPROTO;
	if (!untouched &&
	    (slot.err != a->err || slot.len != a->len || slot.data != a->data))
		return -EPROTO;
	if (ret < 0)
		return a->err == ret && !a->data ? 0 : -EPROTO;
	const char *data = a->data;
	size_t len = a->len;
	if (api->file_get(task, 1, &b) != 0 || b->len != len ||
	    memcmp(b->data, data, len) != 0)
		return -EPROTO;
	const char *nl = memchr(data, '\n', len);
	return api->set_str(rec, st->h[F_LAZY], data,
			    nl ? (size_t)(nl - data) : len);
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
	if (task->n_files != 2)
		return -EPROTO;
	/* Without CTP_PLUGIN_NO_THREAD_DIR the core opens each thread's
	 * directory for it. */
	if (task->dirfd < 0)
		return -EBADF;
	ret = lazy_file(st, task, rec);
	if (ret < 0)
		return ret;
	ret = api->set_str(rec, st->h[F_COMM], task->comm, strlen(task->comm));
	if (ret < 0)
		return ret;
	/* The cgroup through a string handle (ctp_api.str_intern): the same
	 * value as set_str's. A handle of another capture's pool, a number
	 * field and bytes with a NUL are refused. */
	int64_t hs =
		api->str_intern(st->ctx, task->cgroup, strlen(task->cgroup));
	if (hs < 0)
		return (int)hs;
	if (api->set_str_handle(rec, st->h[F_CGROUP],
				hs ^ (INT64_C(1) << 40)) != -ESTALE ||
	    api->set_str_handle(rec, st->h[F_VALUE], hs) != -EINVAL ||
	    api->str_intern(st->ctx, "a\0b", 3) != -EINVAL)
		return -EPROTO;
	/* Several at once (set_str_handles), on odd threads: every cell it
	 * can set is set (the third), the first failure returned. */
	int fs[3] = {st->h[F_VALUE], st->h[F_CGROUP], st->h[F_CGROUP]};
	int64_t hv[3] = {hs, hs ^ (INT64_C(1) << 40), hs};
	if (api->set_str_handles(rec, fs + 1, hv + 1, 1) != -ESTALE ||
	    api->set_str_handles(rec, NULL, NULL, 1) != -EINVAL ||
	    api->set_str_handles(rec, NULL, NULL, 0) != 0)
		return -EPROTO;
	if (task->tid % 2)
		ret = api->set_str_handles(rec, fs, hv, 3) == -EINVAL ? 0
								      : -EPROTO;
	else
		ret = api->set_str_handle(rec, st->h[F_CGROUP], hs);
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
	const struct ctp_api *api = st->api;
	st->finishes++;
	if (st->hint && CTP_HAS(api, struct ctp_api, set_hint) &&
	    (!st->hint_captures || st->finishes <= st->hint_captures)) {
		api->set_hint(st->ctx, "a hint the next call replaces");
		api->set_hint(st->ctx,
			      strcmp(st->hint, "-") == 0 ? NULL : st->hint);
	}
	return st->api->set_u64(host_rec, st->h[F_THREADS],
				atomic_load(&st->threads));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = ABI_GOOD_NAME,
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
