/* SPDX-License-Identifier: MIT */
/* The plugin toolkit's scanners (toolkit/scan.c), which every parser and
 * the core use. */
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size, *ve, *p;
	char *z = malloc(size + 1);
	uint64_t u;
	int64_t i;
	uint32_t pid;

	for (p = s; p < end; p = ctp_next_line(p, end)) {
		const char *q = ctp_skip_blanks(p, end);
		ctp_scan_u64(&q, end, &u);
		q = p;
		ctp_scan_i64(&q, end, &i);
	}
	ctp_kv_find(s, size, "VmRSS", &ve);
	ctp_kv_u64(s, size, "voluntary_ctxt_switches", &u);
	{
		uint32_t ids[64];
		size_t n;

		ctp_parse_id_list(s, size, ids, 64, &n);
		if (n > 64 || ctp_count_lines(s, size) > size)
			abort();
	}
	if (z) {
		memcpy(z, data, size);
		z[size] = '\0';
		ctp_parse_u64_str(z, &u);
		ctp_parse_pid(z, &pid);
		free(z);
	}
	return 0;
}
