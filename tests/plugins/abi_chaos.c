/* SPDX-License-Identifier: MIT */
/*
 * abi-chaos: a test collector that misbehaves on a schedule, for the
 * services' chaos tests (test_service.c): in its host callback, the Nth
 * capture of a service (counted in a file, so the count survives the
 * capture process being started again) crashes, hangs, or the plugin
 * keeps memory it never gives back.
 *
 *   counter:      PATH of the count (required)
 *   crash_every:  crash (SIGSEGV) on every Nth capture (0: never)
 *   hang_every:   never return on every Nth capture (0: never)
 *   leak_mib:     MiB kept, and written to, per capture (0: none); a
 *                 failed allocation returns -ENOMEM
 *
 * Built as abi-chaos, abi-chaos2 and abi-chaos3 (CHAOS_NAME), so that one
 * service can hold a crasher, a hanger and a leaker at once. The field
 * <name>.captures is the count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ctprof/plugin.h>

#ifndef CHAOS_NAME
#define CHAOS_NAME "abi-chaos"
#endif

static const struct ctp_field_desc fields[] = {
	{.name = CHAOS_NAME ".captures",
	 .help = "captures this plugin's host callback ran in",
	 .scope = CTP_SCOPE_HOST,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_SUM},
};

static const struct ctp_option_desc options[] = {
	{.name = "counter",
	 .help = "the file counting captures",
	 .type = CTP_OPT_STRING,
	 .def = ""},
	{.name = "crash_every",
	 .help = "crash on every Nth capture",
	 .type = CTP_OPT_U64,
	 .def = "0"},
	{.name = "hang_every",
	 .help = "hang on every Nth capture",
	 .type = CTP_OPT_U64,
	 .def = "0"},
	{.name = "leak_mib",
	 .help = "MiB kept per capture",
	 .type = CTP_OPT_U64,
	 .def = "0"},
};

struct state {
	const struct ctp_api *api;
	int field;
	char counter[4096];
	uint64_t crash_every, hang_every, leak_mib;
};

static struct state the_state;
/* Where the crash stores: an address the compiler cannot see. */
static volatile uintptr_t nowhere = 16;

/* The count of captures so far, this one included. */
static uint64_t count(const struct state *st)
{
	char buf[32] = "";
	uint64_t n = 0;
	int fd = open(st->counter, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	ssize_t got = pread(fd, buf, sizeof(buf) - 1, 0);
	if (got > 0)
		n = strtoull(buf, NULL, 10);
	n++;
	int len =
		snprintf(buf, sizeof(buf), "%020llu\n", (unsigned long long)n);
	if (pwrite(fd, buf, (size_t)len, 0) != len)
		n = 0;
	close(fd);
	return n;
}

static int chaos_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		      void **statep)
{
	struct state *st = &the_state;
	const char *s = NULL;
	st->api = api;
	st->field = api->field_handle(ctx, 0);
	if (api->opt_str(ctx, "counter", &s) < 0 || !s || !*s)
		return -EINVAL;
	snprintf(st->counter, sizeof(st->counter), "%s", s);
	const char *keys[] = {"crash_every", "hang_every", "leak_mib"};
	uint64_t *to[] = {&st->crash_every, &st->hang_every, &st->leak_mib};
	for (int i = 0; i < 3; i++) {
		int r = api->opt_u64(ctx, keys[i], to[i]);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	*statep = st;
	return 0;
}

static int chaos_host(void *statep, struct ctp_record *rec)
{
	struct state *st = statep;
	uint64_t n = count(st);
	if (st->crash_every && n % st->crash_every == 0)
		*(volatile int *)nowhere = 1;
	if (st->hang_every && n % st->hang_every == 0)
		for (;;)
			pause();
	if (st->leak_mib) {
		size_t len = (size_t)st->leak_mib << 20;
		char *p = malloc(len);
		if (!p)
			return -ENOMEM;
		memset(p, 1, len); /* resident, never freed */
	}
	st->api->set_u64(rec, st->field, n);
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = CHAOS_NAME,
	.version = "0",
	.description = "crashes, hangs or leaks on a schedule (service tests)",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	CTP_PLUGIN_OPTION_TABLE(options),
	.init = chaos_init,
	.host = chaos_host,
};
