# `serve --web-config` (core/cli/webconfig.c): the exporter-toolkit web
# config schema on the fixture certificates (tests/fixtures/webcfg), every
# key and every error with its position; then serve over TLS: certificates
# made by openssl, curl's answers (basic auth, client certificates, plain
# HTTP to the TLS port) and a real Prometheus scraping with basic_auth and
# tls_config (alone: Prometheus and two servers).
ctp_add_test(test_webconfig test_webconfig.c LIBS ctpcore)

ctp_add_test(test_serve_tls test_serve_tls.c e2e_util.c LIBS ctpcore PkgConfig::LIBCRYPT)
add_dependencies(test_serve_tls ctprof-core plugin-procfs-stat)
set_tests_properties(test_serve_tls PROPERTIES RUN_SERIAL TRUE)
