# `export` (core/cli/export.c, core/analysis/openmetrics.c): a hand-built
# snapshot as OpenMetrics (checked by the Python client's strict parser),
# the Prometheus text format (checked by promtool), the textfile, and CSV
# loaded into sqlite3 (docs/EXPORT.md).
ctp_add_test(test_export test_export.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_export ctprof-core plugin-procfs-stat)

# `serve` (core/cli/serve.c): HTTP on the fixture tree, then a real
# Prometheus server scraping it while 8 threads burn (alone: the burn
# rate it checks is of this process only, but it loads both CPUs).
ctp_add_test(test_serve test_serve.c e2e_util.c LIBS ctpcore Threads::Threads)
add_dependencies(test_serve ctprof-core plugin-procfs-stat)
set_tests_properties(test_serve PROPERTIES RUN_SERIAL TRUE)

# `serve` as a service (core/cli/capsvc.c): plugins that crash, hang and
# leak on a schedule (tests/plugins/abi_chaos.c), SIGTERM with a plugin
# stuck, connection limits and the request deadline; with --soak (label
# `soak`) the chaos over 400 scrapes beside 64 slow clients and 300 recorded
# files in the gate, 2,000 and 1,000 at full size (`tools/dev.sh soak`).
ctp_add_test(test_service test_service.c e2e_util.c LIBS ctpcore Threads::Threads)
target_compile_definitions(test_service PRIVATE
                           CTP_ABI_PLUGIN_DIR="${CTP_ABI_PLUGIN_DIR}")
add_dependencies(test_service ctprof-core plugin-procfs-stat plugin-io
                 abi-plugin-abi-chaos abi-plugin-abi-chaos2 abi-plugin-abi-chaos3)
add_test(NAME test_service_soak COMMAND test_service --soak)
set_tests_properties(test_service_soak PROPERTIES LABELS soak TIMEOUT 900
                     SKIP_RETURN_CODE 77)

# `export DIR --format csv|ndjson` (core/cli/export.c over recdir.c's walk
# and flat.c's writer): hand-built recordings whose files differ in their
# fields, with a corrupt file in the middle, cut by --from/--to; then a live
# recording by `record` of a process the test grows, queried in sqlite3.
ctp_add_test(test_export_rec test_export_rec.c snapbuild.c e2e_util.c LIBS ctpcore)
add_dependencies(test_export_rec ctprof-core plugin-procfs-stat plugin-smaps)

# The stale-textfile alert of docs/EXPORT.md (tests/prometheus/): promtool's
# rule unit test evaluates it over a file refreshed, then left alone.
add_test(NAME promtool_stale_rules
         COMMAND sh -c "command -v promtool >/dev/null || { echo 'skip: no promtool (Debian prometheus)'; exit 77; }; exec promtool test rules \"$1\"" sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/prometheus/ctprof_stale.test.yml)
set_tests_properties(promtool_stale_rules PROPERTIES SKIP_RETURN_CODE 77)

# Counters over time (core/analysis/series.c) on hand-built captures: an
# exit, a rename that moves a member, a reset, the --top cut and the TTL,
# every counter line never lower than the feed before.
# record --textfile keeps them from file to file.
ctp_add_test(test_series test_series.c snapbuild.c e2e_util.c LIBS ctpcore m)
add_dependencies(test_series ctprof-core plugin-procfs-stat)
# The proof with a real Prometheus scraping serve every second while a
# build of short-lived children burns known CPU beside a renaming thread:
# sum(increase()) of the build group's CPU equals getrusage's within 5 %,
# resets() of every counter is 0; a recording of the run backfilled by
# promtool gives the same increase (alone: it burns a CPU; 77 without
# Prometheus, root or taskstats exit events).
ctp_add_test(test_series_prom test_series_prom.c e2e_util.c LIBS ctpcore
             Threads::Threads m)
add_dependencies(test_series_prom ctprof-core plugin-procfs-stat
                 plugin-taskstats)
set_tests_properties(test_series_prom PROPERTIES RUN_SERIAL TRUE)
