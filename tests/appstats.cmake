# appstats (issue 19): the publishing header, include/ctprof/appstats.h, in
# a process of its own and across a shared object that includes it too.
add_library(appstats_lib SHARED appstats_lib.c)
target_include_directories(appstats_lib PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(appstats_lib PRIVATE Threads::Threads)
ctp_add_test(test_appstats test_appstats.c LIBS appstats_lib Threads::Threads)

# The collector (plugins/appstats): its registry checks on hand-made
# images, and ctprof-core reading real publishers: one through the header
# (8 threads, thread churn, nothing declared) and one writing the registry
# by hand from APPSTATS.md, correct and broken each way; and what one
# publisher may cost others (appstats_big: 16 MiB registries, names churn).
ctp_add_test(test_appstats_parse test_appstats_parse.c LIBS ctp_aps_parse)
add_executable(appstats_worker appstats_worker.c)
target_include_directories(appstats_worker PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(appstats_worker PRIVATE Threads::Threads)
add_executable(appstats_raw appstats_raw.c)
target_link_libraries(appstats_raw PRIVATE Threads::Threads)
add_executable(appstats_big appstats_big.c)
foreach(x a b)
  add_library(appstats_dso_${x} SHARED appstats_dso.c)
  target_include_directories(appstats_dso_${x} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(appstats_dso_${x} PRIVATE
                             APPSTATS_DSO_NAME=appstats_dso_${x}_add)
  target_link_libraries(appstats_dso_${x} PRIVATE Threads::Threads)
endforeach()
add_executable(appstats_dso appstats_dso.c)
target_compile_definitions(appstats_dso PRIVATE APPSTATS_DSO_MAIN)
# a first: loaded first, mapped highest, its registry the one bound.
target_link_libraries(appstats_dso PRIVATE appstats_dso_a appstats_dso_b
                      Threads::Threads)
ctp_add_test(test_appstats_e2e test_appstats_e2e.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_appstats_e2e PRIVATE
                           APS_WORKER="$<TARGET_FILE:appstats_worker>"
                           APS_RAW="$<TARGET_FILE:appstats_raw>"
                           APS_DSO="$<TARGET_FILE:appstats_dso>"
                           APS_BIG="$<TARGET_FILE:appstats_big>")
add_dependencies(test_appstats_e2e ctprof-core plugin-appstats plugin-procfs-stat
                 plugin-jemalloc-probe
                 appstats_worker appstats_raw appstats_dso appstats_big)
