# Files plugins open on behalf of other processes (issue 28 point 1): a
# process run as nobody swaps the files it maps with FIFOs while captures
# and a recording with appstats and jemalloc-probe run beside it, with a
# preloaded shim that swaps others after each lookup ctprof-core makes.
add_executable(foreign_swap foreign_swap.c)
target_include_directories(foreign_swap PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(foreign_swap PRIVATE Threads::Threads)
add_library(swap_shim SHARED swap_shim.c)
target_link_libraries(swap_shim PRIVATE ${CMAKE_DL_LIBS})
# Preloaded into a sanitized ctprof-core: no runtime of its own.
target_compile_options(swap_shim PRIVATE -fno-sanitize=all)
target_link_options(swap_shim PRIVATE -fno-sanitize=all)
ctp_add_test(test_foreign_files test_foreign_files.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_foreign_files PRIVATE
                           FOREIGN_SWAP="$<TARGET_FILE:foreign_swap>"
                           SWAP_SHIM="$<TARGET_FILE:swap_shim>")
add_dependencies(test_foreign_files ctprof-core plugin-appstats
                 plugin-jemalloc-probe foreign_swap swap_shim)
