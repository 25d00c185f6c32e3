/* SPDX-License-Identifier: MIT */
/*
 * Snapshot writer: serializes a struct ctp_capture as zstd-compressed
 * MessagePack, laid out as docs/FORMAT.md says. Private to the core.
 */
#ifndef CTP_CORE_WRITER_H
#define CTP_CORE_WRITER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * Write `cap` to `path` ("-" = stdout) at zstd level `level`, recording
 * `tool_version` (may be NULL) in the header.
 *
 * The output is streamed: packed MessagePack goes through ZSTD_compressStream2
 * straight to the file, never held whole in memory. A real path is written
 * to a new temporary file `.<base>.tmp.XXXXXX` (mode 0640) in the target's
 * directory, fsync'ed and renamed over the target (a symlink at the target
 * is replaced, never followed), then the directory is fsync'ed.
 *
 * `cancel` (may be NULL) is polled between compressed chunks and before the
 * rename; once it is non-zero the write stops with -ECANCELED.
 *
 * Returns 0 and the compressed size in *bytes_out (may be NULL), or a
 * negative errno with one line in err. On failure no temporary file remains
 * and the target is untouched (with "-", whatever was already written to
 * stdout stays written).
 *
 * The capture must be complete (no worker still writing to it).
 */
int ctp_writer_write(const struct ctp_capture *cap, const char *path, int level,
		     const char *tool_version,
		     const volatile sig_atomic_t *cancel, uint64_t *bytes_out,
		     char *err, size_t errlen);

#endif
