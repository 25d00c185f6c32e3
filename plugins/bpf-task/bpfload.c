/* The loaders' shared steps and reasons (bpfload.h). */
#include "bpfload.h"

#include "procelf.h"

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

void ctp_bpfload_eperm_why(char *why, size_t whylen)
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

int ctp_bpfload_fail(char *why, size_t whylen, int err, const char *step,
		     const char *needs)
{
	char more[160] = "";
	struct utsname u;

	if (err == -EPERM || err == -EACCES)
		ctp_bpfload_eperm_why(more, sizeof(more));
	else if (needs &&
		 (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
		  err == -ENOENT || err == -ESRCH) &&
		 uname(&u) == 0)
		snprintf(more, sizeof(more), "kernel %s: %s", u.release, needs);
	if (why && whylen)
		snprintf(why, whylen, "%s: %s%s%s", step, strerror(-err),
			 *more ? ": " : "", more);
	return err;
}

int ctp_bpfload_begin(char *why, size_t whylen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		int e = -errno;
		if (why && whylen)
			snprintf(why, whylen,
				 "no kernel BTF (/sys/kernel/btf/vmlinux: %s): "
				 "needs CONFIG_DEBUG_INFO_BTF",
				 strerror(-e));
		return e;
	}
	libbpf_set_print(quiet);
	return 0;
}

int ctp_bpfload_load_attach(struct bpf_object_skeleton *s,
			    const char *attach_step, const char *needs,
			    char *why, size_t whylen)
{
	int r = bpf_object__load_skeleton(s);

	if (r < 0)
		return ctp_bpfload_fail(why, whylen, r,
					"loading the BPF program", needs);
	r = bpf_object__attach_skeleton(s);
	if (r < 0)
		return ctp_bpfload_fail(why, whylen, r, attach_step, needs);
	return 0;
}
