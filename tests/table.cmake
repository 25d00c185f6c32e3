# The one table of every printed output (core/analysis/table.c): escapers,
# CSV/JSON/NDJSON, text fitted to a width, elided names. (The commands'
# output through it: test_json_escape, outputs.)
ctp_add_test(test_table test_table.c LIBS ctpcore)
