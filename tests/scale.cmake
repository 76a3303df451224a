# Sizes that were quadratic (issue 17 item 9): `make bench` times them with
# bench_scale; tests/spec/test_spec_scale.c and tests/agents/test_holes.c pin
# them in ctest with a time bound far below the quadratic figures.
rt_add_bench(scale SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_scale.c
             LIBS rt_spec rt_agents rt_research rt_oai rt_stats rt_var rt_db rt_base)
rt_add_test(test_spec_scale SOURCES ${CMAKE_SOURCE_DIR}/tests/spec/test_spec_scale.c
            LIBS rt_spec rt_base TIMEOUT 120 LABELS spec unit)
if(TARGET test_spec_scale)
  target_include_directories(test_spec_scale PRIVATE ${CMAKE_SOURCE_DIR}/tests/perf)
endif()
