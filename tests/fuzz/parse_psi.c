/* SPDX-License-Identifier: MIT */
/* psi's parser: a pressure file. */
#include "fuzz.h"
#include "psi_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_psi psi;
	const char *p = (const char *)data;
	uint32_t v;

	ctp_parse_psi((const char *)data, size, &psi);
	ctp_psi_parse_avg(&p, (const char *)data + size, &v);
	return 0;
}
