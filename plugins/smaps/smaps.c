/* SPDX-License-Identifier: MIT */
/*
 * smaps: per-process memory breakdown from /proc/<tgid>/smaps_rollup (Rss,
 * Pss, Pss_Anon, Swap, ... and whatever keys a newer kernel adds), one
 * field `smaps.<key in lower case>` per key, in bytes, registered the first
 * time a key is met. Process scope: every thread shares the mm, so the file
 * is read once per process and grouping never multiplies it.
 *
 * smaps_rollup walks every vma under the target's mmap lock and costs
 * roughly 9 ms of CPU per GB resident, so it is declared lazily and read
 * only after the cheap statm says the process is worth it:
 *
 *   max_rss_bytes   skip a process whose resident size (statm) exceeds
 *                   this; counted in skipped_rss. Default 16GiB.
 *   time_budget_ms  CPU time, summed over workers, the plugin may spend
 *                   on smaps_rollup per snapshot; once spent, the rest are
 *                   skipped and counted in skipped_budget. Default 300.
 *
 * A process whose smaps_rollup is not read keeps statm's resident size as
 * smaps.rss, and smaps.not_read says why (the option that skipped it, or
 * "unreadable"), so readers can say how many processes have no PSS.
 *
 * Both take "unlimited"; max_rss_bytes takes K/M/G/T or KiB/MiB/GiB/TiB
 * (powers of 1024). plugins/smaps/README.md has the arithmetic.
 */
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "ctprof/plugin-util.h"
#include "smaps_parse.h"

#ifndef SMAPS_VERSION
#define SMAPS_VERSION "0"
#endif

#define DEFAULT_MAX_RSS	  (16ull << 30)
#define DEFAULT_BUDGET_MS 300ull
/* Distinct keys remembered; a 6.18 kernel has 22. */
#define KEY_CACHE 128

/* Declaration order is the order of task->files[]. */
enum { PF_STATM, PF_SMAPS, N_PF };
static const char *const process_files[] = {"statm", "?smaps_rollup", NULL};

/* The static field: why a process's smaps_rollup was not read. */
enum { F_NOT_READ, N_FIELDS };
static const struct ctp_field_desc fields[N_FIELDS] = {
	[F_NOT_READ] = CTP_FIELD_LABEL(
		"smaps.not_read", PROCESS,
		"why smaps_rollup was not read: max_rss_bytes (resident size "
		"above it), time_budget_ms (the snapshot's budget was spent) "
		"or unreadable; smaps.rss is then statm's resident size and "
		"the other smaps fields are absent"),
};

/* smaps.not_read's values. */
enum { WHY_MAX_RSS, WHY_BUDGET, WHY_UNREADABLE };
static const char *const why_text[] = {
	[WHY_MAX_RSS] = "max_rss_bytes",
	[WHY_BUDGET] = "time_budget_ms",
	[WHY_UNREADABLE] = "unreadable",
};

enum {
	C_SKIPPED_RSS,
	C_SKIPPED_BUDGET,
	C_NO_MM,
	C_STATM_PARSE,
	C_PARSE,
	C_KEYS_DROPPED,
	C_READ_US,
	C_READ_WALL_US,
	N_COUNTERS
};
static const char *const counter_names[N_COUNTERS] = {
	[C_SKIPPED_RSS] = "skipped_rss",
	[C_SKIPPED_BUDGET] = "skipped_budget",
	[C_NO_MM] = "no_mm",
	[C_STATM_PARSE] = "statm_parse_errors",
	[C_PARSE] = "parse_errors",
	[C_KEYS_DROPPED] = "keys_dropped",
	[C_READ_US] = "read_us",
	[C_READ_WALL_US] = "read_wall_us",
};

struct smaps_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[N_FIELDS];
	int counter[N_COUNTERS];
	uint64_t max_rss; /* bytes */
	uint64_t page_size;
	/* smaps_rollup's reads, this snapshot (budget.h: CPU time, and the
	 * wall time at CTP_BUDGET_WALL_FACTOR budgets: processes that keep
	 * their mmap locks busy, or a host that gives the reader no CPU,
	 * cannot stretch a capture without bound). */
	struct ctp_budget budget;
	/* Key -> field handle (< 0: registration refused, skip the key). */
	struct ctp_handle_cache keys;
};

static void count(struct smaps_state *st, int c, uint64_t n)
{
	st->api->summary_add(st->ctx, st->counter[c], n);
}

/* The field of a key: "smaps." and the key in lower case, bytes, gauge
 * (ctp_handle_cache_get's reg). */
static int register_key(void *arg, const char *key, size_t key_len)
{
	struct smaps_state *st = arg;
	char name[6 + CTP_SMAPS_KEY_MAX + 1], help[96 + CTP_SMAPS_KEY_MAX];
	struct ctp_field_desc d = {
		.name = name,
		.help = help,
		.scope = CTP_SCOPE_PROCESS,
		.type = CTP_TYPE_U64,
		.unit = CTP_UNIT_BYTES,
		.kind = CTP_KIND_GAUGE,
		.rule = CTP_RULE_MAX,
	};
	size_t i;

	if (key_len > CTP_SMAPS_KEY_MAX) /* the parser's bound */
		return -ENAMETOOLONG;
	memcpy(name, "smaps.", 6);
	for (i = 0; i < key_len; i++) {
		char c = key[i];

		name[6 + i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	name[6 + key_len] = '\0';
	/* The parser allows only [A-Za-z0-9_]; no stdio needed. */
	memcpy(help, "smaps_rollup ", 13);
	memcpy(help + 13, key, key_len);
	strcpy(help + 13 + key_len, ", kB converted to bytes");
	if (key_len == 3 && memcmp(key, "Rss", 3) == 0)
		strcat(help, "; statm's resident size where smaps.not_read "
			     "is set");
	return st->api->field_register(st->ctx, &d);
}

/* Handle of a key's field, registering it the first time; < 0 to skip. */
static int key_handle(struct smaps_state *st, const struct ctp_keyval *kv)
{
	return ctp_handle_cache_get(&st->keys, kv->key, kv->key_len,
				    register_key, st);
}

static int set_rollup(struct smaps_state *st, struct ctp_record *rec,
		      const struct ctp_smaps_rollup *sr)
{
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	uint64_t dropped = sr->dropped;
	size_t i;

	for (i = 0; i < sr->n; i++) {
		int h = key_handle(st, &sr->kv[i]);

		dropped += h < 0;
		ctp_set_u64(&set, h, sr->kv[i].value);
	}
	if (dropped)
		count(st, C_KEYS_DROPPED, dropped);
	return set.err;
}

/*
 * What is left of a process whose smaps_rollup is not read: statm's
 * resident size as smaps.rss (unless it overflowed 64 bits) and why, in
 * smaps.not_read.
 */
static int set_not_read(struct smaps_state *st, struct ctp_record *rec,
			const struct ctp_statm *sm, int why)
{
	static const struct ctp_keyval rss = {.key = "Rss", .key_len = 3};
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const char *w = why_text[why];
	int h = key_handle(st, &rss);

	if (sm->resident <= UINT64_MAX / st->page_size)
		ctp_set_u64(&set, h, sm->resident * st->page_size);
	ctp_set_str(&set, st->fh[F_NOT_READ], w, strlen(w));
	return set.err;
}

/*
 * Read, parse and record smaps_rollup. The budget meters the worker's CPU
 * time (the kernel's walk of the page tables is system time of the
 * reader), not the wall clock: on a loaded host a read also waits for a
 * CPU and for the target's mmap lock, which costs the host nothing and
 * would spend a wall-clock budget on the load, not on smaps (read_wall_us
 * shows that time).
 */
static int read_rollup(struct smaps_state *st, const struct ctp_task *task,
		       const struct ctp_statm *sm, struct ctp_record *rec)
{
	struct ctp_smaps_rollup sr;
	const char *data;
	size_t len;
	struct ctp_budget_mark m;
	uint64_t dc, dw;
	int ret = 0, r;

	ctp_budget_begin(&m);
	r = ctp_task_fetch(st->api, task, PF_SMAPS, &data, &len);
	if (r == 0) {
		if (ctp_parse_smaps_rollup(data, len, &sr) < 0)
			count(st, C_PARSE, 1);
		ret = set_rollup(st, rec, &sr);
	} else {
		/* Tallied by the core: EACCES (a non-dumpable process),
		 * ENOENT or ESRCH (gone since its statm was read). */
		ret = set_not_read(st, rec, sm, WHY_UNREADABLE);
	}
	ctp_budget_end(&st->budget, &m, &dc, &dw);
	count(st, C_READ_US, dc / 1000);
	count(st, C_READ_WALL_US, dw / 1000);
	return ret;
}

static int smaps_process(void *state, const struct ctp_task *task,
			 struct ctp_record *rec)
{
	struct smaps_state *st = state;
	const char *data;
	size_t len;
	struct ctp_statm sm;
	uint64_t resident;
	int r;

	/* file_get, used for the rollup, needs the task's core member. */
	if (!CTP_HAS(task, struct ctp_task, core) || task->n_files < N_PF)
		return -EPROTO;
	/* Without statm the size is unknown: never risk the costly read. */
	r = ctp_task_file(task, PF_STATM, &data, &len);
	if (r < 0)
		return 0;
	if (ctp_parse_statm(data, len, &sm) < 0) {
		count(st, C_STATM_PARSE, 1);
		return 0;
	}
	/* A kernel thread has no mm: smaps_rollup would fail with ESRCH. */
	if (sm.size == 0) {
		count(st, C_NO_MM, 1);
		return 0;
	}
	resident = sm.resident > UINT64_MAX / st->page_size
			   ? UINT64_MAX
			   : sm.resident * st->page_size;
	if (resident > st->max_rss) {
		count(st, C_SKIPPED_RSS, 1);
		return set_not_read(st, rec, &sm, WHY_MAX_RSS);
	}
	if (!ctp_budget_left(&st->budget, 0)) {
		count(st, C_SKIPPED_BUDGET, 1);
		return set_not_read(st, rec, &sm, WHY_BUDGET);
	}
	return read_rollup(st, task, &sm, rec);
}

/* Called once per snapshot before the walk: a fresh budget. */
static int smaps_host(void *state, struct ctp_record *rec)
{
	struct smaps_state *st = state;

	(void)rec;
	ctp_budget_reset(&st->budget);
	return 0;
}

static int option(struct ctp_ctx *ctx, const struct ctp_api *api,
		  const char *key, enum ctp_size_units units, uint64_t dflt,
		  uint64_t *out)
{
	const char *v;
	int r = api->opt_str(ctx, key, &v);

	if (r == -ENOENT) {
		*out = dflt;
		return 0;
	}
	if (r < 0) {
		api->log(ctx, CTP_LOG_ERR, "option '%s': %s", key,
			 strerror(-r));
		return r;
	}
	r = ctp_parse_size(v, units, out);
	if (r < 0)
		api->log(ctx, CTP_LOG_ERR,
			 "option '%s': '%s' is not %s or \"unlimited\"", key, v,
			 units == CTP_SIZE_BYTES
				 ? "a size (e.g. 16GiB, 512M, 1048576)"
				 : "a whole number");
	return r;
}

static const struct ctp_option_desc options[] = {
	{.name = "max_rss_bytes",
	 .help = "skip smaps_rollup for processes above this RSS: a size "
		 "(16GiB, 512M, 1048576) or unlimited",
	 .type = CTP_OPT_STRING,
	 .def = "16GiB"},
	{.name = "time_budget_ms",
	 .help = "stop reading smaps_rollup after this much CPU time per "
		 "capture: milliseconds or unlimited",
	 .type = CTP_OPT_STRING,
	 .def = "300"},
};

static int parse_options(struct ctp_ctx *ctx, const struct ctp_api *api,
			 struct smaps_state *st)
{
	uint64_t ms;
	int r;

	r = option(ctx, api, "max_rss_bytes", CTP_SIZE_BYTES, DEFAULT_MAX_RSS,
		   &st->max_rss);
	if (r == 0)
		r = option(ctx, api, "time_budget_ms", CTP_SIZE_PLAIN,
			   DEFAULT_BUDGET_MS, &ms);
	if (r < 0)
		return r;
	ctp_budget_init(&st->budget,
			ms >= UINT64_MAX / 1000000 ? UINT64_MAX : ms * 1000000);
	return 0;
}

static void smaps_fini(void *state)
{
	struct smaps_state *st = state;

	if (!st)
		return;
	ctp_handle_cache_done(&st->keys);
	free(st);
}

static int smaps_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **state)
{
	struct smaps_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	ctp_handle_cache_init(&st->keys, KEY_CACHE);
	st->page_size = (uint64_t)getpagesize();
	/* The lazy smaps_rollup needs file_get; the key fields are
	 * registered as the keys appear. */
	r = CTP_ATTACH(ctx, api, CTP_API_THROUGH(file_get), st->fh,
		       st->counter);
	if (r == 0)
		r = parse_options(ctx, api, st);
	if (r < 0) {
		smaps_fini(st);
		return r;
	}
	api->log(ctx, CTP_LOG_DEBUG,
		 "max_rss_bytes %llu, time budget %llu ns, page size %llu",
		 (unsigned long long)st->max_rss,
		 (unsigned long long)st->budget.limit_ns,
		 (unsigned long long)st->page_size);
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "smaps",
	.version = SMAPS_VERSION,
	.description = "Per-process memory breakdown (Rss, Pss, Swap, ...) "
		       "from /proc/<tgid>/smaps_rollup, size- and time-capped",
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_OPTION_TABLE(options),
	CTP_PLUGIN_FIELDS(fields),
	.process_files = process_files,
	.init = smaps_init,
	.fini = smaps_fini,
	.host = smaps_host,
	.process = smaps_process,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities = CTP_CAP_BIT(CAP_SYS_PTRACE),
};
