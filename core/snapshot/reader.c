/* SPDX-License-Identifier: MIT */
/* Snapshot reader: zstd -> MessagePack -> validated structs, docs/FORMAT.md. */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "column.h"
#include "filekind.h"
#include "outfile.h"
#include "term.h"

/* ---- The snapshot object ---- */

struct ctp_snap {
	char *raw;
	size_t raw_len;
	size_t raw_map;	    /* raw is a mapping of this many bytes; 0: malloc */
	msgpack_zone *zone; /* msgpack-c's tree, one chunk of tree_bytes */
	msgpack_zone *dzone; /* everything decoded from it (zalloc) */
	/* The memory budget (docs/FORMAT.md "Size cap"): what the open may
	 * hold, what it holds so far, and whether zalloc refused for it. */
	uint64_t cap, used;
	bool over;
	struct big *bigs; /* zalloc's large blocks */
	msgpack_object root;
	struct ctp_snap_header hdr;
	struct ctp_snap_field *fields;
	size_t n_fields;
	uint32_t *by_name; /* field indexes sorted by name */
	struct ctp_snap_plugin *plugins;
	size_t n_plugins;
	struct ctp_snap_readfail rf;
	struct ctp_snap_table tables[CTP_SCOPE_EXITED + 1]; /* by scope */
	/* Per field, its column once asked for (ctp_snap_col); the open
	 * charged them all to the budget. */
	struct ctp_col **cols;
	/* While opening. */
	const char *name;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 3, 4)))
bad(struct ctp_snap *s, int ret, const char *fmt, ...)
{
	/* An allocation the budget refused fails as "out of memory" where it
	 * is made; say what it is. */
	if (s->over && ret == -ENOMEM) {
		s->over = false;
		return bad(s, -EFBIG,
			   "decoding needs more memory than the decompression "
			   "cap of %llu bytes allows (%zu bytes of "
			   "MessagePack); raise it with --max-decompressed "
			   "or the config's max_decompressed_bytes",
			   (unsigned long long)s->cap, s->raw_len);
	}
	if (s->err && s->errlen) {
		int n = snprintf(s->err, s->errlen, "%s: ", s->name);
		if (n >= 0 && (size_t)n < s->errlen) {
			/* Names from the file may hold any byte: the message
			 * is for a terminal (term.h). */
			char msg[1024];
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(msg, sizeof(msg), fmt, ap);
			va_end(ap);
			ctp_term_escape(msg, strlen(msg), SIZE_MAX, s->err + n,
					s->errlen - (size_t)n);
		}
	}
	return ret;
}

/*
 * Decoded data, charged to the budget before it is allocated. Small blocks
 * come from the zone at up to twice their size (one that does not fit the
 * chunk's rest leaves that rest unused); a large one (a column's values)
 * is a malloc of its own, charged at its size plus malloc's overhead. NULL
 * (and s->over) when over the budget.
 */
struct big {
	struct big *next;
	max_align_t data[];
};

#define BIG_BLOCK (MSGPACK_ZONE_CHUNK_SIZE / 2)

static void *zalloc(struct ctp_snap *s, size_t n)
{
	size_t a = ((n ? n : 1) + 7) & ~(size_t)7;
	uint64_t charge = a > BIG_BLOCK ? a + sizeof(struct big) + 32 : 2 * a;
	if (n > SIZE_MAX / 4 || charge > s->cap - s->used) {
		s->over = true;
		return NULL;
	}
	s->used += charge;
	if (a <= BIG_BLOCK)
		return msgpack_zone_malloc(s->dzone, a);
	struct big *b = malloc(sizeof(*b) + a);
	if (!b)
		return NULL;
	b->next = s->bigs;
	s->bigs = b;
	return b->data;
}

/* ---- Decompression ---- */

static const unsigned char zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

/* The largest zstd window accepted: the writer's levels 1-19 stream with
 * windows of at most 2^23 bytes (docs/FORMAT.md "Size cap"). */
#define WINDOW_LOG_MAX 23

struct dec {
	ZSTD_DCtx *d;
	char *out;
	size_t len, cap, max;
	size_t map; /* out is a mapping of this many bytes; 0: malloc */
	uint64_t in_total;
	bool done;
};

static int dec_feed(struct ctp_snap *s, struct dec *z, const void *data,
		    size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n && z->in_total + i < sizeof(zstd_magic); i++)
		if (p[i] != zstd_magic[z->in_total + i])
			return bad(s, -EINVAL,
				   "not a ctprof-core snapshot (not "
				   "zstd-compressed)");
	/* RFC 8878 3.1.1.1.1: bit 2 of the frame header descriptor, the byte
	 * after the magic, is the content checksum flag. The writer always
	 * sets it; without it the decoder would verify nothing. */
	if (z->in_total <= sizeof(zstd_magic) &&
	    z->in_total + n > sizeof(zstd_magic) &&
	    !(p[sizeof(zstd_magic) - z->in_total] & 0x04))
		return bad(s, -EINVAL,
			   "the zstd frame has no content checksum (the "
			   "ctprof-core writer always sets one)");
	z->in_total += n;
	if (z->done) {
		if (n)
			return bad(s, -EINVAL,
				   "trailing data after the zstd frame");
		return 0;
	}

	ZSTD_inBuffer ib = {data, n, 0};
	for (;;) {
		if (z->len == z->cap && !z->map) {
			size_t ncap = z->cap < 65536 ? 65536 : z->cap * 2;
			if (ncap > z->max + 1 || ncap < z->cap)
				ncap = z->max + 1;
			char *nb = realloc(z->out, ncap);
			if (!nb)
				return bad(s, -ENOMEM,
					   "out of memory decompressing");
			z->out = nb;
			z->cap = ncap;
		}
		ZSTD_outBuffer ob = {z->out, z->cap, z->len};
		size_t r = ZSTD_decompressStream(z->d, &ob, &ib);
		z->len = ob.pos;
		if (ZSTD_getErrorCode(r) ==
		    ZSTD_error_frameParameter_windowTooLarge)
			return bad(s, -EINVAL,
				   "the zstd frame needs a window over %d MiB "
				   "(the ctprof-core writer's need at most %d)",
				   1 << (WINDOW_LOG_MAX - 20),
				   1 << (WINDOW_LOG_MAX - 20));
		if (ZSTD_isError(r))
			return bad(s, -EINVAL, "corrupt zstd data: %s",
				   ZSTD_getErrorName(r));
		/* The buffer is at most max + 1 bytes: filling it means
		 * the data is larger than the cap. */
		if (z->len > z->max)
			return bad(s, -EFBIG,
				   "decompressed data exceeds the "
				   "decompression cap of %zu bytes; raise "
				   "it with --max-decompressed or the "
				   "config's max_decompressed_bytes",
				   z->max);
		if (r == 0) {
			z->done = true;
			if (ib.pos < ib.size)
				return bad(s, -EINVAL,
					   "trailing data after the zstd "
					   "frame");
			return 0;
		}
		/* Done with this input unless the decoder stopped because
		 * the output was full (it may still hold bytes). */
		if (ib.pos == ib.size && ob.pos < ob.size)
			return 0;
	}
}

static int dec_finish(struct ctp_snap *s, struct dec *z)
{
	if (z->in_total == 0)
		return bad(s, -EINVAL,
			   "empty file, not a ctprof-core snapshot");
	if (z->in_total < sizeof(zstd_magic))
		return bad(s, -EINVAL,
			   "not a ctprof-core snapshot (too short to be "
			   "zstd-compressed)");
	if (!z->done)
		return bad(s, -EINVAL,
			   "truncated: the zstd frame ends before its end "
			   "mark (%llu bytes read)",
			   (unsigned long long)z->in_total);
	return 0;
}

static int dec_init(struct ctp_snap *s, struct dec *z, uint64_t max)
{
	memset(z, 0, sizeof(*z));
	/* One byte of headroom so "exactly max" is distinguishable from
	 * "more than max". */
	z->max = max > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)max;
	z->d = ZSTD_createDCtx();
	if (!z->d)
		return bad(s, -ENOMEM, "out of memory");
	if (ZSTD_isError(ZSTD_DCtx_setParameter(z->d, ZSTD_d_windowLogMax,
						WINDOW_LOG_MAX)))
		return bad(s, -EINVAL, "zstd: cannot limit the window");
	/* Address space for all of max + 1 at once: growing never copies (a
	 * copying realloc holds the old and the new buffer, twice the data),
	 * and only the pages written count. Where the reservation fails,
	 * realloc doubling it is. */
	void *m = mmap(NULL, z->max + 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != MAP_FAILED) {
		z->out = m;
		z->cap = z->map = z->max + 1;
	}
	return 0;
}

static void dec_free(struct dec *z)
{
	if (z->map)
		munmap(z->out, z->map);
	else
		free(z->out);
	z->out = NULL;
	ZSTD_freeDCtx(z->d);
	z->d = NULL;
}

/* ---- MessagePack pre-scan ---- */

static uint64_t be(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* What one MessagePack header byte says about the bytes after it. */
struct mp_head {
	uint64_t skip;	    /* payload bytes right after the header */
	uint64_t add;	    /* elements it contains (fixarray, fixmap) */
	uint8_t lenbytes;   /* a big-endian payload length follows */
	uint8_t extra;	    /* payload bytes besides that length (ext type) */
	uint8_t countbytes; /* a big-endian element count follows */
	uint8_t pairs;	    /* a map: two elements per counted entry */
};

/* Classify header byte c (the MessagePack spec's formats); -EINVAL for the
 * one byte the spec leaves unused (0xc1). */
static int mp_head(unsigned c, struct mp_head *h)
{
	*h = (struct mp_head){0};
	if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
		return 0; /* fixint, nil, false, true */
	if (c <= 0x8f)
		h->add = 2 * (uint64_t)(c & 0x0f); /* fixmap */
	else if (c <= 0x9f)
		h->add = c & 0x0f; /* fixarray */
	else if (c <= 0xbf)
		h->skip = c & 0x1f;	 /* fixstr */
	else if (c == 0xc4 || c == 0xd9) /* bin 8, str 8 */
		h->lenbytes = 1;
	else if (c == 0xc5 || c == 0xda) /* bin 16, str 16 */
		h->lenbytes = 2;
	else if (c == 0xc6 || c == 0xdb) /* bin 32, str 32 */
		h->lenbytes = 4;
	else if (c >= 0xc7 && c <= 0xc9) /* ext 8/16/32: length, type */
		h->lenbytes = (uint8_t)(1u << (c - 0xc7)), h->extra = 1;
	else if (c == 0xcc || c == 0xd0) /* uint 8, int 8 */
		h->skip = 1;
	else if (c == 0xcd || c == 0xd1)
		h->skip = 2;
	else if (c == 0xca || c == 0xce || c == 0xd2) /* float 32, 32-bit */
		h->skip = 4;
	else if (c == 0xcb || c == 0xcf || c == 0xd3) /* float 64, 64-bit */
		h->skip = 8;
	else if (c >= 0xd4 && c <= 0xd8) /* fixext 1..16, plus the type */
		h->skip = 1 + (1u << (c - 0xd4));
	else if (c >= 0xdc && c <= 0xdf) { /* array/map 16/32 */
		h->countbytes = (c == 0xdc || c == 0xde) ? 2 : 4;
		h->pairs = c >= 0xde;
	} else
		return -EINVAL;
	return 0;
}

/*
 * Check that raw holds exactly one well-formed MessagePack object whose
 * containers never claim more elements than there are bytes left. msgpack-c
 * allocates a container's elements before reading them, so this bounds what
 * a hostile length header can make it allocate.
 */
static int mp_prescan(struct ctp_snap *s, const unsigned char *p, size_t len,
		      uint64_t *elems)
{
	size_t off = 0;
	uint64_t pending = 1;
	struct mp_head h;

	*elems = 0;
	while (pending) {
		size_t at = off;

		if (off >= len)
			goto truncated;
		if (mp_head(p[off++], &h) < 0)
			return bad(s, -EINVAL,
				   "corrupt MessagePack: invalid byte 0x%02x "
				   "at offset %zu",
				   p[at], at);
		pending--;
		if (len - off < (size_t)h.countbytes + h.lenbytes)
			goto truncated;
		if (h.countbytes) {
			h.add = be(p + off, h.countbytes) << h.pairs;
			off += h.countbytes;
		}
		if (h.lenbytes) {
			h.skip = be(p + off, h.lenbytes) + h.extra;
			off += h.lenbytes;
		}
		if (h.skip > len - off)
			goto truncated;
		off += (size_t)h.skip;
		pending += h.add;
		*elems += h.add;
		/* Every element takes at least one byte. */
		if (pending > len - off)
			return bad(s, -EINVAL,
				   "corrupt or truncated MessagePack: a "
				   "container at offset %zu claims more "
				   "elements than bytes remain",
				   at);
	}
	if (off != len)
		return bad(s, -EINVAL,
			   "trailing garbage: %zu bytes after the MessagePack "
			   "object",
			   len - off);
	return 0;
truncated:
	return bad(s, -EINVAL,
		   "corrupt MessagePack: data ends inside an "
		   "object (truncated)");
}

/* ---- Object helpers ---- */

static const char *objtype(const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		return "nil";
	case MSGPACK_OBJECT_BOOLEAN:
		return "a boolean";
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return "an unsigned integer";
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return "a negative integer";
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return "a float";
	case MSGPACK_OBJECT_STR:
		return "a string";
	case MSGPACK_OBJECT_BIN:
		return "binary data";
	case MSGPACK_OBJECT_ARRAY:
		return "an array";
	case MSGPACK_OBJECT_MAP:
		return "a map";
	default:
		return "an extension object";
	}
}

static bool str_eq(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
	       memcmp(o->via.str.ptr, s, n) == 0;
}

/* Value of key k in map m, or NULL. The first of duplicate keys wins. */
static const msgpack_object *get(const msgpack_object *m, const char *k)
{
	for (uint32_t i = 0; i < m->via.map.size; i++)
		if (str_eq(&m->via.map.ptr[i].key, k))
			return &m->via.map.ptr[i].val;
	return NULL;
}

/* A required key of a given msgpack type. */
static int need(struct ctp_snap *s, const msgpack_object *m, const char *where,
		const char *k, msgpack_object_type t, const char *what,
		const msgpack_object **out)
{
	const msgpack_object *v = get(m, k);
	if (!v)
		return bad(s, -EINVAL, "%s: missing key \"%s\"", where, k);
	if (v->type != t)
		return bad(s, -EINVAL, "%s.%s: expected %s, found %s", where, k,
			   what, objtype(v));
	*out = v;
	return 0;
}

static int need_map(struct ctp_snap *s, const msgpack_object *m,
		    const char *where, const char *k,
		    const msgpack_object **out)
{
	return need(s, m, where, k, MSGPACK_OBJECT_MAP, "a map", out);
}

static int need_array(struct ctp_snap *s, const msgpack_object *m,
		      const char *where, const char *k,
		      const msgpack_object **out)
{
	return need(s, m, where, k, MSGPACK_OBJECT_ARRAY, "an array", out);
}

static int need_u64(struct ctp_snap *s, const msgpack_object *m,
		    const char *where, const char *k, uint64_t *out)
{
	const msgpack_object *v = NULL;
	int ret = need(s, m, where, k, MSGPACK_OBJECT_POSITIVE_INTEGER,
		       "an unsigned integer", &v);
	if (ret == 0)
		*out = v->via.u64;
	return ret;
}

/* An optional unsigned key: *out is 0 when the key is absent (a file
 * written before it existed). */
static int opt_u64(struct ctp_snap *s, const msgpack_object *m,
		   const char *where, const char *k, uint64_t *out)
{
	*out = 0;
	return get(m, k) ? need_u64(s, m, where, k, out) : 0;
}

static char *zstrdup(struct ctp_snap *s, const char *p, size_t n)
{
	char *c = zalloc(s, n + 1);
	if (c) {
		memcpy(c, p, n);
		c[n] = '\0';
	}
	return c;
}

/*
 * A string-or-nil key: *out is a NUL-terminated copy, or `dflt` when the key
 * is nil or (if !required) missing.
 */
static int opt_str(struct ctp_snap *s, const msgpack_object *m,
		   const char *where, const char *k, bool required,
		   const char *dflt, const char **out)
{
	const msgpack_object *v = get(m, k);
	if (!v && required)
		return bad(s, -EINVAL, "%s: missing key \"%s\"", where, k);
	if (!v || v->type == MSGPACK_OBJECT_NIL) {
		*out = dflt;
		return 0;
	}
	if (v->type != MSGPACK_OBJECT_STR)
		return bad(s, -EINVAL,
			   "%s.%s: expected a string or nil, "
			   "found %s",
			   where, k, objtype(v));
	*out = zstrdup(s, v->via.str.ptr, v->via.str.size);
	return *out ? 0 : bad(s, -ENOMEM, "out of memory");
}

/* ---- Header, fields, plugins, read failures ---- */

/* The capture keys added to version 1 after its release, each optional:
 * ptrace_capable, start_boottime_ns, self_tgids, cgroups_read_boottime_ns,
 * walk_source, walk_unlisted, walk_fallback and walk_fallbacks. */
static int parse_capture_late(struct ctp_snap *s, const msgpack_object *cap)
{
	struct ctp_snap_header *h = &s->hdr;
	int ret;
	if ((ret = opt_str(s, cap, "capture", "walk_source", false, NULL,
			   &h->walk_source)) < 0 ||
	    (ret = opt_str(s, cap, "capture", "walk_fallback", false, NULL,
			   &h->walk_fallback)) < 0)
		return ret;
	const msgpack_object *wf = get(cap, "walk_fallbacks");
	if (wf && wf->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(s, -EINVAL,
			   "capture.walk_fallbacks: expected an unsigned "
			   "integer, found %s",
			   objtype(wf));
	h->walk_fallbacks = wf ? wf->via.u64 : 0;
	const msgpack_object *wu = get(cap, "walk_unlisted");
	if (wu && wu->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(s, -EINVAL,
			   "capture.walk_unlisted: expected an unsigned "
			   "integer, found %s",
			   objtype(wu));
	h->walk_unlisted = wu ? wu->via.u64 : 0;
	const msgpack_object *pc = get(cap, "ptrace_capable");
	h->ptrace_capable = -1;
	if (pc && pc->type != MSGPACK_OBJECT_BOOLEAN)
		return bad(s, -EINVAL,
			   "capture.ptrace_capable: expected a boolean, found "
			   "%s",
			   objtype(pc));
	if (pc)
		h->ptrace_capable = pc->via.boolean;
	const msgpack_object *bt = get(cap, "start_boottime_ns");
	if (bt && bt->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(s, -EINVAL,
			   "capture.start_boottime_ns: expected an unsigned "
			   "integer, found %s",
			   objtype(bt));
	h->start_boottime_ns = bt ? bt->via.u64 : 0;
	const msgpack_object *cr = get(cap, "cgroups_read_boottime_ns");
	if (cr && (cr->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
		   cr->via.u64 < h->start_boottime_ns))
		return bad(s, -EINVAL,
			   "capture.cgroups_read_boottime_ns: expected an "
			   "unsigned integer not before start_boottime_ns, "
			   "found %s",
			   objtype(cr));
	h->cgroups_read_boottime_ns = cr ? cr->via.u64 : 0;
	const msgpack_object *st = get(cap, "self_tgids");
	if (st && (st->type != MSGPACK_OBJECT_ARRAY ||
		   st->via.array.size > CTP_SNAP_MAX_SELF))
		return bad(s, -EINVAL,
			   "capture.self_tgids: expected an array of at most "
			   "%d tgids, found %s",
			   CTP_SNAP_MAX_SELF, objtype(st));
	for (uint32_t i = 0; st && i < st->via.array.size; i++) {
		const msgpack_object *t = &st->via.array.ptr[i];
		if (t->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    t->via.u64 > UINT32_MAX)
			return bad(s, -EINVAL,
				   "capture.self_tgids[%u]: expected a tgid, "
				   "found %s",
				   i, objtype(t));
		h->self_tgid[h->n_self++] = (uint32_t)t->via.u64;
	}
	return 0;
}

static int parse_header(struct ctp_snap *s)
{
	const msgpack_object *r = &s->root, *v, *tool, *cap, *roots;
	struct ctp_snap_header *h = &s->hdr;
	int ret;

	if (r->type != MSGPACK_OBJECT_MAP)
		return bad(s, -EINVAL,
			   "not a ctprof-core snapshot (the top "
			   "level is %s, not a map)",
			   objtype(r));
	v = get(r, "format");
	if (!v)
		return bad(s, -EINVAL,
			   "not a ctprof-core snapshot (no "
			   "\"format\" key)");
	if (!str_eq(v, CTP_SNAP_FORMAT)) {
		if (v->type == MSGPACK_OBJECT_STR)
			return bad(
				s, -EINVAL,
				"not a ctprof-core snapshot (format is "
				"\"%.*s\", expected \"" CTP_SNAP_FORMAT "\")",
				(int)(v->via.str.size > 64 ? 64
							   : v->via.str.size),
				v->via.str.ptr);
		return bad(s, -EINVAL,
			   "not a ctprof-core snapshot (format "
			   "is %s)",
			   objtype(v));
	}
	v = get(r, "version");
	if (!v || v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(s, -EINVAL, "snapshot has no valid \"version\"");
	if (v->via.u64 != CTP_SNAP_VERSION)
		return bad(s, -EPROTONOSUPPORT,
			   "unsupported snapshot version %llu (this reader "
			   "supports version %d)",
			   (unsigned long long)v->via.u64, CTP_SNAP_VERSION);
	h->version = v->via.u64;

	if ((ret = need_map(s, r, "snapshot", "tool", &tool)) < 0 ||
	    (ret = opt_str(s, tool, "tool", "name", false, "", &h->tool_name)) <
		    0 ||
	    (ret = opt_str(s, tool, "tool", "version", false, "",
			   &h->tool_version)) < 0)
		return ret;

	if ((ret = need_map(s, r, "snapshot", "capture", &cap)) < 0 ||
	    (ret = need_u64(s, cap, "capture", "start_realtime_ns",
			    &h->start_realtime_ns)) < 0 ||
	    (ret = need_u64(s, cap, "capture", "end_realtime_ns",
			    &h->end_realtime_ns)) < 0 ||
	    (ret = need_u64(s, cap, "capture", "duration_ns",
			    &h->duration_ns)) < 0 ||
	    (ret = need_u64(s, cap, "capture", "workers", &h->workers)) < 0 ||
	    (ret = need_map(s, cap, "capture", "roots", &roots)) < 0 ||
	    (ret = opt_str(s, roots, "capture.roots", "proc", false, NULL,
			   &h->proc_root)) < 0 ||
	    (ret = opt_str(s, roots, "capture.roots", "sys", false, NULL,
			   &h->sys_root)) < 0 ||
	    (ret = opt_str(s, roots, "capture.roots", "cgroup", false, NULL,
			   &h->cgroup_root)) < 0 ||
	    (ret = opt_str(s, cap, "capture", "config_path", false, NULL,
			   &h->config_path)) < 0 ||
	    (ret = opt_str(s, cap, "capture", "kernel_release", false, NULL,
			   &h->kernel_release)) < 0 ||
	    (ret = opt_str(s, cap, "capture", "hostname", false, NULL,
			   &h->hostname)) < 0)
		return ret;
	return parse_capture_late(s, cap);
}

static int cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct ctp_snap *s = arg;
	return strcmp(s->fields[*(const uint32_t *)a].name,
		      s->fields[*(const uint32_t *)b].name);
}

/* An enum given by name: -1 when the key is missing or not a string. */
static int enum_key(struct ctp_snap *s, const msgpack_object *m,
		    const char *where, const char *k, enum ctp_enum which,
		    bool strict, uint8_t *out)
{
	const msgpack_object *v = get(m, k);
	if (!v)
		return bad(s, -EINVAL, "%s: missing key \"%s\"", where, k);
	if (v->type != MSGPACK_OBJECT_STR)
		return bad(s, -EINVAL, "%s.%s: expected a string, found %s",
			   where, k, objtype(v));
	int e = ctp_enum_lookup(which, v->via.str.ptr, v->via.str.size);
	if (e < 0 && strict)
		return bad(s, -EINVAL, "%s: unknown %s \"%.*s\"", where, k,
			   (int)(v->via.str.size > 64 ? 64 : v->via.str.size),
			   v->via.str.ptr);
	/* A newer writer may add units, kinds or rules: 0 = unknown. */
	*out = (uint8_t)(e < 0 ? 0 : e);
	return 0;
}

static bool numeric_type(uint8_t type)
{
	return type == CTP_TYPE_U64 || type == CTP_TYPE_I64;
}

/*
 * A field's "derive" (§4): missing or nil for ordinary fields, else 1 to
 * CTP_DERIVE_MAX_TERMS maps {field, coef, max_set}. Inputs must come
 * earlier in `fields`, which also rules out cycles.
 */
static int parse_derive(struct ctp_snap *s, const msgpack_object *m,
			const char *fw, struct ctp_snap_field *f,
			uint8_t *depth)
{
	const msgpack_object *d = get(m, "derive");
	char where[200];

	if (!d || d->type == MSGPACK_OBJECT_NIL)
		return 0;
	snprintf(where, sizeof(where), "%s.derive", fw);
	if (d->type != MSGPACK_OBJECT_ARRAY)
		return bad(s, -EINVAL, "%s: expected an array or nil, found %s",
			   where, objtype(d));
	if (d->via.array.size < 1 || d->via.array.size > CTP_DERIVE_MAX_TERMS)
		return bad(s, -EINVAL, "%s: %u terms (1 to %d allowed)", where,
			   d->via.array.size, CTP_DERIVE_MAX_TERMS);
	if (!numeric_type(f->type))
		return bad(s, -EINVAL, "%s: derived field %s is not u64 or i64",
			   where, f->name);
	struct ctp_snap_term *terms =
		zalloc(s, d->via.array.size * sizeof(*terms));
	if (!terms)
		return bad(s, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < d->via.array.size; i++) {
		const msgpack_object *t = &d->via.array.ptr[i], *name, *coef,
				     *set;
		char tw[220];
		int ret;
		snprintf(tw, sizeof(tw), "%s[%u]", where, i);
		if (t->type != MSGPACK_OBJECT_MAP)
			return bad(s, -EINVAL, "%s: expected a map, found %s",
				   tw, objtype(t));
		if ((ret = need(s, t, tw, "field", MSGPACK_OBJECT_STR,
				"a string", &name)) < 0 ||
		    (ret = need(s, t, tw, "max_set",
				MSGPACK_OBJECT_POSITIVE_INTEGER,
				"an unsigned integer", &set)) < 0)
			return ret;
		coef = get(t, "coef");
		if (!coef)
			return bad(s, -EINVAL, "%s: missing key \"coef\"", tw);
		int64_t c = coef->type == MSGPACK_OBJECT_POSITIVE_INTEGER
				    ? (coef->via.u64 > INT32_MAX
					       ? 0
					       : (int64_t)coef->via.u64)
			    : coef->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
				    ? coef->via.i64
				    : 0;
		if (c == 0 || c < INT32_MIN)
			return bad(s, -EINVAL,
				   "%s.coef: expected a non-zero 32-bit "
				   "integer",
				   tw);
		if (set->via.u64 > UINT8_MAX)
			return bad(s, -EINVAL, "%s.max_set: %llu is over 255",
				   tw, (unsigned long long)set->via.u64);
		char nm[160];
		snprintf(nm, sizeof(nm), "%.*s",
			 (int)(name->via.str.size < 150 ? name->via.str.size
							: 150),
			 name->via.str.ptr);
		const struct ctp_snap_field *in = ctp_snap_field_find(s, nm);
		if (!in || strlen(nm) != name->via.str.size)
			return bad(s, -EINVAL,
				   "%s.field: \"%s\" is not in fields", tw, nm);
		if (in->index >= f->index)
			return bad(s, -EINVAL,
				   "%s.field: %s does not come before %s", tw,
				   nm, f->name);
		if (in->scope != f->scope || !numeric_type(in->type))
			return bad(s, -EINVAL,
				   "%s.field: %s is not a u64 or i64 field of "
				   "scope %s",
				   tw, nm, ctp_scope_name(f->scope));
		if (in->rule != CTP_RULE_SUM && in->rule != CTP_RULE_MAX &&
		    in->rule != CTP_RULE_MIN && in->rule != CTP_RULE_MODE)
			return bad(s, -EINVAL,
				   "%s.field: %s is not reduced to one value "
				   "(rule sum, max, min or mode)",
				   tw, nm);
		if (depth[in->index] + 1 > CTP_DERIVE_MAX_DEPTH)
			return bad(s, -EINVAL,
				   "%s.field: derived fields nest more than %d "
				   "deep",
				   tw, CTP_DERIVE_MAX_DEPTH);
		if (depth[in->index] + 1 > depth[f->index])
			depth[f->index] = (uint8_t)(depth[in->index] + 1);
		terms[i] = (struct ctp_snap_term){
			.input = in->index,
			.coef = (int32_t)c,
			.max_set = (uint8_t)set->via.u64};
	}
	f->terms = terms;
	f->n_terms = d->via.array.size;
	return 0;
}

/* The check of one role (FORMAT.md §4): what kind of field may have it,
 * and whether a scope has at most one. */
struct role_rule {
	const char *name;
	bool (*fits)(const struct ctp_snap_field *f);
	const char *needs;
	bool once;
};

static bool time_unit(uint8_t unit)
{
	return unit == CTP_UNIT_NS || unit == CTP_UNIT_US ||
	       unit == CTP_UNIT_TICKS;
}

static bool task_scope(uint8_t scope)
{
	return scope == CTP_SCOPE_THREAD || scope == CTP_SCOPE_PROCESS;
}

static bool start_time_fits(const struct ctp_snap_field *f)
{
	return task_scope(f->scope) && f->type == CTP_TYPE_U64 &&
	       f->kind == CTP_KIND_ORDINAL && !f->n_terms && time_unit(f->unit);
}

static bool elapsed_fits(const struct ctp_snap_field *f)
{
	return f->scope == CTP_SCOPE_EXITED && f->type == CTP_TYPE_U64 &&
	       !f->n_terms && time_unit(f->unit);
}

static bool reaped_fits(const struct ctp_snap_field *f)
{
	return task_scope(f->scope) && f->kind == CTP_KIND_COUNTER &&
	       (f->type == CTP_TYPE_U64 || f->type == CTP_TYPE_I64);
}

static bool parent_fits(const struct ctp_snap_field *f)
{
	return f->scope == CTP_SCOPE_EXITED && f->type == CTP_TYPE_U64 &&
	       !f->n_terms;
}

static bool cgroup_fits(const struct ctp_snap_field *f)
{
	return f->scope == CTP_SCOPE_EXITED && f->type == CTP_TYPE_STRING &&
	       !f->n_terms;
}

static const struct role_rule roles[] = {
	{"start_time", start_time_fits,
	 "a thread or process u64 ordinal field in ns, us or ticks", true},
	{"elapsed", elapsed_fits, "an exited u64 field in ns, us or ticks",
	 true},
	{"reaped", reaped_fits, "a thread or process u64 or i64 counter",
	 false},
	{"parent", parent_fits, "an exited u64 field", true},
	{"cgroup", cgroup_fits, "an exited string field", true},
};

/* Role fields are what FORMAT.md §4 says they are (a start time or an
 * elapsed time once per scope), so readers can take their values as such
 * without checking again. Roles this reader does not know are ignored. */
static int check_roles(struct ctp_snap *s)
{
	for (size_t k = 0; k < sizeof(roles) / sizeof(roles[0]); k++) {
		const struct role_rule *rr = &roles[k];
		const struct ctp_snap_field *seen[CTP_SCOPE_EXITED + 1] = {0};
		for (size_t i = 0; i < s->n_fields; i++) {
			const struct ctp_snap_field *f = &s->fields[i];
			if (strcmp(f->role, rr->name) != 0)
				continue;
			if (!rr->fits(f))
				return bad(s, -EINVAL,
					   "field \"%s\": role %s needs %s",
					   f->name, rr->name, rr->needs);
			if (rr->once && seen[f->scope])
				return bad(s, -EINVAL,
					   "fields \"%s\" and \"%s\" are both "
					   "the %s of one scope",
					   seen[f->scope]->name, f->name,
					   strcmp(rr->name, "start_time")
						   ? "elapsed time"
						   : "start time");
			seen[f->scope] = f;
		}
	}
	return 0;
}

/* One entry of a fields array (§4) into f, its index already set. */
static int parse_field(struct ctp_snap *s, const msgpack_object *m,
		       const char *where, struct ctp_snap_field *f)
{
	const msgpack_object *name;
	int ret;

	if (m->type != MSGPACK_OBJECT_MAP)
		return bad(s, -EINVAL, "%s: expected a map, found %s", where,
			   objtype(m));
	if ((ret = need(s, m, where, "name", MSGPACK_OBJECT_STR, "a string",
			&name)) < 0)
		return ret;
	if (name->via.str.size == 0 ||
	    memchr(name->via.str.ptr, '\0', name->via.str.size))
		return bad(s, -EINVAL, "%s: invalid field name", where);
	f->name = zstrdup(s, name->via.str.ptr, name->via.str.size);
	if (!f->name)
		return bad(s, -ENOMEM, "out of memory");
	f->n_terms = 0;
	f->terms = NULL;
	if ((ret = opt_str(s, m, where, "plugin", false, "", &f->plugin)) < 0 ||
	    (ret = opt_str(s, m, where, "help", false, "", &f->help)) < 0 ||
	    (ret = opt_str(s, m, where, "section", false, "", &f->section)) <
		    0 ||
	    (ret = opt_str(s, m, where, "dims", false, "", &f->dims)) < 0 ||
	    (ret = opt_str(s, m, where, "role", false, "", &f->role)) < 0)
		return ret;
	if ((ret = enum_key(s, m, where, "scope", CTP_ENUM_SCOPE, true,
			    &f->scope)) < 0 ||
	    (ret = enum_key(s, m, where, "type", CTP_ENUM_TYPE, true,
			    &f->type)) < 0 ||
	    (ret = enum_key(s, m, where, "unit", CTP_ENUM_UNIT, false,
			    &f->unit)) < 0 ||
	    (ret = enum_key(s, m, where, "kind", CTP_ENUM_KIND, false,
			    &f->kind)) < 0 ||
	    (ret = enum_key(s, m, where, "rule", CTP_ENUM_RULE, false,
			    &f->rule)) < 0)
		return ret;
	/* Added to version 1: absent in older files (exact values). */
	f->step = 0;
	if (get(m, "step") &&
	    (ret = need_u64(s, m, where, "step", &f->step)) < 0)
		return ret;
	return 0;
}

/* The exited table's own field list (§7.4), or NULL when the snapshot has
 * no exited table. */
static int exited_fields(struct ctp_snap *s, const msgpack_object **out)
{
	const msgpack_object *ex = get(&s->root, "exited");

	*out = NULL;
	if (!ex)
		return 0;
	if (ex->type != MSGPACK_OBJECT_MAP)
		return bad(s, -EINVAL, "exited: expected a map, found %s",
			   objtype(ex));
	return need_array(s, ex, "exited", "fields", out);
}

/* Entry i of the fields the snapshot lists: the top-level ones, then the
 * exited table's. */
static const msgpack_object *field_obj(const msgpack_object *top,
				       const msgpack_object *ex, size_t i,
				       char *where, size_t wlen)
{
	if (i < top->via.array.size) {
		snprintf(where, wlen, "fields[%zu]", i);
		return &top->via.array.ptr[i];
	}
	i -= top->via.array.size;
	snprintf(where, wlen, "exited.fields[%zu]", i);
	return &ex->via.array.ptr[i];
}

static int parse_fields(struct ctp_snap *s)
{
	const msgpack_object *arr, *ex;
	char where[48];
	int ret = need_array(s, &s->root, "snapshot", "fields", &arr);
	if (ret < 0 || (ret = exited_fields(s, &ex)) < 0)
		return ret;
	size_t ntop = arr->via.array.size;
	s->n_fields = ntop + (ex ? ex->via.array.size : 0);
	s->fields = zalloc(s, s->n_fields * sizeof(*s->fields));
	s->by_name = zalloc(s, s->n_fields * sizeof(*s->by_name));
	if (!s->fields || !s->by_name)
		return bad(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_fields; i++) {
		struct ctp_snap_field *f = &s->fields[i];
		const msgpack_object *m =
			field_obj(arr, ex, i, where, sizeof(where));
		f->index = (uint32_t)i;
		if ((ret = parse_field(s, m, where, f)) < 0)
			return ret;
		/* An exited field in the top-level list would be refused by
		 * the readers the exited table keeps working. */
		if ((f->scope == CTP_SCOPE_EXITED) != (i >= ntop))
			return bad(s, -EINVAL, "%s: scope %s belongs in %s",
				   where, ctp_scope_name(f->scope),
				   i >= ntop ? "fields" : "exited.fields");
		s->by_name[i] = (uint32_t)i;
	}
	qsort_r(s->by_name, s->n_fields, sizeof(*s->by_name), cmp_by_name, s);
	for (size_t i = 1; i < s->n_fields; i++)
		if (strcmp(s->fields[s->by_name[i - 1]].name,
			   s->fields[s->by_name[i]].name) == 0)
			return bad(s, -EINVAL, "fields: \"%s\" is listed twice",
				   s->fields[s->by_name[i]].name);
	uint8_t *depth = zalloc(s, s->n_fields);
	if (!depth)
		return bad(s, -ENOMEM, "out of memory");
	memset(depth, 0, s->n_fields);
	for (size_t i = 0; i < s->n_fields; i++) {
		const msgpack_object *m =
			field_obj(arr, ex, i, where, sizeof(where));
		if ((ret = parse_derive(s, m, where, &s->fields[i], depth)) < 0)
			return ret;
	}
	return check_roles(s);
}

const struct ctp_snap_field *ctp_snap_role_field(const struct ctp_snap *snap,
						 uint8_t scope,
						 const char *role)
{
	for (size_t i = 0; i < snap->n_fields; i++)
		if (snap->fields[i].scope == scope &&
		    strcmp(snap->fields[i].role, role) == 0)
			return &snap->fields[i];
	return NULL;
}

const struct ctp_snap_field *ctp_snap_start_field(const struct ctp_snap *snap,
						  uint8_t scope)
{
	return ctp_snap_role_field(snap, scope, "start_time");
}

/* A map of string -> unsigned integer, as NUL-terminated names. */
static int parse_counters(struct ctp_snap *s, const msgpack_object *m,
			  const char *where, size_t *n, const char ***names,
			  const uint64_t **vals)
{
	uint64_t *v;
	*n = m->via.map.size;
	*names = zalloc(s, *n * sizeof(**names));
	*vals = v = zalloc(s, *n * sizeof(**vals));
	if (!*names || !v)
		return bad(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < *n; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad(s, -EINVAL,
				   "%s: entries must map a string "
				   "to an unsigned integer",
				   where);
		(*names)[i] =
			zstrdup(s, kv->key.via.str.ptr, kv->key.via.str.size);
		if (!(*names)[i])
			return bad(s, -ENOMEM, "out of memory");
		v[i] = kv->val.via.u64;
	}
	return 0;
}

static int parse_plugins(struct ctp_snap *s)
{
	const msgpack_object *arr;
	int ret = need_array(s, &s->root, "snapshot", "plugins", &arr);
	if (ret < 0)
		return ret;
	s->n_plugins = arr->via.array.size;
	s->plugins = zalloc(s, s->n_plugins * sizeof(*s->plugins));
	if (!s->plugins)
		return bad(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_plugins; i++) {
		const msgpack_object *m = &arr->via.array.ptr[i], *v, *sum;
		struct ctp_snap_plugin *p = &s->plugins[i];
		char where[32];
		snprintf(where, sizeof(where), "plugins[%zu]", i);
		p->exited = false; /* set by exited.lost, parsed later */
		p->exited_lost = 0;
		if (m->type != MSGPACK_OBJECT_MAP)
			return bad(s, -EINVAL, "%s: expected a map, found %s",
				   where, objtype(m));
		if ((ret = opt_str(s, m, where, "name", true, NULL, &p->name)) <
			    0 ||
		    (ret = opt_str(s, m, where, "version", false, NULL,
				   &p->version)) < 0 ||
		    (ret = opt_str(s, m, where, "path", false, NULL,
				   &p->path)) < 0 ||
		    (ret = opt_str(s, m, where, "reason", false, NULL,
				   &p->reason)) < 0 ||
		    (ret = opt_str(s, m, where, "hint", false, NULL,
				   &p->hint)) < 0)
			return ret;
		if (!p->name)
			return bad(s, -EINVAL, "%s: name is nil", where);
		if ((ret = enum_key(s, m, where, "status", CTP_ENUM_STATUS,
				    false, &p->status)) < 0)
			return ret;
		if ((ret = need(s, m, where, "required", MSGPACK_OBJECT_BOOLEAN,
				"a boolean", &v)) < 0)
			return ret;
		p->required = v->via.boolean;
		if ((ret = need_u64(s, m, where, "time_ns", &p->time_ns)) < 0 ||
		    (ret = need_u64(s, m, where, "calls", &p->calls)) < 0 ||
		    (ret = need_u64(s, m, where, "errors", &p->errors)) < 0 ||
		    (ret = need_u64(s, m, where, "vanished", &p->vanished)) <
			    0 ||
		    (ret = opt_u64(s, m, where, "resource", &p->resource)) <
			    0 ||
		    (ret = need_map(s, m, where, "summary", &sum)) < 0 ||
		    (ret = parse_counters(s, sum, where, &p->n_summary,
					  &p->summary_name, &p->summary)) < 0)
			return ret;
	}
	return 0;
}

/* In *f the index in read_failures.files of the file named by the string
 * key of an entry of part w (parsed after the files). */
static int file_index(struct ctp_snap *s, const char *w,
		      const msgpack_object *key, size_t *f)
{
	const struct ctp_snap_readfail *rf = &s->rf;
	for (*f = 0; *f < rf->n_files; (*f)++)
		if (str_eq(key, rf->file[*f]))
			return 0;
	return bad(s, -EINVAL, "%s: \"%.*s\" is not in files", w,
		   (int)(key->via.str.size > 64 ? 64 : key->via.str.size),
		   key->via.str.ptr);
}

/* read_failures.gates: optional map of file -> kernel config option, each
 * file one of read_failures.files (parsed before). */
static int parse_gates(struct ctp_snap *s, const msgpack_object *m)
{
	struct ctp_snap_readfail *rf = &s->rf;
	const char *w = "read_failures.gates";
	const msgpack_object *g = get(m, "gates");
	rf->gate = zalloc(s, rf->n_files * sizeof(*rf->gate));
	if (!rf->gate)
		return bad(s, -ENOMEM, "out of memory");
	/* Zone memory is not zeroed; NULL means "not gated". */
	memset(rf->gate, 0, rf->n_files * sizeof(*rf->gate));
	if (!g)
		return 0;
	if (g->type != MSGPACK_OBJECT_MAP)
		return bad(s, -EINVAL, "%s: expected a map, found %s", w,
			   objtype(g));
	for (uint32_t i = 0; i < g->via.map.size; i++) {
		const msgpack_object_kv *kv = &g->via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->val.type != MSGPACK_OBJECT_STR ||
		    kv->val.via.str.size == 0 ||
		    memchr(kv->val.via.str.ptr, '\0', kv->val.via.str.size))
			return bad(s, -EINVAL,
				   "%s: entries must map a file name to a "
				   "non-empty string",
				   w);
		size_t f;
		int ret = file_index(s, w, &kv->key, &f);
		if (ret < 0)
			return ret;
		if (rf->gate[f])
			return bad(s, -EINVAL, "%s: \"%s\" is listed twice", w,
				   rf->file[f]);
		rf->gate[f] =
			zstrdup(s, kv->val.via.str.ptr, kv->val.via.str.size);
		if (!rf->gate[f])
			return bad(s, -ENOMEM, "out of memory");
	}
	return 0;
}

/* read_failures.missing / .denied: optional map of file -> failures of one
 * kind, each file one of read_failures.files and at most its failure
 * count; *out gets one count per file (0 when not listed). */
static int parse_part(struct ctp_snap *s, const msgpack_object *m,
		      const char *key, const uint64_t **out)
{
	struct ctp_snap_readfail *rf = &s->rf;
	char w[64];
	const msgpack_object *g = get(m, key);
	uint64_t *part = zalloc(s, (rf->n_files + 1) * sizeof(*part));
	snprintf(w, sizeof(w), "read_failures.%s", key);
	if (!part)
		return bad(s, -ENOMEM, "out of memory");
	memset(part, 0, (rf->n_files + 1) * sizeof(*part));
	*out = part;
	if (!g)
		return 0;
	bool *seen = zalloc(s, rf->n_files + 1);
	if (!seen)
		return bad(s, -ENOMEM, "out of memory");
	memset(seen, 0, rf->n_files + 1);
	if (g->type != MSGPACK_OBJECT_MAP)
		return bad(s, -EINVAL, "%s: expected a map, found %s", w,
			   objtype(g));
	for (uint32_t i = 0; i < g->via.map.size; i++) {
		const msgpack_object_kv *kv = &g->via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad(s, -EINVAL,
				   "%s: entries must map a file name to a "
				   "count",
				   w);
		size_t f;
		int ret = file_index(s, w, &kv->key, &f);
		if (ret < 0)
			return ret;
		if (seen[f])
			return bad(s, -EINVAL, "%s: \"%s\" is listed twice", w,
				   rf->file[f]);
		seen[f] = true;
		if (kv->val.via.u64 > rf->failures[f])
			return bad(s, -EINVAL,
				   "%s: \"%s\" has more %s (%llu) than "
				   "failures (%llu)",
				   w, rf->file[f], key,
				   (unsigned long long)kv->val.via.u64,
				   (unsigned long long)rf->failures[f]);
		part[f] = kv->val.via.u64;
	}
	return 0;
}

static int parse_readfail(struct ctp_snap *s)
{
	const msgpack_object *m, *files;
	struct ctp_snap_readfail *rf = &s->rf;
	const char *w = "read_failures";
	int ret;
	if ((ret = need_map(s, &s->root, "snapshot", w, &m)) < 0 ||
	    (ret = need_u64(s, m, w, "tids_walked", &rf->tids_walked)) < 0 ||
	    (ret = need_u64(s, m, w, "tids_recorded", &rf->tids_recorded)) <
		    0 ||
	    (ret = need_u64(s, m, w, "tids_vanished", &rf->tids_vanished)) <
		    0 ||
	    (ret = need_u64(s, m, w, "tgids_walked", &rf->tgids_walked)) < 0 ||
	    (ret = need_u64(s, m, w, "tgids_vanished", &rf->tgids_vanished)) <
		    0 ||
	    (ret = need_map(s, m, w, "files", &files)) < 0 ||
	    (ret = parse_counters(s, files, "read_failures.files", &rf->n_files,
				  &rf->file, &rf->failures)) < 0 ||
	    (ret = opt_str(s, m, w, "dominant_file", false, NULL,
			   &rf->dominant_file)) < 0)
		return ret;
	if ((ret = parse_gates(s, m)) < 0 ||
	    (ret = parse_part(s, m, "missing", &rf->missing)) < 0 ||
	    (ret = parse_part(s, m, "denied", &rf->denied)) < 0 ||
	    (ret = parse_part(s, m, "resource", &rf->resource)) < 0)
		return ret;
	for (size_t f = 0; f < rf->n_files; f++) {
		if (rf->missing[f] + rf->denied[f] > rf->failures[f])
			return bad(s, -EINVAL,
				   "read_failures: \"%s\" has more missing "
				   "and denied than failures",
				   rf->file[f]);
		if (rf->missing[f] + rf->denied[f] + rf->resource[f] >
		    rf->failures[f])
			return bad(s, -EINVAL,
				   "read_failures: \"%s\" has more missing, "
				   "denied and resource failures than "
				   "failures",
				   rf->file[f]);
	}
	if ((ret = opt_u64(s, m, w, "tids_unread_resource",
			   &rf->tids_unread_resource)) < 0 ||
	    (ret = opt_u64(s, m, w, "tgids_unread_resource",
			   &rf->tgids_unread_resource)) < 0 ||
	    (ret = opt_u64(s, m, w, "cgroups_unread_resource",
			   &rf->cgroups_unread_resource)) < 0 ||
	    (ret = opt_u64(s, m, w, "nofile_limit", &rf->nofile_limit)) < 0 ||
	    (ret = opt_str(s, m, w, "resource_error", false, NULL,
			   &rf->resource_error)) < 0)
		return ret;
	return 0;
}

/* ---- Values and tables ---- */

/*
 * The field a key of the map `where` names (host, TABLE.columns): a string
 * naming, whole, a field of the snapshot's of scope `scope`. Its name (cut
 * at 150 bytes: it is for messages) into name. 0, or -EINVAL after a
 * message.
 */
static int key_field(struct ctp_snap *s, const msgpack_object *key,
		     const char *where, uint8_t scope, char name[static 160],
		     const struct ctp_snap_field **out)
{
	if (key->type != MSGPACK_OBJECT_STR)
		return bad(s, -EINVAL, "%s: a key is %s, not a string", where,
			   objtype(key));
	snprintf(name, 160, "%.*s",
		 (int)(key->via.str.size < 150 ? key->via.str.size : 150),
		 key->via.str.ptr);
	const struct ctp_snap_field *f = ctp_snap_field_find(s, name);
	if (!f || strlen(name) != key->via.str.size)
		return bad(s, -EINVAL, "%s: \"%s\" is not in fields", where,
			   name);
	if (f->scope != scope)
		return bad(s, -EINVAL, "%s: field %s has scope %s, not %s",
			   where, name, ctp_scope_name(f->scope),
			   ctp_scope_name(scope));
	*out = f;
	return 0;
}

static int bad_value(struct ctp_snap *s, const char *where, size_t row,
		     const struct ctp_snap_field *f, const msgpack_object *o,
		     const char *why)
{
	return bad(s, -EINVAL, "%s[%zu]: field %s is %s but the value is %s%s",
		   where, row, f->name, ctp_type_name(f->type), objtype(o),
		   why);
}

static int decode_value(struct ctp_snap *s, const struct ctp_snap_field *f,
			const msgpack_object *o, const char *where, size_t row,
			struct ctp_value *out)
{
	memset(out, 0, sizeof(*out));
	if (o->type == MSGPACK_OBJECT_NIL)
		return 0;
	switch (f->type) {
	case CTP_TYPE_U64:
		if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad_value(s, where, row, f, o, "");
		out->u64 = o->via.u64;
		break;
	case CTP_TYPE_I64:
		if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
			if (o->via.u64 > INT64_MAX)
				return bad_value(s, where, row, f, o,
						 " beyond the int64 range");
			out->i64 = (int64_t)o->via.u64;
		} else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
			out->i64 = o->via.i64;
		} else {
			return bad_value(s, where, row, f, o, "");
		}
		break;
	case CTP_TYPE_BOOL:
		if (o->type != MSGPACK_OBJECT_BOOLEAN)
			return bad_value(s, where, row, f, o, "");
		out->b = o->via.boolean;
		break;
	case CTP_TYPE_CHAR:
		if (o->type != MSGPACK_OBJECT_STR || o->via.str.size != 1)
			return bad_value(s, where, row, f, o,
					 " (need a 1-byte string)");
		out->c = (unsigned char)o->via.str.ptr[0];
		break;
	case CTP_TYPE_STRING:
		if (o->type != MSGPACK_OBJECT_STR)
			return bad_value(s, where, row, f, o, "");
		if (memchr(o->via.str.ptr, '\0', o->via.str.size))
			return bad_value(s, where, row, f, o,
					 " holding a NUL byte, which the "
					 "format never allows");
		out->str.ptr = o->via.str.ptr;
		out->str.len = o->via.str.size;
		break;
	case CTP_TYPE_CPUSET: {
		if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size % 2)
			return bad_value(s, where, row, f, o,
					 " (need an even-length array)");
		size_t n = o->via.array.size;
		uint32_t *r = zalloc(s, n * sizeof(*r));
		if (!r)
			return bad(s, -ENOMEM, "out of memory");
		for (size_t i = 0; i < n; i++) {
			const msgpack_object *e = &o->via.array.ptr[i];
			if (e->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
			    e->via.u64 > UINT32_MAX)
				return bad_value(s, where, row, f, o,
						 " with an element that is not "
						 "a CPU number");
			r[i] = (uint32_t)e->via.u64;
			if ((i % 2 == 1 && r[i] < r[i - 1]) ||
			    (i % 2 == 0 && i && r[i] <= r[i - 1]))
				return bad_value(s, where, row, f, o,
						 " whose ranges are not "
						 "ascending and disjoint");
		}
		out->cpuset.r = r;
		out->cpuset.n = n / 2;
		break;
	}
	default:
		return bad(s, -EINVAL, "%s: field %s has no known type", where,
			   f->name);
	}
	out->type = f->type;
	return 0;
}

static int alloc_cols(struct ctp_snap *s, struct ctp_snap_table *t)
{
	const struct ctp_value **col = zalloc(s, s->n_fields * sizeof(*col));
	if (!col)
		return bad(s, -ENOMEM, "out of memory");
	memset(col, 0, s->n_fields * sizeof(*col));
	t->col = col;
	return 0;
}

static int parse_host(struct ctp_snap *s)
{
	struct ctp_snap_table *t = &s->tables[CTP_SCOPE_HOST];
	const msgpack_object *m;
	int ret;

	t->scope = CTP_SCOPE_HOST;
	t->rows = 1;
	if ((ret = need_map(s, &s->root, "snapshot", "host", &m)) < 0 ||
	    (ret = alloc_cols(s, t)) < 0)
		return ret;
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];
		const struct ctp_snap_field *f;
		char name[160];
		if ((ret = key_field(s, &kv->key, "host", CTP_SCOPE_HOST, name,
				     &f)) < 0)
			return ret;
		if (t->col[f->index])
			continue; /* duplicate key: the first wins */
		if (f->n_terms && kv->val.type != MSGPACK_OBJECT_NIL)
			return bad(s, -EINVAL,
				   "host: derived field %s has a value", name);
		struct ctp_value *v = zalloc(s, sizeof(*v));
		if (!v)
			return bad(s, -ENOMEM, "out of memory");
		if ((ret = decode_value(s, f, &kv->val, "host", 0, v)) < 0)
			return ret;
		((const struct ctp_value **)t->col)[f->index] = v;
	}
	return 0;
}

/* An identity column: an array of `rows` entries. */
static int ident_array(struct ctp_snap *s, const msgpack_object *m,
		       const char *where, const char *k, size_t rows,
		       const msgpack_object **out)
{
	int ret = need_array(s, m, where, k, out);
	if (ret == 0 && (*out)->via.array.size != rows)
		return bad(s, -EINVAL, "%s.%s has %u entries but rows is %zu",
			   where, k, (*out)->via.array.size, rows);
	return ret;
}

/* An identity column of unsigned integers, or with nil_ok also nil, which
 * reads as 0 (the exited table's "unknown"). */
static int ident_uints(struct ctp_snap *s, const msgpack_object *m,
		       const char *where, const char *k, size_t rows,
		       bool nil_ok, const uint64_t **out)
{
	const msgpack_object *a;
	int ret = ident_array(s, m, where, k, rows, &a);
	if (ret < 0)
		return ret;
	uint64_t *v = zalloc(s, rows * sizeof(*v));
	if (!v)
		return bad(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < rows; i++) {
		const msgpack_object *e = &a->via.array.ptr[i];
		bool nil = nil_ok && e->type == MSGPACK_OBJECT_NIL;
		if (e->type != MSGPACK_OBJECT_POSITIVE_INTEGER && !nil)
			return bad(
				s, -EINVAL,
				"%s.%s[%zu]: expected an unsigned integer%s, "
				"found %s",
				where, k, i, nil_ok ? " or nil" : "",
				objtype(e));
		v[i] = nil ? 0 : e->via.u64;
	}
	*out = v;
	return 0;
}

static int ident_u64(struct ctp_snap *s, const msgpack_object *m,
		     const char *where, const char *k, size_t rows,
		     const uint64_t **out)
{
	return ident_uints(s, m, where, k, rows, false, out);
}

static int ident_u64_or_nil(struct ctp_snap *s, const msgpack_object *m,
			    const char *where, const char *k, size_t rows,
			    const uint64_t **out)
{
	return ident_uints(s, m, where, k, rows, true, out);
}

static int ident_str(struct ctp_snap *s, const msgpack_object *m,
		     const char *where, const char *k, size_t rows,
		     const struct ctp_bytes **out)
{
	const msgpack_object *a;
	int ret = ident_array(s, m, where, k, rows, &a);
	if (ret < 0)
		return ret;
	struct ctp_bytes *v = zalloc(s, rows * sizeof(*v));
	if (!v)
		return bad(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < rows; i++) {
		const msgpack_object *e = &a->via.array.ptr[i];
		if (e->type == MSGPACK_OBJECT_NIL) {
			v[i] = (struct ctp_bytes){NULL, 0};
			continue;
		}
		if (e->type != MSGPACK_OBJECT_STR)
			return bad(s, -EINVAL,
				   "%s.%s[%zu]: expected a string "
				   "or nil, found %s",
				   where, k, i, objtype(e));
		if (memchr(e->via.str.ptr, '\0', e->via.str.size))
			return bad(s, -EINVAL,
				   "%s.%s[%zu]: holds a NUL byte, which the "
				   "format never allows in a %s",
				   where, k, i, k);
		v[i] = (struct ctp_bytes){e->via.str.ptr, e->via.str.size};
	}
	*out = v;
	return 0;
}

static int parse_columns(struct ctp_snap *s, struct ctp_snap_table *t,
			 const msgpack_object *tm, const char *where)
{
	const msgpack_object *m;
	char cw[200], mw[64];
	int ret;

	if ((ret = need_map(s, tm, where, "columns", &m)) < 0 ||
	    (ret = alloc_cols(s, t)) < 0)
		return ret;
	snprintf(mw, sizeof(mw), "%s.columns", where);
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];
		const struct ctp_snap_field *f;
		char name[160];
		if ((ret = key_field(s, &kv->key, mw, t->scope, name, &f)) < 0)
			return ret;
		if (f->n_terms)
			return bad(s, -EINVAL,
				   "%s.columns: derived field %s has a column",
				   where, name);
		if (kv->val.type != MSGPACK_OBJECT_ARRAY)
			return bad(s, -EINVAL,
				   "%s.columns.%s: expected an array, found %s",
				   where, name, objtype(&kv->val));
		if (kv->val.via.array.size != t->rows)
			return bad(s, -EINVAL,
				   "%s.columns.%s has %u values but rows is "
				   "%zu",
				   where, name, kv->val.via.array.size,
				   t->rows);
		if (t->col[f->index])
			continue; /* duplicate key: the first wins */
		struct ctp_value *v = zalloc(s, t->rows * sizeof(*v));
		if (!v)
			return bad(s, -ENOMEM, "out of memory");
		snprintf(cw, sizeof(cw), "%s.columns.%s", where, name);
		for (size_t r = 0; r < t->rows; r++)
			if ((ret = decode_value(s, f, &kv->val.via.array.ptr[r],
						cw, r, &v[r])) < 0)
				return ret;
		((const struct ctp_value **)t->col)[f->index] = v;
	}
	return 0;
}

/* exited.lost (§7.4): plugin name -> exited tasks it missed, each name one
 * of plugins (parsed before), once. */
static int parse_lost(struct ctp_snap *s, const msgpack_object *m)
{
	const msgpack_object *lost;
	int ret = need_map(s, m, "exited", "lost", &lost);
	if (ret < 0)
		return ret;
	for (uint32_t i = 0; i < lost->via.map.size; i++) {
		const msgpack_object_kv *kv = &lost->via.map.ptr[i];
		size_t p;
		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad(s, -EINVAL,
				   "exited.lost: entries must map a plugin "
				   "name to an unsigned integer");
		for (p = 0; p < s->n_plugins; p++)
			if (str_eq(&kv->key, s->plugins[p].name))
				break;
		if (p == s->n_plugins)
			return bad(s, -EINVAL,
				   "exited.lost: \"%.*s\" is not in plugins",
				   (int)(kv->key.via.str.size > 64
						 ? 64
						 : kv->key.via.str.size),
				   kv->key.via.str.ptr);
		if (s->plugins[p].exited)
			return bad(s, -EINVAL,
				   "exited.lost: \"%s\" is listed twice",
				   s->plugins[p].name);
		s->plugins[p].exited = true;
		s->plugins[p].exited_lost = kv->val.via.u64;
	}
	return 0;
}

static int parse_table(struct ctp_snap *s, uint8_t scope, const char *key)
{
	struct ctp_snap_table *t = &s->tables[scope];
	const msgpack_object *m;
	uint64_t rows = 0;
	int ret;

	t->scope = scope;
	/* Only the exited table may be missing: no plugin took part in it. */
	if (scope == CTP_SCOPE_EXITED && !get(&s->root, key)) {
		t->rows = 0;
		return alloc_cols(s, t);
	}
	if ((ret = need_map(s, &s->root, "snapshot", key, &m)) < 0 ||
	    (ret = need_u64(s, m, key, "rows", &rows)) < 0)
		return ret;
	/* Each row needs at least one byte in each identity column. */
	if (rows > s->raw_len)
		return bad(s, -EINVAL, "%s.rows (%llu) is larger than the file",
			   key, (unsigned long long)rows);
	t->rows = (size_t)rows;
	if (rows * CTP_SNAP_ROW_RESERVE > s->cap - s->used) {
		s->over = true;
		return bad(s, -ENOMEM, "out of memory");
	}
	s->used += rows * CTP_SNAP_ROW_RESERVE;

	switch (scope) {
	case CTP_SCOPE_CGROUP:
		ret = ident_str(s, m, key, "path", t->rows, &t->path);
		break;
	case CTP_SCOPE_PROCESS:
		if ((ret = ident_u64(s, m, key, "tgid", t->rows, &t->tgid)) <
			    0 ||
		    (ret = ident_str(s, m, key, "comm", t->rows, &t->comm)) < 0)
			return ret;
		if ((ret = ident_u64(s, m, key, "nthreads", t->rows,
				     &t->nthreads)) < 0)
			return ret;
		/* Added to version 1: older files have none. */
		if (get(m, "read_boottime_ns"))
			ret = ident_u64_or_nil(s, m, key, "read_boottime_ns",
					       t->rows, &t->read_ns);
		break;
	case CTP_SCOPE_THREAD: {
		const msgpack_object *a;
		if ((ret = ident_u64(s, m, key, "tid", t->rows, &t->tid)) < 0 ||
		    (ret = ident_u64(s, m, key, "tgid", t->rows, &t->tgid)) <
			    0 ||
		    (ret = ident_str(s, m, key, "comm", t->rows, &t->comm)) <
			    0 ||
		    (ret = ident_array(s, m, key, "cgroup", t->rows, &a)) < 0)
			return ret;
		int64_t *cg = zalloc(s, t->rows * sizeof(*cg));
		if (!cg)
			return bad(s, -ENOMEM, "out of memory");
		size_t ncg = s->tables[CTP_SCOPE_CGROUP].rows;
		for (size_t i = 0; i < t->rows; i++) {
			const msgpack_object *e = &a->via.array.ptr[i];
			if (e->type == MSGPACK_OBJECT_NIL) {
				cg[i] = -1;
			} else if (e->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
				   e->via.u64 < ncg) {
				cg[i] = (int64_t)e->via.u64;
			} else {
				return bad(s, -EINVAL,
					   "threads.cgroup[%zu]: expected a "
					   "row of cgroups (< %zu) or nil",
					   i, ncg);
			}
		}
		t->cgroup = cg;
		break;
	}
	case CTP_SCOPE_EXITED:
		if ((ret = ident_u64(s, m, key, "tid", t->rows, &t->tid)) < 0 ||
		    (ret = ident_u64_or_nil(s, m, key, "tgid", t->rows,
					    &t->tgid)) < 0 ||
		    (ret = ident_str(s, m, key, "comm", t->rows, &t->comm)) <
			    0 ||
		    (ret = ident_u64_or_nil(s, m, key, "exit_boottime_ns",
					    t->rows, &t->exit_ns)) < 0)
			return ret;
		ret = parse_lost(s, m);
		break;
	}
	if (ret < 0)
		return ret;
	return parse_columns(s, t, m, key);
}

/* Charge every numeric field's column (ctp_snap_col) to the budget now,
 * so that building one later never takes the snapshot past it. */
static int reserve_cols(struct ctp_snap *s)
{
	uint64_t need = 0;
	for (size_t i = 0; i < s->n_fields; i++) {
		const struct ctp_snap_field *f = &s->fields[i];
		if (ctp_field_is_number(f))
			need += ctp_col_bytes(s->tables[f->scope].rows);
	}
	if (need > s->cap - s->used) {
		s->over = true;
		return bad(s, -ENOMEM, "out of memory");
	}
	s->used += need;
	s->cols = zalloc(s, (s->n_fields ? s->n_fields : 1) * sizeof(*s->cols));
	if (!s->cols)
		return bad(s, -ENOMEM, "out of memory");
	memset(s->cols, 0, (s->n_fields ? s->n_fields : 1) * sizeof(*s->cols));
	return 0;
}

static int parse(struct ctp_snap *s)
{
	int ret;
	if ((ret = parse_header(s)) < 0 || (ret = parse_fields(s)) < 0 ||
	    (ret = parse_plugins(s)) < 0 || (ret = parse_readfail(s)) < 0 ||
	    (ret = parse_host(s)) < 0 ||
	    (ret = parse_table(s, CTP_SCOPE_CGROUP, "cgroups")) < 0 ||
	    (ret = parse_table(s, CTP_SCOPE_PROCESS, "processes")) < 0 ||
	    (ret = parse_table(s, CTP_SCOPE_THREAD, "threads")) < 0 ||
	    (ret = parse_table(s, CTP_SCOPE_EXITED, "exited")) < 0)
		return ret;
	return reserve_cols(s);
}

/* ---- Open ---- */

static int snap_new(const char *name, char *err, size_t errlen,
		    struct ctp_snap **ret)
{
	struct ctp_snap *s = calloc(1, sizeof(*s));
	if (!s) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	s->name = name;
	s->err = err;
	s->errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	*ret = s;
	return 0;
}

/* Decode and validate the decompressed bytes now in s->raw. */
static int snap_load(struct ctp_snap *s)
{
	uint64_t elems;
	int ret = mp_prescan(s, (const unsigned char *)s->raw, s->raw_len,
			     &elems);
	if (ret < 0)
		return ret;
	/* msgpack-c allocates every container's elements (a map entry is
	 * two) from the zone and points into raw for strings: so the tree
	 * is exactly elems objects, given one chunk of that size before
	 * anything of it is allocated. */
	uint64_t tree = elems * sizeof(msgpack_object) + 64;
	s->used = s->raw_len;
	if (elems > s->cap / sizeof(msgpack_object) ||
	    tree > s->cap - s->used) {
		s->over = true;
		return bad(s, -ENOMEM, "%llu MessagePack elements",
			   (unsigned long long)elems);
	}
	s->used += tree;
	s->zone = msgpack_zone_new((size_t)tree);
	s->dzone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
	if (!s->zone || !s->dzone)
		return bad(s, -ENOMEM, "out of memory");
	size_t off = 0;
	msgpack_unpack_return ur =
		msgpack_unpack(s->raw, s->raw_len, &off, s->zone, &s->root);
	if (ur != MSGPACK_UNPACK_SUCCESS)
		return bad(s, -EINVAL, "corrupt MessagePack (%s)",
			   ur == MSGPACK_UNPACK_NOMEM_ERROR
				   ? "nested too deep, or out of memory"
			   : ur == MSGPACK_UNPACK_EXTRA_BYTES ? "trailing bytes"
							      : "parse error");
	return parse(s);
}

/* Parse what z decompressed (finished), s owning it from here. */
static int snap_load_dec(struct ctp_snap *s, struct dec *z)
{
	s->raw = z->out;
	s->raw_len = z->len;
	s->raw_map = z->map;
	z->out = NULL;
	z->map = 0;
	return snap_load(s);
}

static int snap_finish(struct ctp_snap *s, int ret, struct ctp_snap **out)
{
	if (ret < 0) {
		if (s->err && s->errlen && !s->err[0])
			bad(s, ret, "%s", strerror(-ret));
		ctp_snap_free(s);
		return ret;
	}
	s->name = NULL;
	s->err = NULL;
	s->errlen = 0;
	*out = s;
	return 0;
}

int ctp_snap_open_buf(const char *name, const void *data, size_t len,
		      uint64_t max_decompressed, struct ctp_snap **ret,
		      char *err, size_t errlen)
{
	struct ctp_snap *s;
	struct dec z;
	int r = snap_new(name, err, errlen, &s);
	if (r < 0)
		return r;
	s->cap = max_decompressed;
	if ((r = dec_init(s, &z, max_decompressed)) == 0 &&
	    (r = dec_feed(s, &z, data, len)) == 0 &&
	    (r = dec_finish(s, &z)) == 0)
		r = snap_load_dec(s, &z);
	dec_free(&z);
	return snap_finish(s, r, ret);
}

/* Decode what fd holds into s (read to its end). */
static int snap_read_fd(struct ctp_snap *s, int fd, uint64_t max_decompressed)
{
	struct dec z = {0};
	char *in = NULL;
	int r;
	s->cap = max_decompressed;
	if ((r = dec_init(s, &z, max_decompressed)) < 0)
		goto out;
	size_t insz = ZSTD_DStreamInSize();
	in = malloc(insz);
	if (!in) {
		r = bad(s, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, in, insz);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = bad(s, -errno, "read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if ((r = dec_feed(s, &z, in, (size_t)n)) < 0)
			goto out;
	}
	if ((r = dec_finish(s, &z)) == 0)
		r = snap_load_dec(s, &z);
out:
	free(in);
	dec_free(&z);
	return r;
}

/* Open path for reading without waiting on it (a FIFO with no writer, a
 * device) and check what it is: a regular file, or a pipe or character
 * device behind a descriptor's name. Returns the descriptor or a negative
 * errno after a message in s. */
static int open_input(struct ctp_snap *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return bad(s, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return bad(s, -e, "%s", strerror(e));
	}
	if (S_ISREG(st.st_mode))
		return fd;
	if ((S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) &&
	    ctp_path_fd(path) >= 0) {
		/* The shell's pipe: read it as it comes. */
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
			return fd;
	}
	close(fd);
	if (S_ISDIR(st.st_mode))
		return bad(s, -EISDIR, "%s", strerror(EISDIR));
	return bad(s, -EINVAL,
		   "%s, not a snapshot file (a pipe is read as `-`, from "
		   "standard input)",
		   ctp_file_kind(st.st_mode));
}

int ctp_snap_open(const char *path, uint64_t max_decompressed,
		  struct ctp_snap **ret, char *err, size_t errlen)
{
	struct ctp_snap *s;
	int fd = STDIN_FILENO;
	int r = snap_new(path, err, errlen, &s);
	if (r < 0)
		return r;
	if (strcmp(path, "-") != 0 && (r = fd = open_input(s, path)) < 0)
		return snap_finish(s, r, ret);
	r = snap_read_fd(s, fd, max_decompressed);
	if (fd > STDIN_FILENO)
		close(fd);
	return snap_finish(s, r, ret);
}

int ctp_snap_open_fd(int fd, const char *name, uint64_t max_decompressed,
		     struct ctp_snap **ret, char *err, size_t errlen)
{
	struct ctp_snap *s;
	int r = snap_new(name, err, errlen, &s);
	if (r < 0)
		return r;
	return snap_finish(s, snap_read_fd(s, fd, max_decompressed), ret);
}

void ctp_snap_free(struct ctp_snap *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; snap->cols && i < snap->n_fields; i++)
		ctp_col_free(snap->cols[i]);
	if (snap->zone)
		msgpack_zone_free(snap->zone);
	if (snap->dzone)
		msgpack_zone_free(snap->dzone);
	while (snap->bigs) {
		struct big *b = snap->bigs;
		snap->bigs = b->next;
		free(b);
	}
	if (snap->raw_map)
		munmap(snap->raw, snap->raw_map);
	else
		free(snap->raw);
	free(snap);
}

/* ---- Accessors ---- */

const struct ctp_snap_header *ctp_snap_header(const struct ctp_snap *snap)
{
	return &snap->hdr;
}

size_t ctp_snap_n_fields(const struct ctp_snap *snap)
{
	return snap->n_fields;
}

const struct ctp_snap_field *ctp_snap_fields(const struct ctp_snap *snap)
{
	return snap->fields;
}

const struct ctp_snap_field *ctp_snap_field_find(const struct ctp_snap *snap,
						 const char *name)
{
	size_t lo = 0, hi = snap->n_fields;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ctp_snap_field *f =
			&snap->fields[snap->by_name[mid]];
		int c = strcmp(name, f->name);
		if (c == 0)
			return f;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

size_t ctp_snap_n_plugins(const struct ctp_snap *snap)
{
	return snap->n_plugins;
}

const struct ctp_snap_plugin *ctp_snap_plugins(const struct ctp_snap *snap)
{
	return snap->plugins;
}

const struct ctp_snap_readfail *ctp_snap_readfail(const struct ctp_snap *snap)
{
	return &snap->rf;
}

const struct ctp_snap_table *ctp_snap_table(const struct ctp_snap *snap,
					    uint8_t scope)
{
	if (scope < CTP_SCOPE_HOST || scope > CTP_SCOPE_EXITED)
		return NULL;
	return &snap->tables[scope];
}

struct ctp_value ctp_snap_get(const struct ctp_snap *snap,
			      const struct ctp_snap_field *field, size_t row)
{
	struct ctp_value none = {.type = CTP_VALUE_ABSENT};
	const struct ctp_snap_table *t = ctp_snap_table(snap, field->scope);
	/* A field of another snapshot (compare) is not indexed here. */
	if (field->index >= snap->n_fields ||
	    field != &snap->fields[field->index])
		return none;
	if (!t || !t->col || row >= t->rows || !t->col[field->index])
		return none;
	return t->col[field->index][row];
}

const struct ctp_col *ctp_snap_col(const struct ctp_snap *snap,
				   const struct ctp_snap_field *f)
{
	static const struct ctp_col none = {.type = CTP_TYPE_U64};
	/* A field of another snapshot (compare) is not indexed here. */
	if (f->index >= snap->n_fields || f != &snap->fields[f->index])
		return &none;
	/* The cache is the snapshot's own memory behind the const of its
	 * readers: one thread reads a snapshot at a time (serve holds its
	 * lock around the one it keeps). */
	struct ctp_col **slot = &((struct ctp_snap *)snap)->cols[f->index];
	if (!*slot && ctp_col_build(snap, f, slot) < 0)
		return NULL;
	return *slot ? *slot : &none;
}

const msgpack_object *ctp_snap_root(const struct ctp_snap *snap)
{
	return snap->zone ? &snap->root : NULL;
}

void ctp_snap_drop_tree(struct ctp_snap *snap)
{
	if (!snap || !snap->zone)
		return;
	msgpack_zone_free(snap->zone);
	snap->zone = NULL;
	memset(&snap->root, 0, sizeof(snap->root));
}

size_t ctp_snap_raw_size(const struct ctp_snap *snap)
{
	return snap->raw_len;
}

uint64_t ctp_snap_mem_size(const struct ctp_snap *snap)
{
	return snap->used;
}

long ctp_snap_row(const struct ctp_snap_table *t, uint64_t tgid, uint64_t tid)
{
	size_t lo = 0, hi = t ? t->rows : 0;
	bool by_tid = t && t->tid && tid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->tgid[mid] < tgid ||
		    (by_tid && t->tgid[mid] == tgid && t->tid[mid] < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!t || lo >= t->rows || t->tgid[lo] != tgid ||
	    (by_tid && t->tid[lo] != tid))
		return -1;
	return (long)lo;
}
