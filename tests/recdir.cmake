# A recording's directory (core/cli/recdir.c): the file-name grammar, the
# --from/--to time forms, picks that skip what is not a readable snapshot,
# and show/export/compare DIR through the binary.
ctp_add_test(test_recdir test_recdir.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_recdir ctprof-core)
