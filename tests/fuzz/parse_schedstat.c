/* SPDX-License-Identifier: MIT */
/* schedstat's parsers: task/<tid>/schedstat and task/<tid>/sched. */
#include "fuzz.h"
#include "schedstat_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct ctp_schedstat ss;
	struct ctp_sched sc;
	uint64_t v;

	ctp_parse_schedstat(s, size, &ss);
	if (ctp_parse_sched(s, size, &sc) >= 0)
		ctp_sched_voluntary_sleep(&sc, &v);
	return 0;
}
