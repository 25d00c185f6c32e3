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
 * straight to the file, never held whole in memory.
 *
 * Where it goes depends on what `path` is. "-", /dev/stdout, /dev/stderr,
 * /dev/fd/N and /proc/self/fd/N are written to that descriptor directly; an
 * existing character device, FIFO (opening one waits for a reader) or
 * socket is opened and written, never replaced. A regular file or a new
 * name gets a file with no name until it is complete: an O_TMPFILE (mode
 * 0640) in the target's directory, fsync'ed, then linked in as the target,
 * or over an existing target linked to `.<base>.tmp.XXXXXX` and renamed
 * onto it (a symlink at the target is replaced, never followed); the
 * directory is fsync'ed. Where the filesystem has no O_TMPFILE, the data
 * goes to the named temporary file from the start. Any other existing kind
 * (a directory, a block device) is refused with -EEXIST.
 *
 * `cancel` (may be NULL) is polled between compressed chunks and before the
 * file is named; once it is non-zero the write stops with -ECANCELED.
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
