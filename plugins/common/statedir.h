/*
 * A plugin's directory for what it keeps from one run of ctprof-core to the
 * next (bpf-task's times, jemalloc-probe's and appstats' answers about
 * files): /run/ctprof-core for root, $XDG_RUNTIME_DIR/ctprof-core for
 * another user, or a directory the config names. Both are tmpfs on a
 * systemd host: what is kept lives for the boot at most.
 *
 * The directory is this user's alone (made 0700, a directory and not a
 * link, owned by the effective uid, writable by no one else), and every
 * file in it is opened relative to it without following a link, checked to
 * be a regular file of this user, and replaced whole: written to a
 * temporary name and renamed over the old one, so a reader sees the old or
 * the new file, never half of one.
 */
#ifndef CTP_STATEDIR_H
#define CTP_STATEDIR_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

/*
 * The directory an option names: "auto" (or NULL) for the default above,
 * "off" for none, else the option's path. 0 with path filled, or -ENOENT
 * with *why set: off, or not root and no usable XDG_RUNTIME_DIR.
 */
int ctp_statedir_path(const char *opt, char *path, size_t len,
		      const char **why);

/* An option naming a state directory (`option` is its name, for why):
 * "auto", "off" or an absolute path. 0, or -EINVAL with why. */
int ctp_statedir_check(const char *option, const char *value, char *why,
		       size_t whylen);

/* Make (0700) and open path, checked as above: 0 with *dirfd, or a
 * negative errno with why (-EPERM: not a directory of this user alone). */
int ctp_statedir_open(const char *path, int *dirfd, char *why, size_t whylen);

/* File `name` of the directory, for reading: a descriptor with *sb, or a
 * negative errno (-ENOENT: none yet; -EPERM: a link, not a regular file or
 * not this user's). */
int ctp_statedir_open_file(int dirfd, const char *name, struct stat *sb);

/* len bytes at off of fd: 0, or a negative errno (-EIO: the file ended
 * early). */
int ctp_statedir_read_at(int fd, void *buf, size_t len, off_t off);

/* Replace file `name` with the bytes of iov[0 .. n): 0 with *sb the new
 * file's, or a negative errno (the old file left as it was). */
int ctp_statedir_replace(int dirfd, const char *name, const struct iovec *iov,
			 int n, struct stat *sb);

/* An exclusive flock of the directory, waited for max_ms at most: 0, or a
 * negative errno (-EWOULDBLOCK: another run held it all along). */
int ctp_statedir_lock(int dirfd, unsigned max_ms);
void ctp_statedir_unlock(int dirfd);

#endif /* CTP_STATEDIR_H */
