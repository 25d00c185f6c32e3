/* SPDX-License-Identifier: MIT */
/*
 * Least privilege for the processes of `serve` and `record`: the one that
 * speaks HTTP and encodes runs as an unprivileged user with no capability,
 * NoNewPrivs and a seccomp allow-list (ctp_priv_drop_to_user); the capture
 * child keeps only the capabilities its enabled plugins declare
 * (ctp_priv_keep_caps). Both are one-way: call them in the process that is
 * to be confined, after everything that needs the privilege is open, and
 * before it reads anything untrusted, while it has one thread (capability
 * sets, NoNewPrivs and the filter are per thread; threads started later
 * inherit them): with more, both refuse with -EBUSY. Each returns 0, or a
 * negative errno with a one-line reason in why; on failure the process is in an
 * unknown state between the two and must exit.
 *
 * Capability masks are uint64_t with bit n for capability number n of
 * <linux/capability.h> (CTP_CAP_BIT in <ctprof/plugin.h>).
 */
#ifndef CTP_PRIV_H
#define CTP_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Which seccomp filter to load last. */
enum ctp_priv_filter {
	CTP_PRIV_FILTER_NONE = 0,
	/* The allow-list of a process that serves HTTP (libmicrohttpd's
	 * thread per connection, GnuTLS), reads a memfd, decodes zstd
	 * MessagePack and writes files in a directory it holds open; any other
	 * system call fails with EPERM and is logged by the kernel. */
	CTP_PRIV_FILTER_SERVE = 1,
	/* The capture child's: everything but a deny-list of calls no
	 * collector needs (mount, module and kernel loading, bpf, namespaces,
	 * execve, ...), which fail with EPERM. */
	CTP_PRIV_FILTER_CAPTURE = 2,
	/* The capture child's while its plugins initialize, when one of
	 * them loads BPF programs (it declared CAP_BPF): the same deny-list
	 * with bpf() allowed, narrowed by ctp_priv_end_load() once every
	 * plugin's init returned. */
	CTP_PRIV_FILTER_CAPTURE_LOAD = 3,
};

/* The uid and primary gid of user `name` (a name, or a decimal uid).
 * Returns 0, -ENOENT when there is no such user. */
int ctp_priv_lookup_user(const char *name, uid_t *uid, gid_t *gid);

/*
 * Become `user` (NULL, or the user we already are: stay who we are, as
 * under a unit's User= with AmbientCapabilities=) with no capability left: the
 * bounding set emptied (when CAP_SETPCAP allows; else left, harmless once
 * every other set is empty and NoNewPrivs is set), the ambient set cleared,
 * supplementary groups set to the user's primary group, gid then uid set
 * (real, effective and saved), permitted, effective and inheritable
 * cleared, PR_SET_NO_NEW_PRIVS, then `filter`. Refuses uid 0 as the target
 * (-EINVAL): root without capabilities still owns every root file.
 */
int ctp_priv_drop_to_user(const char *user, enum ctp_priv_filter filter,
			  char *why, size_t whylen);

/*
 * Keep only the capabilities in `caps` (permitted and effective; the
 * inheritable and ambient sets cleared, the bounding set reduced to `caps`
 * when CAP_SETPCAP allows), becoming `user` first when not NULL (with
 * PR_SET_KEEPCAPS, so the kept capabilities survive the uid change), then
 * PR_SET_NO_NEW_PRIVS and `filter`. Returns -EPERM when a capability of
 * `caps` is not in the permitted set now.
 */
int ctp_priv_keep_caps(const char *user, uint64_t caps,
		       enum ctp_priv_filter filter, char *why, size_t whylen);

/*
 * After the plugins' init in a process confined with
 * CTP_PRIV_FILTER_CAPTURE_LOAD: from now on bpf() may only use what init
 * made (map reads and writes, iterator creation, object info, link
 * detach, on descriptors the process holds); loading programs, creating
 * maps, BTF or links, attaching and pinning fail with EPERM, in every
 * thread (a filter stacked on the first). Then the capabilities in
 * `drop` leave the permitted and effective sets (those of this thread:
 * -EBUSY, after the filter, when the process has others). Returns 0 or a
 * negative errno with why set.
 */
int ctp_priv_end_load(uint64_t drop, char *why, size_t whylen);

/* "CAP_SYS_PTRACE,CAP_NET_ADMIN" for a mask ("none" when empty), by
 * ascending number, truncated to len. Returns the length it would have. */
size_t ctp_priv_caps_format(uint64_t caps, char *buf, size_t len);

/* The highest capability number this build knows (CAP_LAST_CAP). */
unsigned ctp_priv_cap_last(void);

/* The highest the running kernel knows (/proc/sys/kernel/cap_last_cap),
 * or -1 when unreadable. */
int ctp_priv_kernel_cap_last(void);

/* caps without the bits past kernel_last (-1: caps as they are): a
 * plugin may declare a capability an older kernel lacks (CAP_BPF and
 * CAP_PERFMON came in 5.8), which no process can then hold; keeping it
 * would refuse the whole set. Pure. */
uint64_t ctp_priv_caps_known(uint64_t caps, int kernel_last);

#endif /* CTP_PRIV_H */
