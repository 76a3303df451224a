# Unit tests of the research side (agents/): table-coverage holes at scale
# and against a brute-force scan. The strategies are tested end to end in
# campaign.cmake.
rt_add_test(test_holes_unit SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_holes.c
            LIBS rt_research rt_var rt_db rt_base TIMEOUT 120 LABELS unit)
if(TARGET test_holes_unit)
  target_include_directories(test_holes_unit PRIVATE ${CMAKE_SOURCE_DIR}/tests/perf)
endif()
# Profiles: one fixture per profiler in its exact format, the default op map
# on real kernel names, and a 200 MB Chrome trace streamed in constant memory.
rt_add_test(test_profile SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_profile.c
            LIBS rt_research rt_var rt_db rt_base TIMEOUT 300 LABELS unit)
# The research agent end to end (tests/research): refs of a local git
# repository ranked by the hot time their diffs touch.
rt_add_test(test_research_repo COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/research_repo.sh
            TIMEOUT 120 LABELS e2e)
set_tests_properties(test_research_repo PROPERTIES SKIP_RETURN_CODE 77)
# The seed's evening in miniature on simserve: observe, the top finding,
# propose, and the campaign keeping the proposed change.
rt_add_test(test_research_evening COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/evening.sh
            NEEDS_GSM8K TIMEOUT 600 LABELS e2e)
rt_add_test(test_profile_import COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/profile_import.sh
            TIMEOUT 60 LABELS e2e)
rt_add_test(test_profile_hostile COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/profile_hostile.sh
            TIMEOUT 120 LABELS e2e)
# profile: {command, when: baseline}: the runner profiles the best itself and
# records an observed iteration with findings before the first change; kill
# -9 during that step, then --resume, records one.
rt_add_test(test_profile_loop COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/profile_loop.sh
            TIMEOUT 300 LABELS e2e)
# log_events with a duration group: log.<name>.seconds per sample, in constraints.
rt_add_test(test_compile_time COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/compile_time.sh
            TIMEOUT 300 LABELS e2e)

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
# Search v2 (issue 28): the needle found within a budget, proposals beyond
# the old 20k prefix on the 100k-point space (each under 0.25 s of CPU),
# halving's fallback to full fidelity, auto a pure function of the history;
# 10 seeds of the 100k space, coordinate's cost there, the model's own stop,
# auto retiring a converged coordinate. About 100 s, and 440 s under
# AddressSanitizer beside another job: the model fits up to 256 points by
# 60 gradient steps a proposal (agents/gp.c).
rt_add_test(test_search_v2 SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_search_v2.c
            LIBS rt_agents rt_base TIMEOUT 1200 LABELS unit)
if(TARGET test_search_v2)
  target_include_directories(test_search_v2 PRIVATE ${CMAKE_SOURCE_DIR}/tests/perf)
endif()
# genetic (issue 28): the needle where random misses it, a resume replays it,
# no measured or restricted point proposed, CPU on the 100k space, its own
# stop.
rt_add_test(test_genetic SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_genetic.c
            LIBS rt_agents rt_base TIMEOUT 300 LABELS unit)
if(TARGET test_genetic)
  target_include_directories(test_genetic PRIVATE ${CMAKE_SOURCE_DIR}/tests/perf)
endif()
rt_add_test(test_batch SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_batch.c
            LIBS rt_agents rt_base TIMEOUT 60 LABELS unit)
rt_add_test(test_search_e2e COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/search_e2e.sh TIMEOUT 600 LABELS e2e)
if(TARGET test_search_e2e)
  add_dependencies(spacebench ratchet)
endif()
# `ratchet recipe` after a space campaign gives the best's fingerprint.
rt_add_test(test_search_recipe COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/search_recipe.sh TIMEOUT 300 LABELS e2e)
set_tests_properties(test_search_recipe PROPERTIES SKIP_RETURN_CODE 77)
rt_add_bench(search SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_search.c LIBS rt_agents rt_base)
rt_add_test(test_space_check COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/space_check.sh TIMEOUT 60 LABELS spec)

# strategy llm: the answer's envelope, the allowed kinds and files and the
# prompt (unit), and end to end on simserve with a scripted fake chat server
# (fakechat: canned answers in order, each request body logged), the
# evening in miniature: refused answers recorded, the filled hole kept.
rt_add_test(test_llm_unit SOURCES ${CMAKE_SOURCE_DIR}/tests/agents/test_llm.c
            LIBS rt_agents rt_var rt_base TIMEOUT 60 LABELS unit)
if(MHD_FOUND)
  add_executable(fakechat ${CMAKE_SOURCE_DIR}/tests/agents/fakechat.c)
  target_include_directories(fakechat PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(fakechat PRIVATE rt_base PkgConfig::MHD PkgConfig::JANSSON Threads::Threads)
  rt_add_test(test_llm_e2e COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/llm_e2e.sh
              NEEDS_GSM8K TIMEOUT 600 LABELS e2e)
  set_tests_properties(test_llm_e2e PROPERTIES SKIP_RETURN_CODE 77)
endif()
# The containment model end to end: a hostile model's answers (build, sh -c,
# paths out, secrets, /proc sources) refused and without effect; a failed
# apply is a failed iteration within the budget (tests/agents/llm_contain.sh).
if(MHD_FOUND)
  rt_add_test(test_llm_contain COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/llm_contain.sh TIMEOUT 300 LABELS e2e)
  set_tests_properties(test_llm_contain PROPERTIES SKIP_RETURN_CODE 77)
endif()
# strategy llm on a device pool of four simulated devices: N distinct answers
# a round, the winner's stored answer confirmed, kill -9 then --resume.
if(MHD_FOUND)
  rt_add_test(test_pool_llm COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/pool_llm.sh TIMEOUT 400 LABELS e2e)
  set_tests_properties(test_pool_llm PROPERTIES SKIP_RETURN_CODE 77)
endif()
if(MHD_FOUND)
  rt_add_test(test_llm_answers COMMAND sh ${CMAKE_SOURCE_DIR}/tests/agents/llm_answers.sh TIMEOUT 60 LABELS e2e)
  set_tests_properties(test_llm_answers PROPERTIES SKIP_RETURN_CODE 77)
endif()
# propose on a space's table: the searched entry is no hole, findings' id is
# what propose takes, a variant already tried says so (issue 23).
rt_add_test(test_propose_space COMMAND sh ${CMAKE_SOURCE_DIR}/tests/research/propose_space.sh TIMEOUT 120
            LABELS e2e)
