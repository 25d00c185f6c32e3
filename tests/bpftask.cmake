# The bpf-task iterator (plugins/bpf-task): the record parser on literal
# bytes, and one live pass compared with procfs on this kernel (skips, 77,
# when not root, without BTF, when bpf() is refused or not built).
ctp_add_test(test_bpftask_rec test_bpftask_rec.c LIBS ctp_bpftask_rec)

if(TARGET ctp_bpftask)
  ctp_add_test(test_bpftask_live test_bpftask_live.c
               LIBS ctp_bpftask ctp_procfs_parse ctp_schedstat_parse
                    ctp_io_parse Threads::Threads)
else()
  get_property(why GLOBAL PROPERTY CTP_BPFTASK_MISSING)
  ctp_add_test(test_bpftask_live test_bpftask_live.c)
  target_compile_definitions(test_bpftask_live PRIVATE
                             CTP_BPFTASK_MISSING="${why}")
endif()
