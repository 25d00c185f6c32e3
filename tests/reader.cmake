# The snapshot readers' command lines (core/cli/readcli.c: --config,
# --max-decompressed, operand errors of show/dump/compare).
ctp_add_test(test_reader_cli test_reader_cli.c snapbuild.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_reader_cli ctprof-core)

# Decompression bombs: refused with a clear message, and `show`'s peak RSS
# under the cap plus docs/FORMAT.md's constant (RSS not checked under ASan).
ctp_add_test(test_reader_bounds test_reader_bounds.c snapbuild.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_reader_bounds ctprof-core)

# Permission denials tallied and hinted end to end, the capture run as
# nobody (root only; skipped otherwise).
ctp_add_test(test_denied test_denied.c e2e_util.c LIBS ctpcore)
add_dependencies(test_denied ctprof-core plugin-procfs-stat)
