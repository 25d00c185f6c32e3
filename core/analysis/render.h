/* SPDX-License-Identifier: MIT */
/*
 * Rendering snapshot values for humans: escaping of kernel-supplied bytes,
 * units (ns/us/ms/s, B/KiB/..., USER_HZ ticks as seconds, centi-percent),
 * cpu sets as compact ranges, and group aggregates (core/analysis/group.h).
 * Shared by `show` and `compare`. Private to the core.
 *
 * Every function writes a NUL-terminated string of at most n bytes into
 * buf (n > 0), cutting what does not fit.
 */
#ifndef CTP_CORE_RENDER_H
#define CTP_CORE_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "column.h" /* CTP_USER_HZ */
#include "group.h"
#include "reader.h"

#define CTP_RENDER_CELL_MAX 48 /* display characters before a cell is cut */

/* Bytes for a terminal: ctp_term_escape (term.h), the one escaper. */
char *ctp_render_escape(const char *s, size_t n, size_t max, char *out,
			size_t outlen);
/* Display width of an escaped (UTF-8) string. */
size_t ctp_render_width(const char *s);

/* A decimal with thousands separators: "1,234,567". */
void ctp_render_count(char *buf, size_t n, uint64_t v);
/* A magnitude in `unit` (enum ctp_unit): "999 ns", "1.50 ms", "2.00 KiB",
 * "1.23 s" for ticks, "12.34%" for centi-percent, "1,234" for counts,
 * plain digits otherwise (ids and other unitless numbers). */
void ctp_render_mag(char *buf, size_t n, uint64_t m, uint8_t unit);
/*
 * A number of `unit` in at most about six characters, for columns: bytes
 * as "512B", "592K", "66.3M", "1.04G" (K, M, G, T, P, E are powers of
 * 1024); times as "850ns", "12us", "340ms", "1.2s", "5m12s", "3h07m",
 * "12d04h"; counts as "99999", "123k", "4.5M" (powers of 1000); centi-
 * percent as "18.2%"; plain digits otherwise. Zero is "0".
 */
void ctp_render_compact(char *buf, size_t n, long double x, uint8_t unit);
/* Seconds as a duration, the time form above. */
void ctp_render_duration(char *buf, size_t n, long double s);
/*
 * Does the terminal take UTF-8? By the locale's environment: the first
 * of LC_ALL, LC_CTYPE and LANG that is set and not empty must name UTF-8;
 * when none is set, yes. Decides the elision mark ("\u2026" or "~") and
 * the change arrow ("\u2192" or "->") of the views.
 */
bool ctp_render_utf8(void);
/* A cpu set as ranges, "0-3,8-11"; "{}" when empty. */
void ctp_render_cpuset(const struct ctp_value *v, char *buf, size_t n);
/* One value of a field with `unit`; "-" when absent. */
void ctp_render_value(uint8_t unit, const struct ctp_value *v, char *buf,
		      size_t n);
/* A CLOCK_REALTIME instant as "YYYY-MM-DD HH:MM:SS.mmm UTC". */
void ctp_render_time(uint64_t ns, char *buf, size_t n);

/*
 * A group aggregate of a field with `unit`, without the measured count:
 *   absent              "-"
 *   rule unknown        "?"
 *   SUM, MAX, MIN, MODE the value; a saturated sum as ">" and the limit
 *   RANGE               "lo..hi", or one value when they are equal
 *   UNION               "0-3,8-11 (8)" when every member had that set,
 *                       "mixed 0-15 (16)" (the union) when they differed
 */
void ctp_render_agg(uint8_t unit, const struct ctp_agg *a, char *buf, size_t n);
/* The same followed by " (k/n)" when only k of the n rows were measured
 * (and some were). */
void ctp_render_agg_cell(uint8_t unit, const struct ctp_agg *a, char *buf,
			 size_t n);

#endif
