# --color=auto|always|never and NO_COLOR over the fixture recording: escapes
# only where they carry meaning, fitted widths as without colour, none on a
# pipe, in a machine format, or with NO_COLOR/TERM=dumb (tests/color.sh).
add_test(NAME color COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/color.sh
                            $<TARGET_FILE:ctprof-core> ${PROJECT_SOURCE_DIR})
set_tests_properties(color PROPERTIES TIMEOUT 120)
