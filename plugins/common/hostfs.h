/* SPDX-License-Identifier: MIT */
/* Host filesystems for plugins: reading a small file (sysfs, procfs,
 * cgroupfs) into a fixed buffer, and telling a live /proc from a tree. */
#ifndef CTP_HOSTFS_H
#define CTP_HOSTFS_H

#include <stdbool.h>
#include <stddef.h>

/* The most a plugin reads of one host file through these helpers and the
 * cgroup plugin's reader; past it the read fails with -EFBIG. */
#define CTP_HOST_READ_MAX (4u << 20)

/*
 * Open dirfd/path to read, never blocking (O_NONBLOCK: a FIFO planted
 * under a fake root must not hang the capture) and only if it is a regular
 * file (-EISDIR for a directory, -EINVAL for a FIFO, device or socket).
 * Returns the descriptor or a negative errno. Every plugin read of a host
 * file (sysfs, procfs, cgroupfs) opens through it.
 */
int ctp_open_regular(int dirfd, const char *path);

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

/*
 * Whether proc_fd is a procfs whose "self" is this process: the running
 * kernel's /proc in our pid namespace, not a fixture tree nor another
 * namespace's mount. Tids (for taskstats queries, ptrace, process_vm_readv)
 * mean something only then.
 */
bool ctp_proc_is_live(int proc_fd);

#endif
