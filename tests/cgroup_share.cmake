# A thread's cgroup identity taken from its process when the kernel
# guarantees it (tests/fixtures/cg-share), and on the live host. Both run
# the binary, so it and the plugin must be built first.
ctp_add_test(test_e2e_cgroup test_e2e_cgroup.c e2e_util.c
             LIBS ctpcore Threads::Threads)
target_compile_definitions(test_e2e_cgroup PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_e2e_cgroup ctprof-core plugin-procfs-stat
                 abi-plugin-abi-procsrc)

# The live check is the same executable's `live` mode; 77 without cgroup2.
add_test(NAME test_e2e_cgroup_live COMMAND test_e2e_cgroup live)
set_tests_properties(test_e2e_cgroup_live PROPERTIES SKIP_RETURN_CODE 77
                     TIMEOUT 300)
