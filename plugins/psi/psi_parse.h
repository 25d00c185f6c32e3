/* SPDX-License-Identifier: MIT */
/*
 * Pure parser for Pressure Stall Information files: <proc>/pressure/<res>
 * and a cgroup v2 directory's <res>.pressure, both printed by psi_show()
 * (kernel/sched/psi.c):
 *
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *
 * No I/O, no allocation, no floating point; tested on literal text
 * (tests/test_psi_parse.c).
 */
#ifndef CTP_PSI_PARSE_H
#define CTP_PSI_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Which halves of a file parsed cleanly (ctp_psi.present). */
enum {
	CTP_PSI_SOME = 1u << 0, /* some task stalled */
	CTP_PSI_FULL = 1u << 1, /* every non-idle task stalled */
};

/*
 * Largest average: 100.99 %. The kernel's fixed-point EWMA (calc_load() in
 * include/linux/sched/loadavg.h) rounds up, so a saturated group can print
 * a little over 100.00 for a sample.
 */
#define CTP_PSI_AVG_MAX 10099u

/* One line. Averages are exact centi-percent: "12.34" is 1234. */
struct ctp_psi_half {
	uint32_t avg10, avg60, avg300; /* 0..CTP_PSI_AVG_MAX */
	uint64_t total_us;	       /* stalled time, microseconds */
};

struct ctp_psi {
	uint32_t present; /* CTP_PSI_SOME | CTP_PSI_FULL */
	struct ctp_psi_half some, full;
};

/*
 * Parse one pressure file. A line is "some" or "full", then blank-separated
 * key=value tokens; avg10, avg60, avg300 and total must each appear once,
 * other keys are skipped (a later kernel may add some). A half is present
 * only when its line parsed completely; the other half is parsed either
 * way, and a file may hold one half only (irq has only "full"; cpu had only
 * "some" before Linux 5.13).
 *
 * An average is <digits>.<two digits>, read as integer*100 + fraction. The
 * total is a decimal u64.
 *
 * Returns 0 when every line is well formed and at least one half is there,
 * else the first problem: -ENODATA (no line at all, e.g. an empty file),
 * -EINVAL (an unknown line, a half seen twice: only its first line
 * counts, even a malformed one; a missing or repeated key, garbage), -ERANGE
 * (an average above CTP_PSI_AVG_MAX or a total above 2^64-1), -EMSGSIZE (the
 * buffer does not end with '\n': the last line may be cut and its half is
 * absent). *out is always written.
 */
int ctp_parse_psi(const char *buf, size_t len, struct ctp_psi *out);

/*
 * One average at *p: "<digits>.<d><d>" followed by the end of the token
 * (blank, '\n' or end). Returns 0 and advances *p past it, -EINVAL (not
 * that shape) or -ERANGE (above CTP_PSI_AVG_MAX). Exposed for tests.
 */
int ctp_psi_parse_avg(const char **p, const char *end, uint32_t *out);

#endif
