# Source formatting (.clang-format), checked over the tracked C files.
add_test(NAME format COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/format_check.sh
                             ${PROJECT_SOURCE_DIR})
set_tests_properties(format PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
