# Views (docs/VIEWS.md): the shipped view files, the parser's messages, and
# `show` of a hand-built snapshot against tests/golden/views/.
ctp_add_test(test_views test_views.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_views ctprof-core)
