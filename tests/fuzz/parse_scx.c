/* SPDX-License-Identifier: MIT */
/* sched_ext's parsers: its sysfs files and a task's sched file. */
#include <stdbool.h>

#include "fuzz.h"
#include "scx_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *w;
	uint64_t v;
	size_t n;
	bool b;

	ctp_scx_parse_count(s, size, &v);
	ctp_scx_parse_flag(s, size, &b);
	ctp_scx_parse_line(s, size, &w, &n);
	ctp_scx_parse_task(s, size, &b);
	return 0;
}
