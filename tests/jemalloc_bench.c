// SPDX-License-Identifier: MIT
/*
 * jemalloc-probe speed (docs/PERFORMANCE.md): per-thread cost of the
 * stop-free libthread_db read versus the ptrace fallback on a 1,000-thread
 * worker, and the disturbance of a spinning malloc/free loop while
 * captures repeat. Not a test: run by hand,
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

static struct ctp_jep_map maps[4096];
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
		if (!ctp_jep_maps_line(s, (size_t)(e - s), &maps[n]) &&
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
	unsigned long o0 = ops(w->pid, w->extra), o1;
	double t0 = now(), t1;
	int n = list(w->pid);

	*captures = 0;
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

int main(int argc, char **argv)
{
	struct worker w;
	struct ctp_jep_target t;
	const char *nthreads = argc > 2 ? argv[2] : "1000";
	enum ctp_jep_tag tag;
	size_t n = 0;
	double t0, tdb, pt;
	int nt, reps = 20;
	unsigned caps;

	if (argc < 2)
		return 2;
	if (spawn(argv[1], &w, "threads", nthreads) ||
	    target(w.pid, argv[1], &t))
		return 1;
	nt = list(w.pid);
	t0 = now();
	for (int i = 0; i < reps; i++)
		ctp_jep_read_thread_db(&t, C, 8192, &n, &tag);
	tdb = (now() - t0) / reps;
	t0 = now();
	for (int i = 0; i < 3; i++)
		ctp_jep_read_ptrace(&t, tids, (size_t)nt, C, 1000);
	pt = (now() - t0) / 3;
	printf("threads %d (read %zu): thread_db %.1f us/thread (%.2f ms/"
	       "capture), ptrace %.1f us/thread (%.2f ms/capture)\n",
	       nt, n, tdb * 1e6 / nt, tdb * 1e3, pt * 1e6 / nt, pt * 1e3);
	kill(w.pid, SIGKILL);
	waitpid(w.pid, NULL, 0);

	if (spawn(argv[1], &w, "spin", NULL) || target(w.pid, argv[1], &t))
		return 1;
	double base = rate(&w, &t, 0, 2.0, &caps);
	double r1 = rate(&w, &t, 1, 2.0, &caps);
	unsigned c1 = caps;
	double r2 = rate(&w, &t, 2, 2.0, &caps);
	unsigned c2 = caps;
	double base2 = rate(&w, &t, 0, 2.0, &caps);

	printf("spinner ops/s: idle %.3g, during thread_db captures %.3g "
	       "(%u captures, %+.1f%%), during ptrace captures %.3g (%u "
	       "captures, %+.1f%%), idle again %.3g\n",
	       base, r1, c1, (r1 / base - 1) * 100, r2, c2,
	       (r2 / base - 1) * 100, base2);
	kill(w.pid, SIGKILL);
	waitpid(w.pid, NULL, 0);
	return 0;
}
