# `record` (issue 15): a recorder on the fixture tree, with abi-crash
# (abi.cmake) for a crash in the middle of a recording.
ctp_add_test(test_record test_record.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_record PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_record ctprof-core plugin-procfs-stat
                 abi-plugin-abi-crash abi-plugin-abi-good abi-plugin-abi-twin)

# The soak (label `soak`): 300 captures of the live host by one recorder in
# the gate, 1,000 at full size (`tools/dev.sh soak`, about two minutes),
# descriptors and RSS flat. Alone, as `stress` is.
ctp_add_test(test_record_soak test_record_soak.c e2e_util.c LIBS ctpcore)
add_dependencies(test_record_soak ctprof-core plugin-taskstats
                 plugin-procfs-stat)
set_tests_properties(test_record_soak PROPERTIES LABELS soak TIMEOUT 900
                     RUN_SERIAL TRUE)
# Not a soak (about 15 seconds): `record -j 2` with taskstats and
# procfs-stat, 150 captures 100 ms apart, its descriptors flat (issue 29).
add_test(NAME test_record_workers COMMAND test_record_soak workers)
set_tests_properties(test_record_workers PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 300 ENVIRONMENT "CTPROF_VIEW_DIR=${PROJECT_SOURCE_DIR}/views")

# Exited tasks in a recording, live (taskstats exit notifications): 50
# reaped children in the exited tables, and compare's coverage.
ctp_add_test(test_record_exits test_record_exits.c e2e_util.c LIBS ctpcore)
add_dependencies(test_record_exits ctprof-core plugin-procfs-stat
                 plugin-taskstats plugin-cgroup)
# Alone: the coverage it checks is of the whole host's CPU.
set_tests_properties(test_record_exits PROPERTIES RUN_SERIAL TRUE)

# A recording under thread churn (~1,000 exits a second): it goes on, and
# every exit is a row or counted lost.
ctp_add_test(test_record_churn test_record_churn.c e2e_util.c
             LIBS ctpcore Threads::Threads)
add_dependencies(test_record_churn ctprof-core plugin-procfs-stat
                 plugin-taskstats)

# Write failures (issue 28): a full disk and a read-only filesystem, on
# tmpfs mounts in a mount namespace of the test's own (root; else skipped).
ctp_add_test(test_record_fs test_record_fs.c e2e_util.c LIBS ctpcore)
add_dependencies(test_record_fs ctprof-core plugin-procfs-stat)
