# Flat, typed rows (core/analysis/flat.c) and `show --format csv|json|ndjson`:
# exact text on a hand-built snapshot, then (test_flat_tools) the output
# loaded into the real sqlite3, python3's json module and jq, against the
# reader's own sums. test_flat_tools exits 77 without sqlite3 or jq.
ctp_add_test(test_flat test_flat.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_flat ctprof-core plugin-procfs-stat)
add_test(NAME test_flat_tools COMMAND test_flat --tools)
set_tests_properties(test_flat_tools PROPERTIES SKIP_RETURN_CODE 77
                     TIMEOUT 300)
