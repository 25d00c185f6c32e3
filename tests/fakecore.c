/* SPDX-License-Identifier: MIT */
/* See fakecore.h. */
#include <pthread.h>

#include "engine.h"
#include "fakecore.h"

static struct ctp_api core_api;
static pthread_once_t filled = PTHREAD_ONCE_INIT;

static void fill(void)
{
	ctp_api_fill(&core_api);
}

struct ctp_table *fakecore_table(struct ctp_capture *cap, uint8_t scope,
				 uint32_t *ident)
{
	switch (scope) {
	case CTP_SCOPE_HOST:
		*ident = CTP_HOST_IDENT;
		return &cap->host;
	case CTP_SCOPE_CGROUP:
		*ident = CTP_CGROUP_IDENT;
		return &cap->cgroups;
	case CTP_SCOPE_PROCESS:
		*ident = CTP_PROCESS_IDENT;
		return &cap->procs[0];
	default:
		*ident = CTP_THREAD_IDENT;
		return &cap->threads[0];
	}
}

int fakecore_set(struct ctp_capture *cap, uint8_t scope, uint32_t row,
		 int field, uint8_t type, uint64_t v, const void *p, size_t n)
{
	struct ctp_record rec = {
		.cap = cap, .row = row, .scope = scope, .plugin = 0};

	pthread_once(&filled, fill);
	rec.table = fakecore_table(cap, scope, &rec.ident);
	switch (type) {
	case CTP_TYPE_U64:
		return core_api.set_u64(&rec, field, v);
	case CTP_TYPE_I64:
		return core_api.set_i64(&rec, field, (int64_t)v);
	case CTP_TYPE_BOOL:
		return core_api.set_bool(&rec, field, (int)v);
	case CTP_TYPE_CHAR:
		return core_api.set_char(&rec, field, (char)v);
	case CTP_TYPE_STRING:
		return core_api.set_str(&rec, field, p, n);
	case CTP_TYPE_CPUSET:
		return core_api.set_cpuset(&rec, field, p, n);
	default:
		return -EINVAL;
	}
}
