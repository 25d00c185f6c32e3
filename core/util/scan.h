/* SPDX-License-Identifier: MIT */
/*
 * Bounded text scanners shared by the core and the in-tree plugins (linked
 * statically as ctp_scan; never exported from a plugin). Pure functions over
 * [p, end): no allocation, no locale, no errno, no NUL terminator needed.
 */
#ifndef CTP_CORE_SCAN_H
#define CTP_CORE_SCAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse an unsigned decimal starting exactly at *p (no leading blanks, no
 * sign). On success advance *p past the digits and return 0. Return -EINVAL
 * when there is no digit, -ERANGE when the value does not fit (then *p is
 * advanced past the digits all the same so callers can resynchronize).
 */
int ctp_scan_u64(const char **p, const char *end, uint64_t *out);

/* Same for an optionally '-' or '+' signed decimal. */
int ctp_scan_i64(const char **p, const char *end, int64_t *out);

/* A whole NUL-terminated string that is an unsigned decimal (command-line
 * arguments): 0, -EINVAL (empty, sign, trailing garbage) or -ERANGE. */
int ctp_parse_u64_str(const char *s, uint64_t *out);

/* Skip ' ' and '\t'. */
const char *ctp_skip_blanks(const char *p, const char *end);

/* Pointer to the byte after the next '\n' at or after p (end if none). */
const char *ctp_next_line(const char *p, const char *end);

/*
 * In a "Key:<blanks>value" file (status, /proc/<pid>/io ...), find the line
 * whose key equals `key` exactly (the text before the first ':'). Returns
 * the first non-blank byte of the value and sets *value_end to the end of
 * that line (excluding '\n'), or NULL when there is no such line.
 */
const char *ctp_kv_find(const char *buf, size_t len, const char *key,
			const char **value_end);

#endif
