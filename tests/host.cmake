# The host-context plugin (plugins/host-context) and the host diff
# (core/analysis/hostdiff.c).
ctp_add_test(test_host_parse test_host_parse.c LIBS ctp_host_parse)

# Drives the built host-context.so loaded into a real engine (tests/harness.h).
ctp_add_test(test_host_plugin test_host_plugin.c LIBS ctp_harness ${CMAKE_DL_LIBS} PkgConfig::ZLIB)
add_dependencies(test_host_plugin plugin-host-context)
# Room in static TLS so the test can dlopen Debian's jemalloc (initial-exec
# TLS) beside glibc's malloc.
set_tests_properties(test_host_plugin PROPERTIES
                     ENVIRONMENT "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536")
if(CTP_WITH_JEMALLOC)
  # The same, in a process whose malloc is jemalloc's.
  ctp_add_test(test_host_plugin_jemalloc test_host_plugin.c
               LIBS ctp_harness ${CMAKE_DL_LIBS} PkgConfig::ZLIB
                    "$<LINK_LIBRARY:NO_AS_NEEDED,${JEMALLOC_LINK_LIBRARIES}>")
  target_compile_definitions(test_host_plugin_jemalloc PRIVATE CTP_TEST_JEMALLOC)
  add_dependencies(test_host_plugin_jemalloc plugin-host-context)
endif()

# Host diff over two snapshots written by the real writer.
ctp_add_test(test_hostdiff test_hostdiff.c LIBS ctpcore)

# ctprof-core with host-context on the fixture roots (tests/fixtures/host)
# and on empty roots; then on the live /proc and /sys. The allocator the
# binary reports depends on CTP_WITH_JEMALLOC.
ctp_add_test(test_host_e2e test_host_e2e.c test_host_util.c e2e_util.c
             LIBS ctpcore)
ctp_add_test(test_host_live test_host_live.c test_host_util.c e2e_util.c
             LIBS ctpcore PkgConfig::ZLIB)
foreach(t test_host_e2e test_host_live)
  add_dependencies(${t} ctprof-core plugin-host-context)
  if(CTP_WITH_JEMALLOC)
    target_compile_definitions(${t} PRIVATE CTP_TEST_WITH_JEMALLOC)
  endif()
endforeach()
# Reads kernel.task_delayacct, which test_taskstats_live toggles (that one
# runs alone, RUN_SERIAL, so no more is needed here).
