/* SPDX-License-Identifier: MIT */
/*
 * The proof of issue 31 with a real Prometheus (Debian's, on loopback, a
 * temporary TSDB, scrape_interval 1s) scraping `serve` while a "build"
 * runs: a driver process named ctpb and the test's pid in letters (its
 * own group) forks, one after another, children that each burn a known
 * 50-150 ms of CPU and exit between scrapes, beside a thread of its own that
 * burns a little and renames itself again and again (prctl PR_SET_NAME); then
 * the driver exits. Over the run, sum(increase()) of the group's CPU counters
 * (user + system), evaluated at the last sample, equals the CPU the test
 * measured of the driver and its children (getrusage RUSAGE_CHILDREN)
 * within 5 %, and resets() of every counter family is 0. The children
 * live between scrapes: only their exit records (the taskstats plugin)
 * carry their CPU. The capture walks the host's /proc (taskstats
 * listens for exits only there). A recording of the run beside (record
 * --interval 1s), exported as OpenMetrics and backfilled by promtool into
 * a fresh TSDB, gives a Prometheus on it the same increase within 5 %.
 * Exits 77 without Prometheus, root (taskstats needs CAP_NET_ADMIN) or
 * exit events. What the test checks is CPU the children were given and
 * the counters' values, never the host's pace.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define SKIP	 77
#define BUILD_MS 6000 /* the build's CPU, about */
#define UT	 "ctprof_procfs_utime_seconds_total"
#define ST	 "ctprof_procfs_stime_seconds_total"

static char tmp[PATH_MAX];
static int skipped;
/* The build's name, and so its group: this run's own ("ctpb" and the
 * test's pid in letters: group names read digits as {N}). serve reads
 * the whole host, where another run of this test may build beside it:
 * under one shared name its build would be counted in this one's group. */
static char group[16];
/* PromQL selectors of the build's group: the time of its last sample;
 * the increase of its CPU (user + system) over the run; its samples;
 * its exited tasks. */
static char q_ts[128], q_inc[256], q_n[128], q_xt[128];

static double cpu_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Burn ms of this thread's CPU. */
static void burn_ms(unsigned ms)
{
	volatile uint64_t x = 0;
	double until = cpu_s(CLOCK_THREAD_CPUTIME_ID) + ms / 1000.0;
	while (cpu_s(CLOCK_THREAD_CPUTIME_ID) < until)
		x++;
}

static atomic_bool ren_stop;

/* The thread that renames itself: a few ms of CPU under each name. */
static void *renamer(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&ren_stop); i++) {
		char name[16];
		snprintf(name, sizeof(name), "ren%u", i % 1000);
		prctl(PR_SET_NAME, name);
		burn_ms(5);
		usleep(45000);
	}
	return NULL;
}

/* The build: after a byte on `go`, children of 50-150 ms each until
 * BUILD_MS of them, with the renaming thread beside; then it exits. */
static void driver(int go)
{
	char b;
	prctl(PR_SET_NAME, group);
	if (read(go, &b, 1) != 1)
		_exit(1);
	pthread_t th;
	if (pthread_create(&th, NULL, renamer, NULL) != 0)
		_exit(1);
	unsigned done = 0, seed = 31;
	while (done < BUILD_MS) {
		unsigned ms = 50 + (seed = seed * 1103515245u + 12345u) % 101;
		pid_t c = fork();
		if (c == 0) {
			/* Nice, so serve and Prometheus keep their pace. */
			setpriority(PRIO_PROCESS, 0, 10);
			burn_ms(ms);
			_exit(0);
		}
		if (c < 0)
			_exit(1);
		waitpid(c, NULL, 0);
		done += ms;
	}
	atomic_store(&ren_stop, true);
	pthread_join(th, NULL);
	_exit(0);
}

/* curl's output of a GET (query parameters url-encoded) into buf. The
 * query goes through a file: a series' labels may hold any byte. */
static bool curl(const char *url, const char *query, const char *at, char *buf,
		 size_t n)
{
	char cmd[4096], qf[PATH_MAX];
	assert_int_equal(E2E_PATHF(qf, "%s/query.txt", tmp), 0);
	if (query)
		assert_int_equal(e2e_write_file(qf, query, strlen(query)), 0);
	int w = snprintf(
		cmd, sizeof(cmd), "curl -sf --max-time 10 -G '%s'%s%s%s%s", url,
		query ? " --data-urlencode query@" : "", query ? qf : "",
		at ? " --data-urlencode time=" : "", at ? at : "");
	assert_true(w > 0 && (size_t)w < sizeof(cmd));
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	/* All of it read (curl fails on a closed pipe), the first n - 1
	 * bytes kept. */
	size_t len = 0, k;
	char rest[4096];
	while ((k = fread(len + 1 < n ? buf + len : rest, 1,
			  len + 1 < n ? n - 1 - len : sizeof(rest), p)) > 0)
		if (len + 1 < n)
			len += k;
	buf[len] = '\0';
	return pclose(p) == 0;
}

/* A PromQL instant query's first value (at `at`, NULL: now). */
static bool query(unsigned port, const char *promql, const char *at, double *v)
{
	char url[64], buf[1 << 16];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/query", port);
	if (!curl(url, promql, at, buf, sizeof(buf)))
		return false;
	const char *p = strstr(buf, "\"value\":[");
	return p && sscanf(p, "\"value\":[%*f,\"%lf\"", v) == 1;
}

/* A JSON object of label names and values at p (`{"k":"v",...}`, as the
 * API writes a series' labels) as a PromQL selector's `{k="v",...}` into
 * out (the values' escapes kept: PromQL reads them alike); the end of the
 * object, or NULL. */
static const char *json_labels(const char *p, char *out, size_t n)
{
	size_t w = 0;
	bool in = false, key = true, esc = false;
	if (*p != '{' || n < 3)
		return NULL;
	out[w++] = '{';
	for (p++; *p; p++) {
		char c = *p;
		if (in) {
			in = esc || c != '"';
			esc = !esc && c == '\\';
			if (!in && key)
				continue; /* a name's closing quote */
		} else if (c == '"') {
			in = true;
			if (key)
				continue; /* a name's opening quote */
		} else if (c == ':') {
			c = '=', key = false;
		} else if (c == ',') {
			key = true;
		} else if (c == '}') {
			break;
		}
		if (w + 2 >= n)
			return NULL;
		out[w++] = c;
	}
	if (*p != '}')
		return NULL;
	out[w++] = '}';
	out[w] = '\0';
	return p + 1;
}

/* The raw samples of a PromQL range selector at `at`: up to max of them,
 * their times and values; how many. */
static size_t samples_of(unsigned port, const char *sel, const char *at,
			 double *t, double *v, size_t max)
{
	static char buf[1 << 20];
	char url[64];
	size_t k = 0;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/query", port);
	if (!curl(url, sel, at, buf, sizeof(buf)))
		return 0;
	const char *p = strstr(buf, "\"values\":[");
	for (p = p ? p + 10 : NULL; p && k < max; k++) {
		if (sscanf(p, "[%lf,\"%lf\"]", &t[k], &v[k]) != 2)
			break;
		p = strchr(p, ']');
		p = p && p[1] == ',' ? p + 2 : NULL;
	}
	return k;
}

/* What makes a failed resets() diagnosable: each series of family name
 * that reset (its whole label set), its raw samples around each drop
 * (the range selector gives them as scraped: a query_range would give
 * them resampled) and whether serve's scrape was up beside them. */
static void show_resets(unsigned port, const char *name, const char *at)
{
	static char buf[1 << 18];
	char url[64], promql[512];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/query", port);
	snprintf(promql, sizeof(promql), "resets(%s[10m]) > 0", name);
	if (!curl(url, promql, at, buf, sizeof(buf))) {
		fprintf(stderr, "  (%s: the query failed)\n", promql);
		return;
	}
	enum { MAX = 4096 };
	static double t[MAX], v[MAX], ut[MAX], uv[MAX];
	size_t nu =
		samples_of(port, "up{job=\"ctprof\"}[10m]", at, ut, uv, MAX);
	size_t shown = 0, more = 0;
	for (const char *p = strstr(buf, "\"metric\":"); p;
	     p = strstr(p, "\"metric\":")) {
		if (shown == 8) { /* enough to tell what it was */
			more++;
			p += 9;
			continue;
		}
		shown++;
		char labels[4096], sel[4096 + 300];
		const char *end = json_labels(p + 9, labels, sizeof(labels));
		if (!end) {
			fprintf(stderr, "  (a series' labels unread: %.200s)\n",
				p);
			return;
		}
		p = end;
		snprintf(sel, sizeof(sel), "%s%s[10m]", name, labels);
		size_t n = samples_of(port, sel, at, t, v, MAX);
		fprintf(stderr, "  reset: %s%s, %zu samples\n", name, labels,
			n);
		for (size_t i = 1; i < n; i++) {
			if (v[i] >= v[i - 1])
				continue;
			size_t lo = i >= 4 ? i - 4 : 0,
			       hi = i + 4 < n ? i + 4 : n - 1;
			fprintf(stderr, "    the drop at sample %zu:\n", i);
			for (size_t j = lo; j <= hi; j++) {
				const char *up = "?";
				for (size_t u = 0; u < nu; u++)
					if (fabs(ut[u] - t[j]) < 0.0005)
						up = uv[u] == 1 ? "up" : "down";
				fprintf(stderr,
					"    %c %.3f %.17g (scrape %s)\n",
					j == i ? '>' : ' ', t[j], v[j], up);
			}
		}
	}
	if (more)
		fprintf(stderr, "  and %zu more series of %s reset\n", more,
			name);
}

static double now_s(void)
{
	return cpu_s(CLOCK_REALTIME);
}

/* The recording at dir exported as OpenMetrics, backfilled by promtool
 * into a fresh TSDB, and a Prometheus on it: the build group's CPU
 * increase there, at its last sample; NAN when a step failed (said). */
static double backfill_increase(const char *dir)
{
	char om[PATH_MAX], blocks[PATH_MAX], yml[PATH_MAX], plog[PATH_MAX],
		cmd[4 * PATH_MAX];
	assert_int_equal(E2E_PATHF(om, "%s/rec.om", tmp), 0);
	assert_int_equal(E2E_PATHF(blocks, "%s/blocks", tmp), 0);
	assert_int_equal(E2E_PATHF(yml, "%s/empty.yml", tmp), 0);
	assert_int_equal(E2E_PATHF(plog, "%s/backfill.log", tmp), 0);
	const char *args[] = {"export", dir, "--format", "openmetrics",
			      "-o",	om,  NULL};
	if (e2e_run(args, NULL, NULL) != 0) {
		fprintf(stderr, "export of the recording failed\n");
		return NAN;
	}
	snprintf(cmd, sizeof(cmd),
		 "promtool tsdb create-blocks-from openmetrics %s %s "
		 ">%s 2>&1",
		 om, blocks, plog);
	if (system(cmd) != 0) {
		e2e_show_file("promtool", plog);
		return NAN;
	}
	assert_int_equal(e2e_write_file(yml, "global: {}\n", 11), 0);
	unsigned port = e2e_free_port();
	pid_t p = e2e_prometheus_start(yml, blocks, plog, port);
	double ts = NAN, inc = NAN, t_end = now_s() + 60;
	while (now_s() < t_end && !query(port, q_ts, NULL, &ts))
		usleep(250000);
	char at[64];
	snprintf(at, sizeof(at), "%.3f", ts);
	if (!isnan(ts))
		query(port, q_inc, at, &inc);
	int st;
	kill(p, SIGTERM);
	e2e_wait(p, &st);
	e2e_started_done(p);
	if (isnan(inc))
		e2e_show_file("prometheus on the backfill", plog);
	return inc;
}

static void test_build(void **state)
{
	(void)state;
	char yaml[3 * PATH_MAX], cfg[PATH_MAX], log[PATH_MAX], plog[PATH_MAX],
		buf[1 << 16];
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t drv = fork();
	assert_true(drv >= 0);
	if (drv == 0) {
		close(go[1]);
		driver(go[0]);
	}
	close(go[0]);
	e2e_started_add(drv);
	/* The host's /proc: taskstats listens for exits only on the live
	 * procfs of its kernel. */
	int n = snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\"]\n"
			 "plugins:\n  procfs-stat: {}\n  taskstats: {}\n",
			 CTP_TEST_PLUGIN_DIR);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(log, "%s/serve.log", tmp), 0);
	assert_int_equal(e2e_write_file(cfg, yaml, (size_t)n), 0);
	unsigned port, pport = e2e_free_port();
	const char *args[] = {"serve",	  "--config",	 cfg,
			      "--listen", "127.0.0.1:0", "--min-interval",
			      "500ms",	  "--top",	 "20",
			      NULL};
	pid_t srv = e2e_serve_start(args, log, "http", &port);
	/* The exit events need the taskstats plugin loaded (root, the
	 * family): else there is nothing to prove. */
	char cmd[256];
	snprintf(cmd, sizeof(cmd),
		 "curl -sf --max-time 10 http://127.0.0.1:%u/metrics | grep -a "
		 "'^ctprof_collector_info{plugin=\"taskstats\",'",
		 port);
	FILE *info = popen(cmd, "r");
	assert_non_null(info);
	size_t got_n = fread(buf, 1, sizeof(buf) - 1, info);
	buf[got_n] = '\0';
	pclose(info);
	if (!strstr(buf, "status=\"loaded\"")) {
		fprintf(stderr, "skipped: the taskstats plugin did not load "
				"(exit events need root and its netlink "
				"family)\n");
		skipped = 1;
		return;
	}
	assert_int_equal(E2E_PATHF(plog, "%s/prometheus.log", tmp), 0);
	pid_t p = e2e_prometheus_scrape(tmp, port, pport);
	/* A scrape before the build: the series' start. */
	double v, t_end = now_s() + 60;
	while (now_s() < t_end &&
	       !(query(pport, "count(up{job=\"ctprof\"} == 1)", NULL, &v) &&
		 v == 1))
		usleep(200000);
	/* A recording of the run beside, to backfill afterwards. */
	char rdir[PATH_MAX];
	assert_int_equal(E2E_PATHF(rdir, "%s/rec", tmp), 0);
	const char *rargs[] = {"record", "--config",   cfg,  "-o",
			       rdir,	 "--interval", "1s", NULL};
	pid_t rec;
	assert_int_equal(e2e_spawn(rargs, NULL, NULL, &rec), 0);
	e2e_started_add(rec);
	usleep(1500000); /* its first file before the build */
	struct rusage before, after;
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &before), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	int st;
	assert_int_equal(e2e_wait(drv, &st), 0);
	e2e_started_done(drv);
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &after), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	double exited = now_s();
	double want =
		(double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
		(double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
		(double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) *
			1e-6 +
		(double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) *
			1e-6;
	/* Until Prometheus holds two samples taken after the driver ended
	 * (the first has its exit record), at most 60 s. */
	double ts = NAN;
	t_end = now_s() + 60;
	while (now_s() < t_end) {
		if (query(pport, q_ts, NULL, &ts) && ts > exited + 1.5)
			break;
		usleep(250000);
	}
	char at[64];
	snprintf(at, sizeof(at), "%.3f", ts);
	double inc = NAN, resets = 0, xt = 0, samples = NAN, exits = 0;
	bool got = query(pport, q_inc, at, &inc) &&
		   query(pport, q_n, at, &samples);
	/* Exit events the plugin took over the run, and those the series
	 * counted in the build's group (none before the series). */
	query(pport,
	      "sum(sum_over_time(ctprof_collector_stat{plugin=\"taskstats\","
	      "name=\"exits\"}[10m]))",
	      at, &exits);
	query(pport, q_xt, at, &xt);
	/* resets() of each counter family in turn (over several at once
	 * it would drop their names and clash). */
	char names[1 << 16], u[96];
	size_t families = 0;
	snprintf(u, sizeof(u),
		 "http://127.0.0.1:%u/api/v1/label/__name__/values", pport);
	got = got && curl(u, NULL, NULL, names, sizeof(names));
	for (char *q = got ? strstr(names, "\"ctprof_") : NULL; q;
	     q = strstr(q, "\"ctprof_")) {
		char name[256], promql[400];
		char *end = strchr(q + 1, '"');
		if (!end)
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(end - q - 1), q + 1);
		q = end + 1;
		size_t l = strlen(name);
		if (l < 6 || strcmp(name + l - 6, "_total") != 0)
			continue;
		snprintf(promql, sizeof(promql), "sum(resets(%s[10m]))", name);
		double r;
		if (!query(pport, promql, at, &r)) {
			got = false;
			break;
		}
		families++;
		if (r != 0) {
			fprintf(stderr, "%s: %.0f resets\n", name, r);
			show_resets(pport, name, at);
		}
		resets += r;
	}
	if (resets != 0) {
		/* Samples Prometheus dropped (two of one series in a scrape,
		 * one older than the series' last), and serve's log (an HTTP
		 * process started again starts its counters again). */
		snprintf(cmd, sizeof(cmd),
			 "curl -sf --max-time 10 http://127.0.0.1:%u/metrics | "
			 "grep -a '^prometheus_target_scrapes_sample_' >&2",
			 pport);
		if (system(cmd) != 0)
			fprintf(stderr, "(Prometheus' own counters unread)\n");
		e2e_show_file("serve", log);
	}
	kill(p, SIGTERM);
	e2e_wait(p, &st);
	e2e_started_done(p);
	kill(srv, SIGTERM);
	e2e_wait(srv, &st);
	e2e_started_done(srv);
	kill(rec, SIGTERM);
	e2e_wait(rec, &st);
	e2e_started_done(rec);
	double back = got ? backfill_increase(rdir) : NAN;
	if (!got) {
		e2e_show_file("prometheus", plog);
		e2e_show_file("serve", log);
		fail_msg("Prometheus has no samples of the build");
	}
	printf("build: %.3f s of CPU by getrusage, increase() %.3f s "
	       "(%+.2f %%) over %.0f samples; %.0f exited tasks counted "
	       "(%.0f exit events); resets() over %zu counter families "
	       "%.0f; the recording backfilled by promtool: increase() "
	       "%.3f s (%+.2f %%)\n",
	       want, inc, (inc - want) / want * 100, samples, xt, exits,
	       families, resets, back, (back - want) / want * 100);
	if (exits == 0) {
		fprintf(stderr, "skipped: no exit event arrived (taskstats)\n");
		skipped = 1;
		return;
	}
	assert_true(fabs(inc - want) <= 0.05 * want);
	assert_true(xt > 0);
	assert_true(families > 0);
	assert_true(resets == 0);
	assert_true(fabs(back - want) <= 0.05 * want);
}

static int setup(void **state)
{
	(void)state;
	if (access("/usr/bin/prometheus", X_OK) != 0 ||
	    system("curl --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skipped: no /usr/bin/prometheus or curl "
				"(Debian's prometheus and curl packages)\n");
		exit(SKIP);
	}
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: needs root (taskstats exit events "
				"need CAP_NET_ADMIN)\n");
		exit(SKIP);
	}
	memcpy(group, "ctpb", 4);
	for (unsigned k = 4, pid = (unsigned)getpid(); k < 4 + 7;
	     k++, pid /= 26)
		group[k] = (char)('a' + pid % 26);
	snprintf(q_ts, sizeof(q_ts), "timestamp(" UT "{group=\"%s\"})", group);
	snprintf(q_inc, sizeof(q_inc),
		 "sum(increase(" UT "{group=\"%s\"}[10m])) + "
		 "sum(increase(" ST "{group=\"%s\"}[10m]))",
		 group, group);
	snprintf(q_n, sizeof(q_n), "count_over_time(" UT "{group=\"%s\"}[10m])",
		 group);
	snprintf(q_xt, sizeof(q_xt),
		 "sum(ctprof_exited_tasks_total{group=\"%s\"})", group);
	return e2e_tmpdir("series_prom", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	e2e_started_stop_all();
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
	};
	int r = cmocka_run_group_tests(tests, setup, teardown);
	return r == 0 && skipped ? SKIP : r;
}
