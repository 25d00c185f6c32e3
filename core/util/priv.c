/* SPDX-License-Identifier: MIT */
/*
 * Least privilege: user switch, capability sets, NoNewPrivs and seccomp
 * (libcap and libseccomp, Debian's). The allow-list of the serving process
 * and the deny-list of the capture child are the two tables below; nothing
 * else in the core names a system call.
 */
#include "priv.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

/*
 * What the serving process calls: libmicrohttpd's listening and
 * per-connection threads (clone is allowed only without namespace flags,
 * below; clone3 answers ENOSYS so glibc falls back to it), GnuTLS
 * (getrandom), the snapshot read from a memfd handed over a socket
 * (recvmsg), zstd and MessagePack (memory only), and record's writer:
 * temporary file, fsync, rename and retention's unlinks, all relative to a
 * directory descriptor. Names this architecture lacks are skipped.
 */
static const char *const serve_allow[] = {
	/* memory */
	"brk",
	"mmap",
	"munmap",
	"mremap",
	"mprotect",
	"madvise",
	/* threads, signals, time */
	"futex",
	"set_robust_list",
	"get_robust_list",
	"rseq",
	"set_tid_address",
	"rt_sigaction",
	"rt_sigprocmask",
	"rt_sigreturn",
	"sigaltstack",
	"rt_sigtimedwait",
	"rt_sigsuspend",
	"alarm",
	"setitimer",
	"getitimer",
	"restart_syscall",
	"exit",
	"exit_group",
	"gettid",
	"getpid",
	"getppid",
	"tgkill",
	"kill",
	"wait4",
	"waitid",
	"sched_yield",
	"sched_getaffinity",
	"clock_gettime",
	"clock_getres",
	"clock_nanosleep",
	"nanosleep",
	"gettimeofday",
	"time",
	"getrusage",
	"prlimit64",
	"getrlimit",
	"uname",
	"sysinfo",
	"getrandom",
	"getuid",
	"geteuid",
	"getgid",
	"getegid",
	"getresuid",
	"getresgid",
	"getgroups",
	"umask",
	/* descriptors and files, relative to directories held open */
	"read",
	"write",
	"readv",
	"writev",
	"pread64",
	"pwrite64",
	"preadv",
	"pwritev",
	"preadv2",
	"pwritev2",
	"close",
	"close_range",
	"dup",
	"dup2",
	"dup3",
	"fcntl",
	"lseek",
	"fstat",
	"newfstatat",
	"statx",
	"fstatfs",
	"openat",
	"getdents64",
	"readlinkat",
	"readlink",
	"access",
	"faccessat",
	"faccessat2",
	"renameat",
	"renameat2",
	"linkat",
	"unlinkat",
	"mkdirat",
	"fsync",
	"fdatasync",
	"ftruncate",
	"fallocate",
	"fchmod",
	"fadvise64",
	"getcwd",
	"pipe2",
	"eventfd2",
	"memfd_create",
	"sendfile",
	/* polling and sockets (socket itself is limited to families below) */
	"poll",
	"ppoll",
	"select",
	"pselect6",
	"epoll_create1",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	"epoll_pwait2",
	"bind",
	"listen",
	"accept",
	"accept4",
	"connect",
	"getsockname",
	"getpeername",
	"setsockopt",
	"getsockopt",
	"sendto",
	"recvfrom",
	"sendmsg",
	"recvmsg",
	"sendmmsg",
	"recvmmsg",
	"shutdown",
	"socketpair",
};

/* Socket families the serving process opens: local (syslog, the capture
 * child's socket) and IP. */
static const int serve_families[] = {AF_UNIX, AF_INET, AF_INET6};

/* ioctl requests it makes: stdio's isatty, non-blocking and close-on-exec
 * toggles, bytes waiting. */
static const unsigned long serve_ioctls[] = {TCGETS, FIONBIO, FIONREAD, FIOCLEX,
					     FIONCLEX};

/* prctl options: thread names, a forked child's parent-death signal. */
static const int serve_prctls[] = {PR_SET_NAME, PR_GET_NAME, PR_SET_PDEATHSIG,
				   PR_GET_PDEATHSIG};

/*
 * What no collector calls and an attacker inside a capture child would
 * want: new programs, mounts and namespaces (clone and unshare with a
 * namespace flag, below), kernel code, other processes' memory written,
 * keys, the clock, reboot.
 */
static const char *const capture_deny[] = {
	"execve",
	"execveat",
	"mount",
	"umount2",
	"move_mount",
	"open_tree",
	"fsopen",
	"fsmount",
	"fsconfig",
	"fspick",
	"pivot_root",
	"chroot",
	"setns",
	"init_module",
	"finit_module",
	"delete_module",
	"kexec_load",
	"kexec_file_load",
	"bpf",
	"perf_event_open",
	"process_vm_writev",
	"add_key",
	"request_key",
	"keyctl",
	"swapon",
	"swapoff",
	"reboot",
	"settimeofday",
	"clock_settime",
	"adjtimex",
	"clock_adjtime",
	"sethostname",
	"setdomainname",
	"acct",
	"quotactl",
	"userfaultfd",
	"iopl",
	"ioperm",
	"lookup_dcookie",
	"open_by_handle_at",
	"name_to_handle_at",
	"mknodat",
	"mknod",
	"pidfd_getfd",
};

/* Namespace flags clone may not carry in either process. */
#define NS_FLAGS                                                               \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |         \
	 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

static int fail(char *why, size_t whylen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t whylen, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (why && whylen)
		vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return err;
}

int ctp_priv_lookup_user(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	char *end;
	if (!name || !*name)
		return -EINVAL;
	errno = 0;
	unsigned long n = strtoul(name, &end, 10);
	if (isdigit((unsigned char)name[0]) && !*end && n < UINT_MAX) {
		if (getpwuid_r((uid_t)n, &pw, buf, sizeof(buf), &res) != 0 ||
		    !res) {
			/* A bare uid with no passwd entry: its own group. */
			*uid = (uid_t)n;
			*gid = (gid_t)n;
			return 0;
		}
	} else if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return -ENOENT;
	*uid = res->pw_uid;
	*gid = res->pw_gid;
	return 0;
}

unsigned ctp_priv_cap_last(void)
{
	return CAP_LAST_CAP;
}

uint64_t ctp_priv_caps_known(uint64_t caps, int kernel_last)
{
	if (kernel_last < 0 || kernel_last >= 63)
		return caps;
	return caps & ((UINT64_C(2) << kernel_last) - 1);
}

int ctp_priv_kernel_cap_last(void)
{
	char buf[16];
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *end;
	long v = strtol(buf, &end, 10);
	return end == buf || v < 0 || v > 63 ? -1 : (int)v;
}

size_t ctp_priv_caps_format(uint64_t caps, char *buf, size_t len)
{
	size_t n = 0;
	if (len)
		buf[0] = '\0';
	if (!caps)
		return (size_t)snprintf(buf, len, "none");
	for (unsigned c = 0; c < 64; c++) {
		if (!(caps >> c & 1))
			continue;
		char *name =
			c <= CAP_LAST_CAP ? cap_to_name((cap_value_t)c) : NULL;
		char one[32];
		snprintf(one, sizeof(one), "%s", name ? name : "");
		cap_free(name);
		if (!one[0] || isdigit((unsigned char)one[0]))
			snprintf(one, sizeof(one), "CAP_%u", c);
		for (char *p = one; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		int w = snprintf(n < len ? buf + n : NULL,
				 n < len ? len - n : 0, "%s%s", n ? "," : "",
				 one);
		n += (size_t)w;
	}
	return n;
}

/* Drop every bounding capability not in keep, where CAP_SETPCAP allows.
 * Returns 0, or -EPERM when it does not (and nothing was dropped). */
static int bound_to(uint64_t keep)
{
	if (!CAP_IS_SUPPORTED(CAP_SETPCAP))
		return -EPERM;
	for (unsigned c = 0; c <= CAP_LAST_CAP; c++) {
		if (keep >> c & 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	}
	return 0;
}

/* The permitted set now holds every capability of caps. */
static bool permitted_has(uint64_t caps)
{
	cap_t cur = cap_get_proc();
	bool ok = cur != NULL;
	for (unsigned c = 0; ok && c <= CAP_LAST_CAP; c++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (caps >> c & 1 &&
		    (cap_get_flag(cur, (cap_value_t)c, CAP_PERMITTED, &v) < 0 ||
		     v != CAP_SET))
			ok = false;
	}
	cap_free(cur);
	return ok;
}

/* Permitted and effective = caps, inheritable empty. */
static int set_caps(uint64_t caps)
{
	cap_t c = cap_init();
	int r = 0;
	if (!c)
		return -errno;
	for (unsigned n = 0; n <= CAP_LAST_CAP; n++) {
		cap_value_t v = (cap_value_t)n;
		if (caps >> n & 1 &&
		    (cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_SET) < 0 ||
		     cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0))
			r = -errno;
	}
	if (!r && cap_set_proc(c) < 0)
		r = -errno;
	cap_free(c);
	return r;
}

/* setgroups, then gid, then uid: all three of each. keep: the permitted
 * set survives the uid change (PR_SET_KEEPCAPS, reset afterwards). */
static int become(uid_t uid, gid_t gid, bool keep, char *why, size_t whylen)
{
	/* The kernel clears the parent-death signal on a change of
	 * credentials: a service's child asked to die with its supervisor
	 * would outlive it (holding the listening socket). Armed again
	 * after the switch. */
	int pdeath = 0;
	if (prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0) < 0)
		pdeath = 0;
	pid_t parent = getppid();
	if (keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return fail(why, whylen, -errno, "PR_SET_KEEPCAPS: %s",
			    strerror(errno));
	if (setgroups(1, &gid) < 0)
		return fail(why, whylen, -errno, "setgroups(%u): %s",
			    (unsigned)gid, strerror(errno));
	if (setresgid(gid, gid, gid) < 0)
		return fail(why, whylen, -errno, "setresgid(%u): %s",
			    (unsigned)gid, strerror(errno));
	if (setresuid(uid, uid, uid) < 0)
		return fail(why, whylen, -errno, "setresuid(%u): %s",
			    (unsigned)uid, strerror(errno));
	if (keep && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return fail(why, whylen, -errno, "PR_SET_KEEPCAPS: %s",
			    strerror(errno));
	uid_t r, e, s;
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid)
		return fail(why, whylen, -EPERM,
			    "uid is not %u after setresuid", (unsigned)uid);
	if (pdeath && prctl(PR_SET_PDEATHSIG, pdeath, 0, 0, 0) < 0)
		return fail(why, whylen, -errno, "PR_SET_PDEATHSIG: %s",
			    strerror(errno));
	/* The parent may have ended while the signal was off. */
	if (pdeath && getppid() != parent)
		return fail(why, whylen, -ESRCH,
			    "the parent ended while switching users");
	return 0;
}

/* Already uid and gid, real, effective and saved: nothing to switch (a
 * service manager started us as the user; setgroups would need
 * CAP_SETGID for nothing). */
static bool already(uid_t uid, gid_t gid)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	return getresuid(&r, &e, &s) == 0 && getresgid(&gr, &ge, &gs) == 0 &&
	       r == uid && e == uid && s == uid && gr == gid && ge == gid &&
	       gs == gid;
}

/* Capability sets, NoNewPrivs and a seccomp filter are each thread's own:
 * set in a process of one thread, every later thread inherits them; set
 * with others running, those keep what they had. 0, or -EBUSY. */
static int single_thread(char *why, size_t whylen)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return fail(why, whylen, -EIO, "/proc/self/status unreadable");
	buf[n] = '\0';
	const char *t = strstr(buf, "\nThreads:");
	if (!t || strtoul(t + 9, NULL, 10) != 1)
		return fail(why, whylen, -EBUSY,
			    "the process has %lu threads: drop privileges "
			    "before starting any",
			    t ? strtoul(t + 9, NULL, 10) : 0ul);
	return 0;
}

/* Rules on argument values: clone without namespace flags, clone3 ENOSYS,
 * and the serving process's socket families, ioctls and prctls. */
static int arg_rules(scmp_filter_ctx ctx, bool serve)
{
	static const uint64_t ns[] = {
		CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
		CLONE_NEWUSER, CLONE_NEWPID,	CLONE_NEWNET};
	/* clone3 passes its flags in memory a filter cannot read: ENOSYS
	 * sends glibc back to clone, whose flags it can. */
	int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
				 0);
	if (!serve) {
		/* unshare stays for the workers' CLONE_FILES (engine.h
		 * private_fds); namespaces go, as with clone. */
		for (size_t i = 0; !r && i < sizeof(ns) / sizeof(ns[0]); i++) {
			r = seccomp_rule_add(
				ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
			if (!r)
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
						     SCMP_SYS(unshare), 1,
						     SCMP_A0(SCMP_CMP_MASKED_EQ,
							     ns[i], ns[i]));
		}
		return r;
	}
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0));
	for (size_t i = 0;
	     !r && i < sizeof(serve_families) / sizeof(serve_families[0]); i++)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)serve_families[i]));
	for (size_t i = 0;
	     !r && i < sizeof(serve_ioctls) / sizeof(serve_ioctls[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					     serve_ioctls[i]));
	for (size_t i = 0;
	     !r && i < sizeof(serve_prctls) / sizeof(serve_prctls[0]); i++)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
			SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)serve_prctls[i]));
	return r;
}

static int load_filter(enum ctp_priv_filter filter, char *why, size_t whylen)
{
	bool serve = filter == CTP_PRIV_FILTER_SERVE;
	bool load = filter == CTP_PRIV_FILTER_CAPTURE_LOAD;
	const char *const *tbl = serve ? serve_allow : capture_deny;
	size_t n = serve ? sizeof(serve_allow) / sizeof(serve_allow[0])
			 : sizeof(capture_deny) / sizeof(capture_deny[0]);
	uint32_t def = serve ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_ALLOW;
	uint32_t act = serve ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPERM);
	int r;
	if (filter == CTP_PRIV_FILTER_NONE)
		return 0;
	scmp_filter_ctx ctx = seccomp_init(def);
	if (!ctx)
		return fail(why, whylen, -ENOMEM, "seccomp_init failed");
	/* Denials reach the kernel log (and audit), so an unlisted call in a
	 * rare path shows by name instead of as a mysterious EPERM. NoNewPrivs
	 * is already set; the attribute only stops libseccomp setting it. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
	if (r == -EOPNOTSUPP || r == -EINVAL)
		r = 0;
	for (size_t i = 0; !r && i < n; i++) {
		int nr = seccomp_syscall_resolve_name(tbl[i]);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue; /* not on this architecture */
		if (load && strcmp(tbl[i], "bpf") == 0)
			continue; /* ctp_priv_end_load narrows it */
		r = seccomp_rule_add(ctx, act, nr, 0);
	}
	if (!r)
		r = arg_rules(ctx, serve);
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0)
		return fail(why, whylen, r, "seccomp filter: %s", strerror(-r));
	return 0;
}

/*
 * bpf() commands a capture child keeps after its plugins' init: they work
 * on descriptors it already holds (maps, links) and make nothing new.
 * Numbers of enum bpf_cmd (uapi, fixed).
 */
static const unsigned bpf_kept[] = {
	1,  /* BPF_MAP_LOOKUP_ELEM */
	2,  /* BPF_MAP_UPDATE_ELEM */
	3,  /* BPF_MAP_DELETE_ELEM */
	4,  /* BPF_MAP_GET_NEXT_KEY */
	10, /* BPF_PROG_TEST_RUN: bpf-task's open-coded pass runs its loaded
	     * syscall program */
	15, /* BPF_OBJ_GET_INFO_BY_FD */
	21, /* BPF_MAP_LOOKUP_AND_DELETE_ELEM */
	24, /* BPF_MAP_LOOKUP_BATCH */
	25, /* BPF_MAP_LOOKUP_AND_DELETE_BATCH */
	26, /* BPF_MAP_UPDATE_BATCH */
	27, /* BPF_MAP_DELETE_BATCH */
	33, /* BPF_ITER_CREATE */
	34, /* BPF_LINK_DETACH */
};

/* EPERM for every bpf() command but bpf_kept[]: each of 0..63 not kept,
 * and any with a bit of 6..31 set (the kernel reads the command as an
 * int: the upper half of the register is ignored, so it is masked off
 * here too). */
static int bpf_rules(scmp_filter_ctx ctx)
{
	int r = 0;
	for (unsigned cmd = 0; !r && cmd < 64; cmd++) {
		bool kept = false;
		for (size_t i = 0; i < sizeof(bpf_kept) / sizeof(bpf_kept[0]);
		     i++)
			kept |= bpf_kept[i] == cmd;
		if (!kept)
			r = seccomp_rule_add(
				ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(bpf), 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, cmd));
	}
	for (unsigned b = 6; !r && b < 32; b++)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(bpf), 1,
			SCMP_A0(SCMP_CMP_MASKED_EQ, 1ull << b, 1ull << b));
	return r;
}

int ctp_priv_end_load(uint64_t drop, char *why, size_t whylen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return fail(why, whylen, -ENOMEM, "seccomp_init failed");
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!r) {
		int l = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
		r = l == -EOPNOTSUPP || l == -EINVAL ? 0 : l;
	}
	if (!r)
		r = bpf_rules(ctx);
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0)
		return fail(why, whylen, r, "seccomp filter after load: %s",
			    strerror(-r));
	cap_t c = cap_get_proc();
	if (!c)
		return fail(why, whylen, -errno, "cap_get_proc: %s",
			    strerror(errno));
	for (unsigned n = 0; !r && n <= CAP_LAST_CAP; n++) {
		cap_value_t v = (cap_value_t)n;
		if (drop >> n & 1 &&
		    (cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) < 0 ||
		     cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_CLEAR) < 0))
			r = -errno;
	}
	if (!r && cap_set_proc(c) < 0)
		r = -errno;
	cap_free(c);
	if (r < 0)
		return fail(why, whylen, r, "dropping capabilities: %s",
			    strerror(-r));
	return single_thread(why, whylen);
}

/* Ambient cleared (the bounding set is the caller's), NoNewPrivs, filter. */
static int seal(enum ctp_priv_filter filter, char *why, size_t whylen)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(why, whylen, -errno, "PR_SET_NO_NEW_PRIVS: %s",
			    strerror(errno));
	return load_filter(filter, why, whylen);
}

int ctp_priv_drop_to_user(const char *user, enum ctp_priv_filter filter,
			  char *why, size_t whylen)
{
	uid_t uid = 0;
	gid_t gid = 0;
	int r = single_thread(why, whylen);
	if (r < 0)
		return r;
	if (user) {
		r = ctp_priv_lookup_user(user, &uid, &gid);
		if (r < 0)
			return fail(why, whylen, r, "no user '%s'", user);
		if (uid == 0)
			return fail(why, whylen, -EINVAL,
				    "user '%s' is root: name an unprivileged "
				    "one",
				    user);
	}
	/* The bounding set first: emptying it needs CAP_SETPCAP, gone after
	 * the uid change. Without it the set stays, which grants nothing
	 * once the other sets are empty and NoNewPrivs holds. */
	(void)bound_to(0);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return fail(why, whylen, -errno, "clearing ambient: %s",
			    strerror(errno));
	if (user && !already(uid, gid) &&
	    (r = become(uid, gid, false, why, whylen)) < 0)
		return r;
	if ((r = set_caps(0)) < 0)
		return fail(why, whylen, r, "clearing capabilities: %s",
			    strerror(-r));
	return seal(filter, why, whylen);
}

int ctp_priv_keep_caps(const char *user, uint64_t caps,
		       enum ctp_priv_filter filter, char *why, size_t whylen)
{
	uid_t uid = 0;
	gid_t gid = 0;
	char names[512];
	int r = single_thread(why, whylen);
	if (r < 0)
		return r;
	if (caps >> CAP_LAST_CAP >> 1) {
		return fail(why, whylen, -EINVAL,
			    "capability bits past CAP_LAST_CAP (%u): 0x%llx",
			    (unsigned)CAP_LAST_CAP, (unsigned long long)caps);
	}
	if (!permitted_has(caps)) {
		ctp_priv_caps_format(caps, names, sizeof(names));
		return fail(why, whylen, -EPERM,
			    "not all of %s are permitted to this process",
			    names);
	}
	if (user && (r = ctp_priv_lookup_user(user, &uid, &gid)) < 0)
		return fail(why, whylen, r, "no user '%s'", user);
	if (user && already(uid, gid))
		user = NULL;
	(void)bound_to(caps);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return fail(why, whylen, -errno, "clearing ambient: %s",
			    strerror(errno));
	/* Keep exactly caps across the uid change (setuid clears the
	 * effective set; the permitted one stays with KEEPCAPS). */
	if ((r = set_caps(caps | (user ? UINT64_C(1) << CAP_SETUID |
						  UINT64_C(1) << CAP_SETGID
				       : 0))) < 0)
		return fail(why, whylen, r, "setting capabilities: %s",
			    strerror(-r));
	if (user && (r = become(uid, gid, true, why, whylen)) < 0)
		return r;
	if ((r = set_caps(caps)) < 0)
		return fail(why, whylen, r, "setting capabilities: %s",
			    strerror(-r));
	return seal(filter, why, whylen);
}
