/* SPDX-License-Identifier: MIT */
/*
 * ctp-bench-load: park N sleeping threads, spread over processes, so the
 * benchmark walks a host of a known size.
 *
 *   ctp-bench-load -n THREADS [-t PER_PROCESS] [--no-raise] [--ignore-stdin]
 *                  [--publish]
 *
 * Forks ceil(N / PER_PROCESS) processes (main thread included in the
 * count), each blocked in pause() on 64 KiB stacks, waits until every
 * thread exists, prints "ready THREADS PROCESSES PGID" on stdout and holds
 * the load until stdin reaches EOF (the driver closes it or dies) or a
 * SIGINT/SIGTERM/SIGHUP arrives. Teardown kills the load's process group
 * with SIGKILL and reaps it; children also die with their parent
 * (PR_SET_PDEATHSIG), so no sleeper outlives the generator.
 *
 * Before forking it checks kernel.threads-max, kernel.pid_max,
 * vm.max_map_count, RLIMIT_NPROC, the pids cgroup and MemAvailable. As
 * root it raises the two sysctls when needed (restored at exit) unless
 * --no-raise; anything else that does not fit is reported and exits 2.
 *
 * Exit status: 0 ok, 1 the load could not be started, 2 usage or limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctprof/appstats.h"

#define STACK_SIZE (64 * 1024)
/* Room left for everything else the host starts while the load is up. */
#define SPARE_TASKS 1024
/* pid numbers below this are never handed out again (RESERVED_PIDS). */
#define RESERVED_PIDS 300
/* pid numbers beyond the load's for the rest of the host: a test suite
 * beside it makes thousands of threads at once (test_interval_live up to
 * 8,000, the churn stress), and with pid_max only SPARE_TASKS above the
 * load its forks failed with EAGAIN. A pid number costs nothing unused. */
#define PID_HEADROOM 32768
/* PID_MAX_LIMIT on 64-bit kernels. */
#define PID_MAX_LIMIT (4 * 1024 * 1024)
/* Rough kernel + user cost of one sleeping thread: kernel stack, task
 * struct, the touched part of its user stack. */
#define EST_BYTES_PER_THREAD (48 * 1024)
/* glibc maps a stack and a guard area per thread. */
#define MAPS_PER_THREAD 2

struct ready_msg {
	int32_t err;	  /* 0, or the negative errno that stopped creation */
	uint32_t created; /* threads alive in the child, main included */
};

struct sysctl_undo {
	const char *path;
	long old, set;
	bool changed;
};

static volatile sig_atomic_t stop_sig;
static struct sysctl_undo undo[2] = {
	{"/proc/sys/kernel/threads-max", 0, 0, false},
	{"/proc/sys/kernel/pid_max", 0, 0, false},
};

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ctp-bench-load -n THREADS [-t PER_PROCESS] "
		"[--no-raise] [--ignore-stdin] [--timeout SECS] [--publish]\n"
		"Start THREADS sleeping threads in ceil(THREADS/PER_PROCESS) "
		"processes (default 100 per\n"
		"process), print 'ready THREADS PROCESSES PGID' and hold them "
		"until stdin reaches EOF\n"
		"or SIGINT/SIGTERM/SIGHUP (--ignore-stdin: only a signal).\n"
		"--publish: each thread publishes two values through "
		"ctprof/appstats.h.\n");
}

static int read_long(const char *path, long *out)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int ok = fscanf(f, "%ld", out) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%ld\n", v);
	int err = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

/* Threads alive on the host: the total in /proc/loadavg's 4th field. */
static long host_threads(void)
{
	FILE *f = fopen("/proc/loadavg", "re");
	long running = 0, total = -1;
	double a, b, c;
	if (!f)
		return -1;
	if (fscanf(f, "%lf %lf %lf %ld/%ld", &a, &b, &c, &running, &total) != 5)
		total = -1;
	fclose(f);
	return total;
}

/* Raise a sysctl to `want` when it is lower and we may; 0 when it fits. */
static int ensure_sysctl(struct sysctl_undo *u, long want, bool may_raise,
			 const char *why)
{
	long cur;
	int r = read_long(u->path, &cur);
	if (r < 0) {
		fprintf(stderr, "ctp-bench-load: cannot read %s: %s\n", u->path,
			strerror(-r));
		return 0; /* not fatal: fork will tell */
	}
	if (cur >= want)
		return 0;
	if (!may_raise) {
		fprintf(stderr,
			"ctp-bench-load: %s is %ld, %s needs %ld; raise it "
			"(as root: echo %ld > %s) or ask for fewer threads\n",
			u->path, cur, why, want, want, u->path);
		return -ERANGE;
	}
	r = write_long(u->path, want);
	if (r < 0) {
		fprintf(stderr,
			"ctp-bench-load: cannot raise %s from %ld to "
			"%ld: %s\n",
			u->path, cur, want, strerror(-r));
		return r;
	}
	u->old = cur;
	u->set = want;
	u->changed = true;
	fprintf(stderr,
		"ctp-bench-load: raised %s from %ld to %ld (restored "
		"at exit)\n",
		u->path, cur, want);
	return 0;
}

/*
 * Put back what we raised, but only while it still holds our value: a
 * second generator started meanwhile may have raised it further and will
 * restore our value when it ends.
 */
static void restore_sysctls(void)
{
	for (size_t i = 0; i < sizeof(undo) / sizeof(undo[0]); i++) {
		struct sysctl_undo *u = &undo[i];
		long cur;
		if (!u->changed)
			continue;
		u->changed = false;
		if (read_long(u->path, &cur) < 0 || cur != u->set) {
			fprintf(stderr,
				"ctp-bench-load: %s changed since we set it to "
				"%ld; left at its current value (it was %ld "
				"before us)\n",
				u->path, u->set, u->old);
			continue;
		}
		int r = write_long(u->path, u->old);
		if (r < 0)
			fprintf(stderr,
				"ctp-bench-load: cannot restore %s to %ld: "
				"%s\n",
				u->path, u->old, strerror(-r));
	}
}

/* pids.max of this process's pids cgroup (v1 or v2), -1 when unlimited or
 * unknown; the current count in *cur. */
static long pids_cgroup_max(long *cur)
{
	char line[4096], path[4400];
	FILE *f = fopen("/proc/self/cgroup", "re");
	long max = -1;
	*cur = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrl = c1 + 1, *cg = c2 + 1;
		if (strcmp(ctrl, "pids") == 0)
			snprintf(path, sizeof(path), "/sys/fs/cgroup/pids%s",
				 cg);
		else if (*ctrl == '\0' && line[0] == '0')
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s", cg);
		else
			continue;
		char p[4500];
		char val[64] = "";
		snprintf(p, sizeof(p), "%s/pids.max", path);
		FILE *m = fopen(p, "re");
		if (!m)
			continue;
		if (fgets(val, sizeof(val), m) && strncmp(val, "max", 3) != 0)
			max = strtol(val, NULL, 10);
		fclose(m);
		snprintf(p, sizeof(p), "%s/pids.current", path);
		read_long(p, cur);
		if (max >= 0)
			break;
	}
	fclose(f);
	return max;
}

static long mem_available_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* RLIMIT_NPROC up to `need` tasks when the hard limit allows it; -ERANGE
 * when it does not or cannot be raised (said on stderr). */
static int raise_nproc(long need)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)need;

	if (getrlimit(RLIMIT_NPROC, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		fprintf(stderr,
			"ctp-bench-load: ulimit -u hard limit is %lu, "
			"the load needs %ld (threads count against "
			"it); run as root or raise it\n",
			(unsigned long)rl.rlim_max, need);
		return -ERANGE;
	}
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NPROC, &rl) < 0) {
		fprintf(stderr, "ctp-bench-load: setrlimit NPROC: %s\n",
			strerror(errno));
		return -ERANGE;
	}
	return 0;
}

static int check_limits(unsigned long nthreads, unsigned long per_proc,
			bool may_raise)
{
	bool root = geteuid() == 0;
	long now = host_threads();
	long need = (now > 0 ? now : 0) + (long)nthreads + SPARE_TASKS;
	int ret = 0;

	may_raise = may_raise && root;
	if (ensure_sysctl(&undo[0], need, may_raise, "the load") < 0)
		ret = -ERANGE;
	/* pid_max counts pid numbers, of which the first few hundred are
	 * reserved; give the allocator room to find free ones. */
	long want_pid = need + RESERVED_PIDS;
	if (may_raise)
		want_pid += PID_HEADROOM; /* room, where we may make it */
	if (want_pid > PID_MAX_LIMIT)
		want_pid = PID_MAX_LIMIT;
	if (ensure_sysctl(&undo[1], want_pid, may_raise, "the load") < 0)
		ret = -ERANGE;

	long maps;
	if (read_long("/proc/sys/vm/max_map_count", &maps) == 0 &&
	    (long)per_proc * MAPS_PER_THREAD + 1024 > maps) {
		fprintf(stderr,
			"ctp-bench-load: vm.max_map_count is %ld, %lu threads "
			"per process need about %lu; use a smaller -t\n",
			maps, per_proc, per_proc * MAPS_PER_THREAD + 1024);
		ret = -ERANGE;
	}

	/* The kernel does not enforce RLIMIT_NPROC on root. */
	if (!root && raise_nproc(need) < 0)
		ret = -ERANGE;

	long pcur, pmax = pids_cgroup_max(&pcur);
	if (pmax >= 0 && pcur + (long)nthreads + SPARE_TASKS > pmax) {
		fprintf(stderr,
			"ctp-bench-load: the pids cgroup allows %ld tasks, "
			"%ld are in use and the load adds %lu; raise pids.max "
			"or ask for fewer threads\n",
			pmax, pcur, nthreads);
		ret = -ERANGE;
	}

	long avail = mem_available_kib();
	unsigned long est = nthreads * (EST_BYTES_PER_THREAD / 1024);
	if (avail > 0 && est > (unsigned long)avail / 2) {
		fprintf(stderr,
			"ctp-bench-load: %lu threads need about %lu MiB, only "
			"%ld MiB are available\n",
			nthreads, est / 1024, avail / 1024);
		ret = -ERANGE;
	}
	return ret;
}

/* --publish: every thread's values in the process's appstats registry
 * (include/ctprof/appstats.h), so appstats' cost on a publisher is
 * measured on the same load. -1: not publishing. */
static int pub_value = -1, pub_count = -1;

static void *sleeper(void *arg)
{
	if (pub_value >= 0) {
		ctp_app_set(pub_value, (uint64_t)(uintptr_t)arg);
		ctp_app_add(pub_count, 1);
	}
	for (;;)
		pause();
	return NULL;
}

static void write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static void __attribute__((noreturn))
child_main(int wfd, unsigned long nthreads, pid_t parent, pid_t pgid,
	   bool publish)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	struct ready_msg m = {0, 1};
	pthread_attr_t attr;
	int r;

	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
	setpgid(0, pgid);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died before the line above took effect. */
	if (getppid() != parent)
		_exit(1);

	if (publish) {
		pub_value = ctp_app_field("bench.value", CTP_UNIT_COUNT,
					  CTP_KIND_GAUGE, CTP_RULE_MAX);
		pub_count = ctp_app_field("bench.count", CTP_UNIT_COUNT,
					  CTP_KIND_COUNTER, CTP_RULE_SUM);
	}
	r = pthread_attr_init(&attr);
	if (r == 0)
		r = pthread_attr_setstacksize(&attr, STACK_SIZE);
	for (unsigned long i = 1; r == 0 && i < nthreads; i++) {
		pthread_t t;
		r = pthread_create(&t, &attr, sleeper, (void *)(uintptr_t)i);
		if (r == 0)
			m.created++;
	}
	m.err = -r;
	write_full(wfd, &m, sizeof(m));
	close(wfd);
	for (;;)
		pause();
}

static void teardown(pid_t pgid, const pid_t *kids, size_t nkids)
{
	if (pgid > 0)
		kill(-pgid, SIGKILL);
	/* A child that had not joined the group yet still gets its signal. */
	for (size_t i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	for (size_t i = 0; i < nkids; i++)
		while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
			;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Collect one ready message per child. Returns threads alive or -errno. */
static long wait_ready(int rfd, size_t nkids, unsigned timeout_s)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000;
	unsigned long alive = 0;
	size_t got = 0;
	long err = 0;

	while (got < nkids) {
		if (stop_sig)
			return -EINTR;
		uint64_t t = now_ms();
		if (t >= deadline) {
			fprintf(stderr,
				"ctp-bench-load: only %zu of %zu "
				"processes ready after %us\n",
				got, nkids, timeout_s);
			return -ETIMEDOUT;
		}
		struct pollfd pfd = {.fd = rfd, .events = POLLIN};
		int n = poll(&pfd, 1, (int)(deadline - t));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		struct ready_msg m;
		ssize_t rd = read(rfd, &m, sizeof(m));
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd == 0) {
			fprintf(stderr,
				"ctp-bench-load: %zu of %zu processes "
				"died before they were ready\n",
				nkids - got, nkids);
			return -ECHILD;
		}
		if (rd != (ssize_t)sizeof(m))
			return -EIO;
		got++;
		alive += m.created;
		if (m.err && !err)
			err = m.err;
	}
	if (err) {
		fprintf(stderr,
			"ctp-bench-load: pthread_create: %s (%lu "
			"threads were created)\n",
			strerror((int)-err), alive);
		return err;
	}
	return (long)alive;
}

/* Hold the load until stdin EOF (unless ignored) or a signal. */
static void hold(bool ignore_stdin)
{
	char buf[256];
	while (!stop_sig) {
		struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
		int n = poll(&pfd, ignore_stdin ? 0 : 1, -1);
		if (n < 0)
			continue; /* EINTR: a signal, checked above */
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
			ssize_t rd = read(STDIN_FILENO, buf, sizeof(buf));
			if (rd == 0 ||
			    (rd < 0 && errno != EINTR && errno != EAGAIN))
				return;
		}
	}
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

struct load_args {
	unsigned long nthreads, per_proc, timeout;
	bool may_raise, ignore_stdin, publish;
};

/* 0, 1 after --help, -EINVAL for a bad usage. */
static int parse_args(int argc, char **argv, struct load_args *a)
{
	static const struct option lopts[] = {
		{"threads", required_argument, NULL, 'n'},
		{"per-process", required_argument, NULL, 't'},
		{"no-raise", no_argument, NULL, 'R'},
		{"ignore-stdin", no_argument, NULL, 'I'},
		{"publish", no_argument, NULL, 'P'},
		{"timeout", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	*a = (struct load_args){
		.per_proc = 100, .timeout = 300, .may_raise = true};
	while ((c = getopt_long(argc, argv, "n:t:h", lopts, NULL)) != -1) {
		if (c == 'n' && parse_ulong(optarg, 4000000, &a->nthreads) == 0)
			continue;
		if (c == 't' && parse_ulong(optarg, 1000000, &a->per_proc) == 0)
			continue;
		if (c == 'T' && parse_ulong(optarg, 86400, &a->timeout) == 0)
			continue;
		if (c == 'R')
			a->may_raise = false;
		else if (c == 'I')
			a->ignore_stdin = true;
		else if (c == 'P')
			a->publish = true;
		else if (c == 'h')
			return 1;
		else
			return -EINVAL;
	}
	return a->nthreads && optind == argc ? 0 : -EINVAL;
}

static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Fork the load processes, each with its share of the threads, into one
 * process group (*pgid); returns how many were forked, each in kids[]. */
static size_t fork_load(const struct load_args *a, size_t nkids, pid_t *kids,
			int pfd[2], pid_t *pgid)
{
	pid_t self = getpid();
	unsigned long left = a->nthreads;
	size_t forked = 0;

	for (; forked < nkids && !stop_sig; forked++) {
		unsigned long mine = left < a->per_proc ? left : a->per_proc;
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr,
				"ctp-bench-load: fork (process %zu of "
				"%zu): %s\n",
				forked + 1, nkids, strerror(errno));
			break;
		}
		if (pid == 0) {
			close(pfd[0]);
			child_main(pfd[1], mine, self, *pgid, a->publish);
		}
		/* Set the group from both sides so neither order races. */
		if (*pgid == 0)
			*pgid = pid;
		setpgid(pid, *pgid);
		kids[forked] = pid;
		left -= mine;
	}
	return forked;
}

int main(int argc, char **argv)
{
	struct load_args a;
	int r = parse_args(argc, argv, &a), rc = 1, pfd[2];

	if (r != 0) {
		usage(r == 1 ? stdout : stderr);
		return r == 1 ? 0 : 2;
	}
	catch_signals();
	if (check_limits(a.nthreads, a.per_proc, a.may_raise) < 0) {
		restore_sysctls();
		return 2;
	}
	size_t nkids = (a.nthreads + a.per_proc - 1) / a.per_proc, forked;
	pid_t *kids = calloc(nkids, sizeof(*kids)), pgid = 0;
	if (!kids || pipe2(pfd, O_CLOEXEC) < 0) {
		perror("ctp-bench-load");
		restore_sysctls();
		free(kids);
		return 1;
	}
	uint64_t t0 = now_ms();
	forked = fork_load(&a, nkids, kids, pfd, &pgid);
	close(pfd[1]);
	if (forked == nkids && !stop_sig) {
		long alive = wait_ready(pfd[0], nkids, (unsigned)a.timeout);
		if (alive >= 0) {
			fprintf(stderr,
				"ctp-bench-load: %ld threads in %zu processes "
				"ready in %.2fs\n",
				alive, nkids, (double)(now_ms() - t0) / 1e3);
			printf("ready %ld %zu %ld\n", alive, nkids, (long)pgid);
			fflush(stdout);
			hold(a.ignore_stdin);
			rc = 0;
		}
	}
	close(pfd[0]);
	teardown(pgid, kids, forked);
	restore_sysctls();
	free(kids);
	if (stop_sig && rc != 0)
		fprintf(stderr, "ctp-bench-load: interrupted\n");
	return rc;
}
