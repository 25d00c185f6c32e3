# `top` and `replay` in a real terminal (issue 32, docs/TOP.md): keys sent
# to a detached tmux session of 80x24 and the screen read back after each
# (tests/top_tmux.sh); the terminal sane after q, SIGTERM and SIGSEGV;
# top going on past a plugin that crashes (abi-chaos), its recording
# process gone after q, SIGTERM, SIGSEGV and SIGKILL.
# Skipped (77) without tmux or the terminal types.
# Its burner: two threads under a name of the test's (top_burner.c).
add_executable(top_burner top_burner.c)
target_link_libraries(top_burner PRIVATE Threads::Threads)
add_test(NAME test_top_tmux
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/top_tmux.sh
                 $<TARGET_FILE:ctprof-core>
                 ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/recording
                 $<TARGET_FILE:top_burner>
                 ${CTP_PLUGIN_BUILD_DIR} ${CTP_ABI_PLUGIN_DIR})
# Its child burns CPU to be on the first screen (as test_terminal's).
set_tests_properties(test_top_tmux PROPERTIES SKIP_RETURN_CODE 77
                     RUN_SERIAL TRUE TIMEOUT 600 LABELS terminal)
