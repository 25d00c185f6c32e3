# The core's layers (core/CMakeLists.txt, tests/core_layers.sh): each
# part's own include path against every part's headers; an upward include
# must not compile.
set(ctp_layer_args)
foreach(part ${CTP_CORE_PARTS})
  list(APPEND ctp_layer_args
       "${part}=$<JOIN:$<TARGET_PROPERTY:ctp_${part},INCLUDE_DIRECTORIES>,:>")
endforeach()
add_test(NAME core_layers
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/core_layers.sh ${CMAKE_C_COMPILER}
                 ${PROJECT_SOURCE_DIR}/core ${ctp_layer_args})
# Inside core/capture, calls run api.c <- loader.c <- engine.c, never back
# (tests/calls_order.sh on the library's objects).
add_test(NAME capture_calls
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/calls_order.sh ${CMAKE_NM}
                 api,loader,engine "$<TARGET_OBJECTS:ctp_capture>"
         COMMAND_EXPAND_LISTS)
