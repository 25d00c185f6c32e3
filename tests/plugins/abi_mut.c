/* SPDX-License-Identifier: MIT */
/*
 * abi-mut: the test collector of tests/test_mutations.c, which checks
 * rules of the real core that a one-line change would break without any
 * other test noticing. Option `mode` picks what it does:
 *
 *   record (default)  per thread, what its one declared file's slot held
 *                     on entry (err, and the first line of the bytes),
 *                     without ever calling file_get
 *   thief             record, and try set_u64 and set_str with every
 *                     handle 0..CTP_MUT_HANDLES-1 that is not its own:
 *                     the core must refuse another plugin's field
 *   flaky             record, but every other thread call (the 1st,
 *                     3rd, ...) fails with -EIO
 *   vanish            record; a thread named "vanish" renames its own
 *                     task/<tid> directory away (in a fixture copy) and
 *                     returns -ENOENT, one named "enoent" returns -ENOENT
 *                     and stays
 *   opts              host: opt_u64 of every other option, in order
 *
 * Built three times: abi-mut declares the thread file "abi-mut-file";
 * abi-mut-lazy declares "?abi-lazy" and abi-mut-eager "abi-lazy"
 * (ABI_MUT_NAME, ABI_MUT_FILE), so one file is wanted lazily by one plugin
 * and up front by another.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ctprof/plugin.h>

#ifndef ABI_MUT_NAME
#define ABI_MUT_NAME "abi-mut"
#endif
#ifndef ABI_MUT_FILE
#define ABI_MUT_FILE "abi-mut-file"
#endif
#define N(field) ABI_MUT_NAME "." field

#define CTP_MUT_HANDLES 256

enum {
	F_SLOT_ERR,
	F_SLOT,
	F_STOLEN,
	F_CALLS,
	F_OPTS,
	F_N,
};

static const struct ctp_field_desc fields[] = {
	[F_SLOT_ERR] = {.name = N("slot_err"),
			.help = "files[0].err on entry to the thread callback",
			.scope = CTP_SCOPE_THREAD,
			.type = CTP_TYPE_I64,
			.kind = CTP_KIND_CATEGORICAL,
			.rule = CTP_RULE_MODE},
	[F_SLOT] = {.name = N("slot"),
		    .help = "first line of files[0] on entry, when it held "
			    "bytes",
		    .scope = CTP_SCOPE_THREAD,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
	[F_STOLEN] = {.name = N("stolen"),
		      .help = "setter calls on other plugins' fields that the "
			      "core accepted (mode thief)",
		      .scope = CTP_SCOPE_THREAD,
		      .type = CTP_TYPE_U64,
		      .unit = CTP_UNIT_COUNT,
		      .kind = CTP_KIND_COUNTER,
		      .rule = CTP_RULE_SUM},
	[F_CALLS] = {.name = N("calls"),
		     .help = "thread callbacks made, set at finish",
		     .scope = CTP_SCOPE_HOST,
		     .type = CTP_TYPE_U64,
		     .unit = CTP_UNIT_COUNT,
		     .kind = CTP_KIND_COUNTER,
		     .rule = CTP_RULE_SUM},
	[F_OPTS] = {.name = N("opts"),
		    .help = "key=ret[:value] of opt_u64 per option (mode opts)",
		    .scope = CTP_SCOPE_HOST,
		    .type = CTP_TYPE_STRING,
		    .kind = CTP_KIND_CATEGORICAL,
		    .rule = CTP_RULE_MODE},
};

static const char *const thread_files[] = {ABI_MUT_FILE, NULL};

enum mode { M_RECORD, M_THIEF, M_FLAKY, M_VANISH, M_OPTS };

struct state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int h[F_N];
	enum mode mode;
	_Atomic uint64_t calls;
};

static struct state the_state;

static int mut_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		    void **statep)
{
	static const char *const modes[] = {"record", "thief", "flaky",
					    "vanish", "opts"};
	struct state *st = &the_state;
	const char *mode = "record";
	st->ctx = ctx;
	st->api = api;
	for (size_t i = 0; i < F_N; i++)
		st->h[i] = api->field_handle(ctx, i);
	if (api->opt_str(ctx, "mode", &mode) == -EINVAL)
		return -EINVAL;
	size_t m = 0;
	while (m < sizeof(modes) / sizeof(modes[0]) && strcmp(mode, modes[m]))
		m++;
	if (m == sizeof(modes) / sizeof(modes[0])) {
		api->log(ctx, CTP_LOG_ERR, "unknown mode '%s'", mode);
		return -EINVAL;
	}
	st->mode = (enum mode)m;
	*statep = st;
	return 0;
}

/* "key=ret[:value]" for every option but `mode`, space-separated. */
static int mut_host(void *statep, struct ctp_record *rec)
{
	struct state *st = statep;
	const struct ctp_api *api = st->api;
	char buf[1024];
	size_t off = 0;
	if (st->mode != M_OPTS)
		return 0;
	for (size_t i = 0; api->opt_key(st->ctx, i); i++) {
		const char *key = api->opt_key(st->ctx, i);
		uint64_t v = 4242;
		if (strcmp(key, "mode") == 0)
			continue;
		int ret = api->opt_u64(st->ctx, key, &v);
		int n = ret == 0
				? snprintf(buf + off, sizeof(buf) - off,
					   "%s%s=0:%" PRIu64, off ? " " : "",
					   key, v)
				: snprintf(buf + off, sizeof(buf) - off,
					   "%s%s=%d", off ? " " : "", key, ret);
		if (n < 0 || (size_t)n >= sizeof(buf) - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return api->set_str(rec, st->h[F_OPTS], buf, off);
}

static bool own_handle(const struct state *st, int h)
{
	for (size_t i = 0; i < F_N; i++)
		if (st->h[i] == h)
			return true;
	return false;
}

/* Every handle that is not ours, with both setters: none may be taken. */
static int steal(struct state *st, struct ctp_record *rec)
{
	const struct ctp_api *api = st->api;
	uint64_t stolen = 0;
	for (int h = 0; h < CTP_MUT_HANDLES; h++) {
		if (own_handle(st, h))
			continue;
		stolen += api->set_u64(rec, h, 424242) != -EINVAL;
		stolen += api->set_str(rec, h, "stolen", 6) != -EINVAL;
	}
	return api->set_u64(rec, st->h[F_STOLEN], stolen);
}

/* Rename <tgid>/task/<tid> to <tgid>/gone-<tid>: the thread has exited. */
static int vanish(const struct ctp_task *task)
{
	char from[64], to[64];
	snprintf(from, sizeof(from), "%d/task/%d", task->tgid, task->tid);
	snprintf(to, sizeof(to), "%d/gone-%d", task->tgid, task->tid);
	if (renameat(task->proc_fd, from, task->proc_fd, to) < 0)
		return -EPROTO;
	return -ENOENT;
}

static int mut_thread(void *statep, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	struct state *st = statep;
	const struct ctp_api *api = st->api;
	uint64_t n = atomic_fetch_add(&st->calls, 1) + 1;
	if (task->n_files != 1)
		return -EPROTO;
	const struct ctp_file f = task->files[0];
	int ret = api->set_i64(rec, st->h[F_SLOT_ERR], f.err);
	if (ret < 0)
		return ret;
	if (!f.err) {
		const char *nl = memchr(f.data, '\n', f.len);
		ret = api->set_str(rec, st->h[F_SLOT], f.data,
				   nl ? (size_t)(nl - f.data) : f.len);
		if (ret < 0)
			return ret;
	}
	switch (st->mode) {
	case M_THIEF:
		return steal(st, rec);
	case M_FLAKY:
		return n % 2 ? -EIO : 0;
	case M_VANISH:
		if (strcmp(task->comm, "vanish") == 0)
			return vanish(task);
		if (strcmp(task->comm, "enoent") == 0)
			return -ENOENT;
		return 0;
	default:
		return 0;
	}
}

static int mut_finish(void *statep, struct ctp_record *host_rec)
{
	struct state *st = statep;
	return st->api->set_u64(host_rec, st->h[F_CALLS],
				atomic_load(&st->calls));
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = ABI_MUT_NAME,
	.version = "0",
	.description = "test collector for tests/test_mutations.c",
	.flags = CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_FIELDS(fields),
	.thread_files = thread_files,
	.init = mut_init,
	.host = mut_host,
	.thread = mut_thread,
	.finish = mut_finish,
};
