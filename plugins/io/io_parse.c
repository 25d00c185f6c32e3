/* SPDX-License-Identifier: MIT */
/* Parser for /proc/<tgid>/task/<tid>/io; see io_parse.h. */
#include "io_parse.h"

#include <string.h>

#define IO_SRC(id, key, unit, help, whole)                                     \
	CTP_SRC_KEY(key, struct ctp_io, v[CTP_IO_##id], CTP_IO_##id),

const struct ctp_field_src ctp_io_src[2 * CTP_IO_N] = {
	CTP_IO_LINES(IO_SRC) CTP_IO_LINES(IO_SRC)};

const char *ctp_io_key_name(unsigned i)
{
	return i < CTP_IO_N ? ctp_io_src[i].key : NULL;
}

int ctp_parse_io(const char *buf, size_t len, struct ctp_io *out)
{
	memset(out, 0, sizeof(*out));
	return ctp_fields_scan_keys(buf, len, ctp_io_src, CTP_IO_N, out,
				    &out->present);
}
