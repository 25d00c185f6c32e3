/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core serve --web-config` (core/cli/webconfig.c): a bad web
 * config is one FILE:LINE:COL line and exit 2; then over real TLS:
 * a CA, a server certificate for 127.0.0.1 and client certificates made
 * by openssl; two servers on the fixture tree, one with basic auth (a
 * $2y$ bcrypt hash, as htpasswd makes) and one that requires a client
 * certificate of the CA; curl's answers from both (200, 401 with the
 * Basic challenge, 403, plain HTTP to the TLS port getting no HTTP at
 * all, nor a TLS 1.2 client to a TLS13 minimum); then a real
 * Prometheus (Debian's) scraping both with basic_auth and tls_config: its
 * targets are up and hold ctprof series, and a job with the wrong
 * password is down on a 401.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define FIXTURE_YAML                                                           \
	"plugin_dirs: [\"" CTP_TEST_PLUGIN_DIR "\"]\n"                         \
	"roots: {proc: \"" CTP_TEST_FIXTURES "/proc\", sys: \""                \
	"" CTP_TEST_FIXTURES "/sys\"}\n"                                       \
	"plugins:\n  procfs-stat: {}\n"
#define PASSWORD "s3cret pass"
#define METRIC	 "ctprof_capture_timestamp_seconds"

static char tmp[PATH_MAX];
/* argv (not ctprof-core) with stdout to out, stderr to tmp/tools.log
 * (appended); its exit code. */
static int tool(const char *const *argv, const char *out)
{
	char log[PATH_MAX];
	assert_int_equal(E2E_PATHF(log, "%s/tools.log", tmp), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out ? out : "/dev/null",
			     O_WRONLY | O_CREAT | O_TRUNC, 0600),
		    e = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(o, 1);
		dup2(e, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return e2e_wait_bounded(pid, 120000, argv[0]);
}

static void path_of(char *buf, const char *name)
{
	assert_int_equal(e2e_pathf(buf, PATH_MAX, "%s/%s", tmp, name), 0);
}

static void write_in_tmp(const char *name, const char *text)
{
	char p[PATH_MAX];
	path_of(p, name);
	assert_int_equal(e2e_write_file(p, text, strlen(text)), 0);
}

/* A P-256 key tmp/NAME.key and a self-signed certificate tmp/NAME.crt
 * for it, with the extension addext (NULL: none). */
static void self_signed(const char *name, const char *cn, const char *addext)
{
	char key[PATH_MAX], crt[PATH_MAX], subj[64];
	snprintf(subj, sizeof(subj), "/CN=%s", cn);
	assert_int_equal(e2e_pathf(key, PATH_MAX, "%s/%s.key", tmp, name), 0);
	assert_int_equal(e2e_pathf(crt, PATH_MAX, "%s/%s.crt", tmp, name), 0);
	const char *a[] = {"openssl",
			   "req",
			   "-x509",
			   "-newkey",
			   "ec",
			   "-pkeyopt",
			   "ec_paramgen_curve:P-256",
			   "-nodes",
			   "-keyout",
			   key,
			   "-out",
			   crt,
			   "-days",
			   "2",
			   "-subj",
			   subj,
			   addext ? "-addext" : NULL,
			   addext,
			   NULL};
	assert_int_equal(tool(a, NULL), 0);
}

/* A P-256 key and a certificate for it signed by the test CA, with the
 * extensions of the file tmp/ext. */
static void ca_signed(const char *name, const char *cn, const char *ext)
{
	char key[PATH_MAX], crt[PATH_MAX], csr[PATH_MAX], ca[PATH_MAX],
		cakey[PATH_MAX], srl[PATH_MAX], extp[PATH_MAX], subj[64];
	snprintf(subj, sizeof(subj), "/CN=%s", cn);
	assert_int_equal(e2e_pathf(key, PATH_MAX, "%s/%s.key", tmp, name), 0);
	assert_int_equal(e2e_pathf(crt, PATH_MAX, "%s/%s.crt", tmp, name), 0);
	assert_int_equal(e2e_pathf(csr, PATH_MAX, "%s/%s.csr", tmp, name), 0);
	path_of(ca, "ca.crt");
	path_of(cakey, "ca.key");
	path_of(srl, "ca.srl");
	path_of(extp, ext);
	const char *r[] = {"openssl", "req",	  "-newkey",
			   "ec",      "-pkeyopt", "ec_paramgen_curve:P-256",
			   "-nodes",  "-keyout",  key,
			   "-out",    csr,	  "-subj",
			   subj,      NULL};
	const char *s[] = {"openssl",  "x509",	    "-req",  "-in",
			   csr,	       "-CA",	    ca,	     "-CAkey",
			   cakey,      "-CAserial", srl,     "-CAcreateserial",
			   "-out",     crt,	    "-days", "2",
			   "-extfile", extp,	    NULL};
	assert_int_equal(tool(r, NULL), 0);
	assert_int_equal(tool(s, NULL), 0);
}

/* $2y$ (htpasswd's) bcrypt of PASSWORD at cost 10. */
static void make_hash(char out[128])
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	assert_non_null(cd);
	assert_non_null(crypt_gensalt_rn("$2b$", 10, NULL, 0, setting,
					 sizeof(setting)));
	const char *h = crypt_rn(PASSWORD, setting, cd, sizeof(*cd));
	assert_non_null(h);
	assert_int_equal(strlen(h), 60);
	snprintf(out, 128, "%s", h);
	out[2] = 'y';
	free(cd);
}

static bool have(const char *prog)
{
	char p[64];
	snprintf(p, sizeof(p), "/usr/bin/%s", prog);
	if (access(p, X_OK) == 0)
		return true;
	fprintf(stderr, "skip: no %s (tools/dev.sh installs it)\n", p);
	return false;
}

/* The certificates and the two web configs, once. */
static void prepare(void)
{
	static bool done;
	char y[1024], hash[128];
	if (done)
		return;
	self_signed("ca", "ctprof-test-ca", NULL);
	write_in_tmp("server.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
				   "extendedKeyUsage=serverAuth\n");
	write_in_tmp("client.ext", "extendedKeyUsage=clientAuth\n");
	ca_signed("server", "localhost", "server.ext");
	ca_signed("client", "scraper", "client.ext");
	self_signed("other", "stranger", "extendedKeyUsage=clientAuth");
	make_hash(hash);
	/* Relative names: the web config's directory is where they are. */
	snprintf(y, sizeof(y),
		 "tls_server_config:\n"
		 "  cert_file: server.crt\n"
		 "  key_file: server.key\n"
		 "basic_auth_users:\n"
		 "  alice: '%s'\n"
		 "http_server_config:\n"
		 "  headers: {X-Content-Type-Options: nosniff}\n",
		 hash);
	write_in_tmp("web-basic.yml", y);
	write_in_tmp("web-mtls.yml",
		     "tls_server_config:\n"
		     "  cert_file: server.crt\n"
		     "  key_file: server.key\n"
		     "  client_ca_file: ca.crt\n"
		     "  client_auth_type: RequireAndVerifyClientCert\n"
		     "  min_version: TLS13\n");
	write_in_tmp("c.yaml", FIXTURE_YAML);
	done = true;
}

/* serve --web-config tmp/web; its port. */
static pid_t start_serve(const char *web, unsigned *port)
{
	char cfg[PATH_MAX], webp[PATH_MAX], log[PATH_MAX], name[64];
	path_of(cfg, "c.yaml");
	path_of(webp, web);
	snprintf(name, sizeof(name), "%s.log", web);
	path_of(log, name);
	const char *args[] = {"serve",	     "--config",     cfg,  "--listen",
			      "127.0.0.1:0", "--web-config", webp, NULL};
	return e2e_serve_start(args, log, "https", port);
}

static void stop(pid_t pid)
{
	int st;
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(e2e_wait(pid, &st), 0);
	e2e_started_done(pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

struct answer {
	int rc;	    /* curl's exit code */
	int status; /* HTTP status, 0 for none */
	char *head, *body;
};

static void answer_free(struct answer *a)
{
	free(a->head);
	free(a->body);
}

/* curl URL with extra options; what came back. */
static struct answer get(const char *url, const char *const *extra)
{
	char out[PATH_MAX], head[PATH_MAX], body[PATH_MAX], ca[PATH_MAX];
	const char *argv[32] = {"curl", "-sS",		"--max-time", "60",
				"-o",	body,		"-D",	      head,
				"-w",	"%{http_code}", "--cacert",   ca};
	size_t n = 12, len;
	path_of(out, "curl.out");
	path_of(head, "curl.head");
	path_of(body, "curl.body");
	path_of(ca, "ca.crt");
	unlink(head);
	unlink(body);
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	argv[n++] = url;
	argv[n] = NULL;
	struct answer a = {0};
	char *code;
	a.rc = tool(argv, out);
	assert_int_equal(e2e_read_file(out, &code, &len), 0);
	a.status = atoi(code);
	free(code);
	if (e2e_read_file(head, &a.head, &len) < 0)
		a.head = strdup("");
	if (e2e_read_file(body, &a.body, &len) < 0)
		a.body = strdup("");
	return a;
}

static int status_of(const char *url, const char *const *extra)
{
	struct answer a = get(url, extra);
	int st = a.status;
	if (st == 200)
		assert_non_null(strstr(a.body, METRIC));
	else
		assert_null(strstr(a.body, METRIC));
	answer_free(&a);
	return st;
}

static void test_basic_auth(void **state)
{
	(void)state;
	if (!have("openssl") || !have("curl"))
		skip();
	prepare();
	unsigned port;
	pid_t srv = start_serve("web-basic.yml", &port);
	char url[64], plain[64], cert[PATH_MAX], key[PATH_MAX];
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/metrics", port);
	snprintf(plain, sizeof(plain), "http://127.0.0.1:%u/metrics", port);
	const char *right[] = {"-u", "alice:" PASSWORD, NULL},
		   *wrong[] = {"-u", "alice:s3cret", NULL},
		   *nobody[] = {"-u", "bob:" PASSWORD, NULL};

	struct answer a = get(url, right);
	assert_int_equal(a.status, 200);
	assert_non_null(strstr(a.body, METRIC));
	assert_non_null(strstr(a.head, "X-Content-Type-Options: nosniff"));
	answer_free(&a);
	/* Again: the remembered login. */
	assert_int_equal(status_of(url, right), 200);

	a = get(url, wrong);
	assert_int_equal(a.status, 401);
	assert_non_null(strstr(
		a.head, "WWW-Authenticate: Basic realm=\"ctprof-core\""));
	answer_free(&a);
	assert_int_equal(status_of(url, NULL), 401);
	assert_int_equal(status_of(url, nobody), 401);
	assert_int_equal(status_of(url, right), 200);
	/* Not on the index page either. */
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/", port);
	a = get(url, wrong);
	assert_int_equal(a.status, 401);
	assert_null(strstr(a.body, "ctprof-core</h1>"));
	answer_free(&a);
	a = get(url, right);
	assert_int_equal(a.status, 200);
	assert_non_null(strstr(a.body, "ctprof-core</h1>"));
	answer_free(&a);

	/* Plain HTTP to the TLS port: no HTTP answer at all. */
	a = get(plain, right);
	assert_int_equal(a.status, 0);
	assert_int_not_equal(a.rc, 0);
	answer_free(&a);
	/* A client certificate is not asked for here: no harm in one. */
	path_of(cert, "client.crt");
	path_of(key, "client.key");
	const char *with_cert[] = {
		"-u", "alice:" PASSWORD, "--cert", cert, "--key", key, NULL};
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/metrics", port);
	assert_int_equal(status_of(url, with_cert), 200);
	stop(srv);
}

static void test_client_cert(void **state)
{
	(void)state;
	if (!have("openssl") || !have("curl"))
		skip();
	prepare();
	unsigned port;
	pid_t srv = start_serve("web-mtls.yml", &port);
	char url[64], crt[3][PATH_MAX], key[3][PATH_MAX];
	const char *who[] = {"client", "other", "server"};
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/metrics", port);
	for (int i = 0; i < 3; i++) {
		char n[32];
		snprintf(n, sizeof(n), "%s.crt", who[i]);
		path_of(crt[i], n);
		snprintf(n, sizeof(n), "%s.key", who[i]);
		path_of(key[i], n);
	}
	/* None: refused. */
	assert_int_equal(status_of(url, NULL), 403);
	/* The CA's client certificate: in. */
	const char *ok[] = {"--cert", crt[0], "--key", key[0], NULL};
	assert_int_equal(status_of(url, ok), 200);
	/* min_version TLS13: a TLS 1.2 client gets no answer. */
	const char *tls12[] = {"--cert",    crt[0], "--key", key[0],
			       "--tls-max", "1.2",  NULL};
	struct answer a = get(url, tls12);
	assert_int_equal(a.status, 0);
	assert_int_not_equal(a.rc, 0);
	answer_free(&a);
	/* Self-signed, not the CA's: refused. */
	const char *stranger[] = {"--cert", crt[1], "--key", key[1], NULL};
	assert_int_equal(status_of(url, stranger), 403);
	/* The CA's, but for a server, not a TLS client: refused. */
	const char *srvcert[] = {"--cert", crt[2], "--key", key[2], NULL};
	assert_int_equal(status_of(url, srvcert), 403);
	stop(srv);
}

/* A PromQL instant query's first value; false when it has none. */
static bool query(unsigned pport, const char *promql, double *v)
{
	char url[64], arg[512];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/query", pport);
	snprintf(arg, sizeof(arg), "query=%s", promql);
	const char *extra[] = {"-G", "--data-urlencode", arg, NULL};
	struct answer a = get(url, extra);
	const char *at = strstr(a.body, "\"value\":[");
	bool ok = a.status == 200 && at &&
		  sscanf(at, "\"value\":[%*f,\"%lf\"", v) == 1;
	answer_free(&a);
	return ok;
}

static void test_prometheus(void **state)
{
	(void)state;
	if (!have("openssl") || !have("curl") || !have("prometheus"))
		skip();
	prepare();
	unsigned pb, pm, pport = e2e_free_port();
	pid_t sb = start_serve("web-basic.yml", &pb),
	      sm = start_serve("web-mtls.yml", &pm);
	char y[6 * PATH_MAX], ca[PATH_MAX], crt[PATH_MAX], key[PATH_MAX],
		prom[PATH_MAX], data[PATH_MAX], plog[PATH_MAX];
	path_of(ca, "ca.crt");
	path_of(crt, "client.crt");
	path_of(key, "client.key");
	path_of(prom, "prometheus.yml");
	path_of(data, "tsdb");
	path_of(plog, "prometheus.log");
	snprintf(y, sizeof(y),
		 "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
		 "scrape_configs:\n"
		 "  - job_name: basic\n"
		 "    scheme: https\n"
		 "    basic_auth: {username: alice, password: '" PASSWORD "'}\n"
		 "    tls_config: {ca_file: '%s'}\n"
		 "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
		 "  - job_name: wrong\n"
		 "    scheme: https\n"
		 "    basic_auth: {username: alice, password: s3cret}\n"
		 "    tls_config: {ca_file: '%s'}\n"
		 "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
		 "  - job_name: mtls\n"
		 "    scheme: https\n"
		 "    tls_config: {ca_file: '%s', cert_file: '%s', "
		 "key_file: '%s'}\n"
		 "    static_configs: [{targets: ['127.0.0.1:%u']}]\n",
		 ca, pb, ca, pb, ca, crt, key, pm);
	assert_int_equal(e2e_write_file(prom, y, strlen(y)), 0);
	pid_t p = e2e_prometheus_start(prom, data, plog, pport);
	/* Until both targets are up and the wrong one has been tried, at
	 * most 90 s (Prometheus' start and first scrapes on a busy host). */
	double basic = 0, mtls = 0, wrong = -1;
	uint64_t end = e2e_now_ms() + 90000;
	while (e2e_now_ms() < end) {
		if (query(pport, "up{job=\"basic\"}", &basic) &&
		    query(pport, "up{job=\"mtls\"}", &mtls) &&
		    query(pport, "up{job=\"wrong\"}", &wrong) && basic == 1 &&
		    mtls == 1)
			break;
		sleep(1);
	}
	double nb = 0, nm = 0;
	bool got =
		query(pport, "count({__name__=~\"ctprof_.+\",job=\"basic\"})",
		      &nb) &&
		query(pport, "count({__name__=~\"ctprof_.+\",job=\"mtls\"})",
		      &nm);
	/* Why the wrong job is down, in Prometheus' words. */
	char turl[64];
	snprintf(turl, sizeof(turl), "http://127.0.0.1:%u/api/v1/targets",
		 pport);
	struct answer t = get(turl, NULL);
	bool said_401 = strstr(t.body, "401 Unauthorized") != NULL;
	kill(p, SIGTERM);
	waitpid(p, NULL, 0);
	e2e_started_done(p);
	stop(sb);
	stop(sm);
	printf("prometheus: up basic %.0f, mtls %.0f, wrong %.0f; ctprof "
	       "series %.0f and %.0f\n",
	       basic, mtls, wrong, nb, nm);
	if (basic != 1 || mtls != 1 || !got) {
		e2e_show_file("prometheus", plog);
		fprintf(stderr, "targets: %s\n", t.body);
	}
	answer_free(&t);
	assert_true(basic == 1 && mtls == 1);
	assert_true(wrong == 0);
	assert_true(got && nb > 0 && nm > 0);
	assert_true(said_401);
}

/* A web config error: one FILE:LINE:COL line, exit 2, nothing served. */
static void test_bad_config(void **state)
{
	(void)state;
	char cfg[PATH_MAX], web[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
	write_in_tmp("c-bad.yaml", FIXTURE_YAML);
	write_in_tmp("web-bad.yml", "basic_auth_users: {}\n"
				    "tls_server_config:\n"
				    "  key_fle: server.key\n");
	path_of(cfg, "c-bad.yaml");
	path_of(web, "web-bad.yml");
	path_of(out, "bad.out");
	path_of(err, "bad.err");
	const char *args[] = {"serve",	     "--config",     cfg, "--listen",
			      "127.0.0.1:0", "--web-config", web, NULL};
	assert_int_equal(e2e_run_within(args, out, err, 120), 2);
	char *o, *e, want[PATH_MAX + 64];
	size_t ol, el;
	assert_int_equal(e2e_read_file(out, &o, &ol), 0);
	assert_int_equal(e2e_read_file(err, &e, &el), 0);
	assert_int_equal(ol, 0);
	snprintf(want, sizeof(want),
		 "ctprof-core: %s:3:3: unknown key 'key_fle'", web);
	if (strncmp(e, want, strlen(want)) || strchr(e, '\n') != e + el - 1)
		fail_msg("expected one line starting %s, got: %s", want, e);
	assert_non_null(strstr(e, "did you mean 'key_file'?"));
	free(o);
	free(e);
}

static int setup(void **state)
{
	(void)state;
	return e2e_tmpdir("serve-tls", tmp, sizeof(tmp));
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
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_basic_auth),
		cmocka_unit_test(test_client_cert),
		cmocka_unit_test(test_prometheus),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
