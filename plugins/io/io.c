/* SPDX-License-Identifier: MIT */
/*
 * io: per-thread I/O accounting from /proc/<tgid>/task/<tid>/io: bytes and
 * system calls at the read/write syscall layer, and bytes that reached (or
 * were cancelled before reaching) the storage layer. Per process, the same
 * seven from /proc/<tgid>/io, where the kernel adds the I/O of threads that
 * exited and of children that were waited for to the live threads'
 * (fs/proc/base.c do_io_accounting, whole = 1), which no thread row has.
 *
 * A thread's seven come from the per-task source "task"
 * (include/ctprof/source-task.h, the same task->ioac counters, exact)
 * where it offers them; the thread's io file is read (lazily) only for the
 * values it lacks. A process row's seven come the same way from the
 * per-process source "process" (include/ctprof/source-process.h, the sums
 * <tgid>/io prints), and <tgid>/io, lazy, is read only for those it lacks.
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
#include "ctprof/source-process.h"
#include "ctprof/source-task.h"
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

/* Lazy: not read when the task source (the process source for <tgid>/io)
 * gives every value. */
enum { TF_IO, N_TF };
static const char *const thread_files[] = {"?io", NULL};
enum { PF_IO, N_PF };
static const char *const process_files[] = {"?io", NULL};

enum {
	C_PARSE_ERRORS,
	C_FROM_TASK,
	C_FROM_FILES,
	C_PROC_FROM_SOURCE,
	C_PROC_FROM_FILE,
	N_COUNTERS
};
static const char *const counter_names[] = {
	[C_PARSE_ERRORS] = "parse_errors",
	/* Threads whose values all came from the task source (io not read) /
	 * that read their io file for some or all of them. */
	[C_FROM_TASK] = "from_task",
	[C_FROM_FILES] = "from_files",
	/* The same for process rows and the source "process" (<tgid>/io). */
	[C_PROC_FROM_SOURCE] = "process_from_source",
	[C_PROC_FROM_FILE] = "process_from_file",
};

/* Value `id` of a source whose seven io values are in the file's order
 * from value number `first`. */
#define IO_TAKE_AT(first, id)                                                  \
	{.value = (first) + CTP_IO_##id,                                       \
	 .type = CTP_TYPE_U64,                                                 \
	 .bit = CTP_IO_##id,                                                   \
	 .off = offsetof(struct ctp_io, v) + CTP_IO_##id * sizeof(uint64_t)},
/* The task source's values (source-task.h keeps the file's order). */
#define IO_TAKE(id, key, unit, help, whole) IO_TAKE_AT(CTP_SRC_TASK_RCHAR, id)
static const struct ctp_src_take io_take[] = {CTP_IO_LINES(IO_TAKE)};
_Static_assert(CTP_SRC_TASK_CANCELLED_WRITE_BYTES - CTP_SRC_TASK_RCHAR ==
		       CTP_IO_CANCELLED_WRITE_BYTES,
	       "the task source's io values are in another order");
/* The process source's, in the same order. */
#define IO_PROC_TAKE(id, key, unit, help, whole)                               \
	IO_TAKE_AT(CTP_SRC_PROC_RCHAR, id)
static const struct ctp_src_take io_proc_take[] = {CTP_IO_LINES(IO_PROC_TAKE)};
_Static_assert(CTP_SRC_PROC_CANCELLED_WRITE_BYTES - CTP_SRC_PROC_RCHAR ==
		       CTP_IO_CANCELLED_WRITE_BYTES,
	       "the process source's io values are in another order");

struct io_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int fh[CTP_ARRAY_LEN(fields)]; /* field handles; < 0 means skip */
	int counter[N_COUNTERS];
	/* The fields of each scope, as set from a parse. */
	struct ctp_fields_plan thread_plan, process_plan;
	uint64_t thread_need;  /* the values a thread row records */
	uint64_t process_need; /* ... and a process row */
};

/*
 * Declared file `file` of the task into io, for the values `want` (those
 * already in io are kept): a missing (no CONFIG_TASK_IO_ACCOUNTING, or
 * the task exited) or unreadable file leaves them absent (the core
 * tallies it and decides about vanishing). Returns 0, or -EPROTO when the
 * core handed fewer files than declared.
 */
static int read_io(struct io_state *st, const struct ctp_task *task,
		   uint32_t file, uint64_t want, struct ctp_io *io)
{
	struct ctp_io f;
	const char *data;
	size_t len;
	int ret;

	ret = ctp_task_fetch(st->api, task, file, &data, &len);
	if (ret == -EPROTO)
		return ret;
	if (ret < 0)
		return 0;
	if (ctp_parse_io(data, len, &f) < 0)
		st->api->summary_add(st->ctx, st->counter[C_PARSE_ERRORS], 1);
	want &= f.present;
	io->present |= want;
	for (; want; want &= want - 1)
		io->v[__builtin_ctzll(want)] = f.v[__builtin_ctzll(want)];
	return 0;
}

/* The thread's values: the task source's, the rest from its io file. */
static int io_thread(void *state, const struct ctp_task *task,
		     struct ctp_record *rec)
{
	struct io_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	struct ctp_io io;
	uint64_t miss;
	int ret;

	if (!st->thread_need) /* only process fields are recorded */
		return 0;
	io.present =
		ctp_src_task_take(st->api, task, io_take,
				  CTP_ARRAY_LEN(io_take), st->thread_need, &io);
	miss = st->thread_need & ~io.present;
	st->api->summary_add(st->ctx,
			     st->counter[miss ? C_FROM_FILES : C_FROM_TASK], 1);
	if (miss) {
		ret = read_io(st, task, TF_IO, miss, &io);
		if (ret < 0)
			return ret;
	}
	return ctp_fields_apply(&set, &st->thread_plan, &io, io.present);
}

/* <tgid>/io: the thread group's sum plus what exited threads and reaped
 * children left in signal_struct.ioac; the process source's values, the
 * rest from the file. */
static int io_process(void *state, const struct ctp_task *task,
		      struct ctp_record *rec)
{
	struct io_state *st = state;
	struct ctp_setter set = CTP_SETTER(st->api, rec);
	struct ctp_io io;
	uint64_t miss;
	int ret;

	if (!st->process_need) /* only thread fields are recorded */
		return 0;
	io.present = ctp_src_values_take(
		st->api, task, CTP_SOURCE_PROCESS, 1, io_proc_take,
		CTP_ARRAY_LEN(io_proc_take), st->process_need, &io);
	miss = st->process_need & ~io.present;
	st->api->summary_add(
		st->ctx,
		st->counter[miss ? C_PROC_FROM_FILE : C_PROC_FROM_SOURCE], 1);
	if (miss) {
		ret = read_io(st, task, PF_IO, miss, &io);
		if (ret < 0)
			return ret;
	}
	return ctp_fields_apply(&set, &st->process_plan, &io, io.present);
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
	/* The lazy io needs file_get. */
	r = CTP_ATTACH_TABLE(ctx, api, CTP_API_THROUGH(file_get), ctp_io_src,
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
	for (size_t i = 0; i < st->thread_plan.n; i++)
		st->thread_need |= 1ull << st->thread_plan.step[i].bit;
	for (size_t i = 0; i < st->process_plan.n; i++)
		st->process_need |= 1ull << st->process_plan.step[i].bit;
	/* Every thread value is one of the source's: the core copies them,
	 * and calls io_thread only for a thread the source misses one of. */
	int64_t bound = ctp_src_task_bind(api, ctx, &st->thread_plan, io_take,
					  CTP_ARRAY_LEN(io_take));
	if (bound < 0) {
		free(st);
		return (int)bound;
	}
	if (st->thread_need &&
	    ((uint64_t)bound & st->thread_need) == st->thread_need) {
		r = api->thread_skip_bound(ctx, 1, st->counter[C_FROM_TASK]);
		if (r < 0) {
			free(st);
			return r;
		}
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
