# Least privilege (core/util/priv.c): the user switch, the capability sets,
# NoNewPrivs and the seccomp filters, read back from /proc/self/status of a
# forked child; a libmicrohttpd server answering under the serving
# allow-list; a capture as nobody with the default configuration's
# capabilities reading another user's /proc/PID/io. Root only (else 77).
ctp_add_test(test_priv test_priv.c e2e_util.c LIBS ctpcore PkgConfig::MHD)
add_dependencies(test_priv ctprof-core)
