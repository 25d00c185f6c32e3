/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "scx_parse.h"

/* The bytes before one optional trailing '\n'. */
static size_t chomp(const char *buf, size_t len)
{
	return len > 0 && buf[len - 1] == '\n' ? len - 1 : len;
}

int ctp_scx_parse_count(const char *buf, size_t len, uint64_t *out)
{
	const char *p = buf, *end = buf + chomp(buf, len);
	uint64_t v;
	int r = ctp_scan_u64(&p, end, &v);

	if (r == 0 && p != end)
		r = -EINVAL;
	if (r == 0)
		*out = v;
	return r;
}

int ctp_scx_parse_flag(const char *buf, size_t len, bool *out)
{
	if (chomp(buf, len) != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	*out = buf[0] == '1';
	return 0;
}

int ctp_scx_parse_line(const char *buf, size_t len, const char **s, size_t *n)
{
	size_t l = chomp(buf, len);

	if (l == 0 || memchr(buf, '\n', l) || memchr(buf, '\0', l))
		return -EINVAL;
	*s = buf;
	*n = l;
	return 0;
}

/* A line of at least 16 '-' ends the header (debug.c prints 67). */
static int dashes(const char *p, const char *le)
{
	const char *q = p;

	while (q < le && *q == '-')
		q++;
	return q == le && q - p >= 16;
}

#define KEY	"ext.enabled"
#define KEY_LEN (sizeof(KEY) - 1)

int ctp_scx_parse_task(const char *buf, size_t len, bool *out)
{
	const char *p = buf, *end = buf + len;
	int in_header = 1;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *v;

		if (in_header) {
			if (!nl)
				break;
			in_header = !dashes(p, le);
			p = nl + 1;
			continue;
		}
		if ((size_t)(le - p) < KEY_LEN ||
		    memcmp(p, KEY, KEY_LEN) != 0 ||
		    (le - p > (ptrdiff_t)KEY_LEN && p[KEY_LEN] != ' ' &&
		     p[KEY_LEN] != '\t' && p[KEY_LEN] != ':')) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (!nl)
			return -EMSGSIZE;
		v = ctp_skip_blanks(p + KEY_LEN, le);
		if (v == le || *v != ':')
			return -EINVAL;
		v = ctp_skip_blanks(v + 1, le);
		if (le - v != 1 || (*v != '0' && *v != '1'))
			return -EINVAL;
		*out = *v == '1';
		return 0;
	}
	/* A cut file may have lost the line: that is not "no sched_ext". */
	if (len > 0 && buf[len - 1] != '\n')
		return -EMSGSIZE;
	return in_header ? -EINVAL : -ENODATA;
}
