# The shipped systemd units (packaging/systemd): installed into a temporary
# prefix, `systemd-analyze verify` and `security --offline`, capability
# sets against the plugins' declarations (tests/units.sh).
add_test(NAME units COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/units.sh ${CMAKE_BINARY_DIR})
set_tests_properties(units PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
