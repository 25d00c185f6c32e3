# A process that captures again (record, serve, top) keeps the pages its
# captures free (core/cli/capture_util.c ctp_cli_keep_pages): jemalloc, as
# ctprof-core links it, told to keep them in every arena; the user's
# MALLOC_CONF wins. Built where ctprof-core links jemalloc.
if(CTP_WITH_JEMALLOC)
  ctp_add_test(test_keep_pages test_keep_pages.c LIBS ctpcore)
  target_link_libraries(test_keep_pages PRIVATE
                        "$<LINK_LIBRARY:NO_AS_NEEDED,${JEMALLOC_LINK_LIBRARIES}>")
  target_include_directories(test_keep_pages PRIVATE
                             ${PROJECT_SOURCE_DIR}/core/cli)
endif()
