/* SPDX-License-Identifier: MIT */
/* Parsers for schedstat and sched; see schedstat_parse.h. */
#include "schedstat_parse.h"

#include <errno.h>
#include <string.h>

#include "ctprof/plugin-util.h"

#define NS_PER_MS 1000000ull
/* The kernel's separator is 67 dashes; a comm is at most 15 bytes. */
#define MIN_DASHES 16
/* kernel/sched/debug.c prints a key line as "%-45s:%21Ld": the ':' sits
 * at this column when the key fits. */
#define KEY_COL 45

static const char key_pad[KEY_COL + 1] =
	"                                             ";
_Static_assert(sizeof(key_pad) == KEY_COL + 1, "KEY_COL spaces");

/* Keep the first problem: later ones are usually its consequences. */
static void note(int *ret, int err)
{
	if (*ret == 0)
		*ret = err;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---- schedstat ---------------------------------------------------------- */

int ctp_parse_schedstat(const char *buf, size_t len, struct ctp_schedstat *out)
{
	static const uint32_t bits[3] = {CTP_SCHEDSTAT_RUN, CTP_SCHEDSTAT_WAIT,
					 CTP_SCHEDSTAT_TIMESLICES};
	uint64_t *const dst[3] = {&out->run_ns, &out->wait_ns,
				  &out->timeslices};
	const char *p = buf, *end = buf + len;
	int ret = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < 3; i++) {
		uint64_t v;
		int r;

		if (p >= end) {
			note(&ret, -EMSGSIZE);
			break;
		}
		r = ctp_scan_u64(&p, end, &v);
		if (r == -EINVAL) {
			note(&ret, r);
			break;
		}
		/* A number running into the end may have lost digits. */
		if (p >= end) {
			note(&ret, -EMSGSIZE);
			break;
		}
		/* "%llu %llu %lu\n": a space after the first two, '\n' (or
		 * a space before a future field) after the third. */
		if (!(*p == ' ' || (i == 2 && *p == '\n'))) {
			note(&ret, -EINVAL);
			break;
		}
		if (r < 0) {
			note(&ret, r);
		} else {
			*dst[i] = v;
			out->present |= bits[i];
		}
		if (*p == '\n')
			break;
		p++;
	}
	return ret;
}

/* ---- sched -------------------------------------------------------------- */

struct key_def {
	const char *name;
	uint8_t len;
	uint8_t fmt; /* enum ctp_sched_fmt */
};

/* kernel/sched/debug.c proc_sched_show_task(): P_SCHEDSTAT is INT,
 * PN_SCHEDSTAT is NS. */
#define KEY(id, name, fmt) {name, sizeof(name) - 1, CTP_SCHED_FMT_##fmt},
static const struct key_def keys[CTP_SCHED_N_KEYS] = {CTP_SCHED_KEYS(KEY)};
#undef KEY

_Static_assert(CTP_SCHED_N_KEYS <= 64, "present is a 64-bit mask");

enum ctp_sched_fmt ctp_sched_key_fmt(enum ctp_sched_key k)
{
	return k < CTP_SCHED_N_KEYS ? (enum ctp_sched_fmt)keys[k].fmt : 0;
}

const char *ctp_sched_key_name(enum ctp_sched_key k)
{
	return k < CTP_SCHED_N_KEYS ? keys[k].name : NULL;
}

static const char *key_end(const char *p, const char *e);

/*
 * The kept key at the start of the line [l, eol): its index, with *kend
 * set to the end of the key, or -1. One prefix ("se.statistics.",
 * "stats.", "se.") is removed first. Most lines are not kept, so the first
 * letter after the prefix is checked before the key's end is looked for.
 */
static int key_lookup(const char *l, const char *eol, const char **kend)
{
	const char *k = l;
	size_t len, i, lo, hi;

	/* Every prefix starts with 's'; most keys do not. The prefixes are
	 * only taken when something follows them. */
	if (eol - k > 3 && k[0] == 's') {
		if (k[1] == 'e' && k[2] == '.') {
			k += 3;
			if (eol - k > 11 && memcmp(k, "statistics.", 11) == 0 &&
			    k[11] != ' ' && k[11] != ':')
				k += 11;
		} else if (eol - k > 6 && memcmp(k, "stats.", 6) == 0 &&
			   k[6] != ' ' && k[6] != ':') {
			k += 6;
		}
	}
	/* Most lines are not kept: narrow by the first letter to the range
	 * of the enum holding every key that starts with it (the range may
	 * hold others; they just do not compare equal). */
	switch (k < eol ? k[0] : 0) {
	case 'n':
		lo = CTP_SCHED_NR_WAKEUPS;
		hi = CTP_SCHED_NR_FAILED_MIGRATIONS_HOT;
		break;
	case 'w':
		lo = CTP_SCHED_WAIT_SUM;
		hi = CTP_SCHED_WAIT_MAX;
		break;
	case 's':
		lo = CTP_SCHED_SLEEP_MAX;
		hi = CTP_SCHED_SLICE;
		break;
	case 'b':
		lo = hi = CTP_SCHED_BLOCK_MAX;
		break;
	case 'i':
		lo = CTP_SCHED_IOWAIT_SUM;
		hi = CTP_SCHED_IOWAIT_COUNT;
		break;
	case 'e':
		lo = CTP_SCHED_EXEC_MAX;
		hi = CTP_SCHED_EXT_ENABLED;
		break;
	case 'c':
		lo = hi = CTP_SCHED_CORE_FORCEIDLE_SUM;
		break;
	default:
		return -1;
	}
	*kend = key_end(k, eol);
	len = (size_t)(*kend - k);
	for (i = lo; i <= hi; i++)
		if (keys[i].len == len && memcmp(keys[i].name, k, len) == 0)
			return (int)i;
	return -1;
}

/* Whether c may start a kept key; a prefix starts with 's'. */
static int maybe_key(char c)
{
	switch (c) {
	case 'n':
	case 'w':
	case 's':
	case 'b':
	case 'i':
	case 'e':
	case 'c':
		return 1;
	default:
		return 0;
	}
}

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Whether a byte of w is zero (exact: no false positive is reported). */
static int has_zero(uint64_t w)
{
	return ((w - ONES) & ~w & HIGHS) != 0;
}

/*
 * The first ' ' or ':' in [p, e), or e. Keys are 10 to 40 bytes: test 8
 * at a time, then finish byte by byte.
 */
static const char *key_end(const char *p, const char *e)
{
	uint64_t w;

	while (e - p >= 8) {
		memcpy(&w, p, 8);
		if (has_zero(w ^ (' ' * ONES)) || has_zero(w ^ (':' * ONES)))
			break;
		p += 8;
	}
	while (p < e && *p != ' ' && *p != ':')
		p++;
	return p;
}

/* Returned by parse_value for a well-formed negative NS value. */
#define NEGATIVE 1

/*
 * The first byte of [p, e) that is not a space. Key padding and the
 * right-aligned values are runs of 20 to 40 spaces: test 8 at a time.
 */
static const char *skip_spaces(const char *p, const char *e)
{
	static const uint64_t spaces8 = 0x2020202020202020ull;
	uint64_t w;

	while (e - p >= 8) {
		memcpy(&w, p, 8);
		if (w != spaces8)
			break;
		p += 8;
	}
	while (p < e && *p == ' ')
		p++;
	return p;
}

/*
 * The value of one line, [p, eol) after the ':'. Returns 0 and *out,
 * NEGATIVE, -EINVAL or -ERANGE.
 */
static int parse_value(const char *p, const char *eol, enum ctp_sched_fmt fmt,
		       uint64_t *out)
{
	uint64_t ip, frac = 0;
	int neg, r, n;

	p = ctp_skip_blanks(skip_spaces(p, eol), eol);
	neg = p < eol && *p == '-';
	if (neg)
		p++;
	/* -ERANGE still consumes the digits, so the shape is checked. */
	r = ctp_scan_u64(&p, eol, &ip);
	if (r == -EINVAL)
		return r;
	if (fmt == CTP_SCHED_FMT_NS) {
		/* "%14Ld.%06ld" (SPLIT_NS): milliseconds, then the
		 * nanoseconds within the millisecond. */
		if (p >= eol || *p != '.')
			return -EINVAL;
		p++;
		if (p >= eol || !is_digit(*p))
			return -EINVAL;
		for (n = 0; p < eol && is_digit(*p); p++, n++)
			if (n < 6)
				frac = frac * 10 + (uint64_t)(*p - '0');
		for (; n < 6; n++)
			frac *= 10;
	}
	if (ctp_skip_blanks(p, eol) != eol)
		return -EINVAL;
	if (neg)
		return fmt == CTP_SCHED_FMT_NS ? NEGATIVE : -EINVAL;
	if (r < 0)
		return r;
	switch (fmt) {
	case CTP_SCHED_FMT_NS:
		if (ip > (UINT64_MAX - frac) / NS_PER_MS)
			return -ERANGE;
		*out = ip * NS_PER_MS + frac;
		break;
	case CTP_SCHED_FMT_BOOL:
		if (ip > 1)
			return -EINVAL;
		*out = ip;
		break;
	default:
		*out = ip;
		break;
	}
	return 0;
}

static int is_dashes(const char *l, const char *eol)
{
	const char *p;

	if (eol - l < MIN_DASHES)
		return 0;
	for (p = l; p < eol; p++)
		if (*p != '-')
			return 0;
	return 1;
}

/* The whole of [s, e) as an unsigned number. */
static int whole_u64(const char *s, const char *e, uint64_t *out)
{
	if (ctp_scan_u64(&s, e, out) < 0 || s != e)
		return -EINVAL;
	return 0;
}

/*
 * "comm (pid, #threads: n)" in [h, e), read from the right: comm may hold
 * anything, the tail cannot.
 */
static int parse_header(const char *h, const char *e, struct ctp_sched *out)
{
	static const char mid[] = ", #threads: ";
	const size_t mlen = sizeof(mid) - 1;
	const char *p = e, *num_end;

	if (p <= h || p[-1] != ')')
		return -EINVAL;
	num_end = --p;
	while (p > h && is_digit(p[-1]))
		p--;
	if (whole_u64(p, num_end, &out->nr_threads) < 0)
		return -EINVAL;
	if ((size_t)(p - h) < mlen || memcmp(p - mlen, mid, mlen) != 0)
		return -EINVAL;
	p -= mlen;
	num_end = p;
	while (p > h && is_digit(p[-1]))
		p--;
	if (whole_u64(p, num_end, &out->pid) < 0)
		return -EINVAL;
	if (p - h < 2 || p[-1] != '(' || p[-2] != ' ')
		return -EINVAL;
	out->comm = h;
	out->comm_len = (size_t)(p - 2 - h);
	out->header = true;
	return 0;
}

/* Where the key lines start: after the dashes line, or at buf if none. */
static const char *skip_header(const char *buf, const char *end,
			       struct ctp_sched *out, int *ret)
{
	const char *l, *eol;

	for (l = buf; l < end; l = eol + 1) {
		eol = memchr(l, '\n', (size_t)(end - l));
		if (!eol)
			break;
		if (!is_dashes(l, eol))
			continue;
		if (l == buf || parse_header(buf, l - 1, out) < 0)
			note(ret, -EINVAL);
		return eol + 1;
	}
	/* No separator: not the kernel's layout, but its lines may still
	 * be readable key lines. */
	note(ret, -EINVAL);
	return buf;
}

int ctp_parse_sched(const char *buf, size_t len, struct ctp_sched *out)
{
	const char *end = buf + len, *l, *eol;
	uint64_t seen = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	l = skip_header(buf, end, out, &ret);
	/* A cut last line has eol == end: the walk stops there. */
	for (; l < end; l = eol < end ? eol + 1 : end) {
		const char *colon, *kend;
		uint64_t v;
		int k, r, cut = 0;

		eol = memchr(l, '\n', (size_t)(end - l));
		if (!eol) {
			eol = end;
			cut = 1;
			note(&ret, -EMSGSIZE);
		}
		/* "%-45s:": the key, spaces, ':'. No kept key holds a space,
		 * so the key ends at the first one; what follows must be
		 * spaces up to the ':' or the line is not a kept key's. */
		/* Most lines are rejected by their first byte. */
		if (l == eol || !maybe_key(*l))
			continue;
		k = key_lookup(l, eol, &kend);
		if (k < 0)
			continue;
		/* The kernel's layout puts the ':' at KEY_COL: check the
		 * padding before it in one compare; anything else takes the
		 * general walk. */
		if (eol - l > KEY_COL && l[KEY_COL] == ':' &&
		    kend <= l + KEY_COL &&
		    memcmp(kend, key_pad, (size_t)(l + KEY_COL - kend)) == 0)
			colon = l + KEY_COL;
		else
			colon = skip_spaces(kend, eol);
		if (colon >= eol || *colon != ':')
			continue;
		if (seen & (1ull << k)) {
			note(&ret, -EINVAL);
			continue;
		}
		seen |= 1ull << k;
		if (cut)
			continue;
		r = parse_value(colon + 1, eol, (enum ctp_sched_fmt)keys[k].fmt,
				&v);
		if (r == NEGATIVE) {
			out->negative++;
		} else if (r < 0) {
			note(&ret, r);
		} else {
			out->v[k] = v;
			out->present |= 1ull << k;
		}
	}
	return ret;
}

int ctp_sched_voluntary_sleep(const struct ctp_sched *s, uint64_t *out)
{
	uint64_t sleep, block;

	if (!ctp_sched_has(s, CTP_SCHED_SUM_SLEEP_RUNTIME) ||
	    !ctp_sched_has(s, CTP_SCHED_SUM_BLOCK_RUNTIME))
		return -ENODATA;
	sleep = s->v[CTP_SCHED_SUM_SLEEP_RUNTIME];
	block = s->v[CTP_SCHED_SUM_BLOCK_RUNTIME];
	if (block > sleep)
		return -ERANGE;
	*out = sleep - block;
	return 0;
}
