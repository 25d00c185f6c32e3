/* SPDX-License-Identifier: MIT */
/*
 * Pure parser for /proc/<tgid>/task/<tid>/io (fs/proc/base.c
 * do_io_accounting): seven "key: value" lines, all present whenever the
 * kernel has CONFIG_TASK_IO_ACCOUNTING. No I/O, no allocation, no logging;
 * tested on literal kernel text (tests/test_io_parse.c).
 */
#ifndef CTP_IO_PARSE_H
#define CTP_IO_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* The values, in the kernel's order; bit i of ctp_io.present is value i. */
enum ctp_io_key {
	CTP_IO_RCHAR,
	CTP_IO_WCHAR,
	CTP_IO_SYSCR,
	CTP_IO_SYSCW,
	CTP_IO_READ_BYTES,
	CTP_IO_WRITE_BYTES,
	CTP_IO_CANCELLED_WRITE_BYTES,
	CTP_IO_N
};

#define CTP_IO_ALL ((1u << CTP_IO_N) - 1)

struct ctp_io {
	uint32_t present; /* bit i: v[i] parsed */
	uint64_t v[CTP_IO_N];
};

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
