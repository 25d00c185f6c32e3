# The one table of every printed output (core/analysis/table.c): escapers,
# CSV/JSON/NDJSON, text fitted to a width, and compare's CSV quoted as
# show's.
ctp_add_test(test_table test_table.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_table ctprof-core)
