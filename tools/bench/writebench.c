/* SPDX-License-Identifier: MIT */
/*
 * The snapshot writer alone (core/snapshot/writer.c): a capture rebuilt
 * from a real snapshot, its processes copied N times and dealt to W
 * workers' tables as the engine's workers would take them, then written
 * K times. Prints the CPU time of one write (the median and the least)
 * and per thread row. With -o the last write is kept, so two builds of
 * the writer can be compared byte for byte on the same capture.
 *
 *   ctp-bench-write SNAPSHOT [-w WORKERS] [-c COPIES] [-n WRITES] [-o FILE]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "reader.h"
#include "writer.h"

static void die(const char *what)
{
	fprintf(stderr, "ctp-bench-write: %s\n", what);
	exit(1);
}

static uint64_t blob(struct ctp_capture *cap, const void *p, size_t n)
{
	int64_t id = ctp_blobpool_intern(cap->blobs, p, n);
	if (id < 0)
		die("out of memory");
	return (uint64_t)id;
}

/* A cell of the snapshot as the capture stores it. */
static bool cell_of(struct ctp_capture *cap, const struct ctp_value *v,
		    uint64_t *out)
{
	unsigned char bits[1024] = {0};
	size_t len = 0;

	switch (v->type) {
	case CTP_VALUE_ABSENT:
		return false;
	case CTP_TYPE_U64:
	case CTP_TYPE_I64:
		*out = v->u64;
		return true;
	case CTP_TYPE_BOOL:
		*out = v->b;
		return true;
	case CTP_TYPE_CHAR:
		*out = v->c;
		return true;
	case CTP_TYPE_STRING:
		*out = blob(cap, v->str.ptr, v->str.len);
		return true;
	case CTP_TYPE_CPUSET:
		for (size_t i = 0; i < v->cpuset.n; i++)
			for (uint32_t c = v->cpuset.r[2 * i];
			     c <= v->cpuset.r[2 * i + 1] && c < 8192; c++) {
				bits[c / 8] |= (unsigned char)(1u << (c % 8));
				len = (c / 64 + 1) * 8 > len ? (c / 64 + 1) * 8
							     : len;
			}
		*out = blob(cap, bits, len);
		return true;
	}
	return false;
}

static void set(struct ctp_table *t, uint32_t row, uint32_t col, uint64_t v)
{
	if (ctp_table_set(t, row, col, v) < 0)
		die("table set failed");
}

static uint32_t add_row(struct ctp_table *t)
{
	int64_t r = ctp_table_add_row(t);
	if (r < 0)
		die("out of memory");
	return (uint32_t)r;
}

/* The columns of scope `scope` of row `row` of snap into row `dst` of t. */
static void copy_fields(struct ctp_capture *cap, const struct ctp_snap *snap,
			const int *fid, uint8_t scope, size_t row,
			struct ctp_table *t, uint32_t dst, uint32_t ident)
{
	const struct ctp_snap_field *sf = ctp_snap_fields(snap);
	for (size_t i = 0; i < ctp_snap_n_fields(snap); i++) {
		uint64_t v;
		if (fid[i] < 0 || sf[i].scope != scope)
			continue;
		struct ctp_value x = ctp_snap_get(snap, &sf[i], row);
		if (cell_of(cap, &x, &v))
			set(t, dst,
			    ident + ctp_registry_get(&cap->reg,
						     (uint32_t)fid[i])
					    ->col,
			    v);
	}
}

static struct ctp_capture *rebuild(const struct ctp_snap *snap,
				   uint32_t workers, uint32_t copies)
{
	const struct ctp_snap_field *sf = ctp_snap_fields(snap);
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	const struct ctp_snap_table *tt =
		ctp_snap_table(snap, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *ct =
		ctp_snap_table(snap, CTP_SCOPE_CGROUP);
	size_t nf = ctp_snap_n_fields(snap);
	struct ctp_capture *cap = NULL;
	int *fid = calloc(nf ? nf : 1, sizeof(*fid));

	if (!fid || ctp_capture_new(workers, &cap) < 0)
		die("out of memory");
	cap->plugins = calloc(1, sizeof(*cap->plugins));
	if (!cap->plugins || !(cap->plugins[0].name = strdup("bench")))
		die("out of memory");
	cap->plugins[0].status = CTP_PST_LOADED;
	cap->n_plugins = 1;
	cap->start_realtime_ns = 1700000000000000000ull;
	cap->end_realtime_ns = 1700000001000000000ull;
	for (size_t i = 0; i < nf; i++) {
		struct ctp_field_desc d = {
			.name = sf[i].name,
			.help = sf[i].help,
			.scope = sf[i].scope,
			.type = sf[i].type,
			.unit = sf[i].unit,
			.kind = sf[i].kind,
			.rule = sf[i].rule,
		};
		/* Derived fields have no cells: left out. */
		fid[i] = sf[i].n_terms || sf[i].scope == CTP_SCOPE_EXITED
				 ? -1
				 : ctp_registry_add(&cap->reg, 0, &d);
	}
	add_row(&cap->host);
	copy_fields(cap, snap, fid, CTP_SCOPE_HOST, 0, &cap->host, 0,
		    CTP_HOST_IDENT);
	for (size_t r = 0; ct && r < ct->rows; r++) {
		uint32_t row = add_row(&cap->cgroups);
		set(&cap->cgroups, row, CTP_CCOL_PATH,
		    blob(cap, ct->path[r].ptr, ct->path[r].len));
		copy_fields(cap, snap, fid, CTP_SCOPE_CGROUP, r, &cap->cgroups,
			    row, CTP_CGROUP_IDENT);
	}
	size_t np = pt ? pt->rows : 0, nspans = 0;
	cap->spans = calloc(np * copies + 1, sizeof(*cap->spans));
	if (!cap->spans)
		die("out of memory");
	/* Process p's threads are rows first[p] on of the threads table. */
	for (uint32_t c = 0; c < copies; c++) {
		size_t th = 0;
		for (size_t p = 0; p < np; p++) {
			uint32_t off = c * 4194304u, w = nspans % workers;
			struct ctp_table *P = &cap->procs[w],
					 *T = &cap->threads[w];
			uint32_t prow = add_row(P), first = T->nrows;
			uint32_t tgid = (uint32_t)pt->tgid[p] + off;
			set(P, prow, CTP_PCOL_TGID, tgid);
			set(P, prow, CTP_PCOL_NTHREADS, pt->nthreads[p]);
			if (pt->comm[p].ptr)
				set(P, prow, CTP_PCOL_COMM,
				    blob(cap, pt->comm[p].ptr,
					 pt->comm[p].len));
			if (pt->read_ns)
				set(P, prow, CTP_PCOL_READ_NS, pt->read_ns[p]);
			copy_fields(cap, snap, fid, CTP_SCOPE_PROCESS, p, P,
				    prow, CTP_PROCESS_IDENT);
			for (uint64_t k = 0; k < pt->nthreads[p]; k++, th++) {
				uint32_t row = add_row(T);
				set(T, row, CTP_TCOL_TID,
				    (uint32_t)tt->tid[th] + off);
				set(T, row, CTP_TCOL_TGID, tgid);
				if (tt->comm[th].ptr)
					set(T, row, CTP_TCOL_COMM,
					    blob(cap, tt->comm[th].ptr,
						 tt->comm[th].len));
				if (tt->cgroup[th] >= 0)
					set(T, row, CTP_TCOL_CGROUP,
					    (uint64_t)tt->cgroup[th]);
				copy_fields(cap, snap, fid, CTP_SCOPE_THREAD,
					    th, T, row, CTP_THREAD_IDENT);
			}
			cap->spans[nspans++] = (struct ctp_span){
				.tgid = tgid,
				.worker = (uint16_t)w,
				.proc_row = prow,
				.thread_row = first,
				.nthreads = (uint32_t)pt->nthreads[p],
			};
		}
	}
	cap->n_spans = nspans;
	free(fid);
	return cap;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	uint32_t workers = 4, copies = 1, writes = 20;
	const char *out = "/dev/null";
	struct ctp_snap *snap;
	char err[512];
	int opt;

	while ((opt = getopt(argc, argv, "w:c:n:o:")) != -1) {
		switch (opt) {
		case 'w':
			workers = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			copies = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			writes = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			fprintf(stderr, "usage: ctp-bench-write SNAPSHOT [-w "
					"WORKERS] [-c COPIES] [-n WRITES] [-o "
					"FILE]\n");
			return 2;
		}
	}
	if (optind + 1 != argc || !workers || !copies || !writes ||
	    workers > 1000) {
		fprintf(stderr, "usage: ctp-bench-write SNAPSHOT [-w WORKERS] "
				"[-c COPIES] [-n WRITES] [-o FILE]\n");
		return 2;
	}
	if (ctp_snap_open(argv[optind], 1ull << 32, &snap, err, sizeof(err)) <
	    0)
		die(err);
	struct ctp_capture *cap = rebuild(snap, workers, copies);
	ctp_snap_free(snap);

	size_t rows = 0;
	for (uint32_t w = 0; w < workers; w++)
		rows += cap->threads[w].nrows;
	double *t = calloc(writes, sizeof(*t));
	uint64_t bytes = 0;
	if (!t)
		die("out of memory");
	for (uint32_t i = 0; i < writes; i++) {
		double t0 = cpu_now();
		if (ctp_writer_write(cap, out, 3, "bench", NULL, &bytes, err,
				     sizeof(err)) < 0)
			die(err);
		t[i] = cpu_now() - t0;
	}
	qsort(t, writes, sizeof(*t), cmp_double);
	printf("threads %zu  workers %u  file %llu bytes  write CPU: median "
	       "%.3f ms  min %.3f ms  (%.1f ns per thread row)\n",
	       rows, workers, (unsigned long long)bytes, t[writes / 2] * 1e3,
	       t[0] * 1e3, t[writes / 2] * 1e9 / (double)(rows ? rows : 1));
	free(t);
	ctp_capture_free(cap);
	return 0;
}
