/* SPDX-License-Identifier: MIT */
/* Parser for /proc/<tgid>/task/<tid>/io; see io_parse.h. */
#include "io_parse.h"

#include <errno.h>
#include <string.h>

#include "scan.h"

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

int ctp_parse_io(const char *buf, size_t len, struct ctp_io *out)
{
	const char *end = buf + len;
	int ret = 0;
	unsigned i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < CTP_IO_N; i++) {
		const char *v, *vend;
		uint64_t x;
		int r;

		v = ctp_kv_find(buf, len, keys[i], &vend);
		if (!v) {
			note(&ret, -ENODATA);
			continue;
		}
		/* No '\n' after it: the number may be cut short. */
		if (vend == end) {
			note(&ret, -EMSGSIZE);
			continue;
		}
		r = ctp_scan_u64(&v, vend, &x);
		if (r == 0 && v != vend)
			r = -EINVAL;
		if (r < 0) {
			note(&ret, r);
			continue;
		}
		out->v[i] = x;
		out->present |= 1u << i;
	}
	return ret;
}
