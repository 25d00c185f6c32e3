# The bash completion (packaging/bash-completion/ctprof-core) driven as bash
# does it: COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT, COMPREPLY checked for
# commands, options, view names, plugin names, files (tests/completion.sh;
# 77 without bash-completion).
add_test(NAME completion COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/completion.sh
                                 $<TARGET_FILE:ctprof-core> ${PROJECT_SOURCE_DIR})
set_tests_properties(completion PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
