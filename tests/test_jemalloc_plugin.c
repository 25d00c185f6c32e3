// SPDX-License-Identifier: MIT
/*
 * The built jemalloc-probe.so loaded into a real engine (tests/harness.h)
 * and called without the walk: init/process/thread/finish/fini against
 * real workers (tests/jemalloc.cmake), kthreadd, a plain process, a
 * stripped jemalloc worker, a worker the stop-free read cannot serve, and
 * as an unprivileged user.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
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

#include "harness.h"
#include "jemalloc_unknown.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/jemalloc-probe.so"
#define MIB	    (1024ull * 1024)

static struct hx_fx FX;
static int proc_fd = -1; /* the roots' /proc */

/* The one option tests set: method. */
static const char *opt_method;

static int field_index(const char *name)
{
	return hx_field_index(FX.p, name);
}

static uint64_t summary(const char *name)
{
	return hx_summary(&FX.ctx, name);
}

static int start(void)
{
	static const char *opts[] = {"method", NULL, NULL};

	opts[1] = opt_method;
	hx_ctx_init(&FX.ctx, FX.p, opt_method ? opts : NULL);
	FX.ctx.eng.roots.proc_fd = proc_fd;
	return hx_fx_load(&FX, 0);
}

static void stop(void)
{
	hx_fx_stop(&FX);
}

/* The process's name as the engine passes it: /proc/<pid>/comm. */
static const char *comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(buf, len, "x");
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

/* The jemalloc.layout the last run_process set, "" none. */
static char last_layout[HX_STR_MAX];

/* /proc/<pid>/maps whole (malloc'd, NUL-terminated), as the core hands it
 * for the declared "?+maps"; NULL and *err when unreadable. */
static char *read_maps(pid_t pid, int *err)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	*err = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0)
			*err = -errno;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	if (*err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void run_process(pid_t tgid)
{
	char path[64], comm[64];
	struct hx_rec rec;
	struct hx_task ft;

	snprintf(path, sizeof(path), "/proc/%d", (int)tgid);
	hx_task_init(&ft, tgid, tgid);
	/* process_files[0]: "?+maps", fetched at most once, never eagerly. */
	assert_string_equal(FX.p->process_files[0], "?+maps");
	int err;
	char *maps = read_maps(tgid, &err);
	hx_task_lazy(&ft, 0, maps, err);
	ft.task.dirfd = open(path, O_PATH | O_DIRECTORY);
	ft.task.proc_fd = proc_fd;
	ft.task.pcomm = ft.task.comm = comm_of(tgid, comm, sizeof(comm));
	hx_rec_init(&rec, &FX.ctx, CTP_SCOPE_PROCESS);
	assert_int_equal(FX.p->process(FX.state, &ft.task, &rec.core), 0);
	/* At most the process's layout, and only for a process that was
	 * read: dwarf, but for the stripped worker (the shipped table's). */
	int lay = hx_field(&FX.ctx, "jemalloc.layout");
	assert_true(lay >= 0);
	assert_int_equal(rec.n_sets, rec.cells[lay].set);
	snprintf(last_layout, sizeof(last_layout), "%s",
		 rec.cells[lay].set ? rec.cells[lay].str : "");
	if (ft.task.dirfd >= 0)
		close(ft.task.dirfd);
	assert_true(ft.gets <= 1);
	assert_int_equal(ft.bad_gets, 0);
	free(maps);
}

static void run_thread(pid_t tgid, pid_t tid, struct hx_rec *rec)
{
	char comm[64];
	struct hx_task ft;

	hx_task_init(&ft, tgid, tid);
	ft.task.proc_fd = proc_fd;
	ft.task.pcomm = ft.task.comm = comm_of(tgid, comm, sizeof(comm));
	hx_rec_init(rec, &FX.ctx, CTP_SCOPE_THREAD);
	assert_int_equal(FX.p->thread(FX.state, &ft.task, &rec->core), 0);
}

static pid_t started[8];
static size_t n_started;
/* When set, spawn() runs the worker with LD_LIBRARY_PATH set to it. */
static const char *spawn_libdir;
/* The worker's mode (default hold) and the extra of its readiness line. */
static const char *spawn_mode;
static unsigned long spawn_extra;

static pid_t spawn(const char *path, long *tid)
{
	int p[2];
	char fdarg[16], buf[128];
	size_t len = 0;
	const char *mode = spawn_mode ? spawn_mode : "hold";
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		if (spawn_libdir)
			setenv("LD_LIBRARY_PATH", spawn_libdir, 1);
		execl(path, path, fdarg, mode, (char *)NULL);
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
	if (sscanf(buf, "R %ld %lu", tid, &spawn_extra) != 2)
		return -1;
	return pid;
}

static int teardown(void **state)
{
	(void)state;
	if (FX.state)
		stop();
	opt_method = NULL;
	spawn_mode = NULL;
	for (size_t i = 0; i < n_started; i++) {
		kill(started[i], SIGKILL);
		waitpid(started[i], NULL, 0);
	}
	n_started = 0;
	return 0;
}

/* A thread callback on a worker of its own (no process callback ran
 * there). */
struct other_worker {
	pid_t pid, tid;
	struct hx_rec rec;
};

static void *other_worker_main(void *arg)
{
	struct other_worker *ow = arg;

	run_thread(ow->pid, ow->tid, &ow->rec);
	return NULL;
}

static void check_worker(const char *path)
{
	struct hx_rec rec;
	int fa = field_index("jemalloc.allocated_bytes");
	int fd = field_index("jemalloc.deallocated_bytes");
	long tid;
	pid_t pid = spawn(path, &tid);

	assert_true(pid > 0);
	assert_true(fa >= 0 && fd >= 0);
	assert_int_equal(start(), 0);
	assert_int_equal(hx_n_derived(&FX.ctx), 1);
	assert_string_equal(hx_derived(&FX.ctx, 0)->name, "jemalloc.live_heap");
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.cells[fa].set && rec.cells[fd].set);
	assert_true(rec.cells[fa].u >= 16 * MIB && rec.cells[fa].u <= 20 * MIB);
	assert_true(rec.cells[fd].u < 16 * MIB);
	assert_true(summary("processes_walked") == 1);
	assert_true(summary("jemalloc_detected") == 1);
	assert_true(summary("threads_ok") == 1);
	assert_true(summary("method_thread_db") == 1);
	assert_true(summary("method_ptrace") == 0);
	assert_true(summary("failures") == 0);
	/* Again: the process identity is cached. */
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.cells[fa].set);
	assert_true(summary("cache_hits") == 1);
	/* A split process: the thread walked on another worker finds the
	 * counters its process callback read (CTP_PLUGIN_SPLITTABLE). */
	struct other_worker ow = {.pid = pid, .tid = (pid_t)tid};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, other_worker_main, &ow), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(ow.rec.cells[fa].set && ow.rec.cells[fd].set);
	assert_int_equal(ow.rec.cells[fa].u, rec.cells[fa].u);
	assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	assert_string_equal(hx_hint(&FX.ctx), "");
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
	struct hx_rec rec;
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
	assert_string_equal(hx_hint(&FX.ctx), "");
	stop();
}

static void test_stripped(void **state)
{
	struct hx_rec rec;
	long tid;
	pid_t pid = spawn(JEP_WORKER_STRIPPED, &tid);

	(void)state;
	assert_true(pid > 0);
	assert_int_equal(start(), 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	/* No symbol, no DWARF, and jemalloc's TLS the executable's only: its
	 * TLS block is the tsd, the size of 5.3.0's, and the shipped table
	 * serves it (a static executable with TLS of its own would not
	 * match, README.md). The main thread holds 16 MiB. */
	assert_string_equal(last_layout, "5.3.0-x86_64");
	assert_true(summary("offsets_table") == 1);
	assert_true(summary("threads_ok") == 1);
	assert_true(summary("failures") == 0);
	int a = hx_field(&FX.ctx, "jemalloc.allocated_bytes");
	assert_true(a >= 0 && rec.cells[a].set);
	assert_true(rec.cells[a].u >= 16u << 20);
	assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	stop();
}

/* Captures of a process that creates and joins threads without pause:
 * its main thread's value is exactly what it reported in every capture
 * (its descriptor and TLS never change, so it is always read), never
 * another thread's: a descriptor with tid 0, which libthread_db reports
 * as the process's pid, put 0 there about one capture in two. */
static void test_churn(void **state)
{
	struct hx_rec rec;
	int fa = field_index("jemalloc.allocated_bytes");
	long tid;
	pid_t pid;

	(void)state;
	spawn_mode = "churn";
	pid = spawn(JEP_WORKER_SHARED, &tid);
	assert_true(pid > 0);
	assert_true(spawn_extra >= 16 * MIB);
	assert_int_equal(start(), 0);
	for (int i = 0; i < 64; i++) {
		run_process(pid);
		run_thread(pid, (pid_t)tid, &rec);
		assert_true(rec.cells[fa].set);
		assert_int_equal(rec.cells[fa].u, spawn_extra);
		assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	}
	assert_true(summary("threads_ok") == 64);
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
	struct hx_rec rec;
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
	assert_true(rec.cells[fa].set);
	assert_true(rec.cells[fa].u >= 16 * MIB && rec.cells[fa].u <= 20 * MIB);
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
	assert_true(rec.cells[fa].set);
	assert_true(summary("method_thread_db") == 1);
	stop();

	opt_method = "sometimes";
	assert_int_equal(start(), -EINVAL);
	stop(); /* the engine */
}

/* Copy this process's libc into dir; 0 or -1. */
static int copy_libc(const char *dir, char *dst, size_t dlen)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[4608], src[4096] = "", buf[65536];
	int in, out, r = -1;
	ssize_t n;

	while (m && fgets(line, sizeof(line), m)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(src, sizeof(src), "%s", p);
			break;
		}
	}
	if (m)
		fclose(m);
	if (!src[0])
		return -1;
	snprintf(dst, dlen, "%s/%s", dir, strrchr(src, '/') + 1);
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0 && out >= 0 && n == 0)
		r = 0;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		r = -1;
	return r;
}

/*
 * A target the stop-free read cannot serve: the static worker runs on a
 * copy of libc that is deleted once it is mapped, so libthread_db finds
 * none of glibc's symbols (as with a container's mismatched glibc). With
 * no method option the plugin tags it and never ptraces it; `method: auto`
 * (opt-in) reads it through the ptrace fallback.
 */
static void test_default_never_stops(void **state)
{
	char dir[] = "/tmp/ctprof-jeplibc.XXXXXX", libc[4200];
	int fa = field_index("jemalloc.allocated_bytes");
	struct hx_rec rec;
	long tid;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(copy_libc(dir, libc, sizeof(libc)), 0);
	spawn_libdir = dir;
	pid = spawn(JEP_WORKER_STATIC, &tid);
	spawn_libdir = NULL;
	unlink(libc);
	rmdir(dir);
	assert_true(pid > 0);

	/* The default. */
	opt_method = NULL;
	assert_int_equal(start(), 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_int_equal(rec.n_sets, 0);
	assert_true(summary("jemalloc_detected") == 1);
	assert_true(summary("tag.thread-db") == 1);
	assert_true(summary("failures") == 1);
	assert_true(summary("method_thread_db") == 0);
	assert_true(summary("method_ptrace") == 0);
	assert_int_equal(FX.p->finish(FX.state, NULL), 0);
	assert_non_null(strstr(hx_hint(&FX.ctx), "thread-db"));
	assert_non_null(strstr(hx_hint(&FX.ctx), "method: auto"));
	stop();

	/* Opted in: the fallback stops each thread and reads it. */
	opt_method = "auto";
	assert_int_equal(start(), 0);
	run_process(pid);
	run_thread(pid, (pid_t)tid, &rec);
	assert_true(rec.cells[fa].set);
	assert_true(rec.cells[fa].u >= 16 * MIB && rec.cells[fa].u <= 20 * MIB);
	assert_true(summary("method_ptrace") == 1);
	assert_true(summary("failures") == 0);
	assert_int_equal(stopped_threads(pid), 0);
	stop();
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
		struct hx_rec rec;

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
		if (!strstr(hx_hint(&FX.ctx), "CAP_SYS_PTRACE") ||
		    !strstr(hx_hint(&FX.ctx), "kernel.yama.ptrace_scope"))
			_exit(14);
		{
			char want[128];

			snprintf(want, sizeof(want),
				 "jemalloc_worker (pid %d): permission denied: "
				 "run as root or grant CAP_SYS_PTRACE",
				 (int)pid);
			if (!strstr(hx_hint(&FX.ctx), want))
				_exit(15);
		}
		printf("hint: %s\n", hx_hint(&FX.ctx));
		_exit(0);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Become root of a new user namespace: every capability, CAP_SYS_PTRACE
 * included, but none over processes of the initial namespace. */
static int enter_userns(void)
{
	static const char *const files[][2] = {
		{"/proc/self/uid_map", "0 0 1\n"},
		{"/proc/self/setgroups", "deny\n"},
		{"/proc/self/gid_map", "0 0 1\n"},
	};

	if (unshare(CLONE_NEWUSER) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		int fd = open(files[i][0], O_WRONLY | O_CLOEXEC);
		size_t n = strlen(files[i][1]);

		if (fd < 0 || write(fd, files[i][1], n) != (ssize_t)n) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

static bool have_cap_sys_ptrace(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return (eff >> 19) & 1; /* CAP_SYS_PTRACE */
}

/*
 * Running with CAP_SYS_PTRACE, a process that refuses access anyway (here
 * one of the initial user namespace, read from a child user namespace in
 * which this test holds every capability; on a real host, e.g. a protected
 * PID 1) is named as refusing, never as a missing privilege, and does not
 * hide the other cause present: a stripped jemalloc worker's (started in
 * the child namespace) no-debuginfo, named with its pid.
 */
static void test_refused_as_privileged(void **state)
{
	int ready[2], st;
	long tid;
	pid_t refuser, worker, child;
	char c;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(pipe(ready), 0);
	refuser = fork();
	assert_true(refuser >= 0);
	if (refuser == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "ctp-refuser");
		prctl(PR_SET_DUMPABLE, 0);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	started[n_started++] = refuser;
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);

	fflush(NULL);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct hx_rec rec;
		char want[200];

		if (enter_userns() < 0 || !have_cap_sys_ptrace())
			_exit(77);
		/* Started in the namespace: readable from it. A stripped
		 * jemalloc no layouts entry knows: no-debuginfo. */
		char copy[64];
		snprintf(copy, sizeof(copy), "/tmp/ctp-jep-unknown-%d",
			 (int)getpid());
		if (jt_unknown_version(JEP_WORKER_STRIPPED, copy) < 0)
			_exit(9);
		worker = spawn(copy, &tid);
		if (worker <= 0)
			_exit(10);
		if (start())
			_exit(11);
		run_process(refuser);
		run_process(worker);
		run_thread(worker, (pid_t)tid, &rec);
		unlink(copy);
		FX.p->finish(FX.state, NULL);
		printf("hint: %s\nmaps-read %llu no-debuginfo %llu "
		       "privilege_denied %llu\n",
		       hx_hint(&FX.ctx),
		       (unsigned long long)summary("tag.maps-read"),
		       (unsigned long long)summary("tag.no-debuginfo"),
		       (unsigned long long)summary("privilege_denied"));
		fflush(stdout);
		if (summary("tag.maps-read") != 1 ||
		    summary("tag.no-debuginfo") != 1 ||
		    summary("privilege_denied") != 1)
			_exit(12);
		/* The refusal, named, and not blamed on privilege. */
		snprintf(want, sizeof(want),
			 "maps-read: ctp-refuser (pid %d): refused access "
			 "although ctprof-core holds CAP_SYS_PTRACE",
			 (int)refuser);
		if (!strstr(hx_hint(&FX.ctx), want))
			_exit(13);
		if (strstr(hx_hint(&FX.ctx), "run as root") ||
		    strstr(hx_hint(&FX.ctx), "grant CAP_SYS_PTRACE"))
			_exit(14);
		/* The real cause of the jemalloc process, named too. */
		snprintf(want, sizeof(want),
			 "no-debuginfo: ctp-jep-unknown (pid %d): install its "
			 "debug symbols or set option debuginfod: true with "
			 "DEBUGINFOD_URLS",
			 (int)worker);
		if (!strstr(hx_hint(&FX.ctx), want))
			_exit(15);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
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
		cmocka_unit_test_teardown(test_refused_as_privileged, teardown),
		cmocka_unit_test_teardown(test_methods, teardown),
		cmocka_unit_test_teardown(test_default_never_stops, teardown),
		cmocka_unit_test_teardown(test_churn, teardown),
	};

	if (JEP_SKIP_REASON[0]) {
		fprintf(stderr, "skip: %s\n", JEP_SKIP_REASON);
		return 77;
	}
	proc_fd = open("/proc", O_PATH | O_DIRECTORY);
	FX.p = hx_dlopen(PLUGIN_PATH, &FX.dl);
	if (!FX.p)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
