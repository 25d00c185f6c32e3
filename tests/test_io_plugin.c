/* SPDX-License-Identifier: MIT */
/*
 * The built io.so, loaded by the core's loader into a real engine
 * (tests/harness.h) and called without the walk over literal kernel text:
 * its descriptor, what is set in the capture, what stays absent, the
 * kernel-config gate and the summary counter, also with concurrent
 * callers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "test_io_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/io.so"

/* ---- Fixture ------------------------------------------------------------- */

static int setup(void **state)
{
	return hx_fx_setup(state, PLUGIN_PATH);
}

/* Debug messages are not counted; io registers no field at runtime. */
static void ctx_reset(struct hx_fx *fx, const char *const *opts)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.log_max = CTP_LOG_INFO;
	fx->ctx.forbid_register = true;
	fx->state = NULL;
}

static int start(struct hx_fx *fx, const char *const *opts)
{
	ctx_reset(fx, opts);
	return hx_fx_load(fx, 0);
}

/* Run the thread (process) callback over io text; NULL text means the read
 * failed with err. */
static int run_thread(struct hx_fx *fx, struct hx_rec *rec, const char *io,
		      int err)
{
	struct hx_task ft;

	hx_task_init(&ft, 1, 2);
	hx_task_file(&ft, 0, io, err);
	return hx_fx_run(fx, rec, &ft, CTP_SCOPE_THREAD);
}

static int run_process(struct hx_fx *fx, struct hx_rec *rec, const char *io,
		       int err)
{
	struct hx_task ft;

	hx_task_init(&ft, 1, 1);
	hx_task_file(&ft, 0, io, err);
	return hx_fx_run(fx, rec, &ft, CTP_SCOPE_PROCESS);
}

/* ---- Tests -------------------------------------------------------------- */

static const struct {
	const char *name;
	uint8_t unit;
	uint64_t bash; /* value in IO_BASH */
} expected[] = {
	{"io.rchar", CTP_UNIT_BYTES, 273215},
	{"io.wchar", CTP_UNIT_BYTES, 12132},
	{"io.syscr", CTP_UNIT_COUNT, 67210},
	{"io.syscw", CTP_UNIT_COUNT, 490},
	{"io.read_bytes", CTP_UNIT_BYTES, 0},
	{"io.write_bytes", CTP_UNIT_BYTES, 286720},
	{"io.cancelled_write_bytes", CTP_UNIT_BYTES, 0},
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

/* The process fields, in the same order, and their values in
 * IO_TGID_REAPED. */
static const struct {
	const char *name;
	uint64_t reaped;
} expected_process[] = {
	{"io.process.rchar", 6751468},
	{"io.process.wchar", 4201400},
	{"io.process.syscr", 2680},
	{"io.process.syscw", 121},
	{"io.process.read_bytes", 0},
	{"io.process.write_bytes", 4202496},
	{"io.process.cancelled_write_bytes", 0},
};

static void descriptor(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t i;

	hx_expect_descriptor(
		p, "io",
		CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
			CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
			CTP_PLUGIN_NO_THREAD_DIR,
		2 * N_EXPECTED);
	/* No option: the core refuses any before init. */
	assert_int_equal(p->n_options, 0);
	/* Every expected field is there; what each field declares is
	 * checked as properties of all plugins (test_plugin_properties). */
	for (i = 0; i < N_EXPECTED; i++) {
		int t = hx_table_index(p, expected[i].name);
		int k = hx_table_index(p, expected_process[i].name);

		assert_int_equal(p->fields[t].scope, CTP_SCOPE_THREAD);
		assert_int_equal(p->fields[k].scope, CTP_SCOPE_PROCESS);
		assert_int_equal(p->fields[k].unit, expected[i].unit);
		assert_int_equal(p->fields[k].kind, CTP_KIND_COUNTER);
		assert_int_equal(p->fields[k].rule, CTP_RULE_SUM);
	}
	assert_non_null(p->thread_files);
	/* Lazy: not read when the task source has every value. */
	assert_string_equal(p->thread_files[0], "?io");
	assert_null(p->thread_files[1]);
	/* <tgid>/io, lazy too: not read when the process source has every
	 * value. */
	assert_non_null(p->process_files);
	assert_string_equal(p->process_files[0], "?io");
	assert_null(p->process_files[1]);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_non_null(p->process);
	assert_null(p->host);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_and_gate(void **state)
{
	struct hx_fx *fx = *state;

	/* The gate names the file and the kernel option, once. */
	assert_int_equal(start(fx, NULL), 0);
	assert_non_null(fx->state);
	assert_int_equal(fx->ctx.n_log, 0);
	assert_int_equal(fx->ctx.n_gates, 1);
	assert_string_equal(hx_gate(&fx->ctx, "io"),
			    "CONFIG_TASK_IO_ACCOUNTING");
	assert_int_equal(hx_info(&fx->ctx)->n_summary, 5);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "from_task"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "from_files"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "process_from_source"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "process_from_file"), 0);
	hx_fx_stop(fx);

	/* A refused gate costs only the hint. */
	ctx_reset(fx, NULL);
	fx->ctx.gate_ret = -EEXIST;
	assert_int_equal(hx_fx_load(fx, 0), 0);
	assert_int_equal(fx->ctx.n_gates, 1);
	assert_null(hx_gate(&fx->ctx, "io"));
	hx_fx_stop(fx);

	/* A core from before file_gate: no call past its table. */
	ctx_reset(fx, NULL);
	assert_int_equal(hx_fx_load(fx, offsetof(struct ctp_api, file_gate)),
			 0);
	assert_int_equal(fx->ctx.n_gates, 0);
	assert_null(hx_gate(&fx->ctx, "io"));
	hx_fx_stop(fx);

	/* ... and one without roots(), the oldest this plugin accepts. */
	ctx_reset(fx, NULL);
	assert_int_equal(hx_fx_load(fx, offsetof(struct ctp_api, roots)),
			 -ENOTSUP);
	hx_ctx_done(&fx->ctx);
}

static void thread_all_fields(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, IO_BASH, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_EXPECTED);
	for (i = 0; i < N_EXPECTED; i++) {
		int k = hx_table_index(fx->p, expected[i].name);

		assert_int_equal(rec.cells[k].set, 1);
		assert_true(rec.cells[k].u == expected[i].bash);
		assert_false(hx_is_set(&rec, expected_process[i].name));
	}
	/* Zero is a value: set, not absent. */
	assert_int_equal(run_thread(fx, &rec, IO_CAT, 0), 0);
	assert_int_equal(rec.n_sets, N_EXPECTED);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.wchar")].set, 1);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.wchar")].u, 0);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.rchar")].u, 6976);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 0);
	hx_fx_stop(fx);
}

/* A failed read: values absent, callback fine, nothing counted (the core
 * tallies the failure and decides whether the thread vanished). */
static void thread_file_missing(void **state)
{
	static const int errs[] = {-ENOENT, -ESRCH, -EACCES, -EIO, -EISDIR};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		assert_int_equal(run_thread(fx, &rec, NULL, errs[i]), 0);
		assert_int_equal(rec.n_sets, 0);
	}
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 0);
	hx_fx_stop(fx);
}

/* Broken text: what parses is set, the rest absent, each file counted
 * once in parse_errors. */
static void thread_partial(void **state)
{
	static const char bad[] = "rchar: 5\n"
				  "wchar: 6x\n"
				  "syscr: 99999999999999999999\n"
				  "syscw: 8\n"
				  "write_bytes: 9\n"
				  "cancelled_write_bytes: 1";
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, bad, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 3);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.rchar")].u, 5);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.syscw")].u, 8);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.write_bytes")].u,
			 9);
	/* garbage, overflow, missing, cut short */
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.wchar")].set, 0);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.syscr")].set, 0);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.read_bytes")].set,
			 0);
	assert_int_equal(
		rec.cells[hx_table_index(fx->p, "io.cancelled_write_bytes")]
			.set,
		0);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 1);

	assert_int_equal(run_thread(fx, &rec, "", 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(run_thread(fx, &rec, "\x01\x02garbage", 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 3);
	hx_fx_stop(fx);
}

/*
 * The process row gets <tgid>/io: what exited threads and reaped children
 * did is there and in no thread row. Nothing of it lands in the thread
 * fields.
 */
static void process_all_fields(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_process(fx, &rec, IO_TGID_REAPED, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_EXPECTED);
	for (i = 0; i < N_EXPECTED; i++) {
		hx_expect_u64(&rec, expected_process[i].name,
			      expected_process[i].reaped);
		assert_false(hx_is_set(&rec, expected[i].name));
	}

	/* A process with a joined thread: its total is more than its live
	 * threads' (808's own; 874 read nothing). */
	assert_int_equal(run_process(fx, &rec, IO_TGID_DEAD_THREAD, 0), 0);
	uint64_t total = hx_u64(&rec, "io.process.rchar");
	assert_int_equal(run_thread(fx, &rec, IO_TID_808, 0), 0);
	assert_true(total == 1686778);
	assert_true(hx_u64(&rec, "io.rchar") == 1412948);
	assert_true(total > hx_u64(&rec, "io.rchar"));
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 0);
	hx_fx_stop(fx);
}

/* A missing <tgid>/io (no CONFIG_TASK_IO_ACCOUNTING) or a denied one
 * (another user's process): values absent, no error, nothing counted by
 * the plugin (the core tallies the failure as process/io). Broken text
 * keeps what parses and counts once. */
static void process_file_missing(void **state)
{
	static const int errs[] = {-ENOENT, -ESRCH, -EACCES, -EPERM, -EIO};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		assert_int_equal(run_process(fx, &rec, NULL, errs[i]), 0);
		assert_int_equal(rec.n_sets, 0);
	}
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 0);
	assert_int_equal(
		run_process(fx, &rec, "rchar: 5\nwchar: x\nwrite_bytes: 7", 0),
		0);
	assert_int_equal(rec.n_sets, 1);
	hx_expect_u64(&rec, "io.process.rchar", 5);
	assert_false(hx_is_set(&rec, "io.process.write_bytes"));
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 1);
	hx_fx_stop(fx);
}

static void disabled_field(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	ctx_reset(fx, NULL);
	fx->ctx.disabled_field[0] = hx_table_index(fx->p, "io.syscr");
	assert_int_equal(hx_fx_load(fx, 0), 0);
	assert_int_equal(run_thread(fx, &rec, IO_BASH, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_EXPECTED - 1);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.syscr")].set, 0);
	assert_int_equal(rec.cells[hx_table_index(fx->p, "io.syscw")].u, 490);
	hx_fx_stop(fx);
}

struct worker {
	struct hx_fx *fx;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hx_rec *rec = malloc(sizeof(*rec));
	int i, k = hx_table_index(w->fx->p, "io.write_bytes");

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 500; i++) {
		const char *text = i % 2 ? IO_BASH : "rchar: 1\n";

		if (run_thread(w->fx, rec, text, 0) != 0 || rec->bad_sets ||
		    rec->n_sets != (i % 2 ? N_EXPECTED : 1u) ||
		    (i % 2 && rec->cells[k].u != 286720))
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks share nothing but the counters. */
static void concurrent_workers(void **state)
{
	struct hx_fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < 4; i++) {
		w[i].fx = fx;
		w[i].failures = 0;
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	/* Each "rchar: 1" file lacks six keys: 4 workers x 250. */
	assert_int_equal(hx_summary(&fx->ctx, "parse_errors"), 1000);
	hx_fx_stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_and_gate),
		cmocka_unit_test(thread_all_fields),
		cmocka_unit_test(thread_file_missing),
		cmocka_unit_test(thread_partial),
		cmocka_unit_test(process_all_fields),
		cmocka_unit_test(process_file_missing),
		cmocka_unit_test(disabled_field),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, hx_fx_teardown);
}
