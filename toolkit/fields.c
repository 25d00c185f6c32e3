/* SPDX-License-Identifier: MIT */
/* Field tables and the checked setter; see <ctprof/plugin-util.h>. */
#include "ctprof/plugin-util.h"

#include <errno.h>
#include <string.h>

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
	if (r->key && r->klen && r->klen != strlen(r->key))
		return "a key of another length than klen (over 255 bytes?)";
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
	/* CTP_TYPE_U64 1, CTP_TYPE_I64 2, CTP_TYPE_CHAR 4. */
	return r->type < 8 && (0x16u >> r->type & 1) && (r->bit | r->pos) <= 63;
}
/* Keep the first problem: later ones are usually its consequences. */
static void note(int *ret, int err)
{
	if (*ret == 0)
		*ret = err;
}

/* The whole of [tok, tend) as a value of `type` (a decimal, signed or
 * not, stored as its 64 bits; or one byte), stored at out + off. */
static int store(const char *tok, const char *tend, uint8_t type, void *out,
		 uint16_t off)
{
	char *dst = (char *)out + off;
	const char *q = tok;
	uint64_t u = 0;
	int64_t i = 0;
	int r;

	switch (type) {
	case CTP_TYPE_U64:
		r = ctp_scan_u64(&q, tend, &u);
		break;
	case CTP_TYPE_I64:
		r = ctp_scan_i64(&q, tend, &i);
		u = (uint64_t)i;
		break;
	case CTP_TYPE_CHAR:
		if (tend - tok != 1)
			return -EINVAL;
		*dst = *tok;
		return 0;
	default:
		return -EINVAL;
	}
	if (r == 0 && q != tend)
		r = -EINVAL;
	if (r == 0)
		memcpy(dst, &u, sizeof(u));
	return r;
}

/* Row i's key is the n bytes at k (which may hold a NUL: compared as
 * bytes, never read past the key's own end). The length first: from the
 * row (CTP_SRC_KEY), counted only for a row made by hand. */
static inline bool key_is(const struct ctp_field_src *r, const char *k,
			  size_t n)
{
	return r->key && (r->klen ? r->klen : strlen(r->key)) == n &&
	       r->key[0] == k[0] && memcmp(r->key, k, n) == 0;
}

/* The row of key [k, k + n) not yet seen, or -1; the search starts at row
 * `from` (the one after the last found: a file prints its keys in the
 * table's order, most often) and wraps around. */
static inline int key_row(const struct ctp_field_src *src, size_t rows,
			  uint64_t seen, size_t from, const char *k, size_t n)
{
	for (size_t i = from; i < rows; i++)
		if (!(seen >> i & 1) && key_is(&src[i], k, n))
			return (int)i;
	for (size_t i = 0; i < from && i < rows; i++)
		if (!(seen >> i & 1) && key_is(&src[i], k, n))
			return (int)i;
	return -1;
}

/* Keep the problem of the lowest row or position. */
static void note_at(int *ret, unsigned *at, unsigned i, int err)
{
	if (err < 0 && (*ret == 0 || i < *at)) {
		*ret = err;
		*at = i;
	}
}

int ctp_fields_scan_keys(const char *buf, size_t len,
			 const struct ctp_field_src *src, size_t n, void *out,
			 uint64_t *present)
{
	const char *end = buf + len, *line, *eol;
	size_t rows = n < 64 ? n : 64;
	uint64_t want = 0, seen = 0;
	size_t from = 0;
	unsigned at = 0;
	int ret = 0;

	for (size_t i = 0; i < rows; i++)
		want |= (uint64_t)(src[i].key && usable(&src[i])) << i;
	/* One walk over the lines; the problem of the first row in table
	 * order is reported, so it does not depend on the order of the
	 * lines. */
	for (line = buf; line < end && seen != want;
	     line = eol < end ? eol + 1 : end) {
		const char *colon, *v;
		int k, e;

		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon)
			continue;
		k = key_row(src, rows, seen | ~want, from, line,
			    (size_t)(colon - line));
		if (k < 0)
			continue;
		from = (size_t)k + 1;
		seen |= 1ull << k;
		/* No '\n' after it: the value may be cut short. */
		if (eol == end) {
			note_at(&ret, &at, (unsigned)k, -EMSGSIZE);
			continue;
		}
		v = ctp_skip_blanks(colon + 1, eol);
		if (src[k].type == CTP_TYPE_U64) {
			/* The common case inline: a whole number. */
			uint64_t x;
			const char *q = v;

			e = ctp_scan_u64(&q, eol, &x);
			if (e == 0 && q != eol)
				e = -EINVAL;
			if (e == 0)
				memcpy((char *)out + src[k].off, &x, sizeof(x));
		} else {
			e = store(v, eol, src[k].type, out, src[k].off);
		}
		if (e == 0)
			*present |= 1ull << src[k].bit;
		note_at(&ret, &at, (unsigned)k, e);
	}
	if (seen != want)
		note_at(&ret, &at, (unsigned)__builtin_ctzll(want & ~seen),
			-ENODATA);
	return ret;
}

/* Past the word at p: its separator (' ' or '\n'), or end. */
static const char *word_end(const char *p, const char *end)
{
	while (p < end && *p != ' ' && *p != '\n')
		p++;
	return p;
}

/* The word at p kept as `type` into *w, the common case in one pass: a
 * whole value followed by its separator. Returns the separator, or NULL
 * with *w untouched when the word needs the long way (store). */
static const char *word_fast(const char *p, const char *end, uint8_t type,
			     union ctp_word *w)
{
	const char *q = p;
	union ctp_word v;
	int r;

	if (type == CTP_TYPE_CHAR) {
		if (end - q < 2 || *q == ' ' || *q == '\n' ||
		    (q[1] != ' ' && q[1] != '\n'))
			return NULL;
		w->c = *q;
		return q + 1;
	}
	r = type == CTP_TYPE_U64 ? ctp_scan_u64(&q, end, &v.u)
				 : ctp_scan_i64(&q, end, &v.i);
	if (r < 0 || q == end || (*q != ' ' && *q != '\n'))
		return NULL;
	*w = v;
	return q;
}

int ctp_fields_scan_line(const char *p, const char *end, unsigned first,
			 const struct ctp_word_kinds *k, union ctp_word *w,
			 uint64_t *present)
{
	uint64_t keep = k->u | k->i | k->c;
	unsigned pos, last;
	int ret = 0;

	keep &= first < 64 ? ~0ull << first : 0;
	if (!keep)
		return 0;
	last = 63u - (unsigned)__builtin_clzll(keep);
	for (pos = first;; pos++) {
		const uint64_t bit = 1ull << pos;
		const char *q = NULL;

		if (keep & bit) {
			uint8_t type = k->u & bit   ? CTP_TYPE_U64
				       : k->i & bit ? CTP_TYPE_I64
						    : CTP_TYPE_CHAR;

			q = word_fast(p, end, type, &w[pos]);
			if (q) {
				*present |= bit;
			} else {
				/* The long way says what is wrong. */
				q = word_end(p, end);
				if (q == end) {
					/* No separator: it may be cut short. */
					note(&ret, -EMSGSIZE);
					return ret;
				}
				int e = store(p, q, type, &w[pos], 0);
				if (e == 0)
					*present |= bit;
				note(&ret, e);
			}
		} else {
			q = word_end(p, end);
			if (q == end) {
				note(&ret, -EMSGSIZE);
				return ret;
			}
		}
		/* The line ends before the next kept word: an older kernel. */
		if (*q == '\n')
			return ret;
		p = q + 1;
		if (pos == last) {
			/* Every kept word found: the line must still end in
			 * the buffer. */
			if (!memchr(p, '\n', (size_t)(end - p)))
				note(&ret, -EMSGSIZE);
			return ret;
		}
	}
}

int ctp_fields_scan_words(const char *p, const char *end, unsigned first,
			  const struct ctp_field_src *src, size_t n, void *out,
			  uint64_t *present)
{
	struct ctp_word_kinds k = {0, 0, 0};
	union ctp_word w[CTP_SRC_POS_MAX + 1];
	uint64_t got = 0;
	int ret;

	for (size_t i = 0; i < n; i++) {
		const struct ctp_field_src *r = &src[i];
		uint64_t bit = 1ull << r->pos;

		if (r->pos == 0 || r->pos < first || !usable(r))
			continue;
		if (r->type == CTP_TYPE_U64)
			k.u |= bit;
		else if (r->type == CTP_TYPE_I64)
			k.i |= bit;
		else
			k.c |= bit;
	}
	ret = ctp_fields_scan_line(p, end, first, &k, w, &got);
	/* Each word read once, stored in every row that keeps it as the
	 * type it was read as. */
	for (size_t i = 0; i < n; i++) {
		const struct ctp_field_src *r = &src[i];
		uint64_t bit = 1ull << r->pos;
		uint8_t as = k.u & bit	 ? CTP_TYPE_U64
			     : k.i & bit ? CTP_TYPE_I64
					 : CTP_TYPE_CHAR;

		if (r->pos == 0 || r->pos < first || !usable(r) ||
		    !(got & bit) || r->type != as)
			continue;
		if (as == CTP_TYPE_CHAR)
			((char *)out)[r->off] = w[r->pos].c;
		else
			memcpy((char *)out + r->off, &w[r->pos].u,
			       sizeof(uint64_t));
		*present |= 1ull << r->bit;
	}
	return ret;
}

/* ---- Setting through a table --------------------------------------------- */

/* A row ctp_fields_set sets when its value parsed. */
static bool settable(const struct ctp_field_desc *d,
		     const struct ctp_field_src *r, uint8_t scope)
{
	return (!scope || d->scope == scope) && usable(r) &&
	       !(r->flags & CTP_SRC_CODE);
}

int ctp_fields_set(struct ctp_setter *s, const struct ctp_field_desc *desc,
		   const struct ctp_field_src *src, const int *fh, size_t n,
		   uint8_t scope, const void *vals, uint64_t present)
{
	const char *base = vals;

	for (size_t i = 0; i < n; i++) {
		const struct ctp_field_src *r = &src[i];
		uint64_t u;
		int64_t v;

		if (!settable(&desc[i], r, scope) || !(present >> r->bit & 1))
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

int ctp_fields_plan(struct ctp_fields_plan *p,
		    const struct ctp_field_desc *desc,
		    const struct ctp_field_src *src, const int *fh, size_t n,
		    uint8_t scope)
{
	p->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (!settable(&desc[i], &src[i], scope) || fh[i] < 0)
			continue;
		if (p->n == CTP_FIELDS_PLAN_MAX)
			return -E2BIG;
		p->step[p->n++] = (struct ctp_fields_step){
			.fh = fh[i],
			.off = src[i].off,
			.type = src[i].type,
			.bit = src[i].bit,
		};
	}
	return 0;
}
