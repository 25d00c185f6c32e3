# `ctprof-core selftest` (core/cli/selftest.c): the per-task sources against
# the files on the live kernel. With the shipped config every compared value
# is equal (exit 0); with abi-liar's source, which lies about context
# switches, the command names the field and exits 1 (tests/selftest.sh).
ctp_abi_plugin(abi-liar abi_liar.c)
add_test(NAME selftest COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/selftest.sh
                               $<TARGET_FILE:ctprof-core> ${PROJECT_SOURCE_DIR}
                               ${CMAKE_BINARY_DIR}/plugins ${CTP_ABI_PLUGIN_DIR})
set_tests_properties(selftest PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
# The same with bpf-task's program loaded by libbpf's skeleton, the light
# skeleton's fallback.
add_test(NAME selftest_libbpf COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/selftest.sh
                                      $<TARGET_FILE:ctprof-core> ${PROJECT_SOURCE_DIR}
                                      ${CMAKE_BINARY_DIR}/plugins ${CTP_ABI_PLUGIN_DIR})
set_tests_properties(selftest_libbpf PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
                     ENVIRONMENT CTP_BPFTASK_LOADER=libbpf)
# And with bpf-task's passes by the open-coded task iterator (6.8+; where
# the kernel lacks it the plugin takes iter/task and says why).
add_test(NAME selftest_walk COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/selftest.sh
                                    $<TARGET_FILE:ctprof-core> ${PROJECT_SOURCE_DIR}
                                    ${CMAKE_BINARY_DIR}/plugins ${CTP_ABI_PLUGIN_DIR})
set_tests_properties(selftest_walk PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
                     ENVIRONMENT CTP_BPFTASK_PASS=open-coded)
