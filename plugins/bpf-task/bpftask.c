/* The iter/task program's user side (bpftask.h): libbpf and a skeleton. */
#include "bpftask.h"

#include "procelf.h"
#include "task_iter.skel.h"

#include <ctprof/plugin-util.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

struct ctp_bpftask {
	struct task_iter_bpf *skel;
	unsigned char *buf; /* the raw stream of the last pass */
	size_t cap;
};

/* libbpf writes its messages to stderr by default; the caller reports the
 * failing step itself. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The first line of a small file, or "" (no allocation). */
static void first_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The value of "Seccomp:" in /proc/self/status: 2 is a filter. */
static int seccomp_mode(void)
{
	char buf[4096], *p;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nSeccomp:");
	return p ? atoi(p + 9) : -1;
}

void ctp_bpftask_eperm_why(char *why, size_t whylen)
{
	char lock[128];

	/* e.g. "none [integrity] confidentiality" */
	first_line("/sys/kernel/security/lockdown", lock, sizeof(lock));
	if (strstr(lock, "[integrity]") || strstr(lock, "[confidentiality]"))
		snprintf(why, whylen, "kernel lockdown is on (%s)", lock);
	else if (!ctp_cap_effective(CAP_SYS_ADMIN) &&
		 (!ctp_cap_effective(CAP_BPF) ||
		  !ctp_cap_effective(CAP_PERFMON)))
		snprintf(why, whylen,
			 "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
	else if (seccomp_mode() == 2)
		snprintf(why, whylen, "bpf() refused by a seccomp filter");
	else
		snprintf(why, whylen,
			 "bpf() refused with the capabilities held (an LSM, "
			 "or kernel.unprivileged_bpf_disabled)");
}

static int fail(char *why, size_t whylen, int err, const char *step)
{
	char more[160] = "";
	struct utsname u;

	if (err == -EPERM || err == -EACCES)
		ctp_bpftask_eperm_why(more, sizeof(more));
	else if ((err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
		  err == -ENOENT || err == -ESRCH) &&
		 uname(&u) == 0)
		snprintf(more, sizeof(more),
			 "kernel %s: the task iterator needs 5.8+, "
			 "CONFIG_DEBUG_INFO_BTF and CONFIG_BPF_SYSCALL",
			 u.release);
	if (why && whylen)
		snprintf(why, whylen, "%s: %s%s%s", step, strerror(-err),
			 *more ? ": " : "", more);
	return err;
}

int ctp_bpftask_open(struct ctp_bpftask **ret, char *why, size_t whylen)
{
	struct ctp_bpftask *b;
	int r;

	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		int e = -errno;
		if (why && whylen)
			snprintf(why, whylen,
				 "no kernel BTF (/sys/kernel/btf/vmlinux: %s): "
				 "needs CONFIG_DEBUG_INFO_BTF",
				 strerror(-e));
		return e;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return fail(why, whylen, -ENOMEM, "allocating");
	libbpf_set_print(quiet);
	b->skel = task_iter_bpf__open();
	if (!b->skel) {
		r = fail(why, whylen, -errno, "opening the BPF object");
		goto out;
	}
	r = task_iter_bpf__load(b->skel);
	if (r < 0) {
		r = fail(why, whylen, r, "loading the BPF program");
		goto out;
	}
	r = task_iter_bpf__attach(b->skel);
	if (r < 0) {
		r = fail(why, whylen, r, "attaching the task iterator");
		goto out;
	}
	*ret = b;
	return 0;
out:
	ctp_bpftask_free(b);
	return r;
}

void ctp_bpftask_free(struct ctp_bpftask *b)
{
	if (!b)
		return;
	task_iter_bpf__destroy(b->skel);
	free(b->buf);
	free(b);
}

/* Read the iterator's whole stream into b->buf; returns its length. */
static ssize_t read_stream(struct ctp_bpftask *b, size_t max_bytes)
{
	int lfd = bpf_link__fd(b->skel->links.ctp_task_rec);
	int fd = bpf_iter_create(lfd);
	size_t len = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	for (;;) {
		/* 32 KiB: the most one read() of an iterator returns. */
		if (len == b->cap &&
		    (r = CTP_GROW(b->buf, b->cap, len + 32768, 32768)) < 0)
			goto out;
		size_t room = b->cap - len;
		if (room > max_bytes + 1 - len)
			room = max_bytes + 1 - len;
		r = read(fd, b->buf + len, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max_bytes) {
			r = -E2BIG;
			goto out;
		}
	}
	r = (ssize_t)len;
out:
	close(fd);
	return r;
}

int ctp_bpftask_pass(struct ctp_bpftask *b, size_t max_bytes,
		     const struct ctp_bpftask_rec **recs)
{
	ssize_t len = read_stream(b, max_bytes);
	struct ctp_bpftask_rec one;
	size_t off = 0, n = 0;
	int r;

	if (len < 0)
		return (int)len;
	/* The stream is whole records of the struct's size back to back, so
	 * once each is checked the buffer itself is the array (malloc's
	 * alignment suits the struct): no second copy of every task. */
	while ((r = ctp_bpftask_rec_next(b->buf, (size_t)len, &off, &one)) == 1)
		n++;
	if (r < 0)
		return r;
	if (n && off != n * sizeof(one))
		return -EBADMSG;
	*recs = (const struct ctp_bpftask_rec *)(const void *)b->buf;
	return (int)n;
}
