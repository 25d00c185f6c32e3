/* SPDX-License-Identifier: MIT */
/*
 * core/cli/webconfig.c: exporter-toolkit's web config as serve reads it.
 * Every accepted key with its effect (files relative to the config's
 * directory, inline PEM, the GnuTLS priorities, the libmicrohttpd
 * options), and every refusal as one "FILE:LINE:COL: ..." line: unknown
 * and unsupported keys, bad values, a bad bcrypt hash, files missing or
 * not a key pair, the client CA rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "webconfig.h"

#define FIX  CTP_TEST_FIXTURES "/webcfg"
#define HASH "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"
#define TLS_FILES                                                              \
	"tls_server_config:\n"                                                 \
	"  cert_file: server.crt\n"                                            \
	"  key_file: server.key\n"

static int fixdir = -1;

static struct ctp_webcfg *load_ok(const char *yaml)
{
	struct ctp_webcfg *w = NULL;
	char err[1024] = "";
	int r = ctp_webcfg_load_buf("w.yml", yaml, strlen(yaml), fixdir, &w,
				    err, sizeof(err));
	if (r < 0)
		fail_msg("load failed (%d): %s\n%s", r, err, yaml);
	assert_non_null(w);
	return w;
}

/* Loading yaml fails with one line "w.yml:WHERE: ...WHAT...". */
static void expect_error(const char *yaml, const char *where, const char *what)
{
	struct ctp_webcfg *w = NULL;
	char err[1024] = "", prefix[64];
	int r = ctp_webcfg_load_buf("w.yml", yaml, strlen(yaml), fixdir, &w,
				    err, sizeof(err));
	if (r >= 0)
		fail_msg("expected an error for <<%s>>", yaml);
	assert_null(w);
	snprintf(prefix, sizeof(prefix), "w.yml:%s: ", where);
	if (strncmp(err, prefix, strlen(prefix)))
		fail_msg("expected a message at %s, got: %s", where, err);
	if (!strstr(err, what))
		fail_msg("expected '%s' in: %s", what, err);
	if (strchr(err, '\n'))
		fail_msg("message is not one line: %s", err);
}

static char *fixture(const char *name)
{
	char path[PATH_MAX], *buf = malloc(8192);
	snprintf(path, sizeof(path), FIX "/%s", name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, 8191, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_empty(void **state)
{
	(void)state;
	struct ctp_webcfg *w = load_ok("");
	assert_false(w->tls);
	assert_int_equal(w->n_users, 0);
	struct MHD_OptionItem o[8];
	unsigned flags = 1;
	ctp_webcfg_mhd_options(w, o, 8, &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(o[0].option, MHD_OPTION_END);
	ctp_webcfg_free(w);
	/* An empty tls_server_config is no TLS, as in exporter-toolkit. */
	w = load_ok("tls_server_config: {}\nbasic_auth_users:\n");
	assert_false(w->tls);
	ctp_webcfg_free(w);
	ctp_webcfg_mhd_options(NULL, o, 8, &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(o[0].option, MHD_OPTION_END);
}

static void test_every_key(void **state)
{
	(void)state;
	struct ctp_webcfg *w =
		load_ok(TLS_FILES
			"  client_ca_file: ca.crt\n"
			"  client_auth_type: RequireAndVerifyClientCert\n"
			"  min_version: TLS13\n"
			"  max_version: TLS13\n"
			"  prefer_server_cipher_suites: false\n"
			"http_server_config:\n"
			"  http2: false\n"
			"  headers:\n"
			"    Content-Security-Policy: \"default-src 'none'\"\n"
			"    X-Frame-Options: deny\n"
			"    X-Content-Type-Options: nosniff\n"
			"    X-XSS-Protection: \"\"\n"
			"    Strict-Transport-Security: max-age=31536000\n"
			"basic_auth_users:\n"
			"  alice: " HASH "\n"
			"  bob: '$2b$04$abcdefghijklmnopqrstuu"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ01234'\n");
	char *crt = fixture("server.crt"), *key = fixture("server.key"),
	     *ca = fixture("ca.crt");
	assert_true(w->tls);
	assert_string_equal(w->cert, crt);
	assert_string_equal(w->key, key);
	assert_string_equal(w->client_ca, ca);
	assert_int_equal(w->client_auth,
			 CTP_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT);
	assert_int_equal(w->min_version, 0x0304);
	assert_int_equal(w->max_version, 0x0304);
	assert_false(w->prefer_server_ciphers);
	assert_string_equal(w->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	assert_false(w->http2);
	/* The blank one is unset. */
	assert_int_equal(w->n_headers, 4);
	assert_string_equal(w->headers[0].name, "Content-Security-Policy");
	assert_string_equal(w->headers[0].value, "default-src 'none'");
	assert_string_equal(w->headers[3].name, "Strict-Transport-Security");
	assert_int_equal(w->n_users, 2);
	assert_string_equal(w->users[0].name, "alice");
	assert_string_equal(w->users[0].hash, HASH);
	assert_string_equal(w->users[1].name, "bob");

	struct MHD_OptionItem o[8];
	unsigned flags = 0;
	ctp_webcfg_mhd_options(w, o, 8, &flags);
	assert_int_equal(flags, MHD_USE_TLS);
	assert_int_equal(o[0].option, MHD_OPTION_HTTPS_MEM_CERT);
	assert_ptr_equal(o[0].ptr_value, w->cert);
	assert_int_equal(o[1].option, MHD_OPTION_HTTPS_MEM_KEY);
	assert_ptr_equal(o[1].ptr_value, w->key);
	assert_int_equal(o[2].option, MHD_OPTION_HTTPS_MEM_TRUST);
	assert_ptr_equal(o[2].ptr_value, w->client_ca);
	assert_int_equal(o[3].option, MHD_OPTION_HTTPS_PRIORITIES);
	assert_string_equal(o[3].ptr_value, w->priorities);
	assert_int_equal(o[4].option, MHD_OPTION_END);
	ctp_webcfg_free(w);
	free(crt);
	free(key);
	free(ca);
}

static void test_defaults_and_values(void **state)
{
	(void)state;
	struct ctp_webcfg *w = load_ok(TLS_FILES);
	/* exporter-toolkit's defaults: TLS 1.2 and up, server's ciphers. */
	assert_string_equal(w->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:"
					   "+VERS-TLS1.2:%SERVER_PRECEDENCE");
	assert_int_equal(w->client_auth, CTP_WEB_NO_CLIENT_CERT);
	assert_null(w->client_ca);
	assert_true(w->http2);
	struct MHD_OptionItem o[8];
	unsigned flags = 0;
	ctp_webcfg_mhd_options(w, o, 8, &flags);
	assert_int_equal(o[2].option, MHD_OPTION_HTTPS_PRIORITIES);
	assert_int_equal(o[3].option, MHD_OPTION_END);
	ctp_webcfg_free(w);

	w = load_ok(TLS_FILES "  min_version: TLS10\n  max_version: TLS11\n");
	assert_string_equal(w->priorities,
			    "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0:"
			    "%SERVER_PRECEDENCE");
	ctp_webcfg_free(w);

	static const char *const types[] = {
		"RequestClientCert", "RequireAnyClientCert",
		"VerifyClientCertIfGiven", "RequireAndVerifyClientCert"};
	for (int i = 0; i < 4; i++) {
		char y[512];
		snprintf(y, sizeof(y),
			 TLS_FILES "  client_ca_file: ca.crt\n"
				   "  client_auth_type: %s\n",
			 types[i]);
		w = load_ok(y);
		assert_int_equal(w->client_auth, i + 1);
		ctp_webcfg_free(w);
	}
	/* basic auth alone, over plain HTTP, as exporter-toolkit allows. */
	w = load_ok("basic_auth_users: {alice: '" HASH "'}\n");
	assert_false(w->tls);
	assert_int_equal(w->n_users, 1);
	ctp_webcfg_free(w);
}

/* Inline PEM (cert, key, client_ca) as block scalars. */
static void test_inline(void **state)
{
	(void)state;
	const char *names[] = {"server.crt", "server.key", "ca.crt"};
	const char *keys[] = {"cert", "key", "client_ca"};
	char *pem[3], y[8192];
	size_t o = (size_t)snprintf(y, sizeof(y), "tls_server_config:\n");
	for (int i = 0; i < 3; i++) {
		pem[i] = fixture(names[i]);
		o += (size_t)snprintf(y + o, sizeof(y) - o, "  %s: |\n",
				      keys[i]);
		for (char *l = pem[i]; *l;) {
			char *nl = strchr(l, '\n');
			int n = nl ? (int)(nl - l) : (int)strlen(l);
			o += (size_t)snprintf(y + o, sizeof(y) - o,
					      "    %.*s\n", n, l);
			l += n + (nl ? 1 : 0);
		}
	}
	snprintf(y + o, sizeof(y) - o,
		 "  client_auth_type: VerifyClientCertIfGiven\n");
	struct ctp_webcfg *w = load_ok(y);
	for (int i = 0; i < 3; i++) {
		const char *got = i == 0   ? w->cert
				  : i == 1 ? w->key
					   : w->client_ca;
		assert_string_equal(got, pem[i]);
		free(pem[i]);
	}
	ctp_webcfg_free(w);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("- a\n", "1:1", "must be a mapping");
	expect_error("tls_server_config: {}\nbasic_auth_user: {}\n", "2:1",
		     "did you mean 'basic_auth_users'?");
	expect_error(TLS_FILES "  cert_fiel: x\n", "4:3",
		     "unknown key 'cert_fiel' in tls_server_config");
	expect_error(TLS_FILES "  client_auth_type: Require\n", "4:21",
		     "'tls_server_config.client_auth_type' must be one of "
		     "NoClientCert, RequestClientCert");
	expect_error(TLS_FILES "  min_version: TLS1.2\n", "4:16",
		     "must be one of TLS10, TLS11, TLS12, TLS13");
	expect_error(TLS_FILES "  min_version: TLS13\n  max_version: TLS12\n",
		     "5:16", "max_version' is below min_version");
	expect_error(TLS_FILES "  prefer_server_cipher_suites: maybe\n", "4:32",
		     "prefer_server_cipher_suites");
	expect_error(TLS_FILES "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		     "4:3",
		     "'tls_server_config.cipher_suites' is not supported");
	expect_error(TLS_FILES "  curve_preferences: [X25519]\n", "4:3",
		     "not supported");
	expect_error(TLS_FILES "  client_allowed_sans: [a]\n", "4:3",
		     "not supported");
	expect_error("rate_limit: {interval: 1s, burst: 20}\n", "1:1",
		     "'rate_limit' is not supported");
	/* Files: missing, a directory, not a pair, no CA in it. */
	expect_error("tls_server_config:\n  cert_file: nope.crt\n"
		     "  key_file: server.key\n",
		     "2:14", "nope.crt: No such file or directory");
	expect_error("tls_server_config:\n  cert_file: .\n"
		     "  key_file: server.key\n",
		     "2:14", "Is a directory");
	expect_error("tls_server_config:\n  cert_file: server.crt\n"
		     "  key_file: other.key\n",
		     "3:13", "do not load as a pair");
	expect_error(TLS_FILES "  client_ca_file: server.key\n"
			       "  client_auth_type: RequireAnyClientCert\n",
		     "4:19", "no CA certificate");
	expect_error("tls_server_config:\n  cert_file: server.crt\n", "1:1",
		     "needs key_file (or key)");
	expect_error("tls_server_config:\n  key_file: server.key\n", "1:1",
		     "needs cert_file (or cert)");
	expect_error("tls_server_config:\n  cert: x\n  cert_file: server.crt\n",
		     "3:3", "'tls_server_config.cert_file' beside 'cert'");
	expect_error("tls_server_config:\n  key_file: server.key\n  key: x\n",
		     "3:3", "'tls_server_config.key' beside 'key_file'");
	expect_error("tls_server_config:\n  client_ca: x\n"
		     "  client_ca_file: ca.crt\n",
		     "3:3",
		     "'tls_server_config.client_ca_file' beside 'client_ca'");
	expect_error("tls_server_config:\n  client_ca_file: ca.crt\n"
		     "  client_ca: x\n",
		     "3:3",
		     "'tls_server_config.client_ca' beside 'client_ca_file'");
	/* The client CA rules. */
	expect_error(TLS_FILES "  client_ca_file: ca.crt\n", "4:19",
		     "a client CA without a client_auth_type");
	expect_error(TLS_FILES
		     "  client_auth_type: RequireAndVerifyClientCert\n",
		     "4:21", "needs client_ca_file");
	/* Users. */
	expect_error("basic_auth_users: {alice: secret}\n", "1:27",
		     "'basic_auth_users.alice' must be a bcrypt hash");
	expect_error(
		"basic_auth_users:\n  alice: '$2y$03$mDwo.lAisC94iLAyP81MCe"
		"sa29IzH37oigHC/42V2pdJlUprsJPze'\n",
		"2:10", "must be a bcrypt hash");
	expect_error("basic_auth_users:\n  alice: '$1$mDwo.lAisC94iLAyP81MCe"
		     "sa29IzH37oigHC/42V2pdJlUprsJPzeabc'\n",
		     "2:10", "must be a bcrypt hash");
	expect_error("basic_auth_users:\n  alice: '" HASH "x'\n", "2:10",
		     "must be a bcrypt hash");
	expect_error("basic_auth_users:\n  'a:b': '" HASH "'\n", "2:3",
		     "cannot be sent in basic auth");
	expect_error("basic_auth_users: [alice]\n", "1:19",
		     "must be a mapping");
	/* http_server_config. */
	expect_error("http_server_config: {http3: true}\n", "1:22",
		     "did you mean 'http2'?");
	expect_error("http_server_config: {http2: 2}\n", "1:29", "http2");
	expect_error(
		"http_server_config:\n  headers: {X-Frame-Options: allow}\n",
		"2:30", "must be deny or sameorigin");
	expect_error(
		"http_server_config:\n  headers: {X-Content-Type-Options: x}"
		"\n",
		"2:37", "must be nosniff");
	expect_error("http_server_config:\n  headers: {Server: x}\n", "2:13",
		     "unknown key 'Server'");
	expect_error(
		"http_server_config:\n  headers: {X-XSS-Protection: \"a\\nb\"}"
		"\n",
		"2:31", "control character");
	/* The YAML tree's own refusals keep their positions. */
	expect_error("basic_auth_users: {a: 1}\nbasic_auth_users: {}\n", "2:1",
		     "duplicate");
}

/* The file: its directory is where relative paths start, not the cwd. */
static void test_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/ctp-webcfg-XXXXXX", path[PATH_MAX], y[1024];
	char err[1024];
	struct ctp_webcfg *w = NULL;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/server.crt", dir);
	char *crt = fixture("server.crt");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(crt, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	int n = snprintf(y, sizeof(y),
			 "tls_server_config:\n  cert_file: server.crt\n"
			 "  key_file: %s/server.key\n",
			 FIX);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(y, 1, (size_t)n, f);
	fclose(f);
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(ctp_webcfg_load(path, &w, err, sizeof(err)), 0);
	assert_string_equal(w->cert, crt);
	ctp_webcfg_free(w);
	/* From the directory itself: a name without a slash. */
	assert_int_equal(chdir(dir), 0);
	w = NULL;
	assert_int_equal(ctp_webcfg_load("web.yml", &w, err, sizeof(err)), 0);
	assert_string_equal(w->cert, crt);
	ctp_webcfg_free(w);
	free(crt);
	/* Missing, and too large. */
	w = NULL;
	assert_int_equal(ctp_webcfg_load("missing.yml", &w, err, sizeof(err)),
			 -ENOENT);
	assert_null(w);
	assert_string_equal(err, "missing.yml: No such file or directory");
	f = fopen("big.yml", "w");
	assert_non_null(f);
	for (unsigned i = 0; i <= CTP_WEB_CONFIG_MAX / 8; i++)
		fputs("# 4567\n\n", f);
	fclose(f);
	assert_int_equal(ctp_webcfg_load("big.yml", &w, err, sizeof(err)),
			 -EFBIG);
	assert_non_null(strstr(err, "big.yml: larger than"));
	assert_null(w);
	unlink("big.yml");
	unlink("web.yml");
	unlink("server.crt");
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(rmdir(dir), 0);
}

static int setup(void **state)
{
	(void)state;
	fixdir = open(FIX, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fixdir < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	close(fixdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_defaults_and_values),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
