# The live tests beside a 10,000-thread load (label `load`, not in the
# gate: `tools/dev.sh test-load` runs them). Each runs its test through
# ctest, so a test's own arguments, properties and skips hold, while
# tests/load/with_load.sh keeps 10,000 sleeping threads (100 processes of
# 100) on the host. A live test must check what it controls, never the
# host's quiet: this is where that is shown. One at a time (the load is
# the host's, and each test is measured beside it alone).
set(CTP_LIVE_TESTS
  test_live test_cgroup_live test_e2e_cgroup_live test_compare_live
  test_group_live_taskstats test_host_live test_jemalloc_live
  test_jemalloc_e2e test_appstats_e2e test_io_live test_smaps_live
  test_proc_totals_live test_sources_live test_psi_live test_scx_live
  test_taskstats_live test_live_sched_run_time test_live_sched_absent
  test_record_exits test_record_churn test_terminal test_walk_source_live)
foreach(t ${CTP_LIVE_TESTS})
  if(NOT TEST ${t})
    message(FATAL_ERROR "tests/load/live.cmake: no test ${t}")
  endif()
  add_test(NAME load_${t}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/load/with_load.sh
            $<TARGET_FILE:ctp-bench-load> 10000 100
            ${CMAKE_CTEST_COMMAND} --test-dir ${CMAKE_BINARY_DIR}
            -R ^${t}$ --no-tests=error --output-on-failure --timeout 900)
  set_tests_properties(load_${t} PROPERTIES LABELS load RUN_SERIAL TRUE
                       TIMEOUT 1200)
endforeach()
