/* SPDX-License-Identifier: MIT */
/* Bounded text scanners; see <ctprof/plugin-util.h> for the contract. */
#include "ctprof/plugin-util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Accumulate the digits at *p into a magnitude no larger than `limit`.
 * Always consumes every digit so a caller can resynchronize after -ERANGE.
 * Eighteen digits never exceed either limit used here (INT64_MAX has 19),
 * so those are taken without a check; only a longer run pays for one.
 */
static int scan_magnitude(const char **p, const char *end, uint64_t limit,
			  uint64_t *out)
{
	const char *s = *p;
	const char *fast = end - s > 18 ? s + 18 : end;
	uint64_t v = 0;
	int overflow = 0;

	if (s >= end || !is_digit(*s))
		return -EINVAL;
	for (; s < fast && is_digit(*s); s++)
		v = v * 10 + (unsigned)(*s - '0');
	if (s < end && is_digit(*s)) {
		const uint64_t q = limit / 10, r = limit % 10;

		for (; s < end && is_digit(*s); s++) {
			unsigned d = (unsigned)(*s - '0');

			if (overflow || v > q || (v == q && d > r))
				overflow = 1;
			else
				v = v * 10 + d;
		}
	}
	*p = s;
	if (overflow)
		return -ERANGE;
	*out = v;
	return 0;
}

int ctp_scan_u64(const char **p, const char *end, uint64_t *out)
{
	return scan_magnitude(p, end, UINT64_MAX, out);
}

int ctp_scan_i64(const char **p, const char *end, int64_t *out)
{
	const char *s = *p;
	uint64_t mag;
	int neg = 0, r;

	if (s < end && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
	}
	/* |INT64_MIN| is one more than INT64_MAX. */
	r = scan_magnitude(&s, end, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX,
			   &mag);
	if (r == -EINVAL)
		return r; /* a lone sign is not a number: *p stays put */
	*p = s;
	if (r < 0)
		return r;
	if (neg)
		*out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN
						      : -(int64_t)mag;
	else
		*out = (int64_t)mag;
	return 0;
}

const char *ctp_skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

const char *ctp_next_line(const char *p, const char *end)
{
	const char *nl;

	if (p >= end)
		return end;
	nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl + 1 : end;
}

const char *ctp_kv_find(const char *buf, size_t len, const char *key,
			const char **value_end)
{
	const char *end = buf + len;
	size_t klen = strlen(key);
	const char *line;

	for (line = buf; line < end; line = ctp_next_line(line, end)) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			eol = end;
		if ((size_t)(eol - line) <= klen || line[klen] != ':' ||
		    memcmp(line, key, klen) != 0)
			continue;
		*value_end = eol;
		return ctp_skip_blanks(line + klen + 1, eol);
	}
	return NULL;
}

int ctp_parse_u64_str(const char *s, uint64_t *out)
{
	const char *p = s, *end = s + strlen(s);
	uint64_t v;
	int r = ctp_scan_u64(&p, end, &v);
	if (r < 0)
		return r;
	if (p != end)
		return -EINVAL;
	*out = v;
	return 0;
}

int ctp_kv_u64(const char *buf, size_t len, const char *key, uint64_t *out)
{
	const char *vend, *p = ctp_kv_find(buf, len, key, &vend);
	uint64_t v;
	int r;

	if (!p)
		return -ENOENT;
	r = ctp_scan_u64(&p, vend, &v);
	if (r < 0)
		return r;
	/* "123 kB" is a number with its unit; "123x" is not a number. */
	if (p != vend && *p != ' ' && *p != '\t')
		return -EINVAL;
	*out = v;
	return 0;
}

int ctp_parse_pid(const char *s, uint32_t *out)
{
	uint64_t v;
	int r = ctp_parse_u64_str(s, &v);

	if (r < 0)
		return r;
	if (v > INT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

static void first_err(int *ret, int err)
{
	if (*ret == 0)
		*ret = err;
}

static bool kv_seen(const struct ctp_keyval_lines *out,
		    const struct ctp_keyval *kv)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->kv[i].key_len == kv->key_len &&
		    memcmp(out->kv[i].key, kv->key, kv->key_len) == 0)
			return true;
	return false;
}

int ctp_keyval_lines(const char *buf, size_t len,
		     int (*line)(const char *p, const char *eol,
				 struct ctp_keyval *kv),
		     struct ctp_keyval_lines *out)
{
	const char *p = buf, *end = buf + len;
	int ret = 0;

	out->n = 0;
	out->malformed = 0;
	out->dropped = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct ctp_keyval kv;
		int r;

		if (!nl) {
			/* A short read may have cut this line. */
			out->malformed++;
			first_err(&ret, -EMSGSIZE);
			break;
		}
		r = line(p, nl, &kv);
		if (r == 0 && kv_seen(out, &kv))
			r = -EINVAL;
		if (r < 0) {
			out->malformed++;
			first_err(&ret, r);
		} else if (r == 0 && out->n == out->cap) {
			out->dropped++;
			first_err(&ret, -E2BIG);
		} else if (r == 0) {
			out->kv[out->n++] = kv;
		}
		p = nl + 1;
	}
	return ret;
}
