/* SPDX-License-Identifier: MIT */
/*
 * serve's libraries, loaded by serve alone: libmicrohttpd (the HTTP
 * server), GnuTLS (its TLS, and --web-config's certificate checks and
 * digests) and libcrypt (bcrypt). Linked into the executable, they and
 * their ten dependencies (p11-kit, idn2, unistring, tasn1, nettle, hogweed,
 * gmp, ffi ...) were mapped, relocated and constructed at every start of
 * every command, a capture's included; dlopen'ed here, only `serve` pays.
 * Every function is called through its pointer sym_<name> (systemd's
 * dlopen convention), declared with the library header's own type.
 */
#ifndef CTP_CLI_HTTPLIB_H
#define CTP_CLI_HTTPLIB_H

#include <stddef.h>

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

/* Basic auth: the call that gives a password's length when the headers
 * have it (webconfig.c). */
#if MHD_VERSION >= 0x00097701
#define CTP_HTTPLIB_BASIC_AUTH(X) X(0, MHD_basic_auth_get_username_password3)
#else
#define CTP_HTTPLIB_BASIC_AUTH(X) X(0, MHD_basic_auth_get_username_password)
#endif

/* X(library, function): 0 libmicrohttpd, 1 GnuTLS, 2 libcrypt. */
#define CTP_HTTPLIB_SYMS(X)                                                    \
	X(0, MHD_add_response_header)                                          \
	CTP_HTTPLIB_BASIC_AUTH(X)                                              \
	X(0, MHD_create_response_from_buffer)                                  \
	X(0, MHD_create_response_from_buffer_with_free_callback_cls)           \
	X(0, MHD_destroy_response)                                             \
	X(0, MHD_free)                                                         \
	X(0, MHD_get_connection_info)                                          \
	X(0, MHD_get_connection_values)                                        \
	X(0, MHD_lookup_connection_value)                                      \
	X(0, MHD_queue_response)                                               \
	X(0, MHD_quiesce_daemon)                                               \
	X(0, MHD_start_daemon)                                                 \
	X(0, MHD_stop_daemon)                                                  \
	X(1, gnutls_certificate_allocate_credentials)                          \
	X(1, gnutls_certificate_free_credentials)                              \
	X(1, gnutls_certificate_get_peers)                                     \
	X(1, gnutls_certificate_set_x509_key_mem2)                             \
	X(1, gnutls_certificate_set_x509_trust_mem)                            \
	X(1, gnutls_certificate_verify_peers)                                  \
	X(1, gnutls_hmac)                                                      \
	X(1, gnutls_hmac_deinit)                                               \
	X(1, gnutls_hmac_init)                                                 \
	X(1, gnutls_priority_deinit)                                           \
	X(1, gnutls_priority_init)                                             \
	X(1, gnutls_rnd)                                                       \
	X(1, gnutls_strerror)                                                  \
	X(2, crypt_gensalt_rn)                                                 \
	X(2, crypt_rn)

#define CTP_HTTPLIB_DECLARE(lib, f) extern __typeof__(f) *sym_##f;
CTP_HTTPLIB_SYMS(CTP_HTTPLIB_DECLARE)
#undef CTP_HTTPLIB_DECLARE

/* Load the three libraries (RTLD_NOW | RTLD_LOCAL) and set every sym_
 * pointer; once per process, later calls return the first one's result.
 * 0, or -ENOENT with the library or symbol missing and dlerror() in err. */
int ctp_httplib_load(char *err, size_t errlen);

#endif
