# compare A0 A1 --vs B0 B1 (core/analysis/vs.c): the Mann-Whitney U test
# against published values (core/analysis/stats.c), the table on
# hand-built runs, and a live run of pinned against free threads.
ctp_add_test(test_stats test_stats.c LIBS ctpcore m)
ctp_add_test(test_vs test_vs.c snapbuild.c e2e_util.c LIBS ctpcore m)
# Pinned against free busy threads on this host: the pinned run's
# run-queue wait is higher. It loads every CPU, so it runs alone.
ctp_add_test(test_vs_live test_vs_live.c e2e_util.c LIBS ctpcore
             Threads::Threads)
add_dependencies(test_vs_live ctprof-core plugin-procfs-stat plugin-taskstats)
set_tests_properties(test_vs_live PROPERTIES RUN_SERIAL TRUE)
