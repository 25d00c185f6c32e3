/* SPDX-License-Identifier: MIT */
/* Values and aggregates rendered for humans (`show`, `compare`). */
#include "render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "term.h"

char *ctp_render_escape(const char *s, size_t n, size_t max, char *out,
			size_t outlen)
{
	return ctp_term_escape(s, n, max, out, outlen);
}

size_t ctp_render_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void ctp_render_count(char *buf, size_t n, uint64_t v)
{
	char d[24], tmp[32];
	size_t l = (size_t)snprintf(d, sizeof(d), "%" PRIu64, v), o = 0;
	for (size_t i = 0; i < l; i++) {
		if (i && (l - i) % 3 == 0)
			tmp[o++] = ',';
		tmp[o++] = d[i];
	}
	tmp[o] = '\0';
	snprintf(buf, n, "%s", tmp);
}

/* m in the largest of the units it reaches (steps[u] of the first, ascending),
 * to two decimals; below the second unit, exact in the first. */
static void scaled(char *buf, size_t n, uint64_t m, const char *const *units,
		   const double *steps, size_t nunits)
{
	double v = (double)m;
	size_t u = 0;

	if (v < steps[1]) {
		snprintf(buf, n, "%" PRIu64 " %s", m, units[0]);
		return;
	}
	while (u + 1 < nunits && v >= steps[u + 1])
		u++;
	snprintf(buf, n, "%.2f %s", v / steps[u], units[u]);
}

void ctp_render_mag(char *buf, size_t n, uint64_t m, uint8_t unit)
{
	static const char *const tu[] = {"ns", "us", "ms", "s"};
	static const double ts[] = {1, 1e3, 1e6, 1e9};
	static const char *const bu[] = {"B",	"KiB", "MiB", "GiB",
					 "TiB", "PiB", "EiB"};
	static const double bs[] = {1,
				    1024.0,
				    1048576.0,
				    1073741824.0,
				    1099511627776.0,
				    1125899906842624.0,
				    1152921504606846976.0};
	switch (unit) {
	case CTP_UNIT_NS:
		scaled(buf, n, m, tu, ts, 4);
		break;
	case CTP_UNIT_US:
		scaled(buf, n, m, tu + 1, ts, 3);
		break;
	case CTP_UNIT_TICKS:
		snprintf(buf, n, "%" PRIu64 ".%02" PRIu64 " s", m / CTP_USER_HZ,
			 (m % CTP_USER_HZ) * (100 / CTP_USER_HZ));
		break;
	case CTP_UNIT_BYTES:
		scaled(buf, n, m, bu, bs, 7);
		break;
	case CTP_UNIT_CENTIPCT:
		snprintf(buf, n, "%" PRIu64 ".%02" PRIu64 "%%", m / 100,
			 m % 100);
		break;
	case CTP_UNIT_COUNT:
		ctp_render_count(buf, n, m);
		break;
	default:
		snprintf(buf, n, "%" PRIu64, m);
	}
}

/* 1 <= v < 1000 with three significant digits, then sfx. */
static void sig3(char *buf, size_t n, long double v, const char *sfx)
{
	if (v < 9.995L)
		snprintf(buf, n, "%.2Lf%s", v, sfx);
	else if (v < 99.95L)
		snprintf(buf, n, "%.1Lf%s", v, sfx);
	else
		snprintf(buf, n, "%.0Lf%s", v, sfx);
}

void ctp_render_duration(char *buf, size_t n, long double s)
{
	unsigned long long t = (unsigned long long)s;
	if (s == 0)
		snprintf(buf, n, "0");
	else if (s < 1e-6L)
		snprintf(buf, n, "%.0Lfns", s * 1e9L);
	else if (s < 1e-3L)
		snprintf(buf, n, "%.0Lfus", s * 1e6L);
	else if (s < 0.9995L)
		snprintf(buf, n, "%.0Lfms", s * 1e3L);
	else if (s < 59.95L)
		snprintf(buf, n, "%.1Lfs", s);
	else if (t < 3600)
		snprintf(buf, n, "%llum%02llus", t / 60, t % 60);
	else if (t < 86400)
		snprintf(buf, n, "%lluh%02llum", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, n, "%llud%02lluh", t / 86400, t % 86400 / 3600);
}

static void compact_bytes(char *buf, size_t n, long double x)
{
	static const char sfx[] = "BKMGTPE";
	size_t i = 0;
	if (x < 1000) {
		snprintf(buf, n, x == 0 ? "0" : "%.0LfB", x);
		return;
	}
	while (x >= 999.5L && i + 1 < sizeof(sfx) - 1) {
		x /= 1024;
		i++;
	}
	char s[2] = {sfx[i], '\0'};
	sig3(buf, n, x, s);
}

static void compact_count(char *buf, size_t n, long double x)
{
	static const char *const sfx[] = {"", "k", "M", "G", "T", "P", "E"};
	size_t i = 0;
	if (x < 99999.5L) {
		snprintf(buf, n, "%.0Lf", x);
		return;
	}
	while (x >= 999.5L && i + 1 < sizeof(sfx) / sizeof(*sfx)) {
		x /= 1000;
		i++;
	}
	sig3(buf, n, x, sfx[i]);
}

void ctp_render_compact(char *buf, size_t n, long double x, uint8_t unit)
{
	if (x < 0 && n > 1) {
		buf[0] = '-';
		ctp_render_compact(buf + 1, n - 1, -x, unit);
		return;
	}
	switch (unit) {
	case CTP_UNIT_BYTES:
		compact_bytes(buf, n, x);
		return;
	case CTP_UNIT_NS:
	case CTP_UNIT_US:
	case CTP_UNIT_TICKS:
		ctp_render_duration(buf, n, ctp_unit_to_seconds(x, unit));
		return;
	case CTP_UNIT_CENTIPCT:
		snprintf(buf, n, "%.1Lf%%", x / 100);
		return;
	case CTP_UNIT_COUNT:
		compact_count(buf, n, x);
		return;
	}
	snprintf(buf, n, "%.0Lf", x);
}

/* "UTF-8", "utf8", any case. */
static bool names_utf8(const char *v)
{
	for (; *v; v++)
		if (strncasecmp(v, "utf-8", 5) == 0 ||
		    strncasecmp(v, "utf8", 4) == 0)
			return true;
	return false;
}

bool ctp_render_utf8(void)
{
	static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return names_utf8(v);
	}
	return true;
}

void ctp_render_cpuset(const struct ctp_value *v, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = '\0';
	if (v->cpuset.n == 0) {
		snprintf(buf, n, "{}");
		return;
	}
	for (size_t i = 0; i < v->cpuset.n && o < n; i++) {
		uint32_t lo = v->cpuset.r[2 * i], hi = v->cpuset.r[2 * i + 1];
		int w = lo == hi ? snprintf(buf + o, n - o, "%s%" PRIu32,
					    i ? "," : "", lo)
				 : snprintf(buf + o, n - o,
					    "%s%" PRIu32 "-%" PRIu32,
					    i ? "," : "", lo, hi);
		if (w < 0 || (size_t)w >= n - o) {
			/* Does not fit: end with an ellipsis. */
			if (n >= 4)
				memcpy(buf + n - 4, "...", 4);
			return;
		}
		o += (size_t)w;
	}
}

void ctp_render_value(uint8_t unit, const struct ctp_value *v, char *buf,
		      size_t n)
{
	switch (v->type) {
	case CTP_VALUE_ABSENT:
		snprintf(buf, n, "-");
		break;
	case CTP_TYPE_U64:
		ctp_render_mag(buf, n, v->u64, unit);
		break;
	case CTP_TYPE_I64: {
		/* Magnitude without overflow at INT64_MIN. */
		uint64_t m = v->i64 < 0 ? (uint64_t)(-(v->i64 + 1)) + 1
					: (uint64_t)v->i64;
		buf[0] = '-';
		ctp_render_mag(v->i64 < 0 ? buf + 1 : buf,
			       v->i64 < 0 ? n - 1 : n, m, unit);
		break;
	}
	case CTP_TYPE_BOOL:
		snprintf(buf, n, "%s", v->b ? "true" : "false");
		break;
	case CTP_TYPE_CHAR:
		ctp_render_escape((const char *)&v->c, 1, CTP_RENDER_CELL_MAX,
				  buf, n);
		break;
	case CTP_TYPE_STRING:
		if (v->str.len == 0)
			snprintf(buf, n, "\"\"");
		else
			ctp_render_escape(v->str.ptr, v->str.len,
					  CTP_RENDER_CELL_MAX, buf, n);
		break;
	case CTP_TYPE_CPUSET:
		ctp_render_cpuset(v, buf, n);
		break;
	default:
		snprintf(buf, n, "?");
	}
}

void ctp_render_time(uint64_t ns, char *buf, size_t n)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, n, "%" PRIu64 " ns", ns);
		return;
	}
	char d[32];
	strftime(d, sizeof(d), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03u UTC", d,
		 (unsigned)(ns % 1000000000u / 1000000u));
}

void ctp_render_agg(uint8_t unit, const struct ctp_agg *a, char *buf, size_t n)
{
	char x[256], y[256];

	if (a->unknown && a->n_measured) {
		snprintf(buf, n, "?");
		return;
	}
	if (a->v.type == CTP_VALUE_ABSENT) {
		snprintf(buf, n, "-");
		return;
	}
	if (a->v.type == CTP_TYPE_CPUSET) {
		ctp_render_cpuset(&a->v, x, sizeof(x));
		snprintf(buf, n, "%s%s (%" PRIu64 ")", a->mixed ? "mixed " : "",
			 x, ctp_cpuset_count(&a->v));
		return;
	}
	ctp_render_value(unit, &a->v, x, sizeof(x));
	if (a->hi.type != CTP_VALUE_ABSENT && a->mixed) {
		ctp_render_value(unit, &a->hi, y, sizeof(y));
		snprintf(buf, n, "%s..%s", x, y);
		return;
	}
	/* A saturated sum is clamped to the type's limit on its side. */
	const char *sat = !a->saturated				      ? ""
			  : a->v.type == CTP_TYPE_I64 && a->v.i64 < 0 ? "<"
								      : ">";
	snprintf(buf, n, "%s%s", sat, x);
}

void ctp_render_agg_cell(uint8_t unit, const struct ctp_agg *a, char *buf,
			 size_t n)
{
	ctp_render_agg(unit, a, buf, n);
	if (a->n_measured && a->n_measured < a->n_rows) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, " (%" PRIu32 "/%" PRIu32 ")",
			 a->n_measured, a->n_rows);
	}
}
