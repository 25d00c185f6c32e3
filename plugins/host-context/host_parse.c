/* SPDX-License-Identifier: MIT */
/* Pure parsers of the host-context plugin; see host_parse.h. */
#include "host_parse.h"

#include <errno.h>
#include <string.h>

#include "procfs_parse.h"
#include "ctprof/plugin-util.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* [p, end) without surrounding whitespace. */
static struct ctp_hc_str span_trim(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	while (end > p && is_space(end[-1]))
		end--;
	return (struct ctp_hc_str){.ptr = p, .len = (size_t)(end - p)};
}

int ctp_hc_trim(const char *buf, size_t len, struct ctp_hc_str *out)
{
	if (memchr(buf, '\0', len))
		return -EINVAL;
	*out = span_trim(buf, buf + len);
	return 0;
}

static bool key_is(struct ctp_hc_str k, const char *want)
{
	size_t n = strlen(want);

	return k.len == n && memcmp(k.ptr, want, n) == 0;
}

int ctp_hc_parse_cpuinfo(const char *buf, size_t len,
			 struct ctp_hc_cpuinfo *out)
{
	const char *p = buf, *end = buf + len;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *colon;
		struct ctp_hc_str k, v;

		/* A line cut by the end of the read may hold half a value. */
		if (!eol)
			break;
		/* The first empty line ends the first processor's block. */
		if (span_trim(p, eol).len == 0)
			break;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon && !memchr(p, '\0', (size_t)(eol - p))) {
			k = span_trim(p, colon);
			v = span_trim(colon + 1, eol);
			if (v.len && !out->has_model &&
			    key_is(k, "model name")) {
				out->model = v;
				out->has_model = true;
			} else if (v.len && !out->has_vendor &&
				   key_is(k, "vendor_id")) {
				out->vendor = v;
				out->has_vendor = true;
			}
		}
		p = eol + 1;
	}
	return out->has_model || out->has_vendor ? 0 : -ENODATA;
}

/* Keep the first problem met; later ones do not overwrite it. */
static void note(int *ret, int r)
{
	if (*ret == 0 && r < 0)
		*ret = r;
}

/*
 * One meminfo value: digits, then optionally " kB" (scaled to bytes when
 * want_kb, refused otherwise), then the end of the line.
 */
static int mem_value(const char *buf, size_t len, const char *key, bool want_kb,
		     uint64_t *out)
{
	const char *end = buf + len, *vend, *p;
	uint64_t v;
	int r;

	p = ctp_kv_find(buf, len, key, &vend);
	if (!p)
		return -ENODATA;
	if (vend == end)
		return -EMSGSIZE;
	r = ctp_scan_u64(&p, vend, &v);
	if (r < 0)
		return r;
	p = ctp_skip_blanks(p, vend);
	if (want_kb) {
		/* fs/proc/meminfo.c show_val_kb(): always " kB", KiB. */
		if (vend - p != 2 || memcmp(p, "kB", 2) != 0)
			return -EINVAL;
		if (v > UINT64_MAX / 1024)
			return -ERANGE;
		v *= 1024;
	} else if (p != vend) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int ctp_hc_parse_meminfo(const char *buf, size_t len,
			 struct ctp_hc_meminfo *out)
{
	static const struct {
		const char *key;
		uint32_t bit;
		bool kb;
		size_t off;
	} keys[] = {
		{"MemTotal", CTP_HC_MEM_TOTAL, true,
		 offsetof(struct ctp_hc_meminfo, mem_total_bytes)},
		{"HugePages_Total", CTP_HC_HP_TOTAL, false,
		 offsetof(struct ctp_hc_meminfo, hp_total)},
		{"HugePages_Free", CTP_HC_HP_FREE, false,
		 offsetof(struct ctp_hc_meminfo, hp_free)},
		{"Hugepagesize", CTP_HC_HP_SIZE, true,
		 offsetof(struct ctp_hc_meminfo, hp_size_bytes)},
	};
	int ret = 0, nodata = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t v;
		int r = mem_value(buf, len, keys[i].key, keys[i].kb, &v);

		if (r == -ENODATA) {
			/* Missing keys rank after real problems. */
			nodata = r;
			continue;
		}
		note(&ret, r);
		if (r < 0)
			continue;
		memcpy((char *)out + keys[i].off, &v, sizeof(v));
		out->present |= keys[i].bit;
	}
	return ret ? ret : nodata;
}

int ctp_hc_parse_menu(const char *buf, size_t len, struct ctp_hc_menu *out)
{
	const char *open, *close;

	memset(out, 0, sizeof(*out));
	if (ctp_hc_trim(buf, len, &out->menu) < 0)
		return -EINVAL;
	/* mm/huge_memory.c prints exactly one "[choice]"; the first wins. */
	open = memchr(out->menu.ptr, '[', out->menu.len);
	if (!open)
		return -ENODATA;
	close = memchr(open, ']',
		       out->menu.len - (size_t)(open - out->menu.ptr));
	if (!close || close == open + 1)
		return -EINVAL;
	out->active.ptr = open + 1;
	out->active.len = (size_t)(close - open - 1);
	out->has_active = true;
	return 0;
}

int ctp_hc_sched_field_name(const char *file, char *out, size_t len)
{
	static const char pfx[] = "sched_", fpfx[] = "host.sched.";
	size_t n = strlen(file), rest;

	if (n <= sizeof(pfx) - 1 || memcmp(file, pfx, sizeof(pfx) - 1) != 0)
		return -EINVAL;
	for (size_t i = sizeof(pfx) - 1; i < n; i++) {
		char c = file[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return -EINVAL;
	}
	rest = n - (sizeof(pfx) - 1);
	if (sizeof(fpfx) - 1 + rest > CTP_HC_NAME_MAX ||
	    sizeof(fpfx) - 1 + rest + 1 > len)
		return -ENAMETOOLONG;
	memcpy(out, fpfx, sizeof(fpfx) - 1);
	memcpy(out + sizeof(fpfx) - 1, file + sizeof(pfx) - 1, rest);
	out[sizeof(fpfx) - 1 + rest] = '\0';
	return 0;
}

/* The canonical decimal of an int64_t: no '+', no leading zero, no "-0". */
static bool canonical_int(struct ctp_hc_str t, int64_t *v)
{
	const char *p = t.ptr, *end = t.ptr + t.len, *digits;

	if (p < end && *p == '-')
		p++;
	digits = p;
	if (digits == end || *digits < '0' || *digits > '9')
		return false;
	if (*digits == '0' && (end - digits > 1 || digits != t.ptr))
		return false;
	p = t.ptr;
	if (ctp_scan_i64(&p, end, v) < 0 || p != end)
		return false;
	return true;
}

int ctp_hc_parse_tunable(const char *buf, size_t len,
			 struct ctp_hc_tunable *out)
{
	memset(out, 0, sizeof(*out));
	if (ctp_hc_trim(buf, len, &out->text) < 0)
		return -EINVAL;
	out->is_int = canonical_int(out->text, &out->value);
	return 0;
}

int ctp_hc_parse_online(const char *buf, size_t len, uint64_t *words,
			size_t nwords)
{
	struct ctp_hc_str t;
	size_t used;

	if (ctp_hc_trim(buf, len, &t) < 0)
		return -EINVAL;
	return ctp_parse_cpulist(t.ptr, t.len, words, nwords, &used);
}

bool ctp_hc_is_node_dir(const char *name)
{
	if (strncmp(name, "node", 4) != 0 || !name[4])
		return false;
	for (name += 4; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}
