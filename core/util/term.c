/* SPDX-License-Identifier: MIT */
/* Text for a terminal (term.h). */
#include "term.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The well-formed UTF-8 sequence at p: its length (1-4) when the n bytes
 * hold it whole, 0 otherwise; *prefix tells whether the n bytes are the
 * start of one that more bytes could complete.
 */
static size_t utf8_scan(const unsigned char *p, size_t n, bool *prefix)
{
	*prefix = false;
	if (n == 0)
		return 0;
	unsigned c = p[0];
	size_t len;
	unsigned lo = 0x80, hi = 0xbf; /* allowed range of the 2nd byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else {
		return 0;
	}
	if (n >= 2 && (p[1] < lo || p[1] > hi))
		return 0;
	for (size_t i = 2; i < len && i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n < len) {
		*prefix = true;
		return 0;
	}
	return len;
}

size_t ctp_utf8_len(const unsigned char *p, size_t n)
{
	bool prefix;
	return utf8_scan(p, n, &prefix);
}

size_t ctp_term_char(const unsigned char *p, size_t n, char *out,
		     size_t *outlen)
{
	size_t l = ctp_utf8_len(p, n);
	/* C1 controls are U+0080-009F: 0xc2 0x80-0x9f in UTF-8. */
	bool ctrl = l == 1 ? p[0] < 0x20 || p[0] == 0x7f
			   : l == 2 && p[0] == 0xc2 && p[1] < 0xa0;
	if (l && !ctrl) {
		memcpy(out, p, l);
		*outlen = l;
		return l;
	}
	static const char hex[] = "0123456789abcdef";
	l = l ? l : 1;
	*outlen = 0;
	for (size_t i = 0; i < l; i++) { /* "\xNN", no NUL: 4 a byte */
		out[(*outlen)++] = '\\';
		out[(*outlen)++] = 'x';
		out[(*outlen)++] = hex[p[i] >> 4];
		out[(*outlen)++] = hex[p[i] & 15];
	}
	return l;
}

char *ctp_term_escape(const char *s, size_t n, size_t max, char *out,
		      size_t outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, shown = 0;
	for (size_t i = 0; i < n; shown++) {
		char tmp[CTP_TERM_CHAR_MAX];
		size_t tl, l = ctp_term_char(p + i, n - i, tmp, &tl);
		if (p[i] == '\\') /* doubled: "\\x1b" is no escape */
			tmp[tl++] = '\\';
		if (shown >= max || o + tl + 4 > outlen) {
			if (o + 4 <= outlen) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(out + o, tmp, tl);
		o += tl;
		i += l;
	}
	out[o] = '\0';
	return out;
}

/* ---- The stream ---- */

struct stream {
	FILE *to;
	unsigned char tail[4]; /* a sequence the last write cut short */
	size_t ntail;
};

/* Write buf[0, n) by the rule; keep in s->tail a last sequence that more
 * bytes may complete when `more`. Returns the bytes taken. */
static size_t put(struct stream *s, const unsigned char *buf, size_t n,
		  bool more)
{
	size_t i = 0;
	while (i < n) {
		char out[CTP_TERM_CHAR_MAX];
		size_t ol;
		bool prefix;
		if (more && !utf8_scan(buf + i, n - i, &prefix) && prefix)
			break;
		if (buf[i] == '\n') {
			fputc('\n', s->to);
			i++;
			continue;
		}
		i += ctp_term_char(buf + i, n - i, out, &ol);
		fwrite(out, 1, ol, s->to);
	}
	return i;
}

static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	struct stream *s = cookie;
	const unsigned char *b = (const unsigned char *)buf;
	size_t i = 0;
	/* Complete a sequence cut short by the last write first. */
	while (s->ntail && i < size) {
		unsigned char j[8];
		size_t nj = s->ntail, took;
		memcpy(j, s->tail, nj);
		while (nj < sizeof(j) && i < size)
			j[nj++] = b[i++];
		took = put(s, j, nj, true);
		if (took >= s->ntail) { /* the tail went out, and took more */
			i -= nj - took;
			s->ntail = 0;
		} else { /* still a prefix: every byte of j is in it */
			memcpy(s->tail, j, nj);
			s->ntail = nj;
		}
	}
	if (i < size) { /* no tail left: the rest, its own tail kept */
		size_t took = put(s, b + i, size - i, true);
		memcpy(s->tail, b + i + took, size - i - took);
		s->ntail = size - i - took;
	}
	/* Through at once, so that a write error shows where the caller
	 * flushes this stream. */
	return fflush(s->to) != 0 || ferror(s->to) ? -1 : (ssize_t)size;
}

/* The streams open now, for ctp_term_raw (the CLI opens one at a time,
 * on its main thread). */
static struct {
	FILE *f;
	struct stream *s;
} open_streams[4];

static int stream_close(void *cookie)
{
	struct stream *s = cookie;
	put(s, s->tail, s->ntail, false);
	int r = fflush(s->to);
	for (size_t i = 0; i < sizeof(open_streams) / sizeof(open_streams[0]);
	     i++)
		if (open_streams[i].s == s)
			open_streams[i].f = NULL, open_streams[i].s = NULL;
	free(s);
	return r;
}

FILE *ctp_term_stream(FILE *to)
{
	size_t slot = 0, n = sizeof(open_streams) / sizeof(open_streams[0]);
	while (slot < n && open_streams[slot].f)
		slot++;
	struct stream *s = slot < n ? calloc(1, sizeof(*s)) : NULL;
	cookie_io_functions_t io = {.write = stream_write,
				    .close = stream_close};
	FILE *f = s ? fopencookie(s, "w", io) : NULL;
	if (!f) {
		free(s);
		return NULL;
	}
	s->to = to;
	open_streams[slot].f = f;
	open_streams[slot].s = s;
	return f;
}

void ctp_term_raw(FILE *f, const char *seq)
{
	for (size_t i = 0; i < sizeof(open_streams) / sizeof(open_streams[0]);
	     i++)
		if (open_streams[i].f == f) {
			fflush(f); /* what came before, by the rule */
			fputs(seq, open_streams[i].s->to);
			return;
		}
	fputs(seq, f);
}

/* ---- Colour ---- */

static enum ctp_color color_mode;

int ctp_color_parse(const char *s, enum ctp_color *out)
{
	static const char *const names[] = {"auto", "always", "never"};
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum ctp_color)i;
			return 0;
		}
	return -EINVAL;
}

void ctp_color_set(enum ctp_color mode)
{
	color_mode = mode;
}

bool ctp_color_for(int fd)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	if (color_mode == CTP_COLOR_NEVER)
		return false;
	if (color_mode == CTP_COLOR_ALWAYS)
		return fd != STDERR_FILENO || isatty(fd);
	return isatty(fd) && term && *term && strcmp(term, "dumb") != 0 &&
	       !(nc && *nc);
}

const char *ctp_color_label(const char *label, const char *sgr, char *buf,
			    size_t len)
{
	if (!ctp_color_for(STDERR_FILENO))
		return label;
	snprintf(buf, len, "%s%s" CTP_SGR_RESET, sgr, label);
	return buf;
}
