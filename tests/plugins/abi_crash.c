/* SPDX-License-Identifier: MIT */
/*
 * abi-crash: a test collector that really crashes, where its options say,
 * for the supervisor's tests (test_abi.c, "crash"): a store through an
 * address the compiler cannot see (SIGSEGV, no sanitizer check on the
 * way), abort() (SIGABRT), or unbounded recursion (SIGSEGV on the guard
 * page: the handler must run on its alternate stack).
 *
 *   where:  init | host | process | thread | cgroup | finish | fini
 *   how:    segv | abort | stack
 *   tid:    the task whose callback crashes (0: the first one)
 *
 * Built twice: as abi-crash and, with CRASH_NAME, as abi-crash2, so that
 * two plugins can crash in one capture. The field abi-crash.calls (host)
 * counts the callbacks that ran, set at finish.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctprof/plugin.h>

#ifndef CRASH_NAME
#define CRASH_NAME "abi-crash"
#endif

static const struct ctp_field_desc fields[] = {
	{.name = CRASH_NAME ".calls",
	 .help = "callbacks that ran, set at finish",
	 .scope = CTP_SCOPE_HOST,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_SUM},
};

static const char *const wheres[] = {"init",   "host",	 "process", "thread",
				     "cgroup", "finish", "fini",    NULL};
static const char *const hows[] = {"segv", "abort", "stack", NULL};

static const struct ctp_option_desc options[] = {
	{.name = "where",
	 .help = "the callback that crashes",
	 .type = CTP_OPT_STRING,
	 .def = "thread",
	 .choices = wheres},
	{.name = "how",
	 .help = "segv, abort or stack (overflow)",
	 .type = CTP_OPT_STRING,
	 .def = "segv",
	 .choices = hows},
	{.name = "tid",
	 .help = "the task whose callback crashes; 0: the first",
	 .type = CTP_OPT_U64,
	 .def = "0"},
	{.name = "address",
	 .help = "where the segv store goes",
	 .type = CTP_OPT_U64,
	 .def = "16"},
};

struct state {
	const struct ctp_api *api;
	int calls_field;
	char where[16], how[16];
	uint64_t tid, address;
	_Atomic uint64_t calls;
};

static struct state the_state;

/* Deeper than any stack: the limit only hides the recursion from the
 * compiler's warning. */
static volatile unsigned depth_limit = ~0u;

static unsigned recurse(volatile char *prev, unsigned depth)
{
	volatile char frame[512];
	if (depth >= depth_limit)
		return 0;
	frame[0] = (char)depth;
	frame[511] = prev ? prev[0] : 0;
	return recurse(frame, depth + 1) + frame[511];
}

/* Crash as `how` says (does not return). */
static void crash(const struct state *st)
{
	if (strcmp(st->how, "abort") == 0)
		abort();
	if (strcmp(st->how, "stack") == 0)
		(void)recurse(NULL, 0);
	*(volatile int *)(uintptr_t)st->address = 1;
}

static void maybe_crash(struct state *st, const char *where, int32_t tid)
{
	atomic_fetch_add(&st->calls, 1);
	if (strcmp(st->where, where) == 0 &&
	    (!st->tid || st->tid == (uint64_t)tid))
		crash(st);
}

static int crash_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **statep)
{
	struct state *st = &the_state;
	const char *s;
	st->api = api;
	st->calls_field = api->field_handle(ctx, 0);
	if (api->opt_str(ctx, "where", &s) < 0 || !s)
		s = "thread";
	snprintf(st->where, sizeof(st->where), "%s", s);
	if (api->opt_str(ctx, "how", &s) < 0 || !s)
		s = "segv";
	snprintf(st->how, sizeof(st->how), "%s", s);
	st->address = 16;
	int r = api->opt_u64(ctx, "tid", &st->tid);
	if (r < 0 && r != -ENOENT)
		return r;
	r = api->opt_u64(ctx, "address", &st->address);
	if (r < 0 && r != -ENOENT)
		return r;
	*statep = st;
	maybe_crash(st, "init", 0);
	return 0;
}

static int crash_host(void *statep, struct ctp_record *rec)
{
	(void)rec;
	maybe_crash(statep, "host", 0);
	return 0;
}

static int crash_process(void *statep, const struct ctp_task *task,
			 struct ctp_record *rec)
{
	(void)rec;
	maybe_crash(statep, "process", task->tgid);
	return 0;
}

static int crash_thread(void *statep, const struct ctp_task *task,
			struct ctp_record *rec)
{
	(void)rec;
	maybe_crash(statep, "thread", task->tid);
	return 0;
}

static int crash_cgroup(void *statep, const struct ctp_cgroup *cg,
			struct ctp_record *rec)
{
	(void)cg;
	(void)rec;
	maybe_crash(statep, "cgroup", 0);
	return 0;
}

static int crash_finish(void *statep, struct ctp_record *host_rec)
{
	struct state *st = statep;
	maybe_crash(st, "finish", 0);
	return st->api->set_u64(host_rec, st->calls_field,
				atomic_load(&st->calls));
}

static void crash_fini(void *statep)
{
	maybe_crash(statep, "fini", 0);
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = CRASH_NAME,
	.version = "0",
	.description = "crashes where its options say (supervisor tests)",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.init = crash_init,
	.host = crash_host,
	.process = crash_process,
	.thread = crash_thread,
	.cgroup = crash_cgroup,
	.finish = crash_finish,
	.fini = crash_fini,
};
