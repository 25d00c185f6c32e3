# The exited table: writer, reader and hostile files (core/snapshot/), and
# the plugin API that fills it (core/capture/api.c) on the abi-exited test
# collector in a real engine. `--write-sample` feeds the Python decoder.
ctp_add_test(test_exited test_exited.c snapbuild.c e2e_util.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
target_compile_definitions(test_exited PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_exited abi-plugin-abi-exited ctprof-core)
add_test(NAME exited_python_decoder
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/decode_snapshot.py
                 --exited-writer $<TARGET_FILE:test_exited>
                 --workdir ${CMAKE_CURRENT_BINARY_DIR}/exited_python)
set_tests_properties(exited_python_decoder PROPERTIES SKIP_RETURN_CODE 77
                     TIMEOUT 300)
