# Hostile roots and signals (issue 11 items 3 and 9): FIFOs, /dev/zero and
# oversized files under a fake proc root, SIGTERM/SIGINT while a plugin
# callback never returns (tests/plugins/abi_hang.c), and comms holding a
# newline on the live /proc.
ctp_abi_plugin(abi-hang abi_hang.c)
ctp_add_test(test_hostile_root test_hostile_root.c e2e_util.c
             LIBS ctpcore Threads::Threads)
target_compile_definitions(test_hostile_root PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_hostile_root ctprof-core plugin-procfs-stat plugin-psi
                 abi-plugin-abi-hang)
