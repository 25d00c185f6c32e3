/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers for the sched_ext plugin: the global attributes under
 * /sys/kernel/sched_ext/ (scx_global_attrs[] in kernel/sched/ext.c), the
 * loaded scheduler's root/ops, and the "ext.enabled" line of a task's
 * /proc/<tgid>/task/<tid>/sched. No I/O, no allocation, no logging; tested
 * on literal text (tests/test_scx_parse.c).
 */
#ifndef CTP_SCX_PARSE_H
#define CTP_SCX_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A sysfs counter printed "%ld\n" (nr_rejected, hotplug_seq, enable_seq):
 * decimal digits, then an optional '\n', then nothing. Returns 0 and *out,
 * -EINVAL (empty, a sign, garbage, trailing bytes) or -ERANGE (above
 * 2^64-1). *out is untouched on failure.
 */
int ctp_scx_parse_count(const char *buf, size_t len, uint64_t *out);

/* A sysfs boolean printed "%d\n" (switch_all): "0" or "1", optional '\n'.
 * Returns 0 and *out, or -EINVAL. */
int ctp_scx_parse_flag(const char *buf, size_t len, bool *out);

/*
 * A one-line sysfs string (state: "enabling", "enabled", "disabling",
 * "disabled"; root/ops: the scheduler's name), kept verbatim: the bytes
 * before the one optional trailing '\n'. Returns 0 with *s pointing into
 * buf and *n its length, or -EINVAL when that is empty or holds a '\n' or
 * NUL byte.
 */
int ctp_scx_parse_line(const char *buf, size_t len, const char **s, size_t *n);

/*
 * The "ext.enabled" value of a sched file (kernel/sched/debug.c prints
 * "%-45s:%21Ld\n" of task_on_scx(); only with CONFIG_SCHED_CLASS_EXT).
 * As in the schedstat plugin's parser, the header ends at the first line
 * of at least 16 '-', so nothing in a thread's name (at most 15 bytes) is
 * read as a key. Below it, the first line whose key is exactly
 * "ext.enabled" (then blanks and ':') counts.
 *
 * Returns 0 and *out; -ENODATA when there is no such line (a kernel
 * without sched_ext); -EINVAL when the header is missing or the value is
 * not 0 or 1; -EMSGSIZE when the buffer does not end with '\n' and the
 * line is not found whole before the cut (it may have been lost).
 * *out is untouched on failure.
 */
int ctp_scx_parse_task(const char *buf, size_t len, bool *out);

#endif
