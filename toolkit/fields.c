/* SPDX-License-Identifier: MIT */
/* Field tables and the checked setter; see <ctprof/plugin-util.h>. */
#include "ctprof/plugin-util.h"

#include <errno.h>
#include <string.h>

/* ---- The checked setter -------------------------------------------------- */

/* Keep the first failure; every later value is still set. */
static int keep(struct ctp_setter *s, int r)
{
	if (r < 0 && s->err == 0)
		s->err = r;
	return r < 0 ? r : 0;
}

int ctp_set_u64(struct ctp_setter *s, int field, uint64_t v)
{
	return field < 0 ? 0 : keep(s, s->api->set_u64(s->rec, field, v));
}

int ctp_set_i64(struct ctp_setter *s, int field, int64_t v)
{
	return field < 0 ? 0 : keep(s, s->api->set_i64(s->rec, field, v));
}

int ctp_set_bool(struct ctp_setter *s, int field, bool v)
{
	return field < 0 ? 0 : keep(s, s->api->set_bool(s->rec, field, v));
}

int ctp_set_char(struct ctp_setter *s, int field, char v)
{
	return field < 0 ? 0 : keep(s, s->api->set_char(s->rec, field, v));
}

int ctp_set_str(struct ctp_setter *s, int field, const char *str, size_t len)
{
	return field < 0 ? 0
			 : keep(s, s->api->set_str(s->rec, field, str, len));
}

int ctp_set_cpuset(struct ctp_setter *s, int field, const uint64_t *words,
		   size_t n_words)
{
	return field < 0 ? 0
			 : keep(s, s->api->set_cpuset(s->rec, field, words,
						      n_words));
}

/* ---- Checking a table ---------------------------------------------------- */

static const char *src_fault(const struct ctp_field_desc *d,
			     const struct ctp_field_src *r)
{
	if (r->type == 0)
		return r->key || r->pos || r->flags
			       ? "a key, position or flag but no member type"
			       : NULL;
	if (r->type != CTP_TYPE_U64 && r->type != CTP_TYPE_I64 &&
	    r->type != CTP_TYPE_CHAR)
		return "a member type the scanners do not know";
	if (r->key && r->pos)
		return "both a key and a position";
	if (r->pos > CTP_SRC_POS_MAX)
		return "a position past CTP_SRC_POS_MAX";
	if (r->bit > 63)
		return "a presence bit past 63";
	if (r->key && !*r->key)
		return "an empty key";
	if (r->flags & ~CTP_SRC_CODE)
		return "unknown flags";
	if (!(r->flags & CTP_SRC_CODE) && r->type != d->type)
		return "a member of another type than the field "
		       "(CTP_SRC_POS_CODE "
		       "for a value the code converts)";
	return NULL;
}

int ctp_fields_check(const struct ctp_field_desc *desc,
		     const struct ctp_field_src *src, size_t n, size_t *bad,
		     const char **why)
{
	for (size_t i = 0; i < n; i++) {
		const char *w = src_fault(&desc[i], &src[i]);

		if (w) {
			*bad = i;
			*why = w;
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- Parsing through a table --------------------------------------------- */

/* A row a scanner may use: a member type it knows, a bit and a position in
 * range (ctp_fields_check says why not; the scanners just skip it). */
static bool usable(const struct ctp_field_src *r)
{
	return (r->type == CTP_TYPE_U64 || r->type == CTP_TYPE_I64 ||
		r->type == CTP_TYPE_CHAR) &&
	       r->bit <= 63 && r->pos <= CTP_SRC_POS_MAX;
}

/* The whole of [tok, tend) as a decimal, signed or not; a signed one is
 * stored as its two's complement bits. */
static int whole_number(const char *tok, const char *tend, bool sign,
			uint64_t *out)
{
	int64_t i = 0;
	int r = sign ? ctp_scan_i64(&tok, tend, &i)
		     : ctp_scan_u64(&tok, tend, out);

	if (r == 0 && tok != tend)
		return -EINVAL;
	if (r == 0 && sign)
		*out = (uint64_t)i;
	return r;
}

/* The whole of [tok, tend) as a value of `type`, stored at out + off. */
static int store(const char *tok, const char *tend, uint8_t type, void *out,
		 uint16_t off)
{
	char *dst = (char *)out + off;
	uint64_t u;
	int r;

	switch (type) {
	case CTP_TYPE_U64:
	case CTP_TYPE_I64:
		r = whole_number(tok, tend, type == CTP_TYPE_I64, &u);
		if (r == 0)
			memcpy(dst, &u, sizeof(u));
		return r;
	case CTP_TYPE_CHAR:
		if (tend - tok != 1)
			return -EINVAL;
		*dst = *tok;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Row i's key is the n bytes at k (which may hold a NUL: compared as
 * bytes, never read past the key's own end). */
static bool key_is(const struct ctp_field_src *r, const char *k, size_t n)
{
	return r->key && strlen(r->key) == n && memcmp(r->key, k, n) == 0;
}

/* The row of key [k, k + n) not yet seen, or -1. */
static int key_row(const struct ctp_field_src *src, size_t rows, uint64_t seen,
		   const char *k, size_t n)
{
	for (size_t i = 0; i < rows; i++)
		if (!(seen >> i & 1) && key_is(&src[i], k, n))
			return (int)i;
	return -1;
}

int ctp_fields_scan_keys(const char *buf, size_t len,
			 const struct ctp_field_src *src, size_t n, void *out,
			 uint64_t *present)
{
	const char *end = buf + len, *line, *eol;
	size_t rows = n < 64 ? n : 64;
	uint64_t want = 0, seen = 0;
	int err[64] = {0};
	int ret = 0;

	for (size_t i = 0; i < rows; i++)
		if (src[i].key && usable(&src[i]))
			want |= 1ull << i;
	/* One walk over the lines; problems are kept per row and reported
	 * in table order after it, so the first does not depend on the
	 * order of the lines. */
	for (line = buf; line < end && seen != want;
	     line = eol < end ? eol + 1 : end) {
		const char *colon, *v;
		int k;

		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon)
			continue;
		k = key_row(src, rows, seen | ~want, line,
			    (size_t)(colon - line));
		if (k < 0)
			continue;
		seen |= 1ull << k;
		/* No '\n' after it: the value may be cut short. */
		if (eol == end) {
			err[k] = -EMSGSIZE;
			continue;
		}
		v = ctp_skip_blanks(colon + 1, eol);
		err[k] = store(v, eol, src[k].type, out, src[k].off);
		if (err[k] == 0)
			*present |= 1ull << src[k].bit;
	}
	for (size_t i = 0; i < rows && ret == 0; i++)
		if (want >> i & 1)
			ret = seen >> i & 1 ? err[i] : -ENODATA;
	return ret;
}

/* Keep the problem at the lowest position. */
static void note_at(int *ret, unsigned *at, unsigned pos, int err)
{
	if (err < 0 && (*ret == 0 || pos < *at)) {
		*ret = err;
		*at = pos;
	}
}

int ctp_fields_scan_words(const char *p, const char *end, unsigned first,
			  const struct ctp_field_src *src, size_t n, void *out,
			  uint64_t *present)
{
	/* word[k] starts at start[k], ends one before start[k + 1]. */
	const char *start[CTP_SRC_POS_MAX + 2];
	unsigned last = 0, pos, at = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		if (src[i].pos >= first && src[i].pos > last && usable(&src[i]))
			last = src[i].pos;
	if (last == 0)
		return 0;
	/* Find the words up to the last one kept. */
	for (pos = first; pos <= last; pos++) {
		const char *q = p;

		while (q < end && *q != ' ' && *q != '\n')
			q++;
		if (q == end) {
			/* No separator: the word may be cut short. */
			note_at(&ret, &at, pos, -EMSGSIZE);
			break;
		}
		start[pos] = p;
		p = q + 1;
		start[pos + 1] = p;
		if (*q == '\n') {
			pos++;
			break;
		}
	}
	/* Every kept word found: the line must still end in the buffer. */
	if (pos > last && p[-1] != '\n' && !memchr(p, '\n', (size_t)(end - p)))
		note_at(&ret, &at, last + 1, -EMSGSIZE);
	/* Words first .. pos - 1 are whole. A word two rows keep in the same
	 * member (a thread and a process field) is read once. */
	uint64_t done = 0;
	uint16_t done_off[CTP_SRC_POS_MAX + 1];
	for (size_t i = 0; i < n; i++) {
		const struct ctp_field_src *r = &src[i];
		int e;

		if (r->pos < first || r->pos >= pos || !usable(r) ||
		    ((done >> r->pos & 1) && done_off[r->pos] == r->off))
			continue;
		done |= 1ull << r->pos;
		done_off[r->pos] = r->off;
		e = store(start[r->pos], start[r->pos + 1] - 1, r->type, out,
			  r->off);
		if (e == 0)
			*present |= 1ull << r->bit;
		note_at(&ret, &at, r->pos, e);
	}
	return ret;
}

/* ---- Setting through a table --------------------------------------------- */

int ctp_fields_set(struct ctp_setter *s, const struct ctp_field_desc *desc,
		   const struct ctp_field_src *src, const int *fh, size_t n,
		   uint8_t scope, const void *vals, uint64_t present)
{
	const char *base = vals;

	for (size_t i = 0; i < n; i++) {
		const struct ctp_field_src *r = &src[i];
		uint64_t u;
		int64_t v;

		if ((scope && desc[i].scope != scope) || !usable(r) ||
		    (r->flags & CTP_SRC_CODE) || !(present >> r->bit & 1))
			continue;
		switch (r->type) {
		case CTP_TYPE_U64:
			memcpy(&u, base + r->off, sizeof(u));
			ctp_set_u64(s, fh[i], u);
			break;
		case CTP_TYPE_I64:
			memcpy(&v, base + r->off, sizeof(v));
			ctp_set_i64(s, fh[i], v);
			break;
		case CTP_TYPE_CHAR:
			ctp_set_char(s, fh[i], base[r->off]);
			break;
		}
	}
	return s->err;
}
