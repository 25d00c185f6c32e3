# `export` (core/cli/export.c, core/analysis/openmetrics.c): a hand-built
# snapshot as OpenMetrics (checked by the Python client's strict parser),
# the Prometheus text format (checked by promtool), the textfile, and CSV
# loaded into sqlite3 (docs/EXPORT.md).
ctp_add_test(test_export test_export.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_export ctprof-core)
