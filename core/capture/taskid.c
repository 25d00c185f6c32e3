/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "taskid.h"

/* The first '(' and the last ')' of stat text, the name between them; 0,
 * or -EINVAL when there are no such two in that order. */
static int name_bounds(const char *buf, size_t len, const char **open,
		       const char **close)
{
	const char *o, *c;

	if (!buf)
		return -EINVAL;
	o = memchr(buf, '(', len);
	if (!o)
		return -EINVAL;
	c = buf + len;
	while (c > o && *--c != ')')
		;
	if (c == o)
		return -EINVAL;
	*open = o;
	*close = c;
	return 0;
}

int ctp_stat_comm(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *open, *close;
	size_t n;

	if (!outlen)
		return -EINVAL;
	out[0] = '\0';
	if (name_bounds(buf, len, &open, &close) < 0)
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
	const char *open, *close;

	if (name_bounds(buf, len, &open, &close) < 0 ||
	    (size_t)(buf + len - close) < 3 || close[1] != ' ')
		return -EINVAL;
	*state = close[2];
	return 0;
}
