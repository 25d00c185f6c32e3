/* SPDX-License-Identifier: MIT */
/* Reading a small host file (sysfs, procfs, cgroupfs) into a fixed buffer. */
#ifndef CTP_READSMALL_H
#define CTP_READSMALL_H

#include <stddef.h>

/*
 * Read dirfd/path into buf: at most cap - 1 bytes, then a NUL. Returns 0
 * with the byte count in *len, or a negative errno: -EBADF for dirfd < 0,
 * open's error, or read's (psi files say EOPNOTSUPP from read, not open);
 * after a read error *len is what came before it. A file of cap - 1 bytes
 * or more may have been cut: callers that need it whole test
 * *len + 1 >= cap. Not for the per-task walk (the core reads task files).
 */
int ctp_read_small(int dirfd, const char *path, char *buf, size_t cap,
		   size_t *len);

#endif
