/* SPDX-License-Identifier: MIT */
/* Parsers of the cgroup collector; see cgroup_parse.h for the contract. */
#include "cgroup_parse.h"

#include <errno.h>
#include <string.h>

#include "ctprof/plugin.h"
#include "ctprof/plugin-util.h"

/* Keep the first problem: later ones are usually its consequences. */
static void note(int *ret, int err)
{
	if (*ret == 0)
		*ret = err;
}

/* The one line of a single-value file: [buf, *eol), or an error. */
static int only_line(const char *buf, size_t len, const char **eol)
{
	const char *end = buf + len, *nl;

	if (len == 0)
		return -ENODATA;
	nl = memchr(buf, '\n', len);
	if (!nl)
		return -EMSGSIZE;
	if (nl + 1 != end)
		return -EINVAL; /* a second line */
	*eol = nl;
	return 0;
}

int ctp_cg_parse_u64(const char *buf, size_t len, uint64_t *out)
{
	const char *eol, *p = buf;
	uint64_t v;
	int r = only_line(buf, len, &eol);

	if (r < 0)
		return r;
	r = ctp_scan_u64(&p, eol, &v);
	if (r < 0)
		return r;
	if (p != eol)
		return -EINVAL;
	*out = v;
	return 0;
}

int ctp_cg_parse_u64_max(const char *buf, size_t len, uint64_t *out,
			 bool *is_max)
{
	const char *eol;
	int r = only_line(buf, len, &eol);

	if (r < 0)
		return r;
	if (eol - buf == 3 && memcmp(buf, "max", 3) == 0) {
		*out = 0;
		*is_max = true;
		return 0;
	}
	r = ctp_cg_parse_u64(buf, len, out);
	if (r == 0)
		*is_max = false;
	return r;
}

int ctp_cg_parse_i64(const char *buf, size_t len, int64_t *out)
{
	const char *eol, *p = buf;
	int64_t v;
	int r = only_line(buf, len, &eol);

	if (r < 0)
		return r;
	r = ctp_scan_i64(&p, eol, &v);
	if (r < 0)
		return r;
	if (p != eol)
		return -EINVAL;
	*out = v;
	return 0;
}

int ctp_cg_parse_cpu_max(const char *buf, size_t len,
			 struct ctp_cg_cpu_max *out)
{
	struct ctp_cg_cpu_max m = {0};
	const char *eol, *p = buf;
	int r = only_line(buf, len, &eol);

	if (r < 0)
		return r;
	/* cpu_max_show: "max" or the quota, one space, the period. */
	if (eol - p >= 3 && memcmp(p, "max", 3) == 0) {
		m.quota_max = true;
		p += 3;
	} else {
		r = ctp_scan_u64(&p, eol, &m.quota);
		if (r < 0)
			return r;
	}
	if (p == eol || *p != ' ')
		return -EINVAL;
	p++;
	r = ctp_scan_u64(&p, eol, &m.period);
	if (r < 0)
		return r;
	if (p != eol)
		return -EINVAL;
	*out = m;
	return 0;
}

int ctp_cg_parse_line(const char *buf, size_t len, const char **word,
		      size_t *wlen)
{
	const char *eol, *p;
	int r = only_line(buf, len, &eol);

	if (r < 0)
		return r;
	if (eol == buf)
		return -ENODATA;
	for (p = buf; p < eol; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -EINVAL;
	*word = buf;
	*wlen = (size_t)(eol - buf);
	return 0;
}

/* ---- Keyed files --------------------------------------------------------- */

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.';
}

/* A key usable as the last components of a field name. */
static bool key_ok(const char *k, size_t n)
{
	size_t i;

	if (n == 0 || n > CTP_CG_KEY_MAX || k[0] == '.' || k[n - 1] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!key_char(k[i]) || (k[i] == '.' && k[i + 1] == '.'))
			return false;
	return true;
}

static int key_line(const char *p, const char *eol, struct ctp_keyval *kv)
{
	const char *k = p, *q;
	uint64_t v;
	int r;

	while (p < eol && *p != ' ')
		p++;
	if (p == eol || !key_ok(k, (size_t)(p - k)))
		return -EINVAL;
	/* The kernel prints "%s %llu\n": exactly one space. */
	q = p + 1;
	r = ctp_scan_u64(&q, eol, &v);
	if (r < 0)
		return r;
	if (q != eol)
		return -EINVAL;
	kv->key = k;
	kv->key_len = (size_t)(p - k);
	kv->value = v;
	return 0;
}

int ctp_cg_parse_keyed(const char *buf, size_t len, struct ctp_cg_keyed *out)
{
	struct ctp_keyval_lines l = {.kv = out->kv, .cap = CTP_CG_MAX_KEYS};
	int ret = ctp_keyval_lines(buf, len, key_line, &l);

	out->n = l.n;
	out->malformed = l.malformed;
	out->dropped = l.dropped;
	return ret;
}

/* ---- /proc/<pid>/cgroup -------------------------------------------------- */

static bool ctrl_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '=' ||
	       c == ',' || c == '-';
}

static int membership_line(const char *p, const char *eol,
			   struct ctp_cg_line *l)
{
	const char *c, *q = p;
	uint64_t id;
	int r = ctp_scan_u64(&q, eol, &id);

	if (r < 0)
		return r;
	if (id > UINT32_MAX)
		return -ERANGE;
	if (q == eol || *q != ':')
		return -EINVAL;
	c = ++q;
	while (q < eol && *q != ':') {
		if (!ctrl_char(*q))
			return -EINVAL;
		q++;
	}
	if (q == eol)
		return -EINVAL;
	/* v2 has no controller list; every v1 hierarchy has one. */
	if ((id == 0) != (q == c))
		return -EINVAL;
	q++;
	if (q == eol || *q != '/' || memchr(q, '\0', (size_t)(eol - q)))
		return -EINVAL;
	l->id = (uint32_t)id;
	l->ctrl = c;
	l->ctrl_len = (size_t)(q - 1 - c);
	l->path = q;
	l->path_len = (size_t)(eol - q);
	return 0;
}

int ctp_cg_parse_membership(const char *buf, size_t len,
			    struct ctp_cg_membership *out)
{
	const char *p = buf, *end = buf + len;
	struct ctp_cg_line l;
	int ret = 0, r;

	out->n = 0;
	out->malformed = 0;
	out->dropped = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) {
			out->malformed++;
			note(&ret, -EMSGSIZE);
			break;
		}
		r = membership_line(p, nl, &l);
		if (r < 0) {
			out->malformed++;
			note(&ret, r);
		} else if (out->n == CTP_CG_MAX_LINES) {
			out->dropped++;
			note(&ret, -E2BIG);
		} else {
			out->line[out->n++] = l;
		}
		p = nl + 1;
	}
	return ret;
}

/* ---- mountinfo ----------------------------------------------------------- */

/* The next space-separated field of [*p, eol): 0, or -EINVAL when none. */
static int field(const char **p, const char *eol, const char **f, size_t *n)
{
	const char *s = *p, *e;

	if (s >= eol)
		return -EINVAL;
	e = memchr(s, ' ', (size_t)(eol - s));
	if (!e)
		e = eol;
	if (e == s)
		return -EINVAL;
	*f = s;
	*n = (size_t)(e - s);
	*p = e < eol ? e + 1 : eol;
	return 0;
}

static int mount_line(const char *p, const char *eol, struct ctp_cg_mount *m)
{
	const char *f;
	size_t n;
	int i;

	/* (1) id (2) parent (3) major:minor (4) root (5) mount point */
	for (i = 0; i < 3; i++)
		if (field(&p, eol, &f, &n) < 0)
			return -EINVAL;
	if (field(&p, eol, &m->root, &m->root_len) < 0 ||
	    field(&p, eol, &m->point, &m->point_len) < 0)
		return -EINVAL;
	/* (6) mount options (7) optional fields, up to the "-" separator */
	do {
		if (field(&p, eol, &f, &n) < 0)
			return -EINVAL;
	} while (!(n == 1 && f[0] == '-'));
	/* (9) fstype (10) source (11) super options */
	if (field(&p, eol, &m->fstype, &m->fstype_len) < 0 ||
	    field(&p, eol, &f, &n) < 0 ||
	    field(&p, eol, &m->super, &m->super_len) < 0)
		return -EINVAL;
	return 0;
}

int ctp_cg_mountinfo_next(const char **p, const char *end,
			  struct ctp_cg_mount *m)
{
	const char *s = *p, *nl;

	if (s >= end)
		return 0;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl) {
		*p = end;
		return -EMSGSIZE;
	}
	*p = nl + 1;
	return mount_line(s, nl, m) < 0 ? -EINVAL : 1;
}

static bool odigit(char c)
{
	return c >= '0' && c <= '7';
}

int ctp_cg_unescape(const char *s, size_t len, char *dst, size_t dstlen)
{
	size_t i = 0, o = 0;

	while (i < len) {
		char c = s[i];

		if (c == '\\' && i + 3 < len && odigit(s[i + 1]) &&
		    odigit(s[i + 2]) && odigit(s[i + 3])) {
			unsigned v = (unsigned)(s[i + 1] - '0') * 64 +
				     (unsigned)(s[i + 2] - '0') * 8 +
				     (unsigned)(s[i + 3] - '0');

			if (v > 0xff)
				return -EINVAL;
			c = (char)v;
			i += 4;
		} else {
			i++;
		}
		if (c == '\0')
			return -EINVAL;
		if (o + 1 >= dstlen)
			return -ENAMETOOLONG;
		dst[o++] = c;
	}
	if (dstlen == 0)
		return -ENAMETOOLONG;
	dst[o] = '\0';
	return (int)o;
}

bool ctp_cg_list_has(const char *list, size_t len, const char *item,
		     size_t ilen)
{
	const char *p = list, *end = list + len;

	if (ilen == 0)
		return false;
	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *e = c ? c : end;

		if ((size_t)(e - p) == ilen && memcmp(p, item, ilen) == 0)
			return true;
		p = e + 1;
	}
	return false;
}

bool ctp_cg_mount_holds(const struct ctp_cg_mount *m, const char *ctrl,
			size_t ctrl_len)
{
	const char *p = ctrl, *end = ctrl + ctrl_len;

	if (m->fstype_len != 6 || memcmp(m->fstype, "cgroup", 6) != 0 ||
	    ctrl_len == 0)
		return false;
	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *e = c ? c : end;

		if (!ctp_cg_list_has(m->super, m->super_len, p,
				     (size_t)(e - p)))
			return false;
		p = e + 1;
	}
	return true;
}

int ctp_cg_path_in_mount(const char *path, size_t path_len, const char *root,
			 size_t root_len, const char **rel, size_t *rel_len)
{
	const char *p, *end;

	while (root_len && root[root_len - 1] == '/')
		root_len--;
	/* A prefix only when a whole component ends where root ends. */
	if (root_len) {
		if (path_len < root_len || memcmp(path, root, root_len) != 0 ||
		    (path_len > root_len && path[root_len] != '/'))
			return -ENOENT;
		path += root_len;
		path_len -= root_len;
	}
	while (path_len && *path == '/') {
		path++;
		path_len--;
	}
	for (p = path, end = path + path_len; p < end;) {
		const char *s = memchr(p, '/', (size_t)(end - p));
		const char *e = s ? s : end;

		if ((e - p == 1 && p[0] == '.') ||
		    (e - p == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		p = e + 1;
	}
	*rel = path;
	*rel_len = path_len;
	return 0;
}

/* ---- Names and keys ------------------------------------------------------ */

int ctp_cg_v1_key(char *buf, size_t buflen, const char *ctrl, size_t ctrl_len,
		  const char *path, size_t path_len)
{
	size_t n = 3 + ctrl_len + 1 + path_len;

	if (n + 1 > buflen || n > INT32_MAX)
		return -ENAMETOOLONG;
	memcpy(buf, "v1:", 3);
	memcpy(buf + 3, ctrl, ctrl_len);
	buf[3 + ctrl_len] = ':';
	memcpy(buf + 4 + ctrl_len, path, path_len);
	buf[n] = '\0';
	return (int)n;
}

int ctp_cg_v1_key_split(const char *key, size_t len, const char **ctrl,
			size_t *ctrl_len, const char **path, size_t *path_len)
{
	const char *c, *colon;

	if (len < 5 || memcmp(key, "v1:", 3) != 0)
		return -EINVAL;
	c = key + 3;
	colon = memchr(c, ':', len - 3);
	if (!colon || colon == c || colon + 1 == key + len || colon[1] != '/')
		return -EINVAL;
	*ctrl = c;
	*ctrl_len = (size_t)(colon - c);
	*path = colon + 1;
	*path_len = (size_t)(key + len - colon - 1);
	return 0;
}

int ctp_cg_hier_name(const char *ctrl, size_t ctrl_len, char *buf,
		     size_t buflen)
{
	size_t i;

	if (ctrl_len == 0)
		return -EINVAL;
	if (ctrl_len + 1 > buflen || ctrl_len > INT32_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < ctrl_len; i++) {
		char c = ctrl[i];

		if (c == ',' || c == '=')
			c = '-';
		else if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			   c == '_' || c == '-' || c == '.'))
			return -EINVAL;
		buf[i] = c;
	}
	buf[ctrl_len] = '\0';
	/* It becomes one or more dotted components: none may be empty. */
	if (buf[0] == '.' || buf[ctrl_len - 1] == '.' || strstr(buf, ".."))
		return -EINVAL;
	return (int)ctrl_len;
}

static bool has_prefix(const char *k, size_t n, const char *pfx)
{
	size_t m = strlen(pfx);

	return n >= m && memcmp(k, pfx, m) == 0;
}

static bool has_suffix(const char *k, size_t n, const char *sfx)
{
	size_t m = strlen(sfx);

	return n >= m && memcmp(k + n - m, sfx, m) == 0;
}

/* memory.stat keys that count events (the rest are sizes in bytes). */
static bool memory_event_key(const char *k, size_t n)
{
	static const char *const pfx[] = {
		"pg",	  "pswp",    "workingset_", "thp_",   "numa_",
		"zswpin", "zswpout", "zswpwb",	    "swpin_", "swpout_"};
	size_t i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (has_prefix(k, n, pfx[i]))
			return true;
	return false;
}

void ctp_cg_key_meta(enum ctp_cg_keyed_file file, const char *key,
		     size_t key_len, struct ctp_cg_keymeta *out)
{
	struct ctp_cg_keymeta counter = {CTP_UNIT_COUNT, CTP_KIND_COUNTER,
					 CTP_RULE_SUM};
	struct ctp_cg_keymeta bytes = {CTP_UNIT_BYTES, CTP_KIND_GAUGE,
				       CTP_RULE_MAX};

	switch (file) {
	case CTP_CG_V2_CPU_STAT:
	case CTP_CG_V1_CPU_STAT:
		/* All of cpu.stat accumulates: times and event counts. */
		if (has_suffix(key, key_len, "_usec"))
			counter.unit = CTP_UNIT_US;
		else if (has_suffix(key, key_len, "_time") ||
			 has_suffix(key, key_len, "_sum"))
			counter.unit = CTP_UNIT_NS;
		else if (!has_prefix(key, key_len, "nr_"))
			counter.unit = CTP_UNIT_NONE;
		*out = counter;
		return;
	case CTP_CG_V2_MEMORY_EVENTS:
		*out = counter;
		return;
	case CTP_CG_V1_MEMORY_STAT:
		/* v1 repeats each key hierarchically as "total_<key>". */
		if (has_prefix(key, key_len, "total_")) {
			key += 6;
			key_len -= 6;
		}
		/* fall through */
	case CTP_CG_V2_MEMORY_STAT:
		*out = memory_event_key(key, key_len) ? counter : bytes;
		return;
	}
	*out = (struct ctp_cg_keymeta){CTP_UNIT_NONE, CTP_KIND_GAUGE,
				       CTP_RULE_MAX};
}

const struct ctp_id_pair *ctp_cg_pairs_seek(const struct ctp_id_pair *pairs,
					    size_t n, uint32_t id, size_t *pos)
{
	size_t p = *pos < n ? *pos : n, lo = p, hi = p;

	if (p < n && pairs[p].id < id) {
		/* Ahead: the answer is past p, within doubling steps. */
		size_t step = 1;

		lo = hi = p + 1;
		while (hi < n && pairs[hi].id < id) {
			lo = hi + 1;
			step *= 2;
			hi = lo + step - 1;
		}
		if (hi > n)
			hi = n;
	} else if (p > 0 && pairs[p - 1].id >= id) {
		lo = 0; /* behind */
		hi = p - 1;
	}
	/* The first pair not below id, in [lo, hi] (pairs[hi] is not below
	 * it, or hi == n). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pairs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return lo < n && pairs[lo].id == id ? &pairs[lo] : NULL;
}
