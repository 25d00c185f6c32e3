# libFuzzer harnesses (tests/fuzz/, README.md there): NAME:LIBRARIES, the
# libraries ';'-free (one each). On every build each harness is linked with
# tests/fuzz/replay.c and replays its seed corpus (tests/fuzz/corpus/NAME)
# and the inputs that once crashed it (tests/fuzz/regressions/NAME) as the
# ctest fuzz_replay_NAME. With -DCTP_FUZZ=ON (clang) each is also built as
# a libFuzzer binary fuzz_NAME (tools/fuzz.sh runs them).
set(CTP_FUZZ_HARNESSES
  snapshot:ctpcore snapshot_mp:ctpcore snapshot_pair:ctpcore config:ctpcore
  view:ctpcore
  parse_procfs:ctp_procfs_parse parse_schedstat:ctp_schedstat_parse
  parse_io:ctp_io_parse parse_smaps:ctp_smaps_parse
  parse_cgroup:ctp_cgroup_parse parse_psi:ctp_psi_parse
  parse_scx:ctp_scx_parse parse_host:ctp_host_parse
  parse_taskstats:ctp_taskstats_reply parse_jemalloc:ctp_plugin_util
  parse_layouts:ctp_plugin_util parse_appstats:ctp_aps_parse
  probe_jemalloc:ctp_plugin_util probe_tls:ctp_plugin_util
  scan:ctp_plugin_util)
set(CTP_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
# jemalloc-probe's ELF/DWARF reading, compiled in with its proc_service
# callbacks: its library would bring a shared support library, which a
# fuzz binary's static sanitizer runtime does not mix with.
pkg_check_modules(FUZZ_LIBDW REQUIRED IMPORTED_TARGET libdw)
set(CTP_JEP_DIR ${PROJECT_SOURCE_DIR}/plugins/jemalloc-probe)
set(CTP_COMMON_DIR ${PROJECT_SOURCE_DIR}/plugins/common)

foreach(pair ${CTP_FUZZ_HARNESSES})
  string(REPLACE ":" ";" pair ${pair})
  list(GET pair 0 name)
  list(GET pair 1 lib)
  set(srcs ${CTP_FUZZ_DIR}/${name}.c)
  if(name MATCHES "^snapshot(_mp)?$")
    list(APPEND srcs ${CTP_FUZZ_DIR}/fuzz_snap.c)
  endif()
  # jemalloc-probe's pure helpers only (its library also holds the code
  # that reads live processes, and a shared support library).
  if(name STREQUAL "parse_jemalloc")
    list(APPEND srcs ${CTP_JEP_DIR}/jep_util.c ${CTP_COMMON_DIR}/procelf.c
         ${CTP_COMMON_DIR}/statedir.c)
    set(lib "${lib};PkgConfig::FUZZ_LIBDW;Threads::Threads;${CMAKE_DL_LIBS}")
  endif()
  if(name STREQUAL "parse_layouts")
    list(APPEND srcs ${CTP_JEP_DIR}/jep_layout.c)
  endif()
  if(name MATCHES "^probe_(jemalloc|tls)$")
    list(APPEND srcs ${CTP_JEP_DIR}/jep_util.c ${CTP_JEP_DIR}/jep_probe.c
         ${CTP_JEP_DIR}/jep_layout.c ${CTP_JEP_DIR}/jep_ps.c
         ${CTP_COMMON_DIR}/procelf.c ${CTP_COMMON_DIR}/statedir.c)
    set(lib "${lib};PkgConfig::FUZZ_LIBDW;PkgConfig::ZLIB;thread_db;Threads::Threads;${CMAKE_DL_LIBS}")
  endif()
  # probe_tls finds glibc's _thread_db_* descriptors in itself (dlsym).
  if(name STREQUAL "probe_tls")
    list(APPEND lib ${CMAKE_DL_LIBS})
  endif()
  add_executable(fuzz_replay_${name} ${srcs} ${CTP_FUZZ_DIR}/replay.c)
  target_link_libraries(fuzz_replay_${name} PRIVATE ${lib})
  set(defs)
  if(name STREQUAL "view")
    set(defs CTP_FUZZ_SNAPSHOT="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/snapshots/sample-v1.ctprof")
    target_compile_definitions(fuzz_replay_${name} PRIVATE ${defs})
  endif()
  target_include_directories(fuzz_replay_${name} PRIVATE ${CTP_FUZZ_DIR}
                             ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/plugins/jemalloc-probe
                             ${CTP_COMMON_DIR})
  add_test(NAME fuzz_replay_${name}
           COMMAND fuzz_replay_${name} ${CTP_FUZZ_DIR}/corpus/${name}
                   ${CTP_FUZZ_DIR}/regressions/${name})
  if(CTP_FUZZ)
    add_executable(fuzz_${name} ${srcs})
    target_link_libraries(fuzz_${name} PRIVATE ${lib} m)
    if(defs)
      target_compile_definitions(fuzz_${name} PRIVATE ${defs})
    endif()
    target_include_directories(fuzz_${name} PRIVATE ${CTP_FUZZ_DIR}
                               ${PROJECT_SOURCE_DIR}/include
                               ${PROJECT_SOURCE_DIR}/plugins/jemalloc-probe
                               ${CTP_COMMON_DIR})
    # Static sanitizer runtimes: a fuzz binary loads no plugin, and
    # libFuzzer's C++ runtime must not come before ASan's.
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer -static-libsan)
    set_target_properties(fuzz_${name} PROPERTIES
                          RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  endif()
endforeach()

# Records probe_tls's seed from a live jemalloc worker (run by
# tests/fuzz/gen_probe_tls_seed.sh, not a test).
add_executable(probe_tls_record ${CTP_FUZZ_DIR}/probe_tls_record.c)
target_link_libraries(probe_tls_record PRIVATE ctp_jep)
