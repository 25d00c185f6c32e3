/* SPDX-License-Identifier: MIT */
#include "statedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

int ctp_statedir_path(const char *opt, char *path, size_t len, const char **why)
{
	const char *xdg;
	int n;

	if (!opt || !strcmp(opt, "auto")) {
		if (geteuid() == 0)
			n = snprintf(path, len, "/run/ctprof-core");
		else if ((xdg = getenv("XDG_RUNTIME_DIR")) && xdg[0] == '/')
			n = snprintf(path, len, "%s/ctprof-core", xdg);
		else {
			*why = "not root and no XDG_RUNTIME_DIR";
			return -ENOENT;
		}
	} else if (!strcmp(opt, "off")) {
		*why = "off";
		return -ENOENT;
	} else {
		n = snprintf(path, len, "%s", opt);
	}
	if (n < 0 || (size_t)n >= len) {
		*why = "its path is too long";
		return -ENOENT;
	}
	return 0;
}

int ctp_statedir_check(const char *option, const char *value, char *why,
		       size_t whylen)
{
	if (!strcmp(value, "auto") || !strcmp(value, "off"))
		return 0;
	if (value[0] != '/' || strlen(value) > 4000) {
		snprintf(why, whylen,
			 "%s is \"auto\", \"off\" or an absolute directory, "
			 "not \"%.64s\"",
			 option, value);
		return -EINVAL;
	}
	return 0;
}

int ctp_statedir_open(const char *path, int *dirfd, char *why, size_t whylen)
{
	struct stat sb;
	int fd, r;

	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(why, whylen, "cannot make %s: %s", path, strerror(-r));
		return r;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &sb) < 0 || !S_ISDIR(sb.st_mode) ||
	    sb.st_uid != geteuid() || (sb.st_mode & 022)) {
		snprintf(why, whylen,
			 "%s is not a directory of uid %u writable by it alone",
			 path, (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	*dirfd = fd;
	return 0;
}

int ctp_statedir_open_file(int dirfd, const char *name, struct stat *sb)
{
	int fd = openat(dirfd, name,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, sb) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(sb->st_mode) || sb->st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int ctp_statedir_read_at(int fd, void *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		buf = (char *)buf + r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

/* All of iov[0 .. n) to fd: 0, or a negative errno. iov is not changed. */
static int write_all(int fd, const struct iovec *iov, int n)
{
	for (int k = 0; k < n; k++) {
		const char *p = iov[k].iov_base;
		size_t left = iov[k].iov_len;

		while (left) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			p += w;
			left -= (size_t)w;
		}
	}
	return 0;
}

int ctp_statedir_replace(int dirfd, const char *name, const struct iovec *iov,
			 int n, struct stat *sb)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	char tmp[256];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, flags, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a run of the same pid that died mid-write. */
		(void)unlinkat(dirfd, tmp, 0);
		fd = openat(dirfd, tmp, flags, 0600);
	}
	if (fd < 0)
		return -errno;
	r = write_all(fd, iov, n);
	if (r == 0 && fstat(fd, sb) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dirfd, tmp, 0);
	return r;
}

int ctp_statedir_lock(int dirfd, unsigned max_ms)
{
	for (unsigned i = 0;; i++) {
		if (flock(dirfd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (i >= max_ms)
			return -EWOULDBLOCK;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
}

void ctp_statedir_unlock(int dirfd)
{
	(void)flock(dirfd, LOCK_UN);
}
