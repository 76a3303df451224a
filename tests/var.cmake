# Tests and benchmarks of the variants, statistics and command-benchmark
# modules (variants/, runner/stats.c, runner/bench_cmd*.c).
if(CMOCKA_FOUND)
  rt_add_test(test_stats SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stats.c
              LIBS rt_stats rt_util m TIMEOUT 30 LABELS unit)
endif()
rt_add_bench(stats SOURCES ${CMAKE_SOURCE_DIR}/tests/bench/bench_stats.c LIBS rt_stats rt_util m)
if(CMOCKA_FOUND)
  rt_add_test(test_bench_cmd SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_bench_cmd.c
                                     ${CMAKE_SOURCE_DIR}/runner/bench_cmd.c
                                     ${CMAKE_SOURCE_DIR}/runner/bench_cmd_extract.c
              LIBS rt_util PkgConfig::JANSSON PkgConfig::PCRE2 m TIMEOUT 30 LABELS unit)
endif()
if(CMOCKA_FOUND)
  rt_add_test(test_var SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_var.c
                               ${CMAKE_SOURCE_DIR}/runner/bench_cmd.c
              LIBS rt_var rt_spec rt_util PkgConfig::YAML PkgConfig::JANSSON m TIMEOUT 30 LABELS unit)
endif()
