# Crash containment (issue 13): plugins that really crash
# (tests/plugins/abi_crash.c, built in abi.cmake) under the capture's
# supervisor; abi-hang (hostile.cmake) holds a capture still for the core
# crash and the kill from outside.
ctp_add_test(test_crash test_crash.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_crash PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_crash ctprof-core plugin-procfs-stat
                 abi-plugin-abi-crash abi-plugin-abi-crash2 abi-plugin-abi-hang)
