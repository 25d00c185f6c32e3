# Install into a temporary prefix, build docs/examples/hello-plugin against
# the installed header through pkg-config only, and capture with the
# installed binary (tests/install_example.sh).
add_test(NAME install_example
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install_example.sh
                 ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(install_example PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
