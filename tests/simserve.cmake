# simserve: end-to-end tests of the simulated serving engine (real binary,
# real loopback HTTP, real signals) and its load benchmark.
if(TARGET simserve)
  rt_add_test(test_simserve
    SOURCES ${CMAKE_SOURCE_DIR}/tests/simserve/test_simserve.c
            ${CMAKE_SOURCE_DIR}/tests/simserve/ss_client.c
    LIBS rt_base PkgConfig::CURL PkgConfig::JANSSON m
    NEEDS_GSM8K TIMEOUT 60 LABELS simserve e2e)
  add_dependencies(test_simserve simserve)
  rt_add_bench(simserve
    SOURCES ${CMAKE_SOURCE_DIR}/tests/simserve/bench_simserve.c
            ${CMAKE_SOURCE_DIR}/tests/simserve/ss_client.c
    LIBS rt_base PkgConfig::CURL PkgConfig::JANSSON m)
  add_dependencies(bench_simserve simserve)
endif()
