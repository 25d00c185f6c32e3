# Resource errors (issue 29): EMFILE, ENFILE, ENOMEM and ENOBUFS counted as
# such, never as vanished tasks, with ctp_capture_spoiled() saying why; the
# real engine in process under a lowered RLIMIT_NOFILE (fixture and live
# /proc), a plugin failing with ENOMEM (abi-starved), the counters through
# the writer, reader and dump, and the binary under a descriptor limit.
ctp_add_test(test_resource test_resource.c e2e_util.c
             LIBS ctpcore Threads::Threads)
target_compile_definitions(test_resource PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_resource ctprof-core plugin-procfs-stat
                 abi-plugin-abi-good abi-plugin-abi-starved)
