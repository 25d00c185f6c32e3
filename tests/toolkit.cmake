# The plugin toolkit's own contract (include/ctprof/plugin-util.h); its
# scanners are also covered by test_scan (procfs.cmake).
ctp_add_test(test_toolkit test_toolkit.c LIBS ctp_plugin_util)
# Field tables and the checked setter (toolkit/fields.c).
ctp_add_test(test_fields test_fields.c LIBS ctp_plugin_util)
