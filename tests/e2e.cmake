# End-to-end tests: the built ctprof-core and procfs-stat on the fixture tree
# (tests/fixtures/proc) and on the live /proc. Both run the binary, so it and
# the plugin must be built first.
ctp_add_test(test_e2e test_e2e.c e2e_util.c LIBS ctpcore)
add_dependencies(test_e2e ctprof-core plugin-procfs-stat)

ctp_add_test(test_live test_live.c e2e_util.c LIBS ctpcore Threads::Threads)
add_dependencies(test_live ctprof-core plugin-procfs-stat)

# The walk names a task from its stat text (core/capture/taskid.c).
ctp_add_test(test_taskid test_taskid.c LIBS ctpcore)
