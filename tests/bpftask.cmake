# The bpf-task iterator (plugins/bpf-task): the record parser on literal
# bytes and the arithmetic on literal cases, and one live pass compared with
# procfs and taskstats on this kernel (skips, 77,
# when not root, without BTF, when bpf() is refused or not built).
ctp_add_test(test_bpftask_rec test_bpftask_rec.c LIBS ctp_bpftask_rec)
# The times across runs: the state file on literal bytes, the defect's case
# on literal values, and the file's reading and writing.
ctp_add_test(test_bpftask_state test_bpftask_state.c LIBS ctp_bpftask_rec)
# The css_sets a pass notes and the source "cgroup-v1"'s decoding.
ctp_add_test(test_bpfcg test_bpfcg.c LIBS ctp_bpftask_rec)

if(TARGET ctp_bpftask)
  ctp_add_test(test_bpftask_live test_bpftask_live.c
               LIBS ctp_bpftask ctp_procfs_parse ctp_schedstat_parse
                    ctp_io_parse ctp_taskstats_reply ctp_hostprobe ctp_util
                    Threads::Threads)
else()
  get_property(why GLOBAL PROPERTY CTP_BPFTASK_MISSING)
  ctp_add_test(test_bpftask_live test_bpftask_live.c)
  target_compile_definitions(test_bpftask_live PRIVATE
                             CTP_BPFTASK_MISSING="${why}")
endif()

# The live tests again with the program loaded by libbpf's skeleton, the
# light skeleton's fallback (CTP_BPFTASK_LOADER=libbpf skips the light one):
# test_bpftask_live here, test_sources_live and selftest beside theirs. And
# test_bpftask_live with the light skeleton of the program without
# bpf_rdonly_cast, which kernels 5.17 to 6.1 load (=light-nocast).
if(TARGET ctp_bpftask)
  add_test(NAME test_bpftask_live_libbpf COMMAND test_bpftask_live)
  set_tests_properties(test_bpftask_live_libbpf PROPERTIES SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT
                       "CTP_BPFTASK_LOADER=libbpf;CTPROF_VIEW_DIR=${PROJECT_SOURCE_DIR}/views")
  add_test(NAME test_bpftask_live_nocast COMMAND test_bpftask_live)
  set_tests_properties(test_bpftask_live_nocast PROPERTIES SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT
                       "CTP_BPFTASK_LOADER=light-nocast;CTPROF_VIEW_DIR=${PROJECT_SOURCE_DIR}/views")
endif()

# The exit program (plugins/bpf-task/task_exit.bpf.c): its record parser and
# the records as taskstats exits on literal bytes, and live through
# taskstats.so: threads' exact I/O and whole CPU, and a full ring's sums
# kept (skips, 77, when not root, without BTF or not built).
ctp_add_test(test_bpfexit_rec test_bpfexit_rec.c LIBS ctp_ts_exits_bpf)
ctp_add_test(test_bpfexit_live test_bpfexit_live.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_bpfexit_live plugin-taskstats)
set_tests_properties(test_bpfexit_live PROPERTIES RUN_SERIAL TRUE)
if(NOT TARGET ctp_bpfexit)
  get_property(why GLOBAL PROPERTY CTP_BPFTASK_MISSING)
  target_compile_definitions(test_bpfexit_live PRIVATE
                             CTP_BPFEXIT_MISSING="${why}")
endif()

# The plugin through the harness: what it offers, the walk list, fill
# through walked and by lookup, misses, a failed pass, an older core (the
# live cases skip without root or a kernel that loads the program).
if(TARGET ctp_bpftask)
  ctp_add_test(test_bpftask_plugin test_bpftask_plugin.c
               LIBS ctp_harness ctp_procfs_parse ctp_io_parse ${CMAKE_DL_LIBS}
                    Threads::Threads)
  add_dependencies(test_bpftask_plugin plugin-bpf-task)
endif()

# What the verifier does with both objects of the iterator on this kernel,
# from its own log: each load of a pointer member from the trusted task
# visited once, none at all in the program with bpf_rdonly_cast (skips
# without root, BTF, or what the kernel needs).
if(TARGET ctp_bpftask)
  get_property(objs GLOBAL PROPERTY CTP_BPFTASK_OBJS)
  list(GET objs 0 obj)
  list(GET objs 1 cobj)
  list(GET objs 2 wobj)
  ctp_add_test(test_bpftask_verify test_bpftask_verify.c LIBS ctp_bpfload)
  target_compile_definitions(test_bpftask_verify PRIVATE
                             CTP_BPFTASK_OBJ="${obj}" CTP_BPFTASK_CAST_OBJ="${cobj}"
                             CTP_BPFTASK_WALK_OBJ="${wobj}")
  add_dependencies(test_bpftask_verify bpftask_objs)
endif()

# The open-coded pass against iter/task on this test's own quiescent
# children (one larger than a run holds): each thread once in each, the
# same record, at the default limit a run and at 64 (skips, 77, when not
# root or where the kernel has no open-coded task iterator, 6.8+).
if(TARGET ctp_bpftask)
  ctp_add_test(test_bpftask_walk test_bpftask_walk.c LIBS ctp_bpftask Threads::Threads)
  target_include_directories(test_bpftask_walk PRIVATE ${PROJECT_SOURCE_DIR}/plugins/bpf-task)
  set_tests_properties(test_bpftask_walk PROPERTIES RUN_SERIAL TRUE)
endif()
