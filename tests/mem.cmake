# The io and smaps collectors (plugins/io, plugins/smaps): parsers, plugins
# through the harness over the core, the kernel-config gate in snapshots and `show`, the
# fixture tree tests/fixtures/proc-mem end to end, and live tests.
ctp_add_test(test_io_parse test_io_parse.c LIBS ctp_io_parse)
ctp_add_test(test_smaps_parse test_smaps_parse.c LIBS ctp_smaps_parse)

# The built plugins loaded into a real engine (tests/harness.h).
ctp_add_test(test_io_plugin test_io_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_io_plugin plugin-io)
ctp_add_test(test_smaps_plugin test_smaps_plugin.c
             LIBS ctp_harness ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(test_smaps_plugin plugin-smaps)

# read_failures.gates through writer, reader and `show`'s hint.
ctp_add_test(test_io_hint test_io_hint.c e2e_util.c LIBS ctpcore)
add_dependencies(test_io_hint ctprof-core)

# Lazy files in tests/test_abi.c: abi-good built a second time under another
# name, so two plugins ask for the same lazy file (abi.cmake's own plugins
# are listed there; this one belongs to the lazy-file test).
ctp_abi_plugin(abi-twin abi_good.c ABI_GOOD_NAME="abi-twin")
add_dependencies(test_abi abi-plugin-abi-twin)

# End to end on tests/fixtures/proc-mem with the built binary and plugins.
ctp_add_test(test_e2e_mem test_e2e_mem.c e2e_util.c LIBS ctpcore)
add_dependencies(test_e2e_mem ctprof-core plugin-io plugin-smaps)

# Live /proc: a child's write(2)s in io.wchar/syscw of its writing thread,
# and its 64 MiB in smaps.rss. Each exits 77 when the kernel lacks the file.
ctp_add_test(test_io_live test_io_live.c e2e_util.c LIBS ctpcore Threads::Threads)
add_dependencies(test_io_live ctprof-core plugin-io)
ctp_add_test(test_smaps_live test_smaps_live.c e2e_util.c LIBS ctpcore)
add_dependencies(test_smaps_live ctprof-core plugin-smaps)
