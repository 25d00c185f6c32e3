# Grouping and aggregation (core/analysis/group.c, core/analysis/render.c), derived fields
# through registry, writer and reader, and `show --group-by`.
ctp_add_test(test_normalize test_normalize.c LIBS ctpcore)
ctp_add_test(test_group test_group.c snapbuild.c e2e_util.c LIBS ctpcore)
# test_taskstats_registered runs the binary with the taskstats plugin.
add_dependencies(test_group ctprof-core plugin-procfs-stat plugin-taskstats)

# The Python decoder checks a snapshot with derived fields against
# docs/FORMAT.md (the `derive` key of fields).
add_test(NAME group_derived_python_decoder
         COMMAND sh -c "\"$1\" --write-derived \"$2\" && /usr/bin/python3 \"$3\" \"$2\""
                 sh $<TARGET_FILE:test_group>
                 ${CMAKE_CURRENT_BINARY_DIR}/group-derived.ctprof
                 ${CMAKE_CURRENT_SOURCE_DIR}/decode_snapshot.py)
set_tests_properties(group_derived_python_decoder PROPERTIES
                     SKIP_RETURN_CODE 77 TIMEOUT 300)

# taskstats.offcpu_delay_total against the kernel's numbers on this host.
# It switches the global sysctl kernel.task_delayacct on (and restores it),
# so, like test_taskstats_live, it never runs beside another test.
add_test(NAME test_group_live_taskstats
         COMMAND test_group --live-taskstats)
set_tests_properties(test_group_live_taskstats PROPERTIES
                     SKIP_RETURN_CODE 77 TIMEOUT 300 RUN_SERIAL TRUE)

# cgroup:HIER groups take that v1 hierarchy's cgroup rows, not the v2 rows
# their threads point at.
ctp_add_test(test_group_v1 test_group_v1.c snapbuild.c e2e_util.c LIBS ctpcore)

# The identity axes pid and tid and the field:NAME axis: grouping, joins,
# errors, and `show --group-by` over them.
ctp_add_test(test_group_axes test_group_axes.c snapbuild.c e2e_util.c LIBS ctpcore)
