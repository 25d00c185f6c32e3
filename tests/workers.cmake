# Per-worker state across captures (issue 29): one engine taking 300
# captures of its own live processes (a proc root of two, whatever the host
# runs) with taskstats and procfs-stat, by its own workers and from a new
# thread each time, descriptors and RssAnon flat.
ctp_add_test(test_engine_workers test_engine_workers.c e2e_util.c
             LIBS ctpcore Threads::Threads)
add_dependencies(test_engine_workers plugin-taskstats plugin-procfs-stat)

# The plugins' per-worker blocks (plugins/common/workers.c), on threads
# that come and go.
ctp_add_test(test_workers test_workers.c LIBS ctp_workers Threads::Threads)
