/* SPDX-License-Identifier: MIT */
/*
 * The snapshot reader on arbitrary compressed bytes, and what readers do
 * with a snapshot it accepts: read every value of every field, group the
 * threads along each axis and aggregate every field by its rule.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_snap.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_snap *snap;
	char err[512];

	if (ctp_snap_open_buf("fuzz", data, size, 64u << 20, &snap, err,
			      sizeof(err)) == 0) {
		ctp_fuzz_exercise(snap);
		ctp_snap_free(snap);
	}
	return 0;
}
