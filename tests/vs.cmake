# compare A0 A1 --vs B0 B1 (core/analysis/vs.c): the Mann-Whitney U test
# against published values (core/analysis/stats.c), the table on
# hand-built runs, and a live run of pinned against free threads.
ctp_add_test(test_stats test_stats.c LIBS ctpcore m)
ctp_add_test(test_vs test_vs.c snapbuild.c e2e_util.c LIBS ctpcore m)
