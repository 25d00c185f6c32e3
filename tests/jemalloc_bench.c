// SPDX-License-Identifier: MIT
/*
 * jemalloc-probe speed (docs/PERFORMANCE.md): per-thread cost of the
 * stop-free libthread_db read versus the ptrace fallback on a 1,000-thread
 * worker, and the disturbance of a spinning malloc/free loop while
 * captures repeat (in a worker of THREADS threads, then in one of two).
 * Not a test: run by hand,
 *   jemalloc_bench WORKER [THREADS]
 * with WORKER the static jemalloc_worker (tests/jemalloc.cmake).
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jep.h"

struct worker {
	pid_t pid;
	long tid;
	unsigned long extra;
};

static int spawn(const char *path, struct worker *w, const char *a1,
		 const char *a2)
{
	int p[2];
	char fdarg[16], buf[128];
	size_t len = 0;

	if (pipe(p))
		return -errno;
	w->pid = fork();
	if (w->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		execl(path, path, fdarg, a1, a2, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (len < sizeof(buf) - 1) {
		struct pollfd pf = {p[0], POLLIN, 0};
		ssize_t n;

		if (poll(&pf, 1, 30000) <= 0)
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
	return sscanf(buf, "R %ld %lu", &w->tid, &w->extra) == 2 ? 0 : -EIO;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct ctp_map maps[4096];
static char mbuf[1 << 20];
static struct ctp_jep_file file;
static struct ctp_jep_counters C[8192];
static int32_t tids[8192];

/* The executable is the jemalloc module (static worker). */
static int target(pid_t pid, const char *exe, struct ctp_jep_target *t)
{
	char path[64];
	FILE *f;
	size_t n = 0;

	if (ctp_jep_file_probe(exe, &file) || !file.found)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t len = fread(mbuf, 1, sizeof(mbuf) - 1, f);
	fclose(f);
	mbuf[len] = '\0';
	for (char *s = mbuf, *e; s < mbuf + len && n < 4096; s = e + 1) {
		e = strchr(s, '\n');
		if (!e)
			e = mbuf + len;
		*e = '\0';
		if (!ctp_maps_line(s, (size_t)(e - s), &maps[n]) &&
		    maps[n].ino && maps[n].path[0] == '/')
			n++;
	}
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->file = &file;
	t->maps = maps;
	t->n_maps = n;
	t->root = "";
	t->in_main_exe = true;
	t->bias = file.is_dyn ? maps[0].start - file.first_load_vaddr : 0;
	return 0;
}

static int list(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && n < 8192)
		if (de->d_name[0] != '.')
			tids[n++] = atoi(de->d_name);
	if (d)
		closedir(d);
	return n;
}

static unsigned long ops(pid_t pid, unsigned long addr)
{
	unsigned long v = 0;
	struct iovec l = {&v, sizeof(v)}, r = {(void *)addr, sizeof(v)};

	process_vm_readv(pid, &l, 1, &r, 1, 0);
	return v;
}

/* Spinner ops/s over `secs` while `mode` repeats (0 none, 1 tdb, 2 ptrace). */
static double rate(struct worker *w, struct ctp_jep_target *t, int mode,
		   double secs, unsigned *captures)
{
	unsigned long o0, o1;
	double t0, t1;
	int n = list(w->pid);

	*captures = 0;
	o0 = ops(w->pid, w->extra);
	t0 = now();
	while (now() - t0 < secs) {
		enum ctp_jep_tag tag;
		size_t k;

		if (mode == 1)
			ctp_jep_read_thread_db(t, C, 8192, &k, &tag);
		else if (mode == 2)
			ctp_jep_read_ptrace(t, tids, (size_t)n, C, 1000);
		else
			usleep(1000);
		if (mode)
			(*captures)++;
	}
	o1 = ops(w->pid, w->extra);
	t1 = now();
	return (double)(o1 - o0) / (t1 - t0);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define ROUNDS 7

static int spin_pass(const char *exe, const char *sleepers)
{
	struct worker w;
	struct ctp_jep_target t;
	double r[3][ROUNDS];
	unsigned caps[3][ROUNDS];
	int nt;

	if (spawn(exe, &w, "spin", sleepers) || target(w.pid, exe, &t))
		return -1;
	nt = list(w.pid);
	/* One second of each mode per round, the order rotating. */
	for (int i = 0; i < ROUNDS; i++)
		for (int k = 0; k < 3; k++) {
			int m = (i + k) % 3;

			r[m][i] = rate(&w, &t, m, 1.0, &caps[m][i]);
		}
	double ratio[2][ROUNDS];
	unsigned c1 = 0, c2 = 0;
	for (int i = 0; i < ROUNDS; i++) {
		ratio[0][i] = r[1][i] / r[0][i];
		ratio[1][i] = r[2][i] / r[0][i];
		c1 += caps[1][i];
		c2 += caps[2][i];
	}
	double d1 = median(ratio[0], ROUNDS), d2 = median(ratio[1], ROUNDS);
	double idle = median(r[0], ROUNDS), m1 = median(r[1], ROUNDS),
	       m2 = median(r[2], ROUNDS);
	printf("spinner in a %d-thread worker, ops/s (median of %d one-second "
	       "runs): idle %.3g, during back-to-back thread_db captures %.3g "
	       "(%u captures; paired by round %+.1f%%), during ptrace "
	       "captures %.3g (%u captures; paired by round %+.1f%%)\n",
	       nt, ROUNDS, idle, m1, c1, (d1 - 1) * 100, m2, c2,
	       (d2 - 1) * 100);
	kill(w.pid, SIGKILL);
	waitpid(w.pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct worker w;
	struct ctp_jep_target t;
	const char *nthreads = argc > 2 ? argv[2] : "1000";
	char sleepers[24];
	enum ctp_jep_tag tag;
	size_t n = 0;
	double tdb[ROUNDS], pt[ROUNDS];
	int nt;

	if (argc < 2)
		return 2;
	if (spawn(argv[1], &w, "threads", nthreads) ||
	    target(w.pid, argv[1], &t))
		return 1;
	nt = list(w.pid);
	/* Both methods in every round, alternating which goes first. */
	for (int i = 0; i < ROUNDS; i++) {
		for (int k = 0; k < 2; k++) {
			double t0 = now();

			if ((i + k) % 2 == 0) {
				for (int j = 0; j < 5; j++)
					ctp_jep_read_thread_db(&t, C, 8192, &n,
							       &tag);
				tdb[i] = (now() - t0) / 5;
			} else {
				ctp_jep_read_ptrace(&t, tids, (size_t)nt, C,
						    1000);
				pt[i] = now() - t0;
			}
		}
	}
	double mt = median(tdb, ROUNDS), mp = median(pt, ROUNDS);
	printf("worker threads %d (thread_db read %zu); median of %d rounds: "
	       "thread_db %.1f us/thread (%.2f ms/capture, fastest %.2f), "
	       "ptrace %.1f us/thread (%.2f ms/capture, fastest %.2f)\n",
	       nt, n, ROUNDS, mt * 1e6 / nt, mt * 1e3, tdb[0] * 1e3,
	       mp * 1e6 / nt, mp * 1e3, pt[0] * 1e3);
	kill(w.pid, SIGKILL);
	waitpid(w.pid, NULL, 0);

	/* The spinner in a worker of the same size (N-2 sleepers, main, it),
	 * then alone with main, where every capture probes it. */
	for (int pass = 0; pass < 2; pass++) {
		long ns = atol(nthreads) > 2 && pass == 0 ? atol(nthreads) - 2
							  : 0;
		snprintf(sleepers, sizeof(sleepers), "%ld", ns);
		if (spin_pass(argv[1], sleepers))
			return 1;
	}
	return 0;
}
