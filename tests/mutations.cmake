# Rules of the real core that a one-line change used to break with every
# test still green (issue 12): field ownership in the setters, the
# consecutive-failure reset, lazy-to-eager file promotion, dropping a task
# that vanished mid-walk, opt_u64's validation. tests/test_mutations.c runs
# the built binary with the test collector tests/plugins/abi_mut.c, built
# three times: once per way of declaring its one thread file. abi.cmake
# (included before this file) defines ctp_abi_plugin() and abi-good, which
# the ownership test loads as the victim.
ctp_abi_plugin(abi-mut abi_mut.c)
ctp_abi_plugin(abi-mut-lazy abi_mut.c ABI_MUT_NAME="abi-mut-lazy"
               ABI_MUT_FILE="?abi-lazy")
ctp_abi_plugin(abi-mut-eager abi_mut.c ABI_MUT_NAME="abi-mut-eager"
               ABI_MUT_FILE="abi-lazy")

ctp_add_test(test_mutations test_mutations.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_mutations PRIVATE
  CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_mutations ctprof-core abi-plugin-abi-good
  abi-plugin-abi-mut abi-plugin-abi-mut-lazy abi-plugin-abi-mut-eager)
