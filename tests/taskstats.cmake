# The host accounting probes (plugins/common) and the taskstats plugin.
ctp_add_test(test_hostprobe test_hostprobe.c LIBS ctp_hostprobe PkgConfig::ZLIB)
ctp_add_test(test_taskstats_reply test_taskstats_reply.c LIBS ctp_taskstats_reply)
# Exit notifications, listener registration and acks, on built bytes.
ctp_add_test(test_taskstats_exit test_taskstats_exit.c LIBS ctp_taskstats_reply)

# Drives the built taskstats.so loaded into a real engine (tests/harness.h), querying the
# running kernel (parts skip without CAP_NET_ADMIN or a TASKSTATS family).
ctp_add_test(test_taskstats_plugin test_taskstats_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads ctp_hostprobe PkgConfig::ZLIB)
add_dependencies(test_taskstats_plugin plugin-taskstats)

# The exit listener of the same .so with recording on, against the running
# kernel: forked children come back as exited rows (skips without the
# family or CAP_NET_ADMIN).
ctp_add_test(test_taskstats_exited test_taskstats_exited.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_taskstats_exited plugin-taskstats)

# ctprof-core with taskstats on the live host. It sets the global sysctl
# kernel.task_delayacct (and restores it) and reads delay-accounting state
# other tests may also look at, so it never runs beside another test.
ctp_add_test(test_taskstats_live test_taskstats_live.c e2e_util.c
             LIBS ctpcore Threads::Threads ctp_hostprobe)
add_dependencies(test_taskstats_live ctprof-core plugin-taskstats)
set_tests_properties(test_taskstats_live PROPERTIES RUN_SERIAL TRUE)
