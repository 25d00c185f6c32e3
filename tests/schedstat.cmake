# The schedstat plugin: parsers, the plugin through the harness over a real engine, and end to
# end on tests/fixtures/proc-sched and on this host's /proc.
ctp_add_test(test_schedstat_parse test_schedstat_parse.c
             LIBS ctp_schedstat_parse)

ctp_add_test(test_schedstat_plugin test_schedstat_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_schedstat_plugin plugin-schedstat)

# One executable, three ctest entries: the fixture tree, and two live checks
# that each skip (77) on a kernel without what they measure.
ctp_add_test(test_e2e_sched test_e2e_sched.c e2e_util.c
             LIBS ctpcore Threads::Threads)
add_dependencies(test_e2e_sched ctprof-core plugin-schedstat)
add_test(NAME test_live_sched_run_time COMMAND test_e2e_sched live-run-time)
add_test(NAME test_live_sched_absent COMMAND test_e2e_sched live-absent)
set_tests_properties(test_live_sched_run_time test_live_sched_absent
                     PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
