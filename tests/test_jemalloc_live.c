// SPDX-License-Identifier: MIT
/*
 * The jemalloc-probe library against real workers linked with a jemalloc
 * built with -g (tests/jemalloc.cmake): detection, DWARF offsets, the
 * stop-free libthread_db read and the ptrace fallback.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "jep.h"
#include "proc_tids.h"

#define MIB (1024ull * 1024)

struct worker {
	pid_t pid;
	long tid;
	unsigned long extra;
};

/* Every worker started, killed by each test's teardown even when an
 * assertion ended the test early. */
static pid_t started[16];
static size_t n_started;

/* Start a worker and wait (10 s at most) for its readiness line. */
static int spawn(const char *path, struct worker *w, const char *a1,
		 const char *a2)
{
	int p[2];
	char fdarg[16], buf[128];
	size_t len = 0;

	if (pipe(p))
		return -errno;
	w->pid = fork();
	if (w->pid < 0)
		return -errno;
	if (w->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		execl(path, path, fdarg, a1, a2, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (n_started < 16)
		started[n_started++] = w->pid;
	while (len < sizeof(buf) - 1) {
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
	if (sscanf(buf, "R %ld %lu", &w->tid, &w->extra) != 2) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		return -EIO;
	}
	return 0;
}

static void reap(struct worker *w)
{
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
}

/* A process's mappings and its jemalloc module, as the plugin finds them. */
struct probe {
	char buf[1 << 20];
	struct ctp_map maps[4096];
	struct ctp_jep_file file;
	struct ctp_jep_target t;
	char root[64];
	enum ctp_jep_tag tag; /* the most telling tag of a failed search */
};

static int probe_target(pid_t pid, struct probe *p)
{
	char path[4200];
	struct stat exe;
	size_t len = 0, n = 0, idx = 0;
	bool found = false;
	int fd;
	ssize_t r;

	memset(&p->t, 0, sizeof(p->t));
	p->tag = CTP_JEP_NOT_JEMALLOC;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((r = read(fd, p->buf + len, sizeof(p->buf) - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	p->buf[len] = '\0';
	for (char *s = p->buf, *e; s < p->buf + len && n < 4096; s = e + 1) {
		e = strchr(s, '\n');
		if (!e)
			e = p->buf + len;
		*e = '\0';
		if (ctp_maps_line(s, (size_t)(e - s), &p->maps[n]) == 0 &&
		    p->maps[n].ino && p->maps[n].path[0] == '/')
			n++;
	}
	for (size_t i = 0; i < n && !found; i++) {
		if (!p->maps[i].exec)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%.*s", (int)pid,
			 (int)p->maps[i].path_len, p->maps[i].path);
		if (ctp_jep_file_probe(path, &p->file) < 0)
			continue;
		if (p->file.found) {
			found = true;
			idx = i;
		} else if (p->file.tag != CTP_JEP_NOT_JEMALLOC) {
			p->tag = p->file.tag;
		}
	}
	if (!found)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &exe))
		return -errno;
	snprintf(p->root, sizeof(p->root), "/proc/%d/root", (int)pid);
	p->t.pid = pid;
	p->t.file = &p->file;
	p->t.maps = p->maps;
	p->t.n_maps = n;
	p->t.root = p->root;
	for (size_t i = 0; i < n; i++) {
		if (p->maps[i].dev != p->maps[idx].dev ||
		    p->maps[i].ino != p->maps[idx].ino || p->maps[i].offset)
			continue;
		p->t.bias = p->file.is_dyn ? p->maps[i].start -
						     p->file.first_load_vaddr
					   : 0;
		p->t.in_main_exe = p->maps[i].ino == exe.st_ino &&
				   p->maps[i].dev == exe.st_dev;
		break;
	}
	return 0;
}

static const struct ctp_jep_counters *find_tid(const struct ctp_jep_counters *c,
					       size_t n, long tid)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].tid == tid)
			return &c[i];
	return NULL;
}

/* Threads of pid in a tracing stop ('t') or a job stop ('T'). */
static int stopped_threads(pid_t pid)
{
	char path[300], buf[4096];
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
		if (!f)
			continue;
		while (fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "State:", 6)) {
				char *st = buf + 6;

				while (*st == ' ' || *st == '\t')
					st++;
				if (*st == 't' || *st == 'T')
					stopped++;
			}
		fclose(f);
	}
	closedir(d);
	return stopped;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_started; i++) {
		kill(started[i], SIGKILL);
		waitpid(started[i], NULL, 0);
	}
	n_started = 0;
	return 0;
}

static struct probe P;
static struct ctp_jep_counters C[4096];

static int setup(void **state)
{
	(void)state;
	if (JEP_SKIP_REASON[0]) {
		fprintf(stderr, "skip: %s\n", JEP_SKIP_REASON);
		return -1;
	}
	return 0;
}

#ifdef JEP_WORKER_STATIC
/* The holding worker: main thread's counters within the 16 MiB bounds. */
static void check_hold(const char *path, bool want_main_exe)
{
	struct worker w;
	const struct ctp_jep_counters *c;
	enum ctp_jep_tag tag = CTP_JEP_NOT_JEMALLOC;
	uint64_t before = ctp_jep_ptrace_calls();
	size_t n = 0;

	assert_int_equal(spawn(path, &w, "hold", NULL), 0);
	assert_int_equal(probe_target(w.pid, &P), 0);
	assert_true(P.file.found);
	assert_true(P.t.in_main_exe == want_main_exe);
	assert_true(P.file.off_alloc != P.file.off_dealloc);
	assert_int_equal(ctp_jep_read_thread_db(&P.t, C, 4096, &n, &tag), 0);
	c = find_tid(C, n, w.tid);
	assert_non_null(c);
	assert_int_equal(c->err, 0);
	assert_true(c->allocated >= 16 * MIB);
	assert_true(c->allocated <= 20 * MIB);
	assert_true(c->deallocated < 16 * MIB);
	/* Stop-free: not one ptrace request. */
	assert_true(ctp_jep_ptrace_calls() == before);
	assert_int_equal(stopped_threads(w.pid), 0);
	reap(&w);
}

static void test_static_hold(void **state)
{
	(void)state;
	check_hold(JEP_WORKER_STATIC, true);
}

static void test_shared_hold(void **state)
{
	(void)state;
	check_hold(JEP_WORKER_SHARED, false);
	/* The module really is the shared library. */
	assert_non_null(strstr(P.file.symbol, "tsd_tls"));
}

static void test_stripped(void **state)
{
	struct worker w;

	(void)state;
	assert_int_equal(spawn(JEP_WORKER_STRIPPED, &w, "hold", NULL), 0);
	assert_int_equal(probe_target(w.pid, &P), -ENOENT);
	assert_int_equal(P.tag, CTP_JEP_NO_DEBUGINFO);
	reap(&w);
}

/* Symbols and DWARF only in a separate file named by .gnu_debuglink. */
static void test_split_debuginfo(void **state)
{
	(void)state;
	check_hold(JEP_WORKER_SPLIT, true);
}

/* glibc linked in statically as well. */
static void test_fullstatic(void **state)
{
	(void)state;
	check_hold(JEP_WORKER_FULLSTATIC, true);
}

static void test_plain(void **state)
{
	struct worker w;

	(void)state;
	assert_int_equal(spawn(JEP_WORKER_PLAIN, &w, "hold", NULL), 0);
	assert_int_equal(probe_target(w.pid, &P), -ENOENT);
	assert_int_equal(P.tag, CTP_JEP_NOT_JEMALLOC);
	reap(&w);
}

/* The fallback reads the same counters through the thread pointer. */
static void test_ptrace_fallback(void **state)
{
	struct worker w;
	const struct ctp_jep_counters *c;
	int32_t tids[64];
	int n;

	(void)state;
	assert_int_equal(spawn(JEP_WORKER_STATIC, &w, "threads", "8"), 0);
	assert_int_equal(probe_target(w.pid, &P), 0);
	n = test_list_tids(w.pid, tids, 64);
	assert_int_equal(n, 9);
	assert_int_equal(ctp_jep_read_ptrace(&P.t, tids, (size_t)n, C, 1000),
			 0);
	c = find_tid(C, (size_t)n, w.tid);
	assert_non_null(c);
	assert_int_equal(c->err, 0);
	assert_true(c->allocated >= 16 * MIB && c->allocated <= 20 * MIB);
	assert_true(c->deallocated < 16 * MIB);
	for (int i = 0; i < n; i++) {
		assert_int_equal(C[i].err, 0);
		/* Each sleeper allocated its 64 bytes. */
		assert_true(C[i].allocated >= 64);
	}
	assert_int_equal(stopped_threads(w.pid), 0);
	/* Both methods agree on every (sleeping, so unchanging) thread. */
	{
		static struct ctp_jep_counters D[64];
		enum ctp_jep_tag tag;
		size_t m = 0;

		assert_int_equal(ctp_jep_read_thread_db(&P.t, D, 64, &m, &tag),
				 0);
		assert_int_equal(m, (size_t)n);
		for (int i = 0; i < n; i++) {
			const struct ctp_jep_counters *d =
				find_tid(D, m, C[i].tid);

			assert_non_null(d);
			assert_true(d->allocated == C[i].allocated);
			assert_true(d->deallocated == C[i].deallocated);
		}
	}
	reap(&w);

	/* jemalloc in a DSO has no static-TLS arithmetic here. */
	assert_int_equal(spawn(JEP_WORKER_SHARED, &w, "hold", NULL), 0);
	assert_int_equal(probe_target(w.pid, &P), 0);
	tids[0] = (int32_t)w.tid;
	assert_int_equal(ctp_jep_read_ptrace(&P.t, tids, 1, C, 1000), -ENOTSUP);
	reap(&w);
}

/* Threads come and go while libthread_db walks the list: the main
 * thread's counters are exactly what it reported, in every read, and no
 * tid appears twice. A descriptor between its allocation and clone, or
 * after the kernel ended its thread, has tid 0, which libthread_db
 * reports as the process's pid: taken as such, it put a new or dead
 * thread's counters (0) on the main thread, about one capture in two. */
static void test_churn(void **state)
{
	struct worker w;
	uint64_t before = ctp_jep_ptrace_calls();

	(void)state;
	assert_int_equal(spawn(JEP_WORKER_SHARED, &w, "churn", NULL), 0);
	assert_true(w.extra >= 16 * MIB);
	assert_int_equal(probe_target(w.pid, &P), 0);
	for (int i = 0; i < 200; i++) {
		enum ctp_jep_tag tag;
		const struct ctp_jep_counters *c;
		size_t n = 0, mains = 0;

		assert_int_equal(
			ctp_jep_read_thread_db(&P.t, C, 4096, &n, &tag), 0);
		for (size_t k = 0; k < n; k++) {
			mains += C[k].tid == w.tid;
			/* A value is read or absent with its tag. */
			assert_true(C[k].err
					    ? C[k].tag != CTP_JEP_NOT_JEMALLOC
					    : C[k].tag == CTP_JEP_NOT_JEMALLOC);
			/* Sorted, one entry per tid. */
			assert_true(k == 0 || C[k - 1].tid < C[k].tid);
		}
		assert_int_equal(mains, 1);
		c = find_tid(C, n, w.tid);
		assert_non_null(c);
		assert_int_equal(c->err, 0);
		assert_int_equal(c->allocated, w.extra);
	}
	assert_true(ctp_jep_ptrace_calls() == before);
	assert_int_equal(stopped_threads(w.pid), 0);
	reap(&w);
}

struct watch {
	pid_t pid;
	volatile bool stop;
	int seen;
	int polls;
};

static void *watcher(void *arg)
{
	struct watch *wt = arg;

	while (!wt->stop) {
		int s = stopped_threads(wt->pid);

		if (s > 0)
			wt->seen += s;
		wt->polls++;
	}
	return NULL;
}

/* While captures repeat, no worker thread is ever seen stopped. */
static void test_stop_free(void **state)
{
	struct worker w;
	struct watch wt = {0};
	pthread_t th;
	uint64_t before = ctp_jep_ptrace_calls();

	(void)state;
	assert_int_equal(spawn(JEP_WORKER_STATIC, &w, "threads", "64"), 0);
	assert_int_equal(probe_target(w.pid, &P), 0);
	wt.pid = w.pid;
	assert_int_equal(pthread_create(&th, NULL, watcher, &wt), 0);
	for (int i = 0; i < 200; i++) {
		enum ctp_jep_tag tag;
		size_t n = 0;

		assert_int_equal(
			ctp_jep_read_thread_db(&P.t, C, 4096, &n, &tag), 0);
		assert_int_equal(n, 65);
	}
	wt.stop = true;
	pthread_join(th, NULL);
	assert_true(wt.polls > 0);
	assert_int_equal(wt.seen, 0);
	assert_true(ctp_jep_ptrace_calls() == before);
	reap(&w);
}

/* SIGKILL of the prober in the middle of a fallback probe leaves no worker
 * thread stopped. */
static void test_sigkill_fallback(void **state)
{
	struct worker w;
	int32_t tids[256];
	int n, stopped = -1;
	pid_t prober;

	(void)state;
	assert_int_equal(spawn(JEP_WORKER_STATIC, &w, "threads", "200"), 0);
	assert_int_equal(probe_target(w.pid, &P), 0);
	n = test_list_tids(w.pid, tids, 256);
	assert_int_equal(n, 201);
	prober = fork();
	assert_true(prober >= 0);
	if (prober == 0) {
		for (;;)
			ctp_jep_read_ptrace(&P.t, tids, (size_t)n, C, 1000);
	}
	/* Let it get well into the thread list, then kill it. */
	for (int i = 0; i < 5; i++) {
		struct timespec ts = {0, 20 * 1000 * 1000 + i * 7000000};

		nanosleep(&ts, NULL);
	}
	kill(prober, SIGKILL);
	waitpid(prober, NULL, 0);
	/* The kernel resumes a tracee whose tracer died; give it a moment. */
	for (int i = 0; i < 100 && stopped != 0; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		stopped = stopped_threads(w.pid);
		if (stopped)
			nanosleep(&ts, NULL);
	}
	assert_int_equal(stopped, 0);

	/* SIGTERM mid-probe: the prober detaches, then dies of it. */
	prober = fork();
	assert_true(prober >= 0);
	if (prober == 0) {
		for (;;)
			ctp_jep_read_ptrace(&P.t, tids, (size_t)n, C, 1000);
	}
	{
		struct timespec ts = {0, 60 * 1000 * 1000};
		int st;

		nanosleep(&ts, NULL);
		kill(prober, SIGTERM);
		assert_int_equal(waitpid(prober, &st, 0), prober);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	}
	/* No grace period this time: the detach came before the death. */
	assert_int_equal(stopped_threads(w.pid), 0);
	reap(&w);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef JEP_WORKER_STATIC
		cmocka_unit_test_teardown(test_static_hold, teardown),
		cmocka_unit_test_teardown(test_shared_hold, teardown),
		cmocka_unit_test_teardown(test_stripped, teardown),
		cmocka_unit_test_teardown(test_split_debuginfo, teardown),
		cmocka_unit_test_teardown(test_fullstatic, teardown),
		cmocka_unit_test_teardown(test_plain, teardown),
		cmocka_unit_test_teardown(test_ptrace_fallback, teardown),
		cmocka_unit_test_teardown(test_churn, teardown),
		cmocka_unit_test_teardown(test_stop_free, teardown),
		cmocka_unit_test_teardown(test_sigkill_fallback, teardown),
#endif
	};

	if (setup(NULL))
		return 77;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
