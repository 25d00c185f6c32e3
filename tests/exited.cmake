# The exited table: the plugin API that fills it (core/capture/api.c) on
# the abi-exited test collector in a real engine.
ctp_add_test(test_exited test_exited.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
target_compile_definitions(test_exited PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_exited abi-plugin-abi-exited)
