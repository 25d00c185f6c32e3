# appstats (issue 19): the publishing header, include/ctprof/appstats.h, in
# a process of its own and across a shared object that includes it too.
add_library(appstats_lib SHARED appstats_lib.c)
target_include_directories(appstats_lib PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(appstats_lib PRIVATE Threads::Threads)
ctp_add_test(test_appstats test_appstats.c LIBS appstats_lib Threads::Threads)
