# Every verb's printed output (each view, format, width and the options that
# change what is printed) over a fixed recording, byte for byte against
# tests/golden/outputs/ (tools/outputs.sh; `--update BIN` after a change
# meant to alter what users see, with the diff in the commit).
add_test(NAME outputs COMMAND bash ${PROJECT_SOURCE_DIR}/tools/outputs.sh
                              --check $<TARGET_FILE:ctprof-core>)
set_tests_properties(outputs PROPERTIES TIMEOUT 300)
