/* SPDX-License-Identifier: MIT */
/* Host files for plugins; see <ctprof/plugin-util.h>. */
#include "ctprof/plugin-util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

int ctp_open_regular(int dirfd, const char *path)
{
	struct stat st = {0};
	int fd = openat(dirfd, path,
			O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return err;
	}
	return fd;
}

/* ctp_open_regular, -EBADF for a root that is not open (-1). */
static int open_root(int dirfd, const char *path)
{
	return dirfd < 0 ? -EBADF : ctp_open_regular(dirfd, path);
}

/* read(2) again after EINTR: the byte count, 0 at the end, or -errno. */
static ssize_t read_retry(int fd, void *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, buf, n);

		if (r >= 0 || errno != EINTR)
			return r < 0 ? -errno : r;
	}
}

int ctp_read_small(int dirfd, const char *path, char *buf, size_t cap,
		   size_t *len)
{
	size_t off = 0;
	int fd, err = 0;

	*len = 0;
	fd = open_root(dirfd, path);
	if (fd < 0)
		return fd;
	while (off + 1 < cap) {
		ssize_t n = read_retry(fd, buf + off, cap - 1 - off);

		if (n <= 0) {
			err = (int)n;
			break;
		}
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*len = off;
	return err;
}

int ctp_read_grow(int dirfd, const char *path, size_t max, char **buf,
		  size_t *cap, size_t *len)
{
	size_t off = 0;
	int fd, err = 0;

	*len = 0;
	fd = open_root(dirfd, path);
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n;

		if (off >= max) {
			err = -EFBIG;
			break;
		}
		if (off + 1 >= *cap) {
			size_t nc = *cap ? *cap * 2 : 65536;
			char *nb;

			if (nc > max + 1)
				nc = max + 1;
			nb = realloc(*buf, nc);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			*buf = nb;
			*cap = nc;
		}
		n = read_retry(fd, *buf + off, *cap - off - 1);
		if (n <= 0) {
			err = (int)n;
			break;
		}
		off += (size_t)n;
	}
	close(fd);
	if (err < 0)
		return err;
	(*buf)[off] = '\0';
	*len = off;
	return 0;
}

bool ctp_proc_is_procfs(int fd)
{
	struct statfs sf;

	return fd >= 0 && fstatfs(fd, &sf) == 0 &&
	       sf.f_type == PROC_SUPER_MAGIC;
}

int ctp_proc_ns_initial(int proc_fd, const char *ns)
{
	/* PROC_PID_INIT_INO, PROC_CGROUP_INIT_INO. */
	static const struct {
		const char *name;
		ino_t ino;
	} init[] = {{"pid", 0xEFFFFFFCu}, {"cgroup", 0xEFFFFFFBu}};
	char path[32];
	struct stat sb;

	for (size_t i = 0; i < sizeof(init) / sizeof(init[0]); i++) {
		if (strcmp(ns, init[i].name) != 0)
			continue;
		snprintf(path, sizeof(path), "self/ns/%s", ns);
		if (fstatat(proc_fd, path, &sb, 0) < 0)
			return -errno;
		return sb.st_ino == init[i].ino;
	}
	return -EINVAL;
}

bool ctp_proc_is_live(int proc_fd)
{
	char buf[32], *end;
	ssize_t n;
	long pid;

	if (!ctp_proc_is_procfs(proc_fd))
		return false;
	n = readlinkat(proc_fd, "self", buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	errno = 0;
	pid = strtol(buf, &end, 10);
	return errno == 0 && *end == '\0' && end != buf &&
	       pid == (long)getpid();
}
