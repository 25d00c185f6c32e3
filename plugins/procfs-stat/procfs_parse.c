/* SPDX-License-Identifier: MIT */
/* Parsers for stat, status and cpu lists; see procfs_parse.h. */
#include "procfs_parse.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <string.h>

#include "ctprof/plugin-util.h"

#define BIT(n) (1ull << (n))

/* Keep the first problem: later ones are usually its consequences. */
static void note(int *ret, int err)
{
	if (*ret == 0)
		*ret = err;
}

/* The whole token [tok, tend) must be the number. */
static int tok_u64(const char *tok, const char *tend, uint64_t *out)
{
	uint64_t v;
	int r = ctp_scan_u64(&tok, tend, &v);

	if (r < 0)
		return r;
	if (tok != tend)
		return -EINVAL;
	*out = v;
	return 0;
}

const struct ctp_field_src ctp_stat_src[CTP_STAT_N_FIELDS] = {
	CTP_STAT_FIELDS(CTP_FT_SRC)};

/* The words the list keeps, by type, resolved at compile time. */
static const struct ctp_word_kinds stat_kinds = CTP_STAT_KINDS;

/* From (3) on: pid and comm are the parser's own. Two rows keeping one
 * word (a thread and a process field) keep it as the same type. */
_Static_assert((CTP_STAT_KINDS_ALL & 7) == 0, "a stat row before (3)");
_Static_assert(CTP_STAT_KINDS_OVERLAP == 0, "stat rows of one word disagree");

int ctp_parse_stat(const char *buf, size_t len, struct ctp_stat *out)
{
	const char *end = buf + len, *p = buf, *open, *close;
	int ret = 0, r;

	memset(out, 0, sizeof(*out));

	/* (1) pid */
	r = ctp_scan_i64(&p, end, &out->pid);
	if (r == 0 && p < end && *p == ' ')
		out->present |= BIT(CTP_STAT_PID);
	else if (p == end)
		note(&ret, -EMSGSIZE);
	else
		note(&ret, r < 0 ? r : -EINVAL);

	/* (2) comm: any bytes but NUL, so only the last ')' closes it. */
	open = memchr(buf, '(', len);
	close = open ? memrchr(open, ')', (size_t)(end - open)) : NULL;
	if (!close) {
		note(&ret, len && end[-1] == '\n' ? -EINVAL : -EMSGSIZE);
		return ret;
	}
	out->comm = open + 1;
	out->comm_len = (size_t)(close - open - 1);
	out->present |= BIT(CTP_STAT_COMM);

	/* (3) onwards: single-space separated words up to the '\n'. */
	p = close + 1;
	if (p == end) {
		note(&ret, -EMSGSIZE);
		return ret;
	}
	if (*p == '\n')
		return ret;
	if (*p != ' ') {
		note(&ret, -EINVAL);
		return ret;
	}
	note(&ret, ctp_fields_scan_line(p + 1, end, CTP_STAT_STATE, &stat_kinds,
					out->w, &out->present));
	return ret;
}

static int key_is(const char *line, const char *eol, const char *key,
		  size_t klen)
{
	return (size_t)(eol - line) > klen && line[klen] == ':' &&
	       memcmp(line, key, klen) == 0;
}

/* Which wanted key the line [line, eol) holds, or 0; its length in *klen. */
static uint32_t status_key(const char *line, const char *eol, size_t *klen)
{
	switch (*line) {
	case 'S':
		if (key_is(line, eol, "State", 5))
			return *klen = 5, CTP_STATUS_STATE;
		break;
	case 'C':
		if (key_is(line, eol, "Cpus_allowed_list", 17))
			return *klen = 17, CTP_STATUS_CPUS_ALLOWED_LIST;
		break;
	case 'v':
		if (key_is(line, eol, "voluntary_ctxt_switches", 23))
			return *klen = 23, CTP_STATUS_VOLUNTARY_CSW;
		break;
	case 'n':
		if (key_is(line, eol, "nonvoluntary_ctxt_switches", 26))
			return *klen = 26, CTP_STATUS_NONVOLUNTARY_CSW;
		break;
	}
	return 0;
}

/*
 * Take the line [line, eol) if it holds a wanted key not seen yet. `cut`:
 * the line has no '\n' (the buffer ends inside it), so its value may be
 * short and is not taken.
 */
static void status_line(const char *line, const char *eol, bool cut,
			struct ctp_status *out, uint32_t *seen, int *ret)
{
	size_t klen = 0;
	uint32_t bit = line < eol ? status_key(line, eol, &klen) : 0;
	if (!bit || (*seen & bit))
		return;
	const char *v = ctp_skip_blanks(line + klen + 1, eol);
	*seen |= bit;
	if (cut) {
		note(ret, -EMSGSIZE);
	} else if (bit == CTP_STATUS_STATE) {
		if (v<eol && * v> ' ' && *v < 0x7f &&
		    (eol - v == 1 || v[1] == ' ')) {
			out->state = *v;
			out->present |= bit;
		} else {
			note(ret, -EINVAL);
		}
	} else if (bit == CTP_STATUS_CPUS_ALLOWED_LIST) {
		out->cpus_allowed_list = v;
		out->cpus_allowed_list_len = (size_t)(eol - v);
		out->present |= bit;
	} else {
		uint64_t *dst = bit == CTP_STATUS_VOLUNTARY_CSW
					? &out->voluntary_csw
					: &out->nonvoluntary_csw;
		int r = tok_u64(v, eol, dst);
		if (r < 0)
			note(ret, r);
		else
			out->present |= bit;
	}
}

/*
 * fs/proc/array.c prints State third and the other three among the last
 * lines (Cpus_allowed_list, Mems_allowed*, then the two context-switch
 * counts; on some architectures a few feature lines follow). So: forward
 * from the start until State, then backward from the end over what is left,
 * instead of some 60 lines per thread. The kernel prints each key once; if
 * a buffer has one twice, which copy is taken is not specified.
 */
int ctp_parse_status(const char *buf, size_t len, struct ctp_status *out)
{
	const char *end = buf + len, *line = buf;
	int ret = 0;
	const uint32_t want = CTP_STATUS_STATE | CTP_STATUS_VOLUNTARY_CSW |
			      CTP_STATUS_NONVOLUNTARY_CSW |
			      CTP_STATUS_CPUS_ALLOWED_LIST;
	uint32_t seen = 0;

	memset(out, 0, sizeof(*out));
	while (line < end && !(seen & CTP_STATUS_STATE)) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		status_line(line, eol ? eol : end, !eol, out, &seen, &ret);
		line = eol ? eol + 1 : end;
	}
	/* [line, hi) is not scanned yet; take its lines last to first. */
	const char *hi = end;
	while (hi > line && seen != want) {
		bool cut = hi[-1] != '\n';
		const char *eol = cut ? hi : hi - 1;
		const char *nl = memrchr(line, '\n', (size_t)(eol - line));
		const char *start = nl ? nl + 1 : line;
		status_line(start, eol, cut, out, &seen, &ret);
		hi = start;
	}
	if (seen != want)
		note(&ret, -ENODATA);
	return ret;
}

static void set_range(uint64_t *words, uint64_t lo, uint64_t hi)
{
	uint64_t w;

	for (w = lo / 64; w <= hi / 64; w++) {
		unsigned a = w == lo / 64 ? (unsigned)(lo % 64) : 0;
		unsigned b = w == hi / 64 ? (unsigned)(hi % 64) : 63;
		uint64_t mask = b == 63 ? ~0ull : BIT(b + 1) - 1;

		words[w] |= mask & ~(BIT(a) - 1);
	}
}

int ctp_parse_cpulist(const char *s, size_t len, uint64_t *words, size_t nwords,
		      size_t *n_used)
{
	const char *p = s, *end = s + len;
	uint64_t lo, hi, top = 0;
	size_t i, used = 0, count = 0;
	int r;

	memset(words, 0, nwords * sizeof(*words));
	while (p < end) {
		r = ctp_scan_u64(&p, end, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			r = ctp_scan_u64(&p, end, &hi);
			if (r < 0)
				return r;
			if (hi < lo)
				return -EINVAL;
		}
		if (hi / 64 >= nwords)
			return -ERANGE;
		set_range(words, lo, hi);
		if (hi >= top) {
			top = hi;
			used = (size_t)(hi / 64) + 1;
		}
		if (p < end) {
			if (*p != ',')
				return -EINVAL;
			/* A trailing ',' must be followed by another entry. */
			if (++p == end)
				return -EINVAL;
		}
	}
	for (i = 0; i < used; i++)
		count += (size_t)__builtin_popcountll(words[i]);
	*n_used = used;
	return count > INT_MAX ? INT_MAX : (int)count;
}

const char *ctp_sched_policy_name(uint64_t policy)
{
	/* include/uapi/linux/sched.h; 4 was SCHED_ISO, never merged. */
	switch (policy) {
	case 0:
		return "SCHED_OTHER";
	case 1:
		return "SCHED_FIFO";
	case 2:
		return "SCHED_RR";
	case 3:
		return "SCHED_BATCH";
	case 5:
		return "SCHED_IDLE";
	case 6:
		return "SCHED_DEADLINE";
	case 7:
		return "SCHED_EXT";
	default:
		return NULL;
	}
}
