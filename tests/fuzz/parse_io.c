/* SPDX-License-Identifier: MIT */
/* io's parser: task/<tid>/io. */
#include "fuzz.h"
#include "io_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_io io;

	ctp_parse_io((const char *)data, size, &io);
	return 0;
}
