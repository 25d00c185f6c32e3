# The psi and sched_ext plugins: parsers on literal text, each plugin
# loaded into a real engine by the test harness (tests/harness.h), and end to end (fixture trees under
# tests/fixtures/psi and tests/fixtures/scx, and this host).
ctp_add_test(test_psi_parse test_psi_parse.c LIBS ctp_psi_parse)
ctp_add_test(test_scx_parse test_scx_parse.c LIBS ctp_scx_parse)

# The built plugins loaded into a real engine (tests/harness.h).
ctp_add_test(test_psi_plugin test_psi_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_psi_plugin plugin-psi)

# One executable, two ctest entries: the fixture trees and this host.
ctp_add_test(test_psi_e2e test_psi_e2e.c test_psi_run.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_psi_e2e ctprof-core plugin-psi)
add_test(NAME test_psi_live COMMAND test_psi_e2e live)
set_tests_properties(test_psi_live PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

ctp_add_test(test_scx_plugin test_scx_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_scx_plugin plugin-sched_ext)

# One executable, two ctest entries: the fixture trees and this host (which
# skips, 77, on a kernel with sched_ext).
ctp_add_test(test_scx_e2e test_scx_e2e.c test_psi_run.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_scx_e2e ctprof-core plugin-sched_ext plugin-schedstat)
add_test(NAME test_scx_live COMMAND test_scx_e2e live)
set_tests_properties(test_scx_live PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
