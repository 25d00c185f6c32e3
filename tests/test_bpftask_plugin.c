/* SPDX-License-Identifier: MIT */
/*
 * The bpf-task plugin through the harness over a real engine: what it
 * offers (the "task" source, a walk source where the core has
 * source_add, a plain one on an older core, nothing on a proc root that
 * is not this kernel's), the walk list of a pass (sorted, this thread in
 * it with its name), fill through task->walked and by lookup, a task born
 * after the pass (a counted miss, found by the next pass), a failed pass
 * (max_tasks too small), passes refused by a seccomp filter after
 * init, and the check on this kernel at init (a value made unequal is
 * never offered, the hint says so). The live cases need root and a kernel that
 * loads the program, else they skip with the reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>
#include <time.h>

#include <cmocka.h>

#include "ctprof/source-process.h"
#include "ctprof/source-task.h"
#include "harness.h"
#include "io_parse.h"
#include "procfs_parse.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/bpf-task.so"

static int setup(void **state)
{
	return hx_fx_setup(state, PLUGIN_PATH);
}

/* The "process" source the plugin offered through take_process, which
 * takes it where the core (until it serves process sources) refuses it. */
static struct ctp_source_desc proc_desc;
static bool proc_offered;
static struct hx_fx *proc_fx;

static int take_process(struct ctp_ctx *ctx, const struct ctp_source_desc *d)
{
	if (d->size >= offsetof(struct ctp_source_desc, scope) +
			       sizeof(d->scope) &&
	    d->scope == CTP_SCOPE_PROCESS) {
		proc_desc = *d;
		proc_offered = true;
		return 0;
	}
	return proc_fx->ctx.core.source_add(ctx, d);
}

/* Load with the live /proc and /sys as the roots, the process source
 * taken (take_process) with take: hx_fx_load's return (no cmocka
 * assertion: a forked child calls it too). */
/* The next load_live as a recorder's (ctp_api.recording true). */
static bool as_recorder;

static int load_live(struct hx_fx *fx, const char *const *opts, size_t api_size,
		     bool take)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.eng.recording = as_recorder;
	proc_offered = false;
	if (take) {
		proc_fx = fx;
		fx->ctx.source_add = take_process;
	}
	fx->state = NULL;
	fx->ctx.eng.roots.proc_fd =
		open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fx->ctx.eng.roots.sys_fd =
		open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return hx_fx_load(fx, api_size);
}

/* load_live, asserted; false (the test to skip, said why) when not root
 * or where the source is not offered. */
static bool start_live_as(struct hx_fx *fx, const char *const *opts,
			  size_t api_size, bool take)
{
	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		return false;
	}
	assert_int_equal(load_live(fx, opts, api_size, take), 0);
	if (fx->ctx.eng.n_sources == 0) {
		printf("SKIP: no source offered: %s\n", hx_hint(&fx->ctx));
		hx_fx_stop(fx);
		return false;
	}
	return true;
}

static bool start_live(struct hx_fx *fx, const char *const *opts,
		       size_t api_size)
{
	return start_live_as(fx, opts, api_size, false);
}

static int fill(struct hx_fx *fx, int32_t tgid, int32_t tid,
		const struct ctp_walk_task *walked, struct ctp_src_task *out)
{
	struct hx_task ft;
	size_t len = 0;
	int r;

	hx_task_init(&ft, tgid, tid);
	ft.task.walked = walked;
	memset(ft.src_buf, 0x5a, sizeof(ft.src_buf));
	r = fx->ctx.eng.sources[0].fill(hx_state(&fx->ctx), &ft.task,
					ft.src_buf, sizeof(ft.src_buf), &len);
	if (r == 0) {
		assert_int_equal(len, sizeof(*out));
		memcpy(out, ft.src_buf, sizeof(*out));
	}
	return r;
}

static uint64_t val(const struct ctp_src_task *t, unsigned which)
{
	uint64_t v = 0;
	if (!ctp_src_task_get(t, sizeof(*t), which, &v))
		fail_msg("value %u absent", which);
	return v;
}

/* A fixture tree as the proc root: nothing loaded, nothing offered, the
 * hint says why, and the host callback is a no-op. */
static void not_live(void **state)
{
	struct hx_fx *fx = *state;
	char dir[] = "/tmp/ctp-bpftask-XXXXXX";
	struct hx_rec host;

	assert_non_null(mkdtemp(dir));
	hx_ctx_init(&fx->ctx, fx->p, NULL);
	fx->state = NULL;
	fx->ctx.eng.roots.proc_fd =
		open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fx->ctx.eng.roots.proc = dir;
	assert_int_equal(hx_fx_load(fx, 0), 0);
	assert_int_equal(fx->ctx.eng.n_sources, 0);
	if (!strstr(hx_hint(&fx->ctx), "is not this kernel's /proc"))
		fail_msg("hint \"%s\"", hx_hint(&fx->ctx));
	assert_non_null(strstr(hx_hint(&fx->ctx), dir));
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "passes"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "unavailable"), 2);
	hx_fx_stop(fx);
	rmdir(dir);
}

/* Pid 1 of a pid namespace, with a /proc of its own (own_proc: unshare -p
 * -f --mount-proc, where NSpid lists one id as in the initial namespace)
 * or the parent's (unshare -p -f): the pass's global ids are not this
 * namespace's, so nothing may be offered, and the hint says it is the pid
 * namespace (not "not this kernel's /proc"). The exit status for
 * own_pidns. */
static int own_pidns_inside(struct hx_fx *fx, bool own_proc)
{
	if (own_proc &&
	    (unshare(CLONE_NEWNS) < 0 ||
	     mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	     mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		   NULL) < 0)) {
		fprintf(stderr, "no /proc of our own: %s\n", strerror(errno));
		return 77;
	}
	if (load_live(fx, NULL, 0, false) != 0) {
		fprintf(stderr, "init failed\n");
		return 2;
	}
	if (fx->ctx.eng.n_sources != 0) {
		fprintf(stderr, "a source offered in a child pid namespace\n");
		return 1;
	}
	if (!strstr(hx_hint(&fx->ctx), "pid namespace")) {
		fprintf(stderr, "hint \"%s\"\n", hx_hint(&fx->ctx));
		return 1;
	}
	return 0;
}

/* own_pidns_inside in a new pid namespace: its exit status. */
static int in_pidns(struct hx_fx *fx, bool own_proc)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWPID) < 0)
			_exit(77);
		pid_t inner = fork();
		if (inner == 0)
			_exit(own_pidns_inside(fx, own_proc));
		if (inner < 0 || waitpid(inner, &status, 0) != inner ||
		    !WIFEXITED(status))
			_exit(3);
		_exit(WEXITSTATUS(status));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void own_pidns(void **state)
{
	struct hx_fx *fx = *state;
	int own, parents;

	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		skip();
	}
	own = in_pidns(fx, true);
	parents = in_pidns(fx, false);
	if (own == 77 || parents == 77) {
		printf("SKIP: no pid namespace (with its own /proc)\n");
		skip();
	}
	assert_int_equal(own, 0);
	assert_int_equal(parents, 0);
}

static int blocker[2] = {-1, -1}; /* the thread waits for its EOF */
static int ready[2] = {-1, -1};	  /* the thread says it has started */
static pid_t born_tid;

static void *born_after(void *arg)
{
	char c;
	(void)arg;
	born_tid = (pid_t)syscall(SYS_gettid);
	if (write(ready[1], "r", 1) != 1)
		return NULL;
	(void)!read(blocker[0], &c, 1); /* until the test closes it */
	return NULL;
}

/* stat field n of this process's thread tid. */
static uint64_t stat_of(pid_t tid, unsigned n, bool is_signed)
{
	char path[64], buf[4096];
	struct ctp_stat st;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n_read = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n_read > 0);
	assert_int_equal(ctp_parse_stat(buf, (size_t)n_read, &st), 0);
	assert_true(ctp_stat_has(&st, n));
	return is_signed ? (uint64_t)st.w[n].i : st.w[n].u;
}

/* The length of /proc/<tgid>/task/<tid>/comm's line, 0 where it cannot
 * be read (the task ended). */
static size_t comm_file_len(int32_t tgid, int32_t tid)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)tgid,
		 (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return 0;
	return (size_t)n - (buf[n - 1] == '\n');
}

static void live(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_walk_task *tasks;
	struct ctp_walk_task other;
	struct ctp_src_task t;
	struct hx_rec host;
	pid_t me = getpid(), tid = (pid_t)syscall(SYS_gettid);
	size_t n, mine = SIZE_MAX, flagged = 0;
	pthread_t th;
	char c;

	if (!start_live(fx, NULL, 0))
		skip();
	/* "task", "cgroup-v1" in the initial cgroup namespace, and
	 * "process" beside them where the core takes it. */
	assert_true(fx->ctx.eng.n_sources >= 2);
	assert_string_equal(fx->ctx.eng.sources[0].name, CTP_SOURCE_TASK);
	assert_non_null(fx->ctx.eng.sources[0].walk);
	assert_string_equal(fx->ctx.eng.sources[1].name, "cgroup-v1");
	assert_null(fx->ctx.eng.sources[1].walk);
	/* Before any pass: no list, no values. */
	assert_true(fx->ctx.eng.sources[0].walk(hx_state(&fx->ctx), &tasks,
						&n) < 0);
	assert_int_equal(fill(fx, me, tid, NULL, &t), -ENODATA);

	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "passes"), 1);
	assert_true(fx->ctx.eng.sources[0].says_complete);
	assert_true(fx->ctx.eng.sources[0].walk(hx_state(&fx->ctx), &tasks,
						&n) >= 0);
	assert_true(n > 1);
	assert_int_equal(hx_summary(&fx->ctx, "tasks"), n);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && !(tasks[i - 1].tgid < tasks[i].tgid ||
			       (tasks[i - 1].tgid == tasks[i].tgid &&
				tasks[i - 1].tid < tasks[i].tid)))
			fail_msg("list not sorted at %zu", i);
		assert_int_equal(tasks[i].reserved, 0);
		assert_non_null(memchr(tasks[i].comm, '\0', 16));
		if (tasks[i].flags & CTP_WALK_COMM_FILE) {
			flagged++;
			/* PF_WQ_WORKER, or a kernel thread of a long name. */
			assert_true(!strncmp(tasks[i].comm, "kworker/", 8) ||
				    strlen(tasks[i].comm) == 15);
		} else {
			/* A name /proc prints longer than comm (a kernel
			 * thread's whole name) must be flagged. A user
			 * task's comm file holds at most 15 bytes. */
			size_t len = comm_file_len(tasks[i].tgid, tasks[i].tid);
			if (len > 15)
				fail_msg("%d/%d \"%s\": its comm file has %zu "
					 "bytes, not flagged",
					 (int)tasks[i].tgid, (int)tasks[i].tid,
					 tasks[i].comm, len);
		}
		if (tasks[i].tgid == me && tasks[i].tid == tid)
			mine = i;
	}
	/* Every kernel has workqueue workers. */
	assert_true(flagged > 0);
	assert_true(mine != SIZE_MAX);
	assert_string_equal(tasks[mine].comm, "test_bpftask_pl"); /* 15 */

	/* Through task->walked. */
	assert_int_equal(fill(fx, me, tid, &tasks[mine], &t), 0);
	assert_int_equal(hx_summary(&fx->ctx, "fill_walked"), 1);
	assert_int_equal(t.abi, 1);
	assert_int_equal(t.size, sizeof(t));
	/* What does not move for this thread equals its stat. */
	assert_int_equal(val(&t, CTP_SRC_TASK_START_TIME),
			 stat_of(tid, 22, false));
	assert_int_equal(val(&t, CTP_SRC_TASK_NICE), stat_of(tid, 19, true));
	assert_int_equal(val(&t, CTP_SRC_TASK_PRIORITY),
			 stat_of(tid, 18, true));
	assert_int_equal(val(&t, CTP_SRC_TASK_POLICY), stat_of(tid, 41, false));
	assert_int_equal(val(&t, CTP_SRC_TASK_RT_PRIORITY),
			 stat_of(tid, 40, false));
	assert_int_equal(val(&t, CTP_SRC_TASK_STATE), 'R'); /* it ran */
	assert_true(val(&t, CTP_SRC_TASK_MINFLT) <= stat_of(tid, 10, false));

	/* walked NULL (the core listed /proc), or another task's entry: a
	 * lookup, the same values. */
	struct ctp_src_task t2;
	assert_int_equal(fill(fx, me, tid, NULL, &t2), 0);
	assert_int_equal(hx_summary(&fx->ctx, "fill_lookup"), 1);
	assert_memory_equal(&t, &t2, sizeof(t));
	assert_int_equal(fill(fx, me, tid, &tasks[mine == 0 ? 1 : 0], &t2), 0);
	other = tasks[mine];
	assert_int_equal(fill(fx, me, tid, &other, &t2), 0);
	assert_int_equal(hx_summary(&fx->ctx, "fill_lookup"), 3);
	assert_int_equal(hx_summary(&fx->ctx, "fill_walked"), 1);
	assert_memory_equal(&t, &t2, sizeof(t));

	/* A thread born after the pass: a miss, until the next pass. */
	assert_int_equal(pipe2(blocker, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&th, NULL, born_after, NULL), 0);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(fill(fx, me, born_tid, NULL, &t2), -ENODATA);
	assert_int_equal(hx_summary(&fx->ctx, "fill_miss"), 1);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(fill(fx, me, born_tid, NULL, &t2), 0);
	assert_int_equal(val(&t2, CTP_SRC_TASK_START_TIME),
			 stat_of(born_tid, 22, false));
	assert_int_equal(hx_summary(&fx->ctx, "passes"), 2);
	close(blocker[1]);
	assert_int_equal(pthread_join(th, NULL), 0);
	close(blocker[0]);
	close(ready[0]);
	close(ready[1]);
	hx_fx_stop(fx);
}

/* A pass over max_tasks fails: counted, walk says why, fill gives
 * nothing (the collectors read their files), and the capture goes on. */
static void pass_too_big(void **state)
{
	struct hx_fx *fx = *state;
	static const char *const opts[] = {"max_tasks", "1", NULL};
	const struct ctp_walk_task *tasks;
	struct ctp_src_task t;
	struct hx_rec host;
	size_t n;

	if (!start_live(fx, opts, 0))
		skip();
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "passes"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "pass_failed"), 1);
	/* The bound named, not strerror(E2BIG). */
	if (!strstr(fx->ctx.last_log, "more tasks than max_tasks (1)"))
		fail_msg("log \"%s\"", fx->ctx.last_log);
	assert_int_equal(
		fx->ctx.eng.sources[0].walk(hx_state(&fx->ctx), &tasks, &n),
		-E2BIG);
	assert_int_equal(fill(fx, getpid(), getpid(), NULL, &t), -ENODATA);
	hx_fx_stop(fx);
}

/*
 * bpf() refused after init (the capture child's seccomp deny-list does
 * this): the first pass says why once, in the log and the hint, and no
 * pass is tried again; each capture counts a failed pass. In a child
 * process, as the filter cannot be taken off.
 */
static void refused_after_init(void **state)
{
	struct hx_fx *fx = *state;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	const struct ctp_walk_task *tasks;
	struct hx_rec host;
	int status;
	size_t n;
	pid_t pid;

	if (!start_live(fx, NULL, 0))
		skip();
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int code = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(10);
		if (hx_fx_host(fx, &host) != 0 || hx_fx_host(fx, &host) != 0)
			code |= 1;
		if (hx_summary(&fx->ctx, "passes") != 1 ||
		    hx_summary(&fx->ctx, "pass_failed") != 2)
			code |= 2;
		if (!strstr(hx_hint(&fx->ctx), "seccomp"))
			code |= 4;
		if (fx->ctx.eng.sources[0].walk(hx_state(&fx->ctx), &tasks,
						&n) != -EPERM)
			code |= 8;
		printf("hint: %s\n", hx_hint(&fx->ctx));
		fflush(NULL);
		_exit(code);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	hx_fx_stop(fx);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The tgids under /proc, ascending, into t (at most cap); how many. */
static size_t proc_tgids(int32_t *t, size_t cap)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char *end;
		long id = strtol(e->d_name, &end, 10);
		if (*end || id <= 0 || e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		assert_true(n < cap);
		t[n++] = (int32_t)id;
	}
	closedir(d);
	qsort(t, n, sizeof(*t), cmp_i32);
	return n;
}

static bool has_i32(const int32_t *t, size_t n, int32_t v)
{
	return bsearch(&v, t, n, sizeof(*t), cmp_i32) != NULL;
}

/* Whether process tgid is in the list (sorted by tgid). */
static bool listed(const struct ctp_walk_task *t, size_t n, int32_t tgid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].tgid == tgid)
			return true;
		if (t[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* stat field n of task tid of process tgid, or UINT64_MAX where it cannot
 * be read. */
static uint64_t stat_of_task(pid_t tgid, pid_t tid, unsigned n)
{
	char path[64], buf[4096];
	struct ctp_stat st;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tgid,
		 (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	ssize_t n_read = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n_read <= 0 || ctp_parse_stat(buf, (size_t)n_read, &st) < 0 ||
	    !ctp_stat_has(&st, n))
		return UINT64_MAX;
	return st.w[n].u;
}

static int exec_go = -1;

/* The thread of exec_child that execs once told to: sleep, as the
 * process's only thread, in its leader's pid. */
static void *exec_thread(void *arg)
{
	char c;
	/* The death signal is the thread's: this one becomes the process. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(exec_go, &c, 1) == 1)
		execlp("sleep", "sleep", "1000", (char *)NULL);
	_exit(5);
	return arg;
}

/* The leader runs ~80 ms of CPU, starts exec_thread, says so on said
 * and waits. */
static void exec_child(int go, int said)
{
	struct timespec ts;
	pthread_t th;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	exec_go = go;
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec == 0 && ts.tv_nsec < 80 * 1000 * 1000);
	if (pthread_create(&th, NULL, exec_thread, NULL) != 0 ||
	    write(said, "r", 1) != 1)
		_exit(6);
	for (;;)
		pause();
}

/* A thread other than the leader execs: it takes the leader's pid and
 * start time (the kernel's de_thread()) but keeps its own times, which
 * stat then shows. A pass after the exec gives those, not the old
 * leader's kept from the pass before it as a floor. */
static void exec_from_thread(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_task t;
	struct hx_rec host;
	int go[2], said[2], status;
	char c, comm[32] = "";
	pid_t pid;

	if (!start_live(fx, NULL, 0))
		skip();
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(said, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		exec_child(go[0], said[1]);
	assert_int_equal(read(said[0], &c, 1), 1);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(fill(fx, pid, pid, NULL, &t), 0);
	/* The old leader's ~80 ms, 8 ticks at USER_HZ 100. */
	assert_true(val(&t, CTP_SRC_TASK_UTIME) + val(&t, CTP_SRC_TASK_STIME) >=
		    2);
	assert_int_equal(write(go[1], "g", 1), 1);
	/* Until it is sleep, alone and asleep. */
	for (;;) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : -1;
		if (fd >= 0)
			close(fd);
		comm[n > 0 ? n : 0] = '\0';
		if (!strcmp(comm, "sleep\n") &&
		    stat_of_task(pid, pid, 20) == 1 &&
		    stat_of_task(pid, pid, 3) != UINT64_MAX) {
			snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
			char buf[512];
			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (fd >= 0)
				close(fd);
			buf[n > 0 ? n : 0] = '\0';
			char *r = strrchr(buf, ')');
			if (r && r[1] == ' ' && r[2] == 'S')
				break;
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			fail_msg("the child ended before its exec (status %d)",
				 status);
		usleep(1000);
	}
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(fill(fx, pid, pid, NULL, &t), 0);
	uint64_t u = stat_of_task(pid, pid, 14), s = stat_of_task(pid, pid, 15);
	print_message("after the exec: utime %" PRIu64 " stime %" PRIu64
		      " from the pass, %" PRIu64 " %" PRIu64 " from stat\n",
		      val(&t, CTP_SRC_TASK_UTIME), val(&t, CTP_SRC_TASK_STIME),
		      u, s);
	assert_int_equal(val(&t, CTP_SRC_TASK_UTIME), u);
	assert_int_equal(val(&t, CTP_SRC_TASK_STIME), s);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(go[0]);
	close(go[1]);
	close(said[0]);
	close(said[1]);
	hx_fx_stop(fx);
}

/* CTP_BPFTASK_PASS with a value the loader does not know: a warning that
 * names it, not silence. */
static void pass_env_bogus(void **state)
{
	struct hx_fx *fx = *state;
	int r;

	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		skip();
	}
	setenv("CTP_BPFTASK_PASS", "bogus", 1);
	hx_ctx_init(&fx->ctx, fx->p, NULL);
	fx->ctx.log_max = CTP_LOG_WARNING;
	fx->state = NULL;
	fx->ctx.eng.roots.proc_fd =
		open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fx->ctx.eng.roots.sys_fd =
		open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = hx_fx_load(fx, 0);
	unsetenv("CTP_BPFTASK_PASS");
	assert_int_equal(r, 0);
	if (!strstr(fx->ctx.last_log, "CTP_BPFTASK_PASS=bogus ignored"))
		fail_msg("last warning \"%s\"", fx->ctx.last_log);
	hx_fx_stop(fx);
}

/* named_said: the thread has its name; named_hold: it waits for EOF. */
static int named_said[2] = {-1, -1}, named_hold[2] = {-1, -1};

static void *named_thread(void *arg)
{
	char c;
	prctl(PR_SET_NAME, "a\nb\tc\x1b[31m");
	(void)!write(named_said[1], "n", 1);
	(void)!read(named_hold[0], &c, 1); /* until the test closes it */
	return arg;
}

/* `ctprof-core bpf-task-dump --tid` on a thread named with a newline, a
 * tab and an escape sequence: one line under the header, as many columns,
 * the name escaped as show prints it. */
static void dump_names(void **state)
{
	char cmd[256], out[8192], c;
	pthread_t th;
	size_t len = 0;
	FILE *f;

	(void)state;
	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		skip();
	}
	assert_int_equal(pipe2(named_said, O_CLOEXEC), 0);
	assert_int_equal(pipe2(named_hold, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&th, NULL, named_thread, NULL), 0);
	assert_int_equal(read(named_said[0], &c, 1), 1);
	pid_t tid = 0;
	/* The thread's tid: the task whose comm is the name. */
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		char path[300], name[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n > 0 && !strncmp(name, "a\nb\tc", 5))
			tid = atoi(e->d_name);
	}
	closedir(d);
	assert_true(tid > 0);
	snprintf(cmd, sizeof(cmd), "%s bpf-task-dump --tid %d 2>/dev/null",
		 CTP_TEST_BINARY, (int)tid);
	f = popen(cmd, "r");
	assert_non_null(f);
	len = fread(out, 1, sizeof(out) - 1, f);
	int rc = pclose(f);
	close(named_hold[1]);
	pthread_join(th, NULL);
	close(named_hold[0]);
	close(named_said[0]);
	close(named_said[1]);
	out[len] = '\0';
	if (rc != 0 || len == 0) {
		printf("SKIP: bpf-task-dump printed nothing (rc %d)\n", rc);
		skip();
	}
	char *nl = strchr(out, '\n');
	assert_non_null(nl);
	size_t tabs_header = 0, tabs = 0, lines = 0;
	for (char *p = out; p < nl; p++)
		tabs_header += *p == '\t';
	for (char *p = nl + 1; *p; p++) {
		tabs += *p == '\t';
		lines += *p == '\n';
	}
	if (lines != 1 || tabs != tabs_header || strchr(out, 0x1b) ||
	    !strstr(nl, "\ta\\x0ab\\x09c\\x1b[31m\n"))
		fail_msg("dump:\n%s", out);
}

/*
 * walk() calls a pass's list complete (CTP_WALK_COMPLETE: the core then
 * lists no /proc) only where it is: a pass that lacks a process /proc
 * listed both before and after it (one that lived through the pass; on
 * this project's VM pid 1, which the kernel keeps from the iterator) is
 * never called complete. Where no pass lacks one, some of the passes are
 * (a pass during which tasks are born or end may not be: the counts the
 * plugin compares differ). list_complete counts those it called complete.
 * With iter/task's pass and with the open-coded one.
 */
static void list_complete(void **state)
{
	struct hx_fx *fx = *state;
	static const char *const iter[] = {"pass", "iter", NULL};
	static const char *const walk[] = {"pass", "open-coded", NULL};
	const char *const *opts[] = {iter, walk};
	enum { PASSES = 10, MAX_PROCS = 1 << 16 };
	int32_t *pre = calloc(MAX_PROCS, sizeof(*pre));
	int32_t *post = calloc(MAX_PROCS, sizeof(*post));

	assert_non_null(pre);
	assert_non_null(post);
	for (size_t o = 0; o < 2; o++) {
		size_t complete = 0, lacking = 0, said_missing = 0;
		int32_t lacked = 0;

		if (!start_live(fx, opts[o], 0)) {
			free(pre);
			free(post);
			skip();
		}
		assert_true(fx->ctx.eng.sources[0].says_complete);
		assert_true(fx->ctx.eng.sources[0].says_missing);
		for (int p = 0; p < PASSES; p++) {
			const struct ctp_walk_task *tasks;
			struct hx_rec host;
			size_t n, npre, npost, missing = 0;
			int r;

			npre = proc_tgids(pre, MAX_PROCS);
			assert_int_equal(hx_fx_host(fx, &host), 0);
			npost = proc_tgids(post, MAX_PROCS);
			r = fx->ctx.eng.sources[0].walk(hx_state(&fx->ctx),
							&tasks, &n);
			/* 0, complete, or how many tasks it lacks
			 * (CTP_SOURCE_WALK_SAYS_MISSING). */
			assert_true(r >= 0);
			if (r > CTP_WALK_COMPLETE)
				said_missing++;
			for (size_t i = 0; i < npre; i++)
				if (has_i32(post, npost, pre[i]) &&
				    !listed(tasks, n, pre[i])) {
					missing++;
					lacked = pre[i];
				}
			if (missing && r == CTP_WALK_COMPLETE)
				fail_msg("pass %d of %s lacks %zu processes "
					 "(%d among them) and is called "
					 "complete",
					 p, opts[o][1], missing, (int)lacked);
			lacking += missing > 0;
			complete += r == CTP_WALK_COMPLETE;
		}
		assert_int_equal(hx_summary(&fx->ctx, "list_complete"),
				 complete);
		printf("pass %s: %zu of %d passes complete, %zu lacked a "
		       "process (%d), %zu said how many tasks they lack\n",
		       opts[o][1], complete, PASSES, lacking, (int)lacked,
		       said_missing);

		if (!lacking && !complete)
			fail_msg("%s: no pass lacked a process, none was "
				 "called complete",
				 opts[o][1]);
		hx_fx_stop(fx);
	}
	free(pre);
	free(post);
}

/* A core without source_add: the same source, registered plainly (no
 * walk), and fill finds its task by lookup. */
/*
 * The check on this kernel at init: unperturbed, every value it sees is
 * equal here, nothing off. With CTP_BPFTASK_CHECK_SKEW=utime the pass's
 * utime is made unequal before the comparison: utime is then never
 * offered, stime still is, the hint names it, the counter says 1.
 */
static void check_on_kernel(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_task t;
	struct hx_rec host;
	pid_t me = getpid(), tid = (pid_t)syscall(SYS_gettid);
	const struct ctp_walk_task *tasks;
	size_t n;
	uint64_t v;

	unsetenv("CTP_BPFTASK_CHECK_SKEW");
	if (!start_live(fx, NULL, 0))
		skip();
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_not_run"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 0);
	assert_false(hx_hint_set(&fx->ctx));
	assert_int_equal(fill(fx, me, tid, NULL, &t), 0);
	assert_true(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v));
	hx_fx_stop(fx);

	setenv("CTP_BPFTASK_CHECK_SKEW", "utime", 1);
	bool live = start_live(fx, NULL, 0);
	unsetenv("CTP_BPFTASK_CHECK_SKEW");
	if (!live)
		skip();
	if (!strstr(hx_hint(&fx->ctx), "stat utime") ||
	    strstr(hx_hint(&fx->ctx), "stime"))
		fail_msg("hint \"%s\"", hx_hint(&fx->ctx));
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 1);
	assert_int_equal(hx_summary(&fx->ctx, "check_not_run"), 0);
	/* Absent for every task, this one and the first. */
	assert_int_equal(fill(fx, me, tid, NULL, &t), 0);
	assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v));
	assert_true(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_STIME, &v));
	assert_true(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_MINFLT, &v));
	assert_true(fx->ctx.eng.sources[0].walk(hx_state(&fx->ctx), &tasks,
						&n) >= 0);
	assert_true(n > 1);
	assert_int_equal(fill(fx, tasks[0].tgid, tasks[0].tid, &tasks[0], &t),
			 0);
	assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v));
	/* Counted once, not per capture. */
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 1);
	hx_fx_stop(fx);
}

/* Whether the kernel is at least maj.min. */
static bool kernel_at_least(unsigned maj, unsigned min)
{
	struct utsname u;
	unsigned a, b;

	return uname(&u) == 0 && sscanf(u.release, "%u.%u", &a, &b) == 2 &&
	       (a > maj || (a == maj && b >= min));
}

/*
 * The loaders: the light skeleton where it was built and the kernel has
 * what it needs (5.17+), said in the line that offers the source; libbpf's
 * where the light one fails, here because a seccomp filter refuses BPF_PROG_RUN
 * (the light skeleton's loader program runs through it), with that
 * failure's reason in the same line and the same source offered. The
 * second in a child process, as the filter cannot be taken off.
 */
static void loaders(void **state)
{
	struct hx_fx *fx = *state;
	/* EPERM for bpf(BPF_PROG_RUN, ...) (the command's low 32 bits). */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0]) +
				 (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4
									 : 0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 10 /* BPF_PROG_RUN */, 0,
			 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	struct hx_rec host;
	int status;
	pid_t pid;

	if (!start_live(fx, NULL, 0))
		skip();
	printf("log: %s\n", fx->ctx.last_log);
	if (strstr(fx->ctx.last_log, "(the light one: not built: ")) {
		hx_fx_stop(fx);
		printf("SKIP: the light skeleton was not built\n");
		skip();
	}
	if (kernel_at_least(5, 17) &&
	    !strstr(fx->ctx.last_log, "loaded by the light skeleton"))
		fail_msg("not the light skeleton on 5.17+: \"%s\"",
			 fx->ctx.last_log);
	hx_fx_stop(fx);

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ctp_src_task t;
		int code = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(10);
		if (load_live(fx, NULL, 0, false) != 0 ||
		    fx->ctx.eng.n_sources < 1)
			_exit(1);
		printf("log: %s\n", fx->ctx.last_log);
		if (!strstr(fx->ctx.last_log,
			    "loaded by libbpf's skeleton (the light one: "
			    "loading by the light skeleton: Operation not "
			    "permitted: bpf() refused by a seccomp filter)"))
			code |= 2;
		if (hx_fx_host(fx, &host) != 0 ||
		    hx_summary(&fx->ctx, "tasks") < 2 ||
		    fill(fx, getpid(), getpid(), NULL, &t) != 0)
			code |= 4;
		fflush(NULL);
		_exit(code);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The option pass: by default (iter) the line that offers the source
 * says the passes are iter/task's; "open-coded" takes the open-coded
 * task iterator where the light skeleton was built and the kernel has it
 * (6.8+: the fill's trusted argument), says so, and its pass lists the
 * tasks and serves this thread (its start time as iter/task's gave it).
 */
/* Tasks on the host now (/proc/loadavg's count), 0 unknown. */
static unsigned long host_tasks(void)
{
	unsigned long run = 0, all = 0;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%*s %*s %*s %lu/%lu", &run, &all) != 2)
			all = 0;
		fclose(f);
	}
	return all;
}

/* Whether the last load's log line names the open-coded pass; fails the
 * test where it names neither. */
static bool open_coded(struct hx_fx *fx)
{
	printf("log: %s\n", fx->ctx.last_log);
	if (strstr(fx->ctx.last_log,
		   ", passes by the open-coded task iterator"))
		return true;
	if (!strstr(fx->ctx.last_log, ", passes by iter/task"))
		fail_msg("no pass named: \"%s\"", fx->ctx.last_log);
	return false;
}

/* The open-coded pass can load here: 6.8+ and the light skeletons built. */
static bool walk_loads(struct hx_fx *fx)
{
	return kernel_at_least(6, 8) &&
	       !strstr(fx->ctx.last_log, "(the light one: not built: ");
}

static void pass_option(void **state)
{
	struct hx_fx *fx = *state;
	const char *const iter[] = {"pass", "iter", NULL};
	const char *const walk[] = {"pass", "open-coded", NULL};
	const char *const dflt[] = {"pass", "auto", NULL};
	struct ctp_src_task t;
	struct hx_rec host;
	unsigned long before, after;
	uint64_t start;

	if (!start_live(fx, iter, 0))
		skip();
	if (open_coded(fx))
		fail_msg("not iter/task with pass: iter");
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "open_coded"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "open_coded_runs"), 0);
	assert_int_equal(fill(fx, getpid(), getpid(), NULL, &t), 0);
	start = val(&t, CTP_SRC_TASK_START_TIME);
	hx_fx_stop(fx);
	if (!start_live(fx, walk, 0))
		skip();
	bool walking = open_coded(fx);
	if (walk_loads(fx) && !walking)
		fail_msg("not the open-coded pass on 6.8+");
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_true(hx_summary(&fx->ctx, "tasks") >= 2);
	if (walking) {
		/* Counted: the pass, its runs (the list's and at least one
		 * of threads; the list's alone where the host has more
		 * processes than it holds and iter/task took the whole
		 * pass), its longest run's time. */
		uint64_t whole = hx_summary(&fx->ctx, "open_coded_whole");
		assert_int_equal(hx_summary(&fx->ctx, "open_coded") + whole, 1);
		assert_true(hx_summary(&fx->ctx, "open_coded_runs") >=
			    (whole ? 1u : 2u));
	}
	assert_int_equal(fill(fx, getpid(), getpid(), NULL, &t), 0);
	assert_int_equal(val(&t, CTP_SRC_TASK_START_TIME), start);
	hx_fx_stop(fx);
	/* auto: a recorder's passes repay the larger load. */
	as_recorder = true;
	bool ok = start_live(fx, dflt, 0);
	as_recorder = false;
	if (!ok)
		skip();
	if (walk_loads(fx) && !open_coded(fx))
		fail_msg("auto: not the open-coded pass for a recorder");
	hx_fx_stop(fx);
	/* auto, one-shot: by the host's tasks (16,384 and more: open-coded),
	 * checked where the count stayed on one side of it. */
	before = host_tasks();
	if (!start_live(fx, NULL, 0))
		skip();
	after = host_tasks();
	if (before && after && (before < 16384) == (after < 16384) &&
	    (walk_loads(fx) || before < 16384) &&
	    open_coded(fx) != (before >= 16384))
		fail_msg("auto, one-shot at %lu tasks: the wrong pass", before);
	hx_fx_stop(fx);
}

/* ---- The process source ------------------------------------------------ */

/* A child process: it reaps a child of its own that ran and faulted (its
 * cutime and cminflt count) and joins a thread that did the work below
 * (its counters in the signal block), then three threads (its main one
 * too) burn ~30 ms of CPU, fault, write, and block; ready gets a byte a
 * thread. */
static void *proc_worker(void *arg)
{
	int *fds = arg; /* ready, hold (-1: none) */
	struct timespec t0, t;
	char buf[256] = {0}, c;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
		 30000000L);
	char *p = malloc(1 << 20);
	if (p) {
		for (size_t i = 0; i < (1u << 20); i += 4096)
			p[i] = 1;
		free(p);
	}
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, buf, sizeof(buf));
		close(fd);
	}
	if (fds[0] >= 0)
		(void)!write(fds[0], "r", 1);
	while (fds[1] >= 0 && read(fds[1], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static pid_t proc_child(int *hold_w)
{
	int rd[2], hd[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe2(rd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hd, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[2] = {rd[1], hd[0]};
		pthread_t th[2];
		close(rd[0]);
		close(hd[1]);
		signal(SIGCHLD, SIG_DFL);
		pid_t g = fork();
		if (g == 0) {
			char *p = malloc(1 << 20);
			for (size_t i = 0; p && i < (1u << 20); i += 4096)
				p[i] = 1;
			struct timespec t0, t;
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
			do {
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
					 t.tv_nsec - t0.tv_nsec <
				 30000000L);
			_exit(0);
		}
		if (g < 0 || waitpid(g, NULL, 0) != g)
			_exit(1);
		/* A thread that works and exits: its counters move into
		 * the signal block. */
		int gone[2] = {-1, -1}; /* no byte, no block */
		if (pthread_create(&th[0], NULL, proc_worker, gone) ||
		    pthread_join(th[0], NULL))
			_exit(1);
		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, proc_worker, fds))
				_exit(1);
		proc_worker(fds);
		_exit(0);
	}
	close(rd[1]);
	close(hd[0]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(read(rd[0], &c, 1), 1);
	close(rd[0]);
	/* Each thread blocked in read(): 'S' in its stat. */
	for (int tries = 0; tries < 2000; tries++) {
		char path[64];
		int blocked = 0;
		DIR *d;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		d = opendir(path);
		assert_non_null(d);
		for (struct dirent *e; (e = readdir(d));) {
			char buf[1024], spath[320];
			struct ctp_stat st;
			if (e->d_name[0] == '.')
				continue;
			snprintf(spath, sizeof(spath), "/proc/%d/task/%s/stat",
				 (int)pid, e->d_name);
			int fd = open(spath, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
			if (fd >= 0)
				close(fd);
			if (n > 0 && ctp_parse_stat(buf, (size_t)n, &st) == 0 &&
			    st.w[3].c == 'S')
				blocked++;
		}
		closedir(d);
		if (blocked == 3)
			break;
		usleep(1000);
	}
	*hold_w = hd[1];
	return pid;
}

static void proc_child_end(pid_t pid, int hold_w)
{
	close(hold_w);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The child's <pid>/stat and <pid>/io in the source's layout. */
static void proc_files(pid_t pid, struct ctp_src_process *out)
{
	static const unsigned stat_field[9] = {20, 10, 12, 14, 15,
					       11, 13, 16, 17};
	char path[64], buf[4096];
	struct ctp_stat st;
	struct ctp_io io;
	ssize_t n;
	int fd;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	assert_int_equal(ctp_parse_stat(buf, (size_t)n, &st), 0);
	for (unsigned i = 0; i < 9; i++) {
		assert_true(ctp_stat_has(&st, stat_field[i]));
		out->v[i] = st.w[stat_field[i]].u; /* NUM_THREADS .. CSTIME */
	}
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	assert_int_equal(ctp_parse_io(buf, (size_t)n, &io), 0);
	for (unsigned i = 0; i < CTP_IO_N; i++)
		out->v[CTP_SRC_PROC_RCHAR + i] = io.v[i];
}

static int pfill(struct hx_fx *fx, pid_t tgid, struct ctp_src_process *out)
{
	struct hx_task ft;
	size_t len = 0;
	int r;

	hx_task_init(&ft, tgid, tgid);
	memset(ft.src_buf, 0x5a, sizeof(ft.src_buf));
	r = proc_desc.fill(hx_state(&fx->ctx), &ft.task, ft.src_buf,
			   sizeof(ft.src_buf), &len);
	if (r == 0) {
		assert_int_equal(len, sizeof(*out));
		memcpy(out, ft.src_buf, sizeof(*out));
	}
	return r;
}

/*
 * The source "process" where a core takes it (take_process): offered with
 * its layout, the check at init judging its values on a child of its own
 * (nothing off here), and every value of a quiescent child of three
 * threads, which reaped one of its own, equal to its <pid>/stat and
 * <pid>/io (each counter not 0 where the work makes it count). A process
 * not in the pass: nothing, counted. Where the core refuses it (every
 * other test here), the task source alone, nothing broken.
 */
static void process_source(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_process p, f;
	struct hx_rec host;
	int hold_w;
	pid_t pid;

	if (geteuid() != 0) {
		printf("SKIP: not root\n");
		skip();
	}
	unsetenv("CTP_BPFTASK_CHECK_SKEW");
	pid = proc_child(&hold_w);
	if (!start_live_as(fx, NULL, 0, true)) {
		proc_child_end(pid, hold_w);
		skip();
	}
	assert_true(proc_offered);
	assert_string_equal(proc_desc.name, CTP_SOURCE_PROCESS);
	assert_int_equal(proc_desc.n_values, CTP_SRC_PROC_N_VALUES);
	assert_int_equal(proc_desc.valid_words, 1);
	assert_null(proc_desc.walk);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_not_run"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 0);
	assert_false(hx_hint_set(&fx->ctx));

	assert_int_equal(pfill(fx, pid, &p), 0);
	assert_int_equal(hx_summary(&fx->ctx, "proc_fill"), 1);
	assert_int_equal(p.abi, 1);
	assert_int_equal(p.size, sizeof(p));
	proc_files(pid, &f);
	/* Every value of a file (MM_GEN is none: mm_gen below). */
	for (unsigned i = 0; i < CTP_SRC_PROC_MM_GEN; i++) {
		uint64_t v;
		if (!ctp_src_process_get(&p, sizeof(p), i, &v))
			fail_msg("value %u not offered", i);
		printf("process value %2u: %llu from the source, %llu from "
		       "its file\n",
		       i, (unsigned long long)v, (unsigned long long)f.v[i]);
		if (v != f.v[i])
			fail_msg("value %u: %llu, file %llu", i,
				 (unsigned long long)v,
				 (unsigned long long)f.v[i]);
	}
	/* The work counted: 3 threads, faults, CPU, a write, a child. */
	assert_int_equal(p.v[CTP_SRC_PROC_NUM_THREADS], 3);
	assert_true(p.v[CTP_SRC_PROC_MINFLT] > 0);
	assert_true(p.v[CTP_SRC_PROC_UTIME] + p.v[CTP_SRC_PROC_STIME] >= 3);
	assert_true(p.v[CTP_SRC_PROC_CMINFLT] > 0);
	assert_true(p.v[CTP_SRC_PROC_WCHAR] >= 4 * 256);
	assert_true(p.v[CTP_SRC_PROC_SYSCW] >= 4);
	/* Not in the pass (no such process). */
	assert_int_equal(pfill(fx, 0x7ffffff0, &p), -ENODATA);
	assert_int_equal(hx_summary(&fx->ctx, "proc_miss"), 1);
	hx_fx_stop(fx);
	proc_child_end(pid, hold_w);
}

/* A child that maps a page when asked ('m'), touches memory it has
 * ('t'), and says when done; ends at EOF. */
static pid_t mm_child(int *cmd_w, int *ack_r)
{
	int c2p[2], p2c[2];
	pid_t pid;

	assert_int_equal(pipe2(c2p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p2c, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char mem[64 << 10];
		char c;
		size_t at = 0;
		close(c2p[0]);
		close(p2c[1]);
		while (read(p2c[0], &c, 1) == 1) {
			if (c == 'm' && mmap(NULL, 4096, PROT_READ,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1,
					     0) == MAP_FAILED)
				_exit(1);
			if (c == 't') {
				mem[at] = 1; /* a page fault, no new mapping */
				at = (at + 4096) % sizeof(mem);
			}
			if (write(c2p[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(c2p[1]);
	close(p2c[0]);
	*cmd_w = p2c[1];
	*ack_r = c2p[0];
	return pid;
}

static void mm_child_do(int cmd_w, int ack_r, char c)
{
	char a;
	assert_int_equal(write(cmd_w, &c, 1), 1);
	assert_int_equal(read(ack_r, &a, 1), 1);
	assert_int_equal(a, c);
}

/* The process's MM_GEN over passes of a live kernel: offered for a
 * process (not for a kernel thread), the same across passes while its
 * mappings are (page faults and reads of its maps change nothing), another
 * after it maps a page, then the same again; the leader's of this process
 * another than the child's. */
static uint64_t mm_gen_of(struct hx_fx *fx, pid_t pid)
{
	struct ctp_src_process p;
	struct hx_rec host;
	uint64_t g;

	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(pfill(fx, pid, &p), 0);
	if (!ctp_src_process_get(&p, sizeof(p), CTP_SRC_PROC_MM_GEN, &g))
		return 0;
	assert_true(g != 0);
	return g;
}

static void mm_gen(void **state)
{
	struct hx_fx *fx = *state;
	int cmd_w, ack_r;
	pid_t pid;
	char maps[4096];

	if (!start_live_as(fx, NULL, 0, true))
		skip();
	pid = mm_child(&cmd_w, &ack_r);
	mm_child_do(cmd_w, ack_r, 't');
	uint64_t g0 = mm_gen_of(fx, pid);
	if (!g0) {
		/* A kernel without mm_lock_seq (CONFIG_PER_VMA_LOCK). */
		printf("SKIP: no MM_GEN on this kernel\n");
		close(cmd_w);
		waitpid(pid, NULL, 0);
		hx_fx_stop(fx);
		skip();
	}
	assert_true(mm_gen_of(fx, pid) == g0);
	/* Faults and a read of the maps move nothing. */
	for (int i = 0; i < 4; i++)
		mm_child_do(cmd_w, ack_r, 't');
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	int fd = open(maps, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	while (read(fd, maps, sizeof(maps)) > 0)
		;
	close(fd);
	assert_true(mm_gen_of(fx, pid) == g0);
	/* A new mapping moves it, once. */
	mm_child_do(cmd_w, ack_r, 'm');
	uint64_t g1 = mm_gen_of(fx, pid);
	assert_true(g1 != 0 && g1 != g0);
	assert_true(mm_gen_of(fx, pid) == g1);
	mm_child_do(cmd_w, ack_r, 'm');
	assert_true(mm_gen_of(fx, pid) != g1);
	/* Another process, another value; kthreadd (pid 2) none. */
	assert_true(mm_gen_of(fx, getpid()) != mm_gen_of(fx, pid));
	assert_int_equal(mm_gen_of(fx, 2), 0);
	close(cmd_w);
	close(ack_r);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	hx_fx_stop(fx);
}

/*
 * A check that cannot run (CTP_BPFTASK_CHECK_FAIL=2: init's try and the
 * first capture's): every value it judges is read from the files, not the
 * pass (stat's, status', io's, the process source's), the others stay
 * (the watermarks, which no file of the check has), the hint says why and
 * check_not_run counts each such capture. The third try (the third
 * capture: tries after 1, then 2 captures) runs, and from then on the
 * values are offered, the hint cleared.
 */
static void check_not_run_retry(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_task t;
	struct ctp_src_process p;
	struct hx_rec host;
	pid_t me = getpid(), tid = (pid_t)syscall(SYS_gettid);
	uint64_t v;

	unsetenv("CTP_BPFTASK_CHECK_SKEW");
	setenv("CTP_BPFTASK_CHECK_FAIL", "2", 1);
	bool live = start_live_as(fx, NULL, 0, true);
	unsetenv("CTP_BPFTASK_CHECK_FAIL"); /* read at init */
	if (!live)
		skip();
	/* Each capture's hint, not init's (which would stay for all). */
	assert_false(hx_hint_set(&fx->ctx));
	for (int capture = 1; capture <= 2; capture++) {
		assert_int_equal(hx_fx_host(fx, &host), 0);
		if (!strstr(hx_hint(&fx->ctx),
			    "could not run (CTP_BPFTASK_CHECK_FAIL)"))
			fail_msg("hint \"%s\"", hx_hint(&fx->ctx));
		assert_int_equal(hx_summary(&fx->ctx, "check_not_run"),
				 capture);
		assert_int_equal(fill(fx, me, tid, NULL, &t), 0);
		assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME,
					      &v));
		assert_false(ctp_src_task_get(&t, sizeof(t),
					      CTP_SRC_TASK_MINFLT, &v));
		assert_false(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_RCHAR,
					      &v));
		assert_true(ctp_src_task_get(&t, sizeof(t),
					     CTP_SRC_TASK_HIWATER_RSS, &v));
		assert_int_equal(pfill(fx, me, &p), 0);
		assert_false(ctp_src_process_get(&p, sizeof(p),
						 CTP_SRC_PROC_UTIME, &v));
	}
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_not_run"), 2);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 0);
	if (hx_hint_set(&fx->ctx))
		fail_msg("hint \"%s\"", hx_hint(&fx->ctx));
	assert_int_equal(fill(fx, me, tid, NULL, &t), 0);
	assert_true(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v));
	assert_true(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_RCHAR, &v));
	assert_int_equal(pfill(fx, me, &p), 0);
	assert_true(ctp_src_process_get(&p, sizeof(p), CTP_SRC_PROC_UTIME, &v));
	hx_fx_stop(fx);
}

/* Write text to dir/name: 0 or -errno. */
static int put(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int r = n == (ssize_t)strlen(text) ? 0 : -errno;
	close(fd);
	return r;
}

/* The pids controller this process is under: its hierarchy's mount
 * (cgroup v1's pids, else v2 at /sys/fs/cgroup when it has pids) into
 * root, and the process's cgroup there into orig. */
static bool pids_cgroup(char *root, size_t rl, char *orig, size_t ol)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'),
		     *c2 = c1 ? strchr(c1 + 1, ':') : 0;
		if (!c2)
			continue;
		*c2 = '\0';
		if (!strcmp(c1 + 1, "pids")) {
			snprintf(root, rl, "/sys/fs/cgroup/pids");
			found = true;
		} else if (!strcmp(line, "0") && !c1[1]) {
			char ctl[256] = "";
			FILE *g = fopen("/sys/fs/cgroup/cgroup.controllers",
					"re");
			found = g && fgets(ctl, sizeof(ctl), g) &&
				strstr(ctl, "pids");
			if (g)
				fclose(g);
			snprintf(root, rl, "/sys/fs/cgroup");
		}
		if (found)
			snprintf(orig, ol, "%s%s", root, c2 + 1);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * A real reason for the check not to run: this process in a pids cgroup
 * it fills (pids.max its own thread count), so the helper thread cannot
 * start. The values it judges come from the files, the hint says why;
 * once the limit is lifted, the capture that tries again (the third)
 * runs it and the values are offered. Checked without asserting until
 * the process is back in its own cgroup.
 */
static void check_pid_limit(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_task t;
	struct hx_rec host;
	pid_t me = getpid(), tid = (pid_t)syscall(SYS_gettid);
	char root[256], orig[512], mine[600], pid[32], thr[32];
	const char *bad = NULL;
	char hint[512] = "";
	uint64_t v;

	unsetenv("CTP_BPFTASK_CHECK_FAIL");
	unsetenv("CTP_BPFTASK_CHECK_SKEW");
	if (geteuid() != 0 ||
	    !pids_cgroup(root, sizeof(root), orig, sizeof(orig))) {
		printf("SKIP: not root, or no pids controller\n");
		skip();
	}
	snprintf(mine, sizeof(mine), "%s/ctp-test-check-%d", root, (int)me);
	snprintf(pid, sizeof(pid), "%d", (int)me);
	if (mkdir(mine, 0755) < 0 && errno != EEXIST) {
		printf("SKIP: cannot make %s: %s\n", mine, strerror(errno));
		skip();
	}
	/* Every thread this process has now, and not one more. */
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	snprintf(thr, sizeof(thr), "%d", n);
	if (put(mine, "pids.max", thr) < 0 ||
	    put(mine, "cgroup.procs", pid) < 0) {
		rmdir(mine);
		printf("SKIP: cannot limit this process in %s\n", mine);
		skip();
	}
	if (!start_live_as(fx, NULL, 0, true)) {
		put(orig, "cgroup.procs", pid);
		rmdir(mine);
		skip();
	}
	if (hx_fx_host(fx, &host) != 0)
		bad = "first capture";
	snprintf(hint, sizeof(hint), "%s", hx_hint(&fx->ctx));
	if (!bad && !strstr(hint, "could not run (the helper thread cannot "
				  "start"))
		bad = "hint while limited";
	if (!bad && (fill(fx, me, tid, NULL, &t) != 0 ||
		     ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v)))
		bad = "utime offered while the check could not run";
	if (!bad && put(mine, "pids.max", "max") < 0)
		bad = "pids.max max";
	for (int k = 0; !bad && k < 2; k++)
		if (hx_fx_host(fx, &host) != 0)
			bad = "later captures";
	if (!bad && hx_hint_set(&fx->ctx)) {
		snprintf(hint, sizeof(hint), "%s", hx_hint(&fx->ctx));
		bad = "hint after the limit";
	}
	if (!bad && (fill(fx, me, tid, NULL, &t) != 0 ||
		     !ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v)))
		bad = "utime not offered once the check ran";
	hx_fx_stop(fx);
	int back = put(orig, "cgroup.procs", pid);
	rmdir(mine);
	assert_int_equal(back, 0);
	if (bad)
		fail_msg("%s (hint \"%s\")", bad, hint);
}

/* The check at init with a process value made unequal
 * (CTP_BPFTASK_CHECK_SKEW): that value is never offered, the others are,
 * the hint names it, counted once. */
static void process_check_off(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_process p;
	struct hx_rec host;
	uint64_t v;

	setenv("CTP_BPFTASK_CHECK_SKEW", "process stat utime", 1);
	bool live = start_live_as(fx, NULL, 0, true);
	unsetenv("CTP_BPFTASK_CHECK_SKEW");
	if (!live)
		skip();
	if (!strstr(hx_hint(&fx->ctx), "process stat utime") ||
	    strstr(hx_hint(&fx->ctx), "stime"))
		fail_msg("hint \"%s\"", hx_hint(&fx->ctx));
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 1);
	assert_int_equal(pfill(fx, getpid(), &p), 0);
	assert_false(
		ctp_src_process_get(&p, sizeof(p), CTP_SRC_PROC_UTIME, &v));
	assert_true(ctp_src_process_get(&p, sizeof(p), CTP_SRC_PROC_NUM_THREADS,
					&v));
	/* The task source's utime is another value: still offered. */
	struct ctp_src_task t;
	assert_int_equal(
		fill(fx, getpid(), (pid_t)syscall(SYS_gettid), NULL, &t), 0);
	assert_true(ctp_src_task_get(&t, sizeof(t), CTP_SRC_TASK_UTIME, &v));
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(hx_summary(&fx->ctx, "check_off"), 1);
	hx_fx_stop(fx);
}

/* ---- stat's times across runs -------------------------------------------
 *
 * A thread that does system work, then user work on command, each until
 * its own CPU time has grown by the amount asked, then blocks (its values
 * stop moving). Nobody reads its /proc stat, so the kernel's
 * prev_cputime stays where it was. */
static int tw_cmd[2] = {-1, -1}, tw_ack[2] = {-1, -1};
static pid_t tw_tid;

static uint64_t ns_of(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * User work the scheduler tick over-counts: sleep until just before each
 * tick, spin (in user space: the vDSO's coarse clock) until the tick has
 * been, sleep again. The tick charges its whole period to the task it
 * finds running, here this one in user mode, which ran a fraction of it:
 * utime's samples grow faster than the run time, so cputime_adjust()'s
 * scaled stime (stime * rtime / (stime + utime)) goes down. cs * 10 ms of
 * wall time.
 */
static void over_counted(int cs)
{
	struct timespec res, t;
	uint64_t tick, end = ns_of(CLOCK_MONOTONIC) + (uint64_t)cs * 10000000u;
	uint64_t last = ns_of(CLOCK_MONOTONIC_COARSE), now;

	clock_getres(CLOCK_MONOTONIC_COARSE, &res); /* the tick's period */
	tick = (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
	while ((now = ns_of(CLOCK_MONOTONIC)) < end) {
		uint64_t at = last + tick - tick / 10, c, spun;
		if (at > now) {
			t.tv_sec = (time_t)(at / 1000000000u);
			t.tv_nsec = (long)(at % 1000000000u);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t,
					NULL);
		}
		/* Until the coarse clock moves (a tick), then a little more
		 * for this CPU's own tick; at most two periods. */
		spun = ns_of(CLOCK_MONOTONIC);
		while ((c = ns_of(CLOCK_MONOTONIC_COARSE)) == last &&
		       ns_of(CLOCK_MONOTONIC) - spun < 2 * tick)
			;
		spun = ns_of(CLOCK_MONOTONIC);
		while (ns_of(CLOCK_MONOTONIC) - spun < tick / 40)
			;
		last = c;
	}
}

static void *times_worker(void *arg)
{
	static char zero[1 << 16];
	char c[2];
	int z = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	(void)arg;
	tw_tid = (pid_t)syscall(SYS_gettid);
	while (z >= 0 && read(tw_cmd[0], c, 2) == 2) {
		uint64_t until = ns_of(CLOCK_THREAD_CPUTIME_ID) +
				 (uint64_t)c[1] * 10000000u;
		if (c[0] == 's')
			while (ns_of(CLOCK_THREAD_CPUTIME_ID) < until)
				(void)!read(z, zero, sizeof(zero));
		else
			over_counted(c[1]);
		if (write(tw_ack[1], c, 1) != 1)
			break;
	}
	if (z >= 0)
		close(z);
	return NULL;
}

/* The worker: system work of cs * 10 ms CPU ('s'), or user work the tick
 * over-counts for cs * 10 ms ('u'). */
static void tw_do(char what, int cs)
{
	char c[2] = {what, (char)cs};
	assert_int_equal(write(tw_cmd[1], c, 2), 2);
	assert_int_equal(read(tw_ack[0], c, 1), 1);
}

struct tw_times {
	uint64_t utime, stime, loaded, saved;
	int r;
};

/* One capture of the worker's stat times by a separate process (a child
 * that loads the plugin with times_state dir, takes a pass and fills the
 * worker's values): 0, or the step that failed. */
static int tw_capture(struct hx_fx *fx, const char *dir, struct tw_times *out)
{
	const char *const opts[] = {"times_state", dir, NULL};
	pid_t me = getpid(), pid;
	struct tw_times got = {.r = -1};
	int p[2], st;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ctp_src_task t;
		struct hx_rec host;
		struct hx_task ft;
		size_t len = 0;

		close(p[0]);
		if (load_live(fx, opts, 0, false) != 0)
			got.r = -2;
		else if (fx->ctx.eng.n_sources == 0)
			got.r = -3;
		else if (hx_fx_host(fx, &host) != 0)
			got.r = -4;
		else {
			hx_task_init(&ft, me, tw_tid);
			got.r = fx->ctx.eng.sources[0].fill(
				hx_state(&fx->ctx), &ft.task, ft.src_buf,
				sizeof(ft.src_buf), &len);
			memcpy(&t, ft.src_buf, sizeof(t));
			if (got.r == 0 &&
			    (!ctp_src_task_get(&t, sizeof(t),
					       CTP_SRC_TASK_UTIME,
					       &got.utime) ||
			     !ctp_src_task_get(&t, sizeof(t),
					       CTP_SRC_TASK_STIME, &got.stime)))
				got.r = -5;
			got.loaded = hx_summary(&fx->ctx, "state_loaded");
			got.saved = hx_summary(&fx->ctx, "state_saved");
			hx_fx_stop(fx);
		}
		_exit(write(p[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	close(p[1]);
	assert_int_equal(read(p[0], out, sizeof(*out)), sizeof(*out));
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return out->r;
}

/*
 * The defect of stat's times across separate runs: a thread's stime,
 * worked out by the kernel's arithmetic against a prev_cputime nobody
 * updates, goes down when its work since was all user (README.md "stat's
 * times across captures"). Run A (a separate process) hands out its
 * times and keeps them in the state directory; the thread then does user
 * work until the kernel's arithmetic (a run with times_state off: a first
 * pass, nothing to keep it up) gives less than A handed out; run B, with
 * the state, hands out at least A's for that thread -- exactly A's stime
 * where the kernel's went below it, as the thread did not run since. Where
 * the kernel's never goes below A's within the tries (the ticks' sampling
 * decides), B's are still asserted not below A's and the test says so.
 */
static void times_across_runs(void **state)
{
	struct hx_fx *fx = *state;
	char dir[] = "/tmp/ctp-bpftask-times-XXXXXX", file[64];
	struct tw_times a, k = {0}, b;
	struct stat sb;
	pthread_t th;
	bool dropped = false;
	int tries = 0, r;

	if (!start_live(fx, NULL, 0))
		skip();
	hx_fx_stop(fx);
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/bpf-task-times", dir);
	assert_int_equal(pipe2(tw_cmd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(tw_ack, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&th, NULL, times_worker, NULL), 0);
	/* Mostly system time: 0.3 s of reads of /dev/zero. */
	tw_do('s', 30);
	r = tw_capture(fx, dir, &a);
	assert_int_equal(r, 0);
	assert_int_equal(a.loaded, 0); /* no file before */
	assert_int_equal(a.saved, 1);
	assert_int_equal(lstat(file, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(sb.st_uid, geteuid());
	/* User work the tick over-counts, 0.1 s at a time, until the
	 * kernel's arithmetic gives less than run A handed out (at most 10
	 * times). */
	while (!dropped && tries < 10) {
		tries++;
		tw_do('u', 10);
		assert_int_equal(tw_capture(fx, "off", &k), 0);
		assert_int_equal(k.loaded, 0);
		assert_int_equal(k.saved, 0);
		dropped = k.stime < a.stime || k.utime < a.utime;
	}
	r = tw_capture(fx, dir, &b);
	assert_int_equal(r, 0);
	assert_true(b.loaded > 0);
	assert_int_equal(b.saved, 1);
	printf("run A: utime %llu stime %llu; the kernel's after %d tries: "
	       "utime %llu stime %llu; run B: utime %llu stime %llu\n",
	       (unsigned long long)a.utime, (unsigned long long)a.stime, tries,
	       (unsigned long long)k.utime, (unsigned long long)k.stime,
	       (unsigned long long)b.utime, (unsigned long long)b.stime);
	assert_true(b.utime >= a.utime);
	assert_true(b.stime >= a.stime);
	if (dropped) {
		/* The thread has not run since: the kernel's arithmetic in
		 * run B is k's, raised to A's where below. */
		assert_int_equal(b.stime,
				 k.stime < a.stime ? a.stime : k.stime);
		assert_int_equal(b.utime,
				 k.utime < a.utime ? a.utime : k.utime);
	} else {
		printf("the kernel's arithmetic never went below run A's in %d "
		       "tries (the tick's samples, or a reader of the "
		       "thread's stat on this host): the case was not made\n",
		       tries);
	}
	close(tw_cmd[1]);
	assert_int_equal(pthread_join(th, NULL), 0);
	close(tw_cmd[0]);
	close(tw_ack[0]);
	close(tw_ack[1]);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
	if (!dropped)
		skip();
}

static void older_core(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_src_task t;
	struct hx_rec host;

	if (!start_live(fx, NULL, HX_API_SIZE_THROUGH(source_get)))
		skip();
	assert_int_equal(fx->ctx.eng.n_sources, 1);
	assert_null(fx->ctx.eng.sources[0].walk);
	assert_int_equal(hx_fx_host(fx, &host), 0);
	assert_int_equal(fill(fx, getpid(), getpid(), NULL, &t), 0);
	assert_int_equal(hx_summary(&fx->ctx, "fill_lookup"), 1);
	hx_fx_stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_live),
		cmocka_unit_test(live),
		cmocka_unit_test(own_pidns),
		cmocka_unit_test(pass_too_big),
		cmocka_unit_test(refused_after_init),
		cmocka_unit_test(older_core),
		cmocka_unit_test(check_on_kernel),
		cmocka_unit_test(loaders),
		cmocka_unit_test(pass_option),
		cmocka_unit_test(process_source),
		cmocka_unit_test(mm_gen),
		cmocka_unit_test(process_check_off),
		cmocka_unit_test(check_not_run_retry),
		cmocka_unit_test(check_pid_limit),
		cmocka_unit_test(times_across_runs),
		cmocka_unit_test(list_complete),
		cmocka_unit_test(exec_from_thread),
		cmocka_unit_test(pass_env_bogus),
		cmocka_unit_test(dump_names),
	};
	return cmocka_run_group_tests(tests, setup, hx_fx_teardown);
}
