/* SPDX-License-Identifier: MIT */
/*
 * One engine taking capture after capture, as `record` and `serve` keep
 * one (issue 29): the built taskstats.so and procfs-stat.so (affinity
 * from sched_getaffinity, so it keeps per-worker buffers) loaded by the
 * real loader, 300 captures of the live /proc of a pid namespace of the
 * test's own (e2e_in_own_proc), where this process and a crowd of 64
 * sleeping threads are all there is (the walk is the test's, however many
 * tasks the host runs beside it: 30,000 threads made 600 captures outlast
 * the 300 s limit; split in chunks of 8 threads, so both workers walk).
 * With workers: 2 the
 * engine's own threads walk; with workers: 1 the walk runs on the calling
 * thread, here a new pthread for every capture (as a server's connection
 * threads are). With two, the engine's threads are started once: after
 * capture 20 and after capture 300 the process has the same two threads
 * besides this one, parked, blocking every signal but the fatal ones,
 * and none once the engine is done. Either way the process's open
 * descriptors after capture
 * 300 are those after capture 20, and its anonymous resident memory
 * (RssAnon) grows by at most 8 MiB between them: a worker state left
 * behind per capture is a netlink socket and about 160 KiB of taskstats
 * buffers, over 40 MiB in 280 captures. Skipped (77) without
 * root (the namespaces), a TASKSTATS family or CAP_NET_ADMIN (no query
 * is answered, so no
 * socket is kept), and the RssAnon bound under a sanitizer, whose
 * allocator keeps freed memory on purpose.
 */
#include <dirent.h>
#include <errno.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "e2e_util.h"
#include "engine.h"
#include "loader.h"
#include "model.h"
#include "sanitizer.h"

#define CAPTURES 300
#define MAX_TIDS 16
#define CROWD	 64 /* sleeping threads of the second process walked */

static pid_t crowd;

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}
#define WARM	20
#define RSS_KIB (8 * 1024)

struct soak {
	struct ctp_config cfg;
	struct ctp_plugin_cfg pcfg[2];
	struct ctp_kv aff;
	char *dirs[1];
	struct ctp_capture *cap;
	struct ctp_engine eng;
};

static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* The number after `key` in a status file, in `base`. */
static uint64_t status_field(const char *path, const char *key, int base)
{
	char buf[4096], *p;
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, key);
	assert_non_null(p);
	return strtoull(p + strlen(key), NULL, base);
}

static uint64_t rss_anon_kib(void)
{
	return status_field("/proc/self/status", "\nRssAnon:", 10);
}

/* The process's threads but this one, in tids[] (at most max); how many. */
static size_t other_threads(pid_t *tids, size_t max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;
	pid_t me = (pid_t)syscall(SYS_gettid);

	assert_non_null(d);
	while ((e = readdir(d))) {
		pid_t t = (pid_t)atoi(e->d_name);
		if (t > 0 && t != me && n < max)
			tids[n++] = t;
		else if (t > 0 && t != me)
			n++;
	}
	closedir(d);
	qsort(tids, n < max ? n : max, sizeof(*tids), cmp_tid);
	return n;
}

/* Thread tid's blocked signals (SigBlk of its status). */
static uint64_t blocked(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	return status_field(path, "\nSigBlk:", 16);
}

#define SIGBIT(s) (1ull << ((s)-1))

static void soak_start(struct soak *s, unsigned workers)
{
	memset(s, 0, sizeof(*s));
	s->aff = (struct ctp_kv){
		.key = "affinity", .value = "syscall", .line = 1, .col = 1};
	s->pcfg[0] = (struct ctp_plugin_cfg){.name = "taskstats", .enabled = 1};
	s->pcfg[1] = (struct ctp_plugin_cfg){.name = "procfs-stat",
					     .enabled = 1,
					     .opts = &s->aff,
					     .n_opts = 1};
	s->dirs[0] = CTP_TEST_PLUGIN_DIR;
	s->cfg.plugin_dirs = s->dirs;
	s->cfg.n_plugin_dirs = 1;
	s->cfg.workers = workers;
	s->cfg.split_threads = 8;
	s->cfg.plugins = s->pcfg;
	s->cfg.n_plugins = 2;
	/* The build tree may be group-writable; the tests do not check it. */
	s->cfg.allow_insecure_plugins = 1;
	assert_int_equal(ctp_capture_new(workers, &s->cap), 0);
	assert_int_equal(ctp_engine_init(&s->eng, &s->cfg, s->cap, NULL), 0);
	assert_int_equal(ctp_engine_load(&s->eng), 0);
	for (uint32_t i = 0; i < s->cap->n_plugins; i++)
		if (s->cap->plugins[i].status != CTP_PST_LOADED)
			fail_msg("plugin %s not loaded: %s",
				 s->cap->plugins[i].name,
				 s->cap->plugins[i].reason
					 ? s->cap->plugins[i].reason
					 : "");
}

static void soak_stop(struct soak *s)
{
	pid_t tids[MAX_TIDS];

	ctp_engine_done(&s->eng);
	ctp_capture_free(s->cap);
	assert_int_equal(other_threads(tids, MAX_TIDS), 0);
}

/* A summary counter of a plugin after the last capture. */
static uint64_t summary(const struct soak *s, const char *plugin,
			const char *name)
{
	for (uint32_t i = 0; i < s->cap->n_plugins; i++) {
		const struct ctp_plugin_info *p = &s->cap->plugins[i];
		if (strcmp(p->name, plugin) != 0)
			continue;
		for (uint32_t c = 0; c < p->n_summary; c++)
			if (strcmp(p->summary_name[c], name) == 0)
				return atomic_load(&p->summary[c]);
	}
	fail_msg("no counter %s of %s", name, plugin);
	return 0;
}

static int capture_once(struct soak *s)
{
	int r = ctp_engine_rearm(&s->eng);
	return r < 0 ? r : ctp_engine_capture(&s->eng);
}

struct on_thread {
	struct soak *s;
	int ret;
};

static void *capture_main(void *arg)
{
	struct on_thread *t = arg;
	t->ret = capture_once(t->s);
	return NULL;
}

/* Capture i (from 1) of s: on a thread of its own when `fresh`. */
static void capture(struct soak *s, bool fresh, int i)
{
	struct on_thread t = {s, 0};
	pthread_t th;

	if (fresh) {
		assert_int_equal(pthread_create(&th, NULL, capture_main, &t),
				 0);
		assert_int_equal(pthread_join(th, NULL), 0);
	} else {
		capture_main(&t);
	}
	if (t.ret < 0)
		fail_msg("capture %d: %s", i, strerror(-t.ret));
}

static void run(unsigned workers, bool fresh)
{
	struct soak s;
	size_t fds_warm = 0, fds_end, n_warm = 0, n_end;
	uint64_t rss_warm = 0, rss_end;
	pid_t warm[MAX_TIDS], end[MAX_TIDS];

	soak_start(&s, workers);
	for (int i = 1; i <= CAPTURES; i++) {
		capture(&s, fresh, i);
		if (i == 1 && summary(&s, "taskstats", "ok") == 0) {
			soak_stop(&s);
			fprintf(stderr, "skip: taskstats answered no query "
					"(it needs the TASKSTATS genetlink "
					"family and CAP_NET_ADMIN)\n");
			exit(77);
		}
		if (i == WARM) {
			fds_warm = open_fds();
			rss_warm = rss_anon_kib();
			n_warm = other_threads(warm, MAX_TIDS);
			for (int t = 0;
			     t < 100 && n_warm != (workers > 1 ? workers : 0);
			     t++) {
				usleep(10000);
				n_warm = other_threads(warm, MAX_TIDS);
			}
		}
	}
	fds_end = open_fds();
	rss_end = rss_anon_kib();
	/* A thread just joined may still be listed for a moment (the kernel
	 * reaps it after it woke its joiner): a second at most, on a busy
	 * host, for the list to settle. */
	n_end = other_threads(end, MAX_TIDS);
	for (int t = 0; t < 100 && n_end != (workers > 1 ? workers : 0); t++) {
		usleep(10000);
		n_end = other_threads(end, MAX_TIDS);
	}
	/* The walk's threads: none with one worker (it runs on the caller),
	 * else the same ones throughout. */
	assert_int_equal(n_warm, workers > 1 ? workers : 0);
	assert_int_equal(n_end, n_warm);
	for (size_t k = 0; k < n_end; k++) {
		uint64_t m = blocked(end[k]);
		assert_int_equal(end[k], warm[k]);
		assert_true(m & SIGBIT(SIGINT) && m & SIGBIT(SIGTERM) &&
			    m & SIGBIT(SIGHUP) && m & SIGBIT(SIGALRM));
		assert_false(m & (SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) |
				  SIGBIT(SIGABRT)));
	}
	printf("workers %u%s: after capture %d: %zu fds, RssAnon %" PRIu64
	       " KiB; after %d: %zu fds, RssAnon %" PRIu64 " KiB\n",
	       workers, fresh ? " (a new thread per capture)" : "", WARM,
	       fds_warm, rss_warm, CAPTURES, fds_end, rss_end);
	soak_stop(&s);
	assert_int_equal(fds_end, fds_warm);
	if (!CTP_TEST_ASAN && rss_end > rss_warm + RSS_KIB)
		fail_msg("RssAnon grew from %" PRIu64 " to %" PRIu64 " KiB",
			 rss_warm, rss_end);
}

/* The engine's own two workers. */
static void test_two_workers(void **state)
{
	(void)state;
	run(2, false);
}

/* One worker: the walk on the calling thread, a new one each capture. */
static void test_new_thread_each(void **state)
{
	(void)state;
	run(1, true);
}

static int setup(void **state)
{
	(void)state;
	crowd = e2e_crowd(CROWD, "ctp-crowd");
	return crowd > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (crowd > 0) {
		kill(crowd, SIGKILL);
		waitpid(crowd, NULL, 0);
	}
	return 0;
}

static int run_group(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_workers),
		cmocka_unit_test(test_new_thread_each),
	};
	return cmocka_run_group_tests(tests, setup, teardown) ? 1 : 0;
}

int main(void)
{
	return e2e_in_own_proc(run_group);
}
