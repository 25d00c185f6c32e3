/* SPDX-License-Identifier: MIT */
/*
 * The engine's accounting of plugin time (core/capture/engine.c: call_run,
 * bind_run, api_source_get), on the real engine and loader with test
 * collectors that spend known amounts of time (tests/plugins/abi_burn.c).
 *
 * Charged: on the fixture tree, abi-burnsrc's thread callback spins 2 ms a
 * thread, its source "abi-burn"'s fill 10 ms, inside abi-burnask's
 * callback, which spins 5 ms, and its value source "abi-burnv"'s fill 6 ms,
 * which the core runs for abi-burnbind's bound field before the thread
 * callbacks (abi-burnbind's callback spins 3 ms). Each plugin's time_ns is
 * at least what it spun (calls and fills as they counted them), the fills
 * are charged to the provider, not to the asker or the binder (each one's
 * time is below its own spinning plus the fills'), and neither's spinning
 * is charged to the provider. The upper bounds leave 60 ms and more for
 * the core's own steps; a fill or a call charged to the wrong plugin
 * exceeds them. The capture runs SCHED_FIFO, so no task of a busy host
 * preempts it and stretches a call (without the privilege the test exits
 * 77).
 *
 * One query a thread: procfs-stat asks the taskstats source for every
 * thread of a run before taskstats' own thread callback runs for the
 * first; taskstats' callback still takes the reply its fill got (one
 * netlink query a thread: its "ok" and "batched" counters are the threads
 * walked), not a second one. In a pid namespace of its own with a live
 * /proc (e2e_in_own_proc: skipped without root, and without a TASKSTATS
 * answer: no family or no CAP_NET_ADMIN).
 *
 * The same with abi-burnask's option `prefill: on` (ctp_api.source_prefill):
 * the core fills "abi-burn" for a run of threads before abi-burnask's calls,
 * and the fills are still abi-burnsrc's.
 *
 * Readings: a capture of a process of 64 sleeping threads besides its main
 * one (e2e_crowd, a proc root of it alone) with abi-burnsrc reads
 * CLOCK_MONOTONIC fewer times than it has threads (the engine's reads,
 * counted by wrapping clock_gettime at link time; the plugin's own are
 * not): a plugin's calls are timed for a run of threads, not one by one
 * (which read the clock at least twice a thread). So does one with
 * abi-burnask asking every thread for abi-burnsrc's source, when it has
 * the source prefilled: the fills of a run are timed together, not each
 * one inside the asker's call (two readings a thread).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "e2e_util.h"
#include "engine.h"
#include "loader.h"
#include "model.h"
#include "plugins/abi_burn.h"

/* CLOCK_MONOTONIC reads by the test executable (the core linked in). */
static _Atomic uint64_t mono_reads;
int __real_clock_gettime(clockid_t c, struct timespec *ts);
int __wrap_clock_gettime(clockid_t c, struct timespec *ts);
int __wrap_clock_gettime(clockid_t c, struct timespec *ts)
{
	if (c == CLOCK_MONOTONIC)
		atomic_fetch_add(&mono_reads, 1);
	return __real_clock_gettime(c, ts);
}

struct run {
	struct ctp_config cfg;
	struct ctp_plugin_cfg pcfg[3];
	struct ctp_kv prefill;
	char *dirs[1];
	struct ctp_capture *cap;
	struct ctp_engine eng;
};

/* One capture of proc root `proc` with the plugins named (loaded, or the
 * test fails), abi-burnask with option `prefill: on` when `prefill`. */
static void capture_with(struct run *r, const char *proc,
			 const char *const *names, size_t n, bool prefill)
{
	memset(r, 0, sizeof(*r));
	assert_true(n <= sizeof(r->pcfg) / sizeof(r->pcfg[0]));
	r->prefill = (struct ctp_kv){.key = "prefill", .value = "on"};
	for (size_t i = 0; i < n; i++) {
		r->pcfg[i] = (struct ctp_plugin_cfg){.name = (char *)names[i],
						     .enabled = 1};
		if (prefill && strcmp(names[i], "abi-burnask") == 0) {
			r->pcfg[i].opts = &r->prefill;
			r->pcfg[i].n_opts = 1;
		}
	}
	r->dirs[0] = CTP_ABI_PLUGIN_DIR;
	r->cfg.plugin_dirs = r->dirs;
	r->cfg.n_plugin_dirs = 1;
	r->cfg.workers = 1;
	r->cfg.proc_root = (char *)proc;
	r->cfg.sys_root = CTP_TEST_FIXTURES "/sys";
	r->cfg.plugins = r->pcfg;
	r->cfg.n_plugins = n;
	/* The build tree may be group-writable; the tests do not check it. */
	r->cfg.allow_insecure_plugins = 1;
	assert_int_equal(ctp_capture_new(1, &r->cap), 0);
	assert_int_equal(ctp_engine_init(&r->eng, &r->cfg, r->cap, NULL), 0);
	assert_int_equal(ctp_engine_load(&r->eng), 0);
	for (uint32_t i = 0; i < r->cap->n_plugins; i++)
		if (r->cap->plugins[i].status != CTP_PST_LOADED)
			fail_msg("plugin %s not loaded: %s",
				 r->cap->plugins[i].name,
				 r->cap->plugins[i].reason
					 ? r->cap->plugins[i].reason
					 : "");
	assert_int_equal(ctp_engine_capture(&r->eng), 0);
}

static void done(struct run *r)
{
	ctp_engine_done(&r->eng);
	ctp_capture_free(r->cap);
}

static const struct ctp_plugin_info *plugin(const struct run *r,
					    const char *name)
{
	for (uint32_t i = 0; i < r->cap->n_plugins; i++)
		if (strcmp(r->cap->plugins[i].name, name) == 0)
			return &r->cap->plugins[i];
	fail_msg("no plugin %s", name);
	return NULL;
}

static uint64_t counter(const struct ctp_plugin_info *p, const char *name)
{
	for (uint32_t c = 0; c < p->n_summary; c++)
		if (strcmp(p->summary_name[c], name) == 0)
			return atomic_load(&p->summary[c]);
	fail_msg("no counter %s of %s", name, p->name);
	return 0;
}

static void charged(bool prefill)
{
	struct run r;
	const char *names[] = {"abi-burnsrc", "abi-burnask", "abi-burnbind"};
	struct sched_param fifo = {.sched_priority = 1}, other = {0};
	assert_int_equal(sched_setscheduler(0, SCHED_FIFO, &fifo), 0);
	capture_with(&r, CTP_TEST_FIXTURES "/proc", names, 3, prefill);
	assert_int_equal(sched_setscheduler(0, SCHED_OTHER, &other), 0);
	const struct ctp_plugin_info *src = plugin(&r, "abi-burnsrc");
	const struct ctp_plugin_info *ask = plugin(&r, "abi-burnask");
	const struct ctp_plugin_info *bind = plugin(&r, "abi-burnbind");
	uint64_t threads = r.cap->threads[0].nrows;
	uint64_t src_ns = atomic_load(&src->time_ns);
	uint64_t ask_ns = atomic_load(&ask->time_ns);
	uint64_t bind_ns = atomic_load(&bind->time_ns);
	uint64_t src_spun = counter(src, "calls") * ABI_BURN_SRC_CALL_NS;
	uint64_t fill_spun = counter(src, "fills") * ABI_BURN_FILL_NS;
	uint64_t vfill_spun = counter(src, "vfills") * ABI_BURN_VFILL_NS;
	uint64_t ask_spun = counter(ask, "calls") * ABI_BURN_ASK_CALL_NS;
	uint64_t bind_spun = counter(bind, "calls") * ABI_BURN_BIND_CALL_NS;

	print_message("%" PRIu64 " threads; abi-burnsrc %.1f ms (spun %.1f, "
		      "fills %.1f and %.1f), abi-burnask %.1f ms (spun %.1f), "
		      "abi-burnbind %.1f ms (spun %.1f)\n",
		      threads, src_ns / 1e6, src_spun / 1e6, fill_spun / 1e6,
		      vfill_spun / 1e6, ask_ns / 1e6, ask_spun / 1e6,
		      bind_ns / 1e6, bind_spun / 1e6);
	/* Every thread of the fixture tree, each plugin called once for
	 * each, each source filled once for each, every fill of "abi-burn"
	 * asked for by abi-burnask, every bound field set. */
	assert_true(threads >= 8);
	const struct ctp_plugin_info *all[] = {src, ask, bind};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(counter(all[i], "calls"), threads);
		assert_int_equal(atomic_load(&all[i]->calls), threads);
	}
	assert_int_equal(counter(src, "fills"), threads);
	assert_int_equal(counter(src, "vfills"), threads);
	assert_int_equal(atomic_load(&ask->errors), 0);
	assert_int_equal(counter(ask, "asked"), threads);
	assert_int_equal(counter(bind, "bound"), threads);
	/* What each spun is its own, the fills the provider's. */
	assert_true(src_ns >= src_spun + fill_spun + vfill_spun);
	assert_true(ask_ns >= ask_spun);
	assert_true(bind_ns >= bind_spun);
	assert_true(ask_ns < ask_spun + fill_spun);
	assert_true(bind_ns < bind_spun + vfill_spun);
	assert_true(src_ns < src_spun + fill_spun + vfill_spun + ask_spun);
	done(&r);
}

static void test_charged(void **state)
{
	(void)state;
	charged(false);
}

static void test_charged_prefill(void **state)
{
	(void)state;
	charged(true);
}

/* A capture of the crowd with the plugins named (abi-burnask's source
 * prefilled): fewer CLOCK_MONOTONIC reads than threads. */
static void readings(const char *const *names, size_t n)
{
	char tmp[PATH_MAX], proc[PATH_MAX];
	pid_t crowd = e2e_crowd(64, "ctp-readings");
	assert_true(crowd > 0);
	assert_int_equal(e2e_tmpdir("engine-time", tmp, sizeof(tmp)), 0);
	assert_int_equal(E2E_PATHF(proc, "%s/proc", tmp), 0);
	assert_int_equal(e2e_proc_root(proc, &crowd, 1), 0);

	struct run r;
	uint64_t before = atomic_load(&mono_reads);
	capture_with(&r, proc, names, n, true);
	uint64_t reads = atomic_load(&mono_reads) - before;
	uint64_t threads = r.cap->threads[0].nrows;
	const struct ctp_plugin_info *src = plugin(&r, "abi-burnsrc");
	print_message("%" PRIu64 " threads, %" PRIu64
		      " CLOCK_MONOTONIC reads in the capture\n",
		      threads, reads);
	assert_int_equal(threads, 65);
	assert_int_equal(counter(src, "calls"), threads);
	assert_true(atomic_load(&src->time_ns) >=
		    threads * ABI_BURN_SRC_CALL_NS);
	if (n > 1) {
		/* Every thread asked, its source filled once, the fills
		 * charged to the provider. */
		const struct ctp_plugin_info *ask = plugin(&r, "abi-burnask");
		assert_int_equal(counter(ask, "asked"), threads);
		assert_int_equal(atomic_load(&ask->errors), 0);
		assert_int_equal(counter(src, "fills"), threads);
		assert_true(atomic_load(&src->time_ns) >=
			    threads *
				    (ABI_BURN_SRC_CALL_NS + ABI_BURN_FILL_NS));
	}
	assert_true(reads < threads);
	done(&r);
	kill(crowd, SIGKILL);
	waitpid(crowd, NULL, 0);
	assert_int_equal(e2e_rm_rf(tmp), 0);
}

static void test_readings(void **state)
{
	(void)state;
	const char *names[] = {"abi-burnsrc"};
	readings(names, 1);
}

static void test_readings_prefill(void **state)
{
	(void)state;
	const char *names[] = {"abi-burnsrc", "abi-burnask"};
	readings(names, 2);
}

/* In a pid namespace of its own (e2e_in_own_proc): a crowd of 40 threads
 * and this process are the live /proc, which taskstats queries. Exits 0,
 * 1 (failed, said why) or 77 (no TASKSTATS answer). */
static int one_query(void)
{
	pid_t crowd = e2e_crowd(40, "ctp-oneq");
	struct run r;
	memset(&r, 0, sizeof(r));
	r.pcfg[0] =
		(struct ctp_plugin_cfg){.name = "procfs-stat", .enabled = 1};
	r.pcfg[1] = (struct ctp_plugin_cfg){.name = "taskstats", .enabled = 1};
	r.dirs[0] = CTP_TEST_PLUGIN_DIR;
	r.cfg.plugin_dirs = r.dirs;
	r.cfg.n_plugin_dirs = 1;
	r.cfg.workers = 1;
	r.cfg.plugins = r.pcfg;
	r.cfg.n_plugins = 2;
	r.cfg.allow_insecure_plugins = 1;
	if (crowd <= 0 || ctp_capture_new(1, &r.cap) < 0 ||
	    ctp_engine_init(&r.eng, &r.cfg, r.cap, NULL) < 0 ||
	    ctp_engine_load(&r.eng) < 0 || ctp_engine_capture(&r.eng) < 0) {
		fprintf(stderr, "FAIL: no capture\n");
		exit(1);
	}
	uint64_t threads = r.cap->threads[0].nrows, ok = 0, batched = 0;
	uint64_t single = 0;
	for (uint32_t i = 0; i < r.cap->n_plugins; i++) {
		const struct ctp_plugin_info *p = &r.cap->plugins[i];
		for (uint32_t c = 0;
		     c < p->n_summary && !strcmp(p->name, "taskstats"); c++) {
			uint64_t v = atomic_load(&p->summary[c]);
			ok = !strcmp(p->summary_name[c], "ok") ? v : ok;
			batched = !strcmp(p->summary_name[c], "batched")
					  ? v
					  : batched;
			single = !strcmp(p->summary_name[c], "single") ? v
								       : single;
		}
	}
	printf("%" PRIu64 " threads; taskstats ok %" PRIu64 ", batched %" PRIu64
	       ", single %" PRIu64 "\n",
	       threads, ok, batched, single);
	done(&r);
	kill(crowd, SIGKILL);
	waitpid(crowd, NULL, 0);
	if (!ok) {
		fprintf(stderr, "SKIP: no TASKSTATS answer\n");
		exit(77);
	}
	if (threads < 41 || ok != threads || batched + single != threads) {
		fprintf(stderr, "FAIL: not one query a thread\n");
		exit(1);
	}
	exit(0);
}

static void test_one_query(void **state)
{
	(void)state;
	fflush(NULL);
	int r = e2e_in_own_proc(one_query);
	if (r == 77)
		skip();
	assert_int_equal(r, 0);
}

int main(void)
{
	struct sched_param fifo = {.sched_priority = 1}, other = {0};
	if (sched_setscheduler(0, SCHED_FIFO, &fifo) < 0) {
		fprintf(stderr, "SKIP: cannot run SCHED_FIFO: %s\n",
			strerror(errno));
		return 77;
	}
	sched_setscheduler(0, SCHED_OTHER, &other);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_charged),
		cmocka_unit_test(test_charged_prefill),
		cmocka_unit_test(test_readings),
		cmocka_unit_test(test_readings_prefill),
		cmocka_unit_test(test_one_query),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
