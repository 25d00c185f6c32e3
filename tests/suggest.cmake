# "Did you mean" for commands and plugin names (core/suggest.c).
ctp_add_test(test_suggest test_suggest.c LIBS ctpcore)
