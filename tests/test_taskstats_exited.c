/* SPDX-License-Identifier: MIT */
/*
 * The taskstats plugin's exit listener (plugins/taskstats/exits.c), the
 * built taskstats.so loaded into a real engine (tests/harness.h) with
 * recording on, against the running kernel: children that burn CPU and
 * exit come back as exited rows with their CPU time, nothing twice across
 * snapshots, a full ring counted as lost, a drained ring reused from its
 * start, the listener refused without CAP_NET_ADMIN, and no listener (nor
 * table) when not recording, on a foreign proc root or with an older core. fini
 * joins the thread and closes its descriptors.
 *
 * Parts needing the TASKSTATS family or CAP_NET_ADMIN skip without them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "sanitizer.h"

#define PLUGIN_PATH CTP_TEST_PLUGIN_DIR "/taskstats.so"
#define N_CHILD	    50
#define BURN_NS	    20000000ull

struct fx {
	void *dl;
	const struct ctp_plugin *p;
	struct hx_ctx ctx;
	int proc_fd, sys_fd;
};

static bool have_family, have_cap;

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->p = hx_dlopen(PLUGIN_PATH, &fx->dl);
	fx->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fx->sys_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!fx->p || fx->proc_fd < 0 || fx->sys_fd < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	close(fx->proc_fd);
	close(fx->sys_fd);
	dlclose(fx->dl);
	free(fx);
	return 0;
}

/* The plugin in a fresh engine, recording or not, the live /proc (or
 * root), api_size bytes of the api table (0: all). */
static int start_api(struct fx *fx, bool recording, int proc_fd,
		     size_t api_size, const char *const *opts)
{
	/* This file tests the exit notifications: never the BPF exit
	 * program (test_bpfexit_live). */
	static const char *all[16];
	size_t n = 0;

	while (opts && opts[n] && n < 12) {
		all[n] = opts[n];
		n++;
	}
	all[n++] = "exited_source";
	all[n++] = "netlink";
	all[n] = NULL;
	hx_ctx_init(&fx->ctx, fx->p, all);
	fx->ctx.eng.recording = recording;
	fx->ctx.eng.roots.proc_fd = proc_fd;
	fx->ctx.eng.roots.sys_fd = fx->sys_fd;
	return hx_ctx_load(&fx->ctx, api_size);
}

static int start(struct fx *fx, const char *const *opts)
{
	return start_api(fx, true, fx->proc_fd, 0, opts);
}

static void stop(struct fx *fx)
{
	hx_ctx_done(&fx->ctx); /* the core's unload calls fini */
}

static int finish(struct fx *fx)
{
	struct hx_rec *rec = malloc(sizeof(*rec));
	int r;

	assert_non_null(rec);
	r = hx_host_call(&fx->ctx, rec, true);
	free(rec);
	return r;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of waited-for children, us. */
static uint64_t children_us(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* n children that each burn BURN_NS of CPU and exit with status i % 3;
 * their pids into pids[]. Returns when all are waited for, with the CPU
 * time they had when they called _exit, ns, summed. */
static uint64_t run_children(pid_t *pids, int n)
{
	uint64_t *cpu = mmap(NULL, (size_t)n * sizeof(*cpu),
			     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0),
		 sum = 0;

	assert_true(cpu != MAP_FAILED);
	for (int i = 0; i < n; i++) {
		fflush(NULL);
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			prctl(PR_SET_NAME, "ctp-exiter");
			uint64_t t0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
			while (now_ns(CLOCK_PROCESS_CPUTIME_ID) - t0 < BURN_NS)
				;
			cpu[i] = now_ns(CLOCK_PROCESS_CPUTIME_ID);
			_exit(i % 3);
		}
	}
	for (int i = 0; i < n; i++) {
		int st;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		sum += cpu[i];
	}
	munmap(cpu, (size_t)n * sizeof(*cpu));
	return sum;
}

/* How many of pids[] have an exited row. */
static int rows_of(struct fx *fx, const pid_t *pids, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += hx_exited_row(&fx->ctx, (uint32_t)pids[i]) >= 0;
	return k;
}

/* finish until every one of pids[] has a row (the listener may lag a
 * loaded host), at most 10 s. */
static void drain_until(struct fx *fx, const pid_t *pids, int n)
{
	for (int tries = 0; tries < 100; tries++) {
		assert_int_equal(finish(fx), 0);
		if (rows_of(fx, pids, n) == n)
			return;
		usleep(100000);
	}
	fail_msg("%d of %d children have an exited row", rows_of(fx, pids, n),
		 n);
}

static uint64_t field_u64(struct fx *fx, int64_t row, const char *name)
{
	uint64_t v;

	if (!hx_exited_u64(&fx->ctx, (uint32_t)row, name, &v))
		fail_msg("row %lld: %s absent", (long long)row, name);
	return v;
}

/*
 * Every child has one row: its identity, its status, and its CPU time
 * within 10 % of what getrusage(RUSAGE_CHILDREN) says the children used
 * and of what each had when it called _exit (own_ns). Under ASan a child's
 * exit unmaps the sanitizer's shadow memory after the kernel sent its
 * record (exit_mm() follows taskstats_exit()), some 3 ms each that
 * getrusage counts and no exit record can: there the record must not pass
 * getrusage.
 */
static void check_children(struct fx *fx, const pid_t *pids, int n, uint64_t t0,
			   uint64_t t1, uint64_t rusage_us, uint64_t own_ns)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++) {
		int64_t row = hx_exited_row(&fx->ctx, (uint32_t)pids[i]);
		uint32_t tid, tgid;
		const char *comm;
		uint64_t exit_ns;

		assert_true(row >= 0);
		hx_exited_ident(&fx->ctx, (uint32_t)row, &tid, &tgid, &comm,
				&exit_ns);
		assert_int_equal(tid, pids[i]);
		assert_int_equal(tgid, pids[i]);
		assert_non_null(comm);
		assert_string_equal(comm, "ctp-exiter");
		assert_true(exit_ns >= t0 && exit_ns <= t1);
		sum += field_u64(fx, row, "taskstats.exited.utime") +
		       field_u64(fx, row, "taskstats.exited.stime");
		assert_int_equal(
			field_u64(fx, row, "taskstats.exited.exit_code"),
			(uint64_t)(i % 3) << 8);
		uint64_t age = field_u64(fx, row, "taskstats.exited.elapsed");
		assert_true(age >= BURN_NS / 1000);
		/* Its start (exit less elapsed, role elapsed): after the
		 * children were forked, never before (the stamp is late). */
		assert_true(exit_ns - age * 1000 >= t0 &&
			    exit_ns - age * 1000 <= exit_ns - BURN_NS);
		field_u64(fx, row, "taskstats.exited.nvcsw");
		field_u64(fx, row, "taskstats.exited.minflt");
	}
	/* What readers are told about the fields (FORMAT.md §4). */
	const struct ctp_field *f = hx_field_at(
		&fx->ctx,
		(unsigned)hx_field(&fx->ctx, "taskstats.exited.elapsed"));
	assert_int_equal(f->flags, CTP_FIELD_ELAPSED);
	static const char *const kib[] = {
		"read_bytes", "write_bytes", "cancelled_write_bytes",
		"rchar",      "wchar",	     "syscr",
		"syscw"};
	for (size_t i = 0; i < sizeof(kib) / sizeof(kib[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "taskstats.exited.%s", kib[i]);
		int id = hx_field(&fx->ctx, name);
		assert_true(id >= 0);
		assert_int_equal(hx_field_at(&fx->ctx, (unsigned)id)->flags,
				 CTP_FIELD_KIB_STEP);
	}
	printf("NOTE: %d children: taskstats utime+stime %llu us, rusage %llu "
	       "us, at _exit %llu us\n",
	       n, (unsigned long long)sum, (unsigned long long)rusage_us,
	       (unsigned long long)(own_ns / 1000));
	assert_true(sum * 10 >= own_ns / 1000 * 9 &&
		    sum * 10 <= own_ns / 1000 * 11);
	if (CTP_TEST_ASAN)
		assert_true(sum <= rusage_us);
	else
		assert_true(sum * 10 >= rusage_us * 9 &&
			    sum * 10 <= rusage_us * 11);
}

/* ---- Tests -------------------------------------------------------------- */

static void children(void **state)
{
	struct fx *fx = *state;
	pid_t pids[N_CHILD], more[5];

	if (!have_family || !have_cap)
		skip();
	assert_int_equal(start(fx, NULL), 0);
	assert_true(hx_field(&fx->ctx, "taskstats.exited.utime") >= 0);
	assert_int_equal(
		hx_field_at(&fx->ctx,
			    (unsigned)hx_field(&fx->ctx, "taskstats.exited."
							 "utime"))
			->scope,
		CTP_SCOPE_EXITED);
	uint64_t ru0 = children_us(), t0 = now_ns(CLOCK_BOOTTIME);
	uint64_t own = run_children(pids, N_CHILD);
	uint64_t ru1 = children_us();
	drain_until(fx, pids, N_CHILD);
	/* Exit times are when the listener got each: before the drain. */
	check_children(fx, pids, N_CHILD, t0, now_ns(CLOCK_BOOTTIME), ru1 - ru0,
		       own);
	assert_int_equal(hx_exited_lost(&fx->ctx), 0);
	assert_int_equal(hx_summary(&fx->ctx, "exits_lost"), 0);
	assert_int_equal(hx_summary(&fx->ctx, "exits_bad"), 0);
	assert_true(hx_summary(&fx->ctx, "exits") >= N_CHILD);
	assert_true(!hx_hint_set(&fx->ctx) ||
		    !strstr(hx_hint(&fx->ctx), "exited"));

	/* The next snapshot: the new exits, none of the old ones again. */
	uint32_t before = hx_exited_rows(&fx->ctx);
	run_children(more, 5);
	drain_until(fx, more, 5);
	for (uint32_t r = before; r < hx_exited_rows(&fx->ctx); r++) {
		uint32_t tid, tgid;
		const char *comm;
		uint64_t ns;

		hx_exited_ident(&fx->ctx, r, &tid, &tgid, &comm, &ns);
		for (int i = 0; i < N_CHILD; i++)
			assert_int_not_equal(tid, pids[i]);
	}
	stop(fx);
}

/* A ring of 10: what does not fit is counted, never silently dropped. */
static void full_ring(void **state)
{
	static const char *const opts[] = {"exited_buffer", "10", NULL};
	struct fx *fx = *state;
	pid_t pids[30];

	if (!have_family || !have_cap)
		skip();
	assert_int_equal(start(fx, opts), 0);
	run_children(pids, 30);
	usleep(300000);
	assert_int_equal(finish(fx), 0);
	uint32_t rows = hx_exited_rows(&fx->ctx);
	uint64_t lost = hx_exited_lost(&fx->ctx);
	printf("NOTE: ring of 10: %u rows, %llu lost\n", rows,
	       (unsigned long long)lost);
	assert_int_equal(rows, 10);
	assert_true(lost >= 20);
	assert_int_equal(hx_summary(&fx->ctx, "exits_lost"), lost);
	assert_int_equal(hx_summary(&fx->ctx, "exits"), rows);
	stop(fx);
}

/* RssAnon of this process, KiB. */
static uint64_t rss_anon_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long kib = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * A ring drained empty starts again at its first record: the pages ever
 * touched are those of the most exits held between two drains, not the
 * whole ring once enough exits went round it. A ring of 8,192 records
 * (about 3.3 MiB) and 20,000 exits, drained after every 25, the snapshot's
 * tables emptied after each drain as a recorder's are: this process's
 * anonymous memory grows by less than 1 MiB (the 25, what the host's other
 * tasks add between two drains, the allocator's slack), where a ring
 * written round and round touches all of it.
 */
static void ring_pages(void **state)
{
	static const char *const opts[] = {"exited_buffer", "8192", NULL};
	struct fx *fx = *state;
	uint64_t kib0 = 0;
	uint32_t held = 0;

	if (!have_family || !have_cap)
		skip();
	if (CTP_TEST_ASAN) {
		/* Its allocator keeps freed memory: RSS says nothing. */
		print_message("skipped under a sanitizer\n");
		skip();
	}
	assert_int_equal(start(fx, opts), 0);
	for (int round = 0; round < 801; round++) {
		pid_t pids[25];

		for (int i = 0; i < 25; i++) {
			pids[i] = fork();
			assert_true(pids[i] >= 0);
			if (pids[i] == 0)
				_exit(0);
		}
		for (int i = 0; i < 25; i++)
			assert_int_equal(waitpid(pids[i], NULL, 0), pids[i]);
		drain_until(fx, pids, 25);
		/* Every exit of the host since the last drain is a row: the
		 * most the ring held between two drains is at most this. */
		if (hx_exited_rows(&fx->ctx) > held)
			held = hx_exited_rows(&fx->ctx);
		assert_int_equal(ctp_capture_reset(fx->ctx.cap), 0);
		if (!round)
			kib0 = rss_anon_kib();
	}
	uint64_t kib = rss_anon_kib();
	/* The pages a drained ring touches are those of the most records it
	 * held (a record is under 600 bytes), not the whole ring: on a quiet
	 * host ~25 records, where going round the ring touches all 8192
	 * (over 3 MiB). Each record held is also a row of the capture's
	 * exited table (its cells and names, under 600 bytes more), whose
	 * peak the allocator may keep after the reset. A busy host's exits
	 * raise the bound, never fail it (554 held once failed a bound of
	 * 600 bytes a record: +1224 KiB). */
	uint64_t bound = kib0 + 512 + (uint64_t)held * 1200 / 1024;
	printf("NOTE: a ring of 8192, 20,000 exits: RssAnon %llu -> %llu "
	       "KiB, at most %u records held, bound %llu KiB\n",
	       (unsigned long long)kib0, (unsigned long long)kib, held,
	       (unsigned long long)bound);
	assert_true(kib < bound);
	stop(fx);
}

/* Threads of this process and descriptors, to see fini leave none. */
static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;

	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void fini_joins(void **state)
{
	struct fx *fx = *state;

	if (!have_family || !have_cap)
		skip();
	int threads = count_dir("/proc/self/task");
	int fds = count_dir("/proc/self/fd");
	assert_int_equal(start(fx, NULL), 0);
	assert_int_equal(count_dir("/proc/self/task"), threads + 1);
	stop(fx);
	assert_int_equal(count_dir("/proc/self/task"), threads);
	assert_int_equal(count_dir("/proc/self/fd"), fds);
}

/* No recorder, an older core, a fixture root: no listener, no table. */
static void not_listening(void **state)
{
	struct fx *fx = *state;
	int threads = count_dir("/proc/self/task");

	assert_int_equal(start_api(fx, false, fx->proc_fd, 0, NULL), 0);
	assert_int_equal(hx_field(&fx->ctx, "taskstats.exited.utime"), -1);
	assert_int_equal(count_dir("/proc/self/task"), threads);
	assert_int_equal(finish(fx), 0);
	assert_int_equal(hx_exited_rows(&fx->ctx), 0);
	assert_false(hx_info(&fx->ctx)->exited);
	assert_null(strstr(hx_hint(&fx->ctx), "exited"));
	stop(fx);

	assert_int_equal(start_api(fx, true, fx->proc_fd,
				   offsetof(struct ctp_api, recording), NULL),
			 0);
	assert_int_equal(hx_field(&fx->ctx, "taskstats.exited.utime"), -1);
	assert_int_equal(finish(fx), 0);
	stop(fx);

	int fixture = open(CTP_TEST_FIXTURES "/proc",
			   O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fixture >= 0);
	assert_int_equal(start_api(fx, true, fixture, 0, NULL), 0);
	assert_int_equal(hx_field(&fx->ctx, "taskstats.exited.utime"), -1);
	assert_int_equal(finish(fx), 0);
	assert_non_null(strstr(hx_hint(&fx->ctx),
			       "exited tasks not recorded: the proc root is "
			       "not this kernel's /proc"));
	stop(fx);
	close(fixture);
}

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

/* The checks of eperm() in a child without CAP_NET_ADMIN. */
static int eperm_child(struct fx *fx)
{
	int bad = 0;

	if (drop_net_admin() < 0)
		return 77;
	if (start(fx, NULL) != 0)
		return 2;
	bad |= hx_field(&fx->ctx, "taskstats.exited.utime") != -1;
	bad |= finish(fx) != 0;
	if (!strstr(hx_hint(&fx->ctx),
		    "exited tasks not recorded: registering for exit "
		    "notifications failed with EPERM")) {
		fprintf(stderr, "hint: '%s'\n", hx_hint(&fx->ctx));
		bad = 1;
	}
	stop(fx);
	return bad;
}

static void eperm(void **state)
{
	struct fx *fx = *state;
	int st;
	pid_t pid;

	if (!have_family)
		skip();
	if (!have_cap) {
		assert_int_equal(eperm_child(fx), 0);
		return;
	}
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(eperm_child(fx));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A throwaway init tells whether the family answers (it skips threads
 * otherwise); CAP_NET_ADMIN from our effective set. */
static void probe_host(struct fx *fx)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long eff = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	have_cap = (eff >> CAP_NET_ADMIN) & 1;
	if (start_api(fx, false, fx->proc_fd, 0, NULL) == 0) {
		struct hx_task ft;
		struct hx_rec *rec = malloc(sizeof(*rec));

		hx_task_init(&ft, getpid(), getpid());
		hx_rec_init(rec, &fx->ctx, CTP_SCOPE_THREAD);
		fx->p->thread(hx_state(&fx->ctx), &ft.task, &rec->core);
		have_family = hx_summary(&fx->ctx, "skipped") == 0;
		free(rec);
	}
	stop(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_listening), cmocka_unit_test(children),
		cmocka_unit_test(full_ring),	 cmocka_unit_test(ring_pages),
		cmocka_unit_test(fini_joins),	 cmocka_unit_test(eperm),
	};
	void *fx;

	if (setup(&fx) < 0) {
		printf("SKIP: no taskstats.so, /proc or /sys\n");
		return 77;
	}
	probe_host(fx);
	teardown(&fx);
	printf("NOTE: TASKSTATS family %s, CAP_NET_ADMIN %s\n",
	       have_family ? "found" : "missing", have_cap ? "yes" : "no");
	return cmocka_run_group_tests(tests, setup, teardown);
}
