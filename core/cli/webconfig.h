/* SPDX-License-Identifier: MIT */
/*
 * `serve --web-config FILE`: TLS and basic authentication in the YAML of
 * Prometheus' exporter-toolkit (docs/web-configuration.md there), read
 * once at startup, and what serve asks of it: the libmicrohttpd options
 * that turn TLS on, and a check of each request. Private to the core.
 *
 * The subset (docs/EXPORT.md "TLS and authentication"):
 *   tls_server_config: cert_file | cert, key_file | key, client_ca_file |
 *     client_ca, client_auth_type, min_version, max_version,
 *     prefer_server_cipher_suites
 *   basic_auth_users: {NAME: BCRYPT-HASH, ...}
 *   http_server_config: http2 (HTTP/1.1 is served either way), headers
 * Other exporter-toolkit keys (client_allowed_sans, cipher_suites,
 * curve_preferences, rate_limit) are refused by name, unknown keys with
 * "did you mean": a setting that would be ignored is never accepted.
 */
#ifndef CTP_CORE_WEBCONFIG_H
#define CTP_CORE_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

/* exporter-toolkit's client_auth_type values, Go's tls.ClientAuthType. */
enum ctp_web_client_auth {
	CTP_WEB_NO_CLIENT_CERT,
	CTP_WEB_REQUEST_CLIENT_CERT,
	CTP_WEB_REQUIRE_ANY_CLIENT_CERT,
	CTP_WEB_VERIFY_CLIENT_CERT_IF_GIVEN,
	CTP_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

/* The most a certificate, key or CA file may hold. */
#define CTP_WEB_PEM_MAX (1u << 20)
/* The most the web config file itself may hold. */
#define CTP_WEB_CONFIG_MAX (64u * 1024)
/* Successful logins remembered, so a scrape costs one bcrypt only on the
 * first time a (user, password) is seen; the oldest is forgotten first. */
#define CTP_WEB_AUTH_CACHE 16

struct ctp_web_user {
	char *name;
	char *hash; /* "$2a$", "$2b$" or "$2y$" bcrypt, 60 bytes */
};

struct ctp_web_header {
	const char *name; /* one of exporter-toolkit's five */
	char *value;
};

struct ctp_web_cache;

struct ctp_webcfg {
	char *path;
	bool tls;
	/* PEM text, NUL-terminated (files read at load, or inline). */
	char *cert, *key, *client_ca;
	enum ctp_web_client_auth client_auth;
	/* 0x0301 (TLS 1.0) .. 0x0304 (TLS 1.3) */
	unsigned min_version, max_version;
	bool prefer_server_ciphers;
	char priorities[160]; /* the GnuTLS priority string they make */
	struct ctp_web_user *users;
	size_t n_users;
	struct ctp_web_header headers[5];
	size_t n_headers;
	bool http2;
	struct ctp_web_cache *cache;
};

/*
 * Parse a web config held in buf (name for messages) and load the files
 * it names, relative paths against dirfd (the config file's directory).
 * Every error is one line in err, "NAME:LINE:COL: ..." when it has a
 * place. Returns 0 with a new config in *ret, or a negative errno.
 */
int ctp_webcfg_load_buf(const char *name, const char *buf, size_t len,
			int dirfd, struct ctp_webcfg **ret, char *err,
			size_t errlen);
/* The same for the file at path (at most CTP_WEB_CONFIG_MAX bytes). */
int ctp_webcfg_load(const char *path, struct ctp_webcfg **ret, char *err,
		    size_t errlen);
void ctp_webcfg_free(struct ctp_webcfg *w);

/*
 * The libmicrohttpd options of w into opts (room for n, at least 6), ended
 * by MHD_OPTION_END, for MHD_OPTION_ARRAY; the daemon flags to add in
 * *flags (MHD_USE_TLS when TLS is on). The options point into w, which
 * must outlive the daemon. NULL w: no options, no flags.
 */
void ctp_webcfg_mhd_options(const struct ctp_webcfg *w,
			    struct MHD_OptionItem *opts, size_t n,
			    unsigned *flags);

/*
 * May this request be answered? 0 when it may; 403 when the client
 * certificate that client_auth_type asks for is missing or does not
 * verify against the client CA (for the TLS web client purpose); 401 when
 * basic_auth_users is set and the request's user and password do not
 * match one (bcrypt, compared in constant time; an unknown user costs a
 * bcrypt as a known one does). NULL w: always 0. Thread-safe.
 */
unsigned ctp_web_auth(const struct ctp_webcfg *w, struct MHD_Connection *c);
/* Queue the refusal of status (401 with WWW-Authenticate: Basic
 * realm="ctprof-core", or 403) on c. */
enum MHD_Result ctp_web_refuse(const struct ctp_webcfg *w,
			       struct MHD_Connection *c, unsigned status);
/* Add http_server_config.headers to a response. NULL w: nothing. */
void ctp_web_add_headers(const struct ctp_webcfg *w, struct MHD_Response *r);

#endif
