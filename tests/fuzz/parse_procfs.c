/* SPDX-License-Identifier: MIT */
/* procfs-stat's parsers: stat, status and the cpu list syntax. */
#include "fuzz.h"
#include "procfs_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct ctp_stat st;
	struct ctp_status ss;
	uint64_t words[16];
	size_t n;

	ctp_parse_stat(s, size, &st);
	ctp_parse_status(s, size, &ss);
	ctp_parse_cpulist(s, size, words, 16, &n);
	return 0;
}
