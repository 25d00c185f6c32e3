/* SPDX-License-Identifier: MIT */
/*
 * /proc/<tgid>/task/<tid>/io and /proc/<tgid>/io (fs/proc/base.c
 * do_io_accounting): seven "key: value" lines, all present whenever the
 * kernel has CONFIG_TASK_IO_ACCOUNTING. The lines are listed once, below;
 * the pure parser (no I/O, no allocation, no logging; tested on literal
 * kernel text, tests/test_io_parse.c) and the plugin's fields come from
 * that list.
 */
#ifndef CTP_IO_PARSE_H
#define CTP_IO_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin-util.h"

/*
 * The lines in the kernel's order, one a value: X(ID, key, unit, help of
 * the thread field "io.<key>", what the process field "io.process.<key>"
 * counts, which io.c completes with "by the whole process..."). The parser
 * keeps value CTP_IO_<ID>.
 */
#define CTP_IO_LINES(X)                                                        \
	X(RCHAR, "rchar", BYTES,                                               \
	  "Bytes read by read-like syscalls, page cache hits included (io "    \
	  "rchar)",                                                            \
	  "Bytes read by read-like syscalls, page cache hits included,")       \
	X(WCHAR, "wchar", BYTES,                                               \
	  "Bytes written by write-like syscalls, before the page cache (io "   \
	  "wchar)",                                                            \
	  "Bytes written by write-like syscalls, before the page cache,")      \
	X(SYSCR, "syscr", COUNT, "Read-like syscalls made (io syscr)",         \
	  "Read-like syscalls made")                                           \
	X(SYSCW, "syscw", COUNT, "Write-like syscalls made (io syscw)",        \
	  "Write-like syscalls made")                                          \
	X(READ_BYTES, "read_bytes", BYTES,                                     \
	  "Bytes this thread caused to be read from storage (io read_bytes)",  \
	  "Bytes caused to be read from storage")                              \
	X(WRITE_BYTES, "write_bytes", BYTES,                                   \
	  "Bytes this thread caused to be written to storage (io "             \
	  "write_bytes)",                                                      \
	  "Bytes caused to be written to storage")                             \
	X(CANCELLED_WRITE_BYTES, "cancelled_write_bytes", BYTES,               \
	  "Dirty page-cache bytes this thread dropped before writeback, e.g. " \
	  "by truncating (io cancelled_write_bytes)",                          \
	  "Dirty page-cache bytes dropped before writeback")

/* The values, in the kernel's order; bit i of ctp_io.present is value i. */
enum ctp_io_key {
#define CTP_IO_ID(id, key, unit, help, whole) CTP_IO_##id,
	CTP_IO_LINES(CTP_IO_ID)
#undef CTP_IO_ID
		CTP_IO_N
};

#define CTP_IO_ALL ((1u << CTP_IO_N) - 1)

struct ctp_io {
	uint64_t present; /* bit i: v[i] parsed */
	uint64_t v[CTP_IO_N];
};

/*
 * Where the plugin's fields come from: the thread fields then the process
 * fields, one a value each (the parser reads its lines with the first
 * CTP_IO_N rows). Row i and CTP_IO_N + i are value i.
 */
extern const struct ctp_field_src ctp_io_src[2 * CTP_IO_N];

/* The key of value i as the kernel prints it ("rchar"), NULL past the end. */
const char *ctp_io_key_name(unsigned i);

/*
 * Parse an io file. Each value that parses cleanly is stored and marked
 * present, whatever happens to the others. A key line must be "key:", blanks,
 * then only decimal digits up to the '\n'. Returns 0 when all seven are
 * present and valid; otherwise the first problem: -ENODATA (a key is
 * missing), -EINVAL (garbage), -ERANGE (a value exceeds 64 bits), -EMSGSIZE
 * (a value runs into the end of the buffer without '\n', so a short read
 * may have cut it: it is left absent).
 */
int ctp_parse_io(const char *buf, size_t len, struct ctp_io *out);

#endif
