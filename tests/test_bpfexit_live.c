/* SPDX-License-Identifier: MIT */
/*
 * Exited threads from the BPF exit program (plugins/bpf-task/task_exit.bpf.c)
 * through the built taskstats.so in a real engine (tests/harness.h),
 * recording, exited_source bpf, against the running kernel:
 *
 * - threads: a child process runs N_THR threads that each burn BURN_NS of
 *   CPU and write() WRITE_BYTES in WRITES calls to a file, then exit; every
 *   one has exactly one row, its I/O exact (wchar, syscw: taskstats exit
 *   notifications round both down to 1024, so 1000 bytes read 0), its CPU
 *   at least what the thread had at its last instruction and the threads'
 *   sum within 5 % of what the process's own counter (getrusage) says they
 *   used; its cgroup the child's.
 * - overflow: a ring of one page (9 records) and N_OVF threads: the rows of
 *   the child (detailed, and one total of tid 0) stand for every thread,
 *   their I/O sums exact, none lost, the detail lost counted as merged.
 *
 * - pidns: in a pid namespace of its own (with its own /proc) the program
 *   is refused and the hint says why: its ids are the initial namespace's.
 *
 * Skips (77) when not root, without /sys/kernel/btf/vmlinux, when the
 * program was not built or bpf() is refused (the reason printed).
 */
#include <dlfcn.h>
#include <errno.h>
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
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/taskstats.so"
#define N_THR	    40
#define N_OVF	    200
#define BURN_NS	    5000000ull
#define WRITES	    10
#define WRITE_BYTES 1000 /* per thread, in WRITES calls */
#define MAX_THR	    N_OVF

/* What the child tells the test, in shared memory. */
struct shared {
	pid_t tids[MAX_THR];
	uint64_t own_ns[MAX_THR]; /* CPU at the thread's last instruction */
	uint64_t threads_us;	  /* getrusage's CPU of the threads */
	char cgroup[4096 - 3];	  /* the child's "0::" path */
	int go, done;		  /* pipes' ends as seen by the child */
};

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct hx_ctx ctx;
	int proc_fd, sys_fd, cg_fd;
	struct shared *sh;
};

static const char *skip_why;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rusage_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static struct shared *g_sh;
static int g_file;

static void *worker(void *arg)
{
	int i = (int)(intptr_t)arg;
	char buf[WRITE_BYTES / WRITES];
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);

	g_sh->tids[i] = (pid_t)syscall(SYS_gettid);
	memset(buf, 'x', sizeof(buf));
	for (int k = 0; k < WRITES; k++)
		if (write(g_file, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			_exit(3);
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < BURN_NS)
		;
	g_sh->own_ns[i] = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* The child: n threads one after the other (each exits before the next
 * starts, as a thread-churning server's), then it tells the test and waits
 * for the word to exit. */
static void child(struct shared *sh, int n, int done_w, int go_r)
{
	char path[] = "/tmp/ctp-bpfexit-XXXXXX", c;
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	g_sh = sh;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(sh->cgroup, sizeof(sh->cgroup), "%s",
				 line + 3);
		}
	if (f)
		fclose(f);
	g_file = mkstemp(path);
	if (g_file < 0)
		_exit(2);
	unlink(path);
	uint64_t r0 = rusage_us(), m0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, (void *)(intptr_t)i) ||
		    pthread_join(t, NULL))
			_exit(4);
	}
	/* The threads' CPU as the process counts it: the whole less this
	 * thread's own. */
	uint64_t main_us = (now_ns(CLOCK_THREAD_CPUTIME_ID) - m0) / 1000;
	sh->threads_us = rusage_us() - r0 - main_us;
	if (write(done_w, "d", 1) != 1 || read(go_r, &c, 1) != 1)
		_exit(5);
	_exit(0);
}

/* The cgroup v2 mount (from mountinfo: /sys/fs/cgroup may be a hybrid's
 * tmpfs of v1 hierarchies), or -1. */
static int open_cgroup2(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[4096];
	int fd = -1;

	while (f && fd < 0 && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - cgroup2 ");

		if (sep && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
			fd = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (f)
		fclose(f);
	return fd;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->p = hx_dlopen(PLUGIN_PATH, &fx->dl);
	fx->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fx->sys_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fx->cg_fd = open_cgroup2();
	fx->sh = mmap(NULL, sizeof(*fx->sh), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!fx->p || fx->proc_fd < 0 || fx->sys_fd < 0 || fx->sh == MAP_FAILED)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	close(fx->proc_fd);
	close(fx->sys_fd);
	if (fx->cg_fd >= 0)
		close(fx->cg_fd);
	munmap(fx->sh, sizeof(*fx->sh));
	dlclose(fx->dl);
	free(fx);
	return 0;
}

static void finish(struct fx *fx)
{
	struct hx_rec *rec = malloc(sizeof(*rec));

	assert_non_null(rec);
	assert_int_equal(hx_host_call(&fx->ctx, rec, true), 0);
	free(rec);
}

/* The plugin recording with exits from the BPF program only; false (and
 * skip_why) when the program cannot load here. */
static bool start(struct fx *fx, const char *const *opts)
{
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.eng.recording = true;
	fx->ctx.eng.roots.proc_fd = fx->proc_fd;
	fx->ctx.eng.roots.sys_fd = fx->sys_fd;
	fx->ctx.eng.roots.cgroup_fd = fx->cg_fd;
	assert_int_equal(hx_ctx_load(&fx->ctx, 0), 0);
	if (hx_field(&fx->ctx, "taskstats.exited.threads") >= 0)
		return true;
	finish(fx); /* the hint says why */
	/* Only the kernel's refusal skips; a plugin without the program
	 * fails. */
	if (!hx_hint_set(&fx->ctx) ||
	    !strstr(hx_hint(&fx->ctx), "the BPF exit program: "))
		fail_msg("no exited rows from the BPF exit program: %s",
			 hx_hint_set(&fx->ctx) ? hx_hint(&fx->ctx) : "no hint");
	printf("SKIP: %s\n", hx_hint(&fx->ctx));
	hx_ctx_done(&fx->ctx);
	return false;
}

/* Run the child with n threads; returns its pid once they all exited
 * (it still lives: its main thread's exit is not in the rows). */
static pid_t run_child(struct fx *fx, int n, int *go_w)
{
	int done[2], go[2];
	char c;
	pid_t pid;

	memset(fx->sh, 0, sizeof(*fx->sh));
	assert_int_equal(pipe(done), 0);
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(done[0]);
		close(go[1]);
		child(fx->sh, n, done[1], go[0]);
	}
	close(done[1]);
	close(go[0]);
	assert_int_equal(read(done[0], &c, 1), 1);
	close(done[0]);
	*go_w = go[1];
	return pid;
}

static void end_child(pid_t pid, int go_w)
{
	int st;

	assert_int_equal(write(go_w, "g", 1), 1);
	close(go_w);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static uint64_t get(struct fx *fx, int64_t row, const char *name)
{
	uint64_t v;
	char full[96];

	snprintf(full, sizeof(full), "taskstats.exited.%s", name);
	if (!hx_exited_u64(&fx->ctx, (uint32_t)row, full, &v))
		fail_msg("row %lld: %s absent", (long long)row, full);
	return v;
}

static void threads(void **state)
{
	static const char *const opts[] = {"exited_source", "bpf", NULL};
	struct fx *fx = *state;
	uint64_t sum_us = 0, own_us = 0;
	int go_w;

	if (skip_why) {
		printf("SKIP: %s\n", skip_why);
		skip();
	}
	if (!start(fx, opts))
		skip();
	finish(fx); /* the host's exits so far */
	pid_t pid = run_child(fx, N_THR, &go_w);
	finish(fx);
	for (int i = 0; i < N_THR; i++) {
		int64_t row =
			hx_exited_row(&fx->ctx, (uint32_t)fx->sh->tids[i]);
		uint32_t tid, tgid;
		const char *comm;
		uint64_t ns, us, cg;

		assert_true(row >= 0);
		hx_exited_ident(&fx->ctx, (uint32_t)row, &tid, &tgid, &comm,
				&ns);
		assert_int_equal(tgid, pid);
		assert_int_equal(get(fx, row, "threads"), 1);
		assert_int_equal(get(fx, row, "wchar"), WRITE_BYTES);
		assert_int_equal(get(fx, row, "syscw"), WRITES);
		assert_int_equal(get(fx, row, "ppid"), getpid());
		us = get(fx, row, "utime") + get(fx, row, "stime");
		/* Its run time was read after its last instruction: never
		 * less (1 us of flooring). */
		assert_true(us + 1 >= fx->sh->own_ns[i] / 1000);
		sum_us += us;
		own_us += fx->sh->own_ns[i] / 1000;
		if (fx->cg_fd >= 0 && fx->sh->cgroup[0]) {
			size_t len;
			const char *p;

			assert_true(hx_exited_u64(&fx->ctx, (uint32_t)row,
						  "taskstats.exited.cgroup",
						  &cg));
			p = ctp_blobpool_get(fx->ctx.cap->blobs, cg, &len);
			assert_non_null(p);
			assert_string_equal(p, fx->sh->cgroup);
		}
	}
	end_child(pid, go_w);
	printf("NOTE: %d threads: exit records %llu us, the process's "
	       "counter %llu us, at their last instruction %llu us\n",
	       N_THR, (unsigned long long)sum_us,
	       (unsigned long long)fx->sh->threads_us,
	       (unsigned long long)own_us);
	/* Both are the scheduler's run time split by cputime_adjust() (the
	 * sum of the parts is the run time), its main thread's share taken
	 * out of the process's. The process's counter lacks only what each
	 * thread ran after __exit_signal() folded it in, so the records
	 * hold at least as much, but for 1 us of flooring a thread; a
	 * record made earlier in do_exit() (taskstats') lacks the thread's
	 * teardown, some 20 us each here. At most 5 % more: the main
	 * thread's few us between its two clock reads, and the teardown. */
	assert_true(sum_us + N_THR + 20 >= fx->sh->threads_us);
	assert_true(sum_us * 100 <= fx->sh->threads_us * 105);
	assert_int_equal(hx_exited_lost(&fx->ctx), 0);
	assert_int_equal(hx_summary(&fx->ctx, "exits_bad"), 0);
	/* What readers are told: exact, no 1024 step. */
	int id = hx_field(&fx->ctx, "taskstats.exited.wchar");
	assert_true(id >= 0);
	assert_int_equal(hx_field_at(&fx->ctx, (unsigned)id)->flags &
				 CTP_FIELD_KIB_STEP,
			 0);
	hx_ctx_done(&fx->ctx);
}

static void overflow(void **state)
{
	static const char *const opts[] = {"exited_source", "bpf",
					   "exited_buffer", "1", NULL};
	struct fx *fx = *state;
	uint64_t threads = 0, wchar = 0, syscw = 0, detailed = 0, totals = 0;
	int go_w;

	if (skip_why) {
		printf("SKIP: %s\n", skip_why);
		skip();
	}
	if (!start(fx, opts))
		skip();
	finish(fx);
	pid_t pid = run_child(fx, N_OVF, &go_w);
	finish(fx);
	for (uint32_t r = 0; r < hx_exited_rows(&fx->ctx); r++) {
		uint32_t tid, tgid;
		const char *comm;
		uint64_t ns;

		hx_exited_ident(&fx->ctx, r, &tid, &tgid, &comm, &ns);
		if (tgid != (uint32_t)pid)
			continue;
		threads += get(fx, r, "threads");
		wchar += get(fx, r, "wchar");
		syscw += get(fx, r, "syscw");
		detailed += tid != 0;
		totals += tid == 0;
	}
	end_child(pid, go_w);
	printf("NOTE: ring of one page, %d threads: %llu rows of one thread, "
	       "%llu total(s) standing for %llu; exits_merged %llu, lost "
	       "%llu\n",
	       N_OVF, (unsigned long long)detailed, (unsigned long long)totals,
	       (unsigned long long)(threads - detailed),
	       (unsigned long long)hx_summary(&fx->ctx, "exits_merged"),
	       (unsigned long long)hx_exited_lost(&fx->ctx));
	assert_int_equal(threads, N_OVF);
	assert_int_equal(wchar, (uint64_t)N_OVF * WRITE_BYTES);
	assert_int_equal(syscw, (uint64_t)N_OVF * WRITES);
	assert_true(detailed < N_OVF);
	assert_true(totals >= 1);
	assert_true(hx_summary(&fx->ctx, "exits_merged") >= N_OVF - detailed);
	assert_int_equal(hx_exited_lost(&fx->ctx), 0);
	hx_ctx_done(&fx->ctx);
}

/* In a pid namespace of its own with its own /proc (a live root): 0 when
 * the program was refused for the namespace, 77 when the namespace could
 * not be made, else 1. */
static int pidns_child(struct fx *fx)
{
	static const char *const opts[] = {"exited_source", "bpf", NULL};
	pid_t pid;
	int st, proc_fd;

	if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	pid = fork();
	if (pid < 0)
		return 77;
	if (pid > 0)
		return waitpid(pid, &st, 0) == pid && WIFEXITED(st)
			       ? WEXITSTATUS(st)
			       : 1;
	if (mount("proc", "/proc", "proc", 0, NULL) < 0)
		_exit(77);
	proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	hx_ctx_init(&fx->ctx, fx->p, opts);
	fx->ctx.eng.recording = true;
	fx->ctx.eng.roots.proc_fd = proc_fd;
	fx->ctx.eng.roots.sys_fd = fx->sys_fd;
	fx->ctx.eng.roots.cgroup_fd = fx->cg_fd;
	if (hx_ctx_load(&fx->ctx, 0) != 0)
		_exit(1);
	struct hx_rec *rec = malloc(sizeof(*rec));
	if (!rec || hx_host_call(&fx->ctx, rec, true) != 0)
		_exit(1);
	bool refused = hx_field(&fx->ctx, "taskstats.exited.threads") < 0 &&
		       hx_hint_set(&fx->ctx) &&
		       strstr(hx_hint(&fx->ctx), "not in the initial pid");
	printf("NOTE: in a pid namespace of its own: %s\n",
	       hx_hint_set(&fx->ctx) ? hx_hint(&fx->ctx) : "no hint");
	fflush(stdout);
	_exit(refused ? 0 : 1);
}

/* Its ids are the initial namespace's: elsewhere (even with a /proc of
 * that namespace, whose ids are not the program's) it is refused, with
 * the reason. */
static void pidns(void **state)
{
	struct fx *fx = *state;
	int st;
	pid_t pid;

	if (skip_why) {
		printf("SKIP: %s\n", skip_why);
		skip();
	}
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(pidns_child(fx));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		printf("SKIP: no pid and mount namespace of our own\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(threads),
		cmocka_unit_test(overflow),
		cmocka_unit_test(pidns),
	};

#ifdef CTP_BPFEXIT_MISSING
	printf("SKIP: the BPF exit program was not built: %s\n",
	       CTP_BPFEXIT_MISSING);
	return 77;
#endif
	if (geteuid() != 0)
		skip_why = "not root";
	else if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		skip_why = "no /sys/kernel/btf/vmlinux";
	if (skip_why) {
		printf("SKIP: %s\n", skip_why);
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
