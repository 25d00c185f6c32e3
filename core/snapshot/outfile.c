/* SPDX-License-Identifier: MIT */
/* Output files that appear whole or not at all (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "filekind.h"

/* The failure's message into t's buffer; returns err. */
static int __attribute__((format(printf, 3, 4)))
fail(struct ctp_outfile *t, int err, const char *fmt, ...)
{
	if (t->msg && t->msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->msg, t->msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* A fresh name `.<base>.tmp.XXXXXX` into name (attempt varies it when no
 * entropy is available yet). */
static int temp_name(const char *base, int attempt, char *name, size_t size)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(rnd)) {
		/* No entropy yet (early boot): O_EXCL (or link's EEXIST)
		 * keeps a guessable name safe, it only costs retries. */
		uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16) ^
			     (uint64_t)attempt * 0x9e3779b97f4a7c15ull;
		memcpy(rnd, &x, sizeof(rnd));
	}
	char sfx[7];
	for (int i = 0; i < 6; i++)
		sfx[i] = set[rnd[i] % (sizeof(set) - 1)];
	sfx[6] = '\0';
	int n = snprintf(name, size, ".%s.tmp.%s", base, sfx);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Create `.<base>.tmp.XXXXXX` next to the target, exclusively. */
static int create_temp(int dirfd, const char *base, char *name, size_t size)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int r = temp_name(base, attempt, name, size);
		if (r < 0)
			return r;
		int fd = openat(dirfd, name,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC,
				0640);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/*
 * Where the bytes go. A stream (stdout, a character device, a FIFO, a
 * socket, an inherited descriptor) is written straight and never replaced;
 * a regular file or a new name gets a file that has no name until it is
 * complete: an O_TMPFILE linked in at the end, or, where the filesystem
 * has no O_TMPFILE, a named `.<base>.tmp.XXXXXX` renamed over the target.
 */

/* Written to directly, whatever is behind it (a regular file there is the
 * shell's redirection). */
int ctp_path_fd(const char *path)
{
	static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
	if (strcmp(path, "/dev/stdin") == 0)
		return STDIN_FILENO;
	if (strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(path, prefixes[i], n) != 0)
			continue;
		uint64_t v;
		if (ctp_parse_u64_str(path + n, &v) < 0 || v > INT_MAX)
			return -1;
		return (int)v;
	}
	return -1;
}

/* Open a stream target: an inherited descriptor (dup'ed), or a character
 * device, FIFO or socket named by path (opened for writing, never
 * truncated or replaced). Returns 0, 1 when path is not a stream (a regular
 * file, or nothing yet), or a negative errno (message in o). */
static int open_stream(struct ctp_outfile *t, const char *path)
{
	struct stat st;
	int fd = ctp_path_fd(path);
	if (strcmp(path, "-") == 0) {
		t->fd = STDOUT_FILENO;
		t->stream = true;
		return 0;
	}
	if (fd >= 0) {
		t->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (t->fd < 0)
			return fail(t, -errno, "%s: %s", path, strerror(errno));
		t->stream = t->close_fd = true;
		return 0;
	}
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 1
				       : fail(t, -errno, "%s: %s", path,
					      strerror(errno));
	if (S_ISREG(st.st_mode))
		return 1;
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode) &&
	    !S_ISSOCK(st.st_mode))
		return fail(t, -EEXIST, "%s: %s: refusing to replace it", path,
			    ctp_file_kind(st.st_mode));
	/* A FIFO blocks here until a reader opens it, as `cat > fifo` does;
	 * SIGINT/SIGTERM interrupt the wait. */
	t->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (t->fd < 0) {
		int e = errno;
		if (e == EINTR) /* SIGINT/SIGTERM while waiting for a reader */
			return fail(t, -ECANCELED, "%s: cancelled", path);
		return fail(t, -e, "%s: %s%s", path, strerror(e),
			    S_ISSOCK(st.st_mode) ? " (a socket cannot be "
						   "opened; use -o - and "
						   "redirect)"
						 : "");
	}
	t->stream = t->close_fd = true;
	return 0;
}

/* Open a nameless file in the target's directory: an O_TMPFILE, else a
 * named temporary file. Returns 0 or a negative errno (message in o). */
static int open_file(struct ctp_outfile *t, const char *path)
{
	const char *slash = strrchr(path, '/');
	t->base = slash ? slash + 1 : path;
	t->dir = !slash		 ? strdup(".")
		 : slash == path ? strdup("/")
				 : strndup(path, (size_t)(slash - path));
	if (!t->dir)
		return fail(t, -ENOMEM, "%s: out of memory", path);
	if (!*t->base || strcmp(t->base, ".") == 0 ||
	    strcmp(t->base, "..") == 0)
		return fail(t, -EISDIR, "%s: not a file name", path);
	t->dirfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0)
		return fail(t, -errno, "%s: %s", t->dir, strerror(errno));
	t->fd = openat(t->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0640);
	if (t->fd >= 0) {
		t->anon = true;
	} else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ||
		   errno == ENOENT) {
		/* No O_TMPFILE on this filesystem (or kernel). */
		t->fd = create_temp(t->dirfd, t->base, t->tmp, sizeof(t->tmp));
		if (t->fd < 0)
			return fail(t, t->fd,
				    "%s: cannot create a temporary file: %s",
				    t->dir, strerror(-t->fd));
		t->have_tmp = true;
	} else {
		return fail(t, -errno, "%s: cannot create a temporary file: %s",
			    t->dir, strerror(errno));
	}
	/* The mode must not depend on the umask. */
	if (fchmod(t->fd, t->mode ? t->mode : 0640) < 0)
		return fail(t, -errno, "%s: chmod: %s", path, strerror(errno));
	return 0;
}

/* Give the O_TMPFILE t->fd the name `name` in t->dirfd. */
static int link_anon(const struct ctp_outfile *t, const char *name)
{
	if (linkat(t->fd, "", t->dirfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EPERM && errno != ENOENT)
		return -errno;
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc link does not
	 * (open(2), O_TMPFILE). */
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->fd);
	return linkat(AT_FDCWD, self, t->dirfd, name, AT_SYMLINK_FOLLOW) == 0
		       ? 0
		       : -errno;
}

/*
 * Put the complete file in place of the target. A new name is linked in
 * directly; an existing target is replaced atomically by renaming a linked
 * temporary name over it (named for an instant only, after the data is
 * durable). rename() replaces a symlink at the target, never follows it.
 */
static int commit_file(struct ctp_outfile *t, const char *path)
{
	if (t->anon) {
		int r = link_anon(t, t->base);
		if (r == 0)
			return 0;
		if (r != -EEXIST)
			return fail(t, r, "%s: link: %s", path, strerror(-r));
		for (int attempt = 0; attempt < 100; attempt++) {
			r = temp_name(t->base, attempt, t->tmp, sizeof(t->tmp));
			if (r == 0)
				r = link_anon(t, t->tmp);
			if (r != -EEXIST)
				break;
		}
		if (r < 0)
			return fail(t, r, "%s: link: %s", path, strerror(-r));
		t->have_tmp = true;
	}
	if (renameat(t->dirfd, t->tmp, t->dirfd, t->base) < 0)
		return fail(t, -errno, "%s: rename: %s", path, strerror(errno));
	t->have_tmp = false;
	return 0;
}

static int open_target(struct ctp_outfile *t, const char *path)
{
	int r = open_stream(t, path);
	return r <= 0 ? r : open_file(t, path);
}

/* Make the written file durable and give it its name. */
static int finish_target(struct ctp_outfile *t, const char *path,
			 const volatile sig_atomic_t *cancel)
{
	if (t->stream)
		return 0;
	if (fsync(t->fd) < 0)
		return fail(t, -errno, "%s: fsync: %s", path, strerror(errno));
	if (cancel && *cancel)
		return fail(t, -ECANCELED, "%s: cancelled", path);
	int r = commit_file(t, path);
	if (r < 0)
		return r;
	if (close(t->fd) < 0) {
		t->fd = -1;
		return fail(t, -errno, "%s: close: %s", path, strerror(errno));
	}
	t->fd = -1;
	if (fsync(t->dirfd) < 0 && errno != EINVAL)
		/* The data is in place; report that it may not be durable. */
		return fail(t, -errno, "%s: fsync: %s", t->dir,
			    strerror(errno));
	return 0;
}

/* Release what open_target took; on failure nothing named of ours stays
 * (an O_TMPFILE vanishes with its descriptor). */
static void close_target(struct ctp_outfile *t)
{
	if (t->fd >= 0 && (!t->stream || t->close_fd))
		close(t->fd);
	if (t->have_tmp)
		unlinkat(t->dirfd, t->tmp, 0);
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t->dir);
}

void ctp_outfile_init(struct ctp_outfile *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = t->dirfd = -1;
}

int ctp_outfile_open(struct ctp_outfile *t, const char *path, char *err,
		     size_t errlen)
{
	t->msg = err;
	t->msglen = errlen;
	return open_target(t, path);
}

int ctp_outfile_commit(struct ctp_outfile *t, const char *path,
		       const volatile sig_atomic_t *cancel, char *err,
		       size_t errlen)
{
	t->msg = err;
	t->msglen = errlen;
	return finish_target(t, path, cancel);
}

void ctp_outfile_close(struct ctp_outfile *t)
{
	close_target(t);
	t->fd = t->dirfd = -1;
	t->dir = NULL;
	t->have_tmp = false;
}
