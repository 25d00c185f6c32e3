# `trend DIR` (core/analysis/trend.c, core/cli/trend_cmd.c): a hand-built
# recording in which a process grows and ends before the last file, one
# shrinks, a pid is reused and a file in the middle is corrupt; then a live
# `record` of a child the test grows and kills, first under --view mem.
ctp_add_test(test_trend test_trend.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_trend ctprof-core plugin-procfs-stat plugin-smaps)
