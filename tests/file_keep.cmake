# Answers about files kept across runs (plugins/common/procelf.c,
# statedir.c): taken for the same file, probed again for a changed one,
# only the keepable ones, two runs merged, hostile state files unused.
ctp_add_test(test_file_keep test_file_keep.c LIBS ctp_procelf)
