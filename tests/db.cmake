# The store's tests (db/): unit tests of every db.h function and of export,
# db_tool (a small helper the shell tests use instead of the sqlite3 CLI),
# and end-to-end tests of note / correct / invalidate / export, a newer
# schema, two processes writing at once, a version-1 file migrated, and the
# statement layer (db/db_int.h) kept private to db/.
rt_add_test(test_db SOURCES ${CMAKE_SOURCE_DIR}/tests/db/test_db.c
            LIBS rt_db rt_base TIMEOUT 30 LABELS db unit)
rt_add_test(test_db_export SOURCES ${CMAKE_SOURCE_DIR}/tests/db/test_db_export.c
            LIBS rt_db rt_base TIMEOUT 30 LABELS db unit)

add_executable(db_tool ${CMAKE_SOURCE_DIR}/tests/db/db_tool.c)
target_link_libraries(db_tool PRIVATE rt_db rt_base)

rt_add_test(db_e2e_commands COMMAND sh ${CMAKE_SOURCE_DIR}/tests/db/db_commands.sh
            TIMEOUT 60 LABELS db e2e)
rt_add_test(db_e2e_newer_schema COMMAND sh ${CMAKE_SOURCE_DIR}/tests/db/db_newer_schema.sh
            TIMEOUT 30 LABELS db e2e)
rt_add_test(db_e2e_concurrency COMMAND sh ${CMAKE_SOURCE_DIR}/tests/db/db_concurrency.sh
            TIMEOUT 90 LABELS db e2e)
rt_add_test(db_e2e_migrate_v1 COMMAND sh ${CMAKE_SOURCE_DIR}/tests/db/db_migrate_v1.sh
            TIMEOUT 30 LABELS db e2e)
rt_add_test(db_private_header COMMAND sh ${CMAKE_SOURCE_DIR}/tests/db/db_private.sh
            TIMEOUT 30 LABELS db unit)

# The journal stores each file content once (blobs, issue 17 item 14): the
# make bench program measures the database of a campaign on three 100k-line
# tables, and the test runs it with --check (at most 3x the tables' size).
rt_add_bench(db_size SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_db_size.c)
add_dependencies(bench_db_size ratchet)
rt_add_test(db_size_journal COMMAND $<TARGET_FILE:bench_db_size> --check TIMEOUT 120 LABELS db e2e)
rt_add_test(db_e2e_migrate_blobs COMMAND sh ${CMAKE_SOURCE_DIR}/tests/db/db_migrate_blobs.sh
            TIMEOUT 30 LABELS db e2e)
