# The benchmark (tools/bench/, docs/PERFORMANCE.md): a load generator, a
# plain /proc reader and a wait4() runner, built beside ctprof-core but never
# installed and never registered with ctest: speed targets are checked by
# running tools/bench/bench.py (or `cmake --build BUILD --target bench`),
# not by timed tests.
set(CTP_BENCH_TOOLS load:loadgen.c read:plainread.c run:runner.c)
foreach(pair ${CTP_BENCH_TOOLS})
  string(REPLACE ":" ";" pair ${pair})
  list(GET pair 0 tool)
  list(GET pair 1 src)
  add_executable(ctp-bench-${tool} ${CMAKE_CURRENT_SOURCE_DIR}/bench/${src})
  set_target_properties(ctp-bench-${tool} PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools/bench)
endforeach()
target_link_libraries(ctp-bench-load PRIVATE Threads::Threads)
# --publish: the appstats publishing header.
target_include_directories(ctp-bench-load PRIVATE ${PROJECT_SOURCE_DIR}/include)
# The plain reader takes from the core and the smaps plugin what is not
# per-task work (plainread.c says which), so that it shares no copy of them.
target_link_libraries(ctp-bench-read PRIVATE ctpcore ctp_smaps_parse
                      ctp_taskstats_reply)

# The snapshot writer alone, on a capture rebuilt from a snapshot: by hand,
# build/tools/bench/ctp-bench-write SNAPSHOT [-w WORKERS] [-c COPIES].
add_executable(ctp-bench-write ${CMAKE_CURRENT_SOURCE_DIR}/bench/writebench.c)
set_target_properties(ctp-bench-write PROPERTIES
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools/bench)
target_link_libraries(ctp-bench-write PRIVATE ctpcore)

# The driver needs only the standard library; /usr/bin/python3 is the
# system interpreter (a pyenv one on PATH may be anything).
find_program(CTP_BENCH_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT CTP_BENCH_PYTHON)
  set(CTP_BENCH_PYTHON python3)
endif()
add_custom_target(bench
  COMMAND ${CTP_BENCH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench.py
          --build-dir ${CMAKE_BINARY_DIR}
  DEPENDS ctprof-core plugin-procfs-stat plugin-schedstat plugin-io
          plugin-smaps ctp-bench-load ctp-bench-read ctp-bench-run
  USES_TERMINAL
  COMMENT "Benchmark: 1k/10k/30k sleeping threads, ctprof-core vs a plain reader (procfs-stat; issue-3 set)")

# The BPF exit program under thread churn (issue 33: no exit lost, only
# detail, at 60,000 threads every 2 s), where it was built. By hand, as
# root: build/tools/bench/ctp-bench-exits [--threads N] [--ring BYTES].
if(TARGET ctp_bpfexit)
  add_executable(ctp-bench-exits ${CMAKE_CURRENT_SOURCE_DIR}/bench/exitbench.c)
  set_target_properties(ctp-bench-exits PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools/bench)
  target_link_libraries(ctp-bench-exits PRIVATE ctp_bpfexit Threads::Threads)
endif()
