/* SPDX-License-Identifier: MIT */
/* See readsmall.h. */
#include "readsmall.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ctp_read_small(int dirfd, const char *path, char *buf, size_t cap,
		   size_t *len)
{
	size_t off = 0;
	int fd, err = 0;

	*len = 0;
	if (dirfd < 0)
		return -EBADF;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	while (off + 1 < cap) {
		ssize_t n = read(fd, buf + off, cap - 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*len = off;
	return err;
}
