# Snapshot writer/reader, `show` and `dump` (core/snapshot/writer.c, core/snapshot/reader.c,
# core/cli/show.c, core/cli/dump.c), plus an independent Python decoder.
ctp_add_test(test_writer_reader test_writer_reader.c LIBS ctpcore m)

# The C test writes a known sample; the Python decoder (msgpack + zstandard
# of /usr/bin/python3, nothing of ours) checks it against docs/FORMAT.md and
# checks `dump`'s JSON against its own decoding.
add_test(NAME snapshot_python_decoder
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/decode_snapshot.py
                 --sample-writer $<TARGET_FILE:test_writer_reader>
                 --workdir ${CMAKE_CURRENT_BINARY_DIR}/snapshot_python
                 --golden ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/snapshots/sample-v1.ctprof)
set_tests_properties(snapshot_python_decoder PROPERTIES SKIP_RETURN_CODE 77
                     TIMEOUT 300)

# The same decoder on real snapshots: two that `record` takes of this host
# with every plugin of the shipped config, the hostname recorded (so
# whatever the writer adds to a live capture meets the decoder).
add_test(NAME snapshot_python_decoder_live
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/decode_snapshot.py
                 --record $<TARGET_FILE:ctprof-core>
                 --config ${PROJECT_SOURCE_DIR}/config/collectors.yaml
                 --plugin-dir ${CTP_PLUGIN_BUILD_DIR}
                 --workdir ${CMAKE_CURRENT_BINARY_DIR}/snapshot_python_live)
set_tests_properties(snapshot_python_decoder_live PROPERTIES
                     SKIP_RETURN_CODE 77 TIMEOUT 300)

# The writer's inline MessagePack encoders against msgpack-c's packer.
ctp_add_test(test_mpenc test_mpenc.c LIBS ctpcore)

# Thousands of rows through the writer's cell path and back.
ctp_add_test(test_writer_big test_writer_big.c snapbuild.c LIBS ctpcore)

# The writer's column loops: several workers' tables, every type and cell
# width, presence gaps, split processes; each cell read back, and the bytes
# what msgpack-c packs.
ctp_add_test(test_writer_cols test_writer_cols.c LIBS ctpcore)

# Where a snapshot goes: nameless until complete (O_TMPFILE), FIFOs,
# character devices and inherited descriptors written straight, other
# kinds refused; the last case runs the binary with -o /dev/stdout.
ctp_add_test(test_writer_target test_writer_target.c snapbuild.c e2e_util.c
             LIBS ctpcore Threads::Threads)
add_dependencies(test_writer_target ctprof-core plugin-procfs-stat)

# Field sections and dimensions: registration checks and the round trip.
ctp_add_test(test_field_meta test_field_meta.c snapbuild.c e2e_util.c
             LIBS ctpcore)
add_dependencies(test_field_meta ctprof-core)

# Typed numbers from a snapshot (core/snapshot/column.c): units, a cell as
# a number, a column as one array with absence as a bitmap.
ctp_add_test(test_column test_column.c snapbuild.c e2e_util.c LIBS ctpcore)
