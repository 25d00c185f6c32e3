/*
 * bpf-task: every task's per-thread counters in one pass of a BPF task
 * iterator (README.md). The plugin declares no field: it offers the
 * per-task source "task" (include/ctprof/source-task.h) as a walk source,
 * from one pass its host callback takes per capture, which the collectors
 * of stat, status, io, schedstat and taskstats take in place of their
 * files. Where the program cannot be loaded (no BTF, no privileges,
 * lockdown, an old kernel, not the live /proc of the initial pid
 * namespace) it says why once and offers nothing: every consumer reads its
 * files. It also adds the command `bpf-task-dump`.
 */
#include "bpfcheck.h"
#include "bpfload.h"
#include "bpftask.h"
#include "bpftask_opts.h"
#include "bpftask_state.h"
#include "hostprobe.h"
#include "procfs_parse.h"
#include "statedir.h"

#include <ctprof/plugin-util.h>
#include <ctprof/plugin.h>
#include <ctprof/source-process.h>
#include <ctprof/source-cgroup-v1.h>
#include <ctprof/source-task.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DUMP_MAX_BYTES (656u << 20) /* a million tasks of 656 bytes */

static void dump_rec(const struct ctp_bpftask_rec *r)
{
	printf("%d\t%d\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t", r->tgid, r->pid,
	       (unsigned long long)r->start_boottime,
	       (unsigned long long)r->minflt, (unsigned long long)r->majflt,
	       (unsigned long long)r->nvcsw, (unsigned long long)r->nivcsw,
	       (unsigned long long)r->sum_exec_runtime);
	if (r->present & CTP_BPFTASK_HAS_SCHED_INFO)
		printf("%llu\t%llu\t", (unsigned long long)r->run_delay,
		       (unsigned long long)r->pcount);
	else
		printf("-\t-\t");
	if (r->present & CTP_BPFTASK_HAS_IO_XACCT)
		printf("%llu\t%llu\t%llu\t%llu\t", (unsigned long long)r->rchar,
		       (unsigned long long)r->wchar,
		       (unsigned long long)r->syscr,
		       (unsigned long long)r->syscw);
	else
		printf("-\t-\t-\t-\t");
	if (r->present & CTP_BPFTASK_HAS_IO_BYTES)
		printf("%llu\t%llu\t%llu\t", (unsigned long long)r->read_bytes,
		       (unsigned long long)r->write_bytes,
		       (unsigned long long)r->cancelled_write_bytes);
	else
		printf("-\t-\t-\t");
	printf("%llu\t%llu\t", (unsigned long long)r->utime,
	       (unsigned long long)r->stime);
	if (r->present & CTP_BPFTASK_HAS_STATE)
		printf("%c\t", ctp_bpftask_state_char(r->state, r->exit_state));
	else
		printf("-\t");
	printf("%d\t%d\t%u\t%u\t", r->prio - 100, r->static_prio - 120,
	       r->rt_priority, r->policy);
	if (r->present & CTP_BPFTASK_HAS_CPU)
		printf("%u\t", r->cpu);
	else
		printf("-\t");
	/* cpus_mask, CPUs 255..0 (not and'ed with cpu_active_mask). */
	if (r->present & CTP_BPFTASK_HAS_CPUS)
		printf("%016llx%016llx%016llx%016llx\t",
		       (unsigned long long)r->cpus[3],
		       (unsigned long long)r->cpus[2],
		       (unsigned long long)r->cpus[1],
		       (unsigned long long)r->cpus[0]);
	else
		printf("-\t");
	char comm[CTP_BPFTASK_COMM_TEXT];
	printf("0x%x\t0x%x\t%s\n", r->flags, r->present,
	       ctp_bpftask_comm_text(r->comm, comm));
}

static bool nohz_full(int sys_fd);

/* One process's "process" values (ctp_bpftask_process, as a first pass
 * makes them), a tab-separated line, "-" for a value not offered. */
static void dump_proc(const struct ctp_bpftask_rec *recs, const __u32 *idx,
		      size_t n, const struct ctp_bpftask_conv *conv)
{
	struct ctp_src_process v;
	uint64_t x;

	if (ctp_bpftask_process(recs, idx, n, conv, &v) < 0) {
		printf("%d\tno leader record\n", recs[idx[0]].tgid);
		return;
	}
	printf("%d", recs[idx[0]].tgid);
	for (unsigned i = 0; i < CTP_SRC_PROC_N_VALUES; i++)
		if (ctp_src_process_get(&v, sizeof(v), i, &x))
			printf("\t%llu", (unsigned long long)x);
		else
			printf("\t-");
	printf("\t%zu\n", n);
}

/* The pass by process (tgid, or every one with tgid 0): a line each. */
static int dump_procs(const struct ctp_bpftask_rec *recs, size_t n, long tgid)
{
	struct ctp_bpftask_conv conv = {
		.user_hz = (unsigned long)sysconf(_SC_CLK_TCK)};
	struct ctp_bpftask_key *keys = calloc(n ? n : 1, sizeof(*keys));
	struct ctp_bpftask_key *tmp = calloc(n ? n : 1, sizeof(*tmp));
	__u32 *idx = calloc(n ? n : 1, sizeof(*idx));
	int sys_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);

	conv.times = !nohz_full(sys_fd);
	if (sys_fd >= 0)
		close(sys_fd);
	if (!keys || !tmp || !idx) {
		free(keys);
		free(tmp);
		free(idx);
		fprintf(stderr, "ctprof-core: bpf-task-dump: %s\n",
			strerror(ENOMEM));
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct ctp_bpftask_key){
			.key = (__u64)(uint32_t)recs[i].tgid << 32 |
			       (uint32_t)recs[i].pid,
			.idx = (__u32)i};
	ctp_bpftask_sort(keys, tmp, n);
	for (size_t i = 0; i < n; i++)
		idx[i] = keys[i].idx;
	printf("tgid\tnum_threads\tminflt\tmajflt\tutime\tstime\tcminflt\t"
	       "cmajflt\tcutime\tcstime\trchar\twchar\tsyscr\tsyscw\t"
	       "read_bytes\twrite_bytes\tcancelled_write_bytes\trecords\n");
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1;
		     hi < n && recs[idx[hi]].tgid == recs[idx[lo]].tgid; hi++)
			;
		if (!tgid || recs[idx[lo]].tgid == tgid)
			dump_proc(recs, &idx[lo], hi - lo, &conv);
	}
	free(keys);
	free(tmp);
	free(idx);
	return 0;
}

/* ctprof-core bpf-task-dump [--tid TID | --processes [TGID]]: one pass,
 * one line per task, or per process with its "process" values. */
static int cmd_dump(int argc, char **argv)
{
	static const char usage[] =
		"Usage: ctprof-core bpf-task-dump [--tid TID | --processes "
		"[TGID]]\n";
	const struct ctp_bpftask_rec *recs;
	struct ctp_bpftask *b = NULL;
	char why[256] = "";
	bool procs = false;
	long tid = 0;
	char *end;
	int n, rc;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc >= 2 && argc <= 3 && !strcmp(argv[1], "--processes"))
		procs = true;
	if ((argc == 3 && !strcmp(argv[1], "--tid")) || (procs && argc == 3)) {
		errno = 0;
		tid = strtol(argv[2], &end, 10);
		if (errno || *end || end == argv[2] || tid <= 0 ||
		    tid > 0x7fffffff) {
			fprintf(stderr,
				"ctprof-core: bpf-task-dump: bad %s "
				"'%s'\n",
				procs ? "tgid" : "tid", argv[2]);
			return 2;
		}
	} else if (argc != 1 && !(procs && argc == 2)) {
		fputs(usage, stderr);
		return 2;
	}
	/* iter/task's pass (no open-coded one asked for): its lines in tid
	 * order, as they always were. */
	n = ctp_bpftask_open(&b, why, sizeof(why));
	if (n < 0) {
		fprintf(stderr, "ctprof-core: bpf-task-dump: %s\n", why);
		return 1;
	}
	n = ctp_bpftask_pass(b, DUMP_MAX_BYTES, &recs);
	if (n < 0) {
		fprintf(stderr, "ctprof-core: bpf-task-dump: pass: %s\n",
			strerror(-n));
		ctp_bpftask_free(b);
		return 1;
	}
	if (procs) {
		rc = dump_procs(recs, (size_t)n, tid);
		ctp_bpftask_free(b);
		return rc;
	}
	printf("tgid\ttid\tstart_boottime_ns\tminflt\tmajflt\tnvcsw\tnivcsw\t"
	       "sum_exec_runtime_ns\trun_delay_ns\tpcount\trchar\twchar\t"
	       "syscr\tsyscw\tread_bytes\twrite_bytes\tcancelled_write_"
	       "bytes\tutime_raw_ns\tstime_raw_ns\tstate\tpriority\tnice\t"
	       "rt_priority\tpolicy\tprocessor\tcpus_mask\tflags\tpresent\t"
	       "comm\n");
	for (int i = 0; i < n; i++)
		if (!tid || recs[i].pid == tid)
			dump_rec(&recs[i]);
	ctp_bpftask_free(b);
	return 0;
}

/* ---- The source --------------------------------------------------------- */

enum counter {
	C_PASSES,	 /* passes taken */
	C_PASS_FAILED,	 /* passes that failed: no source that capture */
	C_TASKS,	 /* tasks in the passes */
	C_FILL_WALKED,	 /* fills found through task->walked */
	C_FILL_LOOKUP,	 /* fills found by a (tgid, tid) lookup */
	C_FILL_MISS,	 /* fills for a task not in the pass (born after it) */
	C_UNAVAILABLE,	 /* captures without the source: not loaded (hint) */
	C_CHECK_OFF,	 /* values the check turned off (once, as it ran) */
	C_CHECK_NOT_RUN, /* 1 a capture while the check has not run */
	C_PROC_FILL,	 /* process fills with every value the pass has */
	C_PROC_PART,	 /* process fills without the group's sums */
	C_PROC_MISS,	 /* process fills with nothing (no leader record) */
	C_CG_SETS,	 /* css_sets the passes noted (cgroup-v1) */
	C_CG_MISS,	 /* cgroup-v1 fills the pass could not serve */
	C_STATE_LOADED,	 /* entries of the times' state file loaded (once) */
	C_STATE_IGNORED, /* state files read and not used (logged why) */
	C_STATE_SAVED,	 /* state files written */
	C_STATE_FAILED,	 /* state files that could not be kept (hint) */
	C_WALK,		 /* passes by the open-coded task iterator */
	C_WALK_RUNS,	 /* its program runs, the list's included */
	C_WALK_BIG,	 /* processes it left to iter/task's pid parameter */
	C_WALK_WHOLE,	 /* passes it left to iter/task's whole pass */
	C_WALK_MAX_US,	 /* its longest run (the RCU section), us */
	C_COMPLETE,	 /* passes whose list walk() called complete */
	N_COUNTERS
};

static const char *const counter_names[N_COUNTERS] = {
	[C_PASSES] = "passes",
	[C_PASS_FAILED] = "pass_failed",
	[C_TASKS] = "tasks",
	[C_FILL_WALKED] = "fill_walked",
	[C_FILL_LOOKUP] = "fill_lookup",
	[C_FILL_MISS] = "fill_miss",
	[C_UNAVAILABLE] = "unavailable",
	[C_CHECK_OFF] = "check_off",
	[C_CHECK_NOT_RUN] = "check_not_run",
	[C_PROC_FILL] = "proc_fill",
	[C_PROC_PART] = "proc_partial",
	[C_PROC_MISS] = "proc_miss",
	[C_CG_SETS] = "cg_sets",
	[C_CG_MISS] = "cg_miss",
	[C_STATE_LOADED] = "state_loaded",
	[C_STATE_IGNORED] = "state_ignored",
	[C_STATE_SAVED] = "state_saved",
	[C_STATE_FAILED] = "state_failed",
	[C_WALK] = "open_coded",
	[C_WALK_RUNS] = "open_coded_runs",
	[C_WALK_BIG] = "open_coded_big",
	[C_WALK_WHOLE] = "open_coded_whole",
	[C_WALK_MAX_US] = "open_coded_max_run_us",
	[C_COMPLETE] = "list_complete",
};

static const struct ctp_option_desc options[] = {CTP_BPFTASK_OPTIONS};

struct bt_state {
	struct ctp_ctx *ctx;
	const struct ctp_api *api;
	int ch[N_COUNTERS];
	struct ctp_bpftask *b; /* NULL: not loaded, no source */
	size_t max_bytes;
	int proc_fd;
	size_t tasks_at_init; /* /proc/loadavg's count at init, 0 unknown */
	struct ctp_bpftask_conv conv;
	/* The last pass, sorted by tgid then tid; valid while pass_ok. */
	bool pass_ok;
	/* What walk() says of the last pass's list (list_complete):
	 * CTP_WALK_COMPLETE, CTP_WALK_MISSING(m) of the tasks the kernel's
	 * count had beyond it where that count held over the pass, or 0. */
	int walk_says;
	int whole_said; /* why the list is not complete, as last logged */
	bool refused;	/* a pass got EPERM: none is tried again */
	int pass_err;
	const struct ctp_bpftask_rec *recs;
	size_t n;
	uint32_t *order; /* walk index -> record index */
	uint32_t *at;	 /* record index -> walk index */
	struct ctp_walk_task *walk;
	struct ctp_bpftask_ticks *ticks, *prev; /* this pass's, the last's */
	size_t n_prev, cap_order, cap_at, cap_walk, cap_ticks, cap_prev;
	/* The host's possible CPUs, when all are below 256 (cpus_fit):
	 * then the pass's masks can give sched_getaffinity()'s. */
	bool cpus_fit;
	__u64 possible[CTP_BPFTASK_CPU_WORDS];
	/* The source "process" (offered: proc_on): the pass's processes in
	 * tgid order, their sums and stat's times (kept monotonic as the
	 * threads' are), and each walk index's process. */
	bool proc_on;
	struct ctp_bpftask_proc *procs;
	struct ctp_bpftask_ticks *pticks, *pprev;
	uint32_t *grp; /* walk index -> process */
	size_t n_procs, n_pprev, cap_procs, cap_pticks, cap_pprev, cap_grp;
	/* The init check: values never offered (valid's layout), of "task"
	 * (off) and of "process" (poff). */
	uint64_t off[2], poff[1];
	unsigned n_off, n_poff;
	/* check_pending: the check has not run, the values it judges are
	 * off, and the capture numbered check_next tries it again;
	 * check_fresh: it ran and its check_off is not counted yet. */
	bool check_pending, check_fresh, check_counted;
	unsigned check_tries;
	unsigned long check_fail; /* CTP_BPFTASK_CHECK_FAIL, read at init */
	uint64_t captures, check_next;
	char check_why[160]; /* why the last try could not run */
	char hint[400];
	/* The source "cgroup-v1": offered (cg_on), and the css_sets of the
	 * last pass (valid while pass_ok; cg_err when they could not be
	 * read). */
	bool cg_on;
	int cg_err;
	const struct ctp_bpfcg_entry *cg;
	size_t n_cg;
	uint64_t cg_pass; /* numbers the css_sets read (cg_tls) */
	/* Each walk index's css_set key (its record's cg_set), taken while
	 * the pass is indexed: a fill reads 8 bytes in walk order, not a
	 * cache line at the end of a 696-byte record. */
	__u64 *cg_key;
	size_t cap_cg_key;
	/* The times' state across runs (README.md "stat's times across
	 * captures"): its directory (-1: none kept), this boot's id, the
	 * file last loaded or written (dev, ino; 0: none), what init did
	 * (counted at the first capture) and the most entries of a count. */
	int state_fd;
	uint8_t boot_id[16];
	dev_t state_dev;
	ino_t state_ino;
	struct timespec state_mtim;
	uint64_t state_loaded, state_ignored, state_failed;
	bool state_said;  /* state_fail logged */
	size_t state_max; /* option max_tasks: the state file's bound too */
};

/* The css_set a worker filled "cgroup-v1" from last, in read cg_pass of
 * state st: the next task, of the same process mostly, shares it. */
static _Thread_local struct {
	const void *st;
	uint64_t pass, key;
	struct ctp_src_cgroup_v1 src;
} cg_tls;

static void count(struct bt_state *st, enum counter c, uint64_t n)
{
	if (st->ch[c] >= 0)
		st->api->summary_add(st->ctx, st->ch[c], n);
}

/* What the last pass's open-coded runs did, where it tried them: the
 * longest run is the longest RCU read section the pass held (one pass a
 * capture: the sum of one). */
static void count_walk(struct bt_state *st)
{
	struct ctp_bpftask_walk_stats ws;
	uint64_t longest;

	ctp_bpftask_walk_stats(st->b, &ws);
	if (!ws.runs)
		return;
	longest = ws.max_run_ns > ws.list_ns ? ws.max_run_ns : ws.list_ns;
	count(st, ws.whole ? C_WALK_WHOLE : C_WALK, 1);
	count(st, C_WALK_RUNS, ws.runs);
	count(st, C_WALK_BIG, ws.big);
	count(st, C_WALK_MAX_US, longest / 1000);
}

/* Where (tgid, tid) sits in st->walk, or n. */
static size_t find(const struct bt_state *st, int32_t tgid, int32_t tid)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ctp_walk_task *w = &st->walk[mid];
		if (w->tgid == tgid && w->tid == tid)
			return mid;
		if (w->tgid < tgid || (w->tgid == tgid && w->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return st->n;
}

/* The task's place in st->walk, or st->n; *walked: found through
 * task->walked, without a search. */
static size_t task_index(const struct bt_state *st, const struct ctp_task *task,
			 bool *walked)
{
	const struct ctp_walk_task *w = NULL;

	if (CTP_HAS(task, struct ctp_task, walked))
		w = task->walked;
	/* An entry of this pass's list (compared as addresses: it may be
	 * another source's) for this task. */
	uintptr_t at = (uintptr_t)w, base = (uintptr_t)st->walk;
	*walked = w && at >= base && at - base < st->n * sizeof(*st->walk) &&
		  (at - base) % sizeof(*st->walk) == 0 && w->tid == task->tid &&
		  w->tgid == task->tgid;
	if (*walked)
		return (at - base) / sizeof(*st->walk);
	return find(st, task->tgid, task->tid);
}

static int bt_fill(void *state, const struct ctp_task *task, void *buf,
		   size_t cap, size_t *len)
{
	struct bt_state *st = state;
	bool walked;
	size_t i;

	if (!st->pass_ok || cap < sizeof(struct ctp_src_task))
		return -ENODATA;
	i = task_index(st, task, &walked);
	if (i == st->n) {
		count(st, C_FILL_MISS, 1);
		return -ENODATA;
	}
	count(st, walked ? C_FILL_WALKED : C_FILL_LOOKUP, 1);
	/* The next task's record, which the pass wrote where its tid fell
	 * (the stream is in tid order, the walk in tgid order): fetched now,
	 * it is in the cache when the core fills that task after the other
	 * plugins' work on this one. */
	if (i + 1 < st->n) {
		const char *next = (const char *)&st->recs[st->order[i + 1]];
		for (size_t o = 0; o < sizeof(struct ctp_bpftask_rec); o += 64)
			__builtin_prefetch(next + o);
	}
	struct ctp_src_task *out = buf;
	ctp_bpftask_to_src(&st->recs[st->order[i]], &st->conv,
			   st->ticks[i].utime, st->ticks[i].stime, out);
	out->valid[0] &= ~st->off[0];
	out->valid[1] &= ~st->off[1];
	*len = sizeof(struct ctp_src_task);
	return 0;
}

/* The process of tgid in st->procs, or st->n_procs. */
static size_t find_proc(const struct bt_state *st, int32_t tgid)
{
	size_t lo = 0, hi = st->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->procs[mid].tgid == tgid)
			return mid;
		if (st->procs[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return st->n_procs;
}

/* The source "process" for a process row (task->tid is its tgid). */
static int bt_pfill(void *state, const struct ctp_task *task, void *buf,
		    size_t cap, size_t *len)
{
	struct bt_state *st = state;
	struct ctp_src_process *out = buf;
	const struct ctp_bpftask_proc *p;
	size_t g;

	if (!st->pass_ok || !st->proc_on || cap < sizeof(*out))
		return -ENODATA;
	g = find_proc(st, task->tgid);
	if (g == st->n_procs ||
	    !(st->procs[g].flags & CTP_BPFTASK_PROC_LEADER)) {
		count(st, C_PROC_MISS, 1);
		return -ENODATA;
	}
	p = &st->procs[g];
	if (ctp_bpftask_proc_to_src(p, &st->recs[p->leader], &st->conv,
				    st->pticks[g].utime, st->pticks[g].stime,
				    out) < 0) {
		count(st, C_PROC_MISS, 1);
		return -ENODATA;
	}
	count(st,
	      ctp_bpftask_proc_whole(p, &st->recs[p->leader]) ? C_PROC_FILL
							      : C_PROC_PART,
	      1);
	out->valid[0] &= ~st->poff[0];
	*len = sizeof(*out);
	return 0;
}

/* The source "cgroup-v1": the v1 pairs of the css_set the pass noted for
 * the task (include/ctprof/source-cgroup-v1.h says when it fails). */
static int bt_fill_cg(void *state, const struct ctp_task *task, void *buf,
		      size_t cap, size_t *len)
{
	struct bt_state *st = state;
	const struct ctp_bpfcg_entry *e = NULL;
	__u64 key = 0;
	bool walked;
	size_t i;

	if (!st->pass_ok || st->cg_err)
		return -EAGAIN;
	if (cap < sizeof(struct ctp_src_cgroup_v1))
		return -ENODATA;
	i = task_index(st, task, &walked);
	if (i < st->n)
		key = st->cg_key[i];
	*len = sizeof(struct ctp_src_cgroup_v1);
	if (key && cg_tls.st == st && cg_tls.pass == st->cg_pass &&
	    cg_tls.key == key) {
		memcpy(buf, &cg_tls.src, sizeof(cg_tls.src));
		return 0;
	}
	e = ctp_bpfcg_find(st->cg, st->n_cg, key);
	if (!e) {
		count(st, C_CG_MISS, 1);
		return -ENODATA;
	}
	ctp_bpfcg_to_src(&e->set, &cg_tls.src);
	cg_tls.st = st;
	cg_tls.pass = st->cg_pass;
	cg_tls.key = key;
	memcpy(buf, &cg_tls.src, sizeof(cg_tls.src));
	return 0;
}

static int bt_walk(void *state, const struct ctp_walk_task **tasks, size_t *n)
{
	struct bt_state *st = state;

	if (!st->pass_ok)
		return st->pass_err ? st->pass_err : -ENODATA;
	*tasks = st->walk;
	*n = st->n;
	return st->walk_says;
}

/* The processes of the sorted keys: st->procs (zeroed sums, in tgid
 * order) and st->grp (each walk index's process). */
static void group_procs(struct bt_state *st, const struct ctp_bpftask_key *keys,
			size_t n)
{
	size_t g = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t tgid = (int32_t)(keys[i].key >> 32);
		if (i == 0 || st->procs[g - 1].tgid != tgid)
			st->procs[g++] =
				(struct ctp_bpftask_proc){.tgid = tgid};
		st->grp[i] = (uint32_t)(g - 1);
	}
	st->n_procs = g;
}

/*
 * stat's times of every process of the pass (st->pticks), kept from going
 * down as the threads' are: where the group's sums are not whole, or times
 * are not offered, the last pass's values are carried (0 raised to them),
 * never a sum of another set of threads.
 */
static void proc_times(struct bt_state *st)
{
	for (size_t g = 0; g < st->n_procs; g++) {
		const struct ctp_bpftask_proc *p = &st->procs[g];
		const struct ctp_bpftask_rec *l =
			p->flags & CTP_BPFTASK_PROC_LEADER
				? &st->recs[p->leader]
				: NULL;
		struct ctp_bpftask_ticks *t = &st->pticks[g];

		*t = (struct ctp_bpftask_ticks){
			.tgid = p->tgid,
			.tid = p->tgid,
			.start_boottime = l ? l->start_boottime : 0};
		if (l && ctp_bpftask_proc_whole(p, l) &&
		    (l->present & CTP_BPFTASK_HAS_SIG_PREV))
			ctp_bpftask_proc_ticks(p, l, st->conv.user_hz,
					       &t->utime, &t->stime);
	}
	ctp_bpftask_keep_monotonic(st->pprev, st->n_pprev, st->pticks,
				   st->n_procs);
	memcpy(st->pprev, st->pticks, st->n_procs * sizeof(*st->pticks));
	st->n_pprev = st->n_procs;
}

/*
 * Sort the pass by tgid then tid (st->order, st->at, st->walk) and work out
 * stat's times of every task. The sort's keys are laid over st->ticks and
 * st->walk, which have the room and are filled after it.
 */
static int index_pass(struct bt_state *st, size_t n)
{
	struct ctp_bpftask_key *keys, *tmp;
	int r;

	if ((r = CTP_GROW(st->order, st->cap_order, n, 1024)) < 0 ||
	    (r = CTP_GROW(st->at, st->cap_at, n, 1024)) < 0 ||
	    (r = CTP_GROW(st->walk, st->cap_walk, n, 1024)) < 0 ||
	    (r = CTP_GROW(st->ticks, st->cap_ticks, n, 1024)) < 0 ||
	    (r = CTP_GROW(st->prev, st->cap_prev, n, 1024)) < 0)
		return r;
	if (st->proc_on &&
	    ((r = CTP_GROW(st->procs, st->cap_procs, n, 256)) < 0 ||
	     (r = CTP_GROW(st->pticks, st->cap_pticks, n, 256)) < 0 ||
	     (r = CTP_GROW(st->pprev, st->cap_pprev, n, 256)) < 0 ||
	     (r = CTP_GROW(st->grp, st->cap_grp, n, 1024)) < 0))
		return r;
	if (st->cg_on &&
	    (r = CTP_GROW(st->cg_key, st->cap_cg_key, n, 1024)) < 0)
		return r;
	_Static_assert(sizeof(struct ctp_bpftask_key) <=
				       sizeof(struct ctp_bpftask_ticks) &&
			       sizeof(struct ctp_bpftask_key) <=
				       sizeof(struct ctp_walk_task),
		       "the sort's keys are laid over ticks and walk");
	keys = (struct ctp_bpftask_key *)(void *)st->ticks;
	tmp = (struct ctp_bpftask_key *)(void *)st->walk;
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct ctp_bpftask_key){
			.key = (__u64)(uint32_t)st->recs[i].tgid << 32 |
			       (uint32_t)st->recs[i].pid,
			.idx = (__u32)i};
	ctp_bpftask_sort(keys, tmp, n);
	for (size_t i = 0; i < n; i++) {
		st->order[i] = keys[i].idx;
		st->at[keys[i].idx] = (uint32_t)i;
	}
	if (st->proc_on)
		group_procs(st, keys, n);
	/* The records in the pass's order (one after the other in memory),
	 * each written where the walk order puts it. */
	for (size_t k = 0; k < n; k++) {
		const struct ctp_bpftask_rec *t = &st->recs[k];
		size_t i = st->at[k];
		struct ctp_walk_task *w = &st->walk[i];
		__u64 pu = t->prev_utime, ps = t->prev_stime;

		w->tgid = t->tgid;
		w->tid = t->pid;
		w->flags = ctp_bpftask_comm_short(t->flags, t->comm)
				   ? CTP_WALK_COMM_FILE
				   : 0;
		w->reserved = 0;
		memcpy(w->comm, t->comm, sizeof(w->comm));
		/* What stat would print now: the kernel's cputime_adjust()
		 * against its own prev_cputime. */
		ctp_cputime_adjust(t->utime, t->stime, t->sum_exec_runtime, &pu,
				   &ps);
		st->ticks[i] = (struct ctp_bpftask_ticks){
			.tgid = t->tgid,
			.tid = t->pid,
			.start_boottime = t->start_boottime,
			.utime = ctp_nsec_to_clock_t(pu, st->conv.user_hz),
			.stime = ctp_nsec_to_clock_t(ps, st->conv.user_hz),
			.exec_id = t->present & CTP_BPFTASK_HAS_MM_SEQ
					   ? t->exec_id
					   : 0,
		};
		if (st->proc_on)
			ctp_bpftask_proc_add(&st->procs[st->grp[i]], t,
					     (__u32)k);
		if (st->cg_on)
			st->cg_key[i] = t->cg_set;
	}
	ctp_bpftask_keep_monotonic(st->prev, st->n_prev, st->ticks, n);
	memcpy(st->prev, st->ticks, n * sizeof(*st->ticks));
	st->n_prev = n;
	if (st->proc_on)
		proc_times(st);
	return 0;
}

/* ---- The times across runs (README.md "stat's times across captures") */

/* Count c: at once after the first capture counted init's, else kept
 * (*at_init) for it. */
static void state_count(struct bt_state *st, enum counter c, uint64_t *at_init)
{
	if (st->check_counted)
		count(st, c, 1);
	else
		(*at_init)++;
}

/* This thread's CPU time since t0 (CLOCK_THREAD_CPUTIME_ID), in ms. */
static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The state cannot be kept (why): said once, counted, in the hint where
 * nothing else is. */
static void state_fail(struct bt_state *st, const char *why)
{
	state_count(st, C_STATE_FAILED, &st->state_failed);
	if (st->state_said)
		return;
	st->state_said = true;
	st->api->log(st->ctx, CTP_LOG_WARNING,
		     "stat's times not kept across runs (%s): a later run's "
		     "utime/stime may be below this one's",
		     why);
	if (!st->hint[0]) {
		snprintf(st->hint, sizeof(st->hint),
			 "stat's times not kept across runs: %s", why);
		st->api->set_hint(st->ctx, st->hint);
	}
}

/* The state file, loaded and checked into the arrays given (grown as
 * needed): 0, or a negative errno (none, or not used: counted and said;
 * the counts untouched). */
static int state_get(struct bt_state *st, struct ctp_bpftask_ticks **t,
		     size_t *cap_t, size_t *nt, struct ctp_bpftask_ticks **p,
		     size_t *cap_p, size_t *np, struct stat *sb)
{
	enum ctp_bpftask_state_why why;
	int r = ctp_bpftask_state_load(st->state_fd, st->boot_id, st->state_max,
				       t, cap_t, nt, p, cap_p, np, sb, &why);

	if (r == 0 || r == -ENOENT)
		return r;
	if (why != CTP_BTS_BOOT) /* another boot's: expected, not news */
		state_count(st, C_STATE_IGNORED, &st->state_ignored);
	st->api->log(st->ctx,
		     why == CTP_BTS_BOOT ? CTP_LOG_INFO : CTP_LOG_NOTICE,
		     "the times' state file not used: %s",
		     r == -EINVAL  ? ctp_bpftask_state_why_name(why)
		     : r == -EPERM ? "not a regular file of this user"
				   : strerror(-r));
	return r;
}

static void state_note(struct bt_state *st, const struct stat *sb)
{
	st->state_dev = sb->st_dev;
	st->state_ino = sb->st_ino;
	st->state_mtim = sb->st_mtim;
}

static bool state_same(const struct bt_state *st, const struct stat *sb)
{
	return sb->st_dev == st->state_dev && sb->st_ino == st->state_ino &&
	       sb->st_mtim.tv_sec == st->state_mtim.tv_sec &&
	       sb->st_mtim.tv_nsec == st->state_mtim.tv_nsec;
}

/* The state's directory and its file, as the last pass's (st->prev,
 * st->pprev) for the first pass to be kept from going below. */
static void state_open(struct bt_state *st)
{
	const char *opt = NULL, *none;
	char path[4200], why[4400], id[64];
	struct timespec t0;
	struct stat sb;
	size_t nt = 0, np = 0, len;
	int r;

	if (st->api->opt_str(st->ctx, "times_state", &opt) < 0 || !opt)
		opt = "auto";
	if (!strcmp(opt, "off")) {
		st->api->log(st->ctx, CTP_LOG_INFO,
			     "stat's times not kept across runs: times_state "
			     "is off");
		return;
	}
	if (ctp_statedir_path(opt, path, sizeof(path), &none) < 0) {
		state_fail(st, none);
		return;
	}
	if (ctp_read_small(st->proc_fd, "sys/kernel/random/boot_id", id,
			   sizeof(id), &len) < 0 ||
	    ctp_bpftask_boot_id(id, len, st->boot_id) < 0) {
		state_fail(st, "no boot id in /proc/sys/kernel/random/boot_id");
		return;
	}
	if ((r = ctp_statedir_open(path, &st->state_fd, why, sizeof(why))) <
	    0) {
		st->state_fd = -1;
		state_fail(st, why);
		return;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	/* Straight into the last pass's arrays (procs into pticks, which the
	 * first pass overwrites, where no process source is offered). */
	if (st->proc_on)
		r = state_get(st, &st->prev, &st->cap_prev, &nt, &st->pprev,
			      &st->cap_pprev, &np, &sb);
	else
		r = state_get(st, &st->prev, &st->cap_prev, &nt, &st->pticks,
			      &st->cap_pticks, &np, &sb);
	if (r < 0)
		return;
	state_note(st, &sb);
	st->n_prev = nt;
	if (st->proc_on)
		st->n_pprev = np;
	st->state_loaded = nt + (st->proc_on ? np : 0);
	st->api->log(st->ctx, CTP_LOG_DEBUG,
		     "the times' state: %zu entries loaded, %.3f ms of CPU",
		     (size_t)st->state_loaded, ms_since(&t0));
}

/*
 * Write what this pass handed out (st->prev, st->pprev) for the next run,
 * under an exclusive flock of the directory (waited for 0.2 s at most): where
 * another run wrote the file since this one read or wrote it, its values are
 * taken in first (raised to, as a pass is), so the file never goes down.
 */
static void state_save(struct bt_state *st)
{
	struct ctp_bpftask_ticks *t = NULL, *p = NULL;
	struct ctp_bpftask_state_hdr h;
	struct timespec t0;
	struct stat sb;
	size_t nt = 0, np = 0, cap_t = 0, cap_p = 0;
	int r;

	if (st->state_fd < 0)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	/* Another run holds it for one write (~1 ms at 30,000 tasks): wait
	 * up to 0.2 s, never longer. */
	if (ctp_statedir_lock(st->state_fd, 200) < 0) {
		state_fail(st, "its directory stays locked by another run");
		return;
	}
	if (fstatat(st->state_fd, CTP_BPFTASK_STATE_FILE, &sb,
		    AT_SYMLINK_NOFOLLOW) == 0 &&
	    !state_same(st, &sb) &&
	    state_get(st, &t, &cap_t, &nt, &p, &cap_p, &np, &sb) == 0) {
		ctp_bpftask_keep_monotonic(t, nt, st->prev, st->n_prev);
		if (st->proc_on)
			ctp_bpftask_keep_monotonic(p, np, st->pprev,
						   st->n_pprev);
	}
	free(t);
	free(p);
	ctp_bpftask_state_header(&h, st->boot_id, st->n_prev,
				 st->proc_on ? st->n_pprev : 0);
	r = ctp_bpftask_state_write(st->state_fd, &h, st->prev, st->pprev, &sb);
	ctp_statedir_unlock(st->state_fd);
	if (r < 0) {
		char why[160];
		snprintf(why, sizeof(why), "cannot write its file: %s",
			 strerror(-r));
		state_fail(st, why);
		return;
	}
	state_note(st, &sb);
	count(st, C_STATE_SAVED, 1);
	st->api->log(st->ctx, CTP_LOG_DEBUG,
		     "the times' state: %zu entries written, %.3f ms of CPU",
		     (size_t)(h.n_tasks + h.n_procs), ms_since(&t0));
}

/* The delay families follow the runtime switch as the reply does
 * (hostprobe.h); one small read per capture, before the pass, which
 * leaves the block families out while they are off. */
static void probe_delays(struct bt_state *st)
{
	enum ctp_delayacct_state da;

	ctp_probe_delayacct(st->proc_fd, &da);
	st->conv.delays_on = da == CTP_DELAYACCT_ON;
	st->conv.cpu_delay = da != CTP_DELAYACCT_CONFIG_OFF;
	ctp_bpftask_skip_delays(st->b, !st->conv.delays_on);
}

/*
 * cpu_active_mask for this pass's CPU masks (README.md "CPU affinity"):
 * sched_getaffinity() of the calling thread before the pass (before) and
 * after it is its cpus_mask and'ed with cpu_active_mask; where both agree
 * and the pass shows that cpus_mask covering every possible CPU, that is
 * cpu_active_mask itself. Otherwise (this thread pinned, a CPU going on or
 * off line, the mask changed under the pass) no mask is offered.
 */
static void active_cpus(struct bt_state *st, int before,
			const __u64 mask[CTP_BPFTASK_CPU_WORDS])
{
	__u64 after[CTP_BPFTASK_CPU_WORDS];
	size_t i;

	st->conv.cpus_on = 0;
	if (before < 0 || ctp_bpftask_getaffinity(0, after) < 0 ||
	    memcmp(mask, after, sizeof(after)) != 0)
		return;
	i = find(st, (int32_t)getpid(), (int32_t)syscall(SYS_gettid));
	if (i == st->n)
		return;
	const struct ctp_bpftask_rec *self = &st->recs[st->order[i]];
	if ((self->present & CTP_BPFTASK_HAS_CPUS) &&
	    ctp_bpftask_active_cpus(after, self->cpus, st->possible,
				    st->conv.active) == 0)
		st->conv.cpus_on = 1;
}

/* The css_sets the pass noted, for the source "cgroup-v1". */
static void cg_sets(struct bt_state *st)
{
	int n = ctp_bpftask_cg_sets(st->b, &st->cg);

	st->cg_pass++;
	st->cg_err = n < 0 ? n : 0;
	st->n_cg = n < 0 ? 0 : (size_t)n;
	if (n < 0)
		st->api->log(st->ctx, CTP_LOG_WARNING,
			     "cannot read the pass's css_sets (%s): no "
			     "cgroup-v1 source this capture",
			     strerror(-n));
	count(st, C_CG_SETS, st->n_cg);
}

static size_t host_tasks(const struct bt_state *st);
static void check_kernel(struct bt_state *st);

/* Why a pass's list is or is not complete (whole_said). */
enum { WHOLE_YES = 1, WHOLE_NO_INIT, WHOLE_COUNT };

/*
 * Whether the pass's list (st->walk, st->n tasks) is complete, for
 * walk(): every task of the initial pid namespace, the proc root's
 * (bt_init), that lived through the pass. Both iterators visit every
 * task, but a kernel can keep some from them (on this project's VM pid
 * 1's thread group is in no pass: README.md "Tasks a pass does not
 * list"), so it is checked each pass, not assumed: pid 1, which the
 * initial namespace always has, is listed, and the kernel's count of
 * tasks (/proc/loadavg's, every task of the host, each one in the initial
 * namespace) read before the pass (`before`) and after it (`after`)
 * equals the list's. Where tasks are born or end during the pass the
 * counts mostly differ, and the list is not called complete (the core
 * lists the proc root as well, as for any source that says nothing); a
 * task kept from the pass could go unseen only if exactly as many tasks
 * ended as were born during it and the pass saw enough of the new ones to
 * make up for it.
 */
static void list_complete(struct bt_state *st, size_t before, size_t after)
{
	int why = WHOLE_YES;
	/* What the list lacks, where the kernel's count held over the pass
	 * (CTP_WALK_MISSING; the core finds which processes). */
	size_t missing =
		before == after && before >= st->n ? before - st->n : 0;

	if (!st->n || st->walk[0].tgid != 1)
		why = WHOLE_NO_INIT;
	else if (before != st->n || after != st->n)
		why = WHOLE_COUNT;
	/* A list without pid 1 lacks at least its tasks: never 0 missing
	 * but where complete. */
	st->walk_says = why == WHOLE_YES ? CTP_WALK_COMPLETE
			: missing && missing < INT_MAX - 1
				? CTP_WALK_MISSING((int)missing)
				: 0;
	if (why == WHOLE_YES)
		count(st, C_COMPLETE, 1);
	if (why == st->whole_said)
		return;
	st->whole_said = why;
	if (why == WHOLE_NO_INIT)
		st->api->log(st->ctx, CTP_LOG_INFO,
			     "the pass lists no pid 1: this kernel keeps "
			     "tasks from the iterator, so the core lists "
			     "the proc root too, or walks the processes it "
			     "found beside the list while they hold the "
			     "tasks the list lacks");
	else
		st->api->log(st->ctx, CTP_LOG_DEBUG,
			     why == WHOLE_YES
				     ? "the pass's %zu tasks are the host's "
				       "(%zu, %zu): the list is complete"
				     : "the pass's %zu tasks are not the "
				       "host's (%zu before it, %zu after): "
				       "the core lists the proc root too",
			     st->n, before, after);
}

static int bt_host(void *state, struct ctp_record *rec)
{
	struct bt_state *st = state;
	const struct ctp_bpftask_rec *recs;
	__u64 mask[CTP_BPFTASK_CPU_WORDS];
	int n, r, before = -ENODATA;
	size_t tasks_before, tasks_after;

	(void)rec;
	st->pass_ok = false;
	st->walk_says = 0;
	if (st->b && !st->check_counted) {
		st->check_counted = true;
		count(st, C_STATE_LOADED, st->state_loaded);
		count(st, C_STATE_IGNORED, st->state_ignored);
		count(st, C_STATE_FAILED, st->state_failed);
	}
	if (!st->b) {
		count(st, C_UNAVAILABLE, 1);
		return 0;
	}
	if (st->refused) {
		/* Refused once: refused for good (a seccomp filter or the
		 * capabilities dropped after init). */
		count(st, C_PASS_FAILED, 1);
		st->api->set_hint(st->ctx, st->hint);
		return 0;
	}
	/* A check that could not run, tried again (before the pass: its
	 * own passes leave this one's records alone). */
	st->captures++;
	if (st->check_pending && st->captures >= st->check_next)
		check_kernel(st);
	if (st->check_fresh) {
		st->check_fresh = false;
		count(st, C_CHECK_OFF, st->n_off + st->n_poff);
	}
	count(st, C_CHECK_NOT_RUN, st->check_pending);
	/* The check's hint while it has not run, or where a later try (not
	 * init's: that is the run's hint) turned values off. */
	if (st->check_pending ||
	    (st->check_tries > 1 && (st->n_off || st->n_poff)))
		st->api->set_hint(st->ctx, st->hint);
	probe_delays(st);
	if (st->cpus_fit)
		before = ctp_bpftask_getaffinity(0, mask);
	tasks_before = host_tasks(st);
	n = ctp_bpftask_pass(st->b, st->max_bytes, &recs);
	tasks_after = host_tasks(st);
	count(st, C_PASSES, 1);
	count_walk(st);
	r = n < 0 ? n : 0;
	if (n >= 0) {
		st->recs = recs;
		st->n = 0;
		r = index_pass(st, (size_t)n);
	}
	if (r == 0) {
		st->n = (size_t)n;
		active_cpus(st, before, mask);
	}
	if (r == -EPERM || r == -EACCES) {
		char why[160];
		st->pass_err = r;
		st->refused = true;
		count(st, C_PASS_FAILED, 1);
		ctp_bpfload_eperm_why(why, sizeof(why));
		snprintf(st->hint, sizeof(st->hint),
			 "BPF task passes refused (%s): collectors read their "
			 "files",
			 why);
		st->api->log(st->ctx, CTP_LOG_WARNING, "%s", st->hint);
		st->api->set_hint(st->ctx, st->hint);
		return 0;
	}
	if (r < 0) {
		char why[96];
		st->pass_err = r;
		count(st, C_PASS_FAILED, 1);
		/* strerror's "Argument list too long" says nothing of the
		 * bound a user set. */
		if (r == -E2BIG)
			snprintf(why, sizeof(why),
				 "more tasks than max_tasks (%zu): raise the "
				 "option",
				 st->state_max);
		else
			snprintf(why, sizeof(why), "%s", strerror(-r));
		st->api->log(st->ctx, CTP_LOG_WARNING,
			     "task pass failed (%s): this capture reads files",
			     why);
		return 0;
	}
	st->n = (size_t)n;
	st->pass_ok = true;
	list_complete(st, tasks_before, tasks_after);
	count(st, C_TASKS, (uint64_t)n);
	state_save(st);
	if (st->cg_on)
		cg_sets(st);
	return 0;
}

/* Tasks on the host now (/proc/loadavg's count), 0 when unknown. */
static size_t host_tasks(const struct bt_state *st)
{
	char buf[128];
	size_t len, n;

	if (ctp_read_small(st->proc_fd, "loadavg", buf, sizeof(buf), &len) <
		    0 ||
	    ctp_bpftask_loadavg_tasks(buf, len, &n) < 0)
		return 0;
	return n;
}

/* CTP_BPFTASK_PASS (tests and measurements only) with a value the loader
 * does not know is ignored there: say so, or a run meant to measure one
 * pass measures the other. */
static void pass_env_said(struct bt_state *st)
{
	const char *pass = getenv("CTP_BPFTASK_PASS");

	if (pass && strcmp(pass, "iter") && strcmp(pass, "open-coded"))
		st->api->log(st->ctx, CTP_LOG_WARNING,
			     "CTP_BPFTASK_PASS=%s ignored: it takes iter or "
			     "open-coded (the option pass decides)",
			     pass);
}

/*
 * The loader's flags from the option pass: the open-coded pass's object
 * asked for by "open-coded", or by "auto" where it repays its load. It
 * costs about 4 ms more to load (seven kfuncs looked up, a second program
 * verified) and saves about 0.33 us a task on every pass (docs/
 * PERFORMANCE.md, "The sixth sitting"): a recorder or a server, which
 * passes again and again, takes it; a one-shot capture only where
 * AUTO_WALK_TASKS tasks make its one pass repay the load.
 */
#define AUTO_WALK_TASKS 16384
static unsigned pass_flags(struct bt_state *st)
{
	const char *opt = NULL;

	if (st->api->opt_str(st->ctx, "pass", &opt) < 0 || !opt)
		opt = "auto";
	if (!strcmp(opt, "open-coded"))
		return CTP_BPFTASK_OPEN_WALK;
	if (strcmp(opt, "auto"))
		return 0;
	if (CTP_API_HAS(st->api, recording) && st->api->recording(st->ctx))
		return CTP_BPFTASK_OPEN_WALK;
	return st->tasks_at_init >= AUTO_WALK_TASKS ? CTP_BPFTASK_OPEN_WALK : 0;
}

/* Whether a nohz_full CPU exists: then the kernel's task_cputime() takes
 * vtime into account (VIRT_CPU_ACCOUNTING_GEN), which a pass cannot. */
static bool nohz_full(int sys_fd)
{
	char buf[256];
	size_t len;

	if (sys_fd < 0 || ctp_read_small(sys_fd, "devices/system/cpu/nohz_full",
					 buf, sizeof(buf), &len) < 0)
		return false;
	return len && buf[0] != '\n' && strncmp(buf, "(null)", 6) != 0;
}

/* The host's possible CPUs into possible (CPUs 0-255): whether they all
 * fit there. */
static bool possible_cpus(int sys_fd, __u64 possible[CTP_BPFTASK_CPU_WORDS])
{
	uint64_t words[CTP_BPFTASK_CPU_WORDS];
	char buf[256];
	size_t len, n;

	if (sys_fd < 0 || ctp_read_small(sys_fd, "devices/system/cpu/possible",
					 buf, sizeof(buf), &len) < 0)
		return false;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (ctp_parse_cpulist(buf, len, words, CTP_BPFTASK_CPU_WORDS, &n) <= 0)
		return false; /* -ERANGE: a CPU above 255 */
	for (size_t w = 0; w < CTP_BPFTASK_CPU_WORDS; w++)
		possible[w] = w < n ? words[w] : 0;
	return true;
}

/* CTP_BPFTASK_CHECK_SKEW=<name> (tests only): add 1 to value k of the
 * pass's bytes (valid words of a layout) where named and offered. */
static void skew(void *pass, unsigned words, int k)
{
	uint64_t *valid = (uint64_t *)((char *)pass + 8);
	uint64_t *v = valid + words;

	if (k >= 0 && (valid[k / 64] >> (k % 64)) & 1)
		v[k]++;
}

/* Log a value the check turned off and name it in the hint (*n: the
 * hint's length so far). */
static void note_off(struct bt_state *st, const char *name, uint64_t from_pass,
		     uint64_t from_file, int *n)
{
	size_t hl = sizeof(st->hint);
	const char *file;
	bool proc;

	if (!name)
		name = "a value";
	/* "stat utime": from stat; "process stat utime": from <tgid>/stat. */
	proc = !strncmp(name, "process ", 8);
	file = proc ? name + 8 : name;
	st->api->log(
		st->ctx, CTP_LOG_WARNING,
		"%s off on this kernel: %llu from the pass, %llu from %s%.*s",
		name, (unsigned long long)from_pass,
		(unsigned long long)from_file, proc ? "<tgid>/" : "",
		(int)strcspn(file, " "), file);
	if (*n >= 0 && (size_t)*n < hl)
		*n += snprintf(st->hint + *n, hl - (size_t)*n, " %s", name);
}

/* The "process" values' part of the check (st->proc_on): a child process
 * against its <pid>/stat and <pid>/io; a value unequal goes into st->poff.
 * Returns how many, or a negative errno when it could not run (why says
 * why). */
static int check_process(struct bt_state *st, const char *skew_name,
			 struct ctp_src_process *pass,
			 struct ctp_src_process *files, char *why,
			 size_t whylen)
{
	int r = ctp_bpfcheck_process(st->b, st->max_bytes, &st->conv,
				     st->proc_fd, pass, files, why, whylen);
	if (r < 0)
		return r;
	skew(pass, 1, ctp_bpftask_proc_value_by_name(skew_name));
	return (int)ctp_bpftask_proc_check(pass, files, st->poff);
}

/* The first pass's buffer sized for the threads there are now, so that
 * pass neither grows nor copies it (a guess: the pass grows it if more
 * come). */
static void expect_tasks(struct bt_state *st)
{
	if (st->tasks_at_init)
		ctp_bpftask_expect(st->b, st->tasks_at_init);
	ctp_bpftask_buf_reused(st->b, CTP_API_HAS(st->api, recording) &&
					      st->api->recording(st->ctx));
}

/* Captures between a check that could not run and its next try: 1, 2, 4,
 * ... up to this many. */
#define CHECK_RETRY_MAX 64

/* A check that could not run (r, why, after ms): nothing unproven is
 * offered, what it judges is read from the files until a later try runs
 * (bt_host, tries CHECK_RETRY_MAX captures apart at the most); said at
 * init and each time the reason changes, other tries at debug. */
static void check_not_run(struct bt_state *st, int r, const char *why,
			  double ms)
{
	const struct ctp_api *api = st->api;
	unsigned gap = 1u << (st->check_tries < 7 ? st->check_tries - 1 : 6);
	/* Refused (a confined capture child may create no BPF link after
	 * init): refused for good, not tried again. */
	bool refused = r == -EPERM || r == -EACCES;

	memset(st->off, 0, sizeof(st->off));
	memset(st->poff, 0, sizeof(st->poff));
	ctp_bpftask_judged(st->off, st->poff);
	st->n_off = st->n_poff = 0;
	st->check_pending = true;
	st->check_next = refused ? UINT64_MAX
				 : st->captures + (gap < CHECK_RETRY_MAX
							   ? gap
							   : CHECK_RETRY_MAX);
	api->log(st->ctx,
		 st->check_tries == 1 || strcmp(why, st->check_why)
			 ? CTP_LOG_NOTICE
			 : CTP_LOG_DEBUG,
		 "the check on this kernel could not run (%s, try %u, %.1f "
		 "ms): the values it judges are read from their files%s",
		 why, st->check_tries, ms,
		 refused ? " (refused: not tried again)"
		 : CTP_API_HAS(api, recording) && api->recording(st->ctx)
			 ? " until a later capture's try runs"
			 : "");
	snprintf(st->check_why, sizeof(st->check_why), "%s", why);
	/* Each capture says it while it holds (bt_host): init's hint would
	 * stay for every capture of the run. */
	snprintf(st->hint, sizeof(st->hint),
		 "the check on this kernel could not run (%s): its values are "
		 "read from their files",
		 why);
}

/* The hint naming the values the check turned off, with both sides of
 * each (logged once). */
static void off_hint(struct bt_state *st, const struct ctp_src_task *pass,
		     const struct ctp_src_task *files,
		     const struct ctp_src_process *ppass,
		     const struct ctp_src_process *pfiles)
{
	int n = snprintf(st->hint, sizeof(st->hint),
			 "off on this kernel (unequal to their files):");

	for (unsigned i = 0; i < CTP_SRC_TASK_N_VALUES; i++)
		if ((st->off[i / 64] >> (i % 64)) & 1)
			note_off(st, ctp_bpftask_value_name(i), pass->v[i],
				 files->v[i], &n);
	for (unsigned i = 0; i < CTP_SRC_PROC_N_VALUES; i++)
		if ((st->poff[0] >> i) & 1)
			note_off(st, ctp_bpftask_proc_value_name(i),
				 ppass->v[i], pfiles->v[i], &n);
	if (n >= 0 && (size_t)n < sizeof(st->hint))
		snprintf(st->hint + n, sizeof(st->hint) - (size_t)n,
			 ": read from the files");
}

/*
 * The check on this kernel (README.md): one helper thread's record against
 * its files, and where "process" is offered a child process's values
 * against its process files; a value found unequal is never offered from
 * then on, said once with both values, counted and named in the hint. It
 * never fails init. A check that cannot run turns off every value it
 * judges (check_not_run) and a recorder's later captures try it again
 * (bt_host) until it runs. CTP_BPFTASK_CHECK_SKEW=<value> (tests only)
 * adds 1 to the pass's value before the comparison;
 * CTP_BPFTASK_CHECK_FAIL=<n> (tests only) makes its first n runs count as
 * not run.
 */
static void check_kernel(struct bt_state *st)
{
	const struct ctp_api *api = st->api;
	struct ctp_src_task pass, files;
	struct ctp_src_process ppass, pfiles;
	const char *skew_name = getenv("CTP_BPFTASK_CHECK_SKEW");
	bool was_pending = st->check_pending;
	char why[160] = "";
	int r;

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st->check_tries++;
	memset(st->off, 0, sizeof(st->off));
	memset(st->poff, 0, sizeof(st->poff));
	st->n_off = st->n_poff = 0;
	probe_delays(st);
	if (st->check_tries <= st->check_fail) {
		r = -EAGAIN;
		snprintf(why, sizeof(why), "CTP_BPFTASK_CHECK_FAIL");
	} else {
		r = ctp_bpfcheck_run(st->b, st->max_bytes, &st->conv,
				     st->cpus_fit ? st->possible : NULL,
				     st->proc_fd, &pass, &files, why,
				     sizeof(why));
	}
	if (r >= 0) {
		skew(&pass, 2, ctp_bpftask_value_by_name(skew_name));
		st->n_off = ctp_bpftask_check(&pass, &files, st->off);
	}
	if (r >= 0 && st->proc_on) {
		r = check_process(st, skew_name, &ppass, &pfiles, why,
				  sizeof(why));
		st->n_poff = r < 0 ? 0 : (unsigned)r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (r < 0) {
		check_not_run(st, r, why, ms);
		return;
	}
	st->check_pending = false;
	st->check_fresh = true;
	api->log(st->ctx, CTP_LOG_INFO,
		 "the check on this kernel: %u of its values unequal (%.1f "
		 "ms%s)",
		 st->n_off + st->n_poff, ms,
		 was_pending ? ", a later try" : "");
	if (st->n_off || st->n_poff)
		off_hint(st, &pass, &files, &ppass, &pfiles);
	else
		st->hint[0] = '\0'; /* or it says the check had not run */
	/* At init, values off make the run's hint. A later try's is each
	 * capture's (bt_host); one that found every value equal clears
	 * this capture's "could not run". */
	if (was_pending ? !st->hint[0] : st->hint[0] != '\0')
		api->set_hint(st->ctx, st->hint);
}

static void bt_fini(void *state)
{
	struct bt_state *st = state;

	if (!st)
		return;
	ctp_bpftask_free(st->b);
	if (st->state_fd >= 0)
		close(st->state_fd);
	free(st->order);
	free(st->at);
	free(st->walk);
	free(st->ticks);
	free(st->prev);
	free(st->procs);
	free(st->pticks);
	free(st->pprev);
	free(st->grp);
	free(st->cg_key);
	free(st);
}

/* Offer "task", as a walk source where the core can take one. */
static int offer(struct bt_state *st)
{
	const struct ctp_api *api = st->api;
	const struct ctp_source_desc desc = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(desc),
		.name = CTP_SOURCE_TASK,
		.fill = bt_fill,
		.walk = bt_walk,
		/* The values of struct ctp_src_task, which the core copies
		 * into the fields consumers bind to them. */
		.n_values = CTP_SRC_TASK_N_VALUES,
		.valid_words = 2,
		/* walk() says when a pass's list is complete
		 * (list_complete): the core then lists no proc root. */
		.flags = CTP_SOURCE_WALK_SAYS_COMPLETE |
			 CTP_SOURCE_WALK_SAYS_MISSING,
	};

	if (CTP_API_HAS(api, source_add))
		return api->source_add(st->ctx, &desc);
	if (CTP_API_HAS(api, source_register))
		return api->source_register(st->ctx, CTP_SOURCE_TASK, bt_fill);
	return -ENOTSUP;
}

/* Offer "process" beside "task" (source-process.h): where the core
 * refuses it (an older core, one that serves no process source) it says
 * why once and the process rows read their files. */
static void offer_process(struct bt_state *st)
{
	const struct ctp_api *api = st->api;
	const struct ctp_source_desc desc = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(desc),
		.name = CTP_SOURCE_PROCESS,
		.fill = bt_pfill,
		.n_values = CTP_SRC_PROC_N_VALUES,
		.valid_words = 1,
		.scope = CTP_SCOPE_PROCESS,
	};
	int r = CTP_API_HAS(api, source_add) ? api->source_add(st->ctx, &desc)
					     : -ENOTSUP;

	st->proc_on = r == 0;
	/* A core that serves no process source is not news: info. */
	if (r < 0)
		api->log(st->ctx,
			 r == -EOPNOTSUPP ? CTP_LOG_INFO : CTP_LOG_NOTICE,
			 "no process source (%s): process rows read their "
			 "files",
			 strerror(-r));
}

/*
 * Offer "cgroup-v1" where its pairs give the paths /proc prints: in the
 * initial cgroup namespace (/proc prints paths relative to the reader's).
 * Not offering it is not an error: consumers read their files.
 */
static void offer_cgroups(struct bt_state *st)
{
	const struct ctp_api *api = st->api;
	const struct ctp_source_desc desc = {
		.abi = CTP_ABI_MAJOR,
		.size = sizeof(desc),
		.name = CTP_SOURCE_CGROUP_V1,
		.fill = bt_fill_cg,
		.n_values = CTP_SRC_CG1_N_VALUES,
		.valid_words = 1,
	};
	const char *why = NULL;
	int r = ctp_proc_ns_initial(st->proc_fd, "cgroup");

	if (r < 0)
		why = "no self/ns/cgroup";
	else if (r == 0)
		why = "not in the initial cgroup namespace";
	else if (!CTP_API_HAS(api, source_add))
		why = "the core has no source_add";
	else if ((r = api->source_add(st->ctx, &desc)) < 0)
		why = strerror(-r);
	if (why) {
		api->log(st->ctx, CTP_LOG_INFO, "no cgroup-v1 source: %s", why);
		return;
	}
	st->cg_on = true;
	ctp_bpftask_note_cgroups(st->b, true);
}

/* Whether the pass's ids are the proc root's: a live /proc of the initial
 * pid namespace. Else false with why. */
static bool proc_root_usable(const struct bt_state *st,
			     const struct ctp_roots *roots, char *why,
			     size_t whylen)
{
	const char *root = roots && roots->proc ? roots->proc : "(none)";

	if (!ctp_proc_is_live(st->proc_fd)) {
		/* A procfs not live is another pid namespace's /proc
		 * (unshare -p -f without --mount-proc), not a copy of a
		 * tree. */
		snprintf(
			why, whylen,
			ctp_proc_is_procfs(st->proc_fd)
				? "the proc root %s is another pid namespace's "
				  "/proc (its self is not this process)"
				: "the proc root %s is not this kernel's /proc",
			root);
		return false;
	}
	if (!ctp_bpftask_initial_pidns(st->proc_fd)) {
		snprintf(why, whylen,
			 "not in the initial pid namespace (the pass records "
			 "global ids)");
		return false;
	}
	return true;
}

static int bt_init(struct ctp_ctx *ctx, const struct ctp_api *api, void **state)
{
	struct bt_state *st = calloc(1, sizeof(*st));
	const struct ctp_roots *roots;
	uint64_t max_tasks = DEFAULT_MAX_TASKS;
	char why[320];
	int r;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->api = api;
	st->state_fd = -1;
	r = ctp_attach(ctx, api, &ctp_plugin_v1,
		       &(const struct ctp_attach){
			       .api_need = CTP_API_THROUGH(set_hint),
			       .counter_handles = st->ch,
			       .n_counters = N_COUNTERS});
	if (r < 0)
		goto out;
	r = api->opt_u64(ctx, "max_tasks", &max_tasks);
	if (r < 0 && r != -ENOENT)
		goto out;
	r = 0;
	st->max_bytes = (size_t)max_tasks * sizeof(struct ctp_bpftask_rec);
	st->state_max = (size_t)max_tasks;
	roots = api->roots(ctx);
	st->proc_fd = roots ? roots->proc_fd : -1;
	st->conv.user_hz = (unsigned long)sysconf(_SC_CLK_TCK);
	st->conv.page_size = (__u64)sysconf(_SC_PAGESIZE);
	st->conv.times = !nohz_full(roots ? roots->sys_fd : -1);
	/* The key of the process source's MM_GEN: without randomness, no
	 * MM_GEN (its consumers read the maps every capture). */
	st->conv.mm_gen_on =
		getrandom(st->conv.mm_key, sizeof(st->conv.mm_key),
			  GRND_NONBLOCK) == (ssize_t)sizeof(st->conv.mm_key);
	st->cpus_fit = possible_cpus(roots ? roots->sys_fd : -1, st->possible);
	/* Read once: the pass's choice (auto) and its buffer's first size. */
	st->tasks_at_init = host_tasks(st);
	/* why says why not where either fails. */
	if (proc_root_usable(st, roots, why, sizeof(why)) &&
	    ctp_bpftask_open_flags(&st->b, pass_flags(st), why, sizeof(why)) ==
		    0) {
		r = offer(st);
		if (r < 0) {
			snprintf(why, sizeof(why),
				 "cannot offer the source: %s", strerror(-r));
			ctp_bpftask_free(st->b);
			st->b = NULL;
			r = 0;
		} else {
			offer_cgroups(st);
		}
	}
	if (!st->b) {
		api->log(ctx, CTP_LOG_NOTICE,
			 "no BPF task source, collectors read their files: %s",
			 why);
		snprintf(st->hint, sizeof(st->hint), "no BPF task source: %s",
			 why);
		api->set_hint(ctx, st->hint);
	} else {
		const char *fail = getenv("CTP_BPFTASK_CHECK_FAIL");

		offer_process(st);
		expect_tasks(st);
		st->check_fail = fail ? strtoul(fail, NULL, 10) : 0;
		check_kernel(st);
		state_open(st);
		const char *walk_why = ctp_bpftask_walk_why(st->b);

		if (walk_why)
			api->log(ctx, CTP_LOG_DEBUG,
				 "passes by iter/task, not the open-coded "
				 "task iterator: %s",
				 walk_why);
		api->log(ctx, CTP_LOG_INFO,
			 "offering the task source from a BPF task iterator "
			 "loaded by %s, %s%s",
			 ctp_bpftask_loader(st->b),
			 walk_why ? "passes by iter/task"
				  : "passes by the open-coded task iterator",
			 st->conv.times ? ""
					: " (no utime/stime: nohz_full CPUs)");
	}
	pass_env_said(st);
out:
	if (r < 0) {
		bt_fini(st);
		return r;
	}
	*state = st;
	return 0;
}

static const struct ctp_command commands[] = {
	{.name = "bpf-task-dump",
	 .usage = "[--tid TID | --processes [TGID]]  one BPF task-iterator "
		  "pass, a line per task or per process",
	 .run = cmd_dump},
};

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "bpf-task",
	.version = BPF_TASK_VERSION,
	.description =
		"the per-task source \"task\" (stat, status, io, "
		"schedstat, taskstats delays) from one BPF task-iterator "
		"pass per capture",
	.flags = CTP_PLUGIN_OPTIONS | CTP_PLUGIN_CAPS | CTP_PLUGIN_MT_SAFE,
	CTP_PLUGIN_OPTION_TABLE(options),
	.init = bt_init,
	.fini = bt_fini,
	.host = bt_host,
	CTP_PLUGIN_COUNTER_TABLE(counter_names),
	CTP_PLUGIN_COMMAND_TABLE(commands),
	/* bpf() for the load and for every pass (bpf_iter_create). */
	.capabilities = CTP_CAP_BIT(CAP_BPF) | CTP_CAP_BIT(CAP_PERFMON),
};
