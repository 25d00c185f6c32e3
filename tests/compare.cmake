# `compare BASE CAND` (core/analysis/compare.c): hand-built snapshots with golden
# outputs under tests/golden/compare/, and a live end-to-end run.
ctp_add_test(test_compare test_compare.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_compare ctprof-core)
ctp_add_test(test_compare_live test_compare_live.c e2e_util.c LIBS ctpcore)
add_dependencies(test_compare_live ctprof-core plugin-procfs-stat)

# dump and compare share one JSON escaper: odd kernel bytes survive a JSON
# parser (Python's json module); compare and show one CSV escaper.
ctp_add_test(test_json_escape test_json_escape.c snapbuild.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_json_escape ctprof-core)
# The live test ranks groups by the CPU they used between two snapshots:
# another test burning CPU meanwhile could outrank its burner.
set_tests_properties(test_compare_live PROPERTIES RUN_SERIAL TRUE)

# Renamed cgroups (core/analysis/rename.c) and the parity rules of issue 14
# (from-zero ranking, ratios without percent, cut sections) on hand-built
# pairs, through the real binary.
ctp_add_test(test_compare_rename test_compare_rename.c snapbuild.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_compare_rename ctprof-core)
# The interval model (core/analysis/interval.c) on hand-built captures:
# per-task changes, resets, new and gone members, a renamed cgroup, the
# exited tasks, each task's own interval, stepping along a recording.
ctp_add_test(test_interval test_interval.c snapbuild.c e2e_util.c LIBS ctpcore
             m)
# Exited tasks on a cgroup v1 axis (core/analysis/exitsum.c, group.c): each
# keyed by its v1 paths as a snapshot saw it, its process or its parent, in
# compare's groups and the exporters' series, on hand-built captures.
ctp_add_test(test_exit_v1 test_exit_v1.c snapbuild.c e2e_util.c LIBS ctpcore
             m)
# compare's coverage line on a hand-built pair (core/analysis/coverage.c).
ctp_add_test(test_coverage test_coverage.c snapbuild.c e2e_util.c LIBS ctpcore)
# The property of issue 28: on a host loaded by the test's own spinners,
# with captures made slow by a process that grows to 8000 threads, no
# thread's on-CPU plus run-queue share exceeds 100% (each task's change
# over its own interval), in a pid namespace of its own. Skips without
# root or taskstats. It loads both CPUs, so it never runs beside another
# test.
ctp_add_test(test_interval_live test_interval_live.c e2e_util.c LIBS ctpcore
             Threads::Threads m)
add_dependencies(test_interval_live ctprof-core plugin-procfs-stat
                 plugin-schedstat plugin-taskstats)
set_tests_properties(test_interval_live PROPERTIES RUN_SERIAL TRUE)
