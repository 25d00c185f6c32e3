/* SPDX-License-Identifier: MIT */
/*
 * ctprof-core with procfs-stat on the live /proc. This process starts
 * threads with odd names, SCHED_BATCH/SCHED_IDLE (SCHED_FIFO when allowed),
 * a nice value and a one-CPU affinity, parks them, and captures the host.
 * Then: those threads are in the snapshot with exactly what the kernel
 * reports for them (read from /proc and the syscalls before and after the
 * capture), and the snapshot's thread set agrees with /proc listings taken
 * just before and just after.
 *
 * Exits 77 (skipped) only when the kernel or sandbox lacks something the
 * test needs: a readable /proc, thread naming, SCHED_BATCH/IDLE, affinity.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "reader.h"

#define SKIP 77

static int nbad;
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			nbad++;                                                \
			print_error(__VA_ARGS__);                              \
			print_error("\n");                                     \
		}                                                              \
	} while (0)

/* ---- The threads -------------------------------------------------------- */

struct spec {
	const char *name; /* at most 15 bytes: TASK_COMM_LEN */
	int policy;	  /* SCHED_* to set, -1 to leave SCHED_OTHER */
	int rt_prio;
	int nice;      /* 0: leave */
	bool pin;      /* restrict to one CPU */
	bool optional; /* may be refused: SCHED_FIFO needs CAP_SYS_NICE */
};

static const struct spec specs[] = {
	{"a (b) c)", SCHED_BATCH, 0, 0, true, false},
	{"sp ace", SCHED_IDLE, 0, 0, false, false},
	{"nice 7", -1, 0, 7, false, false},
	{"rt fifo", SCHED_FIFO, 10, 0, true, true},
};
#define N_WORKERS (sizeof(specs) / sizeof(specs[0]))

struct worker {
	const struct spec *sp;
	pthread_t th;
	pid_t tid;
	bool pinned;
	int err;	  /* first failure, negative errno */
	const char *what; /* the call that failed */
};

static struct worker workers[N_WORKERS];
static int pin_cpu;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static unsigned ready;
static bool release;

static void failed(struct worker *w, const char *what, int err)
{
	if (!w->err) {
		w->err = -err;
		w->what = what;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct spec *sp = w->sp;
	w->tid = (pid_t)syscall(SYS_gettid);

	int r = pthread_setname_np(pthread_self(), sp->name);
	if (r)
		failed(w, "pthread_setname_np", r);
	if (sp->pin) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(pin_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			failed(w, "sched_setaffinity", errno);
		else
			w->pinned = true;
	}
	if (sp->nice && setpriority(PRIO_PROCESS, 0, sp->nice) < 0)
		failed(w, "setpriority", errno);
	if (sp->policy >= 0) {
		/* On Linux, pid 0 is the calling thread, not the process. */
		struct sched_param p = {.sched_priority = sp->rt_prio};
		if (sched_setscheduler(0, sp->policy, &p) < 0)
			failed(w, "sched_setscheduler", errno);
	}

	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&cond);
	while (!release)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void stop_workers(void)
{
	pthread_mutex_lock(&lock);
	release = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < N_WORKERS; i++)
		if (workers[i].tid)
			pthread_join(workers[i].th, NULL);
}

/* ---- What the kernel says about a thread -------------------------------- */

struct obs {
	bool have[F_COUNT];
	int64_t v[F_COUNT];
	char policy[32];
	char state;
	char cpus[512];
};

static void cpus_str(const cpu_set_t *set, size_t size, char *buf, size_t len)
{
	size_t off = 0;
	int ncpu = (int)(size * 8);
	buf[0] = '\0';
	for (int c = 0; c < ncpu && off < len; c++) {
		if (!CPU_ISSET_S(c, size, set))
			continue;
		int e = c;
		while (e + 1 < ncpu && CPU_ISSET_S(e + 1, size, set))
			e++;
		int n = e == c ? snprintf(buf + off, len - off, "%s%d",
					  off ? "," : "", c)
			       : snprintf(buf + off, len - off, "%s%d-%d",
					  off ? "," : "", c, e);
		if (n < 0)
			break;
		off += (size_t)n;
		c = e;
	}
}

static int affinity_of(pid_t tid, char *buf, size_t len)
{
	size_t ncpu = CPU_SETSIZE;
	for (;;) {
		cpu_set_t *set = CPU_ALLOC(ncpu);
		size_t size = CPU_ALLOC_SIZE(ncpu);
		if (!set)
			return -ENOMEM;
		if (sched_getaffinity(tid, size, set) == 0) {
			cpus_str(set, size, buf, len);
			CPU_FREE(set);
			return 0;
		}
		int err = errno;
		CPU_FREE(set);
		if (err != EINVAL || ncpu > (1u << 20))
			return -err;
		ncpu *= 2;
	}
}

/* Stat and status of one of our threads, and its affinity as the plugin
 * reads it on the live /proc (sched_getaffinity). */
static int observe(pid_t tid, struct obs *o)
{
	char path[128], *stat = NULL, *status = NULL, tok[64];
	memset(o, 0, sizeof(*o));
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	int r = e2e_read_file(path, &stat, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (r == 0)
		r = e2e_read_file(path, &status, NULL);
	if (r < 0)
		goto out;
	for (int f = 0; f < F_COUNT; f++) {
		if (!e2e_fdef[f].stat_no ||
		    !e2e_stat_token(stat, e2e_fdef[f].stat_no, tok,
				    sizeof(tok)))
			continue;
		long long n = strtoll(tok, NULL, 10);
		o->have[f] = true;
		o->v[f] = n;
		if (f == F_POLICY)
			snprintf(o->policy, sizeof(o->policy), "%s",
				 e2e_policy_name(n, tok, sizeof(tok)));
	}
	if (e2e_status_value(status, "State", tok, sizeof(tok))) {
		o->have[F_STATE] = true;
		o->state = tok[0];
	}
	if (e2e_status_value(status, "voluntary_ctxt_switches", tok,
			     sizeof(tok))) {
		o->have[F_VCSW] = true;
		o->v[F_VCSW] = strtoll(tok, NULL, 10);
	}
	if (e2e_status_value(status, "nonvoluntary_ctxt_switches", tok,
			     sizeof(tok))) {
		o->have[F_NVCSW] = true;
		o->v[F_NVCSW] = strtoll(tok, NULL, 10);
	}
	r = affinity_of(tid, o->cpus, sizeof(o->cpus));
	o->have[F_AFFINITY] = r == 0;
out:
	free(stat);
	free(status);
	return r;
}

static bool obs_same(const struct obs *a, const struct obs *b, int f)
{
	if (a->have[f] != b->have[f])
		return false;
	switch (f) {
	case F_POLICY:
		return !strcmp(a->policy, b->policy);
	case F_STATE:
		return a->state == b->state;
	case F_AFFINITY:
		return !strcmp(a->cpus, b->cpus);
	default:
		return a->v[f] == b->v[f];
	}
}

/* ---- /proc listings ----------------------------------------------------- */

struct tids {
	uint32_t *v;
	size_t n, cap;
};

static bool numeric(const char *s, uint32_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > INT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int add_tid(struct tids *t, uint32_t tid)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 1024;
		uint32_t *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	t->v[t->n++] = tid;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Every tid under /proc/<tgid>/task/, sorted. A process that goes away
 * while listed just contributes fewer tids. */
static int list_tids(struct tids *t)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	int ret = 0;
	struct dirent *e;
	while (ret == 0 && (e = readdir(d))) {
		uint32_t tgid, tid;
		if (!numeric(e->d_name, &tgid))
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%u/task", tgid);
		DIR *td = opendir(path);
		if (!td)
			continue;
		struct dirent *te;
		while (ret == 0 && (te = readdir(td)))
			if (numeric(te->d_name, &tid))
				ret = add_tid(t, tid);
		closedir(td);
	}
	closedir(d);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_u32);
	return ret;
}

static bool has_tid(const struct tids *t, uint32_t tid)
{
	return t->n && bsearch(&tid, t->v, t->n, sizeof(*t->v), cmp_u32);
}

/* ---- The capture -------------------------------------------------------- */

static char tmp[PATH_MAX];
static struct ctp_snap *snap;
static struct tids before, after;
static uint64_t before_ticks; /* CLOCK_BOOTTIME before the first listing */
static struct obs obs_before[N_WORKERS + 1], obs_after[N_WORKERS + 1];
static pid_t tids_of[N_WORKERS + 1]; /* [0]: the main thread */
static char our_comm[64];
static bool fifo_active;

static uint64_t boottime_ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	uint64_t ns =
		(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* As the kernel's nsec_to_clock_t: truncating. */
	return ns / (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

static int run_capture(void)
{
	char cfg[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	if (E2E_PATHF(cfg, "%s/live.yaml", tmp) < 0 ||
	    E2E_PATHF(out, "%s/live.ctprof.zst", tmp) < 0 ||
	    E2E_PATHF(log, "%s/live.log", tmp) < 0)
		return -ENAMETOOLONG;
	struct e2e_cfg c = {
		.proc = "/proc",
		.sys = "/sys",
		.cgroup = "auto",
		.workers = 2,
		.required = true,
	};
	int r = e2e_write_config(cfg, &c);
	if (r < 0)
		return r;
	const char *args[] = {"--config", cfg, "-o", out, NULL};
	before_ticks = boottime_ticks();
	if ((r = list_tids(&before)) < 0)
		return r;
	r = e2e_run(args, NULL, log);
	int l = list_tids(&after);
	if (r != 0) {
		e2e_show_file("ctprof-core stderr", log);
		fprintf(stderr, "ctprof-core exited with %d\n", r);
		return -EIO;
	}
	if (l < 0)
		return l;
	char err[512];
	r = ctp_snap_open(out, 1ull << 32, &snap, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "%s\n", err);
	return r;
}

/* ---- Checks ------------------------------------------------------------- */

static const struct ctp_snap_table *threads(void)
{
	return ctp_snap_table(snap, CTP_SCOPE_THREAD);
}

static ssize_t row_of(uint32_t tid)
{
	const struct ctp_snap_table *t = threads();
	for (size_t i = 0; i < t->rows; i++)
		if (t->tid[i] == tid)
			return (ssize_t)i;
	return -1;
}

static bool value_is(const struct ctp_value *v, const struct obs *o, int f,
		     char *got, size_t len)
{
	snprintf(got, len, "absent");
	if (v->type == CTP_VALUE_ABSENT)
		return !o->have[f];
	switch (v->type) {
	case CTP_TYPE_U64:
		snprintf(got, len, "%" PRIu64, v->u64);
		return o->have[f] && v->u64 == (uint64_t)o->v[f];
	case CTP_TYPE_I64:
		snprintf(got, len, "%" PRId64, v->i64);
		return o->have[f] && v->i64 == o->v[f];
	case CTP_TYPE_STRING:
		snprintf(got, len, "%.*s", (int)v->str.len, v->str.ptr);
		return o->have[f] && e2e_bytes_eq(v->str, o->policy);
	case CTP_TYPE_CHAR:
		snprintf(got, len, "%c", v->c);
		return o->have[f] && v->c == (unsigned char)o->state;
	case CTP_TYPE_CPUSET:
		e2e_cpuset_str(v, got, len);
		return o->have[f] && !strcmp(got, o->cpus);
	}
	return false;
}

static const char *name_of(size_t k)
{
	return k ? workers[k - 1].sp->name : our_comm;
}

/* Our threads, by name, with the attributes they gave themselves. */
static void our_threads(void **state)
{
	(void)state;
	nbad = 0;
	const struct ctp_snap_table *t = threads();
	const struct ctp_snap_field *pol =
		ctp_snap_field_find(snap, "procfs.policy");
	const struct ctp_snap_field *aff =
		ctp_snap_field_find(snap, "procfs.cpu_affinity");
	const struct ctp_snap_field *nice =
		ctp_snap_field_find(snap, "procfs.nice");
	const struct ctp_snap_field *st =
		ctp_snap_field_find(snap, "procfs.state");
	assert_non_null(pol);
	assert_non_null(aff);
	assert_non_null(nice);
	assert_non_null(st);
	char pin[16];
	snprintf(pin, sizeof(pin), "%d", pin_cpu);

	for (size_t k = 0; k <= N_WORKERS; k++) {
		ssize_t row = row_of((uint32_t)tids_of[k]);
		CHECK(row >= 0, "thread '%s' (tid %d) not in the snapshot",
		      name_of(k), (int)tids_of[k]);
		if (row < 0)
			continue;
		CHECK(t->tgid[row] == (uint64_t)getpid(),
		      "tid %d: tgid %" PRIu64, (int)tids_of[k], t->tgid[row]);
		CHECK(e2e_bytes_eq(t->comm[row], name_of(k)),
		      "tid %d: comm '%.*s', expected '%s'", (int)tids_of[k],
		      (int)t->comm[row].len,
		      t->comm[row].ptr ? t->comm[row].ptr : "", name_of(k));
		struct ctp_value s = ctp_snap_get(snap, st, (size_t)row);
		CHECK(s.type == CTP_TYPE_CHAR && s.c == 'S',
		      "'%s': state '%c', expected 'S' (parked)", name_of(k),
		      s.type ? s.c : '-');
		if (!k)
			continue;
		const struct spec *sp = workers[k - 1].sp;
		struct ctp_value p = ctp_snap_get(snap, pol, (size_t)row);
		const char *want = sp->policy == SCHED_BATCH  ? "SCHED_BATCH"
				   : sp->policy == SCHED_IDLE ? "SCHED_IDLE"
				   : sp->policy == SCHED_FIFO && fifo_active
					   ? "SCHED_FIFO"
					   : "SCHED_OTHER";
		CHECK(p.type == CTP_TYPE_STRING && e2e_bytes_eq(p.str, want),
		      "'%s': policy '%.*s', expected %s", sp->name,
		      p.type ? (int)p.str.len : 0, p.type ? p.str.ptr : "",
		      want);
		char got[512];
		struct ctp_value a = ctp_snap_get(snap, aff, (size_t)row);
		if (a.type == CTP_TYPE_CPUSET)
			e2e_cpuset_str(&a, got, sizeof(got));
		else
			snprintf(got, sizeof(got), "absent");
		if (workers[k - 1].pinned)
			CHECK(!strcmp(got, pin),
			      "'%s': affinity {%s}, expected {%s}", sp->name,
			      got, pin);
		if (sp->nice) {
			struct ctp_value n =
				ctp_snap_get(snap, nice, (size_t)row);
			CHECK(n.type == CTP_TYPE_I64 && n.i64 == sp->nice,
			      "'%s': nice %" PRId64 ", expected %d", sp->name,
			      n.i64, sp->nice);
		}
	}

	/* Our process: its name, and every thread of it. */
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	const struct ctp_snap_field *nr =
		ctp_snap_field_find(snap, E2E_NR_THREADS);
	assert_non_null(nr);
	size_t prow;
	for (prow = 0; prow < pt->rows; prow++)
		if (pt->tgid[prow] == (uint64_t)getpid())
			break;
	assert_true(prow < pt->rows);
	CHECK(e2e_bytes_eq(pt->comm[prow], our_comm), "process comm '%.*s'",
	      (int)pt->comm[prow].len, pt->comm[prow].ptr);
	CHECK(pt->nthreads[prow] == N_WORKERS + 1,
	      "our process has %" PRIu64 " threads recorded",
	      pt->nthreads[prow]);
	struct ctp_value v = ctp_snap_get(snap, nr, prow);
	CHECK(v.type == CTP_TYPE_U64 && v.u64 == N_WORKERS + 1,
	      "our nr_threads %" PRIu64, v.u64);
	assert_int_equal(nbad, 0);
}

/* Fields a thread changes only by running. */
static bool runtime_field(int f)
{
	return f == F_MINFLT || f == F_MAJFLT || f == F_UTIME || f == F_STIME ||
	       f == F_VCSW || f == F_NVCSW;
}

/*
 * Every procfs value of our threads is what /proc and the syscalls said
 * before and after the capture. A parked thread does not run, so all its
 * values hold still; if one did run after all (its counters moved), and for
 * the main thread, which runs the test, only the attributes that running
 * cannot change are compared (not counters, state or last CPU).
 */
static void our_values(void **state)
{
	(void)state;
	nbad = 0;
	unsigned checked = 0;
	for (size_t k = 0; k <= N_WORKERS; k++) {
		ssize_t row = row_of((uint32_t)tids_of[k]);
		assert_true(row >= 0);
		bool ran = k == 0;
		for (int f = 0; f < F_COUNT; f++)
			if (runtime_field(f) &&
			    !obs_same(&obs_before[k], &obs_after[k], f))
				ran = true;
		if (ran && k)
			print_message("[ NOTE     ] '%s' ran during the "
				      "capture; comparing its attributes "
				      "only\n",
				      name_of(k));
		for (int f = 0; f < F_COUNT; f++) {
			const struct ctp_snap_field *sf =
				ctp_snap_field_find(snap, e2e_fdef[f].name);
			assert_non_null(sf);
			if (ran && (runtime_field(f) || f == F_STATE ||
				    f == F_PROCESSOR))
				continue;
			CHECK(obs_same(&obs_before[k], &obs_after[k], f),
			      "'%s': %s changed during the capture", name_of(k),
			      e2e_fdef[f].name);
			CHECK(obs_before[k].have[f], "'%s': /proc has no %s",
			      name_of(k), e2e_fdef[f].name);
			char got[512];
			struct ctp_value v =
				ctp_snap_get(snap, sf, (size_t)row);
			CHECK(value_is(&v, &obs_before[k], f, got, sizeof(got)),
			      "'%s' (tid %d): %s is %s in the snapshot",
			      name_of(k), (int)tids_of[k], e2e_fdef[f].name,
			      got);
			checked++;
		}
	}
	/* policy, nice, priority, rt_priority, start time, affinity at
	 * least, for every thread. */
	CHECK(checked >= (N_WORKERS + 1) * 6, "only %u values compared",
	      checked);
	assert_int_equal(nbad, 0);
}

/*
 * The snapshot against the listings: a tid listed both before and after
 * lived through the capture and must be in it; a snapshot tid listed in
 * neither must have started after the first listing began (ctprof-core's
 * own threads, and other short-lived ones).
 */
static void thread_set(void **state)
{
	(void)state;
	nbad = 0;
	const struct ctp_snap_table *t = threads();
	const struct ctp_snap_field *start =
		ctp_snap_field_find(snap, "procfs.start_time");
	assert_non_null(start);
	size_t both = 0, transient = 0;
	for (size_t i = 0; i < before.n; i++) {
		if (!has_tid(&after, before.v[i]))
			continue;
		both++;
		CHECK(row_of(before.v[i]) >= 0,
		      "tid %u lived through the capture but is not in it",
		      before.v[i]);
	}
	for (size_t i = 0; i < t->rows; i++) {
		uint32_t tid = (uint32_t)t->tid[i];
		if (has_tid(&before, tid) || has_tid(&after, tid))
			continue;
		transient++;
		struct ctp_value v = ctp_snap_get(snap, start, i);
		CHECK(v.type == CTP_TYPE_U64 && v.u64 >= before_ticks,
		      "tid %u (tgid %" PRIu64 ", '%.*s') is in no listing and "
		      "started at %" PRIu64 ", before the listing (%" PRIu64
		      ")",
		      tid, t->tgid[i], (int)t->comm[i].len,
		      t->comm[i].ptr ? t->comm[i].ptr : "", v.u64,
		      before_ticks);
	}
	print_message("[ INFO     ] %zu threads recorded, %zu listed before, "
		      "%zu after, %zu in both, %zu transient\n",
		      t->rows, before.n, after.n, both, transient);
	/* The capture itself runs threads, so it always sees something. */
	CHECK(t->rows > N_WORKERS, "only %zu threads recorded", t->rows);
	assert_int_equal(nbad, 0);
}

/* Structure of a live snapshot: order, process rows, tallies, plugin. */
static void consistent(void **state)
{
	(void)state;
	nbad = 0;
	const struct ctp_snap_table *t = threads();
	const struct ctp_snap_table *pt =
		ctp_snap_table(snap, CTP_SCOPE_PROCESS);
	for (size_t i = 1; i < t->rows; i++)
		CHECK(t->tgid[i - 1] < t->tgid[i] ||
			      (t->tgid[i - 1] == t->tgid[i] &&
			       t->tid[i - 1] < t->tid[i]),
		      "thread rows %zu and %zu out of order", i - 1, i);
	size_t r = 0;
	for (size_t p = 0; p < pt->rows; p++) {
		if (p)
			CHECK(pt->tgid[p - 1] < pt->tgid[p],
			      "process rows %zu and %zu out of order", p - 1,
			      p);
		size_t n = 0;
		while (r < t->rows && t->tgid[r] == pt->tgid[p]) {
			n++;
			r++;
		}
		CHECK(n == pt->nthreads[p] && n > 0,
		      "tgid %" PRIu64 ": nthreads %" PRIu64 ", %zu rows",
		      pt->tgid[p], pt->nthreads[p], n);
	}
	CHECK(r == t->rows, "threads without a process row");
	const struct ctp_snap_readfail *rf = ctp_snap_readfail(snap);
	CHECK(rf->tids_recorded == t->rows, "tids_recorded %" PRIu64,
	      rf->tids_recorded);
	CHECK(rf->tids_walked == rf->tids_recorded + rf->tids_vanished,
	      "walked %" PRIu64 " != recorded + vanished", rf->tids_walked);
	CHECK(ctp_snap_n_plugins(snap) == 1 &&
		      ctp_snap_plugins(snap)[0].status == 1 &&
		      ctp_snap_plugins(snap)[0].errors == 0,
	      "procfs-stat not loaded, or it reported errors");
	const struct ctp_snap_header *h = ctp_snap_header(snap);
	CHECK(h->proc_root && !strcmp(h->proc_root, "/proc"), "proc_root");
	CHECK(h->workers == 2, "workers %" PRIu64, h->workers);
	assert_int_equal(nbad, 0);
}

/*
 * Wait until every worker sleeps in its condition wait: a worker counted as
 * ready may still be on its way there (SCHED_IDLE ones slowly), and then it
 * would run during the capture. Parked means state S with counters that
 * stay put for a while. Leaves the last observation in obs_before.
 */
static int settle(void)
{
	struct obs prev[N_WORKERS + 1];
	for (int round = 0; round < 200; round++) {
		bool parked = true;
		for (size_t k = 0; k <= N_WORKERS; k++) {
			if (observe(tids_of[k], &obs_before[k]) < 0)
				return -EIO;
			if (!k)
				continue;
			parked &= obs_before[k].state == 'S';
			for (int f = 0; round && f < F_COUNT; f++)
				if (runtime_field(f))
					parked &= obs_same(&prev[k],
							   &obs_before[k], f);
		}
		if (parked && round)
			return 0;
		memcpy(prev, obs_before, sizeof(prev));
		usleep(10000);
	}
	/* Still moving: our_values then compares attributes only. */
	return 0;
}

/* ---- Setup -------------------------------------------------------------- */

static int first_cpu(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

/* Start and park the threads; SKIP when the host cannot do what they do. */
static int start_workers(void)
{
	pin_cpu = first_cpu();
	if (pin_cpu < 0) {
		printf("SKIP: sched_getaffinity: %s\n", strerror(errno));
		return SKIP;
	}
	for (size_t i = 0; i < N_WORKERS; i++) {
		workers[i].sp = &specs[i];
		int r = pthread_create(&workers[i].th, NULL, worker_main,
				       &workers[i]);
		if (r) {
			fprintf(stderr, "pthread_create: %s\n", strerror(r));
			return 1;
		}
	}
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	pthread_mutex_lock(&lock);
	int r = 0;
	while (ready < N_WORKERS && r == 0)
		r = pthread_cond_timedwait(&cond, &lock, &dl);
	pthread_mutex_unlock(&lock);
	if (ready < N_WORKERS) {
		fprintf(stderr, "threads did not start\n");
		return 1;
	}
	for (size_t i = 0; i < N_WORKERS; i++) {
		struct worker *w = &workers[i];
		tids_of[i + 1] = w->tid;
		if (!w->err)
			continue;
		if (w->sp->optional) {
			printf("NOTE: '%s': %s: %s; checking it as "
			       "SCHED_OTHER\n",
			       w->sp->name, w->what, strerror(-w->err));
			continue;
		}
		printf("SKIP: '%s': %s: %s\n", w->sp->name, w->what,
		       strerror(-w->err));
		return SKIP;
	}
	fifo_active = !workers[N_WORKERS - 1].err;
	return 0;
}

int main(void)
{
	char *comm;
	if (e2e_read_file("/proc/self/comm", &comm, NULL) < 0 ||
	    access("/proc/self/task", R_OK) < 0) {
		printf("SKIP: no readable /proc\n");
		return SKIP;
	}
	snprintf(our_comm, sizeof(our_comm), "%.*s", (int)strcspn(comm, "\n"),
		 comm);
	free(comm);
	tids_of[0] = (pid_t)syscall(SYS_gettid);

	int rc = start_workers();
	if (rc == 0 && e2e_tmpdir("live", tmp, sizeof(tmp)) < 0)
		rc = 1;
	if (rc == 0 && settle() < 0)
		rc = 1;
	if (rc == 0 && run_capture() < 0)
		rc = 1;
	for (size_t k = 0; rc == 0 && k <= N_WORKERS; k++)
		if (observe(tids_of[k], &obs_after[k]) < 0)
			rc = 1;
	stop_workers();
	if (rc == 0) {
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(our_threads),
			cmocka_unit_test(our_values),
			cmocka_unit_test(thread_set),
			cmocka_unit_test(consistent),
		};
		rc = cmocka_run_group_tests(tests, NULL, NULL);
	}
	ctp_snap_free(snap);
	free(before.v);
	free(after.v);
	if (*tmp)
		e2e_rm_rf(tmp);
	return rc;
}
