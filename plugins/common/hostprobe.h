/* SPDX-License-Identifier: MIT */
/*
 * Host accounting probes shared by the in-tree plugins (static library
 * ctp_hostprobe, linked into taskstats.so and host-context.so; never
 * exported from a plugin):
 *
 *   - the delay-accounting state, from <proc>/sys/kernel/task_delayacct;
 *   - kernel config symbols, from <proc>/config.gz (zlib), in particular
 *     CONFIG_TASK_XACCT;
 *   - the reduction of both to "which taskstats families are measured".
 *
 * Each probe is a pure parser over bytes (tested on literal text) plus a
 * thin reader that takes the proc root directory fd, so fixture trees work.
 * Functions that can fail return >= 0 or a negative errno.
 */
#ifndef CTP_HOSTPROBE_H
#define CTP_HOSTPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Delay accounting ---------------------------------------------------- */

/*
 * Build and runtime state of delay accounting. The sysctl exists only when
 * the kernel has CONFIG_TASK_DELAY_ACCT (kernel/delayacct.c registers it),
 * so a missing file means "not built in".
 */
enum ctp_delayacct_state {
	CTP_DELAYACCT_CONFIG_OFF = 1,  /* no sysctl: not built in */
	CTP_DELAYACCT_RUNTIME_OFF = 2, /* built in, kernel.task_delayacct=0 */
	CTP_DELAYACCT_ON = 3,	       /* built in and on */
};

/* "config-off", "runtime-off", "on"; "unknown" for any other value. */
const char *ctp_delayacct_state_name(int state);

/*
 * Classify the text of /proc/sys/kernel/task_delayacct: "1" (surrounding
 * blanks and newlines ignored) is on, any other present text is runtime-off
 * (the kernel prints "0" or "1"). Returns 0, or -ENODATA for an empty
 * buffer (then *out is untouched).
 */
int ctp_parse_delayacct(const char *buf, size_t len,
			enum ctp_delayacct_state *out);

/*
 * Read <proc root>/sys/kernel/task_delayacct. A missing file (ENOENT) is a
 * result: *out = CONFIG_OFF and 0 is returned. Any other failure returns
 * its negative errno with *out = CONFIG_OFF, so a caller that ignores the
 * error never claims a delay family is measured.
 */
int ctp_probe_delayacct(int proc_fd, enum ctp_delayacct_state *out);

/* ---- Kernel config ------------------------------------------------------- */

enum ctp_kconfig_value {
	CTP_KCONFIG_ABSENT = 0,	 /* the symbol is not in the text */
	CTP_KCONFIG_NOT_SET = 1, /* "# CONFIG_X is not set" (or "=n") */
	CTP_KCONFIG_YES = 2,	 /* "CONFIG_X=y" */
	CTP_KCONFIG_MODULE = 3,	 /* "CONFIG_X=m" */
	CTP_KCONFIG_OTHER = 4,	 /* any other value ("=0x10", "=\"...\"") */
};

/*
 * Look up `sym` (the full name, "CONFIG_TASK_XACCT") in kconfig text. Lines
 * are compared whole after trimming blanks, so a symbol that merely starts
 * with `sym` never matches. The first line naming the symbol wins. When val
 * is not NULL it receives the text after '=' (for YES/MODULE/OTHER), not
 * NUL-terminated, length in *vlen. Never fails.
 */
enum ctp_kconfig_value ctp_kconfig_lookup(const char *buf, size_t len,
					  const char *sym, const char **val,
					  size_t *vlen);

/*
 * Inflate a gzip stream (one member, as /proc/config.gz) into a malloc'ed,
 * NUL-terminated buffer the caller frees. Returns 0 and *out, *out_len; or
 * -EBADMSG (not gzip, corrupt, or truncated), -EFBIG (inflates past
 * max_out bytes), -ENOMEM. *out is untouched on failure.
 */
int ctp_gunzip(const void *gz, size_t len, size_t max_out, char **out,
	       size_t *out_len);

/* Largest kernel config ctp_read_kconfig() inflates (a few hundred KiB in
 * practice). */
#define CTP_KCONFIG_MAX_BYTES (16u << 20)

/*
 * Read and inflate <proc root>/config.gz (CONFIG_IKCONFIG_PROC). Returns 0
 * and a malloc'ed NUL-terminated text the caller frees, or the negative
 * errno of the open/read (-ENOENT when the kernel does not expose it) or of
 * ctp_gunzip().
 */
int ctp_read_kconfig(int proc_fd, char **text, size_t *len);

/* ---- Extended accounting ------------------------------------------------- */

/* Build state of CONFIG_TASK_XACCT (no runtime toggle exists). */
enum ctp_xacct_state {
	CTP_XACCT_UNKNOWN = 0, /* config not exposed, unreadable, or silent */
	CTP_XACCT_ON = 1,
	CTP_XACCT_OFF = 2,
};

/* "unknown", "on", "off". */
const char *ctp_xacct_state_name(int state);

/* From kconfig text: =y (or =m) on, "is not set" off, else unknown. */
enum ctp_xacct_state ctp_parse_kconfig_xacct(const char *buf, size_t len);

/*
 * Probe CONFIG_TASK_XACCT from <proc root>/config.gz. Always sets *out
 * (UNKNOWN when the file cannot be read or inflated) and returns 0, or the
 * negative errno of that failure so a caller may log why it is unknown.
 */
int ctp_probe_xacct(int proc_fd, enum ctp_xacct_state *out);

/* ---- What taskstats measures --------------------------------------------- */

/*
 * Which taskstats field families carry measurements on this host:
 *   cpu_delay    the cpu family is filled from sched_info whenever delay
 *                accounting is built in, whatever the runtime toggle;
 *   delay_block  blkio, swapin, freepages, thrashing, compact, wpcopy and
 *                irq are charged only while kernel.task_delayacct is on;
 *   xacct        hiwater_rss/hiwater_vm need CONFIG_TASK_XACCT; an unknown
 *                config counts as on, so a host that hides its config never
 *                gets a false "not measured".
 */
struct ctp_taskstats_active {
	bool cpu_delay;
	bool delay_block;
	bool xacct;
};

struct ctp_taskstats_active
ctp_taskstats_active(enum ctp_delayacct_state delayacct,
		     enum ctp_xacct_state xacct);

#endif
