/* SPDX-License-Identifier: MIT */
/*
 * The built taskstats.so driven without the engine: dlopen it and run
 * init/process/thread/finish/fini against a fake struct ctp_api that
 * records every value, summary counter and hint, querying the running
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/plugin.h"
#include "hostprobe.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/taskstats.so"
#define HANDLE_BASE 100
#define MAX_FIELDS  40
#define MAX_SUMMARY 16
#define N_FAM	    8

static const char *const fam[N_FAM] = {"cpu",	    "blkio",	 "swapin",
				       "freepages", "thrashing", "compact",
				       "wpcopy",    "irq"};
static const char *const part[4] = {"_count", "_delay_total", "_delay_max",
				    "_delay_min"};

/* ---- The fake core ------------------------------------------------------ */

struct ctp_ctx {
	const struct ctp_plugin *desc;
	const char *const *opts;
	struct ctp_roots roots;
	unsigned n_summary;
	const char *summary_name[MAX_SUMMARY];
	uint64_t summary[MAX_SUMMARY];
	pthread_mutex_t lock;
	unsigned n_log;
	char last_log[512];
	unsigned n_hint;
	bool hint_set;
	char hint[512];
};

struct cell {
	int set;
	uint64_t u;
};

struct ctp_record {
	const struct ctp_plugin *desc;
	unsigned bad_sets, n_sets;
	struct cell cells[MAX_FIELDS];
};

static void fake_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	va_list ap;

	(void)level;
	pthread_mutex_lock(&ctx->lock);
	va_start(ap, fmt);
	vsnprintf(ctx->last_log, sizeof(ctx->last_log), fmt, ap);
	va_end(ap);
	ctx->n_log++;
	pthread_mutex_unlock(&ctx->lock);
}

static const char *find_opt(struct ctp_ctx *ctx, const char *key)
{
	for (size_t i = 0; ctx->opts && ctx->opts[i]; i += 2)
		if (strcmp(ctx->opts[i], key) == 0)
			return ctx->opts[i + 1];
	return NULL;
}

static int fake_opt_str(struct ctp_ctx *ctx, const char *key, const char **out)
{
	const char *v = find_opt(ctx, key);

	if (!v)
		return -ENOENT;
	*out = v;
	return 0;
}

static int fake_opt_u64(struct ctp_ctx *ctx, const char *key, uint64_t *out)
{
	const char *v = find_opt(ctx, key);
	char *end;

	if (!v)
		return -ENOENT;
	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(v, &end, 0);
	return *end || errno ? -EINVAL : 0;
}

static int fake_opt_i64(struct ctp_ctx *ctx, const char *key, int64_t *out)
{
	(void)ctx, (void)key, (void)out;
	return -EINVAL;
}

static int fake_opt_bool(struct ctp_ctx *ctx, const char *key, int *out)
{
	(void)ctx, (void)key, (void)out;
	return -EINVAL;
}

static const char *fake_opt_key(struct ctp_ctx *ctx, size_t i)
{
	for (size_t j = 0; ctx->opts && ctx->opts[j]; j += 2)
		if (j / 2 == i)
			return ctx->opts[j];
	return NULL;
}

static int fake_field_register(struct ctp_ctx *ctx,
			       const struct ctp_field_desc *d)
{
	(void)ctx, (void)d;
	return -EINVAL;
}

static int fake_field_handle(struct ctp_ctx *ctx, size_t i)
{
	if (i >= ctx->desc->n_fields)
		return -EINVAL;
	return HANDLE_BASE + (int)i;
}

static int fake_set_u64(struct ctp_record *rec, int h, uint64_t v)
{
	int i = h - HANDLE_BASE;

	rec->n_sets++;
	if (i < 0 || (uint32_t)i >= rec->desc->n_fields ||
	    rec->desc->fields[i].type != CTP_TYPE_U64 ||
	    rec->desc->fields[i].scope != CTP_SCOPE_THREAD) {
		rec->bad_sets++;
		return -EINVAL;
	}
	rec->cells[i].set++;
	rec->cells[i].u = v;
	return 0;
}

static int fake_set_i64(struct ctp_record *rec, int h, int64_t v)
{
	(void)h, (void)v;
	rec->n_sets++;
	rec->bad_sets++;
	return -EINVAL;
}

static int fake_set_bool(struct ctp_record *rec, int h, int v)
{
	return fake_set_i64(rec, h, v);
}

static int fake_set_char(struct ctp_record *rec, int h, char v)
{
	return fake_set_i64(rec, h, v);
}

static int fake_set_str(struct ctp_record *rec, int h, const char *s,
			size_t len)
{
	(void)s, (void)len;
	return fake_set_i64(rec, h, 0);
}

static int fake_set_cpuset(struct ctp_record *rec, int h, const uint64_t *w,
			   size_t n)
{
	(void)w, (void)n;
	return fake_set_i64(rec, h, 0);
}

static int fake_summary_register(struct ctp_ctx *ctx, const char *name)
{
	if (ctx->n_summary == MAX_SUMMARY)
		return -ENOSPC;
	ctx->summary_name[ctx->n_summary] = name;
	return (int)ctx->n_summary++;
}

static void fake_summary_add(struct ctp_ctx *ctx, int counter, uint64_t d)
{
	pthread_mutex_lock(&ctx->lock);
	if (counter >= 0 && (unsigned)counter < ctx->n_summary)
		ctx->summary[counter] += d;
	pthread_mutex_unlock(&ctx->lock);
}

static const struct ctp_roots *fake_roots(struct ctp_ctx *ctx)
{
	return &ctx->roots;
}

static int fake_file_get(const struct ctp_task *task, uint32_t i,
			 const struct ctp_file **out)
{
	(void)task, (void)i, (void)out;
	return -EINVAL;
}

static void fake_set_hint(struct ctp_ctx *ctx, const char *text)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->n_hint++;
	ctx->hint_set = text != NULL;
	snprintf(ctx->hint, sizeof(ctx->hint), "%s", text ? text : "");
	pthread_mutex_unlock(&ctx->lock);
}

static const struct ctp_api api = {
	.abi = CTP_ABI_MAJOR,
	.size = sizeof(struct ctp_api),
	.log = fake_log,
	.opt_str = fake_opt_str,
	.opt_u64 = fake_opt_u64,
	.opt_i64 = fake_opt_i64,
	.opt_bool = fake_opt_bool,
	.opt_key = fake_opt_key,
	.field_register = fake_field_register,
	.field_handle = fake_field_handle,
	.set_u64 = fake_set_u64,
	.set_i64 = fake_set_i64,
	.set_bool = fake_set_bool,
	.set_char = fake_set_char,
	.set_str = fake_set_str,
	.set_cpuset = fake_set_cpuset,
	.summary_register = fake_summary_register,
	.summary_add = fake_summary_add,
	.roots = fake_roots,
	.file_get = fake_file_get,
	.set_hint = fake_set_hint,
};

/* ---- Fixture ------------------------------------------------------------- */

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct ctp_ctx ctx;
	void *state;
	int proc_fd;
};

/* What this host offers, found once. */
static bool have_family; /* a TASKSTATS genetlink family answers */
static bool have_cap;	 /* CAP_NET_ADMIN in our effective set */
static struct ctp_taskstats_active host;
static enum ctp_delayacct_state host_delayacct;
static enum ctp_xacct_state host_xacct;

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->dl = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!fx->dl) {
		fprintf(stderr, "dlopen %s: %s\n", PLUGIN_PATH, dlerror());
		free(fx);
		return -1;
	}
	fx->p = dlsym(fx->dl, CTP_PLUGIN_SYMBOL);
	fx->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!fx->p || fx->proc_fd < 0) {
		fprintf(stderr, "no descriptor or no /proc\n");
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

static void ctx_reset(struct fx *fx, const char *root, int proc_fd,
		      const char *const *opts)
{
	memset(&fx->ctx, 0, sizeof(fx->ctx));
	pthread_mutex_init(&fx->ctx.lock, NULL);
	fx->ctx.desc = fx->p;
	fx->ctx.opts = opts;
	fx->ctx.roots.abi = CTP_ABI_MAJOR;
	fx->ctx.roots.size = sizeof(fx->ctx.roots);
	fx->ctx.roots.proc = root;
	fx->ctx.roots.sys = "/sys";
	fx->ctx.roots.proc_fd = proc_fd;
	fx->ctx.roots.sys_fd = fx->ctx.roots.cgroup_fd = -1;
	fx->state = NULL;
}

static int start_api(struct fx *fx, const struct ctp_api *a, const char *root,
		     int proc_fd, const char *const *opts)
{
	ctx_reset(fx, root, proc_fd, opts);
	return fx->p->init(&fx->ctx, a, &fx->state);
}

static int start(struct fx *fx, const char *const *opts)
{
	return start_api(fx, &api, "/proc", fx->proc_fd, opts);
}

static void stop(struct fx *fx)
{
	if (fx->state)
		fx->p->fini(fx->state);
	fx->state = NULL;
	pthread_mutex_destroy(&fx->ctx.lock);
}

static int field_index(const struct ctp_plugin *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_fields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return (int)i;
	fail_msg("no field %s", name);
	return -1;
}

static const struct cell *cell(const struct fx *fx,
			       const struct ctp_record *rec, const char *name)
{
	return &rec->cells[field_index(fx->p, name)];
}

static const struct cell *fcell(const struct fx *fx,
				const struct ctp_record *rec, int f, int pt)
{
	char name[64];

	snprintf(name, sizeof(name), "taskstats.%s%s", fam[f], part[pt]);
	return cell(fx, rec, name);
}

static uint64_t summary(const struct fx *fx, const char *name)
{
	for (unsigned i = 0; i < fx->ctx.n_summary; i++)
		if (strcmp(fx->ctx.summary_name[i], name) == 0)
			return fx->ctx.summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

static void rec_init(struct ctp_record *rec, const struct fx *fx)
{
	memset(rec, 0, sizeof(*rec));
	rec->desc = fx->p;
}

/* The process callback for tgid with its /proc directory. */
static int run_process(struct fx *fx, pid_t tgid, int dirfd)
{
	struct ctp_record rec;
	struct ctp_task task = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(task),
		.tgid = tgid,
		.tid = tgid,
		.dirfd = dirfd,
		.proc_fd = fx->proc_fd,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
	};

	rec_init(&rec, fx);
	rec.n_sets = 0;
	assert_int_equal(fx->p->process(fx->state, &task, &rec), 0);
	assert_int_equal(rec.n_sets, 0);
	return 0;
}

static int run_thread(struct fx *fx, struct ctp_record *rec, pid_t tgid,
		      pid_t tid)
{
	struct ctp_task task = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(task),
		.tgid = tgid,
		.tid = tid,
		.dirfd = -1,
		.proc_fd = fx->proc_fd,
		.pcomm = "test",
		.comm = "test",
		.cgroup = "",
	};

	rec_init(rec, fx);
	return fx->p->thread(fx->state, &task, rec);
}

static int run_finish(struct fx *fx)
{
	return fx->p->finish(fx->state, NULL);
}

static int self_dirfd(void)
{
	int fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
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

static unsigned n_set(const struct ctp_record *rec)
{
	unsigned n = 0;

	for (int i = 0; i < MAX_FIELDS; i++)
		n += rec->cells[i].set > 0;
	return n;
}

/* A successful query of a user thread: exactly what the host measures. */
static void expect_measured(const struct fx *fx, const struct ctp_record *rec,
			    uint64_t hwm_lo, uint64_t hwm_hi)
{
	const struct cell *rss = cell(fx, rec, "taskstats.hiwater_rss");
	const struct cell *vm = cell(fx, rec, "taskstats.hiwater_vm");

	assert_int_equal(rec->bad_sets, 0);
	for (int f = 0; f < N_FAM; f++) {
		bool on = f == 0 ? host.cpu_delay : host.delay_block;

		for (int pt = 0; pt < 3; pt++)
			if (fcell(fx, rec, f, pt)->set != (on ? 1 : 0))
				fail_msg("taskstats.%s%s set %d, expected %d",
					 fam[f], part[pt],
					 fcell(fx, rec, f, pt)->set, on);
		/* min only when the family saw a window. */
		if (fcell(fx, rec, f, 3)->set !=
		    (on && fcell(fx, rec, f, 0)->u ? 1 : 0))
			fail_msg("taskstats.%s_delay_min set %d, count %llu",
				 fam[f], fcell(fx, rec, f, 3)->set,
				 (unsigned long long)fcell(fx, rec, f, 0)->u);
		if (on && fcell(fx, rec, f, 0)->u) {
			assert_true(fcell(fx, rec, f, 2)->u <=
				    fcell(fx, rec, f, 1)->u);
			assert_true(fcell(fx, rec, f, 3)->u <=
				    fcell(fx, rec, f, 2)->u);
		}
	}
	if (host.cpu_delay)
		assert_true(fcell(fx, rec, 0, 0)->u >= 1);
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

static void expect_absent(const struct ctp_record *rec)
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
	assert_int_equal(p->flags, CTP_PLUGIN_MT_SAFE);
	assert_int_equal(p->field_desc_size, sizeof(struct ctp_field_desc));
	assert_int_equal(p->n_fields, N_FAM * 4 + 2);
	for (int f = 0; f < N_FAM; f++) {
		for (int pt = 0; pt < 4; pt++) {
			const struct ctp_field_desc *d;

			snprintf(name, sizeof(name), "taskstats.%s%s", fam[f],
				 part[pt]);
			d = &p->fields[field_index(p, name)];
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
		const struct ctp_field_desc *d =
			&p->fields[field_index(p, i ? "taskstats.hiwater_vm"
						    : "taskstats.hiwater_rss")];

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
	assert_non_null(p->process);
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
	static const char *const ok[] = {"batch_size", "256", NULL};
	struct fx *fx = *state;
	struct ctp_api small = api;

	assert_int_equal(start(fx, unknown), -EINVAL);
	assert_null(fx->state);
	assert_non_null(strstr(fx->ctx.last_log, "'batchsize'"));
	stop(fx);
	assert_int_equal(start(fx, zero), -EINVAL);
	stop(fx);
	assert_int_equal(start(fx, big), -EINVAL);
	assert_non_null(strstr(fx->ctx.last_log, "batch_size"));
	stop(fx);
	assert_int_equal(start(fx, word), -EINVAL);
	stop(fx);
	assert_int_equal(start(fx, ok), 0);
	assert_non_null(fx->state);
	assert_int_equal(fx->ctx.n_summary, 8);
	assert_int_equal(summary(fx, "ok"), 0);
	assert_int_equal(summary(fx, "eperm"), 0);
	assert_int_equal(summary(fx, "esrch"), 0);
	assert_int_equal(summary(fx, "other"), 0);
	assert_int_equal(summary(fx, "skipped"), 0);
	stop(fx);

	/* An older core without roots(). */
	small.size = offsetof(struct ctp_api, roots);
	assert_int_equal(start_api(fx, &small, "/proc", fx->proc_fd, NULL),
			 -ENOTSUP);
	stop(fx);
}

/* A fixture tree is not the live /proc: never queried, hint says so. */
static void foreign_root(void **state)
{
	struct fx *fx = *state;
	struct ctp_record rec;
	char dir[] = "/tmp/ctprof-tsroot.XXXXXX";
	int fd;

	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(start_api(fx, &api, dir, fd, NULL), 0);
	run_process(fx, getpid(), -1);
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	expect_absent(&rec);
	assert_int_equal(summary(fx, "skipped"), 1);
	assert_int_equal(summary(fx, "ok"), 0);
	assert_int_equal(run_finish(fx), 0);
	assert_true(fx->ctx.hint_set);
	assert_non_null(strstr(fx->ctx.hint, "not this kernel's /proc"));
	stop(fx);
	close(fd);
	rmdir(dir);

	/* No proc root at all. */
	assert_int_equal(start_api(fx, &api, NULL, -1, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	expect_absent(&rec);
	assert_int_equal(summary(fx, "skipped"), 1);
	stop(fx);
}

/* Query this process's threads: batched (default) and one by one. */
static void own_threads(void **state)
{
	static const char *const single_opt[] = {"batch_size", "1", NULL};
	static const char *const small_opt[] = {"batch_size", "2", NULL};
	const char *const *opts[] = {NULL, single_opt, small_opt};
	struct fx *fx = *state;
	struct ctp_record rec;
	pid_t tids[N_PARKED + 1];
	int dirfd = self_dirfd();

	if (!have_family || !have_cap)
		skip();
	park_start();
	tids[0] = gettid_();
	for (int i = 0; i < N_PARKED; i++)
		tids[i + 1] = atomic_load(&parked[i].tid);

	for (size_t o = 0; o < 3; o++) {
		struct ctp_record recs[N_PARKED + 1];
		uint64_t lo, hi;

		assert_int_equal(start(fx, opts[o]), 0);
		/* hiwater only grows: it lies within VmHWM before and after. */
		lo = vmhwm();
		run_process(fx, getpid(), dirfd);
		for (int i = 0; i <= N_PARKED; i++)
			assert_int_equal(
				run_thread(fx, &recs[i], getpid(), tids[i]), 0);
		hi = vmhwm();
		for (int i = 0; i <= N_PARKED; i++) {
			expect_measured(fx, &recs[i], lo, hi);
			/* One mm, one batch: every thread reports the same
			 * marks. */
			if (o != 0 || !host.xacct)
				continue;
			assert_int_equal(
				cell(fx, &recs[i], "taskstats.hiwater_rss")->u,
				cell(fx, &recs[0], "taskstats.hiwater_rss")->u);
			assert_int_equal(
				cell(fx, &recs[i], "taskstats.hiwater_vm")->u,
				cell(fx, &recs[0], "taskstats.hiwater_vm")->u);
		}
		assert_int_equal(summary(fx, "ok"), N_PARKED + 1);
		assert_int_equal(summary(fx, "eperm") + summary(fx, "esrch") +
					 summary(fx, "other") +
					 summary(fx, "skipped"),
				 0);
		if (o == 1) {
			assert_int_equal(summary(fx, "single"), N_PARKED + 1);
			assert_int_equal(summary(fx, "batched"), 0);
		} else {
			assert_int_equal(summary(fx, "batched"), N_PARKED + 1);
			assert_int_equal(summary(fx, "single"), 0);
		}
		assert_int_equal(run_finish(fx), 0);
		assert_int_equal(fx->ctx.n_hint, 1);
		if (host_delayacct == CTP_DELAYACCT_RUNTIME_OFF) {
			assert_true(fx->ctx.hint_set);
			assert_non_null(strstr(fx->ctx.hint,
					       "kernel.task_delayacct=1"));
		} else if (host_delayacct == CTP_DELAYACCT_ON &&
			   host_xacct != CTP_XACCT_OFF) {
			assert_false(fx->ctx.hint_set);
		}
		stop(fx);
	}

	/* A thread born after the listing is asked on its own. */
	assert_int_equal(start(fx, NULL), 0);
	park_stop();
	run_process(fx, getpid(), dirfd);
	park_start();
	assert_int_equal(
		run_thread(fx, &rec, getpid(), atomic_load(&parked[0].tid)), 0);
	expect_measured(fx, &rec, vmhwm(), vmhwm());
	assert_int_equal(summary(fx, "single"), 1);
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	assert_int_equal(summary(fx, "batched"), 1);
	stop(fx);
	park_stop();
	close(dirfd);
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
	struct ctp_record rec;
	int dirfd = self_dirfd();
	pid_t dead;

	if (!have_family || !have_cap)
		skip();
	/* A tid that cannot exist. */
	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), pid_max()), 0);
	expect_absent(&rec);
	assert_int_equal(summary(fx, "esrch"), 1);
	assert_int_equal(summary(fx, "single"), 1);

	/* Listed by the process callback, exited before its thread's turn:
	 * the batch's ESRCH answer for it. */
	park_start();
	run_process(fx, getpid(), dirfd);
	dead = atomic_load(&parked[N_PARKED - 1].tid);
	park_stop();
	assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	assert_int_equal(rec.bad_sets, 0);
	assert_true(n_set(&rec) > 0);
	assert_int_equal(run_thread(fx, &rec, getpid(), dead), 0);
	expect_absent(&rec);
	assert_int_equal(summary(fx, "esrch"), 2);
	assert_int_equal(summary(fx, "ok"), 1);
	assert_int_equal(summary(fx, "batched"), 2);
	/* Two of three failed with ESRCH: the dominant failure. */
	assert_int_equal(run_finish(fx), 0);
	assert_true(fx->ctx.hint_set);
	assert_non_null(strstr(fx->ctx.hint, "2 of 3 taskstats queries failed "
					     "with ESRCH"));
	/* Two of five: churn, not worth a hint of its own (what remains is
	 * the host's state, as in own_threads). */
	for (int i = 0; i < 2; i++)
		assert_int_equal(run_thread(fx, &rec, getpid(), gettid_()), 0);
	assert_int_equal(summary(fx, "ok"), 3);
	assert_int_equal(run_finish(fx), 0);
	assert_int_equal(fx->ctx.n_hint, 2);
	assert_true(!fx->ctx.hint_set || !strstr(fx->ctx.hint, "ESRCH"));
	stop(fx);
	close(dirfd);
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
	struct ctp_record rec;
	int dirfd = self_dirfd(), bad = 0;

	if (drop_net_admin() < 0)
		return 77;
	if (start(fx, NULL) != 0)
		return 2;
	run_process(fx, getpid(), dirfd);
	for (int i = 0; i < 3; i++) {
		pid_t tid = i == 2 ? pid_max() : gettid_();

		bad |= run_thread(fx, &rec, getpid(), tid) != 0;
		bad |= rec.n_sets != 0;
	}
	bad |= run_finish(fx) != 0;
	if (summary(fx, "eperm") != 3 || summary(fx, "ok") != 0) {
		fprintf(stderr, "eperm %llu ok %llu\n",
			(unsigned long long)summary(fx, "eperm"),
			(unsigned long long)summary(fx, "ok"));
		bad = 1;
	}
	if (!fx->ctx.hint_set || !strstr(fx->ctx.hint, "EPERM") ||
	    !strstr(fx->ctx.hint, "CAP_NET_ADMIN") ||
	    !strstr(fx->ctx.hint, "3 of 3")) {
		fprintf(stderr, "hint: '%s'\n", fx->ctx.hint);
		bad = 1;
	}
	stop(fx);
	close(dirfd);
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
	struct ctp_api small = api;

	small.size = offsetof(struct ctp_api, set_hint);
	assert_int_equal(start_api(fx, &small, "/proc", fx->proc_fd, NULL), 0);
	assert_int_equal(run_finish(fx), 0);
	assert_int_equal(fx->ctx.n_hint, 0);
	stop(fx);
}

struct worker {
	struct fx *fx;
	pid_t tids[N_PARKED + 1];
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ctp_record *rec = malloc(sizeof(*rec));
	int dirfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (!rec || dirfd < 0) {
		w->failures++;
		goto out;
	}
	for (int round = 0; round < 50; round++) {
		struct ctp_record prec;
		struct ctp_task task = {
			.abi = CTP_ABI_MAJOR,
			.size = sizeof(task),
			.tgid = getpid(),
			.tid = getpid(),
			.dirfd = dirfd,
			.proc_fd = w->fx->proc_fd,
			.pcomm = "t",
			.comm = "t",
			.cgroup = "",
		};

		rec_init(&prec, w->fx);
		if (w->fx->p->process(w->fx->state, &task, &prec) != 0)
			w->failures++;
		for (int i = 0; i <= N_PARKED; i++) {
			task.tid = w->tids[i];
			rec_init(rec, w->fx);
			if (w->fx->p->thread(w->fx->state, &task, rec) != 0 ||
			    rec->bad_sets ||
			    (host.cpu_delay && !rec->cells[0].set) ||
			    (host.xacct && !rec->cells[N_FAM * 4].set))
				w->failures++;
		}
	}
out:
	if (dirfd >= 0)
		close(dirfd);
	free(rec);
	return NULL;
}

/* MT_SAFE: concurrent workers, a socket each, all closed by fini. */
static void concurrent_workers(void **state)
{
	struct fx *fx = *state;
	pthread_t t[4];
	struct worker w[4];
	unsigned fds_before, fds_during;

	if (!have_family || !have_cap)
		skip();
	park_start();
	fds_before = count_fds();
	assert_int_equal(start(fx, NULL), 0);
	for (int i = 0; i < 4; i++) {
		w[i].fx = fx;
		w[i].failures = 0;
		w[i].tids[0] = gettid_();
		for (int k = 0; k < N_PARKED; k++)
			w[i].tids[k + 1] = atomic_load(&parked[k].tid);
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
	fds_during = count_fds();
	assert_int_equal(fds_during, fds_before + 4);
	assert_int_equal(summary(fx, "ok"), 4 * 50 * (N_PARKED + 1));
	assert_int_equal(summary(fx, "batched"), 4 * 50 * (N_PARKED + 1));
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
	struct ctp_record rec;
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
	found = summary(&fx, "skipped") == 0;
	if (!found)
		printf("NOTE: %s\n", fx.ctx.last_log);
	stop(&fx);
	close(fx.proc_fd);
	dlclose(fx.dl);
	return found;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor),
		cmocka_unit_test(init_options),
		cmocka_unit_test(foreign_root),
		cmocka_unit_test(own_threads),
		cmocka_unit_test(gone_threads),
		cmocka_unit_test(eperm),
		cmocka_unit_test(old_core_without_hint),
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
	close(proc_fd);
	have_cap = cap_net_admin();
	have_family = family_present();
	printf("NOTE: TASKSTATS family %s, CAP_NET_ADMIN %s, delay accounting "
	       "%s, CONFIG_TASK_XACCT %s\n",
	       have_family ? "found" : "missing", have_cap ? "yes" : "no",
	       ctp_delayacct_state_name(host_delayacct),
	       ctp_xacct_state_name(host_xacct));
	return cmocka_run_group_tests(tests, setup, teardown);
}
