/* SPDX-License-Identifier: MIT */
/*
 * Pure parsers for /proc/<tgid>/smaps_rollup (fs/proc/task_mmu.c
 * show_smaps_rollup) and /proc/<tgid>/statm (fs/proc/array.c
 * proc_pid_statm), plus the size syntax of the smaps options. No I/O, no
 * allocation, no logging; tested on literal kernel text
 * (tests/test_smaps_parse.c).
 */
#ifndef CTP_SMAPS_PARSE_H
#define CTP_SMAPS_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin-util.h"

/* Keys kept per file (a 6.18 kernel prints 22) and bytes per key name. */
#define CTP_SMAPS_MAX_KEYS 64
#define CTP_SMAPS_KEY_MAX  64

struct ctp_smaps_rollup {
	size_t n; /* kv[0..n) in file order, each key once; a key is
		     1..CTP_SMAPS_KEY_MAX of [A-Za-z0-9_], a value the kB
		     times 1024 */
	struct ctp_keyval kv[CTP_SMAPS_MAX_KEYS];
	unsigned malformed; /* lines skipped: not "Key: N kB", key repeated,
			       value too large, or cut by the buffer's end */
	unsigned dropped;   /* valid lines past CTP_SMAPS_MAX_KEYS */
};

/*
 * Parse smaps_rollup: an optional header line ending in "[rollup]" (the
 * rolled-up vma range), then "Key:<blanks>N kB" lines. Every key is kept,
 * including ones this parser has never heard of; values are converted from
 * kB to bytes. The header is skipped silently, any other line that is not a
 * well-formed key line is skipped and counted. An empty buffer (a process
 * without memory map) parses to no keys. Returns 0 when nothing was
 * skipped; otherwise the first problem: -EINVAL (a malformed or repeated
 * line), -ERANGE (a value whose bytes exceed 64 bits), -EMSGSIZE (the last
 * line has no '\n': a short read may have cut it), -E2BIG (more than
 * CTP_SMAPS_MAX_KEYS keys). What did parse is in *out either way.
 */
int ctp_parse_smaps_rollup(const char *buf, size_t len,
			   struct ctp_smaps_rollup *out);

struct ctp_statm {
	uint64_t size;	   /* (1) total program size, pages */
	uint64_t resident; /* (2) resident set size, pages */
};

/*
 * Parse the first two numbers of statm ("size resident shared text lib
 * data dt", in pages). Returns 0, -EINVAL (garbage), -ERANGE (overflow) or
 * -EMSGSIZE (the buffer ends inside the first two numbers).
 */
int ctp_parse_statm(const char *buf, size_t len, struct ctp_statm *out);

/*
 * Parse an option value: a decimal number with an optional unit suffix
 * `mult` names, or "unlimited" (UINT64_MAX). For sizes the suffixes are
 * K/M/G/T and KiB/MiB/GiB/TiB, all powers of 1024 (CTP_SIZE_BYTES); a
 * number alone is taken as is. Returns 0, -EINVAL or -ERANGE.
 */
enum ctp_size_units {
	CTP_SIZE_PLAIN = 0, /* no suffix accepted */
	CTP_SIZE_BYTES = 1, /* K/M/G/T, KiB/MiB/GiB/TiB */
};
int ctp_parse_size(const char *s, enum ctp_size_units units, uint64_t *out);

#endif
