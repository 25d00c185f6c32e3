/* SPDX-License-Identifier: MIT */
/*
 * The same values from either source (issue 17), on the live /proc.
 *
 * A process of N_THREADS threads, each named with spaces and parentheses
 * (the walk takes names from stat), burns a little CPU, sleeps a few times
 * and then blocks in read() on a pipe nobody writes: quiescent, its
 * counters no longer move. It is captured twice, with procfs-stat and
 * schedstat alone (every value from status and schedstat) and with
 * taskstats beside them (the per-task source "taskstats" serves the
 * context switches and schedstat's three values); every field that can
 * come from either source must be equal on every one of its threads, the
 * summary counters must say which source served them, and each thread's
 * name must equal its comm file.
 *
 * Exits 77 when the taskstats source cannot serve here: not root (no
 * CAP_NET_ADMIN), no TASKSTATS family, or a kernel without delay
 * accounting (no schedstat values in the reply).
 *
 * The source "task" (issue 33): the same quiescent process captured with
 * procfs-stat, io, schedstat and taskstats from their files and query,
 * and with the bpf-task plugin beside them offering "task"; every value a
 * consumer can take from it must equal the file's. Skipped (that case
 * only) while no plugin serves "task" here: bpf-task not built or not
 * loaded (no BTF, no CAP_BPF), or a provider that offers no source yet.
 *
 * The source "process": the same process's row captured with procfs-stat
 * and io from their <tgid>/stat and <tgid>/io, and with bpf-task beside
 * them; every process field they can take from it must equal the file's.
 * Skipped (that case only) while bpf-task fills no process row here (not
 * built or not loaded, or a core that does not serve process sources).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpus.h"
#include "e2e_util.h"
#include "reader.h"
#include "value.h"

#define SKIP	  77
#define N_THREADS 8

static char tmp[PATH_MAX];

/* The fields both sources can fill, and the plugin of each. */
static const char *const shared[] = {
	"procfs.voluntary_csw", "procfs.nonvoluntary_csw", "schedstat.run_time",
	"schedstat.wait_time",	"schedstat.timeslices",
};
#define N_SHARED (sizeof(shared) / sizeof(shared[0]))

/* ---- The process under test ---------------------------------------------- */

struct report {
	int32_t err;
	int32_t tids[N_THREADS];
};

static int block_fd = -1; /* read end of a pipe nobody writes */
static int report_fd = -1;
static _Atomic int started;
static int32_t tids[N_THREADS];

static void burn_ms(unsigned ms)
{
	struct timespec ts, now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	while ((now.tv_sec - ts.tv_sec) * 1000000000ll +
		       (now.tv_nsec - ts.tv_nsec) <
	       (long long)ms * 1000000ll);
}

static void *thread_main(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	char name[16];
	char c;

	(void)ctp_cpus_spread(i); /* a CPU mask of its own */
	/* 15 bytes at most: spaces and parentheses, as a hostile name. */
	snprintf(name, sizeof(name), "w) (x %u", i);
	prctl(PR_SET_NAME, name);
	tids[i] = (int32_t)syscall(SYS_gettid);
	for (unsigned k = 0; k < 3 + i; k++) {
		struct timespec ts = {0, 1000000};

		burn_ms(2);
		nanosleep(&ts, NULL);
	}
	started++;
	/* Blocked for good: nothing changes its counters any more. */
	while (read(block_fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void child_main(void)
{
	struct report r = {0};
	pthread_t t;

	for (unsigned i = 0; i < N_THREADS && !r.err; i++)
		if (pthread_create(&t, NULL, thread_main, (void *)(uintptr_t)i))
			r.err = -EAGAIN;
	while (!r.err && started < N_THREADS) {
		struct timespec ts = {0, 2000000};

		nanosleep(&ts, NULL);
	}
	memcpy(r.tids, tids, sizeof(tids));
	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	for (;;)
		pause();
}

static pid_t start_child(struct report *r)
{
	int rep[2], blk[2];

	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(blk, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(rep[0]);
		report_fd = rep[1];
		block_fd = blk[0];
		child_main();
	}
	close(rep[1]);
	close(blk[0]);
	/* blk[1] stays open here and unwritten: the reads block. */
	ssize_t n = read(rep[0], r, sizeof(*r));
	close(rep[0]);
	if (n != (ssize_t)sizeof(*r) || r->err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("the test process did not start its threads");
	}
	return pid;
}

/* The thread's schedstat file, or NULL. */
static char *task_text(pid_t tgid, int32_t tid, const char *file)
{
	char path[PATH_MAX];
	char *buf = NULL;

	if (E2E_PATHF(path, "/proc/%d/task/%d/%s", (int)tgid, (int)tid, file) <
		    0 ||
	    e2e_read_file(path, &buf, NULL) < 0)
		return NULL;
	return buf;
}

/* Wait until every thread's schedstat holds still for 50 ms (each is in
 * its final read()). */
static void wait_quiescent(pid_t pid, const struct report *r)
{
	for (int round = 0; round < 100; round++) {
		bool still = true;

		for (unsigned i = 0; i < N_THREADS && still; i++) {
			char *a = task_text(pid, r->tids[i], "schedstat");
			struct timespec ts = {0, 50000000};

			nanosleep(&ts, NULL);
			char *b = task_text(pid, r->tids[i], "schedstat");
			still = a && b && !strcmp(a, b);
			free(a);
			free(b);
		}
		if (still)
			return;
	}
	fail_msg("the test threads never came to rest");
}

/* ---- Capturing ----------------------------------------------------------- */

static struct ctp_snap *capture(const char *tag, bool taskstats)
{
	return e2e_capture_plugins(tmp, tag, 2,
				   taskstats
					   ? "  procfs-stat: {required: true}\n"
					     "  schedstat: {required: true}\n"
					     "  taskstats: {required: true}\n"
					   : "  procfs-stat: {required: true}\n"
					     "  schedstat: {required: true}\n");
}

static uint64_t summary(const struct ctp_snap *s, const char *plugin,
			const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);

	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++) {
		if (strcmp(p[i].name, plugin))
			continue;
		for (size_t k = 0; k < p[i].n_summary; k++)
			if (!strcmp(p[i].summary_name[k], name))
				return p[i].summary[k];
	}
	fail_msg("no summary counter %s of %s", name, plugin);
	return 0;
}

static size_t row_of(const struct ctp_snap *s, int32_t tid)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, CTP_SCOPE_THREAD);

	for (size_t i = 0; i < t->rows; i++)
		if (t->tid[i] == (uint64_t)tid)
			return i;
	fail_msg("thread %d is not in the snapshot", (int)tid);
	return SIZE_MAX;
}

/* The fields a consumer can take from the source "task": procfs-stat's
 * stat values and context switches, io's seven, schedstat's three,
 * taskstats' delays and watermarks. */
static const char *const task_fields[] = {
	"procfs.minflt",
	"procfs.majflt",
	"procfs.utime",
	"procfs.stime",
	"procfs.priority",
	"procfs.nice",
	"procfs.start_time",
	"procfs.processor",
	"procfs.rt_priority",
	"procfs.policy",
	"procfs.state",
	"procfs.cpu_affinity",
	"procfs.voluntary_csw",
	"procfs.nonvoluntary_csw",
	"io.rchar",
	"io.wchar",
	"io.syscr",
	"io.syscw",
	"io.read_bytes",
	"io.write_bytes",
	"io.cancelled_write_bytes",
	"schedstat.run_time",
	"schedstat.wait_time",
	"schedstat.timeslices",
	"taskstats.hiwater_rss",
	"taskstats.hiwater_vm",
};
static const char *const ts_families[] = {"cpu",       "blkio",	    "swapin",
					  "freepages", "thrashing", "compact",
					  "wpcopy",    "irq"};
static const char *const ts_parts[] = {"_count", "_delay_total", "_delay_max",
				       "_delay_min"};

/* Whether field `name` holds the same value (or is absent in both) in row
 * a of snapshot x and row b of y; a field neither snapshot has is equal. */
static bool same_value(const struct ctp_snap *x, size_t a,
		       const struct ctp_snap *y, size_t b, const char *name)
{
	const struct ctp_snap_field *fx = ctp_snap_field_find(x, name);
	const struct ctp_snap_field *fy = ctp_snap_field_find(y, name);

	if (!fx || !fy)
		return !fx && !fy;
	struct ctp_value va = ctp_snap_get(x, fx, a);
	struct ctp_value vb = ctp_snap_get(y, fy, b);

	if (va.type != vb.type)
		return false;
	switch (va.type) {
	case CTP_VALUE_ABSENT:
		return true;
	case CTP_TYPE_U64:
		return va.u64 == vb.u64;
	case CTP_TYPE_I64:
		return va.i64 == vb.i64;
	case CTP_TYPE_CHAR:
		return va.c == vb.c;
	case CTP_TYPE_STRING:
		return va.str.len == vb.str.len &&
		       !memcmp(va.str.ptr, vb.str.ptr, va.str.len);
	case CTP_TYPE_CPUSET:
		return ctp_value_cmp(&va, &vb) == 0;
	default:
		return false;
	}
}

/* ---- The test ------------------------------------------------------------ */

static void same_values(void **state)
{
	struct report r;
	(void)state;

	pid_t pid = start_child(&r);
	wait_quiescent(pid, &r);
	struct ctp_snap *files = capture("files", false);
	struct ctp_snap *source = capture("source", true);
	char *comm[N_THREADS];
	for (unsigned i = 0; i < N_THREADS; i++)
		comm[i] = task_text(pid, r.tids[i], "comm");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	uint64_t ok = summary(source, "taskstats", "ok");
	uint64_t served = summary(source, "schedstat", "from_taskstats");
	if (!ok || !served) {
		print_message("[ SKIP     ] the taskstats source served no "
			      "thread here (ok %" PRIu64 ", schedstat from it "
			      "%" PRIu64 "): no CAP_NET_ADMIN, no TASKSTATS "
			      "family, or no delay accounting\n",
			      ok, served);
		ctp_snap_free(files);
		ctp_snap_free(source);
		e2e_rm_rf(tmp);
		exit(SKIP);
	}
	/* Which source served each plugin, for every thread. */
	const struct ctp_snap_table *ft =
		ctp_snap_table(files, CTP_SCOPE_THREAD);
	const struct ctp_snap_table *st =
		ctp_snap_table(source, CTP_SCOPE_THREAD);
	/* Every thread recorded was read by one of the two ways; a thread of
	 * the host that ended between its reads was read and not recorded
	 * (CI once counted 156 reads for 152 rows beside a build): at least
	 * the rows, never fewer. */
	assert_true(summary(files, "procfs-stat", "from_files") >= ft->rows);
	assert_true(summary(files, "schedstat", "from_files") >= ft->rows);
	assert_int_equal(summary(files, "procfs-stat", "from_taskstats"), 0);
	assert_true(summary(source, "procfs-stat", "from_taskstats") +
			    summary(source, "procfs-stat", "from_files") >=
		    st->rows);
	assert_true(summary(source, "procfs-stat", "from_taskstats") >=
		    N_THREADS);

	unsigned nbad = 0;
	for (unsigned i = 0; i < N_THREADS; i++) {
		size_t a = row_of(files, r.tids[i]);
		size_t b = row_of(source, r.tids[i]);
		char want[32];

		assert_non_null(comm[i]);
		snprintf(want, sizeof(want), "%.*s",
			 (int)strcspn(comm[i], "\n"), comm[i]);
		if (!e2e_bytes_eq(ft->comm[a], want) ||
		    !e2e_bytes_eq(st->comm[b], want)) {
			print_error("thread %d: name is not '%s'\n",
				    (int)r.tids[i], want);
			nbad++;
		}
		free(comm[i]);
		for (size_t f = 0; f < N_SHARED; f++) {
			uint64_t va = e2e_u64(files, shared[f], a);
			uint64_t vb = e2e_u64(source, shared[f], b);

			if (va != vb) {
				print_error("thread %d: %s is %" PRIu64
					    " from the file, %" PRIu64
					    " from taskstats\n",
					    (int)r.tids[i], shared[f], va, vb);
				nbad++;
			}
		}
		/* The values are not trivially equal: it ran and slept. */
		assert_true(e2e_u64(files, "schedstat.run_time", a) > 0);
		assert_true(e2e_u64(files, "procfs.voluntary_csw", a) >= 3);
	}
	print_message("[ INFO     ] %u threads x %zu fields equal; procfs-stat "
		      "served %" PRIu64 " of %zu threads from taskstats\n",
		      N_THREADS, N_SHARED,
		      summary(source, "procfs-stat", "from_taskstats"),
		      st->rows);
	ctp_snap_free(files);
	ctp_snap_free(source);
	assert_int_equal(nbad, 0);
}

/* The consumers from their files and query, and from the source "task"
 * of bpf-task: the same value in every field either can fill. */
/* Whether every possible CPU of this host is below 256 (the task
 * source's masks hold CPUs 0-255). */
static bool possible_fit(void)
{
	char buf[256] = "";
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	long top = -1;

	if (fd >= 0)
		close(fd);
	for (char *p = buf; n > 0 && *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		top = v > top ? v : top;
		p = end + (*end != '\0');
	}
	return top >= 0 && top < 256;
}

/* The quiescent child captured with the plugins of `files` and of
 * `source` (snapshots "<tag>-files", "<tag>-source"), then ended: its pid
 * (its tids in *r). */
static pid_t capture_both(struct report *r, const char *tag,
			  const char *files_cfg, const char *source_cfg,
			  struct ctp_snap **files, struct ctp_snap **source)
{
	char name[64];
	pid_t pid = start_child(r);

	wait_quiescent(pid, r);
	snprintf(name, sizeof(name), "%s-files", tag);
	*files = e2e_capture_plugins(tmp, name, 2, files_cfg);
	snprintf(name, sizeof(name), "%s-source", tag);
	*source = e2e_capture_plugins(tmp, name, 2, source_cfg);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return pid;
}

static void task_source_values(void **state)
{
	static const char consumers[] = "  procfs-stat: {required: true}\n"
					"  io: {required: true}\n"
					"  schedstat: {required: true}\n"
					"  taskstats: {required: true}\n";
	struct report r;
	char with_bpf[256];
	(void)state;

	snprintf(with_bpf, sizeof(with_bpf), "%s  bpf-task: {}\n", consumers);
	struct ctp_snap *files, *source;
	capture_both(&r, "task", consumers, with_bpf, &files, &source);

	uint64_t served = summary(source, "procfs-stat", "stat_from_task");
	if (!served) {
		ctp_snap_free(files);
		ctp_snap_free(source);
		print_message("[ SKIP     ] no plugin offers the source "
			      "\"task\" here (bpf-task not built, not loaded "
			      "or not serving it)\n");
		skip();
	}
	unsigned nbad = 0, nfields = 0;
	for (unsigned i = 0; i < N_THREADS; i++) {
		size_t a = row_of(files, r.tids[i]);
		size_t b = row_of(source, r.tids[i]);
		char name[64];

		nfields = 0;
		for (size_t f = 0;
		     f < sizeof(task_fields) / sizeof(*task_fields);
		     f++, nfields++)
			if (!same_value(files, a, source, b, task_fields[f])) {
				print_error("thread %d: %s differs\n",
					    (int)r.tids[i], task_fields[f]);
				nbad++;
			}
		for (size_t fa = 0; fa < 8; fa++)
			for (size_t pt = 0; pt < 4; pt++, nfields++) {
				snprintf(name, sizeof(name), "taskstats.%s%s",
					 ts_families[fa], ts_parts[pt]);
				if (!same_value(files, a, source, b, name)) {
					print_error("thread %d: %s differs\n",
						    (int)r.tids[i], name);
					nbad++;
				}
			}
	}
	/* Kernel threads (no mm: both watermarks 0, left absent) are
	 * covered whole by the source, so none costs taskstats a query; a
	 * user thread the source covers whole is not queried either. Since
	 * the core copies the bound values itself, taskstats is not called
	 * for them (its no_mm counts none): the rows say which have no mm. */
	const struct ctp_snap_table *st =
		ctp_snap_table(source, CTP_SCOPE_THREAD);
	uint64_t no_mm = 0;
	for (size_t i = 0; i < st->rows; i++)
		no_mm += e2e_value(source, "taskstats.hiwater_vm", i).type ==
			 CTP_VALUE_ABSENT;
	uint64_t whole = summary(source, "taskstats", "from_task");
	uint64_t part = summary(source, "taskstats", "from_task_partial");
	print_message("[ INFO     ] taskstats with the source: %" PRIu64
		      " threads from it whole, %" PRIu64 " partly (queried), "
		      "%" PRIu64 " without an mm, %" PRIu64 " queries ok\n",
		      whole, part, no_mm, summary(source, "taskstats", "ok"));
	uint64_t aff = summary(source, "procfs-stat", "affinity_from_task");
	print_message("[ INFO     ] %u threads x %u fields compared; the task "
		      "source served stat for %" PRIu64 " threads, io for "
		      "%" PRIu64 ", the affinity for %" PRIu64 "\n",
		      N_THREADS, nfields, served,
		      summary(source, "io", "from_task"), aff);
	ctp_snap_free(files);
	ctp_snap_free(source);
	assert_int_equal(nbad, 0);
	/* The affinity from the source (its CPU masks, where the host's
	 * possible CPUs are below 256) for the threads it serves. */
	assert_true(aff >= N_THREADS || !possible_fit());
	/* Every thread without an mm (kernel threads, and a zombie the
	 * reply also gives 0 and 0) was queried when the source left its
	 * marks out: then part >= no_mm. Now only threads the source lacks
	 * something of (a zombie) are, fewer than the kernel threads. */
	assert_true(no_mm > 0);
	assert_true(part < no_mm);
}

/* Summary counter `name` of `plugin`, 0 where the plugin or the counter
 * is missing (bpf-task not built has other counters). */
static uint64_t summary_or_0(const struct ctp_snap *s, const char *plugin,
			     const char *name)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(s);

	for (size_t i = 0; i < ctp_snap_n_plugins(s); i++)
		for (size_t k = 0;
		     !strcmp(p[i].name, plugin) && k < p[i].n_summary; k++)
			if (!strcmp(p[i].summary_name[k], name))
				return p[i].summary[k];
	return 0;
}

/* The process row of tgid in s. */
static size_t process_row(const struct ctp_snap *s, pid_t tgid)
{
	long r = ctp_snap_row(ctp_snap_table(s, CTP_SCOPE_PROCESS),
			      (uint64_t)tgid, 0);
	if (r < 0)
		fail_msg("process %d is not in the snapshot", (int)tgid);
	return (size_t)r;
}

/* The process fields a consumer can take from the source "process":
 * <tgid>/stat's whole-group and children's values, <tgid>/io's. */
static const char *const process_fields[] = {
	"procfs.nr_threads",	  "procfs.process.minflt",
	"procfs.process.majflt",  "procfs.process.utime",
	"procfs.process.stime",	  "procfs.children.minflt",
	"procfs.children.majflt", "procfs.children.utime",
	"procfs.children.stime",  "io.process.rchar",
	"io.process.wchar",	  "io.process.syscr",
	"io.process.syscw",	  "io.process.read_bytes",
	"io.process.write_bytes", "io.process.cancelled_write_bytes",
};

/* procfs-stat and io from their files, and beside bpf-task's source
 * "process": the same value in every process field of the quiescent
 * child's row. */
static void process_source_values(void **state)
{
	static const char consumers[] = "  procfs-stat: {required: true}\n"
					"  io: {required: true}\n";
	struct report r;
	char with_bpf[256];
	unsigned nbad = 0;
	(void)state;

	snprintf(with_bpf, sizeof(with_bpf), "  bpf-task: {}\n%s", consumers);
	struct ctp_snap *files, *source;
	pid_t pid = capture_both(&r, "process", consumers, with_bpf, &files,
				 &source);

	uint64_t filled = summary_or_0(source, "bpf-task", "proc_fill");
	if (!filled) {
		ctp_snap_free(files);
		ctp_snap_free(source);
		print_message("[ SKIP     ] bpf-task filled no process row "
			      "here (not built, not loaded, or a core that "
			      "does not serve process sources)\n");
		skip();
	}
	size_t a = process_row(files, pid), b = process_row(source, pid);
	for (size_t f = 0; f < sizeof(process_fields) / sizeof(*process_fields);
	     f++)
		if (!same_value(files, a, source, b, process_fields[f])) {
			print_error("process %d: %s differs\n", (int)pid,
				    process_fields[f]);
			nbad++;
		}
	print_message("[ INFO     ] %zu process fields compared; bpf-task "
		      "filled %" PRIu64 " process rows whole, %" PRIu64
		      " partly\n",
		      sizeof(process_fields) / sizeof(*process_fields), filled,
		      summary_or_0(source, "bpf-task", "proc_partial"));
	ctp_snap_free(files);
	ctp_snap_free(source);
	assert_int_equal(nbad, 0);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: taskstats needs CAP_NET_ADMIN (root)\n");
		return SKIP;
	}
	if (e2e_tmpdir("sources", tmp, sizeof(tmp)) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_values),
		cmocka_unit_test(task_source_values),
		cmocka_unit_test(process_source_values),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	e2e_rm_rf(tmp);
	return r;
}
