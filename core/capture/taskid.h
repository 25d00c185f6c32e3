/* SPDX-License-Identifier: MIT */
/*
 * A task's name from its stat line, so the walk need not open `comm` as
 * well: fs/proc/array.c prints the same proc_task_name() text in both,
 * between "pid (" and the last ')' of stat (a name may itself hold ')',
 * spaces or a newline; nothing after it can hold ')'). Pure.
 */
#ifndef CTP_CORE_TASKID_H
#define CTP_CORE_TASKID_H

#include <stddef.h>

/*
 * Copy the name in stat text buf[0 .. len) to out (outlen bytes, at most
 * outlen - 1 of the name kept, as a read of `comm` into such a buffer
 * would keep), NUL-terminated. Returns 0, or -EINVAL when the text has no
 * "(" ... ")" (then out is "").
 */
int ctp_stat_comm(const char *buf, size_t len, char *out, size_t outlen);

/* The state letter of stat text (the first byte after the name's ") "):
 * 0, or -EINVAL. Pure. */
int ctp_stat_state(const char *buf, size_t len, char *state);

#endif
