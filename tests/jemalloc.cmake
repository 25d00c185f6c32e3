# jemalloc-probe: pure helpers, the probe library against real jemalloc
# workers, and the plugin through the harness over a real engine.
ctp_add_test(test_jemalloc_util test_jemalloc_util.c LIBS ctp_jep)
target_compile_definitions(test_jemalloc_util PRIVATE
  JEP_LAYOUTS_FILE="${PROJECT_SOURCE_DIR}/plugins/jemalloc-probe/layouts.txt")

# Real jemalloc with DWARF, built once into a cache outside the clone by
# jemalloc_build.sh (idempotent; it fetches Debian's source package). When
# that cannot be done here the live tests still build and skip (exit 77)
# with the script's reason.
set(CTP_JE_CACHE "/var/cache/ctprof-test/jemalloc" CACHE PATH
    "Where tests/jemalloc_build.sh builds jemalloc with -g")
execute_process(COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/jemalloc_build.sh ${CTP_JE_CACHE}
                RESULT_VARIABLE je_rc OUTPUT_VARIABLE je_prefix
                ERROR_VARIABLE je_err OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_STRIP_TRAILING_WHITESPACE)
set(je_defs)
if(je_rc EQUAL 0 AND EXISTS ${je_prefix}/lib/libjemalloc.a)
  # Plain control, jemalloc static, jemalloc shared, and stripped static.
  add_executable(jemalloc_worker_plain jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_plain PRIVATE Threads::Threads)
  add_executable(jemalloc_worker_static jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_static PRIVATE
                        ${je_prefix}/lib/libjemalloc.a Threads::Threads m dl)
  add_executable(jemalloc_worker_shared jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_shared PRIVATE
                        ${je_prefix}/lib/libjemalloc.so Threads::Threads)
  set_target_properties(jemalloc_worker_shared PROPERTIES
                        BUILD_RPATH ${je_prefix}/lib)
  add_executable(jemalloc_worker_stripped jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_stripped PRIVATE
                        ${je_prefix}/lib/libjemalloc.a Threads::Threads m dl)
  add_custom_command(TARGET jemalloc_worker_stripped POST_BUILD
                     COMMAND strip --strip-all $<TARGET_FILE:jemalloc_worker_stripped>)
  # Split debuginfo: no .symtab nor DWARF in the binary, found through its
  # .gnu_debuglink next to it.
  add_executable(jemalloc_worker_split jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_split PRIVATE
                        ${je_prefix}/lib/libjemalloc.a Threads::Threads m dl)
  add_custom_command(TARGET jemalloc_worker_split POST_BUILD
    COMMAND objcopy --only-keep-debug $<TARGET_FILE:jemalloc_worker_split>
            $<TARGET_FILE:jemalloc_worker_split>.debug
    COMMAND strip --strip-all $<TARGET_FILE:jemalloc_worker_split>
    COMMAND objcopy --add-gnu-debuglink=$<TARGET_FILE:jemalloc_worker_split>.debug
            $<TARGET_FILE:jemalloc_worker_split>
    WORKING_DIRECTORY $<TARGET_FILE_DIR:jemalloc_worker_split>)
  # Fully static (glibc too): libthread_db finds glibc's symbols in the
  # executable itself.
  add_executable(jemalloc_worker_fullstatic jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_fullstatic PRIVATE
                        ${je_prefix}/lib/libjemalloc.a Threads::Threads m dl)
  target_link_options(jemalloc_worker_fullstatic PRIVATE -static)
  foreach(w plain static shared stripped split fullstatic)
    # Sanitizers would replace malloc in the workers.
    target_compile_options(jemalloc_worker_${w} PRIVATE -fno-sanitize=all)
    target_link_options(jemalloc_worker_${w} PRIVATE -fno-sanitize=all)
    string(TOUPPER ${w} W)
    list(APPEND je_defs JEP_WORKER_${W}="$<TARGET_FILE:jemalloc_worker_${w}>")
  endforeach()
  list(APPEND je_defs JEP_SKIP_REASON=""
       JEP_DEBUG_LIB="${je_prefix}/lib/libjemalloc.so.2")
  set(je_workers jemalloc_worker_plain jemalloc_worker_static
      jemalloc_worker_shared jemalloc_worker_stripped jemalloc_worker_split
      jemalloc_worker_fullstatic)
else()
  string(REPLACE "\"" "'" je_err "${je_err}")
  list(APPEND je_defs JEP_SKIP_REASON="jemalloc with DWARF unavailable: ${je_err}"
       JEP_WORKER_PLAIN="" JEP_WORKER_STATIC="" JEP_WORKER_SHARED=""
       JEP_WORKER_STRIPPED="" JEP_WORKER_SPLIT="" JEP_DEBUG_LIB=""
       JEP_WORKER_FULLSTATIC="")
  set(je_workers)
endif()

ctp_add_test(test_jemalloc_live test_jemalloc_live.c LIBS ctp_jep)
target_compile_definitions(test_jemalloc_live PRIVATE ${je_defs})
if(je_workers)
  add_dependencies(test_jemalloc_live ${je_workers})
endif()

ctp_add_test(test_jemalloc_plugin test_jemalloc_plugin.c LIBS ctp_harness ctp_jep ${CMAKE_DL_LIBS}
             Threads::Threads)
target_compile_definitions(test_jemalloc_plugin PRIVATE ${je_defs})
add_dependencies(test_jemalloc_plugin plugin-jemalloc-probe ${je_workers})

# The speed benchmark of docs/PERFORMANCE.md (run by hand, not a test).
if(je_workers)
  add_executable(jemalloc_bench jemalloc_bench.c)
  target_link_libraries(jemalloc_bench PRIVATE ctp_jep)
  target_include_directories(jemalloc_bench PRIVATE ${PROJECT_SOURCE_DIR}/include)
endif()

# Debian's libjemalloc2, when installed, carries no DWARF: a worker linked
# against it gives jemalloc-probe a real no-debuginfo (test_jemalloc_e2e).
find_library(CTP_DEBIAN_JEMALLOC NAMES libjemalloc.so.2
             PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib64 /usr/lib
             NO_DEFAULT_PATH)
if(CTP_DEBIAN_JEMALLOC)
  add_executable(jemalloc_worker_debian jemalloc_worker.c)
  target_link_libraries(jemalloc_worker_debian PRIVATE ${CTP_DEBIAN_JEMALLOC}
                        Threads::Threads)
  target_compile_options(jemalloc_worker_debian PRIVATE -fno-sanitize=all)
  target_link_options(jemalloc_worker_debian PRIVATE -fno-sanitize=all)
  set(je_debian "$<TARGET_FILE:jemalloc_worker_debian>")
  set(je_debian_lib "${CTP_DEBIAN_JEMALLOC}")
else()
  set(je_debian "")
  set(je_debian_lib "")
endif()

# ctprof-core itself with jemalloc-probe: the hint and -v name the failing
# processes (Debian's jemalloc: no-debuginfo), and the default method never
# ptraces a target the stop-free read cannot serve (checked with strace).
ctp_add_test(test_jemalloc_e2e test_jemalloc_e2e.c e2e_util.c LIBS ctpcore ctp_jep)
target_compile_definitions(test_jemalloc_e2e PRIVATE ${je_defs}
                           JEP_WORKER_DEBIAN="${je_debian}"
                           JEP_DEBIAN_LIB="${je_debian_lib}")
add_dependencies(test_jemalloc_e2e ctprof-core plugin-jemalloc-probe
                 ${je_workers})
if(CTP_DEBIAN_JEMALLOC)
  add_dependencies(test_jemalloc_e2e jemalloc_worker_debian)
endif()

# These ptrace live processes (the fallback and method: ptrace walk the
# whole host and seize every jemalloc worker they find) or watch a worker
# for any stop: run one at a time, or one test's seizes are another's
# "stopped" worker.
set_tests_properties(test_jemalloc_live test_jemalloc_plugin test_jemalloc_e2e
                     PROPERTIES RESOURCE_LOCK ptraced_workers)

# The files jemalloc-probe opens beside a probed file (issue 28 point 1):
# its debuglink's, its dwz alt file, a FIFO or /dev/zero in their place.
# tests/jep_tsd.c is what the probe looks for, nothing more, with DWARF.
# DWARF 4: dwz 0.15 refuses clang's DWARF 5 (.debug_addr).
foreach(x tsd tsd_twin)
  add_library(jep_${x} SHARED jep_tsd.c)
  target_compile_options(jep_${x} PRIVATE -gdwarf-4)
endforeach()
target_compile_definitions(jep_tsd_twin PRIVATE JEP_TSD_TWIN)
ctp_add_test(test_jemalloc_files test_jemalloc_files.c LIBS ctp_jep)
target_compile_definitions(test_jemalloc_files PRIVATE
                           JEP_TSD="$<TARGET_FILE:jep_tsd>"
                           JEP_TSD_TWIN="$<TARGET_FILE:jep_tsd_twin>")
add_dependencies(test_jemalloc_files jep_tsd jep_tsd_twin)
