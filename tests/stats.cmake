# Unit tests and bench of the statistics module (runner/stats/).
rt_add_test(test_stats SOURCES ${CMAKE_SOURCE_DIR}/tests/stats/test_stats.c
            LIBS rt_stats rt_base m TIMEOUT 120 LABELS unit)
rt_add_bench(stats SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_stats.c LIBS rt_stats rt_base m)
