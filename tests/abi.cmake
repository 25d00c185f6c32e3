# Plugin ABI: test collectors (tests/plugins/) built like ctp_add_plugin
# builds real ones, but into their own directory so no real plugin search
# ever finds them, and the end-to-end test that loads them with the real
# binary.
set(CTP_ABI_PLUGIN_DIR ${CMAKE_BINARY_DIR}/test-plugins)
set(CTP_ABI_PLUGINS)

# ctp_abi_plugin(NAME SOURCE [DEFINE...]): tests/plugins/SOURCE as NAME.so.
function(ctp_abi_plugin name src)
  add_library(abi-plugin-${name} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/${src})
  set_target_properties(abi-plugin-${name} PROPERTIES
    OUTPUT_NAME ${name} PREFIX "" SUFFIX ".so"
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CTP_ABI_PLUGIN_DIR})
  # Only the public header: a plugin sees nothing else of the core.
  target_include_directories(abi-plugin-${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_options(abi-plugin-${name} PRIVATE -Wl,-z,defs)
  if(ARGN)
    target_compile_definitions(abi-plugin-${name} PRIVATE ${ARGN})
  endif()
  set(CTP_ABI_PLUGINS ${CTP_ABI_PLUGINS} abi-plugin-${name} PARENT_SCOPE)
endfunction()

ctp_abi_plugin(abi-good abi_good.c)
ctp_abi_plugin(abi-failing abi_failing.c)
# abi-failing's thread callback failing with ENOMEM instead (test_resource).
ctp_abi_plugin(abi-starved abi_failing.c ABI_FAILING_ERRNO=ENOMEM)
ctp_abi_plugin(abi-dynamic abi_dynamic.c)
ctp_abi_plugin(abi-notmt abi_notmt.c)
ctp_abi_plugin(abi-fdprobe abi_fdprobe.c)
ctp_abi_plugin(abi-exited abi_exited.c)
# abi-dep and its library in abi-dep/, found through RUNPATH $ORIGIN/abi-dep.
add_library(abi-deplib SHARED ${CMAKE_CURRENT_SOURCE_DIR}/plugins/abi_deplib.c)
set_target_properties(abi-deplib PROPERTIES OUTPUT_NAME ctp-abi-dep
  C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CTP_ABI_PLUGIN_DIR}/abi-dep)
ctp_abi_plugin(abi-dep abi_dep.c)
target_link_libraries(abi-plugin-abi-dep PRIVATE abi-deplib)
set_target_properties(abi-plugin-abi-dep PROPERTIES
  BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH "$ORIGIN/abi-dep")
ctp_abi_plugin(abi-wrongtype abi_wrongtype.c)
ctp_abi_plugin(abi-badabi abi_bad.c ABI_BAD_ABI)
ctp_abi_plugin(abi-nosym abi_bad.c ABI_NO_SYMBOL)
ctp_abi_plugin(abi-small abi_bad.c ABI_SMALL)
ctp_abi_plugin(abi-misnamed abi_bad.c ABI_MISNAMED)
ctp_abi_plugin(abi-dupfield abi_bad.c ABI_DUP_FIELD)
ctp_abi_plugin(abi-collide abi_bad.c ABI_COLLIDE)
ctp_abi_plugin(abi-countermode abi_bad.c ABI_COUNTER_MODE)
ctp_abi_plugin(abi-gaugesum abi_bad.c ABI_GAUGE_SUM)
ctp_abi_plugin(abi-initfail abi_bad.c ABI_INIT_EIO)
ctp_abi_plugin(abi-flagbits abi_bad.c ABI_FLAG_BITS)
ctp_abi_plugin(abi-resfield abi_bad.c ABI_FIELD_RESERVED)
ctp_abi_plugin(abi-trailing abi_bad.c ABI_TRAILING)
ctp_abi_plugin(abi-startbad abi_bad.c ABI_START_BAD)
ctp_abi_plugin(abi-starttwice abi_bad.c ABI_START_TWICE)
ctp_abi_plugin(abi-badcmd abi_bad.c ABI_BAD_COMMAND)
ctp_abi_plugin(abi-shadowcmd abi_bad.c ABI_SHADOW_COMMAND)
ctp_abi_plugin(abi-badcaps abi_bad.c ABI_BAD_CAPS)
# The supervisor's tests: a plugin that crashes where its options say.
ctp_abi_plugin(abi-crash abi_crash.c)
ctp_abi_plugin(abi-crash2 abi_crash.c CRASH_NAME="abi-crash2")
# The services' chaos: crashes, hangs and leaks on a schedule.
ctp_abi_plugin(abi-chaos abi_chaos.c)
ctp_abi_plugin(abi-chaos2 abi_chaos.c CHAOS_NAME="abi-chaos2")
ctp_abi_plugin(abi-chaos3 abi_chaos.c CHAOS_NAME="abi-chaos3")
# An option's own value check, and the same table at the first ABI 1
# element size (no check member).
ctp_abi_plugin(abi-optcheck abi_optcheck.c)
ctp_abi_plugin(abi-optv1 abi_optcheck.c ABI_OPT_V1)

ctp_add_test(test_abi test_abi.c e2e_util.c LIBS ctpcore ${CMAKE_DL_LIBS})
target_compile_definitions(test_abi PRIVATE CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_abi ctprof-core ${CTP_ABI_PLUGINS})
# The permission checks that apply only to root; skipped (77) otherwise.
add_test(NAME test_abi_root COMMAND test_abi --root)
set_tests_properties(test_abi_root PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
