/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "psi_parse.h"
#include "ctprof/plugin-util.h"

/* Keep the first problem of a series. */
static void keep(int *ret, int r)
{
	if (r < 0 && *ret == 0)
		*ret = r;
}

static bool token_end(const char *p, const char *end)
{
	return p == end || *p == ' ' || *p == '\t' || *p == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int ctp_psi_parse_avg(const char **p, const char *end, uint32_t *out)
{
	const char *q = *p;
	uint64_t whole;
	unsigned frac;
	int r = ctp_scan_u64(&q, end, &whole);

	if (r == -EINVAL)
		return -EINVAL;
	/* psi_show() prints "%lu.%02lu": exactly two fraction digits. */
	if (end - q < 3 || q[0] != '.' || !is_digit(q[1]) || !is_digit(q[2]))
		return -EINVAL;
	frac = (unsigned)(q[1] - '0') * 10 + (unsigned)(q[2] - '0');
	q += 3;
	if (!token_end(q, end))
		return -EINVAL;
	*p = q;
	if (r == -ERANGE || whole > CTP_PSI_AVG_MAX / 100)
		return -ERANGE;
	*out = (uint32_t)whole * 100 + frac;
	return 0;
}

enum { K_AVG10, K_AVG60, K_AVG300, K_TOTAL, N_KEYS };
static const char *const key_names[N_KEYS] = {"avg10", "avg60", "avg300",
					      "total"};

static int key_index(const char *k, size_t n)
{
	for (int i = 0; i < N_KEYS; i++)
		if (strlen(key_names[i]) == n &&
		    memcmp(k, key_names[i], n) == 0)
			return i;
	return -1;
}

/* The tokens of one line after its "some"/"full" word, up to le ('\n'). */
static int parse_half(const char *p, const char *le, struct ctp_psi_half *h)
{
	uint32_t avg[3] = {0, 0, 0};
	uint64_t total = 0;
	unsigned seen = 0;
	int r;

	for (p = ctp_skip_blanks(p, le); p < le; p = ctp_skip_blanks(p, le)) {
		const char *k = p;
		int i;

		while (p < le && *p != '=' && !token_end(p, le))
			p++;
		if (p == le || *p != '=' || p == k)
			return -EINVAL;
		i = key_index(k, (size_t)(p - k));
		p++;
		if (i < 0) {
			/* A key this parser does not know: skip its value. */
			while (!token_end(p, le))
				p++;
			continue;
		}
		if (seen & (1u << i))
			return -EINVAL;
		seen |= 1u << i;
		if (i == K_TOTAL) {
			r = ctp_scan_u64(&p, le, &total);
			if (r == 0 && !token_end(p, le))
				r = -EINVAL;
		} else {
			r = ctp_psi_parse_avg(&p, le, &avg[i]);
		}
		if (r < 0)
			return r;
	}
	if (seen != (1u << N_KEYS) - 1)
		return -EINVAL;
	h->avg10 = avg[K_AVG10];
	h->avg60 = avg[K_AVG60];
	h->avg300 = avg[K_AVG300];
	h->total_us = total;
	return 0;
}

int ctp_parse_psi(const char *buf, size_t len, struct ctp_psi *out)
{
	const char *p = buf, *end = buf + len;
	uint32_t seen = 0; /* halves met, parsed or not */
	int ret = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct ctp_psi_half *h = NULL;
		uint32_t bit = 0;

		if (!nl) {
			keep(&ret, -EMSGSIZE);
			break;
		}
		if (nl - p > 4 && (p[4] == ' ' || p[4] == '\t')) {
			if (memcmp(p, "some", 4) == 0) {
				h = &out->some;
				bit = CTP_PSI_SOME;
			} else if (memcmp(p, "full", 4) == 0) {
				h = &out->full;
				bit = CTP_PSI_FULL;
			}
		}
		if (!h) {
			keep(&ret, -EINVAL);
		} else if (seen & bit) {
			keep(&ret, -EINVAL);
		} else {
			struct ctp_psi_half v;
			int r = parse_half(p + 4, nl, &v);

			seen |= bit;
			if (r == 0) {
				*h = v;
				out->present |= bit;
			}
			keep(&ret, r);
		}
		p = nl + 1;
	}
	if (ret == 0 && !out->present)
		ret = -ENODATA;
	return ret;
}
