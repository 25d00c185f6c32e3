/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core serve` (core/cli/serve.c), the exporter mode: on the
 * fixture tree, over real HTTP (a plain socket client here, libmicrohttpd
 * there), the status codes, content negotiation, the rate limit, a slow
 * client that holds nothing up, and a clean SIGTERM; then, live, a real
 * Prometheus server (Debian's prometheus, on loopback, a temporary config
 * and data directory) scraping it every second: the CPU of a process of 8
 * burning threads that Prometheus stored, from its first sample (serve's
 * counters start at its first capture) to a later one, equals what the
 * test measured of itself between them, and rate() over it is the
 * burned rate. The live
 * capture walks this process only (e2e_proc_root), so a scrape does not
 * grow with the host.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define FIX_PROC CTP_TEST_FIXTURES "/proc"
#define FIX_SYS	 CTP_TEST_FIXTURES "/sys"
/* serve on the fixture tree. */
#define FIXTURE_YAML                                                           \
	"plugin_dirs: [\"" CTP_TEST_PLUGIN_DIR "\"]\n"                         \
	"roots: {proc: \"" FIX_PROC "\", sys: \"" FIX_SYS "\"}\n"              \
	"plugins:\n  procfs-stat: {}\n"

static char tmp[PATH_MAX];
/* Start serve with config yaml and extra args; its port in *port. */
static pid_t start_serve(const char *yaml, const char *const *extra,
			 unsigned *port)
{
	char cfg[PATH_MAX], log[PATH_MAX];
	const char *args[24] = {"serve", "--config", cfg, "--listen",
				"127.0.0.1:0"};
	size_t n = 5;
	assert_int_equal(E2E_PATHF(cfg, "%s/c.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(log, "%s/serve.log", tmp), 0);
	assert_int_equal(e2e_write_file(cfg, yaml, strlen(yaml)), 0);
	for (; extra && *extra && n < 23; extra++)
		args[n++] = *extra;
	args[n] = NULL;
	return e2e_serve_start(args, log, "http", port);
}

static int connect_to(unsigned port)
{
	return e2e_connect_loopback(port);
}

/* One request; the whole response (status line, headers, body) in *out,
 * the status as the return. */
static int http(unsigned port, const char *method, const char *path,
		const char *accept, char **out)
{
	int fd = connect_to(port);
	char req[512];
	*out = NULL;
	if (fd < 0)
		return -1;
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%s"
			 "Connection: close\r\n\r\n",
			 method, path, accept ? "Accept: " : "",
			 accept ? accept : "", accept ? "\r\n" : "");
	assert_int_equal(write(fd, req, (size_t)n), n);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	for (ssize_t r; (r = read(fd, buf + len, cap - len - 1)) > 0;) {
		len += (size_t)r;
		if (len + 1 == cap)
			assert_non_null(buf = realloc(buf, cap *= 2));
	}
	buf[len] = '\0';
	close(fd);
	int status = 0;
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &status), 1);
	*out = buf;
	return status;
}

/* A request as raw bytes; the status of the answer (-1: none). */
static int raw(unsigned port, const char *req)
{
	int fd = connect_to(port), status = -1;
	char buf[256];
	size_t len = 0;
	if (fd < 0)
		return -1;
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	for (ssize_t r; len + 1 < sizeof(buf) &&
			(r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0;)
		len += (size_t)r;
	buf[len] = '\0';
	close(fd);
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		status = -1;
	return status;
}

static double capture_time(const char *resp)
{
	const char *p = strstr(resp, "\nctprof_capture_timestamp_seconds ");
	assert_non_null(p);
	return strtod(p + strlen("\nctprof_capture_timestamp_seconds "), NULL);
}

static void stop(pid_t pid)
{
	int st;
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(e2e_wait(pid, &st), 0);
	e2e_started_done(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char log[PATH_MAX];
		assert_int_equal(E2E_PATHF(log, "%s/serve.log", tmp), 0);
		e2e_show_file("serve", log);
	}
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_http(void **state)
{
	char *resp;
	(void)state;
	const char *extra[] = {"--min-interval", "30s", NULL};
	unsigned port;
	pid_t pid = start_serve(FIXTURE_YAML, extra, &port);
	assert_int_equal(http(port, "GET", "/", NULL, &resp), 200);
	assert_non_null(strstr(resp, "href=\"metrics\""));
	free(resp);
	assert_int_equal(http(port, "GET", "/nope", NULL, &resp), 404);
	free(resp);
	assert_int_equal(http(port, "POST", "/metrics", NULL, &resp), 405);
	assert_non_null(strstr(resp, "\r\nAllow: GET, HEAD\r\n"));
	free(resp);
	/* A client that connects and says nothing holds only its thread. */
	int slow = connect_to(port);
	assert_true(slow >= 0);
	assert_int_equal(http(port, "GET", "/metrics", NULL, &resp), 200);
	assert_non_null(strstr(resp, "\r\nContent-Type: text/plain; "
				     "version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(resp, "\n# TYPE ctprof_procfs_utime_seconds_"
				     "total counter\n"));
	assert_null(strstr(resp, "# EOF"));
	double t0 = capture_time(resp);
	free(resp);
	/* OpenMetrics when asked; inside --min-interval, the same capture. */
	assert_int_equal(http(port, "GET", "/metrics",
			      "application/openmetrics-text; version=1.0.0, "
			      "text/plain;q=0.5",
			      &resp),
			 200);
	assert_non_null(strstr(resp, "\r\nContent-Type: application/"
				     "openmetrics-text; version=1.0.0; "
				     "charset=utf-8\r\n"));
	assert_non_null(strstr(resp, "\n# EOF\n"));
	assert_true(capture_time(resp) == t0);
	free(resp);
	close(slow);
	stop(pid);
}

/* The protocol as written (RFC 9112): a request without Host, with two,
 * with Content-Length values that differ or beside Transfer-Encoding is
 * refused; a scrape as Prometheus sends it works. With -v a line per
 * capture, naming no file (the capture's memory file is no file of the
 * user's). */
static void test_strict(void **state)
{
	char *resp, log[PATH_MAX];
	(void)state;
	const char *extra[] = {"-v", NULL};
	unsigned port;
	pid_t pid = start_serve(FIXTURE_YAML, extra, &port);
	static const struct {
		const char *req;
		int status;
	} c[] = {
		{"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n", 400},
		{"GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n"
		 "Connection: close\r\n\r\n",
		 400},
		{"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
		 "Content-Length: 6\r\nConnection: close\r\n\r\nhello!",
		 400},
		{"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
		 "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
		 "0\r\n\r\n",
		 400},
		{"GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
		 "\r\n",
		 200},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int st = raw(port, c[i].req);
		if (st != c[i].status)
			fail_msg("%d, expected %d, for:\n%s", st, c[i].status,
				 c[i].req);
	}
	assert_int_equal(http(port, "GET", "/metrics", NULL, &resp), 200);
	free(resp);
	stop(pid);
	size_t len;
	assert_int_equal(E2E_PATHF(log, "%s/serve.log", tmp), 0);
	assert_int_equal(e2e_read_file(log, &resp, &len), 0);
	if (!strstr(resp, "ctprof-core serve: a capture: ") ||
	    strstr(resp, "/proc/self/fd/"))
		fail_msg("serve -v said:\n%s", resp);
	free(resp);
}

/* A bad --listen is a usage error. */
static void test_usage(void **state)
{
	(void)state;
	const char *bad[] = {"serve", "--listen", "nowhere", NULL};
	assert_int_equal(e2e_run(bad, NULL, NULL), 2);
	const char *op[] = {"serve", "extra-operand", NULL};
	assert_int_equal(e2e_run(op, NULL, NULL), 2);
}

/* Whether the dynamic linker's log of a run (LD_DEBUG=files) has the
 * library `soname` (a prefix of it) loaded, as needed or dlopen'ed. */
static bool loaded_lib(const char *log, const char *soname)
{
	char what[64];
	snprintf(what, sizeof(what), "file=%s", soname);
	return strstr(log, what) != NULL;
}

/* serve's HTTP and TLS libraries (core/cli/httplib.h) are loaded by serve
 * alone: a one-shot capture maps none of them, or of what they need;
 * serve, up to reading its --web-config, has all three. */
static void test_serve_libs(void **state)
{
	(void)state;
	char cfg[PATH_MAX], out[PATH_MAX], err[PATH_MAX], *log = NULL;
	size_t len;
	const char *libs[] = {"libmicrohttpd", "libgnutls", "libcrypt",
			      "libp11-kit", "libnettle"};
	assert_int_equal(E2E_PATHF(cfg, "%s/libs.yaml", tmp), 0);
	assert_int_equal(E2E_PATHF(out, "%s/libs.zst", tmp), 0);
	assert_int_equal(E2E_PATHF(err, "%s/libs.err", tmp), 0);
	assert_int_equal(
		e2e_write_file(cfg, FIXTURE_YAML, strlen(FIXTURE_YAML)), 0);
	assert_int_equal(setenv("LD_DEBUG", "files", 1), 0);
	const char *cap[] = {"--config", cfg, "-o", out, NULL};
	int rc = e2e_run(cap, NULL, err);
	const char *srv[] = {"serve",
			     "--config",
			     cfg,
			     "--web-config",
			     "/nonexistent/web.yaml",
			     NULL};
	char *slog = NULL;
	int src = -1;
	if (rc == 0 && e2e_read_file(err, &log, &len) == 0) {
		src = e2e_run(srv, NULL, err);
		assert_int_equal(e2e_read_file(err, &slog, &len), 0);
	}
	unsetenv("LD_DEBUG");
	assert_int_equal(rc, 0);
	assert_non_null(log);
	/* The control: the log names what serve loads. */
	assert_int_equal(src, 2);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (loaded_lib(log, libs[i]))
			fail_msg("a capture loaded %s", libs[i]);
		if (i < 3 && !loaded_lib(slog, libs[i]))
			fail_msg("serve did not load %s", libs[i]);
	}
	free(log);
	free(slog);
}

/* ---- A real Prometheus server ------------------------------------------ */

#define BURNERS 8
static atomic_bool burn_stop;

static void *burn(void *arg)
{
	(void)arg;
	volatile uint64_t x = 0;
	/* Nice, so Prometheus and serve scrape on time beside them. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	while (!atomic_load_explicit(&burn_stop, memory_order_relaxed))
		x++;
	return NULL;
}

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This process's CPU (s) at realtime instants, every 50 ms. */
#define MAX_MARKS 4096
static double mark_t[MAX_MARKS], mark_cpu[MAX_MARKS];
static size_t n_marks;

static void mark(void)
{
	if (n_marks < MAX_MARKS) {
		mark_t[n_marks] = now_s(CLOCK_REALTIME);
		mark_cpu[n_marks++] = now_s(CLOCK_PROCESS_CPUTIME_ID);
	}
}

/* Our CPU at realtime t, by the marks around it. */
static double cpu_at(double t)
{
	for (size_t i = 1; i < n_marks; i++)
		if (mark_t[i] >= t) {
			double f = (t - mark_t[i - 1]) /
				   (mark_t[i] - mark_t[i - 1]);
			return mark_cpu[i - 1] +
			       f * (mark_cpu[i] - mark_cpu[i - 1]);
		}
	return NAN;
}

/* The answer of Prometheus' /api/v1/query for promql (url-encoded), or
 * NULL when the status is not 200 (free it). */
static char *api_query(unsigned port, const char *promql)
{
	char path[1024], *resp;
	size_t o = (size_t)snprintf(path, sizeof(path), "/api/v1/query?query=");
	for (const char *p = promql; *p && o + 4 < sizeof(path); p++)
		o += (size_t)snprintf(
			path + o, sizeof(path) - o,
			(*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
					*p == '_'
				? "%c"
				: "%%%02X",
			(unsigned char)*p);
	if (http(port, "GET", path, NULL, &resp) != 200) {
		free(resp);
		return NULL;
	}
	return resp;
}

/* A PromQL instant query's first value, from the JSON:
 * "value":[<time>,"<value>"]. */
static bool query(unsigned port, const char *promql, double *v)
{
	char *resp = api_query(port, promql);
	const char *at = resp ? strstr(resp, "\"value\":[") : NULL;
	bool ok = at && sscanf(at, "\"value\":[%*f,\"%lf\"", v) == 1;
	free(resp);
	return ok;
}

/* The first sample of a range query's first series, and its time, from
 * the JSON: "values":[[<time>,"<value>"],... */
static bool first_sample(unsigned port, const char *sel, double *t, double *v)
{
	char *resp = api_query(port, sel);
	const char *at = resp ? strstr(resp, "\"values\":[[") : NULL;
	bool ok = at && sscanf(at, "\"values\":[[%lf,\"%lf\"", t, v) == 2;
	free(resp);
	return ok;
}

#define GROUP "ctp-prom-burn"
#define CPU_Q                                                                  \
	"ctprof_procfs_utime_seconds_total{group=\"" GROUP "\"}+"              \
	"ctprof_procfs_stime_seconds_total{group=\"" GROUP "\"}"

static void test_prometheus(void **state)
{
	(void)state;
	if (access("/usr/bin/prometheus", X_OK) != 0) {
		fprintf(stderr, "skip: no /usr/bin/prometheus (Debian's "
				"prometheus package)\n");
		skip();
	}
	char yaml[3 * PATH_MAX], plog[PATH_MAX], proc[PATH_MAX];
	/* Only this process is captured: a scrape takes as long as the
	 * test's own process does to walk, however many tasks the host
	 * runs (a scrape of 30,000 threads outlasts the 1 s scrape
	 * timeout on a busy host). */
	pid_t me = getpid();
	assert_int_equal(E2E_PATHF(proc, "%s/proc", tmp), 0);
	assert_int_equal(e2e_proc_root(proc, &me, 1), 0);
	int n = snprintf(yaml, sizeof(yaml),
			 "plugin_dirs: [\"%s\"]\nroots: {proc: \"%s\"}\n"
			 "plugins:\n  procfs-stat: {}\n",
			 CTP_TEST_PLUGIN_DIR, proc);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	prctl(PR_SET_NAME, GROUP);
	pthread_t th[BURNERS];
	for (int i = 0; i < BURNERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, burn, NULL), 0);
	const char *extra[] = {"--min-interval", "500ms", NULL};
	unsigned port, pport = e2e_free_port();
	pid_t srv = start_serve(yaml, extra, &port);
	assert_int_equal(E2E_PATHF(plog, "%s/prometheus.log", tmp), 0);
	mark(); /* before the first scrape, serve's first capture */
	pid_t p = e2e_prometheus_scrape(tmp, port, pport);
	/* Mark our CPU while Prometheus scrapes, until its last 4 s hold a
	 * sample a second (rate() over a window the samples do not cover
	 * reads low), at most 40 s. */
	double v = NAN, ts = NAN, rate = NAN, count = NAN, next = 0,
	       t_end = now_s(CLOCK_REALTIME) + 40;
	while (now_s(CLOCK_REALTIME) < t_end) {
		mark();
		usleep(50000);
		if (now_s(CLOCK_REALTIME) < next)
			continue;
		next = now_s(CLOCK_REALTIME) + 1;
		if (query(pport,
			  "count_over_time(ctprof_procfs_utime_seconds_total{"
			  "group=\"" GROUP "\"}[4s])",
			  &count) &&
		    count >= 4)
			break;
	}
	bool got = query(pport, CPU_Q, &v) &&
		   query(pport,
			 "timestamp(ctprof_procfs_utime_seconds_total{group="
			 "\"" GROUP "\"})",
			 &ts) &&
		   query(pport,
			 "sum(rate(ctprof_procfs_utime_seconds_total{group="
			 "\"" GROUP
			 "\"}[4s])+rate(ctprof_procfs_stime_seconds_total{"
			 "group=\"" GROUP "\"}[4s]))",
			 &rate);
	/* The counter counts from serve's first capture (0 there): its
	 * first sample and when. */
	double t0 = NAN, u0 = NAN, s0 = NAN;
	got = got &&
	      first_sample(pport,
			   "ctprof_procfs_utime_seconds_total{group=\"" GROUP
			   "\"}[5m]",
			   &t0, &u0) &&
	      first_sample(pport,
			   "ctprof_procfs_stime_seconds_total{group=\"" GROUP
			   "\"}[5m]",
			   &t0, &s0);
	mark();
	atomic_store(&burn_stop, true);
	for (int i = 0; i < BURNERS; i++)
		pthread_join(th[i], NULL);
	kill(p, SIGTERM);
	int st;
	waitpid(p, &st, 0);
	e2e_started_done(p);
	stop(srv);
	if (!got) {
		e2e_show_file("prometheus", plog);
		fail_msg("Prometheus has no sample of the burners");
	}
	/* The burned rate: our CPU over the marks; and over the 4 s the
	 * rate() covers, ending at its last sample (a busy host gives the
	 * burners less CPU some seconds than others). */
	double burned = (mark_cpu[n_marks - 1] - mark_cpu[0]) /
			(mark_t[n_marks - 1] - mark_t[0]);
	double want = cpu_at(ts) - cpu_at(t0);
	v -= u0 + s0;
	double burned_4s = ts - 4 >= mark_t[0]
				   ? (cpu_at(ts) - cpu_at(ts - 4)) / 4
				   : burned;
	printf("prometheus: %.2f s of CPU from its first sample to the "
	       "scrape (we measured %.2f), "
	       "rate %.2f (we burned %.2f, %.2f over its 4 s) over %.0f "
	       "samples\n",
	       v, want, rate, burned, burned_4s, count);
	/* Within one scrape interval of drift, and the ticks' rounding. */
	assert_true(fabs(v - want) <= burned * 1.0 + 0.1);
	assert_true(rate > burned_4s * 0.75 && rate < burned_4s * 1.25);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("serve", tmp, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	/* SIGTERM: serve's supervisor passes it on to its capture process. */
	e2e_started_stop_all();
	atomic_store(&burn_stop, true);
	return e2e_rm_rf(tmp) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_serve_libs),
		cmocka_unit_test(test_prometheus),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
