# Answers about files kept across runs (plugins/common/procelf.c,
# statedir.c): taken for the same file, probed again for a changed one,
# only the keepable ones, two runs merged, hostile state files unused.
ctp_add_test(test_file_keep test_file_keep.c LIBS ctp_procelf)

# The maps of the capture before (procelf.c): kept while the process
# source's MM_GEN holds, read again when it moves.
ctp_add_test(test_maps_memo test_maps_memo.c LIBS ctp_procelf)
