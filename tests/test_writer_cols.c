// SPDX-License-Identifier: MIT
/*
 * The writer's column loops (core/snapshot/writer.c) over what the engine
 * leaves them: several workers' tables, processes dealt to them in any
 * order, some split over two workers, threads out of tid order; columns
 * of every type whose width differs from block to block and widens in
 * the middle of one; presence full, empty and mixed within 64-row words,
 * whole blocks without a column, a column set in one worker only; strings
 * that repeat, alternate and collide in the writer's cache, or are too
 * long for it; cgroup indexes past the cgroups table. Every cell read
 * back must be what was set, and the file's MessagePack must be what
 * msgpack-c packs for the same values (the smallest forms).
 *
 * With CTP_TEST_KEEP=DIR the files are kept there, so two builds of the
 * writer can be compared byte for byte on the same captures.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>
#include <zstd.h>

#include "model.h"
#include "reader.h"
#include "writer.h"

#define WORKERS 3
#define PROCS	36

enum { F_U, F_I, F_B, F_C, F_S, F_CPUS, F_ONE, F_NEVER, F_PU, N_F };

static const struct ctp_field_desc descs[N_F] = {
	[F_U] = {"t.u", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64, CTP_UNIT_COUNT,
		 CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_I] = {"t.i", NULL, CTP_SCOPE_THREAD, CTP_TYPE_I64, CTP_UNIT_NONE,
		 CTP_KIND_ORDINAL, CTP_RULE_RANGE},
	[F_B] = {"t.b", NULL, CTP_SCOPE_THREAD, CTP_TYPE_BOOL, CTP_UNIT_NONE,
		 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[F_C] = {"t.c", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CHAR, CTP_UNIT_NONE,
		 CTP_KIND_ORDINAL, CTP_RULE_MODE},
	[F_S] = {"t.s", NULL, CTP_SCOPE_THREAD, CTP_TYPE_STRING, CTP_UNIT_NONE,
		 CTP_KIND_CATEGORICAL, CTP_RULE_MODE},
	[F_CPUS] = {"t.cpus", NULL, CTP_SCOPE_THREAD, CTP_TYPE_CPUSET,
		    CTP_UNIT_NONE, CTP_KIND_CPUSET, CTP_RULE_UNION},
	/* Set in worker 1's table only, in a few rows. */
	[F_ONE] = {"t.one", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		   CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_NEVER] = {"t.never", NULL, CTP_SCOPE_THREAD, CTP_TYPE_U64,
		     CTP_UNIT_COUNT, CTP_KIND_COUNTER, CTP_RULE_SUM},
	[F_PU] = {"p.u", NULL, CTP_SCOPE_PROCESS, CTP_TYPE_U64, CTP_UNIT_COUNT,
		  CTP_KIND_COUNTER, CTP_RULE_SUM},
};

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Strings: short, over the writer's short-cache size, over its cache. */
#define N_STR 150
static char *strs[N_STR];

/* Affinity masks as bitmaps of 64-bit words; the last too fragmented to
 * keep (the even CPUs of 256). */
#define N_MASK 4
static unsigned char masks[N_MASK][32];
static size_t mask_len[N_MASK] = {8, 8, 16, 32};

static void make_pools(void)
{
	for (int i = 0; i < N_STR; i++) {
		size_t n = i % 5 == 4 ? 40 + (size_t)i : i % 7 == 6 ? 700 : 3;
		strs[i] = malloc(n + 1);
		assert_non_null(strs[i]);
		/* Its number, then letters. */
		for (size_t k = (size_t)snprintf(strs[i], n + 1, "%d", i);
		     k < n; k++)
			strs[i][k] = (char)('a' + (i + k) % 26);
		strs[i][n] = '\0';
	}
	memset(masks, 0, sizeof(masks));
	masks[0][0] = 0x03;		       /* 0-1 */
	masks[1][0] = 0xf0, masks[1][1] = 0x1; /* 4-8 */
	masks[2][9] = 0xff;		       /* 72-79 */
	for (int c = 0; c < 256; c += 2)
		masks[3][c / 8] |= (unsigned char)(1u << (c % 8));
}

struct exp {
	uint32_t tgid, tid;
	int comm;   /* string index, -1 none */
	int64_t cg; /* the cgroup index set, -1 none */
	bool has[N_F];
	uint64_t v[N_F]; /* numbers; string or mask index */
};

static int cmp_exp(const void *a, const void *b)
{
	const struct exp *x = a, *y = b;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* How a process fills a field: every row, none, half, most, or every
 * other one. */
static bool present(int mode, uint32_t k)
{
	switch (mode) {
	case 0:
		return true;
	case 1:
		return false;
	case 2:
		return rnd() % 2;
	case 3:
		return rnd() % 20 != 0;
	default:
		return k % 2;
	}
}

/* A value of magnitude class cls: a byte, two, four, any; negative for I64
 * with neg. */
static uint64_t value(int cls, bool neg)
{
	uint64_t v = rnd();
	switch (cls) {
	case 0:
		v %= 256;
		break;
	case 1:
		v %= 65536;
		break;
	case 2:
		v &= UINT32_MAX;
		break;
	default:
		v >>= v % 64;
	}
	return neg && rnd() % 2 ? (uint64_t) - (int64_t)(v >> 1) - 1 : v;
}

static uint64_t blob(struct ctp_capture *cap, const void *p, size_t n)
{
	int64_t id = ctp_blobpool_intern(cap->blobs, p, n);
	assert_true(id >= 0);
	return (uint64_t)id;
}

static void set(struct ctp_table *t, uint32_t row, uint32_t col, uint64_t v)
{
	assert_int_equal(ctp_table_set(t, row, col, v), 0);
}

/* One thread row in worker w's table, its values drawn and kept in *e. */
static void add_thread(struct ctp_capture *cap, const int *fid, uint32_t w,
		       uint32_t tgid, uint32_t tid, const int *mode,
		       const int *cls, bool neg, struct exp *e, int *last_str)
{
	struct ctp_table *t = &cap->threads[w];
	int64_t r = ctp_table_add_row(t);
	assert_true(r >= 0);
	uint32_t row = (uint32_t)r;

	*e = (struct exp){.tgid = tgid, .tid = tid, .comm = -1, .cg = -1};
	set(t, row, CTP_TCOL_TID, tid);
	set(t, row, CTP_TCOL_TGID, tgid);
	if (rnd() % 8) {
		e->comm = (int)(rnd() % 3 ? tgid % N_STR : rnd() % N_STR);
		set(t, row, CTP_TCOL_COMM,
		    blob(cap, strs[e->comm], strlen(strs[e->comm])));
	}
	if (rnd() % 6) {
		/* Some past the 4 cgroup rows: written nil. */
		e->cg = (int64_t)(rnd() % 6);
		set(t, row, CTP_TCOL_CGROUP, (uint64_t)e->cg);
	}
	for (int f = 0; f < N_F; f++) {
		const struct ctp_field *fd =
			ctp_registry_get(&cap->reg, (uint32_t)fid[f]);
		uint64_t v = 0, id;
		if (fd->scope != CTP_SCOPE_THREAD || f == F_NEVER)
			continue;
		if (f == F_ONE ? w != 1 || rnd() % 50 : !present(mode[f], row))
			continue;
		switch (f) {
		case F_B:
			v = rnd() % 2;
			id = v;
			break;
		case F_C:
			v = 32 + rnd() % 95;
			id = v;
			break;
		case F_S:
			/* Runs of one string, two that alternate, or any. */
			v = rnd() % 4 == 0 ? rnd() % N_STR
			    : rnd() % 3 == 0
				    ? (uint64_t)*last_str
				    : (uint64_t)(*last_str + 64) % N_STR;
			*last_str = (int)v;
			id = blob(cap, strs[v], strlen(strs[v]));
			break;
		case F_CPUS:
			v = rnd() % 8 ? rnd() % 2 : rnd() % N_MASK;
			id = blob(cap, masks[v], mask_len[v]);
			break;
		default:
			v = value(cls[f], f == F_I && neg);
			id = v;
		}
		e->has[f] = true;
		e->v[f] = v;
		set(t, row, CTP_THREAD_IDENT + fd->col, id);
	}
}

/* The capture: PROCS processes dealt to random workers, each with its
 * threads together (some out of tid order, some split over two workers'
 * tables), a process field, cgroups and exited rows. Its threads'
 * expected values in *ex (n_ex of them), its processes' in pv/ph. */
static struct ctp_capture *build(int *fid, struct exp **ex, size_t *n_ex,
				 uint64_t *pv, bool *ph, uint32_t *ptgid,
				 uint32_t *pthreads)
{
	static const uint32_t sizes[] = {1, 2, 5, 63, 64, 65, 700, 1500, 2100};
	struct ctp_capture *cap;
	size_t cap_ex = 0;
	int last_str = 0;

	assert_int_equal(ctp_capture_new(WORKERS, &cap), 0);
	cap->plugins = calloc(1, sizeof(*cap->plugins));
	assert_non_null(cap->plugins);
	cap->plugins[0].name = strdup("t");
	cap->plugins[0].status = CTP_PST_LOADED;
	cap->n_plugins = 1;
	cap->start_realtime_ns = 1700000000000000000ull;
	cap->end_realtime_ns = 1700000001000000000ull;
	assert_int_equal(ctp_table_add_row(&cap->host), 0);
	for (int f = 0; f < N_F; f++) {
		fid[f] = ctp_registry_add(&cap->reg, 0, &descs[f]);
		assert_true(fid[f] >= 0);
	}
	for (int c = 0; c < 4; c++) {
		int64_t r = ctp_table_add_row(&cap->cgroups);
		assert_true(r >= 0);
		set(&cap->cgroups, (uint32_t)r, CTP_CCOL_PATH,
		    blob(cap, strs[c], strlen(strs[c])));
	}
	for (int x = 0; x < 3; x++) {
		int64_t r = ctp_table_add_row(&cap->exited);
		assert_true(r >= 0);
		set(&cap->exited, (uint32_t)r, CTP_XCOL_TID, 9000000u + x);
		if (x)
			set(&cap->exited, (uint32_t)r, CTP_XCOL_EXIT_NS,
			    value(3, false));
	}
	cap->spans = calloc(PROCS, sizeof(*cap->spans));
	cap->xspans = calloc(PROCS, sizeof(*cap->xspans));
	assert_non_null(cap->spans);
	assert_non_null(cap->xspans);
	*ex = NULL;
	*n_ex = 0;
	for (uint32_t p = 0; p < PROCS; p++) {
		/* Not in tgid order: the writer sorts. */
		uint32_t tgid = 1000 + (p * 7919u) % 100000u;
		uint32_t n = sizes[rnd() % 9], w = (uint32_t)(rnd() % WORKERS);
		uint32_t split = rnd() % 5 == 0 ? n / 2 : n;
		int mode[N_F], cls[N_F];
		/* Negative I64 values in some processes only, so that some
		 * blocks keep the column narrow. */
		bool neg = rnd() % 3 == 0;
		for (int f = 0; f < N_F; f++) {
			mode[f] = (int)(rnd() % 5);
			cls[f] = (int)(rnd() % 4);
		}
		if (*n_ex + n > cap_ex) {
			cap_ex = (*n_ex + n) * 2;
			*ex = realloc(*ex, cap_ex * sizeof(**ex));
			assert_non_null(*ex);
		}
		struct ctp_table *pt = &cap->procs[w];
		int64_t pr = ctp_table_add_row(pt);
		assert_true(pr >= 0);
		set(pt, (uint32_t)pr, CTP_PCOL_TGID, tgid);
		set(pt, (uint32_t)pr, CTP_PCOL_NTHREADS, n);
		ptgid[p] = tgid;
		pthreads[p] = n;
		ph[p] = rnd() % 3 != 0;
		pv[p] = value((int)(rnd() % 4), false);
		if (ph[p])
			set(pt, (uint32_t)pr,
			    CTP_PROCESS_IDENT +
				    ctp_registry_get(&cap->reg,
						     (uint32_t)fid[F_PU])
					    ->col,
			    pv[p]);
		cap->spans[cap->n_spans++] = (struct ctp_span){
			.tgid = tgid,
			.worker = (uint16_t)w,
			.proc_row = (uint32_t)pr,
			.thread_row = cap->threads[w].nrows,
			.nthreads = split,
		};
		/* Threads in tid order, or now and then reversed. */
		bool reversed = rnd() % 4 == 0;
		uint32_t w2 = (w + 1) % WORKERS;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t tid = tgid * 4096u + (reversed ? n - k : k);
			if (k == split)
				cap->xspans[cap->n_xspans++] =
					(struct ctp_span){
						.tgid = tgid,
						.worker = (uint16_t)w2,
						.thread_row =
							cap->threads[w2].nrows,
						.nthreads = n - split,
					};
			add_thread(cap, fid, k < split ? w : w2, tgid, tid,
				   mode, cls, neg, &(*ex)[(*n_ex)++],
				   &last_str);
		}
	}
	return cap;
}

/* The decompressed file. */
static void *raw_of(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	void *z = malloc((size_t)n);
	assert_non_null(z);
	assert_int_equal(fread(z, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unsigned long long rn = ZSTD_getFrameContentSize(z, (size_t)n);
	size_t cap =
		rn == ZSTD_CONTENTSIZE_UNKNOWN || rn == ZSTD_CONTENTSIZE_ERROR
			? 64u << 20
			: (size_t)rn;
	void *raw = malloc(cap);
	assert_non_null(raw);
	size_t r = ZSTD_decompress(raw, cap, z, (size_t)n);
	assert_false(ZSTD_isError(r));
	free(z);
	*len = r;
	return raw;
}

/* The file's MessagePack is msgpack-c's packing of what it decodes to. */
static void check_canonical(const char *path)
{
	size_t len;
	char *raw = raw_of(path, &len);
	msgpack_unpacked u;
	size_t off = 0;
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_unpacked_init(&u);
	assert_int_equal(msgpack_unpack_next(&u, raw, len, &off),
			 MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, len);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	assert_int_equal(msgpack_pack_object(&pk, u.data), 0);
	assert_int_equal(sb.size, len);
	if (memcmp(sb.data, raw, len) != 0) {
		size_t i = 0;
		while (sb.data[i] == raw[i])
			i++;
		fail_msg("%s: byte %zu differs from msgpack-c's packing", path,
			 i);
	}
	msgpack_sbuffer_destroy(&sb);
	msgpack_unpacked_destroy(&u);
	free(raw);
}

static void check_cell(const struct ctp_snap *snap,
		       const struct ctp_snap_field *sf, int f, size_t row,
		       const struct exp *e)
{
	struct ctp_value v = ctp_snap_get(snap, sf, row);
	if (!e->has[f]) {
		if (v.type != CTP_VALUE_ABSENT)
			fail_msg("tid %u field %d: a value, none set", e->tid,
				 f);
		return;
	}
	if (v.type != descs[f].type)
		fail_msg("tid %u field %d: type %u", e->tid, f, v.type);
	switch (f) {
	case F_B:
		assert_int_equal(v.b, e->v[f] != 0);
		break;
	case F_C:
		assert_int_equal(v.c, e->v[f]);
		break;
	case F_S:
		assert_int_equal(v.str.len, strlen(strs[e->v[f]]));
		assert_memory_equal(v.str.ptr, strs[e->v[f]], v.str.len);
		break;
	case F_CPUS: {
		unsigned char got[32] = {0};
		for (size_t r = 0; r < v.cpuset.n; r++)
			for (uint32_t c = v.cpuset.r[2 * r];
			     c <= v.cpuset.r[2 * r + 1]; c++) {
				assert_true(c < 256);
				got[c / 8] |= (unsigned char)(1u << (c % 8));
			}
		assert_memory_equal(got, masks[e->v[f]], sizeof(got));
		break;
	}
	default:
		if (v.u64 != e->v[f])
			fail_msg("tid %u field %d: %llu, set %llu", e->tid, f,
				 (unsigned long long)v.u64,
				 (unsigned long long)e->v[f]);
	}
}

static void one_capture(uint64_t seed)
{
	char dir[] = "/tmp/ctp-wcols-XXXXXX", path[PATH_MAX], err[512];
	const char *keep = getenv("CTP_TEST_KEEP");
	struct exp *ex;
	size_t n_ex;
	int fid[N_F];
	uint64_t pv[PROCS];
	bool ph[PROCS];
	uint32_t ptgid[PROCS], pthreads[PROCS];
	struct ctp_snap *snap;

	rng = seed;
	assert_non_null(mkdtemp(dir));
	struct ctp_capture *cap =
		build(fid, &ex, &n_ex, pv, ph, ptgid, pthreads);
	if (keep && *keep)
		snprintf(path, sizeof(path), "%s/cols-%llu.ctprof.zst", keep,
			 (unsigned long long)seed);
	else
		snprintf(path, sizeof(path), "%s/cols.ctprof.zst", dir);
	if (ctp_writer_write(cap, path, 3, "test", NULL, NULL, err,
			     sizeof(err)) < 0)
		fail_msg("write: %s", err);
	ctp_capture_free(cap);
	check_canonical(path);
	if (ctp_snap_open(path, 1ull << 31, &snap, err, sizeof(err)) < 0)
		fail_msg("open: %s", err);

	/* Threads, by (tgid, tid). */
	qsort(ex, n_ex, sizeof(*ex), cmp_exp);
	const struct ctp_snap_table *tt =
		ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_int_equal(tt->rows, n_ex);
	const struct ctp_snap_field *sf[N_F];
	for (int f = 0; f < N_F; f++)
		sf[f] = ctp_snap_field_find(snap, descs[f].name);
	/* A field no row has is listed, its column left out. */
	assert_non_null(sf[F_NEVER]);
	assert_null(tt->col[sf[F_NEVER]->index]);
	for (size_t i = 0; i < n_ex; i++) {
		const struct exp *e = &ex[i];
		assert_int_equal(tt->tgid[i], e->tgid);
		assert_int_equal(tt->tid[i], e->tid);
		if (e->comm < 0) {
			assert_null(tt->comm[i].ptr);
		} else {
			assert_int_equal(tt->comm[i].len,
					 strlen(strs[e->comm]));
			assert_memory_equal(tt->comm[i].ptr, strs[e->comm],
					    tt->comm[i].len);
		}
		assert_int_equal(tt->cgroup[i], e->cg < 4 ? e->cg : -1);
		for (int f = 0; f < N_F; f++)
			if (f != F_NEVER && f != F_PU)
				check_cell(snap, sf[f], f, i, e);
	}

	/* Processes, by tgid. */
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	assert_int_equal(pt->rows, PROCS);
	for (size_t i = 0; i < pt->rows; i++) {
		size_t p = 0;
		while (ptgid[p] != pt->tgid[i])
			p++;
		assert_int_equal(pt->nthreads[i], pthreads[p]);
		struct ctp_value v = ctp_snap_get(snap, sf[F_PU], i);
		assert_int_equal(v.type,
				 ph[p] ? CTP_TYPE_U64 : CTP_VALUE_ABSENT);
		if (ph[p])
			assert_true(v.u64 == pv[p]);
	}
	assert_int_equal(ctp_snap_table(snap, CTP_SCOPE_EXITED)->rows, 3);
	ctp_snap_free(snap);
	free(ex);
	if (!keep || !*keep)
		unlink(path);
	rmdir(dir);
}

static void columns(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++)
		one_capture(seed * 0x9e3779b97f4a7c15ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(columns),
	};
	make_pools();
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < N_STR; i++)
		free(strs[i]);
	return r;
}
