// SPDX-License-Identifier: MIT
/* Pure helpers of jemalloc-probe: no I/O, unit-tested on their own. */
#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "jep.h"

static const char *const tag_names[CTP_JEP_N_TAGS] = {
	[CTP_JEP_NOT_JEMALLOC] = "not-jemalloc",
	[CTP_JEP_EXITED] = "process-exited",
	[CTP_JEP_MAPS] = "maps-read",
	[CTP_JEP_ELF] = "elf-open",
	[CTP_JEP_NO_DEBUGINFO] = "no-debuginfo",
	[CTP_JEP_NO_TSD_LAYOUT] = "tsd-layout",
	[CTP_JEP_LINK_MAP] = "link-map",
	[CTP_JEP_THREAD_DB] = "thread-db",
	[CTP_JEP_TLS_DEFERRED] = "tls-not-allocated",
	[CTP_JEP_PTRACE_SEIZE] = "ptrace-seize",
	[CTP_JEP_PTRACE_STOP] = "ptrace-stop",
	[CTP_JEP_PTRACE_REGS] = "ptrace-regs",
	[CTP_JEP_STATIC_TLS] = "static-tls",
	[CTP_JEP_VM_READV] = "process-vm-readv",
};

const char *ctp_jep_tag_name(enum ctp_jep_tag t)
{
	return (unsigned)t < CTP_JEP_N_TAGS ? tag_names[t] : "unknown";
}

bool ctp_jep_tag_routine(enum ctp_jep_tag t)
{
	return t == CTP_JEP_NOT_JEMALLOC || t == CTP_JEP_EXITED;
}

int ctp_jep_dominant(const uint64_t *counts)
{
	int best = -1;

	for (int t = 0; t < CTP_JEP_N_TAGS; t++) {
		if (ctp_jep_tag_routine((enum ctp_jep_tag)t) || !counts[t])
			continue;
		if (best < 0 || counts[t] > counts[best])
			best = t;
	}
	return best;
}

/* Hex number up to a delimiter; advances *p. */
static int hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s >= end)
		return -EINVAL;
	for (; s < end; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (s == *p)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static void spaces(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

/* "start-end perms offset major:minor inode   path" */
int ctp_jep_maps_line(const char *buf, size_t len, struct ctp_jep_map *out)
{
	const char *p = buf, *end = buf + len;
	uint64_t maj, min, ino = 0;

	memset(out, 0, sizeof(*out));
	if (hex(&p, end, &out->start) || expect(&p, end, '-') ||
	    hex(&p, end, &out->end) || expect(&p, end, ' '))
		return -EINVAL;
	if (end - p < 5)
		return -EINVAL;
	out->exec = p[2] == 'x';
	p += 4;
	if (expect(&p, end, ' ') || hex(&p, end, &out->offset) ||
	    expect(&p, end, ' ') || hex(&p, end, &maj) ||
	    expect(&p, end, ':') || hex(&p, end, &min) || expect(&p, end, ' '))
		return -EINVAL;
	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		ino = ino * 10 + (uint64_t)(*p - '0');
	out->dev = makedev((unsigned)maj, (unsigned)min);
	out->ino = ino;
	spaces(&p, end);
	out->path = p;
	out->path_len = (size_t)(end - p);
	return 0;
}

#define TSD_PREFIX "cant_access_tsd_items_directly_use_a_getter_or_setter_"

int ctp_jep_member_kind(const char *name)
{
	size_t pl = sizeof(TSD_PREFIX) - 1;

	if (!strncmp(name, TSD_PREFIX, pl))
		name += pl;
	if (!strcmp(name, "thread_allocated"))
		return 1;
	if (!strcmp(name, "thread_deallocated"))
		return 2;
	return 0;
}

bool ctp_jep_is_tsd_symbol(const char *name)
{
	size_t n = strlen(name);
	static const char suffix[] = "tsd_tls";
	size_t sl = sizeof(suffix) - 1;

	if (n < sl || strcmp(name + n - sl, suffix))
		return false;
	/* tsd_tls itself, or <prefix>_tsd_tls with a non-empty prefix. */
	return n == sl || (n > sl + 1 && name[n - sl - 1] == '_');
}

static bool pow2(uint64_t a)
{
	return a && !(a & (a - 1));
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int ctp_jep_tls_x86_64(uint64_t tp, uint64_t memsz, uint64_t align,
		       uint64_t st_value, uint64_t *addr)
{
	uint64_t block;

	if (!align)
		align = 1;
	if (!pow2(align) || memsz > UINT64_MAX - align)
		return -EINVAL;
	block = round_up(memsz, align);
	if (block > tp || st_value >= block)
		return -EINVAL;
	*addr = tp - block + st_value;
	return 0;
}

int ctp_jep_tls_arm64(uint64_t tp, uint64_t memsz, uint64_t align,
		      uint64_t st_value, uint64_t *addr)
{
	uint64_t off;

	if (!align)
		align = 1;
	if (!pow2(align) || (memsz && st_value >= memsz))
		return -EINVAL;
	off = round_up(16, align);
	if (tp > UINT64_MAX - off - st_value)
		return -EINVAL;
	*addr = tp + off + st_value;
	return 0;
}
