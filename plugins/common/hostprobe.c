/* SPDX-License-Identifier: MIT */
/* Host accounting probes; see hostprobe.h. */
#include "hostprobe.h"
#include "ctprof/plugin-util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

/* A compressed kernel config is ~30 KiB; refuse anything absurd. */
#define GZ_MAX_BYTES (4u << 20)

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* Trim blanks off both ends of [*p, *end). */
static void trim(const char **p, const char **end)
{
	while (*p < *end && is_blank(**p))
		(*p)++;
	while (*end > *p && is_blank((*end)[-1]))
		(*end)--;
}

const char *ctp_delayacct_state_name(int state)
{
	switch (state) {
	case CTP_DELAYACCT_CONFIG_OFF:
		return "config-off";
	case CTP_DELAYACCT_RUNTIME_OFF:
		return "runtime-off";
	case CTP_DELAYACCT_ON:
		return "on";
	}
	return "unknown";
}

int ctp_parse_delayacct(const char *buf, size_t len,
			enum ctp_delayacct_state *out)
{
	const char *p = buf, *end = buf + len;

	trim(&p, &end);
	if (p == end)
		return -ENODATA;
	/* proc_dointvec prints "0" or "1"; anything but "1" is not on. */
	*out = end - p == 1 && *p == '1' ? CTP_DELAYACCT_ON
					 : CTP_DELAYACCT_RUNTIME_OFF;
	return 0;
}

int ctp_probe_delayacct(int proc_fd, enum ctp_delayacct_state *out)
{
	char buf[32];
	size_t len = 0;
	int r;

	*out = CTP_DELAYACCT_CONFIG_OFF;
	r = ctp_read_small(proc_fd, "sys/kernel/task_delayacct", buf,
			   sizeof(buf), &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return ctp_parse_delayacct(buf, len, out);
}

enum ctp_kconfig_value ctp_kconfig_lookup(const char *buf, size_t len,
					  const char *sym, const char **val,
					  size_t *vlen)
{
	static const char not_set[] = " is not set";
	const char *p = buf, *end = buf + len;
	size_t sl = strlen(sym);

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *a = p, *b = le;

		p = nl ? nl + 1 : end;
		trim(&a, &b);
		if (b - a > 0 && *a == '#') {
			/* "# CONFIG_X is not set" */
			a++;
			while (a < b && (*a == ' ' || *a == '\t'))
				a++;
			if ((size_t)(b - a) == sl + sizeof(not_set) - 1 &&
			    memcmp(a, sym, sl) == 0 &&
			    memcmp(a + sl, not_set, sizeof(not_set) - 1) == 0)
				return CTP_KCONFIG_NOT_SET;
			continue;
		}
		if ((size_t)(b - a) <= sl || memcmp(a, sym, sl) != 0 ||
		    a[sl] != '=')
			continue;
		a += sl + 1;
		if (val) {
			*val = a;
			*vlen = (size_t)(b - a);
		}
		if (b - a == 1 && *a == 'y')
			return CTP_KCONFIG_YES;
		if (b - a == 1 && *a == 'm')
			return CTP_KCONFIG_MODULE;
		if (b - a == 1 && *a == 'n')
			return CTP_KCONFIG_NOT_SET;
		return CTP_KCONFIG_OTHER;
	}
	return CTP_KCONFIG_ABSENT;
}

int ctp_gunzip(const void *gz, size_t len, size_t max_out, char **out,
	       size_t *out_len)
{
	z_stream zs;
	char *buf = NULL;
	size_t cap = 0, used = 0;
	int zr, ret = 0;

	if (len > UINT32_MAX)
		return -EFBIG;
	memset(&zs, 0, sizeof(zs));
	/* 16 + MAX_WBITS: a gzip wrapper, nothing else. */
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)(uintptr_t)gz;
	zs.avail_in = (uInt)len;
	for (;;) {
		if (cap - used < 2) {
			size_t nc = cap ? cap * 2 : 64 * 1024;
			char *nb;

			if (cap >= max_out + 1) {
				ret = -EFBIG;
				break;
			}
			if (nc > max_out + 1)
				nc = max_out + 1;
			nb = realloc(buf, nc);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
			cap = nc;
		}
		/* Keep one byte for the terminating NUL. */
		zs.next_out = (Bytef *)buf + used;
		zs.avail_out = (uInt)(cap - 1 - used);
		zr = inflate(&zs, Z_NO_FLUSH);
		used = (size_t)((char *)zs.next_out - buf);
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
			/* Input ran out before the end of the stream. */
			ret = -EBADMSG;
			break;
		}
		if (zr == Z_MEM_ERROR) {
			ret = -ENOMEM;
			break;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			ret = -EBADMSG;
			break;
		}
		if (zr == Z_OK && zs.avail_in == 0 && zs.avail_out > 0) {
			ret = -EBADMSG;
			break;
		}
		if (used > max_out) {
			ret = -EFBIG;
			break;
		}
	}
	inflateEnd(&zs);
	if (ret == 0 && used > max_out)
		ret = -EFBIG;
	if (ret < 0) {
		free(buf);
		return ret;
	}
	buf[used] = '\0';
	*out = buf;
	*out_len = used;
	return 0;
}

int ctp_read_kconfig(int proc_fd, char **text, size_t *len)
{
	char *gz = NULL;
	size_t gzlen = 0, gzcap = 0;
	int r;

	r = ctp_read_grow(proc_fd, "config.gz", GZ_MAX_BYTES, &gz, &gzcap,
			  &gzlen);
	if (r < 0) {
		free(gz);
		return r;
	}
	r = ctp_gunzip(gz, gzlen, CTP_KCONFIG_MAX_BYTES, text, len);
	free(gz);
	return r;
}

const char *ctp_xacct_state_name(int state)
{
	switch (state) {
	case CTP_XACCT_ON:
		return "on";
	case CTP_XACCT_OFF:
		return "off";
	}
	return "unknown";
}

enum ctp_xacct_state ctp_parse_kconfig_xacct(const char *buf, size_t len)
{
	switch (ctp_kconfig_lookup(buf, len, "CONFIG_TASK_XACCT", NULL, NULL)) {
	case CTP_KCONFIG_YES:
	case CTP_KCONFIG_MODULE:
		return CTP_XACCT_ON;
	case CTP_KCONFIG_NOT_SET:
		return CTP_XACCT_OFF;
	default:
		return CTP_XACCT_UNKNOWN;
	}
}

int ctp_probe_xacct(int proc_fd, enum ctp_xacct_state *out)
{
	char *text;
	size_t len = 0;
	int r;

	*out = CTP_XACCT_UNKNOWN;
	r = ctp_read_kconfig(proc_fd, &text, &len);
	if (r < 0)
		return r;
	*out = ctp_parse_kconfig_xacct(text, len);
	free(text);
	return 0;
}

struct ctp_taskstats_active
ctp_taskstats_active(enum ctp_delayacct_state delayacct,
		     enum ctp_xacct_state xacct)
{
	/* delayacct_add_tsk() copies sched_info before it looks at
	 * tsk->delays, so the cpu family survives the runtime toggle. */
	struct ctp_taskstats_active a = {
		.cpu_delay = delayacct == CTP_DELAYACCT_RUNTIME_OFF ||
			     delayacct == CTP_DELAYACCT_ON,
		.delay_block = delayacct == CTP_DELAYACCT_ON,
		.xacct = xacct != CTP_XACCT_OFF,
	};
	return a;
}
