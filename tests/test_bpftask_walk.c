/*
 * The open-coded pass against iter/task, live (plugins/bpf-task,
 * bpftask.h "The open-coded pass"): child processes of this test, one of
 * more threads than a run holds (CTP_BPFTASK_WALK_K) and three small ones,
 * all blocked on a pipe, are walked by both; each of their threads must be
 * in each pass exactly once, with the same record byte for byte (every
 * member but prev_cputime's, which readers of the stat files move; the
 * record has no padding left unwritten). Three times: at the
 * default limits (the large process by the pid parameter, the rest in
 * runs); with 64 records a run (many runs; the large process, and
 * whatever else on the host is larger, by the pid parameter); with 8
 * processes allowed a pass (iter/task's whole pass, as on a host of more
 * than CTP_BPFTASK_WALK_PROCS). And the whole host at both run limits:
 * every task alive across the passes is in the open-coded one exactly
 * once. Skips (77) when not root, where the program does not load, or
 * where the kernel has no open-coded task iterator (6.8+), with why.
 */
#include "bpftask.h"
#include "bpftask_test_open.h"
#include "bpftask_walk.h"
#include "proc_tids.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_SMALL	    3
#define SMALL_TASKS 4
#define BIG_TASKS   (CTP_BPFTASK_WALK_K + 8)
#define MAX_TIDS    (BIG_TASKS + N_SMALL * SMALL_TASKS + 16)

static int hold[2] = {-1, -1}; /* the pipe the children block on */

static void *blocked(void *arg)
{
	char c;

	(void)arg;
	while (read(hold[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A child of `tasks` threads (its main one included), each blocked on
 * the pipe until the test closes it; its pid, or -1. */
static pid_t spawn(int tasks)
{
	pid_t pid = fork();
	pthread_attr_t at;

	if (pid != 0)
		return pid;
	close(hold[1]);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(
		&at, PTHREAD_STACK_MIN > 65536 ? PTHREAD_STACK_MIN : 65536);
	for (int i = 1; i < tasks; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, blocked, NULL) != 0)
			_exit(2);
	}
	blocked(NULL);
	_exit(0);
}

/* Whether every thread of pid is asleep ('S' in its stat), and there are
 * want of them. */
static bool all_asleep(pid_t pid, int want)
{
	static int tids[MAX_TIDS];
	int n = test_list_tids(pid, tids, MAX_TIDS);

	if (n != want)
		return false;
	for (int i = 0; i < n; i++) {
		char path[64], buf[512], *p;
		FILE *f;
		size_t len;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
			 tids[i]);
		f = fopen(path, "re");
		if (!f)
			return false;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		p = strrchr(buf, ')');
		if (!p || p[1] != ' ' || p[2] != 'S')
			return false;
	}
	return true;
}

static pid_t kids[1 + N_SMALL];
static int n_kids;

static bool ours(__s32 tgid)
{
	for (int i = 0; i < n_kids; i++)
		if (kids[i] == tgid)
			return true;
	return false;
}

/* The children's records of one pass, copied, and their count; -1 with
 * why printed when the pass failed. */
static int take(struct ctp_bpftask *b, struct ctp_bpftask_rec *out, int max,
		const char *what)
{
	const struct ctp_bpftask_rec *recs;
	int n = ctp_bpftask_pass(b, 256u << 20, &recs), k = 0;

	if (n < 0) {
		printf("FAIL: %s: %s\n", what, strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (ours(recs[i].tgid)) {
			if (k == max) {
				printf("FAIL: %s: more records of the "
				       "children than they have threads\n",
				       what);
				return -1;
			}
			out[k++] = recs[i];
		}
	printf("%s: %d records, %d of the children's\n", what, n, k);
	return k;
}

/* Each of the children's tids in recs (n) exactly once: true, or false
 * with the first one that is not. */
static bool once_each(const struct ctp_bpftask_rec *recs, int n,
		      const int *tids, int n_tids, const char *what)
{
	for (int i = 0; i < n_tids; i++) {
		int seen = 0;
		for (int k = 0; k < n; k++)
			seen += recs[k].pid == tids[i];
		if (seen != 1) {
			printf("FAIL: %s: tid %d seen %d times\n", what,
			       tids[i], seen);
			return false;
		}
	}
	if (n != n_tids) {
		printf("FAIL: %s: %d records of the children, %d threads\n",
		       what, n, n_tids);
		return false;
	}
	return true;
}

static const struct ctp_bpftask_rec *by_tid(const struct ctp_bpftask_rec *r,
					    int n, __s32 tid)
{
	for (int k = 0; k < n; k++)
		if (r[k].pid == tid)
			return &r[k];
	return NULL;
}

/* A task of a pass: its tid and start, sorted by both. */
struct id {
	__s32 tid;
	__u64 start;
};

static int cmp_id(const void *a, const void *b)
{
	const struct id *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every task of one pass (b's, walk on or off), sorted into *ids; their
 * count or -1. */
static int host_ids(struct ctp_bpftask *b, bool walk, struct id **ids)
{
	const struct ctp_bpftask_rec *recs;
	int n;

	ctp_bpftask_use_walk(b, walk);
	n = ctp_bpftask_pass(b, 256u << 20, &recs);
	if (n < 0 || !(*ids = calloc((size_t)n + 1, sizeof(**ids))))
		return -1;
	for (int i = 0; i < n; i++)
		(*ids)[i] = (struct id){recs[i].pid, recs[i].start_boottime};
	qsort(*ids, (size_t)n, sizeof(**ids), cmp_id);
	return n;
}

/*
 * The whole host: every task in an iter/task pass before the open-coded
 * one and in another after it (alive for the whole pass) is in the
 * open-coded pass exactly once, and no task is in it twice.
 */
static bool whole_host(struct ctp_bpftask *b, unsigned k)
{
	struct id *a = NULL, *w = NULL, *c = NULL;
	int na, nw, nc, both = 0;
	bool ok = true;

	ctp_bpftask_walk_limit(b, k, CTP_BPFTASK_WALK_PROCS);
	na = host_ids(b, false, &a);
	nw = host_ids(b, true, &w);
	nc = host_ids(b, false, &c);
	if (na < 0 || nw < 0 || nc < 0) {
		printf("FAIL: the whole host's passes\n");
		ok = false;
	}
	for (int i = 1; ok && i < nw; i++)
		if (w[i].tid == w[i - 1].tid) {
			printf("FAIL: %u a run: tid %d twice in the "
			       "open-coded pass\n",
			       k, w[i].tid);
			ok = false;
		}
	for (int i = 0; ok && i < na; i++) {
		if (!bsearch(&a[i], c, (size_t)nc, sizeof(*c), cmp_id))
			continue; /* gone during the passes */
		both++;
		if (!bsearch(&a[i], w, (size_t)nw, sizeof(*w), cmp_id)) {
			printf("FAIL: %u a run: tid %d in both iter/task "
			       "passes, not in the open-coded one\n",
			       k, a[i].tid);
			ok = false;
		}
	}
	printf("the whole host, %u a run: %d tasks in both iter/task passes, "
	       "all in the open-coded one (%d tasks)\n",
	       k, both, nw);
	free(a);
	free(w);
	free(c);
	return ok;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* From the n records of a pass: the records of processes of at most k
 * threads (*small) and how many processes have more (*large). What the
 * runs must have been follows from these, whatever else the host runs. */
static void by_size(const struct ctp_bpftask_rec *r, int n, unsigned k,
		    unsigned *small, unsigned *large)
{
	static int32_t tg[MAX_TIDS];

	*small = *large = 0;
	for (int i = 0; i < n; i++)
		tg[i] = r[i].tgid;
	qsort(tg, (size_t)n, sizeof(tg[0]), cmp_i32);
	for (int i = 0, j; i < n; i = j) {
		for (j = i; j < n && tg[j] == tg[i]; j++)
			;
		if ((unsigned)(j - i) > k)
			(*large)++;
		else
			*small += (unsigned)(j - i);
	}
}

/* The open-coded pass at limit k (records a run) and procs (processes a
 * pass) against iter/task's: both give each of the children's threads
 * once, with equal records; the open-coded one walked every process of
 * more than k threads (the large child among them) by the pid parameter
 * and the others in runs of at most k records (the list run and at least
 * one a k records of theirs), or, with fewer processes allowed than the
 * host has, was iter/task's whole pass. */
static bool compare_at(struct ctp_bpftask *b, unsigned k, unsigned procs,
		       const int *tids, int n_tids)
{
	static struct ctp_bpftask_rec w[MAX_TIDS], it[MAX_TIDS];
	struct ctp_bpftask_walk_stats st;
	bool whole = procs < 16;
	char what[64];
	int nw, ni;
	bool ok = true;

	ctp_bpftask_walk_limit(b, k, procs);
	ctp_bpftask_use_walk(b, true);
	snprintf(what, sizeof(what), "open-coded, %u a run, %u processes", k,
		 procs);
	nw = take(b, w, MAX_TIDS, what);
	ctp_bpftask_walk_stats(b, &st);
	printf("%s: %u runs, %u by the pid parameter, whole %s, the list "
	       "run %llu ns, the longest threads run %llu ns (%u records)\n",
	       what, st.runs, st.big, st.whole ? "yes" : "no",
	       (unsigned long long)st.list_ns,
	       (unsigned long long)st.max_run_ns, st.max_run_recs);
	ctp_bpftask_use_walk(b, false);
	ni = take(b, it, MAX_TIDS, "iter/task");
	if (nw < 0 || ni < 0)
		return false;
	if (whole && !st.whole) {
		printf("FAIL: %s: %u processes allowed, not iter/task's whole "
		       "pass\n",
		       what, procs);
		ok = false;
	}
	unsigned small = 0, large = 0;
	if (nw > 0)
		by_size(w, nw, k, &small, &large);
	if (!whole &&
	    (st.whole || st.big < 1 || st.big < large ||
	     st.runs < 1 + (small + k - 1) / k || st.max_run_recs > k)) {
		printf("FAIL: %s: not the open-coded pass's runs with the "
		       "large child by the pid parameter (%u records in "
		       "processes of at most %u threads, %u processes of "
		       "more)\n",
		       what, small, k, large);
		ok = false;
	}
	ok &= once_each(w, nw, tids, n_tids, what);
	ok &= once_each(it, ni, tids, n_tids, "iter/task");
	for (int i = 0; ok && i < n_tids; i++) {
		struct ctp_bpftask_rec a = *by_tid(w, nw, tids[i]);
		struct ctp_bpftask_rec c = *by_tid(it, ni, tids[i]);
		const unsigned char *x = (const void *)&a,
				    *y = (const void *)&c;

		/* prev_cputime, the task's and its group's, is written by
		 * whoever reads its stat files (cputime_adjust() keeps it
		 * monotonic): another process's capture between the two
		 * passes moves it. Every other byte is compared. */
		a.prev_utime = a.prev_stime = c.prev_utime = c.prev_stime = 0;
		a.sig_prev_utime = a.sig_prev_stime = 0;
		c.sig_prev_utime = c.sig_prev_stime = 0;
		for (size_t o = 0; o < sizeof(a); o++)
			if (x[o] != y[o]) {
				printf("FAIL: tid %d: its records differ at "
				       "byte %zu (%u, %u)\n",
				       tids[i], o, x[o], y[o]);
				ok = false;
				break;
			}
	}
	return ok;
}

int main(void)
{
	static int tids[MAX_TIDS];
	struct ctp_bpftask *b = NULL;
	char why[256] = "";
	const char * not ;
	int n_tids = 0, r, rc = 1;
	bool ok = true;

	if ((r = bpftask_test_open(&b, CTP_BPFTASK_OPEN_WALK, why,
				   sizeof(why))))
		return r;
	if ((not = ctp_bpftask_walk_why(b))) {
		printf("SKIP: no open-coded pass: %s\n", not );
		ctp_bpftask_free(b);
		return 77;
	}
	if (pipe(hold) < 0) {
		printf("FAIL: pipe: %s\n", strerror(errno));
		goto out;
	}
	kids[n_kids++] = spawn(BIG_TASKS);
	for (int i = 0; i < N_SMALL; i++)
		kids[n_kids++] = spawn(SMALL_TASKS);
	close(hold[0]);
	for (int i = 0; i < n_kids; i++)
		if (kids[i] < 0) {
			printf("FAIL: fork: %s\n", strerror(errno));
			goto out;
		}
	/* Until every thread blocks: their records stay as they are. */
	for (int i = 0; i < n_kids; i++) {
		int want = i == 0 ? BIG_TASKS : SMALL_TASKS, tries = 0, got;
		while (!all_asleep(kids[i], want) && ++tries < 3000)
			nanosleep(&(struct timespec){.tv_nsec = 10000000},
				  NULL);
		got = test_list_tids(kids[i], tids + n_tids, MAX_TIDS - n_tids);
		if (tries == 3000 || got != want) {
			printf("FAIL: child %d: %d threads asleep, not %d\n",
			       (int)kids[i], got, want);
			goto out;
		}
		n_tids += got;
	}
	printf("children: %d threads in %d processes, the first of %d\n",
	       n_tids, n_kids, BIG_TASKS);
	ok &= compare_at(b, CTP_BPFTASK_WALK_K, CTP_BPFTASK_WALK_PROCS, tids,
			 n_tids);
	ok &= compare_at(b, 64, CTP_BPFTASK_WALK_PROCS, tids, n_tids);
	ok &= compare_at(b, 64, 8, tids, n_tids);
	ok &= whole_host(b, CTP_BPFTASK_WALK_K);
	ok &= whole_host(b, 64);
	rc = ok ? 0 : 1;
out:
	if (hold[1] >= 0)
		close(hold[1]);
	for (int i = 0; i < n_kids; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
	ctp_bpftask_free(b);
	return rc;
}
