/* SPDX-License-Identifier: MIT */
/* Parsers for smaps_rollup, statm and option sizes; see smaps_parse.h. */
#include "smaps_parse.h"

#include <errno.h>
#include <string.h>

#include "ctprof/plugin-util.h"

/* Keep the first problem: later ones are usually its consequences. */
static int key_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* The vma header of the rolled-up range ends in "[rollup]" (seq_pad'ed). */
static int is_header(const char *p, const char *eol)
{
	static const char tag[] = "[rollup]";
	size_t n = sizeof(tag) - 1;

	while (eol > p && (eol[-1] == ' ' || eol[-1] == '\t'))
		eol--;
	return (size_t)(eol - p) >= n && memcmp(eol - n, tag, n) == 0;
}

/*
 * One "Key:<blanks>N kB" line [p, eol). Returns 0 with the key and bytes,
 * or -EINVAL / -ERANGE.
 */
static int key_line(const char *p, const char *eol, struct ctp_keyval *kv)
{
	const char *k = p, *q;
	uint64_t kib;
	int r;

	while (p < eol && key_char(*p))
		p++;
	if (p == k || p == eol || *p != ':' ||
	    (size_t)(p - k) > CTP_SMAPS_KEY_MAX)
		return -EINVAL;
	q = ctp_skip_blanks(p + 1, eol);
	r = ctp_scan_u64(&q, eol, &kib);
	if (r < 0)
		return r;
	/* __show_smap prints every value as "%8lu kB". */
	if (q == eol || (*q != ' ' && *q != '\t'))
		return -EINVAL;
	q = ctp_skip_blanks(q, eol);
	if (eol - q != 2 || q[0] != 'k' || q[1] != 'B')
		return -EINVAL;
	if (kib > UINT64_MAX / 1024)
		return -ERANGE;
	kv->key = k;
	kv->key_len = (size_t)(p - k);
	kv->value = kib * 1024;
	return 0;
}

/* A smaps_rollup line: the header and blank lines are passed over. */
static int rollup_line(const char *p, const char *eol, struct ctp_keyval *kv)
{
	if (eol == p || is_header(p, eol))
		return 1;
	return key_line(p, eol, kv);
}

int ctp_parse_smaps_rollup(const char *buf, size_t len,
			   struct ctp_smaps_rollup *out)
{
	struct ctp_keyval_lines l = {.kv = out->kv, .cap = CTP_SMAPS_MAX_KEYS};
	int ret = ctp_keyval_lines(buf, len, rollup_line, &l);

	out->n = l.n;
	out->malformed = l.malformed;
	out->dropped = l.dropped;
	return ret;
}

int ctp_parse_statm(const char *buf, size_t len, struct ctp_statm *out)
{
	const char *p = buf, *end = buf + len;
	uint64_t v[2];
	int i, r;

	for (i = 0; i < 2; i++) {
		if (p == end)
			return -EMSGSIZE;
		r = ctp_scan_u64(&p, end, &v[i]);
		if (r < 0)
			return r;
		/* A number running into the end may have been cut. */
		if (p == end)
			return -EMSGSIZE;
		if (*p != ' ' && !(i == 1 && *p == '\n'))
			return -EINVAL;
		p++;
	}
	out->size = v[0];
	out->resident = v[1];
	return 0;
}

int ctp_parse_size(const char *s, enum ctp_size_units units, uint64_t *out)
{
	static const struct {
		const char *name;
		unsigned shift;
	} sfx[] = {
		{"K", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20},
		{"G", 30}, {"GiB", 30}, {"T", 40}, {"TiB", 40},
	};
	const char *p = s, *end;
	uint64_t v;
	size_t i;
	int r;

	if (!s)
		return -EINVAL;
	if (strcmp(s, "unlimited") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	end = s + strlen(s);
	r = ctp_scan_u64(&p, end, &v);
	if (r < 0)
		return r;
	if (p == end) {
		*out = v;
		return 0;
	}
	if (units != CTP_SIZE_BYTES)
		return -EINVAL;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if (strcmp(p, sfx[i].name) != 0)
			continue;
		if (v > UINT64_MAX >> sfx[i].shift)
			return -ERANGE;
		*out = v << sfx[i].shift;
		return 0;
	}
	return -EINVAL;
}
