# The public headers in a user's program (issue 28 point 16): C and C++,
# GCC and Clang, every optimization level, -Wall -Wextra -Werror.
add_test(NAME public_headers
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/public_headers.sh
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/public_headers)
set_tests_properties(public_headers PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
