/* SPDX-License-Identifier: MIT */
/* What the snapshot harnesses do with a snapshot the reader accepted. */
#ifndef CTP_FUZZ_SNAP_H
#define CTP_FUZZ_SNAP_H

#include "reader.h"

void ctp_fuzz_exercise(const struct ctp_snap *snap);

#endif
