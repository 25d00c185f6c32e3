# The engine's accounting of plugin time (core/capture/engine.c): test
# collectors that spend known amounts of time (tests/plugins/abi_burn.c),
# a provider, an asker of its source and a plugin binding a value of its
# value source, charged what each spent; taskstats answering each thread
# with one query when procfs-stat asks its source first; and the clock read
# fewer times than a capture has threads (clock_gettime wrapped at link
# time to count the core's reads).
ctp_abi_plugin(abi-burnsrc abi_burn.c)
ctp_abi_plugin(abi-burnask abi_burn.c ABI_BURN_ASKER)
ctp_abi_plugin(abi-burnbind abi_burn.c ABI_BURN_BINDER)
ctp_add_test(test_engine_time test_engine_time.c e2e_util.c LIBS ctpcore)
target_compile_definitions(test_engine_time PRIVATE
  CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
target_include_directories(test_engine_time PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_options(test_engine_time PRIVATE -Wl,--wrap=clock_gettime)
add_dependencies(test_engine_time abi-plugin-abi-burnsrc abi-plugin-abi-burnask
                 abi-plugin-abi-burnbind plugin-procfs-stat plugin-taskstats)
