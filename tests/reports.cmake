# Reports: unit tests (formatting, SVG builders, progress line), golden files
# for the text views and the Markdown journal of tests/fixtures/report_campaign.sql
# (RATCHET_REGEN=1 rewrites them), the headless-Chromium check of the HTML
# journal, and the 100k-iteration benchmark.
set(REP_LIBS rt_rep rt_db rt_base PkgConfig::JANSSON PkgConfig::SQLITE3)

add_executable(rep_mkfixture ${CMAKE_SOURCE_DIR}/tests/reports/mkfixture.c)
target_link_libraries(rep_mkfixture PRIVATE ${REP_LIBS})
target_compile_definitions(rep_mkfixture PRIVATE REP_SRC_DIR="${CMAKE_SOURCE_DIR}")

rt_add_test(rep_unit SOURCES ${CMAKE_SOURCE_DIR}/tests/reports/test_rep.c LIBS ${REP_LIBS} TIMEOUT 30
            LABELS rep)
target_compile_definitions(rep_unit PRIVATE REP_SRC_DIR="${CMAKE_SOURCE_DIR}")
rt_add_test(rep_golden SOURCES ${CMAKE_SOURCE_DIR}/tests/reports/test_rep_golden.c LIBS ${REP_LIBS}
            TIMEOUT 30 LABELS rep)
target_compile_definitions(rep_golden PRIVATE REP_SRC_DIR="${CMAKE_SOURCE_DIR}")

rt_add_test(rep_big SOURCES ${CMAKE_SOURCE_DIR}/tests/reports/test_rep_big.c LIBS ${REP_LIBS} TIMEOUT 120
            LABELS rep)
rt_add_test(rep_chromium COMMAND sh ${CMAKE_SOURCE_DIR}/tests/reports/chromium.sh TIMEOUT 180
            LABELS rep e2e)
set_tests_properties(rep_chromium PROPERTIES SKIP_RETURN_CODE 77)
add_dependencies(rep_mkfixture rt_rep)

rt_add_bench(rep SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_rep.c LIBS ${REP_LIBS})
# Two real simserve campaigns in one database, compared (--campaigns), also
# rendered in headless Chromium when it is installed.
rt_add_test(rep_compare_e2e COMMAND sh ${CMAKE_SOURCE_DIR}/tests/reports/compare_e2e.sh TIMEOUT 240
            LABELS rep e2e)
# log's change column and a stopped campaign's state; report -o's extension.
rt_add_test(rep_out COMMAND sh ${CMAKE_SOURCE_DIR}/tests/reports/report_out.sh TIMEOUT 60 LABELS e2e)
# show's summary and --full, identical launches as one block, unique artifact
# names and an ambiguous --artifact refused, on a real simserve campaign.
rt_add_test(rep_show_e2e COMMAND sh ${CMAKE_SOURCE_DIR}/tests/reports/show_e2e.sh TIMEOUT 120 LABELS rep e2e)
