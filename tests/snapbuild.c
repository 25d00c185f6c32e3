/* SPDX-License-Identifier: MIT */
/* Hand-built captures for tests (snapbuild.h). */
#include "snapbuild.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "writer.h"

struct ctp_capture *sb_capture(const char *plugin)
{
	struct ctp_capture *cap;
	assert_int_equal(ctp_capture_new(1, &cap), 0);
	cap->plugins = calloc(1, sizeof(*cap->plugins));
	assert_non_null(cap->plugins);
	cap->plugins[0].name = strdup(plugin);
	assert_non_null(cap->plugins[0].name);
	cap->plugins[0].status = CTP_PST_LOADED;
	cap->n_plugins = 1;
	assert_int_equal(ctp_table_add_row(&cap->host), 0);
	cap->start_realtime_ns = 1700000000000000000ull;
	cap->end_realtime_ns = 1700000001000000000ull;
	return cap;
}

uint64_t sb_blob(struct ctp_capture *cap, const char *s, size_t n)
{
	int64_t id = ctp_blobpool_intern(cap->blobs, s, n);
	assert_true(id >= 0);
	return (uint64_t)id;
}

void sb_put_u64(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
		uint32_t ident, int fid, uint64_t v)
{
	const struct ctp_field *f = ctp_registry_get(&cap->reg, (uint32_t)fid);
	assert_non_null(f);
	assert_int_equal(ctp_table_set(t, row, ident + f->col, v), 0);
}

void sb_put(struct ctp_capture *cap, struct ctp_table *t, uint32_t row,
	    uint32_t ident, int fid, const struct sb_cell *c)
{
	const struct ctp_field *f = ctp_registry_get(&cap->reg, (uint32_t)fid);
	uint64_t v = c->v;
	if (!c->set)
		return;
	assert_non_null(f);
	if (f->type == CTP_TYPE_STRING) {
		v = sb_blob(cap, c->s, strlen(c->s));
	} else if (f->type == CTP_TYPE_CPUSET) {
		/* The kernel's bitmap layout: whole 64-bit words. */
		unsigned char b[16] = {0};
		size_t len = 0;
		for (size_t i = 0; c->cpus[i] >= 0; i++) {
			assert_true(c->cpus[i] < 128);
			b[c->cpus[i] / 8] |=
				(unsigned char)(1u << (c->cpus[i] % 8));
			size_t w = ((size_t)c->cpus[i] / 64 + 1) * 8;
			len = w > len ? w : len;
		}
		v = sb_blob(cap, (const char *)b, len);
	}
	sb_put_u64(cap, t, row, ident, fid, v);
}

uint32_t sb_cgroup(struct ctp_capture *cap, const char *path)
{
	int64_t r = ctp_table_add_row(&cap->cgroups);
	assert_true(r >= 0);
	assert_int_equal(ctp_table_set(&cap->cgroups, (uint32_t)r,
				       CTP_CCOL_PATH,
				       sb_blob(cap, path, strlen(path))),
			 0);
	return (uint32_t)r;
}

uint32_t sb_process(struct ctp_capture *cap, uint32_t tgid, const char *comm)
{
	struct ctp_table *pt = &cap->procs[0];
	int64_t r = ctp_table_add_row(pt);
	assert_true(r >= 0);
	struct ctp_span *sp =
		realloc(cap->spans, (cap->n_spans + 1) * sizeof(*sp));
	assert_non_null(sp);
	cap->spans = sp;
	sp[cap->n_spans++] = (struct ctp_span){
		.tgid = tgid,
		.proc_row = (uint32_t)r,
		.thread_row = cap->threads[0].nrows,
		.nthreads = 0,
	};
	ctp_table_set(pt, (uint32_t)r, CTP_PCOL_TGID, tgid);
	ctp_table_set(pt, (uint32_t)r, CTP_PCOL_NTHREADS, 0);
	if (comm)
		ctp_table_set(pt, (uint32_t)r, CTP_PCOL_COMM,
			      sb_blob(cap, comm, strlen(comm)));
	return (uint32_t)r;
}

uint32_t sb_thread(struct ctp_capture *cap, uint32_t tid, const char *comm,
		   int cg)
{
	struct ctp_table *tt = &cap->threads[0];
	assert_true(cap->n_spans > 0);
	struct ctp_span *sp = &cap->spans[cap->n_spans - 1];
	int64_t r = ctp_table_add_row(tt);
	assert_true(r >= 0);
	ctp_table_set(tt, (uint32_t)r, CTP_TCOL_TID, tid);
	ctp_table_set(tt, (uint32_t)r, CTP_TCOL_TGID, sp->tgid);
	if (comm)
		ctp_table_set(tt, (uint32_t)r, CTP_TCOL_COMM,
			      sb_blob(cap, comm, strlen(comm)));
	if (cg >= 0)
		ctp_table_set(tt, (uint32_t)r, CTP_TCOL_CGROUP, (uint64_t)cg);
	sp->nthreads++;
	ctp_table_set(&cap->procs[0], sp->proc_row, CTP_PCOL_NTHREADS,
		      sp->nthreads);
	return (uint32_t)r;
}

uint32_t sb_exited(struct ctp_capture *cap, uint32_t tid, uint32_t tgid,
		   const char *comm, uint64_t exit_ns)
{
	struct ctp_table *t = &cap->exited;
	int64_t r = ctp_table_add_row(t);
	assert_true(r >= 0);
	ctp_table_set(t, (uint32_t)r, CTP_XCOL_TID, tid);
	if (tgid)
		ctp_table_set(t, (uint32_t)r, CTP_XCOL_TGID, tgid);
	if (comm)
		ctp_table_set(t, (uint32_t)r, CTP_XCOL_COMM,
			      sb_blob(cap, comm, strlen(comm)));
	if (exit_ns)
		ctp_table_set(t, (uint32_t)r, CTP_XCOL_EXIT_NS, exit_ns);
	return (uint32_t)r;
}

int sb_write(struct ctp_capture *cap, const char *path, char *err,
	     size_t errlen)
{
	return ctp_writer_write(cap, path, 3, "test", NULL, NULL, err, errlen);
}
