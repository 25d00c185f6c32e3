/* SPDX-License-Identifier: MIT */
/* Parser for /proc/<tgid>/task/<tid>/io; see io_parse.h. */
#include "io_parse.h"

#include <errno.h>
#include <string.h>

#include "ctprof/plugin-util.h"

static const char *const keys[CTP_IO_N] = {
	[CTP_IO_RCHAR] = "rchar",
	[CTP_IO_WCHAR] = "wchar",
	[CTP_IO_SYSCR] = "syscr",
	[CTP_IO_SYSCW] = "syscw",
	[CTP_IO_READ_BYTES] = "read_bytes",
	[CTP_IO_WRITE_BYTES] = "write_bytes",
	[CTP_IO_CANCELLED_WRITE_BYTES] = "cancelled_write_bytes",
};

const char *ctp_io_key_name(unsigned i)
{
	return i < CTP_IO_N ? keys[i] : NULL;
}

/* Keep the first problem: later ones are usually its consequences. */
static void note(int *ret, int err)
{
	if (*ret == 0)
		*ret = err;
}

/* The index of the key [k, k + klen), or -1. */
static int key_index(const char *k, size_t klen)
{
	static const uint8_t lens[CTP_IO_N] = {
		[CTP_IO_RCHAR] = 5,
		[CTP_IO_WCHAR] = 5,
		[CTP_IO_SYSCR] = 5,
		[CTP_IO_SYSCW] = 5,
		[CTP_IO_READ_BYTES] = 10,
		[CTP_IO_WRITE_BYTES] = 11,
		[CTP_IO_CANCELLED_WRITE_BYTES] = 21,
	};
	unsigned i;

	for (i = 0; i < CTP_IO_N; i++)
		if (lens[i] == klen && memcmp(keys[i], k, klen) == 0)
			return (int)i;
	return -1;
}

int ctp_parse_io(const char *buf, size_t len, struct ctp_io *out)
{
	const char *end = buf + len, *line, *eol;
	int err[CTP_IO_N] = {0};
	uint32_t seen = 0;
	int ret = 0;
	unsigned i;

	memset(out, 0, sizeof(*out));
	/* One walk over the lines; the first line of a key is the one that
	 * counts. Problems are kept per key and reported in key order after
	 * the walk, so the first one noted does not depend on line order. */
	for (line = buf; line < end && seen != (1u << CTP_IO_N) - 1;
	     line = eol < end ? eol + 1 : end) {
		const char *colon, *v;
		uint64_t x;
		int k, r;

		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon)
			continue;
		k = key_index(line, (size_t)(colon - line));
		if (k < 0 || (seen & (1u << k)))
			continue;
		seen |= 1u << k;
		/* No '\n' after it: the number may be cut short. */
		if (eol == end) {
			err[k] = -EMSGSIZE;
			continue;
		}
		v = ctp_skip_blanks(colon + 1, eol);
		r = ctp_scan_u64(&v, eol, &x);
		if (r == 0 && v != eol)
			r = -EINVAL;
		err[k] = r;
		if (r == 0) {
			out->v[k] = x;
			out->present |= 1u << k;
		}
	}
	for (i = 0; i < CTP_IO_N; i++)
		note(&ret, seen & (1u << i) ? err[i] : -ENODATA);
	return ret;
}
