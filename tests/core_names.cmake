# No plugin field name in core/ (tests/core_field_names.sh).
add_test(NAME core_field_names
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/core_field_names.sh
                 ${PROJECT_SOURCE_DIR})
