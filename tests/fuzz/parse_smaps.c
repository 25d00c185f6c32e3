/* SPDX-License-Identifier: MIT */
/* smaps's parsers: smaps_rollup, statm, and its size option syntax. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "smaps_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct ctp_smaps_rollup sr;
	struct ctp_statm sm;
	char *z = malloc(size + 1);
	uint64_t v;

	ctp_parse_smaps_rollup(s, size, &sr);
	ctp_parse_statm(s, size, &sm);
	if (z) {
		memcpy(z, data, size);
		z[size] = '\0';
		ctp_parse_size(z, CTP_SIZE_BYTES, &v);
		ctp_parse_size(z, CTP_SIZE_PLAIN, &v);
		free(z);
	}
	return 0;
}
