/* SPDX-License-Identifier: MIT */
/*
 * Known tsd_s layouts of jemalloc builds without debug information
 * (README.md, "Layouts without DWARF"): the layouts file's parser, the
 * version string found in a build's bytes, and the lookup by version,
 * architecture and TLS block size. Everything here but the file read is a
 * pure function over a buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "jep.h"

/* ---- The layouts file ---------------------------------------------------- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static bool name_char(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
}

/* A word of [p, end): its length up to a blank; *p moves past it. */
static size_t word(const char **p, const char *end)
{
	const char *s = *p;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	return (size_t)(*p - s);
}

/* A decimal or 0x number of [s, s + n), at most 2^32 (a TLS block is
 * never that large). */
static int number(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	unsigned base = 10;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (is_digit(c))
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		v = v * base + d;
		if (v > (1ull << 32))
			return -ERANGE;
	}
	*out = v;
	return 0;
}

bool ctp_jep_layout_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= sizeof(((struct ctp_jep_layout *)0)->name))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(name[i]))
			return false;
	return true;
}

/* The text fields of one entry; why on a bad one. */
static int entry_text(struct ctp_jep_layout *e, int k, const char *s, size_t n,
		      const char **why)
{
	char *dst = k == 0 ? e->name : k == 1 ? e->version : e->arch;
	size_t cap = k == 0   ? sizeof(e->name)
		     : k == 1 ? sizeof(e->version)
			      : sizeof(e->arch);
	for (size_t i = 0; i < n; i++)
		if (k == 1 ? (s[i] < '!' || s[i] > '~') : !name_char(s[i])) {
			*why = k == 0	? "a name is [A-Za-z0-9._-]"
			       : k == 1 ? "a version is printable ASCII"
					: "an architecture is [A-Za-z0-9._-]";
			return -EINVAL;
		}
	if (n >= cap) {
		*why = k == 0	? "name longer than 47 bytes"
		       : k == 1 ? "version longer than 79 bytes"
				: "architecture longer than 15 bytes";
		return -EINVAL;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* The offsets of a parsed entry fit its TLS block and do not overlap. */
static int entry_check(const struct ctp_jep_layout *e, const char **why)
{
	uint64_t b = e->tls_size, t = e->tsd_offset;
	if (e->state_pad > 7) {
		*why = "state_pad is more than 7";
		return -EINVAL;
	}
	if (t >= b || e->off_state + 1 + e->state_pad > b - t ||
	    e->off_alloc + 8 > b - t || e->off_dealloc + 8 > b - t) {
		*why = "an offset lies outside the TLS block";
		return -EINVAL;
	}
	if (e->off_alloc % 8 || e->off_dealloc % 8) {
		*why = "a counter offset is not a multiple of 8";
		return -EINVAL;
	}
	/* [state, state + 1 + pad) and the two counters apart. */
	uint64_t s0 = e->off_state, s1 = e->off_state + 1 + e->state_pad;
	if (e->off_alloc == e->off_dealloc ||
	    (s0 < e->off_alloc + 8 && e->off_alloc < s1) ||
	    (s0 < e->off_dealloc + 8 && e->off_dealloc < s1)) {
		*why = "two members at the same offset";
		return -EINVAL;
	}
	return 0;
}

/* One non-blank, non-comment line [s, end): 9 words. *col (1-based) of
 * the word at fault. */
static int parse_entry(const char *s, const char *end, struct ctp_jep_layout *e,
		       size_t *col, const char **why)
{
	const char *p = s;
	int k = 0;
	memset(e, 0, sizeof(*e));
	/* name version arch, then these */
	uint64_t *num[6] = {&e->tls_size,  &e->tsd_offset,  &e->off_state,
			    &e->off_alloc, &e->off_dealloc, &e->state_pad};
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || *p == '#')
			break;
		const char *w = p;
		size_t n = word(&p, end);
		*col = (size_t)(w - s) + 1;
		if (k >= 9) {
			*why = "more than 9 words";
			return -EINVAL;
		}
		if (k < 3 && entry_text(e, k, w, n, why) < 0)
			return -EINVAL;
		if (k >= 3 && number(w, n, num[k - 3]) < 0) {
			*why = "expected a number (decimal or 0x), at most "
			       "2^32";
			return -EINVAL;
		}
		k++;
	}
	if (k < 9) {
		*col = (size_t)(p - s) + 1;
		*why = "expected 9 words: name version arch tls_size "
		       "tsd_offset state allocated deallocated state_pad";
		return -EINVAL;
	}
	*col = 1;
	return entry_check(e, why);
}

int ctp_jep_layouts_parse(const char *buf, size_t len,
			  struct ctp_jep_layouts *out, size_t *line,
			  size_t *col, const char **why)
{
	const char *p = buf, *end = buf + len;
	*line = 0;
	*col = 0;
	if (len > CTP_JEP_LAYOUTS_MAX_BYTES) {
		*why = "file larger than 1 MiB";
		return -EFBIG;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *q = p, *bad;
		(*line)++;
		if (eol > p && eol[-1] == '\r') /* CRLF line ends */
			eol--;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if (q < eol && *q != '#') {
			struct ctp_jep_layout e;
			if ((bad = memchr(p, '\0', (size_t)(eol - p))) ||
			    (bad = memchr(p, '\r', (size_t)(eol - p)))) {
				*col = (size_t)(bad - p) + 1;
				*why = "a NUL byte or a CR inside the line";
				return -EINVAL;
			}
			if (parse_entry(p, eol, &e, col, why) < 0)
				return -EINVAL;
			if (out->n >= CTP_JEP_LAYOUTS_MAX) {
				*col = 1;
				*why = "more than 4096 layouts";
				return -E2BIG;
			}
			if (CTP_GROW(out->v, out->cap, out->n + 1, 16) < 0)
				return -ENOMEM;
			out->v[out->n++] = e;
		}
		p = nl ? nl + 1 : end;
	}
	*line = *col = 0;
	return 0;
}

int ctp_jep_layouts_load(const char *path, struct ctp_jep_layouts *out,
			 char *err, size_t errlen)
{
	size_t line = 0, col = 0, n = 0;
	const char *why = NULL;
	struct ctp_jep_layouts mine = {0};
	char *buf = malloc(CTP_JEP_LAYOUTS_MAX_BYTES + 1);
	/* A regular file, opened without blocking: a FIFO or a device under
	 * the name is refused, never waited on. */
	int fd = ctp_open_regular(AT_FDCWD, path), r = 0;
	if (!buf || fd < 0) {
		r = !buf ? -ENOMEM : fd;
		snprintf(err, errlen, "%s: %s", path,
			 r == -EINVAL ? "not a regular file" : strerror(-r));
		goto out;
	}
	while (n <= CTP_JEP_LAYOUTS_MAX_BYTES) {
		ssize_t k =
			read(fd, buf + n, CTP_JEP_LAYOUTS_MAX_BYTES + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
			goto out;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	/* All of the file or nothing of it. */
	r = ctp_jep_layouts_parse(buf, n, &mine, &line, &col, &why);
	if (r == 0 && mine.n &&
	    (r = CTP_GROW(out->v, out->cap, out->n + mine.n, 16)) == 0) {
		memcpy(out->v + out->n, mine.v, mine.n * sizeof(*mine.v));
		out->n += mine.n;
	}
	if (r < 0 && why && line)
		snprintf(err, errlen, "%s:%zu:%zu: %s", path, line, col, why);
	else if (r < 0)
		snprintf(err, errlen, "%s: %s", path, why ? why : strerror(-r));
	ctp_jep_layouts_free(&mine);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

void ctp_jep_layouts_free(struct ctp_jep_layouts *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const struct ctp_jep_layout *
ctp_jep_layout_find(const struct ctp_jep_layouts *l, const char *version,
		    const char *arch, uint64_t tls_size)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (l->v[i].tls_size == tls_size &&
		    !strcmp(l->v[i].arch, arch) &&
		    !strcmp(l->v[i].version, version))
			return &l->v[i];
	return NULL;
}

/* ---- A build's identity ---------------------------------------------------
 */

/* "<digits>.<digits>.<digits>-<digits>-g<40 hex>" at s (at most end):
 * its length, or 0. */
static size_t version_at(const char *s, const char *end)
{
	const char *p = s;
	for (int part = 0; part < 4; part++) {
		const char *d = p;
		while (p < end && is_digit(*p) && p - d < 10)
			p++;
		if (p == d || p == end)
			return 0;
		char sep = part < 2 ? '.' : '-';
		if (*p != sep)
			return 0;
		p++;
	}
	if (p == end || *p != 'g')
		return 0;
	p++;
	for (int i = 0; i < 40; i++, p++)
		if (p == end || !is_hex(*p))
			return 0;
	/* Not the middle of a longer run of hex digits. */
	if (p < end && is_hex(*p))
		return 0;
	return (size_t)(p - s);
}

int ctp_jep_find_version(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *end = buf + len;
	for (const char *p = buf; p < end; p++) {
		if (!is_digit(*p) ||
		    (p > buf && (is_digit(p[-1]) || p[-1] == '.')))
			continue;
		size_t n = version_at(p, end);
		if (!n || n >= outlen) /* a longer one is not jemalloc's */
			continue;
		memcpy(out, p, n);
		out[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

const char *ctp_jep_arch_name(unsigned e_machine)
{
	switch (e_machine) {
	case 62: /* EM_X86_64 */
		return "x86_64";
	case 183: /* EM_AARCH64 */
		return "aarch64";
	default:
		return NULL;
	}
}

int ctp_jep_layout_line(const struct ctp_jep_layout *e, char *buf, size_t len)
{
	return snprintf(buf, len, "%s %s %s %llu %llu %llu %llu %llu %llu",
			e->name, e->version, e->arch,
			(unsigned long long)e->tls_size,
			(unsigned long long)e->tsd_offset,
			(unsigned long long)e->off_state,
			(unsigned long long)e->off_alloc,
			(unsigned long long)e->off_dealloc,
			(unsigned long long)e->state_pad);
}
