/* SPDX-License-Identifier: MIT */
/*
 * ctp-bench-exits: the BPF exit program (plugins/bpf-task/bpfexit.h) under
 * thread churn, the issue-33 target "zero exit records lost (only detail,
 * counted) with 60,000 threads exiting every 2 s". Not a test: run it by
 * hand as root (docs/PERFORMANCE.md).
 *
 *   ctp-bench-exits [--threads N] [--procs P] [--period-ms MS]
 *                   [--periods K] [--ring BYTES]
 *
 * P child processes together start and end N threads every period (each
 * writes WBYTES to /dev/null, so its I/O is known), 64 at a time; the
 * bench drains the ring and the per-process totals once a period, as a
 * recorder's finish does. At the end every child's threads must be
 * accounted for, as rows or in totals, and their wchar sum exact: it
 * prints per period the exits seen, how many came as records and how many
 * only as sums, and at the end the threads made against the threads
 * accounted for, and any lost (the totals map full). Exit status 0 when
 * none is lost, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfexit.h"

#define WBYTES 100
#define BATCH  64
#define MAXP   256

struct shared {
	_Atomic uint64_t made[MAXP]; /* threads ended, per child */
	_Atomic int stop;
};

static int g_null;

static void *thread_main(void *arg)
{
	char buf[WBYTES] = {0};

	(void)arg;
	if (write(g_null, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		abort();
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Child i: its share of the threads every period, in batches. */
static void child(struct shared *sh, int i, uint64_t per_period,
		  uint64_t period_ns)
{
	pthread_t t[BATCH];

	g_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	while (!atomic_load(&sh->stop)) {
		uint64_t t0 = now_ns(), done = 0;

		while (done < per_period && !atomic_load(&sh->stop)) {
			int n = 0;

			while (n < BATCH && done + (uint64_t)n < per_period &&
			       pthread_create(&t[n], NULL, thread_main, NULL) ==
				       0)
				n++;
			for (int k = 0; k < n; k++)
				pthread_join(t[k], NULL);
			done += (uint64_t)n;
			atomic_fetch_add(&sh->made[i], (uint64_t)n);
		}
		uint64_t el = now_ns() - t0;
		if (el < period_ns) {
			struct timespec ts = {
				(time_t)((period_ns - el) / 1000000000ull),
				(long)((period_ns - el) % 1000000000ull)};
			nanosleep(&ts, NULL);
		}
	}
	_exit(0);
}

struct tally {
	pid_t *pids;
	int n;
	uint64_t recs, summed, wchar, other; /* the children's threads */
};

static int mine(const struct tally *t, int32_t tgid)
{
	for (int i = 0; i < t->n; i++)
		if (t->pids[i] == tgid)
			return 1;
	return 0;
}

static void on_rec(void *arg, const struct ctp_bpfexit_rec *r)
{
	struct tally *t = arg;

	if (!mine(t, r->tgid)) {
		t->other++;
		return;
	}
	t->recs++;
	t->wchar += r->wchar;
}

static void on_sum(void *arg, uint32_t tgid, const struct ctp_bpfexit_sum *s)
{
	struct tally *t = arg;

	if (!mine(t, (int32_t)tgid)) {
		t->other += s->threads;
		return;
	}
	t->summed += s->threads;
	t->wchar += s->wchar;
}

static void drain(struct ctp_bpfexit *b, struct tally *t)
{
	uint64_t bad = 0;

	ctp_bpfexit_consume(b, on_rec, t, &bad);
	ctp_bpfexit_take_sums(b, on_sum, t);
	if (bad)
		fprintf(stderr, "%" PRIu64 " records did not parse\n", bad);
}

int main(int argc, char **argv)
{
	uint64_t threads = 60000, period_ms = 2000, ring = 0;
	int procs = 30, periods = 5;
	struct ctp_bpfexit_opts o = {0};
	struct ctp_bpfexit *b;
	char why[256];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			threads = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--procs"))
			procs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--period-ms"))
			period_ms = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--periods"))
			periods = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--ring"))
			ring = strtoull(argv[i + 1], NULL, 10);
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (procs < 1 || procs > MAXP || periods < 1 || !threads) {
		fprintf(stderr, "--procs 1..%d, --periods and --threads > 0\n",
			MAXP);
		return 2;
	}
	o.ring_bytes = ring;
	if (ctp_bpfexit_open(&o, &b, why, sizeof(why)) < 0) {
		fprintf(stderr, "the BPF exit program: %s\n", why);
		return 77;
	}
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[MAXP];
	struct tally t = {.pids = pids, .n = procs};
	uint64_t folded0, lost0, folded, lost, made = 0, seen = 0;

	if (sh == MAP_FAILED)
		return 1;
	ctp_bpfexit_counts(b, &folded0, &lost0);
	printf("%" PRIu64 " threads every %" PRIu64 " ms in %d processes, "
	       "%d periods\n",
	       threads, period_ms, procs, periods);
	for (int i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child(sh, i,
			      threads / (uint64_t)procs +
				      ((uint64_t)i < threads % (uint64_t)procs),
			      period_ms * 1000000ull);
	}
	for (int p = 0; p < periods; p++) {
		struct timespec ts = {(time_t)(period_ms / 1000),
				      (long)(period_ms % 1000) * 1000000};
		uint64_t r0 = t.recs, s0 = t.summed;

		nanosleep(&ts, NULL);
		drain(b, &t);
		printf("period %d: %" PRIu64 " exits: %" PRIu64
		       " records, %" PRIu64 " only in per-process sums\n",
		       p + 1, t.recs - r0 + t.summed - s0, t.recs - r0,
		       t.summed - s0);
	}
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < procs; i++)
		waitpid(pids[i], NULL, 0);
	drain(b, &t); /* the last threads, and the children's main ones */
	for (int i = 0; i < procs; i++)
		made += atomic_load(&sh->made[i]);
	made += (uint64_t)procs; /* their main threads */
	seen = t.recs + t.summed;
	ctp_bpfexit_counts(b, &folded, &lost);
	printf("threads ended %" PRIu64 ", accounted for %" PRIu64 " (%" PRIu64
	       " records, %" PRIu64 " in sums), wchar %" PRIu64 " of %" PRIu64
	       "; the host's other exits %" PRIu64
	       "; merged (all tasks) %" PRIu64 ", lost %" PRIu64 "\n",
	       made, seen, t.recs, t.summed, t.wchar,
	       (made - (uint64_t)procs) * WBYTES, t.other, folded - folded0,
	       lost - lost0);
	ctp_bpfexit_free(b);
	return seen == made && lost == lost0 &&
			       t.wchar == (made - (uint64_t)procs) * WBYTES
		       ? 0
		       : 1;
}
