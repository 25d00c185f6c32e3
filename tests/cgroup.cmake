# The cgroup collector (plugins/cgroup): parsers on literal kernel text, the
# built plugin through the harness over a real engine, the three fixture layouts (pure v2,
# hybrid, pure v1) end to end, and the live host (creates and removes its
# own v1 and v2 cgroups; skips, 77, where a layout or root is missing).
ctp_add_test(test_cgroup_parse test_cgroup_parse.c LIBS ctp_cgroup_parse)
# The v1 hierarchies' inode index (cglist.c) on directory trees made there.
ctp_add_test(test_cglist test_cglist.c LIBS ctp_cglist)

ctp_add_test(test_cgroup_plugin test_cgroup_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_cgroup_plugin plugin-cgroup)

ctp_add_test(test_cgroup_e2e test_cgroup_e2e.c e2e_util.c LIBS ctpcore)
add_dependencies(test_cgroup_e2e ctprof-core plugin-cgroup)
# abi-good (tests/abi.cmake) beside it: keyed rows reach only their referrer.
target_compile_definitions(test_cgroup_e2e PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CMAKE_BINARY_DIR}/test-plugins")
add_dependencies(test_cgroup_e2e abi-plugin-abi-good)

ctp_add_test(test_cgroup_live test_cgroup_live.c e2e_util.c
             LIBS ctpcore ctp_cgroup_parse Threads::Threads)
# Its v1_exited case records short-lived processes in a v1 cpuacct cgroup
# (procfs-stat, taskstats' exit records) and groups them by cgroup:cpuacct.
add_dependencies(test_cgroup_live ctprof-core plugin-cgroup plugin-procfs-stat
                 plugin-taskstats)
