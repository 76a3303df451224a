# Unit tests of the research side (agents/): table-coverage holes at scale
# and against a brute-force scan. The strategies are tested end to end in
# campaign.cmake.
rt_add_test(test_holes_unit SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_holes.c
            LIBS rt_research rt_var rt_db rt_base TIMEOUT 120 LABELS unit)
if(TARGET test_holes_unit)
  target_include_directories(test_holes_unit PRIVATE ${CMAKE_SOURCE_DIR}/tests/perf)
endif()

# The search strategies: the restriction language, each strategy on small
# spaces (unit), and end to end through `ratchet run` on a deterministic
# benchmark (spacebench): every strategy finds the optimum, a point is never
# measured twice, and kill -9 in a model search then --resume proposes what
# an uninterrupted run proposes.
add_executable(spacebench ${CMAKE_SOURCE_DIR}/tests/agents/spacebench.c)
target_include_directories(spacebench PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(spacebench PRIVATE rt_base PkgConfig::JANSSON m)
rt_add_test(test_search_unit SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_search.c
            LIBS rt_agents rt_base TIMEOUT 120 LABELS unit)
rt_add_test(test_search_e2e COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/search_e2e.sh TIMEOUT 600 LABELS e2e)
if(TARGET test_search_e2e)
  add_dependencies(spacebench ratchet)
endif()
rt_add_bench(search SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_search.c LIBS rt_agents rt_base)
rt_add_test(test_space_check COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/space_check.sh TIMEOUT 60 LABELS spec)
