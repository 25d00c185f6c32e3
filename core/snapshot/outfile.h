/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear whole or not at all, shared by the snapshot
 * writer and the text outputs (export): "-", /dev/stdout, /dev/fd/N and
 * /proc/self/fd/N are written to directly; an existing character device,
 * FIFO or socket is opened and written, never replaced. A regular file or
 * a new name gets a file with no name until it is complete: an O_TMPFILE
 * (mode 0640, or t->mode set before open) in the target's directory, made
 * durable, then linked in as the target, or over an existing target linked to
 * `.<base>.tmp.XXXXXX` and renamed onto it (a symlink at the target is
 * replaced, never followed); the directory is made durable. Without O_TMPFILE
 * the data goes to the named temporary file from the start. Any other existing
 * kind (a directory, a block device) is refused with -EEXIST. Private to the
 * core.
 */
#ifndef CTP_CORE_OUTFILE_H
#define CTP_CORE_OUTFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ctp_outfile {
	int fd; /* write here after open */
	bool stream;
	bool close_fd; /* a stream we opened (not stdout) */
	int dirfd;
	char *dir;
	const char *base;
	bool anon;     /* fd is an O_TMPFILE */
	bool have_tmp; /* tmp names a file of ours to unlink on failure */
	char tmp[512];
	char *msg; /* where failures are said */
	size_t msglen;
	mode_t mode; /* of a new file; 0: 0640 */
};

/* The descriptor of this process a path names ("/dev/stdin",
 * "/dev/stdout", "/dev/stderr", "/dev/fd/N", "/proc/self/fd/N"), else -1. */
int ctp_path_fd(const char *path);

void ctp_outfile_init(struct ctp_outfile *t);
/* Open path for writing as above. Returns 0, or a negative errno with
 * one line in err. */
int ctp_outfile_open(struct ctp_outfile *t, const char *path, char *err,
		     size_t errlen);
/* Make what was written to t->fd durable and give it its name; `cancel`
 * (may be NULL) non-zero before the name is given: -ECANCELED. Returns 0
 * or a negative errno with one line in err. */
int ctp_outfile_commit(struct ctp_outfile *t, const char *path,
		       const volatile sig_atomic_t *cancel, char *err,
		       size_t errlen);
/* Release t; after a failure (or without commit) nothing named of ours
 * stays and the target is untouched. */
void ctp_outfile_close(struct ctp_outfile *t);

#endif
