// SPDX-License-Identifier: MIT
/*
 * The built jemalloc-probe.so driven without the engine: dlopen it and run
 * init/process/thread/finish/fini through a fake struct ctp_api against
 * real workers (tests/jemalloc.cmake), kthreadd, a plain process, a
 * stripped jemalloc worker, and as an unprivileged user.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctprof/plugin.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/jemalloc-probe.so"
#define MIB	    (1024ull * 1024)
#define MAX_SUM	    64
#define MAX_F	    8

struct ctp_ctx {
	const char *sum_name[MAX_SUM];
	uint64_t sum[MAX_SUM];
	int n_sum;
	char hint[512];
	int n_derived;
	char derived[64];
};

struct ctp_record {
	bool has[MAX_F];
	uint64_t v[MAX_F];
	int n_sets;
};

static void fake_log(struct ctp_ctx *ctx, int level, const char *fmt, ...)
{
	(void)ctx, (void)level, (void)fmt;
}

/* The one option tests set: method. */
static const char *opt_method;

static int fake_opt_str(struct ctp_ctx *c, const char *k, const char **o)
{
	(void)c;
	if (!opt_method || strcmp(k, "method"))
		return -ENOENT;
	*o = opt_method;
	return 0;
}

static int fake_opt_u64(struct ctp_ctx *c, const char *k, uint64_t *o)
{
	(void)c, (void)k, (void)o;
	return -ENOENT;
}

static int fake_opt_i64(struct ctp_ctx *c, const char *k, int64_t *o)
{
	(void)c, (void)k, (void)o;
	return -ENOENT;
}

static int fake_opt_bool(struct ctp_ctx *c, const char *k, int *o)
{
	(void)c, (void)k, (void)o;
	return -ENOENT;
}

static const char *fake_opt_key(struct ctp_ctx *c, size_t i)
{
	(void)c;
	return opt_method && i == 0 ? "method" : NULL;
}

static int fake_field_register(struct ctp_ctx *c,
			       const struct ctp_field_desc *d)
{
	(void)c, (void)d;
	return -EINVAL;
}

static int fake_field_handle(struct ctp_ctx *c, size_t i)
{
	(void)c;
	return i < MAX_F ? (int)i : -EINVAL;
}

static int fake_set_u64(struct ctp_record *r, int f, uint64_t v)
{
	if (f < 0 || f >= MAX_F)
		return -EINVAL;
	r->has[f] = true;
	r->v[f] = v;
	r->n_sets++;
	return 0;
}

static int fake_set_i64(struct ctp_record *r, int f, int64_t v)
{
	(void)r, (void)f, (void)v;
	return -EINVAL;
}

static int fake_set_bool(struct ctp_record *r, int f, int v)
{
	(void)r, (void)f, (void)v;
	return -EINVAL;
}

static int fake_set_char(struct ctp_record *r, int f, char v)
{
	(void)r, (void)f, (void)v;
	return -EINVAL;
}

static int fake_set_str(struct ctp_record *r, int f, const char *s, size_t n)
{
	(void)r, (void)f, (void)s, (void)n;
	return -EINVAL;
}

static int fake_set_cpuset(struct ctp_record *r, int f, const uint64_t *w,
			   size_t n)
{
	(void)r, (void)f, (void)w, (void)n;
	return -EINVAL;
}

static int fake_summary_register(struct ctp_ctx *c, const char *name)
{
	if (c->n_sum == MAX_SUM)
		return -ENOSPC;
	/* A copy: the plugin formats names in a reused buffer. */
	c->sum_name[c->n_sum] = strdup(name);
	return c->n_sum++;
}

static void fake_summary_add(struct ctp_ctx *c, int h, uint64_t d)
{
	if (h >= 0 && h < c->n_sum)
		c->sum[h] += d;
}

static struct ctp_roots roots = {.abi = CTP_ABI_MAJOR,
				 .size = sizeof(struct ctp_roots),
				 .proc = "/proc",
				 .sys = "/sys",
				 .proc_fd = -1,
				 .sys_fd = -1,
				 .cgroup_fd = -1};

static const struct ctp_roots *fake_roots(struct ctp_ctx *c)
{
	(void)c;
	return &roots;
}

static int fake_file_get(const struct ctp_task *t, uint32_t i,
			 const struct ctp_file **o)
{
	(void)t, (void)i, (void)o;
	return -EINVAL;
}

static void fake_set_hint(struct ctp_ctx *c, const char *text)
{
	snprintf(c->hint, sizeof(c->hint), "%s", text ? text : "");
}

static int fake_derived_register(struct ctp_ctx *c,
				 const struct ctp_derived_desc *d)
{
	c->n_derived++;
	snprintf(c->derived, sizeof(c->derived), "%s", d->field.name);
	return 100;
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
	.derived_register = fake_derived_register,
};

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	void *state;
	struct ctp_ctx ctx;
};

static struct fx FX;

static int field_index(const char *name)
{
	for (uint32_t i = 0; i < FX.p->n_fields; i++)
		if (!strcmp(FX.p->fields[i].name, name))
			return (int)i;
	return -1;
}

static uint64_t summary(const char *name)
{
	for (int i = 0; i < FX.ctx.n_sum; i++)
		if (!strcmp(FX.ctx.sum_name[i], name))
			return FX.ctx.sum[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

static int start(void)
{
	for (int i = 0; i < FX.ctx.n_sum; i++)
		free((void *)FX.ctx.sum_name[i]);
	memset(&FX.ctx, 0, sizeof(FX.ctx));
	FX.state = NULL;
	return FX.p->init(&FX.ctx, &api, &FX.state);
}

static void stop(void)
{
	FX.p->fini(FX.state);
	FX.state = NULL;
}

static void run_process(pid_t tgid)
{
	char path[64];
	struct ctp_record rec = {0};
	struct ctp_task t = {.abi = CTP_ABI_MAJOR, .size = sizeof(t)};
	int fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)tgid);
	fd = open(path, O_PATH | O_DIRECTORY);
	t.tgid = tgid;
	t.tid = tgid;
	t.dirfd = fd;
	t.proc_fd = roots.proc_fd;
	t.pcomm = t.comm = "x";
	t.cgroup = "";
	assert_int_equal(FX.p->process(FX.state, &t, &rec), 0);
	assert_int_equal(rec.n_sets, 0);
	if (fd >= 0)
		close(fd);
}

static void run_thread(pid_t tgid, pid_t tid, struct ctp_record *rec)
{
	struct ctp_task t = {.abi = CTP_ABI_MAJOR, .size = sizeof(t)};

	memset(rec, 0, sizeof(*rec));
	t.tgid = tgid;
	t.tid = tid;
	t.dirfd = -1;
	t.proc_fd = roots.proc_fd;
	t.pcomm = t.comm = "x";
	t.cgroup = "";
	assert_int_equal(FX.p->thread(FX.state, &t, rec), 0);
}

static pid_t started[8];
static size_t n_started;

static pid_t spawn(const char *path, long *tid)
{
	int p[2];
	char fdarg[16], buf[128];
	size_t len = 0;
	unsigned long extra;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		execl(path, path, fdarg, "hold", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0 && n_started < 8)
		started[n_started++] = pid;
	while (pid > 0 && len < sizeof(buf) - 1) {
		struct pollfd pf = {p[0], POLLIN, 0};
		ssize_t n;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		n = read(p[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len))
			break;
	}
	close(p[0]);
	buf[len] = '\0';
	if (sscanf(buf, "R %ld %lu", tid, &extra) != 2)
		return -1;
	return pid;
}

static int teardown(void **state)
{
	(void)state;
	if (FX.state)
		stop();
	opt_method = NULL;
	for (size_t i = 0; i < n_started; i++) {
		kill(started[i], SIGKILL);
		waitpid(started[i], NULL, 0);
	}
	n_started = 0;
	return 0;
}

static void check_worker(const char *path)
{
	struct ctp_record rec;
	int fa = field_index("jemalloc.allocated_bytes");
	int fd = field_index("jemalloc.deallocated_bytes");
	long tid;
	pid_t pid = spawn(path, &tid);

	assert_true(pid > 0);
	assert_true(fa >= 0 && fd >= 0);
	assert_int_equal(start(), 0);
	assert_int_equal(FX.ctx.n_derived, 1);
	assert_string_equal(FX.ctx.derived, "jemalloc.live_heap");
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.has[fa] && rec.has[fd]);
	assert_true(rec.v[fa] >= 16 * MIB && rec.v[fa] <= 20 * MIB);
	assert_true(rec.v[fd] < 16 * MIB);
	assert_true(summary("processes_walked") == 1);
	assert_true(summary("jemalloc_detected") == 1);
	assert_true(summary("threads_ok") == 1);
	assert_true(summary("method_thread_db") == 1);
	assert_true(summary("method_ptrace") == 0);
	assert_true(summary("failures") == 0);
	/* Again: the process identity is cached. */
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.has[fa]);
	assert_true(summary("cache_hits") == 1);
	assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	assert_string_equal(FX.ctx.hint, "");
	stop();
}

static void test_static(void **state)
{
	(void)state;
	check_worker(JEP_WORKER_STATIC);
}

static void test_shared(void **state)
{
	(void)state;
	check_worker(JEP_WORKER_SHARED);
}

/* kthreadd, a plain process and ourselves: nothing recorded, no failure. */
static void test_not_jemalloc(void **state)
{
	struct ctp_record rec;
	long tid;
	pid_t pid = spawn(JEP_WORKER_PLAIN, &tid);

	(void)state;
	assert_true(pid > 0);
	assert_int_equal(start(), 0);
	run_process(2);
	run_thread(2, 2, &rec);
	assert_int_equal(rec.n_sets, 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_int_equal(rec.n_sets, 0);
	run_process(getpid());
	run_thread(getpid(), getpid(), &rec);
	assert_int_equal(rec.n_sets, 0);
	assert_true(summary("processes_walked") == 2); /* self skipped */
	assert_true(summary("tag.not-jemalloc") == 2);
	assert_true(summary("jemalloc_detected") == 0);
	assert_true(summary("failures") == 0);
	assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	assert_string_equal(FX.ctx.hint, "");
	stop();
}

static void test_stripped(void **state)
{
	struct ctp_record rec;
	long tid;
	pid_t pid = spawn(JEP_WORKER_STRIPPED, &tid);

	(void)state;
	assert_true(pid > 0);
	assert_int_equal(start(), 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_int_equal(rec.n_sets, 0);
	assert_true(summary("tag.no-debuginfo") == 1);
	assert_true(summary("failures") == 1);
	assert_true(summary("threads_ok") == 0);
	assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	assert_non_null(strstr(FX.ctx.hint, "no-debuginfo"));
	stop();
}

/* Threads of pid in a tracing or job stop. */
static int stopped_threads(pid_t pid)
{
	char path[300], buf[256];
	struct dirent *de;
	int stopped = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
			 (int)pid, de->d_name);
		f = fopen(path, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "State:\t", 7) &&
			    (buf[7] == 't' || buf[7] == 'T'))
				stopped++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return stopped;
}

/* method: ptrace serves the executable's jemalloc through the fallback and
 * tags a DSO's; method: thread_db never ptraces; a bad method fails init. */
static void test_methods(void **state)
{
	struct ctp_record rec;
	int fa = field_index("jemalloc.allocated_bytes");
	long tid, tid2;
	pid_t pid = spawn(JEP_WORKER_STATIC, &tid);
	pid_t pid2 = spawn(JEP_WORKER_SHARED, &tid2);

	(void)state;
	assert_true(pid > 0 && pid2 > 0);
	opt_method = "ptrace";
	assert_int_equal(start(), 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.has[fa]);
	assert_true(rec.v[fa] >= 16 * MIB && rec.v[fa] <= 20 * MIB);
	assert_true(summary("method_ptrace") == 1);
	assert_true(summary("method_thread_db") == 0);
	assert_int_equal(stopped_threads(pid), 0);
	run_process(pid2);
	run_thread(pid2, (pid_t)tid2, &rec);
	assert_int_equal(rec.n_sets, 0);
	assert_true(summary("tag.static-tls") == 1);
	assert_true(summary("failures") == 1);
	stop();

	opt_method = "thread_db";
	assert_int_equal(start(), 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.has[fa]);
	assert_true(summary("method_thread_db") == 1);
	stop();

	opt_method = "sometimes";
	assert_int_equal(start(), -EINVAL);
	FX.state = NULL;
}

/* Without privilege against a root-owned worker: tagged failures, the
 * privilege flag and the hint. Runs the plugin in a child as nobody. */
static void test_unprivileged(void **state)
{
	long tid;
	pid_t pid, child;
	int st;

	(void)state;
	if (geteuid() != 0)
		skip();
	pid = spawn(JEP_WORKER_STATIC, &tid);
	assert_true(pid > 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct ctp_record rec;

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (start())
			_exit(11);
		run_process(pid);
		run_thread(pid, (pid_t)tid, &rec);
		if (rec.n_sets)
			_exit(12);
		if (summary("failures") != 1 ||
		    summary("privilege_denied") != 1)
			_exit(13);
		FX.p->finish(FX.state, NULL);
		if (!strstr(FX.ctx.hint, "CAP_SYS_PTRACE") ||
		    !strstr(FX.ctx.hint, "kernel.yama.ptrace_scope"))
			_exit(14);
		printf("hint: %s\n", FX.ctx.hint);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_static, teardown),
		cmocka_unit_test_teardown(test_shared, teardown),
		cmocka_unit_test_teardown(test_not_jemalloc, teardown),
		cmocka_unit_test_teardown(test_stripped, teardown),
		cmocka_unit_test_teardown(test_unprivileged, teardown),
		cmocka_unit_test_teardown(test_methods, teardown),
	};

	if (JEP_SKIP_REASON[0]) {
		fprintf(stderr, "skip: %s\n", JEP_SKIP_REASON);
		return 77;
	}
	roots.proc_fd = open("/proc", O_PATH | O_DIRECTORY);
	FX.dl = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!FX.dl) {
		fprintf(stderr, "dlopen %s: %s\n", PLUGIN_PATH, dlerror());
		return 1;
	}
	FX.p = dlsym(FX.dl, CTP_PLUGIN_SYMBOL);
	if (!FX.p)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
