# procelf (plugins/common): the file mappings of a process through
# PROCMAP_QUERY against the text of maps, on literal answers and on a live
# child, and ctp_proc_find's choice between them.
ctp_add_test(test_procelf_maps test_procelf_maps.c LIBS ctp_procelf
             Threads::Threads)
