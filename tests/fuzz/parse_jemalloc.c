/* SPDX-License-Identifier: MIT */
/*
 * jemalloc-probe's pure helpers (jep_util.c): /proc/<pid>/maps lines, the
 * TSD symbol and tsd_s member names, and the static-TLS arithmetic of the
 * ptrace fallback on the numbers the input starts with.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "jep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size, *p = s;
	struct ctp_map m;
	uint64_t v[4] = {0}, addr;
	char *z;

	memcpy(v, data, size < sizeof(v) ? size : sizeof(v));
	ctp_jep_tls_x86_64(v[0], v[1], v[2], v[3], &addr);
	ctp_jep_tls_arm64(v[0], v[1], v[2], v[3], &addr);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		ctp_maps_line(p, (size_t)(le - p), &m);
		p = nl ? nl + 1 : end;
	}
	z = malloc(size + 1);
	if (z) {
		memcpy(z, data, size);
		z[size] = '\0';
		ctp_jep_member_kind(z);
		ctp_jep_is_tsd_symbol(z);
		free(z);
	}
	return 0;
}
