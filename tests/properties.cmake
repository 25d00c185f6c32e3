# Properties every shipped plugin's descriptor must have (fields pass the
# core's own checks, help, units, unique names; options, counters, files),
# checked on the built plugins instead of mirroring each table.
ctp_add_test(test_plugin_properties test_plugin_properties.c
             LIBS ctpcore ${CMAKE_DL_LIBS})
