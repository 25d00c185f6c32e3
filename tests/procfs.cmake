# Scanners (toolkit/scan.c) and the procfs-stat plugin.
ctp_add_test(test_scan test_scan.c LIBS ctp_plugin_util)
ctp_add_test(test_procfs_parse test_procfs_parse.c LIBS ctp_procfs_parse)

# Drives the built procfs-stat.so loaded into a real engine (tests/harness.h).
ctp_add_test(test_procfs_plugin test_procfs_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_procfs_plugin plugin-procfs-stat)

# Every plugin built into the plugin dir exports only ctp_plugin_v1.
add_test(NAME plugin_exports
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/plugin_exports.sh
                 ${CTP_PLUGIN_BUILD_DIR})

# Live /proc (issue 15): reaped children's CPU time and I/O, and a joined
# thread's CPU time, on the process row (procfs-stat and io). Exits 77 when
# the kernel has no io file or no directory counts write_bytes.
ctp_add_test(test_proc_totals_live test_proc_totals_live.c e2e_util.c
             LIBS ctpcore Threads::Threads)
add_dependencies(test_proc_totals_live ctprof-core plugin-procfs-stat plugin-io)

# Live /proc (issue 17): the fields procfs-stat and schedstat can take from
# the taskstats source equal what their files say, on quiescent threads;
# thread names from stat equal the comm files. Exits 77 without root or a
# taskstats source that serves here. Issue 33: every value procfs-stat, io,
# schedstat and taskstats can take from the source "task" equals the
# file's (that case skipped while no plugin serves "task" here).
ctp_add_test(test_sources_live test_sources_live.c e2e_util.c
             LIBS ctpcore Threads::Threads)
add_dependencies(test_sources_live ctprof-core plugin-procfs-stat
                 plugin-schedstat plugin-taskstats plugin-io)
if(TARGET ctp_bpftask)
  add_dependencies(test_sources_live plugin-bpf-task)
  # bpf-task's program loaded by libbpf's skeleton (the fallback).
  add_test(NAME test_sources_live_libbpf COMMAND test_sources_live)
  set_tests_properties(test_sources_live_libbpf PROPERTIES SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT
                       "CTP_BPFTASK_LOADER=libbpf;CTPROF_VIEW_DIR=${PROJECT_SOURCE_DIR}/views")
endif()
set_tests_properties(test_sources_live PROPERTIES SKIP_RETURN_CODE 77)

# The consumers of the per-task source "task" (issue 33), end to end on
# tests/fixtures/proc-tasksrc: procfs-stat, io, schedstat and taskstats
# take each value the test plugin abi-tasksrc offers, their files' where
# it does not, and read no file the source covers.
ctp_abi_plugin(abi-tasksrc abi_tasksrc.c)
ctp_add_test(test_task_source test_task_source.c e2e_util.c
             LIBS ctpcore Threads::Threads)
target_compile_definitions(test_task_source PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
# The per-process source "process" the same way, on
# tests/fixtures/proc-procsrc with abi-procsrc (abi-procsrc-fail: its init
# fails after adding its sources).
ctp_abi_plugin(abi-procsrc abi_procsrc.c)
ctp_abi_plugin(abi-procsrc-fail abi_procsrc.c ABI_PROCSRC_FAIL_INIT=1)
add_dependencies(test_task_source ctprof-core abi-plugin-abi-tasksrc
                 abi-plugin-abi-procsrc abi-plugin-abi-procsrc-fail
                 plugin-procfs-stat plugin-io plugin-schedstat plugin-taskstats)

# Bound values (core/capture/bind.c, ctp_api.field_bind): what a binding
# accepts, the source it resolves to, and the per-thread copy from a value
# source's bytes (test_task_source runs it end to end).
ctp_add_test(test_bind test_bind.c LIBS ctpcore)
