# The plugins' per-worker blocks (plugins/common/workers.c), on threads
# that come and go.
ctp_add_test(test_workers test_workers.c LIBS ctp_workers Threads::Threads)
