/* SPDX-License-Identifier: MIT */
/*
 * io: per-thread I/O accounting from /proc/<tgid>/task/<tid>/io: bytes and
 * system calls at the read/write syscall layer, and bytes that reached (or
 * were cancelled before reaching) the storage layer.
 *
 * The file exists only on kernels built with CONFIG_TASK_IO_ACCOUNTING; the
 * plugin says so with ctp_api.file_gate, so the core can tell a kernel
 * without it from other read failures. A missing or unreadable file leaves
 * the thread's values absent (the core tallies the failure). No options.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin.h"
#include "io_parse.h"

#ifndef IO_VERSION
#define IO_VERSION "0"
#endif

#define IO_KCONFIG "CONFIG_TASK_IO_ACCOUNTING"

/* One entry per parser value, in enum ctp_io_key order. */
static const struct ctp_field_desc fields[] = {
	[CTP_IO_RCHAR] = {.name = "io.rchar",
			  .help = "Bytes read by read-like syscalls, page "
				  "cache hits included (io rchar)",
			  .scope = CTP_SCOPE_THREAD,
			  .type = CTP_TYPE_U64,
			  .unit = CTP_UNIT_BYTES,
			  .kind = CTP_KIND_COUNTER,
			  .rule = CTP_RULE_SUM},
	[CTP_IO_WCHAR] = {.name = "io.wchar",
			  .help = "Bytes written by write-like syscalls, "
				  "before the page cache (io wchar)",
			  .scope = CTP_SCOPE_THREAD,
			  .type = CTP_TYPE_U64,
			  .unit = CTP_UNIT_BYTES,
			  .kind = CTP_KIND_COUNTER,
			  .rule = CTP_RULE_SUM},
	[CTP_IO_SYSCR] = {.name = "io.syscr",
			  .help = "Read-like syscalls made (io syscr)",
			  .scope = CTP_SCOPE_THREAD,
			  .type = CTP_TYPE_U64,
			  .unit = CTP_UNIT_COUNT,
			  .kind = CTP_KIND_COUNTER,
			  .rule = CTP_RULE_SUM},
	[CTP_IO_SYSCW] = {.name = "io.syscw",
			  .help = "Write-like syscalls made (io syscw)",
			  .scope = CTP_SCOPE_THREAD,
			  .type = CTP_TYPE_U64,
			  .unit = CTP_UNIT_COUNT,
			  .kind = CTP_KIND_COUNTER,
			  .rule = CTP_RULE_SUM},
	[CTP_IO_READ_BYTES] = {.name = "io.read_bytes",
			       .help = "Bytes this thread caused to be read "
				       "from storage (io read_bytes)",
			       .scope = CTP_SCOPE_THREAD,
			       .type = CTP_TYPE_U64,
			       .unit = CTP_UNIT_BYTES,
			       .kind = CTP_KIND_COUNTER,
			       .rule = CTP_RULE_SUM},
	[CTP_IO_WRITE_BYTES] = {.name = "io.write_bytes",
				.help = "Bytes this thread caused to be "
					"written to storage (io write_bytes)",
				.scope = CTP_SCOPE_THREAD,
				.type = CTP_TYPE_U64,
				.unit = CTP_UNIT_BYTES,
				.kind = CTP_KIND_COUNTER,
				.rule = CTP_RULE_SUM},
	[CTP_IO_CANCELLED_WRITE_BYTES] =
		{.name = "io.cancelled_write_bytes",
		 .help = "Dirty page-cache bytes this thread dropped before "
			 "writeback, e.g. by truncating (io "
			 "cancelled_write_bytes)",
		 .scope = CTP_SCOPE_THREAD,
		 .type = CTP_TYPE_U64,
		 .unit = CTP_UNIT_BYTES,
		 .kind = CTP_KIND_COUNTER,
		 .rule = CTP_RULE_SUM},
};

_Static_assert(sizeof(fields) / sizeof(fields[0]) == CTP_IO_N,
	       "field table and parser disagree");

enum { TF_IO, N_TF };
static const char *const thread_files[] = {"io", NULL};

struct io_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[CTP_IO_N]; /* field handles; < 0 means skip */
	int c_parse_err;
};

static int io_thread(void *state, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	struct io_state *st = state;
	const struct ctp_file *f;
	struct ctp_io io;
	int ret = 0, r;
	unsigned i;

	if (!CTP_HAS(task, struct ctp_task, n_files) || task->n_files < N_TF)
		return -EINVAL;
	f = &task->files[TF_IO];
	/* Missing (no CONFIG_TASK_IO_ACCOUNTING, or the thread exited) or
	 * unreadable: the core tallies it and decides about vanishing; the
	 * values stay absent. */
	if (f->err || !f->data)
		return 0;
	if (ctp_parse_io(f->data, f->len, &io) < 0)
		st->api->summary_add(st->ctx, st->c_parse_err, 1);
	for (i = 0; i < CTP_IO_N; i++) {
		if (!(io.present & (1u << i)) || st->fh[i] < 0)
			continue;
		r = st->api->set_u64(rec, st->fh[i], io.v[i]);
		if (r < 0 && ret == 0)
			ret = r;
	}
	return ret;
}

static void io_fini(void *state)
{
	free(state);
}

static int io_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **state)
{
	struct io_state *st;
	size_t i;
	int r;

	if (!api || api->abi != CTP_ABI_MAJOR ||
	    !CTP_HAS(api, struct ctp_api, roots))
		return -ENOTSUP;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	for (i = 0; i < CTP_IO_N; i++) {
		st->fh[i] = api->field_handle(ctx, i);
		if (st->fh[i] < 0)
			api->log(ctx, CTP_LOG_DEBUG,
				 "field %s has no handle: %s", fields[i].name,
				 strerror(-st->fh[i]));
	}
	st->c_parse_err = api->summary_register(ctx, "parse_errors");
	if (st->c_parse_err < 0) {
		r = st->c_parse_err;
		api->log(ctx, CTP_LOG_ERR,
			 "cannot register summary counter parse_errors: %s",
			 strerror(-r));
		free(st);
		return r;
	}
	/* An older core without gates simply gives no kernel-config hint. */
	if (CTP_HAS(api, struct ctp_api, file_gate)) {
		r = api->file_gate(ctx, "io", IO_KCONFIG);
		if (r < 0)
			api->log(ctx, CTP_LOG_DEBUG, "file_gate io: %s",
				 strerror(-r));
	}
	*state = st;
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "io",
	.version = IO_VERSION,
	.description = "Per-thread I/O bytes and syscalls from "
		       "/proc/<tgid>/task/<tid>/io",
	/* CTP_PLUGIN_OPTIONS with no table: io takes no option, and the
	 * core refuses any. */
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_FIELDS(fields),
	.thread_files = thread_files,
	.init = io_init,
	.fini = io_fini,
	.thread = io_thread,
};
