# The exit program (task_exit.bpf.c, README.md "Exited tasks"): compiled
# and embedded like the iterator, in a library the taskstats plugin links
# (it owns the exited table). Included by CMakeLists.txt once clang,
# bpftool and libbpf are found; `arch` and `incs` are its.
set(xobj ${CMAKE_CURRENT_BINARY_DIR}/task_exit.bpf.o)
set(xskel ${CMAKE_CURRENT_BINARY_DIR}/task_exit.skel.h)
# -mcpu=v3: the fetching atomics of the totals (kernel 5.12+).
add_custom_command(
  OUTPUT ${xobj}
  COMMAND ${CTP_BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${arch}
          -Wall -Werror ${incs} -c ${CMAKE_CURRENT_SOURCE_DIR}/task_exit.bpf.c
          -o ${xobj}
  DEPENDS task_exit.bpf.c task_core.h exit_rec.h
  COMMENT "bpf-task: compiling task_exit.bpf.c (clang -target bpf)"
  VERBATIM)
add_custom_command(
  OUTPUT ${xskel}
  COMMAND sh -c "\"$1\" gen skeleton \"$2\" name task_exit_bpf >\"$3.tmp\" && mv \"$3.tmp\" \"$3\""
          sh ${CTP_BPFTOOL} ${xobj} ${xskel}
  DEPENDS ${xobj}
  COMMENT "bpf-task: bpftool gen skeleton (exits)"
  VERBATIM)
add_custom_target(bpfexit_skel DEPENDS ${xskel})

ctp_add_plugin_lib(ctp_bpfexit bpfexit.c LIBS ctp_bpfload ctp_bpfexit_rec PkgConfig::LIBBPF)
add_dependencies(ctp_bpfexit bpfexit_skel)
target_include_directories(ctp_bpfexit PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
