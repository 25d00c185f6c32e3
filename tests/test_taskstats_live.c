/* SPDX-License-Identifier: MIT */
/*
 * ctprof-core with the taskstats plugin on the live host:
 *
 *   hiwater      a child that touches 64 MiB shows hiwater_rss equal to
 *                its VmHWM (the same kernel counters read two ways) within
 *                the per-CPU counter slack (see rss_slack()), the same on
 *                each of its threads;
 *   toggle_off   with kernel.task_delayacct=0 a thread that ran has a cpu
 *                delay count >= 1 and the other seven families absent;
 *   toggle_on    with kernel.task_delayacct=1 (set here), a thread started
 *                after that and doing direct block I/O has the blkio family
 *                measured (count >= 1) and the other six present, but irq
 *                absent, with a hint naming the option, on a kernel
 *                without CONFIG_IRQ_TIME_ACCOUNTING (which never charges
 *                it); offcpu_delay_total is present either way;
 *   no_cap       a collector run without CAP_NET_ADMIN (dropped from its
 *                bounding set before exec) has every taskstats field of
 *                every thread absent, eperm in its summary, and the hint.
 *
 * The sysctl is global: the tests run in a child while this process only
 * waits and then puts the original value back, whatever happened to the
 * child (crash, assertion, timeout signal). ctest runs it RUN_SERIAL.
 *
 * Exits 77 (skipped) only for what the host lacks: /proc, a TASKSTATS
 * genetlink family, CAP_NET_ADMIN for the measured cases, a writable
 * sysctl for the toggle cases.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <pthread.h>
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "group.h"
#include "hostprobe.h"
#include "reader.h"

#define SKIP	    77
#define SYSCTL	    "/proc/sys/kernel/task_delayacct"
#define TOUCH_BYTES (64u << 20)
#define PAGE	    4096u
#define N_FAMILIES  8

static const char *const family[N_FAMILIES] = {
	"cpu",	     "blkio",	"swapin", "freepages",
	"thrashing", "compact", "wpcopy", "irq"};
static const char *const parts[4] = {"_count", "_delay_total", "_delay_max",
				     "_delay_min"};

static char tmp[PATH_MAX];
static bool have_cap;	     /* CAP_NET_ADMIN in our effective set */
static int sysctl_orig = -1; /* the value to restore, -1: none */
/* The kernel never charges irq delay: no CONFIG_IRQ_TIME_ACCOUNTING. */
static bool no_irqtime;

/* ---- Small helpers ------------------------------------------------------- */

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int read_sysctl(void)
{
	char *b;
	int v, r = e2e_read_file(SYSCTL, &b, NULL);

	if (r < 0)
		return r;
	v = b[0] == '1' ? 1 : b[0] == '0' ? 0 : -EINVAL;
	free(b);
	return v;
}

static int write_sysctl(int v)
{
	int fd = open(SYSCTL, O_WRONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, v ? "1\n" : "0\n", 2) != 2)
		r = -errno;
	close(fd);
	return r;
}

/*
 * How far hiwater_rss may be from VmHWM. Both are max(mm->hiwater_rss,
 * file + anon + shmem pages), but xacct_add_tsk() reads the three per-CPU
 * counters approximately (get_mm_rss()) while /proc/<pid>/status sums them
 * exactly (get_mm_counter_sum(), since 6.16): each counter may hold up to
 * one percpu_counter batch, max(32, 2 * CPUs) pages, unfolded on every
 * CPU. On 6.18 with 2 CPUs the two readings were 6 to 31 pages apart.
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

/* kB value of a "Key:" line of /proc/<pid>/status, in bytes; 0 if none. */
static uint64_t status_bytes(pid_t pid, const char *key)
{
	char path[64], *b, val[64];
	uint64_t v = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (e2e_read_file(path, &b, NULL) < 0)
		return 0;
	if (e2e_status_value(b, key, val, sizeof(val)))
		v = strtoull(val, NULL, 10) * 1024;
	free(b);
	return v;
}

static bool cap_net_admin(void)
{
	char *b, val[64];
	bool yes = false;

	if (e2e_read_file("/proc/self/status", &b, NULL) < 0)
		return false;
	if (e2e_status_value(b, "CapEff", val, sizeof(val)))
		yes = (strtoull(val, NULL, 16) >> CAP_NET_ADMIN) & 1;
	free(b);
	return yes;
}

/* What the plugin decides from <proc>/config.gz: "is not set", or a
 * config of a taskstats kernel without the symbol. */
static bool kconfig_lacks_irqtime(void)
{
	int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *text;
	size_t len;
	bool lacks = false;

	if (fd < 0)
		return false;
	if (ctp_read_kconfig(fd, &text, &len) == 0) {
		enum ctp_kconfig_value v = ctp_kconfig_lookup(
			text, len, "CONFIG_IRQ_TIME_ACCOUNTING", NULL, NULL);

		lacks = v == CTP_KCONFIG_NOT_SET ||
			(v == CTP_KCONFIG_ABSENT &&
			 ctp_kconfig_lookup(text, len, "CONFIG_TASKSTATS", NULL,
					    NULL) != CTP_KCONFIG_ABSENT);
		free(text);
	}
	close(fd);
	return lacks;
}

static int write_config(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fprintf(f,
		"plugin_dirs: [\"%s\"]\n"
		"workers: 2\n"
		"plugins:\n"
		"  taskstats:\n"
		"    required: true\n",
		CTP_TEST_PLUGIN_DIR);
	return fclose(f) ? -EIO : 0;
}

/*
 * Capture the host into <tmp>/<tag>.ctprof.zst. With drop_cap the collector
 * runs without CAP_NET_ADMIN: dropped from the bounding set, so exec does
 * not give it back to root. Returns 0 and *snap, SKIP, or -errno.
 */
static int capture(const char *tag, bool drop_cap, struct ctp_snap **snap)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], err[512];
	int r, st;
	pid_t pid;

	if (E2E_PATHF(cfg, "%s/taskstats.yaml", tmp) < 0 ||
	    E2E_PATHF(out, "%s/%s.ctprof.zst", tmp, tag) < 0 ||
	    E2E_PATHF(log, "%s/%s.log", tmp, tag) < 0)
		return -ENAMETOOLONG;
	r = write_config(cfg);
	if (r < 0)
		return r;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		if (drop_cap && have_cap &&
		    prctl(PR_CAPBSET_DROP, CAP_NET_ADMIN, 0, 0, 0) < 0) {
			fprintf(stderr, "PR_CAPBSET_DROP: %s\n",
				strerror(errno));
			_exit(SKIP);
		}
		execl(CTP_TEST_BINARY, CTP_TEST_BINARY, "--config", cfg, "-o",
		      out, "-v", (char *)NULL);
		_exit(127);
	}
	if ((r = e2e_wait(pid, &st)) < 0)
		return r;
	if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP) {
		e2e_show_file("collector", log);
		return SKIP;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		e2e_show_file("ctprof-core stderr", log);
		fprintf(stderr, "ctprof-core: status %#x\n", st);
		return -EIO;
	}
	r = ctp_snap_open(out, 1ull << 32, snap, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "%s\n", err);
	return r;
}

static const struct ctp_snap_plugin *plugin(const struct ctp_snap *snap)
{
	const struct ctp_snap_plugin *p = ctp_snap_plugins(snap);

	for (size_t i = 0; i < ctp_snap_n_plugins(snap); i++)
		if (!strcmp(p[i].name, "taskstats"))
			return &p[i];
	fail_msg("no taskstats plugin in the snapshot");
	return NULL;
}

static uint64_t summary(const struct ctp_snap *snap, const char *name)
{
	const struct ctp_snap_plugin *p = plugin(snap);

	for (size_t i = 0; i < p->n_summary; i++)
		if (!strcmp(p->summary_name[i], name))
			return p->summary[i];
	fail_msg("no summary counter %s", name);
	return 0;
}

static const struct ctp_snap_field *field(const struct ctp_snap *snap,
					  const char *name)
{
	const struct ctp_snap_field *f = ctp_snap_field_find(snap, name);

	if (!f)
		fail_msg("no field %s", name);
	return f;
}

/* The value of taskstats.<family><part> in a thread row. */
static struct ctp_value fval(const struct ctp_snap *snap, int fam, int part,
			     size_t row)
{
	char name[64];

	snprintf(name, sizeof(name), "taskstats.%s%s", family[fam],
		 parts[part]);
	return ctp_snap_get(snap, field(snap, name), row);
}

static ssize_t row_of(const struct ctp_snap *snap, pid_t tid)
{
	const struct ctp_snap_table *t = ctp_snap_table(snap, CTP_SCOPE_THREAD);

	for (size_t i = 0; i < t->rows; i++)
		if (t->tid[i] == (uint64_t)tid)
			return (ssize_t)i;
	fail_msg("tid %d not in the snapshot", (int)tid);
	return -1;
}

/*
 * The plugin's hint as the snapshot stores it (plugins[].hint, always
 * written: a string, or nil when the plugin set none), copied into buf;
 * NULL for nil. Read from the raw tree, independently of the reader, and
 * checked against what the reader gives. Fails the test when the key is
 * missing or is neither a string nor nil.
 */
static const char *snapshot_hint(const struct ctp_snap *snap, char *buf,
				 size_t len)
{
	const msgpack_object *root = ctp_snap_root(snap);
	const char *hint = NULL, *want = plugin(snap)->hint;
	bool found = false;

	assert_int_equal(root->type, MSGPACK_OBJECT_MAP);
	for (uint32_t i = 0; i < root->via.map.size && !found; i++) {
		const msgpack_object_kv *kv = &root->via.map.ptr[i];

		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->key.via.str.size != 7 ||
		    memcmp(kv->key.via.str.ptr, "plugins", 7) ||
		    kv->val.type != MSGPACK_OBJECT_ARRAY)
			continue;
		for (uint32_t p = 0; p < kv->val.via.array.size; p++) {
			const msgpack_object *m = &kv->val.via.array.ptr[p];
			const msgpack_object *name = NULL, *h = NULL;

			if (m->type != MSGPACK_OBJECT_MAP)
				continue;
			for (uint32_t k = 0; k < m->via.map.size; k++) {
				const msgpack_object_kv *e = &m->via.map.ptr[k];

				if (e->key.type != MSGPACK_OBJECT_STR)
					continue;
				if (e->key.via.str.size == 4 &&
				    !memcmp(e->key.via.str.ptr, "name", 4))
					name = &e->val;
				if (e->key.via.str.size == 4 &&
				    !memcmp(e->key.via.str.ptr, "hint", 4))
					h = &e->val;
			}
			if (!name || name->type != MSGPACK_OBJECT_STR ||
			    name->via.str.size != 9 ||
			    memcmp(name->via.str.ptr, "taskstats", 9))
				continue;
			if (!h)
				fail_msg("plugins[%u] (taskstats) has no "
					 "\"hint\" key",
					 p);
			if (h->type == MSGPACK_OBJECT_STR) {
				snprintf(buf, len, "%.*s", (int)h->via.str.size,
					 h->via.str.ptr);
				hint = buf;
			} else if (h->type != MSGPACK_OBJECT_NIL) {
				fail_msg("taskstats hint is msgpack type %d, "
					 "not a string or nil",
					 (int)h->type);
			}
			found = true;
			break;
		}
	}
	if (!found)
		fail_msg("no taskstats entry in the raw plugins array");
	if (!hint != !want || (hint && strcmp(hint, want) != 0))
		fail_msg("raw hint '%s', the reader's '%s'",
			 hint ? hint : "(nil)", want ? want : "(nil)");
	return hint;
}

/* `ctprof-core show --summary` of a capture into a malloc'ed string. */
static char *show_summary(const char *tag)
{
	char snap[PATH_MAX], out[PATH_MAX], *b = NULL;
	const char *args[] = {"show", "--summary", snap, NULL};

	if (E2E_PATHF(snap, "%s/%s.ctprof.zst", tmp, tag) < 0 ||
	    E2E_PATHF(out, "%s/%s.show", tmp, tag) < 0 ||
	    e2e_run(args, out, NULL) != 0 || e2e_read_file(out, &b, NULL) < 0)
		return NULL;
	return b;
}

/* ---- A thread that runs, then parks -------------------------------------- */

struct runner {
	pthread_t th;
	_Atomic pid_t tid;
	bool do_io;
	int io_err; /* first failing call of the I/O, -errno */
	unsigned direct_reads;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool release;
};

/*
 * Synchronous block I/O the kernel must wait for: fsync of fresh data,
 * then O_DIRECT reads that bypass the page cache. Each wait is an
 * io_schedule(), which delay accounting charges to blkio.
 */
static void block_io(struct runner *r)
{
	char path[PATH_MAX];
	void *buf = NULL;
	int fd;

	if (E2E_PATHF(path, "%s/blkio.dat", tmp) < 0 ||
	    posix_memalign(&buf, PAGE, 1u << 20)) {
		r->io_err = -ENOMEM;
		return;
	}
	memset(buf, 0x5a, 1u << 20);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, 1u << 20) != 1 << 20 || fsync(fd) < 0) {
		r->io_err = -errno;
		goto out;
	}
	close(fd);
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		r->io_err = -errno;
		goto out;
	}
	for (unsigned i = 0; i < 64; i++) {
		if (pread(fd, buf, PAGE, (off_t)((i * 37u) % 256u) * PAGE) !=
		    PAGE) {
			r->io_err = -errno;
			break;
		}
		r->direct_reads++;
	}
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(buf);
}

static void *runner_main(void *arg)
{
	struct runner *r = arg;
	volatile uint64_t spin = 0;
	(void)spin;
	struct timespec t0, t;

	/* ~20 ms on a CPU, yielding now and then: it waits on runqueues. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			spin += (uint64_t)i;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
			 (t.tv_nsec - t0.tv_nsec) <
		 20000000L);
	if (r->do_io)
		block_io(r);
	atomic_store(&r->tid, gettid_());
	pthread_mutex_lock(&r->lock);
	while (!r->release)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static int runner_start(struct runner *r, bool do_io)
{
	memset(r, 0, sizeof(*r));
	r->do_io = do_io;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (pthread_create(&r->th, NULL, runner_main, r))
		return -EAGAIN;
	while (!atomic_load(&r->tid))
		usleep(1000);
	return 0;
}

static void runner_stop(struct runner *r)
{
	pthread_mutex_lock(&r->lock);
	r->release = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->th, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}

/* ---- Tests -------------------------------------------------------------- */

static void *hold_thread(void *arg)
{
	int fd = *(int *)arg;
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A child of two threads that touched 64 MiB, until `go` closes. */
static void toucher(int ready, int go)
{
	pthread_t th;
	char *p = mmap(NULL, TOUCH_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char c;

	if (p == MAP_FAILED || pthread_create(&th, NULL, hold_thread, &go))
		_exit(1);
	for (size_t off = 0; off < TOUCH_BYTES; off += PAGE)
		p[off] = (char)off;
	if (write(ready, "r", 1) != 1)
		_exit(1);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

static void hiwater(void **state)
{
	int ready[2], go[2], st;
	uint64_t hwm_before, hwm_after;
	struct ctp_snap *snap = NULL;
	const struct ctp_snap_table *t;
	char c;
	pid_t pid;
	size_t rows = 0;
	uint64_t first = 0;

	(void)state;
	if (!have_cap)
		skip();
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		toucher(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	/* Both threads exist once the main one reports. */
	usleep(20000);
	hwm_before = status_bytes(pid, "VmHWM");
	assert_int_equal(capture("hiwater", false, &snap), 0);
	hwm_after = status_bytes(pid, "VmHWM");
	close(go[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(ready[0]);
	assert_true(hwm_before >= TOUCH_BYTES);
	assert_int_equal(hwm_before, hwm_after);

	t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	for (size_t i = 0; i < t->rows; i++) {
		struct ctp_value rss, vm;

		if (t->tgid[i] != (uint64_t)pid)
			continue;
		rows++;
		rss = ctp_snap_get(snap, field(snap, "taskstats.hiwater_rss"),
				   i);
		vm = ctp_snap_get(snap, field(snap, "taskstats.hiwater_vm"), i);
		assert_int_equal(rss.type, CTP_TYPE_U64);
		assert_int_equal(vm.type, CTP_TYPE_U64);
		print_message("[ INFO     ] tid %" PRIu64
			      ": hiwater_rss %" PRIu64 ", VmHWM %" PRIu64
			      " (%+" PRId64 " pages), hiwater_vm %" PRIu64 "\n",
			      t->tid[i], rss.u64, hwm_before,
			      ((int64_t)rss.u64 - (int64_t)hwm_before) /
				      (int64_t)PAGE,
			      vm.u64);
		if (rss.u64 > hwm_before + rss_slack() ||
		    rss.u64 + rss_slack() < hwm_before)
			fail_msg("hiwater_rss %" PRIu64 " vs VmHWM %" PRIu64
				 ": more than %" PRIu64 " bytes apart",
				 rss.u64, hwm_before, rss_slack());
		assert_true(vm.u64 >= rss.u64);
		if (!first)
			first = rss.u64;
		/* One mm: the same peak on every thread. */
		assert_int_equal(rss.u64, first);
	}
	assert_int_equal(rows, 2);
	assert_int_equal(summary(snap, "eperm"), 0);
	ctp_snap_free(snap);
}

static void toggle_off(void **state)
{
	struct runner r;
	struct ctp_snap *snap = NULL;
	pid_t tids[2];
	int v = read_sysctl();

	(void)state;
	if (v == -ENOENT) {
		print_message("SKIP: no %s: the kernel lacks "
			      "CONFIG_TASK_DELAY_ACCT\n",
			      SYSCTL);
		skip();
	}
	if (!have_cap)
		skip();
	if (v != 0 && write_sysctl(0) < 0) {
		print_message("SKIP: %s is %d and not writable\n", SYSCTL, v);
		skip();
	}
	assert_int_equal(read_sysctl(), 0);
	assert_int_equal(runner_start(&r, false), 0);
	tids[0] = gettid_();
	tids[1] = atomic_load(&r.tid);
	assert_int_equal(capture("off", false, &snap), 0);
	runner_stop(&r);

	for (int k = 0; k < 2; k++) {
		ssize_t row = row_of(snap, tids[k]);
		struct ctp_value cnt = fval(snap, 0, 0, (size_t)row);

		assert_int_equal(cnt.type, CTP_TYPE_U64);
		assert_true(cnt.u64 >= 1);
		assert_int_equal(fval(snap, 0, 1, (size_t)row).type,
				 CTP_TYPE_U64);
		assert_int_equal(fval(snap, 0, 2, (size_t)row).type,
				 CTP_TYPE_U64);
		for (int f = 1; f < N_FAMILIES; f++)
			for (int p = 0; p < 4; p++)
				if (fval(snap, f, p, (size_t)row).type !=
				    CTP_VALUE_ABSENT)
					fail_msg("tid %d: taskstats.%s%s "
						 "present with the toggle off",
						 (int)tids[k], family[f],
						 parts[p]);
		print_message("[ INFO     ] tid %d: cpu_count %" PRIu64
			      ", cpu_delay_total %" PRIu64 " ns\n",
			      (int)tids[k], cnt.u64,
			      fval(snap, 0, 1, (size_t)row).u64);
	}
	assert_true(summary(snap, "ok") > 0);
	assert_int_equal(summary(snap, "eperm"), 0);
	{
		char buf[512];
		const char *hint = snapshot_hint(snap, buf, sizeof(buf));

		assert_non_null(hint);
		assert_non_null(strstr(hint, "kernel.task_delayacct=1"));
	}
	ctp_snap_free(snap);
}

static int restore_sysctl(void **state)
{
	(void)state;
	if (sysctl_orig >= 0 && read_sysctl() != sysctl_orig)
		write_sysctl(sysctl_orig);
	return 0;
}

static void toggle_on(void **state)
{
	struct runner r;
	struct ctp_snap *snap = NULL;
	struct ctp_value cnt;
	ssize_t row;

	(void)state;
	if (!have_cap)
		skip();
	if (read_sysctl() == -ENOENT) {
		print_message(
			"SKIP: the kernel lacks CONFIG_TASK_DELAY_ACCT\n");
		skip();
	}
	int w = write_sysctl(1);

	if (w < 0) {
		print_message("SKIP: cannot write %s: %s\n", SYSCTL,
			      strerror(-w));
		skip();
	}
	assert_int_equal(read_sysctl(), 1);
	/* Started after the toggle. */
	assert_int_equal(runner_start(&r, true), 0);
	assert_int_equal(capture("on", false, &snap), 0);
	runner_stop(&r);
	if (r.io_err)
		print_message("[ INFO     ] block I/O: %s after %u direct "
			      "reads\n",
			      strerror(-r.io_err), r.direct_reads);

	row = row_of(snap, atomic_load(&r.tid));
	for (int f = 0; f < N_FAMILIES; f++) {
		/* irq: only on a kernel that charges it. */
		bool want = f != 7 || !no_irqtime;

		for (int p = 0; p < 4; p++) {
			bool got = fval(snap, f, p, (size_t)row).type ==
				   CTP_TYPE_U64;

			if (p < 3 && got != want)
				fail_msg("taskstats.%s%s %s with the toggle on",
					 family[f], parts[p],
					 got ? "present" : "absent");
			if (p == 3 && got && !want)
				fail_msg("taskstats.%s%s present", family[f],
					 parts[p]);
		}
	}
	/* The total stays measured: without irq it is not an input. */
	assert_int_equal(
		ctp_snap_value(snap,
			       field(snap, "taskstats.offcpu_delay_total"),
			       (size_t)row)
			.type,
		CTP_TYPE_U64);
	assert_int_equal(field(snap, "taskstats.offcpu_delay_total")->n_terms,
			 no_irqtime ? 7 : 8);
	cnt = fval(snap, 1, 0, (size_t)row);
	print_message("[ INFO     ] blkio_count %" PRIu64
		      ", blkio_delay_total %" PRIu64 " ns after %u direct "
		      "reads\n",
		      cnt.u64, fval(snap, 1, 1, (size_t)row).u64,
		      r.direct_reads);
	/* The reads waited for the disk: the family measured something. */
	if (r.direct_reads > 0) {
		assert_true(cnt.u64 >= 1);
		assert_true(fval(snap, 1, 1, (size_t)row).u64 > 0);
		assert_int_equal(fval(snap, 1, 3, (size_t)row).type,
				 CTP_TYPE_U64);
	}
	{
		char buf[512];
		const char *hint = snapshot_hint(snap, buf, sizeof(buf));

		if (no_irqtime) {
			/* The one thing the kernel lacks, named. */
			assert_non_null(hint);
			assert_non_null(strstr(hint, "irq delays absent: the "
						     "kernel lacks "
						     "CONFIG_IRQ_TIME_"
						     "ACCOUNTING"));
		} else {
			/* Everything measured: nothing to remedy. */
			assert_null(hint);
		}
	}
	ctp_snap_free(snap);
	restore_sysctl(NULL);
}

static void no_cap(void **state)
{
	struct ctp_snap *snap = NULL;
	const struct ctp_snap_table *t;
	const struct ctp_snap_field *fs;
	char buf[512], *show;
	const char *hint;
	size_t nf, measured = 0;
	int r;

	(void)state;
	r = capture("nocap", true, &snap);
	if (r == SKIP)
		skip();
	assert_int_equal(r, 0);
	t = ctp_snap_table(snap, CTP_SCOPE_THREAD);
	assert_true(t->rows > 0);
	fs = ctp_snap_fields(snap);
	nf = ctp_snap_n_fields(snap);
	for (size_t f = 0; f < nf; f++) {
		if (strncmp(fs[f].name, "taskstats.", 10))
			continue;
		for (size_t i = 0; i < t->rows; i++)
			measured += ctp_snap_get(snap, &fs[f], i).type !=
				    CTP_VALUE_ABSENT;
	}
	assert_int_equal(measured, 0);
	assert_int_equal(summary(snap, "ok"), 0);
	assert_true(summary(snap, "eperm") >= t->rows);
	assert_int_equal(plugin(snap)->status, 1);
	assert_int_equal(plugin(snap)->errors, 0);

	hint = snapshot_hint(snap, buf, sizeof(buf));
	assert_non_null(hint);
	assert_non_null(strstr(hint, "EPERM"));
	assert_non_null(strstr(hint, "CAP_NET_ADMIN"));
	show = show_summary("nocap");
	assert_non_null(show);
	{
		/* On its own line, under the plugin's. */
		char line[600];

		snprintf(line, sizeof(line), "  hint: %s\n", hint);
		if (!strstr(show, line))
			fail_msg("show does not print the hint '%s':\n%s", hint,
				 show);
	}
	free(show);
	ctp_snap_free(snap);
}

/* ---- Main: run the tests in a child, restore the sysctl after ---------- */

static int run_all(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hiwater),
		cmocka_unit_test(toggle_off),
		cmocka_unit_test_teardown(toggle_on, restore_sysctl),
		cmocka_unit_test(no_cap),
	};

	return cmocka_run_group_tests(tests, NULL, restore_sysctl);
}

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* 1 when the plugin finds the family, 0 when not, < 0 when the capture
 * itself failed. */
static int family_present(void)
{
	struct ctp_snap *snap = NULL;
	int found, r;

	/* The plugin's own verdict, from one quick capture. */
	r = capture("probe", false, &snap);
	if (r != 0)
		return r < 0 ? r : -EIO;
	found = summary(snap, "skipped") == 0;
	ctp_snap_free(snap);
	return found;
}

int main(void)
{
	struct sigaction sa;
	int st, rc;
	pid_t pid;

	if (access("/proc/self/task", R_OK) < 0) {
		printf("SKIP: no readable /proc\n");
		return SKIP;
	}
	if (e2e_tmpdir("taskstats", tmp, sizeof(tmp)) < 0)
		return 1;
	have_cap = cap_net_admin();
	no_irqtime = kconfig_lacks_irqtime();
	if (no_irqtime)
		printf("NOTE: the kernel lacks CONFIG_IRQ_TIME_ACCOUNTING: the "
		       "irq family is expected absent\n");
	rc = family_present();
	if (rc <= 0) {
		if (rc == 0)
			printf("SKIP: no TASKSTATS genetlink family "
			       "(CONFIG_TASKSTATS)\n");
		e2e_rm_rf(tmp);
		return rc == 0 ? SKIP : 1;
	}
	if (!have_cap)
		printf("NOTE: no CAP_NET_ADMIN: only the EPERM case runs\n");
	sysctl_orig = read_sysctl();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* Die with the guard, and by the signals it forwards. */
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(run_all());
	}
	child_pid = pid;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	if (sysctl_orig >= 0 && read_sysctl() != sysctl_orig) {
		int r = write_sysctl(sysctl_orig);

		printf("NOTE: restored %s to %d%s\n", SYSCTL, sysctl_orig,
		       r < 0 ? " FAILED" : "");
	}
	e2e_rm_rf(tmp);
	return rc;
}
