# The man pages (docs/man/): no groff warning, every command of the usage
# in ctprof-core(1), every configuration key in collectors.yaml(5), its
# example a valid configuration (tests/man_pages.sh; 77 without man/groff).
add_test(NAME man_pages COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/man_pages.sh
                                $<TARGET_FILE:ctprof-core> ${PROJECT_SOURCE_DIR})
set_tests_properties(man_pages PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
