/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "taskid.h"

int ctp_stat_comm(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *open, *close;
	size_t n;

	if (!outlen)
		return -EINVAL;
	out[0] = '\0';
	if (!buf)
		return -EINVAL;
	open = memchr(buf, '(', len);
	if (!open)
		return -EINVAL;
	close = buf + len;
	while (close > open && *--close != ')')
		;
	if (close == open)
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n > outlen - 1)
		n = outlen - 1;
	memcpy(out, open + 1, n);
	out[n] = '\0';
	return 0;
}

int ctp_stat_state(const char *buf, size_t len, char *state)
{
	const char *close = buf ? buf + len : NULL;

	if (!buf)
		return -EINVAL;
	while (close > buf && *--close != ')')
		;
	if (close == buf || *close != ')' || (size_t)(buf + len - close) < 3 ||
	    close[1] != ' ')
		return -EINVAL;
	*state = close[2];
	return 0;
}
