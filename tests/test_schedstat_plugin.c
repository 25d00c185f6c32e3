/* SPDX-License-Identifier: MIT */
/*
 * The built schedstat.so loaded into a real engine (tests/harness.h) and
 * called without the walk: its descriptor, init/thread/fini with the lazy
 * sched file served through file_get, over literal kernel text. Proves what is
 * set, what stays absent, the summary counters, the `sched` option and
 * concurrent use.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/source-taskstats.h"
#include "harness.h"
#include "schedstat_text.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/schedstat.so"
#define N_FIELDS    28

#define SCHEDSTAT_FULL "15302448102 2210612345 61874\n"

/* ---- Fixture ------------------------------------------------------------- */

static int setup(void **state)
{
	return hx_fx_setup(state, PLUGIN_PATH);
}

static void ctx_reset(struct hx_fx *fx, const char *const *opts)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->state = NULL;
}

static int start(struct hx_fx *fx, const char *const *opts)
{
	ctx_reset(fx, opts);
	return hx_fx_load(fx, 0);
}

/*
 * Run the thread callback over (schedstat, sched) text; NULL text means the
 * read failed with the given error. The lazy sched slot starts as the core
 * leaves it (-ENODATA) and is served by file_get.
 */
static int run_thread(struct hx_fx *fx, struct hx_rec *rec, struct hx_task *ft,
		      const char *schedstat, int schedstat_err,
		      const char *sched, int sched_err)
{
	hx_task_init(ft, 1, 1);
	hx_task_lazy(ft, 0, schedstat, schedstat_err);
	hx_task_lazy(ft, 1, sched, sched_err);
	return hx_fx_run(fx, rec, ft, CTP_SCOPE_THREAD);
}

/* ---- What the plugin declares ------------------------------------------- */

static const struct {
	const char *name;
} expected[N_FIELDS] = {
	{"schedstat.run_time"},
	{"schedstat.wait_time"},
	{"schedstat.timeslices"},
	{"schedstat.nr_wakeups"},
	{"schedstat.nr_wakeups_local"},
	{"schedstat.nr_wakeups_remote"},
	{"schedstat.nr_wakeups_sync"},
	{"schedstat.nr_wakeups_migrate"},
	{"schedstat.nr_wakeups_affine"},
	{"schedstat.nr_wakeups_affine_attempts"},
	{"schedstat.nr_migrations"},
	{"schedstat.nr_forced_migrations"},
	{"schedstat.nr_failed_migrations_affine"},
	{"schedstat.nr_failed_migrations_running"},
	{"schedstat.nr_failed_migrations_hot"},
	{"schedstat.wait_sum"},
	{"schedstat.wait_count"},
	{"schedstat.wait_max"},
	{"schedstat.sleep_max"},
	{"schedstat.block_sum"},
	{"schedstat.block_max"},
	{"schedstat.iowait_sum"},
	{"schedstat.iowait_count"},
	{"schedstat.exec_max"},
	{"schedstat.slice_max"},
	{"schedstat.core_forceidle_sum"},
	{"schedstat.slice"},
	{"schedstat.voluntary_sleep"},
};

static void descriptor(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	size_t i;

	hx_expect_descriptor(
		p, "schedstat",
		CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
			CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
			CTP_PLUGIN_NO_THREAD_DIR,
		N_FIELDS);
	/* What each declares: properties of all plugins
	 * (test_plugin_properties). */
	for (i = 0; i < N_FIELDS; i++)
		assert_true(hx_table_index(p, expected[i].name) >= 0);
	assert_non_null(p->thread_files);
	/* Both lazy: schedstat only when the taskstats source cannot say,
	 * sched only while its keys are printed. */
	assert_string_equal(p->thread_files[0], "?schedstat");
	assert_string_equal(p->thread_files[1], "?sched");
	assert_null(p->thread_files[2]);
	assert_null(p->process_files);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_null(p->process);
	assert_non_null(p->host); /* decides on sched per capture */
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"shced", "true", NULL};
	static const char *const bad[] = {"sched", "sometimes", NULL};
	static const char *const on[] = {"sched", "true", NULL};
	static const char *const off[] = {"sched", "false", NULL};
	const char *const *good[] = {NULL, on, off};
	static const char *const names[] = {
		"negative_dotted_values", "sched_parse_errors",
		"schedstat_parse_errors", "voluntary_sleep_negative",
		"from_taskstats",	  "from_files",
		"sched_not_read",	  "from_task"};
	struct hx_fx *fx = *state;
	size_t i, j;

	/* An unknown name is the core's loader to refuse, before init
	 * (declared options). */
	assert_int_equal(fx->p->n_options, 1);
	assert_string_equal(fx->p->options[0].name, "sched");
	assert_int_equal(start(fx, unknown), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'shced'"));
	hx_ctx_done(&fx->ctx);

	assert_int_equal(start(fx, bad), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "sched"));
	hx_ctx_done(&fx->ctx);

	for (i = 0; i < 3; i++) {
		assert_int_equal(start(fx, good[i]), 0);
		assert_non_null(fx->state);
		/* schedstat is gated on CONFIG_SCHED_INFO; sched is not. */
		assert_int_equal(fx->ctx.n_gates, 1);
		assert_string_equal(hx_gate(&fx->ctx, "schedstat"),
				    "CONFIG_SCHED_INFO");
		assert_null(hx_gate(&fx->ctx, "sched"));
		assert_int_equal(hx_info(&fx->ctx)->n_summary, 8);
		for (j = 0; j < 8; j++)
			assert_int_equal(hx_summary(&fx->ctx, names[j]), 0);
		hx_fx_stop(fx);
	}

	/* An older core without file_get() cannot serve the lazy file. */
	ctx_reset(fx, NULL);
	assert_int_equal(hx_fx_load(fx, offsetof(struct ctp_api, file_get)),
			 -ENOTSUP);
	hx_ctx_done(&fx->ctx);
}

/* Every field of SCHED_FULL, once. */
static void thread_all_fields(void **state)
{
	static const struct {
		const char *name;
		uint64_t v;
	} want[] = {
		{"schedstat.run_time", 15302448102ull},
		{"schedstat.wait_time", 2210612345ull},
		{"schedstat.timeslices", 61874},
		{"schedstat.nr_wakeups", 60791},
		{"schedstat.nr_wakeups_local", 41022},
		{"schedstat.nr_wakeups_remote", 19769},
		{"schedstat.nr_wakeups_sync", 2210},
		{"schedstat.nr_wakeups_migrate", 390},
		{"schedstat.nr_wakeups_affine", 803},
		{"schedstat.nr_wakeups_affine_attempts", 5120},
		{"schedstat.nr_migrations", 412},
		{"schedstat.nr_forced_migrations", 7},
		{"schedstat.nr_failed_migrations_affine", 3},
		{"schedstat.nr_failed_migrations_running", 118},
		{"schedstat.nr_failed_migrations_hot", 45},
		{"schedstat.wait_sum", 2210540012ull},
		{"schedstat.wait_count", 61204},
		{"schedstat.wait_max", 17998004},
		{"schedstat.sleep_max", 600012233001ull},
		{"schedstat.block_sum", 20533871007ull},
		{"schedstat.block_max", 103004560},
		{"schedstat.iowait_sum", 8830000017ull},
		{"schedstat.iowait_count", 1270},
		{"schedstat.exec_max", 4000812},
		{"schedstat.slice_max", 11250331},
		{"schedstat.core_forceidle_sum", 1500250},
		{"schedstat.slice", 2800000},
		{"schedstat.voluntary_sleep",
		 4391822019275ull - 20533871007ull},
	};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;
	size_t i;

	assert_int_equal(sizeof(want) / sizeof(want[0]), N_FIELDS);
	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_FIELDS);
	assert_int_equal(ft.gets, 2);
	assert_int_equal(ft.bad_gets, 0);
	for (i = 0; i < N_FIELDS; i++) {
		const struct hx_cell *c = hx_cell(&rec, want[i].name);

		if (c->set != 1 || c->u != want[i].v)
			fail_msg("%s: set %d value %llu, expected %llu",
				 want[i].name, c->set, (unsigned long long)c->u,
				 (unsigned long long)want[i].v);
	}
	/* ext.enabled is parsed but recorded by the sched_ext plugin. */
	for (i = 0; i < fx->p->n_fields; i++)
		assert_null(strstr(fx->p->fields[i].name, "ext_enabled"));

	/* sched_ext task: no forceidle line. */
	assert_int_equal(run_thread(fx, &rec, &ft, "901000001 123456 150\n", 0,
				    SCHED_EXT_TASK, 0),
			 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_FIELDS - 1);
	assert_int_equal(hx_cell(&rec, "schedstat.core_forceidle_sum")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.block_sum")->set, 1);
	assert_int_equal(hx_cell(&rec, "schedstat.block_sum")->u, 0);
	assert_true(hx_cell(&rec, "schedstat.voluntary_sleep")->u ==
		    66000000000ull);
	for (i = 0; i < 4; i++)
		assert_int_equal(hx_info(&fx->ctx)->summary[i], 0);
	hx_fx_stop(fx);
}

/* This host's kernel: CONFIG_SCHEDSTATS off. */
static void thread_host_partial(void **state)
{
	static const char *const set[] = {
		"schedstat.run_time", "schedstat.wait_time",
		"schedstat.timeslices", "schedstat.nr_migrations",
		"schedstat.slice"};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;
	uint32_t i, j;

	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_HOST, 0, SCHED_HOST, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, 5);
	assert_int_equal(hx_cell(&rec, "schedstat.run_time")->u, 116177358);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_time")->u, 12166374);
	assert_int_equal(hx_cell(&rec, "schedstat.timeslices")->u, 414);
	assert_int_equal(hx_cell(&rec, "schedstat.nr_migrations")->u, 54);
	assert_int_equal(hx_cell(&rec, "schedstat.slice")->u, 1400000);
	/* Everything else absent, not zero. */
	for (i = 0; i < fx->p->n_fields; i++) {
		int listed = 0;

		for (j = 0; j < 5; j++)
			listed |= !strcmp(fx->p->fields[i].name, set[j]);
		assert_int_equal(rec.cells[i].set, listed);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(hx_info(&fx->ctx)->summary[i], 0);
	hx_fx_stop(fx);
}

/* Copy of `text` with the value of `key`'s line replaced. */
static char *edit(const char *text, const char *key, const char *value)
{
	size_t klen = strlen(key);
	char *out = malloc(strlen(text) + 256), *o = out;
	const char *l, *nl;

	assert_non_null(out);
	for (l = text; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		assert_non_null(nl);
		if (strncmp(l, key, klen) == 0 && l[klen] == ' ') {
			o += sprintf(o, "%-45s:%s\n", key, value);
			continue;
		}
		memcpy(o, l, (size_t)(nl + 1 - l));
		o += nl + 1 - l;
	}
	*o = '\0';
	return out;
}

static void thread_summary_counters(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;
	char *a, *b, *neg, *g, *blk;

	assert_int_equal(start(fx, NULL), 0);

	/* Three negative dotted values: absent, counted, not an error. */
	a = edit(SCHED_FULL, "wait_sum", "            -5.000000");
	b = edit(a, "sleep_max", "            -1.250000");
	neg = edit(b, "sum_block_runtime", "           -12.000000");
	assert_int_equal(run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, neg, 0),
			 0);
	assert_int_equal(rec.n_sets, N_FIELDS - 4);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_sum")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.sleep_max")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.block_sum")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.voluntary_sleep")->set, 0);
	assert_int_equal(hx_summary(&fx->ctx, "negative_dotted_values"), 3);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "voluntary_sleep_negative"), 0);

	/* Garbage: one parse error per file, the rest kept. */
	g = edit(SCHED_FULL, "nr_wakeups", "                 12x");
	assert_int_equal(run_thread(fx, &rec, &ft, "123 abc 5\n", 0, g, 0), 0);
	assert_int_equal(hx_cell(&rec, "schedstat.nr_wakeups")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.run_time")->u, 123);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_time")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.timeslices")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.nr_wakeups_local")->u, 41022);
	assert_int_equal(rec.n_sets, 1 + N_FIELDS - 3 - 1);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "schedstat_parse_errors"), 1);

	/* Block over sleep: no voluntary sleep, counted; block_sum kept. */
	blk = edit(SCHED_FULL, "sum_block_runtime", "       9999999.000000");
	assert_int_equal(run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, blk, 0),
			 0);
	assert_int_equal(hx_cell(&rec, "schedstat.voluntary_sleep")->set, 0);
	assert_true(hx_cell(&rec, "schedstat.block_sum")->u ==
		    9999999000000ull);
	assert_int_equal(rec.n_sets, N_FIELDS - 1);
	assert_int_equal(hx_summary(&fx->ctx, "voluntary_sleep_negative"), 1);

	/* A cut file: counted once, what parsed is kept. */
	assert_int_equal(run_thread(fx, &rec, &ft, "1 2 3", 0, "x (1, #thr", 0),
			 0);
	assert_int_equal(rec.n_sets, 2);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 2);
	assert_int_equal(hx_summary(&fx->ctx, "schedstat_parse_errors"), 2);
	assert_int_equal(hx_summary(&fx->ctx, "negative_dotted_values"), 3);
	assert_int_equal(rec.bad_sets, 0);
	free(a);
	free(b);
	free(neg);
	free(g);
	free(blk);
	hx_fx_stop(fx);
}

static void thread_files_missing(void **state)
{
	static const int errs[] = {-ENOENT, -ESRCH, -EACCES, -EIO};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;
	size_t i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		/* No schedstat (CONFIG_SCHED_INFO off): sched still read;
		 * the core tallies the failed read, the plugin does not
		 * fail. */
		assert_int_equal(
			run_thread(fx, &rec, &ft, NULL, errs[i], SCHED_HOST, 0),
			0);
		assert_int_equal(rec.n_sets, 2);
		assert_int_equal(hx_cell(&rec, "schedstat.run_time")->set, 0);
		assert_int_equal(hx_cell(&rec, "schedstat.slice")->u, 1400000);
		/* No sched: schedstat still recorded. */
		assert_int_equal(run_thread(fx, &rec, &ft, SCHEDSTAT_HOST, 0,
					    NULL, errs[i]),
				 0);
		assert_int_equal(rec.n_sets, 3);
		assert_int_equal(ft.gets, 2);
		assert_int_equal(hx_cell(&rec, "schedstat.timeslices")->u, 414);
		/* Neither: nothing, and still no error of the plugin. */
		assert_int_equal(
			run_thread(fx, &rec, &ft, NULL, errs[i], NULL, errs[i]),
			0);
		assert_int_equal(rec.n_sets, 0);
	}
	/* err 0 but no bytes is no file. */
	assert_int_equal(run_thread(fx, &rec, &ft, NULL, 0, NULL, 0), 0);
	assert_int_equal(rec.n_sets, 0);
	/* Empty files: parse errors, nothing set. */
	assert_int_equal(run_thread(fx, &rec, &ft, "", 0, "", 0), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "schedstat_parse_errors"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 1);
	assert_int_equal(rec.bad_sets, 0);

	/* A task that declares fewer files than the plugin needs. */
	{
		struct ctp_task task = {.abi = CTP_ABI_MAJOR,
					.size = sizeof(task),
					.files = ft.files,
					.n_files = 1,
					.core = &ft};

		assert_int_equal(fx->p->thread(fx->state, &task, &rec.core),
				 -EPROTO);
	}
	hx_fx_stop(fx);
}

static void option_sched_false(void **state)
{
	static const char *const off[] = {"sched", "false", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	assert_int_equal(start(fx, off), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0), 0);
	/* The sched file is never fetched (schedstat is). */
	assert_int_equal(ft.gets, 1);
	assert_int_equal(rec.n_sets, 3);
	assert_int_equal(hx_cell(&rec, "schedstat.timeslices")->u, 61874);
	assert_int_equal(hx_cell(&rec, "schedstat.nr_migrations")->set, 0);
	hx_fx_stop(fx);
}

/* ---- The schedstats hint ------------------------------------------------ */

/* A proc root in a temp dir: sys/kernel/sched_schedstats holds `sysctl`
 * (NULL: no such file), config.gz the line `kconfig` (NULL: none). */
static int make_root(char *dir, const char *sysctl, const char *kconfig)
{
	char path[600], cmd[1400];
	strcpy(dir, "/tmp/ctp-schedstat-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/sys/kernel'", dir);
	assert_int_equal(system(cmd), 0);
	if (sysctl) {
		snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats",
			 dir);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(sysctl, f);
		assert_int_equal(fclose(f), 0);
	}
	if (kconfig) {
		snprintf(cmd, sizeof(cmd),
			 "printf 'CONFIG_SCHED_INFO=y\\n%s\\n' | gzip -c > "
			 "'%s/config.gz'",
			 kconfig, dir);
		assert_int_equal(system(cmd), 0);
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* init with the proc root at fd; the hint it left ("" for none). */
static const char *hint_with(struct hx_fx *fx, int fd, const char *const *opts)
{
	ctx_reset(fx, opts);
	fx->ctx.eng.roots.proc_fd = fd;
	assert_int_equal(hx_fx_load(fx, 0), 0);
	return hx_hint(&fx->ctx);
}

static void schedstats_hint(void **state)
{
	static const char *const off[] = {"sched", "false", NULL};
	struct hx_fx *fx = *state;
	char dir[64], cmd[128];
	const struct {
		const char *sysctl, *kconfig, *want;
	} cases[] = {
		{"0\n", "CONFIG_SCHEDSTATS=y", "kernel.sched_schedstats is 0"},
		{"1\n", "CONFIG_SCHEDSTATS=y", NULL},
		{NULL, "# CONFIG_SCHEDSTATS is not set",
		 "this kernel is built without CONFIG_SCHEDSTATS"},
		/* The symbol not printed at all: its dependencies are off. */
		{NULL, "CONFIG_OTHER=y",
		 "this kernel is built without CONFIG_SCHEDSTATS"},
		/* Neither file: nothing to go by. */
		{NULL, NULL, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = make_root(dir, cases[i].sysctl, cases[i].kconfig);
		const char *h = hint_with(fx, fd, NULL);
		if (cases[i].want) {
			if (!strstr(h, cases[i].want))
				fail_msg("case %zu: hint \"%s\" lacks \"%s\"",
					 i, h, cases[i].want);
			assert_non_null(strstr(h, "schedstat.wait_sum"));
		} else if (*h) {
			fail_msg("case %zu: unexpected hint \"%s\"", i, h);
		}
		hx_fx_stop(fx);
		/* Without the sched file, the keys are not asked for. */
		if (cases[i].want) {
			assert_string_equal(hint_with(fx, fd, off), "");
			hx_fx_stop(fx);
		}
		close(fd);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* The thread callback over both files (lazy) with the taskstats source
 * offering src. */
static int run_with_source(struct hx_fx *fx, struct hx_rec *rec,
			   struct hx_task *ft,
			   const struct ctp_src_taskstats *src)
{
	hx_task_init(ft, 1, 1);
	hx_task_lazy(ft, 0, SCHEDSTAT_FULL, 0);
	hx_task_lazy(ft, 1, SCHED_FULL, 0);
	ft->src_name = CTP_SOURCE_TASKSTATS;
	ft->src_data = src;
	ft->src_len = sizeof(*src);
	return hx_fx_run(fx, rec, ft, CTP_SCOPE_THREAD);
}

/*
 * The three schedstat values from the taskstats source when it has them
 * (schedstat never read); sched under `auto` only while the kernel prints
 * its keys, decided again at every capture (host).
 */
static void source_and_auto(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec, host;
	struct hx_task ft;
	struct ctp_src_taskstats src = {.abi = 1, .size = sizeof(src)};
	char dir[64], cmd[256], path[128];
	int fd = make_root(dir, "0\n", NULL);

	src.v[CTP_SRC_TS_RUN_NS] = 11;
	src.v[CTP_SRC_TS_RUN_DELAY_NS] = 22;
	src.v[CTP_SRC_TS_TIMESLICES] = 33;
	src.valid = 7u << CTP_SRC_TS_RUN_NS;
	ctx_reset(fx, NULL);
	fx->ctx.eng.roots.proc_fd = fd;
	assert_int_equal(hx_fx_load(fx, 0), 0);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(run_with_source(fx, &rec, &ft, &src), 0);
	/* sched_schedstats is 0: neither file read. */
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 3);
	assert_int_equal(hx_cell(&rec, "schedstat.run_time")->u, 11);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_time")->u, 22);
	assert_int_equal(hx_cell(&rec, "schedstat.timeslices")->u, 33);
	assert_int_equal(hx_summary(&fx->ctx, "from_taskstats"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "sched_not_read"), 1);

	/* Turned on between captures; one value missing from the source:
	 * the schedstat file for all three. */
	snprintf(path, sizeof(path), "%s/sys/kernel/sched_schedstats", dir);
	snprintf(cmd, sizeof(cmd), "echo 1 > '%s'", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	src.valid = 3u << CTP_SRC_TS_RUN_NS;
	assert_int_equal(run_with_source(fx, &rec, &ft, &src), 0);
	assert_int_equal(ft.gets, 2);
	assert_int_equal(rec.n_sets, N_FIELDS);
	assert_int_equal(hx_cell(&rec, "schedstat.timeslices")->u, 61874);
	assert_int_equal(hx_summary(&fx->ctx, "from_files"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "sched_not_read"), 1);
	hx_fx_stop(fx);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void disabled_and_failing_fields(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	ctx_reset(fx, NULL);
	fx->ctx.disabled_field[0] = hx_table_index(fx->p, "schedstat.wait_sum");
	fx->ctx.disabled_field[1] =
		hx_table_index(fx->p, "schedstat.nr_wakeups_sync");
	assert_int_equal(hx_fx_load(fx, 0), 0);
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(rec.n_sets, N_FIELDS - 2);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_sum")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.nr_wakeups_sync")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_max")->u, 17998004);

	/* A refused setter is the plugin's error; the others still land. */
	fx->ctx.failing_field = hx_table_index(fx->p, "schedstat.wait_count");
	assert_int_equal(
		run_thread(fx, &rec, &ft, SCHEDSTAT_FULL, 0, SCHED_FULL, 0),
		-EINVAL);
	assert_int_equal(rec.n_sets, N_FIELDS - 3);
	assert_int_equal(hx_cell(&rec, "schedstat.wait_count")->set, 0);
	assert_int_equal(hx_cell(&rec, "schedstat.slice")->u, 2800000);
	hx_fx_stop(fx);
}

struct worker {
	struct hx_fx *fx;
	const char *sched;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hx_rec *rec = malloc(sizeof(*rec));
	struct hx_task ft;
	int i;

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (i = 0; i < 500; i++) {
		if (run_thread(w->fx, rec, &ft, SCHEDSTAT_FULL, 0, w->sched,
			       0) != 0 ||
		    rec->bad_sets || rec->n_sets != N_FIELDS - 4 ||
		    hx_cell(rec, "schedstat.wait_max")->u != 17998004 ||
		    hx_cell(rec, "schedstat.run_time")->u != 15302448102ull)
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks on one state. */
static void concurrent_workers(void **state)
{
	struct hx_fx *fx = *state;
	char *a = edit(SCHED_FULL, "wait_sum", "            -5.000000");
	char *b = edit(a, "sleep_max", "            -1.250000");
	char *neg = edit(b, "sum_block_runtime", "           -12.000000");
	pthread_t t[4];
	struct worker w[4];
	int i;

	assert_int_equal(start(fx, NULL), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){.fx = fx, .sched = neg};
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	assert_int_equal(hx_summary(&fx->ctx, "negative_dotted_values"),
			 4 * 500 * 3);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 0);
	hx_fx_stop(fx);
	free(a);
	free(b);
	free(neg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(thread_all_fields),
		cmocka_unit_test(thread_host_partial),
		cmocka_unit_test(thread_summary_counters),
		cmocka_unit_test(thread_files_missing),
		cmocka_unit_test(option_sched_false),
		cmocka_unit_test(schedstats_hint),
		cmocka_unit_test(source_and_auto),
		cmocka_unit_test(disabled_and_failing_fields),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, hx_fx_teardown);
}
