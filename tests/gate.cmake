# The GSM8K gate's tests and bench (runner/gate*.c, runner/gsm8k*.c,
# runner/stats_binom.c, db/gate.c, runner/cmd_gate.c). The C tests that need
# a server use tests/gate/fakeserver.c (libmicrohttpd); the shell tests run
# `ratchet gate` against simserve's GSM8K mode (skipped, exit 77, until
# simserve is built) and against the fake server's standalone binary;
# api_key_cli.sh follows the API key from `ratchet gate`, `ratchet run` and
# `ratchet bench load` to the fake server and load_testserver (tests/load.cmake).
# lm-eval conformance: test_gate_pyrandom (Python's generator against CPython's
# vectors), test_gsm8k_lmeval (prompts against the lm-eval v0.4.12 fixture) and
# gate_lmeval_cli (recorded requests, samples and results files checked by
# tests/gate/lmeval_gsm8k.py; skipped without python3).
target_link_libraries(rt_gate PUBLIC PkgConfig::CURL PkgConfig::JANSSON PkgConfig::PCRE2)
rt_add_test(test_gsm8k_extract SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gsm8k_extract.c
            LIBS rt_gate rt_base TIMEOUT 20 LABELS gate unit)
rt_add_test(test_gsm8k_data SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gsm8k_data.c
            LIBS rt_gate rt_base NEEDS_GSM8K TIMEOUT 30 LABELS gate unit)
rt_add_test(test_gate_stats SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gate_stats.c
            LIBS rt_gate rt_stats rt_base m TIMEOUT 20 LABELS gate unit)
if(MHD_FOUND)
  add_library(rt_gate_fakeserver STATIC ${CMAKE_SOURCE_DIR}/tests/gate/fakeserver.c)
  target_link_libraries(rt_gate_fakeserver PUBLIC rt_gate rt_base PkgConfig::MHD
                        PkgConfig::JANSSON Threads::Threads m)
  add_executable(gate_fakeserver ${CMAKE_SOURCE_DIR}/tests/gate/fakeserver_main.c)
  target_link_libraries(gate_fakeserver PRIVATE rt_gate_fakeserver)
  rt_add_test(test_gate_run SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gate_run.c
              LIBS rt_gate_fakeserver rt_gate rt_db rt_stats rt_base NEEDS_GSM8K TIMEOUT 60 LABELS gate unit)
  # A server that echoes the key: nothing of it reaches the database.
  add_library(rt_echo_server STATIC ${CMAKE_SOURCE_DIR}/tests/gate/echo_server.c)
  target_link_libraries(rt_echo_server PUBLIC rt_base PkgConfig::MHD Threads::Threads)
  rt_add_test(test_gate_redact SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gate_redact.c
              LIBS rt_echo_server rt_gate rt_db rt_stats rt_base NEEDS_GSM8K TIMEOUT 60
              LABELS gate unit)
  rt_add_test(gate_cli_fake COMMAND sh ${CMAKE_SOURCE_DIR}/tests/gate/gate_cli.sh
              ${CMAKE_BINARY_DIR}/gate_fakeserver NEEDS_GSM8K TIMEOUT 60 LABELS gate e2e)
  rt_add_test(gate_cli_simserve COMMAND sh ${CMAKE_SOURCE_DIR}/tests/gate/gate_cli.sh
              ${CMAKE_BINARY_DIR}/simserve NEEDS_GSM8K TIMEOUT 60 LABELS gate e2e)
  set_tests_properties(gate_cli_simserve PROPERTIES SKIP_RETURN_CODE 77)
  rt_add_test(api_key_cli COMMAND sh ${CMAKE_SOURCE_DIR}/tests/gate/api_key_cli.sh
              ${CMAKE_BINARY_DIR}/gate_fakeserver ${CMAKE_BINARY_DIR}/load_testserver
              NEEDS_GSM8K TIMEOUT 60 LABELS gate load e2e)
endif()
rt_add_bench(gate SOURCES ${CMAKE_SOURCE_DIR}/tests/perf/bench_gate.c
             LIBS rt_gate rt_db rt_stats rt_base)
rt_add_test(test_gate_pyrandom SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gate_pyrandom.c
            ${CMAKE_SOURCE_DIR}/tests/gate/fixture_lines.c
            LIBS rt_gate rt_base m TIMEOUT 20 LABELS gate unit)
rt_add_test(test_gsm8k_lmeval SOURCES ${CMAKE_SOURCE_DIR}/tests/gate/test_gsm8k_lmeval.c
            ${CMAKE_SOURCE_DIR}/tests/gate/fixture_lines.c
            LIBS rt_gate rt_base m NEEDS_GSM8K TIMEOUT 30 LABELS gate unit)
if(MHD_FOUND)
  rt_add_test(gate_lmeval_cli COMMAND sh ${CMAKE_SOURCE_DIR}/tests/gate/gate_lmeval_cli.sh
              ${CMAKE_BINARY_DIR}/gate_fakeserver NEEDS_GSM8K TIMEOUT 60 LABELS gate e2e)
  set_tests_properties(gate_lmeval_cli PROPERTIES SKIP_RETURN_CODE 77)
endif()
