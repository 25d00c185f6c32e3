/* SPDX-License-Identifier: MIT */
/*
 * io: per-thread I/O accounting from /proc/<tgid>/task/<tid>/io: bytes and
 * system calls at the read/write syscall layer, and bytes that reached (or
 * were cancelled before reaching) the storage layer. Per process, the same
 * seven from /proc/<tgid>/io, where the kernel adds the I/O of threads that
 * exited and of children that were waited for to the live threads'
 * (fs/proc/base.c do_io_accounting, whole = 1), which no thread row has.
 *
 * The file exists only on kernels built with CONFIG_TASK_IO_ACCOUNTING; the
 * plugin says so with ctp_api.file_gate, so the core can tell a kernel
 * without it from other read failures. A missing or unreadable file leaves
 * the row's values absent (the core tallies the failure). No options.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "io_parse.h"

#ifndef IO_VERSION
#define IO_VERSION "0"
#endif

#define IO_KCONFIG "CONFIG_TASK_IO_ACCOUNTING"

/*
 * One field a line of io_parse.h's CTP_IO_LINES and scope: the thread
 * fields, then the process fields in the same order (process field i is
 * entry CTP_IO_N + i); ctp_io_src says where each comes from.
 */
#define IO_THREAD(id, key, unit, help, whole)                                  \
	CTP_FIELD_COUNTER("io." key, THREAD, unit, help),
#define IO_PROCESS(id, key, unit, help, whole)                                 \
	CTP_FIELD_COUNTER("io.process." key, PROCESS, unit,                    \
			  whole                                                \
			  " by the whole process: live threads, threads "      \
			  "that exited and children that were waited "         \
			  "for (<tgid>/io " key ")"),
static const struct ctp_field_desc fields[] = {
	CTP_IO_LINES(IO_THREAD) CTP_IO_LINES(IO_PROCESS)};

_Static_assert(CTP_ARRAY_LEN(fields) == CTP_ARRAY_LEN(ctp_io_src),
	       "field table and sources disagree");

enum { TF_IO, N_TF };
static const char *const thread_files[] = {"io", NULL};
enum { PF_IO, N_PF };
static const char *const process_files[] = {"io", NULL};

enum { C_PARSE_ERRORS, N_COUNTERS };
static const char *const counter_names[] = {
	[C_PARSE_ERRORS] = "parse_errors",
};

struct io_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[CTP_ARRAY_LEN(fields)]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	/* The fields of each scope, as set from a parse. */
	struct ctp_fields_plan thread_plan, process_plan;
};

/*
 * Declared file `file` of the task into the fields of `scope`: the thread
 * and the process file have the same seven lines.
 */
static int record_io(struct io_state *st, const struct ctp_task *task,
		     uint32_t file, uint8_t scope, struct ctp_record *rec)
{
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	const char *data;
	size_t len;
	struct ctp_io io;
	int ret;

	/* Missing (no CONFIG_TASK_IO_ACCOUNTING, or the task exited) or
	 * unreadable: the core tallies it and decides about vanishing; the
	 * values stay absent. */
	ret = ctp_task_file(task, file, &data, &len);
	if (ret == -EPROTO) /* the core handed fewer files than declared */
		return ret;
	if (ret < 0)
		return 0;
	if (ctp_parse_io(data, len, &io) < 0)
		st->api->summary_add(st->ctx, st->counter[C_PARSE_ERRORS], 1);
	return ctp_fields_apply(&set,
				scope == CTP_SCOPE_THREAD ? &st->thread_plan
							  : &st->process_plan,
				&io, io.present);
}

static int io_thread(void *state, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	return record_io(state, task, TF_IO, CTP_SCOPE_THREAD, rec);
}

/* <tgid>/io: the thread group's sum plus what exited threads and reaped
 * children left in signal_struct.ioac. */
static int io_process(void *state, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	return record_io(state, task, PF_IO, CTP_SCOPE_PROCESS, rec);
}

static void io_fini(void *state)
{
	free(state);
}

static int io_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **state)
{
	struct io_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	r = CTP_ATTACH_TABLE(ctx, api, CTP_API_THROUGH(roots), ctp_io_src,
			     st->fh, st->counter);
	if (r == 0)
		r = ctp_fields_plan(&st->thread_plan, fields, ctp_io_src,
				    st->fh, CTP_ARRAY_LEN(fields),
				    CTP_SCOPE_THREAD);
	if (r == 0)
		r = ctp_fields_plan(&st->process_plan, fields, ctp_io_src,
				    st->fh, CTP_ARRAY_LEN(fields),
				    CTP_SCOPE_PROCESS);
	if (r < 0) {
		free(st);
		return r;
	}
	/* An older core without gates simply gives no kernel-config hint. */
	if (CTP_API_HAS(api, file_gate)) {
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
	.description = "Per-thread and per-process I/O bytes and syscalls "
		       "from /proc/<tgid>/task/<tid>/io and /proc/<tgid>/io",
	/* CTP_PLUGIN_OPTIONS with no table: io takes no option, and the
	 * core refuses any. */
	.flags = CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
		 CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
		 CTP_PLUGIN_NO_THREAD_DIR,
	CTP_PLUGIN_FIELDS(fields),
	.thread_files = thread_files,
	.process_files = process_files,
	.init = io_init,
	.fini = io_fini,
	.thread = io_thread,
	.process = io_process,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	.capabilities =
		CTP_CAP_BIT(CAP_SYS_PTRACE) | CTP_CAP_BIT(CAP_DAC_READ_SEARCH),
};
