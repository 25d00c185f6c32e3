# The first screen in a real terminal (issue 14): `show` and `compare` of
# two live snapshots in a detached tmux session of 80x24 and 200x50, read
# back with capture-pane. Skipped (77) without tmux or root.
ctp_add_test(test_terminal test_terminal.c e2e_util.c LIBS ctpcore)
add_dependencies(test_terminal ctprof-core)
# The snapshots come from the shipped config: every plugin it names.
foreach(p procfs-stat schedstat io smaps taskstats host-context cgroup psi
          sched_ext jemalloc-probe)
  if(TARGET plugin-${p})
    add_dependencies(test_terminal plugin-${p})
  endif()
endforeach()
# Its child burns CPU to top the rankings; another test burning meanwhile
# could outrank it, and it would slow that test down.
set_tests_properties(test_terminal PROPERTIES RUN_SERIAL TRUE)

# Text for a terminal (core/util/term.c): the one rule, the stream the
# readers print through, the log; a snapshot and a view file whose every
# string holds escape sequences through show, compare and views.
ctp_add_test(test_term_escape test_term_escape.c snapbuild.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_term_escape ctprof-core)
