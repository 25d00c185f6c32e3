/* SPDX-License-Identifier: MIT */
/*
 * The web config of `serve --web-config` (webconfig.h): the schema pass
 * over the YAML tree (yamltree.h), the files it names read once and
 * checked with GnuTLS at startup, so a bad key or CA is a FILE:LINE:COL
 * error and not a daemon that will not start; then the per-request check:
 * the client certificate as client_auth_type asks, and basic auth against
 * bcrypt hashes (libcrypt), with the successful logins remembered as keyed
 * digests, never as passwords.
 */
#include "webconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ctprof/plugin-util.h"
#include "httplib.h"
#include "yamltree.h"

#define REALM	   "ctprof-core"
#define BCRYPT_LEN 60
#define DIGEST_LEN 32 /* HMAC-SHA-256 */

struct ctp_web_cache {
	pthread_mutex_t lock;
	uint8_t key[DIGEST_LEN];
	uint8_t seen[CTP_WEB_AUTH_CACHE][DIGEST_LEN];
	size_t n, next;
	/* An unknown user's password is hashed with this setting, at the
	 * first user's cost, so the answer takes as long as a known user's. */
	char dummy[CRYPT_GENSALT_OUTPUT_SIZE];
};

/* The schema pass: the file, where relative paths start, and the nodes
 * the checks after the walk point at. */
struct pass {
	struct ctp_yctx *c;
	struct ctp_webcfg *w;
	int dirfd;
	const struct ctp_ynode *cert, *key, *ca, *auth, *vmax;
};

static const char *const tls_versions[] = {"TLS10", "TLS11", "TLS12", "TLS13",
					   NULL};
static const char *const auth_types[] = {"NoClientCert",
					 "RequestClientCert",
					 "RequireAnyClientCert",
					 "VerifyClientCertIfGiven",
					 "RequireAndVerifyClientCert",
					 NULL};
static const char *const header_names[] = {
	"Content-Security-Policy",   "X-Frame-Options",
	"X-Content-Type-Options",    "X-XSS-Protection",
	"Strict-Transport-Security", NULL};

/* ---- Values -------------------------------------------------------------- */

static int one_of(struct ctp_yctx *c, const char *path,
		  const struct ctp_ynode *v, const char *const *names)
{
	char list[256];
	size_t o = 0;
	struct ctp_yclip b;

	for (size_t i = 0; names[i]; i++)
		if (v->type == CTP_Y_SCALAR && !strcmp(v->str, names[i]))
			return (int)i;
	list[0] = '\0';
	for (size_t i = 0; names[i] && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
				      i ? ", " : "", names[i]);
	return ctp_y_fail(c, v, "'%s' must be one of %s, got %s", path, list,
			  ctp_y_got(&b, v));
}

/* PEM text: dirfd/path read whole (at most CTP_WEB_PEM_MAX bytes). */
static int read_pem(struct pass *p, const char *path, const struct ctp_ynode *v,
		    char **out)
{
	struct ctp_yclip b;
	char *buf = NULL, *s;
	size_t len = 0;
	int r = ctp_y_str(p->c, path, v, &buf);

	if (r < 0)
		return r;
	s = buf;
	buf = malloc(CTP_WEB_PEM_MAX + 2);
	if (!buf) {
		free(s);
		return -ENOMEM;
	}
	r = ctp_read_small(p->dirfd, s, buf, CTP_WEB_PEM_MAX + 2, &len);
	if (r == 0 && len > CTP_WEB_PEM_MAX)
		r = ctp_y_fail(p->c, v, "'%s' %s: larger than %u bytes", path,
			       ctp_y_clip(&b, s), CTP_WEB_PEM_MAX);
	else if (r == 0 && memchr(buf, '\0', len))
		r = ctp_y_fail(p->c, v, "'%s' %s: not PEM text (a NUL byte)",
			       path, ctp_y_clip(&b, s));
	else if (r < 0)
		r = ctp_y_fail(p->c, v, "'%s' %s: %s", path, ctp_y_clip(&b, s),
			       strerror(-r));
	free(s);
	if (r < 0) {
		free(buf);
		return r;
	}
	free(*out);
	*out = realloc(buf, len + 1);
	if (!*out)
		*out = buf;
	return 0;
}

/* "$2a$", "$2b$" or "$2y$", a cost of 04..31, '$', 53 of bcrypt's base64. */
static bool is_bcrypt(const char *s)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned cost;

	if (strlen(s) != BCRYPT_LEN || s[0] != '$' || s[1] != '2' ||
	    !strchr("aby", s[2]) || s[3] != '$' || s[4] < '0' || s[4] > '9' ||
	    s[5] < '0' || s[5] > '9' || s[6] != '$')
		return false;
	cost = (unsigned)(s[4] - '0') * 10 + (unsigned)(s[5] - '0');
	return cost >= 4 && cost <= 31 && strspn(s + 7, b64) == BCRYPT_LEN - 7;
}

/* ---- The schema ---------------------------------------------------------- */

/* 1 for a null (nothing under the key), 0 for a mapping, else the error
 * "'path' must be a mapping[ of what], got ..." (ctp_y_collection). */
static int map_or_null(struct pass *p, const struct ctp_ynode *m,
		       const char *path, const char *of)
{
	return ctp_y_collection(p->c, m, CTP_Y_MAP, path, of);
}

static int refused(struct ctp_yctx *c, const struct ctp_ynode *key,
		   const char *where, const char *why)
{
	return ctp_y_fail(c, key, "'%s%s' is not supported by ctprof-core: %s",
			  where, key->str, why);
}

/* tls_server_config's keys, by their index (TLS_...). */
static const char *const tls_keys[] = {
	"cert",
	"key",
	"client_ca",
	"cert_file",
	"key_file",
	"client_auth_type",
	"client_ca_file",
	"client_allowed_sans",
	"min_version",
	"max_version",
	"cipher_suites",
	"prefer_server_cipher_suites",
	"curve_preferences",
	NULL,
};
enum {
	TLS_CERT,
	TLS_KEY,
	TLS_CLIENT_CA,
	TLS_CERT_FILE,
	TLS_KEY_FILE,
	TLS_CLIENT_AUTH,
	TLS_CLIENT_CA_FILE,
	TLS_SANS,
	TLS_MIN_VERSION,
	TLS_MAX_VERSION,
	TLS_CIPHERS,
	TLS_PREFER_SERVER,
	TLS_CURVES,
};

/* The key node `name` among the pairs of m before pair i, else NULL. */
static const struct ctp_ynode *key_before(const struct ctp_ynode *m, size_t i,
					  const char *name)
{
	for (size_t j = 0; j < i; j += 2)
		if (!strcmp(m->kids[j]->str, name))
			return m->kids[j];
	return NULL;
}

/* Where PEM material `which` (TLS_CERT, TLS_KEY, TLS_CLIENT_CA) goes, noting
 * v as the node that gave it. */
static char **pem_slot(struct pass *p, int which, const struct ctp_ynode *v)
{
	struct ctp_webcfg *w = p->w;
	if (which == TLS_CERT) {
		p->cert = v;
		return &w->cert;
	}
	if (which == TLS_KEY) {
		p->key = v;
		return &w->key;
	}
	p->ca = v;
	return &w->client_ca;
}

/*
 * Pair i of tls_server_config, key index ki: PEM material inline (cert,
 * key, client_ca) or from a file (its _file twin), one of the two in
 * either order. The file twin after the inline one is refused before the
 * file is read; the inline one after its twin once it is read.
 */
static int conv_tls_pem(struct pass *p, const struct ctp_ynode *m, size_t i,
			int ki, const char *path)
{
	const struct ctp_ynode *k = m->kids[i], *v = m->kids[i + 1];
	bool file = ki == TLS_CERT_FILE || ki == TLS_KEY_FILE ||
		    ki == TLS_CLIENT_CA_FILE;
	int which = ki == TLS_CLIENT_CA_FILE ? TLS_CLIENT_CA
		    : file		     ? ki - TLS_CERT_FILE
					     : ki;
	int twin = file			    ? which
		   : which == TLS_CLIENT_CA ? TLS_CLIENT_CA_FILE
					    : which + TLS_CERT_FILE;
	const struct ctp_ynode *other = key_before(m, i, tls_keys[twin]);
	int r;

	if (!file || !other) {
		r = file ? read_pem(p, path, v, pem_slot(p, which, v))
			 : ctp_y_str(p->c, path, v, pem_slot(p, which, v));
		if (r < 0 || !other)
			return r;
	}
	return ctp_y_fail(p->c, k, "'%s' beside '%s': one of the two", path,
			  other->str);
}

/* Pair (k, v) of tls_server_config other than PEM material, key index ki. */
static int conv_tls_setting(struct pass *p, const struct ctp_ynode *k,
			    const struct ctp_ynode *v, int ki, const char *path)
{
	struct ctp_webcfg *w = p->w;
	int r = 0, b;

	switch (ki) {
	case TLS_CLIENT_AUTH:
		r = one_of(p->c, path, v, auth_types);
		if (r >= 0)
			w->client_auth = (enum ctp_web_client_auth)r;
		p->auth = v;
		break;
	case TLS_SANS:
		return refused(p->c, k, "tls_server_config.",
			       "no check of the client certificate's "
			       "names; use a client CA of its own");
	case TLS_MIN_VERSION:
	case TLS_MAX_VERSION:
		r = one_of(p->c, path, v, tls_versions);
		if (r >= 0 && ki == TLS_MIN_VERSION)
			w->min_version = 0x0301 + (unsigned)r;
		if (r >= 0 && ki == TLS_MAX_VERSION) {
			w->max_version = 0x0301 + (unsigned)r;
			p->vmax = v;
		}
		break;
	case TLS_CIPHERS:
	case TLS_CURVES:
		return refused(p->c, k, "tls_server_config.",
			       "GnuTLS's own choice is used (Go's "
			       "names do not map onto it)");
	case TLS_PREFER_SERVER:
		r = ctp_y_bool(p->c, path, v, &b);
		if (r >= 0)
			w->prefer_server_ciphers = b;
		break;
	}
	return r;
}

static int conv_tls(struct pass *p, const struct ctp_ynode *m)
{
	char path[80];
	int r = 0;

	if ((r = map_or_null(p, m, "tls_server_config", "")) != 0)
		return r;
	for (size_t i = 0; r >= 0 && i + 1 < m->n; i += 2) {
		const struct ctp_ynode *k = m->kids[i];
		int ki =
			ctp_y_key_index(p->c, k, tls_keys, "tls_server_config");

		if (ki < 0)
			return ki;
		ctp_y_path(path, sizeof(path), "tls_server_config.%s", k->str);
		if (ki <= TLS_KEY_FILE || ki == TLS_CLIENT_CA_FILE)
			r = conv_tls_pem(p, m, i, ki, path);
		else
			r = conv_tls_setting(p, k, m->kids[i + 1], ki, path);
	}
	return r < 0 ? r : 0;
}

static int conv_users(struct pass *p, const struct ctp_ynode *m)
{
	struct ctp_webcfg *w = p->w;
	struct ctp_yclip b;
	char path[96];
	int r = map_or_null(p, m, "basic_auth_users",
			    " of user names to bcrypt hashes");

	if (r != 0)
		return r < 0 ? r : 0;
	w->users = calloc(m->n / 2 + 1, sizeof(*w->users));
	if (!w->users)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct ctp_ynode *k = m->kids[i], *v = m->kids[i + 1];
		struct ctp_web_user *u = &w->users[w->n_users];

		if (!k->str[0] || strchr(k->str, ':'))
			return ctp_y_fail(p->c, k,
					  "user name '%s' cannot be sent in "
					  "basic auth (empty, or with ':')",
					  ctp_y_clip(&b, k->str));
		ctp_y_path(path, sizeof(path), "basic_auth_users.%s", k->str);
		if (v->type != CTP_Y_SCALAR || !is_bcrypt(v->str))
			return ctp_y_fail(
				p->c, v,
				"'%s' must be a bcrypt hash ($2y$, $2b$ or "
				"$2a$, a cost of 04 to 31, 60 characters in "
				"all, as `htpasswd -nBC 10 \"\"` prints), got "
				"%s",
				path,
				v->type == CTP_Y_SCALAR ? "something else"
							: ctp_y_got(&b, v));
		u->name = strdup(k->str);
		u->hash = strdup(v->str);
		w->n_users++;
		if (!u->name || !u->hash)
			return -ENOMEM;
	}
	return 0;
}

/* A header value goes out as it is: no control characters in it. */
static int conv_headers(struct pass *p, const struct ctp_ynode *m)
{
	struct ctp_webcfg *w = p->w;
	struct ctp_yclip b;
	char path[96];
	int r = map_or_null(p, m, "http_server_config.headers", "");

	if (r != 0)
		return r < 0 ? r : 0;
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct ctp_ynode *k = m->kids[i], *v = m->kids[i + 1];
		int ki = ctp_y_key_index(p->c, k, header_names,
					 "http_server_config.headers");
		const char *s;

		if (ki < 0)
			return ki;
		ctp_y_path(path, sizeof(path), "http_server_config.headers.%s",
			   k->str);
		if (v->type != CTP_Y_SCALAR)
			return ctp_y_fail(p->c, v,
					  "'%s' must be a string, got %s", path,
					  ctp_y_got(&b, v));
		s = v->str;
		for (const char *q = s; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				return ctp_y_fail(
					p->c, v, "'%s' has a control character",
					path);
		if (ki == 1 && s[0] && strcasecmp(s, "deny") &&
		    strcasecmp(s, "sameorigin"))
			return ctp_y_fail(
				p->c, v,
				"'%s' must be deny or sameorigin, got "
				"%s",
				path, ctp_y_got(&b, v));
		if (ki == 2 && s[0] && strcasecmp(s, "nosniff"))
			return ctp_y_fail(p->c, v,
					  "'%s' must be nosniff, got %s", path,
					  ctp_y_got(&b, v));
		if (!s[0]) /* blank: unset, as exporter-toolkit has it */
			continue;
		w->headers[w->n_headers].name = header_names[ki];
		w->headers[w->n_headers].value = strdup(s);
		if (!w->headers[w->n_headers++].value)
			return -ENOMEM;
	}
	return 0;
}

static int conv_http(struct pass *p, const struct ctp_ynode *m)
{
	static const char *const keys[] = {"http2", "headers", NULL};
	int v, r = map_or_null(p, m, "http_server_config", "");

	if (r != 0)
		return r < 0 ? r : 0;
	for (size_t i = 0; r >= 0 && i + 1 < m->n; i += 2) {
		int ki = ctp_y_key_index(p->c, m->kids[i], keys,
					 "http_server_config");

		if (ki < 0)
			return ki;
		if (ki == 0) {
			r = ctp_y_bool(p->c, "http_server_config.http2",
				       m->kids[i + 1], &v);
			if (r >= 0)
				p->w->http2 = v;
		} else {
			r = conv_headers(p, m->kids[i + 1]);
		}
	}
	return r;
}

static int conv_top(struct pass *p, const struct ctp_ynode *root)
{
	static const char *const keys[] = {
		"tls_server_config", "http_server_config", "basic_auth_users",
		"rate_limit", NULL};
	struct ctp_yclip b;
	int r = 0;

	if (root->type != CTP_Y_MAP)
		return ctp_y_fail(p->c, root,
				  "the top level must be a mapping of "
				  "settings, got %s",
				  ctp_y_got(&b, root));
	for (size_t i = 0; r >= 0 && i + 1 < root->n; i += 2) {
		const struct ctp_ynode *k = root->kids[i],
				       *v = root->kids[i + 1];
		int ki = ctp_y_key_index(p->c, k, keys, "the web config");

		if (ki < 0)
			return ki;
		if (ki == 0 && !ctp_ynode_is_null(v) &&
		    !(v->type == CTP_Y_MAP && !v->n)) {
			p->w->tls = true;
			r = conv_tls(p, v);
		} else if (ki == 1) {
			r = conv_http(p, v);
		} else if (ki == 2) {
			r = conv_users(p, v);
		} else if (ki == 3) {
			r = refused(p->c, k, "",
				    "serve captures at most once per "
				    "--min-interval; limit requests in a "
				    "proxy");
		}
	}
	return r;
}

/* ---- Checks once the whole file is read ---------------------------------- */

static int check_tls(struct pass *p, const struct ctp_ynode *root)
{
	struct ctp_webcfg *w = p->w;
	enum ctp_web_client_auth a = w->client_auth;
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_datum_t cd, kd, ad;
	gnutls_priority_t prio;
	const char *at = p->auth ? p->auth->str : "NoClientCert";
	int r;

	if (!w->cert || !w->key)
		return ctp_y_fail(p->c, root,
				  "'tls_server_config' needs %s (or %s)",
				  w->cert ? "key_file" : "cert_file",
				  w->cert ? "key" : "cert");
	if (w->client_ca && a == CTP_WEB_NO_CLIENT_CERT)
		return ctp_y_fail(p->c, p->ca,
				  "a client CA without a client_auth_type "
				  "that asks for a certificate "
				  "(RequireAndVerifyClientCert)");
	if (!w->client_ca && a != CTP_WEB_NO_CLIENT_CERT)
		return ctp_y_fail(p->c, p->auth,
				  "client_auth_type %s needs client_ca_file "
				  "(libmicrohttpd asks a client for its "
				  "certificate only with a client CA)",
				  at);
	if (w->max_version && w->max_version < w->min_version)
		return ctp_y_fail(p->c, p->vmax,
				  "'tls_server_config.max_version' is below "
				  "min_version");
	if (sym_gnutls_certificate_allocate_credentials(&cred) < 0)
		return -ENOMEM;
	cd = (gnutls_datum_t){(unsigned char *)w->cert,
			      (unsigned)strlen(w->cert)};
	kd = (gnutls_datum_t){(unsigned char *)w->key,
			      (unsigned)strlen(w->key)};
	r = sym_gnutls_certificate_set_x509_key_mem2(
		cred, &cd, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (r < 0) {
		sym_gnutls_certificate_free_credentials(cred);
		return ctp_y_fail(p->c, p->key,
				  "the server certificate and key do not "
				  "load as a pair: %s",
				  sym_gnutls_strerror(r));
	}
	if (w->client_ca) {
		ad = (gnutls_datum_t){(unsigned char *)w->client_ca,
				      (unsigned)strlen(w->client_ca)};
		r = sym_gnutls_certificate_set_x509_trust_mem(
			cred, &ad, GNUTLS_X509_FMT_PEM);
		if (r <= 0) {
			sym_gnutls_certificate_free_credentials(cred);
			return ctp_y_fail(p->c, p->ca,
					  "no CA certificate in the client "
					  "CA: %s",
					  r < 0 ? sym_gnutls_strerror(r)
						: "no PEM certificate");
		}
	}
	sym_gnutls_certificate_free_credentials(cred);
	/* The versions from min to max, the newest first. */
	size_t o = (size_t)snprintf(w->priorities, sizeof(w->priorities),
				    "NORMAL:-VERS-ALL");
	for (unsigned v = w->max_version ? w->max_version : 0x0304;
	     v >= w->min_version; v--)
		o += (size_t)snprintf(w->priorities + o,
				      sizeof(w->priorities) - o,
				      ":+VERS-TLS1.%u", v - 0x0301);
	if (w->prefer_server_ciphers)
		snprintf(w->priorities + o, sizeof(w->priorities) - o,
			 ":%%SERVER_PRECEDENCE");
	r = sym_gnutls_priority_init(&prio, w->priorities, NULL);
	if (r < 0)
		return ctp_y_fail(p->c, root,
				  "GnuTLS refuses the priorities '%s': %s",
				  w->priorities, sym_gnutls_strerror(r));
	sym_gnutls_priority_deinit(prio);
	return 0;
}

static int cache_new(struct ctp_webcfg *w)
{
	struct ctp_web_cache *k = calloc(1, sizeof(*k));
	unsigned long cost = 10;

	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	w->cache = k;
	if (sym_gnutls_rnd(GNUTLS_RND_KEY, k->key, sizeof(k->key)) < 0)
		return -EIO;
	if (w->n_users)
		cost = (unsigned long)(w->users[0].hash[4] - '0') * 10 +
		       (unsigned long)(w->users[0].hash[5] - '0');
	if (!sym_crypt_gensalt_rn("$2b$", cost, NULL, 0, k->dummy,
				  sizeof(k->dummy)))
		return errno ? -errno : -EINVAL;
	return 0;
}

int ctp_webcfg_load_buf(const char *name, const char *buf, size_t len,
			int dirfd, struct ctp_webcfg **ret, char *err,
			size_t errlen)
{
	struct ctp_yctx c = {
		name ? name : "<buffer>", buf, len, err, errlen, NULL};
	struct ctp_webcfg *w = calloc(1, sizeof(*w));
	struct pass p = {&c, w, dirfd, NULL, NULL, NULL, NULL, NULL};
	struct ctp_ynode *root = NULL;
	int r = -ENOMEM;

	if (err && errlen)
		err[0] = '\0';
	if (!w || !(w->path = strdup(c.name)))
		goto out;
	/* Its checks are GnuTLS's and libcrypt's (loaded by serve before
	 * it reads the file; here for any other caller). */
	if ((r = ctp_httplib_load(err, errlen)) < 0)
		goto out;
	w->min_version = 0x0303; /* exporter-toolkit's default, TLS12 */
	w->prefer_server_ciphers = true;
	w->http2 = true;
	if (len > CTP_WEB_CONFIG_MAX) {
		ctp_y_fail_file(&c, "larger than %u bytes for a web config",
				CTP_WEB_CONFIG_MAX);
		r = -EFBIG;
		goto out;
	}
	r = ctp_yaml_parse(&c, &root);
	if (r >= 0 && root && !ctp_ynode_is_null(root))
		r = conv_top(&p, root);
	if (r >= 0 && w->tls)
		r = check_tls(&p, root);
	if (r >= 0)
		r = cache_new(w);
out:
	ctp_ynode_free(root);
	if (r < 0) {
		if (err && errlen && !err[0])
			ctp_y_fail_file(&c, "%s", strerror(-r));
		ctp_webcfg_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

int ctp_webcfg_load(const char *path, struct ctp_webcfg **ret, char *err,
		    size_t errlen)
{
	struct ctp_yctx c = {path, NULL, 0, err, errlen, NULL};
	char dir[PATH_MAX], *buf = malloc(CTP_WEB_CONFIG_MAX + 2);
	const char *slash = strrchr(path, '/');
	size_t len = 0;
	int r, dirfd = -1;

	if (!buf)
		return -ENOMEM;
	/* exporter-toolkit reads a relative cert_file against the config
	 * file's directory. */
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s",
			 slash == path ? 1 : (int)(slash - path), path);
	dirfd = open(slash ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	r = dirfd < 0 ? -errno
		      : ctp_read_small(dirfd, slash ? slash + 1 : path, buf,
				       CTP_WEB_CONFIG_MAX + 2, &len);
	if (r < 0)
		ctp_y_fail_file(&c, "%s", strerror(-r));
	else
		r = ctp_webcfg_load_buf(path, buf, len, dirfd, ret, err,
					errlen);
	if (dirfd >= 0)
		close(dirfd);
	free(buf);
	return r;
}

void ctp_webcfg_free(struct ctp_webcfg *w)
{
	if (!w)
		return;
	free(w->path);
	free(w->cert);
	if (w->key)
		explicit_bzero(w->key, strlen(w->key));
	free(w->key);
	free(w->client_ca);
	for (size_t i = 0; i < w->n_users; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	free(w->users);
	for (size_t i = 0; i < w->n_headers; i++)
		free(w->headers[i].value);
	if (w->cache) {
		pthread_mutex_destroy(&w->cache->lock);
		explicit_bzero(w->cache, sizeof(*w->cache));
	}
	free(w->cache);
	free(w);
}

/* ---- Serving ------------------------------------------------------------- */

void ctp_webcfg_mhd_options(const struct ctp_webcfg *w,
			    struct MHD_OptionItem *opts, size_t n,
			    unsigned *flags)
{
	size_t k = 0;

	*flags = 0;
	if (w && w->tls && n >= 6) {
		opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT,
						    0, w->cert};
		opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0,
						    w->key};
		if (w->client_ca)
			opts[k++] = (struct MHD_OptionItem){
				MHD_OPTION_HTTPS_MEM_TRUST, 0, w->client_ca};
		opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES,
						    0, (void *)w->priorities};
		*flags = MHD_USE_TLS;
	}
	if (n)
		opts[k] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
}

/* Equal bytes, in a time that depends on n only. */
static bool same(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* Does the client's certificate satisfy client_auth_type? */
static bool cert_ok(const struct ctp_webcfg *w, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t s;
	unsigned n = 0, status = 1;
	gnutls_typed_vdata_st purpose = {
		GNUTLS_DT_KEY_PURPOSE_OID,
		(unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
	bool given, verified;

	if (w->client_auth <= CTP_WEB_REQUEST_CLIENT_CERT)
		return true;
	ci = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	s = ci ? (gnutls_session_t)ci->tls_session : NULL;
	if (!s)
		return false;
	given = sym_gnutls_certificate_get_peers(s, &n) && n > 0;
	verified = given &&
		   sym_gnutls_certificate_verify_peers(s, &purpose, 1,
						       &status) == 0 &&
		   status == 0;
	switch (w->client_auth) {
	case CTP_WEB_REQUIRE_ANY_CLIENT_CERT:
		return given;
	case CTP_WEB_VERIFY_CLIENT_CERT_IF_GIVEN:
		return !given || verified;
	default:
		return verified;
	}
}

static void login_digest(const struct ctp_web_cache *k, const char *user,
			 const char *pass, uint8_t out[DIGEST_LEN])
{
	gnutls_hmac_hd_t h;

	memset(out, 0, DIGEST_LEN);
	if (sym_gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, k->key,
				 sizeof(k->key)) < 0)
		return;
	sym_gnutls_hmac(h, user, strlen(user) + 1);
	sym_gnutls_hmac(h, pass, strlen(pass));
	sym_gnutls_hmac_deinit(h, out);
}

static bool login_seen(struct ctp_web_cache *k, const uint8_t d[DIGEST_LEN])
{
	bool hit = false;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < k->n; i++)
		hit |= same(k->seen[i], d, DIGEST_LEN);
	pthread_mutex_unlock(&k->lock);
	return hit;
}

static void login_remember(struct ctp_web_cache *k, const uint8_t d[DIGEST_LEN])
{
	pthread_mutex_lock(&k->lock);
	memcpy(k->seen[k->next], d, DIGEST_LEN);
	k->next = (k->next + 1) % CTP_WEB_AUTH_CACHE;
	if (k->n < CTP_WEB_AUTH_CACHE)
		k->n++;
	pthread_mutex_unlock(&k->lock);
}

static bool login_ok(const struct ctp_webcfg *w, const char *user,
		     const char *pass)
{
	const struct ctp_web_user *u = NULL;
	struct crypt_data *cd;
	uint8_t d[DIGEST_LEN];
	const char *out;
	bool ok;

	for (size_t i = 0; i < w->n_users; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	login_digest(w->cache, user, pass, d);
	if (u && login_seen(w->cache, d))
		return true;
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	out = sym_crypt_rn(pass, u ? u->hash : w->cache->dummy, cd,
			   sizeof(*cd));
	ok = u && out && strlen(out) == BCRYPT_LEN &&
	     same(out, u->hash, BCRYPT_LEN);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok)
		login_remember(w->cache, d);
	return ok;
}

static bool basic_ok(const struct ctp_webcfg *w, struct MHD_Connection *c)
{
	bool ok = false;
#if MHD_VERSION >= 0x00097701
	struct MHD_BasicAuthInfo *a =
		sym_MHD_basic_auth_get_username_password3(c);

	/* A NUL inside would cut the password bcrypt sees. */
	if (a && a->username && a->password &&
	    strlen(a->username) == a->username_len &&
	    strlen(a->password) == a->password_len)
		ok = login_ok(w, a->username, a->password);
	if (a && a->password)
		explicit_bzero(a->password, a->password_len);
	sym_MHD_free(a);
#else
	char *pass = NULL,
	     *user = sym_MHD_basic_auth_get_username_password(c, &pass);

	if (user && pass)
		ok = login_ok(w, user, pass);
	if (pass)
		explicit_bzero(pass, strlen(pass));
	sym_MHD_free(user);
	sym_MHD_free(pass);
#endif
	return ok;
}

unsigned ctp_web_auth(const struct ctp_webcfg *w, struct MHD_Connection *c)
{
	if (!w)
		return 0;
	if (w->tls && !cert_ok(w, c))
		return MHD_HTTP_FORBIDDEN;
	if (w->n_users && !basic_ok(w, c))
		return MHD_HTTP_UNAUTHORIZED;
	return 0;
}

void ctp_web_add_headers(const struct ctp_webcfg *w, struct MHD_Response *r)
{
	for (size_t i = 0; w && i < w->n_headers; i++)
		sym_MHD_add_response_header(r, w->headers[i].name,
					    w->headers[i].value);
}

enum MHD_Result ctp_web_refuse(const struct ctp_webcfg *w,
			       struct MHD_Connection *c, unsigned status)
{
	static const char m401[] = "401 unauthorized: basic auth needed\n",
			  m403[] = "403 forbidden: a client certificate "
				   "signed by the client CA is needed\n";
	bool auth = status == MHD_HTTP_UNAUTHORIZED;
	struct MHD_Response *r = sym_MHD_create_response_from_buffer(
		auth ? sizeof(m401) - 1 : sizeof(m403) - 1,
		(void *)(auth ? m401 : m403), MHD_RESPMEM_PERSISTENT);
	enum MHD_Result q;

	if (!r)
		return MHD_NO;
	sym_MHD_add_response_header(r, "Content-Type",
				    "text/plain; charset=utf-8");
	if (auth)
		sym_MHD_add_response_header(r, "WWW-Authenticate",
					    "Basic realm=\"" REALM "\"");
	ctp_web_add_headers(w, r);
	q = sym_MHD_queue_response(c, status, r);
	sym_MHD_destroy_response(r);
	return q;
}
