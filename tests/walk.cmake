# Walking from a walk source (struct ctp_source_desc.walk, issue 33): the
# test collector abi-walk offers one listed from the proc root. The walk
# from it equals the proc root's on fixture trees (one worker, and split
# processes), falls back with its reason when walk() fails or its list is
# unusable; live, no path under a thread's task/<tid> is opened.
ctp_abi_plugin(abi-walk abi_walk.c)
# The same needing each thread's directory (no CTP_PLUGIN_NO_THREAD_DIR).
ctp_abi_plugin(abi-walk-dir abi_walk.c ABI_WALK_DIR)
# The same declaring the processes' stat lazy (the process's name from the
# list while a process source is loaded).
ctp_abi_plugin(abi-walk-lazy abi_walk.c ABI_WALK_LAZY)
ctp_add_test(test_walk_source test_walk_source.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_walk_source PRIVATE
  CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_walk_source ctprof-core abi-plugin-abi-walk
  abi-plugin-abi-walk-dir plugin-schedstat)
# Live, under strace -f (tools/dev.sh installs it; skipped without): no
# path under task/<tid> opened when walking from abi-walk.
ctp_add_test(test_walk_source_live test_walk_source_live.c e2e_util.c
             LIBS ctpcore)
target_compile_definitions(test_walk_source_live PRIVATE
  CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}"
  CTP_PLUGIN_DIR="${CTP_PLUGIN_BUILD_DIR}"
  CTP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_walk_source_live ctprof-core abi-plugin-abi-walk
  abi-plugin-abi-walk-lazy abi-plugin-abi-procsrc plugin-cgroup)
if(TARGET ctp_bpftask)
  add_dependencies(test_walk_source_live plugin-bpf-task)
endif()
