/* SPDX-License-Identifier: MIT */
/*
 * The built sched_ext.so, loaded into a real engine and called without the
 * walk (tests/harness.h): its descriptor and options, the host callback
 * over the sys trees of tests/fixtures/scx (a loaded scheduler, none loaded,
 * damaged files, no sched_ext at all) and over trees made here (missing and
 * unreadable files), and the thread callback: when it fetches the shared
 * lazy sched file, when it only uses bytes another plugin fetched, and what
 * it sets, leaves absent and counts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/sched_ext.so"
#define FIX	    CTP_TEST_FIXTURES "/scx"
#define N_FIELDS    7

#define DASHES                                                                 \
	"-------------------------------------------------------------------"  \
	"\n"
#define HDR "t (1, #threads: 1)\n" DASHES
static const char sched_on[] = HDR
	"policy                                       :                    7\n"
	"ext.enabled                                  :                    1\n";
static const char sched_off[] = HDR
	"policy                                       :                    0\n"
	"ext.enabled                                  :                    0\n";
static const char sched_none[] = HDR
	"policy                                       :                    0\n";
static const char sched_bad[] = HDR
	"ext.enabled                                  :                    2\n";

/* A core up to file_gate: what came later (derived fields, cgroup_ref)
 * this plugin does not use, and it must not touch what `size` leaves out. */
#define API_SIZE HX_API_SIZE_THROUGH(file_gate)

static int setup(void **state)
{
	return hx_fx_setup(state, PLUGIN_PATH);
}

/* init with the sys root `sys` (NULL: none) and options. */
static int start(struct hx_fx *fx, const char *sys, const char *const *opts)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	if (sys) {
		fx->ctx.eng.roots.sys = sys;
		fx->ctx.eng.roots.sys_fd =
			open(sys, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fx->ctx.eng.roots.sys_fd < 0)
			fail_msg("open %s: %s", sys, strerror(errno));
	}
	return hx_fx_load(fx, API_SIZE);
}

static void stop(struct hx_fx *fx)
{
	if (fx->ctx.eng.roots.sys_fd >= 0)
		close(fx->ctx.eng.roots.sys_fd);
	hx_fx_stop(fx);
}

static void run_host(struct hx_fx *fx, struct hx_rec *rec)
{
	hx_rec_init(rec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->host(fx->state, &rec->core), 0);
	assert_int_equal(rec->bad_sets, 0);
}

/*
 * The thread callback over a task whose sched file reads as `text` (NULL:
 * the read fails with err). prefetched: another plugin already fetched it,
 * so the slot holds the bytes before the call.
 */
static int run_thread(struct hx_fx *fx, struct hx_rec *rec, struct hx_task *ft,
		      const char *text, int err, bool prefetched)
{
	hx_task_init(ft, 1, 1);
	hx_task_lazy(ft, 0, text, err);
	if (prefetched)
		hx_task_prefetch(ft, 0);
	return hx_fx_run(fx, rec, ft, CTP_SCOPE_THREAD);
}

static const struct hx_cell *ext(const struct hx_rec *rec)
{
	return hx_cell(rec, "sched_ext.ext_enabled");
}

/* ---- Descriptor and options ---------------------------------------------- */

static void descriptor(void **state)
{
	static const char *const want[N_FIELDS] = {
		"sched_ext.state",	 "sched_ext.switch_all",
		"sched_ext.nr_rejected", "sched_ext.hotplug_seq",
		"sched_ext.enable_seq",	 "sched_ext.ops",
		"sched_ext.ext_enabled",
	};
	struct hx_fx *fx = *state;
	const struct ctp_plugin *p = fx->p;

	hx_expect_descriptor(
		p, "sched_ext",
		CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL |
			CTP_PLUGIN_SPLITTABLE | CTP_PLUGIN_OPTIONS |
			CTP_PLUGIN_NO_THREAD_DIR,
		N_FIELDS);
	for (size_t i = 0; i < N_FIELDS; i++) {
		/* What each declares: test_plugin_properties. */
		if (hx_field_index(p, want[i]) < 0)
			fail_msg("no field %s", want[i]);
	}
	/* Lazy, and the same name the schedstat plugin declares. */
	assert_non_null(p->thread_files);
	assert_string_equal(p->thread_files[0], "?sched");
	assert_null(p->thread_files[1]);
	assert_null(p->process_files);
	assert_non_null(p->host);
	assert_non_null(p->thread);
	assert_null(p->process);
	assert_null(p->cgroup);
	assert_null(p->finish);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"ext-enabled", "true", NULL};
	static const char *const bad[] = {"ext_enabled", "sometimes", NULL};
	static const char *const good[][3] = {
		{"ext_enabled", "auto", NULL},
		{"ext_enabled", "true", NULL},
		{"ext_enabled", "off", NULL},
	};
	struct hx_fx *fx = *state;

	/* An unknown name or a value not among the choices: the core's
	 * loader refuses the plugin before init (declared options). */
	assert_string_equal(fx->p->options[0].name, "ext_enabled");
	assert_int_equal(start(fx, NULL, unknown), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'ext-enabled'"));
	hx_ctx_done(&fx->ctx);
	assert_int_equal(start(fx, NULL, bad), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'sometimes'"));
	assert_non_null(strstr(fx->ctx.last_log, "auto, true, false"));
	hx_ctx_done(&fx->ctx);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(start(fx, NULL, good[i]), 0);
		assert_int_equal(hx_info(&fx->ctx)->n_summary, 3);
		assert_int_equal(hx_summary(&fx->ctx, "sysfs_read_errors"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "sysfs_parse_errors"), 0);
		assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 0);
		stop(fx);
	}

	/* An older core without file_get() cannot serve the lazy file. */
	assert_int_equal(
		hx_fx_start(fx, offsetof(struct ctp_api, file_get), NULL),
		-ENOTSUP);
	hx_ctx_done(&fx->ctx);
}

/* ---- Host ---------------------------------------------------------------- */

static void host_enabled(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, FIX "/sys-enabled", NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 6);
	assert_string_equal(hx_cell(&rec, "sched_ext.state")->str, "enabled");
	assert_int_equal(hx_cell(&rec, "sched_ext.switch_all")->u, 1);
	assert_int_equal(hx_cell(&rec, "sched_ext.nr_rejected")->u, 3);
	assert_int_equal(hx_cell(&rec, "sched_ext.hotplug_seq")->u, 12);
	assert_int_equal(hx_cell(&rec, "sched_ext.enable_seq")->u, 5);
	assert_string_equal(hx_cell(&rec, "sched_ext.ops")->str,
			    "lavd_1.0.12_g2b1c7e4_x86_64_unknown_linux_gnu");
	for (unsigned i = 0; i < hx_info(&fx->ctx)->n_summary; i++)
		assert_int_equal(hx_info(&fx->ctx)->summary[i], 0);
	stop(fx);
}

/* Built in, nothing loaded: no root/ directory, so no ops. */
static void host_disabled(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, FIX "/sys-disabled", NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 5);
	assert_string_equal(hx_cell(&rec, "sched_ext.state")->str, "disabled");
	assert_int_equal(hx_cell(&rec, "sched_ext.switch_all")->set, 1);
	assert_int_equal(hx_cell(&rec, "sched_ext.switch_all")->u, 0);
	assert_int_equal(hx_cell(&rec, "sched_ext.nr_rejected")->u, 0);
	assert_int_equal(hx_cell(&rec, "sched_ext.ops")->set, 0);
	for (unsigned i = 0; i < hx_info(&fx->ctx)->n_summary; i++)
		assert_int_equal(hx_info(&fx->ctx)->summary[i], 0);
	stop(fx);
}

/* No sched_ext, or no sys root: nothing, and nothing counted. */
static void host_none(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, FIX "/sys-none", NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 0);
	for (unsigned i = 0; i < hx_info(&fx->ctx)->n_summary; i++)
		assert_int_equal(hx_info(&fx->ctx)->summary[i], 0);
	stop(fx);
	assert_int_equal(start(fx, NULL, NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 0);
	stop(fx);
}

static void host_broken(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_int_equal(start(fx, FIX "/sys-broken", NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 1);
	assert_int_equal(hx_cell(&rec, "sched_ext.enable_seq")->u, 7);
	assert_int_equal(hx_summary(&fx->ctx, "sysfs_parse_errors"), 5);
	assert_int_equal(hx_summary(&fx->ctx, "sysfs_read_errors"), 0);
	stop(fx);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * A kernel before hotplug_seq and enable_seq existed: missing files are
 * absent, not errors. A file that cannot be read (a directory here) is
 * counted. The directory itself unreadable: counted and logged.
 */
static void host_missing_and_unreadable(void **state)
{
	char tmp[] = "/tmp/ctprof-scx.XXXXXX", dir[128], sw[PATH_MAX];
	struct hx_fx *fx = *state;
	struct hx_rec rec;

	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/kernel", tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/kernel/sched_ext", tmp);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(dir, "state", "enabled\n");
	put(dir, "nr_rejected", "0\n");
	snprintf(sw, sizeof(sw), "%s/switch_all", dir);
	assert_int_equal(mkdir(sw, 0755), 0);

	assert_int_equal(start(fx, tmp, NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 2);
	assert_string_equal(hx_cell(&rec, "sched_ext.state")->str, "enabled");
	assert_int_equal(hx_cell(&rec, "sched_ext.nr_rejected")->set, 1);
	assert_int_equal(hx_cell(&rec, "sched_ext.switch_all")->set, 0);
	assert_int_equal(hx_summary(&fx->ctx, "sysfs_read_errors"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "sysfs_parse_errors"), 0);
	stop(fx);

	/* kernel/sched_ext a regular file: the open fails with ENOTDIR. */
	assert_int_equal(rmdir(sw), 0);
	put(dir, "switch_all", "1\n");
	{
		char f[PATH_MAX];

		snprintf(f, sizeof(f), "%s/state", dir);
		assert_int_equal(unlink(f), 0);
		snprintf(f, sizeof(f), "%s/nr_rejected", dir);
		assert_int_equal(unlink(f), 0);
		snprintf(f, sizeof(f), "%s/switch_all", dir);
		assert_int_equal(unlink(f), 0);
	}
	assert_int_equal(rmdir(dir), 0);
	put(tmp, "kernel/sched_ext", "not a directory\n");
	assert_int_equal(start(fx, tmp, NULL), 0);
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "sysfs_read_errors"), 1);
	assert_non_null(strstr(fx->ctx.last_log, "kernel/sched_ext"));
	stop(fx);

	assert_int_equal(unlink(dir), 0);
	snprintf(dir, sizeof(dir), "%s/kernel", tmp);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(rmdir(tmp), 0);
}

/* ---- Threads ------------------------------------------------------------- */

/* sched_ext present (auto fetches): what each text gives. */
static void thread_values(void **state)
{
	static const int errs[] = {-ENOENT, -ESRCH, -EACCES, -EIO};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	assert_int_equal(start(fx, FIX "/sys-enabled", NULL), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, false), 0);
	assert_int_equal(ft.gets, 1);
	assert_int_equal(ft.bad_gets, 0);
	assert_int_equal(rec.n_sets, 1);
	assert_int_equal(ext(&rec)->set, 1);
	assert_int_equal(ext(&rec)->type, CTP_TYPE_BOOL);
	assert_int_equal(ext(&rec)->u, 1);

	assert_int_equal(run_thread(fx, &rec, &ft, sched_off, 0, false), 0);
	assert_int_equal(ext(&rec)->set, 1);
	assert_int_equal(ext(&rec)->u, 0);

	/* No line: absent, not an error, not counted. */
	assert_int_equal(run_thread(fx, &rec, &ft, sched_none, 0, false), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 0);

	/* A bad value or a cut file: absent and counted. */
	assert_int_equal(run_thread(fx, &rec, &ft, sched_bad, 0, false), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 1);
	assert_int_equal(run_thread(fx, &rec, &ft, "t (1, #thr", 0, false), 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 2);

	/* A failed read is the core's to tally. */
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		assert_int_equal(
			run_thread(fx, &rec, &ft, NULL, errs[i], false), 0);
		assert_int_equal(rec.n_sets, 0);
		assert_int_equal(ft.gets, 1);
	}
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 2);

	/* Bytes another plugin fetched are used as they are. */
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, true), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(ext(&rec)->u, 1);
	assert_int_equal(rec.bad_sets, 0);

	/* A task with fewer files than declared is the core's bug. */
	hx_task_init(&ft, 1, 1);
	hx_task_lazy(&ft, 0, sched_on, 0);
	ft.task.n_files = 0;
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_THREAD);
	assert_int_equal(fx->p->thread(fx->state, &ft.task, &rec.core),
			 -EPROTO);
	stop(fx);
}

/*
 * No sched_ext directory (auto): the sched file is not fetched for this
 * plugin's sake, but bytes another plugin fetched are still read.
 */
static void thread_auto_without_scx(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	assert_int_equal(start(fx, FIX "/sys-none", NULL), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, false), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, true), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(ext(&rec)->u, 1);
	stop(fx);

	/* No sys root at all: the same. */
	assert_int_equal(start(fx, NULL, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, false), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 0);
	stop(fx);
}

static void thread_option(void **state)
{
	static const char *const on[] = {"ext_enabled", "true", NULL};
	static const char *const off[] = {"ext_enabled", "false", NULL};
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	/* true: fetched even without the directory. */
	assert_int_equal(start(fx, FIX "/sys-none", on), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_off, 0, false), 0);
	assert_int_equal(ft.gets, 1);
	assert_int_equal(ext(&rec)->set, 1);
	assert_int_equal(ext(&rec)->u, 0);
	stop(fx);

	/* false: never looked at, even when the bytes are there. */
	assert_int_equal(start(fx, FIX "/sys-enabled", off), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, false), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_bad, 0, true), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 0);
	/* The host values do not depend on it. */
	run_host(fx, &rec);
	assert_int_equal(rec.n_sets, 6);
	stop(fx);
}

/* A field the core refuses: no fetch for it; a refused setter is an error. */
static void refused_field(void **state)
{
	struct hx_fx *fx = *state;
	struct hx_rec rec;
	struct hx_task ft;

	hx_ctx_init(&fx->ctx, fx->p, NULL);
	fx->ctx.disabled_field[0] =
		hx_field_index(fx->p, "sched_ext.ext_enabled");
	assert_int_equal(hx_fx_load(fx, API_SIZE), 0);
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, true), 0);
	assert_int_equal(ft.gets, 0);
	assert_int_equal(rec.n_sets, 0);
	stop(fx);

	assert_int_equal(start(fx, FIX "/sys-enabled", NULL), 0);
	fx->ctx.failing_field = hx_field_index(fx->p, "sched_ext.ext_enabled");
	assert_int_equal(run_thread(fx, &rec, &ft, sched_on, 0, false),
			 -EINVAL);
	fx->ctx.failing_field = hx_field_index(fx->p, "sched_ext.hotplug_seq");
	hx_rec_init(&rec, &fx->ctx, CTP_SCOPE_HOST);
	assert_int_equal(fx->p->host(fx->state, &rec.core), -EINVAL);
	assert_int_equal(hx_cell(&rec, "sched_ext.enable_seq")->u, 5);
	assert_int_equal(hx_cell(&rec, "sched_ext.hotplug_seq")->set, 0);
	stop(fx);
}

struct worker {
	struct hx_fx *fx;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hx_rec *rec = malloc(sizeof(*rec));
	struct hx_task ft;

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (int i = 0; i < 500; i++) {
		const char *t = i % 3 == 0   ? sched_on
				: i % 3 == 1 ? sched_off
					     : sched_bad;

		if (run_thread(w->fx, rec, &ft, t, 0, false) != 0 ||
		    rec->bad_sets || rec->n_sets != (i % 3 == 2 ? 0u : 1u) ||
		    (i % 3 != 2 && ext(rec)->u != (i % 3 == 0)))
			w->failures++;
	}
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent thread callbacks on one state. */
static void concurrent_workers(void **state)
{
	struct hx_fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];

	assert_int_equal(start(fx, FIX "/sys-enabled", NULL), 0);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.fx = fx};
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	/* 166 of each 500 are bad, per worker. */
	assert_int_equal(hx_summary(&fx->ctx, "sched_parse_errors"), 4 * 166);
	stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(host_enabled),
		cmocka_unit_test(host_disabled),
		cmocka_unit_test(host_none),
		cmocka_unit_test(host_broken),
		cmocka_unit_test(host_missing_and_unreadable),
		cmocka_unit_test(thread_values),
		cmocka_unit_test(thread_auto_without_scx),
		cmocka_unit_test(thread_option),
		cmocka_unit_test(refused_field),
		cmocka_unit_test(concurrent_workers),
	};

	return cmocka_run_group_tests(tests, setup, hx_fx_teardown);
}
