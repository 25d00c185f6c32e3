/* SPDX-License-Identifier: MIT */
/* Snapshot writer: struct ctp_capture -> zstd(MessagePack), docs/FORMAT.md. */
#include "writer.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>
#include <zstd.h>

#include "mpenc.h"
#include "format.h"
#include "ctprof/plugin-util.h"

/* ---- Output stream: msgpack bytes -> zstd -> fd ---- */

struct out {
	int fd;
	ZSTD_CCtx *cctx;
	char *in;
	size_t in_len, in_cap;
	char *buf;
	size_t buf_cap;
	uint64_t written;
	const volatile sig_atomic_t *cancel;
	int err; /* sticky: first failure, negative errno */
	char *msg;
	size_t msglen;
};

/* Record the first failure and its message; returns the failure kept. */
static int __attribute__((format(printf, 3, 4)))
fail(struct out *o, int err, const char *fmt, ...)
{
	if (o->err)
		return o->err;
	o->err = err;
	va_list ap;
	va_start(ap, fmt);
	if (o->msg && o->msglen)
		vsnprintf(o->msg, o->msglen, fmt, ap);
	va_end(ap);
	return err;
}

static int write_all(struct out *o, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR && !(o->cancel && *o->cancel))
				continue;
			int e = errno == EINTR ? ECANCELED : errno;
			fail(o, -e, "write: %s", strerror(e));
			return o->err;
		}
		p += w;
		n -= (size_t)w;
		o->written += (uint64_t)w;
	}
	return 0;
}

/* Compress what is buffered; with ZSTD_e_end also close the frame. */
static int flush_in(struct out *o, ZSTD_EndDirective mode)
{
	if (o->err)
		return o->err;
	if (o->cancel && *o->cancel) {
		fail(o, -ECANCELED, "cancelled");
		return o->err;
	}
	ZSTD_inBuffer ib = {o->in, o->in_len, 0};
	for (;;) {
		ZSTD_outBuffer ob = {o->buf, o->buf_cap, 0};
		size_t r = ZSTD_compressStream2(o->cctx, &ob, &ib, mode);
		if (ZSTD_isError(r)) {
			fail(o, -EIO, "zstd: %s", ZSTD_getErrorName(r));
			return o->err;
		}
		if (ob.pos && write_all(o, o->buf, ob.pos) < 0)
			return o->err;
		if (mode == ZSTD_e_end ? r == 0 : ib.pos == ib.size)
			break;
	}
	o->in_len = 0;
	return 0;
}

/* msgpack_packer_write: buffer small writes, compress in big chunks. */
static int pack_cb(void *data, const char *buf, size_t len)
{
	struct out *o = data;
	if (o->err)
		return -1;
	while (len) {
		size_t n = o->in_cap - o->in_len;
		if (n > len)
			n = len;
		memcpy(o->in + o->in_len, buf, n);
		o->in_len += n;
		buf += n;
		len -= n;
		if (o->in_len == o->in_cap && flush_in(o, ZSTD_e_continue) < 0)
			return -1;
	}
	return 0;
}

/* Room for n (at most in_cap) more bytes at o->in + o->in_len, flushing
 * what is buffered when short; NULL once the output has failed. The caller
 * then adds what it wrote to in_len. */
static unsigned char *room(struct out *o, size_t n)
{
	if (o->err)
		return NULL;
	if (o->in_cap - o->in_len < n && flush_in(o, ZSTD_e_continue) < 0)
		return NULL;
	return (unsigned char *)o->in + o->in_len;
}

/* ---- Packing helpers ---- */

/* A string or cpuset cell's encoding, kept for the next cell of the same
 * blob: most threads of a host share an affinity mask, a policy's name
 * and their cgroups' paths. */
#define BLOB_CACHE 512

/* More of them, when short: blob id may be in either of the two slots
 * 2 * (id % SHORT_SETS) and the one after, the newer first, so two blobs of
 * a column that alternate both stay. */
#define SHORT_SETS 64

struct short_blob {
	uint8_t type; /* of its cells; 0: empty */
	uint8_t n;
	uint64_t id;
	unsigned char b[32]; /* n bytes, the rest whatever */
};

struct w {
	const struct ctp_capture *cap;
	msgpack_packer pk;
	struct out *o;
	bool bc_valid;
	uint8_t bc_type; /* CTP_TYPE_STRING or CTP_TYPE_CPUSET */
	uint64_t bc_id;
	size_t bc_len;
	unsigned char bc_buf[BLOB_CACHE];
	struct short_blob sc[2 * SHORT_SETS];
};

static void pack_strn(struct w *w, const char *s, size_t n)
{
	msgpack_pack_str(&w->pk, n);
	msgpack_pack_str_body(&w->pk, s, n);
}

/* A string, or nil for NULL. */
static void pack_str(struct w *w, const char *s)
{
	if (s)
		pack_strn(w, s, strlen(s));
	else
		msgpack_pack_nil(&w->pk);
}

static void pack_blob_str(struct w *w, uint64_t id)
{
	size_t len;
	const char *s = ctp_blobpool_get(w->cap->blobs, id, &len);
	if (!s) {
		fail(w->o, -EINVAL, "inconsistent capture: blob %llu missing",
		     (unsigned long long)id);
		msgpack_pack_nil(&w->pk);
		return;
	}
	pack_strn(w, s, len);
}

static bool bit_at(const unsigned char *b, size_t i)
{
	return b[i / 8] >> (i % 8) & 1;
}

/* Where cpuset_runs() puts the [lo, hi] pairs: a packer, or a buffer
 * known to be large enough. */
struct run_sink {
	msgpack_packer *pk;
	unsigned char *buf;
	size_t len;
};

/*
 * Walk the runs of set bits of a cpuset blob (little-endian 64-bit words,
 * i.e. byte i/8 bit i%8 for CPU i), emitting [lo, hi] pairs to `sink` when
 * it is set. Returns the number of runs.
 */
static size_t cpuset_runs(const unsigned char *b, size_t len,
			  struct run_sink *sink)
{
	size_t nbits = len * 8, runs = 0, i = 0;
	while (i < nbits) {
		if (b[i / 8] == 0 && i % 8 == 0) {
			i += 8;
			continue;
		}
		if (!bit_at(b, i)) {
			i++;
			continue;
		}
		size_t lo = i;
		while (i < nbits && i % 8 == 0 && i + 8 <= nbits &&
		       b[i / 8] == 0xff)
			i += 8;
		while (i < nbits && bit_at(b, i)) {
			i++;
			while (i % 8 == 0 && i + 8 <= nbits && b[i / 8] == 0xff)
				i += 8;
		}
		runs++;
		if (sink && sink->pk) {
			msgpack_pack_uint64(sink->pk, lo);
			msgpack_pack_uint64(sink->pk, i - 1);
		} else if (sink) {
			sink->len += ctp_mp_u64(sink->buf + sink->len, lo);
			sink->len += ctp_mp_u64(sink->buf + sink->len, i - 1);
		}
	}
	return runs;
}

/* Whether the cache holds the encoding of blob id as a cell of type. */
static bool blob_cached(const struct w *w, uint8_t type, uint64_t id)
{
	return w->bc_valid && w->bc_id == id && w->bc_type == type;
}

static void blob_cache_keep(struct w *w, uint8_t type, uint64_t id, size_t len)
{
	w->bc_valid = true;
	w->bc_type = type;
	w->bc_id = id;
	w->bc_len = len;
}

/* A cpuset cell: an array of [lo, hi] CPU numbers, flattened. */
static void put_cpuset(struct w *w, uint64_t id)
{
	unsigned char *out;
	if (!blob_cached(w, CTP_TYPE_CPUSET, id)) {
		size_t len;
		const char *s = ctp_blobpool_get(w->cap->blobs, id, &len);
		if (!s) {
			pack_blob_str(w, id); /* reports the missing blob */
			return;
		}
		const unsigned char *b = (const unsigned char *)s;
		size_t runs = cpuset_runs(b, len, NULL);
		if (5 + 2 * runs * CTP_MP_MAX > sizeof(w->bc_buf)) {
			/* Too fragmented to keep: straight to the stream. */
			struct run_sink sink = {.pk = &w->pk};
			msgpack_pack_array(&w->pk, (uint32_t)(2 * runs));
			cpuset_runs(b, len, &sink);
			return;
		}
		struct run_sink sink = {.buf = w->bc_buf};
		sink.len = ctp_mp_array(w->bc_buf, (uint32_t)(2 * runs));
		cpuset_runs(b, len, &sink);
		blob_cache_keep(w, CTP_TYPE_CPUSET, id, sink.len);
	}
	out = room(w->o, w->bc_len);
	if (!out)
		return;
	memcpy(out, w->bc_buf, w->bc_len);
	w->o->in_len += w->bc_len;
}

/* A string cell. Its encoding goes in as the packer's would (pack_cb:
 * fill, flush when full), so the stream is cut where it always was. */
static void put_string(struct w *w, uint64_t id)
{
	struct out *o = w->o;
	if (!blob_cached(w, CTP_TYPE_STRING, id)) {
		size_t len;
		const char *s = ctp_blobpool_get(w->cap->blobs, id, &len);
		if (!s || len > sizeof(w->bc_buf) - 5) {
			pack_blob_str(w, id); /* missing, or long */
			return;
		}
		size_t n = ctp_mp_str(w->bc_buf, (uint32_t)len);
		memcpy(w->bc_buf + n, s, len);
		blob_cache_keep(w, CTP_TYPE_STRING, id, n + len);
	}
	if (o->err || o->in_cap - o->in_len <= w->bc_len) {
		pack_cb(o, (const char *)w->bc_buf, w->bc_len);
		return;
	}
	memcpy(o->in + o->in_len, w->bc_buf, w->bc_len);
	o->in_len += w->bc_len;
}

/* One table cell, nil when absent. */
static void put_cell(struct w *w, uint8_t type, bool present, uint64_t v)
{
	if (present && type == CTP_TYPE_STRING) {
		put_string(w, v);
		return;
	}
	if (present && type == CTP_TYPE_CPUSET) {
		put_cpuset(w, v);
		return;
	}
	unsigned char *b = room(w->o, CTP_MP_MAX);
	size_t n;
	if (!b)
		return;
	if (!present) {
		n = ctp_mp_nil(b);
	} else {
		switch (type) {
		case CTP_TYPE_U64:
			n = ctp_mp_u64(b, v);
			break;
		case CTP_TYPE_I64:
			n = ctp_mp_i64(b, (int64_t)v);
			break;
		case CTP_TYPE_BOOL:
			n = ctp_mp_bool(b, v != 0);
			break;
		case CTP_TYPE_CHAR:
			n = ctp_mp_char(b, (char)v);
			break;
		default:
			fail(w->o, -EINVAL, "field of unknown type %u", type);
			n = ctp_mp_nil(b);
		}
	}
	w->o->in_len += n;
}

/* How many of the next n numbers or nils (at most CTP_MP_MAX bytes each)
 * fit the buffer as it is, flushing first when not one does: where
 * put_cell() would flush, so a run of them is cut where cells one at a
 * time were. 0 once the output has failed. */
static size_t cells_room(struct out *o, size_t n)
{
	if (!room(o, CTP_MP_MAX))
		return 0;
	size_t m = (o->in_cap - o->in_len) / CTP_MP_MAX;
	return m < n ? m : n;
}

/* ---- Row order ---- */

/* One output row of the thread or process table. */
struct rowref {
	uint64_t key; /* tgid, or tid inside a process */
	uint32_t worker;
	uint32_t row;
	uint32_t aux; /* threads: tgid; processes: thread rows */
};

static int cmp_rowref(const void *a, const void *b)
{
	const struct rowref *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->worker != y->worker)
		return x->worker < y->worker ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * A stretch of a table's rows that are consecutive rows of one block:
 * output rows mostly are (a process's threads sit together in the table
 * of the worker that took it), so a column is read a stretch at a time,
 * not looked up row by row.
 */
struct run {
	const struct ctp_block *blk; /* NULL: rows past their table's end */
	uint32_t k, n;		     /* rows k to k + n - 1 of blk */
};

/* The rows of a table in the order of the file, and their stretches. */
struct rows {
	const struct rowref *refs; /* NULL for the cgroups and exited */
	size_t n;
	struct run *runs;
	size_t nruns;
};

/* r over n rows: row i is refs[i]'s row of table tabs[refs[i].worker], or
 * without refs row i of the one table tabs. 0 or -ENOMEM. */
static int rows_init(struct rows *r, const struct ctp_table *tabs,
		     const struct rowref *refs, size_t n)
{
	*r = (struct rows){.refs = refs, .n = n};
	r->runs = malloc((n ? n : 1) * sizeof(*r->runs));
	if (!r->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ctp_table *t = refs ? &tabs[refs[i].worker] : tabs;
		uint32_t row = refs ? refs[i].row : (uint32_t)i;
		const struct ctp_block *blk =
			row < t->nrows ? &t->blocks[row / CTP_BLOCK_ROWS]
				       : NULL;
		uint32_t k = row % CTP_BLOCK_ROWS;
		struct run *last = r->nruns ? &r->runs[r->nruns - 1] : NULL;

		if (last && last->blk == blk &&
		    (!blk || last->k + last->n == k))
			last->n++;
		else
			r->runs[r->nruns++] = (struct run){blk, k, 1};
	}
	return 0;
}

/* Column col's presence bitmap in blk, NULL when no row of it has one. */
static const uint64_t *present_of(const struct ctp_block *blk, uint32_t col)
{
	return blk && col < blk->ncols ? blk->present[col] : NULL;
}

/* From row k, the rows to end that share k's bitmap word. */
static uint32_t word_span(uint32_t k, uint32_t end)
{
	uint32_t m = 64 - k % 64;
	return m < end - k ? m : end - k;
}

/* Bits k to k + m - 1 of bitmap p, m at most word_span(k, ...). */
static uint64_t bits_at(const uint64_t *p, uint32_t k, uint32_t m)
{
	uint64_t all = m == 64 ? ~0ull : (1ull << m) - 1;
	return p[k / 64] >> (k % 64) & all;
}

struct layout {
	struct rowref *threads; /* (tgid, tid) order */
	size_t n_threads;
	struct rowref *procs; /* tgid order */
	size_t n_procs;
	/* The tables' rows: threads, processes, cgroups, exited. */
	struct rows th, pr, cg, ex;
	/* per field id: column has at least one present cell */
	bool *used;
};

static void layout_done(struct layout *l)
{
	free(l->threads);
	free(l->procs);
	free(l->th.runs);
	free(l->pr.runs);
	free(l->cg.runs);
	free(l->ex.runs);
	free(l->used);
}

static int cmp_span(const void *a, const void *b)
{
	const struct ctp_span *x = *(const struct ctp_span *const *)a;
	const struct ctp_span *y = *(const struct ctp_span *const *)b;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->worker < y->worker ? -1 : x->worker > y->worker;
}

/*
 * Order rows as the format requires: processes by tgid, threads by (tgid,
 * tid). Spans are normally already sorted by the engine and threads within a
 * process usually come in tid order; sorting again is cheap and makes the
 * output independent of how workers split the walk.
 */
/* Whether any block of the n tables holds column col (a cell of it was
 * set at some point): without one, no row has a value. */
static bool col_allocated(const struct ctp_table *t, uint32_t n, uint32_t col)
{
	for (uint32_t w = 0; w < n; w++)
		for (uint32_t b = 0; b < t[w].nblocks; b++)
			if (col < t[w].blocks[b].ncols &&
			    t[w].blocks[b].present[col])
				return true;
	return false;
}

/* Pointers to the n spans of s, checked against the worker tables and
 * sorted by tgid, in *out (NULL when n is 0); their threads added to *nt.
 * 0, or o's error (-EINVAL, -ENOMEM). */
static int sorted_spans(const struct ctp_capture *cap, const struct ctp_span *s,
			size_t n, const struct ctp_span ***out, size_t *nt,
			struct out *o)
{
	const struct ctp_span **p = NULL;
	*out = NULL;
	if (!n)
		return 0;
	p = malloc(n * sizeof(*p));
	if (!p) {
		fail(o, -ENOMEM, "out of memory");
		return o->err;
	}
	for (size_t i = 0; i < n; i++) {
		p[i] = &s[i];
		if (s[i].worker >= cap->n_workers ||
		    (uint64_t)s[i].thread_row + s[i].nthreads >
			    cap->threads[s[i].worker].nrows) {
			fail(o, -EINVAL,
			     "inconsistent capture: span of tgid %u points "
			     "past worker %u's thread table",
			     s[i].tgid, s[i].worker);
			free(p);
			return o->err;
		}
		*nt += s[i].nthreads;
	}
	qsort(p, n, sizeof(*p), cmp_span);
	*out = p;
	return 0;
}

/*
 * The thread rows of the process of span s, in tid order, appended to
 * l->threads: its owner's run, then the tgid's extra runs of a split
 * process (xp from *x on, by tgid). Its process row is appended too.
 */
static int gather_process(const struct ctp_capture *cap, struct layout *l,
			  const struct ctp_span *s, const struct ctp_span **xp,
			  size_t *x, struct out *o)
{
	struct rowref *first = &l->threads[l->n_threads];
	size_t n = 0;
	bool sorted = true;

	for (const struct ctp_span *r = s; r;) {
		const struct ctp_table *tt = &cap->threads[r->worker];

		for (uint32_t k = 0; k < r->nthreads; k++, n++) {
			uint32_t row = r->thread_row + k;
			uint64_t tid;

			if (!ctp_table_get(tt, row, CTP_TCOL_TID, &tid))
				return fail(o, -EINVAL,
					    "inconsistent capture: a thread "
					    "of tgid %u has no tid",
					    s->tgid);
			first[n] =
				(struct rowref){tid, r->worker, row, s->tgid};
			if (n && first[n - 1].key > tid)
				sorted = false;
		}
		r = *x < cap->n_xspans && xp[*x]->tgid == s->tgid ? xp[(*x)++]
								  : NULL;
	}
	if (!sorted)
		qsort(first, n, sizeof(*first), cmp_rowref);
	l->procs[l->n_procs++] =
		(struct rowref){s->tgid, s->worker, s->proc_row, (uint32_t)n};
	l->n_threads += n;
	return 0;
}

/* Whether any row has a value in column col. */
static bool any_cell(const struct rows *r, uint32_t col)
{
	for (size_t i = 0; i < r->nruns; i++) {
		const struct run *u = &r->runs[i];
		const uint64_t *p = present_of(u->blk, col);
		for (uint32_t k = u->k, end = k + u->n; p && k < end;) {
			uint32_t m = word_span(k, end);
			if (bits_at(p, k, m))
				return true;
			k += m;
		}
	}
	return false;
}

/* Whether any row holds a value of field f (unused fields are left out of
 * the file). */
static bool field_used(const struct ctp_capture *cap, const struct layout *l,
		       const struct ctp_field *f)
{
	const struct ctp_table *t;
	const struct rows *r;
	uint32_t nt = 1, col;

	switch (f->scope) {
	case CTP_SCOPE_THREAD:
		t = cap->threads, nt = cap->n_workers, r = &l->th;
		col = CTP_THREAD_IDENT + f->col;
		break;
	case CTP_SCOPE_PROCESS:
		t = cap->procs, nt = cap->n_workers, r = &l->pr;
		col = CTP_PROCESS_IDENT + f->col;
		break;
	case CTP_SCOPE_CGROUP:
		t = &cap->cgroups, r = &l->cg, col = CTP_CGROUP_IDENT + f->col;
		break;
	case CTP_SCOPE_EXITED:
		t = &cap->exited, r = &l->ex, col = CTP_EXITED_IDENT + f->col;
		break;
	default:
		return true;
	}
	/* Fields no row got (a kernel without the feature) are the common
	 * unused case: settled without looking at a row. */
	return col_allocated(t, nt, col) && any_cell(r, col);
}

/* Every process with a row and its threads, by tgid then tid, and which
 * fields hold any value. */
static int layout_rows(const struct ctp_capture *cap, struct layout *l,
		       struct out *o)
{
	const struct ctp_span **sp = NULL, **xp = NULL;
	uint32_t nf = ctp_registry_count(&cap->reg);
	size_t nt = 0, x = 0;
	int ret = 0;

	/* The processes' spans and the extra thread runs of split ones,
	 * each by tgid. */
	if (sorted_spans(cap, cap->spans, cap->n_spans, &sp, &nt, o) < 0 ||
	    sorted_spans(cap, cap->xspans, cap->n_xspans, &xp, &nt, o) < 0) {
		ret = o->err;
		goto out;
	}
	l->threads = calloc(nt ? nt : 1, sizeof(*l->threads));
	l->procs = calloc(cap->n_spans ? cap->n_spans : 1, sizeof(*l->procs));
	l->used = calloc(nf ? nf : 1, sizeof(*l->used));
	if (!l->threads || !l->procs || !l->used) {
		ret = fail(o, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cap->n_spans && ret == 0; i++) {
		while (x < cap->n_xspans && xp[x]->tgid < sp[i]->tgid)
			x++; /* runs of no recorded process */
		/* A process without a row (the engine drops those) is left
		 * out with its threads, so nthreads always sums to the
		 * thread rows. */
		if (sp[i]->proc_row < cap->procs[sp[i]->worker].nrows)
			ret = gather_process(cap, l, sp[i], xp, &x, o);
	}
	if (ret == 0 &&
	    (rows_init(&l->th, cap->threads, l->threads, l->n_threads) < 0 ||
	     rows_init(&l->pr, cap->procs, l->procs, l->n_procs) < 0 ||
	     rows_init(&l->cg, &cap->cgroups, NULL, cap->cgroups.nrows) < 0 ||
	     rows_init(&l->ex, &cap->exited, NULL, cap->exited.nrows) < 0))
		ret = fail(o, -ENOMEM, "out of memory");
	for (uint32_t id = 0; id < nf && ret == 0; id++)
		l->used[id] =
			field_used(cap, l, ctp_registry_get(&cap->reg, id));
out:
	free(sp);
	free(xp);
	return ret;
}

/* ---- Sections ---- */

static void pack_key(struct w *w, const char *k)
{
	pack_strn(w, k, strlen(k));
}

static void pack_header(struct w *w, const char *tool_version)
{
	const struct ctp_capture *cap = w->cap;
	msgpack_packer *pk = &w->pk;

	pack_key(w, "format");
	pack_key(w, CTP_SNAP_FORMAT);
	pack_key(w, "version");
	msgpack_pack_uint64(pk, CTP_SNAP_VERSION);

	pack_key(w, "tool");
	msgpack_pack_map(pk, 2);
	pack_key(w, "name");
	pack_key(w, "ctprof-core");
	pack_key(w, "version");
	pack_str(w, tool_version);

	pack_key(w, "capture");
	msgpack_pack_map(
		pk,
		7 + (cap->hostname != NULL) + (cap->ptrace_capable >= 0) +
			(cap->start_boottime_ns != 0) + (cap->n_self != 0) +
			(cap->cgroups_boottime_ns != 0 && cap->cgroups.nrows) +
			2 * (cap->walk_source[0] != '\0') +
			2 * (cap->walk_fallback[0] != '\0'));
	pack_key(w, "start_realtime_ns");
	msgpack_pack_uint64(pk, cap->start_realtime_ns);
	pack_key(w, "end_realtime_ns");
	msgpack_pack_uint64(pk, cap->end_realtime_ns);
	pack_key(w, "duration_ns");
	msgpack_pack_uint64(pk, cap->end_mono_ns >= cap->start_mono_ns
					? cap->end_mono_ns - cap->start_mono_ns
					: 0);
	pack_key(w, "workers");
	msgpack_pack_uint64(pk, cap->n_workers);
	pack_key(w, "roots");
	msgpack_pack_map(pk, 3);
	pack_key(w, "proc");
	pack_str(w, cap->proc_root);
	pack_key(w, "sys");
	pack_str(w, cap->sys_root);
	pack_key(w, "cgroup");
	pack_str(w, cap->cgroup_root);
	pack_key(w, "config_path");
	pack_str(w, cap->config_path);
	pack_key(w, "kernel_release");
	pack_str(w, cap->kernel_release);
	/* Hostnames identify machines: only on request (record_hostname). */
	if (cap->ptrace_capable >= 0) {
		pack_key(w, "ptrace_capable");
		if (cap->ptrace_capable)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
	}
	if (cap->hostname) {
		pack_key(w, "hostname");
		pack_str(w, cap->hostname);
	}
	if (cap->start_boottime_ns) {
		pack_key(w, "start_boottime_ns");
		msgpack_pack_uint64(pk, cap->start_boottime_ns);
	}
	if (cap->cgroups_boottime_ns && cap->cgroups.nrows) {
		pack_key(w, "cgroups_read_boottime_ns");
		msgpack_pack_uint64(pk, cap->cgroups_boottime_ns);
	}
	if (cap->n_self) {
		pack_key(w, "self_tgids");
		msgpack_pack_array(pk, cap->n_self);
		for (uint8_t i = 0; i < cap->n_self; i++)
			msgpack_pack_uint32(pk, cap->self_tgid[i]);
	}
	/* How the tasks were listed: absent, from the proc root with no
	 * walk source loaded (FORMAT.md). */
	if (cap->walk_source[0]) {
		pack_key(w, "walk_source");
		pack_str(w, cap->walk_source);
		pack_key(w, "walk_unlisted");
		msgpack_pack_uint64(pk, cap->walk_unlisted);
	}
	if (cap->walk_fallback[0]) {
		pack_key(w, "walk_fallback");
		pack_str(w, cap->walk_fallback);
		pack_key(w, "walk_fallbacks");
		msgpack_pack_uint64(pk, cap->walk_fallbacks);
	}
}

/* "derive": nil, or the formula of a derived field (FORMAT.md §4). */
static void pack_derive(struct w *w, const struct ctp_field *f)
{
	pack_key(w, "derive");
	if (!f->n_terms) {
		msgpack_pack_nil(&w->pk);
		return;
	}
	msgpack_pack_array(&w->pk, f->n_terms);
	for (uint8_t i = 0; i < f->n_terms; i++) {
		const struct ctp_field_term *t = &f->terms[i];
		msgpack_pack_map(&w->pk, 3);
		pack_key(w, "field");
		pack_str(w, ctp_registry_get(&w->cap->reg, t->input)->name);
		pack_key(w, "coef");
		msgpack_pack_int64(&w->pk, t->coef);
		pack_key(w, "max_set");
		msgpack_pack_uint64(&w->pk, t->max_set);
	}
}

/* A field's role in the file (FORMAT.md §4), NULL for none. */
static const char *field_role(const struct ctp_field *f)
{
	return f->flags & CTP_FIELD_START_TIME ? "start_time"
	       : f->flags & CTP_FIELD_ELAPSED  ? "elapsed"
	       : f->flags & CTP_FIELD_REAPED   ? "reaped"
	       : f->flags & CTP_FIELD_PARENT   ? "parent"
	       : f->flags & CTP_FIELD_CGROUP   ? "cgroup"
					       : NULL;
}

/* The fields of scope `scope` (exited = true) or of every other scope, as
 * an array of §4 maps under key `key`. */
static void pack_field_list(struct w *w, const char *key, bool exited)
{
	const struct ctp_capture *cap = w->cap;
	uint32_t nf = ctp_registry_count(&cap->reg), n = 0;

	for (uint32_t id = 0; id < nf; id++)
		n += (ctp_registry_get(&cap->reg, id)->scope ==
		      CTP_SCOPE_EXITED) == exited;
	pack_key(w, key);
	msgpack_pack_array(&w->pk, n);
	for (uint32_t id = 0; id < nf; id++) {
		const struct ctp_field *f = ctp_registry_get(&cap->reg, id);
		if ((f->scope == CTP_SCOPE_EXITED) != exited)
			continue;
		const char *role = field_role(f);
		bool step = f->flags & CTP_FIELD_KIB_STEP;
		msgpack_pack_map(&w->pk, 9 + (f->section != NULL) +
						 (f->dims != NULL) +
						 (role != NULL) + step);
		pack_key(w, "name");
		pack_str(w, f->name);
		pack_key(w, "plugin");
		pack_str(w, f->plugin < cap->n_plugins
				    ? cap->plugins[f->plugin].name
				    : NULL);
		pack_key(w, "scope");
		pack_str(w, ctp_scope_name(f->scope));
		pack_key(w, "type");
		pack_str(w, ctp_type_name(f->type));
		pack_key(w, "unit");
		pack_str(w, ctp_unit_name(f->unit));
		pack_key(w, "kind");
		pack_str(w, ctp_kind_name(f->kind));
		pack_key(w, "rule");
		pack_str(w, ctp_rule_name(f->rule));
		pack_key(w, "help");
		pack_str(w, f->help ? f->help : "");
		pack_derive(w, f);
		if (f->section) {
			pack_key(w, "section");
			pack_str(w, f->section);
		}
		if (f->dims) {
			pack_key(w, "dims");
			pack_str(w, f->dims);
		}
		if (role) {
			pack_key(w, "role");
			pack_str(w, role);
		}
		if (step) {
			pack_key(w, "step");
			msgpack_pack_uint64(&w->pk, 1024);
		}
		if (!ctp_scope_name(f->scope) || !ctp_type_name(f->type))
			fail(w->o, -EINVAL, "field %s: bad scope or type",
			     f->name);
	}
}

/* The top-level "fields": every field but the exited table's, which that
 * table lists itself so a reader that does not know it skips them too. */
static void pack_fields(struct w *w)
{
	pack_field_list(w, "fields", false);
}

static void pack_plugins(struct w *w)
{
	const struct ctp_capture *cap = w->cap;
	msgpack_packer *pk = &w->pk;
	bool spoiled = ctp_capture_spoiled(cap, NULL, 0);

	pack_key(w, "plugins");
	msgpack_pack_array(pk, cap->n_plugins);
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		const struct ctp_plugin_info *p = &cap->plugins[i];
		msgpack_pack_map(pk, spoiled ? 13 : 12);
		pack_key(w, "name");
		pack_str(w, p->name);
		pack_key(w, "status");
		pack_str(w, ctp_status_name(p->status));
		pack_key(w, "reason");
		pack_str(w, p->reason);
		pack_key(w, "hint");
		pack_str(w, ctp_plugin_hint(p));
		pack_key(w, "version");
		pack_str(w, p->version);
		pack_key(w, "path");
		pack_str(w, p->path);
		pack_key(w, "required");
		if (p->required)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		pack_key(w, "time_ns");
		msgpack_pack_uint64(pk, atomic_load(&p->time_ns));
		pack_key(w, "calls");
		msgpack_pack_uint64(pk, atomic_load(&p->calls));
		pack_key(w, "errors");
		msgpack_pack_uint64(pk, atomic_load(&p->errors));
		pack_key(w, "vanished");
		msgpack_pack_uint64(pk, atomic_load(&p->vanished));
		pack_key(w, "summary");
		uint32_t ns = p->n_summary < CTP_MAX_SUMMARY ? p->n_summary
							     : CTP_MAX_SUMMARY;
		msgpack_pack_map(pk, ns);
		for (uint32_t s = 0; s < ns; s++) {
			pack_str(w,
				 p->summary_name[s] ? p->summary_name[s] : "");
			msgpack_pack_uint64(pk, atomic_load(&p->summary[s]));
		}
		if (spoiled) {
			pack_key(w, "resource");
			msgpack_pack_uint64(pk, atomic_load(&p->resource));
		}
	}
}

/* key: a map of every tallied file's name to its count[]. */
static void pack_file_counts(struct w *w, const char *key,
			     const uint64_t *count, uint32_t nfiles)
{
	const struct ctp_readfail *rf = &w->cap->rf;
	pack_key(w, key);
	msgpack_pack_map(&w->pk, nfiles);
	for (uint32_t i = 0; i < nfiles; i++) {
		pack_str(w, rf->file[i] ? rf->file[i] : "");
		msgpack_pack_uint64(&w->pk, count[i]);
	}
}

static void pack_readfail(struct w *w)
{
	const struct ctp_readfail *rf = &w->cap->rf;
	msgpack_packer *pk = &w->pk;
	uint32_t nfiles =
		rf->n_files < CTP_MAX_FILES ? rf->n_files : CTP_MAX_FILES;
	const char *dominant = NULL;
	uint64_t most = 0;

	uint32_t ngates = 0;
	for (uint32_t i = 0; i < nfiles; i++) {
		if (rf->failures[i] > most) {
			most = rf->failures[i];
			dominant = rf->file[i];
		}
		ngates += rf->gate[i] != NULL;
	}

	pack_key(w, "read_failures");
	bool spoiled = ctp_capture_spoiled(w->cap, NULL, 0);
	msgpack_pack_map(pk, spoiled ? 16 : 10);
	pack_key(w, "tids_walked");
	msgpack_pack_uint64(pk, rf->tids_walked);
	pack_key(w, "tids_recorded");
	msgpack_pack_uint64(pk, rf->tids_recorded);
	pack_key(w, "tids_vanished");
	msgpack_pack_uint64(pk, rf->tids_vanished);
	pack_key(w, "tgids_walked");
	msgpack_pack_uint64(pk, rf->tgids_walked);
	pack_key(w, "tgids_vanished");
	msgpack_pack_uint64(pk, rf->tgids_vanished);
	pack_file_counts(w, "files", rf->failures, nfiles);
	pack_file_counts(w, "missing", rf->missing, nfiles);
	pack_file_counts(w, "denied", rf->denied, nfiles);
	pack_key(w, "dominant_file");
	pack_str(w, dominant);
	pack_key(w, "gates");
	msgpack_pack_map(pk, ngates);
	for (uint32_t i = 0; i < nfiles; i++) {
		if (!rf->gate[i])
			continue;
		pack_str(w, rf->file[i] ? rf->file[i] : "");
		pack_str(w, rf->gate[i]);
	}
	/* Only a capture short of resources: every other one writes the
	 * bytes it wrote before these keys existed. */
	if (!spoiled)
		return;
	pack_key(w, "tids_unread_resource");
	msgpack_pack_uint64(pk, rf->tids_unread_resource);
	pack_key(w, "tgids_unread_resource");
	msgpack_pack_uint64(pk, rf->tgids_unread_resource);
	pack_key(w, "cgroups_unread_resource");
	msgpack_pack_uint64(pk, rf->cgroups_unread_resource);
	pack_file_counts(w, "resource", rf->resource, nfiles);
	pack_key(w, "resource_error");
	pack_str(w, ctp_resource_errname(rf->resource_err));
	pack_key(w, "nofile_limit");
	msgpack_pack_uint64(pk, rf->nofile_limit);
}

static void pack_host(struct w *w)
{
	const struct ctp_capture *cap = w->cap;
	uint32_t nf = ctp_registry_count(&cap->reg), n = 0;

	for (uint32_t id = 0; id < nf; id++)
		n += ctp_registry_get(&cap->reg, id)->scope == CTP_SCOPE_HOST;
	pack_key(w, "host");
	msgpack_pack_map(&w->pk, n);
	for (uint32_t id = 0; id < nf; id++) {
		const struct ctp_field *f = ctp_registry_get(&cap->reg, id);
		if (f->scope != CTP_SCOPE_HOST)
			continue;
		uint64_t v = 0;
		bool present = ctp_table_get(&cap->host, 0,
					     CTP_HOST_IDENT + f->col, &v);
		pack_str(w, f->name);
		put_cell(w, f->type, present, v);
	}
}

/* ---- Columns ----
 *
 * A column's cells in a run are encoded by a loop of the column's type and
 * width. A 64-row word of the presence bitmap that is full or empty is
 * taken whole; only a mixed one is tested row by row.
 */

static size_t nils(unsigned char *b, size_t n)
{
	memset(b, CTP_MP_NIL, n);
	return n;
}

static size_t enc_u(unsigned char *b, uint64_t v)
{
	return ctp_mp_u64(b, v);
}

static size_t enc_i(unsigned char *b, uint64_t v)
{
	return ctp_mp_i64(b, (int64_t)v);
}

static size_t enc_b(unsigned char *b, uint64_t v)
{
	return ctp_mp_bool(b, v != 0);
}

static size_t enc_c(unsigned char *b, uint64_t v)
{
	return ctp_mp_char(b, (char)v);
}

/* n cells from row k of a block's column: its values and bitmap. */
typedef size_t run_coder(unsigned char *b, const void *vals,
			 const uint64_t *present, uint32_t k, uint32_t n);

#define RUN_CODER(name, T, ENC)                                                \
	static size_t name(unsigned char *b, const void *vals,                 \
			   const uint64_t *present, uint32_t k, uint32_t n)    \
	{                                                                      \
		const T *v = vals;                                             \
		size_t len = 0;                                                \
		for (uint32_t end = k + n, m; k < end; k += m) {               \
			m = word_span(k, end);                                 \
			uint64_t bits = bits_at(present, k, m);                \
			if (bits == (m == 64 ? ~0ull : (1ull << m) - 1))       \
				for (uint32_t j = k; j < k + m; j++)           \
					len += ENC(b + len, v[j]);             \
			else if (!bits)                                        \
				len += nils(b + len, m);                       \
			else                                                   \
				for (uint32_t j = 0; j < m; j++)               \
					len += bits >> j & 1                   \
						       ? ENC(b + len,          \
							     v[k + j])         \
						       : ctp_mp_nil(b + len);  \
		}                                                              \
		return len;                                                    \
	}

RUN_CODER(run_u8, uint8_t, enc_u)
RUN_CODER(run_u16, uint16_t, enc_u)
RUN_CODER(run_u32, uint32_t, enc_u)
RUN_CODER(run_u64, uint64_t, enc_u)
RUN_CODER(run_i64, uint64_t, enc_i)
RUN_CODER(run_b8, uint8_t, enc_b)
RUN_CODER(run_b16, uint16_t, enc_b)
RUN_CODER(run_b32, uint32_t, enc_b)
RUN_CODER(run_b64, uint64_t, enc_b)
RUN_CODER(run_c8, uint8_t, enc_c)
RUN_CODER(run_c16, uint16_t, enc_c)
RUN_CODER(run_c32, uint32_t, enc_c)
RUN_CODER(run_c64, uint64_t, enc_c)

/* The loop for cells of type `type` and 1 << lg bytes; NULL for strings,
 * cpusets and unknown types, which go a cell at a time. */
static run_coder *coder_of(uint8_t type, uint8_t lg)
{
	static run_coder *const u[] = {run_u8, run_u16, run_u32, run_u64};
	static run_coder *const b[] = {run_b8, run_b16, run_b32, run_b64};
	static run_coder *const c[] = {run_c8, run_c16, run_c32, run_c64};

	lg = lg < 3 ? lg : 3; /* as ctp_cell_load() */
	switch (type) {
	case CTP_TYPE_U64:
		return u[lg];
	case CTP_TYPE_I64:
		/* A narrower cell holds a value that is not negative. */
		return lg < 3 ? u[lg] : run_i64;
	case CTP_TYPE_BOOL:
		return b[lg];
	case CTP_TYPE_CHAR:
		return c[lg];
	}
	return NULL;
}

/* Column col of run u: numbers, bools or chars, nil where absent. */
static void put_run_coded(struct w *w, const struct run *u, uint32_t col,
			  uint8_t type)
{
	const uint64_t *p = present_of(u->blk, col);
	run_coder *code = p ? coder_of(type, u->blk->lg[col]) : NULL;
	struct out *o = w->o;

	for (uint32_t k = u->k, left = u->n, m; left; k += m, left -= m) {
		m = (uint32_t)cells_room(o, left);
		if (!m)
			return;
		unsigned char *b = (unsigned char *)o->in + o->in_len;
		o->in_len +=
			code ? code(b, u->blk->vals[col], p, k, m) : nils(b, m);
	}
}

/* Column col of run u a cell at a time (strings, cpusets, unknown types),
 * values at or past limit as nil. */
static void put_run_cells(struct w *w, const struct run *u, uint32_t col,
			  uint8_t type, uint64_t limit)
{
	const uint64_t *p = present_of(u->blk, col);

	for (uint32_t k = u->k; k < u->k + u->n && !w->o->err; k++) {
		uint64_t v = 0;
		bool has = p && (p[k / 64] >> (k % 64) & 1);
		if (has)
			v = ctp_cell_load(u->blk->vals[col], u->blk->lg[col],
					  k);
		put_cell(w, type, has && v < limit, v);
	}
}

/* Column col of run u, of strings or cpusets. A cell of a blob whose
 * encoding is kept (most cells: a host has few names, paths and affinity
 * masks) is copied from w->sc or w->bc_buf and an absent one written in
 * place; any other cell goes through put_cell(), and so does one that
 * might not fit, for the stream to be cut where put_cell() cuts it. */
static void put_run_blobs(struct w *w, const struct run *u, uint32_t col,
			  uint8_t type)
{
	const uint64_t *p = present_of(u->blk, col);
	struct out *o = w->o;

	if (!p) {
		put_run_coded(w, u, col, type); /* all nil */
		return;
	}
	const void *vals = u->blk->vals[col];
	uint8_t lg = u->blk->lg[col];
	unsigned char *b = (unsigned char *)o->in + o->in_len;
	size_t left = o->in_cap - o->in_len;

	for (uint32_t k = u->k, end = k + u->n, m; k < end && !o->err; k += m) {
		m = word_span(k, end);
		uint64_t bits = bits_at(p, k, m);
		for (uint32_t j = 0; j < m; j++) {
			uint64_t id = ctp_cell_load(vals, lg, k + j);
			bool has = bits >> j & 1;
			struct short_blob *e = &w->sc[2 * (id % SHORT_SETS)];
			e += e->id != id; /* the other way */
			if (has && e->type == type && e->id == id &&
			    left > sizeof(e->b)) {
				memcpy(b, e->b, sizeof(e->b));
				b += e->n;
				left -= e->n;
				continue;
			}
			if (has && blob_cached(w, type, id) &&
			    left > w->bc_len) {
				memcpy(b, w->bc_buf, w->bc_len); /* long */
				b += w->bc_len;
				left -= w->bc_len;
				continue;
			}
			if (!has && left >= CTP_MP_MAX) {
				b += ctp_mp_nil(b);
				left--;
				continue;
			}
			o->in_len = o->in_cap - left;
			put_cell(w, type, has, id);
			b = (unsigned char *)o->in + o->in_len;
			left = o->in_cap - o->in_len;
			if (has && blob_cached(w, type, id) &&
			    w->bc_len <= sizeof(e->b)) {
				e = &w->sc[2 * (id % SHORT_SETS)];
				e[1] = e[0];
				e->type = type;
				e->id = id;
				e->n = (uint8_t)w->bc_len;
				memcpy(e->b, w->bc_buf, sizeof(e->b));
			}
		}
	}
	o->in_len = o->in_cap - left;
}

/* Whether every value of column col in run u is below limit. */
static bool run_below(const struct run *u, uint32_t col, uint64_t limit)
{
	const uint64_t *p = present_of(u->blk, col);

	for (uint32_t k = u->k; p && k < u->k + u->n; k++)
		if ((p[k / 64] >> (k % 64) & 1) &&
		    ctp_cell_load(u->blk->vals[col], u->blk->lg[col], k) >=
			    limit)
			return false;
	return true;
}

/* Column col of the rows r as an array of cells of type type, nil where a
 * row has none or a value at or past limit. */
static void pack_column(struct w *w, const struct rows *r, uint32_t col,
			uint8_t type, uint64_t limit)
{
	bool coded = coder_of(type, 0);
	bool blobs = type == CTP_TYPE_STRING || type == CTP_TYPE_CPUSET;

	msgpack_pack_array(&w->pk, r->n);
	for (size_t i = 0; i < r->nruns && !w->o->err; i++) {
		const struct run *u = &r->runs[i];
		if (coded && (limit == UINT64_MAX || run_below(u, col, limit)))
			put_run_coded(w, u, col, type);
		else if (blobs && limit == UINT64_MAX)
			put_run_blobs(w, u, col, type);
		else
			put_run_cells(w, u, col, type, limit);
	}
}

static void pack_cells(struct w *w, const struct rows *r, uint32_t col,
		       uint8_t type)
{
	pack_column(w, r, col, type, UINT64_MAX);
}

static void pack_columns(struct w *w, const struct layout *l,
			 const struct rows *r, uint8_t scope, uint32_t ident)
{
	const struct ctp_capture *cap = w->cap;
	uint32_t nf = ctp_registry_count(&cap->reg), n = 0;

	for (uint32_t id = 0; id < nf; id++)
		n += ctp_registry_get(&cap->reg, id)->scope == scope &&
		     l->used[id];
	pack_key(w, "columns");
	msgpack_pack_map(&w->pk, n);
	for (uint32_t id = 0; id < nf && !w->o->err; id++) {
		const struct ctp_field *f = ctp_registry_get(&cap->reg, id);
		if (f->scope != scope || !l->used[id])
			continue;
		pack_str(w, f->name);
		pack_cells(w, r, ident + f->col, f->type);
	}
}

/* An identity column: blob ids as strings, or numbers; nil when absent. */
static void pack_ident(struct w *w, const struct rows *r, const char *name,
		       uint32_t col, bool blob)
{
	pack_key(w, name);
	pack_cells(w, r, col, blob ? CTP_TYPE_STRING : CTP_TYPE_U64);
}

/* An identity column the layout knows: each row's key (tgid, tid), or with
 * aux its aux (a thread's tgid, a process's thread rows). */
static void pack_refs(struct w *w, const struct rows *r, const char *name,
		      bool aux)
{
	struct out *o = w->o;

	pack_key(w, name);
	msgpack_pack_array(&w->pk, r->n);
	for (size_t i = 0, m; i < r->n; i += m) {
		m = cells_room(o, r->n - i);
		if (!m)
			return;
		unsigned char *b = (unsigned char *)o->in + o->in_len;
		size_t len = 0;
		for (size_t j = i; j < i + m; j++)
			len += ctp_mp_u64(b + len, aux ? r->refs[j].aux
						       : r->refs[j].key);
		o->in_len += len;
	}
}

static void pack_tables(struct w *w, const struct layout *l)
{
	const struct ctp_capture *cap = w->cap;
	msgpack_packer *pk = &w->pk;
	const struct rows *cg = &l->cg, *pr = &l->pr, *th = &l->th;

	pack_key(w, "cgroups");
	msgpack_pack_map(pk, 3);
	pack_key(w, "rows");
	msgpack_pack_uint64(pk, cg->n);
	pack_ident(w, cg, "path", CTP_CCOL_PATH, true);
	pack_columns(w, l, cg, CTP_SCOPE_CGROUP, CTP_CGROUP_IDENT);

	/* read_boottime_ns is written only when a row has it, so a capture
	 * without it is the file it always was. */
	bool read_ns = any_cell(pr, CTP_PCOL_READ_NS);
	pack_key(w, "processes");
	msgpack_pack_map(pk, 5 + read_ns);
	pack_key(w, "rows");
	msgpack_pack_uint64(pk, pr->n);
	pack_refs(w, pr, "tgid", false);
	pack_ident(w, pr, "comm", CTP_PCOL_COMM, true);
	/* nthreads: the thread rows of this tgid in this file, which is what
	 * the engine counts; a reader can rely on it summing to rows. */
	pack_refs(w, pr, "nthreads", true);
	if (read_ns)
		pack_ident(w, pr, "read_boottime_ns", CTP_PCOL_READ_NS, false);
	pack_columns(w, l, pr, CTP_SCOPE_PROCESS, CTP_PROCESS_IDENT);

	pack_key(w, "threads");
	msgpack_pack_map(pk, 6);
	pack_key(w, "rows");
	msgpack_pack_uint64(pk, th->n);
	pack_refs(w, th, "tid", false);
	pack_refs(w, th, "tgid", true);
	pack_ident(w, th, "comm", CTP_TCOL_COMM, true);
	pack_key(w, "cgroup");
	/* A row index into the cgroups table: nil when there is none. */
	pack_column(w, th, CTP_TCOL_CGROUP, CTP_TYPE_U64, cap->cgroups.nrows);
	pack_columns(w, l, th, CTP_SCOPE_THREAD, CTP_THREAD_IDENT);
}

/* Whether plugin i takes part in the exited table: it registered a field
 * of it, added a row or reported a loss. */
static bool exited_plugin(const struct ctp_capture *cap, uint32_t i)
{
	uint32_t nf = ctp_registry_count(&cap->reg);

	if (atomic_load(&cap->plugins[i].exited))
		return true;
	for (uint32_t id = 0; id < nf; id++) {
		const struct ctp_field *f = ctp_registry_get(&cap->reg, id);
		if (f->scope == CTP_SCOPE_EXITED && f->plugin == i)
			return true;
	}
	return false;
}

/* The exited table is written only when some plugin takes part in it, so a
 * capture without one is the file it always was. */
static bool has_exited(const struct ctp_capture *cap)
{
	uint32_t nf = ctp_registry_count(&cap->reg);

	if (cap->exited.nrows)
		return true;
	for (uint32_t id = 0; id < nf; id++)
		if (ctp_registry_get(&cap->reg, id)->scope == CTP_SCOPE_EXITED)
			return true;
	for (uint32_t i = 0; i < cap->n_plugins; i++)
		if (atomic_load(&cap->plugins[i].exited))
			return true;
	return false;
}

/* FORMAT.md §7.4: fields, identity columns, losses by plugin, columns. */
static void pack_exited(struct w *w, const struct layout *l)
{
	const struct ctp_capture *cap = w->cap;
	msgpack_packer *pk = &w->pk;
	const struct rows *ex = &l->ex;
	uint32_t np = 0;

	pack_key(w, "exited");
	msgpack_pack_map(pk, 8);
	pack_field_list(w, "fields", true);
	pack_key(w, "rows");
	msgpack_pack_uint64(pk, ex->n);
	pack_ident(w, ex, "tid", CTP_XCOL_TID, false);
	pack_ident(w, ex, "tgid", CTP_XCOL_TGID, false);
	pack_ident(w, ex, "comm", CTP_XCOL_COMM, true);
	pack_ident(w, ex, "exit_boottime_ns", CTP_XCOL_EXIT_NS, false);
	for (uint32_t i = 0; i < cap->n_plugins; i++)
		np += exited_plugin(cap, i);
	pack_key(w, "lost");
	msgpack_pack_map(pk, np);
	for (uint32_t i = 0; i < cap->n_plugins; i++) {
		if (!exited_plugin(cap, i))
			continue;
		pack_str(w, cap->plugins[i].name);
		msgpack_pack_uint64(pk,
				    atomic_load(&cap->plugins[i].exited_lost));
	}
	pack_columns(w, l, ex, CTP_SCOPE_EXITED, CTP_EXITED_IDENT);
}

/* ---- Files ---- */

static int pack_all(const struct ctp_capture *cap, struct out *o,
		    const char *tool_version)
{
	struct layout l = {0};
	struct w w = {.cap = cap, .o = o};

	if (layout_rows(cap, &l, o) < 0)
		goto out;
	msgpack_packer_init(&w.pk, o, pack_cb);
	/* format version tool capture fields plugins read_failures host
	 * cgroups processes threads, and exited when there is one */
	bool exited = has_exited(cap);
	msgpack_pack_map(&w.pk, 11 + exited);
	pack_header(&w, tool_version);
	pack_fields(&w);
	pack_plugins(&w);
	pack_readfail(&w);
	pack_host(&w);
	pack_tables(&w, &l);
	if (exited)
		pack_exited(&w, &l);
	flush_in(o, ZSTD_e_end);
out:
	layout_done(&l);
	return o->err;
}

/*
 * The compression context of the last write, for the next: a recorder
 * writes a snapshot every capture, and a new context allocates and clears
 * its tables (about 1 MiB at level 3) and buffers each time. One writer at
 * a time takes it (another, meanwhile, makes its own); the parameters are
 * set again after a reset.
 */
static _Atomic(ZSTD_CCtx *) kept_cctx;

static ZSTD_CCtx *cctx_take(void)
{
	ZSTD_CCtx *c = atomic_exchange(&kept_cctx, NULL);

	if (!c)
		return ZSTD_createCCtx();
	if (ZSTD_isError(
		    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters))) {
		ZSTD_freeCCtx(c);
		return ZSTD_createCCtx();
	}
	return c;
}

static void cctx_keep(ZSTD_CCtx *c)
{
	if (c)
		ZSTD_freeCCtx(atomic_exchange(&kept_cctx, c));
}

int ctp_writer_write(const struct ctp_capture *cap, const char *path, int level,
		     const char *tool_version,
		     const volatile sig_atomic_t *cancel, uint64_t *bytes_out,
		     char *err, size_t errlen)
{
	struct out o = {
		.fd = -1, .cancel = cancel, .msg = err, .msglen = errlen};
	struct ctp_outfile t;

	if (err && errlen)
		err[0] = '\0';
	ZSTD_bounds b = ZSTD_cParam_getBounds(ZSTD_c_compressionLevel);
	if (ZSTD_isError(b.error) || level < b.lowerBound ||
	    level > b.upperBound) {
		fail(&o, -EINVAL, "%s: compression level %d out of range", path,
		     level);
		return o.err;
	}
	ctp_outfile_init(&t);
	if ((o.err = ctp_outfile_open(&t, path, err, errlen)) < 0)
		goto out;
	o.fd = t.fd;

	o.cctx = cctx_take();
	o.in_cap = ZSTD_CStreamInSize();
	o.buf_cap = ZSTD_CStreamOutSize();
	o.in = malloc(o.in_cap);
	o.buf = malloc(o.buf_cap);
	if (!o.cctx || !o.in || !o.buf) {
		fail(&o, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	size_t zr =
		ZSTD_CCtx_setParameter(o.cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(zr))
		zr = ZSTD_CCtx_setParameter(o.cctx, ZSTD_c_checksumFlag, 1);
	if (ZSTD_isError(zr)) {
		fail(&o, -EINVAL, "%s: zstd: %s", path, ZSTD_getErrorName(zr));
		goto out;
	}

	if (pack_all(cap, &o, tool_version) < 0) {
		/* Prefix the path to the message the packers left. */
		if (err && errlen) {
			char m[256];
			snprintf(m, sizeof(m), "%s", err);
			snprintf(err, errlen, "%s: %s", path, m);
		}
		goto out;
	}
	o.err = ctp_outfile_commit(&t, path, cancel, err, errlen);
out:
	ctp_outfile_close(&t);
	free(o.in);
	free(o.buf);
	cctx_keep(o.cctx);
	if (!o.err && bytes_out)
		*bytes_out = o.written;
	return o.err;
}
