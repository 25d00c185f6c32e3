# "Did you mean" for commands and plugin names (core/util/suggest.c).
ctp_add_test(test_suggest test_suggest.c LIBS ctp_util)
