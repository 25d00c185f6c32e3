/*
 * ctprof-core selftest: whether the values a capture takes from per-task
 * sources (a BPF task iterator, taskstats replies) equal those its
 * plugins read from files, on this kernel, now.
 *
 * A child of known threads does some work (CPU, I/O, page faults, a
 * sleep) and then blocks, so its values stop moving. Three captures of
 * the host with the config's plugins: with the sources, with every
 * source hidden (each plugin on its files, engine.h sources_off), and
 * with the sources again. Per field, over the child's process and
 * threads, how many values the first two agree on; a value that moved
 * between the first and the third is the host's, not a source's, and is
 * not held against it.
 */
#include "capture_util.h"
#include "config.h"
#include "cpus.h"
#include "cli.h"
#include "engine.h"
#include "hostdiff.h" /* ctp_hostdiff_render: a value exactly */
#include "loader.h"
#include "log.h"
#include "model.h"
#include "reader.h"
#include "value.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define SNAP_BUDGET (1024ull << 20)

static const char usage[] =
	"Usage: ctprof-core selftest [--config FILE] [--threads N] [-v]\n"
	"Capture N quiescent threads (default 8) with the per-task sources "
	"and\n"
	"without (every plugin on its files), and print per field how many\n"
	"values are equal. Exit 0 when every compared value is, 1 when one is\n"
	"not, 2 on bad usage.\n";

static volatile sig_atomic_t st_stop;

/* ---- The quiescent child ------------------------------------------------- */

/* The n-th thread started narrows its CPU mask (cpus.h), so the affinity
 * a source gives is compared on masks of their own. */
static void narrow_affinity(void)
{
	static atomic_uint started;

	(void)ctp_cpus_spread(atomic_fetch_add(&started, 1) + 1);
}

/* Some of everything the plugins measure, then block on hold until the
 * parent ends the child. */
static void *busy_then_block(void *arg)
{
	int hold = (int)(intptr_t)arg;
	struct timespec t0, t;

	narrow_affinity();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do { /* ~3 ms of CPU */
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
		 3000000L);
	size_t len = 1u << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1; /* minor faults */
		munmap(p, len);
	}
	FILE *f = fopen("/dev/null", "we");
	if (f) {
		fwrite(&t, 1, sizeof(t), f);
		fclose(f);
	}
	nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	char c;
	while (read(hold, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* The child: n threads, then one byte on ready, then block. */
static void child_main(int n, int ready, int hold)
{
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < n - 1; i++)
		if (pthread_create(&t[i], NULL, busy_then_block,
				   (void *)(intptr_t)hold) != 0)
			_exit(1);
	/* The threads are blocked once they have slept; give them time to
	 * get there (a loaded host may be slow), then block too. */
	nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	char c;
	while (read(hold, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* ---- Captures ------------------------------------------------------------ */

/* One capture of eng (sources on or off) into memfd; its snapshot. */
static int capture_one(struct ctp_engine *eng, const struct ctp_config *cfg,
		       bool sources, struct ctp_snap **snap)
{
	char path[64], err[512];
	const char *what;
	int fd = memfd_create("ctprof-selftest", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	eng->sources_off = !sources;
	int r = ctp_cli_capture_again(eng, false, &what);
	if (r < 0) {
		fprintf(stderr, "ctprof-core selftest: %s: %s\n", what,
			strerror(-r));
		close(fd);
		return r;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = ctp_cli_write_to(eng->cap, cfg, path, &st_stop, NULL, false, err,
			     sizeof(err));
	if (r != 0) {
		fprintf(stderr, "ctprof-core selftest: writing: %s\n", err);
		close(fd);
		return -EIO;
	}
	lseek(fd, 0, SEEK_SET);
	r = ctp_snap_open_fd(fd, "selftest", SNAP_BUDGET, snap, err,
			     sizeof(err));
	close(fd);
	if (r < 0)
		fprintf(stderr, "ctprof-core selftest: %s\n", err);
	return r;
}

/* ---- Comparison ---------------------------------------------------------- */

static bool value_eq(const struct ctp_value *a, const struct ctp_value *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == CTP_VALUE_ABSENT)
		return true;
	return ctp_value_cmp(a, b) == 0;
}

/* The rows of the child's tasks in scope's table: [*lo, *hi). */
static void child_rows(const struct ctp_snap *s, uint8_t scope, pid_t pid,
		       size_t *lo, size_t *hi)
{
	const struct ctp_snap_table *t = ctp_snap_table(s, scope);
	long r = ctp_snap_row(t, (uint64_t)pid, 0);
	*lo = *hi = 0;
	if (r < 0)
		return;
	*lo = *hi = (size_t)r;
	while (*hi < t->rows && t->tgid[*hi] == (uint64_t)pid)
		(*hi)++;
}

struct tally {
	unsigned fields_equal, fields_differ, fields_moved, fields_one_side;
};

/* Captures in turn with the sources (even) and without (odd). */
#define N_CAPTURES 5

/* Whether the value of field `name` for task (pid, tid) is the same in
 * every snapshot of one parity; *v the first. False when a snapshot lacks
 * the field or the task. */
static bool steady(struct ctp_snap *const *s, unsigned parity, const char *name,
		   uint8_t scope, pid_t pid, uint64_t tid, struct ctp_value *v)
{
	bool first = true;
	for (unsigned i = parity; i < N_CAPTURES; i += 2) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s[i], name);
		long r = f && f->scope == scope
				 ? ctp_snap_row(ctp_snap_table(s[i], scope),
						(uint64_t)pid, tid)
				 : -1;
		if (r < 0)
			return false;
		struct ctp_value x = ctp_snap_get(s[i], f, (size_t)r);
		if (first)
			*v = x;
		else if (!value_eq(v, &x))
			return false;
		first = false;
	}
	return true;
}

/* One field over the child's rows of its scope. */
static void compare_field(struct ctp_snap *const *s,
			  const struct ctp_snap_field *fa, pid_t pid,
			  bool verbose, struct tally *tl)
{
	const struct ctp_snap_table *ta = ctp_snap_table(s[0], fa->scope);
	size_t lo, hi;
	unsigned equal = 0, n = 0, moved = 0, present = 0;
	char first[256] = "";

	for (unsigned i = 1; i < N_CAPTURES; i++) {
		const struct ctp_snap_field *f =
			ctp_snap_field_find(s[i], fa->name);
		if (!f || f->scope != fa->scope) {
			tl->fields_one_side++;
			if (verbose)
				printf("  %-40s only with the sources\n",
				       fa->name);
			return;
		}
	}
	child_rows(s[0], fa->scope, pid, &lo, &hi);
	for (size_t r = lo; r < hi; r++) {
		uint64_t tid = ta->tid ? ta->tid[r] : 0;
		struct ctp_value va, vb;
		bool sa = steady(s, 0, fa->name, fa->scope, pid, tid, &va);
		bool sb = steady(s, 1, fa->name, fa->scope, pid, tid, &vb);
		if (sa && sb && va.type == CTP_VALUE_ABSENT &&
		    vb.type == CTP_VALUE_ABSENT)
			continue;
		present++;
		if (!sa || !sb) {
			moved++;
			continue;
		}
		n++;
		if (value_eq(&va, &vb)) {
			equal++;
		} else if (!first[0]) {
			char xa[48], xb[48], who[32];
			ctp_hostdiff_render(&va, xa, sizeof(xa));
			ctp_hostdiff_render(&vb, xb, sizeof(xb));
			if (tid)
				snprintf(who, sizeof(who), "tid %" PRIu64, tid);
			else
				snprintf(who, sizeof(who), "the process");
			snprintf(first, sizeof(first),
				 "      %s: %s with the sources, %s from files",
				 who, xa, xb);
		}
	}
	if (!present)
		return; /* absent both ways: nothing to compare */
	if (n == 0) {
		tl->fields_moved++;
		if (verbose)
			printf("  %-40s moved while captured\n", fa->name);
		return;
	}
	if (equal == n)
		tl->fields_equal++;
	else
		tl->fields_differ++;
	if (verbose || equal != n)
		printf("  %-40s %3u of %3u equal%s\n", fa->name, equal, n,
		       moved ? " (some moved)" : "");
	if (first[0])
		printf("%s\n", first);
}

static int compare_all(struct ctp_snap *const *s, pid_t pid, bool verbose)
{
	const struct ctp_snap_field *f = ctp_snap_fields(s[0]);
	struct tally tl = {0};
	for (size_t i = 0; i < ctp_snap_n_fields(s[0]); i++) {
		if (f[i].n_terms || (f[i].scope != CTP_SCOPE_THREAD &&
				     f[i].scope != CTP_SCOPE_PROCESS))
			continue;
		compare_field(s, &f[i], pid, verbose, &tl);
	}
	printf("%u fields equal on every task, %u differ;\n"
	       "%u moved while captured, %u not compared (one way only)\n",
	       tl.fields_equal, tl.fields_differ, tl.fields_moved,
	       tl.fields_one_side);
	return tl.fields_differ ? CTP_EXIT_FAILURE : CTP_EXIT_OK;
}

/* The sources the loaded plugins offer, "name (plugin), ..." */
static void sources_line(const struct ctp_engine *eng, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < eng->n_sources && off < len; i++) {
		const struct ctp_source *s = &eng->sources[i];
		int w = snprintf(buf + off, len - off, "%s%s (%s%s)",
				 i ? ", " : "", s->name,
				 eng->cap->plugins[s->plugin].name,
				 s->walk ? ", walk" : "");
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* Fork the child of n threads and wait until they are blocked. Its pid
 * and the write end that holds it (*hold: close it to end the child), or
 * -1 after a message. */
static pid_t child_start(int n, int *hold)
{
	int ready[2], hp[2];
	if (pipe2(ready, O_CLOEXEC) < 0) {
		perror("ctprof-core selftest: pipe");
		return -1;
	}
	if (pipe2(hp, O_CLOEXEC) < 0) {
		perror("ctprof-core selftest: pipe");
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(hp[1]);
		child_main(n, ready[1], hp[0]);
	}
	close(ready[1]);
	close(hp[0]);
	char b;
	ssize_t got = pid < 0 ? -1 : read(ready[0], &b, 1);
	close(ready[0]);
	if (got == 1) {
		*hold = hp[1];
		return pid;
	}
	if (pid < 0) {
		perror("ctprof-core selftest: fork");
	} else {
		fprintf(stderr, "ctprof-core selftest: the child's threads "
				"did not start\n");
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(hp[1]);
	return -1;
}

/* The command line into *config_path, *nthreads and *verbose: -1 to go on,
 * else the exit status (help, a usage error). */
static int parse_args(int argc, char **argv, const char **config_path,
		      int *nthreads, bool *verbose)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"threads", required_argument, NULL, 't'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	char *end;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:t:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			*config_path = optarg;
			break;
		case 't':
			*nthreads = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || *nthreads < 1 ||
			    *nthreads > MAX_THREADS) {
				fprintf(stderr,
					"ctprof-core selftest: --threads: 1 "
					"to %d\n",
					MAX_THREADS);
				return CTP_EXIT_USAGE;
			}
			break;
		case 'v':
			*verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return CTP_EXIT_OK;
		default:
			fputs(usage, stderr);
			return CTP_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return CTP_EXIT_USAGE;
	}
	return -1;
}

int ctp_cmd_selftest(int argc, char **argv)
{
	const char *config_path = NULL;
	int nthreads = 8;
	bool verbose = false;
	int done = parse_args(argc, argv, &config_path, &nthreads, &verbose);
	if (done >= 0)
		return done;
	struct ctp_config *cfg = NULL;
	int rc = ctp_cli_load_config(config_path ? config_path
						 : ctp_cli_default_config(),
				     NULL, &cfg);
	if (rc != 0)
		return rc;

	/* The child first: it shares nothing the plugins open. */
	int hold = -1;
	pid_t pid = child_start(nthreads, &hold);
	if (pid < 0) {
		ctp_config_free(cfg);
		return CTP_EXIT_FAILURE;
	}
	struct ctp_capture *cap = NULL;
	struct ctp_engine eng;
	struct ctp_snap *snaps[N_CAPTURES] = {0};
	rc = CTP_EXIT_FAILURE;
	if (ctp_capture_new(1, &cap) < 0)
		goto out;
	if (ctp_engine_init(&eng, cfg, cap, &st_stop) < 0)
		goto done;
	if (ctp_engine_load(&eng) < 0) {
		fprintf(stderr, "ctprof-core selftest: loading plugins "
				"failed\n");
		goto done;
	}
	if (eng.n_sources == 0) {
		fprintf(stderr,
			"ctprof-core selftest: no loaded plugin offers a "
			"per-task source: nothing to compare (see "
			"`ctprof-core plugins`)\n");
		goto done;
	}
	char srcs[512];
	sources_line(&eng, srcs, sizeof(srcs));
	for (unsigned i = 0; i < N_CAPTURES; i++)
		if (capture_one(&eng, cfg, i % 2 == 0, &snaps[i]) < 0)
			goto done;
	printf("selftest: pid %d, %d quiescent threads; sources: %s\n"
	       "captured 3 times with them and 2 times without (every plugin "
	       "on "
	       "its files);\na value that moved within one way is not "
	       "compared\n",
	       (int)pid, nthreads, srcs);
	rc = compare_all(snaps, pid, verbose);
done:
	ctp_engine_unload(&eng);
	ctp_engine_done(&eng);
out:
	for (unsigned i = 0; i < N_CAPTURES; i++)
		ctp_snap_free(snaps[i]);
	ctp_capture_free(cap);
	close(hold); /* the child's threads read EOF and it ends */
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	ctp_config_free(cfg);
	return rc;
}
