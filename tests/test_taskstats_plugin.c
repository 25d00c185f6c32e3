/* SPDX-License-Identifier: MIT */
/*
 * The built taskstats.so loaded into a real engine (tests/harness.h) and
 * called without the walk: init/process/thread/finish/fini, the values,
 * summary counters and hint as the core holds them, querying the running
 * kernel about this process's own threads. Proves which fields are set for
 * the host's delay-accounting state, that failures leave every field
 * absent and are counted, batching versus single queries, the hints, that
 * concurrent workers each get their own socket and fini closes them all.
 *
 * Parts needing the TASKSTATS family or CAP_NET_ADMIN skip without them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/capability.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "ctprof/source-task.h"
#include "harness.h"
#include "hostprobe.h"
#include "plugins/abi_tasksrc.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/taskstats.so"
#define N_FAM	    8

static const char *const fam[N_FAM] = {"cpu",	    "blkio",	 "swapin",
				       "freepages", "thrashing", "compact",
				       "wpcopy",    "irq"};
static const char *const part[4] = {"_count", "_delay_total", "_delay_max",
				    "_delay_min"};

/* ---- Fixture ------------------------------------------------------------- */

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct hx_ctx ctx;
	void *state;
	int proc_fd;
};

/* What this host offers, found once. */
static bool have_family; /* a TASKSTATS genetlink family answers */
static bool have_cap;	 /* CAP_NET_ADMIN in our effective set */
static struct ctp_taskstats_active host;
static enum ctp_delayacct_state host_delayacct;
static enum ctp_xacct_state host_xacct;
static bool host_irq; /* the irq family is measured (below) */

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->p = hx_dlopen(PLUGIN_PATH, &fx->dl);
	fx->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!fx->p || fx->proc_fd < 0) {
		fprintf(stderr, "no descriptor or no /proc\n");
		if (fx->dl)
			dlclose(fx->dl);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	close(fx->proc_fd);
	dlclose(fx->dl);
	free(fx);
	return 0;
}

/* The plugin loaded into a fresh engine whose api table is api_size bytes
 * (0: all of it). */
static int start_api(struct fx *fx, size_t api_size, const char *root,
		     int proc_fd, const char *const *opts)
{
	int r;

	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.eng.roots.proc = root;
	fx->ctx.eng.roots.proc_fd = proc_fd;
	r = hx_ctx_load(&fx->ctx, api_size);
	fx->state = hx_state(&fx->ctx);
	return r;
}

static int start(struct fx *fx, const char *const *opts)
{
	return start_api(fx, 0, "/proc", fx->proc_fd, opts);
}

static void stop(struct fx *fx)
{
	fx->state = NULL;
	hx_ctx_done(&fx->ctx); /* the core's unload calls fini */
}

static const struct hx_cell *fcell(const struct hx_rec *rec, int f, int pt)
{
	char name[64];

	snprintf(name, sizeof(name), "taskstats.%s%s", fam[f], part[pt]);
	return hx_cell(rec, name);
}

/*
 * The worker's walk list the core would hand the thread callbacks
 * (ctp_task.walk_tids): run_thread gives a listed tid its tail, from it
 * on; an unlisted tid gets none (asked on its own). set_walk(NULL, 0)
 * clears it.
 */
static uint32_t walk[64];
static size_t walk_n;

static void set_walk(const pid_t *tids, size_t n)
{
	assert_true(n <= sizeof(walk) / sizeof(walk[0]));
	for (size_t i = 0; i < n; i++)
		walk[i] = (uint32_t)tids[i];
	walk_n = n;
}

static int run_thread(struct fx *fx, struct hx_rec *rec, pid_t tgid, pid_t tid)
{
	struct hx_task ft;

	hx_task_init(&ft, tgid, tid);
	ft.task.proc_fd = fx->proc_fd;
	for (size_t i = 0; i < walk_n; i++) {
		if (walk[i] == (uint32_t)tid) {
			ft.task.walk_tids = walk + i;
			ft.task.n_walk_tids = (uint32_t)(walk_n - i);
			break;
		}
	}
	hx_rec_init(rec, &fx->ctx, CTP_SCOPE_THREAD);
	return fx->p->thread(fx->state, &ft.task, &rec->core);
}

static int run_finish(struct fx *fx)
{
	return fx->p->finish(fx->state, NULL);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* VmHWM of this process in bytes, or 0. */
static uint64_t vmhwm(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static unsigned count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * How far taskstats' hiwater_rss may be from VmHWM. Both are
 * max(mm->hiwater_rss, file + anon + shmem pages), but xacct_add_tsk()
 * reads the three per-CPU counters approximately (get_mm_rss()) while
 * /proc/<pid>/status sums them exactly (get_mm_counter_sum(), since 6.16):
 * each counter may hold up to one percpu_counter batch, max(32, 2 * CPUs)
 * pages, unfolded on every CPU.
 */
static uint64_t rss_slack(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t batch;

	if (cpus < 1)
		cpus = 1;
	batch = (uint64_t)(2 * cpus > 32 ? 2 * cpus : 32);
	return 3 * (uint64_t)cpus * batch * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* ---- Worker threads of this process ------------------------------------ */

#define N_PARKED 3

struct parked {
	pthread_t th;
	_Atomic pid_t tid;
};

static struct parked parked[N_PARKED];
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static bool park_release;

static void *park_main(void *arg)
{
	struct parked *p = arg;
	volatile uint64_t spin = 0;

	(void)spin;
	/* Run a little first, so the thread has been on a CPU. */
	for (int i = 0; i < 1000000; i++)
		spin += (uint64_t)i;
	atomic_store(&p->tid, gettid_());
	pthread_mutex_lock(&park_lock);
	while (!park_release)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

static void park_start(void)
{
	for (int i = 0; i < N_PARKED; i++) {
		atomic_store(&parked[i].tid, 0);
		assert_int_equal(pthread_create(&parked[i].th, NULL, park_main,
						&parked[i]),
				 0);
	}
	for (int i = 0; i < N_PARKED; i++)
		while (!atomic_load(&parked[i].tid))
			usleep(1000);
}

static void park_stop(void)
{
	pthread_mutex_lock(&park_lock);
	park_release = true;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
	for (int i = 0; i < N_PARKED; i++)
		pthread_join(parked[i].th, NULL);
	park_release = false;
	/* pthread_join returns when the kernel clears the thread's tid, a
	 * little before the task is released: until then taskstats still
	 * answers for it. Wait (at most 5 s) until each tid is really gone. */
	for (int i = 0; i < N_PARKED; i++) {
		pid_t tid = atomic_load(&parked[i].tid);
		for (int ms = 0; ms < 5000; ms++) {
			if (syscall(SYS_tgkill, getpid(), tid, 0) < 0 &&
			    errno == ESRCH)
				break;
			usleep(1000);
		}
	}
}

/* ---- Checks on one thread's record -------------------------------------- */

static unsigned n_set(const struct hx_rec *rec)
{
	unsigned n = 0;

	for (int i = 0; i < HX_MAX_FIELDS; i++)
		n += rec->cells[i].set > 0;
	return n;
}

/* A successful query of a user thread: exactly what the host measures. */
static void expect_measured(const struct hx_rec *rec, uint64_t hwm_lo,
			    uint64_t hwm_hi)
{
	const struct hx_cell *rss = hx_cell(rec, "taskstats.hiwater_rss");
	const struct hx_cell *vm = hx_cell(rec, "taskstats.hiwater_vm");

	assert_int_equal(rec->bad_sets, 0);
	for (int f = 0; f < N_FAM; f++) {
		bool on = f == 0   ? host.cpu_delay
			  : f == 7 ? host_irq
				   : host.delay_block;

		for (int pt = 0; pt < 3; pt++)
			if (fcell(rec, f, pt)->set != (on ? 1 : 0))
				fail_msg("taskstats.%s%s set %d, expected %d",
					 fam[f], part[pt],
					 fcell(rec, f, pt)->set, on);
		/* min only when the family saw a window. */
		if (fcell(rec, f, 3)->set !=
		    (on && fcell(rec, f, 0)->u ? 1 : 0))
			fail_msg("taskstats.%s_delay_min set %d, count %llu",
				 fam[f], fcell(rec, f, 3)->set,
				 (unsigned long long)fcell(rec, f, 0)->u);
		if (on && fcell(rec, f, 0)->u) {
			assert_true(fcell(rec, f, 2)->u <= fcell(rec, f, 1)->u);
			assert_true(fcell(rec, f, 3)->u <= fcell(rec, f, 2)->u);
		}
	}
	if (host.cpu_delay)
		assert_true(fcell(rec, 0, 0)->u >= 1);
	assert_int_equal(rss->set, host.xacct ? 1 : 0);
	assert_int_equal(vm->set, host.xacct ? 1 : 0);
	if (host.xacct) {
		/* The same kernel counters as VmHWM, read around the query;
		 * taskstats reads them without the per-CPU deltas. */
		if (rss->u + rss_slack() < hwm_lo ||
		    rss->u > hwm_hi + rss_slack())
			fail_msg("hiwater_rss %llu, VmHWM %llu..%llu",
				 (unsigned long long)rss->u,
				 (unsigned long long)hwm_lo,
				 (unsigned long long)hwm_hi);
		assert_true(vm->u >= rss->u);
		assert_int_equal(rss->u % 1024, 0);
	}
}

static void expect_absent(const struct hx_rec *rec)
{
	assert_int_equal(rec->n_sets, 0);
	assert_int_equal(n_set(rec), 0);
}

/* ---- Tests -------------------------------------------------------------- */

static void descriptor(void **state)
{
	struct fx *fx = *state;
	const struct ctp_plugin *p = fx->p;
	char name[64];

	assert_int_equal(p->abi, CTP_ABI_MAJOR);
	assert_int_equal(p->size, sizeof(struct ctp_plugin));
	assert_string_equal(p->name, "taskstats");
	assert_int_equal(p->flags, CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE |
					   CTP_PLUGIN_SPLITTABLE |
					   CTP_PLUGIN_OPTIONS |
					   CTP_PLUGIN_NO_THREAD_DIR);
	assert_null(p->process);
	assert_int_equal(p->n_options, 3);
	assert_string_equal(p->options[0].name, "batch_size");
	assert_string_equal(p->options[1].name, "exited_buffer");
	assert_int_equal(p->options[1].type, CTP_OPT_U64);
	assert_int_equal(p->options[1].min, 1);
	assert_string_equal(p->options[2].name, "exited_source");
	assert_int_equal(p->options[2].type, CTP_OPT_STRING);
	assert_string_equal(p->options[2].def, "auto");
	assert_int_equal(p->options[1].max, 1u << 20);
	assert_string_equal(p->options[1].def, "65536");
	assert_int_equal(p->field_desc_size, sizeof(struct ctp_field_desc));
	assert_int_equal(p->n_fields, N_FAM * 4 + 2);
	for (int f = 0; f < N_FAM; f++) {
		for (int pt = 0; pt < 4; pt++) {
			const struct ctp_field_desc *d;

			snprintf(name, sizeof(name), "taskstats.%s%s", fam[f],
				 part[pt]);
			d = &p->fields[hx_table_index(p, name)];
			assert_int_equal(d->scope, CTP_SCOPE_THREAD);
			assert_int_equal(d->type, CTP_TYPE_U64);
			assert_int_equal(d->kind, pt < 2 ? CTP_KIND_COUNTER
							 : CTP_KIND_PEAK);
			assert_int_equal(d->rule,
					 pt < 2 ? CTP_RULE_SUM : CTP_RULE_MAX);
			assert_int_equal(d->unit, pt == 0 ? CTP_UNIT_COUNT
							  : CTP_UNIT_NS);
			assert_non_null(d->help);
			assert_null(strchr(d->help, '\n'));
		}
	}
	for (int i = 0; i < 2; i++) {
		const struct ctp_field_desc *d = &p->fields[hx_table_index(
			p,
			i ? "taskstats.hiwater_vm" : "taskstats.hiwater_rss")];

		assert_int_equal(d->kind, CTP_KIND_PEAK);
		assert_int_equal(d->rule, CTP_RULE_MAX);
		assert_int_equal(d->unit, CTP_UNIT_BYTES);
		assert_int_equal(d->type, CTP_TYPE_U64);
	}
	/* Nothing read from files: the data comes over netlink. */
	assert_null(p->thread_files);
	assert_null(p->process_files);
	assert_non_null(p->init);
	assert_non_null(p->fini);
	assert_non_null(p->thread);
	assert_non_null(p->finish);
	assert_null(p->host);
	assert_null(p->cgroup);
}

static void init_options(void **state)
{
	static const char *const unknown[] = {"batch_size", "8", "batchsize",
					      "8", NULL};
	static const char *const zero[] = {"batch_size", "0", NULL};
	static const char *const big[] = {"batch_size", "257", NULL};
	static const char *const word[] = {"batch_size", "many", NULL};
	static const char *const ok[] = {"batch_size", "256", "exited_buffer",
					 "1048576", NULL};
	static const char *const ring0[] = {"exited_buffer", "0", NULL};
	static const char *const ring_big[] = {"exited_buffer", "1048577",
					       NULL};
	struct fx *fx = *state;

	/* An unknown name or a value out of range is the core's loader to
	 * refuse, before init (declared options). */
	assert_int_equal(start(fx, unknown), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "'batchsize'"));
	stop(fx);
	assert_int_equal(start(fx, zero), -EINVAL);
	stop(fx);
	assert_int_equal(start(fx, big), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "batch_size"));
	stop(fx);
	assert_int_equal(start(fx, word), -EINVAL);
	stop(fx);
	assert_int_equal(start(fx, ring0), -EINVAL);
	stop(fx);
	assert_int_equal(start(fx, ring_big), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "exited_buffer"));
	stop(fx);
	assert_int_equal(start(fx, ok), 0);
	assert_non_null(fx->state);
	assert_int_equal(hx_info(&fx->ctx)->n_summary, 10);
	assert_int_equal(hx_summary(&fx->ctx, "ok"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "eperm"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "esrch"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "other"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "skipped"), 0);
	stop(fx);

	/* An older core without roots(). */
	assert_int_equal(start_api(fx, offsetof(struct ctp_api, roots), "/proc",
				   fx->proc_fd, NULL),
			 -ENOTSUP);
	stop(fx);
}

/* A fixture tree is not the live /proc: never queried, hint says so. */
static void foreign_root(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	char dir[] = "/tmp/ctprof-tsroot.XXXXXX";
	int fd;

	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(start_api(fx, 0, dir, fd, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	expect_absent(&rec);
	assert_int_equal(hx_summary(&fx->ctx, "skipped"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "ok"), 0);
	assert_int_equal(run_finish(fx), 0);
	assert_true(hx_hint_set(&fx->ctx));
	assert_non_null(strstr(hx_hint(&fx->ctx), "not this kernel's /proc"));
	stop(fx);
	close(fd);
	rmdir(dir);

	/* No proc root at all. */
	assert_int_equal(start_api(fx, 0, NULL, -1, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	expect_absent(&rec);
	assert_int_equal(hx_summary(&fx->ctx, "skipped"), 1);
	stop(fx);
}

/* Query this process's threads: batched (default) and one by one. */
static void own_threads(void **state)
{
	static const char *const single_opt[] = {"batch_size", "1", NULL};
	static const char *const small_opt[] = {"batch_size", "2", NULL};
	const char *const *opts[] = {NULL, single_opt, small_opt};
	struct fx *fx = *state;
	struct hx_rec rec;
	pid_t tids[N_PARKED + 1];

	if (!have_family || !have_cap)
		skip();
	park_start();
	tids[0] = gettid_();
	for (int i = 0; i < N_PARKED; i++)
		tids[i + 1] = atomic_load(&parked[i].tid);

	for (size_t o = 0; o < 3; o++) {
		struct hx_rec recs[N_PARKED + 1];
		uint64_t lo, hi;

		assert_int_equal(start(fx, opts[o]), 0);
		/* hiwater only grows: it lies within VmHWM before and after. */
		lo = vmhwm();
		set_walk(tids, N_PARKED + 1);
		for (int i = 0; i <= N_PARKED; i++)
			assert_int_equal(
				run_thread(fx, &recs[i], getpid(), tids[i]), 0);
		hi = vmhwm();
		for (int i = 0; i <= N_PARKED; i++) {
			expect_measured(&recs[i], lo, hi);
			/* One mm, one batch: every thread reports the same
			 * marks. */
			if (o != 0 || !host.xacct)
				continue;
			assert_int_equal(
				hx_cell(&recs[i], "taskstats.hiwater_rss")->u,
				hx_cell(&recs[0], "taskstats.hiwater_rss")->u);
			assert_int_equal(
				hx_cell(&recs[i], "taskstats.hiwater_vm")->u,
				hx_cell(&recs[0], "taskstats.hiwater_vm")->u);
		}
		assert_int_equal(hx_summary(&fx->ctx, "ok"), N_PARKED + 1);
		assert_int_equal(hx_summary(&fx->ctx, "eperm") +
					 hx_summary(&fx->ctx, "esrch") +
					 hx_summary(&fx->ctx, "other") +
					 hx_summary(&fx->ctx, "skipped"),
				 0);
		if (o == 1) {
			assert_int_equal(hx_summary(&fx->ctx, "single"),
					 N_PARKED + 1);
			assert_int_equal(hx_summary(&fx->ctx, "batched"), 0);
		} else {
			assert_int_equal(hx_summary(&fx->ctx, "batched"),
					 N_PARKED + 1);
			assert_int_equal(hx_summary(&fx->ctx, "single"), 0);
		}
		assert_int_equal(run_finish(fx), 0);
		assert_int_equal(fx->ctx.n_hint, 1);
		if (host_delayacct == CTP_DELAYACCT_RUNTIME_OFF) {
			assert_true(hx_hint_set(&fx->ctx));
			assert_non_null(strstr(hx_hint(&fx->ctx),
					       "kernel.task_delayacct=1"));
		} else if (host_delayacct == CTP_DELAYACCT_ON && !host_irq) {
			assert_true(hx_hint_set(&fx->ctx));
			assert_non_null(strstr(hx_hint(&fx->ctx),
					       "CONFIG_IRQ_TIME_ACCOUNTING"));
		} else if (host_delayacct == CTP_DELAYACCT_ON &&
			   host_xacct != CTP_XACCT_OFF) {
			assert_false(hx_hint_set(&fx->ctx));
		}
		stop(fx);
	}

	/* A thread the walk list does not have is asked on its own. */
	assert_int_equal(start(fx, NULL), 0);
	park_stop();
	set_walk(tids, 1);
	park_start();
	assert_int_equal(
		run_thread(fx, &rec, getpid(), atomic_load(&parked[0].tid)), 0);
	expect_measured(&rec, vmhwm(), vmhwm());
	assert_int_equal(hx_summary(&fx->ctx, "single"), 1);
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	assert_int_equal(hx_summary(&fx->ctx, "batched"), 1);
	stop(fx);
	park_stop();
	set_walk(NULL, 0);
}

/* The thread callback on this thread with the source "task" offering
 * src. */
static int run_with_task_src(struct fx *fx, struct hx_rec *rec,
			     const struct ctp_src_task *src)
{
	struct hx_task ft;

	hx_task_init(&ft, getpid(), gettid_());
	ft.task.proc_fd = fx->proc_fd;
	ft.src_name = CTP_SOURCE_TASK;
	ft.src_data = src;
	ft.src_len = sizeof(*src);
	hx_rec_init(rec, &fx->ctx, CTP_SCOPE_THREAD);
	return fx->p->thread(fx->state, &ft.task, &rec->core);
}

/*
 * The source "task" first: a thread it covers whole is not queried (no
 * reply counted); one it covers in part is queried, and the reply gives
 * only what the source lacks. The watermarks from the reply are whole
 * KiB, the source's here are not, so each tells where it came from.
 */
static void task_source(void **state)
{
	static const unsigned gaps[] = {
		CTP_SRC_TASK_DELAY(0, 1), /* cpu_delay_total */
		CTP_SRC_TASK_HIWATER_VM};
	struct fx *fx = *state;
	struct hx_rec rec;
	struct ctp_src_task src;
	pid_t tid = gettid_();

	if (!have_family || !have_cap)
		skip();
	/* With nothing measured here every thread is queried anyway. */
	if (!host.cpu_delay || !host.xacct)
		skip();
	assert_int_equal(start(fx, NULL), 0);
	abi_tasksrc_make(&src, tid, NULL, 0);
	assert_int_equal(run_with_task_src(fx, &rec, &src), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(fcell(&rec, 0, 0)->u,
			 abi_tasksrc_value(tid, CTP_SRC_TASK_DELAY(0, 0)));
	assert_int_equal(fcell(&rec, 0, 1)->u,
			 abi_tasksrc_value(tid, CTP_SRC_TASK_DELAY(0, 1)));
	assert_int_equal(hx_cell(&rec, "taskstats.hiwater_rss")->u,
			 abi_tasksrc_value(tid, CTP_SRC_TASK_HIWATER_RSS));
	assert_int_equal(hx_summary(&fx->ctx, "from_task"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "ok") +
				 hx_summary(&fx->ctx, "batched") +
				 hx_summary(&fx->ctx, "single"),
			 0);

	abi_tasksrc_make(&src, tid, gaps, sizeof(gaps) / sizeof(gaps[0]));
	assert_int_equal(run_with_task_src(fx, &rec, &src), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_int_equal(hx_summary(&fx->ctx, "ok"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "from_task_partial"), 1);
	assert_int_equal(fcell(&rec, 0, 0)->u,
			 abi_tasksrc_value(tid, CTP_SRC_TASK_DELAY(0, 0)));
	assert_int_equal(hx_cell(&rec, "taskstats.hiwater_rss")->u,
			 abi_tasksrc_value(tid, CTP_SRC_TASK_HIWATER_RSS));
	/* The reply's: KiB times 1024. */
	assert_int_equal(hx_cell(&rec, "taskstats.hiwater_vm")->set, 1);
	assert_int_equal(hx_cell(&rec, "taskstats.hiwater_vm")->u % 1024, 0);
	assert_int_equal(fcell(&rec, 0, 1)->set, 1);
	assert_int_not_equal(fcell(&rec, 0, 1)->u,
			     abi_tasksrc_value(tid, CTP_SRC_TASK_DELAY(0, 1)));
	stop(fx);
}

static int pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Threads that are gone: ESRCH, batched or not, all fields absent. */
static void gone_threads(void **state)
{
	struct fx *fx = *state;
	struct hx_rec rec;
	pid_t dead;

	if (!have_family || !have_cap)
		skip();
	/* A tid that cannot exist. */
	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), pid_max()), 0);
	expect_absent(&rec);
	assert_int_equal(hx_summary(&fx->ctx, "esrch"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "single"), 1);

	/* In the walk list, exited before its thread's turn: the batch's
	 * ESRCH answer for it. */
	park_start();
	{
		pid_t list[2] = {gettid_(), 0};

		dead = list[1] = atomic_load(&parked[N_PARKED - 1].tid);
		set_walk(list, 2);
	}
	park_stop();
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_true(n_set(&rec) > 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), dead), 0);
	expect_absent(&rec);
	assert_int_equal(hx_summary(&fx->ctx, "esrch"), 2);
	assert_int_equal(hx_summary(&fx->ctx, "ok"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "batched"), 2);
	/* Two of three failed with ESRCH: the dominant failure. */
	assert_int_equal(run_finish(fx), 0);
	assert_true(hx_hint_set(&fx->ctx));
	assert_non_null(strstr(hx_hint(&fx->ctx),
			       "2 of 3 taskstats queries failed "
			       "with ESRCH"));
	/* Two of five: churn, not worth a hint of its own (what remains is
	 * the host's state, as in own_threads). */
	for (int i = 0; i < 2; i++)
		assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	assert_int_equal(hx_summary(&fx->ctx, "ok"), 3);
	assert_int_equal(run_finish(fx), 0);
	assert_int_equal(fx->ctx.n_hint, 2);
	assert_true(!hx_hint_set(&fx->ctx) ||
		    !strstr(hx_hint(&fx->ctx), "ESRCH"));
	stop(fx);
	set_walk(NULL, 0);
}

/* Drop CAP_NET_ADMIN from this thread's effective set. */
static int drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	data[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

/* The checks of eperm(), as a child's exit code (0: all held). */
static int eperm_child(struct fx *fx)
{
	struct hx_rec rec;
	int bad = 0;

	if (drop_net_admin() < 0)
		return 77;
	if (start(fx, NULL) != 0)
		return 2;
	{
		pid_t me = gettid_();

		set_walk(&me, 1);
	}
	for (int i = 0; i < 3; i++) {
		pid_t tid = i == 2 ? pid_max() : gettid_();

		bad |= run_thread(fx, &rec, getpid(), tid) != 0;
		bad |= rec.n_sets != 0;
	}
	bad |= run_finish(fx) != 0;
	if (hx_summary(&fx->ctx, "eperm") != 3 ||
	    hx_summary(&fx->ctx, "ok") != 0) {
		fprintf(stderr, "eperm %llu ok %llu\n",
			(unsigned long long)hx_summary(&fx->ctx, "eperm"),
			(unsigned long long)hx_summary(&fx->ctx, "ok"));
		bad = 1;
	}
	if (!hx_hint_set(&fx->ctx) || !strstr(hx_hint(&fx->ctx), "EPERM") ||
	    !strstr(hx_hint(&fx->ctx), "CAP_NET_ADMIN") ||
	    !strstr(hx_hint(&fx->ctx), "3 of 3")) {
		fprintf(stderr, "hint: '%s'\n", hx_hint(&fx->ctx));
		bad = 1;
	}
	stop(fx);
	return bad ? 1 : 0;
}

/* Without CAP_NET_ADMIN: every query EPERM, nothing set, the hint. */
static void eperm(void **state)
{
	struct fx *fx = *state;
	int status;
	pid_t pid;

	if (!have_family)
		skip();
	if (!have_cap) {
		/* We are the unprivileged case already. */
		assert_int_equal(eperm_child(fx), 0);
		return;
	}
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(eperm_child(fx));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A core without set_hint: finish still works. */
static void old_core_without_hint(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(start_api(fx, offsetof(struct ctp_api, set_hint),
				   "/proc", fx->proc_fd, NULL),
			 0);
	assert_int_equal(run_finish(fx), 0);
	assert_int_equal(fx->ctx.n_hint, 0);
	stop(fx);
}

/* ---- CONFIG_IRQ_TIME_ACCOUNTING gate --------------------------------------
 *
 * The kernel charges irq delay only when built with that option. A child
 * in a mount namespace of its own bind-mounts a config.gz and a
 * task_delayacct of the test's choosing over the live /proc's, so the
 * plugin still queries this kernel but reads the host state given here.
 */

struct irq_case {
	const char *name;
	const char *config;   /* kconfig text, gzipped into config.gz */
	const char *sysctl;   /* task_delayacct */
	bool irq;	      /* irq family set */
	bool blk;	      /* blkio family set */
	unsigned n_terms;     /* offcpu_delay_total's inputs */
	const char *hint;     /* in the hint; NULL: no hint */
	const char *not_hint; /* never in the hint */
};

static const struct irq_case irq_cases[] = {
	{"not set",
	 "CONFIG_TASKSTATS=y\nCONFIG_TASK_XACCT=y\n"
	 "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n",
	 "1\n", false, true, 7,
	 "irq delays absent: the kernel lacks "
	 "CONFIG_IRQ_TIME_ACCOUNTING",
	 "XACCT"},
	{"set",
	 "CONFIG_TASKSTATS=y\nCONFIG_TASK_XACCT=y\n"
	 "CONFIG_IRQ_TIME_ACCOUNTING=y\n",
	 "1\n", true, true, 8, NULL, NULL},
	/* A full config without the symbol: the kernel cannot have it. */
	{"absent", "CONFIG_TASKSTATS=y\nCONFIG_TASK_XACCT=y\n", "1\n", false,
	 true, 7, "CONFIG_IRQ_TIME_ACCOUNTING", NULL},
	/* Text that proves nothing: taken as on, as for CONFIG_TASK_XACCT. */
	{"unknown", "CONFIG_FOO=y\n", "1\n", true, true, 8, NULL, NULL},
	{"both off",
	 "CONFIG_TASKSTATS=y\n# CONFIG_TASK_XACCT is not set\n"
	 "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n",
	 "1\n", false, true, 7,
	 "CONFIG_IRQ_TIME_ACCOUNTING; hiwater_rss/"
	 "hiwater_vm absent: the kernel lacks "
	 "CONFIG_TASK_XACCT",
	 NULL},
	/* Runtime-off: the sysctl alone would not bring irq back. */
	{"runtime off",
	 "CONFIG_TASKSTATS=y\nCONFIG_TASK_XACCT=y\n"
	 "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n",
	 "0\n", false, false, 7,
	 "kernel.task_delayacct=1 (or boot with "
	 "delayacct) to measure them; irq delays also "
	 "need CONFIG_IRQ_TIME_ACCOUNTING",
	 "and irq "},
	{"runtime off, set",
	 "CONFIG_TASKSTATS=y\nCONFIG_IRQ_TIME_ACCOUNTING=y\n", "0\n", false,
	 false, 8, "wpcopy and irq delays absent: sysctl", "CONFIG_IRQ"},
};

static int put_text(const char *path, const char *text, bool gz)
{
	size_t len = strlen(text);

	if (gz) {
		gzFile g = gzopen(path, "wb");

		if (!g)
			return -1;
		if (gzwrite(g, text, (unsigned)len) != (int)len) {
			gzclose(g);
			return -1;
		}
		return gzclose(g) == Z_OK ? 0 : -1;
	}
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

#define IRQ_CHECK(cond, ...)                                                   \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s: ", c->name);                      \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			bad = 1;                                               \
		}                                                              \
	} while (0)

/* In a child: mount the case over /proc and check what the plugin sets. */
static int irq_child(struct fx *fx, const struct irq_case *c, const char *dir)
{
	char cfg[512], sysctl[512];
	struct hx_rec rec;
	const struct ctp_field *d;
	int proc_fd, bad = 0;
	bool irq_term = false;

	snprintf(cfg, sizeof(cfg), "%s/config.gz", dir);
	snprintf(sysctl, sizeof(sysctl), "%s/task_delayacct", dir);
	if (put_text(cfg, c->config, true) < 0 ||
	    put_text(sysctl, c->sysctl, false) < 0)
		return 2;
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(cfg, "/proc/config.gz", NULL, MS_BIND, NULL) < 0 ||
	    mount(sysctl, "/proc/sys/kernel/task_delayacct", NULL, MS_BIND,
		  NULL) < 0) {
		fprintf(stderr, "NOTE: cannot bind over /proc: %s\n",
			strerror(errno));
		return 77;
	}
	/* Opened after the mounts: this namespace's view. */
	proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0 || start_api(fx, 0, "/proc", proc_fd, NULL))
		return 2;
	fx->proc_fd = proc_fd;
	IRQ_CHECK(run_thread(fx, &rec, getpid(), gettid_()) == 0, "thread");
	IRQ_CHECK(hx_summary(&fx->ctx, "ok") == 1, "not queried");
	IRQ_CHECK(rec.bad_sets == 0, "bad sets");
	for (int pt = 0; pt < 3; pt++) {
		IRQ_CHECK(fcell(&rec, 7, pt)->set == (c->irq ? 1 : 0),
			  "taskstats.irq%s set %d", part[pt],
			  fcell(&rec, 7, pt)->set);
		IRQ_CHECK(fcell(&rec, 1, pt)->set == (c->blk ? 1 : 0),
			  "taskstats.blkio%s set %d", part[pt],
			  fcell(&rec, 1, pt)->set);
		IRQ_CHECK(fcell(&rec, 0, pt)->set == 1, "taskstats.cpu%s unset",
			  part[pt]);
	}
	/* The derived field as the core's registry holds it. */
	IRQ_CHECK(hx_n_derived(&fx->ctx) == 1, "%u derived",
		  hx_n_derived(&fx->ctx));
	if (hx_n_derived(&fx->ctx) != 1)
		return 1;
	d = hx_derived(&fx->ctx, 0);
	for (uint32_t t = 0; t < d->n_terms; t++)
		irq_term |=
			!strcmp(hx_field_at(&fx->ctx, d->terms[t].input)->name,
				"taskstats.irq_delay_total");
	IRQ_CHECK(d->n_terms == c->n_terms, "%u terms", d->n_terms);
	IRQ_CHECK(irq_term == (c->n_terms == 8), "irq term %d", irq_term);
	IRQ_CHECK((c->n_terms == 8) ==
			  !strstr(d->help, "CONFIG_IRQ_TIME_ACCOUNTING"),
		  "help '%s'", d->help);
	IRQ_CHECK(run_finish(fx) == 0, "finish");
	IRQ_CHECK(hx_hint_set(&fx->ctx) == (c->hint != NULL), "hint '%s'",
		  hx_hint(&fx->ctx));
	if (c->hint)
		IRQ_CHECK(strstr(hx_hint(&fx->ctx), c->hint) != NULL,
			  "hint '%s' lacks '%s'", hx_hint(&fx->ctx), c->hint);
	if (c->not_hint)
		IRQ_CHECK(!strstr(hx_hint(&fx->ctx), c->not_hint),
			  "hint '%s' has '%s'", hx_hint(&fx->ctx), c->not_hint);
	stop(fx);
	return bad;
}

static void irq_gate(void **state)
{
	struct fx *fx = *state;
	char dir[] = "/tmp/ctprof-tsirq.XXXXXX";
	bool skipped = false;

	if (!have_family || !have_cap)
		skip();
	if (access("/proc/config.gz", F_OK) < 0 ||
	    access("/proc/sys/kernel/task_delayacct", F_OK) < 0) {
		print_message("SKIP: no /proc/config.gz or task_delayacct to "
			      "mount over\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(irq_cases) / sizeof(irq_cases[0]); i++) {
		int st;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(irq_child(fx, &irq_cases[i], dir));
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) == 77) {
			skipped = true;
			break;
		}
		if (WEXITSTATUS(st) != 0)
			fail_msg("case '%s' failed (%d)", irq_cases[i].name,
				 WEXITSTATUS(st));
	}
	{
		char p[600];

		snprintf(p, sizeof(p), "%s/config.gz", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/task_delayacct", dir);
		unlink(p);
		rmdir(dir);
	}
	if (skipped)
		skip();
}

struct worker {
	struct fx *fx;
	uint32_t tids[N_PARKED + 1];
	int failures;
	/* Every worker is alive until all have walked: a thread that ended
	 * leaves its socket to the next that asks. */
	pthread_barrier_t *all;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hx_rec *rec = malloc(sizeof(*rec));

	if (!rec) {
		w->failures++;
		return NULL;
	}
	for (int round = 0; round < 50; round++) {
		struct ctp_task task = {
			.abi = CTP_ABI_MAJOR,
			.size = sizeof(task),
			.tgid = getpid(),
			.tid = getpid(),
			.dirfd = -1,
			.proc_fd = w->fx->proc_fd,
			.pcomm = "t",
			.comm = "t",
			.cgroup = "",
		};

		for (int i = 0; i <= N_PARKED; i++) {
			/* Each worker walks its own list, as the core's do. */
			task.tid = (int32_t)w->tids[i];
			task.walk_tids = w->tids + i;
			task.n_walk_tids = (uint32_t)(N_PARKED + 1 - i);
			hx_rec_init(rec, &w->fx->ctx, CTP_SCOPE_THREAD);
			if (w->fx->p->thread(w->fx->state, &task, &rec->core) !=
				    0 ||
			    rec->bad_sets ||
			    (host.cpu_delay && !rec->cells[0].set) ||
			    (host.xacct && !rec->cells[N_FAM * 4].set))
				w->failures++;
		}
	}
	free(rec);
	pthread_barrier_wait(w->all);
	return NULL;
}

/* MT_SAFE: concurrent workers, a socket each, all closed by fini; four
 * more threads after them, one after another, reuse those sockets. */
static void concurrent_workers(void **state)
{
	struct fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	pthread_barrier_t all, one;
	unsigned fds_before, fds_during;

	if (!have_family || !have_cap)
		skip();
	park_start();
	fds_before = count_fds();
	assert_int_equal(start(fx, NULL), 0);
	pthread_barrier_init(&all, NULL, 4);
	pthread_barrier_init(&one, NULL, 1);
	for (int i = 0; i < 4; i++) {
		w[i].fx = fx;
		w[i].failures = 0;
		w[i].all = &all;
		w[i].tids[0] = (uint32_t)gettid_();
		for (int k = 0; k < N_PARKED; k++)
			w[i].tids[k + 1] =
				(uint32_t)atomic_load(&parked[k].tid);
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	fds_during = count_fds();
	assert_int_equal(fds_during, fds_before + 4);
	for (int i = 0; i < 4; i++) {
		w[0].all = &one;
		assert_int_equal(
			pthread_create(&t[0], NULL, worker_main, &w[0]), 0);
		assert_int_equal(pthread_join(t[0], NULL), 0);
		assert_int_equal(w[0].failures, 0);
	}
	assert_int_equal(count_fds(), fds_during);
	pthread_barrier_destroy(&all);
	pthread_barrier_destroy(&one);
	assert_int_equal(hx_summary(&fx->ctx, "ok"), 8 * 50 * (N_PARKED + 1));
	assert_int_equal(hx_summary(&fx->ctx, "batched"),
			 8 * 50 * (N_PARKED + 1));
	stop(fx);
	assert_int_equal(count_fds(), fds_before);
	park_stop();
}

/* ---- Host discovery ----------------------------------------------------- */

static bool cap_net_admin(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long eff = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> CAP_NET_ADMIN) & 1;
}

/* Does the plugin find the family? A throwaway init tells. */
static bool family_present(void)
{
	struct fx fx;
	struct hx_rec rec;
	bool found;

	memset(&fx, 0, sizeof(fx));
	fx.dl = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	fx.p = fx.dl ? dlsym(fx.dl, CTP_PLUGIN_SYMBOL) : NULL;
	fx.proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!fx.p || fx.proc_fd < 0 || start(&fx, NULL) != 0) {
		if (fx.proc_fd >= 0)
			close(fx.proc_fd);
		if (fx.dl)
			dlclose(fx.dl);
		return false;
	}
	run_thread(&fx, &rec, getpid(), gettid_());
	found = hx_summary(&fx.ctx, "skipped") == 0;
	if (!found)
		printf("NOTE: %s\n", fx.ctx.last_log);
	stop(&fx);
	close(fx.proc_fd);
	dlclose(fx.dl);
	return found;
}

/* The host's config says the kernel has no CONFIG_IRQ_TIME_ACCOUNTING:
 * "is not set", or a config of a taskstats kernel without the symbol. */
static bool kconfig_lacks_irqtime(int proc_fd)
{
	char *text;
	size_t len;
	bool lacks = false;

	if (ctp_read_kconfig(proc_fd, &text, &len) < 0)
		return false;
	switch (ctp_kconfig_lookup(text, len, "CONFIG_IRQ_TIME_ACCOUNTING",
				   NULL, NULL)) {
	case CTP_KCONFIG_NOT_SET:
		lacks = true;
		break;
	case CTP_KCONFIG_ABSENT:
		lacks = ctp_kconfig_lookup(text, len, "CONFIG_TASKSTATS", NULL,
					   NULL) != CTP_KCONFIG_ABSENT;
		break;
	default:
		break;
	}
	free(text);
	return lacks;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(foreign_root),
		cmocka_unit_test(own_threads),
		cmocka_unit_test(task_source),
		cmocka_unit_test(gone_threads),
		cmocka_unit_test(eperm),
		cmocka_unit_test(old_core_without_hint),
		cmocka_unit_test(irq_gate),
		cmocka_unit_test(concurrent_workers),
	};
	int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (proc_fd < 0) {
		printf("SKIP: no /proc\n");
		return 77;
	}
	ctp_probe_delayacct(proc_fd, &host_delayacct);
	ctp_probe_xacct(proc_fd, &host_xacct);
	host = ctp_taskstats_active(host_delayacct, host_xacct);
	host_irq = host.delay_block && !kconfig_lacks_irqtime(proc_fd);
	close(proc_fd);
	have_cap = cap_net_admin();
	have_family = family_present();
	printf("NOTE: TASKSTATS family %s, CAP_NET_ADMIN %s, delay accounting "
	       "%s, CONFIG_TASK_XACCT %s, irq family %s\n",
	       have_family ? "found" : "missing", have_cap ? "yes" : "no",
	       ctp_delayacct_state_name(host_delayacct),
	       ctp_xacct_state_name(host_xacct),
	       host_irq ? "measured" : "not measured");
	return cmocka_run_group_tests(tests, setup, teardown);
}
